"""Benchmark: a one-off `ramem search` (a new process) on a 5-year journal (prints a table).

    PYTHONPATH=. .venv/bin/python scripts/bench_oneoff.py \
        --embedder ../shared/models/all-MiniLM-L6-v2 --bank-dir /tmp/ramem-oneoff

Builds the bank once in --bank-dir (reused by later runs): the 5-year synthetic journal of
``ramem eval journal`` (``generate_journal``, its entries and chat), ingested with the embedder
as that evaluation does. Each checkout gets its own user cache folder (XDG_CACHE_HOME under
--bank-dir), emptied first: "cold wall" is the first search, which fills it (the model file's
SHA-256, the optimised ONNX graph), as a user's first search after an install does. Then,
``--runs`` times:

- wall: a new process runs ``ramem --db BANK search QUESTION`` (the console script's entry
  point, ``ramem_local.cli.main``), from start to exit;
- split: a new process times, through the API, ``import ramem_local.api``, ``Memory.open`` (and
  within it the model's SHA-256, the onnxruntime session, the tokenizer), the first search and
  a second one of the same question (the warm search).

``--compare DIR`` runs another checkout's code too (its folder goes first on PYTHONPATH; e.g. a
``git worktree`` of main), alternating with this one run by run, so both see the same load.
Each checkout's package is byte-compiled first, as an installed one is (with
PYTHONDONTWRITEBYTECODE set, every run would compile the sources again). Reports the median, min
and max of each measure.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import time
from datetime import date
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
QUESTION = "Where did I go hiking in May?"
YEARS = 5

CLI = "from ramem_local.cli import main; main()"

# The split of one one-off search, in a new process: what a script calling the API pays. Three
# parts of Memory.open are timed by wrapping the functions that do them (each timed without the
# others it calls): the model file's SHA-256, the onnxruntime session (with its import), the
# tokenizer. "import" includes ramem_local.runtime.embedder, which open imports anyway.
SPLIT = """
import json, sys, time
started = time.perf_counter()
from ramem_local.api import Memory
from ramem_local.runtime import embedder, registry
imported = time.perf_counter()
spent = {"hash": 0.0, "session": 0.0, "tokenizer": 0.0}
inner = []
def timed(name, function):
    def run(*args, **kwargs):
        begun = time.perf_counter()
        inner.append(0.0)
        try:
            return function(*args, **kwargs)
        finally:
            took, nested = time.perf_counter() - begun, inner.pop()
            spent[name] += took - nested
            if inner:
                inner[-1] += took
    return run
hashing = timed("hash", embedder.file_sha256)
if getattr(registry, "file_sha256", None) is embedder.file_sha256:
    registry.file_sha256 = hashing
embedder.file_sha256 = hashing
for method, name in (("_open_session", "session"), ("_open_tokenizer", "tokenizer")):
    setattr(embedder.OnnxEmbedder, method,
            staticmethod(timed(name, getattr(embedder.OnnxEmbedder, method))))
opening = time.perf_counter()
memory = Memory.open(sys.argv[1], create=False)
opened = time.perf_counter()
memory.search(sys.argv[2])
first = time.perf_counter()
memory.search(sys.argv[2])
second = time.perf_counter()
memory.close()
print(json.dumps({"import": imported - started, "open": opened - opening,
                  **{"open: " + name: seconds for name, seconds in spent.items()},
                  "first search": first - opened, "second search": second - first,
                  "onnx imported": "onnx" in sys.modules}))
