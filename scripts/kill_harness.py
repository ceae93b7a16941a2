"""Crash-safety harness: SIGKILL ``ramem ingest``, ``ramem import``, ``ramem encrypt`` or
``ramem rekey`` at random moments and check the bank.

    python scripts/kill_harness.py --kills 20 --turns 6000 [--embedder DIR] [--seed 1]
    python scripts/kill_harness.py --command import --kind claude --kills 20 --turns 6000
    python scripts/kill_harness.py --command encrypt --kills 20 --turns 6000
    python scripts/kill_harness.py --command rekey --kills 20 --turns 6000

``encrypt`` and ``rekey`` (``run_key_harness``): a bank of ``--turns`` turns is encrypted (or,
for rekey, encrypted under an old key first) by the command, killed after a random delay in
[0, an uninterrupted run's wall time) or, for half of them, in its last quarter; after every
kill exactly the old key or the new one opens the bank, its content is the reference's, and
the command run again ends under the new key with the same content.

``ingest`` reads a JSONL of ``--turns`` turns (several conversations interleaved, labelled and
gap sessions, relative dates in the text); ``import`` a chat export of about ``--turns``
messages (``--kind claude`` or ``chatgpt``: many chats of 10 to 80 messages, sittings days
apart, and for ChatGPT a system message, an edited question's abandoned branch and a tool call
in some chats), written deterministically from ``--seed``. The file is first ingested or
imported without interruption into a reference bank. Then, ``--kills`` times: a fresh bank, the
command started as a subprocess and killed with SIGKILL after a random delay in [0, the
reference run's wall time); a second, resumed run is killed too in one cycle of three. After
every kill:

* ``PRAGMA integrity_check`` is ok, and so is FTS5's own integrity check against the memories
  table (external content: the index must match the rows);
* every stored turn has exactly one turn memory and vice versa;
* with an embedder: ``ingest`` writes vectors in the transaction of their memories, so the
  vector table holds one row per memory; ``import`` embeds each chat right after its
  transaction, so every vector has its memory and the memories still without one belong to
  one conversation at most (the chat being embedded when the kill came);

and resuming (the same command, run to the end) gives the same canonical dump — sorted
conversations, sessions, turns, memories (content, spans, event times, persons, neighbours),
with no row ids or creation times — as the reference. Exits 1 on the first violation.
Prints a JSON summary (kills, kills that landed mid-write, runs that finished before their
kill, seconds).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
CLI = REPO / "cli.py"
WORDS = ("river dog walk pottery class painting sunrise lake camping mountains tournament "
         "charity bakery bread violin concert garden tomatoes bicycle repair train station "
         "museum library novel chess club swimming pool marathon recipe soup").split()
CUES = ("", "", "", " yesterday", " last week", " on Saturday", " two days ago",
        " this morning", " in May", " next Friday")


def write_jsonl(path: Path, turns: int, seed: int) -> None:
    """``turns`` turns in 3 conversations: one with session labels and ids, two without
    (gap sessions), minute-spaced within a sitting and a day or more between sittings."""
    rng = random.Random(seed)
    start = 1_700_000_000
    clocks = {"alpha": start, "beta": start + 3600, "gamma": start + 7200}
    session = {name: 1 for name in clocks}
    with path.open("w", encoding="utf-8") as handle:
        for index in range(turns):
            name = ("alpha", "beta", "gamma")[index % 3]
            if rng.random() < 0.04:  # a new sitting
                clocks[name] += rng.randint(1, 5) * 86_400
                session[name] += 1
            clocks[name] += rng.randint(20, 300)
            text = " ".join(rng.choice(WORDS) for _ in range(rng.randint(4, 14)))
            row = {"conversation": name, "speaker": rng.choice(["Ann", "Ben", "Chloé"]),
                   "text": f"Turn {index}: {text}{rng.choice(CUES)}.",
                   "timestamp": clocks[name]}
            if name == "alpha":
                row["session"] = session[name]
                row["id"] = f"a-{index}"
            handle.write(json.dumps(row, ensure_ascii=False) + "\n")


def write_claude_export(path: Path, turns: int, seed: int) -> None:
    """A Claude ``conversations.json`` of about ``turns`` messages in chats of 10 to 80."""
    rng = random.Random(seed)
    clock = 1_700_000_000
    chats = []
    written = 0
    while written < turns:
        size = min(rng.randint(10, 80), turns - written)
        chat_id = f"{rng.getrandbits(128):032x}"
        clock += rng.randint(1, 3) * 86_400
        messages = []
        for index in range(size):
            clock += rng.choice([rng.randint(20, 600)] * 19 + [rng.randint(7, 30) * 3600])
            messages.append({
                "uuid": f"{chat_id[:8]}-{index}",
                "sender": "human" if index % 2 == 0 else "assistant",
                "text": _message_text(rng, written + index),
                "content": [], "created_at": _iso(clock), "updated_at": _iso(clock)})
        chats.append({"uuid": chat_id, "name": f"Chat {len(chats)} about {rng.choice(WORDS)}",
                      "created_at": messages[0]["created_at"],
                      "updated_at": messages[-1]["created_at"], "chat_messages": messages})
        written += size
    path.write_text(json.dumps(chats, ensure_ascii=False), encoding="utf-8")


def write_chatgpt_export(path: Path, turns: int, seed: int) -> None:
    """A ChatGPT ``conversations.json`` of about ``turns`` visible messages in chats of 10 to
    80; one chat in three starts with a system message and has an edited question (its first
    version and answer an abandoned branch) and a tool call on the visible thread."""
    rng = random.Random(seed)
    clock = 1_700_000_000.0
    chats = []
    written = 0
    while written < turns:
        size = min(rng.randint(10, 80), turns - written)
        chat_id = f"{rng.getrandbits(128):032x}"
        clock += rng.randint(1, 3) * 86_400
        odd = len(chats) % 3 == 0
        mapping = {"root": _chatgpt_node("root", None, None)}
        parent = "root"
        if odd:
            parent = _chatgpt_add(mapping, parent, "sys", "system", "You are ChatGPT.", clock)
        created = clock
        for index in range(size):
            clock += rng.choice([rng.randint(20, 600)] * 19 + [rng.randint(7, 30) * 3600])
            role = "user" if index % 2 == 0 else "assistant"
            if odd and index == 2:  # the first version of this question, then its edit
                old = _chatgpt_add(mapping, parent, f"{chat_id[:8]}-old", "user",
                                   "An earlier version of the question", clock - 10)
                _chatgpt_add(mapping, old, f"{chat_id[:8]}-old-answer", "assistant",
                             "An answer to the earlier version", clock - 5)
            if odd and index == 3:  # a tool call before the answer: noise
                parent = _chatgpt_add(mapping, parent, f"{chat_id[:8]}-tool", "tool",
                                      "search results", clock - 1)
            parent = _chatgpt_add(mapping, parent, f"{chat_id[:8]}-{index}", role,
                                  _message_text(rng, written + index), clock)
        chats.append({"title": f"Chat {len(chats)} about {rng.choice(WORDS)}",
                      "create_time": created, "update_time": clock, "mapping": mapping,
                      "current_node": parent, "conversation_id": chat_id, "id": chat_id})
        written += size
    path.write_text(json.dumps(chats, ensure_ascii=False), encoding="utf-8")


def _chatgpt_node(node_id: str, parent: str | None, message: dict | None) -> dict:
    return {"id": node_id, "parent": parent, "children": [], "message": message}


def _chatgpt_add(mapping: dict, parent: str, node_id: str, role: str, text: str,
                 at: float) -> str:
    message = {"id": node_id, "author": {"role": role}, "create_time": at,
               "content": {"content_type": "text", "parts": [text]}, "recipient": "all",
               "metadata": {}}
    mapping[node_id] = _chatgpt_node(node_id, parent, message)
    mapping[parent]["children"].append(node_id)
    return node_id


def _message_text(rng: random.Random, index: int) -> str:
    text = " ".join(rng.choice(WORDS) for _ in range(rng.randint(4, 30)))
    return f"Message {index}: {text}{rng.choice(CUES)}."


def _iso(seconds: float) -> str:
    return datetime.fromtimestamp(seconds, tz=timezone.utc).isoformat().replace("+00:00", "Z")


WRITERS = {"ingest": write_jsonl, "claude": write_claude_export,
           "chatgpt": write_chatgpt_export}


def run_command(db: Path, source: Path, embedder: str | None, kind: str | None) -> list[str]:
    """``ramem ingest SOURCE`` (``kind`` None) or ``ramem import KIND SOURCE``."""
    command = [sys.executable, str(CLI), "--db", str(db)]
    if embedder:
        command += ["--embedder", embedder]
    if kind is None:
        return command + ["ingest", str(source)]
    return command + ["import", kind, str(source)]


def environment() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
    return env


def run_to_end(db: Path, source: Path, embedder: str | None, kind: str | None = None) -> float:
    started = time.perf_counter()
    done = subprocess.run(run_command(db, source, embedder, kind), env=environment(),
                          capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"{kind or 'ingest'} failed ({done.returncode}): "
                         f"{done.stderr.strip()}")
    return time.perf_counter() - started


def killed_run(db: Path, source: Path, embedder: str | None, delay: float,
               kind: str | None = None) -> bool:
    """Start the command, SIGKILL it after ``delay`` seconds; True when it was still running."""
    process = subprocess.Popen(run_command(db, source, embedder, kind), env=environment(),
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        process.wait(timeout=delay)
        return False  # finished before the kill
    except subprocess.TimeoutExpired:
        process.send_signal(signal.SIGKILL)
        process.wait()
        return True


def check_bank(db: Path, expect_vectors: bool, *, per_conversation: bool = False,
               key=None) -> dict[str, int]:
    """The invariants that must hold after any kill; returns the row counts.
    ``per_conversation``: vectors are written after their memories' transaction (import),
    so one conversation at most may still lack some. ``key``: an encrypted bank's."""
    from ramem_local.store import Store

    store = Store.open(db, create=False, key=key)
    try:
        problems = store.integrity_check()
        assert problems == ["ok"], f"integrity_check: {problems}"
        store.db.execute("INSERT INTO memories_fts(memories_fts, rank) "
                         "VALUES ('integrity-check', 1)")
        turns, memories, turn_memories, orphans, unlinked = store.db.execute(
            """
            SELECT (SELECT count(*) FROM turns),
                   (SELECT count(*) FROM memories),
                   (SELECT count(*) FROM memories WHERE kind = 'turn'),
                   (SELECT count(*) FROM turns t WHERE (
                        SELECT count(*) FROM memory_turns mt JOIN memories m
                        ON m.id = mt.memory_id AND m.kind = 'turn'
                        WHERE mt.turn_id = t.id) != 1),
                   (SELECT count(*) FROM memories m WHERE m.kind = 'turn' AND NOT EXISTS (
                        SELECT 1 FROM memory_turns mt WHERE mt.memory_id = m.id))
            """
        ).fetchone()
        assert orphans == 0, f"{orphans} turn(s) without exactly one turn memory"
        assert unlinked == 0, f"{unlinked} turn memory(ies) without a turn"
        assert turns == turn_memories, (turns, turn_memories)
        vectors = store.vector_count() if store.has_vectors() else 0
        if store.has_vectors():  # every float vector has its int8 codes, and no more
            assert len(store.int8_matrix()) == vectors, "int8 codes out of step with vectors"
        if expect_vectors and store.has_vectors():
            if per_conversation:
                _check_vectors_lag_one_conversation(store)
            else:
                assert vectors == memories, f"{vectors} vectors for {memories} memories"
        return {"turns": turns, "memories": memories, "vectors": vectors}
    finally:
        store.close()


