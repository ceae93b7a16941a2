"""The int8 dense index: the content list's candidates come from an in-RAM scan of int8 codes
and are rescored exactly in SQL. It finds the exact nearest memories where sign bits do not
(i.i.d. random vectors), honours the content list's scope filters, is read again whenever any
process changes the bank's vectors (banks written before it: tests/test_vector_storage.py)."""

from __future__ import annotations

import numpy as np
import pytest

from ramem_local.store import Store
from ramem_local.store.int8_matrix import (
    CODE_OFFSET,
    INTEGER_PRODUCT_GRAPH,
    QUERY_STEPS,
    Int8Matrix,
    _integer_product,
    _query_steps,
    quantise,
)
from ramem_local.text import fts_match_query
from ramem_local.types import DAY, EmbedderFingerprint, MemoryRecord, TimeRange
from tests.test_binary_index import filled_bank

WIDE = 256


def unit_rows(rng: np.random.Generator, n: int, dim: int) -> np.ndarray:
    rows = rng.standard_normal((n, dim)).astype(np.float32)
    return rows / np.linalg.norm(rows, axis=1, keepdims=True)


def random_bank(tmp_path, n: int = 3000, dim: int = WIDE) -> tuple[Store, list[int], np.ndarray]:
    """n memories with i.i.d. random unit vectors: the ten nearest of a query are barely
    nearer than the rest, the worst case for a quantised prefilter."""
    store = Store.open(tmp_path / "random.db")
    store.bind_embedder(EmbedderFingerprint("random", dim, "b" * 64))
    conversation_id = store.ensure_conversation("c")
    ids = []
    with store.atomic():
        for i in range(n):
            record = MemoryRecord(content=f"note {i}", kind="fact", conversation="c",
                                  session_start=i * 60, session_end=i * 60 + 60)
            ids.append(store.add_memory(record, dedup_key=str(i),
                                        conversation_id=conversation_id))
        vectors = unit_rows(np.random.default_rng(5), n, dim)
        store.add_vectors(ids, vectors)
    return store, ids, vectors


def dense_ids(store: Store, query: np.ndarray, index: str, **kwargs) -> list[int]:
    rows = store.content_candidates(query_vector=query, fts_query=None, depth=25, limit=10,
                                    dense_index=index, candidates=kwargs.pop("candidates", 25),
                                    **kwargs)
    return [row.id for row in rows]


def test_quantised_codes_keep_each_direction():
    rng = np.random.default_rng(0)
    vectors = unit_rows(rng, 50, WIDE) * rng.uniform(0.5, 3.0, (50, 1)).astype(np.float32)
    scales, codes = quantise(vectors)
    assert codes.dtype == np.uint8 and codes.shape == (50, WIDE)
    restored = scales[:, None] * (codes.astype(np.float32) - 128)
    units = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
    assert np.abs(restored - units).max() <= scales.max() / 2 + 1e-7
    assert (np.abs(codes.astype(int) - 128).max(axis=1) == 127).all(), "the full range is used"
    zero_scale, zero_codes = quantise(np.zeros((1, WIDE), dtype=np.float32))
    assert zero_scale[0] == 0 and (zero_codes == 128).all()


def test_int8_finds_the_exact_nearest_where_sign_bits_do_not(tmp_path):
    store, ids, vectors = random_bank(tmp_path)
    queries = unit_rows(np.random.default_rng(6), 20, WIDE)
    recall = {"int8": [], "binary": []}
    for query in queries:
        exact = [ids[i] for i in np.argsort(-(vectors @ query), kind="stable")[:10]]
        assert dense_ids(store, query, "exact") == exact
        for index in recall:
            recall[index].append(len(set(dense_ids(store, query, index)) & set(exact)) / 10)
    # 25 candidates of 3,000: int8 codes keep the ranking, sign bits lose most of it.
    assert np.mean(recall["int8"]) >= 0.95
    assert np.mean(recall["binary"]) < np.mean(recall["int8"])


