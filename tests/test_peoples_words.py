"""Questions in people's own words, on a journal written in people's own words (issue 48): an
order before or after another event, a trip named as a trip, an occasion named by its number
in words, the last time a thing was done while other entries only name it. A real MiniLM bank.
"""

from __future__ import annotations

from datetime import datetime, timezone

import pytest
from conftest import opened_journal, required_embedder_dir

from ramem_local import Memory

pytestmark = pytest.mark.real_model

JOURNAL = [
    ("2024-01-06 20:00", "Cinema with Jonah: Night Harbor"),
    ("2024-01-10 19:00", "Mum's 69th birthday dinner at the Italian place."),
    ("2024-01-14 18:00", "Mended the garden gate, took all afternoon"),
    ("2024-01-20 21:00", "we put on Glass Mountain after dinner"),
    ("2024-02-02 12:00", "Coffee with Lena at the market."),
    ("2024-02-03 20:00", "A colleague quoted Night Harbor all day"),
    ("2024-02-10 19:00", "Trip to Oslo is on! Flights booked"),
    ("2024-02-14 21:00", "Caught Small Hours at the Picturehouse with Tom."),
    ("2024-02-17 22:00", "Making a packing list for Oslo"),
    ("2024-02-20 10:00", "Reached Oslo on the night bus."),
    ("2024-02-20 19:00", "Ate fish soup by the harbour."),
    ("2024-02-21 15:00", "Spent the afternoon with Ingrid, a potter, in Oslo"),
    ("2024-02-22 13:00", "Lunch was smoked herring, amazing"),
    ("2024-02-23 18:00", "Back home from Oslo."),
    ("2024-03-05 21:00", "Finally sat through Red Signal"),
    ("2024-03-09 20:00", "Still dreaming of the food in Oslo."),
    ("2024-03-15 12:00", "Lena called but I missed it"),
    ("2025-01-10 19:00", "Mum's 70th birthday dinner at the Italian place."),
    ("2025-01-11 09:00", "Slept in, then walked Fox Valley end to end with Lena."),
    ("2025-01-11 20:00", "Saw The Ferryman tonight"),
    ("2025-01-25 18:00", "Bought a map of Fox Valley for the summer."),
    ("2025-02-01 12:00", "Lena texted about the weekend."),
]
CHAT = [
    ("2024-02-12 10:00", "me", "What should I pack for Oslo?"),
    ("2024-02-12 10:01", "assistant", "For Oslo in February, pack warm layers."),
    ("2024-02-13 09:00", "me", "Is Small Hours worth watching?"),
    ("2024-02-13 09:01", "assistant", "Small Hours is a quiet film; worth a try."),
    ("2024-03-20 10:00", "me", "Suggest films like Night Harbor"),
    ("2024-03-20 10:01", "assistant", "If you liked Night Harbor, try slow thrillers."),
]


def _day(text: str) -> int:
    return int(datetime.fromisoformat(text).replace(tzinfo=timezone.utc).timestamp())


@pytest.fixture(scope="module")
def journal(tmp_path_factory):
    yield from opened_journal(tmp_path_factory, "peoples-words", JOURNAL, CHAT)


def _contents(response) -> list[str]:
    return [c.memory.content for c in response.results]


def test_the_range_before_a_trip_ends_as_its_days_in_the_place_begin(journal):
    """The trip is its days in Oslo (20 to 23 February), not the plans before it; the order
    is the film's, not the trip's (its words leave the need)."""
    response = journal.search("What was the last film I saw before my trip to Oslo?",
                              as_of="2025-03-01")
    frame = response.trace.frame
    assert frame.anchor.trip and frame.order == "latest" and "Oslo" not in frame.need
    assert frame.time_range.end == _day("2024-02-20")


def test_the_range_after_a_trip_starts_the_day_after_its_last(journal):
    response = journal.search("After the Oslo trip, which film did I watch first?",
                              as_of="2025-03-01")
    assert response.trace.frame.time_range.start == _day("2024-02-24")


@pytest.mark.parametrize(("question", "day"), [
    ("What did I eat the night I got back from Oslo?", "2024-02-23"),
    ("When I came home from Oslo, what did I eat?", "2024-02-23"),
    ("Where did I eat on my last night in Oslo?", "2024-02-23"),
    ("What did I see on the way back from Oslo?", "2024-02-23"),
    # the trip's arrival, not its end
    ("What did I eat the day I got to Oslo?", "2024-02-20"),
    ("What did I eat on my first night in Oslo?", "2024-02-20"),
])
def test_coming_home_from_a_trip_is_its_last_day(journal, question, day):
    response = journal.search(question, as_of="2025-03-01")
    frame = response.trace.frame
    assert frame.anchor.trip and frame.anchor.relation == "day_of"
    assert frame.time_range.start == _day(day)


