"""Deterministic temporal cue detection and grounding.

``detect_cues(text, reference, timeline)`` finds every temporal expression in ``text`` with
hand-written, named regular-expression rules and grounds each one to a half-open range of whole
days ``[start, end)`` (Unix seconds; day boundaries are midnights in ``reference.tzinfo``, UTC
when ``reference`` is naive). Detection depends on the text alone (and, for an ambiguous numeric
date, on the country's date order), so ``has_temporal_cue(text, country=c)`` is exactly
``bool(detect_cues(text, any_reference, country=c))``.

The modules, from the bottom up: ``vocabulary`` (words, pattern fragments, trigger-word
families), ``calendar_math`` (whole-day arithmetic, the grounding context, the occurrence the
direction picks), ``reading`` (what a match names, and the acceptors), ``registry`` (the rule
type and the ``_rule`` / ``_composite`` decorators), the rule tables ``rules_calendar``
(dates, months, years, seasons, holidays, quarters), ``rules_relative`` (weekdays, day words,
periods, vague cues) and ``rules_composite`` (cues built on anchors), and ``engine`` (finding,
overlaps, anchors, grounding, ``detect_cues``, ``question_range``).

The country (``country=``, ISO 3166 alpha-2, a bank setting; see ``calendars``) decides the
order of numeric dates ("5/8/2023": 8 May in the US, 5 August in GB; without a country an
ambiguous one is no cue), which calendar a holiday comes from ("Thanksgiving" in CA) and the
hemisphere of the seasons (AU: summer is December to February).

Examples below are grounded against Thursday 2023-05-25. Weeks run Monday to Sunday; a weekend
is Saturday and Sunday. "Most recent" means on or before the reference day.

Direction. The rules marked (d) below name a recurring time without saying which occurrence
("in June", "May 7", "on the 8th", "on Saturday", "in the summer", "at Christmas", "over the
weekend"). ``detect_cues(..., direction=...)`` picks it:

* ``past`` (the default; questions ask about what happened): the most recent occurrence, the
  one that started on or before the reference day (one containing it counts), as in the table;
* ``future`` (plans: "I'm signing up for a course in June"): the first occurrence not over by
  the reference day (one containing it counts): "in June" said 2024-05-10 -> June 2024, "on
  Saturday" said Wednesday 2024-05-08 -> Saturday 2024-05-11;
* ``nearest`` (a statement with no tense to go by): the occurrence containing the reference day,
  else the closer of the past and the future one, in days from the reference day to its nearest
  day; a tie goes to the past one.

A year named on its own in the same sentence ("in 2019", "in two thousand ten", "early 2019";
one year only, no sentence end between) dates the recurring cues of that sentence instead of
the direction, and the composites built only on them: the first occurrence that starts in
that year ("In 2019, what did we do at Christmas?" -> Christmas 2019; "What did we do the week
before Easter, in 2019?" -> the week before Easter 2019). A holiday the calendars cannot date
in it is that whole year; a day that year does not have ("on Feb 29" in 2021) has no range.

A part of a recurring anchor ("the last week of May", "the first Monday in June", "the last
Friday of the month", "the end of the summer") is directed as a whole: asked on 25 May (past),
"the last weekend of May" is 27-28 May of *last* year, since this year's has not begun.

Explicit cues ("last Friday", "next Friday", "2 days ago", full dates, "tomorrow") ignore the
direction. An anchor of a composite rule is grounded in the same direction ("before June" said
in May with ``future`` ends where the coming June starts), except the anchor of "since", which
is always ``past`` ("since June" said in May: since last June). ``month_part`` without a year keeps
its ``past`` rule (the part of the most recent such month, the current month counting); with
``future`` or ``nearest`` the part itself is directed ("early May" said on May 25 with
``future`` -> early May of next year).

Rules (``TimeCue.rule``):

=========================== ================================== ==================================
rule                        example                            range
=========================== ================================== ==================================
date_dmy / date_mdy         8 May 2023, May 8th, 2023          that day (a leading weekday is
                                                               absorbed: "Monday, May 8, 2023")
date_dmy (short)            14 Mar 23, 14-Mar-2023, 8 May '23  that day (two-digit year: see
                                                               decisions)
date_iso                    2023-05-08, 2023/05/08             that day
date_numeric                3/14/2023, 14.03.2023, 5/8/23      the only reading that is a date;
                                                               else the country's order (m/d in
                                                               the US, d/m in most others); no
                                                               country or CA: no cue. Dots and
                                                               dashes need a four-digit year
month_numeric               2023-03, 2023/03, 03/2023          the month ("2011-12", "2019/20":
                                                               no cue, a season of two years;
                                                               "3/2023" needs a preposition)
day_month / month_day (d)   7 May, 7th of May, May 7, the      most recent such day (a day in
                            first of May, May twenty-first     words before its month takes "of":
                                                               "my first March in Leeds": no cue)
date_span (d without year)  May 8-10, 8-10 May 2023, 8 to 10    those days ("and" only after
                            May, between 8 and 10 May 2023     "between": "May 8 and 10" is
                                                               two days)
day_of_month (d when bare)  on the 8th, the 8th of last month, most recent 8th (or that month's);
                            on the fifteenth; the week of the  bare only after "on", or
                            10th, the day after the 12th       after a period's "of",
                                                               "before", "after"
month_year                  May 2023, May, 2023, May of 2023   the month
month_of_rel_year           March of last year, May this year  the month in that year
month_last/this/next        last May / this May / next May     last: most recent May strictly
                                                               before the reference month; this:
                                                               May of the reference year; next:
                                                               the first May after the reference
                                                               month
month (d)                   in May, during March, of June      most recent such month (the current
                                                               month counts)
month_part (d without year) early May 2023, mid-May,           early/beginning/start 1-10,
                            late March, end of June            mid/middle 11-20, late/end 21-last,
                                                               first half 1-15, second half 16-last
year_part                   early 2023, the end of 2022        thirds: Jan-Apr, May-Aug, Sep-Dec;
                                                               halves: Jan-Jun, Jul-Dec
year_span                   2021-2023, 2021 to 2023            both years inclusive
decade                      the 1990s, the early 2000s,        the decade (early 0-3, mid 4-6,
                            the '90s, the 80s                  late 7-9)
year                        in 2022, 2022, in '98, in two      the year (see decisions; words
                            thousand nineteen, in twenty       and '98 need a preposition: "in",
                            twenty-two                         "since", "of", ...)
season_year                 summer 2022, the summer of 2022    meteorological seasons: spring
                                                               Mar-May, summer Jun-Aug, fall or
                                                               autumn Sep-Nov, winter Y = Dec Y to
                                                               Feb Y+1; six months later for a
                                                               southern-hemisphere country (AU:
                                                               summer Y = Dec Y to Feb Y+1)
season_of_rel_year          the summer of last year            that year's season
season_last/this/next       last summer, this winter           last: the most recent season that
                                                               ended before the reference day;
                                                               this: the reference year's (winter:
                                                               the one containing Jan/Feb);
                                                               next: the first one starting after
season (d)                  in the spring, over the summer     most recent season that started on
                                                               or before the reference day
season_ago                  two summers ago, three winters     the Nth most recent season that
                            back                               ended by the reference day (one
                                                               ago is last summer)
season_before_last          the summer before last             the second most recent such
season_years_ago            summer two years ago, the summer   that season in the year N years
                            of two years ago                   back
holiday_year                Easter 2022, Christmas of 2021,    that year's holiday; its dates
                            Black Friday 2021, Diwali '23,     come from ``calendars`` (the
                            Deepavali in 2019, Easter Sunday
                            two thousand ten
holiday_of_rel_year         Thanksgiving last year             ``holidays`` package, Easter by
holiday_{rel}               last Thanksgiving, this Christmas, ``dateutil``): fixed, movable,
                            the upcoming Eid, the most recent  lunar and religious ones; last /
                            Easter, the closest Christmas      most recent: the latest before
                                                               the reference day; next /
                                                               upcoming: the first after it;
                                                               this: the reference year's;
                                                               closest / nearest: the nearer.
                                                               A holiday in a named year (its
                                                               own, last / this / next year)
                                                               the calendars cannot date in it:
                                                               that whole year, never another;
                                                               one running past New Year is cut
                                                               at it (Hanukkah 2024: 26-31 Dec)
holiday_ago                 two Christmases ago, three Easters the Nth most recent occurrence
                            back                               begun before the reference day
holiday_before_last         the Christmas before last          the second most recent
holiday_years_ago           Christmas two years ago            that holiday in the year N back
holiday (d)                 at Easter, for Diwali, during      the occurrence the direction
                            Ramadan, we spent Christmas at     picks; without a preposition
                            ..., Memorial Day weekend, over    only when a verb, a preposition
                            the holidays (24 Dec - 1 Jan)      or punctuation follows
                                                               ("Christmas tree": no cue);
                                                               "X weekend": the weekend next to
                                                               the holiday, stretched to it
quarter_year                Q3 2022, the third quarter of      the quarter: Jan-Mar, Apr-Jun,
                            2022, Q2'22, 2022-Q3               Jul-Sep, Oct-Dec
quarter_of_rel_year         the third quarter of last year     that year's quarter
quarter_last/this/next      last quarter, this quarter         the calendar quarter before /
                                                               containing / after the reference
                                                               day; not after "the" ("in the
                                                               last quarter we scored": a game's)
quarter (d)                 in Q3, the second quarter of the   the occurrence the direction
                            year                               picks; "the third quarter" alone:
                                                               no cue
weekday_last                last Saturday                      most recent strictly before today
weekday_this                this Monday                        that day of the current week
weekday_next                next Friday                        first one strictly after today
weekday (d)                 Tuesday, on Tuesday                most recent (today if Tuesday)
weekday_ago                 two Saturdays ago, three Sundays   the Nth most recent such weekday
                            back                               before the reference day
weekday_before_last         the Monday before last             a week before last Monday
this_day_years_ago          a year ago today, on this day last the reference day N years back
                            year, the same day two years ago
this_time_years_ago         this time last year, around this   the 7 days around it
                            time two years ago
this_time_last_{unit}       this time last month, this time    a month back: the 7 days
                            last week                          around it; a week back: that
                                                               day and the days either side
{unit}_just_gone            the weekend just gone, the month   the last one
                            that has just passed
today                       today, tonight, this morning       today
yesterday / last_night      yesterday, last night              the day before the reference
day_before_yesterday        the day before yesterday           two days before
night_before_last           the night before last              two days before
tomorrow, day_after_...     tomorrow, the day after tomorrow   one / two days after
week/weekend/month/year_    this week, last month, next year,  the calendar period containing the
  this/last/next            last weekend, this past weekend    reference day, the one before or
                                                               after ("last weekend" = the weekend
                                                               of last week; "next weekend" = the
                                                               weekend of next week)
period_before_last          the week before last               two periods back
weekend (d)                 over/on/at the weekend             most recent Saturday-Sunday whose
                                                               Saturday is on or before today
                                                               ("plans for the weekend": no cue)
past_n_units / past_unit    the past 3 days, past week,        the N days/weeks/fortnights/
                            the last few months, last 3        months/quarters/years before the
                            weeks, the past 24 hours           reference day, today excluded
                                                               ("past week" = 7 days; "the
                                                               previous month" is month_last);
                                                               N hours: the days they touch
earlier_this / later_this   earlier this week, later this year [period start, end of today) /
                                                               [today, period end)
period_part                 the end of last month,             part of that period (as month_part
                            early next year, mid this week,    and year_part; weeks: Mon-Tue,
                            the beginning of the year (d),     Wed-Thu, Fri-Sun; quarters: a
                            the end of the month (d)           month each); with "the": the
                                                               occurrence the direction picks
                                                               ("the end of the year" asked in
                                                               May: Sep-Dec of last year)
n_units_ago                 two weeks ago, a few days ago,     N days: that day; N weeks: the
                            3 months ago, 2 hours ago,         Mon-Sun week containing today-7N;
                            two weekends ago, a fortnight      N weekends: that week's weekend;
                            ago, two quarters ago, three       N months / quarters / years: that
                            years back                         calendar month / quarter / year;
                                                               hours/minutes: that day
shift_before / shift_after  two days before 9 June 2023        the anchor's range moved N units
period_before/after/of      the week before 9 June 2023        day: the day before/after; week:
                            the weekend after May 8            the 7 days before/after; weekend:
                            the week of May 8                  the Sat-Sun before/after; month,
                            last weekend before May 8          year: the month/year before/after;
                                                               "of": the period containing it
weekday_before / _after     the Sunday before Oct 25, 2022     that weekday strictly before the
                                                               anchor / first one after it
stretch_before / _after     the days after May 8, the weeks    a plural unit without a count: a
                            before 9 June, the months          stretch of the next unit (days: 7
                            following May 8                    days, weeks: a month, months: 3)
window_before / _after      in the two weeks before Christmas, every day of N units next to the
                            the three days after May 8,        anchor (with "the"; without it,
                            during the fortnight after Easter  "two weeks before X" is shift_)
run_up                      in the run-up to Christmas, the    the month before the anchor (as
                            lead-up to 9 June                  "the weeks before" is)
near_before / near_after    right after May 8, just before     just / right / immediately /
                            Easter, shortly after Christmas,   directly: the day next to the
                            not long before May 8              anchor; shortly / soon / not long:
                                                               the 7 days next to it
nth_week / nth_weekend      the first weekend of June 2023,    nth week = days 7n-6..7n of the
                            the last week of May, last week    anchor; last week = its last 7
                            of August 2022, the first week of  days; nth weekend = the nth
                            the year                           Saturday in it and the next day;
                                                               cut to the anchor (the last
                                                               weekend of 2022: Sat 31 Dec)
nth_day                     the last day of October, the       that day of the anchor
                            first day of last month
nth_weekday                 the second Sunday of May 2023,     the nth such weekday in the
                            the first Friday of last month,    anchor, or its last one
                            the last Friday of the month
edge_days / edge_weeks      the first few days of June, the    the first / last N days or weeks
                            last two weeks of December 2022    of the anchor
part_of                     the end of the summer, late last   a part of any other anchor, by its
                            summer, the beginning of Q3 2022   length: as a month, a quarter or
                                                               a season (one month each), a
                                                               year, a week; else thirds of its
                                                               days
before / after / since /    before June 2023, after May 8,     half-open ranges clipped to the
  until                     since 2020, until last week        timeline: before X -> [timeline
                                                               start, X start); after X -> [X end,
                                                               timeline end); since X -> [X start,
                                                               timeline end), X whole up to the
                                                               reference day; until X -> [timeline
                                                               start, X end) (X included)
as_of / by                  as of December 2023,               the state up to X, as until X:
                            by July 10, 2022, by next week     [timeline start, X end); "by" needs
                                                               an anchor ("by the way", "by car",
                                                               "by Caroline": no cue) other than
                                                               a bare season or holiday
                                                               ("inspired by autumn": no cue;
                                                               "by Christmas": the holiday)
between                     between May and July 2023,         from the first anchor's start to
                            from 8 May to 12 May 2023          the second's end; a year on the
                                                               second anchor also dates the first
since_until                 since March until May 2023, ever   as between ("since" alone runs to
                            since 2 May up to 10 July          the reference day)
after_before                after 3 May and before 10 May      from X's end to Y's start
vague                       recently, lately, these days,      detected, range None
                            nowadays, (as) of late, a while    (``is_recent_cue`` tells the ones
                            ago, the other day, long ago, in   meaning "recently";
                            the past, years ago                ``recent_window(reference, days)``
                                                               is a window for them)
=========================== ================================== ==================================

Decisions:

* Overlapping matches: the longest match wins, then the earliest, then the rule listed first
  ("the week before 9 June 2023" is one cue).
* "May", "March" and "Mar" are months only with a year, or, when capitalised, with a day or a
  context word (in, during, of, from, early, last, the end of, ...): "May I ask", "it may rain",
  "March said hello" and lowercase "in may" are not cues. Other months need no capital.
* Seasons need a context (in/during/over/through/around + [the] season, this/last/next season,
  season + year); "fall asleep", "spring rolls", "hot spring" are not cues. "in the fall" is read
  as the season.
* A bare year is a 4-digit 19xx/20xx number not glued to other digits, "-", "/", ":", "." or a
  currency sign. Without a preposition before it, a year followed by a plural-looking noun is a
  count, not a year: "I have 2022 reasons" is not a cue; "In 2022 things changed" is. A number
  after a label word ("room 1984", "flight 2020", "page 1999") or before a unit or document word
  ("the 2000 invoice", "2000 km") is not a year, nor is one after 2050 without a preposition
  ("Cyberpunk 2077"; "in 2077" is). A title ending in a plausible year ("Blade Runner 2049") is
  still read as one.
* The year of a month, a date, a season, a holiday or a quarter may follow it after "of" or
  "in" and be written in words: "May of 2023", "Deepavali in 2019", "Q3 in 2022", "Easter
  Sunday two thousand ten", "the summer of twenty nineteen".
* "New Year" after a word naming another calendar ("Islamic New Year", "Chinese New Year's
  Day", "Persian New Year") is never 1 January: the calendars' own holiday where they have one,
  else no holiday ("Persian New Year 2018" is the year 2018).
* Two-digit years ("5/8/23", "'98", "14 Mar 23", "the '90s") are in the century that puts them
  within ten years after the reference year or 89 years before it: said in 2023, "'33" is 2033,
  "'34" is 1934 and "5/8/69" is 1969.
* A day a month does not have ("31 February", "29 Feb 2023") is no cue (``impossible_dates``
  names them); a month or year around it may still be one ("31 February 2026": February 2026).
* Clock times ("at 5 pm", "10:30") are not cues; neither are question words ("when", "how long",
  "what time") nor "how long ago" / "how many years ago". Weekday abbreviations ("Sat") are not
  read; dotted and dashed numeric dates need a four-digit year ("Python 3.10.12", "1.2.23" are
  no dates); a bare "the 8th" needs "on" and a following punctuation mark ("on the 3rd floor" is
  not a cue).
* Holiday names that are also other words are cues only when capitalised ("Eid", "Holi",
  "Spring Festival"); "Easter Island" is a place.
* An anchor (the X in "before X", "the week after X", "between X and Y") is the longest closed
  cue starting right after the keyword; "last weekend before X" reads as "the weekend before X".
* Vague counts: a/an/one = 1, a couple (of) = 2, a few / few = 3, several = 4, a dozen = 12.
* Timeline clipping: the timeline's start is floored and its end ceiled to whole days; without a
  timeline it is [reference day - 10 years, reference day + 1). When the anchor lies outside the
  timeline the open side falls back to one year past the anchor, so a range is never empty.
* A cue whose grounding overflows the calendar ("9999 years ago") is kept with range None.
"""

from __future__ import annotations

from .engine import (
    RELATIVE_RULES,
    detect_cues,
    has_temporal_cue,
    impossible_dates,
    is_recent_cue,
    is_relative,
    question_range,
    recent_window,
)
from .vocabulary import DIRECTIONS

__all__ = [
    "DIRECTIONS",
    "RELATIVE_RULES",
    "detect_cues",
    "has_temporal_cue",
    "impossible_dates",
    "is_recent_cue",
    "is_relative",
    "question_range",
    "recent_window",
]