def test_int8_scan_honours_the_conversation_scope_and_the_turn_exclusion(tmp_path):
    store, ids, vectors = filled_bank(tmp_path, n=30)  # 30 turn memories in conversation "c"
    other = store.ensure_conversation("other")
    facts = []
    for i in range(5):
        record = MemoryRecord(content=f"fact {i}", kind="fact", conversation="other",
                              session_start=0, session_end=DAY)
        facts.append(store.add_memory(record, dedup_key=f"f{i}", conversation_id=other))
    store.add_vectors(facts, vectors[:5])  # the same directions as five turns
    query = vectors[2]
    scoped = dense_ids(store, query, "int8", conversation_id=other)
    assert set(scoped) == set(facts) and scoped[0] == facts[2]
    no_turns = dense_ids(store, query, "int8", exclude_turns=True)
    assert set(no_turns) == set(facts)
    everything = dense_ids(store, query, "int8")
    assert set(everything[:2]) == {ids[2], facts[2]}
    assert dense_ids(store, query, "int8", conversation_id=other + 1) == []


def add_fact(store: Store, text: str, vector: np.ndarray, conversation: str = "facts") -> int:
    conversation_id = store.ensure_conversation(conversation)
    record = MemoryRecord(content=text, kind="fact", conversation=conversation, session_start=0,
                          session_end=DAY)
    memory_id = store.add_memory(record, dedup_key=text, conversation_id=conversation_id)
    assert memory_id is not None
    store.add_vectors([memory_id], vector[None])
    return memory_id


def test_the_matrix_follows_this_and_other_processes_writes(tmp_path):
    store, ids, vectors = filled_bank(tmp_path, n=20)
    probe = unit_rows(np.random.default_rng(9), 1, 8)[0]
    assert ids[0] not in dense_ids(store, probe, "int8")[:1]

    mine = add_fact(store, "a memory of this process", probe)
    assert dense_ids(store, probe, "int8")[0] == mine

    other_process = Store.open(tmp_path / "bank.db")
    new_id = add_fact(other_process, "a memory of another process", -probe)
    other_process.close()
    assert dense_ids(store, -probe, "int8")[0] == new_id

    assert store.delete_memory(mine)
    assert mine not in dense_ids(store, probe, "int8")
    assert len(store.int8_matrix()) == 21

    store.drop_vectors()
    store.bind_embedder(EmbedderFingerprint("test-embedder", 8, "a" * 64))
    assert len(store.int8_matrix()) == 0
    assert dense_ids(store, probe, "int8") == []


def test_an_unchanged_bank_is_read_once(tmp_path):
    store, _, vectors = filled_bank(tmp_path, n=20)
    first = store.int8_matrix()
    store.content_candidates(query_vector=vectors[0], fts_query=None, depth=25, limit=10,
                             dense_index="int8")
    assert store.int8_matrix() is first


def context_ids(store: Store, query: np.ndarray, index: str, raw: TimeRange, buffer: int,
                **kwargs) -> list[int]:
    rows = store.session_overlap_candidates(
        query_vector=query, fts_query=kwargs.pop("fts_query", None), raw_range=raw,
        wide_range=TimeRange(raw.start - buffer, raw.end + buffer), depth=25, limit=10,
        dense_index=index, candidates=kwargs.pop("candidates", 25), **kwargs)
    return [row.id for row in rows]


@pytest.mark.parametrize("index", ["exact", "binary", "int8"])
def test_every_index_gives_the_same_lists_on_a_small_bank(tmp_path, index):
    store, _, vectors = filled_bank(tmp_path)
    query = vectors[11] * 0.5 + vectors[12] * 0.5
    assert dense_ids(store, query, index, candidates=100) == dense_ids(store, query, "exact")
    raw = TimeRange(8 * DAY, 15 * DAY)
    fts = fts_match_query("lemon cake")
    context = context_ids(store, query, index, raw, 2 * DAY, fts_query=fts, candidates=100)
    assert context and context == context_ids(store, query, "exact", raw, 2 * DAY,
                                               fts_query=fts)


