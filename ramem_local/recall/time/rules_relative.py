"""Rules for cues relative to the reference time: weekdays, day words, calendar periods
("last Friday", "yesterday", "next month", "the past 3 days", "two weeks ago"), and
the vague cues ("recently"), which are detected but not grounded.
"""

from __future__ import annotations

import re
from datetime import timedelta

from .calendar_math import (
    _DAY,
    Days,
    _add_months,
    _Context,
    _directed,
    _part_of,
    _period,
    _shift,
    _single_day,
    _week_start,
)
from .reading import _count, _normal_part, _normal_rel, _unit
from .registry import Grounder, _rule
from .vocabulary import _PREVIOUS_WORD, _UNITS, _WEEKDAYS, NUM, PART, REL_OR_PAST, WD

# Weekdays and day words.


@_rule(
    "weekday_{rel}",
    r"\b" + REL_OR_PAST + r"\s+" + WD,
    "weekday rel",
    anchor=True,
    expands_to=("weekday_last", "weekday_this", "weekday_next"),
)
def _ground_weekday_rel(match: re.Match[str], ctx: _Context) -> Days:
    weekday, today = _WEEKDAYS.index(match.group("wd").lower()), ctx.today
    rel = _normal_rel(match.group("rel"))
    if rel == "this":
        return _single_day(_week_start(today) + timedelta(days=weekday))
    if rel == "last":
        return _single_day(today - timedelta(days=(today.weekday() - weekday - 1) % 7 + 1))
    return _single_day(today + timedelta(days=(weekday - today.weekday() - 1) % 7 + 1))


@_rule("weekday_before_last", r"\b(?:the\s+)?" + WD + r"\s+before\s+last\b", "weekday open",
       anchor=True)
def _ground_weekday_before_last(match: re.Match[str], ctx: _Context) -> Days:
    """"the Monday before last": the Monday a week before last Monday."""
    weekday, today = _WEEKDAYS.index(match.group("wd").lower()), ctx.today
    return _single_day(today - timedelta(days=(today.weekday() - weekday - 1) % 7 + 8))


# "a Sunday roast", "every Sunday": no particular day.
@_rule("weekday", r"(?<!\ba\s)(?<!\bevery\s)(?<!\beach\s)\b" + WD, "weekday", anchor=True)
def _ground_weekday(match: re.Match[str], ctx: _Context) -> Days:
    weekday, monday = _WEEKDAYS.index(match.group("wd").lower()), _week_start(ctx.today)
    return _directed(
        ctx, lambda week: _single_day(monday + timedelta(days=7 * week + weekday)), 0, 1
    )


@_rule(
    "weekday_ago",
    r"\b" + NUM + r"\s+(?P<wd>monday|tuesday|wednesday|thursday|friday|saturday|sunday)s?"
    r"\s+(?:ago|back)\b",
    "weekday",
    anchor=True,
)
def _ground_weekday_ago(match: re.Match[str], ctx: _Context) -> Days:
    """"two Saturdays ago": the second most recent Saturday before the reference day ("one
    Saturday ago" is last Saturday)."""
    weekday, today = _WEEKDAYS.index(match.group("wd").lower()), ctx.today
    last = today - timedelta(days=(today.weekday() - weekday - 1) % 7 + 1)
    return _single_day(last - timedelta(days=7 * (_count(match.group("n")) - 1)))


def _day_offset(offset: int) -> Grounder:
    def ground(match: re.Match[str], ctx: _Context) -> Days:
        return _single_day(ctx.today + timedelta(days=offset))

    return ground


def _day_word(name: str, pattern: str, offset: int) -> None:
    _rule(name, r"\b" + pattern + r"\b", "dayword", anchor=True)(_day_offset(offset))


def _years_back(match: re.Match[str]) -> int:
    """N of "N years ago" in the match; 1 for "last year"."""
    return _count(match.group("n")) if match.groupdict().get("n") else 1


@_rule("this_day_years_ago", r"\b" + NUM + r"\s+years?\s+ago\s+today\b", "ago dayword",
       anchor=True)
@_rule(
    "this_day_years_ago",
    r"\b(?:on\s+)?(?:this|the\s+same)\s+(?:day|date)\s+(?:last\s+year|" + NUM
    + r"\s+years?\s+(?:ago|back))\b",
    "unit",
    anchor=True,
)
def _ground_this_day_years_ago(match: re.Match[str], ctx: _Context) -> Days:
    """"a year ago today", "on this day last year", "the same day two years ago": the
    reference day, that many years back (28 February for a 29th)."""
    return _single_day(_add_months(ctx.today, -12 * _years_back(match)))


