"""Markdown journals ⇄ journal turns.

**Reading** (:func:`read_markdown_journal`). Two shapes:

* one file with a ``## YYYY-MM-DD`` heading per day (text after the date, like a weekday, is
  allowed). ``#`` titles and ``###`` or deeper headings are ignored; a ``##`` heading that is
  not a real date is an error, and its entries are skipped up to the next good heading;
* a folder of daily files named ``YYYY-MM-DD.md`` (sub-folders too, as in Obsidian daily
  notes); other ``.md`` files are left alone (the report says how many); headings in a daily
  file are ignored.

A day's entries are its paragraphs (lines up to a blank line) and its list items (``-``, ``*``,
``+`` or ``1.``; a list item goes on over indented lines, blank lines between them included).
An entry may start with a time, ``HH:MM`` or ``HH:MM:SS`` (then a space, or `` - ``/`` — ``/``: ``),
read in the bank's timezone. An entry without a time is stamped **12:00 local time plus one
second per untimed entry before it that day** (12:00:00, 12:00:01, …): the day is right, the
entries keep their order among themselves, and re-importing the same file gives the same
stamps, so it adds nothing. The entry's text is kept as written, less the time and the
surrounding blank space.

Entries are turns of speaker ``me`` in the journal conversation (``journal`` by default — the one
``ramem add`` writes to, so both share one timeline), one session per local day, exactly as
:meth:`~ramem_local.api.Memory.add` makes them. Their identity is speaker, time and text, also
as for ``ramem add``: importing an exported journal into the same bank adds nothing. (Editing
an entry's text, or inserting an untimed entry before others of its day, and importing again
stores the changed entries as new ones; the old ones stay.)

**Writing** (:func:`write_markdown_journal`): the shape read back above — ``## YYYY-MM-DD`` per
local day, each entry a list item ``- HH:MM text`` (``HH:MM:SS`` when the seconds are not 0),
further lines indented by two spaces. Markdown has no speaker: entries by other speakers than
``me`` come back as ``me``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import date, datetime, time, timedelta, tzinfo
from pathlib import Path

from ..errors import FormatError
from ..types import DAY, ParsedConversation, Session, Turn
from .formats import _read_text

ME = "me"
UNTIMED = time(12, 0)  # the time of day of an entry written without one

_DAY_HEADING = re.compile(r"^##(?!#)\s*(?P<rest>.*)$")
_OTHER_HEADING = re.compile(r"^(#|###+)(\s|$)")
_ANY_HEADING = re.compile(r"^#{1,6}(\s|$)")  # not "#gratitude": a tag is text
_DATE = re.compile(r"^(?P<y>\d{4})-(?P<m>\d{2})-(?P<d>\d{2})(?:$|\D)")
_ITEM = re.compile(r"^(?P<marker>[-*+]|\d{1,9}[.)])(?P<space>[ \t]+|$)")
_TIME = re.compile(
    r"^(?P<h>\d{1,2}):(?P<m>\d{2})(?::(?P<s>\d{2}))?(?:[ \t]*[-–—:][ \t]+|[ \t]+|$)"
)
_LEADING_SEPARATOR = re.compile(r"^[-–—:]([ \t]|$)")
_DAILY_NAME = re.compile(r"^\d{4}-\d{2}-\d{2}$")


@dataclass
class MarkdownJournal:
    """What a journal file or folder holds: entries by day, and what could not be read."""

    days: dict[date, list[Turn]] = field(default_factory=dict)
    untimed: dict[date, int] = field(default_factory=dict)  # untimed entries seen per day
    problems: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    files: int = 0

    @property
    def entries(self) -> int:
        return sum(len(turns) for turns in self.days.values())

    def conversations(self, name: str, tz: tzinfo) -> list[ParsedConversation]:
        """One conversation per day (so each day is written whole), in date order."""
        result = []
        for day in sorted(self.days):
            turns = sorted(self.days[day], key=lambda t: t.timestamp)
            start = _day_start(day, tz)
            for turn in turns:
                turn.session_ordinal = start // DAY
            result.append(ParsedConversation(
                name=name, sessions=[Session(ordinal=start // DAY, start=start)],
                turns=turns, participants=[ME]))
        return result


@dataclass
class _Block:
    line: int  # where the entry starts (1-based)
    lines: list[str]
    item_indent: int | None = None  # list item: the column its text starts at


def read_markdown_journal(path: Path, tz: tzinfo) -> MarkdownJournal:
    """Read a journal file or a folder of daily files (shapes in the module docstring)."""
    path = Path(path)
    journal = MarkdownJournal()
    if path.is_dir():
        _read_folder(path, tz, journal)
    else:
        journal.files = 1
        _read_file(path, tz, journal, day=None)
    return journal


def _read_folder(folder: Path, tz: tzinfo, journal: MarkdownJournal) -> None:
    daily: list[Path] = []
    others = 0
    for file in sorted(folder.rglob("*.md")):
        if file.is_file() and _DAILY_NAME.match(file.stem):
            daily.append(file)
        elif file.is_file():
            others += 1
    if not daily:
        raise FormatError("no daily files named YYYY-MM-DD.md in this folder", path=folder)
    if others:
        journal.notes.append(f"left alone {others} .md file(s) not named YYYY-MM-DD.md")
    for file in sorted(daily, key=lambda f: f.stem):
        journal.files += 1
        try:
            day = date.fromisoformat(file.stem)
            if not 1900 <= day.year < 2200:
                raise ValueError("year out of range")
        except ValueError:
            journal.problems.append(str(FormatError(f"no such date {file.stem!r}", path=file)))
            continue
        try:
            _read_file(file, tz, journal, day=day)
        except FormatError as exc:  # e.g. not UTF-8: this day is skipped, the others read
            journal.problems.append(str(exc))


def _read_file(path: Path, tz: tzinfo, journal: MarkdownJournal, day: date | None) -> None:
    """``day`` is the date of a daily file; None reads ``## YYYY-MM-DD`` headings."""
    text = _read_text(path)
    daily = day is not None
    current: date | None = day
    bad_heading = False  # entries under a bad heading are skipped (the heading was reported)
    before_first = 0  # entries before the first heading of a journal file
    block: _Block | None = None
    blank_after_item = False

    def flush() -> None:
        nonlocal block, before_first
        if block is not None:
            if current is not None:
                _add_entry(block, current, path, tz, journal)
            elif not bad_heading:
                before_first += 1
        block = None

    for number, raw in enumerate(text.split("\n"), start=1):
        line = raw.rstrip("\r")
        if not line.strip():
            if block is not None and block.item_indent is not None:
                blank_after_item = True
                block.lines.append("")
            else:
                flush()
            continue
        indent = len(line) - len(line.lstrip(" \t"))
        if block is not None and block.item_indent is not None and indent >= 2:
            block.lines.append(_dedent(line, block.item_indent))  # the item goes on
            blank_after_item = False
            continue
        heading = None if daily else _DAY_HEADING.match(line)
        if heading is not None:
            flush()
            current, bad_heading = _heading_date(heading["rest"], path, number, journal)
            continue
        if _OTHER_HEADING.match(line) or (daily and _ANY_HEADING.match(line)):
            flush()
            continue
        item = _ITEM.match(line)
        if item is not None:
            flush()
            block = _Block(number, [line[item.end():]], item_indent=item.end())
        elif block is not None and not blank_after_item:
            block.lines.append(line)  # a paragraph (or an item's lazy line) goes on
        else:
            flush()
            block = _Block(number, [line])
        blank_after_item = False
    flush()
    if before_first:
        journal.problems.append(str(FormatError(
            f"{before_first} entr{'y' if before_first == 1 else 'ies'} before the first "
            "'## YYYY-MM-DD' heading (no day to put them on)", path=path)))


