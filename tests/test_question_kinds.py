"""The readings of multi-step questions: order, counting, a time given by another event, and
the range an event's relation gives. The tables are the specification of what we understand,
with the rows that must not fire."""

from __future__ import annotations

from datetime import datetime
from zoneinfo import ZoneInfo

import pytest

from ramem_local.recall.frame import build_frame
from ramem_local.recall.question_kinds import (
    anchor_order,
    asked_thing,
    asks_how_many,
    asks_whom,
    between_range,
    detect_order,
    find_event_anchor,
    is_counting,
    lists_since,
    occasion_query,
    relation_range,
    time_end_range,
    without_counting_words,
    without_order_words,
)
from ramem_local.types import EventAnchor, TimeCue, TimeRange

UTC = ZoneInfo("UTC")


@pytest.mark.parametrize(
    ("question", "order"),
    [
        ("When did I last make lentil soup?", "latest"),
        ("When was the last time I hiked up Eagle Ridge?", "latest"),
        ("When did Caroline last go camping?", "latest"),
        ("When was I last at the dentist?", "latest"),
        ("What did I cook most recently?", "latest"),
        ("What was the most recent time I saw Leo?", "latest"),
        ("What is my latest book?", "latest"),
        ("When did I first see the Velvet Tides live?", "earliest"),
        ("When did I watch Night Harbor for the first time?", "earliest"),
        ("When was the first time I met Ana?", "earliest"),
        ("What was my earliest trip to Porto?", "earliest"),
        # must not fire
        ("What happened in the last chapter?", None),
        ("Did I give first aid?", None),
        ("What did I do last week?", None),
        ("Where was I last Saturday?", None),
        ("What did I do on the first of May?", None),
        ("Did I travel first class?", None),
        ("At last, did the parcel arrive?", None),
        ("Who ate the last of the cake?", None),
        ("What did I do in the first few days of June?", None),
        ("Did we meet last summer?", None),
    ],
)
def test_order_is_read_from_order_words_only(question: str, order: str | None) -> None:
    assert detect_order(question) == order


@pytest.mark.parametrize(
    ("question", "need"),
    [
        ("When did I last make lentil soup?", "When did I make lentil soup?"),
        ("When did I watch Night Harbor for the first time?", "When did I watch Night Harbor ?"),
        ("When was the last time I hiked up Eagle Ridge?", "When was I hiked up Eagle Ridge?"),
        ("What happened in the last chapter?", "What happened in the last chapter?"),
    ],
)
def test_order_words_leave_the_need(question: str, need: str) -> None:
    assert without_order_words(question) == need


@pytest.mark.parametrize(
    ("question", "counting"),
    [
        ("How many times did I go hiking in March 2023?", True),
        ("How often did I visit Aunt Rosa?", True),
        ("How many films did I watch in May 2024?", True),
        ("How many books has Caroline read?", True),
        ("Which films have I watched since February 2023?", True),
        ("What books did Melanie read last year?", True),
        ("Which places did we visit in Italy?", True),
        ("In May 2026, how many times did I cook?", True),  # "May": the month, not the modal
        ("Count my hikes in 2026.", True),
        ("Number of films since March?", True),
        ("Count the times I went hiking in May.", True),
        # must not fire
        ("May I ask how often you cook?", False),
        ("Count on me for the move.", False),
        ("The number of the house?", False),
        ("How many eggs go in a pancake batter?", False),
        ("Which bus did I take to Porto?", False),
        ("Which trail did I hike last weekend?", False),
        ("How much did the repair cost?", False),
        ("What did I cook yesterday?", False),
        ("Which glasses should I buy?", False),
        ("What exciting news did Maria share on 16 June, 2023?", False),  # "news": singular
        ("After how many weeks did Tim reconnect with Ana?", False),  # a duration
        ("How often does John get to see sunsets?", False),  # a stated habit
        ("How many kids does Melanie have?", False),  # a stated fact
    ],
)
def test_counting_is_read_from_how_many_and_plural_which(question: str, counting: bool) -> None:
    assert is_counting(question) is counting


@pytest.mark.parametrize(
    ("question", "lists"),
    [
        ("What have I cooked since 20 February 2026?", True),
        ("Who have I visited since May?", True),
        ("Which films has Ana watched since March?", True),
        ("What did I cook since May?", False),  # not the present perfect
        ("Have I cooked since May?", False),  # a yes/no question
    ],
)
def test_present_perfect_since_questions_list(question: str, lists: bool) -> None:
    assert lists_since(question) is lists


def test_a_plural_which_counts_only_over_a_range() -> None:
    reference = int(datetime(2024, 4, 1, tzinfo=UTC).timestamp())
    with_range = build_frame("Which films did I watch in March 2024?", reference_time=reference,
                             tz=UTC, timeline=None)
    without = build_frame("What books has Melanie read?", reference_time=reference, tz=UTC,
                          timeline=None)
    how_many = build_frame("How many books has Melanie read?", reference_time=reference,
                           tz=UTC, timeline=None)
    assert with_range.counting and not without.counting and how_many.counting


