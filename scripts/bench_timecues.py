"""Benchmark: the time cue detector on the question path, in µs per question (prints a table).

    .venv/bin/python scripts/bench_timecues.py ../shared/data/locomo/locomo_dev.json

Times ``detect_cues`` over every question of a LoCoMo file (the question path: one call per
question, as ``build_frame`` makes it) and ``ground_event_time`` over every turn (the ingest
path: the tense-directed grounding of each turn), each repeated ``--repeat`` times; reports the
best and the median repeat in µs per text, and how many texts hold a cue. The reference time
is fixed, so two versions of the detector can be compared on the same machine: run it on each
and compare the numbers of one run, not across machines (these machines are noisy).
"""

from __future__ import annotations

import argparse
import inspect
import statistics
import time
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path

from ramem_local.eval.locomo import load_questions
from ramem_local.ingest.anchor import ground_event_time
from ramem_local.ingest.formats import read_locomo
from ramem_local.recall.time import detect_cues

REFERENCE = datetime(2023, 8, 1, 12, 0, tzinfo=timezone.utc)


def per_text_us(texts: list[str], call: Callable[[str], object], repeat: int) -> list[float]:
    """µs per text of each of ``repeat`` passes over ``texts`` (after one warm-up pass)."""
    for text in texts:
        call(text)
    passes = []
    for _ in range(repeat):
        started = time.perf_counter()
        for text in texts:
            call(text)
        passes.append((time.perf_counter() - started) * 1e6 / len(texts))
    return passes


def country_keyword(function: Callable, country: str | None) -> dict[str, str]:
    """``{"country": country}`` when given; refused by a detector that has no such setting."""
    if country is None:
        return {}
    if "country" not in inspect.signature(function).parameters:
        raise SystemExit(f"this version of {function.__name__} takes no country")
    return {"country": country}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("file", type=Path)
    parser.add_argument("--repeat", type=int, default=7, help="passes over the texts")
    parser.add_argument("--country", help="the bank country to read dates for (e.g. US)")
    args = parser.parse_args()

    questions = [q.question for qs in load_questions(args.file).values() for q in qs]
    turns = [turn for conversation in read_locomo(args.file) for turn in conversation.turns]
    cue_options = country_keyword(detect_cues, args.country)
    event_options = country_keyword(ground_event_time, args.country)
    said_at = int(REFERENCE.timestamp())

    rows = []
    for name, texts, call, fired in (
        ("detect_cues, questions", questions,
         lambda text: detect_cues(text, REFERENCE, **cue_options),
         sum(bool(detect_cues(q, REFERENCE, **cue_options)) for q in questions)),
        ("ground_event_time, turns", [t.text for t in turns],
         lambda text: ground_event_time(text, said_at, timezone.utc, **event_options),
         sum(bool(detect_cues(t.text, REFERENCE, **cue_options)) for t in turns)),
    ):  # fmt: skip
        passes = per_text_us(texts, call, args.repeat)
        rows.append((f"{name} (n={len(texts)}, {fired} with a cue)",
                     f"best {min(passes):.1f} µs, median {statistics.median(passes):.1f} µs "
                     f"per text ({args.repeat} passes)"))
    width = max(len(name) for name, _ in rows)
    print(f"{'measure':<{width}}  result")
    for name, value in rows:
        print(f"{name:<{width}}  {value}")


if __name__ == "__main__":
    main()
