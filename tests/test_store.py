"""The bank file: schema, migrations, FTS/vector sync, RRF in SQL, hostile FTS input."""

from __future__ import annotations

import random

import apsw
import numpy as np
import pytest

from ramem_local.store import EmbedderFingerprint, Store, StoreError
from ramem_local.store.schema import MIGRATIONS
from ramem_local.text import fts_match_query
from ramem_local.types import DAY, MemoryRecord, Session, Turn

DIM = 8
FINGERPRINT = EmbedderFingerprint("test-embedder", DIM, "a" * 64)


def make_bank(tmp_path, *, vectors: bool = True) -> Store:
    store = Store.open(tmp_path / "bank.db")
    if vectors:
        store.bind_embedder(FINGERPRINT)
    return store


def add_conversation(store: Store, texts: list[str], *, session_starts=(0,)) -> list[int]:
    """Store one turn memory per text, spread round-robin over the given sessions."""
    conversation_id = store.ensure_conversation("c")
    sessions = [Session(ordinal=i + 1, start=s) for i, s in enumerate(session_starts)]
    session_ids = store.add_sessions(conversation_id, sessions)
    memory_ids = []
    for index, text in enumerate(texts):
        ordinal = index % len(sessions) + 1
        start, end = store.session_span(session_ids[ordinal])
        turn = Turn(speaker="A", text=text, timestamp=start + index, session_ordinal=ordinal,
                    external_id=f"D{ordinal}:{index}")
        stored = store.add_turns(conversation_id, session_ids, [turn])[0]
        record = MemoryRecord(content=text, kind="turn", conversation="c", session_start=start,
                              session_end=end, persons=["A"], source_turn_ids=[stored.id])
        memory_ids.append(store.add_memory(record, f"turn:{stored.id}", conversation_id))
    return memory_ids


def test_new_bank_applies_every_migration_and_is_marked(tmp_path):
    store = make_bank(tmp_path, vectors=False)
    assert store.schema_version == len(MIGRATIONS)
    assert store.get_meta("marker") == "ramem-bank"
    store.close()
    reopened = Store.open(tmp_path / "bank.db", create=False)
    assert reopened.schema_version == len(MIGRATIONS)


def test_migration_from_empty_file(tmp_path):
    path = tmp_path / "empty.db"
    path.write_bytes(b"")
    store = Store.open(path)
    assert store.schema_version == len(MIGRATIONS)
    assert store.memory_count() == 0


def test_migrations_run_once_each_when_reopened(tmp_path):
    make_bank(tmp_path).close()
    store = Store.open(tmp_path / "bank.db")
    names = [r[0] for r in store.db.execute("SELECT name FROM schema_migrations")]
    assert names == [m.__name__ for m in MIGRATIONS]


def test_bank_from_a_newer_version_is_refused(tmp_path):
    store = make_bank(tmp_path)
    store.db.execute("INSERT INTO schema_migrations VALUES ('m999_future', 0)")
    store.close()
    with pytest.raises(StoreError, match="newer ramem"):
        Store.open(tmp_path / "bank.db")


def test_foreign_sqlite_file_is_refused(tmp_path):
    path = tmp_path / "other.db"
    con = apsw.Connection(str(path))
    con.execute("CREATE TABLE invoices(id INTEGER)")
    con.close()
    with pytest.raises(StoreError, match="not a ramem bank"):
        Store.open(path)


def test_a_bank_whose_creation_is_interrupted_is_created_anew_next_time(tmp_path, monkeypatch):
    """The schema and the marker commit together (found by killing `ramem import` while it
    created the bank: tables without a marker were refused as a foreign file ever after)."""
    real_set_meta = Store.set_meta

    def killed_after_the_marker(self, key, value):
        if key == "created_at":
            raise KeyboardInterrupt
        real_set_meta(self, key, value)

    monkeypatch.setattr(Store, "set_meta", killed_after_the_marker)
    with pytest.raises(KeyboardInterrupt):
        Store.open(tmp_path / "bank.db")
    monkeypatch.undo()
    check = apsw.Connection(str(tmp_path / "bank.db"))
    assert list(check.execute("SELECT name FROM sqlite_master")) == []
    check.close()
    store = Store.open(tmp_path / "bank.db")
    assert store.get_meta("marker") == "ramem-bank" and store.get_meta("created_at")


