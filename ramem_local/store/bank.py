"""The store: one SQLite file per bank, the only module that speaks SQL.

``Store`` opens the file, applies migrations and owns the connection, the metadata and the
embedder binding; its table groups live in ``episodes.py``, ``memories.py`` and
``extraction.py`` (mixed into ``Store``)."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

import apsw

from ..errors import BankError, BankLockedError, StoreError
from ..types import BankKey, EmbedderFingerprint
from . import encryption
from .base import now, one_row
from .episodes import EpisodeTables, StoredTurn, turn_key
from .extraction import ExtractionLedger
from .forgetting import Forgetting
from .memories import MemoryTables
from .schema import (
    MIGRATIONS,
    SCHEMA_VERSION,
    applied_migrations,
    create_vector_tables,
    migrate,
)
from .sqlite_errors import (
    bank_error_from,
    read_only_error,
    sqlite_errors_translated,
    translating_sqlite_errors,
)

if TYPE_CHECKING:  # numpy loads with the first search, not for `ramem --help`
    from .float_blocks import FloatPlaces
    from .int8_matrix import Int8Matrix

BANK_MARKER = "ramem-bank"
BUSY_TIMEOUT_MS = 10_000
# The page cache of a connection that searches (cache_for_searching), in KiB.
SEARCH_CACHE_KIB = 64 * 1024
# Attempts to take the write lock, each waiting up to BUSY_TIMEOUT_MS.
WRITE_ATTEMPTS = 3
# A new bank file is readable by its owner only; SQLite gives its -wal and -shm files the
# permissions of the bank file.
BANK_FILE_MODE = encryption.BANK_FILE_MODE

__all__ = ["EmbedderFingerprint", "Store", "StoredTurn", "turn_key"]


def _unlock(path: str, key: BankKey, cipher: str | None) -> tuple[apsw.Connection, str]:
    """A connection that reads the encrypted bank, and its cipher: each cipher is tried (a
    wrong key and another cipher look alike, "file is not a database")."""
    for candidate in encryption.cipher_order(cipher):
        db = encryption.connect(path)
        try:
            encryption.apply_key(db, key, candidate)
            db.execute("SELECT count(*) FROM sqlite_master").fetchall()
        except apsw.NotADBError:
            db.close()
            continue
        except BaseException:
            db.close()
            raise
        return db, candidate
    raise encryption.wrong_key_error(path, key)


def _configure(db: apsw.Connection) -> None:
    db.setbusytimeout(BUSY_TIMEOUT_MS)
    # Deleted content is overwritten with zeros, not left in free space.
    db.execute("PRAGMA secure_delete = ON")
    # Sorts and temporary indexes stay in memory: no temporary file holds a bank's text.
    db.execute("PRAGMA temp_store = MEMORY")
    import sqlite_vec  # its Python module imports numpy: not for `ramem --help`

    db.enable_load_extension(True)
    db.load_extension(sqlite_vec.loadable_path())
    db.enable_load_extension(False)
    db.execute("PRAGMA foreign_keys = ON")


@translating_sqlite_errors  # SQLite's refusals leave every public method as BankErrors
class Store(EpisodeTables, MemoryTables, ExtractionLedger, Forgetting):
    """Owns the connection, the schema and every SQL statement of a bank."""

    def __init__(self, db: apsw.Connection, path: str, *, read_only: bool = False,
                 cipher: str | None = None):
        self.db = db
        self.path = path
        self.cipher = cipher  # None: the bank is not encrypted
        self._search_cache = False  # cache_for_searching() has run
        # SQLite opens a file it may not write read-only: reading works, the first write
        # is refused by atomic() with a BankError that says so.
        self.read_only = read_only
        self._int8_matrix: Int8Matrix | None = None  # read by the first search
        self._float_places_cache: FloatPlaces | None = None  # read by the first search

    # ---------------------------------------------------------------- opening
    @classmethod
    def open(cls, path: str | Path, *, create: bool = True, key: BankKey | None = None,
             cipher: str | None = None) -> Store:
        """Open (or create) the bank at ``path``. An encrypted bank needs its ``key`` (each
        cipher ramem offers is tried, ``cipher`` first); a new bank given a key is created
        encrypted with ``cipher`` (default chacha20); a plain bank given a key is refused."""
        path_str = str(path)
        state = encryption.NEW
        if path_str != ":memory:":
            file = Path(path_str)
            if not file.exists() and not create:
                raise StoreError(f"no bank at {file}")
            if file.is_dir():
                raise StoreError(f"{file} is a directory, not a bank file")
            file.parent.mkdir(parents=True, exist_ok=True)
            if not file.exists():
                encryption.create_owner_only(file, exist_ok=True)
            state = encryption.file_state(file)
        elif key is not None:
            raise StoreError("an in-memory bank cannot be encrypted")
        if key is not None:
            encryption.check_passphrase(key)
            if state == encryption.PLAIN:
                raise encryption.key_for_plain_error(path_str, key)
        elif state == encryption.ENCRYPTED:
            raise encryption.missing_key_error(path_str)
        if cipher is not None:
            encryption.check_cipher(cipher)
        try:
            if state == encryption.ENCRYPTED:
                assert key is not None
                db, used_cipher = _unlock(path_str, key, cipher)
            else:
                db = encryption.connect(path_str)
                used_cipher = None
                if key is not None:  # a new bank, encrypted from its first page
                    used_cipher = cipher or encryption.DEFAULT_CIPHER
                    encryption.apply_key(db, key, used_cipher)
            _configure(db)
            existing = {r[0] for r in db.execute("SELECT name FROM sqlite_master")}
        except apsw.NotADBError as exc:
            raise StoreError(f"{path_str} is not a SQLite database (not a ramem bank)") from exc
        except apsw.Error as exc:
            refusal = bank_error_from(exc, path_str)
            raise refusal or StoreError(f"cannot open bank {path_str}: {exc}") from exc
        store = cls(db, path_str, read_only=path_str != ":memory:" and db.readonly("main"),
                    cipher=used_cipher)
        try:
            with sqlite_errors_translated(path_str):
                store._prepare(existing)
        except BankError:
            db.close()
            raise
        return store

    def _prepare(self, existing_tables: set[str]) -> None:
        """Check that the file is a bank, then (when it can be written) bring its schema up to
        date and mark a new one."""
        self._check_is_bank(existing_tables)  # before any write: a foreign file stays untouched
        if self.read_only:
            if self._needs_migration(existing_tables):
                raise read_only_error(self.path)  # its schema must be brought up to date
            return
        if self.path != ":memory:":
            self.db.execute("PRAGMA journal_mode = WAL")
        # The schema and the marker commit together: a process killed while it creates the
        # bank leaves an empty file (a new bank next time), never tables without a marker.
        with self.db:
            migrate(self.db, now())
            if self.get_meta("marker") is None:
                self.set_meta("marker", BANK_MARKER)
                self.set_meta("created_at", str(now()))
                self.set_meta("timezone", "UTC")

    def _check_is_bank(self, existing_tables: set[str]) -> None:
        if not existing_tables:
            return
        if "meta" not in existing_tables or "schema_migrations" not in existing_tables:
            raise StoreError(f"{self.path} is a SQLite database but not a ramem bank")
        marker = self.get_meta("marker")
        if marker != BANK_MARKER and not self._creation_was_interrupted(marker):
            raise StoreError(f"{self.path} is a SQLite database but not a ramem bank")
        known = {m.__name__ for m in MIGRATIONS}
        unknown = applied_migrations(self.db) - known
        if unknown:
            raise StoreError(
                f"{self.path} was written by a newer ramem (schema {sorted(unknown)[-1]}); "
                f"this version knows schema {SCHEMA_VERSION}: upgrade ramem-local"
            )

    def _creation_was_interrupted(self, marker: str | None) -> bool:
        """A bank whose creation was killed between its schema and its marker (versions
        before the two were one transaction): ramem's migrations applied, ``meta`` empty.
        Opening it writes the marker."""
        if marker is not None or one_row(self.db.execute("SELECT count(*) FROM meta"))[0]:
            return False
        applied = applied_migrations(self.db)
        return bool(applied) and applied <= {m.__name__ for m in MIGRATIONS}

    def _needs_migration(self, existing_tables: set[str]) -> bool:
        if "schema_migrations" not in existing_tables:
            return True
        return bool({m.__name__ for m in MIGRATIONS} - applied_migrations(self.db))

    def close(self) -> None:
        self.db.close()

    def cache_for_searching(self) -> None:
        """Let this connection keep up to SEARCH_CACHE_KIB of the bank's pages. A search of a
        5-year journal bank reads ~6,000 pages (the full-text index, the vector blocks'
        overflow chains); SQLite's default 2 MiB cache missed ~1,000 of them per search, each
        a read() and, in an encrypted bank, a decryption: warm search 30.7 → 20.7 ms on a
        plain bank, 37.8 → 23.6 ms on a chacha20 one (results/encryption.txt). Only for a
        connection that searches: an ingest's peak memory must not grow with the bank."""
        if not self._search_cache:
            self.db.execute(f"PRAGMA cache_size = -{SEARCH_CACHE_KIB}")
            self._search_cache = True

    # ------------------------------------------------------------------------ encryption
    def replace_under_key(self, key: BankKey | None, cipher: str) -> None:
        """Rewrite the bank under ``key`` (encrypt a plain bank, or change an encrypted one's
        key or cipher) and close it. A copy is written beside the bank, checked, and renamed
        over it; the old file is then zeroed. A process killed at any moment leaves the old
        bank or the new one whole; another process using the bank makes it refuse first."""
        if key is not None:
            encryption.check_passphrase(key)
        encryption.check_cipher(cipher)
        bank = Path(self.path)
        copy = Path(self.path + encryption.REWRITE_SUFFIX)
        with sqlite_errors_translated(self.path):
            self.require_writable()
            encryption.take_sole_use(self.db, self.path)
            memories = self.memory_count()
            encryption.remove_stale(copy)
            encryption.write_copy(self.db, copy, key, cipher)
            encryption.check_copy(copy, key, cipher, memories)
            old = os.open(bank, os.O_RDWR)  # the old file, still reachable after the rename
            try:
                os.replace(copy, bank)
                encryption.sync_folder(bank.parent)
                encryption.overwrite_with_zeros(old)
                self.db.close()  # releases the lock on the old file, now zeros
            finally:
                os.close(old)

    def left_copy(self) -> str | None:
        """The copy an interrupted ``replace_under_key`` left beside the bank, if any (the
        next run removes it)."""
        if self.path == ":memory:":
            return None
        copy = Path(self.path + encryption.REWRITE_SUFFIX)
        return str(copy) if copy.exists() else None

    def write_plain_copy(self, target: Path) -> None:
        """A clear copy of the bank at ``target``, a new file (mode 0600)."""
        if target.exists():
            raise StoreError(f"{target} exists", "name a new file; nothing was written")
        partial = target.with_name(target.name + encryption.PARTIAL_SUFFIX)
        with sqlite_errors_translated(self.path):
            encryption.remove_stale(partial)
            encryption.write_copy(self.db, partial, None, encryption.DEFAULT_CIPHER)
            os.replace(partial, target)
            encryption.sync_folder(target.parent)

    @contextmanager
    def atomic(self) -> Iterator[None]:
        """One transaction: what is written inside commits together or not at all. Nested
        uses become savepoints (apsw), so a caller's transaction can wrap store methods.

        The outermost one begins IMMEDIATE: it takes the write lock first (waiting up to the
        busy timeout, then retrying a bounded number of times), so a transaction that reads
        before it writes can never fail half-way because another process wrote in between
        (SQLITE_BUSY_SNAPSHOT in WAL mode)."""
        with sqlite_errors_translated(self.path):
            if self.db.in_transaction:
                with self.db:
                    yield
                return
            self.require_writable()
            self._begin_immediate()
            try:
                yield
                self.db.execute("COMMIT")
            except BaseException:  # a failed COMMIT too: the connection stays usable
                if self.db.in_transaction:
                    self.db.execute("ROLLBACK")
                raise

    def require_writable(self) -> None:
        """Refuse, with what to do, to write to a bank opened read-only (before a long read)."""
        if self.read_only:
            raise read_only_error(self.path)

    def _begin_immediate(self) -> None:
        for attempt in range(WRITE_ATTEMPTS):
            try:
                self.db.execute("BEGIN IMMEDIATE")
                return
            except apsw.BusyError:
                if attempt == WRITE_ATTEMPTS - 1:
                    waited = WRITE_ATTEMPTS * BUSY_TIMEOUT_MS // 1000
                    raise BankLockedError(
                        f"the bank {self.path} has been locked for over {waited}s") from None
                time.sleep(0.05 * 2**attempt)

    def integrity_check(self) -> list[str]:
        """SQLite's ``integrity_check``: ["ok"] for a sound file, else the problems found."""
        return [row[0] for row in self.db.execute("PRAGMA integrity_check")]

    def vec_version(self) -> str:
        """The version of the loaded sqlite-vec extension."""
        return one_row(self.db.execute("SELECT vec_version()"))[0]

    # ------------------------------------------------------------------- meta
    def get_meta(self, key: str) -> str | None:
        row = self.db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return row[0] if row else None

    def set_meta(self, key: str, value: str) -> None:
        self.db.execute(
            "INSERT INTO meta(key, value) VALUES (?, ?) "
            "ON CONFLICT(key) DO UPDATE SET value = excluded.value",
            (key, value),
        )

    def delete_meta(self, key: str) -> None:
        """Remove ``key`` from the bank's meta (nothing when it is not there)."""
        self.db.execute("DELETE FROM meta WHERE key = ?", (key,))

    @property
    def schema_version(self) -> int:
        return len(applied_migrations(self.db))

    # -------------------------------------------------------------- embedder
    def embedder_fingerprint(self) -> EmbedderFingerprint | None:
        raw = self.get_meta("embedder")
        return EmbedderFingerprint(**json.loads(raw)) if raw else None

    def has_vectors(self) -> bool:
        return self._table_exists("float_blocks")

    def bind_embedder(self, fingerprint: EmbedderFingerprint) -> None:
        """Record the bank's embedder, or refuse one that differs from the recorded one."""
        recorded = self.embedder_fingerprint()
        if recorded is not None:
            if recorded != fingerprint:
                raise StoreError(
                    f"this bank's vectors come from {recorded.describe()}, not "
                    f"{fingerprint.describe()}; use the same embedder, or run `ramem reindex` "
                    "to re-embed every memory with the new one"
                )
            return
        with self.atomic():
            self.set_meta("embedder", json.dumps(fingerprint.__dict__))
            create_vector_tables(self.db)

    def drop_vectors(self) -> None:
        """Forget the embedder and every vector (for reindexing with another model)."""
        with self.atomic():
            self.db.execute("DROP TABLE IF EXISTS float_blocks")  # and its triggers
            self.db.execute("DROP TABLE IF EXISTS float_block_ranges")
            self.db.execute("DROP TABLE IF EXISTS int8_blocks")
            self.db.execute("DELETE FROM vector_sum")
            self.delete_meta("embedder")
            self._vectors_changed()

    def has_int8_codes(self) -> bool:
        """Whether the bank keeps int8 codes for the in-RAM scan (every bank with vectors)."""
        return self._table_exists("int8_blocks")

    def _table_exists(self, name: str) -> bool:
        row = self.db.execute(
            "SELECT 1 FROM sqlite_master WHERE name = ? AND type = 'table'", (name,)
        ).fetchone()
        return row is not None

    # ------------------------------------------------------------ statistics
    def stats(self) -> dict:
        counts = one_row(self.db.execute(
            """
            SELECT (SELECT count(*) FROM conversations),
                   (SELECT count(*) FROM sessions),
                   (SELECT count(*) FROM turns),
                   (SELECT count(*) FROM memories),
                   (SELECT count(*) FROM memories WHERE kind = 'turn'),
                   (SELECT count(*) FROM memories WHERE event_start IS NOT NULL)
            """
        ))
        windows = dict(
            self.db.execute("SELECT status, count(*) FROM extraction_windows GROUP BY status")
        )
        fingerprint = self.embedder_fingerprint()
        timeline = self.timeline()
        return {
            "path": self.path,
            "schema_version": self.schema_version,
            "conversations": counts[0],
            "sessions": counts[1],
            "turns": counts[2],
            "memories": counts[3],
            "turn_memories": counts[4],
            "memories_with_event_time": counts[5],
            "vectors": self.vector_count(),
            "embedder": fingerprint.__dict__ if fingerprint else None,
            "extraction_windows": windows,
            "timeline": None if timeline is None else {"start": timeline.start,
                                                       "end": timeline.end},
            "timezone": self.get_meta("timezone"),
            "country": self.get_meta("country"),
            "encryption": self.cipher,
        }

