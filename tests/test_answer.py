"""Answer generation: evidence with its episode, cited answers, and every way to abstain."""

from __future__ import annotations

import json
from datetime import datetime, timezone

import pytest

from ramem_local.answer import (
    NOT_IN_MEMORY,
    SYSTEM_PROMPT,
    AnswerText,
    answer_schema,
    format_evidence,
    generate_answer,
    is_abstention,
    memory_block,
)
from ramem_local.protocols import LLMResult
from ramem_local.render import trace_dict
from ramem_local.schemas import unbounded, validate
from ramem_local.testing import ScriptedLLM
from ramem_local.types import DAY, Candidate, LLMCall, LLMTotal, MemoryRecord, RecallFrame, Trace

UTC = timezone.utc


def ts(year: int, month: int, day: int) -> int:
    return int(datetime(year, month, day, tzinfo=UTC).timestamp())


def memory(memory_id: int, content: str, **fields) -> MemoryRecord:
    fields.setdefault("session_start", ts(2023, 5, 8))
    fields.setdefault("session_end", ts(2023, 5, 8) + DAY)
    return MemoryRecord(
        content=content, kind="extracted", conversation="chat", id=memory_id, **fields
    )


def candidate(mem: MemoryRecord, rank: int = 1) -> Candidate:
    return Candidate(memory=mem, score=1 / (60 + rank), list_name="content", fused_rank=rank)


RICH = memory(
    7,
    "Caroline went to an LGBTQ support group.",
    session_start=ts(2023, 5, 8),
    session_end=ts(2023, 5, 25),
    event_start=ts(2023, 5, 7),
    event_end=ts(2023, 5, 8),
    location="Boston",
    persons=["Caroline"],
    entities=["LGBTQ support group"],
    topic="community",
)
PLAIN = memory(9, "Melanie: I painted a sunset.")
OTHER = memory(12, "Melanie has two kids.")
CANDIDATES = [candidate(RICH, 1), candidate(PLAIN, 2), candidate(OTHER, 3)]
FRAME = RecallFrame(question="q", need="q", reference_time=ts(2023, 5, 25))


def ask(llm: ScriptedLLM, candidates=CANDIDATES, **kwargs):
    return generate_answer(llm, "Where did Caroline go?", FRAME, list(candidates), UTC, **kwargs)


# --------------------------------------------------------------------------- evidence


def test_memory_block_shows_content_and_every_episode_field():
    assert memory_block(RICH, UTC).splitlines() == [
        "[M7] Caroline went to an LGBTQ support group.",
        "  session: 8 May 2023",
        "  event: 7 May 2023",
        "  location: Boston",
        "  persons: Caroline",
        "  entities: LGBTQ support group",
        "  topic: community",
    ]


def test_memory_block_omits_empty_fields():
    assert memory_block(PLAIN, UTC).splitlines() == [
        "[M9] Melanie: I painted a sunset.",
        "  session: 8 May 2023",
    ]


def test_the_session_is_shown_as_the_day_it_took_place_not_its_span():
    """The span runs on to the next session (for the search's filter); the answerer counts
    "yesterday" from the day it was said, and a second date there reads as another one."""
    said = memory(4, "Caroline: I went to a support group yesterday.",
                  session_start=ts(2023, 5, 8) + 13 * 3600, session_end=ts(2023, 5, 25))
    lines = memory_block(said, UTC).splitlines()
    assert "  session: 8 May 2023" in lines
    assert not any("25 May" in line or "24 May" in line for line in lines)


@pytest.mark.parametrize(("content", "persons", "shown"), [
    ("Tim: I met John at the game.", ["Tim"], None),
    ("Tim: Hey John! Good to hear from you.", ["Tim", "John"], "  persons: Tim, John"),
    ("Tim: I met John at the game.", ["John"], "  persons: John"),
    ("Timothy: I won the final.", ["Tim"], "  persons: Tim"),
    ("Tim went to the game with his team.", ["Tim"], "  persons: Tim"),
])
def test_persons_that_only_repeat_the_speaker_are_left_out(content, persons, shown):
    lines = memory_block(memory(5, content, persons=persons), UTC).splitlines()
    assert [line for line in lines if line.startswith("  persons:")] == ([shown] if shown else [])


def test_point_event_is_shown_as_its_day_as_people_write_it():
    point = memory(3, "x", event_start=ts(2023, 5, 7) + 3600, event_end=ts(2023, 5, 7) + 3600)
    assert "  event: 7 May 2023" in memory_block(point, UTC).splitlines()


def test_evidence_keeps_rank_order_and_reports_the_ids_shown():
    text, shown = format_evidence(CANDIDATES, UTC)

    assert shown == [7, 9, 12]
    assert text.index("[M7]") < text.index("[M9]") < text.index("[M12]")