def test_what_i_ate_on_a_trip_is_found_in_its_days(journal):
    response = journal.search("What did I eat on the Oslo trip?", as_of="2025-03-01")
    frame = response.trace.frame
    assert (frame.anchor.relation, frame.guard) == ("stay", "filter")
    assert frame.time_range.start == _day("2024-02-20")
    top = " ".join(_contents(response)[:4])
    assert "fish soup" in top and "smoked herring" in top


def test_an_occasion_named_by_its_number_in_words_is_that_one(journal):
    """"Mum's seventieth" is the 70th birthday, not the 69th a year before."""
    response = journal.search("What did I do the day after Mum's seventieth?",
                              as_of="2025-03-01")
    assert response.trace.frame.time_range.start == _day("2025-01-11")
    assert any("Fox Valley end to end" in text for text in _contents(response)[:3])


def test_a_request_to_the_assistant_is_no_time_it_was_watched(journal):
    response = journal.search("When did I last watch Night Harbor?", as_of="2025-03-01")
    first = _contents(response)[0]
    assert "Suggest films" not in first and "Cinema with Jonah" in first


def test_how_long_since_i_saw_someone_asks_for_the_latest_time(journal):
    response = journal.search("How long has it been since I saw Lena?", as_of="2025-01-20")
    frame = response.trace.frame
    assert frame.order == "latest" and frame.anchor is None
    assert "walked Fox Valley end to end with Lena" in _contents(response)[0]


@pytest.mark.parametrize("question", [
    "Lena - when did I last see her?",
    "Lena: when did we last meet up?",
    # a capitalised opening word that names no one is not who is asked about
    "Coffee - when did I last have it with Lena?",
])
def test_a_name_opening_the_question_is_who_it_asks_about(journal, question):
    """A question's first word is capitalised whatever it is, so names were read inside a
    sentence only; the persons the bank knows are read wherever they stand."""
    response = journal.search(question, as_of="2025-01-20")
    assert "order: the reports naming 'Lena', latest first" in response.trace.notes
    assert "walked Fox Valley end to end with Lena" in _contents(response)[0]


@pytest.fixture(scope="module")
def natural(tmp_path_factory):
    """The natural journal's first year, dev words (``eval.natural``), with its questions."""
    from ramem_local.eval.journal import JOURNAL_COUNTRY
    from ramem_local.eval.natural import NaturalSpec, generate_natural_journal

    journal = generate_natural_journal(NaturalSpec(years=1, split="dev",
                                                   questions_per_style=20))
    folder = tmp_path_factory.mktemp("natural")
    source = journal.write_jsonl(folder / "natural.jsonl")
    with Memory.open(folder / "bank.db", embedder=required_embedder_dir(),
                     country=JOURNAL_COUNTRY) as memory:
        memory.ingest(source)
        yield memory, journal


def _first_hits(memory, journal, style: str, settings=None) -> list[int | None]:
    ranks = []
    for question in (q for q in journal.questions if q.style == style):
        response = memory.search(question.question, as_of=question.as_of, settings=settings)
        found = [rank for rank, c in enumerate(response.results[:10])
                 if set(c.memory.source_turns) & set(question.evidence)]
        ranks.append(found[0] if found else None)
    return ranks


def test_the_kind_read_from_the_banks_words_finds_the_last_of_a_kind_before_an_event(natural):
    """"What was the last film I saw before my trip to Oslo?" over a year of entries that say
    "Caught … at the Picturehouse", "Cinema with Jonah: …", "we put on … after dinner":
    the walk over the bank's words (``kinds``) finds the kind, where the question's rarest
    word ("film") finds only what names films. Measured with the walk on and off: it puts
    the answer first far more often (a year is short: at five years the first ten hold it
    0.90 of the time, docs/questions.md)."""
    from ramem_local.retrieve import RetrievalSettings

    memory, journal = natural
    on = _first_hits(memory, journal, "order_event")
    off = _first_hits(memory, journal, "order_event", RetrievalSettings(kind_walk=False))
    assert len(on) >= 10
    hits_on = sum(rank is not None for rank in on)
    hits_off = sum(rank is not None for rank in off)
    first_on, first_off = on.count(0), off.count(0)
    # measured on this journal (20 questions): first 10 with the walk, 5 without; in the
    # first ten 14 and 12
    assert first_on >= 0.4 * len(on) and first_on >= first_off + 3, (on, off)
    assert hits_on >= hits_off, (on, off)


