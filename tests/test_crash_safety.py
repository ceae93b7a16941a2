"""A reduced run of ``scripts/kill_harness.py``: ``ramem ingest`` and ``ramem import`` (a
Claude and a ChatGPT export) killed with SIGKILL at 3 random moments each; after each kill the
bank passes integrity_check, the FTS index matches the memories table and every turn has its
memory, and resuming ends in the same canonical dump as an uninterrupted run. The full runs
(20+ kills, with an embedder) are in docs/reliability.md."""

from __future__ import annotations

import importlib.util
import signal
import sys
from pathlib import Path

import pytest

HARNESS = Path(__file__).resolve().parents[1] / "scripts" / "kill_harness.py"

pytestmark = pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="needs SIGKILL")


def load_harness():
    spec = importlib.util.spec_from_file_location("kill_harness", HARNESS)
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("kill_harness", module)
    spec.loader.exec_module(module)
    return module


def test_three_kills_during_ingest_leave_a_sound_bank_that_resumes_to_the_same_content(
        tmp_path):
    harness = load_harness()
    figures = harness.run_harness(kills=3, turns=1500, seed=3, embedder=None, workdir=tmp_path,
                                  log=lambda _line: None)
    assert figures["kills"] == 3 and figures["cycles"] >= 2


@pytest.mark.parametrize("kind", ["claude", "chatgpt"])
def test_three_kills_during_import_leave_a_sound_bank_that_resumes_to_the_same_content(
        tmp_path, kind):
    harness = load_harness()
    figures = harness.run_harness(kills=3, turns=1500, seed=3, embedder=None, workdir=tmp_path,
                                  log=lambda _line: None, kind=kind)
    assert figures["kills"] == 3 and figures["cycles"] >= 2
    assert figures["turns"] == 1500


def test_the_canonical_dump_sees_a_missing_turn(tmp_path):
    harness = load_harness()
    source = tmp_path / "t.jsonl"
    harness.write_jsonl(source, 30, seed=1)
    first, second = tmp_path / "a.db", tmp_path / "b.db"
    harness.run_to_end(first, source, None)
    lines = source.read_text().splitlines()
    source.write_text("\n".join(lines[:-1]) + "\n")
    harness.run_to_end(second, source, None)
    assert harness.canonical_dump(first)["turns"] != harness.canonical_dump(second)["turns"]
    harness.check_bank(second, expect_vectors=False)
