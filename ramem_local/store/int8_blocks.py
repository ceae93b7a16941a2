"""The int8 codes on disk, in blocks (``blocks``): each row of ``int8_blocks`` holds up to
``BLOCK_SIZE`` memories' ids, filter columns, scales and codes as flat arrays.

Why blocks: a new process reads every code before its first search. Stored one row a memory
(``memories_int8``, m007-m009), that read stepped through 100k rows and took 0.75 s at
100k × 1024; a block row is read with one ``np.frombuffer`` a column, so the read is a few
hundred large blobs (``results/bench-scale.txt``). Forgetting a memory or changing its
episode rewrites the blocks that hold it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import cast

import apsw
import numpy as np

from .blocks import (
    BlockTable,
    append_rows,
    block_blobs,
    in_id_order,
    mapped,
    remove_rows,
)

# Memories a block holds: at 1024-d a block's codes are 256 kB, the most one write rewrites;
# 100k memories are ~400 rows to read.
BLOCK_SIZE = 256

BLOCK_COLUMNS = "memory_ids, conversation_ids, is_turn, episodes, scales, codes"



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

    def blobs(self) -> tuple:
        """(first id, last id, count, then the ``BLOCK_COLUMNS``) of a block of these rows,
        which must be in ascending id order."""
        return block_blobs(self, self.conversation_ids.astype(np.int64),
                           self.is_turn.astype(np.uint8), self.episodes.astype(np.int64),
                           self.scales.astype(np.float32), self.codes.astype(np.uint8))


INT8_BLOCKS = BlockTable("int8_blocks", tuple(BLOCK_COLUMNS.split(", ")), BLOCK_SIZE,
                         CodeRows.from_row, CodeRows.joined)


def append_codes(db: apsw.Connection, rows: CodeRows, dimension: int) -> None:
    """Store the codes of memories that have none stored: the last block is filled first."""
    append_rows(db, INT8_BLOCKS, rows, dimension)


def remove_codes(db: apsw.Connection, memory_ids_json: str, dimension: int) -> None:
    """Take these memories (a JSON array of ids) out of their blocks; an emptied block goes."""
    remove_rows(db, INT8_BLOCKS, memory_ids_json, dimension)


def set_episodes(db: apsw.Connection, episodes: Mapping[int, Sequence[int]],
                 dimension: int) -> None:
    """Give these memories (id → session start, session end, event start, event end, as
    ``CodeRows.episodes``) their new episode."""
    if not episodes:
        return
    for block_id, *columns in db.execute(
            INT8_BLOCKS.holding(), {"memory_ids": json.dumps(list(episodes))}).fetchall():
        block = CodeRows.from_row(columns, dimension)
        changed = block.episodes.copy()
        for row, memory_id in enumerate(block.ids.tolist()):
            if memory_id in episodes:
                changed[row] = episodes[memory_id]
        if not np.array_equal(changed, block.episodes):
            db.execute("UPDATE int8_blocks SET episodes = ? WHERE id = ?",
                       (changed.tobytes(), block_id))


# The columns the scan's filters need, without the codes (the row's last column: reading
# these does not touch the codes' overflow pages).
FILTER_COLUMNS = "memory_ids, conversation_ids, is_turn, episodes, scales"


def read_codes(db: apsw.Connection, dimension: int) -> CodeRows:
    """Every memory's codes, in ascending id order (inside the caller's read transaction).
    The codes are read straight into one preallocated matrix through SQLite's incremental
    blob I/O (``sqlite3_blob_read``: no blob value, no Python bytes object in between: at
    100k × 1024 a ``SELECT`` of the codes copied 100 MB three times, ``results/bench-scale.txt``);
    the small filter columns are selected, each joined over the blocks into one array."""
    blocks = cast("list[tuple[int, int, bytes, bytes, bytes, bytes, bytes]]", db.execute(
        f"SELECT id, count, {FILTER_COLUMNS} FROM int8_blocks ORDER BY id").fetchall())
    count = sum(block[1] for block in blocks)
    codes = np.empty((count, dimension), dtype=np.uint8)
    flat = codes.reshape(-1).data  # a memoryview of the matrix
    offset = 0
    with mapped(db):  # the codes are read deep into each row's overflow chain
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
        [ids, conversation_ids, is_turn, episodes, scales, codes.reshape(-1)], dimension))