def test_int8_context_list_finds_the_nearest_inside_the_range(tmp_path):
    store, ids, vectors = random_bank(tmp_path)  # one memory a minute for 50 hours
    raw = TimeRange(600 * 60, 1800 * 60)  # no buffer: all in tier 0, ranked by distance
    starts = np.arange(len(ids)) * 60
    inside = np.flatnonzero((starts >= raw.start) & (starts < raw.end))
    recall = []
    for query in unit_rows(np.random.default_rng(7), 20, WIDE):
        exact = [ids[i] for i in inside[np.argsort(-(vectors[inside] @ query),
                                                   kind="stable")[:10]]]
        assert context_ids(store, query, "exact", raw, 0) == exact
        found = context_ids(store, query, "int8", raw, 0)
        assert set(found) <= {ids[i] for i in inside}
        recall.append(len(set(found) & set(exact)) / 10)
    assert np.mean(recall) >= 0.95


def test_int8_context_list_follows_a_changed_episode(tmp_path):
    store, ids, vectors = filled_bank(tmp_path, n=12)  # sessions on days 0..36
    raw = TimeRange(100 * DAY, 101 * DAY)
    assert context_ids(store, vectors[1], "int8", raw, DAY) == []
    store._mirror_episodes_to_vectors([(ids[1], 100 * DAY, 101 * DAY, None, None)])
    store.db.execute("UPDATE memories SET session_start = ?, session_end = ? WHERE id = ?",
                     (100 * DAY, 101 * DAY, ids[1]))
    assert context_ids(store, vectors[1], "int8", raw, DAY) == [ids[1]]


def test_the_shipped_product_graph_is_the_one_the_onnx_builder_makes():
    """The scan's ONNX graph is shipped as bytes so a search never imports ``onnx`` (a second
    of a one-off search); rebuilt here, the bytes must describe the same model. If this fails
    after a deliberate change, paste the hex printed below into ``INTEGER_PRODUCT_GRAPH``."""
    onnx = pytest.importorskip("onnx")
    from onnx import TensorProto, helper

    graph = helper.make_graph(
        [helper.make_node("MatMulInteger", ["codes", "query", "offset"], ["dots"])],
        "int8_scan",
        [helper.make_tensor_value_info("codes", TensorProto.UINT8, ["N", "D"]),
         helper.make_tensor_value_info("query", TensorProto.INT8, ["D", 1])],
        [helper.make_tensor_value_info("dots", TensorProto.INT32, ["N", 1])],
        initializer=[helper.make_tensor("offset", TensorProto.UINT8, [], [CODE_OFFSET])],
    )
    built = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    built.ir_version = 8
    onnx.checker.check_model(built)
    shipped = onnx.load_from_string(INTEGER_PRODUCT_GRAPH)
    assert shipped == built, f"rebuilt graph: {built.SerializeToString().hex()}"


def exact_product(codes: np.ndarray, query: np.ndarray, steps: int) -> np.ndarray:
    """(code − 128) · the query quantised to ``steps`` a side, in int64, scaled to ±127."""
    unit = query / np.linalg.norm(query)
    signed = np.clip(np.rint(unit / (np.abs(unit).max() / steps)), -steps, steps)
    dots = (codes.astype(np.int64) - CODE_OFFSET) @ signed.astype(np.int64)
    return (dots * (QUERY_STEPS / steps)).astype(np.float32)


def test_the_scan_product_is_exact_integer_arithmetic():
    rng = np.random.default_rng(3)
    _, codes = quantise(unit_rows(rng, 40, WIDE))
    query = unit_rows(rng, 1, WIDE)[0]
    np.testing.assert_allclose(Int8Matrix._dots(codes, query),
                               exact_product(codes, query, _query_steps()), rtol=1e-6)
    if _query_steps() == QUERY_STEPS:  # this CPU's product does not saturate: ±127 exactly
        _, query_codes = quantise(query[None, :])
        expected = (codes.astype(np.int64) - CODE_OFFSET) @ (query_codes[0].astype(np.int64)
                                                             - CODE_OFFSET)
        assert np.array_equal(Int8Matrix._dots(codes, query), expected.astype(np.float32))


