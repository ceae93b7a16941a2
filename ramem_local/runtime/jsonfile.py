"""Reading the JSON files that come with models: the registry, the ledger, a model folder's
configs, the pinned reference vectors; writing the user cache's small JSON files.

One reader, so a file that is missing, unreadable, not UTF-8, not JSON or nested too deeply is
always one readable :class:`ModelError` line that names the file, never a traceback.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from pathlib import Path
from typing import Any

from ..errors import ModelError


def read_json(path: Path, *, error: type[ModelError] = ModelError, hint: str = "") -> Any:
    """The JSON value stored in ``path``.

    A file that cannot be read or parsed raises ``error`` (a :class:`ModelError` subclass, e.g.
    ``EmbedderError``): ``cannot read PATH: REASON`` followed by ``; HINT`` when one is given.
    """
    try:
        return json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError) as exc:  # ValueError: bad UTF-8 or JSON
        reason = "nested too deeply" if isinstance(exc, RecursionError) else str(exc)
        suffix = f"; {hint}" if hint else ""
        raise error(f"cannot read {path}: {reason}{suffix}") from None


def write_cache_json(path: Path, value: Any) -> None:
    """Replace ``path`` with ``value`` as JSON, atomically (a reader sees the old file or the new
    one, never half of one). For the user cache, whose files are only worth their time: a folder
    that cannot be written (read-only, full) is skipped silently, as a cache miss is."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        descriptor, scratch = tempfile.mkstemp(dir=path.parent, prefix=f".{path.stem}-",
                                               suffix=".json")
    except OSError:
        return
    try:
        with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
            json.dump(value, handle, indent=1)
        os.replace(scratch, path)
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(scratch)
