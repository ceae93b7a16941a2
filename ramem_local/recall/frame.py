"""The deterministic recall frame: information need + the episode conditions of a question.

The guard is the cue detector: a question without a temporal cue is never filtered by time,
whatever an analyzer proposes. A cue that cannot be grounded ("recently") is reported, not used.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import replace
from datetime import datetime, timedelta, tzinfo

from ..text import content_words, named_persons
from ..types import EventAnchor, RecallFrame, SearchDefaults, TimeCue, TimeRange
from .question_kinds import (
    EARLIEST,
    LATEST,
    asked_thing,
    asks_about_saying,
    asks_how_many,
    asks_whom,
    detect_order,
    find_event_anchor,
    find_event_range,
    is_counting,
    leaves_out_the_event,
    lists_since,
    question_verbs,
    without_counting_words,
    without_order_words,
)
from .time import detect_cues, impossible_dates, is_recent_cue, question_range, recent_window
from .when import range_end_cue

DEFAULT_BUFFER_DAYS = SearchDefaults.buffer_days
# "recently" / "lately" / "these days" as a preference for the last N days before the
# reference time: 0 (off) by default — on LoCoMo dev it raised triggered D@1 from 0.205 to
# 0.265 at equal R@10 (docs/evaluation.md): there "recently" is relative to a past session,
# not to now.
DEFAULT_RECENT_DAYS = 0

# Words that ask for "what was there" rather than for something in particular: a question made
# only of these, stopwords and its time cue ("What did I do yesterday?", "What happened last
# week?", "What did I write on 3 May?") is answered by the memories of the range in time order.
WHAT_HAPPENED_WORDS = frozenset(
    """
    do doing done happen happens happened happening write writes wrote written writing
    talk talks talked talking discuss discussed chat chatted note noted notes journal entry
    entries day days up going everything anything
    """.split()
)


# A preposition left in front of a cut-out cue ("hiking on ?", "do during , at the lake")
# only adds noise to the dense query: "What did I cook in ?" sits closer to "sat in the shade
# near the bakery" than to "Tried a new recipe" with MiniLM, "What did I cook?" does not.
_CUE_PREPOSITION = re.compile(
    r"(?:\b(?:as\s+of|in|on|at|during|from|since|until|till|by|around|over|for|of|"
    r"throughout|within|about|before|after|so\s+far)\s*)+$",
    re.IGNORECASE,
)
_SPACE_BEFORE_PUNCTUATION = re.compile(r"\s+([?.!,;:])")
_DANGLING_COMMA = re.compile(r"(^|[^\w\s])\s*,|,\s*(?=[?.!]|$)")


def without_cues(question: str, cues: Sequence[TimeCue]) -> str:
    """The question with the text of its cues (and the prepositions that introduce them) cut
    out, white space and punctuation tidied."""
    remaining = question
    for cue in sorted(cues, key=lambda c: c.span[0], reverse=True):
        before = _CUE_PREPOSITION.sub("", remaining[: cue.span[0]].rstrip())
        after = remaining[cue.span[1] :].lstrip()
        if after.startswith(","):
            after = after[1:]
        remaining = before + " " + after
    tidied = _SPACE_BEFORE_PUNCTUATION.sub(r"\1", " ".join(remaining.split()))
    return _DANGLING_COMMA.sub(r"\1", tidied).strip()


# Words of a time cue that only shape it ("late November", "two weeks ago", "the first half
# of May"): no turn that tells of that time need say them, and many say them of other things
# ("I stayed up too late").
CUE_MODIFIERS = frozenset("""
    late early mid beginning start middle end first second third fourth fifth last half
    ago back past previous coming upcoming recent recently lately couple few several around
    about ish whole entire
""".split())


def time_words(cue_text: str) -> list[str]:
    """The words of a time cue a turn telling of that time may say too: "weekend" in "last
    weekend", "yesterday", "november" in "late November", "2010"; not its modifiers
    (``CUE_MODIFIERS``), stopwords, or a day's number ("on 9 June": "june")."""
    return [word for word in content_words(cue_text) if word not in CUE_MODIFIERS
            and not (word.isdigit() and len(word) < 4)
            and not (word[:-2].isdigit() and word[-2:] in ("st", "nd", "rd", "th"))]


def is_time_only(question: str, cues: Sequence[TimeCue]) -> bool:
    """Whether the question asks for nothing but a time: no content word outside its cues."""
    return all(word in WHAT_HAPPENED_WORDS for word in content_words(without_cues(question, cues)))


