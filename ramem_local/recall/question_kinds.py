"""What a question asks beyond its time cue: an order, a count, a time given by another event.

Read deterministically from the question's words (DESIGN.md §4.1, "Order, open ranges and
other events"); each reading is a table of patterns with must-not-fire rows in
``tests/test_question_kinds.py``.

================ ========================================= ==================================
reading          fires on                                  does not fire on
================ ========================================= ==================================
order latest     when did I last X; the last time I X;     the last chapter; last week;
                 the most recent time; most recently;      last Saturday; the last of the
                 the latest X                              cake; at last
order earliest   when did I first X; the first time I X;   first aid; the first of May;
                 for the first time; earliest              first class; at first
counting         how many times; how often; how many       how many eggs go in a cake;
                 films did I watch; which films have I     which bus did I take; how much
                 watched (a plural noun before a past or
                 perfect auxiliary and a person)
event anchor     the day after I adopted the cat; the      the day after tomorrow (a time
                 week before the move; three days before   cue); since you asked; after all;
                 the exam; since I moved to Leeds; after   before long; after that; since
                 the job interview at Brightwell; until    2020 (a time cue)
                 my sister's wedding
event, same time the day I moved; the week I started at      the day of the week; the time of
                 Brightwell; the morning of the exam; on   day; on the train; at my desk;
                 my birthday; at Lena's wedding            the day I leave (a plan)
event range      between adopting the cat and the move;    between 3 March and 20 May (two
                 from the day I moved until Christmas;     times); from Leeds to York; who
                 since Lena's wedding until May            sat between Anna and Tom; choose
                                                           between the blue dress and the red
                                                           one; from my phone to my laptop
================ ========================================= ==================================

An event anchor names its relation (``day_after``, ``week_before``, ``days_after:3``,
``since``, ``after``, ``before``, ``until``; ``day_of``, ``weekend_of``, ``week_of``,
``month_of``, ``year_of`` for the event's own day, weekend, week, month or year: "the day I
moved", "the weekend I moved", "on my birthday") and its phrase (the words that find the
anchor memory: "I adopted the cat");
:func:`relation_range` turns the anchor memory's time into the range the question is about.
An event range (:func:`find_event_range`) has two ends, events (relation ``between``) or
times; :func:`between_range` joins them.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import replace
from datetime import datetime, time, timedelta, tzinfo

from ..lexicon import lemmas, past_of
from ..text import STOPWORDS, content_words
from ..types import EventAnchor, RecallFrame, TimeCue, TimeRange
from .time.calendar_math import period_holding, weekend_next_to
from .time.vocabulary import NEAR, NEAR_UNIT, STRETCH
from .when import range_end_cue

_FLAGS = re.IGNORECASE
DAY_SECONDS = 86_400

LATEST, EARLIEST = "latest", "earliest"

# A subject after an auxiliary: "did I last", "was Caroline last", "have we first".
_SUBJECT = (r"(?:i|we|you|he|she|they|(?-i:[A-Z])[\w'-]+(?:\s+and\s+(?:i|me))?"
            r"(?:\s+(?-i:[A-Z])[\w'-]+)?)")
_AUXILIARY = r"(?:did|do|does|have|has|had|was|were|is|are)"
# Words after "last" / "first" that make it a time cue or another phrase, not an order.
_NOT_ORDER_AFTER = (
    r"(?!\s+(?:week|weekend|month|year|night|time\s+(?:we|i)\s+spoke|summer|winter|spring|"
    r"autumn|fall|quarter|monday|tuesday|wednesday|thursday|friday|saturday|sunday|"
    r"january|february|march|april|may|june|july|august|september|october|november|"
    r"december|aid|class|name|of|few|couple|one|two|three)\b)"
)

# After "the last" / "my first": a thing asked about (not a time: "the last week", nor an
# occasion's own day: "my first day at Brightwell"), then a clause about it or an event ("the
# last film I saw", "my first hike after the move", "the last thing we cooked before ...").
# A subject opening a clause, contracted or not: "I saw", "I'd seen", "we've been".
_CLAUSE_SUBJECT = (r"(?:(?:that|which|who)\s+)?(?:i|we|you|he|she|they|(?-i:[A-Z])[\w'-]+)"
                   r"(?:['’](?:d|ve|ll|m|re|s))?\s+\w")
_ORDERED_THING = (
    # "the last one I saw" (one before a clause), not "the last one of the cake"
    r"(?!\s+(?:one|ones)\b(?!\s+" + _CLAUSE_SUBJECT + r"))"
    + _NOT_ORDER_AFTER.replace("|one|", "|") +
    r"(?!\s+(?:chapter|page|episode|orders?|thing\s+in|minute|moment|"
    r"straw|word|resort|laugh|time)\b)"
    # "my first day at Brightwell" is an occasion; "the last day I saw Lena" an order
    r"(?!\s+(?:day|days|date)\b(?!\s+(?:that\s+|when\s+)?(?:i|we)\b))"
    r"(?:\s+(?:[a-z][\w'-]*\s+){0,2}?[a-z][\w'-]*(?=\s+" + _CLAUSE_SUBJECT + r"|"
    r"\s+(?:before|after|since|following|prior\s+to)\b|\s*[?.!]*\s*$)"
    # "the last I cooked", "the first we saw": the clause at once
    r"|(?=\s+" + _CLAUSE_SUBJECT + r"))")
_ORDERED_THING_IN_A_CLAUSE = _ORDERED_THING.replace(r"|\s*[?.!]*\s*$)", ")")
assert _ORDERED_THING_IN_A_CLAUSE != _ORDERED_THING
# A number of things asked about after the order word, then a clause about them: "the last
# three films I watched" (not "the last three weeks", "the last two days").
_SEVERAL = (r"\s+(?:two|three|four|five|six|seven|eight|nine|ten|few|couple\s+of|\d+)\s+"
            r"(?!(?:days?|nights?|weeks?|weekends?|months?|years?|times?|hours?|minutes?)\b)"
            r"[a-z][\w'-]*(?=\s+" + _CLAUSE_SUBJECT
            + r"|\s+(?:before|after|since|following|once|prior\s+to)\b)")
# The end of a clause after a closing order word: "... first?", "... last before the trip".
_CLAUSE_CLOSES = (r"(?=\s*(?:[,;?.!]|$)|\s+(?:before|after|since|following|once|prior\s+to|"
                  r"of\s+all)\b)")
_NEXT_TO_AN_EVENT = r"(?=\s+(?:before|after|since|following|once|prior\s+to)\b)"
# "How long has it been since I saw Lena?", "How long since we last met?": asks for the latest
# time, not for what came after (no open range "since I saw Lena").
_HOW_LONG_SINCE = (r"\bhow\s+long\s+(?:has\s+it\s+been|had\s+it\s+been|is\s+it|was\s+it|"
                   r"it\s+has\s+been|it's\s+been|it\s+is)?\s*since\b")

ORDER_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    (LATEST, re.compile(rf"\b{_AUXILIARY}\s+{_SUBJECT}\s+last\b{_NOT_ORDER_AFTER}", _FLAGS)),
    (LATEST, re.compile(r"\b(?:the|my|our|his|her|their)\s+(?:very\s+)?(?:last|previous)\s+"
                        r"time\b", _FLAGS)),
    (LATEST, re.compile(r"\bthe\s+most\s+recent\s+time\b|\bmost\s+recently\b", _FLAGS)),
    (LATEST, re.compile(r"\b(?:the|my|our|his|her|their)\s+(?:latest|most\s+recent)\b",
                        _FLAGS)),
    (EARLIEST, re.compile(rf"\b{_AUXILIARY}\s+{_SUBJECT}\s+first\b{_NOT_ORDER_AFTER}", _FLAGS)),
    (EARLIEST, re.compile(r"\b(?:the|my|our|his|her|their)\s+(?:very\s+)?first\s+time\b",
                          _FLAGS)),
    (EARLIEST, re.compile(r"\bfor\s+the\s+(?:very\s+)?first\s+time\b", _FLAGS)),
    (EARLIEST, re.compile(r"\b(?:the|my|our|his|her|their)\s+earliest\b", _FLAGS)),
    # "the last film I saw", "my first hike after the move", "the very first meal we made":
    # the order word before what is asked about, when a clause or an event follows it.
    # (the writer's or the question's: "his first tournament" in a chat names one event)
    (LATEST, re.compile(rf"\b(?:the|my|our)\s+(?:very\s+)?(?:last|latest|most\s+recent|"
                        rf"previous){_ORDERED_THING}", _FLAGS)),
    # "the final film I watched before the move" (not "the final exam", a thing's name)
    (LATEST, re.compile(rf"\b(?:the|my|our)\s+final{_ORDERED_THING_IN_A_CLAUSE}", _FLAGS)),
    # "the next film I watched after the move": the first after it (not "the next day")
    (EARLIEST, re.compile(rf"\b(?:the|my|our)\s+next{_ORDERED_THING_IN_A_CLAUSE}"
                          r"(?=.*\b(?:after|following|once|since)\b)", _FLAGS)),
    (EARLIEST, re.compile(rf"\b(?:the|my|our)\s+(?:very\s+)?(?:first|earliest)"
                          rf"{_ORDERED_THING}", _FLAGS)),
    # "Which dish did I cook first?", "Which band did I see live last before the trip?": the
    # order word closing the clause of "did I ...".
    (LATEST, re.compile(rf"\b{_AUXILIARY}\s+{_SUBJECT}\s+(?!last\b)[^,;?!.]*?\b"
                        rf"(?<!\bat\s)last{_CLAUSE_CLOSES}", _FLAGS)),
    (EARLIEST, re.compile(rf"\b{_AUXILIARY}\s+{_SUBJECT}\s+(?!first\b)[^,;?!.]*?\b"
                          rf"(?<!\bat\s)first{_CLAUSE_CLOSES}", _FLAGS)),
    # "Which film came first after the move?", "which hike was last before the trip"
    (EARLIEST, re.compile(r"\b(?:came|come|was|were)\s+first" + _NEXT_TO_AN_EVENT, _FLAGS)),
    (LATEST, re.compile(r"\b(?:came|come|was|were)\s+last" + _NEXT_TO_AN_EVENT, _FLAGS)),
    # "the last three films I watched", "my first two hikes after the move": an order of
    # several (not "the last three weeks", a time)
    (LATEST, re.compile(rf"\b(?:the|my|our)\s+(?:last|latest|most\s+recent){_SEVERAL}",
                        _FLAGS)),
    (EARLIEST, re.compile(rf"\b(?:the|my|our)\s+(?:first|earliest){_SEVERAL}", _FLAGS)),
    # "for the final time", "the final time I cooked"
    (LATEST, re.compile(r"\b(?:the|my|our)\s+final\s+time\b", _FLAGS)),
    # "Last film I saw before the trip?", "First hike after the move?": a question that
    # opens with its order word
    (LATEST, re.compile(r"^\W*(?:last|latest|most\s+recent)\s+[a-z][\w'-]*"
                        r"(?:\s+[a-z][\w'-]*)?(?=\s+" + _CLAUSE_SUBJECT + r"|\s+(?:before|"
                        r"prior\s+to)\b)", _FLAGS)),
    (EARLIEST, re.compile(r"^\W*(?:first|earliest)\s+[a-z][\w'-]*(?:\s+[a-z][\w'-]*)?"
                          r"(?=\s+" + _CLAUSE_SUBJECT + r"|\s+(?:after|following|since)\b)",
                          _FLAGS)),
    # "How long ago did I ...", "How long has it been since I saw Lena?": the latest time.
    (LATEST, re.compile(r"\bhow\s+long\s+ago\s+(?:did|have|had|was|were)\s+"
                        r"(?:i|we)\b", _FLAGS)),
    (LATEST, re.compile(rf"{_HOW_LONG_SINCE}", _FLAGS)),
)

# The order words themselves, cut from the need (only inside a span that fired) so that
# "last" does not match "the last chapter" in a memory.
_ORDER_WORDS = re.compile(
    r"\b(?:for\s+)?(?:the|my|our|his|her|their)\s+(?:very\s+)?(?:last|first|most\s+recent|"
    r"previous)"
    r"\s+time\b|\bmost\s+recently\b|\bhow\s+long\s+ago\b|" + _HOW_LONG_SINCE + r"|"
    r"\b(?:very\s+)?(?:latest|earliest|most\s+recent|previous|final|next|last|first|"
    r"soonest)\b",
    _FLAGS,
)


def detect_order(question: str, outside: tuple[int, int] | None = None,
                 times: Sequence[tuple[int, int]] = ()) -> str | None:
    """``"latest"``, ``"earliest"`` or None: whether the question asks for the most recent or
    the first occurrence of what it names; with ``outside``, only order words that do not
    touch that span (an event anchor's own: "What did I do after my last hike?" asks what
    came after one hike, not for the latest of anything). ``times``, the spans of the
    question's time cues, are read as a clause's end: an order word inside one is the time's
    ("the weekend before last", "the first week of October"), one just before one closes its
    clause ("Which film did I see last in May?")."""
    question = _times_as_clause_ends(question, times)
    for order, pattern in ORDER_PATTERNS:
        for match in pattern.finditer(question):
            if outside is None or match.end() <= outside[0] or match.start() >= outside[1]:
                return order
    return None


_TIME_PREPOSITION = re.compile(r"\b(?:in|on|during|over|at|for|from)\s+$", _FLAGS)


def _times_as_clause_ends(question: str, times: Sequence[tuple[int, int]]) -> str:
    """``question`` with each time span (and a preposition before it) blanked to a comma, its
    length kept so that other spans still point at the same words."""
    for start, end in times:
        before = _TIME_PREPOSITION.search(question[:start])
        start = before.start() if before else start
        question = question[:start] + "," + " " * (end - start - 1) + question[end:]
    return question


# An order inside an event anchor: "since I last went hiking", "the day after my last hike",
# "the week before the first time I met Sam", "since my most recent trip to Porto". Not an
# occasion's own first or last day ("the week before my first day at Brightwell", "after my
# last day at work": one event, whatever came before it).
_NOT_ANCHOR_ORDER_AFTER = _NOT_ORDER_AFTER + r"(?!\s+(?:day|days|date|chapter|page|episode)\b)"
_ANCHOR_ORDER_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    (LATEST, re.compile(r"\b(?:(?:i|we|you|he|she|they)\s+last|(?:the|my|our|his|her|their)"
                        r"\s+(?:very\s+)?(?:last|latest|most\s+recent|previous))\b"
                        + _NOT_ANCHOR_ORDER_AFTER, _FLAGS)),
    (EARLIEST, re.compile(r"\b(?:(?:i|we|you|he|she|they)\s+first|(?:the|my|our|his|her|"
                          r"their)\s+(?:very\s+)?(?:first|earliest))\b"
                          + _NOT_ANCHOR_ORDER_AFTER, _FLAGS)),
)


_ANCHOR_ORDER_WORDS = re.compile(_ORDER_WORDS.pattern + r"|\bprevious\b", _FLAGS)


def anchor_order(phrase: str) -> tuple[str | None, str]:
    """Which of an event's reports an anchor phrase names by order, and the phrase without
    its order words: ("latest", "I went hiking") for "I last went hiking", ("earliest", "my
    hike") for "my first hike"; (None, phrase) without one."""
    for order, pattern in _ANCHOR_ORDER_PATTERNS:
        if pattern.search(phrase):
            return order, " ".join(_ANCHOR_ORDER_WORDS.sub(" ", phrase).split())
    return None, phrase


def without_order_words(question: str) -> str:
    """The question without its order words ("When did I last cook X?" → "When did I cook
    X?"), cut only where an order pattern fired."""
    spans: list[list[int]] = []
    for start, end in sorted(m.span() for _, pattern in ORDER_PATTERNS
                             for m in pattern.finditer(question)):
        if spans and start <= spans[-1][1]:
            spans[-1][1] = max(spans[-1][1], end)
        else:
            spans.append([start, end])
    for start, end in reversed(spans):
        question = question[:start] + _ORDER_WORDS.sub(" ", question[start:end]) + question[end:]
    return " ".join(question.split())


# A question about the present or a plan ("What does John want to do after his career?",
# "What could I cook after the move?") is not fixed in time by the event it names.
# "may" only before its subject: "In May, how many times did I cook?" is about the past.
_NOT_PAST = re.compile(r"^\W*(?:\w+\s+){0,2}?(?:does|do|is|are|will|would|can|could|should|"
                       r"might|shall|may(?=\s+(?:i|we|you|he|she|they|it)\b))\b", _FLAGS)


# The verb of a question ("did I *cook*", "the last time I *hiked*"): how it asks, not what it
# is about. "When did I last cook shakshuka?" is about shakshuka, whatever the entry's verb
# ("made shakshuka at home").
_VERB_AFTER_SUBJECT = re.compile(
    rf"\b(?:{_AUXILIARY}\s+{_SUBJECT}|(?:i|we|you|he|she|they))\s+(?P<verb>[a-z]+)\b", _FLAGS)


# The subject is a pronoun or a capitalised name: "Who was the new addition?" asks for a subject.
_WHOM = re.compile(rf"^\W*(?:who|whom)\s+{_AUXILIARY}\s+"
                   r"(?:i|we|you|he|she|they|(?-i:[A-Z])[\w'-]+(?:\s+(?-i:[A-Z])[\w'-]+)?)\s+"
                   r"(?P<rest>[^?]*)", _FLAGS)
_STRANDED = re.compile(r"\b(?:with|for|to|from|by|about|at|on|in|of|after|before|near|"
                       r"without|behind|beside|alongside|against)\W*$", _FLAGS)


def asks_whom(need: str) -> bool:
    """Whether the need asks for the person someone acted on: "Who did I go to see?", "Who
    have I visited?", "Whom did Ana call?"; not a companion or anyone after a preposition
    ("Who did I hike with?", "Who did I cook for?") nor a subject ("Who called me?")."""
    match = _WHOM.match(need)
    return match is not None and not _STRANDED.search(match.group("rest"))


def question_verbs(question: str) -> set[str]:
    """The lower-cased words that follow a subject ("did I cook", "I hiked"): the verbs."""
    return {m.group("verb").lower() for m in _VERB_AFTER_SUBJECT.finditer(question)}


# What may stand between a verb and its object: "make a lemon tart", "fix the kitchen tap".
_OBJECT_OPENERS = frozenset("a an the my our some this that".split())
# Objects that name no thing: "repair something", "make anything".
_NO_THING = frozenset("""
    something anything everything nothing thing things stuff one ones it them
    together up out back home away again round around along about over off in on
""".split())
# A place the doing was at names the thing too: "out on the ridge", "up at the old quarry".
_AT_A_PLACE = re.compile(r"\b(?:on|at|along|across|over|around|through|up|to)\s+the\s+"
                         r"(?P<thing>[a-z][\w'’-]*(?:\s+[a-z][\w'’-]*)?)", _FLAGS)
_OBJECT_WORD = re.compile(r"[A-Za-z][\w'’-]*")


def asked_thing(need: str) -> str | None:
    """The thing a question asks about, when its verb takes one: the words after the verb
    up to a function word ("When did I last cook shakshuka?" → "shakshuka", "When did I
    first make a lemon tart?" → "lemon tart", "When did I last fix the kitchen tap?" →
    "kitchen tap"); None when the verb takes none ("What was the last film I saw?", "Which
    dish did I cook first?"), takes a gerund ("go hiking": a kind of doing) or a word that
    names nothing ("repair something")."""
    for match in _VERB_AFTER_SUBJECT.finditer(need):
        rest = _OBJECT_WORD.findall(need[match.end():])
        while rest and rest[0].lower() in _OBJECT_OPENERS:
            rest = rest[1:]
        thing: list[str] = []
        for word in rest:
            lower = word.lower()
            if lower in STOPWORDS or lower in _NO_THING:
                break
            thing.append(word)
        if thing and not thing[-1].lower().endswith("ing") and _names_a_thing(thing[-1]):
            return " ".join(thing)
    at_place = _AT_A_PLACE.search(need)
    if at_place is not None:
        words = [w for w in at_place.group("thing").split() if w.lower() not in STOPWORDS]
        return " ".join(words) or None
    return None


def _names_a_thing(word: str) -> bool:
    """Whether a word can name a thing: a noun, or a word the lexicon does not know (a name,
    "shakshuka"); not "live" in "see the band live"."""
    from ..lexicon import word_readings

    readings = word_readings(word.lower())
    return not readings or "NOUN" in readings or "PROPN" in readings


# Verbs that say little of what happened ("Who have I gone to see?", "What did I do?"): never
# the word an occurrence is matched by when it is the question's verb ("gone"). An infinitive
# after it ("see") is read as the need's word: "Who have I gone to see since May?" counts the
# reports holding "see" ("drove out to see Aunt Rosa"); dropping it lowered the journal
# benchmark's since style (results/between-events.txt). The stopwords hold go, went, made, make,
# do, did, get, got.
LIGHT_VERBS = frozenset(
    """
    gone going goes see seen saw sees seeing come came comes coming take took taken takes
    taking give gave given gives put puts done doing getting gotten makes making happen
    happened happens use used try tried keep kept let
    """.split()
)


def order_words_removed(text: str) -> str:
    """``text`` without any order word, wherever it stands: for a paraphrase of a question
    whose order was already read ("when Caroline last went hiking", an analyzer's need)."""
    return " ".join(_ORDER_WORDS.sub(" ", text).split())


# Questions about what was said, not done: "What did the assistant suggest in June?", "What
# did I ask about last week?". Their answers are questions and the assistant's words.
_ABOUT_SAYING = re.compile(
    r"\b(?:ask|asked|say|said|says|tell|told|talk|talked|discuss|discussed|mention|mentioned|"
    r"write|wrote|written|suggest|suggested|recommend|recommended|reply|replied|answer|"
    r"answered|chat|chatted|message|messaged|assistant|conversation)\b", _FLAGS)


def asks_about_saying(question: str) -> bool:
    """Whether the question is about what was said rather than what happened."""
    return _ABOUT_SAYING.search(question) is not None


# Counting: "how many times", "how often", "how many <plural> did/have <subject>", and
# "which/what <plural> did/have <subject>" (every one of them, not the best K).
# A plural noun: not a word in -ss/-is/-us ("bus"), not one of the singulars in -s ("news"),
# not a unit of time ("how many weeks did it take" asks for a duration, not for occurrences).
_NOT_PLURAL = (r"(?!(?:news|series|species|means|lens|physics|politics|economics|"
               r"seconds|minutes|hours|days|weeks|months|years|decades)\b)")
_PLURAL = _NOT_PLURAL + r"[a-z]+(?:[^siu\W]s|ies|ves|men|people|children)"
# "Count my hikes in May", "Number of films since March": a command, as a search box takes it.
_COUNT_COMMAND = r"^\W*(?:count\s+(?:my|the|all|every|our)\b|(?:the\s+)?number\s+of\b)"
HOW_MANY_PATTERNS: tuple[re.Pattern[str], ...] = (
    re.compile(r"\bhow\s+many\s+times\b|\bhow\s+often\b", _FLAGS),
    re.compile(rf"\bhow\s+many\s+(?:\w+\s+)?{_PLURAL}\s+(?:[\w'-]+\s+){{0,4}}?"
               rf"(?:did|have|has|had)\s+{_SUBJECT}\b", _FLAGS),
    # "How many hikes so far this year?", "How many films in March?": no verb, a time
    re.compile(rf"\bhow\s+many\s+(?:\w+\s+)?{_PLURAL}(?=\s+(?:so\s+far|this|last|in|since|"
               rf"over|during|between|before|after|from)\b)", _FLAGS),
    re.compile(rf"{_COUNT_COMMAND}\s+(?:\w+\s+)?{_PLURAL}\b", _FLAGS),
)
# "List every dish I cooked in May", "All the films we watched in March?", "Name each hike I
# did after the move": every one of them; opening the question (not "What did I do with all
# the money I saved?", "every time I went", "every Sunday").
_EVERY = (r"\b(?:every|each|all\s+(?:the|my|our|of\s+the|of\s+my))\s+"
          r"(?!(?:time|times|day|days|week|weekend|month|year|morning|evening|night|"
          r"monday|tuesday|wednesday|thursday|friday|saturday|sunday)\b)")
COUNTING_PATTERNS: tuple[re.Pattern[str], ...] = (
    *HOW_MANY_PATTERNS,
    re.compile(rf"\b(?:which|what)\s+(?:\w+\s+)?{_PLURAL}\s+(?:\w+\s+)?"
               rf"(?:did|have|has|had)\s+{_SUBJECT}\b", _FLAGS),
    re.compile(rf"^\W*(?:(?:list|show\s+me|name|give\s+me|tell\s+me)\s+)?{_EVERY}"
               rf"(?:\w+\s+)?[a-z][\w'-]*\s+(?:that\s+|which\s+)?(?:i|we)\s+"
               rf"(?!(?:do|go|have|usually|always|ever|never|will|would|can|could|should)\b)"
               rf"[a-z]", _FLAGS),
)
_COUNTING_WORDS = re.compile(rf"\bhow\s+many\s+times\b|\bhow\s+often\b|{_COUNT_COMMAND}|"
                             rf"^\W*(?:list|show\s+me|name|give\s+me|tell\s+me)\s+"
                             rf"(?=every|each|all)",
                             _FLAGS)


def is_counting(question: str) -> bool:
    """Whether the question asks for every occurrence (and how many there are). A question
    in the present ("How often does John see sunsets?", "How many kids does Mel have?") asks
    for a stated habit or fact, not for occurrences to count."""
    if _NOT_PAST.match(question):
        return False
    return any(pattern.search(question) for pattern in COUNTING_PATTERNS)


# "What have I cooked since ...", "Who have we visited since ...": the present perfect with a
# "since" asks for everything since then, as a plural "which" does.
_PERFECT_LIST = re.compile(rf"^\W*(?:what|who|whom|which|where)\b.*\b(?:have|has)\s+{_SUBJECT}\b",
                           _FLAGS)


def lists_since(question: str) -> bool:
    """Whether a question in the present perfect ("What have I cooked ...") asks for a list
    (with a "since" range: every occurrence since then)."""
    return _PERFECT_LIST.search(question) is not None


def asks_how_many(question: str) -> bool:
    """Whether it asks for a number ("how many", "how often"), not only for a plural list."""
    return is_counting(question) and any(p.search(question) for p in HOW_MANY_PATTERNS)


def without_counting_words(question: str) -> str:
    return " ".join(_COUNTING_WORDS.sub(" ", question).split())


# Event anchors. The relation, then the anchor clause up to a comma or the end.
_NUMBER = {"one": 1, "a": 1, "an": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
           "seven": 7, "eight": 8, "nine": 9, "ten": 10, "couple of": 2, "few": 3}
_COUNT = r"(?P<n>\d{1,2}|one|two|three|four|five|six|seven|eight|nine|ten|a\s+couple\s+of|a\s+few)"
_UNIT = r"(?P<unit>days?|weeks?|fortnights?|weekend|months?|morning|evening|night)"
# What may open an anchor clause: a person or pronoun, a possessive, an article, a name.
_CLAUSE_START = (r"(?P<phrase>(?:i|we|you|he|she|they|my|our|your|his|her|their|the|that|"
                 r"[A-Z][\w'-]*)\b[^,;?!.]*)")
# Clauses that are not events: "since you asked", "after all", "before long", "after that",
# "the weekend after next".
_NOT_AN_EVENT = re.compile(
    r"^(?:you\s+asked|all|long|that|this|then|it|so|which|when|while|now|today|tomorrow|"
    r"yesterday|tonight|how|what|who|why|where|whom|whose|everything|anything|something|"
    r"nothing|(?:next|last)\s*$)\b", _FLAGS)  # "the weekend after next": a time, no event
# Relations of an open range: the anchor's day is inside it.
OPEN_RELATIONS = frozenset({"since", "after", "before", "until"})

# A preposition and an article before the unit belong to the relation ("in the week after the
# move", "a month before the wedding"): left in the need they would be searched for.
# "the seven days after X", "in the three days before X": every day of the span; "three
# days after X": that day.
RELATIVE_ANCHOR = re.compile(
    rf"\b(?:(?P<within>in|during|on|over|within)\s+)?(?:(?P<article>the|a|an)\s+)?"
    rf"(?:(?:first|next|following)\s+)?(?:{_COUNT}\s+)?{_UNIT}\s+"
    rf"(?P<dir>before|after|following|leading\s+up\s+to)\s+{_CLAUSE_START}", _FLAGS)
# "right after", "just before", "shortly after": a few days next to the event, not all time.
# "up to" after a form of "be" or "get", or its subject, is what someone did ("What have I
# been up to since the move?", "What was I up to before the move?", "What did I get up to in
# Oslo?"), not a range ending at the event.
_UP_TO = (r"(?<!\bget\s)(?<!\bgot\s)(?<!\bgetting\s)(?<!\bbe\s)(?<!\bbeen\s)(?<!\bwas\s)"
          r"(?<!\bwere\s)(?<!\bam\s)(?<!\bis\s)(?<!\bare\s)(?<!['’]m\s)(?<!['’]re\s)"
          r"(?<!\bi\s)(?<!\bwe\s)(?<!\byou\s)(?<!\bhe\s)(?<!\bshe\s)(?<!\bthey\s)up\s+to")
OPEN_ANCHOR = re.compile(
    rf"\b(?:(?P<near>{NEAR})\s+)?(?P<dir>ever\s+since|since|after|before|until|till|{_UP_TO}|"
    rf"up\s+until|prior\s+to|once|following|ahead\s+of|leading\s+up\s+to|"
    rf"in\s+the\s+(?:run|lead)[\s-]+up\s+to)\s+{_CLAUSE_START}", _FLAGS)

# The event's own day, week, month or year: "the day I moved", "the week I started at
# Brightwell", "the morning of the exam", "the year we met". The unit is the relation's. The
# clause opens with a person, a possessive, an article or a capitalised name, in any case but
# the name's: "What day of the week did I move?" asks about a weekday.
SAME_TIME_ANCHOR = re.compile(
    r"\b(?:(?:on|in|during|over)\s+)?the\s+(?:very\s+|same\s+)?"
    r"(?P<same>day|night|morning|afternoon|evening|weekend|week|month|year)\s+"
    r"(?:that\s+|when\s+|of\s+)?(?P<phrase>(?:i|we|you|he|she|they|my|our|your|his|her|"
    r"their|the|(?-i:[A-Z])[\w'-]*)\b[^,;?!.]*)", _FLAGS)
# An occasion named with its owner is a day: "on my birthday", "at Lena's wedding", "during our
# anniversary dinner", "at our neighbour Sven's retirement party". Without an owner it is no
# one event ("at a wedding", "on birthdays").
_OCCASIONS = r"(?:birthday|anniversary|wedding|graduation|retirement|funeral)"
_OWNER_NAME = r"(?:(?-i:[A-Z])[\w-]*\s+){0,2}(?-i:[A-Z])[\w-]*['’]s"  # "Lena's", "Aunt Rosa's"
OCCASION_ANCHOR = re.compile(
    rf"\b(?:on|at|during)\s+(?P<phrase>(?:my|our|his|her|their|{_OWNER_NAME})\s+"
    rf"(?:[\w'’-]+\s+){{0,2}}?{_OCCASIONS}(?:\s+(?:party|day|dinner|ceremony))?)\b", _FLAGS)
# Whose occasion an anchor phrase names: the last possessive before it ("my sister Lena's
# wedding": Lena's; "our neighbour Sven's retirement party": Sven's), else "my" / "our" at its
# start ("my 30th birthday").
_OCCASION_OWNER = re.compile(
    rf"(?:^(?P<own>my|our)\s+(?:(?![\w-]*['’]s\b)[\w'’-]+\s+){{0,2}}?"
    rf"|\b(?P<name>[\w-]+)['’]s\s+(?:[\w'’-]+\s+){{0,2}}?)(?P<occasion>{_OCCASIONS})\b",
    _FLAGS)
# A stay somewhere: "while I was in Lisbon", "when we were staying in New York", "while
# visiting Porto", "during my trip to Whitby", "on our holiday in Crete", "the last time I
# was in Lisbon" (its latest stay). The place is named (capitalised): "while I was in the
# shower", "when I was in school" are no stay. Its span is read from the bank
# (``retrieve.stay_span``).
_PLACE = (r"(?P<phrase>(?-i:[A-Z])[\w'’-]*(?:\s+(?:(?:of|de|la|le|del|am|upon)\s+)?"
          r"(?-i:[A-Z])[\w'’-]*){0,3})")
# The same place in a second alternative of one pattern (a group name is used once).
_PLACE2 = _PLACE.replace("(?P<phrase>", "(?P<phrase2>")
# Which stay, when several: "the last time I was in Lisbon", "on my first trip to Porto".
_STAY_ORDER = r"first|last|latest|most\s+recent|previous"
_TRIP_NOUN = (r"(?:trip|stay|visit|holiday|holidays|vacation|travels|getaway|break|journey|"
              r"adventure)")
STAY_ANCHOR = re.compile(
    rf"\b(?P<stay>(?:while|whilst|when|the\s+(?P<stay_order>{_STAY_ORDER})\s+time)\s+"
    r"(?:i|we)\s+(?:was|were)\s+(?:(?:(?:staying|living|travell?ing|working|studying|away|"
    r"abroad|on\s+(?:holiday|vacation))\s+)?(?:in|at)|visiting)"
    r"|(?:while|whilst)\s+(?:visiting|staying\s+(?:in|at)|in|away\s+in|travell?ing\s+in)"
    r"|(?:when|while|whilst|the\s+time)\s+(?:i|we)\s+(?:went|travell?ed|flew)\s+(?:away\s+)?to"
    rf"|(?:during|on|over|for|in)\s+(?:my|our|the|that)\s+"
    rf"(?:(?P<trip_order>{_STAY_ORDER})\s+|\w+\s+)?"
    rf"(?:{_TRIP_NOUN}|time|week|weekend|days)\s+(?:to|in|at))\s+(?:the\s+)?{_PLACE}"
    # "on the Oslo trip", "during our Seville holiday", "on my last Porto trip"
    rf"|\b(?P<stay_named>(?:during|on|over|for|in)\s+(?:my|our|the|that)\s+"
    rf"(?:(?P<named_order>{_STAY_ORDER})\s+)?){_PLACE2}\s+{_TRIP_NOUN}\b",
    _FLAGS)
# The time a clause names, hung on "when": "Which book was I halfway through when we moved?",
# "What did I cook when Lena came to stay?", "When Gran died, what was I reading?"; and "around
# / at the time of the move". The event's own day, as "the day we moved" is. The clause must
# tell a past doing (``_tells_a_past_doing``): "When did I move?" asks when, "when I was in the
# shower" is a state, "What do I eat when I travel?" is a habit.
WHEN_ANCHOR = re.compile(
    r"\b(?:(?P<when_clause>when|(?:around|about)\s+the\s+time\s+(?:when|that))|"
    r"(?:around|about|at)\s+the\s+time\s+of)\s+"
    r"(?P<phrase>(?:i|we|you|he|she|they|my|our|your|his|her|their|the|"
    r"(?-i:[A-Z])[\w'’-]*)\b[^,;?!.]*)", _FLAGS)
# Words that open a clause's subject before its verb: "my sister", "the cat", "Aunt Rosa".
_SUBJECT_WORDS = 3
_NOT_A_DOING = frozenset({"be", "have", "do"})


def _tells_a_past_doing(clause: str) -> bool:
    """Whether ``clause`` opens with a subject ("we", "Gran", "my sister") whose verb, within
    ``_SUBJECT_WORDS`` words, is in the past and is not "be", "have" or "do"."""
    words = clause.split()
    for word in words[1:1 + _SUBJECT_WORDS]:
        if word[0].isupper():
            continue  # a name's word: "Aunt Rosa"
        past = past_of(word.lower())
        if past is not None:
            return past not in _NOT_A_DOING
        readings = lemmas(word.lower())
        if readings.keys() & {"VERB", "AUX"} and "NOUN" not in readings:
            return False  # a verb, not in the past: "when he says", "when it is late"
        # else the subject's noun ("when my dog died": "dog" is a verb too) or no verb
    return False


# A stay's first or last day named by it: "on our last night in Rome", "my first morning in
# Oslo", "on the way back from Porto" (relation ``day_of``; the last day: ``homecoming``).
TRIP_EDGE_ANCHOR = re.compile(
    rf"\b(?:on\s+|during\s+)?(?:(?:my|our|the)\s+(?P<edge>first|last|final)\s+"
    rf"(?:night|day|evening|morning|afternoon)\s+(?:in|at)|the\s+way\s+(?P<back>back|home)\s+"
    rf"from)\s+(?:the\s+)?{_PLACE}", _FLAGS)
# "What did I eat in Lisbon?": a place at the end of a question with no time of its own is
# where a stay was, when the bank tells of arriving there (``retrieve.stay_arrival``; when it
# does not, the place is searched as words, as before). Not in a question asking when ("When
# was I in Lisbon?" asks for every time).
_ASKS_WHEN = re.compile(r"^\W*when\b", _FLAGS)
BARE_STAY_ANCHOR = re.compile(rf"\b(?P<stay>in)\s+(?:the\s+)?{_PLACE}(?=\s*[?.!]*\s*$)",
                              _FLAGS)
# Phrases after "the day of" that are times, not events: "the day of the week".
_A_TIME_NOT_AN_EVENT = re.compile(
    r"^(?:the|a|that|this)\s+(?:week|month|year|day|time|moment)\s*$", _FLAGS)
_SAME_UNIT = {"day": "day", "night": "day", "morning": "day", "afternoon": "day",
              "evening": "day", "weekend": "weekend", "week": "week", "month": "month",
              "year": "year"}


_TRIP_ORDER = rf"(?:(?:{_STAY_ORDER})\s+)?"
# An event phrase that names a trip: "my trip to Oslo", "the Oslo trip", "going to Oslo", "the
# time we went to Seville", "I got back from Porto", "our holiday in Crete".
TRIP_PHRASES: tuple[re.Pattern[str], ...] = (
    re.compile(rf"^(?:(?:my|our|the|that|this)\s+)?{_TRIP_ORDER}(?:\w+\s+)?{_TRIP_NOUN}\s+"
               rf"(?:to|in|at)\s+(?:the\s+)?{_PLACE}\s*$", _FLAGS),
    re.compile(rf"^(?:(?:my|our|the|that|this)\s+)?{_TRIP_ORDER}{_PLACE}\s+{_TRIP_NOUN}\s*$",
               _FLAGS),
    re.compile(rf"^(?:(?:the\s+)?time\s+)?(?:(?:i|we)\s+)?(?:went|flew|travell?ed|drove|"
               rf"headed|got|came|returned|going|flying|travell?ing|heading|getting|"
               rf"coming|being|was|were|visiting|stayed|staying)\s+(?:away\s+|back\s+|home\s+)?"
               rf"(?:to|in|from)\s+(?:the\s+)?{_PLACE}\s*$", _FLAGS),
    re.compile(rf"^(?:my|our)\s+(?:time|days|week|weekend)\s+(?:in|at)\s+(?:the\s+)?"
               rf"{_PLACE}\s*$", _FLAGS),
    # "before Oslo", "after Lisbon": a place alone, read as the trip there when the bank
    # has one (``retrieve.stay_arrival``; else the words are searched as any event's)
    re.compile(rf"^{_PLACE}\s*$"),
)


# A trip's end named as the event: "the night I got back from Oslo", "when we came home from
# Crete", "the week I returned from Porto".
_HOMECOMING = re.compile(r"\b(?:(?:back|home)\s+from|returned\s+from|returning\s+from)\b",
                         _FLAGS)


def trip_place(phrase: str) -> str | None:
    """The place an event phrase names a trip to ("my trip to Oslo", "the Oslo trip", "going
    to Oslo", "the time we went to Seville"), else None."""
    for pattern in TRIP_PHRASES:
        match = pattern.match(phrase.strip())
        if match is not None:
            return match.group("phrase")
    return None


def find_event_anchor(question: str, cues: list[TimeCue]) -> EventAnchor | None:
    """The time given by another event, when the question has one that no time cue covers.

    "the day after tomorrow" and "since 2020" are time cues (``recall.time``), read there; an
    anchor is only looked for outside the cues' spans. "before / after <event>" without a
    unit fixes a time only in a question about the past ("What did I eat after ..."), not in
    one about the present or a plan ("What does John want to do after his career?").
    The event's own time ("the day I moved", "on my birthday": ``day_of``) is read in a
    question about the past only, as an open range is: "What will I pack the day I leave?" is
    a plan.
    Returns the relation and the phrase that finds the anchor memory; the memory itself is
    found at search time.
    """
    taken = [cue.span for cue in cues if cue.range is not None]
    patterns = (RELATIVE_ANCHOR,) if _NOT_PAST.match(question) else (
        RELATIVE_ANCHOR, OPEN_ANCHOR, SAME_TIME_ANCHOR, OCCASION_ANCHOR, TRIP_EDGE_ANCHOR,
        STAY_ANCHOR, WHEN_ANCHOR,
        *(() if cues or _ASKS_WHEN.match(question) else (BARE_STAY_ANCHOR,)))
    how_long = [m.span() for m in re.finditer(_HOW_LONG_SINCE, question, _FLAGS)]
    for pattern in patterns:
        for match in pattern.finditer(question):
            if any(start < match.end() and match.start() < end
                   for start, end in _cues_in_the_way(match, taken)):
                continue
            if any(start <= match.start() < end for start, end in how_long):
                continue  # "How long has it been since I saw Lena?": an order, no range
            phrase = (match.group("phrase") or match.groupdict().get("phrase2") or "").strip()
            if _NOT_AN_EVENT.match(phrase) or _A_TIME_NOT_AN_EVENT.match(phrase) or \
                    not content_words(phrase):
                continue
            if match.groupdict().get("when_clause") and not _tells_a_past_doing(phrase):
                continue
            if match.re is TRIP_EDGE_ANCHOR:
                return EventAnchor(phrase=phrase, relation="day_of",
                                   text=question[match.start():match.end()].strip(),
                                   span=(match.start(), match.end()), trip=True,
                                   homecoming=(match.group("edge") or "").lower() != "first")
            order, searched = anchor_order(phrase)
            if not content_words(searched):  # "after I first": an order of nothing
                continue
            order = order or _stay_order(match)
            relation = _relation(match)
            place = trip_place(searched) if relation != "stay" else None
            return EventAnchor(phrase=place or searched, relation=relation, order=order,
                               text=question[match.start():match.end()].strip(),
                               span=(match.start(), match.end()), trip=place is not None,
                               homecoming=place is not None and bool(_HOMECOMING.search(searched)))
    return None


def _cues_in_the_way(match: re.Match[str], taken: list[tuple[int, int]]
                     ) -> list[tuple[int, int]]:
    """The time cues' spans that stop ``match`` from being an anchor: all of them, except
    one inside the unit of a span next to an event ("on the weekend" in "the walks I went on
    the weekend before my birthday": the weekend before it, not the latest weekend)."""
    if match.re is not RELATIVE_ANCHOR:
        return taken
    return [(start, end) for start, end in taken
            if not (match.start() <= start and end <= match.start("dir"))]


def occasion_query(phrase: str) -> str | None:
    """The FTS5 query that finds an occasion as its owner's: the owner's word within two
    words of the occasion ("my birthday" finds "My birthday!" and "my 30th birthday", not
    "Lena's birthday dinner"; "David's wedding" finds "David's wedding", not "Went to Jonas's
    wedding; I called David"), where the words alone would take either. None for any other
    anchor phrase. The anchor search falls back to the words when it finds nothing
    (``retrieve.find_anchor_memory``: "Lena's wedding" told as "Lena got married")."""
    match = _OCCASION_OWNER.search(phrase)
    if match is None:
        return None
    owner = (match.group("own") or match.group("name")).lower()
    return f'NEAR("{owner}" "{match.group("occasion").lower()}", 2)'


def leaves_out_the_event(frame: RecallFrame) -> bool:
    """Whether the question asks about another time than the event that fixes it: "the day
    after I adopted the cat", "right after the move", a range between two events, a count
    since an event. Its words then leave the need, and its own memory is no answer. An open
    range ("after the accident", "since I moved") holds the event's day, and what is said
    about the event there is often the answer; but not when it asks for the first or last of
    something else ("the last film I saw before the trip")."""
    anchor = frame.anchor
    return anchor is not None and (anchor.relation not in OPEN_RELATIONS or frame.counting
                                   or frame.order is not None)


# A range between two ends, each an event or a time: "between the move and Christmas", "from
# the day I adopted the cat to the vet visit", "since Lena's wedding until May", "after the
# move and before the wedding". "between" pairs with "and"; "after" with "and before"; "from"
# and "since" with "to", "until", "till", "up to".
RANGE_OPENER = re.compile(
    r"\b(?:(?P<between>between)|(?P<after>after)|from|ever\s+since|since)\s+"
    r"(?P<ends>[^,;?!.]+)", _FLAGS)
_AND = re.compile(r"\s+and\s+", _FLAGS)
_AND_BEFORE = re.compile(r"\s+(?:and|but)\s+(?:before|until|till)\s+", _FLAGS)
_UNTIL = re.compile(r"\s+(?P<word>to|until|till|up\s+to|up\s+until)\s+", _FLAGS)
# Words before "between" that make it a choice or a place, not a time: "What did I choose
# between the blue dress and the red one?", "Who sat between Anna and Tom?".
_NOT_A_TIME_BETWEEN = re.compile(
    r"\b(?:choos\w*|chose\w*|pick\w*|decid\w*|prefer\w*|differen\w*|compar\w*|sat|sit|"
    r"stood|stand|split|divided|torn|distance|way|travel\w*|drove|driven|flew|flown)\s+"
    r"(?:\w+\s+)?$", _FLAGS)
# A gerund that opens a range's end ("between adopting the cat and ..."), not a noun that
# ends in -ing ("everything", "morning", "the wedding").
_GERUND = (r"(?!(?:every|any|some|no)thing\b|morning\b|evening\b|spring\b|during\b|"
           r"wedding\b|ceiling\b|building\b)[a-z]{2,}ing")
# How an event end may read: a clause ("I adopted the cat", "Maria adopting Coco"), a gerund
# ("adopting Miso"), a day named by a clause ("the day I moved"), or a noun phrase with an
# article or a possessive ("the move", "my sister's wedding", "Uncle Karl's retirement party").
_CLAUSE_END = re.compile(
    rf"^(?:(?:i|we|you|he|she|they)\s+\w+|(?-i:[A-Z])[\w-]*\s+(?:\w+ed|{_GERUND})\b|"
    rf"{_GERUND}\b)",
    _FLAGS)
_DAY_OF_A_CLAUSE = re.compile(
    r"^the\s+(?:day|night|morning|evening|time)\s+(?:that\s+|when\s+|of\s+)?"
    r"(?=(?:i|we|you|he|she|they|my|our|your|his|her|their|the)\b)", _FLAGS)
_NOUN_PHRASE_END = re.compile(
    r"^(?:(?:my|our|your|his|her|their|the|a|an)\s+\w|"
    r"(?:(?-i:[A-Z])[\w-]*\s+){0,2}(?-i:[A-Z])[\w-]*['’]s?\s+\w)", _FLAGS)


def find_event_range(question: str,
                     period: Callable[[str], TimeCue | None]
                     ) -> tuple[EventAnchor | TimeCue, EventAnchor | TimeCue] | None:
    """The two ends of a range that another event fixes at one end or both ("What did I do
    between the move and Christmas?", "How many films did I watch from the day I adopted the
    cat until Lena's wedding?"): each an :class:`EventAnchor` (relation ``"between"``, its
    phrase what finds the event's memory) or the time cue an end is as a whole (``period``:
    "Christmas", "May 2024"; its span where it stands in the question). None when both ends
    are times (a date range: ``recall.time`` reads it), when an end is neither (a bare name:
    "from Leeds to York"), for a choice or a place ("choose between", "sat between"), and in
    a question about the present or a plan. "from ... to" also needs an end that is a time,
    a clause or a gerund: "What did I send from my phone to my laptop?" names no events."""
    if _NOT_PAST.match(question):
        return None
    for opener in RANGE_OPENER.finditer(question):
        between = opener.group("between") is not None
        if between and _NOT_A_TIME_BETWEEN.search(question[:opener.start()]):
            continue
        text = opener.group(0).rstrip()
        span = (opener.start(), opener.start() + len(text))
        ends, at = opener.group("ends"), opener.start("ends")
        # Each joint in turn: "from the day I flew to Tallinn until Leo's wedding" splits at
        # "until", after "to" gave no second end ("Tallinn until Leo's wedding").
        joints = _AND if between else _AND_BEFORE if opener.group("after") else _UNTIL
        for joint in joints.finditer(ends):
            first_text, second_text = ends[:joint.start()].strip(), ends[joint.end():].strip()
            first = _range_end(first_text, at, text, span, period)
            second = _range_end(second_text, at + joint.end(), text, span, period)
            if first is None or second is None:
                continue
            if isinstance(first, TimeCue) and isinstance(second, TimeCue):
                return None
            if joint.groupdict().get("word", "").lower() == "to" and not (
                    _says_when(first, first_text) or _says_when(second, second_text)):
                continue
            return first, second
    return None


def _says_when(end: EventAnchor | TimeCue, text: str) -> bool:
    """Whether a range end reads as a time or an event in any sentence: a period, a clause,
    a gerund, a day named by a clause (not a noun phrase: "my phone")."""
    return isinstance(end, TimeCue) or bool(_CLAUSE_END.match(text)
                                            or _DAY_OF_A_CLAUSE.match(text))


def _range_end(end: str, at: int, text: str, span: tuple[int, int],
               period: Callable[[str], TimeCue | None]) -> EventAnchor | TimeCue | None:
    """One end of a range (``end`` from ``at`` in the question; ``text`` the question's
    words of the whole range): the time cue it is, an event, or None."""
    when = period(end)
    if when is not None:
        return replace(when, span=(at, at + len(end)))
    if _NOT_AN_EVENT.match(end) or not content_words(end):
        return None
    if not (_CLAUSE_END.match(end) or _DAY_OF_A_CLAUSE.match(end)
            or _NOUN_PHRASE_END.match(end)):
        return None
    order, searched = anchor_order(_DAY_OF_A_CLAUSE.sub("", end))
    if not content_words(searched):
        return None
    return EventAnchor(phrase=searched, relation="between", order=order, text=text,
                       span=span)


# Time cues that name one of many: a holiday, a month, a season, a weekday, a day of a month
# without its year ("Christmas", "May", "the summer", "Monday", "3 May"). As the end of a range
# whose other end is an event, the one meant is the one next to the event.
RECURRING_TIMES = frozenset({"holiday", "month", "month_part", "season", "weekday", "weekend",
                             "day_month", "month_day", "day_of_month", "nth_weekday",
                             "quarter"})


def time_end_range(cue: TimeCue, event_time: int, *, starts: bool, tz: tzinfo,
                   country: str | None) -> TimeRange | None:
    """The range of a range's time end, as read next to its event end: "between the move and
    Christmas" is the first Christmas from the move on (``starts`` False: the time after the
    event), "from Easter until I broke my wrist" the last Easter by the fall (``starts``
    True). A time that names its year or is relative to now ("last week", "2024") keeps the
    question's reading."""
    if cue.rule not in RECURRING_TIMES:
        return cue.range
    near = datetime.fromtimestamp(event_time, tz).replace(hour=0, minute=0, second=0,
                                                          microsecond=0)
    found = range_end_cue(cue.text, near, country=country,
                          direction="past" if starts else "future")
    return found.range if found is not None else cue.range


def between_range(moment: int, other: int | TimeRange, tz: tzinfo) -> TimeRange:
    """The range between an event at ``moment`` and the other end (an event's moment, or a
    period), both ends' days included, whichever comes first."""
    first = _day_of(moment, tz)
    second = other if isinstance(other, TimeRange) else _day_of(other, tz)
    return TimeRange(min(first.start, second.start), max(first.end, second.end))


def _day_of(moment: int, tz: tzinfo) -> TimeRange:
    day = datetime.fromtimestamp(moment, tz)
    return TimeRange(_midnight(day), _midnight(day + timedelta(days=1)))


def _stay_order(match: re.Match[str]) -> str | None:
    """"the last time I was in Lisbon": the latest stay; "my first trip to Porto": the
    earliest; None for any other anchor."""
    groups = match.groupdict()
    word = groups.get("stay_order") or groups.get("trip_order") or groups.get("named_order")
    if word is None:
        return None
    return EARLIEST if word.lower() == "first" else LATEST


def _relation(match: re.Match[str]) -> str:
    groups = match.groupdict()
    if groups.get("stay") is not None or groups.get("stay_named") is not None:
        # "while I was in Lisbon", "on the Oslo trip": the stay's own span
        return "stay"
    if "dir" not in groups:  # the event's own time: "the week I moved", "on my birthday"
        return f"{_SAME_UNIT[(groups.get('same') or 'day').lower()]}_of"
    direction = " ".join(match.group("dir").lower().split())
    if re.match(r"^in the (?:run|lead)[\s-]+up to$", direction):
        return "month_before"  # the weeks before, as a time cue's run-up is (a month)
    direction = {"following": "after", "once": "after", "leading up to": "before",
                 "ahead of": "before"}.get(direction, direction)
    if groups.get("unit") is None:
        if "since" in direction:
            return "since"
        if direction in ("until", "till", "up to", "up until"):
            return "until"
        direction = "before" if direction in ("before", "prior to") else "after"
        near = " ".join((groups.get("near") or "").lower().split())
        if near:  # "right after X" as "the day after X", "shortly before X" as "the week before"
            return f"{NEAR_UNIT[near]}_{direction}"
        return direction
    unit_text = groups["unit"].lower()
    unit = unit_text.rstrip("s")
    if unit in ("morning", "evening", "night"):
        unit = "day"
    if unit == "fortnight":
        unit_text, unit = "weeks", "week"
        groups = {**groups, "n": str(2 * _count(groups.get("n")))}
    if unit == "day" and groups.get("n") and (groups.get("article") or groups.get("within")):
        # "the seven days after the move": the span, not the seventh day
        return f"stretch_{direction}:{_count(groups.get('n'))}"
    if groups.get("n") is None and unit_text.endswith("s") and unit in STRETCH:
        unit, count = STRETCH[unit]
        return f"{unit}_{direction}" if count == 1 else f"{unit}s_{direction}:{count}"
    count = _count(groups.get("n"))
    if count == 1 or unit == "weekend":
        return f"{unit}_{direction}"
    return f"{unit}s_{direction}:{count}"


def _count(text: str | None) -> int:
    """A count as a question writes it ("7", "seven", "a couple of"); 1 without one."""
    count_text = " ".join((text or "").lower().split()).removeprefix("a ")
    return int(count_text) if count_text.isdigit() else _NUMBER.get(count_text, 1)


def relation_range(relation: str, moment: int, tz: tzinfo, *, timeline: TimeRange | None,
                   reference_time: int, last_moment: int | None = None) -> TimeRange:
    """The range ``relation`` gives relative to the anchor event at ``moment`` (an event of
    several days, a trip, lasts until ``last_moment``: what comes after it is counted from its
    last day, what comes before from its first).

    ``day_after``: the next day; ``week_before``: the 7 days before the anchor's day;
    ``weekend_after``: the first Saturday-Sunday after it; ``days_after:3``: the third day
    after; ``stretch_after:7``: the seven days after; ``weeks_before:2``: the 14 days
    before; ``day_of``, ``week_of``, ``month_of``,
    ``year_of``: the anchor's day, its week (Monday to Sunday), month or year; ``weekend_of``: the
    weekend next to the anchor's day, stretched to it (``calendar_math.weekend_next_to``: a
    Friday's Friday to Sunday, a Tuesday's Saturday to Tuesday); ``since`` and
    ``after``: the anchor's day to
    the reference day; ``before`` and ``until``: the bank's start to the anchor's day. The
    anchor's day is inside every open range: what happened after or before an event on its own
    day counts, the event's time of day is rarely known.
    """
    name, _, count_text = relation.partition(":")
    count = int(count_text) if count_text else 1
    unit, _, direction = name.partition("_")
    if last_moment is not None and (direction == "after" or name in ("since", "after")):
        moment = last_moment
    day = datetime.fromtimestamp(moment, tz).replace(hour=0, minute=0, second=0, microsecond=0)
    if last_moment is not None and name in ("before", "until", "since", "after"):
        # A trip of several days: before it ends as it begins, after it starts the day after
        # its last (its days are its own, "during" it).
        bank = timeline.start if timeline is not None else int(
            (day - timedelta(days=3650)).timestamp())
        if name in ("before", "until"):
            return TimeRange(min(bank, _midnight(day)), _midnight(day))
        following = _midnight(day + timedelta(days=1))
        return TimeRange(following, max(following + DAY_SECONDS,
                                        _midnight(datetime.fromtimestamp(reference_time, tz)
                                                  + timedelta(days=1))))
    reference_day_end = _midnight(datetime.fromtimestamp(reference_time, tz) + timedelta(days=1))
    bank_start = timeline.start if timeline is not None else int(
        (day - timedelta(days=3650)).timestamp())

    def at(offset_days: int) -> int:
        return _midnight(day + timedelta(days=offset_days))

    if not direction:  # since / after / before / until
        if name == "since":
            return TimeRange(at(0), max(at(1), reference_day_end))
        if name == "after":  # the anchor's day too: "what did I eat after the interview"
            return TimeRange(at(0), max(at(1), reference_day_end))
        return TimeRange(min(bank_start, at(0)), at(1))  # before / until: the day too
    if direction == "of":  # the event's own day, weekend, week (Monday to Sunday), month, year
        period_start, period_end = weekend_next_to((day.date(), day.date() + timedelta(days=1))) \
            if unit == "weekend" else period_holding(unit, day.date())
        return TimeRange(int(datetime.combine(period_start, time(), tzinfo=tz).timestamp()),
                         int(datetime.combine(period_end, time(), tzinfo=tz).timestamp()))
    sign = 1 if direction == "after" else -1
    if unit == "stretch":  # "the seven days after": every one of them
        return TimeRange(at(1), at(1 + count)) if sign > 0 else TimeRange(at(-count), at(0))
    unit = unit.rstrip("s")
    if unit == "weekend":
        step = 1 if sign > 0 else -1
        offset = step
        while (day + timedelta(days=offset)).weekday() != (5 if sign > 0 else 6):
            offset += step
        first = offset if sign > 0 else offset - 1
        return TimeRange(at(first), at(first + 2))
    length = {"day": 1, "week": 7, "month": 30}[unit]
    if count == 1 and unit == "day":
        return TimeRange(at(sign), at(sign + 1))
    if unit == "day":  # "three days after": that day
        return TimeRange(at(sign * count), at(sign * count + 1))
    span = length * count
    return TimeRange(at(1), at(1 + span)) if sign > 0 else TimeRange(at(-span), at(0))


def _midnight(moment: datetime) -> int:
    return int(moment.replace(hour=0, minute=0, second=0, microsecond=0).timestamp())


__all__ = ["EARLIEST", "LATEST", "LIGHT_VERBS", "OPEN_RELATIONS", "anchor_order", "asked_thing",
           "asks_about_saying",
           "asks_whom",
           "asks_how_many", "between_range", "detect_order", "find_event_anchor",
           "find_event_range", "is_counting", "leaves_out_the_event", "lists_since",
           "occasion_query",
           "time_end_range", "order_words_removed", "question_verbs", "relation_range",
           "without_counting_words", "without_order_words"]
