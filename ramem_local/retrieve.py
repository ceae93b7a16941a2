"""Retrieval: the content list, the context list, and their merge (DESIGN.md §4 steps 2–4).

- content list: RRF (κ = 60) of dense KNN and BM25 over the whole bank, in one SQL statement;
- context list: only when the recall frame has a grounded time range — *filter first*: dense
  KNN and BM25 drawn from inside the session-overlap filter (session span or event range
  overlapping the widened range), fused there, ordered by proximity tier (said inside the raw
  range or an event inside it; then a session span reaching into it; then by whole days of
  gap), fused rank within a tier. A time-only question ("What did I do yesterday?") lists
  what happened in the range (a memory with an event time placed by it) in time order;
- merge: ``Dedup_first(context ⊕ content)``, less the second of a turn and the one memory
  extracted from it alone (twins), then the first K.

Filter first rather than promoting the compatible part of the *global* top candidates: when the
content signal is weak or the bank is large, the right episode never enters a global top-25,
and nothing can promote it (docs/evaluation.md, "Retrieval evaluation").
"""

from __future__ import annotations

import re
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, replace
from datetime import datetime, tzinfo
from functools import partial
from typing import TYPE_CHECKING
from zoneinfo import ZoneInfo

from .errors import InputError
from .kinds import KIND_BAR, KIND_CHANCE, MIN_MEMORIES, seed_count, term_graph
from .recall.question_kinds import (
    EARLIEST,
    LIGHT_VERBS,
    between_range,
    occasion_query,
    relation_range,
    time_end_range,
)
from .recall.time import detect_cues
from .render import span_text
from .store import NEIGHBOUR_WEIGHT, RankedRow, Store
from .store.retrieval_sql import DENSE_INDEXES
from .text import (
    STOPWORDS,
    content_words,
    fts_match_query,
    named_persons,
    without_names,
    without_possessive,
    without_speaker,
    word_runs,
    words,
)
from .types import (
    DAY,
    KIND_IN_RANGE,
    OTHER,
    PLAN,
    RECEIVED,
    REPORT,
    SEARCH_MODES,
    Candidate,
    EventAnchor,
    MemoryRecord,
    RecallFrame,
    SearchDefaults,
    SearchResponse,
    TimeCue,
    TimeRange,
    Trace,
)

if TYPE_CHECKING:
    import numpy as np

    from .protocols import Embedder

DEFAULT_DEPTH = 25
SHORT_ORDER_RANGE_DAYS = 45  # an order's range this short lists half its kind (ordered_list)
# What the writer lived: what they did and what others did to or for them (``ingest.acts``).
LIVED = (REPORT, RECEIVED)
# What shows what a kind of report looks like: every statement, not only what the writer did.
STATEMENTS = (REPORT, OTHER, RECEIVED, PLAN)
DEFAULT_CANDIDATES = 200
# A counting question lists every match, up to this many (the response says when more match).
COUNT_CAP = 100
# The speaker of an assistant's turns in imported chats: what it says is not the user's
# episode (no occurrence of "when did I last ...", never the anchor event).
ASSISTANT = "assistant"
# Who speaks in a chat import or `ramem add` without a name: roles, not people a question
# names (``speaker_name_weight`` leaves them in the dense query).
ROLE_SPEAKERS = frozenset({"me", ASSISTANT})
_EARLIEST_TIME = -(1 << 62)
_LATEST_TIME = 1 << 62


@dataclass(frozen=True)
class RetrievalSettings:
    k: int = SearchDefaults.k
    # per source list before fusion (chosen by measurement: docs/evaluation.md)
    depth: int = DEFAULT_DEPTH
    kappa: float = 60.0
    mode: str = SearchDefaults.mode
    exclude_turns: bool = False
    neighbour_weight: float = NEIGHBOUR_WEIGHT
    event_time_first: bool = False
    fill_missing_ranks: bool = True  # inside the range (context list)
    # In the content list too: a memory one list missed ranks after that list's last hit
    # (retrieval_sql.FILLED_RANKS); measured on vs off in docs/evaluation.md, "Retrieval
    # evaluation".
    fill_content_ranks: bool = True
    drop_repeated_turns: bool = True  # see without_repeated_turns (twins listed once)
    # Dense KNN: "int8" (a filtered pool of up to `candidates` memories scored exactly from
    # their float vectors; from a larger one, the max(2 * depth, 50) nearest by an in-RAM scan
    # of int8 codes); "binary" (the `candidates` nearest by Hamming distance of the codes'
    # signs, scored exactly); "exact" (every float vector of the filtered pool scored exactly,
    # the `candidates` closest kept; all under an as-of cut). int8 and binary are exact
    # whenever the filtered pool is no larger than `candidates`: docs/performance.md, "Search
    # at scale".
    dense_index: str = SearchDefaults.dense_index
    candidates: int = DEFAULT_CANDIDATES
    # The dense query is the question's direction minus the bank's mean direction
    # (centred_query): measured on vs off in the docs/evaluation.md, "Retrieval evaluation".
    centre_query: bool = True
    # How much the names of who speaks weigh in the dense query (question_vector): 1 the
    # question as written, 0 without them; measured in docs/evaluation.md, "Retrieval
    # evaluation".
    speaker_name_weight: float = 0.5
    # Order ("when did I last"), counts ("how many times") and times given by another event
    # ("the day after I adopted the cat"): measured on vs off in docs/evaluation.md.
    multi_step: bool = True
    # Inside a time range, the dense query is the question plus what the bank's reports
    # closest to it share (context_list), for a second dense search of the whole bank. On:
    # measured on vs off in docs/evaluation.md ("Retrieval evaluation"), small gains on most of
    # fourteen journals with MPNet int8 and on LoCoMo dev with MiniLM, mixed with MiniLM on
    # journals, a question lower on LoCoMo dev with MPNet int8.
    range_feedback: bool = True
    # A counting question also counts the range's reports that stand out as closest to the
    # question (dense), beside those that hold its words: measured on vs off in docs/evaluation.md.
    count_expansion: bool = True
    # A counting question also counts the range's reports saying the writer did what a
    # counted report says they did ("we cooked together" beside "I cooked lentil soup"):
    # measured on vs off in the docs/evaluation.md, "Multi-step questions".
    count_by_verbs: bool = True
    # What stands out is read from each report's neighbourhood: how close it and the
    # memories as like it as the most similar this share of the bank's pairs are to the
    # question's kind (0: its own closeness alone). Measured on vs off in docs/evaluation.md,
    # "Multi-step questions".
    kind_neighbourhood: float = 0.05
    # The report of an event ("the day after Aisha's wedding") is, among those sharing a word
    # with its phrase, one far closer in meaning than the first by fused rank when there is
    # one: measured on vs off in results/natural-journal.txt.
    anchor_by_meaning: bool = True
    # What kind of report an order or a count asks about is read by a walk over the bank's
    # words from the question's closest memories (``kinds``); off: the order goes by the
    # need's rarest word. Measured on vs off in docs/questions.md.
    kind_walk: bool = True
    # Inside a time range, the kind read from the bank's words joins the ranking of each
    # proximity tier (``_by_kind_in_tiers``): in "journals" (what one person wrote: the walk
    # reads kinds of the writer's doing; in LoCoMo's conversations between two people the
    # triggered D@1 lost 0.05 with it), "always" or "never". Measured,
    # results/natural-journal.txt.
    kind_in_range: str = "journals"
    # Proximity as a prior, not a wall: inside the filter, relevance and closeness in time
    # are fused (retrieval_sql.SESSION_OVERLAP); off, every memory said inside the range comes
    # before any told a few days off it. Measured on vs off, results/locomo-folds.txt.
    proximity_prior: bool = False
    # Inside the range the lexical list also holds the question's own time words ("What did
    # Nate do last weekend?": "weekend"), the dense query not: measured on vs off,
    # results/locomo-folds.txt.
    time_words_in_range: bool = True
    # The sessions where a memory says the question's own time words ("last weekend",
    # "last year") join the filter: where, read there, the words land on the question's
    # range, or, when the reference is a guess (a conversation bank's last session), on any
    # (``sessions_saying_the_cue``). Measured on vs off, results/locomo-folds.txt.
    cue_sessions: bool = True

    def __post_init__(self) -> None:
        if self.mode not in SEARCH_MODES:
            raise InputError(f"unknown mode {self.mode!r}; "
                             f"choose one of {', '.join(SEARCH_MODES)}")
        if self.k < 1 or self.depth < self.k:
            raise InputError("k must be at least 1 and depth at least k")
        if self.dense_index not in DENSE_INDEXES:
            raise InputError(f"unknown dense index {self.dense_index!r}; "
                             f"choose one of {', '.join(DENSE_INDEXES)}")
        if self.candidates < self.depth:
            raise InputError("candidates must be at least depth")
        if self.kind_in_range not in KIND_IN_RANGE:
            raise InputError(f"unknown kind_in_range {self.kind_in_range!r}; "
                             f"choose one of {', '.join(KIND_IN_RANGE)}")
        if not 0.0 <= self.speaker_name_weight <= 1.0:
            raise InputError("speaker_name_weight must be between 0 and 1")
        if not 0.0 <= self.kind_neighbourhood < 1.0:
            raise InputError("kind_neighbourhood must be 0 (off) or a share below 1")


def dedup_first(*lists: Iterable[Candidate]) -> list[Candidate]:
    """Concatenate, keeping only the first occurrence of each memory."""
    seen: set[int] = set()
    merged: list[Candidate] = []
    for candidates in lists:
        for candidate in candidates:
            memory_id = candidate.memory.stored_id
            if memory_id in seen:
                continue
            seen.add(memory_id)
            merged.append(candidate)
    return merged


@dataclass(frozen=True)
class Query:
    """What both lists search with: the encoded need and its sanitised FTS5 expression; inside
    the range, the lexical list also holds the question's own time words (``range_fts``)."""

    vector: np.ndarray | None
    fts: str | None
    range_fts: str | None = None


def content_list(
    store: Store, query: Query, settings: RetrievalSettings, conversation_id: int | None,
    written_by: int | None = None, limit: int | None = None,
) -> list[RankedRow]:
    """RRF (κ) of dense KNN and BM25 over the whole bank (DESIGN.md §4.2); nothing written
    after ``written_by``."""
    return store.content_candidates(
        query_vector=query.vector, fts_query=query.fts, depth=settings.depth,
        limit=limit or settings.k, kappa=settings.kappa,
        neighbour_weight=settings.neighbour_weight, conversation_id=conversation_id,
        exclude_turns=settings.exclude_turns, dense_index=settings.dense_index,
        candidates=settings.candidates, written_by=written_by,
        fill_missing_ranks=settings.fill_content_ranks,
    )


