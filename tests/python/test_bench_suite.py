"""bench/bench_suite.py's PyTorch side without a GPU: the task's expression becomes a function of its own that
torch.compile traces whole (no graph break, so the torch.compile column measures Inductor's code and not eager
again), one per task (so no task's compile reuses or evicts another's), and shape entries may be numbers."""

from __future__ import annotations

import json
import pathlib
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench"))

import bench_suite as bs  # noqa: E402

torch = pytest.importorskip("torch")


def manifest(name: str) -> dict:
    return json.loads((ROOT / "tasks" / name / "task.json").read_text())


def small_inputs(document: dict) -> dict:
    generator = torch.Generator().manual_seed(0)
    tensors = {}
    for spec in document["tensors"]:
        if spec.get("role", "input") == "input":
            shape = [bs.evaluate_expression(e, document["sizes"]) for e in spec["shape"]]
            tensors[spec["name"]] = torch.randn(shape, generator=generator)
    return tensors


@pytest.mark.filterwarnings("ignore::DeprecationWarning")  # torch's own, raised while Dynamo imports its parts
def test_the_expression_is_a_function_dynamo_traces_whole():
    document = manifest("linear_gelu")
    document["sizes"] = {name: min(value, 64) for name, value in document["sizes"].items()}
    inputs = small_inputs(document)
    function = bs.pytorch_function(document, list(inputs))
    x, weight, bias = (inputs[n] for n in ("x", "weight", "bias"))
    expected = torch.nn.functional.gelu(x @ weight.T + bias, approximate="tanh")
    assert torch.allclose(function(*inputs.values()), expected, atol=1e-5)
    torch._dynamo.reset()
    explanation = torch._dynamo.explain(function)(*inputs.values())
    assert explanation.graph_break_count == 0 and explanation.graph_count == 1


def test_each_task_gets_a_function_of_its_own():
    first = bs.pytorch_function(manifest("relu"), ["x"])
    second = bs.pytorch_function(manifest("softmax"), ["x"])
    # Dynamo caches compiled code per code object: one shared code object for every task recompiled it per
    # task until its recompile limit, after which every later task ran eager.
    assert first.__code__ is not second.__code__
    assert first.__code__.co_filename == "<relu.pytorch>"


def test_shape_entries_may_be_numbers():
    document = manifest("histogram")
    shapes = {spec["name"]: [bs.evaluate_expression(e, document["sizes"]) for e in spec["shape"]]
              for spec in document["tensors"]}
    assert shapes["counts"] == [1024]
    assert bs.evaluate_expression("ceil_div(N, 256)", {"N": 1000}) == 4


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="torch sees no CUDA device")
@pytest.mark.filterwarnings("ignore::DeprecationWarning")  # torch's own, raised while Dynamo imports its parts
@pytest.mark.filterwarnings("ignore::UserWarning")  # Inductor's notes on max-autotune (e.g. too few SMs for it)
def test_compiled_timings_are_not_eager_again_where_inductor_fuses():
    # cross_entropy (reduction 'none', 1024 x 32000 logits): eager runs log_softmax, which writes a
    # logits-sized intermediate, then nll_loss, which reads it back; Inductor fuses both into one pass over
    # the logits. A torch.compile column equal to eager within noise measured eager twice (a graph break, or
    # a cache shared between tasks), which this catches. (linear_gelu, the first choice, cannot tell: its
    # fp32 GEMM takes 95% of the time in both, measured 0.7474 ms eager, 0.7476 ms compiled on an H100.)
    document = manifest("cross_entropy")
    first = bs.time_pytorch(document, compile_too=True)
    second = bs.time_pytorch(document, compile_too=False)
    eager = min(first["eager_ms"], second["eager_ms"])
    noise = abs(first["eager_ms"] - second["eager_ms"]) / eager
    for key in ("compiled_ms", "compiled_max_autotune_ms"):
        difference = abs(first[key] - eager) / eager
        assert difference > max(3 * noise, 0.02), (
            f"{key} {first[key]:.4f} ms is eager's {eager:.4f} ms within noise ({noise:.2%})")


