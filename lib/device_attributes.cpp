#include "kernelsmith/device_attributes.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

namespace kernelsmith {
namespace {

// The compute capability of a CUDA architecture name ("sm_90" -> 90, "sm_100a" -> 100); 0 when not one.
int compute_capability(const std::string& architecture) {
  if (architecture.rfind("sm_", 0) != 0) return 0;
  int value = 0;
  for (std::size_t i = 3; i < architecture.size() && std::isdigit(static_cast<unsigned char>(architecture[i])); ++i) {
    value = value * 10 + (architecture[i] - '0');
  }
  return value;
}

}  // namespace

std::int64_t shared_memory_limit(const DeviceInfo& device) {
  return device.shared_per_block_optin > 0 ? device.shared_per_block_optin : device.shared_per_block;
}

const std::vector<DeviceAttribute>& device_attributes() {
  static const std::vector<DeviceAttribute> attributes = {
      {"SM_COUNT", "streaming multiprocessors (compute units)",
       [](const DeviceInfo& d) -> std::int64_t { return d.compute_units; }, 132},
      {"WARP_SIZE", "threads per warp (wavefront); 32 on NVIDIA GPUs, 64 on MetaX (MACA) GPUs",
       [](const DeviceInfo& d) -> std::int64_t { return d.warp_size; }, 32},
      {"MAX_THREADS_PER_BLOCK", "threads a block may have",
       [](const DeviceInfo& d) -> std::int64_t { return d.max_threads_per_block; }, 1024},
      {"SMEM_PER_BLOCK", "shared memory a block may use without opting in, in bytes",
       [](const DeviceInfo& d) -> std::int64_t { return d.shared_per_block; }, 48 * 1024},
      // A device with no opt-in limit allows what it allows without opting in: one rule for the plan
      // binder, the mutators and the prompts.
      {"SMEM_PER_BLOCK_OPTIN", "shared memory a block may use after opting in, in bytes", &shared_memory_limit,
       227 * 1024},
      {"L2_BYTES", "L2 cache size in bytes", [](const DeviceInfo& d) -> std::int64_t { return d.l2_bytes; }, 50 * 1024 * 1024},
      // Lets one plan choose Hopper's launch features where they exist (a tensor map's when(...)).
      {"COMPUTE_CAPABILITY", "CUDA compute capability as major * 10 + minor (90 on an H100); 0 on other backends",
       [](const DeviceInfo& d) -> std::int64_t { return d.backend == "cuda" ? compute_capability(d.architecture) : 0; },
       90},
  };
  return attributes;
}

std::vector<std::string> device_attribute_names() {
  std::vector<std::string> names;
  for (const auto& attribute : device_attributes()) names.push_back(attribute.name);
  return names;
}

bool is_device_attribute(const std::string& name) {
  const auto& attributes = device_attributes();
  return std::any_of(attributes.begin(), attributes.end(), [&](const DeviceAttribute& a) { return a.name == name; });
}

std::map<std::string, std::int64_t> device_attribute_values(const DeviceInfo& device) {
  std::map<std::string, std::int64_t> values;
  for (const auto& attribute : device_attributes()) values[attribute.name] = attribute.read(device);
  return values;
}

std::map<std::string, std::int64_t> placeholder_device_attribute_values() {
  std::map<std::string, std::int64_t> values;
  for (const auto& attribute : device_attributes()) values[attribute.name] = attribute.placeholder;
  return values;
}

std::string hopper_feature_refusal(const DeviceInfo& device, const std::string& feature) {
  if (device.backend == "cuda" && compute_capability(device.architecture) >= 90) return {};
  const std::string on = device.backend == "cuda"
                             ? fmt::format("{} is {} (compute capability {}.{})", device.name, device.architecture,
                                           compute_capability(device.architecture) / 10,
                                           compute_capability(device.architecture) % 10)
                             : fmt::format("the {} backend{} has none", device.backend.empty() ? "unknown" : device.backend,
                                           device.name.empty() ? "" : " (" + device.name + ")");
  return fmt::format("{} needs the CUDA backend on a GPU of compute capability 9.0 or newer (Hopper); {}: write "
                     "the kernel without it to run here",
                     feature, on);
}

}  // namespace kernelsmith
