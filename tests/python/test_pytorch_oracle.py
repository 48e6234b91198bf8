"""The PyTorch oracle helper (python/kernelsmith/pytorch_oracle.py) on its own: requests as the evaluator
sends them, on the problem files written for the tests (tests/data/kernelbench/oracle_tasks), with torch on
the CPU. The evaluator's side is tested end to end in tests/cpp/test_pytorch_oracle.cpp and below
(test_evaluator_uses_the_oracle)."""

from __future__ import annotations

import json
import pathlib
import subprocess
import sys

import pytest

from kernelsmith import pytorch_oracle as po

torch = pytest.importorskip("torch", reason="the PyTorch oracle needs torch (pip install kernelsmith[torch])")

ROOT = pathlib.Path(__file__).resolve().parents[2]
TASKS = ROOT / "tests" / "data" / "kernelbench" / "oracle_tasks"


def problem(folder: str, module: str, constants, **fields):
    return {"source": (TASKS / folder / module).read_text(), "path": module, "constants": constants,
            "forward": fields.get("forward", ["x"]), "parameters": fields.get("parameters", {}),
            "outputs": fields.get("outputs", ["out"]), "casts": fields.get("casts", {}),
            "seed": fields.get("seed", 42), "training": fields.get("training", True)}


def write(tmp: pathlib.Path, name: str, tensor) -> dict:
    path = tmp / f"{name}.bin"
    path.write_bytes(tensor.contiguous().numpy().tobytes())
    return {"name": name, "dtype": str(tensor.dtype).replace("torch.", ""), "shape": list(tensor.shape),
            "path": str(path)}


def read(spec: dict):
    dtype = getattr(torch, spec["dtype"])
    data = pathlib.Path(spec["path"]).read_bytes()
    return torch.frombuffer(bytearray(data), dtype=dtype).reshape(spec["shape"]) if data else \
        torch.empty(spec["shape"], dtype=dtype)


def output(tmp: pathlib.Path, name: str, shape, dtype="float32") -> dict:
    return {"name": name, "dtype": dtype, "shape": list(shape), "path": str(tmp / f"{name}.out")}


def outputs_request(task_key: str, config: str, problem_: dict, inputs: list, outputs: list) -> dict:
    return {"op": "outputs", "task_key": task_key, "config": config, "device": "cpu", "problem": problem_,
            "inputs": inputs, "outputs": outputs}


@pytest.fixture
def oracle(tmp_path):
    return po.Oracle(str(tmp_path / "work"))


def test_outputs_follow_the_constants(oracle, tmp_path):
    x = torch.randn(3, 7)
    request = outputs_request("k", "small", problem("relu", "19_ReLU.py", {"batch_size": 3, "dim": 7}),
                              [write(tmp_path, "x", x)],
                              [output(tmp_path, "out", [3, 7])])
    reply = po.handle(oracle, request)
    assert reply["ok"], reply
    assert reply["built"] is True
    assert torch.equal(read(request["outputs"][0]), torch.relu(x))
    # The model is cached per (task, configuration): the second request builds nothing.
    assert po.handle(oracle, request)["built"] is False


def test_a_large_output_is_copied_into_its_file_and_a_bool_one_becomes_bytes(oracle, tmp_path):
    # From po.MAPPED_OUTPUT_BYTES on, the output goes through a mapping of its file, not one write().
    rows = po.MAPPED_OUTPUT_BYTES // (4 * 1024) + 1
    x = torch.randn(rows, 1024)
    request = outputs_request("big", "timing", problem("relu", "19_ReLU.py", {"batch_size": rows, "dim": 1024}),
                              [write(tmp_path, "x", x)], [output(tmp_path, "out", [rows, 1024])])
    reply = po.handle(oracle, request)
    assert reply["ok"], reply
    assert pathlib.Path(request["outputs"][0]["path"]).stat().st_size == rows * 1024 * 4
    assert torch.equal(read(request["outputs"][0]), torch.relu(x))
    # The same path for a module's bool result, which the task holds as uint8.
    spec = output(tmp_path, "mask", [rows, 1024], dtype="uint8")
    oracle.write_output(x > 0, spec, "timing")
    assert torch.equal(read(spec), (x > 0).to(torch.uint8))
    # Written again over a larger file of an earlier request: the file holds this output only.
    small = output(tmp_path, "mask", [4, 4], dtype="uint8")
    oracle.write_output(torch.ones(4, 4, dtype=torch.bool), small, "small")
    assert pathlib.Path(small["path"]).stat().st_size == 16


