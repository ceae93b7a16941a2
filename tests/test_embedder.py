"""Tests for the generic ONNX embedder.

Three layers: pure pooling/feeding functions against numpy references; tiny ONNX graphs built here
(a decoder-shaped one that demands position_ids and an empty KV cache, an encoder-shaped one with a
pooled output) plus a tiny WordLevel tokenizer; and the real MiniLM export when RAMEM_TEST_EMBEDDER
points at it.
"""

from __future__ import annotations

import json
import os
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from ramem_local.runtime.embedder import (
    EmbedderError,
    EmbedderSpec,
    InputMeta,
    OnnxEmbedder,
    build_feeds,
    empty_past,
    pool,
    position_ids,
    postprocess,
    spec_from_folder,
)
from ramem_local.types import EmbedderFingerprint

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402
from tokenizers import Tokenizer, models, pre_tokenizers, processors  # noqa: E402

HIDDEN = 8
WORDS = ["q", "alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta", "iota"]
SPECIALS = ["[PAD]", "[UNK]", "[EOS]"]
VOCAB = {tok: i for i, tok in enumerate(SPECIALS + WORDS)}
EOS = VOCAB["[EOS]"]
MAX_POS = 32


# --------------------------------------------------------------------------- pure functions


def _right_padded() -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    hidden = rng.normal(size=(3, 5, 6)).astype(np.float32)
    mask = np.array([[1, 1, 1, 1, 1], [1, 1, 1, 0, 0], [1, 0, 0, 0, 0]], dtype=np.int64)
    return hidden, mask


def _left_padded() -> tuple[np.ndarray, np.ndarray]:
    hidden, mask = _right_padded()
    return hidden, mask[:, ::-1].copy()


def _reference(hidden: np.ndarray, mask: np.ndarray, mode: str) -> np.ndarray:
    """Loop-per-row reference, deliberately written differently from the vectorised code."""
    rows = []
    for h, m in zip(hidden, mask, strict=True):
        real = [i for i, v in enumerate(m) if v == 1]
        if mode == "mean":
            rows.append(np.mean([h[i] for i in real], axis=0))
        elif mode == "cls":
            rows.append(h[0])
        else:
            rows.append(h[real[-1]])
    return np.array(rows, dtype=np.float32)


@pytest.mark.parametrize("padding", [_right_padded, _left_padded], ids=["right", "left"])
@pytest.mark.parametrize("mode", ["mean", "cls", "last_token"])
def test_pool_matches_reference(mode: str, padding) -> None:
    hidden, mask = padding()
    got = pool(hidden, mask, mode)
    assert got.dtype == np.float32 and got.shape == (3, 6)
    np.testing.assert_allclose(got, _reference(hidden, mask, mode), rtol=1e-6, atol=1e-6)


def test_pool_ignores_padding_values() -> None:
    hidden, mask = _right_padded()
    noisy = hidden.copy()
    noisy[mask == 0] = 1e6
    for mode in ("mean", "last_token"):
        np.testing.assert_allclose(pool(noisy, mask, mode), pool(hidden, mask, mode), atol=1e-6)


def test_pool_rejects_unknown_mode() -> None:
    hidden, mask = _right_padded()
    with pytest.raises(EmbedderError, match="unknown pooling 'max'"):
        pool(hidden, mask, "max")


def test_postprocess_normalises_and_truncates_before_normalising() -> None:
    vectors = np.array([[3.0, 4.0, 12.0], [0.0, 0.0, 0.0]], dtype=np.float32)
    unit = postprocess(vectors, None, True)
    np.testing.assert_allclose(unit[0], [3 / 13, 4 / 13, 12 / 13], rtol=1e-6)
    assert np.all(np.isfinite(unit[1])) and not unit[1].any()  # zero vector stays zero, no NaN
    cut = postprocess(vectors, 2, True)
    np.testing.assert_allclose(cut[0], [0.6, 0.8], rtol=1e-6)  # not the first 2 of `unit`
    raw = postprocess(vectors, 2, False)
    np.testing.assert_array_equal(raw, vectors[:, :2])
    assert cut.dtype == np.float32 and cut.flags["C_CONTIGUOUS"]


