"""The LLM ingest tier with a scripted model (ingest/llm_pipeline.py): windows recorded in the
extraction ledger, the split retry, failure accounting, idempotent re-runs and provenance
merging.

The rule under test (issue): malformed or truncated JSON from a small model must never drop
data silently. A window either ends ``done`` with its memories, or ``failed`` with the reason;
its turns stay searchable as turn memories either way, and ``retry_failed`` tries again.
"""

from __future__ import annotations

import json

import pytest
from chat_sample import (
    LINES,
    S1,
    S2,
    S3,
    UTC,
    conversation,
    entry,
    facts_for_window,
    labels_of,
    stored_turns,
)
from fakes import truncated

from ramem_local.api import Memory
from ramem_local.ingest.extract import PROMPT_VERSION, extract_window
from ramem_local.ingest.llm_pipeline import run_extraction
from ramem_local.ingest.pipeline import ingest_conversations
from ramem_local.ingest.windows import windows_of
from ramem_local.protocols import LLMResult
from ramem_local.render import window_line
from ramem_local.testing import ScriptedLLM
from ramem_local.text import fts_match_query
from ramem_local.types import DAY

pytest_plugins = ("chat_fixtures",)


def turn_memory_count(memory: Memory) -> int:
    return memory.store.db.execute(
        "SELECT count(*) FROM memories WHERE kind = 'turn'").fetchone()[0]


def extracted(memory: Memory) -> list:
    ids = [r[0] for r in memory.store.db.execute(
        "SELECT id FROM memories WHERE kind = 'extracted' ORDER BY id")]
    found = memory.store.get_memories(ids)
    return [found[i] for i in ids]


def window_rows(memory: Memory) -> list:
    return windows_of(memory.store, prompt_version=PROMPT_VERSION)


def test_windows_are_recorded_once_with_status_and_prompt_version(bank):
    llm = ScriptedLLM([facts_for_window] * 10)
    report = run_extraction(bank.store, llm, bank.embedder, tz=UTC, window_size=4, overlap=1)

    rows = window_rows(bank)
    assert [(w.turn_count, w.status, w.attempts, w.model, w.prompt_version) for w in rows] == [
        (4, "done", 1, "scripted-llm", "x1"),
        (4, "done", 1, "scripted-llm", "x1"),
        (4, "done", 1, "scripted-llm", "x1"),
    ]
    assert (report.windows_total, report.done, report.failed, report.llm_calls) == (3, 3, 0, 3)
    turns = stored_turns(bank)
    assert [(w.first_turn_id, w.last_turn_id) for w in rows] == [
        (turns[0].id, turns[3].id), (turns[3].id, turns[6].id), (turns[6].id, turns[9].id)]


def test_each_call_uses_the_schema_of_its_own_window(bank):
    llm = ScriptedLLM([facts_for_window] * 10)
    run_extraction(bank.store, llm, None, tz=UTC, window_size=4, overlap=1)
    assert [labels_of(c["schema"]) for c in llm.calls] == [
        ["D1:1", "D1:2", "D1:3", "D1:4"],
        ["D1:4", "D2:1", "D2:2", "D2:3"],
        ["D2:3", "D2:4", "D3:1", "D3:2"],
    ]


def test_extraction_stores_anchored_memories_with_vectors_and_provenance(bank):
    def reply(messages, schema, max_tokens):
        return {"entries": [
            entry("Caroline went to an LGBTQ support group on 7 May 2023.", "D1:3",
                  persons=["Caroline"], keywords=["support group"], topic="community"),
            entry("Melanie painted a sunrise over the lake.", "D1:2", persons=["Melanie"]),
        ]}

    turns_before = turn_memory_count(bank)
    report = run_extraction(bank.store, ScriptedLLM([reply]), bank.embedder, tz=UTC)

    assert (report.done, report.failed, report.memories_new) == (1, 0, 2)
    group = extracted(bank)[0]
    assert group.source_turns == ["D1:3"] and group.event_range is not None
    assert (group.session_start, group.kind) == (S1, "extracted")
    assert turn_memory_count(bank) == turns_before  # turn memories are kept
    assert bank.store.vector_count() == bank.store.memory_count()
    window_ids = {r[0] for r in bank.store.db.execute(
        "SELECT window_id FROM memories WHERE kind = 'extracted'")}
    assert window_ids == {window_rows(bank)[0].id}
    hits = bank.store.content_candidates(query_vector=None, fts_query=fts_match_query(
        "support group community"), depth=10, limit=5)
    assert group.id in [h.id for h in hits]


