"""``scripts/llm_subset.py``: the fixed subset, what is counted of the model's replies, the
summary; and one real run (MiniLM, SQLite, LoCoMo dev's first session) with a scripted model
whose replies make every number predictable."""

from __future__ import annotations

import importlib.util
import io
import json
import math
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest

from ramem_local import models
from ramem_local.eval.locomo import LocomoQuestion, load_questions
from ramem_local.ingest.extract import build_messages, repair_request
from ramem_local.protocols import LLMResult
from ramem_local.testing import ScriptedLLM
from ramem_local.types import RecallFrame, TimeRange, Turn

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "llm_subset.py"
_spec = importlib.util.spec_from_file_location("llm_subset", SCRIPT)
assert _spec is not None and _spec.loader is not None
llm_subset = importlib.util.module_from_spec(_spec)
sys.modules["llm_subset"] = llm_subset
_spec.loader.exec_module(llm_subset)


def question(index: int, category: int, evidence: list[str]) -> LocomoQuestion:
    return LocomoQuestion("s", index, f"q{index}?", "a", None, category, evidence, evidence)


def test_questions_inside_the_sessions_round_robin_over_categories():
    questions = [
        question(0, 2, ["D1:3"]),
        question(1, 2, ["D2:1"]),
        question(2, 2, ["D1:4", "D3:1"]),  # one id outside: out
        question(3, 4, ["D2:7"]),
        question(4, 4, []),  # no evidence: out
        question(5, 1, ["D1:1", "D2:2"]),
        question(6, 5, ["D10:1"]),  # session 10, not 1
        question(7, 2, ["D1:9"]),
    ]
    chosen = llm_subset.select_questions(questions, sessions=2, cap=10)
    assert [q.question_index for q in chosen] == [5, 0, 3, 1, 7]
    assert [q.question_index for q in llm_subset.select_questions(questions, 2, 3)] == [5, 0, 3]


def test_sub_conversation_keeps_the_first_sessions_and_refuses_missing_ones():
    sample = {"sample_id": "conv-x", "qa": [{"question": "?"}], "conversation": {
        "speaker_a": "A", "speaker_b": "B",
        "session_1_date_time": "1:56 pm on 8 May, 2023", "session_1": [{"dia_id": "D1:1"}],
        "session_2_date_time": "1:14 pm on 25 May, 2023", "session_2": [{"dia_id": "D2:1"}],
        "session_10_date_time": "2:00 pm on 1 Oct, 2023", "session_10": [{"dia_id": "D10:1"}],
    }}
    cut = llm_subset.sub_conversation(sample, 1)
    assert cut["qa"] == []
    assert sorted(cut["conversation"]) == ["session_1", "session_1_date_time", "speaker_a",
                                           "speaker_b"]
    with pytest.raises(ValueError, match="session_3"):
        llm_subset.sub_conversation(sample, 3)


def test_citations_are_valid_only_when_the_prompt_showed_the_turn():
    moment = int(datetime(2023, 5, 8, 13, 56, tzinfo=UTC).timestamp())
    turns = [Turn("Caroline", "I went to a support group.", moment, 1, "D1:3", id=3),
             Turn("Melanie", "How was it?", moment + 60, 1, "D1:4", id=4)]
    messages = build_messages(turns, UTC)
    assert llm_subset.shown_turn_labels(messages) == {"D1:3", "D1:4"}
    repair = messages + repair_request([], ["repeats turn D1:3 word for word: 'I went'"])
    assert llm_subset.shown_turn_labels(repair) == {"D1:3", "D1:4"}
    reply = {"entries": [
        {"content": "Caroline went to a support group.", "source_turns": ["D1:3", "D9:9"],
         "event_date": "2023-05-07"},
        {"content": "Melanie asked.", "source_turns": ["D1:4"], "event_date": None},
    ]}
    cut = ('{"entries": [{"content": "Melanie asked how it was.", "source_turns": ["D1:4", '
           '"D1:1"], "event_date": null}, {"content": "Caroline sa')
    calls = [llm_subset.RecordedCall(messages, {}, LLMResult(reply, None, "stop", "", 1, 1, 1.0)),
             llm_subset.RecordedCall(messages, {}, LLMResult(None, "truncated", "length", cut,
                                                             1, 1, 1.0)),
             llm_subset.RecordedCall(messages, {}, LLMResult(None, "invalid_json", "stop", cut,
                                                             1, 1, 1.0))]
    assert llm_subset.extraction_citations(calls) == {
        "entries": 3, "entries_dated": 1, "citations": 5, "citations_valid": 3,
        "entries_of_cut_replies": 1}


