"""Input formats: LoCoMo JSON and JSONL of turns → ParsedConversation."""

from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from ramem_local.ingest.formats import (
    SESSION_GAP_SECONDS,
    FormatError,
    detect_format,
    parse_locomo_datetime,
    read_conversations,
    read_jsonl,
    read_locomo,
)

UTC = timezone.utc


def ts(*args: int, tz=UTC) -> int:
    return int(datetime(*args, tzinfo=tz).timestamp())


# ---------------------------------------------------------------------------------------------
# LoCoMo dates
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("1:56 pm on 8 May, 2023", datetime(2023, 5, 8, 13, 56, tzinfo=UTC)),
        ("10:37 am on 27 June, 2023", datetime(2023, 6, 27, 10, 37, tzinfo=UTC)),
        ("8:56 pm on 20 July, 2023", datetime(2023, 7, 20, 20, 56, tzinfo=UTC)),
        ("12:09 am on 13 September, 2023", datetime(2023, 9, 13, 0, 9, tzinfo=UTC)),  # midnight
        ("12:30 pm on 1 January, 2024", datetime(2024, 1, 1, 12, 30, tzinfo=UTC)),  # noon
        ("11:59 pm on 31 December, 2022", datetime(2022, 12, 31, 23, 59, tzinfo=UTC)),
        ("9:05 AM on 3 Sept, 2023", datetime(2023, 9, 3, 9, 5, tzinfo=UTC)),  # case, short month
        ("9:05 p.m. on 3 Mar 2023", datetime(2023, 3, 3, 21, 5, tzinfo=UTC)),  # dots, no comma
        ("  4:33 pm on 12 July, 2023 ", datetime(2023, 7, 12, 16, 33, tzinfo=UTC)),  # padding
    ],
)
def test_parse_locomo_datetime_reads_the_locomo_form(text: str, expected: datetime) -> None:
    assert parse_locomo_datetime(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "",
        "yesterday",
        "2023-05-08 13:56",
        "13:56 pm on 8 May, 2023",  # hour beyond 12
        "0:56 pm on 8 May, 2023",
        "1:56 pm on 8 Mayo, 2023",  # unknown month
        "1:56 pm on 31 June, 2023",  # no such day
        "1:5 pm on 8 May, 2023",  # one-digit minutes
        "1:56 pm 8 May, 2023",  # missing "on"
    ],
)
def test_parse_locomo_datetime_rejects_junk(text: str) -> None:
    with pytest.raises(FormatError, match="bad LoCoMo date"):
        parse_locomo_datetime(text)


def test_parse_locomo_datetime_reads_in_the_given_zone() -> None:
    paris = ZoneInfo("Europe/Paris")
    parsed = parse_locomo_datetime("1:56 pm on 8 May, 2023", paris)
    assert parsed == datetime(2023, 5, 8, 11, 56, tzinfo=UTC)  # CEST is UTC+2


# ---------------------------------------------------------------------------------------------
# LoCoMo files
# ---------------------------------------------------------------------------------------------


def _locomo_sample(sample_id: str | None = "s-1", n_sessions: int = 10) -> dict:
    conversation: dict = {"speaker_a": "Ann", "speaker_b": "Bob"}
    for n in range(1, n_sessions + 1):
        conversation[f"session_{n}_date_time"] = f"9:00 am on {n} March, 2023"
        conversation[f"session_{n}"] = [
            {"speaker": "Ann", "dia_id": f"D{n}:1", "text": f"hello {n} "},
            {"speaker": "Bob", "dia_id": f"D{n}:2", "text": f"hi {n}"},
        ]
    # An image turn, as LoCoMo shares photos.
    conversation[f"session_{min(2, n_sessions)}"].append(
        {
            "speaker": "Bob",
            "dia_id": f"D{min(2, n_sessions)}:3",
            "text": "Look at this!",
            "img_url": ["https://example.invalid/x.jpg"],
            "blip_caption": "a photo of a dog on a beach",
            "query": "dog beach",
        }
    )
    sample: dict = {"conversation": conversation, "qa": []}
    if sample_id is not None:
        sample["sample_id"] = sample_id
    return sample


