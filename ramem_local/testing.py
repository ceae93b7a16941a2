"""Test doubles of the models, for fast deterministic tests of code that embeds ``Memory``.

Neither needs a model file, a download or a GPU; both implement the protocols of
:mod:`ramem_local.protocols` that the real runtimes implement. Hand them to ``Memory.open``
directly, or register them under a name so that code that opens its bank by model name (your
settings, the ``ramem`` command's ``--embedder NAME`` / ``--llm NAME``) gets them::

    from ramem_local import Memory, models
    from ramem_local.testing import HashingEmbedder, ScriptedLLM

    with Memory.open(tmp_path / "bank.db", embedder=HashingEmbedder()) as memory:
        memory.add("Lunch with Lena at the harbour", at="2024-05-03 12:30")
        assert memory.search("harbour lunch").results

    llm = ScriptedLLM([{"entries": []}])          # one scripted reply per model call
    with models.registered_llm("scripted", lambda: llm):
        with Memory.open(tmp_path / "bank.db", llm="scripted") as memory:
            ...

They say nothing about retrieval or answer quality: that is measured with the real models.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from .protocols import LLMResult
from .schemas import validate
from .text import words
from .types import EmbedderFingerprint

__all__ = ["HashingEmbedder", "Reply", "ScriptedLLM"]

# Bumped whenever HashingEmbedder's vectors change: it is part of the fingerprint, so a bank
# built with other vectors refuses the new ones instead of mixing them.
_HASHING_VERSION = "words-sha256-v1"


class HashingEmbedder:
    """A deterministic bag-of-words embedder: each word is hashed into one of ``dimension``
    coordinates, and the vector is L2-normalised, so texts that share words get similar
    vectors and texts that share none are near orthogonal.

    Same text, same vector, on every machine and in every process; no model files. The
    fingerprint depends only on the name, the dimension and the hashing scheme, so a bank
    built with it reopens with a new ``HashingEmbedder`` of the same name and dimension.
    """

    def __init__(self, dimension: int = 32, *, name: str = "hashing"):
        if dimension < 1:
            raise ValueError("dimension must be at least 1")
        self.name = name
        self._dimension = dimension

    @property
    def dimension(self) -> int:
        return self._dimension

    @property
    def fingerprint(self) -> EmbedderFingerprint:
        scheme = f"{_HASHING_VERSION}:{self.name}:{self._dimension}"
        return EmbedderFingerprint(self.name, self._dimension,
                                   hashlib.sha256(scheme.encode()).hexdigest())

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self._dimension), dtype=np.float32)
        return np.stack([self._vector(text) for text in texts])

    def embed_query(self, text: str) -> np.ndarray:
        return self._vector(text)

    def _vector(self, text: str) -> np.ndarray:
        vector = np.zeros(self._dimension, dtype=np.float32)
        for word in words(text):
            digest = hashlib.sha256(word.encode()).digest()
            vector[digest[0] % self._dimension] += 1.0 + digest[1] / 255
        norm = np.linalg.norm(vector)
        if norm == 0:  # a text without words: the same unit vector as every other such text
            return np.full(self._dimension, 1 / np.sqrt(self._dimension), dtype=np.float32)
        return vector / norm


Reply = dict | str | LLMResult | Callable[[list[dict], dict, int], "dict | str | LLMResult"]


@dataclass
class ScriptedLLM:
    """An LLM that answers each ``chat_json`` call with the next scripted reply.

    A reply is a dict (returned as JSON, checked against the call's schema as the real
    runtime checks it), a raw string (read as model text: invalid JSON gives the error
    ``invalid_json``), a ready ``LLMResult`` (e.g. a truncation), or a function
    ``(messages, schema, max_tokens) -> reply``. Every call is recorded in ``calls``; a call
    with no reply left raises ``AssertionError`` (the test scripted too few).
    """

    replies: list[Reply] = field(default_factory=list)
    name: str = "scripted-llm"
    calls: list[dict] = field(default_factory=list)

    def chat_json(self, messages: list[dict], schema: dict, *, max_tokens: int,
                  temperature: float = 0.0,
                  on_text: Callable[[str], None] | None = None) -> LLMResult:
        self.calls.append({"messages": messages, "schema": schema, "max_tokens": max_tokens})
        if not self.replies:
            raise AssertionError("ScriptedLLM ran out of scripted replies")
        reply = self.replies.pop(0)
        if callable(reply):
            reply = reply(messages, schema, max_tokens)
        if isinstance(reply, LLMResult):
            if on_text is not None:
                _stream(reply.raw, on_text)
            return reply
        raw = reply if isinstance(reply, str) else json.dumps(reply)
        if on_text is not None:
            _stream(raw, on_text)
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


def _stream(raw: str, on_text: Callable[[str], None], piece: int = 3) -> None:
    """Hand ``raw`` to ``on_text`` a few characters at a time, as a model's tokens arrive
    (an escape sequence may be cut, as a token may cut one)."""
    for start in range(0, len(raw), piece):
        on_text(raw[start:start + piece])