def test_counting_words_leave_the_need() -> None:
    assert without_counting_words("How many times did I go hiking?") == "did I go hiking?"
    assert without_counting_words("Count my hikes in May.") == "hikes in May."
    assert without_counting_words("Number of films since March?") == "films since March?"


@pytest.mark.parametrize("question", ["Count my hikes in May 2024.", "Number of hikes in May 2024?",
                                      "In May 2024, how many times did I hike?"])
def test_a_count_said_as_a_command_or_after_its_time_asks_how_many(question: str) -> None:
    reference = int(datetime(2024, 7, 1, tzinfo=UTC).timestamp())
    frame = build_frame(question, reference_time=reference, tz=UTC, timeline=None)
    assert frame.counting and asks_how_many(question)
    assert frame.time_range == TimeRange(_day("2024-05-01"), _day("2024-06-01"))


@pytest.mark.parametrize(
    ("question", "phrase", "relation"),
    [
        ("What did I cook the day after I adopted the cat?", "I adopted the cat", "day_after"),
        ("Where did I hike the week before Lena's wedding?", "Lena's wedding", "week_before"),
        ("What did I do three days before the exam?", "the exam", "days_before:3"),
        ("What did I do 2 weeks after the move?", "the move", "weeks_after:2"),
        ("What did I do the weekend after my sister's wedding?", "my sister's wedding",
         "weekend_after"),
        ("What did I read the morning after the concert?", "the concert", "day_after"),
        ("What have I done since I moved to Leeds?", "I moved to Leeds", "since"),
        ("What did I eat after the job interview at Brightwell?",
         "the job interview at Brightwell", "after"),
        ("Where did I live before the move?", "the move", "before"),
        ("What did I read until my trip to Porto?", "Porto", "until"),  # a trip: its days
        ("What did I read up to the move?", "the move", "until"),
        # "up to" after "be" or "get" is a doing, the relation is the next one
        ("What have I been up to since the move?", "the move", "since"),
        ("What was I up to before the move?", "the move", "before"),
        ("Which films have I watched ever since Lena's wedding?", "Lena's wedding", "since"),
        ("What did I do a month before the wedding?", "the wedding", "month_before"),
        ("What did I do in the week after I broke my wrist?", "I broke my wrist",
         "week_after"),
        ("What did I do during the two weeks before the exam?", "the exam", "weeks_before:2"),
        # a plural unit without a count: a stretch of the next unit
        ("What did I do in the days after I adopted the cat?", "I adopted the cat",
         "week_after"),
        ("Where did I hike in the weeks before the move?", "the move", "month_before"),
        ("What did I read in the months after the surgery?", "the surgery", "months_after:3"),
        # near words: the day or the week next to the event
        ("What did I do right after I broke my wrist?", "I broke my wrist", "day_after"),
        ("What did I eat just before the exam?", "the exam", "day_before"),
        ("Who did I call immediately after the accident?", "the accident", "day_after"),
        ("What did I do shortly after the move?", "the move", "week_after"),
        ("What did I buy soon after I moved to Leeds?", "I moved to Leeds", "week_after"),
        ("Where did I go not long before the wedding?", "the wedding", "week_before"),
        ("What have I done ever since the move?", "the move", "since"),
        ("In May, what did I cook after the move?", "the move", "after"),  # May: the month
        # the event's own day, week, month or year
        ("What did I do the day I moved?", "I moved", "day_of"),
        ("What did I eat on the day I adopted Pixel?", "I adopted Pixel", "day_of"),
        ("What did I do the day of the move?", "the move", "day_of"),
        ("What did I eat the morning of the exam?", "the exam", "day_of"),
        ("What happened the night we met?", "we met", "day_of"),
        ("What did I do the same day I broke my wrist?", "I broke my wrist", "day_of"),
        ("What did I do the week I started at Brightwell?", "I started at Brightwell",
         "week_of"),
        ("How many times did I cook the week that Tom visited?", "Tom visited", "week_of"),
        ("What did I read the month I moved to Leeds?", "I moved to Leeds", "month_of"),
        ("What did I do the weekend I moved?", "I moved", "weekend_of"),
        ("Who did I see the weekend of Lena's wedding?", "Lena's wedding", "weekend_of"),
        ("Where did I live the year we met?", "we met", "year_of"),
        ("What did I do on my birthday?", "my birthday", "day_of"),
        ("What did I eat at Lena's wedding?", "Lena's wedding", "day_of"),
        ("What did I do at our neighbour Sven's retirement party?",
         "our neighbour Sven's retirement party", "day_of"),
        ("What did Melanie do on her birthday?", "her birthday", "day_of"),
        # a stay somewhere named: its span is read from the bank
        ("What did I eat while I was in Lisbon?", "Lisbon", "stay"),
        ("When I was in Lisbon, what did I eat?", "Lisbon", "stay"),
        ("What did I do during my trip to Whitby?", "Whitby", "stay"),
        ("Who did I meet while visiting New York?", "New York", "stay"),
        ("What did I eat when we were visiting Lisbon?", "Lisbon", "stay"),
        ("What did I get up to in Oslo?", "Oslo", "stay"),
        ("What did we eat on our holiday in Crete?", "Crete", "stay"),
        ("What did I buy while we were staying in the Lake District?", "Lake District",
         "stay"),
        ("What did I read during our week at Whitby?", "Whitby", "stay"),
        ("What did I eat the last time I was in Lisbon?", "Lisbon", "stay"),
        ("What did I do on my first trip to Porto?", "Porto", "stay"),
        # a past doing hung on "when", "around the time of": the event's own day
        ("Which book was I halfway through when we moved?", "we moved", "day_of"),
        ("What was I reading when Gran died?", "Gran died", "day_of"),
        ("Where was I living when my dog died?", "my dog died", "day_of"),  # "dog" a verb too
        ("What did I cook when our neighbours moved out?", "our neighbours moved out", "day_of"),
        ("What did I cook when Lena came to stay?", "Lena came to stay", "day_of"),
        ("When my sister got married, where was I living?", "my sister got married",
         "day_of"),
        ("Who was I seeing a lot of around the time that I started at Pinecone Labs?",
         "I started at Pinecone Labs", "day_of"),
        ("What was I listening to around the time of the move?", "the move", "day_of"),
        ("What did I read at the time of the operation?", "the operation", "day_of"),
        # a place ending a question with no time of its own
        ("What did I eat in Lisbon?", "Lisbon", "stay"),
        ("Where did I stay in the Lake District?", "Lake District", "stay"),
    ],
)
def test_a_time_given_by_another_event(question: str, phrase: str, relation: str) -> None:
    anchor = find_event_anchor(question, [])
    assert anchor is not None
    assert (anchor.phrase, anchor.relation) == (phrase, relation)
    assert question[anchor.span[0]:anchor.span[1]] == anchor.text