def _write_json(tmp_path: Path, data, name: str = "sample.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(data, indent=2), encoding="utf-8")
    return path


def test_locomo_sessions_are_ordered_numerically(tmp_path: Path) -> None:
    sample = _locomo_sample()
    # Put keys in lexicographic order, so session_10 comes before session_2 in the file.
    sample["conversation"] = dict(sorted(sample["conversation"].items()))
    [conv] = read_locomo(_write_json(tmp_path, [sample]))
    assert [s.ordinal for s in conv.sessions] == list(range(1, 11))
    assert conv.turns[-1].external_id == "D10:2"
    assert [t.session_ordinal for t in conv.turns][:5] == [1, 1, 2, 2, 2]


def test_locomo_turns_keep_text_ids_captions_and_order(tmp_path: Path) -> None:
    [conv] = read_locomo(_write_json(tmp_path, [_locomo_sample()]))
    assert conv.name == "s-1"
    assert conv.participants == ["Ann", "Bob"]
    assert conv.turns[0].text == "hello 1 "  # verbatim: trailing space kept
    image = next(t for t in conv.turns if t.external_id == "D2:3")
    assert image.caption == "a photo of a dog on a beach"
    assert image.text == "Look at this!"
    start_2 = ts(2023, 3, 2, 9, 0)
    assert conv.sessions[1].start == start_2
    assert [t.timestamp for t in conv.turns if t.session_ordinal == 2] == [
        start_2,
        start_2 + 1,
        start_2 + 2,
    ]
    assert all(s.end is None for s in conv.sessions)  # the store fills ends


def test_locomo_single_sample_object_and_name_fallback(tmp_path: Path) -> None:
    path = _write_json(tmp_path, _locomo_sample(sample_id=None), name="chat.json")
    [conv] = read_locomo(path)
    assert conv.name == "chat-0"


def test_locomo_reads_dates_in_the_given_zone(tmp_path: Path) -> None:
    tokyo = ZoneInfo("Asia/Tokyo")
    [conv] = read_locomo(_write_json(tmp_path, [_locomo_sample()]), tz=tokyo)
    assert conv.sessions[0].start == ts(2023, 3, 1, 9, 0, tz=tokyo)


def test_locomo_skips_sessions_without_turns(tmp_path: Path) -> None:
    sample = _locomo_sample(n_sessions=3)
    sample["conversation"]["session_2"] = []
    sample["conversation"]["session_4_date_time"] = "9:00 am on 4 March, 2023"  # no session_4
    [conv] = read_locomo(_write_json(tmp_path, [sample]))
    assert [s.ordinal for s in conv.sessions] == [1, 3]


def test_locomo_session_with_turns_but_no_date_names_sample_and_session(tmp_path: Path) -> None:
    sample = _locomo_sample(n_sessions=3)
    del sample["conversation"]["session_3_date_time"]
    with pytest.raises(FormatError, match=r"sample\.json: s-1 session_3: .*no session_3_date_time"):
        read_locomo(_write_json(tmp_path, [sample]))


def test_locomo_bad_date_names_sample_and_session(tmp_path: Path) -> None:
    sample = _locomo_sample(n_sessions=3)
    sample["conversation"]["session_2_date_time"] = "sometime in spring"
    with pytest.raises(FormatError, match=r"s-1 session_2: bad LoCoMo date 'sometime in spring'"):
        read_locomo(_write_json(tmp_path, [sample]))


def test_locomo_sessions_must_start_in_order(tmp_path: Path) -> None:
    sample = _locomo_sample(n_sessions=3)
    sample["conversation"]["session_3_date_time"] = "9:00 am on 1 January, 2023"
    with pytest.raises(FormatError, match="s-1 session_3: starts before session_2"):
        read_locomo(_write_json(tmp_path, [sample]))


@pytest.mark.parametrize(
    ("turn", "problem"),
    [
        ({"dia_id": "D1:1", "text": "x"}, "'speaker'"),
        ({"speaker": "Ann", "dia_id": "D1:1"}, "'text'"),
        ({"speaker": "Ann", "dia_id": 7, "text": "x"}, "'dia_id'"),
        ("just a string", "expected an object"),
    ],
)
def test_locomo_bad_turn_is_reported(tmp_path: Path, turn, problem: str) -> None:
    sample = _locomo_sample(n_sessions=1)
    sample["conversation"]["session_1"].append(turn)
    with pytest.raises(FormatError, match=rf"s-1 session_1 turn 4\b.*: .*{problem}"):
        read_locomo(_write_json(tmp_path, [sample]))


def test_locomo_duplicate_dia_id_is_an_error(tmp_path: Path) -> None:
    sample = _locomo_sample(n_sessions=1)
    sample["conversation"]["session_1"].append({"speaker": "Ann", "dia_id": "D1:1", "text": "x"})
    with pytest.raises(FormatError, match="duplicate turn id 'D1:1'"):
        read_locomo(_write_json(tmp_path, [sample]))


def test_locomo_malformed_json_reports_line_and_column(tmp_path: Path) -> None:
    path = tmp_path / "broken.json"
    path.write_text('[\n  {"sample_id": "x",\n   "conversation": {,}}\n]\n', encoding="utf-8")
    with pytest.raises(FormatError) as info:
        read_locomo(path)
    assert str(info.value).startswith("broken.json:3:21: invalid JSON")
    assert (info.value.line, info.value.column) == (3, 21)


@pytest.mark.parametrize("content", ["", "  \n", "[]"])
def test_locomo_empty_file_has_no_turns(tmp_path: Path, content: str) -> None:
    path = tmp_path / "empty.json"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(FormatError, match="no turns"):
        read_locomo(path)


def test_locomo_sample_without_conversation_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(FormatError, match="sample 0: expected an object with a 'conversation'"):
        read_locomo(_write_json(tmp_path, [{"sample_id": "x"}]))


def test_real_locomo_dev_file(locomo_dev: Path) -> None:
    conversations = read_conversations(locomo_dev)
    assert [c.name for c in conversations] == [
        "conv-26",
        "conv-30",
        "conv-41",
        "conv-42",
        "conv-43",
    ]
    assert sum(len(c.turns) for c in conversations) == 2760
    for conv in conversations:
        ids = [t.external_id for t in conv.turns]
        assert None not in ids and len(set(ids)) == len(ids)
        starts = [s.start for s in conv.sessions]
        assert starts == sorted(starts)
        assert [t.timestamp for t in conv.turns] == sorted(t.timestamp for t in conv.turns)
        assert len(conv.participants) == 2
    conv_26 = conversations[0]
    assert conv_26.sessions[0].start == ts(2023, 5, 8, 13, 56)  # "1:56 pm on 8 May, 2023"
    assert any(t.caption for t in conv_26.turns)


# ---------------------------------------------------------------------------------------------
# JSONL
# ---------------------------------------------------------------------------------------------


def _write_jsonl(tmp_path: Path, rows: list, name: str = "turns.jsonl") -> Path:
    lines = [row if isinstance(row, str) else json.dumps(row) for row in rows]
    path = tmp_path / name
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_jsonl_happy_path(tmp_path: Path) -> None:
    path = _write_jsonl(
        tmp_path,
        [
            {"speaker": "Ann", "text": "Morning!", "timestamp": "2024-03-01T09:00:00Z", "id": "m1"},
            "",
            {"speaker": "Bob", "text": " hi ", "timestamp": 1709283660},  # 09:01 UTC, Unix seconds
            {"speaker": "Ann", "text": "later", "timestamp": "2024-03-01T10:00:00+01:00"},
        ],
    )
    [conv] = read_jsonl(path, UTC, default_name="chat")
    assert conv.name == "chat"
    assert conv.participants == ["Ann", "Bob"]
    assert [t.text for t in conv.turns] == ["Morning!", " hi ", "later"]
    assert [t.timestamp for t in conv.turns] == [
        ts(2024, 3, 1, 9, 0),
        ts(2024, 3, 1, 9, 1),
        ts(2024, 3, 1, 9, 0),  # file order is kept, not re-sorted
    ]
    assert [t.external_id for t in conv.turns] == ["m1", None, None]
    assert [s.ordinal for s in conv.sessions] == [1]
    assert conv.sessions[0].start == ts(2024, 3, 1, 9, 0)


def test_jsonl_naive_times_are_read_in_the_given_zone(tmp_path: Path) -> None:
    ny = ZoneInfo("America/New_York")
    path = _write_jsonl(tmp_path, [{"speaker": "A", "text": "x", "timestamp": "2024-07-01 08:00"}])
    [conv] = read_jsonl(path, ny, default_name="j")
    assert conv.turns[0].timestamp == ts(2024, 7, 1, 12, 0)  # EDT is UTC-4


def test_jsonl_unix_float_is_floored(tmp_path: Path) -> None:
    path = _write_jsonl(tmp_path, [{"speaker": "A", "text": "x", "timestamp": 1700000000.9}])
    [conv] = read_jsonl(path, UTC, default_name="j")
    assert conv.turns[0].timestamp == 1700000000


def test_jsonl_groups_by_session_label_in_order_of_first_appearance(tmp_path: Path) -> None:
    t0 = ts(2024, 1, 1, 9, 0)
    path = _write_jsonl(
        tmp_path,
        [
            {"speaker": "A", "text": "1", "timestamp": t0, "session": "breakfast"},
            {"speaker": "B", "text": "2", "timestamp": t0 + 60, "session": "breakfast"},
            # Ten hours later but the same label: still one session (labels win over gaps).
            {"speaker": "A", "text": "3", "timestamp": t0 + 36000, "session": "breakfast"},
            {"speaker": "A", "text": "4", "timestamp": t0 + 36060, "session": 7},
        ],
    )
    [conv] = read_jsonl(path, UTC, default_name="j")
    assert [(s.ordinal, s.start) for s in conv.sessions] == [(1, t0), (2, t0 + 36060)]
    assert [t.session_ordinal for t in conv.turns] == [1, 1, 1, 2]


def test_jsonl_gap_rule_starts_a_new_session_after_six_hours(tmp_path: Path) -> None:
    t0 = ts(2024, 1, 1, 9, 0)
    times = [t0, t0 + SESSION_GAP_SECONDS, t0 + 2 * SESSION_GAP_SECONDS + 1, t0 + 86400 * 3]
    path = _write_jsonl(tmp_path, [{"speaker": "A", "text": "x", "timestamp": t} for t in times])
    [conv] = read_jsonl(path, UTC, default_name="j")
    # exactly 6 h apart: same session; 6 h + 1 s: new session
    assert [t.session_ordinal for t in conv.turns] == [1, 1, 2, 3]
    assert [s.start for s in conv.sessions] == [times[0], times[2], times[3]]


def test_jsonl_splits_conversations_by_name(tmp_path: Path) -> None:
    t0 = ts(2024, 1, 1)
    path = _write_jsonl(
        tmp_path,
        [
            {"speaker": "A", "text": "x", "timestamp": t0, "conversation": "work"},
            {"speaker": "A", "text": "y", "timestamp": t0 + 1},
            {"speaker": "B", "text": "z", "timestamp": t0 + 2, "conversation": "work"},
        ],
        name="mixed.jsonl",
    )
    conversations = read_conversations(path)
    assert [(c.name, len(c.turns)) for c in conversations] == [("work", 2), ("mixed", 1)]


def test_jsonl_session_starting_before_the_previous_one_is_an_error(tmp_path: Path) -> None:
    t0 = ts(2024, 1, 2)
    path = _write_jsonl(
        tmp_path,
        [
            {"speaker": "A", "text": "x", "timestamp": t0, "session": 1},
            {"speaker": "A", "text": "y", "timestamp": t0 - 86400, "session": 2},
        ],
    )
    with pytest.raises(FormatError, match=r"turns\.jsonl:2: .*session 2 starts at .* before"):
        read_jsonl(path, UTC, default_name="j")


def test_jsonl_backwards_jump_without_labels_is_an_error(tmp_path: Path) -> None:
    t0 = ts(2024, 1, 2)
    rows = [{"speaker": "A", "text": "x", "timestamp": t} for t in (t0, t0 - 86400)]
    with pytest.raises(FormatError, match=r"turns\.jsonl:2: .*before session 1"):
        read_jsonl(_write_jsonl(tmp_path, rows), UTC, default_name="j")


def test_jsonl_mixing_labelled_and_unlabelled_turns_is_an_error(tmp_path: Path) -> None:
    rows = [
        {"speaker": "A", "text": "x", "timestamp": 1, "session": "s"},
        {"speaker": "A", "text": "y", "timestamp": 2},
    ]
    with pytest.raises(FormatError, match=r"turns\.jsonl:2: .*mixes turns with and without"):
        read_jsonl(_write_jsonl(tmp_path, rows), UTC, default_name="j")


GOOD = {"speaker": "A", "text": "x", "timestamp": "2024-01-01T00:00:00"}


@pytest.mark.parametrize(
    ("bad_line", "message"),
    [
        ('{"speaker": "A", "text": "x"', r"turns\.jsonl:2: invalid JSON at column \d+"),
        ({"text": "x", "timestamp": 1}, r"turns\.jsonl:2: missing field 'speaker'"),
        ({"speaker": "A", "timestamp": 1}, r"turns\.jsonl:2: missing field 'text'"),
        ({"speaker": "A", "text": "x"}, r"turns\.jsonl:2: missing field 'timestamp'"),
        ({"speaker": 3, "text": "x", "timestamp": 1}, r":2: 'speaker' must be a non-empty string"),
        ({"speaker": "A", "text": "", "timestamp": 1}, r":2: 'text' must be a non-empty string"),
        ({"speaker": "A", "text": "x", "timestamp": "yesterday"}, r":2: bad timestamp 'yesterday'"),
        ({"speaker": "A", "text": "x", "timestamp": "2024-13-01"}, r":2: bad timestamp"),
        ({"speaker": "A", "text": "x", "timestamp": True}, r":2: bad timestamp"),
        ({"speaker": "A", "text": "x", "timestamp": None}, r":2: bad timestamp"),
        ({"speaker": "A", "text": "x", "timestamp": 1, "session": [1]}, r":2: 'session' must be"),
        ({"speaker": "A", "text": "x", "timestamp": 1, "id": 1.5}, r":2: 'id' must be"),
        ('["A", "x", 1]', r"turns\.jsonl:2: expected a JSON object, got list"),
    ],
)
def test_jsonl_bad_line_is_reported_with_its_line_number(
    tmp_path: Path, bad_line, message: str
) -> None:
    path = _write_jsonl(tmp_path, [GOOD, bad_line, GOOD])
    with pytest.raises(FormatError, match=message) as info:
        read_jsonl(path, UTC, default_name="j")
    assert info.value.line == 2
    assert "\n" not in str(info.value)


def test_jsonl_duplicate_id_names_both_lines(tmp_path: Path) -> None:
    rows = [dict(GOOD, id="m1"), dict(GOOD, id="m2"), dict(GOOD, id="m1")]
    with pytest.raises(
        FormatError, match=r"turns\.jsonl:3: .*duplicate id 'm1' \(first on line 1\)"
    ):
        read_jsonl(_write_jsonl(tmp_path, rows), UTC, default_name="j")


@pytest.mark.parametrize("content", ["", "\n  \n\n"])
def test_jsonl_empty_file_has_no_turns(tmp_path: Path, content: str) -> None:
    path = tmp_path / "empty.jsonl"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(FormatError, match=r"empty\.jsonl: empty file: no turns"):
        read_jsonl(path, UTC, default_name="j")


# ---------------------------------------------------------------------------------------------
# Detection and dispatch
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "content", "expected"),
    [
        ("a.jsonl", "", "jsonl"),  # extension wins
        ("a.ndjson", "", "jsonl"),
        ("a.json", "", "locomo"),
        ("a.JSON", "", "locomo"),
        ("a.txt", '  [{"sample_id": "x"}]', "locomo"),
        ("a", '{"speaker": "A", "text": "x", "timestamp": 1}\n{"speaker": "B"}', "jsonl"),
        ("a", '{"sample_id": "x", "conversation": {}}', "locomo"),  # one-line single sample
        ("a.dat", '{\n  "sample_id": "x",\n  "conversation": {}\n}', "locomo"),  # pretty-printed
    ],
)
def test_detect_format(tmp_path: Path, name: str, content: str, expected: str) -> None:
    path = tmp_path / name
    path.write_text(content, encoding="utf-8")
    assert detect_format(path) == expected


