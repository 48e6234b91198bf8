#include "kernelsmith/language.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <filesystem>

#include "kernelsmith/error.hpp"

namespace kernelsmith {

const std::vector<KernelLanguage>& kernel_languages() {
  static const std::vector<KernelLanguage> languages = {
      {"cuda", {".cu", ".cuh"}, "CUDA C++", "cuda", {"cu", "cuh", "c", "cpp", "c++", "cc", "cxx", "h", "hpp"}, "cuda",
       "Kernels are `extern \"C\" __global__ void name(...)` functions, compiled with NVRTC: only device code and the "
       "CUDA device headers NVRTC provides (cuda_fp16.h, cuda_bf16.h); no host code.",
       // The helper reads the real blockIdx (it is defined before the macro, and a macro does not expand
       // inside its own expansion).
       "__device__ __forceinline__ uint3 kernelsmith_reversed_block_idx() {\n"
       "  return make_uint3(gridDim.x - 1 - blockIdx.x, gridDim.y - 1 - blockIdx.y, gridDim.z - 1 - blockIdx.z);\n"
       "}\n"
       "#define blockIdx kernelsmith_reversed_block_idx()\n",
       "//", LaunchSyntax::chevrons, "// @launch my_kernel<<<ceil_div(N, 256), 256>>>(x, y, N)"},
      {"opencl", {".cl"}, "OpenCL C", "opencl", {"cl", "ocl"}, "opencl",
       "Kernels are `__kernel void name(__global float* x, ...)` functions in OpenCL C 1.2. In a launch, grid counts "
       "work-groups and block is the work-group size (the global size is grid * block, per dimension).",
       "size_t kernelsmith_reversed_group_id(uint d) { return get_num_groups(d) - 1 - get_group_id(d); }\n"
       "#define get_group_id(d) kernelsmith_reversed_group_id(d)\n"
       "#define get_global_id(d) \\\n"
       "  (kernelsmith_reversed_group_id(d) * get_local_size(d) + get_local_id(d) + get_global_offset(d))\n",
       "//", LaunchSyntax::chevrons, "// @launch my_kernel<<<ceil_div(N, 256), 256>>>(x, y, N)"},
      // MACA is C++ close to CUDA; no highlighter knows a "maca" fence, so examples are fenced as cpp.
      // MCRTC has no lowered-name API: kernels are named by their extern "C" names.
      {"maca", {".maca"}, "MACA C++", "cpp", {"maca", "hip"}, "maca",
       "Kernels are `extern \"C\" __global__ void name(...)` functions (MACA follows CUDA's syntax), compiled with "
       "MCRTC: only device code and the MACA device headers (maca_fp16.h, maca_bfloat16.h); no host code. A wave "
       "(warp) has WARP_SIZE lanes, 64 on MetaX GPUs: use warpSize, 64-bit lane masks (~0ull) and 64-bit ballots, "
       "never a hard-coded 32 or `& 31`.",
       "", "//", LaunchSyntax::chevrons, "// @launch my_kernel<<<ceil_div(N, 256), 256>>>(x, y, N)", true},
      // Triton is a front end of the CUDA backend: the file is compiled ahead of time to a cubin by the
      // `triton` package in a helper process (python -m kernelsmith.triton_compile), then launched like any
      // CUDA kernel. Its plan lines are Python comments with a Triton-style launch (docs/triton.md).
      {"triton", {".py"}, "Triton", "python", {"py", "triton"}, "cuda",
       "Kernels are `@triton.jit` functions in one Python file that imports only triton, triton.language and "
       "math; at the top level only imports, @triton.jit functions and constexpr globals; no host code, no "
       "torch. Tensors arrive as pointers; pass @tune values and other tl.constexpr parameters by keyword in the "
       "launch.",
       "", "#", LaunchSyntax::subscript,
       "# @launch my_kernel[ceil_div(N, BLOCK)](x, y, N, BLOCK=BLOCK) num_warps=4 num_stages=3"},
      // KernelBench's own format: host code (PyTorch) with the candidate's kernels inside (load_inline, Triton),
      // evaluated whole by a confined runner against the task's PyTorch oracle; no launch plan.
      {"pytorch", {}, "PyTorch (a KernelBench ModelNew file)", "python", {"py", "python"}, "",
       "The answer is one Python file defining `class ModelNew(nn.Module)` with the problem's Model's constructor "
       "arguments, submodule and parameter names, and forward signature; its forward may call PyTorch and the "
       "file's own kernels (C++/CUDA through torch.utils.cpp_extension.load_inline, Triton through @triton.jit). "
       "It must not write into its inputs, return them, or change torch's numerical settings.",
       "", "#", LaunchSyntax::chevrons, "", false, true},
  };
  return languages;
}

const KernelLanguage* find_kernel_language(const std::string& name) {
  for (const auto& language : kernel_languages()) {
    if (language.name == name) return &language;
  }
  return nullptr;
}

std::string kernel_language_names() {
  std::string names;
  for (const auto& language : kernel_languages()) names += (names.empty() ? "" : ", ") + language.name;
  return names;
}

const KernelLanguage& kernel_language(const std::string& name) {
  if (const KernelLanguage* found = find_kernel_language(name)) return *found;
  throw ValidationError(fmt::format("unknown kernel language '{}'; expected one of {}", name, kernel_language_names()));
}

std::string language_of_backend(const std::string& backend) {
  for (const auto& language : kernel_languages()) {
    if (!language.host_code && language.backend == backend) return language.name;
  }
  return "";
}

bool same_plan_syntax(const std::string& a, const std::string& b) {
  if (a == b) return true;
  const KernelLanguage* first = find_kernel_language(a);
  const KernelLanguage* second = find_kernel_language(b);
  return first != nullptr && second != nullptr && first->plan_comment == second->plan_comment &&
         first->launch_syntax == second->launch_syntax;
}

std::string language_for_extension(const std::string& path) {
  std::string extension = std::filesystem::path(path).extension().string();
  std::transform(extension.begin(), extension.end(), extension.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  for (const auto& language : kernel_languages()) {
    if (std::find(language.extensions.begin(), language.extensions.end(), extension) != language.extensions.end()) {
      return language.name;
    }
  }
  return "";
}

}  // namespace kernelsmith
