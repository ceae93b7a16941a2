"""scripts/ask_subset.py: issue 51's fixed subset and its paired answer-prompt variants."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

from ramem_local import answer

SCRIPTS = Path(__file__).resolve().parents[1] / "scripts"
_spec = importlib.util.spec_from_file_location("ask_subset", SCRIPTS / "ask_subset.py")
assert _spec is not None and _spec.loader is not None
ask_subset = importlib.util.module_from_spec(_spec)
sys.path.insert(0, str(SCRIPTS))  # ask_subset imports its sibling llm_subset
try:
    _spec.loader.exec_module(ask_subset)
finally:
    sys.path.remove(str(SCRIPTS))


def _sample(name: str) -> dict:
    qa = []
    for i in range(30):
        qa.append({"question": f"{name} answerable {i}", "category": 1 + i % 4,
                   "evidence": [] if i == 3 else [f"D1:{i}"]})
        if i % 3 == 0:
            qa.append({"question": f"{name} adversarial {i}", "category": 5})
    return {"sample_id": name, "qa": qa}


def test_the_fixed_subset_is_the_first_answerable_and_adversarial_questions_of_each_sample():
    chosen = ask_subset.fixed_subset([_sample("a"), _sample("b")])
    assert len(chosen) == 2 * (ask_subset.FIXED_ANSWERABLE + ask_subset.FIXED_ADVERSARIAL)
    first = [q["question"] for sample, q in chosen if sample == "a"]
    answerable = [q for q in first if "answerable" in q]
    assert answerable[:4] == ["a answerable 0", "a answerable 1", "a answerable 2",
                              "a answerable 4"]  # 3 has no evidence
    assert len(answerable) == ask_subset.FIXED_ANSWERABLE
    assert [q for q in first if "adversarial" in q][:2] == ["a adversarial 0",
                                                              "a adversarial 3"]


def test_a_prompt_variant_holds_only_inside():
    shipped = answer.SYSTEM_PROMPT, answer.answer_schema
    with ask_subset.prompt_variant("answer-first"):
        assert list(answer.answer_schema([1])["properties"]) == [
            "answer", "citations", "reasoning"]
    assert (answer.SYSTEM_PROMPT, answer.answer_schema) == shipped
    with ask_subset.prompt_variant("none"):
        assert answer.SYSTEM_PROMPT == shipped[0]
    with ask_subset.prompt_variant("asked-on-when-needed"):
        _, user = answer.answer_messages("When did Maria donate her car?", "[M1] e", "today")
        assert "asked on" not in user["content"]
    _, user = answer.answer_messages("When did Maria donate her car?", "[M1] e", "today")
    assert "(asked on today)" in user["content"]
