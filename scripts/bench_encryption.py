"""Benchmark: what an encrypted bank costs, against a plain one, in one run (prints a table).

    .venv/bin/python scripts/bench_encryption.py --embedder ../shared/models/all-MiniLM-L6-v2 \
        [--years 5] [--bank-dir DIR] [--rounds 3] [--one-off-runs 15]

The journal benchmark's journal (seed 7, ``--years`` years, its chat included) is written as
JSONL and measured three ways — plain, chacha20 (the default cipher) and sqlcipher:

* ingest throughput, BM25 only (the storage path alone, where encryption's cost shows), the
  whole journal into a new bank; and with the embedder, its first 1,000 rows;
* warm ``Memory.search`` on the whole journal's dense bank (the plain bank is built once and
  kept in ``--bank-dir``; the encrypted ones are its copies, encrypted by ``Memory.encrypt``):
  40 of the benchmark's questions, each asked of the three banks in turn, the fastest of
  ``--rounds`` rounds counting;
* a one-off ``ramem search`` in a new process (Python start, imports, opening the bank with
  its key derivation, loading the embedder, the search), ``--one-off-runs`` times per bank,
  in turn; the median, and the median of the run-by-run ratios.

The machines are shared and noisy: compare the ratios within one run.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from ramem_local import BankKey, Memory, SearchDefaults
from ramem_local.eval.journal import JOURNAL_COUNTRY, JournalSpec, generate_journal

PASSPHRASE = "a benchmark passphrase"
CONFIGS = (("plain", None), ("chacha20", "chacha20"), ("sqlcipher", "sqlcipher"))
REPO = Path(__file__).resolve().parents[1]


def open_bank(path: Path, cipher: str | None, embedder: str | None) -> Memory:
    return Memory.open(path, embedder=embedder, country=JOURNAL_COUNTRY,
                       defaults=SearchDefaults(), default_embedder="none",
                       key=None if cipher is None else BankKey(PASSPHRASE), cipher=cipher)


def ingest_seconds(source: Path, folder: Path, cipher: str | None,
                   embedder: str | None) -> float:
    bank = folder / f"ingest-{cipher or 'plain'}-{time.monotonic_ns()}.db"
    with open_bank(bank, cipher, embedder) as memory:
        started = time.perf_counter()
        memory.ingest(source)
        seconds = time.perf_counter() - started
    for suffix in ("", "-wal", "-shm"):
        Path(f"{bank}{suffix}").unlink(missing_ok=True)
    return seconds


def fastest_in_turn(measure, rounds: int) -> dict[str, float]:
    """The fastest of ``rounds`` runs per configuration, the configurations taken in turn
    and each round starting with the next one (no configuration always runs first)."""
    best = {label: float("inf") for label, _ in CONFIGS}
    for round_ in range(rounds):
        for label, cipher in CONFIGS[round_ % 3:] + CONFIGS[:round_ % 3]:
            best[label] = min(best[label], measure(cipher))
    return best


def dense_banks(source: Path, folder: Path, embedder: str) -> dict[str, Path]:
    """The plain dense bank (built once, kept) and its encrypted copies."""
    plain = folder / f"{source.stem}-dense-plain.db"
    with open_bank(plain, None, embedder) as memory:
        memory.ingest(source)  # resumes: a no-op on a bank built before
    banks = {"plain": plain}
    for label, cipher in CONFIGS[1:]:
        copy = folder / f"{source.stem}-dense-{label}.db"
        for suffix in ("", "-wal", "-shm"):
            Path(f"{copy}{suffix}").unlink(missing_ok=True)
        shutil.copyfile(plain, copy)
        with open_bank(copy, None, None) as memory:
            memory.encrypt(BankKey(PASSPHRASE), cipher=cipher)
        banks[label] = copy
    return banks


def warm_search_ms(banks: dict[str, Path], questions: list, embedder: str,
                   rounds: int) -> dict[str, float]:
    memories = {label: open_bank(path, dict(CONFIGS)[label], embedder)
                for label, path in banks.items()}
    fastest: dict[str, list[float]] = {label: [] for label in banks}
    labels = list(memories)
    try:
        for number, question in enumerate(questions):
            for memory in memories.values():  # warm-up
                memory.search(question.question, as_of=question.as_of)
            best = {label: float("inf") for label in banks}
            turn = labels[number % 3:] + labels[:number % 3]  # none always first
            for _ in range(rounds):
                for label in turn:
                    memory = memories[label]
                    started = time.perf_counter()
                    memory.search(question.question, as_of=question.as_of)
                    best[label] = min(best[label], time.perf_counter() - started)
            for label in banks:
                fastest[label].append(best[label] * 1000)
    finally:
        for memory in memories.values():
            memory.close()
    return {label: statistics.median(values) for label, values in fastest.items()}


def one_off_seconds(banks: dict[str, Path], question: str, embedder: str,
                    runs: int) -> dict[str, list[float]]:
    times: dict[str, list[float]] = {label: [] for label in banks}
    env = {**os.environ, "RAMEM_KEY": PASSPHRASE, "RAMEM_DEFAULT_EMBEDDER": "none"}
    for _ in range(runs):
        for label, bank in banks.items():
            run_env = env if label != "plain" else {k: v for k, v in env.items()
                                                    if k != "RAMEM_KEY"}
            started = time.perf_counter()
            done = subprocess.run([sys.executable, str(REPO / "cli.py"), "--db", str(bank),
                                   "--embedder", embedder, "search", question],
                                  env=run_env, capture_output=True, text=True)
            if done.returncode != 0:
                raise SystemExit(f"ramem search failed on {label}: {done.stderr.strip()}")
            times[label].append(time.perf_counter() - started)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--embedder", required=True)
    parser.add_argument("--years", type=int, default=5)
    parser.add_argument("--bank-dir", type=Path)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--one-off-runs", type=int, default=15)
    args = parser.parse_args()
    folder = args.bank_dir or Path(tempfile.mkdtemp(prefix="ramem-bench-enc-"))
    folder.mkdir(parents=True, exist_ok=True)
    journal = generate_journal(JournalSpec(years=args.years))
    source = journal.write_jsonl(folder / f"journal-{args.years}y-seed7.jsonl")
    rows = source.read_text(encoding="utf-8").splitlines(keepends=True)
    head = folder / "journal-head-1000.jsonl"
    head.write_text("".join(rows[:1000]), encoding="utf-8")
    print(f"journal: {args.years} years, {len(rows)} rows; embedder {args.embedder}")

    ingest_seconds(head, folder, None, args.embedder)  # warm-up: first imports, first loads
    bm25 = fastest_in_turn(lambda cipher: ingest_seconds(source, folder, cipher, None), 3)
    dense = fastest_in_turn(lambda cipher: ingest_seconds(head, folder, cipher, args.embedder),
                            2)
    banks = dense_banks(source, folder, args.embedder)
    questions = list(journal.questions)[:: max(1, len(journal.questions) // 40)][:40]
    warm = warm_search_ms(banks, questions, args.embedder, args.rounds)
    one_off = one_off_seconds(banks, questions[0].question, args.embedder, args.one_off_runs)

    print(f"{'':34}{'plain':>10}{'chacha20':>10}{'sqlcipher':>10}"
          f"{'chacha/plain':>14}{'sqlc/plain':>12}")

    def line(name: str, values: dict[str, float], unit: str, digits: int,
             ratios: dict[str, float] | None = None) -> None:
        cells = "".join(f"{values[label]:>10.{digits}f}" for label, _ in CONFIGS)
        ratios = ratios or {label: values[label] / values["plain"] for label in values}
        print(f"{name + ' (' + unit + ')':34}{cells}"
              f"{ratios['chacha20']:>14.2f}{ratios['sqlcipher']:>12.2f}")

    line(f"ingest BM25, {len(rows)} rows", {k: len(rows) / v for k, v in bm25.items()},
         "rows/s", 0)
    line("ingest dense, 1000 rows", {k: 1000 / v for k, v in dense.items()}, "rows/s", 0)
    line(f"warm search, median of {len(questions)}", warm, "ms", 1)
    # The runs went in turn (plain, chacha20, sqlcipher, ...): a ratio is the median of the
    # ratios run by run, which holds when the machine's speed drifts.
    pairwise = {label: statistics.median(a / b for a, b in zip(one_off[label],
                                                                one_off["plain"], strict=True))
                for label in one_off}
    line(f"one-off `ramem search`, median of {args.one_off_runs}",
         {label: statistics.median(values) for label, values in one_off.items()}, "s", 3,
         ratios=pairwise)
    sizes = {label: path.stat().st_size / 1e6 for label, path in banks.items()}
    line("dense bank file", sizes, "MB", 1)
    if args.bank_dir is None:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
