"""An answer about one participant rests on what that participant said: ``Store.reporters``
on a real bank, and ``Memory.ask`` withholding an answer that cites only the other speaker."""

from __future__ import annotations

import pytest

from ramem_local.names import participants_named
from ramem_local.testing import ScriptedLLM

pytest_plugins = ("chat_fixtures",)


def turn_memory_id(bank, key: str) -> int:
    [found] = [m.id for m in bank.list(limit=100) if m.source_turns == [key]]
    return found


def test_reporters_are_the_speakers_of_turns_that_are_not_only_a_question(bank):
    told, asked = turn_memory_id(bank, "D1:4"), turn_memory_id(bank, "D2:3")
    # D1:4 Melanie: "That sounds inspiring, I am proud of you." D2:3 Caroline: "Wow, how far
    # was it?" (only a question)
    assert bank.store.reporters([told, asked]) == {told: {"Melanie"}}
    assert bank.store.reporters([]) == {}


def _analysis(messages, schema, max_tokens):
    return {"need": "what Melanie is researching", "time_start": None, "time_end": None,
            "event": None, "order": None, "persons": [], "locations": [], "entities": [],
            "topic": None, "keywords": []}


@pytest.mark.parametrize(("question", "withheld"), [
    ("What is Melanie researching?", True),  # Caroline's turn D2:1 is cited
    ("What is Caroline researching?", False),
])
def test_ask_withholds_an_answer_citing_only_the_other_speakers_words(bank, question, withheld):
    researching = turn_memory_id(bank, "D2:1")  # Caroline: "I am researching adoption agencies"

    def answer(messages, schema, max_tokens):
        assert researching in schema["properties"]["citations"]["items"]["enum"]
        return {"reasoning": "M says so", "answer": "adoption agencies",
                "citations": [researching]}

    bank.llm = ScriptedLLM([_analysis, answer])
    result = bank.ask(question, k=10, analyze="always")
    assert result.abstained is withheld
    if withheld:
        assert "cites nothing Melanie said (Caroline said what it cites)" in result.reasoning
    else:
        assert result.citations == [researching]


@pytest.mark.parametrize(("text", "named"), [
    ("What did Mel paint?", ["Melanie"]),
    ("Did Caroline and melanie meet?", ["Caroline", "Melanie"]),
    ("What did the assistant tell me?", ["assistant"]),  # "me" is a common word, never read
    ("What did I tell you?", []),
    ("The car was red.", []),
])
def test_participants_named_in_a_question(text, named):
    assert participants_named(text, ["Caroline", "Melanie", "me", "assistant"]) == named
