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

About once a month a *one-off* happens (kind ``"oneoff"``, :data:`ONEOFF_KINDS`: "Adopted a grey
cat from the shelter and named her Pixel", "Went to Ana's wedding in Ghent", "Had the job
interview at Brightwell"), each unique in the whole journal (the pool holds 134; a longer journal
gets them on random months), written on its day, on a day with room for one more event. Its
``answer`` is how questions name it ("I adopted Pixel the cat", "Ana's wedding").

**The assistant chat** (``chat``, on by default): a second conversation, ``"assistant"``, between
``"me"`` and ``"assistant"``, two to four sittings a month. I ask for a recipe for a dish the
journal cooks, about a film, book or band it mentions, the conditions at one of its trails, a gift
for a relative it visits, how to fix something it repairs; the assistant answers. A sitting falls
on a day with no entry of its kind. Chat turns are never evidence: they are the same words on the
wrong days.

The classic entries and questions come from the random streams they always came from; the
one-offs, the chat and the multi-step questions each draw from a stream of their own, so with
them the classic entries are byte for byte what they were (a one-off takes the next id of its day
and a free minute) and so are the classic questions, but for a time_only question on a one-off's
day, whose evidence gains that entry. With ``one_offs`` and ``chat`` off the journal is the one
before multi-step recall.

**The questions** (each with its evidence entry ids and its reference time ``as_of``, 23:00 that
day). Classic styles:

============== ====================================================== ==========================
style          example                                                as_of
============== ====================================================== ==========================
date           Where did I go hiking on 9 February 2023?              the journal's end
yesterday      What did I cook yesterday?                             the day after the event
days_ago       Which film did I watch 3 days ago?  (N = 2..6)         N days after the event
month_part     Which book did I start in early May 2024?              the journal's end
last_weekend   Who did I visit last weekend?                          a weekday of the next week
time_only      What did I do yesterday? / on 3 May 2024? / N days ago as the styles above
============== ====================================================== ==========================

A single-entry question's evidence is the one entry of that kind whose event day is in the asked
range; month_part and last_weekend questions are only asked when exactly one such entry exists.
A time_only question's evidence is every journal entry whose event day is the asked day (late
ones and one-offs included).

Multi-step styles (:data:`MULTISTEP_STYLES`); "the kind's entries" are its activity entries,
placed by event day:

============== ====================================================== ==========================
style          example and evidence                                   as_of
============== ====================================================== ==========================
last           When did I last cook shakshuka? — the latest entry     a random day once two
               with that detail whose event day is ≤ as_of            have been written
first          When did I first see the Velvet Tides live? — the      the journal's end or (half
               earliest entry with that detail                        the time) a day as above
count          How many films did I watch in May 2024? — every entry  the journal's end
               of the kind in that (whole) month, and every other
               entry whose remark reports doing it ("visited Aunt
               Rosa; we cooked together" is a meal cooked,
               REMARKS_REPORTING); expected count = their number
since          Which films have I watched since February 2023? —      3 to 10 weeks after the
               every entry of the kind from that month's first day    named month's first day
               (or that date) to as_of                                (or the named date)
between        Which books did I start between 3 March 2024 and 20    the journal's end
               May 2024? — every entry of the kind in the closed
               range (2 to 10 weeks)
event_relative What did I cook the day after I adopted Pixel the      the journal's end
               cat? — the kind's entries on the day (or in the 7
               days) before or after a one-off, named by what
               happened; a quarter ask "What did I do the day before
               my job interview at Brightwell?": every entry that day
paraphrase     Which screening did I catch on 3 May 2024? — a date    the journal's end
               question about the only entry of its kind that day,
               sharing no content word with it
between_events Which films did I watch between Hugo's wedding and the the journal's end
               day I moved into the flat? — every entry of the kind
               between two one-offs 2 to 10 weeks apart, both days
               included. Asked only when named
               (:data:`EXTRA_STYLES`)
============== ====================================================== ==========================

Multi-evidence questions are only asked with 1 to :data:`MAX_EVIDENCE` (10) evidence entries, so
all-evidence R@10 can be 1; count questions never ask about an empty month (two thirds are drawn
from months with two or more). The last and first styles ask about details that occur twice or
more (fewer questions than asked for in a short journal). Every question is answerable when it is
asked: its evidence is written on or before its ``as_of`` day (no "yesterday" question about a
day whose entry was filed two days later), and no entry the question counts is still unwritten
then (a "since" question is not asked on a day whose late entry about that kind is filed later).

