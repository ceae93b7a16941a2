"""Deterministic temporal cue detection and grounding.

``detect_cues(text, reference, timeline)`` finds every temporal expression in ``text`` with
hand-written, named regular-expression rules and grounds each one to a half-open range of whole
days ``[start, end)`` (Unix seconds; day boundaries are midnights in ``reference.tzinfo``, UTC
when ``reference`` is naive). Detection depends on the text alone (and, for an ambiguous numeric
date, on the country's date order), so ``has_temporal_cue(text, country=c)`` is exactly
``bool(detect_cues(text, any_reference, country=c))``.

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
day_month / month_day (d)   7 May, 7th of May, May 7           most recent such day
date_span (d without year)  May 8-10, 8-10 May 2023            those days
day_of_month (d when bare)  on the 8th, the 8th of last month  most recent 8th (or that month's)
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
holiday (d)                 at Easter, for Diwali, during      the occurrence the direction
                            Ramadan, we spent Christmas at     picks; without a preposition
                            ..., Memorial Day weekend          only when a verb, a preposition
                                                               or punctuation follows
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
today                       today, tonight, this morning       today
yesterday / last_night      yesterday, last night              the day before the reference
day_before_yesterday        the day before yesterday           two days before
tomorrow, day_after_...     tomorrow, the day after tomorrow   one / two days after
week/weekend/month/year_    this week, last month, next year,  the calendar period containing the
  this/last/next            last weekend                       reference day, the one before or
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
                                                               timeline end); until X -> [timeline
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

import bisect
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from datetime import date, datetime, timedelta, timezone, tzinfo

from ..types import TimeCue, TimeRange
from .calendars import (
    CAPITALISED_ONLY,
    HOLIDAY_PATTERN,
    HOLIDAY_WORDS,
    OTHER_NEW_YEARS,
    date_order,
    holiday_key,
    holiday_occurrences,
    is_southern,
    normal_country,
)

Days = tuple[date, date]
Grounder = Callable[[re.Match[str], "_Context"], "Days | None"]
Combiner = Callable[[re.Match[str], list[Days], "_Context"], "Days | None"]
Acceptor = Callable[[re.Match[str]], bool]
# An acceptor that also reads the date order of the bank's country ("mdy", "dmy" or None).
OrderAcceptor = Callable[[re.Match[str], "str | None"], bool]

_FLAGS = re.IGNORECASE | re.ASCII
_DAY = timedelta(days=1)
# Which occurrence a recurring cue ("in June", "on Saturday") means; see the module docstring.
DIRECTIONS = ("past", "future", "nearest")

_MONTH_NUMBERS = {
    "january": 1, "jan": 1, "february": 2, "feb": 2, "march": 3, "mar": 3, "april": 4, "apr": 4,
    "may": 5, "june": 6, "jun": 6, "july": 7, "jul": 7, "august": 8, "aug": 8, "september": 9,
    "sept": 9, "sep": 9, "october": 10, "oct": 10, "november": 11, "nov": 11, "december": 12,
    "dec": 12,
}  # fmt: skip
_AMBIGUOUS_MONTHS = frozenset({"may", "march", "mar"})
_WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
# Meteorological seasons of the northern hemisphere; six months later in the southern one.
_SEASON_START = {"spring": 3, "summer": 6, "fall": 9, "autumn": 9, "winter": 12}
_NUMBER_WORDS = {
    "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
    "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13, "fourteen": 14,
    "fifteen": 15, "sixteen": 16, "seventeen": 17, "eighteen": 18, "nineteen": 19, "twenty": 20,
    "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80,
    "ninety": 90, "hundred": 100, "a hundred": 100, "a": 1, "an": 1, "a couple of": 2,
    "a couple": 2, "couple of": 2, "couple": 2, "a few": 3, "few": 3, "several": 4,
    "a dozen": 12, "dozen": 12,
}  # fmt: skip
_ORDINALS = {"first": 1, "1st": 1, "second": 2, "2nd": 2, "third": 3, "3rd": 3, "fourth": 4,
             "4th": 4, "fifth": 5, "5th": 5, "last": -1, "final": -1}  # fmt: skip
_YEAR_PREPOSITIONS = frozenset(
    "in of since during from until till before after by through around circa year early late "
    "mid and or to summer winter spring fall autumn".split()
)
# A number right after one of these is a label, not a year: "room 1984", "flight 2020".
_LABEL_WORDS = frozenset(
    "room flight bus route apartment apt suite unit page chapter exit gate platform track "
    "number no nr invoice order ticket model version code pin zip area highway interstate "
    "channel item part serial account case file form line level lot station street avenue "
    "road table seat row box block batch aisle terminal tower floor building house phone ext "
    "extension id ref reference patch build episode ep issue vol volume season".split()
)
# ... and so is a number right before one of these: "the 2000 invoice", "2000 km".
_UNIT_WORDS = frozenset(
    "invoice bill receipt order payment deposit fee account km kg mi mph lb lbs ft cc rpm kcal "
    "mg ml mm cm gb mb kb tb usd eur gbp euro dollar pound rupee yen yuan word step point "
    "calorie".split()
)
# A bare year further ahead than this needs a preposition ("in 2077", not "Cyberpunk 2077").
_FAR_YEAR = 2050
_S_VERBS = frozenset(
    "was is has does seems feels looks goes comes marks means brings starts ends proves remains "
    "sees gets gives turns promises kicks begins".split()
)

# Text fragments (named groups are read by the grounders; see _strip_names for anchors).
_ONES = ("one two three four five six seven eight nine").split()
_TEENS = ("ten eleven twelve thirteen fourteen fifteen sixteen seventeen eighteen "
          "nineteen").split()
_TENS = ("twenty thirty forty fifty sixty seventy eighty ninety").split()
_ONES_PATTERN = "|".join(_ONES)
_TENS_PATTERN = rf"(?:{'|'.join(_TENS)})(?:[-\s]+(?:{_ONES_PATTERN}))?"
# The last two digits of a year in words: "nineteen", "ninety-nine", "oh five".
_TWO_DIGITS = rf"(?:{'|'.join(_TEENS)}|{_TENS_PATTERN}|oh[-\s]+(?:{_ONES_PATTERN}))"
# A year in words right after a month, a season, a holiday or a quarter ("Easter Sunday two
# thousand ten", "May twenty nineteen"): "two thousand [and] ten", "twenty nineteen",
# "nineteen ninety-nine", "twenty oh five"; a bare "two thousand" only when no lowercase word
# follows ("at Christmas two thousand people came" is a count).
YEAR_WORDS = (
    rf"\b(?:two\s+thousand(?:\s+(?:and\s+)?(?:{'|'.join(_TEENS)}|{_TENS_PATTERN}|{_ONES_PATTERN})\b"
    rf"|(?!\s+(?-i:[a-z])))|(?:nineteen|twenty)[-\s]+{_TWO_DIGITS}\b)"
)
_MON_FULL = "january|february|march|april|may|june|july|august|september|october|november|december"
_MON_ABBR = "jan|feb|mar|apr|jun|jul|aug|sept|sep|oct|nov|dec"
MON = rf"(?P<mon>\b(?:(?:{_MON_FULL})\b|(?:{_MON_ABBR})\b(?:\.(?=\s*\d))?))"
DAY_OF_MONTH = r"(?<![\d:/.])\b(?P<day>3[01]|[12]\d|0?[1-9])(?:st|nd|rd|th)?\b"
# A year: four digits, two after an apostrophe ("May '23"; the century is the one that puts
# it within ten years after the reference year or 89 before it), or words (YEAR_WORDS).
YEAR = r"(?P<year>(?:19|20)\d\d|['\u2019]\d\d|" + YEAR_WORDS + r")(?![\d%])"
# Between a month, a season or a holiday and its year: "May 2023", "May, 2023", "May of 2023",
# "Deepavali in 2019".
YEAR_SEP = r"(?:,\s*|\s+)(?:(?:of|in)\s+)?"
# A year-less rule (d) does not take a text its year rule reads ("in May 2023", "at Easter in
# two thousand ten", "in May last year").
NO_YEAR_AFTER = (
    r"(?!,?\s*(?:(?:of|in)\s+)?(?:(?:19|20)\d\d|['\u2019]\d\d)(?!\d))"
    r"(?!,?\s+(?:(?:of|in)\s+)?" + YEAR_WORDS + r")"
    r"(?!,?\s+(?:of\s+)?(?:last|this|next)\s+year\b)"
)
BARE_YEAR = r"(?<![\w$#./:-])(?<!\d,)(?P<year>(?:19|20)\d\d)(?![\w%/:-])(?![.,]\d)"
WD = r"(?P<wd>\b(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday))\b"
WD_PREFIX = r"(?:\b(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday),?\s+(?:the\s+)?)?"
SEASON = r"(?P<season>\b(?:summer|winter|spring|autumn|fall))\b"
NOT_SEASON_NOUN = (
    r"(?![-\s]+(?:rolls?|water|onions?|mattress|chicken|salad|greens?)\b)"
    r"(?!\s+of\s+(?!(?:19|20)\d\d\b|last\b|this\b|next\b))"
)
REL = r"(?P<rel>last|this\s+past|this\s+coming|this|next|coming|upcoming|previous)"
REL_OR_PAST = r"(?P<rel>last|this\s+past|past|this\s+coming|this|next|coming|upcoming|previous)"
_NUM_ALTERNATIVES = sorted(_NUMBER_WORDS, key=len, reverse=True)
NUM = r"(?P<n>\d{1,4}|" + "|".join(w.replace(" ", r"\s+") for w in _NUM_ALTERNATIVES) + r")\b"
PART = (
    r"(?:(?P<part>early|mid|late)(?:-|\s+)(?:in\s+)?"
    r"|(?:the\s+)?(?:very\s+)?(?P<part2>beginning|start|middle|end|first\s+half|second\s+half)"
    r"\s+of\s+)"
)
HOLIDAY = r"(?P<hol>" + HOLIDAY_PATTERN + r")\b(?:\s+(?P<hweekend>weekend)\b)?"
# A quarter: "Q3" (a capital Q) or "the third quarter".
QUARTER = (
    r"(?:(?-i:\bQ)(?P<q>[1-4])\b"
    r"|\b(?:the\s+)?(?P<qord>first|second|third|fourth|last|final|1st|2nd|3rd|4th)[-\s]+"
    r"quarter\b)"
)
_UNITS = "day|week|fortnight|month|quarter|year"

# Families of trigger words: a rule runs only when every family it needs occurs in the text.
_FAMILY_WORDS = {
    "month": set(_MONTH_NUMBERS),
    "weekday": set(_WEEKDAYS) | {day + "s" for day in _WEEKDAYS},
    "season": set(_SEASON_START),
    "holiday": set(HOLIDAY_WORDS),
    "quarter": {"quarter", "quarters", "q"},
    "yearword": {"thousand", "twenty", "nineteen"},  # "year": a digit or one of these
    "dayword": {"today", "tonight", "yesterday", "tomorrow", "night", "morning", "afternoon",
                "evening"},
    "unit": {"day", "days", "week", "weeks", "weekend", "weekends", "fortnight", "fortnights",
             "month", "months", "quarter", "quarters", "year", "years", "hour", "hours"},
    "ago": {"ago", "back"},
    "open": {"before", "after", "since", "until", "till", "prior", "up"},
    "deadline": {"by", "as"},
    "between": {"between", "from"},
    "vague": {"recently", "lately", "these", "nowadays", "while", "other", "long", "past",
              "recent", "then", "day", "time", "late"},
    "part": {"early", "mid", "late", "beginning", "start", "middle", "end", "first", "second",
             "earlier", "later"},
    "rel": {"last", "this", "next", "past", "previous", "coming", "upcoming", "recent",
            "latest", "closest", "nearest"},
}  # fmt: skip
_TOKEN_FAMILIES: dict[str, set[str]] = {}
for _family, _words in _FAMILY_WORDS.items():
    for _word in _words:
        _TOKEN_FAMILIES.setdefault(_word, set()).add(_family)
_WORD = re.compile(r"[A-Za-z]+")
_DIGIT = re.compile(r"[0-9]")
_NEXT_WORD = re.compile(r"\s+([A-Za-z]+)", re.ASCII)
# A year anywhere in a text: digits, "'23" or words.
_YEAR_IN = re.compile(
    r"\b(?:19|20)\d\d\b|(?<![\w'\u2019])['\u2019]\d\d\b|" + YEAR_WORDS, _FLAGS
)
_PREVIOUS_WORD = re.compile(r"(?<![A-Za-z])([A-Za-z]+)\s+$", re.ASCII)


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


@dataclass(frozen=True)
class _Rule:
    name: str
    pattern: re.Pattern[str]
    needs: frozenset[str]
    ground: Grounder | None
    accept: Acceptor | None = None
    combine: Combiner | None = None
    joiner: re.Pattern[str] | None = None
    refuses: frozenset[str] = frozenset()  # anchor rules a composite does not take
    accept_in: OrderAcceptor | None = None  # an acceptor that reads the date order
    anchor_for: frozenset[str] = frozenset()  # the composites it anchors (empty: all)

    def accepts(self, match: re.Match[str], order: str | None = None) -> bool:
        if self.accept_in is not None:
            return self.accept_in(match, order)
        return self.accept is None or self.accept(match)

    def name_for(self, match: re.Match[str]) -> str:
        groups = match.groupdict()
        return self.name.format(
            rel=_normal_rel(groups.get("rel") or ""), unit=(groups.get("unit") or "").lower()
        )


@dataclass(frozen=True)
class _Found:
    start: int
    end: int
    priority: int
    rule: _Rule
    match: re.Match[str]
    anchors: tuple[tuple[_Rule, re.Match[str]], ...] = ()


_RULES: list[_Rule] = []
_ANCHOR_RULES: list[_Rule] = []


def _rule(
    name: str,
    pattern: str,
    needs: str,
    *,
    accept: Acceptor | None = None,
    accept_in: OrderAcceptor | None = None,
    anchor: bool = False,
    anchor_for: str = "",
    detect: bool = True,
    vague: bool = False,
) -> Callable[[Grounder], Grounder]:
    """Register a rule; its grounder is the decorated function (vague rules ground to None).
    ``accept_in`` is an acceptor that also reads the date order of the bank's country;
    ``anchor_for`` names the only composites an anchor completes (default: all)."""

    def register(ground: Grounder) -> Grounder:
        rule = _Rule(
            name,
            re.compile(pattern, _FLAGS),
            frozenset(needs.split()),
            None if vague else ground,
            accept,
            accept_in=accept_in,
            anchor_for=frozenset(anchor_for.split()),
        )
        if detect:
            _RULES.append(rule)
        if anchor:
            _ANCHOR_RULES.append(rule)
        return ground

    return register


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


_PART_DAYS = {
    "week": {"early": (0, 2), "mid": (2, 4), "late": (4, 7), "first_half": (0, 3),
             "second_half": (3, 7)},
    "month": {"early": (0, 10), "mid": (10, 20), "late": (20, None), "first_half": (0, 15),
              "second_half": (15, None)},
}  # fmt: skip
_PART_MONTHS = {
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


# Reading matched text.


_CANONICAL_REL = {
    "last": "last", "past": "last", "previous": "last", "this past": "last", "this": "this",
    "the": "this", "next": "next", "coming": "next", "this coming": "next", "before": "before",
    "prior to": "before", "earlier than": "before", "after": "after", "following": "after",
    "later than": "after", "since": "since", "ever since": "since", "until": "until",
    "till": "until", "up until": "until", "upcoming": "next", "most recent": "last",
    "latest": "last", "closest": "nearest", "nearest": "nearest",
}  # fmt: skip


def _normal_rel(rel: str) -> str:
    key = " ".join(rel.lower().split())
    return _CANONICAL_REL.get(key, key)


def _normal_part(match: re.Match[str]) -> str:
    word = " ".join((match.group("part") or match.group("part2")).lower().split())
    return {
        "beginning": "early",
        "start": "early",
        "middle": "mid",
        "end": "late",
        "first half": "first_half",
        "second half": "second_half",
    }.get(word, word)


def _month(match: re.Match[str]) -> int:
    return _MONTH_NUMBERS[match.group("mon").lower().rstrip(".")]


def _count(text: str) -> int:
    key = " ".join(text.lower().split())
    return int(key) if key.isdigit() else _NUMBER_WORDS[key]


def _unit(match: re.Match[str]) -> str:
    return match.group("unit").lower()


def _year(match: re.Match[str], ctx: _Context, group: str = "year") -> int:
    """The year a match names: four digits or words as written; two digits ("'23", "5/8/23")
    in the century that puts it within ten years after the reference year or 89 years before
    it ("'33" said in 2023 is 2033, "'34" is 1934, "'69" is 1969)."""
    digits = match.group(group).lstrip("'\u2019")
    if not digits.isdigit():
        return _words_year(digits)
    if len(digits) == 4:
        return int(digits)
    latest = ctx.today.year + 10
    return latest - (latest - int(digits)) % 100


def _check_year(text: str) -> int:
    """A year to check a day against (Feb 29) before the century is known: 20xx."""
    digits = text.lstrip("'\u2019")
    if not digits.isdigit():
        return _words_year(digits)
    return int(digits) if len(digits) == 4 else 2000 + int(digits)


def _two_digit_words(text: str) -> int:
    words = [w for w in re.split(r"[-\s]+", text.lower()) if w != "oh"]
    value = 0
    for word in words:
        if word in _TEENS:
            value += 10 + _TEENS.index(word)
        elif word in _TENS:
            value += 20 + 10 * _TENS.index(word)
        else:
            value += 1 + _ONES.index(word)
    return value


def _words_year(text: str) -> int:
    """A year in words (``YEAR_WORDS``, or the ``year`` rule's words): "two thousand and ten"
    = 2010, "two thousand" = 2000, "twenty nineteen" = 2019, "nineteen ninety-nine" = 1999,
    "twenty oh five" = 2005."""
    first, rest = re.split(r"[-\s]+", text.strip().lower(), maxsplit=1)
    if first == "two":  # "two thousand [and] ..."
        rest = re.sub(r"^thousand(?:[-\s]+and)?[-\s]*", "", rest)
        return 2000 + (_two_digit_words(rest) if rest else 0)
    return (1900 if first == "nineteen" else 2000) + _two_digit_words(rest)


def _quarter(match: re.Match[str]) -> int:
    """The quarter a match names: "Q3" (group ``q``) or "the third quarter" (group ``qord``)."""
    groups = match.groupdict()
    if groups.get("q"):
        return int(groups["q"])
    nth = _ORDINALS[groups["qord"].lower()]
    return 4 if nth < 0 else nth


# Acceptors (text only, and the date order of the bank's country, so detection never depends
# on the reference).


def _month_word_ok(match: re.Match[str]) -> bool:
    word = match.group("mon")
    return word.lower().rstrip(".") not in _AMBIGUOUS_MONTHS or word[0].isupper()


def _yearless_month_ok(match: re.Match[str]) -> bool:
    return bool(match.groupdict().get("year")) or _month_word_ok(match)


def _day_fits_month(match: re.Match[str]) -> bool:
    month = _month(match)
    day = int(match.group("day"))
    year = match.groupdict().get("year")
    limit = _days_in_month(_check_year(year) if year else 2000, month)
    return day <= limit


def _yearless_day_ok(match: re.Match[str]) -> bool:
    return _month_word_ok(match) and _day_fits_month(match)


def _span_ok(match: re.Match[str]) -> bool:
    if not _yearless_month_ok(match) or not _day_fits_month(match):
        return False
    return int(match.group("day")) < int(match.group("day2")) <= _days_in_month(2000, _month(match))


def _iso_ok(match: re.Match[str]) -> bool:
    year, month = int(match.group("year")), int(match.group("month"))
    return int(match.group("day")) <= _days_in_month(year, month)


def _numeric_month_day(match: re.Match[str], order: str | None) -> tuple[int, int] | None:
    """(month, day) of a numeric date ("3/14/2023", "14.03.2023", "5/8/23"): the only reading
    that is a date, or, when both are ("5/8/2023"), the one of the country's date order; None
    when neither is, or both are and the order is not known."""
    first, second = int(match.group("a")), int(match.group("b"))
    year = _check_year(match.group("y"))
    readings = [
        (month, day)
        for month, day in ((first, second), (second, first))
        if 1 <= month <= 12 and 1 <= day <= _days_in_month(year, month)
    ]
    if len(readings) == 2 and first != second:
        if order is None:
            return None
        return readings[0] if order == "mdy" else readings[1]
    return readings[0] if readings else None


def _numeric_ok(match: re.Match[str], order: str | None) -> bool:
    if match.group("sep") != "/" and len(match.group("y")) != 4:
        return False  # "1.2.23", "12-05-23": versions and codes as often as dates
    return _numeric_month_day(match, order) is not None


def _year_month_ok(match: re.Match[str]) -> bool:
    """"2023-03" is March 2023, "2011-12" the years 2011 and 2012 (a season, a school year)."""
    return int(match.group("month")) != int(match.group("year")) % 100 + 1


def _month_year_ok(match: re.Match[str]) -> bool:
    """"03/2023" is March 2023; "3/2023" only after a preposition ("a 1/2000 chance")."""
    return len(match.group("month")) == 2 or _after_preposition(match)


def _holiday_ok(match: re.Match[str]) -> bool:
    word = match.group("hol")
    if re.fullmatch(r"new\s+year", word, _FLAGS) and word[0] != "N":
        return False
    key = holiday_key(word)
    if key in ("new_years_day", "new_years_eve"):
        start = match.start("hol")
        previous = _PREVIOUS_WORD.search(match.string, max(0, start - 40), start)
        if previous is not None and previous.group(1).lower() in OTHER_NEW_YEARS:
            return False  # "Persian New Year 2018" is not 1 January
    return key not in CAPITALISED_ONLY or word[0].isupper()


# Words after which a holiday named without a preposition is a time ("we spent Christmas at my
# parents'", "Easter was early"), not a modifier ("Christmas tree", "Thanksgiving traditions").
_AFTER_BARE_HOLIDAY = frozenset(
    "at in on with was were is will would and or but we i you they he she it this last next "
    "that together again here there then to from morning evening night eve day weekend "
    "week".split()
)


def _bare_holiday_ok(match: re.Match[str]) -> bool:
    if not _holiday_ok(match):
        return False
    following = match.string[match.end() :].lstrip(" ")
    if not following or not following[0].isalnum():
        return not following.startswith(("'", "\u2019", "-"))
    word = _WORD.match(following)
    return word is not None and word.group(0).lower() in _AFTER_BARE_HOLIDAY


def _holiday_in_text_ok(match: re.Match[str]) -> bool:
    """A holiday after a preposition ("for Diwali"), or without one followed by a verb, a
    preposition or punctuation ("we spent Christmas at ...")."""
    return _holiday_ok(match) if match.group("hprep") else _bare_holiday_ok(match)


def _after_preposition(match: re.Match[str]) -> bool:
    previous = _PREVIOUS_WORD.search(match.string, max(0, match.start() - 40), match.start())
    return previous is not None and previous.group(1).lower() in _YEAR_PREPOSITIONS


def _is_year(match: re.Match[str], value: int) -> bool:
    """Whether a number (or spelled-out number) that could be a year is one: not a count ("I
    have 2022 reasons"), not a label ("room 1984", "the 2000 invoice", "2000 km"), and not a
    far-future number without a preposition ("Cyberpunk 2077"; "in 2077" is a year)."""
    previous = _PREVIOUS_WORD.search(match.string, max(0, match.start() - 40), match.start())
    previous_word = previous.group(1).lower() if previous is not None else ""
    if previous_word in _LABEL_WORDS:
        return False
    after_preposition = previous_word in _YEAR_PREPOSITIONS
    if value > _FAR_YEAR and not after_preposition:
        return False
    following = _NEXT_WORD.match(match.string, match.end())
    if following is None:
        return True
    word = following.group(1)
    if word.lower() in _UNIT_WORDS and not after_preposition:
        return False
    plural_noun = (
        word.islower()
        and len(word) > 3
        and word.endswith("s")
        and not word.endswith("ss")
        and word not in _S_VERBS
    )
    return not plural_noun or after_preposition


def _year_ok(match: re.Match[str]) -> bool:
    return _is_year(match, int(match.group("year")))


# Dates.


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
    return _single_day(date(_year(match, ctx), _month(match), int(match.group("day"))))


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
    r"(?:" + MON + r"\s+" + DAY_OF_MONTH + r"\s*(?:-|\u2013|to)\s*(?P<day2>3[01]|[12]\d|0?[1-9])"
    r"(?:st|nd|rd|th)?\b(?:" + YEAR_SEP + YEAR + r")?)",
    "month digit",
    accept=_span_ok,
    anchor=True,
)
@_rule(
    "date_span",
    DAY_OF_MONTH
    + r"\s*(?:-|\u2013)\s*(?P<day2>3[01]|[12]\d|0?[1-9])(?:st|nd|rd|th)?\s+(?:of\s+)?"
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
    month, first, last = _month(match), int(match.group("day")), int(match.group("day2"))
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
    month, day = _month(match), int(match.group("day"))
    return _directed(ctx, lambda year: _single_day(date(year, month, day)), _around_year(ctx), 8)


@_rule(
    "day_of_month",
    r"\bon\s+the\s+(?P<day>3[01]|[12]\d|0?[1-9])(?:st|nd|rd|th)\b"
    r"(?:\s+of\s+(?P<rel>this|last|next|the)\s+month\b|(?=\s*(?:[.,;:!?)]|$)))",
    "digit",
)
def _ground_day_of_month(match: re.Match[str], ctx: _Context) -> Days:
    day = int(match.group("day"))
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


@_rule("month_{rel}", r"\b" + REL + r"\s+" + MON, "month rel", accept=_month_word_ok, anchor=True)
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


# Holidays (dates from the calendars of ``calendars.py``).


def _holiday(match: re.Match[str]) -> str:
    return holiday_key(match.group("hol"))


def _holiday_weekend(days: Days) -> Days:
    """"Memorial Day weekend": the weekend next to a holiday, stretched to the holiday: Sat-Mon
    for a Monday, Thu-Sun for a Thursday, Sat-Sun for a Sunday; a Tuesday or Wednesday holiday
    takes the weekend before it."""
    first = days[0]
    if first.weekday() >= 5:
        saturday = first - timedelta(days=first.weekday() - 5)
        return saturday, saturday + timedelta(days=2)
    if first.weekday() >= 3:
        return first, first + timedelta(days=7 - first.weekday())
    return first - timedelta(days=first.weekday() + 2), days[1]


def _holiday_occurrences(match: re.Match[str], years: range, ctx: _Context) -> list[Days]:
    """Each occurrence of the matched holiday (or of its weekend) in ``years``, in time order."""
    key = _holiday(match)
    occurrences = [days for year in years for days in holiday_occurrences(key, year, ctx.country)]
    if match.group("hweekend"):
        return [_holiday_weekend(days) for days in occurrences]
    return occurrences


class _UndatedHoliday(ValueError):
    """The calendars have no date for a holiday in a year the text names ("Juneteenth 2019",
    before it was a federal holiday): a cue of its own grounds to that whole year (``_ground``),
    an anchor to nothing."""

    def __init__(self, key: str, year: int) -> None:
        super().__init__(f"no {key} in {year}")
        self.year = year


def _holiday_in(match: re.Match[str], year: int, ctx: _Context) -> Days:
    """The holiday's (first) occurrence in ``year``, cut to that year (Hanukkah 2024 runs from
    26 December to 2 January: "Hanukkah 2024" is 26-31 December, the named year is a promise);
    ``_UndatedHoliday`` when the calendars have none."""
    occurrences = _holiday_occurrences(match, range(year, year + 1), ctx)
    if not occurrences:
        raise _UndatedHoliday(_holiday(match), year)
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


# Weekdays and day words.


@_rule(
    "weekday_{rel}",
    r"\b" + REL_OR_PAST + r"\s+" + WD,
    "weekday rel",
    anchor=True,
)
def _ground_weekday_rel(match: re.Match[str], ctx: _Context) -> Days:
    weekday, today = _WEEKDAYS.index(match.group("wd").lower()), ctx.today
    rel = _normal_rel(match.group("rel"))
    if rel == "this":
        return _single_day(_week_start(today) + timedelta(days=weekday))
    if rel == "last":
        return _single_day(today - timedelta(days=(today.weekday() - weekday - 1) % 7 + 1))
    return _single_day(today + timedelta(days=(weekday - today.weekday() - 1) % 7 + 1))


@_rule("weekday", r"\b" + WD, "weekday", anchor=True)
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


_day_word("day_before_yesterday", r"(?:the\s+)?day\s+before\s+yesterday", -2)
_day_word("day_after_tomorrow", r"(?:the\s+)?day\s+after\s+tomorrow", 2)
_day_word(
    "today", r"(?:today|tonight|this\s+(?:morning|afternoon|evening)|(?:earlier|later)\s+today)", 0
)
_day_word("yesterday", "yesterday", -1)
_day_word("last_night", r"last\s+night", -1)
_day_word("tomorrow", "tomorrow", 1)


# Calendar periods relative to the reference.

_PERIOD_UNIT = r"(?P<unit>week|weekend|month|year)\b"


@_rule(
    "{unit}_{rel}",
    r"\b(?P<rel>this|last|next|previous)\s+" + _PERIOD_UNIT,
    "unit rel",
    anchor=True,
)
def _ground_period_rel(match: re.Match[str], ctx: _Context) -> Days:
    offset = {"this": 0, "last": -1, "next": 1}[_normal_rel(match.group("rel"))]
    unit = _unit(match)
    return _period(unit, _shift(ctx.today, unit, offset))


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


# Composite rules: a keyword pattern followed by one anchor (any closed cue above) or two.

Anchor = tuple[_Rule, "re.Match[str]"]


def _composite(
    name: str, prefix: str, needs: str, *, joiner: str | None = None, refuses: str = ""
) -> Callable[[Combiner], Combiner]:
    """Register a rule whose match continues with an anchor (two when ``joiner`` is given);
    ``refuses`` names anchor rules that cannot complete it."""

    def register(combine: Combiner) -> Combiner:
        _RULES.append(
            _Rule(
                name,
                re.compile(prefix, _FLAGS),
                frozenset(needs.split()),
                None,
                combine=combine,
                joiner=None if joiner is None else re.compile(joiner, _FLAGS),
                refuses=frozenset(refuses.split()),
            )
        )
        return combine

    return register


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
    if anchor is None or anchor[0].ground is None:
        return None
    rule, match = anchor
    return rule.ground(match, ctx)


@_composite(
    "shift_{rel}",
    r"\b" + NUM + r"\s+(?P<unit>day|week|month|year)s?\s+(?P<rel>before|after|prior\s+to"
    r"|earlier\s+than|later\s+than)\s+",
    "unit",
)
def _combine_shift(match: re.Match[str], anchors: list[Days], ctx: _Context) -> Days:
    sign = 1 if _normal_rel(match.group("rel")) == "after" else -1
    return _shift_range(anchors[0], _unit(match), sign * _count(match.group("n")))


@_composite(
    "period_{rel}",
    r"\b(?:the|last(?!\s+\w+\s+of\b))\s+(?P<unit>day|week|weekend|month|year)\s+"
    r"(?P<rel>before|after|prior\s+to|following|of)\s+",
    "unit",
)
def _combine_period_around(match: re.Match[str], anchors: list[Days], ctx: _Context) -> Days:
    start, end = anchors[0]
    unit, rel = _unit(match), _normal_rel(match.group("rel"))
    if rel == "of":
        return _single_day(start) if unit == "day" else _period(unit, start)
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
    "weekday_{rel}",
    r"\b(?:the|last)\s+" + WD + r"\s+(?P<rel>before|prior\s+to|after|following)\s+",
    "weekday",
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
)
def _combine_open(match: re.Match[str], anchors: list[Days], ctx: _Context) -> Days:
    start, end = anchors[0]
    rel = _normal_rel(match.group("rel"))
    if rel == "before":
        return (ctx.lo if ctx.lo < start else _add_months(start, -12)), start
    if rel == "after":
        return end, (ctx.hi if ctx.hi > end else _add_months(end, 12))
    if rel == "since":
        return start, max(ctx.hi, end)
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
def _combine_between(match: re.Match[str], anchors: list[Days], ctx: _Context) -> Days:
    (first_start, first_end), (second_start, second_end) = anchors
    return min(first_start, second_start), max(first_end, second_end)


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
        except _UndatedHoliday as undated:
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
    again = None if anchors is None else found.rule.combine(found.match, anchors, ctx)
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
    cues mean ("in June", "on Saturday", "at Christmas", ...; see the module docstring):
    "past" (questions), "future" (plans) or "nearest"; a year named on its own in the same
    sentence ("In 2019, what did we do at Christmas?") picks it instead. Detection depends on
    neither, so the cues of one text line up one to one whatever the direction. ``country``
    (ISO 3166 alpha-2, the bank's setting) decides the order of an ambiguous numeric date
    ("5/8/2023": 8 May in the US, 5 August in GB; without a country it is no cue), the holiday
    calendar ("Thanksgiving" in CA) and the hemisphere of the seasons (see ``calendars``).
    """
    country = None if country is None else normal_country(country)
    ctx = _context(reference, timeline, direction, country)
    found = _find(text, order=date_order(country))
    if not found:
        return []
    named = _named_years(found, ctx)
    cues = []
    for item in found:
        year = _sentence_year(item, text, named) if named else None
        cues.append(_to_cue(item, text, ctx if year is None else replace(ctx, year=year)))
    return cues


def has_temporal_cue(text: str, *, country: str | None = None) -> bool:
    """Whether ``text`` holds any temporal cue (grounded or vague); no grounding is done."""
    return bool(_find(text, order=date_order(None if country is None else normal_country(country))))


# Rules grounded relative to the reference time ("last Friday", "two weeks ago", "yesterday").
RELATIVE_RULES = frozenset({
    "today", "yesterday", "last_night", "day_before_yesterday", "tomorrow",
    "day_after_tomorrow", "past_n_units", "past_unit", "earlier_this", "later_this",
    "n_units_ago", "period_before_last", "weekday", "weekend", "month_of_rel_year",
    "season_of_rel_year", "holiday_of_rel_year", "quarter_of_rel_year", "weekday_ago",
    "holiday_nearest",
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


def question_range(cues: list[TimeCue]) -> TimeRange | None:
    """The range a question is about: the narrowest grounded cue (the first one on a tie).

    None when no cue is grounded (no cue, or only vague ones). The narrowest wins because a
    question naming both a wide and a narrow time ("in 2023, the week before 9 June") asks
    about the narrow one. A cue anchored on a calendar date beats one relative to the
    reference time: in "what did she finish last Friday on 23 January 2022", "last Friday" is
    relative to 23 January, not to today, so the date is the better evidence of the episode.
    """
    grounded = [cue for cue in cues if cue.range is not None]
    anchored = [cue for cue in grounded if not is_relative(cue)]
    candidates = anchored or grounded
    if not candidates:
        return None
    return min((cue.range for cue in candidates), key=lambda r: r.end - r.start)
