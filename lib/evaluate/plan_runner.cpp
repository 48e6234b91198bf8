#include "evaluate/plan_runner.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <chrono>
#include <set>

#include "evaluate/build_failure.hpp"
#include "evaluate/host_tensors.hpp"
#include "kernelsmith/device_attributes.hpp"

namespace kernelsmith::detail {

using Clock = std::chrono::steady_clock;

LoadedPlan load_plan(Backend& backend, const Task& task, const LaunchPlan& plan, const std::string& source,
                     const ProgramSet& given, double compile_timeout) {
  LoadedPlan loaded;
  // Bind first: a plan that does not fit is reported before anything is compiled or loaded.
  for (const auto& config : task.all_size_configs()) loaded.bound[config.name] = bind_plan(task, plan, config, backend.device());

  ProgramSet programs = given;
  if (programs.empty()) {
    for (const auto& job : compile_jobs(task, plan, "", compile_timeout)) {
      programs[job.config] = backend.compile(source, job.options);
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
  for (const auto& [config, program] : programs) {
    const auto start = Clock::now();
    try {
      loaded.modules.push_back(load_module(backend, program));
    } catch (const BuildFailure& failure) {
      const std::string label = sizes_label(config);
      throw CompileRejected(failure.what(), label + failure.log());
    }
    loaded.report.seconds += std::chrono::duration<double>(Clock::now() - start).count();
    module_of_config[config] = loaded.modules.back().get();
  }

  const std::int64_t shared_limit = shared_memory_limit(backend.device());
  std::map<std::pair<std::uint64_t, std::string>, std::uint64_t> kernels;
  std::set<std::string> described;
  for (auto& [config, bound] : loaded.bound) {
    const auto module_it = module_of_config.count(config) ? module_of_config.find(config) : module_of_config.find("");
    if (module_it == module_of_config.end()) {
      throw Error(fmt::format("no program was compiled for the sizes '{}'", config));
    }
    bound.modules = {module_it->second};
    for (auto& launch : bound.launches) {
      const auto key = std::make_pair(module_it->second, launch.kernel);
      auto found = kernels.find(key);
      if (found == kernels.end()) {
        std::uint64_t handle = 0;
        try {
          handle = backend.kernel(module_it->second, launch.kernel);
        } catch (const NotFoundError& e) {
          throw InvalidLaunch(fmt::format("{}the plan launches {}, but {}", line_prefix(launch.line), launch.kernel,
                                          e.what()));
        }
        found = kernels.emplace(key, handle).first;
      }
      launch.handle = found->second;
      check_params(launch, backend.kernel_params(launch.handle), bound);
      const KernelResources resources = backend.kernel_resources(launch.handle);
      const std::int64_t limit = shared_limit;
      if (limit > 0 && resources.shared_bytes > 0 &&
          resources.shared_bytes + static_cast<std::int64_t>(launch.shared_bytes) > limit) {
        throw InvalidLaunch(fmt::format("{}{} uses {} bytes of static and {} bytes of dynamic shared memory; the "
                                        "device allows {} per block",
                                        line_prefix(launch.line), launch.kernel, resources.shared_bytes,
                                        launch.shared_bytes, limit));
      }
      if (described.insert(launch.kernel).second) {
        // The toolchain's report (registers, spills) completed by what the loaded kernel says.
        auto entry = std::find_if(loaded.report.kernels.begin(), loaded.report.kernels.end(),
                                  [&](const KernelResources& k) { return k.name == launch.kernel; });
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

PlanRunner::PlanRunner(Backend& backend, const Task& task, const std::string& source)
    : backend_(backend), loaded_(std::make_unique<Loaded>()) {
  const LaunchPlan plan = LaunchPlan::parse(source);
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
      if (buffer.role == BufferSpec::Role::input) continue;
    }
    backend_.fill(handles.back(), kPoisonFirst, buffer.bytes);
  }
  run_plan(backend_, plan, handles);
  backend_.synchronize();
}
}  // namespace kernelsmith::detail
