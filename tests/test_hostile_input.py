"""Hostile and odd input through the CLI: every case is a clear error or a correct result,
and a failed command leaves the bank exactly as it was (same rows) and still searchable.

The tables below are the "distinct bad inputs" counted in docs/reliability.md. An error is clean
when the command ends in SystemExit with status 1, stderr is one ``error:`` line naming what
is wrong (and the file and line where there is one), and no traceback appears anywhere.
"""

from __future__ import annotations

import gzip
import json
import shutil
import tempfile
from datetime import timezone
from pathlib import Path

import apsw
import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from samples import JSONL_TURNS

from ramem_local import FormatError, InputError, RamemError
from ramem_local.cli import cli
from ramem_local.ingest.formats import read_conversations, read_jsonl
from ramem_local.recall.when import parse_when

CONTENT_TABLES = ("conversations", "participants", "sessions", "turns", "memories",
                  "memory_turns", "extraction_windows")
UTC = timezone.utc


def line(**overrides: object) -> str:
    row = {"speaker": "Ann", "text": "I walked the dog by the river.",
           "timestamp": "2024-05-04T10:00:00"}
    row.update(overrides)
    return json.dumps(row, ensure_ascii=False)


def jsonl(*rows: str) -> bytes:
    return ("\n".join(rows) + "\n").encode()