@pytest.mark.parametrize(
    "question",
    [
        "Since you asked, what is the plan?",
        "What did I do after all?",
        "Did it rain before long?",
        "What did I do after that?",
        "What did I do the day after tomorrow?",
        "What did I cook since then?",
        "What did I do before 9 June 2023?",  # a date: a time cue, read by recall.time
        "since since since",  # no content word: no event to search for
        "What did I do the week before the the the?",
        "What did I do right after all?",
        "Is it just before the exam?",  # the present: no time fixed by the event
        "What did I do the weekend after next?",  # a time (no cue reads it), no event "next"
        "What did I plan for the week after next?",
        # the same time: a time word, a place, an occasion without its owner, a plan
        "What day of the week did I move?",
        "What did I do the day of the week?",
        "What time of day did I run?",
        "What did I read on the train?",
        "What did I do at my desk?",
        "What did I do at a wedding?",
        "What did I do at the wedding?",
        "Who came to my birthday party?",
        "What did I do on my way to the birthday party?",
        "What will I pack the day I leave?",
        "What should I wear on my birthday?",
        # no stay: no place named, a question about when, the present
        "What did I read when I was in the shower?",
        "What did I learn when I was in school?",
        "When was I in Lisbon?",
        "What will I eat while I'm in Lisbon?",
        "What did I eat in Lisbon last week?",  # a time of its own: read as the week
        "What will I eat in Lisbon?",
        # an order of nothing
        "What did I do after I first?",
        "What did I do since my very last?",
    ],
)
def test_no_event_anchor(question: str) -> None:
    reference = datetime(2023, 7, 1, tzinfo=UTC)
    frame = build_frame(question, reference_time=int(reference.timestamp()), tz=UTC,
                        timeline=None)
    assert frame.anchor is None


def _range_frame(question: str):
    reference = datetime(2026, 12, 4, 12, tzinfo=UTC)
    return build_frame(question, reference_time=int(reference.timestamp()), tz=UTC,
                       timeline=None)


def _end(end) -> str:
    if isinstance(end, EventAnchor):
        return end.phrase
    assert isinstance(end, TimeCue) and end.range is not None
    return datetime.fromtimestamp(end.range.start, UTC).date().isoformat()


