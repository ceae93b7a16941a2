"""ramem-local: an embedded, offline long-term memory engine with contextual reinstatement."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from .errors import (
    BankCorruptError,
    BankError,
    BankFullError,
    BankIOError,
    BankLockedError,
    BankReadOnlyError,
    ConfigError,
    FormatError,
    InputError,
    LLMError,
    ModelError,
    RamemError,
    StoreError,
)
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
    from .ingest.pipeline import IngestReport
    from .retrieve import RetrievalSettings

# Imported on first use (PEP 562): `import ramem_local` (and `ramem --help`) must not load
# numpy, onnxruntime, llama_cpp or dateparser.
_LAZY = {
    "Memory": ".api",
    "IngestReport": ".ingest.pipeline",
    "RetrievalSettings": ".retrieve",
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
    "BankCorruptError",
    "BankError",
    "BankFullError",
    "BankIOError",
    "BankLockedError",
    "BankReadOnlyError",
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
