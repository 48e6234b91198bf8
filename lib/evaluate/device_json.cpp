#include "evaluate/device_json.hpp"

#include <cstdint>
#include <string>

namespace kernelsmith::detail {

using Json = nlohmann::json;

Json device_to_json(const DeviceInfo& d) {
  return {{"backend", d.backend},
          {"index", d.index},
          {"name", d.name},
          {"vendor", d.vendor},
          {"platform", d.platform},
          {"architecture", d.architecture},
          {"driver_version", d.driver_version},
          {"compute_units", d.compute_units},
          {"warp_size", d.warp_size},
          {"max_threads_per_block", d.max_threads_per_block},
          {"shared_per_block", d.shared_per_block},
          {"shared_per_block_optin", d.shared_per_block_optin},
          {"l2_bytes", d.l2_bytes},
          {"global_memory_bytes", d.global_memory_bytes},
          {"clock_mhz", d.clock_mhz},
          {"is_gpu", d.is_gpu}};
}

DeviceInfo device_from_json(const Json& j) {
  DeviceInfo d;
  d.backend = j.at("backend").get<std::string>();
  d.index = j.at("index").get<int>();
  d.name = j.at("name").get<std::string>();
  d.vendor = j.at("vendor").get<std::string>();
  d.platform = j.at("platform").get<std::string>();
  d.architecture = j.at("architecture").get<std::string>();
  d.driver_version = j.at("driver_version").get<std::string>();
  d.compute_units = j.at("compute_units").get<int>();
  d.warp_size = j.at("warp_size").get<int>();
  d.max_threads_per_block = j.at("max_threads_per_block").get<int>();
  d.shared_per_block = j.at("shared_per_block").get<std::int64_t>();
  d.shared_per_block_optin = j.at("shared_per_block_optin").get<std::int64_t>();
  d.l2_bytes = j.at("l2_bytes").get<std::int64_t>();
  d.global_memory_bytes = j.at("global_memory_bytes").get<std::int64_t>();
  d.clock_mhz = j.at("clock_mhz").get<int>();
  d.is_gpu = j.at("is_gpu").get<bool>();
  return d;
}

}  // namespace kernelsmith::detail