def _check_vectors_lag_one_conversation(store) -> None:
    from ramem_local.store.float_blocks import memory_ids_with_vectors

    with_vectors = json.dumps(memory_ids_with_vectors(store.db).tolist())
    stray, lagging = store.db.execute(
        """
        WITH v AS (SELECT value AS memory_id FROM json_each(?))
        SELECT (SELECT count(*) FROM v
                WHERE NOT EXISTS (SELECT 1 FROM memories m WHERE m.id = v.memory_id)),
               (SELECT count(DISTINCT m.conversation_id) FROM memories m
                WHERE NOT EXISTS (SELECT 1 FROM v WHERE v.memory_id = m.id))
        """, (with_vectors,)
    ).fetchone()
    assert stray == 0, f"{stray} vector(s) without a memory"
    assert lagging <= 1, f"memories of {lagging} conversations without vectors"


def canonical_dump(db: Path, key=None) -> dict[str, list]:
    """The bank's content without row ids or creation times, sorted."""
    from ramem_local.store import Store

    store = Store.open(db, create=False, key=key)
    try:
        query = store.db.execute
        dump = {
            "conversations": sorted(query("SELECT name, kind FROM conversations")),
            "participants": sorted(query(
                "SELECT c.name, p.name FROM participants p JOIN conversations c "
                "ON c.id = p.conversation_id")),
            "sessions": sorted(query(
                'SELECT c.name, s.ordinal, s.start, s."end" FROM sessions s JOIN conversations '
                "c ON c.id = s.conversation_id")),
            "turns": sorted(query(
                "SELECT c.name, s.ordinal, t.turn_key, t.external_id, t.speaker, t.text, "
                "t.timestamp FROM turns t JOIN sessions s ON s.id = t.session_id "
                "JOIN conversations c ON c.id = t.conversation_id")),
            "memories": sorted(query(
                "SELECT c.name, m.kind, m.content, m.persons, m.session_start, m.session_end, "
                "m.event_start, m.event_end, m.neighbours, m.dedup_key FROM memories m "
                "JOIN conversations c ON c.id = m.conversation_id"), key=repr),
            "vectors": [store.vector_count() if store.has_vectors() else 0],
        }
        return {key: [list(row) if isinstance(row, tuple) else row for row in rows]
                for key, rows in dump.items()}
    finally:
        store.close()


