"""bench/bench_triton.py without a GPU: a Triton plan bound to the launch calls triton's JIT gets, the
variants of a seed (`# @tune`) and those passed over by @require, the generated KernelGYM-way ModelNew
module (it compiles), the dry run over a task with a Triton seed, the JIT functions rebuilt without
integer specialization (needs triton), and every built-in Triton seed present binding at its main sizes."""

from __future__ import annotations

import ast
import json
import pathlib
import shutil
import subprocess
import sys

import pytest

import kernelsmith as ks

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench"))

import bench_evaluator as be  # noqa: E402
import bench_triton as bt  # noqa: E402

EXAMPLE = ROOT / "docs" / "examples" / "vector_add.py"
H100 = be.device_bindings(bt.DryRunDevice())
BUILTIN_SEEDS = sorted(ROOT.glob("tasks/*/seed.py"))

try:
    import triton  # noqa: F401

    TRITON_WHY = ""
except Exception as error:  # noqa: BLE001 - any import failure means "not usable here"
    TRITON_WHY = f"needs triton: {error}"
needs_triton = pytest.mark.skipif(bool(TRITON_WHY), reason=TRITON_WHY)

RELU_SEED = """\
# @tune BLOCK = 1024 in {64, 512, 1024}
# @tune WARPS = 4 in {1, 2, 4, 8}
# @require BLOCK >= 32 * WARPS
# @launch relu[ceil_div(N, BLOCK)](x, y, N, BLOCK=BLOCK) num_warps=WARPS

import triton
import triton.language as tl


@triton.jit
def relu(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    tl.store(y_ptr + offsets, tl.maximum(tl.load(x_ptr + offsets, mask=mask), 0.0), mask=mask)
"""


def vector_add_task(n: int = 5000) -> be.BenchTask:
    tensors = [be.TensorSpec(name, "float32", ["N"], role, {"kind": "normal", "a": 0.0, "b": 1.0})
               for name, role in (("x", "input"), ("y", "input"), ("out", "output"))]
    return be.BenchTask("vector_add", {}, tensors, {"N": n}, "x + y", EXAMPLE.parent)


def vector_add(source: str = "") -> be.BenchCandidate:
    return be.BenchCandidate(vector_add_task(), "seed", source or EXAMPLE.read_text(), language="triton")


def relu_task_folder(tmp_path: pathlib.Path) -> pathlib.Path:
    folder = tmp_path / "relu"
    folder.mkdir()
    shutil.copy(ROOT / "tasks" / "relu" / "task.json", folder / "task.json")
    (folder / "seed.py").write_text(RELU_SEED)
    return folder


def test_plan_binds_to_the_jit_launch():
    plan = bt.bind_triton_plan(vector_add(), H100)
    assert plan.workspaces == [] and plan.tunables == {"BLOCK": 1024, "WARPS": 4}
    [launch] = plan.launches
    assert launch.kernel == "add" and launch.line == 8
    assert launch.grid == (5, 1, 1)  # ceil_div(5000, 1024)
    assert launch.args == [("tensor", "x"), ("tensor", "y"), ("tensor", "out"), ("int", 5000)]
    assert launch.keywords() == {"BLOCK": 1024, "num_warps": 4, "num_stages": 3}


def test_plan_binds_at_other_sizes_and_tunables():
    source = EXAMPLE.read_text().replace("BLOCK = 1024 in", "BLOCK = 256 in").replace("WARPS = 4 in", "WARPS = 8 in")
    plan = bt.bind_triton_plan(vector_add(source), H100, sizes={"N": 1})
    [launch] = plan.launches
    assert launch.grid == (1, 1, 1) and launch.args[-1] == ("int", 1)
    assert launch.keywords() == {"BLOCK": 256, "num_warps": 8, "num_stages": 3}


def test_a_failing_require_is_reported_with_its_line():
    source = EXAMPLE.read_text().replace("BLOCK = 1024 in", "BLOCK = 256 in").replace("@require BLOCK >= 32 * WARPS",
                                                                                      "@require BLOCK >= 512 * WARPS")
    with pytest.raises(ValueError, match=r"line 7: @require BLOCK >= 512 \* WARPS does not hold"):
        bt.bind_triton_plan(vector_add(source), H100)


