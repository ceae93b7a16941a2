"""Rules for cues that name a calendar time: dates, months, years and decades, seasons,
holidays and quarters ("8 May 2023", "in June", "the 1990s", "last summer", "at
Easter", "Q3 2022").

Each grounder is registered by the ``_rule`` decorators above it; the bottom decorator
registers first. The rules of this module come before those of ``rules_relative`` and
``rules_composite`` (``engine`` imports them in that order).
"""

from __future__ import annotations

import re
from datetime import date, timedelta

from ...errors import UndatedHoliday
from ..calendars import date_order, holiday_key, holiday_occurrences
from .calendar_math import (
    Days,
    _add_months,
    _around_year,
    _choose,
    _Context,
    _days_in_month,
    _directed,
    _month_range,
    _part_of,
    _period,
    _quarter_range,
    _recent_month_year,
    _season_range,
    _season_start_month,
    _shift,
    _single_day,
    _year_range,
    weekend_next_to,
)
from .reading import (
    _after_preposition,
    _count,
    _day_fits_month,
    _holiday_in_text_ok,
    _holiday_ok,
    _is_year,
    _iso_ok,
    _month,
    _month_word_ok,
    _month_year_ok,
    _normal_part,
    _normal_rel,
    _numeric_month_day,
    _numeric_ok,
    _quarter,
    _span_ok,
    _words_year,
    _year,
    _year_month_ok,
    _year_ok,
    _yearless_day_ok,
    _yearless_month_ok,
    day_of_month,
)
from .registry import _rule
from .vocabulary import (
    _ONES_PATTERN,
    _TEENS,
    _TENS_PATTERN,
    _TWO_DIGITS,
    BARE_YEAR,
    DAY_OF_MONTH,
    DAY_WORD,
    HOLIDAY,
    HOLIDAY_PLURAL,
    MON,
    NO_YEAR_AFTER,
    NOT_SEASON_NOUN,
    NUM,
    PART,
    QUARTER,
    REL,
    REL_OR_PAST,
    SEASON,
    SEASON_PLURAL,
    WD_PREFIX,
    YEAR,
    YEAR_SEP,
)

# Dates.

# Days of one month: "8-10 May", "May 8 to 10", "from the 8th to the 10th of May", and with
# "and" only after "between" ("between 8 and 10 May 2023"; "on May 8 and 10" names two days).
# The month and year said once date both days: the composite "between X and Y" needs two
# whole dates.
_SPAN_BETWEEN = r"(?:(?P<between>\bbetween)\s+(?:the\s+)?)?"
_SPAN_JOINER = (r"(?:\s*(?:-|\u2013)\s*|\s+(?:to|until|till|through)\s+"
                r"|\s+(?P<and>and)\s+)(?:the\s+)?")


@_rule(
    "date_dmy",
    WD_PREFIX + DAY_OF_MONTH + r"\s+(?:of\s+)?" + MON + YEAR_SEP + YEAR,
    "month digit",
    accept=_day_fits_month,
    anchor=True,
)
@_rule(
    "date_mdy",
    WD_PREFIX + MON + r"\s+(?:the\s+)?" + DAY_OF_MONTH + YEAR_SEP + YEAR,
    "month digit",
    accept=_day_fits_month,
    anchor=True,
)
@_rule(
    "date_dmy",
    DAY_OF_MONTH + r"-" + MON + r"-(?P<year>(?:19|20)\d\d|\d\d)(?![\w-])",
    "month digit",
    accept=_day_fits_month,
    anchor=True,
)
@_rule(
    "date_dmy",
    DAY_OF_MONTH + r"\s+" + MON + r"\s+(?P<year>\d\d)(?![\w'\u2019%:/-]|[.,]\d)"
    r"(?!\s*[ap]\.?m\b)(?!\s+[a-z])",
    "month digit",
    accept=_day_fits_month,
    anchor=True,
)
def _ground_full_date(match: re.Match[str], ctx: _Context) -> Days:
    return _single_day(date(_year(match, ctx), _month(match), day_of_month(match)))