def test_rewritten_constants_reach_derived_ones_and_parameters_load(oracle, tmp_path):
    # bias_shape = (out_features,) follows out_features; the weights come from the task's tensors.
    x, weight, bias = torch.rand(3, 5), torch.rand(7, 5) - 0.5, torch.randn(7)
    request = outputs_request("k", "odd", problem("linear_bias_relu", "76_Gemm_Add_ReLU.py",
                                  {"batch_size": 3, "in_features": 5, "out_features": 7},
                                  parameters={"gemm.weight": "gemm_weight", "bias": "bias"}),
                              [write(tmp_path, "x", x), write(tmp_path, "gemm_weight", weight),
                               write(tmp_path, "bias", bias)],
                              [output(tmp_path, "out", [3, 7])])
    reply = po.handle(oracle, request)
    assert reply["ok"], reply
    expected = torch.relu(x @ weight.T + bias)
    assert torch.allclose(read(request["outputs"][0]), expected, atol=1e-6)


def test_tuple_outputs_and_python_float_casts(oracle, tmp_path):
    x = torch.randn(3, 37)
    request = outputs_request("k1", "odd",
                              problem("sum_max", "Sum_and_max_over_a_dimension.py", {"batch_size": 3, "dim1": 37},
                                      outputs=["out0", "out1"]),
                              [write(tmp_path, "x", x)],
                              [output(tmp_path, "out0", [3]), output(tmp_path, "out1", [3])])
    assert po.handle(oracle, request)["ok"]
    assert torch.allclose(read(request["outputs"][0]), x.sum(1), atol=1e-5)
    assert torch.equal(read(request["outputs"][1]), x.amax(1))

    a, s = torch.randn(5, 11), torch.tensor(2.5)
    request = outputs_request("k2", "odd",
                              problem("scale_alpha", "5_Matrix_scalar_multiplication.py", {"M": 5, "N": 11},
                                      forward=["A", "s"], casts={"s": "python_float"}),
                              [write(tmp_path, "A", a), write(tmp_path, "s", s)],
                              [output(tmp_path, "out", [5, 11])])
    assert po.handle(oracle, request)["ok"]
    assert torch.equal(read(request["outputs"][0]), a * 2.5)


BATCHNORM = '''
import torch
import torch.nn as nn

class Model(nn.Module):
    def __init__(self, features):
        super().__init__()
        self.bn = nn.BatchNorm1d(features)

    def forward(self, x):
        return self.bn(x) + self.bn.running_mean

batch_size = 8
features = 4

def get_inputs():
    return [torch.randn(batch_size, features)]

def get_init_inputs():
    return [features]
'''


def test_state_does_not_carry_over_between_cases(oracle, tmp_path):
    # Training-mode BatchNorm updates its running statistics in forward; each case starts from the
    # seeded state, so the same inputs give the same outputs whatever ran before.
    source = {"source": BATCHNORM, "path": "bn.py", "constants": {}, "forward": ["x"], "parameters": {},
              "outputs": ["out"], "casts": {}, "seed": 42, "training": True}
    x = torch.randn(8, 4)
    request = outputs_request("bn", "t", source,
                              [write(tmp_path, "x", x)],
                              [output(tmp_path, "out", [8, 4])])
    assert po.handle(oracle, request)["ok"]
    first = read(request["outputs"][0]).clone()
    assert po.handle(oracle, request)["ok"]
    assert torch.equal(read(request["outputs"][0]), first)