A *hit* is a retrieved memory whose ``source_turns`` holds an evidence entry id. Metrics (R@1,
R@K, all-evidence R@K) come from :mod:`ramem_local.eval.metrics`; a count question is also
*count exact* when ``SearchResponse.count`` equals its number of evidence entries (a count of
None is not exact).
"""

from __future__ import annotations

import json
import random
import re
import statistics
import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass, field, replace
from datetime import date, datetime, timedelta
from pathlib import Path

from .. import Embedder, Memory, SearchDefaults, SearchResponse
from ..config import NO_DEFAULT_EMBEDDER
from ..render import MONTH_NAMES, spoken_date
from .metrics import all_evidence_recall_at_k, first_hit_rank, recall_at_k
from .retrieval import bank_folder
from .tuning import DEFAULT_TUNING, SearchTuning, tuned_search

JOURNAL_END = date(2026, 11, 17)
DEFAULT_YEARS = (1, 5, 10)
DEFAULT_SEED = 7
DEFAULT_PER_STYLE = 40
CLASSIC_STYLES = ("date", "yesterday", "days_ago", "month_part", "last_weekend", "time_only")
MULTISTEP_STYLES = ("last", "first", "count", "since", "between", "event_relative",
                    "paraphrase")
STYLES = CLASSIC_STYLES + MULTISTEP_STYLES
# Asked only when named (``--styles between_events``): the standard set, and its overall row,
# stay comparable with runs before it.
EXTRA_STYLES = ("between_events",)
# Styles whose evidence is the one entry of the asked kind on the asked day or days.
SINGLE_ENTRY_STYLES = ("date", "yesterday", "days_ago", "month_part", "last_weekend",
                       "paraphrase")
COUNT_EXACT = "count exact"  # the metric of count questions: response.count == len(evidence)
MAX_EVIDENCE = 10  # multi-evidence questions have at most this many: AllR@10 stays meaningful
SPEAKER = "me"
ASSISTANT = "assistant"
CONVERSATION = "journal"
CHAT_CONVERSATION = "assistant"
FILLER = "filler"
ONEOFF = "oneoff"
LATE_PROBABILITY = 0.15
# The generated journal writes English dates with written months: its banks read dates as a US
# bank does, whatever the locale of the machine running the benchmark.
JOURNAL_COUNTRY = "US"
MAX_EVENTS_PER_DAY = 3
ASKED_AT = "T23:00:00"  # questions are asked in the evening of their reference day

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
    # Multi-step questions: ``{cue}`` is the asked time, ``{x}`` the detail.
    plural: tuple[str, ...]  # "Which films did I watch {cue}?" (several answers)
    perfect: tuple[str, ...]  # "Which films have I watched {cue}?" (since ...)
    how_many: tuple[str, ...]  # "How many films did I watch {cue}?"
    last: tuple[str, ...]  # "When did I last watch {x}?"
    first: tuple[str, ...]  # "When did I first watch {x}?"
    # Date questions that share no content word with any entry of the kind (the templates,
    # remarks, answers and pools above): only the date and the meaning lead to the entry.
    paraphrases: tuple[str, ...]
    # What I ask the assistant about {x} on another day, and what it answers.
    chat: tuple[tuple[str, str], ...]
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
        plural=("Which trails did I hike {cue}?", "Where did I go hiking {cue}?"),
        perfect=("Which trails have I hiked {cue}?", "Where have I gone hiking {cue}?"),
        how_many=("How many times did I go hiking {cue}?", "How many hikes did I do {cue}?"),
        last=("When did I last hike at {x}?", "When was the last time I went hiking at {x}?"),
        first=("When did I first hike at {x}?", "When did I go hiking at {x} for the first time?"),
        paraphrases=("Where did I trek {cue}?", "Which outdoor excursion did I make {cue}?"),
        chat=(("What are the trail conditions like at {x}?",
               "Trails at {x} can be slippery after rain; good boots and an early start help."),
              ("How long is the route at {x}, and is it steep?",
               "The usual route at {x} takes three to four hours with a steep middle section.")),
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
        plural=("What did I cook {cue}?", "Which dishes did I make {cue}?"),
        perfect=("What have I cooked {cue}?", "Which dishes have I made {cue}?"),
        how_many=("How many times did I cook a meal {cue}?",
                  "How many dishes did I make {cue}?"),
        last=("When did I last cook {x}?", "When was the last time I made {x}?"),
        first=("When did I first cook {x}?", "When did I make {x} for the first time?"),
        paraphrases=("Which food did I prepare {cue}?", "What was on my dinner table {cue}?"),
        chat=(("Do you have a good recipe for {x}?",
               "Here is a simple recipe for {x}: prepare everything first, keep the heat "
               "moderate and season at the end."),
              ("What side goes well with {x}?",
               "A crisp green salad or fresh bread goes well with {x}.")),
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
        plural=("Which books did I start {cue}?", "What books did I begin reading {cue}?"),
        perfect=("Which books have I started {cue}?", "What books have I begun reading {cue}?"),
        how_many=("How many books did I start {cue}?",
                  "How many new books did I begin reading {cue}?"),
        last=("When did I last start reading {x}?", "When was the last time I began {x}?"),
        first=("When did I first start reading {x}?",
               "When did I begin {x} for the first time?"),
        paraphrases=("Which novel did I open {cue}?", "What title did I get into {cue}?"),
        chat=(("What do readers say about {x}?",
               "Readers mostly praise {x} for its characters, though some find the middle slow."),
              ("Can you recommend books similar to {x}?",
               "If you liked {x}, try quiet literary novels with a strong sense of place.")),
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
        plural=("Which films did I watch {cue}?", "What movies did I see {cue}?"),
        perfect=("Which films have I watched {cue}?", "What movies have I seen {cue}?"),
        how_many=("How many films did I watch {cue}?", "How many movies did I see {cue}?"),
        last=("When did I last watch {x}?", "When was the last time I saw {x}?"),
        first=("When did I first watch {x}?", "When did I watch {x} for the first time?"),
        paraphrases=("Which screening did I catch {cue}?",
                     "Which motion picture did I view {cue}?"),
        chat=(("Is {x} worth watching?",
               "{x} is well liked for its atmosphere and its soundtrack; worth a try."),
              ("Can you suggest films like {x}?",
               "If you enjoyed {x}, look for slow-burning dramas by the same director.")),
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
        plural=("What did I repair {cue}?", "What things did I fix {cue}?"),
        perfect=("What have I repaired {cue}?", "What things have I fixed {cue}?"),
        how_many=("How many things did I repair {cue}?",
                  "How many repairs did I do {cue}?"),
        last=("When did I last fix {x}?", "When was the last time I repaired {x}?"),
        first=("When did I first fix {x}?", "When did I repair {x} for the first time?"),
        paraphrases=("What broken thing did I mend {cue}?",
                     "Which household item did I patch {cue}?"),
        chat=(("How do I fix {x}?",
               "To fix {x}, first switch off the power or water, then check the worn part."),
              ("What tools do I need to repair {x}?",
               "For {x} a screwdriver set, pliers and maybe a spare part are usually enough.")),
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
        plural=("Which bands did I see live {cue}?", "Which concerts did I go to {cue}?"),
        perfect=("Which bands have I seen live {cue}?",
                 "Which concerts have I gone to {cue}?"),
        how_many=("How many concerts did I go to {cue}?",
                  "How many bands did I see live {cue}?"),
        last=("When did I last see {x} live?", "When was the last time I heard {x} live?"),
        first=("When did I first see {x} live?", "When did I hear {x} live for the first time?"),
        paraphrases=("Which gig did I attend {cue}?",
                     "Which musicians did I watch perform {cue}?"),
        chat=(("Which albums by {x} should I listen to?",
               "Start with the early records of {x}; the live album is a good second step."),
              ("Are tickets for {x} usually expensive?",
               "Tickets for {x} are usually moderate, cheaper when bought early.")),
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
        plural=("Who did I visit {cue}?", "Who did I go to see {cue}?"),
        perfect=("Who have I visited {cue}?", "Who have I gone to see {cue}?"),
        how_many=("How many visits did I make {cue}?",
                  "How many times did I visit family or friends {cue}?"),
        last=("When did I last visit {x}?", "When was the last time I went to see {x}?"),
        first=("When did I first visit {x}?", "When did I go to see {x} for the first time?"),
        paraphrases=("Whose home did I stop by {cue}?", "Who hosted me {cue}?"),
        chat=(("What gift could I bring {x}?",
               "For {x}, something personal works well: a framed photo, a book or homemade jam."),
              ("Any ideas for a present for {x}?",
               "A day out together or a small plant are thoughtful presents for {x}.")),
        gap_days=(14, 35), weekend_bias=0.5,
    ),
)
KINDS = tuple(kind.name for kind in ACTIVITIES)
_KIND = {kind.name: kind for kind in ACTIVITIES}
# A remark that itself reports an activity of another kind: an entry with it is one of that
# kind's too when a question counts them. "Took the train to visit Grandpa Theo; we cooked
# together" is a visit, and it is a time I cooked a meal.
REMARKS_REPORTING = {"we cooked together": "meal"}

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


@dataclass(frozen=True)
class OneOffKind:
    """Something that happens once: ``entry`` is the clause after "I", ``anchor`` how a
    question names it after "the day before" ("I adopted Pixel the cat", "Ana's wedding");
    each of ``values`` fills both (``{0}``, ``{1}``, …) and makes one distinct event."""

    entry: str
    anchor: str
    values: tuple[tuple[str, ...], ...]


ONEOFF_KINDS = (
    OneOffKind("adopted a {1} {0} from the shelter and named {2} {3}", "I adopted {3} the {0}",
               (("cat", "grey", "her", "Pixel"), ("cat", "ginger", "him", "Miso"),
                ("dog", "black", "him", "Biscuit"), ("dog", "brown", "her", "Juniper"),
                ("rabbit", "white", "her", "Clover"), ("cat", "tabby", "her", "Nova"),
                ("dog", "spotted", "him", "Pepper"), ("tortoise", "small", "him", "Atlas"),
                ("parrot", "green", "him", "Kiwi"), ("cat", "black", "him", "Shadow"))),
    OneOffKind("went to {0}'s wedding in {1}", "{0}'s wedding",
               tuple((person, TOWNS[i % len(TOWNS)]) for i, person in enumerate(PEOPLE))),
    OneOffKind("had the job interview at {0}", "my job interview at {0}",
               tuple((company,) for company in (
                   "Brightwell", "Norrvik Systems", "Cobalt Finch", "Meridian Labs",
                   "Tidewater Energy", "Aster Analytics", "Halden Group", "Quillon Studio",
                   "Vantage Rail", "Saltmarsh Bank"))),
    OneOffKind("started the new job at {0}", "I started the new job at {0}",
               tuple((company,) for company in (
                   "Lumen Works", "Orbis Freight", "Kestrel Media", "Fjord Analytics",
                   "Pinecone Labs", "Harrow and Vale"))),
    OneOffKind("moved into the flat on {0}", "I moved into the flat on {0}",
               tuple((street,) for street in (
                   "Harbour Street", "Linden Avenue", "Mill Lane", "Orchard Road",
                   "Canal Street", "Chapel Row", "Station Road", "Elm Terrace"))),
    OneOffKind("passed my {0}", "I passed my {0}",
               tuple((test,) for test in (
                   "driving test", "lifeguard exam", "Spanish exam", "sailing licence exam",
                   "diving certificate", "motorbike test", "climbing course exam",
                   "piano grade exam"))),
    OneOffKind("broke my {0} falling {1}", "I broke my {0}",
               (("wrist", "off the bike"), ("ankle", "down the stairs"),
                ("collarbone", "on the ice"), ("little finger", "against a door"),
                ("toe", "over a chair"), ("elbow", "off a ladder"), ("nose", "at football"))),
    OneOffKind("ran the {0}", "I ran the {0}",
               tuple((race,) for race in (
                   "Ghent half marathon", "Porto marathon", "Bergen city run",
                   "Lyon charity relay", "Graz night trail race", "Turin mountain ultra",
                   "Utrecht canal run", "Bruges midnight run"))),
    OneOffKind("bought {0}", "I bought {1}",
               (("a second-hand piano", "the piano"), ("an electric bike", "the electric bike"),
                ("a red kayak", "the kayak"), ("an old camper van", "the camper van"),
                ("a telescope", "the telescope"), ("a sewing machine", "the sewing machine"),
                ("a record player", "the record player"),
                ("a pottery wheel", "the pottery wheel"))),
    OneOffKind("sold {0}", "I sold {0}",
               tuple((thing,) for thing in (
                   "the old car", "my drum kit", "the leather sofa", "my snowboard",
                   "the rowing machine", "my stamp collection"))),
    OneOffKind("lost my {0} at {1}", "I lost my {0}",
               (("passport", "the airport"), ("wallet", "the station"),
                ("phone", "a festival"), ("house keys", "the beach"), ("watch", "the gym"),
                ("laptop bag", "the ferry terminal"), ("camera", "the zoo"))),
    OneOffKind("flew to {0} for {1}", "I flew to {0}",
               (("Lisbon", "a conference"), ("Oslo", "a work trip"),
                ("Vienna", "a friend's birthday"), ("Dublin", "a job fair"),
                ("Seville", "a training course"), ("Krakow", "a conference"),
                ("Edinburgh", "the festival"), ("Tallinn", "a workshop"),
                ("Naples", "a christening"), ("Prague", "a reunion"))),
    OneOffKind("celebrated {0}'s retirement with a party", "{0}'s retirement party",
               tuple((who,) for who in (
                   "Aunt Rosa", "Uncle Karl", "my boss Helga", "our neighbour Sven",
                   "my mentor Ingrid", "Coach Marta"))),
    OneOffKind("planted {0} in the garden", "I planted {1}",
               (("a cherry tree", "the cherry tree"), ("an apple tree", "the apple tree"),
                ("a fig tree", "the fig tree"), ("a magnolia", "the magnolia"),
                ("a row of lavender", "the lavender"), ("a hornbeam hedge", "the hedge"))),
    OneOffKind("won the {0}", "I won the {0}",
               tuple((prize,) for prize in (
                   "pub quiz at the Fox", "chess tournament at the club",
                   "photo contest of the town paper", "bake-off at work",
                   "raffle at the street fair", "pumpkin contest"))),
    OneOffKind("gave a talk about {0} at {1}", "my talk about {0}",
               (("urban beekeeping", "the library"), ("bike maintenance", "the community hall"),
                ("old maps", "the museum"), ("sourdough baking", "the food fair"),
                ("birdwatching", "the nature club"), ("budget travel", "the youth centre"))),
    OneOffKind("painted the {0} {1}", "I painted the {0}",
               (("kitchen", "yellow"), ("bedroom", "pale blue"), ("hallway", "white"),
                ("front door", "green"), ("garden shed", "red"), ("bathroom", "grey"))),
)
ONEOFF_REMARKS = ("it still feels unreal", "what a day", "I could hardly sleep afterwards",
                  "{person} came along", "I called {person} to tell the news",
                  "I will not forget this one")


# ---------------------------------------------------------------------------------------------
# The journal
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class JournalSpec:
    """Which journal to write: ``years`` ending on ``end`` (or ``days``, for short test runs);
    ``one_offs`` adds the once-only events, ``chat`` the assistant conversation (both off: the
    journal of the six classic styles, byte for byte). ``sparse`` writes only the days
    something happened (the recurring activities, no filler entries): about eleven entries a
    month, the bank of someone who writes a few lines a week, where a month of a counting
    question holds a handful of reports."""

    years: int = 1
    seed: int = DEFAULT_SEED
    questions_per_style: int = DEFAULT_PER_STYLE
    end: date = JOURNAL_END
    days: int | None = None
    one_offs: bool = True
    chat: bool = True
    sparse: bool = False

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
class ChatTurn:
    """One turn of the assistant conversation: never evidence, only a look-alike."""

    id: str
    speaker: str  # SPEAKER or ASSISTANT
    text: str
    written_at: datetime
    kind: str  # the activity kind it is about
    answer: str  # the detail it is about

    def jsonl_row(self) -> dict:
        """The product's JSONL turn format; one session per day of chatting."""
        return {"speaker": self.speaker, "text": self.text,
                "timestamp": self.written_at.isoformat(),
                "session": self.written_at.date().isoformat(), "id": self.id,
                "conversation": CHAT_CONVERSATION}


