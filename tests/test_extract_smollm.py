"""LLM extraction with a real model: SmolLM2-135M (path in ``$RAMEM_TEST_LLM``).

SmolLM2-135M is far too weak to extract well (measured: it fills the lists, copies timestamps
into ``content``, and writes "1.2" as a fact); these tests check the plumbing around a real,
grammar-constrained model: every window ends ``done`` or ``failed`` with its error, nothing
raises, citations stay inside the window, a tiny token budget fails windows as "truncated"
without losing their turns, and ``retry_failed`` gives them another go.
"""

from __future__ import annotations

import os
from datetime import datetime, timezone

import pytest

from ramem_local.api import Memory
from ramem_local.ingest.extract import PROMPT_VERSION
from ramem_local.ingest.llm_pipeline import run_extraction
from ramem_local.ingest.pipeline import ingest_conversations
from ramem_local.ingest.windows import window_turns, windows_of
from ramem_local.text import fts_match_query
from ramem_local.types import ParsedConversation, Session, Turn
from tests.real_models import smollm_path

UTC = timezone.utc
N_CTX = 3072


def ts(text: str) -> int:
    return int(datetime.fromisoformat(text).replace(tzinfo=UTC).timestamp())


SESSIONS = {1: ts("2023-05-08 13:00"), 2: ts("2023-05-20 18:00"), 3: ts("2023-06-02 09:00")}
LINES = [
    (1, "Anna", "I adopted a cat named Pixel yesterday."),
    (1, "Ben", "Congratulations! What colour is Pixel?"),
    (1, "Anna", "Pixel is grey with white paws."),
    (1, "Ben", "I started learning the violin this month."),
    (2, "Ben", "My violin teacher is called Mrs Ortiz."),
    (2, "Anna", "I visited my sister in Lisbon last weekend."),
    (2, "Ben", "Lisbon is beautiful. Did you take the tram?"),
    (2, "Anna", "Yes, tram 28 up to the castle."),
    (3, "Anna", "Pixel knocked over my coffee this morning."),
    (3, "Ben", "I played my first violin concert on Saturday."),
    (3, "Anna", "How many people came to the concert?"),
    (3, "Ben", "About forty people, mostly parents."),
]


def three_sessions() -> ParsedConversation:
    counters: dict[int, int] = {}
    turns = []
    for session, speaker, text in LINES:
        counters[session] = counters.get(session, 0) + 1
        turns.append(Turn(speaker, text, SESSIONS[session] + 60 * counters[session], session,
                          external_id=f"D{session}:{counters[session]}"))
    return ParsedConversation(
        name="friends",
        sessions=[Session(ordinal, start) for ordinal, start in SESSIONS.items()],
        turns=turns,
        participants=["Anna", "Ben"],
    )


@pytest.fixture(scope="module")
def extraction_llm():
    path = smollm_path()
    from ramem_local.runtime.llama import LlamaRuntime

    cores = os.cpu_count() or 1
    # llama.cpp threads spin while they wait for each other: on a small, busy machine one
    # thread is several times faster than two (measured on 2 shared cores).
    threads = 1 if cores <= 2 else min(4, cores - 1)
    # The extraction instructions are evaluated once (the runtime's fixed prefix, default).
    return LlamaRuntime(path, n_ctx=N_CTX, n_threads=threads)


def status_counts(memory: Memory) -> dict[str, int]:
    counts: dict[str, int] = {}
    for window in windows_of(memory.store, prompt_version=PROMPT_VERSION):
        counts[window.status] = counts.get(window.status, 0) + 1
    return counts


def turn_hits(memory: Memory, text: str) -> list[list[str]]:
    rows = memory.store.content_candidates(query_vector=None, fts_query=fts_match_query(text),
                                         depth=20, limit=5)
    found = memory.store.get_memories([r.id for r in rows])
    return [found[r.id].source_turns for r in rows if found[r.id].kind == "turn"]


@pytest.mark.real_model
def test_smollm_extraction_fails_loudly_keeps_turns_and_retries(tmp_path, hashing_embedder,
                                                                  extraction_llm):
    memory = Memory.open(tmp_path / "b.db", embedder=hashing_embedder)
    ingest_conversations(memory.store, [three_sessions()], embedder=memory.embedder, tz=UTC)
    turn_memories = memory.store.memory_count()

    # 1. Eight tokens cannot hold any reply: every window fails as truncated, even after the
    #    split retry, and nothing is lost.
    starved = run_extraction(memory.store, extraction_llm, memory.embedder, tz=UTC, window_size=6,
                             max_tokens=8)
    assert (starved.windows_total, starved.done, starved.failed) == (3, 0, 3)
    assert starved.llm_calls == 6  # one call, then the first half, per window
    for window in windows_of(memory.store):
        assert window.status == "failed" and window.attempts == 1
        assert window.error.startswith("truncated"), window.error
    assert memory.store.memory_count() == turn_memories
    assert ["D2:1"] in turn_hits(memory, "violin teacher Ortiz")
    assert ["D2:2"] in turn_hits(memory, "sister Lisbon")

    # 2. A real budget: every window ends done or failed with its error (never an exception),
    #    stored memories cite only turns of their window, and the failed count goes down.
    retried = run_extraction(memory.store, extraction_llm, memory.embedder, tz=UTC, window_size=6,
                             max_tokens=1024, retry_failed=True)
    assert retried.done + retried.failed == 3
    counts = status_counts(memory)
    assert counts.get("failed", 0) < 3, [w.error for w in retried.windows]
    for window in windows_of(memory.store):
        assert window.status in ("done", "failed")
        assert window.attempts == 2
        assert (window.status == "failed") == bool(window.error)
        assert window.model == extraction_llm.name and window.prompt_version == PROMPT_VERSION

    turns = memory.store.conversation_turns(memory.store.conversation_id("friends"))
    windows = {w.id: {t.id for t in window_turns(w, turns)} for w in windows_of(memory.store)}
    rows = memory.store.db.execute(
        "SELECT m.id, m.window_id, mt.turn_id FROM memories m "
        "JOIN memory_turns mt ON mt.memory_id = m.id WHERE m.kind = 'extracted'").fetchall()
    assert len({r[0] for r in rows}) == retried.memories_new
    done_turns = set().union(*(windows[w.id] for w in windows_of(memory.store)
                               if w.status == "done"), set())
    for _memory_id, window_id, turn_id in rows:
        if retried.memories_merged == 0:
            assert turn_id in windows[window_id]
        else:  # merged provenance may come from a later window
            assert turn_id in done_turns
    assert memory.store.vector_count() == memory.store.memory_count()
    assert memory.store.memory_count() == turn_memories + retried.memories_new
    assert ["D2:1"] in turn_hits(memory, "violin teacher Ortiz")
    memory.close()
