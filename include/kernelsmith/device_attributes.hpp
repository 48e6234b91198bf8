// The device attributes that launch-plan expressions may use (docs/candidate-format.md): one table row
// per attribute, with how its value is read from a DeviceInfo and the value task validation assumes
// when no device is known. The plan binder, the parameter mutator, the prompt builder, the task
// validator and the expression checks all read this table.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "kernelsmith/device.hpp"

#include "kernelsmith/export.hpp"

namespace kernelsmith {

struct DeviceAttribute {
  std::string name;         ///< as written in plans: "SM_COUNT"
  std::string description;  ///< one line for docs and prompts
  /// Its value on a device; 0 when the device does not report it.
  std::int64_t (*read)(const DeviceInfo& device) = nullptr;
  /// Assumed when a task's expressions are checked without a device (an H100's value).
  std::int64_t placeholder = 0;
};

/// Every attribute, in the order the docs list them.
KERNELSMITH_API const std::vector<DeviceAttribute>& device_attributes();

/// The attributes' names, in table order.
KERNELSMITH_API std::vector<std::string> device_attribute_names();

/// True when `name` is a device attribute (and so cannot name a size, tensor or tunable).
KERNELSMITH_API bool is_device_attribute(const std::string& name);

/// Every attribute's value on `device`, by name (0 where the device does not report one).
KERNELSMITH_API std::map<std::string, std::int64_t> device_attribute_values(const DeviceInfo& device);

/// Shared memory one block may use, in bytes, after opting in where the device needs that
/// (SMEM_PER_BLOCK_OPTIN): the opt-in limit, or the plain limit on a device that has no opt-in.
KERNELSMITH_API std::int64_t shared_memory_limit(const DeviceInfo& device);

/// "" when `device` runs Hopper's launch features (@tensor_map, cluster=; docs/candidate-format.md): the CUDA
/// backend on a GPU of compute capability 9.0 or newer. Otherwise why not, naming `feature` and what to do.
KERNELSMITH_API std::string hopper_feature_refusal(const DeviceInfo& device, const std::string& feature);

/// Every attribute's placeholder value, by name: for checking expressions when no device is known.
KERNELSMITH_API std::map<std::string, std::int64_t> placeholder_device_attribute_values();

}  // namespace kernelsmith