def _heading_date(rest: str, path: Path, number: int,
                  journal: MarkdownJournal) -> tuple[date | None, bool]:
    match = _DATE.match(rest.strip())
    problem = None
    if match is None:
        problem = f"heading '## {rest.strip()}' is not a date: expected '## YYYY-MM-DD'"
    else:
        try:
            day = date(int(match["y"]), int(match["m"]), int(match["d"]))
            if not 1900 <= day.year < 2200:
                raise ValueError(f"year {day.year} is out of range (1900..2199)")
            return day, False
        except ValueError as exc:
            problem = f"heading '## {rest.strip()}': {exc}"
    journal.problems.append(
        str(FormatError(problem + "; its entries are skipped", path=path, line=number)))
    return None, True


def _dedent(line: str, width: int) -> str:
    spaces = len(line) - len(line.lstrip(" "))
    return line[min(spaces, width):]


def _add_entry(block: _Block, day: date, path: Path, tz: tzinfo,
               journal: MarkdownJournal) -> None:
    text = "\n".join(block.lines).strip()
    match = _TIME.match(text)
    if match is not None:
        hour, minute, second = int(match["h"]), int(match["m"]), int(match["s"] or 0)
        if hour > 23 or minute > 59 or second > 59:
            journal.problems.append(str(FormatError(
                f"no such time {match.group(0).strip()!r}; the entry is skipped",
                path=path, line=block.line)))
            return
        text = text[match.end():].strip()
        if not text:
            journal.problems.append(str(FormatError(
                "an entry with a time but no text is skipped", path=path, line=block.line)))
            return
        stamp = datetime.combine(day, time(hour, minute, second), tzinfo=tz)
    else:
        untimed = journal.untimed.get(day, 0)
        journal.untimed[day] = untimed + 1
        stamp = datetime.combine(day, UNTIMED, tzinfo=tz) + timedelta(seconds=untimed)
    turn = Turn(speaker=ME, text=text, timestamp=int(stamp.timestamp()), session_ordinal=0)
    journal.days.setdefault(day, []).append(turn)


def _day_start(day: date, tz: tzinfo) -> int:
    return int(datetime.combine(day, time(0, 0), tzinfo=tz).timestamp())


def write_markdown_journal(turns: Iterable[Turn], path: Path, tz: tzinfo,
                           title: str = "journal") -> int:
    """Write turns as the Markdown journal :func:`read_markdown_journal` reads back; the file
    appears whole or not at all. Returns the count."""
    count = 0
    current: date | None = None
    partial = path.with_name(path.name + ".part")
    with partial.open("w", encoding="utf-8") as handle:
        handle.write(f"# {title}\n")
        for turn in sorted(turns, key=lambda t: t.timestamp):
            local = datetime.fromtimestamp(turn.timestamp, tz=tz)
            if local.date() != current:
                current = local.date()
                handle.write(f"\n## {current.isoformat()}\n\n")
            stamp = local.strftime("%H:%M" if local.second == 0 else "%H:%M:%S")
            lines = turn.text.strip().split("\n")
            body = "\n".join([lines[0]] + [f"  {line}" if line.strip() else ""
                                           for line in lines[1:]])
            # A text that itself starts like a separator ("- x", ": x") gets an explicit one,
            # which the reader takes off, so the text comes back whole.
            separator = " — " if _LEADING_SEPARATOR.match(body) else " "
            handle.write(f"- {stamp}{separator}{body}\n")
            count += 1
    partial.replace(path)
    return count

