"""The evaluator from Python: options, the built-in evaluator on OpenCL (PoCL in CI), a broken task's
TaskError, Python subclasses called through the C++ interface, and `kernelsmith eval`."""

import json
import os
import pathlib
import shutil
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


@pytest.fixture
def task_with_broken_reference(tmp_path):
    """The harness test task, whose OpenCL reference no longer compiles."""
    folder = tmp_path / "broken_task"
    shutil.copytree(TASK_DIR, folder)
    reference = folder / "reference.cl"
    reference.write_text(reference.read_text().replace("2.0f * a[i] + b[i];", "2.0f * a[i] + ;"))
    return ks.Task.load(str(folder))


@needs_opencl
@pytest.mark.parametrize("isolate", [True, False], ids=["worker", "in-process"])
def test_a_reference_that_does_not_compile_raises_task_error(task_with_broken_reference, isolate):
    evaluator = ks.create_evaluator(fast_options(isolate=isolate))
    with pytest.raises(ks.TaskError, match="reference does not compile") as error:
        evaluator.evaluate(task_with_broken_reference, ks.Candidate("opencl", CORRECT))
    assert "scale_add" in str(error.value)
    # The compiler's log points at the reference's own file and line, not at the driver's temporary file.
    assert f"{pathlib.Path(task_with_broken_reference.folder) / 'reference.cl'}:7:" in str(error.value)
    assert "candidate.cl" not in str(error.value) and "kcache" not in str(error.value)
    # Callers that catch the broader classes still do.
    assert isinstance(error.value, ks.ValidationError)
    assert isinstance(error.value, ValueError)


@needs_opencl
def test_a_task_too_large_for_the_device_is_refused_before_its_reference_runs():
    task = ks.Task.load(str(TASK_DIR))
    timing = task.timing_sizes
    timing.sizes = {"N": 2**42}
    task.timing_sizes = timing
    evaluator = ks.create_evaluator(fast_options())
    with pytest.raises(ks.TaskError) as error:
        evaluator.evaluate(task, ks.Candidate("opencl", CORRECT))
    message = str(error.value)
    assert message.startswith(
        f"{TASK_DIR / 'task.json'}: tensors[0] (\"a\") under the sizes \"timing\" needs 16 TiB (N = 4398046511104 "
        "float32 elements); the opencl device 0 ("
    ), message
    assert message.endswith('lower the sizes "timing" in the manifest')
    device = next(b for b in ks.devices() if b.name == "opencl").devices[0]
    assert 0 < device.max_allocation_bytes <= device.global_memory_bytes


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


@needs_opencl
def test_screen_mode_checks_fewer_cases_at_the_timing_sizes_than_strict_mode():
    task = ks.Task.load(str(TASK_DIR))
    candidate = ks.Candidate("opencl", CORRECT)
    options = dict(adversarial_inputs=True, correctness_trials=3, screen_correctness_trials=1)
    screen = ks.create_evaluator(fast_options(mode="screen", **options)).evaluate(task, candidate)
    strict = ks.create_evaluator(
        fast_options(mode="strict", strict_min_samples=5, strict_budget_seconds=0.2, **options)
    ).evaluate(task, candidate)
    assert screen.ok and strict.ok, (screen.message, strict.message)

    def inputs_by_sizes(evaluation):
        found = {}
        for check in evaluation.correctness.checks:
            found.setdefault(check.sizes, []).append(check.inputs)
        return found

    adversarial = ["large", "tiny", "mixed_scale", "constant"]
    timing = task.timing_sizes.name
    assert inputs_by_sizes(screen)[timing] == ["random"]
    assert inputs_by_sizes(strict)[timing] == ["random"] * 3 + adversarial
    for evaluation in (screen, strict):
        # The check sizes get every kind of input in both modes.
        for config in task.check_sizes:
            assert inputs_by_sizes(evaluation)[config.name] == ["random"] + adversarial
    # Strict mode takes at least its own minimum of samples.
    assert strict.timing.samples >= 5


