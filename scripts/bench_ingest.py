"""Benchmark: no-LLM ingest settings on vs off, against the embedder alone (prints a table).

    .venv/bin/python scripts/bench_ingest.py ../shared/data/locomo/locomo_dev.json \
        --embedder ../shared/models/all-MiniLM-L6-v2

Each variant ingests every LoCoMo sample through ``ingest_conversations`` (what ``ramem ingest``
runs after reading the file) into its own fresh bank; the references embed each sample's turn
texts with ``embed_documents`` alone. Variants and samples are interleaved in a shuffled order
for ``--rounds`` rounds, and each (variant, sample) keeps its best wall time and its best CPU
time (all threads of this process): on a shared machine the load changes within seconds, and
CPU time is the steadier measure of work (but hides what extra threads buy).

Variants: ``chars`` sorts a call's texts by characters (the embedder before issue 9), ``tokens``
by token count (now); ``bs`` is the embedder's texts per graph run; ``batch`` the turns ingest
embeds and writes together; ``t`` the onnxruntime threads.
"""

from __future__ import annotations

import argparse
import os
import random
import tempfile
import time
from dataclasses import dataclass
from datetime import timezone
from pathlib import Path

import numpy as np

from ramem_local import Memory
from ramem_local.ingest.formats import read_conversations
from ramem_local.ingest.pipeline import ingest_conversations
from ramem_local.runtime.embedder import OnnxEmbedder, postprocess, spec_from_folder
from ramem_local.store import Store


class CharSorted(OnnxEmbedder):
    """The embedder's batching before issue 9: texts sorted by characters."""

    def _embed(self, texts: list[str]) -> np.ndarray:
        out = np.empty((len(texts), self.dimension), dtype=np.float32)
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        for start in range(0, len(order), self.batch_size):
            chunk = order[start:start + self.batch_size]
            pooled = self._encode_batch(self._tokenizer.encode_batch([texts[i] for i in chunk]))
            out[chunk] = postprocess(pooled, self.spec.truncate_dim, self.spec.normalize)
        return out


@dataclass(frozen=True)
class Variant:
    name: str
    order: str  # "chars" or "tokens"
    batch_size: int  # texts per graph run
    threads: int
    ingest_batch: int | None  # None: the embedder alone

    def embedder_key(self) -> tuple[str, int, int]:
        return self.order, self.batch_size, self.threads


VARIANTS = [
    Variant("ingest chars bs32 batch64 t2 (before)", "chars", 32, 2, 64),
    Variant("ingest tokens bs32 batch64 t2", "tokens", 32, 2, 64),
    Variant("ingest tokens bs16 batch64 t2", "tokens", 16, 2, 64),
    Variant("ingest tokens bs16 batch512 t2 (now)", "tokens", 16, 2, 512),
    Variant("ingest tokens bs16 batch512 t1", "tokens", 16, 1, 512),
    Variant("alone chars bs32 t2", "chars", 32, 2, None),
    Variant("alone tokens bs16 t2", "tokens", 16, 2, None),
    Variant("alone tokens bs16 t1", "tokens", 16, 1, None),
]


def load_embedders(folder: Path) -> dict[tuple[str, int, int], OnnxEmbedder]:
    spec = spec_from_folder(folder)
    embedders: dict[tuple[str, int, int], OnnxEmbedder] = {}
    for variant in VARIANTS:
        key = variant.embedder_key()
        if key not in embedders:
            kind = CharSorted if variant.order == "chars" else OnnxEmbedder
            embedders[key] = kind(spec, threads=variant.threads, batch_size=variant.batch_size)
    return embedders


def sample_texts(path: Path) -> dict[str, list[str]]:
    """Each conversation's turn texts as ingest embeds them (from a bank without vectors)."""
    with tempfile.TemporaryDirectory() as folder, \
            Memory.open(Path(folder) / "t.db", default_embedder="none") as memory:
        memory.ingest(path)
        return {c.name: [text for (text,) in memory.store.db.execute(
            "SELECT content FROM memories WHERE conversation_id = ? ORDER BY id", (c.id,))]
            for c in memory.store.conversations()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("file", type=Path)
    parser.add_argument("--embedder", type=Path, required=True)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()

    conversations = read_conversations(args.file)
    texts = sample_texts(args.file)
    embedders = load_embedders(args.embedder)
    best: dict[tuple[str, str], tuple[float, float]] = {}
    shuffle = random.Random(9)
    load_before = os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as folder:
        for round_ in range(args.rounds):
            stores = {}
            for index, variant in enumerate(v for v in VARIANTS if v.ingest_batch):
                stores[variant.name] = Store.open(Path(folder) / f"{round_}-{index}.db")
                stores[variant.name].bind_embedder(embedders[variant.embedder_key()].fingerprint)
            for conversation in conversations:
                for variant in shuffle.sample(VARIANTS, len(VARIANTS)):
                    embedder = embedders[variant.embedder_key()]
                    wall, cpu = time.perf_counter(), time.process_time()
                    if variant.ingest_batch is None:
                        embedder.embed_documents(texts[conversation.name])
                    else:
                        ingest_conversations(stores[variant.name], [conversation],
                                             embedder=embedder, tz=timezone.utc,
                                             batch_size=variant.ingest_batch)
                    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
                    key = (variant.name, conversation.name)
                    old_wall, old_cpu = best.get(key, (wall, cpu))
                    best[key] = (min(wall, old_wall), min(cpu, old_cpu))
            for store in stores.values():
                store.close()
    turns = sum(len(t) for t in texts.values())
    print(f"# {turns} turns, {len(conversations)} conversations, best of {args.rounds} rounds "
          f"per conversation; {os.cpu_count()} CPUs, load average {load_before:.1f} before, "
          f"{os.getloadavg()[0]:.1f} after")
    print(f"{'variant':<40} {'turns/s':>8} {'wall s':>7} {'CPU s':>6}")
    for variant in VARIANTS:
        wall = sum(best[variant.name, c.name][0] for c in conversations)
        cpu = sum(best[variant.name, c.name][1] for c in conversations)
        print(f"{variant.name:<40} {turns / wall:8.1f} {wall:7.1f} {cpu:6.1f}")


if __name__ == "__main__":
    main()
