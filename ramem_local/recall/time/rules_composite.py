"""Composite rules: a keyword pattern followed by one anchor (any closed cue of the other
rules) or two: "the week before 9 June 2023", "the last Friday of the month", "since
2020", "between May and July 2023". The combiner turns the anchors' ranges into the cue's.
"""

from __future__ import annotations

import re
from datetime import timedelta

from .calendar_math import (
    _DAY,
    Days,
    _add_months,
    _Context,
    _part_of,
    _saturday_on_or_after,
    _shift,
    _shift_range,
    _single_day,
    _sunday_before,
    _unit_of,
    period_holding,
)
from .reading import _count, _normal_part, _normal_rel, _unit
from .registry import _composite
from .vocabulary import _ORDINALS, _WEEKDAYS, NEAR, NEAR_UNIT, NUM, PART, STRETCH, WD


@_composite(
    "shift_{rel}",
    r"\b" + NUM + r"\s+(?P<unit>day|week|month|year)s?\s+(?P<rel>before|after|prior\s+to"
    r"|earlier\s+than|later\s+than)\s+",
    "unit",
    expands_to=("shift_before", "shift_after"),
)
def _combine_shift(match: re.Match[str], anchors: list[Days], ctx: _Context) -> Days:
    sign = 1 if _normal_rel(match.group("rel")) == "after" else -1
    return _shift_range(anchors[0], _unit(match), sign * _count(match.group("n")))


@_composite(
    "period_{rel}",
    r"\b(?:the|last(?!\s+\w+\s+of\b))\s+(?P<unit>day|week|weekend|month|year)\s+"
    r"(?P<rel>before|after|prior\s+to|following|of)\s+",
    "unit",
    expands_to=("period_before", "period_after", "period_of"),
)
def _combine_period_around(match: re.Match[str], anchors: list[Days], ctx: _Context) -> Days:
    start, end = anchors[0]
    unit, rel = _unit(match), _normal_rel(match.group("rel"))
    if rel == "of":
        return period_holding(unit, start)
    if rel == "before":
        if unit == "weekend":
            sunday = _sunday_before(start)
            return sunday - _DAY, sunday + _DAY
        return _shift(start, unit, -1), start
    if unit == "weekend":
        saturday = _saturday_on_or_after(end)
        return saturday, saturday + timedelta(days=2)
    return end, _shift(end, unit, 1)


@_composite(
    "stretch_{rel}",
    r"\bthe\s+(?P<unit>day|week|month)s\s+"
    r"(?P<rel>before|prior\s+to|after|following|leading\s+up\s+to)\s+",
    "unit",
    expands_to=("stretch_before", "stretch_after"),
)
def _combine_stretch_around(match: re.Match[str], anchors: list[Days], ctx: _Context) -> Days:
    start, end = anchors[0]
    unit, count = STRETCH[_unit(match)]
    if _normal_rel(match.group("rel")) == "before":
        return _shift(start, unit, -count), start
    return end, _shift(end, unit, count)


# "in the two weeks before Christmas", "the three days after Easter 2024", "during the
# fortnight after New Year": a count of units with "the" is every day of them, as "the seven
# days after the move" is for an event; without "the", "two weeks before Christmas" is that
# day (shift_{rel}).
@_composite(
    "window_{rel}",
    r"\bthe\s+(?:(?:first|next|following|last|previous|preceding)\s+)?(?:" + NUM
    + r"\s+(?P<unit>day|week|fortnight|month)s?|(?P<single>fortnight))\s+"
    r"(?P<rel>before|prior\s+to|after|following|leading\s+up\s+to|running\s+up\s+to)\s+",
    "unit",
    expands_to=("window_before", "window_after"),
)
def _combine_window_around(match: re.Match[str], anchors: list[Days], ctx: _Context) -> Days:
    start, end = anchors[0]
    unit = (match.group("unit") or match.group("single")).lower()
    count = _count(match.group("n")) if match.group("n") else 1
    if _normal_rel(match.group("rel")) == "before":
        return _shift(start, unit, -count), start
    return end, _shift(end, unit, count)


# "in the run-up to Christmas", "the lead-up to the exams in May": the weeks before, as "the
# weeks before" is (a month).
@_composite("run_up", r"\bthe\s+(?:run|lead|build)(?:-|\s+)?up\s+to\s+", "open")
def _combine_run_up(match: re.Match[str], anchors: list[Days], ctx: _Context) -> Days:
    start, _ = anchors[0]
    return _shift(start, "month", -1), start


