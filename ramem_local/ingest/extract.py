"""LLM extraction: prompt, schema, the call with its one retry, and reading the reply.

A window of turns is shown to the model with each turn's id, timestamp and speaker; the model
returns self-contained restatements of the facts and events in it, each citing the turns it
comes from. The schema (every string and array bounded) restricts citations to the window's
turn ids, so provenance cannot be invented. Each entry of the reply is read into an
:class:`Entry`; ``anchor.anchor_entry`` gives it its episode (session span from the cited
turns, event time, persons) and makes it a memory.

A model's output never makes the call raise: a truncated or looping reply (or a prompt too
long for the context) is retried once as two half windows; a half whose reply is cut short
again keeps the entries it finished (``complete_entries``); any other failure is returned as
an error for the caller to record. A reply whose entries were all refused is answered once
with the reasons (``repair_window``). An entry that cannot become a memory raises
:class:`EntryRejected`, which the caller counts and records.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone, tzinfo

from ..errors import EntryRejected
from ..protocols import LLM, LLMResult
from ..schemas import array, enum, looks_degenerate, nullable, obj, string, validate
from ..text import words
from ..types import LLMCall, Turn

PROMPT_VERSION = "x1"
MAX_ENTRIES = 12
MAX_SOURCE_TURNS = 6
MAX_ERROR_CHARS = 500
# Errors after which the window is retried once, split in two halves.
RETRYABLE = ("truncated", "repetition", "prompt_too_long")
# Errors of a reply that was cut short: the entries it finished before the cut are whole.
CUT_SHORT = ("truncated", "repetition")
_CONTEXT_ERROR = re.compile(r"context window|context length|exceeds? (the )?context", re.I)
_CONTEXT_MARGIN = 48  # chat-template tokens around the messages

SYSTEM_PROMPT = """\
You write the long-term memory of a personal assistant. You read an excerpt of a conversation \
and write down the facts and events worth remembering, as a list of entries.

Rules for every entry:
- One fact or event per entry; separate facts go in separate entries.
- Self-contained: it must make sense alone, months later, without the excerpt. Use people's \
names, never pronouns ("Caroline", not "I", "she" or "you").
- Absolute dates: work out relative times from the date of the turn where they were said. \
"Yesterday" said on 2023-05-08 becomes "on 7 May 2023"; "last year" said in 2023 becomes \
"in 2022"; "next month" said in May 2023 becomes "in June 2023".
- Keep the concrete details: names, places, numbers, titles, what was done, bought, made, felt \
or planned.
- Skip greetings, thanks and small talk. At most 12 entries; if nothing is worth remembering, \
return an empty list.

