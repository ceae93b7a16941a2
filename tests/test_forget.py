"""Forgetting that leaves nothing, owner-only bank files, and the timeline.

The byte scans read the bank file and its write-ahead log as they lie on disk: a forgotten
sentence must be in neither (and, in the control tests, a sentence not forgotten is found, so
the scan can fail)."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from samples import JSONL_TURNS

from ramem_local import Memory
from ramem_local.cli import cli
from ramem_local.store.int8_matrix import quantise
from ramem_local.store.memories import vector_blob
from ramem_local.types import MemoryRecord

SECRET = "The vault under the old mill opens with code quorvex-7731"
SECRET_WORD = b"quorvex"


@pytest.fixture(autouse=True)
def isolated_settings(monkeypatch, tmp_path):
    for name in list(os.environ):
        if name.startswith("RAMEM_") and name not in {"RAMEM_TEST_EMBEDDER",
                                                       "RAMEM_DEFAULT_EMBEDDER"}:
            monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("RAMEM_CONFIG", str(tmp_path / "no-such-config.json"))
    monkeypatch.setenv("RAMEM_MODELS_DIR", str(tmp_path / "models"))


@pytest.fixture
def chat_file(tmp_path) -> Path:
    path = tmp_path / "chat.jsonl"
    path.write_text("\n".join(json.dumps(t) for t in JSONL_TURNS) + "\n", encoding="utf-8")
    return path


def ramem(*args: object) -> Result:
    return CliRunner().invoke(cli, [str(a) for a in args], prog_name="ramem")


def ok(result: Result) -> Result:
    assert result.exit_code == 0, (result.stdout, result.stderr, result.exception)
    return result


def error_line(result: Result) -> str:
    assert result.exit_code != 0, result.stdout
    assert isinstance(result.exception, SystemExit), repr(result.exception)
    lines = [line for line in result.stderr.splitlines()
             if line.strip() and not line.startswith(("note: ", "Usage:", "Try "))]
    assert len(lines) == 1, result.stderr
    assert lines[0].lower().startswith("error"), lines[0]
    return lines[0]


def raw_bytes(bank: Path) -> bytes:
    """The bank file and its write-ahead log, as they lie on disk."""
    data = bank.read_bytes()
    wal = Path(f"{bank}-wal")
    return data + (wal.read_bytes() if wal.exists() else b"")


def secret_bank(tmp_path: Path, embedder) -> tuple[Path, int]:
    """A bank with the chat and, in between, a journal entry holding SECRET."""
    bank = tmp_path / "bank.db"
    with Memory.open(bank, embedder=embedder) as memory:
        memory.ingest(_chat(tmp_path))
        memory.add("Bought bread and a newspaper at the corner shop", at="2024-03-02 10:00")
        memory_id = memory.add(SECRET, at="2024-03-02 10:05")
        memory.add("Watered the basil on the windowsill", at="2024-03-02 10:10")
    return bank, memory_id


def _chat(tmp_path: Path) -> Path:
    path = tmp_path / "chat.jsonl"
    if not path.exists():
        path.write_text("\n".join(json.dumps(t) for t in JSONL_TURNS) + "\n", encoding="utf-8")
    return path


# ------------------------------------------------------------------------- leaves nothing


def test_without_forget_the_sentence_is_in_the_file(tmp_path, hashing_embedder):
    """The control: the scan finds what was not forgotten (so the next test can fail)."""
    bank, _ = secret_bank(tmp_path, hashing_embedder)
    assert SECRET.encode() in raw_bytes(bank)


def test_without_secure_delete_a_deleted_sentence_stays_in_the_fts_index(tmp_path,
                                                                          hashing_embedder):
    """The control for the FTS option: with FTS5's secure-delete off, a plain delete leaves
    the word in the index's delete markers, which the scan sees."""
    bank, memory_id = secret_bank(tmp_path, hashing_embedder)
    with Memory.open(bank) as memory:
        db = memory.store.db
        db.execute("INSERT INTO memories_fts(memories_fts, rank) VALUES ('secure-delete', 0)")
        memory.store.delete_memory(memory_id)
        memory.store.checkpoint()
    assert SECRET_WORD in raw_bytes(bank)