@dataclass(frozen=True)
class JournalQuestion:
    """A question with its evidence; ``first_day``..``last_day`` is the asked range."""

    id: str
    style: str
    kind: str | None  # None for time_only (and event_relative asked about the whole day)
    question: str
    as_of: str  # ISO datetime: the reference time for the question's cue
    first_day: date
    last_day: date
    evidence: tuple[str, ...]
    answer: str
    expected_count: int | None = None  # count questions: len(evidence)


@dataclass(frozen=True)
class Journal:
    spec: JournalSpec
    entries: tuple[Entry, ...]  # in writing order
    questions: tuple[JournalQuestion, ...]
    chat: tuple[ChatTurn, ...] = ()  # in writing order

    def write_jsonl(self, path: Path) -> Path:
        """Write the entries, then the chat, as the JSONL that ``ramem ingest`` reads."""
        with Path(path).open("w", encoding="utf-8") as handle:
            rows: list[Entry | ChatTurn] = [*self.entries, *self.chat]
            for row in rows:
                handle.write(json.dumps(row.jsonl_row(), ensure_ascii=False) + "\n")
        return Path(path)


def generate_journal(spec: JournalSpec) -> Journal:
    """The journal and its questions; the same spec gives the same journal, byte for byte.

    The classic entries and questions come from the streams they always came from; the
    one-offs, the chat and the multi-step questions each draw from a stream of their own, so
    adding them leaves every classic entry and question as it was (but for the evidence of a
    time_only question about a one-off's day, which includes the one-off)."""
    if spec.days is not None and spec.days < 7:
        raise ValueError("a journal needs at least 7 days")
    if spec.years < 1 or spec.questions_per_style < 0:
        raise ValueError("years must be ≥ 1 and questions_per_style ≥ 0")
    rng = random.Random(spec.seed)
    entries = _write_entries(_plan_events(spec, rng), rng)
    if spec.one_offs:
        entries = _add_one_offs(spec, entries, _stream(spec, "one-offs"))
    chat = _write_chat(spec, entries, _stream(spec, "chat")) if spec.chat else []
    questions = _ask(spec, entries, _stream(spec, "questions"))
    questions += _ask_multistep(spec, entries, _stream(spec, "multistep"),
                                numbered_from=len(questions))
    questions += _ask_between_events(spec, entries, _stream(spec, "between_events"),
                                     numbered_from=len(questions))
    return Journal(spec=spec, entries=tuple(entries), questions=tuple(questions),
                   chat=tuple(chat))


