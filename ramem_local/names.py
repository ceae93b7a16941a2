"""The people a text names, read without a model (``read_names``, ``mentioned_names``,
``mentioned_persons``); and the names a question is about, of people or not
(``named_phrases``, ``name_candidates``); and the works a text names by their titles
(``named_works``).

A turn memory's persons were its speaker and the conversation's participants it names; "Remind
me that Lena is vegetarian" named nobody. ``read_names`` reads the other names from the shape
of the text alone, the same way every time:

1. A *name word* is a capitalised word with a lower-case letter in it ("Lena", "LeBron",
   "O'Neil", "Spider-Man"; not "NYC", "DIYs", "I" or "Middle-earth"), possessives dropped
   ("Lena's" -> "Lena"), that is not in ``NOT_NAMES`` (function words, "I" and its
   contractions, months, weekdays, holidays, greetings and chat words, kinship words and
   titles, languages and nationalities). Consecutive name words ("Ed Sheeran", "Amy Ellis
   Nutt") are one name; initials join them ("J.K. Rowling", "George R. R. Martin").
2. The first word of a sentence is capitalised whatever it is, so a name there counts only
   with a sign that it is one: a possessive followed by a word that is not a stopword
   ("Lena's birthday", not "Life's been"), "and I" / "and me" after it, or a verb of speaking
   or asking after it ("Lena said ..."); or when the conversation names that person elsewhere
   (``NamesRead.confirmed``: the ingest and migration m009 pass the names the conversation's
   memories hold, in whatever order its turns come). A colon starts a sentence too.
3. A name that does not stand for a person is left out: one in quotes (a title: "Little
   Women"); one after "the", "a" or "an" ("the Blue Room", "The Last Lighthouse"); one with a
   word of places, organisations or events in it ("Pine Lake", "Harbour Hall", "Echo Valley
   Band": ``PLACE_WORDS``); one after a preposition of place ("in Lisbon", "at Club
   Meridian", "near Fort Wayne"), after "to" with a verb of going up to three words before it
   ("went to Porto", "a trip last week to Rome"; "talked to Lena" is a person), or after
   "of" that follows a capitalised word ("the Cliffs of Moher"); a name of two words or more
   after a verb of reading, watching, hearing or playing ("watched Night Harbor", "heard
   Luna Brass live"); one followed by a word for a work or an event ("a Harry Potter
   conference", "the Harry Potter movies"); and one right after a capitalised possessive
   ("The Cartographer's Daughter"). A possessive keeps a name after a preposition, "to",
   "of" or a verb of watching ("dinner at Ana's" names Ana).
4. A kinship word or title before a name is not part of it: "Aunt Rosa" is "Rosa",
   "Grandpa Theo" is "Theo", "Dr. Patel" is "Patel"; a title alone is no name.

The participants of a conversation count wherever they stand and are spelled as they are
(``text.canonical_person``); ``mentioned_persons`` adds the participants a text names in any
case (``text.named_persons``).

Measured on LoCoMo dev turns labelled by hand and on the synthetic journal
(``scripts/measure_names.py``; docs/usage.md, "People named in what was said count"). Limits: a
one-word title or brand ("Gatorade", "Catan"), a title named after someone ("Harry Potter")
and a place named without a preposition ("What do you love about Seattle?") are read as
names; a name that starts a sentence without a sign and is named nowhere else in its
conversation, one written in lower case, and one that is also a word of ``NOT_NAMES`` are
missed; pets count as people.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterator, Sequence
from dataclasses import dataclass

from .text import STOPWORDS, canonical_person, named_persons, words

MONTHS = frozenset(
    "january february march april may june july august september october november december "
    "jan feb mar apr jun jul aug sep sept oct nov dec".split())
WEEKDAYS = frozenset(
    "monday tuesday wednesday thursday friday saturday sunday "
    "mon tue tues wed thu thur thurs fri sat sun weekend".split())
HOLIDAYS = frozenset(
    "christmas xmas easter thanksgiving halloween hanukkah chanukah diwali ramadan eid "
    "passover pentecost lent advent valentine valentines new year years eve boxing labor "
    "labour memorial independence pride carnival mardi gras kwanzaa".split())
# Words capitalised for being greetings, exclamations, chat words or sentence openers that
# are not stopwords; and those a chat capitalises mid-sentence ("Thanks, Nate!").
CHAT_WORDS = frozenset(
    """
    hey hi hello hiya howdy yo thanks thank thx ty wow whoa woah yay yep yup nope nah ok okay
    lol lmao omg btw fyi congrats congratulations cool awesome great nice sure sorry please bye
    goodbye cheers haha hahaha hehe ugh hmm um uh ah aw aww ooh oops wanna gonna gotta dear
    welcome morning evening night afternoon today tonight tomorrow yesterday good happy merry
    best love xoxo ps pss re fwd note update remind reminder also anyway well right exactly
    absolutely definitely totally honestly seriously indeed agreed true yes yeah no not maybe
    guess check look see let remember imagine everything everyone everybody nothing nobody
    someone somebody something anything anyone anybody nowhere somewhere anywhere everywhere
    """.split())
# Kinship words and titles: before a name they are not part of it ("Aunt Rosa" is "Rosa").
TITLES = frozenset(
    """
    mr mrs ms miss mx dr doctor prof professor sir madam dame lord lady saint st rev father
    mother sister brother aunt auntie aunty uncle cousin grandma grandpa granny grandma
    grandmother grandfather nana nan gran papa mama mom mum dad daddy mommy mummy pops coach
    captain capt officer judge president king queen prince princess pope baby bro sis
    son daughter wife husband partner friend boyfriend girlfriend fiance fiancee niece nephew
    godson goddaughter godmother godfather grandson granddaughter neighbour neighbor boss
    """.split())
LANGUAGES = frozenset(
    """
    english french german spanish italian portuguese dutch swedish norwegian danish finnish
    greek russian polish czech hungarian turkish arabic hebrew persian hindi urdu bengali
    chinese mandarin cantonese japanese korean thai vietnamese indonesian filipino latin
    american british european asian african canadian mexican brazilian argentinian irish
    scottish welsh australian indian pakistani israeli egyptian nigerian kenyan swiss austrian
    belgian midwestern western eastern northern southern christian muslim jewish catholic
    buddhist hindu protestant lgbtq lgbt
    """.split())
# Also capitalised for what they are, never people.
OTHER_WORDS = frozenset("god gods internet earth moon sun universe heaven hell bible".split())

NOT_NAMES = STOPWORDS | MONTHS | WEEKDAYS | HOLIDAYS | CHAT_WORDS | TITLES | LANGUAGES | \
    OTHER_WORDS

# A name with one of these words in it is a place, an organisation, a group or an event.
PLACE_WORDS = frozenset(
    """
    lake lakes river creek brook falls cliff cliffs ridge hill hills mount mountain mountains
    peak peaks valley canyon gorge forest woods wood park beach bay coast shore island islands
    isle marsh trail path bridge street st road rd avenue ave lane boulevard blvd drive square plaza
    station airport harbour harbor port pier hall theatre theater cinema museum gallery
    library church cathedral chapel temple mosque synagogue castle palace tower center centre
    club bar pub cafe café restaurant bistro diner bakery hotel inn hostel market mall store
    shop supermarket school college university uni academy institute hospital clinic studio
    studios stadium arena garden gardens zoo aquarium city town village county state states
    province republic kingdom empire north south east west northwest northeast southwest
    southeast band choir quartet orchestra trio ensemble company co inc ltd llc corp group
    team association foundation society committee council ministry department bank festival
    fest fair conference cup league championship championships finals awards day week
    airlines airways railway
    """.split())
# After these a name is no person ("the Blue Room", "a Harry Potter fan").
ARTICLES = frozenset(("the", "a", "an"))
# After these a name is a place ("in Lisbon", "at Club Meridian").
PLACE_PREPOSITIONS = frozenset(
    "in at near around across into inside outside through throughout towards toward "
    "via within under above below beyond behind beside along".split())
# "to" is a place only after one of these ("went to Porto"; "talked to Lena" is a person).
GOING_WORDS = frozenset(
    """
    go goes going went gone come comes coming came travel travels travelling traveling
    traveled travelled trip trips fly flies flying flew drive drives driving drove driven
    move moves moving moved moving head heads heading headed return returns returning
    returned back way road flight flights train bus ride visit visiting visited tour off
    ticket tickets welcome been moved relocate relocated relocating
    """.split())
# After these, a name of two words or more is a title ("watched Night Harbor").
MEDIA_VERBS = frozenset(
    """
    read reads reading watch watches watching watched saw see seen sees seeing hear hears
    hearing heard listen listens listening listened play plays playing played finished
    finishing began begin beginning started starting reread rereading rewatched rewatching
    binge binged binging
    """.split())
# Followed by one of these, a name is a title or an event ("the Harry Potter movies").
WORK_WORDS = frozenset(
    """
    book books novel novels series movie movies film films show shows game games song songs
    album albums trilogy saga franchise fan fans fandom trivia conference convention concert
    tour season episode episodes universe world store app character characters
    poster posters merch chronicles
    """.split())
# After a name at the start of a sentence, these say it is a person ("Lena said ...").
SPEAKING_VERBS = frozenset(
    """
    said says told tells asked asks called calls texted texts messaged emailed wrote writes
    invited invites replied answered mentioned thinks thought wants wanted loves loved
    """.split())

_LETTERS = r"[^\W\d_]"
# A capitalised word, its hyphen/apostrophe parts ("Spider-Man", "O'Neil"), and a possessive.
# An initial ("R.", not "I.") comes first: a capital letter alone is a word too.
_WORD = re.compile(
    rf"(?<!\w)(?!I\.)([A-Z]\.)(?=\s?{_LETTERS})"
    rf"|(?<![\w'’-])({_LETTERS}+(?:[-'’]{_LETTERS}+)*?)((?:['’]s|s['’])?)"
    rf"(?!\w|[-'’]{_LETTERS})"
)
_SENTENCE_END = re.compile(r"(?:[.!?…]+|:)(?=[\s\"'“”‘’)\]]*(?:\s|$))|\n|\s[-–—]+\s")
_QUOTED = re.compile(r"\"[^\"\n]{1,120}\"|“[^”\n]{1,120}”|(?<!\w)['‘][^'’\n]{1,120}['’](?!\w)")
_SPAN_GAP = re.compile(r"^\s?$")  # what may stand between two words of one name
_POSSESSIVE_S = re.compile(r"(?<=\w)['’]s\b")


def _is_name_shaped(word: str) -> bool:
    """Capitalised with a lower-case letter in it; an apostrophe only after one letter
    ("O'Neil", "D'Angelo"; "I'm" and "Can't" are no names); every part after a hyphen
    capitalised too ("Spider-Man", not "Middle-earth")."""
    if not word[0].isupper():
        return False
    if word.isalpha():  # the common case, at once
        return not word.isupper() and not (word[-1] == "s" and word[:-1].isupper())
    if not any(ch.islower() for ch in word.removesuffix("s")):
        return False  # "NYC", "I", "DIYs"
    apostrophe = max(word.find("'"), word.find("’"))
    if apostrophe >= 0 and not (apostrophe == 1 and word[2:3].isupper()):
        return False
    return all(part[:1].isupper() for part in word.split("-"))  # not "Middle-earth"


def _key(word: str) -> str:
    return word.casefold().replace("’", "'")


def _not_a_name(token: _Token) -> bool:
    return not token.initial and _key(token.text) in NOT_NAMES


def _is_title(token: _Token) -> bool:
    return not token.initial and _key(token.text) in TITLES


class _Token:
    __slots__ = ("text", "possessive", "start", "end", "initial", "sentence_start")

    def __init__(self, text: str, possessive: bool, start: int, end: int, initial: bool,
                 sentence_start: bool):
        self.text, self.possessive = text, possessive
        self.start, self.end = start, end
        self.initial, self.sentence_start = initial, sentence_start


def _tokens(text: str) -> list[_Token]:
    """The text's words and initials, each marked when it starts a sentence. A full stop after
    an initial ("R. R. Martin") or a title ("Dr. Patel") ends no sentence."""
    boundaries = [m.end() for m in _SENTENCE_END.finditer(text)]
    boundaries.append(len(text) + 1)  # a sentinel: no bound check in the loop
    tokens: list[_Token] = []
    position = 0  # into boundaries
    previous: _Token | None = None
    for match in _WORD.finditer(text):
        start, end = match.span()
        initial, word, possessive = match.groups()
        sentence_start = previous is None
        if boundaries[position] <= start:
            sentence_start = True
            while boundaries[position] <= start:
                position += 1
            if previous is not None and (previous.initial or (
                    text[previous.end] == "." and _key(previous.text) in TITLES)):
                sentence_start = False
        previous = _Token(initial, False, start, end, True, sentence_start) if initial else \
            _Token(word, bool(possessive), start, end, False, sentence_start)
        tokens.append(previous)
    return tokens


def _inside(spans: list[tuple[int, int]], position: int) -> bool:
    return any(start <= position < end for start, end in spans)


def _spans(tokens: list[_Token], text: str) -> Iterator[tuple[int, int]]:
    """``[first, end)`` of each run of capitalised words and initials one space apart, inside
    one sentence and outside quotes. A possessive ends a run ("Lena's Ben" is two), and a word
    of ``TITLES`` after a word that is no title starts a new one ("Visited | Aunt Rosa")."""
    quoted = [(m.start(), m.end()) for m in _QUOTED.finditer(text)] if (
        '"' in text or "“" in text or "'" in text or "‘" in text) else []
    capitalised = [(t.initial or _is_name_shaped(t.text)) and not _inside(quoted, t.start)
                   for t in tokens]
    index = 0
    while index < len(tokens):
        if not capitalised[index]:
            index += 1
            continue
        end = index + 1
        while end < len(tokens) and not tokens[end - 1].possessive and \
                not tokens[end].sentence_start and capitalised[end] and \
                _SPAN_GAP.match(text[tokens[end - 1].end:tokens[end].start]) and \
                not (_is_title(tokens[end]) and not all(map(_not_a_name, tokens[index:end]))):
            end += 1
        yield index, end
        index = end


@dataclass(frozen=True)
class NamesRead:
    """What ``read_names`` finds in a text: ``names`` by the rules alone, and
    ``at_sentence_start``: names that start a sentence without a sign of being one (rule 2),
    which count where the conversation knows them (``confirmed``)."""

    names: tuple[str, ...] = ()
    at_sentence_start: tuple[str, ...] = ()

    def confirmed(self, known: Collection[str] = ()) -> list[str]:
        """``names``, then the names at a sentence start that ``known`` holds (any case), in
        the order they first appear, each once."""
        known_keys = {name.casefold() for name in known}
        found = {name.casefold(): name for name in self.names}
        for name in self.at_sentence_start:
            if name.casefold() in known_keys:
                found.setdefault(name.casefold(), name)
        return list(found.values())


def read_names(text: str, participants: Sequence[str] = ()) -> NamesRead:
    """The names of people ``text`` mentions, read by the rules of the module docstring, in
    the order they first appear, each once; a name that stands for a participant is spelled
    as the participant (``text.canonical_person``) and counts wherever it stands."""
    tokens = _tokens(text)
    found: dict[str, str] = {}
    waiting: dict[str, str] = {}
    for first, end in _spans(tokens, text):
        name, vouched = _name_of(tokens, first, end, text, participants)
        if name and vouched:
            found.setdefault(name.casefold(), name)
        elif name:
            waiting.setdefault(name.casefold(), name)
    return NamesRead(tuple(found.values()),
                     tuple(n for key, n in waiting.items() if key not in found))


def participant_named(word: str, participants: Sequence[str]) -> str | None:
    """The participant one word names: by the whole name or a first name
    (``text.canonical_person``), or as the start, capitalised and three letters or more, of
    exactly one participant's name ("Mel" for Melanie); never a common word ("The" is not
    Theodore, "me" is not the journal's speaker ``me``)."""
    if word.casefold() in NOT_NAMES:
        return None
    named = canonical_person(word, participants)
    if named is not None or len(word) < 3 or not word[0].isupper():
        return named
    starting = [p for p in participants if p.casefold().startswith(word.casefold())]
    return starting[0] if len(starting) == 1 else None


