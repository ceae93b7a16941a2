"""ramem-local: an embedded, offline long-term memory engine with contextual reinstatement."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from .errors import (
    BankCorruptError,
    BankError,
    BankFullError,
    BankIOError,
    BankKeyError,
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
from .timebounds import BOUNDS_TEXT, MAX_TIME, MIN_TIME
from .types import (
    DAY,
    DENSE_INDEXES,
    JOURNAL,
    KIND_IN_RANGE,
    SEARCH_MODES,
    Answer,
    BankHealth,
    BankKey,
    Candidate,
    EmbedderFingerprint,
    EventAnchor,
    ForgetReport,
    LLMCall,
    MemoryRecord,
    RecallFrame,
    SearchDefaults,
    SearchResponse,
    TimeCue,
    TimelineDay,
    TimelineEntry,
    TimelineSession,
    TimeRange,
    Trace,
    Turn,
    When,
)

if TYPE_CHECKING:
    from . import config, models, render, testing, text
    from .api import Memory
    from .ingest.formats import load_locomo_samples, locomo_sample_name, locomo_session_turns
    from .ingest.reports import ExtractionReport, ImportReport, IngestReport, WindowReport
    from .ingest.windows import INLINE_EXTRACTION_WINDOWS
    from .keys import key_from_sources
    from .protocols import LLM, Embedder, LLMResult
    from .recall.when import parse_when
    from .retrieve import RetrievalSettings
    from .store.encryption import CIPHERS, DEFAULT_CIPHER, bank_is_encrypted

# Imported on first use (PEP 562): `import ramem_local` (and `ramem --help`) must not load
# numpy, onnxruntime, llama_cpp or dateparser.
_LAZY = {
    "Memory": ".api",
    "CIPHERS": ".store.encryption",
    "DEFAULT_CIPHER": ".store.encryption",
    "bank_is_encrypted": ".store.encryption",
    "key_from_sources": ".keys",
    "Embedder": ".protocols",
    "ExtractionReport": ".ingest.reports",
    "ImportReport": ".ingest.reports",
    "IngestReport": ".ingest.reports",
    "INLINE_EXTRACTION_WINDOWS": ".ingest.windows",
    "LLM": ".protocols",
    "LLMResult": ".protocols",
    "load_locomo_samples": ".ingest.formats",
    "locomo_sample_name": ".ingest.formats",
    "locomo_session_turns": ".ingest.formats",
    "parse_when": ".recall.when",
    "RetrievalSettings": ".retrieve",
    "WindowReport": ".ingest.reports",
}
# The submodules that are public on purpose (the faces may import them): the user's settings,
# the models facade, how results are written as text for people, the test doubles, and the
# text rules search uses (stopwords, the person matcher) that an evaluation must share.
_PUBLIC_MODULES = ("config", "models", "render", "testing", "text")


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        value = getattr(importlib.import_module(_LAZY[name], __name__), name)
    elif name in _PUBLIC_MODULES:
        value = importlib.import_module(f".{name}", __name__)
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = value
    return value

__version__ = "0.1.0"

__all__ = [
    "CIPHERS",
    "DEFAULT_CIPHER",
    "Answer",
    "BOUNDS_TEXT",
    "BankCorruptError",
    "BankHealth",
    "BankError",
    "BankFullError",
    "BankIOError",
    "BankKey",
    "BankKeyError",
    "BankLockedError",
    "BankReadOnlyError",
    "Candidate",
    "ConfigError",
    "DAY",
    "DENSE_INDEXES",
    "KIND_IN_RANGE",
    "Embedder",
    "EmbedderFingerprint",
    "EventAnchor",
    "ExtractionReport",
    "ForgetReport",
    "FormatError",
    "INLINE_EXTRACTION_WINDOWS",
    "ImportReport",
    "IngestReport",
    "InputError",
    "JOURNAL",
    "LLM",
    "LLMCall",
    "LLMError",
    "LLMResult",
    "MAX_TIME",
    "MIN_TIME",
    "Memory",
    "MemoryRecord",
    "ModelError",
    "RamemError",
    "RecallFrame",
    "RetrievalSettings",
    "SEARCH_MODES",
    "SearchDefaults",
    "SearchResponse",
    "StoreError",
    "TimeCue",
    "TimeRange",
    "TimelineDay",
    "TimelineEntry",
    "TimelineSession",
    "Trace",
    "Turn",
    "When",
    "WindowReport",
    "bank_is_encrypted",
    "config",
    "key_from_sources",
    "load_locomo_samples",
    "locomo_sample_name",
    "locomo_session_turns",
    "models",
    "parse_when",
    "render",
    "testing",
    "text",
]
