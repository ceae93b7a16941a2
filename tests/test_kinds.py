"""The walk over the bank's words (``kinds.TermGraph.walk``) on graphs built by hand."""

from __future__ import annotations

import itertools
from dataclasses import replace

import numpy as np
import pytest

from ramem_local import kinds
from ramem_local.kinds import MIN_TERM_WEIGHT, TermGraph, term_cohesion


def _graph(edges: list[tuple[int, int]], memories: int, terms: int) -> TermGraph:
    memory_rows = np.array([m for m, _ in edges], dtype=np.int64)
    term_rows = np.array([t for _, t in edges], dtype=np.int64)
    return TermGraph(key=(0, 0, 0), ids=np.arange(1, memories + 1),
                     rows={i + 1: i for i in range(memories)}, memory_rows=memory_rows,
                     term_rows=term_rows,
                     memory_degree=np.bincount(memory_rows, minlength=memories),
                     term_degree=np.bincount(term_rows, minlength=terms))


def test_a_graph_without_shared_words_reads_no_kind():
    """A bank whose every line repeats one template keeps no word (each is in every memory):
    no edges, so nothing to walk on (before, numpy's integer bincount of no edges broke the
    walk once the kind joined the ranking inside a range by default)."""
    assert _graph([], memories=4, terms=0).walk({1: 1.0}) == {}


def test_the_walk_reaches_the_memories_sharing_words_with_the_seeds():
    # memories 1 and 2 share word 0; 3 and 4 share word 1
    graph = _graph([(0, 0), (1, 0), (2, 1), (3, 1)], memories=4, terms=2)
    scores = graph.walk({1: 1.0})
    assert scores[2] > scores[3] and scores[1] > scores[2]
    assert graph.walk({99: 1.0}) == {}  # no seed in the graph


def _units(rows: list[list[float]]) -> np.ndarray:
    vectors = np.asarray(rows, dtype=np.float32)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return vectors / np.where(norms > 0, norms, 1.0)


@pytest.mark.parametrize(("edges", "vectors"), [
    # word 0 in memories 0-2 (alike), word 1 in memories 2-3 (unlike)
    ([(0, 0), (1, 0), (2, 0), (2, 1), (3, 1)],
     [[1, 0.1, 0], [1, 0, 0.1], [1, 0.2, 0.2], [0, 0, 1]]),
    # a memory without a vector (a row of zeros) is in no pair; a word with no pair reads 0
    ([(0, 0), (1, 0), (2, 0), (1, 1), (2, 1)],
     [[1, 0, 0], [0, 0, 0], [0.5, 0.5, 0], [0, 1, 0]]),
    # opposite meanings: a negative cohesion
    ([(0, 0), (1, 0)], [[1, 0, 0], [-1, 0, 0]]),
    # no word shared by two memories: no edge, nothing to read
    ([], [[1, 0, 0], [0, 1, 0]]),
])
def test_term_cohesion_is_the_mean_cosine_over_the_pairs_holding_the_word(edges, vectors):
    memories = len(vectors)
    terms = 1 + max((t for _, t in edges), default=-1)
    graph = _graph(edges, memories=memories, terms=terms)
    units = _units(vectors)
    expected = []
    for term in range(terms):
        held = [m for m, t in edges if t == term and any(vectors[m])]
        pairs = [float(units[a] @ units[b]) for a, b in itertools.combinations(held, 2)]
        expected.append(sum(pairs) / len(pairs) if pairs else 0.0)
    assert term_cohesion(graph, units) == pytest.approx(expected, abs=1e-6)


def test_a_word_said_of_everything_carries_little_of_the_walk():
    """"Got the radiator working again; cold but clear" (0), "Mended the radiator" (1),
    "Mended the gate" (2); "Paid the bills; cold but clear" (3), "Meetings all day; cold but
    clear" (4). Walked evenly from 0, half its steps go to the remark "cold", which reaches the
    bills and the meetings before the gate; weighed by how alike the memories holding each word
    are, the walk keeps to the repairs."""
    radiator, cold, mend, gate_word, bills, meetings = range(6)
    edges = [(0, radiator), (0, cold), (1, radiator), (1, mend), (2, mend), (2, gate_word),
             (3, cold), (3, bills), (4, cold), (4, meetings), (5, bills), (6, meetings),
             (7, gate_word)]
    graph = _graph(edges, memories=8, terms=6)
    repair = [1.0, 0.0, 0.0, 0.0]
    units = _units([[1, 0.1, 0, 0], [1, 0, 0.1, 0], [1, 0, 0, 0.1], [0, 1, 0, 0],
                    [0, 0, 1, 0], [0, 1, 0.1, 0], [0, 0, 1, 0.1], repair])
    even = graph.walk({1: 1.0})
    assert max(even[4], even[5]) > even[3]  # the remark's memories before the gate
    weighed = replace(graph, term_weight=np.maximum(term_cohesion(graph, units),
                                                    MIN_TERM_WEIGHT))
    scores = weighed.walk({1: 1.0})
    assert scores[3] > max(scores[4], scores[5], scores[6], scores[7])


def test_a_banks_cohesion_is_read_a_block_of_vectors_at_a_time(tmp_path, minilm_dir,
                                                               monkeypatch):
    """The graph of a real bank reads its vectors ``UNIT_BLOCK`` memories at a time; the
    words' cohesion is the same as from all the vectors at once (centred by the bank's mean)."""
    from ramem_local import Memory

    lines = ["Mended the garden gate", "Mended the porch light", "Fixed the garden gate again",
             "Paid the bills; cold but clear", "Meetings all day; cold but clear",
             "Saw Night Harbor at the Picturehouse", "Night Harbor again, with Lena",
             "Cooked a lemon tart for Lena", "A lemon tart, cold but clear"]
    with Memory.open(tmp_path / "bank.db", embedder=minilm_dir) as memory:
        for day, line in enumerate(lines, start=1):
            memory.add(line, at=f"2024-03-{day:02d}")
        store = memory.store
        monkeypatch.setattr(kinds, "UNIT_BLOCK", 4)
        graph = kinds.term_graph(store)
        vectors = store.vectors_of(graph.ids.tolist())
        mean = store.mean_vector()
        units = np.stack([vectors[i] / np.linalg.norm(vectors[i]) - mean
                          for i in graph.ids.tolist()])
        units /= np.linalg.norm(units, axis=1, keepdims=True)
        assert graph.term_weight is not None and len(graph.term_weight) >= 4
        assert graph.term_weight == pytest.approx(
            np.maximum(term_cohesion(graph, units), MIN_TERM_WEIGHT), abs=1e-5)
