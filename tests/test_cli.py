"""The ``ramem`` command as a user meets it: help, output shapes, idempotence, and errors.

Every test runs the real click app on real bank files in ``tmp_path``. Error tests check what a
user sees: a non-zero exit status, one readable line, and never a traceback (with CliRunner an
uncaught exception is kept in ``result.exception`` instead of being printed, so a clean failure
is one that ended in ``SystemExit``).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from datetime import datetime
from pathlib import Path

import apsw
import pytest
from click.testing import CliRunner, Result
from samples import GARDEN_TURNS, JSONL_TURNS

from ramem_local.cli import cli

REPO = Path(__file__).resolve().parents[1]
COMMANDS = ("init", "add", "ingest", "search", "list", "show", "forget", "timeline", "stats",
            "reindex", "config", "models", "eval")

# A LoCoMo-shaped file: 2 sessions, 7 turns, one shared image (blip_caption).
CAPTION = "a watercolor painting of a sunrise over a lake"
LOCOMO_SAMPLE = {
    "sample_id": "conv-test",
    "conversation": {
        "speaker_a": "Caroline",
        "speaker_b": "Melanie",
        "session_1_date_time": "1:56 pm on 8 May, 2023",
        "session_1": [
            {"speaker": "Caroline", "dia_id": "D1:1",
             "text": "Hey Mel! I finally finished my painting of the sunrise over the lake."},
            {"speaker": "Melanie", "dia_id": "D1:2",
             "text": "That's wonderful, Caroline! Can I see it?"},
            {"speaker": "Caroline", "dia_id": "D1:3", "text": "Sure, here it is.",
             "img_url": ["https://example.invalid/sunrise.jpg"], "blip_caption": CAPTION},
            {"speaker": "Melanie", "dia_id": "D1:4",
             "text": "Beautiful colors. I went to a pottery class yesterday and made a bowl."},
        ],
        "session_2_date_time": "10:37 am on 27 June, 2023",
        "session_2": [
            {"speaker": "Caroline", "dia_id": "D2:1",
             "text": "I joined a support group for LGBTQ people last week."},
            {"speaker": "Melanie", "dia_id": "D2:2",
             "text": "I'm proud of you! My kids and I went camping in the mountains."},
            {"speaker": "Caroline", "dia_id": "D2:3",
             "text": "Camping sounds fun. Did you roast marshmallows by the fire?"},
        ],
    },
}
LOCOMO_TEXT_TO_ID = {
    turn["text"]: turn["dia_id"]
    for key in ("session_1", "session_2")
    for turn in LOCOMO_SAMPLE["conversation"][key]
}


HOSTILE_QUERY = 'paint* "NEAR" -x:y AND ('


# ------------------------------------------------------------------------------------ helpers


@pytest.fixture(autouse=True)
def isolated_settings(monkeypatch, tmp_path):
    """No user config file, no RAMEM_* variables from the developer's shell, a private models
    folder: every setting a test relies on is passed explicitly."""
    for name in list(os.environ):
        if name.startswith("RAMEM_") and name not in {"RAMEM_TEST_EMBEDDER",
                                                       "RAMEM_REQUIRE_REAL_MODELS",
                                                       "RAMEM_DEFAULT_EMBEDDER"}:
            monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("RAMEM_CONFIG", str(tmp_path / "no-such-config.json"))
    monkeypatch.setenv("RAMEM_MODELS_DIR", str(tmp_path / "models"))


@pytest.fixture
def locomo_file(tmp_path) -> Path:
    path = tmp_path / "chat.json"
    path.write_text(json.dumps([LOCOMO_SAMPLE], indent=2), encoding="utf-8")
    return path


@pytest.fixture
def jsonl_file(tmp_path) -> Path:
    path = tmp_path / "chat.jsonl"
    path.write_text("\n".join(json.dumps(t) for t in JSONL_TURNS) + "\n", encoding="utf-8")
    return path


@pytest.fixture
def bank(tmp_path) -> Path:
    return tmp_path / "bank.db"


def ramem(*args: object) -> Result:
    """``ramem ARGS`` in-process, with stdout and stderr kept apart (Click >= 8.2)."""
    return CliRunner().invoke(cli, [str(a) for a in args], prog_name="ramem")


def ok(result: Result) -> Result:
    assert result.exit_code == 0, (
        f"exit {result.exit_code}\nstdout: {result.stdout}\nstderr: {result.stderr}\n"
        f"exception: {result.exception!r}"
    )
    return result


def as_json(result: Result) -> dict:
    return json.loads(ok(result).stdout)


def assert_no_traceback(result: Result) -> None:
    assert isinstance(result.exception, SystemExit), (
        f"uncaught {type(result.exception).__name__}: {result.exception}"
    )
    assert "Traceback" not in result.output
    assert "Traceback" not in result.stderr


def error_line(result: Result) -> str:
    """A failure handled by ramem: exit != 0, one stderr line ``error: ...`` (informational
    ``note: ...`` lines about the bank may precede it)."""
    assert result.exit_code != 0, f"expected a failure, got stdout: {result.stdout}"
    assert_no_traceback(result)
    lines = [line for line in result.stderr.splitlines()
             if line.strip() and not line.startswith("note: ")]
    assert len(lines) == 1, f"expected one error line, got: {result.stderr!r}"
    assert lines[0].startswith("error:"), lines[0]
    assert len(lines[0]) < 400, "an error line should be readable, not a dump"
    return lines[0]


def usage_error_line(result: Result) -> str:
    """A failure caught by click's parameter checks: exit 2, one ``Error: ...`` line."""
    assert result.exit_code == 2, f"exit {result.exit_code}: {result.stderr}"
    assert_no_traceback(result)
    lines = [line for line in result.stderr.splitlines() if line.startswith(("Error", "error"))]
    assert len(lines) == 1, result.stderr
    return lines[0]


