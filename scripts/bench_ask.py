"""Benchmark: what `ramem ask` costs a user, one command per question (prints a table).

    .venv/bin/python scripts/bench_ask.py ../shared/data/locomo/locomo_dev.json \
        --embedder ../shared/models/all-MiniLM-L6-v2 --llm qwen2.5-coder-1.5b-instruct \
        [--bank-dir DIR] [--n 5]

The first ``--n`` questions of categories 1-4 of LoCoMo dev conv-26 are asked with `ramem ask
--json`, each as its own process, as a user runs it: the wall time of the whole command
(Python start, model load, analysis, search, answer) and the trace's stages. Each question is
asked twice in turn: *cold*, with the LLM's saved prompt prefixes removed from the user cache
first (as on a machine's first `ask`), and *warm*, with them kept (every later `ask`,
``runtime.prompt_prefix.SavedPrefixes``). Compare the two within one run: the machines are
shared. The bank (every conversation of the file, asked with ``--conversation conv-26``) is
built in ``--bank-dir`` on first use (the given embedder, no LLM).
"""

from __future__ import annotations

import argparse
import json
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


def ask(bank: Path, llm: str, question: str) -> tuple[float, dict]:
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, str(ROOT / "cli.py"), "--bank", str(bank), "--llm", llm, "ask",
         question, "--conversation", SAMPLE, "--json"],
        capture_output=True, text=True, check=False, cwd=ROOT)
    seconds = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"ramem ask failed: {done.stderr[-2000:]}")
    return seconds, json.loads(done.stdout)


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
    rows = {"cold": [], "warm": []}
    print(f"# {len(questions)} questions of LoCoMo dev {SAMPLE}, `ramem ask --json`, one process "
          f"each; LLM {args.llm}; cold = saved prompt prefixes removed first")
    print(f"{'question':<60} {'mode':<5} {'wall s':>7} {'analyze s':>9} {'answer s':>8}  answer")
    for question in questions:
        for mode in ("cold", "warm"):
            if mode == "cold":
                shutil.rmtree(states, ignore_errors=True)
            seconds, reply = ask(bank, args.llm, question)
            timings = reply["trace"]["timings_ms"]
            rows[mode].append((seconds, reply["answer"]))
            print(f"{question[:60]:<60} {mode:<5} {seconds:7.1f} "
                  f"{timings.get('analyze', 0) / 1000:9.1f} {timings.get('answer', 0) / 1000:8.1f}"
                  f"  {reply['answer'][:40]!r}")
    for mode, measured in rows.items():
        print(f"# {mode}: median {statistics.median(s for s, _ in measured):.1f} s per ask")
    same = sum(cold[1] == warm[1] for cold, warm in zip(rows["cold"], rows["warm"], strict=True))
    print(f"# the same answer cold and warm: {same} of {len(questions)}")


if __name__ == "__main__":
    main()
