"""Test-only helpers around the public test doubles of :mod:`ramem_local.testing`.

Unit tests script the models with ``ramem_local.testing.ScriptedLLM`` and ``HashingEmbedder``;
integration tests use the real SmolLM2 GGUF and MiniLM ONNX models.
"""

from __future__ import annotations

from ramem_local.protocols import LLMResult


def truncated(raw: str = '{"entries": [{"content": "cut') -> LLMResult:
    """What a call that ran out of max_tokens looks like."""
    return LLMResult(None, "truncated", "length", raw, 100, 64, 1.0)
