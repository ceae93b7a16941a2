"""Questions whose time is an event's own day, weekend or week, asked of the journal benchmark's
banks.

"What did I do the day I adopted Shadow the cat?", "What did I cook on the day of Ana's
wedding?", "Which film did I watch the week I started the new job at Orbis Freight?": the time
is the one-off event's own day (``day_of``) or its week, Monday to Sunday (``week_of``). The
benchmark never asks this way, so the questions are written here from the seeded generator (the
same journal `ramem eval journal --seed S` writes), for every one-off event of each journal:

- the whole day: "What did I do the day <event>?" (every entry of that day is evidence, the
  event's own among them);
- each activity kind with an entry that day: the kind's own question wordings ("What did I
  cook <cue>?"), the kind's entries of the day as evidence;
- each kind with 1 to 10 entries in the event's week: "… the week <event>?";
- for an event on a Saturday or a Sunday (where "the weekend I moved" can mean one weekend
  only), the whole weekend and each kind with an entry in it: "What did I do the weekend
  <event>?", "What did I cook the weekend of <event>?" (``weekend_of``).

An event named as a clause ("I moved into the flat on Linden Avenue") reads "the day I moved
…"; one named as a noun phrase ("Ana's wedding", "my job interview at Vantage Rail") reads "the
day of …" and, for an occasion with its owner, "at Ana's wedding". Searched on the banks
`ramem eval journal` left (``--bank-dir``), as of the journal's last day:

    ramem --embedder DIR eval journal --seed 7 --mode ramem --bank-dir B
    PYTHONPATH=. python scripts/same_time_words.py --bank-dir B --seeds 7,8,9 --years 1,5,10
    PYTHONPATH=. python scripts/same_time_words.py --bank-dir B --seeds 7 --only "the weekend"

Prints R@1, R@10 and all-evidence R@10 per wording and size, and the whole.
"""

from __future__ import annotations

import argparse
import re
from collections import defaultdict
from collections.abc import Callable
from datetime import datetime, time, timedelta
from pathlib import Path

from ramem_local import Memory
from ramem_local.eval.journal import (
    _KIND,
    KINDS,
    ONEOFF,
    WHOLE_DAY_QUESTIONS,
    JournalSpec,
    generate_journal,
)

METRICS = ("R@1", "R@10", "AllR@10")
MAX_EVIDENCE = 10
_OCCASION = re.compile(r"(?:['’]s|^my|^our)\b.*\b(?:birthday|anniversary|wedding|graduation|"
                       r"retirement|funeral)", re.IGNORECASE)


def _scores(turns: list[set[str]], evidence: set[str]) -> dict[str, float]:
    held = set().union(*turns) if turns else set()
    return {"R@1": float(bool(turns) and bool(turns[0] & evidence)),
            "R@10": float(any(t & evidence for t in turns)),
            "AllR@10": float(evidence <= held)}


def day_cues(event: str) -> list[tuple[str, str]]:
    """(wording, cue) for the event's own day: "the day I moved …" for a clause, "the day of
    Ana's wedding" and "at Ana's wedding" for a noun phrase."""
    if event.startswith("I "):
        return [("the day I …", f"the day {event}")]
    cues = [("the day of …", f"on the day of {event}")]
    if _OCCASION.search(event):
        cues.append(("at <occasion>", f"at {event}"))
    return cues


def week_cue(event: str) -> str:
    return f"the week {event}" if event.startswith("I ") else f"the week of {event}"


def weekend_cue(event: str) -> str:
    return f"the weekend {event}" if event.startswith("I ") else f"the weekend of {event}"


def weekend_questions(event_answer: str, weekend: list) -> list[tuple[str, str, set[str]]]:
    """The whole weekend and each kind with an entry in it, for an event on that weekend."""
    cue = weekend_cue(event_answer)
    asked = []
    if len(weekend) <= MAX_EVIDENCE:
        asked += [("the weekend … (whole)", template.format(cue=cue), {e.id for e in weekend})
                  for template in WHOLE_DAY_QUESTIONS]
    for kind in KINDS:
        evidence = {e.id for e in weekend if e.kind == kind}
        if evidence:
            asked.append(("the weekend … (a kind)", _KIND[kind].questions[0].format(cue=cue),
                          evidence))
    return asked


