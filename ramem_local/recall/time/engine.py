"""The engine: find the cues of a text (rule gating, anchors, overlaps), ground them, and
the public functions (``detect_cues``, ``has_temporal_cue``, ``question_range``, ...).
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Sequence
from dataclasses import replace
from datetime import date, datetime, timedelta, timezone, tzinfo

from ...errors import UndatedHoliday
from ...types import TimeCue, TimeRange
from ..calendars import date_order, normal_country
from .calendar_math import _DAY, Days, _add_months, _Context, _year_range
from .reading import _day_fits_month
from .registry import _ANCHOR_RULES, _RULES, Anchor, _Found, _Rule
from .spelling import original_span, spelled_out
from .vocabulary import (
    _DIGIT,
    _FLAGS,
    _TOKEN_FAMILIES,
    _WORD,
    _YEAR_IN,
    DAY_OF_MONTH,
    DIRECTIONS,
    MON,
    YEAR,
    YEAR_SEP,
)

# The rule modules register their rules when imported, in this order, which is the order of
# ``_RULES``: on a tie between overlapping matches the rule registered first wins.
# isort: split
from . import rules_calendar  # noqa: F401

# isort: split
from . import rules_relative  # noqa: F401

# isort: split
from . import rules_composite  # noqa: F401

# "31 February", "April 31st 2023", "29 Feb 2023": a day and a month that name no day. The date
# rules refuse them (a month alone may still be read); ``impossible_dates`` says which.
_NO_SUCH_DAY = (
    re.compile(DAY_OF_MONTH + r"\s+(?:of\s+)?" + MON + r"(?:" + YEAR_SEP + YEAR + r")?", _FLAGS),
    re.compile(MON + r"\s+(?:the\s+)?" + DAY_OF_MONTH + r"(?:" + YEAR_SEP + YEAR + r")?", _FLAGS),
)


def impossible_dates(text: str) -> list[str]:
    """The day-and-month phrases of ``text`` that name no day ("31 February", "April 31st"),
    in text order: no cue reads them, and a user should be told rather than left with
    whatever else of the question was read."""
    found = {match.start(): match.group(0) for pattern in _NO_SUCH_DAY
             for match in pattern.finditer(text) if not _day_fits_month(match)}
    return [found[start] for start in sorted(found)]


def _anchors_at(text: str, position: int, rules: list[_Rule], order: str | None) -> list[Anchor]:
    """Anchors starting at ``position``, longest first (the first-listed rule on a tie)."""
    anchors = []
    for rule in rules:
        match = rule.pattern.match(text, position)
        if match is not None and match.end() > position and rule.accepts(match, order):
            anchors.append((rule, match))
    anchors.sort(key=lambda anchor: anchor[1].start() - anchor[1].end())
    return anchors


def _takes(composite: _Rule, anchor: _Rule) -> bool:
    """Whether an anchor rule can complete a composite rule."""
    if anchor.name in composite.refuses:
        return False
    return not anchor.anchor_for or composite.name in anchor.anchor_for


def _complete(
    composite: _Rule, match: re.Match[str], rules: list[_Rule], order: str | None
) -> tuple[Anchor, ...] | None:
    """The anchors (of ``rules``, those the composite takes) that complete a composite rule's
    keyword match, or None."""
    text = match.string
    firsts = _anchors_at(text, match.end(), rules, order)
    if composite.joiner is None:
        return (firsts[0],) if firsts else None
    for first in firsts:
        joint = composite.joiner.match(text, first[1].end())
        if joint is not None:
            seconds = _anchors_at(text, joint.end(), rules, order)
            if seconds:
                return first, seconds[0]
    return None


def _resolve_anchor(text: str, order: str | None) -> Anchor | None:
    for rule in _ANCHOR_RULES:
        match = rule.pattern.fullmatch(text)
        if match is not None and rule.accepts(match, order):
            return rule, match
    return None


def _ground_anchor(anchor: Anchor | None, ctx: _Context) -> Days | None:
    if anchor is None:
        return None
    rule, match = anchor
    if rule.ground is None:
        return None
    return rule.ground(match, ctx)


# Matching.


def _families(text: str) -> set[str]:
    families = {"digit"} if _DIGIT.search(text) else set()
    for word in _WORD.findall(text):
        families.update(_TOKEN_FAMILIES.get(word.lower(), ()))
    if families & {"digit", "yearword"}:
        families.add("year")  # a YEAR: digits or words
    return families


def _find(text: str, *, gated: bool = True, order: str | None = None) -> list[_Found]:
    """Cues before grounding: the longest match first, then the earliest, then rule order.
    ``order`` is the date order of the bank's country (numeric dates; see ``calendars``)."""
    families = _families(text) if gated else None
    if families is not None and not families:
        return []
    anchor_rules = [r for r in _ANCHOR_RULES if families is None or r.needs <= families]
    found = []
    for priority, rule in enumerate(_RULES):
        if families is not None and not rule.needs <= families:
            continue
        taken: list[_Rule] | None = None  # the anchors this composite takes, once per text
        for match in rule.pattern.finditer(text):
            if rule.combine is None:
                if rule.accepts(match, order):
                    found.append(_Found(match.start(), match.end(), priority, rule, match))
                continue
            if taken is None:
                taken = [anchor for anchor in anchor_rules if _takes(rule, anchor)]
            anchors = _complete(rule, match, taken, order)
            if anchors is not None:
                end = anchors[-1][1].end()
                found.append(_Found(match.start(), end, priority, rule, match, anchors))
    return _without_overlaps(found)


