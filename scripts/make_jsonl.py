"""Write a large JSONL of turns for measuring ingest (docs/reliability.md: the 200,000-turn file).

    python scripts/make_jsonl.py t200k.jsonl --turns 200000 [--conversations 10] [--seed 1]

Turns go round-robin over the conversations (interleaved in the file, as a merged export
would have them), a few minutes apart, a new sitting (1 to 5 days later) one turn in a hundred.
Even-numbered conversations have ``session`` labels and ``id`` s, odd ones neither (sessions by
the 6-hour gap). Texts are 8 to 22 words with a relative date ("last week") in 6 turns of 10.
200,000 turns make a 45 MB file. Deterministic for a seed.
"""

from __future__ import annotations

import argparse
import json
import random
from pathlib import Path

WORDS = ("river dog walk pottery class painting sunrise lake camping mountains tournament "
         "charity bakery bread violin concert garden tomatoes bicycle repair train station "
         "museum library novel chess club swimming pool marathon recipe soup").split()
CUES = ("", "", "", " yesterday", " last week", " on Saturday", " two days ago",
        " this morning", " in May", " next Friday")


def write(path: Path, turns: int, conversations: int = 10, seed: int = 1) -> None:
    rng = random.Random(seed)
    names = [f"conv{i}" for i in range(conversations)]
    clocks = {name: 1_600_000_000 + i * 3600 for i, name in enumerate(names)}
    session = {name: 1 for name in names}
    with path.open("w", encoding="utf-8") as handle:
        for index in range(turns):
            number = index % conversations
            name = names[number]
            if rng.random() < 0.01:
                clocks[name] += rng.randint(1, 5) * 86_400
                session[name] += 1
            clocks[name] += rng.randint(20, 300)
            text = " ".join(rng.choice(WORDS) for _ in range(rng.randint(8, 22)))
            row = {"conversation": name, "speaker": rng.choice(["Ann", "Ben", "Chloé"]),
                   "text": f"Turn {index}: {text}{rng.choice(CUES)}.",
                   "timestamp": clocks[name]}
            if number % 2 == 0:
                row["session"] = session[name]
                row["id"] = f"{name}-{index}"
            handle.write(json.dumps(row, ensure_ascii=False) + "\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("path", type=Path)
    parser.add_argument("--turns", type=int, default=200_000)
    parser.add_argument("--conversations", type=int, default=10)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    write(args.path, args.turns, args.conversations, args.seed)


if __name__ == "__main__":
    main()
