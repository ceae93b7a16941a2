"""The LLM extraction tier with a scripted model: windows, prompt, schema, anchoring, the
split retry, failure accounting, idempotent re-runs and provenance merging.

The rule under test (issue): malformed or truncated JSON from a small model must never drop
data silently. A window either ends ``done`` with its memories, or ``failed`` with the reason;
its turns stay searchable as turn memories either way, and ``retry_failed`` tries again.
"""

from __future__ import annotations

from datetime import datetime, timezone

import pytest
from fakes import ScriptedLLM, truncated

from ramem_local.api import Memory
from ramem_local.ingest.extract import (
    PROMPT_VERSION,
    EntryRejected,
    anchor_entry,
    build_messages,
    dedup_key,
    extract_window,
    parse_event_day,
    turn_labels,
    window_schema,
)
from ramem_local.ingest.llm_pipeline import run_extraction
from ramem_local.ingest.pipeline import ingest_conversations
from ramem_local.ingest.windows import plan_new_windows, plan_windows, windows_of
from ramem_local.protocols import LLMResult
from ramem_local.schemas import unbounded, validate
from ramem_local.text import fts_match_query
from ramem_local.types import DAY, ParsedConversation, Session, Turn

UTC = timezone.utc


def ts(text: str) -> int:
    return int(datetime.fromisoformat(text).replace(tzinfo=UTC).timestamp())


S1 = ts("2023-05-08 13:56")  # a Monday
S2 = ts("2023-05-25 09:00")
S3 = ts("2023-06-09 18:00")

LINES = [  # (session, speaker, text)
    (1, "Caroline", "Hey Mel! Good to see you."),
    (1, "Melanie", "Hi Caroline! I painted a sunrise over the lake last weekend."),
    (1, "Caroline", "Lovely. I went to an LGBTQ support group yesterday, it was so powerful."),
    (1, "Melanie", "That sounds inspiring, I am proud of you."),
    (2, "Caroline", "I am researching adoption agencies now."),
    (2, "Melanie", "I ran a charity race for mental health last Saturday."),
    (2, "Caroline", "Wow, how far was it?"),
    (2, "Melanie", "Five kilometres, with my kids cheering."),
    (3, "Caroline", "I signed up for a pottery class in Boston."),
    (3, "Melanie", "My dog Luna learned to fetch the newspaper."),
]


def conversation(lines=LINES, *, ids: bool = True, name: str = "chat") -> ParsedConversation:
    starts = {1: S1, 2: S2, 3: S3}
    counters: dict[int, int] = {}
    turns = []
    for session, speaker, text in lines:
        counters[session] = counters.get(session, 0) + 1
        turns.append(Turn(
            speaker=speaker, text=text,
            timestamp=starts[session] + 60 * counters[session],
            session_ordinal=session,
            external_id=f"D{session}:{counters[session]}" if ids else None,
        ))
    used = sorted({s for s, _, _ in lines})
    return ParsedConversation(
        name=name,
        sessions=[Session(ordinal=s, start=starts[s]) for s in used],
        turns=turns,
        participants=["Caroline", "Melanie"],
    )


@pytest.fixture
def bank(tmp_path, hashing_embedder):
    memory = Memory.open(tmp_path / "b.db", embedder=hashing_embedder, timezone_name="UTC")
    ingest_conversations(memory.store, [conversation()], embedder=memory.embedder, tz=UTC)
    yield memory
    memory.close()


def entry(content: str, *turns: str, persons=(), event_date=None, **extra) -> dict:
    return {
        "content": content,
        "source_turns": list(turns),
        "persons": list(persons),
        "entities": extra.get("entities", []),
        "keywords": extra.get("keywords", []),
        "location": extra.get("location"),
        "topic": extra.get("topic", "life"),
        "event_date": event_date,
    }


def labels_of(schema: dict) -> list[str]:
    return schema["properties"]["entries"]["items"]["properties"]["source_turns"]["items"]["enum"]


def facts_for_window(messages, schema, max_tokens):
    """A well-behaved model: one entry per window, citing the window's first turn."""
    first = labels_of(schema)[0]
    return {"entries": [entry(f"Fact told in turn {first} of the chat.", first)]}


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


def stored_turns(memory: Memory) -> list[Turn]:
    cid = memory.store.conversation_id("chat")
    return memory.store.conversation_turns(cid)


# --------------------------------------------------------------------------- windows


