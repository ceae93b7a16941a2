"""Where the real-model tests find their models, or the skip that says what is missing."""

from __future__ import annotations

import os
from pathlib import Path

import pytest


def smollm_path() -> Path:
    """The SmolLM2-135M GGUF the real-model tests run (path in RAMEM_TEST_LLM)."""
    value = os.environ.get("RAMEM_TEST_LLM")
    if not value:
        pytest.skip("RAMEM_TEST_LLM is not set (path to SmolLM2-135M-Instruct.Q4_1.gguf)")
    if not Path(value).is_file():
        pytest.skip(f"RAMEM_TEST_LLM={value} does not exist")
    pytest.importorskip("llama_cpp", reason="llama-cpp-python is not installed")
    return Path(value)
