"""ramem-local: an embedded, offline long-term memory engine with contextual reinstatement."""

from .api import Memory
from .config import ConfigError
from .errors import BankError, InputError, LLMError, ModelError, RamemError
from .ingest.formats import FormatError
from .ingest.pipeline import IngestReport
from .retrieve import RetrievalSettings
from .store import StoreError
from .types import (
    Answer,
    Candidate,
    MemoryRecord,
    RecallFrame,
    SearchResponse,
    TimeCue,
    TimeRange,
    Trace,
    Turn,
)

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
    "SearchResponse",
    "StoreError",
    "TimeCue",
    "TimeRange",
    "Trace",
    "Turn",
]