def test_a_malformed_plan_is_a_value_error():
    with pytest.raises(ValueError, match="does not parse"):
        bt.bind_triton_plan(vector_add("# @launch add(x, y)\nimport triton\n"), H100)


def test_model_source_compiles_and_launches_the_plan():
    candidate = vector_add()
    source = bt.model_source(candidate, bt.bind_triton_plan(candidate, H100))
    compile(source, "model.py", "exec")
    tree = ast.parse(source)
    [model] = [node for node in tree.body if isinstance(node, ast.ClassDef)]
    [forward] = [node for node in model.body if isinstance(node, ast.FunctionDef)]
    assert model.name == "ModelNew" and forward.name == "forward"
    assert [a.arg for a in forward.args.args] == ["self", "t_x", "t_y"]
    assert "t_out = _ks_torch.empty((5000,), dtype=_ks_torch.float32, device=t_x.device)" in source
    assert "add[(5, 1, 1)](t_x, t_y, t_out, 5000, BLOCK=1024, num_warps=4, num_stages=3)" in source
    assert source.rstrip().endswith("return t_out")
    assert source.startswith(EXAMPLE.read_text().rstrip("\n"))  # the candidate's kernels, unchanged


def test_model_source_allocates_workspaces_and_returns_several_outputs():
    task = vector_add_task(1 << 20)
    task.tensors.append(be.TensorSpec("total", "float32", [1], "output", {}))
    source = ("# @workspace partial: float32[ceil_div(N, 1024)]\n"
              "# @launch first[ceil_div(N, 1024)](x, y, out, partial, N)\n"
              "# @launch second[1](partial, total, ceil_div(N, 1024), BLOCK=1024) num_warps=8 num_stages=1\n")
    candidate = be.BenchCandidate(task, "seed", source, language="triton")
    plan = bt.bind_triton_plan(candidate, H100)
    assert plan.workspaces == [("partial", "float32", 1024)]
    text = bt.model_source(candidate, plan)
    compile(text, "model.py", "exec")
    assert "t_partial = _ks_torch.empty((1024,), dtype=_ks_torch.float32, device=t_x.device)" in text
    assert "first[(1024, 1, 1)](t_x, t_y, t_out, t_partial, 1048576, num_warps=4, num_stages=3)" in text
    assert "second[(1, 1, 1)](t_partial, t_total, 1024, BLOCK=1024, num_warps=8, num_stages=1)" in text
    assert "return (t_out, t_total, )" in text


def test_seed_variants_read_hash_tune_lines():
    labels = [label for label, _ in be.seed_variants(EXAMPLE.read_text(), 100, marker="#")]
    assert sorted(labels) == sorted(["seed BLOCK=256", "seed BLOCK=512", "seed BLOCK=2048", "seed BLOCK=4096",
                                     "seed WARPS=2", "seed WARPS=8"])
    assert labels[:2] == ["seed BLOCK=256", "seed WARPS=2"]  # spread over the tunables
    assert be.seed_variants(EXAMPLE.read_text(), 100) == []  # `//` lines only by default
    [(_, changed)] = [v for v in be.seed_variants(EXAMPLE.read_text(), 100, marker="#") if v[0] == "seed WARPS=8"]
    assert "# @tune WARPS = 8 in {2, 4, 8}" in changed


def test_candidates_pass_over_variants_whose_require_fails(tmp_path):
    task = be.load_task(relu_task_folder(tmp_path))
    candidates, passed_over = bt.build_triton_candidates([task], 3, H100)
    assert [c.label for c in candidates] == ["seed", "seed WARPS=1", "seed BLOCK=512", "seed WARPS=2"]
    assert all(c.language == "triton" for c in candidates)
    assert len(passed_over) == 1 and passed_over[0].startswith("relu/seed BLOCK=64: line 3: @require")


def test_dry_run_writes_modules_that_compile(tmp_path, monkeypatch, capsys):
    folder = relu_task_folder(tmp_path)
    monkeypatch.setattr(be, "task_folders", lambda: {"relu": folder})
    out = tmp_path / "modules"
    assert bt.main(["--dry-run", "--variants-per-task", "2", "--out", str(out)]) == 0
    written = sorted(p.name for p in out.glob("*.py"))
    assert written == ["ks_model_relu_seed.py", "ks_model_relu_seed_BLOCK_512.py", "ks_model_relu_seed_WARPS_1.py"]
    printed = capsys.readouterr().out
    assert "relu/seed: relu[16384, 1, 1](x, y, 16777216, BLOCK=1024, num_warps=4, num_stages=3)" in printed


