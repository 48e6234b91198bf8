"""The integrity checks of a ModelNew (host-code) candidate and the report of what it ran, through the real
evaluator path (the sandboxed worker, the candidate's own runner, the comparison in the worker): every hack class
of docs/kernelbench-modelnew.md ("Integrity") is refused or flagged by name, and an honest ModelNew with a kernel
of its own is reported with its kernels, their launches and their share of the time."""

from __future__ import annotations

import json
import pathlib
import sys

import pytest

import kernelsmith as ks
from backends import backend_available, needs_opencl
from test_model_new import CPP_EPILOGUE, HONEST, evaluator, task  # noqa: F401 - task is a fixture
from test_task_oracle import manifest, write_task

torch = pytest.importorskip("torch", reason="ModelNew candidates need torch (pip install kernelsmith[torch])")

DOUBT = dict(ks.doubt_casting_flags())
RETURN = "return self.gemm(x) * scale * mask"
TIMING_DOUBTS = {"host_timer_mismatch", "speedup_unconfirmed"}


def replace_forward(body: str, source: str = HONEST) -> str:
    """HONEST with its forward's return replaced by `body` (lines indented as the method's body)."""
    return source.replace(RETURN, body.replace("\n", "\n        "))


def preamble(lines: str, source: str = HONEST) -> str:
    """`source` with module-level code added after its imports."""
    return source.replace("\n\nclass ModelNew", f"\n{lines}\n\nclass ModelNew", 1)


@pytest.fixture(scope="module")
def shared(tmp_path_factory):
    return evaluator(tmp_path_factory.mktemp("evaluator"))


def judge(result) -> str:
    """The verdict the judge gives (kernelsmith kernelbench judge)."""
    if result.status != ks.Status.ok:
        return "rejected"
    return "flagged" if any(flag in DOUBT for flag in result.integrity.flags) else "trusted"


# ---- what ran


@needs_opencl
def test_an_honest_modelnew_reports_its_own_kernel_and_the_librarys(task, shared):
    result = shared.evaluate(task, ks.Candidate("pytorch", CPP_EPILOGUE))
    assert result.status == ks.Status.ok, result.message
    # Nothing of the candidate's doing casts doubt (the host clock of a 10 us forward on a loaded 2-core machine
    # may: host_timer_mismatch and speedup_unconfirmed are the timing's own, for every kind of candidate).
    assert not [f for f in result.integrity.flags if f in DOUBT and f not in TIMING_DOUBTS], result.integrity.flags
    host = result.host_code
    assert host is not None and host.policy == "custom_kernel"
    own = [k for k in host.kernels if k.origin == "candidate"]
    assert [k.name for k in own] == ["scale_mask"] and own[0].launches == 1
    assert any(k.origin == "library" and "linear" in k.name for k in host.kernels), host.kernels
    assert 0.0 < host.custom_share < 1.0
    assert host.custom_kernel_every_check and host.ablation == "changed"
    # The report survives the JSON round trip the worker and the run store use.
    again = ks.Evaluation.from_json(result.to_json()).host_code
    assert [(k.name, k.origin, k.launches) for k in again.kernels] == [(k.name, k.origin, k.launches)
                                                                        for k in host.kernels]
    assert json.loads(result.to_json())["host_code"]["custom_share"] == pytest.approx(host.custom_share)


@needs_opencl
def test_a_pytorch_only_modelnew_is_flagged_by_default_and_labelled_when_allowed(task, shared, tmp_path):
    result = shared.evaluate(task, ks.Candidate("pytorch", HONEST))
    assert result.status == ks.Status.ok, result.message
    assert "no_custom_kernel" in result.integrity.flags and judge(result) == "flagged"
    assert result.host_code.custom_share == 0.0 and result.host_code.ablation == "no_custom_calls"
    allowed = evaluator(tmp_path, host_code_policy="torch_only_allowed").evaluate(task, ks.Candidate("pytorch", HONEST))
    assert allowed.status == ks.Status.ok, allowed.message
    assert "torch_only" in allowed.integrity.flags and "no_custom_kernel" not in allowed.integrity.flags
    assert not [f for f in allowed.integrity.flags if f in DOUBT and f not in TIMING_DOUBTS], allowed.integrity.flags
    assert allowed.host_code.policy == "torch_only_allowed"
    with pytest.raises(ks.Error, match="host_code_policy"):
        evaluator(tmp_path, host_code_policy="anything")


