"""Missing ranks filled in the content list (``RetrievalSettings.fill_content_ranks``): a memory
one source list missed ranks right after that list's last hit, as inside the range, instead of
taking no share of the fusion. Without it BM25's first hit, which the dense list's cut missed,
loses to every memory both lists found at middling ranks."""

from __future__ import annotations

import pytest

from ramem_local import Memory, SearchDefaults
from ramem_local.eval.locomo import load_questions
from ramem_local.eval.retrieval import LOCOMO_COUNTRY
from ramem_local.retrieve import Query, RetrievalSettings, content_list, question_vector
from ramem_local.text import fts_match_query

KAPPA = 60.0
WORDS = ["garden", "river", "train", "violin", "pottery", "bakery", "chess", "lantern"]


@pytest.fixture
def memory(tmp_path, hashing_embedder):
    with Memory.open(tmp_path / "bank.db", embedder=hashing_embedder) as opened:
        for day in range(1, 29):
            first, second = WORDS[day % 8], WORDS[(day * 3) % 8]
            opened.add(f"Talked about the {first} and the {second} on day {day}",
                       at=f"2024-02-{day:02d}")
        # a query word among many others: a BM25 hit, far down the dense list
        for day in range(1, 21):
            opened.add("Wrote to Ana about the harbour, the weather, the rent, the new shoes, "
                       f"the printer, the neighbours and an old lantern ({day})",
                       at=f"2024-03-{day:02d}")
        yield opened


def _content(memory, question: str, fill: bool):
    settings = RetrievalSettings(k=25, depth=25, fill_content_ranks=fill)
    vector = question_vector(memory.store, memory.embedder, question, settings, None)
    query = Query(vector=vector, fts=fts_match_query(question))
    return content_list(memory.store, query, settings, None, limit=100)


def test_a_memory_one_list_missed_ranks_after_that_lists_last_hit(memory):
    rows = _content(memory, "What about the violin and the lantern?", fill=True)
    dense_hits = sum(row.dense_rank is not None for row in rows)
    bm25_hits = sum(row.bm25_rank is not None for row in rows)
    assert dense_hits == 25 and 0 < bm25_hits  # the dense list is cut at depth
    assert any(row.dense_rank is None for row in rows), "some memory only BM25 found"
    for row in rows:
        dense = row.dense_rank if row.dense_rank is not None else dense_hits + 1
        bm25 = row.bm25_rank if row.bm25_rank is not None else bm25_hits + 1
        assert row.rrf == pytest.approx(1 / (KAPPA + dense) + 1 / (KAPPA + bm25))
    assert [row.rrf for row in rows] == sorted((row.rrf for row in rows), reverse=True)


def test_without_filling_a_memory_one_list_missed_has_that_lists_share_only(memory):
    rows = _content(memory, "What about the violin and the lantern?", fill=False)
    for row in rows:
        expected = sum(1 / (KAPPA + rank) for rank in (row.dense_rank, row.bm25_rank)
                       if rank is not None)
        assert row.rrf == pytest.approx(expected)


@pytest.mark.real_model
def test_a_dense_hit_bm25_missed_reaches_the_first_ten(tmp_path, minilm_dir, locomo_dev):
    """LoCoMo dev conv-26, "What do Melanie's kids like?": the turn that answers it ("They were
    stoked for the dinosaur exhibit! They love learning about animals ...") shares no word
    with the question that BM25 ranks it by; the dense list has it third. With no share of
    the BM25 side it was listed after the tenth place, behind turns both lists found at
    middling ranks; with the rank after BM25's last hit it is inside."""
    question = next(q for q in load_questions(locomo_dev)["conv-26"]
                    if q.question == "What do Melanie's kids like?")
    with Memory.open(tmp_path / "conv-26.db", embedder=minilm_dir, country=LOCOMO_COUNTRY,
                     defaults=SearchDefaults()) as memory:
        memory.ingest(locomo_dev, format="locomo", conversations=["conv-26"])

        def answering(fill: bool) -> list:
            response = memory.search(question.question,
                                     settings=RetrievalSettings(k=10, fill_content_ranks=fill))
            return [c for c in response.results
                    if set(c.memory.source_turns) & set(question.evidence)]

        assert answering(fill=False) == []
        found = answering(fill=True)
        assert found and found[0].dense_rank is not None and found[0].bm25_rank is None
