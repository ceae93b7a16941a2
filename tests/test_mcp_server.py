"""`ramem mcp` through the official MCP SDK's own client, over stdio, with the real MiniLM.

The server runs as a subprocess (`cli.py --db BANK --embedder MINILM mcp`), exactly as an
assistant would start it: initialize, list the tools, call each, and check that what a caller
gets wrong comes back as a tool error with a readable line.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

mcp = pytest.importorskip("mcp")
from click.testing import CliRunner  # noqa: E402
from mcp import Client, StdioServerParameters  # noqa: E402
from samples import GARDEN_TURNS  # noqa: E402

from ramem_local.cli import cli  # noqa: E402

CLI_SCRIPT = Path(__file__).resolve().parents[1] / "cli.py"
TOOLS = {"remember", "recall", "ask", "timeline", "forget"}


def payload(result: Any) -> Any:
    """A tool result's structured content, else its text parsed as JSON, else the text."""
    if getattr(result, "structured_content", None):
        return result.structured_content
    text = "".join(getattr(part, "text", "") for part in result.content)
    try:
        return json.loads(text)
    except ValueError:
        return text


def timeline_contents(reply: dict) -> list[str]:
    return [m["content"] for day in reply["days"] for session in day["sessions"]
            for m in session["memories"]]


def error_text(result: Any) -> str:
    assert result.is_error, result
    return "".join(getattr(part, "text", "") for part in result.content)


def server(bank: Path, *args: str) -> StdioServerParameters:
    """The server as an assistant starts it, reading the test's config file (RAMEM_CONFIG,
    not the developer's: the SDK passes on only a few variables of its own choosing)."""
    return StdioServerParameters(command=sys.executable,
                                 args=[str(CLI_SCRIPT), "--db", str(bank), *args, "mcp"],
                                 env={"RAMEM_CONFIG": os.environ["RAMEM_CONFIG"],
                                      "RAMEM_DEFAULT_EMBEDDER":
                                          os.environ["RAMEM_DEFAULT_EMBEDDER"]})


@pytest.mark.real_model
def test_an_assistant_remembers_recalls_and_forgets_through_mcp(tmp_path, minilm_dir):
    bank = tmp_path / "bank.db"
    seen: dict[str, Any] = {}

    async def session() -> None:
        async with Client(server(bank, "--embedder", str(minilm_dir)),
                          read_timeout_seconds=120) as client:
            seen["tools"] = {tool.name for tool in (await client.list_tools()).tools}
            hike = payload(await client.call_tool("remember", {
                "text": "Hiked to Eagle Lake with Maya; the lake was still half frozen.",
                "at": "2024-05-04 10:00"}))
            await client.call_tool("remember", {
                "text": "Cooked a green curry for Tom's birthday.", "at": "2024-06-15 19:00"})
            seen["hike"] = hike
            seen["recall"] = payload(await client.call_tool("recall", {
                "question": "Where did I hike in early May 2024?", "k": 3,
                "as_of": "2024-07-01"}))
            seen["count"] = payload(await client.call_tool("recall", {
                "question": "How many times did I go hiking in May 2024?",
                "as_of": "2024-07-01"}))
            seen["between"] = payload(await client.call_tool("recall", {
                "question": "What did I do between hiking to Eagle Lake and the green curry "
                            "for Tom's birthday?", "as_of": "2024-07-01"}))
            seen["before_curry"] = payload(await client.call_tool("recall", {
                "question": "Cooked a green curry", "k": 5, "as_of": "2024-06-01"}))
            seen["timeline"] = payload(await client.call_tool("timeline", {
                "start": "2024-06-01", "end": "2024-07-01"}))
            seen["ask"] = error_text(await client.call_tool("ask", {"question": "Where?"}))
            seen["empty"] = error_text(await client.call_tool("recall", {"question": "  "}))
            seen["bad_date"] = error_text(await client.call_tool("recall", {
                "question": "Where did I hike?", "as_of": "not a date at all"}))
            seen["unconfirmed"] = error_text(await client.call_tool("forget", {
                "ids": [hike["id"]]}))
            seen["unknown"] = error_text(await client.call_tool("forget", {
                "ids": [999], "confirm": True}))
            seen["forgot"] = payload(await client.call_tool("forget", {
                "ids": [hike["id"]], "confirm": True}))
            seen["after"] = payload(await client.call_tool("recall", {
                "question": "Where did I hike in early May 2024?", "k": 3,
                "as_of": "2024-07-01"}))

    anyio.run(session)

    assert seen["tools"] == TOOLS
    assert seen["hike"]["memory"]["session_start"].startswith("2024-05-04")
    recalled = seen["recall"]
    assert recalled["memories"][0]["id"] == seen["hike"]["id"]
    assert recalled["memories"][0]["content"].startswith("me: Hiked to Eagle Lake")
    assert recalled["frame"]["guard"] == "filter"
    assert recalled["frame"]["time_range"]["start"].startswith("2024-05-01")
    assert recalled["extraction_pending"] == 0
    assert seen["count"]["count"] == 1 and seen["count"]["frame"]["counting"]
    assert recalled["count"] is None
    between = seen["between"]["frame"]
    assert (between["anchor"]["relation"], between["anchor"]["phrase"]) == (
        "between", "hiking to Eagle Lake")
    assert between["other_end"]["phrase"] == "the green curry for Tom's birthday"
    assert between["other_end"]["time"].startswith("2024-06-15")
    assert between["time_range"]["start"].startswith("2024-05-04")
    assert "green curry" not in json.dumps(seen["before_curry"]["memories"])  # as_of: written later
    assert timeline_contents(seen["timeline"]) == ["me: Cooked a green curry for Tom's birthday."]
    assert "no LLM is configured" in seen["ask"]
    assert "the question is empty" in seen["empty"]
    assert "not a date at all" in seen["bad_date"]
    assert "cannot be undone" in seen["unconfirmed"]
    assert "no memory with id 999" in seen["unknown"]
    assert seen["forgot"]["memory_ids"] == [seen["hike"]["id"]]
    assert (seen["forgot"]["dry_run"], seen["forgot"]["turns"]) == (False, 1)
    assert seen["hike"]["id"] not in [m["id"] for m in seen["after"]["memories"]]


