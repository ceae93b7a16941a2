"""LLM query analysis: what the model may change in the recall frame, and what it may not."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from ramem_local.protocols import LLMResult
from ramem_local.recall.analyzer import (
    SYSTEM_PROMPT,
    AnalysisOutcome,
    analysis_schema,
    analyze_question,
)
from ramem_local.recall.frame import build_frame
from ramem_local.schemas import unbounded, validate
from ramem_local.testing import ScriptedLLM
from ramem_local.types import DAY, LLMCall, TimeRange

UTC = timezone.utc
PARTICIPANTS = ["Caroline", "Melanie"]


def ts(year: int, month: int, day: int) -> int:
    return int(datetime(year, month, day, tzinfo=UTC).timestamp())


REFERENCE = ts(2023, 5, 25)
TIMELINE = TimeRange(ts(2023, 1, 10), ts(2023, 5, 26))


def frame_for(question: str):
    return build_frame(
        question, reference_time=REFERENCE, tz=UTC, timeline=TIMELINE, participants=PARTICIPANTS
    )


def proposal(**fields) -> dict:
    base = {
        "need": "",
        "time_start": None,
        "time_end": None,
        "event": None,
        "order": None,
        "persons": [],
        "locations": [],
        "entities": [],
        "topic": None,
        "keywords": [],
    }
    return {**base, **fields}


def analyze(question: str, reply, timeline: TimeRange | None = TIMELINE) -> AnalysisOutcome:
    llm = ScriptedLLM([reply])
    return analyze_question(
        llm, frame_for(question), tz=UTC, participants=PARTICIPANTS, timeline=timeline
    )


def test_schema_is_bounded_and_accepts_an_empty_proposal():
    schema = analysis_schema()
    assert unbounded(schema) == []
    assert validate(proposal(), schema) == []
    assert list(schema["properties"])[:3] == ["need", "time_start", "time_end"]


def test_every_requested_field_lands_in_the_frame():
    """What the model is asked for is what the merge reads: no field is generated for nothing."""
    assert set(analysis_schema()["properties"]) == {
        "need", "time_start", "time_end", "event", "order", "persons", "locations", "entities",
        "topic", "keywords"}
    for field in analysis_schema()["properties"]:
        assert f'"{field}"' in SYSTEM_PROMPT


def test_prompt_gives_question_reference_date_and_participants():
    llm = ScriptedLLM([proposal()])
    analyze_question(
        llm,
        frame_for("What is Caroline's job?"),
        tz=UTC,
        participants=PARTICIPANTS,
        timeline=TIMELINE,
        max_tokens=200,
    )

    call = llm.calls[0]
    assert call["messages"][0] == {"role": "system", "content": SYSTEM_PROMPT}
    user = call["messages"][1]["content"]
    assert "2023-05-25 (Thursday)" in user and "Caroline, Melanie" in user
    assert "What is Caroline's job?" in user
    assert call["max_tokens"] == 200 and call["schema"] == analysis_schema()


def test_no_cue_means_no_filter_whatever_the_model_says():
    outcome = analyze(
        "What is Caroline's job?", proposal(time_start="2023-05-01", time_end="2023-05-20")
    )

    frame = outcome.frame
    assert frame.guard == "no_filter" and frame.time_range is None
    assert frame.source == "deterministic"
    assert frame.llm_proposal["accepted"] is False
    assert "no temporal cue" in frame.llm_proposal["reason"]


def test_grounded_cue_keeps_the_deterministic_range_and_records_the_disagreement():
    question = "What did Melanie paint in May 2023?"
    deterministic = frame_for(question)

    outcome = analyze(question, proposal(time_start="2023-05-10", time_end="2023-05-12"))

    frame = outcome.frame
    assert frame.time_range == deterministic.time_range
    assert frame.widened_range == deterministic.widened_range
    assert (frame.guard, frame.source) == ("filter", "deterministic")
    assert frame.guard_reason == deterministic.guard_reason
    assert frame.llm_proposal["accepted"] is False
    assert "deterministic range kept" in frame.llm_proposal["reason"]
    assert frame.llm_proposal["disagreement"] == {
        "deterministic": ["2023-05-01", "2023-05-31"],
        "llm": ["2023-05-10", "2023-05-12"],
    }


def test_agreeing_range_records_no_disagreement():
    outcome = analyze(
        "What did Melanie paint in May 2023?",
        proposal(time_start="2023-05-01", time_end="2023-05-31"),
    )
    assert outcome.frame.llm_proposal["disagreement"] is None


def test_vague_cue_takes_a_plausible_model_range():
    outcome = analyze(
        "What did Caroline do recently?", proposal(time_start="2023-05-01", time_end="2023-05-20")
    )

    frame = outcome.frame
    assert frame.time_range == TimeRange(ts(2023, 5, 1), ts(2023, 5, 21))
    assert frame.widened_range == TimeRange(ts(2023, 5, 1) - 5 * DAY, ts(2023, 5, 21) + 5 * DAY)
    assert (frame.guard, frame.source) == ("filter", "llm")
    assert "'recently'" in frame.guard_reason and "LLM range" in frame.guard_reason
    assert frame.llm_proposal["accepted"] is True
    assert frame.llm_proposal["proposal"]["time_start"] == "2023-05-01"


def test_vague_cue_accepts_any_range_without_a_timeline():
    outcome = analyze(
        "What did Caroline do recently?",
        proposal(time_start="2019-05-01", time_end="2019-05-20"),
        timeline=None,
    )
    assert outcome.frame.source == "llm"


@pytest.mark.parametrize(
    ("start", "end", "reason"),
    [
        ("2021-01-01", "2021-01-31", "outside the bank's timeline"),
        ("2023-05-20", "2023-05-01", "reversed range"),
        ("last week", "2023-05-20", "unparseable dates"),
        ("2023-02-30", "2023-03-02", "unparseable dates"),
        ("2023-05-01", None, "unparseable dates"),
        ("2022-01-01", "2023-05-20", "implausible width: 505 days"),
        ("2023-05-26", "2023-05-28", "starts after the reference date"),
    ],
)
def test_vague_cue_rejects_a_bad_model_range(start, end, reason):
    outcome = analyze("What did Caroline do recently?", proposal(time_start=start, time_end=end))

    frame = outcome.frame
    assert (frame.guard, frame.source, frame.time_range) == ("no_filter", "deterministic", None)
    assert frame.llm_proposal["accepted"] is False
    assert frame.llm_proposal["reason"].startswith("rejected: ")
    assert reason in frame.llm_proposal["reason"]


def test_range_just_outside_the_timeline_is_near_enough():
    outcome = analyze(
        "What did Caroline do recently?", proposal(time_start="2022-12-20", time_end="2022-12-24")
    )
    assert outcome.frame.source == "llm"


def test_no_range_proposed_for_a_vague_cue_leaves_the_guard_alone():
    outcome = analyze("What did Caroline do recently?", proposal())
    frame = outcome.frame
    assert frame.guard == "no_filter" and frame.llm_proposal["reason"] == "no range proposed"


def test_persons_are_kept_only_when_they_are_participants():
    outcome = analyze(
        "What did she tell her friend?",
        proposal(persons=["melanie", "Caroline's", "Bob", "Carol", " "]),
    )
    frame = outcome.frame
    assert frame.persons == ["Melanie", "Caroline"]
    assert frame.llm_proposal["persons_dropped"] == ["Bob", "Carol"]


def test_a_first_name_stands_for_the_one_participant_who_has_it():
    llm = ScriptedLLM([proposal(persons=["Jon", "Ann", "Lee"])])
    outcome = analyze_question(llm, frame_for("What did Jon buy?"), tz=UTC,
                               participants=["Jon Smith", "Ann Lee", "Ann Berg"],
                               timeline=TIMELINE)
    assert outcome.frame.persons == ["Jon Smith"]
    assert outcome.frame.llm_proposal["persons_dropped"] == ["Ann", "Lee"]


def test_model_persons_merge_after_the_deterministic_ones():
    outcome = analyze("What did Caroline give Melanie?", proposal(persons=["Melanie"]))
    assert outcome.frame.persons == ["Caroline", "Melanie"]


def test_descriptive_fields_are_copied():
    outcome = analyze(
        "What did Caroline paint?",
        proposal(
            need="  Caroline's painting ",
            locations=["Boston"],
            entities=["sunset", "Sunset"],
            topic="art",
            keywords=["paint", "painting", ""],
        ),
    )
    frame = outcome.frame
    assert frame.need == "Caroline's painting" and frame.llm_proposal["need_accepted"] is True
    assert frame.locations == ["Boston"] and frame.entities == ["sunset"]
    assert frame.topic == "art" and frame.keywords == ["paint", "painting"]
    assert frame.question == "What did Caroline paint?"


@pytest.mark.parametrize("need", ["   ", "the information asked for"])
def test_empty_or_off_topic_need_falls_back_to_the_question(need):
    outcome = analyze("What did Caroline paint?", proposal(need=need))
    assert outcome.frame.need == "What did Caroline paint?"
    assert outcome.frame.llm_proposal["need_accepted"] is False


def test_participants_are_not_locations_or_entities():
    outcome = analyze(
        "Where did Caroline go?",
        proposal(locations=["Caroline", "melanie", "Paris"], entities=["Melanie", "museum"]),
    )
    assert outcome.frame.locations == ["Paris"] and outcome.frame.entities == ["museum"]


def test_an_order_the_detector_found_is_kept_when_the_model_agrees():
    outcome = analyze("When did Caroline last go hiking?", proposal(order="latest"))
    assert outcome.frame.order == "latest"
    assert outcome.frame.llm_proposal["order_disagreement"] is None


def test_the_detector_order_wins_and_a_different_proposal_is_recorded():
    outcome = analyze("What did Melanie paint for the first time?", proposal(order="latest"))
    assert outcome.frame.order == "earliest"
    assert outcome.frame.llm_proposal["order_disagreement"] == {
        "deterministic": "earliest", "llm": "latest"}


def test_the_model_cannot_switch_an_order_on():
    question = "What did Caroline say about the last chapter?"
    assert frame_for(question).order is None

    outcome = analyze(question, proposal(order="latest"))

    assert outcome.frame.order is None
    assert outcome.frame.llm_proposal["order_disagreement"] == {
        "deterministic": None, "llm": "latest"}


def test_no_order_proposed_is_no_disagreement():
    outcome = analyze("When did Caroline last go hiking?", proposal())
    assert outcome.frame.order == "latest"
    assert outcome.frame.llm_proposal["order_disagreement"] is None


def test_an_event_sharing_a_word_with_the_anchor_becomes_its_phrase():
    question = "What did Caroline do the day after she adopted the cat?"
    assert frame_for(question).anchor.phrase == "she adopted the cat"

    outcome = analyze(question, proposal(event=" adopted  the cat "))

    anchor = outcome.frame.anchor
    assert (anchor.phrase, anchor.relation) == ("adopted the cat", "day_after")
    assert anchor.text == "the day after she adopted the cat"
    assert outcome.frame.llm_proposal["event_accepted"] is True
    assert "'she adopted the cat'" in outcome.frame.llm_proposal["event_reason"]


def test_an_event_naming_another_event_is_refused():
    question = "What did Caroline do the day after she adopted the cat?"
    outcome = analyze(question, proposal(event="moved to Boston"))

    assert outcome.frame.anchor.phrase == "she adopted the cat"
    assert outcome.frame.llm_proposal["event_accepted"] is False
    assert outcome.frame.llm_proposal["event_reason"].startswith("refused: ")


RANGE_BETWEEN_EVENTS = "What did Caroline do between adopting the cat and the move to Boston?"


def test_an_event_naming_both_ends_of_a_range_is_refused():
    """One phrase for both events would find either; each end keeps the question's words."""
    deterministic = frame_for(RANGE_BETWEEN_EVENTS)
    assert (deterministic.anchor.phrase, deterministic.other_end.phrase) == (
        "adopting the cat", "the move to Boston")

    outcome = analyze(RANGE_BETWEEN_EVENTS,
                      proposal(event="adopting the cat and the move to Boston"))

    assert outcome.frame.anchor.phrase == "adopting the cat"
    assert outcome.frame.llm_proposal["event_accepted"] is False
    assert outcome.frame.llm_proposal["event_reason"] == (
        "refused: names the range's other end 'the move to Boston'")


