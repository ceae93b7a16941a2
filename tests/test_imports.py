"""``ramem import``: ChatGPT and Claude exports, Markdown journals, and ``export --format md``.

Fixtures are written here in the shapes the real exports have: a ChatGPT ``mapping`` tree with
an edited message (two branches), tool calls, hidden system messages, images and a message
without ``create_time``; Claude's ``chat_messages`` with both text shapes; Markdown journals
with headings, paragraphs, list items and ``HH:MM`` prefixes.
"""

from __future__ import annotations

import json
import os
from datetime import datetime
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
from click.testing import CliRunner, Result

from ramem_local import Memory
from ramem_local.cli import cli
from ramem_local.ingest.formats import FormatError
from ramem_local.ingest.streamjson import iter_json_array

LISBON = ZoneInfo("Europe/Lisbon")
T0 = 1714557600  # 2024-05-01 10:00 UTC


@pytest.fixture(autouse=True)
def isolated_settings(monkeypatch, tmp_path):
    for name in list(os.environ):
        if name.startswith("RAMEM_") and name != "RAMEM_DEFAULT_EMBEDDER":
            monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("RAMEM_CONFIG", str(tmp_path / "no-such-config.json"))
    monkeypatch.setenv("RAMEM_MODELS_DIR", str(tmp_path / "models"))


def ramem(*args: object) -> Result:
    return CliRunner().invoke(cli, [str(a) for a in args], prog_name="ramem")


def ok(result: Result) -> Result:
    assert result.exit_code == 0, (
        f"exit {result.exit_code}\nstdout: {result.stdout}\nstderr: {result.stderr}\n"
        f"exception: {result.exception!r}")
    return result


def error_line(result: Result) -> str:
    assert result.exit_code != 0, f"expected a failure, got stdout: {result.stdout}"
    assert isinstance(result.exception, SystemExit), repr(result.exception)
    lines = [line for line in result.stderr.splitlines()
             if line.strip() and not line.startswith("note: ")]
    assert len(lines) == 1, f"expected one error line, got: {result.stderr!r}"
    assert lines[0].startswith("error:"), lines[0]
    return lines[0]


def turns_of(memory: Memory) -> list[tuple[str, str, str, int]]:
    """(conversation, speaker, text, timestamp) of every stored turn."""
    return [(name, t.speaker, t.text, t.timestamp) for name, t in memory.store.all_turns()]


# ------------------------------------------------------------------------------- ChatGPT shapes


def node(node_id, parent, children, message=None):
    return {"id": node_id, "parent": parent, "children": children, "message": message}


def message(message_id, role, text=None, *, at=None, content=None, recipient="all",
            hidden=False):
    content = content or {"content_type": "text", "parts": [text]}
    return {
        "id": message_id,
        "author": {"role": role, "name": None, "metadata": {}},
        "create_time": at,
        "update_time": None,
        "content": content,
        "status": "finished_successfully",
        "end_turn": True,
        "weight": 1.0,
        "metadata": {"is_visually_hidden_from_conversation": True} if hidden else {},
        "recipient": recipient,
    }


