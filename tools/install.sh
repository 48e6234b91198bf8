#!/usr/bin/env bash
# Builds and installs the kernelsmith Python package (and the `kernelsmith` command) into .venv through
# scikit-build-core, the same path as `pip install .`. Incremental: the build folder is reused.
# KERNELSMITH_SHOW_BUILD=1 shows the build's own progress (the compile steps as they finish) instead of
# pip's quiet mode; the full log is then kept in build/install.log.
set -euo pipefail
cd "$(dirname "$0")/.."
started=$(date +%s)
bash tools/setup-deps.sh
echo "install: building kernelsmith into .venv (pip install --no-build-isolation .), $(nproc) parallel jobs"
export CMAKE_BUILD_PARALLEL_LEVEL="${CMAKE_BUILD_PARALLEL_LEVEL:-$(nproc)}"
if [ "${KERNELSMITH_SHOW_BUILD:-0}" = 1 ]; then
  mkdir -p build
  # pip -v passes the build's output on; the compile steps ([12/180] ...) and pip's own results are shown.
  if ! .venv/bin/python -m pip install -v --no-build-isolation ".[test]" 2>&1 | tee build/install.log |
    grep --line-buffered -E '^ *\[[0-9]+/[0-9]+\]|Successfully|^ERROR|error:' |
    sed -u -E 's/^ *(\[[0-9]+\/[0-9]+\]) ([A-Za-z]+) .*\/([^/ ]+)$/  \1 \2 \3/'; then
    echo "install: the build failed; its last lines (all of it in build/install.log):" >&2
    tail -n 40 build/install.log >&2
    exit 1
  fi
else
  .venv/bin/python -m pip install -q --no-build-isolation ".[test]"
fi
echo "install: done in $(($(date +%s) - started)) s"
