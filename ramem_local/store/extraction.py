"""The extraction ledger: LLM extraction windows with their status, attempts and errors."""

from __future__ import annotations

import json
from collections.abc import Sequence

import apsw

from ..types import ExtractionWindow
from .base import now


class ExtractionLedger:
    """The SQL of ``extraction_windows`` (a part of ``Store``)."""

    db: apsw.Connection

    def extraction_windows(
        self,
        conversation_id: int | None = None,
        *,
        prompt_version: str | None = None,
        statuses: Sequence[str] | None = None,
    ) -> list[ExtractionWindow]:
        """The recorded windows, by conversation and first turn's time."""
        wanted = list(statuses) if statuses is not None else None
        rows = self.db.execute(
            """
            SELECT w.id, w.conversation_id, w.first_turn_id, w.last_turn_id, w.turn_count,
                   w.status, w.attempts, w.error, w.model, w.prompt_version, w.updated_at
            FROM extraction_windows w LEFT JOIN turns t ON t.id = w.first_turn_id
            WHERE (?1 IS NULL OR w.conversation_id = ?1)
              AND (?2 IS NULL OR w.prompt_version = ?2)
              AND (?3 IS NULL OR w.status IN (SELECT value FROM json_each(?3)))
            ORDER BY w.conversation_id, t.timestamp, w.first_turn_id, w.id
            """,
            (conversation_id, prompt_version, None if wanted is None else json.dumps(wanted)),
        )
        return [ExtractionWindow(*row) for row in rows]

    def add_extraction_windows(
        self,
        conversation_id: int,
        windows: Sequence[tuple[int, int, int]],
        prompt_version: str,
    ) -> int:
        """Record pending windows ``(first_turn_id, last_turn_id, turn_count)``; a window
        already recorded (same turns, same prompt version) is left as it is. Returns how many
        were added."""
        added = 0
        created = now()
        for first, last, count in windows:
            row = self.db.execute(
                """
                INSERT INTO extraction_windows(conversation_id, first_turn_id, last_turn_id,
                                               turn_count, prompt_version, updated_at)
                VALUES (?, ?, ?, ?, ?, ?)
                ON CONFLICT(conversation_id, first_turn_id, last_turn_id, prompt_version)
                DO NOTHING
                RETURNING id
                """,
                (conversation_id, first, last, count, prompt_version, created),
            ).fetchone()
            added += row is not None
        return added

    def extraction_window_status(self, window_id: int) -> str | None:
        row = self.db.execute(
            "SELECT status FROM extraction_windows WHERE id = ?", (window_id,)
        ).fetchone()
        return row[0] if row else None

    def finish_extraction_window(
        self, window_id: int, *, status: str, error: str | None, model: str | None
    ) -> None:
        """Record one attempt's outcome: status done or failed (with its error)."""
        self.db.execute(
            "UPDATE extraction_windows SET status = ?, error = ?, model = ?, "
            "attempts = attempts + 1, updated_at = ? WHERE id = ?",
            (status, error, model, now(), window_id),
        )

