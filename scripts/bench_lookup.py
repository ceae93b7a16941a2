"""Benchmark: prompt lookup decoding (llama-cpp-python's ``LlamaPromptLookupDecoding``) on the
answer call, against the runtime as shipped, in one process.

    PYTHONPATH=scripts:. .venv/bin/python scripts/bench_lookup.py BANK.db MODEL.gguf \
        LOCOMO.json [--n 4] [--threads 2] [--pred 10,4]

Issue 51 asks whether drafting the answer's next tokens from the prompt (answers copy words
from the evidence) makes the answer faster at the same answers. The first ``--n`` questions of
the fixed subset (``ask_subset.fixed_subset``) are searched once (MiniLM from ../shared,
product defaults), and their answer messages and grammar sent to one loaded model per way,
each evaluating the whole prompt (no saved prefix, so the ways differ only in decoding):
``plain`` (``GrammarFirstLlama``, as ramem loads it) and ``lookup-N`` (the same with a draft of
N tokens looked up in the prompt; llama-cpp-python then computes the logits of every prompt
token, which a draft needs). The ways take turns per question. Prints each call's seconds and
whether its reply is the plain one's text, then the medians.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path

from ask_subset import EMBEDDER, fixed_subset
from llama_cpp.llama_speculative import LlamaPromptLookupDecoding

from ramem_local import Memory, SearchDefaults, answer
from ramem_local.runtime.greedy_grammar import GrammarFirstLlama
from ramem_local.runtime.llama import _compile_grammar, prepare_messages

CONTEXT = 4096


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("bank", type=Path)
    parser.add_argument("model", type=Path)
    parser.add_argument("locomo", type=Path)
    parser.add_argument("--n", type=int, default=4)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--pred", default="10,4", help="draft lengths to try")
    args = parser.parse_args()
    samples = json.loads(args.locomo.read_text())
    requests = []
    with Memory.open(args.bank, embedder=EMBEDDER, defaults=SearchDefaults()) as memory:
        for sample, question in fixed_subset(samples)[: args.n]:
            text = question["question"]
            frame = memory.frame(text, conversation=sample)
            response = memory.search(text, conversation=sample, frame=frame)
            evidence, shown = answer.format_evidence(response.results, memory.tz)
            reference = answer.reference_day_text(frame.reference_time, memory.tz)
            requests.append((text, answer.answer_messages(text, evidence, reference),
                             answer.answer_schema(shown)))
    common = {"model_path": str(args.model), "n_ctx": CONTEXT, "n_threads": args.threads,
              "n_threads_batch": args.threads, "seed": 0, "verbose": False}
    ways = {"plain": GrammarFirstLlama(**common)}
    for size in (int(n) for n in args.pred.split(",")):
        # logits_all=True as well: llama-cpp-python 0.3.36 sizes its score buffer by the
        # argument, not by the draft's need, and a prompt past n_batch then fails to eval.
        ways[f"lookup-{size}"] = GrammarFirstLlama(
            **common, logits_all=True,
            draft_model=LlamaPromptLookupDecoding(num_pred_tokens=size))
    seconds: dict[str, list[float]] = {name: [] for name in ways}
    same = dict.fromkeys(ways, 0)
    for index, (text, messages, schema) in enumerate(requests):
        _, grammar = _compile_grammar(json.dumps(schema))
        names = list(ways) if index % 2 == 0 else list(reversed(ways))
        replies = {}
        for name in names:
            llama = ways[name]
            llama.reset()
            started = time.perf_counter()
            reply = llama.create_chat_completion(
                messages=prepare_messages(messages, "none"), grammar=grammar, temperature=0.0,
                seed=0, max_tokens=512, repeat_penalty=1.1)
            seconds[name].append(time.perf_counter() - started)
            replies[name] = reply["choices"][0]["message"]["content"]
        for name in ways:
            same[name] += replies[name] == replies["plain"]
        cells = [f"{name} {seconds[name][-1]:5.1f}s"
                 + ("" if replies[name] == replies["plain"] else " (differs)") for name in ways]
        print(f"{text[:48]!r:52s} " + " · ".join(cells), flush=True)
    plain = statistics.median(seconds["plain"])
    for name in ways:
        median = statistics.median(seconds[name])
        print(f"# {name}: median {median:.1f} s ({median / plain:.2f}x plain) · the plain reply "
              f"{same[name]} of {len(requests)}")


if __name__ == "__main__":
    main()
