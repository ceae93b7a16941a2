"""Retrieval: the content list, the context list, and their merge (DESIGN.md §4 steps 2–4).

- content list: RRF (κ = 60) of dense KNN and BM25 over the whole bank, in one SQL statement;
- context list: only when the recall frame has a grounded time range — memories whose session
  span or event range overlaps the widened range, ordered by proximity tier (said inside the
  raw range or an event inside it; then a session span reaching into it; then by whole days of
  gap), fused rank within a tier;
- merge: ``Dedup_first(context ⊕ content)``, then the first K.

Two readings of the context list exist. ``promote`` keeps the compatible part of the content
fusion (ranks computed over the whole bank); ``refuse`` re-runs the fusion inside the compatible
set (ranks computed among compatible memories only). Both are one SQL statement each; the
default was chosen by measurement (see README, "Retrieval evaluation").
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from .protocols import Embedder
from .store import RankedRow, Store
from .text import fts_match_query
from .types import Candidate, RecallFrame, SearchResponse, Trace

MODES = ("ramem", "baseline")
DEFAULT_DEPTH = 25
CONTEXT_STRATEGIES = ("promote", "refuse")


@dataclass(frozen=True)
class RetrievalSettings:
    k: int = 10
    depth: int = DEFAULT_DEPTH  # per source list before fusion (chosen by measurement: README)
    kappa: float = 60.0
    mode: str = "ramem"
    context_strategy: str = "promote"
    exclude_turns: bool = False

    def __post_init__(self) -> None:
        if self.mode not in MODES:
            raise ValueError(f"unknown mode {self.mode!r}; choose one of {', '.join(MODES)}")
        if self.context_strategy not in CONTEXT_STRATEGIES:
            raise ValueError(
                f"unknown context strategy {self.context_strategy!r}; "
                f"choose one of {', '.join(CONTEXT_STRATEGIES)}"
            )
        if self.k < 1 or self.depth < self.k:
            raise ValueError("k must be at least 1 and depth at least k")


def dedup_first(*lists: Iterable[Candidate]) -> list[Candidate]:
    """Concatenate, keeping only the first occurrence of each memory."""
    seen: set[int] = set()
    merged: list[Candidate] = []
    for candidates in lists:
        for candidate in candidates:
            memory_id = candidate.memory.id
            if memory_id in seen:
                continue
            seen.add(memory_id)
            merged.append(candidate)
    return merged


def retrieve(
    store: Store,
    embedder: Embedder | None,
    frame: RecallFrame,
    settings: RetrievalSettings,
    *,
    conversation_id: int | None = None,
    query_vector: np.ndarray | None = None,
) -> SearchResponse:
    """Run the question path's retrieval; ``query_vector`` skips re-encoding a known query."""
    trace = Trace(frame=frame, mode=settings.mode)
    started = time.perf_counter()
    if query_vector is None and embedder is not None:
        query_vector = embedder.embed_query(frame.need)
    if embedder is None:
        trace.notes.append("no embedder: BM25 only")
    fts_query = fts_match_query(frame.need, frame.keywords)
    trace.timings_ms["embed_query"] = _ms_since(started)

    started = time.perf_counter()
    common = dict(
        query_vector=query_vector,
        fts_query=fts_query,
        depth=settings.depth,
        limit=settings.k,
        kappa=settings.kappa,
        conversation_id=conversation_id,
        exclude_turns=settings.exclude_turns,
        raw_range=frame.time_range,
        wide_range=frame.widened_range,
    )
    content_rows = store.fused_candidates(**common)
    context_rows: list[RankedRow] = []
    if settings.mode == "ramem" and frame.guard == "filter":
        context_rows = store.fused_candidates(
            **common,
            within_compatible=settings.context_strategy == "refuse",
            compatible_only=True,
        )
        if not context_rows:
            trace.notes.append("no compatible memory for the grounded range: content list only")
    trace.timings_ms["sql"] = _ms_since(started)

    memories = store.get_memories([r.id for r in (*context_rows, *content_rows)])
    context = _candidates(context_rows, memories, "context")
    content = _candidates(content_rows, memories, "content")
    results = dedup_first(context, content)[: settings.k]
    return SearchResponse(results=results, trace=trace)


def _candidates(rows: Sequence[RankedRow], memories: dict, list_name: str) -> list[Candidate]:
    return [
        Candidate(
            memory=memories[row.id],
            score=row.rrf,
            list_name=list_name,
            dense_rank=row.dense_rank,
            bm25_rank=row.bm25_rank,
            fused_rank=row.fused_rank,
            tier=row.tier if row.compatible else None,
            gap_days=row.gap_days if row.compatible else None,
        )
        for row in rows
        if row.id in memories
    ]


def _ms_since(started: float) -> float:
    return round((time.perf_counter() - started) * 1000, 2)