def _stream(spec: JournalSpec, purpose: str) -> random.Random:
    """The random stream of one part of the generator."""
    return random.Random(f"{spec.seed}/{purpose}/{spec.label}")


@dataclass(frozen=True)
class _Event:
    day: date
    kind: str
    late_days: int


def _plan_events(spec: JournalSpec, rng: random.Random) -> list[_Event]:
    """Activities on their recurrence schedules, then filler up to 1-3 events per day (none in
    a sparse journal)."""
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
        filler = 0 if spec.sparse else max(0, rng.randint(1, MAX_EVENTS_PER_DAY) - len(kinds))
        planned = kinds + [FILLER] * filler
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
    templates: tuple[str, ...]
    remarks: tuple[str, ...]
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
        text = _capitalised(clause)
    return text, slots["x"]


def _capitalised(text: str) -> str:
    return text[0].upper() + text[1:]


def late_cue(event_day: date, late_days: int, rng: random.Random) -> str:
    """How an entry written ``late_days`` (1-3) after ``event_day`` names that day."""
    if rng.random() < 0.5:
        return f"On {WEEKDAYS[event_day.weekday()]}"
    if late_days == 1:
        return "Yesterday"
    if late_days == 2 and rng.random() < 0.5:
        return "The day before yesterday"
    return f"{NUMBER_WORDS[late_days]} days ago"