@_rule(
    "date_iso",
    r"(?<![\w/.-])(?P<year>(?:19|20)\d\d)[-/](?P<month>0?[1-9]|1[0-2])[-/]"
    r"(?P<day>3[01]|[12]\d|0?[1-9])(?![\d/-])",
    "digit",
    accept=_iso_ok,
    anchor=True,
)
def _ground_iso(match: re.Match[str], ctx: _Context) -> Days:
    year, month, day = (int(match.group(g)) for g in ("year", "month", "day"))
    return _single_day(date(year, month, day))


@_rule(
    "date_numeric",
    r"(?<![\w/.-])(?P<a>\d{1,2})(?P<sep>[/.-])(?P<b>\d{1,2})(?P=sep)(?P<y>(?:19|20)\d\d|\d\d)"
    r"(?![\w/-]|\.\d)",
    "digit",
    accept_in=_numeric_ok,
    anchor=True,
)
def _ground_numeric(match: re.Match[str], ctx: _Context) -> Days | None:
    month_day = _numeric_month_day(match, date_order(ctx.country))
    if month_day is None:
        return None
    return _single_day(date(_year(match, ctx, "y"), *month_day))


@_rule(
    "month_numeric",
    r"(?<![\w/.-])(?P<year>(?:19|20)\d\d)[-/](?P<month>0[1-9]|1[0-2])(?![\w/.-]|\.\d)",
    "digit",
    accept=_year_month_ok,
    anchor=True,
)
@_rule(
    "month_numeric",
    r"(?<![\w/.$-])(?P<month>0?[1-9]|1[0-2])/(?P<year>(?:19|20)\d\d)(?![\w/.-]|\.\d)",
    "digit",
    accept=_month_year_ok,
    anchor=True,
)
def _ground_month_numeric(match: re.Match[str], ctx: _Context) -> Days:
    return _month_range(int(match.group("year")), int(match.group("month")))


@_rule(
    "date_span",
    r"(?:" + _SPAN_BETWEEN + MON + r"\s+" + DAY_OF_MONTH + _SPAN_JOINER
    + r"(?P<day2>3[01]|[12]\d|0?[1-9])(?:st|nd|rd|th)?\b(?:" + YEAR_SEP + YEAR + r")?)",
    "month digit",
    accept=_span_ok,
    anchor=True,
)
@_rule(
    "date_span",
    _SPAN_BETWEEN + DAY_OF_MONTH + _SPAN_JOINER
    + r"(?P<day2>3[01]|[12]\d|0?[1-9])(?:st|nd|rd|th)?\s+(?:of\s+)?"
    + MON
    + r"(?:"
    + YEAR_SEP
    + YEAR
    + r")?",
    "month digit",
    accept=_span_ok,
    anchor=True,
)
def _ground_date_span(match: re.Match[str], ctx: _Context) -> Days:
    month, first, last = _month(match), day_of_month(match), int(match.group("day2"))
    length = timedelta(days=last - first + 1)
    if match.group("year"):
        start = date(_year(match, ctx), month, first)
        return start, start + length

    def span_in(year: int) -> Days:
        return date(year, month, first), date(year, month, first) + length

    return _directed(ctx, span_in, _around_year(ctx), 8)


@_rule(
    "day_month",
    WD_PREFIX + DAY_OF_MONTH + r"\s+(?:of\s+)?" + MON,
    "month digit",
    accept=_yearless_day_ok,
    anchor=True,
)
@_rule(
    "month_day",
    WD_PREFIX + MON + r"\s+(?:the\s+)?" + DAY_OF_MONTH + r"(?!\s*(?:[ap]\.?m\b|%|:\d|\.\d))",
    "month digit",
    accept=_yearless_day_ok,
    anchor=True,
)
def _ground_yearless_date(match: re.Match[str], ctx: _Context) -> Days:
    month, day = _month(match), day_of_month(match)
    return _directed(ctx, lambda year: _single_day(date(year, month, day)), _around_year(ctx), 8)


