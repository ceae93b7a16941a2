"""The LLM tier measured on a fixed LoCoMo dev subset: extraction, the analyzer, retrieval, answers.

The subset (fixed by the defaults; issue 21 item 3): sample conv-26, its first ``SESSIONS``
sessions (76 turns: two extraction windows of 40 turns with the product's window size), and
the questions of categories 1-5 whose evidence lies entirely inside those sessions, taken
round-robin over the categories in file order (one of cat 1, one of cat 2, ... then the
second of each) up to ``QUESTIONS``: every category is represented even in a short run.

The sub-conversation is written as a LoCoMo JSON file in a temporary folder (the dev file is
never copied anywhere else) and stored twice: once without an LLM (turns alone, the no-LLM
tier) and once through the product path with the LLM (``Memory.ingest`` then
``Memory.extract``: turns plus extracted memories). The model is wrapped in a recorder that
passes every call through unchanged and keeps the raw replies, so that what the model wrote
(its citations before the code filters them) can be counted.

Per window: status, entries, memories, citations naming a turn of the window (the share of
valid citations), entries with an event date and stored memories with an event time,
seconds, tokens in/out. Per question: ``Memory.ask`` (analyzer + retrieval + answer, K=10)
on the two-tier bank, then retrieval alone (no model call) with the deterministic frame and
with the analyzer's merged frame, with and without its keywords, on both banks; whether the
analyzer's proposed range agrees with the deterministic one; token F1, set F1, BLEU-1
(categories 1-4), abstention, whether the model's raw citations all name memories it was
shown, and the seconds of the ask. One JSON line per window and per question to ``--out``,
a summary table on stdout.

    PYTHONPATH=. python scripts/llm_subset.py MODEL LOCOMO.json --models-dir DIR \\
        --threads 2 --out rows.jsonl

The twin rule on more questions than the subset asks: extract more sessions once with
``--questions 0 --bank DIR``, then ``--twin-rule --bank DIR`` (same ``--sessions``) searches
both banks with every question of categories 1-4 inside them, no model loaded.
"""

from __future__ import annotations

import argparse
import copy
import json
import math
import re
import statistics
import tempfile
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import date, tzinfo
from pathlib import Path
from typing import Any, TextIO

from ramem_local import Memory, RetrievalSettings, SearchDefaults, models
from ramem_local import answer as answer_module
from ramem_local.eval.locomo import LocomoQuestion, load_questions
from ramem_local.eval.metrics import bleu1, recall_at_k, set_f1, token_f1
from ramem_local.eval.retrieval import LOCOMO_COUNTRY
from ramem_local.ingest.extract import CUT_SHORT, complete_entries
from ramem_local.ingest.windows import DEFAULT_SIZE as DEFAULT_WINDOW
from ramem_local.protocols import LLM, LLMResult
from ramem_local.recall.analyzer import _days as analyzer_days
from ramem_local.recall.analyzer import _parse_day as parse_day
from ramem_local.render import span_text
from ramem_local.types import Candidate, RecallFrame

EMBEDDER = Path(__file__).resolve().parents[1].parent / "shared/models/all-MiniLM-L6-v2"
SAMPLE = "conv-26"
SESSIONS = 4  # 76 turns: two windows of the product's 40/2 size (1.5B: 268 s each unloaded)
QUESTIONS = 15
CATEGORIES = (1, 2, 3, 4, 5)
K = 10

_TURN_LINE = re.compile(r"^\[([^\]]+)\] \d{4}-\d{2}-\d{2} \d{2}:\d{2} ", re.MULTILINE)


# --------------------------------------------------------------------------- the subset


def session_of(dia_id: str) -> int:
    """The session number of a LoCoMo turn id: ``"D3:7"`` → 3."""
    return int(dia_id.split(":")[0].lstrip("D"))


