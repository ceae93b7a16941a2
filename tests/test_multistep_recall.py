"""Multi-step recall on a real bank (real SQLite, sqlite-vec, FTS5 and the MiniLM embedder):
the last / first time, how many times, since a month, a time given by another event, and
``--as-of`` as a point in time (nothing written after it is returned).

The bank is a journal of 2023 that recurs (the same dishes, trails and films come back) and
an assistant chat about the same topics on other days: the chat's questions and answers are
never an occurrence of what the user did.
"""

from __future__ import annotations

import json
from datetime import datetime, timezone

import pytest
from click.testing import CliRunner
from conftest import journal_bank, opened_journal, required_embedder_dir

from ramem_local import Memory
from ramem_local.cli import cli
from ramem_local.errors import InputError
from ramem_local.retrieve import RetrievalSettings
from ramem_local.types import TimeRange

pytestmark = pytest.mark.real_model

JOURNAL = [
    ("2023-01-14 19:00", "Cooked shakshuka for Ana; it came out a bit too salty."),
    ("2023-01-21 10:00", "Hiked up Eagle Ridge with Ben; the view from the top was clear."),
    ("2023-02-04 20:00", "Watched Night Harbor with Chloe at the cinema; the ending made no "
                         "sense."),
    ("2023-02-18 20:00", "Saw Blue Meridian at home with Leo; the soundtrack was great."),
    ("2023-03-04 18:00", "Adopted a grey cat from the shelter and named her Pixel."),
    ("2023-03-05 12:00", "Made pancakes for breakfast while Pixel explored the flat."),
    ("2023-03-09 19:00", "Made shakshuka at home with Leo; everyone asked for seconds."),
    ("2023-03-11 09:00", "Went hiking at Pine Lake with Ana and Hugo; it was muddy all the way "
                         "up."),
    ("2023-03-18 09:00", "Hiked up Hawk Hill with David; we saw two deer near the stream."),
    ("2023-03-25 09:00", "Did the long loop around Fox Valley alone; my knee complained on the "
                         "descent."),
    ("2023-03-28 20:00", "Watched The Long Drive with Iris; far better than the reviews said."),
    ("2023-04-15 20:00", "Made pancakes for Grace; the kitchen was a mess afterwards."),
    ("2023-05-06 19:00", "Cooked shakshuka for Maya and Nils; I burned the first batch."),
    ("2023-05-20 20:00", "Watched Cold Current with Ben; I fell asleep halfway through."),
    ("2023-06-10 09:00", "Hiked up Eagle Ridge with Karin; the wind was brutal at the summit."),
]
CHAT = [
    ("2023-06-20 18:00", "me", "Can you suggest a good shakshuka recipe for six people?"),
    ("2023-06-20 18:01", "assistant", "For six, use nine eggs in a wide pan; shakshuka needs "
                                      "a thick sauce of tomatoes and peppers."),
    ("2023-07-02 12:00", "me", "Which films are like Night Harbor?"),
    ("2023-07-02 12:01", "assistant", "If you liked Night Harbor, try Cold Current and Red "
                                      "Signal."),
]




@pytest.fixture(scope="module")
def bank(tmp_path_factory):
    return journal_bank(tmp_path_factory.mktemp("multistep") / "bank.db", JOURNAL, CHAT)


@pytest.fixture
def memory(bank):
    with Memory.open(bank) as opened:
        yield opened


def _contents(response) -> list[str]:
    return [c.memory.content for c in response.results]


def test_when_did_i_last_lists_the_latest_occurrence_first(memory):
    response = memory.search("When did I last cook shakshuka?", as_of="2023-08-01")
    assert "Cooked shakshuka for Maya and Nils" in _contents(response)[0]
    assert response.trace.frame.order == "latest"


def test_last_is_relative_to_as_of(memory):
    response = memory.search("When did I last cook shakshuka?", as_of="2023-04-01")
    assert "Made shakshuka at home with Leo" in _contents(response)[0]


def test_first_lists_the_earliest_occurrence_first(memory):
    response = memory.search("When did I hike up Eagle Ridge for the first time?",
                             as_of="2023-08-01")
    assert "Hiked up Eagle Ridge with Ben" in _contents(response)[0]


def test_the_assistants_words_and_the_users_questions_are_no_occurrence(memory):
    response = memory.search("When did I last cook shakshuka?")  # chat in June is later
    top = _contents(response)[0]
    assert "Cooked shakshuka for Maya and Nils" in top


def test_how_many_times_counts_every_match_of_the_range(memory):
    response = memory.search("How many times did I go hiking in March 2023?")
    counted = [c for c in response.results if c.list_name == "counted"]
    assert response.count == len(counted)
    texts = " ".join(c.memory.content for c in counted)
    assert "Pine Lake" in texts and "Hawk Hill" in texts
    assert "Eagle Ridge" not in texts  # January and June are outside the range
    assert response.count == 3  # with the Fox Valley loop, which shares no word with "hiking"


def test_since_a_month_with_as_of_ends_at_as_of(memory):
    response = memory.search("Which films have I watched since February 2023?",
                             as_of="2023-04-11")
    frame = response.trace.frame
    assert frame.time_range is not None
    assert frame.time_range.end <= _ts("2023-04-12 00:00")
    counted = " ".join(c.memory.content for c in response.results if c.list_name == "counted")
    assert "Night Harbor" in counted and "The Long Drive" in counted
    assert "Cold Current" not in counted


def test_the_day_after_an_event_is_found_through_the_event(memory):
    response = memory.search("What did I cook the day after I adopted the cat?",
                             as_of="2023-08-01")
    anchor = response.trace.frame.anchor
    assert anchor is not None and anchor.memory_id is not None
    assert "Adopted a grey cat" in memory.get(anchor.memory_id).content
    assert "Made pancakes for breakfast while Pixel" in _contents(response)[0]


@pytest.mark.parametrize(("question", "last_day", "first_two"), [
    ("What did I cook right after I adopted the cat?", "2023-03-06",
     {"Made pancakes for breakfast while Pixel"}),
    ("What did I cook shortly after I adopted the cat?", "2023-03-12",
     {"Made pancakes for breakfast while Pixel", "Made shakshuka at home with Leo"}),
])
def test_right_and_shortly_after_an_event_are_days_next_to_it(memory, question, last_day,
                                                              first_two):
    """As "the day after" and "the week before" are, not all time after or before it with the
    event's words in the query (before 2026-12-04 "right after I adopted the cat" listed the
    adoption itself first)."""
    response = memory.search(question, as_of="2023-08-01")
    frame = response.trace.frame
    assert frame.need == "What did I cook?"
    assert frame.time_range == TimeRange(_ts("2023-03-05"), _ts(last_day))
    top = _contents(response)[:len(first_two)]
    assert all(any(text in content for content in top) for text in first_two)
    assert not any("Adopted a grey cat" in content for content in top)


MOVING_DAY = [  # a day of three entries, and meals on other days
    ("2024-02-24 19:00", "Cooked lentil soup for Ana; it came out a bit too salty."),
    ("2024-03-01 09:00", "Moved into the flat on Elm Street; the van was two hours late."),
    ("2024-03-01 13:00", "Ate cold pizza on the floor among the boxes with Tom."),
    ("2024-03-01 21:00", "Called Mum to tell her the keys work."),
    ("2024-03-04 19:00", "Made shakshuka at home with Leo; everyone asked for seconds."),
    ("2024-03-10 12:00", "Hiked up Hawk Hill with Ben; windy at the top."),
    ("2024-04-18 20:00", "My birthday! Sam took me to the jazz club; Tom came too."),
    ("2024-04-18 23:00", "Opened the presents: a film camera from Sam."),
    ("2024-05-07 20:00", "Lena's birthday dinner at Osteria Nonna; she turned 35."),
]


@pytest.fixture(scope="module")
def moving_day(tmp_path_factory):
    return journal_bank(tmp_path_factory.mktemp("moving") / "moving.db", MOVING_DAY)


@pytest.mark.parametrize(("question", "first"), [
    # before 2026-12-04 no time was read: the move came first, then meals of other days
    ("What did I eat the day I moved?", "Ate cold pizza on the floor"),
    ("What did I eat on the day of the move?", "Ate cold pizza on the floor"),
])
def test_the_events_own_day_is_found_through_the_event(moving_day, question, first):
    with Memory.open(moving_day) as memory:
        response = memory.search(question, as_of="2024-06-01")
    frame = response.trace.frame
    assert frame.anchor is not None and frame.anchor.relation == "day_of"
    assert frame.time_range is not None
    assert frame.time_range.end - frame.time_range.start == 24 * 3600
    assert first in _contents(response)[0]


def test_my_birthday_is_mine_not_lenas(moving_day):
    """"birthday" alone finds Lena's birthday dinner as well (the later of the two, so the one
    taken); "my" next to "birthday" finds mine (``question_kinds.occasion_query``)."""
    with Memory.open(moving_day) as memory:
        response = memory.search("What did I get on my birthday?", as_of="2024-06-01")
        anchor = response.trace.frame.anchor
        assert anchor is not None and anchor.relation == "day_of"
        assert "My birthday!" in memory.get(anchor.memory_id).content
    assert all(any(text in content for content in _contents(response)[:2])
               for text in ("My birthday!", "Opened the presents"))


def test_an_occasion_told_in_other_words_is_found_by_its_words(tmp_path):
    """No report holds "lena" next to "wedding" (``question_kinds.occasion_query`` finds
    nothing), so the words alone find the day Lena got married."""
    bank = journal_bank(tmp_path / "married.db", [
        ("2024-05-24 19:00", "Cooked lentil soup for Ana; it came out a bit too salty."),
        ("2024-05-25 15:00", "Lena got married in Ghent; we danced all night."),
        ("2024-05-25 23:00", "Took a taxi back to the hotel with Tom."),
        ("2024-06-02 10:00", "Hiked up Hawk Hill with Ben; windy at the top."),
    ])
    with Memory.open(bank) as memory:
        response = memory.search("Who did I dance with at Lena's wedding?",
                                 as_of="2024-07-01")
        anchor = response.trace.frame.anchor
        assert anchor is not None and anchor.memory_id is not None
        assert "Lena got married" in memory.get(anchor.memory_id).content
    assert response.trace.frame.time_range == TimeRange(_ts("2024-05-25"), _ts("2024-05-26"))


