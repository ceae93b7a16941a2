"""`ramem --help` and `ramem --version` start without the heavy modules: numpy, the ONNX and
llama.cpp runtimes and dateparser are imported only by the commands that use them (their
start-up time is measured in results/bench-scale.txt; this test checks *what* is imported)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
HEAVY = ("numpy", "onnxruntime", "llama_cpp", "dateparser")

PROBE = """
import json, sys
from ramem_local.cli import cli
try:
    cli.main([{arg!r}], prog_name="ramem", standalone_mode=False)
except SystemExit:
    pass
print(json.dumps(sorted(sys.modules)))
"""


@pytest.mark.parametrize("arg", ["--help", "--version"])
def test_help_and_version_import_no_heavy_module(arg: str) -> None:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])])}
    done = subprocess.run([sys.executable, "-c", PROBE.format(arg=arg)], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=60, check=True)
    modules = json.loads(done.stdout.strip().splitlines()[-1])
    assert "ramem_local.cli" in modules
    loaded = sorted(m for m in modules if m.split(".")[0] in HEAVY)
    assert loaded == [], f"`ramem {arg}` imported {loaded[:5]}"


def test_cli_script_help_runs() -> None:
    done = subprocess.run([sys.executable, "cli.py", "--help"], cwd=ROOT, capture_output=True,
                          text=True, timeout=60, check=True,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert "Usage:" in done.stdout


SEARCH_PROBE = """
import json, sys
from ramem_local.cli import cli
cli.main(["--db", sys.argv[1], "search", sys.argv[2]], prog_name="ramem", standalone_mode=False)
print(json.dumps(sorted(sys.modules)))
"""


@pytest.mark.real_model
def test_a_one_off_search_builds_nothing_with_onnx_and_reads_no_date_phrase(
        tmp_path: Path, minilm_dir: Path) -> None:
    """A new process's search loads the bank's embedder and scans the int8 codes without
    importing the ``onnx`` package (the scan's graph is shipped serialized) or dateparser (no
    --as-of phrase to read): together over a second of a one-off search before
    (results/bench-oneoff.txt)."""
    from ramem_local import Memory

    bank = tmp_path / "journal.db"
    with Memory.open(bank, embedder=minilm_dir) as memory:
        memory.add("Went hiking at Eagle Ridge with Ana; the view was clear.", at="2024-05-04")
        memory.add("Baked bread for the first time.", at="2024-06-10")
        memory.add("Fixed the bike's back brake.", at="2024-07-02")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])])}
    done = subprocess.run(
        [sys.executable, "-c", SEARCH_PROBE, str(bank), "Where did I go hiking in May?"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=120, check=True)
    *printed, last = done.stdout.strip().splitlines()
    modules = json.loads(last)
    assert "Eagle Ridge" in printed[1], printed[:3]
    assert "ramem_local.store.int8_matrix" in modules and "onnxruntime" in modules
    assert "onnx" not in modules and "dateparser" not in modules
    # numpy 2's np.unique imports numpy.ma at its first call (13 ms of a first search).
    assert "numpy.ma" not in modules
    # What only writing needs (ingest, imports, extraction; ~25 ms of CPU) is not imported.
    ingest = [m for m in modules if m.startswith("ramem_local.ingest.")]
    assert ingest == ["ramem_local.ingest.reports", "ramem_local.ingest.windows"], ingest
    assert "zipfile" not in modules


MAIN_PROBE = """
import os
from ramem_local import cli
cli.cli = lambda **options: print(os.environ.get("OPENBLAS_NUM_THREADS"))
cli.main()
"""


@pytest.mark.parametrize(("given", "expected"), [(None, "1"), ("4", "4")])
def test_the_command_starts_numpy_with_one_blas_thread_unless_told(given: str | None,
                                                                   expected: str) -> None:
    """``main`` sets OPENBLAS_NUM_THREADS before numpy is imported (OpenBLAS reads it then);
    a user's own value is kept."""
    env = {key: value for key, value in os.environ.items() if key != "OPENBLAS_NUM_THREADS"}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), *filter(None, [env.get("PYTHONPATH")])])
    if given is not None:
        env["OPENBLAS_NUM_THREADS"] = given
    done = subprocess.run([sys.executable, "-c", MAIN_PROBE], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=60, check=True)
    assert done.stdout.strip() == expected



EXIT_PROBE = """
import atexit, os, sys, threading, time
from ramem_local import cli

class Teardown:
    def __del__(self):  # runs when the interpreter tears its modules down
        os.write(1, b"teardown ran\\n")

kept = Teardown()

def command(**options):
    atexit.register(lambda: print("atexit handler ran"))
    if sys.argv[2] == "thread":
        threading.Thread(target=lambda: (time.sleep(0.3), print("thread finished"))).start()
    print("output " * 2000)  # more than Python's stdout buffer: part of it is still unwritten
    sys.exit(int(sys.argv[1]) if sys.argv[1].isdigit() else sys.argv[1])

cli.cli = command
cli.main()
print("not reached")
"""


@pytest.mark.parametrize(("status", "thread", "expected", "teardown"), [
    ("0", "-", 0, False), ("3", "-", 3, False),
    ("a message", "-", 1, True),  # Python prints it, as sys.exit("...") always does
    ("0", "thread", 0, True),  # a thread still working: the ordinary exit waits for it
])
def test_the_command_exits_without_teardown_keeping_output_status_and_handlers(
        status: str, thread: str, expected: int, teardown: bool) -> None:
    """``main`` ends the process with os._exit once the command is done: the interpreter's
    teardown is skipped, the status, the whole output and the atexit handlers are kept."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])])}
    done = subprocess.run([sys.executable, "-c", EXIT_PROBE, status, thread], cwd=ROOT,
                          env=env, capture_output=True, text=True, timeout=60)
    lines = done.stdout.splitlines()
    assert done.returncode == expected, done.stderr
    assert lines[0].split() == ["output"] * 2000 and "atexit handler ran" in lines
    assert ("teardown ran" in lines) is teardown and "not reached" not in lines
    assert ("thread finished" in lines) is (thread == "thread")
    if not status.isdigit():
        assert status in done.stderr