def test_evidence_respects_the_budget_and_stops_at_the_first_block_that_does_not_fit():
    small = memory(20, "short")
    big = memory(21, "long " * 100)
    blocks = [candidate(PLAIN, 1), candidate(big, 2), candidate(small, 3)]
    budget = len(memory_block(PLAIN, UTC)) + 50

    text, shown = format_evidence(blocks, UTC, char_budget=budget)

    assert shown == [9]  # the small third block would fit, but rank order stays honest
    assert len(text) <= budget


def test_evidence_always_shows_the_first_block_cut_to_the_budget():
    text, shown = format_evidence(CANDIDATES, UTC, char_budget=20)

    assert shown == [7]
    assert len(text) == 20 and text.startswith("[M7]") and text.endswith("…")


def test_evidence_skips_memories_without_an_id_and_duplicates():
    unsaved = memory(1, "not stored")
    unsaved.id = None
    text, shown = format_evidence([candidate(unsaved), *CANDIDATES, CANDIDATES[0]], UTC)
    assert shown == [7, 9, 12] and "not stored" not in text


# --------------------------------------------------------------------------- schema


def test_schema_is_bounded_and_citations_are_the_shown_ids():
    schema = answer_schema([7, 9, 12])

    assert unbounded(schema) == []
    assert list(schema["properties"]) == ["reasoning", "answer", "citations"]
    assert schema["properties"]["citations"]["items"]["enum"] == [7, 9, 12]
    assert schema["properties"]["citations"]["maxItems"] == 5
    assert validate({"reasoning": "r", "answer": "a", "citations": [13]}, schema) != []


def test_schema_needs_shown_ids():
    with pytest.raises(ValueError):
        answer_schema([])


# --------------------------------------------------------------------------- answering


def test_cited_answer_is_returned_with_its_evidence_and_call_record():
    llm = ScriptedLLM(
        [{"reasoning": "M7 says so.", "answer": "an LGBTQ support group", "citations": [7]}]
    )

    answer = ask(llm)

    assert (answer.answer, answer.abstained, answer.citations) == (
        "an LGBTQ support group",
        False,
        [7],
    )
    assert answer.reasoning == "M7 says so."
    assert [c.memory.id for c in answer.evidence] == [7, 9, 12]
    assert answer.trace.shown_memory_ids == [7, 9, 12]
    [call] = answer.trace.llm_calls
    assert call.stage == "answer" and call.error is None
    assert call.tokens_in > 0 and call.tokens_out > 0 and call.ms > 0
    assert llm.calls[0]["schema"]["properties"]["citations"]["items"]["enum"] == [7, 9, 12]
    assert llm.calls[0]["max_tokens"] == 512


def test_prompt_shows_rules_memories_and_the_reference_date():
    llm = ScriptedLLM([{"reasoning": "", "answer": "x", "citations": [7]}])

    ask(llm)

    system, user = llm.calls[0]["messages"]
    assert system == {"role": "system", "content": SYSTEM_PROMPT}
    assert NOT_IN_MEMORY in system["content"]
    assert "[M7] Caroline went" in user["content"] and "event: 7 May 2023" in user["content"]
    assert "asked on Thursday 25 May 2023" in user["content"]
    assert user["content"].rstrip().endswith("Where did Caroline go?")


def test_reference_text_overrides_the_shown_question_date():
    llm = ScriptedLLM([{"reasoning": "", "answer": "x", "citations": [7]}])
    ask(llm, reference_text="25 May 2023, 13:56")
    assert "asked on 25 May 2023, 13:56" in llm.calls[0]["messages"][1]["content"]


def test_no_candidates_abstains_without_calling_the_model():
    llm = ScriptedLLM([])

    answer = ask(llm, candidates=[])

    assert answer.abstained and answer.answer == NOT_IN_MEMORY
    assert "no memories" in answer.reasoning
    assert llm.calls == [] and answer.trace.llm_calls == []


@pytest.mark.parametrize("said", ["not in memory", "  Not in memory. ", '"NOT IN MEMORY"'])
def test_model_saying_not_in_memory_is_an_abstention(said):
    llm = ScriptedLLM([{"reasoning": "Nothing about it.", "answer": said, "citations": [9]}])

    answer = ask(llm)

    assert answer.abstained and answer.answer == NOT_IN_MEMORY and answer.citations == []
    assert answer.reasoning == "Nothing about it."


def test_uncited_answer_is_withheld():
    llm = ScriptedLLM([{"reasoning": "I think so.", "answer": "Paris", "citations": []}])

    answer = ask(llm)

    assert answer.abstained and answer.answer == NOT_IN_MEMORY
    assert "'Paris' cited no memory" in answer.reasoning
    assert any("Paris" in note for note in answer.trace.notes)