def test_what_happened_the_day_of_an_event_lists_the_day_in_time_order(moving_day):
    with Memory.open(moving_day) as memory:
        response = memory.search("What did I do the day I moved?", as_of="2024-06-01")
    assert response.trace.frame.need == "What did I do?"
    assert [c.memory.content for c in response.results[:3]] == [
        f"me: {text}" for at, text in MOVING_DAY if at.startswith("2024-03-01")]


def test_the_week_of_an_event_runs_monday_to_sunday(moving_day):
    with Memory.open(moving_day) as memory:  # 1 March 2024 is a Friday
        response = memory.search("What did I cook the week I moved?", as_of="2024-06-01")
    assert response.trace.frame.time_range == TimeRange(_ts("2024-02-26"), _ts("2024-03-04"))
    assert not any("shakshuka" in text for text in _contents(response)[:1])


def test_the_weekend_of_an_event_is_read_as_that_weekend(moving_day):
    """Before 2026-12-04 "the weekend I moved" read no time: the lentil soup of another week
    and Monday's shakshuka came first."""
    with Memory.open(moving_day) as memory:  # 1 March 2024 is a Friday
        response = memory.search("What did I cook the weekend I moved?", as_of="2024-06-01")
    assert response.trace.frame.anchor.relation == "weekend_of"
    assert response.trace.frame.time_range == TimeRange(_ts("2024-03-01"), _ts("2024-03-04"))
    assert set(_contents(response)[:3]) == {
        f"me: {text}" for at, text in MOVING_DAY if at.startswith("2024-03-01")}


HIKES = [  # three hikes, a meal the day after each; the best fit of "I went hiking" is the first
    ("2024-01-06 10:00", "Went hiking with Ben; we went hiking up to Pine Lake."),
    ("2024-01-07 19:00", "Cooked lentil soup for Ana; it came out a bit too salty."),
    ("2024-02-10 10:00", "Went hiking at Hawk Hill alone; windy at the top."),
    ("2024-02-11 19:00", "Made shakshuka at home with Leo; everyone asked for seconds."),
    ("2024-03-09 10:00", "Went hiking on the coastal path with Lena; we saw seals."),
    ("2024-03-10 19:00", "Cooked a mushroom risotto for Tom; it took twice as long as the "
                         "recipe said."),
    ("2024-03-20 20:00", "Watched Dune at the cinema with Tom."),
]


@pytest.mark.parametrize(("question", "anchor_day", "first"), [
    # before 2026-12-04 both anchored on the January hike (the phrase's best fit)
    ("What did I cook the day after I last went hiking?", "2024-03-09", "mushroom risotto"),
    ("What have I done since my last hike?", "2024-03-09", "coastal path"),
    ("What did I cook the day after my first hike?", "2024-01-06", "lentil soup"),
])
def test_an_event_named_by_order_is_its_latest_or_earliest_report(hikes, question,
                                                                  anchor_day, first):
    with Memory.open(hikes) as memory:
        response = memory.search(question, as_of="2024-04-01")
    anchor = response.trace.frame.anchor
    assert anchor.order is not None and anchor.confident
    assert anchor.time is not None and _ts(anchor_day) <= anchor.time < _ts(anchor_day) + 86400
    assert first in _contents(response)[0]


@pytest.fixture(scope="module")
def hikes(tmp_path_factory):
    return journal_bank(tmp_path_factory.mktemp("hikes") / "hikes.db", HIKES)


TRIPS = [  # a week in Lisbon named only on arrival, a weekend in Whitby named every day, two
    # days in Porto with no word of coming home, eight days in Aarhus named going and coming, a
    # week in Riga named on its first and its last day
    ("2021-01-01 09:00", "Arrived in Riga for a long weekend; the hotel is tiny."),
    ("2021-01-08 15:00", "Walked around the old town of Riga all afternoon."),
    ("2022-03-01 09:00", "Took the train to Aarhus for a conference."),
    ("2022-03-04 20:00", "Had dumplings for dinner with Iris."),
    ("2022-03-09 19:00", "Drove home from Aarhus; tired but happy."),
    ("2022-07-01 18:00", "Arrived in Porto for Marta's wedding."),
    ("2022-07-02 11:00", "Walked along the river in Porto with Lena."),
    ("2022-07-20 19:00", "Made pancakes for Grace; the kitchen was a mess afterwards."),
    ("2023-04-25 19:00", "Made shakshuka at home with Leo; everyone asked for seconds."),
    ("2023-04-28 21:00", "Booked the flights for Lisbon."),
    ("2023-05-02 09:00", "Flew to Lisbon for a week of work."),
    ("2023-05-03 20:00", "Grilled sardines by the river with Ana."),
    ("2023-05-06 13:00", "Ate pastel de nata at a café in Belém."),
    ("2023-05-09 18:00", "Flew back home; the cat was sulking."),
    ("2023-05-20 19:00", "Cooked lentil soup for Tom; it came out a bit too salty."),
    ("2023-06-15 19:00", "Ate grilled sardines at home with Leo; not as good as by the river."),
    ("2023-07-15 19:00", "Still dreaming of the pastel de nata from Lisbon."),
    ("2024-08-10 10:00", "Took the train to Whitby with Sam."),
    ("2024-08-11 12:00", "Fish and chips on the Whitby pier; the gulls were bold."),
    ("2024-08-12 18:00", "Drove home from Whitby in the rain."),
    ("2024-08-15 20:00", "Printed the photos from Whitby for Sam."),  # home again: no stay
    ("2024-08-20 19:00", "Ate ramen at the new place on Elm Street."),
    ("2024-09-02 08:00", "Got back home late from work; too tired to cook."),
    ("2024-10-05 09:00", "Back in Lisbon for Ana's birthday."),
    ("2024-10-06 20:00", "Ate octopus rice at a tasca in Alfama."),
    ("2024-10-08 18:00", "Flew home; tired but happy."),
]


@pytest.fixture(scope="module")
def trips(tmp_path_factory):
    return journal_bank(tmp_path_factory.mktemp("trips") / "trips.db", TRIPS)


@pytest.mark.parametrize(("question", "first_day", "last_day", "answers"), [
    # before 2026-12-04 no time was read: the arrival came first, and the arrival in Porto a
    # year earlier before the sardines by the river
    ("What did I eat while I was in Lisbon?", "2023-05-02", "2023-05-09",
     {"Grilled sardines", "Ate pastel de nata"}),
    ("When I was in Lisbon, what did I eat?", "2023-05-02", "2023-05-09",
     {"Grilled sardines", "Ate pastel de nata"}),
    ("What did I eat in Lisbon?", "2023-05-02", "2023-05-09",
     {"Grilled sardines", "Ate pastel de nata"}),
    ("What did I do during my trip to Whitby?", "2024-08-10", "2024-08-12",
     {"Took the train to Whitby", "Fish and chips on the Whitby pier",
      "Drove home from Whitby"}),
])
def test_a_stay_runs_from_the_arrival_to_the_return_home(trips, question, first_day, last_day,
                                                         answers):
    """The stay is the run of reports naming the place from the latest arrival there, ended
    by the first report of coming home: Lisbon is named on arrival only, "Flew back home" a
    week later ends it; reports naming Lisbon for other reasons, four days before and two
    months after, are no part of it."""
    with Memory.open(trips) as memory:  # the second stay in Lisbon is not written yet
        response = memory.search(question, as_of="2024-09-30")
    frame = response.trace.frame
    assert frame.anchor.relation == "stay"
    assert frame.time_range == TimeRange(_ts(first_day), _ts(last_day) + 86400)
    top = _contents(response)[:len(answers) + 1]  # the stay's answers among its first reports
    assert {answer for answer in answers if any(answer in text for text in top)} == answers


@pytest.mark.parametrize(("question", "first_day", "last_day", "answer"), [
    ("What did I eat the last time I was in Lisbon?", "2024-10-05", "2024-10-08",
     "octopus rice"),
    ("What did I eat on my first trip to Lisbon?", "2023-05-02", "2023-05-09",
     "Grilled sardines"),
    # eight days between the arrival and the way home, which names Aarhus
    ("What did I eat the last time I was in Aarhus?", "2022-03-01", "2022-03-09",
     "dumplings"),
    # seven calendar days apart (a week and six hours) are one stay
    ("What did I do the last time I was in Riga?", "2021-01-01", "2021-01-08",
     "Arrived in Riga"),
])
def test_which_stay_an_order_word_names(trips, question, first_day, last_day, answer):
    with Memory.open(trips) as memory:
        response = memory.search(question, as_of="2024-12-01")
    frame = response.trace.frame
    assert (frame.anchor.relation, frame.order) == ("stay", None)  # the order is the stay's
    assert frame.anchor.order == ("latest" if " last " in question else "earliest")
    assert frame.time_range == TimeRange(_ts(first_day), _ts(last_day) + 86400)
    assert any(answer in text for text in _contents(response)[:2])


def test_the_json_frame_gives_the_stays_first_and_last_report(trips):
    result = CliRunner().invoke(cli, ["--db", str(trips), "search", "--json", "--as-of",
                                      "2024-12-01", "What did I do during my trip to Whitby?"])
    assert result.exit_code == 0, result.output
    anchor = json.loads(result.output)["trace"]["frame"]["anchor"]
    assert (anchor["relation"], anchor["time"], anchor["last_time"]) == (
        "stay", "2024-08-10T10:00:00+00:00", "2024-08-12T18:00:00+00:00")


def test_a_place_named_once_is_a_stay_from_that_day(trips):
    """Belém is named once, in a meal: the days in a place are read from the bank's reports
    naming it, whatever their words (no report need say "arrived"); before 2026-12-06 the
    question read no time, as no report told of arriving there."""
    with Memory.open(trips) as memory:
        response = memory.search("What did I eat while I was in Belém?", as_of="2024-12-01")
    frame = response.trace.frame
    assert (frame.anchor.relation, frame.guard) == ("stay", "filter")
    assert frame.time_range.start == _ts("2023-05-06")
    assert "Belém" in _contents(response)[0]


def test_a_stay_nowhere_named_reads_no_time(trips):
    with Memory.open(trips) as memory:
        response = memory.search("What did I eat while I was in Sintra?", as_of="2024-12-01")
    frame = response.trace.frame
    assert (frame.anchor.relation, frame.guard, frame.time_range) == ("stay", "no_filter", None)
    assert "no report in 'Sintra'" in frame.guard_reason and "Sintra" in frame.need


