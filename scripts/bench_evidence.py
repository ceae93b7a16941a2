"""Benchmark: the answer call with the evidence as shipped against a variant, in one process.

    PYTHONPATH=. .venv/bin/python scripts/bench_evidence.py BANK.db MODEL.gguf LOCOMO.json \
        [--variant session-spans] [--n 10] [--threads 2]

The first ``--n`` questions of issue 51's fixed subset (``ask_subset.fixed_subset``) whose time,
order, count and event the deterministic reading leaves open are searched once each (MiniLM
from ../shared, product defaults, no analyzer), then answered twice in turn from the same
evidence: with the evidence as shipped and with ``--variant`` (``llm_subset.VARIANTS``: the
prompt or the evidence as it was). Prints, per question and in all, the answer call's tokens
in and out and its seconds. The model is loaded once and warmed on the first question; the two
answers of a question run back to back, so a machine that slows down slows both (compare
ratios, not seconds across runs).
"""

from __future__ import annotations

import argparse
import json
import statistics
from pathlib import Path

from ask_subset import EMBEDDER, fixed_subset, prompt_variant
from llm_subset import VARIANTS

from ramem_local import Memory, SearchDefaults, answer
from ramem_local.recall.analyzer import analysis_can_decide


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("bank", type=Path)
    parser.add_argument("model", type=Path)
    parser.add_argument("locomo", type=Path)
    parser.add_argument("--variant", default="session-spans", choices=sorted(VARIANTS))
    parser.add_argument("--n", type=int, default=10)
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    samples = json.loads(args.locomo.read_text())
    rows = []
    with Memory.open(args.bank, embedder=EMBEDDER, llm=args.model, llm_threads=args.threads,
                     defaults=SearchDefaults()) as memory:
        asked = [(sample, q) for sample, q in fixed_subset(samples)
                 if analysis_can_decide(memory.frame(q["question"], conversation=sample))]
        for index, (sample, question) in enumerate(asked[: args.n]):
            text = question["question"]
            frame = memory.frame(text, conversation=sample)
            response = memory.search(text, conversation=sample, frame=frame)
            if index == 0:  # load and warm the model outside the measurement
                answer.generate_answer(memory.llm, text, frame, response.results, memory.tz)
            for name in ("none", args.variant):
                with prompt_variant(name):
                    given = answer.generate_answer(memory.llm, text, frame, response.results,
                                                   memory.tz)
                call = given.trace.llm_calls[-1]
                rows.append({"question": text, "variant": name, "tokens_in": call.tokens_in,
                             "tokens_out": call.tokens_out, "seconds": call.ms / 1000,
                             "answer": given.answer})
                print(f"{name:>14}  in {call.tokens_in:5d}  out {call.tokens_out:4d}  "
                      f"{call.ms / 1000:6.1f} s  {text[:50]!r} -> {given.answer[:40]!r}",
                      flush=True)
    for name in ("none", args.variant):
        mine = [r for r in rows if r["variant"] == name]
        print(f"# {name}: {len(mine)} answers · tokens in median "
              f"{statistics.median(r['tokens_in'] for r in mine):.0f} · out median "
              f"{statistics.median(r['tokens_out'] for r in mine):.0f} · seconds median "
              f"{statistics.median(r['seconds'] for r in mine):.1f}")


if __name__ == "__main__":
    main()
