"""The question path's retrieval: guard, context list, proximity tiers, Dedup_first, modes."""

from __future__ import annotations

import json
import random
from datetime import datetime, timezone

import pytest

from ramem_local import Memory
from ramem_local.retrieve import (
    RetrievalSettings,
    centred_query,
    dedup_first,
    question_vector,
    retrieve,
)
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
    content_rows = memory.store.content_candidates(
        query_vector=centred_query(
            question_vector(memory.store, memory.embedder, frame.need, settings, None),
            memory.store.mean_vector()),
        fts_query=fts_match_query(frame.need),
        depth=settings.depth, limit=settings.k)
    assert [c.memory.id for c in baseline.results] == [r.id for r in content_rows]
    assert all(c.list_name == "content" for c in baseline.results)


def test_range_without_compatible_memory_falls_back_to_content(memory):
    response = memory.search("What cake did Ana bake in 2019?", k=3)
    assert response.trace.frame.guard == "filter"
    assert response.results, "the content list must still answer"
    assert all(c.list_name == "content" for c in response.results)
    notes = response.trace.notes
    assert any("no memory inside the session-overlap filter" in note for note in notes)


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
            assert span.overlaps(wide)  # the filter: the session span, until the next session
            # proximity: when it was said, the session's first day at most
            said_day = TimeRange(span.start, min(span.end, span.start + DAY))
            said_inside = raw.start <= c.memory.session_start < raw.end
            if said_inside:
                assert c.tier == 0
            elif said_day.overlaps(raw):
                assert c.tier == 1
            else:
                assert c.tier == 2 + said_day.gap_seconds(raw) // DAY
        assert [c.tier for c in context] == sorted(c.tier for c in context)
        content_ids = [c.memory.id for c in response.results if c.list_name == "content"]
        assert not set(content_ids) & {c.memory.id for c in context}


def test_proximity_is_when_a_memory_was_said_not_how_long_its_session_lasted(
        tmp_path, hashing_embedder):
    # Sessions weeks apart, as in a chat: the April session's span runs until 27 May and
    # overlaps 23 May, but what was said on 3 April is seven weeks from it; the session of
    # 27 May tells of it four days later.
    turns = [
        ("s1", "2023-04-03T10:00:00", "Gina", "I applied for a fashion internship, wish me luck."),
        ("s1", "2023-04-03T10:01:00", "Jon", "Good luck with the internship, Gina!"),
        ("s2", "2023-05-27T10:00:00", "Gina", "I got accepted for the fashion internship!"),
        ("s2", "2023-05-27T10:01:00", "Jon", "Congratulations, Gina!"),
    ]
    (tmp_path / "c.jsonl").write_text("\n".join(
        json.dumps({"conversation": "c", "session": s, "timestamp": ts, "speaker": sp,
                    "text": t}) for s, ts, sp, t in turns))
    with Memory.open(tmp_path / "b.db", embedder=hashing_embedder) as bank:
        bank.ingest(tmp_path / "c.jsonl")
        response = bank.search("What internship did Gina get accepted for on May 23, 2023?",
                               k=4)
        by_text = {c.memory.content: c for c in response.results}
        accepted = by_text["Gina: I got accepted for the fashion internship!"]
        applied = by_text["Gina: I applied for a fashion internship, wish me luck."]
        assert (accepted.list_name, accepted.tier) == ("context", 2 + 3)
        assert (applied.list_name, applied.tier) == ("context", 2 + 48)
        assert response.results[0] is accepted


@pytest.mark.parametrize(("said_at", "text", "inside"), [
    # a plan names a time nothing happened in yet: placed by when it was said (December)
    ("2024-12-10 20:00", "Maybe I'll go see the Paper Owls in the spring.", False),
    # a report of that time happened in it, though told weeks later
    ("2025-07-02 20:00", "In the spring I saw the Paper Owls live at the park stage.", True),
])
def test_a_plans_time_is_not_when_something_happened(tmp_path, hashing_embedder, said_at,
                                                     text, inside):
    with Memory.open(tmp_path / "b.db", embedder=hashing_embedder) as bank:
        bank.add(text, at=said_at)
        bank.add("Saw the Velvet Tides live with Aisha.", at="2025-05-28 21:00")
        placed = bank.search("Who did I see play live between 26 May 2025 and 1 June 2025?",
                             k=4, as_of="2025-08-01")
        by_text = {c.memory.content: c for c in placed.results}
        said_apart = by_text[f"me: {text}"]
        spring = said_apart.memory.event_start
        assert spring is not None and spring <= placed.trace.frame.time_range.start
        assert said_apart.list_name == "context"
        assert (said_apart.tier == 0) is inside
        assert said_apart.tier == 0 or said_apart.tier > 30  # the gap to when it was said


