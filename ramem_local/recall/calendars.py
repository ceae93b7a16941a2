"""What the time grounder needs to know about calendars: the dates of holidays, and the country
a bank reads dates for (the order of numeric dates, the hemisphere of the seasons).

Holiday dates come from maintained calendar libraries, never from a table written here: the
``holidays`` package (country calendars, every category it has, names in English) and
``dateutil.easter`` (the days counted from Easter). A holiday is looked up by name in the
bank's own country calendar first ("Thanksgiving" in a Canadian bank is the second Monday of
October, "Independence Day" in an Indian one is 15 August, "Christmas" in a Russian one is 7
January), then where ``HOLIDAYS`` says:

* the US calendar (public + unofficial): Christmas (Eve), New Year's Day/Eve, Halloween,
  Valentine's Day, St. Patrick's Day, Groundhog Day, Martin Luther King Jr. Day, Presidents'
  Day, Memorial Day, Independence Day, Juneteenth (from 2021), Labor Day, Columbus Day,
  Veterans Day, Thanksgiving, Mother's Day, Father's Day; Black Friday and Cyber Monday are the
  Friday and Monday after US Thanksgiving;
* the holiday season ("the holidays", "the Christmas break", "the festive season"): the nine
  days from Christmas Eve to New Year's Day, counted from the US calendar's Christmas Eve;
* GB: Boxing Day; CA: Canada Day; AU: Australia Day, ANZAC Day; FR: Bastille Day;
* Easter and the days counted from it (``dateutil.easter``: Orthodox Easter in a bank of an
  Orthodox country, ``ORTHODOX``; Western everywhere else): Easter Sunday, Good Friday, Easter
  Monday, Palm Sunday, Maundy Thursday, Holy Saturday, Ash Wednesday, Mardi Gras / Shrove
  Tuesday / Pancake Day, Ascension Day, Pentecost / Whitsun, Whit Monday, and Mothering Sunday
  (Easter - 21 days; Mother's Day in a British or Irish bank);
* lunar and religious calendars, whatever the bank's country: Chinese (Lunar) New Year from
  China's calendar (1950-2080), its eve the day before; Diwali from India's (2001-2035), else
  Singapore's Deepavali; Holi from India's; Eid al-Fitr ("Eid" alone) and Eid al-Adha from
  Turkey's (1950-2080; computed Islamic dates, which may differ from a local sighting by a
  day); Ramadan from the Maldives' first day of Ramadan, 30 days; Islamic (Hijri) New Year from
  Jordan's (1950-2080); Hanukkah (8 days), Passover (8 days, as outside Israel), Rosh Hashanah
  ("Jewish New Year", 2 days), Yom Kippur and Purim from Israel's.

"New Year" after a word naming another calendar ("Islamic New Year", "Persian New Year":
``OTHER_NEW_YEARS``) is never the 1 January one.

A year outside a calendar's range has no occurrence (``holiday_occurrences`` is empty; the
grounder then reads a holiday named with a year as that whole year, see ``recall.time``).

The country (ISO 3166 alpha-2, a bank setting) also decides the order of numeric dates: month
first in the US and the few places that write dates its way (``MONTH_FIRST``), no order in
Canada (both are common there: only unambiguous numeric dates are read), day first everywhere
else; and it puts the seasons of ``SOUTHERN`` countries in the southern hemisphere.
"""
from __future__ import annotations

import locale
import re
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, timedelta
from functools import lru_cache

from ..errors import InputError

DEFAULT_COUNTRY = "US"
MONTH_FIRST = frozenset({"US", "PH", "FM", "MH", "PW", "GU", "PR", "VI", "AS", "MP", "UM", "BZ"})
NO_DATE_ORDER = frozenset({"CA"})
SOUTHERN = frozenset({"AU", "NZ", "ZA", "AR", "CL", "UY", "PY", "BR", "LS", "SZ", "NA", "BW"})
ORTHODOX = frozenset({"GR", "CY", "RU", "UA", "RO", "BG", "RS", "MK", "ME", "GE", "BY", "MD"})

_COUNTRY_CODE = re.compile(r"[A-Za-z]{2}")


def normal_country(value: str) -> str:
    """``value`` as an upper-case ISO 3166 alpha-2 code; raises ValueError for anything else."""
    code = value.strip()
    if not _COUNTRY_CODE.fullmatch(code):
        raise InputError(
            f"unknown country {value!r} (use a two-letter ISO 3166 code like US, GB or DE)"
        )
    return code.upper()


