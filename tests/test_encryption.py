"""Encrypted banks (SQLite3 Multiple Ciphers through apsw-sqlite3mc): nothing of what the bank
holds reaches disk in clear — the bank file, its -wal and -shm, a rollback journal, SQLite's
temporary files — after ingest, forget, a kill in the middle of an ingest and a rekey; the
key's sources and their refusals; `encrypt`, `rekey` and `decrypt`; the one-line errors from
the CLI and from an MCP client."""

from __future__ import annotations

import importlib.util
import json
import os
import signal
import subprocess
import sys
import time
import uuid
from datetime import datetime, timedelta, timezone
from pathlib import Path

import apsw
import numpy as np
import pytest
from click.testing import CliRunner

from ramem_local import BankKey, BankKeyError, BankLockedError, Memory
from ramem_local.cli import cli
from ramem_local.store.float_blocks import vectors_of

REPO = Path(__file__).resolve().parents[1]
CLI_SCRIPT = REPO / "cli.py"
PASSPHRASE = "correct horse battery staple"


def sentinel() -> str:
    return f"sentinel-{uuid.uuid4().hex}"


def files_holding(needle: bytes, *folders: Path) -> list[str]:
    """Every file under ``folders`` whose bytes contain ``needle``."""
    found = []
    for folder in folders:
        for path in sorted(folder.rglob("*")):
            if path.is_file() and needle in path.read_bytes():
                found.append(str(path))
    return found


@pytest.fixture
def watched(tmp_path, monkeypatch) -> tuple[Path, Path]:
    """A folder for the bank and one for SQLite's and Python's temporary files: whatever the
    bank writes lands in one of them."""
    bank_dir, temp_dir = tmp_path / "bank", tmp_path / "temp"
    bank_dir.mkdir()
    temp_dir.mkdir()
    for variable in ("SQLITE_TMPDIR", "TMPDIR"):
        monkeypatch.setenv(variable, str(temp_dir))
    return bank_dir, temp_dir


def key_file(folder: Path, passphrase: str = PASSPHRASE, mode: int = 0o600) -> Path:
    path = folder / f"key-{uuid.uuid4().hex[:6]}"
    path.write_text(passphrase + "\n", encoding="utf-8")
    path.chmod(mode)
    return path


def run_cli(*args: str, env: dict[str, str] | None = None, input: str | None = None):
    return CliRunner().invoke(cli, list(args), env=env, input=input)


def decrypted_in_place(bank: Path, passphrase: str) -> bytes:
    """The bank file's bytes after decrypting every page where it lies (free pages too)."""
    db = apsw.Connection(str(bank))
    db.pragma("key", passphrase)
    assert db.pragma("journal_mode", "delete") == "delete"
    db.pragma("rekey", "")
    db.close()
    data = bank.read_bytes()
    assert data.startswith(b"SQLite format 3\x00"), "the bank was not decrypted"
    return data


# --------------------------------------------------------------------- the dependency
def test_the_projects_apsw_is_built_with_sqlite3_multiple_ciphers():
    assert apsw.mc_version.startswith("SQLite3 Multiple Ciphers")


def test_a_plain_bank_is_still_a_plain_sqlite_file(tmp_path):
    bank = tmp_path / "plain.db"
    with Memory.open(bank) as memory:
        memory.add("Planted tomatoes", at="2024-05-01")
        assert memory.cipher is None and memory.stats()["encryption"] is None
    assert bank.read_bytes().startswith(b"SQLite format 3\x00")


