#include "evaluate/task_fit.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <filesystem>
#include <limits>
#include <vector>

#include "detail/text.hpp"
#include "evaluate/plan_binding.hpp"
#include "kernelsmith/error.hpp"
#include "kernelsmith/launch_plan.hpp"

namespace kernelsmith::detail {
namespace {

/// One buffer of one size configuration, and how to name it in a message.
struct Need {
  std::string what;     ///< `tensors[2] ("C")`, `references.opencl line 3: workspace partial`
  std::string formula;  ///< `M * N = 4294967296 float32 elements`
  std::int64_t bytes = 0;
};

std::int64_t bytes_of(std::int64_t count, DType dtype) {
  std::int64_t bytes = 0;
  if (__builtin_mul_overflow(count, static_cast<std::int64_t>(dtype_size(dtype)), &bytes)) {
    return std::numeric_limits<std::int64_t>::max();
  }
  return bytes;
}

std::string elements(const std::string& formula, std::int64_t count, DType dtype) {
  const std::string counted = fmt::format("{} {} element{}", count, to_string(dtype), count == 1 ? "" : "s");
  return formula.empty() || formula == std::to_string(count) ? counted : fmt::format("{} = {}", formula, counted);
}

std::vector<Need> tensor_needs(const Task& task, const SizeConfig& config) {
  std::vector<Need> needs;
  for (std::size_t i = 0; i < task.tensors.size(); ++i) {
    const TensorSpec& tensor = task.tensors[i];
    const std::int64_t count = task.element_count(tensor, config.sizes);
    needs.push_back({fmt::format("tensors[{}] (\"{}\")", i, tensor.name),
                     elements(fmt::format("{}", fmt::join(tensor.shape, " * ")), count, tensor.dtype),
                     bytes_of(count, tensor.dtype)});
  }
  return needs;
}

// The workspaces the task's own sources declare, sized with the device's attributes.
std::vector<Need> workspace_needs(const Task& task, const SizeConfig& config, const DeviceInfo& device,
                                  const std::string& language) {
  std::vector<Need> needs;
  for (const auto* group : {&task.references, &task.seeds}) {
    const auto source = group->find(language);
    if (source == group->end()) continue;
    LaunchPlan plan;
    try {
      plan = LaunchPlan::parse(source->second.source, language);
    } catch (const PlanError&) {
      continue;  // validate() has reported it already, for a task that was validated
    }
    const Bindings bindings = plan_bindings(plan, config, device);
    const std::string where = fmt::format("{}.{}", group == &task.references ? "references" : "seeds", language);
    for (const auto& workspace : plan.workspaces) {
      std::int64_t count = 0;
      try {
        count = evaluate_expression(workspace.count, bindings);
      } catch (const PlanError&) {
        continue;  // binding the plan reports it, with the line
      }
      if (count <= 0) continue;
      needs.push_back({fmt::format("{} line {}: workspace {}", where, workspace.line, workspace.name),
                       elements(workspace.count, count, workspace.dtype), bytes_of(count, workspace.dtype)});
    }
  }
  return needs;
}

}  // namespace

std::string task_origin(const Task& task) {
  if (task.folder.empty()) return fmt::format("task \"{}\"", task.name);
  std::error_code error;
  const auto manifest = task.folder / "task.json";
  return std::filesystem::is_regular_file(manifest, error) ? manifest.string()
                                                             : fmt::format("task \"{}\" ({})", task.name, task.folder.string());
}

void check_task_fits_device(const Task& task, const DeviceInfo& device, const std::string& language) {
  const std::int64_t memory = device.global_memory_bytes;
  const std::int64_t largest = device.max_allocation_bytes > 0 ? device.max_allocation_bytes : memory;
  if (largest <= 0) return;  // the backend does not say
  const std::string device_name = fmt::format("{} device {} ({})", device.backend, device.index, device.name);
  const std::string limits = memory > 0 ? fmt::format("allows at most {} per allocation and has {} of memory",
                                                      human_bytes(largest), human_bytes(memory))
                                        : fmt::format("allows at most {} per allocation", human_bytes(largest));
  const std::string origin = task_origin(task);
  for (const auto& config : task.all_size_configs()) {
    std::vector<Need> needs = tensor_needs(task, config);
    const std::vector<Need> workspaces = workspace_needs(task, config, device, language);
    needs.insert(needs.end(), workspaces.begin(), workspaces.end());
    std::int64_t total = 0;
    for (const auto& need : needs) {
      if (need.bytes > largest) {
        throw TaskError(fmt::format("{}: {} under the sizes \"{}\" needs {} ({}); the {} {}: lower the sizes "
                                    "\"{}\" in the manifest",
                                    origin, need.what, config.name, human_bytes(need.bytes), need.formula,
                                    device_name, limits, config.name));
      }
      if (__builtin_add_overflow(total, need.bytes, &total)) total = std::numeric_limits<std::int64_t>::max();
    }
    if (memory > 0 && total > memory) {
      std::vector<std::string> parts;
      for (const auto& need : needs) parts.push_back(fmt::format("{} {}", need.what, human_bytes(need.bytes)));
      throw TaskError(fmt::format("{}: under the sizes \"{}\" the buffers need {} together ({}); the {} has {} of "
                                  "memory: lower the sizes \"{}\" in the manifest",
                                  origin, config.name, human_bytes(total), fmt::join(parts, ", "), device_name,
                                  human_bytes(memory), config.name));
    }
  }
}

}  // namespace kernelsmith::detail
