"""The ``bank`` fixture of the extraction tests, loaded as a plugin
(``pytest_plugins = ("chat_fixtures",)``) so that test modules need not import it."""

from __future__ import annotations

import pytest
from chat_sample import UTC, conversation

from ramem_local.api import Memory
from ramem_local.ingest.pipeline import ingest_conversations


@pytest.fixture
def bank(tmp_path, hashing_embedder):
    """A bank holding :func:`conversation` as turn memories."""
    memory = Memory.open(tmp_path / "b.db", embedder=hashing_embedder, timezone_name="UTC")
    ingest_conversations(memory.store, [conversation()], embedder=memory.embedder, tz=UTC)
    yield memory
    memory.close()