def _day_of_month_ok(match: re.Match[str]) -> bool:
    """"on the 8th." alone, "the 8th of last month" with or without "on", and "the 8th" after
    a period next to it ("the weekend of the 12th", "the week of the 3rd", "the day after the
    12th")."""
    after_of = re.search(r"\b(?:day|weekend|week)\s+(?:of|before|after|following|prior\s+to)"
                         r"\s+$", match.string[:match.start()], re.IGNORECASE)
    return bool(match.group("on") or match.group("rel") or after_of)


@_rule(
    "day_of_month",
    r"\b(?:(?P<on>on)\s+)?the\s+(?:(?P<day>3[01]|[12]\d|0?[1-9])(?:st|nd|rd|th)"
    rf"|(?P<dayword>{DAY_WORD}))\b"
    r"(?:\s+of\s+(?P<rel>this|last|next|the)\s+month\b|(?=\s*(?:[.,;:!?)]|$)))",
    "digit",
    accept=_day_of_month_ok,
    anchor=True,
    anchor_for="period_{rel}",
)
def _ground_day_of_month(match: re.Match[str], ctx: _Context) -> Days:
    day = day_of_month(match)
    rel = _normal_rel(match.group("rel") or "")
    if rel:
        offset = {"this": 0, "last": -1, "next": 1}[rel]
        first = _add_months(ctx.today.replace(day=1), offset)
        return _single_day(first.replace(day=min(day, _days_in_month(first.year, first.month))))
    first = ctx.today.replace(day=1)
    return _directed(ctx, lambda k: _single_day(_add_months(first, k).replace(day=day)), 0, 13)


# Months.


@_rule(
    "month_year",
    r"(?:\bthe\s+month\s+of\s+)?" + MON + YEAR_SEP + YEAR,
    "month year",
    anchor=True,
)
def _ground_month_year(match: re.Match[str], ctx: _Context) -> Days:
    return _month_range(_year(match, ctx), _month(match))


@_rule(
    "month_of_rel_year",
    MON + r",?\s+(?:of\s+)?(?P<rel>last|this|next)\s+year\b",
    "month rel",
    accept=_month_word_ok,
    anchor=True,
)
def _ground_month_of_rel_year(match: re.Match[str], ctx: _Context) -> Days:
    offset = {"last": -1, "this": 0, "next": 1}[_normal_rel(match.group("rel"))]
    return _month_range(ctx.today.year + offset, _month(match))


@_rule(
    "month_{rel}",
    r"\b" + REL + r"\s+" + MON,
    "month rel",
    accept=_month_word_ok,
    anchor=True,
    expands_to=("month_last", "month_this", "month_next"),
)
def _ground_month_rel(match: re.Match[str], ctx: _Context) -> Days:
    month, today = _month(match), ctx.today
    rel = _normal_rel(match.group("rel"))
    if rel == "this":
        return _month_range(today.year, month)
    if rel == "last":
        return _month_range(today.year if month < today.month else today.year - 1, month)
    return _month_range(today.year if month > today.month else today.year + 1, month)


@_rule(
    "month",
    r"(?:\b(?:in|during|throughout|through|of|from|around)\s+(?:the\s+month\s+of\s+)?"
    r"|\bthe\s+month\s+of\s+)" + MON + NO_YEAR_AFTER,
    "month",
    accept=_month_word_ok,
)
@_rule("month", MON, "month", accept=_month_word_ok, anchor=True, detect=False)
def _ground_month(match: re.Match[str], ctx: _Context) -> Days:
    month = _month(match)
    return _directed(ctx, lambda year: _month_range(year, month), _around_year(ctx), 1)


@_rule(
    "month_part",
    r"\b" + PART + MON + r"(?:" + YEAR_SEP + YEAR + r")?",
    "month part",
    accept=_yearless_month_ok,
    anchor=True,
)
def _ground_month_part(match: re.Match[str], ctx: _Context) -> Days:
    month, part = _month(match), _normal_part(match)
    if match.group("year"):
        return _part_of(_month_range(_year(match, ctx), month), "month", part)
    if ctx.year is not None:  # the year the sentence names
        return _part_of(_month_range(ctx.year, month), "month", part)
    if ctx.direction == "past":
        return _part_of(_month_range(_recent_month_year(ctx.today, month), month), "month", part)
    return _directed(
        ctx, lambda y: _part_of(_month_range(y, month), "month", part), ctx.today.year, 1
    )


