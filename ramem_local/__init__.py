"""ramem-local: an embedded, offline long-term memory engine with contextual reinstatement."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from .errors import BankError, InputError, LLMError, ModelError, RamemError
from .types import (
    Answer,
    Candidate,
    MemoryRecord,
    RecallFrame,
    SearchDefaults,
    SearchResponse,
    TimeCue,
    TimeRange,
    Trace,
    Turn,
)

if TYPE_CHECKING:
    from .api import Memory
    from .config import ConfigError
    from .ingest.formats import FormatError
    from .ingest.pipeline import IngestReport
    from .retrieve import RetrievalSettings
    from .store import StoreError

# Imported on first use (PEP 562): `import ramem_local` (and `ramem --help`) must not load
# numpy, onnxruntime, llama_cpp or dateparser.
_LAZY = {
    "Memory": ".api",
    "ConfigError": ".config",
    "FormatError": ".ingest.formats",
    "IngestReport": ".ingest.pipeline",
    "RetrievalSettings": ".retrieve",
    "StoreError": ".store",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        value = getattr(importlib.import_module(_LAZY[name], __name__), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

__version__ = "0.1.0"

__all__ = [
    "Answer",
    "BankError",
    "ConfigError",
    "Candidate",
    "FormatError",
    "InputError",
    "LLMError",
    "IngestReport",
    "Memory",
    "MemoryRecord",
    "ModelError",
    "RamemError",
    "RecallFrame",
    "RetrievalSettings",
    "SearchDefaults",
    "SearchResponse",
    "StoreError",
    "TimeCue",
    "TimeRange",
    "Trace",
    "Turn",
]
