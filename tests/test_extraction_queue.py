"""The extraction queue: an ingest queues its windows, `ramem extract` works them (most recent
first, within a budget, with an ETA at the measured rate), stats and doctor show the queue, and
search does not list a turn next to the one memory extracted from it.

Scripted fakes drive the logic (order, budget, rate); the real SmolLM2 GGUF drives the
end-to-end checks: a 12-window import, a SIGKILL during `extract`, the ETA on a rerun.
"""

from __future__ import annotations

import json
import random
import signal
import subprocess
import sys
import time
from datetime import datetime, timedelta
from pathlib import Path

import apsw
import click
import pytest
from chat_sample import entry, facts_for_window, labels_of
from click.testing import CliRunner

from ramem_local.api import Memory
from ramem_local.cli import DURATION, cli
from ramem_local.ingest.llm_pipeline import run_extraction
from ramem_local.retrieve import without_repeated_turns
from ramem_local.testing import ScriptedLLM
from ramem_local.types import Candidate
from tests.real_models import smollm_path

pytest_plugins = ("chat_fixtures",)
CLI_SCRIPT = Path(__file__).resolve().parents[1] / "cli.py"


class FakeClock:
    """Time that passes only when the scripted model 'thinks' (60 s a call)."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now

    def thinking(self, reply):
        def answer(messages, schema, max_tokens):
            self.now += 60.0
            return reply(messages, schema, max_tokens) if callable(reply) else reply
        return answer


def last_turn_times(memory: Memory, window_ids: list[int]) -> list[int]:
    turns = {t.id: t.timestamp for t in memory.store.conversation_turns(
        memory.store.conversation_id("chat"))}
    windows = {w.id: w for w in memory.store.extraction_windows()}
    return [turns[windows[i].last_turn_id] for i in window_ids]


def extract(memory: Memory, clock: FakeClock | None = None, **options):
    clock = clock or FakeClock()
    memory.llm = ScriptedLLM([clock.thinking(facts_for_window)] * 20)
    return run_extraction(memory.store, memory.llm, memory.embedder, tz=memory.tz,
                          window_size=3, overlap=0, clock=clock, **options)


def test_the_most_recent_windows_are_extracted_first(bank):
    report = extract(bank, recent_first=True)
    order = [w.window_id for w in report.windows]
    assert len(order) == 4 and report.done == 4
    times = last_turn_times(bank, order)
    assert times == sorted(times, reverse=True)


def test_oldest_first_works_the_queue_in_time_order(bank):
    times = last_turn_times(bank, [w.window_id for w in extract(bank, recent_first=False).windows])
    assert times == sorted(times)


def test_since_takes_only_windows_whose_last_turn_is_that_recent(bank):
    bank.plan_extraction(window_size=3, overlap=0)
    windows = bank.store.extraction_windows()
    cut = sorted(last_turn_times(bank, [w.id for w in windows]))[2]
    report = extract(bank, since=cut)
    assert [w.window_id for w in report.windows] and all(
        t >= cut for t in last_turn_times(bank, [w.window_id for w in report.windows]))
    assert bank.extraction_queue()["pending"] == 4 - report.done


def test_a_budget_stops_at_the_next_window_boundary_and_leaves_the_rest_pending(bank):
    report = extract(bank, budget_seconds=90)  # 60 s a window: the second starts at 60 s
    assert (report.done, report.not_processed, report.stopped_by_budget) == (2, 2, True)
    statuses = sorted(w.status for w in bank.store.extraction_windows())
    assert statuses == ["done", "done", "pending", "pending"]
    done = {w.id for w in bank.store.extraction_windows() if w.status == "done"}
    windows_with_memories = {
        row[0] for row in bank.store.db.execute(
            "SELECT DISTINCT window_id FROM memories WHERE window_id IS NOT NULL")}
    assert windows_with_memories == done


def test_the_eta_is_the_pending_windows_at_the_measured_rate(bank):
    extract(bank, limit=1)
    queue = bank.extraction_queue()
    assert (queue["pending"], queue["done"]) == (3, 1)
    assert (queue["rate_model"], queue["seconds_per_window"]) == ("scripted-llm", 60.0)
    assert queue["eta_seconds"] == 180
    assert queue["conversations"] == [
        {"conversation": "chat", "pending": 3, "done": 1, "failed": 0}]


def test_before_any_window_is_measured_the_eta_is_unknown(bank):
    assert bank.plan_extraction(window_size=3, overlap=0) == 4
    queue = bank.extraction_queue()
    assert queue["eta_seconds"] is None and queue["pending"] == 4


@pytest.mark.parametrize(("text", "seconds"),
                         [("90s", 90), ("20m", 1200), ("1h30m", 5400), ("2h", 7200)])
def test_budgets_are_durations_with_units(text, seconds):
    assert DURATION.convert(text, None, None) == seconds


@pytest.mark.parametrize("text", ["90", "20 minutes", "m", "-5m", ""])
def test_a_budget_without_a_unit_is_refused(text):
    with pytest.raises(click.BadParameter, match="not a duration"):
        DURATION.convert(text, None, None)


def test_stats_and_doctor_show_a_long_queue_and_an_embedder_that_does_not_load(bank, tmp_path):
    bank.plan_extraction(window_size=3, overlap=0)
    bank.store.record_window_seconds("big-model", 2000.0)
    bank.close()
    runner = CliRunner()
    stats = runner.invoke(cli, ["--db", str(tmp_path / "b.db"), "stats"])
    assert "extraction windows: pending 4, done 0, failed 0" in stats.output
    assert "pending extraction: ETA 2h13m at 2000.0 s/window measured for big-model" in stats.output
    doctor = runner.invoke(cli, ["--db", str(tmp_path / "b.db"), "doctor"],
                           env={"RAMEM_MODELS_DIR": str(tmp_path / "models")})
    assert "ok   bank file: integrity_check ok" in doctor.output
    assert "ok   sqlite-vec v" in doctor.output
    assert "WARN extraction: 4 window(s) pending, ETA 2h13m" in doctor.output
    # The test bank's embedder is a unit-test fake no command can load: that is BAD.
    assert "BAD  embedder hashing: " in doctor.output
    assert doctor.exit_code == 1


def test_doctor_fails_when_the_full_text_index_is_out_of_step(bank, tmp_path):
    bank.store.db.execute("DELETE FROM memories_fts WHERE rowid = (SELECT min(id) FROM memories)")
    bank.close()
    doctor = CliRunner().invoke(cli, ["--db", str(tmp_path / "b.db"), "doctor"],
                                env={"RAMEM_MODELS_DIR": str(tmp_path / "models")})
    assert doctor.exit_code == 1
    assert "BAD  full-text index: 9 rows for 10 memories" in doctor.output


def candidates(memory: Memory, ids: list[int]) -> list[Candidate]:
    records = memory.store.get_memories(ids)
    return [Candidate(memory=records[i], score=0.0, list_name="content") for i in ids]


def turn_memory(memory: Memory, label: str) -> int:
    return next(m.id for m in memory.store.list_memories(limit=100)
                if m.kind == "turn" and m.source_turns == [label])


def test_a_turn_and_its_only_extracted_memory_are_not_both_listed(bank):
    def reply(messages, schema, max_tokens):
        first = labels_of(schema)[0]
        if first == "D1:1":
            return {"entries": [entry("Melanie painted a sunrise over the lake.", "D1:2"),
                                entry("Caroline went to an LGBTQ support group.", "D1:3"),
                                entry("Caroline found the support group powerful.", "D1:3")]}
        return {"entries": []}

    bank.llm = ScriptedLLM([reply] * 10)
    bank.extract(window_size=4, overlap=0)
    extracted = {m.content: m.id for m in bank.store.list_memories(limit=100) if m.kind != "turn"}
    painted = extracted["Melanie painted a sunrise over the lake."]
    support = extracted["Caroline went to an LGBTQ support group."]
    d12, d13 = turn_memory(bank, "D1:2"), turn_memory(bank, "D1:3")

    kept = without_repeated_turns(bank.store, candidates(bank, [painted, d12, support, d13]))
    # D1:2 said nothing beyond its one memory; D1:3 was told as two memories: it stays.
    assert [c.memory.id for c in kept] == [painted, support, d13]
    kept = without_repeated_turns(bank.store, candidates(bank, [d12, painted, d13, support]))
    # The turn came first: its one memory goes; D1:3's memories are one of two: they stay.
    assert [c.memory.id for c in kept] == [d12, d13, support]


# --------------------------------------------------------------------------- the real SmolLM


def write_journal(path: Path, turns: int, *, same_text: bool = False) -> Path:
    """Four entries a day; with ``same_text`` every day is told with the same words."""
    start = datetime(2024, 3, 4, 9, 0)
    rows = []
    for i in range(turns):
        day, slot = divmod(i, 4)
        text = (f"Walked to the lake with Ana and we fed the ducks, part {slot + 1}."
                if same_text else f"Day {day}: walked to place {i} with friend {i % 7}.")
        rows.append({"speaker": "me", "text": text, "session": day + 1,
                     "timestamp": (start + timedelta(days=day, minutes=slot)).isoformat()})
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    return path


def window_state(db: Path) -> tuple[dict[str, int], list[tuple[int, str, int, int]]]:
    connection = apsw.Connection(str(db))
    try:
        counts = dict(connection.execute(
            "SELECT status, count(*) FROM extraction_windows GROUP BY status"))
        rows = list(connection.execute(
            """SELECT w.id, w.status, w.attempts,
                      (SELECT count(*) FROM memories m WHERE m.window_id = w.id)
               FROM extraction_windows w ORDER BY w.id"""))
    finally:
        connection.close()
    return counts, rows


@pytest.mark.real_model
def test_an_import_of_12_windows_returns_with_them_queued_and_its_turns_searchable(tmp_path):
    llm = str(smollm_path())
    db = tmp_path / "journal.db"
    source = write_journal(tmp_path / "journal.jsonl", 48)
    runner = CliRunner()
    result = runner.invoke(cli, ["--db", str(db), "--llm", llm, "ingest", str(source),
                                 "--window", "4", "--overlap", "0"])
    assert result.exit_code == 0, result.output
    assert "12 window(s) queued" in result.output
    counts, rows = window_state(db)
    assert counts == {"pending": 12} and all(r[2] == 0 and r[3] == 0 for r in rows)
    found = runner.invoke(cli, ["--db", str(db), "search", "place 17", "--json"])
    assert "place 17" in json.loads(found.stdout)["results"][0]["content"]


def extract_in_a_new_process(arguments: list[str]) -> dict:
    """``ramem … extract --json`` as a user runs it: in a fresh process, which loads the model
    (and the prompt's fixed start from the user cache, or evaluates it there the first time)
    during its first window. In this process a model loaded by an earlier call (or test) is
    reused, so its windows would time seconds shorter than the ETA, which was measured in
    fresh processes."""
    done = subprocess.run([sys.executable, str(CLI_SCRIPT), *arguments, "--json"],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


@pytest.mark.real_model
def test_a_sigkill_during_extract_loses_no_window_doubles_none_and_the_eta_holds(tmp_path):
    """SmolLM2's time per window swings from seconds to minutes when it loops until its token
    budget; a small budget makes every window cost the same (each ends failed as truncated,
    after the split retry: the same write path, one transaction, as a done window)."""
    llm = str(smollm_path())
    db = tmp_path / "journal.db"
    source = write_journal(tmp_path / "journal.jsonl", 16, same_text=True)
    runner = CliRunner()
    common = ["--db", str(db), "--llm", llm, "--llm-threads", "1"]
    bounded = ["extract", "--max-tokens", "64"]
    ingest = runner.invoke(cli, [*common, "ingest", str(source), "--window", "4",
                                 "--overlap", "0", "--extract", "later"])
    assert ingest.exit_code == 0 and "4 window(s) queued" in ingest.output, ingest.output

    # A machine that has extracted before: the prompt's fixed start is saved in the user
    # cache (runtime.prompt_prefix.SavedPrefixes), so no window below evaluates it, whichever
    # tests ran before this one.
    warm_up = tmp_path / "warm-up.db"
    assert runner.invoke(cli, ["--db", str(warm_up), "--llm", llm, "--llm-threads", "1",
                               "ingest", str(source), "--window", "4", "--overlap", "0",
                               "--extract", "later"]).exit_code == 0
    extract_in_a_new_process(["--db", str(warm_up), "--llm", llm, "--llm-threads", "1",
                              *bounded, "--limit", "1"])

    rate = extract_in_a_new_process([*common, *bounded, "--limit", "1"])["queue"][
        "seconds_per_window"]
    assert rate and rate > 0

    # Killed part-way through a window: that window stays pending, untouched.
    process = subprocess.Popen([sys.executable, str(CLI_SCRIPT), *common, *bounded],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(random.Random(7).uniform(0.5, max(0.6, 0.5 * rate)))
    process.send_signal(signal.SIGKILL)
    process.wait()
    counts, rows = window_state(db)
    finished = counts.get("done", 0) + counts.get("failed", 0)
    assert finished >= 1 and counts.get("pending", 0) >= 1 and sum(counts.values()) == 4
    for _, status, attempts, memories in rows:
        assert (status, attempts) in {("done", 1), ("failed", 1), ("pending", 0)}
        assert status == "done" or memories == 0
    connection = apsw.Connection(str(db))
    assert connection.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    connection.close()

    # The rerun does the next window once, in about the time the ETA said.
    queue = json.loads(runner.invoke(cli, ["--db", str(db), "stats", "--json"]).stdout)[
        "extraction_queue"]
    eta_one_window = queue["eta_seconds"] / queue["pending"]
    took = extract_in_a_new_process([*common, *bounded, "--limit", "1"])["extraction"][
        "seconds"]
    assert eta_one_window / 2 <= took <= eta_one_window * 2, (eta_one_window, took)
    counts_after, rows_after = window_state(db)
    assert counts_after.get("done", 0) + counts_after.get("failed", 0) == finished + 1
    assert all(attempts == (0 if status == "pending" else 1)
               for _, status, attempts, _ in rows_after)

    # A budget shorter than a window: the window under way is finished, the next not begun.
    budgeted = runner.invoke(cli, [*common, *bounded, "--budget", "1s", "--json"])
    assert budgeted.exit_code == 0, budgeted.output
    report = json.loads(budgeted.stdout)["extraction"]
    left = counts_after.get("pending", 0)
    assert (report["done"] + report["failed"], report["stopped_by_budget"]) == (1, left > 1)
    assert report["not_processed"] == left - 1