def test_a_fact_repeated_in_overlapping_windows_is_stored_once_with_both_provenances(bank):
    def first(messages, schema, max_tokens):
        return {"entries": [entry("Caroline is researching adoption agencies.", "D2:1")]}

    def second(messages, schema, max_tokens):  # same fact, other case/spacing, more citations
        return {"entries": [entry("caroline is  researching adoption agencies.", "D2:1", "D3:1"),
                            entry("Melanie's dog Luna learned to fetch the newspaper.", "D3:2")]}

    llm = ScriptedLLM([first, second])
    report = run_extraction(bank.store, llm, bank.embedder, tz=UTC, window_size=6, overlap=2)

    assert [labels_of(c["schema"])[0] for c in llm.calls] == ["D1:1", "D2:1"]  # D2:1 in both
    assert (report.done, report.memories_new, report.memories_merged) == (2, 2, 1)
    adoption = extracted(bank)[0]
    assert adoption.content == "Caroline is researching adoption agencies."
    assert sorted(adoption.source_turns) == ["D2:1", "D3:1"]
    assert (adoption.session_start, adoption.session_end) == (S2, S3 + DAY)  # span follows
    matrix = bank.store.int8_matrix()  # the int8 scan's filter columns follow
    episode = matrix.episodes[matrix.ids.tolist().index(adoption.id)]
    assert tuple(episode[:2]) == (S2, S3 + DAY)


def test_the_same_fact_twice_in_one_reply_is_one_memory(bank):
    reply = {"entries": [entry("Melanie ran a charity race.", "D2:2"),
                         entry("MELANIE ran a charity race.", "D2:4")]}
    report = run_extraction(bank.store, ScriptedLLM([reply]), bank.embedder, tz=UTC)
    assert report.memories_new == 1
    assert sorted(extracted(bank)[0].source_turns) == ["D2:2", "D2:4"]


def test_truncated_reply_is_retried_as_two_halves(bank):
    def half(messages, schema, max_tokens):
        ids = labels_of(schema)
        return {"entries": [entry(f"A fact from turns {ids[0]} to {ids[-1]}.", ids[0])]}

    llm = ScriptedLLM([truncated(), half, half])
    report = run_extraction(bank.store, llm, bank.embedder, tz=UTC)

    assert [len(labels_of(c["schema"])) for c in llm.calls] == [10, 5, 5]
    assert (report.done, report.failed, report.llm_calls, report.memories_new) == (1, 0, 3, 2)
    assert report.windows[0].split
    assert [m.source_turns for m in extracted(bank)] == [["D1:1"], ["D2:2"]]


def test_repetition_is_retried_like_truncation(bank):
    loop = LLMResult(None, "repetition", "length", "la la la", 100, 64, 1.0)
    llm = ScriptedLLM([loop, facts_for_window, facts_for_window])
    report = run_extraction(bank.store, llm, None, tz=UTC)
    assert (report.done, report.llm_calls) == (1, 3)


@pytest.mark.parametrize(
    "halves",
    [
        [truncated(), truncated()],  # the first half fails: the second is not tried
        # one good half is not enough when the other finished no entry: nothing partial
        [facts_for_window, truncated()],
    ],
)
def test_window_fails_when_a_half_fails_and_its_turns_stay_searchable(bank, halves):
    llm = ScriptedLLM([truncated(), *halves])
    turns_before = turn_memory_count(bank)
    report = run_extraction(bank.store, llm, bank.embedder, tz=UTC)

    assert (report.done, report.failed, report.memories_new) == (0, 1, 0)
    [row] = window_rows(bank)
    assert (row.status, row.attempts) == ("failed", 1)
    assert row.error.startswith("truncated (after splitting the window")
    assert report.failures == [(row.id, row.error)]
    assert extracted(bank) == [] and turn_memory_count(bank) == turns_before
    hits = bank.store.content_candidates(query_vector=None, fts_query=fts_match_query(
        "charity race"), depth=10, limit=3)
    top = bank.store.get_memories([hits[0].id])[hits[0].id]
    assert top.kind == "turn" and top.source_turns == ["D2:2"]


def _cut_after(*entries: dict) -> LLMResult:
    """A reply that ran out of tokens inside the entry after ``entries``."""
    finished = ", ".join(json.dumps(e) for e in entries)
    return truncated('{"entries": [' + finished + ', {"content": "Melanie said that her d')