def test_time_range_helpers():
    r = TimeRange(10 * DAY, 12 * DAY)
    assert r.widened(1) == TimeRange(9 * DAY, 13 * DAY)
    assert r.gap_seconds(TimeRange(15 * DAY, 16 * DAY)) == 3 * DAY
    assert r.gap_seconds(TimeRange(11 * DAY, 16 * DAY)) == 0
    with pytest.raises(ValueError):
        TimeRange(5, 4)


# ---------------------------------------------------------------- filter first
def journal_lines(days: int, start: datetime) -> list[str]:
    """A journal where the same kinds of day recur: every day looks like many others."""
    kinds = ["hiked the ridge trail with Ana", "cooked pasta with Ben", "read a novel in the park",
             "fixed the kitchen shelf", "watched a film with Ana"]
    lines = []
    for day in range(days):
        stamp = datetime.fromtimestamp(start.timestamp() + day * DAY + 9 * 3600, tz=timezone.utc)
        lines.append(json.dumps({"conversation": "journal", "session": str(day),
                                 "timestamp": stamp.isoformat(), "speaker": "me",
                                 "text": f"Today I {kinds[day % len(kinds)]} (day {day})."}))
    return lines


@pytest.fixture(params=["with embedder", "BM25 only"])
def journal(request, tmp_path, hashing_embedder):
    (tmp_path / "journal.jsonl").write_text("\n".join(
        journal_lines(400, datetime(2023, 1, 1, tzinfo=timezone.utc))))
    embedder = hashing_embedder if request.param == "with embedder" else None
    bank = Memory.open(tmp_path / "journal.db", embedder=embedder)
    bank.ingest(tmp_path / "journal.jsonl")
    yield bank
    bank.close()


def test_filter_first_reaches_the_episode_outside_the_global_top_k(journal):
    # 80 hikes look alike; only the one of 2023-06-10 (day 160) is inside the range.
    response = journal.search("Where did I hike on 10 June 2023?", k=3, buffer_days=0)
    top = response.results[0]
    assert "(day 160)" in top.memory.content
    assert (top.list_name, top.tier) == ("context", 0)
    baseline = journal.search("Where did I hike on 10 June 2023?", k=3, mode="baseline")
    assert "(day 160)" not in " ".join(contents(baseline)), "the setup must defeat the baseline"


def test_time_only_question_lists_the_range_in_time_order(journal):
    response = journal.search("What did I do in the week of 5 June 2023?", k=10, buffer_days=2)
    frame = response.trace.frame
    assert frame.time_only
    assert any("time-only" in note for note in response.trace.notes)
    week = [c for c in response.results if c.tier == 0]
    assert [c.memory.content.split("(day ")[1] for c in week] == [
        f"{day})." for day in range(155, 162)]
    assert all(c.list_name == "context" for c in response.results[:7])


def test_yesterday_without_content_words_finds_yesterday(journal):
    response = journal.search("What did I do yesterday?", k=3, as_of="2023-03-02 12:00")
    assert "(day 59)" in response.results[0].memory.content
    assert response.results[0].tier == 0


@pytest.mark.parametrize(
    ("question", "time_only"),
    [
        ("What did I do yesterday?", True),
        ("What happened last week?", True),
        ("What did I write on 3 May 2024?", True),
        ("what was going on 2 days ago", True),
        ("Where did I go hiking yesterday?", False),
        ("What did Caroline do yesterday?", False),
        ("What did we talk about regarding the move last weekend?", False),
    ],
)
def test_time_only_means_no_content_word_outside_the_cue(memory, question, time_only):
    frame = memory.frame(question, as_of="2024-06-01")
    assert frame.guard == "filter"
    assert frame.time_only is time_only


@pytest.mark.parametrize(
    ("question", "need"),
    [
        ("Where did I go hiking on 9 February 2023?", "Where did I go hiking?"),
        ("What did I cook yesterday?", "What did I cook?"),
        ("What did Mel paint in the summer of 2022?", "What did Mel paint?"),
        ("In May 2023, where did Jon travel?", "where did Jon travel?"),
        ("What did I do during the week of May 8, 2023, at the lake?",
         "What did I do at the lake?"),
        ("What was I reading as of 3 May 2024?", "What was I reading?"),
    ],
)
def test_need_drops_the_cue_and_the_preposition_that_introduces_it(memory, question, need):
    assert memory.frame(question, as_of="2024-06-01").need == need


