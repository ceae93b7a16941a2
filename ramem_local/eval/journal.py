"""Synthetic journal benchmark: context collapse as a journal grows (DESIGN.md §7).

LoCoMo banks hold ~600 turns; a personal journal kept for ten years holds thousands of entries in
which the same activities recur with the same people and places. This module writes such a
journal — seeded, deterministic, no data files — asks questions whose answer is fixed by a time
cue, and measures retrieval through the product path (``Memory.ingest`` of a JSONL file, then
``Memory.search`` with the defaults of ``ramem search``).

**The journal.** ``N`` years ending on :data:`JOURNAL_END`, written by ``"me"``. Every day has one
to three *events*: recurring activities (:data:`KINDS`: hike, cooking, book, film, repair,
concert, visit; each recurs every one to seven weeks, some preferring weekends) and filler (work,
weather, mood) that mentions the same people and places. Details are drawn from small pools, so
entries look alike across years. About 15% of entries are written one to three days late with a
relative cue ("Yesterday I …", "Two days ago I …", "On Saturday I …"): their timestamp is the
writing day, their *event day* the earlier day. Entries written on the day carry no time cue.

**The questions** (each with its evidence entry ids and its reference time ``as_of``):

============= ======================================================= ==========================
style         example                                                 as_of (23:00 that day)
============= ======================================================= ==========================
date          Where did I go hiking on 9 February 2023?               the journal's end
yesterday     What did I cook yesterday?                              the day after the event
days_ago      Which film did I watch 3 days ago?  (N = 2..6)          N days after the event
month_part    Which book did I start in early May 2024?               the journal's end
last_weekend  Who did I visit last weekend?                           a weekday of the next week
time_only     What did I do yesterday? / on 3 May 2024? / N days ago? as the styles above
============= ======================================================= ==========================

A single-entry question's evidence is the one entry of that kind whose event day is in the asked
range; month_part and last_weekend questions are only asked when exactly one such entry exists.
A time_only question's evidence is every entry whose event day is the asked day (late ones
included). Every question is answerable when it is asked: its evidence is written on or before
its ``as_of`` day (no "yesterday" question about a day whose entry was filed two days later).
A *hit* is a retrieved memory whose ``source_turns`` holds an evidence entry id.
Metrics (R@1, R@K, all-evidence R@K) come from :mod:`ramem_local.eval.metrics`.
"""

from __future__ import annotations

import json
import random
import statistics
import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass, field
from datetime import date, datetime, timedelta
from pathlib import Path

from ..api import Memory
from ..protocols import Embedder
from .metrics import all_evidence_recall_at_k, first_hit_rank, recall_at_k
from .retrieval import bank_folder
from .tuning import DEFAULT_TUNING, SearchTuning, tuned_search

JOURNAL_END = date(2026, 11, 17)
DEFAULT_YEARS = (1, 5, 10)
DEFAULT_SEED = 7
DEFAULT_PER_STYLE = 40
STYLES = ("date", "yesterday", "days_ago", "month_part", "last_weekend", "time_only")
SINGLE_ENTRY_STYLES = STYLES[:-1]
SPEAKER = "me"
CONVERSATION = "journal"
FILLER = "filler"
LATE_PROBABILITY = 0.15
# The generated journal writes English dates with written months: its banks read dates as a US
# bank does, whatever the locale of the machine running the benchmark.
JOURNAL_COUNTRY = "US"
MAX_EVENTS_PER_DAY = 3
ASKED_AT = "T23:00:00"  # questions are asked in the evening of their reference day

MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August",
          "September", "October", "November", "December")
WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
NUMBER_WORDS = {2: "Two", 3: "Three"}

# Pools shared by activities and filler: the same people and places everywhere is the point.
PEOPLE = ("Ana", "Ben", "Chloe", "David", "Elena", "Farid", "Grace", "Hugo", "Iris", "Jonas",
          "Karin", "Leo", "Maya", "Nils", "Olga", "Pablo")
