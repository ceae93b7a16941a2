"""Questions whose time is given by the latest or the first occurrence of a recurring event,
asked of the journal benchmark's banks.

"What did I do the day after I last went hiking at Pine Lake?", "What did I do the day after I
first cooked shakshuka?": the anchor is the latest (or the earliest) entry of that detail at or
before the reference day, not the entry the words fit best. The benchmark never asks this way,
so the questions are written here from the seeded generator (the journal `ramem eval journal
--seed S` writes), for every detail of the hikes, meals, films, concerts and visits that
happened twice or more by the journal's last day, whose next day holds 1 to 10 entries: every
entry of that next day is evidence. Searched on the banks `ramem eval journal` left
(``--bank-dir``), as of the journal's last day:

    ramem --embedder DIR eval journal --seed 7 --mode ramem --bank-dir B
    PYTHONPATH=. python scripts/order_anchor_words.py --bank-dir B --seeds 7,8,9 --years 1,5,10

Prints R@1, R@10 and all-evidence R@10 per wording and size, and the whole.
"""

from __future__ import annotations

import argparse
from collections import defaultdict
from datetime import datetime, time, timedelta
from pathlib import Path

from ramem_local import Memory
from ramem_local.eval.journal import JournalSpec, generate_journal

METRICS = ("R@1", "R@10", "AllR@10")
MAX_EVIDENCE = 10
# How a user names one occurrence of each kind's detail, after "I last" / "I first".
CLAUSES = {"hike": "went hiking at {x}", "meal": "cooked {x}", "film": "watched {x}",
           "concert": "saw {x} live", "visit": "visited {x}"}
ORDERS = {"last": max, "first": min}


def _scores(turns: list[set[str]], evidence: set[str]) -> dict[str, float]:
    held = set().union(*turns) if turns else set()
    return {"R@1": float(bool(turns) and bool(turns[0] & evidence)),
            "R@10": float(any(t & evidence for t in turns)),
            "AllR@10": float(evidence <= held)}


def questions(seed: int, years: int) -> list[tuple[str, str, set[str]]]:
    """(wording, question, evidence entry ids) for every detail seen twice or more."""
    journal = generate_journal(JournalSpec(years=years, seed=seed))
    by_day: dict = defaultdict(list)
    days_of: dict = defaultdict(list)
    for entry in journal.entries:
        by_day[entry.event_day].append(entry)
        if entry.kind in CLAUSES and entry.event_day <= journal.spec.end:
            days_of[(entry.kind, entry.answer)].append(entry.event_day)
    asked = []
    for (kind, answer), days in sorted(days_of.items()):
        if len(set(days)) < 2:
            continue
        clause = CLAUSES[kind].format(x=answer)
        for word, pick in ORDERS.items():
            after = pick(days) + timedelta(days=1)
            if after > journal.spec.end or not 1 <= len(by_day[after]) <= MAX_EVIDENCE:
                continue
            asked.append((f"the day after I {word} …",
                          f"What did I do the day after I {word} {clause}?",
                          {e.id for e in by_day[after]}))
    return asked


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bank-dir", type=Path, required=True)
    parser.add_argument("--seeds", default="7", help="comma-separated generator seeds")
    parser.add_argument("--years", default="1,5,10", help="comma-separated journal sizes")
    args = parser.parse_args()
    totals: dict[tuple[str, str], dict[str, float]] = defaultdict(lambda: defaultdict(float))
    for seed in map(int, args.seeds.split(",")):
        for years in map(int, args.years.split(",")):
            spec = JournalSpec(years=years, seed=seed)
            as_of = datetime.combine(spec.end, time(23)).isoformat()
            bank = args.bank_dir / f"journal-{years}y-seed{seed}-dense.db"
            with Memory.open(bank) as memory:
                for wording, question, evidence in questions(seed, years):
                    found = memory.search(question, as_of=as_of, k=10)
                    turns = [set(c.memory.source_turns) for c in found.results]
                    scores = _scores(turns, evidence)
                    for key in ((wording, f"{years}y"), ("all", "")):
                        totals[key]["n"] += 1
                        for metric in METRICS:
                            totals[key][metric] += scores[metric]
    for (wording, size), total in sorted(totals.items(),
                                         key=lambda item: (int(item[0][1][:-1] or 10**6),
                                                           item[0][0])):
        n = total["n"]
        cells = "  ".join(f"{metric} {total[metric] / n:.3f}" for metric in METRICS)
        print(f"{wording:24} {size:4} n={int(n):4}  {cells}")


if __name__ == "__main__":
    main()