def test_position_ids_right_and_left_padding() -> None:
    np.testing.assert_array_equal(
        position_ids(np.array([[1, 1, 1, 0], [0, 0, 1, 1]])), [[0, 1, 2, 2], [0, 0, 0, 1]]
    )


def test_build_feeds_supplies_declared_inputs_with_declared_dtypes() -> None:
    inputs = [
        InputMeta("input_ids", "tensor(int64)", ("batch", "seq")),
        InputMeta("attention_mask", "tensor(int32)", ("batch", "seq")),
        InputMeta("token_type_ids", "tensor(int64)", ("batch", "seq")),
        InputMeta("position_ids", "tensor(int64)", ("batch", "seq")),
        InputMeta("past_key_values.0.key", "tensor(float16)", ("batch", 2, "past_sequence", 4)),
    ]
    ids = np.array([[5, 6, 7], [5, 0, 0]], dtype=np.int64)
    mask = np.array([[1, 1, 1], [1, 0, 0]], dtype=np.int64)
    feeds = build_feeds(inputs, ids, mask)
    assert feeds["attention_mask"].dtype == np.int32
    assert not feeds["token_type_ids"].any() and feeds["token_type_ids"].shape == (2, 3)
    np.testing.assert_array_equal(feeds["position_ids"], [[0, 1, 2], [0, 0, 0]])
    past = feeds["past_key_values.0.key"]
    assert past.shape == (2, 2, 0, 4) and past.dtype == np.float16


def test_build_feeds_names_unknown_inputs() -> None:
    inputs = [InputMeta("input_ids", "tensor(int64)", ("b", "s")),
              InputMeta("pixel_values", "tensor(float)", ("b", 3)),
              InputMeta("num_logits_to_keep", "tensor(int64)", ())]
    ones = np.ones((1, 1), np.int64)
    with pytest.raises(EmbedderError, match="pixel_values, num_logits_to_keep"):
        build_feeds(inputs, ones, ones)


def test_empty_past_sizes_symbolic_head_dims_from_config_hints() -> None:
    meta = InputMeta("past_key_values.3.value", "tensor(float)",
                     ("batch_size", "num_key_value_heads", "past_sequence_length", "head_dim"))
    past = empty_past(meta, 5, {"num_heads": 8, "head_dim": 128})
    assert past.shape == (5, 8, 0, 128)
    with pytest.raises(EmbedderError, match="cannot size symbolic dimension 'num_key_value_heads'"):
        empty_past(meta, 5, {})


# --------------------------------------------------------------------------- tiny models


def _tables() -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(42)
    tok = rng.normal(size=(len(VOCAB), HIDDEN)).astype(np.float32)
    pos = rng.normal(size=(MAX_POS, HIDDEN)).astype(np.float32)
    return tok, pos


def _save_model(graph: onnx.GraphProto, path: Path) -> None:
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    path.parent.mkdir(parents=True, exist_ok=True)
    onnx.save(model, str(path))


