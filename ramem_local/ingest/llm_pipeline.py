"""The LLM ingest tier: windows → extraction → anchoring → embedding → one write per window.

It runs after the no-LLM ingest, which has already stored every turn as a ``turn`` memory, so
nothing depends on the model succeeding: a failed window keeps its turns retrievable, is
recorded with its error, and is retried by ``retry_failed=True``. Re-running skips done windows.

For each window the model call and the embedding happen outside any write transaction (a
second process on the bank is not blocked for the length of a model call); then one transaction
writes the window's memories, their provenance and vectors, and the window's status. An entry
equal (after normalisation) to a memory already stored — typically the same fact seen again in
the overlap of the next window — is not stored twice: its source turns are added to the
existing memory's provenance.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import tzinfo

import numpy as np

from ..errors import EntryRejected
from ..protocols import LLM, Embedder
from ..store import Store
from ..types import ExtractionWindow, LLMCall, MemoryRecord, Turn
from .anchor import anchor_entry, dedup_key
from .extract import (
    MAX_ERROR_CHARS,
    PROMPT_VERSION,
    extract_window,
    repair_window,
    turn_labels,
)
from .reports import ExtractionReport, WindowReport
from .windows import (
    DEFAULT_OVERLAP,
    DEFAULT_SIZE,
    DONE,
    FAILED,
    PENDING,
    ensure_windows,
    window_turns,
    windows_of,
)

DEFAULT_MAX_TOKENS = 1536


@dataclass
class _Conversation:
    id: int
    name: str
    turns: list[Turn]
    participants: list[str]
    spans: dict[int, tuple[int, int]]


def plan_extraction(
    store: Store,
    *,
    conversation_id: int | None = None,
    window_size: int = DEFAULT_SIZE,
    overlap: int = DEFAULT_OVERLAP,
) -> list[int]:
    """Record the extraction windows of every stored turn (idempotent; new turns get new
    windows) without calling any model; return the conversations considered."""
    names = {c.id: c.name for c in store.conversations()}
    if conversation_id is not None and conversation_id not in names:
        raise ValueError(f"no conversation with id {conversation_id} in this bank")
    ids = [conversation_id] if conversation_id is not None else list(names)
    for cid in ids:
        ensure_windows(store, cid, store.conversation_turns(cid), prompt_version=PROMPT_VERSION,
                       size=window_size, overlap=overlap)
    return ids


def run_extraction(
    store: Store,
    llm: LLM,
    embedder: Embedder | None,
    *,
    tz: tzinfo,
    country: str | None = None,
    conversation_id: int | None = None,
    retry_failed: bool = False,
    window_size: int = DEFAULT_SIZE,
    overlap: int = DEFAULT_OVERLAP,
    max_tokens: int = DEFAULT_MAX_TOKENS,
    limit: int | None = None,
    recent_first: bool = False,
    since: int | None = None,
    budget_seconds: float | None = None,
    progress: Callable[[WindowReport], None] | None = None,
    clock: Callable[[], float] = time.perf_counter,
) -> ExtractionReport:
    """Extract memories from every pending window (and failed ones with ``retry_failed``).

    Plans windows first (idempotent), then works the queue: oldest first, or most recent first
    with ``recent_first``; only windows whose last turn is at or after ``since``. It stops at a
    window boundary after ``limit`` windows or once ``budget_seconds`` have passed (the rest
    stay pending for the next run). Never raises for what the model does; errors of the bank or
    the embedder propagate (the window being processed then stays pending, everything before it
    is committed). Each window's wall time (``clock``) feeds the bank's measured rate.
    ``country`` is the bank's, for reading the dates in what was said (``anchor.event_cues``).
    """
    started = clock()
    report = ExtractionReport()
    if embedder is not None:  # refuses an embedder other than the bank's (StoreError)
        store.bind_embedder(embedder.fingerprint)
    ids = plan_extraction(store, conversation_id=conversation_id, window_size=window_size,
                          overlap=overlap)
    conversations = {c.id: c for c in store.conversations()}
    for cid in ids:
        counts = Counter(w.status for w in windows_of(store, cid, prompt_version=PROMPT_VERSION))
        report.windows_total += sum(counts.values())
        report.skipped_done += counts[DONE]
        report.skipped_failed += 0 if retry_failed else counts[FAILED]
    statuses = [PENDING, FAILED] if retry_failed else [PENDING]
    queue = [w for w in store.extraction_queue(
        prompt_version=PROMPT_VERSION, statuses=statuses, conversation_id=conversation_id,
        since=since, recent_first=recent_first) if w.conversation_id in ids]
    if limit is not None:
        report.not_processed = max(0, len(queue) - limit)
        queue = queue[: max(0, limit)]

    model = getattr(llm, "name", None) or type(llm).__name__
    loaded: dict[int, _Conversation] = {}
    for index, window in enumerate(queue, start=1):
        if budget_seconds is not None and clock() - started >= budget_seconds:
            report.not_processed += len(queue) - index + 1
            report.stopped_by_budget = True
            break
        if window.conversation_id not in loaded:
            cid = window.conversation_id
            loaded[cid] = _Conversation(cid, conversations[cid].name,
                                        store.conversation_turns(cid), store.participants(cid),
                                        store.turn_session_spans(cid))
        window_started = clock()
        window_report = _process_window(store, llm, embedder, loaded[window.conversation_id],
                                        window, tz=tz, country=country, max_tokens=max_tokens,
                                        model=model)
        if window_report.status != "skipped":
            store.record_window_seconds(model, clock() - window_started)
        window_report.index, window_report.total = index, len(queue)
        _account(report, window_report)
        if progress is not None:
            progress(window_report)
    report.seconds = clock() - started
    return report


def _process_window(
    store: Store,
    llm: LLM,
    embedder: Embedder | None,
    conversation: _Conversation,
    window: ExtractionWindow,
    *,
    tz: tzinfo,
    country: str | None,
    max_tokens: int,
    model: str,
) -> WindowReport:
    turns = window_turns(window, conversation.turns)
    entries: list[dict] = []
    calls: list[LLMCall] = []
    split = cut_short = False
    if not turns:
        error: str | None = "the window's turns are no longer in the bank"
    else:
        outcome = extract_window(llm, turns, max_tokens=max_tokens, tz=tz)
        calls, split, error = outcome.calls, outcome.split, outcome.error
        cut_short = outcome.cut_short
        entries = outcome.entries or []
    records, rejected = _anchor_all(entries, turns, conversation, tz, country)
    repaired = error is None and bool(entries) and not records
    if repaired:
        repair = repair_window(llm, turns, entries, rejected, max_tokens=max_tokens, tz=tz)
        calls += repair.calls
        cut_short = repair.cut_short
        again = repair.entries or []
        entries = entries + again
        records, rejected_again = _anchor_all(again, turns, conversation, tz, country)
        rejected += rejected_again
    if error is None and entries and not records:
        error = f"no valid entry ({len(rejected)} rejected; first: {rejected[0]})"
        if repaired:
            second = repair.error or ("no valid entry either" if again else "an empty reply")
            error += f"; asked again: {second}"
    vectors = None
    if error is None and records and embedder is not None:
        vectors = embedder.embed_documents([r.content for r in records])

    total = LLMCall.total(calls)
    result = WindowReport(
        window_id=window.id, conversation=conversation.name, index=0, total=0,
        turns=len(turns), status=FAILED if error else DONE,
        error=error[:MAX_ERROR_CHARS] if error else None, memories_new=0, memories_merged=0,
        entries=len(entries), entries_rejected=len(rejected), llm_calls=total.calls, split=split,
        tokens_in=total.tokens_in, tokens_out=total.tokens_out, seconds=total.ms / 1000,
        cut_short=cut_short, repaired=repaired,
    )
    with store.atomic():
        if store.extraction_window_status(window.id) == DONE:  # another process finished it
            result.status, result.error = "skipped", None
            return result
        if result.status == DONE:
            _write_memories(store, conversation.id, window.id, records, vectors, result)
        store.finish_extraction_window(window.id, status=result.status, error=result.error,
                                       model=model)
    return result


def _anchor_all(
    entries: Sequence[dict],
    turns: Sequence[Turn],
    conversation: _Conversation,
    tz: tzinfo,
    country: str | None,
) -> tuple[list[MemoryRecord], list[str]]:
    """Memories from a window's entries, one per distinct content; and the rejection reasons."""
    labels = turn_labels(turns)
    by_key: dict[str, MemoryRecord] = {}
    rejected: list[str] = []
    for entry in entries:
        try:
            record = anchor_entry(entry, labels, conversation.spans, tz,
                                  conversation=conversation.name,
                                  participants=conversation.participants, country=country)
        except EntryRejected as exc:
            rejected.append(str(exc))
            continue
        except (TypeError, ValueError, KeyError, AttributeError) as exc:  # off-schema data
            rejected.append(f"unreadable entry ({type(exc).__name__}: {exc})")
            continue
        key = dedup_key(record.content)
        if key in by_key:  # the same fact twice in one window: one memory, both citations
            kept = by_key[key]
            kept.source_turn_ids += [t for t in record.source_turn_ids
                                     if t not in kept.source_turn_ids]
            kept.source_turns += [t for t in record.source_turns if t not in kept.source_turns]
            kept.session_start = min(kept.session_start, record.session_start)
            kept.session_end = max(kept.session_end, record.session_end)
        else:
            by_key[key] = record
    return list(by_key.values()), rejected