@needs_opencl
def test_a_decoy_kernel_whose_result_is_thrown_away_is_flagged_unused(task, shared):
    decoy = replace_forward("y = self.gemm(x)\nepilogue.scale_mask(y.contiguous(), scale, mask.contiguous())\n"
                            "return y * scale * mask", CPP_EPILOGUE.replace(
                                "return epilogue.scale_mask(self.gemm(x).contiguous(), scale, mask.contiguous())", RETURN))
    result = shared.evaluate(task, ks.Candidate("pytorch", decoy))
    assert result.status == ks.Status.ok, result.message
    assert result.host_code.custom_kernel_every_check and result.host_code.ablation == "unchanged"
    assert "custom_kernel_unused" in result.integrity.flags and judge(result) == "flagged"


@needs_opencl
def test_a_try_except_fallback_to_pytorch_runs_no_kernel_of_its_own(task, shared):
    # The extension is built, but the call always fails (double where it reads float) and PyTorch answers.
    fallback = CPP_EPILOGUE.replace(
        "return epilogue.scale_mask(self.gemm(x).contiguous(), scale, mask.contiguous())",
        "y = self.gemm(x)\n        try:\n            return epilogue.scale_mask(y.double(), scale, mask)\n"
        "        except Exception:\n            return y * scale * mask")
    result = shared.evaluate(task, ks.Candidate("pytorch", fallback))
    assert result.status == ks.Status.ok, result.message
    assert not result.host_code.custom_kernel_every_check
    assert "no_custom_kernel" in result.integrity.flags and judge(result) == "flagged"


# ---- tampering, background work, caching, outputs


@needs_opencl
@pytest.mark.parametrize("attack, replaced", [
    # The host clock the CPU timing reads, slowed down.
    ("import time\n_clock = time.perf_counter\ntime.perf_counter = lambda: _clock() * 0.01", "time.perf_counter"),
    # A comparison a naive harness would call.
    ("torch.allclose = lambda *args, **kwargs: True", "torch.allclose"),
    # The runner's own timing function, found among the loaded modules.
    ("import sys\nfor _m in list(sys.modules.values()):\n    if hasattr(_m, 'measure') and hasattr(_m, 'Oracle'):\n"
     "        _m.measure = lambda *a, **k: {}", "measure"),
    # Its code swapped in place.
    ("import sys\nfor _m in list(sys.modules.values()):\n    if hasattr(_m, 'sample_statistics'):\n"
     "        _m.sample_statistics.__code__ = (lambda s: {'median': 1e-9}).__code__", "sample_statistics"),
])
def test_monkeypatching_torch_the_clocks_or_the_evaluator_is_refused(task, shared, attack, replaced):
    result = shared.evaluate(task, ks.Candidate("pytorch", preamble(attack)))
    assert result.status == ks.Status.runtime_error, result.message
    assert "tampering" in result.message and replaced in result.message


@needs_opencl
def test_patching_inside_forward_is_refused_after_forward(task, shared):
    source = replace_forward("import torch.cuda\ntorch.cuda.synchronize = lambda *a, **k: None\n" + RETURN)
    result = shared.evaluate(task, ks.Candidate("pytorch", source))
    assert result.status == ks.Status.runtime_error, result.message
    assert "after ModelNew.forward returned" in result.message and "torch.cuda.synchronize" in result.message


@needs_opencl
def test_changing_torchs_global_settings_is_put_back_and_flagged(task, shared):
    source = preamble("torch.backends.cuda.matmul.allow_tf32 = True\ntorch.set_float32_matmul_precision('medium')\n"
                      "torch.set_num_threads(1)", CPP_EPILOGUE)
    result = shared.evaluate(task, ks.Candidate("pytorch", source))
    assert result.status == ks.Status.ok, result.message
    assert "torch_settings_changed" in result.integrity.flags and judge(result) == "flagged"
    note = " ".join(result.host_code.notes)
    assert "allow_tf32" in note and "float32_matmul_precision" in note and "num_threads" in note