def select_questions(questions: Sequence[LocomoQuestion], sessions: int, cap: int,
                     categories: Sequence[int] = CATEGORIES) -> list[LocomoQuestion]:
    """The questions whose (normalised, non-empty) evidence lies inside the first ``sessions``
    sessions, round-robin over ``categories`` in file order, at most ``cap``.

    Round-robin rather than the first ``cap`` in file order: LoCoMo lists its questions by
    category in runs, so a file-order cut would measure one or two categories only.
    """
    queues = {c: [q for q in questions
                  if q.category == c and q.evidence
                  and all(session_of(e) <= sessions for e in q.evidence)]
              for c in categories}
    chosen: list[LocomoQuestion] = []
    while len(chosen) < cap and any(queues.values()):
        for category in categories:
            if queues[category] and len(chosen) < cap:
                chosen.append(queues[category].pop(0))
    return chosen


def sub_conversation(sample: dict[str, Any], sessions: int) -> dict[str, Any]:
    """The sample cut to its first ``sessions`` sessions (speakers kept, questions dropped)."""
    conversation = sample["conversation"]
    kept = {key: value for key, value in conversation.items()
            if not key.startswith("session_")}
    for number in range(1, sessions + 1):
        for key in (f"session_{number}", f"session_{number}_date_time"):
            if key not in conversation:
                raise ValueError(f"{sample.get('sample_id')} has no {key}")
            kept[key] = conversation[key]
    return {"sample_id": sample["sample_id"], "conversation": kept, "qa": []}


# --------------------------------------------------------------------------- the recorder


@dataclass
class RecordedCall:
    messages: list[dict]
    schema: dict
    result: LLMResult


@dataclass
class RecordingLLM:
    """An ``LLM`` that passes every call to ``inner`` and keeps what came back."""

    inner: LLM
    calls: list[RecordedCall] = field(default_factory=list)
    name: str = field(init=False)  # the inner model's: extraction rates are kept by name

    def __post_init__(self) -> None:
        self.name = self.inner.name

    def __getattr__(self, attribute: str) -> Any:  # n_ctx and whatever else a stage reads
        if attribute == "inner":  # not set yet (copying, unpickling): no recursion
            raise AttributeError(attribute)
        return getattr(self.inner, attribute)

    def chat_json(self, messages: list[dict], schema: dict, *, max_tokens: int,
                  temperature: float = 0.0,
                  on_text: Callable[[str], None] | None = None) -> LLMResult:
        result = self.inner.chat_json(messages, schema, max_tokens=max_tokens,
                                      temperature=temperature, on_text=on_text)
        self.calls.append(RecordedCall(messages, schema, result))
        return result

    def count_tokens(self, text: str) -> int:
        return self.inner.count_tokens(text)

    def take(self) -> list[RecordedCall]:
        """The calls since the last ``take``."""
        taken, self.calls = self.calls, []
        return taken


def shown_turn_labels(messages: Sequence[dict]) -> set[str]:
    """The turn ids an extraction prompt showed in its excerpt, the last user message that
    shows turns (``[D1:3] 2023-05-08 13:56 Caroline: ...``; the worked example's turns before
    it are not the window's, and a repair request after it shows none)."""
    shown = [_TURN_LINE.findall(str(message.get("content", ""))) for message in messages
             if message.get("role") == "user"]
    return set(next((labels for labels in reversed(shown) if labels), []))


def extraction_citations(calls: Iterable[RecordedCall]) -> dict[str, int]:
    """Over the extraction replies: entries, entries with an event date, citations, and
    citations that name a turn the prompt showed. A reply cut short counts the whole entries
    it wrote before the cut (``complete_entries``, unchecked), also counted apart."""
    counts = {"entries": 0, "entries_dated": 0, "citations": 0, "citations_valid": 0,
              "entries_of_cut_replies": 0}
    for call in calls:
        entries = (call.result.data or {}).get("entries")
        if call.result.data is None and (call.result.error or "").startswith(CUT_SHORT):
            entries = complete_entries(call.result.raw, None)
            counts["entries_of_cut_replies"] += len(entries)
        if not isinstance(entries, list):
            continue
        shown = shown_turn_labels(call.messages)
        for entry in entries:
            if not isinstance(entry, dict):
                continue
            counts["entries"] += 1
            counts["entries_dated"] += bool(entry.get("event_date"))
            for label in entry.get("source_turns") or []:
                counts["citations"] += 1
                counts["citations_valid"] += label in shown
    return counts