def test_failures_say_what_and_where(oracle, tmp_path):
    x = torch.randn(4, 8)
    base = outputs_request("r", "timing",
                           problem("forward_raises", "Raises_in_forward.py", {"batch_size": 4, "dim": 8}),
                           [write(tmp_path, "x", x)], [output(tmp_path, "out", [4, 8])])
    reply = po.handle(oracle, base)
    assert reply["ok"] is False and reply["stage"] == "forward"
    assert "this problem's forward always fails" in reply["message"]
    assert "line 12 of the problem file" in reply["message"]

    relu = dict(base, task_key="s", problem=problem("relu", "19_ReLU.py", {"batch_size": 4, "dim": 8}))
    wrong_shape = dict(relu, outputs=[output(tmp_path, "out", [8, 4])])
    reply = po.handle(oracle, wrong_shape)
    assert reply["stage"] == "outputs"
    assert "the module returns shape [4, 8], but the task says [8, 4]" in reply["message"]

    wrong_dtype = dict(relu, outputs=[output(tmp_path, "out", [4, 8], "int64")])
    assert "returns float32, but the task says int64" in po.handle(oracle, wrong_dtype)["message"]

    two = dict(relu, outputs=[output(tmp_path, "out", [4, 8]), output(tmp_path, "out1", [4, 8])])
    assert "returns 1 tensor(s), but the task names 2 output(s)" in po.handle(oracle, two)["message"]

    unknown = dict(relu, task_key="u", problem=dict(relu["problem"], constants={"batch": 4}))
    reply = po.handle(oracle, unknown)
    assert reply["stage"] == "module" and "constant(s) batch" in reply["message"]

    entry = dict(relu, task_key="p", problem=dict(relu["problem"], parameters={"weight": "x"}))
    reply = po.handle(oracle, entry)
    assert reply["stage"] == "parameters" and "no state-dict entry 'weight'" in reply["message"]

    assert po.handle(oracle, {"op": "nonsense"})["stage"] == "request"
    gpu = dict(relu, device="cuda:0")
    if not torch.cuda.is_available():
        reply = po.handle(oracle, gpu)
        assert reply["stage"] == "device" and "sees no CUDA device" in reply["message"]


def test_rewrite_constants_refuses_a_computed_constant():
    with pytest.raises(po.OracleError, match="not assigned an integer literal"):
        po.rewrite_constants("import math\nN = int(math.sqrt(16))\n", {"N": 3})
    tree = po.rewrite_constants("N = 16\nM = N * 2\n", {"N": 3})
    namespace = {}
    exec(compile(tree, "<test>", "exec"), namespace)
    assert namespace["M"] == 6


def test_statistics_match_the_harness():
    # lib/evaluate/timing.cpp's sample_statistics: median, mean, min, stddev (n - 1) over the mean.
    stats = po.sample_statistics([4.0, 1.0, 3.0, 2.0])
    assert stats["median"] == 2.5 and stats["mean"] == 2.5 and stats["min"] == 1.0
    assert stats["noise"] == pytest.approx((5.0 / 3.0) ** 0.5 / 2.5)
    assert po.sample_statistics([])["median"] == 0.0


def test_stop_rules_match_the_harness():
    # timing.hpp's stop_rule: screen bounds the relative standard error of the mean, strict the spread.
    samples = [0.200, 0.212] * 20  # a spread of about 3%
    met = [n for n in range(2, len(samples) + 1) if po.noise_target_met(samples[:n], "standard_error", 0.005)]
    assert met and 30 <= met[0] <= 40
    assert not any(po.noise_target_met(samples[:n], "spread", 0.005) for n in range(2, len(samples) + 1))
    assert po.noise_target_met([1.0, 1.0, 1.0], "spread", 0.005)