def test_question_without_cue_is_never_time_only(memory):
    assert memory.frame("What did I do?").time_only is False


def test_a_turn_is_found_through_the_words_of_its_neighbours(tmp_path):
    rows = [
        ("1", "John", "We put together a tournament for our favorite game, CS:GO."),
        ("1", "Maria", "Wow, organizing that tournament for charity is so generous!"),
        ("1", "John", "Thanks, the weather was nice too."),
    ] + [("2", "Ana", f"Filler line number {i} about gardens and dinner.") for i in range(10)]
    path = tmp_path / "chat.jsonl"
    path.write_text("\n".join(
        json.dumps({"session": s, "timestamp": f"2022-05-{8 + int(s):02d}T10:{i:02d}:00",
                    "speaker": sp, "text": t, "conversation": "c"})
        for i, (s, sp, t) in enumerate(rows)))
    question = "What was organized for charity?"
    with Memory.open(tmp_path / "b.db") as bank:
        bank.ingest(path)
        found = contents(bank.search(question, k=3))
        assert "organizing" in found[0], "its own words weigh more than a neighbour's"
        assert any("CS:GO" in text for text in found), "found through its neighbour's words"
        alone = contents(bank.search(question, settings=RetrievalSettings(k=3,
                                                                         neighbour_weight=0)))
        assert not any("CS:GO" in text for text in alone)


def test_a_new_entry_becomes_the_neighbour_of_the_previous_one(tmp_path):
    with Memory.open(tmp_path / "j.db") as bank:
        first = bank.add("Planted tomatoes in the garden.", at="2024-05-04 09:00")
        assert bank.search("basil seedlings", k=3).results == []
        bank.add("Also sowed basil seedlings next to them.", at="2024-05-04 10:00")
        hits = [c.memory.id for c in bank.search("basil seedlings", k=3).results]
        assert first in hits[1:], "the earlier entry now carries its neighbour's words"


def test_recently_reorders_the_relevant_memories_without_filtering(tmp_path):
    rows = [
        ("2024-01-10T09:00:00", "Baked sourdough bread with rye flour."),
        ("2024-03-02T09:00:00", "Painted the fence blue."),
        ("2024-05-20T09:00:00", "Baked sourdough bread with spelt this time."),
        ("2024-05-28T09:00:00", "Went swimming at the lake."),
    ]
    path = tmp_path / "j.jsonl"
    path.write_text("\n".join(
        json.dumps({"session": str(i), "timestamp": ts, "speaker": "me", "text": t,
                    "conversation": "journal"}) for i, (ts, t) in enumerate(rows)))
    question = "What bread did I bake recently?"
    with Memory.open(tmp_path / "b.db") as bank:
        bank.ingest(path)
        assert bank.frame(question).guard == "no_filter", "off by default (README)"

        def recent(as_of: str, mode: str = "ramem"):
            frame = bank.frame(question, as_of=as_of, recent_days=30)
            return bank.search(question, k=4, frame=frame, mode=mode)

        june = recent("2024-06-01")
        assert june.trace.frame.guard == "prefer_recent"
        assert "spelt" in june.results[0].memory.content
        assert not any("swimming" in text for text in contents(june)), (
            "a preference, not a filter: a recent memory that is not relevant stays out")
        assert "rye" in recent("2024-02-01").results[0].memory.content
        baseline = recent("2024-06-01", mode="baseline")
        assert {c.memory.id for c in baseline.results} == {c.memory.id for c in june.results}


def test_time_only_lists_what_happened_by_its_event_day(tmp_path):
    rows = [
        ("2024-05-04T20:00:00", "On Thursday I repaired the bike."),  # said Sat, about Thu
        ("2024-05-04T21:00:00", "Quiet evening with tea."),
        ("2024-05-05T09:00:00", "Yesterday I also planted beans."),  # said Sun, about Sat
    ]
    path = tmp_path / "j.jsonl"
    path.write_text("\n".join(
        json.dumps({"session": ts[:10], "timestamp": ts, "speaker": "me", "text": t,
                    "conversation": "journal"}) for ts, t in rows))
    with Memory.open(tmp_path / "b.db") as bank:
        bank.ingest(path)
        response = bank.search("What did I do on 4 May 2024?", k=3, buffer_days=0)
        assert response.trace.frame.time_only
        top_two = {c.memory.content for c in response.results[:2]}
        assert top_two == {"me: Quiet evening with tea.", "me: Yesterday I also planted beans."}
        assert "bike" in response.results[2].memory.content


