"""Read a top-level JSON array one element at a time, in bounded memory.

Chat exports are one big array (Claude's ``conversations.json`` can exceed 100 MB, ChatGPT's
too): :func:`iter_json_array` reads the file in chunks and decodes each element with
``json.JSONDecoder.raw_decode`` as soon as it is complete, keeping only the unread rest of the
buffer. An element larger than the buffer grows it (doubling reads, so the work stays linear);
memory is bounded by the largest single element, not by the file.

A file that is not an array, is not valid JSON, or ends inside an element raises
:class:`~ramem_local.ingest.formats.FormatError` with the element's index and the line and
column where the problem is.
"""

from __future__ import annotations

import io
import json
import re
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

from ..errors import FormatError
from .formats import _short

DEFAULT_BUFFER = 1 << 20  # characters per read
_WHITESPACE = " \t\r\n"
_DECODER = json.JSONDecoder()


class _Reader:
    """A text buffer over a file that remembers the line and column of its first character."""

    def __init__(self, handle: IO[str], path: Path, chunk: int):
        self.handle = handle
        self.path = path
        self.chunk = max(1, chunk)
        self.buffer = ""
        self.pos = 0
        self.eof = False
        self.line = 1  # line of buffer[0]
        self.column = 1  # column of buffer[0]

    def fill(self, at_least: int = 0) -> bool:
        """Read one more chunk (or more, to double a long element); False at end of file."""
        if self.eof:
            return False
        data = self.handle.read(max(self.chunk, at_least))
        if not data:
            self.eof = True
            return False
        self.buffer += data
        return True

    def skip_whitespace(self) -> str | None:
        """The next non-blank character (not consumed), or None at end of file."""
        while True:
            while self.pos < len(self.buffer) and self.buffer[self.pos] in _WHITESPACE:
                self.pos += 1
            if self.pos < len(self.buffer):
                return self.buffer[self.pos]
            self.compact()
            if not self.fill():
                return None

    def compact(self) -> None:
        """Drop what was consumed, keeping line/column of the buffer's start."""
        if self.pos == 0:
            return
        consumed = self.buffer[: self.pos]
        newlines = consumed.count("\n")
        if newlines:
            self.line += newlines
            self.column = len(consumed) - consumed.rfind("\n")
        else:
            self.column += len(consumed)
        self.buffer = self.buffer[self.pos :]
        self.pos = 0

    def where(self, offset: int) -> tuple[int, int]:
        """Line and column of ``buffer[offset]``."""
        before = self.buffer[:offset]
        newlines = before.count("\n")
        if newlines:
            return self.line + newlines, offset - before.rfind("\n")
        return self.line, self.column + offset


def iter_json_array(
    path: Path, *, buffer_size: int = DEFAULT_BUFFER, what: str = "element",
    member: str | None = None,
) -> Iterator[tuple[int, Any]]:
    """Yield ``(index, value)`` for each element of the JSON array in ``path``, or in the file
    ``member`` of the zip archive ``path`` (read straight from the archive, unpacked as it
    goes). Errors name the file as ``export.zip!conversations.json``."""
    path = Path(path)
    shown = path if member is None else path.with_name(f"{path.name}!{member.split('/')[-1]}")
    try:
        if member is None:
            with path.open("r", encoding="utf-8-sig") as handle:
                yield from _elements(_Reader(handle, shown, buffer_size), what)
            return
        with zipfile.ZipFile(path) as archive, archive.open(member) as raw, \
                io.TextIOWrapper(raw, encoding="utf-8-sig") as handle:
            yield from _elements(_Reader(handle, shown, buffer_size), what)
    except UnicodeDecodeError as exc:
        raise FormatError(f"not UTF-8 text ({exc.reason})", path=shown) from exc
    except (zipfile.BadZipFile, EOFError) as exc:
        raise FormatError(f"damaged zip archive ({exc})", path=shown) from exc


def zip_members(path: Path, pattern: re.Pattern[str]) -> list[str]:
    """The files of the zip archive ``path`` whose base name matches ``pattern``, sorted."""
    try:
        with zipfile.ZipFile(path) as archive:
            names = archive.namelist()
    except zipfile.BadZipFile as exc:
        raise FormatError(f"not a zip archive ({exc})", path=path) from exc
    return sorted(n for n in names if pattern.match(n.split("/")[-1]))


def _elements(reader: _Reader, what: str) -> Iterator[tuple[int, Any]]:
    path = reader.path
    first = reader.skip_whitespace()
    if first is None:
        raise FormatError("empty file", path=path)
    if first != "[":
        raise FormatError(
            f"expected a JSON array of conversations, the file starts with {_short(first)}",
            path=path,
        )
    reader.pos += 1
    index = 0
    while True:
        char = reader.skip_whitespace()
        if char is None:
            raise FormatError(f"truncated file: it ends after {what} {index - 1} "
                              "without the closing ']'", path=path)
        if char == "]" and index == 0:
            reader.pos += 1
            break
        reader.compact()
        value, end = _decode(reader, index, what)
        yield index, value
        index += 1
        reader.pos = end
        char = reader.skip_whitespace()
        if char == ",":
            reader.pos += 1
            continue
        if char == "]":
            reader.pos += 1
            break
        if char is None:
            raise FormatError(f"truncated file: it ends after {what} {index - 1} "
                              "without the closing ']'", path=path)
        line, column = reader.where(reader.pos)
        raise FormatError(f"invalid JSON after {what} {index - 1}: expected ',' or ']', "
                          f"found {_short(char)}", path=path, line=line, column=column)
    if reader.skip_whitespace() is not None:
        line, column = reader.where(reader.pos)
        raise FormatError("invalid JSON: extra data after the closing ']'", path=path,
                          line=line, column=column)


def _decode(reader: _Reader, index: int, what: str) -> tuple[Any, int]:
    """Decode the element at the buffer's start, reading more until it is complete.

    A success that ends near the end of the buffer is not trusted before end of file: a
    number cut in two decodes too ("12" of "123", "1" of "1e5" — what is left of a cut number
    is at most a few characters), so one more chunk is read first.
    """
    while True:
        try:
            value, end = _DECODER.raw_decode(reader.buffer, 0)
        except json.JSONDecodeError as exc:
            # Near the buffer's end (a literal or number cut in two: "tr", "1e") or inside an
            # unterminated string the element may just be incomplete; elsewhere it is invalid,
            # and is reported without reading the rest of the file.
            incomplete = exc.pos >= len(reader.buffer) - 8 or exc.msg.startswith("Unterminated")
            if incomplete and reader.fill(at_least=len(reader.buffer)):
                continue
            if exc.pos >= len(reader.buffer.rstrip()) or exc.msg.startswith("Unterminated"):
                raise FormatError(f"truncated file: it ends inside {what} {index}",
                                  path=reader.path) from None
            line, column = reader.where(exc.pos)
            raise FormatError(f"invalid JSON in {what} {index}: {exc.msg}", path=reader.path,
                              line=line, column=column) from None
        except (RecursionError, ValueError) as exc:  # nesting too deep, a number too long
            reason = "nested too deeply" if isinstance(exc, RecursionError) else (
                "a number with too many digits" if "digits" in str(exc) else str(exc))
            raise FormatError(f"invalid JSON in {what} {index}: {reason}",
                              path=reader.path) from None
        if end < len(reader.buffer) - 8 or not reader.fill(at_least=len(reader.buffer)):
            return value, end
