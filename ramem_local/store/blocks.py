"""Per-memory arrays stored in blocks: each row of a block table holds some memories' ids and
columns as flat arrays (``int8_blocks``: the int8 codes and the scan's filter columns;
``float_blocks``: the float vectors).

Why blocks: a row a memory costs its page share beyond its bytes. A 1024-d float vector (4,096
bytes) does not fit on a 4 kB leaf page: SQLite keeps ~490 B of it on the leaf and spills the
rest to an overflow page, ~4.6 kB a memory (m010, ``results/bench-scale.txt``). A block of
``FLOAT_BLOCK_SIZE`` vectors spills to whole overflow pages, ~30 B a memory beyond its bytes.
And a new process reads all the codes before its first search: a few hundred large rows read
faster than one row a memory.

Writes: rows are appended to the table's last block while it has room (rewriting it), new
blocks beyond; removing a memory rewrites the blocks that hold it (an emptied block goes).
A block's ids are ascending; blocks may overlap in id range (a vector added later for an
older memory joins the last block). Every write runs in the caller's transaction; with
``PRAGMA secure_delete`` a rewritten row's old pages are zeroed.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Generic, Protocol, TypeVar, cast

import apsw
import numpy as np

from .base import one_row


class BlockRows(Protocol):
    """Some memories' columns, one row a memory (``ids``: int64, the first column)."""

    ids: np.ndarray

    def __len__(self) -> int: ...

    def take(self, rows: np.ndarray) -> BlockRows: ...

    def blobs(self) -> tuple: ...


Rows = TypeVar("Rows", bound=BlockRows)


@dataclass(frozen=True)
class BlockTable(Generic[Rows]):
    """A block table: its name, its array columns (after ``first_memory_id``,
    ``last_memory_id`` and ``count``), the memories a block holds, and how rows are read from
    a block's columns and joined."""

    name: str
    columns: tuple[str, ...]
    size: int
    from_row: Callable[[Sequence, int], Rows]
    joined: Callable[[Sequence[Rows]], Rows]

    @property
    def column_list(self) -> str:
        return ", ".join(self.columns)

    def holding(self) -> str:
        """The blocks that hold any of :memory_ids (a JSON array of ids). The range tests read
        only the row's leading columns, not its blobs; the first two narrow the blocks to
        those overlapping the ids' span (an index on ``last_memory_id`` finds them), so that
        appending new memories' vectors looks at the last block only."""
        return f"""
WITH wanted AS (SELECT value AS id FROM json_each(:memory_ids))
SELECT b.id, {self.column_list}
FROM {self.name} AS b
WHERE b.last_memory_id >= (SELECT min(id) FROM wanted)
  AND b.first_memory_id <= (SELECT max(id) FROM wanted)
  AND EXISTS (SELECT 1 FROM wanted WHERE wanted.id BETWEEN b.first_memory_id
                                                       AND b.last_memory_id)"""


# The first GiB of the bank file is mapped while blocks are read in bulk (``mapped``).
MMAP_BYTES = 1 << 30


@contextmanager
def mapped(db: apsw.Connection) -> Iterator[None]:
    """Read through a memory map inside this block: blob reads deep into a block (the codes'
    load, a candidate's vector at its slot) walk the row's overflow chain, a page fetch each,
    which a map makes a pointer step instead of a ``read()`` (the codes' load ~30% faster,
    rescoring 200 candidates ~4x: ``results/bench-scale.txt``). Not for the connection's life:
    the mapped pages a process touches count in its resident size, and an ingest's peak would
    then grow with the bank (``tests/test_streaming_ingest.py``); the map goes at the end."""
    previous = one_row(db.execute("PRAGMA mmap_size"))[0]
    db.execute(f"PRAGMA mmap_size = {MMAP_BYTES}")
    try:
        yield
    finally:
        db.execute(f"PRAGMA mmap_size = {int(previous)}")


def block_blobs(rows: BlockRows, *arrays: np.ndarray) -> tuple:
    """(first id, last id, count, ids, then each array's bytes) of a block of these rows,
    which must be in ascending id order."""
    return (int(rows.ids[0]), int(rows.ids[-1]), len(rows),
            np.ascontiguousarray(rows.ids, dtype=np.int64).tobytes(),
            *(np.ascontiguousarray(array).tobytes() for array in arrays))


def in_id_order(rows: Rows) -> Rows:
    if len(rows) < 2 or bool(np.all(rows.ids[1:] > rows.ids[:-1])):
        return rows
    return cast("Rows", rows.take(np.argsort(rows.ids, kind="stable")))


def append_rows(db: apsw.Connection, table: BlockTable[Rows], rows: Rows,
                dimension: int) -> None:
    """Store the rows of memories that have none in ``table``: its last block is filled
    first."""
    if not len(rows):
        return
    last = db.execute(f"SELECT id, count, {table.column_list} FROM {table.name} "
                      "ORDER BY id DESC LIMIT 1").fetchone()
    if last is not None and last[1] < table.size:
        rows = in_id_order(table.joined([table.from_row(last[2:], dimension), rows]))
        _rewrite_block(db, table, cast("int", last[0]),
                       rows.take(np.arange(min(table.size, len(rows)))))
        rows = cast("Rows", rows.take(np.arange(table.size, len(rows))))
    else:
        rows = in_id_order(rows)
    placeholders = ", ".join("?" * (3 + len(table.columns)))
    for start in range(0, len(rows), table.size):
        block = rows.take(np.arange(start, min(start + table.size, len(rows))))
        db.execute(f"INSERT INTO {table.name}(first_memory_id, last_memory_id, count, "
                   f"{table.column_list}) VALUES ({placeholders})", block.blobs())


def remove_rows(db: apsw.Connection, table: BlockTable[Rows], memory_ids_json: str,
                dimension: int) -> list[Rows]:
    """Take these memories (a JSON array of ids) out of their blocks (an emptied block goes);
    returns what was taken out."""
    gone = np.asarray(json.loads(memory_ids_json), dtype=np.int64)
    removed: list[Rows] = []
    for block_id, *columns in db.execute(table.holding(), {"memory_ids": memory_ids_json}
                                         ).fetchall():
        block = table.from_row(columns, dimension)
        kept = ~np.isin(block.ids, gone)
        if kept.all():
            continue
        removed.append(cast("Rows", block.take(~kept)))
        if kept.any():
            _rewrite_block(db, table, cast("int", block_id), block.take(kept))
        else:
            db.execute(f"DELETE FROM {table.name} WHERE id = ?", (block_id,))
    return removed


def total_count(db: apsw.Connection, table: BlockTable) -> int:
    return cast("int", one_row(db.execute(
        f"SELECT coalesce(sum(count), 0) FROM {table.name}"))[0])


def _rewrite_block(db: apsw.Connection, table: BlockTable, block_id: int,
                   rows: BlockRows) -> None:
    assignments = ", ".join(f"{column} = ?" for column in
                            ("first_memory_id", "last_memory_id", "count", *table.columns))
    db.execute(f"UPDATE {table.name} SET {assignments} WHERE id = ?", (*rows.blobs(), block_id))
