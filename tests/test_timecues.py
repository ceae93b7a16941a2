"""The temporal cue detector and grounder: the table below is the specification."""

from __future__ import annotations

import re
from datetime import date, datetime, timedelta, timezone
from pathlib import Path
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ramem_local.recall import detect_cues, has_temporal_cue, question_range
from ramem_local.recall import time as time_package
from ramem_local.recall.time import DIRECTIONS, is_recent_cue, recent_window
from ramem_local.recall.time.engine import _find
from ramem_local.recall.time.registry import _ANCHOR_RULES, _RULES, _Rule
from ramem_local.recall.time.vocabulary import _FLAGS
from ramem_local.types import DAY, TimeCue, TimeRange

try:  # the regular-expression parser, to list the words a rule's group can match
    from re import _constants as sre_constants
    from re import _parser as sre_parse
except ImportError:  # Python 3.10
    import sre_constants  # type: ignore[no-redef]
    import sre_parse  # type: ignore[no-redef]

UTC = timezone.utc
THU = datetime(2023, 5, 25, 14, 0, tzinfo=UTC)  # Thursday
SAT = datetime(2023, 5, 27, 9, 30, tzinfo=UTC)
SUN = datetime(2023, 5, 28, 18, 0, tzinfo=UTC)
MON = datetime(2023, 5, 22, 8, 0, tzinfo=UTC)
JAN3 = datetime(2024, 1, 3, 12, 0, tzinfo=UTC)  # Wednesday, year wrap
MAR1 = datetime(2023, 3, 1, 12, 0, tzinfo=UTC)  # after a 28-day February
LEAP_MAR1 = datetime(2024, 3, 1, 12, 0, tzinfo=UTC)  # after a 29-day February
AUG31 = datetime(2023, 8, 31, 23, 0, tzinfo=UTC)
SEP10 = datetime(2023, 9, 10, 12, 0, tzinfo=UTC)
JUN20 = datetime(2023, 6, 20, 12, 0, tzinfo=UTC)
EARLY_THU = datetime(2023, 5, 25, 1, 0, tzinfo=UTC)
MAR2013 = datetime(2013, 3, 15, 12, 0, tzinfo=UTC)  # where a named year was once not kept


def midnight(day: str) -> int:
    return int(datetime.fromisoformat(day).replace(tzinfo=UTC).timestamp())


def days(first: str, last: str) -> TimeRange:
    """The whole days first..last (inclusive) as a half-open range."""
    return TimeRange(midnight(first), midnight(last) + DAY)


def asked_cue(cues: list[TimeCue]) -> TimeCue:
    """The cue question_range picks (the only one for single-cue texts)."""
    chosen = question_range(cues)
    if chosen is None:
        return cues[0]
    return next(cue for cue in cues if cue.range == chosen)


