#!/usr/bin/env bash
# The main job on a fresh machine: install, remember a small conversation, answer questions.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
SHARED=${RAMEM_SHARED:-$(cd .. && pwd)/shared}
EMBEDDER=${RAMEM_EMBEDDER:-$SHARED/models/all-MiniLM-L6-v2}
BANK=$(mktemp -d)/demo.db
ramem() { .venv/bin/ramem --db "$BANK" "$@"; }
if [ -d "$EMBEDDER" ]; then ramem --embedder "$EMBEDDER" init; else ramem init; fi
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