def participants_named(text: str, participants: Sequence[str]) -> list[str]:
    """The participants a text names (``participant_named`` of each word), each once."""
    found = (participant_named(word, participants) for word in _LETTER_WORD.findall(text))
    return list(dict.fromkeys(name for name in found if name is not None))


_LETTER_WORD = re.compile(r"[^\W\d_]+")


def named_phrases(text: str) -> list[str]:
    """The names a question is about, of people, places or things alike: each run of
    capitalised words inside a sentence (not its first word), function words at its ends
    dropped ("The Silent Engine" -> "Silent Engine"), unless every word of it is one of
    ``NOT_NAMES`` ("in March", "on Sunday", "my Aunt"); longest first. Unlike ``read_names``
    it keeps titles, places and the words of ``NOT_NAMES`` inside a name ("Night Harbor",
    "Uncle Karl"): "When did I last watch Blue Meridian?" is about the film, whatever the
    verbs of its entries."""
    tokens = _tokens(text)
    phrases: dict[str, tuple[int, int]] = {}
    for first, end in _spans(tokens, text):
        if tokens[first].sentence_start or all(map(_not_a_name, tokens[first:end])):
            continue
        while first < end and _key(tokens[first].text) in STOPWORDS:
            first += 1
        while end > first and _key(tokens[end - 1].text) in STOPWORDS:
            end -= 1
        if first < end:
            phrase = " ".join(token.text for token in tokens[first:end])
            phrases.setdefault(phrase, (-(end - first), first))
    return sorted(phrases, key=phrases.__getitem__)


