"""The llama.cpp check: a wheel that dies on this CPU is found in a child process and reported
as one line (setup rebuilds it, doctor prints the line, the LLM commands raise it).

A check child that dies by SIGILL is the test-only hook ``RAMEM_TEST_LLAMA_CHECK_KILL`` (the
child kills itself before loading anything), so those tests need no model: the GGUF they name
is never read. The tests marked ``real_model`` run SmolLM2-135M (``$RAMEM_TEST_LLM``) on a
prompt of 320+ tokens.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from ramem_local import models
from ramem_local.cli import cli
from ramem_local.errors import LLMError
from ramem_local.runtime.llama_check import (
    CHECK_PROMPT_TOKENS,
    TEST_KILL_VARIABLE,
    cache_file,
    crash_line,
    ensure_llama_runs,
    evaluate_long_prompt,
    installed_version,
    run_check,
)
from tests.real_models import smollm_path

REPO = Path(__file__).resolve().parents[1]
WHEEL_CHECK = REPO / "scripts" / "llama_wheel_check.sh"
REBUILD_COMMAND = "--no-cache-dir --force-reinstall --no-deps llama-cpp-python"


@pytest.fixture(autouse=True)
def own_cache_folder(tmp_path, monkeypatch) -> Path:
    """Passing checks are remembered in the user cache folder: each test gets its own."""
    folder = tmp_path / "cache"
    monkeypatch.setenv("XDG_CACHE_HOME", str(folder))
    return folder


@pytest.fixture
def never_read_gguf(tmp_path) -> Path:
    """A model path for checks whose child dies before it loads anything."""
    path = tmp_path / "never-read.gguf"
    path.write_bytes(b"GGUF not a model")
    return path


def test_a_check_child_that_dies_by_sigill_is_one_line_with_the_cause_and_the_rebuild(
        never_read_gguf, monkeypatch):
    monkeypatch.setenv(TEST_KILL_VARIABLE, "SIGILL")
    check = run_check(never_read_gguf)
    assert not check.ok and check.crashed and check.signal_name == "SIGILL"
    assert "\n" not in check.line
    assert "SIGILL (Illegal instruction)" in check.line
    assert "CPU instructions this CPU does not run" in check.line
    assert f'CMAKE_ARGS="-DGGML_NATIVE=OFF" {sys.executable} -m pip install' in check.line
    assert check.line.endswith(f"{REBUILD_COMMAND}=={installed_version()}")


def test_another_signal_is_named_with_its_own_cause(never_read_gguf, monkeypatch):
    monkeypatch.setenv(TEST_KILL_VARIABLE, "SIGSEGV")
    check = run_check(never_read_gguf)
    assert check.signal_name == "SIGSEGV"
    assert check.line == crash_line("SIGSEGV")
    assert "CPU instructions" not in check.line and REBUILD_COMMAND in check.line


def test_a_file_llama_cannot_load_fails_the_check_without_a_crash(never_read_gguf):
    pytest.importorskip("llama_cpp")
    check = run_check(never_read_gguf)
    assert not check.ok and not check.crashed
    assert "cannot load the GGUF model" in check.line


def test_an_llm_command_reports_the_crash_as_its_error_line_and_remembers_no_failure(
        tmp_path, never_read_gguf, own_cache_folder):
    bank = tmp_path / "bank.db"
    result = CliRunner().invoke(cli, ["--db", str(bank), "--llm", str(never_read_gguf), "ask",
                                      "Where did we eat?"],
                                env={TEST_KILL_VARIABLE: "SIGILL"})
    assert result.exit_code == 1
    assert "error: llama.cpp died with SIGILL" in result.output
    assert REBUILD_COMMAND in result.output
    assert not bank.exists()  # the model is checked before the bank opens
    assert not cache_file().exists()


def test_doctor_prints_the_crash_of_the_configured_llm_as_one_bad_line(
        tmp_path, never_read_gguf):
    bank = tmp_path / "bank.db"
    assert CliRunner().invoke(cli, ["--db", str(bank), "add", "hello"]).exit_code == 0
    models_folder = {"RAMEM_MODELS_DIR": str(tmp_path / "models")}
    result = CliRunner().invoke(cli, ["--db", str(bank), "--llm", str(never_read_gguf),
                                      "doctor"],
                                env={**models_folder, TEST_KILL_VARIABLE: "SIGILL"})
    assert result.exit_code == 1
    crash = [line for line in result.output.splitlines() if "SIGILL" in line]
    assert crash == [f"BAD  {crash_line('SIGILL')}"]
    without_llm = CliRunner().invoke(cli, ["--db", str(bank), "doctor"], env=models_folder)
    assert without_llm.exit_code == 0, without_llm.output
    assert "ok   llama.cpp: no LLM configured (--llm), check skipped" in without_llm.output


def test_doctor_names_an_llm_that_is_not_installed(tmp_path):
    bank = tmp_path / "bank.db"
    assert CliRunner().invoke(cli, ["--db", str(bank), "add", "hello"]).exit_code == 0
    result = CliRunner().invoke(cli, ["--db", str(bank), "--llm", "qwen3-4b-instruct-2507-q4_k_m",
                                      "doctor"], env={"RAMEM_MODELS_DIR": str(tmp_path / "m")})
    assert result.exit_code == 1
    assert "BAD  LLM qwen3-4b-instruct-2507-q4_k_m: model qwen3-4b-instruct-2507-q4_k_m is " \
           "not installed" in result.output


def test_a_registered_llm_is_not_checked():
    from ramem_local.testing import ScriptedLLM

    with models.registered_llm("scripted", lambda: ScriptedLLM([])):
        check = models.check_llm_runtime("scripted")
    assert check.ok and check.skipped


# --------------------------------------------------------------------------- setup's rebuild


def wheel_check(model: Path, environment: dict[str, str]) -> subprocess.CompletedProcess:
    """``scripts/llama_wheel_check.sh`` as setup.sh runs it, in this Python."""
    env = {key: value for key, value in os.environ.items() if key != "CMAKE_ARGS"}
    env["PYTHONPATH"] = os.pathsep.join([str(REPO), env.get("PYTHONPATH", "")])
    return subprocess.run(["bash", str(WHEEL_CHECK), sys.executable, str(model)],
                          env={**env, **environment}, capture_output=True, text=True,
                          timeout=600, check=False)


def stand_in_rebuild(tmp_path: Path, then: str = "") -> tuple[dict[str, str], Path]:
    """A rebuild command that records the CMAKE_ARGS it ran with (and runs ``then``)."""
    record = tmp_path / "rebuilt-with.txt"
    command = f'printf "%s" "$CMAKE_ARGS" > {record}' + (f" && {then}" if then else "")
    return {"RAMEM_SETUP_REBUILD_CMD": command}, record


@pytest.mark.real_model
def test_setup_rebuilds_a_wheel_whose_check_dies_by_sigill_with_the_projects_flags(tmp_path):
    broken_wheel = tmp_path / "wheel-is-native"  # the child dies by SIGILL while this exists
    broken_wheel.touch()
    rebuild, record = stand_in_rebuild(tmp_path, then=f"rm {broken_wheel}")
    finished = wheel_check(smollm_path(), {**rebuild,
                                           TEST_KILL_VARIABLE: f"SIGILL:{broken_wheel}"})
    assert finished.returncode == 0, finished.stdout + finished.stderr
    assert record.read_text() == "-DGGML_NATIVE=OFF"
    lines = finished.stdout.splitlines()
    assert lines[0] == crash_line("SIGILL")
    assert "crashed on this CPU" in lines[1]
    assert 'rebuilding it from source with CMAKE_ARGS="-DGGML_NATIVE=OFF", bypassing the ' \
           "cache" in lines[1]
    assert "ran a prompt of" in lines[2]
    assert lines[3] == ('setup: llama-cpp-python rebuilt with CMAKE_ARGS="-DGGML_NATIVE=OFF"; '
                        "it runs on this CPU")


def test_setup_says_so_when_the_rebuilt_wheel_still_crashes(tmp_path, never_read_gguf):
    rebuild, record = stand_in_rebuild(tmp_path)
    finished = wheel_check(never_read_gguf, {**rebuild, TEST_KILL_VARIABLE: "SIGILL"})
    assert finished.returncode == 1
    assert record.read_text() == "-DGGML_NATIVE=OFF"
    assert finished.stdout.count(crash_line("SIGILL")) == 2
    assert "still crashes after the rebuild" in finished.stderr


@pytest.mark.real_model
def test_setup_keeps_a_wheel_that_runs(tmp_path):
    rebuild, record = stand_in_rebuild(tmp_path)
    finished = wheel_check(smollm_path(), rebuild)
    assert finished.returncode == 0, finished.stdout + finished.stderr
    assert "ran a prompt of" in finished.stdout
    assert not record.exists()


# --------------------------------------------------------------------------- a real model


@pytest.mark.real_model
def test_the_runtime_evaluates_a_prompt_long_enough_for_the_batched_kernels():
    assert evaluate_long_prompt(smollm_path()) >= max(300, CHECK_PROMPT_TOKENS)


@pytest.mark.real_model
def test_a_pass_is_remembered_per_build_and_a_crash_is_checked_again(monkeypatch):
    model = smollm_path()
    ensure_llama_runs(model)
    remembered = json.loads(cache_file().read_text())["passed"]
    assert [entry["checked_with"] for entry in remembered.values()] == [str(model.resolve())]

    # Remembered: no child runs, so the hook that would kill it changes nothing.
    monkeypatch.setenv(TEST_KILL_VARIABLE, "SIGILL")
    ensure_llama_runs(model)

    cache_file().unlink()  # another build, as far as the cache knows
    with pytest.raises(LLMError, match="SIGILL"):
        ensure_llama_runs(model)
    assert not cache_file().exists()  # a crash is not remembered: the user may rebuild
    monkeypatch.delenv(TEST_KILL_VARIABLE)
    ensure_llama_runs(model)
    assert cache_file().exists()