def test_a_stay_without_a_return_home_ends_at_its_last_report_naming_the_place(trips):
    with Memory.open(trips) as memory:
        response = memory.search("What did I do while I was in Porto?", as_of="2024-12-01")
    assert response.trace.frame.time_range == TimeRange(_ts("2022-07-01"), _ts("2022-07-03"))
    assert any("Walked along the river in Porto" in text for text in _contents(response)[:2])


A_DAY_TRIP = [  # a day in Conwy named twice, a plan before it and an afterthought after it
    ("2024-04-20 19:00", "Sorted out the train times to Conwy."),
    ("2024-05-04 10:00", "Got to Conwy before the crowds; the castle walls first."),
    ("2024-05-04 13:00", "Lunch by the quay in Conwy: mussels and chips."),
    ("2024-05-04 21:00", "Read on the sofa till late."),
    ("2024-05-19 20:00", "Showed Leo my pictures of Conwy castle."),
]


def test_a_day_in_a_place_named_twice_is_the_stay_not_a_later_lone_mention(tmp_path):
    """No run of reports naming Conwy spans two days: the day naming it twice is the stay,
    not the latest day naming it once (before, "Showed Leo my pictures", two weeks later)."""
    with Memory.open(journal_bank(tmp_path / "conwy.db", A_DAY_TRIP)) as memory:
        response = memory.search("What did I eat in Conwy?", as_of="2024-06-01")
    frame = response.trace.frame
    assert (frame.anchor.relation, frame.guard) == ("stay", "filter")
    assert frame.time_range == TimeRange(_ts("2024-05-04"), _ts("2024-05-05"))
    assert any("mussels" in text for text in _contents(response)[:3])  # the day's three first
    assert not any("pictures" in text for text in _contents(response)[:3])


EVERYDAY_YEAR = [  # Jonah, every month of a year: someone of the everyday life
    (f"2023-{month:02d}-15 19:00", f"Coffee with Jonah at the park, month {month}.")
    for month in range(1, 13)
]


@pytest.mark.parametrize(("trip", "year_around", "first_day"), [
    # fires: Jonah came round between the plan and the arrival, so the plan is at home
    ([("2023-09-01 20:00", "Sorted out the train times to Oslo."),
      ("2023-09-02 19:00", "Jonah came round for dinner."),
      ("2023-09-04 12:00", "Made it to Oslo at last."),
      ("2023-09-05 20:00", "Fish soup by the harbour, the best yet."),
      ("2023-09-06 10:00", "Walked around Oslo all day.")], True, "2023-09-04"),
    # must not fire: Jonah came along (the run names him), someone met once is no one at
    # home, and a bank of one month has no everyday life to read yet
    ([("2023-09-04 12:00", "Made it to Oslo with Jonah."),
      ("2023-09-05 20:00", "Fish soup by the harbour with Jonah."),
      ("2023-09-07 10:00", "Walked around Oslo all day.")], True, "2023-09-04"),
    ([("2023-09-04 12:00", "Made it to Oslo at last."),
      ("2023-09-05 20:00", "Fish soup by the harbour with Ingrid, a potter."),
      ("2023-09-07 10:00", "Walked around Oslo all day.")], True, "2023-09-04"),
    ([("2023-09-01 20:00", "Sorted out the train times to Oslo."),
      ("2023-09-02 19:00", "Jonah came round for dinner."),
      ("2023-09-04 12:00", "Made it to Oslo at last."),
      ("2023-09-06 10:00", "Walked around Oslo all day.")], False, "2023-09-01"),
    # lone days naming Oslo: the one followed by days away is the arrival, not the latest
    ([("2023-08-20 20:00", "Sorted out the train times to Oslo."),
      ("2023-08-21 19:00", "Jonah came round for dinner."),
      ("2023-09-04 12:00", "Made it to Oslo at last."),
      ("2023-09-05 20:00", "Fish soup by the harbour, the best yet."),
      ("2023-09-25 20:00", "Framed my best photo of Oslo."),
      ("2023-09-26 08:00", "Coffee with Jonah at the station.")], True, "2023-09-04"),
    # must not fire: every lone day is followed by the everyday life, the latest stands
    ([("2023-09-04 12:00", "Made it to Oslo at last."),
      ("2023-09-05 19:00", "Jonah came round for dinner."),
      ("2023-09-25 20:00", "Framed my best photo of Oslo."),
      ("2023-09-26 08:00", "Coffee with Jonah at the station.")], True, "2023-09-25"),
])
def test_a_stay_starts_on_the_first_day_the_everyday_life_stops(tmp_path, trip, year_around,
                                                               first_day):
    """``retrieve._from_the_first_day_away``: a report naming the place days before the
    rest of its run is a plan when someone of the everyday life is named in between; of lone
    days naming it, one followed by days away begins the stay (``_followed_by_days_away``)."""
    entries = (EVERYDAY_YEAR if year_around else []) + trip
    with Memory.open(journal_bank(tmp_path / "oslo.db", entries)) as memory:
        response = memory.search("What did I do in Oslo?", as_of="2024-01-01")
    frame = response.trace.frame
    assert (frame.anchor.relation, frame.guard) == ("stay", "filter")
    assert frame.time_range.start == _ts(first_day)


A_WEEKEND = [
    ("2024-03-01 19:00", "Cooked lentil soup for Ana; it came out a bit too salty."),
    ("2024-03-09 10:00", "Hiked up Mount Alder with Maya and Pablo; it was muddy all the way "
                         "up."),
    ("2024-03-09 20:00", "Went to see the Velvet Tides at Harbour Hall with Pablo; they played "
                         "the old songs."),
    ("2024-03-10 12:00", "Took the train to visit my old friend Tomas; we talked for hours."),
    ("2024-03-10 20:00", "Watched The Ferryman with Jonas at the cinema; far better than the "
                         "reviews said."),
    ("2024-03-12 09:00", "Had a long meeting with Ben about the budget review."),
]


def test_who_did_i_go_to_see_puts_the_person_i_visited_first(tmp_path):
    """Inside the weekend, the report naming a person as the object of its verb comes first
    (``names.names_a_person_as_object``); before 2026-12-04 the film "with Jonas" did, as
    closest to "Who did I go to see?" with MiniLM."""
    bank = journal_bank(tmp_path / "weekend.db", A_WEEKEND)
    with Memory.open(bank) as memory:
        response = memory.search("Who did I go to see last weekend?", as_of="2024-03-14")
    assert "visit my old friend Tomas" in _contents(response)[0]


def _ts(text: str) -> int:
    return int(datetime.fromisoformat(text).replace(tzinfo=timezone.utc).timestamp())


@pytest.mark.parametrize("as_of", ["2023-02-10", "2023-03-20 12:00", "2023-05-06 18:59",
                                   "2023-06-20 18:00"])
