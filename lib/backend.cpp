#include "kernelsmith/backend.hpp"

#include <fmt/format.h>

#include "backend_registry.hpp"
#include "evaluate/compile_jobs.hpp"
#include "kernelsmith/error.hpp"
#include "kernelsmith/launch_plan.hpp"

namespace kernelsmith {

std::unique_ptr<Backend> create_backend(const std::string& name, int device_index) {
#if KERNELSMITH_ENABLE_CUDA
  if (name == "cuda") return detail::create_cuda_backend(device_index);
#endif
#if KERNELSMITH_ENABLE_OPENCL
  if (name == "opencl") return detail::create_opencl_backend(device_index);
#endif
  if (name == "cuda" || name == "opencl") {
    throw BackendUnavailableError(fmt::format(
        "backend '{}' was disabled when kernelsmith was built (KERNELSMITH_ENABLE_{}=OFF)", name,
        name == "cuda" ? "CUDA" : "OPENCL"));
  }
  if (name == "maca") return detail::create_maca_backend(device_index);
  throw ValidationError(fmt::format("unknown backend '{}': expected cuda, opencl or maca", name));
}

CompiledProgram compile_offline(const std::string& backend, const std::string& source,
                                const CompileOptions& options) {
#if KERNELSMITH_ENABLE_CUDA
  if (backend == "cuda") return detail::compile_cuda_offline(source, options);
#endif
  if (backend == "maca") return detail::compile_maca_offline(source, options);
  throw NotSupportedError(fmt::format(
      "offline compilation is supported for the cuda (NVRTC) and maca (MCRTC) backends, not '{}': OpenCL programs "
      "are built for a device when they are loaded",
      backend));
}

std::vector<OfflineProgram> compile_candidate_offline(const Task& task, const Candidate& candidate,
                                                      const std::string& architecture, double timeout_seconds) {
  if (candidate.language != "cuda") {
    throw NotSupportedError(fmt::format(
        "compile_candidate_offline compiles CUDA candidates (NVRTC); this one is written in {}: Triton candidates "
        "are compiled by the triton package (kernelsmith.triton_kernel_specs and kernelsmith.triton_compile)",
        candidate.language.empty() ? std::string("no language") : candidate.language));
  }
#if KERNELSMITH_ENABLE_CUDA
  const LaunchPlan plan = LaunchPlan::parse(candidate.source, candidate.language);
  std::vector<OfflineProgram> programs;
  const std::string target = detail::cuda_device_compile_target(architecture);
  for (const auto& job : detail::compile_jobs(task, plan, target, timeout_seconds)) {
    programs.push_back({job.config, compile_offline("cuda", candidate.source, job.options).report});
  }
  return programs;
#else
  (void)task;
  (void)architecture;
  (void)timeout_seconds;
  throw BackendUnavailableError(
      "compile_candidate_offline needs the cuda backend, which was disabled when kernelsmith was built "
      "(KERNELSMITH_ENABLE_CUDA=OFF)");
#endif
}

}  // namespace kernelsmith
