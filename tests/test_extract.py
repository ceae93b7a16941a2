"""LLM extraction with a scripted model: the prompt, the reply schema, the split retry of
one window, and reading an entry of the reply (ingest/extract.py).

Anchoring an entry is tested in test_anchor.py, the driver (windows, ledger, retries, merging)
in test_llm_pipeline.py.
"""

from __future__ import annotations

import json
from datetime import timezone

import pytest
from chat_sample import LINES, conversation, entry, facts_for_window, labels_of, stored_turns, ts

from ramem_local.api import Memory
from ramem_local.ingest.extract import (
    EntryRejected,
    build_messages,
    complete_entries,
    extract_window,
    read_entry,
    turn_labels,
    window_schema,
)
from ramem_local.ingest.pipeline import ingest_conversations
from ramem_local.protocols import LLMResult
from ramem_local.schemas import unbounded, validate
from ramem_local.testing import ScriptedLLM
from ramem_local.types import Turn

pytest_plugins = ("chat_fixtures",)
UTC = timezone.utc


# --------------------------------------------------------------------------- prompt + schema


def test_prompt_shows_turn_ids_timestamps_and_speakers(bank):
    turns = stored_turns(bank)[:5]
    messages = build_messages(turns, UTC)
    user = messages[-1]["content"]

    assert messages[0]["role"] == "system" and "yesterday" in messages[0]["content"].lower()
    assert "[D1:3] 2023-05-08 13:59 Caroline: Lovely. I went to an LGBTQ support group" in user
    assert "[D2:1] 2023-05-25 09:01 Caroline: I am researching adoption agencies now." in user
    assert "-- Session 1, Monday 8 May 2023 --" in user
    assert user.index("[D1:4]") < user.index("-- Session 2") < user.index("[D2:1]")


def test_the_prompt_shows_a_worked_example_before_the_excerpt(bank):
    """The example (an excerpt and its entries) comes between the rules and the window: its
    entries are what the schema accepts for its own turns, written as the rules ask (names
    for "I", "yesterday" as a date), and none of its turns is the window's."""
    messages = build_messages(stored_turns(bank)[:3], UTC)
    assert [m["role"] for m in messages] == ["system", "user", "assistant", "user"]
    example, reply = messages[1]["content"], json.loads(messages[2]["content"])
    assert "[e1] 2024-03-09 18:02 Ana: We finally adopted a puppy yesterday!" in example
    assert "[D1:" not in example and "[D1:1]" in messages[3]["content"]
    assert validate(reply, window_schema(["e1", "e2", "e3"])) == []
    assert reply["entries"][0]["content"] == "Ana adopted a puppy named Luna on 8 March 2024."
    assert reply["entries"][0]["event_date"] == "2024-03-08"


def test_prompt_shows_times_in_the_banks_timezone():
    from zoneinfo import ZoneInfo

    turn = Turn("Ann", "hi there", ts("2023-05-08 23:30"), 1, external_id="a1", id=1)
    line = build_messages([turn], ZoneInfo("Europe/Berlin"))[-1]["content"]
    assert "[a1] 2023-05-09 01:30 Ann: hi there" in line


def test_turns_without_external_id_are_shown_as_t_store_id(tmp_path, hashing_embedder):
    with Memory.open(tmp_path / "b.db", embedder=hashing_embedder) as memory:
        ingest_conversations(memory.store, [conversation(LINES[:3], ids=False)],
                             embedder=memory.embedder, tz=UTC)
        turns = memory.store.conversation_turns(memory.store.conversation_id("chat"))
        assert all(t.external_id is None for t in turns)
        assert list(turn_labels(turns)) == [f"t{t.id}" for t in turns]
        assert f"[t{turns[1].id}] 2023-05-08 13:58 Melanie:" in build_messages(turns, UTC)[-1][
            "content"]


def test_schema_cites_only_the_window_turns_and_is_bounded(bank):
    turns = stored_turns(bank)[2:6]
    schema = window_schema(list(turn_labels(turns)))

    assert labels_of(schema) == ["D1:3", "D1:4", "D2:1", "D2:2"]
    assert unbounded(schema) == []
    items = schema["properties"]["entries"]
    assert items["maxItems"] == 12
    src = items["items"]["properties"]["source_turns"]
    assert (src["minItems"], src["maxItems"]) == (1, 6)
    assert validate({"entries": [entry("Caroline went to a group.", "D9:9")]}, schema) != []


# --------------------------------------------------------------------------- one window


def test_prompt_too_long_for_the_context_is_split(bank):
    turns = stored_turns(bank)
    llm = ScriptedLLM([facts_for_window, facts_for_window])
    full = sum(llm.count_tokens(m["content"]) for m in build_messages(turns, UTC))
    llm.n_ctx = full + 48 + 100 - 1  # the whole window does not fit, each half does
    outcome = extract_window(llm, turns, max_tokens=100, tz=UTC)

    assert outcome.ok and outcome.split and len(llm.calls) == 2
    assert outcome.calls[0].error.startswith("prompt_too_long")


def test_context_window_error_from_the_runtime_is_split_too(bank):
    err = LLMResult(None, "ValueError: Requested tokens (9000) exceed context window of 8192",
                    None, "", 0, 0, 1.0)
    llm = ScriptedLLM([err, facts_for_window, facts_for_window])
    outcome = extract_window(llm, stored_turns(bank), max_tokens=100, tz=UTC)
    assert outcome.ok and outcome.split


ONE = entry("Caroline went to a support group.", "D1:3")
TWO = entry("Melanie painted a sunrise.", "D1:2")


@pytest.mark.parametrize(
    ("raw", "finished"),
    [
        ('{"entries": [' + json.dumps(ONE) + ', ' + json.dumps(TWO) + ', {"content": "Mel',
         [ONE, TWO]),
        ('{"entries": [' + json.dumps(ONE) + ',\n  ' + json.dumps(TWO), [ONE, TWO]),
        ('{"entries": [' + json.dumps(ONE) + ', {"content": "x", "source_turns": ["D9:9"]}, '
         + json.dumps(TWO) + ', {', [ONE, TWO]),  # the citation the schema refuses is left
        ('{"entries": [{"content": "Caroline went', []),
        ('{"entries": ', []),
        ('', []),
        ('{"entries": [' + json.dumps(entry("la la la la la la la la la la la la la la la",
                                            "D1:1")) + ', {', []),  # a loop is no entry
    ],
)
def test_complete_entries_are_the_whole_ones_before_the_cut(bank, raw, finished):
    schema = window_schema(list(turn_labels(stored_turns(bank))))
    assert complete_entries(raw, schema["properties"]["entries"]["items"]) == finished


# --------------------------------------------------------------------------- reading an entry


def test_an_entry_is_read_cleaned():
    read = read_entry(entry("  Caroline   signed up for a\npottery class.  ", "D3:1",
                            persons=["Caroline", "caroline ", "null"], location="null",
                            keywords=["pottery", "Pottery", " "], entities=["Boston"],
                            topic="  hobbies ", event_date="n/a"))
    assert read.content == "Caroline signed up for a pottery class."
    assert read.source_turns == ["D3:1"] and read.persons == ["Caroline"]
    assert (read.location, read.keywords, read.entities, read.topic, read.event_date) == (
        None, ["pottery"], ["Boston"], "hobbies", None)


@pytest.mark.parametrize("content", ["ok", "1.2.3", "2023-05-18", "", None])
def test_an_entry_that_says_nothing_is_rejected_when_read(content):
    with pytest.raises(EntryRejected, match="content says nothing"):
        read_entry(entry(content, "D1:1"))