def context_list(
    store: Store,
    query: Query,
    frame: RecallFrame,
    settings: RetrievalSettings,
    conversation_id: int | None,
    trace: Trace,
    said_in: Sequence[int] = (),
) -> list[RankedRow]:
    """Filter first (DESIGN.md §4.3): candidates come from inside the session-overlap filter
    (session span or event range overlapping the widened range), fused there and ordered by
    proximity tier. A question whose need is only its time cue lists what happened inside the
    filter in time order. Without a dense list, the range's memories that BM25 cannot match
    follow its hits within each tier.

    With ``range_feedback`` the dense list inside the range is ranked by the question plus
    what the bank's reports closest to it share (``kind_direction``: pseudo-relevance
    feedback from the whole bank). The question alone says "Who did I go to see?"; the bank's
    visits say what an entry about a visit looks like here, so the day's "Drove out to see
    my godson Felix" comes before its "Finally watched The Ferryman" (MPNet puts the film
    first for the question alone). On by default: measured on vs off in docs/evaluation.md."""
    if frame.time_range is None or frame.widened_range is None:
        return []
    if frame.time_only:
        # Nothing to match but the time: what *happened* in the range answers, so a memory
        # with a grounded event time is placed by that time, not by when it was told.
        trace.notes.append("time-only question: what happened in the range, in time order")
        return _by_time(store, frame, settings, conversation_id, event_time_first=True)
    vector = query.vector
    if settings.range_feedback and vector is not None:
        vector = kind_direction(store, query, frame, settings, conversation_id)
        trace.notes.append("dense query inside the range: the question and what the bank's "
                           f"{KIND_EXEMPLARS} reports closest to it share")
    by_kind = (_kind_joins_the_range(store, settings, conversation_id)
               and query.vector is not None and store.has_vectors())
    # The kind re-ranks a deeper pool: a report of it that neither the range's dense list nor
    # its BM25 list holds among their first ``depth`` cannot move up.
    depth = max(settings.depth, KIND_IN_RANGE_POOL) if by_kind else settings.depth
    fused = store.session_overlap_candidates(
        query_vector=vector, fts_query=query.range_fts or query.fts,
        raw_range=frame.time_range,
        wide_range=frame.widened_range, depth=depth,
        limit=depth if by_kind else settings.k,
        kappa=settings.kappa, neighbour_weight=settings.neighbour_weight,
        event_time_first=settings.event_time_first,
        fill_missing_ranks=settings.fill_missing_ranks, conversation_id=conversation_id,
        exclude_turns=settings.exclude_turns, dense_index=settings.dense_index,
        candidates=settings.candidates, written_by=frame.as_of,
        proximity_prior=settings.proximity_prior, said_in=said_in,
    )
    if by_kind:
        fused = _by_kind_in_tiers(store, query, frame, settings, conversation_id, fused, trace)
    if query.vector is not None and store.has_vectors():
        return fused
    # BM25 alone cannot rank a memory that shares no word with the question ("What did I
    # cook" against "made pasta"): within each proximity tier, the range's other memories
    # follow the BM25 hits, in time order.
    trace.notes.append("no dense list: the range's other memories follow the BM25 hits")
    listed = {row.id for row in fused}
    rest = [row for row in _by_time(store, frame, settings, conversation_id,
                                    event_time_first=settings.event_time_first)
            if row.id not in listed]
    merged = sorted([*fused, *rest], key=lambda row: (row.tier, row.id not in listed))
    return merged[: settings.k]


def _kind_joins_the_range(store: Store, settings: RetrievalSettings,
                          conversation_id: int | None) -> bool:
    """Whether the kind read from the bank's words joins the ranking inside a range
    (``RetrievalSettings.kind_in_range``): "journals" where what is searched was written by
    one person, the assistant aside (a journal, and the writer's chat with their assistant),
    not a conversation between people, whatever it was imported as."""
    if settings.kind_in_range != "journals":
        return settings.kind_in_range == "always"
    return written_by_one(store, conversation_id)


def written_by_one(store: Store, conversation_id: int | None) -> bool:
    """Whether what is searched was written by one person, the assistant aside: a journal
    (with or without its writer's chat with their assistant), not a conversation between
    people, whatever it was imported as."""
    writers = {name.casefold() for name in store.participants(conversation_id)} - {ASSISTANT}
    return len(writers) == 1


KIND_IN_RANGE_POOL = 100  # the range's candidates the kind re-ranks (``context_list``)


def _by_kind_in_tiers(store: Store, query: Query, frame: RecallFrame,
                      settings: RetrievalSettings, conversation_id: int | None,
                      rows: list[RankedRow], trace: Trace) -> list[RankedRow]:
    """The range's candidates re-ranked inside each proximity tier by the reciprocal-rank
    fusion of their fused rank and their kind score (``question_kind``): a report of the
    kind asked about that the question's words miss moves up ("What did I cook in the three
    weeks before the move?" over "Dinner: gnocchi, from scratch"). The first K."""
    kind = question_kind(store, query, frame, settings, conversation_id)
    if not kind:
        return rows[:settings.k]
    by_kind = {row.id: rank for rank, row in enumerate(
        sorted(rows, key=lambda row: -kind.get(row.id, -1e9)), 1)}
    trace.notes.append("inside the range, the kind asked about read from the bank's words "
                       "joins the ranking")
    return sorted(rows, key=lambda row: (
        row.tier if row.tier is not None else 0,
        -(1 / (settings.kappa + row.fused_rank) + 1 / (settings.kappa + by_kind[row.id]))),
    )[:settings.k]


def _by_time(store: Store, frame: RecallFrame, settings: RetrievalSettings,
             conversation_id: int | None, *, event_time_first: bool) -> list[RankedRow]:
    if frame.time_range is None or frame.widened_range is None:
        return []
    return store.session_overlap_by_time(
        raw_range=frame.time_range, wide_range=frame.widened_range, limit=settings.k,
        event_time_first=event_time_first, conversation_id=conversation_id,
        exclude_turns=settings.exclude_turns, written_by=frame.as_of,
    )


def retrieve(
    store: Store,
    embedder: Embedder | None,
    frame: RecallFrame,
    settings: RetrievalSettings,
    *,
    conversation_id: int | None = None,
    query_vector: np.ndarray | None = None,
) -> SearchResponse:
    """Run the question path's retrieval; ``query_vector`` skips re-encoding a known query.

    Multi-step questions (``settings.multi_step``): a time given by another event is grounded
    first (one more search, for the event); an order lists the matching reports by time
    before the other lists; a count lists every match in the range and counts it."""
    trace = Trace(frame=frame, mode=settings.mode,
                  dense_index=settings.dense_index if embedder is not None else None)
    multi_step = settings.multi_step and settings.mode == "ramem"
    if frame.anchor is not None and multi_step:
        started = time.perf_counter()
        ground_event_anchor(store, embedder, frame, settings, conversation_id, trace)
        trace.timings_ms["anchor"] = _ms_since(started)
    started = time.perf_counter()
    if query_vector is None and embedder is not None:
        query_vector = question_vector(store, embedder, frame.need, settings, conversation_id)
    if query_vector is not None and settings.centre_query:
        query_vector = centred_query(query_vector, store.mean_vector())
    if embedder is None:
        trace.notes.append("no embedder: BM25 only")
    query = Query(vector=query_vector, fts=fts_match_query(frame.need, frame.keywords),
                  range_fts=fts_match_query(frame.need, [*frame.keywords, *frame.time_words])
                  if settings.time_words_in_range and frame.time_words else None)
    trace.timings_ms["embed_query"] = _ms_since(started)

    started = time.perf_counter()
    content_rows = content_list(store, query, settings, conversation_id, frame.as_of)
    context_rows: list[RankedRow] = []
    if settings.mode == "ramem" and frame.guard == "filter":
        said_in = (sessions_saying_the_cue(store, frame, conversation_id, trace)
                   if settings.cue_sessions else [])
        context_rows = context_list(store, query, frame, settings, conversation_id, trace,
                                    said_in)
        if not context_rows:
            trace.notes.append("no memory inside the session-overlap filter: content list only")
    first_rows: list[RankedRow] = []
    closest_rows: list[RankedRow] = []
    count: int | None = None
    if multi_step and frame.counting:
        counted = counted_list(store, query, frame, settings, conversation_id, trace)
        first_rows, count, closest_rows = counted.rows, counted.count, counted.closest
    elif multi_step and frame.order is not None:
        first_rows = ordered_list(store, frame, settings, conversation_id, trace, query)
    trace.timings_ms["sql"] = _ms_since(started)

    memories = store.get_memories([r.id for r in (*first_rows, *closest_rows, *context_rows,
                                                  *content_rows)])
    first = _candidates(first_rows, memories, "counted" if count is not None else "ordered")
    closest = _candidates(closest_rows, memories, "closest")
    context = _candidates(context_rows, memories, "context")
    if multi_step and context and not frame.about_saying:
        context = reports_first(store, context, frame, settings, conversation_id)
    content = _candidates(content_rows, memories, "content")
    if settings.mode == "ramem" and frame.guard == "prefer_recent":
        content = recent_first(content, frame)
    merged = dedup_first(first, closest, context, content)
    if settings.drop_repeated_turns:
        merged = without_repeated_turns(store, merged)
    results = merged[: max(settings.k, len(first) if count is not None else 0)]
    return SearchResponse(results=results, trace=trace, count=count,
                          capped=count is not None and count > COUNT_CAP)


def sessions_saying_the_cue(store: Store, frame: RecallFrame, conversation_id: int | None,
                             trace: Trace) -> list[int]:
    """The sessions, outside the widened range, where the question's own time words were
    said: each is an episode of the question too.

    Read where it was said, the cue either lands on the question's range (a memory said in
    2023 "Last year, I helped renovate a community center": spoken of 2022 in a session of
    2023, which no filter on 2022 reaches, a year being too wide an event time to store) or
    on another time. The other time counts only where the question's reference is a guess, a
    conversation bank's last session with no ``as_of`` (a journal's reference is now):
    "What did John volunteer at last weekend?" asked of a conversation months long is asked
    in the words of the session that said "Last weekend I volunteered at a career fair", in
    April. Not for a question that asks only for a time (its range is listed in time order).
    The trace names the sessions."""
    if (frame.time_range is None or frame.widened_range is None or frame.time_only):
        return []
    cue = next((c for c in frame.cues if c.range == frame.time_range), None)
    if cue is None:
        return []
    guessed_reference = (frame.as_of is None and frame.reference_time
                         == store.latest_session_start(conversation_id))
    tz, country = _zone_of(store), store.get_meta("country")
    wide = frame.widened_range
    said_in = []
    for start in store.sessions_saying(words(cue.text), conversation_id=conversation_id,
                                       written_by=frame.as_of):
        if wide.start <= start < wide.end:
            continue
        there = detect_cues(cue.text, datetime.fromtimestamp(start, tz), country=country)
        if not there or there[0].range is None:
            continue
        if there[0].range == frame.time_range or guessed_reference:
            said_in.append(start)
    if said_in:
        days = ", ".join(datetime.fromtimestamp(start, tz).strftime("%Y-%m-%d")
                         for start in said_in)
        trace.notes.append(f"{cue.text!r} was said in {len(said_in)} session(s) outside the "
                           f"range, read as episodes of the question too: {days}")
    return said_in


def report_times(store: Store, memory_ids: Sequence[int], frame: RecallFrame,
                 settings: RetrievalSettings, conversation_id: int | None,
                 acts: Sequence[str] = LIVED) -> dict[int, int]:
    """Which of these memories are reports (``Store.occurrences``: of ``acts``, what was done
    by default), with when each happened."""
    if not memory_ids:
        return {}
    return dict(store.occurrences(
        fts_query=None, among=memory_ids, happened_from=_EARLIEST_TIME,
        happened_until=_LATEST_TIME, newest_first=True, limit=len(memory_ids),
        assistant=ASSISTANT, conversation_id=conversation_id,
        exclude_turns=settings.exclude_turns, written_by=frame.as_of, acts=acts))


def reports_first(store: Store, context: list[Candidate], frame: RecallFrame,
                  settings: RetrievalSettings, conversation_id: int | None) -> list[Candidate]:
    """The context list with, inside each proximity tier, the reports before the questions
    and the assistant's words (``Store.occurrences``): in the episode asked about, "Can you
    recommend a book like The Copper Key?" is no answer to "Which books have I started since
    May?", while "Started The Copper Key on the train" is. Not for a question about what was
    said ("What did the assistant suggest in June?": ``RecallFrame.about_saying``).

    A question asking what the writer did (``_asks_what_i_did``: "Where did I go hiking in
    the week after the wedding?") then puts the writer's own reports (``REPORT``,
    ``RECEIVED``) before the plans and others' doings ("Would love to go hiking on the river
    gorge again", "Priya says the gorge path is closed"), which share its words more often
    than the hike does (results/natural-journal.txt).

    A question asking for the person someone acted on ("Who did I go to see last weekend?",
    ``RecallFrame.asks_whom``) then puts the reports naming a person as the object of a
    verb first (``names.names_a_person_as_object``: "Took the train to visit my old friend
    Tomas", not "Watched The Ferryman with Jonas"): with MiniLM and MPNet alike the weekend's
    film and concert "with" someone are closer to the question than the visit. Measured on
    the journal benchmark and LoCoMo dev (docs/evaluation.md)."""
    from .names import names_a_person_as_object

    happened = report_times(store, [c.memory.stored_id for c in context], frame, settings,
                            conversation_id, acts=STATEMENTS)
    whom = frame.asks_whom
    mine = _asks_what_i_did(frame)
    # With proximity a prior the list's order already weighs closeness in time: reports go
    # first in it as it stands, not tier by tier.
    by_tier = not settings.proximity_prior
    return sorted(context, key=lambda c: (
        (c.tier if c.tier is not None else 0) if by_tier else 0, c.memory.id not in happened,
        mine and c.memory.act not in LIVED,
        whom and not names_a_person_as_object(c.memory.content)))