GROUNDED = [
    # full dates
    ("8 May 2023", THU, "date_dmy", "2023-05-08", "2023-05-08"),
    ("May 8, 2023", THU, "date_mdy", "2023-05-08", "2023-05-08"),
    ("8th of May, 2023", THU, "date_dmy", "2023-05-08", "2023-05-08"),
    ("Monday, May 8, 2023", THU, "date_mdy", "2023-05-08", "2023-05-08"),
    ("Sept. 5, 2022", THU, "date_mdy", "2022-09-05", "2022-09-05"),
    ("2023-05-08", THU, "date_iso", "2023-05-08", "2023-05-08"),
    ("2023/05/08", THU, "date_iso", "2023-05-08", "2023-05-08"),
    # numeric dates that read one way only (ambiguous ones: COUNTRY_ROWS)
    ("25/12/2022", THU, "date_numeric", "2022-12-25", "2022-12-25"),
    ("3/14/2023", THU, "date_numeric", "2023-03-14", "2023-03-14"),
    ("14/03/2023", THU, "date_numeric", "2023-03-14", "2023-03-14"),
    ("14.03.2023", THU, "date_numeric", "2023-03-14", "2023-03-14"),
    ("03-14-2023", THU, "date_numeric", "2023-03-14", "2023-03-14"),
    ("on 5/5/2023", THU, "date_numeric", "2023-05-05", "2023-05-05"),
    ("12/25/33", THU, "date_numeric", "2033-12-25", "2033-12-25"),  # two-digit years: within
    ("12/25/34", THU, "date_numeric", "1934-12-25", "1934-12-25"),  # ten years ahead, or back
    ("2023/03", THU, "month_numeric", "2023-03-01", "2023-03-31"),
    ("in 2022-05", THU, "month_numeric", "2022-05-01", "2022-05-31"),
    ("03/2023", THU, "month_numeric", "2023-03-01", "2023-03-31"),
    ("in 3/2023", THU, "month_numeric", "2023-03-01", "2023-03-31"),
    ("14 Mar 23", THU, "date_dmy", "2023-03-14", "2023-03-14"),
    ("14-Mar-2023", THU, "date_dmy", "2023-03-14", "2023-03-14"),
    ("on 14-Mar-23", THU, "date_dmy", "2023-03-14", "2023-03-14"),
    ("14 March '23", THU, "date_dmy", "2023-03-14", "2023-03-14"),
    ("Mar 14, '23", THU, "date_mdy", "2023-03-14", "2023-03-14"),
    ("March '22", THU, "month_year", "2022-03-01", "2022-03-31"),
    ("Feb 29, 2024", THU, "date_mdy", "2024-02-29", "2024-02-29"),
    # dates without a year: the most recent one on or before the reference
    ("on 7 May", THU, "day_month", "2023-05-07", "2023-05-07"),
    ("on 25 May", THU, "day_month", "2023-05-25", "2023-05-25"),
    ("on 28 May", THU, "day_month", "2022-05-28", "2022-05-28"),
    ("May 7th", THU, "month_day", "2023-05-07", "2023-05-07"),
    ("the 7th of May", THU, "day_month", "2023-05-07", "2023-05-07"),
    ("on Feb 29", THU, "month_day", "2020-02-29", "2020-02-29"),
    ("December 31", JAN3, "month_day", "2023-12-31", "2023-12-31"),
    ("on the 8th.", THU, "day_of_month", "2023-05-08", "2023-05-08"),
    ("on the 31st.", THU, "day_of_month", "2023-03-31", "2023-03-31"),
    ("on the 30th of last month", MAR1, "day_of_month", "2023-02-28", "2023-02-28"),
    ("the 15th of last month", THU, "day_of_month", "2023-04-15", "2023-04-15"),
    ("on the fifteenth.", THU, "day_of_month", "2023-05-15", "2023-05-15"),
    # days of a month in words
    ("the first of May", THU, "day_month", "2023-05-01", "2023-05-01"),
    ("the twentieth of March", THU, "day_month", "2023-03-20", "2023-03-20"),
    ("the twenty-first of June 2022", THU, "date_dmy", "2022-06-21", "2022-06-21"),
    ("May first", THU, "month_day", "2023-05-01", "2023-05-01"),
    ("March the second", THU, "month_day", "2023-03-02", "2023-03-02"),
    ("March third, 2022", THU, "date_mdy", "2022-03-03", "2022-03-03"),
    ("on May thirty first", THU, "month_day", "2022-05-31", "2022-05-31"),
    ("May 8-10", THU, "date_span", "2023-05-08", "2023-05-10"),
    ("8-10 May 2022", THU, "date_span", "2022-05-08", "2022-05-10"),
    ("8 to 10 May 2022", THU, "date_span", "2022-05-08", "2022-05-10"),
    ("between 5 and 10 March 2022", THU, "date_span", "2022-03-05", "2022-03-10"),
    ("between the 8th and the 10th of May", THU, "date_span", "2023-05-08", "2023-05-10"),
    ("from the 8th to the 10th of May", THU, "date_span", "2023-05-08", "2023-05-10"),
    ("between March 5 and 10, 2022", THU, "date_span", "2022-03-05", "2022-03-10"),
    ("on May 8 and 10", THU, "month_day", "2023-05-08", "2023-05-08"),  # two days, no span
    # months
    ("in May 2023", THU, "month_year", "2023-05-01", "2023-05-31"),
    ("May, 2023", THU, "month_year", "2023-05-01", "2023-05-31"),
    ("May of 2022", THU, "month_year", "2022-05-01", "2022-05-31"),
    ("in May", THU, "month", "2023-05-01", "2023-05-31"),
    ("during March", THU, "month", "2023-03-01", "2023-03-31"),
    ("in June", THU, "month", "2022-06-01", "2022-06-30"),
    ("in December", JAN3, "month", "2023-12-01", "2023-12-31"),
    ("in February", MAR1, "month", "2023-02-01", "2023-02-28"),
    ("in February", LEAP_MAR1, "month", "2024-02-01", "2024-02-29"),
    ("the month of May", THU, "month", "2023-05-01", "2023-05-31"),
    ("in jan", THU, "month", "2023-01-01", "2023-01-31"),
    ("last May", THU, "month_last", "2022-05-01", "2022-05-31"),
    ("last April", THU, "month_last", "2023-04-01", "2023-04-30"),
    ("this May", THU, "month_this", "2023-05-01", "2023-05-31"),
    ("next May", THU, "month_next", "2024-05-01", "2024-05-31"),
    ("next June", THU, "month_next", "2023-06-01", "2023-06-30"),
    ("March of last year", THU, "month_of_rel_year", "2022-03-01", "2022-03-31"),
    # parts of a month or year
    ("early May 2023", THU, "month_part", "2023-05-01", "2023-05-10"),
    ("mid-May", THU, "month_part", "2023-05-11", "2023-05-20"),
    ("mid May 2023", THU, "month_part", "2023-05-11", "2023-05-20"),
    ("late March", THU, "month_part", "2023-03-21", "2023-03-31"),
    ("the beginning of June 2023", THU, "month_part", "2023-06-01", "2023-06-10"),
    ("end of June 2022", THU, "month_part", "2022-06-21", "2022-06-30"),
    ("the middle of April", THU, "month_part", "2023-04-11", "2023-04-20"),
    ("late February", MAR1, "month_part", "2023-02-21", "2023-02-28"),
    ("late February", LEAP_MAR1, "month_part", "2024-02-21", "2024-02-29"),
    ("the first half of May 2023", THU, "month_part", "2023-05-01", "2023-05-15"),
    ("early 2023", THU, "year_part", "2023-01-01", "2023-04-30"),
    ("mid-2022", THU, "year_part", "2022-05-01", "2022-08-31"),
    ("the end of 2022", THU, "year_part", "2022-09-01", "2022-12-31"),
    # seasons (meteorological, northern hemisphere)
    ("summer 2022", THU, "season_year", "2022-06-01", "2022-08-31"),
    ("in the summer of 2022", THU, "season_year", "2022-06-01", "2022-08-31"),
    ("autumn 2021", THU, "season_year", "2021-09-01", "2021-11-30"),
    ("winter 2022", THU, "season_year", "2022-12-01", "2023-02-28"),
    ("last summer", THU, "season_last", "2022-06-01", "2022-08-31"),
    ("last summer", AUG31, "season_last", "2022-06-01", "2022-08-31"),
    ("last summer", SEP10, "season_last", "2023-06-01", "2023-08-31"),
    ("this summer", THU, "season_this", "2023-06-01", "2023-08-31"),
    ("this winter", JAN3, "season_this", "2023-12-01", "2024-02-29"),
    ("last winter", THU, "season_last", "2022-12-01", "2023-02-28"),
    ("next spring", THU, "season_next", "2024-03-01", "2024-05-31"),
    ("the summer of last year", THU, "season_of_rel_year", "2022-06-01", "2022-08-31"),
    ("in the spring", THU, "season", "2023-03-01", "2023-05-31"),
    ("over the summer", THU, "season", "2022-06-01", "2022-08-31"),
    ("in the fall", JAN3, "season", "2023-09-01", "2023-11-30"),
    # years and decades
    ("in 2022", THU, "year", "2022-01-01", "2022-12-31"),
    ("2022", THU, "year", "2022-01-01", "2022-12-31"),
    ("Back in 1999, we met.", THU, "year", "1999-01-01", "1999-12-31"),
    ("In 2022 things changed", THU, "year", "2022-01-01", "2022-12-31"),
    ("2019-2021", THU, "year_span", "2019-01-01", "2021-12-31"),
    ("the 1990s", THU, "decade", "1990-01-01", "1999-12-31"),
    ("the early 2000s", THU, "decade", "2000-01-01", "2003-12-31"),
    # weekdays
    ("last Saturday", THU, "weekday_last", "2023-05-20", "2023-05-20"),
    ("last Saturday", SAT, "weekday_last", "2023-05-20", "2023-05-20"),
    ("last Monday", MON, "weekday_last", "2023-05-15", "2023-05-15"),
    ("this past Friday", THU, "weekday_last", "2023-05-19", "2023-05-19"),
    ("this past weekend", THU, "weekend_last", "2023-05-20", "2023-05-21"),
    ("the Monday before last", THU, "weekday_before_last", "2023-05-15", "2023-05-15"),
    ("the Monday before last", MON, "weekday_before_last", "2023-05-08", "2023-05-08"),
    ("the Thursday before last", THU, "weekday_before_last", "2023-05-11", "2023-05-11"),
    ("the night before last", THU, "night_before_last", "2023-05-23", "2023-05-23"),
    ("a year ago today", THU, "this_day_years_ago", "2022-05-25", "2022-05-25"),
    ("on this day last year", THU, "this_day_years_ago", "2022-05-25", "2022-05-25"),
    ("the same day two years ago", THU, "this_day_years_ago", "2021-05-25", "2021-05-25"),
    ("this time last year", THU, "this_time_years_ago", "2022-05-22", "2022-05-28"),
    ("this time last month", THU, "this_time_last_month", "2023-04-22", "2023-04-28"),
    ("this time last week", THU, "this_time_last_week", "2023-05-17", "2023-05-19"),
    ("on Tuesday", THU, "weekday", "2023-05-23", "2023-05-23"),
    ("Thursday", THU, "weekday", "2023-05-25", "2023-05-25"),
    ("Saturday", SAT, "weekday", "2023-05-27", "2023-05-27"),
    ("Monday", MON, "weekday", "2023-05-22", "2023-05-22"),
    ("on Friday", JAN3, "weekday", "2023-12-29", "2023-12-29"),
    ("next Friday", THU, "weekday_next", "2023-05-26", "2023-05-26"),
    ("next Friday", SAT, "weekday_next", "2023-06-02", "2023-06-02"),
    ("this Monday", THU, "weekday_this", "2023-05-22", "2023-05-22"),
    ("this Sunday", THU, "weekday_this", "2023-05-28", "2023-05-28"),
    # day words
    ("yesterday", THU, "yesterday", "2023-05-24", "2023-05-24"),
    ("yesterday", JAN3, "yesterday", "2024-01-02", "2024-01-02"),
    ("yesterday", LEAP_MAR1, "yesterday", "2024-02-29", "2024-02-29"),
    ("today", THU, "today", "2023-05-25", "2023-05-25"),
    ("tonight", THU, "today", "2023-05-25", "2023-05-25"),
    ("this morning", THU, "today", "2023-05-25", "2023-05-25"),
    ("last night", THU, "last_night", "2023-05-24", "2023-05-24"),
    ("the day before yesterday", THU, "day_before_yesterday", "2023-05-23", "2023-05-23"),
    ("the day before yesterday", MAR1, "day_before_yesterday", "2023-02-27", "2023-02-27"),
    ("tomorrow", THU, "tomorrow", "2023-05-26", "2023-05-26"),
    ("the day after tomorrow", THU, "day_after_tomorrow", "2023-05-27", "2023-05-27"),
    # calendar weeks (Monday-Sunday), weekends, months, years
    ("this week", THU, "week_this", "2023-05-22", "2023-05-28"),
    ("last week", THU, "week_last", "2023-05-15", "2023-05-21"),
    ("last week", MON, "week_last", "2023-05-15", "2023-05-21"),
    ("last week", JAN3, "week_last", "2023-12-25", "2023-12-31"),
    ("next week", THU, "week_next", "2023-05-29", "2023-06-04"),
    ("the week before last", THU, "period_before_last", "2023-05-08", "2023-05-14"),
    ("this weekend", THU, "weekend_this", "2023-05-27", "2023-05-28"),
    ("this weekend", SUN, "weekend_this", "2023-05-27", "2023-05-28"),
    ("last weekend", THU, "weekend_last", "2023-05-20", "2023-05-21"),
    ("last weekend", SAT, "weekend_last", "2023-05-20", "2023-05-21"),
    ("the weekend just gone", THU, "weekend_just_gone", "2023-05-20", "2023-05-21"),
    ("the month that has just passed", THU, "month_just_gone", "2023-04-01", "2023-04-30"),
    ("next weekend", THU, "weekend_next", "2023-06-03", "2023-06-04"),
    ("over the weekend", MON, "weekend", "2023-05-20", "2023-05-21"),
    ("over the weekend", SAT, "weekend", "2023-05-27", "2023-05-28"),
    ("this month", THU, "month_this", "2023-05-01", "2023-05-31"),
    ("last month", THU, "month_last", "2023-04-01", "2023-04-30"),
    ("last month", JAN3, "month_last", "2023-12-01", "2023-12-31"),
    ("last month", MAR1, "month_last", "2023-02-01", "2023-02-28"),
    ("next month", THU, "month_next", "2023-06-01", "2023-06-30"),
    ("this year", THU, "year_this", "2023-01-01", "2023-12-31"),
    ("last year", JAN3, "year_last", "2023-01-01", "2023-12-31"),
    ("next year", THU, "year_next", "2024-01-01", "2024-12-31"),
    # spans before the reference day (the reference day excluded) and parts of periods
    ("past week", THU, "past_unit", "2023-05-18", "2023-05-24"),
    ("the past month", THU, "past_unit", "2023-04-25", "2023-05-24"),
    ("the past few days", THU, "past_n_units", "2023-05-22", "2023-05-24"),
    ("in the last 2 weeks", THU, "past_n_units", "2023-05-11", "2023-05-24"),
    ("earlier this week", THU, "earlier_this", "2023-05-22", "2023-05-25"),
    ("earlier this month", THU, "earlier_this", "2023-05-01", "2023-05-25"),
    ("earlier this year", JAN3, "earlier_this", "2024-01-01", "2024-01-03"),
    ("later this week", THU, "later_this", "2023-05-25", "2023-05-28"),
    ("the end of last month", THU, "period_part", "2023-04-21", "2023-04-30"),
    ("early next year", THU, "period_part", "2024-01-01", "2024-04-30"),
    # N units ago
    ("two weeks ago", THU, "n_units_ago", "2023-05-08", "2023-05-14"),
    ("2 weeks ago", THU, "n_units_ago", "2023-05-08", "2023-05-14"),
    ("a couple of weeks ago", THU, "n_units_ago", "2023-05-08", "2023-05-14"),
    ("a fortnight ago", THU, "n_units_ago", "2023-05-08", "2023-05-14"),
    ("a week ago", MON, "n_units_ago", "2023-05-15", "2023-05-21"),
    ("a month ago", THU, "n_units_ago", "2023-04-01", "2023-04-30"),
    ("a month ago", JAN3, "n_units_ago", "2023-12-01", "2023-12-31"),
    ("two months ago", MAR1, "n_units_ago", "2023-01-01", "2023-01-31"),
    ("a few days ago", THU, "n_units_ago", "2023-05-22", "2023-05-22"),
    ("several days ago", THU, "n_units_ago", "2023-05-21", "2023-05-21"),
    ("3 days ago", JAN3, "n_units_ago", "2023-12-31", "2023-12-31"),
    ("a year ago", THU, "n_units_ago", "2022-01-01", "2022-12-31"),
    ("five years ago", THU, "n_units_ago", "2018-01-01", "2018-12-31"),
    ("2 hours ago", EARLY_THU, "n_units_ago", "2023-05-24", "2023-05-24"),
    # relative to a date
    ("the week before 9 June 2023", THU, "period_before", "2023-06-02", "2023-06-08"),
    ("the week after 9 June 2023", THU, "period_after", "2023-06-10", "2023-06-16"),
    ("the weekend before 9 June 2023", THU, "period_before", "2023-06-03", "2023-06-04"),
    ("the weekend after 9 June 2023", THU, "period_after", "2023-06-10", "2023-06-11"),
    ("the weekend after 10 June 2023", THU, "period_after", "2023-06-17", "2023-06-18"),
    ("the day before 9 June 2023", THU, "period_before", "2023-06-08", "2023-06-08"),
    ("the day after May 8", THU, "period_after", "2023-05-09", "2023-05-09"),
    ("the week of May 10, 2023", THU, "period_of", "2023-05-08", "2023-05-14"),
    # a day of the month alone, next to a period: this month's, or last month's when ahead
    ("the week of the 10th", THU, "period_of", "2023-05-08", "2023-05-14"),
    ("the weekend of the 13th", THU, "period_of", "2023-05-13", "2023-05-14"),
    ("the day after the 10th", THU, "period_after", "2023-05-11", "2023-05-11"),
    ("the week before the 10th", THU, "period_before", "2023-05-03", "2023-05-09"),
    ("the month before June 2023", THU, "period_before", "2023-05-01", "2023-05-31"),
    ("two days before 9 June 2023", THU, "shift_before", "2023-06-07", "2023-06-07"),
    ("three weeks after May 1, 2023", THU, "shift_after", "2023-05-22", "2023-05-22"),
    # a plural unit without a count: a stretch of the next unit
    ("the days after May 8", THU, "stretch_after", "2023-05-09", "2023-05-15"),
    ("the weeks before 9 June 2023", THU, "stretch_before", "2023-05-09", "2023-06-08"),
    ("the months following May 8", THU, "stretch_after", "2023-05-09", "2023-08-08"),
    ("the days leading up to 9 June 2023", THU, "stretch_before", "2023-06-02", "2023-06-08"),
    # a count of units with "the": every day of them (without it, that day: shift_{rel})
    ("in the two weeks before 9 June 2023", THU, "window_before", "2023-05-26", "2023-06-08"),
    ("the three days after May 8", THU, "window_after", "2023-05-09", "2023-05-11"),
    ("during the fortnight after Easter 2023", THU, "window_after", "2023-04-10", "2023-04-23"),
    ("the last ten days before Christmas 2022", THU, "window_before", "2022-12-15",
     "2022-12-24"),
    ("the 2 weeks leading up to 9 June 2023", THU, "window_before", "2023-05-26", "2023-06-08"),
    ("two weeks before 9 June 2023", THU, "shift_before", "2023-05-26", "2023-05-26"),
    # the run-up to a time: the weeks before it (a month)
    ("in the run-up to Christmas 2022", THU, "run_up", "2022-11-25", "2022-12-24"),
    ("the lead-up to 9 June 2023", THU, "run_up", "2023-05-09", "2023-06-08"),
    # near words: a day or a week next to the anchor, not all time
    ("right after May 8", THU, "near_after", "2023-05-09", "2023-05-09"),
    ("just before 9 June 2023", THU, "near_before", "2023-06-08", "2023-06-08"),
    ("immediately after Christmas 2022", THU, "near_after", "2022-12-26", "2022-12-26"),
    ("shortly after May 8", THU, "near_after", "2023-05-09", "2023-05-15"),
    ("not long before May 8", THU, "near_before", "2023-05-01", "2023-05-07"),
    ("soon after Easter 2023", THU, "near_after", "2023-04-10", "2023-04-16"),
    ("the first weekend of June 2023", THU, "nth_weekend", "2023-06-03", "2023-06-04"),
    ("the second weekend of July 2023", THU, "nth_weekend", "2023-07-08", "2023-07-09"),
    # asked on Thursday 25 May, this May's last weekend is still to come: last year's
    ("the last weekend of May", THU, "nth_weekend", "2022-05-28", "2022-05-29"),
    ("the last weekend of May", JUN20, "nth_weekend", "2023-05-27", "2023-05-28"),
    ("the first week of June 2023", THU, "nth_week", "2023-06-01", "2023-06-07"),
    # a part of an anchor is cut to it: 31 December 2022 is a Saturday
    ("the last weekend of 2022", THU, "nth_weekend", "2022-12-31", "2022-12-31"),
    ("the last weekend of December 2022", THU, "nth_weekend", "2022-12-31", "2022-12-31"),
    ("the fifth week of May 2023", THU, "nth_week", "2023-05-29", "2023-05-31"),
    ("the last week of May 2023", THU, "nth_week", "2023-05-25", "2023-05-31"),
    # open ranges (no timeline: reference day - 10 years .. reference day)
    ("before June 2023", THU, "before", "2013-05-25", "2023-05-31"),
    ("after May 8", THU, "after", "2023-05-09", "2023-05-25"),
    ("since 2020", THU, "since", "2020-01-01", "2023-05-25"),
    ("ever since last summer", THU, "since", "2022-06-01", "2023-05-25"),
    # X under way on the reference day: up to that day, not X's end
    ("since May", THU, "since", "2023-05-01", "2023-05-25"),
    ("since 2023", THU, "since", "2023-01-01", "2023-05-25"),
    ("until last week", THU, "until", "2013-05-25", "2023-05-21"),
    ("before Christmas", JAN3, "before", "2014-01-03", "2023-12-24"),
    # the state up to a date: as "until", X included
    ("How long has Tim been playing the piano, as of December 2023?", JAN3, "as_of",
     "2014-01-03", "2023-12-31"),
    ("How many tournaments has Nate won by July 10, 2022?", THU, "by",
     "2013-05-25", "2022-07-10"),
    ("as of today", THU, "as_of", "2013-05-25", "2023-05-25"),
    ("by next week", THU, "by", "2013-05-25", "2023-06-04"),
    ("by the end of 2022", THU, "by", "2013-05-25", "2022-12-31"),
    ("by summer 2022", THU, "by", "2013-05-25", "2022-08-31"),
    ("by Christmas", JAN3, "holiday", "2023-12-25", "2023-12-25"),  # not a "by" cue
    ("By 2020 she had moved twice", THU, "by", "2013-05-25", "2020-12-31"),
    # between two anchors
    ("between May 1 and May 8, 2023", THU, "between", "2023-05-01", "2023-05-08"),
    ("from May to July 2022", THU, "between", "2022-05-01", "2022-07-31"),
    ("from 8 May to 12 May 2023", THU, "between", "2023-05-08", "2023-05-12"),
    ("from 2019 to 2021", THU, "between", "2019-01-01", "2021-12-31"),
    ("since March until May 2023", THU, "since_until", "2023-03-01", "2023-05-31"),
    ("ever since 2 May up to 10 May", THU, "since_until", "2023-05-02", "2023-05-10"),
    ("after 3 May and before 10 May", THU, "after_before", "2023-05-04", "2023-05-09"),
    # holidays
    ("Christmas 2022", THU, "holiday_year", "2022-12-25", "2022-12-25"),
    ("last Christmas", JAN3, "holiday_last", "2023-12-25", "2023-12-25"),
    ("on Thanksgiving", THU, "holiday", "2022-11-24", "2022-11-24"),
    ("on New Year's Eve", JAN3, "holiday", "2023-12-31", "2023-12-31"),
    ("for Halloween", THU, "holiday", "2022-10-31", "2022-10-31"),
    # the holiday season: Christmas Eve to New Year's Day, across New Year unless a year is named
    ("What did I do over the holidays?", JAN3, "holiday", "2023-12-24", "2024-01-01"),
    ("What did I cook during the Christmas break?", THU, "holiday", "2022-12-24", "2023-01-01"),
    ("Where did I spend the holidays?", THU, "holiday", "2022-12-24", "2023-01-01"),
    ("over the festive season", THU, "holiday", "2022-12-24", "2023-01-01"),
    ("last holiday season", THU, "holiday_last", "2022-12-24", "2023-01-01"),
    ("the holidays before last", JAN3, "holiday_before_last", "2022-12-24", "2023-01-01"),
    ("two Christmas breaks ago", THU, "holiday_ago", "2021-12-24", "2022-01-01"),
    ("the Christmas holidays of 2021", THU, "holiday_year", "2021-12-24", "2021-12-31"),
    ("the holidays last year", THU, "holiday_of_rel_year", "2022-12-24", "2022-12-31"),
    ("What did I do over Christmas and New Year?", THU, "holiday", "2022-12-24", "2023-01-01"),
    ("over Christmas and New Year's Day", THU, "holiday", "2022-12-24", "2023-01-01"),
    ("What did I do during the holiday break?", THU, "holiday", "2022-12-24", "2023-01-01"),
    ("over the New Year holidays", THU, "holiday", "2022-12-24", "2023-01-01"),
    ("between Christmas and New Year", THU, "between", "2022-12-25", "2023-01-01"),  # no Eve
    # a holiday or a season counted back
    ("two Christmases ago", THU, "holiday_ago", "2021-12-25", "2021-12-25"),
    ("two Christmases ago", JAN3, "holiday_ago", "2022-12-25", "2022-12-25"),
    ("What did we eat three Easters ago?", THU, "holiday_ago", "2021-04-04", "2021-04-04"),
    ("two Thanksgivings back", THU, "holiday_ago", "2021-11-25", "2021-11-25"),
    ("the Christmas before last", THU, "holiday_before_last", "2021-12-25", "2021-12-25"),
    ("Christmas two years ago", THU, "holiday_years_ago", "2021-12-25", "2021-12-25"),
    ("two summers ago", THU, "season_ago", "2021-06-01", "2021-08-31"),
    ("two summers ago", SEP10, "season_ago", "2022-06-01", "2022-08-31"),
    ("two summers ago", JUN20, "season_ago", "2021-06-01", "2021-08-31"),  # this one is not over
    ("two winters ago", THU, "season_ago", "2021-12-01", "2022-02-28"),
    ("the summer before last", THU, "season_before_last", "2021-06-01", "2021-08-31"),
    ("the summer of two years ago", THU, "season_years_ago", "2021-06-01", "2021-08-31"),
    # LoCoMo-style questions
    ("What did Melanie do in the week before 9 June 2023?", JUN20, "period_before",
     "2023-06-02", "2023-06-08"),
    ("Which book did Caroline read in late March 2023?", JUN20, "month_part",
     "2023-03-21", "2023-03-31"),
    ("What happened last summer?", SEP10, "season_last", "2023-06-01", "2023-08-31"),
    ("What did Jon do two weeks ago?", THU, "n_units_ago", "2023-05-08", "2023-05-14"),
    ("Where did Melanie go camping in June?", SEP10, "month", "2023-06-01", "2023-06-30"),
    ("What did Caroline do on 20 May 2023?", JUN20, "date_dmy", "2023-05-20", "2023-05-20"),
    ("Where did Gina go the weekend before 8 May 2023?", JUN20, "period_before",
     "2023-05-06", "2023-05-07"),
    ("What did Jon start in 2022?", JUN20, "year", "2022-01-01", "2022-12-31"),
    ("What did John do last Friday night?", THU, "weekday_last", "2023-05-19", "2023-05-19"),
    ("I ran a charity race last Saturday.", THU, "weekday_last", "2023-05-20", "2023-05-20"),
    ("Which US states might Tim be in during September 2023?", THU, "month_year",
     "2023-09-01", "2023-09-30"),
    ("Where was the picture shared on December 1,2023 taken?", JAN3, "date_mdy",
     "2023-12-01", "2023-12-01"),
    ("What was shown on the Sunday before October 25, 2022?", JAN3, "weekday_before",
     "2022-10-23", "2022-10-23"),
    ("What did she do the Friday after May 8, 2023?", JAN3, "weekday_after",
     "2023-05-12", "2023-05-12"),
    ("What did Maria participate in last weekend before April 10, 2023?", JAN3, "period_before",
     "2023-04-08", "2023-04-09"),
    ("We went camping two weekends ago.", MON, "n_units_ago", "2023-05-13", "2023-05-14"),
    ("Which country was Tim visiting in the second week of November?", JAN3, "nth_week",
     "2023-11-08", "2023-11-14"),
    ("throughout the summer of 2022", THU, "season_year", "2022-06-01", "2022-08-31"),
    ("during Thanksgiving 2022", THU, "holiday_year", "2022-11-24", "2022-11-24"),
]  # fmt: skip

