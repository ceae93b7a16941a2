"""Reading a user's time arguments (``--at``, ``--as-of``): a time of day is read whole or
refused, never dropped."""

from __future__ import annotations

from datetime import datetime
from zoneinfo import ZoneInfo

import pytest

from ramem_local.errors import InputError
from ramem_local.recall.when import parse_when

TZ = ZoneInfo("Europe/Berlin")


def read(text: str) -> datetime:
    return datetime.fromtimestamp(parse_when(text, TZ), TZ)


@pytest.mark.parametrize("text", [
    "yesterday 99:99", "yesterday at 25:00", "yesterday at 13:61", "today 24:00",
    "2 days ago at 19:75", "yesterday at 13 pm", "yesterday at 7.75pm", "yesterday 10:30:61",
])
def test_an_impossible_time_after_a_relative_day_is_refused(text):
    with pytest.raises(InputError, match="no such time of day"):
        parse_when(text, TZ)


@pytest.mark.parametrize("text", ["2024-05-04 25:00", "3 May 2023 25:00"])
def test_an_impossible_time_after_a_date_is_refused(text):
    with pytest.raises(InputError, match="cannot read the date"):
        parse_when(text, TZ)


@pytest.mark.parametrize(("text", "clock"), [
    ("yesterday at 5 pm", (17, 0)), ("yesterday 14:30", (14, 30)),
    ("2 days ago at 9am", (9, 0)), ("yesterday 7:30pm", (19, 30)),
    ("yesterday at 12 am", (0, 0)), ("yesterday at 12:30 p.m.", (12, 30)),
    ("on 5 May 2024 at 7.30pm", (19, 30)), ("at 9:15 yesterday", (9, 15)),
    ("3 May 2023 10:30:15", (10, 30)),
])
def test_a_possible_time_is_read_whole(text, clock):
    assert (read(text).hour, read(text).minute) == clock


def test_a_dotted_date_is_not_a_time():
    assert read("5.05.2024").date().isoformat() == "2024-05-05"


@pytest.mark.parametrize("text", ["14:30", "at 2 pm"])
def test_a_time_alone_is_its_latest_moment_not_a_day_in_january(text):
    """"14:30" was read as 5 January at 14:30 (the first-month preference meant for "March
    2026" applied to a time alone)."""
    now = datetime.now(TZ)
    moment = read(text)
    assert moment <= now
    assert (now - moment).total_seconds() < 86400
