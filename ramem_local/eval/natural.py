"""The natural journal benchmark: a journal written the way people write one, asked the way
people ask (issue 48; ``ramem eval journal --natural``).

The classic journal (``eval.journal``) writes every entry from a few templates and asks in
the words the engine was taught. This one separates *what happened* from *how it is worded*:

- **the world** (seeded, the same for every phrasebook): five or ten years of days with six
  recurring activities (:data:`DETAILS`: hikes, meals cooked, films, books, repairs,
  concerts), friends met every few weeks, two trips a year to a city (plans one to four weeks
  before, the days there, afterthoughts weeks after), occasions (Mum's birthday dinner and my
  own birthday every year, a funeral, a move, an operation, a new job, friends' weddings),
  entries that *name* an activity's detail without doing it (a plan, gear bought, a friend
  quoting a film), news of friends not met, filler, and an assistant chat two to four times a
  month (questions and requests about the same films, dishes and trips);
- **the words**: a :class:`~ramem_local.eval.phrasebook.Phrasebook` writes every entry and
  every question. ``phrasebook_dev`` is the one the engine is tuned on; ``phrasebook_heldout``
  was written separately and is only measured (``--split held-out``). The time phrases
  (``{cue}``) and spans (``{window}``) the benchmark writes itself are split the same way
  (:data:`CUE_FORMS`, :data:`WINDOW_FORMS`).

Question styles (:data:`NATURAL_STYLES`), each with its evidence (journal entries only; chat
turns, mentions and plans are never evidence):

================ ========================================================== =================
style            example (dev words) and evidence                           as_of
================ ========================================================== =================
last_first       When did I last walk Fox Valley? — the latest (earliest)    a day after its
                 entry doing the activity with that detail; mentions of     second occurrence
                 the detail stand around it                                 (or the end)
order_event      What was the last film I saw before my trip to Oslo? /     the journal's end
                 After the move, which dish did I cook first? — the latest
                 occurrence before the event's first day (the earliest
                 after its last day)
trip             What did I eat on the Oslo trip? — the trip's meals (its   the journal's end
                 meetings, its sights)
window           What did I cook in the seven days after the move? — the    the journal's end
                 activity's entries in that span
count            How often did I go hiking in March 2024? — every entry     as the cue needs
                 doing the activity in the range; count exact when the
                 response's count equals their number
people           When did Lena and I last get together? — the entries of    a random day
                 the latest day I was with that friend (a meeting, or an
                 activity that names them as company; not a message,
                 a call or a remark that names them)
day_of_event     What did I get up to the day after Mum's seventieth? —     the journal's end
                 every journal entry of that day
================ ========================================================== =================

Range questions are only asked when no entry of the asked activity lies within a day of the
range's ends (a reading one day off would otherwise decide the score) and when they have 1 to
:data:`~ramem_local.eval.journal.MAX_EVIDENCE` evidence entries.
"""

from __future__ import annotations

import random
import string
import time as _time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime, time, timedelta
from pathlib import Path

from .. import Embedder, Memory, SearchDefaults
from ..config import NO_DEFAULT_EMBEDDER
from ..render import MONTH_NAMES
from .journal import (
    ASKED_AT,
    CHAT_CONVERSATION,
    JOURNAL_COUNTRY,
    JOURNAL_END,
    MAX_EVIDENCE,
    SPEAKER,
    Entry,
    JournalBank,
    JournalEvalResult,
    JournalQuestion,
    JournalQuestionResult,
    search_question,
)
from .phrasebook import KIND_NAMES, Phrasebook
from .retrieval import bank_folder
from .tuning import DEFAULT_TUNING, SearchTuning

NATURAL_STYLES = ("last_first", "order_event", "trip", "window", "count", "people",
                  "day_of_event")
SPLITS = ("dev", "held-out")
ASSISTANT = "assistant"
TRIP = "trip"
MEETING = "meeting"
MENTION = "mention"
OCCASION = "occasion"
FILLER = "filler"
DEFAULT_NATURAL_YEARS = (5, 10)

DETAILS: dict[str, tuple[str, ...]] = {
    "hike": ("the ridge", "Fox Valley", "Harrow Fell", "the coast path", "Blackmoor",
             "Kestrel Edge", "Windy Gap", "the old drovers' road", "Cairn Hill", "Larch Wood",
             "the river gorge", "Saddle Crag"),
    "meal": ("lentil soup", "mushroom risotto", "shakshuka", "pad thai", "a lemon tart",
             "fish pie", "dal", "banana bread", "chilli con carne", "gnocchi", "pho",
             "a Sunday roast"),
    "film": ("Night Harbor", "The Long Drive", "Blue Meridian", "Small Hours",
             "Paper Moon Rising", "The Ninth Room", "Glass Mountain", "Red Signal",
             "The Ferryman", "Distant Lights", "Cold Current", "The Orchard Thief"),
    "book": ("The Glass Harbor", "Salt and Iron", "The Quiet Orchard", "Paper Birds",
             "The Silent Engine", "North of the Fog", "The Copper Key", "A Map of Small Rivers",
             "The Last Lighthouse", "Letters from Nowhere", "Under the Linden Tree",
             "The Cartographer's Daughter"),
    "repair": ("the garden gate", "the bike chain", "the kitchen tap", "the washing machine",
               "a wobbly chair", "the laptop hinge", "the shed door", "the toaster",
               "the porch light", "the leaking radiator", "the bathroom fan", "the old radio"),
    "concert": ("the Velvet Tides", "Northbound Choir", "the Hollow Pines", "Luna Brass",
                "the Static Hearts", "Orchid Quartet", "the Lantern Folk", "the Paper Owls",
                "Echo Valley Band"),
}
# Days between two occurrences of a kind, and the chance it moves to a weekend.
RECURRENCE: dict[str, tuple[tuple[int, int], float]] = {
    "hike": ((8, 21), 0.7), "meal": ((6, 16), 0.2), "film": ((8, 24), 0.3),
    "book": ((14, 35), 0.0), "repair": ((14, 40), 0.3), "concert": ((21, 50), 0.5),
}
FRIENDS = ("Lena", "Marek", "Priya", "Tom", "Sofia", "Jonah", "Aisha", "Callum")
PLACES = ("the market", "the library", "the park", "the bakery", "the station", "the canal",
          "the high street", "the corner cafe")