def dump(db: Path) -> dict[str, list[tuple]]:
    """Every row of the content tables (and the FTS index size), for before/after checks."""
    connection = apsw.Connection(str(db), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        state = {table: sorted(map(tuple, connection.execute(f"SELECT * FROM {table}")),
                               key=repr) for table in CONTENT_TABLES}
        state["fts"] = list(connection.execute("SELECT count(*) FROM memories_fts"))
        return state
    finally:
        connection.close()


@pytest.fixture(scope="module")
def seed_bank(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("seed")
    source = folder / "seed.jsonl"
    source.write_text("\n".join(json.dumps(row) for row in JSONL_TURNS) + "\n")
    db = folder / "seed.db"
    result = CliRunner().invoke(cli, ["--db", str(db), "ingest", str(source)])
    assert result.exit_code == 0, result.output
    return db


@pytest.fixture
def bank(seed_bank: Path, tmp_path: Path) -> Path:
    db = tmp_path / "bank.db"
    shutil.copy(seed_bank, db)
    return db


def run(*args: str):
    return CliRunner().invoke(cli, list(args))


def assert_clean_error(result, *expected: str) -> str:
    assert isinstance(result.exception, SystemExit), result.exception
    assert result.exit_code == 1, (result.exit_code, result.output)
    assert "Traceback" not in result.output and "bug in ramem" not in result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    for text in expected:
        assert text in lines[0], (text, lines[0])
    return lines[0]


def assert_searchable(db: Path) -> None:
    found = run("--db", str(db), "search", "grey cat Pixel", "--json")
    assert found.exit_code == 0, found.output
    assert any("Pixel" in r["content"] for r in json.loads(found.stdout)["results"])


# (id, file name, content, what the one error line must contain)
BAD_FILES = [
    ("invalid-json-line-2", "bad.jsonl", jsonl(line(), '{"speaker": "Ann", "text": '),
     ["bad.jsonl:2", "invalid JSON"]),
    ("not-an-object", "bad.jsonl", jsonl("[1, 2, 3]"), ["bad.jsonl:1", "JSON object"]),
    ("speaker-not-string", "bad.jsonl", jsonl(line(), line(speaker=5)), ["bad.jsonl:2", "speaker"]),
    ("text-is-list", "bad.jsonl", jsonl(line(text=["a"])), ["bad.jsonl:1", "text"]),
    ("text-empty", "bad.jsonl", jsonl(line(text="   ")), ["bad.jsonl:1", "text"]),
    ("missing-timestamp", "bad.jsonl", jsonl(json.dumps({"speaker": "A", "text": "hi"})),
     ["bad.jsonl:1", "missing field 'timestamp'"]),
    ("session-is-object", "bad.jsonl", jsonl(line(session={"a": 1})), ["bad.jsonl:1", "session"]),
    ("timestamp-bool", "bad.jsonl", jsonl(line(timestamp=True)), ["bad.jsonl:1", "timestamp"]),
    ("timestamp-list", "bad.jsonl", jsonl(line(timestamp=[2024])), ["bad.jsonl:1", "timestamp"]),
    ("timestamp-nan", "bad.jsonl", jsonl(line().replace('"2024-05-04T10:00:00"', "NaN")),
     ["bad.jsonl:1", "finite"]),
    ("timestamp-infinity", "bad.jsonl",
     jsonl(line().replace('"2024-05-04T10:00:00"', "-Infinity")), ["bad.jsonl:1", "finite"]),
    ("impossible-date-line-3", "bad.jsonl",
     jsonl(line(), line(), line(timestamp="2023-02-30T10:00:00")), ["bad.jsonl:3", "timestamp"]),
    ("before-1900", "bad.jsonl", jsonl(line(timestamp="1850-06-01T00:00:00")),
     ["bad.jsonl:1", "out of range"]),
    ("after-2200", "bad.jsonl", jsonl(line(timestamp="2250-01-01T00:00:00")),
     ["bad.jsonl:1", "out of range"]),
    ("year-1-with-offset", "bad.jsonl", jsonl(line(timestamp="0001-01-01T00:00:00+05:00")),
     ["bad.jsonl:1", "out of range"]),
    ("year-9999", "bad.jsonl", jsonl(line(timestamp="9999-12-31T23:59:59-05:00")),
     ["bad.jsonl:1", "out of range"]),
    ("negative-unix", "bad.jsonl", jsonl(line(), line(timestamp=-24_000_000_000)),
     ["bad.jsonl:2", "out of range"]),
    ("huge-unix", "bad.jsonl", jsonl(line(timestamp=10**30)), ["bad.jsonl:1", "out of range"]),
    ("seconds-year-3000", "bad.jsonl", jsonl(line(timestamp=32_503_680_000)),
     ["bad.jsonl:1", "out of range"]),
    ("5000-digit-number", "bad.jsonl", jsonl(line(), line(timestamp=0).replace("0}", "9" * 5000
                                                                                + "}")),
     ["bad.jsonl:2", "too many digits"]),
    ("deep-nesting-jsonl", "bad.jsonl", jsonl(line(), "[" * 100_000 + "]" * 100_000),
     ["bad.jsonl:2", "nested too deeply"]),
    ("deep-nesting-locomo", "bad.json", ("[" * 100_000 + "]" * 100_000).encode(),
     ["bad.json", "nested too deeply"]),
    ("invalid-utf8", "bad.jsonl", jsonl(line()) + b'{"speaker": "\xff\xfe"}\n',
     ["bad.jsonl", "not UTF-8"]),
    ("gzip-named-jsonl", "bad.jsonl", gzip.compress(jsonl(line(), line())),
     ["bad.jsonl", "not UTF-8"]),
    ("raw-nul-byte", "bad.jsonl", jsonl(line(), line()[:20] + "\x00" + line()[20:]),
     ["bad.jsonl:2", "invalid JSON"]),
    ("empty-file", "bad.jsonl", b"", ["bad.jsonl", "empty"]),
    ("only-blank-lines", "bad.jsonl", b"\n  \n\t\n", ["bad.jsonl", "empty"]),
    ("duplicate-id", "bad.jsonl", jsonl(line(id="x"), line(id="x")), ["bad.jsonl:2", "duplicate"]),
    ("sessions-descending", "bad.jsonl",
     jsonl(line(session=1), line(session=2, timestamp="2020-01-01T00:00:00")),
     ["bad.jsonl:2", "ascending"]),
    ("mixed-session-labels", "bad.jsonl", jsonl(line(session=1), line()),
     ["bad.jsonl:2", "mixes"]),
    ("locomo-not-samples", "bad.json", b'{"a": 1}', ["bad.json", "conversation"]),
    ("locomo-year-999", "bad.json", json.dumps({"sample_id": "s", "conversation": {
        "session_1_date_time": "1:56 pm on 8 May, 0999",
        "session_1": [{"speaker": "A", "text": "hi"}]}}).encode(),
     ["bad.json", "session_1", "out of range"]),
    ("locomo-30-february", "bad.json", json.dumps({"sample_id": "s", "conversation": {
        "session_1_date_time": "1:56 pm on 30 February, 2023",
        "session_1": [{"speaker": "A", "text": "hi"}]}}).encode(),
     ["bad.json", "session_1"]),
    ("binary-unknown-name", "bad.dat", b"\x89PNG\r\n\x1a\n" + bytes(range(256)),
     ["bad.dat"]),
]


@pytest.mark.parametrize(("name", "content", "expected"),
                         [pytest.param(n, c, e, id=i) for i, n, c, e in BAD_FILES])
def test_a_bad_file_is_one_error_line_and_changes_nothing(bank, tmp_path, name, content,
                                                          expected):
    path = tmp_path / name
    path.write_bytes(content)
    before = dump(bank)
    result = run("--db", str(bank), "ingest", str(path))
    assert_clean_error(result, *expected)
    assert dump(bank) == before
    assert_searchable(bank)


# (id, file name, content, turns expected, a text to find, the stored Unix time of turn 1)
GOOD_FILES = [
    ("epoch-milliseconds", "ms.jsonl",
     jsonl(line(timestamp=1714816800000, text="The milliseconds walk by the river"),
           line(timestamp=1714816860000)), 2, "milliseconds", 1714816800),
    ("epoch-microseconds", "us.jsonl",
     jsonl(line(timestamp=1714816800123456, text="The microseconds walk by the river")),
     1, "microseconds", 1714816800),
    ("epoch-seconds-float", "s.jsonl", jsonl(line(timestamp=1714816800.9, text="float seconds")),
     1, "float seconds", 1714816800),
    ("edge-1900", "edge.jsonl", jsonl(line(timestamp="1900-01-01T00:00:00Z", text="edge 1900")),
     1, "edge 1900", -2208988800),
    ("edge-2199", "edge.jsonl",
     jsonl(line(timestamp="2199-12-31T23:59:59Z", text="edge twenty one ninety nine")), 1,
     "ninety", 7258118399),
    ("byte-order-mark", "bom.jsonl", b"\xef\xbb\xbf" + jsonl(line(text="bom at the start")), 1,
     "bom", None),
    ("crlf-line-ends", "crlf.jsonl", jsonl(line(text="windows line ends")).replace(b"\n", b"\r\n"),
     1, "windows", None),
    ("escaped-nul-in-text", "nul.jsonl", jsonl(line(text="before\u0000after nulbyte")), 1,
     "nulbyte", None),
    ("emoji-rtl-cjk", "intl.jsonl",
     jsonl(line(speaker="José 😀", text="今日は川で犬を散歩しました 🐕"),
           line(speaker="سارة", text="ذهبنا إلى السوق معاً"),
           line(speaker="Zoë", text="Ünïcödé façade naïve 👩‍👩‍👧 smörgåsbord")), 3,
     "smörgåsbord", None),
    ("fts-and-sql-text", "sql.jsonl",
     jsonl(line(speaker="Robert'); DROP TABLE memories;--",
                text='"unbalanced NEAR( OR * ^ col:val AND NOT " \'; DELETE FROM turns; --'),
           line(speaker="a\"b", text="SELECT * FROM memories WHERE 1=1 sqlmarker")), 2,
     "sqlmarker", None),
    ("u2028-inside-text", "sep.jsonl", jsonl(line(text="line\u2028separator\u2029para")), 1,
     "separator", None),
]


@pytest.mark.parametrize(("name", "content", "turns", "needle", "first_time"),
                         [pytest.param(*case[1:], id=case[0]) for case in GOOD_FILES])
def test_an_odd_but_valid_file_ingests_correctly(bank, tmp_path, name, content, turns, needle,
                                                 first_time):
    path = tmp_path / name
    path.write_bytes(content)
    before = dump(bank)
    result = run("--db", str(bank), "ingest", str(path))
    assert result.exit_code == 0, result.output
    after = dump(bank)
    assert len(after["turns"]) == len(before["turns"]) + turns
    found = run("--db", str(bank), "search", needle, "--json")
    assert found.exit_code == 0, found.output
    assert any(needle in r["content"] for r in json.loads(found.stdout)["results"])
    if first_time is not None:
        connection = apsw.Connection(str(bank))
        stamps = {row[0] for row in connection.execute("SELECT timestamp FROM turns")}
        connection.close()
        assert first_time in stamps
    assert_searchable(bank)
    assert run("--db", str(bank), "timeline", "--json").exit_code == 0


def test_a_single_10_mb_turn_is_stored_whole(bank, tmp_path):
    text = ("word " * 2_000_000) + "needleword"
    path = tmp_path / "big.jsonl"
    path.write_text(line(text=text) + "\n")
    result = run("--db", str(bank), "ingest", str(path))
    assert result.exit_code == 0, result.output
    connection = apsw.Connection(str(bank))
    lengths = [row[0] for row in connection.execute("SELECT length(text) FROM turns")]
    connection.close()
    assert len(text) in lengths
    assert_searchable(bank)


QUESTIONS = ['"unbalanced', "NEAR(", "a OR", "*", "^", "col:val", "AND", "NOT NOT",
             "'; DROP TABLE memories; --", "Robert'); DROP TABLE turns;--", "%_%", "\\", "()",
             "😀🐕", "今日は", "ذهبنا", "x" * 5000, "\u0000", "' OR 1=1 --"]


@pytest.mark.parametrize("question", QUESTIONS)
def test_a_hostile_question_is_searched_as_text(bank, question):
    before = dump(bank)
    result = run("--db", str(bank), "search", question, "--json")
    if result.exit_code != 0:  # an empty question after cleaning: one clean line
        assert_clean_error(result)
    else:
        json.loads(result.stdout)
    assert dump(bank) == before
    assert_searchable(bank)


@pytest.mark.parametrize(("at", "expected"), [
    ("0001-01-01", "out of range"), ("2250-01-01", "out of range"), ("9" * 5000, "date"),
    ("-99999999999999999999", "date"), ("2023-02-30", "date"), ("nonsense words", "date"),
    ("yesterday 99:99", "no such time of day"), ("yesterday at 25:00", "no such time of day"),
    ("2024-05-04 25:00", "date"),
])
def test_a_bad_add_date_is_one_error_line(bank, at, expected):
    before = dump(bank)
    result = run("--db", str(bank), "add", "An entry", "--at", at)
    assert_clean_error(result, expected)
    assert dump(bank) == before


def test_add_reads_epoch_milliseconds(bank):
    result = run("--db", str(bank), "add", "Milliseconds entry", "--at", "1714816800000")
    assert result.exit_code == 0, result.output
    connection = apsw.Connection(str(bank))
    stamps = {row[0] for row in connection.execute("SELECT timestamp FROM turns")}
    connection.close()
    assert 1714816800 in stamps


def test_a_sqlite_file_that_is_not_a_bank_is_refused_untouched(tmp_path):
    other = tmp_path / "other.db"
    connection = apsw.Connection(str(other))
    connection.execute("CREATE TABLE notes(x TEXT); INSERT INTO notes VALUES ('mine')")
    connection.close()
    before = other.read_bytes()
    source = tmp_path / "ok.jsonl"
    source.write_bytes(jsonl(line()))
    for args in (["ingest", str(source)], ["search", "dog"], ["stats"], ["add", "hello"]):
        assert_clean_error(run("--db", str(other), *args), "not a ramem bank")
    assert other.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ok.jsonl", "other.db"]


def test_a_file_that_is_not_sqlite_is_refused_untouched(tmp_path):
    other = tmp_path / "notes.txt"
    other.write_bytes(b"just some text, not a database at all\n" * 200)
    before = other.read_bytes()
    assert_clean_error(run("--db", str(other), "stats"), "not a")
    assert other.read_bytes() == before


def test_a_bank_of_a_newer_schema_is_refused(bank):
    connection = apsw.Connection(str(bank))
    connection.execute("INSERT INTO schema_migrations VALUES ('m999_from_the_future', 0)")
    connection.close()
    before = dump(bank)
    assert_clean_error(run("--db", str(bank), "search", "cat"), "newer ramem")
    assert dump(bank) == before


def test_a_bug_is_reported_as_a_bug_with_status_70(bank, monkeypatch):
    from ramem_local import api

    def broken(*_args, **_kwargs):
        raise ValueError("an invariant broke")

    monkeypatch.setattr(api.Memory, "stats", broken)
    result = run("--db", str(bank), "stats")
    assert result.exit_code == 70
    assert result.stderr.strip() == ("error: this is a bug in ramem: ValueError: an invariant "
                                     "broke (run with --debug for the traceback)")
    debug = run("--debug", "--db", str(bank), "stats")
    assert debug.exit_code == 70
    assert "Traceback" in debug.stderr and "an invariant broke" in debug.stderr


def test_the_error_family_is_one_tree():
    assert issubclass(FormatError, InputError) and issubclass(InputError, ValueError)
    import ramem_local
    from ramem_local import BankError, ConfigError, LLMError, ModelError, StoreError
    from ramem_local.errors import EmbedderError, RecordError
    for error in (FormatError, ConfigError, RecordError, StoreError, BankError, ModelError,
                  LLMError, EmbedderError):
        assert issubclass(error, RamemError)
    # What SQLite refuses: full, I/O, read-only, locked, corrupt; and a key that does not fit.
    refusals = BankError.__subclasses__()
    assert len(refusals) == 6
    for refusal in refusals:
        assert refusal.advice and getattr(ramem_local, refusal.__name__) is refusal


# ------------------------------------------------------------------------- property tests
JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
    lambda children: st.lists(children, max_size=4)
    | st.dictionaries(st.text(max_size=10), children, max_size=4),
    max_leaves=12,
)
TURN_LIKE = st.fixed_dictionaries(
    {},
    optional={
        "speaker": JSON_VALUES | st.text(min_size=1, max_size=10),
        "text": JSON_VALUES | st.text(min_size=1, max_size=30),
        "timestamp": JSON_VALUES | st.integers(-10**16, 10**17)
        | st.datetimes().map(lambda d: d.isoformat()),
        "session": JSON_VALUES, "id": JSON_VALUES, "conversation": JSON_VALUES,
        "caption": JSON_VALUES,
    },
)
LINES = st.one_of(
    TURN_LIKE.map(lambda obj: json.dumps(obj, ensure_ascii=False)),
    JSON_VALUES.map(json.dumps),
    st.text(max_size=40),
)


def _read(content: bytes, name: str = "f.jsonl"):
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / name
        path.write_bytes(content)
        return read_conversations(path, "auto", UTC)


def _check_turns(conversations) -> None:
    from ramem_local.timebounds import MAX_TIME, MIN_TIME
    for conversation in conversations:
        for turn in conversation.turns:
            assert MIN_TIME <= turn.timestamp < MAX_TIME


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(LINES, max_size=8))
def test_the_jsonl_reader_raises_only_input_errors(lines):
    try:
        conversations = _read("\n".join(lines).encode())
    except FormatError:
        return
    _check_turns(conversations)


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=200))
def test_any_bytes_are_read_or_refused_as_input(content):
    for name in ("f.jsonl", "f.json", "f.txt"):
        try:
            _check_turns(_read(content, name))
        except FormatError:
            pass


