"""The core value types from Python: tasks, candidates, launch plans, evaluations and their errors."""

import hashlib
import json
import math
import pickle
import pathlib

import pytest

import kernelsmith as ks

ROOT = pathlib.Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "docs" / "examples"


def test_dtypes():
    assert ks.parse_dtype("fp16") == ks.DType.float16
    assert ks.parse_dtype("torch.bfloat16") == ks.DType.bfloat16
    assert ks.DType.float32.itemsize == 4
    assert ks.dtype_size(ks.DType.int64) == 8
    assert ks.DType.bfloat16.is_floating and not ks.DType.int8.is_floating
    assert str(ks.DType.uint8) == "uint8"
    assert ks.default_tolerance(ks.DType.float16).rtol == pytest.approx(1e-2)
    with pytest.raises(ks.ValidationError, match="flaot32"):
        ks.parse_dtype("flaot32")
    # ValidationError is also a ValueError, for code that catches the built-in class.
    with pytest.raises(ValueError):
        ks.parse_dtype("")


def test_builtin_tasks_and_search_path():
    names = ks.builtin_task_names()
    assert {"relu", "row_sum", "matmul"} <= set(names)
    assert names == sorted(names)
    path = ks.task_search_path()
    assert all(isinstance(p, pathlib.Path) for p in path)
    assert path[-1] == (ROOT / "tasks")


def test_task_load_and_accessors():
    task = ks.Task.load("matmul")
    assert task.name == "matmul"
    assert task.languages() == ["cuda", "maca", "opencl"]
    assert task.timing_sizes.name == "timing"
    assert task.timing_sizes.sizes == {"K": 2048, "M": 2048, "N": 2048}
    assert [c.name for c in task.all_size_configs()][0] == "timing"
    assert task.tensor("A").shape == ["M", "K"]
    assert task.tensor("C").role == ks.TensorRole.output
    sizes = {"M": 2, "N": 3, "K": 4}
    assert task.element_count(task.tensor("C"), sizes) == 6
    assert task.flops(sizes) == 48.0
    assert task.min_bytes(sizes) == 4.0 * (8 + 12 + 6)
    assert task.tolerance is not None and task.tolerance.atol == pytest.approx(2e-3)
    assert task.tolerance_for(ks.DType.float32).rtol == pytest.approx(2e-4)
    # The source tree's folder, or the installed copy of it when the package is installed.
    assert task.folder.name == "matmul"
    assert (task.folder / "task.json").read_text() == (ROOT / "tasks" / "matmul" / "task.json").read_text()
    assert task.references["cuda"].language == "cuda"
    assert "@launch" in task.references["opencl"].source
    assert task.pytorch == "A @ B"
    assert "matmul" in repr(task)
    with pytest.raises(ks.NotFoundError, match="has no tensor"):
        task.tensor("D")


def test_task_by_path_and_unknown_name():
    assert ks.Task.load(str(ROOT / "tasks" / "relu")).name == "relu"
    assert ks.Task.load(str(ROOT / "tasks" / "relu" / "task.json")).name == "relu"
    with pytest.raises(ks.NotFoundError) as error:
        ks.Task.load("relux")
    assert "relu" in str(error.value) and "KERNELSMITH_TASKS_PATH" in str(error.value)
    # NotFoundError is also a LookupError.
    with pytest.raises(LookupError):
        ks.Task.load("relux")


def test_task_search_path_from_environment(tmp_path, monkeypatch):
    manifest = json.loads(ks.Task.load("relu").to_json())
    manifest["name"] = "my_relu"
    (tmp_path / "my_relu").mkdir()
    (tmp_path / "my_relu" / "task.json").write_text(json.dumps(manifest))
    monkeypatch.setenv("KERNELSMITH_TASKS_PATH", str(tmp_path))
    assert ks.task_search_path()[0] == tmp_path
    assert "my_relu" in ks.builtin_task_names()
    task = ks.Task.load("my_relu")
    assert task.name == "my_relu"
    assert task.check_sizes[0].sizes == {"N": 1}