def chatgpt_conversation(chat_id="6717a3c1-aaaa-bbbb-cccc-000000000001", title="Lisbon trip",
                         created=T0):
    """A chat whose second question was edited: the first version (and its answer) is an
    abandoned branch; the visible thread goes through the edit to ``current_node``."""
    mapping = {
        "root": node("root", None, ["sys"]),
        "sys": node("sys", "root", ["u1"],
                    message("sys", "system", "You are ChatGPT.", at=created, hidden=True)),
        "u1": node("u1", "sys", ["a1"],
                   message("u1", "user", "Plan three days in Lisbon for me", at=created + 10)),
        "a1": node("a1", "u1", ["u2-old", "u2"],
                   message("a1", "assistant", "Day one: Alfama and the castle.",
                           at=created + 20)),
        # the abandoned branch: the question before it was edited, and its answer
        "u2-old": node("u2-old", "a1", ["a2-old"],
                       message("u2-old", "user", "What about Porto instead?", at=created + 30)),
        "a2-old": node("a2-old", "u2-old", [],
                       message("a2-old", "assistant", "Porto has the Ribeira.", at=created + 40)),
        # the visible branch
        "u2": node("u2", "a1", ["call"],
                   message("u2", "user", "Is Sintra worth a day trip?", at=created + 50)),
        "call": node("call", "u2", ["tool"], message(
            "call", "assistant", at=created + 55, recipient="browser",
            content={"content_type": "code", "language": "unknown",
                     "text": "search('Sintra palaces')"})),
        "tool": node("tool", "call", ["a2"], message(
            "tool", "tool", at=created + 56,
            content={"content_type": "tether_browsing_display", "result": "..."})),
        "a2": node("a2", "tool", ["u3"],
                   message("a2", "assistant", "Yes: Pena Palace and the Moorish castle.")),
        "u3": node("u3", "a2", ["think"], message("u3", "user", at=created + 70, content={
            "content_type": "multimodal_text",
            "parts": [{"content_type": "image_asset_pointer",
                       "asset_pointer": "file-service://file-1", "width": 800},
                      "What is this azulejo pattern called?"]})),
        "think": node("think", "u3", ["a3"], message(
            "think", "assistant", at=created + 75,
            content={"content_type": "thoughts", "thoughts": [{"content": "hmm"}]})),
        "a3": node("a3", "think", [],
                   message("a3", "assistant", "It looks like a *padrão* tile.",
                           at=created + 80)),
    }
    return {"title": title, "create_time": created, "update_time": created + 90,
            "mapping": mapping, "current_node": "a3", "conversation_id": chat_id,
            "id": chat_id, "moderation_results": [], "is_archived": False}


VISIBLE = [
    ("me", "Plan three days in Lisbon for me", T0 + 10),
    ("assistant", "Day one: Alfama and the castle.", T0 + 20),
    ("me", "Is Sintra worth a day trip?", T0 + 50),
    # no create_time: the conversation's, but not before the message it answers
    ("assistant", "Yes: Pena Palace and the Moorish castle.", T0 + 50),
    ("me", "What is this azulejo pattern called?", T0 + 70),
    ("assistant", "It looks like a *padrão* tile.", T0 + 80),
]


def write_json(path: Path, data) -> Path:
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


@pytest.fixture
def chatgpt_file(tmp_path) -> Path:
    later = chatgpt_conversation("77aa0000-0000-0000-0000-000000000002", "Sourdough",
                                 created=T0 + 86400)
    later["mapping"] = {
        "r": node("r", None, ["m1"]),
        "m1": node("m1", "r", ["m2"], message("m1", "user", "My sourdough starter smells of "
                                                            "acetone", at=T0 + 86400)),
        "m2": node("m2", "m1", [], message("m2", "assistant", "Feed it more often.",
                                           at=T0 + 86460)),
    }
    later["current_node"] = "m2"
    return write_json(tmp_path / "conversations.json", [chatgpt_conversation(), later])


def test_chatgpt_keeps_the_visible_thread_only(tmp_path, chatgpt_file):
    with Memory.open(tmp_path / "bank.db") as memory:
        report = memory.import_export("chatgpt", chatgpt_file)
        stored = turns_of(memory)
    lisbon = [(s, text, ts) for name, s, text, ts in stored if "Lisbon trip" in name]
    assert lisbon == VISIBLE
    texts = {text for _, _, text, _ in stored}
    assert "What about Porto instead?" not in texts  # the abandoned branch
    assert "Porto has the Ribeira." not in texts
    assert not any("Sintra palaces" in t or "You are ChatGPT" in t for t in texts)
    assert report.conversations == 2 and report.turns_new == 8 and not report.skipped
    assert report.noise == 4  # the system message, the tool call, its output, the thoughts


def test_chatgpt_conversation_names_and_sessions(tmp_path, chatgpt_file):
    with Memory.open(tmp_path / "bank.db") as memory:
        memory.import_export("chatgpt", chatgpt_file)
        names = sorted(c.name for c in memory.store.conversations())
        kinds = {c.kind for c in memory.store.conversations()}
        participants = memory.store.participants()
    assert names == ["chatgpt: Lisbon trip [6717a3c1]", "chatgpt: Sourdough [77aa0000]"]
    assert kinds == {"chat"}
    assert participants == ["assistant", "me"]


