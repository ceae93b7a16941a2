"""The deterministic recall frame: information need + the episode conditions of a question.

The guard is the cue detector: a question without a temporal cue is never filtered by time,
whatever an analyzer proposes. A cue that cannot be grounded ("recently") is reported, not used.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import datetime, tzinfo

from ..types import RecallFrame, TimeRange
from .timecues import detect_cues, question_range

DEFAULT_BUFFER_DAYS = 5.0


def match_persons(question: str, participants: Sequence[str]) -> list[str]:
    """Participants named in the question: case-insensitive, whole words, possessives allowed."""
    found = []
    for name in participants:
        pattern = r"(?<!\w)" + re.escape(name) + r"(?:'s|’s|s')?(?!\w)"
        if re.search(pattern, question, flags=re.IGNORECASE):
            found.append(name)
    return found


def build_frame(
    question: str,
    *,
    reference_time: int,
    tz: tzinfo,
    timeline: TimeRange | None,
    participants: Sequence[str] = (),
    buffer_days: float = DEFAULT_BUFFER_DAYS,
) -> RecallFrame:
    reference = datetime.fromtimestamp(reference_time, tz=tz)
    cues = detect_cues(question, reference, timeline)
    frame = RecallFrame(
        question=question,
        need=question,
        reference_time=reference_time,
        cues=cues,
        buffer_days=buffer_days,
        persons=match_persons(question, participants),
    )
    time_range = question_range(cues)
    if not cues:
        frame.guard, frame.guard_reason = "no_filter", "no temporal cue in the question"
    elif time_range is None:
        vague = ", ".join(repr(c.text) for c in cues)
        frame.guard, frame.guard_reason = "no_filter", f"temporal cue not groundable: {vague}"
    else:
        used = next(c for c in cues if c.range == time_range)
        frame.time_range = time_range
        frame.widened_range = time_range.widened(buffer_days)
        frame.guard = "filter"
        frame.guard_reason = f"cue {used.text!r} ({used.rule}) grounded"
    return frame
