"""What a memory is (``ingest.acts``): read once at ingest from the statement's form. The
table is the specification, with the rows that must stay reports."""

from __future__ import annotations

import pytest

from ramem_local.ingest.acts import read_act


@pytest.mark.parametrize(("text", "act"), [
    ("Suggest films like Night Harbor", "request"),
    ("Give me a packing list for Oslo", "request"),
    ("Recommend books similar to Paper Birds", "request"),
    ("Please summarise the premise of The Copper Key", "request"),
    ("Plan three days in Lisbon for me", "request"),
    ("List films like Glass Mountain", "request"),
    ("Is Night Harbor worth watching?", "question"),
    ("Who directed Red Signal?", "question"),
    # a report told to the assistant stays one
    ("I watched Small Hours yesterday; suggest something similar", "report"),
    ("Thanks!", "report"),
])
def test_what_is_said_to_an_assistant(text: str, act: str) -> None:
    assert read_act(text, "me", to_assistant=True) == act


@pytest.mark.parametrize(("text", "act"), [
    ("Caught Night Harbor at the Picturehouse with Lena.", "report"),
    ("we put on The Ferryman after dinner", "report"),
    ("Dinner: fish pie, from scratch", "report"),
    ("Long lunch with Lena", "report"),
    ("Finally sat through Glass Mountain", "report"),
    ("Lena and I went to the market together", "report"),
    ("Tom came round and we made fish pie together", "report"),
    ("Walked Fox Valley end to end with Sofia.", "report"),
    ("Watched Small Hours; must see the sequel", "report"),
    ("Bought a map of Fox Valley for the summer.", "report"),
    ("Thinking about doing Fox Valley next weekend", "plan"),
    ("Would love to walk Harrow Fell again sometime", "plan"),
    ("Bought tickets for Small Hours next Friday", "plan"),
    ("Booked somewhere to stay in Naples.", "plan"),
    ("Must read The Copper Key one day", "plan"),
    ("Paper Birds is on the library's waiting list", "plan"),
    ("Sofia finished The Silent Engine and loved it", "other"),
    ("A colleague quoted The Ferryman all day", "other"),
    ("The trailer for The Ferryman looks great", "other"),
    ("Lena came round for dinner", "other"),
    # a verb's past that is another verb's base ("to saw") is the past after a name
    ("Tom saw the Velvet Tides last week and loved it", "other"),
    ("Priya found The Copper Key at a stall", "other"),
    ("Tom and I saw the Velvet Tides", "report"),
    # a name's words are no verb ("Pines", "Tides")
    ("The Hollow Pines at the Old Theatre tonight, loud and wonderful", "report"),
    ("The Velvet Tides at the park stage with Tom", "report"),
    ("Saw the Velvet Tides with Tom", "report"),
    ("Is it going to rain tomorrow?", "question"),
    # a plan in other words; what was planned and done is a report
    ("Planning a trip to Rome", "plan"),
    ("Fancy a hike on Sunday", "plan"),
    ("Planned the garden beds with Lena", "report"),
    ("Went to a fancy dress party", "report"),
    # a command in a journal is no request: nobody is asked
    ("Sort the receipts", "report"),
    # news relayed in the writer's words: a name and its finite verb after the clause's own
    # verb, adverb or object is someone else's doing
    ("Heard Tom got a promotion", "other"),
    ("Heard that Tom is moving to Leeds", "other"),
    ("Found out Lena is getting married", "other"),
    ("Turns out Marek got the job at Kestrel", "other"),
    ("Apparently Sofia moved to Bristol", "other"),
    ("Mum told me Aisha got engaged", "other"),
    ("Heard Aunt Rosa died", "other"),
    # ... not the writer's own doing beside a name
    ("Told Tom I was moving", "report"),
    ("Found out I got the job!", "report"),
    ("Heard back from Kestrel: I got the job", "report"),
    ("Helped Tom move house", "report"),
    ("Watched Lena play in the final", "report"),
    ("Went to the party Lena threw", "report"),
    ("Ate the cake Mum made", "report"),
    ("heard Luna Brass live, they played the old songs", "report"),
    ("Called Mum, she was fine", "report"),
    ("Back home from Copenhagen.", "report"),
    ("Drove up to Harrow Fell with Tom", "report"),
    # a name of several words may open with a word that is also a verb or a noun
    ("Echo Valley Band announced a tour", "other"),
    ("Bill Hart sent a voice note", "other"),
    # ... but the writer's own verb before a name is not one, nor an adverb, nor a command
    ("Saw The Silent Engine in a shop window", "report"),
    ("Opened Under the Linden Tree at last", "report"),
    ("Watched Glass Mountain tonight", "report"),
    ("Finally Glass Mountain tonight, worth the wait", "report"),
    ("Walking Harrow Fell with Tom", "report"),
    ("Mark the date in the calendar", "report"),
    # a verb's past the lexicon does not know is a verb's past all the same
    ("Lena texted about the weekend.", "other"),
    ("Priya facetimed from Lisbon", "other"),
    ("Texted Lena about the weekend", "report"),
    # ... not a hyphened word, an adjective more often
    ("A wood-fired pizza by the harbour", "report"),
    # what someone else did to or for the writer, the writer only its object or owner
    ("Aisha keeps telling me to see Night Harbor", "received"),
    ("Friends threw me a surprise party", "received"),
    ("Tom fixed my bike", "received"),
    ("My sister got married today", "received"),
    ("Our neighbours invited us over for drinks", "received"),
    # ... not the writer's own doing: with "I" or "we", "me" before a verb's base, a later
    # clause of the writer's, the writer opening it, news relayed
    ("My friends and I went to the cinema", "report"),
    ("Lena helped me repair the leaking radiator", "report"),
    ("Priya lent me The Quiet Orchard; started it that night", "report"),
    ("Lena cooked for us; we ate in the garden", "report"),
    ("Told my sister about the trip", "report"),
    ("Met my sister for lunch", "report"),
    ("My bike", "report"),
])
def test_what_a_journal_entry_is(text: str, act: str) -> None:
    assert read_act(text, "me", to_assistant=False) == act