# ------------------------------------------------------------------ nothing in clear
def test_no_text_and_no_vector_of_an_encrypted_bank_reaches_disk_in_clear(watched, minilm_dir):
    bank_dir, temp_dir = watched
    bank = bank_dir / "diary.db"
    secret = sentinel()
    with Memory.open(bank, embedder=minilm_dir, key=PASSPHRASE) as memory:
        memory_id = memory.add(f"My {secret} diary entry about Lisbon", at="2024-05-01")
        for day in range(2, 28):  # enough writes that the write-ahead log holds pages
            memory.add(f"Walked by the river on day {day}", at=f"2024-05-{day:02d}")
        vector = vectors_of(memory.store.db, np.array([memory_id]), 384).vectors[0]
        assert memory.search("Lisbon").results[0].memory.id == memory_id
        wal = Path(f"{bank}-wal")
        assert wal.exists() and wal.stat().st_size > 0, "the log should hold pages now"
        assert files_holding(secret.encode(), bank_dir, temp_dir) == []
        assert files_holding(vector[:8].tobytes(), bank_dir, temp_dir) == []
    assert files_holding(secret.encode(), bank_dir, temp_dir) == []
    assert files_holding(vector[:8].tobytes(), bank_dir, temp_dir) == []
    assert files_holding(PASSPHRASE.encode(), bank_dir, temp_dir) == []


def test_the_check_above_can_fail_a_plain_bank_holds_the_sentinel(watched):
    bank_dir, temp_dir = watched
    secret = sentinel()
    with Memory.open(bank_dir / "plain.db") as memory:
        memory.add(f"My {secret} diary entry", at="2024-05-01")
        assert files_holding(secret.encode(), bank_dir, temp_dir)


def test_forget_on_an_encrypted_bank_leaves_nothing_of_what_it_removed(watched):
    bank_dir, temp_dir = watched
    forgotten, kept = sentinel(), sentinel()
    for forget in (True, False):  # without forgetting, the decrypted file holds it
        bank = bank_dir / f"forget-{forget}.db"
        with Memory.open(bank, key=PASSPHRASE) as memory:
            gone = memory.add(f"A {forgotten} secret", at="2024-05-01")
            memory.add(f"A {kept} memory", at="2024-05-02")
            if forget:
                memory.forget(gone)
        assert files_holding(forgotten.encode(), bank_dir, temp_dir) == []
        plain = decrypted_in_place(bank, PASSPHRASE)
        assert kept.encode() in plain
        assert (forgotten.encode() in plain) is not forget


def test_a_kill_in_the_middle_of_an_encrypted_ingest_leaves_nothing_in_clear(watched):
    bank_dir, temp_dir = watched
    secret = sentinel()
    source = temp_dir.parent / "turns.jsonl"
    with source.open("w", encoding="utf-8") as handle:
        for n in range(6000):
            at = datetime(2024, 1, 1, tzinfo=timezone.utc) + timedelta(hours=n)
            handle.write(json.dumps({"speaker": "me", "text": f"Entry {n}: {secret} by the lake",
                                     "timestamp": at.isoformat(),
                                     "conversation": f"c{n % 7}"}) + "\n")
    bank = bank_dir / "diary.db"
    env = {**os.environ, "RAMEM_KEY": PASSPHRASE, "PYTHONPATH": str(REPO)}
    process = subprocess.Popen([sys.executable, str(CLI_SCRIPT), "--db", str(bank), "ingest",
                                str(source)], env=env, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)
    wal = Path(f"{bank}-wal")
    deadline = time.monotonic() + 120
    while not (wal.exists() and wal.stat().st_size > 200_000) and process.poll() is None:
        assert time.monotonic() < deadline, "the ingest wrote no log in two minutes"
        time.sleep(0.02)
    assert process.poll() is None, "the ingest ended before it was killed: no test"
    process.send_signal(signal.SIGKILL)
    process.wait()
    leftovers = sorted(p.name for p in bank_dir.iterdir())
    assert files_holding(secret.encode(), bank_dir, temp_dir) == [], leftovers
    with Memory.open(bank, key=PASSPHRASE) as memory:  # and the bank is sound
        assert memory.health().integrity == ["ok"]


