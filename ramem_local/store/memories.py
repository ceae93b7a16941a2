"""Memory tables: memories, their provenance and vectors, the FTS index, and retrieval."""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

import apsw

from ..errors import StoreError
from ..types import MemoryRecord, TimeRange
from .base import StorePart, now, one_row
from .retrieval_sql import (
    NEIGHBOUR_WEIGHT,
    REPORTERS,
    RankedRow,
    content_statement,
    lexical_query,
    occurrences_statement,
    session_overlap_by_time_statement,
    session_overlap_statement,
    sessions_saying_statement,
)
from .schema import NEIGHBOURS_AROUND, REFRESH_NEIGHBOURS

if TYPE_CHECKING:  # numpy is imported when a vector is stored: `ramem --help` does not need it
    import numpy as np

    from .float_blocks import FloatPlaces
    from .int8_matrix import Int8Matrix


def _join_list(values: Iterable[str]) -> str:
    """Lists are stored as '; '-joined text: readable, and tokenised cleanly by FTS5."""
    return "; ".join(v for v in values if v)


def _split_list(value: str | None) -> list[str]:
    return [v for v in (value or "").split("; ") if v]


def _range_params(raw: TimeRange, wide: TimeRange, said_in: Sequence[int] = ()) -> dict:
    return {"raw_start": raw.start, "raw_end": raw.end,
            "wide_start": wide.start, "wide_end": wide.end,
            "said_in": json.dumps(list(said_in))}


def _vec_episode(session_start: int, session_end: int, event_start: int | None,
                event_end: int | None) -> tuple[int, int, int, int]:
    """A memory's episode as the int8 scan's filter keeps it: without a grounded event, the
    event columns carry the session span, so "session OR event overlaps" needs no NULL test."""
    return (session_start, session_end,
            event_start if event_start is not None else session_start,
            event_end if event_end is not None else session_end)


def vector_blob(vector: np.ndarray) -> bytes:
    import numpy as np

    return np.ascontiguousarray(vector, dtype=np.float32).tobytes()



# How many of the int8 scan's nearest are scored exactly when the filtered pool is larger than
# ``candidates`` (a smaller pool is scored whole): twice the dense list's depth, at least 50.
# Each costs a read of its float vector from its block (``float_blocks``); the int8 ranking
# misplaces a vector by far less than the gap between the 25th and the 50th nearest (dense
# recall@10 equals exact search's: ``results/bench-scale.txt``).
RESCORED_AT_LEAST = 50


def rescored(depth: int) -> int:
    return max(2 * depth, RESCORED_AT_LEAST)


INSERT_MEMORY = """
INSERT INTO memories(conversation_id, kind, content, keywords, persons, entities, location, topic,
                     language, session_start, session_end, event_start, event_end, dedup_key,
                     created_at, act)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
ON CONFLICT(conversation_id, dedup_key) DO NOTHING
RETURNING id
"""
# The same, with a turn memory's neighbour text known at insert time (see add_memory).
INSERT_MEMORY_WITH_NEIGHBOURS = """
INSERT INTO memories(conversation_id, kind, content, keywords, persons, entities, location, topic,
                     language, session_start, session_end, event_start, event_end, dedup_key,
                     created_at, act, neighbours)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
ON CONFLICT(conversation_id, dedup_key) DO NOTHING
RETURNING id
"""