def run_harness(kills: int, turns: int, seed: int, embedder: str | None, workdir: Path,
                log=print, kind: str | None = None) -> dict:
    """Run the harness on ``ramem ingest`` (``kind`` None) or ``ramem import KIND``; raises
    AssertionError / SystemExit on a violation."""
    started = time.perf_counter()
    rng = random.Random(seed)
    source = workdir / ("turns.jsonl" if kind is None else "conversations.json")
    WRITERS[kind or "ingest"](source, turns, seed)
    reference = workdir / "reference.db"
    wall = run_to_end(reference, source, embedder, kind)
    expected = canonical_dump(reference)
    total = len(expected["turns"])
    log(f"reference: {total} turns, {len(expected['memories'])} memories, {wall:.1f}s")
    figures = {"kills": 0, "mid_write": 0, "before_first_write": 0, "after_last_write": 0,
               "finished_before_kill": 0, "cycles": 0, "turns": total,
               "reference_seconds": round(wall, 2)}
    while figures["kills"] < kills:
        figures["cycles"] += 1
        db = workdir / f"cycle-{figures['cycles']}.db"
        # one cycle in three kills the resumed run as well
        rounds = 2 if figures["cycles"] % 3 == 0 else 1
        for _ in range(rounds):
            if figures["kills"] >= kills:
                break
            delay = rng.uniform(0.0, wall)
            if not killed_run(db, source, embedder, delay, kind):
                figures["finished_before_kill"] += 1
                continue
            figures["kills"] += 1
            if not db.exists():
                figures["before_first_write"] += 1
                continue
            counts = check_bank(db, expect_vectors=embedder is not None,
                                per_conversation=kind is not None)
            if counts["turns"] == 0:
                figures["before_first_write"] += 1
            elif counts["turns"] < total:
                figures["mid_write"] += 1
            else:
                figures["after_last_write"] += 1
            log(f"kill {figures['kills']}: after {delay:.2f}s, {counts}")
        run_to_end(db, source, embedder, kind)
        check_bank(db, expect_vectors=embedder is not None)
        dump = canonical_dump(db)
        for key, rows in expected.items():
            assert dump[key] == rows, f"cycle {figures['cycles']}: {key} differs after resume"
        for suffix in ("", "-wal", "-shm"):
            Path(f"{db}{suffix}").unlink(missing_ok=True)
    figures["seconds"] = round(time.perf_counter() - started, 1)
    return figures