def test_dry_run_without_seeds_says_so(tmp_path, monkeypatch, capsys):
    folder = relu_task_folder(tmp_path)
    (folder / "seed.py").unlink()
    monkeypatch.setattr(be, "task_folders", lambda: {"relu": folder})
    assert bt.main(["--dry-run", "--out", str(tmp_path / "modules")]) == 1
    assert "no task has a Triton seed" in capsys.readouterr().out


def test_the_manifest_may_name_the_seed(tmp_path):
    folder = relu_task_folder(tmp_path)
    (folder / "seed.py").rename(folder / "relu_seed.py")
    manifest = json.loads((folder / "task.json").read_text())
    manifest["seeds"]["triton"] = "relu_seed.py"
    (folder / "task.json").write_text(json.dumps(manifest))
    assert bt.triton_seed_path(be.load_task(folder)) == folder / "relu_seed.py"


def test_help_runs_anywhere():
    completed = subprocess.run([sys.executable, str(ROOT / "bench" / "bench_triton.py"), "--help"],
                               capture_output=True, text=True, timeout=60)
    assert completed.returncode == 0, completed.stderr
    assert "--baseline-kernels" in completed.stdout and "--jit-specialization" in completed.stdout


def test_unknown_phase_is_refused():
    with pytest.raises(SystemExit):
        bt.parse_args(["--skip", "agreement,speed"])


@needs_triton
def test_jit_functions_lose_integer_specialization_only(tmp_path):
    candidate = vector_add()
    plan = bt.bind_triton_plan(candidate, H100)
    module = bt.load_module(EXAMPLE, "ks_test_vector_add")
    [same] = bt.jit_kernels(module, plan, "triton")
    assert same is module.add
    [rebuilt] = bt.jit_kernels(module, plan, "kernelsmith")
    assert rebuilt is not module.add and rebuilt.fn is module.add.fn
    flags = {p.name: p.do_not_specialize for p in rebuilt.params}
    assert flags == {"x_ptr": False, "y_ptr": False, "out_ptr": False, "n": True, "BLOCK": False}
    with pytest.raises(ValueError, match="not a @triton.jit function"):
        bt.jit_kernels(module, bt.bind_triton_plan(vector_add(EXAMPLE.read_text().replace("add[", "sub[")), H100),
                       "triton")


@pytest.mark.skipif(not BUILTIN_SEEDS, reason="no built-in task has a Triton seed (tasks/<task>/seed.py) yet")
@pytest.mark.parametrize("path", BUILTIN_SEEDS, ids=[p.parent.name for p in BUILTIN_SEEDS])
def test_builtin_triton_seeds_bind_and_make_a_model(path):
    task = be.load_task(path.parent)
    candidate = be.BenchCandidate(task, "seed", path.read_text(), language="triton")
    plan = bt.bind_triton_plan(candidate, H100)
    assert plan.launches
    compile(bt.model_source(candidate, plan), f"{task.name}_model.py", "exec")
    assert ks.LaunchPlan.parse(candidate.source, "triton").launches  # the evaluator's own parser agrees


class _FakeStatus:
    def __init__(self, name: str) -> None:
        self.name = name


class _FakeEvaluation:
    def __init__(self, median_ms: float, status: str = "ok") -> None:
        self.status = _FakeStatus(status)
        self.timing = type("Timing", (), {"median_ms": median_ms})()
        self.stage_seconds = {"compile": 0.01, "timing": 0.02}
        self.compile = type("Compile", (), {"target": "sm_90a"})()  # what the CuPy side compiles for
        self.message = "" if status == "ok" else "line 3: @require fails"


class _FakeEvaluator:
    def evaluate(self, task, candidate):
        return _FakeEvaluation(0.2)

    def evaluate_batch(self, task, candidates):
        return [_FakeEvaluation(0.2) for _ in candidates]


