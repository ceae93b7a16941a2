"""LoCoMo dev, conversation by conversation and fold by fold, for a change measured on vs off.

    .venv/bin/python scripts/locomo_folds.py ../shared/data/locomo/locomo_dev.json \
        --embedder ../shared/models/all-MiniLM-L6-v2 --bank-dir DIR [--off OPTION ...]

Runs ``eval.retrieval`` (ramem mode, K = 10, no LLM, cats 1-4) with the library defaults, and
again with each ``--off`` tuning (a ``SearchTuning`` field set as FIELD=VALUE, e.g.
``--off proximity_prior=false``), on banks kept in ``--bank-dir``. Prints R@10, triggered R@10
and triggered D@1 per conversation, then for each fold (the dev split's five conversations:
tune on three, check on the other two, every pair in turn) the two held-out conversations'
figures, so that a change kept can be seen to hold on every fold (issue 52).
"""

from __future__ import annotations

import argparse
import dataclasses
import itertools
from pathlib import Path

from ramem_local.eval.retrieval import RetrievalEvalConfig, run_retrieval_eval
from ramem_local.eval.tuning import SearchTuning
from ramem_local.models import open_embedder


def figures(rows: list) -> tuple[float, float, float, int]:
    headline = [r for r in rows if r.category in (1, 2, 3, 4)]
    triggered = [r for r in headline if r.triggered]

    def mean(values: list[float]) -> float:
        return sum(values) / len(values) if values else float("nan")

    return (mean([r.metrics["R@10"] for r in headline]),
            mean([r.metrics["R@10"] for r in triggered]),
            mean([r.metrics["D@1"] for r in triggered]), len(triggered))


def parse_tuning(items: list[str]) -> SearchTuning:
    values = {}
    fields = {f.name: f for f in dataclasses.fields(SearchTuning)}
    for item in items:
        name, _, text = item.partition("=")
        if name not in fields:
            raise SystemExit(f"unknown tuning {name!r}")
        default = getattr(SearchTuning(), name)
        if isinstance(default, bool):
            values[name] = text.lower() in ("1", "true", "on", "yes")
        elif isinstance(default, int):
            values[name] = int(text)
        elif isinstance(default, float):
            values[name] = float(text)
        else:
            values[name] = text
    return SearchTuning(**values)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("file", type=Path)
    parser.add_argument("--embedder", required=True)
    parser.add_argument("--bank-dir", type=Path, required=True)
    parser.add_argument("--off", action="append", default=[],
                        help="FIELD=VALUE of SearchTuning for the second run (repeatable)")
    args = parser.parse_args()
    embedder = open_embedder(args.embedder)
    runs = {"defaults": SearchTuning()}
    if args.off:
        runs[" ".join(args.off)] = parse_tuning(args.off)
    by_run = {}
    for name, tuning in runs.items():
        result = run_retrieval_eval(args.file, embedder, RetrievalEvalConfig(
            modes=("ramem",), tuning=tuning), bank_dir=args.bank_dir)
        by_run[name] = result.results
    samples = sorted({r.sample_id for r in next(iter(by_run.values()))})
    print("LoCoMo dev · MiniLM · K=10 · no LLM · ramem mode · cats 1-4 · "
          "R@10 / triggered R@10 / triggered D@1 (triggered n)")
    print(f"{'':<18}" + "".join(f"{name[:34]:>36}" for name in by_run))
    groups = {s: (s,) for s in samples}
    groups["all"] = tuple(samples)
    groups.update({f"fold {a}+{b}": (a, b) for a, b in itertools.combinations(samples, 2)})
    for group, members in groups.items():
        cells = []
        for rows in by_run.values():
            r10, t10, d1, n = figures([r for r in rows if r.sample_id in members])
            cells.append(f"{r10:.3f} / {t10:.3f} / {d1:.3f} ({n})")
        print(f"{group:<18}" + "".join(f"{cell:>36}" for cell in cells))


if __name__ == "__main__":
    main()
