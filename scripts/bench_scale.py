"""Benchmark: search latency and recall as a bank grows (prints a table; --json one object).

    PYTHONPATH=. .venv/bin/python scripts/bench_scale.py --memories 10000 100000 --dim 384 1024

For each size and dimension it builds a bank under --bank-dir through the store's own write path
(``Store.add_memory`` + ``Store.add_vectors``, batches of one transaction): cheap synthetic text
from a 3,000-word vocabulary, one session a day over five years, random unit vectors. Then, in
the same run, over the same queries:

- content search (RRF of dense + BM25, the content list's SQL) with each dense index,
- context search (filter first, a 14-day range widened by ±5 days),
- BM25 only,
- numpy brute force over the same vectors held in RAM (the floor to compare with),
- recall@10 of each dense path against exact search (numpy),
- int8: the time a new process takes to read the codes, and how much longer its first content
  search takes than its second ('first+': the read and anything else built at the first search),
- bank bytes per memory and build rate.

``--vectors clustered`` (default) draws each vector around one of N/100 topic centres
(cosine ≈ 0.5 within a topic, ≈ 0 across), the shape of real sentence embeddings;
``--vectors random`` draws i.i.d. unit vectors, where the 10 nearest neighbours are barely
nearer than the rest: the worst case for any quantised prefilter. Queries come from the same
distribution. Times are SQL only (no query embedding). Compare ratios within one run.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

from ramem_local.store import Store
from ramem_local.types import EmbedderFingerprint, MemoryRecord, TimeRange

DAY = 86_400
START = 1_600_000_000 // DAY * DAY
YEARS = 5
DEPTH = 25
K = 10
INDEXES = ("exact", "binary", "int8")


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def unit(rows: np.ndarray) -> np.ndarray:
    return (rows / np.linalg.norm(rows, axis=1, keepdims=True)).astype(np.float32)


def vectors(rng: np.random.Generator, n: int, dim: int, kind: str,
            centres: np.ndarray | None) -> np.ndarray:
    noise = rng.standard_normal((n, dim), dtype=np.float32) / np.sqrt(dim, dtype=np.float32)
    if kind == "random":
        return unit(noise)
    assert centres is not None
    return unit(centres[rng.integers(0, len(centres), n)] + noise)


def vocabulary(rng: np.random.Generator, size: int = 3000) -> list[str]:
    syllables = ["ka", "lo", "mi", "ter", "sun", "ra", "vel", "do", "pin", "gar", "shu", "en",
                 "bo", "tri", "mar", "zo", "lin", "ha", "qui", "fe"]
    words: set[str] = set()
    while len(words) < size:
        words.add("".join(rng.choice(syllables, size=int(rng.integers(2, 4)))))
    return sorted(words)


def build(path: Path, n: int, dim: int, rng: np.random.Generator, data: np.ndarray,
          words: list[str]) -> tuple[Store, list[int], float]:
    store = Store.open(path)
    store.bind_embedder(EmbedderFingerprint(name=f"random-{dim}", dimension=dim, sha256="0"))
    conversation_id = store.ensure_conversation("bench")
    per_day = max(1, n // (YEARS * 365))
    picks = rng.integers(0, len(words), (n, 12))
    ids: list[int] = []
    started = time.perf_counter()
    batch = 2000
    for first in range(0, n, batch):
        last = min(n, first + batch)
        with store.atomic():
            new_ids = []
            for i in range(first, last):
                day_start = START + (i // per_day) * DAY
                record = MemoryRecord(
                    content="Ann: " + " ".join(words[w] for w in picks[i]),
                    kind="turn", conversation="bench", session_start=day_start,
                    session_end=day_start + DAY, persons=["Ann"])
                memory_id = store.add_memory(record, dedup_key=str(i),
                                             conversation_id=conversation_id)
                assert memory_id is not None
                new_ids.append(memory_id)
            store.add_vectors(new_ids, data[first:last])
        ids.extend(new_ids)
    seconds = time.perf_counter() - started
    store.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return store, ids, seconds


# The first search of a process reads the int8 codes: timed in a new process, as a CLI call
# pays it (median of 3). 'load' is the read alone; 'first+' is what the process's first content
# search takes beyond its second (the same query again): the read and whatever else a first
# search builds or imports.
LOAD_IN_A_NEW_PROCESS = """
import sys, time
from ramem_local.store import Store
store = Store.open(sys.argv[1])
started = time.perf_counter()
store.int8_matrix()
print((time.perf_counter() - started) * 1000)
"""

FIRST_SEARCH_IN_A_NEW_PROCESS = """
import sys, time
import numpy as np
from ramem_local.store import Store
store = Store.open(sys.argv[1])
query = np.random.default_rng(0).standard_normal(int(sys.argv[2])).astype(np.float32)
times = []
for _ in range(2):
    started = time.perf_counter()
    store.content_candidates(query_vector=query / np.linalg.norm(query), fts_query=sys.argv[3],
                             depth=25, limit=10, dense_index="int8", candidates=200)
    times.append((time.perf_counter() - started) * 1000)