def test_forget_leaves_no_byte_of_the_sentence_in_the_bank_or_its_log(tmp_path,
                                                                      hashing_embedder):
    bank, memory_id = secret_bank(tmp_path, hashing_embedder)
    with Memory.open(bank) as memory:
        embedding = hashing_embedder.embed_documents([f"me: {SECRET}"])[0]
        vector = vector_blob(embedding)
        codes = quantise(embedding)[1][0].tobytes()
        assert vector in raw_bytes(bank), "control: the vector is in the file"
        assert codes in raw_bytes(bank), "control: so are its int8 codes"
        report = memory.forget(memory_id)
        assert report.memory_ids == [memory_id] and len(report.turn_ids) == 1
        assert report.checkpointed
        data = raw_bytes(bank)
        assert SECRET.encode() not in data
        assert SECRET_WORD not in data, "no term of it in the FTS index either"
        assert vector not in data, "nor its vector"
        assert codes not in data, "nor its int8 codes"
        assert b"newspaper" in data, "the rest is still there"
        assert memory.store.fts_integrity_ok()
        assert memory.store.integrity_check() == ["ok"]
        stats = memory.stats()
        assert stats["memories"] == stats["vectors"] == stats["turns"] == len(JSONL_TURNS) + 2
    wal = Path(f"{bank}-wal")
    assert not wal.exists() or wal.stat().st_size == 0


def test_forgetting_a_turn_removes_it_from_its_neighbours_text(tmp_path, hashing_embedder):
    bank, memory_id = secret_bank(tmp_path, hashing_embedder)
    with Memory.open(bank) as memory:
        neighbours = memory.store.db.execute(
            "SELECT count(*) FROM memories WHERE neighbours LIKE '%quorvex%'").fetchone()[0]
        assert neighbours == 2, "control: the entries before and after quote it"
        memory.forget(memory_id)
        rows = memory.store.db.execute("SELECT content, neighbours FROM memories").fetchall()
        assert not any("quorvex" in c or "quorvex" in n for c, n in rows)
        bread = next(n for c, n in rows if "bread" in c)
        assert "basil" in bread, "the neighbours are recomputed without the forgotten turn"
        hits = memory.search("quorvex vault code mill", k=20).results
        assert all("quorvex" not in c.memory.content for c in hits)
    assert SECRET_WORD not in raw_bytes(bank)


def test_keep_turns_keeps_the_verbatim_turn(tmp_path, hashing_embedder):
    bank, memory_id = secret_bank(tmp_path, hashing_embedder)
    with Memory.open(bank) as memory:
        report = memory.forget(memory_id, keep_turns=True)
        assert report.turn_ids == []
        assert memory.stats()["turns"] == len(JSONL_TURNS) + 3
    assert SECRET.encode() in raw_bytes(bank), "the turn's text is kept, as asked"


def _extracted(memory: Memory, content: str, turn_ids: list[int]) -> int:
    store = memory.store
    conversation_id = store.conversation_id("chat")
    start, end = store.db.execute(
        "SELECT min(session_start), max(session_end) FROM memories").fetchone()
    record = MemoryRecord(content=content, kind="extracted", conversation="chat",
                          session_start=start, session_end=end, persons=["Ann"],
                          source_turn_ids=turn_ids)
    with store.atomic():
        memory_id = store.add_memory(record, f"x:{content}", conversation_id)
        store.add_vectors([memory_id], memory.embedder.embed_documents([content]))
    return memory_id


def test_a_turn_another_extracted_memory_cites_stays(tmp_path, hashing_embedder, chat_file):
    with Memory.open(tmp_path / "bank.db", embedder=hashing_embedder) as memory:
        memory.ingest(chat_file)
        both = _extracted(memory, "Ann has a grey cat named Pixel", [1, 3])
        only = _extracted(memory, "Pixel knocked a mug over", [3])
        report = memory.forget(both)
        # turn 1 goes (no other extracted memory cites it) with its turn memory; turn 3 stays
        assert report.turn_ids == [1]
        assert sorted(report.memory_ids) == [1, both]
        assert memory.get(only) is not None and memory.get(3) is not None


def test_forgetting_a_turn_takes_the_extracted_memories_that_cite_it(tmp_path,
                                                                     hashing_embedder,
                                                                     chat_file):
    with Memory.open(tmp_path / "bank.db", embedder=hashing_embedder) as memory:
        memory.ingest(chat_file)
        cat = _extracted(memory, "Ann adopted Pixel and it broke a mug", [1, 3])
        report = memory.forget(start="2024-03-01 09:00", end="2024-03-01 09:18")
        assert report.turn_ids == [1, 2]
        assert sorted(report.memory_ids) == [1, 2, cat], "drawn from turn 1: it goes too"
        assert memory.get(3) is not None, "turn 3 is outside the range: it stays"