@_rule(
    "this_time_years_ago",
    r"\b(?:around\s+|about\s+)?this\s+time\s+(?:last\s+year|" + NUM
    + r"\s+years?\s+(?:ago|back))\b",
    "unit",
    anchor=True,
)
def _ground_this_time_years_ago(match: re.Match[str], ctx: _Context) -> Days:
    """"this time last year": the week around the reference day, that many years back."""
    day = _add_months(ctx.today, -12 * _years_back(match))
    return day - 3 * _DAY, day + 4 * _DAY


@_rule(
    "this_time_last_{unit}",
    r"\b(?:around\s+|about\s+)?this\s+time\s+last\s+(?P<unit>week|month)\b",
    "unit rel",
    anchor=True,
    expands_to=("this_time_last_week", "this_time_last_month"),
)
def _ground_this_time_last_period(match: re.Match[str], ctx: _Context) -> Days:
    """"this time last month": the week around the reference day a month back; "this time
    last week": that day and the days either side of it."""
    if _unit(match) == "week":
        day = ctx.today - 7 * _DAY
        return day - _DAY, day + 2 * _DAY
    day = _add_months(ctx.today, -1)
    return day - 3 * _DAY, day + 4 * _DAY


_day_word("day_before_yesterday", r"(?:the\s+)?day\s+before\s+yesterday", -2)
_day_word("night_before_last", r"the\s+night\s+before\s+last", -2)
_day_word("day_after_tomorrow", r"(?:the\s+)?day\s+after\s+tomorrow", 2)
_day_word(
    "today", r"(?:today|tonight|this\s+(?:morning|afternoon|evening)|(?:earlier|later)\s+today)", 0
)
_day_word("yesterday", "yesterday", -1)
# "our last night in Rome", "the last night of the trip": a stay's, not yesterday's
_day_word("last_night", r"(?<!\bmy\s)(?<!\bour\s)(?<!\bthe\s)(?<!\bhis\s)(?<!\bher\s)"
          r"(?<!\btheir\s)(?<!\byour\s)last\s+night", -1)
_day_word("tomorrow", "tomorrow", 1)


# Calendar periods relative to the reference.

_PERIOD_UNIT = r"(?P<unit>week|weekend|month|year)\b"


@_rule(
    "{unit}_{rel}",
    r"\b(?P<rel>this\s+past|this|last|next|previous)\s+" + _PERIOD_UNIT,
    "unit rel",
    anchor=True,
    expands_to=(
        "week_last", "week_this", "week_next", "weekend_last", "weekend_this", "weekend_next",
        "month_last", "month_this", "month_next", "year_last", "year_this", "year_next",
    ),  # fmt: skip
)
def _ground_period_rel(match: re.Match[str], ctx: _Context) -> Days:
    offset = {"this": 0, "last": -1, "next": 1}[_normal_rel(match.group("rel"))]
    unit = _unit(match)
    return _period(unit, _shift(ctx.today, unit, offset))


@_rule(
    "{unit}_just_gone",
    r"\bthe\s+(?P<unit>week|weekend|month|year)\s+(?:just\s+(?:gone|passed|past|ended)|"
    r"that\s+(?:has\s+)?just\s+(?:gone|passed|ended))\b",
    "unit",
    anchor=True,
    expands_to=("week_just_gone", "weekend_just_gone", "month_just_gone", "year_just_gone"),
)
def _ground_period_just_gone(match: re.Match[str], ctx: _Context) -> Days:
    """"the weekend just gone", "the month that has just passed": the last one."""
    unit = _unit(match)
    return _period(unit, _shift(ctx.today, unit, -1))


@_rule(
    "the_period",
    r"\bthe\s+(?P<unit>week|month|quarter|year)\b",
    "unit",
    anchor=True,
    anchor_for="nth_{unit} nth_weekday edge_{unit}s",
    detect=False,
)
def _ground_the_period(match: re.Match[str], ctx: _Context) -> Days:
    """"the month" in "the last Friday of the month": the current one, or, when the part is
    still to come (past direction) or over (future), the one before or after."""
    return _period(_unit(match), ctx.today)


@_rule(
    "period_before_last",
    r"\b(?:the\s+)?" + _PERIOD_UNIT + r"\s+before\s+last\b",
    "unit open",
    anchor=True,
)
def _ground_period_before_last(match: re.Match[str], ctx: _Context) -> Days:
    unit = _unit(match)
    return _period(unit, _shift(ctx.today, unit, -2))


@_rule("weekend", r"\b(?:over|during|on|at)\s+the\s+weekend\b", "unit")
def _ground_the_weekend(match: re.Match[str], ctx: _Context) -> Days:
    first_saturday = _week_start(ctx.today) + timedelta(days=5)

    def weekend(week: int) -> Days:
        saturday = first_saturday + timedelta(days=7 * week)
        return saturday, saturday + timedelta(days=2)

    return _directed(ctx, weekend, 0, 1)


# "my last 3 years at school" is not the last 3 years.
_OWNERS = frozenset("my our your his her their its".split())


