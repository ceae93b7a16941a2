"""What the stages need from the model runtimes; scripted fakes in tests implement the same.

No model code here: the stages import this module, never a runtime, so they can be tested with
scripted fakes and imported without llama.cpp or onnxruntime.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

import numpy as np

from .types import EmbedderFingerprint, LLMCall


class Embedder(Protocol):
    name: str

    @property
    def dimension(self) -> int: ...

    @property
    def fingerprint(self) -> EmbedderFingerprint: ...

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray: ...

    def embed_query(self, text: str) -> np.ndarray: ...


@dataclass
class LLMResult:
    """The outcome of one structured call. ``data`` is set iff ``error`` is None.

    Runtimes classify every outcome into ``error`` instead of raising (see
    ``ramem_local.schemas.interpret``), so callers can retry, fall back, and count failures.
    """

    data: dict | None
    error: str | None  # "truncated" | "repetition" | "invalid_json" | "schema: ..." | exception
    finish_reason: str | None
    raw: str
    tokens_in: int
    tokens_out: int
    ms: float

    @property
    def ok(self) -> bool:
        return self.error is None

    def accounting(self, stage: str) -> LLMCall:
        """The per-call record kept in ``Trace.llm_calls`` and extraction reports."""
        return LLMCall(
            stage=stage,
            tokens_in=self.tokens_in,
            tokens_out=self.tokens_out,
            ms=round(self.ms, 2),
            error=self.error,
        )


@runtime_checkable
class LLM(Protocol):
    """What the stages need from a language model (``runtime.llama.LlamaRuntime`` is the real
    one): one schema-constrained JSON call that never raises, and a token count."""

    name: str

    def chat_json(
        self, messages: list[dict], schema: dict, *, max_tokens: int, temperature: float = 0.0,
        on_text: Callable[[str], None] | None = None,
    ) -> LLMResult:
        """``on_text``, when given, receives the reply's text piece by piece as it is
        generated (the result still holds all of it)."""
        ...

    def count_tokens(self, text: str) -> int: ...