def test_extraction_windows_follow_the_turns(tmp_path, hashing_embedder, chat_file):
    with Memory.open(tmp_path / "bank.db", embedder=hashing_embedder) as memory:
        memory.ingest(chat_file)
        store = memory.store
        conversation_id = store.conversation_id("chat")
        with store.atomic():
            store.add_extraction_windows(conversation_id, [(1, 3, 3), (4, 6, 3)], "p1")
            store.db.execute("UPDATE extraction_windows SET error = 'reply quoted: Pixel'")
        memory.forget(1)
        memory.forget(4, 5, 6)
        rows = store.db.execute(
            "SELECT first_turn_id, last_turn_id, turn_count, error FROM extraction_windows"
        ).fetchall()
        assert rows == [(2, 3, 2, None)]


def test_forget_a_conversation_removes_it_whole(tmp_path, hashing_embedder):
    bank, _ = secret_bank(tmp_path, hashing_embedder)
    with Memory.open(bank) as memory:
        report = memory.forget(conversation="chat")
        assert report.conversations == ["chat"]
        stats = memory.stats()
        assert stats["conversations"] == 1 and stats["turns"] == stats["memories"] == 3
        assert memory.store.participants() == ["me"]
    assert b"Pixel" not in raw_bytes(bank)


def test_forget_a_person_takes_what_they_said_and_memories_naming_them(tmp_path,
                                                                      hashing_embedder,
                                                                      chat_file):
    with Memory.open(tmp_path / "bank.db", embedder=hashing_embedder) as memory:
        memory.ingest(chat_file)
        report = memory.forget(person="ben")  # any case
        assert report.turn_ids == [2, 4, 6]
        assert memory.store.participants() == ["Ann"]
        with pytest.raises(ValueError, match="no person named 'Zed'.*known: Ann"):
            memory.forget(person="Zed")


def test_forget_everything_leaves_an_empty_bank_that_still_works(tmp_path, hashing_embedder):
    bank, _ = secret_bank(tmp_path, hashing_embedder)
    with Memory.open(bank) as memory:
        memory.forget(everything=True)
        stats = memory.stats()
        assert (stats["conversations"], stats["turns"], stats["memories"], stats["vectors"],
                stats["sessions"]) == (0, 0, 0, 0, 0)
        assert memory.store.fts_row_count() == 0
        memory.add("A new beginning", at="2024-04-01")
        assert memory.search("new beginning").results
    data = raw_bytes(bank)
    assert SECRET_WORD not in data and b"Pixel" not in data


def test_dry_run_changes_nothing(tmp_path, hashing_embedder):
    bank, memory_id = secret_bank(tmp_path, hashing_embedder)
    with Memory.open(bank) as memory:
        report = memory.forget(memory_id, dry_run=True)
        assert report.dry_run and report.memory_ids == [memory_id]
        assert [m.id for m in report.shown] == [memory_id]
        assert memory.get(memory_id) is not None
    assert SECRET.encode() in raw_bytes(bank)


@pytest.mark.parametrize("kwargs, message", [
    ({}, "say what to forget"),
    ({"everything": True, "person": "Ann"}, "no other selector"),
    ({"conversation": "nope"}, "no conversation named 'nope'"),
    ({"start": "2024-03-05", "end": "2024-03-01"}, "ends before it starts"),
    ({"start": "not a date at all"}, "cannot read the date"),
])
def test_forget_refuses_what_it_cannot_do(tmp_path, hashing_embedder, chat_file, kwargs,
                                          message):
    with Memory.open(tmp_path / "bank.db", embedder=hashing_embedder) as memory:
        memory.ingest(chat_file)
        with pytest.raises(ValueError, match=message):
            memory.forget(**kwargs)
        assert memory.stats()["memories"] == len(JSONL_TURNS)


def test_unknown_ids_forget_nothing(tmp_path, hashing_embedder, chat_file):
    with Memory.open(tmp_path / "bank.db", embedder=hashing_embedder) as memory:
        memory.ingest(chat_file)
        with pytest.raises(ValueError, match="no memory with id 98, 99"):
            memory.forget(1, 98, 99)
        assert memory.get(1) is not None


# ----------------------------------------------------------------------------- file modes