Fields:
- content: the entry, one or two sentences.
- source_turns: the ids, as shown in square brackets, of the turns the entry comes from.
- persons: the names of the people involved.
- entities: named things (places, organisations, books, pets, products, events).
- keywords: a few words someone might search for.
- location: where it happened, or null.
- topic: two or three words.
- event_date: the day it happened as YYYY-MM-DD when the day is known, else null.
Reply with JSON only."""


# --------------------------------------------------------------------------- prompt + schema


def turn_labels(turns: Sequence[Turn]) -> dict[str, Turn]:
    """The id each turn is shown (and cited) under: its external id, else ``t<store id>``.

    Labels are unique within the window (a clash gets ``#<store id>`` appended).
    """
    labels: dict[str, Turn] = {}
    for position, turn in enumerate(turns):
        label = turn.external_id or f"t{turn.id if turn.id is not None else position}"
        if label in labels:
            label = f"{label}#{turn.id if turn.id is not None else position}"
        labels[label] = turn
    return labels


def format_turn(label: str, turn: Turn, tz: tzinfo) -> str:
    """``[D1:3] 2023-05-08 13:56 Caroline: text`` (a shared image's caption appended)."""
    moment = datetime.fromtimestamp(turn.timestamp, tz=tz)
    return f"[{label}] {moment:%Y-%m-%d %H:%M} {turn.speaker}: {shown_text(turn)}"


def shown_text(turn: Turn) -> str:
    """A turn's text as the excerpt shows it: one line, a shared image's caption appended."""
    text = " ".join(turn.text.split())
    if turn.caption:
        text += f" [shares an image: {' '.join(turn.caption.split())}]"
    return text


EXAMPLE_EXCERPT = """\
-- Session 1, Saturday 9 March 2024 --
[e1] 2024-03-09 18:02 Ana: We finally adopted a puppy yesterday! Her name is Luna.
[e2] 2024-03-09 18:03 Ben: Congrats! I'm running the Lisbon half marathon next month, so I \
train every morning now.
[e3] 2024-03-09 18:04 Ana: Good luck with it! Talk soon."""
EXAMPLE_ENTRIES = [
    {"content": "Ana adopted a puppy named Luna on 8 March 2024.", "source_turns": ["e1"],
     "persons": ["Ana"], "entities": ["Luna"], "keywords": ["puppy", "dog", "adoption"],
     "location": None, "topic": "pet adoption", "event_date": "2024-03-08"},
    {"content": "Ben is training every morning to run the Lisbon half marathon in April 2024.",
     "source_turns": ["e2"], "persons": ["Ben"], "entities": ["Lisbon half marathon"],
     "keywords": ["running", "half marathon", "training"], "location": "Lisbon",
     "topic": "running race", "event_date": None},
]


REPAIR_REQUEST = """\
None of these entries can be kept:
{reasons}

Write the entries for the same excerpt again. Restate each fact in your own words, in the third \
person, with the speaker's name instead of "I" and absolute dates; never copy the text of a turn. \
Reply with JSON only."""


def _excerpt_request(excerpt: str) -> str:
    return ("Conversation excerpt. Each line: [turn id] date time speaker: text.\n\n"
            + excerpt + "\n\nWrite the memory entries for this excerpt.")


def build_messages(turns: Sequence[Turn], tz: tzinfo) -> list[dict]:
    """The chat messages for one window: the rules, a worked example (an excerpt and its
    entries), then the excerpt, session by session.

    The example shows what the rules ask: names for "I" and "her", "yesterday" and "next
    month" as dates, one entry per fact, the greeting left out. With it Qwen2.5-Coder-1.5B
    writes 5 memories per 40-turn window instead of 1 vague summary (results/llm-subset-qwen.txt).
    It is the same for every window, so it stays in the fixed prompt prefix (evaluated once)."""
    lines: list[str] = []
    session = None
    for label, turn in turn_labels(turns).items():
        if turn.session_ordinal != session:
            session = turn.session_ordinal
            day = datetime.fromtimestamp(turn.timestamp, tz=tz)
            if lines:
                lines.append("")
            lines.append(f"-- Session {session}, {day:%A} {day.day} {day:%B %Y} --")
        lines.append(format_turn(label, turn, tz))
    return [{"role": "system", "content": SYSTEM_PROMPT},
            {"role": "user", "content": _excerpt_request(EXAMPLE_EXCERPT)},
            {"role": "assistant", "content": json.dumps({"entries": EXAMPLE_ENTRIES})},
            {"role": "user", "content": _excerpt_request("\n".join(lines))}]


def window_schema(labels: Sequence[str]) -> dict:
    """The reply schema; ``source_turns`` may only name the window's turn ids."""
    entry = obj(
        {
            "content": string(300),
            "source_turns": array(enum(list(labels)), MAX_SOURCE_TURNS, min_items=1),
            "persons": array(string(40), 6),
            "entities": array(string(40), 8),
            "keywords": array(string(30), 8),
            "location": nullable(string(60)),
            "topic": string(40),
            "event_date": nullable(string(40)),
        }
    )
    return obj({"entries": array(entry, MAX_ENTRIES)})


# --------------------------------------------------------------------------- the call


@dataclass
class WindowOutcome:
    """What extraction made of one window: the entries (None when it failed) and every call."""

    entries: list[dict] | None
    error: str | None
    calls: list[LLMCall] = field(default_factory=list)
    split: bool = False  # retried as two halves
    cut_short: bool = False  # some entries come from a reply cut short (complete_entries)

    @property
    def ok(self) -> bool:
        return self.entries is not None


def extract_window(
    llm: LLM,
    window_turns: Sequence[Turn],
    *,
    max_tokens: int,
    tz: tzinfo = timezone.utc,
    temperature: float = 0.0,
) -> WindowOutcome:
    """Extract entries from a window; one retry as two halves when the reply is cut short.

    Entries are returned as the model wrote them (schema-valid); ``anchor.anchor_entry``
    reads each and turns it into a memory. Never raises for what the model does.
    """
    outcome = WindowOutcome(entries=None, error=None)
    if not window_turns:
        outcome.entries = []
        return outcome
    first = _one_call(llm, window_turns, max_tokens, tz, temperature, outcome.calls)
    if first.error is None:
        outcome.entries = first.entries
        return outcome
    if not first.error.startswith(RETRYABLE) or len(window_turns) < 2:
        if first.finished:
            outcome.entries, outcome.cut_short = first.finished, True
        else:
            outcome.error = first.error
        return outcome
    outcome.split = True
    middle = len(window_turns) // 2
    collected: list[dict] = []
    for half in (window_turns[:middle], window_turns[middle:]):
        reply = _one_call(llm, half, max_tokens, tz, temperature, outcome.calls)
        if reply.error is not None and not reply.finished:
            outcome.error = f"{reply.error} (after splitting the window, first try: {first.error})"
            return outcome
        outcome.cut_short |= reply.error is not None
        collected.extend(reply.entries or reply.finished)
    outcome.entries = collected
    return outcome


@dataclass
class _Reply:
    entries: list[dict] | None  # set iff error is None
    error: str | None
    finished: list[dict] = field(default_factory=list)  # cut short: its complete entries


def repair_request(entries: Sequence[object], reasons: Sequence[str]) -> list[dict]:
    """The follow-up to a reply none of whose entries could be kept: the reply as the model's
    turn, then why each entry was refused and what to write instead."""
    listed = "\n".join(f"- {reason}" for reason in reasons[:MAX_ENTRIES])
    return [{"role": "assistant", "content": json.dumps({"entries": list(entries)})},
            {"role": "user", "content": REPAIR_REQUEST.format(reasons=listed)}]


def repair_window(
    llm: LLM,
    window_turns: Sequence[Turn],
    entries: Sequence[object],
    reasons: Sequence[str],
    *,
    max_tokens: int,
    tz: tzinfo = timezone.utc,
    temperature: float = 0.0,
) -> WindowOutcome:
    """Ask once more for a window whose reply had entries but none that could be kept (each
    refused for ``reasons``, ``anchor.anchor_entry``'s): the same excerpt, the reply, and
    the reasons. Qwen2.5-Coder-0.5B copies a turn word for word where the 1.5B restates it; told
    so, it can write the entry again. Never raises for what the model does."""
    outcome = WindowOutcome(entries=None, error=None)
    reply = _one_call(llm, window_turns, max_tokens, tz, temperature, outcome.calls,
                      follow_up=repair_request(entries, reasons))
    if reply.error is None:
        outcome.entries = reply.entries
    elif reply.finished:
        outcome.entries, outcome.cut_short = reply.finished, True
    else:
        outcome.error = reply.error
    return outcome


def _one_call(
    llm: LLM,
    turns: Sequence[Turn],
    max_tokens: int,
    tz: tzinfo,
    temperature: float,
    calls: list[LLMCall],
    follow_up: Sequence[dict] = (),
) -> _Reply:
    messages = build_messages(turns, tz) + list(follow_up)
    schema = window_schema(list(turn_labels(turns)))
    too_long = _prompt_too_long(llm, messages, max_tokens)
    if too_long is not None:
        calls.append(LLMCall("extract", error=too_long))
        return _Reply(None, too_long)
    started = time.perf_counter()
    try:
        result = llm.chat_json(messages, schema, max_tokens=max_tokens, temperature=temperature)
    except Exception as exc:  # the protocol says never raise; a broken runtime still might
        result = LLMResult(None, f"{type(exc).__name__}: {exc}", None, "", 0, 0,
                           (time.perf_counter() - started) * 1000)
    error = result.error
    if error is not None and _CONTEXT_ERROR.search(error):
        error = f"prompt_too_long: {error}"
    reply = result.data or {}
    if error is None and not isinstance(reply.get("entries"), list):
        error = "schema: reply has no entries list"
    if error is not None:
        error = error[:MAX_ERROR_CHARS]
    calls.append(replace(result.accounting("extract"), error=error))
    if error is not None:
        finished = (complete_entries(result.raw, schema["properties"]["entries"]["items"])
                    if error.startswith(CUT_SHORT) else [])
        return _Reply(None, error, finished)
    return _Reply(list(reply["entries"]), None)


def complete_entries(raw: str, entry_schema: dict | None) -> list[dict]:
    """The entries a reply cut short had finished: each whole object of its "entries" array
    before the cut that is schema-valid and not itself a loop (every whole object without
    ``entry_schema``: what the model wrote, for measuring it).

    A small model that copies turns word for word runs out of tokens in the eighth entry of
    twelve; the seven before it are as good as those of a reply that fits."""
    start = raw.find("[", max(raw.find('"entries"'), 0))
    if start < 0:
        return []
    decoder = json.JSONDecoder(strict=False)
    finished: list[dict] = []
    position = start + 1
    while True:
        while position < len(raw) and raw[position] in " \t\r\n,":
            position += 1
        if position >= len(raw) or raw[position] != "{":
            return finished
        try:
            entry, position = decoder.raw_decode(raw, position)
        except json.JSONDecodeError:
            return finished
        if entry_schema is None or (isinstance(entry, dict) and not validate(entry, entry_schema)
                                    and not looks_degenerate(json.dumps(entry))):
            finished.append(entry)


def _prompt_too_long(llm: LLM, messages: list[dict], max_tokens: int) -> str | None:
    """An error when the prompt plus the reply budget cannot fit the model's context."""
    n_ctx = getattr(llm, "n_ctx", None)
    if not isinstance(n_ctx, int) or n_ctx <= 0:
        return None
    try:
        prompt = sum(llm.count_tokens(m["content"]) for m in messages) + _CONTEXT_MARGIN
    except Exception:  # counting is an estimate; the call itself reports the real limit
        return None
    if prompt + max_tokens > n_ctx:
        return f"prompt_too_long: ~{prompt} prompt tokens + {max_tokens} for the reply > {n_ctx}"
    return None


# --------------------------------------------------------------------------- reading the reply


_NULLISH = frozenset({"", "null", "none", "n/a", "na", "unknown", "-"})


@dataclass(frozen=True)
class Entry:
    """One entry of a reply, cleaned; ``source_turns`` are the labels it cites, as written."""

    content: str
    source_turns: list[str]
    persons: list[str]
    keywords: list[str]
    entities: list[str]
    location: str | None
    topic: str | None
    event_date: str | None


def read_entry(entry: Mapping) -> Entry:
    """An entry as the model wrote it, cleaned: whitespace collapsed, "null"-like words None,
    list items unique (case-insensitively). Raises :class:`EntryRejected` when the content
    says nothing (fewer than two words with a letter)."""
    content = " ".join(str(entry.get("content") or "").split())
    if sum(any(ch.isalpha() for ch in w) for w in words(content)) < 2:
        raise EntryRejected(f"content says nothing: {content!r}")
    return Entry(
        content=content,
        source_turns=list(entry.get("source_turns") or []),
        persons=_unique(entry.get("persons") or []),
        keywords=_unique(entry.get("keywords") or []),
        entities=_unique(entry.get("entities") or []),
        location=clean_field(entry.get("location")),
        topic=clean_field(entry.get("topic")),
        event_date=clean_field(entry.get("event_date")),
    )


def clean_field(value: object) -> str | None:
    """A string of the reply, whitespace collapsed; None for a non-string or a null-like word."""
    if not isinstance(value, str):
        return None
    text = " ".join(value.split())
    return None if text.casefold() in _NULLISH else text


def _unique(values: Sequence[object]) -> list[str]:
    seen: dict[str, str] = {}
    for value in values:
        text = clean_field(value)
        if text:
            seen.setdefault(text.casefold(), text)
    return list(seen.values())
