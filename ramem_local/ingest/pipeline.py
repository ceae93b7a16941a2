"""No-LLM ingest: verbatim turns, one memory per turn, batched embeddings, resumable.

Each batch is embedded *outside* the write transaction (so a second process on the bank is not
blocked for the duration of a model call) and then written in one transaction: turns, memories,
provenance, vectors. A turn that is already stored is skipped, so re-running an ingest adds
nothing and an interrupted one resumes where it stopped.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import tzinfo

from ..errors import InputError
from ..names import NamesRead, read_names
from ..protocols import Embedder
from ..store import Store
from ..timebounds import BOUNDS_TEXT, in_bounds
from ..types import ConversationOutline, ParsedConversation, Turn
from .acts import ASSISTANT_SPEAKER
from .anchor import turn_memory
from .reports import IngestReport

# Turns embedded, then written, together. The embedder batches a call's texts by length, so a
# larger call pads less: LoCoMo's turns in calls of 512 pad to 1.05x their tokens; in calls of
# 64 (before) they padded to 1.6x and ingest ran at 0.6x the embedder alone on the same texts
# (results/bench-core.txt). A transaction of 512 turns still takes a fraction of a second.
DEFAULT_BATCH = 512
# The most turns a streamed ingest holds before writing them (~4 MB of 1 KB turns).
MAX_HELD = 4096
Progress = Callable[[int], None]


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
    check_times(conversations)  # before the first write: a bad time leaves the bank as it was
    turns = ((index, turn) for index, conversation in enumerate(conversations)
             for turn in conversation.turns)
    return ingest_turns(
        store, [conversation.outline() for conversation in conversations], turns,
        embedder=embedder, tz=tz, country=country, kind=kind, source=source,
        batch_size=batch_size, event_times=event_times, progress=progress,
    )


def ingest_turns(
    store: Store,
    outlines: Sequence[ConversationOutline],
    turns: Iterable[tuple[int, Turn]],
    *,
    embedder: Embedder | None,
    tz: tzinfo,
    country: str | None = None,
    kind: str = "chat",
    source: str | None = None,
    batch_size: int = DEFAULT_BATCH,
    max_held: int = MAX_HELD,
    event_times: bool = True,
    progress: Progress | None = None,
) -> IngestReport:
    """Store a stream of ``(index into outlines, turn)`` (a checked file read again, turn by
    turn). Each conversation's turns are written in batches of ``batch_size`` in the order
    they come, as if the conversation came alone, so conversations interleaved in a file end
    in the same bank. At most a batch of each conversation is held, and never more than
    ``max_held`` turns in all: past that (hundreds of conversations interleaved), every
    conversation's partial batch is written. Batches only group the writes: the bank's
    content does not depend on them (neighbour text is completed around each batch)."""
    started = time.perf_counter()
    report = IngestReport()
    check_session_times(outlines)
    batches = _Batches(store, embedder, tz, country, event_times, report, progress)
    writers: dict[int, _ConversationWriter] = {}
    held = 0
    for index, turn in turns:
        writer = writers.get(index)
        if writer is None:
            writer = writers[index] = _ConversationWriter.start(
                store, outlines[index], kind, source, report)
        writer.buffer.append(turn)
        writer.received += 1
        held += 1
        if len(writer.buffer) >= batch_size or writer.received >= writer.outline.turn_count:
            held -= len(writer.buffer)
            batches.write(writer)
        elif held > max_held:
            for each in writers.values():
                batches.write(each)
            held = 0
    for index, outline in enumerate(outlines):
        if index not in writers:  # a conversation without turns still gets its sessions
            _ConversationWriter.start(store, outline, kind, source, report)
        else:  # more turns than the outline said (a caller's stream): none is left behind
            batches.write(writers[index])
    report.conversations = len(outlines)
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
        _check_in_bounds(conversation.name, times)


def check_session_times(outlines: Sequence[ConversationOutline]) -> None:
    """:func:`check_times` for what is known before the turns come: the sessions."""
    for outline in outlines:
        _check_in_bounds(outline.name, [(f"session {s.ordinal}", s.start)
                                        for s in outline.sessions])


def _check_in_bounds(name: str, times: list[tuple[str, int]]) -> None:
    for where, seconds in times:
        if not in_bounds(seconds):
            raise InputError(f"conversation {name!r} {where}: time {seconds} "
                             f"is out of range ({BOUNDS_TEXT})")


@dataclass
class _ConversationWriter:
    """One conversation being written: its rows in the bank and the turns not written yet."""

    outline: ConversationOutline
    conversation_id: int
    session_ids: dict[int, int]
    session_spans: dict[int, tuple[int, int]]
    buffer: list[Turn] = field(default_factory=list)
    received: int = 0

    @classmethod
    def start(cls, store: Store, outline: ConversationOutline, kind: str, source: str | None,
              report: IngestReport) -> _ConversationWriter:
        """The conversation, its participants and all its sessions, in one transaction."""
        with store.atomic():
            conversation_id = store.ensure_conversation(outline.name, kind=kind, source=source)
            store.add_participants(conversation_id, outline.participants)
            session_ids = store.add_sessions(conversation_id, outline.sessions)
        report.sessions += len(outline.sessions)
        spans = {ordinal: store.session_span(session_id)
                 for ordinal, session_id in session_ids.items()}
        return cls(outline, conversation_id, session_ids, spans)


@dataclass
class _Batches:
    """Writes a conversation's held turns as one batch; the same settings for all."""

    store: Store
    embedder: Embedder | None
    tz: tzinfo
    country: str | None
    event_times: bool
    report: IngestReport
    progress: Progress | None

    def write(self, writer: _ConversationWriter) -> None:
        if not writer.buffer:
            return
        batch, writer.buffer = writer.buffer, []
        write_turn_batch(
            self.store, writer.conversation_id, writer.outline.name, writer.session_ids,
            writer.session_spans, batch, writer.outline.participants, self.embedder, self.tz,
            self.event_times, self.report, country=self.country,
        )
        if self.progress is not None:
            self.progress(len(batch))


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
    reads = [read_names(turn.text, participants) for turn in fresh]
    named_before, known = names_known(store, conversation_id, reads, participants)
    # Whether an assistant speaks here, now or in what was stored before (``ramem add``
    # stores one turn at a time): its users' commands are requests (``ingest.acts``).
    to_assistant = any(name.casefold() == ASSISTANT_SPEAKER
                       for name in [*participants, *store.participants(conversation_id),
                                    *(turn.speaker for turn in fresh)])
    records = [
        turn_memory(turn, conversation_name, session_spans[turn.session_ordinal], participants,
                    tz=tz, country=country, event_times=event_times, known=known,
                    names=read, to_assistant=to_assistant)
        for turn, read in zip(fresh, reads, strict=True)
    ]
    vectors = embedder.embed_documents([r.content for r in records]) if embedder else None
    around = neighbours_within(fresh)
    with store.atomic():
        stored = store.add_turns(conversation_id, session_ids, fresh)
        new_ids: list[int] = []
        new_rows: list[int] = []  # the rows of ``vectors`` of new_ids
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
            new_rows.append(index)
        if vectors is not None and new_ids:
            store.add_vectors(new_ids, vectors[new_rows])
            report.vectors_new += len(new_ids)
        store.refresh_neighbours_around([row.id for row in stored if row.is_new])
        speakers = {p.casefold() for p in participants}
        newly_named = {p.casefold(): p for r in records for p in r.persons
                       if p.casefold() not in named_before and p.casefold() not in speakers}
        confirm_earlier_mentions(store, conversation_id, list(newly_named.values()),
                                 participants)


