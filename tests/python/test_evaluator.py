"""The evaluator from Python: options, the built-in evaluator on OpenCL (PoCL in CI), Python subclasses
called through the C++ interface, and `kernelsmith eval`."""

import json
import os
import pathlib
import subprocess
import sys
import tempfile
import threading

import pytest

import kernelsmith as ks

ROOT = pathlib.Path(__file__).resolve().parents[2]
TASK_DIR = ROOT / "tests" / "data" / "harness_task"
CACHE_DIR = os.path.join(tempfile.gettempdir(), "kernelsmith-test-cache")

CORRECT = """// @launch add2<<<ceil_div(N, 128), 128>>>(y, a, b, N)
__kernel void add2(__global float* out, __global const float* x, __global const float* z, int n) {
  const int i = get_global_id(0);
  if (i < n) out[i] = x[i] + x[i] + z[i];
}
"""

WRONG = CORRECT.replace("x[i] + x[i] + z[i]", "x[i] - z[i]")


def opencl_available():
    return any(b.name == "opencl" and b.available for b in ks.devices())


needs_opencl = pytest.mark.skipif(not opencl_available(), reason="no OpenCL device")


def fast_options(**overrides):
    options = ks.EvaluatorOptions(
        backend="opencl",
        correctness_trials=1,
        adversarial_inputs=False,
        min_samples=3,
        max_samples=10,
        screen_budget_seconds=0.05,
        compile_threads=1,
        cache_dir=CACHE_DIR,
    )
    for key, value in overrides.items():
        setattr(options, key, value)
    return options


def test_options_have_documented_defaults_and_reject_unknown_fields():
    options = ks.EvaluatorOptions()
    assert options.backend == "auto"
    assert options.mode == "screen"
    assert options.isolate is True
    assert options.noise_target == pytest.approx(0.005)
    assert ks.EvaluatorOptions(mode="strict", seed=7).seed == 7
    with pytest.raises(TypeError, match="no field 'colour'"):
        ks.EvaluatorOptions(colour="blue")
    with pytest.raises(ks.ValidationError, match="mode"):
        ks.create_evaluator(ks.EvaluatorOptions(mode="fast"))


@needs_opencl
def test_builtin_evaluator_classifies_candidates():
    task = ks.Task.load(str(TASK_DIR))
    evaluator = ks.create_evaluator(fast_options())
    assert evaluator.backend_name() == "opencl"
    good = evaluator.evaluate(task, ks.Candidate("opencl", CORRECT))
    assert good.ok, good.message
    assert good.speedup > 0
    assert good.timing.samples >= 3
    bad = evaluator.evaluate(task, ks.Candidate("opencl", WRONG))
    assert bad.status == ks.Status.incorrect
    assert "differ" in bad.message
    batch = evaluator.evaluate_batch(task, [ks.Candidate("opencl", WRONG), ks.Candidate("opencl", CORRECT)])
    assert [e.status for e in batch] == [ks.Status.incorrect, ks.Status.ok]


@needs_opencl
def test_evaluate_releases_the_gil():
    task = ks.Task.load(str(TASK_DIR))
    evaluator = ks.create_evaluator(fast_options(isolate=False))
    ticks = []
    done = threading.Event()

    def tick():
        while not done.is_set():
            ticks.append(1)
            done.wait(0.005)

    thread = threading.Thread(target=tick)
    thread.start()
    try:
        evaluation = evaluator.evaluate(task, ks.Candidate("opencl", CORRECT))
    finally:
        done.set()
        thread.join()
    assert evaluation.ok, evaluation.message
    # The ticker ran while C++ evaluated: more than the one tick it gets before and after.
    assert len(ticks) > 2


class CountingEvaluator(ks.Evaluator):
    """A Python evaluator: marks candidates by the length of their source."""

    def __init__(self):
        super().__init__()
        self.calls = 0

    def evaluate(self, task, candidate):
        self.calls += 1
        evaluation = ks.Evaluation()
        evaluation.candidate_id = candidate.id()
        evaluation.task = task.name
        evaluation.status = ks.Status.ok
        evaluation.speedup = float(len(candidate.source))
        evaluation.fitness = evaluation.speedup
        evaluation.message = "counted"
        return evaluation

    def backend_name(self):
        return "python"


def test_python_subclass_is_called_through_the_cpp_interface():
    task = ks.Task.load(str(TASK_DIR))
    evaluator = CountingEvaluator()
    candidates = [ks.Candidate("opencl", "a"), ks.Candidate("opencl", "abc")]
    # evaluate_batch is not overridden: the C++ default calls the Python evaluate() for each candidate.
    evaluations = evaluator.evaluate_batch(task, candidates)
    assert [e.fitness for e in evaluations] == [1.0, 3.0]
    assert evaluator.calls == 2
    assert evaluator.backend_name() == "python"
    assert evaluator.device_name() == ""


def test_a_subclass_without_evaluate_says_so():
    class Empty(ks.Evaluator):
        pass

    task = ks.Task.load(str(TASK_DIR))
    with pytest.raises(RuntimeError, match="evaluate"):
        Empty().evaluate(task, ks.Candidate("opencl", "x"))


def run_cli(*arguments, env=None):
    environment = dict(os.environ)
    environment["KERNELSMITH_CACHE_DIR"] = CACHE_DIR
    environment.update(env or {})
    return subprocess.run(
        [sys.executable, "-m", "kernelsmith", "eval", *arguments],
        capture_output=True,
        text=True,
        env=environment,
        timeout=600,
    )


@needs_opencl
def test_cli_eval_prints_the_evaluation(tmp_path):
    reference = run_cli("--task", str(TASK_DIR), "--reference", "--backend", "opencl", "--mode", "screen", "--json")
    assert reference.returncode == 0, reference.stderr
    document = json.loads(reference.stdout)
    assert document["status"] == "ok"
    assert document["backend"] == "opencl"

    wrong = tmp_path / "wrong.cl"
    wrong.write_text(WRONG)
    result = run_cli("--task", str(TASK_DIR), "--candidate", str(wrong), "--backend", "opencl", "--mode", "screen")
    assert result.returncode == 1
    assert "incorrect" in result.stdout


def test_cli_eval_fails_with_the_reason_when_no_backend_runs(tmp_path):
    result = run_cli(
        "--task",
        str(TASK_DIR),
        "--reference",
        "--backend",
        "opencl",
        env={"KERNELSMITH_OPENCL_LIBRARY": str(tmp_path / "missing" / "libOpenCL.so.1")},
    )
    assert result.returncode != 0
    assert "opencl" in result.stderr
    assert "not found" in result.stderr
