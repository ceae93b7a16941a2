"""The words and regular-expression fragments the time rules are written in.

Month, weekday, season and number words, the words that make a number a label or a count
rather than a year, the pattern fragments the rules are built from (``MON``, ``YEAR``,
``HOLIDAY``, ``REL``, ...), and the families of trigger words that gate each rule: a rule
runs only when every family it needs occurs in the text (``engine._families``).
"""

from __future__ import annotations

import re

from ..calendars import HOLIDAY_PATTERN, HOLIDAY_WORDS

_FLAGS = re.IGNORECASE | re.ASCII
# Which occurrence a recurring cue ("in June", "on Saturday") means; see the package docstring.
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

# Text fragments (named groups are read by the grounders).
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
# Days of a month in words: "the first of May", "May twenty-first".
_UNIT_ORDINALS = ("first second third fourth fifth sixth seventh eighth ninth").split()
DAY_ORDINALS = {
    **{word: n for n, word in enumerate(_UNIT_ORDINALS + (
        "tenth eleventh twelfth thirteenth fourteenth fifteenth sixteenth seventeenth "
        "eighteenth nineteenth twentieth").split(), start=1)},
    **{f"twenty {word}": 20 + n for n, word in enumerate(_UNIT_ORDINALS, start=1)},
    "thirtieth": 30, "thirty first": 31,
}
DAY_WORD = "|".join(word.replace(" ", r"[-\s]") for word in
                     sorted(DAY_ORDINALS, key=len, reverse=True))
# Not a day: "May the first time", "June first half".
_NOT_A_DAY_AFTER = r"(?!\s+(?:time|times|week|weekend|half|quarter|day|days|thing|one)\b)"
DAY_OF_MONTH = (r"(?<![\d:/.])\b(?:(?P<day>3[01]|[12]\d|0?[1-9])(?:st|nd|rd|th)?"
                rf"|(?P<dayword>{DAY_WORD}){_NOT_A_DAY_AFTER})\b")
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
# "two Christmases ago", "three Easters back": a holiday or a season counted in the plural.
HOLIDAY_PLURAL = r"(?P<hol>" + HOLIDAY_PATTERN + r")(?:e?s)?\b"
SEASON_PLURAL = r"(?P<season>\b(?:summer|winter|spring|autumn|fall))s\b"
# A quarter: "Q3" (a capital Q) or "the third quarter".
QUARTER = (
    r"(?:(?-i:\bQ)(?P<q>[1-4])\b"
    r"|\b(?:the\s+)?(?P<qord>first|second|third|fourth|last|final|1st|2nd|3rd|4th)[-\s]+"
    r"quarter\b)"
)
_UNITS = "day|week|fortnight|month|quarter|year"

# How near: "right after X" is the day next to X, "shortly before X" the week next to it, as "the
# day after X" and "the week before X" are, not all time before or after (a time cue,
# ``rules_composite``, or an event, ``question_kinds``).
NEAR_UNIT = {"just": "day", "right": "day", "immediately": "day", "directly": "day",
             "shortly": "week", "soon": "week", "not long": "week"}
NEAR = "|".join(word.replace(" ", r"\s+") for word in NEAR_UNIT)
# A plural unit without a count, "in the days after X", is a stretch of the next unit: (unit,
# how many).
STRETCH = {"day": ("week", 1), "week": ("month", 1), "month": ("month", 3)}

# "Christmases", "Easters": holiday words in the plural ("years", "mondays" stay out: they are
# other families' words, and would wake the holiday rules in every "two years ago").
_HOLIDAY_PLURALS = {word + ("es" if word.endswith(("s", "x")) else "s") for word in HOLIDAY_WORDS
                    if not word.endswith(("day", "year", "years", "july"))}

# Families of trigger words: a rule runs only when every family it needs occurs in the text.
# "digit": any digit (``engine._families``), or a day of a month in words ("the first of May").
_FAMILY_WORDS = {
    "digit": {word.split()[-1] for word in DAY_ORDINALS},
    "month": set(_MONTH_NUMBERS),
    "weekday": set(_WEEKDAYS) | {day + "s" for day in _WEEKDAYS},
    "season": set(_SEASON_START) | {season + "s" for season in _SEASON_START},
    "holiday": set(HOLIDAY_WORDS) | _HOLIDAY_PLURALS,
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
