"""Each vector stored once (the float table) plus its int8 codes, kept in blocks that a new
process reads in one go: blocks follow every write, banks of the older layouts (vec0 floats,
a float table, sign bits, a row of codes a memory) migrate with the same search results, and
the bytes a memory costs stay under a bound set by the dimension."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from ramem_local.store import Store
from ramem_local.store.int8_blocks import BLOCK_SIZE
from ramem_local.store.int8_matrix import quantise
from ramem_local.store.schema import MIGRATIONS, VEC_METADATA_COLUMNS
from ramem_local.text import fts_match_query
from ramem_local.types import DAY, EmbedderFingerprint, MemoryRecord, TimeRange

WORDS = ["cake", "pottery", "school", "fair", "sister", "birthday", "lemon", "class"]
OLD_VECTOR_TABLES = ("memories_vec", "memories_bin", "memories_float", "memories_int8")


def unit_rows(rng: np.random.Generator, n: int, dim: int) -> np.ndarray:
    rows = rng.standard_normal((n, dim)).astype(np.float32)
    return rows / np.linalg.norm(rows, axis=1, keepdims=True)


def add_memories(store: Store, first: int, count: int, conversation: str = "c") -> list[int]:
    """``count`` memories, one a day from day ``first``; every third is a turn."""
    conversation_id = store.ensure_conversation(conversation)
    ids = []
    rng = np.random.default_rng(first)
    for i in range(first, first + count):
        record = MemoryRecord(content=" ".join(rng.choice(WORDS, 3)) + f" {i}",
                              kind="turn" if i % 3 == 0 else "fact", conversation=conversation,
                              session_start=i * DAY, session_end=(i + 1) * DAY)
        memory_id = store.add_memory(record, dedup_key=f"{conversation}:{i}",
                                     conversation_id=conversation_id)
        assert memory_id is not None
        ids.append(memory_id)
    return ids


def vector_bank(path: Path, n: int, dim: int, seed: int = 0
                ) -> tuple[Store, list[int], np.ndarray]:
    store = Store.open(path)
    store.bind_embedder(EmbedderFingerprint("random", dim, "c" * 64))
    with store.atomic():
        ids = add_memories(store, 0, n)
        vectors = unit_rows(np.random.default_rng(seed), n, dim)
        store.add_vectors(ids, vectors)
    return store, ids, vectors


def rewind_to_vec0_floats(path: Path) -> None:
    """Turn a bank into one written before m005: its vectors in the vec0 float table only,
    m005, m007 and m010 not applied. Opening it runs them: m005 and m007 build the layout of
    m009 (four copies), m010 the one of today."""
    store = Store.open(path)
    dimension = store.embedder_fingerprint().dimension
    with store.atomic():
        store.db.execute(
            f"""
            CREATE VIRTUAL TABLE memories_vec USING vec0(
                memory_id INTEGER PRIMARY KEY,
                embedding float[{dimension}] distance_metric=cosine,
                {VEC_METADATA_COLUMNS}
            );
            INSERT INTO memories_vec(memory_id, embedding, conversation_id, kind, session_start,
                                     session_end, event_start, event_end)
            SELECT f.memory_id, f.embedding, m.conversation_id, m.kind, m.session_start,
                   m.session_end, coalesce(m.event_start, m.session_start),
                   coalesce(m.event_end, m.session_end)
            FROM memories_float AS f JOIN memories AS m ON m.id = f.memory_id;
            DROP TABLE memories_float;
            DROP TABLE int8_blocks;
            DELETE FROM schema_migrations
            WHERE name IN ('m005_binary_index', 'm007_int8_codes', 'm010_vectors_stored_once');
            """
        )
    store.close()


def open_at_m009(path: Path, monkeypatch) -> Store:
    """Open the bank with the migrations up to m009 only (the previous schema version)."""
    import ramem_local.store.bank as bank_module

    older = [m for m in MIGRATIONS if m.__name__ != "m010_vectors_stored_once"]
    monkeypatch.setattr("ramem_local.store.schema.MIGRATIONS", older)
    monkeypatch.setattr(bank_module, "MIGRATIONS", older)
    store = Store.open(path)
    monkeypatch.undo()
    return store


def table_names(store: Store) -> set[str]:
    return {row[0] for row in store.db.execute("SELECT name FROM sqlite_master")}


def searches(store: Store, vectors: np.ndarray) -> dict:
    """Content and context lists of every index for a few queries (rows with their scores)."""
    fts = fts_match_query("lemon cake")
    out = {}
    for q, query in enumerate(vectors[:4] * 0.7 + vectors[4:8] * 0.3):
        for index in ("int8", "binary", "exact"):
            out[q, index, "content"] = store.content_candidates(
                query_vector=query, fts_query=fts, depth=25, limit=10, dense_index=index,
                candidates=30)
            raw = TimeRange(100 * DAY, 130 * DAY)
            out[q, index, "context"] = store.session_overlap_candidates(
                query_vector=query, fts_query=fts, raw_range=raw,
                wide_range=TimeRange(raw.start - 5 * DAY, raw.end + 5 * DAY), depth=25,
                limit=10, dense_index=index, candidates=30, fill_missing_ranks=True)
    return out


def test_a_bank_of_the_previous_schema_migrates_with_the_same_codes_and_results(
        tmp_path, monkeypatch):
    path = tmp_path / "bank.db"
    store, ids, vectors = vector_bank(path, 700, 48)
    expected = searches(store, vectors)
    store.close()

    rewind_to_vec0_floats(path)
    old = open_at_m009(path, monkeypatch)
    assert set(OLD_VECTOR_TABLES) <= table_names(old) and "int8_blocks" not in table_names(old)
    assert all(old.db.execute(f"SELECT count(*) FROM {t}").fetchone()[0] == len(ids)
               for t in OLD_VECTOR_TABLES)
    old_codes = old.db.execute(
        "SELECT memory_id, conversation_id, is_turn, session_start, session_end, event_start, "
        "event_end, scale, codes FROM memories_int8 ORDER BY memory_id").fetchall()
    old.close()

    upgraded = Store.open(path)
    assert upgraded.schema_version == len(MIGRATIONS)
    names = table_names(upgraded)
    assert {"memories_float", "int8_blocks"} <= names
    assert not names & {"memories_vec", "memories_bin", "memories_int8"}, "the copies are gone"
    assert not any(name.startswith(("memories_vec_", "memories_bin_")) for name in names)
    floats = dict(upgraded.db.execute("SELECT memory_id, embedding FROM memories_float"))
    assert floats == {i: v.tobytes() for i, v in zip(ids, vectors, strict=True)}
    matrix = upgraded.int8_matrix()
    assert matrix.ids.tolist() == [row[0] for row in old_codes] == ids
    assert np.array_equal(np.column_stack([matrix.conversation_ids, matrix.is_turn,
                                           matrix.episodes]),
                          np.array([row[1:7] for row in old_codes]))
    assert matrix.scales.tolist() == [np.float32(row[7]) for row in old_codes]
    assert [code.tobytes() for code in matrix.codes] == [row[8] for row in old_codes]
    assert np.array_equal(matrix.codes, quantise(vectors)[1])
    assert searches(upgraded, vectors) == expected
    assert upgraded.integrity_check() == ["ok"]


def expected_codes(vectors: dict[int, np.ndarray]) -> tuple[list[int], np.ndarray]:
    ids = sorted(vectors)
    return ids, quantise(np.stack([vectors[i] for i in ids]))[1]


def test_the_blocks_follow_appends_deletes_replacements_and_episode_changes(tmp_path):
    dim = 16
    store, ids, vectors = vector_bank(tmp_path / "bank.db", BLOCK_SIZE + 40, dim)
    stored = dict(zip(ids, vectors, strict=True))
    rng = np.random.default_rng(1)
    for first in range(1000, 1000 + BLOCK_SIZE, 37):  # small appends across a block's end
        new = add_memories(store, first, 37, conversation="more")
        more = unit_rows(rng, len(new), dim)
        store.add_vectors(new, more)
        stored.update(zip(new, more, strict=True))
    gone = ids[5:BLOCK_SIZE + 20:3]  # across the first two blocks
    for memory_id in gone:
        assert store.delete_memory(memory_id)
        del stored[memory_id]
    replaced = ids[-3:]
    again = unit_rows(rng, 3, dim)
    store.add_vectors(replaced, again)
    stored.update(zip(replaced, again, strict=True))
    store._mirror_episodes_to_vectors([(ids[1], 100 * DAY, 101 * DAY, None, None),
                                       (ids[-1], 7 * DAY, 9 * DAY, 8 * DAY, 8 * DAY)])

    blocks = store.db.execute(
        "SELECT count, first_memory_id, last_memory_id FROM int8_blocks ORDER BY id").fetchall()
    assert all(0 < count <= BLOCK_SIZE for count, _, _ in blocks)
    assert sum(count for count, _, _ in blocks) == len(stored) == store.vector_count()
    fresh = Store.open(tmp_path / "bank.db")  # read from the file, not this process's matrix
    matrix = fresh.int8_matrix()
    expected_ids, codes = expected_codes(stored)
    assert matrix.ids.tolist() == expected_ids
    assert np.array_equal(matrix.codes, codes)
    episodes = dict(zip(matrix.ids.tolist(), matrix.episodes.tolist(), strict=True))
    assert episodes[ids[1]] == [100 * DAY, 101 * DAY, 100 * DAY, 101 * DAY]
    assert episodes[ids[-1]] == [7 * DAY, 9 * DAY, 8 * DAY, 8 * DAY]
    assert episodes[ids[2]] == [2 * DAY, 3 * DAY, 2 * DAY, 3 * DAY]
    turns = dict(zip(matrix.ids.tolist(), matrix.is_turn.tolist(), strict=True))
    assert turns[ids[0]] and not turns[ids[1]]
    mean = np.mean([v / np.linalg.norm(v) for v in stored.values()], axis=0)
    assert np.allclose(fresh.mean_vector(), mean, atol=1e-5), "the sum follows every write"


def test_codes_added_out_of_id_order_are_read_in_id_order(tmp_path):
    store = Store.open(tmp_path / "bank.db")
    store.bind_embedder(EmbedderFingerprint("random", 8, "c" * 64))
    ids = add_memories(store, 0, 2 * BLOCK_SIZE + 5)
    vectors = unit_rows(np.random.default_rng(2), len(ids), 8)
    late = ids[:BLOCK_SIZE + 1]
    store.add_vectors(ids[BLOCK_SIZE + 1:], vectors[BLOCK_SIZE + 1:])
    store.add_vectors(late, vectors[:BLOCK_SIZE + 1])  # older memories get vectors later
    matrix = Store.open(tmp_path / "bank.db").int8_matrix()
    assert matrix.ids.tolist() == ids
    assert np.array_equal(matrix.codes, quantise(vectors)[1])


def test_a_new_process_reads_every_block_and_leaves_the_file_unmapped(tmp_path):
    """The load reads each block's codes into one matrix through a memory map it sets for
    the read only: the connection's own ``mmap_size`` is put back (a connection-long map made
    an ingest's resident size grow with the bank). A bank without vectors reads as empty."""
    dim = 24
    path = tmp_path / "bank.db"
    store, ids, vectors = vector_bank(path, 2 * BLOCK_SIZE + 7, dim)  # a part-filled block
    store.close()
    fresh = Store.open(path)
    fresh.db.execute("PRAGMA mmap_size = 8192")
    matrix = fresh.int8_matrix()
    assert fresh.db.execute("PRAGMA mmap_size").fetchone()[0] == 8192
    scales, codes = quantise(vectors)
    assert matrix.ids.tolist() == ids and matrix.codes.shape == (len(ids), dim)
    assert np.array_equal(matrix.codes, codes) and np.array_equal(matrix.scales, scales)
    assert matrix.conversation_ids.tolist() == [fresh.ensure_conversation("c")] * len(ids)
    assert matrix.is_turn.tolist() == [i % 3 == 0 for i in range(len(ids))]
    assert matrix.episodes[:, 0].tolist() == [i * DAY for i in range(len(ids))]
    nearest = fresh.content_candidates(query_vector=vectors[BLOCK_SIZE + 3], fts_query=None,
                                       depth=5, limit=5, dense_index="int8")
    assert nearest[0].id == ids[BLOCK_SIZE + 3]

    empty = Store.open(tmp_path / "empty.db")
    empty.bind_embedder(EmbedderFingerprint("random", dim, "c" * 64))
    empty.close()
    matrix = Store.open(tmp_path / "empty.db").int8_matrix()
    assert len(matrix) == 0 and matrix.codes.shape == (0, dim)