def test_accuracy_is_judged_by_the_evaluators_rule():
    # atol scales with the expected output's root mean square (here 50.01), rtol with each value: allowed
    # errors 0.5011, 1.5001, 0.5001, 0.5201; the second output (off by 1.6) is outside.
    document = {"tolerance": {"atol": 1e-2, "rtol": 1e-2}}
    exact = torch.tensor([1.0, 100.0, 0.0, -2.0], dtype=torch.float64)
    output = torch.tensor([1.5, 101.6, 0.0, -2.0], dtype=torch.float32)
    outside, relative_l2 = bs.accuracy_against(document, output, exact)
    assert outside == pytest.approx(0.25)
    assert relative_l2 == pytest.approx((0.5**2 + 1.6**2) ** 0.5 / (1 + 100**2 + 4) ** 0.5, rel=1e-6)
    assert not bs.passes_task_check(document, outside, relative_l2)
    # Every element inside but the relative L2 error above (atol + rtol) / 2: rejected, as the evaluator does.
    assert not bs.passes_task_check(document, 0.0, 0.011)
    assert bs.passes_task_check(document, 0.0, 0.009)
    assert bs.accuracy_against(document, exact.float(), exact) == (0.0, 0.0)


def test_float32_exactly_turns_tf32_off_inside_and_restores_pytorchs_settings():
    import task_accuracy

    saved = (torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32)
    try:
        torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32 = True, True
        with task_accuracy.float32_exactly():
            assert not torch.backends.cuda.matmul.allow_tf32 and not torch.backends.cudnn.allow_tf32
        assert torch.backends.cuda.matmul.allow_tf32 and torch.backends.cudnn.allow_tf32
        with pytest.raises(RuntimeError):  # restored when the block raises too
            with task_accuracy.float32_exactly():
                raise RuntimeError("inside")
        assert torch.backends.cuda.matmul.allow_tf32 and torch.backends.cudnn.allow_tf32
    finally:
        torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32 = saved


def test_the_targets_compare_with_eager_at_the_tasks_accuracy():
    document = {"tolerance": {"atol": 2e-4, "rtol": 2e-4}}
    # PyTorch's default (a TF32 convolution) fails the check, the float32 one passes: the float32 time.
    result = bs.TaskResult(task="conv2d_3x3", speedup_vs_eager=0.6, speedup_vs_eager_fp32=1.4,
                           eager_outside_tolerance=0.25, eager_relative_l2=5e-4,
                           eager_fp32_outside_tolerance=0.0, eager_fp32_relative_l2=1e-6)
    speedup, against = bs.eager_at_task_accuracy(document, result)
    assert speedup == 1.4 and "float32" in against and "25.0%" in against
    # Failing on the relative L2 error alone is failing too.
    result.eager_outside_tolerance = 0.0
    assert bs.eager_at_task_accuracy(document, result)[0] == 1.4
    # The default passes (or was not checked): the default time, whatever the float32 one.
    result.eager_relative_l2 = 1e-5
    assert bs.eager_at_task_accuracy(document, result) == (0.6, "")
    result.eager_outside_tolerance = float("nan")
    assert bs.eager_at_task_accuracy(document, result) == (0.6, "")
    # Both fail: no float32 excuse either, the default time.
    result.eager_outside_tolerance, result.eager_relative_l2 = 0.25, 5e-4
    result.eager_fp32_outside_tolerance = 0.01
    assert bs.eager_at_task_accuracy(document, result) == (0.6, "")


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="torch sees no CUDA device")
def test_pytorchs_default_convolution_fails_the_conv_tasks_check_and_float32_passes():
    # The reason bench_suite times eager with TF32 off: cuDNN's default TF32 convolution fails the
    # evaluator's check of the task at the timing size, the float32 one passes it.
    document = manifest("conv2d_3x3")
    times = bs.time_pytorch(document, compile_too=False)
    assert not bs.passes_task_check(document, times["eager_outside_tolerance"], times["eager_relative_l2"])
    assert bs.passes_task_check(document, times["eager_fp32_outside_tolerance"], times["eager_fp32_relative_l2"])
    assert times["eager_fp32_ms"] > 0
