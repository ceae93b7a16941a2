"""Text helpers shared by the stages: who a text names, which participant a name is, phrases."""

from __future__ import annotations

import pytest

from ramem_local.ingest.anchor import mentioned_persons
from ramem_local.text import canonical_person, named_persons, word_runs

PARTICIPANTS = ["Ann", "Anna Berg", "Tom"]


@pytest.mark.parametrize(
    ("text", "named"),
    [
        ("Ann said hi", ["Ann"]),
        ("ann's cake", ["Ann"]),
        ("Anna Berg called", ["Anna Berg"]),
        ("Anna called", []),  # not Ann: whole words only
        ("we are planning a trip", []),  # "planning" holds "ann"
        ("Tomorrow, Tom’s bike", ["Tom"]),
        ("Tomato soup", []),
        ("", []),
    ],
)
def test_named_persons_matches_whole_names(text, named):
    assert named_persons(text, PARTICIPANTS) == named


def test_a_turn_names_its_speaker_first_then_the_others_it_mentions():
    assert mentioned_persons("Planning lunch with Tom", "Ann", PARTICIPANTS) == ["Ann", "Tom"]


@pytest.mark.parametrize(
    ("name", "person"),
    [
        ("Ann", "Ann"),
        ("  tom ", "Tom"),
        ("ANN'S", "Ann"),
        ("Tom’s", "Tom"),
        ("anna berg", "Anna Berg"),
        ("Anna", "Anna Berg"),  # the first name of one participant
        ("Anna's", "Anna Berg"),
        ("Berg", None),  # a last name is not enough
        ("An", None),  # nor a prefix
        ("Tommy", None),
        ("Ann Berg", None),
        ("'s", None),
        ("", None),
    ],
)
def test_canonical_person_spells_a_name_as_its_participant(name, person):
    assert canonical_person(name, PARTICIPANTS) == person


def test_a_first_name_two_participants_share_is_neither():
    assert canonical_person("Ann", ["Ann Lee", "Ann Berg"]) is None
    assert canonical_person("Ann", ["Ann Lee", "Ann", "Ann Berg"]) == "Ann"


@pytest.mark.parametrize(("text", "runs"), [
    ("When did I first get the garden gate fixed?",
     ["garden gate fixed", "garden gate", "gate fixed"]),
    ("The coast path - when did I walk it?", ["coast path"]),
    ("When did I walk the old drovers' road?", ["old drovers road", "old drovers",
                                                "drovers road"]),
    # a comma, a stopword or a single word makes no phrase
    ("What was the film I saw?", []),
    ("Gate, fence and shed: which did I fix?", []),
])
def test_word_runs_are_content_words_in_a_row_longest_first(text, runs):
    assert word_runs(text) == runs


def test_a_name_as_written_keeps_its_capital():
    """A memory misread "Start" as a name: "did I start" does not name it as written."""
    assert named_persons("How many books did I start?", ["Start"]) == ["Start"]
    assert named_persons("How many books did I start?", ["Start"], as_written=True) == []
    assert named_persons("Lena's dog - when did I see it?", ["Lena"], as_written=True) == ["Lena"]