@pytest.mark.parametrize(
    ("content", "message"),
    [("", "empty file"), ("speaker,text\nA,x\n", "unknown format")],
)
def test_detect_format_rejects_what_it_cannot_recognise(
    tmp_path: Path, content: str, message: str
) -> None:
    path = tmp_path / "notes.csv"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(FormatError, match=rf"notes\.csv: {message}"):
        detect_format(path)


def test_read_conversations_unknown_format(tmp_path: Path) -> None:
    path = _write_jsonl(tmp_path, [GOOD])
    with pytest.raises(FormatError, match="unknown format 'csv'"):
        read_conversations(path, fmt="csv")


def test_read_conversations_dispatches_explicit_formats(tmp_path: Path) -> None:
    jsonl = _write_jsonl(tmp_path, [GOOD], name="turns.txt")
    assert read_conversations(jsonl, fmt="jsonl")[0].name == "turns"
    locomo = _write_json(tmp_path, [_locomo_sample(n_sessions=1)], name="x.txt")
    assert read_conversations(locomo, fmt="locomo")[0].name == "s-1"


def test_non_utf8_file_is_a_format_error(tmp_path: Path) -> None:
    path = tmp_path / "latin.jsonl"
    path.write_bytes(b'{"speaker": "Jos\xe9", "text": "x", "timestamp": 1}\n')
    with pytest.raises(FormatError, match="not UTF-8"):
        read_conversations(path)


