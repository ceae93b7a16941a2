"""Small text helpers shared by retrieval, ingest and evaluation."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Sequence

WORD = re.compile(r"\w+", re.UNICODE)
MAX_QUERY_TOKENS = 32

# Function words of English questions and chat; tokens come from \w+, so contractions appear
# split ("didn't" → "didn", "t").
STOPWORDS = frozenset(
    """
    a about above after again against all also am an and any are aren as at be because been
    before being below between both but by can cannot could couldn did didn do does doesn doing
    don down during each either else ever every few for from further get gets got had hadn has
    hasn have haven having he her here hers herself him himself his how however i if in into is
    isn it its itself just last like ll made make many may me might more most much must mustn my
    myself need needn neither never new no nor not now of off often on once one only or other
    ought our ours ourselves out over own per quite rather really said same say says shall shan
    she should shouldn since so some still such than that the their theirs them themselves then
    there these they this those though through thus till to too under until up upon us very via
    was wasn we were weren what whatever when where whether which while who whom whose why will
    with within without won would wouldn yet you your yours yourself yourselves
    s t d ll m re ve y go went kind ones thing things something anything yes yeah oh hey hi
    """.split()
)


# The speaker's name a memory of a turn starts with (ingest.anchor writes "speaker: text":
# "Caroline: I went to …", "me: Cooked shakshuka"), one to three words before the colon.
SPEAKER_PREFIX = re.compile(r"^\s*(?:[a-z][\w'.-]*\s+){0,2}[a-z][\w'.-]*\s*:\s*", re.I)


def without_speaker(text: str) -> str:
    """``text`` without the "Name:" it starts with, if any."""
    return SPEAKER_PREFIX.sub("", text, count=1)


def words(text: str) -> list[str]:
    """Lower-cased word tokens (letters, digits, underscore; any script)."""
    return [w.lower() for w in WORD.findall(text)]


def content_words(text: str, min_length: int = 2) -> list[str]:
    """Words that carry meaning: no stopwords, no single characters; order kept, no repeats."""
    seen: dict[str, None] = {}
    for w in words(text):
        if len(w) >= min_length and w not in STOPWORDS:
            seen.setdefault(w, None)
    return list(seen)


_TOKEN = re.compile(r"\w+|[^\w\s'’-]")


def word_runs(text: str) -> list[str]:
    """The phrases of two or more content words in a row in ``text`` (no stopword nor
    punctuation between), longest first: "When did I first get the garden gate fixed?" →
    "garden gate fixed", "garden gate", "gate fixed"."""
    runs: list[list[str]] = [[]]
    for token in _TOKEN.findall(text):
        if token[0].isalnum() and len(token) >= 2 and token.lower() not in STOPWORDS:
            runs[-1].append(token)
        elif runs[-1]:
            runs.append([])
    phrases = {" ".join(run[i:i + n]): None
               for run in runs for n in range(len(run), 1, -1) for i in range(len(run) - n + 1)}
    return sorted(phrases, key=lambda phrase: -len(phrase.split()))


def fts_match_query(text: str, extra_terms: list[str] | None = None) -> str | None:
    """A safe FTS5 MATCH expression: an OR of double-quoted tokens, never raw user text.

    Quoting every token turns FTS5 syntax (``"``, ``*``, ``NEAR``, ``-``, ``:``, ``AND``) into
    plain strings. A number is also searched in its other forms (``numbers.number_forms``).
    A question made only of stopwords falls back to its stopwords; a question
    with no word at all gives None (no lexical list).
    """
    from .numbers import number_forms

    terms = content_words(text)
    for extra in extra_terms or []:
        terms.extend(t for t in content_words(extra) if t not in terms)
    if not terms:
        terms = list(dict.fromkeys(words(text)))
    if not terms:
        return None
    # "seventieth" finds "70th" too, and "40th" "fortieth" (as phrases: "forty first").
    terms.extend(" ".join(words(form)) for form in number_forms(text))
    return " OR ".join('"' + t.replace('"', '""') + '"'
                       for t in dict.fromkeys(terms[:MAX_QUERY_TOKENS]))


def named_persons(text: str, names: Iterable[str], *, as_written: bool = False) -> list[str]:
    """The names that ``text`` mentions: whole words, any case (``as_written``: with the
    name's own capitals, so that "start" is not "Start"), possessives allowed ("Ann's" names
    Ann; "Anna" and "planning" do not)."""
    found = []
    for name in names:
        if not name or not name.strip():
            continue
        if _mention(name, as_written).search(text):
            found.append(name)
    return found


def _mention(name: str, as_written: bool = False) -> re.Pattern[str]:
    return re.compile(r"(?<!\w)" + re.escape(name.strip()) + r"(?:'s|’s|s')?(?!\w)",
                      0 if as_written else re.IGNORECASE)


def without_names(text: str, names: Iterable[str]) -> str:
    """``text`` with every mention of ``names`` taken out (as ``named_persons`` finds them:
    whole words, any case, possessives), spaces collapsed."""
    for name in names:
        if name and name.strip():
            text = _mention(name).sub(" ", text)
    return " ".join(text.split())


_POSSESSIVE = re.compile(r"(?:'s|’s|'|’)$", re.IGNORECASE)


def without_possessive(word: str) -> str:
    """``word`` without a trailing possessive ("Jonah's" -> "Jonah", "Ross'" -> "Ross")."""
    return _POSSESSIVE.sub("", word)


def canonical_person(name: str, participants: Sequence[str]) -> str | None:
    """The participant a proposed name stands for, spelled as the participant is; else None.

    ``name`` is one a model proposed: its whitespace is collapsed and a trailing possessive
    dropped ("Caroline's"). It then stands for the participant it equals, case-insensitively,
    else for the one participant whose longer name starts with it as a whole word ("jon" is
    "Jon Smith"; when two participants share that first name it stands for neither). Nothing
    looser: "Carol" is somebody else, not "Caroline".
    """
    key = without_possessive(" ".join(name.split())).strip().casefold()
    if not key:
        return None
    for participant in participants:
        if participant and participant.casefold() == key:
            return participant
    by_first_name = [
        participant for participant in participants
        if len(participant.split()) > 1 and participant.split()[0].casefold() == key
    ]
    return by_first_name[0] if len(by_first_name) == 1 else None


def normalised_hash(text: str) -> str:
    """Hash of text after case folding and whitespace collapsing (for exact de-duplication)."""
    normal = " ".join(text.casefold().split())
    return hashlib.sha256(normal.encode()).hexdigest()


# What an answer says when the memories shown do not hold it (``answer``), and how a model's
# own wording of it is recognised.
NOT_IN_MEMORY = "not in memory"


def is_abstention(text: str) -> bool:
    """Whether a model answer says "not in memory" (case, spaces, quotes, final stop ignored)."""
    return text.strip().strip("\"'").rstrip(".!").strip().lower() == NOT_IN_MEMORY