@needs_opencl
def test_evaluation_says_where_its_time_went():
    task = ks.Task.load(str(TASK_DIR))
    evaluation = ks.create_evaluator(fast_options()).evaluate(task, ks.Candidate("opencl", CORRECT))
    assert evaluation.ok, evaluation.message
    stages = evaluation.stage_seconds
    for stage in ("load", "correctness", "timing", "overhead"):
        assert stage in stages, stages
        assert stages[stage] >= 0.0
    assert stages["correctness"] > 0.0 and stages["timing"] > 0.0
    assert sum(stages.values()) <= evaluation.wall_seconds + 1e-6
    assert ks.Evaluation.from_json(evaluation.to_json()).stage_seconds == pytest.approx(stages)


SIGINT_SCRIPT = r"""
import os, signal, sys
import kernelsmith as ks

def workers():
    found = set()
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as stat:
                fields = stat.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == os.getpid():
            found.add(int(entry))
    return found

task = ks.Task.load(sys.argv[1])
options = ks.EvaluatorOptions(backend="opencl", correctness_trials=1, adversarial_inputs=False, min_samples=3,
                              max_samples=10, screen_budget_seconds=0.05, compile_threads=1, cache_dir=sys.argv[2])
evaluator = ks.create_evaluator(options)
candidate = ks.Candidate("opencl", sys.argv[3])
first = evaluator.evaluate(task, candidate)
before = workers()
try:
    os.killpg(os.getpgrp(), signal.SIGINT)  # what Ctrl-C in a terminal does
    signal.pause()
except KeyboardInterrupt:
    print("interrupted")
second = evaluator.evaluate(task, candidate)
print(first.status.name, second.status.name, bool(before) and before == workers())
"""


@needs_opencl
def test_ctrl_c_reaches_the_caller_but_not_the_worker():
    result = subprocess.run(
        [sys.executable, "-c", SIGINT_SCRIPT, str(TASK_DIR), CACHE_DIR, CORRECT],
        capture_output=True,
        text=True,
        timeout=600,
        start_new_session=True,  # its own process group, so the signal reaches nothing else
    )
    assert result.returncode == 0, result.stderr
    lines = result.stdout.split()
    assert lines == ["interrupted", "ok", "ok", "True"], result.stdout + result.stderr


def test_compile_candidate_offline_compiles_cuda_as_the_evaluator_would_without_a_gpu():
    if not any(backend.name == "cuda" and backend.can_compile for backend in ks.devices()):
        pytest.skip("needs NVRTC (the cuda backend cannot compile here)")
    task = ks.Task.load("matmul")
    seed = ks.Candidate.from_file(str(ROOT / "tasks" / "matmul" / "seed.cu"))
    for architecture in ("sm_90", "sm_80"):
        (program,) = ks.compile_candidate_offline(task, seed, architecture)
        assert program.config == "" and program.report.ok, program.report.log
        assert program.report.target.startswith(architecture)
        # The seed's three kernels: the two operands' TF32 splits and the product.
        assert sorted(kernel.name for kernel in program.report.kernels) == ["matmul", "split_columns", "split_rows"]
        assert all(kernel.registers > 0 for kernel in program.report.kernels)
    # The @tune values are the macros: another value is another program.
    retuned = ks.Candidate("cuda", seed.source.replace("STAGES = 4 in", "STAGES = 3 in"))
    assert retuned.source != seed.source
    (program,) = ks.compile_candidate_offline(task, retuned, "sm_90")
    assert program.report.ok
    # @specialize: one program per size configuration, each named.
    specialised = ks.Candidate("cuda", "// @specialize\n" + seed.source)
    programs = ks.compile_candidate_offline(task, specialised, "sm_90")
    assert sorted(p.config for p in programs) == sorted(c.name for c in task.all_size_configs())
    # A source the compiler rejects is a report, with the compiler's line.
    broken = ks.Candidate("cuda", seed.source.replace("total[j][e] += ", "total[j][e] += undeclared + "))
    assert broken.source != seed.source
    (program,) = ks.compile_candidate_offline(task, broken, "sm_90")
    assert not program.report.ok and "undeclared" in program.report.log
    with pytest.raises(ks.PlanError):
        ks.compile_candidate_offline(task, ks.Candidate("cuda", "extern \"C\" __global__ void k() {}"), "sm_90")
    with pytest.raises(ks.NotSupportedError, match="triton"):
        ks.compile_candidate_offline(task, ks.Candidate.from_file(str(ROOT / "tasks" / "matmul" / "seed.py")), "sm_90")
