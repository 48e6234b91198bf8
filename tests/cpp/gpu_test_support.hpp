// What the device tests share: why a backend cannot run here, and guards that skip a test, saying why.
#pragma once

#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <string>

#include "catch.hpp"
#include "kernelsmith/device.hpp"

namespace kernelsmith::test {

// Why the backend `name` cannot run here, or "" when it can; `label` names it in the reason.
inline std::string backend_unavailable_reason(const std::string& name, const std::string& label) {
  for (const auto& backend : devices()) {
    if (backend.name != name) continue;
    if (backend.available && !backend.devices.empty()) return {};
    return backend.reason.empty() ? "no " + label + " device" : backend.reason;
  }
  return "this build has no " + label + " backend";
}

// Why the CUDA backend cannot run here, or "" when it can.
inline std::string cuda_unavailable_reason() { return backend_unavailable_reason("cuda", "CUDA"); }

/// What a child run of this test binary printed and how it ended.
struct ChildRun {
  bool exited_cleanly = false;  ///< exited (not killed) with status 0
  std::string output;           ///< stdout and stderr together
};

/// Runs this test binary again for the test cases with `tag`, in a child process: for tests that
/// poison the CUDA context (a sticky error lasts as long as the process, and would fail every later
/// [gpu] test of this one).
inline ChildRun run_tagged_in_child(const std::string& tag) {
  const std::string self = std::filesystem::read_symlink("/proc/self/exe").string();
  const std::string command = "'" + self + "' '" + tag + "' 2>&1";
  ChildRun run;
  FILE* child = ::popen(command.c_str(), "r");
  if (child == nullptr) return run;
  char chunk[4096];
  while (std::fgets(chunk, sizeof(chunk), child) != nullptr) run.output += chunk;
  const int status = ::pclose(child);
  run.exited_cleanly = status != -1 && WIFEXITED(status) && WEXITSTATUS(status) == 0;
  return run;
}

}  // namespace kernelsmith::test

// Skips the test, saying why, when `reason_expression` (a reason or "") is not empty.
#define KERNELSMITH_SKIP_WHEN(reason_expression)     \
  do {                                               \
    const std::string reason_ = (reason_expression); \
    if (!reason_.empty()) {                          \
      WARN("skipped: " << reason_);                  \
      return;                                        \
    }                                                \
  } while (false)

#define KERNELSMITH_REQUIRE_CUDA_DEVICE() KERNELSMITH_SKIP_WHEN(::kernelsmith::test::cuda_unavailable_reason())
// OpenCL runs on PoCL in CI.
#define KERNELSMITH_REQUIRE_OPENCL_DEVICE() \
  KERNELSMITH_SKIP_WHEN(::kernelsmith::test::backend_unavailable_reason("opencl", "OpenCL"))
