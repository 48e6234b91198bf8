#!/usr/bin/env bash
# Builds and checks kernelsmith on a fresh CUDA GPU machine (Ubuntu 24.04, CUDA 13, g++ 13, CMake 4,
# Catch2 v3, Python 3.12 with torch, triton and cupy; no network, no sqlite3.h: the header is carried in
# .device/include). Every step's output goes to $OUT/gpu-check/<step>.log; a summary ends the run.
#
#   OUT=/tmp/out tools/gpu-check.sh                      # every step
#   OUT=/tmp/out tools/gpu-check.sh build unit gpu       # the C++ side (about 5 minutes)
#   OUT=/tmp/out tools/gpu-check.sh install devices bench   # the Python side and the benchmark
#   OUT=/tmp/out tools/gpu-check.sh install scale           # GPUs of this host and Ray actors (needs ray)
#   OUT=/tmp/out tools/gpu-check.sh build install hopper    # TMA, clusters, compute-bound seeds vs PyTorch
#   OUT=/tmp/out tools/gpu-check.sh build maca              # the MACA plugin through the stand-in runtime
#   KS_USE_ENV_CXX=1 OUT=/tmp/out tools/gpu-check.sh build gpu   # with the environment's $CXX and $CC
#
# The build and install steps use Ubuntu's /usr/bin/g++ and /usr/bin/gcc (libstdc++ linked dynamically)
# unless KS_USE_ENV_CXX=1: then $CXX and $CC of the environment (the image sets /opt/gcc, which links
# libstdc++ statically; the library hides its copy, see lib/CMakeLists.txt). Each choice has its own
# build folders, so the two never mix.
#
# Steps: info build gpu unit install pytest devices bench sandbox suite hopper scale kbimport kbrun kbcheck kbbase maca
# modelnew (KernelBench:
# KERNELBENCH names its problem folder; KB_LEVELS, KB_LANGUAGE, KB_BUDGET, KB_BASELINES, KB_L1_PROBLEMS and
# KB_L2_PROBLEMS narrow them; kbcheck: KB_CHECK_JOBS, KB_CHECK_RESUME, KB_CHECK_LARGEST, KB_CHECK_ADMIT_SECONDS,
# KB_CHECK_MEMORY_GIB; scale: KS_SCALE_COUNTS,
# KS_RAY_WHEELS; hopper: KS_HOPPER_TASKS, KS_HOPPER_BUDGET).
# A failing step does not stop the others (a step that needs an earlier one says so); the exit status
# is the number of failed steps. Each step runs under its own time limit, so a hang leaves the log of
# what happened.
set -uo pipefail
cd "$(dirname "$0")/.."
root="$(pwd)"

OUT="${OUT:-$root/gpu-check-out}"
logs="$OUT/gpu-check"
mkdir -p "$logs"
if [ "${KS_USE_ENV_CXX:-0}" = 1 ]; then
  compiler_tag=env
else
  export CXX=/usr/bin/g++ CC=/usr/bin/gcc
  compiler_tag=system
fi
build="$root/build/gpu-$compiler_tag"
# Install into the environment of $python itself: there torch, triton, cupy, pybind11 and
# scikit-build-core are present (a venv made from a venv would not see them).
venv="$("${PYTHON:-python3}" -c 'import sys; print(sys.prefix)')"
jobs="$(nproc)"
python="${PYTHON:-python3}"

