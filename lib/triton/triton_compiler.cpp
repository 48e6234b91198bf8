#include "triton/triton_compiler.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <mutex>

#include "detail/base64.hpp"
#include "detail/json_util.hpp"
#include "detail/python_helper.hpp"
#include "kernelsmith/error.hpp"
#include "kernelsmith/python_helpers.hpp"

namespace kernelsmith {
namespace detail {
namespace {

using Clock = std::chrono::steady_clock;

const PythonHelperKind& triton_helper() {
  static const PythonHelperKind kind{"triton_compile.py", "KERNELSMITH_TRITON_HELPER", "the Triton compile helper",
                                     "compiling"};
  return kind;
}

/// One request through a pooled helper.
Json ask_helper(const Json& request, double timeout_seconds) {
  return ask_python_helper(triton_helper(), request, timeout_seconds);
}

}  // namespace

TritonKernelResult compile_triton_kernel(const std::string& source, const TritonKernelSpec& spec,
                                         const std::string& target, double timeout_seconds,
                                         bool reverse_program_ids) {
  Json constexprs = Json::object();
  for (const auto& [name, value] : spec.constexprs) constexprs[name] = value;
  const Json request = {{"source", source},       {"kernel", spec.kernel},         {"signature", spec.signature},
                        {"constexprs", constexprs}, {"num_warps", spec.num_warps}, {"num_stages", spec.num_stages},
                        {"target", target},       {"aligned", spec.aligned},       {"filename", "candidate.py"},
                        {"reverse_program_ids", reverse_program_ids}};
  const Json reply = ask_helper(request, timeout_seconds);
  TritonKernelResult result;
  result.ok = json_value_or<bool>(reply, "ok", false);
  if (!result.ok) {
    result.stage = json_value_or<std::string>(reply, "stage", "compile");
    result.line = json_value_or<int>(reply, "line", 0);
    result.message = json_value_or<std::string>(reply, "message", "the Triton compiler rejected the kernel");
    if (result.stage == "triton") throw BackendUnavailableError(result.message);
    return result;
  }
  KernelBinary& binary = result.binary;
  binary.name = spec.name;
  binary.symbol = reply.at("name").get<std::string>();
  binary.binary = base64_decode(reply.at("cubin").get<std::string>());
  binary.block_threads = 32 * reply.at("num_warps").get<int>();
  binary.num_ctas = json_value_or<int>(reply, "num_ctas", 1);
  binary.shared_bytes = json_value_or<std::size_t>(reply, "shared", 0);
  binary.scratch_pointers = json_value_or<int>(reply, "scratch_pointers", 2);
  binary.global_scratch_bytes = json_value_or<std::size_t>(reply, "global_scratch_size", 0);
  binary.global_scratch_align = std::max<std::size_t>(1, json_value_or<std::size_t>(reply, "global_scratch_align", 1));
  binary.profile_scratch_bytes = json_value_or<std::size_t>(reply, "profile_scratch_size", 0);
  binary.profile_scratch_align = std::max<std::size_t>(1, json_value_or<std::size_t>(reply, "profile_scratch_align", 1));
  binary.param_count = json_value_or<int>(reply, "param_count", -1);
  result.resources.name = spec.name;
  result.resources.registers = json_value_or<int>(reply, "registers", -1);
  const std::int64_t spills = json_value_or<std::int64_t>(reply, "spill_store_bytes", -1);
  result.resources.spill_store_bytes = spills;
  result.resources.spill_load_bytes = json_value_or<std::int64_t>(reply, "spill_load_bytes", -1);
  result.ptxas_log = json_value_or<std::string>(reply, "ptxas_log", "");
  return result;
}

CompiledProgram compile_triton_program(const std::string& source, const std::vector<TritonKernelSpec>& specs,
                                       const std::string& target, double timeout_seconds, bool reverse_program_ids) {
  const auto start = Clock::now();
  CompiledProgram program;
  program.language = "triton";
  program.target = target;
  program.report.target = target;
  program.report.ok = true;
  std::string log;
  for (const auto& spec : specs) {
    // The timeout covers the whole program, as for one NVRTC compile.
    const double left = timeout_seconds - std::chrono::duration<double>(Clock::now() - start).count();
    if (left <= 0.0) {
      throw Error(fmt::format("the Triton compiler did not finish the candidate's {} kernels within {:g} s",
                              specs.size(), timeout_seconds));
    }
    TritonKernelResult result = compile_triton_kernel(source, spec, target, left, reverse_program_ids);
    if (!result.ok) {
      program.report.ok = false;
      // The helper's message names the candidate's line where it knows it; the plan line says which
      // launch asked for this specialization.
      program.report.log = fmt::format("{}\n(compiling {} for the launch on line {}, stage {})", result.message,
                                       spec.name, spec.line, result.stage);
      program.kernel_binaries.clear();
      break;
    }
    if (!result.ptxas_log.empty()) log += fmt::format("{}:\n{}\n", spec.name, result.ptxas_log);
    program.report.kernels.push_back(result.resources);
    program.kernel_binaries.push_back(std::move(result.binary));
  }
  if (program.report.ok) program.report.log = log;
  program.report.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  return program;
}

std::string triton_version_for_cache() {
  static std::once_flag once;
  static std::string version;
  std::call_once(once, [] { version = triton_status().version; });
  return version;
}

}  // namespace detail

TritonStatus triton_status() {
  TritonStatus status;
  std::string looked;
  status.helper = detail::find_helper_script(detail::triton_helper(), &looked);
  status.python = detail::helper_python_text();
  if (status.helper.empty()) {
    status.reason = fmt::format("the Triton compile helper triton_compile.py was not found (looked in {})", looked);
    return status;
  }
  try {
    const detail::Json reply = detail::ask_helper({{"op", "status"}}, 120.0);
    status.available = detail::json_value_or<bool>(reply, "available", false);
    status.version = detail::json_value_or<std::string>(reply, "version", "");
    status.reason = detail::json_value_or<std::string>(reply, "reason", "");
  } catch (const std::exception& e) {
    status.reason = e.what();
  }
  return status;
}

void set_triton_python(const std::string& python) { set_helper_python(python); }

}  // namespace kernelsmith