def test_time_follows_the_protocol(oracle, tmp_path):
    x = torch.randn(16, 1024)
    sets = [[write(tmp_path, f"x{i}", x.roll(i))] for i in range(3)]
    for spec in sets:
        spec[0]["name"] = "x"
    settings = {"mode": "screen", "noise_target": 1e-9, "min_samples": 5, "max_samples": 7, "budget_seconds": 10,
                "warmups": 2, "host_repeats": 3, "flush": "fill", "flush_bytes": 1 << 20}
    request = {"op": "time", "task_key": "t", "config": "timing", "device": "cpu", "baseline": "eager",
               "problem": problem("relu", "19_ReLU.py", {"batch_size": 16, "dim": 1024}),
               "input_sets": sets, "settings": settings}
    reply = po.handle(oracle, request)
    assert reply["ok"], reply
    timing = reply["timing"]
    # A noise target nothing reaches: sampling stops at max_samples.
    assert timing["samples"] == 7 and timing["converged"] is False
    assert 0 < timing["min_ms"] <= timing["median_ms"]
    assert timing["l2_flushed"] is True and timing["mode"] == "screen"
    assert timing["kernels"] == [{"name": "eager", "median_ms": timing["median_ms"], "share": 1.0}]
    assert po.handle(oracle, dict(request, baseline="fastest"))["stage"] == "request"


def test_baselines_are_timed_under_torch_defaults_and_outputs_computed_exactly(oracle, tmp_path, monkeypatch):
    # What the timed function saw: KernelBench's baseline settings; after the request, the exact ones again.
    seen = {}
    real_measure = po.measure

    def spying_measure(torch_module, *args, **kwargs):
        seen["cudnn_tf32"] = torch_module.backends.cudnn.allow_tf32
        seen["deterministic"] = torch_module.backends.cudnn.deterministic
        return real_measure(torch_module, *args, **kwargs)

    monkeypatch.setattr(po, "measure", spying_measure)
    spec = write(tmp_path, "x", torch.randn(4, 256))
    spec["name"] = "x"
    request = {"op": "time", "task_key": "t", "config": "timing", "device": "cpu", "baseline": "eager",
               "problem": problem("relu", "19_ReLU.py", {"batch_size": 4, "dim": 256}), "input_sets": [[spec]],
               "settings": {"min_samples": 3, "max_samples": 3, "budget_seconds": 1}}
    assert po.handle(oracle, request)["ok"]
    assert seen == {"cudnn_tf32": True, "deterministic": False}
    assert torch.backends.cudnn.allow_tf32 is False and torch.backends.cudnn.deterministic is True
    assert torch.backends.cuda.matmul.allow_tf32 is False


def test_the_helper_runs_as_a_script_and_reports_a_missing_torch(tmp_path):
    # As the C++ library starts it: by path, from an empty folder, JSON lines in and out.
    script = pathlib.Path(po.__file__)
    run = subprocess.run([sys.executable, str(script), "--workdir", str(tmp_path)], cwd=tmp_path,
                         input='{"op": "version", "id": 7, "device": "cpu"}\nnot json\n', capture_output=True,
                         text=True, timeout=300)
    replies = [json.loads(line) for line in run.stdout.splitlines()]
    assert replies[0]["id"] == 7 and replies[0]["available"] is True
    assert replies[0]["torch"] == torch.__version__ and replies[0]["device_name"]
    assert replies[1]["ok"] is False and "malformed request" in replies[1]["message"]
    # An interpreter without torch: "available": false, saying which interpreter and what to install.
    bare = "/usr/bin/python3"
    has_torch = pathlib.Path(bare).exists() and subprocess.run([bare, "-c", "import torch"], capture_output=True).returncode == 0
    if not pathlib.Path(bare).exists() or has_torch:
        pytest.skip(f"{bare} is missing or has torch: no interpreter without torch to check the message with")
    run = subprocess.run([bare, str(script)], cwd=tmp_path, input='{"op": "version"}\n', capture_output=True,
                         text=True, timeout=120)
    reply = json.loads(run.stdout)
    assert reply["available"] is False
    assert bare in reply["reason"] and "pip install kernelsmith[torch]" in reply["reason"]


RELU = """// @launch relu<<<ceil_div(batch_size * dim, 64), 64>>>(x, out, batch_size * dim)
__kernel void relu(__global const float* x, __global float* out, int n) {
  const int i = get_global_id(0);
  if (i < n) out[i] = fmax(x[i], 0.0f);
}
"""


