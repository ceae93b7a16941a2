"""The held-out phrasebook: the natural journal written and asked in words never tuned on.

Written separately from ``phrasebook_dev``, from the schema in ``phrasebook`` alone: a rule
that improves dev and not this book is not kept.
"""

from __future__ import annotations

from .phrasebook import KindPhrases, OccasionPhrases, PeoplePhrases, Phrasebook, TripPhrases

_HIKE = KindPhrases(
    doing=(
        "Trudged the whole of {x} in drizzle; boots still drying by the radiator.",
        "{p} and I scrambled up {x} before lunch.",
        "Wet Sunday, so naturally we chose today to walk {x} end to end.",
        "early start: did the {x} loop with {p} and {p2}, back by eleven",
        "Long tramp over {x} this afternoon. Legs are done.",
        "Got out on {x} after work and reached the top before dark.",
        "hiked {x} today",
        "Took the train out and walked {x}, about fourteen miles all told.",
        "Finally ticked off {x} - steeper than the guidebook lets on.",
        "Met {p} at {place} at seven and we drove out to do {x}.",
        "Came back from {x} with a blister on my heel, but the views paid for it.",
    ),
    mentions=(
        "Thinking about having a go at {x} next month if the weather holds.",
        "Bought the map that covers {x}.",
        "A friend did {x} at the weekend and won't stop talking about it.",
        "Read a trip report on {x}: apparently the upper path is washed out.",
        "Would love to walk {x} one day, maybe in the autumn.",
        "Too windy to attempt {x} today, so I stayed in.",
        "New boots arrived; saving them for {x}.",
        "Plotted a route for {x} on the app. Haven't actually been.",
    ),
    requests=(
        "Is {x} doable in a day for someone reasonably fit?",
        "Suggest a few walks similar to {x}",
        "What should I pack for {x} in winter?",
        "Tell me the best place to start {x}",
        "How long does {x} usually take?",
        "Find me somewhere to park near {x}",
        "Recommend a pub near the end of {x}",
    ),
    last=(
        "When did I last walk {x}?",
        "When was the most recent time I hiked {x}?",
        "How long ago did I do {x}?",
        "{x} - when was I last out there?",
        "What's the latest date I was on {x}?",
    ),
    first=(
        "When did I first hike {x}?",
        "What was the first time I walked {x}?",
        "When did I do {x} for the very first time?",
        "{x}: when was my first time up there?",
    ),
    count=(
        "How many hikes did I do {cue}?",
        "How often did I get out on the trails {cue}?",
        "Number of hikes I went on {cue}?",
        "how many times did I go hiking {cue}",
    ),
    last_before=(
        "Before {event}, where had I last hiked?",
        "What was my last hike before {event}?",
        "Which trail did I walk most recently ahead of {event}?",
        "Last walk I did prior to {event}?",
    ),
    first_after=(
        "After {event}, what was the first hike I did?",
        "Which trail did I walk first after {event}?",
        "What was my first hike following {event}?",
        "When I got back to hiking after {event}, where did I go?",
    ),
    in_window=(
        "What hikes did I do {window}?",
        "Which trails did I walk {window}?",
        "Did I get out hiking {window}? Where?",
        "List the walks I went on {window}",
    ),
)

