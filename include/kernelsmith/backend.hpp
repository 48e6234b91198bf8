// Backend: the thin seam between the backend-agnostic evaluation harness and one device API
// (CUDA, OpenCL, MACA). The harness (launch plan, correctness and timing protocols, integrity) is
// written once against this interface; a backend only compiles, moves bytes, launches and times.
//
// Compilation may run on any thread and needs no device when the toolchain allows (NVRTC); everything
// else runs on the thread that owns the backend, inside the worker process.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "kernelsmith/candidate.hpp"
#include "kernelsmith/device.hpp"
#include "kernelsmith/dtype.hpp"
#include "kernelsmith/error.hpp"
#include "kernelsmith/evaluation.hpp"
#include "kernelsmith/export.hpp"
#include "kernelsmith/task.hpp"

namespace kernelsmith {

struct CompileOptions {
  /// Macro definitions NAME=VALUE (tunables, KS_<size> constants when the plan specialises).
  std::vector<std::pair<std::string, std::string>> defines;
  /// Compile for this target instead of the device's (e.g. "sm_90" where there is no GPU).
  std::string target;
  /// Kernel names the plan launches (NVRTC needs them for name expressions; others may ignore).
  std::vector<std::string> kernels;
  double timeout_seconds = 60.0;
};

/// A kernel that a front end compiled into a binary of its own (Triton: one cubin per specialization of a
/// `@triton.jit` function), with the launch its compiler fixed (docs/triton.md, "Launch ABI").
struct KernelBinary {
  /// The name the bound launches look it up by: the plan's kernel and its specialization
  /// (`add[BLOCK=1024 num_warps=4 num_stages=3 *fp32,*fp32,*fp32,i32]`).
  std::string name;
  std::string symbol;                 ///< its entry point in `binary`
  std::vector<std::uint8_t> binary;   ///< a cubin
  int block_threads = 0;              ///< the block it requires (32 x num_warps threads)
  int num_ctas = 1;                   ///< blocks per program (thread-block clusters); kernelsmith launches 1
  std::size_t shared_bytes = 0;       ///< dynamic shared memory each block needs
  /// After the plan's arguments the kernel takes this many device pointers: global scratch, then profile
  /// scratch (Triton >= 3.4). Each scratch area is `bytes` per block at `align`; 0 bytes: a null pointer.
  int scratch_pointers = 0;
  std::size_t global_scratch_bytes = 0;
  std::size_t global_scratch_align = 1;
  std::size_t profile_scratch_bytes = 0;
  std::size_t profile_scratch_align = 1;
  /// The kernel's parameter count as its compiler reports it (-1 unknown): checked against the driver's.
  int param_count = -1;
};

/// A compiled program: the bytes a backend loads (cubin, or OpenCL source for a build at load time).
struct CompiledProgram {
  CompileReport report;
  std::string language;
  std::string target;
  std::vector<std::uint8_t> binary;
  /// Kernel names as the source and the plan write them → the symbols `binary` exports, where the two
  /// differ (C++ and template kernels that NVRTC mangles). Empty for extern "C" kernels and for OpenCL.
  std::map<std::string, std::string> symbols;
  /// Kernels compiled each into a binary of its own (Triton), loaded with the program as one module
  /// each; empty where `binary` holds every kernel (NVRTC, OpenCL).
  std::vector<KernelBinary> kernel_binaries;
};

/// What the device API says of a kernel's parameter.
struct KernelParam {
  std::size_t size = 0;     ///< bytes (CUDA); 0 when unknown
  std::string type_name;    ///< OpenCL type name ("float*", "int"); empty when unknown
  bool is_pointer = false;  ///< known pointer/buffer parameter
  /// Receives the launch's dynamic shared memory instead of a plan argument (an OpenCL `__local`
  /// pointer parameter); the plan does not list it.
  bool is_dynamic_shared = false;
};

/// A TMA tensor map (CUDA's CUtensorMap, sm_90 and newer) as the plan bound it: the layout of a buffer's
/// elements whose tiles a kernel copies. Dimensions innermost first; the backend encodes it for the
/// buffer's address at launch (cuTensorMapEncodeTiled). Byte sizes of 0 mean none (no swizzle, ...).
struct TensorMapSpec {
  DType dtype = DType::float32;
  int rank = 0;                              ///< 1 to 5
  std::array<std::uint64_t, 5> dims{};       ///< elements in each dimension
  std::array<std::uint64_t, 4> strides{};    ///< bytes between steps of dims 1 .. rank - 1
  std::array<std::uint32_t, 5> box{};        ///< elements one copy moves in each dimension
  std::array<std::uint32_t, 5> element_strides{};
  int swizzle_bytes = 0;       ///< 0, 32, 64, 128
  int interleave_bytes = 0;    ///< 0, 16, 32
  int l2_promotion_bytes = 0;  ///< 0, 64, 128, 256
  bool oob_nan = false;        ///< out-of-bounds elements read as NaN (else zero)
};

/// One launch argument as the harness resolved it.
struct KernelArg {
  /// tensor_map: a 128-byte CUtensorMap encoded over `buffer` as `tensor_map` says (CUDA only).
  enum class Kind { buffer, int32, int64, tensor_map } kind = Kind::int32;
  std::uint64_t buffer = 0;  ///< a handle from Backend::allocate
  std::int64_t value = 0;
  const TensorMapSpec* tensor_map = nullptr;  ///< Kind::tensor_map: what to encode; outlives the launch call
};

using Dim3 = std::array<std::uint32_t, 3>;

class KERNELSMITH_API Backend {
 public:
  virtual ~Backend() = default;

