"""A memory's episode (ingest/anchor.py): event time of what is said (tense-aware grounding of
a turn's time cues), and the session span, event time, persons and de-duplication key of an
entry the model extracted."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest
from chat_sample import S1, S3, entry, stored_turns, ts
from hypothesis import given, settings
from hypothesis import strategies as st

from ramem_local.ingest.anchor import (
    anchor_entry,
    clause_around,
    copied_example,
    copied_turn,
    dedup_key,
    echoed_label,
    entry_subject,
    event_cues,
    first_person,
    ground_event_time,
    parse_event_day,
    tense_direction,
)
from ramem_local.ingest.extract import EntryRejected, turn_labels
from ramem_local.recall import detect_cues
from ramem_local.types import DAY, TimeRange, Turn

pytest_plugins = ("chat_fixtures",)

UTC = timezone.utc
WED = "2024-05-08"
THU = "2024-05-09"
FRI = "2024-05-10"
MON = "2024-05-13"


def said(day: str) -> int:
    """Noon UTC of ``day``."""
    return int(datetime.fromisoformat(day).replace(hour=12, tzinfo=UTC).timestamp())


def days(first: str, last: str | None = None) -> TimeRange:
    """The whole days first..last (inclusive) as a half-open range."""
    start = int(datetime.fromisoformat(first).replace(tzinfo=UTC).timestamp())
    end = int(datetime.fromisoformat(last or first).replace(tzinfo=UTC).timestamp()) + DAY
    return TimeRange(start, end)


EVENT_TIMES = [
    # (utterance, said on, expected (first, last) day or None)
    # the examples
    ("I'm signing up for a first-aid course in June", FRI, ("2024-06-01", "2024-06-30")),
    ("On Saturday we hiked the ridge", MON, ("2024-05-11", "2024-05-11")),
    ("We're going camping on Saturday", WED, ("2024-05-11", "2024-05-11")),
    # months: future / past / neutral (nearest)
    ("We will travel to Japan in October", FRI, ("2024-10-01", "2024-10-31")),
    ("We went to Japan in October", FRI, ("2023-10-01", "2023-10-31")),
    ("My exam is in June", FRI, ("2024-06-01", "2024-06-30")),
    ("Her recital is in April", FRI, ("2024-04-01", "2024-04-30")),
    # weekdays
    ("Are you coming to the barbecue on Sunday?", FRI, ("2024-05-12", "2024-05-12")),
    ("Did you go to the barbecue on Sunday?", FRI, ("2024-05-05", "2024-05-05")),
    ("I bought tickets for the concert on Saturday", FRI, ("2024-05-11", "2024-05-11")),
    ("The farmers market is on Saturday", THU, ("2024-05-11", "2024-05-11")),
    ("The farmers market is on Saturday", MON, ("2024-05-11", "2024-05-11")),
    # dates without a year, and "on the 8th"
    ("I'll fly out on May 20", FRI, ("2024-05-20", "2024-05-20")),
    ("I'm moving on March 3", FRI, ("2025-03-03", "2025-03-03")),
    ("We moved on June 3", FRI, ("2023-06-03", "2023-06-03")),
    ("Her birthday is May 7", FRI, ("2024-05-07", "2024-05-07")),
    ("The package will arrive on the 8th.", FRI, ("2024-06-08", "2024-06-08")),
    ("It arrived on the 8th.", FRI, ("2024-05-08", "2024-05-08")),
    # seasons
    ("We're going to Greece in the summer", FRI, ("2024-06-01", "2024-08-31")),
    ("We went to Greece in the summer", FRI, ("2023-06-01", "2023-08-31")),
    ("The festival is in the fall", FRI, ("2024-09-01", "2024-11-30")),
    # holidays
    ("I can't wait to see everyone at Christmas!", FRI, ("2024-12-25", "2024-12-25")),
    ("We saw everyone at Christmas.", FRI, ("2023-12-25", "2023-12-25")),
    ("The parade is on Halloween", FRI, ("2024-10-31", "2024-10-31")),
    # the weekend
    ("I'm going to paint over the weekend", WED, ("2024-05-11", "2024-05-12")),
    ("I painted over the weekend", MON, ("2024-05-11", "2024-05-12")),
    # a marker inside the cue is not tense: "last" in "the last weekend of May"
    ("We're going the last weekend of May", FRI, ("2024-05-25", "2024-05-26")),
    # "since X": X has begun, whatever the tense ("I've been ..." or none at all)
    ("I've been volunteering at the shelter since June", FRI, None),
    ("Volunteering at the shelter since Saturday", THU, ("2024-05-04", "2024-05-09")),
    # clauses: each cue reads its own clause; the narrowest (then latest) cue is the event
    ("We went camping in April, and we're going again in June.", FRI,
     ("2024-06-01", "2024-06-30")),
    # explicit cues ignore the tense
    ("I went to the gym last Friday", FRI, ("2024-05-03", "2024-05-03")),
    ("I'll go to the gym next Friday", WED, ("2024-05-10", "2024-05-10")),
    ("We'll talk about what happened two days ago", FRI, ("2024-05-08", "2024-05-08")),
    ("We were supposed to leave tomorrow", FRI, ("2024-05-11", "2024-05-11")),
    ("I will never forget 20 June 2023", FRI, ("2023-06-20", "2023-06-20")),
    # no cue, or only cues too wide to place an episode
    ("I love hiking with my dog", FRI, None),
    ("We'll visit next year", FRI, None),
    ("I've been painting a lot lately", FRI, None),
]  # fmt: skip

# Time as people say it, in the turn (event) form: the grounder of questions, with the tense.
EVENT_TIMES += [
    # holidays (the example first)
    ("We spent Christmas at my parents'", "2023-12-28", ("2023-12-25", "2023-12-25")),
    ("We went to church at Easter", FRI, ("2024-03-31", "2024-03-31")),
    ("We're going to my aunt's for Thanksgiving", FRI, ("2024-11-28", "2024-11-28")),
    ("I'll be in Delhi for Diwali", FRI, ("2024-10-31", "2024-10-31")),
    ("We celebrated Eid with the neighbours", FRI, ("2024-04-10", "2024-04-10")),
    ("We had dinner at my mom's on Mother's Day", MON, ("2024-05-12", "2024-05-12")),
    ("Black Friday was crazy at the store", "2023-11-27", ("2023-11-24", "2023-11-24")),
    ("We're driving up for Memorial Day weekend", FRI, ("2024-05-25", "2024-05-27")),
    ("Last Hanukkah we lit the candles together", FRI, ("2023-12-08", "2023-12-15")),
    # ordinal weekdays of a month
    ("The recital is on the second Sunday of June", FRI, ("2024-06-09", "2024-06-09")),
    ("We moved in on the first Friday of last month", FRI, ("2024-04-05", "2024-04-05")),
    # the last / n-th week or day of a month or year
    ("I was in Spain the last week of August", FRI, ("2023-08-25", "2023-08-31")),
    ("The lease ends on the last day of June", FRI, ("2024-06-30", "2024-06-30")),
    ("We were snowed in the first few days of January", FRI, ("2024-01-01", "2024-01-03")),
    # quarters
    ("The launch was in Q1", FRI, ("2024-01-01", "2024-03-31")),
    ("We're launching in Q3", FRI, ("2024-07-01", "2024-09-30")),
    ("Sales dipped in Q4 2023", FRI, ("2023-10-01", "2023-12-31")),
    # numeric and compact dates (unambiguous ones; ambiguous: COUNTRY_EVENT_TIMES)
    ("I paid it on 14.03.2024", FRI, ("2024-03-14", "2024-03-14")),
    ("We met on 14 Mar 24", FRI, ("2024-03-14", "2024-03-14")),
    ("The invoice is dated 3/14/2024", FRI, ("2024-03-14", "2024-03-14")),
    ("The move was in 2024/03", FRI, ("2024-03-01", "2024-03-31")),
    # period edges
    ("We finished at the end of the month", MON, ("2024-04-21", "2024-04-30")),
    ("I'll be away at the end of the month", MON, ("2024-05-21", "2024-05-31")),
    ("We painted the house at the start of this week", THU, ("2024-05-06", "2024-05-07")),
    ("It was so hot at the end of the summer", FRI, ("2023-08-01", "2023-08-31")),
    # counts and synonyms
    ("I've been sick for the last 3 weeks", FRI, ("2024-04-19", "2024-05-09")),
    ("We saw her two Saturdays ago", FRI, ("2024-04-27", "2024-04-27")),
    ("I started the job a fortnight ago", FRI, ("2024-04-22", "2024-04-28")),
    ("We talked about it the previous month", FRI, ("2024-04-01", "2024-04-30")),
    ("We got the keys three days back", FRI, ("2024-05-07", "2024-05-07")),
    # no event time: not a time, or not a year
    ("I love the Christmas tree", FRI, None),
    ("Thanksgiving dinner with family sounds great!", FRI, None),
    ("We were trailing big time in the 4th quarter", FRI, None),
    ("I've been playing Cyberpunk 2077 nonstop", FRI, None),
    ("I finally paid the 2000 invoice", FRI, None),
    ("The rent was due on 3/4/2024", FRI, None),  # ambiguous without the bank's country
]  # fmt: skip


@pytest.mark.parametrize(("text", "day", "expected"), EVENT_TIMES)
def test_event_time_follows_the_tense(text: str, day: str, expected: tuple[str, str] | None):
    grounded = ground_event_time(text, said(day), UTC)
    assert grounded == (None if expected is None else days(*expected))


COUNTRY_EVENT_TIMES = [
    # (utterance, said on, the bank's country, expected)
    ("The rent was due on 3/4/2024", FRI, "US", ("2024-03-04", "2024-03-04")),
    ("The rent was due on 3/4/2024", FRI, "GB", ("2024-04-03", "2024-04-03")),
    ("We met on 5/8/23", FRI, "DE", ("2023-08-05", "2023-08-05")),
    ("We had turkey at Thanksgiving", FRI, "CA", ("2023-10-09", "2023-10-09")),
    ("We had turkey at Thanksgiving", FRI, "US", ("2023-11-23", "2023-11-23")),
    ("I brought her flowers on Mother's Day", FRI, "GB", ("2024-03-10", "2024-03-10")),
    ("We're going to the beach in the summer", FRI, "AU", ("2024-12-01", "2025-02-28")),
    ("We went to the beach in the summer", FRI, "AU", ("2023-12-01", "2024-02-29")),
]  # fmt: skip


@pytest.mark.parametrize(("text", "day", "country", "expected"), COUNTRY_EVENT_TIMES)
def test_event_time_reads_dates_for_the_bank_country(text, day, country, expected):
    assert ground_event_time(text, said(day), UTC, country=country) == days(*expected)


EVENT_CUES = [
    # (utterance, said on, rule, first, last): cues too wide to be stored as an event time
    # are still read the same way (what ``event_cues`` grounds before the width cut)
    ("We got married in two thousand nineteen", FRI, "year", "2019-01-01", "2019-12-31"),
    ("I worked there in the first half of last year", FRI, "period_part",
     "2023-01-01", "2023-06-30"),
    ("I've been vegan since Easter 2022", FRI, "since", "2022-04-17", "2024-05-10"),
    ("We were in Oslo for the whole of Q3 2023", FRI, "quarter_year",
     "2023-07-01", "2023-09-30"),
]  # fmt: skip


@pytest.mark.parametrize(("text", "day", "rule", "first", "last"), EVENT_CUES)
def test_event_cues_of_every_width(text: str, day: str, rule: str, first: str, last: str):
    [cue] = event_cues(text, said(day), UTC)
    assert (cue.rule, cue.range) == (rule, days(first, last))


TENSES = [
    # (text, the cue's text, direction)
    ("I'm signing up for a first-aid course in June", "in June", "future"),
    ("We're going camping on Saturday", "on Saturday", "future"),
    ("I will see her in June", "in June", "future"),
    ("She'll be back in June", "in June", "future"),
    ("I won't be home in June", "in June", "future"),
    ("I'm gonna run a marathon in June", "in June", "future"),
    ("We plan to visit in June", "in June", "future"),
    ("I'm looking forward to the trip in June", "in June", "future"),
    ("I hope to finish it in June", "in June", "future"),
    ("I want to go to Paris in June", "in June", "future"),
    ("I can't wait for the concert in June", "in June", "future"),
    ("There's an upcoming show in June", "in June", "future"),
    ("We're about to leave in June", "in June", "future"),
    ("Is she coming home in June?", "in June", "future"),
    ("On Saturday we hiked the ridge", "On Saturday", "past"),
    ("I went to Paris in June", "in June", "past"),
    ("It was so hot in June", "in June", "past"),
    ("Did you see her in June?", "in June", "past"),
    ("We had a party in June", "in June", "past"),
    ("I finally visited Rome in June", "in June", "past"),
    ("I've got a concert in June", "in June", "nearest"),  # "have got" is not past
    ("The view in June is amazing", "in June", "nearest"),  # an -ing adjective, not a plan
    ("My birthday is in June", "in June", "nearest"),
    ("Concerts in June!", "in June", "nearest"),
    ("I sat next to her in June", "in June", "past"),  # "next to" is not "next"
    ("I've been to Lisbon in June", "in June", "past"),
    ("I have been planning to go in June", "in June", "future"),
    # the nearest marker decides; other clauses do not count
    ("I went to Rome in April, and I'm going to Paris in June", "in June", "future"),
    ("I went to Rome in April, and I'm going to Paris in June", "in April", "past"),
    ("We hiked on Saturday. We will rest on Sunday.", "on Saturday", "past"),
    ("We hiked on Saturday. We will rest on Sunday.", "on Sunday", "future"),
]  # fmt: skip


@pytest.mark.parametrize(("text", "cue_text", "direction"), TENSES)
def test_tense_direction_of_a_cue(text: str, cue_text: str, direction: str):
    start = text.index(cue_text)
    assert tense_direction(text, (start, start + len(cue_text))) == direction


def test_tense_direction_of_a_whole_text():
    assert tense_direction("We will go camping") == "future"
    assert tense_direction("We went camping") == "past"
    assert tense_direction("We went camping and will go again") == "nearest"
    assert tense_direction("Camping is fun") == "nearest"
    assert tense_direction("") == "nearest"


def test_clause_is_the_sentence_cut_at_a_conjunction():
    text = "Hi there. We went to Rome in April, but we're going to Paris in June! Bye."
    april = text.index("in April")
    june = text.index("in June")
    assert text[slice(*clause_around(text, (april, april + 8)))] == " We went to Rome in April"
    assert text[slice(*clause_around(text, (june, june + 7)))] == " we're going to Paris in June"


def test_a_boundary_inside_the_cue_does_not_cut_its_clause():
    text = "We will fly out on Sept. 5, 2025 from Boston."
    [cue] = detect_cues(text, datetime(2024, 5, 10, tzinfo=UTC))
    assert cue.text == "Sept. 5, 2025"
    assert clause_around(text, cue.span) == (0, len(text) - 1)


def test_each_cue_is_grounded_in_its_own_direction():
    text = "We went camping in October, and we're going again in June."
    cues = event_cues(text, said(FRI), UTC)
    assert [(c.text, c.range) for c in cues] == [
        ("in October", days("2023-10-01", "2023-10-31")),
        ("in June", days("2024-06-01", "2024-06-30")),
    ]
    text = "On Saturday we hiked the ridge. We will rest on Sunday."
    assert [c.range for c in event_cues(text, said(MON), UTC)] == [
        days("2024-05-11"),
        days("2024-05-19"),
    ]


def test_event_cues_line_up_with_the_detected_cues():
    text = "Last week I hiked; on Saturday I'm climbing, and in the summer we sail."
    reference = datetime.fromtimestamp(said(WED), UTC)
    detected = detect_cues(text, reference)
    cues = event_cues(text, said(WED), UTC)
    assert [(c.text, c.rule, c.span) for c in cues] == [(c.text, c.rule, c.span) for c in detected]
    assert [c.range for c in cues] == [
        days("2024-04-29", "2024-05-05"),
        days("2024-05-11"),
        days("2024-06-01", "2024-08-31"),
    ]


def test_event_time_is_read_in_the_given_timezone():
    tz = timezone(timedelta(hours=9))
    # Sunday 2024-05-12 20:00 UTC is Monday 2024-05-13 05:00 in UTC+9
    moment = int(datetime(2024, 5, 12, 20, 0, tzinfo=UTC).timestamp())
    grounded = ground_event_time("On Saturday we hiked the ridge", moment, tz)
    saturday = int(datetime(2024, 5, 11, tzinfo=tz).timestamp())
    assert grounded == TimeRange(saturday, saturday + DAY)


@settings(max_examples=200, deadline=None)
@given(
    text=st.text(
        alphabet=st.sampled_from(list("abcdefghijklmnopqrstuvwxyz '.,!?0123456789")), max_size=80
    )
    | st.lists(
        st.sampled_from(
            "I we will went 'll going to in on June Saturday the summer at Christmas over "
            "weekend last next was did May 7 8th . , and but soon ago plan".split()
        ),
        max_size=14,
    ).map(" ".join),
    day=st.dates(),
)
def test_any_text_is_handled(text: str, day):
    moment = said(day.isoformat()) if 1971 <= day.year <= 9990 else said("2024-05-10")
    cues = event_cues(text, moment, UTC)
    reference = datetime.fromtimestamp(moment, UTC)
    assert [c.span for c in cues] == [c.span for c in detect_cues(text, reference)]
    assert tense_direction(text) in ("past", "future", "nearest")
    grounded = ground_event_time(text, moment, UTC)
    assert grounded is None or 0 < grounded.end - grounded.start <= 92 * DAY



# --------------------------------------------------------------------------- extracted entries


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
        ("2023-05-01", "Caroline went to an LGBTQ support group.", "2023-05-01"),
        # D1:3 is "I went to an LGBTQ support group yesterday", said on 8 May: with no date
        # from the model or the entry, or only the day it was said, the turn's words decide
        ("2023-05-08", "Caroline went to an LGBTQ support group.", "2023-05-07"),
        ("8 May 2023", "Caroline went to an LGBTQ support group.", "2023-05-07"),
        ("2023-02-30", "Caroline went to a group.", "2023-05-07"),  # no such day
        (None, "Caroline went to an LGBTQ support group.", "2023-05-07"),
    ],
)
def test_event_time_from_event_date_else_content_else_the_turn(window, event_date, content,
                                                                 day):
    record = anchor(window, entry(content, "D1:3", event_date=event_date))
    assert (record.event_start, record.event_end) == (ts(day + " 00:00"),
                                                      ts(day + " 00:00") + DAY)


@pytest.mark.parametrize(
    ("event_date", "cited", "day"),
    [
        (None, ["D1:1"], None),  # "Hey Mel! Good to see you.": no time anywhere
        ("2023-05-08", ["D1:1"], "2023-05-08"),  # the turn has no other time: kept
        # two turns: whose "yesterday" it would be is not known; the model's date stays
        ("2023-05-08", ["D1:3", "D1:4"], "2023-05-08"),
        (None, ["D1:3", "D1:4"], None),
    ],
)
def test_the_turns_own_time_is_read_only_for_one_cited_turn(window, event_date, cited, day):
    record = anchor(window, entry("Caroline and Melanie talked.", *cited,
                                  event_date=event_date))
    if day is None:
        assert record.event_range is None
    else:
        assert record.event_start == ts(day + " 00:00")


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


def test_dedup_key_is_the_normalised_hash():
    assert dedup_key("Caroline  went\nhome.") == dedup_key("caroline went home.")
    assert dedup_key("a b").startswith("x:")


# --------------------------------------------------------------------------- copies of a turn


@pytest.mark.parametrize(
    ("content", "copy_of"),
    [
        # the 0.5B Qwen's copies, another speaker's name in front (D1:3 is Caroline's)
        ("Melanie: Lovely. I went to an LGBTQ support group yesterday, it was so powerful.",
         "D1:3"),
        ("Mel Melanie: That sounds inspiring, I am proud of you.", "D1:4"),
        ("I am researching adoption agencies now.", "D2:1"),  # no name: still the turn
        ("caroline:  I am researching adoption agencies now", "D2:1"),
        # restatements: names for pronouns, a date for "yesterday", a part of a turn
        ("Caroline went to an LGBTQ support group on 7 May 2023.", None),
        ("Caroline is researching adoption agencies.", None),
        ("Melanie's dog Luna learned to fetch the newspaper.", None),
        ("Luna learned to fetch.", None),  # a part of D3:2, not the turn
        ("Melanie ran a charity race for mental health.", None),
        ("Wow, how far?", None),  # under four words: never a copy
        # the 0.5B given 12-turn windows echoes whole excerpt lines, under another label too
        ("D1:4 Melanie: That sounds inspiring! I am proud of you!", "D1:4"),
        ("D1:2 Melanie: That sounds inspiring, I am proud of you.", "D1:4"),
        ("[D2:1] 2023-05-25 09:01 Caroline: I am researching adoption agencies now.", "D2:1"),
        ("2023-05-25 Melanie: I am researching adoption agencies now.", None),  # no label
        ("D1:4 Caroline was proud of Melanie for the painting.", None),
    ],
)
def test_an_entry_that_repeats_a_turn_word_for_word_is_a_copy(bank, content, copy_of):
    copied = copied_turn(content, turn_labels(stored_turns(bank)))
    assert (copied.external_id if copied else None) == copy_of


@pytest.mark.parametrize(
    "content",
    [
        # the 0.5B's second reply to a repair request: the first reply's copy, cut at the
        # 80 characters the request quoted (a part of the turn, so not a copy by the words)
        "D1:4 Melanie: That sounds inspiring, I am",
        "[D1:4] Melanie was proud.",
        "D2:1: Caroline is researching adoption agencies.",
    ],
)
def test_an_entry_that_starts_with_a_line_label_is_rejected(window, content):
    with pytest.raises(EntryRejected, match="starts like the excerpt's line D[12]:[14]"):
        anchor(window, entry(content, "D1:4"))


@pytest.mark.parametrize(
    ("content", "label"),
    [
        ("D1:4 Melanie: hi", "D1:4"),
        ("[D3:2] Luna", "D3:2"),
        ("D9:9 is not a label of the window", None),
        ("On D1:4 Melanie said so", None),  # a label inside the text: not the line's head
        ("Caroline went home.", None),
    ],
)
def test_echoed_label_is_the_window_label_an_entry_starts_with(bank, content, label):
    assert echoed_label(content, turn_labels(stored_turns(bank))) == label


@pytest.mark.parametrize(
    ("content", "subject"),
    [
        ("Melanie ran a charity race for mental health.", "Melanie"),
        ("Mel is researching adoption agencies.", "Melanie"),  # the start of one name
        ("Caroline: I went to a support group.", "Caroline"),
        ("CAROLINE went home.", "Caroline"),
        ("Caroline's necklace has a cross on it.", None),  # a possessive: about a thing
        ("She went to a support group.", None),
        ("On 8 May Caroline went to a support group.", None),  # not the entry's first word
        ("Me and Mel went out.", None),  # under three letters
        ("Lena visited Caroline.", None),  # not a participant
        ("The dog fetched the paper.", None),  # a common word, though "Theodore" starts so
        ("And then Theo left.", None),
        ("Theo left early.", "Theodore"),
        ("mel is here.", None),  # not capitalised: not read as the start of a name
    ],
)
def test_entry_subject_is_the_participant_an_entry_starts_with(content, subject):
    assert entry_subject(content, ["Caroline", "Melanie", "Theodore", "Andrew"]) == subject


def test_an_entry_about_a_participant_who_said_none_of_its_turns_is_rejected(window):
    """The 0.5B's name swap: Caroline researches adoption agencies (D2:1), not Melanie."""
    reason = (r"is about what Melanie did or said, but the cited turns are Caroline's: "
              r"'Mel is researching")
    with pytest.raises(EntryRejected, match=reason):
        anchor(window, entry("Mel is researching adoption agencies.", "D2:1"))
    kept = anchor(window, entry("Melanie was proud of Caroline's support group.", "D1:3",
                                "D1:4"))
    assert kept.source_turns == ["D1:3", "D1:4"]