def names_known(store: Store, conversation_id: int, reads: Sequence[NamesRead],
                participants: Sequence[str]) -> tuple[set[str], set[str]]:
    """For a batch of turns: the names (case-folded) that memories of the conversation
    already named, among those the batch reads; and the names that confirm a name at a
    sentence start (``names.NamesRead.confirmed``): the participants, what the batch reads by
    the rules, and what the conversation's memories name (one FTS lookup each:
    ``Store.persons_among``)."""
    read = {n.casefold(): n for r in reads for n in (*r.names, *r.at_sentence_start)}
    named_before = {n.casefold() for n in store.persons_among(list(read.values()),
                                                               conversation_id)}
    known = {n.casefold() for r in reads for n in r.names} | named_before | {
        p.casefold() for p in participants}
    return named_before, known


def confirm_earlier_mentions(store: Store, conversation_id: int, names: Sequence[str],
                             participants: Sequence[str]) -> None:
    """The turn memories of the conversation that say one of ``names`` (new to it) at a
    sentence start without a sign, written before anything named them, name them now: a
    memory names the same people whatever order the turns came in (in the writer's
    transaction)."""
    for name in names:
        for memory_id, persons, text in store.turn_memories_saying(conversation_id, name):
            if name.casefold() in {p.casefold() for p in persons}:
                continue
            if name.casefold() in {n.casefold() for n in
                                   read_names(text, participants).confirmed([name])}:
                store.set_persons(memory_id, [*persons, name])


def neighbours_within(turns: Sequence[Turn]) -> list[str]:
    """Each turn's neighbour text (the previous and next turn of its session, in time order)
    as far as this batch knows it; ``Store.refresh_neighbours_around`` then corrects the few
    turns at the batch's edges. Same text as the store's SQL: "previous next", trimmed."""
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


