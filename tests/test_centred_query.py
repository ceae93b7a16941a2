"""Centred dense queries: the question path takes the bank's mean direction off the query, so a
generic memory close to that common direction no longer outranks the one the question is
about. The mean comes from ``vector_sum``, kept in step with every vector write."""

from __future__ import annotations

import numpy as np
import pytest

from ramem_local import Memory
from ramem_local.retrieve import RetrievalSettings, centred_query
from ramem_local.store import Store
from ramem_local.types import EmbedderFingerprint
from tests.test_binary_index import filled_bank

DIM = 8
COMMON, TOPIC = np.eye(DIM, dtype=np.float32)[:2]


class ScriptedEmbedder:
    """Vectors chosen by the test: the first script key found in a text gives its vector."""

    name = "scripted-test"
    dimension = DIM
    fingerprint = EmbedderFingerprint(name, DIM, "c" * 64)

    def __init__(self, script: dict[str, np.ndarray]):
        self.script = script

    def _vector(self, text: str) -> np.ndarray:
        for key, vector in self.script.items():
            if key in text:
                return (vector / np.linalg.norm(vector)).astype(np.float32)
        raise AssertionError(f"no scripted vector for {text!r}")

    def embed_documents(self, texts):
        return np.stack([self._vector(t) for t in texts])

    def embed_query(self, text: str) -> np.ndarray:
        return self._vector(text)


def test_centred_query_is_the_direction_less_the_mean():
    mean = np.array([0.5] + [0.0] * (DIM - 1), dtype=np.float32)
    expected = np.zeros(DIM)
    expected[:2] = [np.sqrt(0.5) - 0.5, np.sqrt(0.5)]
    assert np.allclose(centred_query(np.array([2.0, 2.0] + [0.0] * (DIM - 2)), mean), expected)
    query = np.eye(DIM, dtype=np.float32)[0]
    assert centred_query(query, None) is query, "a bank without vectors: the query as it is"
    assert not centred_query(np.zeros(DIM, dtype=np.float32), mean).any()


def test_a_generic_memory_no_longer_outranks_the_one_asked_about(tmp_path):
    rng = np.random.default_rng(0)
    script = {f"generic {i}": COMMON + 0.05 * rng.standard_normal(DIM) for i in range(8)}
    script["Paper Owls"] = 0.6 * COMMON + 0.8 * TOPIC
    script["What music"] = 0.9 * COMMON + 0.44 * TOPIC  # shares no word with the entry
    embedder = ScriptedEmbedder(script)
    with Memory.open(tmp_path / "bank.db", embedder=embedder) as memory:
        for i in range(8):
            memory.add(f"generic {i}: walked to the shop", at=f"2024-03-0{i + 1}")
        target = memory.add("Heard the Paper Owls live at the old theatre", at="2024-03-09")

        def first(centre: bool) -> int:
            settings = RetrievalSettings(k=3, mode="baseline", centre_query=centre)
            return memory.search("What music did I enjoy?",
                                 settings=settings).results[0].memory.id

        assert first(centre=False) != target, "raw cosine: a generic memory comes first"
        assert first(centre=True) == target


def test_the_vector_sum_follows_adds_replacements_deletes_and_drops(tmp_path):
    store, ids, vectors = filled_bank(tmp_path, n=20)
    units = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
    assert np.allclose(store.mean_vector(), units.mean(axis=0), atol=1e-6)
    replacement = np.random.default_rng(7).standard_normal((2, vectors.shape[1]))
    store.add_vectors(ids[5:7], replacement.astype(np.float32))  # the old two leave the sum
    units[5:7] = replacement / np.linalg.norm(replacement, axis=1, keepdims=True)
    assert store.vector_count() == len(ids)
    assert np.allclose(store.mean_vector(), units.mean(axis=0), atol=1e-6)
    assert store.delete_memory(ids[3])
    assert np.allclose(store.mean_vector(), np.delete(units, 3, axis=0).mean(axis=0), atol=1e-6)
    for memory_id in ids:
        store.delete_memory(memory_id)
    assert store.mean_vector() is None
    store.drop_vectors()
    assert store.mean_vector() is None


@pytest.mark.parametrize("n", [1, 30])
def test_m008_fills_the_sum_from_the_stored_vectors(tmp_path, n):
    """m008 reads the float vectors where they were then (``memories_float``, a row a memory:
    the bank is turned back into that layout), and m011 moves them into blocks after it."""
    store, ids, vectors = filled_bank(tmp_path, n=n)
    store.db.execute("DELETE FROM vector_sum")
    store.db.execute("DELETE FROM schema_migrations WHERE name IN "
                     "('m008_vector_sum', 'm011_float_vectors_in_blocks')")
    store.db.execute("DROP TABLE vector_sum")
    store.db.execute("CREATE TABLE memories_float (memory_id INTEGER PRIMARY KEY, "
                     "embedding BLOB NOT NULL)")
    store.db.executemany("INSERT INTO memories_float VALUES (?, ?)",
                         [(i, v.tobytes()) for i, v in zip(ids, vectors, strict=True)])
    store.db.execute("DROP TABLE float_blocks")
    store.db.execute("DROP TABLE float_block_ranges")
    store.close()
    reopened = Store.open(tmp_path / "bank.db")
    units = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
    assert np.allclose(reopened.mean_vector(), units.mean(axis=0), atol=1e-6)
    assert {i: v.tobytes() for i, v in reopened.vectors_of(ids).items()} == {
        i: v.tobytes() for i, v in zip(ids, vectors, strict=True)}
