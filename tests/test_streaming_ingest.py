"""``ramem ingest`` of a JSONL streams: the file is checked line by line, then read again and
written batch by batch, so memory does not grow with the file (issue 12: a 200,000-turn file
took 290 MB when it was read whole; docs/reliability.md has the figures)."""

from __future__ import annotations

import json
import os
import random
import re
import subprocess
import sys
from collections.abc import Iterator
from datetime import timezone
from pathlib import Path

import pytest

from ramem_local.api import Memory
from ramem_local.ingest.formats import open_turns
from ramem_local.ingest.pipeline import ingest_turns
from ramem_local.types import Turn

REPO = Path(__file__).resolve().parents[1]
UTC = timezone.utc
WORDS = "garden river violin bread museum chess lake bicycle".split()

# Runs the CLI and prints the process's peak resident memory on exit. VmHWM, not ru_maxrss:
# a child's ru_maxrss includes the parent's memory at the fork (the pytest process), VmHWM is
# the peak of the program the child runs.
PEAK_RSS = """
import atexit, sys

def report():
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                print("peak-kb", line.split()[1], file=sys.stderr)

atexit.register(report)
sys.argv = ["ramem", *sys.argv[1:]]
from ramem_local.cli import main
main()
"""


def write_chat(path: Path, turns: int, *, conversations: int = 4, words: int = 100) -> Path:
    """``turns`` turns of about ``6 * words`` bytes, round-robin over the conversations, with
    ids; one long session each (turns a minute apart)."""
    rng = random.Random(turns)
    with path.open("w", encoding="utf-8") as handle:
        for index in range(turns):
            name = f"c{index % conversations}"
            text = " ".join(rng.choice(WORDS) for _ in range(words))
            handle.write(json.dumps({"conversation": name, "speaker": "A", "id": f"{name}-{index}",
                                     "text": f"Turn {index} {text}",
                                     "timestamp": 1_700_000_000 + 60 * index}) + "\n")
    return path


def peak_kb(bank: Path, source: Path) -> int:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    done = subprocess.run(
        [sys.executable, "-c", PEAK_RSS, "--db", str(bank), "ingest", "--no-event-times",
         str(source)], env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    return int(re.search(r"peak-kb (\d+)", done.stderr)[1])


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="needs Linux /proc")
def test_the_peak_memory_of_an_ingest_does_not_grow_with_the_file(tmp_path):
    """N and 4N turns (2.2 and 9 MB): a reader holding the file grows by more than the 6.8 MB
    the larger file adds (the text, its lines, the turns: 20 MB measured before streaming);
    the streamed ingest must grow by less than half of it."""
    small = write_chat(tmp_path / "small.jsonl", 3000)
    large = write_chat(tmp_path / "large.jsonl", 12000)
    added = large.stat().st_size - small.stat().st_size
    growth = (peak_kb(tmp_path / "large.db", large) - peak_kb(tmp_path / "small.db", small)) * 1024
    assert growth < added / 2, f"peak memory grew by {growth} bytes for {added} more bytes"


def held_while_ingesting(path: Path, bank: Path, **limits: int) -> int:
    """The most turns yielded by the file's source and not yet written (reported to
    ``progress``) at any moment of an ingest."""
    source = open_turns(path)
    counts = {"yielded": 0, "written": 0, "most_held": 0}

    def counted() -> Iterator[tuple[int, Turn]]:
        for item in source.turns():
            counts["yielded"] += 1
            counts["most_held"] = max(counts["most_held"], counts["yielded"] - counts["written"])
            yield item

    def written(count: int) -> None:
        counts["written"] += count

    with Memory.open(bank) as memory:
        report = ingest_turns(memory.store, source.outlines, counted(), embedder=None, tz=UTC,
                              progress=written, **limits)
    assert report.turns_new == counts["written"] == counts["yielded"]
    return counts["most_held"]


def test_at_most_a_batch_of_each_conversation_is_held(tmp_path):
    path = write_chat(tmp_path / "chat.jsonl", 1000, conversations=3, words=3)
    assert 64 < held_while_ingesting(path, tmp_path / "bank.db", batch_size=64) <= 3 * 64


def test_many_interleaved_conversations_are_held_up_to_the_limit_to_the_same_content(tmp_path):
    """50 conversations in turn would hold 50 partial batches; past ``max_held`` turns they
    are all written, and the bank ends the same as with one batch per conversation."""
    path = write_chat(tmp_path / "chat.jsonl", 2000, conversations=50, words=3)
    most = held_while_ingesting(path, tmp_path / "capped.db", batch_size=64, max_held=200)
    assert 150 < most <= 201
    held_while_ingesting(path, tmp_path / "free.db", batch_size=64, max_held=10**6)
    with Memory.open(tmp_path / "capped.db") as capped, \
            Memory.open(tmp_path / "free.db") as free:
        assert content(capped) == content(free)


def content(memory: Memory) -> dict[str, list]:
    """The bank's content without row ids (turn memories named by their turn's key)."""
    query = memory.store.db.execute
    return {
        "sessions": sorted(query('SELECT c.name, s.ordinal, s.start, s."end" FROM sessions s '
                                 "JOIN conversations c ON c.id = s.conversation_id")),
        "turns": sorted(query("SELECT c.name, t.turn_key, t.speaker, t.text, t.timestamp, "
                              "s.ordinal FROM turns t JOIN conversations c ON c.id = "
                              "t.conversation_id JOIN sessions s ON s.id = t.session_id")),
        "memories": sorted(query(
            "SELECT t.turn_key, m.content, m.session_start, m.session_end, m.event_start, "
            "m.neighbours FROM memories m JOIN memory_turns mt ON mt.memory_id = m.id "
            "JOIN turns t ON t.id = mt.turn_id")),
    }


def test_interleaved_conversations_end_as_if_each_came_alone_and_a_rerun_resumes(tmp_path):
    rows = write_chat(tmp_path / "mixed.jsonl", 700, conversations=3, words=4) \
        .read_text().splitlines()
    grouped = tmp_path / "grouped" / "mixed.jsonl"  # the same stem: the same default name
    grouped.parent.mkdir()
    grouped.write_text("\n".join(sorted(rows, key=lambda r: json.loads(r)["conversation"])))
    with Memory.open(tmp_path / "a.db") as memory:
        memory.ingest(grouped)
        expected = content(memory)
    half = tmp_path / "half" / "mixed.jsonl"
    half.parent.mkdir()
    half.write_text("\n".join(rows[:350]))
    with Memory.open(tmp_path / "b.db") as memory:
        memory.ingest(half)
        report = memory.ingest(tmp_path / "mixed.jsonl")
        assert (report.turns_seen, report.turns_new) == (700, 350)
        assert content(memory) == expected
    assert len(expected["turns"]) == 700 and len(expected["memories"]) == 700
