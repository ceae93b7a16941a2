"""The user cache of what a one-off search would otherwise compute again: the model file's SHA-256
(remembered per version of the file) and the graph onnxruntime optimised (kept beside it).

A tiny encoder built here (an embedding table, a MatMul + bias + ReLU, mean pooling) stands for a
model: big enough that onnxruntime writes its weights to the external file and prepacks the
MatMul, small enough to build in milliseconds; the real MiniLM checks that a cached graph
embeds exactly as the model file does. Each test gets an empty cache folder.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import numpy as np
import pytest

from ramem_local import Memory
from ramem_local.runtime import optimized_graph, registry
from ramem_local.runtime.embedder import OnnxEmbedder, spec_from_folder
from ramem_local.runtime.registry import cache_dir, file_sha256, sha256_file
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


def _entries() -> dict[str, dict]:
    """The graph cache's entries: folder name -> manifest."""
    root = cache_dir() / optimized_graph.GRAPHS_FOLDER
    if not root.is_dir():
        return {}
    return {folder.name: json.loads((folder / optimized_graph.MANIFEST_FILE).read_text())
            for folder in root.iterdir() if not folder.name.startswith(".")}


def _no_model_file_session(monkeypatch) -> None:
    """From here on, a session built from a model file (not from a cached graph) fails."""
    def refuse(*args, **kwargs):
        raise AssertionError("a session was built from the model file")
    monkeypatch.setattr(optimized_graph, "_session", refuse)


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


# --------------------------------------------------------------------------- the optimised graph


def test_the_second_session_comes_from_the_cached_graph(model_folder: Path, monkeypatch) -> None:
    first = _embedder(model_folder)
    (key, manifest), = _entries().items()
    assert manifest["usable"] is True and manifest["max_difference"] <= optimized_graph.TOLERANCE
    assert manifest["source"] == str((model_folder / "model.onnx").resolve())
    entry = cache_dir() / optimized_graph.GRAPHS_FOLDER / key
    assert (entry / optimized_graph.WEIGHTS_FILE).stat().st_size >= HIDDEN * HIDDEN * 4
    _no_model_file_session(monkeypatch)
    second = _embedder(model_folder)
    np.testing.assert_array_equal(second.embed_documents(TEXTS), first.embed_documents(TEXTS))
    np.testing.assert_allclose(second.embed_documents(TEXTS),
                               [_expected(text, seed=1) for text in TEXTS], rtol=1e-5, atol=1e-5)


def test_a_changed_model_never_runs_its_old_graph(model_folder: Path) -> None:
    _embedder(model_folder)
    (old_key, _), = _entries().items()
    _write_model(model_folder, seed=2)  # new weights under the same path
    changed = _embedder(model_folder)
    np.testing.assert_allclose(changed.embed_documents(TEXTS),
                               [_expected(text, seed=2) for text in TEXTS], rtol=1e-5, atol=1e-5)
    (new_key, manifest), = _entries().items()  # the old entry is gone
    assert new_key != old_key and manifest["usable"] is True


def test_an_external_weights_file_beside_the_model_is_part_of_the_key(model_folder: Path) -> None:
    """model.onnx may only name the file that holds its weights: a change there is a new key."""
    before = optimized_graph.entry_key(model_folder / "model.onnx")
    (model_folder / "model.onnx_data").write_bytes(b"weights")
    assert optimized_graph.entry_key(model_folder / "model.onnx") != before


def test_a_damaged_entry_is_built_again(model_folder: Path) -> None:
    _embedder(model_folder)
    (key, _), = _entries().items()
    (cache_dir() / optimized_graph.GRAPHS_FOLDER / key / optimized_graph.GRAPH_FILE).write_bytes(
        b"not a graph")
    again = _embedder(model_folder)
    np.testing.assert_allclose(again.embed_documents(TEXTS),
                               [_expected(text, seed=1) for text in TEXTS], rtol=1e-5, atol=1e-5)
    assert _entries()[key]["usable"] is True


