"""``names.mentioned_names``: the people a text names, read without a model;
``name_candidates``: what of a question could be a name; ``named_phrases``: the names of
people, places and things a question is about; ``named_works``: the works a text names by
their titles."""

from __future__ import annotations

import pytest

from ramem_local.names import (
    mentioned_names,
    name_candidates,
    named_phrases,
    named_works,
    names_a_person_as_object,
    read_names,
)

CHAT = ("me", "assistant")


@pytest.mark.parametrize(("text", "names"), [
    # a capitalised word inside a sentence
    ("Remind me that Lena is vegetarian when I book the restaurant", ["Lena"]),
    ("Hiked up Eagle Ridge with Ana and Leo.", ["Ana", "Leo"]),
    ("I felt tired and stayed home until Chloe dropped by; Grace sent a postcard.",
     ["Chloe", "Grace"]),
    # possessives name the person
    ("We celebrated at Lena's place", ["Lena"]),
    ("dinner at Ana’s tonight", ["Ana"]),
    # a full name is one name; initials join it
    ("I'm reading a novel by Frank Herbert.", ["Frank Herbert"]),
    ("Have you read all of George R. R. Martin's books?", ["George R. R. Martin"]),
    ("Do you have a favorite J.K. Rowling quote?", ["J.K. Rowling"]),
    ("my colleague Rob invited me", ["Rob"]),
    # kinship words and titles are not part of the name
    ("Visited Aunt Rosa in Graz; we cooked together.", ["Rosa"]),
    ("Took the train to visit Grandpa Theo", ["Theo"]),
    ("Dr. Patel said the results are fine", ["Patel"]),
    # greetings and thanks in front of a name
    ("Hey Mel! Been ages.", ["Mel"]),
    ("Thanks, Nate! And LeBron is the man.", ["Nate", "LeBron"]),
    # "to" is a person after a verb of speaking, a place after one of going
    ("I talked to Lena about it", ["Lena"]),
    # a name starting a sentence counts with a sign that it is one
    ("Lena's birthday is on Friday.", ["Lena"]),
    ("Anthony and I went to a charity thing.", ["Anthony"]),
    ("Ben said he would come.", ["Ben"]),
    ("O'Neil called. Spider-Man is the best", ["O'Neil"]),
    ("I met Spider-Man's creator Stan Lee", ["Spider-Man", "Stan Lee"]),
])
def test_names_a_text_mentions(text, names):
    assert mentioned_names(text, CHAT) == names


@pytest.mark.parametrize("text", [
    # sentence starts, "I" and its contractions, chat words
    "Finding a community where I'm accepted has meant a lot.",
    "Kickboxing is a perfect way to stay in shape. I'm in. I've done it.",
    "Thanks! Wow! Congrats! Bye for now!",
    "Life's been pretty wild lately. Parenting's such a big responsibility.",
    # months, weekdays, holidays
    "We met in May and again on Monday, then last Fri, then at Christmas.",
    "Last Friday I finished it; next Sunday I start again.",
    "See you on Tuesday, or maybe Saturday",
    # acronyms, brands in capitals, languages and nationalities
    "I went to an LGBTQ support group and saw NYC and the UK. I love DIYs.",
    "Learning German is tough; I took French and some Spanish at a European school.",
    # places: after a preposition of place, "to" after going, a word of places in the name
    "We walked to Pine Lake and hiked Eagle Ridge near Fort Wayne.",
    "Plan three days in Lisbon for me",
    "Took a short trip last week to Rome. I went to Porto.",
    "We saw Luna Brass at Harbour Hall, then went to the Blue Room and Club Meridian.",
    "I want to visit The Cliffs of Moher.",
    "I stayed in Ghent, then drove to Bergen",
    # titles: quoted, after "the", after a verb of watching (two words), before a work word
    'I watched "Little Women" and read "The Alchemist".',
    "I watched Night Harbor and saw Paper Moon Rising.",
    "I loved the Harry Potter movies and a Harry Potter trivia contest.",
    "The Wolves are my team and The Hobbit is my favorite.",
    "I'm a huge fan of Lord of the Rings!",
    "I've always liked Under Armour",
    # a word after a capitalised possessive is the rest of a title
    "I read The Cartographer's Daughter",
])
def test_what_is_no_person(text):
    assert mentioned_names(text, CHAT) == []


def test_a_participant_counts_wherever_it_stands_and_is_spelled_as_the_participant():
    assert mentioned_names("Caroline, so glad you came! Ask jon", ["Caroline", "Jon Smith"]) \
        == ["Caroline"]
    assert mentioned_names("I met Jon yesterday", ["Jon Smith", "Mel"]) == ["Jon Smith"]


def test_each_name_once_in_the_order_it_first_appears():
    assert mentioned_names("Ben met Ana. Then Ana met Ben and Leo.", CHAT) == \
        ["Ana", "Ben", "Leo"]


def test_a_name_in_lower_case_is_not_read():
    """The limit: without capitals there is nothing to go by."""
    assert mentioned_names("remind me that lena is vegetarian", CHAT) == []


def test_the_same_text_always_gives_the_same_names():
    text = "Walked to Bear Creek with Olga; Pablo sent a postcard."
    assert mentioned_names(text, CHAT) == mentioned_names(text, CHAT) == ["Olga", "Pablo"]


