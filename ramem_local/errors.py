"""One family for every failure a user can cause (``RamemError``) — everything else is a bug.

The CLI prints a ``RamemError`` as one ``error:`` line (exit status 1) and the MCP server
returns it as a tool error; any other exception is reported as a bug in ramem (exit status 70,
the traceback with ``ramem --debug``). So raise a subclass of ``RamemError`` for anything the
user's input, files, bank, models or settings can cause, and never for a broken invariant.

* :class:`InputError` — an argument, a date, a question, an input file (``FormatError``).
  It is also a ``ValueError``, so ``except ValueError`` in callers of the API keeps working.
* :class:`ConfigError` — a config file or value that cannot be used (an ``InputError``).
* :class:`BankError` — the bank file: missing, foreign, newer schema, read-only, busy
  (``StoreError`` is its historical name and a subclass).
* :class:`ModelError` — a model is missing, unknown, unverifiable or corrupt
  (``EmbedderError`` is a subclass).
* :class:`LLMError` — the local LLM cannot do what was asked (a ``ModelError``).

Messages are one readable line.
"""

from __future__ import annotations

__all__ = ["BankError", "ConfigError", "InputError", "LLMError", "ModelError", "RamemError"]


class RamemError(Exception):
    """Something the user can cause and fix; ``str()`` is one readable line."""


class InputError(RamemError, ValueError):
    """Bad input: an argument, a date, a question, an input file."""


class ConfigError(InputError):
    """A config file or value that cannot be used; one readable line."""


class BankError(RamemError, RuntimeError):
    """A problem with the bank file (missing, not a bank, newer schema, read-only, busy)."""


class ModelError(RamemError, RuntimeError):
    """A model is missing, unknown, unverifiable or corrupt. Messages are one line, for users."""


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