_MEAL = KindPhrases(
    doing=(
        "Made {x} for dinner - doubled the garlic.",
        "{p} came over and we cooked {x} together.",
        "Cold evening, so I made {x} from scratch.",
        "tried my hand at {x} tonight; edible, just",
        "Finally got round to cooking {x} from that library cookbook.",
        "{p} and {p2} round for tea; I made {x}.",
        "{x} for supper. Leftovers for tomorrow.",
        "Spent most of Sunday afternoon on {x} and it was worth every minute.",
        "After the shopping at {place} I went home and cooked {x}.",
    ),
    mentions=(
        "Saw a recipe for {x} in the weekend paper and tore it out for later.",
        "Bought everything for {x}, then was too tired and had toast instead.",
        "My sister keeps going on about the {x} at that new place in town.",
        "Craving {x}. Maybe at the weekend.",
        "Read a review that raved about the {x} at the corner bistro.",
        "A colleague brought {x} in for lunch; I stuck to my sandwich.",
        "Added {x} to next week's meal plan.",
    ),
    requests=(
        "What wine goes with {x}?",
        "Give me a quick weeknight version of {x}",
        "Can {x} be frozen?",
        "Suggest a side dish for {x}",
        "Is {x} all right made the day before?",
        "List the ingredients I'd need for {x}",
        "Scale {x} up for six people",
    ),
    last=(
        "When did I last make {x}?",
        "When was the last time I had {x}?",
        "How long since I cooked {x}?",
        "{x} - when did we last have it?",
    ),
    first=(
        "When did I first cook {x}?",
        "What was the first time I made {x}?",
        "When did I have {x} for the first time?",
    ),
    count=(
        "How many meals did I make {cue}?",
        "How often did I cook {cue}?",
        "What's the tally of meals I cooked {cue}?",
        "how many times did I cook something {cue}",
    ),
    last_before=(
        "What did I last cook before {event}?",
        "Before {event}, which dish had I made most recently?",
        "Last meal I cooked prior to {event}?",
    ),
    first_after=(
        "What was the first thing I cooked after {event}?",
        "After {event}, which dish did I make first?",
        "First meal I made following {event}?",
    ),
    in_window=(
        "What did I cook {window}?",
        "Which dishes did I make {window}?",
        "Any cooking {window}? What did I make?",
    ),
)

_FILM = KindPhrases(
    doing=(
        "Caught {x} at the Rio with {p}.",
        "Streamed {x} after dinner; the ending fell flat.",
        "Finally sat down with {x}. Two and a half hours well spent.",
        "Rainy evening, so {p} and I watched {x} under a blanket.",
        "saw {x} at the late showing, cinema nearly empty",
        "Put {x} on while ironing and ended up just watching it.",
        "{p} and {p2} came round and we watched {x}.",
        "Movie night: {x}. Popcorn burned, film didn't disappoint.",
        "Half-term treat - took my nephew to see {x}.",
        "Outdoor screening of {x} at {place}; brought a rug and a flask.",
    ),
    mentions=(
        "Trailer for {x} looks promising.",
        "Booked tickets for {x} next Friday.",
        "Read a scathing review of {x} over breakfast.",
        "Added {x} to the watchlist, which is now absurdly long.",
        "Everyone at work is quoting {x} and I still haven't seen it.",
        "My brother watched {x} last night and says I'd hate it.",
        "Almost put {x} on tonight but nodded off on the sofa first.",
    ),
    requests=(
        "Is {x} suitable for a ten-year-old?",
        "Recommend films like {x}",
        "Where can I stream {x}?",
        "Summarise the plot of {x} without spoilers",
        "Who directed {x}?",
        "Give me three more films in the vein of {x}",
    ),
    last=(
        "When did I last watch {x}?",
        "When was the most recent time I saw {x}?",
        "How long ago did I see {x}?",
        "{x} - when did I watch that?",
    ),
    first=(
        "When did I first see {x}?",
        "What's the earliest I watched {x}?",
        "When did I watch {x} for the first time?",
    ),
    count=(
        "How many films did I watch {cue}?",
        "How often did I see a film {cue}?",
        "Number of movies I watched {cue}?",
    ),
    last_before=(
        "What was the last film I watched before {event}?",
        "Before {event}, which movie had I seen most recently?",
        "Most recent film I saw ahead of {event}?",
    ),
    first_after=(
        "After {event}, what was the first film I saw?",
        "Which movie did I watch first after {event}?",
        "First film I watched following {event}?",
    ),
    in_window=(
        "What films did I watch {window}?",
        "Which movies did I see {window}?",
        "Any films {window}? Which ones?",
    ),
)