def test_a_bank_left_without_its_marker_by_an_older_version_is_opened(tmp_path):
    store = make_bank(tmp_path, vectors=False)
    store.db.execute("DELETE FROM meta")
    store.close()
    store = Store.open(tmp_path / "bank.db")
    assert store.get_meta("marker") == "ramem-bank"
    store.db.execute("DELETE FROM meta")
    store.db.execute("INSERT INTO schema_migrations VALUES ('not_ours', 0)")
    store.close()
    with pytest.raises(StoreError, match="not a ramem bank"):
        Store.open(tmp_path / "bank.db")


def test_non_sqlite_file_is_refused(tmp_path):
    path = tmp_path / "notes.db"
    path.write_text("these are my notes, not a database\n" * 100)
    with pytest.raises(StoreError, match="not a SQLite database"):
        Store.open(path)


def test_missing_bank_is_not_created_when_reading(tmp_path):
    with pytest.raises(StoreError, match="no bank"):
        Store.open(tmp_path / "absent.db", create=False)
    assert not (tmp_path / "absent.db").exists()


def test_a_deleted_meta_key_reads_as_absent(tmp_path):
    store = make_bank(tmp_path, vectors=False)
    store.set_meta("embedder_folder", "/models/minilm")
    store.delete_meta("embedder_folder")
    assert store.get_meta("embedder_folder") is None
    store.delete_meta("embedder_folder")  # deleting an absent key changes nothing
    assert store.get_meta("marker") == "ramem-bank"


def test_dropping_the_vectors_forgets_the_embedder(tmp_path):
    store = make_bank(tmp_path)
    store.drop_vectors()
    assert store.embedder_fingerprint() is None and not store.has_vectors()
    store.bind_embedder(EmbedderFingerprint("other", DIM * 2, "b" * 64))  # no refusal now


def test_other_embedder_or_dimension_is_refused(tmp_path):
    store = make_bank(tmp_path)
    with pytest.raises(StoreError, match="reindex"):
        store.bind_embedder(EmbedderFingerprint("other", DIM, "a" * 64))
    with pytest.raises(StoreError, match="reindex"):
        store.bind_embedder(EmbedderFingerprint("test-embedder", DIM * 2, "a" * 64))
    store.bind_embedder(FINGERPRINT)  # the same one is fine


def test_fts_and_vectors_follow_inserts_and_deletes(tmp_path):
    store = make_bank(tmp_path)
    ids = add_conversation(store, ["apples are red", "the sky is blue", "grass is green"])
    store.add_vectors(ids, np.eye(DIM, dtype=np.float32)[:3])
    assert store.fts_row_count() == store.memory_count() == store.vector_count() == 3

    assert store.delete_memory(ids[1])
    assert store.fts_row_count() == store.memory_count() == store.vector_count() == 2
    assert store.fts_integrity_ok()
    hits = store.content_candidates(query_vector=None, fts_query=fts_match_query("sky blue"),
                                  depth=10, limit=10)
    assert hits == []


def test_what_is_read_from_the_bank_has_a_stored_id_what_is_not_saved_yet_has_none(tmp_path):
    store = make_bank(tmp_path, vectors=False)
    (memory_id,) = add_conversation(store, ["apples are red"])
    assert store.get_memories([memory_id])[memory_id].stored_id == memory_id
    (turn,) = store.conversation_turns(store.conversation_id("c"))
    assert turn.id is not None and turn.stored_id == turn.id
    unsaved_memory = MemoryRecord(content="not saved", kind="turn", conversation="c",
                                  session_start=0, session_end=DAY)
    unsaved_turn = Turn(speaker="A", text="not saved", timestamp=0, session_ordinal=1)
    for unsaved in (unsaved_memory, unsaved_turn):
        with pytest.raises(ValueError, match="not stored yet"):
            _ = unsaved.stored_id