def test_main_runs_every_phase_and_writes_the_report(tmp_path, monkeypatch, capsys):
    """The orchestration without a GPU: kernelsmith, do_bench and the KernelGYM processes stand in by fakes
    (kernelsmith 0.2 ms; do_bench 0.199 ms, within 2%; the KernelGYM way 6 s per kernel)."""
    folder = relu_task_folder(tmp_path)
    monkeypatch.setattr(be, "task_folders", lambda: {"relu": folder})
    monkeypatch.setattr(bt, "missing_requirements", lambda: [])
    monkeypatch.setattr(bt, "versions", lambda: {"triton": "3.6.0", "torch": "2.11"})
    monkeypatch.setattr(be, "cuda_device", lambda: type("Device", (bt.DryRunDevice,), {"architecture": "sm_90"})())

    def handles(tasks, candidates):
        for task in tasks:
            task.handle = task
        for candidate in candidates:
            candidate.handle = candidate

    monkeypatch.setattr(be, "make_ks_objects", handles)
    monkeypatch.setattr(be, "make_evaluator", lambda mode, cache_dir: _FakeEvaluator())
    monkeypatch.setattr(be, "available", lambda module: None)  # torch and triton, as on the GPU machine
    monkeypatch.setattr(bt, "jit_median_ms", lambda candidate, device, specialization, work_dir, rep_ms: (0.199, ""))
    monkeypatch.setattr(bt, "kernelgym_evaluate", lambda candidate, env, work_dir, timeout_s: {
        "kernel": candidate.key, "wall_s": 6.0, "import_s": 3.0, "compile_s": 1.5, "correctness_s": 0.5,
        "timing_s": 1.0, "correct": True, "median_ms": 0.21})
    out = tmp_path / "report.json"
    status = bt.main(["--variants-per-task", "2", "--out", str(out)])
    printed = capsys.readouterr().out
    report = json.loads(out.read_text())
    assert report["errors"] == {}
    assert report["targets"]["agreement_within_2pct"]["met"] is True
    # kernelsmith's rate is whatever the fakes took; the KernelGYM way is 60 s / 6 s
    assert report["phases"]["kernelgym"]["per_minute"] == pytest.approx(10.0)
    assert [k["kernel"] for k in report["phases"]["throughput"]["kernels"]] == [
        "relu/seed", "relu/seed WARPS=1", "relu/seed BLOCK=512"]
    assert report["phases"]["agreement"]["rows"][0][:4] == ["relu/seed", 0.2, 0.199, pytest.approx(0.2 / 0.199)]
    assert report["benchmark"] == "bench_triton" and report["versions"]["triton"] == "3.6.0"
    assert "--variants-per-task 2" in report["command"] and report["passed_over"]
    assert "throughput_ge_20x" in report["targets"] and "KernelGYM-way rate extrapolated from 1 kernel" in printed
    assert status == (0 if report["targets"]["throughput_ge_20x"]["met"] else 1)


def test_main_reports_a_failed_phase_and_runs_the_others(tmp_path, monkeypatch):
    folder = relu_task_folder(tmp_path)
    monkeypatch.setattr(be, "task_folders", lambda: {"relu": folder})
    monkeypatch.setattr(bt, "missing_requirements", lambda: [])
    monkeypatch.setattr(bt, "versions", lambda: {})
    monkeypatch.setattr(be, "cuda_device", lambda: type("Device", (bt.DryRunDevice,), {"architecture": "sm_90"})())
    monkeypatch.setattr(be, "make_ks_objects", lambda tasks, candidates: None)

    class Refusing(_FakeEvaluator):
        def evaluate_batch(self, task, candidates):
            return [_FakeEvaluation(0.0, "invalid_launch") for _ in candidates]

    monkeypatch.setattr(be, "make_evaluator", lambda mode, cache_dir: Refusing())
    out = tmp_path / "report.json"
    assert bt.main(["--skip", "kernelgym", "--out", str(out)]) == 1
    report = json.loads(out.read_text())
    assert "no Triton candidate was evaluated ok" in report["errors"]["throughput"]
    assert report["targets"]["agreement_within_2pct"]["met"] is None  # nothing to compare: reported, not judged
    assert report["targets"]["throughput_ge_20x"]["met"] is None


def test_main_without_a_gpu_says_what_is_missing(monkeypatch, capsys):
    monkeypatch.setattr(bt, "missing_requirements", lambda: ["torch is not importable (No module named 'torch')"])
    assert bt.main([]) == 2
    assert "torch is not importable" in capsys.readouterr().err