_BOOK = KindPhrases(
    doing=(
        "Finished {x} in the bath; the last chapter was a gut punch.",
        "Read {x} cover to cover on the train.",
        "Lazy Sunday - got through the rest of {x} in one sitting.",
        "stayed up far too late with {x}",
        "Spent the afternoon at {place} reading {x}.",
        "Devoured {x}. Passing it on to {p}.",
        "Lunch break with {x}; completely hooked.",
        "Picked {x} back up this evening and read it through to the end.",
        "{p} and I sat in the garden reading, me with {x}.",
    ),
    mentions=(
        "Ordered a copy of {x}.",
        "Mum lent me {x}; it's on the pile by the bed.",
        "Heard the author of {x} on the radio.",
        "The review of {x} in the paper makes it sound like hard work.",
        "Wish I had time for {x} - maybe on holiday.",
        "Spotted {x} in the charity shop window; didn't go in.",
        "A colleague is halfway through {x} and keeps reading bits out to us.",
    ),
    requests=(
        "Is {x} worth reading?",
        "Recommend something like {x}",
        "What's {x} about?",
        "Give me discussion questions for {x}",
        "How long is {x}?",
        "Suggest what to read after {x}",
    ),
    last=(
        "When did I last read {x}?",
        "When was I most recently reading {x}?",
        "How long has it been since I read {x}?",
        "{x} - when did I read it last?",
    ),
    first=(
        "When did I first read {x}?",
        "What's the earliest date I was reading {x}?",
        "When did I read {x} for the first time?",
    ),
    count=(
        "How many times did I read {cue}?",
        "How often did I get some reading done {cue}?",
        "How many reading sessions did I log {cue}?",
    ),
    last_before=(
        "What was I last reading before {event}?",
        "Before {event}, which book had I read most recently?",
        "Last book I read prior to {event}?",
    ),
    first_after=(
        "What was the first book I read after {event}?",
        "After {event}, which book did I pick up first?",
        "Which book did I read first following {event}?",
    ),
    in_window=(
        "What did I read {window}?",
        "Which books was I reading {window}?",
        "Any reading {window}? Which books?",
    ),
)

_REPAIR = KindPhrases(
    doing=(
        "Sorted out {x} at last.",
        "Patched {x} up with filler and a lick of paint.",
        "Got {x} working again after an hour of swearing.",
        "Took {x} apart and put it back together properly this time.",
        "{p} lent me a drill and we fixed {x} before lunch.",
        "Wet Saturday, so I finally tackled {x}.",
        "fixed {x}; only took three trips to the hardware shop",
        "Spent the evening mending {x}. Fingers crossed it holds.",
        "Had a proper go at {x} this morning and it's as good as new.",
        "Picked up parts at {place} and repaired {x} the same afternoon.",
    ),
    mentions=(
        "{x} is playing up again.",
        "Bought the parts for {x}; will get to it at the weekend.",
        "Watched a video on fixing {x}.",
        "Landlord says someone will come out about {x}.",
        "Must do something about {x} before winter.",
        "Dad has offered to fix {x} when he visits.",
        "Thought about tackling {x} today, decided against it.",
    ),
    requests=(
        "How do I fix {x}?",
        "What tools do I need for {x}?",
        "Is {x} a job for a professional?",
        "Give me step-by-step instructions for repairing {x}",
        "Find a local handyman who could look at {x}",
        "List what might be wrong with {x}",
    ),
    last=(
        "When did I last fix {x}?",
        "When was the most recent time I repaired {x}?",
        "How long ago did I sort out {x}?",
        "{x} - when did I last mend it?",
    ),
    first=(
        "When did I first repair {x}?",
        "What was the first time I fixed {x}?",
        "When did I have to mend {x} for the first time?",
    ),
    count=(
        "How many repairs did I do {cue}?",
        "How often did I fix things {cue}?",
        "How many DIY jobs did I get done {cue}?",
    ),
    last_before=(
        "What was the last thing I repaired before {event}?",
        "Before {event}, what had I fixed most recently?",
        "Most recent repair I did prior to {event}?",
    ),
    first_after=(
        "What was the first thing I fixed after {event}?",
        "After {event}, which repair did I do first?",
        "First DIY job I did following {event}?",
    ),
    in_window=(
        "What did I fix {window}?",
        "Which repairs did I do {window}?",
        "Did I mend anything {window}? What?",
    ),
)

