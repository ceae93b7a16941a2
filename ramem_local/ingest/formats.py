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

``ingest`` reads a JSONL file twice, one line at a time (:func:`open_turns`): the first pass
checks everything and keeps only each conversation's outline, the second yields the turns to
write; memory does not grow with the file. LoCoMo files are read whole (they are small).
"""

from __future__ import annotations

import codecs
import json
import math
import re
from array import array
from collections.abc import Callable, Collection, Generator, Iterable, Iterator, Sequence
from contextlib import closing
from dataclasses import dataclass
from datetime import datetime, timezone, tzinfo
from pathlib import Path
from typing import Any

from ramem_local.errors import FormatError
from ramem_local.timebounds import MIN_TIME, check_bounds, unix_seconds
from ramem_local.types import ConversationOutline, ParsedConversation, Session, Turn

UTC = timezone.utc
SESSION_GAP_SECONDS = 6 * 3600
FORMATS = ("locomo", "jsonl")

_JSONL_SUFFIXES = {".jsonl", ".ndjson"}
_JSON_SUFFIXES = {".json"}


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

    ``.jsonl``/``.ndjson`` are JSONL and ``.json`` is LoCoMo. Other names are sniffed (only
    the first non-blank line is read): ``[`` opens a LoCoMo list; ``{`` is JSONL when that line
    is a complete object that is not a LoCoMo sample (no ``conversation`` key), else LoCoMo
    (a pretty-printed sample).
    """
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix in _JSONL_SUFFIXES:
        return "jsonl"
    if suffix in _JSON_SUFFIXES:
        return "locomo"
    with closing(_nonblank_lines(path)) as lines:
        line = next(lines, None)
    if line is None:
        raise FormatError("empty file: cannot detect its format", path=path)
    stripped = line[1].lstrip()
    first = stripped[0]
    if first == "[":
        return "locomo"
    if first == "{":
        first_line = stripped.splitlines()[0]
        try:
            obj = json.loads(first_line)
        except json.JSONDecodeError:
            return "locomo"  # an object spread over several lines: a pretty-printed sample
        except (RecursionError, ValueError):  # nesting too deep, a number too long
            return "jsonl"  # one line, one object: the JSONL reader reports it with its line
        return "locomo" if isinstance(obj, dict) and "conversation" in obj else "jsonl"
    raise FormatError(
        f"unknown format: expected LoCoMo JSON or JSONL, file starts with {_short(first)}",
        path=path,
    )


def read_conversations(path: Path, fmt: str = "auto", tz: tzinfo = UTC) -> list[ParsedConversation]:
    """Read ``path`` in format ``fmt`` (``auto``, ``locomo`` or ``jsonl``), all in memory
    (``ingest`` streams instead: :func:`open_turns`)."""
    path = Path(path)
    if fmt == "auto":
        fmt = detect_format(path)
    if fmt == "locomo":
        return read_locomo(path, tz)
    if fmt == "jsonl":
        return read_jsonl(path, tz, default_name=path.stem)
    raise _unknown_format(fmt, path)


def open_turns(path: Path, fmt: str = "auto", tz: tzinfo = UTC) -> TurnSource:
    """Check the whole of ``path`` (every error is raised here, before anything is written)
    and return its turns' source. A JSONL file is read twice, line by line, and never held
    whole; a LoCoMo file is read whole (a few MB at most: 10 conversations of the benchmark
    are 2.8 MB)."""
    path = Path(path)
    if fmt == "auto":
        fmt = detect_format(path)
    if fmt == "locomo":
        return source_of(read_locomo(path, tz))
    if fmt == "jsonl":
        return scan_jsonl(path, tz, default_name=path.stem)
    raise _unknown_format(fmt, path)


def _unknown_format(fmt: str, path: Path) -> FormatError:
    return FormatError(
        f"unknown format {_short(fmt)}: expected one of auto, {', '.join(FORMATS)}", path=path
    )


def _read_text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as exc:
        raise FormatError(f"not UTF-8 text (byte {exc.start})", path=path) from exc


def _nonblank_lines(path: Path) -> Generator[tuple[int, str], None, None]:
    """``(line number, text)`` of every non-blank line, read one line at a time, as reading
    the whole text would give them: UTF-8 with an optional BOM (the byte of a decoding error
    is counted from the start, after the BOM), lines ending at "\n", "\r\n" or "\r" (not at
    U+2028 and the like, which a JSON string may hold), the line ending not included."""
    offset = 0
    number = 0
    with path.open("rb") as handle:
        for data in handle:
            if offset == 0 and data.startswith(codecs.BOM_UTF8):
                data = data[len(codecs.BOM_UTF8):]
            try:
                text = data.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise FormatError(f"not UTF-8 text (byte {offset + exc.start})",
                                  path=path) from exc
            offset += len(data)
            if text.endswith("\n"):
                text = text[:-2] if text.endswith("\r\n") else text[:-1]
            elif text.endswith("\r"):
                text = text[:-1]
            for part in text.split("\r"):  # a lone carriage return ends a line too
                number += 1
                if part.strip():
                    yield number, part


