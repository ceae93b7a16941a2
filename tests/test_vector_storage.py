"""Each vector stored once (float blocks) plus its int8 codes (int8 blocks, which a new
process reads in one go): both follow every write, banks of the older layouts (vec0 floats,
a float table, sign bits, a row of codes a memory) migrate with the same search results, and
the bytes a memory costs stay under a bound set by the dimension."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from ramem_local.store import Store
from ramem_local.store.float_blocks import FLOAT_BLOCK_SIZE
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


def rewind_to_m010(path: Path, vectors: dict[int, np.ndarray]) -> None:
    """Turn a bank into one of schema m010: its float vectors in ``memories_float``, a row a
    memory, m011 not applied. Opening it runs m011."""
    store = Store.open(path)
    with store.atomic():
        store.db.execute(
            """
            CREATE TABLE memories_float (memory_id INTEGER PRIMARY KEY, embedding BLOB NOT NULL);
            DROP TABLE float_blocks;
            DROP TABLE float_block_ranges;
            DELETE FROM schema_migrations WHERE name = 'm011_float_vectors_in_blocks';
            """)
        store.db.executemany("INSERT INTO memories_float(memory_id, embedding) VALUES (?, ?)",
                             [(i, v.astype(np.float32).tobytes()) for i, v in vectors.items()])
    store.close()


def rewind_to_vec0_floats(path: Path, vectors: dict[int, np.ndarray]) -> None:
    """Turn a bank into one written before m005: its vectors in the vec0 float table only,
    m005, m007, m010 and m011 not applied. Opening it runs them: m005 and m007 build the
    layout of m009 (four copies), m010 the one of m010, m011 the one of today."""
    rewind_to_m010(path, vectors)
    import apsw
    import sqlite_vec

    db = apsw.Connection(str(path))
    db.enable_load_extension(True)
    db.load_extension(sqlite_vec.loadable_path())
    dimension = len(next(iter(vectors.values())))
    with db:
        db.execute(
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
    db.close()


def open_without(path: Path, monkeypatch, *names: str) -> Store:
    """Open the bank with the migrations but these (an older schema version)."""
    import ramem_local.store.bank as bank_module

    older = [m for m in MIGRATIONS if m.__name__ not in names]
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


def stored_floats(store: Store, ids: list[int]) -> dict[int, bytes]:
    return {i: v.tobytes() for i, v in store.vectors_of(ids).items()}


def test_an_m010_bank_migrates_to_float_blocks_with_the_same_vectors_and_results(
        tmp_path, monkeypatch):
    path = tmp_path / "bank.db"
    store, ids, vectors = vector_bank(path, 3 * FLOAT_BLOCK_SIZE + 5, 24)
    expected = searches(store, vectors)
    codes = store.db.execute("SELECT * FROM int8_blocks ORDER BY id").fetchall()
    store.close()

    rewind_to_m010(path, dict(zip(ids, vectors, strict=True)))
    old = open_without(path, monkeypatch, "m011_float_vectors_in_blocks")
    assert "memories_float" in table_names(old) and "float_blocks" not in table_names(old)
    assert old.db.execute("SELECT count(*) FROM memories_float").fetchone()[0] == len(ids)
    old.close()

    upgraded = Store.open(path)
    assert upgraded.schema_version == len(MIGRATIONS)
    assert "memories_float" not in table_names(upgraded)
    assert stored_floats(upgraded, ids) == {i: v.tobytes() for i, v in zip(ids, vectors,
                                                                             strict=True)}
    blocks = upgraded.db.execute("SELECT count FROM float_blocks ORDER BY id").fetchall()
    assert [count for (count,) in blocks] == [FLOAT_BLOCK_SIZE] * 3 + [5], "filled in order"
    assert upgraded.db.execute("SELECT * FROM int8_blocks ORDER BY id").fetchall() == codes
    assert searches(upgraded, vectors) == expected
    assert upgraded.integrity_check() == ["ok"]


def test_a_bank_of_m009_migrates_with_the_same_codes_and_results(tmp_path, monkeypatch):
    path = tmp_path / "bank.db"
    store, ids, vectors = vector_bank(path, 700, 48)
    expected = searches(store, vectors)
    store.close()

    rewind_to_vec0_floats(path, dict(zip(ids, vectors, strict=True)))
    old = open_without(path, monkeypatch, "m010_vectors_stored_once",
                       "m011_float_vectors_in_blocks")
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
    assert {"float_blocks", "int8_blocks"} <= names
    assert not names & set(OLD_VECTOR_TABLES), "the copies are gone"
    assert not any(name.startswith(("memories_vec_", "memories_bin_")) for name in names)
    assert stored_floats(upgraded, ids) == {i: v.tobytes() for i, v in zip(ids, vectors,
                                                                             strict=True)}
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


@pytest.mark.parametrize("small_batches", [False, True])
def test_the_exact_list_is_the_brute_force_ranking_inside_the_filters(tmp_path, monkeypatch,
                                                                      small_batches):
    """The exact path against a ranking computed here from the vectors the test stored:
    every memory inside the filters (here: no turns; a 30-day range), by cosine distance.
    With small batches the scan reads every block's ids (not the R*Tree) and scores the
    vectors a few at a time, as at 100k memories."""
    if small_batches:
        monkeypatch.setattr("ramem_local.store.float_blocks.SCORED_AT_ONCE", 7)
        monkeypatch.setattr("ramem_local.store.float_blocks.LOOKUPS_AT_MOST", 5)
    store, ids, vectors = vector_bank(tmp_path / "bank.db", 200, 32)
    query = vectors[3] * 0.6 + vectors[150] * 0.4
    distances = 1 - (vectors @ query) / np.linalg.norm(query)
    facts = [i for i in range(len(ids)) if i % 3 != 0]  # every third memory is a turn
    rows = store.content_candidates(query_vector=query, fts_query=None, depth=25, limit=10,
                                    dense_index="exact", exclude_turns=True)
    assert [r.id for r in rows] == [ids[i] for i in sorted(facts, key=distances.__getitem__)[:10]]
    raw = TimeRange(100 * DAY, 130 * DAY)
    inside = range(100, 130)  # memory i's session is day i: inside the range, tier 0
    rows = store.session_overlap_candidates(
        query_vector=query, fts_query=None, raw_range=raw, wide_range=raw, depth=25, limit=10,
        dense_index="exact")
    assert [r.id for r in rows] == [ids[i] for i in sorted(inside, key=distances.__getitem__)
                                    [:10]]


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

    float_blocks = fresh.db.execute(
        "SELECT count, memory_ids FROM float_blocks ORDER BY id").fetchall()
    assert all(0 < count <= FLOAT_BLOCK_SIZE for count, _ in float_blocks)
    in_blocks = np.concatenate([np.frombuffer(ids_blob, np.int64) for _, ids_blob in float_blocks])
    assert sorted(in_blocks.tolist()) == sorted(stored), "each vector once, the deleted gone"
    assert fresh.vector_count() == len(stored)
    assert_ranges_mirrored(fresh)
    assert stored_floats(fresh, list(stored) + gone) == {
        i: v.astype(np.float32).tobytes() for i, v in stored.items()}
    with fresh.db:  # the places a search reads its candidates at follow the same writes
        at_places = fresh._float_places().vectors(fresh.db, np.array(list(stored) + gone), dim)
    assert {i: v.tobytes() for i, v in zip(at_places.ids.tolist(), at_places.vectors,
                                           strict=True)} == {
        i: v.astype(np.float32).tobytes() for i, v in stored.items()}
    mean = np.mean([v / np.linalg.norm(v) for v in stored.values()], axis=0)
    assert np.allclose(fresh.mean_vector(), mean, atol=1e-5), "the sum follows the blocks"


def assert_ranges_mirrored(store: Store) -> None:
    """The R*Tree the rescoring looks blocks up in holds each block's range, and no more."""
    blocks = store.db.execute(
        "SELECT id, first_memory_id, last_memory_id FROM float_blocks ORDER BY id").fetchall()
    assert blocks == store.db.execute(
        "SELECT id, first_memory_id, last_memory_id FROM float_block_ranges ORDER BY id"
    ).fetchall()