@_composite(
    "near_{rel}",
    r"\b(?P<near>" + NEAR + r")\s+"
    r"(?P<rel>before|prior\s+to|after)\s+",
    "open",
    expands_to=("near_before", "near_after"),
)
def _combine_near(match: re.Match[str], anchors: list[Days], ctx: _Context) -> Days:
    start, end = anchors[0]
    unit = NEAR_UNIT[" ".join(match.group("near").lower().split())]
    if _normal_rel(match.group("rel")) == "before":
        return _shift(start, unit, -1), start
    return end, _shift(end, unit, 1)


@_composite(
    "weekday_{rel}",
    r"\b(?:the|last)\s+" + WD + r"\s+(?P<rel>before|prior\s+to|after|following)\s+",
    "weekday",
    expands_to=("weekday_before", "weekday_after"),
)
def _combine_weekday_around(match: re.Match[str], anchors: list[Days], ctx: _Context) -> Days:
    weekday = _WEEKDAYS.index(match.group("wd").lower())
    start, end = anchors[0]
    if _normal_rel(match.group("rel")) == "before":
        return _single_day(start - timedelta(days=(start.weekday() - weekday - 1) % 7 + 1))
    return _single_day(end + timedelta(days=(weekday - end.weekday()) % 7))


_NTH = r"(?P<ord>first|second|third|fourth|fifth|last|final|1st|2nd|3rd|4th|5th)"


@_composite(
    "nth_{unit}",
    r"\b(?:the\s+)?" + _NTH + r"\s+(?P<unit>week|weekend|day)\s+(?:of|in)\s+",
    "unit",
    expands_to=("nth_week", "nth_weekend", "nth_day"),
)
def _combine_nth(match: re.Match[str], anchors: list[Days], ctx: _Context) -> Days:
    """nth week = days 7n-6..7n of the anchor, last week = its last 7 days; nth weekend = the
    nth Saturday in it and the next day; nth / last day = that day of it. Each is cut to the
    anchor (``_inside``)."""
    start, end = anchors[0]
    nth = _ORDINALS[match.group("ord").lower()]
    unit = _unit(match)
    if unit == "day":
        day = end - _DAY if nth < 0 else start + timedelta(days=nth - 1)
        if day >= end:
            raise ValueError("no such day")
        return _single_day(day)
    if unit == "week":
        if nth < 0:
            return _inside((end - timedelta(days=7), end), anchors[0])
        week = start + timedelta(days=7 * (nth - 1)), start + timedelta(days=7 * nth)
        return _inside(week, anchors[0])
    if nth < 0:
        last_day = end - _DAY
        saturday = last_day - timedelta(days=(last_day.weekday() - 5) % 7)
    else:
        saturday = _saturday_on_or_after(start) + timedelta(days=7 * (nth - 1))
    return _inside((saturday, saturday + timedelta(days=2)), anchors[0])


def _inside(part: Days, anchor: Days) -> Days:
    """``part`` cut to its anchor: a part of X never leaves X ("the last weekend of 2022", whose
    Saturday is 31 December, is that Saturday, not 1 January 2023 too); ValueError when nothing
    is left ("the fifth week of February 2023")."""
    start, end = max(part[0], anchor[0]), min(part[1], anchor[1])
    if start >= end:
        raise ValueError("no such part")
    return start, end


@_composite(
    "nth_weekday",
    r"\b(?:the\s+)?" + _NTH + r"\s+" + WD + r"\s+(?:of|in)\s+",
    "weekday",
)
def _combine_nth_weekday(match: re.Match[str], anchors: list[Days], ctx: _Context) -> Days:
    """"the second Sunday of May 2023": the nth such weekday inside the anchor; "the last
    Friday of the month": the last one."""
    start, end = anchors[0]
    weekday = _WEEKDAYS.index(match.group("wd").lower())
    nth = _ORDINALS[match.group("ord").lower()]
    if nth < 0:
        last_day = end - _DAY
        day = last_day - timedelta(days=(last_day.weekday() - weekday) % 7)
    else:
        day = start + timedelta(days=(weekday - start.weekday()) % 7 + 7 * (nth - 1))
    if not start <= day < end:
        raise ValueError("no such weekday")
    return _single_day(day)