# Time as people say it: every family, in the question form (reference Thursday 2023-05-25
# unless noted; the past-oriented reading of questions).
GROUNDED += [
    # holidays: calendars from the ``holidays`` package and ``dateutil.easter``
    ("What did we do at Easter 2022?", THU, "holiday_year", "2022-04-17", "2022-04-17"),
    ("What did we do at Easter?", THU, "holiday", "2023-04-09", "2023-04-09"),
    ("What did I do last Easter?", THU, "holiday_last", "2023-04-09", "2023-04-09"),
    ("Where were we on Good Friday?", THU, "holiday", "2023-04-07", "2023-04-07"),
    ("Easter Monday 2022", THU, "holiday_year", "2022-04-18", "2022-04-18"),
    ("Palm Sunday 2023", THU, "holiday_year", "2023-04-02", "2023-04-02"),
    ("Ash Wednesday 2023", THU, "holiday_year", "2023-02-22", "2023-02-22"),
    ("What did we eat on Mardi Gras?", THU, "holiday", "2023-02-21", "2023-02-21"),
    ("Shrove Tuesday 2022", THU, "holiday_year", "2022-03-01", "2022-03-01"),
    ("Ascension Day 2023", THU, "holiday_year", "2023-05-18", "2023-05-18"),
    ("at Pentecost", THU, "holiday", "2022-06-05", "2022-06-05"),  # 2023's is on 28 May
    ("What did we do last Thanksgiving?", THU, "holiday_last", "2022-11-24", "2022-11-24"),
    ("last Thanksgiving", JAN3, "holiday_last", "2023-11-23", "2023-11-23"),
    ("What did we do at Thanksgiving last year?", THU, "holiday_of_rel_year",
     "2022-11-24", "2022-11-24"),
    ("on New Year's Day", THU, "holiday", "2023-01-01", "2023-01-01"),
    ("What did I buy on Black Friday 2021?", THU, "holiday_year", "2021-11-26", "2021-11-26"),
    ("on Cyber Monday", THU, "holiday", "2022-11-28", "2022-11-28"),
    ("What did we do for Diwali?", THU, "holiday", "2022-10-24", "2022-10-24"),
    ("Diwali 2023", THU, "holiday_year", "2023-11-12", "2023-11-12"),
    ("Where did we go for Chinese New Year?", THU, "holiday", "2023-01-22", "2023-01-22"),
    ("Lunar New Year 2024", THU, "holiday_year", "2024-02-10", "2024-02-10"),
    ("What did we cook for Eid?", THU, "holiday", "2023-04-21", "2023-04-21"),
    ("Eid al-Adha 2023", THU, "holiday_year", "2023-06-28", "2023-06-28"),
    ("What did we do during Ramadan?", THU, "holiday", "2023-03-23", "2023-04-21"),
    ("How did we celebrate Hanukkah 2022?", THU, "holiday_year", "2022-12-19", "2022-12-26"),
    ("What did we do for Passover?", THU, "holiday", "2023-04-06", "2023-04-13"),
    ("on Rosh Hashanah", THU, "holiday", "2022-09-26", "2022-09-27"),
    ("Yom Kippur 2023", THU, "holiday_year", "2023-09-25", "2023-09-25"),
    ("for Purim", THU, "holiday", "2023-03-07", "2023-03-07"),
    ("for Holi", THU, "holiday", "2023-03-08", "2023-03-08"),
    ("What did we give Mom on Mother's Day?", THU, "holiday", "2023-05-14", "2023-05-14"),
    ("on Father's Day", THU, "holiday", "2022-06-19", "2022-06-19"),
    ("on Memorial Day", THU, "holiday", "2022-05-30", "2022-05-30"),
    ("What did we do over Memorial Day weekend?", THU, "holiday", "2022-05-28", "2022-05-30"),
    ("Thanksgiving weekend 2022", THU, "holiday_year", "2022-11-24", "2022-11-27"),
    ("last Labor Day weekend", THU, "holiday_last", "2022-09-03", "2022-09-05"),
    ("on Labor Day", THU, "holiday", "2022-09-05", "2022-09-05"),
    ("on MLK Day", THU, "holiday", "2023-01-16", "2023-01-16"),
    ("Martin Luther King Jr. Day 2022", THU, "holiday_year", "2022-01-17", "2022-01-17"),
    ("on Presidents' Day", THU, "holiday", "2023-02-20", "2023-02-20"),
    ("Did we go out on Valentine's Day?", THU, "holiday", "2023-02-14", "2023-02-14"),
    ("St. Patrick's Day 2022", THU, "holiday_year", "2022-03-17", "2022-03-17"),
    ("for the Fourth of July", THU, "holiday", "2022-07-04", "2022-07-04"),
    ("on Halloween", THU, "holiday", "2022-10-31", "2022-10-31"),
    ("How was Boxing Day?", THU, "holiday", "2022-12-26", "2022-12-26"),
    ("on Groundhog Day", THU, "holiday", "2023-02-02", "2023-02-02"),
    ("on Veterans Day", THU, "holiday", "2022-11-11", "2022-11-11"),
    ("Columbus Day 2022", THU, "holiday_year", "2022-10-10", "2022-10-10"),
    ("Juneteenth 2022", THU, "holiday_year", "2022-06-19", "2022-06-19"),
    ("the closest Christmas", THU, "holiday_nearest", "2022-12-25", "2022-12-25"),
    ("the closest Christmas", SEP10, "holiday_nearest", "2023-12-25", "2023-12-25"),
    ("the most recent Christmas", THU, "holiday_last", "2022-12-25", "2022-12-25"),
    ("the upcoming Thanksgiving", THU, "holiday_next", "2023-11-23", "2023-11-23"),
    ("this Christmas", THU, "holiday_this", "2023-12-25", "2023-12-25"),
    ("Easter this year", THU, "holiday_of_rel_year", "2023-04-09", "2023-04-09"),
    ("Christmas of 2021", THU, "holiday_year", "2021-12-25", "2021-12-25"),
    ("Christmas '21", THU, "holiday_year", "2021-12-25", "2021-12-25"),
    # a named year is a promise: in words, after "in", and other calendars' New Years
    ("Easter Sunday two thousand ten", MAR2013, "holiday_year", "2010-04-04", "2010-04-04"),
    ("Deepavali in 2019", MAR2013, "holiday_year", "2019-10-27", "2019-10-27"),
    ("chinese new year's day 2018", MAR2013, "holiday_year", "2018-02-16", "2018-02-16"),
    ("Islamic New Year 2018", MAR2013, "holiday_year", "2018-09-11", "2018-09-11"),
    ("What did we do on Easter in twenty nineteen?", THU, "holiday_year",
     "2019-04-21", "2019-04-21"),
    ("Chinese New Year's Eve 2018", THU, "holiday_year", "2018-02-15", "2018-02-15"),
    ("Jewish New Year 2018", THU, "holiday_year", "2018-09-10", "2018-09-11"),
    ("Persian New Year 2018", THU, "year", "2018-01-01", "2018-12-31"),
    # a holiday the calendars cannot date in the named year is that year; one across New Year
    # is cut at it
    ("Juneteenth 2019", THU, "holiday_year", "2019-01-01", "2019-12-31"),
    ("Hanukkah 2024", THU, "holiday_year", "2024-12-26", "2024-12-31"),
    # a year named on its own in the sentence dates its recurring cues
    ("In 2019, what did we do at Christmas?", THU, "holiday", "2019-12-25", "2019-12-25"),
    ("What did we do for Deepavali, back in 2019?", MAR2013, "holiday",
     "2019-10-27", "2019-10-27"),
    ("In twenty nineteen, where did we go in June?", THU, "month", "2019-06-01", "2019-06-30"),
    ("What did we do the week before Easter, in 2019?", THU, "period_before",
     "2019-04-14", "2019-04-20"),
    ("In 2019, what did we do in early May?", THU, "month_part", "2019-05-01", "2019-05-10"),
    ("in early 2019 at Easter", THU, "holiday", "2019-04-21", "2019-04-21"),
    ("In 2019, what did we do for Juneteenth?", THU, "year", "2019-01-01", "2019-12-31"),
    ("In 2021, what did we do on Feb 29?", THU, "year", "2021-01-01", "2021-12-31"),
    ("In 2019 we moved. What did we do at Christmas?", THU, "holiday",
     "2022-12-25", "2022-12-25"),  # another sentence
    ("In 2019, what did we do on Saturday?", THU, "year", "2019-01-01", "2019-12-31"),
    ("in May in 2019", THU, "month_year", "2019-05-01", "2019-05-31"),
    ("the summer of twenty nineteen", THU, "season_year", "2019-06-01", "2019-08-31"),
    ("Q3 in 2019", THU, "quarter_year", "2019-07-01", "2019-09-30"),
    ("between May and July twenty nineteen", THU, "between", "2019-05-01", "2019-07-31"),
    ("We spent Christmas at my parents'", THU, "holiday", "2022-12-25", "2022-12-25"),
    ("Thanksgiving was fun", THU, "holiday", "2022-11-24", "2022-11-24"),
    # ordinal weekdays of a month
    ("What did we do the second Sunday of May 2023?", THU, "nth_weekday",
     "2023-05-14", "2023-05-14"),
    ("the first Friday of last month", THU, "nth_weekday", "2023-04-07", "2023-04-07"),
    ("the last Monday of May 2023", THU, "nth_weekday", "2023-05-29", "2023-05-29"),
    ("the third Thursday of November 2022", THU, "nth_weekday", "2022-11-17", "2022-11-17"),
    ("the first Monday in June", THU, "nth_weekday", "2022-06-06", "2022-06-06"),
    ("the 2nd Tuesday of March", THU, "nth_weekday", "2023-03-14", "2023-03-14"),
    ("the fourth Saturday of January 2024", THU, "nth_weekday", "2024-01-27", "2024-01-27"),
    ("the first Sunday of 2023", THU, "nth_weekday", "2023-01-01", "2023-01-01"),
    ("the last Friday of the month", THU, "nth_weekday", "2023-04-28", "2023-04-28"),
    ("the last Friday of the month", SEP10, "nth_weekday", "2023-08-25", "2023-08-25"),
    # the last / n-th week or day of a month or year
    ("the last week of August 2022", THU, "nth_week", "2022-08-25", "2022-08-31"),
    ("What did we do last week of August 2022?", THU, "nth_week", "2022-08-25", "2022-08-31"),
    ("the last week in August", THU, "nth_week", "2022-08-25", "2022-08-31"),
    ("the second week of June 2023", THU, "nth_week", "2023-06-08", "2023-06-14"),
    ("the first week of the year", THU, "nth_week", "2023-01-01", "2023-01-07"),
    ("the first week of the month", THU, "nth_week", "2023-05-01", "2023-05-07"),
    ("the last day of October", THU, "nth_day", "2022-10-31", "2022-10-31"),
    ("the first day of last month", THU, "nth_day", "2023-04-01", "2023-04-01"),
    ("the last day of February 2024", THU, "nth_day", "2024-02-29", "2024-02-29"),
    ("the first day of spring", THU, "nth_day", "2023-03-01", "2023-03-01"),
    ("the last day of the year", THU, "nth_day", "2022-12-31", "2022-12-31"),
    ("the last two weeks of December 2022", THU, "edge_weeks", "2022-12-18", "2022-12-31"),
    ("the first few days of June", THU, "edge_days", "2022-06-01", "2022-06-03"),
    ("the first three days of 2023", THU, "edge_days", "2023-01-01", "2023-01-03"),
    ("the last 10 days of March", THU, "edge_days", "2023-03-22", "2023-03-31"),
    # quarters: Jan-Mar, Apr-Jun, Jul-Sep, Oct-Dec
    ("What did we ship in Q3 2022?", THU, "quarter_year", "2022-07-01", "2022-09-30"),
    ("Q4 2021", THU, "quarter_year", "2021-10-01", "2021-12-31"),
    ("Q2'22", THU, "quarter_year", "2022-04-01", "2022-06-30"),
    ("Q1 of 2023", THU, "quarter_year", "2023-01-01", "2023-03-31"),
    ("2022-Q3", THU, "quarter_year", "2022-07-01", "2022-09-30"),
    ("2022 Q4", THU, "quarter_year", "2022-10-01", "2022-12-31"),
    ("the third quarter of 2022", THU, "quarter_year", "2022-07-01", "2022-09-30"),
    ("in the first quarter of 2023", THU, "quarter_year", "2023-01-01", "2023-03-31"),
    ("the last quarter of 2022", THU, "quarter_year", "2022-10-01", "2022-12-31"),
    ("third-quarter 2021", THU, "quarter_year", "2021-07-01", "2021-09-30"),
    ("the third quarter of last year", THU, "quarter_of_rel_year", "2022-07-01", "2022-09-30"),
    ("Q1 this year", THU, "quarter_of_rel_year", "2023-01-01", "2023-03-31"),
    ("this quarter", THU, "quarter_this", "2023-04-01", "2023-06-30"),
    ("What did we ship last quarter?", THU, "quarter_last", "2023-01-01", "2023-03-31"),
    ("last quarter", JAN3, "quarter_last", "2023-10-01", "2023-12-31"),
    ("next quarter", THU, "quarter_next", "2023-07-01", "2023-09-30"),
    ("in Q3", THU, "quarter", "2022-07-01", "2022-09-30"),
    ("in Q1", THU, "quarter", "2023-01-01", "2023-03-31"),
    ("the second quarter of the year", THU, "quarter", "2023-04-01", "2023-06-30"),
    ("two quarters ago", THU, "n_units_ago", "2022-10-01", "2022-12-31"),
    ("the past quarter", THU, "past_unit", "2023-02-25", "2023-05-24"),
    ("the last 2 quarters", THU, "past_n_units", "2022-11-25", "2023-05-24"),
    ("the end of last quarter", THU, "period_part", "2023-03-01", "2023-03-31"),
    ("earlier this quarter", THU, "earlier_this", "2023-04-01", "2023-05-25"),
    ("the beginning of Q3 2022", THU, "part_of", "2022-07-01", "2022-07-31"),
    # period edges ("the" month / year: the occurrence the direction picks)
    ("the beginning of the year", THU, "period_part", "2023-01-01", "2023-04-30"),
    ("the end of the year", THU, "period_part", "2022-09-01", "2022-12-31"),
    ("the end of the year", JAN3, "period_part", "2023-09-01", "2023-12-31"),
    ("towards the end of the year", THU, "period_part", "2022-09-01", "2022-12-31"),
    ("end of last month", THU, "period_part", "2023-04-21", "2023-04-30"),
    ("start of this week", THU, "period_part", "2023-05-22", "2023-05-23"),
    ("the start of the week", THU, "period_part", "2023-05-22", "2023-05-23"),
    ("the end of the week", THU, "period_part", "2023-05-19", "2023-05-21"),
    ("the end of the month", THU, "period_part", "2023-05-21", "2023-05-31"),
    ("the middle of the month", THU, "period_part", "2023-05-11", "2023-05-20"),
    ("the second half of the month", THU, "period_part", "2023-05-16", "2023-05-31"),
    ("the beginning of next month", THU, "period_part", "2023-06-01", "2023-06-10"),
    ("the first half of last year", THU, "period_part", "2022-01-01", "2022-06-30"),
    ("the very beginning of 2023", THU, "year_part", "2023-01-01", "2023-04-30"),
    ("the end of the summer", THU, "part_of", "2022-08-01", "2022-08-31"),
    ("the end of last summer", THU, "part_of", "2022-08-01", "2022-08-31"),
    ("late last summer", THU, "part_of", "2022-08-01", "2022-08-31"),
    ("late summer 2022", THU, "part_of", "2022-08-01", "2022-08-31"),
    ("early spring", THU, "part_of", "2023-03-01", "2023-03-31"),
    ("mid-summer", THU, "part_of", "2022-07-01", "2022-07-31"),
    # counts and synonyms
    ("What did I do in the last 3 weeks?", THU, "past_n_units", "2023-05-04", "2023-05-24"),
    ("last 3 weeks", THU, "past_n_units", "2023-05-04", "2023-05-24"),
    ("previous 2 days", THU, "past_n_units", "2023-05-23", "2023-05-24"),
    ("last few days", THU, "past_n_units", "2023-05-22", "2023-05-24"),
    ("over the last couple of weeks", THU, "past_n_units", "2023-05-11", "2023-05-24"),
    ("the past fortnight", THU, "past_unit", "2023-05-11", "2023-05-24"),
    ("in the past 24 hours", EARLY_THU, "past_n_units", "2023-05-24", "2023-05-25"),
    ("the previous month", THU, "month_last", "2023-04-01", "2023-04-30"),
    ("the previous week", THU, "week_last", "2023-05-15", "2023-05-21"),
    ("the previous year", THU, "year_last", "2022-01-01", "2022-12-31"),
    ("the previous Saturday", THU, "weekday_last", "2023-05-20", "2023-05-20"),
    ("What did we do two Saturdays ago?", THU, "weekday_ago", "2023-05-13", "2023-05-13"),
    ("two Fridays ago", THU, "weekday_ago", "2023-05-12", "2023-05-12"),
    ("two Thursdays ago", THU, "weekday_ago", "2023-05-11", "2023-05-11"),
    ("three Sundays back", THU, "weekday_ago", "2023-05-07", "2023-05-07"),
    ("a fortnight ago", MON, "n_units_ago", "2023-05-08", "2023-05-14"),
    ("three years back", THU, "n_units_ago", "2020-01-01", "2020-12-31"),
    ("a few weeks back", THU, "n_units_ago", "2023-05-01", "2023-05-07"),
    ("What did we do in two thousand nineteen?", THU, "year", "2019-01-01", "2019-12-31"),
    ("in two thousand and one", THU, "year", "2001-01-01", "2001-12-31"),
    ("the year two thousand", THU, "year", "2000-01-01", "2000-12-31"),
    ("in twenty twenty-two", THU, "year", "2022-01-01", "2022-12-31"),
    ("in nineteen ninety-nine", THU, "year", "1999-01-01", "1999-12-31"),
    ("in twenty oh five", THU, "year", "2005-01-01", "2005-12-31"),
    ("since twenty twenty", THU, "since", "2020-01-01", "2023-05-25"),
    # two-digit years and decades
    ("back in '98", THU, "year", "1998-01-01", "1998-12-31"),
    ("the summer of '69", THU, "season_year", "1969-06-01", "1969-08-31"),
    ("in the '90s", THU, "decade", "1990-01-01", "1999-12-31"),
    ("the 80s", THU, "decade", "1980-01-01", "1989-12-31"),
    # precision: a year that reads as one stays one
    ("the 2019 trip", THU, "year", "2019-01-01", "2019-12-31"),
    ("in 2077", THU, "year", "2077-01-01", "2077-12-31"),
    ("between Christmas and New Year's Eve 2022", THU, "between", "2022-12-25", "2022-12-31"),
    ("before Easter 2023", THU, "before", "2013-05-25", "2023-04-08"),
    ("since Q3 2022", THU, "since", "2022-07-01", "2023-05-25"),
]  # fmt: skip

