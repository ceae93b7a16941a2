"""Two writers and a reader on one bank at once: an ``ingest`` subprocess, an ``add`` loop and
a ``search`` loop (threads, each with its own connection). Every write lands exactly once and
no "database is locked" reaches the user."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

from ramem_local import Memory

REPO = Path(__file__).resolve().parents[1]
SECONDS = 8.0
PER_INGEST = 600


def write_turns(path: Path, count: int) -> None:
    with path.open("w") as handle:
        for i in range(count):
            handle.write(json.dumps({"speaker": "Ann", "text": f"ingested turn {i} about bread",
                                     "timestamp": 1_700_000_000 + 60 * i, "session": i // 50,
                                     "id": f"t{i}"}) + "\n")


def test_an_add_loop_an_ingest_and_a_reader_share_a_bank(tmp_path):
    db = tmp_path / "shared.db"
    Memory.open(db).close()
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))}
    errors: list[str] = []
    added: list[int] = []
    searches = [0]
    stop = threading.Event()

    def add_loop() -> None:
        with Memory.open(db) as memory:
            i = 0
            while not stop.is_set():
                try:
                    added.append(memory.add(f"journal entry number {i} about tea",
                                            at=1_650_000_000 + 3600 * i))
                except Exception as exc:  # noqa: BLE001 - collected and asserted on
                    errors.append(f"add: {type(exc).__name__}: {exc}")
                i += 1

    def read_loop() -> None:
        with Memory.open(db) as memory:
            while not stop.is_set():
                try:
                    memory.search("bread or tea", k=5)
                    searches[0] += 1
                except Exception as exc:  # noqa: BLE001
                    errors.append(f"search: {type(exc).__name__}: {exc}")

    threads = [threading.Thread(target=add_loop), threading.Thread(target=read_loop)]
    for thread in threads:
        thread.start()
    started = time.monotonic()
    ingests = []
    while time.monotonic() - started < SECONDS:  # each run a new conversation of 600 turns
        source = tmp_path / f"chat-{len(ingests)}.jsonl"
        write_turns(source, PER_INGEST)
        done = subprocess.run([sys.executable, str(REPO / "cli.py"), "--db", str(db), "ingest",
                               str(source)], env=env, capture_output=True, text=True)
        ingests.append(done)
    stop.set()
    for thread in threads:
        thread.join()

    assert errors == []
    for done in ingests:
        assert done.returncode == 0, done.stderr
        assert "locked" not in done.stderr and "busy" not in done.stderr
    with Memory.open(db) as memory:
        rows = memory.store.db.execute(
            "SELECT t.conversation_id, t.text, count(*) FROM turns t "
            "GROUP BY t.conversation_id, t.text HAVING count(*) > 1"
        ).fetchall()
        assert rows == []
        stats = memory.stats()
        assert stats["turns"] == PER_INGEST * len(ingests) + len(added) == stats["memories"]
        assert len(set(added)) == len(added)
        assert memory.store.integrity_check() == ["ok"]
    print(f"adds {len(added)}, ingest runs {len(ingests)}, searches {searches[0]}")
    assert len(added) > 10 and searches[0] > 10


def test_a_transaction_that_reads_first_is_not_undone_by_another_writer(tmp_path):
    """In WAL mode a deferred transaction that read before another process committed fails
    at its first write (SQLITE_BUSY_SNAPSHOT, no busy wait); ``Store.atomic`` begins
    IMMEDIATE, so the other writer waits instead and both writes land."""
    from ramem_local.store import Store

    db = tmp_path / "b.db"
    first, second = Store.open(db), Store.open(db)
    errors: list[BaseException] = []

    def other_writer() -> None:
        try:
            with second.atomic():
                second.set_meta("other", "written")
        except BaseException as exc:  # noqa: BLE001
            errors.append(exc)

    try:
        with first.atomic():
            assert first.get_meta("marker") is not None  # a read first
            thread = threading.Thread(target=other_writer)
            thread.start()
            time.sleep(0.3)  # the other writer tries meanwhile
            first.set_meta("mine", "written")
        thread.join()
        assert errors == []
        assert first.get_meta("mine") == "written" and first.get_meta("other") == "written"
    finally:
        first.close()
        second.close()
