"""Anchoring: a memory's episode (session span, event time, persons) and its de-duplication
key, from its source turns.

A turn memory (no-LLM tier, ``turn_memory``) takes its turn's session span and the time cues of
its text. An extracted entry (``anchor_entry``) takes the span of the sessions of the turns it
cites (never a timestamp the model wrote) and an event time that is either the single day the
model names (checked by parsing, ``parse_event_day``) or what the deterministic grounder reads
in the content, relative to when the first cited turn was said. Persons are spelled as the
conversation's participants (``text.canonical_person``); a turn memory's persons are its speaker
and the people its text names (``names.mentioned_persons``). Two memories with the same
``dedup_key`` (the content after case folding and whitespace collapsing) are one memory.

Event time is read from what was said, relative to when it was said. A recurring time cue ("in
June", "on Saturday", "at Christmas", see ``recall.time``) does not say which occurrence it means;
a question means the most recent one, but a turn may report ("On Saturday we hiked the ridge",
written on a Monday: the Saturday before) or plan ("I'm signing up for a first-aid course in
June", said in May: the coming June). ``tense_direction`` reads the tense of the clause around
each cue (its sentence, cut at ", and", ", but", "but", ...: ``clause_around``) from explicit
markers:

========= ===========================================================================
direction markers
========= ===========================================================================
future    will, shall, won't, 'll, going to, gonna, plan(s)/planning to/on, about to,
          can't/cannot wait, look(ing) forward to, hope/want/intend to, wanna,
          would/'d like/love to, decide(d) to, sign(ed/ing) up, register(ed) for,
          booked, scheduled, tickets for/to, upcoming, soon (not "as soon as"), next
          (not "next to"), the present progressive (am/is/are/'m/'re [+ subject]
          + -ing: "we're going camping", "are you coming"; 's + going, coming, ...)
past      was, were, did, had (and their n't forms), have/has/'ve/'s been, ago, last,
          common irregular past forms (went, saw, met, got -- not "have got" --, took,
          ...) and the past forms of common regular verbs (visited, hiked, played, ...)
nearest   no marker, or a past and a future marker equally near
========= ===========================================================================

The marker nearest to the cue (in characters, either side) decides; markers inside the cue
itself ("the last weekend of May", "next Friday") are part of the time expression, not of the
tense, and do not count. Cues that say their direction ("last Friday", "next Friday", "2 days
ago", full dates, "tomorrow") are grounded the same whatever the tense.

The grounder is the one questions use (``recall.time.detect_cues``), with the bank's country
(``country``): "we spent Christmas at my parents'" said on 28 December is 25 December,
"the rent was due on 3/4/2024" is 4 March in a US bank and 3 April in a British one.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping, Sequence
from datetime import date, datetime, timedelta, tzinfo
from functools import lru_cache

from ..errors import EntryRejected
from ..names import NamesRead, mentioned_persons, participant_named
from ..recall.calendars import date_order
from ..recall.time import detect_cues
from ..text import canonical_person, content_words, normalised_hash, without_speaker, words
from ..types import DAY, MemoryRecord, TimeCue, TimeRange, Turn
from .acts import ANSWER, ASSISTANT_SPEAKER, read_act
from .chats import ME
from .extract import EXAMPLE_ENTRIES, clean_field, read_entry, shown_text

# Event ranges wider than this say little about *which* episode a memory belongs to ("this
# year"), so they are not stored; the session span still anchors the memory.
MAX_EVENT_DAYS = 92


def turn_content(turn: Turn) -> str:
    """The no-LLM memory text: the turn, speaker-prefixed, with a shared image's caption."""
    content = f"{turn.speaker}: {turn.text}"
    if turn.caption:
        content += f" [shared an image: {turn.caption}]"
    return content


