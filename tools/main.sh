#!/usr/bin/env bash
# The main job: installs what is missing, then evolves a built-in kernel on the best available backend
# (a CUDA GPU if there is one, else OpenCL on the CPU) and prints the result.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/install.sh
export PATH="$PWD/.venv/bin:$PATH"
kernelsmith devices
task="${KERNELSMITH_MAIN_TASK:-relu}"
budget="${KERNELSMITH_MAIN_BUDGET:-10}"
db="${KERNELSMITH_MAIN_DB:-kernelsmith-main.db}"
# A fresh run each time, so the command is idempotent; the store stays for `kernelsmith report`.
rm -f "$db" "$db-wal" "$db-shm"
kernelsmith evolve --task "$task" --backend auto --mutator param --budget "$budget" --db "$db"
kernelsmith report --db "$db"