def named_works(text: str) -> list[str]:
    """The works a text names by their titles (films, books, albums, bands, shows), each as a
    key: lower case, a leading article dropped ("saw The Ferryman" -> "ferryman"), in the
    order they appear, each once. A title is a run of capitalised words (``_spans``; a
    possessive joins the word after it: "The Cartographer's Daughter") that

    - follows a verb of reading, watching, hearing or playing (``MEDIA_VERBS``), an article
      between them or not, and is two words or more or starts with an article ("watched
      Night Harbor", "heard the Velvet Tides live", "I saw The Ferryman"; "saw Lena" is a
      person); the verb may open the sentence ("Saw Small Hours at home");
    - or starts with a capitalised article inside a sentence, after no preposition of place
      and with no word of places in it ("picked up The Last Lighthouse at the library"; not
      "at The Old Theatre");
    - or is quoted right after such a verb ("watched "Dune"").

    A kinship word or title starts no work ("went to see Aunt Rosa"). Read so that a count
    can tell one report of a kind by another that names the same work (``retrieve``:
    "Saw Small Hours at home with Farid" is a film because "Watched Small Hours at the
    cinema" is)."""
    tokens = _tokens(text)
    works: dict[str, None] = {}
    for first, end in _joined_at_possessives(tokens, list(_spans(tokens, text)), text):
        lead = first
        if tokens[first].sentence_start:
            if _key(tokens[first].text) not in MEDIA_VERBS:
                continue  # any first word is capitalised: no sign of a title
            lead, before = first + 1, _key(tokens[first].text)
        else:
            before = _key(tokens[first - 1].text)
        article = lead < end and _key(tokens[lead].text) in ARTICLES
        if article:
            lead += 1
        elif before in ARTICLES and first > 0 and not tokens[first - 1].sentence_start:
            article, before = True, _key(tokens[first - 2].text) if first > 1 else ""
        if lead >= end or _is_title(tokens[lead]) or all(map(_not_a_name, tokens[lead:end])):
            continue
        after_verb = before in MEDIA_VERBS and (end - lead >= 2 or article)
        capital_article = lead > first and not tokens[first].sentence_start and \
            before not in PLACE_PREPOSITIONS and before != "to" and \
            not any(_key(t.text) in PLACE_WORDS for t in tokens[lead:end])
        if after_verb or capital_article:
            works.setdefault(_work_key(text[tokens[lead].start:tokens[end - 1].end]))
    for quoted in _QUOTED.finditer(text):
        before_quote = _LETTER_WORD.findall(text[:quoted.start()])[-2:]
        if before_quote and (before_quote[-1].casefold() in MEDIA_VERBS or (
                before_quote[-1].casefold() in ARTICLES and len(before_quote) == 2
                and before_quote[0].casefold() in MEDIA_VERBS)):
            key = _work_key(quoted.group(0)[1:-1])
            if key:
                works.setdefault(key)
    return list(works)