def raw_answer_citations(calls: Iterable[RecordedCall]) -> list[Any] | None:
    """The citations of the last answer reply as the model wrote them (None: no answer call
    or no reply)."""
    answers = [c for c in calls if "citations" in c.schema.get("properties", {})]
    if not answers or answers[-1].result.data is None:
        return None
    raw = answers[-1].result.data.get("citations")
    return list(raw) if isinstance(raw, list) else []


# --------------------------------------------------------------------------- the analyzer


def deterministic_days(frame: RecallFrame, tz: tzinfo) -> list[str] | None:
    """The frame's grounded range as first and last day (None when it has none), as the
    analyzer records a disagreement."""
    return None if frame.time_range is None else analyzer_days(frame.time_range, tz)


def proposed_days(llm_proposal: dict | None) -> list[str | None] | None:
    """The analyzer's proposed range as written (days normalised), None when it proposed none."""
    proposal = (llm_proposal or {}).get("proposal") or {}
    start, end = proposal.get("time_start"), proposal.get("time_end")
    if not start and not end:
        return None
    return [_iso(parse_day(start)) or str(start), _iso(parse_day(end)) or str(end)]


def _iso(day: date | None) -> str | None:
    return None if day is None else day.isoformat()


def range_agreement(deterministic: list[str] | None, proposed: list[str | None] | None) -> str:
    """``both_none`` / ``same`` / ``llm_only`` (a range where the detector found none) /
    ``deterministic_only`` / ``different``."""
    if deterministic is None:
        return "both_none" if proposed is None else "llm_only"
    if proposed is None:
        return "deterministic_only"
    return "same" if list(proposed) == list(deterministic) else "different"


def without_keywords(merged: RecallFrame, deterministic: RecallFrame) -> RecallFrame:
    """The merged frame with the deterministic frame's keywords instead of the analyzer's.

    There is no switch for this in the code (``analyze_question`` always unions them in);
    ``Memory.search(frame=...)`` takes a frame, so the two are compared frame against frame.
    """
    frame = copy.deepcopy(merged)
    frame.keywords = list(deterministic.keywords)
    return frame


# --------------------------------------------------------------------------- aggregation


def _mean(values: Sequence[float]) -> float:
    return sum(values) / len(values) if values else math.nan


RETRIEVAL_KEYS = ("both_det", "both_llm", "both_llm_nokw", "turns_det", "turns_llm",
                  "turns_llm_nokw")


