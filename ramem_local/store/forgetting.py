"""Forgetting that leaves nothing, and the timeline of a window (a part of ``Store``).

A forget is planned first (which memories and turns go: :meth:`Forgetting.plan_forget`), then
carried out in one transaction (:meth:`Forgetting.forget`): vectors, memories (their FTS rows
follow by trigger), provenance, turns, the turn memories and neighbour text that quote them,
extraction windows, emptied sessions, participants and conversations. The connection runs with
``PRAGMA secure_delete`` and the FTS index with its ``secure-delete`` option, so deleted text is
overwritten rather than left in free pages or index delete markers; a WAL checkpoint
(``TRUNCATE``) then empties the write-ahead log, which held the pages as they were.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import cast

from ..names import name_words
from .base import StorePart, one_row

# A memory names a person when its '; '-joined ``persons`` holds the name (any case), or when
# one of its source turns was said by them. Parameters: :person (not NULL).
_NAMES_PERSON = """(
    instr(';' || lower(replace(m.persons, '; ', ';')) || ';', ';' || lower(:person) || ';') > 0
    OR EXISTS (SELECT 1 FROM memory_turns AS pmt JOIN turns AS pt ON pt.id = pmt.turn_id
               WHERE pmt.memory_id = m.id AND lower(pt.speaker) = lower(:person))
)"""

# How many memories whose persons match a candidate name's words are read to find the name
# itself (a candidate "parker" matches "Peter Parker" too, which is not "Parker").
PERSON_ROWS_CHECKED = 50

# A memory said inside [:start, :end) (either may be NULL): every source turn inside it, or,
# without source turns, its session start.
_SAID_INSIDE = """(
    CASE WHEN EXISTS (SELECT 1 FROM memory_turns AS imt WHERE imt.memory_id = m.id)
    THEN NOT EXISTS (
        SELECT 1 FROM memory_turns AS imt JOIN turns AS it ON it.id = imt.turn_id
        WHERE imt.memory_id = m.id
          AND ((:start IS NOT NULL AND it.timestamp < :start)
               OR (:end IS NOT NULL AND it.timestamp >= :end)))
    ELSE (:start IS NULL OR m.session_start >= :start)
         AND (:end IS NULL OR m.session_start < :end)
    END
)"""

# When a memory was said: its first source turn, else its session start.
_SAID_AT = """(
    SELECT coalesce(min(st.timestamp), m.session_start)
    FROM memory_turns AS smt JOIN turns AS st ON st.id = smt.turn_id
    WHERE smt.memory_id = m.id
)"""


@dataclass(frozen=True)
class ForgetPlan:
    """What a forget removes: memory and turn ids, and conversations left with nothing."""

    memory_ids: list[int] = field(default_factory=list)
    turn_ids: list[int] = field(default_factory=list)
    conversations: list[str] = field(default_factory=list)  # names of conversations emptied

    def __bool__(self) -> bool:
        return bool(self.memory_ids or self.turn_ids or self.conversations)


@dataclass(frozen=True)
class TimelineRow:
    """One memory of a timeline: when it was said and the session it belongs to."""

    memory_id: int
    said_at: int
    conversation: str
    session_id: int | None
    session_ordinal: int | None
    session_start: int


def _phrase(text: str) -> str:
    """An FTS5 phrase of ``text``'s words: quoted, so no word is read as syntax."""
    return '"' + " ".join(name_words(text)).replace('"', '""') + '"'


# Each memory's persons and the calendar month (UTC) it happened in, with how many months hold a
# memory at all; the assistant's answers left out.
MONTHS_NAMING = """
WITH placed AS (
    SELECT m.persons,
           strftime('%Y-%m', coalesce(m.event_start, m.session_start), 'unixepoch') AS month
    FROM memories AS m
    WHERE m.act != 'answer'
      AND (:conversation_id IS NULL OR m.conversation_id = :conversation_id)
),
spanned AS (SELECT count(DISTINCT month) AS months FROM placed)
SELECT DISTINCT placed.persons, placed.month, spanned.months
FROM placed, spanned
WHERE placed.persons != ''
"""


