"""Query analysis with a real model (SmolLM2-135M, ``$RAMEM_TEST_LLM``): whatever a weak model
proposes, the frame comes back and the time guard obeys the deterministic cue rule."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from ramem_local.recall.analyzer import MAX_RANGE_DAYS, analyze_question
from ramem_local.recall.frame import build_frame
from ramem_local.runtime.llama import LlamaRuntime
from ramem_local.types import TimeRange

UTC = timezone.utc
PARTICIPANTS = ["Caroline", "Melanie"]


def ts(year: int, month: int, day: int) -> int:
    return int(datetime(year, month, day, tzinfo=UTC).timestamp())


REFERENCE = ts(2023, 6, 5)
TIMELINE = TimeRange(ts(2023, 1, 10), ts(2023, 6, 2))


@pytest.fixture
def llm(smollm):
    return smollm


def analyze(llm: LlamaRuntime, question: str):
    frame = build_frame(
        question, reference_time=REFERENCE, tz=UTC, timeline=TIMELINE, participants=PARTICIPANTS
    )
    outcome = analyze_question(
        llm, frame, tz=UTC, participants=PARTICIPANTS, timeline=TIMELINE, max_tokens=256
    )
    assert outcome.call.stage == "analyze" and outcome.call.tokens_in > 0
    assert outcome.frame.llm_proposal is not None
    assert set(outcome.frame.persons) <= set(PARTICIPANTS)
    return frame, outcome.frame


@pytest.mark.real_model
def test_real_model_cannot_add_a_time_filter_without_a_cue(llm):
    _, frame = analyze(llm, "What is Caroline's job?")

    assert frame.cues == [] and frame.guard == "no_filter" and frame.time_range is None
    assert frame.source == "deterministic" and frame.llm_proposal["accepted"] is False
    assert frame.need  # the model's need, or the question when the model's was unusable


@pytest.mark.real_model
def test_real_model_range_for_a_vague_cue_is_used_only_when_plausible(llm):
    deterministic, frame = analyze(llm, "What did Caroline do recently?")

    assert deterministic.guard == "no_filter"
    if frame.llm_proposal["accepted"]:
        assert (frame.guard, frame.source) == ("filter", "llm")
        width_days = (frame.time_range.end - frame.time_range.start) / 86_400
        assert width_days <= MAX_RANGE_DAYS and frame.time_range.start <= REFERENCE
        assert frame.time_range.overlaps(TIMELINE.widened(30))
    else:
        assert (frame.guard, frame.time_range) == ("no_filter", None)
