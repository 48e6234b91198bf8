#!/usr/bin/env bash
# Installs what building and testing kernelsmith needs on Debian 12 / Ubuntu 24.04 (apt) and PyPI, into
# a virtual environment at .venv. Idempotent: installs only what is missing.
set -euo pipefail
cd "$(dirname "$0")/.."
# KERNELSMITH_SHOW_BUILD=1 (the main job) shows apt's and pip's own progress instead of their quiet modes.
pip_quiet=-q
apt_output=/dev/null
if [ "${KERNELSMITH_SHOW_BUILD:-0}" = 1 ]; then
  pip_quiet="--progress-bar=on"
  apt_output=/dev/stdout
fi

apt_packages=(build-essential cmake ninja-build pkg-config git
  libfmt-dev nlohmann-json3-dev libeigen3-dev libsqlite3-dev catch2
  opencl-headers ocl-icd-opencl-dev pocl-opencl-icd python3-venv)

missing=()
if command -v dpkg-query >/dev/null 2>&1; then
  for package in "${apt_packages[@]}"; do
    dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
  done
fi
if ((${#missing[@]})); then
  echo "setup: installing with apt: ${missing[*]}"
  sudo_cmd=""
  [ "$(id -u)" -ne 0 ] && sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -q "${missing[@]}" >"$apt_output"
fi

# Headless Chromium for the web view's browser tests (tests/python/test_web.py): Debian's package. Optional
# elsewhere (on Ubuntu the package installs a snap, which a container cannot run; the tests then skip, saying
# why); CI (.ci/run sets KERNELSMITH_REQUIRE_CHROMIUM) stops here when it cannot be installed.
if command -v dpkg-query >/dev/null 2>&1 && ! dpkg-query -W -f='${Status}' chromium 2>/dev/null | grep -q "install ok installed"; then
  echo "setup: installing chromium with apt (headless browser tests of the web view)"
  sudo_cmd=""
  [ "$(id -u)" -ne 0 ] && sudo_cmd="sudo"
  if ! { $sudo_cmd apt-get update -qq && DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -q chromium >"$apt_output"; }; then
    if [ -n "${KERNELSMITH_REQUIRE_CHROMIUM:-}" ]; then
      echo "setup: cannot install chromium, which KERNELSMITH_REQUIRE_CHROMIUM asks for (the web view's browser tests)" >&2
      exit 1
    fi
    echo "setup: chromium is not installable here; the browser tests of the web view will skip"
  fi
fi

# The venv: python3 may be a pyenv build that has venv built in; Debian's needs python3-venv (above).
if [ ! -x .venv/bin/python ]; then
  echo "setup: creating .venv"
  python3 -m venv .venv
fi
# Build requirements are installed here so that `pip install --no-build-isolation .` needs no network
# on later runs and reuses its build folder (incremental rebuilds).
need_pip=0
.venv/bin/python - <<'PY' || need_pip=1
import importlib.util, sys
mods = ["pybind11", "scikit_build_core", "numpy", "pytest", "datasets",
        "tqdm", "matplotlib", "pandas", "nbclient", "ipykernel", "ipywidgets", "pybind11_stubgen", "flask"]
sys.exit(0 if all(importlib.util.find_spec(m) for m in mods) else 1)
PY
if [ "$need_pip" -eq 1 ]; then
  echo "setup: installing Python build and test requirements into .venv"
  .venv/bin/python -m pip install $pip_quiet --upgrade pip
  .venv/bin/python -m pip install $pip_quiet "pybind11>=2.10" "scikit-build-core>=0.10" "numpy>=1.22" "pytest>=7" "datasets>=2.14" \
    tqdm matplotlib pandas nbclient ipykernel ipywidgets pybind11-stubgen "flask>=3.1"
fi
# Triton, optional for users (pip install kernelsmith[triton]), is installed here so that the tests of
# Triton candidates (tests/python/test_triton_compile.py: compiles for sm_80/sm_90, no GPU needed) run;
# its wheels are for Linux x86_64 and aarch64 only, and the tests skip, saying why, where it is missing.
# The version is pinned to the one on the GPU machines (docs/triton.md), so that CI compiles what they run.
triton_pin="3.6.0"
if [ "$(.venv/bin/python -c "import triton; print(triton.__version__)" 2>/dev/null)" != "$triton_pin" ]; then
  echo "setup: installing triton $triton_pin into .venv (optional: Triton candidates)"
  .venv/bin/python -m pip install $pip_quiet "triton==$triton_pin" || echo "setup: triton is not installable here; its tests will skip"
fi
# PyTorch, optional for users (pip install kernelsmith[torch]): the oracle and the baselines of tasks
# imported from KernelBench (docs/kernelbench.md). Pinned to the GPU machines' version; PyPI's Linux wheel
# runs on the CPU where there is no GPU, which is how CI checks imported problems end to end on PoCL.
torch_pin="2.11.0"
if [ "$(.venv/bin/python -c "import torch; print(torch.__version__.split('+')[0])" 2>/dev/null)" != "$torch_pin" ]; then
  echo "setup: installing torch $torch_pin into .venv (optional: KernelBench oracle and baselines)"
  .venv/bin/python -m pip install $pip_quiet "torch==$torch_pin" || echo "setup: torch is not installable here; its tests will skip"
fi
# einops, installed with torch by kernelsmith[torch]: KernelBench's requirements list it, and level 3's Mamba-2
# problems import it (the importer refuses a problem whose imports are missing, naming the module).
if .venv/bin/python -c "import torch" 2>/dev/null && ! .venv/bin/python -c "import einops" 2>/dev/null; then
  echo "setup: installing einops into .venv (optional: KernelBench problems that import it)"
  .venv/bin/python -m pip install $pip_quiet "einops>=0.6" || echo "setup: einops is not installable here; problems that import it are refused"
fi
# Ray, optional for users (pip install kernelsmith[ray]): kernelsmith.distributed.RayEvaluator. CI needs it:
# tests/python/test_distributed.py starts a local Ray cluster and evaluates on PoCL actors.
if ! .venv/bin/python -c "import ray" 2>/dev/null; then
  echo "setup: installing ray into .venv (optional: evaluation on a Ray cluster)"
  .venv/bin/python -m pip install $pip_quiet "ray>=2.9" || echo "setup: ray is not installable here; its tests will skip"
fi