def default_country() -> str:
    """The territory of the system locale ("en_GB.UTF-8" -> "GB"), else ``DEFAULT_COUNTRY``."""
    try:
        name = locale.getlocale()[0] or ""
    except ValueError:
        name = ""
    territory = name.split(".")[0].partition("_")[2]
    return territory.upper() if _COUNTRY_CODE.fullmatch(territory) else DEFAULT_COUNTRY


def date_order(country: str | None) -> str | None:
    """ "mdy", "dmy", or None (no locale, or a country where both are common)."""
    if country is None or country in NO_DATE_ORDER:
        return None
    return "mdy" if country in MONTH_FIRST else "dmy"


def is_southern(country: str | None) -> bool:
    return country in SOUTHERN


# Holidays.


@dataclass(frozen=True)
class Named:
    """The holiday's first day under one of ``names`` (the first name found) in a country's
    calendar."""

    country: str
    names: tuple[str, ...]


@dataclass(frozen=True)
class FromEaster:
    """Easter Sunday (``dateutil.easter``: Orthodox in a bank of an ``ORTHODOX`` country,
    else Western) plus ``days``."""

    days: int


@dataclass(frozen=True)
class After:
    """Another holiday's day plus ``days``."""

    holiday: str
    days: int


Source = Named | FromEaster | After


@dataclass(frozen=True)
class Holiday:
    """A holiday as people name it (``pattern``, a regular expression), where its dates come
    from (``sources``, tried in order after the bank's own calendar), and how many days it
    lasts. ``local_names`` are its names in a country calendar (for the bank's own one);
    ``by_country`` replaces the sources for some countries."""

    key: str
    pattern: str
    sources: tuple[Source, ...]
    local_names: tuple[str, ...] = ()
    days: int = 1
    by_country: tuple[tuple[str, Source], ...] = ()


def _us(*names: str) -> tuple[Source, ...]:
    return (Named("US", names),)


_A = "['\u2019]?"  # an optional apostrophe: "Mothers Day", "Mother's Day", "Mother\u2019s Day"
_MOTHERING_SUNDAY = FromEaster(-21)
_CHINESE_NEW_YEAR = (Named("CN", ("Chinese New Year (Spring Festival)", "Chinese New Year")),)