@dataclass
class TurnSource:
    """A checked input file: the outline of every conversation now, the turns on demand.

    ``turns()`` yields ``(index into outlines, turn)`` in file order, each turn with its
    session ordinal; for a JSONL file it reads the file again, one line at a time."""

    outlines: list[ConversationOutline]
    turns: Callable[[], Iterator[tuple[int, Turn]]]

    def only(self, names: Collection[str], path: Path) -> TurnSource:
        """The conversations named, in file order, with their turns indexed into the new
        outlines; a :class:`FormatError` names those ``path`` does not hold."""
        wanted = set(names)
        held = [outline.name for outline in self.outlines]
        missing = sorted(wanted - set(held))
        if missing:
            raise FormatError(f"no conversation named {', '.join(map(repr, missing))} "
                              f"(the file holds {_short(held, 120)})", path=path)
        kept = [index for index, name in enumerate(held) if name in wanted]
        new_index = {old: new for new, old in enumerate(kept)}

        def turns() -> Iterator[tuple[int, Turn]]:
            for index, turn in self.turns():
                if index in new_index:
                    yield new_index[index], turn

        return TurnSource([self.outlines[index] for index in kept], turns)


def source_of(conversations: Sequence[ParsedConversation]) -> TurnSource:
    """The source of conversations already in memory."""

    def turns() -> Iterator[tuple[int, Turn]]:
        for index, conversation in enumerate(conversations):
            for turn in conversation.turns:
                yield index, turn

    return TurnSource([conversation.outline() for conversation in conversations], turns)


def collect(source: TurnSource) -> list[ParsedConversation]:
    """All the conversations of a source, in memory."""
    conversations = [
        ParsedConversation(name=o.name, sessions=o.sessions, turns=[], participants=o.participants)
        for o in source.outlines
    ]
    for index, turn in source.turns():
        conversations[index].turns.append(turn)
    return conversations


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
    """Read a JSONL file of turns (format in the module docstring), all in memory."""
    return collect(scan_jsonl(path, tz, default_name))


def scan_jsonl(path: Path, tz: tzinfo, default_name: str) -> TurnSource:
    """Check a JSONL file line by line and return its source (the turns are read again).

    The first pass keeps, per conversation, its sessions and speakers, the first problem of
    each kind and a 64-bit hash of each turn id: no turn text, so memory does not grow with
    the file (but for 8 bytes a turn id). It raises the error reading the whole file raised
    before: a byte that is not UTF-8 anywhere, else the first bad line, else an empty file,
    else the first conversation's problem (mixed labels, a repeated id, a session out of
    order, in that order)."""
    path = Path(path)
    stamp = _file_stamp(path)
    scans: dict[str, _ConversationScan] = {}
    first_error: FormatError | None = None
    for number, raw in _nonblank_lines(path):
        if first_error is not None:
            continue  # the rest is only decoded: a byte that is not UTF-8 is reported first
        try:
            line = _parse_jsonl_line(raw, number, path, tz, default_name)
        except FormatError as exc:
            first_error = exc
            continue
        if line.conversation not in scans:
            scans[line.conversation] = _ConversationScan(line)
        scans[line.conversation].add(line, path)
    if first_error is not None:
        raise first_error
    if not scans:
        raise FormatError("empty file: no turns", path=path)
    for scan in scans.values():
        scan.check(path, tz, default_name)
    outlines = [scan.outline() for scan in scans.values()]
    return TurnSource(outlines, lambda: _jsonl_turns(path, tz, default_name, outlines, stamp))


def _file_stamp(path: Path) -> tuple[int, int]:
    status = path.stat()
    return status.st_size, status.st_mtime_ns


def _jsonl_turns(path: Path, tz: tzinfo, default_name: str,
                 outlines: list[ConversationOutline],
                 stamp: tuple[int, int]) -> Iterator[tuple[int, Turn]]:
    """The second pass: every turn again, in file order, with its session ordinal."""
    changed = FormatError("the file changed after it was checked; run the command again",
                          path=path)
    if _file_stamp(path) != stamp:
        raise changed
    index_of = {outline.name: index for index, outline in enumerate(outlines)}
    ordinals = [_SessionOrdinals() for _ in outlines]
    for number, raw in _nonblank_lines(path):
        line = _parse_jsonl_line(raw, number, path, tz, default_name)
        index = index_of.get(line.conversation)
        if index is None:
            raise changed
        line.turn.session_ordinal = ordinals[index].of(line)
        yield index, line.turn