@_composite(
    "edge_{unit}s",
    r"\b(?:the\s+)?(?P<ord>first|last|final)\s+" + NUM + r"\s+(?P<unit>day|week)s\s+(?:of|in)\s+",
    "unit",
    expands_to=("edge_days", "edge_weeks"),
)
def _combine_edge(match: re.Match[str], anchors: list[Days], ctx: _Context) -> Days:
    """"the first few days of June", "the last two weeks of August": the first / last N days
    or weeks of the anchor."""
    start, end = anchors[0]
    length = timedelta(days=_count(match.group("n")) * (7 if _unit(match) == "week" else 1))
    if length > end - start:
        return start, end
    if match.group("ord").lower() == "first":
        return start, start + length
    return end - length, end


@_composite("part_of", r"\b" + PART, "part")
def _combine_part_of(match: re.Match[str], anchors: list[Days], ctx: _Context) -> Days:
    """A part of any other anchor ("the end of the summer", "late last summer", "the start of
    Q3 2022", "early spring"): as a month, a quarter (thirds: one month each), a year or a
    week, by the anchor's length; a day stays that day; anything else is split in thirds (or
    halves) of its days."""
    days = anchors[0]
    part = _normal_part(match)
    unit = _unit_of(days)
    if unit is not None:
        return _part_of(days, unit, part)
    start, end = days
    length = (end - start).days
    if length <= 1:
        return days
    bounds = {"early": (0, 1, 3), "mid": (1, 2, 3), "late": (2, 3, 3), "first_half": (0, 1, 2),
              "second_half": (1, 2, 2)}[part]  # fmt: skip
    first, last, pieces = bounds
    return (start + timedelta(days=length * first // pieces),
            start + timedelta(days=length * last // pieces))


@_composite(
    "{rel}",
    r"\b(?P<rel>before|prior\s+to|after|ever\s+since|since|up\s+until|until|till)\s+",
    "open",
    expands_to=("before", "after", "since", "until"),
)
def _combine_open(match: re.Match[str], anchors: list[Days], ctx: _Context) -> Days:
    start, end = anchors[0]
    rel = _normal_rel(match.group("rel"))
    if rel == "before":
        return (ctx.lo if ctx.lo < start else _add_months(start, -12)), start
    if rel == "after":
        return end, (ctx.hi if ctx.hi > end else _add_months(end, 12))
    if rel == "since":
        # X whole when the timeline ends inside it, but never past the reference day: "since
        # May" asked on 25 May ends that day, as "since 10 May" does.
        return start, max(ctx.hi, min(end, ctx.today + _DAY))
    return min(ctx.lo, start), end


@_composite("as_of", r"\bas\s+of\s+", "deadline")
@_composite("by", r"\bby\s+", "deadline", refuses="season holiday")
def _combine_deadline(match: re.Match[str], anchors: list[Days], ctx: _Context) -> Days:
    """The state up to the anchor X, X included, as "until X": "as of X", "by X".

    "by" is also the passive's preposition: it takes no bare season or holiday ("inspired by
    autumn" is no cue; "by Christmas" stays the holiday cue).
    """
    start, end = anchors[0]
    return min(ctx.lo, start), end


@_composite(
    "between",
    r"\b(?:between|from)\s+",
    "between",
    joiner=r"\s+(?:and|to|until|till|through)\s+|\s*(?:-|\u2013)\s*",
)
@_composite(
    "since_until",
    r"\b(?:ever\s+)?since\s+",
    "open",
    joiner=r"\s+(?:until|till|up\s+to|up\s+until)\s+",
)
def _combine_between(match: re.Match[str], anchors: list[Days], ctx: _Context) -> Days:
    return _spanning(anchors)


def _spanning(anchors: list[Days]) -> Days:
    """From the first day of either anchor to the last day of either."""
    (first_start, first_end), (second_start, second_end) = anchors
    return min(first_start, second_start), max(first_end, second_end)


@_composite(
    "after_before",
    r"\bafter\s+",
    "open",
    joiner=r"\s+(?:and|but)\s+(?:before|until|till)\s+",
)
def _combine_after_before(match: re.Match[str], anchors: list[Days], ctx: _Context) -> Days:
    """"after X and before Y": from X's end to Y's start (both excluded), as between when
    they overlap."""
    (_, first_end), (second_start, _) = anchors
    if first_end < second_start:
        return first_end, second_start
    return _spanning(anchors)