@needs_opencl
@pytest.mark.parametrize("body", [
    # A thread that finishes the output after forward returned.
    "import threading, time\nout = torch.zeros(x.shape[0], self.gemm.out_features)\n"
    "def late():\n    time.sleep(0.5)\n    out.copy_(self.gemm(x) * scale * mask)\n"
    "threading.Thread(target=late, daemon=True).start()\nreturn out",
    # A child process left running.
    "import subprocess\nself.helper = getattr(self, 'helper', None) or subprocess.Popen(['sleep', '30'])\n" + RETURN,
])
def test_work_left_running_in_the_background_is_refused(task, shared, body):
    result = shared.evaluate(task, ks.Candidate("pytorch", replace_forward(body)))
    assert result.status in (ks.Status.runtime_error, ks.Status.incorrect), result.message
    assert "background_work" in result.message or "sizes" in result.message, result.message
    if result.status == ks.Status.runtime_error:
        assert "running" in result.message


@needs_opencl
def test_a_thread_started_when_the_file_runs_is_refused_before_any_check(task, shared):
    source = preamble("import queue, threading\n_jobs = queue.Queue()\n"
                      "threading.Thread(target=lambda: [job() for job in iter(_jobs.get, None)], daemon=True).start()")
    result = shared.evaluate(task, ks.Candidate("pytorch", source))
    assert result.status == ks.Status.runtime_error, result.message
    assert "after its file ran" in result.message and "thread" in result.message


@needs_opencl
@pytest.mark.parametrize("key", ["x.data_ptr()", "id(x)", "tuple(x.shape)"])
def test_results_cached_across_calls_fail_the_checked_timed_runs(task, shared, key):
    """A cache that serves repeated calls (warm-up aware: only after the first few) passes the checks, each one
    call; the timed runs take fresh inputs and the last ones on the timing cases' exact values are checked."""
    body = (f"self.calls = getattr(self, 'calls', 0) + 1\nself.cache = getattr(self, 'cache', {{}})\nkey = {key}\n"
            "if self.calls > 3 and key in self.cache:\n    return self.cache[key]\n"
            f"self.cache[key] = {RETURN.replace('return ', '')}\nreturn self.cache[key]")
    result = shared.evaluate(task, ks.Candidate("pytorch", replace_forward(body)))
    assert result.status == ks.Status.incorrect, result.message
    assert "timed run" in result.message or "sizes" in result.message, result.message


@needs_opencl
def test_outputs_that_alias_each_other_are_refused(tmp_path):
    document = manifest()
    document["name"] = "gemm_scale_mask_twice"
    document["oracle"]["baselines"] = ["eager"]
    document["tensors"].append({"name": "out2", "dtype": "float32", "shape": ["batch_size", "out_features"],
                                "role": "output"})
    document["oracle"]["outputs"] = ["out", "out2"]
    from test_task_oracle import PROBLEM  # noqa: PLC0415
    twice = PROBLEM.replace("return self.gemm(x) * scale * mask", "y = self.gemm(x) * scale * mask\n"
                            "        return y, y.clone()")
    task = ks.Task.load(str(write_task(tmp_path / "t", document, module=twice)))
    own = evaluator(tmp_path, host_code_policy="torch_only_allowed")
    honest = HONEST.replace(RETURN, "y = self.gemm(x) * scale * mask\n        return y, y.clone()")
    assert own.evaluate(task, ks.Candidate("pytorch", honest)).status == ks.Status.ok
    aliased = HONEST.replace(RETURN, "y = self.gemm(x) * scale * mask\n        return y, y")
    result = own.evaluate(task, ks.Candidate("pytorch", aliased))
    assert result.status == ks.Status.incorrect, result.message
    assert "in the memory of its output 0" in result.message


# ---- the runner alone: what a check sees that the task above cannot show


def _runner():
    sys.path.insert(0, str(pathlib.Path(ks.__file__).parent))
    import pytorch_oracle  # noqa: PLC0415 - the helper's module, as the runner runs it

    return pytorch_oracle


BROADCAST_PROBLEM = '''import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x):
        return x.sum(dim=0, keepdim=True).expand(x.shape[0], x.shape[1])


def get_inputs():
    return [torch.randn(4, 8)]


def get_init_inputs():
    return []
'''