def summarize(windows: Sequence[dict], questions: Sequence[dict]) -> dict[str, Any]:
    """Means and shares over the window and question rows (NaN where a group is empty)."""
    done = [w for w in windows if w["status"] == "done"]
    citations = sum(w["citations"] for w in windows)
    extracted = sum(w["memories_new"] for w in windows)
    out: dict[str, Any] = {
        "windows": len(windows),
        "windows_done_share": len(done) / len(windows) if windows else math.nan,
        "memories_per_window": extracted / len(windows) if windows else math.nan,
        "citations": citations,
        "citations_valid_share": (sum(w["citations_valid"] for w in windows) / citations
                                  if citations else math.nan),
        "entries_dated_share": (sum(w["entries_dated"] for w in windows)
                                / max(1, sum(w["entries"] for w in windows))),
        "windows_cut_short": sum(bool(w.get("cut_short")) for w in windows),
        "seconds_per_window": _mean([w["seconds"] for w in windows]),
        "tokens_in": sum(w["tokens_in"] for w in windows),
        "tokens_out": sum(w["tokens_out"] for w in windows),
    }
    headline = [q for q in questions if q["category"] != 5]
    triggered = [q for q in headline if q["triggered"]]
    for key in RETRIEVAL_KEYS:
        out[f"R@10 {key}"] = _mean([q["r10"][key] for q in headline])
        out[f"trigR@10 {key}"] = _mean([q["r10"][key] for q in triggered])
    out["n_questions"] = len(questions)
    out["n_headline"] = len(headline)
    out["n_triggered"] = len(triggered)
    out["analyzer_agree_share"] = _mean(
        [float(q["range_agreement"] in ("both_none", "same")) for q in questions])
    out["analyzer_agreement"] = {
        kind: sum(q["range_agreement"] == kind for q in questions)
        for kind in ("both_none", "same", "llm_only", "deterministic_only", "different")}
    for metric in ("f1", "set_f1", "bleu1"):
        out[metric] = _mean([q[metric] for q in headline])
    out["abstained_cats_1_4"] = _mean([float(q["abstained"]) for q in headline])
    cat5 = [q for q in questions if q["category"] == 5]
    out["n_cat5"] = len(cat5)
    out["abstained_cat5"] = _mean([float(q["abstained"]) for q in cat5])
    cited = [q for q in questions if q["raw_citations"] is not None and not q["abstained"]]
    out["answers_citing"] = len(cited)
    out["citations_inside_share"] = _mean([float(q["citations_inside"]) for q in cited])
    out["seconds_per_question_median"] = (statistics.median(q["seconds"] for q in questions)
                                          if questions else math.nan)
    return out


def format_summary(model: str, summary: dict[str, Any]) -> str:
    s = summary

    def f(value: float) -> str:
        return "n/a" if isinstance(value, float) and math.isnan(value) else f"{value:.3f}"

    lines = [
        f"model {model}",
        f"extraction: windows {s['windows']} · done {f(s['windows_done_share'])} "
        f"({s.get('windows_cut_short', 0)} keeping entries of a reply cut short) · "
        f"memories/window {f(s['memories_per_window'])} · citations {s['citations']} "
        f"(valid {f(s['citations_valid_share'])}) · entries with event date "
        f"{f(s['entries_dated_share'])} · memories with event time "
        f"{f(s.get('memories_event_time_share', math.nan))} · s/window "
        f"{f(s['seconds_per_window'])} · tokens in/out {s['tokens_in']}/{s['tokens_out']}",
        f"retrieval (cats 1-4, n {s['n_headline']}; triggered n {s['n_triggered']}):"
        "             R@10   trigR@10",
    ]
    names = {"both_det": "both tiers, no analyzer", "both_llm": "both tiers, analyzer",
             "both_llm_nokw": "both tiers, analyzer w/o keywords",
             "turns_det": "turns alone, no analyzer", "turns_llm": "turns alone, analyzer",
             "turns_llm_nokw": "turns alone, analyzer w/o keywords"}
    for key in RETRIEVAL_KEYS:
        lines.append(f"  {names[key]:<40} {f(s['R@10 ' + key])}  {f(s['trigR@10 ' + key])}")
    lines += [
        f"analyzer range agrees with the deterministic one: {f(s['analyzer_agree_share'])} "
        f"of {s['n_questions']} {s['analyzer_agreement']}",
        f"answers (cats 1-4, n {s['n_headline']}): F1 {f(s['f1'])} · set F1 {f(s['set_f1'])} · "
        f"BLEU-1 {f(s['bleu1'])} · abstained {f(s['abstained_cats_1_4'])}",
        f"cat 5 (n {s['n_cat5']}): abstained {f(s['abstained_cat5'])} · answers citing "
        f"{s['answers_citing']}, raw citations all shown {f(s['citations_inside_share'])} · "
        f"median s/question {f(s['seconds_per_question_median'])}",
    ]
    return "\n".join(lines)


# --------------------------------------------------------------------------- the twin rule