def test_a_copy_is_measured_against_the_turn_as_the_excerpt_shows_it():
    """With a shared image's caption: the 0.5B copies the line, caption and all."""
    turn = Turn("Melanie", "Take a look at this.", S1, 1, "D1:12", id=12,
                caption="a photo of a painting of a sunset over a lake")
    copy = ("D1:7 Melanie: Take a look at this. [shares an image: a photo of a painting of a "
            "sunset over a lake]")
    assert copied_turn(copy, {"D1:12": turn}) is turn
    assert copied_turn("Melanie painted a sunset over a lake.", {"D1:12": turn}) is None


@pytest.mark.parametrize(
    ("content", "pronoun"),
    [
        ("Mel talked about my transgender journey.", "my"),  # the 0.5B on Caroline's turn
        ("Melanie is looking into counseling as a career. I want to help", "I"),
        ("Caroline said it made me think.", "me"),
        ("I'm training for the Lisbon half marathon.", "I"),
        ("My sister Lena visited Caroline.", "My"),
        ("Caroline's sign read \"I am enough\" at the parade.", None),  # a quotation
        ("Caroline named the puppy Luna.", None),
        ("Mimi met Ines in Mykonos; IMAX tickets were mine to buy", "mine"),
        ("Mimi met Ines in Mykonos at the IMAX.", None),  # whole words only
    ],
)
def test_first_person_is_found_outside_quotes(content, pronoun):
    assert first_person(content) == pronoun


