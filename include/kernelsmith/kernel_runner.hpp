// KernelRunner: runs a candidate (or a task's reference) on the caller's own tensors, in-process, with
// no correctness or timing protocol: the way to try a kernel on real data and get its outputs back.
//
// The task's sizes are inferred from the tensors' shapes against the task's shape expressions
// (x: [M, K] given a 4 x 8 array means M = 4, K = 8). Host tensors are copied to the device; CUDA
// device tensors are used in place (the CUDA backend runs in the device's primary context, the one
// PyTorch and CuPy use).
#pragma once

#include <map>
#include <memory>
#include <string>

#include "kernelsmith/candidate.hpp"
#include "kernelsmith/device.hpp"
#include "kernelsmith/evaluation.hpp"
#include "kernelsmith/export.hpp"
#include "kernelsmith/task.hpp"
#include "kernelsmith/tensor.hpp"

namespace kernelsmith {

struct RunnerOptions {
  /// "cuda", "opencl" or "auto": the candidate's language decides, else the best available backend.
  std::string backend = "auto";
  int device = 0;
};

class KERNELSMITH_API KernelRunner {
 public:
  /// Loads `candidate` on a backend for its language. Throws BackendUnavailableError (no such backend
  /// here), ValidationError (the candidate's language does not match the named backend).
  KernelRunner(const Task& task, const Candidate& candidate, const RunnerOptions& options = {});

  /// A runner of the task's own reference for the backend's language. Throws NotFoundError when the task
  /// has no reference in that language.
  static KernelRunner reference(const Task& task, const RunnerOptions& options = {});

  ~KernelRunner();
  KernelRunner(KernelRunner&&) noexcept;
  KernelRunner& operator=(KernelRunner&&) noexcept;

  /// Runs the kernel once. `tensors` holds every input of the task, and optionally outputs to write into
  /// (device memory in place, or host memory); every output not given comes back in the result, by name.
  /// `sizes` fixes sizes the shapes cannot tell (a size used only inside expressions such as "2*N").
  /// Throws ValidationError naming the tensor for a missing input, an unknown name, a wrong dtype or
  /// rank, or shapes that disagree on a size; Error with the compiler's log for a source that does not
  /// compile; LaunchError and DeviceFault as the backend does.
  std::map<std::string, HostTensor> run(const std::map<std::string, TensorRef>& tensors, const SizeMap& sizes = {});

  /// The sizes run() would use for these tensors (same checks, nothing runs).
  SizeMap infer_sizes(const std::map<std::string, TensorRef>& tensors, const SizeMap& sizes = {}) const;

  const Task& task() const;
  const Candidate& candidate() const;
  std::string backend_name() const;
  const DeviceInfo& device() const;
  /// Whether device tensors can be used in place here (the CUDA backend).
  bool supports_device_tensors() const;
  /// The compile report of the program the last run() used (empty before the first run).
  CompileReport compile_report() const;

 private:
  struct Impl;
  explicit KernelRunner(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace kernelsmith