def twin_rule(locomo: Path, work: Path, sessions: int, *, speaker_name_weight: float | None,
              embedder: Path = EMBEDDER) -> str:
    """Both tiers against turns alone, search only (no model is loaded): R@10 on every question
    of categories 1-4 whose evidence lies inside the first ``sessions`` sessions, on the two
    banks a run with ``--bank`` left in ``work``, and the questions whose hit differs."""
    questions = select_questions(load_questions(locomo)[SAMPLE], sessions, cap=10_000,
                                 categories=(1, 2, 3, 4))
    settings = RetrievalSettings(k=K) if speaker_name_weight is None else \
        RetrievalSettings(k=K, speaker_name_weight=speaker_name_weight)
    hits: dict[str, list[float]] = {}
    for name in ("turns", "both"):
        with Memory.open(work / f"{name}.db", embedder=embedder, country=LOCOMO_COUNTRY,
                         defaults=SearchDefaults(), create=False) as bank:
            hits[name] = [_hits(bank.search(q.question, settings=settings,
                                            conversation=SAMPLE).results[:K], set(q.evidence))
                          for q in questions]
            if name == "both":
                extracted = sum(m.kind == "extracted"
                                for m in bank.list(limit=100_000, conversation=SAMPLE))
    lines = [f"twin rule · {SAMPLE} sessions 1-{sessions} · {extracted} extracted memories · "
             f"{len(questions)} questions of cats 1-4 · K={K} · speaker name weight "
             f"{settings.speaker_name_weight:g}",
             f"  R@10 turns alone {_mean(hits['turns']):.3f} · "
             f"both tiers {_mean(hits['both']):.3f}"]
    for question, alone, both in zip(questions, hits["turns"], hits["both"], strict=True):
        if alone != both:
            lines.append(f"  {alone:.0f} -> {both:.0f}  cat {question.category}  "
                         f"{question.question}  {question.evidence}")
    return "\n".join(lines)


# --------------------------------------------------------------------------- the run


def _hits(results: Sequence[Candidate], evidence: set[str]) -> float:
    return recall_at_k([set(c.memory.source_turns) for c in results], evidence, K)


def _extract(memory: Memory, recorder: RecordingLLM, emit: Callable[[dict], None],
             window_size: int) -> list[dict]:
    rows: list[dict] = []

    def progress(window: Any) -> None:
        counts = extraction_citations(recorder.take())
        row = {"kind": "window", "window": window.index, "turns": window.turns,
               "status": window.status, "error": window.error,
               "memories_new": window.memories_new, "memories_merged": window.memories_merged,
               "entries_rejected": window.entries_rejected, "llm_calls": window.llm_calls,
               "split": window.split, "cut_short": window.cut_short,
               "repaired": window.repaired, "tokens_in": window.tokens_in,
               "tokens_out": window.tokens_out, "seconds": round(window.seconds, 1), **counts}
        rows.append(row)
        emit(row)

    memory.extract(progress=progress, window_size=window_size)
    return rows


class _FrameCapture:
    """Wraps ``memory.search`` on one instance: keeps a copy of the frame ``Memory.ask``
    searched with, as it was before retrieval grounded an event anchor in it (retrieval
    mutates the frame it is given), so the other variants start from the same frame."""

    def __init__(self, memory: Memory):
        self.memory = memory
        self.original = memory.search
        self.frame: RecallFrame | None = None
        self.results: list[Candidate] = []

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        frame = kwargs.get("frame")
        self.frame = copy.deepcopy(frame) if frame is not None else None
        response = self.original(*args, **kwargs)
        self.results = list(response.results)
        return response

    def __enter__(self) -> _FrameCapture:
        self.memory.search = self  # type: ignore[method-assign]
        return self

    def __exit__(self, *exc: object) -> None:
        del self.memory.search  # the class's method again


