"""ModelNew candidates on a CUDA device, through the real path: a CUDA extension built with load_inline and a
Triton kernel, each called from ModelNew's forward beside PyTorch's GEMM, evaluated by the sandboxed runner;
and the runner's timing of a ModelNew set against triton.testing.do_bench's of the same module
(docs/kernelbench-modelnew.md)."""

from __future__ import annotations

import importlib.util
import statistics

import pytest

import kernelsmith as ks
from backends import backend_available
from test_task_oracle import manifest, write_task

torch = pytest.importorskip("torch", reason="ModelNew candidates need torch (pip install kernelsmith[torch])")

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(not backend_available("cuda"), reason="no CUDA device for kernelsmith"),
    pytest.mark.skipif(not torch.cuda.is_available(), reason="torch sees no CUDA device"),
]

# The epilogue (scale and mask) as a CUDA kernel built with load_inline; the GEMM is PyTorch's (cuBLAS).
CUDA_EPILOGUE = r'''import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_source = """
#include <torch/extension.h>
#include <c10/cuda/CUDAStream.h>

__global__ void scale_mask_kernel(const float* in, const bool* mask, float* out, float scale, long rows, long cols) {
  long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
  if (i < rows * cols) out[i] = mask[i % cols] ? in[i] * scale : 0.0f;
}

torch::Tensor scale_mask(torch::Tensor y, double scale, torch::Tensor mask) {
  auto out = torch::empty_like(y);
  const long rows = y.size(0), cols = y.size(1);
  const int threads = 256;
  const long blocks = (rows * cols + threads - 1) / threads;
  scale_mask_kernel<<<blocks, threads, 0, c10::cuda::getCurrentCUDAStream()>>>(
      y.data_ptr<float>(), mask.data_ptr<bool>(), out.data_ptr<float>(), (float)scale, rows, cols);
  return out;
}
"""
cpp_source = "torch::Tensor scale_mask(torch::Tensor y, double scale, torch::Tensor mask);"
epilogue = load_inline(name="scale_mask_cuda_epilogue", cpp_sources=cpp_source, cuda_sources=cuda_source,
                       functions=["scale_mask"])


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.gemm = nn.Linear(in_features, out_features)

    def forward(self, x, scale, mask):
        return epilogue.scale_mask(self.gemm(x).contiguous(), scale, mask.contiguous())
'''

# The same epilogue as a Triton kernel.
TRITON_EPILOGUE = '''import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def scale_mask_kernel(y_ptr, mask_ptr, out_ptr, scale, n, cols, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    inside = offsets < n
    y = tl.load(y_ptr + offsets, mask=inside)
    keep = tl.load(mask_ptr + offsets % cols, mask=inside)
    tl.store(out_ptr + offsets, tl.where(keep != 0, y * scale, 0.0), mask=inside)


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.gemm = nn.Linear(in_features, out_features)

    def forward(self, x, scale, mask):
        y = self.gemm(x).contiguous()
        out = torch.empty_like(y)
        n = y.numel()
        scale_mask_kernel[(triton.cdiv(n, 1024),)](y, mask.contiguous().to(torch.uint8), out, scale, n, y.shape[1],
                                                   BLOCK=1024)
        return out
'''


def gpu_task(folder, batch_size: int, in_features: int, out_features: int) -> ks.Task:
    document = manifest()
    document["sizes"] = {"batch_size": batch_size, "in_features": in_features, "out_features": out_features}
    document["oracle"]["baselines"] = ["eager"]
    return ks.Task.load(str(write_task(folder, document)))


def cuda_evaluator(tmp_path, **overrides) -> ks.Evaluator:
    options = ks.EvaluatorOptions(backend="cuda", cache_dir=str(tmp_path / "cache"))
    for name, value in overrides.items():
        setattr(options, name, value)
    return ks.create_evaluator(options)


@pytest.mark.parametrize("name, source", [("cuda", CUDA_EPILOGUE), ("triton", TRITON_EPILOGUE)])
def test_a_modelnew_with_its_own_gpu_kernel_is_ok_and_timed(tmp_path, name, source):
    if name == "triton":
        pytest.importorskip("triton", reason="a Triton ModelNew needs triton")
    task = gpu_task(tmp_path / "task", 256, 512, 384)
    result = cuda_evaluator(tmp_path, mode="screen").evaluate(task, ks.Candidate("pytorch", source))
    assert result.status == ks.Status.ok, result.message
    assert result.correctness.passed and result.correctness.trials >= 2  # the odd check size too
    assert result.timing.median_ms > 0.0 and result.speedups["eager"] > 0.0
    assert result.device != "cpu" and "unconfined" not in result.integrity.flags


def test_a_modelnew_that_writes_its_input_on_the_gpu_is_incorrect(tmp_path):
    task = gpu_task(tmp_path / "task", 256, 512, 384)
    source = CUDA_EPILOGUE.replace("return epilogue.scale_mask(", "x.mul_(1.0001)\n        return epilogue.scale_mask(")
    result = cuda_evaluator(tmp_path, mode="screen").evaluate(task, ks.Candidate("pytorch", source))
    assert result.status == ks.Status.incorrect, result.message
    assert "wrote into its input x" in result.message


def test_the_runners_timing_of_a_modelnew_agrees_with_do_bench(tmp_path):
    """A forward of about a millisecond (a float32 GEMM of 2048^3 and the epilogue): the evaluator's median
    and triton.testing.do_bench's of the same module on the same device agree within 2%."""
    triton_testing = pytest.importorskip("triton.testing", reason="the comparison needs triton.testing.do_bench")
    sizes = {"batch_size": 2048, "in_features": 2048, "out_features": 2048}
    task = gpu_task(tmp_path / "task", **sizes)
    result = cuda_evaluator(tmp_path, mode="strict").evaluate(task, ks.Candidate("pytorch", TRITON_EPILOGUE))
    assert result.status == ks.Status.ok, result.message

    # The same ModelNew, run here (test code, not a candidate), on inputs of the task's distributions. TF32 off,
    # as in the runner (float32 exactly, KernelBench's convention).
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    path = tmp_path / "model_new_here.py"
    path.write_text(TRITON_EPILOGUE)  # a module from a file: triton.jit reads its function's source
    spec = importlib.util.spec_from_file_location("model_new_here", path)
    loaded = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(loaded)
    module = loaded.ModelNew(sizes["in_features"], sizes["out_features"]).cuda().eval()
    x = torch.rand(sizes["batch_size"], sizes["in_features"], device="cuda")
    mask = torch.randint(0, 2, (sizes["out_features"],), device="cuda").bool()
    with torch.no_grad():
        forward = lambda: module(x, 0.5, mask)  # noqa: E731
        medians = [triton_testing.do_bench(forward, warmup=50, rep=300, return_mode="median") for _ in range(3)]
    reference_ms = statistics.median(medians)
    assert reference_ms >= 0.05, f"the forward takes {reference_ms:.3f} ms, too short for a 2% comparison"
    difference = abs(result.timing.median_ms - reference_ms) / reference_ms
    assert difference <= 0.02, (f"evaluator median {result.timing.median_ms:.4f} ms, do_bench "
                                f"{reference_ms:.4f} ms ({medians}): {difference:.1%} apart")
