#!/usr/bin/env bash
# The main job: installs what is missing, then evolves a built-in kernel on the best available backend
# (a CUDA GPU if there is one, else OpenCL on the CPU) and prints the result.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/install.sh
export PATH="$PWD/.venv/bin:$PATH"
kernelsmith devices
task="${KERNELSMITH_MAIN_TASK:-relu}"
kernelsmith eval --task "$task" --reference --backend auto