TRAILS = ("Eagle Ridge", "Pine Lake", "Hawk Hill", "the river gorge", "Cedar Falls",
          "Bear Creek", "the coastal path", "Mount Alder", "the old quarry trail", "Fox Valley",
          "Granite Peak", "Willow Marsh", "the larch forest loop", "Stone Bridge canyon")
PLACES = ("the market", "the library", "the bakery", "the station", "the harbour", "the park",
          "Pine Lake", "Hawk Hill", "Bear Creek", "the old town")
TOWNS = ("Ghent", "Porto", "Lyon", "Bergen", "Graz", "Utrecht", "Bruges", "Turin")
VENUES = ("the Blue Room", "the Old Theatre", "Harbour Hall", "the park stage", "Club Meridian")
PROJECTS = ("budget review", "client proposal", "website migration", "quarterly report",
            "hiring plan", "database cleanup")


@dataclass(frozen=True)
class ActivityKind:
    """A recurring activity: what is asked about it, how entries about it read, how often.

    ``templates`` are past-tense clauses that follow "I" (so a late entry reads "Yesterday I
    …"); ``{x}`` is the detail a question asks for, other slots come from the shared pools.
    """

    name: str
    answers: tuple[str, ...]
    templates: tuple[str, ...]
    remarks: tuple[str, ...]
    questions: tuple[str, ...]  # each with a {cue} slot
    gap_days: tuple[int, int]  # days between two occurrences (min ≥ 7: one per day at most)
    weekend_bias: float = 0.0  # chance an occurrence moves to the next Saturday or Sunday


ACTIVITIES = (
    ActivityKind(
        name="hike",
        answers=TRAILS,
        templates=("hiked up {x} with {person}", "went hiking at {x} with {person} and {person2}",
                   "did the long loop around {x} alone"),
        remarks=("the view from the top was clear", "it was muddy all the way up",
                 "we saw two deer near the stream", "my knee complained on the descent",
                 "we got lost for an hour", "the wind was brutal at the summit",
                 "I finally broke in the new boots"),
        questions=("Where did I go hiking {cue}?", "Which trail did I hike {cue}?"),
        gap_days=(9, 24), weekend_bias=0.7,
    ),
    ActivityKind(
        name="meal",
        answers=("lentil soup", "mushroom risotto", "a lemon tart", "shakshuka", "pad thai",
                 "miso ramen", "seafood paella", "a chocolate cake", "pork dumplings",
                 "vegetable chili", "spinach lasagna", "green curry", "banana bread",
                 "fish tacos"),
        templates=("cooked {x} for {person}", "made {x} at home with {person}",
                   "tried a new recipe for {x}"),
        remarks=("it came out a bit too salty", "everyone asked for seconds",
                 "I burned the first batch", "the kitchen was a mess afterwards",
                 "it took twice as long as the recipe said", "{person2} brought the wine"),
        questions=("What did I cook {cue}?", "What dish did I make {cue}?"),
        gap_days=(8, 20),
    ),
    ActivityKind(
        name="book",
        answers=("The Glass Harbor", "Salt and Iron", "The Quiet Orchard", "Letters from Nowhere",
                 "The Cartographer's Daughter", "A Map of Small Rivers", "The Last Lighthouse",
                 "Paper Birds", "The Silent Engine", "North of the Fog", "The Copper Key",
                 "Under the Linden Tree"),
        templates=("started reading {x}, a gift from {person}", "began {x} on the train",
                   "picked up {x} at the library and started it"),
        remarks=("the first chapter is slow", "I could not put it down",
                 "the prose is beautiful", "I already suspect the ending",
                 "{person2} recommended it to me"),
        questions=("Which book did I start {cue}?", "What book did I begin reading {cue}?"),
        gap_days=(14, 35),
    ),
    ActivityKind(
        name="film",
        answers=("Night Harbor", "The Long Drive", "Blue Meridian", "The Orchard Thief",
                 "Small Hours", "Paper Moon Rising", "The Ninth Room", "Glass Mountain",
                 "Red Signal", "The Ferryman", "Distant Lights", "Cold Current"),
        templates=("watched {x} with {person} at the cinema", "saw {x} at home with {person}",
                   "finally watched {x}"),
        remarks=("the ending made no sense", "the soundtrack was great",
                 "I fell asleep halfway through", "we argued about it afterwards",
                 "far better than the reviews said", "the cinema was almost empty"),
        questions=("Which film did I watch {cue}?", "What movie did I see {cue}?"),
        gap_days=(10, 28), weekend_bias=0.3,
    ),
    ActivityKind(
        name="repair",
        answers=("the bike's rear brake", "the kitchen tap", "the garden fence",
                 "the washing machine", "a wobbly chair", "the laptop hinge",
                 "the bathroom door", "the old radio", "the toaster", "the balcony light",
                 "a leaking pipe under the sink", "the vacuum cleaner"),
        templates=("fixed {x} with help from {person}", "repaired {x} myself",
                   "spent hours repairing {x}"),
        remarks=("it needed a part I did not have", "a video tutorial saved me",
                 "it works again, mostly", "I lost a screw under the sofa",
                 "cheaper than calling someone"),
        questions=("What did I repair {cue}?", "What did I fix {cue}?"),
        gap_days=(14, 40),
    ),
    ActivityKind(
        name="concert",
        answers=("the Velvet Tides", "Northbound Choir", "the Hollow Pines", "Luna Brass",
                 "the Static Hearts", "Orchid Quartet", "the Lantern Folk", "Echo Valley Band",
                 "the Paper Owls"),
        templates=("went to see {x} at {venue} with {person}", "heard {x} live at {venue}"),
        remarks=("the encore was the best part", "the sound was far too loud",
                 "we danced until the end", "I bought a poster", "they played the old songs"),
        questions=("Which band did I see live {cue}?", "Which concert did I go to {cue}?"),
        gap_days=(21, 50), weekend_bias=0.5,
    ),
    ActivityKind(
        name="visit",
        answers=("my sister Lena", "Grandpa Theo", "Aunt Rosa", "my old friend Tomas",
                 "cousin Mirela", "my parents", "Uncle Karl", "my godson Felix"),
        templates=("visited {x} in {town}", "drove out to see {x} in {town}",
                   "took the train to visit {x}"),
        remarks=("we looked through old photos", "we cooked together",
                 "we walked along the canal", "the house felt smaller than I remembered",
                 "we talked for hours"),
        questions=("Who did I visit {cue}?", "Who did I go to see {cue}?"),
        gap_days=(14, 35), weekend_bias=0.5,
    ),
)
KINDS = tuple(kind.name for kind in ACTIVITIES)
_KIND = {kind.name: kind for kind in ACTIVITIES}