def build_frame(
    question: str,
    *,
    reference_time: int,
    tz: tzinfo,
    timeline: TimeRange | None,
    participants: Sequence[str] = (),
    buffer_days: float = DEFAULT_BUFFER_DAYS,
    buffer_after_days: float | None = None,
    recent_days: int = DEFAULT_RECENT_DAYS,
    country: str | None = None,
    as_of: int | None = None,
    multi_step: bool = True,
    one_writer: bool = False,
) -> RecallFrame:
    """The frame of ``question`` relative to ``reference_time``; ``tz`` and ``country`` are the
    bank's (day boundaries; numeric date order, holiday calendars, seasons' hemisphere).
    ``as_of``: the caller's point in time (nothing written after it is returned).

    Open ranges ("since February", "after May 8") end at the reference day, never after it.
    An order ("when did I last"), a count ("how many times") and a time given by another
    event ("the day after I adopted the cat") are read by ``question_kinds``; the event is
    found at search time (``retrieve.ground_event_anchor``), so the frame only names it.
    ``one_writer``: what is searched was written by one person (a journal): there one thing
    asked about before or after an event is the nearest entry of it (``nearest_the_event``),
    while in a conversation people tell what followed an event with it, in the same turn
    ("How did Melanie feel after the accident?" is answered where the accident is told).
    A plural "which films have I watched" counts only over a range (a month, since an
    event); without one it is a relevance question like any other ("What books has Melanie
    read?": the best K). ``multi_step=False`` reads none of these (the frame as before them).
    """
    reference = datetime.fromtimestamp(reference_time, tz=tz)
    cues = detect_cues(question, reference, _until_reference(timeline, reference),
                       country=country)
    frame = RecallFrame(
        question=question,
        need=question,
        reference_time=reference_time,
        cues=cues,
        buffer_days=buffer_days,
        persons=named_persons(question, participants),
        as_of=as_of,
        not_dates=impossible_dates(question),
    )
    if multi_step:
        ends = find_event_range(question, _period_reader(reference, country))
        if ends is not None:
            frame.anchor, frame.other_end = _event_first(ends)
        else:
            frame.anchor = find_event_anchor(question, cues)
            if frame.anchor is not None:  # a cue inside its span is the anchor's own unit
                start, end = frame.anchor.span
                frame.cues = cues = [c for c in cues
                                     if not (start <= c.span[0] and c.span[1] <= end)]
        # An anchor's own order words ("since I last went hiking") choose its report, not
        # how the answers are listed.
        owned = frame.anchor.span if frame.anchor is not None and frame.anchor.order else None
        frame.order = detect_order(question, outside=owned,
                                   times=[cue.span for cue in cues if cue.range is not None])
        frame.counting = asks_how_many(question) or (is_counting(question) and (
            frame.anchor is not None or question_range(cues) is not None)) or (
            lists_since(question) and _since_range(cues, frame))
        if one_writer and frame.order is None and not frame.counting:
            frame.order = nearest_the_event(frame)
    if frame.anchor is not None:
        anchor = frame.anchor
        if leaves_out_the_event(frame):
            # "What did I cook the day after I adopted the cat?" asks about another day
            # than the cat's: its words would pull the anchor's own day first; so does a
            # range between two events, and a count ("How many times did I hike since I
            # moved to Leeds?" counts hikes, not reports of the move).
            frame.need = _tidy(question[: anchor.span[0]] + " " + question[anchor.span[1]:])
        frame.guard = "anchor"
        frame.guard_reason = (f"time given by another event: {anchor.text!r} "
                              f"(relation {anchor.relation}); the event is searched first")
        frame.need = _without_order_and_count(frame.need, frame)
        frame.event_need = _without_order_and_count(question, frame)
        # what the question asks once the event gives its time ("What did I do the day
        # after the move?" asks for nothing but that time)
        frame.time_only = is_time_only(frame.need, [])
        return read_need(frame)
    time_range = question_range(cues)
    if not cues:
        frame.guard, frame.guard_reason = "no_filter", "no temporal cue in the question"
    elif time_range is None and recent_days > 0 and any(is_recent_cue(c) for c in cues):
        # "Recently" is a preference, not a condition: it reorders the content list (the
        # memories relevant anyway) so that those of the last month come first.
        used = next(c for c in cues if is_recent_cue(c))
        frame.time_range = recent_window(reference, recent_days)
        frame.widened_range = frame.time_range
        frame.guard = "prefer_recent"
        frame.guard_reason = f"cue {used.text!r}: the last {recent_days} days first, no filter"
    elif time_range is None:
        vague = ", ".join(repr(c.text) for c in cues)
        frame.guard, frame.guard_reason = "no_filter", f"temporal cue not groundable: {vague}"
    else:
        used = next(c for c in cues if c.range == time_range)
        frame.time_range = time_range
        frame.widened_range = time_range.widened(buffer_days, buffer_after_days)
        frame.guard = "filter"
        frame.guard_reason = f"cue {used.text!r} ({used.rule}) grounded"
        frame.time_words = time_words(used.text)
        frame.time_only = is_time_only(question, cues)
        if not frame.time_only:
            # The filter carries the time; left in the need, "late" in "late November" matches
            # "I stayed up too late" and the date words pull every dated memory alike.
            frame.need = without_cues(question, [c for c in cues if c.range is not None])
    frame.need = _without_order_and_count(frame.need, frame)
    return read_need(frame)