CITIES = ("Oslo", "Porto", "Vienna", "Krakow", "Seville", "Edinburgh", "Bruges", "Tallinn",
          "Naples", "Lyon", "Bergen", "Ghent", "Valencia", "Ljubljana", "Riga", "Bologna",
          "Copenhagen", "Galway", "Salzburg", "Bordeaux", "Gdansk", "Dubrovnik", "Lucerne",
          "Stockholm")
TRIP_FOODS = ("the local fish soup", "grilled sardines", "a huge plate of dumplings",
              "waffles from a street stall", "a seafood platter", "a bowl of goulash",
              "fresh pastries", "a tasting menu", "smoked herring", "a wood-fired pizza")
LOCALS = ("Ingrid, a potter", "Mateus, our guide", "Kasia, an old school friend",
          "a retired sailor called Bram", "Elif, who runs a bookshop",
          "a street musician named Tomas", "Henrik, a friend of a friend",
          "Rosa, the landlady")
SIGHTS = ("the old fortress", "the cathedral", "the harbour museum", "the botanical garden",
          "the city walls", "the modern art gallery", "the old market hall", "the castle")
RELATIVES = ("Gran", "Uncle Karl", "Aunt Rosa", "Grandpa Theo")
STREETS = ("Mill Lane", "Orchard Road", "Canal Street", "Chapel Row", "Station Road",
           "Elm Terrace")
BODY_PARTS = ("knee", "shoulder", "hip", "wrist")
COMPANIES = ("Kestrel Media", "Orbis Freight", "Lumen Works", "Fjord Analytics",
             "Pinecone Labs", "Harrow and Vale")
ORDINAL_WORDS = {
    1: "first", 2: "second", 3: "third", 4: "fourth", 5: "fifth", 6: "sixth", 7: "seventh",
    8: "eighth", 9: "ninth", 10: "tenth", 11: "eleventh", 12: "twelfth", 13: "thirteenth",
    14: "fourteenth", 15: "fifteenth", 16: "sixteenth", 17: "seventeenth", 18: "eighteenth",
    19: "nineteenth"}
TENS = {2: "twent", 3: "thirt", 4: "fort", 5: "fift", 6: "sixt", 7: "sevent", 8: "eight",
        9: "ninet"}