def test_a_partly_filled_float_block_is_filled_first(tmp_path):
    store, ids, vectors = vector_bank(tmp_path / "bank.db", FLOAT_BLOCK_SIZE + 3, 8)
    counts = [c for (c,) in store.db.execute("SELECT count FROM float_blocks ORDER BY id")]
    assert counts == [FLOAT_BLOCK_SIZE, 3]
    more = add_memories(store, 500, FLOAT_BLOCK_SIZE, conversation="more")
    more_vectors = unit_rows(np.random.default_rng(5), len(more), 8)
    store.add_vectors(more, more_vectors)
    counts = [c for (c,) in store.db.execute("SELECT count FROM float_blocks ORDER BY id")]
    assert counts == [FLOAT_BLOCK_SIZE, FLOAT_BLOCK_SIZE, 3]
    everything = dict(zip(ids + more, np.concatenate([vectors, more_vectors]), strict=True))
    assert stored_floats(Store.open(tmp_path / "bank.db"), list(everything)) == {
        i: v.tobytes() for i, v in everything.items()}


def test_another_processs_vectors_are_found_and_rescored(tmp_path):
    """The map of which block holds a vector follows writes made through another
    connection (``vectors_generation``), as the int8 matrix does."""
    store, ids, vectors = vector_bank(tmp_path / "bank.db", 40, 8)
    probe = unit_rows(np.random.default_rng(9), 1, 8)[0]
    before = store.content_candidates(query_vector=probe, fts_query=None, depth=5, limit=5,
                                      dense_index="int8")
    other = Store.open(tmp_path / "bank.db")
    [new_id] = add_memories(other, 900, 1, conversation="other")
    other.add_vectors([new_id], probe[None, :])
    assert other.delete_memory(before[0].id)
    other.close()
    after = store.content_candidates(query_vector=probe, fts_query=None, depth=5, limit=5,
                                     dense_index="int8")
    assert after[0].id == new_id and before[0].id not in {r.id for r in after}
    assert store.vectors_of([new_id])[new_id].tobytes() == probe.astype(np.float32).tobytes()


