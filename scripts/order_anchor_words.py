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

from collections import defaultdict
from datetime import timedelta

from same_time_words import MAX_EVIDENCE, Asked, ask_and_report, parse_args

from ramem_local.eval.journal import JournalSpec, generate_journal

# How a user names one occurrence of each kind's detail, after "I last" / "I first".
CLAUSES = {"hike": "went hiking at {x}", "meal": "cooked {x}", "film": "watched {x}",
           "concert": "saw {x} live", "visit": "visited {x}"}
ORDERS = {"last": max, "first": min}


def questions(seed: int, years: int) -> Asked:
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
    ask_and_report(parse_args(__doc__.splitlines()[0], only=False), questions)


if __name__ == "__main__":
    main()
