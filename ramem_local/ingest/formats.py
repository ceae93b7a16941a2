"""Input formats → :class:`~ramem_local.types.ParsedConversation`.

Two formats are understood (DESIGN.md §5):

**LoCoMo JSON** — a list of samples (or one sample object), each with ``sample_id`` and
``conversation: {speaker_a, speaker_b, session_N_date_time, session_N: [turns]}``. LoCoMo dates
("1:56 pm on 8 May, 2023") carry no zone and are read in ``tz`` (UTC by default, DESIGN.md §3).
A LoCoMo session only has a start time, so turn *i* of a session is stamped ``start + i`` seconds:
the order of turns survives any later sort by timestamp, and every turn stays inside its session.

**JSONL of turns** — one JSON object per line::

    {"speaker": "Ann", "text": "...", "timestamp": "2024-03-01T09:15:00",
     "session": 3, "id": "m-17", "conversation": "family-chat"}

``speaker``, ``text`` and ``timestamp`` are required; ``timestamp`` is an ISO 8601 string (naive
values are read in ``tz``) or a Unix number: seconds, or milliseconds (a number above 10^11) or
microseconds (above 10^14) when that lands in 1900-01-01 .. 2199-12-31, the times a bank
holds. ``session`` (str or int), ``id`` (external id) and ``conversation`` (default: the file
stem) are optional; other keys are ignored. Blank lines are
skipped. Turns keep file order. Sessions:

* with ``session`` labels, turns are grouped by label; ordinals follow first appearance and a
  session starts at its first turn's timestamp;
* without labels, a new session begins whenever consecutive turns are more than
  :data:`SESSION_GAP_SECONDS` (6 hours) apart — a chat that pauses overnight is a new sitting.

A conversation must not mix labelled and unlabelled turns, and its sessions must not start before
the previous session (a session's span runs to the next session's start, so starts must ascend).

Every problem raises :class:`FormatError` with one readable line (file name, line number when
known, what is wrong). Turn text is never altered: not stripped, not re-encoded.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from datetime import datetime, timezone, tzinfo
from itertools import pairwise
from pathlib import Path
from typing import Any

from ramem_local.errors import InputError
from ramem_local.timebounds import MIN_TIME, check_bounds, unix_seconds
from ramem_local.types import ParsedConversation, Session, Turn

UTC = timezone.utc
SESSION_GAP_SECONDS = 6 * 3600
FORMATS = ("locomo", "jsonl")

_JSONL_SUFFIXES = {".jsonl", ".ndjson"}
_JSON_SUFFIXES = {".json"}


class FormatError(InputError):
    """An input file that cannot be read; ``str()`` is one line: ``file:line:col: problem``."""

    def __init__(
        self,
        message: str,
        *,
        path: Path | str | None = None,
        line: int | None = None,
        column: int | None = None,
    ) -> None:
        self.message = " ".join(message.split())  # one line, whatever the message held
        self.path = Path(path) if path is not None else None
        self.line = line
        self.column = column
        super().__init__(self._render())

    def _render(self) -> str:
        where = [self.path.name] if self.path is not None else []
        if self.line is not None:
            where.append(str(self.line))
            if self.column is not None:
                where.append(str(self.column))
        return f"{':'.join(where)}: {self.message}" if where else self.message


def _json_limit(exc: BaseException) -> str:
    """What a JSON text beyond the parser's limits is, in words."""
    if isinstance(exc, RecursionError):
        return "nested too deeply"
    if "digits" in str(exc):
        return "a number with too many digits"
    return " ".join(str(exc).split())


