"""Calendar arithmetic on whole days, and the context a cue is grounded in.

A range of days is ``Days``, a half-open ``(first day, day after the last)``. ``_Context``
holds the reference day, its timezone, the timeline bounds, the direction, the bank's
country and a year the sentence names; ``_choose`` and ``_directed`` pick the occurrence of
a recurring time that the direction (or the named year) asks for.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import date, datetime, timedelta, tzinfo

from ..calendars import is_southern
from .vocabulary import _SEASON_START

Days = tuple[date, date]
_DAY = timedelta(days=1)


@dataclass(frozen=True)
class _Context:
    now: datetime
    today: date
    tz: tzinfo
    lo: date
    hi: date
    direction: str = "past"
    country: str | None = None  # the bank's country: holiday calendars, seasons' hemisphere
    # A year named in the cue's sentence (``_sentence_year``): a recurring cue's occurrence is
    # the first one that starts in it, whatever the direction.
    year: int | None = None


# Calendar arithmetic.


def _days_in_month(year: int, month: int) -> int:
    return (_add_months(date(year, month, 1), 1) - date(year, month, 1)).days


def _add_months(day: date, months: int) -> date:
    index = day.year * 12 + day.month - 1 + months
    year, month = divmod(index, 12)
    first = date(year, month + 1, 1)
    following = date(year + (month + 1) // 12, (month + 1) % 12 + 1, 1)
    return first.replace(day=min(day.day, (following - first).days))


def _single_day(day: date) -> Days:
    return day, day + _DAY


def _month_range(year: int, month: int) -> Days:
    first = date(year, month, 1)
    return first, _add_months(first, 1)


def _year_range(year: int) -> Days:
    return date(year, 1, 1), date(year + 1, 1, 1)


def _quarter_range(year: int, quarter: int) -> Days:
    first = date(year, 3 * quarter - 2, 1)
    return first, _add_months(first, 3)


def _week_start(day: date) -> date:
    return day - timedelta(days=day.weekday())


def _period(unit: str, day: date) -> Days:
    """The calendar week, weekend, month, quarter or year containing ``day``."""
    if unit == "week":
        start = _week_start(day)
        return start, start + timedelta(days=7)
    if unit == "weekend":
        saturday = _week_start(day) + timedelta(days=5)
        return saturday, saturday + timedelta(days=2)
    if unit == "month":
        return _month_range(day.year, day.month)
    if unit == "quarter":
        return _quarter_range(day.year, (day.month - 1) // 3 + 1)
    return _year_range(day.year)


def period_holding(unit: str, day: date) -> Days:
    """``day`` itself, or the calendar week, weekend, month, quarter or year holding it."""
    return _single_day(day) if unit == "day" else _period(unit, day)


def weekend_next_to(days: Days) -> Days:
    """The weekend next to a day (a holiday: "Memorial Day weekend"; an event: "the weekend I
    moved"), stretched to the day: Sat-Mon for a Monday, Thu-Sun for a Thursday, Sat-Sun for a
    Sunday; a Tuesday or Wednesday takes the weekend before it."""
    first = days[0]
    if first.weekday() >= 5:
        saturday = first - timedelta(days=first.weekday() - 5)
        return saturday, saturday + timedelta(days=2)
    if first.weekday() >= 3:
        return first, first + timedelta(days=7 - first.weekday())
    return first - timedelta(days=first.weekday() + 2), days[1]


def _shift(day: date, unit: str, count: int) -> date:
    if unit in ("day", "night"):
        return day + timedelta(days=count)
    if unit in ("week", "weekend"):
        return day + timedelta(days=7 * count)
    if unit == "fortnight":
        return day + timedelta(days=14 * count)
    if unit == "month":
        return _add_months(day, count)
    if unit == "quarter":
        return _add_months(day, 3 * count)
    if unit == "decade":
        return _add_months(day, 120 * count)
    return _add_months(day, 12 * count)


def _shift_range(days: Days, unit: str, count: int) -> Days:
    return _shift(days[0], unit, count), _shift(days[1], unit, count)


def _recent_month_year(today: date, month: int) -> int:
    return today.year if month <= today.month else today.year - 1


def _choose(ctx: _Context, occurrences: Iterable[Days], direction: str | None = None) -> Days:
    """The occurrence of a recurring time that the direction (the context's by default) asks
    for, among ``occurrences`` (in time order, together covering the reference day):

    * past: the latest one that started on or before the reference day (one containing it
      counts);
    * future: the first one not over by the reference day (one containing it counts);
    * nearest: the one containing the reference day, else the closer of those two, counted in
      days from the reference day to its nearest day; a tie goes to the past one.

    When the sentence names a year (``ctx.year``) it is the first one that starts in that year
    instead, whatever the direction.
    """
    if ctx.year is not None:
        for days in occurrences:
            if days[0].year == ctx.year:
                return days
        raise ValueError(f"no occurrence in {ctx.year}")
    direction = direction or ctx.direction
    today = ctx.today
    past: Days | None = None
    future: Days | None = None
    for days in occurrences:
        if days[0] <= today:
            past = days
        if future is None and days[1] > today:
            future = days
    if direction == "past" or (direction == "nearest" and future is None):
        chosen = past
    elif direction == "future" or past is None:
        chosen = future
    elif past[1] > today:
        chosen = past
    else:
        assert future is not None
        past_gap = (today - past[1]).days + 1
        future_gap = (future[0] - today).days
        chosen = future if future_gap < past_gap else past
    if chosen is None:
        raise ValueError(f"no occurrence {direction} of {today}")
    return chosen


def _around_year(ctx: _Context) -> int:
    """The year to look for the occurrences of a yearly recurring time around: the year the
    sentence names, else the reference year."""
    return ctx.today.year if ctx.year is None else ctx.year


def _directed(ctx: _Context, occurrence: Callable[[int], Days], around: int, reach: int) -> Days:
    """The occurrence of a recurring time (a yearless date, a bare month, a weekday, ...) that
    the context's direction asks for (``_choose``).

    ``occurrence(k)`` is the k-th occurrence (k a year, a month index or a week offset), later
    for a larger k; ``around - reach .. around + reach`` must cover the reference day. An
    occurrence the calendar cannot hold (Feb 29 of 2023, the year 10000) raises and is skipped.
    """
    occurrences = []
    for k in range(around - reach, around + reach + 1):
        try:
            occurrences.append(occurrence(k))
        except (ValueError, OverflowError):
            continue
    return _choose(ctx, occurrences)


def _saturday_on_or_after(day: date) -> date:
    return day + timedelta(days=(5 - day.weekday()) % 7)


def _sunday_before(day: date) -> date:
    return day - timedelta(days=(day.weekday() - 6 - 1) % 7 + 1)


def _season_start_month(season: str, ctx: _Context) -> int:
    """The month a season starts in: meteorological seasons, shifted by six months in the
    southern hemisphere (the bank's country)."""
    month = _SEASON_START[season]
    return (month + 5) % 12 + 1 if is_southern(ctx.country) else month


def _season_range(season: str, year: int, ctx: _Context) -> Days:
    """The season of ``year``; a season that starts in December runs into the next year
    (winter 2022 = Dec 2022 - Feb 2023 in the north, summer 2022 in the south)."""
    start = date(year, _season_start_month(season, ctx), 1)
    return start, _add_months(start, 3)


_PART_DAYS: dict[str, dict[str, tuple[int, int | None]]] = {
    "week": {"early": (0, 2), "mid": (2, 4), "late": (4, 7), "first_half": (0, 3),
             "second_half": (3, 7)},
    "month": {"early": (0, 10), "mid": (10, 20), "late": (20, None), "first_half": (0, 15),
              "second_half": (15, None)},
}  # fmt: skip
_PART_MONTHS: dict[str, dict[str, tuple[int, int]]] = {
    "year": {"early": (0, 4), "mid": (4, 8), "late": (8, 12), "first_half": (0, 6),
             "second_half": (6, 12)},
    "quarter": {"early": (0, 1), "mid": (1, 2), "late": (2, 3)},
    "decade": {"early": (0, 48), "mid": (48, 84), "late": (84, 120), "first_half": (0, 60),
               "second_half": (60, 120)},
}  # fmt: skip


def _part_of(days: Days, unit: str, part: str) -> Days:
    """early / mid / late / first_half / second_half of a week, month, quarter, year or decade
    (the halves of a quarter are split at its middle day)."""
    start, end = days
    if unit in _PART_DAYS:
        first, last = _PART_DAYS[unit][part]
        return start + timedelta(days=first), end if last is None else start + timedelta(days=last)
    if part not in _PART_MONTHS[unit]:
        middle = start + (end - start) // 2
        return (start, middle) if part == "first_half" else (middle, end)
    first, last = _PART_MONTHS[unit][part]
    return _add_months(start, first), _add_months(start, last)


def _unit_of(days: Days) -> str | None:
    """The calendar unit a range is as long as, for taking a part of it: a week, a month, a
    quarter (or a season), a year; None for anything else."""
    start, end = days
    length = (end - start).days
    if length == 7:
        return "week"
    months = (end.year - start.year) * 12 + end.month - start.month
    if start.day != end.day:
        return None
    return {1: "month", 3: "quarter", 12: "year"}.get(months)

