"""Give every turn of a bank exactly one extracted twin, to measure the two-tier merge at scale.

    .venv/bin/python scripts/mirror_extraction.py BANK.db [BANK.db ...] \
        --embedder ../shared/models/all-MiniLM-L6-v2

A stand-in for an extraction model (no LLM is loaded): each window's reply is one entry per turn,
its content the turn's text, citing only that turn. Every turn then has one extracted memory
that says the same thing: the worst case for results listing the same episode twice, which
`--drop-repeated-turns` (the default of `ramem search`) is meant to prevent. Measure with
`ramem eval locomo FILE --bank-dir DIR` and `--keep-repeated-turns` on banks built by a first
run of the same command (see results/extraction-tier-merge.txt). Windows of 12 turns: the
extraction schema allows at most 12 entries per window.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from ramem_local.api import Memory
from ramem_local.ingest.extract import turn_labels
from ramem_local.protocols import LLMResult
from ramem_local.schemas import validate

MAX_CONTENT = 300  # the schema's bound on an entry's content


class MirrorExtractor:
    """Implements the LLM protocol: answers an extraction call with the window's own turns."""

    name = "mirror-extractor"

    def __init__(self, memory: Memory) -> None:
        self.texts: dict[str, str] = {}
        for conversation in memory.store.conversations():
            turns = memory.store.conversation_turns(conversation.id)
            self.texts.update({label: turn.text for label, turn in turn_labels(turns).items()})

    def chat_json(self, messages: list[dict], schema: dict, *, max_tokens: int,
                  temperature: float = 0.0) -> LLMResult:
        labels = schema["properties"]["entries"]["items"]["properties"]["source_turns"]["items"][
            "enum"]
        entries = [
            {"content": self.texts[label][:MAX_CONTENT], "source_turns": [label], "persons": [],
             "entities": [], "keywords": [], "location": None, "topic": "conversation",
             "event_date": None}
            for label in labels if self.texts.get(label, "").strip()
        ]
        data = {"entries": entries}
        problems = validate(data, schema)
        if problems:
            return LLMResult(None, "schema: " + "; ".join(problems), "stop", "", 0, 0, 0.0)
        return LLMResult(data, None, "stop", "", 0, 0, 0.0)

    def count_tokens(self, text: str) -> int:
        return max(1, len(text) // 4)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("banks", nargs="+", type=Path)
    parser.add_argument("--embedder", help="the banks' embedder (NAME or DIR)")
    args = parser.parse_args()
    for bank in args.banks:
        with Memory.open(bank, default_embedder="none", embedder=args.embedder) as memory:
            memory.llm = MirrorExtractor(memory)
            report = memory.extract(window_size=12, overlap=0)
            print(f"{bank.name}: {report.done} windows done, {report.failed} failed, "
                  f"{report.memories_new} extracted memories")


if __name__ == "__main__":
    main()