# Numeric dates read in the order of the bank's country; an ambiguous one without a country
# is no cue. Holidays from the bank's own calendar first; the seasons of its hemisphere.
COUNTRY_ROWS = [
    # (text, country, reference, rule, first, last), or no cue: (text, country, THU, None, ...)
    ("on 3/4/2023", "US", THU, "date_numeric", "2023-03-04", "2023-03-04"),
    ("on 3/4/2023", "GB", THU, "date_numeric", "2023-04-03", "2023-04-03"),
    ("on 3/4/2023", "DE", THU, "date_numeric", "2023-04-03", "2023-04-03"),
    ("on 3/4/2023", None, THU, None, None, None),
    ("on 3/4/2023", "CA", THU, None, None, None),  # both orders common: no order
    ("05/08/2023", "US", THU, "date_numeric", "2023-05-08", "2023-05-08"),
    ("5/8/23", "US", THU, "date_numeric", "2023-05-08", "2023-05-08"),
    ("5/8/23", "AU", THU, "date_numeric", "2023-08-05", "2023-08-05"),
    ("on 5/8/69", "US", THU, "date_numeric", "1969-05-08", "1969-05-08"),
    ("on 3.4.2023", "DE", THU, "date_numeric", "2023-04-03", "2023-04-03"),
    ("on 3.4.2023", None, THU, None, None, None),
    ("on 3/14/2023", "GB", THU, "date_numeric", "2023-03-14", "2023-03-14"),
    ("on 14/3/2023", "US", THU, "date_numeric", "2023-03-14", "2023-03-14"),
    ("on 14/3/2023", "CA", THU, "date_numeric", "2023-03-14", "2023-03-14"),
    ("before 3/4/2023", "GB", THU, "before", "2013-05-25", "2023-04-02"),
    ("Thanksgiving 2023", "CA", THU, "holiday_year", "2023-10-09", "2023-10-09"),
    ("Thanksgiving 2023", "GB", THU, "holiday_year", "2023-11-23", "2023-11-23"),
    ("Mother's Day 2023", "GB", THU, "holiday_year", "2023-03-19", "2023-03-19"),
    ("Mother's Day 2023", "US", THU, "holiday_year", "2023-05-14", "2023-05-14"),
    ("on Independence Day", "IN", THU, "holiday", "2022-08-15", "2022-08-15"),
    ("Labor Day 2023", "DE", THU, "holiday_year", "2023-05-01", "2023-05-01"),
    ("Easter 2023", "GR", THU, "holiday_year", "2023-04-16", "2023-04-16"),  # Orthodox
    ("Good Friday 2023", "GR", THU, "holiday_year", "2023-04-14", "2023-04-14"),
    ("Black Friday 2023", "CA", THU, "holiday_year", "2023-11-24", "2023-11-24"),  # US-based
    ("summer 2022", "AU", THU, "season_year", "2022-12-01", "2023-02-28"),
    ("last winter", "AU", THU, "season_last", "2022-06-01", "2022-08-31"),
    ("in the summer", "AU", THU, "season", "2022-12-01", "2023-02-28"),
    ("this summer", "AU", JAN3, "season_this", "2023-12-01", "2024-02-29"),
    ("the end of the summer", "NZ", THU, "part_of", "2023-02-01", "2023-02-28"),
]  # fmt: skip