# Years and decades.


@_rule(
    "year_part",
    r"\b" + PART + r"(?P<year>(?:19|20)\d\d)(?![\w%/:-])(?![.,]\d)",
    "part digit",
    anchor=True,
)
def _ground_year_part(match: re.Match[str], ctx: _Context) -> Days:
    return _part_of(_year_range(int(match.group("year"))), "year", _normal_part(match))


@_rule(
    "year_span",
    r"(?<![\w$#./:-])(?P<y1>(?:19|20)\d\d)\s*(?:-|\u2013|to|through)\s*(?P<y2>(?:19|20)\d\d)"
    r"(?![\w%/:-])",
    "digit",
    accept=lambda m: int(m.group("y1")) < int(m.group("y2")),
    anchor=True,
)
def _ground_year_span(match: re.Match[str], ctx: _Context) -> Days:
    return date(int(match.group("y1")), 1, 1), date(int(match.group("y2")) + 1, 1, 1)


@_rule(
    "decade",
    r"\b(?:the\s+)?(?:(?P<part>early|mid|late)(?:-|\s+))?(?P<dec>(?:19|20)\d0)'?s\b",
    "digit",
    anchor=True,
)
@_rule(
    "decade",
    r"(?:\bthe\s+(?:(?P<part>early|mid|late)(?:-|\s+))?['\u2019]?|(?<![\w'\u2019])['\u2019])"
    r"(?P<dec>[1-9]0)['\u2019]?s\b",
    "digit",
    anchor=True,
)
def _ground_decade(match: re.Match[str], ctx: _Context) -> Days:
    """A decade: "the 1990s", "the early 2000s"; two digits ("the '90s", "the 80s") in the
    century that puts its start within ten years after the reference year or 89 before."""
    start = _year(match, ctx, "dec")
    whole = date(start, 1, 1), date(start + 10, 1, 1)
    part = match.group("part")
    return _part_of(whole, "decade", part.lower()) if part else whole


@_rule("year", BARE_YEAR, "digit", accept=_year_ok, anchor=True)
@_rule(
    "year",
    r"(?<![\w'\u2019])['\u2019](?P<year>\d\d)\b(?!['\u2019])",
    "digit",
    accept=_after_preposition,
    anchor=True,
)
def _ground_year(match: re.Match[str], ctx: _Context) -> Days:
    return _year_range(_year(match, ctx))


def _year_words_ok(match: re.Match[str]) -> bool:
    return _after_preposition(match) and _is_year(match, _words_year(match.group(0)))


@_rule(
    "year",
    rf"\b(?:(?P<thousand>two\s+thousand)(?:\s+(?:and\s+)?(?P<rest1>{'|'.join(_TEENS)}|"
    rf"{_TENS_PATTERN}|{_ONES_PATTERN}))?|(?P<century>nineteen|twenty)[-\s]+"
    rf"(?P<rest2>{_TWO_DIGITS}))\b",
    "yearword",
    accept=_year_words_ok,
    anchor=True,
)
def _ground_year_in_words(match: re.Match[str], ctx: _Context) -> Days:
    """A year in words after a preposition: "in two thousand nineteen", "since twenty
    twenty", "in nineteen ninety-nine", "in twenty oh five"."""
    return _year_range(_words_year(match.group(0)))


# Seasons.


def _season_word(match: re.Match[str]) -> str:
    return match.group("season").lower()


@_rule(
    "season_year",
    r"\b(?:the\s+)?" + SEASON + YEAR_SEP + YEAR,
    "season year",
    anchor=True,
)
def _ground_season_year(match: re.Match[str], ctx: _Context) -> Days:
    return _season_range(_season_word(match), _year(match, ctx), ctx)


