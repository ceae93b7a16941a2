"""Dataclasses exchanged by the stages (ingest, recall, retrieve, answer).

All times are INTEGER Unix seconds (UTC). Ranges are half-open: ``[start, end)``.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import overload

DAY = 86_400
# The conversation that `ramem add` and Markdown journals write to (kind "journal").
JOURNAL = "journal"
# How search ranks: "ramem" puts episode-compatible memories first, "baseline" ranks by
# content relevance alone.
SEARCH_MODES = ("ramem", "baseline")
# How dense candidates are drawn (``RetrievalSettings.dense_index``): an exact scan of the float
# vectors, the in-RAM scan of the int8 codes' signs (binary) or of the codes; the last two are
# rescored exactly.
DENSE_INDEXES = ("exact", "binary", "int8")
# Where the kind read from the bank's words joins the ranking inside a time range
# (``retrieve.RetrievalSettings.kind_in_range``).
KIND_IN_RANGE = ("journals", "always", "never")
# What a memory is (``MemoryRecord.act``, read at ingest by ``ingest.acts``): a report of
# something the writer did, of what someone else did, of what someone else did to or for the
# writer, a plan or a wish, a question, a request to the assistant, the assistant's answer.
REPORT, OTHER, RECEIVED, PLAN, QUESTION, REQUEST, ANSWER = (
    "report", "other", "received", "plan", "question", "request", "answer")
ACTS = (REPORT, OTHER, RECEIVED, PLAN, QUESTION, REQUEST, ANSWER)
# A time as ``Memory`` methods take it: an ISO date/time or a phrase ("3 May 2024"), Unix
# seconds, or a datetime.
When = str | int | float | datetime


@dataclass(frozen=True)
class BankKey:
    """The passphrase of an encrypted bank and where it came from ("--key-file F",
    "RAMEM_KEY", "the prompt"): messages name the source, never the passphrase."""

    passphrase: str = field(repr=False)
    source: str = "the key given"


@dataclass(frozen=True)
class SearchDefaults:
    """What ``search`` and ``ask`` use for an argument a call does not give: the one
    definition of each default value (the settings, ``RetrievalSettings`` and the recall frame
    start from these).

    ``Memory.open`` builds them from the user's settings (config file ← environment), so
    ``ramem config set k 3`` changes the CLI, the MCP server and Python alike; pass
    ``SearchDefaults()`` for exactly these values.
    """

    k: int = 10  # memories returned
    mode: str = "ramem"  # one of SEARCH_MODES
    buffer_days: float = 5.0  # days added on each side of a question's time range
    dense_index: str = "int8"  # how dense candidates are drawn (RetrievalSettings.dense_index)


@dataclass(frozen=True)
class TimeRange:
    """A half-open interval ``[start, end)`` of Unix seconds."""

    start: int
    end: int

    def __post_init__(self) -> None:
        if self.end < self.start:
            raise ValueError(f"time range ends before it starts: {self.start} > {self.end}")

    def widened(self, days: float, after_days: float | None = None) -> TimeRange:
        """The range with ``days`` added before it and ``after_days`` (default: the same)
        after it."""
        after = days if after_days is None else after_days
        return TimeRange(self.start - int(days * DAY), self.end + int(after * DAY))

    def overlaps(self, other: TimeRange) -> bool:
        return self.start < other.end and other.start < self.end

    def gap_seconds(self, other: TimeRange) -> int:
        """0 when the ranges overlap, else the distance between their nearest edges."""
        if self.overlaps(other):
            return 0
        return max(other.start - self.end, self.start - other.end)

    def iso(self) -> tuple[str, str]:
        return iso(self.start), iso(self.end)


@overload
def iso(ts: int) -> str: ...
@overload
def iso(ts: None) -> None: ...
def iso(ts: int | None) -> str | None:
    if ts is None:
        return None
    return datetime.fromtimestamp(ts, tz=timezone.utc).isoformat()


@dataclass(frozen=True)
class TimeCue:
    """A temporal expression found in text.

    ``range`` is None for vague cues ("recently") that are detected but not grounded.
    ``rule`` names the grammar rule that produced the match; ``span`` is the character span.
    """

    text: str
    rule: str
    span: tuple[int, int]
    range: TimeRange | None


@dataclass
class Turn:
    """One verbatim utterance or journal entry."""

    speaker: str
    text: str
    timestamp: int
    session_ordinal: int
    external_id: str | None = None
    caption: str | None = None  # e.g. LoCoMo blip_caption of a shared image
    id: int | None = None  # store id once saved

    @property
    def stored_id(self) -> int:
        """The store id of a turn read from the bank or just saved; a turn not saved yet has
        none, and asking for it is a bug."""
        if self.id is None:
            raise ValueError(f"turn {self.external_id or self.text[:40]!r} is not stored yet")
        return self.id


@dataclass(frozen=True)
class ConversationSummary:
    """A stored conversation with its counts."""

    id: int
    name: str
    kind: str  # "chat" or "journal"
    sessions: int
    turns: int
    memories: int


@dataclass
class Session:
    ordinal: int
    start: int
    end: int | None = None  # filled by the store: next session's start, or start + 1 day
    id: int | None = None


@dataclass
class ParsedConversation:
    """What a format reader produces: one conversation with its sessions and turns."""

    name: str
    sessions: list[Session]
    turns: list[Turn]
    participants: list[str] = field(default_factory=list)

    def outline(self) -> ConversationOutline:
        """The outline ingest needs before the turns; participants default to the speakers."""
        participants = self.participants or sorted({turn.speaker for turn in self.turns})
        return ConversationOutline(self.name, self.sessions, participants, len(self.turns))


@dataclass
class ConversationOutline:
    """What ingest must know of a conversation before its first turn is written: its name,
    sessions and participants, and how many turns will follow. A streamed input file gives
    the outlines first (a checking pass) and the turns afterwards, one at a time."""

    name: str
    sessions: list[Session]
    participants: list[str]
    turn_count: int


@dataclass
class MemoryRecord:
    """The retrievable unit (DESIGN.md §3)."""

    content: str
    kind: str  # "turn" (no-LLM tier) or "extracted"
    conversation: str
    session_start: int
    session_end: int
    persons: list[str] = field(default_factory=list)
    keywords: list[str] = field(default_factory=list)
    entities: list[str] = field(default_factory=list)
    location: str | None = None
    topic: str | None = None
    language: str | None = None
    event_start: int | None = None
    event_end: int | None = None
    source_turns: list[str] = field(default_factory=list)  # external ids (e.g. "D3:7")
    source_turn_ids: list[int] = field(default_factory=list)  # store ids of the turns
    id: int | None = None
    # What it is, read once at ingest (``ingest.acts``): "report" (something done), "other"
    # (someone else's doing), "received" (someone else's doing to or for the writer), "plan"
    # (or a wish), "question", "request" (to the assistant), "answer" (the assistant's).
    act: str = "report"

    @property
    def stored_id(self) -> int:
        """The store id of a memory read from the bank (every retrieved one); a record that
        ingest is still building has none, and asking for it is a bug."""
        if self.id is None:
            raise ValueError(f"memory {self.content[:40]!r} is not stored yet")
        return self.id

    @property
    def session_range(self) -> TimeRange:
        return TimeRange(self.session_start, self.session_end)

    @property
    def event_range(self) -> TimeRange | None:
        if self.event_start is None or self.event_end is None:
            return None
        return TimeRange(self.event_start, self.event_end)


@dataclass
class RecallFrame:
    """A question split into what is asked and which episode can answer it."""

    question: str
    need: str
    reference_time: int
    cues: list[TimeCue] = field(default_factory=list)
    time_range: TimeRange | None = None
    widened_range: TimeRange | None = None
    buffer_days: float = SearchDefaults.buffer_days
    time_only: bool = False  # the need is only the time cue: list the range in time order
    persons: list[str] = field(default_factory=list)
    locations: list[str] = field(default_factory=list)
    entities: list[str] = field(default_factory=list)
    topic: str | None = None
    keywords: list[str] = field(default_factory=list)
    guard: str = "no_filter"  # "filter" when the context list is used
    guard_reason: str = ""
    source: str = "deterministic"  # or "llm" when the analyzer's range was accepted
    llm_proposal: dict | None = None
    # Multi-step recall (issue 20). ``order``: "latest" ("when did I last ...") or "earliest"
    # ("... for the first time"): the matching memories are listed by time. ``counting``:
    # "how many / how often / which ... (plural)": every matching memory, with a count.
    # ``anchor``: the episode is fixed by another event ("the day after I adopted the cat"):
    # the anchor phrase, how the time relates to it, and what the anchor search found.
    # ``other_end``: a range between two ends ("between the move and Christmas", relation
    # "between"): the end that is not ``anchor``, a second event or a time cue (its span
    # where it stands in the question).
    # ``as_of``: given by the caller, nothing written after it is returned.
    order: str | None = None
    # The thing an order or a count asks about when the question names one by its verb's
    # object ("cook shakshuka", "make a lemon tart", "out on the ridge"): its words; None
    # for a kind of doing ("the last film I saw", "go hiking"; ``question_kinds.asked_thing``).
    thing: str | None = None
    counting: bool = False
    anchor: EventAnchor | None = None
    other_end: EventAnchor | TimeCue | None = None
    as_of: int | None = None
    # Day-and-month phrases of the question that name no day ("31 February"): no cue reads
    # them; said with the reading so that a month read instead is no surprise.
    not_dates: list[str] = field(default_factory=list)
    # Parts of the need, read with it (``recall.frame.read_need``): the question's verbs
    # ("did I *cook*": how it asks, not what about), whether it asks for the person someone
    # acted on ("Who did I go to see?"), whether it asks about what was said rather than done
    # ("What did the assistant suggest?"). Retrieval reads these, never the question's words.
    verbs: list[str] = field(default_factory=list)
    # The question's own time words, for the lexical list inside its range only: a turn says
    # "last weekend" or "yesterday" as the question does ("weekend", "yesterday"; not "late"
    # in "late November": ``recall.frame.time_words``).
    time_words: list[str] = field(default_factory=list)
    asks_whom: bool = False
    about_saying: bool = False
    # A question whose time is another event: its need with the event's words, searched when
    # the event is not found ("What did I eat while I was in Belém?").
    event_need: str | None = None


@dataclass
class EventAnchor:
    """A time given by another event: "the day after <phrase>", "since <phrase>", "the day
    <phrase>" ("the day I moved")."""

    phrase: str  # what the anchor memory is found by ("I adopted the cat")
    relation: str  # "day_after", "week_before", "since", "after", "before", "until",
    # "day_of" / "weekend_of" / "week_of" / "month_of" / "year_of" (the event's own day,
    # weekend, week, ...),
    # "between" (one end of a range whose other end is ``RecallFrame.other_end``), "stay"
    # ("while I was in Lisbon": ``time`` to ``last_time``), ...
    # (``question_kinds.relation_range``)
    text: str  # the question's words that say it ("the day after I adopted the cat")
    span: tuple[int, int]
    # "since I last went hiking", "the day after my first hike": which of the event's reports
    # is the anchor, "latest" or "earliest" (its order words are not in ``phrase``); None:
    # the one the phrase fits best.
    order: str | None = None
    memory_id: int | None = None  # the anchor memory found (None: not found)
    time: int | None = None  # its event time, else when it was said
    last_time: int | None = None  # a stay's or a trip's last day (``retrieve.stay_span``)
    # A trip named as the event ("before my trip to Oslo", "after the Oslo trip"): ``phrase`` is
    # the place, found as a stay is (its days there), and the relation counts from its first
    # day (before) or its last (after).
    trip: bool = False
    # The trip's end is the event ("the night I got back from Oslo", "when we came home from
    # Crete"): the relation counts from its last day, as from a one-day event.
    homecoming: bool = False
    confident: bool = True
    # Not confident: the reports that fused alike at different times {memory id: when it
    # happened}, among which ``memory_id`` was chosen.
    candidates: dict[int, int] = field(default_factory=dict)


