"""Reading the JSON files that come with models: the registry, the ledger, a model folder's
configs, the pinned reference vectors.

One reader, so a file that is missing, unreadable, not UTF-8, not JSON or nested too deeply is
always one readable :class:`ModelError` line that names the file, never a traceback.
"""

from __future__ import annotations

import json
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