@_rule(
    "season_of_rel_year",
    r"\b(?:the\s+)?" + SEASON + r"\s+(?:of\s+)?(?P<rel>last|this|next)\s+year\b",
    "season rel",
    anchor=True,
)
def _ground_season_of_rel_year(match: re.Match[str], ctx: _Context) -> Days:
    offset = {"last": -1, "this": 0, "next": 1}[_normal_rel(match.group("rel"))]
    return _season_range(_season_word(match), ctx.today.year + offset, ctx)


@_rule(
    "season_{rel}",
    r"\b(?:the\s+)?" + REL_OR_PAST + r"\s+" + SEASON + NOT_SEASON_NOUN,
    "season rel",
    anchor=True,
    expands_to=("season_last", "season_this", "season_next"),
)
def _ground_season_rel(match: re.Match[str], ctx: _Context) -> Days:
    season, today = _season_word(match), ctx.today
    rel = _normal_rel(match.group("rel"))
    if rel == "this":
        spans_new_year = _season_start_month(season, ctx) == 12
        year = today.year - 1 if spans_new_year and today.month <= 2 else today.year
        return _season_range(season, year, ctx)
    if rel == "last":
        for year in range(today.year, today.year - 3, -1):
            if _season_range(season, year, ctx)[1] <= today:
                return _season_range(season, year, ctx)
    for year in range(today.year - 1, today.year + 2):
        if _season_range(season, year, ctx)[0] > today:
            return _season_range(season, year, ctx)
    raise ValueError("no such season")


@_rule(
    "season",
    r"\b(?:in|during|over|through|throughout|around)\s+(?:the\s+)?"
    + SEASON
    + NOT_SEASON_NOUN
    + NO_YEAR_AFTER,
    "season",
)
@_rule("season", r"(?:the\s+)?" + SEASON, "season", anchor=True, detect=False)
def _ground_season(match: re.Match[str], ctx: _Context) -> Days:
    season = _season_word(match)
    return _directed(ctx, lambda year: _season_range(season, year, ctx), _around_year(ctx), 1)


# "two summers ago", "the summer before last", "the summer of two years ago": a season counted
# back. Seasons already over count, as for "last summer": asked in July, "two summers ago" is
# the summer before last year's.


def _seasons_back(season: str, count: int, ctx: _Context) -> Days:
    """The ``count``-th most recent ``season`` that ended by the reference day."""
    over = [_season_range(season, year, ctx)
            for year in range(ctx.today.year - count - 1, ctx.today.year + 1)]
    over = [days for days in over if days[1] <= ctx.today]
    if len(over) < count:
        raise ValueError("no such season")
    return over[-count]


@_rule("season_ago", r"\b" + NUM + r"\s+" + SEASON_PLURAL + r"\s+(?:ago|back)\b", "season ago",
       anchor=True)
def _ground_season_ago(match: re.Match[str], ctx: _Context) -> Days:
    return _seasons_back(_season_word(match), _count(match.group("n")), ctx)


@_rule("season_before_last", r"\b(?:the\s+)?" + SEASON + r"\s+before\s+last\b", "season open",
       anchor=True)
def _ground_season_before_last(match: re.Match[str], ctx: _Context) -> Days:
    return _seasons_back(_season_word(match), 2, ctx)


@_rule("season_years_ago",
       r"\b(?:the\s+)?" + SEASON + r",?\s+(?:of\s+)?" + NUM + r"\s+years?\s+(?:ago|back)\b",
       "season ago", anchor=True)
def _ground_season_years_ago(match: re.Match[str], ctx: _Context) -> Days:
    return _season_range(_season_word(match), ctx.today.year - _count(match.group("n")), ctx)


# Holidays (dates from the calendars of ``calendars.py``).


def _holiday(match: re.Match[str]) -> str:
    return holiday_key(match.group("hol"))


def _holiday_occurrences(match: re.Match[str], years: range, ctx: _Context) -> list[Days]:
    """Each occurrence of the matched holiday (or of its weekend) in ``years``, in time order."""
    key = _holiday(match)
    occurrences = [days for year in years for days in holiday_occurrences(key, year, ctx.country)]
    if match.group("hweekend"):
        return [weekend_next_to(days) for days in occurrences]
    return occurrences


