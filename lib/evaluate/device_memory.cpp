#include "evaluate/device_memory.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "evaluate/host_tensors.hpp"

namespace kernelsmith::detail {

// `buffers` holds a device buffer per entry of the plan's buffers, in the same order.
void launch_one(Backend& backend, const BoundLaunch& launch, const std::vector<std::uint64_t>& buffers) {
  std::vector<KernelArg> args;
  args.reserve(launch.args.size());
  for (const auto& arg : launch.args) {
    KernelArg out;
    out.kind = arg.is_buffer ? KernelArg::Kind::buffer : arg.kind;
    if (arg.is_tensor_map) {
      // Encoded by the backend over this run's buffer: the map always holds the address launched on.
      out.kind = KernelArg::Kind::tensor_map;
      out.buffer = buffers[arg.buffer];
      out.tensor_map = &arg.tensor_map;
    } else if (arg.is_buffer) {
      out.buffer = buffers[arg.buffer];
    } else {
      out.value = arg.value;
    }
    args.push_back(out);
  }
  try {
    if (launch.clustered) {
      backend.launch_clustered(launch.handle, launch.grid, launch.block, launch.cluster, launch.shared_bytes, args);
    } else {
      backend.launch(launch.handle, launch.grid, launch.block, launch.shared_bytes, args);
    }
  } catch (const LaunchError& e) {
    // The plan's line, so that the message points at the launch the user wrote.
    throw LaunchError(fmt::format("{}the device refused the launch of {}: {}", line_prefix(launch.line),
                                  launch.kernel, e.what()));
  }
}

void poison_outputs_and_workspaces(Backend& backend, const BoundPlan& plan, const DeviceBuffers& buffers,
                                   std::uint8_t byte) {
  for (std::size_t i = 0; i < plan.buffers.size(); ++i) {
    if (plan.buffers[i].role != BufferSpec::Role::input) backend.fill(buffers[i], byte, plan.buffers[i].bytes);
  }
}

void scrub_outputs_and_workspaces(Backend& backend, const BoundPlan& plan, const DeviceBuffers& buffers) {
  constexpr std::size_t kStagingFlushBytes = std::size_t(64) << 20;
  poison_outputs_and_workspaces(backend, plan, buffers, kPoisonFirst);
  for (std::size_t i = 0; i < plan.buffers.size(); ++i) {
    if (plan.buffers[i].role != BufferSpec::Role::output) continue;
    Bytes scratch(std::min(plan.buffers[i].bytes, kStagingFlushBytes));
    backend.read(buffers[i], scratch.data(), scratch.size());
  }
  backend.synchronize();
}

void reset_plan_state(Backend& backend, const BoundPlan& plan) {
  for (const std::uint64_t module : plan.modules) backend.reset_module_state(module);
}

void run_plan(Backend& backend, const BoundPlan& plan, const std::vector<std::uint64_t>& buffers) {
  reset_plan_state(backend, plan);
  for (const auto& launch : plan.launches) launch_one(backend, launch, buffers);
}

// Device memory the buffer pool may keep between evaluations: a quarter of the device's.
std::size_t buffer_pool_bytes(const DeviceInfo& device) {
  constexpr std::size_t kFallback = std::size_t(1) << 30;
  return device.global_memory_bytes > 0 ? static_cast<std::size_t>(device.global_memory_bytes) / 4 : kFallback;
}
}  // namespace kernelsmith::detail