def test_evaluator_uses_the_oracle(tmp_path):
    import kernelsmith as ks

    if not any(b.name == "opencl" and b.available for b in ks.devices()):
        pytest.skip("no OpenCL device (install pocl-opencl-icd)")
    # The package names its own interpreter (this one, with torch) for the helpers; the worker gets it.
    assert sys.executable in ks.helper_python() or "KERNELSMITH_PYTHON" in __import__("os").environ
    task = ks.Task.load(str(TASKS / "relu"))
    options = ks.EvaluatorOptions(backend="opencl", correctness_trials=1, min_samples=3, max_samples=10,
                                  screen_budget_seconds=0.05, compile_threads=1, cache_dir=str(tmp_path))
    evaluation = ks.create_evaluator(options).evaluate(task, ks.Candidate("opencl", RELU))
    assert evaluation.status == ks.Status.ok, evaluation.message
    assert set(evaluation.speedups) == {"eager", "compile", "compile_max_autotune"}
    assert evaluation.speedup == evaluation.speedups["eager"] > 0
    assert isinstance(evaluation.baselines["eager"], ks.TimingReport)
    for name in ("compile", "compile_max_autotune"):
        # Timed, or not timed with the reason (a CPU without a C++ compiler for Inductor).
        assert (name in evaluation.baselines) != (name in evaluation.baseline_errors)
    assert evaluation.stage_seconds["oracle"] > 0
    assert "over PyTorch eager" in evaluation.to_prompt_text()
    back = ks.Evaluation.from_json(evaluation.to_json())
    assert back.speedups == evaluation.speedups


def run_in_a_fresh_helper(tmp_path, body: str) -> subprocess.CompletedProcess:
    """`body` run in a fresh interpreter where `oracle` is this module loaded by path (as the evaluator starts
    it: nothing imported beforehand) and `helper` its Oracle over `tmp_path`; json and sys are imported."""
    program = (f"import importlib.util, json, sys\n"
               f"spec = importlib.util.spec_from_file_location('oracle', {str(po.__file__)!r})\n"
               f"oracle = importlib.util.module_from_spec(spec)\n"
               f"spec.loader.exec_module(oracle)\n"
               f"helper = oracle.Oracle({str(tmp_path)!r})\n") + body
    return subprocess.run([sys.executable, "-c", program], cwd=tmp_path, capture_output=True, text=True, timeout=300)


def test_a_runner_warmed_up_ahead_has_imported_what_a_modelnew_needs_and_touched_no_device(tmp_path):
    # The evaluator starts the next candidate's runner ahead on a GPU (docs/kernelbench-modelnew.md, "Builds"):
    # its warm-up imports torch and load_inline's module but initialises no device.
    run = run_in_a_fresh_helper(tmp_path, """
print(json.dumps(oracle.handle(helper, {"op": "warm_up", "triton": True})))
print(json.dumps(oracle.handle(helper, {"op": "warm"})))
torch = sys.modules["torch"]
print(json.dumps({"cpp_extension": "torch.utils.cpp_extension" in sys.modules,
                  "cuda_initialized": torch.cuda.is_initialized()}))
""")
    lines = [json.loads(line) for line in run.stdout.splitlines()]
    assert len(lines) == 3, run.stderr
    assert lines[0]["ok"] is True and lines[0]["torch"] == torch.__version__ and lines[0]["handled_seconds"] > 0
    assert lines[1]["ok"] is False and "warm_up" in lines[1]["message"]
    assert lines[2] == {"cpp_extension": True, "cuda_initialized": False}


def test_a_new_task_does_not_import_torch_dynamo_to_reset_it(tmp_path):
    # A runner started ahead has imported torch; its first request (a new task) must not import torch._dynamo,
    # seconds of work, only to reset a compiler that compiled nothing.
    run = run_in_a_fresh_helper(tmp_path, """
oracle.handle(helper, {"op": "warm_up"})
helper.task_key = "a"
helper.forget_task()
print(json.dumps("torch._dynamo" in sys.modules))
""")
    assert run.stdout.split() == ["false"], run.stderr
