"""Extraction on a real Qwen (``$RAMEM_TEST_QWEN``: Qwen2.5-Coder-0.5B-Instruct Q4_K_M): the
gates that refuse copies of turns and first-person entries about a named speaker
(``anchor.copied_turn``, ``anchor.first_person``) let through what a model writes when it does
restate.

On the fixed LoCoMo subset the 0.5B copies turns and swaps names, and the gates refuse all but one
of its entries (results/llm-subset-qwen.txt). On the short two-episode chat of
``test_qwen_answers`` (greedy, 2026-12-02) it writes two restatements in the third person with
their dates, in one call (38 s on one thread here); this pins that such a reply is stored whole, not
refused by a gate drawn too wide, and that nothing it keeps says "I" for a named speaker.
"""

from __future__ import annotations

import json
from datetime import timezone
from pathlib import Path

import pytest
from test_qwen_answers import TURNS

from ramem_local import Memory
from ramem_local.ingest.anchor import first_person
from ramem_local.ingest.llm_pipeline import run_extraction


@pytest.mark.real_model
def test_qwen_restatements_pass_the_gates_whole(tmp_path: Path, minilm_dir: Path, qwen):
    chat = tmp_path / "chat.jsonl"
    chat.write_text("\n".join(json.dumps(t) for t in TURNS) + "\n", encoding="utf-8")
    with Memory.open(tmp_path / "bank.db", embedder=minilm_dir) as memory:
        memory.ingest(chat)
        report = run_extraction(memory.store, qwen, memory.embedder, tz=timezone.utc)
        extracted = [m for m in memory.list(limit=100) if m.kind == "extracted"]

    [window] = report.windows
    assert (window.status, window.error) == ("done", None)
    assert (window.entries_rejected, window.repaired) == (0, False), window
    assert len(extracted) == window.memories_new >= 1
    said = {t["id"]: t for t in TURNS}
    for memory in extracted:
        assert first_person(memory.content) is None, memory.content
        assert memory.source_turns and set(memory.source_turns) <= set(said), memory.source_turns
        speakers = {said[turn]["speaker"] for turn in memory.source_turns}
        assert any(name in memory.content for name in speakers), (memory.content, speakers)
