"""SQLite's refusals become the user's errors inside the store (``store/sqlite_errors.py``): a
``BankError`` subclass each, whose message ends with what to do; SQLite's other errors stay
bugs. The faces' side (the same line from the CLI and an MCP tool) is in test_faults.py."""

from __future__ import annotations

import pickle

import apsw
import pytest

from ramem_local import Memory, errors
from ramem_local.store import Store
from ramem_local.store.sqlite_errors import bank_error_from


@pytest.mark.parametrize(("sqlite_error", "bank_error"), [
    (apsw.FullError, errors.BankFullError),
    (apsw.IOError, errors.BankIOError),
    (apsw.CantOpenError, errors.BankIOError),  # its folder is writable: not a read-only bank
    (apsw.BusyError, errors.BankLockedError),
    (apsw.LockedError, errors.BankLockedError),
    (apsw.CorruptError, errors.BankCorruptError),
    (apsw.NotADBError, errors.BankCorruptError),
])
def test_each_refusal_of_sqlite_is_its_bank_error_ending_with_its_advice(tmp_path, sqlite_error,
                                                                         bank_error):
    bank = tmp_path / "bank.db"
    error = bank_error_from(sqlite_error("what SQLite said"), str(bank))
    assert type(error) is bank_error
    assert str(error).startswith(f"the bank {bank} ") or str(error).startswith(
        f"cannot open the bank {bank} ")
    assert "(what SQLite said)" in str(error)
    assert bank_error.advice and str(error).endswith(f": {bank_error.advice}")


@pytest.mark.parametrize("sqlite_error", [apsw.ReadOnlyError, apsw.PermissionsError])
def test_sqlite_refusing_to_write_is_a_read_only_bank_error(tmp_path, sqlite_error):
    bank = tmp_path / "bank.db"
    error = bank_error_from(sqlite_error("attempt to write a readonly database"), str(bank))
    assert type(error) is errors.BankReadOnlyError
    assert str(error) == (f"the bank {bank} is read-only (the file system is not writable for "
                          "this user): nothing was written; make it writable and run the same "
                          "command again")


@pytest.mark.parametrize("sqlite_error", [apsw.ConstraintError, apsw.SQLError,
                                          apsw.ConnectionClosedError])
def test_sqlite_errors_that_are_bugs_in_ramem_are_not_translated(tmp_path, sqlite_error):
    assert bank_error_from(sqlite_error("a broken invariant"), str(tmp_path / "bank.db")) is None


def test_a_full_bank_is_a_bank_full_error_and_the_bank_takes_writes_once_there_is_room(
        tmp_path):
    store = Store.open(tmp_path / "bank.db")
    try:
        pages = store.db.execute("PRAGMA page_count").fetchone()[0]
        store.db.execute(f"PRAGMA max_page_count = {pages}")  # SQLITE_FULL past this size
        with pytest.raises(errors.BankFullError, match=r"\(database or disk is full\): what was "):
            with store.atomic():
                store.set_meta("note", "x" * 100_000)
        assert not store.db.in_transaction
        assert store.get_meta("note") is None

        store.db.execute(f"PRAGMA max_page_count = {pages + 100}")
        with store.atomic():
            store.set_meta("note", "x" * 100_000)
        assert store.get_meta("note") == "x" * 100_000
    finally:
        store.close()


def test_a_damaged_bank_is_a_bank_corrupt_error_from_the_method_that_reads_it(tmp_path):
    bank = tmp_path / "bank.db"
    with Memory.open(bank) as memory:
        for number in range(20):
            memory.add(f"Note {number} about the garden and the weather.")
    connection = apsw.Connection(str(bank))
    root = connection.execute(
        "SELECT rootpage FROM sqlite_master WHERE name = 'memories'").fetchone()[0]
    page_size = connection.execute("PRAGMA page_size").fetchone()[0]
    connection.close()
    with bank.open("r+b") as file:  # the memories table's first page, overwritten
        file.seek((root - 1) * page_size)
        file.write(b"\xff" * page_size)

    store = Store.open(bank)
    try:
        with pytest.raises(errors.BankCorruptError) as caught:
            store.list_memories()
    finally:
        store.close()
    assert str(caught.value) == (
        f"the bank {bank} is damaged (database disk image is malformed): "
        f"{errors.BankCorruptError.advice}")
    assert isinstance(caught.value.__cause__, apsw.CorruptError)


def test_a_bank_error_keeps_its_one_line_through_pickling():
    error = errors.BankFullError("the bank b.db could not be written (database or disk is full)")
    copy = pickle.loads(pickle.dumps(error))
    assert type(copy) is errors.BankFullError and str(copy) == str(error)
    plain = pickle.loads(pickle.dumps(errors.BankError("no bank at b.db")))
    assert str(plain) == "no bank at b.db"


def test_the_error_line_of_an_os_error_names_its_reason_and_path():
    assert errors.error_line(FileNotFoundError(2, "no such file", "notes.jsonl")) == (
        "error: no such file: notes.jsonl")
    assert errors.error_line(errors.BankLockedError("the bank b.db is\nlocked")) == (
        f"error: the bank b.db is locked: {errors.BankLockedError.advice}")
