#include "evaluate/plan_binding.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <limits>
#include <set>

#include "detail/expression.hpp"
#include "kernelsmith/device_attributes.hpp"
#include "triton/triton_launch.hpp"

namespace kernelsmith::detail {

std::string line_prefix(int line) { return line > 0 ? fmt::format("line {}: ", line) : std::string(); }

std::int64_t evaluate_in_plan(const std::string& expression, const Bindings& bindings, int line,
                              const std::string& what) {
  try {
    return evaluate_expression(expression, bindings);
  } catch (const PlanError& e) {
    throw InvalidLaunch(fmt::format("{}{} `{}`: {}", line_prefix(line), what, expression, e.what()));
  }
}

namespace {

std::uint32_t launch_dimension(const std::string& expression, const Bindings& bindings, const LaunchDecl& launch,
                               const char* what, int axis) {
  static const char* axes = "xyz";
  const std::string label = fmt::format("{}.{} of {}", what, axes[axis], launch.kernel);
  const std::int64_t value = evaluate_in_plan(expression, bindings, launch.line, label);
  if (value < 1) {
    throw InvalidLaunch(fmt::format("{}{}.{} of {} is `{}` = {}; every dimension must be at least 1",
                                    line_prefix(launch.line), what, axes[axis], launch.kernel, expression, value));
  }
  if (value > std::numeric_limits<std::uint32_t>::max()) {
    throw InvalidLaunch(fmt::format("{}{}.{} of {} is `{}` = {}, beyond 2^32 - 1", line_prefix(launch.line), what,
                                    axes[axis], launch.kernel, expression, value));
  }
  return static_cast<std::uint32_t>(value);
}

}  // namespace

Bindings plan_bindings(const LaunchPlan& plan, const SizeConfig& config, const DeviceInfo& device) {
  Bindings bindings = device_attribute_values(device);
  for (const auto& tunable : plan.tunables) bindings[tunable.name] = tunable.value;
  for (const auto& [name, value] : config.sizes) bindings[name] = value;
  return bindings;
}

BoundPlan bind_plan(const Task& task, const LaunchPlan& plan, const SizeConfig& config, const DeviceInfo& device) {
  const Bindings bindings = plan_bindings(plan, config, device);
  BoundPlan bound;
  bound.config = config.name;
  for (std::size_t i = 0; i < task.tensors.size(); ++i) {
    const TensorSpec& tensor = task.tensors[i];
    BufferSpec buffer;
    buffer.role = tensor.role == TensorRole::input ? BufferSpec::Role::input : BufferSpec::Role::output;
    buffer.name = tensor.name;
    buffer.dtype = tensor.dtype;
    buffer.count = task.element_count(tensor, config.sizes);
    buffer.bytes = static_cast<std::size_t>(buffer.count) * dtype_size(tensor.dtype);
    buffer.tensor_index = i;
    bound.buffers.push_back(buffer);
  }
  for (const auto& workspace : plan.workspaces) {
    BufferSpec buffer;
    buffer.role = BufferSpec::Role::workspace;
    buffer.name = workspace.name;
    buffer.dtype = workspace.dtype;
    buffer.count = evaluate_in_plan(workspace.count, bindings, workspace.line,
                                    fmt::format("the size of workspace {}", workspace.name));
    const auto element = static_cast<std::int64_t>(dtype_size(workspace.dtype));
    if (buffer.count < 0) {
      throw InvalidLaunch(fmt::format("{}workspace {} has {} elements (`{}`); the count must be 0 or more",
                                      line_prefix(workspace.line), workspace.name, buffer.count, workspace.count));
    }
    const std::int64_t largest = device.max_allocation_bytes > 0 ? device.max_allocation_bytes
                                                                 : device.global_memory_bytes;
    const std::int64_t limit = largest > 0 ? largest : std::numeric_limits<std::int64_t>::max() / 2;
    if (buffer.count > limit / element) {
      throw InvalidLaunch(fmt::format("{}workspace {} needs {} elements of {} (`{}` under the sizes \"{}\"), more "
                                      "than the {} bytes {} allocates at most: use a smaller workspace",
                                      line_prefix(workspace.line), workspace.name, buffer.count,
                                      to_string(workspace.dtype), workspace.count, config.name, largest, device.name));
    }
    buffer.bytes = static_cast<std::size_t>(buffer.count * element);
    bound.buffers.push_back(buffer);
  }
  for (std::size_t i = 0; i < plan.requirements.size(); ++i) {
    const std::string& requirement = plan.requirements[i];
    const int line = i < plan.requirement_lines.size() ? plan.requirement_lines[i] : 0;
    if (evaluate_in_plan(requirement, bindings, line, "the requirement") == 0) {
      std::vector<std::string> values;
      for (const auto& name : Expression(requirement).identifiers()) {
        const auto found = bindings.find(name);
        if (found != bindings.end()) values.push_back(fmt::format("{} = {}", name, found->second));
      }
      throw InvalidLaunch(fmt::format("{}the plan's own requirement `@require {}` does not hold under the sizes "
                                      "\"{}\" on {} ({}): change the @tune values or the plan so that it holds, or "
                                      "drop the @require",
                                      line_prefix(line), requirement, config.name, device.name,
                                      fmt::join(values, ", ")));
    }
  }
  const std::int64_t max_threads = device.max_threads_per_block;
  const std::int64_t max_shared = shared_memory_limit(device);
  for (const auto& launch : plan.launches) {
    BoundLaunch out;
    out.kernel = launch.kernel;
    out.line = launch.line;
    for (int d = 0; d < 3; ++d) {
      out.grid[d] = launch_dimension(launch.grid[d], bindings, launch, "grid", d);
      out.block[d] = launch_dimension(launch.block[d], bindings, launch, "block", d);
    }
    const std::int64_t threads = std::int64_t(out.block[0]) * out.block[1] * out.block[2];
    if (max_threads > 0 && threads > max_threads) {
      throw InvalidLaunch(fmt::format("{}block of {} is ({}, {}, {}) = {} threads; {} allows at most {} "
                                      "(MAX_THREADS_PER_BLOCK)",
                                      line_prefix(launch.line), launch.kernel, out.block[0], out.block[1],
                                      out.block[2], threads, device.name, max_threads));
    }
    const std::int64_t shared = evaluate_in_plan(launch.shared_bytes, bindings, launch.line,
                                                 fmt::format("the dynamic shared memory of {}", launch.kernel));
    if (shared < 0) {
      throw InvalidLaunch(fmt::format("{}dynamic shared memory of {} is {} bytes; it must be 0 or more",
                                      line_prefix(launch.line), launch.kernel, shared));
    }
    if (max_shared > 0 && shared > max_shared) {
      throw InvalidLaunch(fmt::format("{}{} asks for {} bytes of dynamic shared memory; {} allows at most {} "
                                      "(SMEM_PER_BLOCK_OPTIN)",
                                      line_prefix(launch.line), launch.kernel, shared, device.name, max_shared));
    }
    out.shared_bytes = static_cast<std::size_t>(shared);
    for (std::size_t i = 0; i < launch.args.size(); ++i) {
      const std::string& text = launch.args[i];
      BoundArg arg;
      arg.text = text;
      const auto found = std::find_if(bound.buffers.begin(), bound.buffers.end(),
                                      [&](const BufferSpec& buffer) { return buffer.name == text; });
      if (found != bound.buffers.end()) {
        arg.is_buffer = true;
        arg.buffer = static_cast<std::size_t>(found - bound.buffers.begin());
      } else {
        arg.value = evaluate_in_plan(text, bindings, launch.line,
                                     fmt::format("argument {} of {}", i + 1, launch.kernel));
      }
      out.args.push_back(arg);
    }
    if (!launch.num_warps.empty()) bind_triton_launch(launch, bindings, bound, out);
    bound.launches.push_back(std::move(out));
  }
  return bound;
}

std::map<std::string, BoundPlan> bind_plan_to_all_sizes(const Task& task, const LaunchPlan& plan,
                                                        const DeviceInfo& device) {
  std::map<std::string, BoundPlan> bound;
  for (const auto& config : task.all_size_configs()) bound[config.name] = bind_plan(task, plan, config, device);
  return bound;
}

namespace {

bool is_integer_type_name(const std::string& type) {
  static const std::set<std::string> names = {"int",      "uint",          "long",         "ulong",
                                              "size_t",   "unsigned int",  "unsigned long", "int32_t",
                                              "int64_t",  "uint32_t",      "uint64_t",     "long long",
                                              "unsigned long long", "ptrdiff_t", "intptr_t", "uintptr_t"};
  return names.count(type) > 0;
}

std::string describe_param(const KernelParam& param) {
  if (!param.type_name.empty()) return "`" + param.type_name + "`";
  if (param.is_pointer) return "a pointer";
  if (param.size > 0) return fmt::format("a {}-byte value", param.size);
  return "a parameter";
}

}  // namespace

void check_params(BoundLaunch& launch, const std::vector<KernelParam>& all_params, const BoundPlan& plan) {
  std::vector<KernelParam> params;
  for (const auto& param : all_params) {
    if (!param.is_dynamic_shared) params.push_back(param);
  }
  const bool known = !all_params.empty();
  // OpenCL (the backend that names parameter types) hands dynamic shared memory to `__local` pointer
  // parameters: one without bytes, or bytes without one, is the plan's mistake, found here with its line.
  const std::size_t local_params = all_params.size() - params.size();
  const bool typed = std::any_of(all_params.begin(), all_params.end(),
                                 [](const KernelParam& param) { return !param.type_name.empty(); });
  if (local_params > 0 && launch.shared_bytes == 0) {
    throw InvalidLaunch(fmt::format("{}{} has a __local pointer parameter, which receives the launch's dynamic "
                                    "shared memory, but the launch gives it 0 bytes: give the bytes as the third "
                                    "<<<>>> value, e.g. <<<grid, block, 256 * 4>>>",
                                    line_prefix(launch.line), launch.kernel));
  }
  if (typed && local_params == 0 && launch.shared_bytes > 0) {
    throw InvalidLaunch(fmt::format("{}{} gets {} bytes of dynamic shared memory (the third <<<>>> value) but has "
                                    "no __local pointer parameter to receive them: declare __local arrays inside "
                                    "the kernel and pass 0, or add a `__local float* scratch` parameter",
                                    line_prefix(launch.line), launch.kernel, launch.shared_bytes));
  }
  if (known && params.size() != launch.args.size()) {
    std::vector<std::string> described;
    for (const auto& param : params) described.push_back(describe_param(param));
    throw InvalidLaunch(fmt::format("{}{} takes {} argument{} ({}); the launch passes {}", line_prefix(launch.line),
                                    launch.kernel, params.size(), params.size() == 1 ? "" : "s",
                                    fmt::join(described, ", "), launch.args.size()));
  }
  for (std::size_t i = 0; i < launch.args.size(); ++i) {
    BoundArg& arg = launch.args[i];
    const bool fits_int32 = arg.value >= std::numeric_limits<std::int32_t>::min() &&
                            arg.value <= std::numeric_limits<std::int32_t>::max();
    if (!known) {
      // The API cannot say (CUDA without parameter info): integers go as 32 bits when they fit.
      arg.kind = arg.is_buffer ? KernelArg::Kind::buffer : (fits_int32 ? KernelArg::Kind::int32 : KernelArg::Kind::int64);
      continue;
    }
    const KernelParam& param = params[i];
    // Whether a parameter can take a buffer: a type name (OpenCL) says; a size alone (CUDA's
    // cuFuncGetParamInfo) only rules out parameters narrower than a pointer.
    const bool cannot_take_buffer =
        !param.is_pointer && (!param.type_name.empty() || (param.size > 0 && param.size != sizeof(std::uint64_t)));
    if (arg.is_buffer) {
      if (cannot_take_buffer) {
        throw InvalidLaunch(fmt::format("{}argument {} of {} is the buffer {}, but parameter {} is {}",
                                        line_prefix(launch.line), i + 1, launch.kernel,
                                        plan.buffers[arg.buffer].name, i + 1, describe_param(param)));
      }
      arg.kind = KernelArg::Kind::buffer;
      continue;
    }
    if (param.is_pointer) {
      throw InvalidLaunch(fmt::format("{}argument {} of {} is the integer `{}` = {}, but parameter {} is {}: pass "
                                      "a tensor or workspace name there",
                                      line_prefix(launch.line), i + 1, launch.kernel, arg.text, arg.value, i + 1,
                                      describe_param(param)));
    }
    if (!param.type_name.empty() && !is_integer_type_name(param.type_name)) {
      throw InvalidLaunch(fmt::format("{}parameter {} of {} is {}; plan arguments are tensors, workspaces or "
                                      "integers (int, long): compute other values inside the kernel",
                                      line_prefix(launch.line), i + 1, launch.kernel, describe_param(param)));
    }
    std::size_t size = param.size;
    if (size == 0 && !param.type_name.empty()) {
      const bool wide = param.type_name.find("long") != std::string::npos ||
                        param.type_name.find("64") != std::string::npos || param.type_name.find("size_t") != std::string::npos ||
                        param.type_name.find("ptr") != std::string::npos;
      size = wide ? 8 : 4;
    }
    if (size == 8) {
      arg.kind = KernelArg::Kind::int64;
    } else if (size == 4 || size == 0) {
      if (!fits_int32) {
        throw InvalidLaunch(fmt::format("{}argument {} of {} is `{}` = {}, which does not fit the 32-bit parameter "
                                        "{}; declare it as a 64-bit integer (long long / long)",
                                        line_prefix(launch.line), i + 1, launch.kernel, arg.text, arg.value, i + 1));
      }
      arg.kind = KernelArg::Kind::int32;
    } else {
      throw InvalidLaunch(fmt::format("{}parameter {} of {} is a {}-byte value; plan integers are passed as 32 or "
                                      "64 bits (int, long long)",
                                      line_prefix(launch.line), i + 1, launch.kernel, size));
    }
  }
}
}  // namespace kernelsmith::detail