def _decoder_graph() -> onnx.GraphProto:
    """hidden = (tok[ids] + pos[position_ids] + sum(past) + past_len) * mask.

    ``sum(past) + past_len`` is 0 only for an EMPTY past, so a wrongly shaped cache shows up in
    the numbers; a 4-D ``present`` and a 3-D ``logits`` output come first so that output
    selection has to prefer ``last_hidden_state``.
    """
    tok, pos = _tables()
    seq = ["batch", "seq"]
    inputs = [
        helper.make_tensor_value_info("input_ids", TensorProto.INT64, seq),
        helper.make_tensor_value_info("attention_mask", TensorProto.INT64, seq),
        helper.make_tensor_value_info("position_ids", TensorProto.INT64, seq),
        helper.make_tensor_value_info(
            "past_key_values.0.key", TensorProto.FLOAT, ["batch", 2, "past_sequence_length", 4]
        ),
    ]
    outputs = [
        helper.make_tensor_value_info(
            "present.0.key", TensorProto.FLOAT, ["batch", 2, "total_sequence_length", 4]
        ),
        helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["batch", "seq", HIDDEN]),
        helper.make_tensor_value_info("last_hidden_state", TensorProto.FLOAT,
                                      ["batch", "seq", HIDDEN]),
    ]
    inits = [
        numpy_helper.from_array(tok, "tok_emb"),
        numpy_helper.from_array(pos, "pos_emb"),
        numpy_helper.from_array(np.array(2, dtype=np.int64), "two"),
        numpy_helper.from_array(np.array([2], dtype=np.int64), "axis2"),
    ]
    nodes = [
        helper.make_node("Gather", ["tok_emb", "input_ids"], ["t"]),
        helper.make_node("Gather", ["pos_emb", "position_ids"], ["p"]),
        helper.make_node("Add", ["t", "p"], ["tp"]),
        helper.make_node("ReduceSum", ["past_key_values.0.key"], ["past_sum"], keepdims=0),
        helper.make_node("Shape", ["past_key_values.0.key"], ["past_shape"]),
        helper.make_node("Gather", ["past_shape", "two"], ["past_len"]),
        helper.make_node("Cast", ["past_len"], ["past_len_f"], to=TensorProto.FLOAT),
        helper.make_node("Add", ["tp", "past_sum"], ["a1"]),
        helper.make_node("Add", ["a1", "past_len_f"], ["a2"]),
        helper.make_node("Cast", ["attention_mask"], ["mask_f"], to=TensorProto.FLOAT),
        helper.make_node("Unsqueeze", ["mask_f", "axis2"], ["mask_3d"]),
        helper.make_node("Mul", ["a2", "mask_3d"], ["last_hidden_state"]),
        helper.make_node("Identity", ["past_key_values.0.key"], ["present.0.key"]),
        helper.make_node("Neg", ["tp"], ["logits"]),
    ]
    return helper.make_graph(nodes, "tiny_decoder", inputs, outputs, inits)


def _pooled_encoder_graph(extra_input: str | None = None) -> onnx.GraphProto:
    """sentence_embedding = sum over real tokens of tok[ids] + type[token_type_ids] ([batch, H]).

    ``type[1]`` is huge, so anything but all-zero token_type_ids is visible.
    """
    tok, _ = _tables()
    types = np.zeros((2, HIDDEN), np.float32)
    types[1] = 1000.0
    seq = ["batch", "seq"]
    inputs = [
        helper.make_tensor_value_info(n, TensorProto.INT64, seq)
        for n in ("input_ids", "attention_mask", "token_type_ids")
    ]
    if extra_input:
        inputs.append(helper.make_tensor_value_info(extra_input, TensorProto.FLOAT, ["batch"]))
    outputs = [helper.make_tensor_value_info("sentence_embedding", TensorProto.FLOAT,
                                             ["batch", HIDDEN])]
    inits = [
        numpy_helper.from_array(tok, "tok_emb"),
        numpy_helper.from_array(types, "type_emb"),
        numpy_helper.from_array(np.array([2], dtype=np.int64), "axis2"),
        numpy_helper.from_array(np.array([1], dtype=np.int64), "axis1"),
    ]
    nodes = [
        helper.make_node("Gather", ["tok_emb", "input_ids"], ["t"]),
        helper.make_node("Gather", ["type_emb", "token_type_ids"], ["ty"]),
        helper.make_node("Add", ["t", "ty"], ["h"]),
        helper.make_node("Cast", ["attention_mask"], ["mask_f"], to=TensorProto.FLOAT),
        helper.make_node("Unsqueeze", ["mask_f", "axis2"], ["mask_3d"]),
        helper.make_node("Mul", ["h", "mask_3d"], ["hm"]),
        helper.make_node("ReduceSum", ["hm", "axis1"], ["sentence_embedding"], keepdims=0),
    ]
    return helper.make_graph(nodes, "tiny_encoder", inputs, outputs, inits)


