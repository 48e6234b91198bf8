// What the MACA tests share: the stand-in runtime (tests/maca_standin) this build made, selected for one
// scope, and why the MACA backend cannot run here.
#pragma once

#include <optional>
#include <string>

#include "gpu_test_support.hpp"
#include "kernelsmith/device.hpp"
#include "test_support.hpp"

namespace kernelsmith::test {

/// The stand-in libmcruntime.so, or "" where the plugin was not built against the stand-in SDK.
inline std::string maca_standin_runtime() {
#if defined(KERNELSMITH_TEST_MACA_STANDIN)
  return KERNELSMITH_TEST_MACA_STANDIN;
#else
  return {};
#endif
}

/// Why the MACA tests that need the stand-in cannot run in this build, or "".
inline std::string maca_standin_missing_reason() {
  return maca_standin_runtime().empty()
             ? "the MACA plugin was not built against the stand-in SDK (configure with "
               "-DKERNELSMITH_MACA_PATH=tests/maca_standin)"
             : std::string();
}

/// Points KERNELSMITH_MACA_RUNTIME at the stand-in for one scope (the plugin reads it on each load).
class UseMacaStandin {
 public:
  UseMacaStandin() : runtime_("KERNELSMITH_MACA_RUNTIME", maca_standin_runtime()) {}

 private:
  ScopedEnvironment runtime_;
};

/// A MetaX C500 as its published figures describe it (docs/backends.md, "MACA"): for checking plans'
/// requirements for a 64-lane wave without the device.
inline DeviceInfo published_c500() {
  DeviceInfo c500;
  c500.backend = "maca";
  c500.name = "MetaX C500 (published figures)";
  c500.compute_units = 104;
  c500.warp_size = 64;
  c500.max_threads_per_block = 1024;
  c500.shared_per_block = 64 * 1024;
  c500.shared_per_block_optin = 64 * 1024;
  c500.l2_bytes = 8 * 1024 * 1024;
  c500.is_gpu = true;
  return c500;
}

/// Why the MACA backend cannot run a kernel here through the stand-in (no plugin, no GPU), or "".
inline std::string maca_device_missing_reason() {
  if (const std::string reason = maca_standin_missing_reason(); !reason.empty()) return reason;
  // The stand-in runs on the CUDA driver: without a CUDA device there is no "MetaX" device either.
  return cuda_unavailable_reason();
}

}  // namespace kernelsmith::test