def test_rekey_leaves_nothing_in_clear_and_the_old_key_no_longer_opens(watched):
    bank_dir, temp_dir = watched
    secret = sentinel()
    bank = bank_dir / "diary.db"
    with Memory.open(bank, key="first passphrase") as memory:
        memory.add(f"My {secret} entry", at="2024-05-01")
    with Memory.open(bank, key="first passphrase") as memory:
        memory.encrypt("second passphrase", cipher="sqlcipher")
    assert sorted(p.name for p in bank_dir.iterdir()) == ["diary.db"]
    assert files_holding(secret.encode(), bank_dir, temp_dir) == []
    with pytest.raises(BankKeyError, match="does not open"):
        Memory.open(bank, key="first passphrase")
    with Memory.open(bank, key="second passphrase") as memory:
        assert memory.cipher == "sqlcipher"
        assert secret in memory.search(secret).results[0].memory.content


def test_encrypting_a_plain_bank_zeroes_the_old_file_through_a_handle_held_open(tmp_path):
    """The old inode's pages are overwritten before it is let go: a process that still held
    it open (here, a file handle) reads zeros, not the diary."""
    bank = tmp_path / "diary.db"
    secret = sentinel()
    with Memory.open(bank) as memory:
        memory.add(f"My {secret} entry", at="2024-05-01")
    with open(bank, "rb") as old:
        with Memory.open(bank) as memory:
            memory.encrypt(PASSPHRASE)
        old_bytes = old.read()
    assert old_bytes and set(old_bytes) == {0}
    assert secret.encode() not in bank.read_bytes()


# -------------------------------------------------------------------- the key's sources
def test_a_key_file_must_be_readable_by_its_owner_alone(tmp_path):
    bank = tmp_path / "b.db"
    loose = key_file(tmp_path, mode=0o644)
    done = run_cli("--db", str(bank), "--key-file", str(loose), "init", "--encrypt")
    assert done.exit_code == 1
    assert done.output.strip() == (f"error: the key file {loose} can be read by others "
                                   f"(mode 644): make it yours alone: chmod 600 {loose}")
    assert not bank.exists()


def test_the_key_comes_from_the_key_file_then_the_environment(tmp_path):
    bank = tmp_path / "b.db"
    secret_file = key_file(tmp_path)
    done = run_cli("--db", str(bank), "--key-file", str(secret_file), "init", "--encrypt")
    assert done.exit_code == 0 and "encrypted with chacha20" in done.output, done.output
    # the file's passphrase (its trailing newline is not part of it) opens it ...
    with Memory.open(bank, key=PASSPHRASE) as memory:
        assert memory.cipher == "chacha20"
    # ... and wins over RAMEM_KEY; RAMEM_KEY alone works; RAMEM_KEY_FILE is the flag's setting
    for args, env in (
        (["--key-file", str(secret_file)], {"RAMEM_KEY": "something else"}),
        ([], {"RAMEM_KEY": PASSPHRASE}),
        ([], {"RAMEM_KEY_FILE": str(secret_file)}),
    ):
        done = run_cli("--db", str(bank), *args, "stats", env=env)
        assert done.exit_code == 0 and "encryption: chacha20" in done.output, (args, env,
                                                                                done.output)


def test_a_terminal_is_asked_for_the_key_and_init_asks_twice(tmp_path, monkeypatch):
    monkeypatch.setattr("ramem_local.cli._at_terminal", lambda: True)
    bank = tmp_path / "b.db"
    mismatch = run_cli("--db", str(bank), "init", "--encrypt", input="one\ntwo\none\none\n")
    assert mismatch.exit_code == 0, mismatch.output
    assert "do not match" in mismatch.output or "don't match" in mismatch.output.lower()
    done = run_cli("--db", str(bank), "add", "Planted beans", input="one\n")
    assert done.exit_code == 0 and "added memory 1" in done.output, done.output
    wrong = run_cli("--db", str(bank), "stats", input="two\n")
    assert wrong.exit_code == 1
    assert wrong.output.splitlines()[-1].startswith("error: the key from the prompt does not "
                                                    f"open {bank}")


