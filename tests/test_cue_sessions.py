"""Relative time words read against the sessions that said them
(``retrieve.sessions_saying_the_cue``).

A conversation bank's reference is a guess, its last session: "last weekend" in a question may
be the last weekend of any session that said those words. A session that said them of the
question's own range ("last year", said in the year after) is an episode of it wherever the
reference comes from.
"""

from __future__ import annotations

import json
from datetime import datetime, timezone

import pytest

from ramem_local import Memory
from ramem_local.eval.tuning import SearchTuning, tuned_search
from ramem_local.types import DAY, TimeRange

# Sessions months apart. The April session tells of "last weekend" (1-2 April) and of a road
# trip "last year" (2022); the last session, 13 August, is what a guessed reference reads
# "last weekend" against (12-13 August), and holds nothing but talk about volunteering now.
TURNS = [
    ("s1", "2023-04-07T10:00:00", "John",
     "Last weekend I volunteered at a career fair at a local school."),
    ("s1", "2023-04-07T10:01:00", "Maria", "That sounds rewarding, John!"),
    ("s1", "2023-04-07T10:02:00", "John",
     "This photo reminds me of a road trip we took last year."),
    ("s1", "2023-04-07T10:03:00", "Maria", "Where did you go on that road trip?"),
    ("s1", "2023-04-07T10:04:00", "John", "We explored the coast of the Pacific Northwest."),
    ("s2", "2023-06-02T10:00:00", "Maria", "I started a pottery class on Tuesdays."),
    ("s2", "2023-06-02T10:01:00", "John", "Pottery sounds relaxing, Maria."),
    ("s3", "2023-08-13T10:00:00", "John",
     "Since we last chatted, I have been volunteering as a mentor at a school."),
    ("s3", "2023-08-13T10:01:00", "Maria", "Volunteering suits you, John!"),
    ("s3", "2023-08-13T10:02:00", "John", "Thanks, Maria, volunteering keeps me going."),
    ("s3", "2023-08-13T10:03:00", "Maria", "Take care, John!"),
]
CAREER_FAIR = "career fair"
PACIFIC = "Pacific Northwest"
APRIL_SESSION = int(datetime(2023, 4, 7, 10, tzinfo=timezone.utc).timestamp())


@pytest.fixture
def chat(tmp_path, hashing_embedder):
    path = tmp_path / "chat.jsonl"
    path.write_text("\n".join(
        json.dumps({"conversation": "c", "session": s, "timestamp": ts, "speaker": sp,
                    "text": t}) for s, ts, sp, t in TURNS))
    bank = Memory.open(tmp_path / "bank.db", embedder=hashing_embedder)
    bank.ingest(path)
    yield bank
    bank.close()


def search(memory: Memory, question: str, *, cue_sessions: bool = True, k: int = 3,
           as_of: str | None = None):
    return tuned_search(memory, question, k=k, mode="ramem", as_of=as_of,
                        tuning=SearchTuning(cue_sessions=cue_sessions))


def texts(response) -> str:
    return " | ".join(c.memory.content for c in response.results)


def test_the_session_that_said_last_weekend_is_an_episode_of_the_question(chat):
    question = "What event did John volunteer at last weekend?"
    response = search(chat, question)
    assert response.trace.frame.time_range is not None
    assert CAREER_FAIR in response.results[0].memory.content
    assert response.results[0].list_name == "context"
    assert any("'last weekend' was said in 1 session(s)" in note and "2023-04-07" in note
               for note in response.trace.notes)
    without = search(chat, question, cue_sessions=False)
    assert CAREER_FAIR not in texts(without), "the last session's three memories fill K"


def test_a_session_that_said_the_same_year_is_an_episode_of_it(chat):
    # "last year" said in April 2023 is 2022, as the question's "last year" read in August:
    # no session lies in 2022, a year is too wide an event time to store, and only the
    # session that spoke of 2022 holds the answer.
    response = search(chat, "Where did John explore on a road trip last year?", k=5)
    context = [c for c in response.results if c.list_name == "context"]
    assert context and all(c.memory.session_start == APRIL_SESSION for c in context)
    assert PACIFIC in texts(response)


@pytest.mark.parametrize("question", [
    "What happened last weekend?",  # time only: its range listed in time order
    "What event did John volunteer at on the weekend of 12 August 2023?",  # no words of April
])
def test_no_other_session_for(chat, question):
    response = search(chat, question)
    assert not any("was said in" in note for note in response.trace.notes)
    assert CAREER_FAIR not in response.results[0].memory.content


def test_a_given_point_in_time_is_no_guess(chat):
    # As of 14 August "last weekend" is 12-13 August, whatever April said.
    response = search(chat, "What event did John volunteer at last weekend?",
                      as_of="2023-08-14 12:00")
    assert not any("was said in" in note for note in response.trace.notes)
    assert CAREER_FAIR not in texts(response)


def test_a_journal_reads_last_weekend_against_now(tmp_path, hashing_embedder):
    bank = Memory.open(tmp_path / "journal.db", embedder=hashing_embedder)
    with bank:
        bank.add("Last weekend I volunteered at a career fair.", at="2023-04-07 10:00")
        # (a journal day's session lasts until the next entry's day: without this one, the
        # entry above would reach into every range until the next)
        bank.add("Quiet day at home.", at="2023-04-08 10:00")
        now = datetime.now(timezone.utc)
        for days in (1, 2, 3):
            stamp = datetime.fromtimestamp(now.timestamp() - days * 86400, tz=timezone.utc)
            bank.add(f"Volunteered at the food bank again, shift {days}.",
                     at=stamp.strftime("%Y-%m-%d %H:%M"))
        response = search(bank, "Where did I volunteer last weekend?", k=5)
        assert response.trace.frame.guard == "filter"
        assert not any("was said in" in note for note in response.trace.notes)
        assert not [c for c in response.results
                    if c.list_name == "context" and CAREER_FAIR in c.memory.content]


def test_sessions_saying_finds_the_words_in_a_row_in_memories_own_text(chat):
    store = chat.store
    assert store.sessions_saying(["last", "weekend"]) == [APRIL_SESSION]
    assert store.sessions_saying(["LAST", "Weekend"]) == [APRIL_SESSION]
    assert store.sessions_saying(["weekend", "last"]) == []
    assert store.sessions_saying([]) == []
    # FTS5 syntax is text here: quotes and operators are dropped as punctuation or matched
    # as words, never read as a query.
    assert store.sessions_saying(['"last', 'weekend"']) == [APRIL_SESSION]
    assert store.sessions_saying(["last*", "NEAR", "weekend"]) == []
    assert store.sessions_saying(["last", "weekend"], written_by=APRIL_SESSION - 1) == []


def test_the_int8_scan_lets_the_sessions_through_as_sql_does(chat, hashing_embedder):
    # The scan draws the dense candidates before SQL filters them again: a session of
    # ``said_in`` must pass it, or its memories never reach a dense list over a large pool.
    store = chat.store
    august = TimeRange(APRIL_SESSION + 120 * DAY, APRIL_SESSION + 130 * DAY)
    query = hashing_embedder.embed_query("volunteer")
    by_session = {m.id: m.session_start for m in chat.list(limit=100)}
    plain = store.int8_matrix().nearest(query, 100, overlapping=august)
    widened = store.int8_matrix().nearest(query, 100, overlapping=august,
                                          said_in=[APRIL_SESSION])
    assert APRIL_SESSION not in {by_session[i] for i in plain}
    assert {by_session[i] for i in widened} == {by_session[i] for i in plain} | {APRIL_SESSION}