FILLER_TEMPLATES = (
    "worked on the {project} with {person} at the office",
    "had a long meeting with {person} about the {project}",
    "got soaked walking to {place} in the rain",
    "found it too hot to do much and sat in the shade near {place}",
    "stayed in while the fog never lifted, and {person} called",
    "felt restless and phoned {person} to talk",
    "was in a good mood and walked to {place} with {person}",
    "felt tired and stayed home until {person} dropped by",
)
FILLER_REMARKS = ("nothing much else happened", "it went better than expected",
                  "I stayed up too late", "I should sleep more", "{person2} sent a postcard",
                  "the neighbours were loud again")


# ---------------------------------------------------------------------------------------------
# The journal
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class JournalSpec:
    """Which journal to write: ``years`` ending on ``end`` (or ``days``, for short test runs)."""

    years: int = 1
    seed: int = DEFAULT_SEED
    questions_per_style: int = DEFAULT_PER_STYLE
    end: date = JOURNAL_END
    days: int | None = None

    @property
    def start(self) -> date:
        if self.days is not None:
            return self.end - timedelta(days=self.days - 1)
        return _add_years(self.end, -self.years) + timedelta(days=1)

    @property
    def label(self) -> str:
        return f"{self.days}d" if self.days is not None else f"{self.years}y"