@settings(max_examples=300, deadline=None)
@given(st.one_of(st.integers(), st.floats(), st.text(max_size=30),
                 st.datetimes(timezones=st.just(UTC))))
def test_parse_when_raises_only_input_errors(value):
    from ramem_local.timebounds import MAX_TIME, MIN_TIME
    try:
        seconds = parse_when(value, UTC)
    except InputError:
        return
    assert MIN_TIME <= seconds < MAX_TIME


def test_a_month_or_a_year_alone_is_its_first_moment():
    """dateparser fills a missing day with today's: read on the 3rd, "March 2026" was
    3 March."""
    assert parse_when("March 2026", UTC) == parse_when("2026-03-01", UTC)
    assert parse_when("2024", UTC) == parse_when("2024-01-01", UTC)


@pytest.mark.parametrize(("text", "expected"), [
    ("March 2026", ("2026-03-01", "2026-04-01")),
    ("in March 2026", ("2026-03-01", "2026-04-01")),
    ("2024", ("2024-01-01", "2025-01-01")),
    ("3 May 2025", ("2025-05-03", "2025-05-04")),
    ("the week of 2 March 2026", ("2026-03-02", "2026-03-09")),
    ("last week", ("2026-11-23", "2026-11-30")),
    ("2026-03-05", None),  # an ISO day or moment is parse_when's
    ("2026-03-05 14:30", None),
    ("yesterday at 5 pm", None),  # a moment, not the whole day
    ("March 2026 and May 2026", None),
    ("Match 2026", None),
])
def test_period_of_reads_a_period_as_a_question_does(text, expected):
    from datetime import datetime

    from ramem_local.recall.when import period_of

    now = datetime(2026, 12, 3, 12, 0, tzinfo=UTC)
    period = period_of(text, UTC, now=now)
    days = None if period is None else tuple(
        datetime.fromtimestamp(seconds, UTC).date().isoformat() for seconds in period)
    assert days == expected


