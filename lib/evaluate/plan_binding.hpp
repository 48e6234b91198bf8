// Binding a launch plan to one size configuration of a task and to the device: buffer sizes, launch
// dimensions and argument values, each checked against the device's limits; then each launch's
// arguments checked against the loaded kernel's parameters. A mistake is an InvalidLaunch naming the
// plan's line, which the harness reports as `invalid_launch`.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "kernelsmith/backend.hpp"
#include "kernelsmith/device.hpp"
#include "kernelsmith/dtype.hpp"
#include "kernelsmith/error.hpp"
#include "kernelsmith/launch_plan.hpp"
#include "kernelsmith/task.hpp"

namespace kernelsmith::detail {

/// A plan that does not fit the task, the kernels or the device: becomes `invalid_launch`.
class InvalidLaunch : public Error {
 public:
  using Error::Error;
};

/// The size of a tensor map parameter (CUDA's CUtensorMap: 128 bytes, 64-byte aligned, passed by value).
constexpr std::size_t kTensorMapBytes = 128;

/// "line N: " for a plan line, "" for line 0 (a mistake not tied to one line).
std::string line_prefix(int line);

struct BufferSpec {
  enum class Role { input, output, workspace } role = Role::input;
  std::string name;
  DType dtype = DType::float32;
  std::int64_t count = 0;
  std::size_t bytes = 0;
  std::size_t tensor_index = 0;  ///< index in task.tensors (inputs and outputs)
};

struct BoundArg {
  bool is_buffer = false;
  /// A tensor map over the buffer `buffer` (@tensor_map); `tensor_map` holds its bound layout.
  bool is_tensor_map = false;
  std::size_t buffer = 0;  ///< index into BoundPlan::buffers
  TensorMapSpec tensor_map;
  std::int64_t value = 0;
  KernelArg::Kind kind = KernelArg::Kind::int32;
  std::string text;
};

struct BoundLaunch {
  std::string kernel;
  int line = 0;
  Dim3 grid{1, 1, 1};
  Dim3 block{1, 1, 1};
  std::size_t shared_bytes = 0;
  std::vector<BoundArg> args;
  /// Thread-block cluster shape; launched in clusters when `clustered` (a `cluster=` on the launch line).
  Dim3 cluster{1, 1, 1};
  bool clustered = false;
  std::uint64_t handle = 0;
  /// Triton: the constexpr values, warps and stages under this configuration, and the name of the
  /// binary compiled for exactly that specialization (triton/triton_launch.hpp); "" in other languages,
  /// whose kernels are looked up by `kernel`.
  std::vector<std::pair<std::string, std::int64_t>> constexprs;
  int num_warps = 0;
  int num_stages = 0;
  std::string binary;
};

struct BoundPlan {
  std::string config;
  std::vector<BufferSpec> buffers;
  std::vector<BoundLaunch> launches;
  /// The modules its kernels live in, whose globals are reset before every run (reset_plan_state).
  std::vector<std::uint64_t> modules;
};

/// Evaluates one of the plan's expressions; a mistake is an InvalidLaunch naming the line and `what`.
std::int64_t evaluate_in_plan(const std::string& expression, const Bindings& bindings, int line,
                              const std::string& what);

/// The names a plan's expressions may use for one size configuration: the device's attributes, the
/// plan's tunables and the configuration's sizes (later ones shadow earlier ones).
Bindings plan_bindings(const LaunchPlan& plan, const SizeConfig& config, const DeviceInfo& device);

/// Binds a plan to one size configuration and the device: buffer sizes, launch dimensions, argument
/// values. Kernel handles and parameter checks come later (they need the loaded program). Throws
/// InvalidLaunch.
BoundPlan bind_plan(const Task& task, const LaunchPlan& plan, const SizeConfig& config, const DeviceInfo& device);

/// bind_plan for every size configuration of the task, by configuration name. Throws InvalidLaunch.
std::map<std::string, BoundPlan> bind_plan_to_all_sizes(const Task& task, const LaunchPlan& plan,
                                                        const DeviceInfo& device);

/// Checks a bound launch against what the device API says of the kernel's parameters and decides how
/// each integer is passed. Throws InvalidLaunch.
void check_params(BoundLaunch& launch, const std::vector<KernelParam>& all_params, const BoundPlan& plan);

}  // namespace kernelsmith::detail
