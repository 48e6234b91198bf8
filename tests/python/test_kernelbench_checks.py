"""bench/check_kernelbench_tasks.py, the evaluator's own task checks over imported KernelBench problems: the
memory-bounded scheduling on its own, then the real script on PoCL over two oracle problems written for the test
(one whose module passes the checks, one whose output is near-constant), resumed from its JSON."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import kernelsmith as ks
from backends import needs_opencl

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "bench" / "check_kernelbench_tasks.py"
sys.path.insert(0, str(ROOT / "bench"))

import check_kernelbench_tasks as checks  # noqa: E402

GIB = 2**30


def test_admission_fills_the_budget_and_a_giant_runs_alone():
    pending = [(60 * GIB, "giant"), (20 * GIB, "big"), (5 * GIB, "small")]
    # Nothing running: the first starts even over the budget (it then runs alone).
    assert checks.admit(pending, 0, 0, budget=40 * GIB) == 0
    # 30 GiB in use, 40 GiB budget: the giant and the big one wait, the small one fits.
    assert checks.admit(pending, 30 * GIB, 1, budget=40 * GIB) == 2
    # Nothing fits beside 38 GiB: wait for a running problem to finish.
    assert checks.admit(pending, 38 * GIB, 2, budget=40 * GIB) is None
    assert checks.admit([], 0, 0, budget=GIB) is None


_PROBLEM = '''import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return {body}


rows = 8
cols = 1024


def get_inputs():
    return [torch.randn(rows, cols)]


def get_init_inputs():
    return []
'''


def _write_problem(tasks: Path, name: str, body: str, rows: int = 8) -> Path:
    folder = tasks / name
    folder.mkdir(parents=True)
    (folder / "problem.py").write_text(_PROBLEM.format(body=body))
    (folder / "task.json").write_text(json.dumps({
        "schema": "kernelsmith.task/1",
        "name": name,
        "description": f"{name}: a KernelBench-format problem written for the tests",
        "sizes": {"rows": rows, "cols": 1024},
        "check_sizes": [{"name": "odd", "sizes": {"rows": 3, "cols": 333}}],
        "tensors": [
            {"name": "x", "dtype": "float32", "shape": ["rows", "cols"], "role": "input",
             "distribution": {"kind": "normal", "a": 0.0, "b": 1.0}},
            {"name": "out", "dtype": "float32", "shape": ["rows", "cols"], "role": "output"},
        ],
        "work": {"flops": "rows * cols", "bytes": "8 * rows * cols"},
        "oracle": {"kind": "pytorch", "module": "problem.py", "constants": {"rows": "rows", "cols": "cols"},
                   "forward": ["x"], "outputs": ["out"]},
    }))  # fmt: skip
    return folder


def test_the_estimate_counts_the_cases_of_the_timing_sizes(tmp_path):
    folder = _write_problem(tmp_path, "kb_l1_19_relu", "torch.relu(x)")
    one_case = 2 * 8 * 1024 * 4  # x and out, float32
    assert checks.case_bytes(ks.Task.load(str(folder))) == one_case
    assert checks.memory_estimate(str(folder)) == (checks.HELD_CASES * one_case + checks.FIXED_OVERHEAD_BYTES,
                                                   checks.DEVICE_HELD_CASES * one_case + checks.DEVICE_OVERHEAD_BYTES)
    # A folder that does not load: the overheads alone (the check itself then says why).
    (tmp_path / "broken").mkdir()
    (tmp_path / "broken" / "task.json").write_text("{")
    assert checks.memory_estimate(str(tmp_path / "broken")) == (checks.FIXED_OVERHEAD_BYTES,
                                                                checks.DEVICE_OVERHEAD_BYTES)


def _check(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(SCRIPT), "--backend", "opencl", *args], capture_output=True, text=True,
                          timeout=600)


@needs_opencl
def test_the_script_passes_a_sound_oracle_flags_a_near_constant_one_and_resumes(tmp_path):
    pytest.importorskip("torch")
    tasks = tmp_path / "tasks"
    _write_problem(tasks, "kb_l1_19_relu", "torch.relu(x)")
    # Every output is 1 (+ a hair of the input): a kernel writing ones would pass the tolerance.
    _write_problem(tasks, "kb_l1_99_flat", "torch.ones_like(x) + 1e-9 * x")
    results = tmp_path / "checks.json"

    done = _check("--tasks", str(tasks), "--jobs", "2", "--memory-gib", "4", "--json", str(results))
    assert done.returncode == 1, done.stdout + done.stderr  # one problem failed the checks
    by_task = {r["task"]: r for r in json.loads(results.read_text())}
    assert by_task["kb_l1_19_relu"]["verdict"] == "passed", by_task
    assert by_task["kb_l1_19_relu"]["status"] == "incorrect"  # the do-nothing kernel was compared and failed
    assert by_task["kb_l1_99_flat"]["verdict"] == "task error"
    assert "near-constant" in by_task["kb_l1_99_flat"]["message"]
    assert all(r["peak_rss_gib"] > 0 for r in by_task.values())
    assert "2 problem(s): 1 passed, 1 task error" in done.stdout

    # Resumed: nothing is checked again, and the summary still covers the whole pass.
    again = _check("--tasks", str(tasks), "--json", str(results), "--resume", str(results))
    assert again.returncode == 1, again.stdout + again.stderr
    assert "2 problem(s) already checked" in again.stdout and "0 task(s)" in again.stdout
    assert "2 problem(s): 1 passed, 1 task error" in again.stdout

    # A check that could not finish is done again on resume.
    earlier = json.loads(results.read_text())
    for result in earlier:
        if result["task"] == "kb_l1_19_relu":
            result.update(verdict="error", message="the process checking it died")
    results.write_text(json.dumps(earlier))
    third = _check("--tasks", str(tasks), "--json", str(results), "--resume", str(results))
    assert "1 problem(s) already checked" in third.stdout and "1 task(s)" in third.stdout
    assert {r["task"]: r["verdict"] for r in json.loads(results.read_text())}["kb_l1_19_relu"] == "passed"


@needs_opencl
def test_largest_checks_only_the_problems_of_the_largest_estimates_and_results_say_where_the_time_went(tmp_path):
    pytest.importorskip("torch")
    tasks = tmp_path / "tasks"
    _write_problem(tasks, "kb_l1_19_relu", "torch.relu(x)", rows=64)
    _write_problem(tasks, "kb_l1_20_small_relu", "torch.relu(x)", rows=8)
    _write_problem(tasks, "kb_l1_21_tanh", "torch.tanh(x)", rows=32)
    results = tmp_path / "checks.json"
    done = _check("--tasks", str(tasks), "--largest", "2", "--json", str(results))
    assert done.returncode == 0, done.stdout + done.stderr
    checked = {r["task"]: r for r in json.loads(results.read_text())}
    assert sorted(checked) == ["kb_l1_19_relu", "kb_l1_21_tanh"]
    assert "--largest 2: kb_l1_21_tanh, kb_l1_19_relu" in done.stdout  # the order they are checked in
    for result in checked.values():
        assert result["verdict"] == "passed"
        assert result["stage_seconds"]["reference"] > 0 and "correctness" in result["stage_seconds"]
    # Resumed with the same --largest: both are done, the smallest is still left out.
    again = _check("--tasks", str(tasks), "--largest", "2", "--json", str(results), "--resume", str(results))
    assert "2 problem(s) already checked" in again.stdout and "0 task(s)" in again.stdout
    assert "--largest must be 1 or more" in _check("--tasks", str(tasks), "--largest", "0").stderr


@needs_opencl
def test_admit_for_starts_no_problem_after_its_time_and_lists_the_rest_for_resume(tmp_path):
    pytest.importorskip("torch")
    tasks = tmp_path / "tasks"
    names = ["kb_l1_19_relu", "kb_l1_20_small_relu", "kb_l1_21_tanh"]
    for name, rows in zip(names, (16, 8, 32)):
        _write_problem(tasks, name, "torch.tanh(x)" if "tanh" in name else "torch.relu(x)", rows=rows)
    results = tmp_path / "checks.json"
    # No time to start anything (at most the first, where the clock has not moved past the start yet).
    done = _check("--tasks", str(tasks), "--jobs", "1", "--admit-for", "0", "--json", str(results))
    assert done.returncode == 0, done.stdout + done.stderr
    checked = json.loads(results.read_text()) if results.exists() else []
    assert len(checked) <= 1 and all(r["verdict"] == "passed" for r in checked)
    left = [name for name in names if name not in {r["task"] for r in checked}]
    assert f"{len(left)} problem(s) not started within --admit-for 0 s, left for --resume" in done.stdout
    assert all(name in done.stdout for name in left)
    # Resumed without a limit: the rest are checked.
    again = _check("--tasks", str(tasks), "--json", str(results), "--resume", str(results))
    assert again.returncode == 0, again.stdout + again.stderr
    assert sorted(r["task"] for r in json.loads(results.read_text())) == sorted(names)
    assert "not started" not in again.stdout
    assert "--admit-for must be 0 or more" in _check("--tasks", str(tasks), "--admit-for", "-5").stderr


def test_bad_arguments_and_a_bad_resume_file_say_what_is_wrong(tmp_path):
    tasks = tmp_path / "tasks"
    _write_problem(tasks, "kb_l1_19_relu", "torch.relu(x)")
    assert "--jobs must be 1 or more" in _check("--tasks", str(tasks), "--jobs", "0").stderr
    assert "--memory-gib must be a positive number" in _check("--tasks", str(tasks), "--memory-gib", "-1").stderr
    garbled = tmp_path / "garbled.json"
    garbled.write_text("not json")
    done = _check("--tasks", str(tasks), "--resume", str(garbled))
    assert done.returncode == 2 and "not a JSON list of results" in done.stderr


def test_a_cache_bound_that_is_not_a_number_is_refused_when_the_evaluator_is_created(monkeypatch):
    for variable in ("KERNELSMITH_CASE_CACHE_GB", "KERNELSMITH_ORACLE_CACHE_GB"):
        monkeypatch.setenv(variable, "lots")
        options = ks.EvaluatorOptions()
        options.backend = "opencl"
        with pytest.raises(ks.ValidationError, match=variable):
            ks.create_evaluator(options)
        monkeypatch.delenv(variable)