def test_chatgpt_reimport_adds_nothing_and_a_newer_export_only_what_is_new(tmp_path,
                                                                           chatgpt_file):
    with Memory.open(tmp_path / "bank.db") as memory:
        memory.import_export("chatgpt", chatgpt_file)
        again = memory.import_export("chatgpt", chatgpt_file)
        assert (again.turns_new, again.memories_new) == (0, 0)
        # the chat renamed and continued in a newer export
        data = json.loads(chatgpt_file.read_text())
        data[0]["title"] = "Portugal, renamed"
        data[0]["mapping"]["a3"]["children"] = ["u4"]
        data[0]["mapping"]["u4"] = node("u4", "a3", [], message(
            "u4", "user", "Thanks, booked the train", at=T0 + 3 * 86400))
        data[0]["current_node"] = "u4"
        newer = write_json(tmp_path / "newer.json", data)
        report = memory.import_export("chatgpt", newer)
        assert report.turns_new == 1
        names = sorted(c.name for c in memory.store.conversations())
        sessions = memory.store.stats()["sessions"]
    assert names == ["chatgpt: Lisbon trip [6717a3c1]", "chatgpt: Sourdough [77aa0000]"]
    assert sessions == 3  # the message two days later opened a new session of its chat


def test_chatgpt_split_files_in_an_export_folder(tmp_path):
    folder = tmp_path / "export"
    folder.mkdir()
    write_json(folder / "conversations-000.json", [chatgpt_conversation()])
    write_json(folder / "conversations-001.json", [chatgpt_conversation(
        "88bb0000-0000-0000-0000-000000000003", "Second file", created=T0 + 7 * 86400)])
    write_json(folder / "user.json", {"id": "user-1", "email": "me@example.invalid"})
    with Memory.open(tmp_path / "bank.db") as memory:
        report = memory.import_export("chatgpt", folder)
        names = sorted(c.name for c in memory.store.conversations())
    assert report.files == 2 and report.conversations == 2 and report.turns_new == 12
    assert names == ["chatgpt: Lisbon trip [6717a3c1]", "chatgpt: Second file [88bb0000]"]


def test_chatgpt_a_bad_record_is_one_line_and_the_rest_is_imported(tmp_path):
    broken = chatgpt_conversation("99cc0000-0000-0000-0000-000000000004", "Broken")
    broken["current_node"] = "nowhere"
    odd = chatgpt_conversation("aadd0000-0000-0000-0000-000000000005", "Odd message")
    odd["mapping"]["a1"]["message"]["content"]["parts"] = "not a list"
    path = write_json(tmp_path / "conversations.json",
                      [chatgpt_conversation(), broken, "not a chat", odd])
    lines: list[str] = []
    with Memory.open(tmp_path / "bank.db") as memory:
        report = memory.import_export("chatgpt", path, on_error=lines.append)
        names = sorted(c.name for c in memory.store.conversations())
        odd_turns = [t for n, _, t, _ in turns_of(memory) if "Odd" in n]
    assert lines == report.skipped
    assert lines == [
        "conversations.json: conversation 1: [99cc0000 'Broken']: current_node 'nowhere' "
        "is not in 'mapping'",
        "conversations.json: conversation 2: expected a conversation object, got str",
        "conversations.json: conversation 3 [aadd0000 'Odd message']: message a1: 'parts' "
        "must be a list, got 'not a list'",
    ]
    assert names == ["chatgpt: Lisbon trip [6717a3c1]", "chatgpt: Odd message [aadd0000]"]
    assert len(odd_turns) == 5  # everything but the unreadable message


def test_chatgpt_without_current_node_follows_the_newest_branch(tmp_path):
    chat = chatgpt_conversation()
    del chat["current_node"]
    path = write_json(tmp_path / "c.json", [chat])
    with Memory.open(tmp_path / "bank.db") as memory:
        memory.import_export("chatgpt", path)
        texts = [t for _, _, t, _ in turns_of(memory)]
    assert "Is Sintra worth a day trip?" in texts and "What about Porto instead?" not in texts


# -------------------------------------------------------------------------------- Claude shapes