HOLIDAYS: tuple[Holiday, ...] = (
    # "the holidays", "the Christmas break", "the festive season", "Christmas and New Year":
    # Christmas Eve to New Year's Day. Before "christmas", whose name is its prefix; "the" is
    # part of the bare names: "the summer holidays" and "a holiday in Spain" are not it.
    # "between Christmas and New Year" is the between rule's, "... New Year's Eve" no season.
    Holiday("holiday_season",
            r"(?:the\s+)?(?:christmas|xmas)\s+(?:holidays|break|season|period|vacation)"
            r"|(?<!between\s)(?:christmas|xmas)\s+and\s+(?:the\s+)?new\s+year"
            r"(?:['\u2019]?s)?(?:\s+day)?(?!['\u2019\w]|\s+eve)"
            rf"|(?:the\s+)?new\s+year{_A}s?\s+holidays"
            r"|the\s+(?:holidays|festive\s+(?:season|period)|winter\s+holidays)"
            r"|(?:the\s+)?holiday\s+(?:season|break|period)",
            (After("christmas_eve", 0),), days=9),
    Holiday("christmas_eve", r"christmas\s+eve|xmas\s+eve", _us("Christmas Eve")),
    Holiday("christmas", r"christmas(?:\s+day)?|xmas(?:\s+day)?",
            _us("Christmas Day"), ("Christmas Day", "Christmas")),
    Holiday("boxing_day", r"boxing\s+day", (Named("GB", ("Boxing Day",)),),
            ("Boxing Day", "Saint Stephen's Day")),
    Holiday("new_years_eve", rf"new\s+year{_A}s\s+eve", _us("New Year's Eve")),
    Holiday("new_years_day",
            rf"new\s+year{_A}s(?:\s+day)?|new\s+year(?![\u2019'\w]|\s+(?:resolution|party))",
            _us("New Year's Day")),
    Holiday("halloween", r"hallowe{1,2}n", _us("Halloween")),
    Holiday("valentines_day", rf"(?:st\.?\s+|saint\s+)?valentine{_A}s(?:{_A}\s+day)?",
            _us("Valentine's Day")),
    Holiday("st_patricks_day",
            rf"(?:st\.?|saint)\s+patrick{_A}s(?:\s+day)?|(?:st\.?\s+)?patty{_A}s\s+day"
            rf"|(?:st\.?\s+)?paddy{_A}s(?:\s+day)?",
            _us("Saint Patrick's Day")),
    Holiday("groundhog_day", r"groundhog\s+day", _us("Groundhog Day")),
    Holiday("mlk_day",
            rf"(?:martin\s+luther\s+king(?:,?\s+jr\.?)?|mlk)(?:{_A}s)?(?:\s+jr\.?)?\s+day",
            _us("Martin Luther King Jr. Day")),
    Holiday("presidents_day", rf"presidents{_A}\s+day|washington{_A}s\s+birthday",
            _us("Washington's Birthday")),
    Holiday("memorial_day", r"memorial\s+day", _us("Memorial Day")),
    Holiday("juneteenth", r"juneteenth", _us("Juneteenth National Independence Day")),
    Holiday("independence_day", r"independence\s+day|(?:the\s+)?fourth\s+of\s+july",
            _us("Independence Day"), ("Independence Day",)),
    Holiday("labor_day", r"labou?r\s+day", _us("Labor Day"),
            ("Labor Day", "Labour Day", "International Labor Day", "International Labour Day")),
    Holiday("columbus_day", r"columbus\s+day", _us("Columbus Day")),
    Holiday("veterans_day", rf"veteran{_A}s{_A}\s+day", _us("Veterans Day")),
    Holiday("thanksgiving", r"thanksgiving(?:\s+day)?", _us("Thanksgiving Day", "Thanksgiving"),
            ("Thanksgiving Day", "Thanksgiving")),
    Holiday("black_friday", r"black\s+friday", (After("us_thanksgiving", 1),)),
    Holiday("cyber_monday", r"cyber\s+monday", (After("us_thanksgiving", 4),)),
    Holiday("mothers_day", rf"mother{_A}s{_A}\s+day", _us("Mother's Day"), ("Mother's Day",),
            by_country=(("GB", _MOTHERING_SUNDAY), ("IE", _MOTHERING_SUNDAY))),
    Holiday("mothering_sunday", r"mothering\s+sunday", (_MOTHERING_SUNDAY,)),
    Holiday("fathers_day", rf"father{_A}s{_A}\s+day", _us("Father's Day"), ("Father's Day",)),
    Holiday("canada_day", r"canada\s+day", (Named("CA", ("Canada Day",)),)),
    Holiday("australia_day", r"australia\s+day", (Named("AU", ("Australia Day",)),)),
    Holiday("anzac_day", r"anzac\s+day", (Named("AU", ("ANZAC Day",)),)),
    Holiday("bastille_day", r"bastille\s+day", (Named("FR", ("National Day",)),)),
    Holiday("easter_monday", r"easter\s+monday", (FromEaster(1),)),
    Holiday("easter", r"easter(?:\s+sunday)?(?!\s+island)", (FromEaster(0),)),
    Holiday("good_friday", r"good\s+friday", (FromEaster(-2),)),
    Holiday("palm_sunday", r"palm\s+sunday", (FromEaster(-7),)),
    Holiday("maundy_thursday", r"maundy\s+thursday|holy\s+thursday", (FromEaster(-3),)),
    Holiday("holy_saturday", r"holy\s+saturday", (FromEaster(-1),)),
    Holiday("ash_wednesday", r"ash\s+wednesday", (FromEaster(-46),)),
    Holiday("mardi_gras", r"mardi\s+gras|shrove\s+tuesday|pancake\s+day|fat\s+tuesday",
            (FromEaster(-47),)),
    Holiday("ascension_day", r"ascension\s+day|(?:the\s+)?feast\s+of\s+the\s+ascension",
            (FromEaster(39),)),
    Holiday("pentecost", r"pentecost(?:\s+sunday)?|whitsun(?:day)?|whit\s+sunday",
            (FromEaster(49),)),
    Holiday("whit_monday", r"whit\s+monday|pentecost\s+monday", (FromEaster(50),)),
    # The eve first: a longer name must come before its prefix in the alternation.
    Holiday("chinese_new_years_eve", rf"(?:chinese|lunar)\s+new\s+year{_A}s\s+eve",
            (After("chinese_new_year", -1),)),
    Holiday("chinese_new_year", rf"(?:chinese|lunar)\s+new\s+year(?:{_A}s\s+day)?",
            _CHINESE_NEW_YEAR, ("Chinese New Year", "Lunar New Year")),
    Holiday("spring_festival", r"spring\s+festival", _CHINESE_NEW_YEAR),
    Holiday("diwali", r"diwali|deepavali|divali",
            (Named("IN", ("Diwali",)), Named("SG", ("Deepavali", "Diwali"))),
            ("Diwali", "Deepavali", "Divali")),
    Holiday("holi", r"holi", (Named("IN", ("Holi",)),), ("Holi",)),
    Holiday("eid_al_adha",
            r"eid\s+(?:al|ul|el)[-\s]?adha|bakrid|bakri\s+eid|kurban\s+bayrami?",
            (Named("TR", ("Eid al-Adha",)), Named("SA", ("Eid al-Adha Holiday",))),
            ("Eid al-Adha",)),
    Holiday("eid_al_fitr", r"eid(?:\s+(?:al|ul|el)[-\s]?fitr)?",
            (Named("TR", ("Eid al-Fitr",)), Named("SA", ("Eid al-Fitr Holiday",))),
            ("Eid al-Fitr",)),
    Holiday("islamic_new_year",
            rf"(?:islamic|hijri|muslim)\s+new\s+year(?:{_A}s(?:\s+day)?)?|al[-\s]hijra"
            r"|awal\s+muharram",
            (Named("JO", ("Islamic New Year",)),), ("Islamic New Year",)),
    Holiday("ramadan", r"ramadan|ramzan", (Named("MV", ("First Day of Ramadan",)),),
            ("First Day of Ramadan",), days=30),
    Holiday("hanukkah", r"hanukk?ah|chanukk?ah", (Named("IL", ("Hanukkah",)),), days=8),
    Holiday("passover", r"passover|pesach", (Named("IL", ("Pesach",)),), days=8),
    Holiday("rosh_hashanah", rf"rosh\s+hashanah?|jewish\s+new\s+year(?:{_A}s(?:\s+day)?)?",
            (Named("IL", ("Rosh Hashanah",)),), days=2),
    Holiday("yom_kippur", r"yom\s+kippur", (Named("IL", ("Yom Kippur",)),)),
    Holiday("purim", r"purim", (Named("IL", ("Purim",)),)),
)  # fmt: skip
# Not said by people, but a base for others: US Thanksgiving whatever the bank's country.
_US_THANKSGIVING = Holiday("us_thanksgiving", "", _us("Thanksgiving Day", "Thanksgiving"))
_BY_KEY = {holiday.key: holiday for holiday in (*HOLIDAYS, _US_THANKSGIVING)}

