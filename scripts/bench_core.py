"""Benchmark: ingest throughput and search latency on a LoCoMo file (prints a table).

    .venv/bin/python scripts/bench_core.py ../shared/data/locomo/locomo_dev.json \
        --embedder ../shared/models/all-MiniLM-L6-v2

Ingests the file without an embedder, then measures ingest with the embedder against the
embedder alone on exactly the texts ingest embeds (one loaded embedder for both: same threads,
same batch size). On a shared machine the load changes within seconds, so the two are
interleaved conversation by conversation (``Memory.ingest`` of a file holding one LoCoMo sample,
then ``embed_documents`` of that sample's turn texts, the order alternating) for ``--rounds``
rounds into fresh banks, and each conversation counts its best round of each; the whole file's
texts in one ``embed_documents`` call (the embedder's best packing) is timed once per round too.
Then it re-ingests (the idempotent path), asks every question of the file in both modes and
reports the median and 90th-percentile latency per stage. Compare ratios within one run.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from ramem_local import Memory, SearchDefaults
from ramem_local.eval.locomo import load_questions
from ramem_local.ingest.pipeline import DEFAULT_BATCH
from ramem_local.models import open_embedder


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def conversation_texts(memory: Memory) -> dict[str, list[str]]:
    """Each conversation's turn memories as ingest embeds them (content, in id order)."""
    return {
        conversation.name: [content for (content,) in memory.store.db.execute(
            "SELECT content FROM memories WHERE conversation_id = ? ORDER BY id",
            (conversation.id,))]
        for conversation in memory.store.conversations()
    }


def split_samples(path: Path, folder: Path) -> dict[str, Path]:
    """One LoCoMo file per sample, named by sample id (what ingest names the conversation)."""
    samples = {}
    for sample in json.loads(path.read_text(encoding="utf-8")):
        target = folder / f"sample-{len(samples)}.json"
        target.write_text(json.dumps([sample]), encoding="utf-8")
        samples[str(sample["sample_id"])] = target
    return samples


@dataclass
class Timing:
    """Best (least disturbed) wall and CPU seconds of the steps of one kind, summed."""

    wall: float = 0.0
    cpu: float = 0.0  # all threads of this process: less sensitive to other jobs


def interleaved(embedder, samples: dict[str, Path], texts: dict[str, list[str]], folder: Path,
                rounds: int) -> dict[str, Timing]:
    """Seconds to ingest every sample ("ingest"), to embed its texts alone ("alone"; best round
    per conversation), and to embed all texts in one call ("one call"; best round)."""
    best: dict[tuple[str, str], tuple[float, float]] = {}
    everything = [text for name in samples for text in texts[name]]

    def timed(key: tuple[str, str], step) -> None:
        wall, cpu = time.perf_counter(), time.process_time()
        step()
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        old_wall, old_cpu = best.get(key, (wall, cpu))
        best[key] = (min(wall, old_wall), min(cpu, old_cpu))

    for round_ in range(rounds):
        with Memory.open(folder / f"dense{round_}.db", embedder=embedder) as memory:
            for index, (name, path) in enumerate(samples.items()):
                steps = [(("ingest", name), lambda p=path: memory.ingest(p)),
                         (("alone", name), lambda n=name: embedder.embed_documents(texts[n]))]
                for key, step in steps if (index + round_) % 2 == 0 else steps[::-1]:
                    timed(key, step)
            if conversation_texts(memory) != texts:
                raise SystemExit("ingest embedded other texts than the reference")
        timed(("one call", ""), lambda: embedder.embed_documents(everything))
    totals: dict[str, Timing] = {}
    for (kind, _), (wall, cpu) in best.items():
        total = totals.setdefault(kind, Timing())
        total.wall += wall
        total.cpu += cpu
    return totals


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("file", type=Path)
    parser.add_argument("--embedder", required=True)
    parser.add_argument("--questions", type=int, default=0, help="0 = all")
    parser.add_argument("--rounds", type=int, default=3,
                        help="interleaved ingest / embedder-alone rounds (best round counts)")
    args = parser.parse_args()

    embedder = open_embedder(args.embedder, Path(tempfile.gettempdir()))
    questions = [q.question for qs in load_questions(args.file).values() for q in qs]
    if args.questions:
        questions = questions[: args.questions]
    rows: list[tuple[str, str]] = []
    load_before = os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as folder:
        with Memory.open(Path(folder) / "bm25.db", default_embedder="none") as memory:
            report = memory.ingest(args.file)
            rows.append(("ingest, no embedder",
                         f"{report.turns_per_second:,.0f} turns/s "
                         f"({report.turns_new} turns, {report.seconds:.1f} s)"))
            texts = conversation_texts(memory)
        samples = split_samples(args.file, Path(folder))
        timings = interleaved(embedder, samples, texts, Path(folder), args.rounds)
        turns = sum(len(t) for t in texts.values())
        threads = embedder._session.get_session_options().intra_op_num_threads
        ingest = timings["ingest"]
        rows.append((f"ingest, {embedder.name}",
                     f"{turns / ingest.wall:,.1f} turns/s ({ingest.wall:.1f} s; "
                     f"CPU {ingest.cpu:.1f} s)"))
        for kind, label in (("alone", "per conversation"), ("one call", "whole file, one call")):
            alone = timings[kind]
            rows.append((f"{embedder.name} alone, {label}",
                         f"{turns / alone.wall:,.1f} texts/s ({alone.wall:.1f} s; "
                         f"CPU {alone.cpu:.1f} s); ingest at {alone.wall / ingest.wall:.2f}x of it "
                         f"(by CPU time {alone.cpu / ingest.cpu:.2f}x)"))
        rows.append(("  (settings)", f"{threads} threads, batches of {embedder.batch_size} "
                                     f"texts, ingest embeds {DEFAULT_BATCH} turns per call, "
                                     f"best of {args.rounds} rounds"))
        with Memory.open(Path(folder) / f"dense{args.rounds - 1}.db", embedder=embedder,
                         defaults=SearchDefaults()) as memory:  # not the user's config
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
    print(f"# {os.cpu_count()} CPUs, load average {load_before:.1f} before the run, "
          f"{os.getloadavg()[0]:.1f} after")
    print(f"{'measure':<{width}}  result")
    for name, value in rows:
        print(f"{name:<{width}}  {value}")


if __name__ == "__main__":
    main()
