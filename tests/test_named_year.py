"""A named year is a promise: a question that names a year (digits, "'19" or words) is about
that year, whatever rule reads it.

Phrases are generated from lists of forms (months, dates, date spans, parts of months and
years, seasons, quarters, every holiday of ``calendars.HOLIDAYS``, composites on them, and
sentences whose year dates a year-less cue) for every year 1995..2030, each spelled in digits,
in words and with an apostrophe where the form takes them, against a spread of reference
times, directions and bank countries. For each phrase, the range the question is about
(``question_range``) and every cue whose text names the year lie inside that year.

The documented exceptions are kept out by the forms, not by the check: a season that starts in
December (a northern winter, a southern summer: Dec Y - Feb Y+1) may run into the next year,
and a range measured from a date ("the week after 28 December 2019") may cross New Year, so
those forms use days away from New Year.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime, timedelta, timezone

import pytest

from ramem_local.recall import detect_cues, question_range
from ramem_local.recall.calendars import HOLIDAYS, holiday_key, is_southern
from ramem_local.recall.time import DIRECTIONS

YEARS = range(1995, 2031)
REFERENCES = (
    datetime(2023, 5, 25, 14, 0, tzinfo=timezone.utc),
    datetime(2013, 3, 15, 12, 0, tzinfo=timezone.utc),
    datetime(2031, 1, 2, 9, 0, tzinfo=timezone(timedelta(hours=14))),
    datetime(2001, 12, 31, 23, 0, tzinfo=timezone(timedelta(hours=-11))),
)
COUNTRIES = (None, "US", "GB", "AU", "IN", "GR", "CA")
MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August",
          "September", "October", "November", "December")  # fmt: skip
SEASONS = ("spring", "summer", "autumn", "fall", "winter")
QUARTER_WORDS = ("first", "second", "third", "fourth")

_ONES = "one two three four five six seven eight nine".split()
_TEENS = "ten eleven twelve thirteen fourteen fifteen sixteen seventeen eighteen nineteen".split()
_TENS = "twenty thirty forty fifty sixty seventy eighty ninety".split()


def _two_digits(value: int) -> str:
    """1..99 in words: "seven", "nineteen", "ninety-five"."""
    if value < 10:
        return _ONES[value - 1]
    if value < 20:
        return _TEENS[value - 10]
    tens, ones = divmod(value, 10)
    return _TENS[tens - 2] + (f"-{_ONES[ones - 1]}" if ones else "")


def year_in_words(year: int) -> list[str]:
    """The ways a year is said: 1995 "nineteen ninety-five"; 2000 "two thousand"; 2005 "two
    thousand five", "two thousand and five", "twenty oh five"; 2019 "two thousand nineteen",
    "twenty nineteen"."""
    century, rest = divmod(year, 100)
    if century == 19:
        return [f"nineteen {_two_digits(rest)}"]
    if rest == 0:
        return ["two thousand"]
    spoken = [f"two thousand {_two_digits(rest)}", f"two thousand and {_two_digits(rest)}"]
    return spoken + [f"twenty oh {_ONES[rest - 1]}" if rest < 10 else f"twenty {_two_digits(rest)}"]


def two_digit_year(year: int, reference: datetime) -> int:
    """What "'YY" means said at ``reference``: the year within ten years after the reference
    year or 89 before it (the module's rule)."""
    latest = reference.year + 10
    return latest - (latest - year % 100) % 100


@dataclass(frozen=True)
class Form:
    """A phrase with a year slot ``{Y}``; the other slots are filled from the year (a month
    ``{M}``, a later one ``{M2}``, a day ``{D}`` / ``{D2}`` / ``{Dth}``, a season ``{S}``, a
    quarter ``{q}`` / ``{qord}``, a holiday ``{H}``, numeric ``{mm}`` / ``{dd}``).

    ``words``: the year may be said in words; ``short``: with two digits, after ``prefix``
    ("'19"; "5/8/19" has none); ``mid_year``: the month is one of March to October (a range
    measured from a date stays in the year)."""

    template: str
    words: bool = True
    short: bool = True
    prefix: str = "'"
    mid_year: bool = False


MONTH_FORMS = [
    Form("{M} {Y}"), Form("in {M} {Y}"), Form("{M}, {Y}"), Form("{M} of {Y}"),
    Form("What did we do in {M} in {Y}?"), Form("the month of {M} {Y}"),
    Form("early {M} {Y}"), Form("mid-{M} {Y}"), Form("late {M} {Y}"),
    Form("the end of {M} {Y}"), Form("the beginning of {M} of {Y}"),
    Form("the second half of {M} {Y}"),
    Form("the first week of {M} {Y}"), Form("the last week of {M} {Y}"),
    Form("the first weekend of {M} {Y}"), Form("the last weekend of {M} {Y}"),
    Form("the second Sunday of {M} {Y}"), Form("the last Friday of {M} {Y}"),
    Form("the first few days of {M} {Y}"), Form("the last two weeks of {M} {Y}"),
    Form("the first day of {M} {Y}"), Form("the last day of {M} {Y}"),
    Form("between {M} and {M2} {Y}"), Form("from {M} to {M2} {Y}"),
    Form("between {M} {D} and {M2} {D2}, {Y}"),
    # the year names the sentence, not the cue
    Form("In {Y}, where did we go in {M}?"), Form("In {Y}, what did we do on {M} {D}?"),
    Form("In {Y}, what happened in late {M}?"),
    Form("What did we do the last week of {M}, in {Y}?"),
    Form("What did we do in {M} back in {Y}?"),
]  # fmt: skip
DATE_FORMS = [
    Form("{D} {M} {Y}"), Form("{M} {D}, {Y}"), Form("on {M} {D} in {Y}"),
    Form("the {Dth} of {M}, {Y}", short=False), Form("{M} {D}-{D2}, {Y}"),
    Form("{D}-{D2} {M} {Y}"),
    Form("{Y}-{mm}-{dd}", words=False, short=False), Form("{mm}/{dd}/{Y}", words=False, prefix=""),
    Form("{dd}/{mm}/{Y}", words=False, prefix=""), Form("{dd}.{mm}.{Y}", words=False, short=False),
    Form("{Y}-{mm}", words=False, short=False), Form("in {mm}/{Y}", words=False, short=False),
    # measured from a date: days away from New Year
    Form("the week of {M} {D}, {Y}", mid_year=True),
    Form("the week before {M} {D}, {Y}", mid_year=True),
    Form("the weekend after {D} {M} {Y}", mid_year=True),
    Form("two days before {M} {D}, {Y}", mid_year=True),
    Form("three weeks after {M} {D}, {Y}", mid_year=True),
    Form("the Sunday before {M} {D}, {Y}", mid_year=True),
    Form("the day after {M} {D}, {Y}", mid_year=True),
    Form("the month before {M} {Y}", mid_year=True),
]  # fmt: skip
YEAR_FORMS = [
    Form("in {Y}"), Form("What did we do in {Y}?"), Form("the year {Y}", short=False),
    Form("early {Y}"), Form("mid-{Y}", words=False, short=False), Form("late {Y}"),
    Form("the end of {Y}"), Form("the beginning of {Y}"), Form("the first half of {Y}"),
    Form("the second half of {Y}"),
    Form("the first week of {Y}"), Form("the last week of {Y}"),
    Form("the first weekend of {Y}"), Form("the last weekend of {Y}"),
    Form("the first Sunday of {Y}"), Form("the last Friday of {Y}"),
    Form("the first day of {Y}"), Form("the last day of {Y}"),
    Form("the first three days of {Y}"), Form("the last two weeks of {Y}"),
    Form("Q{q} {Y}"), Form("Q{q} of {Y}"), Form("Q{q} in {Y}"),
    Form("the {qord} quarter of {Y}"), Form("the beginning of Q{q} {Y}"),
    Form("{Y} Q{q}", words=False, short=False), Form("{Y}-Q{q}", words=False, short=False),
    Form("In {Y}, what did we ship in Q{q}?"),
]  # fmt: skip
SEASON_FORMS = [
    Form("{S} {Y}"), Form("the {S} of {Y}"), Form("in the {S} of {Y}"),
    Form("the {S} in {Y}"), Form("late {S} {Y}"), Form("the end of the {S} of {Y}"),
    Form("the first day of {S} {Y}"),
    Form("In {Y}, what did we do over the {S}?"),
]  # fmt: skip
HOLIDAY_FORMS = [
    Form("{H} {Y}"), Form("{H} of {Y}"), Form("{H} in {Y}"), Form("{H}, {Y}"),
    Form("What did we do for {H} in {Y}?"), Form("on {H} {Y}"),
    Form("{H} weekend {Y}"),
    Form("In {Y}, what did we do on {H}?"),
]  # fmt: skip

# Names people give each holiday of ``calendars.HOLIDAYS`` (every one has at least one).
HOLIDAY_NAMES = {
    "holiday_season": ["the holidays", "the Christmas break", "the festive season",
                       "Christmas and New Year", "the holiday break"],
    "christmas_eve": ["Christmas Eve"],
    "christmas": ["Christmas", "Christmas Day", "Xmas"],
    "boxing_day": ["Boxing Day"],
    "new_years_eve": ["New Year's Eve"],
    "new_years_day": ["New Year's Day", "New Year"],
    "halloween": ["Halloween"],
    "valentines_day": ["Valentine's Day"],
    "st_patricks_day": ["St. Patrick's Day", "Paddy's Day"],
    "groundhog_day": ["Groundhog Day"],
    "mlk_day": ["MLK Day", "Martin Luther King Jr. Day"],
    "presidents_day": ["Presidents' Day"],
    "memorial_day": ["Memorial Day"],
    "juneteenth": ["Juneteenth"],
    "independence_day": ["Independence Day", "the Fourth of July"],
    "labor_day": ["Labor Day", "Labour Day"],
    "columbus_day": ["Columbus Day"],
    "veterans_day": ["Veterans Day"],
    "thanksgiving": ["Thanksgiving"],
    "black_friday": ["Black Friday"],
    "cyber_monday": ["Cyber Monday"],
    "mothers_day": ["Mother's Day"],
    "mothering_sunday": ["Mothering Sunday"],
    "fathers_day": ["Father's Day"],
    "canada_day": ["Canada Day"],
    "australia_day": ["Australia Day"],
    "anzac_day": ["ANZAC Day"],
    "bastille_day": ["Bastille Day"],
    "easter_monday": ["Easter Monday"],
    "easter": ["Easter", "Easter Sunday"],
    "good_friday": ["Good Friday"],
    "palm_sunday": ["Palm Sunday"],
    "maundy_thursday": ["Maundy Thursday"],
    "holy_saturday": ["Holy Saturday"],
    "ash_wednesday": ["Ash Wednesday"],
    "mardi_gras": ["Mardi Gras", "Shrove Tuesday"],
    "ascension_day": ["Ascension Day"],
    "pentecost": ["Pentecost"],
    "whit_monday": ["Whit Monday"],
    "chinese_new_years_eve": ["Chinese New Year's Eve"],
    "chinese_new_year": ["Chinese New Year", "chinese new year's day", "Lunar New Year"],
    "spring_festival": ["Spring Festival"],
    "diwali": ["Diwali", "Deepavali"],
    "holi": ["Holi"],
    "eid_al_adha": ["Eid al-Adha"],
    "eid_al_fitr": ["Eid", "Eid al-Fitr"],
    "islamic_new_year": ["Islamic New Year", "Hijri New Year"],
    "ramadan": ["Ramadan"],
    "hanukkah": ["Hanukkah"],
    "passover": ["Passover"],
    "rosh_hashanah": ["Rosh Hashanah", "Jewish New Year"],
    "yom_kippur": ["Yom Kippur"],
    "purim": ["Purim"],
}


def test_every_holiday_has_names_to_test():
    assert set(HOLIDAY_NAMES) == {holiday.key for holiday in HOLIDAYS}
    for key, names in HOLIDAY_NAMES.items():
        for name in names:  # "the" belongs to some names ("the holidays"), not to others
            try:
                assert holiday_key(name) == key, name
            except KeyError:
                assert holiday_key(name.removeprefix("the ")) == key, name


def _slots(year: int, index: int, mid_year: bool) -> dict[str, str]:
    """The non-year slots of a form for one year (``index`` spreads the choices)."""
    month = 2 + index % 8 if mid_year else index % 12
    day = 5 + index % 20 if mid_year else 1 + index % 27
    quarter = index % 4
    suffix = "th" if day in (11, 12, 13) else {1: "st", 2: "nd", 3: "rd"}.get(day % 10, "th")
    return {
        "M": MONTHS[month], "M2": MONTHS[min(month + 2, 11)], "D": str(day),
        "Dth": f"{day}{suffix}", "D2": str(day + 1), "mm": f"{month + 1:02d}",
        "dd": str(13 + index % 15),
        "S": SEASONS[index % len(SEASONS)], "q": str(quarter + 1),
        "qord": QUARTER_WORDS[quarter],
    }  # fmt: skip


def _spellings(form: Form, year: int, index: int, reference: datetime) -> list[tuple[str, int]]:
    """(how the year is written, the year it means): digits, one way in words, "'YY"."""
    spellings = [(str(year), year)]
    if form.words:
        said = year_in_words(year)
        spellings.append((said[index % len(said)], year))
    if form.short:
        spellings.append((f"{form.prefix}{year % 100:02d}", two_digit_year(year, reference)))
    return spellings


def _midnight(day: date, reference: datetime) -> int:
    return int(datetime(day.year, day.month, day.day, tzinfo=reference.tzinfo).timestamp())


def _broken(phrase: str, spelled: str, year: int, reference: datetime, country: str | None,
            direction: str, window_end: date) -> str | None:
    """Why ``phrase`` breaks the promise of ``year``, or None."""
    cues = detect_cues(phrase, reference, country=country, direction=direction)
    start = _midnight(date(year, 1, 1), reference)
    end = _midnight(window_end, reference)
    context = f"{phrase!r} (reference {reference:%Y-%m-%d}, {country}, {direction})"
    chosen = question_range(cues)
    if chosen is None:
        return f"{context}: no range ({cues})"
    if not start <= chosen.start < chosen.end <= end:
        return f"{context}: question range {_days(chosen.start, chosen.end, reference)}"
    for cue in cues:
        if spelled.lower() not in cue.text.lower():
            continue
        if cue.range is None or not start <= cue.range.start < cue.range.end <= end:
            where = None if cue.range is None else _days(cue.range.start, cue.range.end, reference)
            return f"{context}: {cue.rule} {cue.text!r} -> {where}"
    return None


def _days(start: int, end: int, reference: datetime) -> str:
    first = datetime.fromtimestamp(start, reference.tzinfo).date()
    last = datetime.fromtimestamp(end, reference.tzinfo).date() - timedelta(days=1)
    return f"{first}..{last}"


def _check(
    forms: list[Form],
    names: list[str] = (),
    *,
    season: bool = False,
    every_spelling: bool = True,
    every_form: bool = True,
) -> None:
    """Check ``forms`` for every year (each with a reference, a country and a direction from
    the spread); every spelling of the year, or one in turn (``every_spelling=False``); every
    form each year, or every other one, alternating (``every_form=False``: each form still
    gets half the years); a holiday's ``names`` in turn."""
    problems = []
    for index, year in enumerate(YEARS):
        reference = REFERENCES[index % len(REFERENCES)]
        country = COUNTRIES[index % len(COUNTRIES)]
        direction = DIRECTIONS[(index // len(REFERENCES)) % len(DIRECTIONS)]
        for number, form in enumerate(forms):
            if not every_form and (index + number) % 2:
                continue
            slots = _slots(year, index, form.mid_year)
            if names:
                slots["H"] = names[index % len(names)]
            spellings = _spellings(form, year, index, reference)
            if not every_spelling:
                spellings = [spellings[(index + number) % len(spellings)]]
            for spelled, meant in spellings:
                phrase = form.template.format(Y=spelled, **slots)
                window_end = date(meant + 1, 1, 1)
                if season and _starts_in_december(slots["S"], country):
                    window_end = date(meant + 1, 3, 1)  # Dec Y - Feb Y+1
                problem = _broken(
                    phrase, spelled, meant, reference, country, direction, window_end
                )
                if problem:
                    problems.append(problem)
    assert not problems, f"{len(problems)} broken promises:\n" + "\n".join(problems[:20])


def _starts_in_december(season: str, country: str | None) -> bool:
    return season == ("summer" if is_southern(country) else "winter")


@pytest.mark.parametrize("form", MONTH_FORMS + DATE_FORMS + YEAR_FORMS, ids=lambda f: f.template)
def test_a_named_year_holds_the_range(form: Form):
    _check([form])


@pytest.mark.parametrize("form", SEASON_FORMS, ids=lambda f: f.template)
def test_a_named_year_holds_the_season(form: Form):
    _check([form], season=True)


@pytest.mark.parametrize("key", sorted(HOLIDAY_NAMES))
def test_a_named_year_holds_the_holiday(key: str):
    """Every holiday in every form, in every year with one form or another (its names and the
    spellings of the year in turn)."""
    _check(HOLIDAY_FORMS, HOLIDAY_NAMES[key], every_spelling=False, every_form=False)
