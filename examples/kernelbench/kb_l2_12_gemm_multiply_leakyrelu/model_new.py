# KernelBench level 2, problem 12: leaky_relu((x @ W.T + b) * multiplier, negative_slope), as a ModelNew.
# The GEMM stays cuBLAS's (PyTorch's addmm, bias fused); the multiply and the LeakyReLU, two passes over the
# output in eager PyTorch, are one CUDA kernel here that rewrites the product in place (float4 when aligned).
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_source = r"""
#include <torch/extension.h>
#include <c10/cuda/CUDAStream.h>

__device__ __forceinline__ float scaled_leaky_relu(float v, float multiplier, float slope) {
  v *= multiplier;
  return v > 0.0f ? v : v * slope;
}

__global__ void scale_leaky_relu_vec4(float4* data, long count4, float multiplier, float slope) {
  for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < count4; i += (long)gridDim.x * blockDim.x) {
    float4 v = data[i];
    v.x = scaled_leaky_relu(v.x, multiplier, slope);
    v.y = scaled_leaky_relu(v.y, multiplier, slope);
    v.z = scaled_leaky_relu(v.z, multiplier, slope);
    v.w = scaled_leaky_relu(v.w, multiplier, slope);
    data[i] = v;
  }
}

__global__ void scale_leaky_relu_tail(float* data, long begin, long count, float multiplier, float slope) {
  long i = begin + blockIdx.x * (long)blockDim.x + threadIdx.x;
  if (i < count) data[i] = scaled_leaky_relu(data[i], multiplier, slope);
}

torch::Tensor scale_leaky_relu_(torch::Tensor y, double multiplier, double slope) {
  TORCH_CHECK(y.is_cuda() && y.is_contiguous() && y.scalar_type() == torch::kFloat, "y: contiguous float32 CUDA");
  const long count = y.numel();
  const bool aligned = reinterpret_cast<uintptr_t>(y.data_ptr<float>()) % 16 == 0;
  const long count4 = aligned ? count / 4 : 0;
  auto stream = c10::cuda::getCurrentCUDAStream();
  const int threads = 256;
  if (count4 > 0) {
    const long blocks = std::min<long>((count4 + threads - 1) / threads, 65535L * 8);
    scale_leaky_relu_vec4<<<blocks, threads, 0, stream>>>(reinterpret_cast<float4*>(y.data_ptr<float>()), count4,
                                                          (float)multiplier, (float)slope);
  }
  const long tail = count - count4 * 4;
  if (tail > 0) {
    scale_leaky_relu_tail<<<(tail + threads - 1) / threads, threads, 0, stream>>>(
        y.data_ptr<float>(), count4 * 4, count, (float)multiplier, (float)slope);
  }
  return y;
}
"""
cpp_source = "torch::Tensor scale_leaky_relu_(torch::Tensor y, double multiplier, double slope);"
epilogue = load_inline(name="kb_l2_12_scale_leaky_relu", cpp_sources=cpp_source, cuda_sources=cuda_source,
                       functions=["scale_leaky_relu_"])


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features, multiplier, negative_slope):
        super().__init__()
        self.gemm = nn.Linear(in_features, out_features)
        self.multiplier = multiplier
        self.negative_slope = negative_slope

    def forward(self, x):
        y = torch.addmm(self.gemm.bias, x, self.gemm.weight.t())  # a fresh tensor: the epilogue may rewrite it
        return epilogue.scale_leaky_relu_(y, self.multiplier, self.negative_slope)
