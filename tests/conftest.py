"""Shared fixtures: the doubles of ramem_local.testing for unit tests, real-model locations
for integration tests."""

from __future__ import annotations

import os
import socket
from dataclasses import fields
from pathlib import Path

import pytest

from ramem_local.config import ENVIRONMENT, NO_DEFAULT_EMBEDDER
from ramem_local.testing import HashingEmbedder
from ramem_local.types import SearchDefaults
from tests.real_models import qwen_path, smollm_path

LOCOMO_DEV = Path(
    os.environ.get("RAMEM_LOCOMO_DEV")
    or Path(__file__).resolve().parents[1].parent / "shared/data/locomo/locomo_dev.json"
)


@pytest.fixture(autouse=True)
def no_user_search_settings(monkeypatch, tmp_path):
    """``Memory.open`` takes its search defaults from the user's settings (config file,
    RAMEM_K, ...): no test sees the developer's, and a test that wants some sets them."""
    for setting in fields(SearchDefaults):
        monkeypatch.delenv(ENVIRONMENT[setting.name], raising=False)
    monkeypatch.setenv("RAMEM_CONFIG", str(tmp_path / "no-user-config.json"))


@pytest.fixture(autouse=True)
def no_default_embedder(monkeypatch):
    """A new bank gets the default embedder (MiniLM, converted from its package on first use):
    not in tests, where a bank opened without one is a BM25 bank; the tests of the default
    set RAMEM_DEFAULT_EMBEDDER themselves."""
    monkeypatch.setenv("RAMEM_DEFAULT_EMBEDDER", NO_DEFAULT_EMBEDDER)


@pytest.fixture(autouse=True)
def no_user_key(monkeypatch):
    """No test sees the developer's bank key (RAMEM_KEY, RAMEM_KEY_FILE, RAMEM_NEW_KEY)."""
    for variable in ("RAMEM_KEY", "RAMEM_KEY_FILE", "RAMEM_NEW_KEY"):
        monkeypatch.delenv(variable, raising=False)