def _question_row(question: LocomoQuestion, memory: Memory, turns: Memory,
                  recorder: RecordingLLM) -> dict:
    recorder.take()
    with _FrameCapture(memory) as captured:
        started = time.perf_counter()
        # the analyzer where the question was not read (ask's default before 59bea53): what
        # this script measures of it (its keywords, its range) needs its call
        answer = memory.ask(question.question, k=K, conversation=SAMPLE, analyze="auto")
        seconds = time.perf_counter() - started
    calls = recorder.take()
    merged = captured.frame or answer.trace.frame
    assert merged is not None  # ask always searches with the analyzer's merged frame
    deterministic = memory.frame(question.question, conversation=SAMPLE)
    frames = {"det": None, "llm": merged, "llm_nokw": without_keywords(merged, deterministic)}
    evidence = set(question.evidence)
    r10 = {}
    for bank_name, bank in (("both", memory), ("turns", turns)):
        for frame_name, frame in frames.items():
            response = bank.search(question.question, k=K, conversation=SAMPLE,
                                   frame=copy.deepcopy(frame) if frame else None)
            r10[f"{bank_name}_{frame_name}"] = _hits(response.results[:K], evidence)
    # What ask itself retrieved; the re-run above with the same frame must match it.
    r10["ask"] = _hits(captured.results[:K], evidence)
    raw = raw_answer_citations(calls)
    shown = set(answer.trace.shown_memory_ids)
    prediction = "" if answer.abstained else answer.answer
    reference = question.answer
    headline = question.category != 5 and reference is not None
    det_days = deterministic_days(deterministic, memory.tz)
    llm_days = proposed_days(merged.llm_proposal)
    return {
        "kind": "question", "index": question.question_index, "category": question.category,
        "question": question.question, "gold": reference, "evidence": question.evidence,
        "answer": answer.answer, "abstained": answer.abstained,
        "reasoning": answer.reasoning[:300],
        "f1": token_f1(prediction, reference) if headline else None,
        "set_f1": set_f1(prediction, reference) if headline else None,
        "bleu1": bleu1(prediction, reference) if headline else None,
        "triggered": bool(deterministic.cues),
        "deterministic_range": det_days, "proposed_range": llm_days,
        "range_agreement": range_agreement(det_days, llm_days),
        "range_accepted": bool((merged.llm_proposal or {}).get("accepted")),
        "need_accepted": bool((merged.llm_proposal or {}).get("need_accepted")),
        "need": merged.need, "analyzer_keywords": list(merged.keywords),
        "r10": r10,
        "shown_hit": _hits(answer.evidence, evidence) if answer.evidence else 0.0,
        "raw_citations": raw, "citations": answer.citations,
        "citations_inside": raw is not None and all(c in shown for c in raw),
        "tokens_in": sum(c.result.tokens_in for c in calls),
        "tokens_out": sum(c.result.tokens_out for c in calls),
        "seconds": round(seconds, 1),
    }


def run(model: str, locomo: Path, *, models_dir: Path | None, threads: int,
        sessions: int, cap: int, out: TextIO | None, work: Path,
        embedder: Path = EMBEDDER, window_size: int = DEFAULT_WINDOW) -> dict[str, Any]:
    samples = json.loads(locomo.read_text(encoding="utf-8"))
    sample = next(s for s in samples if s["sample_id"] == SAMPLE)
    questions = select_questions(load_questions(locomo)[SAMPLE], sessions, cap)
    subset = work / f"{SAMPLE}-s{sessions}.json"
    subset.write_text(json.dumps([sub_conversation(sample, sessions)]), encoding="utf-8")

    out_rows: list[str] = []

    def emit(row: dict) -> None:
        out_rows.append(json.dumps(row))
        print(json.dumps(row, ensure_ascii=False), flush=True)
        if out is not None:
            out.write(json.dumps(row, ensure_ascii=False) + "\n")
            out.flush()

    emit({"kind": "subset", "sample": SAMPLE, "sessions": sessions, "questions": len(questions),
          "indices": [q.question_index for q in questions], "model": model,
          "threads": threads, "window_size": window_size})
    recorder = RecordingLLM(models.open_llm(model, models_dir, n_threads=threads))
    defaults = SearchDefaults()  # the library's values, not the user's settings
    with Memory.open(work / "turns.db", default_embedder="none", embedder=embedder,
                     country=LOCOMO_COUNTRY,
                     defaults=defaults) as turns, \
            Memory.open(work / "both.db", default_embedder="none", embedder=embedder, llm=recorder,
                        country=LOCOMO_COUNTRY, defaults=defaults) as memory:
        turns.ingest(subset, format="locomo")
        memory.ingest(subset, format="locomo")
        _extract(memory, recorder, emit, window_size)
        extracted = [m for m in memory.list(limit=10_000, conversation=SAMPLE)
                     if m.kind == "extracted"]
        emit({"kind": "extracted", "memories": len(extracted),
              "with_event_time": sum(m.event_start is not None for m in extracted),
              "contents": [m.content for m in extracted]})
        rows = []
        for question in questions:
            rows.append(_question_row(question, memory, turns, recorder))
            emit(rows[-1])
    summary = summarize_rows(read_rows(out_rows))
    emit({"kind": "summary", "model": model, **summary})
    return summary