def test_a_new_bank_and_its_wal_and_shm_are_owner_only(tmp_path, hashing_embedder):
    bank = tmp_path / "sub" / "bank.db"
    old = os.umask(0o022)
    try:
        with Memory.open(bank, embedder=hashing_embedder) as memory:
            memory.add("Something", at="2024-01-01")
            files = [bank, Path(f"{bank}-wal"), Path(f"{bank}-shm")]
            assert all(f.exists() for f in files)
            modes = {f.name: stat.S_IMODE(f.stat().st_mode) for f in files}
    finally:
        os.umask(old)
    assert modes == {"bank.db": 0o600, "bank.db-wal": 0o600, "bank.db-shm": 0o600}


def test_secure_delete_is_on_for_every_connection(tmp_path):
    with Memory.open(tmp_path / "bank.db") as memory:
        assert memory.store.db.execute("PRAGMA secure_delete").fetchone()[0] == 1


# ------------------------------------------------------------------------------------ CLI


def test_cli_forget_dry_run_lists_and_keeps(tmp_path, chat_file):
    bank = tmp_path / "bank.db"
    ok(ramem("--db", bank, "ingest", chat_file))
    result = ok(ramem("--db", bank, "forget", "--person", "Ben", "--dry-run"))
    assert result.stdout.startswith("would forget 3 memories and 3 turns")
    assert "[4]" in result.stdout and "oils" in result.stdout
    assert ok(ramem("--db", bank, "show", "4")).stdout
    data = json.loads(ok(ramem("--db", bank, "forget", "4", "--json")).stdout)
    assert data["memories"] == 1 and data["turns"] == 1 and not data["dry_run"]
    assert "no memory with id 4" in error_line(ramem("--db", bank, "show", "4"))


def test_cli_forget_range_and_conversation(tmp_path, chat_file):
    bank = tmp_path / "bank.db"
    ok(ramem("--db", bank, "ingest", chat_file))
    result = ok(ramem("--db", bank, "forget", "--from", "2024-03-05", "--to", "2024-03-05"))
    assert "forgot 3 memories and 3 turns" in result.stdout
    result = ok(ramem("--db", bank, "forget", "--conversation", "chat"))
    assert "conversation(s) removed: chat" in result.stdout


@pytest.mark.parametrize("args, message", [
    ((), "say what to forget"),
    (("--all",), "--yes"),
    (("--all", "--yes", "1"), "no other selector"),
])
def test_cli_forget_usage_errors_change_nothing(tmp_path, chat_file, args, message):
    bank = tmp_path / "bank.db"
    ok(ramem("--db", bank, "ingest", chat_file))
    result = ramem("--db", bank, "forget", *args)
    assert result.exit_code == 2 and message in result.stderr
    assert "Traceback" not in result.output
    assert len(json.loads(ok(ramem("--db", bank, "list", "--json")).stdout)["memories"]) == 6


@pytest.mark.parametrize("args, message", [
    (("999",), "no memory with id 999"),
    (("--person", "Zed"), "no person named 'Zed'"),
    (("--from", "someday maybe"), "cannot read the date"),
    (("--conversation", "nope"), "no conversation named 'nope'"),
])
def test_cli_forget_errors_are_one_line(tmp_path, chat_file, args, message):
    bank = tmp_path / "bank.db"
    ok(ramem("--db", bank, "ingest", chat_file))
    assert message in error_line(ramem("--db", bank, "forget", *args))


def test_cli_forget_all_yes_empties_the_bank(tmp_path, chat_file):
    bank = tmp_path / "bank.db"
    ok(ramem("--db", bank, "ingest", chat_file))
    assert "would forget 6 memories" in ok(
        ramem("--db", bank, "forget", "--all", "--dry-run")).stdout
    ok(ramem("--db", bank, "forget", "--all", "--yes"))
    stats = json.loads(ok(ramem("--db", bank, "stats", "--json")).stdout)
    assert stats["memories"] == stats["turns"] == 0
    assert b"Pixel" not in raw_bytes(bank)


# ------------------------------------------------------------------------------- timeline


def test_timeline_groups_a_window_by_day_and_session(tmp_path, chat_file):
    bank = tmp_path / "bank.db"
    ok(ramem("--db", bank, "ingest", chat_file))
    ok(ramem("--db", bank, "add", "Fixed the bike chain", "--at", "2024-03-05 08:00"))
    result = ok(ramem("--db", bank, "timeline", "--from", "2024-03-02", "--to", "2024-03-05"))
    lines = result.stdout.splitlines()
    assert lines[0] == "2024-03-05 Tuesday"
    assert lines[1].startswith("  journal · session of 2024-03-05")
    assert lines[2] == "    08:00 [7] me: Fixed the bike chain"
    assert lines[3].startswith("  chat · session of 2024-03-05 18:00")
    assert "Pixel" not in result.stdout, "2024-03-01 is outside the window"
    data = json.loads(ok(ramem("--db", bank, "timeline", "--json")).stdout)
    assert [d["day"] for d in data["days"]] == ["2024-03-01", "2024-03-05"]
    assert [len(s["memories"]) for s in data["days"][1]["sessions"]] == [1, 3]
    assert data["days"][0]["sessions"][0]["memories"][0]["said_at"] == "2024-03-01T09:15:00+00:00"


