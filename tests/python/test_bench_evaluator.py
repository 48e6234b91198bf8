"""bench/bench_evaluator.py: its throughput pass through a real evaluator (PoCL), where each kernel's record
explains its cost (samples on both sides, how they were taken, a re-measurement) and the pass's summary counts
the re-measurements and names the slowest evaluations; and the do_bench comparison's choice of a variant
without tensor maps for a plan that passes them."""

from __future__ import annotations

import json
import pathlib
import sys
from types import SimpleNamespace

import pytest

import kernelsmith as ks

from backends import fast_opencl_evaluator, needs_opencl

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench"))

import bench_evaluator as be  # noqa: E402


@needs_opencl
def test_a_pass_records_why_each_evaluation_cost_what_it_did(tmp_path, capsys):
    # Every speedup is suspicious: each evaluation is measured again.
    evaluator = fast_opencl_evaluator(tmp_path, suspicious_speedup=1e-3, strict_min_samples=7)

    folder = ROOT / "tasks" / "relu"
    task = SimpleNamespace(handle=ks.Task.load(str(folder)))
    source = (folder / "reference.cl").read_text()
    candidates = [SimpleNamespace(task=task, key=f"relu/{label}",
                                  handle=be.candidate_handle(ks, SimpleNamespace(language="opencl", label=label),
                                                             source + f"\n// {label}\n"))
                  for label in ("seed", "variant")]
    result = be.evaluate_all(evaluator, [task], {id(c): c.handle for c in candidates}, candidates)

    assert result["evaluations"] == 2 and result["statuses"] == {"ok": 2}
    for kernel in result["kernels"]:
        assert "remeasured" in kernel["flags"] and "speedup_above_threshold" in kernel["flags"]
        # The re-measurement replaces a screened timing: strict_min_samples samples on each side.
        assert kernel["timing"]["samples"] == 7 and kernel["baseline_timing"]["samples"] == 7
        assert kernel["timing"]["median_ms"] > 0 and kernel["timing"]["sampling"]
    be.print_pass("cold", result)
    printed = capsys.readouterr().out
    assert "suspicious speedups measured again: 2 of 2" in printed
    assert "slowest: relu/" in printed


def test_a_plan_with_live_tensor_maps_is_compared_through_a_variant_without_them():
    # The half-precision products pass TMA tensor maps on Hopper: the CuPy launcher builds none, so do_bench
    # times the seed's TMA=0 variant, whose when(...) leaves the maps out (128 zero bytes by value).
    device = be._DryRunDevice()
    assert be.device_bindings(device)["COMPUTE_CAPABILITY"] == 90
    tasks = be.load_tasks(["matmul_fp16"])
    candidates = be.build_candidates(tasks, 4)
    seed = next(c for c in candidates if c.label == "seed")
    with pytest.raises(be.TensorMapNeeded, match="tensor map a_tiles"):
        be.bind_plan(seed, device)
    picked, note = be.without_live_tensor_maps(seed, candidates, device)
    assert picked.label == "seed TMA=0" and "in place of seed" in note
    plan = be.bind_plan(picked, device)
    main = next(launch for launch in plan.launches if launch.kernel == "matmul_fp16")
    assert main.args[:2] == [("zero_tensor_map", "a_tiles"), ("zero_tensor_map", "b_tiles")]
    # Without such a variant among the candidates (the sample of variants is small), one is made from the seed.
    alone = be.build_candidates(tasks, 0)
    assert [c.label for c in alone] == ["reference", "seed"]
    made, note = be.without_live_tensor_maps(alone[1], alone, device)
    assert made.label == "seed TMA=0" and "in place of seed" in note and made.task is alone[1].task
    assert "@tune TMA = 0 in" in made.source
    # Before Hopper the maps' conditions are false for the seed itself.
    older = be._DryRunDevice()
    older.architecture = "sm_80"
    assert be.without_live_tensor_maps(seed, candidates, older) == (seed, "")
    # A plan without maps is its own comparison.
    relu = be.build_candidates(be.load_tasks(["relu"]), 0)[0]
    assert be.without_live_tensor_maps(relu, [relu], device) == (relu, "")
    with pytest.raises(ValueError, match="load_inline launcher does not pass"):
        be.inline_module_sources(picked, plan)


