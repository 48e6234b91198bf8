// Float64 CPU references of the built-in tasks: the oracle the task suite test checks every task's own
// kernels against. Each task folder has a cpu_reference.cpp that registers one function under the
// task's name; tests/CMakeLists.txt compiles them into the test binary.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "kernelsmith/task.hpp"

namespace kernelsmith::testing {

/// A tensor's elements as float64, row-major, in the shape the task gives it under the sizes.
using HostTensor = std::vector<double>;

/// The task's inputs (in task order) → its outputs (in task order), computed in float64.
using CpuReference = std::function<std::vector<HostTensor>(const std::vector<HostTensor>& inputs,
                                                           const SizeMap& sizes)>;

/// Registers a task's CPU reference; returns true so that it can initialise a static. Throws Error when
/// the name is already registered.
bool register_cpu_reference(const std::string& task, CpuReference reference);

/// The CPU reference of a task, or nullptr when none is registered.
const CpuReference* find_cpu_reference(const std::string& task);

/// Names with a registered CPU reference, sorted.
std::vector<std::string> cpu_reference_names();

/// The size `name` of a configuration; throws NotFoundError naming it when absent.
std::int64_t size_of(const SizeMap& sizes, const std::string& name);

}  // namespace kernelsmith::testing

/// Registers `function` (a CpuReference-compatible callable) as the CPU reference of `task_name`.
#define KERNELSMITH_CPU_REFERENCE(task_name, function)                                                \
  namespace {                                                                                         \
  [[maybe_unused]] const bool kernelsmith_cpu_reference_registered =                                  \
      ::kernelsmith::testing::register_cpu_reference(task_name, function);                            \
  }