def test_the_scan_product_stays_exact_where_codes_and_query_are_both_large():
    """Codes near 255 against query steps near 127 are where a CPU without VNNI saturates its
    16-bit sums of two products (AMD EPYC, AVX2: 0.879 read for 0.900 in the neighbourhood
    test below): the product is exact at the steps ``_query_steps`` chose for this CPU, and
    within a step of the ±127 product."""
    rng = np.random.default_rng(5)
    query = np.abs(rng.normal(size=WIDE)).astype(np.float32) + 1.0  # every step large
    codes = np.full((3, WIDE), 255, dtype=np.uint8)
    codes[1] = 128 + np.clip(np.rint(query / query.max() * 127), 0, 127).astype(np.uint8)
    codes[2, ::2] = 1
    got = Int8Matrix._dots(codes, query)
    np.testing.assert_allclose(got, exact_product(codes, query, _query_steps()), rtol=1e-6)
    at_127 = exact_product(codes, query, QUERY_STEPS)
    assert np.all(np.abs(got - at_127) <= 0.02 * np.abs(at_127).max())


def test_a_pool_larger_than_the_candidates_has_only_its_int8_nearest_scored(tmp_path,
                                                                            monkeypatch):
    """A filtered pool of at most ``candidates`` memories is scored whole (exact search);
    from a larger one only the int8 scan's ``rescored(depth)`` nearest are read and scored
    exactly (each read walks its float block's overflow chain), and on i.i.d. random vectors,
    the worst case, they still hold the exact ten nearest."""
    import ramem_local.store.float_blocks as float_blocks
    from ramem_local.store.memories import rescored

    store, ids, vectors = random_bank(tmp_path, n=600)
    scored: list[int] = []
    read_at_slots = float_blocks.FloatPlaces.vectors

    def counted(places, db, memory_ids, dimension):
        scored.append(len(memory_ids))
        return read_at_slots(places, db, memory_ids, dimension)

    monkeypatch.setattr(float_blocks.FloatPlaces, "vectors", counted)
    queries = unit_rows(np.random.default_rng(8), 10, WIDE)
    for query in queries:
        exact = [ids[i] for i in np.argsort(-(vectors @ query), kind="stable")[:10]]
        assert dense_ids(store, query, "int8", candidates=200) == exact
        assert dense_ids(store, query, "int8", candidates=600) == exact
    assert scored == [rescored(25), 600] * len(queries)
    assert rescored(25) == 50 and rescored(40) == 80


def clustered_bank(tmp_path, clusters: int = 10, size: int = 30, dim: int = WIDE,
                   ) -> tuple[Store, np.ndarray, list[list[int]]]:
    """``clusters`` tight groups of ``size`` memories around random centres (cosine about
    0.9 to their centre): a memory's nearest others are the rest of its group."""
    rng = np.random.default_rng(11)
    centres = unit_rows(rng, clusters, dim)
    store = Store.open(tmp_path / "clustered.db")
    store.bind_embedder(EmbedderFingerprint("clustered", dim, "c" * 64))
    conversation_id = store.ensure_conversation("c")
    groups: list[list[int]] = []
    with store.atomic():
        for c in range(clusters):
            rows = centres[c] + 0.03 * rng.standard_normal((size, dim)).astype(np.float32)
            ids = []
            for i in range(size):
                record = MemoryRecord(content=f"group {c} note {i}", kind="fact",
                                      conversation="c", session_start=0, session_end=DAY)
                ids.append(store.add_memory(record, dedup_key=f"{c}-{i}",
                                            conversation_id=conversation_id))
            store.add_vectors(ids, rows)
            groups.append(ids)
    return store, centres, groups


def test_a_neighbourhood_is_as_close_as_the_group_its_memory_belongs_to(tmp_path):
    """A tenth of the bank's pairs are within a group: the closest 5% of pairs are some of
    them, so a memory is read by (part of) its own group."""
    store, centres, groups = clustered_bank(tmp_path)
    toward = centres[0]
    member, stranger = groups[0][0], groups[1][0]
    closeness = store.neighbourhood_closeness([member, stranger], toward, 0.05)
    vectors = store.vectors_of(groups[0])
    own_group = np.mean([v @ toward / np.linalg.norm(v) for v in vectors.values()])
    assert closeness[member] == pytest.approx(own_group, abs=0.02)
    assert closeness[member] > 0.8 and abs(closeness[stranger]) < 0.2


