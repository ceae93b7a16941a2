"""No-LLM ingest: verbatim turns, one memory per turn, batched embeddings, resumable.

Each batch is embedded *outside* the write transaction (so a second process on the bank is not
blocked for the duration of a model call) and then written in one transaction: turns, memories,
provenance, vectors. A turn that is already stored is skipped, so re-running an ingest adds
nothing and an interrupted one resumes where it stopped.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import tzinfo

from ..errors import InputError
from ..protocols import Embedder
from ..store import Store
from ..timebounds import BOUNDS_TEXT, in_bounds
from ..types import ParsedConversation, Turn
from .anchor import turn_memory

# Turns embedded, then written, together. The embedder batches a call's texts by length, so a
# larger call pads less: LoCoMo's turns in calls of 512 pad to 1.05x their tokens; in calls of
# 64 (before) they padded to 1.6x and ingest ran at 0.6x the embedder alone on the same texts
# (results/bench-core.txt). A transaction of 512 turns still takes a fraction of a second.
DEFAULT_BATCH = 512
Progress = Callable[[int], None]


@dataclass
class IngestReport:
    conversations: int = 0
    sessions: int = 0
    turns_seen: int = 0
    turns_new: int = 0
    memories_new: int = 0
    vectors_new: int = 0
    seconds: float = 0.0
    notes: list[str] = field(default_factory=list)

    @property
    def turns_per_second(self) -> float:
        return self.turns_new / self.seconds if self.seconds > 0 else 0.0


def ingest_conversations(
    store: Store,
    conversations: Sequence[ParsedConversation],
    *,
    embedder: Embedder | None,
    tz: tzinfo,
    country: str | None = None,
    kind: str = "chat",
    source: str | None = None,
    batch_size: int = DEFAULT_BATCH,
    event_times: bool = True,
    progress: Progress | None = None,
) -> IngestReport:
    """Store the conversations' turns, one memory each; ``tz`` and ``country`` are the bank's
    (they read the dates in what was said: ``anchor.ground_event_time``)."""
    started = time.perf_counter()
    report = IngestReport()
    check_times(conversations)  # before the first write: a bad time leaves the bank as it was
    for conversation in conversations:
        _ingest_one(store, conversation, embedder, tz, kind, source, batch_size, event_times,
                    report, progress, country=country)
        report.conversations += 1
    if embedder is not None:
        report.vectors_new += embed_missing(store, embedder, batch_size=batch_size)
    report.seconds = time.perf_counter() - started
    return report


def check_times(conversations: Sequence[ParsedConversation]) -> None:
    """Refuse, before anything is written, a session or turn time the bank could not read
    back (the readers already refuse them with file and line; this guards API callers)."""
    for conversation in conversations:
        times = [(f"session {s.ordinal}", s.start) for s in conversation.sessions]
        times += [(f"turn {i + 1}", t.timestamp) for i, t in enumerate(conversation.turns)]
        for where, seconds in times:
            if not in_bounds(seconds):
                raise InputError(f"conversation {conversation.name!r} {where}: time {seconds} "
                                 f"is out of range ({BOUNDS_TEXT})")


def _ingest_one(
    store: Store,
    conversation: ParsedConversation,
    embedder: Embedder | None,
    tz: tzinfo,
    kind: str,
    source: str | None,
    batch_size: int,
    event_times: bool,
    report: IngestReport,
    progress: Progress | None,
    *,
    country: str | None,
) -> None:
    with store.atomic():
        conversation_id = store.ensure_conversation(conversation.name, kind=kind, source=source)
        participants = conversation.participants or sorted({t.speaker for t in conversation.turns})
        store.add_participants(conversation_id, participants)
        session_ids = store.add_sessions(conversation_id, conversation.sessions)
    report.sessions += len(conversation.sessions)
    session_spans = {
        ordinal: store.session_span(session_id) for ordinal, session_id in session_ids.items()
    }
    for start in range(0, len(conversation.turns), batch_size):
        batch = conversation.turns[start : start + batch_size]
        write_turn_batch(
            store, conversation_id, conversation.name, session_ids, session_spans, batch,
            participants, embedder, tz, event_times, report, country=country,
        )
        if progress is not None:
            progress(len(batch))


def write_turn_batch(
    store: Store,
    conversation_id: int,
    conversation_name: str,
    session_ids: dict[int, int],
    session_spans: dict[int, tuple[int, int]],
    turns: Sequence[Turn],
    participants: Sequence[str],
    embedder: Embedder | None,
    tz: tzinfo,
    event_times: bool,
    report: IngestReport,
    *,
    country: str | None = None,
) -> None:
    report.turns_seen += len(turns)
    fresh = store.unstored_turns(conversation_id, turns)
    if not fresh:
        return
    records = [
        turn_memory(turn, conversation_name, session_spans[turn.session_ordinal], participants,
                    tz=tz, country=country, event_times=event_times)
        for turn in fresh
    ]
    vectors = embedder.embed_documents([r.content for r in records]) if embedder else None
    around = neighbours_within(fresh)
    with store.atomic():
        stored = store.add_turns(conversation_id, session_ids, fresh)
        new_ids: list[int] = []
        new_vectors = []
        for index, (turn_row, record) in enumerate(zip(stored, records, strict=True)):
            if not turn_row.is_new:  # another process stored it meanwhile
                continue
            report.turns_new += 1
            record.source_turn_ids = [turn_row.id]
            memory_id = store.add_memory(record, f"turn:{turn_row.id}", conversation_id,
                                         neighbours=around[index])
            if memory_id is None:
                continue
            report.memories_new += 1
            new_ids.append(memory_id)
            if vectors is not None:
                new_vectors.append(vectors[index])
        if vectors is not None and new_ids:
            store.add_vectors(new_ids, new_vectors)
            report.vectors_new += len(new_ids)
        store.refresh_neighbours(
            conversation_id, {session_ids[turn.session_ordinal] for turn in fresh}
        )


def neighbours_within(turns: Sequence[Turn]) -> list[str]:
    """Each turn's neighbour text (the previous and next turn of its session, in time order)
    as far as this batch knows it; ``Store.refresh_neighbours`` then corrects the few turns at
    the batch's edges. Same text as the store's SQL: "previous next", trimmed."""
    order = sorted(range(len(turns)),
                   key=lambda i: (turns[i].session_ordinal, turns[i].timestamp, i))
    text = [""] * len(turns)
    for position, index in enumerate(order):
        session = turns[index].session_ordinal
        before = order[position - 1] if position > 0 else None
        after = order[position + 1] if position + 1 < len(order) else None
        previous = turns[before].text if before is not None and \
            turns[before].session_ordinal == session else ""
        following = turns[after].text if after is not None and \
            turns[after].session_ordinal == session else ""
        text[index] = f"{previous} {following}".strip(" ")
    return text


def embed_missing(store: Store, embedder: Embedder, *, batch_size: int = DEFAULT_BATCH) -> int:
    """Embed memories that have no vector yet (ingested before an embedder was bound)."""
    total = 0
    while True:
        pending = store.memories_without_vectors(limit=batch_size * 8)
        if not pending:
            return total
        ids = [memory_id for memory_id, _ in pending]
        vectors = embedder.embed_documents([content for _, content in pending])
        with store.atomic():
            store.add_vectors(ids, vectors)
        total += len(ids)


