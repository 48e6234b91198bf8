"""On a machine with an NVIDIA GPU a test marked `gpu` that skips has not run: it fails there, so that "passed"
means every GPU test ran (the C++ side does the same with Catch's NoAssertions warning, tests/CMakeLists.txt).
Elsewhere such skips say why and pass. KERNELSMITH_REQUIRE_GPU_TESTS=1 asks for the strict rule anywhere."""

from __future__ import annotations

import os
import pathlib

import pytest


def gpu_present() -> bool:
    return os.environ.get("KERNELSMITH_REQUIRE_GPU_TESTS", "") not in ("", "0") or any(
        pathlib.Path(p).exists() for p in ("/dev/nvidia0", "/dev/nvidiactl"))


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if report.skipped and item.get_closest_marker("gpu") is not None and gpu_present():
        reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
        report.outcome = "failed"
        report.longrepr = (f"{item.nodeid}: a GPU test skipped where GPU tests must run (an NVIDIA GPU "
                           f"is present or KERNELSMITH_REQUIRE_GPU_TESTS is set): {reason}. "
                           "Set up what it needs here, or unmark it `gpu` if it needs no GPU")
