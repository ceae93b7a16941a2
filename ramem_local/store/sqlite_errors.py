"""SQLite's refusals as the user's errors: the one place where an ``apsw`` error becomes a
:class:`~ramem_local.errors.BankError` subclass with what to do.

A full disk, a read-only file, another process holding the lock, a damaged file: SQLite
answers each with an ``apsw`` exception, which is the environment's answer, not a bug in
ramem. The store translates them where its statements run — every public method of
:class:`~ramem_local.store.Store` (:func:`translating_sqlite_errors`), its transactions and its
opening (:func:`sqlite_errors_translated`) — so nothing above the store sees ``apsw``, and the
faces report one line for a ``RamemError``. Any other ``apsw`` error (a constraint, bad SQL, a
closed connection) is a bug in ramem and passes unchanged.
"""

from __future__ import annotations

import functools
import inspect
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, NoReturn, TypeVar

import apsw

from .. import errors
from ..errors import BankError, BankReadOnlyError

_Class = TypeVar("_Class", bound=type)


def _unwritable(file: Path) -> list[str]:
    """What of the bank keeps it from being written: the file, its folder (for the -wal and
    -shm files), as the operating system answers for this process."""
    parts = [("the bank file", file), ("its folder", file.parent)]
    return [name for name, path in parts if path.exists() and not os.access(path, os.W_OK)]


def read_only_error(path: str) -> BankReadOnlyError:
    """The one line for a bank that cannot be written, with what to do."""
    parts = _unwritable(Path(path))
    what = " and ".join(parts) if parts else "the file system"
    verb = "are" if len(parts) > 1 else "is"
    return BankReadOnlyError(
        f"the bank {path} is read-only ({what} {verb} not writable for this user)")


def bank_error_from(exc: apsw.Error, path: str) -> BankError | None:
    """The user's error that SQLite's ``exc`` on the bank at ``path`` stands for; None when it
    is no refusal of the environment but a bug in ramem."""
    detail = " ".join(str(exc).split())
    if isinstance(exc, apsw.FullError):
        return errors.BankFullError(f"the bank {path} could not be written ({detail})")
    if isinstance(exc, (apsw.ReadOnlyError, apsw.PermissionsError)):
        return read_only_error(path)
    if isinstance(exc, apsw.CantOpenError):
        if _unwritable(Path(path)):  # a read-only folder: no -wal or -shm file can be made
            return read_only_error(path)
        return errors.BankIOError(f"cannot open the bank {path} ({detail})")
    if isinstance(exc, apsw.IOError):
        return errors.BankIOError(f"the bank {path} could not be read or written ({detail})")
    if isinstance(exc, (apsw.BusyError, apsw.LockedError)):
        return errors.BankLockedError(f"the bank {path} is locked ({detail})")
    if isinstance(exc, (apsw.CorruptError, apsw.NotADBError)):
        return errors.BankCorruptError(f"the bank {path} is damaged ({detail})")
    return None


def raise_as_bank_error(exc: apsw.Error, path: str) -> NoReturn:
    """Raise ``exc`` translated by :func:`bank_error_from`, or ``exc`` itself (a bug)."""
    error = bank_error_from(exc, path)
    if error is None:
        raise exc
    raise error from exc


@contextmanager
def sqlite_errors_translated(path: str) -> Iterator[None]:
    """SQLite's refusals inside the block become ``BankError`` subclasses."""
    try:
        yield
    except apsw.Error as exc:
        raise_as_bank_error(exc, path)


def translating_sqlite_errors(cls: _Class) -> _Class:
    """Wrap every public method of ``cls`` and of its bases (the store's table groups) so that
    SQLite's refusals leave it as ``BankError`` subclasses. A generator method is wrapped as a
    generator, so that what fails while its rows are read is translated too; class methods,
    static methods and properties are left as they are."""
    for name in dir(cls):
        if name.startswith("_"):
            continue
        defined = inspect.getattr_static(cls, name)
        if inspect.isfunction(defined):
            setattr(cls, name, _translating(defined))
    return cls


def _translating(method: Callable[..., Any]) -> Callable[..., Any]:
    if inspect.isgeneratorfunction(method):
        @functools.wraps(method)
        def generator(self: Any, *args: Any, **kwargs: Any) -> Iterator[Any]:
            try:
                yield from method(self, *args, **kwargs)
            except apsw.Error as exc:
                raise_as_bank_error(exc, self.path)
        return generator

    @functools.wraps(method)
    def call(self: Any, *args: Any, **kwargs: Any) -> Any:
        try:
            return method(self, *args, **kwargs)
        except apsw.Error as exc:
            raise_as_bank_error(exc, self.path)
    return call