@dataclass
class Candidate:
    """One retrieved memory with how it was found."""

    memory: MemoryRecord
    score: float
    list_name: str  # "context" or "content"
    dense_rank: int | None = None
    bm25_rank: int | None = None
    fused_rank: int | None = None
    tier: int | None = None  # 0 overlaps the raw range; 1+ gap tiers; None outside context
    gap_days: float | None = None


@dataclass(frozen=True)
class LLMCall:
    """The accounting of one model call: which stage made it, its tokens, its time, its error
    (None when the reply was usable). Kept in ``Trace.llm_calls`` and extraction reports."""

    stage: str
    tokens_in: int = 0
    tokens_out: int = 0
    ms: float = 0.0
    error: str | None = None

    def as_dict(self) -> dict:
        """The JSON form: stage, tokens_in, tokens_out, ms, error."""
        return {
            "stage": self.stage,
            "tokens_in": self.tokens_in,
            "tokens_out": self.tokens_out,
            "ms": self.ms,
            "error": self.error,
        }

    @staticmethod
    def total(calls: Iterable[LLMCall]) -> LLMTotal:
        """The calls counted and summed (tokens in and out, milliseconds)."""
        calls = list(calls)
        return LLMTotal(
            calls=len(calls),
            tokens_in=sum(c.tokens_in for c in calls),
            tokens_out=sum(c.tokens_out for c in calls),
            ms=sum(c.ms for c in calls),
        )


