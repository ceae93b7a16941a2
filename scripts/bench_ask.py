"""Benchmark: what `ramem ask` costs a user, one command per question (prints a table).

    .venv/bin/python scripts/bench_ask.py ../shared/data/locomo/locomo_dev.json \
        --embedder ../shared/models/all-MiniLM-L6-v2 --llm qwen2.5-coder-1.5b-instruct \
        [--bank-dir DIR] [--n 5]

The first ``--n`` questions of categories 1-4 of LoCoMo dev conv-26 are asked with `ramem ask`,
each as its own process, as a user runs it: the wall time of the whole command (Python start,
model load, analysis, search, answer). Each question is asked three times in turn: *cold*
(``--json``), with the LLM's saved prompt prefixes removed from the user cache first, as on a
machine's first `ask`; *warm* (``--json``), with them kept, as every later `ask`
(``runtime.prompt_prefix.SavedPrefixes``); *text*, warm, as a person reads it: also the
seconds until the answer's first words reach stdout (it streams as the model writes it).
Compare within one run: the machines are shared. The bank (every conversation of the file,
asked with ``--conversation conv-26``) is built in ``--bank-dir`` on first use (the given
embedder, no LLM).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from ramem_local.runtime.loading import PREFIX_STATES_FOLDER
from ramem_local.runtime.registry import cache_dir

SAMPLE = "conv-26"
ROOT = Path(__file__).resolve().parents[1]
FIRST_WORDS = 8  # characters of the answer that count as its first words on screen


def command(bank: Path, llm: str, question: str, *extra: str) -> list[str]:
    return [sys.executable, str(ROOT / "cli.py"), "--bank", str(bank), "--llm", llm, "ask",
            question, "--conversation", SAMPLE, *extra]


def ask_json(bank: Path, llm: str, question: str) -> tuple[float, dict]:
    started = time.perf_counter()
    done = subprocess.run(command(bank, llm, question, "--json"), capture_output=True,
                          text=True, check=False, cwd=ROOT)
    seconds = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"ramem ask failed: {done.stderr[-2000:]}")
    return seconds, json.loads(done.stdout)


def ask_text(bank: Path, llm: str, question: str, answer: str) -> tuple[float, float | None]:
    """The wall seconds of the text command, and when stdout first held the start of
    ``answer`` (None: it never did, e.g. "not in memory" said another way)."""
    started = time.perf_counter()
    process = subprocess.Popen(command(bank, llm, question), stdout=subprocess.PIPE,
                               stderr=subprocess.DEVNULL, cwd=ROOT,
                               env={**os.environ, "PYTHONUNBUFFERED": "1"})
    assert process.stdout is not None
    shown, first_words = b"", None
    wanted = answer[:FIRST_WORDS].encode("utf-8")
    while chunk := os.read(process.stdout.fileno(), 256):
        shown += chunk
        if first_words is None and wanted and wanted in shown:
            first_words = time.perf_counter() - started
    process.wait()
    return time.perf_counter() - started, first_words


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("locomo", type=Path)
    parser.add_argument("--embedder", required=True)
    parser.add_argument("--llm", required=True, help="a registry name or a GGUF file")
    parser.add_argument("--bank-dir", type=Path)
    parser.add_argument("--n", type=int, default=5)
    args = parser.parse_args()
    folder = args.bank_dir or Path(tempfile.mkdtemp(prefix="bench-ask-"))
    folder.mkdir(parents=True, exist_ok=True)
    bank = folder / "locomo-dev.db"
    if not bank.exists():
        subprocess.run([sys.executable, str(ROOT / "cli.py"), "--bank", str(bank),
                        "--embedder", args.embedder, "ingest", str(args.locomo)],
                       check=True, cwd=ROOT, capture_output=True)
    samples = json.loads(args.locomo.read_text())
    questions = [q["question"] for c in samples if c["sample_id"] == SAMPLE for q in c["qa"]
                 if q.get("category") in (1, 2, 3, 4) and q.get("evidence")][: args.n]
    states = cache_dir() / PREFIX_STATES_FOLDER
    walls: dict[str, list[float]] = {"cold": [], "warm": [], "text": []}
    firsts: list[float] = []
    same = 0
    print(f"# {len(questions)} questions of LoCoMo dev {SAMPLE}, `ramem ask`, one process each; "
          f"LLM {args.llm}; cold = saved prompt prefixes removed first")
    print(f"{'question':<52} {'cold s':>7} {'warm s':>7} {'text s':>7} {'words s':>8}"
          f"  {'analyze/answer s (warm)':>24}  answer")
    for question in questions:
        shutil.rmtree(states, ignore_errors=True)
        cold, cold_reply = ask_json(bank, args.llm, question)
        warm, reply = ask_json(bank, args.llm, question)
        text, first_words = ask_text(bank, args.llm, question, reply["answer"])
        timings = reply["trace"]["timings_ms"]
        for mode, seconds in (("cold", cold), ("warm", warm), ("text", text)):
            walls[mode].append(seconds)
        if first_words is not None:
            firsts.append(first_words)
        same += cold_reply["answer"] == reply["answer"]
        stages = f"{timings.get('analyze', 0) / 1000:.1f} / {timings.get('answer', 0) / 1000:.1f}"
        words = f"{first_words:8.1f}" if first_words is not None else f"{'-':>8}"
        print(f"{question[:52]:<52} {cold:7.1f} {warm:7.1f} {text:7.1f} {words}  {stages:>24}"
              f"  {reply['answer'][:40]!r}")
    for mode, seconds in walls.items():
        print(f"# {mode}: median {statistics.median(seconds):.1f} s per ask")
    if firsts:
        print(f"# first answer words on stdout (text): median {statistics.median(firsts):.1f} s "
              f"after the command started ({len(firsts)} of {len(questions)} answers found)")
    print(f"# the same answer cold and warm: {same} of {len(questions)}")


if __name__ == "__main__":
    main()