def _save_tokenizer(path: Path) -> None:
    """WordLevel tokenizer appending [EOS]; it ships truncation 4 and FIXED padding 16, the same
    trap as the real MiniLM tokenizer.json, so the embedder must override both."""
    tokenizer = Tokenizer(models.WordLevel(vocab=VOCAB, unk_token="[UNK]"))
    tokenizer.pre_tokenizer = pre_tokenizers.Whitespace()
    tokenizer.post_processor = processors.TemplateProcessing(
        single="$A [EOS]", special_tokens=[("[EOS]", EOS)]
    )
    tokenizer.enable_truncation(max_length=4)
    tokenizer.enable_padding(pad_id=0, pad_token="[PAD]", length=16)
    tokenizer.save(str(path))


def _tiny_folder(root: Path, graph: onnx.GraphProto) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    _save_model(graph, root / "model.onnx")
    _save_tokenizer(root / "tokenizer.json")
    return root


@pytest.fixture
def decoder_dir(tmp_path: Path) -> Path:
    return _tiny_folder(tmp_path / "tiny-decoder", _decoder_graph())


def _decoder_spec(folder: Path, **overrides) -> EmbedderSpec:
    entry = {"pooling": "last_token", "max_length": 8, "normalize": False}
    return replace(spec_from_folder(folder, registry_entry=entry), **overrides)


def _token_ids(text: str, max_length: int) -> list[int]:
    ids = [VOCAB.get(w, VOCAB["[UNK]"]) for w in text.split()][: max_length - 1]
    return ids + [EOS]


def _numpy_decoder(text: str, mode: str, max_length: int = 8) -> np.ndarray:
    """What the tiny decoder + pooling should give for one unpadded text."""
    tok, pos = _tables()
    ids = _token_ids(text, max_length)
    hidden = tok[ids] + pos[np.arange(len(ids))]
    return hidden[-1] if mode == "last_token" else hidden.mean(axis=0)


TEXTS = [
    "alpha beta gamma delta",
    "",
    "beta",
    "gamma delta epsilon zeta eta theta iota alpha beta gamma",  # longer than max_length
    "zeta eta",
    "unknownword alpha",
    "iota theta eta zeta epsilon",
]


class _SpySession:
    """Records what the embedder feeds to the real session."""

    def __init__(self, session) -> None:
        self._session = session
        self.feeds: list[dict[str, np.ndarray]] = []

    def run(self, output_names, feeds):
        self.feeds.append(feeds)
        return self._session.run(output_names, feeds)


def test_decoder_gets_position_ids_and_empty_past(decoder_dir: Path) -> None:
    embedder = OnnxEmbedder(_decoder_spec(decoder_dir), threads=1)
    spy = _SpySession(embedder._session)
    embedder._session = spy
    embedder.embed_documents(["alpha beta gamma", "beta"])
    (feeds,) = spy.feeds
    assert set(feeds) == {"input_ids", "attention_mask", "position_ids", "past_key_values.0.key"}
    # padded to the longest in the batch (4 tokens), not the tokenizer's shipped fixed 16
    assert feeds["input_ids"].shape == (2, 4)
    # sorted by length: "beta" (+ [EOS]) comes first, right-padded
    np.testing.assert_array_equal(feeds["attention_mask"], [[1, 1, 0, 0], [1, 1, 1, 1]])
    np.testing.assert_array_equal(feeds["position_ids"], [[0, 1, 1, 1], [0, 1, 2, 3]])
    past = feeds["past_key_values.0.key"]
    assert past.shape == (2, 2, 0, 4) and past.dtype == np.float32