@dataclass(frozen=True)
class LLMTotal:
    """Several ``LLMCall``s summed (see ``LLMCall.total``)."""

    calls: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    ms: float = 0.0


@dataclass
class Trace:
    frame: RecallFrame | None = None
    mode: str = "ramem"
    dense_index: str | None = None  # how dense candidates were drawn; None: no embedder
    notes: list[str] = field(default_factory=list)
    timings_ms: dict[str, float] = field(default_factory=dict)
    llm_calls: list[LLMCall] = field(default_factory=list)
    shown_memory_ids: list[int] = field(default_factory=list)


@dataclass
class SearchResponse:
    results: list[Candidate]
    trace: Trace
    # A counting question ("how many times ..."): how many memories match (all of them are in
    # ``results``, up to the cap); None for other questions. ``capped``: more matched.
    count: int | None = None
    capped: bool = False


@dataclass
class Answer:
    question: str
    answer: str
    abstained: bool
    reasoning: str
    citations: list[int]
    evidence: list[Candidate]
    trace: Trace
    # A counting question: how many memories match, as ``SearchResponse.count`` (the
    # retrieval's count, not the model's); ``capped``: more matched than were listed.
    count: int | None = None
    capped: bool = False


@dataclass(frozen=True)
class ExtractionWindow:
    """One LLM extraction window of the ledger (``extraction_windows``): its turns, status,
    attempts and last error."""

    id: int
    conversation_id: int
    first_turn_id: int
    last_turn_id: int
    turn_count: int
    status: str
    attempts: int
    error: str | None
    model: str | None
    prompt_version: str
    updated_at: int


