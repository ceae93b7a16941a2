"""Do two embedders agree? Cosine of their vectors for every turn of a conversation file.

    .venv/bin/python scripts/compare_embedders.py ../shared/data/locomo/locomo_dev.json \
        ../shared/models/all-MiniLM-L6-v2 all-minilm-l6-v2

Used to check a converted model (`ramem models install` / `models import`) against a reference
ONNX export of the same weights: both embed every turn text of FILE (LoCoMo JSON or JSONL);
prints the lowest and mean cosine, the number of turns below --min-cosine, and each embedder's
time (compare the two within one run: these machines are noisy). Exit status 1 when any turn is
below --min-cosine.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

from ramem_local.ingest.formats import read_conversations
from ramem_local.models import open_embedder


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("file", type=Path, help="LoCoMo JSON or JSONL of turns")
    parser.add_argument("reference", help="embedder NAME or DIR")
    parser.add_argument("candidate", help="embedder NAME or DIR")
    parser.add_argument("--models-dir", help="where NAMEs are installed")
    parser.add_argument("--min-cosine", type=float, default=0.9999)
    args = parser.parse_args()

    texts = [turn.text for c in read_conversations(args.file) for turn in c.turns]
    vectors, seconds = [], []
    for name in (args.reference, args.candidate):
        embedder = open_embedder(name, args.models_dir)
        start = time.perf_counter()
        vectors.append(embedder.embed_documents(texts).astype(np.float64))
        seconds.append(time.perf_counter() - start)
    a, b = vectors
    cosines = (a * b).sum(axis=1) / (np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1))
    below = int((cosines < args.min_cosine).sum())
    print(f"{'turns':<10} {'min cosine':>11} {'mean cosine':>12} {'< ' + str(args.min_cosine):>10} "
          f"{'reference s':>12} {'candidate s':>12}")
    print(f"{len(texts):<10} {cosines.min():>11.7f} {cosines.mean():>12.7f} {below:>10} "
          f"{seconds[0]:>12.1f} {seconds[1]:>12.1f}")
    return 1 if below else 0


if __name__ == "__main__":
    sys.exit(main())