def test_model_failure_abstains_and_records_the_error():
    llm = ScriptedLLM([LLMResult(None, "truncated", "length", '{"reasoning": "cu', 900, 512, 3.0)])

    answer = ask(llm)

    assert answer.abstained and answer.answer == NOT_IN_MEMORY
    assert "model failed" in answer.reasoning and "truncated" in answer.reasoning
    assert [call.as_dict() for call in answer.trace.llm_calls] == [
        {"stage": "answer", "tokens_in": 900, "tokens_out": 512, "ms": 3.0, "error": "truncated"}
    ]


def test_the_json_trace_lists_each_call_and_their_totals():
    llm = ScriptedLLM([LLMResult(None, "truncated", "length", '{"reasoning": "cu', 900, 512, 3.0)])
    trace = ask(llm).trace
    trace.llm_calls.insert(0, LLMCall("analyze", 300, 100, 12.5))

    rendered = json.loads(json.dumps(trace_dict(trace, [], UTC)))

    assert rendered["llm_calls"] == [
        {"stage": "analyze", "tokens_in": 300, "tokens_out": 100, "ms": 12.5, "error": None},
        {"stage": "answer", "tokens_in": 900, "tokens_out": 512, "ms": 3.0, "error": "truncated"},
    ]
    assert (rendered["tokens_in"], rendered["tokens_out"]) == (1200, 612)
    assert LLMCall.total(trace.llm_calls) == LLMTotal(calls=2, tokens_in=1200, tokens_out=612,
                                                      ms=15.5)


def test_citations_are_filtered_to_shown_ids_even_without_a_grammar():
    def unconstrained(messages, schema, max_tokens):
        data = {"reasoning": "r", "answer": "a sunset", "citations": [9, 99, 9, True, 12.0]}
        return LLMResult(data, None, "stop", "{}", 50, 10, 1.0)

    answer = ask(ScriptedLLM([unconstrained]))

    assert answer.citations == [9, 12] and not answer.abstained


def test_only_hallucinated_citations_is_an_abstention():
    def unconstrained(messages, schema, max_tokens):
        return LLMResult(
            {"reasoning": "r", "answer": "x", "citations": [99]}, None, "stop", "{}", 50, 10, 1.0
        )

    assert ask(ScriptedLLM([unconstrained])).abstained


def test_evidence_budget_limits_what_the_model_may_cite():
    llm = ScriptedLLM([{"reasoning": "", "answer": "x", "citations": [7]}])
    budget = len(memory_block(RICH, UTC)) + 5

    answer = ask(llm, char_budget=budget)

    assert llm.calls[0]["schema"]["properties"]["citations"]["items"]["enum"] == [7]
    assert [c.memory.id for c in answer.evidence] == [7]


def test_a_given_trace_is_extended_in_place():
    trace = Trace(frame=FRAME, notes=["retrieval note"], timings_ms={"sql": 1.0})
    llm = ScriptedLLM([{"reasoning": "", "answer": "x", "citations": [7]}])

    answer = ask(llm, trace=trace)

    assert answer.trace is trace
    assert trace.notes == ["retrieval note"] and set(trace.timings_ms) == {"sql", "answer"}
    assert len(trace.llm_calls) == 1


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("not in memory", True),
        ("Not in memory.", True),
        ("not in memory, but maybe", False),
        ("", False),
        ("unknown", False),
    ],
)
def test_is_abstention(text, expected):
    assert is_abstention(text) is expected


# --------------------------------------------------------------------------- whose words

# The reporters of the memories above: 7 rests on Caroline's turn, 9 on Melanie's, 12 on a
# question of Melanie's only (no reporter).
REPORTERS = {7: {"Caroline"}, 9: {"Melanie"}}


def reporters(ids):
    return {i: REPORTERS[i] for i in ids if i in REPORTERS}


def ask_about(question: str, citations: list[int]):
    llm = ScriptedLLM([{"reasoning": "r", "answer": "Boston", "citations": citations}])
    return generate_answer(llm, question, FRAME, list(CANDIDATES), UTC,
                           participants=["Caroline", "Melanie"], reporters=reporters)


def test_an_answer_about_one_participant_citing_only_the_others_words_is_withheld():
    """LoCoMo's adversarial "What country is Melanie's grandma from?" answered from Caroline's
    turn about her own grandma."""
    answer = ask_about("Where did Melanie go?", [7])
    assert answer.abstained and answer.answer == NOT_IN_MEMORY and answer.citations == []
    assert answer.reasoning.startswith("the model's answer 'Boston' cites nothing Melanie said "
                                       "(Caroline said what it cites), and the question asks "
                                       "about Melanie. r")
    assert answer.trace.notes[-1].startswith("answer withheld: the model's answer 'Boston'")