@pytest.mark.parametrize("question", [
    "When did I last cook shakshuka?",
    "Which films did I watch?",
    "What did I do last week?",
    "How many times did I go hiking?",
    "Night Harbor",
])
def test_search_as_of_never_returns_what_was_written_later(bank, as_of, question):
    result = CliRunner().invoke(cli, ["--db", str(bank), "search", question, "--as-of", as_of,
                                      "--k", "50", "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    cut = _ts(as_of if " " in as_of else as_of + " 00:00")
    written = {text: _ts(at) for at, text in JOURNAL} | {text: _ts(at) for at, _, text in CHAT}
    assert data["results"], "something was written before the reference time"
    for row in data["results"]:
        (at,) = [when for text, when in written.items() if text in row["content"]]
        assert at <= cut, row["content"]


def test_search_prints_the_order_and_the_count(bank):
    result = CliRunner().invoke(cli, ["--db", str(bank), "search",
                                      "How many times did I go hiking in March 2023?"])
    assert result.exit_code == 0, result.output
    assert "memories match" in result.output
    result = CliRunner().invoke(cli, ["--db", str(bank), "search",
                                      "When did I last cook shakshuka?"])
    assert "order: latest first" in result.output


def test_ask_without_an_llm_prints_the_count_and_every_counted_memory(bank):
    """Without a model the evidence is the answer: for "how many" that is the count line
    and all that is counted, as `search` prints them (it printed five memories and no
    count)."""
    result = CliRunner().invoke(cli, ["--db", str(bank), "ask",
                                      "How many entries did I write in March 2023?"])
    assert result.exit_code == 0, result.output
    assert "count: 7 memories match" in result.output
    assert result.output.count("· counted ·") == 7


def test_ask_with_an_llm_prints_how_the_question_was_read_before_the_answer(bank):
    """The model's answer to "how many" can differ from the search's count (Qwen2.5-Coder
    0.5B: 12 of 40 counts exact against the search's 29, results/llm-subset-qwen.txt): both
    are shown, the reading first."""
    from real_models import smollm_path

    result = CliRunner().invoke(cli, ["--db", str(bank), "--llm", str(smollm_path()),
                                      "--llm-threads", "1", "ask",
                                      "How many times did I go hiking in March 2023?"])
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0].startswith("time: 2023-03-01 → 2023-03-31")
    assert lines[1].startswith("count: 3 memories match")
    assert len(lines) > 2  # the model's answer (or "not in memory") follows


def test_search_says_a_day_that_does_not_exist_is_no_date(bank):
    """"31 February 2023" is no cue; February 2023 is read, and the output says why."""
    result = CliRunner().invoke(cli, ["--db", str(bank), "search",
                                      "What did I watch on 31 February 2023?", "--k", "1"])
    assert result.exit_code == 0, result.output
    assert "time: '31 February 2023' is no date: not read as one" in result.stdout
    result = CliRunner().invoke(cli, ["--db", str(bank), "search",
                                      "What did I watch on 31 February 2023?", "--json"])
    assert json.loads(result.stdout)["trace"]["frame"]["not_dates"] == ["31 February 2023"]


def test_an_answer_carries_the_count_of_its_retrieval(memory):
    question = "How many times did I go hiking in March 2023?"
    answer = memory.ask(question)
    assert answer.count == memory.search(question).count == 3
    assert memory.ask("Who did I cook shakshuka for in January 2023?").count is None


def test_timeline_as_of_shows_nothing_said_later(memory):
    days = memory.timeline(start="2023-05-01", end="2023-07-31", as_of="2023-06-01")
    said = [e.memory.content for day in days for session in day.sessions
            for e in session.entries]
    assert any("Maya and Nils" in text for text in said)
    assert not any("Eagle Ridge with Karin" in text for text in said)


def test_what_have_i_done_since_lists_every_occurrence(memory):
    response = memory.search("Which films have I watched since March 2023?", as_of="2023-06-01")
    assert response.count is not None
    counted = " ".join(c.memory.content for c in response.results if c.list_name == "counted")
    assert "The Long Drive" in counted


@pytest.mark.parametrize(("question", "as_of", "expected"), [
    # Nothing but a time: every report of the range, in the order they happened.
    ("What have I done since 18 March 2023?", "2023-04-20",
     ["Hawk Hill", "Fox Valley", "The Long Drive", "pancakes for Grace"]),
    ("How many entries did I write in March 2023?", None,
     ["Adopted", "pancakes for breakfast", "shakshuka at home", "Pine Lake", "Hawk Hill",
      "Fox Valley", "The Long Drive"]),
])
def test_a_count_that_names_nothing_but_its_time_counts_every_report_of_the_range(
        memory, question, as_of, expected):
    """Standing out needs something to stand out for: "What have I done since ...?" counted
    the one report closest to "done" (1 of 4) before every report was taken."""
    response = memory.search(question, as_of=as_of)
    counted = [c.memory.content for c in response.results if c.list_name == "counted"]
    assert response.count == len(expected)
    assert [next(e for e in expected if e in text) for text in counted] == expected
    assert "every report of the range" in _count_note(response)


def test_a_count_with_a_word_besides_its_time_is_no_list_of_the_range(memory):
    response = memory.search("How many times did I go hiking in March 2023?")
    assert response.count == 3
    assert "every report of the range" not in _count_note(response)


def test_without_multi_step_the_frame_is_the_plain_one(memory):
    from ramem_local.retrieve import RetrievalSettings

    response = memory.search("When did I last cook shakshuka?",
                             settings=RetrievalSettings(multi_step=False))
    frame = response.trace.frame
    assert frame.order is None and response.count is None
    assert all(c.list_name != "ordered" for c in response.results)


def test_a_count_without_a_range_counts_the_reports_holding_its_words(memory):
    """Three cookings of shakshuka; the chat's recipe question and the assistant's answer
    are no occurrence. Without a range nothing is added by closeness."""
    response = memory.search("How many times did I cook shakshuka?")
    assert response.count == 3
    assert all("shakshuka" in c.memory.content for c in response.results[:3])


def test_reports_come_first_in_a_range_unless_the_question_is_about_what_was_said(memory):
    done = memory.search("What did I cook in June 2023?", as_of="2023-08-01")
    said = memory.search("What did the assistant suggest for shakshuka in June 2023?",
                         as_of="2023-08-01")
    assert not _contents(done)[0].rstrip().endswith("?")
    assert _contents(said)[0].startswith("assistant: For six, use nine eggs")


@pytest.mark.parametrize(("question", "expected"), [
    # Both ends events: the range runs from the cat's day to the Hawk Hill hike's, both in.
    ("What did I do between adopting the cat and the hike up Hawk Hill?",
     ["Adopted", "pancakes for breakfast", "shakshuka at home", "Pine Lake", "Hawk Hill"]),
    # The end as a time; "from ... until".
    ("What did I do from the day I adopted the cat until 12 March 2023?",
     ["Adopted", "pancakes for breakfast", "shakshuka at home", "Pine Lake"]),
])
def test_a_range_between_two_events_lists_what_happened_between_them(memory, question,
                                                                      expected):
    """Without an end read as an event, "between adopting the cat and ..." had no time at
    all: five memories from any month, by content."""
    response = memory.search(question, as_of="2023-08-01")
    frame = response.trace.frame
    assert frame.guard == "filter" and frame.time_only
    assert frame.time_range is not None
    assert (frame.time_range.start, frame.time_range.end) == (
        _ts("2023-03-04 00:00"), _ts(("2023-03-19" if "Hawk" in question else "2023-03-13")
                                     + " 00:00"))
    listed = [next((e for e in expected if e in c.memory.content), None)
              for c in response.results[:len(expected)]]
    assert listed == expected


def test_a_time_end_without_its_year_is_the_one_after_the_event(memory):
    """Asked in mid-2024, "Easter" alone is Easter 2024; after the cat (March 2023) it is the
    Easter that followed, 9 April 2023."""
    response = memory.search("Which films did I watch between adopting the cat and Easter?",
                             as_of="2024-06-01")
    frame = response.trace.frame
    assert frame.time_range is not None
    assert (frame.time_range.start, frame.time_range.end) == (_ts("2023-03-04 00:00"),
                                                              _ts("2023-04-10 00:00"))
    assert "'Easter' 2023-04-09" in frame.guard_reason
    counted = " ".join(c.memory.content for c in response.results if c.list_name == "counted")
    assert "The Long Drive" in counted and "Cold Current" not in counted


def test_a_count_between_two_events_counts_neither_event(memory):
    """The memories that say when the range starts and ends are of another kind than the
    one counted: "Adopted a grey cat" stood out among the four of a short range."""
    response = memory.search("How many times did I cook between adopting the cat and the "
                             "long loop around Fox Valley?", as_of="2023-08-01")
    counted = [c.memory.content for c in response.results if c.list_name == "counted"]
    assert response.count == len(counted)
    assert not any("Adopted" in text or "Fox Valley" in text for text in counted)
    assert any("shakshuka at home" in text for text in counted)


def test_what_have_i_done_since_an_event_lists_every_report_since(memory):
    """"What have I done since I adopted the cat?" counted the reports holding "cat" (the
    anchor's words) before the anchor left the need of a count."""
    response = memory.search("What have I done since I adopted the cat?", as_of="2023-03-20")
    counted = [c.memory.content for c in response.results if c.list_name == "counted"]
    assert response.count == 5
    assert [text.split()[1] for text in counted] == ["Adopted", "Made", "Made", "Went",
                                                     "Hiked"]


def test_a_range_whose_two_ends_find_one_memory_says_so(memory):
    """"adopting the cat" and "naming Pixel" are one report: the range is its day, and the
    trace says why it is so short."""
    response = memory.search("What did I do between adopting the cat and naming Pixel?",
                             as_of="2023-08-01")
    frame = response.trace.frame
    assert frame.anchor.memory_id == frame.other_end.memory_id
    assert (frame.time_range.start, frame.time_range.end) == (
        _ts("2023-03-04 00:00"), _ts("2023-03-05 00:00"))
    assert any(note.startswith(f"both ends of the range are memory [{frame.anchor.memory_id}]")
               for note in response.trace.notes)


def test_a_real_analyzer_cannot_put_the_event_back_into_a_count_since_it(memory, qwen):
    """Qwen2.5-Coder-0.5B (greedy, 2026-12-04) proposes the need "I went hiking since I
    adopted the cat"; taken as it was, the count held "Adopted a grey cat" (5 instead of 4).
    The analyzer keeps the deterministic need, which leaves the event out."""
    from ramem_local.recall.analyzer import analyze_question

    question = "How many times did I go hiking since I adopted the cat?"
    frame = memory.frame(question, as_of="2023-08-01")
    outcome = analyze_question(qwen, frame, tz=memory.tz,
                               participants=memory.store.participants(None),
                               timeline=memory.store.timeline(None))
    response = memory.search(question, frame=outcome.frame)
    counted = [c.memory.content for c in response.results if c.list_name == "counted"]
    assert response.count == 4 == len(counted)
    assert not any("cat" in text for text in counted)


def test_a_range_between_two_events_reads_in_search_and_json(bank):
    question = "What did I do between adopting the cat and the hike up Hawk Hill?"
    printed = CliRunner().invoke(cli, ["--db", str(bank), "search", question, "-k", "3"])
    assert printed.exit_code == 0, printed.output
    assert printed.output.startswith("time: 2023-03-04 → 2023-03-18 (event 'between adopting "
                                     "the cat and the hike up Hawk Hill' grounded: memory [")
    result = CliRunner().invoke(cli, ["--db", str(bank), "search", question, "--json"])
    frame = json.loads(result.output)["trace"]["frame"]
    assert frame["anchor"]["relation"] == "between"
    assert frame["anchor"]["phrase"] == "adopting the cat"
    assert frame["other_end"]["phrase"] == "the hike up Hawk Hill"
    assert frame["other_end"]["time"].startswith("2023-03-18")


def test_an_event_the_search_is_unsure_of_is_the_one_nearest_the_ranges_other_end():
    """Two parties read alike: alone, the later one (nearest before the reference time); as
    one end of a range, the one nearest its other end (the new job in February)."""
    from ramem_local.retrieve import unsure_anchor

    parties = {1: _ts("2023-01-10 20:00"), 5: _ts("2023-09-10 20:00")}
    reference = _ts("2023-12-01 00:00")
    assert unsure_anchor(parties, reference, near=None) == 5
    assert unsure_anchor(parties, reference, near=_ts("2023-02-01 09:00")) == 1
    assert unsure_anchor(parties, _ts("2023-05-01 00:00"), near=None) == 1
    assert unsure_anchor(parties, _ts("2022-12-01 00:00"), near=None) == 5  # none before



def test_the_same_words_on_two_days_are_the_latest_event_unless_asked_first(tmp_path):
    """"Got a flat tyre on the way to work" in March and in June: the day after it is June's
    (the latest before the reference time), "the first time" March's; the ranks of identical
    reports differ only by how ties are broken."""
    bank = journal_bank(tmp_path / "tyre.db", [
        ("2023-03-01 18:00", "Long day at the office."),
        ("2023-03-02 18:00", "Got a flat tyre on the way to work"),
        ("2023-03-03 18:00", "Walked to work, bike in the shop"),
        ("2023-04-10 18:00", "Lunch with Tom"),
        ("2023-06-10 18:00", "Got a flat tyre on the way to work"),
        ("2023-06-11 18:00", "Took the bus, bike needs a new tube"),
        ("2023-06-20 18:00", "Quiet evening"),
    ])
    with Memory.open(bank) as memory:
        latest = memory.search("What did I do the day after I got a flat tyre?",
                               as_of="2023-07-01")
        first = memory.search("What did I do the day after I first got a flat tyre?",
                              as_of="2023-07-01")
    assert _contents(latest)[0] == "me: Took the bus, bike needs a new tube"
    assert latest.trace.frame.anchor.confident is False
    assert _contents(first)[0] == "me: Walked to work, bike in the shop"


def test_an_unsure_end_of_a_range_between_events_is_taken_next_to_the_other_end(memory):
    """"The shakshuka I cooked" reads alike in January and May ("Cooked shakshuka for …");
    next to the cat (4 March, found surely) it is January's, though May's is nearer the
    reference time."""
    response = memory.search("Which films did I watch between the shakshuka I cooked and "
                             "adopting the cat?", as_of="2023-08-01")
    frame = response.trace.frame
    assert frame.anchor is not None and frame.anchor.confident is False
    assert len(frame.anchor.candidates) >= 2
    assert frame.time_range is not None
    assert (frame.time_range.start, frame.time_range.end) == (
        _ts("2023-01-14 00:00"), _ts("2023-03-05 00:00"))
    notes = [n for n in response.trace.notes if n.startswith("event 'the shakshuka I cooked'")]
    assert len(notes) == 1 and "nearest the range's other end" in notes[0]
    assert "Watched Night Harbor with Chloe" in _contents(response)[0]

def test_an_event_the_bank_does_not_hold_sets_no_time_filter(memory):
    response = memory.search("What did I eat after the job interview at Brightwell?",
                             as_of="2023-08-01")
    frame = response.trace.frame
    assert frame.anchor is not None and frame.anchor.memory_id is None
    assert frame.guard == "no_filter" and "was not found" in frame.guard_reason


def _kind_exemplars(memory, question: str, as_of: str) -> list[str]:
    from ramem_local.retrieve import Query, RetrievalSettings, centred_query, kind_exemplars

    frame = memory.frame(question, as_of=as_of)
    vector = centred_query(memory.embedder.embed_query(frame.need), memory.store.mean_vector())
    ids = kind_exemplars(memory.store, Query(vector=vector, fts=None), frame,
                         RetrievalSettings(), None)
    return [memory.get(i).content for i in ids]


def test_kind_exemplars_are_reports_not_the_chat_about_them(memory):
    """The chat's recipe question and the assistant's answer are the closest to "cook
    shakshuka" after the three cookings, and are not what a cooking entry looks like."""
    exemplars = _kind_exemplars(memory, "How many times did I cook shakshuka in 2023?",
                                "2023-08-01")
    assert len(exemplars) == 5
    assert not any("recipe for six" in text or "nine eggs" in text for text in exemplars)
    assert sum("shakshuka" in text for text in exemplars) == 3


def test_kind_exemplars_happened_by_the_reference_time(memory):
    exemplars = _kind_exemplars(memory, "How many times did I go hiking in 2023?", "2023-03-20")
    written = {text: _ts(at) for at, text in JOURNAL}
    for content in exemplars:
        (at,) = [when for text, when in written.items() if text in content]
        assert at <= _ts("2023-03-20 00:00"), content
    assert not any("Eagle Ridge with Karin" in text or "Fox Valley" in text
                   for text in exemplars)


def test_the_kind_of_report_counts_a_hike_that_shares_no_word_with_the_question(memory):
    """"Did the long loop around Fox Valley alone" is a hike the question's words miss; the
    bank's closest reports (two hikes up, one hiking) bring it in (``kind_direction``)."""
    response = memory.search("How many times did I go hiking in March 2023?")
    counted = " ".join(c.memory.content for c in response.results if c.list_name == "counted")
    assert "Fox Valley" in counted


FIRST_WEEKS = [  # a new journal, as `ramem import markdown` reads one (a day's lines joined)
    ("2026-01-03 12:00", "Went hiking at Eagle Ridge with Lena; the snow was deep.\n"
                         "Cooked a mushroom risotto for dinner."),
    ("2026-01-10 12:00", "Watched Dune Part Two at the cinema with Tom."),
    ("2026-01-17 12:00", "Adopted a cat from the shelter and named her Pixel."),
    ("2026-01-18 12:00", "Bought cat food and a scratching post for Pixel."),
    ("2026-01-24 12:00", "Hiked up Hawk Hill alone; windy at the top."),
    ("2026-02-07 12:00", "Lena's birthday dinner at Osteria Nonna; she turned 35."),
    ("2026-02-14 12:00", "Went hiking at Eagle Ridge again, with Tom this time.\n"
                         "Saw Past Lives at home."),
    ("2026-03-01 12:00", "Moved into the new flat on Elm Street."),
    ("2026-03-02 12:00", "Unpacked boxes all day; cooked pasta in the new kitchen."),
    ("2026-03-15 12:00", "Hiked the coastal path with Lena and Tom."),
]


def test_a_range_holding_the_whole_of_a_new_bank_counts_by_words_alone(tmp_path):
    """Ten entries: "since January" is all of them, and the closest few of ten are no kind of
    anything (before, the adoption, the cat food and the unpacking were counted as films
    beside Dune: 4, and a fifth hike)."""
    bank = journal_bank(tmp_path / "new.db", FIRST_WEEKS)
    with Memory.open(bank) as memory:
        films = memory.search("Which films have I watched since January?")
        hikes = memory.search("How many times did I go hiking since January?")
    assert films.count == 1 and "Dune" in films.results[0].memory.content
    assert "none standing out: the range holds every report of the bank" in _count_note(films)
    assert hikes.count == 4


@pytest.mark.parametrize(("question", "counted"), [
    ("How many times did I go to Pine Lake in March 2023?", "Went hiking at Pine Lake"),
    ("How many times did I hike up Hawk Hill in March 2023?", "Hiked up Hawk Hill"),
    ("How many times did I see Leo in March 2023?", "Made shakshuka at home with Leo"),
    # a bare singular object is one thing too (before, 2: March's pancakes stood out)
    ("How many times did I cook shakshuka in March 2023?", "Made shakshuka at home with Leo"),
])
def test_a_count_that_names_what_it_counts_counts_the_name_alone(memory, question, counted):
    """March's other hikes stand out as like a hike up Hawk Hill, but the question counts Hawk
    Hill (before, 3 each: the hike up Hawk Hill, the loop around Fox Valley, Pine Lake)."""
    response = memory.search(question, as_of="2023-08-01")
    assert response.count == 1 and counted in response.results[0].memory.content
    assert "none standing out: the question names what it counts" in _count_note(response)


FILMS = [  # a film seen twice: at the cinema in January, at home in March
    ("2023-01-07 20:00", "Watched Small Hours with Ana at the cinema; far better than the "
                         "reviews said."),
    ("2023-01-21 10:00", "Hiked up Eagle Ridge with Ben; the view from the top was clear."),
    ("2023-02-11 20:00", "Watched Red Signal with Ben at the cinema; I fell asleep halfway "
                         "through."),
    ("2023-02-25 19:00", "Cooked shakshuka for Ana; it came out a bit too salty."),
    ("2023-03-04 19:00", "Made pad thai at home with Leo; the kitchen was a mess afterwards."),
    ("2023-03-08 20:00", "Watched Cold Current with Iris at the cinema; the soundtrack was "
                         "great."),
    ("2023-03-11 09:00", "Hiked up Hawk Hill with David; we saw two deer near the stream."),
    ("2023-03-15 19:00", "Cooked a mushroom risotto at home with Iris; everyone asked for "
                         "seconds."),
    ("2023-03-18 12:00", "Repaired the bike's rear brake myself; it works again, mostly."),
    ("2023-03-22 20:00", "Saw Small Hours at home with Farid; the ending made no sense."),
    ("2023-03-26 09:00", "Went hiking at Pine Lake with Hugo; it was muddy all the way up."),
    ("2023-03-29 19:00", "Made fish tacos at home with Leo; Nils brought the wine."),
    ("2023-04-08 20:00", "Watched Night Harbor with Chloe at the cinema; the ending made no "
                         "sense."),
]


@pytest.fixture(scope="module")
def films(tmp_path_factory):
    return journal_bank(tmp_path_factory.mktemp("films") / "films.db", FILMS)


def test_a_count_counts_a_report_naming_a_work_a_report_of_the_kind_names(films):
    """"Saw Small Hours at home with Farid" holds no "watch" and sits among March's meals at
    home, but "Watched Small Hours ... at the cinema" in January is a film: so is it (before
    2026-12-04, 1: Cold Current alone). Since the twelfth session of that day it stands out,
    read by the other reports of Small Hours (``_kind_of_the_works``); what names a work a
    counted report names is counted too (``_naming_the_same_works``, below)."""
    with Memory.open(films) as memory:
        response = memory.search("How many films did I watch in March 2023?",
                                 as_of="2023-05-01")
    counted = [c.memory.content for c in response.results if c.list_name == "counted"]
    assert response.count == 2
    assert any("Cold Current" in text for text in counted)
    assert any("Saw Small Hours at home" in text for text in counted)
    assert "1 read by the works they name" in _count_note(response)


def test_a_report_naming_a_work_a_report_of_the_kind_names_is_added(films):
    """The hike up Hawk Hill names a place, no work; the pad thai and the tacos name none."""
    from ramem_local.retrieve import ASSISTANT, _naming_the_same_works

    with Memory.open(films) as memory:
        store = memory.store
        ids = {memory.get(i).content: i for i in range(1, len(FILMS) + 1)}

        def occurrences(**kwargs):
            return store.occurrences(assistant=ASSISTANT, **kwargs)

        january = ids["me: " + FILMS[0][1]]
        cold_current = ids["me: " + FILMS[5][1]]
        added = _naming_the_same_works(store, occurrences, [january], {cold_current: 0}, set(),
                                       _ts("2023-03-01"), _ts("2023-04-01"))
    assert list(added) == [ids["me: " + FILMS[9][1]]]


MARCH_FILMS = [  # a film seen with Leo, among evenings with Leo and a concert
    ("2024-01-06 20:00", "Finally watched Small Hours; the soundtrack was great."),
    ("2024-01-13 10:00", "Hiked up Eagle Ridge with Ben; the view from the top was clear."),
    ("2024-01-20 20:00", "Watched Small Hours with Iris at the cinema; far better than the "
                         "reviews said."),
    ("2024-02-03 19:00", "Cooked shakshuka for Ana; it came out a bit too salty."),
    ("2024-02-10 20:00", "Heard the Static Hearts live at the Blue Room; we danced until the "
                         "end."),
    ("2024-02-17 20:00", "Watched Red Signal with Ben at the cinema; the ending made no sense."),
    ("2024-03-02 20:00", "Watched Glass Mountain with Leo at the cinema; far better than the "
                         "reviews said."),
    ("2024-03-05 21:00", "Felt tired and stayed home until Leo dropped by; I stayed up too "
                         "late."),
    ("2024-03-09 20:00", "I watched Small Hours with Leo at the cinema; I fell asleep halfway "
                         "through."),
    ("2024-03-12 21:00", "Felt restless and phoned Leo to talk; I stayed up too late."),
    ("2024-03-16 20:00", "Went to see the Static Hearts at Harbour Hall with Maya; I bought a "
                         "poster."),
    ("2024-03-19 21:00", "Felt tired and stayed home until Leo dropped by; I should sleep more."),
    ("2024-03-23 09:00", "Went hiking at Pine Lake with Hugo; it was muddy all the way up."),
    ("2024-03-27 19:00", "Made fish tacos at home with Leo; Nils brought the wine."),
    ("2024-04-06 20:00", "Watched Night Harbor with Chloe at the cinema; the ending made no "
                         "sense."),
]


def test_a_report_naming_a_work_is_read_by_the_other_reports_of_that_work(tmp_path):
    """"I watched Small Hours with Leo at the cinema; I fell asleep halfway through" is, to
    MiniLM, most like the evenings Leo dropped by and I stayed up too late: read by its
    neighbours it fell below the largest drop after Glass Mountain (before 2026-12-04: 1).
    Read by the other reports of Small Hours, both films of January, it is a film."""
    bank = journal_bank(tmp_path / "march.db", MARCH_FILMS)
    with Memory.open(bank) as memory:
        response = memory.search("How many movies did I see in March 2024?", as_of="2024-05-01")
    counted = [c.memory.content for c in response.results if c.list_name == "counted"]
    assert response.count == 2
    assert any("Glass Mountain" in text for text in counted)
    assert any("Small Hours with Leo" in text for text in counted)
    assert "read by the works they name" in _count_note(response)


def _count_note(response) -> str:
    (note,) = [n for n in response.trace.notes if n.startswith("count:")]
    return note


def test_a_count_whose_only_word_is_its_verb_counts_the_reports_holding_the_verb(memory):
    """"How many times have I cooked?" names nothing but its verb: the reports holding it
    count ("Cooked shakshuka for Ana", "... for Maya and Nils"); "Made shakshuka" shares no
    word with the question, and without a range nothing is added by closeness."""
    response = memory.search("How many times have I cooked?", as_of="2023-08-01")
    assert response.count == 2
    assert "by the words 'cooked'" in _count_note(response)
    counted = [c.memory.content for c in response.results if c.list_name == "counted"]
    assert len(counted) == 2 and all(text.startswith("me: Cooked shakshuka") for text in counted)



VISITS = [  # a journal where the visits share a word with "Who have I visited ...?"
    ("2025-11-20 21:00", "Started reading The Silent Engine, a gift from Chloe."),
    ("2025-12-01 19:00", "Drove out to see my parents in Porto; we looked through old photos."),
    ("2025-12-11 19:00", "Fixed the kitchen tap myself; a video tutorial saved me."),
    ("2026-02-08 19:00", "I took the train to visit Grandpa Theo; we walked along the canal."),
    ("2026-02-12 19:00", "On Wednesday I saw Night Harbor at home with Maya; the cinema was "
                         "almost empty."),
    ("2026-02-20 19:00", "Had a long meeting with Ben about the website migration; nothing "
                         "much else happened."),
    ("2026-03-02 08:00", "The milk had gone off, so breakfast was toast."),
    ("2026-03-05 19:00", "Visited Aunt Rosa in Graz; we cooked together."),
    ("2026-03-10 19:00", "Cooked fish tacos for Pablo; it came out a bit too salty."),
    ("2026-03-11 21:00", "Picked up The Glass Harbor at the library and started it."),
    ("2026-03-14 09:00", "Went hiking at the river gorge with Grace and Iris; we saw two deer "
                         "near the stream."),
    ("2026-03-12 08:00", "Began The Silent Engine again on the train."),
    ("2026-03-19 19:00", "I took the train to visit my godson Felix; we talked for hours."),
    ("2026-03-21 19:00", "On Friday I had a long meeting with Hugo about the website migration."),
]


@pytest.fixture(scope="module")
def visits(tmp_path_factory):
    yield from opened_journal(tmp_path_factory, "visits", VISITS)


def test_the_reports_matched_by_word_are_listed_before_those_standing_out(visits):
    """A report holding the question's word is surer than one that only stands out by
    closeness: with MiniLM the two meetings "with Ben" and "with Hugo" stand out as closest
    to "Who have I visited" (people met), and are listed after the three visits."""
    response = visits.search("Who have I visited since February 2026?", as_of="2026-04-01")
    assert "3 by the words 'visited'" in _count_note(response)
    counted = [c.memory.content for c in response.results if c.list_name == "counted"]
    assert all("visit" in text.lower() for text in counted[:3]), counted


def test_a_light_verb_is_no_word_a_count_matches_by(visits):
    """"Where have I gone since ...?" has no word but its verb, and "gone" says nothing of
    what happened: "The milk had gone off" is no outing."""
    response = visits.search("Where have I gone since February 2026?", as_of="2026-04-01")
    assert "by the words" not in _count_note(response)
    assert "milk" not in " ".join(c.memory.content for c in response.results
                                  if c.list_name == "counted")


def test_the_last_time_is_found_by_the_name_the_question_holds(visits):
    """"reading" is the question's rarest word (one entry), but the question is about The
    Silent Engine, whatever the entry's verb: its latest entry "Began The Silent Engine
    again" comes first."""
    response = visits.search("When did I last start reading The Silent Engine?",
                             as_of="2026-04-01")
    assert _contents(response)[0].endswith("Began The Silent Engine again on the train.")
    assert "order: the reports naming 'Silent Engine', latest first" in response.trace.notes


def test_a_count_of_a_named_thing_counts_the_reports_naming_it(visits):
    """"Night Harbor" is one film: "The Glass Harbor" (a book) holds "harbor" and is no
    time I watched it."""
    response = visits.search("How many times did I watch Night Harbor?", as_of="2026-04-01")
    assert response.count == 1
    assert "by the words 'Night Harbor'" in _count_note(response)


def test_a_speakers_short_name_is_who_speaks_not_what_the_question_is_about(tmp_path):
    """"Mel" is Melanie, who speaks: Caroline's turns that call her "Mel" are not what "What
    did Mel paint in her latest project?" is about; the order is found by its words."""
    turns = [("2023-07-01 10:00", "Melanie", "The kids and I painted a sunset last week!"),
             ("2023-07-01 10:01", "Caroline", "That's lovely, Mel! I went to a pride parade."),
             ("2023-07-15 10:00", "Melanie", "We painted a lake with the kids this weekend."),
             ("2023-07-15 10:01", "Caroline", "Mel, it looks great!")]
    with Memory.open(tmp_path / "bank.db", embedder=required_embedder_dir(),
                     country="US") as memory:
        for at, speaker, text in turns:
            memory.add(text, at=at, speaker=speaker, conversation="chat")
        response = memory.search("What did Mel paint in her latest project?",
                                 as_of="2023-08-01")
    assert not any("'Mel'" in note for note in response.trace.notes), response.trace.notes


HIKING_CHAT = [  # a chat about hiking, asked twice, closer to "go hiking" than most hikes
    (f"2023-{7 + round_:02d}-{10 + i} 18:0{speaker}", who,
     text if round_ == 0 else f"Again: {text}")
    for round_ in (0, 1)
    for i, (topic, answer) in enumerate([
        ("Which hiking boots are best for muddy trails?", "Waterproof boots with deep lugs."),
        ("How do I plan a hiking trip in the mountains?", "Check the weather and the route."),
        ("What should I pack for a day of hiking?", "Water, food, a map and a warm layer."),
        ("Is hiking alone safe?", "Tell someone your route and carry a phone."),
        ("How do I get fitter for hiking?", "Walk uphill often and train your legs."),
        ("What are good hiking snacks?", "Nuts, dried fruit and a sandwich."),
        ("How long should a first hiking trip be?", "Two to three hours is plenty."),
        ("How do I avoid blisters when hiking?", "Wear broken-in boots and wool socks."),
        ("Which hiking apps work offline?", "Several map apps can store routes offline."),
        ("Should I use poles for hiking downhill?", "Poles spare your knees on descents."),
        ("What is the best season for hiking?", "Late spring and early autumn."),
        ("How do I read a hiking map?", "Contour lines close together mean steep ground."),
        ("Can I go hiking in the rain?", "Yes, with a shell jacket and care on rocks."),
        ("How do I choose a hiking backpack?", "Fit the hip belt and keep it light."),
        ("What do I do if I get lost hiking?", "Stop, stay calm and retrace your steps."),
    ])
    for speaker, (who, text) in enumerate((("me", topic), ("assistant", answer)))
]


def test_kind_exemplars_are_found_past_a_chat_that_fills_the_closest(tmp_path):
    """Sixty chat turns about hiking are closer to "go hiking" than most hike entries: the
    five exemplars are still reports, the bank's hikes (``EXEMPLAR_POOL``)."""
    path = journal_bank(tmp_path / "bank.db", JOURNAL, HIKING_CHAT)
    with Memory.open(path) as memory:
        exemplars = _kind_exemplars(memory, "How many times did I go hiking in 2023?",
                                    "2023-12-01")
    assert len(exemplars) == 5
    assert not any("?" in text or text.startswith("assistant") for text in exemplars)
    assert sum(word in text for text in exemplars
               for word in ("Hiked", "hiking", "long loop")) >= 4


TWO_FRIENDS = [  # (at, speaker, text) of one conversation between Ana and Ben
    ("2023-05-06 18:00", "Ana", "I went hiking at Pine Lake on Saturday, so muddy!"),
    ("2023-05-06 18:01", "Ben", "Sounds fun. I spent the weekend painting the fence."),
    ("2023-05-06 18:02", "Ana", "My sister is visiting next week."),
    ("2023-06-10 18:00", "Ana", "I started a pottery class on Tuesdays."),
    ("2023-06-10 18:01", "Ben", "Nice, I finally fixed my bike."),
    ("2023-06-10 18:02", "Ana", "Went hiking again yesterday, up Eagle Ridge this time."),
    ("2023-06-10 18:03", "Ana", "Work has been busy lately."),
]


def test_a_count_never_matches_by_the_speakers_name(tmp_path):
    """"How many times has Ana gone hiking?" counts Ana's two hikes by "hiking", not her
    five turns by "ana": what a speaker said is filtered by who said it, and each of her
    turns holds her name."""
    path = tmp_path / "bank.db"
    with Memory.open(path, embedder=required_embedder_dir(), country="US") as memory:
        for at, speaker, text in TWO_FRIENDS:
            memory.add(text, at=at, speaker=speaker, conversation="friends")
        response = memory.search("How many times has Ana gone hiking?")
    assert response.count == 2, _count_note(response)
    assert "by the words 'hiking'" in _count_note(response)


def test_a_count_reads_the_kind_from_each_reports_neighbourhood(memory, monkeypatch):
    """``kind_neighbourhood`` (5% of the bank's pairs by default): each of the range's
    reports stands out by how close it and the memories most like it are to the kind
    counted; 0 reads each report alone. Both count the March hikes here, the Fox Valley loop
    among them and the cat's adoption not."""
    asked = []
    read = memory.store.neighbourhood_closeness

    def reading(memory_ids, direction, share, **scope):
        asked.append(share)
        return read(memory_ids, direction, share, **scope)

    monkeypatch.setattr(memory.store, "neighbourhood_closeness", reading)
    question = "How many times did I go hiking in March 2023?"
    for settings, expected_reads in ((None, [0.05]), (RetrievalSettings(kind_neighbourhood=0), [])):
        asked.clear()
        response = memory.search(question, settings=settings)
        assert asked == expected_reads
        counted = " ".join(c.memory.content for c in response.results
                           if c.list_name == "counted")
        assert response.count == 3 and "Fox Valley" in counted and "Pixel" not in counted
    for wrong in (-0.1, 1.0):
        with pytest.raises(InputError, match="kind_neighbourhood"):
            RetrievalSettings(kind_neighbourhood=wrong)


NEW_JOURNAL = [
    ("2026-03-02 19:00", "Went hiking at Pine Lake with Ana; muddy trail"),
    ("2026-03-05 19:00", "Cooked a mushroom risotto for Ben"),
    ("2026-03-09 19:00", "Finished the quarterly report at work, long day"),
    ("2026-03-14 19:00", "Went hiking at Eagle Ridge alone"),
    ("2026-03-20 19:00", "Watched Dune at the cinema with Ana"),
    ("2026-03-27 19:00", "Fixed the leaking kitchen tap myself"),
    ("2026-04-01 19:00", "Made a lentil soup, Ben came over"),
    ("2026-04-04 19:00", "Saw Past Lives at home with Leo, cried at the end"),
    ("2026-04-10 19:00", "Hiked up Pine Lake again, sunny"),
]


@pytest.fixture(scope="module")
def new_journal(tmp_path_factory):
    yield from opened_journal(tmp_path_factory, "new", NEW_JOURNAL)


def test_a_count_in_a_new_journal_reads_the_drop_among_the_closest_half(new_journal):
    """Six reports in March, none holding "films": over all six the largest drop fell before
    the tap and the risotto and four were counted; among the closest four it falls after
    Dune."""
    films = new_journal.search("How many films did I watch in March 2026?", as_of="2026-04-12")
    assert films.count == 1 and "Dune" in films.results[0].memory.content


def test_two_reports_in_a_range_show_no_drop_and_only_the_closest_stands_out(new_journal):
    """The hike and the risotto: the hike by its word, nothing more (both were counted)."""
    hikes = new_journal.search("How many times did I go hiking until 2026-03-06?",
                               as_of="2026-04-12")
    assert hikes.count == 1 and "Pine Lake" in hikes.results[0].memory.content


@pytest.mark.parametrize(("text", "verb"), [
    ("me: Cooked green curry for Olga; Karin brought the wine.", "cooked"),
    ("me: On Wednesday I cooked spinach lasagna for Pablo.", "cooked"),
    ("me: Three days ago I drove out to see cousin Mirela in Ghent.", "drove"),
    ("me: Finally watched Red Signal; the ending made no sense.", "watched"),
    ("me: I finally watched Red Signal.", "watched"),
    ("me: Began North of the Fog on the train.", "began"),
    ("Melanie painted a sunset by the lake.", "painted"),
    ("me: Made fish tacos at home with Hugo.", None),  # "made" says too little
    ("me: Went hiking at Pine Lake.", None),
    ("me: Tried a new recipe for shakshuka.", None),
    ("me: Took the train to visit Grandpa Theo; we cooked together.", None),
    ("me: The milk had gone off, so breakfast was toast.", None),
    ("me: Lovely weather all week.", None),
])
def test_the_main_verb_is_what_a_report_says_its_writer_did(text, verb):
    from ramem_local.retrieve import main_verb

    assert main_verb(text) == verb


DISHES = [  # March 2026: two meals, two visits (at one we cooked together), a film, office days
    ("2026-01-10 19:00", "Cooked pork dumplings for Chloe; everyone asked for seconds."),
    ("2026-01-17 19:00", "Made banana bread at home with Karin; the kitchen was a mess."),
    ("2026-01-24 20:00", "Watched Night Harbor with Ben at the cinema; the soundtrack was "
                         "great."),
    ("2026-02-07 19:00", "I cooked miso ramen for Grace; it took twice as long as the recipe "
                         "said."),
    ("2026-02-14 11:00", "Visited my sister Lena in Utrecht; we looked through old photos."),
    ("2026-02-21 10:00", "Hiked up Eagle Ridge with Ben; the view from the top was clear."),
    ("2026-03-03 19:00", "Cooked green curry for Olga; Karin brought the wine."),
    ("2026-03-05 09:00", "Worked on the budget review with Ben at the office; nothing much "
                         "else happened."),
    ("2026-03-07 20:00", "Finally watched Red Signal; the ending made no sense."),
    ("2026-03-10 19:00", "On Tuesday I cooked fish tacos for Pablo; it came out a bit too "
                         "salty."),
    ("2026-03-12 09:00", "Worked on the hiring plan with Karin at the office; I stayed up too "
                         "late."),
    ("2026-03-15 13:00", "Drove out to see Grandpa Theo in Utrecht; we cooked together."),
    ("2026-03-19 09:00", "Worked on the client proposal with Nils at the office; it went "
                         "better than expected."),
    ("2026-03-22 10:00", "Hiked up Hawk Hill with Lena; we saw two deer near the stream."),
    ("2026-03-26 09:00", "Had a long meeting with Leo about the quarterly report."),
    ("2026-03-28 11:00", "I drove out to see my parents in Porto; we walked along the canal."),
]


@pytest.fixture(scope="module")
def dishes(tmp_path_factory):
    yield from opened_journal(tmp_path_factory, "dishes", DISHES)


def test_a_count_takes_the_reports_saying_i_did_what_a_counted_report_did(dishes):
    """"How many dishes did I make in March?" shares no word with any report ("dishes",
    "make"). The two meals stand out, the visit where "we cooked together" does not, and it
    is counted because a counted report says "I cooked"; off, it is not. In this short month
    MiniLM also lets one office day stand out (one too many, with the reading on or off); it
    lends "worked" to nothing: the two other office days outnumber the one counted report
    saying it."""
    from ramem_local.retrieve import RetrievalSettings

    question = "How many dishes did I make in March 2026?"
    on = dishes.search(question, as_of="2026-04-01")
    off = dishes.search(question, as_of="2026-04-01",
                        settings=RetrievalSettings(count_by_verbs=False))

    def counted(response) -> list[str]:
        return [c.memory.content for c in response.results if c.list_name == "counted"]

    assert on.count == off.count + 1
    assert [text for text in counted(on) if text not in counted(off)] == [
        "me: Drove out to see Grandpa Theo in Utrecht; we cooked together."]
    assert sum("cooked" in text.lower() for text in counted(on)) == 3
    assert sum(text.startswith("me: Worked") for text in counted(on)) <= 1
    assert "1 more saying I did what a counted report did ('cooked')" in _count_note(on)
    assert "saying I did" not in _count_note(off)
    printed = CliRunner().invoke(cli, ["--db", str(dishes.store.path), "search", question,
                                       "--as-of", "2026-04-01"])
    (line,) = [ln for ln in printed.output.splitlines() if ln.startswith("count: ")]
    assert line.endswith("did what a counted report did ('cooked'))")  # both parentheses


def test_a_verb_lends_no_reports_from_an_aside_nor_more_than_are_counted(dishes):
    """The verbs come from what the counted reports say they did: a report counted by a
    word of its aside lends none ("cook" in "we cooked together" says nothing of "Drove out
    to see Grandpa Theo", and the visit to my parents stays out), and a verb adds no more
    reports than there are counted reports saying it ("worked", from one day at the office,
    would add two more)."""
    from ramem_local.retrieve import ASSISTANT, _doing_the_same

    store = dishes.store
    ids = {dishes.get(i).content: i for i in range(1, len(DISHES) + 1)}

    def occurrences(**kwargs):
        return store.occurrences(assistant=ASSISTANT, **kwargs)

    def memory_id(start: str) -> int:
        (found,) = [i for text, i in ids.items() if text.startswith("me: " + start)]
        return found

    march = (_ts("2026-03-01"), _ts("2026-04-01"))
    visit, curry = memory_id("Drove out"), memory_id("Cooked green curry")
    office = memory_id("Worked on the budget")
    added, verbs = _doing_the_same(store, occurrences, {visit: 0, curry: 0}, {visit, curry},
                                   ["cook"], set(), *march)
    assert verbs == ["cooked"] and set(added) == {memory_id("On Tuesday I cooked")}
    added, verbs = _doing_the_same(store, occurrences, {office: 0}, set(), [], set(), *march)
    assert (added, verbs) == ({}, [])
    hiring = memory_id("Worked on the hiring plan")
    added, verbs = _doing_the_same(store, occurrences, {office: 0, hiring: 0}, set(), [],
                                   set(), *march)
    assert verbs == ["worked"] and set(added) == {memory_id("Worked on the client proposal")}


SWIMS = [  # the event the range is given by does what is asked too
    ("2024-05-04 07:00", "Went swimming at the lido with Ana before work."),
    ("2024-05-18 07:00", "Went swimming at the lido with Tom; the water was cold."),
    ("2024-06-01 10:00", "Swam the 200 m at the club's swimming gala and came fourth."),
    ("2024-06-08 07:00", "Went swimming at the lido again, slow and easy."),
]


@pytest.mark.parametrize(("question", "first"), [
    ("When did I last go swimming before the swimming gala?", "with Tom"),
    ("When did I first go swimming after the swimming gala?", "slow and easy"),
])
def test_the_event_a_range_is_given_by_is_not_what_the_order_lists(tmp_path, question, first):
    """"Before the gala" holds the gala's own day (its time of day is rarely known), so the
    gala's entry, a report of swimming, was the latest swim before it."""
    with Memory.open(journal_bank(tmp_path / "swims.db", SWIMS)) as memory:
        response = memory.search(question, as_of="2024-07-01")
    assert response.trace.frame.anchor is not None
    assert response.trace.frame.anchor.memory_id is not None
    assert first in _contents(response)[0]


@pytest.mark.parametrize(("days", "kept"), [
    # a mention a week before three days in the place: not the arrival
    ([0, 7, 8, 9], [7, 8, 9]),
    ([0, 6, 7, 9], [6, 7, 9]),
    # must not fire: a stay named on its first and last day, an arrival then a few quiet
    # days, a stay named every other day, a run too short to say
    ([0, 7], [0, 7]),
    ([0, 3, 4, 5], [0, 3, 4, 5]),
    ([0, 2, 4, 6], [0, 2, 4, 6]),
    ([0, 4, 5, 7], [0, 4, 5, 7]),  # the first gap not more than twice the widest other
    ([0, 5, 6, 8], [5, 6, 8]),
])
def test_a_stay_starts_after_the_day_that_leads_into_it(days, kept):
    """``retrieve._without_lead_in``: the days of one run of reports naming a place."""
    from ramem_local.retrieve import _without_lead_in

    start = int(datetime(2024, 5, 1, 12, tzinfo=timezone.utc).timestamp())
    run = [(day, start + day * 86400) for day in days]
    assert [day for day, _ in _without_lead_in(run, timezone.utc)] == kept


FIRST_DAYS = [  # "first" is in the books' entries, not in the first day's
    ("2024-03-02 21:00", "Reading The Glass Harbor now, first chapters slow."),
    ("2024-03-03 10:00", "Cleaned the bathroom."),
    ("2024-06-08 18:00", "Started at Pinecone Labs today, nervous."),
    ("2024-06-09 10:00", "Slept in, then pancakes with Tom."),
    ("2024-09-14 21:00", "Reading North of the Fog now, first chapters slow."),
    ("2024-09-15 10:00", "Cleaned the windows."),
    ("2024-04-10 19:00", "Mum's 69th birthday dinner at the Italian place."),
    ("2024-04-11 10:00", "Walked the dog by the river."),
    ("2025-04-10 19:00", "Mum's 70th birthday dinner at the Italian place."),
    ("2025-04-11 10:00", "Repotted the basil."),
]


@pytest.mark.parametrize(("question", "first"), [
    # "first" says which day, it counts nothing
    ("What did I do the day after my first day at Pinecone Labs?", "pancakes"),
    # must not fire: a number names which occasion
    ("What did I do the day after Mum's seventieth?", "Repotted"),
    ("What did I do the day after Mum's 69th birthday?", "Walked the dog"),
])
def test_an_events_number_names_which_occasion_first_does_not(tmp_path, question, first):
    with Memory.open(journal_bank(tmp_path / "first.db", FIRST_DAYS)) as memory:
        response = memory.search(question, as_of="2025-12-01")
    assert response.trace.frame.anchor.memory_id is not None
    assert first in _contents(response)[0]


def test_an_event_is_looked_for_deeper_when_the_first_candidates_hold_no_report(tmp_path):
    """Fifty-five of the assistant's answers open with "Starting my new job": the first 25
    candidates for "starting my new job" are all answers, none of them a report of the event."""
    entries = [("2024-06-08 18:00", "Started at Pinecone Labs today, nervous."),
               ("2024-06-09 10:00", "Slept in, then pancakes with Tom."),
               *[(f"2024-{month:02d}-{day:02d} 19:00", f"{what} with {who}.")
                 for month, what in enumerate(("Cooked dal", "Walked the canal", "Watched a film",
                                               "Fixed the bike", "Read in the park",
                                               "Played chess", "Went swimming",
                                               "Baked bread", "Visited the market",
                                               "Painted the fence", "Went to a gig"), 1)
                 for day, who in enumerate(("Tom", "Lena", "Priya", "Jonah", "Sofia", "Marek",
                                            "Aisha", "Callum", "Ravi", "Ines", "Otto",
                                            "Mira", "Femi", "Hana", "Luca"), 10)]]
    chat = [(f"2024-{month:02d}-{day:02d} 20:0{turn}", speaker, text)
            for month in range(1, 12) for day in (2, 9, 16, 23, 28)
            for turn, (speaker, text) in enumerate([
                ("me", "How do I get into sourdough?"),
                ("assistant", f"Starting my new job, part {month}/{day}: a good question. Start "
                              "simple: start early, and start each new week with a plan.")])]
    with Memory.open(journal_bank(tmp_path / "deeper.db", entries, chat)) as memory:
        response = memory.search("What did I do the day after starting my new job?",
                                 as_of="2024-12-01")
    assert response.trace.frame.anchor.memory_id is not None
    assert "pancakes" in _contents(response)[0]


ANCHORS_BY_WHOSE = [  # others' moves after mine; Lena named often, her wedding once
    *[(f"2024-{month:02d}-{day:02d} 12:00", text) for month in (8, 9, 10, 11)
      for day, text in ((3, "Long lunch with Lena."), (9, "Lena called but I missed it."),
                        (15, "Long phone call with Lena."), (21, "Coffee with Lena."),
                        (26, "Lena texted about the weekend."), (28, "Long lunch with Lena."),
                        (29, "Lena came round for dinner."), (30, "Walked to the canal with "
                                                                  "Lena."))],
    ("2024-03-01 09:00", "Keys for Chapel Row collected, moved in."),
    ("2024-03-02 10:00", "Hung the pictures in the new hallway."),
    ("2024-05-10 18:00", "Jonah is moving to Leeds, apparently."),
    ("2024-05-11 10:00", "Cooked a Sunday roast for Tom."),
    ("2024-06-20 18:00", "Marek is moving to Leeds, apparently."),
    ("2024-06-21 10:00", "Fixed the bike chain at last."),
    ("2024-04-01 12:00", "Long lunch with Lena."),
    ("2024-04-06 21:00", "Danced all night at Lena's wedding."),
    ("2024-04-07 11:00", "Slept until noon, then a slow walk by the river."),
    ("2024-04-20 12:00", "Long phone call with Lena."),
    ("2024-05-02 12:00", "Long lunch with Lena."),
    ("2024-07-01 09:00", "Adopted a ginger cat from the shelter and named him Miso."),
    ("2024-07-02 09:00", "Bought a scratching post for the hall."),
    ("2024-08-01 09:00", "Adopted a grey cat from the shelter and named her Pixel."),
    ("2024-08-02 09:00", "Took Pixel to the vet for her jabs."),
    ("2024-08-15 09:00", "I adopted a black cat from the shelter and named him Shadow."),
    ("2024-08-28 09:00", "Adopted a tabby cat from the shelter and named her Nova."),
]


@pytest.fixture(scope="module")
def anchors_by_whose(tmp_path_factory):
    return journal_bank(tmp_path_factory.mktemp("whose") / "anchors.db", ANCHORS_BY_WHOSE)


@pytest.mark.parametrize(("question", "first"), [
    # an event that names no one else is the writer's, not "Jonah is moving to Leeds"
    ("What did I do the day after the move?", "Hung the pictures"),
    # must not fire: a named person's doing is their event
    ("What did I do the day after Jonah's move?", "Cooked a Sunday roast"),
    # the event's meaning, among the reports naming Lena: not her latest short entry
    ("What did I do the day after Lena getting married?", "Slept until noon"),
    # must not fire: the name is the event's own ("Miso"), not the closest adoption
    ("What did I do the day after I adopted Miso the cat?", "scratching post"),
])
def test_an_events_anchor_is_whose_it_is(anchors_by_whose, question, first):
    with Memory.open(anchors_by_whose) as memory:
        response = memory.search(question, as_of="2024-12-01")
    assert response.trace.frame.anchor.memory_id is not None
    assert first in _contents(response)[0]


def test_the_kind_joins_the_ranking_inside_a_range_where_one_person_wrote(bank, tmp_path):
    """``retrieve._kind_joins_the_range``: by default ("journals") where what is searched was
    written by one person, their assistant aside; not in a conversation between two people
    (LoCoMo's: its triggered D@1 lost 0.05 with it, results/natural-journal.txt)."""
    from ramem_local.retrieve import _kind_joins_the_range

    talk = tmp_path / "talk.db"
    with Memory.open(talk, embedder=required_embedder_dir()) as memory:
        memory.add("I went hiking at Pine Lake on Saturday.", at="2024-03-02 10:00",
                   speaker="Ana", conversation="talk")
        memory.add("Nice! I watched a film at home.", at="2024-03-02 10:01", speaker="Ben",
                   conversation="talk")
    with Memory.open(bank) as journal, Memory.open(talk) as conversation:
        assistant = journal.store.conversation_id("assistant")
        for setting, in_journal, in_talk in (("journals", True, False), ("always", True, True),
                                             ("never", False, False)):
            settings = RetrievalSettings(kind_in_range=setting)
            assert _kind_joins_the_range(journal.store, settings, None) is in_journal
            assert _kind_joins_the_range(journal.store, settings, assistant) is in_journal
            assert _kind_joins_the_range(conversation.store, settings, None) is in_talk
    with pytest.raises(InputError, match="kind_in_range"):
        RetrievalSettings(kind_in_range="sometimes")