def _done(journal, kind: str, detail: str):
    """The journal's entries doing ``detail`` (not naming it), in time order."""
    return [e for e in journal.entries if e.kind == kind and e.part == kind
            and e.answer == detail]


@pytest.mark.parametrize(("question", "kind", "detail", "order"), [
    # no verb reads the thing here: a phrase of the question the bank holds names it
    ("The river gorge - when did I first walk it?", "hike", "the river gorge", "earliest"),
    ("When did I first get the bike chain fixed?", "repair", "the bike chain", "earliest"),
    ("When did I last get the bike chain fixed?", "repair", "the bike chain", "latest"),
])
def test_the_thing_asked_about_is_a_phrase_of_the_question_the_bank_holds(
        natural, question, kind, detail, order):
    """Before, a question whose verb takes no object the reader knows ("get ... fixed", the
    thing before the verb) listed every report of the kind, the earliest repair first."""
    memory, journal = natural
    done = _done(journal, kind, detail)
    wanted = done[0] if order == "earliest" else done[-1]
    response = memory.search(question, as_of=journal.spec.end.isoformat())
    phrase = detail.removeprefix("the ")
    assert response.trace.frame.thing is None and response.trace.frame.order == order
    assert f"order: the reports of {phrase!r}, {order} first" in response.trace.notes
    top = [set(c.memory.source_turns) for c in response.results[:10]]
    assert any(wanted.id in turns for turns in top), (wanted.text, _contents(response))


@pytest.mark.parametrize("question", [
    "What was the first film I saw?",  # no two content words in a row
    "When did I first walk the misty ridge line?",  # a phrase no report holds
])
def test_without_a_phrase_the_bank_holds_the_kind_is_listed(natural, question):
    memory, journal = natural
    response = memory.search(question, as_of=journal.spec.end.isoformat())
    assert any("surely of the kind asked about" in note for note in response.trace.notes), \
        response.trace.notes


def test_one_thing_after_a_trip_without_an_order_word_is_the_first_after_it(natural):
    """"Where did I hike soonest after the Gdansk trip?" reads no order word, yet asks for
    the first hike after the trip: in a journal the nearest the event comes first (the
    walk's first report sure of the kind, then its likely ones in time order, from the day
    after the trip). Before, the whole
    range after the trip (to the end of the journal) was ranked by relevance."""
    memory, journal = natural
    found = []
    for trip in journal.world.trips:
        after = [e for e in _hikes(journal) if e.event_day > trip.last]
        if not after or (after[0].event_day - trip.last).days > 30:
            continue
        response = memory.search(f"Where did I hike soonest after the {trip.city} trip?",
                                 as_of=journal.spec.end.isoformat())
        assert response.trace.frame.order == "earliest"
        ordered = [c.memory for c in response.results if c.list_name == "ordered"]
        days = [_day_of(m) for m in ordered]
        # the first report the walk is sure of, then the likely ones in time order
        assert ordered and days[1:] == sorted(days[1:]) and min(days) > trip.last, days
        found.append(any(after[0].id in c.memory.source_turns for c in response.results[:10]))
    # a one-year journal: the walk misses "Lena and I did the long loop over Kestrel Edge"
    # after Gdansk (measured: found after one trip of two)
    assert found and any(found), found


def _day_of(memory):
    from datetime import datetime, timezone

    when = memory.event_start if memory.event_start is not None else memory.session_start
    return datetime.fromtimestamp(when, tz=timezone.utc).date()


def _hikes(journal):
    return [e for e in journal.entries if e.kind == "hike" and e.part == "hike"]


@pytest.mark.parametrize("question", [
    "Which walks did I do in the week before the operation?",
    "How many new books did I begin since May?",
    "How many things did I fix so far this year?",
    "How many books did I start since May?",
])
def test_what_a_count_in_a_range_finds_is_listed_by_the_kind_read_from_the_bank(natural,
                                                                                question):
    """The reports a count or a list in a range finds are listed by the walk over the
    bank's words (``kinds``), no longer by their closeness to the kind's dense direction,
    which put a look-alike of another kind first on these (the natural journal's first
    year, its own questions)."""
    memory, journal = natural
    asked = next(q for q in journal.questions if q.question == question)
    response = memory.search(question, as_of=asked.as_of)
    assert any(note.startswith("count:") and note.endswith("listed by the kind read from "
                                                           "the bank's words")
               for note in response.trace.notes), response.trace.notes
    first = set(response.results[0].memory.source_turns)
    assert first & set(asked.evidence), _contents(response)[:3]