def _asks_what_i_did(frame: RecallFrame) -> bool:
    """Whether the question asks what the writer did ("Where did I go hiking in the week
    after the wedding?"): it says "I" or "we", names no person and does not itself look
    ahead ("What was I hoping to do that week?" asks for the wishes)."""
    from .ingest.acts import looks_ahead

    said = {word.lower() for word in re.findall(r"[A-Za-z]+", frame.question)}
    return bool(said & {"i", "we"}) and not frame.persons and not looks_ahead(frame.question)


def ground_event_anchor(store: Store, embedder: Embedder | None, frame: RecallFrame,
                        settings: RetrievalSettings, conversation_id: int | None,
                        trace: Trace) -> None:
    """Step one of "the day after I adopted the cat": find the anchor event's memory by its
    content (no time filter), take when it happened, and make the relation's range the
    frame's time range (filter first then runs as for a date). A range between two events
    ("between the move and the wedding") finds both, one search each.

    An event not found (``find_anchor_memory``): no time filter, content retrieval only."""
    anchor = frame.anchor
    assert anchor is not None
    events = [anchor] + ([frame.other_end] if isinstance(frame.other_end, EventAnchor) else [])
    for event in events:
        if not find_anchor_memory(store, embedder, event, frame=frame, settings=settings,
                                  conversation_id=conversation_id):
            frame.guard = "no_filter"
            if event.relation == "stay" or event.trip:  # the place's name is the need's
                frame.need = frame.event_need or frame.need
                frame.guard_reason = (f"no report in {event.phrase!r}: no time filter, the "
                                      "place searched as words")
            else:
                frame.guard_reason = f"the event {event.phrase!r} was not found: no time filter"
            return
    for event in events:
        if not event.confident:
            # Two events bound one range: an end the search was not sure of is the
            # candidate nearest the other end, when that one is sure (a range between two
            # events spans weeks, rarely years); else the one nearest the reference time.
            other = next((end for end in events if end is not event and end.confident), None)
            near = other.time if other is not None else None
            event.memory_id = unsure_anchor(event.candidates, frame.reference_time, near)
            event.time = event.candidates[event.memory_id]
            which = "before the reference time" if near is None else "the range's other end"
            trace.notes.append(f"event {event.phrase!r}: {len(event.candidates)} close "
                               f"candidates at different times; using the one nearest {which}")
    if anchor.relation == "stay" or anchor.trip:
        trace.notes.append(stay_span(store, anchor, frame, settings, conversation_id))
    if len(events) == 2 and events[0].memory_id == events[1].memory_id:
        trace.notes.append(f"both ends of the range are memory [{anchor.memory_id}]: the range "
                           "is its day alone")
    _apply_anchor_range(frame, anchor, store)


def find_anchor_memory(store: Store, embedder: Embedder | None, anchor: EventAnchor, *,
                       frame: RecallFrame, settings: RetrievalSettings,
                       conversation_id: int | None) -> bool:
    """Find the memory of the event ``anchor`` names and set its ``memory_id``, ``time``,
    ``confident`` and ``candidates``; False when none is found.

    The anchor is the best report (not the assistant's, not a question, sharing a word with
    the phrase) of the content list of the anchor phrase; an occasion with its owner ("my
    birthday", "David's wedding") is first looked for with the owner next to it
    (``question_kinds.occasion_query``), by its words when that finds nothing. When
    another report at a different day fuses less than one rank step below it, the search is
    not confident: every such report is a candidate, and the caller chooses among them
    (``unsure_anchor``). An anchor named by order ("since I last went hiking") is its
    latest or earliest report (``ordered_anchor``); a stay's is its latest (earliest) report
    of arriving there (``stay_arrival``), and no other."""
    if anchor.relation == "stay":
        return stay_arrival(store, anchor, frame=frame, settings=settings,
                            conversation_id=conversation_id)
    if anchor.trip and _a_person(store, anchor.phrase, conversation_id):
        anchor.trip = False  # "since Caroline": a person, not a place
    if anchor.trip:
        if stay_arrival(store, anchor, frame=frame, settings=settings,
                        conversation_id=conversation_id):
            return True
        anchor.trip = False  # no days in the place: an event named by its words
    if anchor.order is not None:
        return ordered_anchor(store, anchor, frame=frame, settings=settings,
                              conversation_id=conversation_id)
    vector = question_vector(store, embedder, anchor.phrase, settings, conversation_id) \
        if embedder is not None else None
    if vector is not None and settings.centre_query:
        vector = centred_query(vector, store.mean_vector())
    people = _people_named(store, anchor.phrase)
    # Someone's doing marks their event ("Lena got married today" is Lena's wedding); an event
    # that names no one else is the writer's ("the move": not "Jonah is moving to Leeds"),
    # though others may have made it ("Friends threw me a surprise party").
    acts = (*LIVED, OTHER) if people else LIVED
    reports: list[RankedRow] = []
    # The first ``depth`` of the content list can hold no report at all ("starting my new
    # job": the assistant's "Good question ... Start simple" answers fill it): then deeper.
    deeper = replace(settings, depth=max(settings.depth, EXEMPLAR_POOL))
    pools = [settings] if deeper == settings else [settings, deeper]
    searches = [(fts, pool) for pool in pools
                for fts in (occasion_query(anchor.phrase), fts_match_query(anchor.phrase))]
    for fts, pool in searches:
        if fts is None:
            continue
        rows = content_list(store, Query(vector=vector, fts=fts),
                            pool, conversation_id, frame.as_of, limit=pool.depth)
        sharing = _sharing_a_word(store, anchor.phrase, [row.id for row in rows])
        happened = report_times(store, [r.id for r in rows], frame, settings, conversation_id,
                                acts=acts)
        # A report of the event shares a word with its phrase ("the move": "Moved into the
        # flat"); the dense list alone always returns something, found or not. Shares, not
        # ranks among BM25's first: a name every tenth memory holds ranks its short ones
        # first ("Long lunch with Aisha" before "Aisha got married today").
        reports = [row for row in rows if row.id in happened
                   and (row.bm25_rank is not None or row.id in sharing)]
        reports = _naming_its_numbers(store, anchor.phrase, reports)
        if reports:
            break
    if not reports:
        return False
    best = reports[0]
    # Close: less than one rank step of one list apart (RRF scores are compressed: the first
    # and the second of both lists differ by 1.6%, so a ratio would call every pair close).
    step = 1 / (settings.kappa + 1) - 1 / (settings.kappa + 2)
    # The same words on another day are as much the event ("Got a flat tyre on the way to
    # work" in March and in June): their ranks differ only by the order ties are broken in.
    same = _telling_the_same(store, best.id, [row.id for row in reports[1:]])
    close = [row for row in reports[1:]
             if ((row.rrf or 0) > (best.rrf or 0) - step or row.id in same)
             and abs(happened[row.id] - happened[best.id]) >= DAY]
    if vector is not None and settings.anchor_by_meaning:
        # A report far closer in meaning than the first by fused rank is the event: a short
        # report of the same person shares the words as well and ranks first by them ("Long
        # lunch with Aisha" for "Aisha's wedding", beside "Aisha got married today"). When
        # the phrase names someone, the meaning is what happened, without the name (every
        # report of Lena is close to "Lena getting married" by her name; "Danced all night at
        # Lena's wedding" is close to "getting married"), among the reports naming them: the
        # name says whose ("I adopted Miso the cat" is not the day Pixel was adopted).
        meaning = _event_meaning(store, embedder, anchor.phrase, people, settings) \
            if people and embedder is not None else None
        theirs = _naming(store, people, reports) if meaning is not None else reports
        closeness = _closeness(store, vector if meaning is None else meaning,
                               [row.id for row in [best, *theirs]])
        meant = max(theirs or [best], key=lambda row: closeness.get(row.id, -1.0))
        if closeness.get(meant.id, -1.0) > closeness.get(best.id, -1.0) + ANCHOR_MEANING:
            best, close = meant, []
    anchor.memory_id, anchor.time = best.id, happened[best.id]
    anchor.confident = not close
    anchor.candidates = {row.id: happened[row.id] for row in [best, *close]} if close else {}
    return True


def _telling_the_same(store: Store, memory_id: int, others: Sequence[int]) -> set[int]:
    """The ``others`` whose words are those of ``memory_id``'s content (case, punctuation
    and spacing aside)."""
    texts = store.get_memories([memory_id, *others])
    if memory_id not in texts:
        return set()
    key = _words_of(texts[memory_id].content)
    return {i for i in others if i in texts and _words_of(texts[i].content) == key}


def _words_of(text: str) -> tuple[str, ...]:
    return tuple(re.findall(r"\w+", text.casefold()))


def _people_named(store: Store, phrase: str) -> list[str]:
    """Who ``phrase`` names: its capitalised words that are someone's ("Jonah's move") or that
    some memory names among its persons ("Lena" in "Lena getting married", "Rosa" in "saying
    goodbye to Aunt Rosa"); not "Station Road" in "the move to Station Road"."""
    found: dict[str, None] = {}
    for word in _CAPITALISED.findall(phrase):
        name = without_possessive(word)
        if name not in found and (name != word or store.names_a_person(name)):
            found[name] = None
    return list(found)


_CAPITALISED = re.compile(r"\b[A-Z][\w'’-]*")


def _naming(store: Store, people: list[str], rows: list[RankedRow]) -> list[RankedRow]:
    """The rows whose memory's text names one of ``people``."""
    texts = store.get_memories([row.id for row in rows])
    return [row for row in rows if row.id in texts
            and named_persons(without_speaker(texts[row.id].content), people)]


def _event_meaning(store: Store, embedder: Embedder, phrase: str, people: list[str],
                   settings: RetrievalSettings) -> np.ndarray | None:
    """The dense query of an event's phrase without the people it names, centred as the
    search's; None when nothing but the names is left."""
    rest = without_names(phrase, people)
    if not content_words(rest):
        return None
    vector = embedder.embed_query(rest)
    return centred_query(vector, store.mean_vector()) if settings.centre_query else vector


def _a_person(store: Store, name: str, conversation_id: int | None) -> bool:
    """Whether ``name`` is someone who speaks in the conversation (the persons ingest reads
    in what is said hold places too: a city named again and again reads as a name)."""
    return name.casefold() in _speaking(store, conversation_id)


def _sharing_a_word(store: Store, phrase: str, memory_ids: Sequence[int]) -> set[int]:
    """The memories holding a content word of ``phrase``, as lemmas ("the move": "Moved")."""
    from .lexicon import lemma

    wanted = {lemma(word) for word in content_words(phrase)}
    texts = store.get_memories(list(memory_ids))
    return {memory_id for memory_id, record in texts.items()
            if wanted & {lemma(word) for word in content_words(without_speaker(record.content))}}


# A report of an event this much closer in cosine to its phrase than the first by fused rank
# is the event (``find_anchor_memory``).
ANCHOR_MEANING = 0.1


def _naming_its_numbers(store: Store, phrase: str,
                        reports: list[RankedRow]) -> list[RankedRow]:
    """The reports that name every number the event's phrase names, in any form: "Mum's
    seventieth" is the report of her 70th birthday, not of her 69th, however alike they
    read; all of them when the phrase names none."""
    from .numbers import numbers_in

    wanted = {value for value, _, _ in numbers_in(phrase)}
    if not wanted or not reports:
        return reports
    texts = store.get_memories([row.id for row in reports])
    return [row for row in reports if row.id in texts
            and wanted <= {value for value, _, _ in numbers_in(texts[row.id].content)}]


