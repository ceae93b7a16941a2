"""LLM query analysis, merged into the deterministic recall frame (DESIGN.md §4 step 1).

The model proposes what the question asks (need, keywords, an order) and which episode can
answer it (a date range, another event the time is relative to, persons, places, things,
topic). Its proposal is advice, checked before use, because a language model invents dates
readily and a wrong time filter hides the right memories. As with the time cue, the
deterministic reading (``frame``, ``question_kinds``) decides whether an order or an event
anchor is there at all, and disagreements go in the record:

- a range is considered only when the deterministic cue detector fired: no cue, no filter;
- it must parse (YYYY-MM-DD), be ordered, span at most ``MAX_RANGE_DAYS``, not start after the
  reference time, and overlap the bank's timeline widened by ``TIMELINE_SLACK_DAYS``;
- a grounded deterministic range is exact and always wins; a differing proposal is recorded as
  a disagreement. Only a cue the grounder could not ground ("recently") takes the model's range;
- with an event anchor ("the day after I adopted the cat") the anchor decides the range (from
  the anchor memory, at search time): a proposed range is never adopted;
- the order ("latest" / "earliest") is the detector's: the model can neither switch it on nor
  change it; a proposal that differs from it (another order, or an order where none fired) is
  recorded as a disagreement;
- the proposed event phrase replaces the anchor's phrase (what finds the anchor memory) only
  when the deterministic anchor fired and the two share a content word, and, in a range
  between two ends ("between adopting the cat and the move"), it names no word of the other
  end that the anchor's phrase lacks; otherwise it is recorded and not used;
- persons must be participants of the bank (``text.canonical_person``), and participants are
  never locations or entities;
- the proposed need replaces the question as the retrieval query only when it shares a content
  word with the question and does not put back an event the deterministic need leaves out
  (the event of "the day after <event>", an end of a range between events, the event a count
  since it starts from).

Every decision lands in ``RecallFrame.llm_proposal``: ``proposal`` (the model's JSON, or None),
``accepted`` (whether the model's range became the frame's range), ``reason``,
``disagreement`` (``{"deterministic": [start, end], "llm": [start, end]}`` as ISO days, end
inclusive, or None), ``need_accepted`` (whether the proposed need became ``frame.need``),
``persons_dropped`` (proposed names that are not participants), ``error`` (the model's
failure, or None), ``order_disagreement`` (``{"deterministic": order or None, "llm": order}``,
or None when the model proposed no order or the detector's), ``event_accepted`` (whether the
proposed event became ``frame.anchor.phrase``) and ``event_reason`` (why, or None when no
event was proposed).
"""

from __future__ import annotations

import copy
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import date, datetime, timedelta, tzinfo

from ..protocols import LLM
from ..schemas import array, enum, nullable, obj, string
from ..text import canonical_person, content_words
from ..types import DAY, EventAnchor, LLMCall, RecallFrame, TimeRange
from .frame import read_need
from .question_kinds import (
    EARLIEST,
    LATEST,
    leaves_out_the_event,
    order_words_removed,
    without_counting_words,
)

# When ``Memory.ask`` asks the analyzer: always (the default), only where it can decide
# something (``analysis_can_decide``), or never.
ANALYZE_ALWAYS, ANALYZE_AUTO, ANALYZE_NEVER = "always", "auto", "never"
ANALYZE_CHOICES = (ANALYZE_ALWAYS, ANALYZE_AUTO, ANALYZE_NEVER)

MAX_RANGE_DAYS = 400
TIMELINE_SLACK_DAYS = 30
EVENT_MAX_CHARS = 80

