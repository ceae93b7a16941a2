"""The LoCoMo retrieval evaluation on a tiny LoCoMo-shaped file written by the test."""

from __future__ import annotations

import json

import pytest

from ramem_local.eval.retrieval import (
    RetrievalEvalConfig,
    format_table,
    run_retrieval_eval,
    score_question,
    write_jsonl,
)
from ramem_local.testing import ScriptedLLM
from ramem_local.types import DAY, Candidate, MemoryRecord

SAMPLE = {
    "sample_id": "tiny-1",
    "conversation": {
        "speaker_a": "Ana",
        "speaker_b": "Ben",
        "session_1_date_time": "10:00 am on 6 March, 2023",
        "session_1": [
            {"speaker": "Ana", "dia_id": "D1:1", "text": "I baked a lemon cake for the fair."},
            {"speaker": "Ben", "dia_id": "D1:2", "text": "The fair sounds fun."},
        ],
        "session_2_date_time": "10:00 am on 10 April, 2023",
        "session_2": [
            {"speaker": "Ana", "dia_id": "D2:1", "text": "I baked a chocolate cake for my sister."},
            {"speaker": "Ben", "dia_id": "D2:2", "text": "I adopted a puppy named Rex."},
        ],
    },
    "qa": [
        {"question": "What cake did Ana bake in April 2023?", "answer": "chocolate",
         "evidence": ["D2:1"], "category": 2},
        {"question": "What is the name of Ben's puppy?", "answer": "Rex",
         "evidence": ["D2:2"], "category": 4},
        {"question": "What did Ben bake?", "adversarial_answer": "a pie",
         "evidence": ["D:2:2"], "category": 5},
        {"question": "Unanswerable", "answer": "x", "evidence": [], "category": 1},
    ],
}


@pytest.fixture
def tiny_locomo(tmp_path):
    path = tmp_path / "tiny.json"
    path.write_text(json.dumps([SAMPLE]))
    return path


def test_every_scorable_question_is_asked_in_every_mode(tiny_locomo, hashing_embedder, tmp_path):
    result = run_retrieval_eval(tiny_locomo, hashing_embedder, RetrievalEvalConfig())
    assert result.unscorable == 1
    assert result.repairs["reformatted"] == 1  # "D:2:2" → "D2:2"
    assert sorted((r.question_index, r.mode) for r in result.results) == [
        (0, "baseline"), (0, "ramem"), (1, "baseline"), (1, "ramem"), (2, "baseline"),
        (2, "ramem")]
    april = next(r for r in result.results if r.question_index == 0 and r.mode == "ramem")
    assert april.triggered and april.grounded_range == ["2023-04-01", "2023-04-30"]
    assert april.retrieved[0]["source_turns"] == ["D2:1"]
    assert april.retrieved[0]["list"] == "context"
    assert april.metrics["R@5"] == 1.0

    out = tmp_path / "run.jsonl"
    write_jsonl(result, out)
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert set(rows[0]) == {"sample_id", "question_index", "category", "question", "mode",
                            "triggered", "grounded_range", "retrieved"}
    assert set(rows[0]["retrieved"][0]) == {"memory_id", "source_turns", "list", "rank"}


def test_summary_groups_and_table(tiny_locomo, hashing_embedder):
    result = run_retrieval_eval(tiny_locomo, hashing_embedder, RetrievalEvalConfig())
    summary = result.summary()
    assert summary["ramem"]["overall (cats 1-4)"]["n"] == 2
    assert summary["ramem"]["temporal-triggered"]["n"] == 1
    assert summary["ramem"]["cat 5 adversarial"]["n"] == 1
    table = format_table(result)
    assert "ramem R@10" in table and "baseline D@1" in table and "temporal-triggered" in table


def test_limit_and_samples_select_questions(tiny_locomo, hashing_embedder):
    result = run_retrieval_eval(tiny_locomo, hashing_embedder,
                                RetrievalEvalConfig(modes=("ramem",), limit=1))
    assert [r.question_index for r in result.results] == [0]
    with pytest.raises(ValueError, match="unknown sample"):
        run_retrieval_eval(tiny_locomo, hashing_embedder,
                           RetrievalEvalConfig(samples=("nope",)))


def memory(memory_id: int, turns: list[str], start: int, content: str = "x",
           persons=("Ana",)) -> Candidate:
    record = MemoryRecord(content=content, kind="turn", conversation="c", session_start=start,
                          session_end=start + DAY, persons=list(persons),
                          source_turns=turns, id=memory_id)
    return Candidate(memory=record, score=0.0, list_name="content")


def test_score_question_counts_hits_and_distractors():
    evidence_start = 100 * DAY
    retrieved = [memory(1, ["D9:1"], 10 * DAY, "Ana baked bread"),
                 memory(2, ["D2:1"], evidence_start)]
    scores = score_question(retrieved, {"D2:1"}, [evidence_start], "What did Ana bake?")
    assert scores["R@5"] == 1.0 and scores["MRR@25"] == 0.5
    assert scores["D@1"] == 1.0  # top: same person and topic, 90 days from the evidence
    near = [memory(1, ["D9:1"], evidence_start + 2 * DAY, "Ana baked bread")]
    assert score_question(near, {"D2:1"}, [evidence_start], "What did Ana bake?")["D@1"] == 0.0


def test_answers_come_from_ask_and_are_scored(tiny_locomo, hashing_embedder):
    """With an LLM each question is answered as ``ramem ask`` answers it by default (the
    analyzer off): one answer call per question and mode, for "What is the name of Ben's
    puppy?" as for "What cake did Ana bake in April 2023?"."""
    def analysis(messages, schema, max_tokens):
        return {"need": "what was baked", "time_start": None, "time_end": None,
                "event": None, "order": None, "persons": [], "locations": [],
                "entities": [], "topic": None, "keywords": ["cake"]}

    def cite_first(messages, schema, max_tokens):
        shown = schema["properties"]["citations"]["items"]["enum"]
        return {"reasoning": "from the memories", "answer": "a chocolate cake",
                "citations": shown[:1]}

    def reply(messages, schema, max_tokens):
        answering = "citations" in schema["properties"]
        return (cite_first if answering else analysis)(messages, schema, max_tokens)

    llm = ScriptedLLM([reply] * 10)
    result = run_retrieval_eval(tiny_locomo, hashing_embedder, RetrievalEvalConfig(), llm=llm)
    answering = ["citations" in call["schema"]["properties"] for call in llm.calls]
    # 3 scorable questions × 2 modes, each answered at once
    assert answering == [True] * 6
    april = next(r for r in result.results if r.question_index == 0 and r.mode == "ramem")
    assert april.answer["f1"] == pytest.approx(2 / 3)  # "chocolate cake" vs "chocolate"
    assert april.answer["tokens_in"] == 10  # the answer's call only (10 tokens in the fake)
    puppy = next(r for r in result.results if r.question_index == 1 and r.mode == "ramem")
    assert puppy.answer["tokens_in"] == 10  # the answer's call alone
    adversarial = next(r for r in result.results if r.category == 5)
    assert adversarial.answer["f1"] is None  # no reference answer: abstention is what counts
    summary = result.summary()["ramem"]["overall (cats 1-4)"]
    assert {"F1", "BLEU-1", "setF1", "abstain"} <= set(summary)
