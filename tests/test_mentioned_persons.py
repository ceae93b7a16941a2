"""People named in what was said: a turn memory's persons hold the people its text names
(``names.mentioned_persons``), banks written before get them (migration m009), and the faces
use them: ``forget --person``, ``timeline --person``, the recall frame."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from chat_sample import UTC, conversation
from test_forget import isolated_settings, ok, ramem, raw_bytes  # noqa: F401 (fixture)

from ramem_local import Memory
from ramem_local.ingest.pipeline import ingest_conversations
from ramem_local.store import Store
from ramem_local.text import named_persons

T0 = 1714557600  # 2024-05-01 10:00 UTC
LENA_TURNS = ("Remind me that Lena is vegetarian when I book the restaurant",
              "Noted: Lena is vegetarian. Shall I look for places with good vegetarian menus?")


def chatgpt_thread(chat_id: str, title: str, created: int, texts: list[tuple[str, str]]) -> dict:
    """A ChatGPT export conversation: one thread of (role, text) messages, 10 s apart."""
    mapping: dict[str, dict] = {"root": {"id": "root", "parent": None, "children": [],
                                         "message": None}}
    parent = "root"
    for index, (role, text) in enumerate(texts):
        node_id = f"{chat_id}-{index}"
        mapping[parent]["children"].append(node_id)
        mapping[node_id] = {"id": node_id, "parent": parent, "children": [], "message": {
            "id": node_id, "author": {"role": role, "name": None, "metadata": {}},
            "create_time": created + 10 * (index + 1), "update_time": None,
            "content": {"content_type": "text", "parts": [text]},
            "status": "finished_successfully", "end_turn": True, "weight": 1.0,
            "metadata": {}, "recipient": "all"}}
        parent = node_id
    return {"title": title, "create_time": created, "update_time": created + 100,
            "mapping": mapping, "current_node": parent, "conversation_id": chat_id,
            "id": chat_id, "moderation_results": [], "is_archived": False}


@pytest.fixture
def export(tmp_path) -> Path:
    """Two chats; Lena never speaks, two turns of the first name her."""
    chats = [
        chatgpt_thread("6717a3c1-aaaa-bbbb-cccc-000000000001", "Dinner plans", T0, [
            ("user", LENA_TURNS[0]),
            ("assistant", LENA_TURNS[1]),
            ("user", "Yes, somewhere near the office for Friday"),
            ("assistant", "The Green Table near the office takes bookings for Friday."),
        ]),
        chatgpt_thread("77aa0000-0000-0000-0000-000000000002", "Sourdough", T0 + 86400, [
            ("user", "My sourdough starter smells of acetone"),
            ("assistant", "Feed it more often."),
        ]),
    ]
    path = tmp_path / "conversations.json"
    path.write_text(json.dumps(chats), encoding="utf-8")
    return path


def timeline_contents(bank: Path, *args: object) -> list[str]:
    data = json.loads(ok(ramem("--db", bank, "timeline", *args, "--json")).stdout)
    return [m["content"] for d in data["days"] for s in d["sessions"] for m in s["memories"]]


# ----------------------------------------------------------------------------- the Done-when


@pytest.mark.parametrize("embedder", [
    pytest.param(None, id="bm25-only"),
    pytest.param("minilm", id="minilm", marks=pytest.mark.real_model),
])
def test_after_a_chat_import_forget_person_takes_the_memories_naming_someone_who_never_spoke(
        tmp_path, export, embedder, request):
    bank = tmp_path / "bank.db"
    models = ["--embedder", request.getfixturevalue("minilm_dir")] if embedder else []
    ok(ramem("--db", bank, *models, "import", "chatgpt", export))
    assert b"Lena" in raw_bytes(bank), "control: the scan finds her before the forget"

    listed = timeline_contents(bank, "--person", "Lena")
    assert listed == [f"me: {LENA_TURNS[0]}", f"assistant: {LENA_TURNS[1]}"]

    dry = ok(ramem("--db", bank, "forget", "--person", "Lena", "--dry-run")).stdout
    assert dry.startswith("would forget 2 memories and 2 turns")
    assert "Remind me that Lena is vegetarian" in dry and "Noted: Lena" in dry
    assert "Green Table" not in dry and "sourdough" not in dry
    assert timeline_contents(bank, "--person", "Lena") == listed, "a dry run changes nothing"

    gone = json.loads(ok(ramem("--db", bank, "forget", "--person", "Lena", "--json")).stdout)
    assert gone["memories"] == 2 and gone["turns"] == 2 and not gone["dry_run"]
    data = raw_bytes(bank)
    for word in (b"Lena", b"lena", b"vegetarian"):
        assert word not in data, f"{word!r} is still in the bank file or its log"
    assert b"Green Table" in data and b"sourdough" in data, "the rest is still there"
    error = ramem("--db", bank, "forget", "--person", "Lena", "--dry-run")
    assert error.exit_code != 0
    assert "no person named 'Lena' in this bank (known: assistant, me)" in error.stderr


def test_before_the_forget_lena_is_known_and_the_frame_names_her(tmp_path, export):
    bank = tmp_path / "bank.db"
    ok(ramem("--db", bank, "import", "chatgpt", export))
    with Memory.open(bank) as memory:
        assert memory.frame("What did I do with Lena last week?").persons == ["Lena"]
        assert memory.frame("what about lena's diet?").persons == ["Lena"]
        assert memory.frame("Who is Zed?").persons == []
        assert memory.store.person_known("lena")
        assert memory.store.persons_named() == ["assistant", "Lena", "me"]


# ------------------------------------------------------------------------------------ ingest


def jsonl(tmp_path: Path, turns: list[tuple[str, str]]) -> Path:
    path = tmp_path / "chat.jsonl"
    path.write_text("\n".join(json.dumps({"speaker": speaker, "text": text,
                                          "timestamp": f"2024-03-01T09:{index:02d}:00"})
                              for index, (speaker, text) in enumerate(turns)) + "\n",
                    encoding="utf-8")
    return path


CHAT = [
    ("Ann", "Remind me that Lena is vegetarian when I book the restaurant"),
    ("Ben", "Sure, Ann. We hiked at Pine Lake with Tom's brother on Monday."),
    ("Ann", "I watched Night Harbor yesterday."),
    ("Ben", "Kickboxing is fun. Lena is coming too."),
]


def test_ingest_fills_the_persons_a_turn_names(tmp_path, hashing_embedder):
    with Memory.open(tmp_path / "bank.db", embedder=hashing_embedder) as memory:
        memory.ingest(jsonl(tmp_path, CHAT))
        persons = [m.persons for m in memory.list(limit=10)]
    assert sorted(persons) == sorted([["Ann", "Lena"], ["Ben", "Ann", "Tom"], ["Ann"],
                                      ["Ben", "Lena"]])


@pytest.mark.parametrize("batch_size", [1, 2, 512])
@pytest.mark.parametrize("order", ["named first", "named last"])
def test_a_name_at_a_sentence_start_counts_once_the_conversation_names_it_in_any_order(
        tmp_path, hashing_embedder, batch_size, order):
    """"Lena is coming too." names Lena because another turn names her ("told Lena"), also
    when that turn comes later, in a later batch; "Kickboxing" is named nowhere else."""
    lines = [(1, "Ann", "Lena is coming too. Kickboxing is fun."), (1, "Ben", "Bring snacks."),
             (1, "Ann", "I told Lena about the party")]
    if order == "named first":
        lines.reverse()
    parsed = conversation(lines)
    parsed.participants = ["Ann", "Ben"]
    with Memory.open(tmp_path / "bank.db", embedder=hashing_embedder,
                     timezone_name="UTC") as memory:
        ingest_conversations(memory.store, [parsed], embedder=hashing_embedder, tz=UTC,
                             batch_size=batch_size)
        persons = {m.content: m.persons for m in memory.list(limit=10)}
    assert persons == {"Ann: Lena is coming too. Kickboxing is fun.": ["Ann", "Lena"],
                       "Ben: Bring snacks.": ["Ben"],
                       "Ann: I told Lena about the party": ["Ann", "Lena"]}


def test_m009_fills_the_persons_of_a_bank_built_without_them(tmp_path, hashing_embedder,
                                                             monkeypatch):
    """The bank is written by the ingest as it was before (speaker and participants named),
    its record of m009 removed; opening it runs m009."""
    def speakers_only(text, speaker, participants, *known, read=None):
        return [speaker, *named_persons(text, [p for p in participants if p != speaker])]

    bank = tmp_path / "bank.db"
    monkeypatch.setattr("ramem_local.ingest.anchor.mentioned_persons", speakers_only)
    with Memory.open(bank, embedder=hashing_embedder) as memory:
        memory.ingest(jsonl(tmp_path, CHAT))
        memory.add("Cooked dinner for Olga and Pablo", at="2024-03-02 19:00")
        memory.store.db.execute("DELETE FROM schema_migrations WHERE name = ?",
                                ("m009_mentioned_persons",))
        assert not memory.store.person_known("Lena")
        assert not fts_persons(memory.store, "lena")
    monkeypatch.undo()

    store = Store.open(bank)
    try:
        persons = {content: persons for content, persons in store.db.execute(
            "SELECT content, persons FROM memories")}
        assert persons == {
            f"Ann: {CHAT[0][1]}": "Ann; Lena",
            f"Ben: {CHAT[1][1]}": "Ben; Ann; Tom",
            f"Ann: {CHAT[2][1]}": "Ann",
            f"Ben: {CHAT[3][1]}": "Ben; Lena",
            "me: Cooked dinner for Olga and Pablo": "me; Olga; Pablo",
        }
        assert fts_persons(store, "lena") == [f"Ann: {CHAT[0][1]}", f"Ben: {CHAT[3][1]}"]
        assert fts_persons(store, "pablo") == ["me: Cooked dinner for Olga and Pablo"]
        assert store.fts_integrity_ok()
        assert store.person_known("Lena") and store.person_known("tom")
    finally:
        store.close()


def fts_persons(store: Store, word: str) -> list[str]:
    """The memories whose persons column the FTS index finds ``word`` in."""
    return [r[0] for r in store.db.execute(
        "SELECT m.content FROM memories_fts JOIN memories AS m ON m.id = memories_fts.rowid "
        "WHERE memories_fts MATCH ?", ("{persons} : " + word,))]


def test_m009_changes_nothing_in_a_bank_that_has_the_persons(tmp_path, hashing_embedder):
    bank = tmp_path / "bank.db"
    with Memory.open(bank, embedder=hashing_embedder) as memory:
        memory.ingest(jsonl(tmp_path, CHAT))
        before = memory.store.db.execute("SELECT id, persons FROM memories").fetchall()
        changes = memory.store.db.total_changes()
        from ramem_local.store.schema import m009_mentioned_persons

        m009_mentioned_persons(memory.store.db)
        assert memory.store.db.total_changes() == changes
        assert memory.store.db.execute("SELECT id, persons FROM memories").fetchall() == before


# ----------------------------------------------------------------------------- the store


def test_persons_among_finds_whole_names_only(tmp_path, hashing_embedder):
    with Memory.open(tmp_path / "bank.db", embedder=hashing_embedder) as memory:
        memory.add("Read a comic about Peter Parker", at="2024-03-02 19:00")
        memory.add("Lunch with Lena", at="2024-03-03 12:00")
        store = memory.store
        assert store.persons_among(["peter parker", "parker", "lena", "lenas", "zed"]) == \
            ["Peter Parker", "Lena"]
        assert store.persons_named() == ["Lena", "me", "Peter Parker"]


def test_months_naming_counts_the_months_each_person_is_named_in(tmp_path, hashing_embedder):
    """``Store.months_naming``: who is named month after month (the everyday life a stay is
    read against, ``retrieve._everyday_persons``), and how many months hold a memory."""
    with Memory.open(tmp_path / "bank.db", embedder=hashing_embedder) as memory:
        for month, day in ((1, 10), (2, 10), (2, 20), (5, 10)):
            memory.add(f"Lunch with Lena on the {day}th", at=f"2024-{month:02d}-{day} 12:00")
        memory.add("Dinner with Ingrid, a potter", at="2024-03-03 12:00")
        memory.add("Quiet day at home", at="2024-04-04 12:00")
        months, spanned = memory.store.months_naming()
        assert (months["lena"], months["ingrid"], months["me"], spanned) == (3, 1, 5, 5)
        memory.add("Lena came round", at="2024-06-06 12:00")  # the cache follows the bank
        assert memory.store.months_naming()[0]["lena"] == 4
