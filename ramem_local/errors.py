"""One family for every failure a user can cause (``RamemError``) — everything else is a bug.

The CLI prints a ``RamemError`` (or an ``OSError``: the machine refusing a path) as the line
:func:`error_line` makes, exit status 1, and the MCP server returns the same line as a tool
error; any other exception is reported as a bug in ramem (exit status 70, the traceback with
``ramem --debug``). So raise a subclass of ``RamemError`` for anything the user's input, files,
bank, models or settings can cause, and never for a broken invariant.

* :class:`InputError` — an argument, a date, a question, an input file (:class:`FormatError`).
  It is also a ``ValueError``, so ``except ValueError`` in callers of the API keeps working.
* :class:`ConfigError` — a config file or value that cannot be used (an ``InputError``).
* :class:`BankError` — the bank file: missing, foreign, newer schema (``StoreError`` is its
  historical name). What SQLite refuses is one of its subclasses, each with its ``advice``:
  :class:`BankFullError`, :class:`BankIOError`, :class:`BankReadOnlyError`,
  :class:`BankLockedError`, :class:`BankCorruptError` (the store translates SQLite's errors).
* :class:`ModelError` — a model is missing, unknown, unverifiable or corrupt
  (:class:`EmbedderError` is a subclass).
* :class:`LLMError` — the local LLM cannot do what was asked (a ``ModelError``).

Two more live here but never reach a user: :class:`RecordError` (one chat of an export that
cannot be read: reported as a ``FormatError`` with its position) and :class:`EntryRejected`
(an LLM's entry that cannot become a memory: counted).

Messages are one readable line.
"""

from __future__ import annotations

from pathlib import Path


class RamemError(Exception):
    """Something the user can cause and fix; ``str()`` is one readable line."""


# What the faces (CLI, MCP server) report as one line: the RamemError family, and the operating
# system refusing a path or running out of room (the machine's answer, not a bug in ramem).
USER_ERRORS: tuple[type[Exception], ...] = (RamemError, OSError)


def one_line(exc: BaseException) -> str:
    """``exc`` as one line of text: an ``OSError`` as ``reason: path``."""
    text = str(exc) or type(exc).__name__
    if isinstance(exc, OSError) and exc.filename and exc.strerror:
        text = f"{exc.strerror}: {exc.filename}"
    return " ".join(text.split())


def error_line(exc: BaseException) -> str:
    """The one line a user error is shown as, the same from the CLI (on stderr) and from an
    MCP tool (its error text): ``error: <message>``."""
    return f"error: {one_line(exc)}"


# ------------------------------------------------------------------------------------- input
class InputError(RamemError, ValueError):
    """Bad input: an argument, a date, a question, an input file."""


class ConfigError(InputError):
    """A config file or value that cannot be used; one readable line."""


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


class RecordError(InputError):
    """One conversation of an export that cannot be read (the import skips it, and reports it
    with its position as a :class:`FormatError` when no conversation could be read)."""


class EntryRejected(ValueError):
    """An entry of an LLM's reply that cannot become a memory (empty, cites nothing known,
    ...): the caller counts and records it. Not a user error: it never reaches a face."""


# -------------------------------------------------------------------------------------- bank
class BankError(RamemError, RuntimeError):
    """A problem with the bank file (missing, not a bank, newer schema, ...).

    A subclass names what SQLite refused and carries ``advice``, what the user should do;
    the message is ``<problem>: <advice>``."""

    advice: str = ""

    def __init__(self, problem: str, advice: str | None = None) -> None:
        self.problem = problem
        if advice is not None:
            self.advice = advice
        super().__init__(f"{problem}: {self.advice}" if self.advice else problem)

    def __reduce__(self) -> tuple[type[BankError], tuple[str, str]]:
        return type(self), (self.problem, self.advice)  # not the message: no advice twice


StoreError = BankError  # its historical name (``ramem_local.store.StoreError``)


class BankFullError(BankError):
    """SQLite could not write: the disk, or the size allowed to the file, is full."""

    advice = ("what was written before is intact; free disk space and run the same command "
              "again to resume")


class BankIOError(BankError):
    """The operating system failed a read or write of the bank (or the bank cannot be opened)."""

    advice = ("is the disk full or failing, or the file larger than allowed? What was written "
              "before is intact; free space (or check the disk) and run the same command again "
              "to resume")


class BankReadOnlyError(BankError):
    """The bank file, its folder or the file system cannot be written by this user."""

    advice = "nothing was written; make it writable and run the same command again"


class BankLockedError(BankError):
    """Another process holds the bank's lock past the busy timeout."""

    advice = "another process is writing to it; try again when it is done"


class BankKeyError(BankError):
    """An encrypted bank without its key, with a key that does not open it, or a key given
    for a bank that is not encrypted. The message never holds the key."""

    advice = ("give the bank's key: --key-file FILE (a file only you can read), RAMEM_KEY, or "
              "at a terminal's prompt")


class BankCorruptError(BankError):
    """SQLite found the bank file damaged."""

    advice = ("run `ramem doctor` to see what is damaged, then restore the bank from a backup "
              "(or `ingest` an earlier `ramem export` into a new bank)")


# ------------------------------------------------------------------------------------ models
class ModelError(RamemError, RuntimeError):
    """A model is missing, unknown, unverifiable or corrupt. Messages are one line, for users."""


class EmbedderError(ModelError):
    """A model folder or graph the embedder cannot use; the message is one readable line."""


class LLMError(ModelError):
    """The local LLM cannot do what was asked (no LLM configured, grammar refused, ...)."""


class UndatedHoliday(ValueError):
    """The calendars have no date for a holiday in a year the text names ("Juneteenth 2019",
    before it was a federal holiday): a cue of its own grounds to that whole year, an anchor to
    nothing.

    An internal signal of the time grounder (``recall/time``), not a user error: it is always
    caught inside that package and never leaves it, which is why it is no ``RamemError``.
    """

    def __init__(self, key: str, year: int) -> None:
        super().__init__(f"no {key} in {year}")
        self.year = year


class HashUnavailable(Exception):
    """The hub reports no checksum for a file being pulled (``runtime/download``): the pull
    uses the registry's pinned one or refuses the file. An internal signal, always caught
    there and never shown as it is."""


class RemoteFileMissing(Exception):
    """The hub answers HTTP 404 for a file being pulled (``runtime/download``): the pull turns
    it into a ``ModelError`` that asks whether the registry entry is stale. An internal
    signal, always caught there."""