# Every name a holiday pattern matches holds one of these words: the detector runs the holiday
# rules only on texts that have one. The rarest word of a name is listed ("year" for New Year,
# "friday" for Good Friday, "july" for the Fourth of July), not "new" or "good".
HOLIDAY_WORDS = frozenset(
    "holidays holiday festive christmas xmas boxing year years halloween halloweeen valentine "
    "valentines patrick "
    "patricks patty pattys paddy paddys groundhog luther mlk presidents washington memorial "
    "juneteenth independence july labor labour columbus veteran veterans thanksgiving monday "
    "tuesday wednesday thursday friday saturday sunday mother mothers mothering father fathers "
    "canada australia anzac bastille easter mardi shrove pancake ascension pentecost whitsun "
    "whitsunday whit chinese lunar festival diwali deepavali divali holi eid bakrid kurban "
    "hijra muharram ramadan ramzan hanukkah hanukah chanukah chanukkah passover pesach rosh yom "
    "purim".split()
)
# One alternation of every holiday's names, without groups (groups in a 50-way alternation
# cost the detector more than all its other rules); ``holiday_key`` tells which one matched.
HOLIDAY_PATTERN = "|".join(f"(?:{h.pattern})" for h in HOLIDAYS)
_HOLIDAY_NAMES = tuple(
    (holiday.key, re.compile(holiday.pattern, re.IGNORECASE | re.ASCII)) for holiday in HOLIDAYS
)
# A word right before "New Year" that names another calendar's new year: "Persian New Year"
# is not 1 January (those the calendars know have a holiday of their own: Chinese, Islamic,
# Jewish).
OTHER_NEW_YEARS = frozenset(
    "chinese lunar islamic hijri muslim jewish hebrew persian iranian parsi thai tamil sinhala "
    "sinhalese khmer lao vietnamese korean tibetan nepali bengali ethiopian orthodox julian "
    "hindu telugu kannada marathi punjabi sikh balinese mongolian assyrian kurdish coptic "
    "amazigh berber myanmar burmese".split()
)
# Holidays whose names are also other words ("holi", "eid", a school's "spring festival"):
# detected only when capitalised.
CAPITALISED_ONLY = frozenset({"holi", "eid_al_fitr", "spring_festival"})


