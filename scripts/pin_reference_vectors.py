"""Pin reference vectors for a registry embedder from the numpy forward pass of its weights.

    .venv/bin/python scripts/pin_reference_vectors.py all-mpnet-base-v2 /tmp/all-mpnet-base-v2

FOLDER is the unpacked sentence-transformers folder (config.json, model.safetensors,
tokenizer.json). Each sentence of all-minilm-l6-v2's reference file is tokenised as the
embedder does (no padding, truncated at the registry's max_length), run through
``bert_onnx.reference_forward`` (numpy, float64), pooled and normalised as the registry entry
says, rounded to 7 decimals and written to ``ramem_local/data/NAME.reference.json``.

Used where no independent ONNX export of the model is available (all-mpnet-base-v2): the pinned
vectors then guard against corrupted or swapped weights and against later changes of the
converter, not against a mistake shared by the converter and the numpy forward.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
from tokenizers import Tokenizer

from ramem_local.runtime.bert_onnx import BertConfig, load_weights, reference_forward
from ramem_local.runtime.embedder import pool
from ramem_local.runtime.install import DATA_DIR
from ramem_local.runtime.jsonfile import read_json
from ramem_local.runtime.registry import load_registry

MIN_COSINE = 0.9999
SENTENCES_FROM = "all-minilm-l6-v2.reference.json"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("name", help="registry embedder name")
    parser.add_argument("folder", type=Path, help="unpacked sentence-transformers folder")
    args = parser.parse_args()

    entry = load_registry()[args.name]
    config = BertConfig.from_file(args.folder / "config.json")
    weights = load_weights(args.folder / "model.safetensors", config)
    tokenizer = Tokenizer.from_file(str(args.folder / "tokenizer.json"))
    tokenizer.no_padding()
    tokenizer.enable_truncation(max_length=int(entry.max_length or config.longest_input))
    texts = [s["text"] for s in read_json(DATA_DIR / SENTENCES_FROM)["sentences"]]
    sentences = []
    for text in texts:
        ids = np.array([tokenizer.encode(text).ids], dtype=np.int64)
        mask = np.ones_like(ids)
        vector = pool(reference_forward(config, weights, ids, mask), mask,
                      entry.pooling or "mean")[0].astype(np.float64)
        if entry.normalize:
            vector /= np.linalg.norm(vector)
        sentences.append({"text": text, "vector": [round(float(v), 7) for v in vector]})
    pinned = {
        "model": args.name,
        "about": (f"Vectors of {args.name} computed by the numpy forward pass of its safetensors "
                  f"weights (ramem_local.runtime.bert_onnx.reference_forward, written from the "
                  f"published architecture; no independent ONNX export was available), max "
                  f"length {entry.max_length}, {entry.pooling} pooling"
                  f"{', normalised' if entry.normalize else ''}, rounded to 7 decimals "
                  f"(scripts/pin_reference_vectors.py). A converted model must reproduce them "
                  f"(cosine >= {MIN_COSINE}) before it is installed."),
        "min_cosine": MIN_COSINE,
        "sentences": sentences,
    }
    out = DATA_DIR / f"{args.name}.reference.json"
    out.write_text(_one_vector_a_line(pinned))
    print(f"wrote {out}")


def _one_vector_a_line(pinned: dict) -> str:
    """The layout of the other reference files: each sentence's text and vector on two lines."""
    head = {k: v for k, v in pinned.items() if k != "sentences"}
    lines = [f" {json.dumps(k)}: {json.dumps(v)}," for k, v in head.items()]
    rows = [f'  {{"text": {json.dumps(s["text"])},\n   "vector": {json.dumps(s["vector"])}}}'
            for s in pinned["sentences"]]
    return "{\n" + "\n".join(lines) + '\n "sentences": [\n' + ",\n".join(rows) + "\n ]\n}\n"


if __name__ == "__main__":
    main()
