#include "kernelsmith/device.hpp"

#include <fmt/format.h>

#include <mutex>
#include <nlohmann/json.hpp>

#include "backend_registry.hpp"
#include "json_codec.hpp"
#include "kernelsmith/error.hpp"

namespace kernelsmith {
namespace {

[[maybe_unused]] BackendInfo disabled_backend(const std::string& name, const std::string& reason) {
  BackendInfo info;
  info.name = name;
  info.available = false;
  info.reason = reason;
  return info;
}

std::vector<BackendInfo> probe_all() {
  std::vector<BackendInfo> backends;
#if KERNELSMITH_ENABLE_CUDA
  backends.push_back(detail::probe_cuda());
#else
  backends.push_back(disabled_backend("cuda", "disabled at build time (KERNELSMITH_ENABLE_CUDA=OFF)"));
#endif
#if KERNELSMITH_ENABLE_OPENCL
  backends.push_back(detail::probe_opencl());
#else
  backends.push_back(disabled_backend("opencl", "disabled at build time (KERNELSMITH_ENABLE_OPENCL=OFF)"));
#endif
  backends.push_back(detail::probe_maca());
  return backends;
}

}  // namespace

std::vector<BackendInfo> devices() {
  // Probing loads drivers and creates contexts: once per process is enough.
  static std::once_flag once;
  static std::vector<BackendInfo> cached;
  std::call_once(once, [] { cached = probe_all(); });
  return cached;
}

std::string best_backend() {
  const auto backends = devices();
  // A GPU first: that is what the user wants to optimise for. Then anything that runs.
  for (const auto& backend : backends) {
    if (!backend.available) continue;
    for (const auto& device : backend.devices) {
      if (device.is_gpu) return backend.name;
    }
  }
  for (const auto& backend : backends) {
    if (backend.available && !backend.devices.empty()) return backend.name;
  }
  std::vector<std::string> reasons;
  for (const auto& backend : backends) reasons.push_back(fmt::format("{}: {}", backend.name, backend.reason));
  throw BackendUnavailableError(fmt::format("no backend can run kernels here ({}); install a GPU driver "
                                            "or an OpenCL runtime such as PoCL (pocl-opencl-icd)",
                                            fmt::join(reasons, "; ")));
}

std::string to_json(const std::vector<BackendInfo>& backends) {
  detail::Json out = detail::Json::object();
  out["schema"] = "kernelsmith.devices/1";
  auto& list = out["backends"] = detail::Json::array();
  for (const auto& backend : backends) {
    detail::Json entry = {{"name", backend.name},           {"available", backend.available},
                            {"reason", backend.reason},       {"can_compile", backend.can_compile},
                            {"details", backend.details},     {"devices", detail::Json::array()}};
    for (const auto& d : backend.devices) {
      entry["devices"].push_back(detail::device_to_json(d));
    }
    list.push_back(std::move(entry));
  }
  return out.dump(2);
}

}  // namespace kernelsmith