@pytest.mark.parametrize(
    ("question", "citations", "kept"),
    [
        ("Where did Caroline go?", [7], True),
        ("Where did Caroline go?", [9, 7], True),  # one cited memory of hers is enough
        ("Where did Mel go?", [9], True),  # the start of Melanie's name
        ("Where did Melanie go?", [12], False),  # her question only: she reported nothing
        ("Where did Caroline and Melanie go?", [9], True),  # two named: not checked
        ("Where did we go?", [9], True),  # nobody named
        ("Where did Lena go?", [9], True),  # not a participant
    ],
)
def test_an_answer_about_a_participant_must_cite_their_own_words(question, citations, kept):
    assert ask_about(question, citations).abstained is not kept


def test_without_reporters_no_answer_is_checked():
    llm = ScriptedLLM([{"reasoning": "r", "answer": "Boston", "citations": [7]}])
    answer = generate_answer(llm, "Where did Melanie go?", FRAME, list(CANDIDATES), UTC)
    assert not answer.abstained


# --------------------------------------------------------------------------- streaming

REPLY = {"reasoning": 'M7 says "answer": "Boston" was the place', "answer":
         'an LGBTQ "support" group \u2013 caf\u00e9\\n', "citations": [7]}


@pytest.mark.parametrize("piece", [1, 2, 3, 5, 8, 1000])
def test_the_answer_is_read_from_the_reply_as_it_streams(piece):
    raw = json.dumps(REPLY)  # escapes non-ASCII: "\u2013" may be cut between pieces
    reader = AnswerText()
    shown = [reader.feed(raw[start:start + piece]) for start in range(0, len(raw), piece)]
    assert "".join(shown) == REPLY["answer"]
    # nothing of the reasoning, not even its quoted "answer"
    assert "Boston" not in "".join(shown)


@pytest.mark.parametrize("partial", [
    '{"reasoning": "still thinking about the ans',
    '{"reasoning": "x", "answer"',
    '{"reasoning": "x", "answer": ',
    '{"reasoning": "x", "answer": "ab\\',
    '{"reasoning": "x", "answer": "ab\\u00',
])
def test_a_reply_cut_anywhere_shows_only_what_is_complete(partial):
    reader = AnswerText()
    shown = reader.feed(partial)
    assert shown in ("", "ab")
    rest = {'{"reasoning": "x", "answer": "ab\\': 'n"}',
            '{"reasoning": "x", "answer": "ab\\u00': 'e9"}'}
    if partial in rest:
        assert shown + reader.feed(rest[partial]) == ("ab\n" if partial.endswith("\\")
                                                      else "ab\u00e9")


def test_streaming_hands_out_the_answer_and_returns_the_same_answer():
    streamed: list[str] = []
    live = ask(ScriptedLLM([dict(REPLY)]), on_answer_text=streamed.append)
    quiet = ask(ScriptedLLM([dict(REPLY)]))
    assert "".join(streamed) == REPLY["answer"] == live.answer == quiet.answer
    assert (live.citations, live.abstained) == (quiet.citations, quiet.abstained) == ([7], False)
    assert len(streamed) > 5  # piece by piece, not at the end


def test_streamed_words_the_checks_withhold_are_still_withheld():
    streamed: list[str] = []
    answer = ask(ScriptedLLM([{"reasoning": "", "answer": "Boston", "citations": []}]),
                 on_answer_text=streamed.append)
    assert "".join(streamed) == "Boston"
    assert answer.abstained and answer.answer == "not in memory"


@pytest.mark.parametrize(("streamed", "answered", "abstained", "lines"), [
    ("Shakshuka", "Shakshuka", False, []),  # shown already
    ("", "Shakshuka", False, ["Shakshuka"]),  # nothing streamed: the whole answer
    ("", NOT_IN_MEMORY, True, [NOT_IN_MEMORY]),  # no model call (nothing found)
    ("Not in memory.", NOT_IN_MEMORY, True, []),  # the model said so itself
    ("Pancakes", NOT_IN_MEMORY, True, ["→ not in memory (the answer above was withheld)"]),
])
def test_what_ask_prints_after_the_streamed_words(streamed, answered, abstained, lines):
    from ramem_local.render import after_streamed_answer
    from ramem_local.types import Answer

    answer = Answer(question="q", answer=answered, abstained=abstained, reasoning="",
                    citations=[], evidence=[], trace=Trace(frame=FRAME))
    assert after_streamed_answer(streamed, answer) == lines