def test_a_broadcast_view_as_output_is_flagged_by_the_runner(tmp_path):
    oracle_module = _runner()
    candidate = BROADCAST_PROBLEM.replace("class Model", "class ModelNew")
    oracle = oracle_module.Oracle(str(tmp_path / "work"))
    x = torch.randn(4, 8)
    path = tmp_path / "x.bin"
    x.numpy().tofile(path)
    problem = {"source": BROADCAST_PROBLEM, "path": "problem.py", "constants": {}, "forward": ["x"],
               "parameters": {}, "outputs": ["out"], "seed": 42,
               "candidate": {"source": candidate, "path": "candidate.py"}}
    reply = oracle_module.handle(oracle, {
        "op": "outputs", "task_key": "k", "problem": problem, "config": "timing", "device": "cpu",
        "inputs": [{"name": "x", "dtype": "float32", "shape": [4, 8], "path": str(path)}],
        "outputs": [{"name": "out", "dtype": "float32", "shape": [4, 8], "path": str(tmp_path / "out.bin")}]})
    assert reply["ok"], reply
    assert "output_not_dense" in reply["flags"] and "output_not_dense" in DOUBT
    assert reply["custom_calls"] == 0


def test_every_timed_run_sees_inputs_no_call_saw_and_the_checked_runs_come_last():
    """A cache keyed by identity, address or content never serves a timed run: every warm-up and sample gets new
    values, and the exact input sets (whose results are checked) come only in the last timed runs."""
    oracle_module = _runner()
    exact = [[torch.randn(16, 8)], [torch.randn(16, 8)]]
    seen = []

    def forward(x):
        seen.append((x.numpy().tobytes(), id(x)))
        return x * 2

    timed = {}
    report = oracle_module.measure(torch, torch.device("cpu"), forward, exact,
                                   {"min_samples": 5, "max_samples": 8, "warmups": 2, "host_repeats": 1},
                                   "ModelNew", candidate=timed)
    exact_bytes = [s[0].numpy().tobytes() for s in exact]
    checked_runs = len(exact)
    timed_runs = seen[:2 + report["samples"]]  # warm-ups, then samples (the checked ones last)
    contents = [content for content, _ in timed_runs]
    assert len(set(contents)) == len(contents)  # no two runs saw the same values
    assert [c in exact_bytes for c in contents] == [False] * (len(contents) - checked_runs) + [True] * checked_runs
    assert all(torch.equal(result, 2 * s[0]) for result, s in zip(timed["results"], exact))


def test_every_flag_the_runner_raises_is_a_documented_doubt_flag_or_a_label():
    docs = (pathlib.Path(__file__).resolve().parents[2] / "docs" / "kernelbench-modelnew.md").read_text()
    for flag in ("no_custom_kernel", "custom_kernel_unused", "torch_settings_changed", "work_escaped_timer",
                 "async_work_at_return", "cuda_graph", "output_not_dense"):
        assert flag in DOUBT and f"`{flag}`" in docs, flag
    for label in ("torch_only", "other_stream"):
        assert label not in DOUBT and f"`{label}`" in docs, label


# ---- on a GPU

def on_gpu(test):
    """Marks a test `gpu` and skips it, saying why, where kernelsmith or torch sees no CUDA device."""
    for mark in (pytest.mark.gpu,
                 pytest.mark.skipif(not backend_available("cuda"), reason="no CUDA device for kernelsmith"),
                 pytest.mark.skipif(not torch.cuda.is_available(), reason="torch sees no CUDA device")):
        test = mark(test)
    return test


@pytest.fixture(scope="module")
def cuda_evaluator(tmp_path_factory):
    options = ks.EvaluatorOptions(backend="cuda", mode="screen", correctness_trials=1, min_samples=3,
                                  max_samples=20, screen_budget_seconds=0.1,
                                  cache_dir=str(tmp_path_factory.mktemp("cuda") / "cache"))
    return ks.create_evaluator(options)


# The task's epilogue as a CUDA kernel of the candidate's own, beside PyTorch's GEMM (cuBLAS).
CUDA_OWN_EPILOGUE = CPP_EPILOGUE.replace('source = r"""', 'cuda_source = r"""').replace(
    """torch::Tensor scale_mask(torch::Tensor y, double scale, torch::Tensor mask) {
  auto out = torch::empty_like(y);
  const float* in = y.data_ptr<float>();
  const bool* m = mask.data_ptr<bool>();
  float* o = out.data_ptr<float>();
  const int64_t cols = y.size(1);
  for (int64_t i = 0; i < y.numel(); ++i) o[i] = m[i % cols] ? in[i] * static_cast<float>(scale) : 0.0f;
  return out;
}""", """__global__ void own_scale_mask(const float* in, const bool* m, float* o, float scale, int64_t n, int64_t cols) {
  const int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (i < n) o[i] = m[i % cols] ? in[i] * scale : 0.0f;
}

torch::Tensor scale_mask(torch::Tensor y, double scale, torch::Tensor mask) {
  auto out = torch::empty_like(y);
  const int64_t n = y.numel();
  own_scale_mask<<<(n + 255) / 256, 256>>>(y.data_ptr<float>(), mask.data_ptr<bool>(), out.data_ptr<float>(),
                                          static_cast<float>(scale), n, y.size(1));
  return out;
}""").replace('epilogue = load_inline(name="scale_mask_epilogue", cpp_sources=source, functions=["scale_mask"])',
              'epilogue = load_inline(name="own_scale_mask_cuda", cpp_sources="torch::Tensor scale_mask(torch::Tensor y, '
              'double scale, torch::Tensor mask);", cuda_sources=cuda_source, functions=["scale_mask"])')


