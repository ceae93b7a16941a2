"""Reading matched text: what a match names (a month, a year, a count, a quarter, ...) and
the acceptors that decide whether a match is a cue at all.

Acceptors read the text only (and the date order of the bank's country), so detection never
depends on the reference time.
"""

from __future__ import annotations

import re

from ..calendars import CAPITALISED_ONLY, OTHER_NEW_YEARS, holiday_key
from .calendar_math import _Context, _days_in_month
from .vocabulary import (
    _AMBIGUOUS_MONTHS,
    _FAR_YEAR,
    _FLAGS,
    _LABEL_WORDS,
    _MONTH_NUMBERS,
    _NEXT_WORD,
    _NUMBER_WORDS,
    _ONES,
    _ORDINALS,
    _PREVIOUS_WORD,
    _S_VERBS,
    _TEENS,
    _TENS,
    _UNIT_WORDS,
    _WORD,
    _YEAR_PREPOSITIONS,
    DAY_ORDINALS,
)

# Reading matched text.


_CANONICAL_REL = {
    "last": "last", "past": "last", "previous": "last", "this past": "last", "this": "this",
    "the": "this", "next": "next", "coming": "next", "this coming": "next", "before": "before",
    "prior to": "before", "earlier than": "before", "after": "after", "following": "after",
    "later than": "after", "since": "since", "ever since": "since", "until": "until",
    "till": "until", "up until": "until", "upcoming": "next", "most recent": "last",
    "latest": "last", "closest": "nearest", "nearest": "nearest", "leading up to": "before",
    "running up to": "before",
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


def _bare_day_word_before_month(match: re.Match[str]) -> bool:
    """"my first March in Leeds" names no day: a day in words before its month takes "of"
    ("the first of March")."""
    word = match.groupdict().get("dayword")
    if not word or match.start("dayword") > match.start("mon"):
        return False
    between = match.string[match.end("dayword"):match.start("mon")]
    return re.search(r"\bof\b", between, re.IGNORECASE) is None


def day_of_month(match: re.Match[str]) -> int:
    """The day of a ``DAY_OF_MONTH`` match: its digits ("7th") or its words ("the seventh",
    "twenty-first")."""
    if match.group("day"):
        return int(match.group("day"))
    return DAY_ORDINALS[" ".join(re.split(r"[-\s]+", match.group("dayword").lower()))]


def _day_fits_month(match: re.Match[str]) -> bool:
    if _bare_day_word_before_month(match):
        return False
    month = _month(match)
    day = day_of_month(match)
    year = match.groupdict().get("year")
    limit = _days_in_month(_check_year(year) if year else 2000, month)
    return day <= limit


def _yearless_day_ok(match: re.Match[str]) -> bool:
    return _month_word_ok(match) and _day_fits_month(match)


def _span_ok(match: re.Match[str]) -> bool:
    if not _yearless_month_ok(match) or not _day_fits_month(match):
        return False
    if match.group("and") and not match.group("between"):
        return False  # "on May 8 and 10": two days, not the days between
    return day_of_month(match) < int(match.group("day2")) <= _days_in_month(2000, _month(match))


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