_CONCERT = KindPhrases(
    doing=(
        "Saw {x} at the Corn Exchange with {p}; ears still ringing.",
        "{x} live tonight - what a set.",
        "Stood right at the front for {x}; {p} and {p2} hung back by the bar.",
        "went to see {x}, they played the old stuff too",
        "Caught {x} at {place} - free gig, packed out.",
        "Late one: {x} didn't come on till ten, but worth the wait.",
        "Dragged {p} along to see {x} and now they're a convert.",
        "Friday night, so we went to hear {x} play the town hall.",
    ),
    mentions=(
        "Tickets for {x} went on sale and sold out in minutes.",
        "Had {x} on repeat all afternoon while working.",
        "{x} have announced a tour; nothing near us though.",
        "Read an interview with {x} on the train.",
        "Bought two tickets to see {x} in May.",
        "My cousin saw {x} last night and sent me a blurry video.",
        "Would love to see {x} live one day.",
    ),
    requests=(
        "When are {x} next touring?",
        "Is it worth seeing {x} live?",
        "Suggest bands similar to {x}",
        "Give me the setlist {x} usually play",
        "Recommend an album by {x} to start with",
        "How long do {x} usually play for?",
    ),
    last=(
        "When did I last see {x} live?",
        "When did I last go to a gig by {x}?",
        "How long ago did I see {x} play?",
        "{x} - when did I last catch them live?",
    ),
    first=(
        "When did I first see {x}?",
        "What was the first time I saw {x} play?",
        "When did I go to see {x} for the first time?",
    ),
    count=(
        "How many gigs did I go to {cue}?",
        "How often did I see live music {cue}?",
        "How many concerts did I get to {cue}?",
    ),
    last_before=(
        "What was the last gig I went to before {event}?",
        "Before {event}, which band had I seen most recently?",
        "Most recent concert I went to ahead of {event}?",
    ),
    first_after=(
        "After {event}, what was the first gig I went to?",
        "Which band did I see first after {event}?",
        "First concert I went to following {event}?",
    ),
    in_window=(
        "Which gigs did I go to {window}?",
        "What bands did I see {window}?",
        "Any live music {window}? Who did I see?",
    ),
)