@pytest.mark.parametrize(
    ("question", "anchor", "other_end", "need"),
    [
        ("What did I do between adopting Miso and taking her to the vet?", "adopting Miso",
         "taking her to the vet", "What did I do?"),
        ("What did I cook between the move and my sister's wedding?", "the move",
         "my sister's wedding", "What did I cook?"),
        ("How many films did I watch from the day I adopted the cat until Lena's wedding?",
         "I adopted the cat", "Lena's wedding", "How many films did I watch?"),
        ("What did I read from the day of the move to the day I started the new job?",
         "the move", "I started the new job", "What did I read?"),
        ("What did I do since Lena's wedding until May?", "Lena's wedding", "2026-05-01",
         "What did I do?"),
        # A time at the first end: the event anchors the range, the time is its other end.
        ("What did I cook between Christmas and the move?", "the move", "2025-12-25",
         "What did I cook?"),
        ("Which trails did I hike from March 2024 until I broke my wrist?", "I broke my wrist",
         "2024-03-01", "Which trails did I hike?"),
        ("What happened between Maria adopting Coco and the party?", "Maria adopting Coco",
         "the party", "What happened?"),
        ("What did I cook after adopting the cat and before the Fox Valley loop?",
         "adopting the cat", "the Fox Valley loop", "What did I cook?"),
        # The second joint: "to" left "Tallinn until Leo's wedding", no end.
        ("What movies did I see from the day I flew to Tallinn until Leo's wedding?",
         "I flew to Tallinn", "Leo's wedding", "What movies did I see?"),
        ("What did I cook between the day I planted the apple tree and Uncle Karl's "
         "retirement party?", "I planted the apple tree", "Uncle Karl's retirement party",
         "What did I cook?"),
        # an end named by order: its latest report (``retrieve.ordered_anchor``)
        ("What did I read between my last hike and the move?", "my hike", "the move",
         "What did I read?"),
    ],
)
def test_a_range_between_two_events_or_an_event_and_a_time(question: str, anchor: str,
                                                           other_end: str, need: str) -> None:
    frame = _range_frame(question)
    assert frame.anchor is not None and frame.anchor.relation == "between"
    got = (frame.anchor.phrase, _end(frame.other_end), frame.need)
    assert got == (anchor, other_end, need)
    assert frame.guard == "anchor"


@pytest.mark.parametrize(
    "question",
    [
        "Who sat between Anna and Tom?",  # people: a bare name is no event
        "What did I choose between the blue dress and the red one?",  # a choice
        "What is the difference between the move and the wedding?",  # the present
        "What will I do between the exam and the move?",  # a plan
        "How long did it take to drive from Leeds to York?",  # places
        "What did I send from my phone to my laptop?",  # "from ... to" and no clause
        "What did I do between then and now?",
        "How many weeks passed between Maria adopting Coco and Shadow?",  # a bare name
    ],
)
def test_no_range_between_events(question: str) -> None:
    frame = _range_frame(question)
    assert frame.anchor is None or frame.anchor.relation != "between"
    assert frame.other_end is None


@pytest.mark.parametrize(
    ("question", "start", "end"),
    [  # both ends times: a date range, read by the time cues as before
        ("What did I do between 3 March 2024 and 20 May 2024?", "2024-03-03", "2024-05-21"),
        ("What did I do from May to July 2024?", "2024-05-01", "2024-08-01"),
        ("What did I do between 5 and 10 March 2024?", "2024-03-05", "2024-03-11"),
    ],
)
def test_a_range_between_two_times_stays_a_time_cue(question: str, start: str,
                                                     end: str) -> None:
    frame = _range_frame(question)
    assert frame.anchor is None and frame.guard == "filter"
    assert frame.time_range == TimeRange(_day(start), _day(end))


def test_between_range_holds_both_ends_days_whichever_comes_first() -> None:
    wedding = _day("2024-03-05") + 15 * 3600
    move = _day("2024-04-20") + 9 * 3600
    both = TimeRange(_day("2024-03-05"), _day("2024-04-21"))
    assert between_range(wedding, move, UTC) == both
    assert between_range(move, wedding, UTC) == both
    christmas = TimeRange(_day("2024-12-25"), _day("2024-12-26"))
    assert between_range(move, christmas, UTC) == TimeRange(_day("2024-04-20"),
                                                            _day("2024-12-26"))


@pytest.mark.parametrize(
    ("question", "event_day", "start", "end"),
    [  # a time without its year is the one next to the event (the question asked in 2026)
        ("What did I do between the move and Christmas?", "2023-03-04", "2023-12-25",
         "2023-12-26"),
        ("What did I do from Easter until I broke my wrist?", "2023-06-10", "2023-04-09",
         "2023-04-10"),
        ("What did I do since the move until May?", "2023-02-20", "2023-05-01", "2023-06-01"),
        ("What did I do between the move and May?", "2023-05-10", "2023-05-01", "2023-06-01"),
        # a year, or a time relative to now, is read as the question reads it
        ("What did I do between the move and Christmas 2024?", "2023-03-04", "2024-12-25",
         "2024-12-26"),
        ("What did I do between the move and last week?", "2023-03-04", "2026-11-23",
         "2026-11-30"),
    ],
)
def test_a_time_end_is_read_next_to_its_event(question: str, event_day: str, start: str,
                                              end: str) -> None:
    frame = _range_frame(question)
    assert frame.anchor is not None and isinstance(frame.other_end, TimeCue)
    starts = frame.other_end.span[0] < question.find(frame.anchor.phrase)
    got = time_end_range(frame.other_end, _day(event_day) + 12 * 3600, starts=starts, tz=UTC,
                         country="US")
    assert got == TimeRange(_day(start), _day(end))


def test_a_count_since_an_event_counts_what_the_rest_names() -> None:
    """Left in the need, "I moved to Leeds" gave the count the words "moved" and "leeds"."""
    frame = _range_frame("How many times did I hike since I moved to Leeds?")
    assert frame.anchor is not None and frame.anchor.relation == "since" and frame.counting
    assert frame.need == "did I hike?"
    not_counting = _range_frame("What did I eat after the job interview at Brightwell?")
    assert not not_counting.counting
    assert not_counting.need == "What did I eat after the job interview at Brightwell?"