def test_a_half_cut_short_keeps_the_entries_it_finished(bank):
    def half(messages, schema, max_tokens):
        ids = labels_of(schema)
        return {"entries": [entry(f"A fact from turns {ids[0]} to {ids[-1]}.", ids[0])]}

    cut = _cut_after(entry("Melanie ran a charity race for mental health.", "D2:2"),
                     entry("Melanie's kids cheered at the race.", "D2:4"))
    llm = ScriptedLLM([truncated(), half, cut])
    report = run_extraction(bank.store, llm, bank.embedder, tz=UTC)

    assert (report.done, report.failed, report.memories_new) == (1, 0, 3)
    assert report.windows[0].split and report.windows[0].cut_short
    assert sorted(m.content for m in extracted(bank)) == [
        "A fact from turns D1:1 to D2:1.", "Melanie ran a charity race for mental health.",
        "Melanie's kids cheered at the race."]
    [row] = window_rows(bank)
    assert row.status == "done"


def test_a_one_turn_window_cut_short_keeps_what_it_finished(bank):
    turns = stored_turns(bank)[5:6]  # D2:2
    cut = _cut_after(entry("Melanie ran a charity race.", "D2:2"))
    outcome = extract_window(ScriptedLLM([cut]), turns, max_tokens=100, tz=UTC)
    assert outcome.ok and outcome.cut_short and not outcome.split
    assert [e["content"] for e in outcome.entries or []] == ["Melanie ran a charity race."]


def test_invalid_json_fails_the_window_without_retry(bank):
    llm = ScriptedLLM(['{"entries": [{"content": "Caroline went'])
    report = run_extraction(bank.store, llm, bank.embedder, tz=UTC)
    assert (report.failed, report.llm_calls) == (1, 1)
    assert window_rows(bank)[0].error == "invalid_json"


def test_a_window_whose_entries_all_fail_validation_is_failed_with_the_reason(bank):
    reply = {"entries": [entry("ok", "D1:1"), entry("fine", "D1:2")]}
    report = run_extraction(bank.store, ScriptedLLM([reply, reply]), bank.embedder, tz=UTC)
    assert (report.failed, report.entries_rejected, report.llm_calls) == (1, 4, 2)
    error = window_rows(bank)[0].error
    assert error.startswith("no valid entry (4 rejected; first: content says nothing")
    assert error.endswith("; asked again: no valid entry either")


def test_an_empty_entry_list_is_a_done_window(bank):
    report = run_extraction(bank.store, ScriptedLLM([{"entries": []}]), bank.embedder, tz=UTC)
    assert (report.done, report.memories_new) == (1, 0)


def test_rerun_skips_done_windows(bank):
    run_extraction(bank.store, ScriptedLLM([facts_for_window] * 3), bank.embedder, tz=UTC,
                   window_size=4, overlap=1)
    count = bank.store.memory_count()
    llm = ScriptedLLM([])  # any call would fail the test
    report = run_extraction(bank.store, llm, bank.embedder, tz=UTC, window_size=4, overlap=1)

    assert llm.calls == [] and bank.store.memory_count() == count
    assert (report.windows_total, report.skipped_done, report.done) == (3, 3, 0)


def test_retry_failed_reprocesses_only_failed_windows(bank):
    llm = ScriptedLLM([facts_for_window, "not json", facts_for_window])
    first = run_extraction(bank.store, llm, bank.embedder, tz=UTC, window_size=4, overlap=1)
    assert (first.done, first.failed) == (2, 1)

    again = run_extraction(bank.store, ScriptedLLM([]), bank.embedder, tz=UTC, window_size=4,
                           overlap=1)
    assert (again.skipped_done, again.skipped_failed, again.llm_calls) == (2, 1, 0)

    retry_llm = ScriptedLLM([facts_for_window])
    retried = run_extraction(bank.store, retry_llm, bank.embedder, tz=UTC, retry_failed=True,
                             window_size=4, overlap=1)
    assert (retried.done, retried.failed, retried.skipped_done) == (1, 0, 2)
    assert labels_of(retry_llm.calls[0]["schema"])[0] == "D1:4"
    assert [(w.status, w.attempts, w.error) for w in window_rows(bank)] == [
        ("done", 1, None), ("done", 2, None), ("done", 1, None)]


