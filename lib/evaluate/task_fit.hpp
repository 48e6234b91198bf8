// Whether a task fits a device, checked when the evaluator first sees the task, before any kernel runs:
// a task too large for the device is the task's fault, found in the parent process with the manifest's
// own words rather than as a failed allocation minutes into its reference run.
#pragma once

#include <string>

#include "kernelsmith/device.hpp"
#include "kernelsmith/task.hpp"

namespace kernelsmith::detail {

/// The manifest a task came from ("tasks/relu/task.json"), or `task "relu"` for a task built in code.
std::string task_origin(const Task& task);

/// Checks every tensor, and every workspace of the task's reference and seed in `language`, at every size
/// configuration: each buffer within the device's largest allocation, all buffers of one configuration
/// within its memory. Throws TaskError naming the manifest, the size configuration and the buffer, the
/// bytes needed and the device's limits.
void check_task_fits_device(const Task& task, const DeviceInfo& device, const std::string& language);

}  // namespace kernelsmith::detail