def test_fts_follows_content_updates(tmp_path):
    store = make_bank(tmp_path)
    [memory_id] = add_conversation(store, ["old words here"])
    store.db.execute("UPDATE memories SET content = 'fresh text' WHERE id = ?", (memory_id,))
    assert store.fts_integrity_ok()
    found = store.content_candidates(query_vector=None, fts_query=fts_match_query("fresh"),
                                   depth=5, limit=5)
    assert [r.id for r in found] == [memory_id]
    stale = store.content_candidates(query_vector=None, fts_query=fts_match_query("old"),
                                   depth=5, limit=5)
    assert stale == []


@pytest.mark.parametrize(
    "question",
    [
        'What did "Caroline say',
        "paint* NEAR(sunset, 3)",
        "-negative - minus",
        "column:value title:foo",
        "AND OR NOT",
        "what is it?",
        "(((",
        "^start",
        "don't won't",
        "🙂 emoji only 🙂",
        "   ",
    ],
)
def test_hostile_fts_text_never_breaks_search(tmp_path, question):
    store = make_bank(tmp_path)
    add_conversation(store, ["Caroline said she likes to paint the sunset", "what is it"])
    rows = store.content_candidates(query_vector=None, fts_query=fts_match_query(question),
                                  depth=10, limit=10)
    assert isinstance(rows, list)


def test_stopword_only_question_still_searches_its_words(tmp_path):
    store = make_bank(tmp_path)
    [memory_id, _] = add_conversation(store, ["what is it", "something else entirely"])
    rows = store.content_candidates(query_vector=None, fts_query=fts_match_query("what is it?"),
                                  depth=10, limit=10)
    assert rows[0].id == memory_id


def test_fts_query_quotes_every_token():
    assert fts_match_query('paint* "sunset" NEAR') == '"paint" OR "sunset" OR "near"'
    assert fts_match_query("?!") is None


def python_rrf(dense: list[int], lexical: list[int], kappa: float) -> list[int]:
    scores: dict[int, float] = {}
    best: dict[int, int] = {}
    for ranking in (dense, lexical):
        for rank, memory_id in enumerate(ranking, 1):
            scores[memory_id] = scores.get(memory_id, 0.0) + 1.0 / (kappa + rank)
            best[memory_id] = min(best.get(memory_id, 1 << 40), rank)
    lists = {m: (m in dense) + (m in lexical) for m in scores}
    return sorted(scores, key=lambda m: (-scores[m], -lists[m], best[m], m))


@pytest.mark.parametrize("seed", range(8))
def test_rrf_in_sql_equals_python_reference(tmp_path, seed):
    rng = random.Random(seed)
    vocabulary = [f"w{i}" for i in range(12)]
    texts = [" ".join(rng.choices(vocabulary, k=rng.randint(1, 6))) for _ in range(60)]
    store = make_bank(tmp_path)
    ids = add_conversation(store, texts)
    vectors = np.random.default_rng(seed).normal(size=(len(ids), DIM)).astype(np.float32)
    store.add_vectors(ids, vectors)
    query = " ".join(rng.sample(vocabulary, 3))
    query_vector = np.random.default_rng(seed + 100).normal(size=DIM).astype(np.float32)
    depth = 25

    fused = store.content_candidates(query_vector=query_vector, fts_query=fts_match_query(query),
                                   depth=depth, limit=100)

    unit = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
    cosine_distance = 1 - unit @ (query_vector / np.linalg.norm(query_vector))
    dense_order = [ids[i] for i in np.argsort(cosine_distance, kind="stable")][:depth]
    lexical_order = [
        r[0] for r in store.db.execute(
            "SELECT rowid FROM memories_fts WHERE memories_fts MATCH ? ORDER BY rank, rowid "
            "LIMIT ?", (fts_match_query(query), depth))
    ]
    assert [r.id for r in fused] == python_rrf(dense_order, lexical_order, 60.0)
    for row in fused:
        expected_dense = dense_order.index(row.id) + 1 if row.id in dense_order else None
        assert row.dense_rank == expected_dense