def test_jsonl_caption_is_kept_and_must_be_text(tmp_path: Path) -> None:
    row = {"speaker": "A", "text": "look", "timestamp": "2024-01-01T10:00:00",
           "caption": "a photo of a cat"}
    [conversation] = read_jsonl(_write_jsonl(tmp_path, [row]), UTC, "chat")
    assert conversation.turns[0].caption == "a photo of a cat"
    with pytest.raises(FormatError, match="caption"):
        read_jsonl(_write_jsonl(tmp_path, [{**row, "caption": 7}], name="bad.jsonl"), UTC, "c")


# ---------------------------------------------------------------------------------------------
# Two passes: checked line by line, read again turn by turn
# ---------------------------------------------------------------------------------------------


def _rows_file(tmp_path: Path, raw: bytes, name: str = "turns.jsonl") -> Path:
    path = tmp_path / name
    path.write_bytes(raw)
    return path


def _row(**fields) -> bytes:
    return json.dumps({**GOOD, **fields}).encode()


def test_a_bad_line_is_reported_before_a_conversation_problem_above_it(tmp_path: Path) -> None:
    """As when the whole file was read first: line errors, then conversation problems."""
    rows = [_row(id="m1"), _row(id="m1"), _row(), b'{"speaker": "A"', _row()]
    with pytest.raises(FormatError, match=r"turns\.jsonl:4: invalid JSON"):
        read_jsonl(_rows_file(tmp_path, b"\n".join(rows)), UTC, "j")


