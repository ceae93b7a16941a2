"""LLM extraction: prompt, schema, the call with its one retry, and anchoring of entries.

A window of turns is shown to the model with each turn's id, timestamp and speaker; the model
returns self-contained restatements of the facts and events in it, each citing the turns it
comes from. The schema (every string and array bounded) restricts citations to the window's
turn ids, so provenance cannot be invented. What the model writes about *time* is only a hint:
the session span of a memory comes from its cited turns, and its event time is either a single
day the model names (checked by parsing) or what the deterministic grounder reads in the
content, relative to when the cited turn was said.

Nothing here raises for a model's output: a truncated or looping reply (or a prompt too long
for the context) is retried once as two half windows; any other failure is returned as an
error for the caller to record.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import date, datetime, timedelta, timezone, tzinfo
from functools import lru_cache

from ..protocols import LLM, LLMResult
from ..schemas import array, enum, nullable, obj, string
from ..text import normalised_hash, words
from ..types import LLMCall, MemoryRecord, Turn
from .anchor import ground_event_time

PROMPT_VERSION = "x1"
MAX_ENTRIES = 12
MAX_SOURCE_TURNS = 6
MAX_ERROR_CHARS = 500
# Errors after which the window is retried once, split in two halves.
RETRYABLE = ("truncated", "repetition", "prompt_too_long")
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
    text = " ".join(turn.text.split())
    if turn.caption:
        text += f" [shares an image: {' '.join(turn.caption.split())}]"
    return f"[{label}] {moment:%Y-%m-%d %H:%M} {turn.speaker}: {text}"


def build_messages(turns: Sequence[Turn], tz: tzinfo) -> list[dict]:
    """The chat messages for one window: the rules, then the excerpt, session by session."""
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
    user = (
        "Conversation excerpt. Each line: [turn id] date time speaker: text.\n\n"
        + "\n".join(lines)
        + "\n\nWrite the memory entries for this excerpt."
    )
    return [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": user}]


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

    @property
    def ok(self) -> bool:
        return self.entries is not None

    @property
    def tokens_in(self) -> int:
        return LLMCall.total(self.calls).tokens_in

    @property
    def tokens_out(self) -> int:
        return LLMCall.total(self.calls).tokens_out

    @property
    def ms(self) -> float:
        return LLMCall.total(self.calls).ms


def extract_window(
    llm: LLM,
    window_turns: Sequence[Turn],
    *,
    max_tokens: int,
    tz: tzinfo = timezone.utc,
    temperature: float = 0.0,
) -> WindowOutcome:
    """Extract entries from a window; one retry as two halves when the reply is cut short.

    Entries are returned as the model wrote them (schema-valid); :func:`anchor_entry` turns
    them into memories. Never raises for what the model does.
    """
    outcome = WindowOutcome(entries=None, error=None)
    if not window_turns:
        outcome.entries = []
        return outcome
    entries, error = _one_call(llm, window_turns, max_tokens, tz, temperature, outcome.calls)
    if error is None:
        outcome.entries = entries
        return outcome
    if not error.startswith(RETRYABLE) or len(window_turns) < 2:
        outcome.error = error
        return outcome
    outcome.split = True
    middle = len(window_turns) // 2
    collected: list[dict] = []
    for half in (window_turns[:middle], window_turns[middle:]):
        entries, half_error = _one_call(llm, half, max_tokens, tz, temperature, outcome.calls)
        if half_error is not None:
            outcome.error = f"{half_error} (after splitting the window, first try: {error})"
            return outcome
        collected.extend(entries or [])
    outcome.entries = collected
    return outcome


def _one_call(
    llm: LLM,
    turns: Sequence[Turn],
    max_tokens: int,
    tz: tzinfo,
    temperature: float,
    calls: list[LLMCall],
) -> tuple[list[dict] | None, str | None]:
    messages = build_messages(turns, tz)
    schema = window_schema(list(turn_labels(turns)))
    too_long = _prompt_too_long(llm, messages, max_tokens)
    if too_long is not None:
        calls.append(LLMCall("extract", error=too_long))
        return None, too_long
    started = time.perf_counter()
    try:
        result = llm.chat_json(messages, schema, max_tokens=max_tokens, temperature=temperature)
    except Exception as exc:  # the protocol says never raise; a broken runtime still might
        result = LLMResult(None, f"{type(exc).__name__}: {exc}", None, "", 0, 0,
                           (time.perf_counter() - started) * 1000)
    error = result.error
    if error is not None and _CONTEXT_ERROR.search(error):
        error = f"prompt_too_long: {error}"
    if error is None and not isinstance((result.data or {}).get("entries"), list):
        error = "schema: reply has no entries list"
    if error is not None:
        error = error[:MAX_ERROR_CHARS]
    calls.append(replace(result.accounting("extract"), error=error))
    if error is not None:
        return None, error
    return list(result.data["entries"]), None


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


# --------------------------------------------------------------------------- anchoring


class EntryRejected(ValueError):
    """An entry that cannot become a memory (empty, cites nothing known, ...)."""


_NOT_PERSONS = frozenset(
    "i me my we us our you your he him his she her they them their it user assistant speaker "
    "someone everyone friend friends family".split()
)
_NULLISH = frozenset({"", "null", "none", "n/a", "na", "unknown", "-"})
_ISO_DAY = re.compile(r"^\s*(\d{4})-(\d{1,2})-(\d{1,2})(?:[ T].*)?$")
_MIN_YEAR = 1900
_MAX_YEARS_AHEAD = 10
DAY_SECONDS = 86_400


def dedup_key(content: str) -> str:
    return "x:" + normalised_hash(content)


def anchor_entry(
    entry: Mapping,
    turns_by_external_id: Mapping[str, Turn],
    session_span_of_turn: Callable[[Turn], tuple[int, int]] | Mapping[int, tuple[int, int]],
    tz: tzinfo,
    *,
    conversation: str = "",
    participants: Sequence[str] = (),
) -> MemoryRecord:
    """A memory (kind ``"extracted"``) from one entry; raises :class:`EntryRejected`.

    * session span: ``[min start, max end]`` over the sessions of the cited turns;
    * event time: ``event_date`` when it reads as one day (ISO, or a phrase relative to the
      first cited turn); else the deterministic grounder on the content, relative to the first
      cited turn; else the grounder on ``event_date`` (a month, a week); else none;
    * persons: the model's persons and the cited turns' speakers, spelled as the conversation's
      participants when they match case-insensitively (pronouns dropped).
    """
    content = " ".join(str(entry.get("content") or "").split())
    if sum(any(ch.isalpha() for ch in w) for w in words(content)) < 2:
        raise EntryRejected(f"content says nothing: {content!r}")
    cited: list[Turn] = []
    for label in entry.get("source_turns") or []:
        turn = turns_by_external_id.get(label)
        if turn is not None and turn not in cited:
            cited.append(turn)
    if not cited:
        raise EntryRejected(f"cites no turn of the window: {entry.get('source_turns')!r}")
    cited.sort(key=lambda t: (t.timestamp, t.id or 0))
    spans = [_span_of(session_span_of_turn, turn) for turn in cited]
    said_at = cited[0].timestamp
    event = _event_range(_clean(entry.get("event_date")), content, said_at, tz)
    source_ids = [t.id for t in cited if t.id is not None]
    return MemoryRecord(
        content=content,
        kind="extracted",
        conversation=conversation,
        session_start=min(s for s, _ in spans),
        session_end=max(e for _, e in spans),
        persons=_persons(entry.get("persons") or [], cited, participants),
        keywords=_unique(entry.get("keywords") or []),
        entities=_unique(entry.get("entities") or []),
        location=_clean(entry.get("location")),
        topic=_clean(entry.get("topic")),
        event_start=event[0] if event else None,
        event_end=event[1] if event else None,
        source_turns=[t.external_id for t in cited if t.external_id],
        source_turn_ids=source_ids,
    )


def _span_of(spans, turn: Turn) -> tuple[int, int]:
    if callable(spans):
        return spans(turn)
    return spans[turn.id]


def _clean(value: object) -> str | None:
    if not isinstance(value, str):
        return None
    text = " ".join(value.split())
    return None if text.casefold() in _NULLISH else text


def _unique(values: Sequence[object]) -> list[str]:
    seen: dict[str, str] = {}
    for value in values:
        text = _clean(value)
        if text:
            seen.setdefault(text.casefold(), text)
    return list(seen.values())


def _persons(named: Sequence[object], cited: Sequence[Turn], participants: Sequence[str]
             ) -> list[str]:
    known = {p.casefold(): p for p in participants if p}
    first_names: dict[str, str] = {}
    for p in participants:
        parts = p.split()
        if len(parts) > 1:
            first_names.setdefault(parts[0].casefold(), p)
    out: dict[str, str] = {}
    for value in [*named, *(t.speaker for t in cited)]:
        text = _clean(value)
        if not text or text.casefold() in _NOT_PERSONS:
            continue
        key = text.casefold()
        name = known.get(key) or first_names.get(key) or text
        out.setdefault(name.casefold(), name)
    return list(out.values())


def _event_range(event_date: str | None, content: str, said_at: int, tz: tzinfo
                 ) -> tuple[int, int] | None:
    if event_date:
        day = parse_event_day(event_date, said_at, tz)
        if day is not None:
            start = int(datetime(day.year, day.month, day.day, tzinfo=tz).timestamp())
            return start, start + DAY_SECONDS
    grounded = ground_event_time(content, said_at, tz)
    if grounded is None and event_date:
        grounded = ground_event_time(event_date, said_at, tz)
    return (grounded.start, grounded.end) if grounded else None


def parse_event_day(text: str, said_at: int, tz: tzinfo) -> date | None:
    """The single day ``text`` names ("2023-05-07", "7 May 2023", "yesterday" relative to
    ``said_at``); None for anything wider (a month, a year), unreadable, or implausible."""
    reference = datetime.fromtimestamp(said_at, tz=tz)
    match = _ISO_DAY.match(text)
    if match:
        try:
            day = date(int(match[1]), int(match[2]), int(match[3]))
        except ValueError:
            return None
    else:
        noon = reference.replace(hour=12, minute=0, second=0, microsecond=0, tzinfo=None)
        day = _dateparser_day(text, noon)  # day granularity: one parser per day
        if day is None:
            return None
    if day.year < _MIN_YEAR or day > reference.date() + timedelta(days=365 * _MAX_YEARS_AHEAD):
        return None
    return day


def _dateparser_day(text: str, reference: datetime) -> date | None:
    if not any(ch.isalnum() for ch in text) or len(text) > 40:
        return None
    try:
        data = _date_parser(reference.isoformat()).get_date_data(text)
    except Exception:  # dateparser has raised on odd input before; a hint is not worth a crash
        return None
    if data is None or data.date_obj is None or data.period not in ("day", "time"):
        return None
    return data.date_obj.date()


@lru_cache(maxsize=256)
def _date_parser(reference_iso: str):
    from dateparser.date import DateDataParser

    return DateDataParser(
        languages=["en"],
        settings={
            "RELATIVE_BASE": datetime.fromisoformat(reference_iso),
            "PREFER_DATES_FROM": "past",
            "RETURN_AS_TIMEZONE_AWARE": False,
        },
    )
