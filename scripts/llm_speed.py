"""How fast a local GGUF runs here: load seconds, prompt tokens/s, generated tokens/s.

Loads the model as ``ramem --llm`` does (the registry's context length, llama.cpp through
llama-cpp-python, one thread per physical core unless ``--threads``), evaluates a fixed
chat-like prompt (762 tokens with Qwen2.5's tokenizer), then decodes 64 tokens greedily.
Prints one line of JSON.

    PYTHONPATH=. python scripts/llm_speed.py qwen2.5-coder-0.5b-instruct --models-dir DIR
"""

from __future__ import annotations

import argparse
import json
import os
import time

from ramem_local.runtime.llama import physical_cores
from ramem_local.runtime.loading import llm_file
from ramem_local.runtime.registry import load_registry, resolve_models_dir

GENERATED_TOKENS = 64
PROMPT = "\n".join(
    f"[turn {turn}] Maya: On day {turn} we hiked to the lake with Tom and Ana, cooked lentils "
    f"and talked about the July trip to Innsbruck."
    for turn in range(1, 21)
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model", help="a registry name installed in the models folder, or a GGUF")
    parser.add_argument("--models-dir")
    parser.add_argument("--threads", type=int, default=physical_cores())
    args = parser.parse_args()
    from llama_cpp import Llama

    path = llm_file(args.model, resolve_models_dir(args.models_dir, None))
    entry = load_registry().get(args.model)
    context = entry.context_length if entry and entry.context_length else 8192
    start = time.perf_counter()
    llama = Llama(model_path=str(path), n_ctx=context, n_threads=args.threads, verbose=False)
    loaded = time.perf_counter()
    prompt = llama.tokenize(PROMPT.encode("utf-8"))
    first_token = finished = loaded
    for count, _ in enumerate(llama.generate(prompt, temp=0.0), start=1):
        if count == 1:
            first_token = time.perf_counter()
        if count == GENERATED_TOKENS + 1:
            finished = time.perf_counter()
            break
    print(json.dumps({
        "model": args.model, "file_bytes": path.stat().st_size, "n_ctx": context,
        "threads": args.threads, "load_s": round(loaded - start, 2),
        "prompt_tokens": len(prompt),
        "prompt_tokens_per_s": round(len(prompt) / (first_token - loaded), 1),
        "generated_tokens": GENERATED_TOKENS,
        "generated_tokens_per_s": round(GENERATED_TOKENS / (finished - first_token), 1),
        "load_average_1min": round(os.getloadavg()[0], 2),
    }))


if __name__ == "__main__":
    main()