def claude_conversation(index: int) -> dict:
    created = f"2024-06-{index % 28 + 1:02d}T09:00:00.000000Z"
    return {
        "uuid": f"c1a0de00-0000-0000-0000-{index:012d}",
        "name": f"Garden chat {index}",
        "created_at": created,
        "updated_at": created,
        "account": {"uuid": "acct"},
        "chat_messages": [
            {"uuid": f"q-{index}", "sender": "human", "created_at": created,
             "text": f"How deep should I plant tulip bulbs, question {index}?",
             "content": [{"type": "text",
                          "text": f"How deep should I plant tulip bulbs, question {index}?"}],
             "attachments": [], "files": []},
            # a newer export: empty ``text``, the answer in ``content`` items
            {"uuid": f"r-{index}", "sender": "assistant",
             "created_at": f"2024-06-{index % 28 + 1:02d}T09:00:05.000000Z", "text": "",
             "content": [{"type": "tool_use", "name": "web_search", "input": {}},
                         {"type": "text", "text": f"About 15 cm deep (answer {index})."}],
             "attachments": [], "files": []},
        ],
    }


def test_claude_export_is_streamed_with_a_buffer_smaller_than_one_conversation(tmp_path):
    path = write_json(tmp_path / "conversations.json",
                      [claude_conversation(i) for i in range(30)])
    assert path.stat().st_size > 30 * 500  # every conversation is larger than the buffer
    with Memory.open(tmp_path / "bank.db") as memory:
        report = memory.import_export("claude", path, buffer_size=64)
        stored = turns_of(memory)
    assert report.conversations == 30 and report.turns_new == 60 and not report.skipped
    first = [(s, t) for n, s, t, _ in stored if n == "claude: Garden chat 0 [c1a0de00]"]
    assert first == [("me", "How deep should I plant tulip bulbs, question 0?"),
                     ("assistant", "About 15 cm deep (answer 0).")]
    answer_time = [ts for n, s, _, ts in stored if n.endswith("chat 0 [c1a0de00]")][1]
    assert answer_time == int(datetime(2024, 6, 1, 9, 0, 5, tzinfo=ZoneInfo("UTC")).timestamp())


def test_claude_truncated_file_is_one_error_and_the_bank_is_unchanged(tmp_path):
    whole = json.dumps([claude_conversation(i) for i in range(5)])
    path = tmp_path / "conversations.json"
    path.write_text(whole[: len(whole) - 300], encoding="utf-8")
    with Memory.open(tmp_path / "bank.db") as memory:
        with pytest.raises(FormatError, match="truncated file: it ends inside conversation 4"):
            memory.import_export("claude", path, buffer_size=100)
        assert turns_of(memory) == [] and memory.store.conversations() == []


def test_a_claude_export_given_as_chatgpt_says_which_kind_it_is(tmp_path):
    path = write_json(tmp_path / "conversations.json", [claude_conversation(1)])
    with Memory.open(tmp_path / "bank.db") as memory:
        with pytest.raises(FormatError, match="use `ramem import claude`"):
            memory.import_export("chatgpt", path)
        assert turns_of(memory) == []


# ------------------------------------------------------------------------- streaming JSON arrays


@pytest.mark.parametrize("buffer_size", [1, 2, 3, 7, 64, 1 << 20])
def test_stream_reads_every_element_whatever_the_buffer(tmp_path, buffer_size):
    values = [1234567, {"a": "x, ]} \"[", "b": [1, 2, {}]}, True, None, 1e5, "é ü 中", [], -0.5]
    path = tmp_path / "a.json"
    path.write_text("\ufeff [\n" + ",\n ".join(json.dumps(v) for v in values) + "\n]\n",
                    encoding="utf-8")
    assert [v for _, v in iter_json_array(path, buffer_size=buffer_size)] == values