@pytest.mark.parametrize(("question", "candidates"), [
    ("What did I do with Lena last week?", ["lena", "lena last week", "week"]),
    ("what about lena's diet?", ["lena", "lena diet", "diet"]),
    ("Did I see J.K. Rowling?", ["see", "see j", "see j k", "see j k rowling", "j", "j k",
                                "j k rowling", "k", "k rowling", "rowling"]),
    ("Who is it?", []),
])
def test_name_candidates_are_the_runs_of_words_a_name_could_be(question, candidates):
    assert name_candidates(question) == candidates


def test_a_name_at_a_sentence_start_waits_for_its_conversation():
    read = read_names("Lena is coming. Kickboxing is fun.", CHAT)
    assert read.names == () and read.at_sentence_start == ("Lena", "Kickboxing")
    assert read.confirmed(["lena", "me"]) == ["Lena"]
    assert mentioned_names("Lena is coming.", CHAT, known=["LENA"]) == ["Lena"]


@pytest.mark.parametrize(("question", "phrases"), [
    ("When did I last start reading The Silent Engine?", ["Silent Engine"]),
    ("When was the last time I saw Blue Meridian?", ["Blue Meridian"]),
    ("When did I first see Echo Valley Band live?", ["Echo Valley Band"]),
    ("When was the last time I went to see Uncle Karl?", ["Uncle Karl"]),
    ("When did I last watch Night Harbor?", ["Night Harbor"]),
    ("When did I last hike at Stone Bridge canyon with Maya?", ["Stone Bridge", "Maya"]),
    ("When did Caroline go to the support group?", ["Caroline"]),
    # must not fire: the first word of a sentence, months and weekdays, lower case, acronyms
    ("When did I last cook shakshuka in March?", []),
    ("Blue is my colour. When did I last paint on a Sunday?", []),
    ("when did i last visit lena?", []),
    ("When did I last go to an LGBTQ meeting?", []),
    ("What did I do at Easter with my Aunt on Sunday?", []),
])
def test_named_phrases_are_the_capitalised_runs_inside_a_sentence(question, phrases):
    assert named_phrases(question) == phrases


@pytest.mark.parametrize(("text", "works"), [
    # two words or more after a verb of watching, reading, hearing
    ("On Monday I watched Night Harbor with Jonas at the cinema", ["night harbor"]),
    ("I went to see Orchid Quartet at Harbour Hall with Leo", ["orchid quartet"]),
    # an article before it, capitalised or not, makes one word enough
    ("I saw The Ferryman at home with Iris", ["ferryman"]),
    ("Heard the Velvet Tides live at the Old Theatre", ["velvet tides"]),
    # the verb may open the sentence
    ("Saw Small Hours at home with Farid; the ending made no sense.", ["small hours"]),
    ("me: Began The Quiet Orchard on the train", ["quiet orchard"]),
    # a capitalised article inside a sentence, after no preposition of place
    ("Picked up The Cartographer's Daughter at the library", ["cartographer's daughter"]),
    # quoted after such a verb
    ('We watched "Dune" last night', ["dune"]),
    ('I read the "Harry Potter" books', ["harry potter"]),
    # each once, in order
    ("Watched Red Signal, then saw The Ferryman; Red Signal won", ["red signal", "ferryman"]),
])
def test_named_works_are_titles_after_a_verb_of_watching_or_reading(text, works):
    assert named_works(text) == works


@pytest.mark.parametrize("text", [
    "I saw Lena at the market",  # one word after the verb: a person
    "Drove out to see Aunt Rosa in Porto",  # a kinship word starts a person
    "I drove out to see cousin Mirela in Bruges",
    "Did the long loop around Hawk Hill alone",  # places
    "Heard the band live at The Old Theatre",
    "went to The Blue Room with Ana",
    "I started the new job at Lumen Works",
    "Hawk Hill was muddy today",  # a sentence start without a verb of watching
    'She said "see you soon" and left',  # a quote after no such verb
])
def test_what_names_no_work(text):
    assert named_works(text) == []


@pytest.mark.parametrize(("text", "names"), [
    ("Took the train to visit Grandpa Theo; we walked along the canal.", True),
    ("I drove out to see my sister Lena in Bruges", True),
    ("Took the train to visit my parents; we cooked together.", True),
    ("Took the train to visit my old friend Tomas", True),
    ("Called Mum to tell her the keys work.", True),
    ("I felt restless and phoned Karin to talk", True),
    # companions, subjects, after a preposition
    ("Hiked up Eagle Ridge with Ben; the view from the top was clear.", False),
    ("Ben sent a postcard.", False),
    ("I stayed home until Chloe dropped by.", False),
    ("Cooked pork dumplings for Chloe.", False),
    # titles after a verb of watching or hearing
    ("Saw Small Hours at home with Farid.", False),
    ("I went to see Orchid Quartet at Harbour Hall.", False),
    ("Went to see the Velvet Tides at Harbour Hall.", False),
    ("Finally watched The Ferryman.", False),
])
def test_a_person_as_the_object_of_a_verb(text, names):
    assert names_a_person_as_object(text) is names