def _short(value: Any, limit: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


# ---------------------------------------------------------------------------------------------
# Format detection and dispatch
# ---------------------------------------------------------------------------------------------


def detect_format(path: Path) -> str:
    """Return ``"locomo"`` or ``"jsonl"`` from the extension, else from the content.

    ``.jsonl``/``.ndjson`` are JSONL and ``.json`` is LoCoMo. Other names are sniffed: ``[`` opens
    a LoCoMo list; ``{`` is JSONL when the first non-blank line is a complete object that is not a
    LoCoMo sample (no ``conversation`` key), else LoCoMo (a pretty-printed sample).
    """
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix in _JSONL_SUFFIXES:
        return "jsonl"
    if suffix in _JSON_SUFFIXES:
        return "locomo"
    text = _read_text(path)
    stripped = text.lstrip()
    if not stripped:
        raise FormatError("empty file: cannot detect its format", path=path)
    first = stripped[0]
    if first == "[":
        return "locomo"
    if first == "{":
        first_line = stripped.splitlines()[0]
        try:
            obj = json.loads(first_line)
        except json.JSONDecodeError:
            return "locomo"  # an object spread over several lines: a pretty-printed sample
        return "locomo" if isinstance(obj, dict) and "conversation" in obj else "jsonl"
    raise FormatError(
        f"unknown format: expected LoCoMo JSON or JSONL, file starts with {_short(first)}",
        path=path,
    )


def read_conversations(path: Path, fmt: str = "auto", tz: tzinfo = UTC) -> list[ParsedConversation]:
    """Read ``path`` in format ``fmt`` (``auto``, ``locomo`` or ``jsonl``)."""
    path = Path(path)
    if fmt == "auto":
        fmt = detect_format(path)
    if fmt == "locomo":
        return read_locomo(path, tz)
    if fmt == "jsonl":
        return read_jsonl(path, tz, default_name=path.stem)
    raise FormatError(
        f"unknown format {_short(fmt)}: expected one of auto, {', '.join(FORMATS)}", path=path
    )


def _read_text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as exc:
        raise FormatError(f"not UTF-8 text (byte {exc.start})", path=path) from exc


# ---------------------------------------------------------------------------------------------
# LoCoMo
# ---------------------------------------------------------------------------------------------

_MONTHS = {
    name: number
    for number, names in enumerate(
        [
            ("january", "jan"),
            ("february", "feb"),
            ("march", "mar"),
            ("april", "apr"),
            ("may",),
            ("june", "jun"),
            ("july", "jul"),
            ("august", "aug"),
            ("september", "sep", "sept"),
            ("october", "oct"),
            ("november", "nov"),
            ("december", "dec"),
        ],
        start=1,
    )
    for name in names
}

_LOCOMO_DATE = re.compile(
    r"""\s*(?P<hour>\d{1,2}):(?P<minute>\d{2})\s*(?P<ampm>[ap])\.?\s*m\.?
        \s+on\s+(?P<day>\d{1,2})\s+(?P<month>[a-z]+)\.?,?\s+(?P<year>\d{4})\s*""",
    re.IGNORECASE | re.VERBOSE,
)
_SESSION_KEY = re.compile(r"session_(\d+)")


def parse_locomo_datetime(text: str, tz: tzinfo = UTC) -> datetime:
    """Parse a LoCoMo session date such as ``"1:56 pm on 8 May, 2023"`` as a time in ``tz``.

    A strict grammar, not a fuzzy parser: a date we misread would silently shift every memory of
    the session, so anything unexpected is a :class:`FormatError`.
    """
    match = _LOCOMO_DATE.fullmatch(text) if isinstance(text, str) else None
    if match is None:
        raise FormatError(f"bad LoCoMo date {_short(text)}: expected like '1:56 pm on 8 May, 2023'")
    hour, minute = int(match["hour"]), int(match["minute"])
    month = _MONTHS.get(match["month"].lower())
    if not 1 <= hour <= 12 or month is None:
        raise FormatError(f"bad LoCoMo date {_short(text)}: no such hour or month")
    hour = hour % 12 + (12 if match["ampm"].lower() == "p" else 0)
    try:
        return datetime(int(match["year"]), month, int(match["day"]), hour, minute, tzinfo=tz)
    except ValueError as exc:
        raise FormatError(f"bad LoCoMo date {_short(text)}: {exc}") from exc


def load_json(path: Path) -> Any:
    """``json.load`` with a :class:`FormatError` carrying line and column on malformed input."""
    path = Path(path)
    text = _read_text(path)
    if not text.strip():
        raise FormatError("empty file: no turns", path=path)
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise FormatError(
            f"invalid JSON: {exc.msg}", path=path, line=exc.lineno, column=exc.colno
        ) from exc
    except (RecursionError, ValueError) as exc:  # nesting too deep, a number too long
        raise FormatError(f"invalid JSON: {_json_limit(exc)}", path=path) from None


def load_locomo_samples(path: Path) -> list[dict[str, Any]]:
    """The raw LoCoMo samples of ``path`` (a list, or one sample object), shape-checked."""
    data = load_json(path)
    samples = data if isinstance(data, list) else [data]
    for index, sample in enumerate(samples):
        if not isinstance(sample, dict) or not isinstance(sample.get("conversation"), dict):
            raise FormatError(
                f"sample {index}: expected an object with a 'conversation' object", path=path
            )
    return samples


def locomo_sample_name(sample: dict[str, Any], index: int, path: Path) -> str:
    """A sample's ``sample_id``, else ``<file stem>-<index>``."""
    sample_id = sample.get("sample_id")
    if isinstance(sample_id, (str, int)) and not isinstance(sample_id, bool) and str(sample_id):
        return str(sample_id)
    return f"{Path(path).stem}-{index}"


def locomo_session_turns(conversation: dict[str, Any]) -> list[tuple[int, list[Any]]]:
    """``(N, turns)`` for every non-empty ``session_N``, in numeric order (10 after 9)."""
    sessions = []
    for key, value in conversation.items():
        match = _SESSION_KEY.fullmatch(key)
        if match and value:
            sessions.append((int(match.group(1)), value))
    return sorted(sessions, key=lambda item: item[0])


def read_locomo(path: Path, tz: tzinfo = UTC) -> list[ParsedConversation]:
    """Read a LoCoMo JSON file: one :class:`ParsedConversation` per sample."""
    path = Path(path)
    conversations = []
    seen: set[str] = set()
    for index, sample in enumerate(load_locomo_samples(path)):
        name = locomo_sample_name(sample, index, path)
        if name in seen:
            raise FormatError(f"duplicate sample_id {_short(name)}", path=path)
        seen.add(name)
        conversations.append(_parse_locomo_sample(sample["conversation"], name, path, tz))
    if not conversations:
        raise FormatError("no turns: the file holds no samples", path=path)
    return conversations


def _parse_locomo_sample(
    conversation: dict[str, Any], name: str, path: Path, tz: tzinfo
) -> ParsedConversation:
    sessions: list[Session] = []
    turns: list[Turn] = []
    for ordinal, raw_turns in locomo_session_turns(conversation):
        where = f"{name} session_{ordinal}"
        if not isinstance(raw_turns, list):
            raise FormatError(f"{where}: expected a list of turns", path=path)
        start = _locomo_session_start(conversation, ordinal, where, path, tz)
        if sessions and start < sessions[-1].start:
            raise FormatError(f"{where}: starts before session_{sessions[-1].ordinal}", path=path)
        sessions.append(Session(ordinal=ordinal, start=start))
        for i, raw in enumerate(raw_turns):
            turns.append(_locomo_turn(raw, ordinal, start + i, _turn_where(where, i, raw), path))
    if not turns:
        raise FormatError(f"{name}: no turns", path=path)
    _check_unique_ids(turns, name, path)
    return ParsedConversation(
        name=name,
        sessions=sessions,
        turns=turns,
        participants=_locomo_participants(conversation, turns),
    )


def _locomo_session_start(
    conversation: dict[str, Any], ordinal: int, where: str, path: Path, tz: tzinfo
) -> int:
    raw = conversation.get(f"session_{ordinal}_date_time")
    if raw is None:
        raise FormatError(f"{where}: has turns but no session_{ordinal}_date_time", path=path)
    try:
        seconds = int(parse_locomo_datetime(raw, tz).timestamp())
        return check_bounds(seconds, _short(raw))
    except (OverflowError, ValueError) as exc:  # FormatError, or a year out of bounds
        message = exc.message if isinstance(exc, FormatError) else str(exc)
        raise FormatError(f"{where}: {message}", path=path) from exc


def _turn_where(where: str, index: int, raw: Any) -> str:
    """``"conv-26 session_3 turn 4 (D3:4)"``: 1-based position, plus the dia_id if any."""
    dia_id = raw.get("dia_id") if isinstance(raw, dict) else None
    suffix = f" ({dia_id})" if isinstance(dia_id, str) else ""
    return f"{where} turn {index + 1}{suffix}"


def _locomo_turn(raw: Any, ordinal: int, timestamp: int, where: str, path: Path) -> Turn:
    if not isinstance(raw, dict):
        raise FormatError(f"{where}: expected an object, got {_short(raw)}", path=path)
    speaker, text = raw.get("speaker"), raw.get("text")
    dia_id, caption = raw.get("dia_id"), raw.get("blip_caption")
    if not isinstance(speaker, str) or not speaker.strip():
        raise FormatError(f"{where}: missing or empty 'speaker'", path=path)
    if not isinstance(text, str):
        raise FormatError(f"{where}: missing 'text' (must be a string)", path=path)
    if dia_id is not None and not isinstance(dia_id, str):
        raise FormatError(f"{where}: 'dia_id' must be a string, got {_short(dia_id)}", path=path)
    if caption is not None and not isinstance(caption, str):
        raise FormatError(f"{where}: 'blip_caption' must be a string", path=path)
    return Turn(
        speaker=speaker,
        text=text,
        timestamp=timestamp,
        session_ordinal=ordinal,
        external_id=dia_id,
        caption=caption,
    )


def _check_unique_ids(turns: list[Turn], name: str, path: Path) -> None:
    """External ids are provenance (evidence is matched on them), so a repeat is an error."""
    seen: set[str] = set()
    for turn in turns:
        if turn.external_id is None:
            continue
        if turn.external_id in seen:
            raise FormatError(f"{name}: duplicate turn id {_short(turn.external_id)}", path=path)
        seen.add(turn.external_id)


def _locomo_participants(conversation: dict[str, Any], turns: list[Turn]) -> list[str]:
    """``[speaker_a, speaker_b]``; hand-made files without them fall back to turn speakers."""
    named = [conversation.get(key) for key in ("speaker_a", "speaker_b")]
    if all(isinstance(name, str) and name for name in named):
        return named  # type: ignore[return-value]
    return list(dict.fromkeys(turn.speaker for turn in turns))


# ---------------------------------------------------------------------------------------------
# JSONL
# ---------------------------------------------------------------------------------------------

_REQUIRED = ("speaker", "text", "timestamp")


@dataclass
class _Line:
    """One parsed JSONL turn with the line it came from (for error messages)."""

    number: int
    conversation: str
    session: str | None
    turn: Turn


def read_jsonl(path: Path, tz: tzinfo, default_name: str) -> list[ParsedConversation]:
    """Read a JSONL file of turns (format in the module docstring)."""
    path = Path(path)
    lines = list(_jsonl_lines(path, tz, default_name))
    if not lines:
        raise FormatError("empty file: no turns", path=path)
    by_conversation: dict[str, list[_Line]] = {}
    for line in lines:
        by_conversation.setdefault(line.conversation, []).append(line)
    return [_build_conversation(name, group, path) for name, group in by_conversation.items()]


def write_jsonl(turns: Iterable[tuple[str, Turn]], path: Path, tz: tzinfo) -> int:
    """Write ``(conversation, turn)`` pairs as the JSONL that :func:`read_jsonl` reads back
    (timestamps as ISO in ``tz``); the file appears whole or not at all. Returns the count."""
    count = 0
    partial = path.with_name(path.name + ".part")
    with partial.open("w", encoding="utf-8") as handle:
        for conversation, turn in turns:
            row = {
                "conversation": conversation,
                "session": turn.session_ordinal,
                "speaker": turn.speaker,
                "text": turn.text,
                "timestamp": datetime.fromtimestamp(turn.timestamp, tz=tz).isoformat(),
            }
            if turn.external_id:
                row["id"] = turn.external_id
            if turn.caption:
                row["caption"] = turn.caption
            handle.write(json.dumps(row, ensure_ascii=False) + "\n")
            count += 1
    partial.replace(path)
    return count


def _jsonl_lines(path: Path, tz: tzinfo, default_name: str) -> Iterator[_Line]:
    text = _read_text(path)
    # Split on "\n" only: str.splitlines would also split on U+2028 etc. inside JSON strings.
    for number, raw in enumerate(text.split("\n"), start=1):
        if raw.strip():
            yield _parse_jsonl_line(raw, number, path, tz, default_name)


def _parse_jsonl_line(raw: str, number: int, path: Path, tz: tzinfo, default_name: str) -> _Line:
    def fail(message: str) -> FormatError:
        return FormatError(message, path=path, line=number)

    try:
        obj = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise fail(f"invalid JSON at column {exc.colno}: {exc.msg}") from exc
    except (RecursionError, ValueError) as exc:  # nesting too deep, a number too long
        raise fail(f"invalid JSON: {_json_limit(exc)}") from None
    if not isinstance(obj, dict):
        raise fail(f"expected a JSON object, got {type(obj).__name__}")
    missing = [key for key in _REQUIRED if key not in obj]
    if missing:
        raise fail(f"missing field {', '.join(repr(key) for key in missing)}")
    speaker, text = obj["speaker"], obj["text"]
    if not isinstance(speaker, str) or not speaker.strip():
        raise fail(f"'speaker' must be a non-empty string, got {_short(speaker)}")
    if not isinstance(text, str) or not text.strip():
        raise fail(f"'text' must be a non-empty string, got {_short(text)}")
    try:
        timestamp = parse_timestamp(obj["timestamp"], tz)
    except ValueError as exc:
        raise fail(str(exc)) from exc
    session = _optional_label(obj, "session", fail)
    external_id = _optional_label(obj, "id", fail)
    conversation = _optional_label(obj, "conversation", fail) or default_name
    caption = obj.get("caption")
    if caption is not None and not isinstance(caption, str):
        raise fail(f"'caption' must be a string, got {_short(caption)}")
    turn = Turn(
        speaker=speaker,
        text=text,
        timestamp=timestamp,
        session_ordinal=0,  # set once sessions are known
        external_id=external_id,
        caption=caption or None,
    )
    return _Line(number, conversation, session, turn)


def _optional_label(
    obj: dict[str, Any], key: str, fail: Callable[[str], FormatError]
) -> str | None:
    value = obj.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (str, int)):
        raise fail(f"{key!r} must be a string or an integer, got {_short(value)}")
    return str(value)


