"""Anchoring: a memory's episode (session span, event time, persons) from its source turns."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, tzinfo

from ..recall.timecues import detect_cues
from ..types import MemoryRecord, TimeRange, Turn

DAY = 86_400
# Event ranges wider than this say little about *which* episode a memory belongs to ("this
# year"), so they are not stored; the session span still anchors the memory.
MAX_EVENT_DAYS = 92


def turn_content(turn: Turn) -> str:
    """The no-LLM memory text: the turn, speaker-prefixed, with a shared image's caption."""
    content = f"{turn.speaker}: {turn.text}"
    if turn.caption:
        content += f" [shared an image: {turn.caption}]"
    return content


def mentioned_persons(text: str, speaker: str, participants: Sequence[str]) -> list[str]:
    lowered = text.casefold()
    persons = [speaker]
    for name in participants:
        if name and name != speaker and name.casefold() in lowered:
            persons.append(name)
    return persons


def ground_event_time(text: str, said_at: int, tz: tzinfo) -> TimeRange | None:
    """The narrowest time the text refers to, relative to when it was said.

    "I ran a charity race last Saturday" said on Thursday 2023-05-25 → Saturday 2023-05-20.
    Returns None when the text has no grounded cue, or only cues wider than MAX_EVENT_DAYS.
    """
    reference = datetime.fromtimestamp(said_at, tz=tz)
    grounded = [
        cue.range
        for cue in detect_cues(text, reference)
        if cue.range is not None and cue.range.end - cue.range.start <= MAX_EVENT_DAYS * DAY
    ]
    if not grounded:
        return None
    return min(grounded, key=lambda r: (r.end - r.start, -r.start))


def turn_memory(
    turn: Turn,
    conversation: str,
    session_span: tuple[int, int],
    participants: Sequence[str],
    *,
    tz: tzinfo,
    event_times: bool = True,
) -> MemoryRecord:
    event = ground_event_time(turn.text, turn.timestamp, tz) if event_times else None
    return MemoryRecord(
        content=turn_content(turn),
        kind="turn",
        conversation=conversation,
        session_start=session_span[0],
        session_end=session_span[1],
        persons=mentioned_persons(turn.text, turn.speaker, participants),
        event_start=event.start if event else None,
        event_end=event.end if event else None,
        source_turns=[turn.external_id] if turn.external_id else [],
    )
