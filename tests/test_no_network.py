"""ramem never opens a network connection: ingest, search and ask run with socket creation
blocked for the whole process (the embedder from RAMEM_TEST_EMBEDDER and the LLM from
RAMEM_TEST_LLM when set; without them ingest and search run on BM25 and ask is skipped)."""

from __future__ import annotations

import json
import os
import socket
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import NetworkBlocked, real_embedder_dir
from samples import JSONL_TURNS

from ramem_local.cli import cli


def test_the_block_works(no_network):
    with pytest.raises(NetworkBlocked):
        socket.create_connection(("example.invalid", 80))
    with pytest.raises(NetworkBlocked):
        socket.socket()
    assert len(no_network) == 2


def ingested_bank(tmp_path: Path) -> list[str]:
    source = tmp_path / "chat.jsonl"
    source.write_text("\n".join(json.dumps(row) for row in JSONL_TURNS) + "\n")
    common = ["--db", str(tmp_path / "bank.db")]
    embedder = real_embedder_dir()
    first = common + (["--embedder", str(embedder)] if embedder else [])
    ingest = CliRunner().invoke(cli, [*first, "ingest", str(source)])
    assert ingest.exit_code == 0, ingest.output
    return common


def test_ingest_and_search_open_no_socket(tmp_path, no_network):
    common = ingested_bank(tmp_path)
    found = CliRunner().invoke(cli, [*common, "search", "What is the cat called?", "--json"])
    assert found.exit_code == 0, found.output
    assert any("Pixel" in r["content"] for r in json.loads(found.stdout)["results"])
    assert no_network == []


def test_ask_with_the_local_llm_opens_no_socket(tmp_path, no_network):
    llm = os.environ.get("RAMEM_TEST_LLM")
    if not (llm and Path(llm).is_file()):
        pytest.skip("RAMEM_TEST_LLM is not set to the SmolLM2 GGUF")
    common = ingested_bank(tmp_path)
    asked = CliRunner().invoke(cli, [*common, "--llm", llm, "--llm-threads", "1", "ask",
                                     "What is the cat called?", "--json"])
    assert asked.exit_code == 0, asked.output
    assert json.loads(asked.stdout)
    assert no_network == []