def _holiday_in(match: re.Match[str], year: int, ctx: _Context) -> Days:
    """The holiday's (first) occurrence in ``year``, cut to that year (Hanukkah 2024 runs from
    26 December to 2 January: "Hanukkah 2024" is 26-31 December, the named year is a promise);
    ``UndatedHoliday`` when the calendars have none."""
    occurrences = _holiday_occurrences(match, range(year, year + 1), ctx)
    if not occurrences:
        raise UndatedHoliday(_holiday(match), year)
    first, end = _year_range(year)
    return max(occurrences[0][0], first), min(occurrences[0][1], end)


@_rule(
    "holiday_year",
    r"\b" + HOLIDAY + YEAR_SEP + YEAR,
    "holiday year",
    accept=_holiday_ok,
    anchor=True,
)
def _ground_holiday_year(match: re.Match[str], ctx: _Context) -> Days:
    return _holiday_in(match, _year(match, ctx), ctx)


@_rule(
    "holiday_of_rel_year",
    r"\b" + HOLIDAY + r",?\s+(?:of\s+)?(?P<rel>last|this|next)\s+year\b",
    "holiday rel",
    accept=_holiday_ok,
    anchor=True,
)
def _ground_holiday_of_rel_year(match: re.Match[str], ctx: _Context) -> Days:
    offset = {"last": -1, "this": 0, "next": 1}[_normal_rel(match.group("rel"))]
    return _holiday_in(match, ctx.today.year + offset, ctx)


@_rule(
    "holiday_{rel}",
    r"\b(?:the\s+)?(?P<rel>last|this\s+past|this\s+coming|this|next|coming|upcoming|previous"
    r"|most\s+recent|latest|closest|nearest)\s+" + HOLIDAY,
    "holiday rel",
    accept=_holiday_ok,
    anchor=True,
    expands_to=("holiday_last", "holiday_this", "holiday_next", "holiday_nearest"),
)
def _ground_holiday_rel(match: re.Match[str], ctx: _Context) -> Days:
    """last: the latest one before the reference day; next: the first one after it; this: the
    one of the reference year; closest / nearest: the nearer of the two around the reference
    day (one containing it counts)."""
    today = ctx.today
    rel = _normal_rel(match.group("rel"))
    if rel == "this":
        return _holiday_in(match, today.year, ctx)
    occurrences = _holiday_occurrences(match, range(today.year - 2, today.year + 3), ctx)
    if rel == "nearest":
        return _choose(ctx, occurrences, "nearest")
    if rel == "last":
        before = [days for days in occurrences if days[0] < today]
        if before:
            return before[-1]
    else:
        after = [days for days in occurrences if days[0] > today]
        if after:
            return after[0]
    raise ValueError(f"no {rel} {_holiday(match)}")


# "two Christmases ago", "the Easter before last", "Christmas two years ago": a holiday counted
# back from the reference day, as "last Christmas" is the first one back.


def _holidays_back(match: re.Match[str], count: int, ctx: _Context) -> Days:
    """The ``count``-th most recent occurrence of the matched holiday that began before the
    reference day."""
    key, today = _holiday(match), ctx.today
    occurrences = [days for year in range(today.year - count - 1, today.year + 1)
                   for days in holiday_occurrences(key, year, ctx.country)]
    before = [days for days in occurrences if days[0] < today]
    if len(before) < count:
        raise ValueError(f"no {key} {count} back")
    return before[-count]


@_rule("holiday_ago", r"\b" + NUM + r"\s+" + HOLIDAY_PLURAL + r"\s+(?:ago|back)\b",
       "holiday ago", accept=_holiday_ok, anchor=True)
def _ground_holiday_ago(match: re.Match[str], ctx: _Context) -> Days:
    return _holidays_back(match, _count(match.group("n")), ctx)


@_rule("holiday_before_last", r"\b(?:the\s+)?" + HOLIDAY + r"\s+before\s+last\b",
       "holiday open", accept=_holiday_ok, anchor=True)
def _ground_holiday_before_last(match: re.Match[str], ctx: _Context) -> Days:
    return _holidays_back(match, 2, ctx)


