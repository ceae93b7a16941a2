"""The int8 codes on disk, in blocks: each row of ``int8_blocks`` holds up to ``BLOCK_SIZE``
memories' ids, filter columns, scales and codes as flat arrays.

Why blocks: a new process reads every code before its first search. Stored one row a memory
(``memories_int8``, m007-m009), that read stepped through 100k rows and took 0.75 s at
100k × 1024; a block row is read with one ``np.frombuffer`` a column, so the read is a few
hundred large blobs (``results/bench-scale.txt``).

Writes: codes are appended to the last block while it has room (rewriting it: at most
``BLOCK_SIZE`` · D bytes a write), new blocks beyond; forgetting a memory or changing its
episode rewrites the blocks that hold it. Every write runs in the caller's transaction, and
with ``PRAGMA secure_delete`` a rewritten row's old pages are zeroed: a forgotten memory's
codes are gone from the file, as its text is.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import cast

import apsw
import numpy as np

from .base import one_row

# Memories a block holds: at 1024-d a block's codes are 256 kB, the most one write rewrites;
# 100k memories are ~400 rows to read.
BLOCK_SIZE = 256

BLOCK_COLUMNS = "memory_ids, conversation_ids, is_turn, episodes, scales, codes"

# The blocks that hold any of these memories (a JSON array of ids). A block's ids lie between
# its first and last; the range test reads only the row's leading columns, not its blobs.
BLOCKS_HOLDING = f"""
SELECT b.id, {BLOCK_COLUMNS}
FROM int8_blocks AS b
WHERE EXISTS (SELECT 1 FROM json_each(:memory_ids) AS wanted
              WHERE wanted.value BETWEEN b.first_memory_id AND b.last_memory_id)"""


@dataclass
class CodeRows:
    """Some memories' codes and the columns the scan's filters need, one row a memory. An
    ungrounded memory's event columns carry its session span (``memories._vec_episode``)."""

    ids: np.ndarray  # int64 [N]
    conversation_ids: np.ndarray  # int64 [N]
    is_turn: np.ndarray  # bool [N]
    episodes: np.ndarray  # int64 [N, 4]: session start, session end, event start, event end
    scales: np.ndarray  # float32 [N]
    codes: np.ndarray  # uint8 [N, D]

    def __len__(self) -> int:
        return len(self.ids)

    def take(self, rows: np.ndarray) -> CodeRows:
        """These rows (indices or a boolean mask), in that order."""
        return CodeRows(self.ids[rows], self.conversation_ids[rows], self.is_turn[rows],
                        self.episodes[rows], self.scales[rows], self.codes[rows])

    @classmethod
    def joined(cls, parts: Sequence[CodeRows]) -> CodeRows:
        return cls(*(np.concatenate([getattr(part, name) for part in parts])
                     for name in ("ids", "conversation_ids", "is_turn", "episodes", "scales",
                                  "codes")))

    @classmethod
    def from_row(cls, row: Sequence, dimension: int) -> CodeRows:
        """A block read from its columns (``BLOCK_COLUMNS`` order); the arrays are views of
        the blobs (read-only)."""
        ids, conversation_ids, is_turn, episodes, scales, codes = row
        return cls(np.frombuffer(ids, dtype=np.int64),
                   np.frombuffer(conversation_ids, dtype=np.int64),
                   np.frombuffer(is_turn, dtype=np.uint8).astype(bool),
                   np.frombuffer(episodes, dtype=np.int64).reshape(-1, 4),
                   np.frombuffer(scales, dtype=np.float32),
                   np.frombuffer(codes, dtype=np.uint8).reshape(-1, dimension))

    def blobs(self) -> tuple[int, int, int, bytes, bytes, bytes, bytes, bytes, bytes]:
        """(first id, last id, count, then the ``BLOCK_COLUMNS``) of a block of these rows,
        which must be in ascending id order."""
        return (int(self.ids[0]), int(self.ids[-1]), len(self),
                self.ids.astype(np.int64).tobytes(),
                self.conversation_ids.astype(np.int64).tobytes(),
                self.is_turn.astype(np.uint8).tobytes(),
                np.ascontiguousarray(self.episodes, dtype=np.int64).tobytes(),
                self.scales.astype(np.float32).tobytes(),
                np.ascontiguousarray(self.codes, dtype=np.uint8).tobytes())


def in_id_order(rows: CodeRows) -> CodeRows:
    if len(rows) < 2 or bool(np.all(rows.ids[1:] > rows.ids[:-1])):
        return rows
    return rows.take(np.argsort(rows.ids, kind="stable"))