def _without_overlaps(found: list[_Found]) -> list[_Found]:
    """Keep the longest, then earliest, then first-listed match of every overlapping group."""
    found.sort(key=lambda f: (f.start - f.end, f.start, f.priority))
    starts: list[int] = []
    chosen: list[_Found] = []
    for candidate in found:
        slot = bisect.bisect_right(starts, candidate.start)
        if slot > 0 and chosen[slot - 1].end > candidate.start:
            continue
        if slot < len(chosen) and chosen[slot].start < candidate.end:
            continue
        starts.insert(slot, candidate.start)
        chosen.insert(slot, candidate)
    return chosen


def _context(
    reference: datetime, timeline: TimeRange | None, direction: str, country: str | None
) -> _Context:
    if direction not in DIRECTIONS:
        raise ValueError(f"direction must be one of {DIRECTIONS}, not {direction!r}")
    tz = reference.tzinfo or timezone.utc
    now = reference if reference.tzinfo else reference.replace(tzinfo=tz)
    today = now.date()
    if timeline is None:
        return _Context(now, today, tz, _add_months(today, -120), today + _DAY, direction,
                        country)
    lo = datetime.fromtimestamp(timeline.start, tz)
    hi = datetime.fromtimestamp(timeline.end, tz)
    hi_day = hi.date() if hi.time() == datetime.min.time() else hi.date() + _DAY
    return _Context(now, today, tz, lo.date(), hi_day, direction, country)


def _timestamp(day: date, tz: tzinfo) -> int:
    return int(datetime(day.year, day.month, day.day, tzinfo=tz).timestamp())


def _ground_anchors(anchors: tuple[Anchor, ...], ctx: _Context) -> list[Days] | None:
    """Ground each anchor; a year on the second anchor also dates a year-less first one."""
    resolved = list(anchors)
    if len(anchors) == 2:
        first, second = (match.group(0) for _, match in anchors)
        year = _YEAR_IN.search(second)
        if year is not None and _YEAR_IN.search(first) is None:
            order = date_order(ctx.country)
            resolved[0] = _resolve_anchor(f"{first} {year.group(0)}", order) or resolved[0]
    grounded = [_ground_anchor(anchor, ctx) for anchor in resolved]
    if any(days is None for days in grounded):
        return None
    return [days for days in grounded if days is not None]


# Composites that take a part of their anchor ("the last week of May"), and the anchors that
# recur ("May" without a year): for these the direction picks the occurrence of the part.
_INSIDE_ANCHOR = frozenset({"nth_{unit}", "nth_weekday", "edge_{unit}s", "part_of"})
_RECURRING = frozenset({"month", "season", "holiday", "quarter", "weekday", "day_month",
                        "month_day", "date_span", "day_of_month", "month_part", "the_period"})


def _ground(found: _Found, ctx: _Context) -> Days | None:
    rule = found.rule
    if rule.combine is None:
        if rule.ground is None:
            return None
        try:
            return rule.ground(found.match, ctx)
        except UndatedHoliday as undated:
            return _year_range(undated.year)  # a named year is a promise, even undated
    if rule.name_for(found.match) == "since":
        ctx = replace(ctx, direction="past")  # "since X": X has begun, whatever the tense
    anchors = _ground_anchors(found.anchors, ctx)
    if anchors is None:
        return None
    days = rule.combine(found.match, anchors, ctx)
    if (
        days is not None
        and ctx.year is None
        and rule.name in _INSIDE_ANCHOR
        and found.anchors[0][0].name in _RECURRING
    ):
        return _part_in_direction(found, days, anchors[0], ctx)
    return days


