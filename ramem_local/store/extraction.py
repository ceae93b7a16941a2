"""The extraction ledger: LLM extraction windows with their status, attempts and errors."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass

from ..types import ExtractionWindow
from .base import StorePart, now

# Bank meta key: measured wall seconds per extraction window, per model name.
EXTRACTION_RATE_KEY = "extraction_rate"


@dataclass(frozen=True)
class WindowCounts:
    """Extraction windows of one conversation by status (one prompt version)."""

    conversation: str
    pending: int = 0
    done: int = 0
    failed: int = 0


class ExtractionLedger(StorePart):
    """The SQL of ``extraction_windows`` (a part of ``Store``)."""

    def extraction_queue(
        self,
        *,
        prompt_version: str,
        statuses: Sequence[str],
        conversation_id: int | None = None,
        since: int | None = None,
        recent_first: bool = True,
    ) -> list[ExtractionWindow]:
        """Windows to work on: of these statuses, ordered by when their last turn was said —
        most recent first by default (recent memories matter most) — optionally only those
        whose last turn is at or after ``since``."""
        rows = self.db.execute(
            """
            WITH queued AS (
                SELECT w.*, last_turn.timestamp AS last_said
                FROM extraction_windows AS w
                JOIN turns AS last_turn ON last_turn.id = w.last_turn_id
                WHERE w.prompt_version = :prompt_version
                  AND w.status IN (SELECT value FROM json_each(:statuses))
                  AND (:conversation_id IS NULL OR w.conversation_id = :conversation_id)
                  AND (:since IS NULL OR last_turn.timestamp >= :since)
            )
            SELECT id, conversation_id, first_turn_id, last_turn_id, turn_count, status,
                   attempts, error, model, prompt_version, updated_at
            FROM queued
            ORDER BY CASE WHEN :recent_first THEN -last_said ELSE last_said END, id
            """,
            {"prompt_version": prompt_version, "statuses": json.dumps(list(statuses)),
             "conversation_id": conversation_id, "since": since,
             "recent_first": int(recent_first)},
        )
        return [ExtractionWindow(*row) for row in rows]

    def window_counts(self, prompt_version: str) -> list[WindowCounts]:
        """Pending / done / failed windows per conversation (conversations with windows)."""
        rows = self.db.execute(
            """
            SELECT c.name,
                   sum(w.status = 'pending'), sum(w.status = 'done'), sum(w.status = 'failed')
            FROM extraction_windows AS w JOIN conversations AS c ON c.id = w.conversation_id
            WHERE w.prompt_version = ?
            GROUP BY c.id ORDER BY c.id
            """,
            (prompt_version,),
        )
        return [WindowCounts(name, pending, done, failed)
                for name, pending, done, failed in rows]

    def record_window_seconds(self, model: str, seconds: float) -> None:
        """Add one window's wall time to the model's measured rate."""
        rates = self._extraction_rates()
        windows, total = rates.get(model, (0, 0.0))
        rates[model] = (windows + 1, total + seconds)
        self.set_meta(EXTRACTION_RATE_KEY, json.dumps(
            {name: {"windows": n, "seconds": round(t, 3)} for name, (n, t) in rates.items()},
            sort_keys=True))

    def extraction_rate(self, model: str | None = None) -> tuple[str | None, float | None]:
        """``(model, mean wall seconds per window)`` measured on this bank: for ``model`` when
        it has a measurement, else for the model measured on most windows; (None, None) when
        nothing was measured yet."""
        rates = self._extraction_rates()
        if model not in rates:
            model = max(rates, key=lambda name: rates[name][0], default=None)
        if model is None:
            return None, None
        windows, total = rates[model]
        return model, total / windows

    def _extraction_rates(self) -> dict[str, tuple[int, float]]:
        raw = self.get_meta(EXTRACTION_RATE_KEY)
        try:
            data = json.loads(raw) if raw else {}
            return {name: (int(v["windows"]), float(v["seconds"])) for name, v in data.items()}
        except (ValueError, TypeError, KeyError, AttributeError):
            return {}  # an unreadable rate is only a lost estimate

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