def _ids(values: Iterable[int]) -> str:
    return json.dumps(sorted(set(values)))


class Forgetting(StorePart):
    """The SQL of forgetting and of the timeline (a part of ``Store``)."""

    # -------------------------------------------------------------- selection
    def person_known(self, name: str) -> bool:
        """Whether any turn was said by ``name`` or any memory names them (any case)."""
        row = one_row(self.db.execute(
            f"""
            SELECT EXISTS (SELECT 1 FROM turns WHERE lower(speaker) = lower(:person))
                OR EXISTS (SELECT 1 FROM participants WHERE lower(name) = lower(:person))
                OR EXISTS (SELECT 1 FROM memories AS m WHERE {_NAMES_PERSON})
            """,
            {"person": name},
        ))
        return bool(row[0])

    def persons_named(self, conversation_id: int | None = None) -> list[str]:
        """Every person the memories of a conversation (or of the bank) name, once each (any
        case; the first spelling met), in alphabetical order. A scan of every memory: for
        listing (an error that says who is known), not for the question path
        (:meth:`persons_among`)."""
        rows = self.db.execute(
            "SELECT DISTINCT persons FROM memories "
            "WHERE persons != '' AND (?1 IS NULL OR conversation_id = ?1)", (conversation_id,))
        persons: dict[str, str] = {}
        for (joined,) in rows:
            for name in joined.split("; "):
                if name:
                    persons.setdefault(name.casefold(), name)
        return sorted(persons.values(), key=str.casefold)

    def persons_among(self, candidates: Sequence[str], conversation_id: int | None = None
                      ) -> list[str]:
        """Of ``candidates`` (names as a question says them: "lena", "peter parker"), those a
        memory of the conversation (or of the bank) names, each as the memory spells it.

        Looked up in the index of the persons the memories name (``_person_index``: their
        ``names.name_words``, so that "lenas" finds "Lena" and "parker" does not find "Peter
        Parker"), built once and kept until a memory is added or removed: a question reads
        many candidates, and one query each cost milliseconds per search."""
        index = self._person_index(conversation_id)
        found: dict[str, None] = {}
        for candidate in candidates:
            wanted = tuple(name_words(candidate))
            if wanted and wanted in index:
                found.setdefault(index[wanted], None)
        return list(found)

    def _person_index(self, conversation_id: int | None) -> dict[tuple[str, ...], str]:
        """{name words: the first spelling met} of the persons the memories of a
        conversation (or of the bank) name, cached by ``memories_key``."""
        key = (self.memories_key(), conversation_id)
        cached = getattr(self, "_person_index_cache", None)
        if cached is not None and cached[0] == key:
            return cached[1]
        index: dict[tuple[str, ...], str] = {}
        for (joined,) in self.db.execute(
                "SELECT persons FROM memories "
                "WHERE persons != '' AND (?1 IS NULL OR conversation_id = ?1) ORDER BY id",
                (conversation_id,)):
            for name in joined.split("; "):
                words = tuple(name_words(name))
                if words:
                    index.setdefault(words, name)
        self._person_index_cache = (key, index)
        return index

    def months_naming(self, conversation_id: int | None = None
                      ) -> tuple[dict[str, int], int]:
        """({casefolded person: in how many calendar months some memory naming them
        happened}, how many months hold any memory) of a conversation (or of the bank), the
        assistant's answers left out; cached by ``memories_key``. The persons of a writer's
        everyday life are named month after month; a guide met on one trip is not."""
        key = (self.memories_key(), conversation_id)
        cached = getattr(self, "_months_naming_cache", None)
        if cached is not None and cached[0] == key:
            return cached[1]
        months: dict[str, set[str]] = {}
        spanned = 0
        for joined, month, all_months in self.db.execute(MONTHS_NAMING,
                                                         {"conversation_id": conversation_id}):
            spanned = all_months
            for name in joined.split("; "):
                if name:
                    months.setdefault(name.casefold(), set()).add(month)
        counted = ({name: len(seen) for name, seen in months.items()}, int(spanned))
        self._months_naming_cache = (key, counted)
        return counted

    def turn_memories_saying(self, conversation_id: int, name: str
                             ) -> list[tuple[int, list[str], str]]:
        """``(memory id, persons, turn text)`` of the conversation's turn memories
        whose content holds the words of ``name`` (an FTS phrase lookup; the stemmer may let
        more through: the caller reads the text)."""
        rows = self.db.execute(
            """
            SELECT m.id, m.persons, t.text
            FROM memories_fts JOIN memories AS m ON m.id = memories_fts.rowid
            JOIN memory_turns AS mt ON mt.memory_id = m.id
            JOIN turns AS t ON t.id = mt.turn_id
            WHERE memories_fts MATCH :query AND m.conversation_id = :conversation_id
              AND m.kind = 'turn'
            """,
            {"query": "{content} : " + _phrase(name), "conversation_id": conversation_id})
        return [(memory_id, [p for p in persons.split("; ") if p], text)
                for memory_id, persons, text in rows]

    def set_persons(self, memory_id: int, persons: Sequence[str]) -> None:
        """A memory's persons (its FTS row follows by trigger)."""
        self.db.execute("UPDATE memories SET persons = ? WHERE id = ?",
                        ("; ".join(p for p in persons if p), memory_id))

    def existing_memory_ids(self, ids: Sequence[int]) -> set[int]:
        rows = self.db.execute(
            "SELECT id FROM memories WHERE id IN (SELECT value FROM json_each(?))", (_ids(ids),)
        )
        return {r[0] for r in rows}

    def plan_forget(
        self,
        *,
        memory_ids: Sequence[int] = (),
        conversation_id: int | None = None,
        person: str | None = None,
        start: int | None = None,
        end: int | None = None,
        everything: bool = False,
        keep_turns: bool = False,
    ) -> ForgetPlan:
        """Which memories and turns a forget removes.

        Selectors: ``memory_ids``; or any of ``conversation_id``, ``person`` and a
        ``[start, end)`` range of when things were said, which all must hold; or
        ``everything``. A turn is selected by what it is (its conversation, speaker, time); a
        memory by its conversation, by naming the person, and by being said inside the range
        (all its source turns; without any, its session start). Selected memories take their
        source turns with them, unless ``keep_turns`` or an extracted memory that stays cites
        them. A memory drawn from a turn that goes, goes too (its other turns stay); a turn
        that goes takes its turn memory, the turn's own record.
        """
        filtered = conversation_id is not None or person is not None or (
            start is not None or end is not None)
        params = {"conversation_id": conversation_id, "person": person,
                  "start": start, "end": end}
        if everything:
            memories = {r[0] for r in self.db.execute("SELECT id FROM memories")}
            turns = {r[0] for r in self.db.execute("SELECT id FROM turns")}
        elif filtered:
            turns = {r[0] for r in self.db.execute(
                """
                SELECT t.id FROM turns AS t
                WHERE (:conversation_id IS NULL OR t.conversation_id = :conversation_id)
                  AND (:person IS NULL OR lower(t.speaker) = lower(:person))
                  AND (:start IS NULL OR t.timestamp >= :start)
                  AND (:end IS NULL OR t.timestamp < :end)
                """, params)}
            memories = {r[0] for r in self.db.execute(
                f"""
                SELECT m.id FROM memories AS m
                WHERE (:conversation_id IS NULL OR m.conversation_id = :conversation_id)
                  AND (:person IS NULL OR {_NAMES_PERSON})
                  AND (coalesce(:start, :end) IS NULL OR {_SAID_INSIDE})
                """, params)}
        else:
            memories = self.existing_memory_ids(memory_ids)
            turns = set()
        sources = self._sources_of(memories) - turns  # of the memories selected themselves
        memories |= self._memories_citing(turns)  # drawn from a selected turn
        if keep_turns:
            return ForgetPlan(sorted(memories), [], [])
        turns |= sources - self._cited_by_other_extracted(sources, memories)
        memories |= self._memories_citing(turns)  # the turn memories of the turns that go
        return ForgetPlan(sorted(memories), sorted(turns),
                          self._emptied_conversations(memories, turns))

    def _memories_citing(self, turn_ids: set[int]) -> set[int]:
        rows = self.db.execute(
            "SELECT DISTINCT memory_id FROM memory_turns "
            "WHERE turn_id IN (SELECT value FROM json_each(?))", (_ids(turn_ids),))
        return {r[0] for r in rows}

    def _sources_of(self, memory_ids: set[int]) -> set[int]:
        rows = self.db.execute(
            "SELECT DISTINCT turn_id FROM memory_turns "
            "WHERE memory_id IN (SELECT value FROM json_each(?))", (_ids(memory_ids),))
        return {r[0] for r in rows}

    def _cited_by_other_extracted(self, turn_ids: set[int], leaving: set[int]) -> set[int]:
        """The turns that an extracted memory which stays still cites."""
        rows = self.db.execute(
            """
            SELECT DISTINCT mt.turn_id
            FROM memory_turns AS mt JOIN memories AS m ON m.id = mt.memory_id
            WHERE m.kind != 'turn'
              AND mt.turn_id IN (SELECT value FROM json_each(?1))
              AND m.id NOT IN (SELECT value FROM json_each(?2))
            """, (_ids(turn_ids), _ids(leaving)))
        return {r[0] for r in rows}

    def _emptied_conversations(self, memory_ids: set[int], turn_ids: set[int]) -> list[str]:
        rows = self.db.execute(
            """
            SELECT c.name FROM conversations AS c
            WHERE NOT EXISTS (SELECT 1 FROM turns AS t WHERE t.conversation_id = c.id
                              AND t.id NOT IN (SELECT value FROM json_each(?2)))
              AND NOT EXISTS (SELECT 1 FROM memories AS m WHERE m.conversation_id = c.id
                              AND m.id NOT IN (SELECT value FROM json_each(?1)))
            ORDER BY c.id
            """, (_ids(memory_ids), _ids(turn_ids)))
        return [r[0] for r in rows]

    # ---------------------------------------------------------------- removal
    def forget(self, plan: ForgetPlan) -> None:
        """Carry out a plan in one transaction (see the module docstring)."""
        memories, turns = _ids(plan.memory_ids), _ids(plan.turn_ids)
        with self.atomic():
            touched = cast("list[tuple[int, int]]", self.db.execute(
                """
                SELECT DISTINCT conversation_id, session_id FROM turns
                WHERE id IN (SELECT value FROM json_each(?))
                """, (turns,)).fetchall())
            conversations = sorted({c for c, _ in touched} | {
                r[0] for r in self.db.execute(
                    "SELECT DISTINCT conversation_id FROM memories "
                    "WHERE id IN (SELECT value FROM json_each(?))", (memories,))} | {
                # those the plan empties, also when they held no turn or memory already (a
                # conversation and sessions left by an ingest that failed before its turns)
                r[0] for r in self.db.execute(
                    "SELECT id FROM conversations WHERE name IN (SELECT value FROM json_each(?))",
                    (json.dumps(plan.conversations),))})
            for conversation_id in {c for c, _ in touched}:
                self._shrink_windows(conversation_id, set(plan.turn_ids))
            self._delete_vectors(memories)
            self.db.execute("DELETE FROM memories WHERE id IN (SELECT value FROM json_each(?))",
                            (memories,))
            self.db.execute("DELETE FROM turns WHERE id IN (SELECT value FROM json_each(?))",
                            (turns,))
            for conversation_id in conversations:
                self._tidy_conversation(
                    conversation_id, [s for c, s in touched if c == conversation_id])

    def _shrink_windows(self, conversation_id: int, leaving: set[int]) -> None:
        """Extraction windows lose the turns that go: a window left with none is removed, the
        others keep their remaining first and last turn (so planning does not treat their turns
        as new) and lose their last error, which may quote a model's reply about the turn."""
        order = [r[0] for r in self.db.execute(
            "SELECT id FROM turns WHERE conversation_id = ? ORDER BY timestamp, id",
            (conversation_id,))]
        position = {turn_id: index for index, turn_id in enumerate(order)}
        windows = self.db.execute(
            "SELECT id, first_turn_id, last_turn_id FROM extraction_windows "
            "WHERE conversation_id = ?", (conversation_id,)).fetchall()
        for window_id, first, last in windows:
            if first not in position or last not in position:
                continue
            inside = order[position[first]:position[last] + 1]
            kept = [t for t in inside if t not in leaving]
            if len(kept) == len(inside):
                continue
            if not kept:
                self.db.execute("DELETE FROM extraction_windows WHERE id = ?", (window_id,))
                continue
            updated = self.db.execute(
                "UPDATE OR IGNORE extraction_windows SET first_turn_id = ?, last_turn_id = ?, "
                "turn_count = ?, error = NULL WHERE id = ? RETURNING id",
                (kept[0], kept[-1], len(kept), window_id)).fetchone()
            if updated is None:  # an equal window exists already
                self.db.execute("DELETE FROM extraction_windows WHERE id = ?", (window_id,))

    def _tidy_conversation(self, conversation_id: int, session_ids: list[int]) -> None:
        """After turns go: emptied sessions go (spans are recomputed), the neighbour text of
        the sessions' turn memories is rebuilt (it quoted the turns that went), speakers
        without turns leave the participants, and a conversation left with nothing goes."""
        self.db.execute(
            """
            DELETE FROM sessions WHERE conversation_id = ?1
              AND NOT EXISTS (SELECT 1 FROM turns AS t WHERE t.session_id = sessions.id)
            """, (conversation_id,))
        self._recompute_session_ends(conversation_id)
        self.refresh_neighbours(conversation_id, session_ids)
        self.db.execute(
            """
            DELETE FROM participants WHERE conversation_id = ?1
              AND NOT EXISTS (SELECT 1 FROM turns AS t WHERE t.conversation_id = ?1
                              AND t.speaker = participants.name)
            """, (conversation_id,))
        self.db.execute(
            """
            DELETE FROM conversations WHERE id = ?1
              AND NOT EXISTS (SELECT 1 FROM turns WHERE conversation_id = ?1)
              AND NOT EXISTS (SELECT 1 FROM memories WHERE conversation_id = ?1)
            """, (conversation_id,))

    def checkpoint(self) -> bool:
        """Copy the write-ahead log into the bank file and truncate it to zero bytes; False
        when another connection kept it from completing."""
        if self.path == ":memory:":
            return True
        busy, _, _ = one_row(self.db.execute("PRAGMA wal_checkpoint(TRUNCATE)"))
        return busy == 0

    # --------------------------------------------------------------- timeline
    def timeline_rows(self, *, start: int | None = None, end: int | None = None,
                      person: str | None = None, conversation_id: int | None = None,
                      limit: int = 1000) -> list[TimelineRow]:
        """The memories said in ``[start, end)`` in the order they were said, each with its
        first source turn's session (memories without source turns: their session start)."""
        rows = self.db.execute(
            f"""
            WITH said AS (
                SELECT m.id, m.conversation_id, m.session_start,
                       {_SAID_AT} AS said_at,
                       (SELECT st.session_id FROM memory_turns AS smt
                        JOIN turns AS st ON st.id = smt.turn_id
                        WHERE smt.memory_id = m.id
                        ORDER BY st.timestamp, st.id LIMIT 1) AS session_id
                FROM memories AS m
                WHERE (:person IS NULL OR {_NAMES_PERSON})
                  AND (:conversation_id IS NULL OR m.conversation_id = :conversation_id)
            )
            SELECT said.id, said.said_at, c.name, said.session_id, s.ordinal,
                   coalesce(s.start, said.session_start)
            FROM said
            JOIN conversations AS c ON c.id = said.conversation_id
            LEFT JOIN sessions AS s ON s.id = said.session_id
            WHERE (:start IS NULL OR said.said_at >= :start)
              AND (:end IS NULL OR said.said_at < :end)
            ORDER BY said.said_at, said.id
            LIMIT :limit
            """,
            {"start": start, "end": end, "person": person, "conversation_id": conversation_id,
             "limit": limit},
        )
        return [TimelineRow(*row) for row in rows]