@pytest.mark.parametrize(
    ("n_turns", "size", "overlap", "windows"),
    [
        (0, 40, 2, []),
        (1, 40, 2, [(0, 1)]),
        (40, 40, 2, [(0, 40)]),
        (41, 40, 2, [(0, 40), (38, 41)]),  # the last window may be short
        (100, 40, 2, [(0, 40), (38, 78), (76, 100)]),
        (5, 2, 0, [(0, 2), (2, 4), (4, 5)]),
        (7, 4, 1, [(0, 4), (3, 7)]),  # no window of repeated turns only
        (4, 2, 1, [(0, 2), (1, 3), (2, 4)]),
    ],
)
def test_plan_windows(n_turns, size, overlap, windows):
    assert plan_windows(n_turns, size, overlap) == windows


@pytest.mark.parametrize(("size", "overlap"), [(2, 2), (2, 3), (0, 0), (5, -1)])
def test_plan_windows_refuses_overlap_not_smaller_than_size(size, overlap):
    with pytest.raises(ValueError, match="greater than the overlap"):
        plan_windows(10, size, overlap)


def test_planning_is_incremental_new_turns_start_overlap_back():
    ids = list(range(100, 141))  # 41 turns
    first = plan_new_windows(ids, [], 40, 2)
    assert first == [(100, 139, 40), (138, 140, 3)]
    recorded = [(a, b) for a, b, _ in first]
    assert plan_new_windows(ids, recorded, 40, 2) == []  # idempotent
    grown = ids + list(range(141, 150))  # 9 turns added later
    assert plan_new_windows(grown, recorded, 40, 2) == [(139, 149, 11)]


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
        assert f"[t{turns[1].id}] 2023-05-08 13:58 Melanie:" in build_messages(turns, UTC)[1][
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


def test_each_call_uses_the_schema_of_its_own_window(bank):
    llm = ScriptedLLM([facts_for_window] * 10)
    run_extraction(bank.store, llm, None, tz=UTC, window_size=4, overlap=1)
    assert [labels_of(c["schema"]) for c in llm.calls] == [
        ["D1:1", "D1:2", "D1:3", "D1:4"],
        ["D1:4", "D2:1", "D2:2", "D2:3"],
        ["D2:3", "D2:4", "D3:1", "D3:2"],
    ]


# --------------------------------------------------------------------------- anchoring


@pytest.fixture
def window(bank):
    turns = stored_turns(bank)
    spans = bank.store.turn_session_spans(bank.store.conversation_id("chat"))
    return turn_labels(turns), spans


def anchor(window, item):
    labels, spans = window
    return anchor_entry(item, labels, spans, UTC, conversation="chat",
                        participants=["Caroline", "Melanie"])


def test_session_span_comes_from_the_cited_turns_across_sessions(window):
    record = anchor(window, entry("Caroline moved from support groups to adoption research.",
                                  "D2:1", "D1:3", event_date="2023-05-25 09:01"))
    assert record.kind == "extracted"
    assert (record.session_start, record.session_end) == (S1, S3)  # session 1 start → 2 end
    assert record.source_turns == ["D1:3", "D2:1"]


def test_last_session_span_ends_a_day_after_it_starts(window):
    record = anchor(window, entry("Melanie's dog Luna learned to fetch.", "D3:2"))
    assert (record.session_start, record.session_end) == (S3, S3 + DAY)


@pytest.mark.parametrize(
    ("event_date", "content", "day"),
    [
        ("2023-05-07", "Caroline went to an LGBTQ support group.", "2023-05-07"),
        ("7 May 2023", "Caroline went to an LGBTQ support group.", "2023-05-07"),
        ("yesterday", "Caroline went to an LGBTQ support group.", "2023-05-07"),  # said on 8 May
        (None, "Caroline went to an LGBTQ support group on 7 May 2023.", "2023-05-07"),
        (None, "Caroline went to an LGBTQ support group yesterday.", "2023-05-07"),
        ("not a date", "Caroline went to a group last Saturday.", "2023-05-06"),
        ("2023-02-30", "Caroline went to a group.", None),  # no such day: content has none
        (None, "Caroline went to an LGBTQ support group.", None),
    ],
)
def test_event_time_from_event_date_else_content(window, event_date, content, day):
    record = anchor(window, entry(content, "D1:3", event_date=event_date))
    if day is None:
        assert record.event_range is None
    else:
        assert (record.event_start, record.event_end) == (ts(day + " 00:00"),
                                                          ts(day + " 00:00") + DAY)


def test_event_date_wider_than_a_day_falls_back_to_a_grounded_range(window):
    record = anchor(window, entry("Caroline researched adoption agencies.", "D2:1",
                                  event_date="May 2023"))
    assert (record.event_start, record.event_end) == (ts("2023-05-01 00:00"),
                                                      ts("2023-06-01 00:00"))


def test_relative_event_date_is_read_against_the_cited_turn_not_now():
    assert str(parse_event_day("yesterday", ts("2023-05-25 09:00"), UTC)) == "2023-05-24"
    assert str(parse_event_day("last Saturday", ts("2023-05-25 09:00"), UTC)) == "2023-05-20"
    assert parse_event_day("May 2023", ts("2023-05-25 09:00"), UTC) is None  # a month
    assert parse_event_day("1066-10-14", ts("2023-05-25 09:00"), UTC) is None  # implausible


def test_persons_are_model_persons_and_cited_speakers_spelled_as_participants(window):
    record = anchor(window, entry("Melanie is proud of Caroline for going to the group.",
                                  "D1:4", persons=["caroline", "she", "I", "Dr. Patel"]))
    assert record.persons == ["Caroline", "Dr. Patel", "Melanie"]


def test_fields_are_cleaned(window):
    record = anchor(window, entry("  Caroline   signed up for a\npottery class.  ", "D3:1",
                                  location="null", keywords=["pottery", "Pottery", " "],
                                  entities=["Boston"], topic="  hobbies "))
    assert record.content == "Caroline signed up for a pottery class."
    assert (record.location, record.keywords, record.entities, record.topic) == (
        None, ["pottery"], ["Boston"], "hobbies")


@pytest.mark.parametrize(
    "item",
    [
        entry("ok", "D1:1"),  # nothing to remember
        entry("1.2.3", "D1:1"),  # what SmolLM2 writes when it has nothing to say
        entry("2023-05-18", "D1:1"),
        entry("Caroline went to a group.", "D7:7"),  # cites no turn of the window
        entry("Caroline went to a group."),  # cites nothing
    ],
)
def test_entries_that_cannot_be_anchored_are_rejected(window, item):
    with pytest.raises(EntryRejected):
        anchor(window, item)


# --------------------------------------------------------------------------- the driver


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
    vec = bank.store.db.execute(
        "SELECT session_start, session_end FROM memories_vec WHERE memory_id = ?",
        (adoption.id,)).fetchone()
    assert tuple(vec) == (S2, S3 + DAY)


def test_the_same_fact_twice_in_one_reply_is_one_memory(bank):
    reply = {"entries": [entry("Melanie ran a charity race.", "D2:2"),
                         entry("MELANIE ran a charity race.", "D2:4")]}
    report = run_extraction(bank.store, ScriptedLLM([reply]), bank.embedder, tz=UTC)
    assert report.memories_new == 1
    assert sorted(extracted(bank)[0].source_turns) == ["D2:2", "D2:4"]


def test_dedup_key_is_the_normalised_hash():
    assert dedup_key("Caroline  went\nhome.") == dedup_key("caroline went home.")
    assert dedup_key("a b").startswith("x:")


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
        [facts_for_window, truncated()],  # one good half is not enough: nothing partial
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


def test_invalid_json_fails_the_window_without_retry(bank):
    llm = ScriptedLLM(['{"entries": [{"content": "Caroline went'])
    report = run_extraction(bank.store, llm, bank.embedder, tz=UTC)
    assert (report.failed, report.llm_calls) == (1, 1)
    assert window_rows(bank)[0].error == "invalid_json"


def test_a_window_whose_entries_all_fail_validation_is_failed_with_the_reason(bank):
    reply = {"entries": [entry("ok", "D1:1"), entry("fine", "D1:2")]}
    report = run_extraction(bank.store, ScriptedLLM([reply]), bank.embedder, tz=UTC)
    assert (report.failed, report.entries_rejected) == (1, 2)
    assert window_rows(bank)[0].error.startswith(
        "no valid entry (2 rejected; first: content says nothing")


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
    from conftest import HashingEmbedder

    from ramem_local.store import StoreError

    llm = ScriptedLLM([])
    with pytest.raises(StoreError, match="vectors come from"):
        run_extraction(bank.store, llm, HashingEmbedder(dimension=16), tz=UTC)
    assert llm.calls == []


def test_search_can_leave_turn_memories_out_once_extracted_ones_exist(bank):
    def reply(messages, schema, max_tokens):
        return {"entries": [entry("Melanie ran a charity race for mental health.", "D2:2")]}

    run_extraction(bank.store, ScriptedLLM([reply]), bank.embedder, tz=UTC)
    everything = bank.search("charity race", k=5)
    extracted_only = bank.search("charity race", k=5, exclude_turns=True)
    assert {c.memory.kind for c in everything.results} == {"turn", "extracted"}
    assert [c.memory.kind for c in extracted_only.results] == ["extracted"]
    assert extracted_only.results[0].memory.source_turns == ["D2:2"]
