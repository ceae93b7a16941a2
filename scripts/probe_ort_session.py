"""Probe: what creating an embedder's onnxruntime session costs, by session options (a table).

    PYTHONPATH=. .venv/bin/python scripts/probe_ort_session.py \
        --embedder ../shared/models/all-MiniLM-L6-v2 --runs 5

Each configuration creates one session in a new process (so nothing is warm but the page
cache), runs one query and a batch of 16 texts, and reports the median session-creation time,
the query and batch times, and the largest difference of its last hidden state from the model
file's at ORT_ENABLE_ALL (what main ran before the graph cache). Configurations alternate run
by run, so all see the same load:

- file/ALL, file/EXTENDED, file/BASIC, file/DISABLE: model.onnx at each optimisation level;
- file/ALL/no-prepack: the same, MatMul weights not prepacked;
- cached/DISABLE: the graph :mod:`ramem_local.runtime.optimized_graph` saves (EXTENDED, weights
  in a file beside it), loaded with optimisations off, as ``OnnxEmbedder`` does;
- cached/DISABLE/no-prepack: the same, not prepacked.

The saved graph is written into a scratch folder under --work-dir (a copy of the weights).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

CHILD = """
import json, sys, time
import numpy as np, onnxruntime as ort
from tokenizers import Tokenizer
path, level, prepack, tokenizer_path, out = sys.argv[1:6]
texts = json.loads(sys.argv[6])
options = ort.SessionOptions()
options.intra_op_num_threads = 2
options.inter_op_num_threads = 1
options.log_severity_level = 3
options.graph_optimization_level = getattr(ort.GraphOptimizationLevel, level)
if prepack == "no":
    options.add_session_config_entry("session.disable_prepacking", "1")
tokenizer = Tokenizer.from_file(tokenizer_path)
tokenizer.no_padding()
tokenizer.enable_truncation(max_length=256)
def run(batch):
    encodings = tokenizer.encode_batch(batch)
    width = max(len(e.ids) for e in encodings)
    ids = np.zeros((len(batch), width), np.int64)
    mask = np.zeros_like(ids)
    for row, encoding in enumerate(encodings):
        ids[row, :len(encoding.ids)] = encoding.ids
        mask[row, :len(encoding.ids)] = 1
    return session.run(["last_hidden_state"], {"input_ids": ids, "attention_mask": mask,
                                                "token_type_ids": np.zeros_like(ids)})[0]
started = time.perf_counter()
session = ort.InferenceSession(path, options, providers=["CPUExecutionProvider"])
created = time.perf_counter()
query = run(texts[:1])
queried = time.perf_counter()
batch = run(texts[1:])
batched = time.perf_counter()
np.save(out, np.concatenate([query.ravel(), batch.ravel()]))
print(json.dumps({"session": created - started, "query": queried - created,
                  "batch of 16": batched - queried}))
"""

TEXTS = ["Where did I go hiking in May?"] + [
    f"Entry {index}: walked to the bakery in the rain, then called Nils about the trip to the "
    f"lake; {'the view was clear' if index % 2 else 'nothing much else happened'}."
    for index in range(16)]


def save_cached_graph(model: Path, folder: Path) -> Path:
    """The graph optimized_graph keeps, saved as it saves it."""
    from ramem_local.runtime import optimized_graph

    optimized_graph._session(model, 2, save_to=folder / optimized_graph.GRAPH_FILE)
    return folder / optimized_graph.GRAPH_FILE


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--embedder", type=Path, required=True, help="a model folder")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--work-dir", type=Path, default=Path(tempfile.gettempdir()))
    args = parser.parse_args()
    model = args.embedder / "model.onnx"
    with tempfile.TemporaryDirectory(dir=args.work_dir) as scratch:
        cached = save_cached_graph(model, Path(scratch))
        configurations = {
            "file/ALL": (model, "ORT_ENABLE_ALL", "yes"),
            "file/EXTENDED": (model, "ORT_ENABLE_EXTENDED", "yes"),
            "file/BASIC": (model, "ORT_ENABLE_BASIC", "yes"),
            "file/DISABLE": (model, "ORT_DISABLE_ALL", "yes"),
            "file/ALL/no-prepack": (model, "ORT_ENABLE_ALL", "no"),
            "cached/DISABLE": (cached, "ORT_DISABLE_ALL", "yes"),
            "cached/DISABLE/no-prepack": (cached, "ORT_DISABLE_ALL", "no"),
        }
        times: dict[str, list[dict[str, float]]] = {name: [] for name in configurations}
        outputs = {name: Path(scratch) / f"{index}.npy"
                   for index, name in enumerate(configurations)}
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        for run in range(args.runs):
            order = list(configurations.items())
            for name, (path, level, prepack) in order if run % 2 == 0 else order[::-1]:
                done = subprocess.run(
                    [sys.executable, "-c", CHILD, str(path), level, prepack,
                     str(args.embedder / "tokenizer.json"), str(outputs[name]),
                     json.dumps(TEXTS)],
                    check=True, capture_output=True, text=True, env=env)
                times[name].append(json.loads(done.stdout.strip().splitlines()[-1]))
        import numpy as np

        reference = np.load(outputs["file/ALL"])
        print(f"# {args.embedder.name}, {args.runs} runs, load average "
              f"{os.getloadavg()[0]:.1f} after the run; times in ms (median)")
        print(f"{'configuration':<27} {'session':>8} {'query':>7} {'batch16':>8}  max |diff|")
        for name in configurations:
            medians = [statistics.median(run[key] for run in times[name]) * 1000
                       for key in ("session", "query", "batch of 16")]
            difference = float(np.max(np.abs(np.load(outputs[name]) - reference)))
            print(f"{name:<27} {medians[0]:>8.0f} {medians[1]:>7.1f} {medians[2]:>8.0f}  "
                  f"{difference:.2e}")


if __name__ == "__main__":
    main()