def parse_timestamp(value: Any, tz: tzinfo) -> int:
    """ISO 8601 string (naive → ``tz``) or Unix number → integer Unix seconds (floored).

    Times must fall in 1900-01-01 .. 2199-12-31 (:mod:`ramem_local.timebounds`); a Unix
    number above 10^11 is read as milliseconds (above 10^14 as microseconds) when that lands
    in that range. Anything else raises ``ValueError`` with the value quoted."""
    if isinstance(value, bool):
        raise ValueError(f"bad timestamp {_short(value)}: expected ISO 8601 or Unix seconds")
    if isinstance(value, (int, float)):
        return unix_seconds(value)
    if isinstance(value, str):
        text = value.strip()
        if text.endswith(("Z", "z")):  # fromisoformat accepts "Z" only from Python 3.11
            text = text[:-1] + "+00:00"
        try:
            parsed = datetime.fromisoformat(text)
        except ValueError:
            parsed = None
        if parsed is not None:
            if parsed.tzinfo is None:
                parsed = parsed.replace(tzinfo=tz)
            try:
                seconds = math.floor(parsed.timestamp())
            except (OverflowError, ValueError, OSError):
                seconds = MIN_TIME - 1  # year 1 or 9999 shifted out of datetime's range
            return check_bounds(seconds, _short(value))
    raise ValueError(f"bad timestamp {_short(value)}: expected ISO 8601 or Unix seconds")