def test_an_event_tidying_one_end_of_a_range_is_accepted():
    outcome = analyze(RANGE_BETWEEN_EVENTS, proposal(event="adopted the cat"))
    assert outcome.frame.anchor.phrase == "adopted the cat"
    assert outcome.frame.other_end.phrase == "the move to Boston"


def test_an_event_may_share_a_word_with_both_ends_when_it_names_one():
    """"the hike up Hawk Hill" and "the hike up Eagle Ridge" share "hike": only a word of
    the other end alone refuses."""
    question = "What did Caroline cook between the hike up Hawk Hill and the hike up Eagle Ridge?"
    assert frame_for(question).other_end.phrase == "the hike up Eagle Ridge"

    outcome = analyze(question, proposal(event="hike up Hawk Hill"))

    assert outcome.frame.anchor.phrase == "hike up Hawk Hill"
    assert outcome.frame.llm_proposal["event_accepted"] is True


@pytest.mark.parametrize(
    "need",
    [
        "What did Caroline do after the move to Boston",  # the other end
        "What did Caroline do after adopting the cat",  # the anchor
    ],
)
def test_a_need_naming_an_end_of_a_range_between_events_is_refused(need):
    outcome = analyze(RANGE_BETWEEN_EVENTS, proposal(need=need))
    assert outcome.frame.need == frame_for(RANGE_BETWEEN_EVENTS).need == "What did Caroline do?"
    assert outcome.frame.llm_proposal["need_accepted"] is False