def test_episode_filter_in_sql_equals_python_reference(tmp_path):
    rng = random.Random(7)
    starts = [i * 10 * DAY for i in range(12)]
    texts = [" ".join(rng.choices(["a1", "b2", "c3", "d4"], k=3)) for _ in range(48)]
    store = make_bank(tmp_path)
    ids = add_conversation(store, texts, session_starts=starts)
    vectors = np.random.default_rng(3).normal(size=(len(ids), DIM)).astype(np.float32)
    store.add_vectors(ids, vectors)
    from ramem_local.types import TimeRange

    raw = TimeRange(35 * DAY, 38 * DAY)
    wide = raw.widened(5)
    rows = store.session_overlap_candidates(
        query_vector=vectors[0], fts_query=fts_match_query("a1 b2"), depth=48, limit=48,
        raw_range=raw, wide_range=wide,
    )
    spans = {m.id: m.session_range for m in store.get_memories(ids).values()}
    expected = {i for i in ids if spans[i].overlaps(wide)}
    assert {r.id for r in rows} == expected
    for row in rows:
        span = spans[row.id]
        # proximity counts from when it was said: its session's first day at most
        said_day = TimeRange(span.start, min(span.end, span.start + DAY))
        if raw.start <= span.start < raw.end:
            expected_tier = 0  # said inside the range
        elif said_day.overlaps(raw):
            expected_tier = 1  # the day it was said reaches into the range
        else:
            expected_tier = 2 + said_day.gap_seconds(raw) // DAY
        assert row.tier == expected_tier
    assert [(r.tier, r.fused_rank) for r in rows] == sorted((r.tier, r.fused_rank) for r in rows)


def test_what_happened_in_a_range_equals_a_python_reference(tmp_path):
    """``Store.occurrences`` without words reads only the memories the indexes place near the
    range (``retrieval_sql.HAPPENED_IN_THE_RANGE``); it must find what a scan of every memory
    would: placed by their event time, else their first turn, else their session's start."""
    rng = random.Random(11)
    store = make_bank(tmp_path)
    ids = add_conversation(store, [f"did thing {i}" for i in range(40)],
                           session_starts=[i * 3 * DAY for i in range(10)])
    conversation_id = store.conversation_id("c")
    start, end = store.session_span(store.add_sessions(conversation_id, [
        Session(ordinal=11, start=40 * DAY)])[11])
    for index in range(6):  # extracted memories, no source turns: placed by the session
        ids.append(store.add_memory(MemoryRecord(
            content=f"noted fact {index}", kind="extracted", conversation="c",
            session_start=start, session_end=end, persons=["A"]), f"x:{index}",
            conversation_id))
    for turn_id, in store.db.execute("SELECT id FROM turns WHERE id % 4 = 0").fetchall():
        # a turn said days after its session began (a chat left open)
        store.db.execute("UPDATE turns SET timestamp = timestamp + ? WHERE id = ?",
                         (rng.randrange(1, 3 * DAY), turn_id))
    for memory_id in rng.sample(ids, 15):  # an event time days away from when it was said
        store.db.execute("UPDATE memories SET event_start = ?1, event_end = ?1 WHERE id = ?2",
                         (rng.randrange(0, 45 * DAY), memory_id))
    happened = {memory_id: when for memory_id, when in store.db.execute(
        "SELECT m.id, coalesce(m.event_start, (SELECT min(t.timestamp) FROM memory_turns AS mt"
        " JOIN turns AS t ON t.id = mt.turn_id WHERE mt.memory_id = m.id), m.session_start)"
        " FROM memories AS m")}
    for _ in range(30):
        low = rng.randrange(0, 45 * DAY)
        high = low + rng.randrange(1, 12 * DAY)
        found = store.occurrences(fts_query=None, happened_from=low, happened_until=high,
                                  newest_first=False, limit=-1, assistant="nobody")
        expected = sorted((when, memory_id) for memory_id, when in happened.items()
                          if low <= when < high)
        assert [(when, memory_id) for memory_id, when in found] == expected