def nearest_the_event(frame: RecallFrame) -> str | None:
    """The order a question about one thing before or after an event asks for without an
    order word ("Where did I hike soonest after the Lyon trip?", "What did I cook before
    the move?"): the nearest the event, the earliest after it or the latest before
    it. None for a range with two ends ("between the move and the wedding") or a length
    ("in the week after the move"), and for "since" ("What have I watched since the
    move?" lists them all)."""
    anchor = frame.anchor
    if anchor is None or frame.other_end is not None:
        return None
    return {"after": EARLIEST, "before": LATEST}.get(anchor.relation)


def read_need(frame: RecallFrame) -> RecallFrame:
    """Read the parts of ``frame.need`` that retrieval goes by (``RecallFrame.verbs``,
    ``asks_whom``, ``about_saying``): once, here, and again wherever the need is replaced
    (an analyzer's need), so that retrieval never reads the question's words itself."""
    frame.verbs = sorted(question_verbs(frame.need))
    frame.asks_whom = asks_whom(frame.need)
    frame.about_saying = asks_about_saying(frame.question)
    return frame


def _period_reader(reference: datetime,
                   country: str | None) -> Callable[[str], TimeCue | None]:
    """The time cue a range end is as a whole (``when.range_end_cue``), read as the
    question's time cues read it, relative to the reference time."""
    def period(text: str) -> TimeCue | None:
        found = range_end_cue(text, reference, country=country)
        return replace(found, text=text) if found is not None else None
    return period


def _event_first(ends: tuple[EventAnchor | TimeCue, EventAnchor | TimeCue]
                 ) -> tuple[EventAnchor, EventAnchor | TimeCue]:
    """A range's ends as (the anchor: an event, the other end): "between Christmas and the
    move" is anchored by the move."""
    first, second = ends
    if isinstance(first, EventAnchor):
        return first, second
    assert isinstance(second, EventAnchor)
    return second, first


def _since_range(cues: list[TimeCue], frame: RecallFrame) -> bool:
    """Whether the question's time runs from a start: "since X" (to now), "since X until Y",
    or an event anchor with "since"."""
    if frame.anchor is not None:
        return frame.anchor.relation == "since"
    time_range = question_range(cues)
    return time_range is not None and any(c.rule in ("since", "since_until")
                                          and c.range == time_range for c in cues)


def _without_order_and_count(need: str, frame: RecallFrame) -> str:
    """The need less its order and counting words: "last" and "how many times" are the
    question's form, not its content. The thing it asks about is read from what is left."""
    if frame.order is not None:
        need = without_order_words(need)
    if frame.counting:
        need = without_counting_words(need)
    need = need or frame.question
    if frame.order is not None or frame.counting:
        frame.thing = asked_thing(need)
    return need


def _tidy(text: str) -> str:
    return _DANGLING_COMMA.sub(r"\1", _SPACE_BEFORE_PUNCTUATION.sub(r"\1", " ".join(text.split())))


def _until_reference(timeline: TimeRange | None, reference: datetime) -> TimeRange | None:
    """The bank's timeline cut at the end of the reference day: "since X" and "after X" run
    to the reference time (asked with ``--as-of``: not to the bank's last day)."""
    if timeline is None:
        return None
    midnight = reference.replace(hour=0, minute=0, second=0, microsecond=0)
    day_end = int((midnight + timedelta(days=1)).timestamp())
    return TimeRange(timeline.start, max(min(timeline.end, day_end), timeline.start))
