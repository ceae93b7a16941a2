"""Crash-safety harness: SIGKILL ``ramem ingest`` at random moments and check the bank.

    python scripts/kill_harness.py --kills 20 --turns 6000 [--embedder DIR] [--seed 1]

A JSONL of ``--turns`` turns (several conversations, labelled and gap sessions, relative dates
in the text) is first ingested without interruption into a reference bank. Then, ``--kills``
times: a fresh bank, ``ramem ingest`` started as a subprocess and killed with SIGKILL after a
random delay in [0, the reference run's wall time); a second, resumed run is killed too in one
cycle of three. After every kill:

* ``PRAGMA integrity_check`` is ok, and so is FTS5's own integrity check against the memories
  table (external content: the index must match the rows);
* every stored turn has exactly one turn memory and vice versa; with an embedder, the vector
  table holds one row per memory (they are written in one transaction);

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


def ingest_command(db: Path, source: Path, embedder: str | None) -> list[str]:
    command = [sys.executable, str(CLI), "--db", str(db)]
    if embedder:
        command += ["--embedder", embedder]
    return command + ["ingest", str(source)]


def environment() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
    return env


def run_to_end(db: Path, source: Path, embedder: str | None) -> float:
    started = time.perf_counter()
    done = subprocess.run(ingest_command(db, source, embedder), env=environment(),
                          capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"ingest failed ({done.returncode}): {done.stderr.strip()}")
    return time.perf_counter() - started


def killed_run(db: Path, source: Path, embedder: str | None, delay: float) -> bool:
    """Start an ingest, SIGKILL it after ``delay`` seconds; True when it was still running."""
    process = subprocess.Popen(ingest_command(db, source, embedder), env=environment(),
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        process.wait(timeout=delay)
        return False  # finished before the kill
    except subprocess.TimeoutExpired:
        process.send_signal(signal.SIGKILL)
        process.wait()
        return True


def check_bank(db: Path, expect_vectors: bool) -> dict[str, int]:
    """The invariants that must hold after any kill; returns the row counts."""
    from ramem_local.store import Store

    store = Store.open(db, create=False)
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
        if expect_vectors and store.has_vectors():
            assert vectors == memories, f"{vectors} vectors for {memories} memories"
        return {"turns": turns, "memories": memories, "vectors": vectors}
    finally:
        store.close()


def canonical_dump(db: Path) -> dict[str, list]:
    """The bank's content without row ids or creation times, sorted."""
    from ramem_local.store import Store

    store = Store.open(db, create=False)
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
                log=print) -> dict:
    """Run the harness; raises AssertionError / SystemExit on a violation."""
    started = time.perf_counter()
    rng = random.Random(seed)
    source = workdir / "turns.jsonl"
    write_jsonl(source, turns, seed)
    reference = workdir / "reference.db"
    wall = run_to_end(reference, source, embedder)
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
            if not killed_run(db, source, embedder, delay):
                figures["finished_before_kill"] += 1
                continue
            figures["kills"] += 1
            if not db.exists():
                figures["before_first_write"] += 1
                continue
            counts = check_bank(db, expect_vectors=embedder is not None)
            if counts["turns"] == 0:
                figures["before_first_write"] += 1
            elif counts["turns"] < total:
                figures["mid_write"] += 1
            else:
                figures["after_last_write"] += 1
            log(f"kill {figures['kills']}: after {delay:.2f}s, {counts}")
        run_to_end(db, source, embedder)
        check_bank(db, expect_vectors=embedder is not None)
        dump = canonical_dump(db)
        for key, rows in expected.items():
            assert dump[key] == rows, f"cycle {figures['cycles']}: {key} differs after resume"
        for suffix in ("", "-wal", "-shm"):
            Path(f"{db}{suffix}").unlink(missing_ok=True)
    figures["seconds"] = round(time.perf_counter() - started, 1)
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
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
        figures = run_harness(args.kills, args.turns, args.seed, args.embedder, workdir,
                              log=lambda line: print(line, file=sys.stderr))
    except AssertionError as exc:
        print(f"FAILED: {exc} (bank kept in {workdir})", file=sys.stderr)
        sys.exit(1)
    print(json.dumps({**figures, "embedder": args.embedder, "seed": args.seed}, indent=2))
    if args.keep is None:
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