def test_task_validation_names_file_and_field(tmp_path):
    manifest = json.loads(ks.Task.load("relu").to_json())
    manifest["tensors"][1]["dtype"] = "flaot32"
    (tmp_path / "task.json").write_text(json.dumps(manifest))
    with pytest.raises(ks.ValidationError) as error:
        ks.Task.load(str(tmp_path))
    message = str(error.value)
    assert message.startswith(str(tmp_path / "task.json") + ": tensors[1].dtype: expected one of float16")
    assert message.endswith('got "flaot32"')

    manifest["tensors"][1]["dtype"] = "float32"
    manifest["tolerence"] = {"atol": 1, "rtol": 1}
    with pytest.raises(ks.ValidationError, match="tolerence: unknown field"):
        ks.Task.from_json(json.dumps(manifest), "mine.json")


def test_task_json_round_trip():
    for name in ("relu", "row_sum", "matmul"):
        task = ks.Task.load(name)
        text = task.to_json()
        copy = ks.Task.from_json(text)
        assert copy.to_json() == text
        assert copy.folder == pathlib.Path()
        assert copy.seeds["cuda"].source == task.seeds["cuda"].source


def test_task_built_in_python():
    task = ks.Task()
    task.name = "copy"
    task.timing_sizes = ks.SizeConfig("timing", {"N": 1024})
    task.check_sizes = [ks.SizeConfig("odd", {"N": 7})]
    task.tensors = [
        ks.TensorSpec("x", ks.DType.float32, ["N"], ks.TensorRole.input, ks.Distribution("uniform", -1.0, 1.0)),
        ks.TensorSpec("y", ks.DType.float32, ["N"], ks.TensorRole.output),
    ]
    task.work = ks.WorkModel("0", "8 * N")
    task.tolerance = ks.Tolerance(atol=0.0, rtol=0.0)
    task.references = {"opencl": ks.KernelSource("opencl", "// @launch copy<<<ceil_div(N, 64), 64>>>(x, y, N)\n")}
    task.validate()
    copy = ks.Task.from_json(task.to_json())
    assert copy.tensors[0].distribution.kind == "uniform"
    assert copy.tolerance.atol == 0.0
    task.tensors = [task.tensors[0]]
    with pytest.raises(ks.ValidationError, match="role \"output\""):
        task.validate("code")


def test_candidate_ids_and_files():
    candidate = ks.Candidate("cuda", "abc")
    assert candidate.id() == hashlib.sha256(b"cuda\0abc").hexdigest()[:16]
    assert ks.Candidate("opencl", "abc").id() != candidate.id()
    from_file = ks.Candidate.from_file(str(EXAMPLES / "tiled_matmul.cl"))
    assert from_file.language == "opencl"
    assert ks.language_for_extension("a.cuh") == "cuda"
    with pytest.raises(ks.NotFoundError):
        ks.Candidate.from_file(str(EXAMPLES / "missing.cu"))
    with pytest.raises(ks.ValidationError, match="extension"):
        ks.Candidate.from_file(str(EXAMPLES / "README.md"))


def test_candidate_json_round_trip():
    candidate = ks.Candidate("cuda", "// @launch k<<<1, 1>>>()\n", ks.Lineage(["a" * 16], 2, 5, "param"))
    text = candidate.to_json()
    assert json.loads(text)["id"] == candidate.id()
    copy = ks.Candidate.from_json(text)
    assert (copy.language, copy.source, copy.lineage.parent_ids, copy.lineage.island, copy.lineage.generation,
            copy.lineage.origin) == ("cuda", candidate.source, ["a" * 16], 2, 5, "param")
    example = ks.Candidate.from_json((EXAMPLES / "candidate.json").read_text())
    assert example.lineage.origin == "llm_diff"
    edited = json.loads((EXAMPLES / "candidate.json").read_text())
    edited["source"] += "\n"
    with pytest.raises(ks.ValidationError, match="does not match the content"):
        ks.Candidate.from_json(json.dumps(edited))


