"""`ramem doctor` on real banks: a healthy one, and each thing it must catch."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from ramem_local.cli import cli


def doctor(bank: Path, models: Path, *args: str):
    return CliRunner().invoke(cli, ["--db", str(bank), *args, "doctor"],
                              env={"RAMEM_MODELS_DIR": str(models)})


@pytest.mark.real_model
def test_a_healthy_bank_passes_and_a_changed_embedder_folder_is_caught(tmp_path, minilm_dir):
    folder = tmp_path / "all-MiniLM-L6-v2"
    shutil.copytree(minilm_dir, folder)
    bank, models = tmp_path / "bank.db", tmp_path / "models"
    added = CliRunner().invoke(cli, ["--db", str(bank), "--embedder", str(folder), "add",
                                     "Planted tomatoes"], env={"RAMEM_MODELS_DIR": str(models)})
    assert added.exit_code == 0, added.output
    healthy = doctor(bank, models)
    assert healthy.exit_code == 0, healthy.output
    assert "ok   embedder all-minilm-l6-v2 (384-d) loads and matches the bank" in healthy.output
    assert "ok   vectors: 1 for 1 memories" in healthy.output

    model = folder / "model.onnx"
    model.chmod(0o644)
    model.write_bytes(model.read_bytes() + b"\0")  # another file: another hash
    changed = doctor(bank, models)
    assert changed.exit_code == 1
    assert "BAD  embedder all-minilm-l6-v2" in changed.output


def test_a_corrupt_model_file_in_the_models_folder_is_bad(tmp_path):
    from ramem_local.runtime.registry import record_install, sha256_file

    models = tmp_path / "models"
    gguf = models / "tiny" / "tiny.gguf"
    gguf.parent.mkdir(parents=True)
    gguf.write_bytes(b"GGUF not really a model")
    record_install(models, "tiny", "llm", [(gguf, sha256_file(gguf), gguf.stat().st_size)],
                   source="test")
    bank = tmp_path / "bank.db"
    CliRunner().invoke(cli, ["--db", str(bank), "add", "hello"])
    assert doctor(bank, models).exit_code == 0
    gguf.write_bytes(b"GGUF changed")
    result = doctor(bank, models)
    assert result.exit_code == 1
    assert "BAD  model file tiny: tiny/tiny.gguf: size" in result.output
