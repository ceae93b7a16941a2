"""The store: one SQLite file per bank, the only module that speaks SQL."""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import apsw
import numpy as np
import sqlite_vec

from ..types import DAY, MemoryRecord, Session, TimeRange, Turn
from .retrieval_sql import (
    NEIGHBOUR_WEIGHT,
    RankedRow,
    content_statement,
    lexical_query,
    session_overlap_by_time_statement,
    session_overlap_statement,
)
from .schema import (
    MIGRATIONS,
    REFRESH_NEIGHBOURS,
    SCHEMA_VERSION,
    applied_migrations,
    migrate,
)

BANK_MARKER = "ramem-bank"
BUSY_TIMEOUT_MS = 10_000


class StoreError(RuntimeError):
    """A problem with the bank file, reported as one readable line."""


@dataclass(frozen=True)
class EmbedderFingerprint:
    name: str
    dimension: int
    sha256: str

    def describe(self) -> str:
        return f"{self.name} ({self.dimension}-d, sha256 {self.sha256[:12]})"


@dataclass(frozen=True)
class StoredTurn:
    id: int
    external_id: str
    is_new: bool


def _now() -> int:
    return int(time.time())


def _join_list(values: Iterable[str]) -> str:
    """Lists are stored as '; '-joined text: readable, and tokenised cleanly by FTS5."""
    return "; ".join(v for v in values if v)


def _split_list(value: str | None) -> list[str]:
    return [v for v in (value or "").split("; ") if v]


def _range_params(raw: TimeRange, wide: TimeRange) -> dict[str, int]:
    return {"raw_start": raw.start, "raw_end": raw.end,
            "wide_start": wide.start, "wide_end": wide.end}


def vector_blob(vector: np.ndarray) -> bytes:
    return np.ascontiguousarray(vector, dtype=np.float32).tobytes()


