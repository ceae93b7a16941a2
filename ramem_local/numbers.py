"""Numbers as people write them: "seventieth" and "70th", "forty-one" and "41".

A question names "Mum's seventieth" where the journal wrote "Mum's 70th birthday dinner", or
"my 40th" where it wrote "my fortieth". :func:`number_forms` gives the other ways a number word
of a text is written, so that the lexical query holds both, and :func:`numbers_in` the numbers
a text names whatever their form, so that an anchor named by a number ("my 37th birthday") is
the report holding that number, not any birthday.

``inflect`` writes numbers as words too, but takes 1.6 s to import on the 2-core development
machine (``typeguard``), more than a search; this table covers 0 to 999 and is checked against
``inflect`` in ``tests/test_numbers.py``.
"""

from __future__ import annotations

import re
from functools import lru_cache

_UNITS = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine",
          "ten", "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen",
          "seventeen", "eighteen", "nineteen")
_TENS = ("", "", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety")
_ORDINAL_IRREGULAR = {"one": "first", "two": "second", "three": "third", "five": "fifth",
                      "eight": "eighth", "nine": "ninth", "twelve": "twelfth"}
# Number words that are ordinary words too: never read as a number alone. "first" says
# which comes first far more often than it counts an occasion ("my first day at Pinecone Labs"
# is "Started at Pinecone Labs today", not a report holding "first chapters"); "1st" and
# "twenty-first" stay numbers.
_AMBIGUOUS = frozenset({"one", "second", "first"})


def cardinal_words(n: int) -> str:
    """"forty-one" for 41, "one hundred and five" for 105 (0 to 999)."""
    if not 0 <= n <= 999:
        raise ValueError(f"{n} is outside 0..999")
    if n < 20:
        return _UNITS[n]
    if n < 100:
        tens, units = divmod(n, 10)
        return _TENS[tens] + (f"-{_UNITS[units]}" if units else "")
    hundreds, rest = divmod(n, 100)
    head = f"{_UNITS[hundreds]} hundred"
    return head if rest == 0 else f"{head} and {cardinal_words(rest)}"


def ordinal_words(n: int) -> str:
    """"seventieth" for 70, "forty-first" for 41."""
    words = cardinal_words(n)
    stem, sep, last = words.rpartition("-" if "-" in words.split(" ")[-1] else " ")
    if last in _ORDINAL_IRREGULAR:
        last = _ORDINAL_IRREGULAR[last]
    elif last.endswith("y"):
        last = last[:-1] + "ieth"
    else:
        last += "th"
    return f"{stem}{sep}{last}" if sep else last


def ordinal_digits(n: int) -> str:
    """"70th", "41st", "112th"."""
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


@lru_cache(maxsize=1)
def _word_numbers() -> dict[str, tuple[int, bool]]:
    """Every number word form of 0..199 (the hundreds beyond are rare in a journal's
    questions) → (its value, whether it is an ordinal)."""
    table: dict[str, tuple[int, bool]] = {}
    for n in range(200):
        table[_key(cardinal_words(n))] = (n, False)
        table[_key(ordinal_words(n))] = (n, True)
    return table


def _key(words: str) -> str:
    """Number words compared whatever joins them: "forty-first", "forty first"."""
    return re.sub(r"[\s-]+", " ", words.lower())


_DIGITS = re.compile(r"\b(\d{1,3})(st|nd|rd|th)?\b", re.IGNORECASE)


def numbers_in(text: str) -> list[tuple[int, bool, str]]:
    """The numbers ``text`` names, in order: (value, ordinal, the words as written), for digits
    ("70th", "41") and words ("seventieth", "forty-one"); "one" and "second" alone are words,
    not numbers, and a cardinal word is a number only before or after other words, as any
    word is."""
    table = _word_numbers()
    found: list[tuple[int, int, bool, str]] = []
    for match in _DIGITS.finditer(text):
        found.append((match.start(), int(match.group(1)), match.group(2) is not None,
                      match.group(0)))
    lowered = text.lower()
    tokens = [(m.start(), m.group(0)) for m in re.finditer(r"[a-z]+", lowered)]
    index = 0
    while index < len(tokens):
        start, _ = tokens[index]
        best: tuple[int, str] | None = None
        for length in (4, 3, 2, 1):
            if index + length > len(tokens):
                continue
            end_token = tokens[index + length - 1]
            written = lowered[start:end_token[0] + len(end_token[1])]
            key = _key(written)
            if key in table and (length > 1 or key not in _AMBIGUOUS):
                best = (length, written)
                break
        if best is None:
            index += 1
            continue
        length, written = best
        value, ordinal = table[_key(written)]
        found.append((start, value, ordinal, text[start:start + len(written)]))
        index += length
    return [(value, ordinal, written) for _, value, ordinal, written in sorted(found)]


def number_forms(text: str) -> list[str]:
    """The other ways the numbers of ``text`` are written, its own kind first: "70th",
    "seventieth", then "70", "seventy" for either ordinal; "41", "forty-one", then "41st",
    "forty-first". Words a text holds already are not repeated."""
    forms: list[str] = []
    held = text.lower()
    for value, ordinal, written in numbers_in(text):
        # a birthday is "my 40th" and "turning forty": both forms of both kinds
        ordinals = [ordinal_digits(value), ordinal_words(value)]
        cardinals = [str(value), cardinal_words(value)]
        others = [*ordinals, *cardinals] if ordinal else [*cardinals, *ordinals]
        forms.extend(form for form in others
                     if form.lower() != written.lower() and form not in forms
                     and not re.search(rf"\b{re.escape(form)}\b", held))
    return forms
