"""Benchmark: greedy grammar calls with the grammar asked about the best token first
(``ramem_local.runtime.greedy_grammar``) against llama-cpp-python's own chain, in one process.

    PYTHONPATH=scripts:. .venv/bin/python scripts/bench_grammar.py BANK.db MODEL.gguf \
        LOCOMO.json [--n 8] [--threads 2]

The first ``--n`` questions of issue 51's fixed subset (``ask_subset.fixed_subset``) are read
by the analyzer and answered from their search's evidence (MiniLM from ../shared, product
defaults), each call twice in turn on the one loaded model: as llama-cpp-python's ``Llama``
(``stock``: the grammar matched against the whole vocabulary at every token) and as
``GrammarFirstLlama`` (``first``), the order alternating by question. Prints each call's
seconds both ways and whether the replies are the same text, then the medians. The model is
warmed on the first question; compare the two columns of one run, not runs.
"""

from __future__ import annotations

import argparse
import json
import statistics
from functools import partial
from pathlib import Path

from ask_subset import EMBEDDER, fixed_subset
from llama_cpp import Llama

from ramem_local import Memory, SearchDefaults, answer
from ramem_local.recall.analyzer import analyze_question
from ramem_local.runtime.greedy_grammar import GrammarFirstLlama
from ramem_local.types import Candidate, LLMCall, RecallFrame

WAYS = {"stock": Llama, "first": GrammarFirstLlama}


def analyzer_call(memory: Memory, frame: RecallFrame, conversation_id: int) -> LLMCall:
    return analyze_question(memory.llm, frame, tz=memory.tz,
                            participants=memory.store.participants(conversation_id),
                            timeline=memory.store.timeline(conversation_id)).call


def answer_call(memory: Memory, text: str, frame: RecallFrame,
                results: list[Candidate]) -> LLMCall:
    return answer.generate_answer(memory.llm, text, frame, results, memory.tz
                                  ).trace.llm_calls[-1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("bank", type=Path)
    parser.add_argument("model", type=Path)
    parser.add_argument("locomo", type=Path)
    parser.add_argument("--n", type=int, default=8)
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    samples = json.loads(args.locomo.read_text())
    seconds: dict[tuple[str, str], list[float]] = {}
    same = {"analyze": 0, "answer": 0}
    with Memory.open(args.bank, embedder=EMBEDDER, llm=args.model, llm_threads=args.threads,
                     defaults=SearchDefaults()) as memory:
        llama = memory.llm._model.llama
        replies: list = []  # every LLMResult, to compare the replies' text
        chat_json = memory.llm.chat_json

        def recorded(*call_args, **call_kwargs):
            replies.append(chat_json(*call_args, **call_kwargs))
            return replies[-1]

        memory.llm.chat_json = recorded
        for index, (sample, question) in enumerate(fixed_subset(samples)[: args.n]):
            text = question["question"]
            frame = memory.frame(text, conversation=sample)
            response = memory.search(text, conversation=sample, frame=frame)
            conversation_id = memory._conversation_id(sample)
            analyze = partial(analyzer_call, memory, frame, conversation_id)
            reply = partial(answer_call, memory, text, frame, response.results)
            if index == 0:  # warm the model and the saved prefixes outside the measurement
                analyze(), reply()
            order = list(WAYS) if index % 2 == 0 else list(reversed(WAYS))
            line = []
            for stage, call in (("analyze", analyze), ("answer", reply)):
                raw = {}
                for way in order:
                    llama.__class__ = WAYS[way]
                    record = call()
                    raw[way] = (replies[-1].raw, record.tokens_out)
                    seconds.setdefault((stage, way), []).append(record.ms / 1000)
                    line.append(f"{stage} {way} {record.ms / 1000:5.1f}s")
                same[stage] += raw["stock"] == raw["first"]
                line.append("same" if raw["stock"] == raw["first"] else "DIFFERENT")
            print(f"{text[:48]!r:52s} " + " · ".join(line), flush=True)
        llama.__class__ = GrammarFirstLlama
    asked = min(args.n, len(fixed_subset(samples)))
    for stage in ("analyze", "answer"):
        stock = statistics.median(seconds[(stage, "stock")])
        first = statistics.median(seconds[(stage, "first")])
        print(f"# {stage}: {asked} calls each way · median stock {stock:.1f} s · first "
              f"{first:.1f} s ({first / stock:.2f}x) · same reply {same[stage]} of {asked}")


if __name__ == "__main__":
    main()
