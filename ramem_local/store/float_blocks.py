"""The float vectors on disk, in blocks (``blocks``): each row of ``float_blocks`` holds up to
``FLOAT_BLOCK_SIZE`` memories' ids and float32 vectors. The bank's one float copy: the dense
list's candidates are read from it (``FloatPlaces.vectors``) and scored in SQL; the exact scan
scores every vector in RAM (``exact_distances``).

Why blocks of 32: a row a vector (``memories_float``, m005-m010) cost 4.6 kB a memory at
1024-d, 490 B of page slack beyond the vector's 4,096 bytes (a 4 kB page cannot hold a
4,096-byte row: ~490 B stay on the leaf, the rest takes an overflow page). 32 vectors a row
fill 32 overflow pages with ~16 B a memory of slack and ids; blocks of 16 cost ~16 B a memory
more, blocks of 8 ~48 B more (``results/bench-scale.txt``: 5.47 / 5.49 / 5.51 kB a memory at
1024-d; the target is 5.5). A search reads only its candidates' vectors from their blocks
(incremental blob I/O, ``vectors_of``), so the block size barely changes what it reads;
appending rewrites the last block (at most 128 kB at 1024-d, less than the int8 block's
256 kB).

Where a memory's vector is: ``float_block_ranges``, an R*Tree of the blocks' id ranges kept by
triggers (``schema.create_float_blocks``).
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import cast

import apsw
import numpy as np

from .blocks import BlockTable, append_rows, block_blobs, mapped, remove_rows, total_count

FLOAT_BLOCK_SIZE = 32
# Vectors scored at once by ``exact_distances`` (32 MB at 1024-d).
SCORED_AT_ONCE = 8192


@dataclass
class FloatRows:
    """Some memories' float vectors, one row a memory."""

    ids: np.ndarray  # int64 [N]
    vectors: np.ndarray  # float32 [N, D]

    def __len__(self) -> int:
        return len(self.ids)

    def take(self, rows: np.ndarray) -> FloatRows:
        return FloatRows(self.ids[rows], self.vectors[rows])

    @classmethod
    def joined(cls, parts: Sequence[FloatRows]) -> FloatRows:
        return cls(np.concatenate([part.ids for part in parts]),
                   np.concatenate([part.vectors for part in parts]))

    @classmethod
    def from_row(cls, row: Sequence, dimension: int) -> FloatRows:
        """A block from its ``memory_ids, vectors`` columns (read-only views of the blobs)."""
        ids, vectors = row
        return cls(np.frombuffer(ids, dtype=np.int64),
                   np.frombuffer(vectors, dtype=np.float32).reshape(-1, dimension))

    def blobs(self) -> tuple:
        return block_blobs(self, self.vectors.astype(np.float32))


FLOAT_BLOCKS = BlockTable("float_blocks", ("memory_ids", "vectors"), FLOAT_BLOCK_SIZE,
                          FloatRows.from_row, FloatRows.joined)


def append_vectors(db: apsw.Connection, rows: FloatRows, dimension: int) -> None:
    """Store the vectors of memories that have none stored: the last block is filled first."""
    append_rows(db, FLOAT_BLOCKS, rows, dimension)


def remove_vectors(db: apsw.Connection, memory_ids_json: str, dimension: int) -> np.ndarray:
    """Take these memories (a JSON array of ids) out of their blocks; returns the vectors
    taken out (float32 [n, D])."""
    removed = remove_rows(db, FLOAT_BLOCKS, memory_ids_json, dimension)
    if not removed:
        return np.empty((0, dimension), np.float32)
    return FloatRows.joined(removed).vectors


def vector_count(db: apsw.Connection) -> int:
    return total_count(db, FLOAT_BLOCKS)


# The blocks whose range may hold any of :memory_ids (a JSON array): an R*Tree lookup each.
BLOCKS_OF_IDS = """
WITH wanted AS (SELECT value AS id FROM json_each(:memory_ids)),
holding AS (
    SELECT DISTINCT r.id
    FROM wanted
    JOIN float_block_ranges AS r
      ON r.first_memory_id <= wanted.id AND r.last_memory_id >= wanted.id
)
SELECT b.id, b.memory_ids FROM holding JOIN float_blocks AS b ON b.id = holding.id"""

# Every block's ids: for many wanted ids (the exact scan), a read of every leaf is cheaper
# than a lookup each.
EVERY_BLOCK = "SELECT id, memory_ids FROM float_blocks"

# From how many wanted ids every block's ids are read instead of looked up.
LOOKUPS_AT_MOST = 2048


def _held(ids: np.ndarray, sorted_wanted: np.ndarray) -> np.ndarray:
    """Which of ``ids`` are in ``sorted_wanted`` (ascending), as a mask."""
    if not len(sorted_wanted):
        return np.zeros(len(ids), dtype=bool)
    places = np.minimum(np.searchsorted(sorted_wanted, ids), len(sorted_wanted) - 1)
    return sorted_wanted[places] == ids


