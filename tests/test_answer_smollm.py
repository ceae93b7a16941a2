"""Answering with a real model (SmolLM2-135M, ``$RAMEM_TEST_LLM``): plumbing, not quality.

A 135M model answers poorly; what must hold is that the grammar-constrained call yields a
schema-valid, cited answer or an explicit abstention, never an exception or a foreign id.
"""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from ramem_local.answer import NOT_IN_MEMORY, answer_schema, generate_answer
from ramem_local.schemas import validate
from ramem_local.types import DAY, Candidate, MemoryRecord, RecallFrame

UTC = timezone.utc


def ts(year: int, month: int, day: int) -> int:
    return int(datetime(year, month, day, tzinfo=UTC).timestamp())


def _memory(memory_id: int, content: str, session: int, **fields) -> MemoryRecord:
    return MemoryRecord(
        content=content,
        kind="extracted",
        conversation="chat",
        session_start=session,
        session_end=session + DAY,
        id=memory_id,
        **fields,
    )


CANDIDATES = [
    Candidate(
        _memory(
            11,
            "Caroline went to an LGBTQ support group.",
            ts(2023, 5, 8),
            event_start=ts(2023, 5, 7),
            event_end=ts(2023, 5, 8),
            persons=["Caroline"],
            entities=["LGBTQ support group"],
        ),
        0.03,
        "content",
    ),
    Candidate(
        _memory(
            12,
            "Melanie painted a sunset over a lake.",
            ts(2023, 5, 8),
            persons=["Melanie"],
            topic="art",
        ),
        0.02,
        "content",
    ),
    Candidate(
        _memory(
            13,
            "Caroline plans to study counseling.",
            ts(2023, 6, 1),
            persons=["Caroline"],
            topic="career",
        ),
        0.01,
        "content",
    ),
]


@pytest.fixture
def llm(smollm):
    return smollm


@pytest.mark.real_model
def test_real_model_gives_a_cited_answer_or_abstains(llm):
    question = "What did Melanie paint?"
    frame = RecallFrame(question=question, need=question, reference_time=ts(2023, 6, 5))

    answer = generate_answer(llm, question, frame, CANDIDATES, UTC, max_tokens=192)

    shown = [11, 12, 13]
    assert answer.trace.shown_memory_ids == shown
    assert [c.memory.id for c in answer.evidence] == shown
    [call] = answer.trace.llm_calls
    assert call.stage == "answer" and call.tokens_in > 0 and call.tokens_out > 0
    if answer.abstained:
        assert (answer.answer, answer.citations) == (NOT_IN_MEMORY, [])
    else:
        assert call.error is None
        assert answer.citations and set(answer.citations) <= set(shown)
        reply = {
            "reasoning": answer.reasoning,
            "answer": answer.answer,
            "citations": answer.citations,
        }
        assert validate(reply, answer_schema(shown)) == []