def _gpu_epilogue():
    assert "own_scale_mask<<<" in CUDA_OWN_EPILOGUE and "cuda_sources=cuda_source" in CUDA_OWN_EPILOGUE
    return CUDA_OWN_EPILOGUE


@on_gpu
def test_gpu_own_kernel_and_cublas_are_told_apart(task, cuda_evaluator):
    result = cuda_evaluator.evaluate(task, ks.Candidate("pytorch", _gpu_epilogue()))
    assert result.status == ks.Status.ok, result.message
    assert judge(result) == "trusted", (result.integrity.flags, result.host_code.notes)
    own = [k for k in result.host_code.kernels if k.origin == "candidate"]
    assert [k.launches for k in own] == [1] and "own_scale_mask" in own[0].name
    assert any(k.origin == "library" for k in result.host_code.kernels)  # the GEMM (cuBLAS)
    assert 0.0 < result.host_code.custom_share < 1.0
    assert result.host_code.ablation == "changed"


@on_gpu
def test_gpu_work_on_a_side_stream_left_running_is_flagged(task, cuda_evaluator):
    # The whole forward on a stream of its own, with heavy extra work, and no join with the caller's stream.
    body = ("self.side = getattr(self, 'side', None) or torch.cuda.Stream()\n"
            "with torch.cuda.stream(self.side):\n"
            "    y = self.gemm(x) * scale * mask\n"
            "    z = torch.randn(2048, 2048, device=x.device)\n"
            "    for _ in range(20):\n        z = z @ z\n        z = z / z.norm()\n"
            "return y")
    result = cuda_evaluator.evaluate(task, ks.Candidate("pytorch", replace_forward(body)))
    assert result.status == ks.Status.ok, result.message
    flags = set(result.integrity.flags)
    assert flags & {"work_escaped_timer", "async_work_at_return"}, (flags, result.host_code.notes)
    assert judge(result) == "flagged"


@on_gpu
def test_gpu_a_cuda_graph_replay_is_flagged(task, cuda_evaluator):
    body = ("if getattr(self, 'graph', None) is None or self.static_x.shape != x.shape:\n"
            "    self.static_x = x.clone()\n    self.static_mask = mask.clone()\n"
            "    s = torch.cuda.Stream()\n    s.wait_stream(torch.cuda.current_stream())\n"
            "    with torch.cuda.stream(s):\n        self.gemm(self.static_x)\n"
            "    torch.cuda.current_stream().wait_stream(s)\n"
            "    self.graph = torch.cuda.CUDAGraph()\n"
            "    with torch.cuda.graph(self.graph):\n"
            "        self.static_y = self.gemm(self.static_x) * scale * self.static_mask\n"
            "self.static_x.copy_(x)\nself.static_mask.copy_(mask)\nself.graph.replay()\n"
            "return self.static_y.clone()")
    result = cuda_evaluator.evaluate(task, ks.Candidate("pytorch", replace_forward(body)))
    if result.status == ks.Status.ok:
        assert "cuda_graph" in result.integrity.flags, result.integrity.flags
    else:  # a graph recorded with the first call's scale replays it: the checks with another scale fail
        assert result.status == ks.Status.incorrect, result.message


@on_gpu
def test_gpu_patching_the_event_timer_is_refused(task, cuda_evaluator):
    source = preamble("torch.cuda.Event.elapsed_time = lambda self, end: 1e-3")
    result = cuda_evaluator.evaluate(task, ks.Candidate("pytorch", source))
    assert result.status == ks.Status.runtime_error, result.message
    assert "torch.cuda.Event.elapsed_time" in result.message