def ordered_anchor(store: Store, anchor: EventAnchor, *, frame: RecallFrame,
                   settings: RetrievalSettings, conversation_id: int | None) -> bool:
    """"since I last went hiking", "the day after my first hike": the event's latest report
    at or before the reference time (or its earliest), found as "When did I last go hiking?"
    finds one (``ordered_list``: the reports holding the phrase's rarest word, by when they
    happened). The best fit of the words would be any hike of the bank, years back as
    readily as last week. False when no report holds a word of the phrase."""
    asked = RecallFrame(question=anchor.phrase, need=anchor.phrase,
                        reference_time=frame.reference_time, persons=frame.persons,
                        as_of=frame.as_of, order=anchor.order)
    rows = ordered_list(store, asked, settings, conversation_id, Trace())
    if not rows:
        return False
    happened = report_times(store, [rows[0].id], frame, settings, conversation_id)
    if rows[0].id not in happened:
        return False
    anchor.memory_id, anchor.time = rows[0].id, happened[rows[0].id]
    anchor.confident, anchor.candidates = True, {}
    return True




def stay_arrival(store: Store, anchor: EventAnchor, *, frame: RecallFrame,
                 settings: RetrievalSettings, conversation_id: int | None) -> bool:
    """"while I was in Lisbon", "before my trip to Oslo": the first report of the latest run
    of days *in* the place at or before the reference time ("my first trip to Lisbon": of the
    earliest run). False when no report is in the place, and the question then reads no time.

    A trip is read from the bank's own reports and their dates, not from how an arrival is
    worded: the reports naming the place (``_in_the_place``: not "Booked the flights for
    Lisbon", "asked all about Oslo", "Still dreaming of the food from Lisbon") grouped into
    runs of days at most ``STAY_GAP_DAYS`` apart. A run of two days or more is a trip before
    one lone day naming the place (a plan, an afterthought), which counts only where no run
    does; where none spans two days, a day naming the place twice or more comes before a day
    naming it once."""
    found = _question_occurrences(store, frame, settings, conversation_id)(
        fts_query=_quoted(anchor.phrase), happened_from=_EARLIEST_TIME,
        happened_until=frame.reference_time + 1, newest_first=False, limit=-1)
    texts = store.get_memories([memory_id for memory_id, _ in found])
    there = [(memory_id, when) for memory_id, when in found
             if memory_id in texts and _in_the_place(texts[memory_id].content, anchor.phrase)]
    tz = _zone_of(store)
    runs: list[list[tuple[int, int]]] = []
    for memory_id, when in there:
        day = datetime.fromtimestamp(when, tz).date()
        if runs and (day - datetime.fromtimestamp(runs[-1][-1][1], tz).date()).days \
                <= STAY_GAP_DAYS:
            runs[-1].append((memory_id, when))
        else:
            runs.append([(memory_id, when)])
    if not runs:
        return False
    runs = [_without_lead_in(run, tz) for run in runs]
    home = _HomeLife(store, anchor.phrase, _everyday_persons(store, conversation_id), frame,
                     settings, conversation_id)
    runs = [_from_the_first_day_away(home, run, tz) for run in runs]
    days = {id(run): len({datetime.fromtimestamp(w, tz).date() for _, w in run}) for run in runs}
    # A stay of one day still names its place more than once ("Made it to Oslo", "Dinner by
    # the harbour in Oslo"); a plan or an afterthought is one report on its own.
    trips = ([run for run in runs if days[id(run)] >= 2]
             or [run for run in runs if len(run) >= 2]
             or _followed_by_days_away(home, runs if anchor.order == EARLIEST else runs[::-1],
                                       tz)
             or runs)
    run = trips[0] if anchor.order == EARLIEST else trips[-1]
    (anchor.memory_id, anchor.time) = run[0]
    anchor.confident, anchor.candidates = True, {}
    return True


def _without_lead_in(run: list[tuple[int, int]], tz: tzinfo) -> list[tuple[int, int]]:
    """A run of reports naming a place without the day that leads into it: when the run's
    first day stands at least ``LEAD_IN_DAYS`` from its second and further than twice the
    widest gap between its other days (at least two of them), that day is a mention before
    the trip ("Trip to Oslo is on! Flights booked", a week before "Reached Oslo on the night
    bus"), not its arrival. A stay named on its first and last day alone keeps both; an
    arrival followed by a few quiet days keeps its day."""
    days = sorted({datetime.fromtimestamp(when, tz).date() for _, when in run})
    if len(days) < 3:
        return run
    gaps = [(later - earlier).days for earlier, later in zip(days, days[1:], strict=False)]
    if gaps[0] < LEAD_IN_DAYS or gaps[0] <= 2 * max(gaps[1:]):
        return run
    return [(memory_id, when) for memory_id, when in run
            if datetime.fromtimestamp(when, tz).date() != days[0]]


def _from_the_first_day_away(home: _HomeLife, run: list[tuple[int, int]],
                             tz: tzinfo) -> list[tuple[int, int]]:
    """A run of reports naming a place without its first days while the writer's everyday
    life goes on between them and the run's next day: a memory that does not name the place
    names someone of that life (``_everyday_persons``: "Coffee with Jonah at the park" two days
    after "Sorted the train times to Oslo" and the day before "Made it to Oslo"). The plan
    read from who is around, not from how it is worded; the run's last day is always kept.
    Who the run's own reports name travels with the writer ("Lena and I landed in Oslo")."""
    days = sorted({datetime.fromtimestamp(when, tz).date() for _, when in run})
    if len(days) < 2:
        return run
    starts = [int(datetime.combine(day, datetime.min.time(), tz).timestamp()) for day in days]
    at_home = home.named_between(run, starts[0], starts[-1])
    first = 0
    while first < len(days) - 1 and any(starts[first] <= when < starts[first + 1]
                                        for when in at_home):
        first += 1
    return [(memory_id, when) for memory_id, when in run if when >= starts[first]]


def _followed_by_days_away(home: _HomeLife, runs: list[list[tuple[int, int]]],
                           tz: tzinfo) -> list[list[tuple[int, int]]]:
    """The first of ``runs`` (lone days naming a place, in the order they are wanted) after
    which the writer's everyday life is not named for ``AWAY_AFTER_DAYS`` days,
    as a list of one; none found, empty. An arrival is followed by days away, a plan or an
    afterthought by the days at home ("Made it to Oslo", then nothing of Jonah; "Framed my
    best photo of Oslo", then coffee with Jonah the next day). One search per day looked at,
    stopping at the first: a place named on a lone day now and then for years costs a few."""
    for run in runs:
        day = datetime.fromtimestamp(run[-1][1], tz).date()
        after = int(datetime.combine(day, datetime.min.time(), tz).timestamp()) + DAY
        if not home.named_between(run, after, after + AWAY_AFTER_DAYS * DAY):
            return [run]
    return []


@dataclass
class _HomeLife:
    """The writer's everyday life as a stay in ``place`` is read against it: ``everyday``
    (``_everyday_persons``), read once per stay."""

    store: Store
    place: str
    everyday: set[str]
    frame: RecallFrame
    settings: RetrievalSettings
    conversation_id: int | None

    def named_between(self, run: list[tuple[int, int]], start: int, end: int) -> set[int]:
        """When, in ``[start, end)``, a memory not naming the place names someone of the
        everyday life other than those the run's own reports name (who travels along:
        "Made it to Oslo with Jonah"); empty where the bank has no everyday life to read."""
        if not self.everyday or end <= start:
            return set()
        texts = self.store.get_memories([memory_id for memory_id, _ in run])
        companions = {name.casefold() for record in texts.values() for name in record.persons}
        everyday = self.everyday - companions
        between = self.store.occurrences(
            fts_query=None, happened_from=start, happened_until=end, newest_first=False,
            limit=-1, assistant=ASSISTANT, conversation_id=self.conversation_id,
            exclude_turns=self.settings.exclude_turns, written_by=self.frame.as_of,
            acts=STATEMENTS)
        records = self.store.get_memories([memory_id for memory_id, _ in between])
        return {when for memory_id, when in between if memory_id in records
                and not _place_named(self.place).search(records[memory_id].content)
                and everyday & {name.casefold() for name in records[memory_id].persons}}


def _everyday_persons(store: Store, conversation_id: int | None) -> set[str]:
    """The casefolded persons of the writer's everyday life: named in memories of at least
    ``EVERYDAY_MONTHS`` calendar months and of a fifth of the months the bank holds (a guide
    met on two trips is not one), not who speaks."""
    months, spanned = store.months_naming(conversation_id)
    enough = max(EVERYDAY_MONTHS, spanned * EVERYDAY_SHARE)
    return {name for name, seen in months.items() if seen >= enough} \
        - _speaking(store, conversation_id)


def _place_named(place: str) -> re.Pattern[str]:
    """The place's name as a whole word, any case."""
    return re.compile(rf"(?<!\w){re.escape(place)}(?!\w)", re.IGNORECASE)


EVERYDAY_MONTHS = 6  # the fewest months someone of the everyday life is named in
EVERYDAY_SHARE = 0.2  # and the least share of the bank's months
AWAY_AFTER_DAYS = 2  # the days after a lone day naming a place that tell whether it began a stay


# What a report naming a place says of it when the writer is not there: the trip is for it
# ("Booked the flights for Lisbon"), about it ("asked all about Oslo"), or over ("photos from
# Whitby"; the way home from it ends a stay: ``stay_span``).
_AWAY_FROM_IT = ("for", "about", "from")


def _in_the_place(text: str, place: str) -> bool:
    """Whether a report naming ``place`` tells of being there: not only "for", "about" or
    "from" it."""
    mentions = list(_place_named(place).finditer(text))
    away = re.compile(rf"\b(?:{'|'.join(_AWAY_FROM_IT)})\s+(?:the\s+)?$", re.IGNORECASE)
    return any(not away.search(text[:m.start()]) for m in mentions)


STAY_GAP_DAYS = 7  # reports naming the place at most this many days apart are one stay
LEAD_IN_DAYS = 4  # a first day this far before the rest of a stay may be a mention before it
STAY_LONGEST_DAYS = 31  # the return home is looked for this long after the stay began
# How a report of coming home reads; "back from" and "home from" only with the place's name
# ("Drove home from Whitby"): "back from work" is every evening.
RETURN_PHRASES = ("back home", "flew home", "drove home", "flew back", "drove back",
                  "returned home", "home again")


def stay_span(store: Store, anchor: EventAnchor, frame: RecallFrame,
              settings: RetrievalSettings, conversation_id: int | None) -> str:
    """"while I was in Lisbon", "during my trip to Whitby": set the anchor's ``last_time``
    to the last day of the stay its arrival (``stay_arrival``) begins; the trace's line says
    how it was read.

    The stay runs through the later reports naming the place (its ``phrase``), each at most
    ``STAY_GAP_DAYS`` calendar days from the one before, to the first report of coming home
    after the last of them (``RETURN_PHRASES``, or "back/home from <the place>") within
    ``STAY_LONGEST_DAYS`` of the arrival, else to that last report: a journal names the city
    the day it arrives ("Flew to Lisbon to spend the holidays") and rarely again until "Flew
    back home". Reports written by the reference time and happened by it."""
    assert anchor.time is not None
    occurrences = _question_occurrences(store, frame, settings, conversation_id)
    tz = _zone_of(store)
    arrived, until = anchor.time, frame.reference_time + 1
    within = min(arrived + STAY_LONGEST_DAYS * DAY, until)

    def when_said(phrases: list[str]) -> list[int]:
        return [when for _, when in occurrences(
            fts_query=" OR ".join(phrases), happened_from=arrived, happened_until=within,
            newest_first=False, limit=-1)]

    from_the_place = [_quoted(f"{word} from {anchor.phrase}") for word in ("back", "home")]
    came_home_from_it = set(when_said(from_the_place))
    last = arrived
    for when in when_said([_quoted(anchor.phrase)]):
        last_day = datetime.fromtimestamp(last, tz).date()
        if (datetime.fromtimestamp(when, tz).date() - last_day).days > STAY_GAP_DAYS \
                or last in came_home_from_it:
            break
        last = when
    back = occurrences(fts_query=" OR ".join([*map(_quoted, RETURN_PHRASES), *from_the_place]),
                       happened_from=last, happened_until=within, newest_first=False, limit=1)
    anchor.last_time = back[0][1] if back else last
    ended = f"; back home in memory [{back[0][0]}]" if back else ""
    return (f"stay {anchor.phrase!r}: {span_text(arrived, anchor.last_time + 1, tz)} "
            f"(from its arrival, memory [{anchor.memory_id}]{ended})")