@dataclass(frozen=True)
class Entry:
    """One journal entry; ``written_at`` is its timestamp (naive, read as UTC by the bank)."""

    id: str
    text: str
    written_at: datetime
    event_day: date
    kind: str  # an activity kind, or FILLER
    answer: str  # the detail a question about it asks for ("" for filler)
    late_days: int  # 0 when written on the event day

    @property
    def written_day(self) -> date:
        return self.written_at.date()

    def jsonl_row(self) -> dict:
        """The product's JSONL turn format; the session is the writing day."""
        return {"speaker": SPEAKER, "text": self.text, "timestamp": self.written_at.isoformat(),
                "session": self.written_day.isoformat(), "id": self.id,
                "conversation": CONVERSATION}


@dataclass(frozen=True)
class JournalQuestion:
    """A question with its evidence; ``first_day``..``last_day`` is the asked range."""

    id: str
    style: str
    kind: str | None  # None for time_only
    question: str
    as_of: str  # ISO datetime: the reference time for the question's cue
    first_day: date
    last_day: date
    evidence: tuple[str, ...]
    answer: str


@dataclass(frozen=True)
class Journal:
    spec: JournalSpec
    entries: tuple[Entry, ...]  # in writing order
    questions: tuple[JournalQuestion, ...]

    def write_jsonl(self, path: Path) -> Path:
        """Write the entries as the JSONL that ``ramem ingest`` reads."""
        with Path(path).open("w", encoding="utf-8") as handle:
            for entry in self.entries:
                handle.write(json.dumps(entry.jsonl_row(), ensure_ascii=False) + "\n")
        return Path(path)


def generate_journal(spec: JournalSpec) -> Journal:
    """The journal and its questions; the same spec gives the same journal, byte for byte."""
    if spec.days is not None and spec.days < 7:
        raise ValueError("a journal needs at least 7 days")
    if spec.years < 1 or spec.questions_per_style < 0:
        raise ValueError("years must be ≥ 1 and questions_per_style ≥ 0")
    rng = random.Random(spec.seed)
    entries = _write_entries(_plan_events(spec, rng), rng)
    questions = _ask(spec, entries, random.Random(f"{spec.seed}/questions/{spec.label}"))
    return Journal(spec=spec, entries=tuple(entries), questions=tuple(questions))


@dataclass(frozen=True)
class _Event:
    day: date
    kind: str
    late_days: int


def _plan_events(spec: JournalSpec, rng: random.Random) -> list[_Event]:
    """Activities on their recurrence schedules, then filler up to 1-3 events per day."""
    start, end = spec.start, spec.end
    scheduled: dict[date, list[str]] = {}
    for kind in ACTIVITIES:
        day = start + timedelta(days=rng.randint(0, kind.gap_days[1]))
        while day <= end:
            if day.weekday() < 5 and rng.random() < kind.weekend_bias:
                weekend_day = day + timedelta(days=5 - day.weekday() + rng.randint(0, 1))
                day = weekend_day if weekend_day <= end else day
            while len(scheduled.get(day, ())) >= MAX_EVENTS_PER_DAY:
                day += timedelta(days=1)
            if day > end:
                break
            scheduled.setdefault(day, []).append(kind.name)
            day += timedelta(days=rng.randint(*kind.gap_days))
    events: list[_Event] = []
    for offset in range((end - start).days + 1):
        day = start + timedelta(days=offset)
        kinds = scheduled.get(day, [])
        planned = kinds + [FILLER] * max(0, rng.randint(1, MAX_EVENTS_PER_DAY) - len(kinds))
        rng.shuffle(planned)
        for kind_name in planned:
            late = rng.randint(1, 3) if rng.random() < LATE_PROBABILITY else 0
            if day + timedelta(days=late) > end:
                late = 0
            events.append(_Event(day, kind_name, late))
    return events


