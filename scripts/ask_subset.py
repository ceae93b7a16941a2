"""A fixed LLM subset of the ask path (analyzer + retrieval + answer), for before/after checks.

LoCoMo dev conv-26, the first N questions of categories 1-4 that have evidence, asked through
``Memory.ask`` with a local GGUF (``--analyze``: never by default, as for a user; ``auto``
or ``always`` to compare; ``--read-already``: the questions of every sample whose time, order,
count or event the deterministic reading reads, where ``auto`` skips it; ``--fixed``: issue
51's fixed subset, :func:`fixed_subset`, 100 questions of categories 1-4 and 30 of category 5).
Prints one JSON line per question and a summary: R@10 of the evidence the answerer saw, token
F1 of the answer, the share of abstentions and the median seconds per question (per category
5 too, where abstaining is right).

``--variants none,answer-first`` asks each question once per variant of the answer prompt
(``scripts/llm_subset.py``'s ``VARIANTS``), in turn, so that a run stopped early still compares
the same questions: ``none`` as shipped, ``answer-first`` with the reply's keys in the order
answer, citations, reasoning.

    PYTHONPATH=. python scripts/ask_subset.py BANK.db MODEL.gguf LOCOMO.json --n 20 --out rows.json
    PYTHONPATH=. python scripts/ask_subset.py BANK.db MODEL.gguf LOCOMO.json --fixed \
        --analyze never --variants none,answer-first --threads 2

``--categories 2`` asks only the questions of those LoCoMo categories (temporal here); each
row holds the model calls' tokens in and out.

``BANK.db`` is built on first use (MiniLM from ../shared, the whole LoCoMo file ingested).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import statistics
import time
from collections.abc import Iterator
from pathlib import Path

from llm_subset import VARIANTS as PROMPT_VARIANTS  # scripts/: the same prompt variants

from ramem_local import Memory, SearchDefaults, answer
from ramem_local.eval.metrics import recall_at_k, token_f1
from ramem_local.recall.analyzer import analysis_can_decide

EMBEDDER = Path(__file__).resolve().parents[1].parent / "shared/models/all-MiniLM-L6-v2"
SAMPLE = "conv-26"
# Issue 51's fixed subset, chosen once (2026-12-06): of each of the file's samples, in the file's
# order, the first FIXED_ANSWERABLE questions of categories 1-4 that have evidence and the first
# FIXED_ADVERSARIAL of category 5 (LoCoMo dev: 5 samples, 100 + 30).
FIXED_ANSWERABLE = 20
FIXED_ADVERSARIAL = 6


def fixed_subset(samples: list[dict]) -> list[tuple[str, dict]]:
    """(sample id, question) of :data:`FIXED_ANSWERABLE` + :data:`FIXED_ADVERSARIAL` per sample."""
    chosen = []
    for sample in samples:
        answerable = [q for q in sample["qa"]
                      if q.get("category") in (1, 2, 3, 4) and q.get("evidence")]
        adversarial = [q for q in sample["qa"] if q.get("category") == 5]
        chosen += [(sample["sample_id"], q) for q in
                   answerable[:FIXED_ANSWERABLE] + adversarial[:FIXED_ADVERSARIAL]]
    return chosen


@contextlib.contextmanager
def prompt_variant(name: str) -> Iterator[None]:
    """The answer prompt of ``llm_subset``'s variant ``name`` while inside, as shipped after."""
    shipped = (answer.SYSTEM_PROMPT, answer.answer_schema, answer.memory_block,
               answer.answer_messages)
    PROMPT_VARIANTS[name]()
    try:
        yield
    finally:
        (answer.SYSTEM_PROMPT, answer.answer_schema, answer.memory_block,
         answer.answer_messages) = shipped


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("bank", type=Path)
    parser.add_argument("model", type=Path)
    parser.add_argument("locomo", type=Path)
    parser.add_argument("--n", type=int, help="how many questions (default 20; with --fixed, all)")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--analyze", default="never",
                        help="when the analyzer reads the question (Memory.ask's analyze: never, "
                             "the product's default, auto, always); several, comma-separated, "
                             "ask each question once per setting, in turn")
    parser.add_argument("--read-already", action="store_true",
                        help="instead of conv-26's first N: the first N questions of categories "
                             "1-4 of every sample whose time, order, count or event the "
                             "deterministic reading reads (where auto skips the analyzer)")
    parser.add_argument("--not-read", action="store_true",
                        help="only the questions whose time, order, count and event the "
                             "deterministic reading leaves open (where auto asks the analyzer)")
    parser.add_argument("--fixed", action="store_true",
                        help="issue 51's fixed subset (fixed_subset): 100 + 30 questions, the "
                             "first --n of them")
    parser.add_argument("--start", type=int, default=0,
                        help="skip the first START of the questions chosen (resume a run)")
    parser.add_argument("--variants", default="none",
                        help=f"answer prompts to ask each question with, in turn: "
                             f"{', '.join(PROMPT_VARIANTS)}")
    parser.add_argument("--categories", default="1,2,3,4,5",
                        help="only the questions of these LoCoMo categories (comma-separated)")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    variants = args.variants.split(",")
    settings = args.analyze.split(",")
    if unknown := set(settings) - {"auto", "always", "never"}:
        parser.error(f"unknown --analyze setting(s) {', '.join(sorted(unknown))}")
    if unknown := set(variants) - set(PROMPT_VARIANTS):
        parser.error(f"unknown variant(s) {', '.join(sorted(unknown))}")
    samples = json.loads(args.locomo.read_text())
    asked = [(c["sample_id"], q) for c in samples for q in c["qa"]
             if (c["sample_id"] == SAMPLE or args.read_already)
             and q.get("category") in (1, 2, 3, 4) and q.get("evidence")]
    if args.fixed:
        asked = fixed_subset(samples)
    categories = {int(c) for c in args.categories.split(",")}
    asked = [(sample, q) for sample, q in asked if q.get("category") in categories]
    args.n = args.n or (len(asked) if args.fixed else 20)
    rows = []
    with Memory.open(args.bank, embedder=EMBEDDER, llm=args.model, llm_threads=args.threads,
                     defaults=SearchDefaults()) as memory:  # not the user's config
        if memory.store.memory_count() == 0:
            memory.ingest(args.locomo)
        if args.read_already:
            asked = [(sample, q) for sample, q in asked
                     if not analysis_can_decide(memory.frame(q["question"],
                                                             conversation=sample))]
        if args.not_read:
            asked = [(sample, q) for sample, q in asked
                     if analysis_can_decide(memory.frame(q["question"], conversation=sample))]
        for sample, question in asked[args.start:args.n]:
            for variant in variants:
                for setting in settings:
                    with prompt_variant(variant):
                        rows.append(ask_one(memory, sample, question, setting, variant))
                    print(json.dumps(rows[-1], ensure_ascii=False), flush=True)
    if args.out:
        args.out.write_text(json.dumps(rows, ensure_ascii=False, indent=1))
    for variant in variants:
        for setting in settings:
            summarise(f"{variant} / analyze {setting}",
                      [r for r in rows if r["variant"] == variant and r["analyze"] == setting])