def test_batches_group_texts_by_token_count_not_characters(decoder_dir: Path) -> None:
    # The longest text in characters is one unknown token, the second shortest is four
    # tokens: sorted by tokens each batch holds texts of one length, padded to nothing.
    embedder = OnnxEmbedder(_decoder_spec(decoder_dir), threads=1, batch_size=2)
    spy = _SpySession(embedder._session)
    embedder._session = spy
    texts = ["unknownwordunknownwordunknown", "eta eta eta eta", "beta", "zeta eta theta iota"]
    embedder.embed_documents(texts)
    lengths = [f["attention_mask"].sum(axis=1).tolist() for f in spy.feeds]
    assert lengths == [[2, 2], [5, 5]]  # with [EOS]; by characters: [[2, 5], [5, 2]]
    assert [f["input_ids"].shape[1] for f in spy.feeds] == [2, 5]


def test_pad_batch_pads_on_the_right() -> None:
    from ramem_local.runtime.embedder import pad_batch

    ids, mask = pad_batch([[5, 6, 7], [8]], pad_id=0)
    np.testing.assert_array_equal(ids, [[5, 6, 7], [8, 0, 0]])
    np.testing.assert_array_equal(mask, [[1, 1, 1], [1, 0, 0]])
    assert ids.dtype == mask.dtype == np.int64
    assert pad_batch([], pad_id=0)[0].shape == (0, 0)


@pytest.mark.parametrize("mode", ["last_token", "mean"])
def test_decoder_pooling_matches_numpy(decoder_dir: Path, mode: str) -> None:
    embedder = OnnxEmbedder(_decoder_spec(decoder_dir, pooling=mode), threads=1, batch_size=3)
    assert embedder.dimension == HIDDEN  # probed: the spec has no dimension
    got = embedder.embed_documents(TEXTS)
    expected = np.array([_numpy_decoder(t, mode) for t in TEXTS])
    assert got.shape == (len(TEXTS), HIDDEN) and got.dtype == np.float32
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)


def test_batches_restore_order_and_match_one_by_one(decoder_dir: Path) -> None:
    spec = _decoder_spec(decoder_dir, normalize=True)
    batched = OnnxEmbedder(spec, threads=1, batch_size=3).embed_documents(TEXTS)
    single = OnnxEmbedder(spec, threads=1, batch_size=1)
    one_by_one = np.array([single.embed_documents([t])[0] for t in TEXTS])
    np.testing.assert_allclose(batched, one_by_one, atol=1e-6)
    np.testing.assert_allclose(np.linalg.norm(batched, axis=1), 1.0, rtol=1e-5)


def test_prefixes_empty_inputs_and_matryoshka(decoder_dir: Path) -> None:
    spec = _decoder_spec(decoder_dir, query_prefix="q ", document_prefix="")
    embedder = OnnxEmbedder(spec, threads=1)
    np.testing.assert_allclose(
        embedder.embed_query("alpha"), embedder.embed_documents(["q alpha"])[0], atol=1e-6
    )
    assert embedder.embed_query("alpha").shape == (HIDDEN,)
    assert embedder.embed_documents([]).shape == (0, HIDDEN)
    np.testing.assert_allclose(
        embedder.embed_documents([""])[0], _numpy_decoder("", "last_token"), atol=1e-5
    )
    doc_spec = replace(spec, document_prefix="q ")
    np.testing.assert_allclose(
        OnnxEmbedder(doc_spec, threads=1).embed_documents(["alpha"])[0],
        embedder.embed_documents(["q alpha"])[0], atol=1e-6,
    )

    cut = OnnxEmbedder(replace(spec, truncate_dim=3, normalize=True), threads=1)
    assert cut.dimension == 3 and cut.fingerprint.dimension == 3
    full = _numpy_decoder("beta gamma", "last_token")[:3]
    np.testing.assert_allclose(cut.embed_documents(["beta gamma"])[0],
                               full / np.linalg.norm(full), atol=1e-5)
    with pytest.raises(EmbedderError, match="truncate_dim 9 exceeds"):
        OnnxEmbedder(replace(spec, truncate_dim=9), threads=1)
    with pytest.raises(TypeError):
        embedder.embed_documents("alpha beta")