def test_a_need_naming_the_event_a_count_runs_since_is_refused():
    """"How many times did Caroline go hiking since she moved to Boston?" counts hikes, not
    the move's memories: the model may not put the move back."""
    question = "How many times did Caroline go hiking since she moved to Boston?"
    assert "moved" not in frame_for(question).need

    refused = analyze(question, proposal(need="Caroline hiking since she moved to Boston"))
    accepted = analyze(question, proposal(need="Caroline hiking trips"))

    assert refused.frame.llm_proposal["need_accepted"] is False
    assert accepted.frame.llm_proposal["need_accepted"] is True
    assert accepted.frame.need == "Caroline hiking trips"


def test_an_event_without_a_deterministic_anchor_is_recorded_not_used():
    outcome = analyze("What is Caroline's job?", proposal(event="started the new job"))

    frame = outcome.frame
    assert frame.anchor is None and frame.guard == "no_filter"
    assert frame.llm_proposal["event_accepted"] is False
    assert frame.llm_proposal["event_reason"].startswith("not used: ")
    assert frame.llm_proposal["proposal"]["event"] == "started the new job"


def test_no_event_proposed_leaves_the_anchor_alone():
    question = "What did Caroline buy the week before the move?"
    outcome = analyze(question, proposal())
    assert outcome.frame.anchor == frame_for(question).anchor
    assert outcome.frame.llm_proposal["event_accepted"] is False
    assert outcome.frame.llm_proposal["event_reason"] is None


