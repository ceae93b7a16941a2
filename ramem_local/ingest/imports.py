"""``ramem import KIND PATH``: chat exports and Markdown journals into a bank.

The rules every kind follows:

* **streamed** — a chat export is read one conversation at a time (``streamjson``), in bounded
  memory, however big the file; the export's zip archive is read as it is, without unpacking;
* **checked before anything is written** — a first pass reads the whole input, reports every
  record that cannot be read (one line each, with its file and position) and counts the turns
  for the progress bar; a file that is not JSON, not an array, truncated or empty stops the
  import there, with the bank unchanged. A file in which no record at all can be read is the
  wrong kind of file: one error line, nothing written;
* **written whole** — the second pass writes each conversation (chat) or day (journal) in one
  transaction, embedding it right after (outside the transaction, so the bank's write lock is
  not held through a model call): a crash leaves whole conversations, and the same command
  run again carries on;
* **idempotent** — turns are keyed by message id (chats) or by speaker, time and text
  (journal, as ``ramem add``): importing again adds nothing; a newer export adds what is new.

Records are: a conversation of a chat export (a message that cannot be read is one record too:
it is skipped and the rest of its conversation kept); a ``##`` heading, a daily file or an entry
of a Markdown journal. See ``chats.py`` and ``markdown.py`` for what each kind reads.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import tzinfo
from pathlib import Path
from typing import Any

from ..errors import FormatError, InputError, RecordError
from ..protocols import Embedder
from ..store import Store
from ..types import JOURNAL
from .chats import ChatRecord, Converter, chatgpt_record, claude_record
from .markdown import read_markdown_journal
from .pipeline import embed_missing, ingest_conversations
from .reports import ImportReport, IngestReport
from .streamjson import DEFAULT_BUFFER, iter_json_array, zip_members

KINDS = ("chatgpt", "claude", "markdown")
_CONVERTERS: dict[str, Converter] = {"chatgpt": chatgpt_record, "claude": claude_record}
_SPLIT_NAME = re.compile(r"^conversations(-\d+)?\.json$")
_HINTS = {
    "chatgpt": ("chat_messages", "it looks like a Claude export: use `ramem import claude`"),
    "claude": ("mapping", "it looks like a ChatGPT export: use `ramem import chatgpt`"),
}


OnError = Callable[[str], None]


def run_import(
    store: Store,
    kind: str,
    path: Path,
    *,
    embedder: Embedder | None,
    tz: tzinfo,
    country: str | None = None,
    conversation: str = JOURNAL,
    event_times: bool = True,
    buffer_size: int = DEFAULT_BUFFER,
    on_counted: Callable[[int], None] | None = None,
    progress: Callable[[int], None] | None = None,
    on_error: OnError | None = None,
) -> ImportReport:
    """Import ``path`` of ``kind`` (one of :data:`KINDS`); see the module docstring."""
    started = time.perf_counter()
    path = Path(path)
    report = ImportReport(kind=kind)

    def problem(line: str) -> None:
        report.skipped.append(line)
        if on_error is not None:
            on_error(line)

    writer = _Writer(store, embedder, tz, country, event_times, report, progress)
    if kind == "markdown":
        _import_markdown(path, tz, conversation, writer, report, problem, on_counted)
    elif kind in _CONVERTERS:
        _import_chats(kind, path, tz, buffer_size, writer, report, problem, on_counted)
    else:
        raise InputError(f"unknown import kind {kind!r}: expected one of {', '.join(KINDS)}")
    report.seconds = time.perf_counter() - started
    return report


@dataclass
class _Writer:
    store: Store
    embedder: Embedder | None
    tz: tzinfo
    country: str | None
    event_times: bool
    report: ImportReport
    progress: Callable[[int], None] | None

    def write(self, parsed: Any, *, kind: str, source: str | None) -> None:
        """One conversation in one transaction, then its vectors."""
        with self.store.atomic():
            done: IngestReport = ingest_conversations(
                self.store, [parsed], embedder=None, tz=self.tz, country=self.country,
                kind=kind, source=source, event_times=self.event_times)
        self.report.turns_new += done.turns_new
        self.report.memories_new += done.memories_new
        if self.embedder is not None:
            self.report.vectors_new += embed_missing(self.store, self.embedder)
        if self.progress is not None:
            self.progress(len(parsed.turns))


# ---------------------------------------------------------------------------------------------
# chat exports
# ---------------------------------------------------------------------------------------------


def chat_files(path: Path) -> list[tuple[Path, str | None]]:
    """``(file, zip member or None)`` of the conversations file(s): ``path`` itself, those of
    an unpacked export folder, or those inside the export's zip archive."""
    files: list[tuple[Path, str | None]]
    if path.is_dir():
        files = [(f, None) for f in sorted(path.iterdir())
                 if f.is_file() and _SPLIT_NAME.match(f.name)]
        where = "in this folder"
    elif path.suffix.lower() == ".zip":
        files = [(path, member) for member in zip_members(path, _SPLIT_NAME)]
        where = "in this zip archive"
    else:
        return [(path, None)]
    if not files:
        raise FormatError(f"no conversations.json or conversations-NNN.json {where}",
                          path=path)
    return files