class MemoryTables(StorePart):
    """The SQL of memories, vectors, FTS and the retrieval statements (a part of ``Store``)."""

    _int8_matrix: Int8Matrix | None
    _float_places_cache: FloatPlaces | None

    # --------------------------------------------------------------- memories
    def add_memory(self, record: MemoryRecord, dedup_key: str, conversation_id: int, *,
                   neighbours: str = "") -> int | None:
        """Insert a memory with its provenance; None when an equal memory already exists.

        ``neighbours`` is a turn memory's neighbour text when the caller knows it already:
        written with the row, the full-text index is not updated twice (with FTS5's
        secure-delete, rewriting a row costs far more than writing it once)."""
        row = self.db.execute(
            INSERT_MEMORY_WITH_NEIGHBOURS if neighbours else INSERT_MEMORY,
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
                now(),
                record.act,
                *((neighbours,) if neighbours else ()),
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

    def refresh_neighbours_around(self, turn_ids: Sequence[int]) -> None:
        """Recompute the neighbour text of the turn memories of these turns (just added) and
        of the turns just before and after each in its session: whatever the size of the
        session, only those change."""
        if not turn_ids:
            return
        changed = self.db.execute(
            NEIGHBOURS_AROUND, {"turn_ids": json.dumps(list(turn_ids))}).fetchall()
        self.db.executemany("UPDATE memories SET neighbours = ?2 WHERE id = ?1", changed)

    def add_vectors(self, memory_ids: Sequence[int], vectors: np.ndarray) -> None:
        """Store these memories' vectors: the float vector and its int8 codes (with the
        columns the scan's filters need), replacing any they had."""
        if not memory_ids:
            return
        fingerprint = self.embedder_fingerprint()
        if fingerprint is None or not self.has_vectors():
            raise StoreError("no embedder is bound to this bank; cannot store vectors")
        if vectors.ndim != 2 or vectors.shape[1] != fingerprint.dimension:
            raise StoreError(f"vectors of shape {vectors.shape}; this bank holds "
                             f"{fingerprint.dimension}-d vectors ({fingerprint.describe()})")
        ids_json = json.dumps(list(memory_ids))
        spans = {
            r[0]: r[1:]
            for r in self.db.execute(
                "SELECT id, conversation_id, kind, session_start, session_end, event_start, "
                "event_end FROM memories WHERE id IN (SELECT value FROM json_each(?))",
                (ids_json,),
            )
        }
        import numpy as np

        from .float_blocks import FloatRows, append_vectors, remove_vectors
        from .int8_blocks import CodeRows, append_codes, remove_codes
        from .int8_matrix import quantise

        dimension = fingerprint.dimension
        # a replaced vector: the old one goes, from the blocks and from the sum
        self._add_to_vector_sum(remove_vectors(self.db, ids_json, dimension), sign=-1)
        append_vectors(self.db, FloatRows(np.asarray(memory_ids, dtype=np.int64),
                                          np.asarray(vectors, dtype=np.float32)), dimension)
        self._add_to_vector_sum(vectors, sign=1)
        remove_codes(self.db, ids_json, dimension)
        columns = np.array([(memory_id, spans[memory_id][0], spans[memory_id][1] == "turn",
                             *_vec_episode(*spans[memory_id][2:]))
                            for memory_id in memory_ids], dtype=np.int64)
        scales, codes = quantise(vectors)
        append_codes(self.db, CodeRows(
            ids=columns[:, 0], conversation_ids=columns[:, 1],
            is_turn=columns[:, 2].astype(bool), episodes=columns[:, 3:7],
            scales=scales, codes=codes), dimension)
        self._vectors_changed()

    def _delete_vectors(self, memory_ids_json: str) -> None:
        """Remove these memories (a JSON array of ids) from every vector table."""
        if not self.has_vectors():
            return
        from .float_blocks import remove_vectors
        from .int8_blocks import remove_codes

        self._add_to_vector_sum(remove_vectors(self.db, memory_ids_json, self._dimension()),
                                sign=-1)
        remove_codes(self.db, memory_ids_json, self._dimension())
        self._vectors_changed()

    def _dimension(self) -> int:
        fingerprint = self.embedder_fingerprint()
        assert fingerprint is not None, "vectors without a bound embedder"
        return fingerprint.dimension

    def _add_to_vector_sum(self, vectors: np.ndarray | None, *, sign: int) -> None:
        """Add (sign 1) or take away (sign -1) these vectors' directions from ``vector_sum``."""
        if vectors is None or not len(vectors):
            return
        import numpy as np

        from .vectors import unit_rows

        units = unit_rows(vectors)
        row = self.db.execute("SELECT count, total FROM vector_sum WHERE id = 1").fetchone()
        count, total = (row[0], np.frombuffer(row[1], dtype=np.float64)) if row else \
            (0, np.zeros(units.shape[1]))
        count += sign * len(units)
        total = total + sign * units.sum(axis=0)
        if count <= 0:
            self.db.execute("DELETE FROM vector_sum")
            return
        self.db.execute("INSERT OR REPLACE INTO vector_sum(id, count, total) VALUES (1, ?, ?)",
                        (count, total.tobytes()))

    def mean_vector(self) -> np.ndarray | None:
        """The mean of the bank's unit vectors (float32), None when it holds none."""
        import numpy as np

        row = self.db.execute("SELECT count, total FROM vector_sum WHERE id = 1").fetchone()
        if row is None or row[0] <= 0:
            return None
        return (np.frombuffer(row[1], dtype=np.float64) / row[0]).astype(np.float32)

    def _vectors_changed(self) -> None:
        """Mark a change to the bank's vectors (in the writer's transaction), so that every
        process's in-RAM int8 matrix is read again before its next use. A random token, not a
        counter: a matrix read inside a transaction that was then rolled back can never carry
        the mark of a later, different change."""
        self.db.execute(
            "INSERT INTO meta(key, value) VALUES ('vectors_generation', lower(hex(randomblob(8)))) "
            "ON CONFLICT(key) DO UPDATE SET value = excluded.value")

    def int8_matrix(self) -> Int8Matrix:
        """The bank's int8 codes in RAM, read again whenever the vectors changed since."""
        from .int8_matrix import Int8Matrix

        with self.db:  # one read transaction: the generation and the codes agree
            generation = self.get_meta("vectors_generation")
            cached = self._int8_matrix
            if cached is None or cached.generation != generation:
                fingerprint = self.embedder_fingerprint()
                assert fingerprint is not None, "int8 codes without a bound embedder"
                self._int8_matrix = cached = Int8Matrix.load(
                    self.db, generation, fingerprint.dimension)
            # not None here; after the block mypy cannot tell (apsw types __exit__ as
            # possibly swallowing the exception)
            matrix = cached
        return matrix

    def neighbourhood_closeness(self, memory_ids: Sequence[int], direction: np.ndarray,
                                share: float, *, conversation_id: int | None = None,
                                exclude_turns: bool = False,
                                written_by: int | None = None) -> dict[int, float]:
        """For each of these memories: how close it and the memories most like it are to
        ``direction`` on average (``Int8Matrix.neighbourhood_closeness``: those as similar to
        it as the most similar ``share`` of the bank's pairs; among those of
        ``conversation_id``, without turns with ``exclude_turns``, whose session started by
        ``written_by``); {} for a bank without vectors."""
        if not self.has_vectors() or not self.has_int8_codes():
            return {}
        return self.int8_matrix().neighbourhood_closeness(
            memory_ids, direction, share, conversation_id=conversation_id,
            exclude_turns=exclude_turns, session_started_by=written_by)

    def _float_places(self) -> FloatPlaces:
        """Where each float vector is (``float_blocks.FloatPlaces``), read again whenever the
        vectors changed since; call inside a read transaction."""
        from .float_blocks import FloatPlaces

        generation = self.get_meta("vectors_generation")
        if self._float_places_cache is None or \
                self._float_places_cache.generation != generation:
            self._float_places_cache = FloatPlaces.load(self.db, generation)
        return self._float_places_cache

    def _mirror_episodes_to_vectors(self, changed: Sequence[tuple]) -> None:
        """Copy changed ``(id, session_start, session_end, event_start, event_end)`` rows of
        ``memories`` into the int8 blocks' episode columns."""
        if not changed or not self.has_int8_codes():
            return
        from .int8_blocks import set_episodes

        set_episodes(self.db, {memory_id: _vec_episode(*episode)
                               for memory_id, *episode in changed}, self._dimension())
        self._vectors_changed()

    def memories_without_vectors(self, limit: int = 1000) -> list[tuple[int, str]]:
        if not self.has_vectors():
            return []
        from .float_blocks import memory_ids_with_vectors

        with_vectors = json.dumps(memory_ids_with_vectors(self.db).tolist())
        rows = self.db.execute(
            """
            SELECT m.id, m.content FROM memories m
            WHERE m.id NOT IN (SELECT value FROM json_each(?))
            ORDER BY m.id LIMIT ?
            """,
            (with_vectors, limit),
        )
        return list(rows)

    def vector_count(self) -> int:
        if not self.has_vectors():
            return 0
        from .float_blocks import vector_count

        return vector_count(self.db)

    def memory_count(self) -> int:
        return one_row(self.db.execute("SELECT count(*) FROM memories"))[0]

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
                   coalesce(p.external_ids, '[]'), coalesce(p.turn_ids, '[]'), m.act
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
                act=r[16],
            )
        return out

    def names_a_person(self, name: str) -> bool:
        """Whether some memory names ``name`` among its persons (as ingest read them)."""
        quoted = '"' + name.replace('"', '""') + '"'
        return self.db.execute(
            "SELECT 1 FROM memories_fts WHERE memories_fts MATCH ? LIMIT 1",
            (f"persons : ({quoted})",)).fetchone() is not None

    def memories_key(self) -> tuple[int, int, int]:
        """A key that changes whenever memories are added or removed, and costs microseconds:
        the largest memory id, SQLite's ``data_version`` (changed by another connection's
        commit) and this connection's count of rows it changed. What is built from every
        memory (``kinds.term_graph``, the person index) is kept by it."""
        (largest,) = one_row(self.db.execute("SELECT coalesce(max(id), 0) FROM memories"))
        (version,) = one_row(self.db.execute("PRAGMA data_version"))
        return int(largest), int(version), int(self.db.total_changes())

    def memory_texts(self) -> list[tuple[int, str]]:
        """(id, content) of every memory but the assistant's answers, in id order."""
        return [(row[0], row[1]) for row in self.db.execute(
            "SELECT id, content FROM memories WHERE act != 'answer' ORDER BY id")]

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
        with self.atomic():
            self._delete_vectors(json.dumps([memory_id]))
            deleted = self.db.execute(
                "DELETE FROM memories WHERE id = ? RETURNING id", (memory_id,)
            ).fetchone()
        return deleted is not None

    def reporters(self, memory_ids: Sequence[int]) -> dict[int, set[str]]:
        """For each memory, the speakers whose own report it rests on: those of its source
        turns that are not only a question (``retrieval_sql.REPORTERS``); a memory with none
        is missing."""
        found: dict[int, set[str]] = {}
        for memory_id, speaker in self.db.execute(REPORTERS, {"ids": json.dumps(list(memory_ids))}):
            found.setdefault(memory_id, set()).add(speaker)
        return found

    def extracted_memories_of_turns(self, turn_ids: Sequence[int]) -> dict[int, set[int]]:
        """For each turn, the extracted (non-turn) memories that cite it."""
        if not turn_ids:
            return {}
        rows = self.db.execute(
            """
            SELECT mt.turn_id, mt.memory_id
            FROM memory_turns AS mt JOIN memories AS m ON m.id = mt.memory_id
            WHERE m.kind != 'turn' AND mt.turn_id IN (SELECT value FROM json_each(?))
            """,
            (json.dumps(list(turn_ids)),),
        )
        cited: dict[int, set[int]] = {}
        for turn_id, memory_id in rows:
            cited.setdefault(turn_id, set()).add(memory_id)
        return cited

    def fts_row_count(self) -> int:
        """Rows in the FTS index (for consistency checks: must equal the memory count)."""
        return one_row(self.db.execute("SELECT count(*) FROM memories_fts_docsize"))[0]

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
        dense_index: str = "exact",
        candidates: int = 200,
        written_by: int | None = None,
        fill_missing_ranks: bool = False,
    ) -> list[RankedRow]:
        """The content list: RRF of dense KNN and BM25 over the bank, in fused order; with
        ``fill_missing_ranks`` a memory one list missed ranks after that list's last hit.
        ``dense_index="int8"`` draws the ``rescored(depth)`` nearest memories from the in-RAM
        scan of the int8 codes (``int8_matrix``), ``"binary"`` the ``candidates`` nearest by
        Hamming distance of their signs (a pool of at most ``candidates``: all of it); their
        float vectors are read from their blocks and SQL scores them exactly (sqlite-vec),
        filters and fuses them (``_dense_list_params``, ``retrieval_sql``). ``"exact"`` scores
        every float vector inside the filters in RAM and hands SQL the closest."""
        with_dense = query_vector is not None and self.has_vectors()
        with_lexical = bool(fts_query)
        if not with_dense and not with_lexical:
            return []
        sql = content_statement(
            with_dense=with_dense, with_lexical=with_lexical,
            conversation_scoped=conversation_id is not None, exclude_turns=exclude_turns,
            fill_missing_ranks=fill_missing_ranks, dense_index=dense_index,
            written_by=written_by is not None,
        )
        dense_params = self._dense_list_params(
            query_vector if with_dense else None, dense_index, max(candidates, depth), depth,
            conversation_id=conversation_id, exclude_turns=exclude_turns, written_by=written_by)
        return self._ranked_rows(sql, {
            **dense_params,
            "fts": lexical_query(fts_query, neighbour_weight),
            "depth": depth, "limit": limit, "kappa": kappa,
            "neighbour_weight": neighbour_weight, "conversation_id": conversation_id,
            "written_by": written_by,
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
        dense_index: str = "exact",
        candidates: int = 200,
        written_by: int | None = None,
        proximity_prior: bool = False,
        said_in: Sequence[int] = (),
    ) -> list[RankedRow]:
        """The context list, filter first: both source lists are drawn from the memories whose
        session span or event range overlaps ``wide_range`` or whose session starts at one of
        ``said_in`` (placed as if said inside the range), fused there, and ordered by
        proximity tier to ``raw_range``, then fused rank (with ``proximity_prior``: by the
        fusion of relevance and proximity, ``retrieval_sql.SESSION_OVERLAP``). The dense
        candidates are drawn as the content list's, from inside the filter."""
        with_dense = query_vector is not None and self.has_vectors()
        with_lexical = bool(fts_query)
        if not with_dense and not with_lexical:
            return []
        sql = session_overlap_statement(
            with_dense=with_dense, with_lexical=with_lexical,
            conversation_scoped=conversation_id is not None, exclude_turns=exclude_turns,
            fill_missing_ranks=fill_missing_ranks, dense_index=dense_index,
            written_by=written_by is not None,
        )
        dense_params = self._dense_list_params(
            query_vector if with_dense else None, dense_index, max(candidates, depth), depth,
            conversation_id=conversation_id, exclude_turns=exclude_turns,
            overlapping=wide_range, said_in=said_in, written_by=written_by)
        return self._ranked_rows(sql, {
            **dense_params,
            "fts": lexical_query(fts_query, neighbour_weight),
            "depth": depth, "limit": limit, "kappa": kappa,
            "neighbour_weight": neighbour_weight, "conversation_id": conversation_id,
            "event_time_first": int(event_time_first), "written_by": written_by,
            "proximity_prior": int(proximity_prior),
            **_range_params(raw_range, wide_range, said_in),
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
        written_by: int | None = None,
    ) -> list[RankedRow]:
        """Every memory inside the session-overlap filter, by proximity tier, then in the
        order it was said (no query needed)."""
        sql = session_overlap_by_time_statement(
            conversation_scoped=conversation_id is not None, exclude_turns=exclude_turns,
            written_by=written_by is not None,
        )
        return self._ranked_rows(sql, {
            "limit": limit, "conversation_id": conversation_id, "written_by": written_by,
            "event_time_first": int(event_time_first),
            **_range_params(raw_range, wide_range),
        })

    def sessions_saying(self, words: Sequence[str], *, conversation_id: int | None = None,
                        written_by: int | None = None) -> list[int]:
        """The starts of the sessions where a memory's own text says ``words`` in a row
        (case and punctuation aside), oldest first."""
        if not words:
            return []
        phrase = '"' + " ".join(word.replace('"', '""') for word in words) + '"'
        sql = sessions_saying_statement(conversation_scoped=conversation_id is not None,
                                        written_by=written_by is not None)
        return [row[0] for row in self.db.execute(sql, {
            "phrase": "{content} : " + phrase, "conversation_id": conversation_id,
            "written_by": written_by})]

    def occurrences(
        self,
        *,
        fts_query: str | None,
        happened_from: int,
        happened_until: int,
        newest_first: bool,
        limit: int,
        assistant: str,
        conversation_id: int | None = None,
        exclude_turns: bool = False,
        written_by: int | None = None,
        among: Sequence[int] | None = None,
        persons: Sequence[str] = (),
        acts: Sequence[str] = ("report",),
    ) -> list[tuple[int, int]]:
        """(memory id, when it happened) of the reports that match ``fts_query`` in the
        memory's own columns (or are ``among`` these ids; else every memory) and happened in
        ``[happened_from, happened_until)``, newest or oldest first. A report is a memory of
        one of ``acts`` (``ingest.acts``: what was done, by default), not said by
        ``assistant`` and not only a question (``retrieval_sql.OCCURRENCES``); with
        ``persons``, only one said by one of them or naming one."""
        sql = occurrences_statement(
            lexical=fts_query is not None, conversation_scoped=conversation_id is not None,
            exclude_turns=exclude_turns, written_by=written_by is not None,
            newest_first=newest_first, listed=fts_query is None and among is not None,
            of_persons=bool(persons),
        )
        params = {"fts": None if fts_query is None else lexical_query(fts_query, 0.0),
                  "among": None if among is None else json.dumps(list(among)),
                  "persons": json.dumps(list(persons)), "acts": json.dumps(list(acts)),
                  "happened_from": happened_from, "happened_until": happened_until,
                  "limit": limit, "assistant": assistant, "conversation_id": conversation_id,
                  "written_by": written_by}
        used = {name: value for name, value in params.items() if f":{name}" in sql}
        return [(row[0], row[1]) for row in self.db.execute(sql, used)]

    def term_counts(self, terms: Sequence[str]) -> dict[str, int]:
        """How many memories hold each term in their own columns (FTS5, stemmed as indexed);
        each term is quoted, never read as FTS syntax."""
        counts = {}
        for term in terms:
            quoted = '"' + term.replace('"', '""') + '"'
            counts[term] = one_row(self.db.execute(
                "SELECT count(*) FROM memories_fts WHERE memories_fts MATCH ?",
                (lexical_query(quoted, 0.0),)))[0]
        return counts

    def vectors_of(self, memory_ids: Sequence[int]) -> dict[int, np.ndarray]:
        """The stored vectors of these memories, by id (memories without one are left out)."""
        import numpy as np

        from .float_blocks import vectors_of

        if not self.has_vectors():
            return {}
        rows = vectors_of(self.db, np.asarray(memory_ids, dtype=np.int64),
                          self._dimension())
        return dict(zip(rows.ids.tolist(), rows.vectors, strict=True))

    def _dense_list_params(self, query_vector: np.ndarray | None, dense_index: str,
                          count: int, depth: int, *, conversation_id: int | None,
                          exclude_turns: bool, overlapping: TimeRange | None = None,
                          said_in: Sequence[int] = (), written_by: int | None = None) -> dict:
        """The dense list's statement parameters, {} without a query vector: ``:qvec``,
        ``:dimension``, ``:dense_candidates`` (a JSON array of [memory id, row]) and
        ``:dense_vectors`` (their float32 vectors, a row each): the memories the in-RAM scan lets
        through its filters whose exact cosine distance the statement computes (sqlite-vec).
        A pool of at most ``count`` is taken whole (exact search); from a larger one the
        nearest by int8 codes, the ``rescored(depth)`` nearest (``"int8"``), or the ``count``
        nearest by Hamming distance of the codes' signs (``"binary"``), each vector read at
        its known slot; with ``dense_index="exact"`` the ``count`` closest of the whole pool
        (``_closest_exactly``)."""
        if query_vector is None:
            return {}
        import numpy as np

        from .float_blocks import vectors_of

        matrix = self.int8_matrix()
        ids = np.asarray(matrix.nearest(
            query_vector, len(matrix) if dense_index == "exact" else count,
            conversation_id=conversation_id, exclude_turns=exclude_turns,
            overlapping=overlapping, said_in=said_in, session_started_by=written_by,
            by_sign_bits=dense_index == "binary",
            larger_pool_keeps=rescored(depth) if dense_index == "int8" else None),
            dtype=np.int64)
        dimension = self._dimension()
        with self.db:  # one read transaction: the places and the blocks agree
            if dense_index == "exact":
                rows = vectors_of(self.db, self._closest_exactly(ids, query_vector, count,
                                                                 written_by), dimension)
            else:
                rows = self._float_places().vectors(self.db, ids, dimension)
        return {"qvec": vector_blob(query_vector), "dimension": dimension,
                "dense_candidates": json.dumps(
                    [[memory_id, row] for row, memory_id in enumerate(rows.ids.tolist())]),
                "dense_vectors": rows.vectors.tobytes()}

    def _closest_exactly(self, memory_ids: np.ndarray, query_vector: np.ndarray, count: int,
                         written_by: int | None) -> np.ndarray:
        """The exact scan: the ``count`` of these memories closest to the query by exact cosine
        distance (computed in RAM over every block that holds one of them, as
        ``vec_distance_cosine`` computes it); with an as-of cut, among those written by then."""
        import numpy as np

        from .float_blocks import exact_distances

        scored_ids, distances = exact_distances(self.db, memory_ids, query_vector,
                                                self._dimension())
        if written_by is not None:
            after = self._written_after(scored_ids, written_by)
            keep = np.array([memory_id not in after for memory_id in scored_ids.tolist()],
                            dtype=bool)
            scored_ids, distances = scored_ids[keep], distances[keep]
        return scored_ids[np.lexsort((scored_ids, distances))[:count]]

    def _written_after(self, memory_ids: np.ndarray, written_by: int) -> set[int]:
        """Which of these memories cite a turn said after ``written_by``."""
        return {row[0] for row in self.db.execute(
            """
            SELECT DISTINCT wmt.memory_id
            FROM json_each(?) AS chosen
            CROSS JOIN memory_turns AS wmt ON wmt.memory_id = chosen.value
            CROSS JOIN turns AS wt ON wt.id = wmt.turn_id
            WHERE wt.timestamp > ?
            """, (json.dumps(memory_ids.tolist()), written_by))}

    def _ranked_rows(self, sql: str, params: dict) -> list[RankedRow]:
        used = {name: value for name, value in params.items() if f":{name}" in sql}
        return [
            RankedRow(id=r[0], rrf=r[1], dense_rank=r[2], bm25_rank=r[3], fused_rank=r[4],
                      tier=r[5], gap_days=r[6])
            for r in self.db.execute(sql, used)
        ]


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
        before = one_row(self.db.execute(
            "SELECT count(*) FROM memory_turns WHERE memory_id = ?", (memory_id,)
        ))[0]
        self.db.executemany(
            "INSERT OR IGNORE INTO memory_turns(memory_id, turn_id) VALUES (?, ?)",
            [(memory_id, t) for t in turn_ids],
        )
        after = one_row(self.db.execute(
            "SELECT count(*) FROM memory_turns WHERE memory_id = ?", (memory_id,)
        ))[0]
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
            RETURNING id, session_start, session_end, event_start, event_end
            """,
            (memory_id,),
        ).fetchall()
        self._mirror_episodes_to_vectors(changed)
        return after - before