@dataclass(frozen=True)
class EmbedderFingerprint:
    """Who made a bank's vectors: an embedder reports it, the bank records it and refuses
    vectors from any other."""

    name: str
    dimension: int
    sha256: str

    def describe(self) -> str:
        return f"{self.name} ({self.dimension}-d, sha256 {self.sha256[:12]})"


@dataclass(frozen=True)
class BankHealth:
    """What ``ramem doctor`` reads of a bank (``Memory.health``): the file's integrity, the
    stored times, the full-text index and the vectors."""

    integrity: list[str]  # SQLite's integrity_check: ["ok"] when healthy
    conversations_with_bad_times: dict[str, int]  # name → rows outside MIN_TIME..MAX_TIME
    vector_extension: str  # the loaded sqlite-vec version
    memories: int
    fts_rows: int
    fts_ok: bool
    vectors: int
    embedder: EmbedderFingerprint | None  # who made the bank's vectors, if any
    cipher: str | None = None  # the bank's cipher; None: not encrypted
    left_copy: str | None = None  # a copy an interrupted `encrypt`/`rekey` left beside it


@dataclass
class TimelineEntry:
    """A memory in a timeline, with when it was said (its first source turn)."""

    memory: MemoryRecord
    said_at: int


@dataclass
class TimelineSession:
    """The memories of one session said on one day."""

    conversation: str
    session_ordinal: int | None
    session_start: int
    entries: list[TimelineEntry] = field(default_factory=list)


@dataclass
class TimelineDay:
    """One day of a timeline (in the bank's timezone), session by session."""

    day: str  # YYYY-MM-DD
    sessions: list[TimelineSession] = field(default_factory=list)


@dataclass
class ForgetReport:
    """What a forget removed (or, with ``dry_run``, would remove)."""

    memory_ids: list[int]
    turn_ids: list[int]
    conversations: list[str]  # conversations left with nothing, removed
    dry_run: bool
    shown: list[MemoryRecord] = field(default_factory=list)  # the first memories, to list
    checkpointed: bool = True  # the write-ahead log was emptied into the bank file

    def __bool__(self) -> bool:
        return bool(self.memory_ids or self.turn_ids or self.conversations)
