#!/usr/bin/env bash
# The main job: installs what is missing, then evolves a built-in kernel on the best available backend
# (a CUDA GPU if there is one, else OpenCL on the CPU) and ends with a short summary of what it found.
# Each step says what it does and how long it took; the build shows its own progress.
set -euo pipefail
cd "$(dirname "$0")/.."
started=$(date +%s)
step() { echo; echo "== main [$(($(date +%s) - started)) s] $*"; }

step "1/4 setup and build: system packages, the Python environment (.venv) and the kernelsmith package"
KERNELSMITH_SHOW_BUILD=1 bash tools/install.sh
export PATH="$PWD/.venv/bin:$PATH"

step "2/4 the devices this machine offers (the run takes the best one)"
kernelsmith devices

task="${KERNELSMITH_MAIN_TASK:-relu}"
budget="${KERNELSMITH_MAIN_BUDGET:-10}"
db="${KERNELSMITH_MAIN_DB:-kernelsmith-main.db}"
# A fresh run each time, so the command is idempotent; the store stays for `kernelsmith report`.
rm -f "$db" "$db-wal" "$db-shm"
step "3/4 evolving '$task' with the parameter mutator: $budget evaluations, the reference timed first in this run"
kernelsmith evolve --task "$task" --backend auto --mutator param --budget "$budget" --db "$db"

step "4/4 the run's report"
kernelsmith report --db "$db"
kernelsmith report --db "$db" --json | .venv/bin/python tools/main_summary.py "$db" "$(($(date +%s) - started))"