def test_launch_plan():
    plan = ks.LaunchPlan.parse((EXAMPLES / "two_pass_sum.cu").read_text())
    assert [launch.kernel for launch in plan.launches] == ["partial_sums", "final_sum"]
    assert plan.launches[0].grid == ["min(ceil_div(N, BLOCK), 4 * SM_COUNT)", "1", "1"]
    assert plan.launches[0].shared_bytes == "BLOCK * 4"
    assert plan.launches[0].args == ["x", "partial", "N"]
    assert plan.workspaces[0].dtype == ks.DType.float32
    assert plan.tunables[0].name == "BLOCK" and plan.tunables[0].values == [128, 256, 512, 1024]
    assert plan.requirements == ["BLOCK <= MAX_THREADS_PER_BLOCK"]
    assert not plan.specialize
    assert ks.LaunchPlan.parse((EXAMPLES / "tiled_matmul.cl").read_text()).specialize
    assert "partial_sums" in repr(plan)

    with pytest.raises(ks.PlanError, match="line 2: @tune") as error:
        ks.LaunchPlan.parse("// @launch k<<<1, 1>>>()\n// @tune B = 3 in {1, 2}\n")
    assert "not among its allowed values" in str(error.value)


def test_launch_plan_hopper_directives():
    plan = ks.LaunchPlan.parse(
        "// @tensor_map a_tiles = A[K, M] box[64, 128] swizzle=128B when(COMPUTE_CAPABILITY >= 90)\n"
        "// @launch gemm<<<round_up(M, 2), 256>>>(a_tiles, C, M, N, K) cluster=dim3(2, 1, 1)\n")
    (tiles,) = plan.tensor_maps
    assert (tiles.name, tiles.buffer, tiles.dims, tiles.box) == ("a_tiles", "A", ["K", "M"], ["64", "128"])
    assert (tiles.swizzle, tiles.oob_fill, tiles.condition) == ("128B", "zero", "COMPUTE_CAPABILITY >= 90")
    assert tiles.strides == [] and tiles.line == 1
    assert plan.launches[0].cluster == ["2", "1", "1"]
    assert ks.LaunchPlan.parse("// @launch k<<<1, 1>>>()\n").launches[0].cluster == ["", "", ""]
    with pytest.raises(ks.PlanError, match="line 1: @tensor_map: the box") as error:
        ks.LaunchPlan.parse("// @tensor_map m = x[N]\n// @launch k<<<1, 1>>>(m)\n")
    assert error.value.line == 1


def test_evaluate_expression():
    assert ks.evaluate_expression("ceil_div(N, 256)", {"N": 1000}) == 4
    assert ks.evaluate_expression("-7 / 2") == -4
    assert ks.evaluate_expression("round_up(N, 64) == 1024 && 1", {"N": 1000}) == 1
    with pytest.raises(ks.PlanError, match='unknown identifier "M"'):
        ks.evaluate_expression("M * 2", {"N": 1})
    with pytest.raises(ks.PlanError, match="division by zero"):
        ks.evaluate_expression("4 % (N - 1)", {"N": 1})
    with pytest.raises(ks.PlanError, match="column 4"):
        ks.evaluate_expression("1 +")


def _full_evaluation():
    e = ks.Evaluation()
    e.candidate_id = "0123456789abcdef"
    e.task = "relu"
    e.backend = "cuda"
    e.device = "NVIDIA H100"
    e.status = ks.Status.ok
    e.message = "ok"
    compile_report = ks.CompileReport()
    compile_report.ok = True
    compile_report.target = "sm_90"
    kernel = ks.KernelResources()
    kernel.name = "relu"
    kernel.registers = 16
    kernel.spill_store_bytes = 0
    kernel.spill_load_bytes = 0
    compile_report.kernels = [kernel]
    e.compile = compile_report
    correctness = ks.CorrectnessReport()
    correctness.passed = True
    check = ks.CorrectnessCheck()
    check.sizes = "odd_4097"
    check.inputs = "random"
    check.passed = True
    output = ks.OutputCheck()
    output.tensor = "y"
    output.passed = True
    output.actual = float("nan")
    check.outputs = [output]
    correctness.checks = [check]
    e.correctness = correctness
    timing = ks.TimingReport()
    timing.mode = "screen"
    timing.median_ms = 0.0625
    timing.noise = 0.003
    timing.samples = 50
    kernel_time = ks.KernelTime()
    kernel_time.name = "relu"
    kernel_time.median_ms = 0.0625
    kernel_time.share = 1.0
    timing.kernels = [kernel_time]
    e.timing = timing
    baseline = ks.TimingReport()
    baseline.median_ms = 0.125
    e.baseline_timing = baseline
    e.speedup = 2.0
    sol = ks.SpeedOfLight()
    sol.achieved_gbps = 2147.0
    sol.peak_gbps = 3350.0
    sol.bandwidth_fraction = 0.641
    sol.fraction = 0.641
    e.sol = sol
    integrity = ks.IntegrityReport()
    integrity.flags = ["host_timer_mismatch"]
    e.integrity = integrity
    e.fitness = 2.0
    e.wall_seconds = 0.5
    return e


