"""Questions whose time is a stay somewhere, asked of the journal benchmark's journals with trips
written into them.

"What did I eat while I was in Valencia?", "What did I do during my trip to Riga?": the time is
a stay, from the day the journal arrives somewhere to the day it comes home
(``retrieve.stay_span``). The benchmark's journals have no stays (their one-off flights are one
day), so this script writes some: from the seeded generator's journal (the one `ramem eval
journal --seed S` writes), two trips a year of 3 to 9 days, each to a city no other entry names;
the journal's own entries of those days are left out (the writer is away), and the trip's
entries are written instead:

- the arrival ("Flew to Valencia for a friend's wedding.", "Took the train to ...", "Arrived
  in ..."), always naming the city;
- one to four entries on the days between, a meal ("Ate grilled octopus at a small place near
  the harbour.") or a sight ("Walked around the old town of Valencia all afternoon."), a third
  of them naming the city;
- the last day: coming home, written five ways, two of which no rule of the reader knows
  ("Home at last; ...", "Landed late and went straight to bed.": the stay then ends at its
  last entry naming the city), or nothing (one trip in five: the same);
- for half of the trips, a report naming the city one to four weeks before it ("Booked the
  flights for Riga."), and for half, one two to eight weeks after it ("Still dreaming of the
  food in Riga."): the city named for another reason, on a day at home.

For each trip: "What did I do while I was in <city>?" (every trip entry is evidence), "What did
I eat while I was in <city>?" and "What did I eat in <city>?" (its meals), "What did I do during
my trip to <city>?", asked as of the journal's last day. The banks are built here
(``--bank-dir``, kept; a second run reuses them):

    PYTHONPATH=. python scripts/stay_words.py --embedder ../shared/models/all-MiniLM-L6-v2 \\
        --bank-dir B --seeds 7,8 --years 1,5

Prints R@1, R@10 and all-evidence R@10 per wording and size, the whole, and "range": the share
of questions whose time range is the trip's days exactly.
"""

from __future__ import annotations

import argparse
import random
from collections import defaultdict
from dataclasses import replace
from datetime import date, datetime, time, timedelta, timezone
from pathlib import Path

from same_time_words import METRICS as RECALLS
from same_time_words import _scores, print_totals

from ramem_local import Memory
from ramem_local.eval.journal import (
    JOURNAL_COUNTRY,
    PEOPLE,
    Entry,
    JournalSpec,
    generate_journal,
)

METRICS = (*RECALLS, "range")
TRIPS_PER_YEAR = 2
CITIES = ("Valencia", "Bologna", "Ljubljana", "Gdansk", "Bordeaux", "Antwerp", "Salzburg",
          "Split", "Trieste", "Lucerne", "Aarhus", "Galway", "Thessaloniki", "Malaga", "Riga",
          "Vilnius", "Bilbao", "Heidelberg", "Innsbruck", "Nantes")
REASONS = ("a friend's wedding", "a conference", "a long weekend", "a work trip",
           "my cousin's birthday", "a hiking holiday", "a language course")
ARRIVALS = ("Flew to {city} for {reason}.", "Took the train to {city} for {reason}.",
            "Arrived in {city} for {reason}; the hotel is tiny.")
DISHES = ("grilled octopus", "a seafood stew", "dumplings", "a huge schnitzel", "paella",
          "fresh pasta", "a fish soup", "pancakes with sour cream")
MEALS = ("Ate {dish} at a small place near the harbour.", "Had {dish} for dinner with {person}.",
         "Ate {dish} in {city}; the best of the trip.")
SIGHTS = ("Walked around the old town of {city} all afternoon.",
          "Visited the cathedral; crowded but worth it.", "Took a boat tour along the coast.",
          "Spent the morning in the museum of modern art.")
PLANS = ("Booked the flights for {city}.", "Read a guidebook about {city} on the sofa.")
AFTERTHOUGHTS = ("Still dreaming of the food in {city}.",
                 "Printed the photos from {city} for {person}.")
RETURNS = ("Flew back home; {remark}.", "Took the train back home; {remark}.",
           "Drove home from {city}; {remark}.", "Home at last; {remark}.",
           "Landed late and went straight to bed.")
REMARKS = ("the flat was freezing", "the cat ignored me all evening", "so much laundry",
           "tired but happy")
WORDINGS = (("while I was in …", "What did I do while I was in {city}?", "all"),
            ("while I was in … (meals)", "What did I eat while I was in {city}?", "meal"),
            ("in … (meals)", "What did I eat in {city}?", "meal"),
            ("during my trip to …", "What did I do during my trip to {city}?", "all"))


def _trip_days(spec: JournalSpec, rng: random.Random) -> list[tuple[date, date]]:
    """(first, last) day of each trip: two a year, 3 to 9 days, apart from each other and
    from the journal's last two weeks."""
    trips: list[tuple[date, date]] = []
    days = (spec.end - spec.start).days - 14
    while len(trips) < TRIPS_PER_YEAR * spec.years:
        first = spec.start + timedelta(days=rng.randrange(days))
        last = first + timedelta(days=rng.randint(2, 8))
        if all(last < a - timedelta(days=14) or first > b + timedelta(days=14)
               for a, b in trips):
            trips.append((first, last))
    return sorted(trips)


