"""What a memory is: a report of something done, someone else's doing (to the writer or not), a
plan or a wish, a question, a request to the assistant, or the assistant's answer — read once,
at ingest, from the statement's form, and stored with the memory (``memories.act``; DESIGN.md
§4.3, "reports of doing").

"When did I last watch Glass Mountain?" and "how many films did I see in March?" are answered
by what the writer *did*, not by "Suggest films like Glass Mountain" (a request to the
assistant), "Is Glass Mountain worth watching?" (a question), "Bought tickets for Glass Mountain
next Friday" or "Would love to see it again sometime" (a plan, a wish), nor by "Aisha keeps
telling me to see Glass Mountain" (received: someone else's doing, the writer its object).
Orders, counts, anchors and trips read reports (``Store.occurrences``); anchors and trips read
what was received too ("after my surprise party"); every memory stays searchable as content.

The reading uses the form of the first clause, never the topic:

=========== =================================================================================
act         read from
=========== =================================================================================
answer      said by the assistant
question    only a question: ends in "?" with no sentence ended before it
request     to an assistant (a conversation where one speaks): opens with a verb in its base
            form ("Suggest films like …", "Give me a packing list", "Please recommend …",
            "Can you …" ends in "?" and is a question)
plan        the first clause looks ahead or longs: will, 'll, going to, plan(ning) to,
            planning (a trip), fancy a (hike), want /
            hope / would love to, thinking of, might, maybe, must, should, need to, one day,
            some day, sometime, next …, tomorrow, booked, tickets for, on the list, can't
            wait, looking forward, craving, dreaming of, wish
other       what someone else did or said, the writer not in it: the first clause opens with a
            name or a noun phrase ("Sofia finished …", "A colleague quoted …", "The trailer for
            … looks great") whose verb follows within a few words, and says no "I", "me",
            "we", "my", ... (a name of several words may open with a verb's word: "Echo
            Valley Band announced a tour"; a verb's past the lexicon lacks is one: "Lena
            texted") ("Lena came round for dinner" is one too: what the writer did
            with someone reads both, and a question about a person reads both); or it relays
            what someone did: a name and its finite verb right after the clause's own verb,
            adverb or object ("Heard Tom got a promotion", "Found out Lena is moving",
            "Apparently Sofia moved to Bristol", "Mum told me Aisha got engaged"), not after
            a noun ("Ate the cake Tom made") or with a verb's base ("Helped Tom move house")
received    what someone else did to or for the writer: it opens as someone else's doing does,
            and the writer is in it only as an object or an owner ("Friends threw me a
            surprise party", "Aisha keeps telling me to see Night Harbor", "My sister got
            married"); not before a verb's base ("Lena helped me repair the radiator") nor
            with a later clause of the writer's ("Priya lent me The Quiet Orchard; started it")
report      anything else: "Caught Night Harbor at the Picturehouse", "we put on The Ferryman
            after dinner", "Dinner: fish pie", "Lena and I went to the market"
=========== =================================================================================

Words of the verb class come from ``lemminflect`` (its lexicon knows which words can be a verb
and in which form), not from a list kept here. A report written about someone else ("A
colleague quoted Small Hours all day") is ``other``; so is "Lena came round for dinner": the
form cannot tell them apart, so a question about a person reads both (``retrieve``).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from ..lexicon import lemmas as _lemmas
from ..lexicon import past_of
from ..types import ANSWER, OTHER, PLAN, QUESTION, RECEIVED, REPORT, REQUEST

# The speaker of an assistant's turns (chat imports, the MCP server's assistant).
ASSISTANT_SPEAKER = "assistant"

_APOS = "['’]"
_LOOKS_AHEAD = re.compile(
    r"\b(?:will|shall|gonna|wanna|upcoming|booked|tomorrow|someday|sometime|"
    r"might|maybe|perhaps|must|should|craving|wish(?:es|ed)?)\b"
    rf"|\bwon{_APOS}t\b|{_APOS}ll\b"
    r"|\bsoon\b(?!\s+as\b)|\bnext\s+(?!to\b)\w+"
    r"|\b(?:going|about|need|needs|have|has|ought)\s+to\b"
    r"|\bplan(?:s|ned|ning)?\s+(?:to|on)\b|\bplanning\b"
    r"|\bfancy\s+(?:a|an|some|going|doing|seeing|trying)\b"
    rf"|\bcan(?:not|{_APOS}t|\s+not)\s+wait\b"
    r"|\blook(?:s|ing)?\s+forward\s+to\b"
    r"|\b(?:hopes?|hoping|wants?|wanted|intend(?:s|ing)?|decided)\s+to\b"
    rf"|(?:\bwould|{_APOS}d)\s+(?:like|love)\s+to\b"
    r"|\b(?:thinking|dreaming)\s+(?:of|about)\b"
    r"|\b(?:one|some)\s+day\b"
    r"|\btickets?\s+(?:to|for)\b"
    r"|\bon\s+(?:the|my)\s+(?:[\w'’]+\s+){0,2}list\b",
    re.IGNORECASE,
)
# Where the first clause ends: a sentence end, a semicolon, a dash between words, a colon
# followed by a clause ("Dinner: fish pie" stays whole: its colon opens no clause of its own).
_CLAUSE_END = re.compile(r"[.!?;]+(?=\s|$)|\s[—–-]\s|,\s+(?:but|so|and then)\b", re.IGNORECASE)
_POLITE = re.compile(r"^(?:please|pls|kindly|now|ok(?:ay)?|also|and|so|hey|hi)\W+",
                     re.IGNORECASE)
_FIRST_WORD = re.compile(r"^[A-Za-z][a-z]*")


def read_act(text: str, speaker: str, *, to_assistant: bool) -> str:
    """The act of what ``speaker`` said (a turn's text as written, or an extracted memory's
    content); ``to_assistant``: in a conversation where an assistant speaks."""
    if speaker.strip().casefold() == ASSISTANT_SPEAKER:
        return ANSWER
    body = text.strip()
    if is_only_a_question(body):
        return QUESTION
    first = first_clause(body)
    if to_assistant and _opens_with_a_command(first):
        return REQUEST
    if looks_ahead(first):
        return PLAN
    if _someone_else_did(first) or _relays_someone_elses_doing(first):
        return OTHER
    if _done_to_the_writer(first, body[len(first):]):
        return RECEIVED
    return REPORT


def looks_ahead(text: str) -> bool:
    """Whether ``text`` looks ahead or longs, as a plan's first clause does ("plan to",
    "hoping to", "would love to", "next week", ...)."""
    return _LOOKS_AHEAD.search(text) is not None


def is_only_a_question(text: str) -> bool:
    """Whether ``text`` is only a question: it ends in "?" with no sentence ended by ". " or
    "! " before it (as ``retrieval_sql.ONLY_A_QUESTION`` reads it)."""
    stripped = text.rstrip()
    return stripped.endswith("?") and ". " not in stripped and "! " not in stripped


def first_clause(text: str) -> str:
    """``text`` up to the end of its first clause."""
    found = _CLAUSE_END.search(text)
    return text[:found.start()] if found else text


def _opens_with_a_command(clause: str) -> bool:
    """Whether a clause opens with a verb in its base form ("Suggest films like …", "Give me
    …", "Please recommend …"): a command, as said to an assistant. A word that is a noun or
    an adjective as often ("Dinner", "Long") opens a command only before an object it takes
    ("me", "a", "some", a plural)."""
    head = _POLITE.sub("", clause.strip())
    first = _FIRST_WORD.match(head)
    if first is None:
        return False
    word = first.group(0).lower()
    readings = _lemmas(word)
    if word not in readings.get("VERB", ()):
        return False  # not a verb, or a verb in another form ("Walked", "Caught")
    if set(readings) - {"VERB", "AUX"}:
        rest = head[first.end():].split()
        following = rest[0].lower() if rest else ""
        return following in _OBJECT_OPENERS or (
            len(following) > 3 and following.endswith("s") and not following.endswith("ss"))
    return True


_WORDS = re.compile(r"[A-Za-z][A-Za-z'’-]*|[,:;()]")
_FIRST_PERSON = frozenset("i i'm i've i'd i'll me my mine myself we we're we've we'd we'll us "
                          "our ours ourselves".split())
_WRITER_AS_OBJECT = frozenset("me my mine myself us our ours ourselves".split())
_WRITER_AS_SUBJECT = _FIRST_PERSON - _WRITER_AS_OBJECT
_DETERMINERS = frozenset("a an the his her their its this that these those some another".split())
VERB_WITHIN = 6  # words after the opening subject's first word where its verb may stand


def _someone_else_did(clause: str) -> bool:
    """Whether a clause reports what someone else did: it opens with a name or a
    determiner's noun phrase, a finite verb follows within ``VERB_WITHIN`` words (no comma
    or colon before it; not a capitalised word, which belongs to a name), and no word of it
    is the writer ("I", "me", "we", "my", ...).

    A name may open with a word that is also a verb or a noun when more capitalised words
    follow it ("Echo Valley Band announced a tour"): a verb opening the writer's own report
    is in another form than its base ("Saw The Silent Engine ...") or takes a lower-case
    object ("Mark the date")."""
    tokens = _WORDS.findall(clause)
    if not tokens or any(_said_of_the_writer(t) for t in tokens):
        return False
    return _opens_with_someone_elses_verb(tokens)


def _done_to_the_writer(clause: str, rest: str) -> bool:
    """Whether a clause tells what someone else did to or for the writer: it opens as
    someone else's doing does (``_someone_else_did``) and the writer is in it only as an
    object or an owner ("Friends threw me a surprise party", "Aisha keeps telling me to see
    Night Harbor", "Tom fixed my bike", "My sister got married"). Not when a verb's base
    follows "me" or "us" ("Marek helped me repair the porch light": what the writer did, with
    help), nor when a later clause is the writer's own ("Priya lent me The Quiet Orchard;
    started it": a verb's past opens it, or it says "I" or "we")."""
    tokens = _WORDS.findall(clause)
    writer = [index for index, token in enumerate(tokens) if _said_of_the_writer(token)]
    if not writer or any(_plain(tokens[index]) not in _WRITER_AS_OBJECT for index in writer):
        return False
    for index in writer:
        following = tokens[index + 1].lower() if index + 1 < len(tokens) else ""
        if tokens[index].lower() in ("me", "us") and _a_verbs_base(following):
            return False
    return _opens_with_someone_elses_verb(tokens) and not _the_writers_later_clause(rest)


def _a_verbs_base(word: str) -> bool:
    """A verb in its base form that is not also an adverb, an adjective or a preposition
    ("repair" in "helped me repair", not "over" in "invited us over")."""
    readings = _lemmas(word)
    return word in readings.get("VERB", ()) and not readings.keys() & {"ADV", "ADP", "ADJ"}


def _the_writers_later_clause(rest: str) -> bool:
    """Whether a clause after the first is the writer's: it says "I" or "we", or opens with
    a verb's past ("; started it that night")."""
    for clause in _CLAUSE_END.split(rest):
        tokens = _WORDS.findall(clause)
        words = [_plain(t) for t in tokens if t not in ",:;()"]
        if not words:
            continue
        if any(w in _WRITER_AS_SUBJECT for w in words) or past_of(words[0]) is not None:
            return True
    return False


def _said_of_the_writer(token: str) -> bool:
    return _plain(token) in _FIRST_PERSON


def _plain(token: str) -> str:
    """A word lower-cased, its curly apostrophe straight ("I’m" → "i'm")."""
    return token.lower().replace("’", "'")


def _opens_with_someone_elses_verb(tokens: Sequence[str]) -> bool:
    """Whether the clause's words open with a name or a determiner's noun phrase and a finite
    verb follows within ``VERB_WITHIN`` words, as ``_someone_else_did`` reads them."""
    first = tokens[0]
    readings = _lemmas(first.lower())
    opens_a_subject = first.lower() in _DETERMINERS or (
        first[0].isupper() and not readings.keys() & {"VERB", "AUX", "ADV", "ADP", "ADJ"}
    ) or _opens_a_name_of_several_words(tokens)
    if not opens_a_subject:
        return False
    for token in tokens[1:1 + VERB_WITHIN]:
        if token in ",:;()":
            return False
        # a capitalised word is a name's ("The Hollow Pines at the Old Theatre tonight":
        # "Pines" is no verb)
        if not token[0].isupper() and _finite(token.lower()):
            return True
    return False


def _opens_a_name_of_several_words(tokens: Sequence[str]) -> bool:
    """Whether the clause opens with a run of two or more capitalised words whose first is a
    noun or a verb in its base form (not "Saw", "Finally", "Back"): a name such as "Echo
    Valley Band" or "Bill Hart"."""
    if len(tokens) < 2 or not tokens[0][0].isupper() or not _a_name_word(tokens[1]):
        return False
    word = tokens[0].lower()
    return not (word.endswith("ing") or _lemmas(word).keys() & {"ADV", "ADP", "ADJ"}
                or _a_finite_verb(word))


def _relays_someone_elses_doing(clause: str) -> bool:
    """Whether a clause relays what someone else did: after its first word, a name (a run of
    capitalised words) stands right after a verb, an adverb or a pronoun ("Heard Tom got a
    promotion", "Turns out Marek got the job", "Apparently Sofia moved", "told me Aisha got
    engaged", "heard that Tom is moving") and a finite verb follows the name, before any
    comma. The name is then the subject of what happened, the writer only its hearer. After
    a preposition or a noun the name's clause is part of the writer's own ("Went to the party
    Lena threw"); a verb's base after it is the writer's doing too ("Watched Lena play",
    "Helped Tom move house")."""
    tokens = _WORDS.findall(clause)
    index = 1
    while index < len(tokens):
        token = tokens[index]
        if token in ",:;()":
            return False
        if not _a_name_word(token):
            index += 1
            continue
        end = index
        while end < len(tokens) and _a_name_word(tokens[end]):
            end += 1
        after = tokens[end].lower() if end < len(tokens) else ""
        if _introduces_a_clause(tokens, index) and after[:1].isalpha() and _finite(after):
            return True
        index = end
    return False


def _a_name_word(token: str) -> bool:
    """A capitalised word that is not the writer ("I", "I'm")."""
    return token[0].isupper() and _plain(token) not in _FIRST_PERSON


def _introduces_a_clause(tokens: Sequence[str], index: int) -> bool:
    """Whether a name at ``tokens[index]`` may open a clause of its own: the word before it
    is a verb in a finite form ("heard", "says", "turns"; not its base, not a particle that
    lemminflect also reads as a verb: "up", "back"), "out" after one ("found out"), an
    adverb in -ly ("apparently"), an object pronoun ("told me") or "that"."""
    word = tokens[index - 1].lower()
    if word in _OBJECT_PRONOUNS or word == "that" or _a_finite_verb(word):
        return True
    if word == "out":
        return index >= 2 and _a_finite_verb(tokens[index - 2].lower())
    return word.endswith("ly") and "ADV" in _lemmas(word)


def _a_finite_verb(word: str) -> bool:
    """A verb in another form than its base, not a gerund ("heard", "says")."""
    return not word.endswith("ing") and any(
        lemma != word for lemma in _lemmas(word).get("VERB", ()))


_OBJECT_PRONOUNS = frozenset("me us him her them".split())


def _finite(word: str) -> bool:
    """Whether ``word`` reads as a finite verb: a form of "be", "have" or "do", or a verb
    in another form than its base ("says", "finished", "came"), not a gerund. A word that is
    one verb's base and another's past reads as the past ("saw" of "see" beside "to saw",
    "found" of "find"): after a name, "Tom saw the Velvet Tides" is what Tom did."""
    readings = _lemmas(word)
    lemmas = readings.get("VERB", ()) + readings.get("AUX", ())
    if not readings:
        return _past_of_an_unknown_verb(word)
    if not lemmas or word.endswith("ing"):
        return False
    return any(lemma != word for lemma in lemmas) \
        or word in ("is", "are", "was", "were", "has", "had", "does")


def _past_of_an_unknown_verb(word: str) -> bool:
    """Whether a word the lexicon does not know reads as a verb's past: it ends in "-ed"
    ("texted", "googled", "facetimed"). A hyphened word ("wood-fired") is an adjective more
    often and is not read so."""
    return word.isalpha() and len(word) > 4 and word.endswith("ed")


# Words that open what a command acts on: "Give me …", "Plan a trip", "List some films".
_OBJECT_OPENERS = frozenset("""
    me us my our a an the some three two few any this that these those it them him her
    something
""".split())