def test_recall_without_k_returns_the_config_k(tmp_path):
    """`ramem config set k 3`: recall returns 3 memories unless the assistant gives a k."""
    bank = tmp_path / "bank.db"
    garden = tmp_path / "garden.jsonl"
    garden.write_text("\n".join(json.dumps(t) for t in GARDEN_TURNS), encoding="utf-8")
    for args in (["--db", str(bank), "ingest", str(garden)], ["config", "set", "k", "3"]):
        done = CliRunner().invoke(cli, args)
        assert done.exit_code == 0, done.output
    question = {"question": "What did I do in the garden?"}
    seen: dict[str, Any] = {}

    async def session() -> None:
        async with Client(server(bank), read_timeout_seconds=60) as client:
            tools = {tool.name: tool for tool in (await client.list_tools()).tools}
            seen["k_schema"] = tools["recall"].input_schema["properties"]["k"]
            seen["default"] = payload(await client.call_tool("recall", question))
            seen["given"] = payload(await client.call_tool("recall", {**question, "k": 5}))

    anyio.run(session)
    assert seen["k_schema"].get("default") is None, "the default is the config's, not fixed"
    assert len(seen["default"]["memories"]) == 3
    assert len(seen["given"]["memories"]) == 5


def test_the_server_speaks_only_protocol_on_stdout_and_logs_on_stderr(tmp_path):
    """Without an embedder (BM25 only) the bank's note goes to stderr; the client, which
    reads stdout as JSON-RPC, still gets through the handshake and a call."""
    bank = tmp_path / "bank.db"
    added = CliRunner().invoke(cli, ["--db", str(bank), "add", "Planted tomatoes",
                                     "--at", "2024-05-01"])
    assert added.exit_code == 0, added.output
    errors = tmp_path / "stderr.txt"
    result: dict[str, Any] = {}

    async def session() -> None:
        with errors.open("w") as errlog:
            from mcp.client.stdio import stdio_client  # the transport, to capture stderr

            async with stdio_client(server(bank), errlog=errlog) as streams, Client(
                    _StreamTransport(streams), read_timeout_seconds=60) as client:
                result["tools"] = {t.name for t in (await client.list_tools()).tools}
                result["recall"] = payload(await client.call_tool(
                    "recall", {"question": "tomatoes", "k": 2}))

    anyio.run(session)
    assert result["tools"] == TOOLS
    assert result["recall"]["memories"][0]["content"] == "me: Planted tomatoes"
    assert "note: no embedder configured: retrieval is BM25 only" in errors.read_text()


class _StreamTransport:
    """Adapts already-open (read, write) streams to the Client's Transport protocol."""

    def __init__(self, streams: Any) -> None:
        self._streams = streams

    async def __aenter__(self) -> Any:
        return self._streams

    async def __aexit__(self, *exc: object) -> None:
        return None


def test_concurrent_calls_are_served_one_at_a_time_and_none_is_lost(tmp_path):
    bank = tmp_path / "bank.db"
    ids: list[int] = []
    found: dict[str, Any] = {}

    async def session() -> None:
        async with Client(server(bank), read_timeout_seconds=60) as client:
            async def remember(n: int) -> None:
                reply = payload(await client.call_tool("remember", {
                    "text": f"Note number {n} about the garden", "at": f"2024-05-{n + 1:02d}"}))
                ids.append(reply["id"])

            async with anyio.create_task_group() as group:
                for n in range(12):
                    group.start_soon(remember, n)
            found["timeline"] = payload(await client.call_tool("timeline", {
                "start": "2024-05-01", "end": "2024-06-01", "limit": 50}))

    anyio.run(session)
    assert len(ids) == 12 and len(set(ids)) == 12
    assert timeline_contents(found["timeline"]) == [
        f"me: Note number {n} about the garden" for n in range(12)]


def test_hostile_dates_and_questions_are_tool_errors_and_write_nothing(tmp_path):
    bank = tmp_path / "bank.db"
    replies: dict[str, Any] = {}

    async def session() -> None:
        async with Client(server(bank), read_timeout_seconds=60) as client:
            for name, at in (("old", "1850-01-01"), ("late", "2250-01-01"),
                             ("digits", "9" * 5000), ("nonsense", "the day after never")):
                replies[name] = await client.call_tool("remember", {"text": "x", "at": at})
            replies["ms"] = payload(await client.call_tool(
                "remember", {"text": "millis", "at": "1714816800000"}))
            replies["fts"] = await client.call_tool("recall", {"question": '"NEAR( OR *'})
            replies["empty"] = await client.call_tool("recall", {"question": "  "})
            replies["timeline"] = payload(await client.call_tool("timeline", {
                "start": "2024-05-01", "end": "2024-06-01"}))

    anyio.run(session)
    for name in ("old", "late"):
        assert "out of range" in error_text(replies[name])
    for name in ("digits", "nonsense", "empty"):
        assert "\n" not in error_text(replies[name]).strip()
    assert not replies["fts"].is_error
    assert timeline_contents(replies["timeline"]) == ["me: millis"]
