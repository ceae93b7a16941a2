"""Numbers as people write them: the table of number words, checked against ``inflect``, and
the other forms a question's number is searched in."""

from __future__ import annotations

import pytest

from ramem_local.numbers import (
    cardinal_words,
    number_forms,
    numbers_in,
    ordinal_digits,
    ordinal_words,
)


def test_the_number_words_agree_with_inflect_from_0_to_999() -> None:
    inflect = pytest.importorskip("inflect")
    engine = inflect.engine()
    for n in range(1000):
        assert cardinal_words(n) == engine.number_to_words(n), n
        assert ordinal_words(n) == engine.number_to_words(engine.ordinal(n)), n
        assert ordinal_digits(n) == engine.ordinal(n), n


@pytest.mark.parametrize(("text", "numbers"), [
    ("Mum's seventieth", [(70, True)]),
    ("my 40th birthday", [(40, True)]),
    ("my forty-first", [(41, True)]),
    ("my forty first", [(41, True)]),
    ("the 3rd of May", [(3, True)]),
    ("two weeks after the move", [(2, False)]),
    ("one hundred and fifth", [(105, True)]),
    # must not read a number
    ("one day I will", []),
    ("a second coffee", []),
    ("my first day at Pinecone Labs", []),
    ("first aid", []),
    ("our twenty-first anniversary", [(21, True)]),
    ("the 1st of May", [(1, True)]),
    ("in 2024", []),
    ("the ones I liked", []),
])
def test_the_numbers_a_text_names(text: str, numbers: list[tuple[int, bool]]) -> None:
    assert [(value, ordinal) for value, ordinal, _ in numbers_in(text)] == numbers


@pytest.mark.parametrize(("text", "forms"), [
    ("Mum's seventieth", ["70th", "70", "seventy"]),
    ("my 40th", ["fortieth", "40", "forty"]),
    ("my forty-first", ["41st", "41", "forty-one"]),
    ("two weeks", ["2", "2nd", "second"]),
    ("nothing to count here", []),
])
def test_a_number_is_also_searched_in_its_other_forms(text: str, forms: list[str]) -> None:
    assert number_forms(text) == forms
