"""`ramem doctor`: what can be wrong with a bank, checked one thing at a time.

Each check returns :class:`Finding` lines: ``ok``, ``WARN`` (works, but needs attention: a long
extraction queue, missing vectors) or ``BAD`` (something is broken: the file, an index out of
step with the memories, an embedder that no longer loads or has changed, a model file whose hash
no longer matches, a llama.cpp that dies on the configured LLM).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from . import BOUNDS_TEXT, INLINE_EXTRACTION_WINDOWS, BankHealth, Memory, models
from .errors import ModelError
from .render import duration_text

OK, WARN, BAD = "ok", "WARN", "BAD"
# A pending extraction longer than this is worth a warning.
LONG_QUEUE_SECONDS = 3600


@dataclass(frozen=True)
class Finding:
    level: str  # OK, WARN or BAD
    text: str


def bank_file(health: BankHealth) -> list[Finding]:
    if health.integrity == ["ok"]:
        return [Finding(OK, "bank file: integrity_check ok")]
    return [Finding(BAD, "bank file: " + "; ".join(health.integrity[:5]))]


def encryption(health: BankHealth) -> list[Finding]:
    if health.cipher is None:
        findings = [Finding(OK, "encryption: none (a plain SQLite file, mode 0600; "
                                "`ramem encrypt` encrypts it)")]
    else:
        findings = [Finding(OK, f"encryption: {health.cipher} (the bank file and its log are "
                                "encrypted)")]
    if health.left_copy is not None:
        findings.append(Finding(WARN, f"encryption: {health.left_copy} is a copy an "
                                      "interrupted `encrypt` or `rekey` left (the bank is "
                                      "whole): run the command again, or delete the copy"))
    return findings


def stored_times(health: BankHealth) -> list[Finding]:
    """Times outside 1900..2199 (written before ramem checked them) break every search."""
    bad = health.conversations_with_bad_times
    if not bad:
        return [Finding(OK, f"stored times: all in {BOUNDS_TEXT}")]
    names = ", ".join(f"{name!r} ({count} row(s))" for name, count in list(bad.items())[:5])
    return [Finding(BAD, f"stored times: outside {BOUNDS_TEXT} in {names}; forget that "
                         "conversation (`ramem forget --conversation NAME`) and ingest it again")]


def vector_extension(health: BankHealth) -> list[Finding]:
    return [Finding(OK, f"sqlite-vec {health.vector_extension} loaded")]


def full_text_index(health: BankHealth) -> list[Finding]:
    healthy = health.fts_ok and health.fts_rows == health.memories
    text = f"full-text index: {health.fts_rows} rows for {health.memories} memories"
    return [Finding(OK if healthy else BAD, text)]


def embedder(memory: Memory, health: BankHealth) -> list[Finding]:
    recorded = health.embedder
    if recorded is None:
        return [Finding(OK, "embedder: none recorded (BM25 only)")]
    findings: list[Finding] = []
    if memory.embedder is None:
        reason = "; ".join(memory.notes) or "not loaded"
        findings.append(Finding(BAD, f"embedder {recorded.name}: {reason}"))
    elif memory.embedder.fingerprint != recorded:
        findings.append(Finding(BAD, f"embedder {recorded.name}: the loaded model differs from "
                                     "the one the vectors were made with (`ramem reindex`)"))
    else:
        findings.append(Finding(OK, f"embedder {recorded.name} ({recorded.dimension}-d) loads "
                                    "and matches the bank"))
    memories, vectors = health.memories, health.vectors
    findings.append(Finding(OK if vectors == memories else WARN,
                            f"vectors: {vectors} for {memories} memories"
                            + ("" if vectors == memories else " (`ramem reindex` fills them)")))
    return findings


def installed_models(models_dir: Path) -> list[Finding]:
    checks = models.verify(models_dir)
    bad = [f"{check.model}: {check.message}" for check in checks if not check.ok]
    if not checks:
        return [Finding(OK, f"models: none recorded in {models_dir}")]
    if not bad:
        return [Finding(OK, f"models: {len(checks)} file(s) in {models_dir} match their hashes")]
    return [Finding(BAD, f"model file {line}") for line in bad]


def llm_runtime(llm: str | None, models_dir: Path) -> list[Finding]:
    """The configured LLM run by llama.cpp in a child process: a wheel built for another CPU
    dies there (SIGILL) with one line that says how to rebuild it, instead of mid-ingest."""
    if not llm:
        return [Finding(OK, "llama.cpp: no LLM configured (--llm), check skipped")]
    try:
        check = models.check_llm_runtime(llm, models_dir)
    except ModelError as exc:
        return [Finding(BAD, f"LLM {llm}: {exc}")]
    return [Finding(OK if check.ok else BAD, check.message)]


def extraction_queue(memory: Memory) -> list[Finding]:
    queue = memory.extraction_queue()
    findings: list[Finding] = []
    if queue["pending"]:
        eta = queue["eta_seconds"]
        long = (eta is not None and eta > LONG_QUEUE_SECONDS) or (
            eta is None and queue["pending"] > INLINE_EXTRACTION_WINDOWS)
        findings.append(Finding(
            WARN if long else OK,
            f"extraction: {queue['pending']} window(s) pending, ETA {duration_text(eta)}; "
            "run `ramem --llm M extract --budget 8h` (turns stay searchable meanwhile)"))
    if queue["failed"]:
        findings.append(Finding(WARN, f"extraction: {queue['failed']} window(s) failed; "
                                      "`ramem --llm M extract --retry-failed`"))
    return findings


def examine(memory: Memory, models_dir: Path, llm: str | None = None) -> list[Finding]:
    """Every check, in the order a user would want to read them; ``llm`` is the configured
    LLM (a name or a GGUF file), run in a child process, never loaded here."""
    health = memory.health()
    checks: list[Callable[[], list[Finding]]] = [
        lambda: bank_file(health),
        lambda: encryption(health),
        lambda: stored_times(health),
        lambda: vector_extension(health),
        lambda: full_text_index(health),
        lambda: embedder(memory, health),
        lambda: installed_models(models_dir),
        lambda: llm_runtime(llm, models_dir),
        lambda: extraction_queue(memory),
    ]
    return [finding for check in checks for finding in check()]
