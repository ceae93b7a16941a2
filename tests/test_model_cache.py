"""The user cache of what a one-off search would otherwise compute again: the model file's SHA-256
(remembered per version of the file).

A tiny encoder built here (an embedding table, a MatMul + bias + ReLU, mean pooling) stands for a
model. Each test gets an empty cache folder.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import numpy as np
import pytest

from ramem_local import Memory
from ramem_local.runtime import registry
from ramem_local.runtime.embedder import OnnxEmbedder, spec_from_folder
from ramem_local.runtime.registry import file_sha256, sha256_file
from ramem_local.store import StoreError

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402
from tokenizers import Tokenizer, models, pre_tokenizers  # noqa: E402

WORDS = ["[PAD]", "[UNK]", "hike", "ridge", "may", "bread", "bike", "brake", "view", "ana"]
VOCAB = {word: index for index, word in enumerate(WORDS)}
HIDDEN = 32  # the table (10 x 32 floats) and the weights exceed the 1024-byte external threshold
ENTRY = {"pooling": "mean", "max_length": 16, "normalize": False}
TEXTS = ["hike ridge may", "bread", "bike brake view ana hike"]


@pytest.fixture(autouse=True)
def empty_cache(monkeypatch, tmp_path: Path) -> Path:
    """An empty user cache per test, and no digest remembered by this process."""
    folder = tmp_path / "cache-home"
    monkeypatch.setenv("XDG_CACHE_HOME", str(folder))
    registry._remembered_sha256.cache_clear()
    yield folder
    registry._remembered_sha256.cache_clear()


def _weights(seed: int) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    return {"table": rng.normal(size=(len(WORDS), HIDDEN)).astype(np.float32),
            "w": rng.normal(size=(HIDDEN, HIDDEN)).astype(np.float32),
            "b": rng.normal(size=(HIDDEN,)).astype(np.float32)}


def _write_model(folder: Path, seed: int) -> None:
    """last_hidden_state = relu(table[ids] @ w + b); the mask is only used by the pooling."""
    weights = _weights(seed)
    seq = ["batch", "seq"]
    graph = helper.make_graph(
        [helper.make_node("Gather", ["table", "input_ids"], ["embedded"]),
         helper.make_node("MatMul", ["embedded", "w"], ["projected"]),
         helper.make_node("Add", ["projected", "b"], ["biased"]),
         helper.make_node("Relu", ["biased"], ["last_hidden_state"])],
        "tiny_encoder",
        [helper.make_tensor_value_info(name, TensorProto.INT64, seq)
         for name in ("input_ids", "attention_mask")],
        [helper.make_tensor_value_info("last_hidden_state", TensorProto.FLOAT,
                                       ["batch", "seq", HIDDEN])],
        [numpy_helper.from_array(value, name) for name, value in weights.items()])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    folder.mkdir(parents=True, exist_ok=True)
    onnx.save(model, str(folder / "model.onnx"))


def _expected(text: str, seed: int) -> np.ndarray:
    """The tiny encoder's mean-pooled vector, computed here in numpy."""
    weights = _weights(seed)
    ids = [VOCAB.get(word, VOCAB["[UNK]"]) for word in text.split()]
    hidden = np.maximum(weights["table"][ids] @ weights["w"] + weights["b"], 0)
    return hidden.mean(axis=0)


@pytest.fixture
def model_folder(tmp_path: Path) -> Path:
    folder = tmp_path / "tiny-encoder"
    _write_model(folder, seed=1)
    tokenizer = Tokenizer(models.WordLevel(vocab=VOCAB, unk_token="[UNK]"))
    tokenizer.pre_tokenizer = pre_tokenizers.Whitespace()
    tokenizer.save(str(folder / "tokenizer.json"))
    return folder


def _embedder(folder: Path) -> OnnxEmbedder:
    return OnnxEmbedder(spec_from_folder(folder, registry_entry=ENTRY), threads=1)


# --------------------------------------------------------------------------- the model's SHA-256


def _same_size_edit(path: Path, at: int = -1) -> None:
    """Flip the low bit of the byte at ``at`` and put the old mtime back: only the ctime
    tells."""
    before = path.stat()
    data = bytearray(path.read_bytes())
    data[at] ^= 0x01
    path.write_bytes(bytes(data))
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert path.stat().st_size == before.st_size and path.stat().st_mtime_ns == before.st_mtime_ns


def test_a_digest_is_remembered_for_the_next_process(tmp_path: Path, monkeypatch) -> None:
    path = tmp_path / "weights.bin"
    path.write_bytes(os.urandom(3 << 20))
    expected = hashlib.sha256(path.read_bytes()).hexdigest()
    assert file_sha256(path) == expected
    registry._remembered_sha256.cache_clear()  # as a new process starts

    def unread(_path: Path) -> str:
        raise AssertionError("the file was hashed again")

    monkeypatch.setattr(registry, "sha256_file", unread)
    assert file_sha256(tmp_path / "." / "weights.bin") == expected  # resolved to the same key


def test_a_changed_file_is_hashed_again(tmp_path: Path) -> None:
    path = tmp_path / "weights.bin"
    path.write_bytes(os.urandom(1 << 16))
    first = file_sha256(path)
    _same_size_edit(path)
    registry._remembered_sha256.cache_clear()
    assert file_sha256(path) == hashlib.sha256(path.read_bytes()).hexdigest() != first
    replacement = tmp_path / "new.bin"
    replacement.write_bytes(os.urandom(1 << 16))
    os.replace(replacement, path)  # another inode under the same name
    assert file_sha256(path) == hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.mark.parametrize("damage", ["not a folder", "not json", "foreign json"])
def test_a_cache_that_cannot_be_used_costs_only_the_hash(tmp_path: Path, monkeypatch,
                                                         damage: str) -> None:
    home = tmp_path / "home-cache"
    if damage == "not a folder":  # nothing can be created under a file, even by root
        home.write_text("")
    else:
        (home / "ramem").mkdir(parents=True)
        (home / "ramem" / registry.HASH_CACHE_NAME).write_text(
            "{" if damage == "not json" else '{"files": ["x"]}')
    monkeypatch.setenv("XDG_CACHE_HOME", str(home))
    path = tmp_path / "weights.bin"
    path.write_bytes(b"weights")
    for _ in range(2):
        registry._remembered_sha256.cache_clear()
        assert file_sha256(path) == sha256_file(path)
    if damage != "not a folder":  # rewritten whole
        saved = json.loads((home / "ramem" / registry.HASH_CACHE_NAME).read_text())
        assert saved["files"][str(path.resolve())]["sha256"] == sha256_file(path)


def test_a_bank_still_refuses_the_model_file_once_it_changed(model_folder: Path,
                                                             tmp_path: Path) -> None:
    """The digest the bank recorded is remembered for this path; the file then changes (same
    size, same mtime): the new digest is computed and the bank refuses the model."""
    bank = tmp_path / "bank.db"
    with Memory.open(bank, embedder=_embedder(model_folder)) as memory:
        memory.add("hike ridge may", at="2024-05-04")
    model = model_folder / "model.onnx"
    bias = model.read_bytes().find(_weights(seed=1)["b"].tobytes())
    _same_size_edit(model, at=bias)  # the lowest bit of the first bias value
    registry._remembered_sha256.cache_clear()
    changed = _embedder(model_folder)
    assert changed.fingerprint.sha256 == sha256_file(model_folder / "model.onnx")
    with pytest.raises(StoreError, match="reindex"):
        Memory.open(bank, embedder=changed)
