"""LoCoMo retrieval evaluation: one isolated bank per sample, every question, both modes.

A retrieval *hit* is a retrieved memory whose provenance includes one of the question's
(normalised) evidence dia_ids. Metrics (DESIGN.md §7): R@5, R@10, R@25, all-evidence R@10,
MRR@25 and D@1, per category, overall (categories 1–4), on the temporal-triggered subset
(questions where the cue detector fires) and for category 5 separately. Questions whose evidence
is empty after normalisation cannot be scored and are counted apart.
"""

from __future__ import annotations

import json
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path

from .. import LLM, Candidate, Embedder, LLMCall, Memory, SearchDefaults
from ..config import NO_DEFAULT_EMBEDDER
from ..errors import InputError
from .locomo import CATEGORY_NAMES, HEADLINE_CATEGORIES, LocomoQuestion, load_questions_with_repairs
from .metrics import (
    all_evidence_recall_at_k,
    bleu1,
    distractor_at_1,
    mrr_at_k,
    recall_at_k,
    set_f1,
    token_f1,
)
from .tuning import DEFAULT_TUNING, SearchTuning, tuned_search

METRICS = ("R@5", "R@10", "R@25", "AllR@10", "MRR@25", "D@1")
ANSWER_METRICS = ("F1", "BLEU-1", "setF1", "abstain")
DEPTH_FOR_METRICS = 25
# LoCoMo is American English: its banks read dates as a US bank does, whatever the locale of
# the machine running the evaluation.
LOCOMO_COUNTRY = "US"


@dataclass(frozen=True)
class RetrievalEvalConfig:
    """What an evaluation asks. ``tuning`` varies the retrieval that is scored; answers (with
    an LLM) are what ``ramem ask`` gives, with its own settings, whatever the tuning."""

    modes: tuple[str, ...] = ("ramem", "baseline")
    k: int = 10
    samples: tuple[str, ...] | None = None
    tuning: SearchTuning = DEFAULT_TUNING
    event_times: bool = True
    limit: int | None = None  # only the first N scorable questions of each sample


@dataclass
class QuestionResult:
    sample_id: str
    question_index: int
    category: int
    question: str
    mode: str
    triggered: bool
    grounded_range: list[str] | None
    evidence: list[str]
    retrieved: list[dict]
    metrics: dict[str, float] = field(default_factory=dict)
    answer: dict | None = None  # with an LLM: prediction, abstained, F1, BLEU-1, tokens

    def jsonl_row(self) -> dict:
        row = asdict(self)
        row.pop("metrics")
        row.pop("evidence")
        if row["answer"] is None:
            row.pop("answer")
        return row


@dataclass
class RetrievalEvalResult:
    config: RetrievalEvalConfig
    embedder: str
    results: list[QuestionResult]
    unscorable: int
    repairs: dict
    seconds: float
    ingest_seconds: float

    def summary(self) -> dict[str, dict[str, dict[str, float]]]:
        """{mode: {group: {metric: mean, "n": count}}}."""
        out: dict[str, dict[str, dict[str, float]]] = {}
        for mode in self.config.modes:
            rows = [r for r in self.results if r.mode == mode]
            groups = summary_groups(rows)
            out[mode] = {name: _means(members) for name, members in groups.items()}
        return out


def summary_groups(rows: Sequence[QuestionResult]) -> dict[str, list[QuestionResult]]:
    headline = [r for r in rows if r.category in HEADLINE_CATEGORIES]
    groups = {
        f"cat {c} {CATEGORY_NAMES[c]}": [r for r in rows if r.category == c]
        for c in sorted(HEADLINE_CATEGORIES)
    }
    groups["overall (cats 1-4)"] = headline
    groups["temporal-triggered"] = [r for r in headline if r.triggered]
    groups["cat 5 adversarial"] = [r for r in rows if r.category == 5]
    return groups


def _means(rows: Sequence[QuestionResult]) -> dict[str, float]:
    means: dict[str, float] = {"n": len(rows)}
    for metric in METRICS:
        means[metric] = sum(r.metrics[metric] for r in rows) / len(rows) if rows else float("nan")
    answered = [r.answer for r in rows if r.answer is not None]
    if answered:
        for key, name in (("f1", "F1"), ("bleu1", "BLEU-1"), ("set_f1", "setF1")):
            values = [a[key] for a in answered if a[key] is not None]
            means[name] = sum(values) / len(values) if values else float("nan")
        means["abstain"] = sum(a["abstained"] for a in answered) / len(answered)
    return means