def _entry(day: date, index: int, hour: int, text: str, kind: str) -> Entry:
    return Entry(id=f"trip{day.isoformat()}-{index}", text=text,
                 written_at=datetime.combine(day, time(hour, 17)), event_day=day, kind=kind,
                 answer="", late_days=0)


def trip_journal(seed: int, years: int):
    """The benchmark journal with trips written in, and (wording, question, evidence ids,
    first day, last day) for each trip."""
    spec = JournalSpec(years=years, seed=seed)
    journal = generate_journal(spec)
    rng = random.Random(f"{seed}/stays/{spec.label}")
    cities = rng.sample(CITIES, TRIPS_PER_YEAR * years) if TRIPS_PER_YEAR * years <= len(
        CITIES) else [rng.choice(CITIES) + f" {n}" for n in range(TRIPS_PER_YEAR * years)]
    trips = _trip_days(spec, rng)
    away = {first + timedelta(days=n) for first, last in trips
            for n in range((last - first).days + 1)}
    entries = [e for e in journal.entries if e.written_day not in away and e.event_day not in away]
    asked = []
    for (first, last), city in zip(trips, cities, strict=True):
        reason = rng.choice(REASONS)
        written = [_entry(first, 1, 9, rng.choice(ARRIVALS).format(city=city, reason=reason),
                          "arrival")]
        between = [first + timedelta(days=n) for n in range(1, (last - first).days)]
        for day in sorted(rng.sample(between, min(len(between), rng.randint(1, 4)))):
            if rng.random() < 0.5:
                text = rng.choice(MEALS).format(dish=rng.choice(DISHES), city=city,
                                                person=rng.choice(PEOPLE))
                written.append(_entry(day, 1, 20, text, "meal"))
            else:
                written.append(_entry(day, 1, 15, rng.choice(SIGHTS).format(city=city), "sight"))
        if rng.random() < 0.8:
            text = rng.choice(RETURNS).format(city=city, remark=rng.choice(REMARKS))
            written.append(_entry(last, 1, 21, text, "return"))
        entries += written
        if rng.random() < 0.5:
            day = first - timedelta(days=rng.randint(7, 28))
            entries.append(_entry(day, 9, 22, rng.choice(PLANS).format(city=city), "plan"))
        if rng.random() < 0.5:
            day = last + timedelta(days=rng.randint(14, 56))
            if day < spec.end:
                text = rng.choice(AFTERTHOUGHTS).format(city=city, person=rng.choice(PEOPLE))
                entries.append(_entry(day, 9, 22, text, "afterthought"))
        for wording, template, kind in WORDINGS:
            evidence = {e.id for e in written if kind == "all" or e.kind == kind}
            if evidence:
                asked.append((wording, template.format(city=city), evidence, first,
                              max(e.event_day for e in written)))
    entries.sort(key=lambda e: e.written_at)
    return replace(journal, entries=tuple(entries)), asked


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--embedder", required=True)
    parser.add_argument("--bank-dir", type=Path, required=True)
    parser.add_argument("--seeds", default="7", help="comma-separated generator seeds")
    parser.add_argument("--years", default="1,5", help="comma-separated journal sizes")
    args = parser.parse_args()
    args.bank_dir.mkdir(parents=True, exist_ok=True)
    totals: dict[tuple[str, str], dict[str, float]] = defaultdict(lambda: defaultdict(float))
    for seed in map(int, args.seeds.split(",")):
        for years in map(int, args.years.split(",")):
            journal, asked = trip_journal(seed, years)
            stem = args.bank_dir / f"stays-{years}y-seed{seed}"
            source = journal.write_jsonl(stem.with_suffix(".jsonl"))
            as_of = datetime.combine(journal.spec.end, time(23)).isoformat()
            with Memory.open(stem.with_suffix(".db"), default_embedder="none",
                             embedder=args.embedder,
                             country=JOURNAL_COUNTRY) as memory:
                memory.ingest(source)
                for wording, question, evidence, first, last in asked:
                    found = memory.search(question, as_of=as_of, k=10)
                    scores = _scores([set(c.memory.source_turns) for c in found.results],
                                     evidence)
                    window = found.trace.frame.time_range if found.trace.frame else None
                    scores["range"] = float(window is not None and (window.start, window.end) == (
                        _midnight(first), _midnight(last + timedelta(days=1))))
                    for key in ((wording, f"{years}y"), ("all", "")):
                        totals[key]["n"] += 1
                        for metric in METRICS:
                            totals[key][metric] += scores[metric]
    print_totals(totals, METRICS)


def _midnight(day: date) -> int:
    return int(datetime.combine(day, time(), tzinfo=timezone.utc).timestamp())


if __name__ == "__main__":
    main()