SYSTEM_PROMPT = """\
You analyse a question asked to a memory of past conversations: what is asked, and when, who
and where it happened. Reply with JSON only, using only what the question says.
Fields: need (a short search phrase for what is asked, without time words); time_start and
time_end (first and last day of the period the question is about, YYYY-MM-DD, computed from
the reference date; null when the question names no time); event (the other event the
question's time is relative to: "adopted the cat" in "the day after I adopted the cat"; else
null); order ("latest" when the question asks for the last or most recent time, "earliest"
for the first time; else null); persons; locations; entities (things, events, organisations,
titles); topic (one or two words, or null); keywords (words a matching memory would contain).

Example. Reference date: 2001-03-14 (Wednesday). Participants: Ann, Tom.
Question: What did Ann cook for Tom last weekend?
{"need": "what Ann cooked for Tom", "time_start": "2001-03-10", "time_end": "2001-03-11",
"event": null, "order": null, "persons": ["Ann", "Tom"], "locations": [], "entities": [],
"topic": "cooking", "keywords": ["cook", "dinner", "recipe"]}"""


@dataclass(frozen=True)
class AnalysisOutcome:
    """The merged frame and the accounting of the one model call (stage "analyze")."""

    frame: RecallFrame
    call: LLMCall


def analysis_schema() -> dict:
    """The bounded schema of a proposal; fields in the order the model should think.

    ``need`` and ``keywords`` become the retrieval query (dense on the need, BM25 on both) and
    the range may become the time filter; ``event`` may become the anchor phrase and ``order``
    is checked against the detector's; persons, locations, entities and topic are the
    frame's description of the episode, shown in the trace (DESIGN.md §4 step 1).
    """
    return obj(
        {
            "need": string(200),
            "time_start": nullable(string(20)),
            "time_end": nullable(string(20)),
            "event": nullable(string(EVENT_MAX_CHARS)),
            "order": nullable(enum([LATEST, EARLIEST])),
            "persons": array(string(40), 5),
            "locations": array(string(40), 3),
            "entities": array(string(40), 6),
            "topic": nullable(string(40)),
            "keywords": array(string(30), 8),
        }
    )