UNITS = ("", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine")
NUMBER_WORDS = {2: "two", 3: "three", 4: "four", 5: "five", 6: "six", 7: "seven",
                8: "eight", 9: "nine", 10: "ten"}

ASSISTANT_REPLIES = (
    "Here are a few thoughts on {x}: most people enjoy it, and it is worth planning ahead.",
    "Good question about {x}. Start simple, give yourself time, and see how it goes.",
    "For {x}, I would look at recent reviews and pick what suits your week.",
)


def ordinal_word(n: int) -> str:
    """"seventieth" for 70, "forty-first" for 41 (1 to 99)."""
    if n in ORDINAL_WORDS:
        return ORDINAL_WORDS[n]
    tens, units = divmod(n, 10)
    if units == 0:
        return TENS[tens] + "ieth"
    return f"{TENS[tens]}y-{ORDINAL_WORDS[units]}"


def ordinal_digits(n: int) -> str:
    """"70th", "41st", "12th"."""
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


@dataclass(frozen=True)
class NaturalSpec:
    """Which natural journal: ``years`` ending on ``end``, the world drawn from ``seed``,
    worded by the ``split``'s phrasebook ("dev" or "held-out")."""

    years: int = 5
    seed: int = 7
    split: str = "dev"
    questions_per_style: int = 40
    end: date = JOURNAL_END

    def __post_init__(self) -> None:
        if self.split not in SPLITS:
            raise ValueError(f"unknown split {self.split!r}; one of {', '.join(SPLITS)}")
        if self.years < 1 or self.questions_per_style < 0:
            raise ValueError("years must be ≥ 1 and questions_per_style ≥ 0")

    @property
    def start(self) -> date:
        return self.end.replace(year=self.end.year - self.years) + timedelta(days=1)

    @property
    def label(self) -> str:
        return f"{self.years}y"


def phrasebook_of(split: str) -> Phrasebook:
    """The phrasebook of a split: dev (tuned on) or held-out (only measured)."""
    if split == "dev":
        from .phrasebook_dev import DEV
        return DEV
    if split == "held-out":
        from .phrasebook_heldout import HELD_OUT
        return HELD_OUT
    raise ValueError(f"unknown split {split!r}; one of {', '.join(SPLITS)}")


# ---------------------------------------------------------------------------------------------
# The world: what happens on which day (no words yet)
# ---------------------------------------------------------------------------------------------


@dataclass
class Happening:
    """One thing that happens on a day, before it is worded: ``what`` is an activity kind,
    MEETING, MENTION (of ``kind``'s ``detail``, or of a friend with kind "friend"), TRIP (its
    ``part``: plan, arrival, meal, meeting, sight, departure, afterthought), OCCASION (its
    ``kind`` is the occasion key) or FILLER; ``slots`` fill the phrasebook's template."""

    day: date
    what: str
    kind: str = ""
    detail: str = ""
    part: str = ""
    slots: dict[str, str] = field(default_factory=dict)
    trip: int | None = None  # which trip, for TRIP parts


@dataclass(frozen=True)
class Trip:
    number: int
    city: str
    first: date
    last: date


@dataclass(frozen=True)
class Occasion:
    key: str
    day: date
    slots: dict[str, str]


@dataclass
class World:
    days: list[date]
    happenings: list[Happening]
    trips: list[Trip]
    occasions: list[Occasion]
    chat_days: list[tuple[date, str, str]]  # (day, kind or TRIP, detail or city)


def _draw_world(spec: NaturalSpec) -> World:
    rng = random.Random(f"natural/{spec.seed}/{spec.years}")
    start, end = spec.start, spec.end
    days = [start + timedelta(days=i) for i in range((end - start).days + 1)]
    trips = _draw_trips(rng, start, end)
    away = {trip.first + timedelta(days=i): trip for trip in trips
            for i in range((trip.last - trip.first).days + 1)}
    occasions = _draw_occasions(rng, start, end, away)
    taken: dict[date, int] = {}
    happenings: list[Happening] = []

    def add(happening: Happening) -> None:
        happenings.append(happening)
        taken[happening.day] = taken.get(happening.day, 0) + 1

    for trip in trips:
        for happening in _trip_happenings(rng, trip):
            add(happening)
    for occasion in occasions:
        add(Happening(day=occasion.day, what=OCCASION, kind=occasion.key,
                      slots=dict(occasion.slots)))
    for kind in KIND_NAMES:
        (low, high), weekend_bias = RECURRENCE[kind]
        day = start + timedelta(days=rng.randint(0, high))
        while day <= end:
            if day.weekday() < 5 and rng.random() < weekend_bias:
                day += timedelta(days=5 - day.weekday())
            if day <= end and day not in away and taken.get(day, 0) < 3:
                add(Happening(day=day, what=kind, kind=kind,
                              detail=rng.choice(DETAILS[kind]),
                              slots={"p": rng.choice(FRIENDS), "p2": rng.choice(FRIENDS),
                                     "place": rng.choice(PLACES)}))
            day += timedelta(days=rng.randint(low, high))
    for friend in FRIENDS:
        day = start + timedelta(days=rng.randint(0, 30))
        while day <= end:
            if day not in away and taken.get(day, 0) < 3:
                add(Happening(day=day, what=MEETING, kind="friend", detail=friend,
                              slots={"p": friend, "place": rng.choice(PLACES)}))
            day += timedelta(days=rng.randint(14, 45))
    # Mentions: an activity's detail named without doing it, a friend named without meeting.
    for day in days:
        if day in away or taken.get(day, 0) >= 3:
            continue
        if rng.random() < 0.22:
            kind = rng.choice(KIND_NAMES)
            add(Happening(day=day, what=MENTION, kind=kind, detail=rng.choice(DETAILS[kind]),
                          slots={"p": rng.choice(FRIENDS), "place": rng.choice(PLACES)}))
        elif rng.random() < 0.08:
            friend = rng.choice(FRIENDS)
            add(Happening(day=day, what=MENTION, kind="friend", detail=friend,
                          slots={"p": friend}))
    for day in days:
        if day in away:
            continue
        wanted = rng.choice((1, 1, 2, 2, 3))
        while taken.get(day, 0) < wanted:
            add(Happening(day=day, what=FILLER,
                          slots={"p": rng.choice(FRIENDS), "place": rng.choice(PLACES)}))
    chat_days = _draw_chat_days(rng, days, trips, away)
    happenings.sort(key=lambda h: h.day)
    return World(days=days, happenings=happenings, trips=trips, occasions=occasions,
                 chat_days=chat_days)


def _draw_trips(rng: random.Random, start: date, end: date) -> list[Trip]:
    """Two trips a year, three to six days each, each to a city of its own."""
    cities = list(CITIES)
    rng.shuffle(cities)
    trips: list[Trip] = []
    year_start = start
    while year_start < end:
        for half in (0, 1):
            offset = rng.randint(half * 182 + 35, half * 182 + 150)
            first = year_start + timedelta(days=offset)
            last = first + timedelta(days=rng.randint(2, 5))
            if last + timedelta(days=3) <= end and cities:
                trips.append(Trip(number=len(trips), city=cities.pop(), first=first,
                                  last=last))
        year_start = year_start.replace(year=year_start.year + 1)
    return trips


def _draw_occasions(rng: random.Random, start: date, end: date,
                    away: dict[date, Trip]) -> list[Occasion]:
    """Mum's birthday and mine every year, each once-only occasion once (two weddings)."""

    def free(day: date) -> bool:
        return all(day + timedelta(days=d) not in away for d in range(-2, 3))

    occasions: list[Occasion] = []
    mum_day = (rng.randint(1, 12), rng.randint(1, 28))
    my_day = (rng.randint(1, 12), rng.randint(1, 28))
    mum_age, my_age = rng.randint(62, 68), rng.randint(31, 37)
    for year in range(start.year, end.year + 1):
        for key, (month, day_of_month), age in (("mum_birthday", mum_day, mum_age),
                                                 ("my_birthday", my_day, my_age)):
            day = date(year, month, day_of_month)
            if start <= day <= end and free(day):
                n = age + year - start.year
                occasions.append(Occasion(key, day, {"nth": ordinal_digits(n),
                                                     "nth_word": ordinal_word(n)}))
    once = [("funeral", {"who": rng.choice(RELATIVES)}),
            ("move", {"street": rng.choice(STREETS)}),
            ("operation", {"part": rng.choice(BODY_PARTS)}),
            ("new_job", {"company": rng.choice(COMPANIES)})]
    friends = list(FRIENDS)
    rng.shuffle(friends)
    once += [("wedding", {"p": friends.pop()}) for _ in range(max(1, (end.year - start.year) // 3))]
    used = {o.day for o in occasions}
    for key, slots in once:
        for _ in range(100):
            day = start + timedelta(days=rng.randint(20, (end - start).days - 20))
            if free(day) and all(abs((day - other).days) > 14 for other in used):
                occasions.append(Occasion(key, day, slots))
                used.add(day)
                break
    return sorted(occasions, key=lambda o: o.day)


def _trip_happenings(rng: random.Random, trip: Trip) -> list[Happening]:
    def part(day: date, name: str, **slots: str) -> Happening:
        return Happening(day=day, what=TRIP, part=name, trip=trip.number,
                         slots={"city": trip.city, **slots})

    parts = [part(trip.first - timedelta(days=rng.randint(7, 28)), "plan")]
    if rng.random() < 0.6:
        parts.append(part(trip.first - timedelta(days=rng.randint(2, 6)), "plan"))
    parts.append(part(trip.first, "arrival"))
    day = trip.first
    while day <= trip.last:
        choices = rng.sample(("meal", "meeting", "sight"), rng.randint(1, 2))
        for name in choices:
            parts.append(part(day, name, food=rng.choice(TRIP_FOODS),
                              local=rng.choice(LOCALS), sight=rng.choice(SIGHTS)))
        day += timedelta(days=1)
    parts.append(part(trip.last, "departure"))
    if rng.random() < 0.7:
        parts.append(part(trip.last + timedelta(days=rng.randint(7, 28)), "afterthought"))
    return parts


def _draw_chat_days(rng: random.Random, days: Sequence[date], trips: Sequence[Trip],
                    away: dict[date, Trip]) -> list[tuple[date, str, str]]:
    chats: list[tuple[date, str, str]] = []
    for day in days:
        if day not in away and rng.random() < 0.09:
            kind = rng.choice(KIND_NAMES)
            chats.append((day, kind, rng.choice(DETAILS[kind])))
    for trip in trips:
        chats.append((trip.first - timedelta(days=rng.randint(3, 12)), TRIP, trip.city))
    return sorted(chats)


# ---------------------------------------------------------------------------------------------
# The words
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class NaturalEntry(Entry):
    """A journal entry of the natural journal: ``kind`` is what happened (an activity kind,
    MEETING, MENTION, TRIP, OCCASION, FILLER); ``answer`` its detail (a friend for a meeting,
    the city for a trip part); ``part`` a trip part or the mentioned kind; ``trip`` which
    trip."""

    part: str = ""
    trip: int | None = None
    # The friends I was with (named in the entry's doing or meeting words, not in a remark).
    with_people: tuple[str, ...] = ()


@dataclass(frozen=True)
class ChatLine:
    id: str
    speaker: str
    text: str
    written_at: datetime

    def jsonl_row(self) -> dict:
        return {"speaker": self.speaker, "text": self.text,
                "timestamp": self.written_at.isoformat(),
                "session": self.written_at.date().isoformat(), "id": self.id,
                "conversation": CHAT_CONVERSATION}


@dataclass(frozen=True)
class NaturalJournal:
    spec: NaturalSpec
    world: World
    entries: tuple[NaturalEntry, ...]
    chat: tuple[ChatLine, ...]
    questions: tuple[JournalQuestion, ...]

    def write_jsonl(self, path: Path) -> Path:
        import json

        with Path(path).open("w", encoding="utf-8") as handle:
            rows: list[NaturalEntry | ChatLine] = [*self.entries, *self.chat]
            for row in rows:
                handle.write(json.dumps(row.jsonl_row(), ensure_ascii=False) + "\n")
        return Path(path)


def generate_natural_journal(spec: NaturalSpec) -> NaturalJournal:
    """The world of ``spec`` worded by its split's phrasebook, and its questions; the same
    spec gives the same journal."""
    book = phrasebook_of(spec.split)
    world = _draw_world(spec)
    words = random.Random(f"natural-words/{spec.seed}/{spec.years}/{spec.split}")
    entries = _write_entries(world, book, words)
    chat = _write_chat(world, book, words)
    asker = _Asker(spec, world, entries, book,
                   random.Random(f"natural-questions/{spec.seed}/{spec.years}/{spec.split}"))
    questions = asker.ask()
    return NaturalJournal(spec=spec, world=world, entries=tuple(entries), chat=tuple(chat),
                          questions=tuple(questions))


def _fill(template: str, slots: dict[str, str]) -> str:
    text = template.format(**slots)
    return text[0].upper() + text[1:] if text[:1].islower() and template[:1] == "{" else text


def _write_entries(world: World, book: Phrasebook,
                   rng: random.Random) -> list[NaturalEntry]:
    entries: list[NaturalEntry] = []
    by_day: dict[date, list[Happening]] = {}
    for happening in world.happenings:
        by_day.setdefault(happening.day, []).append(happening)
    for day in sorted(by_day):
        happenings = by_day[day]
        rng.shuffle(happenings)
        minutes = sorted(rng.sample(range(7 * 60, 23 * 60), len(happenings)))
        if any(h.what == TRIP and h.part == "arrival" for h in happenings):
            happenings.sort(key=lambda h: (h.part != "arrival", h.part == "departure"))
        for happening, minute in zip(happenings, minutes, strict=True):
            text, companions = _word(happening, book, rng)
            written = datetime.combine(day, time(minute // 60, minute % 60))
            entries.append(NaturalEntry(
                id=f"n{len(entries)}", text=text, written_at=written, event_day=day,
                kind=happening.what, answer=happening.detail or happening.slots.get("city", ""),
                late_days=0, part=happening.part or happening.kind, trip=happening.trip,
                with_people=companions))
    return entries


def _word(happening: Happening, book: Phrasebook,
          rng: random.Random) -> tuple[str, tuple[str, ...]]:
    """The entry's text, and the friends it says I was with."""
    slots = dict(happening.slots)
    slots.setdefault("p", rng.choice(FRIENDS))
    slots.setdefault("p2", rng.choice(FRIENDS))
    slots.setdefault("place", rng.choice(PLACES))
    if happening.what in KIND_NAMES:
        template = rng.choice(book.kinds[happening.kind].doing)
        text = _fill(template, {**slots, "x": happening.detail})
        if rng.random() < 0.35:
            text = _with_remark(text, rng.choice(book.remarks).format(**slots))
        return text, _companions(template, slots)
    if happening.what == MEETING:
        template = rng.choice(book.people.meetings)
        return _fill(template, slots), _companions(template, slots)
    return _word_alone(happening, book, rng, slots), ()


def _companions(template: str, slots: dict[str, str]) -> tuple[str, ...]:
    used = {name for _, name, _, _ in string.Formatter().parse(template) if name}
    return tuple(dict.fromkeys(slots[name] for name in ("p", "p2") if name in used))


def _word_alone(happening: Happening, book: Phrasebook, rng: random.Random,
                slots: dict[str, str]) -> str:
    if happening.what == MENTION and happening.kind == "friend":
        return _fill(rng.choice(book.people.mentions), slots)
    if happening.what == MENTION:
        return _fill(rng.choice(book.kinds[happening.kind].mentions),
                     {**slots, "x": happening.detail})
    if happening.what == TRIP:
        field_name = {"plan": "plans", "arrival": "arrival", "meal": "meals",
                      "meeting": "meetings", "sight": "sights", "departure": "departure",
                      "afterthought": "afterthoughts"}[happening.part]
        return _fill(rng.choice(getattr(book.trip, field_name)), slots)
    if happening.what == OCCASION:
        return _fill(rng.choice(book.occasions[happening.kind].entries), slots)
    text = _fill(rng.choice(book.filler), slots)
    if rng.random() < 0.3:
        text = _with_remark(text, rng.choice(book.remarks).format(**slots))
    return text


def _with_remark(text: str, remark: str) -> str:
    stem = text.rstrip()
    if stem.endswith((".", "!", "?")):
        return f"{stem} {remark[0].upper()}{remark[1:]}" + ("" if remark.endswith((".", "!"))
                                                              else ".")
    return f"{stem}; {remark}"


def _write_chat(world: World, book: Phrasebook, rng: random.Random) -> list[ChatLine]:
    lines: list[ChatLine] = []
    for day, kind, detail in world.chat_days:
        minute = rng.randint(8 * 60, 22 * 60)
        asked_at = datetime.combine(day, time(minute // 60, minute % 60))
        if kind == TRIP:
            request = _fill(rng.choice(book.trip.requests), {"city": detail})
        else:
            request = _fill(rng.choice(book.kinds[kind].requests), {"x": detail})
        lines.append(ChatLine(f"c{len(lines)}", SPEAKER, request, asked_at))
        reply = rng.choice(ASSISTANT_REPLIES).format(x=detail)
        lines.append(ChatLine(f"c{len(lines)}", ASSISTANT, reply,
                              asked_at + timedelta(minutes=1)))
    return lines


# ---------------------------------------------------------------------------------------------
# The questions
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class CueForm:
    """A time phrase a count question ends with: its words for a reference day, and its
    days [first, last] (None when it cannot be said of that day)."""

    name: str
    split: str
    make: Callable[[date, random.Random], tuple[str, date, date] | None]


def _month_cue(as_of: date, rng: random.Random) -> tuple[str, date, date] | None:
    first = (as_of.replace(day=1) - timedelta(days=rng.randint(40, 1400))).replace(day=1)
    last = _month_end(first)
    return f"in {MONTH_NAMES[first.month - 1]} {first.year}", first, last


def _during_month_cue(as_of: date, rng: random.Random) -> tuple[str, date, date] | None:
    found = _month_cue(as_of, rng)
    assert found is not None
    _, first, last = found
    return f"during {MONTH_NAMES[first.month - 1]} {first.year}", first, last


def _since_month_cue(as_of: date, rng: random.Random) -> tuple[str, date, date] | None:
    first = (as_of - timedelta(days=rng.randint(21, 70))).replace(day=1)
    return f"since {MONTH_NAMES[first.month - 1]}", first, as_of


def _so_far_this_year_cue(as_of: date, rng: random.Random) -> tuple[str, date, date] | None:
    if as_of.month > 3:
        return None
    return "so far this year", as_of.replace(month=1, day=1), as_of


def _last_four_weeks_cue(as_of: date, rng: random.Random) -> tuple[str, date, date] | None:
    # the 28 days before the day it is asked (the engine's "the past N units", today
    # excluded; a question is only asked when no entry of its kind is on either edge)
    return "over the last four weeks", as_of - timedelta(days=28), as_of - timedelta(days=1)


def _this_month_cue(as_of: date, rng: random.Random) -> tuple[str, date, date] | None:
    if as_of.day < 12:
        return None
    return "this month", as_of.replace(day=1), as_of


CUE_FORMS = (
    CueForm("month", "dev", _month_cue),
    CueForm("since_month", "dev", _since_month_cue),
    CueForm("so_far_this_year", "dev", _so_far_this_year_cue),
    CueForm("during_month", "held-out", _during_month_cue),
    CueForm("last_four_weeks", "held-out", _last_four_weeks_cue),
    CueForm("this_month", "held-out", _this_month_cue),
)


@dataclass(frozen=True)
class WindowForm:
    """A span next to an occasion: its words around the occasion's name, and its days
    relative to the occasion's day."""

    name: str
    split: str
    make: Callable[[date, str, random.Random], tuple[str, date, date]]


def _days_after(day: date, event: str, rng: random.Random) -> tuple[str, date, date]:
    n = rng.randint(3, 10)
    return (f"in the {NUMBER_WORDS[n]} days after {event}", day + timedelta(days=1),
            day + timedelta(days=n))


def _weekend_after(day: date, event: str, rng: random.Random) -> tuple[str, date, date]:
    saturday = day + timedelta(days=(5 - day.weekday()) % 7 or 7)
    return f"the weekend after {event}", saturday, saturday + timedelta(days=1)


def _week_before(day: date, event: str, rng: random.Random) -> tuple[str, date, date]:
    return f"in the week before {event}", day - timedelta(days=7), day - timedelta(days=1)


def _fortnight_after(day: date, event: str, rng: random.Random) -> tuple[str, date, date]:
    return f"during the fortnight after {event}", day + timedelta(days=1), \
        day + timedelta(days=14)


def _weeks_before(day: date, event: str, rng: random.Random) -> tuple[str, date, date]:
    n = rng.randint(2, 4)
    return (f"in the {NUMBER_WORDS[n]} weeks before {event}", day - timedelta(days=7 * n),
            day - timedelta(days=1))


def _weekend_before(day: date, event: str, rng: random.Random) -> tuple[str, date, date]:
    sunday = day - timedelta(days=(day.weekday() + 1) % 7 or 7)
    return f"the weekend before {event}", sunday - timedelta(days=1), sunday


WINDOW_FORMS = (
    WindowForm("days_after", "dev", _days_after),
    WindowForm("weekend_after", "dev", _weekend_after),
    WindowForm("week_before", "dev", _week_before),
    WindowForm("fortnight_after", "held-out", _fortnight_after),
    WindowForm("weeks_before", "held-out", _weeks_before),
    WindowForm("weekend_before", "held-out", _weekend_before),
)


class _Asker:
    def __init__(self, spec: NaturalSpec, world: World, entries: Sequence[NaturalEntry],
                 book: Phrasebook, rng: random.Random) -> None:
        self.spec, self.world, self.entries, self.book, self.rng = spec, world, entries, book, rng
        self.doing = {kind: [e for e in entries if e.kind == kind] for kind in KIND_NAMES}
        self.questions: list[JournalQuestion] = []

    def ask(self) -> list[JournalQuestion]:
        for style in NATURAL_STYLES:
            getattr(self, style)()
        return self.questions

    # -- helpers ------------------------------------------------------------------------------

    def _add(self, style: str, kind: str | None, text: str, as_of: date, first: date,
             last: date, evidence: Sequence[NaturalEntry], count: bool = False) -> None:
        self.questions.append(JournalQuestion(
            id=f"{self.spec.label}-{style}-{len(self.questions)}", style=style, kind=kind,
            question=text, as_of=as_of.isoformat() + ASKED_AT, first_day=first, last_day=last,
            evidence=tuple(e.id for e in evidence),
            answer="; ".join(e.answer for e in evidence),
            expected_count=len(evidence) if count else None))

    def _draw(self, style: str, draw: Callable[[], bool]) -> None:
        wanted = self.spec.questions_per_style
        asked, tries = 0, 0
        while asked < wanted and tries < wanted * 40:
            tries += 1
            asked += bool(draw())
        del style

    def _event_name(self, occasion: Occasion) -> str:
        names = self.book.occasions[occasion.key].names
        return _fill(self.rng.choice(names), occasion.slots).removesuffix(".")

    def _trip_name(self, trip: Trip) -> str:
        return self.rng.choice(self.book.trip_names).format(city=trip.city)

    def _clean_edges(self, kind_entries: Sequence[NaturalEntry], first: date,
                     last: date) -> bool:
        """No entry of the kind a day outside the range's ends (a reading one day off)."""
        return not any(e.event_day in (first - timedelta(days=1), last + timedelta(days=1))
                       for e in kind_entries)

    # -- styles -------------------------------------------------------------------------------

    def last_first(self) -> None:
        by_detail: dict[tuple[str, str], list[NaturalEntry]] = {}
        for kind in KIND_NAMES:
            for entry in self.doing[kind]:
                by_detail.setdefault((kind, entry.answer), []).append(entry)
        repeated = sorted(key for key, found in by_detail.items() if len(found) >= 2)

        def draw() -> bool:
            kind, detail = self.rng.choice(repeated)
            found = by_detail[(kind, detail)]
            latest = self.rng.random() < 0.5
            if latest:
                as_of = self.rng.choice(found[1:]).event_day + timedelta(
                    days=self.rng.randint(0, 20))
                as_of = min(as_of, self.spec.end)
                done = [e for e in found if e.event_day <= as_of]
                answer = done[-1]
                template = self.rng.choice(self.book.kinds[kind].last)
            else:
                as_of = self.spec.end
                answer = found[0]
                template = self.rng.choice(self.book.kinds[kind].first)
            self._add("last_first", kind, _fill(template, {"x": detail}), as_of,
                      answer.event_day, answer.event_day, [answer])
            return True

        if repeated:
            self._draw("last_first", draw)

    def order_event(self) -> None:
        events: list[tuple[str, date, date]] = []  # (name, first day, last day)
        for occasion in self.world.occasions:
            events.append((f"occasion:{id(occasion)}", occasion.day, occasion.day))
        for trip in self.world.trips:
            events.append((f"trip:{trip.number}", trip.first, trip.last))
        occasions = {f"occasion:{id(o)}": o for o in self.world.occasions}
        trips = {f"trip:{t.number}": t for t in self.world.trips}

        def draw() -> bool:
            key, first, last = self.rng.choice(events)
            kind = self.rng.choice(KIND_NAMES)
            before = self.rng.random() < 0.5
            done = self.doing[kind]
            if any(first <= e.event_day <= last for e in done):
                return False  # done on the event's own day: before or after it, who knows
            if before:
                found = [e for e in done if e.event_day < first]
                if not found or (first - found[-1].event_day).days > 120:
                    return False
                answer = found[-1]
                templates = self.book.kinds[kind].last_before
            else:
                found = [e for e in done if e.event_day > last]
                if not found or (found[0].event_day - last).days > 120:
                    return False
                answer = found[0]
                templates = self.book.kinds[kind].first_after
            name = (self._event_name(occasions[key]) if key in occasions
                    else self._trip_name(trips[key]))
            self._add("order_event", kind, self.rng.choice(templates).format(event=name),
                      self.spec.end, answer.event_day, answer.event_day, [answer])
            return True

        self._draw("order_event", draw)

    def trip(self) -> None:
        parts = {"ate": "meal", "met": "meeting", "did": "sight"}

        def draw() -> bool:
            trip = self.rng.choice(self.world.trips)
            question = self.rng.choice(tuple(parts))
            evidence = [e for e in self.entries if e.kind == TRIP and e.trip == trip.number
                        and e.part == parts[question]]
            if not evidence or len(evidence) > MAX_EVIDENCE:
                return False
            template = self.rng.choice(getattr(self.book.trip, question))
            self._add("trip", None, _fill(template, {"city": trip.city}), self.spec.end,
                      trip.first, trip.last, evidence)
            return True

        if self.world.trips:
            self._draw("trip", draw)

    def window(self) -> None:
        forms = [f for f in WINDOW_FORMS if f.split == self.spec.split]
        occasions = [o for o in self.world.occasions
                     if self.spec.start + timedelta(days=40) <= o.day
                     <= self.spec.end - timedelta(days=30)]

        def draw() -> bool:
            occasion = self.rng.choice(occasions)
            kind = self.rng.choice(KIND_NAMES)
            form = self.rng.choice(forms)
            text, first, last = form.make(occasion.day, self._event_name(occasion), self.rng)
            evidence = [e for e in self.doing[kind] if first <= e.event_day <= last]
            if not evidence or len(evidence) > MAX_EVIDENCE or not self._clean_edges(
                    self.doing[kind], first, last):
                return False
            template = self.rng.choice(self.book.kinds[kind].in_window)
            self._add("window", kind, template.format(window=text), self.spec.end, first,
                      last, evidence)
            return True

        if occasions:
            self._draw("window", draw)

    def count(self) -> None:
        forms = [f for f in CUE_FORMS if f.split == self.spec.split]
        start, end = self.spec.start + timedelta(days=60), self.spec.end

        def draw() -> bool:
            kind = self.rng.choice(KIND_NAMES)
            as_of = start + timedelta(days=self.rng.randint(0, (end - start).days))
            if self.rng.random() < 0.3:
                as_of = end
            made = self.rng.choice(forms).make(as_of, self.rng)
            if made is None:
                return False
            cue, first, last = made
            if first < self.spec.start:
                return False
            evidence = [e for e in self.doing[kind] if first <= e.event_day <= last]
            if not evidence or len(evidence) > MAX_EVIDENCE or not self._clean_edges(
                    self.doing[kind], first, last):
                return False
            template = self.rng.choice(self.book.kinds[kind].count)
            self._add("count", kind, template.format(cue=cue), as_of, first, last, evidence,
                      count=True)
            return True

        self._draw("count", draw)

    def people(self) -> None:
        met = {friend: [e for e in self.entries if friend in e.with_people]
               for friend in FRIENDS}

        def draw() -> bool:
            friend = self.rng.choice(FRIENDS)
            found = met[friend]
            if len(found) < 2:
                return False
            as_of = min(self.rng.choice(found[1:]).event_day
                        + timedelta(days=self.rng.randint(0, 25)), self.spec.end)
            last_day = [e for e in found if e.event_day <= as_of][-1].event_day
            evidence = [e for e in found if e.event_day == last_day]
            template = self.rng.choice(self.book.people.last_seen)
            self._add("people", None, _fill(template, {"p": friend}), as_of, last_day,
                      last_day, evidence)
            return True

        self._draw("people", draw)

    def day_of_event(self) -> None:
        journal_days: dict[date, list[NaturalEntry]] = {}
        for entry in self.entries:
            journal_days.setdefault(entry.event_day, []).append(entry)

        def draw() -> bool:
            occasion = self.rng.choice(self.world.occasions)
            after = self.rng.random() < 0.5
            day = occasion.day + timedelta(days=1 if after else -1)
            evidence = journal_days.get(day, [])
            if not evidence or any(e.kind == TRIP for e in evidence):
                return False
            templates = self.book.day_after if after else self.book.day_before
            text = self.rng.choice(templates).format(event=self._event_name(occasion))
            self._add("day_of_event", None, text, self.spec.end, day, day, evidence)
            return True

        if self.world.occasions:
            self._draw("day_of_event", draw)


def _month_end(day: date) -> date:
    following = day.replace(day=28) + timedelta(days=4)
    return following - timedelta(days=following.day)


# ---------------------------------------------------------------------------------------------
# Evaluation
# ---------------------------------------------------------------------------------------------


def natural_bank_stem(spec: NaturalSpec) -> str:
    """The file name of a natural journal's JSONL and bank (without suffix)."""
    return f"natural-{spec.label}-seed{spec.seed}-{spec.split}"


def run_natural_eval(
    sizes: Sequence[int] = DEFAULT_NATURAL_YEARS,
    embedder: Embedder | str | Path | None = None,
    *,
    seed: int = 7,
    split: str = "dev",
    per_style: int = 40,
    modes: Sequence[str] = ("ramem", "baseline"),
    k: int = 10,
    bank_dir: Path | None = None,
    tuning: SearchTuning = DEFAULT_TUNING,
    styles: Sequence[str] = NATURAL_STYLES,
    progress: Callable[[str], None] | None = None,
) -> JournalEvalResult:
    """Write each natural journal of ``split``, ingest it into a bank, ask its questions of
    ``styles`` in every mode (as ``journal.run_journal_eval`` does for the classic one)."""
    if k < 1:
        raise ValueError("k must be at least 1")
    unknown = [s for s in styles if s not in NATURAL_STYLES]
    if unknown:
        raise ValueError(f"unknown style {unknown[0]!r}; known: {', '.join(NATURAL_STYLES)}")
    started = _time.perf_counter()
    say = progress or (lambda _message: None)
    banks: list[JournalBank] = []
    results: list[JournalQuestionResult] = []
    embedder_name = "none (BM25 only)"
    with bank_folder(bank_dir) as folder:
        for years in sizes:
            spec = NaturalSpec(years=years, seed=seed, split=split, questions_per_style=per_style)
            journal = generate_natural_journal(spec)
            questions = [q for q in journal.questions if q.style in styles]
            say(f"{spec.label} ({split}): {len(journal.entries)} entries, {len(journal.chat)} "
                f"chat turns, {len(questions)} questions; building the bank")
            stem = natural_bank_stem(spec)
            source = journal.write_jsonl(Path(folder) / f"{stem}.jsonl")
            tag = "bm25" if embedder is None else "dense"
            with Memory.open(Path(folder) / f"{stem}-{tag}.db", embedder=embedder,
                             country=JOURNAL_COUNTRY, defaults=SearchDefaults(),
                             default_embedder=NO_DEFAULT_EMBEDDER) as memory:
                if memory.embedder is not None:
                    embedder_name = memory.embedder.name
                tick = _time.perf_counter()
                memory.ingest(source)
                ingest_seconds = _time.perf_counter() - tick
                for question in questions:
                    results.extend(search_question(memory, spec.label, question, modes, k,
                                                   tuning))
            banks.append(JournalBank(
                label=spec.label, start=spec.start.isoformat(), end=spec.end.isoformat(),
                entries=len(journal.entries), late_entries=0, questions=len(questions),
                ingest_seconds=ingest_seconds,
                one_offs=sum(1 for e in journal.entries if e.kind == OCCASION),
                chat_turns=len(journal.chat)))
            say(f"{spec.label}: done (ingest {ingest_seconds:.1f}s)")
    return JournalEvalResult(modes=tuple(modes), k=k, seed=seed, embedder=embedder_name,
                             banks=banks, results=results,
                             seconds=_time.perf_counter() - started, styles=tuple(styles))