def _day(text: str) -> int:
    return int(datetime.fromisoformat(text).replace(tzinfo=UTC).timestamp())


@pytest.mark.parametrize(
    ("relation", "start", "end"),
    [
        ("day_after", "2024-03-06", "2024-03-07"),
        ("day_before", "2024-03-04", "2024-03-05"),
        ("days_after:3", "2024-03-08", "2024-03-09"),
        ("week_after", "2024-03-06", "2024-03-13"),
        ("week_before", "2024-02-27", "2024-03-05"),
        ("weeks_before:2", "2024-02-20", "2024-03-05"),
        ("weekend_after", "2024-03-09", "2024-03-11"),  # 5 March 2024 is a Tuesday
        ("weekend_before", "2024-03-02", "2024-03-04"),
        ("months_after:3", "2024-03-06", "2024-06-04"),
        ("since", "2024-03-05", "2024-04-02"),
        ("after", "2024-03-05", "2024-04-02"),
        ("before", "2023-01-01", "2024-03-06"),
        ("until", "2023-01-01", "2024-03-06"),
        ("day_of", "2024-03-05", "2024-03-06"),
        ("week_of", "2024-03-04", "2024-03-11"),  # Monday to Sunday
        ("weekend_of", "2024-03-02", "2024-03-06"),  # a Tuesday: the weekend before, to it
        ("month_of", "2024-03-01", "2024-04-01"),
        ("year_of", "2024-01-01", "2025-01-01"),
    ],
)
def test_relation_range_around_the_event(relation: str, start: str, end: str) -> None:
    event = _day("2024-03-05") + 15 * 3600
    timeline = TimeRange(_day("2023-01-01"), _day("2024-06-01"))
    got = relation_range(relation, event, UTC, timeline=timeline,
                         reference_time=_day("2024-04-01") + 3600)
    assert got == TimeRange(_day(start), _day(end))


@pytest.mark.parametrize(
    ("event_day", "start", "end"),
    [
        ("2024-03-01", "2024-03-01", "2024-03-04"),  # Friday: Friday to Sunday
        ("2024-03-02", "2024-03-02", "2024-03-04"),  # Saturday: that weekend
        ("2024-03-03", "2024-03-02", "2024-03-04"),  # Sunday: that weekend
        ("2024-03-04", "2024-03-02", "2024-03-05"),  # Monday: Saturday to Monday
        ("2024-03-06", "2024-03-02", "2024-03-07"),  # Wednesday: the weekend before
        ("2024-03-07", "2024-03-07", "2024-03-11"),  # Thursday: to the weekend after
    ],
)
def test_the_weekend_of_an_event_is_the_weekend_next_to_its_day(event_day: str, start: str,
                                                                  end: str) -> None:
    got = relation_range("weekend_of", _day(event_day) + 15 * 3600, UTC, timeline=None,
                         reference_time=_day("2024-04-01"))
    assert got == TimeRange(_day(start), _day(end))


def test_since_a_month_ends_at_the_reference_day_not_the_banks_end() -> None:
    """`--as-of 2023-04-11`: "since February 2023" is Feb 1 → Apr 12, though the bank runs on
    for years."""
    reference = datetime(2023, 4, 11, 23, tzinfo=UTC)
    frame = build_frame("Which films have I watched since February 2023?",
                        reference_time=int(reference.timestamp()), tz=UTC,
                        timeline=TimeRange(_day("2020-01-01"), _day("2026-01-01")))
    assert frame.time_range == TimeRange(_day("2023-02-01"), _day("2023-04-12"))
    assert frame.counting


@pytest.mark.parametrize(
    "question",
    [
        "What did I cook a month before the wedding?",
        "What did I cook in the week after the wedding?",
        "What did I cook during the days before the wedding?",
        "What did I cook right after the wedding?",
        "What did I cook shortly before the wedding?",
        "What did I cook on the day after the wedding?",
        "What did I cook on the day of the wedding?",
        "What did I cook the week of the wedding?",
    ],
)
def test_the_words_of_a_relation_leave_the_need(question: str) -> None:
    """An article, a preposition or a near word left behind ("What did I cook a?") would be
    searched for as the need's words."""
    reference = datetime(2024, 4, 1, tzinfo=UTC)
    frame = build_frame(question, reference_time=int(reference.timestamp()), tz=UTC,
                        timeline=None)
    assert frame.anchor is not None and frame.anchor.phrase == "the wedding"
    assert frame.need == "What did I cook?"