def _records(kind: str, files: list[tuple[Path, str | None]], tz: tzinfo,
             buffer_size: int) -> Iterator[tuple[str, Any, ChatRecord | RecordError]]:
    """(position, raw object, record or its error) for every conversation of every file."""
    convert = _CONVERTERS[kind]
    for file, member in files:
        name = file.name if member is None else f"{file.name}!{member.split('/')[-1]}"
        for index, obj in iter_json_array(file, buffer_size=buffer_size, what="conversation",
                                          member=member):
            position = f"{name}: conversation {index}"
            try:
                yield position, obj, convert(obj, tz)
            except RecordError as exc:
                yield position, obj, exc


def _import_chats(kind: str, path: Path, tz: tzinfo, buffer_size: int, writer: _Writer,
                  report: ImportReport, problem: OnError,
                  on_counted: Callable[[int], None] | None) -> None:
    files = chat_files(path)
    report.files = len(files)
    # pass 1: read everything, report what cannot be read, count; nothing is written
    total = readable = 0
    first_error: tuple[str, Any, RecordError] | None = None
    errors: list[str] = []
    for position, obj, record in _records(kind, files, tz, buffer_size):
        if isinstance(record, RecordError):
            first_error = first_error or (position, obj, record)
            errors.append(f"{position}: {record}")
            continue
        readable += 1
        errors.extend(f"{position} {record.label}: {line}" for line in record.problems)
        if record.conversation is not None:
            total += len(record.conversation.turns)
    if readable == 0 and first_error is not None:
        position, obj, error = first_error
        key, hint = _HINTS[kind]
        why = hint if isinstance(obj, dict) and key in obj else f"is it a {kind} export?"
        raise FormatError(f"{position}: {error} — no conversation could be read ({why})")
    for line in errors:
        problem(line)
    if on_counted is not None:
        on_counted(total)
    # pass 2: write each readable conversation whole
    for _position, _obj, record in _records(kind, files, tz, buffer_size):
        if isinstance(record, RecordError):
            continue
        report.noise += record.noise
        if record.conversation is None:
            report.empty += 1
            continue
        parsed = record.conversation
        known = writer.store.conversation_name_by_source(record.source)
        if known is not None:
            parsed.name = known  # renamed since the first import: keep the first name
        report.conversations += 1
        report.entries += len(parsed.turns)
        writer.write(parsed, kind="chat", source=record.source)
    if report.empty:
        report.notes.append(f"{report.empty} conversation(s) without a visible message")


# ---------------------------------------------------------------------------------------------
# Markdown journals
# ---------------------------------------------------------------------------------------------


def _import_markdown(path: Path, tz: tzinfo, name: str, writer: _Writer,
                     report: ImportReport, problem: OnError,
                     on_counted: Callable[[int], None] | None) -> None:
    journal = read_markdown_journal(path, tz)
    report.files = journal.files
    report.notes.extend(journal.notes)
    if not journal.entries:
        first = f": {journal.problems[0]}" if journal.problems else ""
        raise FormatError("no journal entries found (expected '## YYYY-MM-DD' headings with "
                          f"paragraphs or list items, or daily YYYY-MM-DD.md files){first}",
                          path=path)
    for line in journal.problems:
        problem(line)
    if on_counted is not None:
        on_counted(journal.entries)
    for day in journal.conversations(name, tz):
        report.conversations += 1
        report.entries += len(day.turns)
        writer.write(day, kind=JOURNAL, source=None)
