"""Words as the lexicon knows them: lemmas and parts of speech, from ``lemminflect`` (its own
lexicon, no model files). Used where the form of a statement or a question is read: what a
memory is (``ingest.acts``), the thing a question asks about (``recall.question_kinds``), the
words the bank's memories share (``kinds``)."""

from __future__ import annotations

from functools import lru_cache


@lru_cache(maxsize=65536)
def lemmas(word: str) -> dict[str, tuple[str, ...]]:
    """The lemmas of a lower-case word by part of speech ({"VERB": ("walk",), ...}); {} for
    a word the lexicon does not know."""
    import lemminflect

    return dict(lemminflect.getAllLemmas(word))


def word_readings(word: str) -> set[str]:
    """The parts of speech the lexicon knows for a lower-case word ("NOUN", "VERB", "ADJ",
    ...); empty for a word it does not know."""
    return set(lemmas(word))


@lru_cache(maxsize=65536)
def past_of(word: str) -> str | None:
    """The verb whose simple past a lower-case word is ("came" → "come", "moved" → "move",
    "read" → "read"); None when it is no verb's past ("says", "travel", "running")."""
    import lemminflect

    for verb in lemmas(word).get("VERB", ()) + lemmas(word).get("AUX", ()):
        if word in lemminflect.getAllInflections(verb, upos="VERB").get("VBD", ()):
            return verb
    return None


@lru_cache(maxsize=65536)
def lemma(word: str) -> str:
    """A word's lemma: as a verb when it can be one ("walked" → "walk"), else as a noun
    ("walks" → "walk", "films" → "film"), else the word."""
    readings = lemmas(word)
    for pos in ("VERB", "NOUN", "ADJ"):
        if pos in readings:
            return readings[pos][0]
    return word