def append_codes(db: apsw.Connection, rows: CodeRows, dimension: int) -> None:
    """Store the codes of memories that have none stored: the last block is filled first."""
    if not len(rows):
        return
    last = db.execute(f"SELECT id, count, {BLOCK_COLUMNS} FROM int8_blocks "
                      "ORDER BY id DESC LIMIT 1").fetchone()
    if last is not None and last[1] < BLOCK_SIZE:
        rows = in_id_order(CodeRows.joined([CodeRows.from_row(last[2:], dimension), rows]))
        _rewrite_block(db, cast("int", last[0]), rows.take(np.arange(min(BLOCK_SIZE, len(rows)))))
        rows = rows.take(np.arange(BLOCK_SIZE, len(rows)))
    else:
        rows = in_id_order(rows)
    for start in range(0, len(rows), BLOCK_SIZE):
        block = rows.take(np.arange(start, min(start + BLOCK_SIZE, len(rows))))
        db.execute(
            f"INSERT INTO int8_blocks(first_memory_id, last_memory_id, count, {BLOCK_COLUMNS}) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", block.blobs())


def remove_codes(db: apsw.Connection, memory_ids_json: str, dimension: int) -> None:
    """Take these memories (a JSON array of ids) out of their blocks; an emptied block goes."""
    gone = np.asarray(json.loads(memory_ids_json), dtype=np.int64)
    for block_id, *columns in db.execute(BLOCKS_HOLDING, {"memory_ids": memory_ids_json}
                                         ).fetchall():
        block = CodeRows.from_row(columns, dimension)
        kept = ~np.isin(block.ids, gone)
        if kept.all():
            continue
        if kept.any():
            _rewrite_block(db, cast("int", block_id), block.take(kept))
        else:
            db.execute("DELETE FROM int8_blocks WHERE id = ?", (block_id,))


def set_episodes(db: apsw.Connection, episodes: Mapping[int, Sequence[int]],
                 dimension: int) -> None:
    """Give these memories (id → session start, session end, event start, event end, as
    ``CodeRows.episodes``) their new episode."""
    if not episodes:
        return
    for block_id, *columns in db.execute(
            BLOCKS_HOLDING, {"memory_ids": json.dumps(list(episodes))}).fetchall():
        block = CodeRows.from_row(columns, dimension)
        changed = block.episodes.copy()
        for row, memory_id in enumerate(block.ids.tolist()):
            if memory_id in episodes:
                changed[row] = episodes[memory_id]
        if not np.array_equal(changed, block.episodes):
            db.execute("UPDATE int8_blocks SET episodes = ? WHERE id = ?",
                       (changed.tobytes(), block_id))


# The columns the scan's filters need, without the codes (the row's last column: selecting
# these does not walk the codes' overflow pages).
FILTER_COLUMNS = "memory_ids, conversation_ids, is_turn, episodes, scales"

# The first GiB of the bank file is mapped while the codes are read (``mapped``).
MMAP_BYTES = 1 << 30


@contextmanager
def mapped(db: apsw.Connection) -> Iterator[None]:
    """Read through a memory map inside this block: a block's codes lie deep in the row's
    overflow chain, a page fetch each, which a map makes a pointer step instead of a
    ``read()`` (``results/bench-scale.txt``). Not for the connection's life: the mapped pages
    a process touches count in its resident size, and an ingest's peak would then grow with
    the bank (``tests/test_streaming_ingest.py``); the previous size is put back at the end."""
    previous = one_row(db.execute("PRAGMA mmap_size"))[0]
    db.execute(f"PRAGMA mmap_size = {MMAP_BYTES}")
    try:
        yield
    finally:
        db.execute(f"PRAGMA mmap_size = {int(previous)}")


def read_codes(db: apsw.Connection, dimension: int) -> CodeRows:
    """Every memory's codes, in ascending id order (inside the caller's read transaction).
    The codes are read straight into one preallocated matrix by SQLite's incremental blob I/O
    (``sqlite3_blob_read``: no blob value and no Python bytes object a block in between, no
    second copy); the small filter columns are selected and each joined over the blocks once
    into one array (no ``CodeRows`` a block, no concatenation of hundreds of parts)."""
    blocks = cast("list[tuple[int, int, bytes, bytes, bytes, bytes, bytes]]", db.execute(
        f"SELECT id, count, {FILTER_COLUMNS} FROM int8_blocks ORDER BY id").fetchall())
    codes = np.empty((sum(block[1] for block in blocks), dimension), dtype=np.uint8)
    flat = codes.reshape(-1).data  # a memoryview of the matrix
    offset = 0
    with mapped(db):
        for block_id, block_count, *_ in blocks:
            blob = db.blob_open("main", "int8_blocks", "codes", block_id, False)
            try:
                blob.read_into(flat, offset, block_count * dimension)
            finally:
                blob.close()
            offset += block_count * dimension
    ids, conversation_ids, is_turn, episodes, scales = (
        b"".join(cast("bytes", block[column]) for block in blocks) for column in range(2, 7))
    return in_id_order(CodeRows.from_row(
        [ids, conversation_ids, is_turn, episodes, scales, codes], dimension))


def _rewrite_block(db: apsw.Connection, block_id: int, rows: CodeRows) -> None:
    db.execute(
        "UPDATE int8_blocks SET first_memory_id = ?, last_memory_id = ?, count = ?, "
        "memory_ids = ?, conversation_ids = ?, is_turn = ?, episodes = ?, scales = ?, "
        "codes = ? WHERE id = ?", (*rows.blobs(), block_id))
