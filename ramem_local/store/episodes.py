"""Episode tables: conversations, their participants, sessions and verbatim turns."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass

from ..types import DAY, ConversationSummary, Session, TimeRange, Turn
from .base import StorePart, now, one_row


@dataclass(frozen=True)
class StoredTurn:
    id: int
    external_id: str
    is_new: bool


class EpisodeTables(StorePart):
    """The SQL of conversations, participants, sessions and turns (a part of ``Store``)."""

    # ---------------------------------------------------------- conversations
    def conversation_id(self, name: str) -> int | None:
        row = self.db.execute("SELECT id FROM conversations WHERE name = ?", (name,)).fetchone()
        return row[0] if row else None

    def conversation_name_by_source(self, source: str) -> str | None:
        """The name of the first conversation recorded with this source (an imported chat's
        ``chatgpt:<id>``), so a chat renamed since is found under its first name."""
        row = self.db.execute(
            "SELECT name FROM conversations WHERE source = ? ORDER BY id LIMIT 1", (source,)
        ).fetchone()
        return row[0] if row else None

    def ensure_conversation(
        self, name: str, *, kind: str = "chat", source: str | None = None
    ) -> int:
        self.db.execute(
            "INSERT INTO conversations(name, kind, source, created_at) VALUES (?, ?, ?, ?) "
            "ON CONFLICT(name) DO NOTHING",
            (name, kind, source, now()),
        )
        return self.conversation_id(name)  # type: ignore[return-value]

    def add_participants(self, conversation_id: int, names: Iterable[str]) -> None:
        self.db.executemany(
            "INSERT OR IGNORE INTO participants(conversation_id, name) VALUES (?, ?)",
            [(conversation_id, n) for n in names if n],
        )

    def participants(self, conversation_id: int | None = None) -> list[str]:
        rows = self.db.execute(
            "SELECT DISTINCT name FROM participants "
            "WHERE ?1 IS NULL OR conversation_id = ?1 ORDER BY name",
            (conversation_id,),
        )
        return [r[0] for r in rows]

    def conversation_kinds(self) -> list[tuple[int, str]]:
        """(id, kind) of every conversation: what a search asks of them (``conversations``
        counts their sessions, turns and memories too, half a millisecond in a large bank)."""
        return [(row[0], row[1]) for row in self.db.execute(
            "SELECT id, kind FROM conversations ORDER BY id")]

    def conversations(self) -> list[ConversationSummary]:
        rows = self.db.execute(
            """
            SELECT c.id, c.name, c.kind,
                   (SELECT count(*) FROM sessions s WHERE s.conversation_id = c.id),
                   (SELECT count(*) FROM turns t WHERE t.conversation_id = c.id),
                   (SELECT count(*) FROM memories m WHERE m.conversation_id = c.id)
            FROM conversations c ORDER BY c.id
            """
        )
        return [ConversationSummary(*row) for row in rows]

    # --------------------------------------------------------------- sessions
    def add_sessions(self, conversation_id: int, sessions: Sequence[Session]) -> dict[int, int]:
        """Insert sessions (idempotent by ordinal); returns ordinal -> session id."""
        self.db.executemany(
            'INSERT INTO sessions(conversation_id, ordinal, start, "end") VALUES (?, ?, ?, ?) '
            "ON CONFLICT(conversation_id, ordinal) DO NOTHING",
            [(conversation_id, s.ordinal, s.start, s.start + DAY) for s in sessions],
        )
        self._recompute_session_ends(conversation_id)
        rows = self.db.execute(
            "SELECT ordinal, id FROM sessions WHERE conversation_id = ?", (conversation_id,)
        )
        return dict(rows)

    def _recompute_session_ends(self, conversation_id: int) -> None:
        """Each span ends at the next session's start; the last one at its start + 1 day.

        Memories whose spans change (a new session after the former last one) follow, in the
        memories table and in the vector table's metadata.
        """
        self.db.execute(
            """
            WITH next_start AS (
                SELECT id,
                       coalesce(lead(start) OVER (ORDER BY start, ordinal), start + ?2) AS new_end
                FROM sessions WHERE conversation_id = ?1
            )
            UPDATE sessions SET "end" = next_start.new_end
            FROM next_start
            WHERE sessions.id = next_start.id AND sessions."end" != next_start.new_end
            """,
            (conversation_id, DAY),
        )
        changed = self.db.execute(
            """
            WITH memory_span AS (
                SELECT mt.memory_id, min(s.start) AS span_start, max(s."end") AS span_end
                FROM memory_turns mt
                JOIN turns t ON t.id = mt.turn_id
                JOIN sessions s ON s.id = t.session_id
                WHERE t.conversation_id = ?1
                GROUP BY mt.memory_id
            )
            UPDATE memories SET session_start = span_start, session_end = span_end
            FROM memory_span
            WHERE memories.id = memory_span.memory_id
              AND (memories.session_start != span_start OR memories.session_end != span_end)
            RETURNING memories.id, memories.session_start, memories.session_end,
                      memories.event_start, memories.event_end
            """,
            (conversation_id,),
        ).fetchall()
        self._mirror_episodes_to_vectors(changed)

    def timeline(self, conversation_id: int | None = None) -> TimeRange | None:
        row = self.db.execute(
            'SELECT min(start), max("end") FROM sessions WHERE ?1 IS NULL OR conversation_id = ?1',
            (conversation_id,),
        ).fetchone()
        if row is None or row[0] is None:
            return None
        return TimeRange(row[0], row[1])

    def latest_session_start(self, conversation_id: int | None = None) -> int | None:
        row = self.db.execute(
            "SELECT max(start) FROM sessions WHERE ?1 IS NULL OR conversation_id = ?1",
            (conversation_id,),
        ).fetchone()
        return row[0] if row else None

    # ------------------------------------------------------------------ turns
    def add_turns(
        self, conversation_id: int, session_ids: dict[int, int], turns: Sequence[Turn]
    ) -> list[StoredTurn]:
        """Insert turns verbatim; turns already stored (same key) are reported as not new."""
        stored: list[StoredTurn] = []
        for turn in turns:
            key = turn_key(turn)
            row = self.db.execute(
                """
                INSERT INTO turns(conversation_id, session_id, turn_key, external_id, speaker,
                                  text, caption, timestamp)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?)
                ON CONFLICT(conversation_id, turn_key) DO NOTHING
                RETURNING id
                """,
                (
                    conversation_id,
                    session_ids[turn.session_ordinal],
                    key,
                    turn.external_id or key,
                    turn.speaker,
                    turn.text,
                    turn.caption,
                    turn.timestamp,
                ),
            ).fetchone()
            if row is not None:
                stored.append(StoredTurn(row[0], turn.external_id or key, True))
            else:
                existing = one_row(self.db.execute(
                    "SELECT id, external_id FROM turns WHERE conversation_id = ? AND turn_key = ?",
                    (conversation_id, key),
                ))
                stored.append(StoredTurn(existing[0], existing[1], False))
        return stored

    def unstored_turns(self, conversation_id: int, turns: Sequence[Turn]) -> list[Turn]:
        """The turns of a batch that this conversation does not hold yet."""
        keys = [turn_key(t) for t in turns]
        placeholders = ",".join("?" * len(keys))
        stored = {
            r[0]
            for r in self.db.execute(
                f"SELECT turn_key FROM turns WHERE conversation_id = ? "
                f"AND turn_key IN ({placeholders})",
                (conversation_id, *keys),
            )
        }
        return [t for t, k in zip(turns, keys, strict=True) if k not in stored]

    def session_span(self, session_id: int) -> tuple[int, int]:
        row = one_row(self.db.execute(
            'SELECT start, "end" FROM sessions WHERE id = ?', (session_id,)
        ))
        return row[0], row[1]

    def turn_memory_id(self, conversation: str, key: str) -> int | None:
        """The turn memory (kind "turn") of the turn with this key, if stored."""
        row = self.db.execute(
            """
            SELECT m.id FROM turns t
            JOIN conversations c ON c.id = t.conversation_id
            JOIN memory_turns mt ON mt.turn_id = t.id
            JOIN memories m ON m.id = mt.memory_id AND m.kind = 'turn'
            WHERE c.name = ? AND t.turn_key = ?
            """,
            (conversation, key),
        ).fetchone()
        return row[0] if row else None

    def conversations_with_times_outside(self, low: int, high: int) -> dict[str, int]:
        """Conversation name -> how many of its sessions, turns and memories hold a time
        outside ``[low, high)`` (written by a version that did not check times)."""
        rows = self.db.execute(
            """
            SELECT c.name, count(*) FROM (
                SELECT conversation_id FROM sessions
                 WHERE start < ?1 OR start >= ?2 OR "end" < ?1 OR "end" > ?2
                UNION ALL
                SELECT conversation_id FROM turns WHERE timestamp < ?1 OR timestamp >= ?2
                UNION ALL
                SELECT conversation_id FROM memories
                 WHERE session_start < ?1 OR session_end > ?2
                    OR event_start < ?1 OR event_end > ?2
            ) AS bad JOIN conversations c ON c.id = bad.conversation_id
            GROUP BY c.name ORDER BY c.name
            """,
            (low, high),
        )
        return dict(rows)

    def turn_count(self) -> int:
        return one_row(self.db.execute("SELECT count(*) FROM turns"))[0]


    def conversation_turns(self, conversation_id: int) -> list[Turn]:
        """Every turn of a conversation in time order, with store ids.

        ``external_id`` is None for turns that came without one (the store then keeps a hash
        of speaker/time/text as their key, which means nothing to a model or a person).
        """
        rows = self.db.execute(
            """
            SELECT t.id, t.speaker, t.text, t.timestamp, s.ordinal, t.external_id, t.caption
            FROM turns t JOIN sessions s ON s.id = t.session_id
            WHERE t.conversation_id = ?
            ORDER BY t.timestamp, t.id
            """,
            (conversation_id,),
        )
        turns = []
        for r in rows:
            turn = Turn(speaker=r[1], text=r[2], timestamp=r[3], session_ordinal=r[4],
                        external_id=None, caption=r[6], id=r[0])
            if r[5] != turn_key(turn):
                turn.external_id = r[5]
            turns.append(turn)
        return turns

    def all_turns(self) -> Iterator[tuple[str, Turn]]:
        """(conversation name, turn) for every stored turn, conversation by conversation."""
        for conversation in self.conversations():
            for turn in self.conversation_turns(conversation.id):
                yield conversation.name, turn

    def turn_session_spans(self, conversation_id: int) -> dict[int, tuple[int, int]]:
        """turn id -> the span ``(start, end)`` of the turn's session."""
        rows = self.db.execute(
            'SELECT t.id, s.start, s."end" FROM turns t JOIN sessions s ON s.id = t.session_id '
            "WHERE t.conversation_id = ?",
            (conversation_id,),
        )
        return {r[0]: (r[1], r[2]) for r in rows}


def turn_key(turn: Turn) -> str:
    """Identity of a turn within its conversation: its external id, else a content hash."""
    if turn.external_id:
        return turn.external_id
    digest = hashlib.sha256(f"{turn.speaker}\x1f{turn.timestamp}\x1f{turn.text}".encode())
    return "t" + digest.hexdigest()[:16]