def test_without_an_embedder_the_range_is_listed_even_when_bm25_matches_nothing(tmp_path):
    (tmp_path / "journal.jsonl").write_text("\n".join(
        journal_lines(400, datetime(2023, 1, 1, tzinfo=timezone.utc))))
    with Memory.open(tmp_path / "journal.db") as bank:
        bank.ingest(tmp_path / "journal.jsonl")
        # Day 161 (11 June 2023) "cooked pasta with Ben": no word in common with "meal".
        response = bank.search("Which meal did I prepare on 11 June 2023?", k=3, buffer_days=0)
        top = response.results[0]
        assert "(day 161)" in top.memory.content
        assert (top.list_name, top.tier) == ("context", 0)
        assert any("follow the BM25 hits" in note for note in response.trace.notes)


@pytest.mark.parametrize(("text", "is_report"), [
    ("Started The Copper Key on the train. Have you read it?", True),  # tells, then asks back
    ("Finished the race! Did you watch it?", True),
    ("Started The Copper Key on the train.", True),
    ("Can you recommend a book like The Copper Key?", False),
    ("Can you recommend a book? Something like The Copper Key?", False),  # questions only
    ("Is 3.5 stars fair for The Copper Key?", False),  # a point inside a word ends nothing
])
def test_a_memory_is_a_report_unless_all_it_says_is_asked(tmp_path, hashing_embedder, text,
                                                           is_report):
    """Occurrences and reports-first leave out the questions ("Can you recommend ...?" is no
    occurrence of reading), not a turn that tells something and asks back, as people do in
    chat: "... called Cyberpunk 2077. Have you played anything good lately?" (LoCoMo)."""
    from ramem_local.retrieve import report_times

    with Memory.open(tmp_path / "bank.db", embedder=hashing_embedder) as memory:
        memory_id = memory.add(text, at="2024-03-01 10:00")
        frame = memory.frame("What did I read in March 2024?", as_of="2024-04-01")
        found = report_times(memory.store, [memory_id], frame, RetrievalSettings(), None)
        assert (memory_id in found) is is_report


# A journal with many visits, two films and a day holding a visit, a film and a phone call.
VISITS_AND_A_DAY = [
    ("2023-01-21 11:00", "Took the train to visit Aunt Rosa; we looked through old photos."),
    ("2023-02-04 11:00", "Drove out to see Uncle Karl in Bergen; we talked for hours."),
    ("2023-02-18 11:00", "Visited my old friend Tomas in Lyon; we walked along the canal."),
    ("2023-03-04 18:00", "Drove out to see my sister Lena in Ghent; we looked through old "
                         "photos."),
    ("2023-03-11 20:00", "Watched Night Harbor with Chloe at the cinema; the ending made no "
                         "sense."),
    ("2023-03-19 11:00", "Took the train to visit Grandpa Theo; we talked for hours."),
    ("2023-04-02 15:00", "Visited Aunt Rosa in Graz; we cooked together."),
    ("2023-04-08 20:00", "Saw Blue Meridian at home with Leo; the soundtrack was great."),
    ("2023-04-15 19:00", "Had a long meeting with Karin about the budget review; nothing much "
                         "else happened."),
    ("2023-04-23 12:00", "Drove out to see cousin Mirela in Porto; the house felt smaller than "
                         "I remembered."),
    ("2023-05-07 10:00", "Took the train to visit my parents; we walked along the canal."),
    ("2023-05-27 10:00", "Finally watched The Ferryman; the cinema was almost empty."),
    ("2023-05-27 18:00", "I drove out to see my godson Felix in Graz; the house felt smaller "
                         "than I remembered."),
    ("2023-05-27 21:00", "Felt restless and phoned Hugo to talk; David sent a postcard."),
]


def test_inside_a_range_the_bank_shows_what_the_question_looks_like(tmp_path, minilm_dir):
    """Range feedback (on by default): inside the day, "Who did I visit" is ranked by the
    question plus what the bank's reports closest to it share (its visits), so the visit comes
    first; by the question alone MiniLM puts the phone call first."""
    with Memory.open(tmp_path / "bank.db", embedder=minilm_dir, country="US") as memory:
        for at, text in VISITS_AND_A_DAY:
            memory.add(text, at=at)
        question = "Who did I visit on 27 May 2023?"
        fed = memory.search(question, as_of="2023-06-01")  # on by default
        alone = memory.search(question, as_of="2023-06-01",
                              settings=RetrievalSettings(range_feedback=False))
    assert "godson Felix" in contents(fed)[0]
    assert "phoned Hugo" in contents(alone)[0]
    assert any("what the bank's 5 reports closest to it share" in note
               for note in fed.trace.notes)
    assert not any("closest to it share" in note for note in alone.trace.notes)