# Words that do not govern the person after them as a verb does ("with Ben", "until Chloe
# dropped by", "and Ana"); a person after any other lower-case word is its object.
_NOT_GOVERNING = frozenset(
    """
    with and or nor for to from by until till of at in on into onto near about after before
    than but the a an this that these those i we you he she they me us him her them it is are
    was were be been am while when as so because if like without between among behind beside
    around across through over under via per up down off out including except
    """.split())
# A kinship word or title (``TITLES``), or a group of them, is a person too ("visit my parents").
_KIN = "|".join(sorted(TITLES | {"parents", "grandparents", "family", "folks", "kids",
                                 "children", "friends", "cousins"}, key=lambda w: (-len(w), w)))
_PERSON_AFTER_A_WORD = re.compile(
    r"\b(?P<verb>[a-z]+)\s+(?:(?P<owner>my|our|his|her|their)\s+)?"
    r"(?:(?:old|dear|best|little|big|new|late)\s+)?"
    rf"(?:(?P<kin>(?:{_KIN}))\b(?!\s+(?-i:[A-Z]))|(?P<name>(?-i:[A-Z])[\w'’-]+)(?P<more>\s+(?-i:[A-Z])[\w-]+)?)",
    re.IGNORECASE)


def names_a_person_as_object(text: str) -> bool:
    """Whether ``text`` names a person as the object of a verb: "Took the train to visit
    Grandpa Theo", "I drove out to see my sister Lena", "Called Mum", "visited my parents";
    not a companion or a subject ("hiked with Ben", "Ben sent a postcard", "until Chloe
    dropped by") nor a title after a verb of watching or hearing ("saw Small Hours", "went to
    see Orchid Quartet"). What "Who did I go to see?" asks for, read from the words alone."""
    for match in _PERSON_AFTER_A_WORD.finditer(text):
        verb = match.group("verb").casefold()
        if verb in _NOT_GOVERNING:
            continue
        if match.group("kin"):
            if match.group("owner") or match.group("kin")[0].isupper():
                return True
            continue
        name = match.group("name")
        if _key(name) in NOT_NAMES and _key(name) not in TITLES:
            continue
        if match.group("more") and verb in MEDIA_VERBS and _key(name) not in TITLES:
            continue  # "saw Small Hours": a title
        return True
    return False


