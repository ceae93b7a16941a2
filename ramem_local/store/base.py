"""What every part of the store shares: its clock and what its table groups may call on one
another."""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any

import apsw

if TYPE_CHECKING:
    from ..types import EmbedderFingerprint


def now() -> int:
    """Unix seconds, for created_at / updated_at columns."""
    return int(time.time())


def one_row(cursor: apsw.Cursor) -> Any:
    """The row of a statement that always returns one: an aggregate (``count(*)``,
    ``EXISTS``), a pragma, or a lookup of a row known to exist. apsw types ``fetchone()``
    as maybe None; here no row is a bug, said as such."""
    row = cursor.fetchone()
    if row is None:
        raise LookupError("a statement that always returns a row returned none")
    return row


class StorePart:
    """The base of each table group (``EpisodeTables``, ``MemoryTables``, ...) that ``Store``
    (bank.py) mixes together: the connection, and, for the type checker only, the methods a
    group calls that ``Store`` or another group defines. At run time these come from
    ``Store``'s other bases, so nothing here shadows them."""

    db: apsw.Connection
    path: str

    if TYPE_CHECKING:
        # Store (bank.py)
        def atomic(self) -> AbstractContextManager[None]: ...
        def get_meta(self, key: str) -> str | None: ...
        def set_meta(self, key: str, value: str) -> None: ...
        def embedder_fingerprint(self) -> EmbedderFingerprint | None: ...
        def has_vectors(self) -> bool: ...
        def has_int8_codes(self) -> bool: ...

        # EpisodeTables (episodes.py)
        def _recompute_session_ends(self, conversation_id: int) -> None: ...

        # MemoryTables (memories.py)
        def refresh_neighbours(self, conversation_id: int, session_ids: Iterable[int]
                               ) -> None: ...
        def _delete_vectors(self, memory_ids_json: str) -> None: ...
        def _mirror_episodes_to_vectors(self, changed: Sequence[tuple]) -> None: ...
        def memories_key(self) -> tuple[int, int, int]: ...