def score_question(
    retrieved: Sequence[Candidate],
    evidence: set[str],
    evidence_session_starts: list[int],
    question: str,
) -> dict[str, float]:
    turns = [set(c.memory.source_turns) for c in retrieved]
    scores = {
        "R@5": recall_at_k(turns, evidence, 5),
        "R@10": recall_at_k(turns, evidence, 10),
        "R@25": recall_at_k(turns, evidence, 25),
        "AllR@10": all_evidence_recall_at_k(turns, evidence, 10),
        "MRR@25": mrr_at_k(turns, evidence, 25),
        "D@1": 0.0,
    }
    if retrieved:
        top = retrieved[0].memory
        scores["D@1"] = float(distractor_at_1(
            set(top.source_turns), top.content, top.persons, top.session_start, question,
            evidence, evidence_session_starts,
        ))
    return scores


def run_retrieval_eval(
    path: Path,
    embedder: Embedder | None,
    config: RetrievalEvalConfig,
    *,
    bank_dir: Path | None = None,
    progress: Callable[[str], None] | None = None,
    llm: LLM | None = None,
) -> RetrievalEvalResult:
    """Evaluate every question of the wanted samples.

    Each sample's bank is built as ``ramem ingest`` builds one (``Memory.ingest`` of the file,
    that sample only), in a temporary folder, or kept in ``bank_dir`` so that a second run with
    other retrieval settings skips the ingest (ingest is idempotent). With ``llm`` each
    question is also answered through ``Memory.ask``, the question analyzer included. Banks
    take the library's search defaults, not the user's settings: the same command gives the
    same numbers on every machine.
    """
    started = time.perf_counter()
    questions, repairs = load_questions_with_repairs(path)  # every sample, by its id
    wanted = list(config.samples) if config.samples else list(questions)
    unknown = [s for s in wanted if s not in questions]
    if unknown:
        raise InputError(f"unknown sample ids {unknown}; the file has {sorted(questions)}")
    results: list[QuestionResult] = []
    unscorable = 0
    ingest_seconds = 0.0
    with bank_folder(bank_dir) as folder:
        for sample_id in wanted:
            if progress:
                progress(f"{sample_id}: building its bank")
            bank = Path(folder) / f"{sample_id}.db"
            with Memory.open(bank, embedder=embedder, llm=llm, country=LOCOMO_COUNTRY,
                             defaults=SearchDefaults(),
                             default_embedder=NO_DEFAULT_EMBEDDER) as memory:
                tick = time.perf_counter()
                memory.ingest(path, format="locomo", conversations=[sample_id],
                              event_times=config.event_times)
                ingest_seconds += time.perf_counter() - tick
                session_of = _session_starts_by_dia_id(memory, sample_id)
                asked = 0
                for question in questions[sample_id]:
                    if not question.evidence:
                        unscorable += 1
                        continue
                    if config.limit is not None and asked >= config.limit:
                        break
                    asked += 1
                    results.extend(_ask(memory, question, session_of, config))
            if progress:
                progress(f"{sample_id}: {len(questions[sample_id])} questions done")
    return RetrievalEvalResult(
        config=config,
        embedder=embedder.name if embedder is not None else "none (BM25 only)",
        results=results,
        unscorable=unscorable,
        repairs=asdict(repairs),
        seconds=time.perf_counter() - started,
        ingest_seconds=ingest_seconds,
    )


@contextmanager
def bank_folder(bank_dir: Path | None) -> Iterator[str]:
    """``bank_dir`` (created), or a temporary folder removed afterwards."""
    if bank_dir is not None:
        bank_dir.mkdir(parents=True, exist_ok=True)
        yield str(bank_dir)
        return
    with tempfile.TemporaryDirectory() as folder:
        yield folder


def _session_starts_by_dia_id(memory: Memory, sample_id: str) -> dict[str, int]:
    """The session start of every turn of the sample, by dia_id, as its bank stored it."""
    starts: dict[str, int] = {}
    page = 1000
    offset = 0
    while records := memory.list(limit=page, offset=offset, conversation=sample_id):
        for record in records:
            if record.kind == "turn":
                starts.update(dict.fromkeys(record.source_turns, record.session_start))
        offset += page
    return starts