def holiday_key(name: str) -> str:
    """The key of the holiday a text that ``HOLIDAY_PATTERN`` matched names (the first one
    listed whose pattern matches it whole, as in the alternation)."""
    for key, pattern in _HOLIDAY_NAMES:
        if pattern.fullmatch(name):
            return key
    raise KeyError(f"not a holiday name: {name!r}")


def holiday_occurrences(key: str, year: int, country: str | None) -> list[tuple[date, date]]:
    """Each occurrence of the holiday in ``year`` as ``(first day, day after the last)``, in
    date order (most holidays: one; an Islamic one twice in some years; none outside the
    calendar's range)."""
    holiday = _BY_KEY[key]
    firsts = _first_days(holiday, year, country)
    length = timedelta(days=holiday.days)
    return [(first, first + length) for first in firsts]


def _first_days(holiday: Holiday, year: int, country: str | None) -> list[date]:
    if country is not None:
        special = dict(holiday.by_country).get(country)
        if special is not None:
            return _source_days(special, year, country)
        if holiday.local_names:
            local = _named_days(country, holiday.local_names, year)
            if local:
                return local
    for source in holiday.sources:
        days = _source_days(source, year, country)
        if days:
            return days
    return []


def _source_days(source: Source, year: int, country: str | None) -> list[date]:
    if isinstance(source, Named):
        return _named_days(source.country, source.names, year)
    if isinstance(source, FromEaster):
        from dateutil.easter import EASTER_ORTHODOX, EASTER_WESTERN, easter

        method = EASTER_ORTHODOX if country in ORTHODOX else EASTER_WESTERN
        return [easter(year, method) + timedelta(days=source.days)]
    return [day + timedelta(days=source.days) for day in _first_days(
        _BY_KEY[source.holiday], year, country)]


def _named_days(country: str, names: Sequence[str], year: int) -> list[date]:
    """The first day of each run of consecutive days named ``names[i]`` in the country's
    calendar for ``year``, for the first of ``names`` that occurs. A run that began in the
    year before (a festival across New Year) is that year's occurrence, not this one's."""
    calendar = _calendar(country, year)
    for name in names:
        key = name.casefold()
        days = calendar.get(key)
        if not days:
            continue
        firsts = [day for index, day in enumerate(days)
                  if index == 0 or days[index - 1] != day - timedelta(days=1)]
        if firsts[0] == date(year, 1, 1) and date(year - 1, 12, 31) in _calendar(
            country, year - 1
        ).get(key, ()):
            firsts = firsts[1:]
        return firsts
    return []


_ESTIMATED = re.compile(r"\s*\((?:estimated|approximated)\)$", re.IGNORECASE)


@lru_cache(maxsize=1024)
def _calendar(country: str, year: int) -> dict[str, list[date]]:
    """Day lists by case-folded holiday name in a country's calendar for one year (every
    category, English names; "(estimated)" dropped from a name, "(observed)" days kept apart
    under their own name). Empty for a country the ``holidays`` package does not know."""
    import holidays

    try:
        calendar_class = holidays.country_holidays(country).__class__
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # "available only from 2001 to 2035" and the like
            entries = holidays.country_holidays(
                country,
                years=year,
                categories=calendar_class.supported_categories,
                language="en_US",
            )
    except (NotImplementedError, KeyError, ValueError, AttributeError):
        return {}
    by_name: dict[str, list[date]] = {}
    for day, names in sorted(entries.items()):
        for name in names.split("; "):
            by_name.setdefault(_ESTIMATED.sub("", name).casefold(), []).append(day)
    return by_name