def test_a_graph_that_fails_its_check_is_not_kept_nor_built_again(model_folder: Path,
                                                                    monkeypatch) -> None:
    monkeypatch.setattr(optimized_graph, "TOLERANCE", -1.0)  # no difference is small enough
    _embedder(model_folder)
    (key, manifest), = _entries().items()
    assert manifest["usable"] is False
    entry = cache_dir() / optimized_graph.GRAPHS_FOLDER / key
    assert sorted(path.name for path in entry.iterdir()) == [optimized_graph.MANIFEST_FILE]
    saves = []
    plain = optimized_graph._session
    monkeypatch.setattr(optimized_graph, "_session",
                        lambda path, threads, save_to=None: saves.append(save_to) or plain(
                            path, threads, save_to))
    again = _embedder(model_folder)
    assert saves == [None]  # from the model file, nothing saved
    np.testing.assert_allclose(again.embed_documents(TEXTS),
                               [_expected(text, seed=1) for text in TEXTS], rtol=1e-5, atol=1e-5)


def test_a_cache_that_cannot_be_written_only_costs_the_time(model_folder: Path, tmp_path: Path,
                                                            monkeypatch) -> None:
    blocked = tmp_path / "blocked"
    blocked.write_text("")  # a file where the cache folder would go
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocked))
    embedder = _embedder(model_folder)
    np.testing.assert_allclose(embedder.embed_documents(TEXTS),
                               [_expected(text, seed=1) for text in TEXTS], rtol=1e-5, atol=1e-5)
    assert embedder.fingerprint.sha256 == sha256_file(model_folder / "model.onnx")


def test_a_model_above_the_size_limit_is_not_cached(model_folder: Path, monkeypatch) -> None:
    monkeypatch.setattr(optimized_graph, "MAX_MODEL_BYTES", 1000)  # the tiny model is larger
    embedder = _embedder(model_folder)
    assert _entries() == {}
    np.testing.assert_allclose(embedder.embed_documents(TEXTS),
                               [_expected(text, seed=1) for text in TEXTS], rtol=1e-5, atol=1e-5)


def test_an_entry_without_its_manifest_is_built_again(model_folder: Path) -> None:
    _embedder(model_folder)
    (key, _), = _entries().items()
    (cache_dir() / optimized_graph.GRAPHS_FOLDER / key / optimized_graph.MANIFEST_FILE).unlink()
    _embedder(model_folder)
    assert _entries()[key]["usable"] is True


def test_entries_of_models_that_are_gone_are_removed(model_folder: Path, tmp_path: Path) -> None:
    other = tmp_path / "other-encoder"
    other.mkdir()
    for name in ("model.onnx", "tokenizer.json"):
        (other / name).write_bytes((model_folder / name).read_bytes())
    _embedder(other)
    assert len(_entries()) == 1
    for path in other.iterdir():
        path.unlink()
    other.rmdir()
    _embedder(model_folder)  # writing its entry removes the other's
    assert [manifest["source"] for manifest in _entries().values()] == [
        str((model_folder / "model.onnx").resolve())]


@pytest.mark.real_model
def test_minilm_embeds_the_same_from_its_cached_graph(minilm_dir: Path, monkeypatch) -> None:
    """The saved graph runs the kernels the model file's session runs: the same vectors."""
    texts = ["Where did I go hiking in May?", "Went hiking at Eagle Ridge with Ana.", "ok",
             "Baked bread for the first time, and it came out dense but edible. " * 8]
    spec = spec_from_folder(minilm_dir, registry_entry={"pooling": "mean", "max_length": 256})
    direct = OnnxEmbedder(spec, threads=1)
    _no_model_file_session(monkeypatch)
    cached = OnnxEmbedder(spec, threads=1)
    got, expected = cached.embed_documents(texts), direct.embed_documents(texts)
    assert float(np.max(np.abs(got - expected))) <= 1e-6
    assert cached.fingerprint == direct.fingerprint