def _write_memories(
    store: Store,
    conversation_id: int,
    window_id: int,
    records: Sequence[MemoryRecord],
    vectors: np.ndarray | None,
    result: WindowReport,
) -> None:
    new_ids: list[int] = []
    new_vectors: list[np.ndarray] = []
    for index, record in enumerate(records):
        key = dedup_key(record.content)
        memory_id = store.add_memory(record, key, conversation_id)
        if memory_id is None:
            existing = store.memory_id_for_dedup_key(conversation_id, key)
            if existing is not None:
                store.merge_memory_turns(existing, record.source_turn_ids)
                result.memories_merged += 1
            continue
        store.set_memory_window(memory_id, window_id)
        result.memories_new += 1
        new_ids.append(memory_id)
        if vectors is not None:
            new_vectors.append(vectors[index])
    if vectors is not None and new_ids:
        store.add_vectors(new_ids, np.stack(new_vectors))


def _account(report: ExtractionReport, window: WindowReport) -> None:
    report.windows.append(window)
    if window.status == DONE:
        report.done += 1
    elif window.status == FAILED:
        report.failed += 1
        report.failures.append((window.window_id, window.error or "failed"))
    else:
        report.skipped_done += 1
    report.memories_new += window.memories_new
    report.memories_merged += window.memories_merged
    report.entries_rejected += window.entries_rejected
    report.llm_calls += window.llm_calls
    report.tokens_in += window.tokens_in
    report.tokens_out += window.tokens_out