def summarize_rows(rows: Sequence[dict], first: int | None = None) -> dict[str, Any]:
    """The summary of one run's rows (``kind`` window / extracted / question), over its first
    ``first`` questions: a run stopped early is summarised on what it finished."""
    questions = [r for r in rows if r.get("kind") == "question"][:first]
    summary = summarize([r for r in rows if r.get("kind") == "window"], questions)
    extracted = [r for r in rows if r.get("kind") == "extracted"]
    summary["memories_extracted"] = sum(r["memories"] for r in extracted)
    summary["memories_event_time_share"] = (
        sum(r["with_event_time"] for r in extracted) / summary["memories_extracted"]
        if summary["memories_extracted"] else math.nan)
    return summary


def read_rows(lines: Iterable[str]) -> list[dict]:
    return [json.loads(line) for line in lines if line.strip()]


def _answer_first() -> None:
    """The answer's JSON written answer, citations, then reasoning (the product writes the
    reasoning first): a small model's reasoning often holds the answer that its answer field
    then misses ("research" for "adoption agencies"), or abstains against it."""
    schema = answer_module.answer_schema

    def answer_first_schema(shown_ids: Sequence[int]) -> dict:
        built = schema(shown_ids)
        properties = built["properties"]
        built["properties"] = {key: properties[key]
                               for key in ("answer", "citations", "reasoning")}
        return built

    answer_module.answer_schema = answer_first_schema  # type: ignore[assignment]
    answer_module.SYSTEM_PROMPT = answer_module.SYSTEM_PROMPT.replace(
        '{"reasoning": "...", "answer": "...", "citations": [ids]}',
        '{"answer": "...", "citations": [ids], "reasoning": "..."}')
    assert '{"answer": "..."' in answer_module.SYSTEM_PROMPT


def _session_spans() -> None:
    """The evidence as shown before 2026-12-07: each memory's whole session span ("8 May 2023
    → 25 May 2023", the next session's start its end) and persons that only repeat the
    speaker ("Tim: ..." with "persons: Tim"); the product shows the session's day alone."""
    def spans_block(memory: Any, tz: tzinfo) -> str:
        span = span_text(memory.session_start, memory.session_end, tz, spoken=True)
        lines = [f"[M{memory.id}] {memory.content.strip()}", f"  session: {span}"]
        if memory.event_start is not None:
            lines.append(f"  event: {answer_module._event_text(memory, tz)}")
        for name, value in (("location", memory.location),
                            ("persons", ", ".join(memory.persons)),
                            ("entities", ", ".join(memory.entities)), ("topic", memory.topic)):
            if value:
                lines.append(f"  {name}: {value}")
        return "\n".join(lines)

    answer_module.memory_block = spans_block  # type: ignore[assignment]


def _times_as_said() -> None:
    """Rule 2 without "concrete dates rather than relative words": a time kept as precise as
    the memory says it ("last week" in a memory of 2 April 2023 is "the week before 2 April
    2023", not a day of that week the model picks)."""
    old = ('   Give concrete dates (e.g. "7 May 2023") rather than relative words.\n')
    new = ('   Give a time as precisely as the memory says it: "yesterday" is the day before\n'
           '   the session date (give that date); "last week", "last weekend" or "last Friday"\n'
           '   become "the week / the weekend / the Friday before <session date>". Never name\n'
           '   a day the memories do not give.\n')
    assert old in answer_module.SYSTEM_PROMPT
    answer_module.SYSTEM_PROMPT = answer_module.SYSTEM_PROMPT.replace(old, new)