def _write_entries(events: list[_Event], rng: random.Random) -> list[Entry]:
    """Render every event's text, then stamp entries in writing order within their day."""
    by_written_day: dict[date, list[tuple[_Event, str, str]]] = {}
    for event in events:
        text, answer = _render(event, rng)
        written = event.day + timedelta(days=event.late_days)
        by_written_day.setdefault(written, []).append((event, text, answer))
    entries: list[Entry] = []
    for written in sorted(by_written_day):
        todays = by_written_day[written]
        minutes = sorted(rng.sample(range(7 * 60, 23 * 60), len(todays)))
        for index, ((event, text, answer), minute) in enumerate(zip(todays, minutes, strict=True)):
            stamp = datetime(written.year, written.month, written.day, minute // 60, minute % 60)
            entries.append(Entry(id=f"e{written.isoformat()}-{index + 1}", text=text,
                                 written_at=stamp, event_day=event.day, kind=event.kind,
                                 answer=answer, late_days=event.late_days))
    return entries


def _render(event: _Event, rng: random.Random) -> tuple[str, str]:
    person, person2 = rng.sample(PEOPLE, 2)
    slots = {"person": person, "person2": person2, "place": rng.choice(PLACES),
             "town": rng.choice(TOWNS), "venue": rng.choice(VENUES),
             "project": rng.choice(PROJECTS), "x": ""}
    if event.kind == FILLER:
        templates, remarks = FILLER_TEMPLATES, FILLER_REMARKS
    else:
        kind = _KIND[event.kind]
        templates, remarks = kind.templates, kind.remarks
        slots["x"] = rng.choice(kind.answers)
    clause = (rng.choice(templates) + "; " + rng.choice(remarks)).format(**slots) + "."
    if event.late_days:
        text = f"{late_cue(event.day, event.late_days, rng)} I {clause}"
    elif rng.random() < 0.5:
        text = f"I {clause}"
    else:  # journal style: the subject dropped
        text = clause[0].upper() + clause[1:]
    return text, slots["x"]


def late_cue(event_day: date, late_days: int, rng: random.Random) -> str:
    """How an entry written ``late_days`` (1-3) after ``event_day`` names that day."""
    if rng.random() < 0.5:
        return f"On {WEEKDAYS[event_day.weekday()]}"
    if late_days == 1:
        return "Yesterday"
    if late_days == 2 and rng.random() < 0.5:
        return "The day before yesterday"
    return f"{NUMBER_WORDS[late_days]} days ago"


# ---------------------------------------------------------------------------------------------
# Questions
# ---------------------------------------------------------------------------------------------


def month_part(day: date) -> tuple[str, date, date]:
    """("early" | "mid" | "late", first day, last day) of the part of the month ``day`` is in."""
    if day.day <= 10:
        return "early", day.replace(day=1), day.replace(day=10)
    if day.day <= 20:
        return "mid", day.replace(day=11), day.replace(day=20)
    return "late", day.replace(day=21), _month_end(day)


def weekend_of(day: date) -> tuple[date, date]:
    """The Saturday-Sunday containing ``day`` (a Saturday or a Sunday)."""
    saturday = day - timedelta(days=day.weekday() - 5)
    return saturday, saturday + timedelta(days=1)


def spoken_date(day: date) -> str:
    """'9 February 2023' (no locale: the month names are ours)."""
    return f"{day.day} {MONTHS[day.month - 1]} {day.year}"


def _ask(spec: JournalSpec, entries: Sequence[Entry], rng: random.Random) -> list[JournalQuestion]:
    activities = [e for e in entries if e.kind != FILLER]
    per_day = Counter((e.kind, e.event_day) for e in activities)
    per_part = Counter((e.kind, month_part(e.event_day)[1]) for e in activities)
    per_weekend = Counter((e.kind, weekend_of(e.event_day)[0]) for e in activities
                          if e.event_day.weekday() >= 5)
    end = spec.end
    n = spec.questions_per_style
    # Single-entry questions are only asked where the kind occurs once in the asked range.
    unique_day = [e for e in activities if per_day[(e.kind, e.event_day)] == 1]
    questions: list[JournalQuestion] = []

    def single(style: str, entry: Entry, cue: str, as_of: date, first: date,
               last: date) -> None:
        wording = rng.choice(_KIND[entry.kind].questions)
        questions.append(JournalQuestion(
            id=f"{style}-{len(questions) + 1:04d}", style=style, kind=entry.kind,
            question=wording.format(cue=cue), as_of=as_of.isoformat() + ASKED_AT,
            first_day=first, last_day=last, evidence=(entry.id,), answer=entry.answer))

    for entry in _sample(rng, unique_day, n):
        day = entry.event_day
        single("date", entry, f"on {spoken_date(day)}", end, day, day)
    written_by_next_day = [e for e in unique_day if e.event_day < end and e.late_days <= 1]
    for entry in _sample(rng, written_by_next_day, n):
        day = entry.event_day
        single("yesterday", entry, "yesterday", day + timedelta(days=1), day, day)
    for entry in _sample(rng, [e for e in unique_day if (end - e.event_day).days >= 6], n):
        day, ago = entry.event_day, rng.randint(max(2, entry.late_days), 6)
        single("days_ago", entry, f"{ago} days ago", day + timedelta(days=ago), day, day)
    in_one_part = [e for e in activities if per_part[(e.kind, month_part(e.event_day)[1])] == 1
                   and spec.start <= month_part(e.event_day)[1]
                   and month_part(e.event_day)[2] <= end]
    for entry in _sample(rng, in_one_part, n):
        part, first, last = month_part(entry.event_day)
        cue = f"in {part} {MONTHS[first.month - 1]} {first.year}"
        single("month_part", entry, cue, end, first, last)
    one_on_weekend = [e for e in activities if e.event_day.weekday() >= 5
                      and per_weekend[(e.kind, weekend_of(e.event_day)[0])] == 1
                      and spec.start <= weekend_of(e.event_day)[0]
                      and weekend_of(e.event_day)[1] + timedelta(days=5) <= end]
    for entry in _sample(rng, one_on_weekend, n):
        saturday, sunday = weekend_of(entry.event_day)
        # Monday to Friday of the next week, once the entry is written.
        after = rng.randint(max(1, (entry.written_day - sunday).days), 5)
        single("last_weekend", entry, "last weekend", sunday + timedelta(days=after), saturday,
               sunday)

    by_event_day: dict[date, list[Entry]] = {}
    for entry in entries:
        by_event_day.setdefault(entry.event_day, []).append(entry)
    days = [d for d in sorted(by_event_day) if (end - d).days >= 6]
    for day in _sample(rng, days, n):
        late = max(e.late_days for e in by_event_day[day])
        variant = rng.choice(("yesterday", "date", "days_ago") if late <= 1
                             else ("date", "days_ago"))
        if variant == "yesterday":
            text, as_of = "What did I do yesterday?", day + timedelta(days=1)
        elif variant == "date":
            text, as_of = f"What did I do on {spoken_date(day)}?", end
        else:
            ago = rng.randint(max(2, late), 6)
            text, as_of = f"What happened {ago} days ago?", day + timedelta(days=ago)
        questions.append(JournalQuestion(
            id=f"time_only-{len(questions) + 1:04d}", style="time_only", kind=None,
            question=text, as_of=as_of.isoformat() + ASKED_AT, first_day=day, last_day=day,
            evidence=tuple(e.id for e in by_event_day[day]), answer=""))
    return questions


def _sample(rng: random.Random, candidates: Sequence, n: int) -> list:
    """Up to ``n`` candidates without repeats, in journal order (readable JSONL rows)."""
    picked = sorted(rng.sample(range(len(candidates)), min(n, len(candidates))))
    return [candidates[i] for i in picked]


def _month_end(day: date) -> date:
    following = (day.replace(day=28) + timedelta(days=4)).replace(day=1)
    return following - timedelta(days=1)


def _add_years(day: date, years: int) -> date:
    try:
        return day.replace(year=day.year + years)
    except ValueError:  # 29 February
        return day.replace(year=day.year + years, day=28)


# ---------------------------------------------------------------------------------------------
# Evaluation
# ---------------------------------------------------------------------------------------------


@dataclass
class JournalBank:
    """How one journal's bank was built."""

    label: str
    start: str
    end: str
    entries: int
    late_entries: int
    questions: int
    ingest_seconds: float


@dataclass
class JournalQuestionResult:
    size: str
    question_id: str
    style: str
    kind: str | None
    question: str
    as_of: str
    asked_days: list[str]  # [first, last]
    mode: str
    evidence: list[str]
    retrieved: list[dict]
    first_hit_rank: int | None
    ms: float
    metrics: dict[str, float] = field(default_factory=dict)

    def jsonl_row(self) -> dict:
        return asdict(self)


@dataclass
class JournalEvalResult:
    modes: tuple[str, ...]
    k: int
    seed: int
    embedder: str
    banks: list[JournalBank]
    results: list[JournalQuestionResult]
    seconds: float

    @property
    def metric_names(self) -> tuple[str, ...]:
        return metric_names(self.k)

    def summary(self) -> dict[str, dict]:
        """{size: {entries, late_entries, ingest_seconds, median_search_ms: {mode: ms},
        modes: {mode: {group: {metric: mean, "n": count}}}}}; groups are the styles and
        "overall"."""
        out: dict[str, dict] = {}
        for bank in self.banks:
            rows = [r for r in self.results if r.size == bank.label]
            per_mode: dict[str, dict[str, dict[str, float]]] = {}
            median_ms: dict[str, float] = {}
            for mode in self.modes:
                mode_rows = [r for r in rows if r.mode == mode]
                groups = {style: [r for r in mode_rows if r.style == style] for style in STYLES}
                groups["overall"] = mode_rows
                per_mode[mode] = {name: _means(members, self.metric_names)
                                  for name, members in groups.items()}
                median_ms[mode] = (round(statistics.median(r.ms for r in mode_rows), 2)
                                   if mode_rows else float("nan"))
            out[bank.label] = {
                "start": bank.start, "end": bank.end, "entries": bank.entries,
                "late_entries": bank.late_entries,
                "ingest_seconds": round(bank.ingest_seconds, 2),
                "median_search_ms": median_ms, "modes": per_mode,
            }
        return out


def metric_names(k: int) -> tuple[str, ...]:
    return ("R@1", f"R@{k}", f"AllR@{k}")


def _means(rows: Sequence[JournalQuestionResult], names: Sequence[str]) -> dict[str, float]:
    means: dict[str, float] = {"n": len(rows)}
    for name in names:
        means[name] = sum(r.metrics[name] for r in rows) / len(rows) if rows else float("nan")
    return means


def score(retrieved: Sequence[Sequence[str]], evidence: set[str], k: int) -> dict[str, float]:
    """R@1, R@k and all-evidence R@k of one ranked list of source-turn id lists."""
    turns = [set(t) for t in retrieved]
    return {
        "R@1": recall_at_k(turns, evidence, 1),
        f"R@{k}": recall_at_k(turns, evidence, k),
        f"AllR@{k}": all_evidence_recall_at_k(turns, evidence, k),
    }


def run_journal_eval(
    sizes: Sequence[int | JournalSpec] = DEFAULT_YEARS,
    embedder: Embedder | str | Path | None = None,
    *,
    seed: int = DEFAULT_SEED,
    per_style: int = DEFAULT_PER_STYLE,
    modes: Sequence[str] = ("ramem", "baseline"),
    k: int = 10,
    bank_dir: Path | None = None,
    tuning: SearchTuning = DEFAULT_TUNING,
    progress: Callable[[str], None] | None = None,
) -> JournalEvalResult:
    """Generate each journal, ingest it into a fresh bank, ask every question in every mode.

    ``sizes`` are years (with ``seed`` and ``per_style``) or full specs. Banks live in a
    temporary folder, or in ``bank_dir`` (kept, with each journal's JSONL, for inspection with
    ``ramem --db``; a second run reuses them and its ingest adds nothing).
    """
    if k < 1:
        raise ValueError("k must be at least 1")
    started = time.perf_counter()
    specs = [s if isinstance(s, JournalSpec) else JournalSpec(years=s, seed=seed,
                                                             questions_per_style=per_style)
             for s in sizes]
    banks: list[JournalBank] = []
    results: list[JournalQuestionResult] = []
    embedder_name = "none (BM25 only)"
    say = progress or (lambda _message: None)
    with bank_folder(bank_dir) as folder:
        for spec in specs:
            journal = generate_journal(spec)
            say(f"{spec.label}: {len(journal.entries)} entries, {len(journal.questions)} "
                "questions; building the bank")
            stem = f"journal-{spec.label}-seed{spec.seed}"
            source = journal.write_jsonl(Path(folder) / f"{stem}.jsonl")
            tag = "bm25" if embedder is None else "dense"
            with Memory.open(Path(folder) / f"{stem}-{tag}.db", embedder=embedder,
                             country=JOURNAL_COUNTRY) as memory:
                if memory.embedder is not None:
                    embedder_name = memory.embedder.name
                tick = time.perf_counter()
                memory.ingest(source)
                ingest_seconds = time.perf_counter() - tick
                for question in journal.questions:
                    results.extend(_search(memory, spec.label, question, modes, k, tuning))
            banks.append(JournalBank(
                label=spec.label, start=spec.start.isoformat(), end=spec.end.isoformat(),
                entries=len(journal.entries),
                late_entries=sum(1 for e in journal.entries if e.late_days),
                questions=len(journal.questions), ingest_seconds=ingest_seconds))
            say(f"{spec.label}: done (ingest {ingest_seconds:.1f}s)")
    return JournalEvalResult(modes=tuple(modes), k=k, seed=seed, embedder=embedder_name,
                             banks=banks, results=results,
                             seconds=time.perf_counter() - started)


def _search(memory: Memory, size: str, question: JournalQuestion, modes: Sequence[str],
            k: int, tuning: SearchTuning) -> Iterator[JournalQuestionResult]:
    evidence = set(question.evidence)
    for mode in modes:
        tick = time.perf_counter()
        response = tuned_search(memory, question.question, k=k, mode=mode, tuning=tuning,
                                as_of=question.as_of)
        ms = (time.perf_counter() - tick) * 1000
        turns = [c.memory.source_turns for c in response.results[:k]]
        yield JournalQuestionResult(
            size=size, question_id=question.id, style=question.style, kind=question.kind,
            question=question.question, as_of=question.as_of,
            asked_days=[question.first_day.isoformat(), question.last_day.isoformat()],
            mode=mode, evidence=list(question.evidence),
            retrieved=[{"memory_id": c.memory.id, "source_turns": c.memory.source_turns,
                        "list": c.list_name, "rank": rank}
                       for rank, c in enumerate(response.results[:k], 1)],
            first_hit_rank=first_hit_rank([set(t) for t in turns], evidence),
            ms=round(ms, 2), metrics=score(turns, evidence, k),
        )


def write_journal_jsonl(result: JournalEvalResult, out: Path) -> None:
    """One JSON line per question and mode (question, as_of, evidence, retrieved, metrics)."""
    with Path(out).open("w", encoding="utf-8") as handle:
        for row in result.results:
            handle.write(json.dumps(row.jsonl_row(), ensure_ascii=False) + "\n")


def format_journal_table(result: JournalEvalResult) -> str:
    """One block per journal size (a line about its bank, then a row per style and overall),
    modes side by side."""
    summary = result.summary()
    names, modes = result.metric_names, result.modes
    widths = [max(len(f"{metric} {mode}"), 6) for metric in names for mode in modes]
    header = f"{'size':<6}{'group':<14}{'n':>5}  " + "  ".join(
        f"{metric + ' ' + mode:>{w}}"
        for (metric, mode), w in zip(((m, o) for m in names for o in modes), widths,
                                     strict=True))
    lines = [header, "-" * len(header)]
    for label, block in summary.items():
        search_ms = " · ".join(f"{mode} {ms:.1f} ms" for mode, ms in
                               block["median_search_ms"].items())
        lines.append(f"{label}: {block['start']} to {block['end']} · {block['entries']} entries "
                     f"({block['late_entries']} written late) · ingest "
                     f"{block['ingest_seconds']:.1f}s · median search {search_ms}")
        for group in (*STYLES, "overall"):
            n = int(block["modes"][modes[0]][group]["n"])
            cells = []
            for (metric, mode), width in zip(((m, o) for m in names for o in modes), widths,
                                             strict=True):
                value = block["modes"][mode][group][metric]
                cells.append(f"{value:>{width}.3f}" if n else f"{'-':>{width}}")
            lines.append(f"{label:<6}{group:<14}{n:>5}  " + "  ".join(cells))
    return "\n".join(lines)