def test_at_equal_fused_score_the_memory_both_lists_found_comes_first(tmp_path):
    """Inside the range a memory missing from BM25 gets the rank after its last hit, so dense 1
    alone ties with dense 2 + BM25 1: the agreement of two lists breaks the tie, not the id."""
    from ramem_local.types import TimeRange

    store = make_bank(tmp_path)
    dense_only, both = add_conversation(store, ["walked to the lake", "hiked up the marsh"])
    unit = np.eye(DIM, dtype=np.float32)
    store.add_vectors([dense_only, both], np.stack([unit[0], unit[0] + 0.5 * unit[1]]))
    raw = TimeRange(0, DAY)
    rows = store.session_overlap_candidates(
        query_vector=unit[0], fts_query=fts_match_query("hiked"), depth=10, limit=10,
        raw_range=raw, wide_range=raw.widened(5), fill_missing_ranks=True,
    )
    by_id = {r.id: r for r in rows}
    assert (by_id[dense_only].dense_rank, by_id[dense_only].bm25_rank) == (1, None)
    assert (by_id[both].dense_rank, by_id[both].bm25_rank) == (2, 1)
    assert by_id[dense_only].rrf == pytest.approx(by_id[both].rrf)
    assert [r.id for r in rows] == [both, dense_only]


def test_new_session_moves_the_previous_last_span_end(tmp_path):
    store = make_bank(tmp_path)
    [memory_id] = add_conversation(store, ["first day"], session_starts=(0,))
    assert store.get_memories([memory_id])[memory_id].session_end == DAY
    conversation_id = store.conversation_id("c")
    store.add_sessions(conversation_id, [Session(ordinal=2, start=3 * DAY)])
    memory = store.get_memories([memory_id])[memory_id]
    assert (memory.session_start, memory.session_end) == (0, 3 * DAY)


def test_neighbour_migration_fills_banks_written_before_it(tmp_path, monkeypatch):
    import ramem_local.store.bank as bank_module

    older = [m for m in MIGRATIONS if m.__name__ != "m003_neighbour_text"]
    monkeypatch.setattr("ramem_local.store.schema.MIGRATIONS", older)
    monkeypatch.setattr(bank_module, "MIGRATIONS", older)
    store = make_bank(tmp_path, vectors=False)
    ids = add_conversation(store, ["we planned a tournament", "for charity, so generous",
                                   "unrelated words"])
    store.close()
    monkeypatch.undo()

    upgraded = Store.open(tmp_path / "bank.db")
    assert upgraded.schema_version == len(MIGRATIONS)
    neighbours = dict(upgraded.db.execute("SELECT id, neighbours FROM memories"))
    assert neighbours == {
        ids[0]: "for charity, so generous",
        ids[1]: "we planned a tournament unrelated words",
        ids[2]: "for charity, so generous",
    }
    hits = upgraded.content_candidates(query_vector=None, fts_query=fts_match_query("charity"),
                                       depth=5, limit=5)
    assert [r.id for r in hits][0] == ids[1], "its own words first, then its neighbours'"
    assert {r.id for r in hits} == set(ids)
    assert upgraded.fts_integrity_ok()