def test_read_jsonl_reports_the_line_of_a_deep_nesting(tmp_path):
    path = tmp_path / "deep.jsonl"
    path.write_bytes(jsonl(line(), line(), '{"a":' * 50_000 + "1" + "}" * 50_000))
    with pytest.raises(FormatError) as caught:
        read_jsonl(path, UTC, "deep")
    assert caught.value.line == 3


def test_the_api_refuses_an_out_of_range_time_before_writing(tmp_path):
    from ramem_local import Memory
    from ramem_local.types import ParsedConversation, Session, Turn

    with Memory.open(tmp_path / "api.db") as memory:
        good = Turn(speaker="A", text="fine", timestamp=1714816800, session_ordinal=1)
        bad = Turn(speaker="A", text="year 56310", timestamp=1714816800000, session_ordinal=1)
        parsed = ParsedConversation(name="c", sessions=[Session(ordinal=1, start=1714816800)],
                                    turns=[good, bad], participants=["A"])
        from ramem_local.ingest.pipeline import ingest_conversations
        with pytest.raises(InputError, match="turn 2"):
            ingest_conversations(memory.store, [parsed], embedder=None, tz=UTC)
        assert memory.stats()["turns"] == 0 and memory.stats()["conversations"] == 0


@pytest.mark.parametrize(("content", "expected"), [
    (b"[" * 100_000, "nested too deeply"), (b'{"k": ' + b"9" * 5000 + b"}", "not valid JSON"),
    (b"\xff\xfe{}", "not valid JSON"), (b'{"k": "abc"}', "k"), (b'{"buffer_days": 1e999}', ""),
])
def test_a_bad_config_file_is_one_error_line(tmp_path, monkeypatch, content, expected):
    config = tmp_path / "config.json"
    config.write_bytes(content)
    monkeypatch.setenv("RAMEM_CONFIG", str(config))
    result = run("--db", str(tmp_path / "b.db"), "stats")
    assert_clean_error(result, expected)


def test_doctor_finds_a_bank_bricked_by_an_old_version_and_forget_repairs_it(bank, tmp_path):
    """A bank written before times were checked: a session in year 56310 (Unix ms read as
    seconds). doctor names the conversation; forgetting it makes the bank whole again."""
    connection = apsw.Connection(str(bank))
    connection.execute("INSERT INTO conversations(name, kind, created_at) VALUES ('old', "
                       "'chat', 0)")
    conversation_id = connection.last_insert_rowid()
    connection.execute('INSERT INTO sessions(conversation_id, ordinal, start, "end") '
                       "VALUES (?, 1, 1714816800000, 1714816886400)", (conversation_id,))
    connection.close()
    models = tmp_path / "models"
    models.mkdir()
    report = run("--db", str(bank), "--models-dir", str(models), "doctor")
    assert "BAD  stored times" in report.output and "'old' (1 row(s))" in report.output
    forgot = run("--db", str(bank), "forget", "--conversation", "old")
    assert forgot.exit_code == 0, forgot.output
    again = run("--db", str(bank), "--models-dir", str(models), "doctor")
    assert "ok   stored times" in again.output
    assert_searchable(bank)
