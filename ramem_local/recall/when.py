"""Reading a user's absolute time argument (``--at``, ``--as-of``)."""

from __future__ import annotations

from datetime import datetime, tzinfo

import dateparser


def parse_when(value: str | int | float | datetime, tz: tzinfo) -> int:
    """Unix seconds for an ISO date, a Unix number, a datetime, or a phrase like "3 May 2023".

    Naive values are read in ``tz`` (the bank's timezone). Raises ValueError with the input
    quoted when it cannot be read.
    """
    if isinstance(value, datetime):
        moment = value if value.tzinfo else value.replace(tzinfo=tz)
        return int(moment.timestamp())
    if isinstance(value, int | float):
        return int(value)
    text = value.strip()
    if not text:
        raise ValueError("empty date")
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        moment = dateparser.parse(
            text,
            settings={
                "TIMEZONE": str(tz),
                "RETURN_AS_TIMEZONE_AWARE": True,
                "PREFER_DATES_FROM": "past",
            },
        )
    if moment is None:
        raise ValueError(f"cannot read the date {value!r} (try ISO, e.g. 2023-05-08 14:30)")
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=tz)
    return int(moment.timestamp())
