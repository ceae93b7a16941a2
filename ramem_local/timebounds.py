"""The times a bank can hold: 1900-01-01 ≤ t < 2200-01-01 (UTC), checked where times come in.

Every stored time is read back as a calendar date (``datetime.fromtimestamp``) by search, the
timeline and the renderers, so a time outside what ``datetime`` can represent would make the
whole bank unreadable. Readers and ``parse_when`` refuse anything outside these bounds, with
the input quoted; a Unix number too large to be seconds is read as milliseconds (or
microseconds) when that lands inside them.
"""

from __future__ import annotations

import math
from datetime import datetime, timezone

MIN_TIME = int(datetime(1900, 1, 1, tzinfo=timezone.utc).timestamp())  # -2208988800
MAX_TIME = int(datetime(2200, 1, 1, tzinfo=timezone.utc).timestamp())  # 7258118400 (excluded)
BOUNDS_TEXT = "1900-01-01 .. 2199-12-31"
# Above this a Unix number cannot be seconds (year 5138): milliseconds or microseconds.
_SUBSECOND_UNITS = ((10**11, 1000, "milliseconds"), (10**14, 1_000_000, "microseconds"))


def in_bounds(seconds: float) -> bool:
    return MIN_TIME <= seconds < MAX_TIME


def unix_seconds(value: int | float) -> int:
    """Unix seconds (floored) of a number given in seconds, milliseconds or microseconds.

    A number inside the bounds is seconds; a positive number above 10^11 (10^14) is read as
    milliseconds (microseconds) when that lands inside the bounds. Anything else raises
    ``ValueError`` (callers wrap it in their own error with file and line)."""
    if not math.isfinite(value):
        raise ValueError(f"bad timestamp {value!r}: not a finite number")
    if in_bounds(value):
        return math.floor(value)
    for threshold, per_second, _unit in reversed(_SUBSECOND_UNITS):
        if value > threshold and in_bounds(value / per_second):
            return math.floor(value / per_second)
    shown = repr(value) if len(repr(value)) <= 40 else repr(value)[:37] + "..."
    raise ValueError(f"timestamp {shown} is out of range: Unix seconds, milliseconds or "
                     f"microseconds must fall in {BOUNDS_TEXT}")


def check_bounds(seconds: int, shown: str) -> int:
    """``seconds`` itself when inside the bounds, else ``ValueError`` quoting ``shown``."""
    if not in_bounds(seconds):
        raise ValueError(f"time {shown} is out of range: times must fall in {BOUNDS_TEXT}")
    return seconds
