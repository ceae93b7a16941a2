"""Benchmark: which quantised vec0 prefilter can stand in for an exact scan (prints a table).

    PYTHONPATH=. .venv/bin/python scripts/bench_quantisation.py --memories 100000 --dim 1024

Why this exists: the bank's fast dense path (``memories_bin``: sign bits, Hamming KNN, exact
rescoring of ``--candidates`` memories) finds the exact top 10 on clustered vectors and on real
MiniLM embeddings, but not on i.i.d. random unit vectors (``results/bench-scale.txt``). This
script measures the prefilter alone, in one run over the same vectors and queries, so the
trade-off is visible:

- ``numpy``: brute force over the float vectors in RAM (the bandwidth floor);
- ``float``: sqlite-vec's exact vec0 scan (``float[D]``);
- ``int8 k=C``: a vec0 ``int8[D]`` scan (each coordinate scaled by 127 / (4/sqrt(D)) and
  clipped), C candidates;
- ``bit k=C``: a vec0 ``bit[D]`` Hamming scan (sign of each coordinate), C candidates.

For the quantised scans, "R@10" is the recall of the exact top 10 after rescoring the C
candidates exactly (what the bank does in SQL; done here in numpy, so the time column is the
scan alone). The tables are plain vec0 tables in a scratch file, without the bank's metadata
columns. Compare ratios within one run: these machines are noisy.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import apsw
import numpy as np
import sqlite_vec

K = 10


def unit(rows: np.ndarray) -> np.ndarray:
    return (rows / np.linalg.norm(rows, axis=1, keepdims=True)).astype(np.float32)


def draw(rng: np.random.Generator, n: int, dim: int, kind: str, centres: np.ndarray) -> np.ndarray:
    """``random``: i.i.d. unit vectors; ``clustered``: around N/100 topic centres (as
    ``bench_scale.py`` draws them)."""
    noise = rng.standard_normal((n, dim), dtype=np.float32) / np.sqrt(dim, dtype=np.float32)
    if kind == "random":
        return unit(noise)
    return unit(centres[rng.integers(0, len(centres), n)] + noise)


def int8_codes(vectors: np.ndarray) -> np.ndarray:
    """A unit vector's coordinates are about N(0, 1/D): ±4 standard deviations map to ±127."""
    scale = 127.0 / (4.0 / np.sqrt(vectors.shape[1]))
    return np.clip(np.round(vectors * scale), -127, 127).astype(np.int8)


def bit_codes(vectors: np.ndarray) -> np.ndarray:
    return np.packbits(vectors > 0, axis=1)


def build(connection: apsw.Connection, base: np.ndarray) -> None:
    dim = base.shape[1]
    connection.execute(f"""
        CREATE VIRTUAL TABLE v_float USING vec0(embedding float[{dim}] distance_metric=cosine);
        CREATE VIRTUAL TABLE v_int8 USING vec0(embedding int8[{dim}]);
        CREATE VIRTUAL TABLE v_bit USING vec0(embedding bit[{dim}]);""")
    codes8, codes1 = int8_codes(base), bit_codes(base)
    with connection:
        for row in range(len(base)):
            rowid = row + 1
            connection.execute("INSERT INTO v_float(rowid, embedding) VALUES (?, ?)",
                               (rowid, base[row].tobytes()))
            connection.execute("INSERT INTO v_int8(rowid, embedding) VALUES (?, vec_int8(?))",
                               (rowid, codes8[row].tobytes()))
            connection.execute("INSERT INTO v_bit(rowid, embedding) VALUES (?, vec_bit(?))",
                               (rowid, codes1[row].tobytes()))


def knn(connection: apsw.Connection, table: str, wrap: str, code: bytes, k: int) -> list[int]:
    rows = connection.execute(
        f"SELECT rowid FROM {table} WHERE embedding MATCH {wrap}(?) AND k = ? ORDER BY distance",
        (code, k))
    return [rowid - 1 for (rowid,) in rows]


def timed(queries: np.ndarray, search: Callable[[int], list[int]]) -> tuple[float, list[list[int]]]:
    times, found = [], []
    for index in range(len(queries)):
        started = time.perf_counter()
        found.append(search(index))
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times), found


def recall_after_rescoring(base: np.ndarray, queries: np.ndarray, found: list[list[int]],
                           exact: list[set[int]]) -> float:
    hits = []
    for query, candidates, truth in zip(queries, found, exact, strict=True):
        ids = np.array(candidates, dtype=np.int64)
        top = ids[np.argsort(-(base[ids] @ query))[:K]] if len(ids) else ids
        hits.append(len(set(top.tolist()) & truth) / K)
    return float(np.mean(hits))


def run(n: int, dim: int, kind: str, queries_n: int, candidates: list[int], seed: int) -> None:
    rng = np.random.default_rng(seed)
    centres = unit(rng.standard_normal((max(1, n // 100), dim), dtype=np.float32))
    base = draw(rng, n, dim, kind, centres)
    queries = draw(rng, queries_n, dim, kind, centres)
    exact = [set(np.argsort(-(base @ q))[:K].tolist()) for q in queries]
    with tempfile.TemporaryDirectory() as scratch:
        connection = apsw.Connection(str(Path(scratch) / "quantisation.db"))
        connection.enable_load_extension(True)
        connection.load_extension(sqlite_vec.loadable_path())
        build(connection, base)
        numpy_ms, _ = timed(queries,
                            lambda i: np.argpartition(-(base @ queries[i]), K)[:K].tolist())
        rows = [("numpy", K, numpy_ms, 1.0)]
        float_ms, found = timed(queries,
                                lambda i: knn(connection, "v_float", "", queries[i].tobytes(), K))
        rows.append(("float", K, float_ms, recall_after_rescoring(base, queries, found, exact)))
        codes8, codes1 = int8_codes(queries), bit_codes(queries)
        for count in candidates:
            ms, found = timed(queries, lambda i, c=count: knn(
                connection, "v_int8", "vec_int8", codes8[i].tobytes(), c))
            rows.append(("int8", count, ms, recall_after_rescoring(base, queries, found, exact)))
        for count in candidates:
            ms, found = timed(queries, lambda i, c=count: knn(
                connection, "v_bit", "vec_bit", codes1[i].tobytes(), c))
            rows.append(("bit", count, ms, recall_after_rescoring(base, queries, found, exact)))
        connection.close()
    print(f"# memories={n} dim={dim} vectors={kind} queries={queries_n} (median ms per query)")
    print(f"{'scan':<6} {'k':>5} {'p50 ms':>8} {'/numpy':>7} {'R@10':>6}")
    for name, count, ms, recall in rows:
        print(f"{name:<6} {count:>5} {ms:>8.1f} {ms / numpy_ms:>7.2f} {recall:>6.3f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--memories", type=int, default=100_000)
    parser.add_argument("--dim", type=int, default=1024)
    parser.add_argument("--vectors", choices=("random", "clustered"), nargs="+",
                        default=["random", "clustered"])
    parser.add_argument("--queries", type=int, default=30)
    parser.add_argument("--candidates", type=int, nargs="+", default=[10, 100, 200, 400])
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    for kind in args.vectors:
        run(args.memories, args.dim, kind, args.queries, args.candidates, args.seed)


if __name__ == "__main__":
    main()