class Store:
    """Owns the connection, the schema and every SQL statement of a bank."""

    def __init__(self, db: apsw.Connection, path: str):
        self.db = db
        self.path = path

    # ---------------------------------------------------------------- opening
    @classmethod
    def open(cls, path: str | Path, *, create: bool = True) -> Store:
        path_str = str(path)
        if path_str != ":memory:":
            file = Path(path_str)
            if not file.exists() and not create:
                raise StoreError(f"no bank at {file}")
            if file.is_dir():
                raise StoreError(f"{file} is a directory, not a bank file")
            file.parent.mkdir(parents=True, exist_ok=True)
        try:
            db = apsw.Connection(path_str)
            db.setbusytimeout(BUSY_TIMEOUT_MS)
            db.enable_load_extension(True)
            db.load_extension(sqlite_vec.loadable_path())
            db.enable_load_extension(False)
            db.execute("PRAGMA foreign_keys = ON")
            existing = {r[0] for r in db.execute("SELECT name FROM sqlite_master")}
        except apsw.NotADBError as exc:
            raise StoreError(f"{path_str} is not a SQLite database (not a ramem bank)") from exc
        except apsw.Error as exc:
            raise StoreError(f"cannot open bank {path_str}: {exc}") from exc
        store = cls(db, path_str)
        try:
            store._check_is_bank(existing)  # before any write: a foreign file stays untouched
        except StoreError:
            db.close()
            raise
        if path_str != ":memory:":
            db.execute("PRAGMA journal_mode = WAL")
        migrate(db, _now())
        if not existing:
            store.set_meta("marker", BANK_MARKER)
            store.set_meta("created_at", str(_now()))
            store.set_meta("timezone", "UTC")
        return store

    def _check_is_bank(self, existing_tables: set[str]) -> None:
        if not existing_tables:
            return
        if "meta" not in existing_tables or "schema_migrations" not in existing_tables:
            raise StoreError(f"{self.path} is a SQLite database but not a ramem bank")
        marker = self.get_meta("marker")
        if marker != BANK_MARKER:
            raise StoreError(f"{self.path} is a SQLite database but not a ramem bank")
        known = {m.__name__ for m in MIGRATIONS}
        unknown = applied_migrations(self.db) - known
        if unknown:
            raise StoreError(
                f"{self.path} was written by a newer ramem (schema {sorted(unknown)[-1]}); "
                f"this version knows schema {SCHEMA_VERSION}: upgrade ramem-local"
            )

    def close(self) -> None:
        self.db.close()

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

    @property
    def schema_version(self) -> int:
        return len(applied_migrations(self.db))

    # -------------------------------------------------------------- embedder
    def embedder_fingerprint(self) -> EmbedderFingerprint | None:
        raw = self.get_meta("embedder")
        return EmbedderFingerprint(**json.loads(raw)) if raw else None

    def has_vectors(self) -> bool:
        return self._table_exists("memories_vec")

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
        with self.db:
            self.set_meta("embedder", json.dumps(fingerprint.__dict__))
            self._create_vector_table(fingerprint.dimension)

    def drop_vectors(self) -> None:
        """Forget the embedder and every vector (for reindexing with another model)."""
        with self.db:
            self.db.execute("DROP TABLE IF EXISTS memories_vec")
            self.db.execute("DELETE FROM meta WHERE key = 'embedder'")

    def _create_vector_table(self, dimension: int) -> None:
        self.db.execute(
            f"""
            CREATE VIRTUAL TABLE IF NOT EXISTS memories_vec USING vec0(
                memory_id INTEGER PRIMARY KEY,
                embedding float[{int(dimension)}] distance_metric=cosine,
                conversation_id INTEGER,
                kind TEXT,
                session_start INTEGER,
                session_end INTEGER,
                event_start INTEGER,
                event_end INTEGER
            )
            """
        )

    def _table_exists(self, name: str) -> bool:
        row = self.db.execute(
            "SELECT 1 FROM sqlite_master WHERE name = ? AND type = 'table'", (name,)
        ).fetchone()
        return row is not None

    # ---------------------------------------------------------- conversations
    def conversation_id(self, name: str) -> int | None:
        row = self.db.execute("SELECT id FROM conversations WHERE name = ?", (name,)).fetchone()
        return row[0] if row else None

    def ensure_conversation(
        self, name: str, *, kind: str = "chat", source: str | None = None
    ) -> int:
        self.db.execute(
            "INSERT INTO conversations(name, kind, source, created_at) VALUES (?, ?, ?, ?) "
            "ON CONFLICT(name) DO NOTHING",
            (name, kind, source, _now()),
        )
        return self.conversation_id(name)  # type: ignore[return-value]

    def add_participants(self, conversation_id: int, names: Iterable[str]) -> None:
        self.db.executemany(
            "INSERT OR IGNORE INTO participants(conversation_id, name) VALUES (?, ?)",
            [(conversation_id, n) for n in names if n],
        )

    def participants(self, conversation_id: int | None = None) -> list[str]:
        rows = self.db.execute(
            "SELECT DISTINCT name FROM participants "
            "WHERE ?1 IS NULL OR conversation_id = ?1 ORDER BY name",
            (conversation_id,),
        )
        return [r[0] for r in rows]

    def conversations(self) -> list[dict]:
        rows = self.db.execute(
            """
            SELECT c.id, c.name, c.kind,
                   (SELECT count(*) FROM sessions s WHERE s.conversation_id = c.id),
                   (SELECT count(*) FROM turns t WHERE t.conversation_id = c.id),
                   (SELECT count(*) FROM memories m WHERE m.conversation_id = c.id)
            FROM conversations c ORDER BY c.id
            """
        )
        keys = ("id", "name", "kind", "sessions", "turns", "memories")
        return [dict(zip(keys, r, strict=True)) for r in rows]

    # --------------------------------------------------------------- sessions
    def add_sessions(self, conversation_id: int, sessions: Sequence[Session]) -> dict[int, int]:
        """Insert sessions (idempotent by ordinal); returns ordinal -> session id."""
        self.db.executemany(
            'INSERT INTO sessions(conversation_id, ordinal, start, "end") VALUES (?, ?, ?, ?) '
            "ON CONFLICT(conversation_id, ordinal) DO NOTHING",
            [(conversation_id, s.ordinal, s.start, s.start + DAY) for s in sessions],
        )
        self._recompute_session_ends(conversation_id)
        rows = self.db.execute(
            "SELECT ordinal, id FROM sessions WHERE conversation_id = ?", (conversation_id,)
        )
        return dict(rows)

    def _recompute_session_ends(self, conversation_id: int) -> None:
        """Each span ends at the next session's start; the last one at its start + 1 day.

        Memories whose spans change (a new session after the former last one) follow, in the
        memories table and in the vector table's metadata.
        """
        self.db.execute(
            """
            WITH next_start AS (
                SELECT id,
                       coalesce(lead(start) OVER (ORDER BY start, ordinal), start + ?2) AS new_end
                FROM sessions WHERE conversation_id = ?1
            )
            UPDATE sessions SET "end" = next_start.new_end
            FROM next_start
            WHERE sessions.id = next_start.id AND sessions."end" != next_start.new_end
            """,
            (conversation_id, DAY),
        )
        changed = self.db.execute(
            """
            WITH memory_span AS (
                SELECT mt.memory_id, min(s.start) AS span_start, max(s."end") AS span_end
                FROM memory_turns mt
                JOIN turns t ON t.id = mt.turn_id
                JOIN sessions s ON s.id = t.session_id
                WHERE t.conversation_id = ?1
                GROUP BY mt.memory_id
            )
            UPDATE memories SET session_start = span_start, session_end = span_end
            FROM memory_span
            WHERE memories.id = memory_span.memory_id
              AND (memories.session_start != span_start OR memories.session_end != span_end)
            RETURNING memories.id, memories.session_start, memories.session_end,
                      memories.event_start, memories.event_end
            """,
            (conversation_id,),
        ).fetchall()
        if changed and self.has_vectors():
            self.db.executemany(
                "UPDATE memories_vec SET session_start = ?, session_end = ?, "
                "event_start = ?, event_end = ? WHERE memory_id = ?",
                [
                    (s, e, es if es is not None else s, ee if ee is not None else e, mid)
                    for mid, s, e, es, ee in changed
                ],
            )

    def timeline(self, conversation_id: int | None = None) -> TimeRange | None:
        row = self.db.execute(
            'SELECT min(start), max("end") FROM sessions WHERE ?1 IS NULL OR conversation_id = ?1',
            (conversation_id,),
        ).fetchone()
        if row is None or row[0] is None:
            return None
        return TimeRange(row[0], row[1])

    def latest_session_start(self, conversation_id: int | None = None) -> int | None:
        row = self.db.execute(
            "SELECT max(start) FROM sessions WHERE ?1 IS NULL OR conversation_id = ?1",
            (conversation_id,),
        ).fetchone()
        return row[0] if row else None

    # ------------------------------------------------------------------ turns
    def add_turns(
        self, conversation_id: int, session_ids: dict[int, int], turns: Sequence[Turn]
    ) -> list[StoredTurn]:
        """Insert turns verbatim; turns already stored (same key) are reported as not new."""
        stored: list[StoredTurn] = []
        for turn in turns:
            key = turn_key(turn)
            row = self.db.execute(
                """
                INSERT INTO turns(conversation_id, session_id, turn_key, external_id, speaker,
                                  text, caption, timestamp)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?)
                ON CONFLICT(conversation_id, turn_key) DO NOTHING
                RETURNING id
                """,
                (
                    conversation_id,
                    session_ids[turn.session_ordinal],
                    key,
                    turn.external_id or key,
                    turn.speaker,
                    turn.text,
                    turn.caption,
                    turn.timestamp,
                ),
            ).fetchone()
            if row is not None:
                stored.append(StoredTurn(row[0], turn.external_id or key, True))
            else:
                existing = self.db.execute(
                    "SELECT id, external_id FROM turns WHERE conversation_id = ? AND turn_key = ?",
                    (conversation_id, key),
                ).fetchone()
                stored.append(StoredTurn(existing[0], existing[1], False))
        return stored

    def unstored_turns(self, conversation_id: int, turns: Sequence[Turn]) -> list[Turn]:
        """The turns of a batch that this conversation does not hold yet."""
        keys = [turn_key(t) for t in turns]
        placeholders = ",".join("?" * len(keys))
        stored = {
            r[0]
            for r in self.db.execute(
                f"SELECT turn_key FROM turns WHERE conversation_id = ? "
                f"AND turn_key IN ({placeholders})",
                (conversation_id, *keys),
            )
        }
        return [t for t, k in zip(turns, keys, strict=True) if k not in stored]

    def session_span(self, session_id: int) -> tuple[int, int]:
        row = self.db.execute(
            'SELECT start, "end" FROM sessions WHERE id = ?', (session_id,)
        ).fetchone()
        return row[0], row[1]

    def turn_memory_id(self, conversation: str, key: str) -> int | None:
        """The turn memory (kind "turn") of the turn with this key, if stored."""
        row = self.db.execute(
            """
            SELECT m.id FROM turns t
            JOIN conversations c ON c.id = t.conversation_id
            JOIN memory_turns mt ON mt.turn_id = t.id
            JOIN memories m ON m.id = mt.memory_id AND m.kind = 'turn'
            WHERE c.name = ? AND t.turn_key = ?
            """,
            (conversation, key),
        ).fetchone()
        return row[0] if row else None

    def turn_count(self) -> int:
        return self.db.execute("SELECT count(*) FROM turns").fetchone()[0]

    # --------------------------------------------------------------- memories
    def add_memory(self, record: MemoryRecord, dedup_key: str, conversation_id: int) -> int | None:
        """Insert a memory with its provenance; None when an equal memory already exists."""
        row = self.db.execute(
            """
            INSERT INTO memories(conversation_id, kind, content, keywords, persons, entities,
                                 location, topic, language, session_start, session_end,
                                 event_start, event_end, dedup_key, created_at)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            ON CONFLICT(conversation_id, dedup_key) DO NOTHING
            RETURNING id
            """,
            (
                conversation_id,
                record.kind,
                record.content,
                _join_list(record.keywords),
                _join_list(record.persons),
                _join_list(record.entities),
                record.location,
                record.topic or "",
                record.language,
                record.session_start,
                record.session_end,
                record.event_start,
                record.event_end,
                dedup_key,
                _now(),
            ),
        ).fetchone()
        if row is None:
            return None
        memory_id = row[0]
        self.db.executemany(
            "INSERT OR IGNORE INTO memory_turns(memory_id, turn_id) VALUES (?, ?)",
            [(memory_id, t) for t in record.source_turn_ids],
        )
        return memory_id

    def refresh_neighbours(self, conversation_id: int, session_ids: Iterable[int]) -> None:
        """Recompute the neighbour text (previous and next turn) of the turn memories of these
        sessions; called after turns are added, so a turn gains the one said after it."""
        self.db.execute(REFRESH_NEIGHBOURS, {
            "conversation_id": conversation_id,
            "session_ids": json.dumps(sorted(set(session_ids))),
        })

    def add_vectors(self, memory_ids: Sequence[int], vectors: np.ndarray) -> None:
        if not memory_ids:
            return
        if not self.has_vectors():
            raise StoreError("no embedder is bound to this bank; cannot store vectors")
        placeholders = ",".join("?" * len(memory_ids))
        spans = {
            r[0]: r[1:]
            for r in self.db.execute(
                f"SELECT id, conversation_id, kind, session_start, session_end, event_start, "
                f"event_end FROM memories WHERE id IN ({placeholders})",
                tuple(memory_ids),
            )
        }
        rows = []
        for memory_id, vector in zip(memory_ids, vectors, strict=True):
            conv, kind, s, e, es, ee = spans[memory_id]
            rows.append(
                (memory_id, vector_blob(vector), conv, kind, s, e,
                 es if es is not None else s, ee if ee is not None else e)
            )
        self.db.executemany(
            "INSERT OR REPLACE INTO memories_vec(memory_id, embedding, conversation_id, kind, "
            "session_start, session_end, event_start, event_end) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            rows,
        )

    def memories_without_vectors(self, limit: int = 1000) -> list[tuple[int, str]]:
        if not self.has_vectors():
            return []
        rows = self.db.execute(
            """
            SELECT m.id, m.content FROM memories m
            WHERE m.id NOT IN (SELECT memory_id FROM memories_vec)
            ORDER BY m.id LIMIT ?
            """,
            (limit,),
        )
        return list(rows)

    def vector_count(self) -> int:
        if not self.has_vectors():
            return 0
        return self.db.execute("SELECT count(*) FROM memories_vec").fetchone()[0]

    def memory_count(self) -> int:
        return self.db.execute("SELECT count(*) FROM memories").fetchone()[0]

    def get_memories(self, ids: Sequence[int]) -> dict[int, MemoryRecord]:
        if not ids:
            return {}
        placeholders = ",".join("?" * len(ids))
        rows = self.db.execute(
            f"""
            WITH provenance AS (
                SELECT mt.memory_id,
                       json_group_array(t.external_id) AS external_ids,
                       json_group_array(t.id) AS turn_ids
                FROM memory_turns mt JOIN turns t ON t.id = mt.turn_id
                WHERE mt.memory_id IN ({placeholders})
                GROUP BY mt.memory_id
            )
            SELECT m.id, m.content, m.kind, c.name, m.session_start, m.session_end,
                   m.persons, m.keywords, m.entities, m.location, m.topic, m.language,
                   m.event_start, m.event_end,
                   coalesce(p.external_ids, '[]'), coalesce(p.turn_ids, '[]')
            FROM memories m
            JOIN conversations c ON c.id = m.conversation_id
            LEFT JOIN provenance p ON p.memory_id = m.id
            WHERE m.id IN ({placeholders})
            """,
            tuple(ids) * 2,
        )
        out: dict[int, MemoryRecord] = {}
        for r in rows:
            out[r[0]] = MemoryRecord(
                id=r[0], content=r[1], kind=r[2], conversation=r[3],
                session_start=r[4], session_end=r[5],
                persons=_split_list(r[6]), keywords=_split_list(r[7]),
                entities=_split_list(r[8]), location=r[9], topic=r[10] or None,
                language=r[11], event_start=r[12], event_end=r[13],
                source_turns=json.loads(r[14]), source_turn_ids=json.loads(r[15]),
            )
        return out

    def list_memories(
        self, *, limit: int = 20, offset: int = 0, conversation_id: int | None = None
    ) -> list[MemoryRecord]:
        ids = [
            r[0]
            for r in self.db.execute(
                "SELECT id FROM memories WHERE ?1 IS NULL OR conversation_id = ?1 "
                "ORDER BY session_start, id LIMIT ?2 OFFSET ?3",
                (conversation_id, limit, offset),
            )
        ]
        found = self.get_memories(ids)
        return [found[i] for i in ids]

    def delete_memory(self, memory_id: int) -> bool:
        with self.db:
            if self.has_vectors():
                self.db.execute("DELETE FROM memories_vec WHERE memory_id = ?", (memory_id,))
            deleted = self.db.execute(
                "DELETE FROM memories WHERE id = ? RETURNING id", (memory_id,)
            ).fetchone()
        return deleted is not None

    def fts_row_count(self) -> int:
        """Rows in the FTS index (for consistency checks: must equal the memory count)."""
        return self.db.execute("SELECT count(*) FROM memories_fts_docsize").fetchone()[0]

    def fts_integrity_ok(self) -> bool:
        try:
            self.db.execute(
                "INSERT INTO memories_fts(memories_fts, rank) VALUES ('integrity-check', 1)"
            )
        except apsw.CorruptError:
            return False
        return True

    # -------------------------------------------------------------- retrieval
    def content_candidates(
        self,
        *,
        query_vector: np.ndarray | None,
        fts_query: str | None,
        depth: int,
        limit: int,
        kappa: float = 60.0,
        neighbour_weight: float = NEIGHBOUR_WEIGHT,
        conversation_id: int | None = None,
        exclude_turns: bool = False,
    ) -> list[RankedRow]:
        """The content list: RRF of dense KNN and BM25 over the bank, in fused order."""
        with_dense = query_vector is not None and self.has_vectors()
        with_lexical = bool(fts_query)
        if not with_dense and not with_lexical:
            return []
        sql = content_statement(
            with_dense=with_dense, with_lexical=with_lexical,
            conversation_scoped=conversation_id is not None, exclude_turns=exclude_turns,
        )
        return self._ranked_rows(sql, {
            "qvec": vector_blob(query_vector) if with_dense else None,
            "fts": lexical_query(fts_query, neighbour_weight),
            "depth": depth, "limit": limit, "kappa": kappa,
            "neighbour_weight": neighbour_weight, "conversation_id": conversation_id,
        })

    def session_overlap_candidates(
        self,
        *,
        query_vector: np.ndarray | None,
        fts_query: str | None,
        raw_range: TimeRange,
        wide_range: TimeRange,
        depth: int,
        limit: int,
        kappa: float = 60.0,
        neighbour_weight: float = NEIGHBOUR_WEIGHT,
        event_time_first: bool = False,
        fill_missing_ranks: bool = False,
        conversation_id: int | None = None,
        exclude_turns: bool = False,
    ) -> list[RankedRow]:
        """The context list, filter first: both source lists are drawn from the memories whose
        session span or event range overlaps ``wide_range``, fused there, and ordered by
        proximity tier to ``raw_range``, then fused rank."""
        with_dense = query_vector is not None and self.has_vectors()
        with_lexical = bool(fts_query)
        if not with_dense and not with_lexical:
            return []
        sql = session_overlap_statement(
            with_dense=with_dense, with_lexical=with_lexical,
            conversation_scoped=conversation_id is not None, exclude_turns=exclude_turns,
            fill_missing_ranks=fill_missing_ranks,
        )
        return self._ranked_rows(sql, {
            "qvec": vector_blob(query_vector) if with_dense else None,
            "fts": lexical_query(fts_query, neighbour_weight),
            "depth": depth, "limit": limit, "kappa": kappa,
            "neighbour_weight": neighbour_weight, "conversation_id": conversation_id,
            "event_time_first": int(event_time_first),
            **_range_params(raw_range, wide_range),
        })

    def session_overlap_by_time(
        self,
        *,
        raw_range: TimeRange,
        wide_range: TimeRange,
        limit: int,
        event_time_first: bool = False,
        conversation_id: int | None = None,
        exclude_turns: bool = False,
    ) -> list[RankedRow]:
        """Every memory inside the session-overlap filter, by proximity tier, then in the
        order it was said (no query needed)."""
        sql = session_overlap_by_time_statement(
            conversation_scoped=conversation_id is not None, exclude_turns=exclude_turns,
        )
        return self._ranked_rows(sql, {
            "limit": limit, "conversation_id": conversation_id,
            "event_time_first": int(event_time_first),
            **_range_params(raw_range, wide_range),
        })

    def _ranked_rows(self, sql: str, params: dict) -> list[RankedRow]:
        used = {name: value for name, value in params.items() if f":{name}" in sql}
        return [
            RankedRow(id=r[0], rrf=r[1], dense_rank=r[2], bm25_rank=r[3], fused_rank=r[4],
                      tier=r[5], gap_days=r[6])
            for r in self.db.execute(sql, used)
        ]

    # ------------------------------------------------------------ statistics
    def stats(self) -> dict:
        counts = self.db.execute(
            """
            SELECT (SELECT count(*) FROM conversations),
                   (SELECT count(*) FROM sessions),
                   (SELECT count(*) FROM turns),
                   (SELECT count(*) FROM memories),
                   (SELECT count(*) FROM memories WHERE kind = 'turn'),
                   (SELECT count(*) FROM memories WHERE event_start IS NOT NULL)
            """
        ).fetchone()
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
        }

    # ---------------------------------------------------- extraction (LLM tier)
    def conversation_turns(self, conversation_id: int) -> list[Turn]:
        """Every turn of a conversation in time order, with store ids.

        ``external_id`` is None for turns that came without one (the store then keeps a hash
        of speaker/time/text as their key, which means nothing to a model or a person).
        """
        rows = self.db.execute(
            """
            SELECT t.id, t.speaker, t.text, t.timestamp, s.ordinal, t.external_id, t.caption
            FROM turns t JOIN sessions s ON s.id = t.session_id
            WHERE t.conversation_id = ?
            ORDER BY t.timestamp, t.id
            """,
            (conversation_id,),
        )
        turns = []
        for r in rows:
            turn = Turn(speaker=r[1], text=r[2], timestamp=r[3], session_ordinal=r[4],
                        external_id=None, caption=r[6], id=r[0])
            if r[5] != turn_key(turn):
                turn.external_id = r[5]
            turns.append(turn)
        return turns

    def all_turns(self) -> Iterator[tuple[str, Turn]]:
        """(conversation name, turn) for every stored turn, conversation by conversation."""
        for conversation in self.conversations():
            for turn in self.conversation_turns(conversation["id"]):
                yield conversation["name"], turn

    def turn_session_spans(self, conversation_id: int) -> dict[int, tuple[int, int]]:
        """turn id -> the span ``(start, end)`` of the turn's session."""
        rows = self.db.execute(
            'SELECT t.id, s.start, s."end" FROM turns t JOIN sessions s ON s.id = t.session_id '
            "WHERE t.conversation_id = ?",
            (conversation_id,),
        )
        return {r[0]: (r[1], r[2]) for r in rows}

    def extraction_windows(
        self,
        conversation_id: int | None = None,
        *,
        prompt_version: str | None = None,
        statuses: Sequence[str] | None = None,
    ) -> list[dict]:
        """Rows of ``extraction_windows`` as dicts, by conversation and first turn."""
        wanted = list(statuses) if statuses is not None else None
        rows = self.db.execute(
            """
            SELECT w.id, w.conversation_id, w.first_turn_id, w.last_turn_id, w.turn_count,
                   w.status, w.attempts, w.error, w.model, w.prompt_version, w.updated_at
            FROM extraction_windows w LEFT JOIN turns t ON t.id = w.first_turn_id
            WHERE (?1 IS NULL OR w.conversation_id = ?1)
              AND (?2 IS NULL OR w.prompt_version = ?2)
              AND (?3 IS NULL OR w.status IN (SELECT value FROM json_each(?3)))
            ORDER BY w.conversation_id, t.timestamp, w.first_turn_id, w.id
            """,
            (conversation_id, prompt_version, None if wanted is None else json.dumps(wanted)),
        )
        keys = ("id", "conversation_id", "first_turn_id", "last_turn_id", "turn_count",
                "status", "attempts", "error", "model", "prompt_version", "updated_at")
        return [dict(zip(keys, r, strict=True)) for r in rows]

    def add_extraction_windows(
        self,
        conversation_id: int,
        windows: Sequence[tuple[int, int, int]],
        prompt_version: str,
    ) -> int:
        """Record pending windows ``(first_turn_id, last_turn_id, turn_count)``; a window
        already recorded (same turns, same prompt version) is left as it is. Returns how many
        were added."""
        added = 0
        now = _now()
        for first, last, count in windows:
            row = self.db.execute(
                """
                INSERT INTO extraction_windows(conversation_id, first_turn_id, last_turn_id,
                                               turn_count, prompt_version, updated_at)
                VALUES (?, ?, ?, ?, ?, ?)
                ON CONFLICT(conversation_id, first_turn_id, last_turn_id, prompt_version)
                DO NOTHING
                RETURNING id
                """,
                (conversation_id, first, last, count, prompt_version, now),
            ).fetchone()
            added += row is not None
        return added

    def extraction_window_status(self, window_id: int) -> str | None:
        row = self.db.execute(
            "SELECT status FROM extraction_windows WHERE id = ?", (window_id,)
        ).fetchone()
        return row[0] if row else None

    def finish_extraction_window(
        self, window_id: int, *, status: str, error: str | None, model: str | None
    ) -> None:
        """Record one attempt's outcome: status done or failed (with its error)."""
        self.db.execute(
            "UPDATE extraction_windows SET status = ?, error = ?, model = ?, "
            "attempts = attempts + 1, updated_at = ? WHERE id = ?",
            (status, error, model, _now(), window_id),
        )

    def memory_id_for_dedup_key(self, conversation_id: int, dedup_key: str) -> int | None:
        row = self.db.execute(
            "SELECT id FROM memories WHERE conversation_id = ? AND dedup_key = ?",
            (conversation_id, dedup_key),
        ).fetchone()
        return row[0] if row else None

    def set_memory_window(self, memory_id: int, window_id: int) -> None:
        """Record the extraction window that produced a memory."""
        self.db.execute("UPDATE memories SET window_id = ? WHERE id = ?", (window_id, memory_id))

    def merge_memory_turns(self, memory_id: int, turn_ids: Sequence[int]) -> int:
        """Add source turns to an existing memory (the same fact found again elsewhere).

        The memory's session span is recomputed from all its turns (``[min start, max end]``
        of their sessions), in the vector table too. Returns how many turns were new.
        """
        before = self.db.execute(
            "SELECT count(*) FROM memory_turns WHERE memory_id = ?", (memory_id,)
        ).fetchone()[0]
        self.db.executemany(
            "INSERT OR IGNORE INTO memory_turns(memory_id, turn_id) VALUES (?, ?)",
            [(memory_id, t) for t in turn_ids],
        )
        after = self.db.execute(
            "SELECT count(*) FROM memory_turns WHERE memory_id = ?", (memory_id,)
        ).fetchone()[0]
        if after == before:
            return 0
        changed = self.db.execute(
            """
            WITH span AS (
                SELECT min(s.start) AS span_start, max(s."end") AS span_end
                FROM memory_turns mt
                JOIN turns t ON t.id = mt.turn_id
                JOIN sessions s ON s.id = t.session_id
                WHERE mt.memory_id = ?1
            )
            UPDATE memories SET session_start = span.span_start, session_end = span.span_end
            FROM span
            WHERE memories.id = ?1
              AND (memories.session_start != span.span_start
                   OR memories.session_end != span.span_end)
            RETURNING session_start, session_end, event_start, event_end
            """,
            (memory_id,),
        ).fetchone()
        if changed and self.has_vectors():
            s, e, es, ee = changed
            self.db.execute(
                "UPDATE memories_vec SET session_start = ?, session_end = ?, "
                "event_start = ?, event_end = ? WHERE memory_id = ?",
                (s, e, es if es is not None else s, ee if ee is not None else e, memory_id),
            )
        return after - before


def turn_key(turn: Turn) -> str:
    """Identity of a turn within its conversation: its external id, else a content hash."""
    if turn.external_id:
        return turn.external_id
    digest = hashlib.sha256(f"{turn.speaker}\x1f{turn.timestamp}\x1f{turn.text}".encode())
    return "t" + digest.hexdigest()[:16]