VAGUE = [
    "recently",
    "I have been painting a lot lately.",
    "these days",
    "Nowadays I read more.",
    "a while ago",
    "I saw her the other day",
    "not long ago",
    "in the past",
    "That was years ago.",
    "I've been so busy as of late",
    "Of late, I read more.",
]

NO_CUE = [
    "I spent two summers in Spain",
    "I have just gone out",
    # a stay's last night, not yesterday's
    "Where did we eat on our last night in Rome?",
    "the last night of the trip",
    "the weekend has gone well",
    # "the 3rd" alone, or after a period's words that are no period
    "Which was the 3rd?",
    "What did I do the day after the 3rd time I hiked?",
    "the page of the 3rd.",
    # "a" / "every" before a weekday: no particular day
    "When did I last cook a Sunday roast?",
    "I go swimming every Sunday",
    "three Christmases in a row at Grandma's",
    "the summer before we met",
    "What did I do my first March in Leeds?",  # a day in words before its month takes "of"
    "Who finished the second of the races?",
    "When did I first cook it?",
    "May I ask you something?",
    "It may rain",
    "It may rain in the afternoon but we may go out",
    "March said hello to everyone",
    "We march 5 miles every morning",
    "I love spring rolls",
    "We found a hot spring",
    "He has a spring in his step",
    "Don't fall asleep",
    "The leaves fall slowly",
    "When did Caroline go to the LGBTQ support group?",
    "How long has Melanie been painting?",
    "What did she say at 5 pm?",
    "Meet me at 10:30",
    "I have 2022 reasons",
    "How long ago was Caroline's 18th birthday?",
    "How many years ago did she start?",
    "The last day of the trip was great",
    "We live on the 3rd floor",
    "Call 555-2022 for tickets",
    "It costs $2023",
    "I got 3/4 of the answers",
    "What time is it?",
    "Any plans for the weekend?",
    "I'm playing Cyberpunk in the afternoon",
    "The empire's fall of power",
    "in may",
    "By the way, how are you?",
    "a painting by Caroline",
    "We went by car",
    "Stand by me",
    "I'm feeling inspired by autumn",
    "a mural inspired by the summer",
    "as of now",
    "a lot of late nights",
    "",
    # numbers that are not years
    "pay the 2000 invoice",
    "I'm playing Cyberpunk 2077",
    "We stayed in room 1984",
    "flight 2020 was delayed",
    "see page 1999",
    "I walked 2000 km",
    "twenty five people came",
    "two thousand people came",
    "she is in her 90s",
    "my last 2 years of college",
    "in the last 5 minutes of the game",
    # numeric forms that are not dates
    "version 1.2.23",
    "Python 3.10.12",
    "the 2011-12 season",
    "the 2019/20 season",
    "a 1/2000 chance",
    "on 3/4/2023",  # ambiguous without a country
    "13/13/2013",
    # quarters that are not the year's
    "we were trailing in the 4th quarter",
    "in the last quarter we scored twice",
    "the third quarter",
    "a quarter of the cake",
    "quarter past five",
    "q3 was hard",
    "a Q&A session",
    # holiday names that are not a time, or not a holiday
    "I love the Christmas tree",
    "Do you have any favorite Thanksgiving traditions?",
    "Thanksgiving dinner with family sounds great!",
    "We visited Easter Island",
    "the school's spring festival",
    "a holiday in Spain",
    "Happy holidays to you all!",
    "my Christmas holiday photos",
    "How many holidays do I get?",
    "new year resolutions",
    # edges and ordinals without a time to hang on
    "at the end of the day",
    "the end of the season",
    "the first day of school",
]