def _part_in_direction(found: _Found, days: Days, anchor: Days, ctx: _Context) -> Days:
    """The part of a recurring anchor in the occurrence the direction asks for: asked on 10 May
    (past), "the last week of May" is in May of last year, since this May's is still to come;
    said on 25 May of a plan (future), "the first weekend of May" is next year's."""
    if ctx.direction == "past" and days[0] > ctx.today:
        moved = replace(ctx, today=anchor[0] - _DAY)
    elif ctx.direction == "future" and days[1] <= ctx.today:
        moved = replace(ctx, today=anchor[1])
    else:
        return days
    anchors = _ground_anchors(found.anchors, moved)
    combine = found.rule.combine
    again = None if anchors is None or combine is None else combine(found.match, anchors, ctx)
    return days if again is None else again


# Year-less recurring cues (d) a year named in their sentence dates ("In 2019, what did we do at
# Christmas?"), and the anchors that make a composite one ("the week before Christmas").
_DATABLE = frozenset({"month", "season", "holiday", "quarter", "day_month", "month_day",
                      "date_span", "month_part"})
# Cues that name a year on their own ("in 2019", "two thousand ten", "early 2019").
_YEAR_NAMING = frozenset({"year", "year_part"})
_SENTENCE_END = re.compile(r"[.!?;](?:\s|$)|\n")


def _named_years(found: list[_Found], ctx: _Context) -> list[tuple[int, int, int]]:
    """(start, end, year) of each cue that names a year on its own."""
    named = []
    for item in found:
        if item.rule.name not in _YEAR_NAMING or item.rule.ground is None:
            continue
        try:
            days = item.rule.ground(item.match, ctx)
        except (ValueError, OverflowError):
            continue
        if days is not None:
            named.append((item.start, item.end, days[0].year))
    return named


def _sentence_year(found: _Found, text: str, named: list[tuple[int, int, int]]) -> int | None:
    """The year that dates a year-less recurring cue: the only year named on its own in the
    cue's sentence (no sentence end between the two); None when the cue is not recurring,
    names a year itself, or the sentence names none or several."""
    rule = found.rule
    recurring = (
        rule.name in _DATABLE
        if rule.combine is None
        else all(anchor.name in _DATABLE for anchor, _ in found.anchors)
    )
    if not recurring or _YEAR_IN.search(text[found.start : found.end]):
        return None
    years = {
        year
        for start, end, year in named
        if not _SENTENCE_END.search(text[min(end, found.end) : max(start, found.start)])
    }
    return years.pop() if len(years) == 1 else None


def _to_cue(found: _Found, text: str, ctx: _Context) -> TimeCue:
    rule, match = found.rule, found.match
    try:
        days = _ground(found, ctx)
        time_range = (
            None
            if days is None
            else TimeRange(_timestamp(days[0], ctx.tz), _timestamp(days[1], ctx.tz))
        )
    except (ValueError, OverflowError):
        time_range = None
    return TimeCue(
        text=text[found.start : found.end],
        rule=rule.name_for(match),
        span=(found.start, found.end),
        range=time_range,
    )


def detect_cues(
    text: str,
    reference: datetime,
    timeline: TimeRange | None = None,
    *,
    direction: str = "past",
    country: str | None = None,
) -> list[TimeCue]:
    """All temporal expressions in ``text``, in text order, grounded relative to ``reference``.

    ``reference`` should be timezone-aware (naive is read as UTC); day boundaries are midnights
    in its timezone. Vague cues ("recently") come back with ``range=None``. ``timeline`` (the
    bank's first session start .. last session end) bounds the open side of "before/after/
    since/until/by/as of" ranges; without it the bounds are reference - 10 years .. the
    reference day. ``direction`` (one of ``DIRECTIONS``) says which occurrence the recurring
    cues mean ("in June", "on Saturday", "at Christmas", ...; see the package docstring):
    "past" (questions), "future" (plans) or "nearest"; a year named on its own in the same
    sentence ("In 2019, what did we do at Christmas?") picks it instead. Detection depends on
    neither, so the cues of one text line up one to one whatever the direction. ``country``
    (ISO 3166 alpha-2, the bank's setting) decides the order of an ambiguous numeric date
    ("5/8/2023": 8 May in the US, 5 August in GB; without a country it is no cue), the holiday
    calendar ("Thanksgiving" in CA) and the hemisphere of the seasons (see ``calendars``).
    """
    country = None if country is None else normal_country(country)
    ctx = _context(reference, timeline, direction, country)
    written = text
    text, where = spelled_out(written, ctx_reference(reference), country)
    found = _find(text, order=date_order(country))
    if not found:
        return []
    named = _named_years(found, ctx)
    cues = []
    for item in found:
        year = _sentence_year(item, text, named) if named else None
        cue = _to_cue(item, text, ctx if year is None else replace(ctx, year=year))
        if text is not written:  # the question's own words and where they stand
            span = original_span(cue.span, where)
            cue = replace(cue, span=span, text=written[span[0]:span[1]])
        cues.append(cue)
    return cues


