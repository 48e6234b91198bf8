#!/usr/bin/env bash
# Regenerates python/kernelsmith/_core.pyi from a built module: tools/generate-stubs.sh [<build>/python]
# (the staged package of a build with -DKERNELSMITH_BUILD_PYTHON=ON; default build/python).
# Needs pybind11-stubgen (pip install pybind11-stubgen). tests/python/test_stubs.py runs the same command.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
staged="$(cd "${1:-$root/build/python}" && pwd)"
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
PYTHONPATH="$staged" python3 -m pybind11_stubgen kernelsmith._core --output-dir "$out" >/dev/null
cp "$out/kernelsmith/_core.pyi" "$root/python/kernelsmith/_core.pyi"
echo "wrote python/kernelsmith/_core.pyi"
