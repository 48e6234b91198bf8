# KernelBench level 2, problem 76: relu(x @ W.T + bias), as a ModelNew. The GEMM stays cuBLAS's (x @ W.T);
# the bias add and the ReLU, two passes over the output in eager PyTorch, are one CUDA kernel here that
# rewrites the product in place (float4 rows when the row length allows it).
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_source = r"""
#include <torch/extension.h>
#include <c10/cuda/CUDAStream.h>

__global__ void bias_relu_vec4(float4* data, const float4* bias, long count4, long cols4) {
  for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < count4; i += (long)gridDim.x * blockDim.x) {
    float4 v = data[i];
    const float4 b = bias[i % cols4];
    v.x = fmaxf(v.x + b.x, 0.0f);
    v.y = fmaxf(v.y + b.y, 0.0f);
    v.z = fmaxf(v.z + b.z, 0.0f);
    v.w = fmaxf(v.w + b.w, 0.0f);
    data[i] = v;
  }
}

__global__ void bias_relu(float* data, const float* bias, long count, long cols) {
  for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < count; i += (long)gridDim.x * blockDim.x) {
    data[i] = fmaxf(data[i] + bias[i % cols], 0.0f);
  }
}

torch::Tensor bias_relu_(torch::Tensor y, torch::Tensor bias) {
  TORCH_CHECK(y.is_cuda() && y.is_contiguous() && y.scalar_type() == torch::kFloat, "y: contiguous float32 CUDA");
  TORCH_CHECK(bias.is_contiguous() && bias.numel() == y.size(1), "bias: one value per column");
  const long count = y.numel(), cols = y.size(1);
  auto stream = c10::cuda::getCurrentCUDAStream();
  const int threads = 256;
  const bool aligned = cols % 4 == 0 && reinterpret_cast<uintptr_t>(y.data_ptr<float>()) % 16 == 0 &&
                       reinterpret_cast<uintptr_t>(bias.data_ptr<float>()) % 16 == 0;
  if (aligned) {
    const long count4 = count / 4;
    const long blocks = std::min<long>((count4 + threads - 1) / threads, 65535L * 8);
    bias_relu_vec4<<<blocks, threads, 0, stream>>>(reinterpret_cast<float4*>(y.data_ptr<float>()),
                                                   reinterpret_cast<const float4*>(bias.data_ptr<float>()), count4,
                                                   cols / 4);
  } else {
    const long blocks = std::min<long>((count + threads - 1) / threads, 65535L * 8);
    bias_relu<<<blocks, threads, 0, stream>>>(y.data_ptr<float>(), bias.data_ptr<float>(), count, cols);
  }
  return y;
}
"""
cpp_source = "torch::Tensor bias_relu_(torch::Tensor y, torch::Tensor bias);"
epilogue = load_inline(name="kb_l2_76_bias_relu", cpp_sources=cpp_source, cuda_sources=cuda_source,
                       functions=["bias_relu_"])


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features, bias_shape):
        super().__init__()
        self.gemm = nn.Linear(in_features, out_features, bias=False)
        self.bias = nn.Parameter(torch.randn(bias_shape))

    def forward(self, x):
        y = torch.mm(x, self.gemm.weight.t())  # a fresh tensor: the epilogue may rewrite it
        return epilogue.bias_relu_(y, self.bias.contiguous())