  virtual std::string name() const = 0;      ///< "cuda", "opencl", "maca"
  virtual std::string language() const = 0;  ///< the kernel language it compiles
  virtual const DeviceInfo& device() const = 0;

  /// Source → program. Thread-safe. A rejected source is `report.ok == false` with the log, not an
  /// exception; exceptions are for a broken toolchain.
  virtual CompiledProgram compile(const std::string& source, const CompileOptions& options) = 0;

  /// Loads a program; returns a module handle. Throws on failure (the harness reports it as a compile
  /// error when the report says so, else runtime_error).
  virtual std::uint64_t load(const CompiledProgram& program) = 0;
  virtual void unload(std::uint64_t module) = 0;
  /// Puts the module's mutable globals (CUDA `__device__` variables) back to the values they had when
  /// it was loaded, so that nothing survives from one run of a plan to the next (docs/evaluation.md,
  /// "State between runs"). The default does nothing: for languages without module state (OpenCL C 1.2).
  virtual void reset_module_state(std::uint64_t module) { (void)module; }
  /// A kernel of a loaded module. Throws NotFoundError naming the kernel when it does not exist.
  virtual std::uint64_t kernel(std::uint64_t module, const std::string& name) = 0;
  /// The kernel's parameters, or an empty vector when the API cannot say (the harness then checks less).
  virtual std::vector<KernelParam> kernel_params(std::uint64_t kernel) = 0;
  /// Resources of a loaded kernel (registers, shared, local) as the driver reports them.
  virtual KernelResources kernel_resources(std::uint64_t kernel) = 0;

  virtual std::uint64_t allocate(std::size_t bytes) = 0;
  virtual void free(std::uint64_t buffer) = 0;
  virtual void write(std::uint64_t buffer, const void* host, std::size_t bytes) = 0;
  virtual void read(std::uint64_t buffer, void* host, std::size_t bytes) = 0;
  /// Fills with a repeated byte (poisoning, L2 flush).
  virtual void fill(std::uint64_t buffer, std::uint8_t byte, std::size_t bytes) = 0;

  /// Makes the caller's device memory (`bytes` at `device_address`, on this backend's device) usable as a
  /// buffer without copying; free() then forgets it without releasing the memory, which stays the
  /// caller's. Backends whose buffers are not plain device addresses throw NotSupportedError.
  virtual std::uint64_t adopt_external(std::uint64_t device_address, std::size_t bytes) {
    (void)device_address;
    (void)bytes;
    throw NotSupportedError("the " + name() + " backend cannot use external device memory in place; pass host "
                            "arrays (they are copied)");
  }

  /// Enqueues a launch. Throws LaunchError on a launch the device rejects.
  virtual void launch(std::uint64_t kernel, Dim3 grid, Dim3 block, std::size_t shared_bytes,
                      const std::vector<KernelArg>& args) = 0;
  /// Enqueues a launch in thread-block clusters of `cluster` blocks (each dimension divides the grid's).
  /// Backends without clusters throw NotSupportedError; the plan binder refuses such plans before they
  /// reach a backend (hopper_feature_refusal).
  virtual void launch_clustered(std::uint64_t kernel, Dim3 grid, Dim3 block, Dim3 cluster, std::size_t shared_bytes,
                                const std::vector<KernelArg>& args) {
    (void)kernel, (void)grid, (void)block, (void)cluster, (void)shared_bytes, (void)args;
    throw NotSupportedError("the " + name() + " backend cannot launch thread-block clusters (CUDA on sm_90 and "
                            "newer only)");
  }
  /// Waits for all queued work. Throws DeviceFault when the context is lost (sticky error).
  virtual void synchronize() = 0;