_APOS = "['\u2019]"
_NOT_PROGRESSIVE = (
    r"(?:some|any|no|every)?thing|morning|evening|spring|during|ceiling|wedding|building"
    r"|feeling|string|sibling|darling|pudding|king|ring|sing|bring|wing|sting|swing"
    r"|amazing|interesting|exciting|boring|relaxing|inspiring|surprising|challenging"
    r"|rewarding|refreshing|stunning|charming|encouraging|fascinating|overwhelming|annoying"
    r"|confusing|disappointing|frustrating|terrifying|touching|heartwarming|calming|soothing"
    r"|amusing|entertaining|promising|thrilling|satisfying|fulfilling|humbling|missing"
)
_FUTURE_MARKERS = re.compile(
    r"\b(?:will|shall|gonna|wanna|upcoming|booked|scheduled)\b"
    rf"|\bwon{_APOS}t\b|{_APOS}ll\b"
    r"|\bsoon\b(?!\s+as\b)|\bnext\b(?!\s+to\b)"
    r"|\b(?:going|about)\s+to\b"
    r"|\bplan(?:s|ning)?\s+(?:to|on)\b"
    rf"|\bcan(?:not|{_APOS}t|\s+not)\s+wait\b"
    r"|\blook(?:s|ing)?\s+forward\s+to\b"
    r"|\b(?:hopes?|hoping|wants?|intend(?:s|ing)?|decide[sd]?)\s+to\b"
    rf"|(?:\bwould|{_APOS}d)\s+(?:like|love)\s+to\b"
    r"|\bsign(?:s|ed|ing)?\s+up\b|\bregister(?:s|ed|ing)?\s+for\b"
    r"|\btickets?\s+(?:to|for)\b"
    rf"|(?:\b(?:am|are|is)|{_APOS}(?:m|re))\s+(?:(?:i|you|we|they|he|she|it)\s+)?"
    rf"(?!(?:{_NOT_PROGRESSIVE})\b)[a-z]{{2,}}ing\b"
    rf"|{_APOS}s\s+(?:going|coming|leaving|heading|moving|flying|visiting|hosting|starting)\b",
    re.IGNORECASE,
)
_IRREGULAR_PAST = (
    "went came saw met ran ate drank bought found left told said felt thought began won lost "
    "spent wrote sang swam flew drove rode slept kept brought caught taught sent built held sat "
    "stood heard paid knew became grew threw wore broke chose forgot fell took gave made hung "
    "fought sold led"
)
_REGULAR_PAST = (
    "visited started finished played walked hiked traveled travelled attended joined watched "
    "celebrated tried moved painted cooked baked learned learnt helped opened stayed talked "
    "called enjoyed launched completed graduated hosted organized organised performed "
    "volunteered adopted picked climbed camped explored listened danced practiced practised "
    "recorded released received shared posted created designed raced competed happened showed "
    "returned arrived spotted noticed tasted loved liked missed worked studied wanted needed "
    "passed ended stopped dropped planted cleaned fixed checked asked looked married reached "
    "toured surprised crashed injured"
)
_PAST_MARKERS = re.compile(
    rf"\b(?:was|were|did|had)(?:n{_APOS}t)?\b|\b(?:ago|last)\b"
    rf"|(?:\b(?:have|has)|{_APOS}(?:ve|s))\s+been\b"
    rf"|(?<!{_APOS}ve\s)(?<!{_APOS}s\s)(?<!have\s)(?<!has\s)\bgot\b"
    r"|\b(?:" + "|".join(sorted(set((_IRREGULAR_PAST + " " + _REGULAR_PAST).split()))) + r")\b"
    rf"(?!{_APOS}t\b)",  # "won't" is not "won"
    re.IGNORECASE,
)
_CLAUSE_BOUNDARY = re.compile(
    r"[.!?;]+(?=\s|$)|\n"
    r"|,\s*(?:and|but|so|then|while|whereas|although|though|because)\b"
    r"|\b(?:but|whereas|although|though)\b",
    re.IGNORECASE,
)


def clause_around(text: str, span: tuple[int, int]) -> tuple[int, int]:
    """The character span of the clause containing ``span``: from the last boundary before it
    to the first one after it. Boundaries: ".", "!", "?", ";" before a space or the end, a
    newline, a comma + conjunction (", and", ", but", ", so", ", then", ", while", ...), and
    "but", "whereas", "although", "though" ("and" alone joins too much to split on)."""
    start, end = 0, len(text)
    for boundary in _CLAUSE_BOUNDARY.finditer(text):
        if boundary.end() <= span[0]:
            start = boundary.end()
        elif boundary.start() >= span[1]:
            end = boundary.start()
            break
    return start, end