def test_a_count_without_a_range_is_listed_by_closeness(natural):
    """Without a range the walk is not read: the count's reports are listed by their
    closeness to the kind (a whole bank's closest say nothing of its order)."""
    memory, journal = natural
    response = memory.search("How many times have I made a lemon tart?",
                             as_of=journal.spec.end.isoformat())
    notes = [note for note in response.trace.notes if note.startswith("count:")]
    assert notes and not notes[0].endswith("listed by the kind read from the bank's words")


TOLD_AND_DONE = [
    ("2024-01-06 20:00", "Cinema with Jonah: Night Harbor"),
    ("2024-03-02 19:00", "Aisha keeps telling me to see Night Harbor again"),
    ("2024-03-20 21:00", "Friends threw me a surprise party at the pub"),
    ("2024-03-23 20:00", "Caught Small Hours at the Picturehouse with Tom."),
    ("2024-04-02 18:00", "Tom took me to his allotment"),
    ("2024-04-05 19:00", "Lena keeps telling me to see Small Hours again"),
]


@pytest.fixture(scope="module")
def told_and_done(tmp_path_factory):
    yield from opened_journal(tmp_path_factory, "told-and-done", TOLD_AND_DONE)


def test_what_others_tell_the_writer_to_do_is_no_time_it_was_done(told_and_done):
    """"Aisha keeps telling me to see Night Harbor" (the writer only its object) is said
    after the writer saw it; the last time it was seen is still the cinema with Jonah."""
    response = told_and_done.search("When did I last watch Night Harbor?", as_of="2024-06-01")
    assert "Cinema with Jonah" in _contents(response)[0]


def test_what_others_tell_the_writer_to_do_is_not_counted(told_and_done):
    response = told_and_done.search("How many times did I see Small Hours?",
                                    as_of="2024-06-01")
    assert any(note.startswith("count: 1 memories match") for note in response.trace.notes), \
        response.trace.notes


def test_what_others_did_for_the_writer_marks_a_day(told_and_done):
    """An occasion others made for the writer ("Friends threw me a surprise party") is the
    event a question's range is read from, though it is not the writer's doing."""
    response = told_and_done.search("What was the first film I saw after my surprise party?",
                                    as_of="2024-06-01")
    frame = response.trace.frame
    assert frame.anchor is not None and frame.guard == "filter"
    assert frame.anchor.time == _day("2024-03-20 21:00")
    assert frame.time_range.start >= _day("2024-03-20")


A_WEEK_OF_WORDS = [
    ("2024-05-04 16:00", "Tom got married today; danced all night"),
    ("2024-05-06 19:00", "Would love to go hiking on the river gorge again sometime"),
    ("2024-05-08 18:00", "Priya says the river gorge path is closed for repairs"),
    ("2024-05-09 20:00", "Walked Cairn Hill end to end with Priya."),
    ("2024-05-10 20:00", "Dinner: fish pie, from scratch"),
    ("2024-06-20 20:00", "Hiking on the river gorge, finally"),
]


@pytest.fixture(scope="module")
def a_week_of_words(tmp_path_factory):
    yield from opened_journal(tmp_path_factory, "a-week-of-words", A_WEEK_OF_WORDS)


def test_what_i_did_in_a_range_comes_before_wishes_and_others_doings(a_week_of_words):
    """The wish and Priya's news share the question's words ("hiking", "river gorge"); the
    hike does not, and was the writer's."""
    response = a_week_of_words.search("Where did I go hiking in the week after Tom's wedding?",
                                      as_of="2024-07-01")
    assert response.trace.frame.guard == "filter"
    assert "Walked Cairn Hill" in _contents(response)[0]


@pytest.mark.parametrize(("question", "first"), [
    # a question about wishes asks for them
    ("What was I hoping to do in the week after Tom's wedding?", "Would love to go hiking"),
    # a question about a person reads what they did
    ("What did I hear from Priya in the week after Tom's wedding?", "Priya says"),
])
def test_a_question_about_wishes_or_someone_else_keeps_them_first(a_week_of_words, question,
                                                                   first):
    response = a_week_of_words.search(question, as_of="2024-07-01")
    assert first in " ".join(_contents(response)[:2])