def _ask(memory: Memory, question: LocomoQuestion, session_of: dict[str, int],
         config: RetrievalEvalConfig) -> Iterable[QuestionResult]:
    """Both modes through ``Memory.search``, the path ``ramem search`` takes. K is raised to 25
    for R@25 and MRR@25; the first K results are the same as with ``--k K``. With an LLM, the
    answer of ``Memory.ask`` in the same mode (:func:`_answer`)."""
    evidence = set(question.evidence)
    evidence_starts = [session_of[e] for e in question.evidence if e in session_of]
    for mode in config.modes:
        response = tuned_search(memory, question.question, k=max(DEPTH_FOR_METRICS, config.k),
                                mode=mode, tuning=config.tuning)
        frame = response.trace.frame
        # The cue detector fires when the frame holds a time cue (grounded or vague).
        triggered = frame is not None and bool(frame.cues)
        grounded = None
        if frame is not None and frame.time_range is not None:
            grounded = [_iso_day(frame.time_range.start), _iso_day(frame.time_range.end - 1)]
        yield QuestionResult(
            sample_id=question.sample_id,
            question_index=question.question_index,
            category=question.category,
            question=question.question,
            mode=mode,
            triggered=triggered,
            grounded_range=grounded,
            evidence=question.evidence,
            retrieved=[
                {"memory_id": c.memory.id, "source_turns": c.memory.source_turns,
                 "list": c.list_name, "rank": rank}
                for rank, c in enumerate(response.results[: config.k], 1)
            ],
            metrics=score_question(response.results, evidence, evidence_starts,
                                   question.question),
            answer=_answer(memory, question, k=config.k, mode=mode),
        )


def _answer(memory: Memory, question: LocomoQuestion, *, k: int, mode: str) -> dict | None:
    """The answer a user gets from ``ramem ask --k K --mode MODE``: ``Memory.ask`` with its
    defaults (the question analyzer off: ``--analyze never``) searches with the question's
    frame and answers from the top K memories.
    Answer metrics (DESIGN.md §7): token F1, BLEU-1 and the paper's set F1 against the reference
    answer; for category 5 (no reference answer) whether the model abstained. Tokens and
    milliseconds are those of its calls (the analysis, where asked, and the answer). None without
    an LLM."""
    if memory.llm is None:
        return None
    answer = memory.ask(question.question, k=k, mode=mode)
    prediction = "" if answer.abstained else answer.answer
    reference = question.answer
    usage = LLMCall.total(answer.trace.llm_calls)
    return {
        "prediction": answer.answer,
        "abstained": answer.abstained,
        "citations": answer.citations,
        "reference": reference,
        "f1": token_f1(prediction, reference) if reference is not None else None,
        "bleu1": bleu1(prediction, reference) if reference is not None else None,
        "set_f1": set_f1(prediction, reference) if reference is not None else None,
        "tokens_in": usage.tokens_in,
        "tokens_out": usage.tokens_out,
        "ms": usage.ms,
    }


def _iso_day(ts: int) -> str:
    return time.strftime("%Y-%m-%d", time.gmtime(ts))


def write_jsonl(result: RetrievalEvalResult, out: Path) -> None:
    with out.open("w", encoding="utf-8") as handle:
        for row in result.results:
            handle.write(json.dumps(row.jsonl_row(), ensure_ascii=False) + "\n")


def format_table(result: RetrievalEvalResult, metrics: Sequence[str] = METRICS) -> str:
    """Modes side by side, one row per group, with the n of each group."""
    summary = result.summary()
    modes = result.config.modes
    header = f"{'group':<24}{'n':>5}  " + "  ".join(
        f"{m + ' ' + metric:>{max(len(m) + len(metric) + 1, 8)}}"
        for metric in metrics for m in modes
    )
    lines = [header, "-" * len(header)]
    for group in summary[modes[0]]:
        n = int(summary[modes[0]][group]["n"])
        cells = []
        for metric in metrics:
            for mode in modes:
                value = summary[mode][group].get(metric, float("nan"))
                width = max(len(mode) + len(metric) + 1, 8)
                cells.append(f"{value:>{width}.3f}" if n else f"{'-':>{width}}")
        lines.append(f"{group:<24}{n:>5}  " + "  ".join(cells))
    return "\n".join(lines)
