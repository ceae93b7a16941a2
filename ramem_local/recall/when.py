"""Reading a user's time arguments: a moment (``--at``, ``--as-of``) or a period (the ends of
``timeline`` and ``forget``)."""

from __future__ import annotations

import math
import re
from datetime import datetime, tzinfo

from ..errors import InputError
from ..timebounds import check_bounds, unix_seconds
from ..types import TimeCue


def parse_when(value: str | int | float | datetime, tz: tzinfo) -> int:
    """Unix seconds for an ISO date, a Unix number, a datetime, or a phrase like "3 May 2023".

    Naive values are read in ``tz`` (the bank's timezone). A Unix number may be seconds,
    milliseconds or microseconds (:func:`ramem_local.timebounds.unix_seconds`). Raises
    :class:`InputError` (a ValueError) with the input quoted when it cannot be read or falls
    outside 1900-01-01 .. 2199-12-31.
    """
    try:
        return _parse_when(value, tz)
    except InputError:
        raise
    except (ValueError, OverflowError, OSError) as exc:
        raise InputError(f"bad date: {exc}") from None


def _quoted(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _parse_when(value: str | int | float | datetime, tz: tzinfo) -> int:
    if isinstance(value, bool):
        raise InputError(f"cannot read the date {value!r}")
    if isinstance(value, datetime):
        moment = value if value.tzinfo else value.replace(tzinfo=tz)
        return check_bounds(math.floor(moment.timestamp()), _quoted(value))
    if isinstance(value, int | float):
        return unix_seconds(value)
    if not isinstance(value, str):
        raise InputError(f"cannot read the date {_quoted(value)}: expected text, a number or a "
                         "datetime")
    text = value.strip()
    if not text:
        raise InputError("empty date")
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        # Imported here: a search without --as-of reads no phrase, and importing dateparser
        # took 0.1-0.2 s of a one-off search (results/bench-oneoff.txt).
        import dateparser

        settings = {"TIMEZONE": str(tz), "RETURN_AS_TIMEZONE_AWARE": True,
                    "PREFER_DATES_FROM": "past"}
        if not _is_clock_alone(text):
            # A month or a year alone is its first day, not today's day of it: "March 2026"
            # was 3 March when read on the 3rd. (Not for a time alone: "14:30" was 5 January.)
            settings |= {"PREFER_DAY_OF_MONTH": "first", "PREFER_MONTH_OF_YEAR": "first"}
        moment = dateparser.parse(text, settings=settings)
        if moment is not None:
            _check_clock_time(text, moment)
    if moment is None:
        raise InputError(f"cannot read the date {value!r} (try ISO, e.g. 2023-05-08 14:30)")
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=tz)
    return check_bounds(math.floor(moment.timestamp()), _quoted(value))


# A time of day written as a clock: "14:30", "9:05:10", "7pm", "7:30 p.m.".
_CLOCK = re.compile(r"(?<![\d:.])(\d{1,2})(?:([:.])(\d{2}))?(?::(\d{2}))?(?!\d)\s*"
                    r"(?:(a\.?m\.?|p\.?m\.?)(?![a-z]))?", re.IGNORECASE)


def _is_clock_alone(text: str) -> bool:
    """ "14:30", "at 2 pm": the latest such moment, today or yesterday."""
    clocks = _clocks(text)
    if len(clocks) != 1:
        return False
    rest = text[:clocks[0].start()] + " " + text[clocks[0].end():]
    return not re.sub(r"\bat\b|\W", "", rest, flags=re.IGNORECASE)


def _clocks(text: str) -> list[re.Match[str]]:
    """The times of day in ``text``; a dot between hour and minutes counts only with am/pm
    after it ("5.05.2024" is a date)."""
    return [match for match in _CLOCK.finditer(text) if match.group(2) == ":" or match.group(5)]


def _check_clock_time(text: str, moment: datetime) -> None:
    """A time of day the user wrote is read whole or refused. dateparser reads a relative day
    with an impossible time ("yesterday 99:99", "yesterday at 25:00") as that day at the
    current time, dropping the clock without a word."""
    clocks = _clocks(text)
    for match in clocks:
        hour, minute = int(match.group(1)), int(match.group(3) or 0)
        second = int(match.group(4) or 0)
        meridiem = (match.group(5) or "").lower().replace(".", "")
        if meridiem and not 1 <= hour <= 12 or hour > 23 or minute > 59 or second > 59:
            raise InputError(f"cannot read the time {match.group(0).strip()!r} in {text!r}: "
                             "no such time of day (try e.g. 14:30 or 2:30 pm)")
        if meridiem:
            hour = hour % 12 + (12 if meridiem == "pm" else 0)
        if len(clocks) == 1 and (moment.hour, moment.minute) != (hour, minute):
            raise InputError(f"cannot read {text!r} whole: the time {match.group(0).strip()!r} "
                             f"was not understood (try ISO, e.g. 2023-05-08 14:30)")


# What may stand around a period's words: "in March 2026", "the week of 8 May".
_AROUND_A_PERIOD = re.compile(r"\b(?:in|on|at|during|of|the)\b|[\W_]+", re.IGNORECASE)


def period_of(text: str, tz: tzinfo, *, country: str | None = None,
              now: datetime | None = None) -> tuple[int, int] | None:
    """``[start, end)`` in Unix seconds of a period named as a question names one ("March
    2026", "last week", "2024", "Easter 2025", "3 May"), read by the question's time cues
    relative to ``now``; None for a moment ("2026-03-05 14:30", "yesterday at 5 pm") or a
    text that is not one whole cue. ``parse_when`` reads a period as its first moment: as the
    end of a window that would leave out all of it but its first day."""
    stripped = text.strip()
    try:
        datetime.fromisoformat(stripped)
        return None  # an ISO day or moment: parse_when's
    except ValueError:
        pass
    cue = period_cue(stripped, now or datetime.now(tz), country=country)
    if cue is None or cue.range is None:
        return None
    return cue.range.start, cue.range.end


def period_cue(text: str, now: datetime, *, country: str | None = None,
               direction: str = "past") -> TimeCue | None:
    """The one time cue that ``text`` is as a whole (words like "in" and "the" around it
    aside), grounded relative to ``now`` in ``direction`` ("past": the latest "Christmas"
    by then, "future": the next); None when the text is no cue or more than one."""
    from .time import detect_cues

    stripped = text.strip()
    cues = [cue for cue in detect_cues(stripped, now, direction=direction, country=country)
            if cue.range is not None]
    if len(cues) != 1:
        return None
    cue = cues[0]
    if _AROUND_A_PERIOD.sub("", stripped[:cue.span[0]] + " " + stripped[cue.span[1]:]):
        return None
    return cue


def range_end_cue(text: str, now: datetime, *, country: str | None = None,
                  direction: str = "past") -> TimeCue | None:
    """The time cue the end of a range is as a whole ("Christmas", "May 2024", as
    ``period_cue``), and a month or season alone as after "in" ("until May": a month's name
    alone is no cue, it can be a verb)."""
    return (period_cue(text, now, country=country, direction=direction)
            or period_cue(f"in {text}", now, country=country, direction=direction))
