#include "evaluate/plan_runner.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <chrono>
#include <set>

#include "evaluate/build_failure.hpp"
#include "evaluate/host_tensors.hpp"
#include "kernelsmith/device_attributes.hpp"
#include "kernelsmith/language.hpp"
#include "triton/triton_compiler.hpp"
#include "triton/triton_launch.hpp"

namespace kernelsmith::detail {

using Clock = std::chrono::steady_clock;

bool can_reverse_schedule(const LaunchPlan& plan, const std::string& language) {
  return launches_triton_kernels(plan) || !kernel_language(language).reversed_schedule_prelude.empty();
}

LoadedPlan load_plan(Backend& backend, const Task& task, const LaunchPlan& plan, const std::string& source,
                     const ProgramSet& given, double compile_timeout, bool reversed_schedule) {
  LoadedPlan loaded;
  // Bind first: a plan that does not fit is reported before anything is compiled or loaded.
  loaded.bound = bind_plan_to_all_sizes(task, plan, backend.device());

  ProgramSet programs = given;
  if (programs.empty() && launches_triton_kernels(plan)) {
    // Triton is compiled by its front end, for this device's architecture, one binary per specialization.
    programs[""] = compile_triton_program(source, triton_kernel_specs(loaded.bound), backend.device().architecture,
                                          compile_timeout, reversed_schedule);
  } else if (programs.empty()) {
    const std::string built =
        reversed_schedule ? kernel_language(backend.language()).reversed_schedule_prelude + source : source;
    for (const auto& job : compile_jobs(task, plan, "", compile_timeout)) {
      programs[job.config] = backend.compile(built, job.options);
    }
  }
  bool first = true;
  for (const auto& [config, program] : programs) {
    const std::string label = sizes_label(config);
    if (first) {
      loaded.report = program.report;
      first = false;
    } else {
      loaded.report.seconds += program.report.seconds;
      loaded.report.cached = loaded.report.cached && program.report.cached;
    }
    if (!program.report.ok) {
      throw CompileRejected(fmt::format("{}the compiler rejected the source", label), label + program.report.log);
    }
  }
  std::map<std::string, std::uint64_t> module_of_config;
  // Kernels compiled one binary each (Triton): the module and the binary of each, by binary name.
  std::map<std::string, std::map<std::string, std::pair<std::uint64_t, const KernelBinary*>>> binaries_of_config;
  for (const auto& [config, program] : programs) {
    const auto start = Clock::now();
    try {
      if (program.kernel_binaries.empty()) {
        loaded.modules.push_back(load_module(backend, program));
        module_of_config[config] = loaded.modules.back().get();
      }
      for (const auto& binary : program.kernel_binaries) {
        // Each binary is a native program of the backend (a cubin), whatever front end produced it.
        CompiledProgram part;
        part.language = backend.language();
        part.target = program.target;
        part.report = program.report;
        part.binary = binary.binary;
        part.symbols = {{binary.name, binary.symbol}};
        loaded.modules.push_back(load_module(backend, part));
        binaries_of_config[config][binary.name] = {loaded.modules.back().get(), &binary};
      }
    } catch (const BuildFailure& failure) {
      const std::string label = sizes_label(config);
      throw CompileRejected(failure.what(), label + failure.log());
    }
    loaded.report.seconds += std::chrono::duration<double>(Clock::now() - start).count();
  }

  const std::int64_t shared_limit = shared_memory_limit(backend.device());
  std::map<std::pair<std::uint64_t, std::string>, std::uint64_t> kernels;
  std::set<std::string> described;
  for (auto& [config, bound] : loaded.bound) {
    const auto of_config = [&config = config](auto& by_config) {
      return by_config.count(config) ? by_config.find(config) : by_config.find("");
    };
    const auto module_it = of_config(module_of_config);
    const auto binaries_it = of_config(binaries_of_config);
    if (module_it == module_of_config.end() && binaries_it == binaries_of_config.end()) {
      throw Error(fmt::format("no program was compiled for the sizes '{}'", config));
    }
    bound.modules.clear();
    if (module_it != module_of_config.end()) bound.modules.push_back(module_it->second);
    if (binaries_it != binaries_of_config.end()) {
      for (const auto& [name, entry] : binaries_it->second) bound.modules.push_back(entry.first);
    }
    for (auto& launch : bound.launches) {
      std::uint64_t module = module_it != module_of_config.end() ? module_it->second : 0;
      const KernelBinary* binary = nullptr;
      if (!launch.binary.empty()) {
        const auto entry = binaries_it == binaries_of_config.end() ? nullptr : &binaries_it->second;
        if (entry == nullptr || entry->count(launch.binary) == 0) {
          throw Error(fmt::format("{}no binary was compiled for {} under the sizes '{}': compile the candidate's "
                                  "kernels for this plan",
                                  line_prefix(launch.line), launch.binary, config));
        }
        module = entry->at(launch.binary).first;
        binary = entry->at(launch.binary).second;
      }
      const std::string& lookup = binary != nullptr ? launch.binary : launch.kernel;
      const auto key = std::make_pair(module, lookup);
      auto found = kernels.find(key);
      if (found == kernels.end()) {
        std::uint64_t handle = 0;
        try {
          handle = backend.kernel(module, lookup);
        } catch (const NotFoundError& e) {
          throw InvalidLaunch(fmt::format("{}the plan launches {}, but {}", line_prefix(launch.line), launch.kernel,
                                          e.what()));
        }
        found = kernels.emplace(key, handle).first;
      }
      launch.handle = found->second;
      const std::vector<KernelParam> params = backend.kernel_params(launch.handle);
      if (binary != nullptr) apply_kernel_binary(launch, bound, *binary, params, backend.device());
      check_params(launch, params, bound);
      const KernelResources resources = backend.kernel_resources(launch.handle);
      const std::int64_t limit = shared_limit;
      if (limit > 0 && resources.shared_bytes > 0 &&
          resources.shared_bytes + static_cast<std::int64_t>(launch.shared_bytes) > limit) {
        throw InvalidLaunch(fmt::format("{}{} uses {} bytes of static and {} bytes of dynamic shared memory; the "
                                        "device allows {} per block",
                                        line_prefix(launch.line), launch.kernel, resources.shared_bytes,
                                        launch.shared_bytes, limit));
      }
      if (described.insert(lookup).second) {
        // The toolchain's report (registers, spills) completed by what the loaded kernel says.
        auto entry = std::find_if(loaded.report.kernels.begin(), loaded.report.kernels.end(),
                                  [&](const KernelResources& k) { return k.name == lookup; });
        if (entry == loaded.report.kernels.end()) {
          loaded.report.kernels.push_back(resources);
        } else {
          if (entry->registers < 0) entry->registers = resources.registers;
          if (entry->shared_bytes < 0) entry->shared_bytes = resources.shared_bytes;
          if (entry->local_bytes < 0) entry->local_bytes = resources.local_bytes;
          if (entry->stack_bytes < 0) entry->stack_bytes = resources.stack_bytes;
          if (entry->spill_load_bytes < 0) entry->spill_load_bytes = resources.spill_load_bytes;
          if (entry->spill_store_bytes < 0) entry->spill_store_bytes = resources.spill_store_bytes;
        }
      }
    }
  }
  return loaded;
}

struct PlanRunner::Loaded {
  BufferPool pool{0};  ///< no reuse: runs are one-off
  std::vector<DeviceModule> modules;
  std::map<std::string, BoundPlan> bound;
  CompileReport report;
};

PlanRunner::PlanRunner(Backend& backend, const Task& task, const std::string& source, const std::string& language)
    : backend_(backend), loaded_(std::make_unique<Loaded>()) {
  const LaunchPlan plan = LaunchPlan::parse(source, language.empty() ? backend.language() : language);
  try {
    LoadedPlan loaded = load_plan(backend_, task, plan, source, {}, 60.0);
    loaded_->modules = std::move(loaded.modules);
    loaded_->bound = std::move(loaded.bound);
    loaded_->report = std::move(loaded.report);
  } catch (const CompileRejected& e) {
    throw Error(fmt::format("task {}: {} on {}:\n{}", task.name, e.what(), backend_.device().name, e.log));
  } catch (const InvalidLaunch& e) {
    throw Error(fmt::format("task {}: the launch plan does not fit on {}: {}", task.name, backend_.device().name,
                            e.what()));
  }
}

PlanRunner::~PlanRunner() = default;

const CompileReport& PlanRunner::compile_report() const { return loaded_->report; }

namespace {

const BoundPlan& bound_at(const std::map<std::string, BoundPlan>& bound, const std::string& config) {
  const auto found = bound.find(config);
  if (found != bound.end()) return found->second;
  std::vector<std::string> names;
  for (const auto& [name, plan] : bound) names.push_back(name);
  throw NotFoundError(fmt::format("the task has no size configuration named '{}'; its configurations are: {}", config,
                                  fmt::join(names, ", ")));
}

}  // namespace

std::vector<Bytes> PlanRunner::run(const std::string& config, const std::vector<Bytes>& inputs) {
  const BoundPlan& plan = bound_at(loaded_->bound, config);
  std::size_t input_count = 0;
  for (const auto& buffer : plan.buffers) {
    if (buffer.role != BufferSpec::Role::input) continue;
    if (input_count < inputs.size() && inputs[input_count].size() != buffer.bytes) {
      throw ValidationError(fmt::format("input {} holds {} bytes; the sizes '{}' need {}", buffer.name,
                                        inputs[input_count].size(), config, buffer.bytes));
    }
    ++input_count;
  }
  if (input_count != inputs.size()) {
    throw ValidationError(fmt::format("got {} input buffers; the task has {} inputs", inputs.size(), input_count));
  }
  DeviceBuffers buffers(backend_, loaded_->pool, plan.buffers);
  std::size_t input = 0;
  for (std::size_t i = 0; i < plan.buffers.size(); ++i) {
    const BufferSpec& buffer = plan.buffers[i];
    if (buffer.role == BufferSpec::Role::input) {
      backend_.write(buffers[i], inputs[input++].data(), buffer.bytes);
    } else {
      backend_.fill(buffers[i], kPoisonFirst, buffer.bytes);
    }
  }
  run_plan(backend_, plan, buffers.handles());
  backend_.synchronize();
  std::vector<Bytes> outputs;
  for (std::size_t i = 0; i < plan.buffers.size(); ++i) {
    const BufferSpec& buffer = plan.buffers[i];
    if (buffer.role != BufferSpec::Role::output) continue;
    Bytes out(buffer.bytes);
    backend_.read(buffers[i], out.data(), buffer.bytes);
    outputs.push_back(std::move(out));
  }
  return outputs;
}

void PlanRunner::run_with_buffers(const std::string& config, const std::vector<std::uint64_t>& tensor_buffers) {
  const BoundPlan& plan = bound_at(loaded_->bound, config);
  // Workspaces are this runner's, freed on return; tensors are the caller's (in task order).
  std::vector<BufferSpec> workspace_specs;
  for (const BufferSpec& buffer : plan.buffers) {
    if (buffer.role == BufferSpec::Role::workspace && buffer.bytes > 0) workspace_specs.push_back(buffer);
  }
  DeviceBuffers workspaces(backend_, loaded_->pool, workspace_specs);
  // Triton kernels are compiled assuming 16-byte aligned pointers (triton_kernel_specs); the caller's
  // tensors are the one place that is not guaranteed.
  const bool compiled_aligned = std::any_of(plan.launches.begin(), plan.launches.end(),
                                            [](const BoundLaunch& launch) { return !launch.binary.empty(); });
  std::vector<std::uint64_t> handles;
  std::size_t next_workspace = 0;
  for (const BufferSpec& buffer : plan.buffers) {
    if (buffer.role == BufferSpec::Role::workspace) {
      if (buffer.bytes == 0) {
        handles.push_back(0);
        continue;
      }
      handles.push_back(workspaces[next_workspace++]);
    } else {
      if (buffer.tensor_index >= tensor_buffers.size()) {
        throw ValidationError(fmt::format("got {} tensor buffers; the task has {} tensors", tensor_buffers.size(),
                                          buffer.tensor_index + 1));
      }
      handles.push_back(tensor_buffers[buffer.tensor_index]);
      if (compiled_aligned && handles.back() % 16 != 0) {
        throw ValidationError(fmt::format("tensor {} starts at 0x{:x}, which is not 16-byte aligned; Triton kernels "
                                          "need aligned tensors: pass a contiguous tensor that starts its storage",
                                          buffer.name, handles.back()));
      }
      if (buffer.role == BufferSpec::Role::input) continue;
    }
    backend_.fill(handles.back(), kPoisonFirst, buffer.bytes);
  }
  run_plan(backend_, plan, handles);
  backend_.synchronize();
}
}  // namespace kernelsmith::detail