print(times[0] - times[1])
"""


def fresh_process_ms(probe: str, *args: str) -> float:
    runs = [float(subprocess.run([sys.executable, "-c", probe, *args],
                                 check=True, capture_output=True, text=True).stdout)
            for _ in range(3)]
    return round(statistics.median(runs), 1)


def timed(run, queries) -> tuple[list[float], list]:
    times, results = [], []
    for query in queries:
        started = time.perf_counter()
        results.append(run(query))
        times.append((time.perf_counter() - started) * 1000)
    return times, results


def measure(n: int, dim: int, args: argparse.Namespace) -> dict:
    rng = np.random.default_rng(args.seed)
    centres = unit(rng.standard_normal((max(1, n // 100), dim), dtype=np.float32))
    data = vectors(rng, n, dim, args.vectors, centres)
    words = vocabulary(rng)
    path = args.bank_dir / f"scale-{n}-{dim}-{args.vectors}.db"
    for suffix in ("", "-wal", "-shm"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)
    store, ids, build_s = build(path, n, dim, rng, data, words)
    id_array = np.asarray(ids)
    queries = vectors(rng, args.queries, dim, args.vectors, centres)
    fts = [" OR ".join(f'"{words[w]}"' for w in rng.integers(0, len(words), 4))
           for _ in range(args.queries)]
    days = n // max(1, n // (YEARS * 365))
    ranges = []
    for _ in range(args.queries):
        day = int(rng.integers(0, max(1, days - 14)))
        raw = TimeRange(START + day * DAY, START + (day + 14) * DAY)
        ranges.append((raw, TimeRange(raw.start - 5 * DAY, raw.end + 5 * DAY)))
    cases = list(range(args.queries))

    exact_top = [id_array[np.argsort(-(data @ q), kind="stable")[:K]] for q in queries]
    numpy_ms, _ = timed(lambda q: np.argpartition(-(data @ q), DEPTH)[:DEPTH], queries)

    out: dict = {"memories": n, "dim": dim, "vectors": args.vectors,
                 "candidates": args.candidates, "queries": args.queries,
                 "build_memories_per_s": round(n / build_s, 1),
                 "bytes_per_memory": round(path.stat().st_size / n),
                 "numpy_p50_ms": round(statistics.median(numpy_ms), 2)}
    for index in INDEXES:
        def content(i, index=index):
            return store.content_candidates(
                query_vector=queries[i], fts_query=fts[i], depth=DEPTH, limit=K,
                dense_index=index, candidates=args.candidates)

        def dense(i, index=index):
            return store.content_candidates(
                query_vector=queries[i], fts_query=None, depth=DEPTH, limit=K,
                dense_index=index, candidates=args.candidates)

        def context(i, index=index):
            raw, wide = ranges[i]
            return store.session_overlap_candidates(
                query_vector=queries[i], fts_query=fts[i], raw_range=raw, wide_range=wide,
                depth=DEPTH, limit=K, fill_missing_ranks=True, dense_index=index,
                candidates=args.candidates)

        load_ms = first_extra_ms = None
        if index == "int8":
            load_ms = fresh_process_ms(LOAD_IN_A_NEW_PROCESS, str(path))
            first_extra_ms = fresh_process_ms(FIRST_SEARCH_IN_A_NEW_PROCESS, str(path),
                                              str(dim), fts[0])
        content_ms, _ = timed(content, cases)
        context_ms, _ = timed(context, cases)
        _, dense_rows = timed(dense, cases)
        recall = statistics.mean(
            len({r.id for r in rows} & set(top.tolist())) / K
            for rows, top in zip(dense_rows, exact_top, strict=True))
        out[index] = {
            "content_p50_ms": round(statistics.median(content_ms), 2),
            "content_p95_ms": round(percentile(content_ms, 0.95), 2),
            "context_p50_ms": round(statistics.median(context_ms), 2),
            "context_p95_ms": round(percentile(context_ms, 0.95), 2),
            "dense_recall_at_10": round(recall, 4),
            "load_ms": load_ms,
            "first_search_extra_ms": first_extra_ms,
        }
    bm25_ms, _ = timed(lambda i: store.content_candidates(
        query_vector=None, fts_query=fts[i], depth=DEPTH, limit=K), cases)
    out["bm25_p50_ms"] = round(statistics.median(bm25_ms), 2)
    main_index = args.index
    out.update({key: out[main_index][key] for key in (
        "content_p50_ms", "content_p95_ms", "context_p50_ms", "context_p95_ms",
        "dense_recall_at_10", "load_ms", "first_search_extra_ms")})
    out["index"] = main_index
    store.close()
    if not args.keep:
        for suffix in ("", "-wal", "-shm"):
            Path(f"{path}{suffix}").unlink(missing_ok=True)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--memories", type=int, nargs="+", default=[10_000])
    parser.add_argument("--dim", type=int, nargs="+", default=[384])
    parser.add_argument("--queries", type=int, default=50)
    parser.add_argument("--candidates", type=int, default=200,
                        help="binary / int8 index: candidates rescored exactly")
    parser.add_argument("--vectors", choices=("clustered", "random"), default="clustered")
    parser.add_argument("--index", choices=INDEXES, default="int8",
                        help="the dense index the top-level keys report")
    parser.add_argument("--bank-dir", type=Path, default=Path("/tmp"))
    parser.add_argument("--keep", action="store_true", help="keep the banks")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    args.bank_dir.mkdir(parents=True, exist_ok=True)
    runs = [measure(n, dim, args) for n in args.memories for dim in args.dim]
    if args.json:
        print(json.dumps(runs[0] if len(runs) == 1 else runs))
        return
    head = (f"{'memories':>8} {'dim':>5} {'index':>6} {'content p50/p95':>16} "
            f"{'context p50/p95':>16} {'bm25 p50':>8} {'numpy p50':>9} {'c/np':>5} "
            f"{'ctx/np':>6} {'R@10':>6} {'load':>6} {'first+':>6} {'B/mem':>6} {'build/s':>8}")
    print(f"# vectors={args.vectors} queries={args.queries} candidates={args.candidates} "
          "(times in ms, SQL only)")
    print(head)
    for run in runs:
        for index in INDEXES:
            m = run[index]
            load = "-" if m["load_ms"] is None else f"{m['load_ms']:.0f}"
            first = ("-" if m["first_search_extra_ms"] is None
                     else f"{m['first_search_extra_ms']:.0f}")
            print(f"{run['memories']:>8} {run['dim']:>5} {index:>6} "
                  f"{m['content_p50_ms']:>7.1f}/{m['content_p95_ms']:<8.1f} "
                  f"{m['context_p50_ms']:>7.1f}/{m['context_p95_ms']:<8.1f} "
                  f"{run['bm25_p50_ms']:>8.1f} {run['numpy_p50_ms']:>9.1f} "
                  f"{m['content_p50_ms'] / run['numpy_p50_ms']:>5.2f} "
                  f"{m['context_p50_ms'] / run['numpy_p50_ms']:>6.2f} "
                  f"{m['dense_recall_at_10']:>6.3f} {load:>6} {first:>6} "
                  f"{run['bytes_per_memory']:>6} "
                  f"{run['build_memories_per_s']:>8.0f}")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
