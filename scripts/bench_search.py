"""Benchmark: warm search latency on LoCoMo conversation banks, stage by stage (prints a table).

    .venv/bin/python scripts/bench_search.py ../shared/data/locomo/locomo_dev.json \
        --embedder ../shared/models/all-MiniLM-L6-v2 [--bank-dir DIR] [--rounds 3]

Each LoCoMo sample is ingested into a bank of its own (kept in --bank-dir and reused), as a
user with one conversation would have it. Then every question of the file is asked of its
sample's bank with ``Memory.search`` (ramem mode, the library's defaults), once to warm up
(the embedder session, the int8 matrix, the word graph), then ``--rounds`` more times; each
question counts its fastest round. Prints the median and 90th percentile of the whole search
and of the stages the trace times (embedding the query, the SQL and what runs around it), for
all questions and for those that read an order, a count or another event. Compare ratios
within one run: these machines are shared.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import time
from pathlib import Path

from ramem_local import Memory, SearchDefaults
from ramem_local.eval.locomo import load_questions


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("file", type=Path)
    parser.add_argument("--embedder", required=True)
    parser.add_argument("--bank-dir", type=Path)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    samples = json.loads(args.file.read_text(encoding="utf-8"))
    questions = load_questions(args.file)
    folder = args.bank_dir or Path(tempfile.mkdtemp(prefix="bench-search-"))
    folder.mkdir(parents=True, exist_ok=True)
    rows: list[dict] = []
    for sample in samples:
        name = str(sample["sample_id"])
        source = folder / f"{name}.json"
        if not source.exists():
            source.write_text(json.dumps([sample]), encoding="utf-8")
        asked = questions.get(name, [])
        with Memory.open(folder / f"{name}.db", default_embedder="none", embedder=args.embedder,
                         defaults=SearchDefaults()) as memory:
            memory.ingest(source)
            for question in asked:
                memory.search(question.question)  # warm
                best: dict | None = None
                for _ in range(args.rounds):
                    tick = time.perf_counter()
                    response = memory.search(question.question)
                    total = (time.perf_counter() - tick) * 1000
                    if best is None or total < best["total"]:
                        frame = response.trace.frame
                        best = {"total": total, **response.trace.timings_ms,
                                "multi_step": bool(frame and (frame.order or frame.counting
                                                              or frame.anchor))}
                assert best is not None
                rows.append(best)
    load = os.getloadavg()
    print(f"# {len(rows)} questions, {len(samples)} banks (one per LoCoMo sample), "
          f"fastest of {args.rounds} warm rounds each; load average {load[0]:.1f}")
    print(f"{'questions':<22}{'n':>5}{'stage':>14}{'median ms':>11}{'p90 ms':>9}")
    groups = {"all": rows, "order/count/event": [r for r in rows if r["multi_step"]],
              "other": [r for r in rows if not r["multi_step"]]}
    for group, members in groups.items():
        if not members:
            continue
        for stage in ("total", "embed_query", "sql", "anchor"):
            values = [r[stage] for r in members if stage in r]
            if not values:
                continue
            print(f"{group:<22}{len(values):>5}{stage:>14}{statistics.median(values):>11.1f}"
                  f"{percentile(values, 0.9):>9.1f}")


if __name__ == "__main__":
    main()