def test_timeline_of_a_period_runs_from_its_first_day_to_its_last(tmp_path, chat_file):
    """"March 2024" was read as a moment, today's day of March (dateparser's default): the
    window "--from 'March 2024' --to 'March 2024'" held one day of the month."""
    bank = tmp_path / "bank.db"
    ok(ramem("--db", bank, "ingest", chat_file))
    ok(ramem("--db", bank, "add", "Quiet day at home", "--at", "2024-04-01 10:00"))
    for args in (("March 2024",), ("--from", "March 2024", "--to", "March 2024"),
                 ("in March 2024",), ("--from", "2024-03-01", "--to", "March 2024")):
        data = json.loads(ok(ramem("--db", bank, "timeline", *args, "--json")).stdout)
        assert [d["day"] for d in data["days"]] == ["2024-03-01", "2024-03-05"], args
    data = json.loads(ok(ramem("--db", bank, "timeline", "--from", "March 2024",
                               "--json")).stdout)
    assert [d["day"] for d in data["days"]] == ["2024-03-01", "2024-03-05", "2024-04-01"]
    assert "not both" in ramem("--db", bank, "timeline", "March 2024", "--from",
                               "2024-01-01").output


def test_forget_a_period_forgets_all_of_it(tmp_path, chat_file):
    bank = tmp_path / "bank.db"
    ok(ramem("--db", bank, "ingest", chat_file))
    result = ok(ramem("--db", bank, "forget", "--from", "March 2024", "--to", "March 2024",
                      "--dry-run"))
    assert "would forget 6 memories" in result.stdout


def test_timeline_of_a_person(tmp_path, chat_file):
    bank = tmp_path / "bank.db"
    ok(ramem("--db", bank, "ingest", chat_file))
    data = json.loads(ok(ramem("--db", bank, "timeline", "--person", "Ben", "--json")).stdout)
    contents = [m["content"] for d in data["days"] for s in d["sessions"] for m in s["memories"]]
    assert contents and all(c.startswith("Ben:") for c in contents)
    assert len(contents) == 3


def test_timeline_limit_says_there_is_more(tmp_path, chat_file):
    bank = tmp_path / "bank.db"
    ok(ramem("--db", bank, "ingest", chat_file))
    result = ok(ramem("--db", bank, "timeline", "--limit", "2"))
    assert result.stdout.count("] ") == 2
    assert "more than 2 memories" in result.stderr


@pytest.mark.parametrize("args, said", [
    (("--from", "2030-01-01"), "no memories from 2030-01-01"),
    (("--to", "2001-01-01"), "no memories until 2001-01-01"),
    (("--from", "2030-01-01", "--to", "2030-01-07"), "no memories from 2030-01-01 to 2030-01-07"),
    (("the first of May 2001",), "no memories on 2001-05-01"),
])
def test_timeline_of_an_empty_window_says_which_window_it_read(tmp_path, chat_file, args, said):
    bank = tmp_path / "bank.db"
    ok(ramem("--db", bank, "ingest", chat_file))
    result = ok(ramem("--db", bank, "timeline", *args))
    assert result.stdout.strip() == said


@pytest.mark.parametrize("args, message", [
    (("--from", "the day after never"), "cannot read the date"),
    (("--from", "2024-03-05", "--to", "2024-03-01"), "ends before it starts"),
    (("--person", "Zed"), "no person named 'Zed'"),
])
def test_timeline_errors_are_one_line(tmp_path, chat_file, args, message):
    bank = tmp_path / "bank.db"
    ok(ramem("--db", bank, "ingest", chat_file))
    assert message in error_line(ramem("--db", bank, "timeline", *args))


def test_timeline_of_an_empty_bank_is_one_line(tmp_path):
    bank = tmp_path / "bank.db"
    ok(ramem("--db", bank, "init"))
    assert "holds no memories" in error_line(ramem("--db", bank, "timeline"))
    assert "no bank at" in error_line(ramem("--db", tmp_path / "none.db", "timeline"))