def tense_direction(text: str, span: tuple[int, int] | None = None) -> str:
    """Which way the time cue at ``span`` of ``text`` points: "future", "past" or "nearest".

    The clause is the one around ``span`` (``clause_around``); the marker in it nearest to
    ``span`` decides (see the module docstring). No marker, or a future and a past marker at
    the same distance, gives "nearest". Without ``span`` the whole text is read and every
    marker counts alike: only future markers -> "future", only past ones -> "past", both or
    none -> "nearest".
    """
    cue = (len(text), len(text)) if span is None else span
    start, end = (0, len(text)) if span is None else clause_around(text, span)
    gaps: dict[str, int] = {}  # direction -> distance of its nearest marker to the cue
    for direction, markers in (("future", _FUTURE_MARKERS), ("past", _PAST_MARKERS)):
        for marker in markers.finditer(text, start, end):
            if marker.start() < cue[1] and cue[0] < marker.end():
                continue  # inside the cue: part of the time expression, not of the tense
            gap = 0 if span is None else max(cue[0] - marker.end(), marker.start() - cue[1], 0)
            gaps[direction] = min(gap, gaps.get(direction, gap))
    if not gaps or gaps.get("future") == gaps.get("past"):
        return "nearest"
    return min(gaps, key=lambda direction: gaps[direction])


def event_cues(text: str, said_at: int, tz: tzinfo, *, country: str | None = None
               ) -> list[TimeCue]:
    """The time cues of ``text``, each grounded relative to ``said_at`` in the direction of its
    own clause's tense ("in June" said in May 2024: June 2023 in "we went to Rome in June",
    June 2024 in "we're going to Rome in June", the nearer June with no tense to go by).

    Detection does not depend on the direction, so the cues of each direction line up one to
    one; ``detect_cues`` runs once per direction needed.
    """
    reference = datetime.fromtimestamp(said_at, tz=tz)
    by_direction = {"past": detect_cues(text, reference, country=country)}
    chosen = []
    for index, cue in enumerate(by_direction["past"]):
        direction = tense_direction(text, cue.span)
        if direction not in by_direction:
            by_direction[direction] = detect_cues(text, reference, direction=direction,
                                                  country=country)
        chosen.append(by_direction[direction][index])
    return chosen


def ground_event_time(text: str, said_at: int, tz: tzinfo, *, country: str | None = None
                      ) -> TimeRange | None:
    """The narrowest time the text refers to, relative to when it was said and in the
    direction of its tense (``event_cues``).

    "I ran a charity race last Saturday" said on Thursday 2023-05-25 → Saturday 2023-05-20;
    "We're going camping on Saturday" said on Wednesday 2024-05-08 → Saturday 2024-05-11.
    Returns None when the text has no grounded cue, or only cues wider than MAX_EVENT_DAYS.
    """
    grounded = [
        cue.range
        for cue in event_cues(text, said_at, tz, country=country)
        if cue.range is not None and cue.range.end - cue.range.start <= MAX_EVENT_DAYS * DAY
    ]
    if not grounded:
        return None
    return min(grounded, key=lambda r: (r.end - r.start, -r.start))


def turn_memory(
    turn: Turn,
    conversation: str,
    session_span: tuple[int, int],
    participants: Sequence[str],
    *,
    tz: tzinfo,
    country: str | None = None,
    event_times: bool = True,
    known: Collection[str] = (),
    names: NamesRead | None = None,
    to_assistant: bool | None = None,
) -> MemoryRecord:
    """The no-LLM memory of ``turn``. Its persons: ``names.mentioned_persons``, a name at a
    sentence start counting when ``known`` (the people the conversation names) holds it;
    ``names``: what ``names.read_names`` read in the turn already; ``to_assistant``: whether
    an assistant speaks in the conversation (default: whether it is among ``participants``)."""
    event = (ground_event_time(turn.text, turn.timestamp, tz, country=country)
             if event_times else None)
    if to_assistant is None:
        to_assistant = any(p.casefold() == ASSISTANT_SPEAKER for p in participants)
    return MemoryRecord(
        content=turn_content(turn),
        kind="turn",
        conversation=conversation,
        session_start=session_span[0],
        session_end=session_span[1],
        persons=mentioned_persons(turn.text, turn.speaker, participants, known, read=names),
        event_start=event.start if event else None,
        event_end=event.end if event else None,
        source_turns=[turn.external_id] if turn.external_id else [],
        act=read_act(turn.text, turn.speaker, to_assistant=to_assistant),
    )