def test_the_report_carries_the_command_and_versions_even_when_setup_fails(tmp_path, capsys):
    out = tmp_path / "report.json"
    status = be.main(["--tasks", "relu", "--skip", "throughput,kernelbench,agreement,noise", "--out", str(out)])
    printed = capsys.readouterr().out
    report = json.loads(out.read_text())
    assert report["command"].startswith("python3 ") and "--tasks relu" in report["command"]
    assert report["versions"]["kernelsmith"] == ks.__version__ and report["versions"]["python"]
    assert f"command: {report['command']}" in printed
    if not be_has_cuda():
        # No CUDA device here: the setup phase fails, saying why, and the exit status says so.
        assert status == 1 and "setup" in report["errors"]


def be_has_cuda() -> bool:
    try:
        be.cuda_device()
        return True
    except Exception:  # noqa: BLE001
        return False


def test_the_benchmarks_read_a_tasks_tolerance_as_the_evaluator_does():
    import task_accuracy

    # The manifest's own numbers where it gives them, for every dtype (the evaluator's Task.tolerance_for).
    conv = json.loads((ROOT / "tasks" / "conv2d_3x3" / "task.json").read_text())
    loaded = ks.Task.load(str(ROOT / "tasks" / "conv2d_3x3")).tolerance_for(ks.DType.float32)
    assert task_accuracy.tolerance(conv, "float32") == (loaded.atol, loaded.rtol) == (2e-4, 2e-4)
    # Otherwise the evaluator's default for the output's dtype.
    for dtype, expected in (("float32", 1e-4), ("float16", 1e-2), ("bfloat16", 1e-2), ("float64", 1e-8)):
        assert task_accuracy.tolerance({}, dtype) == pytest.approx((expected, expected))


def test_a_launchs_cluster_is_read_and_a_clustered_plan_is_compared_through_a_variant_without_clusters():
    # The half-precision products end their main launch with cluster=dim3(...): the arguments stop at their
    # closing parenthesis and the cluster is read (the CuPy and load_inline launchers launch plain grids).
    source = (ROOT / "tasks" / "matmul_bf16" / "seed.cu").read_text()
    main = be.parse_plan(source).launches[-1]
    assert main.kernel == "matmul_bf16"
    assert main.args == ["a_tiles", "b_tiles", "A", "BT", "C", "M", "N", "K"]
    assert "CLUSTER == 2" in main.cluster[0] and main.cluster[1:] == ["1", "1"]
    device = be._DryRunDevice()
    relu = be.build_candidates(be.load_tasks(["relu"]), 0)[1]
    launch = next(line for line in relu.source.splitlines() if "@launch" in line)

    def with_cluster(tail: str) -> be.BenchCandidate:
        return be.BenchCandidate(relu.task, "seed", relu.source.replace(launch, launch + tail))

    with pytest.raises(be.ClusterNeeded, match="clusters of 2 x 1 x 1 blocks"):
        be.bind_plan(with_cluster(" cluster=dim3(2, 1, 1)"), device)
    assert be.bind_plan(with_cluster(" cluster=dim3(1, 1, 1)"), device).launches  # one block: a plain launch
    with pytest.raises(ValueError, match="expected cluster=dim3"):
        be.parse_plan(with_cluster(" clusters(2)").source)
    # The seed with CLUSTER = 2 on Hopper (its maps live too) is compared through a variant with neither.
    tasks = be.load_tasks(["matmul_bf16"])
    seed = be.build_candidates(tasks, 0)[1]
    clustered = be.BenchCandidate(seed.task, "seed CLUSTER=2",
                                  seed.source.replace("@tune CLUSTER = 1 ", "@tune CLUSTER = 2 "))
    picked, note = be.without_live_tensor_maps(clustered, [seed, clustered], device)
    assert picked is not clustered and "clusters are not built here" in note
    assert all(launch.kernel for launch in be.bind_plan(picked, device).launches)
