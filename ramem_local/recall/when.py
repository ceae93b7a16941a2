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

        moment = dateparser.parse(
            text,
            settings={
                "TIMEZONE": str(tz),
                "RETURN_AS_TIMEZONE_AWARE": True,
                "PREFER_DATES_FROM": "past",
                # A month or a year alone is its first day, not today's day of it:
                # "March 2026" was 3 March when read on the 3rd.
                "PREFER_DAY_OF_MONTH": "first",
                "PREFER_MONTH_OF_YEAR": "first",
            },
        )
    if moment is None:
        raise InputError(f"cannot read the date {value!r} (try ISO, e.g. 2023-05-08 14:30)")
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=tz)
    return check_bounds(math.floor(moment.timestamp()), _quoted(value))


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