def stats_of(bank: Path) -> dict:
    return as_json(ramem("--db", bank, "stats", "--json"))


def ingest_json(bank: Path, file: Path, *extra: object) -> dict:
    return as_json(ramem("--db", bank, *extra, "ingest", file, "--json"))


def bm25_only_mentions(text: str) -> int:
    return text.count("BM25 only")


# --------------------------------------------------------------------------------------- help


def test_help_lists_every_command():
    result = ok(ramem("--help"))
    listed = {line.split()[0] for line in result.stdout.splitlines()
              if line.startswith("  ") and line.split()}
    for command in COMMANDS:
        assert command in listed, f"{command} missing from ramem --help:\n{result.stdout}"


def test_search_help_explains_its_options():
    text = ok(ramem("search", "--help")).stdout
    for option in ("--k", "--as-of", "--mode", "--json"):
        assert option in text
    assert "ramem" in text and "baseline" in text  # the --mode choices are named
    assert "Reference time" in text or "reference time" in text  # --as-of says what it is for


def test_top_level_cli_shim_runs_from_repo_root():
    env = {k: v for k, v in os.environ.items() if not k.startswith("RAMEM_")}
    python = REPO / ".venv" / "bin" / "python"
    completed = subprocess.run(
        [str(python if python.exists() else sys.executable), "cli.py", "--help"],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=120,
    )
    assert completed.returncode == 0, completed.stderr
    assert "Traceback" not in completed.stderr
    for command in COMMANDS:
        assert command in completed.stdout


