"""Turn a user's model argument (registry name or path) into a loaded runtime."""

from __future__ import annotations

from pathlib import Path

from .embedder import EmbedderError, OnnxEmbedder, spec_from_folder
from .registry import EMBEDDER, ModelError, load_registry, resolve_model


def open_embedder(name_or_path: str, models_dir: Path) -> OnnxEmbedder:
    """A registry name (installed in models_dir) or a folder with model.onnx + tokenizer.json."""
    folder = Path(name_or_path).expanduser()
    registry = load_registry()
    if folder.exists():
        if not folder.is_dir():
            raise EmbedderError(
                f"embedder {folder} is a file; give the folder that holds model.onnx and "
                "tokenizer.json"
            )
        entry = _entry_for_folder(folder, registry)
        return OnnxEmbedder(spec_from_folder(folder, name=_folder_name(folder, entry),
                                             registry_entry=entry))
    try:
        path = resolve_model(name_or_path, EMBEDDER, models_dir)
    except ModelError as exc:
        raise EmbedderError(str(exc)) from None
    entry = registry.get(str(name_or_path))
    return OnnxEmbedder(
        spec_from_folder(path, name=str(name_or_path), registry_entry=entry.raw if entry else None)
    )


def _entry_for_folder(folder: Path, registry: dict) -> dict | None:
    """A folder named like a registry entry (any case, - or _) uses that entry's settings."""
    key = folder.name.lower().replace("_", "-")
    entry = registry.get(key)
    return entry.raw if entry is not None and entry.kind == EMBEDDER else None


def _folder_name(folder: Path, entry: dict | None) -> str:
    return folder.name.lower().replace("_", "-") if entry else folder.name
