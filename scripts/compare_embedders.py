"""Do embedders agree, and how fast are they? Cosine of their vectors for every turn of a file,
or (--speed) turns/s, ms per query and peak RSS of each, measured in turn.

    .venv/bin/python scripts/compare_embedders.py ../shared/data/locomo/locomo_dev.json \
        ../shared/models/all-MiniLM-L6-v2 all-minilm-l6-v2

Used to check a converted model (`ramem models install` / `models import`) against a reference
ONNX export of the same weights: each embedder embeds every turn text of FILE (LoCoMo JSON or
JSONL); prints, for each CANDIDATE against REFERENCE, the lowest and mean cosine, the number of
turns below --min-cosine, and each embedder's time (compare them within one run: these machines
are noisy). Exit status 1 when any turn is below --min-cosine.

    .venv/bin/python scripts/compare_embedders.py FILE all-minilm-l6-v2 all-minilm-l6-v2-int8 \
        all-mpnet-base-v2 all-mpnet-base-v2-int8 --speed --turns 500 --rounds 3

--speed runs each embedder in a child process of its own, round after round, alternating
(A B C D, A B C D, ...), so load that comes and goes on a shared machine falls on every model:
one warm-up call, the first --turns turn texts in one embed_documents call (ingest: turns/s),
then --queries LoCoMo questions one embed_query call each (ms per query), and the child's peak
RSS. Prints every round and each embedder's best and median; ratios against REFERENCE.
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

from ramem_local.ingest.formats import read_conversations
from ramem_local.models import open_embedder


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("file", type=Path, help="LoCoMo JSON or JSONL of turns")
    parser.add_argument("reference", help="embedder NAME or DIR")
    parser.add_argument("candidates", nargs="*", metavar="candidate", help="embedder NAME or DIR")
    parser.add_argument("--models-dir", help="where NAMEs are installed")
    parser.add_argument("--min-cosine", type=float, default=0.9999)
    parser.add_argument("--speed", action="store_true",
                        help="time each embedder in its own process instead of comparing")
    parser.add_argument("--turns", type=int, default=500, help="--speed: turns to embed")
    parser.add_argument("--queries", type=int, default=50, help="--speed: questions to embed")
    parser.add_argument("--rounds", type=int, default=3, help="--speed: rounds over all")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        return time_one(args)
    if args.speed:
        return speed(args)
    if not args.candidates:
        parser.error("give a CANDIDATE to compare with REFERENCE")
    return agreement(args)


def agreement(args: argparse.Namespace) -> int:
    texts = turn_texts(args.file)
    names = [args.reference, *args.candidates]
    vectors, seconds = [], []
    for name in names:
        embedder = open_embedder(name, args.models_dir)
        start = time.perf_counter()
        vectors.append(embedder.embed_documents(texts).astype(np.float64))
        seconds.append(time.perf_counter() - start)
    print(f"{'candidate':<28} {'turns':>6} {'min cosine':>11} {'mean cosine':>12} "
          f"{'< ' + str(args.min_cosine):>10} {'reference s':>12} {'candidate s':>12}")
    failed = False
    a = vectors[0]
    for name, b, took in zip(names[1:], vectors[1:], seconds[1:], strict=True):
        cosines = (a * b).sum(axis=1) / (np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1))
        below = int((cosines < args.min_cosine).sum())
        failed |= below > 0
        print(f"{name:<28} {len(texts):>6} {cosines.min():>11.7f} {cosines.mean():>12.7f} "
              f"{below:>10} {seconds[0]:>12.1f} {took:>12.1f}")
    return 1 if failed else 0


def speed(args: argparse.Namespace) -> int:
    names = [args.reference, *args.candidates]
    runs: dict[str, list[dict]] = {name: [] for name in names}
    print(f"{'round':<6} {'embedder':<28} {'turns/s':>8} {'ms/query':>9} {'peak RSS MB':>12}")
    for round_ in range(1, args.rounds + 1):
        for name in names:
            command = [sys.executable, __file__, str(args.file), name, "--child",
                       "--turns", str(args.turns), "--queries", str(args.queries)]
            if args.models_dir:
                command += ["--models-dir", args.models_dir]
            done = subprocess.run(command, capture_output=True, text=True, check=True)
            run = json.loads(done.stdout.strip().splitlines()[-1])
            runs[name].append(run)
            print(f"{round_:<6} {name:<28} {run['turns_per_s']:>8.1f} {run['ms_per_query']:>9.1f} "
                  f"{run['peak_rss_mb']:>12.0f}", flush=True)
    print(f"\n{'embedder':<28} {'turns/s best':>12} {'median':>7} {'x ref':>6} "
          f"{'ms/query best':>13} {'median':>7} {'x ref':>6} {'peak RSS MB':>12}")
    ref_turns = statistics.median(r["turns_per_s"] for r in runs[args.reference])
    ref_query = statistics.median(r["ms_per_query"] for r in runs[args.reference])
    for name in names:
        turns = [r["turns_per_s"] for r in runs[name]]
        query = [r["ms_per_query"] for r in runs[name]]
        print(f"{name:<28} {max(turns):>12.1f} {statistics.median(turns):>7.1f} "
              f"{statistics.median(turns) / ref_turns:>6.2f} {min(query):>13.1f} "
              f"{statistics.median(query):>7.1f} {ref_query / statistics.median(query):>6.2f} "
              f"{max(r['peak_rss_mb'] for r in runs[name]):>12.0f}")
    print("(x ref: median speed-up over the reference, turns and queries)")
    return 0


def time_one(args: argparse.Namespace) -> int:
    """In a child process: time one embedder, print one JSON line."""
    texts = turn_texts(args.file)[:args.turns]
    queries = questions(args.file, args.queries) or texts[:args.queries]
    embedder = open_embedder(args.reference, args.models_dir)
    embedder.embed_documents(texts[:16])  # warm-up: first-run allocations, not the model
    start = time.perf_counter()
    embedder.embed_documents(texts)
    ingest = time.perf_counter() - start
    start = time.perf_counter()
    for query in queries:
        embedder.embed_query(query)
    per_query = (time.perf_counter() - start) / len(queries)
    peak_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux
    print(json.dumps({"turns_per_s": len(texts) / ingest, "ms_per_query": 1000 * per_query,
                      "peak_rss_mb": peak_kb / 1024}))
    return 0


def turn_texts(path: Path) -> list[str]:
    return [turn.text for c in read_conversations(path) for turn in c.turns]


def questions(path: Path, count: int) -> list[str]:
    """The first ``count`` questions of a LoCoMo JSON file (none for other files)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError):
        return []
    found = [qa["question"] for sample in data if isinstance(sample, dict)
             for qa in sample.get("qa", []) if isinstance(qa, dict) and qa.get("question")]
    return found[:count]


if __name__ == "__main__":
    sys.exit(main())
