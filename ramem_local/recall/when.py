"""Reading a user's absolute time argument (``--at``, ``--as-of``)."""

from __future__ import annotations

import math
from datetime import datetime, tzinfo

from ..errors import InputError
from ..timebounds import check_bounds, unix_seconds


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
            },
        )
    if moment is None:
        raise InputError(f"cannot read the date {value!r} (try ISO, e.g. 2023-05-08 14:30)")
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=tz)
    return check_bounds(math.floor(moment.timestamp()), _quoted(value))