def test_a_byte_that_is_not_utf8_is_reported_before_an_earlier_bad_line(tmp_path: Path) -> None:
    latin1 = _row(speaker="Jos_").replace(b"Jos_", b"Jos\xe9")
    raw = b"\n".join([_row(), b"not json", _row(), latin1])
    with pytest.raises(FormatError, match=r"turns\.jsonl: not UTF-8 text \(byte \d+\)") as info:
        read_jsonl(_rows_file(tmp_path, raw), UTC, "j")
    assert str(raw.index(b"\xe9")) in str(info.value)  # counted from the start of the file


def test_the_first_conversation_s_problem_is_reported_first(tmp_path: Path) -> None:
    t0 = ts(2024, 1, 2)
    rows = [
        _row(conversation="a", timestamp=t0, session=1),
        _row(conversation="b", timestamp=t0, session=1),
        _row(conversation="b", timestamp=t0),  # b mixes labelled and unlabelled turns
        _row(conversation="a", timestamp=t0 - 86400, session=2),  # a: a session out of order
    ]
    with pytest.raises(FormatError, match=r"turns\.jsonl:4: conversation 'a': session 2"):
        read_jsonl(_rows_file(tmp_path, b"\n".join(rows)), UTC, "j")


def test_line_numbers_count_cr_lf_and_lone_cr_line_endings(tmp_path: Path) -> None:
    raw = _row() + b"\r\n" + _row() + b"\r" + b'{"speaker": 1}' + b"\n"
    with pytest.raises(FormatError, match=r"turns\.jsonl:3: missing field") as info:
        read_jsonl(_rows_file(tmp_path, raw), UTC, "j")
    assert info.value.line == 3