@pytest.mark.parametrize(("text", "reference", "rule", "first", "last"), GROUNDED)
def test_grounds_the_cue(text: str, reference: datetime, rule: str, first: str, last: str):
    cues = detect_cues(text, reference)
    assert cues, f"no cue found in {text!r}"
    cue = asked_cue(cues)
    assert (cue.rule, cue.range) == (rule, days(first, last))
    assert has_temporal_cue(text)


@pytest.mark.parametrize(("text", "country", "reference", "rule", "first", "last"), COUNTRY_ROWS)
def test_the_country_reads_numeric_dates_holidays_and_seasons(
    text: str, country: str | None, reference: datetime, rule: str | None, first: str, last: str
):
    cues = detect_cues(text, reference, country=country)
    assert has_temporal_cue(text, country=country) == bool(cues)
    if rule is None:
        assert cues == []
        return
    assert cues, f"no cue found in {text!r} for {country}"
    cue = asked_cue(cues)
    assert (cue.rule, cue.range) == (rule, days(first, last))


def test_country_codes_are_checked_and_case_blind():
    assert detect_cues("on 3/4/2023", THU, country="gb") == detect_cues(
        "on 3/4/2023", THU, country="GB"
    )
    with pytest.raises(ValueError, match="country"):
        detect_cues("on 3/4/2023", THU, country="Britain")


@pytest.mark.parametrize(
    "text",
    ["the fifth Monday of February 2023", "the fifth Saturday of June 2023",
     "the week before Juneteenth 2019", "the fifth week of February 2023",
     "the fifth weekend of June 2023"],
)
def test_a_cue_the_calendar_cannot_hold_keeps_no_range(text: str):
    cues = detect_cues(text, THU)
    assert [cue.range for cue in cues] in ([None], [])
    assert question_range(cues) is None


@pytest.mark.parametrize("text", VAGUE)
def test_vague_cue_is_detected_but_not_grounded(text: str):
    cues = detect_cues(text, THU)
    assert [(c.rule, c.range) for c in cues] == [("vague", None)]
    assert has_temporal_cue(text)
    assert question_range(cues) is None


@pytest.mark.parametrize("text", NO_CUE)
def test_no_cue(text: str):
    assert detect_cues(text, THU) == []
    assert not has_temporal_cue(text)


def test_cue_reports_matched_text_and_span():
    text = "What did Melanie do in the week before 9 June 2023?"
    [cue] = detect_cues(text, JUN20)
    assert cue.text == "the week before 9 June 2023"
    assert text[cue.span[0] : cue.span[1]] == cue.text


def test_longest_match_wins_over_its_parts():
    [cue] = detect_cues("the week before 9 June 2023", THU)
    assert cue.rule == "period_before"


def test_several_cues_come_back_in_text_order():
    cues = detect_cues("Yesterday I remembered last summer and 2019.", THU)
    assert [c.rule for c in cues] == ["yesterday", "season_last", "year"]


def test_question_range_picks_the_narrowest_grounded_cue():
    cues = detect_cues("In 2023, recently, what did she do the week before 9 June 2023?", THU)
    assert [c.rule for c in cues] == ["year", "vague", "period_before"]
    assert question_range(cues) == days("2023-06-02", "2023-06-08")


def test_question_range_is_none_without_grounded_cues():
    assert question_range([]) is None
    assert question_range(detect_cues("What did she do recently?", THU)) is None


def test_before_is_clipped_to_the_timeline():
    timeline = TimeRange(midnight("2023-01-15") + 10 * 3600, midnight("2023-07-01") + 3600)
    [before] = detect_cues("before June 2023", THU, timeline)
    [after] = detect_cues("after May 2023", THU, timeline)
    assert before.range == TimeRange(midnight("2023-01-15"), midnight("2023-06-01"))
    assert after.range == TimeRange(midnight("2023-06-01"), midnight("2023-07-02"))


def test_open_range_outside_the_timeline_falls_back_to_a_year():
    timeline = TimeRange(midnight("2023-01-01"), midnight("2023-06-01"))
    [before] = detect_cues("before 2020", THU, timeline)
    [after] = detect_cues("after 2024", THU, timeline)
    assert before.range == days("2019-01-01", "2019-12-31")
    assert after.range == days("2025-01-01", "2025-12-31")


def test_days_are_cut_at_midnight_in_the_reference_timezone():
    pacific = timezone(timedelta(hours=-7))
    reference = datetime(2023, 5, 25, 22, 0, tzinfo=pacific)  # 2023-05-26 05:00 UTC
    [cue] = detect_cues("yesterday", reference)
    start = int(datetime(2023, 5, 24, tzinfo=pacific).timestamp())
    assert cue.range == TimeRange(start, start + DAY)


def test_a_day_across_a_daylight_saving_change_is_a_local_day():
    try:
        berlin = ZoneInfo("Europe/Berlin")
    except ZoneInfoNotFoundError:
        pytest.skip("no time zone database")
    [cue] = detect_cues("yesterday", datetime(2023, 3, 27, 9, 0, tzinfo=berlin))
    start = datetime(2023, 3, 26, tzinfo=berlin)
    end = datetime(2023, 3, 27, tzinfo=berlin)
    assert cue.range == TimeRange(int(start.timestamp()), int(end.timestamp()))
    assert cue.range.end - cue.range.start == 23 * 3600


def test_naive_reference_is_read_as_utc():
    naive = detect_cues("yesterday", THU.replace(tzinfo=None))
    assert naive == detect_cues("yesterday", THU)


def test_overflowing_cue_is_kept_without_range():
    [cue] = detect_cues("9999 years ago", THU)
    assert (cue.rule, cue.range) == ("n_units_ago", None)


@pytest.mark.parametrize(
    "text", [row[0] for row in GROUNDED + COUNTRY_ROWS] + VAGUE + NO_CUE
)
def test_trigger_word_gate_never_hides_a_cue(text: str):
    for order in ("mdy", "dmy", None):
        assert _signature(_find(text, order=order)) == _signature(
            _find(text, gated=False, order=order)
        )


def _signature(found: list) -> list[tuple[int, int, str]]:
    return [(f.start, f.end, f.rule.name) for f in found]


countries = st.sampled_from([None, "US", "GB", "CA", "AU", "IN", "GR", "ZZ"])
references = st.datetimes(
    min_value=datetime(1990, 1, 1),
    max_value=datetime(2040, 12, 31),
    timezones=st.sampled_from([UTC, timezone(timedelta(hours=-11)), timezone(timedelta(hours=14))]),
)
VOCABULARY = sorted(
    {
        word
        for row in GROUNDED + [(t,) for t in VAGUE + NO_CUE]
        for word in row[0].replace("?", " ").replace(".", " ").split()
    }
    | {"the", "of", "before", "after", "since", "between", "and", "from", "to", "-", ",", "31",
       "29", "2020", "1999", "13/13/2013", "Feb", "March", "may", "ago", "weekend", "Q2",
       "quarter", "3/4/2023", "'99", "Eid", "Easter", "Christmas", "last", "first",
       "Sunday", "two", "thousand", "twenty", "nineteen"}
)  # fmt: skip
sentences = st.lists(st.sampled_from(VOCABULARY), max_size=12).map(" ".join)