def test_codes_added_out_of_id_order_are_read_in_id_order(tmp_path):
    store = Store.open(tmp_path / "bank.db")
    store.bind_embedder(EmbedderFingerprint("random", 8, "c" * 64))
    ids = add_memories(store, 0, 2 * BLOCK_SIZE + 5)
    vectors = unit_rows(np.random.default_rng(2), len(ids), 8)
    late = ids[:BLOCK_SIZE + 1]
    store.add_vectors(ids[BLOCK_SIZE + 1:], vectors[BLOCK_SIZE + 1:])
    store.add_vectors(late, vectors[:BLOCK_SIZE + 1])  # older memories get vectors later
    fresh = Store.open(tmp_path / "bank.db")
    matrix = fresh.int8_matrix()
    assert matrix.ids.tolist() == ids
    assert np.array_equal(matrix.codes, quantise(vectors)[1])
    ranges = fresh.db.execute("SELECT first_memory_id, last_memory_id FROM float_blocks "
                              "ORDER BY first_memory_id").fetchall()
    assert any(a[1] >= b[0] for a, b in zip(ranges, ranges[1:], strict=False)), \
        "control: ranges overlap"
    assert_ranges_mirrored(fresh)
    assert stored_floats(fresh, ids) == {i: v.tobytes() for i, v in zip(ids, vectors,
                                                                         strict=True)}
    exact = fresh.content_candidates(query_vector=vectors[7], fts_query=None, depth=5,
                                     limit=5, dense_index="exact")
    assert exact[0].id == ids[7]


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
    """Bound: 4·d bytes of float vector + d of codes + 45 (the int8 block's ids, filter
    columns and scale a memory) + 8 (the float block's id) + 60 of page slack. A float row
    a memory (m010) cost ~490 B of slack at 1024-d: 4 kB pages cannot hold a 4,096-byte row;
    blocks of 16 vectors spill to whole overflow pages. The four copies before m010 cost
    10.4 kB at 1024-d."""
    n = 1500
    store, _, _ = vector_bank(tmp_path / "bank.db", n, dim)
    pages = dict(store.db.execute(
        "SELECT name, sum(pgsize) FROM dbstat "
        "WHERE name IN ('float_blocks', 'float_blocks_last', 'int8_blocks') GROUP BY name"))
    assert sum(pages.values()) / n <= 5 * dim + 45 + 8 + 60, pages
    assert pages["float_blocks"] / n <= 4 * dim + 8 + 60, "the vectors are stored densely"
    assert pages["int8_blocks"] / n <= dim * 1.05 + 45, "the codes are stored densely"