def test_an_entry_in_the_first_person_about_a_named_speaker_is_rejected(window):
    reason = r"says 'my' where a speaker's name belongs \(the cited turns are Caroline's\)"
    with pytest.raises(EntryRejected, match=reason):
        anchor(window, entry("Mel talked about my school event and my transgender journey.",
                             "D1:3"))


def test_the_users_own_entry_keeps_its_first_person():
    """A journal's or an assistant chat's "me": "I" is the user, nobody else."""
    noon = said(WED)
    turns = [Turn("me", "Hiked up Hawk Hill with Olga; the wind was brutal.", noon, 1, "e1",
                  id=1)]
    record = anchor_entry(entry("I hiked up Hawk Hill with Olga on 8 May 2024.", "e1"),
                          turn_labels(turns), {1: (noon, noon)}, UTC, conversation="journal",
                          participants=["me"])
    assert record.content == "I hiked up Hawk Hill with Olga on 8 May 2024."


def test_a_copy_is_rejected_with_the_turn_it_repeats(window):
    reason = r"repeats turn D1:3 word for word \(said by Caroline\)"
    with pytest.raises(EntryRejected, match=reason):
        anchor(window, entry("Melanie: Lovely. I went to an LGBTQ support group yesterday, it "
                             "was so powerful.", "D1:3"))