steps=("$@")
[ ${#steps[@]} -eq 0 ] && steps=(info build gpu unit install devices bench)

summary="$logs/summary.txt"
failures=0
note() { echo "$*" | tee -a "$summary"; }
note "gpu-check $(date -u +%Y-%m-%dT%H:%M:%SZ) in $root, steps: ${steps[*]}, CXX=${CXX:-unset} ($compiler_tag)"

# run_step NAME SECONDS FUNCTION: runs the step function in a child shell under a time limit, logs its
# output, records the outcome.
run_step() {
  local name="$1" limit="$2" function="$3"
  local log="$logs/$name.log" started rc
  started=$(date +%s)
  echo "== $name" >"$log"
  timeout --kill-after=20 "$limit" bash -o pipefail -c "$function" >>"$log" 2>&1
  rc=$?
  local took=$(($(date +%s) - started))
  if [ $rc -eq 0 ]; then
    note "PASS  $name (${took}s)"
  else
    [ $rc -eq 124 ] && echo "== timed out after ${limit}s" >>"$log"
    note "FAIL  $name (rc $rc, ${took}s): see $log"
    tail -n 25 "$log" | sed 's/^/      /' | tee -a "$summary"
    failures=$((failures + 1))
  fi
  return $rc
}

step_info() {
  nvidia-smi || true
  echo "--- toolchain"
  uname -a
  echo "CXX=${CXX:-unset} CC=${CC:-unset} (KS_USE_ENV_CXX=${KS_USE_ENV_CXX:-0})"
  "${CXX:-g++}" --version | head -1
  cmake --version | head -1
  command -v ninja && ninja --version
  command -v nvcc && nvcc --version | tail -2
  "$python" --version
  "$python" - <<'PY'
import importlib
for name in ["torch", "triton", "cupy", "numpy", "pybind11", "scikit_build_core", "pytest"]:
    try:
        module = importlib.import_module(name)
        print(f"{name} {getattr(module, '__version__', '?')}")
    except Exception as error:
        print(f"{name}: not importable ({error})")
try:
    import torch
    print("torch CUDA", torch.version.cuda, "device", torch.cuda.get_device_name(0) if torch.cuda.is_available() else "none")
except Exception as error:
    print("torch CUDA: ", error)
PY
  echo "--- libraries"
  ldconfig -p | grep -E "libcuda\.so|libnvrtc\.so|libOpenCL\.so|libsqlite3\.so" || true
  ls -l .device/include 2>/dev/null || echo "no .device/include (sqlite3.h must come from elsewhere)"
}

sqlite_include() {
  if [ -f "$root/.device/include/sqlite3.h" ]; then
    echo "$root/.device/include"
  elif [ -f /usr/include/sqlite3.h ]; then
    echo /usr/include
  else
    echo ""
  fi
}

step_build() {
  local pybind_dir generator sqlite_dir
  pybind_dir="$("$python" -c 'import pybind11; print(pybind11.get_cmake_dir())')" || return 1
  sqlite_dir="$(sqlite_include)"
  [ -n "$sqlite_dir" ] || { echo "sqlite3.h not found: carry it in .device/include"; return 1; }
  generator="Unix Makefiles"
  command -v ninja >/dev/null && generator=Ninja
  # The MACA plugin against the stand-in SDK, as in CI: the MACA tests run on this GPU through it (step maca).
  cmake -S . -B "$build" -G "$generator" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DKERNELSMITH_BUILD_TESTS=ON -DKERNELSMITH_BUILD_PYTHON=ON -DKERNELSMITH_MACA_PATH="$root/tests/maca_standin" \
    -DSQLITE3_INCLUDE_DIR="$sqlite_dir" -Dpybind11_DIR="$pybind_dir" -DPython_EXECUTABLE="$(command -v "$python")" &&
    cmake --build "$build" -j "$jobs"
}

need_build() {
  [ -x "$build/tests/kernelsmith_tests" ] || { echo "no test binary: run the build step first"; return 1; }
}

step_gpu() {
  need_build || return 1
  # Verbose: the log keeps every test's output, the skips' reasons included.
  ctest --test-dir "$build" -L gpu -V --output-junit "$logs/ctest-gpu.xml"
}

step_unit() {
  need_build || return 1
  ctest --test-dir "$build" -L unit --output-on-failure --output-junit "$logs/ctest-unit.xml"
}

step_install() {
  local pybind_dir sqlite_dir
  pybind_dir="$("$python" -c 'import pybind11; print(pybind11.get_cmake_dir())')" || return 1
  sqlite_dir="$(sqlite_include)"
  # System site packages: torch, triton, cupy, numpy, pybind11 and scikit-build-core come from there.
  CMAKE_BUILD_PARALLEL_LEVEL="$jobs" "$venv/bin/python" -m pip install -v --no-index --no-deps --no-build-isolation \
    --config-settings=cmake.define.SQLITE3_INCLUDE_DIR="$sqlite_dir" \
    --config-settings=cmake.define.pybind11_DIR="$pybind_dir" \
    --config-settings=build-dir="build/python-$compiler_tag-{wheel_tag}" . &&
    (cd /tmp && "$venv/bin/python" -c 'import kernelsmith, sys; print("imported", kernelsmith.__file__, kernelsmith.__version__)')
}

need_install() {
  [ -x "$venv/bin/python" ] && (cd /tmp && "$venv/bin/python" -c 'import kernelsmith') ||
    { echo "kernelsmith is not installed in $venv: run the install step first"; return 1; }
}

step_devices() {
  need_install || return 1
  (cd /tmp && "$venv/bin/kernelsmith" devices) &&
    (cd /tmp && "$venv/bin/python" -c 'import kernelsmith; print(kernelsmith.devices_json())' >"$logs/devices.json") &&
    cat "$logs/devices.json"
}

# The sandbox (docs/security.md) on this machine: the launcher's report, the attack tests, and the evaluator's
# throughput with the sandbox off and on, alternated in one run (KS_SANDBOX_ROUNDS pairs, default 2), so that
# its cost is measured side by side.
step_sandbox() {
  need_build || return 1
  local scratch rc=0
  scratch="$(mktemp -d)"
  "$build/lib/kernelsmith-sandbox" --report --scratch "$scratch" || rc=1
  rm -rf "$scratch"
  "$build/tests/kernelsmith_tests" "[sandbox]" || rc=1
  need_install || return 1
  (cd /tmp && "$venv/bin/kernelsmith" devices) || rc=1
  (cd /tmp && "$venv/bin/python" -m pytest -q -rs -p no:cacheprovider -c "$root/pyproject.toml" --rootdir "$root" \
    "$root/tests/python/test_sandbox.py") || rc=1
  local round
  for round in $(seq 1 "${KS_SANDBOX_ROUNDS:-2}"); do
    for setting in off on; do
      KERNELSMITH_SANDBOX=$setting "$venv/bin/python" bench/bench_evaluator.py --skip kernelbench,agreement,noise \
        --out "$logs/bench-sandbox-$setting-$round.json" >"$logs/bench-sandbox-$setting-$round.log" 2>&1 || rc=1
    done
  done
  "$venv/bin/python" - "$logs" <<'PY' || rc=1
import json, pathlib, statistics, sys
logs = pathlib.Path(sys.argv[1])
rates = {"off": [], "on": []}
for path in sorted(logs.glob("bench-sandbox-*.json")):
    setting = path.stem.split("-")[2]
    phase = json.loads(path.read_text())["phases"].get("throughput", {})
    rates[setting].append((phase.get("per_minute"), phase.get("warm", {}).get("per_minute")))
for setting, values in rates.items():
    print(f"sandbox {setting}: cold/warm evaluations per minute {values}")
cold = {k: statistics.median(v[0] for v in values) for k, values in rates.items()}
warm = {k: statistics.median(v[1] for v in values) for k, values in rates.items()}
print(f"cold: on/off = {cold['on'] / cold['off']:.3f}; warm: on/off = {warm['on'] / warm['off']:.3f} (medians)")
PY
  return $rc
}

# KS_BENCH_ARGS: more arguments, e.g. "--skip agreement,noise" to fit the throughput and KernelBench-way
# phases in one call.
step_bench() {
  need_install || return 1
  # shellcheck disable=SC2086  # KS_BENCH_ARGS is a list of arguments
  "$venv/bin/python" bench/bench_evaluator.py --out "$logs/bench_evaluator.json" ${KS_BENCH_ARGS:-}
}

# The task suite: a short evolution per task, the best kernel against its reference, PyTorch eager and
# torch.compile (default and max-autotune-no-cudagraphs).
# KS_SUITE_ARGS: more arguments, e.g. "--tasks prefix_scan,relu,rmsnorm,row_sum,softmax,transpose": the 16 tasks
# with torch.compile's autotuning take longer than one call's 590 s.
step_suite() {
  need_install || return 1
  # shellcheck disable=SC2086  # KS_SUITE_ARGS is a list of arguments
  (cd /tmp && "$venv/bin/python" "$root/bench/bench_suite.py" --json "$logs/bench_suite.json" ${KS_SUITE_ARGS:-})
}

# Hopper (issue 19, docs/candidate-format.md "Hopper: tensor maps and clusters"): every task's reference and
# seed against its float64 CPU reference on this GPU, the TMA tile copy, the cluster kernel and a TMA candidate
# through the evaluator (tests tagged [gpu][hopper]: on a GPU before sm_90 they skip, saying so), then the
# compute-bound tasks' seeds, tuned briefly, against PyTorch eager and torch.compile.
step_hopper() {
  need_build || return 1
  local rc=0
  "$build/tests/kernelsmith_tests" "[task_suite][gpu]" || rc=1
  "$build/tests/kernelsmith_tests" "[gpu][hopper]" -s || rc=1
  need_install || return 1
  (cd /tmp && "$venv/bin/python" "$root/bench/bench_suite.py" \
    --tasks "${KS_HOPPER_TASKS:-matmul,conv2d_3x3,linear_gelu,matmul_fp16,matmul_bf16,attention}" \
    --budget "${KS_HOPPER_BUDGET:-12}" --time-limit 300 --json "$logs/bench_suite_hopper.json") || rc=1
  return $rc
}

# The Python tests marked `gpu`; on this machine one that skips fails (tests/python/conftest.py).
step_pytest() {
  need_install || return 1
  (cd /tmp && KERNELSMITH_REQUIRE_GPU_TESTS=1 "$venv/bin/python" -m pytest -q -rs -p no:cacheprovider \
    -c "$root/pyproject.toml" --rootdir "$root" -m gpu --junitxml "$logs/pytest-gpu.xml" "$root/tests/python")
}

# Scaling (docs/distributed.md): evaluations per minute on 1, 2, 4 GPUs of this host (those it has) and on as
# many Ray actors, then the direct evaluator against one Ray actor on the same candidates (strict mode:
# statuses must agree; the medians' ratio is printed). Ray comes from PyPI; on a machine without network
# give a folder of wheels (ray and its dependencies) in KS_RAY_WHEELS. Without Ray the device-set part
# still runs and the step fails, saying Ray is missing.
step_scale() {
  need_install || return 1
  if ! "$venv/bin/python" -c 'import ray' 2>/dev/null && [ -n "${KS_RAY_WHEELS:-}" ]; then
    "$venv/bin/python" -m pip install --no-index --find-links "$KS_RAY_WHEELS" ray
  fi
  (cd /tmp && "$venv/bin/python" "$root/bench/bench_scale.py" --compare --counts "${KS_SCALE_COUNTS:-1,2,4}" \
    --out "$logs/bench_scale.json")
}

# KernelBench (docs/kernelbench.md): the folder of its problems, given by path, never copied.
kernelbench="${KERNELBENCH:-$root/../shared/kernelbench/KernelBench}"
kb_tasks="$root/build/kb-tasks"

# Imports levels 1 and 2 on the GPU: the per-problem table and import_report.json of each level.
step_kbimport() {
  need_install || return 1
  [ -d "$kernelbench/level1" ] || { echo "no KernelBench problems at $kernelbench: set KERNELBENCH"; return 1; }
  rm -rf "$kb_tasks" && mkdir -p "$kb_tasks"
  local level rc=0
  for level in ${KB_LEVELS:-1 2}; do
    (cd /tmp && "$venv/bin/kernelsmith" kernelbench import "$kernelbench/level$level" --level "$level" \
      --device cuda --out "$kb_tasks/level$level") || rc=1
    cp "$kb_tasks/level$level/import_report.json" "$logs/kb_import_level$level.json" 2>/dev/null
  done
  return $rc
}

# Evolves the problems that examples/kernelbench has seeds for, with the parameter mutator, and reports.
step_kbrun() {
  need_install || return 1
  [ -d "$kb_tasks/level1" ] || { echo "no imported tasks in $kb_tasks: run the kbimport step first"; return 1; }
  local db="$logs/kb-${KB_LANGUAGE:-cuda}.db" rc=0 level
  rm -f "$db"
  for level in 1 2; do
    [ "$level" = 1 ] && problems="${KB_L1_PROBLEMS:-1,2,8,12,13,15,16,17,40,88,95}"
    [ "$level" = 2 ] && problems="${KB_L2_PROBLEMS:-12,29,76,86}"
    (cd /tmp && "$venv/bin/kernelsmith" kernelbench run --tasks "$kb_tasks/level$level" --level "$level" \
      --problems "$problems" --seeds "$root/examples/kernelbench" --backend cuda \
      --language "${KB_LANGUAGE:-cuda}" --mutator param --budget "${KB_BUDGET:-8}" --db "$db" \
      ${KB_BASELINES:+--baselines "$KB_BASELINES"}) || rc=1
  done
  (cd /tmp && "$venv/bin/kernelsmith" kernelbench report --db "$db") &&
    (cd /tmp && "$venv/bin/kernelsmith" kernelbench report --db "$db" --json >"$logs/kb-report-${KB_LANGUAGE:-cuda}.json")
  return $rc
}

# The evaluator's own task checks on every imported problem's oracle (bench/check_kernelbench_tasks.py).
step_kbcheck() {
  need_install || return 1
  [ -d "$kb_tasks/level1" ] || { echo "no imported tasks in $kb_tasks: run the kbimport step first"; return 1; }
  # KB_CHECK_RESUME: an earlier call's kb-task-checks.json (carried in the tree); its problems are skipped.
  if [ -n "${KB_CHECK_RESUME:-}" ] && [ -f "$root/$KB_CHECK_RESUME" ]; then
    cp "$root/$KB_CHECK_RESUME" "$logs/kb-task-checks.json"
  fi
  (cd /tmp && "$venv/bin/python" "$root/bench/check_kernelbench_tasks.py" --tasks "$kb_tasks"/level* \
    --jobs "${KB_CHECK_JOBS:-6}" ${KB_CHECK_LARGEST:+--largest "$KB_CHECK_LARGEST"} \
    ${KB_CHECK_ADMIT_SECONDS:+--admit-for "$KB_CHECK_ADMIT_SECONDS"} ${KB_CHECK_MEMORY_GIB:+--memory-gib "$KB_CHECK_MEMORY_GIB"} \
    --json "$logs/kb-task-checks.json" --resume "$logs/kb-task-checks.json")
}

# PyTorch eager on every problem of levels 1 and 2, timed as kernelsmith times a baseline, against the times
# KernelBench published (bench/bench_kernelbench_baselines.py).
step_kbbase() {
  need_install || return 1
  [ -d "$kernelbench/level1" ] || { echo "no KernelBench problems at $kernelbench: set KERNELBENCH"; return 1; }
  (cd /tmp && "$python" "$root/bench/bench_kernelbench_baselines.py" --kernelbench "$(dirname "$kernelbench")" \
    --levels ${KB_LEVELS:-1 2} --budget 0.15 --json "$logs/kb-baselines.json")
}

# MACA (docs/backends.md, "MACA"): the build step builds the MACA backend plugin against the stand-in SDK
# (tests/maca_standin); through the plugin and the stand-in runtime on this GPU this step runs the backend
# conformance suite (CUDA, OpenCL and MACA rows), every built-in task's MACA reference and seed against the CPU
# references, faulty candidates classified as on CUDA, the CUDA-vs-MACA timing agreement (the ratios are
# printed), and `kernelsmith devices`, `eval --backend maca` and `evolve --backend maca` through the build's
# staged Python package. Each check prints a PASS or FAIL line.
step_maca() {
  need_build || return 1
  [ -f "$build/tests/maca_standin/lib/libmcruntime.so" ] ||
    { echo "FAIL maca: no stand-in runtime in $build: the build step must configure with KERNELSMITH_MACA_PATH"; return 1; }
  local rc=0 tests="$build/tests/kernelsmith_tests" stage="$build/python" filter what
  # A skipped test fails here (--warn NoAssertions): on this machine every MACA test must run.
  for filter in "[conformance]" "[maca]~[timing]~[no_gpu]"; do
    if "$tests" "$filter" --warn NoAssertions; then
      echo "PASS maca: kernelsmith_tests $filter"
    else
      echo "FAIL maca: kernelsmith_tests $filter"
      rc=1
    fi
  done
  if "$tests" "[maca][timing]" --warn NoAssertions | tee "$logs/maca-timing.txt"; then
    echo "PASS maca: timing agreement within 2%"
  else
    echo "FAIL maca: timing agreement not within 2%"
    rc=1
  fi
  grep "timing agreement" "$logs/maca-timing.txt" | sed 's/^/      /'
  # The command line through the stand-in.
  export KERNELSMITH_MACA_RUNTIME="$build/tests/maca_standin/lib/libmcruntime.so"
  (cd /tmp && PYTHONPATH="$stage" "$python" -m kernelsmith devices) || rc=1
  for what in "--task relu --reference" "--task softmax $root/tasks/softmax/seed.maca"; do
    # shellcheck disable=SC2086
    if (cd /tmp && PYTHONPATH="$stage" "$python" -m kernelsmith eval --backend maca $what); then
      echo "PASS maca: kernelsmith eval --backend maca $what"
    else
      echo "FAIL maca: kernelsmith eval --backend maca $what"
      rc=1
    fi
  done
  rm -f "$logs/maca-evolve.db"
  if (cd /tmp && PYTHONPATH="$stage" "$python" -m kernelsmith evolve --task row_sum --backend maca \
        --mutator param --budget 6 --db "$logs/maca-evolve.db"); then
    echo "PASS maca: kernelsmith evolve --backend maca (row_sum, parameter mutator)"
  else
    echo "FAIL maca: kernelsmith evolve --backend maca"
    rc=1
  fi
  return $rc
}

# ModelNew on the GPU (docs/kernelbench-modelnew.md): the ModelNew tests (CUDA and Triton kernels inside a
# ModelNew, the runner's timing against triton.testing.do_bench), then the hand-written ModelNew files of
# examples/kernelbench (cuBLAS's GEMM and a fused CUDA epilogue) evaluated in strict mode against eager
# PyTorch and torch.compile on their imported problems (KB_MODELNEW_PROBLEMS, default 12,76 of level 2);
# KB_MODELNEW_TESTS=0 leaves the tests out.
step_modelnew() {
  need_install || return 1
  local rc=0 tasks="$root/build/kb-modelnew" problem task
  if [ "${KB_MODELNEW_TESTS:-1}" = 1 ]; then
    (cd /tmp && KERNELSMITH_REQUIRE_GPU_TESTS=1 "$venv/bin/python" -m pytest -q -rs -p no:cacheprovider \
      -c "$root/pyproject.toml" --rootdir "$root" --junitxml "$logs/pytest-modelnew.xml" \
      "$root/tests/python/test_model_new_gpu.py" "$root/tests/python/test_host_code_integrity.py") || rc=1
  fi
  [ -d "$kernelbench/level2" ] || { echo "no KernelBench problems at $kernelbench: set KERNELBENCH"; return 1; }
  rm -rf "$tasks"
  (cd /tmp && "$venv/bin/kernelsmith" kernelbench import "$kernelbench/level2" --level 2 \
    --problems "${KB_MODELNEW_PROBLEMS:-12,76}" --device cuda --out "$tasks") || rc=1
  for task in "$tasks"/kb_l2_*; do
    [ -f "$root/examples/kernelbench/$(basename "$task")/model_new.py" ] || continue
    (cd /tmp && "$venv/bin/kernelsmith" eval --task "$task" --backend cuda --mode strict --json \
      "$root/examples/kernelbench/$(basename "$task")/model_new.py" >"$logs/modelnew-$(basename "$task").json") || rc=1
    "$venv/bin/python" - "$logs/modelnew-$(basename "$task").json" <<'PY' || rc=1
import json, sys
e = json.load(open(sys.argv[1]))
t = e.get("timing") or {}
print(f"{e['task']}: {e['status']} ({e['message'][:200]}); median {t.get('median_ms', 0):.4f} ms; speedups "
      + ", ".join(f"{k} {v:.3f}x" for k, v in sorted((e.get("speedups") or {}).items()))
      + "; baselines " + ", ".join(f"{k} {v.get('median_ms', 0):.4f} ms" for k, v in sorted((e.get("baselines") or {}).items())))
PY
  done
  return $rc
}

export root OUT logs build venv jobs python compiler_tag kernelbench kb_tasks
export -f step_info sqlite_include step_build need_build step_gpu step_unit step_install need_install \
  step_pytest step_devices step_bench step_suite step_hopper step_scale step_kbimport step_kbrun step_kbcheck step_kbbase \
  step_maca step_sandbox step_modelnew

for step in "${steps[@]}"; do
  case "$step" in
    info) run_step info 120 step_info ;;
    build) run_step build 900 step_build ;;
    gpu) run_step gpu 600 step_gpu ;;
    unit) run_step unit 900 step_unit ;;
    install) run_step install 900 step_install ;;
    devices) run_step devices 120 step_devices ;;
    pytest) run_step pytest 590 step_pytest ;;
    bench) run_step bench 590 step_bench ;;
    sandbox) run_step sandbox 590 step_sandbox ;;
    suite) run_step suite 590 step_suite ;;
    hopper) run_step hopper 590 step_hopper ;;
    scale) run_step scale 590 step_scale ;;
    kbimport) run_step kbimport 590 step_kbimport ;;
    kbbase) run_step kbbase 590 step_kbbase ;;
    kbrun) run_step kbrun 590 step_kbrun ;;
    kbcheck) run_step kbcheck 590 step_kbcheck ;;
    maca) run_step maca 900 step_maca ;;
    modelnew) run_step modelnew 590 step_modelnew ;;
    *) note "unknown step '$step' (steps: info build gpu unit install pytest devices bench suite hopper scale kbimport kbrun kbcheck kbbase maca modelnew)"; failures=$((failures + 1)) ;;
  esac
done
note "gpu-check done: $failures failed step(s); logs in $logs"
exit "$failures"
