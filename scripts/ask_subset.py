"""A fixed LLM subset of the ask path (analyzer + retrieval + answer), for before/after checks.

LoCoMo dev conv-26, the first N questions of categories 1-4 that have evidence, asked through
``Memory.ask`` with a local GGUF (the analyzer runs, as for a user; ``--analyze auto|never``
to skip it; ``--read-already``: the questions of every sample whose time, order, count or
event the deterministic reading reads, where ``auto`` skips it).
Prints one JSON line per question and a summary: R@10 of the evidence the answerer saw, token
F1 of the answer, the share of abstentions and the median seconds per question.

    PYTHONPATH=. python scripts/ask_subset.py BANK.db MODEL.gguf LOCOMO.json --n 20 --out rows.json

``BANK.db`` is built on first use (MiniLM from ../shared, the whole LoCoMo file ingested).
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path

from ramem_local import Memory, SearchDefaults
from ramem_local.eval.metrics import recall_at_k, token_f1
from ramem_local.recall.analyzer import analysis_can_decide

EMBEDDER = Path(__file__).resolve().parents[1].parent / "shared/models/all-MiniLM-L6-v2"
SAMPLE = "conv-26"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("bank", type=Path)
    parser.add_argument("model", type=Path)
    parser.add_argument("locomo", type=Path)
    parser.add_argument("--n", type=int, default=20)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--analyze", choices=["always", "auto", "never"], default="always",
                        help="when the analyzer reads the question (Memory.ask's analyze)")
    parser.add_argument("--read-already", action="store_true",
                        help="instead of conv-26's first N: the first N questions of categories "
                             "1-4 of every sample whose time, order, count or event the "
                             "deterministic reading reads (where auto skips the analyzer)")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    samples = json.loads(args.locomo.read_text())
    asked = [(c["sample_id"], q) for c in samples for q in c["qa"]
             if (c["sample_id"] == SAMPLE or args.read_already)
             and q.get("category") in (1, 2, 3, 4) and q.get("evidence")]
    rows = []
    with Memory.open(args.bank, embedder=EMBEDDER, llm=args.model, llm_threads=args.threads,
                     defaults=SearchDefaults()) as memory:  # not the user's config
        if memory.store.memory_count() == 0:
            memory.ingest(args.locomo)
        if args.read_already:
            asked = [(sample, q) for sample, q in asked
                     if not analysis_can_decide(memory.frame(q["question"],
                                                             conversation=sample))]
        for sample, question in asked[: args.n]:
            started = time.time()
            answer = memory.ask(question["question"], conversation=sample, analyze=args.analyze)
            seen = [set(c.memory.source_turns) for c in answer.evidence[:10]]
            rows.append({
                "question": question["question"], "answer": answer.answer,
                "gold": str(question["answer"]),
                "f1": token_f1(answer.answer, str(question["answer"])),
                "r10": recall_at_k(seen, set(question["evidence"]), 10),
                "abstained": answer.abstained,
                "analyzer": answer.trace.frame.llm_proposal if answer.trace.frame else None,
                "seconds": round(time.time() - started, 1),
                "analyzed": any(c.stage == "analyze" for c in answer.trace.llm_calls),
                "sample": sample,
            })
            print(json.dumps(rows[-1], ensure_ascii=False), flush=True)
    if args.out:
        args.out.write_text(json.dumps(rows, ensure_ascii=False, indent=1))
    n = len(rows)
    print(f"n {n} · R@10 {sum(r['r10'] for r in rows) / n:.3f} · "
          f"F1 {sum(r['f1'] for r in rows) / n:.3f} · "
          f"abstained {sum(r['abstained'] for r in rows) / n:.3f} · "
          f"median {statistics.median(r['seconds'] for r in rows):.1f} s")


if __name__ == "__main__":
    main()