def test_an_entry_that_repeats_the_instructions_example_is_rejected(window):
    """The 0.5B, given turns in which Melanie talks about painting, wrote the example's entry
    under her name and the excerpt's year; the reason names the example."""
    copy = "Melanie is training every morning to run the Lisbon half marathon in April 2023."
    with pytest.raises(EntryRejected, match=r"repeats the instructions' example \('Ben is "
                                            r"training every morning.*no turn of the excerpt"):
        anchor(window, entry(copy, "D1:2", "D1:4"))
    kept = anchor(window, entry("Melanie's dog Luna learned to fetch the newspaper.", "D3:2"))
    assert kept.source_turns == ["D3:2"]  # Luna is the example's puppy too: not a copy


def test_the_example_said_in_the_conversation_is_kept():
    """Somebody in the window does train for the Lisbon half marathon: the entry holds the
    window's words and is theirs, whatever the example says (citing another of its turns is
    a citation error, not the example)."""
    said = Turn("Melanie", "I'm training every morning now, I run the Lisbon half marathon in "
                "April!", S1, 1, "D1:9", id=9)
    other = Turn("Melanie", "I painted a sunrise over the lake last weekend.", S1, 1, "D1:2",
                 id=2)
    copy = "Melanie is training every morning to run the Lisbon half marathon in April 2023."
    participants = ["Caroline", "Melanie"]
    assert copied_example(copy, [said], participants) is None
    assert copied_example(copy, [other], participants) is not None
    assert copied_example("Caroline adopted a puppy named Luna on 8 May 2023.", [other],
                          participants) is not None
    leaked = "Melanie thanks Caroline for the invitation to the Lisbon half marathon."
    assert copied_example(leaked, [other], participants) is not None  # the example's thing
    assert copied_example(leaked, [said], participants) is None  # the conversation's
    assert copied_example(leaked, [other, said], participants) is None  # in the window
    assert copied_example("Melanie walks Luna every morning.", [other], participants)
    luna = Turn("Melanie", "My dog Luna learned to fetch the newspaper.", S3, 3, "D3:2", id=10)
    assert copied_example("Melanie walks Luna every morning.", [luna], participants) is None