@pytest.mark.parametrize(("phrase", "order", "searched"), [
    ("I last went hiking", "latest", "I went hiking"),
    ("my last hike", "latest", "my hike"),
    ("the last time I went hiking", "latest", "I went hiking"),
    ("my most recent trip to Porto", "latest", "my trip to Porto"),
    ("my previous visit to the dentist", "latest", "my visit to the dentist"),
    ("we last met", "latest", "we met"),
    ("I first met Sam", "earliest", "I met Sam"),
    ("my first hike", "earliest", "my hike"),
    ("the first time I went to Whitby", "earliest", "I went to Whitby"),
    # one event, not the last of several: an occasion's own day, a part, a time
    ("my first day at Brightwell", None, "my first day at Brightwell"),
    ("my last day at work", None, "my last day at work"),
    ("the last chapter of the book", None, "the last chapter of the book"),
    ("I moved to Leeds last year", None, "I moved to Leeds last year"),
    ("the move", None, "the move"),
])
def test_an_anchor_named_by_order_says_which_of_its_reports(phrase: str, order: str | None,
                                                            searched: str) -> None:
    assert anchor_order(phrase) == (order, searched)


@pytest.mark.parametrize(("question", "anchor_order_", "frame_order"), [
    # the order words are the anchor's: which hike, not how the answers are listed (before
    # 2026-12-04 the first read "latest" for the whole question, and no anchor had an order)
    ("What did I do after my last hike?", "latest", None),
    ("What have I cooked since I last went hiking?", "latest", None),
    ("What did I cook the day after the last time I went hiking?", "latest", None),
    ("Who did I see the week before I first met Sam?", "earliest", None),
    # an order of the question's own, beside an anchor without one
    ("When did I last go hiking before the move?", None, "latest"),
    ("What did I read between my last hike and the move?", "latest", None),
])
def test_order_words_inside_an_anchor_choose_its_report(question: str,
                                                       anchor_order_: str | None,
                                                       frame_order: str | None) -> None:
    reference = datetime(2024, 4, 1, tzinfo=UTC)
    frame = build_frame(question, reference_time=int(reference.timestamp()), tz=UTC,
                        timeline=None)
    assert frame.anchor is not None
    assert (frame.anchor.order, frame.order) == (anchor_order_, frame_order)
    assert not {"last", "first"} & set(frame.anchor.phrase.lower().split())


def test_an_anchor_question_names_the_event_and_keeps_the_rest_as_need() -> None:
    reference = datetime(2024, 4, 1, tzinfo=UTC)
    frame = build_frame("What did I cook the day after I adopted the cat?",
                        reference_time=int(reference.timestamp()), tz=UTC, timeline=None)
    assert frame.anchor is not None and frame.anchor.phrase == "I adopted the cat"
    assert frame.guard == "anchor"
    assert frame.need == "What did I cook?"


@pytest.mark.parametrize(("phrase", "query"), [
    ("my birthday", 'NEAR("my" "birthday", 2)'),
    ("our 10th anniversary", 'NEAR("our" "anniversary", 2)'),
    ("our wedding day", 'NEAR("our" "wedding", 2)'),
    # the last possessive names the owner
    ("Lena's birthday", 'NEAR("lena" "birthday", 2)'),
    ("my sister Lena's wedding", 'NEAR("lena" "wedding", 2)'),
    ("our neighbour Sven's retirement party", 'NEAR("sven" "retirement", 2)'),
    ("Aunt Rosa's retirement party", 'NEAR("rosa" "retirement", 2)'),
    # no occasion: found by its words
    ("my job interview at Brightwell", None),
    ("I moved", None),
])
def test_an_occasion_is_found_with_its_owner_next_to_it(phrase: str, query: str | None) -> None:
    assert occasion_query(phrase) == query


@pytest.mark.parametrize(("need", "whom"), [
    ("Who did I go to see?", True),
    ("Who have I visited?", True),
    ("Whom did Ana call?", True),
    ("Who did Nate plan to invite to his gaming party?", True),
    # a companion or anyone after a preposition
    ("Who did I go hiking with?", False),
    ("Who did I cook for?", False),
    ("Who did I talk to?", False),
    # a subject
    ("Who called me?", False),
    ("Who is Caroline?", False),
    ("Who was the new addition to Nate's family?", False),
])
def test_who_asks_for_the_person_acted_on(need: str, whom: bool) -> None:
    assert asks_whom(need) is whom


