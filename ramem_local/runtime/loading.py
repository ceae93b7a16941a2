"""Turn a user's model argument (registry name or path) into a loaded runtime."""

from __future__ import annotations

from pathlib import Path

from .embedder import EmbedderError, OnnxEmbedder, spec_from_folder
from .registry import (
    EMBEDDER,
    INT8_SUFFIX,
    ModelError,
    cache_dir,
    load_registry,
    resolve_model,
)

# The LLM's prompt prefixes' KV states, kept between processes (runtime.prompt_prefix).
PREFIX_STATES_FOLDER = "prompt-prefixes"


def open_embedder(name_or_path: str, models_dir: Path) -> OnnxEmbedder:
    """A registry name (installed in models_dir) or a folder with model.onnx + tokenizer.json."""
    folder = Path(name_or_path).expanduser()
    if folder.exists():
        if not folder.is_dir():
            raise EmbedderError(
                f"embedder {folder} is a file; give the folder that holds model.onnx and "
                "tokenizer.json"
            )
        folder_entry = _entry_for_folder(folder)
        return OnnxEmbedder(spec_from_folder(folder, name=_folder_name(folder, folder_entry),
                                             registry_entry=folder_entry))
    if looks_like_path(name_or_path):
        raise EmbedderError(f"embedder folder {folder} does not exist")
    try:
        path = resolve_model(name_or_path, EMBEDDER, models_dir)
    except ModelError as exc:
        raise EmbedderError(str(exc)) from None
    return OnnxEmbedder(spec_from_folder(path, name=str(name_or_path),
                                         registry_entry=settings_for(str(name_or_path))))


def settings_for(name: str) -> dict | None:
    """The registry settings (pooling, prefixes, max length, dimension) embedder ``name`` runs
    with: its own entry, else, for ``NAME-int8`` (``models install|import --int8``), NAME's: the
    int8 copy is the same model with smaller weights."""
    registry = load_registry()
    entry = registry.get(name)
    if entry is None and name.endswith(INT8_SUFFIX):
        entry = registry.get(name[:-len(INT8_SUFFIX)])
    return entry.raw if entry is not None and entry.kind == EMBEDDER else None


def looks_like_path(value: str) -> bool:
    return "/" in value or "\\" in value or value.startswith((".", "~"))


def _entry_for_folder(folder: Path) -> dict | None:
    """A folder named like a registry entry (any case, - or _) uses that entry's settings."""
    return settings_for(folder.name.lower().replace("_", "-"))


def _folder_name(folder: Path, entry: dict | None) -> str:
    return folder.name.lower().replace("_", "-") if entry else folder.name


def llm_file(name_or_path: str, models_dir: Path) -> Path:
    """The GGUF file of a registry name (installed in models_dir) or a path."""
    from .registry import LLM

    if looks_like_path(name_or_path) and not Path(name_or_path).expanduser().exists():
        raise ModelError(f"no LLM file at {name_or_path}")
    path = resolve_model(name_or_path, LLM, models_dir)
    if path.is_dir():
        raise ModelError(f"LLM {path} is a folder; give the .gguf file")
    return path


def open_llm(name_or_path: str, models_dir: Path, *, n_threads: int | None = None):
    """A registry name (installed in models_dir) or a GGUF path, loaded once per process,
    after a check in a child process that llama.cpp runs it on this CPU (once per build)."""
    from .llama import LlamaRuntime
    from .llama_check import ensure_llama_runs
    from .registry import LLM

    registry = load_registry()
    path = llm_file(name_or_path, models_dir)
    ensure_llama_runs(path)
    entry = registry.get(str(name_or_path)) or next(
        (e for e in registry.values()
         if e.kind == LLM and Path(e.source.get("file", "")).name == path.name),
        None,
    )
    return LlamaRuntime(
        path,
        n_ctx=(entry.context_length if entry and entry.context_length else 8192),
        n_threads=n_threads,
        thinking=(entry.thinking if entry and entry.thinking else "none"),
        prefix_cache_dir=cache_dir() / PREFIX_STATES_FOLDER,
    )