# --------------------------------------------------------------------------- extracted entries


def dedup_key(content: str) -> str:
    """The key under which a memory's content is stored once per conversation."""
    return "x:" + normalised_hash(content)


def anchor_entry(
    entry: Mapping,
    turns_by_label: Mapping[str, Turn],
    session_spans: Mapping[int, tuple[int, int]],
    tz: tzinfo,
    *,
    conversation: str = "",
    participants: Sequence[str] = (),
    country: str | None = None,
) -> MemoryRecord:
    """A memory (kind ``"extracted"``) from one entry of a reply (``extract.read_entry``);
    raises :class:`~.extract.EntryRejected`.

    ``turns_by_label`` maps the labels the window was shown under to its turns,
    ``session_spans`` a turn's store id to its session span.

    * session span: ``[min start, max end]`` over the sessions of the cited turns;
    * event time: ``entry_event_time`` (the model's date, or the cited turn's words);
    * persons: ``entry_persons``.
    """
    read = read_entry(entry)
    cited = cited_turns(read.source_turns, turns_by_label)
    copied = copied_turn(read.content, turns_by_label)
    if copied is not None:
        raise EntryRejected(f"repeats turn {copied.external_id or copied.id} word for word "
                            f"(said by {copied.speaker}): {read.content[:80]!r}")
    example = copied_example(read.content, list(turns_by_label.values()), participants)
    if example is not None:
        raise EntryRejected(f"repeats the instructions' example ({example[:50]!r}), which no "
                            f"turn of the excerpt says: {read.content[:80]!r}")
    label = echoed_label(read.content, turns_by_label)
    if label is not None:
        raise EntryRejected(f"starts like the excerpt's line {label}: a line written out "
                            f"again, not what happened in other words: {read.content[:80]!r}")
    speakers = list(dict.fromkeys(t.speaker for t in cited if t.speaker != ME))
    pronoun = first_person(read.content) if speakers else None
    if pronoun is not None:
        raise EntryRejected(f"says {pronoun!r} where a speaker's name belongs (the cited turns "
                            f"are {' and '.join(speakers)}'s): {read.content[:80]!r}")
    subject = entry_subject(read.content, participants)
    if subject is not None and subject.casefold() not in {t.speaker.casefold() for t in cited}:
        said_by = " and ".join(dict.fromkeys(t.speaker for t in cited))
        raise EntryRejected(f"is about what {subject} did or said, but the cited turns are "
                            f"{said_by}'s: {read.content[:80]!r}")
    spans = [session_spans[turn.stored_id] for turn in cited]
    event = entry_event_time(read.event_date, read.content, cited, tz, country=country)
    return MemoryRecord(
        content=read.content,
        kind="extracted",
        conversation=conversation,
        session_start=min(s for s, _ in spans),
        session_end=max(e for _, e in spans),
        persons=entry_persons(read.persons, cited, participants),
        keywords=read.keywords,
        entities=read.entities,
        location=read.location,
        topic=read.topic,
        event_start=event.start if event else None,
        event_end=event.end if event else None,
        source_turns=[t.external_id for t in cited if t.external_id],
        source_turn_ids=[t.id for t in cited if t.id is not None],
        act=entry_act(read.content, cited),
    )


def entry_act(content: str, cited: Sequence[Turn]) -> str:
    """An extracted memory's act (``acts.read_act``): what its content says, restated; the
    assistant's when every turn it cites is the assistant's."""
    if cited and all(t.speaker.casefold() == ASSISTANT_SPEAKER for t in cited):
        return ANSWER
    return read_act(content, "", to_assistant=False)