# ------------------------------------------------------------ encrypt and rekey, killed
OLD_PASSPHRASE = "old passphrase of the kill harness"
NEW_PASSPHRASE = "new passphrase of the kill harness"


def key_command(db: Path, command: str) -> tuple[list[str], dict[str, str]]:
    """``ramem encrypt`` (the new key in RAMEM_KEY) or ``ramem rekey`` (the old key in
    RAMEM_KEY, the new one in RAMEM_NEW_KEY)."""
    env = environment()
    if command == "encrypt":
        env["RAMEM_KEY"] = NEW_PASSPHRASE
    else:
        env["RAMEM_KEY"], env["RAMEM_NEW_KEY"] = OLD_PASSPHRASE, NEW_PASSPHRASE
    return [sys.executable, str(CLI), "--db", str(db), command], env


def run_key_command(db: Path, command: str) -> float:
    started = time.perf_counter()
    argv, env = key_command(db, command)
    done = subprocess.run(argv, env=env, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"{command} failed ({done.returncode}): {done.stderr.strip()}")
    return time.perf_counter() - started


def bank_state(db: Path, command: str):
    """("old" or "new", the key that opens the bank): exactly one of them must."""
    from ramem_local.errors import BankKeyError
    from ramem_local.store import Store
    from ramem_local.types import BankKey

    old = None if command == "encrypt" else BankKey(OLD_PASSPHRASE)
    for state, key in (("new", BankKey(NEW_PASSPHRASE)), ("old", old)):
        try:
            Store.open(db, create=False, key=key).close()
        except BankKeyError:
            continue
        return state, key
    raise AssertionError("neither the old key nor the new one opens the bank")