def test_declared_dimension_is_checked(decoder_dir: Path) -> None:
    embedder = OnnxEmbedder(_decoder_spec(decoder_dir, dimension=16), threads=1)
    with pytest.raises(EmbedderError, match="outputs 8-d vectors, spec says 16"):
        embedder.embed_documents(["alpha"])


def test_fingerprint_hashes_the_model_file(decoder_dir: Path) -> None:
    import hashlib

    embedder = OnnxEmbedder(_decoder_spec(decoder_dir), threads=1)
    expected = hashlib.sha256((decoder_dir / "model.onnx").read_bytes()).hexdigest()
    assert embedder.fingerprint == EmbedderFingerprint("tiny-decoder", HIDDEN, expected)
    assert embedder.spec.pooling == "last_token"
    assert OnnxEmbedder(_decoder_spec(decoder_dir), threads=1).fingerprint == embedder.fingerprint


def test_pooled_output_and_zero_token_type_ids(tmp_path: Path) -> None:
    folder = _tiny_folder(tmp_path / "enc", _pooled_encoder_graph())
    spec = spec_from_folder(folder, registry_entry={"pooling": "mean", "max_length": 8,
                                                    "normalize": False})
    got = OnnxEmbedder(spec, threads=1).embed_documents(["alpha beta", "gamma"])
    tok, _ = _tables()
    expected = [tok[_token_ids(t, 8)].sum(axis=0) for t in ("alpha beta", "gamma")]
    np.testing.assert_allclose(got, expected, atol=1e-5)  # used as is: no second pooling


def test_unknown_graph_input_fails_at_load(tmp_path: Path) -> None:
    folder = _tiny_folder(tmp_path / "odd", _pooled_encoder_graph(extra_input="pixel_values"))
    with pytest.raises(EmbedderError, match="cannot supply: pixel_values"):
        OnnxEmbedder(spec_from_folder(folder), threads=1)


# --------------------------------------------------------------------------- spec_from_folder


def _fake_folder(root: Path, model: str = "model.onnx", **files: dict) -> Path:
    (root / model).parent.mkdir(parents=True, exist_ok=True)
    (root / model).write_bytes(b"not really onnx")
    (root / "tokenizer.json").write_text("{}")
    for name, content in files.items():
        (root / f"{name}.json").write_text(json.dumps(content))
    return root


@pytest.mark.parametrize(
    ("pooling_config", "expected"),
    [
        ({"pooling_mode_mean_tokens": True}, "mean"),
        ({"pooling_mode_cls_token": True, "pooling_mode_mean_tokens": False}, "cls"),
        ({"pooling_mode_lasttoken": True}, "last_token"),
        (None, "mean"),
    ],
)
def test_spec_pooling_from_pooling_config(tmp_path: Path, pooling_config, expected) -> None:
    files = {"pooling_config": pooling_config} if pooling_config else {}
    assert spec_from_folder(_fake_folder(tmp_path, **files)).pooling == expected


def test_spec_rejects_unsupported_pooling(tmp_path: Path) -> None:
    folder = _fake_folder(tmp_path, pooling_config={"pooling_mode_max_tokens": True})
    with pytest.raises(EmbedderError, match="unsupported pooling pooling_mode_max_tokens"):
        spec_from_folder(folder)
    with pytest.raises(EmbedderError, match="unknown pooling 'weighted'"):
        spec_from_folder(folder, registry_entry={"pooling": "weighted"})