COPY_SHARE = 0.9  # of an entry's words found in one turn, which it mostly repeats: a copy
COPY_COVER = 0.8  # of that turn's words that the entry repeats
_LINE_TIME = re.compile(r"^\s*\d{4}-\d{2}-\d{2}(?:[ T]\d{1,2}:\d{2}(?::\d{2})?)?\s+")


def copied_turn(content: str, turns_by_label: Mapping[str, Turn]) -> Turn | None:
    """The window's turn that the entry repeats word for word (the head of an excerpt line
    aside), if any: ``COPY_SHARE`` of the entry's words (four or more) are that turn's as the
    excerpt showed it, and they are ``COPY_COVER`` of the turn's words (a part of a turn,
    "Luna learned to fetch" of "My dog Luna learned to fetch the newspaper", is not a copy
    of it).

    An entry restates what was said so that it stands alone ("Caroline went to an LGBTQ
    support group on 7 May 2023" shares 5 of its 11 words with the turn). A copy adds nothing
    the turn's own memory does not hold, takes one of the K places beside it, and with another
    speaker's name in front says something false: Qwen2.5-Coder-0.5B writes "Melanie: I went to
    a LGBTQ support group yesterday" for Caroline's turn, and, given windows of 12 turns,
    whole excerpt lines under the next turn's speaker, "D1:4 Melanie: Wow, that's cool!
    Caroline! What happened ...", citing another turn (results/llm-subset-qwen.txt)."""
    said = words(_without_line_head(content, turns_by_label))
    if len(said) < 4:
        return None
    for turn in turns_by_label.values():
        if _repeats(said, set(words(shown_text(turn)))):
            return turn
    return None


def _repeats(said: Sequence[str], heard: set[str]) -> bool:
    """Whether the words ``said`` mostly repeat ``heard``: ``COPY_SHARE`` of them are in it,
    and they are ``COPY_COVER`` of its words."""
    return (sum(word in heard for word in said) >= COPY_SHARE * len(said)
            and len(heard & set(said)) >= COPY_COVER * len(heard))


_MONTHS = frozenset(("january february march april may june july august september october "
                     "november december").split())


def copied_example(content: str, window: Sequence[Turn], participants: Sequence[str] = ()
                   ) -> str | None:
    """The instructions' example entry (``extract.EXAMPLE_ENTRIES``) that an entry repeats,
    names, numbers and months aside, with words that no turn of the ``window`` says; None
    otherwise.

    A small model copies the example it was shown. Qwen2.5-Coder-0.5B, given four turns of a
    conversation in which Melanie talks about painting, wrote "Melanie is training every
    morning to run the Lisbon half marathon in April 2023": the example's entry under her
    name and the year of the excerpt (results/llm-subset-qwen.txt). The copy is measured as
    ``copied_turn`` measures one, without the example's persons, the participants' names,
    numbers and month names (a copy takes the excerpt's dates). When the window's turns hold
    every content word the two share (somebody in the conversation does train for the Lisbon
    half marathon), the entry is theirs. An entry that names one of the example's things
    (its entities and place: "Luna", "Lisbon half marathon", "Lisbon") that no turn of the
    window names took it from the example too, however it is worded: the 0.5B's next window
    gave "Melanie thanks Caroline for the invitation to the Lisbon half marathon". The
    window, not the cited turns: an entry citing the wrong turn of a window that does speak
    of Lisbon is a citation error, not the example."""
    heard_text = " ".join(" ".join(words(shown_text(turn))) for turn in window)
    written = " ".join(words(content))

    def named(phrase: str, text: str) -> bool:
        return bool(re.search(rf"\b{re.escape(phrase)}\b", text))

    for example in EXAMPLE_ENTRIES:
        for thing in [*(example["entities"] or ()), example["location"]]:
            phrase = " ".join(words(str(thing or "")))
            if phrase and named(phrase, written) and not named(phrase, heard_text):
                return str(example["content"])
    names = {word for name in participants for word in words(name)} | _MONTHS
    said = [w for w in words(content) if not w.isdigit() and w not in names]
    if len(said) < 4:
        return None
    heard = set(heard_text.split())
    for example in EXAMPLE_ENTRIES:
        persons = {word for name in example["persons"] or () for word in words(str(name))}
        shown = {w for w in words(str(example["content"]))
                 if not w.isdigit() and w not in persons | _MONTHS}
        shared = set(said) & shown
        if (_repeats(said, shown)
                and not set(content_words(" ".join(sorted(shared)))) <= heard):
            return str(example["content"])
    return None


