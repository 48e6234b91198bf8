// Kernel languages: one table row per language a candidate can be written in. Everything that depends
// on the language — file extensions, the name the prompt uses, the markdown fence tag, the backend that
// runs it — is read from this table, so that a new language is one row (plus its backend).
#pragma once

#include <string>
#include <vector>

#include "kernelsmith/export.hpp"

namespace kernelsmith {

/// How a language's `@launch` lines are written (docs/candidate-format.md).
enum class LaunchSyntax {
  chevrons,   ///< C++ style: `kernel<<<grid, block[, shared_bytes]>>>(arg, ...)` (CUDA, OpenCL, MACA)
  subscript,  ///< Triton style: `kernel[grid_x, grid_y?, grid_z?](arg, ..., NAME=value) num_warps=W num_stages=S`
};

struct KernelLanguage {
  std::string name;                     ///< as in Candidate::language and task manifests: "cuda"
  std::vector<std::string> extensions;  ///< file extensions, lower case with the dot: ".cu", ".cuh"
  std::string prompt_label;             ///< how prompts and messages name it: "CUDA C++"
  std::string fence_tag;                ///< the markdown code-fence tag of its examples: "cuda"
  std::vector<std::string> fence_aliases;  ///< other fence tags an answer in this language may carry
  std::string backend;                  ///< the backend that compiles and runs it: "cuda"
  std::string kernel_rule;              ///< the prompt's one-line rule for writing its kernels
  /// Source put before a candidate to build it with its block (work-group) indices reversed, for the
  /// evaluator's schedule check; "" where the language has none.
  std::string reversed_schedule_prelude;
  /// The line-comment marker that starts a plan directive: "//" for the C family, "#" for Python.
  std::string plan_comment = "//";
  LaunchSyntax launch_syntax = LaunchSyntax::chevrons;
  /// A complete `@launch` line, for messages that show what to write.
  std::string launch_example;
  /// Kernels are found by their plain (`extern "C"`) names only: the compiler has no way to name C++ or
  /// template kernels (NVRTC's lowered names), so a plan naming one (`gemm<128>`) is an invalid launch.
  bool plain_kernel_names_only = false;
  /// A file of host code with kernels inside, evaluated whole in a confined process instead of through a
  /// launch plan: KernelBench's ModelNew format ("pytorch", docs/kernelbench-modelnew.md). It has no plan,
  /// runs on any backend whose tasks have a PyTorch oracle (`backend` is empty), and is never a backend's
  /// own language.
  bool host_code = false;
};

/// The host-code language of KernelBench's ModelNew files (docs/kernelbench-modelnew.md).
inline const std::string kModelNewLanguage = "pytorch";

/// Every kernel language, in a stable order (CUDA, OpenCL, MACA, Triton, PyTorch).
KERNELSMITH_API const std::vector<KernelLanguage>& kernel_languages();

/// The row for `name`, or nullptr when there is none.
KERNELSMITH_API const KernelLanguage* find_kernel_language(const std::string& name);

/// The row for `name`. Throws ValidationError naming the known languages.
KERNELSMITH_API const KernelLanguage& kernel_language(const std::string& name);

/// "cuda, opencl, maca": the known names, for messages.
KERNELSMITH_API std::string kernel_language_names();

/// The native kernel language of the backend `backend` ("cuda" → "cuda", the first row that runs on it;
/// Triton also runs on "cuda", as a front end), or "" when no language runs on it.
KERNELSMITH_API std::string language_of_backend(const std::string& backend);

/// True when candidates in languages `a` and `b` write their plans alike (the same comment marker and
/// launch syntax, as the C family does): code in one can stand in for the other in a prompt or an answer.
/// Unknown names are alike only to themselves.
KERNELSMITH_API bool same_plan_syntax(const std::string& a, const std::string& b);

/// The language a file's extension implies (.cu/.cuh → cuda, .cl → opencl, .maca → maca, .py → triton),
/// or "". A .py file that defines `class ModelNew` is "pytorch": Candidate::from_file tells them apart.
KERNELSMITH_API std::string language_for_extension(const std::string& path);

}  // namespace kernelsmith
