"""C++ from pip: the installed package carries the shared library, the public headers and the CMake package, and a
C++ program built with find_package(kernelsmith) against them links the package's own library (no second build
of it) and runs. docs/install.md's pip example runs as written."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import kernelsmith as ks

ROOT = Path(__file__).resolve().parents[2]
PACKAGE_DIR = Path(ks.__file__).parent
INSTALL_DOC = ROOT / "docs" / "install.md"


def cxx_compiler() -> str | None:
    """The compiler CMake would pick: $CXX, else the first of c++, g++, clang++ on PATH."""
    candidates = [os.environ["CXX"]] if os.environ.get("CXX") else ["c++", "g++", "clang++"]
    return next((found for found in map(shutil.which, candidates) if found), None)


needs_toolchain = pytest.mark.skipif(
    shutil.which("cmake") is None or cxx_compiler() is None,
    reason="building a C++ consumer needs cmake and a C++ compiler (c++, g++ or clang++, or $CXX): none found")


def run(command, **options) -> subprocess.CompletedProcess:
    """Runs a build step; on failure the assertion shows the step's output."""
    result = subprocess.run(command, capture_output=True, text=True, **options)
    assert result.returncode == 0, (f"{command} failed ({result.returncode}):\n"
                                    f"{result.stdout[-4000:]}\n{result.stderr[-4000:]}")
    return result


def test_the_package_carries_the_library_headers_and_cmake_package():
    cmake_dir = Path(ks.get_cmake_dir())
    assert cmake_dir == PACKAGE_DIR / "share" / "cmake" / "kernelsmith"
    for name in ("kernelsmithConfig.cmake", "kernelsmithConfigVersion.cmake", "kernelsmithTargets.cmake"):
        assert (cmake_dir / name).is_file(), f"{name} missing from {cmake_dir}"
    # The exported target names none of the library's private dependencies: a consumer needs none of them.
    targets = (cmake_dir / "kernelsmithTargets.cmake").read_text()
    for dependency in ("fmt::", "Eigen3::", "SQLite::", "nlohmann_json::", "pybind11::"):
        assert dependency not in targets, f"the exported target names {dependency}"
    include = Path(ks.get_include())
    assert include == PACKAGE_DIR / "include"
    shipped = sorted(p.name for p in (include / "kernelsmith").glob("*.hpp"))
    public = sorted(p.name for p in (ROOT / "include" / "kernelsmith").glob("*.hpp"))
    assert set(public) <= set(shipped), f"headers missing from the package: {sorted(set(public) - set(shipped))}"
    assert "config.hpp" in shipped  # the generated one
    # One file for the library, named by its soname: a wheel would hold every symbolic link as a copy.
    assert sorted(p.name for p in PACKAGE_DIR.glob("libkernelsmith.so*")) == ["libkernelsmith.so.0.1"]
    # The Python module uses that same library.
    import kernelsmith._core as core

    linked = subprocess.run(["ldd", core.__file__], capture_output=True, text=True) if shutil.which("ldd") else None
    if linked is not None and linked.returncode == 0:
        assert f"=> {PACKAGE_DIR / 'libkernelsmith.so.0.1'}" in linked.stdout, linked.stdout


def test_python_m_kernelsmith_prints_the_folders():
    for option, expected in (("--cmake-dir", ks.get_cmake_dir()), ("--include-dir", ks.get_include())):
        printed = run([sys.executable, "-m", "kernelsmith", option], cwd=ROOT / "tests").stdout
        assert printed == expected + "\n"


def test_a_package_without_the_cmake_files_says_what_to_do(tmp_path, monkeypatch):
    from kernelsmith import _cpp_package

    monkeypatch.setattr(_cpp_package, "_PACKAGE_DIR", str(tmp_path))
    with pytest.raises(FileNotFoundError, match=r"no kernelsmithConfig\.cmake in .*share/cmake/kernelsmith: .*"
                                                r"was not installed from its wheel.*pip install \."):
        ks.get_cmake_dir()
    from kernelsmith.cli import main

    with pytest.raises(SystemExit) as exited:
        main(["--include-dir"])
    assert exited.value.code == 1


@needs_toolchain
def test_find_package_consumer_links_the_installed_library(tmp_path):
    """tests/cmake/consumer (CTest builds it against a `cmake --install` tree) built against the pip-installed
    package with -Dkernelsmith_DIR=$(python -m kernelsmith --cmake-dir): it lists the backends, loads a built-in
    task and catches the library's own error type."""
    build = tmp_path / "build"
    configured = run(["cmake", "-S", str(ROOT / "tests" / "cmake" / "consumer"), "-B", str(build),
                      f"-Dkernelsmith_DIR={ks.get_cmake_dir()}", "-DCMAKE_BUILD_TYPE=Release"])
    assert f"-- kernelsmith headers: {ks.get_include()}\n" in configured.stdout, configured.stdout
    run(["cmake", "--build", str(build)])
    # The consumer links the package's library file itself, found at run time through the build's RPATH.
    if shutil.which("ldd"):
        linked = run(["ldd", str(build / "consumer")]).stdout
        assert f"libkernelsmith.so.0.1 => {PACKAGE_DIR / 'libkernelsmith.so.0.1'}" in linked, linked
    assert not list(build.rglob("libkernelsmith*")), "the consumer's build made a library of its own"
    printed = run([str(build / "consumer")], cwd=tmp_path).stdout.splitlines()
    assert printed[0] == f"kernelsmith {ks.__version__}"
    backends = [line.split(":")[0] for line in printed[1:1 + len(ks.devices())]]
    assert backends == [backend.name for backend in ks.devices()]
    task = ks.Task.load(ks.builtin_task_names()[0])
    assert f"task {task.name} with {len(task.tensors)} tensors" in printed
    assert any(line.startswith("caught PlanError: ") for line in printed)


def pip_example() -> list[str]:
    """The commands of docs/install.md's example of building against the pip-installed package."""
    section = INSTALL_DOC.read_text().split("### From the pip-installed package", 1)[1]
    block = re.search(r"^```sh\n(.*?)^```", section, flags=re.S | re.M).group(1)
    return [line.split("  #")[0].strip() for line in block.splitlines() if line.strip()]


@needs_toolchain
def test_docs_install_md_pip_example_runs(tmp_path):
    """The example as written (less its `pip install .`, done): examples/cpp configured with CMAKE_PREFIX_PATH
    from `python -m kernelsmith --cmake-dir`, built, and run on the best available device."""
    if not any(backend.available for backend in ks.devices()):
        pytest.skip("the example evaluates on a device: no CUDA or OpenCL device here (install pocl-opencl-icd)")
    commands = pip_example()
    assert commands[0] == "pip install ."
    assert any("python -m kernelsmith --cmake-dir" in command for command in commands)
    (tmp_path / "examples").symlink_to(ROOT / "examples")
    # `python` is the interpreter that runs the tests, where the package is installed.
    env = dict(os.environ, PATH=os.path.dirname(sys.executable) + os.pathsep + os.environ["PATH"])
    result = run(["bash", "-euo", "pipefail", "-c", "\n".join(commands[1:])], cwd=tmp_path, env=env)
    cache = (tmp_path / "build-example" / "CMakeCache.txt").read_text()
    assert f"kernelsmith_DIR:PATH={ks.get_cmake_dir()}\n" in cache
    assert re.search(r"^task relu on \w+ '", result.stdout, flags=re.M), result.stdout