@pytest.mark.parametrize(("text", "message"), [
    ("", "empty file"),
    ("   \n", "empty file"),
    ('{"title": "x"}', "expected a JSON array of conversations"),
    ("hello", "expected a JSON array"),
    ('[{"a": 1}, {"b": ', "truncated file: it ends inside element 1"),
    ('[{"a": 1}, 12', "truncated file: it ends after element 1"),
    ('[{"a": 1}', "truncated file: it ends after element 0"),
    ('[{"a": 1},\n {"b": x}]', r"a.json:2:8: invalid JSON in element 1: Expecting value"),
    ('[{"a": 1} {"b": 2}]', "expected ',' or ']'"),
    ('[{"a": 1}] [', "extra data after the closing"),
])
def test_stream_errors_are_one_line_with_a_position(tmp_path, text, message):
    path = tmp_path / "a.json"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(FormatError, match=message.replace("[", r"\[")) as caught:
        list(iter_json_array(path, buffer_size=4))
    assert "\n" not in str(caught.value)


def test_stream_of_an_empty_array_yields_nothing(tmp_path):
    path = tmp_path / "a.json"
    path.write_text(" [ ] ", encoding="utf-8")
    assert list(iter_json_array(path)) == []


# ---------------------------------------------------------------------------- Markdown journals


JOURNAL_MD = """\
# My journal

## 2024-05-04 Saturday

07:30 Ran 10k in the park with Ana.

Baked bread in the afternoon;
it came out dense.

- 19:15 — Dinner at Tasca do Chico
- Watched a film
  about sailing

### evening
23:05:30 Could not sleep, read Saramago.

## 2024-05-05

Quiet Sunday.
"""


def local(*args: int) -> int:
    return int(datetime(*args, tzinfo=LISBON).timestamp())


def test_markdown_journal_entries_days_and_times(tmp_path):
    path = tmp_path / "journal.md"
    path.write_text(JOURNAL_MD, encoding="utf-8")
    with Memory.open(tmp_path / "bank.db", timezone_name="Europe/Lisbon") as memory:
        report = memory.import_export("markdown", path)
        stored = turns_of(memory)
        conversations = memory.store.conversations()
    assert stored == [
        ("journal", "me", "Ran 10k in the park with Ana.", local(2024, 5, 4, 7, 30)),
        ("journal", "me", "Baked bread in the afternoon;\nit came out dense.",
         local(2024, 5, 4, 12, 0, 0)),
        ("journal", "me", "Watched a film\nabout sailing", local(2024, 5, 4, 12, 0, 1)),
        ("journal", "me", "Dinner at Tasca do Chico", local(2024, 5, 4, 19, 15)),
        ("journal", "me", "Could not sleep, read Saramago.", local(2024, 5, 4, 23, 5, 30)),
        ("journal", "me", "Quiet Sunday.", local(2024, 5, 5, 12, 0)),
    ]
    assert [(c.name, c.kind, c.sessions) for c in conversations] == [("journal", "journal", 2)]
    assert report.conversations == 2 and report.turns_new == 6 and not report.skipped


def test_markdown_shares_the_journal_with_ramem_add(tmp_path):
    path = tmp_path / "journal.md"
    path.write_text("## 2024-05-04\n\n09:00 Coffee with Rui.\n", encoding="utf-8")
    with Memory.open(tmp_path / "bank.db", timezone_name="Europe/Lisbon") as memory:
        memory.add("Lunch at the market.", at="2024-05-04T13:00:00")
        memory.add("Coffee with Rui.", at="2024-05-04T09:00:00")
        report = memory.import_export("markdown", path)
        stats = memory.store.stats()
    assert report.turns_new == 0  # the same entry `ramem add` stored
    assert (stats["conversations"], stats["sessions"], stats["turns"]) == (1, 1, 2)


