"""Time words as people type them: "last yr", "this qtr", "the current week", "this season".

The cue rules (``rules_*``) read the words of the calendar ("year", "quarter", "this");
people also write their short forms and other names for the same periods. This layer spells
those out before the rules run, and says where each character of the spelled-out text came
from, so that a cue's span and text are the question's own ("last yr", not "last year").

============================== ============================ ============================
written                        read as                      must not change
============================== ============================ ============================
yr, yrs, qtr, qtrs, wk, wks,   year(s), quarter(s),         "mo" (a name, "mo money"),
mth, mths                      week(s), month(s)            "wk" inside a word
the current week / month /     this week / month / quarter  "the current" before anything
quarter / year                 / year                       else ("the current job")
this season, the current       this <the season the         "the season finale", "this
season                         reference day falls in>      season's coat" stays "this"
                                                            + a season: read as this season
============================== ============================ ============================
"""

from __future__ import annotations

import re
from datetime import datetime

from ..calendars import is_southern

_SHORT = {"yr": "year", "yrs": "years", "qtr": "quarter", "qtrs": "quarters", "wk": "week",
          "wks": "weeks", "mth": "month", "mths": "months"}
_SHORT_FORM = re.compile(r"\b(?P<short>" + "|".join(_SHORT) + r")\b\.?", re.IGNORECASE)
_CURRENT = re.compile(r"\bthe\s+current\s+(?=(?:week|month|quarter|year|season)\b)",
                      re.IGNORECASE)
_THIS_SEASON = re.compile(r"\bthis\s+season\b(?!['’]s)", re.IGNORECASE)
# The season a month is in, north of the equator (the south's is six months on).
_NORTHERN_SEASON = {12: "winter", 1: "winter", 2: "winter", 3: "spring", 4: "spring",
                    5: "spring", 6: "summer", 7: "summer", 8: "summer", 9: "autumn",
                    10: "autumn", 11: "autumn"}


def spelled_out(text: str, reference: datetime,
                country: str | None) -> tuple[str, list[int]]:
    """``text`` with its short and other names of periods spelled out, and for each character
    of the result the index of the character of ``text`` it comes from (a replacement maps
    every one of its characters to the start of what it replaced, its last to the last)."""
    # the season's name, for the rules that read it (its months are the same in both
    # hemispheres: they name them differently)
    month = reference.month if not is_southern(country) else (reference.month + 5) % 12 + 1
    season = _NORTHERN_SEASON[month]
    edits: list[tuple[int, int, str]] = []
    for match in _CURRENT.finditer(text):
        edits.append((match.start(), match.end(), "this "))
    for match in _SHORT_FORM.finditer(text):
        edits.append((match.start(), match.end(), _SHORT[match.group("short").lower()]))
    for match in _THIS_SEASON.finditer(text):
        edits.append((match.start(), match.end(), f"this {season}"))
    if not edits:
        return text, list(range(len(text)))
    out: list[str] = []
    where: list[int] = []
    at = 0
    for start, end, replacement in sorted(edits):
        if start < at:
            continue  # overlapping edits: the first wins
        out.append(text[at:start])
        where.extend(range(at, start))
        out.append(replacement)
        where.extend([start] * (len(replacement) - 1) + [max(start, end - 1)])
        at = end
    out.append(text[at:])
    where.extend(range(at, len(text)))
    return "".join(out), where


def original_span(span: tuple[int, int], where: list[int]) -> tuple[int, int]:
    """The span of ``text`` a span of its spelled-out form covers."""
    start, end = span
    if end <= start:
        return span
    return where[start], where[end - 1] + 1