def _joined_at_possessives(tokens: list[_Token], spans: list[tuple[int, int]],
                           text: str) -> Iterator[tuple[int, int]]:
    """``spans`` with a run that ends in a possessive joined to the run right after it:
    "The Cartographer's | Daughter" is one title."""
    index = 0
    while index < len(spans):
        first, end = spans[index]
        while index + 1 < len(spans) and tokens[end - 1].possessive and \
                spans[index + 1][0] == end and not tokens[end].sentence_start and \
                _SPAN_GAP.match(text[tokens[end - 1].end:tokens[end].start]):
            index += 1
            end = spans[index][1]
        yield first, end
        index += 1


def _work_key(title: str) -> str:
    words = title.replace("’", "'").casefold().split()
    while words and words[0] in ARTICLES:
        words = words[1:]
    return " ".join(words)


def mentioned_names(text: str, participants: Sequence[str] = (),
                    known: Collection[str] = ()) -> list[str]:
    """The people ``text`` names (``read_names``); a name at the start of a sentence without
    a sign counts when ``known`` (the people its conversation names elsewhere) holds it."""
    return read_names(text, participants).confirmed(known)


def _name_of(tokens: list[_Token], first: int, end: int, text: str,
             participants: Sequence[str]) -> tuple[str | None, bool]:
    """The person the run ``tokens[first:end]`` names (rules 1-4 of the module docstring), or
    None; and False for a name at a sentence start without a sign of being one (rule 2).
    Words of ``NOT_NAMES`` at its start ("Hey", "Thanks", "The", "Aunt") are the words before
    the name; those at its end and initials there are dropped."""
    lead, tail = first, end
    while lead < tail and _not_a_name(tokens[lead]):
        lead += 1
    while tail > lead and (tokens[tail - 1].initial or _not_a_name(tokens[tail - 1])):
        tail -= 1
    if lead == tail or any(map(_not_a_name, tokens[lead:tail])):
        return None, False
    last = tokens[tail - 1]
    name = text[tokens[lead].start:last.start + len(last.text)]
    participant = canonical_person(name, participants)
    if participant is not None:
        return participant, True
    keys = [_key(t.text) for t in tokens[lead:tail]]
    context = _Context(tokens, lead, tail)
    if any(key in PLACE_WORDS for key in keys) or keys[-1] in WORK_WORDS:
        return None, False
    if context.before in ARTICLES or context.after_title_possessive or any(
            _key(t.text) in ARTICLES for t in tokens[first:lead]):
        return None, False  # "the Blue Room", "The Last Lighthouse"
    if not last.possessive and _reads_as_place_or_title(context, len(keys)):
        return None, False
    return name, not tokens[lead].sentence_start or context.vouched(last.possessive)