def test_spec_max_length_and_registry_precedence(tmp_path: Path) -> None:
    folder = _fake_folder(tmp_path / "a", config={"max_position_embeddings": 32768},
                          pooling_config={"pooling_mode_cls_token": True})
    spec = spec_from_folder(folder)
    assert (spec.name, spec.max_length, spec.dimension, spec.normalize) == ("a", 512, None, True)
    assert spec_from_folder(_fake_folder(tmp_path / "b", config={
        "max_position_embeddings": 128})).max_length == 128
    assert spec_from_folder(_fake_folder(tmp_path / "c")).max_length == 512
    entry = {"pooling": "last_token", "max_length": 8192, "dimension": 1024, "normalize": True,
             "query_prefix": "Instruct: x\nQuery:", "document_prefix": ""}
    spec = spec_from_folder(folder, name="qwen", registry_entry=entry)
    assert (spec.name, spec.pooling, spec.max_length, spec.dimension) == (
        "qwen", "last_token", 8192, 1024)
    assert spec.query_prefix == "Instruct: x\nQuery:" and spec.document_prefix == ""


def test_spec_matryoshka_from_registry(tmp_path: Path) -> None:
    folder = _fake_folder(tmp_path)
    entry = {"pooling": "last_token", "dimension": 1024, "matryoshka_dims": [256, 512, 1024]}
    spec = spec_from_folder(folder, registry_entry={**entry, "truncate_dim": 256})
    assert spec.truncate_dim == 256
    with pytest.raises(EmbedderError, match="truncate_dim 300 is not a trained size"):
        spec_from_folder(folder, registry_entry={**entry, "truncate_dim": 300})


def test_spec_finds_onnx_subfolder(tmp_path: Path) -> None:
    spec = spec_from_folder(_fake_folder(tmp_path, model="onnx/model.onnx"))
    assert spec.model_path == tmp_path / "onnx" / "model.onnx"
    assert spec.tokenizer_path == tmp_path / "tokenizer.json"


def test_spec_errors(tmp_path: Path) -> None:
    with pytest.raises(EmbedderError, match="does not exist"):
        spec_from_folder(tmp_path / "missing")
    (tmp_path / "tokenizer.json").write_text("{}")
    with pytest.raises(EmbedderError, match=f"embedder folder {tmp_path} has no model.onnx"):
        spec_from_folder(tmp_path)
    (tmp_path / "tokenizer.json").unlink()
    (tmp_path / "model.onnx").write_bytes(b"x")
    with pytest.raises(EmbedderError, match="has no tokenizer.json"):
        spec_from_folder(tmp_path)


@pytest.mark.parametrize(("file", "content", "reason"), [
    ("pooling_config.json", "{not json", "Expecting property name"),
    ("modules.json", "[" * 100_000, "nested too deeply"),
    ("config.json", b"\xff\xfe{}", "codec can't decode"),
])
def test_an_unreadable_json_file_in_the_folder_is_one_line_error(
        tmp_path: Path, file: str, content: str | bytes, reason: str) -> None:
    folder = _fake_folder(tmp_path)
    if isinstance(content, bytes):
        (folder / file).write_bytes(content)
    else:
        (folder / file).write_text(content)
    with pytest.raises(EmbedderError, match=f"cannot read {folder / file}: .*{reason}") as info:
        spec_from_folder(folder)
    assert "\n" not in str(info.value)


def test_corrupt_model_is_one_line_error(tmp_path: Path) -> None:
    folder = _fake_folder(tmp_path)
    with pytest.raises(EmbedderError, match="cannot load ONNX model") as info:
        OnnxEmbedder(spec_from_folder(folder), threads=1)
    assert "\n" not in str(info.value)


# --------------------------------------------------------------------------- real model

MINILM_ENTRY = {"pooling": "mean", "max_length": 256, "dimension": 384, "normalize": True}