@pytest.mark.parametrize(
    "question",
    [
        "What did Caroline buy the week before the move?",
        # "recently" alone would take the model's range: the anchor must still decide.
        "What did Melanie paint recently, since she moved to Boston?",
    ],
)
def test_an_anchor_question_keeps_the_anchor_whatever_range_is_proposed(question):
    deterministic = frame_for(question)
    assert deterministic.guard == "anchor"

    outcome = analyze(question, proposal(time_start="2023-05-01", time_end="2023-05-20"))

    frame = outcome.frame
    assert (frame.guard, frame.source) == ("anchor", "deterministic")
    assert frame.time_range is None and frame.widened_range is None
    assert frame.guard_reason == deterministic.guard_reason
    assert frame.llm_proposal["accepted"] is False
    assert "the event anchor decides" in frame.llm_proposal["reason"]


def test_the_record_keeps_its_keys_when_the_model_fails():
    outcome = analyze("When did Caroline last go hiking?", LLMResult(
        None, "invalid_json", "stop", "{", 10, 1, 1.0))
    record = outcome.frame.llm_proposal
    assert {"proposal", "accepted", "reason", "disagreement", "need_accepted", "persons_dropped",
            "error", "order_disagreement", "event_accepted", "event_reason"} == set(record)
    assert record["order_disagreement"] is None and record["event_accepted"] is False