@_rule("holiday_years_ago",
       r"\b" + HOLIDAY + r",?\s+(?:of\s+)?" + NUM + r"\s+years?\s+(?:ago|back)\b",
       "holiday ago", accept=_holiday_ok, anchor=True)
def _ground_holiday_years_ago(match: re.Match[str], ctx: _Context) -> Days:
    return _holiday_in(match, ctx.today.year - _count(match.group("n")), ctx)


@_rule(
    "holiday",
    r"(?:\b(?P<hprep>on|at|for|over|during|around|by|through|throughout)\s+)?\b" + HOLIDAY
    + NO_YEAR_AFTER,
    "holiday",
    accept=_holiday_in_text_ok,
)
@_rule("holiday", r"\b" + HOLIDAY, "holiday", accept=_holiday_ok, anchor=True, detect=False)
def _ground_holiday(match: re.Match[str], ctx: _Context) -> Days:
    if ctx.year is not None:  # the year the sentence names
        return _holiday_in(match, ctx.year, ctx)
    year = ctx.today.year
    return _choose(ctx, _holiday_occurrences(match, range(year - 1, year + 2), ctx))


# Quarters.


@_rule(
    "quarter_year",
    QUARTER + r"(?:\s+(?:of|in)\s+|,?\s+|\s*[-/]\s*|(?=['\u2019]))(?:the\s+year\s+)?" + YEAR,
    "quarter year",
    anchor=True,
)
@_rule(
    "quarter_year",
    r"(?<![\w$#./:-])(?P<year>(?:19|20)\d\d)(?:\s+|\s*-\s*)(?-i:Q)(?P<q>[1-4])\b",
    "quarter digit",
    anchor=True,
)
def _ground_quarter_year(match: re.Match[str], ctx: _Context) -> Days:
    return _quarter_range(_year(match, ctx), _quarter(match))


@_rule(
    "quarter_of_rel_year",
    QUARTER + r",?\s+(?:of\s+)?(?P<rel>last|this|next)\s+year\b",
    "quarter rel",
    anchor=True,
)
def _ground_quarter_of_rel_year(match: re.Match[str], ctx: _Context) -> Days:
    offset = {"last": -1, "this": 0, "next": 1}[_normal_rel(match.group("rel"))]
    return _quarter_range(ctx.today.year + offset, _quarter(match))


@_rule(
    "quarter_{rel}",
    r"(?<!\bthe\s)\b(?P<rel>this|last|next|previous)\s+quarter\b"
    r"(?!\s+of\b|\s+(?:mile|pound|inch|hour|century|note|past|to)\b)",
    "quarter rel",
    anchor=True,
    expands_to=("quarter_last", "quarter_this", "quarter_next"),
)
def _ground_quarter_rel(match: re.Match[str], ctx: _Context) -> Days:
    """The calendar quarter (Jan-Mar, Apr-Jun, Jul-Sep, Oct-Dec) containing the reference day,
    the one before or after it. "the last quarter" is not one: it is a game's or a cake's."""
    offset = {"this": 0, "last": -1, "next": 1}[_normal_rel(match.group("rel"))]
    return _period("quarter", _shift(ctx.today, "quarter", offset))


@_rule(
    "quarter",
    r"(?:\b(?:in|during|throughout|through|for|of|from|around)\s+(?-i:Q)(?P<q>[1-4])\b"
    r"|\bthe\s+(?P<qord>first|second|third|fourth|last|final|1st|2nd|3rd|4th)[-\s]+quarter"
    r"\s+of\s+the\s+year\b)" + NO_YEAR_AFTER,
    "quarter",
)
@_rule("quarter", r"(?-i:\bQ)(?P<q>[1-4])\b", "quarter", anchor=True, detect=False)
def _ground_quarter(match: re.Match[str], ctx: _Context) -> Days:
    """"in Q3", "the third quarter of the year": the quarter the direction picks. "the third
    quarter" alone is no cue ("trailing in the 4th quarter" is a game's)."""
    quarter = _quarter(match)
    return _directed(ctx, lambda year: _quarter_range(year, quarter), _around_year(ctx), 1)