class _SessionOrdinals:
    """A conversation's session ordinals, turn after turn: labels numbered by first
    appearance, else a new session when consecutive turns are more than
    :data:`SESSION_GAP_SECONDS` apart (either way). Both passes replay it alike."""

    def __init__(self) -> None:
        self.labels: dict[str, int] = {}
        self.current = 0
        self.last: int | None = None

    def of(self, line: _Line) -> int:
        if line.session is not None:
            return self.labels.setdefault(line.session, len(self.labels) + 1)
        timestamp = line.turn.timestamp
        if self.last is None or abs(timestamp - self.last) > SESSION_GAP_SECONDS:
            self.current += 1
        self.last = timestamp
        return self.current


class _ConversationScan:
    """What the first pass keeps of one conversation (see :func:`scan_jsonl`)."""

    def __init__(self, first: _Line) -> None:
        self.name = first.conversation
        self.labelled = first.session is not None
        self.ordinals = _SessionOrdinals()
        self.sessions: list[Session] = []
        self.speakers: dict[str, None] = {}
        self.turn_count = 0
        self.mixed_at: int | None = None  # the first line that breaks the labelling
        self.late_session: FormatError | None = None  # the first session out of order
        self.id_hashes = array("q")

    def add(self, line: _Line, path: Path) -> None:
        self.turn_count += 1
        self.speakers.setdefault(line.turn.speaker)
        if line.turn.external_id is not None:
            self.id_hashes.append(hash(line.turn.external_id))
        if self.mixed_at is not None:
            return
        if (line.session is not None) != self.labelled:
            self.mixed_at = line.number
            return
        ordinal = self.ordinals.of(line)
        if ordinal > len(self.sessions):  # first turn of a new session
            if self.late_session is None:
                self.late_session = _late_session(self.sessions, line, self.name, path)
            self.sessions.append(Session(ordinal=ordinal, start=line.turn.timestamp))

    def check(self, path: Path, tz: tzinfo, default_name: str) -> None:
        if self.mixed_at is not None:
            raise FormatError(
                f"conversation {_short(self.name)} mixes turns with and without 'session'",
                path=path,
                line=self.mixed_at,
            )
        repeated = _repeated(self.id_hashes)
        if repeated:  # confirmed (and placed) by reading the file again
            lines = _conversation_lines(path, tz, default_name, self.name)
            _check_unique_jsonl_ids(lines, self.name, path, only_hashes=repeated)
        if self.late_session is not None:
            raise self.late_session

    def outline(self) -> ConversationOutline:
        return ConversationOutline(name=self.name, sessions=self.sessions,
                                   participants=list(self.speakers),
                                   turn_count=self.turn_count)


def _conversation_lines(path: Path, tz: tzinfo, default_name: str,
                        name: str) -> Iterator[_Line]:
    for number, raw in _nonblank_lines(path):
        line = _parse_jsonl_line(raw, number, path, tz, default_name)
        if line.conversation == name:
            yield line


def _repeated(hashes: array) -> set[int]:
    """The values that occur more than once (sorted with numpy: 8 bytes a value)."""
    if len(hashes) < 2:
        return set()
    import numpy as np

    values = np.sort(np.frombuffer(hashes, dtype=np.int64))
    return {int(value) for value in values[1:][values[1:] == values[:-1]]}


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


def _check_unique_jsonl_ids(lines: Iterable[_Line], name: str, path: Path, *,
                            only_hashes: set[int]) -> None:
    """Raise on the first id repeated in ``lines``; only ids of these hashes are followed
    (the others occur once), so the memory is that of the repeats."""
    first_line: dict[str, int] = {}
    for line in lines:
        ext = line.turn.external_id
        if ext is None or hash(ext) not in only_hashes:
            continue
        if ext in first_line:
            raise FormatError(
                f"conversation {_short(name)}: duplicate id {_short(ext)} "
                f"(first on line {first_line[ext]})",
                path=path,
                line=line.number,
            )
        first_line[ext] = line.number


def _late_session(sessions: list[Session], line: _Line, name: str,
                  path: Path) -> FormatError | None:
    """The error of a session that starts before the one before it, if this one does."""
    if sessions and line.turn.timestamp < sessions[-1].start:
        return FormatError(
            f"conversation {_short(name)}: session {len(sessions) + 1} starts at "
            f"{_iso(line.turn.timestamp)}, before session {len(sessions)} "
            f"({_iso(sessions[-1].start)}); sessions must start in ascending order",
            path=path,
            line=line.number,
        )
    return None


def _iso(ts: int) -> str:
    return datetime.fromtimestamp(ts, tz=UTC).isoformat()