@pytest.fixture(scope="module")
def real_folder() -> Path:
    value = os.environ.get("RAMEM_TEST_EMBEDDER")
    if not value:
        pytest.skip("RAMEM_TEST_EMBEDDER is not set (point it at the all-MiniLM-L6-v2 ONNX folder)")
    folder = Path(value)
    if not (folder / "model.onnx").is_file():
        pytest.skip(f"RAMEM_TEST_EMBEDDER={folder} has no model.onnx")
    return folder


@pytest.fixture(scope="module")
def minilm(real_folder: Path) -> OnnxEmbedder:
    spec = spec_from_folder(real_folder, name="all-minilm-l6-v2", registry_entry=MINILM_ENTRY)
    return OnnxEmbedder(spec)


@pytest.mark.real_model
def test_real_dimension_norm_and_similarity(minilm: OnnxEmbedder) -> None:
    vecs = minilm.embed_documents([
        "The cat sat on the mat.",
        "A cat was sitting on the rug.",
        "Quarterly tax filings are due in April.",
    ])
    assert minilm.dimension == 384 and vecs.shape == (3, 384) and vecs.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vecs, axis=1), 1.0, rtol=1e-5)
    paraphrase, unrelated = float(vecs[0] @ vecs[1]), float(vecs[0] @ vecs[2])
    assert paraphrase > unrelated + 0.3, (paraphrase, unrelated)
    np.testing.assert_allclose(minilm.embed_query("The cat sat on the mat."), vecs[0], atol=1e-6)


@pytest.mark.real_model
def test_real_batch_equals_one_by_one(minilm: OnnxEmbedder) -> None:
    texts = [
        "Caroline went to the LGBTQ support group yesterday and felt welcomed.",
        "ok",
        "",
        "Melanie painted a sunrise over the lake last weekend with her kids.",
        "What did you think of the book?",
        "I have been running every morning since March, it helps me think clearly.",
    ] * 6
    batched = minilm.embed_documents(texts)
    one_by_one = np.array([minilm.embed_documents([t])[0] for t in texts])
    np.testing.assert_allclose(batched, one_by_one, atol=1e-5)


@pytest.mark.real_model
def test_real_long_text_is_truncated(minilm: OnnxEmbedder) -> None:
    words = [f"word{i % 97}" for i in range(3000)]
    long_text = " ".join(words)
    other_tail = " ".join(words[:1000] + ["completely different ending"] * 200)
    vecs = minilm.embed_documents([long_text, other_tail])
    assert vecs.shape == (2, 384) and np.all(np.isfinite(vecs))
    np.testing.assert_allclose(vecs[0], vecs[1], atol=1e-5)  # only the first 256 tokens count


@pytest.mark.real_model
def test_real_fingerprint_stable(minilm: OnnxEmbedder, real_folder: Path) -> None:
    first = minilm.fingerprint
    again = OnnxEmbedder(minilm.spec, threads=1).fingerprint
    assert first == again
    assert first.name == "all-minilm-l6-v2" and first.dimension == 384
    assert minilm.spec.pooling == "mean" and len(first.sha256) == 64
    sums = real_folder / "SHA256SUMS"
    if sums.is_file():
        assert f"{first.sha256}  model.onnx" in sums.read_text()


@pytest.mark.real_model
def test_real_spec_from_folder_files_only(real_folder: Path, minilm: OnnxEmbedder) -> None:
    """The reference export (../shared) says no trained length: its 512 position embeddings
    bound it. The folder converted from the PyPI package (a clone without ../shared) keeps
    sentence-transformers' sentence_bert_config.json: the trained 256."""
    spec = spec_from_folder(real_folder)
    trained = (real_folder / "sentence_bert_config.json").is_file()
    assert (spec.pooling, spec.max_length, spec.dimension) == ("mean", 256 if trained else 512,
                                                               None)
    plain = OnnxEmbedder(spec, threads=1)
    assert plain.dimension == 384
    text = ["Short sentences embed the same whatever the max length."]
    np.testing.assert_allclose(plain.embed_documents(text), minilm.embed_documents(text),
                               atol=1e-5)