def memory_ids_with_vectors(db: apsw.Connection) -> np.ndarray:
    """Every memory with a vector, ascending (reads each block's ids, not its vectors:
    ``memory_ids`` precedes ``vectors`` in the row and lies on the leaf page)."""
    parts = [np.frombuffer(ids, dtype=np.int64)
             for (ids,) in db.execute("SELECT memory_ids FROM float_blocks")]
    return np.sort(np.concatenate(parts)) if parts else np.empty(0, np.int64)


def vectors_of(db: apsw.Connection, memory_ids: np.ndarray, dimension: int) -> FloatRows:
    """These memories' stored vectors (those that have one)."""
    parts = list(_vector_batches(db, memory_ids, dimension, max(1, len(memory_ids))))
    if not parts:
        return FloatRows(np.empty(0, np.int64), np.empty((0, dimension), np.float32))
    return FloatRows.joined(parts) if len(parts) > 1 else parts[0]


def _vector_batches_in(db: apsw.Connection, memory_ids: np.ndarray, dimension: int,
                    batch: int) -> Iterator[FloatRows]:
    """These memories' stored vectors, up to ``batch`` at a time, block by block. Each
    block's ids are selected (the row's leaf page); its wanted vectors are read with SQLite's
    incremental blob I/O straight into the batch, one vector at a time where the block holds
    few of them (a search's candidates: 4 kB read of a 128 kB block at 1024-d), the whole
    block where it holds many (the exact scan); one blob handle moves from block to block
    (``Blob.reopen``: ``blob_open`` compiles a statement each time). A few wanted ids are
    looked up in the R*Tree of the blocks' ranges; many (the exact scan) read every block's
    ids once.

    A vector at slot k of its block lies k overflow pages into the row: SQLite reaches it by
    following the chain's links, one page read each. So a search scores only a few of the
    int8 scan's nearest (``memories.rescored``), not all its candidates."""
    wanted = np.sort(np.asarray(memory_ids, dtype=np.int64))
    if not len(wanted):
        return
    if len(wanted) <= LOOKUPS_AT_MOST:
        blocks = db.execute(BLOCKS_OF_IDS, {"memory_ids": json.dumps(wanted.tolist())})
    else:
        blocks = db.execute(EVERY_BLOCK)
    rows = cast("list[tuple[int, bytes]]", blocks.fetchall())
    if not rows:
        return
    # Every returned block's ids at once (one array, not a few numpy calls a block): which
    # are wanted, and at which slot of which block.
    counts = np.array([len(ids_blob) // 8 for _, ids_blob in rows])
    every_id = np.frombuffer(b"".join(ids_blob for _, ids_blob in rows), dtype=np.int64)
    hits = np.flatnonzero(_held(every_id, wanted))
    if not len(hits):
        return
    starts = np.cumsum(counts) - counts
    hit_rows = np.searchsorted(starts, hits, side="right") - 1  # the block (index in rows)
    hit_slots = hits - starts[hit_rows]
    bounds = np.flatnonzero(np.diff(hit_rows)) + 1  # where the next block's hits begin
    size = min(max(batch, FLOAT_BLOCK_SIZE), len(hits))  # a block's wanted vectors fit
    vectors = np.empty((size, dimension), dtype=np.float32)
    into = vectors.reshape(-1).data.cast("B")
    ids: list[np.ndarray] = []
    filled, row_bytes = 0, 4 * dimension
    blob = None  # one handle, moved from block to block (``Blob.reopen``: no new statement)
    try:
        for first, last in zip(np.concatenate(([0], bounds)).tolist(),
                               np.concatenate((bounds, [len(hits)])).tolist(), strict=True):
            row = int(hit_rows[first])
            block_id, count = rows[row][0], int(counts[row])
            slots = hit_slots[first:last]
            if filled and filled + len(slots) > size:  # the batch is full: hand it over
                yield FloatRows(np.concatenate(ids), vectors[:filled].copy())
                ids, filled = [], 0
            if blob is None:
                blob = db.blob_open("main", "float_blocks", "vectors", block_id, False)
            else:
                blob.reopen(block_id)
            if len(slots) == count:  # the whole block, straight into place
                blob.read_into(into, filled * row_bytes, count * row_bytes)
            elif 4 * len(slots) > count:
                whole = np.empty((count, dimension), dtype=np.float32)
                blob.read_into(whole.reshape(-1).data.cast("B"))
                vectors[filled:filled + len(slots)] = whole[slots]
            else:
                for n, slot in enumerate(slots.tolist()):
                    blob.seek(slot * row_bytes)
                    blob.read_into(into, (filled + n) * row_bytes, row_bytes)
            ids.append(every_id[hits[first:last]])
            filled += len(slots)
    finally:
        if blob is not None:
            blob.close()
    if filled:
        yield FloatRows(np.concatenate(ids), vectors[:filled])


def _vector_batches(db: apsw.Connection, memory_ids: np.ndarray, dimension: int,
                    batch: int) -> Iterator[FloatRows]:
    """``_vector_batches_in``, read through a memory map (``blocks.mapped``)."""
    with mapped(db):
        yield from _vector_batches_in(db, memory_ids, dimension, batch)


def _distinct(ids: np.ndarray) -> np.ndarray:
    """The distinct ids, ascending. Not ``np.unique``: numpy 2 imports ``numpy.ma`` at its
    first call (13 ms of a new process's first search at 100k x 1024,
    ``results/bench-scale.txt``)."""
    ordered = np.sort(ids)
    if len(ordered) < 2:
        return ordered
    return ordered[np.concatenate(([True], ordered[1:] != ordered[:-1]))]


@dataclass
class FloatPlaces:
    """Where each stored vector is, at one ``vectors_generation``: the block row and the slot in
    it of every memory with a vector (ids ascending), read once by a process (every block's ids:
    ``memory_ids`` lies on the row's leaf page) and again only after the vectors changed, as the
    int8 codes are. A search's few candidates are then read straight from their slots, without
    looking their blocks up (an R*Tree query and a leaf page a block, 2-4 ms of a warm search at
    100k x 1024, ``results/bench-scale.txt``)."""

    generation: str | None
    ids: np.ndarray  # int64 [N], ascending
    blocks: np.ndarray  # int64 [N]: the float_blocks row
    slots: np.ndarray  # int64 [N]: the vector's place in the row

    @classmethod
    def load(cls, db: apsw.Connection, generation: str | None) -> FloatPlaces:
        rows = cast("list[tuple[int, bytes]]", db.execute(EVERY_BLOCK).fetchall())
        counts = np.array([len(ids_blob) // 8 for _, ids_blob in rows], dtype=np.int64)
        ids = np.frombuffer(b"".join(ids_blob for _, ids_blob in rows), dtype=np.int64)
        blocks = np.repeat(np.array([row[0] for row in rows], dtype=np.int64), counts)
        slots = np.arange(len(ids), dtype=np.int64) - np.repeat(np.cumsum(counts) - counts,
                                                                counts)
        order = np.argsort(ids, kind="stable")
        return cls(generation, ids[order], blocks[order], slots[order])

    def vectors(self, db: apsw.Connection, memory_ids: np.ndarray, dimension: int
                ) -> FloatRows:
        """These memories' vectors (those with one), each read alone at its slot, in block
        order, one blob handle moved from block to block. Inside the caller's read
        transaction, at this map's generation."""
        wanted = _distinct(np.asarray(memory_ids, dtype=np.int64))
        at = np.minimum(np.searchsorted(self.ids, wanted), max(len(self.ids) - 1, 0))
        found = at[self.ids[at] == wanted] if len(self.ids) else at[:0]
        found = found[np.lexsort((self.slots[found], self.blocks[found]))]
        vectors = np.empty((len(found), dimension), dtype=np.float32)
        into = vectors.reshape(-1).data.cast("B")
        row_bytes = 4 * dimension
        blob, current = None, None
        try:
            for n, (block, slot) in enumerate(zip(self.blocks[found].tolist(),
                                                  self.slots[found].tolist(), strict=True)):
                if blob is None:
                    blob = db.blob_open("main", "float_blocks", "vectors", block, False)
                elif block != current:
                    blob.reopen(block)
                current = block
                blob.seek(slot * row_bytes)
                blob.read_into(into, n * row_bytes, row_bytes)
        finally:
            if blob is not None:
                blob.close()
        return FloatRows(self.ids[found], vectors)


def exact_distances(db: apsw.Connection, memory_ids: np.ndarray, query: np.ndarray,
                    dimension: int, places: FloatPlaces | None = None,
                    ) -> tuple[np.ndarray, np.ndarray]:
    """(ids, cosine distances) of these memories' stored vectors to ``query``: float32
    vectors, products and norms in float32 (as sqlite-vec's ``vec_distance_cosine``, which
    rescored them in SQL until m011); a zero vector is at distance 1. Memories without a
    vector are left out. With ``places`` (a search's few candidates) each vector is read at
    its slot; else block by block (the exact scan)."""
    query = np.asarray(query, dtype=np.float32)
    query_norm = np.float32(np.linalg.norm(query))
    ids, distances = [], []
    # the exact scan: one pass over the blocks, scored a batch at a time (RAM stays bounded)
    batches = ([places.vectors(db, memory_ids, dimension)] if places is not None
               else _vector_batches(db, memory_ids, dimension, SCORED_AT_ONCE))
    for rows in batches:
        norms = np.sqrt(np.einsum("ij,ij->i", rows.vectors, rows.vectors)) * query_norm
        dots = rows.vectors @ query
        ids.append(rows.ids)
        distances.append(np.where(norms > 0, 1 - dots / np.where(norms > 0, norms, 1), 1))
    if not ids:
        return np.empty(0, np.int64), np.empty(0, np.float32)
    return np.concatenate(ids), np.concatenate(distances).astype(np.float32)
