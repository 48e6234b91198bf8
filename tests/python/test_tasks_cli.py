"""`kernelsmith tasks --json` lists every built-in task with its languages, sizes and work model,
matching the manifests in the source tree's tasks/ folder."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

SOURCE_TASKS = Path(__file__).resolve().parents[2] / "tasks"


def _manifests() -> dict:
    manifests = {}
    for manifest in sorted(SOURCE_TASKS.glob("*/task.json")):
        document = json.loads(manifest.read_text())
        manifests[document["name"]] = document
    return manifests


def _evaluate(expression: str, sizes: dict) -> int:
    # The work expressions of the built-in tasks use + - * and parentheses over the sizes only.
    allowed = set("0123456789+-*() ") | set("".join(sizes))
    assert set(expression) <= allowed, f"unexpected characters in {expression!r}"
    return int(eval(expression, {"__builtins__": {}}, dict(sizes)))  # noqa: S307


@pytest.fixture(scope="module")
def listed() -> dict:
    # The command as a user runs it, in a fresh interpreter; the built-in tasks come from the source
    # tree (an uninstalled build), not from a stray $KERNELSMITH_TASKS_PATH.
    env = dict(os.environ)
    env.pop("KERNELSMITH_TASKS_PATH", None)
    result = subprocess.run(
        [sys.executable, "-m", "kernelsmith", "tasks", "--json"],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    document = json.loads(result.stdout)
    return {task["name"]: task for task in document["tasks"]}


def test_every_manifest_is_listed(listed):
    manifests = _manifests()
    assert len(manifests) >= 13
    assert sorted(listed) == sorted(manifests)


def test_languages_are_cuda_maca_and_opencl(listed):
    for name, task in listed.items():
        assert sorted(task["languages"]) == ["cuda", "maca", "opencl"], name
        # The Triton seed runs on the CUDA backend.
        assert task["seeds"] == ["cuda", "maca", "opencl", "triton"], name


def test_pytorch_expressions_match_the_manifests(listed):
    for name, manifest in _manifests().items():
        assert listed[name]["pytorch"] == manifest["pytorch"], name
        assert listed[name]["pytorch"], name


def test_sizes_match_the_manifests(listed):
    for name, manifest in _manifests().items():
        task = listed[name]
        assert task["sizes"] == manifest["sizes"], name
        assert [c["name"] for c in task["check_sizes"]] == [c["name"] for c in manifest["check_sizes"]], name
        assert [c["sizes"] for c in task["check_sizes"]] == [c["sizes"] for c in manifest["check_sizes"]], name
        assert len(task["check_sizes"]) >= 4, name


def test_tensors_match_the_manifests(listed):
    aliases = {"float16": "float16", "bfloat16": "bfloat16", "float32": "float32", "int32": "int32"}
    for name, manifest in _manifests().items():
        task = listed[name]
        assert [t["name"] for t in task["tensors"]] == [t["name"] for t in manifest["tensors"]], name
        for got, want in zip(task["tensors"], manifest["tensors"]):
            assert got["dtype"] == aliases[want["dtype"]], (name, got["name"])
            assert got["role"] == want["role"], (name, got["name"])
            assert [str(d) for d in got["shape"]] == [str(d) for d in want["shape"]], (name, got["name"])


def test_work_model_matches_and_fills_a_gpu(listed):
    for name, manifest in _manifests().items():
        work = listed[name]["work"]
        assert work["flops"] == manifest["work"]["flops"], name
        assert work["bytes"] == manifest["work"]["bytes"], name
        sizes = manifest["sizes"]
        assert work["flops_at_timing_sizes"] == _evaluate(manifest["work"]["flops"], sizes), name
        assert work["bytes_at_timing_sizes"] == _evaluate(manifest["work"]["bytes"], sizes), name
        # Timing sizes that fill an H100: 64 MiB of traffic or a GFLOP of work.
        assert work["bytes_at_timing_sizes"] >= 64 * 2**20 or work["flops_at_timing_sizes"] >= 1e9, name


def test_plain_listing_names_every_task():
    result = subprocess.run(
        [sys.executable, "-m", "kernelsmith", "tasks"], capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr
    names = [line.split()[0] for line in result.stdout.splitlines() if line.strip()]
    assert sorted(names) == sorted(_manifests())
