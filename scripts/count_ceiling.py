"""How far a cut-off on dense closeness could take the journal's count questions.

For each count question of a generated journal: order the month's reports by closeness to the
question alone and along ``retrieve.kind_direction`` (with the reports holding the counted
words, as a count with a range measures it), and check whether the first N of them
are exactly the N evidence entries (an oracle cut-off at the true count). No cut-off rule on
those closenesses can be exact more often than this.

    PYTHONPATH=. python scripts/count_ceiling.py MINILM_DIR --years 1 --seed 7
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from ramem_local import Memory
from ramem_local.eval.journal import JOURNAL_COUNTRY, JournalSpec, generate_journal
from ramem_local.retrieve import (
    ASSISTANT,
    Query,
    RetrievalSettings,
    _closeness,
    _occurrence_window,
    _unit,
    centred_query,
    counted_word_examples,
    kind_direction,
)


def oracle_exact(spec: JournalSpec, embedder: str | Path) -> tuple[int, dict[str, float]]:
    """(how many count questions, {direction: how often its oracle cut-off is exact})."""
    journal = generate_journal(spec)
    questions = [q for q in journal.questions if q.style == "count"]
    settings = RetrievalSettings()
    exact = {"question alone": 0, "kind_direction": 0}
    with tempfile.TemporaryDirectory() as folder:
        source = journal.write_jsonl(Path(folder) / "journal.jsonl")
        with Memory.open(Path(folder) / "bank.db", default_embedder="none", embedder=embedder,
                         country=JOURNAL_COUNTRY) as memory:
            memory.ingest(source)
            store, encoder = memory.store, memory.embedder
            assert encoder is not None
            turns_of = {memory_id: set(record.source_turns)
                        for memory_id, record in store.get_memories(
                            [i for i, _ in store.occurrences(
                                fts_query=None, happened_from=-(1 << 62),
                                happened_until=1 << 62, newest_first=False, limit=10**6,
                                assistant=ASSISTANT)]).items()}
            for question in questions:
                frame = memory.frame(question.question, as_of=question.as_of)
                vector = centred_query(encoder.embed_query(frame.need),
                                       store.mean_vector())
                query = Query(vector=vector, fts=None)
                start, end = _occurrence_window(frame)
                month = [i for i, _ in store.occurrences(
                    fts_query=None, happened_from=start, happened_until=end,
                    newest_first=False, limit=10_000, assistant=ASSISTANT)]
                evidence = {memory_id for memory_id in month
                            if turns_of[memory_id] & set(question.evidence)}
                for name, direction in (
                        ("question alone", _unit(vector)),
                        ("kind_direction", kind_direction(
                            store, query, frame, settings, None,
                            counted_word_examples(store, frame, settings, None)))):
                    closeness = _closeness(store, direction, month)
                    ranked = sorted(closeness, key=lambda i: -closeness[i])
                    exact[name] += set(ranked[:len(evidence)]) == evidence
    return len(questions), {name: hits / max(len(questions), 1) for name, hits in exact.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("embedder")
    parser.add_argument("--years", type=int, default=1)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    n, exact = oracle_exact(JournalSpec(years=args.years, seed=args.seed,
                                        questions_per_style=40), args.embedder)
    print(f"journal {args.years}y seed {args.seed} · {n} count questions · "
          f"embedder {Path(args.embedder).name}")
    for name, share in exact.items():
        print(f"  oracle cut-off exact, {name:<15} {share:.3f}")


if __name__ == "__main__":
    main()
