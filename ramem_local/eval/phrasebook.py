"""How the natural journal is worded: the schema of a phrasebook (``eval.natural``).

The natural journal benchmark (``ramem eval journal --natural``) writes one world — the same
activities, people, trips and occasions on the same days — in the words of a *phrasebook*, and
asks its questions in the phrasebook's words. Two phrasebooks exist: ``phrasebook_dev`` (the
engine is tuned on it) and ``phrasebook_heldout`` (written separately, never tuned on: a rule
that moves dev and not held-out is not kept). Both fill the slots below; nothing else of a
phrasebook is read.

Slots (``str.format`` fields; every template may use the ones its field lists, and must use
those marked *required*):

- ``{x}``: the detail of an activity: a trail ("Fox Valley"), a dish ("lentil soup"), a film
  title ("Night Harbor"), a book title ("Paper Birds"), a thing repaired ("the garden gate"), a
  band ("the Velvet Tides");
- ``{p}``, ``{p2}``: a friend's first name ("Lena");
- ``{place}``: a place in town ("the market", "the park");
- ``{city}``: a trip's city ("Oslo"); ``{food}``: a dish eaten there ("fish soup");
  ``{local}``: someone met there, with who they are ("Ingrid, a potter"); ``{sight}``: a sight
  ("the old fortress");
- ``{cue}``: a time phrase written by the benchmark ("in March 2024", "since last June");
- ``{event}``: how a question names an occasion or a trip ("Mum's seventieth", "my trip to
  Oslo"), written by the benchmark;
- ``{window}``: a span next to an occasion ("in the seven days after the move"), written by the
  benchmark.

Journal entries are whole sentences as a person writes them: any case, first person or "we",
the activity anywhere in the sentence, with or without a remark. Questions are what a person
types into a memory tool.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class KindPhrases:
    """One recurring activity kind (hike, meal, film, book, repair, concert).

    Entries: ``doing`` reports that I did it (``{x}`` required; ``{p}``, ``{p2}``, ``{place}``
    allowed); ``mentions`` name ``{x}`` (required) without my doing the activity that day: a
    plan, a wish, gear bought, someone else doing it or quoting it, a review read;
    ``requests`` are what I type to the assistant about ``{x}`` (required): questions and
    imperatives.

    Questions: ``last`` / ``first`` ask when I last / first did the activity with ``{x}``
    (required); ``count`` asks how often I did the activity (any detail) in ``{cue}``
    (required); ``last_before`` asks for my latest occurrence of the activity before
    ``{event}`` (required), ``first_after`` my earliest after ``{event}`` (required);
    ``in_window`` asks what of this activity I did in ``{window}`` (required)."""

    doing: tuple[str, ...]
    mentions: tuple[str, ...]
    requests: tuple[str, ...]
    last: tuple[str, ...]
    first: tuple[str, ...]
    count: tuple[str, ...]
    last_before: tuple[str, ...]
    first_after: tuple[str, ...]
    in_window: tuple[str, ...]


@dataclass(frozen=True)
class TripPhrases:
    """A trip away to ``{city}`` (every field may use ``{city}``; those marked need it).

    Entries: ``plans`` one to four weeks before (``{city}`` required: booking, packing lists,
    a guidebook); ``arrival`` the first day (``{city}`` required); ``meals`` (``{food}``
    required), ``meetings`` (``{local}`` required) and ``sights`` (``{sight}`` required) on the
    days there, naming ``{city}`` or not; ``departure`` the last day (going home);
    ``afterthoughts`` one to four weeks after (``{city}`` required); ``requests`` what I ask the
    assistant before going (``{city}`` required).

    Questions (``{city}`` required): ``ate`` asks what I ate on the trip, ``met`` whom I met
    there, ``did`` what I saw or did there."""

    plans: tuple[str, ...]
    arrival: tuple[str, ...]
    meals: tuple[str, ...]
    meetings: tuple[str, ...]
    sights: tuple[str, ...]
    departure: tuple[str, ...]
    afterthoughts: tuple[str, ...]
    requests: tuple[str, ...]
    ate: tuple[str, ...]
    met: tuple[str, ...]
    did: tuple[str, ...]


@dataclass(frozen=True)
class PeoplePhrases:
    """Friends (``{p}`` required everywhere).

    Entries: ``meetings`` report seeing ``{p}`` in person (``{place}`` allowed); ``mentions``
    name ``{p}`` without meeting them (a call, a message, a postcard, news of them).
    Questions: ``last_seen`` asks when I last saw ``{p}`` in person (any wording: "get
    together", "how long since")."""

    meetings: tuple[str, ...]
    mentions: tuple[str, ...]
    last_seen: tuple[str, ...]


@dataclass(frozen=True)
class OccasionPhrases:
    """An occasion that happens on one day (``Phrasebook.occasions``, by key):

    - ``"mum_birthday"``: Mum's birthday dinner, every year; ``{nth}`` her age as "70th",
      ``{nth_word}`` as "seventieth";
    - ``"my_birthday"``: my own birthday, every year; ``{nth}``, ``{nth_word}`` as above;
    - ``"funeral"``: a relative's funeral, once; ``{who}`` ("Gran", "Uncle Karl");
    - ``"move"``: moving house, once; ``{street}`` ("Mill Lane");
    - ``"operation"``: an operation, once; ``{part}`` ("knee", "shoulder");
    - ``"new_job"``: a first day at a new job, once; ``{company}`` ("Kestrel Media");
    - ``"wedding"``: a friend's wedding, once; ``{p}`` the friend.

    ``entries`` are the day's journal entry (every slot of its key required but ``{nth_word}``,
    which an entry should not use: people write "70th"); ``names`` how a question names it in
    ``{event}`` ("Mum's seventieth", "the move", "Gran's funeral"), each naming it
    unambiguously within its key (a birthday by its age)."""

    entries: tuple[str, ...]
    names: tuple[str, ...]


@dataclass(frozen=True)
class Phrasebook:
    """Everything the natural journal writes and asks, in one voice.

    ``kinds`` has one entry per activity kind: "hike", "meal", "film", "book", "repair",
    "concert". ``remarks`` are short clauses that may follow any entry ("it rained the whole
    time"); ``filler`` whole entries about nothing in particular (``{p}``, ``{place}``
    allowed); ``occasion_day`` asks what I did on the day before / after ``{event}``
    (``{event}`` and one of the words "before" / "after" fixed by the template: two tuples)."""

    name: str
    kinds: dict[str, KindPhrases]
    trip: TripPhrases
    people: PeoplePhrases
    remarks: tuple[str, ...]
    filler: tuple[str, ...]
    day_after: tuple[str, ...]  # "What did I get up to the day after {event}?"
    day_before: tuple[str, ...]  # "What was I doing the day before {event}?"
    occasions: dict[str, OccasionPhrases]
    trip_names: tuple[str, ...]  # how a question names a trip in {event}: "my trip to {city}"


KIND_NAMES = ("hike", "meal", "film", "book", "repair", "concert")
OCCASION_KEYS = ("mum_birthday", "my_birthday", "funeral", "move", "operation", "new_job",
                 "wedding")
