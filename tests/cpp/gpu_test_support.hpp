// What the [gpu] tests share: why CUDA cannot run here, and a guard that skips a test, saying why.
#pragma once

#include <string>

#include "catch.hpp"
#include "kernelsmith/device.hpp"

namespace kernelsmith::test {

// Why the CUDA backend cannot run here, or "" when it can.
inline std::string cuda_unavailable_reason() {
  for (const auto& backend : devices()) {
    if (backend.name != "cuda") continue;
    if (backend.available && !backend.devices.empty()) return {};
    return backend.reason.empty() ? "no CUDA device" : backend.reason;
  }
  return "this build has no CUDA backend";
}

}  // namespace kernelsmith::test

#define KERNELSMITH_REQUIRE_CUDA_DEVICE()                                   \
  do {                                                                      \
    const std::string reason_ = ::kernelsmith::test::cuda_unavailable_reason(); \
    if (!reason_.empty()) {                                                 \
      WARN("skipped: " << reason_);                                         \
      return;                                                               \
    }                                                                       \
  } while (false)
