"""The lexicon's readings of single words (lemminflect's own lexicon, no model files)."""

from __future__ import annotations

import pytest

from ramem_local.lexicon import lemma, past_of


@pytest.mark.parametrize(("word", "verb"), [
    ("moved", "move"), ("came", "come"), ("died", "die"), ("read", "read"), ("met", "meet"),
    ("was", "be"), ("did", "do"),
    ("says", None), ("travel", None), ("running", None), ("comes", None), ("gate", None),
])
def test_which_verb_a_word_is_the_past_of(word: str, verb: str | None) -> None:
    assert past_of(word) == verb


@pytest.mark.parametrize(("word", "expected"), [("walked", "walk"), ("films", "film")])
def test_a_words_lemma(word: str, expected: str) -> None:
    assert lemma(word) == expected