def ask_one(memory: Memory, sample: str, question: dict, analyze: str, variant: str) -> dict:
    started = time.time()
    answered = memory.ask(question["question"], conversation=sample, analyze=analyze)
    seen = [set(c.memory.source_turns) for c in answered.evidence[:10]]
    gold = str(question.get("answer", question.get("adversarial_answer", "")))
    return {
        "question": question["question"], "answer": answered.answer, "gold": gold,
        "category": question.get("category"),
        "f1": token_f1(answered.answer, gold),
        "r10": recall_at_k(seen, set(question.get("evidence") or []), 10),
        "abstained": answered.abstained,
        "analyzer": answered.trace.frame.llm_proposal if answered.trace.frame else None,
        "seconds": round(time.time() - started, 1),
        "analyzed": any(c.stage == "analyze" for c in answered.trace.llm_calls),
        "tokens_in": sum(c.tokens_in or 0 for c in answered.trace.llm_calls),
        "tokens_out": sum(c.tokens_out or 0 for c in answered.trace.llm_calls),
        "sample": sample, "variant": variant, "analyze": analyze,
    }


def summarise(variant: str, rows: list[dict]) -> None:
    answerable = [r for r in rows if r["category"] != 5]
    adversarial = [r for r in rows if r["category"] == 5]
    if answerable:
        n = len(answerable)
        print(f"{variant}: cats 1-4 n {n} · R@10 {sum(r['r10'] for r in answerable) / n:.3f} · "
              f"F1 {sum(r['f1'] for r in answerable) / n:.3f} · "
              f"abstained {sum(r['abstained'] for r in answerable) / n:.3f} · "
              f"median {statistics.median(r['seconds'] for r in answerable):.1f} s")
    if adversarial:
        n = len(adversarial)
        print(f"{variant}: cat 5 n {n} · abstained "
              f"{sum(r['abstained'] for r in adversarial) / n:.3f} · "
              f"median {statistics.median(r['seconds'] for r in adversarial):.1f} s")


if __name__ == "__main__":
    main()