def echoed_label(content: str, labels: Collection[str]) -> str | None:
    """The window's label an entry starts with ("[D1:4]", "D1:4"), as a line of the excerpt
    does (``extract.format_turn``); None when it starts otherwise. A label belongs in
    ``source_turns``: an entry that starts with one is a line of the excerpt written out
    again, whole or cut short, not a restatement."""
    first = content.strip().partition(" ")[0].strip("[]:,;")
    return first if first in labels else None


def _without_line_head(content: str, labels: Collection[str]) -> str:
    """The entry without what an excerpt line starts with, where the entry echoes it: a label
    of the window, a time, a "Name:"."""
    text = content.strip()
    if echoed_label(text, labels) is not None:
        text = _LINE_TIME.sub("", text.partition(" ")[2], count=1)
    return without_speaker(text)


_FIRST_PERSON = re.compile(r"\b(?:I|[Mm]e|[Mm]y|[Mm]ine|[Mm]yself)\b")
_QUOTED = re.compile(r'"[^"]*"|\u201c[^\u201d]*\u201d')


def first_person(content: str) -> str | None:
    """The first "I", "me", "my", "mine" or "myself" of an entry outside double quotes, if any.

    An entry citing somebody's turns stands alone only with names: "Mel talked about my
    transgender journey" (Qwen2.5-Coder-0.5B on Caroline's turn) says something false about
    whoever reads as "my". Where every cited turn is the user's own ("me", a journal or a chat
    with the assistant), "I" is the user and stays."""
    found = _FIRST_PERSON.search(_QUOTED.sub(" ", content))
    return found.group(0) if found else None


_FIRST_WORD = re.compile(r"^\W*([^\W\d_][\w.-]*)(?=[\s,;:!?]|$)")


def entry_subject(content: str, participants: Sequence[str]) -> str | None:
    """The participant an entry starts with as its subject ("Melanie ran a charity race",
    "Mel is ...": ``names.participant_named``); None when it starts otherwise, with a
    possessive ("Caroline's necklace ...": about a thing) among them.

    Who did something is what the cited turns must show: a subject who said none of them is
    a name swapped (Qwen2.5-Coder-0.5B's "Mel is researching adoption agencies" for
    Caroline's turn) or a citation of the other side of the exchange (the 1.5B's "Melanie
    asked Caroline about the camping trip", citing only Caroline's turns, in which she asks
    Melanie; results/llm-subset-qwen.txt)."""
    found = _FIRST_WORD.match(content)
    return None if found is None else participant_named(found.group(1).rstrip(".-"),
                                                        participants)


def cited_turns(labels: Sequence[object], turns_by_label: Mapping[str, Turn]) -> list[Turn]:
    """The window's turns the labels name, in the order they were said (each once); raises
    :class:`~.extract.EntryRejected` when none is a turn of the window."""
    cited: list[Turn] = []
    for label in labels:
        turn = turns_by_label.get(label) if isinstance(label, str) else None
        if turn is not None and turn not in cited:
            cited.append(turn)
    if not cited:
        raise EntryRejected(f"cites no turn of the window: {list(labels)!r}")
    return sorted(cited, key=lambda t: (t.timestamp, t.id or 0))


_NOT_PERSONS = frozenset(
    "i me my we us our you your he him his she her they them their it user assistant speaker "
    "someone everyone friend friends family".split()
)


def entry_persons(named: Sequence[object], cited: Sequence[Turn], participants: Sequence[str]
                  ) -> list[str]:
    """The persons the model named, then the cited turns' speakers, each once: a participant
    spelled as the participant (``canonical_person``), anyone else as written; pronouns and
    placeholders ("she", "user", "friend") dropped."""
    persons: dict[str, str] = {}
    for value in [*named, *(t.speaker for t in cited)]:
        text = clean_field(value)
        if not text or text.casefold() in _NOT_PERSONS:
            continue
        name = canonical_person(text, participants) or text
        persons.setdefault(name.casefold(), name)
    return list(persons.values())