_TRIP = TripPhrases(
    plans=(
        "Booked flights to {city} for next month.",
        "Started a packing list for {city}; it's already too long.",
        "Bought a guidebook to {city} and got through half of it on the bus.",
        "{city} in three weeks! Sorted the hotel tonight.",
        "Changed some money for {city}.",
        "looked up trains from the airport into {city}",
    ),
    arrival=(
        "Landed in {city} mid-afternoon and went straight out for a wander.",
        "Made it to {city}. Hotel room smaller than the photos.",
        "first evening in {city} and I'm already in love with the place",
        "Train pulled into {city} just after six; found the flat without getting lost.",
        "Arrived in {city}, tired but happy.",
        "We got to {city} around lunchtime after a delayed flight.",
    ),
    meals=(
        "Had {food} at a tiny place near the station.",
        "Lunch was {food}, eaten standing up at a market stall.",
        "Tried {food} for the first time - more tomorrow, please.",
        "Dinner in {city}: {food}, and far too much of it.",
        "we shared {food} at a table by the window",
        "Found a cafe doing proper {food}; couldn't stop at one helping.",
    ),
    meetings=(
        "Ended up chatting for an hour in a bar with {local}.",
        "Spent the afternoon being shown around by {local}.",
        "Shared a table at breakfast with {local}; lovely company.",
        "Met {local}. We swapped numbers.",
        "Best part of the day was meeting {local}.",
        "Had coffee in {city} with {local} - what a character.",
    ),
    sights=(
        "Spent the morning at {sight}.",
        "Climbed up to {sight} for the view.",
        "Queued an hour for {sight}; worth it.",
        "{sight} in the rain - still magnificent.",
        "We wandered round {sight} until they shut the gates.",
        "Finally saw {sight} in {city}; photos don't do it justice.",
    ),
    departure=(
        "Last morning in {city}; packed and out by ten.",
        "Flew home. Already miss {city}.",
        "Back home tonight, washing machine on straight away.",
        "Said goodbye to {city} and caught the early train home.",
        "home again, cat unimpressed",
    ),
    afterthoughts=(
        "Still thinking about {city}. Printed a few photos.",
        "Sorted through the {city} pictures tonight.",
        "Missing {city}; the commute feels very grey after that.",
        "Made a photo book of {city} for Mum.",
        "Someone at work asked about {city} and I talked for twenty minutes.",
    ),
    requests=(
        "What's the weather like in {city} this time of year?",
        "Make me a packing list for a week in {city}",
        "Is {city} walkable or do I need a transport pass?",
        "Recommend somewhere to eat in {city} that isn't touristy",
        "What should I see in {city} if I only have three days?",
        "Teach me a few useful phrases for {city}",
    ),
    ate=(
        "What did I eat in {city}?",
        "On the {city} trip, what food did I try?",
        "Which dishes did I have while I was away in {city}?",
        "What were we eating when we were in {city}?",
    ),
    met=(
        "Who did I meet in {city}?",
        "Who did I get talking to on my {city} holiday?",
        "Which people did I meet while I was in {city}?",
        "On the {city} trip, who did I come across?",
    ),
    did=(
        "What did I see in {city}?",
        "What sights did I visit on the {city} trip?",
        "What did we get up to when we were in {city}?",
        "Where did I go while I was away in {city}?",
    ),
)

_PEOPLE = PeoplePhrases(
    meetings=(
        "Coffee with {p} at {place}.",
        "Bumped into {p} at {place} and we talked for ages.",
        "{p} came round this evening; we sat in the garden till dark.",
        "lunch with {p}, first time in months",
        "Met {p} for a drink after work.",
        "Caught up with {p} over tea at {place}.",
        "{p} popped in on the way home from work.",
        "Saw {p} at {place} - looking well.",
        "Spent the afternoon with {p}; good to see each other properly.",
    ),
    mentions=(
        "{p} rang for a long chat.",
        "Text from {p}: the new job is going well.",
        "Postcard from {p} on the mat this morning.",
        "Heard through a friend that {p} is moving abroad.",
        "Must call {p} back.",
        "Video call with {p} - the line kept dropping.",
        "{p} sent photos of the new puppy.",
    ),
    last_seen=(
        "When did I last see {p}?",
        "When did {p} and I last meet up in person?",
        "How long has it been since I saw {p}?",
        "What was the last time I actually saw {p} face to face?",
        "{p} - when did we last meet?",
    ),
)