def ctx_reference(reference: datetime) -> datetime:
    """The reference time with a timezone (naive is read as UTC)."""
    return reference if reference.tzinfo is not None else reference.replace(tzinfo=timezone.utc)


def has_temporal_cue(text: str, *, country: str | None = None) -> bool:
    """Whether ``text`` holds any temporal cue (grounded or vague); no grounding is done."""
    country = None if country is None else normal_country(country)
    spelled, _ = spelled_out(text, datetime.now(timezone.utc), country)
    return bool(_find(spelled, order=date_order(country)))


# Rules grounded relative to the reference time ("last Friday", "two weeks ago", "yesterday").
RELATIVE_RULES = frozenset({
    "today", "yesterday", "last_night", "day_before_yesterday", "night_before_last",
    "tomorrow", "day_after_tomorrow", "past_n_units", "past_unit", "earlier_this",
    "later_this", "n_units_ago", "period_before_last", "weekday", "weekend",
    "month_of_rel_year", "season_of_rel_year", "holiday_of_rel_year", "quarter_of_rel_year",
    "weekday_ago", "weekday_before_last", "holiday_nearest", "this_day_years_ago",
    "this_time_years_ago",
})


_RECENT_CUE = re.compile(
    r"recently|lately|these\s+days|nowadays|(?:as\s+)?of\s+late"
    r"|in\s+recent\s+(?:days|weeks|months)",
    _FLAGS,
)


def is_recent_cue(cue: TimeCue) -> bool:
    """Whether ``cue`` is a vague cue meaning "recently": recently, lately, these days,
    nowadays, (as) of late, in recent days/weeks/months.

    These stay ungrounded (``range=None``); a caller that wants a window reads them with
    ``recent_window``. "in recent years", "the other day", "not long ago", "a while ago" are
    vague but not "recent" in this sense (their scale is not a month).
    """
    return cue.rule == "vague" and _RECENT_CUE.fullmatch(cue.text) is not None


def recent_window(reference: datetime, days: int = 30) -> TimeRange:
    """The ``days`` whole days before the reference day, plus the reference day.

    Day boundaries are midnights in ``reference``'s timezone (naive is read as UTC), as in
    ``detect_cues``: ``recent_window(Thursday 2023-05-25 14:00)`` is [2023-04-25, 2023-05-26).
    """
    if days < 0:
        raise ValueError(f"days must be >= 0, not {days}")
    tz = reference.tzinfo or timezone.utc
    today = (reference if reference.tzinfo else reference.replace(tzinfo=tz)).date()
    return TimeRange(_timestamp(today - timedelta(days=days), tz), _timestamp(today + _DAY, tz))


def is_relative(cue: TimeCue) -> bool:
    return cue.rule in RELATIVE_RULES or cue.rule.endswith(("_last", "_this", "_next"))


def question_range(cues: Sequence[TimeCue]) -> TimeRange | None:
    """The range a question is about: the narrowest grounded cue (the first one on a tie).

    None when no cue is grounded (no cue, or only vague ones). The narrowest wins because a
    question naming both a wide and a narrow time ("in 2023, the week before 9 June") asks
    about the narrow one. A cue anchored on a calendar date beats one relative to the
    reference time: in "what did she finish last Friday on 23 January 2022", "last Friday" is
    relative to 23 January, not to today, so the date is the better evidence of the episode.
    """
    grounded = [(cue, cue.range) for cue in cues if cue.range is not None]
    anchored = [(cue, range_) for cue, range_ in grounded if not is_relative(cue)]
    candidates = anchored or grounded
    if not candidates:
        return None
    return min((range_ for _, range_ in candidates), key=lambda r: r.end - r.start)