def test_turns_added_later_get_new_windows_and_old_ones_are_not_redone(tmp_path,
                                                                        hashing_embedder):
    with Memory.open(tmp_path / "b.db", embedder=hashing_embedder) as memory:
        ingest_conversations(memory.store, [conversation(LINES[:4])], embedder=memory.embedder,
                             tz=UTC)
        llm = ScriptedLLM([facts_for_window] * 3)
        run_extraction(memory.store, llm, memory.embedder, tz=UTC, window_size=4, overlap=1)
        ingest_conversations(memory.store, [conversation(LINES)], embedder=memory.embedder,
                             tz=UTC)
        report = run_extraction(memory.store, llm, memory.embedder, tz=UTC, window_size=4,
                                overlap=1)
        assert [labels_of(c["schema"]) for c in llm.calls] == [
            ["D1:1", "D1:2", "D1:3", "D1:4"],
            ["D1:4", "D2:1", "D2:2", "D2:3"],  # the new turns, starting one turn back
            ["D2:3", "D2:4", "D3:1", "D3:2"],
        ]
        assert (report.skipped_done, report.done) == (1, 2)


def _raises(messages, schema, max_tokens):
    raise RuntimeError("llama exploded")


GARBAGE = [
    "",
    "null",
    "[]",
    '{"entries": "many"}',
    '{"entries": [{"content": 5}]}',
    "```json\n{}\n```",
    _raises,
    LLMResult(None, "repetition", "length", "aaaa", 1, 1, 1.0),
    LLMResult({"foo": 1}, None, "stop", "{}", 1, 1, 1.0),  # off-schema data, not validated
    LLMResult({"entries": ["just a string", None, {"content": None}]}, None, "stop", "", 1, 1, 1),
    LLMResult({"entries": [{"content": "Caroline went out.", "source_turns": "D1:1",
                            "persons": "Caroline", "event_date": 20230507}]},
              None, "stop", "", 1, 1, 1.0),
]


@pytest.mark.parametrize("garbage", GARBAGE)
def test_extraction_never_raises_on_garbage_replies(bank, garbage):
    turns_before = turn_memory_count(bank)
    llm = ScriptedLLM([garbage] * 3)
    report = run_extraction(bank.store, llm, bank.embedder, tz=UTC)

    assert report.done + report.failed == 1
    [row] = window_rows(bank)
    assert row.status in ("done", "failed")
    if row.status == "failed":
        assert row.error
    assert turn_memory_count(bank) == turns_before


def test_progress_reports_each_window(bank):
    seen = []
    run_extraction(bank.store, ScriptedLLM([facts_for_window] * 3), None, tz=UTC, window_size=4,
                   overlap=1, progress=seen.append)
    assert [(w.index, w.total, w.status, w.memories_new) for w in seen] == [
        (1, 3, "done", 1), (2, 3, "done", 1), (3, 3, "done", 1)]


def test_extraction_of_one_conversation_leaves_the_others_alone(tmp_path, hashing_embedder):
    with Memory.open(tmp_path / "b.db", embedder=hashing_embedder) as memory:
        ingest_conversations(memory.store, [conversation(name="a"), conversation(name="b")],
                             embedder=memory.embedder, tz=UTC)
        cid = memory.store.conversation_id("b")
        report = run_extraction(memory.store, ScriptedLLM([facts_for_window]), None, tz=UTC,
                                conversation_id=cid)
        assert report.windows_total == 1
        assert {w.conversation_id for w in windows_of(memory.store)} == {cid}
        with pytest.raises(ValueError, match="no conversation"):
            run_extraction(memory.store, ScriptedLLM([]), None, tz=UTC, conversation_id=999)


def test_an_embedder_other_than_the_banks_is_refused_before_any_call(bank):
    from ramem_local.store import StoreError
    from ramem_local.testing import HashingEmbedder

    llm = ScriptedLLM([])
    with pytest.raises(StoreError, match="vectors come from"):
        run_extraction(bank.store, llm, HashingEmbedder(dimension=16), tz=UTC)
    assert llm.calls == []


def test_search_can_leave_turn_memories_out_once_extracted_ones_exist(bank):
    def reply(messages, schema, max_tokens):
        # Drawn from two turns, so not a twin of either: both tiers can be listed.
        return {"entries": [entry("Melanie ran a charity race for mental health.",
                                  "D2:2", "D2:3")]}

    run_extraction(bank.store, ScriptedLLM([reply]), bank.embedder, tz=UTC)
    everything = bank.search("charity race", k=5)
    extracted_only = bank.search("charity race", k=5, exclude_turns=True)
    assert {c.memory.kind for c in everything.results} == {"turn", "extracted"}
    assert [c.memory.kind for c in extracted_only.results] == ["extracted"]
    assert extracted_only.results[0].memory.source_turns == ["D2:2", "D2:3"]


