"""Which memories are of the kind a question asks about, read from the bank's own words.

"How many films did I see in March?" and "What was the last thing I fixed before the move?"
ask about a kind of memory that the bank rarely names: a journal writes "Caught Night Harbor
at the Picturehouse", "Cinema with Jonah: The Ferryman", "Mended the garden gate", "Got the
toaster working again". A sentence embedder alone reads those as poorly as the words do (with
MiniLM, a month's films are the month's most film-like reports about half the time). What the
bank does show is how its memories hang together: the same titles, trails, dishes and objects
recur across the reports of one kind, and across the requests and mentions that do name it
("Suggest films like Night Harbor", "How do I fix the garden gate?").

So the kind is read as a **random walk with restart** over the graph of memories and the words
they share (:class:`TermGraph`): it starts from the memories closest to the question (the
seeds, weighed by their cosine to it), steps from a memory to one of its words and from a word
to a memory holding it, and jumps back to the seeds with probability ``RESTART``. A memory's
*kind score* is how much more often the walk is there than at a memory drawn at random (the
log of the ratio): the reports of the kind share words with the seeds and with each other, a
look-alike that names the same thing shares fewer. Words are lemmas ("walked", "walks" →
"walk"), without stopwords, and only those held by at least two memories and at most
``TERM_SHARE`` of them (a word every tenth entry says joins everything). The assistant's
answers are not in the graph: they repeat what was asked, in the assistant's words.

Not every shared word holds a kind together. A journal appends the same remarks to anything
("; cold but clear", "great day", "worth it"), and a walk from "Got the radiator working again;
cold but clear" reaches the bills paid on a cold day as surely as the next repair. So a memory
steps to its words in proportion to each word's *cohesion* (:func:`term_cohesion`): how alike
in meaning (the embedder's vectors, centred) the memories holding the word are, as the mean
cosine of their pairs. A title, a dish, "mend" hold memories that mean alike; a remark holds
memories about everything. Measured on the natural journal (five journals, dev and held-out)
and LoCoMo: results/natural-journal.txt.

Measured on the natural journal (``eval.natural``, dev, 5 years, MiniLM), per month and kind,
the share of the month's reports of the kind among its top-scored ones (as many as there are):
0.81 with the walk against 0.43 for the question's cosine alone (12 questions, 60 months);
results/natural-journal.txt.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from .lexicon import lemma
from .text import STOPWORDS, WORD, without_speaker

if TYPE_CHECKING:
    import numpy as np

    from .store import Store

RESTART = 0.3  # the walk's chance of jumping back to the seeds at each step
STEPS = 15  # steps of the walk (its scores settle well before)
TERM_SHARE = 0.03  # a word held by more than this share of the memories is no edge
SEEDS = 50  # at most this many memories closest to the question the walk starts from
SEED_SHARE = 0.015  # and at most this share of the bank's (at least MIN_SEEDS)
MIN_SEEDS = 3
# A bank smaller than this has too few words in common for the walk to say anything its
# seeds' closeness does not: the kind is then not read (``retrieve`` orders by words).
MIN_MEMORIES = 300
# A memory is of the kind when the walk is there at least e (2.7) times as often as at a memory
# drawn at random: measured on the natural journal's dev months (results/natural-journal.txt).
KIND_BAR = 1.0
# ... and likely of it when it is there more often than at a memory drawn at random: an order
# lists the first sure report, then every likely one in time order (results/natural-journal.txt).
KIND_CHANCE = 0.0
# A word whose memories mean no more alike than chance still carries a little of the walk (a
# bank where every word is such is walked almost evenly, as without weights).
MIN_TERM_WEIGHT = 1e-3
UNIT_BLOCK = 4096  # memories whose vectors are read at once for the words' cohesion


@dataclass(frozen=True)
class TermGraph:
    """The memories (``ids``) and the words they share, as edge lists: edge ``k`` joins the
    memory at row ``memory_rows[k]`` and the word ``term_rows[k]``."""

    key: tuple[int, int, int]
    ids: np.ndarray
    rows: dict[int, int]  # memory id → row
    memory_rows: np.ndarray
    term_rows: np.ndarray
    memory_degree: np.ndarray
    term_degree: np.ndarray
    # How much a memory's step goes to each word (``term_cohesion``); None: evenly (a bank
    # without vectors).
    term_weight: np.ndarray | None = None

    def walk(self, seeds: dict[int, float]) -> dict[int, float]:
        """Each memory's kind score for a walk restarting at ``seeds`` ({memory id: weight},
        weights ≥ 0): log(visits / uniform). {} when no seed is in the graph."""
        import numpy as np

        n = len(self.ids)
        restart = np.zeros(n)
        for memory_id, weight in seeds.items():
            row = self.rows.get(memory_id)
            if row is not None and weight > 0:
                restart[row] += weight
        # No word shared by two memories (a bank of one repeated line): nothing to walk on,
        # and numpy's bincount of no edges would be integers.
        if n == 0 or restart.sum() <= 0 or not len(self.term_rows):
            return {}
        restart /= restart.sum()
        terms = len(self.term_degree)
        if self.term_weight is None:
            out_of_memory = 1.0 / np.maximum(self.memory_degree, 1)[self.memory_rows]
        else:
            edge_weight = self.term_weight[self.term_rows]
            held = np.bincount(self.memory_rows, weights=edge_weight, minlength=n)
            out_of_memory = edge_weight / np.maximum(held, 1e-12)[self.memory_rows]
        out_of_term = 1.0 / np.maximum(self.term_degree, 1)[self.term_rows]
        visits = restart.copy()
        for _ in range(STEPS):
            at_terms = np.bincount(self.term_rows, weights=visits[self.memory_rows] * out_of_memory,
                                   minlength=terms)
            stepped = np.bincount(self.memory_rows, weights=at_terms[self.term_rows] * out_of_term,
                                  minlength=n)
            # a memory with no word keeps its mass where it is
            stepped += np.where(self.memory_degree == 0, visits, 0.0)
            visits = RESTART * restart + (1 - RESTART) * stepped
        scores = np.log(np.maximum(visits, 1e-300) * n)
        return dict(zip(self.ids.tolist(), scores.tolist(), strict=True))


def seed_count(memories: int) -> int:
    """How many of the closest memories the walk starts from in a bank of ``memories``: a
    share of it, so that in a small bank the seeds are not all of it (the walk then says
    nothing the seeds' own closeness did not)."""
    return max(MIN_SEEDS, min(SEEDS, int(SEED_SHARE * memories)))


def term_graph(store: Store) -> TermGraph:
    """The bank's graph, built once and kept until its memories change."""
    import numpy as np

    key = store.memories_key()
    cached: TermGraph | None = getattr(store, "_term_graph", None)
    if cached is not None and cached.key == key:
        return cached
    graph = _build(key, store.memory_texts())
    mean = store.mean_vector() if store.has_vectors() else None
    if mean is not None:
        cohesion = _cohesion(graph, _centred_units(store, graph.ids, mean))
        graph = replace(graph, term_weight=np.maximum(cohesion, MIN_TERM_WEIGHT))
    store._term_graph = graph  # type: ignore[attr-defined]
    return graph


def _build(key: tuple[int, int, int], texts: list[tuple[int, str]]) -> TermGraph:
    import numpy as np

    words_of = [set(map(lemma, _words(text))) for _, text in texts]
    counts: dict[str, int] = {}
    for held in words_of:
        for word in held:
            counts[word] = counts.get(word, 0) + 1
    most = max(2, int(TERM_SHARE * len(texts)))
    vocabulary: dict[str, int] = {}
    memory_rows: list[int] = []
    term_rows: list[int] = []
    for row, held in enumerate(words_of):
        for word in held:
            if 2 <= counts[word] <= most:
                memory_rows.append(row)
                term_rows.append(vocabulary.setdefault(word, len(vocabulary)))
    memories = np.asarray(memory_rows, dtype=np.int64)
    terms = np.asarray(term_rows, dtype=np.int64)
    ids = np.asarray([memory_id for memory_id, _ in texts], dtype=np.int64)
    return TermGraph(
        key=key, ids=ids, rows={memory_id: row for row, (memory_id, _) in enumerate(texts)},
        memory_rows=memories, term_rows=terms,
        memory_degree=np.bincount(memories, minlength=len(texts)).astype(np.float64),
        term_degree=np.bincount(terms, minlength=len(vocabulary)).astype(np.float64))


def term_cohesion(graph: TermGraph, units: np.ndarray) -> np.ndarray:
    """Each word's cohesion: the mean cosine over the pairs of memories holding it, from
    ``units`` (one unit vector per memory row; a row of zeros for a memory without one, left
    out of the pairs; 0 for a word with no pair). From the length of their sum: |Σ u|² = n +
    Σ_{i≠j} u_i·u_j."""
    return _cohesion(graph, [(0, units)])


def _cohesion(graph: TermGraph, blocks: Iterable[tuple[int, np.ndarray]]) -> np.ndarray:
    """``term_cohesion`` from the unit vectors of consecutive memory rows, a block at a time
    (``(first row, units)``): a bank's vectors are never all in memory at once, only each
    word's sum (float32)."""
    import numpy as np

    terms = len(graph.term_degree)
    sums: np.ndarray | None = None
    held = np.zeros(terms)
    for first, units in blocks:
        if sums is None:
            sums = np.zeros((terms, units.shape[1]), np.float32)
        inside = (graph.memory_rows >= first) & (graph.memory_rows < first + len(units))
        rows, words = graph.memory_rows[inside] - first, graph.term_rows[inside]
        if not len(rows):
            continue
        order = np.argsort(words, kind="stable")
        sorted_words = words[order]
        starts = np.flatnonzero(np.r_[True, sorted_words[1:] != sorted_words[:-1]])
        sums[sorted_words[starts]] += np.add.reduceat(units[rows[order]], starts, axis=0)
        has_vector = np.abs(units).sum(axis=1) > 0
        held += np.bincount(words, weights=has_vector[rows].astype(np.float64), minlength=terms)
    if sums is None:
        return np.zeros(terms)
    lengths = (sums.astype(np.float64) ** 2).sum(axis=1)
    return (lengths - held) / np.maximum(held * (held - 1), 1)


def _centred_units(store: Store, ids: np.ndarray, mean: np.ndarray
                   ) -> Iterator[tuple[int, np.ndarray]]:
    """The memories' vectors less the bank's ``mean`` direction, as unit vectors in ``ids``'
    order (zeros where a memory has none), ``UNIT_BLOCK`` rows at a time. Centred: every
    memory of a bank shares a direction (its language, its form), which says nothing of its
    kind."""
    import numpy as np

    for first in range(0, len(ids), UNIT_BLOCK):
        block = ids[first:first + UNIT_BLOCK].tolist()
        vectors = store.vectors_of(block)
        units = np.zeros((len(block), len(mean)), np.float32)
        rows = [row for row, memory_id in enumerate(block) if memory_id in vectors]
        if rows:
            found = np.stack([vectors[block[row]] for row in rows]).astype(np.float32)
            found /= _norms(found)
            found -= mean
            units[rows] = found / _norms(found)
        yield first, units


def _norms(vectors: np.ndarray) -> np.ndarray:
    import numpy as np

    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return np.where(norms > 0, norms, 1.0)


def _words(text: str) -> list[str]:
    return [w for w in (m.lower() for m in WORD.findall(without_speaker(text)))
            if len(w) > 2 and w not in STOPWORDS and not w.isdigit()]


