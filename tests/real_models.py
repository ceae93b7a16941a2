"""Where the real-model tests find their models, or the skip that says what is missing."""

from __future__ import annotations

import os
from pathlib import Path

import pytest


def smollm_path() -> Path:
    """The SmolLM2-135M GGUF the real-model tests run (path in RAMEM_TEST_LLM)."""
    return _gguf("RAMEM_TEST_LLM", "SmolLM2-135M-Instruct.Q4_1.gguf")


def qwen_path() -> Path:
    """The Qwen2.5-Coder-0.5B-Instruct GGUF the answer-quality tests run (path in
    RAMEM_TEST_QWEN; ``scripts/test.sh`` joins it from its PyPI parts and sets it)."""
    return _gguf("RAMEM_TEST_QWEN", "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf")


def _gguf(variable: str, file_name: str) -> Path:
    """The GGUF file named by environment variable ``variable``, with llama-cpp-python to run
    it; else a skip saying which is missing."""
    value = os.environ.get(variable)
    if not value:
        pytest.skip(f"{variable} is not set (path to {file_name})")
    if not Path(value).is_file():
        pytest.skip(f"{variable}={value} does not exist")
    pytest.importorskip("llama_cpp", reason="llama-cpp-python is not installed")
    return Path(value)