def questions(seed: int, years: int) -> list[tuple[str, str, set[str]]]:
    """(wording, question, evidence entry ids) for every one-off event of the journal."""
    journal = generate_journal(JournalSpec(years=years, seed=seed))
    by_day: dict = defaultdict(list)
    for entry in journal.entries:
        by_day[entry.event_day].append(entry)
    asked = []
    for event in (e for e in journal.entries if e.kind == ONEOFF):
        day = event.event_day
        monday = day - timedelta(days=day.weekday())
        week = [e for offset in range(7) for e in by_day.get(monday + timedelta(days=offset), [])]
        if monday + timedelta(days=6) > journal.spec.end:
            week = []  # a week the journal has not finished
        for wording, cue in day_cues(event.answer):
            if len(by_day[day]) <= MAX_EVIDENCE:
                for template in WHOLE_DAY_QUESTIONS:
                    asked.append((f"{wording} (whole day)", template.format(cue=cue),
                                  {e.id for e in by_day[day]}))
            for kind in KINDS:
                evidence = {e.id for e in by_day[day] if e.kind == kind}
                if evidence:
                    asked.append((f"{wording} (a kind)",
                                  _KIND[kind].questions[0].format(cue=cue), evidence))
        for kind in KINDS:
            evidence = {e.id for e in week if e.kind == kind}
            if 1 <= len(evidence) <= MAX_EVIDENCE:
                asked.append(("the week …", _KIND[kind].questions[0].format(
                    cue=week_cue(event.answer)), evidence))
        if day.weekday() >= 5 and week:  # Saturday or Sunday of a finished week
            saturday = monday + timedelta(days=5)
            asked += weekend_questions(event.answer, by_day.get(saturday, [])
                                       + by_day.get(saturday + timedelta(days=1), []))
    return asked


Asked = list[tuple[str, str, set[str]]]  # (wording, question, evidence entry ids)


def parse_args(description: str, *, only: bool = True) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--bank-dir", type=Path, required=True)
    parser.add_argument("--seeds", default="7", help="comma-separated generator seeds")
    parser.add_argument("--years", default="1,5,10", help="comma-separated journal sizes")
    if only:
        parser.add_argument("--only", default="", help="ask only the wordings starting with this")
    return parser.parse_args()


def ask_and_report(args: argparse.Namespace, written: Callable[[int, int], Asked]) -> None:
    """Ask each journal's ``written(seed, years)`` questions of the bank `ramem eval journal`
    left for it, as of the journal's last day, and print R@1, R@10 and all-evidence R@10 per
    wording and size, and the whole."""
    only = getattr(args, "only", "")
    totals: dict[tuple[str, str], dict[str, float]] = defaultdict(lambda: defaultdict(float))
    for seed in map(int, args.seeds.split(",")):
        for years in map(int, args.years.split(",")):
            spec = JournalSpec(years=years, seed=seed)
            as_of = datetime.combine(spec.end, time(23)).isoformat()
            bank = args.bank_dir / f"journal-{years}y-seed{seed}-dense.db"
            with Memory.open(bank) as memory:
                for wording, question, evidence in written(seed, years):
                    if not wording.startswith(only):
                        continue
                    found = memory.search(question, as_of=as_of, k=10)
                    turns = [set(c.memory.source_turns) for c in found.results]
                    scores = _scores(turns, evidence)
                    for key in ((wording, f"{years}y"), ("all", "")):
                        totals[key]["n"] += 1
                        for metric in METRICS:
                            totals[key][metric] += scores[metric]
    print_totals(totals, METRICS)


def print_totals(totals: dict[tuple[str, str], dict[str, float]],
                 metrics: tuple[str, ...]) -> None:
    """One line per (wording, size) of summed scores, sizes in order, the whole last."""
    for (wording, size), total in sorted(totals.items(),
                                         key=lambda item: (int(item[0][1][:-1] or 10**6),
                                                           item[0][0])):
        n = total["n"]
        cells = "  ".join(f"{metric} {total[metric] / n:.3f}" for metric in metrics)
        print(f"{wording:28} {size:4} n={int(n):4}  {cells}")


def main() -> None:
    ask_and_report(parse_args(__doc__.splitlines()[0]), questions)


if __name__ == "__main__":
    main()
