"""The question path's retrieval: guard, context list, proximity tiers, Dedup_first, modes."""

from __future__ import annotations

import json
import random
from datetime import datetime, timezone

import pytest

from ramem_local import Memory
from ramem_local.retrieve import RetrievalSettings, dedup_first, retrieve
from ramem_local.text import fts_match_query
from ramem_local.types import DAY, Candidate, MemoryRecord, TimeRange

# Two episodes about the same people and topic, a month apart: the context-collapse setup.
TURNS = [
    ("s1", "2023-03-06T10:00:00", "Ana", "I baked a lemon cake for the school fair."),
    ("s1", "2023-03-06T10:01:00", "Ben", "Nice! The school fair sounds fun."),
    ("s2", "2023-04-10T10:00:00", "Ana", "I baked a chocolate cake for my sister's birthday."),
    ("s2", "2023-04-10T10:01:00", "Ben", "Chocolate cake is the best for birthdays."),
    ("s3", "2023-05-15T10:00:00", "Ana", "I started pottery classes on Tuesdays."),
    ("s3", "2023-05-15T10:01:00", "Ben", "Pottery sounds relaxing."),
]


@pytest.fixture
def memory(tmp_path, hashing_embedder):
    path = tmp_path / "chat.jsonl"
    path.write_text("\n".join(
        json.dumps({"conversation": "c", "session": s, "timestamp": ts, "speaker": sp, "text": t})
        for s, ts, sp, t in TURNS))
    bank = Memory.open(tmp_path / "bank.db", embedder=hashing_embedder)
    bank.ingest(path)
    yield bank
    bank.close()


def contents(response) -> list[str]:
    return [c.memory.content for c in response.results]


def test_question_without_cue_is_never_filtered(memory):
    response = memory.search("What cake did Ana bake?", k=4)
    assert response.trace.frame.guard == "no_filter"
    assert response.trace.frame.time_range is None
    assert all(c.list_name == "content" for c in response.results)


def test_grounded_range_puts_the_right_episode_first(memory):
    for month, cake in (("March", "lemon"), ("April", "chocolate")):
        ramem = memory.search(f"What cake did Ana bake in {month} 2023?", k=4)
        assert ramem.trace.frame.guard == "filter"
        assert cake in contents(ramem)[0]
        assert ramem.results[0].list_name == "context"
        assert ramem.results[0].tier == 0


def test_baseline_mode_equals_the_content_list(memory):
    frame = memory.frame("What cake did Ana bake in March 2023?")
    settings = RetrievalSettings(k=6, mode="baseline")
    baseline = retrieve(memory.store, memory.embedder, frame, settings)
    content_rows = memory.store.fused_candidates(
        query_vector=memory.embedder.embed_query(frame.need),
        fts_query=fts_match_query(frame.need),
        depth=settings.depth, limit=settings.k)
    assert [c.memory.id for c in baseline.results] == [r.id for r in content_rows]
    assert all(c.list_name == "content" for c in baseline.results)


def test_range_without_compatible_memory_falls_back_to_content(memory):
    response = memory.search("What cake did Ana bake in 2019?", k=3)
    assert response.trace.frame.guard == "filter"
    assert response.results, "the content list must still answer"
    assert all(c.list_name == "content" for c in response.results)
    assert any("no compatible memory" in note for note in response.trace.notes)


def test_event_time_inside_a_turn_makes_it_compatible(tmp_path, hashing_embedder):
    path = tmp_path / "chat.jsonl"
    rows = [
        ("s1", "2023-05-25T09:00:00", "Ana", "I ran a charity race last Saturday."),
        ("s2", "2023-06-30T09:00:00", "Ana", "I ran a charity race this morning."),
    ]
    path.write_text("\n".join(
        json.dumps({"session": s, "timestamp": ts, "speaker": sp, "text": t, "conversation": "c"})
        for s, ts, sp, t in rows))
    with Memory.open(tmp_path / "b.db", embedder=hashing_embedder) as bank:
        bank.ingest(path)
        race = bank.list()[0]
        saturday = datetime(2023, 5, 20, tzinfo=timezone.utc).timestamp()
        assert race.event_start == saturday and race.event_end == saturday + DAY
        response = bank.search("Did Ana run a race on 20 May 2023?", k=2, buffer_days=0)
        assert response.results[0].memory.id == race.id
        assert response.results[0].tier == 0


def candidate(memory_id: int, list_name: str) -> Candidate:
    record = MemoryRecord(content=str(memory_id), kind="turn", conversation="c",
                          session_start=0, session_end=DAY, id=memory_id)
    return Candidate(memory=record, score=0.0, list_name=list_name)


def test_dedup_first_keeps_the_first_occurrence():
    context = [candidate(3, "context"), candidate(1, "context")]
    content = [candidate(1, "content"), candidate(2, "content"), candidate(3, "content")]
    merged = dedup_first(context, content)
    assert [(c.memory.id, c.list_name) for c in merged] == [
        (3, "context"), (1, "context"), (2, "content")]


@pytest.mark.parametrize("seed", range(4))
def test_proximity_tiers_on_a_random_bank(tmp_path, hashing_embedder, seed):
    rng = random.Random(seed)
    words = ["garden", "trip", "cake", "concert", "museum", "swim"]
    lines = []
    for day in sorted(rng.sample(range(0, 200), 25)):
        ts = datetime.fromtimestamp(1672531200 + day * DAY, tz=timezone.utc).isoformat()
        lines.append(json.dumps({"session": str(day), "timestamp": ts, "speaker": "Ana",
                                 "text": " ".join(rng.choices(words, k=4)),
                                 "conversation": "c"}))
    (tmp_path / "c.jsonl").write_text("\n".join(lines))
    with Memory.open(tmp_path / "b.db", embedder=hashing_embedder) as bank:
        bank.ingest(tmp_path / "c.jsonl", event_times=False)
        response = bank.search("garden trip in March 2023", k=25, buffer_days=5)
        frame = response.trace.frame
        raw, wide = frame.time_range, frame.widened_range
        context = [c for c in response.results if c.list_name == "context"]
        for c in context:
            span = c.memory.session_range
            assert span.overlaps(wide)
            said_inside = raw.start <= c.memory.session_start < raw.end
            if said_inside:
                assert c.tier == 0
            elif span.overlaps(raw):
                assert c.tier == 1
            else:
                assert c.tier == 2 + span.gap_seconds(raw) // DAY
        assert [c.tier for c in context] == sorted(c.tier for c in context)
        content_ids = [c.memory.id for c in response.results if c.list_name == "content"]
        assert not set(content_ids) & {c.memory.id for c in context}


def test_time_range_helpers():
    r = TimeRange(10 * DAY, 12 * DAY)
    assert r.widened(1) == TimeRange(9 * DAY, 13 * DAY)
    assert r.gap_seconds(TimeRange(15 * DAY, 16 * DAY)) == 3 * DAY
    assert r.gap_seconds(TimeRange(11 * DAY, 16 * DAY)) == 0
    with pytest.raises(ValueError):
        TimeRange(5, 4)
