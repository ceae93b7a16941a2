"""Retrieval and answer metrics, one definition each (DESIGN.md §7).

Retrieval metrics take, for each retrieved memory in rank order, the set of its source-turn ids
(provenance, e.g. ``{"D3:7", "D3:8"}``) and the question's evidence ids. A memory is a *hit* when
its provenance intersects the evidence. Questions without evidence cannot be scored for retrieval;
the functions raise ``ValueError`` rather than return a number that would silently bias a mean.

Answer metrics compare normalised text (:func:`normalize_answer`): lowercase; punctuation removed
(ASCII ``string.punctuation`` as in SQuAD, plus Unicode punctuation such as curly quotes); the words
``a``, ``an``, ``the`` and ``and`` removed (LoCoMo's variant of the SQuAD rule adds ``and``);
whitespace collapsed. No stemming. When both texts normalise to nothing they agree (1.0); when
only one does, 0.0 (the SQuAD v2 convention).
"""

from __future__ import annotations

import math
import re
import string
import unicodedata
from collections import Counter
from collections.abc import Iterable, Sequence

from ramem_local import DAY
from ramem_local import text as text_rules

_WORD = re.compile(r"[^\W_]+")  # runs of Unicode letters/digits
_ARTICLES = re.compile(r"\b(a|an|the|and)\b")
_ASCII_PUNCTUATION = frozenset(string.punctuation)


# ---------------------------------------------------------------------------------------------
# Retrieval
# ---------------------------------------------------------------------------------------------


def _require_evidence(evidence: set[str]) -> None:
    if not evidence:
        raise ValueError("question has no evidence ids: retrieval metrics are undefined")


def _require_k(k: int) -> None:
    if k < 1:
        raise ValueError(f"k must be at least 1, got {k}")


def first_hit_rank(retrieved: Sequence[Iterable[str]], evidence: set[str]) -> int | None:
    """1-based rank of the first memory whose source turns intersect ``evidence``; None if none."""
    _require_evidence(evidence)
    for rank, source_turns in enumerate(retrieved, start=1):
        if not evidence.isdisjoint(source_turns):
            return rank
    return None


def recall_at_k(retrieved: Sequence[Iterable[str]], evidence: set[str], k: int) -> float:
    """1.0 when any of the first ``k`` memories is a hit, else 0.0."""
    _require_k(k)
    rank = first_hit_rank(retrieved, evidence)
    return 1.0 if rank is not None and rank <= k else 0.0


def all_evidence_recall_at_k(
    retrieved: Sequence[Iterable[str]], evidence: set[str], k: int
) -> float:
    """1.0 when the source turns of the first ``k`` memories cover every evidence id."""
    _require_evidence(evidence)
    _require_k(k)
    covered: set[str] = set()
    for source_turns in retrieved[:k]:
        covered.update(source_turns)
    return 1.0 if evidence <= covered else 0.0


def mrr_at_k(retrieved: Sequence[Iterable[str]], evidence: set[str], k: int) -> float:
    """Reciprocal rank of the first hit when it is within ``k``, else 0.0."""
    _require_k(k)
    rank = first_hit_rank(retrieved, evidence)
    return 1.0 / rank if rank is not None and rank <= k else 0.0


def content_words(text: str) -> set[str]:
    """Lowercase alphanumeric tokens of length ≥ 3 that are not stopwords (search's own)."""
    return {w for w in _WORD.findall(text.lower()) if len(w) >= 3 and w not in text_rules.STOPWORDS}


def distractor_at_1(
    top_source_turns: set[str],
    top_content: str,
    top_persons: list[str],
    top_session_start: int,
    question: str,
    evidence: set[str],
    evidence_session_starts: list[int],
    max_gap_days: float = 5.0,
) -> bool:
    """D@1: the top memory is a plausible look-alike from the wrong episode.

    True when the top memory (1) is not evidence, (2) shares a content word or a person with the
    question, and (3) its session starts more than ``max_gap_days`` from every evidence session's
    start. It measures the failure contextual reinstatement targets: content matches, episode
    does not.
    """
    _require_evidence(evidence)
    if not evidence_session_starts:
        raise ValueError("evidence_session_starts is empty: the evidence turns have no sessions")
    if not evidence.isdisjoint(top_source_turns):
        return False
    related = bool(content_words(top_content) & content_words(question)) or bool(
        text_rules.named_persons(question, top_persons)
    )
    if not related:
        return False
    max_gap = max_gap_days * DAY
    return all(abs(top_session_start - start) > max_gap for start in evidence_session_starts)


# ---------------------------------------------------------------------------------------------
# Answers
# ---------------------------------------------------------------------------------------------


def _is_punctuation(char: str) -> bool:
    return char in _ASCII_PUNCTUATION or unicodedata.category(char).startswith("P")


def normalize_answer(s: object) -> str:
    """SQuAD/LoCoMo normalisation (see the module docstring); non-strings are ``str()``-ed."""
    text = str(s).lower()
    text = "".join(char for char in text if not _is_punctuation(char))
    text = _ARTICLES.sub(" ", text)
    return " ".join(text.split())


def _tokens(s: object) -> list[str]:
    return normalize_answer(s).split()


def _f1(overlap: int, n_prediction: int, n_reference: int) -> float:
    if n_prediction == 0 or n_reference == 0:
        return float(n_prediction == n_reference)
    if overlap == 0:
        return 0.0
    precision, recall = overlap / n_prediction, overlap / n_reference
    return 2 * precision * recall / (precision + recall)


def token_f1(prediction: object, reference: object) -> float:
    """Token F1 with multiplicity (SQuAD): overlap counts each token min(count_p, count_r) times."""
    pred, ref = _tokens(prediction), _tokens(reference)
    overlap = sum((Counter(pred) & Counter(ref)).values())
    return _f1(overlap, len(pred), len(ref))


def set_f1(prediction: object, reference: object) -> float:
    """F1 over the sets of unique normalised tokens (the variant used when comparing with the
    paper): repeated words count once."""
    pred, ref = set(_tokens(prediction)), set(_tokens(reference))
    return _f1(len(pred & ref), len(pred), len(ref))


def bleu1(prediction: object, reference: object) -> float:
    """BLEU-1 against one reference: clipped unigram precision × brevity penalty.

    Brevity penalty: 1 when the prediction is longer than the reference, else
    ``exp(1 - len(reference) / len(prediction))`` — so a one-word answer that matches one word of
    a long reference is penalised. The formula of ``nltk`` ``sentence_bleu(weights=(1,))`` without
    smoothing, applied to normalised tokens.
    """
    pred, ref = _tokens(prediction), _tokens(reference)
    if not pred or not ref:
        return float(pred == ref)
    clipped = sum((Counter(pred) & Counter(ref)).values())
    if clipped == 0:
        return 0.0
    precision = clipped / len(pred)
    penalty = 1.0 if len(pred) > len(ref) else math.exp(1 - len(ref) / len(pred))
    return precision * penalty
