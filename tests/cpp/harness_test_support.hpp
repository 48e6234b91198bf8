// Fixtures shared by the evaluator tests of every backend: the small harness task and options that keep
// the timing protocol short.
#pragma once

#include <filesystem>
#include <string>

#include "kernelsmith/candidate.hpp"
#include "kernelsmith/device.hpp"
#include "kernelsmith/evaluator.hpp"
#include "kernelsmith/task.hpp"

namespace kernelsmith::test {

/// True when the OpenCL backend is built, loads and reports a device (PoCL's CPU device will do).
inline bool opencl_available() {
  for (const auto& backend : devices()) {
    if (backend.name == "opencl" && backend.available && !backend.devices.empty()) return true;
  }
  return false;
}

// y[i] = 2 * a[i] + b[i] over N = 4096 floats, checked also at N = 1 and N = 1000.
inline Task small_task() { return Task::load(std::string(KERNELSMITH_TEST_DATA_DIR) + "/harness_task"); }

inline Candidate candidate_in(const std::string& language, const std::string& source) {
  Candidate candidate;
  candidate.language = language;
  candidate.source = source;
  return candidate;
}

inline std::string test_cache_dir() {
  // Shared by the test runs, so that the device peaks are measured once per machine.
  const auto dir = std::filesystem::temp_directory_path() / "kernelsmith-test-cache";
  std::filesystem::create_directories(dir);
  return dir.string();
}

inline EvaluatorOptions fast_options(const std::string& backend, bool isolate, int compile_threads) {
  EvaluatorOptions options;
  options.backend = backend;
  options.isolate = isolate;
  options.correctness_trials = 2;
  options.min_samples = 3;
  options.max_samples = 20;
  options.screen_budget_seconds = 0.05;
  options.strict_budget_seconds = 0.1;
  options.deadline_seconds = 60.0;
  options.compile_threads = compile_threads;
  options.cache_dir = test_cache_dir();
  return options;
}

}  // namespace kernelsmith::test