def entry_event_time(event_date: str | None, content: str, cited: Sequence[Turn], tz: tzinfo,
                     *, country: str | None = None) -> TimeRange | None:
    """When an entry's event happened: ``entry_event_range`` relative to its first cited
    turn, unless that gives nothing or only the day the turn was said while the turn, the
    only one cited, grounds another time in its own words: then that time.

    Small models copy the session date: "I went to a LGBTQ support group yesterday", said on
    8 May 2023, comes back as event_date "2023-05-08". The turn's words are what the model
    read; "yesterday" read from them is 7 May, as for the turn's own memory."""
    said_at = cited[0].timestamp
    event = entry_event_range(event_date, content, said_at, tz, country=country)
    if len(cited) != 1 or (event is not None and event != _day_of(said_at, tz)):
        return event
    from_turn = ground_event_time(cited[0].text, said_at, tz, country=country)
    return from_turn if from_turn is not None else event


def _day_of(moment: int, tz: tzinfo) -> TimeRange:
    return _day_range(datetime.fromtimestamp(moment, tz=tz).date(), tz)


def _day_range(day: date, tz: tzinfo) -> TimeRange:
    start = int(datetime(day.year, day.month, day.day, tzinfo=tz).timestamp())
    return TimeRange(start, start + DAY)


def entry_event_range(event_date: str | None, content: str, said_at: int, tz: tzinfo, *,
                      country: str | None = None) -> TimeRange | None:
    """When an entry's event happened: the day ``event_date`` names (``parse_event_day``);
    else the grounded time of the content (``ground_event_time``); else the grounded time of
    ``event_date`` itself (a month, a week); else None. All relative to ``said_at``."""
    if event_date:
        day = parse_event_day(event_date, said_at, tz, country=country)
        if day is not None:
            return _day_range(day, tz)
    grounded = ground_event_time(content, said_at, tz, country=country)
    if grounded is None and event_date:
        grounded = ground_event_time(event_date, said_at, tz, country=country)
    return grounded


_ISO_DAY = re.compile(r"^\s*(\d{4})-(\d{1,2})-(\d{1,2})(?:[ T].*)?$")
_MIN_YEAR = 1900
_MAX_YEARS_AHEAD = 10


def parse_event_day(text: str, said_at: int, tz: tzinfo, *, country: str | None = None
                    ) -> date | None:
    """The single day ``text`` names ("2023-05-07", "7 May 2023", "yesterday" relative to
    ``said_at``; a numeric "3/4/2024" in the order of the bank's ``country``); None for
    anything wider (a month, a year), unreadable, or implausible."""
    reference = datetime.fromtimestamp(said_at, tz=tz)
    day: date | None
    match = _ISO_DAY.match(text)
    if match:
        try:
            day = date(int(match[1]), int(match[2]), int(match[3]))
        except ValueError:
            return None
    else:
        noon = reference.replace(hour=12, minute=0, second=0, microsecond=0, tzinfo=None)
        day = _dateparser_day(text, noon, date_order(country))  # one parser per day
        if day is None:
            return None
    if day.year < _MIN_YEAR or day > reference.date() + timedelta(days=365 * _MAX_YEARS_AHEAD):
        return None
    return day


def _dateparser_day(text: str, reference: datetime, order: str | None) -> date | None:
    if not any(ch.isalnum() for ch in text) or len(text) > 40:
        return None
    try:
        data = _date_parser(reference.isoformat(), order).get_date_data(text)
    except Exception:  # dateparser has raised on odd input before; a hint is not worth a crash
        return None
    if data is None or data.date_obj is None or data.period not in ("day", "time"):
        return None
    return data.date_obj.date()


@lru_cache(maxsize=256)
def _date_parser(reference_iso: str, order: str | None):
    from dateparser.date import DateDataParser

    settings = {
        "RELATIVE_BASE": datetime.fromisoformat(reference_iso),
        "PREFER_DATES_FROM": "past",
        "RETURN_AS_TIMEZONE_AWARE": False,
    }
    if order is not None:
        settings["DATE_ORDER"] = order.upper()
    return DateDataParser(languages=["en"], settings=settings)
