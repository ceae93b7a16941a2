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