def test_the_assistants_words_are_answers() -> None:
    assert read_act("Here is a recipe for shakshuka.", "assistant", to_assistant=True) \
        == "answer"


def test_a_bank_written_before_reads_its_acts_again_when_opened(tmp_path, hashing_embedder):
    """m013, m014, m015: a bank whose acts were read by an older reader (the records removed, the
    act stored as the old reader read it) holds the reading of today once opened; a memory
    the old reader read right keeps its act."""
    from ramem_local import Memory

    bank = tmp_path / "bank.db"
    with Memory.open(bank, embedder=hashing_embedder) as memory:
        memory.add("Tom saw the Velvet Tides last week and loved it", at="2024-03-02 19:00")
        memory.add("Booked somewhere to stay in Naples.", at="2024-03-03 19:00")
        memory.add("Saw the Velvet Tides with Tom", at="2024-03-04 19:00")
        memory.add("Planning a trip to Rome", at="2024-03-05 19:00")
        memory.add("Heard Tom got a promotion", at="2024-03-06 19:00")
        memory.store.db.execute("UPDATE memories SET act = 'report' WHERE content LIKE '%Tom saw%'"
                                " OR content LIKE '%Planning%' OR content LIKE '%Heard%'")
        memory.store.db.execute("DELETE FROM schema_migrations WHERE name IN (?, ?, ?)",
                                ("m013_acts_read_again", "m014_plans_in_other_words",
                                 "m015_relayed_news"))

    acts = _acts_once_opened(bank)
    assert acts == {"me: Tom saw the Velvet Tides last week and loved it": "other",
                    "me: Booked somewhere to stay in Naples.": "plan",
                    "me: Saw the Velvet Tides with Tom": "report",
                    "me: Planning a trip to Rome": "plan",
                    "me: Heard Tom got a promotion": "other"}


@pytest.mark.parametrize(("migration", "read_now"), [
    # news relayed in the writer's words is someone else's doing
    ("m015_relayed_news", {"Heard Tom got a promotion": "other",
                           "Helped Tom move house": "report"}),
    # a name opening with a verb's word, a verb's past the lexicon lacks
    ("m016_names_and_unknown_verbs", {"Echo Valley Band announced a tour": "other",
                                      "Lena texted about the weekend.": "other",
                                      "Saw The Silent Engine in a shop window": "report"}),
    # what someone else did to or for the writer
    ("m017_done_to_the_writer", {"Aisha keeps telling me to see Night Harbor": "received",
                                 "Lena helped me repair the leaking radiator": "report"}),
])
def test_a_bank_written_before_a_migration_reads_its_acts_as_the_reader_now_does(
        tmp_path, hashing_embedder, migration: str, read_now: dict[str, str]) -> None:
    """One migration alone: a bank whose reader took every memory for the writer's report
    (its acts set so, the migration's record removed) reads them as the reader does now once
    opened."""
    from ramem_local import Memory

    bank = tmp_path / "bank.db"
    with Memory.open(bank, embedder=hashing_embedder) as memory:
        for day, text in enumerate(read_now, start=1):
            memory.add(text, at=f"2024-03-{day:02d} 19:00")
        memory.store.db.execute("UPDATE memories SET act = 'report'")
        memory.store.db.execute("DELETE FROM schema_migrations WHERE name = ?", (migration,))

    assert _acts_once_opened(bank) == {f"me: {text}": act for text, act in read_now.items()}


def _acts_once_opened(bank) -> dict[str, str]:
    """{content: act} of the bank's memories after opening it (its migrations run)."""
    from ramem_local.store import Store

    store = Store.open(bank)
    try:
        return dict(store.db.execute("SELECT content, act FROM memories"))
    finally:
        store.close()
