"""At journal scale, "What did I do yesterday?" must list yesterday's entries first.

A five-year journal (> 3,000 dated entries, written by the benchmark's generator) is ingested
through the product path once per embedder setting — MiniLM, and none (BM25 only). For a few
days, half of them with an entry written late ("Yesterday I …", filed the next day), the
search asked the day after must rank every entry whose event is that day above everything
else. Many entries of other days look alike (the same people, places and activities), so
content relevance alone cannot do it: this is the context-collapse test at scale (DESIGN.md §4).
"""

from __future__ import annotations

import random
from datetime import timedelta

import pytest
from conftest import real_embedder_dir

from ramem_local import Memory
from ramem_local.eval.journal import ASKED_AT, JournalSpec, generate_journal

# The journal before multi-step recall: no one-offs, no assistant chat (memories == entries).
SPEC = JournalSpec(years=5, seed=7, questions_per_style=0, one_offs=False, chat=False)
DAYS_ASKED = 8


@pytest.fixture(
    scope="module",
    params=[pytest.param("minilm", marks=pytest.mark.real_model), "bm25"],
)
def journal_bank(request, tmp_path_factory):
    """(journal, open Memory) built once per module and embedder setting."""
    embedder = None
    if request.param == "minilm":
        embedder = real_embedder_dir()
        if embedder is None:
            pytest.skip("RAMEM_TEST_EMBEDDER is not set to the all-MiniLM-L6-v2 ONNX folder")
    journal = generate_journal(SPEC)
    folder = tmp_path_factory.mktemp(f"journal-{request.param}")
    source = journal.write_jsonl(folder / "journal.jsonl")
    memory = Memory.open(folder / "bank.db", embedder=embedder)
    memory.ingest(source)
    yield journal, memory
    memory.close()


def asked_days(journal) -> list:
    """Half the days have an entry written late about them, half do not; spread over years."""
    rng = random.Random(1)
    by_day: dict = {}
    for entry in journal.entries:
        by_day.setdefault(entry.event_day, []).append(entry)
    days = [d for d in sorted(by_day) if d < journal.spec.end]
    # Asked the next day, so the late entry must have been filed by then.
    with_late = [d for d in days if {e.late_days for e in by_day[d]} == {0, 1}]
    on_time = [d for d in days if not any(e.late_days for e in by_day[d])]
    return sorted(rng.sample(with_late, DAYS_ASKED // 2) + rng.sample(on_time, DAYS_ASKED // 2))


def test_yesterday_lists_all_of_yesterdays_entries_first(journal_bank):
    journal, memory = journal_bank
    assert len(journal.entries) >= 3000
    assert memory.stats()["memories"] == len(journal.entries)
    failures = []
    for day in asked_days(journal):
        evidence = {e.id for e in journal.entries if e.event_day == day}
        as_of = (day + timedelta(days=1)).isoformat() + ASKED_AT
        response = memory.search("What did I do yesterday?", as_of=as_of)
        top = [turn for c in response.results[: len(evidence)] for turn in c.memory.source_turns]
        if set(top) != evidence:
            ranks = {turn: rank for rank, c in enumerate(response.results, 1)
                     for turn in c.memory.source_turns}
            failures.append(f"{day}: evidence ranks "
                            f"{ {e: ranks.get(e) for e in sorted(evidence)} }, top {top}")
    assert not failures, "\n".join(failures)
