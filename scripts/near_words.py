"""The journal benchmark's event-relative questions said with near words or a plural unit.

"What did I cook the day after I adopted Shadow the cat?" is asked again as "... right after I
adopted ...", "the week after" as "in the days after" and "shortly after" (and the same before):
each new reading's range holds the question's evidence, so R@1 / R@10 / all-evidence R@10 say
whether the words are read. Searched on the banks `ramem eval journal` left, with its answers:

    ramem --embedder DIR eval journal --seed 7 --mode ramem --bank-dir B --out F7.jsonl
    PYTHONPATH=. python scripts/near_words.py --bank-dir B 7:F7.jsonl [8:F8.jsonl ...]

Each SEED:FILE is an --out file of a run with that --seed and --bank-dir B. Prints one row per
wording and journal size, and the whole.
"""

from __future__ import annotations

import argparse
import json
from collections import defaultdict
from pathlib import Path

from ramem_local import Memory

REWORDINGS = {
    "the day after": ("right after",),
    "the day before": ("just before",),
    "the week after": ("in the days after", "shortly after"),
    "the week before": ("in the days before", "shortly before"),
}
METRICS = ("R@1", "R@10", "AllR@10")


def _bank(bank_dir: Path, size: str, seed: int) -> Path:
    return bank_dir / f"journal-{size}-seed{seed}-dense.db"


def _scores(turns: list[set[str]], evidence: set[str]) -> dict[str, float]:
    held = set().union(*turns) if turns else set()
    return {"R@1": float(bool(turns) and bool(turns[0] & evidence)),
            "R@10": float(any(t & evidence for t in turns)),
            "AllR@10": float(evidence <= held)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bank-dir", type=Path, required=True)
    parser.add_argument("answers", nargs="+", metavar="SEED:FILE",
                        help="an eval journal --out file and the seed of its run")
    args = parser.parse_args()
    totals: dict[tuple[str, str], dict[str, float]] = defaultdict(lambda: defaultdict(float))
    for answers in args.answers:
        seed_text, _, path = answers.partition(":")
        seed = int(seed_text)
        rows = [json.loads(line) for line in Path(path).read_text(encoding="utf-8").splitlines()]
        rows = [r for r in rows if r["mode"] == "ramem" and r["style"] == "event_relative"]
        for size in sorted({r["size"] for r in rows}):
            with Memory.open(_bank(args.bank_dir, size, seed)) as memory:
                for row in (r for r in rows if r["size"] == size):
                    for said, rewordings in REWORDINGS.items():
                        if said not in row["question"]:
                            continue
                        for reworded in rewordings:
                            question = row["question"].replace(said, reworded)
                            found = memory.search(question, as_of=row["as_of"], k=10)
                            turns = [set(c.memory.source_turns) for c in found.results]
                            scores = _scores(turns, set(row["evidence"]))
                            for key in ((reworded, size), ("all", "")):
                                totals[key]["n"] += 1
                                for metric in METRICS:
                                    totals[key][metric] += scores[metric]
    sizes = {size: int(size.rstrip("y") or 10**6) for _, size in totals}

    def row_order(item: tuple[tuple[str, str], dict]) -> tuple[int, str]:
        (reworded, size), _ = item
        return sizes[size], reworded

    for (reworded, size), total in sorted(totals.items(), key=row_order):
        n = total["n"]
        cells = "  ".join(f"{metric} {total[metric] / n:.3f}" for metric in METRICS)
        print(f"{reworded:20} {size:4} n={int(n):4}  {cells}")


if __name__ == "__main__":
    main()