def _add_one_offs(spec: JournalSpec, entries: list[Entry],
                  rng: random.Random) -> list[Entry]:
    """One once-only event a month (while the pool of distinct events lasts; beyond it, on
    random months), on a day with room for another event, written that day without a time
    cue. The classic entries keep their ids and times: a one-off takes the next id of its
    day and a minute no other entry of that day has."""
    pool = [(kind, values) for kind in ONEOFF_KINDS for values in kind.values]
    rng.shuffle(pool)
    months = _months(spec.start, spec.end)
    if len(months) > len(pool):
        months = sorted(rng.sample(months, len(pool)))
    events_on = Counter(e.event_day for e in entries)
    minutes_taken: dict[date, set[int]] = {}
    for entry in entries:
        minutes_taken.setdefault(entry.written_day, set()).add(
            entry.written_at.hour * 60 + entry.written_at.minute)
    added: list[Entry] = []
    for (first, last), (kind, values) in zip(months, pool, strict=False):
        days = [d for d in _days(first, last) if events_on[d] < MAX_EVENTS_PER_DAY]
        if not days:
            continue
        day = rng.choice(days)
        taken = minutes_taken.get(day, set())
        minute = rng.choice([m for m in range(7 * 60, 23 * 60) if m not in taken])
        remark = rng.choice(ONEOFF_REMARKS).format(person=rng.choice(PEOPLE))
        clause = f"{kind.entry.format(*values)}; {remark}."
        text = f"I {clause}" if rng.random() < 0.5 else _capitalised(clause)
        added.append(Entry(
            id=f"e{day.isoformat()}-{len(taken) + 1}", text=text,
            written_at=datetime(day.year, day.month, day.day, minute // 60, minute % 60),
            event_day=day, kind=ONEOFF, answer=kind.anchor.format(*values), late_days=0))
    return sorted([*entries, *added], key=lambda e: e.written_at)


def _write_chat(spec: JournalSpec, entries: Sequence[Entry],
                rng: random.Random) -> list[ChatTurn]:
    """Two to four sittings a month with the assistant, each about one detail the journal
    holds (a dish I cook, a trail I hike, a relative I visit), on a day with no entry of that
    kind: the same words as the journal, on the wrong days."""
    answers = {kind: sorted({e.answer for e in entries if e.kind == kind}) for kind in KINDS}
    busy = {(e.kind, day) for e in entries for day in (e.event_day, e.written_day)}
    turns: list[ChatTurn] = []
    for first, last in _months(spec.start, spec.end):
        days = _days(first, last)
        for day in sorted(rng.sample(days, min(len(days), rng.randint(2, 4)))):
            free = [k for k in KINDS if answers[k] and (k, day) not in busy]
            if not free:
                continue
            kind = _KIND[rng.choice(free)]
            answer = rng.choice(answers[kind.name])
            minute = rng.randint(18 * 60, 21 * 60)
            number = 0
            for ask, reply in rng.sample(kind.chat, rng.randint(1, len(kind.chat))):
                for speaker, text in ((SPEAKER, ask), (ASSISTANT, reply)):
                    number += 1
                    minute += rng.randint(1, 3)
                    turns.append(ChatTurn(
                        id=f"c{day.isoformat()}-{number}", speaker=speaker,
                        text=_capitalised(text.format(x=answer)),
                        written_at=datetime(day.year, day.month, day.day, minute // 60,
                                            minute % 60),
                        kind=kind.name, answer=answer))
    return turns


def _months(first: date, last: date) -> list[tuple[date, date]]:
    """The calendar months that meet ``first``..``last``, each clipped to it."""
    months = []
    start = first
    while start <= last:
        months.append((start, min(_month_end(start), last)))
        start = _month_end(start) + timedelta(days=1)
    return months


def _days(first: date, last: date) -> list[date]:
    return [first + timedelta(days=offset) for offset in range((last - first).days + 1)]


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


def _ask(spec: JournalSpec, entries: Sequence[Entry], rng: random.Random) -> list[JournalQuestion]:
    activities = [e for e in entries if e.kind in _KIND]
    per_part = Counter((e.kind, month_part(e.event_day)[1]) for e in activities)
    per_weekend = Counter((e.kind, weekend_of(e.event_day)[0]) for e in activities
                          if e.event_day.weekday() >= 5)
    end = spec.end
    n = spec.questions_per_style
    # Single-entry questions are only asked where the kind occurs once in the asked range.
    unique_day = _alone_on_their_day(activities)
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
        cue = f"in {part} {MONTH_NAMES[first.month - 1]} {first.year}"
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


# Multi-step questions -----------------------------------------------------------------------

RELATIONS = (("the day before", -1, -1), ("the day after", 1, 1),
             ("the week before", -7, -1), ("the week after", 1, 7))  # (words, first, last)
WHOLE_DAY_QUESTIONS = ("What did I do {cue}?", "What happened {cue}?")
ATTEMPTS_PER_QUESTION = 30  # since / between draw ranges until enough have usable evidence
# Words a paraphrase question may share with its entry: they carry no content.
QUESTION_FUNCTION_WORDS = frozenset((
    "a", "an", "at", "by", "did", "do", "i", "in", "into", "me", "my", "of", "on", "the", "to",
    "up", "was", "what", "when", "where", "which", "who", "whose"))


def content_words(text: str) -> set[str]:
    """Lower-cased words, crudely stemmed (a final "s", "ed" or "ing" dropped)."""
    return {re.sub(r"(?<=\w{3})(?:ing|ed|s)$", "", word)
            for word in re.findall(r"[a-z]+", text.lower())}


def _ask_multistep(spec: JournalSpec, entries: Sequence[Entry], rng: random.Random, *,
                   numbered_from: int) -> list[JournalQuestion]:
    """The multi-step styles, in :data:`MULTISTEP_STYLES` order, each in journal order; ids
    go on from the classic questions' ``numbered_from``."""
    asker = _MultistepAsker(spec, entries, rng)
    questions: list[JournalQuestion] = []
    for ask in (asker.last, asker.first, asker.count, asker.since, asker.between,
                asker.event_relative, asker.paraphrase):
        for draft in sorted(ask(), key=lambda q: (q.last_day, q.first_day, q.as_of, q.question)):
            number = numbered_from + len(questions) + 1
            questions.append(replace(draft, id=f"{draft.style}-{number:04d}"))
    return questions


def _ask_between_events(spec: JournalSpec, entries: Sequence[Entry], rng: random.Random, *,
                        numbered_from: int) -> list[JournalQuestion]:
    """between_events: every entry of a kind between two one-offs 2 to 10 weeks apart, both
    named by what happened ("Which films did I watch between the day I adopted Pixel the cat
    and Hugo's wedding?", or "from ... until ..."), both days included, as the ``between``
    style's dates are."""
    one_offs = sorted((e for e in entries if e.kind == ONEOFF), key=lambda e: e.event_day)
    of_kind = _MultistepAsker(spec, entries, rng)._of_kind_between
    candidates = []
    for at, first in enumerate(one_offs):
        for last in one_offs[at + 1:]:
            gap = (last.event_day - first.event_day).days
            if gap > 70:
                break
            if gap < 14:
                continue
            for kind in KINDS:
                evidence = of_kind(kind, first.event_day, last.event_day)
                if 1 <= len(evidence) <= MAX_EVIDENCE:
                    candidates.append((kind, first, last, evidence))
    questions: list[JournalQuestion] = []
    for kind, first, last, evidence in _sample(rng, candidates, spec.questions_per_style):
        one, other = _event_name(first.answer), _event_name(last.answer)
        cue = rng.choice((f"between {one} and {other}", f"from {one} until {other}"))
        text = rng.choice(_KIND[kind].plural).format(cue=cue)
        number = numbered_from + len(questions) + 1
        questions.append(replace(
            _draft("between_events", kind, text, spec.end, first.event_day, last.event_day,
                   evidence, _answers(evidence)),
            id=f"between_events-{number:04d}"))
    return questions


def _event_name(anchor: str) -> str:
    """A one-off's anchor as a range end: "I adopted Pixel the cat" → "the day I adopted
    Pixel the cat"; a noun phrase ("Hugo's wedding") as it is."""
    return f"the day {anchor}" if anchor.startswith("I ") else anchor


class _MultistepAsker:
    """Writes up to ``questions_per_style`` questions of each multi-step style."""

    def __init__(self, spec: JournalSpec, entries: Sequence[Entry], rng: random.Random) -> None:
        self.spec, self.entries, self.rng = spec, entries, rng
        self.n = spec.questions_per_style
        self.of_kind = {kind: sorted((e for e in entries if e.kind == kind),
                                     key=lambda e: e.event_day) for kind in KINDS}

    def _of_kind_between(self, kind: str, first: date, last: date) -> list[Entry]:
        return [e for e in self.of_kind[kind] if first <= e.event_day <= last]

    def _reporting_between(self, kind: str, first: date, last: date) -> list[Entry]:
        """The entries a count of ``kind`` between ``first`` and ``last`` counts: those of
        the kind and those of another kind whose remark reports doing it
        (``REMARKS_REPORTING``), by event day."""
        remarks = [remark for remark, reported in REMARKS_REPORTING.items() if reported == kind]
        return sorted((e for e in self.entries
                       if first <= e.event_day <= last
                       and (e.kind == kind or any(remark in e.text for remark in remarks))),
                      key=lambda e: e.event_day)

    def _repeated(self) -> list[list[Entry]]:
        """Per kind and detail occurring twice or more, its entries by event day."""
        groups: dict[tuple[str, str], list[Entry]] = {}
        for kind in KINDS:
            for entry in self.of_kind[kind]:
                groups.setdefault((kind, entry.answer), []).append(entry)
        return [same for _, same in sorted(groups.items()) if len(same) >= 2]

    def last(self) -> list[JournalQuestion]:
        """The latest entry with the detail by ``as_of``: a day once two exist on which
        every entry with the detail that happened by then is written."""
        questions = []
        for same in _sample(self.rng, self._repeated(), self.n):
            days = [d for d in _days(same[1].written_day, self.spec.end)
                    if _all_written_by(same, d)]
            as_of = self.rng.choice(days)
            latest = [e for e in same if e.event_day <= as_of][-1]
            text = self.rng.choice(_KIND[latest.kind].last).format(x=latest.answer)
            questions.append(_draft("last", latest.kind, text, as_of, self.spec.start, as_of,
                                    [latest], spoken_date(latest.event_day)))
        return questions

    def first(self) -> list[JournalQuestion]:
        """The earliest entry with the detail, asked at the journal's end or on a day after
        the second one is written."""
        questions = []
        for same in _sample(self.rng, self._repeated(), self.n):
            as_of = (self.spec.end if self.rng.random() < 0.5
                     else self.rng.choice(_days(same[1].written_day, self.spec.end)))
            earliest = same[0]
            text = self.rng.choice(_KIND[earliest.kind].first).format(x=earliest.answer)
            questions.append(_draft("first", earliest.kind, text, as_of, self.spec.start,
                                    as_of, [earliest], spoken_date(earliest.event_day)))
        return questions

    def count(self) -> list[JournalQuestion]:
        """Every entry of the kind in a whole month of the journal (at least one). Most
        kind-months hold one entry: two thirds of the questions are drawn from those with
        several, where the journal has enough."""
        candidates = []
        for first, last in _months(self.spec.start, self.spec.end):
            if first.day != 1 or last != _month_end(first):
                continue  # a month the journal only partly covers
            for kind in KINDS:
                evidence = self._of_kind_between(kind, first, last)
                if 1 <= len(evidence) <= MAX_EVIDENCE:
                    candidates.append((kind, first, last, evidence))
        several = [c for c in candidates if len(c[3]) >= 2]
        picked = _sample(self.rng, several, self.n - self.n // 3)
        picked += _sample(self.rng, [c for c in candidates if len(c[3]) == 1],
                          self.n - len(picked))
        questions = []
        for kind, first, last, _ in picked:
            evidence = self._reporting_between(kind, first, last)
            cue = f"in {MONTH_NAMES[first.month - 1]} {first.year}"
            text = self.rng.choice(_KIND[kind].how_many).format(cue=cue)
            questions.append(_draft("count", kind, text, self.spec.end, first, last, evidence,
                                    str(len(evidence)), expected_count=len(evidence)))
        return questions

    def since(self) -> list[JournalQuestion]:
        """Every entry of the kind from a month's first day (or a date) to ``as_of``, three to
        ten weeks later."""
        def draw() -> JournalQuestion | None:
            kind = self.rng.choice(KINDS)
            day = self._random_day(last_margin=21)
            if self.rng.random() < 0.5:
                first, cue = day.replace(day=1), f"since {MONTH_NAMES[day.month - 1]} {day.year}"
            else:
                first, cue = day, f"since {spoken_date(day)}"
            as_of = first + timedelta(days=self.rng.randint(21, 70))
            text = self.rng.choice(_KIND[kind].perfect).format(cue=cue)
            if first < self.spec.start or as_of > self.spec.end:
                return None
            evidence = self._of_kind_between(kind, first, as_of)
            if not _all_written_by(self.of_kind[kind], as_of):
                return None
            return _draft("since", kind, text, as_of, first, as_of, evidence,
                          _answers(evidence))
        return self._draw(draw)

    def between(self) -> list[JournalQuestion]:
        """Every entry of the kind between two dates two to ten weeks apart."""
        def draw() -> JournalQuestion | None:
            kind = self.rng.choice(KINDS)
            first = self._random_day(last_margin=14)
            last = first + timedelta(days=self.rng.randint(14, 70))
            cue = f"between {spoken_date(first)} and {spoken_date(last)}"
            text = self.rng.choice(_KIND[kind].plural).format(cue=cue)
            if last > self.spec.end:
                return None
            evidence = self._of_kind_between(kind, first, last)
            return _draft("between", kind, text, self.spec.end, first, last, evidence,
                          _answers(evidence))
        return self._draw(draw)

    def _random_day(self, last_margin: int) -> date:
        span = max(0, (self.spec.end - self.spec.start).days - last_margin)
        return self.spec.start + timedelta(days=self.rng.randint(0, span))

    def _draw(self, draw: Callable[[], JournalQuestion | None]) -> list[JournalQuestion]:
        """Up to ``n`` distinct questions from ``draw`` whose evidence holds 1 to
        :data:`MAX_EVIDENCE` entries (``None``: the drawn range did not fit the journal)."""
        questions: dict[str, JournalQuestion] = {}
        for _ in range(self.n * ATTEMPTS_PER_QUESTION):
            if len(questions) >= self.n:
                break
            question = draw()
            if question is not None and 1 <= len(question.evidence) <= MAX_EVIDENCE:
                questions.setdefault(question.question, question)
        return list(questions.values())

    def event_relative(self) -> list[JournalQuestion]:
        """A day or week before or after a one-off, named by what happened: the kind's
        entries then (1 to 10), or, for a day, every entry of that day (a quarter of the
        questions, where the journal has enough)."""
        by_event_day: dict[date, list[Entry]] = {}
        for entry in self.entries:
            by_event_day.setdefault(entry.event_day, []).append(entry)
        whole_day, of_a_kind = [], []
        for anchor in (e for e in self.entries if e.kind == ONEOFF):
            for words, first_offset, last_offset in RELATIONS:
                first = anchor.event_day + timedelta(days=first_offset)
                last = anchor.event_day + timedelta(days=last_offset)
                if first < self.spec.start or last > self.spec.end:
                    continue
                cue = f"{words} {anchor.answer}"
                if first == last and first in by_event_day:  # a sparse journal skips days
                    whole_day.append((None, cue, first, last, by_event_day[first]))
                for kind in KINDS:
                    evidence = self._of_kind_between(kind, first, last)
                    if 1 <= len(evidence) <= MAX_EVIDENCE:
                        of_a_kind.append((kind, cue, first, last, evidence))
        picked = _sample(self.rng, whole_day, self.n // 4)
        picked += _sample(self.rng, of_a_kind, self.n - len(picked))
        questions = []
        for kind, cue, first, last, evidence in picked:
            wordings = WHOLE_DAY_QUESTIONS if kind is None else _KIND[kind].questions
            text = self.rng.choice(wordings).format(cue=cue)
            questions.append(_draft("event_relative", kind, text, self.spec.end, first, last,
                                    evidence, "" if kind is None else _answers(evidence)))
        return questions

    def paraphrase(self) -> list[JournalQuestion]:
        """A date question about the only entry of its kind that day, in words the entry
        does not use (a wording that shares a content word with it is never asked)."""
        candidates = _alone_on_their_day([e for e in self.entries if e.kind in _KIND])
        questions: list[JournalQuestion] = []
        for entry in self.rng.sample(candidates, len(candidates)):
            if len(questions) >= self.n:
                break
            entry_words = content_words(entry.text)
            wordings = [w for w in _KIND[entry.kind].paraphrases
                        if not (content_words(w.format(cue="")) - QUESTION_FUNCTION_WORDS)
                        & entry_words]
            if not wordings:
                continue
            day = entry.event_day
            text = self.rng.choice(wordings).format(cue=f"on {spoken_date(day)}")
            questions.append(_draft("paraphrase", entry.kind, text, self.spec.end, day, day,
                                    [entry], entry.answer))
        return questions


def _draft(style: str, kind: str | None, text: str, as_of: date, first: date, last: date,
           evidence: Sequence[Entry], answer: str,
           expected_count: int | None = None) -> JournalQuestion:
    """A question without its id (numbered once all of its style are drawn)."""
    return JournalQuestion(id="", style=style, kind=kind, question=text,
                           as_of=as_of.isoformat() + ASKED_AT, first_day=first, last_day=last,
                           evidence=tuple(e.id for e in evidence), answer=answer,
                           expected_count=expected_count)


def _all_written_by(entries: Sequence[Entry], day: date) -> bool:
    """Whether every entry whose event happened by ``day`` is written by then."""
    return not any(e.event_day <= day < e.written_day for e in entries)


def _answers(evidence: Sequence[Entry]) -> str:
    return "; ".join(e.answer for e in evidence)


def _alone_on_their_day(activities: Sequence[Entry]) -> list[Entry]:
    """The activity entries that are the only one of their kind on their event day."""
    per_day = Counter((e.kind, e.event_day) for e in activities)
    return [e for e in activities if per_day[(e.kind, e.event_day)] == 1]


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
    entries: int  # journal entries, one-offs included
    late_entries: int
    questions: int
    ingest_seconds: float
    one_offs: int = 0
    chat_turns: int = 0


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
    expected_count: int | None = None  # count questions: how many entries match
    count: int | None = None  # what the search said (SearchResponse.count)

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
    styles: tuple[str, ...] = STYLES

    @property
    def metric_names(self) -> tuple[str, ...]:
        return metric_names(self.k)

    def summary(self) -> dict[str, dict]:
        """{size: {entries, late_entries, one_offs, chat_turns, ingest_seconds,
        median_search_ms: {mode: ms}, modes: {mode: {group: {metric: mean, "n": count}}}}};
        groups are the styles and "overall"; the count group also has "count exact"."""
        out: dict[str, dict] = {}
        for bank in self.banks:
            rows = [r for r in self.results if r.size == bank.label]
            per_mode: dict[str, dict[str, dict[str, float]]] = {}
            median_ms: dict[str, float] = {}
            for mode in self.modes:
                mode_rows = [r for r in rows if r.mode == mode]
                groups = {style: [r for r in mode_rows if r.style == style]
                          for style in self.styles}
                groups["overall"] = mode_rows
                per_mode[mode] = {
                    name: _means(members, (*self.metric_names, COUNT_EXACT) if name == "count"
                                 else self.metric_names)
                    for name, members in groups.items()}
                median_ms[mode] = (round(statistics.median(r.ms for r in mode_rows), 2)
                                   if mode_rows else float("nan"))
            out[bank.label] = {
                "start": bank.start, "end": bank.end, "entries": bank.entries,
                "late_entries": bank.late_entries, "one_offs": bank.one_offs,
                "chat_turns": bank.chat_turns,
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


def score_response(question: JournalQuestion, response: SearchResponse,
                   k: int) -> dict[str, float]:
    """:func:`score` of the first ``k`` results; for a count question also "count exact":
    1.0 when the response's count is the number of evidence entries (a count of None, no
    count given, is not exact)."""
    metrics = score([c.memory.source_turns for c in response.results[:k]],
                    set(question.evidence), k)
    if question.expected_count is not None:
        metrics[COUNT_EXACT] = float(response.count is not None
                                     and response.count == question.expected_count)
    return metrics


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
    styles: Sequence[str] = STYLES,
    one_offs: bool = True,
    chat: bool = True,
    sparse: bool = False,
    progress: Callable[[str], None] | None = None,
) -> JournalEvalResult:
    """Generate each journal, ingest it into a fresh bank, ask every question of ``styles``
    in every mode.

    ``sizes`` are years (with ``seed``, ``per_style``, ``one_offs``, ``chat`` and ``sparse``)
    or full specs. Banks live in a temporary folder, or in ``bank_dir`` (kept, with each journal's
    JSONL, for inspection with ``ramem --db``; a second run reuses them and its ingest adds
    nothing).
    """
    if k < 1:
        raise ValueError("k must be at least 1")
    styles = select_styles(styles)
    started = time.perf_counter()
    specs = [s if isinstance(s, JournalSpec) else JournalSpec(
                 years=s, seed=seed, questions_per_style=per_style, one_offs=one_offs, chat=chat,
                 sparse=sparse)
             for s in sizes]
    banks: list[JournalBank] = []
    results: list[JournalQuestionResult] = []
    embedder_name = "none (BM25 only)"
    say = progress or (lambda _message: None)
    with bank_folder(bank_dir) as folder:
        for spec in specs:
            journal = generate_journal(spec)
            questions = [q for q in journal.questions if q.style in styles]
            say(f"{spec.label}: {len(journal.entries)} entries, {len(journal.chat)} chat turns, "
                f"{len(questions)} questions; building the bank")
            source = journal.write_jsonl(Path(folder) / f"{bank_stem(spec)}.jsonl")
            tag = "bm25" if embedder is None else "dense"
            with Memory.open(Path(folder) / f"{bank_stem(spec)}-{tag}.db", embedder=embedder,
                             country=JOURNAL_COUNTRY, defaults=SearchDefaults(),
                             default_embedder=NO_DEFAULT_EMBEDDER) as memory:
                if memory.embedder is not None:
                    embedder_name = memory.embedder.name
                tick = time.perf_counter()
                memory.ingest(source)
                ingest_seconds = time.perf_counter() - tick
                for question in questions:
                    results.extend(search_question(memory, spec.label, question, modes, k,
                                                   tuning))
            banks.append(JournalBank(
                label=spec.label, start=spec.start.isoformat(), end=spec.end.isoformat(),
                entries=len(journal.entries),
                late_entries=sum(1 for e in journal.entries if e.late_days),
                questions=len(questions), ingest_seconds=ingest_seconds,
                one_offs=sum(1 for e in journal.entries if e.kind == ONEOFF),
                chat_turns=len(journal.chat)))
            say(f"{spec.label}: done (ingest {ingest_seconds:.1f}s)")
    return JournalEvalResult(modes=tuple(modes), k=k, seed=seed, embedder=embedder_name,
                             banks=banks, results=results,
                             seconds=time.perf_counter() - started, styles=styles)


def select_styles(names: Sequence[str]) -> tuple[str, ...]:
    """The styles named (or "all", or "classic": the six before multi-step recall), in
    :data:`STYLES` order, then :data:`EXTRA_STYLES` (asked only when named: "all" is the
    standard set); ValueError for a name that is none of them."""
    groups = {"all": STYLES, "classic": CLASSIC_STYLES}
    known = (*STYLES, *EXTRA_STYLES)
    wanted: set[str] = set()
    for name in (n.strip() for n in names):
        if name not in (*groups, *known):
            raise ValueError(f"unknown style {name!r}; known: all, classic, "
                             f"{', '.join(known)}")
        wanted.update(groups.get(name, (name,)))
    if not wanted:
        raise ValueError("no style named")
    return tuple(s for s in known if s in wanted)


def bank_stem(spec: JournalSpec) -> str:
    """The file name of a journal's JSONL and bank (without suffix): one per distinct
    journal, so a kept bank is never reused for another."""
    return (f"journal-{spec.label}-seed{spec.seed}" + ("" if spec.one_offs else "-no-one-offs")
            + ("" if spec.chat else "-no-chat") + ("-sparse" if spec.sparse else ""))


def search_question(memory: Memory, size: str, question: JournalQuestion,
                    modes: Sequence[str], k: int, tuning: SearchTuning
                    ) -> Iterator[JournalQuestionResult]:
    evidence = set(question.evidence)
    for mode in modes:
        tick = time.perf_counter()
        response = tuned_search(memory, question.question, k=k, mode=mode, tuning=tuning,
                                as_of=question.as_of)
        ms = (time.perf_counter() - tick) * 1000
        top = response.results[:k]
        yield JournalQuestionResult(
            size=size, question_id=question.id, style=question.style, kind=question.kind,
            question=question.question, as_of=question.as_of,
            asked_days=[question.first_day.isoformat(), question.last_day.isoformat()],
            mode=mode, evidence=list(question.evidence),
            retrieved=[{"memory_id": c.memory.id, "source_turns": c.memory.source_turns,
                        "list": c.list_name, "rank": rank}
                       for rank, c in enumerate(top, 1)],
            first_hit_rank=first_hit_rank([set(c.memory.source_turns) for c in top], evidence),
            ms=round(ms, 2), metrics=score_response(question, response, k),
            expected_count=question.expected_count, count=response.count,
        )


def write_journal_jsonl(result: JournalEvalResult, out: Path) -> None:
    """One JSON line per question and mode (question, as_of, evidence, retrieved, metrics)."""
    with Path(out).open("w", encoding="utf-8") as handle:
        for row in result.results:
            handle.write(json.dumps(row.jsonl_row(), ensure_ascii=False) + "\n")


def format_journal_table(result: JournalEvalResult) -> str:
    """One block per journal size (a line about its bank, then a row per style and overall,
    and under the count row how often the count was exact), modes side by side."""
    summary = result.summary()
    names, modes = result.metric_names, result.modes
    columns = [(metric, mode) for metric in names for mode in modes]
    widths = [max(len(f"{metric} {mode}"), 6) for metric, mode in columns]
    header = f"{'size':<6}{'group':<16}{'n':>5}  " + "  ".join(
        f"{metric + ' ' + mode:>{w}}" for (metric, mode), w in zip(columns, widths, strict=True))
    lines = [header, "-" * len(header)]
    for label, block in summary.items():
        search_ms = " · ".join(f"{mode} {ms:.1f} ms" for mode, ms in
                               block["median_search_ms"].items())
        lines.append(f"{label}: {block['start']} to {block['end']} · {block['entries']} entries "
                     f"({block['late_entries']} written late, {block['one_offs']} one-offs) · "
                     f"{block['chat_turns']} chat turns · ingest "
                     f"{block['ingest_seconds']:.1f}s · median search {search_ms}")
        for group in (*result.styles, "overall"):
            n = int(block["modes"][modes[0]][group]["n"])
            cells = [f"{block['modes'][mode][group][metric]:>{width}.3f}" if n
                     else f"{'-':>{width}}"
                     for (metric, mode), width in zip(columns, widths, strict=True)]
            lines.append(f"{label:<6}{group:<16}{n:>5}  " + "  ".join(cells))
            if group == "count" and n:
                exact = " · ".join(f"{mode} {block['modes'][mode][group][COUNT_EXACT]:.3f}"
                                   for mode in modes)
                lines.append(f"{label:<6}{'  count exact':<16}{n:>5}  {exact}")
    return "\n".join(lines)