def test_range_agreement_against_the_deterministic_days():
    tz = UTC
    start = int(datetime(2023, 5, 1, tzinfo=tz).timestamp())
    frame = RecallFrame(question="q", need="q", reference_time=start)
    frame.time_range = TimeRange(start, start + 31 * 86400)
    days = llm_subset.deterministic_days(frame, tz)
    assert days == ["2023-05-01", "2023-05-31"]
    same = llm_subset.proposed_days({"proposal": {"time_start": "2023-5-01",
                                                  "time_end": "2023-05-31"}})
    assert llm_subset.range_agreement(days, same) == "same"
    other = llm_subset.proposed_days({"proposal": {"time_start": "2023-05-01",
                                                   "time_end": "soon"}})
    assert other == ["2023-05-01", "soon"]
    assert llm_subset.range_agreement(days, other) == "different"
    none = llm_subset.proposed_days({"proposal": {"time_start": None, "time_end": None}})
    assert none is None and llm_subset.proposed_days(None) is None
    assert llm_subset.range_agreement(days, none) == "deterministic_only"
    assert llm_subset.range_agreement(None, same) == "llm_only"
    assert llm_subset.range_agreement(None, None) == "both_none"


def window(status: str, memories: int, citations: int, valid: int, seconds: float) -> dict:
    return {"kind": "window", "status": status, "memories_new": memories,
            "citations": citations, "citations_valid": valid, "entries": memories,
            "entries_dated": memories // 2, "seconds": seconds, "tokens_in": 100,
            "tokens_out": 10}


def asked(category: int, r10: float, f1: float | None, abstained: bool, agreement: str,
          triggered: bool = False, seconds: float = 10.0) -> dict:
    return {"kind": "question", "category": category, "triggered": triggered,
            "r10": dict.fromkeys(llm_subset.RETRIEVAL_KEYS, r10) | {"turns_det": 0.0},
            "f1": f1, "set_f1": f1, "bleu1": f1, "abstained": abstained,
            "range_agreement": agreement, "raw_citations": [] if abstained else [1],
            "citations_inside": True, "seconds": seconds}


def test_summary_means_and_shares():
    rows = [
        window("done", 4, 10, 10, 100.0), window("failed", 0, 0, 0, 50.0),
        {"kind": "extracted", "memories": 4, "with_event_time": 1},
        asked(1, 1.0, 0.5, False, "same", triggered=True, seconds=30.0),
        asked(4, 0.0, 0.0, True, "llm_only", seconds=10.0),
        asked(5, 1.0, None, True, "both_none", seconds=20.0),
    ]
    s = llm_subset.summarize_rows(rows)
    assert (s["windows"], s["windows_done_share"], s["memories_per_window"]) == (2, 0.5, 2.0)
    assert s["citations_valid_share"] == 1.0 and s["seconds_per_window"] == 75.0
    assert s["memories_event_time_share"] == 0.25 and s["tokens_in"] == 200
    assert s["n_headline"] == 2 and s["n_triggered"] == 1 and s["n_cat5"] == 1
    assert s["R@10 both_llm"] == 0.5 and s["R@10 turns_det"] == 0.0
    assert s["trigR@10 both_det"] == 1.0
    assert s["f1"] == 0.25 and s["abstained_cats_1_4"] == 0.5 and s["abstained_cat5"] == 1.0
    assert s["analyzer_agree_share"] == pytest.approx(2 / 3)
    assert s["analyzer_agreement"]["llm_only"] == 1
    assert s["answers_citing"] == 1 and s["seconds_per_question_median"] == 20.0
    first = llm_subset.summarize_rows(rows, first=1)
    assert first["n_questions"] == 1 and math.isnan(first["abstained_cat5"])
    assert "n/a" in llm_subset.format_summary("m", first)


def scripted_reply(messages: list[dict], schema: dict, max_tokens: int) -> dict:
    """Extraction: one entry per shown turn, citing it; analysis: no range; answer: the text
    of the first memory shown, citing it."""
    properties = schema["properties"]
    user = messages[-1]["content"]
    if "entries" in properties:
        labels = sorted(llm_subset.shown_turn_labels(messages))
        return {"entries": [
            {"content": f"Fact number {n} of the excerpt.", "source_turns": [label],
             "persons": [], "entities": [], "keywords": [], "location": None, "topic": "t",
             "event_date": "2023-05-07" if n == 0 else None}
            for n, label in enumerate(labels[:4])]}
    if "citations" in properties:
        first = properties["citations"]["items"]["enum"][0]
        return {"reasoning": "r", "answer": "7 May 2023", "citations": [first]}
    assert "Question:" in user
    return {"need": "support group", "time_start": None, "time_end": None, "event": None,
            "order": None, "persons": [], "locations": [], "entities": [], "topic": None,
            "keywords": ["support"]}