def _build_conversation(name: str, lines: list[_Line], path: Path) -> ParsedConversation:
    labelled = [line.session is not None for line in lines]
    if any(labelled) and not all(labelled):
        first_odd = lines[labelled.index(not labelled[0])]
        raise FormatError(
            f"conversation {_short(name)} mixes turns with and without 'session'",
            path=path,
            line=first_odd.number,
        )
    _check_unique_jsonl_ids(lines, name, path)
    ordinals = _label_sessions(lines) if labelled[0] else _gap_sessions(lines)
    sessions: list[Session] = []
    for line, ordinal in zip(lines, ordinals, strict=True):
        line.turn.session_ordinal = ordinal
        if ordinal > len(sessions):  # first turn of a new session
            _check_ascending(sessions, line, name, path)
            sessions.append(Session(ordinal=ordinal, start=line.turn.timestamp))
    turns = [line.turn for line in lines]
    participants = list(dict.fromkeys(turn.speaker for turn in turns))
    return ParsedConversation(name=name, sessions=sessions, turns=turns, participants=participants)


def _check_unique_jsonl_ids(lines: list[_Line], name: str, path: Path) -> None:
    first_line: dict[str, int] = {}
    for line in lines:
        ext = line.turn.external_id
        if ext is None:
            continue
        if ext in first_line:
            raise FormatError(
                f"conversation {_short(name)}: duplicate id {_short(ext)} "
                f"(first on line {first_line[ext]})",
                path=path,
                line=line.number,
            )
        first_line[ext] = line.number


def _label_sessions(lines: list[_Line]) -> list[int]:
    """Ordinals 1, 2, … by first appearance of each ``session`` label."""
    ordinal_of: dict[str | None, int] = {}
    return [ordinal_of.setdefault(line.session, len(ordinal_of) + 1) for line in lines]


def _gap_sessions(lines: list[_Line]) -> list[int]:
    """Start a new session when consecutive turns are more than 6 hours apart (either way)."""
    ordinals = [1]
    for previous, line in pairwise(lines):
        gap = abs(line.turn.timestamp - previous.turn.timestamp)
        ordinals.append(ordinals[-1] + (1 if gap > SESSION_GAP_SECONDS else 0))
    return ordinals


def _check_ascending(sessions: list[Session], line: _Line, name: str, path: Path) -> None:
    if sessions and line.turn.timestamp < sessions[-1].start:
        raise FormatError(
            f"conversation {_short(name)}: session {len(sessions) + 1} starts at "
            f"{_iso(line.turn.timestamp)}, before session {len(sessions)} "
            f"({_iso(sessions[-1].start)}); sessions must start in ascending order",
            path=path,
            line=line.number,
        )


def _iso(ts: int) -> str:
    return datetime.fromtimestamp(ts, tz=UTC).isoformat()