@pytest.mark.parametrize(
    ("question", "order"),
    [
        # the order word before what is asked about, closing its clause, or "how long"
        ("What was the last film I saw before my trip to Oslo?", "latest"),
        ("What was my last hike before the move?", "latest"),
        ("What was the first walk I did after the Valencia trip?", "earliest"),
        ("After the move, which dish did I cook first?", "earliest"),
        ("Which band did I see live last before the Dubrovnik trip?", "latest"),
        ("Before Gran's funeral, where had I last been walking?", "latest"),
        ("How long has it been since I saw Lena?", "latest"),
        ("How long ago did I fix the gate?", "latest"),
        ("Leading up to the move, what was the final film I watched?", "latest"),
        ("What's the latest date I was on Cairn Hill?", "latest"),
        ("What was the next film I watched after the move?", "earliest"),
        ("Which film was the last one I saw before the move?", "latest"),
        ("What was the most recent book I'd begun before the move?", "latest"),
        ("Which dish was the last I cooked before the trip?", "latest"),
        ("Which film came first after the move?", "earliest"),
        ("What did I cook for the final time before the move?", "latest"),
        ("Last film I saw before the trip?", "latest"),
        ("First hike after the move?", "earliest"),
        ("When was the previous time I fixed something?", "latest"),
        ("Tell me the last three films I watched.", "latest"),
        ("What were my first two hikes after the move?", "earliest"),
        # must not fire
        ("What did I do the next day?", None),
        ("What did I do the last three days?", None),
        ("What did I cook in the last two weeks?", None),
        ("Who came the previous week?", None),
        ("Who ate the last one of the cakes?", None),
        ("Last week, what did I cook?", None),
        ("First, what did I do?", None),
        ("What was the last film of the year?", None),
        ("What did I cook next to the stove?", None),
        ("What did I do at last?", None),
        ("What did I read last night?", None),
        ("When was the final exam?", None),
        ("What did I do on my first day at Orbis?", None),
        ("Did we stay for last orders?", None),
        ("Who came first?", None),
        ("What did I eat first thing in the morning?", None),
        ("What happened in the last chapter?", None),
    ],
)
def test_order_in_peoples_words(question: str, order: str | None) -> None:
    assert detect_order(question) == order


@pytest.mark.parametrize(
    ("question", "order"),
    [
        # an order word inside a time cue is the time's
        ("What did I get up to the weekend before last?", None),
        ("What did I do the night before last?", None),
        ("What did I cook the first week of October?", None),
        # an order beside a time cue is still one
        ("What was the last film I saw last week?", "latest"),
        ("When did I last cook in the first week of October?", "latest"),
        ("Which hike did I do first in the summer before last?", "earliest"),
        ("Which film did I see last in May?", "latest"),
        ("What did I cook first last week?", "earliest"),
    ],
)
def test_an_order_word_inside_a_time_cue_is_the_times(question: str, order: str | None) -> None:
    assert _range_frame(question).order == order


@pytest.mark.parametrize(
    ("question", "place", "relation"),
    [
        ("What was the last film I saw before my trip to Oslo?", "Oslo", "before"),
        ("Which band did I see live last before the Dubrovnik trip?", "Dubrovnik", "before"),
        ("After going to Oslo, which gig did I go to first?", "Oslo", "after"),
        ("Which trail did I walk first after the time we went to Seville?", "Seville", "after"),
        ("What did I do after I got back from Porto?", "Porto", "after"),
        ("What was the last film I saw before Oslo?", "Oslo", "before"),
        ("What did I cook in the week before my trip to Oslo?", "Oslo", "week_before"),
    ],
)
def test_a_trip_named_as_the_event_is_found_by_its_days(question: str, place: str,
                                                        relation: str) -> None:
    anchor = find_event_anchor(question, [])
    assert anchor is not None
    assert (anchor.phrase, anchor.relation, anchor.trip) == (place, relation, True)


@pytest.mark.parametrize(
    ("question", "place"),
    [
        ("What did I eat on the Oslo trip?", "Oslo"),
        ("Who did I meet while I was away in Oslo?", "Oslo"),
        ("What were we eating when we were in Seville?", "Seville"),
        ("Which sights did I visit on the Bruges trip?", "Bruges"),
        ("What did I do during our Crete holiday?", "Crete"),
    ],
)
def test_on_a_trip_is_a_stay(question: str, place: str) -> None:
    anchor = find_event_anchor(question, [])
    assert anchor is not None and (anchor.phrase, anchor.relation) == (place, "stay")


@pytest.mark.parametrize(
    "question",
    [
        "What did I eat on the trip of a lifetime?",
        "Did I take a week off?",
        "What did I pack for the trip?",
    ],
)
def test_no_trip(question: str) -> None:
    anchor = find_event_anchor(question, [])
    assert anchor is None or not anchor.trip


@pytest.mark.parametrize(
    ("question", "relation"),
    [
        ("List the walks I went on the weekend before my birthday", "weekend_before"),
        ("What did I cook on the weekend after we got back?", "weekend_after"),
        ("Where did I go on the day after the move?", "day_after"),
    ],
)
def test_a_time_cue_inside_a_span_next_to_an_event_is_the_spans_unit(question: str,
                                                                      relation: str) -> None:
    """"on the weekend" alone is a time cue (the latest weekend); before an event it is the
    unit of the span next to it, and no cue of its own."""
    reference = int(datetime(2026, 11, 17, tzinfo=UTC).timestamp())
    frame = build_frame(question, reference_time=reference, tz=UTC, timeline=None)
    assert frame.anchor is not None and frame.anchor.relation == relation
    assert frame.cues == [] and frame.time_range is None


@pytest.mark.parametrize("question", ["Where did I go on the weekend?",
                                      "What did I do last weekend before the move?"])
def test_a_time_cue_outside_a_span_unit_stays_a_cue(question: str) -> None:
    reference = int(datetime(2026, 11, 17, tzinfo=UTC).timestamp())
    frame = build_frame(question, reference_time=reference, tz=UTC, timeline=None)
    assert [cue.text for cue in frame.cues] in (["on the weekend"], ["last weekend"])