def test_vectors_of_another_dimension_are_refused(tmp_path):
    store, ids, _ = vector_bank(tmp_path / "bank.db", 3, 8)
    with pytest.raises(Exception, match="8-d vectors"):
        store.add_vectors(ids[:1], np.ones((1, 9), dtype=np.float32))


@pytest.mark.parametrize("dim", [384, 1024])
def test_a_memory_costs_its_float_vector_its_codes_and_little_more(tmp_path, dim):
    """Bound: 4·d bytes of float vector + d of codes + 700. The 700 are the float row's page
    share beyond its bytes (a 4 kB page holds two 384-d rows; a 1024-d vector spills 3.6 kB to
    an overflow page and leaves ~490 B on its leaf) and the block's 45 B of ids, filter
    columns and scale a memory. The four copies before m010 cost 10.4 kB at 1024-d."""
    n = 1500
    store, _, _ = vector_bank(tmp_path / "bank.db", n, dim)
    pages = dict(store.db.execute(
        "SELECT name, sum(pgsize) FROM dbstat WHERE name IN ('memories_float', 'int8_blocks') "
        "GROUP BY name"))
    assert sum(pages.values()) / n <= 5 * dim + 700, pages
    assert pages["int8_blocks"] / n <= dim * 1.05 + 45, "the codes are stored densely"
