"""Benchmark: ingest throughput and search latency on a LoCoMo file (prints a table).

    .venv/bin/python scripts/bench_core.py ../shared/data/locomo/locomo_dev.json \
        --embedder ../shared/models/all-MiniLM-L6-v2

Ingests the whole file into a fresh bank (turns/s, with and without the embedder), embeds the
same texts with the embedder alone (ingest's share of the embedder's own speed), re-ingests
it (the idempotent path), then asks every question of the file in both modes and reports the
median and 90th-percentile latency per stage. Compare ratios within one run: these machines are
noisy.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from ramem_local import Memory
from ramem_local.eval.locomo import load_questions
from ramem_local.runtime.loading import open_embedder


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("file", type=Path)
    parser.add_argument("--embedder", required=True)
    parser.add_argument("--questions", type=int, default=0, help="0 = all")
    args = parser.parse_args()

    embedder = open_embedder(args.embedder, Path(tempfile.gettempdir()))
    questions = [q.question for qs in load_questions(args.file).values() for q in qs]
    if args.questions:
        questions = questions[: args.questions]
    rows: list[tuple[str, str]] = []
    with tempfile.TemporaryDirectory() as folder:
        with Memory.open(Path(folder) / "bm25.db") as memory:
            report = memory.ingest(args.file)
            rows.append(("ingest, no embedder",
                         f"{report.turns_per_second:,.0f} turns/s "
                         f"({report.turns_new} turns, {report.seconds:.1f} s)"))
        with Memory.open(Path(folder) / "dense.db", embedder=embedder) as memory:
            report = memory.ingest(args.file)
            rows.append((f"ingest, {embedder.name}",
                         f"{report.turns_per_second:,.0f} turns/s ({report.seconds:.1f} s)"))
            # The embedder alone on the texts the ingest embedded, in one call (it batches
            # them itself): how far ingest is from the embedder's own speed.
            texts = [content for (content,) in memory.store.db.execute(
                "SELECT content FROM memories ORDER BY id")]
            started = time.perf_counter()
            embedder.embed_documents(texts)
            embed_s = time.perf_counter() - started
            rows.append((f"{embedder.name} alone, same texts",
                         f"{len(texts) / embed_s:,.0f} texts/s ({embed_s:.1f} s); ingest runs at "
                         f"{report.turns_per_second * embed_s / len(texts):.0%} of it"))
            again = memory.ingest(args.file)
            rows.append(("re-ingest (nothing new)", f"{again.seconds:.2f} s, "
                                                    f"{again.turns_new} new turns"))
            for mode in ("baseline", "ramem"):
                total, embed, sql = [], [], []
                for question in questions:
                    started = time.perf_counter()
                    response = memory.search(question, k=10, mode=mode)
                    total.append((time.perf_counter() - started) * 1000)
                    embed.append(response.trace.timings_ms["embed_query"])
                    sql.append(response.trace.timings_ms["sql"])
                rows.append((f"search {mode} (n={len(total)})",
                             f"median {statistics.median(total):.1f} ms, "
                             f"p90 {percentile(total, 0.9):.1f} ms "
                             f"(query embedding {statistics.median(embed):.1f} ms, "
                             f"SQL {statistics.median(sql):.1f} ms)"))
    width = max(len(name) for name, _ in rows)
    print(f"{'measure':<{width}}  result")
    for name, value in rows:
        print(f"{name:<{width}}  {value}")


if __name__ == "__main__":
    main()