def run_key_harness(command: str, kills: int, turns: int, seed: int, workdir: Path,
                    log=print) -> dict:
    """Kill ``ramem encrypt`` or ``ramem rekey`` at random moments: after every kill the bank
    opens with the old key or the new one and holds exactly the reference content; run again,
    the command ends with the new key and the same content."""
    from ramem_local.store import Store
    from ramem_local.types import BankKey

    started = time.perf_counter()
    rng = random.Random(seed)
    source = workdir / "turns.jsonl"
    write_jsonl(source, turns, seed)
    reference = workdir / "reference.db"
    run_to_end(reference, source, None)
    expected = canonical_dump(reference)
    if command == "rekey":
        Store.open(reference, create=False).replace_under_key(BankKey(OLD_PASSPHRASE),
                                                              "chacha20")
    trial = workdir / "trial.db"
    shutil.copyfile(reference, trial)
    wall = run_key_command(trial, command)
    log(f"reference: {len(expected['turns'])} turns, {reference.stat().st_size} bytes, "
        f"{command} {wall:.2f}s")
    figures = {"kills": 0, "old": 0, "new": 0, "copy_left": 0, "finished_before_kill": 0,
               "turns": len(expected["turns"]), "command_seconds": round(wall, 2)}
    while figures["kills"] < kills:
        db = workdir / "cycle.db"
        for suffix in ("", "-wal", "-shm", ".ramem-rewrite"):
            Path(f"{db}{suffix}").unlink(missing_ok=True)
        shutil.copyfile(reference, db)
        # Half the kills anywhere in the run, half in its last quarter, where the copy is
        # written, checked and renamed over the bank (the start is Python loading).
        delay = rng.uniform(0.0, wall) if rng.random() < 0.5 else rng.uniform(0.75, 1.0) * wall
        argv, env = key_command(db, command)
        process = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL,
                                   stderr=subprocess.DEVNULL)
        try:
            process.wait(timeout=delay)
            figures["finished_before_kill"] += 1
            continue
        except subprocess.TimeoutExpired:
            process.send_signal(signal.SIGKILL)
            process.wait()
        figures["kills"] += 1
        state, key = bank_state(db, command)
        figures[state] += 1
        copy_left = Path(f"{db}.ramem-rewrite").exists()
        figures["copy_left"] += copy_left
        check_bank(db, expect_vectors=False, key=key)
        assert canonical_dump(db, key) == expected, f"kill {figures['kills']}: content differs"
        log(f"kill {figures['kills']}: after {delay:.2f}s, {state} key"
            + (", a copy left beside it" if copy_left else ""))
        if state == "old":
            run_key_command(db, command)
        new_key = BankKey(NEW_PASSPHRASE)
        assert bank_state(db, command)[0] == "new", "the command run again did not finish"
        assert canonical_dump(db, new_key) == expected, "content differs after the run again"
    figures["seconds"] = round(time.perf_counter() - started, 1)
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--command", choices=["ingest", "import", "encrypt", "rekey"],
                        default="ingest")
    parser.add_argument("--kind", choices=["claude", "chatgpt"], default="claude",
                        help="the export --command import reads (default: claude)")
    parser.add_argument("--kills", type=int, default=20)
    parser.add_argument("--turns", type=int, default=6000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--embedder", help="embedder NAME|DIR (default: none, BM25 only)")
    parser.add_argument("--keep", type=Path, help="work in this folder and keep it")
    args = parser.parse_args()
    sys.path.insert(0, str(REPO))
    workdir = args.keep or Path(tempfile.mkdtemp(prefix="ramem-kill-"))
    workdir.mkdir(parents=True, exist_ok=True)
    try:
        kind = args.kind if args.command == "import" else None
        log = lambda line: print(line, file=sys.stderr)  # noqa: E731
        if args.command in ("encrypt", "rekey"):
            figures = run_key_harness(args.command, args.kills, args.turns, args.seed, workdir,
                                      log=log)
        else:
            figures = run_harness(args.kills, args.turns, args.seed, args.embedder, workdir,
                                  log=log, kind=kind)
    except AssertionError as exc:
        print(f"FAILED: {exc} (bank kept in {workdir})", file=sys.stderr)
        sys.exit(1)
    print(json.dumps({**figures, "command": args.command, "kind": kind,
                      "embedder": args.embedder, "seed": args.seed}, indent=2))
    if args.keep is None:
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
