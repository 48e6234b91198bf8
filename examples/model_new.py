"""A KernelBench problem and two ModelNew candidates for it, evaluated on the best backend here
(docs/kernelbench-modelnew.md).

    python examples/model_new.py [--with-extension] [--out DIR]

The problem (a Linear layer, a scale and a LeakyReLU, in KernelBench's format) is imported as a task; its
own Model, written as a ModelNew, is the program a run with no hand-written seed starts from (about 1x
eager). With --with-extension a second ModelNew keeps the GEMM in PyTorch and moves the epilogue into a
C++ extension built with load_inline (a minute of compiling on a small CPU: the torch headers).
"""

from __future__ import annotations

import argparse
import pathlib
import tempfile

import kernelsmith as ks

PROBLEM = '''import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, in_features, out_features, multiplier, negative_slope):
        super().__init__()
        self.gemm = nn.Linear(in_features, out_features)
        self.multiplier = multiplier
        self.leaky_relu = nn.LeakyReLU(negative_slope)

    def forward(self, x):
        return self.leaky_relu(self.gemm(x) * self.multiplier)


batch_size = 64
in_features = 256
out_features = 128
multiplier = 2.0
negative_slope = 0.1


def get_inputs():
    return [torch.randn(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features, multiplier, negative_slope]
'''

# The problem's Model, renamed: correct by construction, and the baseline's speed.
AS_MODELNEW = PROBLEM.split("\n\nbatch_size")[0].replace("class Model(", "class ModelNew(") + "\n"

# The GEMM from PyTorch, the scale and the LeakyReLU fused in one pass of C++ (on a GPU this would be a
# CUDA kernel in cuda_sources, launched on the output of the cuBLAS GEMM).
WITH_EXTENSION = '''import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

source = r"""
#include <torch/extension.h>
torch::Tensor scale_leaky_relu(torch::Tensor y, double multiplier, double slope) {
  auto out = torch::empty_like(y);
  const float* in = y.data_ptr<float>();
  float* o = out.data_ptr<float>();
  const float m = static_cast<float>(multiplier), s = static_cast<float>(slope);
  for (int64_t i = 0; i < y.numel(); ++i) {
    const float v = in[i] * m;
    o[i] = v > 0.0f ? v : v * s;
  }
  return out;
}
"""
epilogue = load_inline(name="scale_leaky_relu", cpp_sources=source, functions=["scale_leaky_relu"])


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features, multiplier, negative_slope):
        super().__init__()
        self.gemm = nn.Linear(in_features, out_features)
        self.multiplier = multiplier
        self.negative_slope = negative_slope

    def forward(self, x):
        return epilogue.scale_leaky_relu(self.gemm(x).contiguous(), self.multiplier, self.negative_slope)
'''


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--with-extension", action="store_true", help="also evaluate the C++ extension candidate")
    parser.add_argument("--out", default=None, help="folder for the problem and its task (default: a temporary one)")
    args = parser.parse_args()

    folder = pathlib.Path(args.out or tempfile.mkdtemp(prefix="kernelsmith-model-new-"))
    problem = folder / "level2" / "gemm_multiply_leakyrelu.py"
    problem.parent.mkdir(parents=True, exist_ok=True)
    problem.write_text(PROBLEM)
    task = ks.Task.from_kernelbench(str(problem), out_dir=str(folder / "tasks"))

    evaluator = ks.create_evaluator(ks.EvaluatorOptions(mode="screen", cache_dir=str(folder / "cache")))
    candidates = {"the problem's Model as ModelNew": AS_MODELNEW}
    if args.with_extension:
        candidates["GEMM in PyTorch, epilogue in C++"] = WITH_EXTENSION
    for label, source in candidates.items():
        evaluation = evaluator.evaluate(task, ks.Candidate("pytorch", source))
        print(f"{label}: {evaluation.status.name}, {evaluation.speedup:.2f}x eager ({evaluation.message})")


if __name__ == "__main__":
    main()