def test_a_window_of_copies_of_its_turns_keeps_none_and_fails(bank):
    """What Qwen2.5-Coder-0.5B writes: the window's turns again, names in front. The turns
    are memories already; the copies would only crowd them out of the top K."""
    reply = {"entries": [entry("Caroline: I am researching adoption agencies now.", "D2:1"),
                         entry("Melanie: Lovely. I went to an LGBTQ support group yesterday, it "
                               "was so powerful.", "D1:3")]}
    report = run_extraction(bank.store, ScriptedLLM([reply, reply]), bank.embedder, tz=UTC)
    assert (report.done, report.failed, report.memories_new) == (0, 1, 0)
    [row] = window_rows(bank)
    assert row.error.startswith("no valid entry (4 rejected; first: repeats turn D2:1 word for")
    assert extracted(bank) == []


COPIES = {"entries": [entry("Caroline: I am researching adoption agencies now.", "D2:1")]}
RESTATED = {"entries": [entry("Caroline is researching adoption agencies.", "D2:1")]}


def test_a_window_whose_entries_are_all_refused_is_asked_again_with_the_reasons(bank):
    llm = ScriptedLLM([COPIES, RESTATED])
    report = run_extraction(bank.store, llm, bank.embedder, tz=UTC)
    [window] = report.windows
    assert (window.status, window.repaired, window.llm_calls) == ("done", True, 2)
    assert (window.entries, window.entries_rejected, window.memories_new) == (2, 1, 1)
    assert [m.content for m in extracted(bank)] == ["Caroline is researching adoption agencies."]
    first, second = (call["messages"] for call in llm.calls)
    assert second[:len(first)] == first  # the same excerpt: the prompt prefix is reused
    reply, request = second[len(first):]
    assert (reply["role"], json.loads(reply["content"])) == ("assistant", COPIES)
    assert request["role"] == "user"
    assert ("- repeats turn D2:1 word for word (said by Caroline): 'Caroline: I am researching"
            in request["content"])
    assert window_line(window).startswith("  window 1/1 of chat: done (after a second request")


def test_a_window_whose_second_reply_is_empty_stays_failed_for_a_later_retry(bank):
    report = run_extraction(bank.store, ScriptedLLM([COPIES, {"entries": []}]), bank.embedder,
                            tz=UTC)
    assert (report.failed, report.memories_new) == (1, 0)
    assert window_rows(bank)[0].error.endswith("; asked again: an empty reply")


def test_a_window_with_one_entry_kept_is_not_asked_again(bank):
    mixed = {"entries": [*COPIES["entries"], *RESTATED["entries"]]}
    report = run_extraction(bank.store, ScriptedLLM([mixed]), bank.embedder, tz=UTC)
    [window] = report.windows
    assert (window.status, window.repaired, window.llm_calls) == ("done", False, 1)
    assert (window.entries_rejected, window.memories_new) == (1, 1)


def copy_of_the_first_turn_shown(messages, schema, max_tokens):
    line = next(line for line in messages[-1]["content"].splitlines() if line.startswith("["))
    return {"entries": [entry(line.split(": ", 1)[1], line[1:line.index("]")])]}


def test_a_split_window_is_asked_again_about_the_whole_window(bank):
    llm = ScriptedLLM([truncated(), copy_of_the_first_turn_shown, copy_of_the_first_turn_shown,
                       RESTATED])
    report = run_extraction(bank.store, llm, bank.embedder, tz=UTC)
    [window] = report.windows
    assert (window.status, window.split, window.repaired, window.llm_calls) == (
        "done", True, True, 4)
    assert (window.entries, window.entries_rejected) == (3, 2)  # each half copied a turn
    assert [m.content for m in extracted(bank)] == ["Caroline is researching adoption agencies."]
    excerpt = llm.calls[-1]["messages"][-3]["content"]  # before the reply and the request
    assert sum(line.startswith("[") for line in excerpt.splitlines()) == window.turns


def test_the_progress_line_says_when_a_reply_was_cut_short(bank):
    cut = _cut_after(entry("Melanie ran a charity race for mental health.", "D2:2"))
    report = run_extraction(bank.store, ScriptedLLM([truncated(), facts_for_window, cut]),
                            bank.embedder, tz=UTC)
    [window] = report.windows
    assert window.status == "done"
    assert window_line(window).startswith(
        "  window 1/1 of chat: done (a reply was cut short: the entries it finished are kept)")


def test_the_progress_line_of_a_whole_reply_says_nothing_of_cuts(bank):
    report = run_extraction(bank.store, ScriptedLLM([facts_for_window]), bank.embedder, tz=UTC)
    assert window_line(report.windows[0]) == "  window 1/1 of chat: done, 1 new memories"
