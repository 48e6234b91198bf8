#!/usr/bin/env bash
# Every test: the C++ suite and the find_package consumer under CTest, then pytest against the package
# installed through scikit-build-core. Tests that need a GPU skip here, saying why.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/setup-deps.sh
jobs="${CMAKE_BUILD_PARALLEL_LEVEL:-$(nproc)}"

echo "test: building the C++ library and tests (build/ci)"
# The MACA backend plugin is built against the stand-in SDK (tests/maca_standin): its tests that need no GPU
# (loading errors, the compile stage through the stand-in's MCRTC) run here.
cmake -S . -B build/ci -G Ninja -DCMAKE_BUILD_TYPE=Release -DKERNELSMITH_BUILD_TESTS=ON \
  -DKERNELSMITH_WARNINGS_AS_ERRORS=ON -DKERNELSMITH_MACA_PATH=tests/maca_standin >/dev/null
cmake --build build/ci -j "$jobs"
echo "test: ctest"
# The Triton front end's tests compile through helpers that run this interpreter, where setup-deps
# installed triton (without it they skip, saying why).
KERNELSMITH_PYTHON="$(pwd)/.venv/bin/python" ctest --test-dir build/ci --output-on-failure
# What the C++ tests skipped and why (the GPU label is reported as skipped when any of its tests did).
awk '/skipped: /{sub(/^ */, ""); reason=$0; while ((getline line) > 0 && line ~ /^  /) {sub(/^ */, " ", line); reason=reason line}
     print reason}' build/ci/Testing/Temporary/LastTest.log 2>/dev/null | sort | uniq -c | sed 's/^/test: C++ /' || true

bash tools/install.sh
echo "test: pytest"
# Run from tests/ so that `import kernelsmith` finds the installed package, not the source folder.
# setup-deps installed Ray: the local-cluster tests of tests/python/test_distributed.py must run, not skip.
KERNELSMITH_REQUIRE_RAY=1 .venv/bin/python -m pytest -q -p no:cacheprovider -c pyproject.toml --rootdir . tests/python
