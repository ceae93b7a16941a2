"""The walk over the bank's words (``kinds.TermGraph.walk``) on graphs built by hand."""

from __future__ import annotations

import numpy as np

from ramem_local.kinds import TermGraph


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