def test_model_failure_leaves_the_frame_unchanged_and_records_the_error():
    question = "What did Melanie paint in May 2023?"
    failure = LLMResult(None, "truncated", "length", '{"need": "pain', 300, 384, 12.5)

    outcome = analyze(question, failure)

    frame = outcome.frame
    frame_without_proposal = {**vars(frame), "llm_proposal": None}
    assert frame_without_proposal == vars(frame_for(question))
    assert frame.llm_proposal["error"] == "truncated"
    assert frame.llm_proposal["accepted"] is False
    assert "model failed" in frame.llm_proposal["reason"]
    assert outcome.call == LLMCall(
        stage="analyze",
        tokens_in=300,
        tokens_out=384,
        ms=12.5,
        error="truncated",
    )


def test_the_input_frame_is_never_mutated():
    original = frame_for("What did Caroline do recently?")
    llm = ScriptedLLM([proposal(time_start="2023-05-01", time_end="2023-05-20", keywords=["x"])])

    outcome = analyze_question(llm, original, tz=UTC, participants=PARTICIPANTS, timeline=TIMELINE)

    assert outcome.frame is not original
    assert original.time_range is None and original.keywords == []
    assert original.llm_proposal is None


def test_call_stats_are_returned():
    outcome = analyze("What is Caroline's job?", proposal(need="job"))
    assert outcome.call.stage == "analyze" and outcome.call.error is None
    assert outcome.call.tokens_in > 0 and outcome.call.tokens_out > 0


def test_a_proposed_need_loses_the_order_words_and_may_not_name_the_anchor_event():
    ordered = analyze("When did Caroline last go hiking?",
                      proposal(need="when Caroline last went hiking"))
    assert ordered.frame.need == "when Caroline went hiking"
    anchored = analyze("What did Caroline do the day after she adopted the cat?",
                       proposal(need="what Caroline did the day after she adopted the cat"))
    assert anchored.frame.need == "What did Caroline do?"
    assert anchored.frame.llm_proposal["need_accepted"] is False


@pytest.mark.parametrize(("question", "can_decide"), [
    ("What did Ben do last weekend?", False),  # a grounded time: the deterministic range wins
    ("When did Ben last go hiking?", False),  # an order: the detector's
    ("How many times did Ben go hiking in March 2024?", False),  # a count
    ("What did Ben do the day after he adopted the cat?", False),  # an event: the anchor's
    ("What is the name of Ann's cat?", True),  # nothing read but the need
    ("What did Ben paint recently?", True),  # "recently" is not grounded: the model may range it
])
def test_the_analyzer_is_asked_only_where_it_can_decide_something(tmp_path, question,
                                                                   can_decide):
    from ramem_local import Memory
    from ramem_local.recall.analyzer import analysis_can_decide

    with Memory.open(tmp_path / "b.db") as memory:
        memory.add("Adopted a grey cat", at="2024-03-01", speaker="Ben")
        assert analysis_can_decide(memory.frame(question)) is can_decide