def _check_invariants(text: str, reference: datetime, country: str | None = None) -> None:
    cues = detect_cues(text, reference, country=country)
    assert has_temporal_cue(text, country=country) == bool(cues)
    previous_end = 0
    for cue in cues:
        assert text[cue.span[0] : cue.span[1]] == cue.text
        assert cue.span[0] >= previous_end
        previous_end = cue.span[1]
        if cue.range is not None:
            assert cue.range.start <= cue.range.end
    narrowest = question_range(cues)
    assert narrowest is None or any(c.range == narrowest for c in cues)


@settings(max_examples=300, deadline=None)
@given(text=st.text(), reference=references)
def test_any_text_is_handled(text: str, reference: datetime):
    _check_invariants(text, reference)


@settings(max_examples=400, deadline=None)
@given(text=sentences, reference=references, country=countries)
def test_temporal_word_salad_is_handled(text: str, reference: datetime, country: str | None):
    _check_invariants(text, reference, country)
    assert _signature(_find(text)) == _signature(_find(text, gated=False))


@settings(max_examples=200, deadline=None)
@given(
    day=st.dates(min_value=date(1990, 1, 1), max_value=date(2040, 12, 31)),
    reference=references,
    country=st.sampled_from(["US", "GB"]),
)
def test_numeric_dates_ground_to_that_day_in_the_country_order(
    day: date, reference: datetime, country: str
):
    expected = int(datetime(day.year, day.month, day.day, tzinfo=reference.tzinfo).timestamp())
    first, second = (day.month, day.day) if country == "US" else (day.day, day.month)
    for text in (f"{first}/{second}/{day.year}", f"{first:02d}.{second:02d}.{day.year}"):
        [cue] = detect_cues(text, reference, country=country)
        assert cue.range == TimeRange(expected, expected + DAY), text


@settings(max_examples=200, deadline=None)
@given(day=st.dates(min_value=date(1990, 1, 1), max_value=date(2040, 12, 31)), reference=references)
def test_written_dates_ground_to_that_day(day: date, reference: datetime):
    expected = int(datetime(day.year, day.month, day.day, tzinfo=reference.tzinfo).timestamp())
    for text in (f"{day.day} {day:%B %Y}", f"{day:%B} {day.day}, {day.year}", day.isoformat()):
        [cue] = detect_cues(text, reference)
        assert cue.range == TimeRange(expected, expected + DAY), text


def test_question_range_prefers_a_calendar_date_over_a_relative_cue():
    reference = datetime(2022, 11, 10, tzinfo=timezone.utc)
    cues = detect_cues("What did Joanna just finish last Friday on 23 January, 2022?", reference)
    assert {c.rule for c in cues} >= {"weekday_last"}
    chosen = question_range(cues)
    assert chosen is not None
    assert datetime.fromtimestamp(chosen.start, tz=timezone.utc).date().isoformat() == "2022-01-23"


# Direction: which occurrence a recurring cue means (reference Thursday 2023-05-25 unless noted).
APR23 = datetime(2023, 4, 23, 12, 0, tzinfo=UTC)  # Sunday; Apr 8 and May 8 are 15 days away

DIRECTED = [
    # text, reference, rule, past, future, nearest (each: first and last day)
    ("in June", THU, "month", ("2022-06-01", "2022-06-30"), ("2023-06-01", "2023-06-30"),
     ("2023-06-01", "2023-06-30")),
    ("in May", THU, "month", ("2023-05-01", "2023-05-31"), ("2023-05-01", "2023-05-31"),
     ("2023-05-01", "2023-05-31")),
    ("in April", THU, "month", ("2023-04-01", "2023-04-30"), ("2024-04-01", "2024-04-30"),
     ("2023-04-01", "2023-04-30")),
    ("in December", JAN3, "month", ("2023-12-01", "2023-12-31"), ("2024-12-01", "2024-12-31"),
     ("2023-12-01", "2023-12-31")),
    ("on Saturday", THU, "weekday", ("2023-05-20", "2023-05-20"), ("2023-05-27", "2023-05-27"),
     ("2023-05-27", "2023-05-27")),
    ("on Tuesday", THU, "weekday", ("2023-05-23", "2023-05-23"), ("2023-05-30", "2023-05-30"),
     ("2023-05-23", "2023-05-23")),
    ("on Thursday", THU, "weekday", ("2023-05-25", "2023-05-25"), ("2023-05-25", "2023-05-25"),
     ("2023-05-25", "2023-05-25")),
    ("on Monday", THU, "weekday", ("2023-05-22", "2023-05-22"), ("2023-05-29", "2023-05-29"),
     ("2023-05-22", "2023-05-22")),
    ("on Sunday", THU, "weekday", ("2023-05-21", "2023-05-21"), ("2023-05-28", "2023-05-28"),
     ("2023-05-28", "2023-05-28")),
    ("May 7", THU, "month_day", ("2023-05-07", "2023-05-07"), ("2024-05-07", "2024-05-07"),
     ("2023-05-07", "2023-05-07")),
    ("on 28 May", THU, "day_month", ("2022-05-28", "2022-05-28"), ("2023-05-28", "2023-05-28"),
     ("2023-05-28", "2023-05-28")),
    ("on Feb 29", THU, "month_day", ("2020-02-29", "2020-02-29"), ("2024-02-29", "2024-02-29"),
     ("2024-02-29", "2024-02-29")),
    ("December 31", JAN3, "month_day", ("2023-12-31", "2023-12-31"),
     ("2024-12-31", "2024-12-31"), ("2023-12-31", "2023-12-31")),
    ("May 8-10", THU, "date_span", ("2023-05-08", "2023-05-10"), ("2024-05-08", "2024-05-10"),
     ("2023-05-08", "2023-05-10")),
    ("on the 8th.", THU, "day_of_month", ("2023-05-08", "2023-05-08"),
     ("2023-06-08", "2023-06-08"), ("2023-06-08", "2023-06-08")),
    ("on the 8th.", APR23, "day_of_month", ("2023-04-08", "2023-04-08"),
     ("2023-05-08", "2023-05-08"), ("2023-04-08", "2023-04-08")),  # a tie goes to the past
    ("on the 31st.", THU, "day_of_month", ("2023-03-31", "2023-03-31"),
     ("2023-05-31", "2023-05-31"), ("2023-05-31", "2023-05-31")),
    ("in the summer", THU, "season", ("2022-06-01", "2022-08-31"), ("2023-06-01", "2023-08-31"),
     ("2023-06-01", "2023-08-31")),
    ("in the spring", THU, "season", ("2023-03-01", "2023-05-31"), ("2023-03-01", "2023-05-31"),
     ("2023-03-01", "2023-05-31")),
    ("in the winter", THU, "season", ("2022-12-01", "2023-02-28"), ("2023-12-01", "2024-02-29"),
     ("2022-12-01", "2023-02-28")),
    ("at Christmas", THU, "holiday", ("2022-12-25", "2022-12-25"), ("2023-12-25", "2023-12-25"),
     ("2022-12-25", "2022-12-25")),
    ("for Halloween", THU, "holiday", ("2022-10-31", "2022-10-31"),
     ("2023-10-31", "2023-10-31"), ("2023-10-31", "2023-10-31")),
    ("on Thanksgiving", THU, "holiday", ("2022-11-24", "2022-11-24"),
     ("2023-11-23", "2023-11-23"), ("2022-11-24", "2022-11-24")),  # 182 days either way
    ("over the weekend", THU, "weekend", ("2023-05-20", "2023-05-21"),
     ("2023-05-27", "2023-05-28"), ("2023-05-27", "2023-05-28")),
    ("over the weekend", MON, "weekend", ("2023-05-20", "2023-05-21"),
     ("2023-05-27", "2023-05-28"), ("2023-05-20", "2023-05-21")),
    ("over the weekend", SUN, "weekend", ("2023-05-27", "2023-05-28"),
     ("2023-05-27", "2023-05-28"), ("2023-05-27", "2023-05-28")),
    ("late June", THU, "month_part", ("2022-06-21", "2022-06-30"), ("2023-06-21", "2023-06-30"),
     ("2023-06-21", "2023-06-30")),
    ("early May", THU, "month_part", ("2023-05-01", "2023-05-10"), ("2024-05-01", "2024-05-10"),
     ("2023-05-01", "2023-05-10")),
    # an anchor follows the direction, except after "since" (X has begun)
    ("before June", THU, "before", ("2013-05-25", "2022-05-31"), ("2013-05-25", "2023-05-31"),
     ("2013-05-25", "2023-05-31")),
    ("until Saturday", THU, "until", ("2013-05-25", "2023-05-20"),
     ("2013-05-25", "2023-05-27"), ("2013-05-25", "2023-05-27")),
    ("since Saturday", THU, "since", ("2023-05-20", "2023-05-25"),
     ("2023-05-20", "2023-05-25"), ("2023-05-20", "2023-05-25")),
    ("ever since June", THU, "since", ("2022-06-01", "2023-05-25"),
     ("2022-06-01", "2023-05-25"), ("2022-06-01", "2023-05-25")),
    # holidays from the calendars, quarters, and parts of a recurring anchor
    ("at Easter", THU, "holiday", ("2023-04-09", "2023-04-09"), ("2024-03-31", "2024-03-31"),
     ("2023-04-09", "2023-04-09")),
    ("for Diwali", THU, "holiday", ("2022-10-24", "2022-10-24"), ("2023-11-12", "2023-11-12"),
     ("2023-11-12", "2023-11-12")),
    ("in Q3", THU, "quarter", ("2022-07-01", "2022-09-30"), ("2023-07-01", "2023-09-30"),
     ("2023-07-01", "2023-09-30")),
    ("the last weekend of May", THU, "nth_weekend", ("2022-05-28", "2022-05-29"),
     ("2023-05-27", "2023-05-28"), ("2023-05-27", "2023-05-28")),
    ("the first Monday in June", THU, "nth_weekday", ("2022-06-06", "2022-06-06"),
     ("2023-06-05", "2023-06-05"), ("2023-06-05", "2023-06-05")),
    ("the first weekend of May", THU, "nth_weekend", ("2023-05-06", "2023-05-07"),
     ("2024-05-04", "2024-05-05"), ("2023-05-06", "2023-05-07")),
    ("the end of the year", THU, "period_part", ("2022-09-01", "2022-12-31"),
     ("2023-09-01", "2023-12-31"), ("2023-09-01", "2023-12-31")),
    ("the end of the month", THU, "period_part", ("2023-05-21", "2023-05-31"),
     ("2023-05-21", "2023-05-31"), ("2023-05-21", "2023-05-31")),
]  # fmt: skip