# ------------------------------------------------------------------------ clear errors
def test_each_key_problem_is_one_line_that_says_what_to_do(tmp_path):
    encrypted, plain, foreign = tmp_path / "e.db", tmp_path / "p.db", tmp_path / "f.db"
    with Memory.open(encrypted, key=PASSPHRASE) as memory:
        memory.add("Planted tomatoes", at="2024-05-01")
    with Memory.open(plain) as memory:
        memory.add("Planted tomatoes", at="2024-05-01")
    db = apsw.Connection(str(foreign))  # SQLite3 Multiple Ciphers' own AES, not offered
    db.pragma("cipher", "aes256cbc")
    db.pragma("key", PASSPHRASE)
    db.execute("CREATE TABLE t(x)")
    db.close()
    cases = [
        (encrypted, {}, f"error: {encrypted} is encrypted (or is not a SQLite database): give "
                        "its key: --key-file FILE"),
        (encrypted, {"RAMEM_KEY": "wrong"}, f"error: the key from RAMEM_KEY does not open "
                                            f"{encrypted}: check the passphrase"),
        (plain, {"RAMEM_KEY": PASSPHRASE}, f"error: {plain} is not encrypted, but a key was "
                                           f"given (RAMEM_KEY): to encrypt it run `ramem --db "
                                           f"{plain} encrypt`"),
        (foreign, {"RAMEM_KEY": PASSPHRASE}, "a bank encrypted by another tool with other "
                                             "settings cannot be opened"),
    ]
    for bank, env, expected in cases:
        done = run_cli("--db", str(bank), "search", "tomatoes", env=env)
        assert done.exit_code == 1, done.output
        lines = done.output.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("error: "), done.output
        assert expected in lines[0]
        assert "file is not a database" not in lines[0] and "Traceback" not in done.output
        assert PASSPHRASE not in done.output


def test_a_bank_encrypted_with_sqlcipher_opens_without_naming_the_cipher(tmp_path):
    bank = tmp_path / "b.db"
    with Memory.open(bank, key=PASSPHRASE, cipher="sqlcipher") as memory:
        memory.add("Planted tomatoes", at="2024-05-01")
    with Memory.open(bank, key=PASSPHRASE) as memory:
        assert memory.cipher == "sqlcipher"
        assert memory.stats()["memories"] == 1
    # SQLCipher 4's own settings open it: what DB Browser for SQLCipher does
    db = apsw.Connection(str(bank))
    db.pragma("cipher", "sqlcipher")
    db.pragma("legacy", 4)
    db.pragma("key", PASSPHRASE)
    assert db.execute("SELECT count(*) FROM memories").fetchone()[0] == 1


# ------------------------------------------------------------ encrypt, rekey, decrypt
def test_encrypt_rekey_and_decrypt_from_the_command_line(tmp_path):
    bank = tmp_path / "diary.db"
    secret = sentinel()
    assert run_cli("--db", str(bank), "add", f"My {secret} entry", "--at",
                   "2024-05-01").exit_code == 0
    first, second = key_file(tmp_path, "first"), key_file(tmp_path, "second")
    done = run_cli("--db", str(bank), "--key-file", str(first), "encrypt")
    assert done.exit_code == 0 and "encrypted" in done.output, done.output
    assert secret.encode() not in bank.read_bytes()
    again = run_cli("--db", str(bank), "--key-file", str(first), "encrypt")
    assert again.exit_code == 1 and "already encrypted" in again.output
    done = run_cli("--db", str(bank), "--key-file", str(first), "rekey", "--new-key-file",
                   str(second))
    assert done.exit_code == 0 and "rekeyed" in done.output, done.output
    assert run_cli("--db", str(bank), "--key-file", str(first), "stats").exit_code == 1
    copy = tmp_path / "clear.db"
    done = run_cli("--db", str(bank), "--key-file", str(second), "decrypt", "--to", str(copy))
    assert done.exit_code == 0, done.output
    assert "is an unencrypted copy of the bank" in done.output
    assert secret.encode() in copy.read_bytes() and oct(copy.stat().st_mode)[-3:] == "600"
    refused = run_cli("--db", str(bank), "--key-file", str(second), "decrypt", "--to",
                      str(copy))
    assert refused.exit_code == 1 and f"{copy} exists" in refused.output
    with Memory.open(copy) as memory:
        assert memory.stats()["memories"] == 1