def test_markdown_folder_of_daily_files(tmp_path):
    daily = tmp_path / "daily" / "2024"
    daily.mkdir(parents=True)
    (daily / "2024-05-04.md").write_text("# 2024-05-04\n\n- 08:00 Swim\n- Read\n",
                                         encoding="utf-8")
    (daily / "2024-05-06.md").write_text("## Morning\nDentist at 10.\n\n#grateful for rain\n",
                                         encoding="utf-8")
    (daily / "2024-05-07.md").write_bytes(b"\xff\xfe not utf-8 \x80")
    (tmp_path / "daily" / "README.md").write_text("not a day\n", encoding="utf-8")
    (tmp_path / "daily" / "2024-13-01.md").write_text("Bad name\n", encoding="utf-8")
    with Memory.open(tmp_path / "bank.db", timezone_name="Europe/Lisbon") as memory:
        report = memory.import_export("markdown", tmp_path / "daily")
        stored = [(t, ts) for _, _, t, ts in turns_of(memory)]
    assert stored == [("Swim", local(2024, 5, 4, 8)), ("Read", local(2024, 5, 4, 12)),
                      ("Dentist at 10.", local(2024, 5, 6, 12)),
                      ("#grateful for rain", local(2024, 5, 6, 12, 0, 1))]
    assert report.skipped == ["2024-05-07.md: not UTF-8 text (byte 0)",
                              "2024-13-01.md: no such date '2024-13-01'"]
    assert report.notes == ["left alone 1 .md file(s) not named YYYY-MM-DD.md"]


def test_markdown_bad_heading_is_one_line_with_file_and_line(tmp_path):
    path = tmp_path / "journal.md"
    path.write_text("Before any day.\n\n## 2024-05-04\nGood day.\n\n## 2024-02-30\nLost.\n\n"
                    "## Notes\nAlso lost.\n\n## 2024-05-05\n25:00 Not a time.\n\nFine too.\n",
                    encoding="utf-8")
    with Memory.open(tmp_path / "bank.db") as memory:
        report = memory.import_export("markdown", path)
        texts = [t for _, _, t, _ in turns_of(memory)]
    assert texts == ["Good day.", "Fine too."]
    assert report.skipped == [
        "journal.md:6: heading '## 2024-02-30': day is out of range for month; its entries "
        "are skipped",
        "journal.md:9: heading '## Notes' is not a date: expected '## YYYY-MM-DD'; its "
        "entries are skipped",
        "journal.md:13: no such time '25:00'; the entry is skipped",
        "journal.md: 1 entry before the first '## YYYY-MM-DD' heading (no day to put them on)",
    ]


def test_markdown_without_entries_is_an_error(tmp_path):
    path = tmp_path / "notes.md"
    path.write_text("# Just a title\n\nSome text without a day.\n", encoding="utf-8")
    with Memory.open(tmp_path / "bank.db") as memory:
        with pytest.raises(FormatError, match="no journal entries found"):
            memory.import_export("markdown", path)


def test_export_md_then_import_into_a_fresh_bank_round_trips(tmp_path):
    entries = [
        ("Ran 10k in the park.", "2024-05-04T07:30:00"),
        ("A thought at an odd second.", "2024-05-04T07:30:17"),
        ("Two paragraphs:\n\nthe second one\n    indented code", "2024-05-04T21:00:00"),
        ("- starts like a list item", "2024-05-05T00:00:00"),
        ("10:00 starts like a time", "2024-05-05T09:00:00"),
        ("## looks like a heading\n# and a title", "2024-05-06T23:59:59"),
    ]
    md = tmp_path / "journal.md"
    with Memory.open(tmp_path / "a.db", timezone_name="Europe/Lisbon") as memory:
        for text, at in entries:
            memory.add(text, at=at)
        assert memory.export(md, format="md") == len(entries)
        original = turns_of(memory)
        sessions = memory.store.stats()["sessions"]
        again = memory.import_export("markdown", md)
        assert again.turns_new == 0  # the same bank: nothing new
    assert md.read_text(encoding="utf-8").startswith("# journal\n\n## 2024-05-04\n\n- 07:30 Ran")
    with Memory.open(tmp_path / "b.db", timezone_name="Europe/Lisbon") as fresh:
        report = fresh.import_export("markdown", md)
        assert turns_of(fresh) == original
        assert fresh.store.stats()["sessions"] == sessions == 3
    assert not report.skipped


def test_export_md_refuses_a_chat(tmp_path, chatgpt_file):
    with Memory.open(tmp_path / "bank.db") as memory:
        memory.import_export("chatgpt", chatgpt_file)
        with pytest.raises(ValueError, match="not a journal"):
            memory.export(tmp_path / "x.md", format="md",
                          conversation="chatgpt: Sourdough [77aa0000]")
        with pytest.raises(ValueError, match="no conversation named 'journal'"):
            memory.export(tmp_path / "x.md", format="md")