def analysis_messages(
    question: str, reference_time: int, tz: tzinfo, participants: Sequence[str]
) -> list[dict]:
    reference = datetime.fromtimestamp(reference_time, tz=tz).strftime("%Y-%m-%d (%A)")
    people = ", ".join(participants) if participants else "unknown"
    user = f"Reference date: {reference}\nParticipants: {people}\nQuestion: {question.strip()}"
    return [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": user}]


def analysis_can_decide(frame: RecallFrame) -> bool:
    """Whether the analyzer can change anything the search reads where it matters most: not
    when the deterministic reading grounded the question's time (a grounded range always
    wins), read an order or a count (the detector's), or an event the time is given by (the
    anchor decides the range). It then adds only its need and keywords (the retrieval
    query), at the cost of a model call (15 s with the 1.5B Qwen on 2 cores). Measured in
    docs/questions.md: skipping it there saved ~30% of the time and lost 2 of 20 answers with
    the 0.5B; with the 1.5B it helped on neither side, so ``ask`` asks it only when told
    (``analyze="auto"`` or ``"always"``)."""
    return not (frame.time_range is not None or frame.order is not None or frame.counting
                or frame.anchor is not None)


def analyze_question(
    llm: LLM,
    frame: RecallFrame,
    *,
    tz: tzinfo,
    participants: Sequence[str],
    timeline: TimeRange | None,
    max_tokens: int = 384,
) -> AnalysisOutcome:
    """Ask the model for a proposal and merge it into a copy of ``frame`` (never mutated).

    ``timeline`` is the bank's first session start .. last session end (None: no check).
    A failed call returns the deterministic frame unchanged except for ``llm_proposal``.
    """
    merged = copy.deepcopy(frame)
    result = llm.chat_json(
        analysis_messages(frame.question, frame.reference_time, tz, participants),
        analysis_schema(),
        max_tokens=max_tokens,
        temperature=0.0,
    )
    call = result.accounting("analyze")
    if result.error is not None or result.data is None:
        merged.llm_proposal = _record(
            None, False, f"model failed: {result.error}", error=result.error
        )
        return AnalysisOutcome(merged, call)
    refused = _merge_fields(merged, result.data, participants)
    record = _merge_range(merged, result.data, tz, timeline)
    record.update(refused)
    record.update(_check_order(merged, result.data))
    record.update(_merge_event(merged, result.data))
    merged.llm_proposal = record
    return AnalysisOutcome(merged, call)


def _record(
    proposal: dict | None,
    accepted: bool,
    reason: str,
    *,
    disagreement: dict | None = None,
    error: str | None = None,
) -> dict:
    return {
        "proposal": proposal,
        "accepted": accepted,
        "reason": reason,
        "disagreement": disagreement,
        "need_accepted": False,
        "persons_dropped": [],
        "error": error,
        "order_disagreement": None,
        "event_accepted": False,
        "event_reason": None,
    }


# --------------------------------------------------------------------------- non-time fields


def _merge_fields(frame: RecallFrame, proposal: dict, participants: Sequence[str]) -> dict:
    """Copy the descriptive fields into ``frame``; returns what was refused, for the record."""
    need = _without_form_words(_clean(proposal.get("need")), frame)
    need_accepted = _on_topic(need, frame.question) and not _names_the_anchor(need, frame)
    if need_accepted:  # else the deterministic need stays (the question less its time cue)
        frame.need = need
        read_need(frame)
    persons, dropped = _known_persons(proposal.get("persons") or [], participants)
    frame.persons = _union(frame.persons, persons)
    not_places = {name.casefold() for name in participants}
    frame.locations = _union(frame.locations, _without(proposal.get("locations"), not_places))
    frame.entities = _union(frame.entities, _without(proposal.get("entities"), not_places))
    frame.keywords = _union(frame.keywords, proposal.get("keywords") or [])
    frame.topic = _clean(proposal.get("topic")) or frame.topic
    return {"need_accepted": need_accepted, "persons_dropped": dropped}


def _without_form_words(need: str, frame: RecallFrame) -> str:
    """The proposed need less the words of the question's form that the deterministic need
    leaves out too: "last" of an order, "how many times" of a count."""
    if frame.order is not None:
        need = order_words_removed(need)
    if frame.counting:
        need = without_counting_words(need)
    return need


def _names_the_anchor(need: str, frame: RecallFrame) -> bool:
    """Whether a proposed need puts back an event the deterministic need leaves out
    (``frame.build_frame``): the event of "the day after <event>", either end of a range
    between two events, the event a count since it starts from. Its words would pull the
    event's own day first, or count its memories."""
    if not leaves_out_the_event(frame):
        return False
    held = set(content_words(need))
    for event in _event_ends(frame):
        words = set(content_words(event.phrase))
        if words and words <= held:
            return True
    return False


def _event_ends(frame: RecallFrame) -> list[EventAnchor]:
    """The events the question's time is given by: the anchor, and the other end of a range
    between two events."""
    ends = [frame.anchor, frame.other_end]
    return [end for end in ends if isinstance(end, EventAnchor)]


def _on_topic(need: str, question: str) -> bool:
    """Whether a proposed need may replace the question as the retrieval query.

    The need drives both the dense query and BM25, so a need sharing no content word with the
    question (a small model copying its instructions, say) would retrieve for another question.
    """
    return bool(need) and bool(set(content_words(need)) & set(content_words(question)))


def _without(items: object, names: set[str]) -> list[object]:
    """``items`` minus the participants' names: a participant is a person, not a place or
    a thing, and small models put the names they were given into every list."""
    if not isinstance(items, list):
        return []
    return [item for item in items if _clean(item).casefold() not in names]


def _clean(value: object) -> str:
    return " ".join(value.split()) if isinstance(value, str) else ""


def _union(first: Iterable[str], second: Iterable[object]) -> list[str]:
    """``first`` then new items of ``second``: whitespace-normalised, non-empty, compared
    case-insensitively."""
    merged: dict[str, str] = {}
    for item in (*first, *second):
        text = _clean(item)
        if text and text.casefold() not in merged:
            merged[text.casefold()] = text
    return list(merged.values())


def _known_persons(
    proposed: Iterable[object], participants: Sequence[str]
) -> tuple[list[str], list[str]]:
    """Proposed names that are participants (in the participants' spelling), and the rest.

    ``canonical_person`` decides: the participant's name in any case, with or without a
    possessive, or a first name only one participant has; nothing looser, since a model that
    invents "Carol" for "Caroline" would otherwise name somebody else.
    """
    kept: list[str] = []
    dropped: list[str] = []
    for item in proposed:
        name = _clean(item)
        if not name:
            continue
        match = canonical_person(name, participants)
        if match is not None:
            kept.append(match)
        else:
            dropped.append(name)
    return kept, dropped


# --------------------------------------------------------------------------- order, event


def _check_order(frame: RecallFrame, proposal: dict) -> dict:
    """Compare the proposed order with the detector's; ``frame.order`` is never changed.

    The detector decides whether the question asks for the last or first occurrence (its
    patterns have must-not-fire rows: "last week", "first aid"); a model that reads "last" in
    "the last chapter" as an order would turn a content question into a time-ordered list.
    """
    proposed = proposal.get("order")
    if proposed not in (LATEST, EARLIEST) or proposed == frame.order:
        return {"order_disagreement": None}
    return {"order_disagreement": {"deterministic": frame.order, "llm": proposed}}


def _merge_event(frame: RecallFrame, proposal: dict) -> dict:
    """Adopt the proposed event as the anchor phrase when the detector found an anchor and
    the two share a content word; returns the decision for the record.

    The phrase is the query of the anchor search, so the model may tidy it ("adopted the cat"
    for "I adopted the cat and how did it feel") but not name another event, and an event the
    detector did not find never creates an anchor (no anchor, no time from another event).
    """
    event = _clean(proposal.get("event"))
    if not event:
        return {"event_accepted": False, "event_reason": None}
    anchor = frame.anchor
    if anchor is None:
        reason = "not used: no event anchor in the question (the deterministic reading decides)"
        return {"event_accepted": False, "event_reason": reason}
    if not set(content_words(event)) & set(content_words(anchor.phrase)):
        reason = f"refused: shares no content word with the anchor phrase {anchor.phrase!r}"
        return {"event_accepted": False, "event_reason": reason}
    other_end = _other_end_text(frame)
    other_words = set(content_words(other_end)) - set(content_words(anchor.phrase))
    if other_words & set(content_words(event)):
        reason = f"refused: names the range's other end {other_end!r}"
        return {"event_accepted": False, "event_reason": reason}
    reason = f"accepted: replaces the anchor phrase {anchor.phrase!r}"
    anchor.phrase = event
    return {"event_accepted": True, "event_reason": reason}


def _other_end_text(frame: RecallFrame) -> str:
    """The words of a range's other end ("the move" in "between adopting the cat and the
    move", "Christmas" in "between the move and Christmas"); "" without one. A proposed anchor
    phrase naming it would find the other end's memory, or both."""
    other = frame.other_end
    if other is None:
        return ""
    return other.phrase if isinstance(other, EventAnchor) else other.text


# --------------------------------------------------------------------------- time range


def _merge_range(
    frame: RecallFrame, proposal: dict, tz: tzinfo, timeline: TimeRange | None
) -> dict:
    """Decide on the proposed range, adopt it when allowed, and return the decision record."""
    start_text, end_text = proposal.get("time_start"), proposal.get("time_end")
    if not start_text and not end_text:
        return _record(proposal, False, "no range proposed")
    if frame.anchor is not None:
        reason = "the event anchor decides (its range comes from the anchor memory)"
        return _record(proposal, False, reason)
    if not frame.cues:
        return _record(
            proposal, False, "rejected: no temporal cue in the question (no cue, no filter)"
        )
    proposed, problem = _proposed_range(start_text, end_text, tz)
    if proposed is None:
        return _record(proposal, False, f"rejected: {problem}")
    disagreement = _disagreement(frame.time_range, proposed, tz)
    problem = _implausible(proposed, frame.reference_time, timeline)
    if problem is not None:
        return _record(proposal, False, f"rejected: {problem}", disagreement=disagreement)
    if frame.guard == "prefer_recent":
        reason = "the recent window kept (\"recently\" reorders, it does not filter)"
        return _record(proposal, False, reason, disagreement=disagreement)
    if frame.time_range is not None:
        reason = "deterministic range kept (the grounded cue is exact)"
        return _record(proposal, False, reason, disagreement=disagreement)
    _adopt(frame, proposed, tz)
    return _record(proposal, True, "accepted: cue fired but was not groundable")


def _proposed_range(
    start_text: object, end_text: object, tz: tzinfo
) -> tuple[TimeRange | None, str | None]:
    """The proposal as whole days ``[start, end + 1 day)`` in ``tz``, or why it is unusable."""
    start, end = _parse_day(start_text), _parse_day(end_text)
    if start is None or end is None:
        return None, f"unparseable dates {start_text!r} .. {end_text!r} (expected YYYY-MM-DD)"
    if start > end:
        return None, f"reversed range {start} .. {end}"
    return TimeRange(_midnight(start, tz), _midnight(end + timedelta(days=1), tz)), None


_DAY_TEXT = re.compile(r"(\d{4})-(\d{1,2})-(\d{1,2})")


def _parse_day(value: object) -> date | None:
    if not isinstance(value, str):
        return None
    match = _DAY_TEXT.fullmatch(value.strip())
    if match is None:
        return None
    try:
        return date(*(int(part) for part in match.groups()))
    except ValueError:
        return None


def _midnight(day: date, tz: tzinfo) -> int:
    return int(datetime(day.year, day.month, day.day, tzinfo=tz).timestamp())


def _implausible(
    proposed: TimeRange, reference_time: int, timeline: TimeRange | None
) -> str | None:
    """Why a well-formed range cannot be right, or None.

    A range starting after the reference time is refused: the model's range is only used for
    cues the grounder could not ground, and those ("recently", "a while ago", "back then") all
    look back, while the timeline slack alone would admit a month of future.
    """
    days = round((proposed.end - proposed.start) / DAY)
    if days > MAX_RANGE_DAYS:
        return f"implausible width: {days} days (at most {MAX_RANGE_DAYS})"
    if proposed.start > reference_time:
        return "starts after the reference date"
    if timeline is not None and not proposed.overlaps(timeline.widened(TIMELINE_SLACK_DAYS)):
        return f"outside the bank's timeline (±{TIMELINE_SLACK_DAYS} days)"
    return None


def _disagreement(deterministic: TimeRange | None, proposed: TimeRange, tz: tzinfo) -> dict | None:
    if deterministic is None or deterministic == proposed:
        return None
    return {"deterministic": _days(deterministic, tz), "llm": _days(proposed, tz)}


def _days(value: TimeRange, tz: tzinfo) -> list[str]:
    """First and last day of a whole-day range, as the model wrote them."""
    first = datetime.fromtimestamp(value.start, tz=tz).date()
    last = datetime.fromtimestamp(value.end, tz=tz).date() - timedelta(days=1)
    return [first.isoformat(), max(first, last).isoformat()]


def _adopt(frame: RecallFrame, proposed: TimeRange, tz: tzinfo) -> None:
    first, last = _days(proposed, tz)
    vague = ", ".join(repr(c.text) for c in frame.cues)
    frame.time_range = proposed
    frame.widened_range = proposed.widened(frame.buffer_days)
    frame.guard = "filter"
    frame.source = "llm"
    frame.guard_reason = (
        f"cue {vague} not groundable; LLM range {first} .. {last} accepted "
        f"(well-formed, ≤ {MAX_RANGE_DAYS} days, inside the timeline)"
    )