def test_encrypt_is_refused_while_another_process_has_the_bank_open(tmp_path):
    bank = tmp_path / "diary.db"
    with Memory.open(bank) as memory:
        memory.add("Planted tomatoes", at="2024-05-01")
    before = bank.read_bytes()
    holder = subprocess.Popen(
        [sys.executable, "-c",
         "import sys, time; sys.path.insert(0, sys.argv[2]); from ramem_local import Memory;"
         "m = Memory.open(sys.argv[1]); m.stats(); print('open', flush=True); time.sleep(60)",
         str(bank), str(REPO)], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "open"
        with Memory.open(bank) as memory, pytest.raises(BankLockedError,
                                                        match="another process has"):
            memory.encrypt(PASSPHRASE)
    finally:
        holder.kill()
        holder.wait()
    assert bank.read_bytes()[:16] == before[:16] == b"SQLite format 3\x00"
    with Memory.open(bank) as memory:
        assert memory.stats()["memories"] == 1


def load_harness():
    spec = importlib.util.spec_from_file_location("kill_harness",
                                                  REPO / "scripts" / "kill_harness.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("kill_harness", module)
    spec.loader.exec_module(module)
    return module


@pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="needs SIGKILL")
@pytest.mark.parametrize("command", ["encrypt", "rekey"])
def test_twenty_kills_of_encrypt_and_rekey_lose_nothing(tmp_path, command):
    """After every kill exactly the old key or the new one opens the bank with all of its
    content; run again, the command finishes (scripts/kill_harness.py --command ...)."""
    figures = load_harness().run_key_harness(command, kills=20, turns=1500, seed=5,
                                             workdir=tmp_path, log=lambda _line: None)
    assert figures["kills"] == 20
    assert figures["old"] + figures["new"] == 20


def test_export_of_an_encrypted_bank_says_it_is_clear_text(tmp_path):
    bank = tmp_path / "b.db"
    with Memory.open(bank, key=PASSPHRASE) as memory:
        memory.add("Planted tomatoes", at="2024-05-01")
    out = tmp_path / "out.md"
    done = run_cli("--db", str(bank), "export", "--format", "md", str(out),
                   env={"RAMEM_KEY": PASSPHRASE})
    assert done.exit_code == 0, done.output
    assert "holds them in clear" in done.output and "Planted tomatoes" in out.read_text()


def test_stats_and_doctor_say_whether_the_bank_is_encrypted(tmp_path):
    encrypted, plain = tmp_path / "e.db", tmp_path / "p.db"
    Memory.open(encrypted, key=PASSPHRASE, cipher="sqlcipher").close()
    Memory.open(plain).close()
    env = {"RAMEM_KEY": PASSPHRASE}
    assert "encryption: sqlcipher" in run_cli("--db", str(encrypted), "stats", env=env).output
    assert "encryption: none" in run_cli("--db", str(plain), "stats").output
    doctor = run_cli("--db", str(encrypted), "doctor", env=env).output
    assert "ok   encryption: sqlcipher" in doctor
    assert json.loads(run_cli("--db", str(encrypted), "stats", "--json",
                              env=env).output)["encryption"] == "sqlcipher"


def test_a_bank_key_never_shows_its_passphrase():
    key = BankKey("hunter2", "RAMEM_KEY")
    assert "hunter2" not in repr(key) and "RAMEM_KEY" in repr(key)


def test_an_mcp_client_gets_the_key_errors_as_tool_errors_and_the_key_file_way_works(tmp_path):
    mcp = pytest.importorskip("mcp")
    import anyio

    bank = tmp_path / "b.db"
    with Memory.open(bank, key=PASSPHRASE) as memory:
        memory.add("Planted tomatoes in the garden", at="2024-05-01")
    secret_file = key_file(tmp_path)
    seen: dict[str, object] = {}

    def server(*args: str):
        return mcp.StdioServerParameters(
            command=sys.executable, args=[str(CLI_SCRIPT), "--db", str(bank), *args, "mcp"],
            env={"RAMEM_CONFIG": os.environ["RAMEM_CONFIG"], "RAMEM_DEFAULT_EMBEDDER": "none"})

    wrong_file = key_file(tmp_path, "not the passphrase")

    async def session() -> None:
        async with mcp.Client(server(), read_timeout_seconds=60) as client:
            seen["without"] = await client.call_tool("recall", {"question": "tomatoes"})
        async with mcp.Client(server("--key-file", str(wrong_file)),
                              read_timeout_seconds=60) as client:
            seen["wrong"] = await client.call_tool("remember", {"text": "Sowed peas"})
        async with mcp.Client(server("--key-file", str(secret_file)),
                              read_timeout_seconds=60) as client:
            seen["with"] = await client.call_tool("recall", {"question": "tomatoes"})

    anyio.run(session)
    refused = seen["without"]
    assert refused.is_error
    text = "".join(getattr(part, "text", "") for part in refused.content)
    assert text.startswith(f"error: {bank} is encrypted (or is not a SQLite database): give "
                           "its key: --key-file FILE"), text
    wrong = seen["wrong"]
    assert wrong.is_error
    text = "".join(getattr(part, "text", "") for part in wrong.content)
    assert text.startswith(f"error: the key from the key file {wrong_file} does not open "
                           f"{bank}: check the passphrase"), text
    answered = seen["with"]
    assert not answered.is_error
    assert "Planted tomatoes" in json.dumps(answered.structured_content)


def test_doctor_warns_of_a_copy_an_interrupted_encrypt_left(tmp_path):
    bank = tmp_path / "b.db"
    with Memory.open(bank, key=PASSPHRASE) as memory:
        memory.add("Planted tomatoes", at="2024-05-01")
    left = tmp_path / "b.db.ramem-rewrite"
    left.write_bytes(b"\x01" * 4096)  # what a kill between the copy and the rename leaves
    doctor = run_cli("--db", str(bank), "doctor", env={"RAMEM_KEY": PASSPHRASE}).output
    assert f"WARN encryption: {left} is a copy an interrupted `encrypt` or `rekey` left" in doctor
    with Memory.open(bank, key=PASSPHRASE) as memory:  # the next rekey removes it
        memory.encrypt("another passphrase")
    assert not left.exists()


def test_rekey_without_a_new_passphrase_names_where_to_give_it(tmp_path):
    bank = tmp_path / "b.db"
    Memory.open(bank, key=PASSPHRASE).close()
    done = run_cli("--db", str(bank), "rekey", env={"RAMEM_KEY": PASSPHRASE})
    assert done.exit_code == 1
    assert done.output.strip() == ("error: no passphrase for the bank: give --new-key-file FILE "
                                   "(a file only you can read) or RAMEM_NEW_KEY, or run the "
                                   "command in a terminal to be asked")
    with Memory.open(bank, key=PASSPHRASE) as memory:  # unchanged
        assert memory.cipher == "chacha20"


def test_a_new_bank_opened_with_a_key_says_it_is_encrypted(tmp_path):
    bank = tmp_path / "b.db"
    done = run_cli("--db", str(bank), "add", "Planted tomatoes", env={"RAMEM_KEY": PASSPHRASE})
    assert done.exit_code == 0, done.output
    assert (f"note: the new bank {bank} is encrypted (chacha20) with the key from RAMEM_KEY"
            in done.output)
    again = run_cli("--db", str(bank), "add", "Sowed peas", env={"RAMEM_KEY": PASSPHRASE})
    assert "is encrypted (chacha20)" not in again.output
