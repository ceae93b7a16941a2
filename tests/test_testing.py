"""The public test doubles (``ramem_local.testing``) as an application uses them: through
``Memory.open``, directly or by a name registered in the models facade."""

from __future__ import annotations

import numpy as np
import pytest
from click.testing import CliRunner

from ramem_local import LLM, Memory, models
from ramem_local.cli import cli
from ramem_local.testing import HashingEmbedder, ScriptedLLM


def test_the_hashing_embedder_is_deterministic_and_unit_length():
    first, second = HashingEmbedder(64), HashingEmbedder(64)
    vectors = first.embed_documents(["lunch at the harbour", "", "Lunch at the HARBOUR"])
    assert vectors.shape == (3, 64) and vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0)
    assert np.array_equal(vectors[0], second.embed_query("lunch at the harbour"))
    assert np.allclose(vectors[0], vectors[2])  # words are compared lower-cased
    assert first.embed_documents([]).shape == (0, 64)


def test_texts_sharing_words_are_closer_than_texts_sharing_none():
    embedder = HashingEmbedder(256)
    query = embedder.embed_query("sailing trip to the islands")
    near = embedder.embed_query("the sailing trip")
    far = embedder.embed_query("quarterly tax return")
    assert float(query @ near) > float(query @ far)


def test_the_fingerprint_depends_on_the_name_and_dimension_only():
    assert HashingEmbedder(32).fingerprint == HashingEmbedder(32).fingerprint
    assert HashingEmbedder(32).fingerprint != HashingEmbedder(16).fingerprint
    assert HashingEmbedder(32, name="other").fingerprint.name == "other"
    with pytest.raises(ValueError):
        HashingEmbedder(0)


def test_the_scripted_llm_has_the_llm_protocol_and_checks_replies_against_the_schema():
    schema = {"type": "object", "properties": {"answer": {"type": "string"}},
              "required": ["answer"]}
    llm = ScriptedLLM([{"answer": "yes"}, {"wrong": 1}, "not json"])
    assert isinstance(llm, LLM)
    assert llm.chat_json([], schema, max_tokens=10).data == {"answer": "yes"}
    assert llm.chat_json([], schema, max_tokens=10).error.startswith("schema: ")
    assert llm.chat_json([], schema, max_tokens=10).error == "invalid_json"
    assert len(llm.calls) == 3
    with pytest.raises(AssertionError, match="ran out"):
        llm.chat_json([], schema, max_tokens=10)


def test_a_bank_built_with_a_registered_embedder_reopens_with_it_by_name(tmp_path):
    bank = tmp_path / "bank.db"
    with models.registered_embedder("hashing", HashingEmbedder):
        with Memory.open(bank, embedder="hashing") as memory:
            memory.add("Sailing with Lena around the islands", at="2024-05-03 12:00")
            memory.add("Filed the quarterly tax return", at="2024-05-04 09:00")
        with Memory.open(bank) as memory:  # the recorded name opens the embedder again
            assert memory.embedder is not None and not memory.warnings
            top = memory.search("sailing islands", k=1).results
            assert "Sailing" in top[0].memory.content
    with Memory.open(bank) as memory:  # no longer registered: BM25 only, and said so
        assert memory.embedder is None and memory.warnings


def test_the_cli_opens_a_registered_embedder_by_its_name(tmp_path):
    runner = CliRunner()
    with models.registered_embedder("hashing", HashingEmbedder):
        added = runner.invoke(cli, ["--db", str(tmp_path / "b.db"), "--embedder", "hashing",
                                    "add", "Sailing with Lena", "--at", "2024-05-03"])
        assert added.exit_code == 0, added.output
        stats = runner.invoke(cli, ["--db", str(tmp_path / "b.db"), "stats", "--json"])
    assert stats.exit_code == 0, stats.output
    assert '"vectors": 1' in stats.output
