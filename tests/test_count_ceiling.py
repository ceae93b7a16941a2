"""``scripts/count_ceiling.py``: the oracle cut-off on a real bank (MiniLM, SQLite, FTS5)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from ramem_local.eval.journal import JournalSpec, generate_journal

pytestmark = pytest.mark.real_model

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "count_ceiling.py"
_spec = importlib.util.spec_from_file_location("count_ceiling", SCRIPT)
assert _spec is not None and _spec.loader is not None
count_ceiling = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(count_ceiling)


def test_the_kind_direction_orders_a_month_at_least_as_well_as_the_question(minilm_dir):
    """150 days of the seed-11 journal: 27 count questions; measured 16 of them ordered
    exactly along the question alone, 17 along the kind direction."""
    spec = JournalSpec(days=150, seed=11, questions_per_style=40)
    n, exact = count_ceiling.oracle_exact(spec, minilm_dir)
    assert n == sum(q.style == "count" for q in generate_journal(spec).questions) == 27
    assert set(exact) == {"question alone", "kind_direction"}
    assert exact["kind_direction"] >= exact["question alone"] > 0.5