# ------------------------------------------------------------------------------------------ CLI


def test_cli_import_chatgpt_is_idempotent_and_searchable(tmp_path, chatgpt_file):
    bank = tmp_path / "bank.db"
    first = ok(ramem("--db", bank, "import", "chatgpt", chatgpt_file))
    assert "2 conversation(s): 8 new turn(s) of 8" in first.stdout
    assert "left out 4 system/tool/non-text message(s)" in first.stderr
    second = ok(ramem("--db", bank, "import", "chatgpt", chatgpt_file))
    assert "0 new turn(s) of 8" in second.stdout
    found = json.loads(ok(ramem("--db", bank, "search", "sourdough starter acetone",
                                "--json")).stdout)
    assert "acetone" in found["results"][0]["content"]
    assert found["results"][0]["conversation"] == "chatgpt: Sourdough [77aa0000]"


def test_cli_import_json_summary(tmp_path, chatgpt_file):
    data = json.loads(ok(ramem("--db", tmp_path / "b.db", "import", "chatgpt", chatgpt_file,
                               "--json")).stdout)
    assert data["turns_new"] == 8 and data["conversations"] == 2 and data["skipped"] == []


def test_cli_import_bad_records_are_listed_then_exit_1(tmp_path):
    broken = chatgpt_conversation("99cc0000-0000-0000-0000-000000000004", "Broken")
    del broken["mapping"]
    path = write_json(tmp_path / "conversations.json", [chatgpt_conversation(), broken])
    result = ramem("--db", tmp_path / "bank.db", "import", "chatgpt", path)
    assert result.exit_code == 1
    assert "1 conversation(s): 6 new turn(s)" in result.stdout
    skipped = [line for line in result.stderr.splitlines() if line.startswith("skipped: ")]
    assert skipped == ["skipped: conversations.json: conversation 1: [99cc0000 'Broken']: "
                       "'mapping' must be an object, got None"]
    assert "error: 1 record(s) could not be read" in result.stderr


@pytest.mark.parametrize(("content", "expected"), [
    (None, "no such file or folder"),
    ("this is not json", "expected a JSON array of conversations"),
    ("", "empty file"),
    ('{"conversation": {"speaker_a": "A"}}', "expected a JSON array"),
    ('[{"sample_id": "conv-1", "conversation": {}}]', "no conversation could be read"),
    ('[{"title": "x", "mapping": {}', "truncated file"),
])
def test_cli_import_unreadable_files_are_one_error_line(tmp_path, content, expected):
    path = tmp_path / "conversations.json"
    if content is not None:
        path.write_text(content, encoding="utf-8")
    bank = tmp_path / "bank.db"
    line = error_line(ramem("--db", bank, "import", "chatgpt", path))
    assert expected in line
    assert "conversations.json" in line
    if content is None:
        assert not bank.exists()  # a typo creates no bank
    else:
        stats = json.loads(ok(ramem("--db", bank, "stats", "--json")).stdout)
        assert stats["turns"] == 0


def test_cli_import_folder_without_conversations(tmp_path):
    (tmp_path / "export").mkdir()
    line = error_line(ramem("--db", tmp_path / "b.db", "import", "claude", tmp_path / "export"))
    assert "no conversations.json" in line


def test_cli_import_markdown_and_export_md(tmp_path):
    bank, path = tmp_path / "bank.db", tmp_path / "journal.md"
    path.write_text(JOURNAL_MD, encoding="utf-8")
    result = ok(ramem("--db", bank, "--timezone", "Europe/Lisbon", "import", "markdown", path))
    assert "2 day(s): 6 new turn(s) of 6" in result.stdout
    out = tmp_path / "out.md"
    assert "exported 6 entries of 'journal'" in ok(
        ramem("--db", bank, "export", "--format", "md", out)).stdout
    assert "- 19:15 Dinner at Tasca do Chico" in out.read_text(encoding="utf-8")
    again = ok(ramem("--db", bank, "import", "markdown", out))
    assert "0 new turn(s) of 6" in again.stdout


