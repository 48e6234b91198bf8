"""The committed type stub python/kernelsmith/_core.pyi matches the built module: regenerated here with
pybind11-stubgen (the same command as tools/generate-stubs.sh) and compared."""

from __future__ import annotations

import difflib
import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

import kernelsmith._core as core

ROOT = Path(__file__).resolve().parents[2]
COMMITTED = ROOT / "python" / "kernelsmith" / "_core.pyi"


def test_the_committed_stub_is_current(tmp_path):
    if importlib.util.find_spec("pybind11_stubgen") is None:
        pytest.skip("pybind11-stubgen is not installed (pip install pybind11-stubgen)")
    package_parent = str(Path(core.__file__).resolve().parent.parent)
    staged = str(Path(core.__file__).parent.parent)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([staged, package_parent, os.environ.get("PYTHONPATH", "")]))
    subprocess.run(
        [sys.executable, "-m", "pybind11_stubgen", "kernelsmith._core", "--output-dir", str(tmp_path)],
        check=True,
        env=env,
        capture_output=True,
        text=True,
    )
    generated = (tmp_path / "kernelsmith" / "_core.pyi").read_text()
    assert COMMITTED.exists(), "python/kernelsmith/_core.pyi is missing: run tools/generate-stubs.sh <build>/python"
    committed = COMMITTED.read_text()
    if generated != committed:
        diff = "".join(
            list(
                difflib.unified_diff(
                    committed.splitlines(True), generated.splitlines(True), "committed _core.pyi", "from the build"
                )
            )[:60]
        )
        pytest.fail(
            "python/kernelsmith/_core.pyi is stale (the bindings changed): regenerate it with "
            "`tools/generate-stubs.sh <build>/python` and commit it. First differences:\n" + diff
        )


def test_the_package_ships_the_stub_and_py_typed():
    assert (ROOT / "python" / "kernelsmith" / "py.typed").exists()
    assert COMMITTED.exists()