def mentioned_persons(text: str, speaker: str, participants: Sequence[str],
                      known: Collection[str] = (), *, read: NamesRead | None = None
                      ) -> list[str]:
    """A turn memory's persons: the speaker, the other participants the text names (whole
    words, any case: ``text.named_persons``), then the other people it names
    (``mentioned_names`` with ``known``; ``read``: what ``read_names`` read in it already),
    each once (case-insensitively)."""
    read = read if read is not None else read_names(text, participants)
    persons = {speaker.casefold(): speaker}
    for name in [*named_persons(text, [p for p in participants if p != speaker]),
                 *read.confirmed(known)]:
        persons.setdefault(name.casefold(), name)
    return list(persons.values())


class _Context:
    """The words around a name ``tokens[lead:tail]``, lower-cased ("" where the sentence
    ends or begins)."""

    def __init__(self, tokens: list[_Token], lead: int, tail: int):
        starts = tokens[lead].sentence_start

        def word(index: int) -> str:
            return _key(tokens[index].text) if 0 <= index < len(tokens) else ""

        self.before = "" if starts else word(lead - 1)
        # up to three words before the one before the name, inside its sentence
        self.earlier: list[str] = []
        for index in range(lead - 1, max(lead - 5, -1), -1):
            if index < lead - 1:
                self.earlier.append(word(index))
            if tokens[index].sentence_start:
                break
        ends = tail >= len(tokens) or tokens[tail].sentence_start
        self.after = "" if ends else word(tail)
        self.after_next = "" if ends or tail + 1 >= len(tokens) or \
            tokens[tail + 1].sentence_start else word(tail + 1)
        previous = tokens[lead - 1] if lead > 0 and not starts else None
        self.after_title_possessive = previous is not None and previous.possessive and \
            _is_name_shaped(previous.text) and _key(previous.text) not in NOT_NAMES
        # "the Cliffs of Moher", "Game of Thrones": a capitalised word, then "of"
        self.after_capitalised_of = self.before == "of" and lead > 1 and \
            not tokens[lead - 1].sentence_start and _is_name_shaped(tokens[lead - 2].text)

    def vouched(self, possessive: bool) -> bool:
        """Whether a name that starts a sentence shows it is one (rule 2)."""
        if possessive:  # "Lena's birthday", not "Life's been" or "Parenting's such"
            return bool(self.after) and self.after not in STOPWORDS and \
                self.after not in _AFTER_IS
        if self.after == "and":
            return self.after_next in ("i", "me")
        return self.after in SPEAKING_VERBS