def unsure_anchor(candidates: dict[int, int], reference_time: int, near: int | None) -> int:
    """The memory taken among event candidates that fuse alike ({memory id: when it
    happened}): the one nearest ``near`` (the other end of a range between two events),
    else the latest at or before the reference time (else the latest of all)."""
    if near is not None:
        return min(candidates, key=lambda i: (abs(candidates[i] - near), i))
    before = [i for i in candidates if candidates[i] <= reference_time]
    return max(before or candidates, key=lambda i: (candidates[i], -i))


def _apply_anchor_range(frame: RecallFrame, anchor: EventAnchor, store: Store) -> None:
    """The relation's range around the anchor event becomes the frame's filter range."""
    assert anchor.time is not None
    tz = _zone_of(store)
    other = frame.other_end
    if anchor.relation == "between" and isinstance(other, TimeCue):
        # The time end is read next to the event: "between the move and Christmas" is the
        # first Christmas after the move, not the last one before today.
        starts = other.span[0] < frame.question.find(anchor.phrase, anchor.span[0])
        when = time_end_range(other, anchor.time, starts=starts, tz=tz,
                              country=store.get_meta("country"))
        assert when is not None
        other = replace(other, range=when)
        frame.other_end = other
        frame.time_range = between_range(anchor.time, when, tz)
    elif anchor.relation == "between" and isinstance(other, EventAnchor):
        assert other.time is not None
        frame.time_range = between_range(anchor.time, other.time, tz)
    elif anchor.relation == "stay":
        frame.time_range = between_range(anchor.time, anchor.last_time or anchor.time, tz)
    elif anchor.trip and anchor.homecoming and anchor.last_time is not None:
        frame.time_range = relation_range(anchor.relation, anchor.last_time, tz,
                                          timeline=store.timeline(None),
                                          reference_time=frame.reference_time)
    else:
        frame.time_range = relation_range(anchor.relation, anchor.time, tz,
                                          timeline=store.timeline(None),
                                          reference_time=frame.reference_time,
                                          last_moment=anchor.last_time if anchor.trip
                                          else None)
    frame.widened_range = frame.time_range.widened(frame.buffer_days)
    frame.guard = "filter"
    frame.guard_reason = (f"event {anchor.text!r} grounded: {_grounded(anchor, tz)}"
                          + (f", its {anchor.order} report" if anchor.order else "")
                          + (", counted from its last day" if anchor.trip and anchor.homecoming
                             else "")
                          + (f" and {_grounded(other, tz)}" if other is not None else "")
                          + f" ({anchor.relation})")


def _grounded(end: EventAnchor | TimeCue, tz: tzinfo) -> str:
    """How one end of an event's range was grounded: "memory [4] on 2026-02-14", a stay
    ("memory [1]'s stay 2025-12-20 → 2026-01-02"), or a time and its days ("'Christmas'
    2023-12-25")."""
    if isinstance(end, TimeCue):
        assert end.range is not None
        return f"{end.text!r} {span_text(end.range.start, end.range.end, tz)}"
    assert end.time is not None
    if end.last_time is not None:
        return f"memory [{end.memory_id}]'s stay {span_text(end.time, end.last_time + 1, tz)}"
    day = datetime.fromtimestamp(end.time, tz).strftime("%Y-%m-%d")
    return f"memory [{end.memory_id}] on {day}"


def _zone_of(store: Store) -> ZoneInfo:
    """The bank's timezone (its day boundaries)."""
    return ZoneInfo(store.get_meta("timezone") or "UTC")


def occurrence_terms(store: Store, frame: RecallFrame) -> list[str]:
    """The need's content words that some memory holds, the question's verbs last, rarest
    first: the first names the thing the question is about ("shakshuka" in "When did I last
    cook shakshuka?", whatever the entry's verb: "made shakshuka at home")."""
    terms = content_words(frame.need)
    verbs = set(frame.verbs)
    counts = store.term_counts(terms)
    return sorted((t for t in terms if counts[t] > 0),
                  key=lambda t: (t in verbs, counts[t], terms.index(t)))


def _speakers(store: Store, frame: RecallFrame, conversation_id: int | None) -> list[str]:
    """The question's people who speak in the bank ("When did Caroline last ..."): whose
    occurrences are asked about. A name that is only mentioned ("Cold Current", a film some
    chat names) does not narrow the occurrences: its reports need not name it as a person."""
    if not frame.persons:
        return []
    speaking = _speaking(store, conversation_id)
    return [person for person in frame.persons if person.casefold() in speaking]


def _speaking(store: Store, conversation_id: int | None) -> set[str]:
    """The casefolded names of who speaks in the conversation (every one without an id)."""
    return {name.casefold() for name in store.participants(conversation_id)}


def _quoted(term: str) -> str:
    return '"' + term.replace('"', '""') + '"'