@pytest.mark.parametrize(("text", "reference", "rule", "past", "future", "nearest"), DIRECTED)
def test_direction_picks_the_occurrence(text, reference, rule, past, future, nearest):
    expected = {"past": past, "future": future, "nearest": nearest}
    for direction in DIRECTIONS:
        [cue] = detect_cues(text, reference, direction=direction)
        assert (cue.rule, cue.range) == (rule, days(*expected[direction])), direction
    assert detect_cues(text, reference) == detect_cues(text, reference, direction="past")


@pytest.mark.parametrize(
    "text",
    ["last Friday", "next Friday", "this Sunday", "2 days ago", "8 May 2023", "tomorrow",
     "yesterday", "last summer", "next May", "this weekend", "next weekend", "in 2022",
     "the week before 9 June 2023", "as of December 2023", "Christmas 2022", "last Christmas",
     "on the 8th of last month", "past week", "early 2023", "a few days ago", "recently",
     "Easter 2022", "last Easter", "the closest Christmas", "Q3 2022", "last quarter",
     "the second Sunday of May 2023", "3/14/2023", "two Saturdays ago", "last 3 weeks",
     "the first Friday of last month", "in two thousand nineteen"],
)  # fmt: skip
def test_explicit_cues_ignore_the_direction(text: str):
    for reference in (THU, SAT, MON, JAN3):
        grounded = {tuple(detect_cues(text, reference, direction=d)) for d in DIRECTIONS}
        assert len(grounded) == 1, text


def test_unknown_direction_is_refused():
    with pytest.raises(ValueError, match="direction"):
        detect_cues("in June", THU, direction="backwards")
    with pytest.raises(ValueError, match="direction"):
        detect_cues("no cue here", THU, direction="")


@settings(max_examples=200, deadline=None)
@given(text=sentences, reference=references)
def test_directions_find_the_same_cues(text: str, reference: datetime):
    by_direction = {d: detect_cues(text, reference, direction=d) for d in DIRECTIONS}
    shapes = {tuple((c.text, c.rule, c.span) for c in cues) for cues in by_direction.values()}
    assert len(shapes) == 1
    for cues in by_direction.values():
        for cue in cues:
            assert cue.range is None or cue.range.start <= cue.range.end


def test_as_of_and_by_start_at_the_timeline_start():
    timeline = TimeRange(midnight("2023-01-15") + 10 * 3600, midnight("2024-03-01"))
    question = "How long has Tim been playing the piano, as of December 2023?"
    [as_of] = detect_cues(question, JAN3, timeline)
    [by] = detect_cues("How many tournaments has Nate won by July 10, 2023?", JAN3, timeline)
    assert as_of.rule == "as_of" and as_of.text == "as of December 2023"
    assert as_of.range == TimeRange(midnight("2023-01-15"), midnight("2024-01-01"))
    assert by.range == TimeRange(midnight("2023-01-15"), midnight("2023-07-11"))


def test_as_of_late_is_vague_but_as_of_late_may_is_a_range():
    [vague] = detect_cues("as of late", THU)
    [late_may] = detect_cues("as of late May", THU)
    assert (vague.rule, vague.range) == ("vague", None)
    assert (late_may.rule, late_may.range) == ("as_of", days("2013-05-25", "2023-05-31"))


# Recently: vague, not grounded, but a window for the recall frame to use.

RECENT = ["recently", "lately", "these days", "Nowadays", "as of late", "of late.",
          "in recent weeks", "in recent months", "in recent days"]  # fmt: skip
NOT_RECENT = ["the other day", "a while ago", "in recent years", "not long ago", "years ago",
              "in the past", "last week", "yesterday", "in June"]  # fmt: skip


@pytest.mark.parametrize("text", RECENT)
def test_recent_cues_stay_vague_and_are_recognised(text: str):
    [cue] = detect_cues(text, THU)
    assert (cue.rule, cue.range) == ("vague", None)
    assert is_recent_cue(cue)


@pytest.mark.parametrize("text", NOT_RECENT)
def test_other_cues_are_not_recent(text: str):
    [cue] = detect_cues(text, THU)
    assert not is_recent_cue(cue)


def test_recent_window_is_the_days_before_the_reference_day_and_that_day():
    assert recent_window(THU) == days("2023-04-25", "2023-05-25")
    assert recent_window(THU, days=7) == days("2023-05-18", "2023-05-25")
    assert recent_window(THU, days=0) == days("2023-05-25", "2023-05-25")
    assert recent_window(MAR1, days=1) == days("2023-02-28", "2023-03-01")
    assert recent_window(THU.replace(tzinfo=None)) == recent_window(THU)
    with pytest.raises(ValueError):
        recent_window(THU, days=-1)


def test_recent_window_cuts_days_in_the_reference_timezone():
    pacific = timezone(timedelta(hours=-7))
    reference = datetime(2023, 5, 25, 22, 0, tzinfo=pacific)  # 2023-05-26 05:00 UTC
    window = recent_window(reference, days=2)
    assert window.start == int(datetime(2023, 5, 23, tzinfo=pacific).timestamp())
    assert window.end == int(datetime(2023, 5, 26, tzinfo=pacific).timestamp())


def _group_node(items: list, number: int) -> list | None:
    """The parsed contents of capturing group ``number`` in a parsed regular expression."""
    for op, arg in items:
        if op is sre_constants.SUBPATTERN:
            if arg[0] == number:
                return list(arg[-1])
            children = [arg[-1]]
        elif op is sre_constants.BRANCH:
            children = arg[1]
        elif op in (sre_constants.MAX_REPEAT, sre_constants.MIN_REPEAT):
            children = [arg[2]]
        elif op in (sre_constants.ASSERT, sre_constants.ASSERT_NOT):
            children = [arg[1]]
        else:
            continue
        for child in children:
            found = _group_node(list(child), number)
            if found is not None:
                return found
    return None


def _texts(items: list) -> set[str]:
    """Every text a parsed alternation of words can match, a run of whitespace as one space;
    an assertion error for anything else, so that a new kind of group is not silently missed."""
    space = [(sre_constants.CATEGORY, sre_constants.CATEGORY_SPACE)]
    texts = {""}
    for op, arg in items:
        if op is sre_constants.LITERAL:
            options = {chr(arg)}
        elif op is sre_constants.BRANCH:
            options = set().union(*(_texts(list(branch)) for branch in arg[1]))
        elif op is sre_constants.SUBPATTERN:
            options = _texts(list(arg[-1]))
        elif op is sre_constants.IN and list(arg) == space:
            options = {" "}
        elif op is sre_constants.MAX_REPEAT and _texts(list(arg[2])) == {" "}:
            options = {" "} if arg[0] >= 1 else {"", " "}
        else:
            raise AssertionError(f"cannot list the texts of {op} {arg}")
        texts = {text + option for text in texts for option in options}
    return texts


def _group_texts(pattern: re.Pattern[str], group: str) -> set[str]:
    parsed = list(sre_parse.parse(pattern.pattern, pattern.flags))
    node = _group_node(parsed, pattern.groupindex[group])
    assert node is not None, group
    return _texts(node)


def test_every_rule_name_the_engine_can_produce_is_written_in_the_source():
    """A template rule ("nth_{unit}") lists the names it expands to, so that a search for one
    ("nth_week") finds the code; the list must be what the rule's pattern can produce."""
    package = Path(time_package.__file__).parent
    source = "\n".join(path.read_text() for path in sorted(package.glob("*.py")))
    templates = 0
    for rule in _RULES:
        if "{" in rule.name:
            templates += 1
            rels = _group_texts(rule.pattern, "rel") if "{rel}" in rule.name else {""}
            units = _group_texts(rule.pattern, "unit") if "{unit}" in rule.name else {""}
            produced = {rule.name_with(rel, unit) for rel in rels for unit in units}
            assert produced == set(rule.expands_to), rule.name
        else:
            produced = {rule.name}
        for name in produced:
            assert f'"{name}"' in source, f"{name} ({rule.name}) is not written out"
    assert templates >= 13


def test_a_template_rule_must_list_the_names_it_expands_to():
    pattern = re.compile(r"(?P<unit>week|day)")
    with pytest.raises(ValueError, match="expands_to"):
        _Rule("nth_{unit}", pattern, frozenset(), None)
    with pytest.raises(ValueError, match="expands_to"):
        _Rule("nth", pattern, frozenset(), None, expands_to=("nth_week",))
    with pytest.raises(ValueError, match="'week_nth' in expands_to"):
        _Rule("nth_{unit}", pattern, frozenset(), None, expands_to=("nth_week", "week_nth"))
    rule = _Rule("nth_{unit}", pattern, frozenset(), None, expands_to=("nth_week", "nth_day"))
    assert rule.name_with("", "Week") == "nth_week"


def test_every_rule_pattern_compiles_with_the_rule_flags():
    """Rule regexes are compiled at their first use, not at import: a typo in one must still
    fail a test, not only the question that first reaches it."""
    for rule in [*_RULES, *_ANCHOR_RULES]:
        assert rule.pattern.flags & _FLAGS == _FLAGS, rule.name


@pytest.mark.parametrize(("text", "expected"), [
    ("What did I do on 31 February 2026?", ["31 February 2026"]),
    ("on April 31st", ["April 31st"]),
    ("the 30th of February", ["30th of February"]),
    ("29 Feb 2023", ["29 Feb 2023"]),  # not a leap year
    ("29 Feb 2024", []),
    ("31 May and May 31", []),
    ("May I ask about 40 March?", []),  # no day of a month
])
def test_impossible_dates_are_named_not_read(text, expected):
    assert time_package.impossible_dates(text) == expected
    assert not any(cue.text in expected for cue in detect_cues(text, datetime(2026, 12, 3)))


@pytest.mark.parametrize(("text", "rule", "first", "last"), [
    # short and other names of periods, spelled out before the rules run (``time.spelling``)
    ("what did I do last yr", "year_last", "2022-01-01", "2022-12-31"),
    ("this qtr", "quarter_this", "2023-04-01", "2023-06-30"),
    ("the past 2 wks", "past_n_units", "2023-05-11", "2023-05-24"),
    ("the current week", "week_this", "2023-05-22", "2023-05-28"),
    ("the current month", "month_this", "2023-05-01", "2023-05-31"),
    ("this season", "season_this", "2023-03-01", "2023-05-31"),
])
def test_short_and_other_names_of_periods(text: str, rule: str, first: str, last: str):
    cue = asked_cue(detect_cues(text, THU))
    assert (cue.rule, cue.range) == (rule, days(first, last))
    assert text[cue.span[0]:cue.span[1]] == cue.text  # the question's own words


@pytest.mark.parametrize("text", [
    "Where did I work in my current job?", "What did I watch in the season finale?",
    "Who is mo?", "What is this season's coat?",
])
def test_names_of_periods_that_are_no_period(text: str):
    assert question_range(detect_cues(text, THU)) is None