@pytest.mark.parametrize("fill", [True, False])
def test_missing_ranks_inside_the_range_rank_after_the_lists_last_hit(tmp_path, fill):
    store = make_bank(tmp_path)
    texts = ["apple pie"] + [f"filler text {i}" for i in range(9)]
    ids = add_conversation(store, texts, session_starts=(0,))
    vectors = np.random.default_rng(5).normal(size=(len(ids), DIM)).astype(np.float32)
    store.add_vectors(ids, vectors)
    from ramem_local.types import TimeRange

    raw = TimeRange(0, DAY)
    rows = store.session_overlap_candidates(
        query_vector=vectors[3], fts_query=fts_match_query("apple"), raw_range=raw,
        wide_range=raw, depth=25, limit=25, fill_missing_ranks=fill)
    lexical_hits = sum(1 for r in rows if r.bm25_rank is not None)
    dense_hits = sum(1 for r in rows if r.dense_rank is not None)
    assert lexical_hits == 1 and dense_hits == len(ids)
    for row in rows:
        expected = 1 / (60 + row.dense_rank)
        if row.bm25_rank is not None:
            expected += 1 / (60 + row.bm25_rank)
        elif fill:
            expected += 1 / (60 + lexical_hits + 1)
        assert row.rrf == pytest.approx(expected)


@pytest.mark.parametrize("ties", [False, True])
def test_neighbour_text_written_with_each_batch_equals_a_full_refresh(tmp_path, ties):
    """Ingest writes each turn memory with the neighbours its batch knows (so FTS5, with
    secure-delete, does not rewrite every row) and refreshes only the turns next to the
    batch's: the result must be exactly what the store's SQL computes from all turns, also
    for turns given out of order, sessions that span batches, and (``ties``) turns of one
    time, ordered by id, whose neighbours come in other batches."""
    import json

    from ramem_local.api import Memory
    from ramem_local.ingest.pipeline import DEFAULT_BATCH
    from ramem_local.store.schema import REFRESH_NEIGHBOURS

    count = 2 * DEFAULT_BATCH + 99  # prime to 7: (i * 7) % count visits every slot once

    def minute(i: int) -> int:
        return (i * 7) % count // 10 if ties else (i * 7) % count

    rows = [{"speaker": "A" if i % 2 else "B", "text": f"turn {i} says word{i}",
             "timestamp": 1700000000 + 60 * minute(i),
             "session": (i * 7) % count // (count // 3 + 1) + 1}
            for i in range(count)]
    assert len(rows) > 2 * DEFAULT_BATCH and count % 7
    path = tmp_path / "chat.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    bank = tmp_path / "bank.db"
    with Memory.open(bank) as memory:
        memory.ingest(path)
        store = memory.store
        stored = dict(store.db.execute("SELECT id, neighbours FROM memories"))
        store.db.execute(REFRESH_NEIGHBOURS, {"conversation_id": None, "session_ids": None})
        refreshed = dict(store.db.execute("SELECT id, neighbours FROM memories"))
    assert stored == refreshed
    assert sum(1 for text in stored.values() if text) == count


def test_the_neighbours_of_a_batch_are_found_without_scanning_the_bank(tmp_path):
    """Ingest refreshes the neighbour text around every batch: that must be index lookups
    (a scan of turns or memories per batch made ingest time per turn grow with the bank)."""
    import json

    from ramem_local.store.schema import NEIGHBOURS_AROUND

    store = make_bank(tmp_path, vectors=False)
    add_conversation(store, [f"t{i}" for i in range(50)], session_starts=(0, DAY))
    plan = [row[3] for row in store.db.execute(
        "EXPLAIN QUERY PLAN " + NEIGHBOURS_AROUND, {"turn_ids": json.dumps([1, 2, 3])})]
    scans = [step for step in plan if step.startswith("SCAN")]
    assert scans and all(step.startswith(("SCAN chosen", "SCAN x")) for step in scans), plan
    assert any("turns_session_time" in step for step in plan), plan


def test_a_batch_knows_the_neighbours_of_its_own_turns_session_by_session():
    from ramem_local.ingest.pipeline import neighbours_within

    turns = [Turn("A", "two", 20, 1), Turn("B", "other session", 5, 2),
             Turn("A", "one", 10, 1), Turn("A", "three", 30, 1)]
    assert neighbours_within(turns) == ["one three", "", "two", "two"]
