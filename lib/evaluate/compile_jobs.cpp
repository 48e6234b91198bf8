#include "evaluate/compile_jobs.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "detail/text.hpp"
#include "kernelsmith/language.hpp"

namespace kernelsmith::detail {

std::vector<std::string> unique_kernel_names(const LaunchPlan& plan) {
  std::vector<std::string> names;
  for (const auto& launch : plan.launches) {
    if (std::find(names.begin(), names.end(), launch.kernel) == names.end()) names.push_back(launch.kernel);
  }
  return names;
}

std::vector<CompileJob> compile_jobs(const Task& task, const LaunchPlan& plan, const std::string& target,
                                     double timeout_seconds) {
  CompileOptions base;
  base.target = target;
  base.timeout_seconds = timeout_seconds;
  base.kernels = unique_kernel_names(plan);
  for (const auto& tunable : plan.tunables) base.defines.emplace_back(tunable.name, std::to_string(tunable.value));
  if (!plan.specialize) return {{"", base}};
  std::vector<CompileJob> jobs;
  for (const auto& config : task.all_size_configs()) {
    CompileJob job{config.name, base};
    for (const auto& [name, value] : config.sizes) job.options.defines.emplace_back("KS_" + name, std::to_string(value));
    jobs.push_back(std::move(job));
  }
  return jobs;
}

std::string plan_error_message(const PlanError& error) {
  const std::string what = error.what();
  // The parser's messages usually name the line already.
  if (error.line() <= 0 || what.rfind("line ", 0) == 0) return what;
  return fmt::format("line {}: {}", error.line(), what);
}

std::string sizes_label(const std::string& config) {
  return config.empty() ? std::string() : fmt::format("[sizes {}] ", config);
}

Precheck precheck(const Candidate& candidate, const std::string& backend_name, const std::string& backend_language) {
  Precheck result;
  // The backend's own language, or a front end that compiles for it (Triton on CUDA).
  const KernelLanguage* language = find_kernel_language(candidate.language);
  const bool host_code = language != nullptr && language->host_code;
  if (candidate.language != backend_language && !host_code && (language == nullptr || language->backend != backend_name)) {
    std::vector<std::string> runs;
    for (const auto& row : kernel_languages()) {
      if (row.backend == backend_name) runs.push_back(row.name);
    }
    result.failure = Status::compile_error;
    result.message = fmt::format("the {} backend runs {} kernels; this candidate is written in {}{}", backend_name,
                                 fmt::join(runs, " and "),
                                 candidate.language.empty() ? "no known language" : candidate.language,
                                 language != nullptr ? fmt::format(", which runs on the {} backend", language->backend)
                                                     : std::string());
    return result;
  }
  if (const auto binary = binary_content(candidate.source)) {
    result.failure = Status::compile_error;
    result.message = fmt::format("the candidate's source is not a text file ({}): give the kernel's source code",
                                 *binary);
    return result;
  }
  if (host_code) {
    result.host_code = true;
    return result;
  }
  try {
    result.plan = LaunchPlan::parse(candidate.source, candidate.language);
  } catch (const PlanError& e) {
    result.failure = Status::invalid_launch;
    result.message = plan_error_message(e);
    return result;
  }
  if (language != nullptr && language->plain_kernel_names_only) {
    for (const auto& launch : result.plan.launches) {
      if (launch.kernel.find_first_of("<:") == std::string::npos) continue;
      result.failure = Status::invalid_launch;
      result.message = fmt::format(
          "line {}: kernel '{}' is a C++ or template name, but {} kernels are found by their plain names only (its "
          "compiler has no lowered-name API): declare the kernel extern \"C\" __global__ and launch it by that name",
          launch.line, launch.kernel, language->prompt_label);
      return result;
    }
  }
  return result;
}

}  // namespace kernelsmith::detail
