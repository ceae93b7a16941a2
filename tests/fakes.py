"""Scripted fakes of the model runtimes, for unit tests of the logic around them.

They implement the same protocols as the real runtimes (``ramem_local.protocols.LLM``);
integration tests use the real SmolLM2 GGUF and MiniLM ONNX models.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field

from ramem_local.protocols import LLMResult
from ramem_local.schemas import validate

Reply = dict | str | LLMResult | Callable[[list[dict], dict, int], "dict | str | LLMResult"]


@dataclass
class ScriptedLLM:
    """Answers each ``chat_json`` call with the next scripted reply.

    A reply is a dict (returned as schema-checked JSON), a raw string (interpreted as model
    text: invalid JSON gives ``invalid_json``), a ready ``LLMResult`` (e.g. a truncation), or a
    function ``(messages, schema, max_tokens) -> reply``. Every call is recorded in ``calls``.
    """

    replies: list[Reply] = field(default_factory=list)
    name: str = "scripted-llm"
    calls: list[dict] = field(default_factory=list)

    def chat_json(self, messages: list[dict], schema: dict, *, max_tokens: int,
                  temperature: float = 0.0) -> LLMResult:
        self.calls.append({"messages": messages, "schema": schema, "max_tokens": max_tokens})
        if not self.replies:
            raise AssertionError("ScriptedLLM ran out of scripted replies")
        reply = self.replies.pop(0)
        if callable(reply):
            reply = reply(messages, schema, max_tokens)
        if isinstance(reply, LLMResult):
            return reply
        raw = reply if isinstance(reply, str) else json.dumps(reply)
        try:
            data = json.loads(raw)
        except ValueError:
            return LLMResult(None, "invalid_json", "stop", raw, 10, 5, 1.0)
        problems = validate(data, schema)
        if problems:
            return LLMResult(None, "schema: " + "; ".join(problems), "stop", raw, 10, 5, 1.0)
        return LLMResult(data, None, "stop", raw, 10, len(raw) // 4, 1.0)

    def count_tokens(self, text: str) -> int:
        return max(1, len(text) // 4)


def truncated(raw: str = '{"entries": [{"content": "cut') -> LLMResult:
    """What a call that ran out of max_tokens looks like."""
    return LLMResult(None, "truncated", "length", raw, 100, 64, 1.0)
