"""The binary dense index (Hamming prefilter over the int8 codes' signs + exact rescoring):
exact whenever the filtered pool is no larger than the candidates; the vectors it reads are
kept in step with deletes and span changes."""

from __future__ import annotations

import numpy as np
import pytest

from ramem_local.retrieve import RetrievalSettings
from ramem_local.store import Store
from ramem_local.text import fts_match_query
from ramem_local.types import DAY, TimeRange
from tests.test_store import DIM, FINGERPRINT, add_conversation, make_bank

WORDS = ["cake", "pottery", "school", "fair", "sister", "birthday", "lemon", "class"]


def filled_bank(tmp_path, n: int = 60, seed: int = 0) -> tuple[Store, list[int], np.ndarray]:
    rng = np.random.default_rng(seed)
    store = make_bank(tmp_path)
    texts = [" ".join(rng.choice(WORDS, 3)) + f" {i}" for i in range(n)]
    ids = add_conversation(store, texts, session_starts=[d * DAY for d in range(0, 40, 4)])
    vectors = rng.standard_normal((n, DIM)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    store.add_vectors(ids, vectors)
    return store, ids, vectors


def both(store: Store, method: str, candidates: int, **kwargs) -> tuple[list, list]:
    search = getattr(store, method)
    exact = search(dense_index="exact", **kwargs)
    binary = search(dense_index="binary", candidates=candidates, **kwargs)
    return exact, binary


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_binary_equals_exact_when_the_pool_fits_the_candidates(tmp_path, seed):
    store, _, _ = filled_bank(tmp_path, seed=seed)
    query = np.random.default_rng(seed + 10).standard_normal(DIM).astype(np.float32)
    fts = fts_match_query("lemon cake")
    exact, binary = both(store, "content_candidates", 100, query_vector=query, fts_query=fts,
                         depth=25, limit=10)
    assert exact == binary
    raw = TimeRange(8 * DAY, 15 * DAY)
    exact, binary = both(store, "session_overlap_candidates", 100, query_vector=query,
                         fts_query=fts, raw_range=raw,
                         wide_range=TimeRange(raw.start - 2 * DAY, raw.end + 2 * DAY),
                         depth=25, limit=10, fill_missing_ranks=True)
    assert exact == binary and binary


@pytest.mark.parametrize("index", ["binary", "int8"])
def test_rescored_candidates_are_ranked_by_exact_cosine_distance(tmp_path, index):
    store, ids, vectors = filled_bank(tmp_path)
    query = vectors[7] + 0.1
    rows = store.content_candidates(query_vector=query, fts_query=None, depth=25, limit=10,
                                    dense_index=index, candidates=25)
    assert rows[0].id == ids[7]
    distance = dict(zip(ids, 1 - vectors @ query / np.linalg.norm(query), strict=True))
    found = [distance[r.id] for r in rows]
    assert found == sorted(found), "the candidates are ranked by their exact cosine distance"


def test_the_vectors_follow_deletes_and_span_changes(tmp_path):
    store, ids, _ = filled_bank(tmp_path, n=12)
    assert store.vector_count() == len(store.int8_matrix()) == 12
    assert store.delete_memory(ids[0])
    assert store.vector_count() == len(store.int8_matrix()) == 11
    store._mirror_episodes_to_vectors([(ids[1], 100 * DAY, 101 * DAY, None, None)])
    matrix = store.int8_matrix()
    episode = matrix.episodes[matrix.ids.tolist().index(ids[1])]
    assert episode.tolist() == [100 * DAY, 101 * DAY, 100 * DAY, 101 * DAY]
    store.drop_vectors()
    assert not store.has_vectors() and not store.has_int8_codes()
    store.bind_embedder(FINGERPRINT)
    assert store.has_vectors() and store.has_int8_codes()


def test_settings_refuse_an_unknown_index_or_too_few_candidates():
    with pytest.raises(ValueError, match="dense index"):
        RetrievalSettings(dense_index="hnsw")
    with pytest.raises(ValueError, match="candidates"):
        RetrievalSettings(depth=50, candidates=40)


def test_the_exact_scan_under_an_as_of_cut_keeps_the_closest_written_by_then(tmp_path):
    """``dense_index="exact"`` hands SQL only its ``candidates`` closest: under an as-of cut
    they are the closest of the memories written by then, so memories written later that
    are closer to the query cannot crowd those out of the list."""
    store, ids, vectors = filled_bank(tmp_path, n=60)
    cut = 20 * DAY  # sessions start every 4 days: about half the memories are written later
    written = {memory_id for memory_id, last_said in store.db.execute(
        "SELECT mt.memory_id, max(t.timestamp) FROM memory_turns AS mt "
        "JOIN turns AS t ON t.id = mt.turn_id GROUP BY mt.memory_id") if last_said <= cut}
    later = [i for i, memory_id in enumerate(ids) if memory_id not in written]
    query = vectors[later[0]]  # the closest memory was written later
    by_distance = sorted(range(len(ids)), key=lambda i: -(vectors[i] @ query))
    assert ids[by_distance[0]] not in written
    rows = store.content_candidates(query_vector=query, fts_query=None, depth=3, limit=3,
                                    dense_index="exact", candidates=3, written_by=cut)
    assert [row.id for row in rows] == [ids[i] for i in by_distance if ids[i] in written][:3]