def test_a_run_on_the_first_session_with_a_scripted_model(locomo_dev, minilm_dir, tmp_path):
    chosen = llm_subset.select_questions(load_questions(locomo_dev)[llm_subset.SAMPLE], 1, 2)
    assert [q.category for q in chosen] == [1, 2]  # session 1 has no cat-4/5 question first
    llm = ScriptedLLM([scripted_reply] * 20)
    out = io.StringIO()
    with models.registered_llm("scripted-subset", lambda: llm):
        summary = llm_subset.run("scripted-subset", locomo_dev, models_dir=None, threads=1,
                                 sessions=1, cap=2, out=out, work=tmp_path,
                                 embedder=minilm_dir)
    rows = [json.loads(line) for line in out.getvalue().splitlines()]
    kinds = [r["kind"] for r in rows]
    assert kinds == ["subset", "window", "extracted", "question", "question", "summary"]
    assert rows[1]["turns"] == 18 and rows[1]["status"] == "done"
    assert (rows[1]["citations"], rows[1]["citations_valid"]) == (4, 4)
    assert rows[2]["memories"] == 4 and rows[2]["with_event_time"] >= 1
    for row in rows[3:5]:
        # ask's own retrieval and the re-run with the frame it used agree
        assert row["r10"]["ask"] == row["r10"]["both_llm"]
        assert row["citations_inside"] and row["raw_citations"] == row["citations"]
        assert row["range_agreement"] == "both_none"
        assert "support" in row["analyzer_keywords"]
    when = next(r for r in rows if r.get("category") == 2)
    assert when["gold"] == "7 May 2023" and when["f1"] == 1.0
    assert summary["windows_done_share"] == 1.0 and summary["n_questions"] == 2
    assert summary["memories_per_window"] == 4.0

    # the twin rule on the banks the run left: search only, every cat 1-4 question inside
    inside = llm_subset.select_questions(load_questions(locomo_dev)[llm_subset.SAMPLE], 1,
                                         10_000, categories=(1, 2, 3, 4))
    report = llm_subset.twin_rule(locomo_dev, tmp_path, 1, speaker_name_weight=1.0,
                                  embedder=minilm_dir).splitlines()
    assert report[0].startswith("twin rule · conv-26 sessions 1-1 · 4 extracted memories · "
                                f"{len(inside)} questions of cats 1-4")
    assert report[0].endswith("speaker name weight 1")
    assert report[1].startswith("  R@10 turns alone ")
    assert all(" -> " in line for line in report[2:])


def test_the_window_size_is_the_runs(locomo_dev, minilm_dir, tmp_path):
    """``--window 8``: session 1's 18 turns go to the model in three windows (8, 8, 6 turns:
    each starts two turns back), not one."""
    llm = ScriptedLLM([scripted_reply] * 20)
    out = io.StringIO()
    with models.registered_llm("scripted-subset", lambda: llm):
        llm_subset.run("scripted-subset", locomo_dev, models_dir=None, threads=1, sessions=1,
                       cap=0, out=out, work=tmp_path, embedder=minilm_dir, window_size=8)
    rows = [json.loads(line) for line in out.getvalue().splitlines()]
    assert rows[0]["window_size"] == 8
    assert [r["turns"] for r in rows if r["kind"] == "window"] == [8, 8, 6]


def test_answer_first_puts_the_answer_before_the_reasoning(monkeypatch):
    from ramem_local import answer as answer_module

    # registered with monkeypatch so that the variant's patch is undone after the test
    monkeypatch.setattr(answer_module, "answer_schema", answer_module.answer_schema)
    monkeypatch.setattr(answer_module, "SYSTEM_PROMPT", answer_module.SYSTEM_PROMPT)
    assert list(answer_module.answer_schema([1])["properties"]) == [
        "reasoning", "answer", "citations"]
    llm_subset.VARIANTS["answer-first"]()
    schema = answer_module.answer_schema([1, 2])
    assert list(schema["properties"]) == ["answer", "citations", "reasoning"]
    assert schema["properties"]["citations"]["items"]["enum"] == [1, 2]
    assert answer_module.answer_messages("q", "e", "r")[0]["content"].endswith(
        '{"answer": "...", "citations": [ids], "reasoning": "..."}.')


@pytest.mark.parametrize(("question", "told_the_day"), [
    ("When did Maria donate her car?", False),
    ("What did Melanie paint last weekend?", True),
    ("How long ago was Caroline's 18th birthday?", True),
    ("What did Jon do in May 2023?", True),
])
def test_asked_on_when_needed_tells_the_day_only_where_the_question_needs_it(
        monkeypatch, question: str, told_the_day: bool) -> None:
    from ramem_local import answer as answer_module

    monkeypatch.setattr(answer_module, "answer_messages", answer_module.answer_messages)
    llm_subset.VARIANTS["asked-on-when-needed"]()
    system, user = answer_module.answer_messages(question, "[M1] e", "Monday 8 May 2023")
    assert system["content"] == answer_module.SYSTEM_PROMPT
    assert ("(asked on Monday 8 May 2023)" in user["content"]) is told_the_day
    assert user["content"].endswith(question)
