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