def ordered_list(store: Store, frame: RecallFrame, settings: RetrievalSettings,
                 conversation_id: int | None, trace: Trace,
                 query: Query | None = None) -> list[RankedRow]:
    """"When did I last / first ...": the reports of what is asked, by when they happened,
    latest at or before the reference time first (or earliest first), inside the frame's
    range when it has one (``_occurrence_window``: "the last film I saw before the trip");
    when the question names people who speak, only reports said by or naming one of them.

    What is asked is read in turn: a name the need holds ("Fox Valley", "Night Harbor",
    "Lena": ``_names_asked_about``), found as a phrase (a person's reports include what
    others did with them: "Lena came round for dinner"); the thing its verb takes ("cook
    shakshuka": ``RecallFrame.thing``), by its rarest word; else, with a dense ``query``, the
    kind of doing the question asks about (``question_kind``: the reports the walk over the
    bank's words reaches at least ``KIND_BAR``; "the last film I saw"); else (no vectors, a
    bank too small for the walk) the need's rarest word some report holds. Among the reports
    naming a thing, time alone orders: reading which of them do what is asked (by the walk
    without the name) put the answer first less often (results/natural-journal.txt)."""
    latest = frame.order != EARLIEST
    start, end = _occurrence_window(frame)
    speakers = _speakers(store, frame, conversation_id)
    # The event the range is given by is not what is asked ("the last book I started before
    # my first day at Orbis Freight": not "First day at Orbis Freight"), though its day is in
    # the range.
    events = _event_memories(frame)

    def reports(fts: str | None, acts: Sequence[str] = (REPORT,), limit: int = -1
                ) -> list[tuple[int, int]]:
        found = store.occurrences(
            fts_query=fts, happened_from=start, happened_until=end, newest_first=latest,
            limit=limit if limit < 0 else limit + len(events), assistant=ASSISTANT,
            conversation_id=conversation_id, exclude_turns=settings.exclude_turns,
            written_by=frame.as_of, persons=speakers, acts=acts)
        kept = [(i, when) for i, when in found if i not in events]
        return kept if limit < 0 else kept[:limit]

    order = "latest" if latest else "earliest"
    for name in _names_asked_about(store, frame, conversation_id):
        # What was done with a person reads like what was heard of them ("Lena came round
        # for dinner", "Lena called"): a person's reports include others' doings.
        person = store.names_a_person(name)
        found = reports(_quoted(name), (*LIVED, OTHER) if person else (REPORT,),
                        settings.k)
        if found:
            trace.notes.append(f"order: the reports naming {name!r}, {order} first")
            return _rows(found)
    kind = question_kind(store, query, frame, settings, conversation_id) \
        if settings.kind_walk and query is not None else {}
    thing_words = content_words(frame.thing) if frame.thing is not None else []
    terms = occurrence_terms(store, frame)
    for term in [t for t in terms if t in thing_words] if kind else terms:
        found = reports(_quoted(term), limit=settings.k)
        if found:
            trace.notes.append(f"order: the reports of {term!r}, {order} first")
            return _rows(found)
    if kind and not thing_words:
        # No thing read from the question's verb ("The coast path: when did I first walk
        # it?", "When did I first get the garden gate fixed?"): a phrase of its words that
        # the bank's reports hold says which thing of the kind is asked about.
        for phrase in word_runs(frame.need):
            found = reports(_quoted(phrase), limit=settings.k)
            if found:
                trace.notes.append(f"order: the reports of {phrase!r}, {order} first")
                return _rows(found)
    if kind:
        # The first is the first sure of the kind (KIND_BAR); the rest every report the walk
        # reaches more often than chance (KIND_CHANCE), in time order: the kind's reports the
        # bank links less surely come next, not after the range's other reports.
        found = reports(None)
        sure = [(i, when) for i, when in found if kind.get(i, -1e9) >= KIND_BAR]
        likely = [(i, when) for i, when in found if kind.get(i, -1e9) >= KIND_CHANCE]
        of_kind = list(dict.fromkeys([*sure[:1], *likely]))
        trace.notes.append(f"order: {len(sure)} reports surely of the kind asked about, "
                           f"{len(likely)} likely (read from the bank's words), {order} first")
        # In a short range (a month) half the list at most: the range's reports by relevance
        # follow, and what the kind missed is among them; in a long one ("before the trip":
        # years) relevance says nothing of order, and the kind's next reports are the list.
        short = end - start <= SHORT_ORDER_RANGE_DAYS * DAY
        return _rows(of_kind[:max(1, settings.k // 2) if short else settings.k])
    trace.notes.append("order: no report holds the question's words; relevance order")
    return []


def question_kind(store: Store, query: Query, frame: RecallFrame, settings: RetrievalSettings,
                  conversation_id: int | None) -> dict[int, float]:
    """Each memory's kind score for the question (``kinds``): the walk over the bank's words
    from the memories closest to the (dense) query (``kinds.seed_count``), each weighed by
    its cosine; {} for a bank smaller than ``kinds.MIN_MEMORIES``."""
    if query.vector is None or not store.has_vectors():
        return {}
    graph = term_graph(store)
    if len(graph.ids) < MIN_MEMORIES:
        return {}
    seeds = seed_count(len(graph.ids))
    pool = replace(settings, depth=max(settings.depth, seeds))
    rows = content_list(store, Query(vector=query.vector, fts=None), pool, conversation_id,
                        frame.as_of, limit=seeds)
    closeness = _closeness(store, query.vector, [row.id for row in rows])
    return graph.walk({i: max(c, 0.0) for i, c in closeness.items()})


def _order_terms(store: Store, frame: RecallFrame, conversation_id: int | None
                 ) -> Iterator[str]:
    """What an occurrence of "when did I last / first ..." is found by, in turn: the names
    the need holds (``_names_asked_about``: "Silent Engine" in "When did I last start reading
    The Silent Engine?", found as a phrase); then its words, rarest first
    (``occurrence_terms``, whose term counts are queried only when no name was found). A
    name says which thing is asked about where a word of the question may be rarer by chance
    ("reading": two entries, against "began The Silent Engine on the train")."""
    yield from _names_asked_about(store, frame, conversation_id)
    yield from occurrence_terms(store, frame)


def _names_asked_about(store: Store, frame: RecallFrame,
                       conversation_id: int | None) -> list[str]:
    """The names the need holds (``names.named_phrases``), but not one of the conversation's
    speakers, by name or by the start of it ("Mel" for Melanie, "Jo" for Joanna): who speaks
    is a filter on the reports (``_speakers``), not what they report."""
    from .names import named_phrases

    speaking = _speaking(store, conversation_id)

    def a_speaker(name: str) -> bool:
        key = name.casefold()
        return any(speaker == key or (" " not in key and speaker.startswith(key))
                   for speaker in speaking)

    # A name opening the question is no sentence's capital when the bank names a person so
    # ("Lena - when did I last see her?"): the persons the question names as written,
    # capitalised ("start" is no "Start" a memory misread as a name), come after the phrases.
    people = named_persons(frame.need, frame.persons, as_written=True)
    return [name for name in dict.fromkeys([*named_phrases(frame.need), *people])
            if not a_speaker(name)]


@dataclass(frozen=True)
class Counted:
    """A counting question's lists: the matches (``count`` of them, at most ``COUNT_CAP``
    listed) and, for a question with a range, the range's other reports closest first."""

    rows: list[RankedRow]
    count: int
    closest: list[RankedRow]


def counted_list(store: Store, query: Query, frame: RecallFrame, settings: RetrievalSettings,
                 conversation_id: int | None, trace: Trace) -> Counted:
    """"How many times ...", "which films have I watched since ...": the reports of the range
    that match, counted, at most ``COUNT_CAP`` listed: those matched by word first, then those
    standing out, each closest to the question first (in time order without vectors). A
    report matches by word, by standing out, by naming the same work or by doing the same:

    - by word (``_counted_terms``): it holds the name the question is about ("Night Harbor"
      in "How many times did I watch Night Harbor?"), else one of the need's words other than
      the question's verbs that some report of the bank holds ("hiking" in "how many times
      did I go hiking", whatever the verb: "went hiking", "hiking boots"), or, when the need
      has none, one of its verbs that is not a light one ("visited" in "Who have I visited
      since May?");
    - by standing out (``count_expansion``, a dense query, a question with a range that
      counts a kind, not one thing, ``_counts_one_thing``): it is
      among the range's reports closest to the kind of report the question asks about
      (``kind_direction``: what the bank's reports of that kind share), as read from the
      reports most like it (``_kind_closeness``) and from the other reports of the works it
      names (``_kind_of_the_works``), down to the largest drop among the eleven
      closest (among the closest half of a short range: ``_standing_out``) ("heard the
      Velvet Tides live" for "how many concerts did I go to", which shares no word with it).
      Without a range ("How many times have I been to Porto?") only words count: what
      stands out of a whole bank says nothing about how many; nor in a range that holds
      every report of the bank (``_whole_bank``: a new journal's "since January");
    - by naming the same work (``_naming_the_same_works``): it names a film, book or band by
      a title that a report of the kind names (the bank's reports holding the counted words,
      and the counted ones): "Saw Small Hours at home with Farid" beside "Watched Small Hours
      at the cinema". Not for a count of one thing;
    - by doing the same (``count_by_verbs``, where standing out counted):
      ``_doing_the_same``, the writer says they did what a counted report says they did
      ("Drove out to see Grandpa Theo; we cooked together" beside "I cooked fish tacos" for
      "How many dishes did I make in March?").
    A question with a range and nothing but its time ("What have I done since May?") counts
    every report of the range (``_every_report``).
    What stands out is read with the other reports of the works it names
    (``_kind_of_the_works``). Measured on the journal benchmark (docs/evaluation.md, "Multi-step
    questions"): the count is exact for 0.725-1.000 of the questions with MiniLM (eleven
    generator seeds, 1 to 10 years); standing out never counts zero.
    """
    start, end = _occurrence_window(frame)
    occurrences = _question_occurrences(store, frame, settings, conversation_id,
                                        _counted_acts(store, frame, conversation_id))
    ranged = frame.guard == "filter" and frame.time_range is not None
    if ranged and frame.time_only:
        return _every_report(occurrences, start, end, trace)
    in_range = dict(occurrences(fts_query=None, happened_from=start, happened_until=end,
                                newest_first=False, limit=COUNT_CAP * 10)) if ranged else {}
    terms = _counted_terms(store, frame, conversation_id, occurrences)
    named = _counts_one_thing(frame, terms)
    # In a range the kind decides what stands out, and the bank's reports holding the words
    # show it; without one closeness only orders the word matches, where the question's own
    # words tell more ("new hiking trails") than what every hike shares (LoCoMo dev,
    # docs/evaluation.md).
    examples = word_examples(frame, terms, occurrences) if ranged else []
    direction = kind_direction(store, query, frame, settings, conversation_id, examples)
    closeness = _closeness(store, direction, in_range)
    matched: dict[int, int] = {}
    by_word: set[int] = set()
    how = []
    kind_counted = False  # whether what stands out counted: a kind, in a range
    if terms:
        matched = dict(occurrences(
            fts_query=" OR ".join(map(_quoted, terms)), happened_from=start,
            happened_until=end, newest_first=False, limit=COUNT_CAP * 10))
        by_word = set(matched)
        how.append(f"{len(matched)} by the words {', '.join(map(repr, terms))}")
    if settings.count_expansion and closeness and not named and not _whole_bank(
            occurrences, len(in_range), frame):
        kind = _kind_closeness(store, direction, closeness, frame, settings, conversation_id)
        kind, by_works = _kind_of_the_works(store, occurrences, direction, kind, frame)
        # The events that bound the range ("since I moved", "between the vet visit and
        # Easter") are reported by their own memories, of another kind than the one counted.
        for event_memory in _event_memories(frame):
            kind.pop(event_memory, None)
        added = [i for i in _standing_out(kind) if i not in matched]
        matched.update({i: in_range[i] for i in added})
        how.append(f"{len(added)} more standing out as closest to the question"
                   + (f" ({by_works} read by the works they name)" if by_works else ""))
        kind_counted = True
    elif settings.count_expansion and closeness:
        how.append("none standing out: " + ("the question names what it counts" if named else
                                             "the range holds every report of the bank"))
    if matched and not named:
        same_work = _naming_the_same_works(store, occurrences, [*examples, *matched], matched,
                                           _event_memories(frame), start, end)
        matched.update(same_work)
        if same_work:
            how.append(f"{len(same_work)} more naming a work a counted report names")
    if kind_counted and matched and settings.count_by_verbs:
        doing, verbs = _doing_the_same(store, occurrences, matched, by_word, terms,
                                       _event_memories(frame), start, end)
        matched.update(doing)
        if doing:
            how.append(f"{len(doing)} more saying I did what a counted report did "
                       f"({', '.join(map(repr, verbs))})")
    how_text = "; ".join(how) or "no report holds the question's words"
    if not ranged:  # the matches, closest first all the same
        closeness = _closeness(store, direction, matched)
    # In a range, the kind as the bank's words tell it (``kinds``) orders the counted reports
    # and lists the range's others next (what the count missed); without one, or where the
    # walk reads nothing, closeness to the kind's direction orders them.
    walk = question_kind(store, query, frame, settings, conversation_id) \
        if ranged and settings.kind_walk and query.vector is not None else {}
    if walk:
        ordered = sorted(matched, key=lambda i: (i not in by_word, -walk.get(i, -1e9),
                                                 matched[i], i))
    elif closeness:
        ordered = sorted(matched, key=lambda i: (i not in by_word, -closeness.get(i, 0.0),
                                                 matched[i], i))
    else:
        ordered = sorted(matched, key=lambda i: (matched[i], i))
    trace.notes.append(f"count: {len(ordered)} memories match ({how_text})"
                       + (", listed by the kind read from the bank's words" if walk else ""))
    closest = sorted(closeness, key=lambda i: -closeness[i])[:settings.k] if ranged else []
    if ranged and settings.kind_walk and query.vector is not None:
        closest = sorted(in_range, key=lambda i: -walk.get(i, -1e9))[:settings.k]
    return Counted(rows=_rows([(i, 0) for i in ordered[:COUNT_CAP]]), count=len(ordered),
                   closest=_rows([(i, 0) for i in closest]))


def _counted_acts(store: Store, frame: RecallFrame, conversation_id: int | None
                  ) -> tuple[str, ...]:
    """What a count counts: the writer's doings, and what others did to or for the writer
    when the question names a person ("How many times did Lena take me out?"); a kind or a
    thing ("How many films did I see in March?") is counted by what the writer did, not by
    "Aisha keeps telling me to see Night Harbor"."""
    names = _names_asked_about(store, frame, conversation_id)
    return LIVED if any(map(store.names_a_person, names)) else (REPORT,)


def _naming_the_same_works(store: Store, occurrences: Callable[..., list],
                           of_the_kind: Sequence[int], matched: dict[int, int],
                           excluded: set[int], start: int, end: int) -> dict[int, int]:
    """The reports of [start, end), not yet ``matched`` nor ``excluded``, that name a work
    (``names.named_works``: a film, a book, a band by its title) that a report of the kind
    names: ``of_the_kind``, the bank's reports holding the counted words and the counted
    reports. (memory id, when it happened) of each.

    A report of a kind need not share a word with the question nor look like the others:
    "Saw Small Hours at home with Farid; the ending made no sense" sits among the meals "at
    home with" someone, far from "How many films did I watch in March?", and holds no
    "watch". But "Watched Small Hours at the cinema" is a film, and so is what else names
    Small Hours. Titles only: a place or a person is named in reports of every kind ("walked
    to Hawk Hill" beside the hikes up it). Measured on the journal benchmark
    (docs/evaluation.md, "Multi-step questions")."""
    from .names import named_works

    reports = store.get_memories(list(dict.fromkeys(of_the_kind)))
    works = {work for record in reports.values() for work in named_works(record.content)}
    if not works:
        return {}
    found = occurrences(fts_query=" OR ".join(map(_quoted, sorted(works))),
                        happened_from=start, happened_until=end, newest_first=False,
                        limit=COUNT_CAP * 10)
    candidates = {i: when for i, when in found if i not in matched and i not in excluded}
    texts = store.get_memories(list(candidates))
    return {i: when for i, when in candidates.items()
            if i in texts and works.intersection(named_works(texts[i].content))}


def _counts_one_thing(frame: RecallFrame, terms: Sequence[str]) -> bool:
    """Whether the question counts one thing, not a kind: it names it ("How many times did I
    watch Night Harbor / go to Pine Lake / see Leo in March?": ``_counted_terms`` are then
    the need's names, ``names.named_phrases``), or its
    verb takes it bare and singular ("How many times did I cook shakshuka in 2026?"). Then the
    thing's own word counts, and the reports like it do not stand out beside it: the month's
    other hikes are not Pine Lake, nor its pad thai shakshuka. A kind keeps standing out: a
    plural anywhere in the need ("films", "family or friends", "How many bands did I see
    live?"), a gerund ("go hiking"), an article ("cook a meal")."""
    from .names import named_phrases

    if not terms:
        return False
    if set(terms) <= set(named_phrases(frame.need)):
        return True
    verbs = set(frame.verbs)
    kind_words = [w for w in content_words(frame.need) if w not in verbs]
    if not verbs or any(word.endswith(("s", "ing")) for word in [*terms, *kind_words]):
        return False
    pattern = "|".join(re.escape(verb) for verb in verbs)
    return any(re.search(rf"\b(?:{pattern})\s+{re.escape(term)}\b", frame.need, re.IGNORECASE)
               for term in terms)


_SUBJECT_THEN_VERB = re.compile(r"\b(?:I|[Ww]e)\s+(?P<rest>.*)$")
_WORD = re.compile(r"[A-Za-z][A-Za-z'-]*")
# Past tenses not in -ed that a journal says what it did with (the light ones, "went", "made",
# "took", "saw", are no verb a count goes by).
IRREGULAR_PAST = frozenset("""
    ate began bought brought built caught chose drank drew drove fed fell felt flew forgot found
    fought froze grew heard held hid hung knew laid led left lent lost met paid ran rang read rode
    rose sang sank sat sent shot shut slept sold spent spoke stood stole swam swept taught threw
    told thought understood woke won wore wrote
    """.split())


def _first_clause(text: str) -> str:
    """A memory's text up to its first ; . ! or ?, without the speaker's name before it."""
    return re.split(r"[;.!?]", without_speaker(text), maxsplit=1)[0]


def main_verb(text: str) -> str | None:
    """What a report says its writer did, lower-cased: the first past tense (in -ed, or
    ``IRREGULAR_PAST``) among the first three words of its first clause, read after its
    first "I" or "we" ("On Tuesday I cooked miso ramen"), else from its start ("Cooked miso
    ramen for Grace", "Melanie painted a sunset"), past adverbs in -ly ("Finally watched
    Red Signal"). None when the first such word is a stopword or a light verb ("Went hiking",
    "Made pad thai", "Tried a new recipe": they say too little of what was done) or there is
    none."""
    clause = _first_clause(text)
    after = _SUBJECT_THEN_VERB.search(clause)
    words = [w.lower() for w in _WORD.findall(after.group("rest") if after else clause)]
    for word in [w for w in words if not w.endswith("ly")][:3]:
        if word in STOPWORDS or word in LIGHT_VERBS:
            return None
        if (word.endswith("ed") and len(word) > 3) or word in IRREGULAR_PAST:
            return word
    return None


def _says_in_first_clause(text: str, terms: Sequence[str]) -> bool:
    """Whether a report's first clause holds one of the counted ``terms`` (roughly as the
    index reads them: "cook" holds in "cooked", "hiking" in "hiked"), not only a later one
    ("Drove out to see Aunt Rosa; we cooked together" holds "cook" in its aside)."""
    said = [w.lower() for w in _WORD.findall(_first_clause(text))]
    stems = [re.sub(r"(?:ing|ed|es|s|e)$", "", term.lower()) or term.lower() for term in terms]
    return any(word.startswith(stem) for word in said for stem in stems)


def _doing_the_same(store: Store, occurrences: Callable[..., list], counted: dict[int, int],
                    by_word: set[int], terms: Sequence[str], excluded: set[int], start: int,
                    end: int) -> tuple[dict[int, int], list[str]]:
    """The reports of [start, end), not counted nor ``excluded``, in which the writer says
    they did what a counted report says they did (its ``main_verb``): the verb opens a
    clause or follows "I" or "we" ("Drove out to see Grandpa Theo; we cooked together" beside
    "On Wednesday I cooked spinach lasagna" for "How many dishes did I make in April?"), not
    another subject's ("the ending made no sense"). (memory id, when it happened) of each, and
    the verbs that added some.

    The counted reports show what was done in the words of this journal, where the question
    may share none with them ("dishes", "make", "movies", "see"). Two guards keep a wrong
    count from growing: a report counted by a word of its aside lends no verb ("cook" in "we
    cooked together" says nothing of "Drove out to see Aunt Rosa"), and a verb adds no more
    reports than there are counted reports saying it: more is what the range is full of, not
    what the counted ones share ("worked", from one day at the office that stood out among
    visits, would add every other one). Measured on the journal benchmark
    (docs/evaluation.md, "Multi-step questions")."""
    records = store.get_memories(list(counted))
    sayers = Counter(verb for i, record in records.items()
                     if (verb := main_verb(record.content)) is not None
                     and (i not in by_word or _says_in_first_clause(record.content, terms)))
    if not sayers:
        return {}, []
    found = dict(occurrences(fts_query=" OR ".join(map(_quoted, sorted(sayers))),
                             happened_from=start, happened_until=end, newest_first=False,
                             limit=COUNT_CAP * 10))
    texts = store.get_memories([i for i in found if i not in counted and i not in excluded])
    added: dict[int, int] = {}
    used = []
    for verb in sorted(sayers):
        pattern = re.compile(rf"(?:^|[;.!?]\s*|\b(?:I|[Ww]e)\s+)(?:[A-Za-z]+ly\s+)?"
                             rf"{re.escape(verb)}\b", re.IGNORECASE)
        doing = [i for i, record in texts.items()
                 if i not in added and pattern.search(without_speaker(record.content))]
        if doing and len(doing) <= sayers[verb]:
            added.update({i: found[i] for i in doing})
            used.append(verb)
    return added, used


def _whole_bank(occurrences: Callable[..., list], in_range: int, frame: RecallFrame) -> bool:
    """Whether the range holds every report happened by the reference time. What stands out
    of a range stands out against the bank's other reports; a range that is the whole bank
    is no range, and there, as without one, only words count. In a new journal "since
    January" is all of it, and the closest few of ten entries are no kind of anything ("Which
    films have I watched since January?" counted the cat's adoption, its food and a day of
    unpacking beside the one film). A range holding all but a few keeps standing out: "since
    I adopted the cat" in a journal of fifteen entries, four before it, finds the loop around
    Fox Valley as a hike (words alone missed it); so does "What have I cooked since
    December?" in a journal's first two months (results/journal-sparse.txt)."""
    if in_range == 0:
        return False
    bank = occurrences(fts_query=None, happened_from=_EARLIEST_TIME,
                       happened_until=frame.reference_time + 1, newest_first=False,
                       limit=in_range + 1)
    return len(bank) <= in_range


def _event_memories(frame: RecallFrame) -> set[int]:
    """The memories of the events the question's range is given by."""
    ends = [frame.anchor, frame.other_end]
    return {end.memory_id for end in ends
            if isinstance(end, EventAnchor) and end.memory_id is not None}


def _every_report(occurrences: Callable[..., list], start: int, end: int,
                  trace: Trace) -> Counted:
    """A counting question that names nothing but its time ("What have I done since May?",
    "How many entries did I write in March?"): every report of the range counts, listed in
    the order they happened. Read like any time-only question (``is_time_only``): nothing in
    it tells one report from another, so standing out would pick one at random."""
    found = occurrences(fts_query=None, happened_from=start, happened_until=end,
                        newest_first=False, limit=-1)
    trace.notes.append(f"count: {len(found)} memories match (every report of the range: the "
                       "question names nothing but its time)")
    return Counted(rows=_rows([(memory_id, 0) for memory_id, _ in found[:COUNT_CAP]]),
                   count=len(found), closest=[])


def _question_occurrences(store: Store, frame: RecallFrame, settings: RetrievalSettings,
                          conversation_id: int | None,
                          acts: Sequence[str] = LIVED) -> Callable[..., list]:
    """``Store.occurrences`` for a question's occurrences (a count's, a stay's): what
    happened to the writer (``acts``), written by the reference time, by the question's
    speakers when it names some."""
    return partial(store.occurrences, assistant=ASSISTANT, conversation_id=conversation_id,
                   exclude_turns=settings.exclude_turns, written_by=frame.as_of,
                   persons=_speakers(store, frame, conversation_id), acts=acts)


def word_examples(frame: RecallFrame, terms: Sequence[str],
                  occurrences: Callable[..., list]) -> list[int]:
    """Up to ``WORD_EXEMPLARS`` reports of the whole bank holding one of the counted
    ``terms``, newest first, happened by the reference time: what a report of the kind
    looks like (``kind_direction``)."""
    if not terms:
        return []
    return [memory_id for memory_id, _ in occurrences(
        fts_query=" OR ".join(map(_quoted, terms)), happened_from=_EARLIEST_TIME,
        happened_until=frame.reference_time + 1, newest_first=True, limit=WORD_EXEMPLARS,
        acts=STATEMENTS)]


def counted_word_examples(store: Store, frame: RecallFrame, settings: RetrievalSettings,
                          conversation_id: int | None) -> list[int]:
    """``word_examples`` of a counting question's own words (``_counted_terms``)."""
    occurrences = _question_occurrences(store, frame, settings, conversation_id,
                                        _counted_acts(store, frame, conversation_id))
    return word_examples(frame, _counted_terms(store, frame, conversation_id, occurrences),
                         occurrences)


def _counted_terms(store: Store, frame: RecallFrame, conversation_id: int | None,
                   occurrences: Callable[..., list]) -> list[str]:
    """The words a counted report matches by, those some report written by the reference
    time holds: the names the need holds, as phrases (``_names_asked_about``: "Night
    Harbor" in "How many times did I watch Night Harbor?", not "night" or "harbor": "The
    Glass Harbor" is a book; as ``_order_terms``); else the need's words other than the
    question's verbs ("hiking" in "how many times did I go hiking", whatever the entry's
    verb); when it has none, its verbs that say what happened ("visited" in "Who have I
    visited since May?", "cooked" in "What have I cooked since June?"), not a light one
    ("gone" in "Where have I gone since May?"). Never a speaker's name ("melanie" in "How
    many times has Melanie gone to the beach?"): who speaks filters the reports
    (``_speakers``), and every turn of hers holds it."""
    verbs = set(frame.verbs)

    def reported(term: str) -> bool:
        return bool(occurrences(fts_query=_quoted(term), happened_from=_EARLIEST_TIME,
                                happened_until=frame.reference_time + 1, newest_first=True,
                                limit=1))

    names = [name for name in _names_asked_about(store, frame, conversation_id)
             if reported(name)]
    if names:
        return names
    speaking = _speaking(store, conversation_id)
    held = [t for t in occurrence_terms(store, frame) if t not in speaking]
    nouns = [t for t in held if t not in verbs and reported(t)]
    return nouns or [t for t in held if t in verbs and t not in LIGHT_VERBS and reported(t)]


KIND_EXEMPLARS = 5  # the bank's closest reports that show what kind of memory is counted
EXEMPLAR_POOL = 200  # how deep the dense list is searched for them
WORD_EXEMPLARS = 200  # at most this many reports holding the counted words join them
NEIGHBOURHOODS_READ = 30  # the range's reports closest to the kind whose neighbourhood is read


def kind_direction(store: Store, query: Query, frame: RecallFrame, settings: RetrievalSettings,
                   conversation_id: int | None,
                   examples_by_word: Sequence[int] = ()) -> np.ndarray | None:
    """The direction a counted memory is measured along: the (centred) question plus the
    centred mean of the reports that show what kind of memory is counted, each as a unit
    vector. They are the ``kind_exemplars`` (the bank's reports closest to the question) and
    ``examples_by_word`` (``word_examples``: the reports of the whole bank holding the counted
    words; a question with a range).

    Pseudo-relevance feedback: "How many hikes did I do in May?" is a few words, while the
    bank's hike entries ("Hiked up Fox Valley with Ben", "Went hiking at Pine Lake") show
    what a hike entry looks like, so the month's "Did the long loop around Hawk Hill" comes
    closer than its "Got soaked walking to the park". The bank's entries holding "hiking"
    show it better than the five closest alone, which can all be written one way. Measured
    on the journal benchmark (docs/evaluation.md, "Multi-step questions"). None without a
    query vector; the question alone when no report is near it."""
    import numpy as np

    if query.vector is None:
        return None
    question = _unit(np.asarray(query.vector, dtype=np.float32))
    examples = dict.fromkeys([*kind_exemplars(store, query, frame, settings, conversation_id),
                              *examples_by_word])
    vectors = store.vectors_of(list(examples))
    mean = store.mean_vector()
    if not vectors or mean is None:
        return question
    centroid = np.mean([_unit(vector) for vector in vectors.values()], axis=0) - mean
    return question + _unit(centroid)


def kind_exemplars(store: Store, query: Query, frame: RecallFrame, settings: RetrievalSettings,
                   conversation_id: int | None) -> list[int]:
    """The ``KIND_EXEMPLARS`` reports of the whole bank closest to the question (dense only),
    written by the reference time and happened at or before it. From the whole bank, not the
    range: a month holds too few of the kind to show what it looks like. Reports only: the
    assistant's answers and the user's questions about hiking are not hikes. Searched
    ``EXEMPLAR_POOL`` deep: in a journal that also holds a chat about its hikes, the chat's
    turns can fill the first ``depth`` closest."""
    pool = replace(settings, depth=max(settings.depth, EXEMPLAR_POOL))
    rows = content_list(store, Query(vector=query.vector, fts=None), pool, conversation_id,
                        frame.as_of, limit=pool.depth)
    # What a report of the kind looks like: anyone's, planned or done ("Thinking of hiking
    # Fox Valley" shows a hike as well as the hike does).
    happened = report_times(store, [row.id for row in rows], frame, settings, conversation_id,
                            acts=STATEMENTS)
    return [row.id for row in rows
            if happened.get(row.id, frame.reference_time + 1) <= frame.reference_time
            ][:KIND_EXEMPLARS]


def _unit(vector: np.ndarray) -> np.ndarray:
    import numpy as np

    norm = float(np.linalg.norm(vector))
    return vector / norm if norm else vector


def _closeness(store: Store, direction: np.ndarray | None,
               memory_ids: Iterable[int]) -> dict[int, float]:
    """The dense similarity (cosine) of these memories to ``direction`` (``kind_direction``);
    {} without one."""
    import numpy as np

    if direction is None:
        return {}
    vectors = store.vectors_of(list(memory_ids))
    norm = float(np.linalg.norm(direction)) or 1.0
    return {memory_id: float(vector @ direction / ((np.linalg.norm(vector) or 1.0) * norm))
            for memory_id, vector in vectors.items()}


def _kind_closeness(store: Store, direction: np.ndarray | None, closeness: dict[int, float],
                    frame: RecallFrame, settings: RetrievalSettings,
                    conversation_id: int | None) -> dict[int, float]:
    """How much the ``NEIGHBOURHOODS_READ`` reports closest to ``direction`` are of the kind
    counted, read from their neighbourhoods: the mean closeness of each one and the memories
    of the bank most like it, those as similar to it as the most similar
    ``settings.kind_neighbourhood`` of the bank's pairs (``closeness`` itself when that is 0
    or the bank has no int8 codes).

    One report's own closeness says as much about its names and its aside as about what
    happened: with MiniLM on a 1-year journal, "How many dishes did I make in June 2026?"
    finds "On Tuesday I cooked miso ramen for Grace" at 0.46 and "I made seafood paella at
    home with Jonas; the kitchen was a mess afterwards" at 0.21, and the largest drop falls
    between them. The reports most like each one tell of the same kind of thing under other
    names and asides, so their mean sets a report of the kind apart from a look-alike ("Got
    soaked walking to Hawk Hill" beside the hikes up Hawk Hill). A share of the bank's pairs
    rather than a number of neighbours: a journal ten times longer holds ten times the
    entries like each one (a fixed 20 nearest helped 10-year journals and hurt 1-year
    ones), and each embedder spreads its cosines differently. Measured on the journal
    benchmark (docs/evaluation.md, "Multi-step questions")."""
    if direction is None or settings.kind_neighbourhood == 0:
        return closeness
    read = sorted(closeness, key=lambda i: -closeness[i])[:NEIGHBOURHOODS_READ]
    return store.neighbourhood_closeness(
        read, direction, settings.kind_neighbourhood, conversation_id=conversation_id,
        exclude_turns=settings.exclude_turns, written_by=frame.as_of) or closeness


WORK_REPORTS = 1000  # at most this many reports naming those works are read


def _kind_of_the_works(store: Store, occurrences: Callable[..., list],
                       direction: np.ndarray | None, kind: dict[int, float],
                       frame: RecallFrame) -> tuple[dict[int, float], int]:
    """``kind`` (``_kind_closeness``) with a report that names a work (``names.named_works``:
    a film, book or band by its title) read with the other reports of the bank naming the
    same work: the mean of its own reading and their closeness to ``direction``, each one
    voice. How many were read so, too.

    A work is one kind of thing wherever it is named: a film is watched, a band heard live, a
    book started. Its other reports, written with other companions and other asides, tell
    what it is better than one report's words and the memories most like them: with MiniLM,
    "I watched Small Hours with Leo at the cinema; I fell asleep halfway through" sits among
    the evenings "Felt tired and stayed home until Leo dropped by; I stayed up too late" (the
    companion, the sleep, and a title that means a late hour), and read by its neighbours it
    fell below a concert; read with the other reports of Small Hours it is a film. Its own
    reading is one voice among them, not replaced: a work named once or twice more in a young
    journal says little (replacing it lost 1-year counts that the vote keeps). Reports
    written by the reference time and happened by it. Measured on the journal benchmark
    (docs/evaluation.md, "Multi-step questions")."""
    from .names import named_works

    if direction is None or not kind:
        return kind, 0
    records = store.get_memories(list(kind))
    works_of = {i: set(named_works(record.content)) for i, record in records.items()}
    works = set().union(*works_of.values())
    if not works:
        return kind, 0
    found = occurrences(fts_query=" OR ".join(map(_quoted, sorted(works))),
                        happened_from=_EARLIEST_TIME, happened_until=frame.reference_time + 1,
                        newest_first=True, limit=WORK_REPORTS)
    texts = store.get_memories([i for i, _ in found])
    naming = {i: works.intersection(named_works(record.content)) for i, record in texts.items()}
    closeness = _closeness(store, direction, [i for i, named in naming.items() if named])
    read = dict(kind)
    by_works = 0
    for memory_id, own in works_of.items():
        others = [closeness[i] for i, named in naming.items()
                  if i != memory_id and i in closeness and own & named]
        if others:
            read[memory_id] = (kind[memory_id] + sum(others)) / (1 + len(others))
            by_works += 1
    return read, by_works


def _standing_out(closeness: dict[int, float], among: int = 11) -> list[int]:
    """The closest memories down to the largest drop in closeness among the closest half of
    them and one more (so that at most half stand out), at most ``among``; only the closest
    when that is two or fewer.

    Half: what a count asks about is at most half of a range. Read over the whole of a
    short one, the largest drop can be the one before the reports least like the question:
    in a new journal, "How many films did I watch in March?" over six reports (Dune 0.35, a
    hike 0.10, a report at work 0.05, a hike 0.02, a tap fixed -0.40, a risotto -0.48)
    counted four. With two or fewer to read no drop says anything, and the closest alone
    stands out. A range of 22 reports or more reads the ``among`` closest, as before this
    rule. Measured on sparse journals and a nine-entry one (docs/evaluation.md, "A sparse
    journal")."""
    read = min(among, len(closeness) // 2 + 1)
    ranked = sorted(closeness, key=lambda i: -closeness[i])[:read]
    if len(ranked) <= 2:
        return ranked[:1]
    drops = [closeness[a] - closeness[b] for a, b in zip(ranked, ranked[1:], strict=False)]
    return ranked[: drops.index(max(drops)) + 1]


def _occurrence_window(frame: RecallFrame) -> tuple[int, int]:
    """[start, end) of when an occurrence may have happened: the raw range of the frame's
    time cue when it has one; never after the reference time."""
    end = frame.reference_time + 1
    if frame.guard == "filter" and frame.time_range is not None:
        return frame.time_range.start, min(frame.time_range.end, end)
    return _EARLIEST_TIME, end


def _rows(found: Sequence[tuple[int, int]]) -> list[RankedRow]:
    return [RankedRow(id=memory_id, rrf=None, dense_rank=None, bm25_rank=None, fused_rank=rank)
            for rank, (memory_id, _) in enumerate(found, 1)]


def question_vector(store: Store, embedder: Embedder, text: str, settings: RetrievalSettings,
                    conversation_id: int | None) -> np.ndarray:
    """The dense query of ``text``: its vector, with the names of who speaks in the
    conversation weighing ``speaker_name_weight`` (the unit vectors of the text as written
    and of the text without those names, mixed in that proportion).

    A turn is stored as "Nate: See ya!", so a question naming a speaker ("What state did Nate
    visit?") comes close to every turn of theirs, and closest to the short ones that say
    nothing else: they push the turn that answers out of the first K. Who speaks still
    counts where it is read for what it is: the BM25 list (a memory's persons) and the
    frame's person condition. Roles ("me", "assistant") are not names and stay. When the
    question names a speaker, both texts are encoded in one batch (an embedder with
    ``embed_queries``): 7 ms for the two with MiniLM on two cores, against 10 ms one by one.
    (The mean of the tokens outside the names, from one encoding, is no stand-in: cosine 0.55
    to the question encoded without them, and LoCoMo dev R@10 0.841 → 0.820.)"""
    import numpy as np

    weight = settings.speaker_name_weight
    without = without_names(text, _speaking(store, conversation_id) - ROLE_SPEAKERS) \
        if weight < 1.0 else ""
    if weight >= 1.0 or without == " ".join(text.split()) or not without:
        return embedder.embed_query(text)
    batch = getattr(embedder, "embed_queries", None)
    if callable(batch):
        vector, nameless = batch([text, without])
    else:
        vector, nameless = embedder.embed_query(text), embedder.embed_query(without)
    mixed = weight * _unit(np.asarray(vector, dtype=np.float32)) \
        + (1.0 - weight) * _unit(np.asarray(nameless, dtype=np.float32))
    return _unit(mixed)


def centred_query(query_vector: np.ndarray, mean: np.ndarray | None) -> np.ndarray:
    """The query's direction minus the mean direction of the bank's memories.

    Cosine to it ranks a memory by its similarity to the question less its similarity to
    what every memory of the bank shares: generic entries ("Was in a good mood and walked to
    the library with Leo") sit near that common direction and come close to every question,
    a known weakness of sentence embedders (anisotropy, "hubs"). Taking the common direction
    off the query (not the memories, whose stored vectors and indexes stay as they are) keeps
    every dense path unchanged. A bank with no vectors leaves the query as it is."""
    import numpy as np

    if mean is None:
        return query_vector
    vector = np.asarray(query_vector, dtype=np.float32)
    norm = float(np.linalg.norm(vector))
    if norm == 0:
        return vector
    return vector / norm - mean


def without_repeated_turns(store: Store, candidates: list[Candidate]) -> list[Candidate]:
    """Keep one of a turn and the one memory extracted from it: whichever is listed first.

    Once a window is extracted both tiers are searchable: the turn "I adopted a cat named
    Pixel yesterday" and the memory extracted from it alone say the same thing, and K places
    are few. A turn that several memories were extracted from stays (it says more than any one
    of them), and so does a memory drawn from several turns.
    """
    turn_ids = [c.memory.source_turn_ids[0] for c in candidates
                if c.memory.kind == "turn" and c.memory.source_turn_ids]
    cited = store.extracted_memories_of_turns(turn_ids)
    if not cited:
        return candidates
    twins: dict[int, int] = {}  # memory id -> its twin's memory id, both ways
    turn_memory = {c.memory.source_turn_ids[0]: c.memory.stored_id for c in candidates
                   if c.memory.kind == "turn" and c.memory.source_turn_ids}
    for turn_id, extracted in cited.items():
        if len(extracted) != 1:
            continue
        (memory_id,) = extracted
        twins[turn_memory[turn_id]] = memory_id
        twins[memory_id] = turn_memory[turn_id]
    listed: set[int] = set()
    kept: list[Candidate] = []
    for candidate in candidates:
        memory = candidate.memory
        twin = twins.get(memory.stored_id)
        if twin is not None and twin in listed and (
                memory.kind == "turn" or len(memory.source_turn_ids) == 1):
            continue
        listed.add(memory.stored_id)
        kept.append(candidate)
    return kept


def recent_first(content: list[Candidate], frame: RecallFrame) -> list[Candidate]:
    """The content list with the memories of the recent window first, each part in fused
    order: "recently" reorders what is relevant, it never pulls in what is not."""
    window = frame.time_range
    if window is None:
        return content
    recent = [c for c in content if _touches(c.memory, window)]
    return [*recent, *(c for c in content if not _touches(c.memory, window))]


def _touches(memory: MemoryRecord, window: TimeRange) -> bool:
    event = memory.event_range
    return memory.session_range.overlaps(window) or (event is not None and event.overlaps(window))


def _candidates(rows: Sequence[RankedRow], memories: dict, list_name: str) -> list[Candidate]:
    return [
        Candidate(
            memory=memories[row.id],
            score=row.rrf if row.rrf is not None else 0.0,
            list_name=list_name,
            dense_rank=row.dense_rank,
            bm25_rank=row.bm25_rank,
            fused_rank=row.fused_rank,
            tier=row.tier,
            gap_days=row.gap_days,
        )
        for row in rows
        if row.id in memories
    ]


def _ms_since(started: float) -> float:
    return round((time.perf_counter() - started) * 1000, 2)