def test_evaluation_round_trip_and_prompt():
    e = _full_evaluation()
    assert e.ok
    text = e.to_json()
    document = json.loads(text)
    assert document["schema"] == ks.EVALUATION_SCHEMA == "kernelsmith.evaluation/5"
    assert document["placement"] == {"host": "", "device_index": -1, "actor": "", "retries": 0}
    assert document["status"] == "ok"
    copy = ks.Evaluation.from_json(text)
    assert copy.to_json() == text
    assert math.isnan(copy.correctness.checks[0].outputs[0].actual)
    assert copy.timing.kernels[0].share == 1.0
    assert copy.sol.peak_gbps == 3350.0
    assert copy.integrity.flags == ["host_timer_mismatch"]

    prompt = e.to_prompt_text()
    for part in ("Status: ok", "0.0625 ms median", "0.3% noise", "50 samples", "baseline 0.125 ms", "speedup 2x",
                 "64.1% of it", "relu: 16 registers", "host_timer_mismatch"):
        assert part in prompt, (part, prompt)

    e.timing = None
    assert ks.Evaluation.from_json(e.to_json()).timing is None

    # Where it ran travels with it, through JSON and pickle (evaluations cross processes on Ray).
    e.placement.host, e.placement.device_index, e.placement.actor, e.placement.retries = "node-3", 2, "a1", 1
    again = pickle.loads(pickle.dumps(e))
    assert (again.placement.host, again.placement.device_index, again.placement.actor, again.placement.retries) == (
        "node-3", 2, "a1", 1)
    assert again.to_json() == e.to_json()


def test_statuses_and_fitness():
    assert ks.parse_status("compile_error") == ks.Status.compile_error
    assert str(ks.Status.invalid_launch) == "invalid_launch"
    assert [ks.failure_fitness(s) for s in (ks.Status.incorrect, ks.Status.runtime_error, ks.Status.invalid_launch,
                                            ks.Status.compile_error, ks.Status.timeout, ks.Status.crashed)] == [
        0.0, -0.25, -0.5, -0.75, -1.0, -1.0]
    with pytest.raises(ks.ValidationError):
        ks.parse_status("fine")


def test_evaluation_example_from_docs():
    e = ks.Evaluation.from_json((EXAMPLES / "evaluation_incorrect.json").read_text())
    assert e.status == ks.Status.incorrect
    assert not e.ok
    assert e.correctness.checks[1].outputs[0].unwritten == 1
    assert "never written" in e.to_prompt_text()
    with pytest.raises(ks.ValidationError, match="e.json: status"):
        ks.Evaluation.from_json('{"schema": "kernelsmith.evaluation/1", "status": "fine"}', "e.json")


def test_tasks_and_candidates_pickle_as_their_json():
    """What travels to another process (a Ray actor, multiprocessing) comes back equal, with its content key."""
    task = ks.Task.load("relu")
    copy = pickle.loads(pickle.dumps(task))
    assert copy.to_json() == task.to_json()
    assert copy.content_key() == task.content_key()
    assert len(task.content_key()) == 64
    assert copy.folder == task.folder
    renamed = ks.Task.from_json(task.to_json())
    renamed.name = "relu_renamed"
    assert renamed.content_key() != task.content_key()

    candidate = ks.Candidate("opencl", task.references["opencl"].source, ks.Lineage(origin="reference"))
    again = pickle.loads(pickle.dumps(candidate))
    assert again.id() == candidate.id()
    assert again.lineage.origin == "reference"