def test_cli_import_markdown_bad_heading_exit_1(tmp_path):
    path = tmp_path / "journal.md"
    path.write_text("## 2024-05-04\nGood.\n\n## 2024-5-4\nBad.\n", encoding="utf-8")
    result = ramem("--db", tmp_path / "b.db", "import", "markdown", path)
    assert result.exit_code == 1
    assert "skipped: journal.md:4: heading '## 2024-5-4' is not a date" in result.stderr


def test_cli_import_conversation_option_is_for_markdown_only(tmp_path, chatgpt_file):
    result = ramem("--db", tmp_path / "b.db", "import", "chatgpt", chatgpt_file,
                   "--conversation", "x")
    assert result.exit_code == 2 and "markdown" in result.stderr


def test_cli_import_help_teaches_where_the_files_are():
    text = ok(ramem("import", "--help")).stdout
    for phrase in ("conversations.json", "Data controls", "conversations-000.json",
                   "## YYYY-MM-DD", "HH:MM", "YYYY-MM-DD.md", "ramem import markdown"):
        assert phrase in text


def test_import_with_an_embedder_embeds_every_imported_turn(tmp_path, chatgpt_file,
                                                           hashing_embedder):
    with Memory.open(tmp_path / "bank.db", embedder=hashing_embedder) as memory:
        report = memory.import_export("chatgpt", chatgpt_file)
        assert report.vectors_new == report.memories_new == 8
        assert memory.store.vector_count() == memory.store.memory_count() == 8
        top = memory.search("Is Sintra worth a day trip?", k=3).results
        assert any("Sintra" in c.memory.content for c in top)
        assert memory.import_export("chatgpt", chatgpt_file).vectors_new == 0


def test_progress_counts_every_written_turn(tmp_path, chatgpt_file):
    counted: list[int] = []
    done: list[int] = []
    with Memory.open(tmp_path / "bank.db") as memory:
        memory.import_export("chatgpt", chatgpt_file, on_counted=counted.append,
                             progress=done.append)
    assert counted == [8] and sum(done) == 8


def test_cli_import_with_llm_queues_extraction_and_calls_no_model(tmp_path, chatgpt_file):
    from ramem_local import models
    from ramem_local.testing import ScriptedLLM

    llm = ScriptedLLM([])  # no replies: any model call fails the test
    with models.registered_llm("fake", lambda: llm):
        result = ok(ramem("--db", tmp_path / "b.db", "--llm", "fake", "import", "chatgpt",
                          chatgpt_file, "--json"))
    assert json.loads(result.stdout)["extraction"]["queued"] >= 2  # one window per chat
    assert llm.calls == []


def test_chat_export_zip_is_read_without_unpacking(tmp_path, chatgpt_file):
    import zipfile

    archive = tmp_path / "chatgpt-export.zip"
    with zipfile.ZipFile(archive, "w", compression=zipfile.ZIP_DEFLATED) as zipped:
        zipped.write(chatgpt_file, "export-2024/conversations.json")
        zipped.writestr("export-2024/user.json", "{}")
        zipped.writestr("export-2024/chat.html", "<html></html>")
    with Memory.open(tmp_path / "bank.db") as memory:
        report = memory.import_export("chatgpt", archive, buffer_size=50)
        assert report.turns_new == 8 and report.files == 1
        assert memory.import_export("chatgpt", chatgpt_file).turns_new == 0


def test_chat_export_zip_errors_are_one_line(tmp_path):
    import zipfile

    empty = tmp_path / "empty.zip"
    with zipfile.ZipFile(empty, "w") as zipped:
        zipped.writestr("user.json", "{}")
    line = error_line(ramem("--db", tmp_path / "b.db", "import", "claude", empty))
    assert "empty.zip: no conversations.json" in line and "zip archive" in line
    fake = tmp_path / "fake.zip"
    fake.write_text("not a zip", encoding="utf-8")
    assert "not a zip archive" in error_line(
        ramem("--db", tmp_path / "b.db", "import", "claude", fake))
    cut = tmp_path / "cut.zip"
    with zipfile.ZipFile(cut, "w") as zipped:
        zipped.writestr("conversations.json", '[{"uuid": "x", "chat_messages": [')
    line = error_line(ramem("--db", tmp_path / "b.db", "import", "claude", cut))
    assert "cut.zip!conversations.json: truncated file" in line
