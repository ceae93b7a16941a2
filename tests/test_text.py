"""Text helpers shared by the stages: who a text names."""

from __future__ import annotations

import pytest

from ramem_local.ingest.anchor import mentioned_persons
from ramem_local.text import named_persons

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