def test_a_reader_that_leaves_early_ends_ramem_quietly(tmp_path):
    """`ramem list | head -1`: the rest of the output has nowhere to go, which is no error of
    ramem's; it printed "error: [Errno 32] Broken pipe" and exited with status 1."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("RAMEM_")}
    python = REPO / ".venv" / "bin" / "python"
    python = python if python.exists() else Path(sys.executable)
    journal = tmp_path / "journal.md"
    journal.write_text("## 2024-03-01\n\n" + "".join(
        f"- 09:{i % 60:02d} Entry number {i} of a long day at the allotment\n"
        for i in range(3000)), encoding="utf-8")
    bank = tmp_path / "bank.db"
    assert ramem("--db", bank, "import", "markdown", journal).exit_code == 0
    piped = subprocess.run(
        f"'{python}' cli.py --db '{bank}' list --limit 3000 | head -n 1; "
        "echo \"status ${PIPESTATUS[0]}\"",
        shell=True, executable="/bin/bash", cwd=REPO, env=env, capture_output=True,
        text=True, timeout=120)
    assert piped.stderr == ""
    assert piped.stdout.splitlines()[-1] == "status 141"


# ------------------------------------------------------------------ ingest, search, list, add


@pytest.mark.real_model
def test_ingest_then_search_json_has_results_with_episode_and_trace(bank, locomo_file,
                                                                    minilm_dir):
    report = ingest_json(bank, locomo_file, "--embedder", minilm_dir)
    assert report["turns_new"] == len(LOCOMO_TEXT_TO_ID)

    data = as_json(ramem("--db", bank, "--embedder", minilm_dir, "search",
                         "What did Caroline paint?", "--json", "--k", "5"))
    assert {"results", "trace"} <= set(data)
    results = data["results"]
    assert 0 < len(results) <= 5
    for result in results:
        for key in ("id", "content", "score", "session_start", "session_end", "persons",
                    "source_turns"):
            assert key in result, key
        assert isinstance(result["id"], int)
        assert isinstance(result["score"], float)
        start = datetime.fromisoformat(result["session_start"])
        end = datetime.fromisoformat(result["session_end"])
        assert start < end
        # the speaker, then whom the text names ("Hey Mel!": a nickname is a name too)
        assert result["persons"][0] in {"Caroline", "Melanie"}
        assert set(result["persons"]) <= {"Caroline", "Melanie", "Mel"}
        texts = [text for text in LOCOMO_TEXT_TO_ID if text in result["content"]]
        assert len(texts) == 1, result["content"]
        assert result["source_turns"] == [LOCOMO_TEXT_TO_ID[texts[0]]]
    top = results[0]
    assert top["source_turns"] in (["D1:1"], ["D1:3"]), "the painting turns should rank first"
    assert datetime.fromisoformat(top["session_start"]).date().isoformat() == "2023-05-08"

    trace = data["trace"]
    for key in ("frame", "guard", "guard_reason"):
        assert key in trace
    assert trace["guard"] in {"filter", "no_filter"}
    assert isinstance(trace["guard_reason"], str) and trace["guard_reason"]
    per_result = trace["candidates"]
    assert [c["memory_id"] for c in per_result] == [r["id"] for r in results]
    for candidate in per_result:
        for key in ("list", "dense_rank", "bm25_rank", "tier"):
            assert key in candidate, key
        assert candidate["list"] in {"content", "context"}


@pytest.mark.real_model
def test_second_ingest_adds_nothing_and_keeps_the_image_caption(bank, locomo_file, minilm_dir):
    first = ingest_json(bank, locomo_file, "--embedder", minilm_dir)
    assert first["turns_new"] == 7 and first["memories_new"] == 7 and first["vectors_new"] == 7
    before = stats_of(bank)

    second = ingest_json(bank, locomo_file)  # the bank reloads its embedder by itself
    assert second["turns_new"] == 0
    assert second["memories_new"] == 0
    assert second["vectors_new"] == 0
    text = ok(ramem("--db", bank, "ingest", locomo_file)).stdout
    assert "0 new turn" in text

    after = stats_of(bank)
    for key in ("conversations", "sessions", "turns", "memories", "vectors"):
        assert after[key] == before[key], key
    assert (after["turns"], after["memories"], after["vectors"]) == (7, 7, 7)

    memories = as_json(ramem("--db", bank, "list", "--json", "--limit", "100"))["memories"]
    with_image = [m for m in memories if m["source_turns"] == ["D1:3"]]
    assert len(with_image) == 1
    assert CAPTION in with_image[0]["content"]
    assert "Sure, here it is." in with_image[0]["content"]


def test_add_at_date_then_list_shows_it_in_that_session(bank):
    result = ok(ramem("--db", bank, "add", "Ran a 10k in the park with Ana", "--at",
                      "2023-05-08"))
    assert "added memory" in result.stdout
    memories = as_json(ramem("--db", bank, "list", "--json"))["memories"]
    assert len(memories) == 1
    memory = memories[0]
    assert "Ran a 10k in the park with Ana" in memory["content"]
    assert memory["session_start"].startswith("2023-05-08")
    assert datetime.fromisoformat(memory["session_start"]).date().isoformat() == "2023-05-08"


def test_a_memory_of_several_lines_stays_inside_its_entry_of_every_listing(bank, tmp_path):
    journal = tmp_path / "journal.md"
    journal.write_text("## 2026-02-14\nWent hiking at Eagle Ridge with Tom.\n"
                       "Saw Past Lives at home.\n", encoding="utf-8")
    ok(ramem("--db", bank, "import", "markdown", journal))
    listings = {
        "search": ramem("--db", bank, "search", "Eagle Ridge"),
        "list": ramem("--db", bank, "list"),
        "timeline": ramem("--db", bank, "timeline"),
        "forget": ramem("--db", bank, "forget", "--person", "Tom", "--dry-run"),
    }
    for command, result in listings.items():
        lines = ok(result).stdout.splitlines()
        first = next(i for i, line in enumerate(lines) if "Went hiking at Eagle Ridge" in line)
        second = lines[first + 1]
        assert second.strip() == "Saw Past Lives at home.", command
        assert len(second) - len(second.lstrip()) == lines[first].index("me: "), command


def test_time_only_search_says_by_time_where_no_list_scored_a_memory(bank):
    for day in ("2026-11-15", "2026-11-16"):
        ok(ramem("--db", bank, "add", f"Went to the market on {day} and bought pears",
                 "--at", f"{day}T10:00"))
    time_only = ok(ramem("--db", bank, "search", "What did I do yesterday?",
                         "--as-of", "2026-11-17")).stdout
    first = next(line for line in time_only.splitlines() if line.startswith(" 1. "))
    assert "2026-11-16 and bought pears" in first
    assert time_only.count("· by time") == 2
    assert "score" not in time_only
    matched = ok(ramem("--db", bank, "search", "pears yesterday", "--as-of",
                       "2026-11-17")).stdout
    assert matched.count("· score 0.0") == 2
    assert "by time" not in matched


def test_ask_with_nothing_found_says_so_without_an_llm(bank):
    ok(ramem("--db", bank, "add", "Went to the climbing gym with Ana"))
    result = ok(ramem("--db", bank, "ask", "What did I cook?"))
    assert result.stdout.strip().splitlines()[-1] == "no memories match"


def test_ask_with_nothing_found_says_so_with_an_llm_and_asks_it_nothing(bank):
    """Asked for (--analyze auto), the analysis call (a reply the model botched here: the
    rules' reading stands) is the only one; by default not even that. With no evidence there
    is no answer call, and stdout says "not in memory"."""
    from ramem_local import models
    from ramem_local.testing import ScriptedLLM

    ok(ramem("--db", bank, "add", "Went to the climbing gym with Ana"))
    llm = ScriptedLLM(["not json"])
    with models.registered_llm("scripted", lambda: llm):
        result = ok(ramem("--db", bank, "--llm", "scripted", "ask", "What did I cook?",
                          "--analyze", "auto"))
    assert result.stdout.strip().splitlines()[-1] == "not in memory"
    assert "no memories were retrieved" in result.stderr
    assert len(llm.calls) == 1
    silent = ScriptedLLM([])
    with models.registered_llm("scripted", lambda: silent):
        result = ok(ramem("--db", bank, "--llm", "scripted", "ask", "What did I cook?"))
    assert result.stdout.strip().splitlines()[-1] == "not in memory"
    assert silent.calls == []


def test_ask_prints_the_reading_then_the_answer_as_written_then_what_it_cites(bank):
    from ramem_local import models
    from ramem_local.testing import ScriptedLLM

    ok(ramem("--db", bank, "add", "Went to the climbing gym with Ana", "--at", "2026-11-14"))
    ok(ramem("--db", bank, "add", "Cooked shakshuka for Ana", "--at", "2026-11-15"))

    def answer(messages, schema, max_tokens):
        cited = schema["properties"]["citations"]["items"]["enum"]
        return {"reasoning": "the entry says so", "answer": "Shakshuka, for Ana",
                "citations": cited[:1]}

    with models.registered_llm("scripted", lambda: ScriptedLLM([answer, answer])):
        question = "What did I cook for Ana on 15 November 2026?"
        text = ok(ramem("--db", bank, "--llm", "scripted", "ask", question,
                        "--analyze", "never")).stdout.splitlines()
        json_answer = as_json(ramem("--db", bank, "--llm", "scripted", "ask", question,
                                    "--analyze", "never", "--json"))
    answer_line = text.index("Shakshuka, for Ana")
    assert answer_line >= 1 and text[0].startswith("time:")  # the reading comes first
    assert json_answer["answer"] == "Shakshuka, for Ana"  # --json as before
    assert text[answer_line + 1].startswith("  [")  # then what it cites


def test_ask_says_when_the_words_it_showed_were_withheld(bank):
    from ramem_local import models
    from ramem_local.testing import ScriptedLLM

    ok(ramem("--db", bank, "add", "Cooked shakshuka for Ana", "--at", "2026-11-15"))
    uncited = {"reasoning": "", "answer": "Pancakes", "citations": []}
    with models.registered_llm("scripted", lambda: ScriptedLLM([uncited])):
        result = ok(ramem("--db", bank, "--llm", "scripted", "ask", "What did I cook?",
                          "--analyze", "never"))
    lines = result.stdout.splitlines()
    assert lines[-2:] == ["Pancakes", "→ not in memory (the answer above was withheld)"]
    assert "(the model's answer 'Pancakes' cited no memory shown.)" in result.stderr


def test_add_with_unreadable_date_fails_cleanly_and_stores_nothing(bank):
    result = ramem("--db", bank, "add", "Something happened", "--at", "not a date")
    line = error_line(result)
    assert "not a date" in line
    assert not bank.exists(), "an unreadable date must not leave a bank behind"


# ------------------------------------------------------------------------------------- errors


def test_ingest_missing_file_is_one_error_line(bank, tmp_path):
    result = ramem("--db", bank, "ingest", tmp_path / "no-such-file.json")
    line = error_line(result)
    assert "no such file" in line and "no-such-file.json" in line
    assert not bank.exists()


def test_ingest_malformed_json_names_the_line(bank, tmp_path):
    path = tmp_path / "bad.json"
    path.write_text(
        '[\n  {"sample_id": "x",\n   "conversation": {"speaker_a": "A" "speaker_b": "B"}}\n]\n',
        encoding="utf-8",
    )
    line = error_line(ramem("--db", bank, "ingest", path))
    assert "bad.json" in line
    assert ":3:" in line or "line 3" in line, line


def test_ingest_malformed_jsonl_names_the_bad_line(bank, tmp_path):
    lines = [json.dumps(t) for t in JSONL_TURNS[:3]]
    lines.append('{"speaker": "Ann", "text": "oops", "timestamp": ')  # line 4
    lines.extend(json.dumps(t) for t in JSONL_TURNS[3:])
    path = tmp_path / "bad.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    line = error_line(ramem("--db", bank, "ingest", path))
    assert "bad.jsonl" in line
    assert ":4:" in line or "line 4" in line, line
    assert not bank.exists() or stats_of(bank)["turns"] == 0, "a bad file stores nothing"


def test_ingest_unknown_format_is_a_usage_error(bank, jsonl_file):
    result = ramem("--db", bank, "ingest", jsonl_file, "--format", "csv")
    line = usage_error_line(result)
    assert "--format" in line and "csv" in line


def test_stats_on_a_text_file_is_refused(tmp_path):
    path = tmp_path / "notes.txt"
    content = "These are my notes, not a database.\n" * 200
    path.write_text(content, encoding="utf-8")
    line = error_line(ramem("--db", path, "stats"))
    assert "not a SQLite database" in line or "not a ramem bank" in line
    assert path.read_text(encoding="utf-8") == content


def _foreign_database(path: Path) -> None:
    connection = apsw.Connection(str(path))
    connection.execute("CREATE TABLE recipes (name TEXT, minutes INTEGER)")
    connection.execute("INSERT INTO recipes VALUES ('pancakes', 20), ('soup', 45)")
    connection.close()


def test_stats_on_a_foreign_sqlite_database_is_refused(tmp_path):
    path = tmp_path / "recipes.db"
    _foreign_database(path)
    line = error_line(ramem("--db", path, "stats"))
    assert "not a ramem bank" in line
    connection = apsw.Connection(str(path))
    tables = {r[0] for r in connection.execute("SELECT name FROM sqlite_master")}
    assert tables == {"recipes"}, "ramem must not add its schema to someone else's database"
    connection.close()


def test_foreign_sqlite_database_is_left_byte_for_byte_untouched(tmp_path):
    path = tmp_path / "recipes.db"
    _foreign_database(path)
    before = path.read_bytes()
    error_line(ramem("--db", path, "stats"))
    assert path.read_bytes() == before, (
        "refusing a foreign database must not modify it (e.g. switch it to WAL mode)"
    )
    assert not Path(f"{path}-wal").exists() and not Path(f"{path}-shm").exists()


def test_nonexistent_embedder_folder_is_one_error_line(bank, jsonl_file, tmp_path):
    missing = tmp_path / "nonexistent" / "folder"
    line = error_line(ramem("--db", bank, "--embedder", missing, "ingest", jsonl_file))
    assert "embedder folder" in line and "does not exist" in line
    assert not bank.exists(), "a mistyped model must not leave a bank behind"


def test_search_on_a_missing_bank_fails_and_does_not_create_it(tmp_path):
    bank = tmp_path / "never-created.db"
    line = error_line(ramem("--db", bank, "search", "anything at all"))
    assert "never-created.db" in line
    assert not bank.exists()
    assert not Path(f"{bank}-wal").exists()


def test_show_unknown_id_is_one_error_line(bank):
    ok(ramem("--db", bank, "add", "A quiet day at home", "--at", "2024-01-02"))
    line = error_line(ramem("--db", bank, "show", 999999))
    assert "999999" in line


def test_search_with_empty_question_is_one_error_line(bank):
    ok(ramem("--db", bank, "add", "A quiet day at home", "--at", "2024-01-02"))
    line = error_line(ramem("--db", bank, "search", ""))
    assert "empty" in line
    error_line(ramem("--db", bank, "search", "   "))


# ----------------------------------------------------------------------- search behaviour


def test_search_survives_hostile_fts_syntax(bank, jsonl_file):
    ingest_json(bank, jsonl_file)
    result = ok(ramem("--db", bank, "search", HOSTILE_QUERY))
    assert "Traceback" not in result.output
    data = as_json(ramem("--db", bank, "search", HOSTILE_QUERY, "--json"))
    assert isinstance(data["results"], list)
    assert any("paint" in r["content"] for r in data["results"])


def test_search_without_embedder_says_bm25_only_once(bank, jsonl_file):
    ingest_json(bank, jsonl_file)
    result = ok(ramem("--db", bank, "search", "Who adopted a cat?"))
    assert bm25_only_mentions(result.stdout + result.stderr) == 1, result.output
    assert "Pixel" in result.stdout


def test_search_json_without_embedder_traces_bm25_only_once(bank, jsonl_file):
    ingest_json(bank, jsonl_file)
    result = ok(ramem("--db", bank, "search", "Who adopted a cat?", "--json"))
    notes = json.loads(result.stdout)["trace"]["notes"]
    assert sum(bm25_only_mentions(note) for note in notes) == 1, notes
    assert bm25_only_mentions(result.stderr) <= 1


@pytest.mark.real_model
def test_bank_reloads_its_recorded_embedder_for_search(bank, locomo_file, minilm_dir):
    ingest_json(bank, locomo_file, "--embedder", minilm_dir)
    result = ok(ramem("--db", bank, "search", "camping trip with the kids", "--json"))
    assert bm25_only_mentions(result.stderr) == 0, result.stderr
    data = json.loads(result.stdout)
    assert not any("BM25 only" in note for note in data["trace"]["notes"]), data["trace"]
    assert data["results"]
    assert all(r["dense_rank"] is not None for r in data["results"])
    assert all(c["dense_rank"] is not None for c in data["trace"]["candidates"])
    stats = stats_of(bank)
    assert stats["vectors"] == stats["memories"] == 7
    assert stats["embedder"] and stats["embedder"]["dimension"] == 384


@pytest.mark.real_model
def test_reindex_embeds_a_bm25_only_bank_and_later_opens_use_it(bank, jsonl_file, minilm_dir):
    ingest_json(bank, jsonl_file)
    before = stats_of(bank)
    assert before["vectors"] == 0 and before["embedder"] is None
    result = ok(ramem("--db", bank, "--embedder", minilm_dir, "reindex"))
    assert f"re-embedded {before['memories']} memories" in result.stdout
    after = stats_of(bank)  # no --embedder: the recorded one is reloaded
    assert after["vectors"] == after["memories"] == before["memories"]
    assert after["embedder"]["dimension"] == 384


@pytest.mark.real_model
def test_reindex_without_the_flag_re_embeds_with_the_banks_own_embedder(bank, jsonl_file,
                                                                         minilm_dir):
    ingest_json(bank, jsonl_file, "--embedder", minilm_dir)
    memories = stats_of(bank)["memories"]
    result = ok(ramem("--db", bank, "reindex"))
    assert f"re-embedded {memories} memories" in result.stdout
    assert stats_of(bank)["vectors"] == memories


def test_reindex_without_an_embedder_is_one_error_line(bank, jsonl_file):
    ingest_json(bank, jsonl_file)
    assert "--embedder" in error_line(ramem("--db", bank, "reindex"))
    assert stats_of(bank)["memories"] > 0


def test_init_records_the_country_and_stats_shows_it(bank):
    result = ok(ramem("--db", bank, "init", "--country", "GB"))
    assert "country GB" in result.stdout
    assert as_json(ramem("--db", bank, "stats", "--json"))["country"] == "GB"
    assert "country GB" in ok(ramem("--db", bank, "stats")).stdout


def test_init_with_an_unknown_country_is_one_error_line(bank):
    result = ramem("--db", bank, "init", "--country", "Britain")
    assert "two-letter" in error_line(result)


# ------------------------------------------------------------------------------------ config


def test_config_set_get_list_unset_round_trip(tmp_path, monkeypatch):
    path = tmp_path / "conf" / "config.json"
    monkeypatch.setenv("RAMEM_CONFIG", str(path))
    assert ok(ramem("config", "get", "k")).stdout.strip() == "10"
    assert "k = 3" in ok(ramem("config", "set", "k", "3")).stdout
    ok(ramem("config", "set", "mode", "baseline"))
    ok(ramem("config", "set", "buffer_days", "2.5"))
    assert json.loads(path.read_text()) == {"k": 3, "mode": "baseline", "buffer_days": 2.5}
    assert ok(ramem("config", "get", "k")).stdout.strip() == "3"
    rows = {r["key"]: r for r in as_json(ramem("config", "list", "--json"))["settings"]}
    assert rows["k"]["value"] == 3 and rows["k"]["source"] == "file"
    assert rows["bank"]["source"] == "default"
    monkeypatch.setenv("RAMEM_K", "7")
    assert ok(ramem("config", "get", "k")).stdout.strip() == "7"
    assert "environment" in ok(ramem("config", "list")).stdout
    monkeypatch.delenv("RAMEM_K")
    assert "removed" in ok(ramem("config", "unset", "k")).stdout
    assert ok(ramem("config", "get", "k")).stdout.strip() == "10"
    assert not list(path.parent.glob(".config-*")), "no temporary file left behind"


@pytest.mark.parametrize("args, message", [
    (("set", "colour", "blue"), "unknown config key 'colour' (known: db, bank,"),
    (("get", "colour"), "unknown config key 'colour'"),
    (("set", "k", "ten"), "k must be a whole number"),
    (("set", "k", "0"), "k must be between 1 and 100"),
    (("set", "mode", "fast"), "mode must be one of ramem, baseline"),
    (("set", "buffer_days", "400"), "buffer_days must be a number of days"),
    (("set", "dense_index", "hnsw"), "dense_index must be one of exact, binary, int8"),
])
def test_config_refuses_unknown_keys_and_bad_values(tmp_path, monkeypatch, args, message):
    path = tmp_path / "config.json"
    monkeypatch.setenv("RAMEM_CONFIG", str(path))
    assert message in error_line(ramem("config", *args))
    assert not path.exists(), "nothing written"


def test_config_set_repairs_a_bad_value_in_the_file(tmp_path, monkeypatch):
    path = tmp_path / "config.json"
    path.write_text('{"k": "ten", "bank": "work"}')
    monkeypatch.setenv("RAMEM_CONFIG", str(path))
    assert "k must be a whole number" in error_line(ramem("--db", tmp_path / "b.db", "stats"))
    ok(ramem("config", "set", "k", "4"))
    assert json.loads(path.read_text()) == {"k": 4, "bank": "work"}


def test_config_k_mode_and_buffer_days_drive_search(bank, jsonl_file, tmp_path, monkeypatch):
    ingest_json(bank, jsonl_file)
    path = tmp_path / "config.json"
    monkeypatch.setenv("RAMEM_CONFIG", str(path))
    question = ("Who adopted a cat?", "--json")
    default = as_json(ramem("--db", bank, "search", *question))
    assert len(default["results"]) > 2
    assert default["trace"]["frame"]["buffer_days"] == 5.0
    ok(ramem("config", "set", "k", "2"))
    ok(ramem("config", "set", "buffer_days", "1"))
    data = as_json(ramem("--db", bank, "search", *question))
    assert len(data["results"]) == 2
    assert data["trace"]["frame"]["buffer_days"] == 1.0
    assert len(as_json(ramem("--db", bank, "search", *question, "--k", "3"))["results"]) == 3
    assert len(as_json(ramem("--db", bank, "ask", *question))["evidence"]) == 2
    ok(ramem("config", "set", "mode", "baseline"))
    assert as_json(ramem("--db", bank, "search", *question))["trace"]["mode"] == "baseline"


def test_config_k_sets_how_many_memories_search_prints_and_a_flag_wins(bank, tmp_path):
    garden = tmp_path / "garden.jsonl"
    garden.write_text("\n".join(json.dumps(t) for t in GARDEN_TURNS), encoding="utf-8")
    ingest_json(bank, garden)
    question = "What did I do in the garden?"

    def ranked(*args: str) -> list[str]:
        text = ok(ramem("--db", bank, "search", question, *args)).stdout
        return re.findall(r"^ *\d+\. \[\d+\] ", text, flags=re.MULTILINE)

    assert len(ranked()) == 10
    ok(ramem("config", "set", "k", "3"))
    assert len(ranked()) == 3
    assert len(ranked("--k", "5")) == 5


@pytest.mark.real_model
def test_config_and_flag_choose_the_dense_index(bank, jsonl_file, tmp_path, monkeypatch,
                                                minilm_dir):
    ingest_json(bank, jsonl_file, "--embedder", minilm_dir)
    monkeypatch.setenv("RAMEM_CONFIG", str(tmp_path / "config.json"))
    question = ("Who adopted a cat?", "--json")
    default = as_json(ramem("--db", bank, "search", *question))
    assert default["trace"]["dense_index"] == "int8"
    ok(ramem("config", "set", "dense_index", "binary"))
    chosen = as_json(ramem("--db", bank, "search", *question))
    assert chosen["trace"]["dense_index"] == "binary"
    flagged = as_json(ramem("--db", bank, "search", *question, "--dense-index", "exact"))
    assert flagged["trace"]["dense_index"] == "exact"
    assert as_json(ramem("--db", bank, "ask", *question))["trace"]["dense_index"] == "binary"
    monkeypatch.setenv("RAMEM_DENSE_INDEX", "int8")
    assert as_json(ramem("--db", bank, "search", *question))["trace"]["dense_index"] == "int8"
    ids = {name: [r["id"] for r in data["results"]]
           for name, data in (("int8", default), ("binary", chosen), ("exact", flagged))}
    assert ids["int8"] == ids["binary"] == ids["exact"], "a small bank: every index is exact"


def test_config_keys_are_the_settings():
    from dataclasses import fields

    from ramem_local.config import KEYS, Settings

    assert list(KEYS) == [f.name for f in fields(Settings)]


@pytest.mark.real_model
def test_a_bank_made_with_an_embedder_folder_reloads_it_without_the_flag(bank, jsonl_file,
                                                                         minilm_dir, tmp_path):
    import shutil

    folder = shutil.copytree(minilm_dir, tmp_path / "my-embedder")
    ingest_json(bank, jsonl_file, "--embedder", folder)
    result = ok(ramem("--db", bank, "add", "Fixed the bike", "--at", "2024-03-06"))
    assert result.stderr == ""
    stats = stats_of(bank)
    assert stats["vectors"] == stats["memories"] == len(JSONL_TURNS) + 1
    shutil.rmtree(folder)
    result = ok(ramem("--db", bank, "add", "Oiled the chain", "--at", "2024-03-07"))
    assert "note: this bank's embedder" in result.stderr
    assert "could not be loaded" in result.stderr and "BM25 only" in result.stderr


def test_add_says_when_the_banks_embedder_cannot_be_loaded(bank, tmp_path):
    from ramem_local import Memory
    from ramem_local.testing import HashingEmbedder

    with Memory.open(bank, embedder=HashingEmbedder()) as memory:
        memory.add("Planted tomatoes", at="2024-05-04")
    result = ok(ramem("--db", bank, "add", "Repotted the basil", "--at", "2024-05-05"))
    assert result.stderr.count("could not be loaded") == 1, result.stderr
    result = ok(ramem("--db", bank, "search", "basil"))
    assert result.stderr.count("could not be loaded") == 1, "said once, not twice"


# ------------------------------------------------------------------------------------ models


def test_models_import_path_list_and_verify_round_trip(tmp_path):
    gguf = tmp_path / "downloads" / "notes-7b.gguf"
    gguf.parent.mkdir()
    gguf.write_bytes(b"GGUF" + bytes(range(256)) * 8)
    folder = tmp_path / "models"  # RAMEM_MODELS_DIR (isolated_settings)
    installed = folder / "notes-llm" / gguf.name

    assert ok(ramem("models", "import", gguf, "--as", "notes-llm")).stdout == (
        f"imported notes-llm: {installed}\n")
    assert ok(ramem("models", "path")).stdout == f"{folder}\n"
    assert ok(ramem("models", "path", "notes-llm")).stdout == f"{installed}\n"
    listed = as_json(ramem("models", "list", "--json"))
    assert listed["models_dir"] == str(folder)
    assert {"name": "notes-llm", "kind": "llm", "installed": True, "path": str(installed),
            "license": None, "description": "imported"} in listed["models"]
    assert ok(ramem("models", "verify")).stdout == "ok  notes-llm: notes-llm/notes-7b.gguf: ok\n"

    installed.unlink()
    failed = ramem("models", "verify")
    assert failed.stdout == "BAD notes-llm: notes-llm/notes-7b.gguf: missing\n"
    assert error_line(failed) == "error: 1 model file(s) failed verification"


def test_the_models_dir_flag_beats_the_environment(tmp_path):
    assert ok(ramem("--models-dir", tmp_path / "flag", "models", "path")).stdout == (
        f"{tmp_path / 'flag'}\n")


@pytest.mark.parametrize("command", ["pull", "install", "path"])
def test_models_commands_on_an_unknown_name_are_one_error_line(command, tmp_path):
    line = error_line(ramem("models", command, "gpt-9"))
    assert line.startswith("error: unknown model 'gpt-9'; ")
    assert not (tmp_path / "models").exists()