def test_a_text_written_again_is_one_neighbour_not_as_many_as_its_copies(tmp_path):
    """Twenty copies of one sentence near group 0 weigh in a member's neighbourhood as one
    (counted each, they moved its mean from 0.00 to 0.21, toward their own 0.26), and copies
    of the member itself add nothing. (The floor moves a little with the pool they join.)"""
    store, centres, groups = clustered_bank(tmp_path)
    toward, member = centres[1], groups[0][0]
    copy = 0.95 * centres[0] + 0.31 * centres[1]
    add_fact(store, "the same words", copy, conversation="c")
    once = store.neighbourhood_closeness([member], toward, 0.05)[member]
    for i in range(19):
        add_fact(store, f"the same words, copy {i}", copy, conversation="c")
    assert store.neighbourhood_closeness([member], toward, 0.05)[member] == \
        pytest.approx(once, abs=0.03)
    own = store.vectors_of([member])[member]
    for i in range(5):
        add_fact(store, f"the member again {i}", own, conversation="c")
    assert store.neighbourhood_closeness([member], toward, 0.05)[member] == \
        pytest.approx(once, abs=0.03)


def test_the_neighbour_floor_is_the_similarity_the_closest_share_of_pairs_reach(tmp_path):
    """Within a group memories are about 0.8 alike, across groups about 0: the closest 5%
    of pairs are within groups, the closest half reach across them."""
    store, _, _ = clustered_bank(tmp_path)
    matrix = store.int8_matrix()
    pool = np.arange(len(matrix))
    assert 0.6 < matrix.neighbour_floor(pool, 0.05) < 0.95
    assert abs(matrix.neighbour_floor(pool, 0.5)) < 0.2


def test_a_memory_like_no_other_is_read_by_itself(tmp_path):
    """Between two groups a memory is less like any of them than the bank's closest pairs
    are alike: its neighbourhood is itself, however near the groups are; and alone in its
    conversation there is no bank to read it by."""
    store, centres, groups = clustered_bank(tmp_path)
    toward = centres[0]
    vector = 0.6 * centres[0] + 0.8 * centres[1]
    between = add_fact(store, "between", vector)
    closeness = store.neighbourhood_closeness([between, groups[1][0]], toward, 0.05)
    own = vector @ toward / np.linalg.norm(vector)
    assert own > 0.5 and closeness[between] == pytest.approx(own, abs=0.01)
    assert abs(closeness[groups[1][0]]) < 0.2
    whole = store.neighbourhood_closeness([between], toward, 0.05,
                                          conversation_id=store.conversation_id("facts"))
    assert whole == {}  # alone in its conversation: no other memory to read it by


def test_a_neighbourhood_stays_in_its_own_conversation(tmp_path):
    """A memory of another conversation lying among group 1 is read by itself, not by group
    1: a journal's entries are measured by entries, not by a chat about the same things."""
    store, centres, groups = clustered_bank(tmp_path)
    toward = centres[1]
    outsider = add_fact(store, "among group 1", centres[1])
    closeness = store.neighbourhood_closeness([outsider, groups[1][0]], toward, 0.05)
    vectors = store.vectors_of(groups[1])
    group = np.mean([v @ toward / np.linalg.norm(v) for v in vectors.values()])
    assert group < 0.95
    assert closeness[outsider] == pytest.approx(1.0, abs=0.01)  # itself alone
    assert closeness[groups[1][0]] == pytest.approx(group, abs=0.02)


def test_the_integer_products_threads_sleep_once_a_product_is_done():
    """Spinning threads of the product's session took the cores the search's SQL and the next
    query's encoding needed (results/bench-search.txt)."""
    options = _integer_product().get_session_options()
    assert options.get_session_config_entry("session.intra_op.allow_spinning") == "0"