@pytest.fixture(scope="session")
def session_cache_dir(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("user-cache")


@pytest.fixture(autouse=True)
def no_user_cache(monkeypatch, session_cache_dir):
    """The user cache folder (model hashes, optimised ONNX graphs, llama.cpp checks) is the test
    session's own: no test reads the developer's or writes into it. One for the whole session,
    so MiniLM's optimised graph is built once; a test that needs an empty one sets its own."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(session_cache_dir))


@pytest.fixture
def hashing_embedder() -> HashingEmbedder:
    return HashingEmbedder()


def real_embedder_dir() -> Path | None:
    value = os.environ.get("RAMEM_TEST_EMBEDDER")
    return Path(value) if value and Path(value).is_dir() else None


def required_embedder_dir() -> Path:
    """The real MiniLM folder; the calling test is skipped without one."""
    folder = real_embedder_dir()
    if folder is None:
        pytest.skip("RAMEM_TEST_EMBEDDER is not set to the all-MiniLM-L6-v2 ONNX folder")
    return folder


@pytest.fixture
def minilm_dir() -> Path:
    return required_embedder_dir()


def journal_bank(path: Path, entries, chat=()) -> Path:
    """A US bank at ``path`` with the MiniLM embedder: ``entries`` (at, text) said by me,
    ``chat`` (at, speaker, text) in the conversation "assistant"."""
    from ramem_local import Memory

    with Memory.open(path, embedder=required_embedder_dir(), country="US") as memory:
        for at, text in entries:
            memory.add(text, at=at)
        for at, speaker, text in chat:
            memory.add(text, at=at, speaker=speaker, conversation="assistant")
    return path


def opened_journal(tmp_path_factory, name: str, entries, chat=()):
    """A journal bank of ``entries`` in a fresh folder, opened again as a user would: yields
    the open ``Memory`` (for a module-scoped fixture)."""
    from ramem_local import Memory

    with Memory.open(journal_bank(tmp_path_factory.mktemp(name) / "bank.db", entries,
                                  chat)) as memory:
        yield memory


# What ../shared holds and a clone elsewhere has not (the LoCoMo research data, the reference
# MiniLM export): its tests are skipped with this reason there, and required where
# RAMEM_REQUIRE_SHARED=1 (scripts/test.sh sets it when the data is there).
NOT_SHARED = "not in this checkout (../shared): "


@pytest.fixture
def locomo_dev() -> Path:
    if not LOCOMO_DEV.is_file():
        if os.environ.get("RAMEM_REQUIRE_SHARED") == "1":
            pytest.fail(f"LoCoMo dev split not found at {LOCOMO_DEV} (required here)")
        pytest.skip(f"{NOT_SHARED}the LoCoMo dev split ({LOCOMO_DEV})")
    return LOCOMO_DEV


@pytest.fixture
def reference_minilm_dir() -> Path:
    """The reference all-MiniLM-L6-v2 ONNX export (RAMEM_REFERENCE_EMBEDDER: ../shared's), which
    the converted model is checked against."""
    value = os.environ.get("RAMEM_REFERENCE_EMBEDDER")
    if not value or not (Path(value) / "model.onnx").is_file():
        if os.environ.get("RAMEM_REQUIRE_SHARED") == "1":
            pytest.fail("RAMEM_REFERENCE_EMBEDDER is not the reference MiniLM export "
                        "(required here)")
        pytest.skip(f"{NOT_SHARED}the reference MiniLM export")
    return Path(value)


def pytest_runtest_makereport(item, call):
    """In CI (RAMEM_REQUIRE_REAL_MODELS=1) a skipped real-model test is a failure."""
    from _pytest.runner import TestReport

    report = TestReport.from_item_and_call(item, call)
    reason = str(call.excinfo.value) if call.excinfo else ""
    if (
        os.environ.get("RAMEM_REQUIRE_REAL_MODELS") == "1"
        and report.skipped
        and item.get_closest_marker("real_model") is not None
        and not reason.startswith(NOT_SHARED)  # its own rule: RAMEM_REQUIRE_SHARED
    ):
        report.outcome = "failed"
        reason = call.excinfo.value if call.excinfo else ""
        report.longrepr = f"real-model test skipped in CI: {reason}"
    return report


@pytest.fixture(scope="session")
def smollm():
    """The real SmolLM2-135M GGUF (path in RAMEM_TEST_LLM), one thread, a small context."""
    from ramem_local.runtime.llama import LlamaRuntime

    # One thread: on a 2-core machine that runs other work, two threads slowed calls 2-10x.
    return LlamaRuntime(smollm_path(), n_ctx=2048, n_threads=1)


@pytest.fixture(scope="session")
def qwen():
    """The real Qwen2.5-Coder-0.5B GGUF (path in RAMEM_TEST_QWEN), loaded as the product loads
    it (``models.open_llm``: the registry's context and chat settings, the llama.cpp check in a
    child process), one thread for the reason ``smollm`` gives."""
    from ramem_local import models

    return models.open_llm(qwen_path(), n_threads=1)


class NetworkBlocked(AssertionError):
    """A test tried to use the network."""


@pytest.fixture
def no_network(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Socket creation and name lookups raise NetworkBlocked for the test; the returned list
    records every attempt."""
    attempts: list[str] = []

    def refuse(name: str):
        def blocked(*args, **kwargs):
            attempts.append(f"{name}{args[:2]}")
            raise NetworkBlocked(f"network use in a test: {name}{args[:2]}")
        return blocked

    class BlockedSocket(socket.socket):
        def __init__(self, *args, **kwargs):
            refuse("socket.socket")(*args, **kwargs)

    monkeypatch.setattr(socket, "socket", BlockedSocket)
    for name in ("create_connection", "getaddrinfo", "gethostbyname", "socketpair"):
        monkeypatch.setattr(socket, name, refuse(f"socket.{name}"))
    return attempts