_OCCASIONS = {
    "mum_birthday": OccasionPhrases(
        entries=(
            "Mum's {nth} birthday dinner tonight - she pretended not to enjoy the fuss.",
            "Took Mum out for her {nth}; the whole family came.",
            "Mum's {nth} today. Cake, candles, a few tears.",
        ),
        names=(
            "Mum's {nth_word}",
            "Mum's {nth} birthday",
            "the dinner for Mum's {nth_word} birthday",
            "Mum's {nth} birthday dinner",
        ),
    ),
    "my_birthday": OccasionPhrases(
        entries=(
            "My {nth} birthday. Feeling old.",
            "{nth} birthday today - breakfast in bed and far too many cards.",
            "Another year gone: my {nth}. Quiet day, just what I wanted.",
        ),
        names=(
            "my {nth_word} birthday",
            "my {nth} birthday",
            "my {nth_word}",
        ),
    ),
    "funeral": OccasionPhrases(
        entries=(
            "{who}'s funeral today. Hard day.",
            "Said goodbye to {who} this morning; the church was full.",
            "We buried {who} today. Sandwiches at the pub afterwards and lots of stories.",
        ),
        names=(
            "{who}'s funeral",
            "the funeral for {who}",
            "the day we buried {who}",
        ),
    ),
    "move": OccasionPhrases(
        entries=(
            "Moving day. Everything we own is now in boxes on {street}.",
            "Got the keys and moved into the new place on {street}.",
            "moved to {street} today - never again",
        ),
        names=(
            "the move",
            "moving to {street}",
            "the move to {street}",
            "moving house",
        ),
    ),
    "operation": OccasionPhrases(
        entries=(
            "{part} operation this morning; groggy but fine.",
            "Had the op on my {part}. Nurses were lovely.",
            "Surgery on my {part} today. Home by teatime with lots of painkillers.",
        ),
        names=(
            "my {part} operation",
            "the {part} surgery",
            "the op on my {part}",
            "my operation",
        ),
    ),
    "new_job": OccasionPhrases(
        entries=(
            "First day at {company}. Nobody knew where my laptop was.",
            "Started at {company} today - so many names to learn.",
            "New job at {company}: badge, induction, free coffee.",
        ),
        names=(
            "my first day at {company}",
            "starting at {company}",
            "the new job at {company}",
            "the new job",
        ),
    ),
    "wedding": OccasionPhrases(
        entries=(
            "{p}'s wedding today. Danced until my feet gave out.",
            "{p} got married! Beautiful ceremony, awful weather.",
            "Watched {p} get married this afternoon; cried through the vows.",
        ),
        names=(
            "{p}'s wedding",
            "the day {p} got married",
            "{p}'s big day",
        ),
    ),
}

HELD_OUT = Phrasebook(
    name="held-out",
    kinds={
        "hike": _HIKE,
        "meal": _MEAL,
        "film": _FILM,
        "book": _BOOK,
        "repair": _REPAIR,
        "concert": _CONCERT,
    },
    trip=_TRIP,
    people=_PEOPLE,
    remarks=(
        "absolutely chucking it down",
        "worth it",
        "not my finest hour",
        "need an early night",
        "glorious sunshine for once",
        "phone died halfway through",
        "freezing cold but clear",
        "more tired than I'd like to admit",
        "forgot my keys, naturally",
        "good day overall",
        "kettle on, feet up",
        "the cat sat on my feet all evening",
    ),
    filler=(
        "Long day at work, mostly spreadsheets.",
        "Grey and drizzly all day. Didn't leave the house except for milk.",
        "Errands: post office, bank, {place}.",
        "Felt a bit flat today, no particular reason.",
        "Meetings back to back until five.",
        "Windy enough to blow the bins over.",
        "Paid the bills and tidied the spare room.",
        "Quiet one. Early night.",
        "Emailed {p} about the quiz night, no reply yet.",
        "Frost on the car this morning, took ages to scrape off.",
        "good mood today for no reason at all",
        "Queued forever at {place}.",
        "Sorted the recycling and did two loads of washing.",
        "Dentist at nine, then work.",
        "Sunny but cold; sat by the window with a cup of tea.",
        "Work was fine. Nothing to report.",
    ),
    day_after=(
        "What did I do the day after {event}?",
        "The day after {event} - how did I spend it?",
        "What happened on the day after {event}?",
        "Anything in the journal for the day after {event}?",
    ),
    day_before=(
        "What did I do the day before {event}?",
        "The day before {event}, what was I up to?",
        "How did I spend the day before {event}?",
        "What's in my journal for the day before {event}?",
    ),
    occasions=_OCCASIONS,
    trip_names=(
        "the {city} trip",
        "my holiday in {city}",
        "the time we went to {city}",
        "our visit to {city}",
    ),
)