"""

MEASURES = ("wall", "import", "open", "open: hash", "open: session", "open: tokenizer",
            "first search", "second search")


def build_bank(folder: Path, embedder: Path) -> Path:
    """The 5-year journal bank, built once (a second call finds it and adds nothing)."""
    from ramem_local import Memory, SearchDefaults
    from ramem_local.eval.journal import JOURNAL_COUNTRY, JournalSpec, generate_journal

    folder.mkdir(parents=True, exist_ok=True)
    bank = folder / f"journal-{YEARS}y.db"
    if bank.is_file():
        return bank
    journal = generate_journal(JournalSpec(years=YEARS))
    source = journal.write_jsonl(folder / f"journal-{YEARS}y.jsonl")
    started = time.perf_counter()
    with Memory.open(bank, default_embedder="none", embedder=embedder, country=JOURNAL_COUNTRY,
                     defaults=SearchDefaults()) as memory:
        memory.ingest(source)
    print(f"# built {bank}: {len(journal.entries)} entries, {len(journal.chat)} chat turns, "
          f"{time.perf_counter() - started:.0f} s", flush=True)
    return bank


def environment(code: Path, config: Path, cache: Path) -> dict[str, str]:
    """The child's environment: ``code`` first on PYTHONPATH, no user settings, ``cache`` as
    the user cache folder (XDG_CACHE_HOME: the model hashes and optimised graphs live there)."""
    paths = [str(code), *filter(None, [os.environ.get("PYTHONPATH")])]
    return {**os.environ, "PYTHONPATH": os.pathsep.join(paths), "RAMEM_CONFIG": str(config),
            "XDG_CACHE_HOME": str(cache)}


def cli_wall(env: dict[str, str], code: Path, bank: Path, question: str) -> float:
    """Seconds of ``ramem --db BANK search QUESTION`` in a new process, start to exit."""
    started = time.perf_counter()
    subprocess.run([sys.executable, "-c", CLI, "--db", str(bank), "search", question],
                   check=True, capture_output=True, env=env, cwd=code)
    return time.perf_counter() - started


def one_run(code: Path, bank: Path, question: str, env: dict[str, str]) -> dict[str, float]:
    wall = cli_wall(env, code, bank, question)
    split = json.loads(subprocess.run(
        [sys.executable, "-c", SPLIT, str(bank), question], check=True, capture_output=True,
        text=True, env=env, cwd=code).stdout.strip().splitlines()[-1])
    return {"wall": wall, **split}


def table(label: str, runs: list[dict[str, float]]) -> list[str]:
    lines = []
    for measure in MEASURES:
        values = [run[measure] * 1000 for run in runs]
        lines.append(f"{label:<10} {measure:<16} {statistics.median(values):>8.0f} "
                     f"{min(values):>8.0f} {max(values):>8.0f}")
    onnx = sum(bool(run["onnx imported"]) for run in runs)
    lines.append(f"{label:<10} {'onnx imported':<16} {onnx:>8d} of {len(runs)} runs")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--embedder", type=Path, required=True,
                        help="the embedder folder the bank is built with (MiniLM)")
    parser.add_argument("--bank-dir", type=Path, default=Path("/tmp/ramem-oneoff"),
                        help="where the journal bank is built, or found from an earlier run")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--question", default=QUESTION)
    parser.add_argument("--compare", type=Path,
                        help="another checkout to measure in the same run (e.g. main)")
    args = parser.parse_args()
    bank = build_bank(args.bank_dir, args.embedder)
    config = args.bank_dir / "no-user-config.json"
    codes = {"this": ROOT}
    if args.compare is not None:
        codes["compare"] = args.compare.resolve()
    for code in codes.values():  # bytecode, as an installed package has it
        subprocess.run([sys.executable, "-m", "compileall", "-q", str(code / "ramem_local")],
                       check=True, env={**os.environ, "PYTHONDONTWRITEBYTECODE": ""})
    envs = {}
    cold = {}
    for label, code in codes.items():  # the first search after an install fills the caches
        cache = args.bank_dir / f"cache-{label}"
        shutil.rmtree(cache, ignore_errors=True)
        envs[label] = environment(code, config, cache)
        cold[label] = cli_wall(envs[label], code, bank, args.question)
    runs: dict[str, list[dict[str, float]]] = {label: [] for label in codes}
    for index in range(args.runs):
        order = list(codes.items()) if index % 2 == 0 else list(codes.items())[::-1]
        for label, code in order:
            runs[label].append(one_run(code, bank, args.question, envs[label]))
    print(f"# {date.today().isoformat()}, {platform.machine()}, {os.cpu_count()} CPUs, "
          f"load average {os.getloadavg()[0]:.1f} after the run; Python "
          f"{platform.python_version()}")
    print(f"# bank {bank.name}: {YEARS}-year journal; question {args.question!r}; "
          f"{args.runs} runs" + (f"; compare = {codes['compare']}" if "compare" in codes else "")
          + f"; this = {ROOT}")
    print(f"{'code':<10} {'ms':<16} {'median':>8} {'min':>8} {'max':>8}")
    for label in codes:
        for line in table(label, runs[label]):
            print(line)
        print(f"{label:<10} {'cold wall':<16} {cold[label] * 1000:>8.0f}   (one run, empty cache)")


if __name__ == "__main__":
    main()