  /// Device-side timer around enqueued work: start(), launches, stop() → milliseconds between the two
  /// points on the device's own clock (events on CUDA, profiling info on OpenCL).
  virtual void timer_start() = 0;
  virtual double timer_stop_ms() = 0;

  /// Timed runs recorded once and replayed by the device back to back, without waiting on the host
  /// between them (docs/evaluation.md, "Tiny kernels"). Owned by the caller; must not outlive the backend.
  class TimedBatch {
   public:
    virtual ~TimedBatch() = default;
    /// The number of timed runs one replay makes.
    virtual int runs() const = 0;
    /// How the device replays it, for TimingReport::sampling ("graph_replay" on CUDA).
    virtual std::string method() const = 0;
    /// Runs the whole batch once, waits for it, and returns each run's milliseconds on the device clock,
    /// in recording order. Throws DeviceError naming the failed call, DeviceFault when the context is lost.
    virtual std::vector<double> replay() = 0;
  };

  /// Records `runs` timed runs without running them: for each, `prepare()` enqueues its untimed work (state
  /// resets, the cache eviction), the device timer starts, `timed()` enqueues the timed launches, the timer
  /// stops. What the callbacks enqueue through this backend is recorded (their host-side effects happen
  /// now, once per run); a host-synchronous call among them (read, write, synchronize) cannot be recorded.
  /// Throws NotSupportedError saying why where the backend or its driver cannot record, or the recording
  /// failed (the default: not supported); DeviceFault when the context is lost.
  virtual std::unique_ptr<TimedBatch> record_timed_batch(int runs, const std::function<void()>& prepare,
                                                         const std::function<void()>& timed) {
    (void)runs, (void)prepare, (void)timed;
    throw NotSupportedError("the " + name() + " backend cannot record timed runs for the device to replay "
                            "(CUDA only)");
  }
};

/// A launch the device refused (bad configuration, too many resources): recoverable.
class KERNELSMITH_API LaunchError : public DeviceError {
 public:
  using DeviceError::DeviceError;
};

/// The device context is unusable (illegal address, trap, ...): the worker must report and exit.
class KERNELSMITH_API DeviceFault : public DeviceError {
 public:
  using DeviceError::DeviceError;
};

/// Creates a backend on one device. Throws BackendUnavailableError with the reason.
KERNELSMITH_API std::unique_ptr<Backend> create_backend(const std::string& name, int device_index = 0);

/// Compiles without a device where the toolchain allows (NVRTC: `target` like "sm_90"); used for the
/// compile stage in the caller's process and in CI. Throws NotSupportedError for other backends.
KERNELSMITH_API CompiledProgram compile_offline(const std::string& backend, const std::string& source,
                                                const CompileOptions& options);

/// One program of a candidate compiled without a device by compile_candidate_offline().
struct OfflineProgram {
  std::string config;     ///< the size configuration it serves; "" when one program serves them all
  CompileReport report;   ///< ok, the compiler's log, and each kernel's registers and spills
};

/// Compiles a CUDA candidate for `task` as the evaluator's compile stage would on a GPU of architecture
/// `architecture` ("sm_90", "sm_80"), without the GPU: the plan's @tune values become macros, @specialize
/// gives one program per size configuration, and the target is the one the CUDA backend picks on such a
/// device (sm_90a for "sm_90", so that Hopper-only instructions compile). For checking that a source
/// builds, and what it costs in registers, where there is no GPU (CI, tests). A source the compiler rejects
/// is a report with ok == false; a malformed plan throws PlanError, a candidate in another language than
/// CUDA NotSupportedError (Triton: triton_kernel_specs() and the compile helper), a build without the CUDA
/// backend or a machine without NVRTC BackendUnavailableError.
KERNELSMITH_API std::vector<OfflineProgram> compile_candidate_offline(const Task& task, const Candidate& candidate,
                                                                      const std::string& architecture,
                                                                      double timeout_seconds = 120.0);

}  // namespace kernelsmith