def test_ids_whose_hashes_collide_but_differ_are_not_duplicates(tmp_path: Path, monkeypatch):
    """Repeated ids are found by 64-bit hash (8 bytes a turn), then confirmed by reading the
    file again: a collision of different ids passes, a real repeat names both lines."""
    from ramem_local.ingest import formats

    monkeypatch.setattr(formats, "hash", lambda _text: 7, raising=False)
    [conversation] = read_jsonl(
        _rows_file(tmp_path, b"\n".join(_row(id=f"m{i}") for i in range(5))), UTC, "j")
    assert [turn.external_id for turn in conversation.turns] == [f"m{i}" for i in range(5)]
    rows = [_row(id="m1"), _row(id="m2"), _row(id="m3"), _row(id="m2")]
    with pytest.raises(FormatError, match=r":4: .*duplicate id 'm2' \(first on line 2\)"):
        read_jsonl(_rows_file(tmp_path, b"\n".join(rows), name="dup.jsonl"), UTC, "j")


def test_interleaved_conversations_stream_in_file_order_with_their_sessions(tmp_path: Path):
    from ramem_local.ingest.formats import open_turns

    t0 = ts(2024, 1, 1)
    rows = [_row(conversation="a", timestamp=t0, session="x"),
            _row(conversation="b", timestamp=t0),
            _row(conversation="a", timestamp=t0 + 60, session="y"),
            _row(conversation="b", timestamp=t0 + 86400)]
    source = open_turns(_rows_file(tmp_path, b"\n".join(rows)))
    assert [(o.name, o.turn_count, [s.ordinal for s in o.sessions]) for o in source.outlines] \
        == [("a", 2, [1, 2]), ("b", 2, [1, 2])]
    assert [(index, turn.session_ordinal) for index, turn in source.turns()] \
        == [(0, 1), (1, 1), (0, 2), (1, 2)]


def test_a_file_changed_between_the_check_and_the_reading_is_refused(tmp_path: Path) -> None:
    from ramem_local.ingest.formats import open_turns

    path = _rows_file(tmp_path, b"\n".join([_row(), _row(text="y")]))
    source = open_turns(path)
    path.write_bytes(b"\n".join([_row(), _row(text="y"), _row(text="z")]))
    with pytest.raises(FormatError, match="changed after it was checked"):
        list(source.turns())
