"""What ingest, ``ramem import`` and extraction report: plain records, apart from the pipelines
that fill them, so that ``Memory``'s return types resolve (``typing.get_type_hints``) without
importing those pipelines, which a search does not need."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class IngestReport:
    conversations: int = 0
    sessions: int = 0
    turns_seen: int = 0
    turns_new: int = 0
    memories_new: int = 0
    vectors_new: int = 0
    seconds: float = 0.0
    notes: list[str] = field(default_factory=list)

    @property
    def turns_per_second(self) -> float:
        return self.turns_new / self.seconds if self.seconds > 0 else 0.0


@dataclass
class ImportReport:
    kind: str
    files: int = 0
    conversations: int = 0  # conversations (chats) or days (journal) with something to store
    empty: int = 0  # chats without a visible message
    entries: int = 0  # turns read
    turns_new: int = 0
    memories_new: int = 0
    vectors_new: int = 0
    noise: int = 0  # system / tool / hidden / non-text messages left out
    skipped: list[str] = field(default_factory=list)  # one line per record that was not read
    notes: list[str] = field(default_factory=list)
    seconds: float = 0.0

    def as_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind, "files": self.files, "conversations": self.conversations,
            "empty_conversations": self.empty, "turns_read": self.entries,
            "turns_new": self.turns_new, "memories_new": self.memories_new,
            "vectors_new": self.vectors_new, "noise_skipped": self.noise,
            "skipped": self.skipped, "notes": self.notes, "seconds": round(self.seconds, 2),
        }


@dataclass
class WindowReport:
    """What happened to one window in this run (passed to ``progress``)."""

    window_id: int
    conversation: str
    index: int  # 1-based among the windows this run processes
    total: int  # windows this run processes
    turns: int
    status: str
    error: str | None
    memories_new: int
    memories_merged: int
    entries: int
    entries_rejected: int
    llm_calls: int
    split: bool
    tokens_in: int
    tokens_out: int
    seconds: float
    cut_short: bool = False  # some entries come from a reply cut short (extract.complete_entries)
    repaired: bool = False  # every entry was refused: the model was asked again (repair_window)


@dataclass
class ExtractionReport:
    windows_total: int = 0  # windows of the conversations considered (this prompt version)
    done: int = 0  # windows completed by this run
    failed: int = 0  # windows that failed in this run
    skipped_done: int = 0  # done before this run
    skipped_failed: int = 0  # failed before and not retried (retry_failed=False)
    not_processed: int = 0  # left pending (or failed) because of ``limit`` or the budget
    stopped_by_budget: bool = False
    memories_new: int = 0
    memories_merged: int = 0  # entries equal to a stored memory: provenance merged into it
    entries_rejected: int = 0  # schema-valid entries that could not become memories
    llm_calls: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    seconds: float = 0.0
    failures: list[tuple[int, str]] = field(default_factory=list)
    windows: list[WindowReport] = field(default_factory=list)