# After "'s" these read as "is" or "has", not as a possessive ("Life's been good").
_AFTER_IS = frozenset(
    "been gonna going getting got always never really just like totally pretty great good "
    "fine ok okay awesome amazing tough hard".split())


def _reads_as_place_or_title(context: _Context, words: int) -> bool:
    """Rule 3 for a name without a possessive: after a preposition of place, "to" after a
    verb of going, "of" after a capitalised word, a verb of reading or watching (two words
    or more), or before a word for a work or an event."""
    if context.before in PLACE_PREPOSITIONS or context.after_capitalised_of:
        return True
    if context.before == "to" and any(word in GOING_WORDS for word in context.earlier[:3]):
        return True
    if context.before in MEDIA_VERBS and words > 1:
        return True
    return context.after in WORK_WORDS


# The longest name a question is searched for, in words ("George R. R. Martin").
MAX_NAME_WORDS = 4
# How many of a question's first words are searched for names.
MAX_QUESTION_WORDS = 32


def name_candidates(text: str) -> list[str]:
    """What of ``text`` could be a name a memory holds: its runs of one to
    ``MAX_NAME_WORDS`` words (possessives dropped, lower case) that neither start nor end
    with a stopword, from its first ``MAX_QUESTION_WORDS`` words; each once, in order. Any
    case: a question says "lena" as well as "Lena"."""
    said = _plain_words(text)[:MAX_QUESTION_WORDS]
    found: dict[str, None] = {}
    for start, first in enumerate(said):
        if first in STOPWORDS:
            continue
        for end in range(start + 1, min(start + MAX_NAME_WORDS, len(said)) + 1):
            if said[end - 1] not in STOPWORDS:
                found.setdefault(" ".join(said[start:end]), None)
    return list(found)


def _plain_words(text: str) -> list[str]:
    """Lower-cased words, possessives dropped ("Lena's" -> "lena")."""
    return words(_POSSESSIVE_S.sub("", text))


def name_words(name: str) -> tuple[str, ...]:
    """What a name is compared by: its lower-cased words ("J.K. Rowling" and "j k rowling"
    are one name; "Lena" is not "Lena Smith")."""
    return tuple(_plain_words(name))