def _past_n_ok(match: re.Match[str]) -> bool:
    previous = _PREVIOUS_WORD.search(match.string, max(0, match.start() - 40), match.start())
    return previous is None or previous.group(1).lower() not in _OWNERS


@_rule(
    "past_n_units",
    r"\b(?:the\s+(?:past|last|previous)|past|last|previous)\s+" + NUM
    + rf"\s+(?P<unit>{_UNITS}|hour)s?\b",
    "unit rel",
    accept=_past_n_ok,
)
def _ground_past_n_units(match: re.Match[str], ctx: _Context) -> Days:
    """"the past 3 days", "last 3 weeks", "the previous 2 months": the N units before the
    reference day, the reference day excluded; "the past 24 hours": the days they touch,
    the reference day included."""
    count, unit = _count(match.group("n")), _unit(match)
    if unit == "hour":
        return (ctx.now - timedelta(hours=count)).date(), ctx.today + _DAY
    return _shift(ctx.today, unit, -count), ctx.today


@_rule(
    "past_unit",
    r"\b(?:the\s+(?:past|last)|past)\s+(?P<unit>day|week|fortnight|month|year"
    r"|(?<=past\s)quarter)\b(?!\s+of\b)",
    "unit rel",
)
def _ground_past_unit(match: re.Match[str], ctx: _Context) -> Days:
    """"the past week": the 7 days before the reference day ("the previous week" is the
    calendar week before, as "last week")."""
    return _shift(ctx.today, _unit(match), -1), ctx.today


@_rule(
    "{rel}_this",
    r"\b(?P<rel>earlier|later)\s+this\s+(?P<unit>week|month|quarter|year)\b",
    "part unit",
    expands_to=("earlier_this", "later_this"),
)
def _ground_earlier_later(match: re.Match[str], ctx: _Context) -> Days:
    start, end = _period(_unit(match), ctx.today)
    if match.group("rel").lower() == "earlier":
        return start, ctx.today + _DAY
    return ctx.today, end


@_rule(
    "period_part",
    r"\b" + PART + r"(?P<rel>this|last|next|the|previous)\s+(?P<unit>week|month|quarter|year)\b",
    "part unit",
    anchor=True,
)
def _ground_period_part(match: re.Match[str], ctx: _Context) -> Days:
    """A part of this / last / next week, month, quarter or year; with "the" ("the end of the
    month", "the beginning of the year") a recurring part, picked by the direction: asked on
    10 May, "the end of the month" is late April (past), late May (future)."""
    unit, part = _unit(match), _normal_part(match)
    if match.group("rel").lower() == "the":
        return _directed(
            ctx, lambda k: _part_of(_period(unit, _shift(ctx.today, unit, k)), unit, part), 0, 1
        )
    offset = {"this": 0, "last": -1, "next": 1}[_normal_rel(match.group("rel"))]
    return _part_of(_period(unit, _shift(ctx.today, unit, offset)), unit, part)


@_rule(
    "n_units_ago",
    r"\b" + NUM + r"\s+(?P<unit>minute|hour|day|night|weekend|week|fortnight|month|quarter|year"
    r"|decade)s?\s+(?:ago|back)\b",
    "ago",
    anchor=True,
)
def _ground_n_units_ago(match: re.Match[str], ctx: _Context) -> Days:
    count, unit = _count(match.group("n")), _unit(match)
    if unit in ("minute", "hour"):
        moment = ctx.now - timedelta(**{unit + "s": count})
        return _single_day(moment.date())
    day = _shift(ctx.today, unit, -count)
    if unit in ("day", "night"):
        return _single_day(day)
    if unit in ("week", "weekend", "fortnight"):
        return _period(unit if unit == "weekend" else "week", day)
    return _period(unit if unit in ("month", "quarter") else "year", day)


# Vague cues.


@_rule(
    "vague",
    r"\b(?:recently|lately|these\s+days|nowadays|a\s+(?:little\s+)?while\s+(?:ago|back)"
    r"|the\s+other\s+day|not\s+(?:so\s+|too\s+)?long\s+ago|a\s+long\s+time\s+ago"
    r"|(?<!how\s)long\s+ago|some\s+time\s+ago|in\s+recent\s+(?:days|weeks|months|years)"
    r"|back\s+then|back\s+in\s+the\s+day"
    r"|as\s+of\s+late|of\s+late(?=\s*(?:[.,;:!?)]|$))"
    r"|in\s+the\s+past(?!\s+(?:\w+\s+){0,2}(?:day|week|month|year)s?\b))\b",
    "vague",
    vague=True,
)
@_rule(
    "vague",
    r"(?<!how\s)(?<!many\s)\b(?:(?:many|some)\s+)?(?:days|weeks|months|years|decades|ages)"
    r"\s+ago\b",
    "ago",
    vague=True,
)
def _ground_vague(match: re.Match[str], ctx: _Context) -> Days | None:
    return None


