"""LoCoMo evaluation helpers: question loading, evidence repair, retrieval and answer metrics."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from ramem_local.eval.locomo import (
    CATEGORY_NAMES,
    RepairCounts,
    canonical_dia_id,
    load_questions,
    load_questions_with_repairs,
    normalise_evidence,
)
from ramem_local.eval.metrics import (
    all_evidence_recall_at_k,
    bleu1,
    content_words,
    distractor_at_1,
    first_hit_rank,
    mrr_at_k,
    normalize_answer,
    recall_at_k,
    set_f1,
    token_f1,
)
from ramem_local.ingest.formats import FormatError
from ramem_local.text import STOPWORDS
from ramem_local.types import DAY

# ---------------------------------------------------------------------------------------------
# Evidence normalisation
# ---------------------------------------------------------------------------------------------

KNOWN = {"D1:3", "D4:4", "D8:6", "D9:1", "D9:17", "D11:26", "D30:5"}


@pytest.mark.parametrize(
    ("raw", "expected", "counts"),
    [
        (["D1:3"], ["D1:3"], RepairCounts()),
        (["D8:6; D9:17"], ["D8:6", "D9:17"], RepairCounts(split=1)),
        (["D9:1 D4:4"], ["D9:1", "D4:4"], RepairCounts(split=1)),
        (["D9:1,D4:4"], ["D9:1", "D4:4"], RepairCounts(split=1)),
        (["D:11:26"], ["D11:26"], RepairCounts(reformatted=1)),
        (["D30:05"], ["D30:5"], RepairCounts(reformatted=1)),
        (["d30:5"], ["D30:5"], RepairCounts(reformatted=1)),
        (["D2:1"], [], RepairCounts(dropped=1)),  # well formed, but not a turn of the sample
        (["D"], [], RepairCounts(dropped=1)),  # junk
        (["D1:3", "D1:3"], ["D1:3"], RepairCounts(duplicates=1)),
        (["D8:6", "D8:6; D:11:26"], ["D8:6", "D11:26"], RepairCounts(1, 1, 0, 1)),
        ([], [], RepairCounts()),
    ],
)
def test_normalise_evidence(raw: list, expected: list[str], counts: RepairCounts) -> None:
    assert normalise_evidence(raw, KNOWN) == (expected, counts)


@pytest.mark.parametrize(
    ("text", "expected"),
    [("D3:7", "D3:7"), ("D:11:26", "D11:26"), ("D030:005", "D30:5"), ("x", "x"), ("D", "D")],
)
def test_canonical_dia_id(text: str, expected: str) -> None:
    assert canonical_dia_id(text) == expected


def test_repair_counts_add_up() -> None:
    assert RepairCounts(1, 2, 3, 4) + RepairCounts(1, 1, 1, 1) == RepairCounts(2, 3, 4, 5)


# ---------------------------------------------------------------------------------------------
# Question loading
# ---------------------------------------------------------------------------------------------


def _tiny_locomo(tmp_path: Path) -> Path:
    sample = {
        "sample_id": "tiny",
        "conversation": {
            "speaker_a": "Ann",
            "speaker_b": "Bob",
            "session_1_date_time": "9:00 am on 1 March, 2023",
            "session_1": [
                {"speaker": "Ann", "dia_id": "D1:1", "text": "I adopted a cat."},
                {"speaker": "Bob", "dia_id": "D1:2", "text": "Since 2021 I run."},
            ],
        },
        "qa": [
            {
                "question": "What did Ann adopt?",
                "answer": "a cat",
                "evidence": ["D1:1"],
                "category": 4,
            },
            {
                "question": "Since when does Bob run?",
                "answer": 2021,
                "evidence": ["D1:02"],
                "category": 2,
            },
            {
                "question": "What did Bob adopt?",
                "adversarial_answer": "a cat",
                "evidence": ["D1:1; D7:7"],
                "category": 5,
            },
        ],
    }
    path = tmp_path / "tiny.json"
    path.write_text(json.dumps([sample]), encoding="utf-8")
    return path


def test_load_questions_on_a_tiny_sample(tmp_path: Path) -> None:
    questions = load_questions(_tiny_locomo(tmp_path))
    assert list(questions) == ["tiny"]
    first, second, third = questions["tiny"]
    assert [q.question_index for q in questions["tiny"]] == [0, 1, 2]
    assert (first.answer, first.adversarial_answer, first.category) == ("a cat", None, 4)
    assert second.answer == "2021"  # ints in the file become text
    assert second.evidence == ["D1:2"] and second.raw_evidence == ["D1:02"]
    assert (third.answer, third.adversarial_answer, third.category) == (None, "a cat", 5)
    assert third.evidence == ["D1:1"] and third.raw_evidence == ["D1:1; D7:7"]


def test_load_questions_with_repairs_sums_the_file(tmp_path: Path) -> None:
    _, counts = load_questions_with_repairs(_tiny_locomo(tmp_path))
    assert counts == RepairCounts(split=1, reformatted=1, dropped=1)


def test_load_questions_rejects_a_question_without_category(tmp_path: Path) -> None:
    path = _tiny_locomo(tmp_path)
    data = json.loads(path.read_text())
    del data[0]["qa"][1]["category"]
    path.write_text(json.dumps(data))
    with pytest.raises(FormatError, match=r"tiny qa\[1\]: 'category' must be an integer"):
        load_questions(path)


def test_category_names() -> None:
    assert CATEGORY_NAMES == {
        1: "multi-hop",
        2: "temporal",
        3: "open-domain",
        4: "single-hop",
        5: "adversarial",
    }


def test_real_locomo_dev_questions(locomo_dev: Path) -> None:
    questions, counts = load_questions_with_repairs(locomo_dev)
    every = [q for qs in questions.values() for q in qs]
    assert len(every) == 999
    assert sum(1 for q in every if q.category in (1, 2, 3, 4)) == 762
    assert all(q.answer is not None for q in every if q.category != 5)
    assert all(q.adversarial_answer is not None for q in every if q.category == 5)
    # Known dirt (README): one "D8:6; D9:17", one "D:11:26", and ids that are not turns.
    assert counts == RepairCounts(split=1, reformatted=1, dropped=2, duplicates=0)


# ---------------------------------------------------------------------------------------------
# Retrieval metrics
# ---------------------------------------------------------------------------------------------

RETRIEVED = [{"D1:1"}, {"D2:1", "D2:2"}, set(), {"D3:1"}, {"D2:2", "D5:5"}]


@pytest.mark.parametrize(
    ("evidence", "rank"),
    [({"D2:2"}, 2), ({"D3:1", "D5:5"}, 4), ({"D1:1"}, 1), ({"D9:9"}, None)],
)
def test_first_hit_rank(evidence: set[str], rank: int | None) -> None:
    assert first_hit_rank(RETRIEVED, evidence) == rank


@pytest.mark.parametrize(
    ("evidence", "k", "recall", "mrr", "all_recall"),
    [
        ({"D2:2"}, 1, 0.0, 0.0, 0.0),
        ({"D2:2"}, 2, 1.0, 0.5, 1.0),
        ({"D2:2", "D3:1"}, 2, 1.0, 0.5, 0.0),  # one of two found: hit, but not all evidence
        ({"D2:2", "D3:1"}, 4, 1.0, 0.5, 1.0),
        ({"D5:5"}, 4, 0.0, 0.0, 0.0),
        ({"D5:5"}, 5, 1.0, 0.2, 1.0),
        ({"D5:5"}, 50, 1.0, 0.2, 1.0),  # k beyond the list
        ({"D9:9"}, 5, 0.0, 0.0, 0.0),
    ],
)
def test_recall_mrr_and_all_evidence_recall(
    evidence: set[str], k: int, recall: float, mrr: float, all_recall: float
) -> None:
    assert recall_at_k(RETRIEVED, evidence, k) == recall
    assert mrr_at_k(RETRIEVED, evidence, k) == pytest.approx(mrr)
    assert all_evidence_recall_at_k(RETRIEVED, evidence, k) == all_recall


def test_retrieval_metrics_on_an_empty_result_list() -> None:
    assert first_hit_rank([], {"D1:1"}) is None
    assert recall_at_k([], {"D1:1"}, 5) == 0.0
    assert mrr_at_k([], {"D1:1"}, 5) == 0.0
    assert all_evidence_recall_at_k([], {"D1:1"}, 5) == 0.0


@pytest.mark.parametrize(
    "metric",
    [
        lambda: first_hit_rank(RETRIEVED, set()),
        lambda: recall_at_k(RETRIEVED, set(), 5),
        lambda: mrr_at_k(RETRIEVED, set(), 5),
        lambda: all_evidence_recall_at_k(RETRIEVED, set(), 5),
    ],
)
def test_retrieval_metrics_refuse_questions_without_evidence(metric) -> None:
    with pytest.raises(ValueError, match="no evidence"):
        metric()


def test_retrieval_metrics_refuse_k_below_one() -> None:
    with pytest.raises(ValueError, match="k must be at least 1"):
        recall_at_k(RETRIEVED, {"D1:1"}, 0)


# ---------------------------------------------------------------------------------------------
# D@1
# ---------------------------------------------------------------------------------------------

QUESTION = "When did Caroline go to the LGBTQ support group?"
T0 = 1_683_554_160  # 2023-05-08 13:56 UTC


def _d_at_1(**overrides) -> bool:
    args = dict(
        top_source_turns={"D7:3"},
        top_content="Caroline: The support group last week was great.",
        top_persons=["Caroline"],
        top_session_start=T0 + 30 * DAY,
        question=QUESTION,
        evidence={"D1:3"},
        evidence_session_starts=[T0],
    )
    args.update(overrides)
    return distractor_at_1(**args)


def test_d_at_1_look_alike_from_another_episode_is_a_distractor() -> None:
    assert _d_at_1() is True


def test_d_at_1_evidence_is_never_a_distractor() -> None:
    assert _d_at_1(top_source_turns={"D7:3", "D1:3"}) is False


def test_d_at_1_needs_something_in_common_with_the_question() -> None:
    assert _d_at_1(top_content="Melanie: I painted a sunrise.", top_persons=["Melanie"]) is False


def test_d_at_1_a_shared_person_is_enough() -> None:
    assert _d_at_1(top_content="Bob: Painted it myself.", top_persons=["Caroline"]) is True


def test_d_at_1_stopwords_alone_are_not_enough() -> None:
    # "when", "did", "the", "to" are shared, but they are stopwords.
    assert _d_at_1(top_content="When did the bus go to town", top_persons=[]) is False


@pytest.mark.parametrize(
    ("gap_days", "expected"),
    [(0, False), (4.9, False), (5.0, False), (5.01, True), (-5.01, True), (-2, False)],
)
def test_d_at_1_session_must_be_more_than_five_days_from_every_evidence_session(
    gap_days: float, expected: bool
) -> None:
    start = T0 + int(gap_days * DAY)
    assert _d_at_1(top_session_start=start) is expected


def test_d_at_1_near_any_evidence_session_is_not_a_distractor() -> None:
    far_and_near = [T0, T0 + 29 * DAY]  # the second is 1 day from the top memory
    assert _d_at_1(evidence={"D1:3", "D6:1"}, evidence_session_starts=far_and_near) is False


def test_d_at_1_refuses_questions_without_evidence() -> None:
    with pytest.raises(ValueError):
        _d_at_1(evidence=set())
    with pytest.raises(ValueError):
        _d_at_1(evidence_session_starts=[])


def test_content_words() -> None:
    assert content_words("When did Caroline go to the LGBTQ support-group? It's 2023!") == {
        "caroline",
        "lgbtq",
        "support",
        "group",
        "2023",
    }
    assert content_words("") == set()
    assert {"the", "and", "what", "when", "did"} <= STOPWORDS
    assert 120 <= len(STOPWORDS) <= 250


# ---------------------------------------------------------------------------------------------
# Answer metrics
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("The Cat and the Hat!", "cat hat"),
        ("  7 May,   2023. ", "7 may 2023"),
        ("an apple a day", "apple day"),
        ("Theatre and band", "theatre band"),  # whole words only
        ("Caroline’s “pride” flag", "carolines pride flag"),  # Unicode punctuation too
        ("don't", "dont"),
        (2022, "2022"),
        ("", ""),
    ],
)
def test_normalize_answer(text, expected: str) -> None:
    assert normalize_answer(text) == expected


@pytest.mark.parametrize(
    ("prediction", "reference", "f1"),
    [
        ("7 May 2023", "7 May 2023", 1.0),
        ("The 7th of May", "7 May 2023", 1 / 3),  # only "may" shared: p = r = 1/3
        ("May 2023", "7 May 2023", 0.8),  # p = 2/2, r = 2/3 → 2·1·(2/3)/(5/3)
        ("painting and pottery", "Pottery, painting, camping", 0.8),  # p = 1, r = 2/3
        ("cat cat dog", "cat dog dog", 2 / 3),  # multiset overlap = 2; p = r = 2/3
        ("", "7 May 2023", 0.0),
        ("7 May 2023", "", 0.0),
        ("", "", 1.0),
        ("the", "a", 1.0),  # both normalise to nothing
    ],
)
def test_token_f1(prediction: str, reference: str, f1: float) -> None:
    assert token_f1(prediction, reference) == pytest.approx(f1)


@pytest.mark.parametrize(
    ("prediction", "reference", "f1"),
    [
        ("cat cat dog", "cat dog dog", 1.0),  # unique tokens {cat, dog} on both sides
        ("cat cat cat", "cat dog", 2 / 3),  # p = 1/1, r = 1/2
        ("May 2023", "7 May 2023", 0.8),
        ("", "x", 0.0),
        ("x", "", 0.0),
        ("", "", 1.0),
    ],
)
def test_set_f1(prediction: str, reference: str, f1: float) -> None:
    assert set_f1(prediction, reference) == pytest.approx(f1)


@pytest.mark.parametrize(
    ("prediction", "reference", "score"),
    [
        ("7 May 2023", "7 May 2023", 1.0),
        ("May", "7 May 2023", math.exp(1 - 3)),  # precision 1, BP = exp(1 - 3/1)
        ("May 2023", "7 May 2023", math.exp(1 - 3 / 2)),
        ("on 7 May 2023", "7 May 2023", 3 / 4),  # longer: no penalty, p = 3/4
        ("cat cat cat cat", "cat dog", 1 / 4),  # clipped: "cat" counts once
        ("dog", "cat", 0.0),
        ("The 7th of May", "7 May 2023", 1 / 3),  # p = 1/3, same length: BP = 1
        ("", "cat", 0.0),
        ("cat", "", 0.0),
        ("", "", 1.0),
    ],
)
def test_bleu1(prediction: str, reference: str, score: float) -> None:
    assert bleu1(prediction, reference) == pytest.approx(score)


def test_answer_metrics_accept_numbers() -> None:
    assert token_f1(2022, "2022") == 1.0
    assert bleu1("2022", 2022) == 1.0
