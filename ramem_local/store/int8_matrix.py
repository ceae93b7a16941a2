"""The content list's dense candidates: every vector of the bank, int8-quantised, scanned in RAM.

Why not a scan inside SQLite: sqlite-vec's float scan reads 4·D bytes a memory (≈ 11× numpy
brute force at 100k × 1024), its int8 scan is not vectorised (2.3–2.8× numpy), and its sign-bit
scan keeps too little of a vector: on i.i.d. random vectors only 20-28% of the exact ten nearest
are among the 200 nearest by Hamming distance (``results/bench-scale.txt``). An embedder whose
dimensions carry a constant offset can also leave many sign bits the same in every vector.

So besides its float vector (``float_blocks``, the one float copy: the candidates' exact
distances are computed from it) the bank stores each vector as int8 codes with one scale per vector
(``int8_blocks``: D + 45 bytes, the sign of every component and 7 bits of its size, with the
columns the filters need), and a process reads them once into one matrix. A query
multiplies it by the quantised query with onnxruntime's integer matrix product (numpy has no
int8 BLAS: its integer product is slower than its float product over 4× the bytes), takes the
``candidates`` best and reads their float vectors from their blocks (``float_blocks``) for SQL,
which rescores them exactly (sqlite-vec), filters them again and fuses them with BM25 there.
``dense_index="binary"`` ranks by Hamming distance
of the codes' signs instead (the sign-bit index the bank kept until m010, now built in RAM from
the codes: no faster than int8 since the codes load in one read; kept for comparison).

Staleness: every change to a bank's vectors increments ``meta.vectors_generation`` in the same
transaction (``MemoryTables._vectors_changed``), whichever process makes it; a matrix loaded at
an older generation is read again before it is used.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

import apsw
import numpy as np

from ..types import TimeRange
from .int8_blocks import read_codes
from .vectors import unit_rows

# Codes are stored offset by 128 (uint8): onnxruntime's uint8 × int8 product is its fast one,
# and the offset is taken back exactly by the product's zero point.
CODE_OFFSET = 128

def quantise(vectors: np.ndarray, steps: int = 127) -> tuple[np.ndarray, np.ndarray]:
    """(scales, codes) of each row's direction in ``steps`` a side: ``codes`` uint8 with the
    offset, ``scales`` such that ``scale · (code − 128)`` ≈ the unit vector. A zero row gets
    scale 0."""
    units = unit_rows(vectors)
    scales = np.abs(units).max(axis=1) / float(steps)
    levels = np.divide(units, scales[:, None], out=np.zeros_like(units), where=scales[:, None] > 0)
    codes = (np.clip(np.rint(levels), -steps, steps) + CODE_OFFSET).astype(np.uint8)
    return scales.astype(np.float32), codes


# The ONNX graph of the scan's product: one MatMulInteger node computing ``(codes − 128) · query``
# for uint8 codes [N, D] and an int8 query [D, 1] (opset 13, IR version 8: readable by every
# onnxruntime the project accepts). Shipped serialized, because building it takes the ``onnx``
# package, whose import cost a new process's first search over a second
# (results/bench-oneoff.txt). ``tests/test_int8_index.py`` rebuilds it with ``onnx`` and checks
# these bytes describe the same model, so they cannot drift from what the comment says.
INTEGER_PRODUCT_GRAPH = bytes.fromhex(
    "08083a96010a2b0a05636f6465730a0571756572790a066f66667365741204646f7473220d4d61744d756c49"
    "6e74656765721209696e74385f7363616e2a0e10022a02800142066f66667365745a190a05636f6465731210"
    "0a0e0802120a0a0312014e0a031201445a180a057175657279120f0a0d080312090a031201440a0208016217"
    "0a04646f7473120f0a0d080612090a0312014e0a02080142040a00100d"
)


# How many memories of a pool the similarity of its closest pairs is estimated from
# (``Int8Matrix.neighbour_floor``): 130,816 pairs.
FLOOR_SAMPLE = 512

# How many bits are set in each byte value (numpy < 2 has no bitwise_count).
_BITS_SET = np.unpackbits(np.arange(256, dtype=np.uint8)[:, None], axis=1).sum(axis=1)


@lru_cache(maxsize=1)
def _integer_product() -> Any:
    """An onnxruntime session computing ``(A − 128) · b`` for uint8 A [N, D], int8 b [D, 1].

    Its threads do not spin once a product is done (onnxruntime's default is to spin, waiting
    for the next one): a search runs one product and then its SQL, and on a two-core machine
    the spinning threads took the cores the SQL and the next query's encoding needed — a warm
    LoCoMo search 17–20 ms with them, 10–13 ms without (results/bench-search.txt). The product
    keeps its threads: 4.5 ms for 70,000 memories with them, 7.7 ms with one."""
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.inter_op_num_threads = 1
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    return ort.InferenceSession(INTEGER_PRODUCT_GRAPH, options,
                                providers=["CPUExecutionProvider"])


# onnxruntime's uint8 x int8 product on x86 CPUs without VNNI (AVX2 only) adds pairs of
# products in 16 bits (VPMADDUBSW), which saturate once codes near 255 meet query steps near
# ±127; with VNNI, or on ARM, the sums are 32-bit and exact. A process checks its first product
# against the exact value (``_query_steps``); where it saturates the query is quantised to ±63
# steps, whose pairs stay in range (2 · 255 · 63 < 32,767), and the product is scaled back to
# ±127 steps. Found when a neighbourhood test read 0.879 for 0.900 on an AMD EPYC (AVX2).
QUERY_STEPS = 127
SATURATION_FREE_STEPS = 63


@lru_cache(maxsize=1)
def _query_steps() -> int:
    """How many steps a side the query is quantised to: :data:`QUERY_STEPS` where this CPU's
    product is exact, else :data:`SATURATION_FREE_STEPS`."""
    width = 64
    codes = np.full((1, width), 255, dtype=np.uint8)
    query = np.full((width, 1), QUERY_STEPS, dtype=np.int8)
    got = int(_integer_product().run(None, {"codes": codes, "query": query})[0][0, 0])
    exact = width * (255 - CODE_OFFSET) * QUERY_STEPS
    return QUERY_STEPS if got == exact else SATURATION_FREE_STEPS


@dataclass
class Int8Matrix:
    """The bank's int8 codes at one ``vectors_generation``, with what the filters need: the
    scope columns and each memory's episode (an ungrounded memory's event columns carry its
    session span)."""

    generation: str | None
    ids: np.ndarray  # int64 [N], ascending
    conversation_ids: np.ndarray  # int64 [N]
    is_turn: np.ndarray  # bool [N]
    episodes: np.ndarray  # int64 [N, 4]: session start, session end, event start, event end
    scales: np.ndarray  # float32 [N]
    codes: np.ndarray  # uint8 [N, D]
    _sign_bits: np.ndarray | None = field(default=None, repr=False)  # built by the first use

    @classmethod
    def load(cls, db: apsw.Connection, generation: str | None, dimension: int) -> Int8Matrix:
        """Read the codes (inside the caller's read transaction): a few hundred block rows,
        the codes straight into one matrix (``int8_blocks.read_codes``)."""
        rows = read_codes(db, dimension)
        return cls(generation=generation, ids=rows.ids, conversation_ids=rows.conversation_ids,
                   is_turn=rows.is_turn, episodes=rows.episodes, scales=rows.scales,
                   codes=rows.codes)

    def __len__(self) -> int:
        return len(self.ids)

    def nearest(self, query: np.ndarray, count: int, *, conversation_id: int | None = None,
                exclude_turns: bool = False, overlapping: TimeRange | None = None,
                said_in: Sequence[int] = (), session_started_by: int | None = None,
                by_sign_bits: bool = False, larger_pool_keeps: int | None = None) -> list[int]:
        """The ids of the memories the filters let through when they are at most ``count``
        (the whole pool), else of the ``count`` nearest ``query`` by quantised cosine (with
        ``by_sign_bits``: by Hamming distance of the codes' signs), or only the
        ``larger_pool_keeps`` nearest when given; in no particular order. The caller scores
        them exactly; SQL applies the filters again. ``overlapping``: only memories whose
        session span or event range overlaps it (the session-overlap filter), or whose session
        starts at one of ``said_in``; ``session_started_by``: only memories whose session
        started by then (the as-of cut, whose exact test is in SQL)."""
        pool = np.flatnonzero(self._allowed(conversation_id, exclude_turns, overlapping,
                                            session_started_by, said_in))
        if count >= len(pool):
            return self.ids[pool].tolist()
        if by_sign_bits:
            scores = -self._hamming(pool, query)
        else:
            codes = self.codes if len(pool) == len(self) else self.codes[pool]
            scores = self._dots(codes, query) * self.scales[pool]
        kept = min(count, larger_pool_keeps or count)
        best = np.argpartition(-scores, kept - 1)[:kept]
        return self.ids[pool[best]].tolist()

    def neighbourhood_closeness(self, memory_ids: Sequence[int], direction: np.ndarray,
                                share: float, *, conversation_id: int | None = None,
                                exclude_turns: bool = False,
                                session_started_by: int | None = None) -> dict[int, float]:
        """For each of ``memory_ids`` held here: the mean closeness (quantised cosine) to
        ``direction`` of its neighbourhood, the memory itself and the memories of its own
        conversation that the filters let through and that are as similar to it as the most
        similar ``share`` of their pairs (``neighbour_floor``): a journal's entries are read
        by entries, not by a chat about the same films. A floor drawn from the pool, not a
        number of neighbours: a journal ten times longer holds ten times the entries like each
        one. Each text counts once (``_distinct_neighbours``). One scan of the pool per
        memory: meant for a few dozen."""
        pool = np.flatnonzero(self._allowed(conversation_id, exclude_turns, None,
                                            session_started_by))
        if len(pool) < 2:
            return {}
        floor = self.neighbour_floor(pool, share)
        codes = self.codes if len(pool) == len(self) else self.codes[pool]
        scales = self.scales[pool]
        toward = self._cosines(codes, scales, direction)
        pool_ids = self.ids[pool]
        pool_conversations = self.conversation_ids[pool]
        closeness: dict[int, float] = {}
        for memory_id in memory_ids:
            row = int(np.searchsorted(self.ids, memory_id))
            if row >= len(self) or self.ids[row] != memory_id:
                continue
            own = float(self._cosines(self.codes[row:row + 1], self.scales[row:row + 1],
                                      direction)[0])
            vector = (self.codes[row].astype(np.float32) - CODE_OFFSET) * self.scales[row]
            near = ((self._cosines(codes, scales, vector) >= floor) & (pool_ids != memory_id)
                    & (pool_conversations == self.conversation_ids[row]))
            distinct = _distinct_neighbours(codes, np.flatnonzero(near), self.codes[row])
            closeness[memory_id] = (own + float(toward[distinct].sum())) / (1 + len(distinct))
        return closeness

    def neighbour_floor(self, pool: np.ndarray, share: float) -> float:
        """The cosine that the most similar ``share`` of the pool's pairs of memories reach,
        estimated from the pairs among at most ``FLOOR_SAMPLE`` memories spread evenly over
        the pool (the same ones every time: a few milliseconds)."""
        picked = pool[np.unique(np.linspace(0, len(pool) - 1,
                                            min(len(pool), FLOOR_SAMPLE)).astype(np.int64))]
        units = unit_rows((self.codes[picked].astype(np.float32) - CODE_OFFSET)
                          * self.scales[picked, None])
        pairs = (units @ units.T)[np.triu_indices(len(picked), 1)]
        return float(np.quantile(pairs, 1.0 - share))

    @classmethod
    def _cosines(cls, codes: np.ndarray, scales: np.ndarray, vector: np.ndarray) -> np.ndarray:
        """The quantised cosine of each row (``codes`` with their ``scales``) to ``vector``."""
        vector_scales, _ = quantise(vector.reshape(1, -1))
        return cls._dots(codes, vector) * scales * vector_scales[0]

    def _allowed(self, conversation_id: int | None, exclude_turns: bool,
                 overlapping: TimeRange | None, session_started_by: int | None = None,
                 said_in: Sequence[int] = ()) -> np.ndarray:
        allowed = np.ones(len(self), dtype=bool)
        if conversation_id is not None:
            allowed &= self.conversation_ids == conversation_id
        if exclude_turns:
            allowed &= ~self.is_turn
        if overlapping is not None:
            start, end = overlapping.start, overlapping.end
            session_start, session_end, event_start, event_end = self.episodes.T
            allowed &= (((session_start < end) & (session_end > start))
                        | ((event_start < end) & (event_end > start))
                        | np.isin(session_start, np.asarray(said_in, dtype=np.int64)))
        if session_started_by is not None:
            allowed &= self.episodes[:, 0] <= session_started_by
        return allowed

    def _hamming(self, pool: np.ndarray, query: np.ndarray) -> np.ndarray:
        """Bits in which each pool row's signs differ from the query's (a sign bit is set where
        the int8 code is above zero), as float32."""
        if self._sign_bits is None:
            self._sign_bits = np.packbits(self.codes > CODE_OFFSET, axis=1)
        _, query_codes = quantise(query)
        query_bits = np.packbits(query_codes[0] > CODE_OFFSET)
        differing = np.bitwise_xor(self._sign_bits[pool], query_bits)
        return _BITS_SET[differing].sum(axis=1, dtype=np.int32).astype(np.float32)

    @staticmethod
    def _dots(codes: np.ndarray, query: np.ndarray) -> np.ndarray:
        """(code − 128) · quantised query for each row, as float32, in the query's steps of
        ``quantise`` (±127), computed in ``_query_steps`` steps."""
        steps = _query_steps()
        _, query_codes = quantise(np.asarray(query, dtype=np.float32).reshape(1, -1), steps)
        signed_query = (query_codes.astype(np.int16) - CODE_OFFSET).astype(np.int8).reshape(-1, 1)
        dots = _integer_product().run(None, {"codes": codes, "query": signed_query})[0]
        return dots[:, 0].astype(np.float32) * np.float32(QUERY_STEPS / steps)


def _distinct_neighbours(codes: np.ndarray, rows: np.ndarray, own: np.ndarray) -> np.ndarray:
    """``rows`` of ``codes`` with one of each set of identical codes kept, and none identical
    to ``own``: a sentence written again is one neighbour, not as many as its copies.

    A journal repeats its plain days word for word ("I felt tired and stayed home until Ana
    dropped by; it went better than expected." six times and more in ten years of the
    benchmark's journal), and every copy was a neighbour of "Watched The Ferryman with Ana at
    the cinema" (by "with Ana"): at -0.11 each to a films question they held the film at 0.07,
    below a concert at the Old Theatre (0.10); with each text once the film reads 0.15, first.
    A memory's own copies say nothing more than the memory."""
    if not len(rows):
        return rows
    block = np.ascontiguousarray(codes[rows])
    as_bytes = block.view(np.dtype((np.void, block.shape[1]))).ravel()  # one key per row
    _, first = np.unique(as_bytes, return_index=True)  # 50x quicker than axis=0 here
    kept = rows[np.sort(first)]
    return kept[(codes[kept] != own).any(axis=1)]