def _asked_on_when_needed() -> None:
    """The question's date shown only where the question needs it: a time cue read in it
    ("last weekend", "recently", "in 2023") or an answer counted from now ("how long ago",
    "how old"). Shown with every question, the small model gives it as the answer to "When
    did Maria donate her car?" (results/ask-subset-130.txt)."""
    import re as _re
    from datetime import datetime as _datetime

    from ramem_local.recall.time import detect_cues

    shipped = answer_module.answer_messages

    def messages(question: str, evidence: str, reference_text: str) -> list[dict]:
        needs = bool(detect_cues(question, _datetime.now())) or _re.search(
            r"\b(?:ago|how long|how old)\b", question, _re.IGNORECASE) is not None
        if needs:
            return shipped(question, evidence, reference_text)
        user = f"Memories:\n\n{evidence}\n\nQuestion: {question.strip()}"
        return [{"role": "system", "content": answer_module.SYSTEM_PROMPT},
                {"role": "user", "content": user}]

    answer_module.answer_messages = messages  # type: ignore[assignment]


VARIANTS: dict[str, Callable[[], None]] = {"none": lambda: None,
                                           "asked-on-when-needed": _asked_on_when_needed,
                                           "answer-first": _answer_first,
                                           "session-spans": _session_spans,
                                           "times-as-said": _times_as_said}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model", help="an installed model's name or a GGUF file")
    parser.add_argument("locomo", type=Path)
    parser.add_argument("--models-dir", type=Path)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--sessions", type=int, default=SESSIONS)
    parser.add_argument("--questions", type=int, default=QUESTIONS)
    parser.add_argument("--window", type=int, default=DEFAULT_WINDOW,
                        help="turns per extraction window (the product's default: %(default)s)")
    parser.add_argument("--out", type=Path)
    parser.add_argument("--bank", type=Path,
                        help="keep the banks in this folder; a second run reuses them (ingest "
                             "adds nothing, done windows are skipped): only questions are asked")
    parser.add_argument("--variant", choices=sorted(VARIANTS), default="none",
                        help="an answer-format experiment (issue 21 item 4), measured on vs off")
    parser.add_argument("--summarize", action="store_true",
                        help="print the summary of the rows in --out (no model is loaded)")
    parser.add_argument("--first", type=int, help="with --summarize: the first N questions")
    parser.add_argument("--twin-rule", action="store_true",
                        help="with --bank: both tiers against turns alone on every question of "
                             "cats 1-4 inside --sessions, search only (no model is loaded)")
    parser.add_argument("--speaker-name-weight", type=float,
                        help="with --twin-rule: the search setting (default: the library's)")
    args = parser.parse_args()
    if args.twin_rule:
        if args.bank is None:
            parser.error("--twin-rule reads the banks of an earlier run: give --bank")
        print(twin_rule(args.locomo, args.bank, args.sessions,
                        speaker_name_weight=args.speaker_name_weight))
        return
    if args.summarize:
        rows = read_rows(args.out.read_text(encoding="utf-8").splitlines())
        print(format_summary(args.model, summarize_rows(rows, args.first)))
        return
    VARIANTS[args.variant]()
    with tempfile.TemporaryDirectory() as folder:
        work = Path(folder) if args.bank is None else args.bank
        work.mkdir(parents=True, exist_ok=True)
        handle = args.out.open("w", encoding="utf-8") if args.out else None
        try:
            summary = run(args.model, args.locomo, models_dir=args.models_dir,
                          threads=args.threads, sessions=args.sessions, cap=args.questions,
                          out=handle, work=work, window_size=args.window)
        finally:
            if handle is not None:
                handle.close()
    print(format_summary(args.model, summary))


if __name__ == "__main__":
    main()
