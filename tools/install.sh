#!/usr/bin/env bash
# Builds and installs the kernelsmith Python package (and the `kernelsmith` command) into .venv through
# scikit-build-core, the same path as `pip install .`. Incremental: the build folder is reused.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/setup-deps.sh
echo "install: building kernelsmith into .venv (pip install --no-build-isolation .)"
CMAKE_BUILD_PARALLEL_LEVEL="${CMAKE_BUILD_PARALLEL_LEVEL:-$(nproc)}" \
  .venv/bin/python -m pip install -q --no-build-isolation ".[test]"
