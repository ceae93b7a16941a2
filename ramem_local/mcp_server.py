"""`ramem mcp`: one bank served to an assistant over MCP (stdio), with the official SDK.

Tools: ``remember``, ``recall``, ``ask``, ``timeline``, ``forget``. Only protocol messages go to
stdout; the SDK's logs and ours go to stderr.

The SDK runs synchronous tools on worker threads, and a client may send several calls at
once. The bank (one SQLite connection) and the llama.cpp model each have one owner: every tool
body runs under one lock, so calls are served one at a time, in arrival order.

What a user can cause — a bad date, an empty question, an unknown memory id, no LLM for
``ask``, a full disk or a read-only bank — comes back as a tool error (``is_error``) whose text
is the one line the CLI prints for it (``errors.error_line``). Anything else is a bug: the SDK
logs its traceback on stderr and the client gets "Error executing tool NAME".
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable
from datetime import timezone
from typing import Any, TypeVar

from . import DAY, Memory
from .errors import USER_ERRORS, InputError, LLMError, RamemError, error_line
from .render import (
    answer_dict,
    candidate_dict,
    forget_dict,
    frame_dict,
    iso_time,
    memory_dict,
    timeline_dict,
)

INSTRUCTIONS = (
    "Long-term memory of this user's conversations and journal, kept on this machine. "
    "Use `recall` before answering about the user's past (it returns memories with the "
    "episode each belongs to: when it was said, who was there), `remember` to keep something "
    "the user tells you, `timeline` to see what happened in a window of days, and `ask` for "
    "an answer with citations when a local LLM is configured. `forget` deletes for good and "
    "needs confirm=true."
)
MAX_K = 50
TIMELINE_LIMIT = 500

_Tool = TypeVar("_Tool", bound=Callable[..., Any])


def build_server(memory: Memory) -> Any:
    """An ``MCPServer`` whose tools work on ``memory`` (one lock around every call)."""
    from mcp.server.mcpserver import MCPServer
    from mcp.types import CallToolResult, TextContent

    server = MCPServer(name="ramem", instructions=INSTRUCTIONS)
    lock = threading.Lock()
    tz = memory.tz

    def serialised(fn: _Tool) -> _Tool:
        @functools.wraps(fn)
        def call(*args: Any, **kwargs: Any) -> Any:
            with lock:
                try:
                    return fn(*args, **kwargs)
                except USER_ERRORS as exc:
                    # Returned rather than raised as a ToolError, which the SDK would prefix
                    # with "Error executing tool NAME: ": the text is the CLI's line.
                    return CallToolResult(content=[TextContent(type="text", text=error_line(exc))],
                                          is_error=True)
        return call  # type: ignore[return-value]

    @server.tool(description="Keep something the user said or wrote. `at` is when it happened "
                             "or was said (ISO date/time or '3 May 2024 18:00'; default: now).")
    @serialised
    def remember(text: str, at: str | None = None, speaker: str = "me") -> dict[str, Any]:
        memory_id = memory.add(text, at=at, speaker=speaker)
        stored = memory.get(memory_id)
        return {"id": memory_id,
                "memory": memory_dict(stored, tz) if stored is not None else None}

    @server.tool(description="Find the memories that answer a question, episode-compatible ones "
                             "first ('What did I do last weekend?', 'When did I last ...', "
                             "'How many times ...', 'between the move and the wedding', "
                             "'the day I moved', 'the weekend I moved', 'on my birthday', "
                             "'while I was in Lisbon', 'over the holidays', "
                             "'two Christmases ago', 'Who did I visit ...'). "
                             "`as_of` sets 'now' for relative times, "
                             "and nothing written after it is returned. `k`: how many "
                             f"memories (1-{MAX_K}; default: the user's ramem config `k`). "
                             "Returns memories with their session/event times and people, how "
                             "the question's time was read, and `count` for a 'how many' "
                             "question.")
    @serialised
    def recall(question: str, k: int | None = None, as_of: str | None = None) -> dict[str, Any]:
        _check_question(question)
        response = memory.search(question, k=_chosen_k(k, memory), as_of=as_of)
        frame = response.trace.frame
        return {
            "memories": [candidate_dict(c, i, tz) for i, c in enumerate(response.results, 1)],
            "count": response.count,
            "capped": response.capped,
            "frame": _frame_summary(frame_dict(frame, tz)) if frame is not None else None,
            "notes": response.trace.notes,
            "extraction_pending": memory.extraction_queue()["pending"],
        }

    @server.tool(description="Answer a question from memory with citations, or say it is not "
                             "in memory. Needs a local LLM (`ramem --llm M mcp`). `k`: how "
                             f"many memories the answer may use (1-{MAX_K}; default: the "
                             "user's ramem config `k`).")
    @serialised
    def ask(question: str, k: int | None = None, as_of: str | None = None) -> dict[str, Any]:
        _check_question(question)
        if memory.llm is None:
            raise LLMError("no LLM is configured for this server (start it with "
                             "`ramem --llm NAME mcp`); use recall for the evidence")
        answer = answer_dict(memory.ask(question, k=_chosen_k(k, memory), as_of=as_of), tz)
        return {key: answer[key] for key in
                ("question", "answer", "abstained", "citations", "evidence")}

    @server.tool(description="The memories of a window of days, grouped by day and session, "
                             "optionally only one person's. `start`/`end`: dates or times "
                             "(default: the last 7 days; a day given as `end` is included).")
    @serialised
    def timeline(start: str | None = None, end: str | None = None, person: str | None = None,
                 limit: int = 100) -> dict[str, Any]:
        if not 1 <= limit <= TIMELINE_LIMIT:
            raise InputError(f"limit must be between 1 and {TIMELINE_LIMIT}")
        if start is None and end is None:
            start = iso_time(memory.reference_time(None) - 7 * DAY, tz)
        days = memory.timeline(start=start, end=end, person=person, limit=limit)
        return {"days": timeline_dict(days, tz)}

    @server.tool(description="Forget memories for good, by id, with their source turns (unless "
                             "another memory cites them). Refuses unless confirm is true: ask "
                             "the user first. dry_run lists what would go.")
    @serialised
    def forget(ids: list[int], confirm: bool = False, dry_run: bool = False) -> dict[str, Any]:
        if not ids:
            raise InputError("give the ids of the memories to forget")
        if not confirm and not dry_run:
            preview = memory.forget(*ids, dry_run=True)
            raise InputError(
                f"forgetting {len(preview.memory_ids)} memory(ies) and {len(preview.turn_ids)} "
                "turn(s) cannot be undone; call again with confirm=true once the user agreed")
        return forget_dict(memory.forget(*ids, dry_run=dry_run), tz)

    return server


def serve(memory: Memory) -> None:
    """Serve ``memory`` over stdio until the client closes the connection."""
    build_server(memory).run("stdio")


class _Unopened:
    """Stands for a bank that could not be opened (an encrypted bank without its key, a
    wrong key): every use raises why, so each tool call returns that line to the assistant,
    which can tell the user what to do, instead of a server that died at start."""

    tz = timezone.utc

    def __init__(self, refusal: RamemError) -> None:
        self._refusal = refusal

    def __getattr__(self, name: str) -> Any:
        raise self._refusal


def serve_refusal(refusal: RamemError) -> None:
    """Serve the tools over stdio, each answering with ``refusal``'s line."""
    build_server(_Unopened(refusal)).run("stdio")  # type: ignore[arg-type]


def _check_question(question: str) -> None:
    if not question or not question.strip():
        raise InputError("the question is empty")


def _chosen_k(k: int | None, memory: Memory) -> int:
    """The caller's ``k`` (1 to MAX_K), else the bank's default (the user's config ``k``,
    which may be up to 100: held to MAX_K, what an assistant's context takes)."""
    if k is None:
        return min(memory.defaults.k, MAX_K)
    if not 1 <= k <= MAX_K:
        raise InputError(f"k must be between 1 and {MAX_K}")
    return k


def _frame_summary(frame: dict[str, Any]) -> dict[str, Any]:
    keys = ("need", "reference_time", "cues", "time_range", "widened_range", "guard",
            "guard_reason", "persons", "order", "counting", "anchor", "other_end", "as_of")
    return {key: frame[key] for key in keys}