@pytest.mark.parametrize(
    ("question", "relation"),
    [
        ("What did I cook in the seven days after the move?", "stretch_after:7"),
        ("What did I cook in the three days before the move?", "stretch_before:3"),
        ("What did I cook the 10 days after the move?", "stretch_after:10"),
        ("What did I cook three days after the move?", "days_after:3"),
        ("What did I do the fortnight after the move?", "weeks_after:2"),
        ("What did I read the week following the move?", "week_after"),
        ("What did I cook in the run-up to the move?", "month_before"),
        ("How many gigs did I go to in the lead-up to the wedding?", "month_before"),
        ("What did I cook once I got back from the hospital?", "after"),
    ],
)
def test_a_span_next_to_an_event(question: str, relation: str) -> None:
    anchor = find_event_anchor(question, [])
    assert anchor is not None and anchor.relation == relation


def test_a_stretch_is_every_day_of_it_and_a_trip_counts_from_its_ends() -> None:
    moved = _day("2024-05-10") + 9 * 3600
    assert relation_range("stretch_after:7", moved, UTC, timeline=None,
                          reference_time=_day("2024-12-01")) == TimeRange(
        _day("2024-05-11"), _day("2024-05-18"))
    trip_first, trip_last = _day("2024-06-03") + 3600, _day("2024-06-07") + 3600
    before = relation_range("before", trip_first, UTC, timeline=TimeRange(_day("2024-01-01"),
                            _day("2024-12-01")), reference_time=_day("2024-12-01"),
                            last_moment=trip_last)
    assert before == TimeRange(_day("2024-01-01"), _day("2024-06-03"))
    after = relation_range("after", trip_first, UTC, timeline=None,
                           reference_time=_day("2024-12-01"), last_moment=trip_last)
    assert after.start == _day("2024-06-08")


@pytest.mark.parametrize(
    ("need", "thing"),
    [
        ("When did I cook shakshuka?", "shakshuka"),
        ("When did I make a lemon tart?", "lemon tart"),
        ("When did I fix the kitchen tap?", "kitchen tap"),
        ("When was the time I was out on the ridge?", "ridge"),
        # a kind of doing, no thing
        ("What was the film I saw?", None),
        ("Which dish did I cook?", None),
        ("Where did I go walking?", None),
        ("How often did I repair something?", None),
        ("When did Lena and I get together?", None),
        ("Which band did I see live?", None),
    ],
)
def test_the_thing_an_order_asks_about(need: str, thing: str | None) -> None:
    assert asked_thing(need) == thing


@pytest.mark.parametrize(
    ("question", "counting"),
    [
        ("How many walks in the hills did I do since July?", True),
        ("How many hikes so far this year?", True),
        ("How many films in March?", True),
        ("How many eggs go in a cake?", False),
        # every one of them, opening the question
        ("List every dish I cooked in May.", True),
        ("All the films we watched in March?", True),
        ("Name each hike I did after the move.", True),
        ("Tell me all the books I read in 2023.", True),
        ("What did I do with all the money I saved in May?", False),
        ("What did I eat every time I went to Oslo?", False),
        ("Every Sunday I walk; where did I go in May?", False),
        ("List every dish I usually cook.", False),
    ],
)
def test_counting_in_peoples_words(question: str, counting: bool) -> None:
    assert is_counting(question) == counting


@pytest.mark.parametrize(("question", "order"), [
    # one thing before or after an event, no order word read: the nearest the event
    ("Where did I hike soonest after the Lyon trip?", "earliest"),
    ("Which film came after the wedding?", "earliest"),
    ("What did I cook before the move?", "latest"),
    ("What did I eat after the trip of a lifetime?", "earliest"),
    # an order word of the question's own keeps its order
    ("What was the last film I saw after the move?", "latest"),
    # must not fire: a range with a length or two ends, since, a count, a plural list, no event
    ("What did I cook in the week after the move?", None),
    ("What did I cook the day after the wedding?", None),
    ("Between the move and the wedding, what did I cook?", None),
    ("What have I watched since the move?", None),
    ("How many films did I see after the move?", None),
    ("Which films did I watch after the move?", None),
    ("What did I cook after all?", None),
    ("What will I cook before long?", None),
])
def test_one_thing_before_or_after_an_event_is_the_nearest_it(question: str,
                                                              order: str | None) -> None:
    """In a journal (one writer). In a conversation an event is told with what followed it
    ("How did Melanie feel after the accident?"): no order there unless the question says
    one (LoCoMo dev lost 0.005 R@10 with it, results/natural-journal.txt)."""
    reference = datetime(2026, 12, 4, 12, tzinfo=UTC)
    journal = build_frame(question, reference_time=int(reference.timestamp()), tz=UTC,
                          timeline=None, one_writer=True)
    assert journal.order == order
    talk = build_frame(question, reference_time=int(reference.timestamp()), tz=UTC,
                       timeline=None, one_writer=False)
    assert talk.order == (order if "last film" in question else None)
