// The CUDA backend: NVRTC compiles, the driver API loads, moves bytes, launches and times. Both
// libraries are opened at run time (driver_api.hpp, nvrtc_api.hpp).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <limits>
#include <map>
#include <set>

#include "cuda/cubin_globals.hpp"
#include "cuda/driver_api.hpp"
#include "cuda/nvrtc_api.hpp"
#include "cuda/nvrtc_compile.hpp"
#include "backend_registry.hpp"
#include "kernelsmith/error.hpp"

namespace kernelsmith::detail {
namespace {

using cuda::DriverApi;
using cuda::driver;
using cuda::nvrtc;

// Launches may use up to this much dynamic shared memory without opting in.
constexpr std::size_t kDefaultDynamicSharedLimit = 48 * 1024;

std::string version_text(int version) { return fmt::format("{}.{}", version / 1000, (version % 1000) / 10); }

int attribute(const DriverApi& api, CUdevice device, CUdevice_attribute which) {
  int value = 0;
  KERNELSMITH_CU_CALL(api.cuDeviceGetAttribute(&value, which, device));
  return value;
}

DeviceInfo query_device(const DriverApi& api, int ordinal) {
  CUdevice device = 0;
  KERNELSMITH_CU_CALL(api.cuDeviceGet(&device, ordinal));
  char name[256] = {};
  KERNELSMITH_CU_CALL(api.cuDeviceGetName(name, sizeof(name) - 1, device));
  std::size_t memory = 0;
  KERNELSMITH_CU_CALL(api.cuDeviceTotalMem(&memory, device));

  DeviceInfo info;
  info.backend = "cuda";
  info.index = ordinal;
  info.name = name;
  info.vendor = "NVIDIA";
  info.driver_version = version_text(api.driver_version);
  info.architecture = fmt::format("sm_{}{}", attribute(api, device, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR),
                                  attribute(api, device, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR));
  info.compute_units = attribute(api, device, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
  info.warp_size = attribute(api, device, CU_DEVICE_ATTRIBUTE_WARP_SIZE);
  info.max_threads_per_block = attribute(api, device, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
  info.shared_per_block = attribute(api, device, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK);
  info.shared_per_block_optin = attribute(api, device, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN);
  info.l2_bytes = attribute(api, device, CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE);
  info.global_memory_bytes = static_cast<std::int64_t>(memory);
  info.max_allocation_bytes = info.global_memory_bytes;  // CUDA has no per-allocation limit below it
  info.clock_mhz = attribute(api, device, CU_DEVICE_ATTRIBUTE_CLOCK_RATE) / 1000;
  info.is_gpu = true;
  return info;
}

// cuInit with a message that says what to do about the usual failures.
void initialise_driver(const DriverApi& api) {
  const CUresult result = api.cuInit(0);
  if (result == CUDA_SUCCESS) return;
  std::string hint;
  if (result == CUDA_ERROR_STUB_LIBRARY) {
    hint = ": the loaded libcuda is the toolkit's link stub, not a driver; install the NVIDIA driver or "
           "point KERNELSMITH_CUDA_DRIVER_LIBRARY at the real libcuda.so.1";
  } else if (result == CUDA_ERROR_NO_DEVICE) {
    hint = ": the driver sees no GPU (check CUDA_VISIBLE_DEVICES and nvidia-smi)";
  } else if (result == CUDA_ERROR_SYSTEM_DRIVER_MISMATCH || result == CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE) {
    hint = ": libcuda and the kernel module are from different driver versions; reinstall the driver";
  }
  throw BackendUnavailableError(fmt::format("cuInit failed: {}{} (driver {})", cuda::describe_result(result),
                                            hint, api.library));
}

// The architecture NVRTC compiles for on a device. Hopper and newer get the architecture-specific
// variant (sm_90a, sm_100a, ...): the cubin runs only on that exact architecture, which is all an
// evaluation on this device needs, and candidates may use wgmma, setmaxnreg and tcgen05.
std::string compile_target_for(const DeviceInfo& device, const cuda::NvrtcApi& api) {
  const int capability = std::stoi(device.architecture.substr(3));
  const int nvrtc_version = api.version_major * 10 + api.version_minor;
  const bool has_specific_variant = (capability == 90 && nvrtc_version >= 120) ||
                                    ((capability == 100 || capability == 120) && nvrtc_version >= 128);
  return has_specific_variant ? device.architecture + "a" : device.architecture;
}

class CudaBackend final : public Backend {
 public:
  explicit CudaBackend(int device_index) : api_(driver()) {
    const cuda::NvrtcApi& compiler = nvrtc();  // no evaluation without a compiler: fail now, with the reason
    initialise_driver(api_);
    int count = 0;
    KERNELSMITH_CU_CALL(api_.cuDeviceGetCount(&count));
    if (device_index < 0 || device_index >= count) {
      throw NotFoundError(fmt::format("CUDA device {} does not exist: the driver sees {} device(s) "
                                      "(indices 0 to {})",
                                      device_index, count, count - 1));
    }
    info_ = query_device(api_, device_index);
    compile_target_ = compile_target_for(info_, compiler);
    KERNELSMITH_CU_CALL(api_.cuDeviceGet(&device_, device_index));
    KERNELSMITH_CU_CALL(api_.cuDevicePrimaryCtxRetain(&context_, device_));
    try {
      KERNELSMITH_CU_CALL(api_.cuCtxSetCurrent(context_));
      // A blocking stream: the synchronous copies (cuMemcpyHtoD/DtoH, on the legacy default stream) wait
      // for the launches queued on it, so reads see finished results without an explicit synchronize.
      KERNELSMITH_CU_CALL(api_.cuStreamCreate(&stream_, CU_STREAM_DEFAULT));
      KERNELSMITH_CU_CALL(api_.cuEventCreate(&timer_start_, CU_EVENT_DEFAULT));
      KERNELSMITH_CU_CALL(api_.cuEventCreate(&timer_stop_, CU_EVENT_DEFAULT));
    } catch (...) {
      release();
      throw;
    }
  }

  ~CudaBackend() override { release(); }

  CudaBackend(const CudaBackend&) = delete;
  CudaBackend& operator=(const CudaBackend&) = delete;

  std::string name() const override { return "cuda"; }
  std::string language() const override { return "cuda"; }
  const DeviceInfo& device() const override { return info_; }

  CompiledProgram compile(const std::string& source, const CompileOptions& options) override {
    CompiledProgram program =
        cuda::compile_with_nvrtc(source, options, options.target.empty() ? compile_target_ : options.target);
    if (program.report.ok) complete_resources_from_driver(program, options.kernels);
    return program;
  }

  std::uint64_t load(const CompiledProgram& program) override {
    if (program.language != "cuda") {
      throw ValidationError(fmt::format("the CUDA backend cannot load a program compiled for '{}'", program.language));
    }
    if (!program.report.ok || program.binary.empty()) {
      throw ValidationError("the CUDA backend cannot load a program that did not compile (report.ok is false "
                            "or the binary is empty)");
    }
    refuse_while_recording("load");
    bind();
    CUmodule module = nullptr;
    const CUresult result = api_.cuModuleLoadData(&module, program.binary.data());
    if (result != CUDA_SUCCESS) {
      if (cuda::is_sticky_error(result)) cuda::throw_driver_error(result, "cuModuleLoadData", __FILE__, __LINE__);
      throw DeviceError(fmt::format("loading the {} cubin on {} ({}) failed: {}{}", program.target, info_.name,
                                    info_.architecture, cuda::describe_result(result),
                                    result == CUDA_ERROR_NO_BINARY_FOR_GPU || result == CUDA_ERROR_INVALID_IMAGE
                                        ? "; compile for this device's architecture (leave options.target empty)"
                                        : ""));
    }
    modules_[module] = program.symbols;
    try {
      snapshot_globals(module, program);
    } catch (...) {
      modules_.erase(module);
      drop_globals(module);
      KERNELSMITH_CU_CALL_NOEXCEPT(api_.cuModuleUnload(module));
      throw;
    }
    return reinterpret_cast<std::uint64_t>(module);
  }

  void unload(std::uint64_t handle) override {
    const auto module = modules_.find(reinterpret_cast<CUmodule>(handle));
    if (module == modules_.end()) throw NotFoundError(fmt::format("unload: 0x{:x} is not a loaded CUDA module", handle));
    refuse_while_recording("unload");
    bind();
    // Kernels of the module die with it.
    for (auto kernel = kernels_.begin(); kernel != kernels_.end();) {
      kernel = kernel->second.module == module->first ? kernels_.erase(kernel) : std::next(kernel);
    }
    const CUmodule cu_module = module->first;
    modules_.erase(module);
    drop_globals(cu_module);
    KERNELSMITH_CU_CALL(api_.cuModuleUnload(cu_module));
  }

  void reset_module_state(std::uint64_t handle) override {
    const auto found = globals_.find(reinterpret_cast<CUmodule>(handle));
    if (found == globals_.end() || found->second.empty()) return;
    bind();
    // Copies enqueued on the stream: after the launches queued before them, before those queued after,
    // and recordable into a timed batch's graph (record_timed_batch).
    for (const auto& global : found->second) {
      KERNELSMITH_CU_CALL(api_.cuMemcpyDtoDAsync(global.address, global.initial, global.bytes, stream_));
    }
  }

  std::uint64_t kernel(std::uint64_t module_handle, const std::string& kernel_name) override {
    const auto module = modules_.find(reinterpret_cast<CUmodule>(module_handle));
    if (module == modules_.end()) {
      throw NotFoundError(fmt::format("kernel '{}': 0x{:x} is not a loaded CUDA module", kernel_name, module_handle));
    }
    bind();
    const auto symbol = module->second.find(kernel_name);
    const std::string& symbol_name = symbol != module->second.end() ? symbol->second : kernel_name;
    CUfunction function = nullptr;
    const CUresult result = api_.cuModuleGetFunction(&function, module->first, symbol_name.c_str());
    if (result == CUDA_ERROR_NOT_FOUND) {
      throw NotFoundError(fmt::format(
          "kernel '{}' is not in the compiled program: check the name in the launch plan, and declare the kernel "
          "extern \"C\" __global__ (C++ and template kernels are found only when the plan names them exactly)",
          kernel_name));
    }
    if (result != CUDA_SUCCESS) cuda::throw_driver_error(result, "cuModuleGetFunction", __FILE__, __LINE__);
    // With lazy loading (the default since CUDA 12.2) a kernel is loaded at its first launch; load it now,
    // so that a failure shows here and the first timed or checked launch does not pay for it.
    if (api_.cuFuncLoad != nullptr) KERNELSMITH_CU_CALL(api_.cuFuncLoad(function));
    KernelEntry& entry = kernels_[function];
    entry.name = kernel_name;
    entry.module = module->first;
    return reinterpret_cast<std::uint64_t>(function);
  }

  std::vector<KernelParam> kernel_params(std::uint64_t handle) override {
    return kernel_params_of(kernel_entry(handle, "kernel_params"), reinterpret_cast<CUfunction>(handle));
  }

  KernelResources kernel_resources(std::uint64_t handle) override {
    const KernelEntry& entry = kernel_entry(handle, "kernel_resources");
    const auto function = reinterpret_cast<CUfunction>(handle);
    bind();
    auto function_attribute = [&](CUfunction_attribute which) {
      int value = 0;
      KERNELSMITH_CU_CALL(api_.cuFuncGetAttribute(&value, which, function));
      return value;
    };
    KernelResources resources;
    resources.name = entry.name;
    resources.registers = function_attribute(CU_FUNC_ATTRIBUTE_NUM_REGS);
    resources.shared_bytes = function_attribute(CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES);
    resources.local_bytes = function_attribute(CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES);
    return resources;
  }

  std::uint64_t allocate(std::size_t bytes) override {
    if (bytes == 0) throw ValidationError("allocate: a CUDA buffer needs at least one byte");
    refuse_while_recording("allocate");
    bind();
    CUdeviceptr pointer = 0;
    const CUresult result = api_.cuMemAlloc(&pointer, bytes);
    if (result == CUDA_ERROR_OUT_OF_MEMORY) {
      throw DeviceError(fmt::format("allocating {} bytes on {} failed: out of device memory ({} bytes in "
                                    "total, {} bytes held by this evaluator)",
                                    bytes, info_.name, info_.global_memory_bytes, allocated_bytes()));
    }
    if (result != CUDA_SUCCESS) cuda::throw_driver_error(result, "cuMemAlloc", __FILE__, __LINE__);
    buffers_[pointer] = bytes;
    return static_cast<std::uint64_t>(pointer);
  }

  void free(std::uint64_t buffer) override {
    const auto found = buffers_.find(static_cast<CUdeviceptr>(buffer));
    if (found == buffers_.end()) throw NotFoundError(fmt::format("free: 0x{:x} is not a CUDA buffer of this backend", buffer));
    refuse_while_recording("free");
    buffers_.erase(found);
    if (external_.erase(static_cast<CUdeviceptr>(buffer)) > 0) return;  // the caller's memory: only forgotten
    bind();
    KERNELSMITH_CU_CALL(api_.cuMemFree(static_cast<CUdeviceptr>(buffer)));
  }

  std::uint64_t adopt_external(std::uint64_t device_address, std::size_t bytes) override {
    const auto pointer = static_cast<CUdeviceptr>(device_address);
    if (pointer == 0 || bytes == 0) {
      throw ValidationError("adopt_external: a device tensor needs a non-null address and at least one byte");
    }
    bind();
    int ordinal = -1;
    const CUresult where = api_.cuPointerGetAttribute(&ordinal, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, pointer);
    if (where != CUDA_SUCCESS) {
      throw ValidationError(fmt::format("0x{:x} is not CUDA device memory the driver knows ({}); pass a CUDA "
                                        "tensor or a host array",
                                        device_address, cuda::describe_result(where)));
    }
    if (ordinal != info_.index) {
      throw ValidationError(fmt::format("the tensor at 0x{:x} lives on CUDA device {}, but this backend runs on "
                                        "device {} ({}); move it there or choose device={}",
                                        device_address, ordinal, info_.index, info_.name, ordinal));
    }
    CUdeviceptr base = 0;
    std::size_t size = 0;
    KERNELSMITH_CU_CALL(api_.cuMemGetAddressRange(&base, &size, pointer));
    if (pointer + bytes > base + size) {
      throw ValidationError(fmt::format("the tensor at 0x{:x} needs {} bytes, but its allocation ends {} bytes "
                                        "after it",
                                        device_address, bytes, base + size - pointer));
    }
    if (buffers_.count(pointer) > 0) {
      throw ValidationError(fmt::format("0x{:x} is already a buffer of this backend; pass each tensor once",
                                        device_address));
    }
    buffers_[pointer] = bytes;
    external_.insert(pointer);
    return static_cast<std::uint64_t>(pointer);
  }

  void write(std::uint64_t buffer, const void* host, std::size_t bytes) override {
    check_range("write", buffer, bytes);
    refuse_while_recording("write");
    if (bytes == 0) return;
    bind();
    KERNELSMITH_CU_CALL(api_.cuMemcpyHtoD(static_cast<CUdeviceptr>(buffer), host, bytes));
  }

  void read(std::uint64_t buffer, void* host, std::size_t bytes) override {
    check_range("read", buffer, bytes);
    refuse_while_recording("read");
    if (bytes == 0) return;
    bind();
    KERNELSMITH_CU_CALL(api_.cuMemcpyDtoH(host, static_cast<CUdeviceptr>(buffer), bytes));
  }

  void fill(std::uint64_t buffer, std::uint8_t byte, std::size_t bytes) override {
    check_range("fill", buffer, bytes);
    if (bytes == 0) return;
    bind();
    KERNELSMITH_CU_CALL(api_.cuMemsetD8Async(static_cast<CUdeviceptr>(buffer), byte, bytes, stream_));
  }

  void launch(std::uint64_t handle, Dim3 grid, Dim3 block, std::size_t shared_bytes,
              const std::vector<KernelArg>& args) override {
    launch_in_clusters(handle, grid, block, nullptr, shared_bytes, args);
  }

  void launch_clustered(std::uint64_t handle, Dim3 grid, Dim3 block, Dim3 cluster, std::size_t shared_bytes,
                        const std::vector<KernelArg>& args) override {
    launch_in_clusters(handle, grid, block, &cluster, shared_bytes, args);
  }

  void synchronize() override {
    refuse_while_recording("synchronize");
    bind();
    KERNELSMITH_CU_CALL(api_.cuStreamSynchronize(stream_));
  }

  void timer_start() override {
    refuse_while_recording("timer_start");
    bind();
    KERNELSMITH_CU_CALL(api_.cuEventRecord(timer_start_, stream_));
    timer_running_ = true;
  }

  double timer_stop_ms() override {
    if (!timer_running_) throw ValidationError("timer_stop_ms called without timer_start");
    refuse_while_recording("timer_stop_ms");
    timer_running_ = false;
    bind();
    KERNELSMITH_CU_CALL(api_.cuEventRecord(timer_stop_, stream_));
    KERNELSMITH_CU_CALL(api_.cuEventSynchronize(timer_stop_));
    float milliseconds = 0.0f;
    KERNELSMITH_CU_CALL(api_.cuEventElapsedTime(&milliseconds, timer_start_, timer_stop_));
    return static_cast<double>(milliseconds);
  }

  // The runs are captured into a CUDA graph and replayed, rather than queued behind a kernel that holds
  // the stream until they are all enqueued (nvbench's blocking kernel). The harness's `prepare` resets
  // state with fills and copies on the stream: captured, they become nodes replayed before every run,
  // and a host-synchronous call among them (a read, a synchronize) fails the capture with an error that
  // becomes the fallback's reason. Behind a blocking kernel such a call would deadlock until the
  // kernel's time-out spoils the batch, R runs of work would have to fit the driver's bounded launch
  // queue while the stream is held, and the kernel would need host-mapped memory to be released. A
  // replay is also one launch call for the whole batch.
  std::unique_ptr<TimedBatch> record_timed_batch(int runs, const std::function<void()>& prepare,
                                                 const std::function<void()>& timed) override {
    if (runs < 1) throw ValidationError(fmt::format("record_timed_batch: {} runs; record at least one", runs));
    if (recording_) throw ValidationError("record_timed_batch: a batch is being recorded already");
    std::vector<const char*> missing;
    if (api_.cuStreamBeginCapture == nullptr) missing.push_back("cuStreamBeginCapture");
    if (api_.cuStreamEndCapture == nullptr) missing.push_back("cuStreamEndCapture");
    if (api_.cuGraphInstantiateWithFlags == nullptr) missing.push_back("cuGraphInstantiateWithFlags");
    if (api_.cuGraphLaunch == nullptr) missing.push_back("cuGraphLaunch");
    if (api_.cuGraphExecDestroy == nullptr) missing.push_back("cuGraphExecDestroy");
    if (api_.cuGraphDestroy == nullptr) missing.push_back("cuGraphDestroy");
    if (api_.cuEventRecordWithFlags == nullptr) missing.push_back("cuEventRecordWithFlags");
    if (!missing.empty()) {
      throw NotSupportedError(fmt::format("the CUDA driver {} ({}) has no {}, which timing in CUDA graphs needs: "
                                          "update the GPU driver (CUDA 11.4 or newer)",
                                          version_text(api_.driver_version), api_.library, fmt::join(missing, ", ")));
    }
    bind();
    // Captured on a non-blocking stream of its own: a call on the legacy default stream, from any thread
    // of the process (another backend's read, a module load's copy), joins every blocking stream and
    // would invalidate a capture on the backend's own stream.
    if (capture_stream_ == nullptr) KERNELSMITH_CU_CALL(api_.cuStreamCreate(&capture_stream_, CU_STREAM_NON_BLOCKING));
    auto batch = std::make_unique<Batch>(*this);
    for (int i = 0; i < runs; ++i) {
      batch->starts.push_back(nullptr);
      KERNELSMITH_CU_CALL(api_.cuEventCreate(&batch->starts.back(), CU_EVENT_DEFAULT));
      batch->stops.push_back(nullptr);
      KERNELSMITH_CU_CALL(api_.cuEventCreate(&batch->stops.back(), CU_EVENT_DEFAULT));
    }

    // While recording, what the callbacks enqueue goes to the capture stream; synchronous calls refuse.
    struct Recording {
      CudaBackend& backend;
      CUstream own_stream;
      explicit Recording(CudaBackend& b) : backend(b), own_stream(b.stream_) {
        backend.stream_ = backend.capture_stream_;
        backend.recording_ = true;
      }
      ~Recording() {
        backend.stream_ = own_stream;
        backend.recording_ = false;
      }
      Recording(const Recording&) = delete;
      Recording& operator=(const Recording&) = delete;
    };
    std::string failure;
    CUresult ended = CUDA_SUCCESS;
    {
      Recording recording(*this);
      // Thread-local mode: a call of this thread that capture cannot take fails instead of running now;
      // other threads are left alone.
      const CUresult began = api_.cuStreamBeginCapture(capture_stream_, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL);
      if (began != CUDA_SUCCESS) {
        if (cuda::is_sticky_error(began)) cuda::throw_driver_error(began, "cuStreamBeginCapture", __FILE__, __LINE__);
        throw NotSupportedError(fmt::format("cuStreamBeginCapture failed: {}", cuda::describe_result(began)));
      }
      try {
        for (int i = 0; i < runs; ++i) {
          prepare();
          KERNELSMITH_CU_CALL(
              api_.cuEventRecordWithFlags(batch->starts[i], capture_stream_, CU_EVENT_RECORD_EXTERNAL));
          timed();
          KERNELSMITH_CU_CALL(api_.cuEventRecordWithFlags(batch->stops[i], capture_stream_, CU_EVENT_RECORD_EXTERNAL));
        }
      } catch (const DeviceFault&) {
        CUgraph abandoned = nullptr;
        KERNELSMITH_CU_CALL_NOEXCEPT(api_.cuStreamEndCapture(capture_stream_, &abandoned));
        if (abandoned != nullptr) KERNELSMITH_CU_CALL_NOEXCEPT(api_.cuGraphDestroy(abandoned));
        throw;
      } catch (const std::exception& e) {
        failure = e.what();
      }
      // Ends the capture whatever happened above: the stream must leave capture mode.
      ended = api_.cuStreamEndCapture(capture_stream_, &batch->graph);
    }
    if (!failure.empty()) {
      throw NotSupportedError(fmt::format("recording the timed runs into a CUDA graph failed: {}", failure));
    }
    if (ended != CUDA_SUCCESS) {
      if (cuda::is_sticky_error(ended)) cuda::throw_driver_error(ended, "cuStreamEndCapture", __FILE__, __LINE__);
      throw NotSupportedError(fmt::format("cuStreamEndCapture failed: {} (the timed runs enqueue work that a CUDA "
                                          "graph cannot capture)",
                                          cuda::describe_result(ended)));
    }
    const CUresult instantiated = api_.cuGraphInstantiateWithFlags(&batch->exec, batch->graph, 0);
    if (instantiated != CUDA_SUCCESS) {
      batch->exec = nullptr;
      if (cuda::is_sticky_error(instantiated)) {
        cuda::throw_driver_error(instantiated, "cuGraphInstantiateWithFlags", __FILE__, __LINE__);
      }
      throw NotSupportedError(fmt::format("cuGraphInstantiateWithFlags failed: {}", cuda::describe_result(instantiated)));
    }
    return batch;
  }

 private:
  // A captured graph of timed runs and the event pair of each (record_timed_batch).
  class Batch final : public TimedBatch {
   public:
    explicit Batch(CudaBackend& backend) : backend_(backend) {}
    ~Batch() override {
      const DriverApi& api = backend_.api_;
      KERNELSMITH_CU_CALL_NOEXCEPT(api.cuCtxSetCurrent(backend_.context_));
      if (exec != nullptr) KERNELSMITH_CU_CALL_NOEXCEPT(api.cuGraphExecDestroy(exec));
      if (graph != nullptr) KERNELSMITH_CU_CALL_NOEXCEPT(api.cuGraphDestroy(graph));
      for (CUevent event : starts) {
        if (event != nullptr) KERNELSMITH_CU_CALL_NOEXCEPT(api.cuEventDestroy(event));
      }
      for (CUevent event : stops) {
        if (event != nullptr) KERNELSMITH_CU_CALL_NOEXCEPT(api.cuEventDestroy(event));
      }
    }
    Batch(const Batch&) = delete;
    Batch& operator=(const Batch&) = delete;

    int runs() const override { return static_cast<int>(stops.size()); }
    std::string method() const override { return "graph_replay"; }

    std::vector<double> replay() override {
      const DriverApi& api = backend_.api_;
      if (backend_.recording_) throw ValidationError("replay: a timed batch cannot be replayed while one is recorded");
      backend_.bind();
      // On the backend's own (blocking) stream: after its earlier work, before its later reads.
      KERNELSMITH_CU_CALL(api.cuGraphLaunch(exec, backend_.stream_));
      KERNELSMITH_CU_CALL(api.cuStreamSynchronize(backend_.stream_));
      std::vector<double> milliseconds;
      milliseconds.reserve(stops.size());
      for (std::size_t i = 0; i < stops.size(); ++i) {
        float elapsed = 0.0f;
        KERNELSMITH_CU_CALL(api.cuEventElapsedTime(&elapsed, starts[i], stops[i]));
        milliseconds.push_back(static_cast<double>(elapsed));
      }
      return milliseconds;
    }

    CUgraph graph = nullptr;
    CUgraphExec exec = nullptr;
    std::vector<CUevent> starts;
    std::vector<CUevent> stops;

   private:
    CudaBackend& backend_;
  };

  // Host-synchronous and resource calls run at once rather than being recorded: refused while a timed
  // batch is recorded, so the recording fails (and the caller falls back) instead of doing them once.
  void refuse_while_recording(const char* operation) const {
    if (recording_) {
      throw NotSupportedError(fmt::format("{} cannot be recorded into a timed batch (it runs on the host at once, "
                                          "not on every replay)",
                                          operation));
    }
  }

  struct KernelEntry {
    std::string name;
    CUmodule module = nullptr;
    bool params_known = false;
    std::vector<KernelParam> params;
    std::size_t dynamic_shared_limit = kDefaultDynamicSharedLimit;
  };

  // cuLaunchKernel, or cuLaunchKernelEx with the cluster attribute when `cluster` is given.
  void launch_in_clusters(std::uint64_t handle, Dim3 grid, Dim3 block, const Dim3* cluster, std::size_t shared_bytes,
                          const std::vector<KernelArg>& args) {
    KernelEntry& entry = kernel_entry(handle, "launch");
    const auto function = reinterpret_cast<CUfunction>(handle);
    const auto where = [&] {
      return fmt::format("launch of '{}' with grid ({}, {}, {}), block ({}, {}, {}){} and {} bytes of dynamic shared "
                         "memory",
                         entry.name, grid[0], grid[1], grid[2], block[0], block[1], block[2],
                         cluster == nullptr ? std::string()
                                            : fmt::format(", cluster ({}, {}, {})", (*cluster)[0], (*cluster)[1],
                                                          (*cluster)[2]),
                         shared_bytes);
    };
    if (shared_bytes > std::numeric_limits<unsigned int>::max()) {
      throw LaunchError(fmt::format("{} failed: the dynamic shared memory does not fit the driver's 32-bit "
                                    "argument", where()));
    }
    if (cluster != nullptr && api_.cuLaunchKernelEx == nullptr) {
      throw LaunchError(fmt::format("{} failed: the CUDA driver {} ({}) has no cuLaunchKernelEx, which thread-block "
                                    "clusters need: update the GPU driver (CUDA 12.0 or newer)",
                                    where(), version_text(api_.driver_version), api_.library));
    }
    bind();
    const std::vector<KernelParam>& params = kernel_params_of(entry, function);
    PackedArguments packed = pack_arguments(entry, params, args, where);

    // Above 48 KiB a kernel must opt in to more dynamic shared memory, once per size it needs.
    if (shared_bytes > kDefaultDynamicSharedLimit && shared_bytes > entry.dynamic_shared_limit) {
      const CUresult result = api_.cuFuncSetAttribute(function, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                                      static_cast<int>(shared_bytes));
      if (result != CUDA_SUCCESS) {
        if (cuda::is_sticky_error(result)) cuda::throw_driver_error(result, "cuFuncSetAttribute", __FILE__, __LINE__);
        throw LaunchError(fmt::format("{} failed: the kernel cannot use that much dynamic shared memory ({}; "
                                      "the device allows {} bytes per block in total, static shared memory "
                                      "included)",
                                      where(), cuda::describe_result(result), info_.shared_per_block_optin));
      }
      entry.dynamic_shared_limit = shared_bytes;
    }

    CUresult result = CUDA_SUCCESS;
    if (cluster == nullptr) {
      result = api_.cuLaunchKernel(function, grid[0], grid[1], grid[2], block[0], block[1], block[2],
                                   static_cast<unsigned int>(shared_bytes), stream_, packed.pointers.data(), nullptr);
    } else {
      CUlaunchAttribute attribute{};
      attribute.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
      attribute.value.clusterDim.x = (*cluster)[0];
      attribute.value.clusterDim.y = (*cluster)[1];
      attribute.value.clusterDim.z = (*cluster)[2];
      CUlaunchConfig config{};
      config.gridDimX = grid[0];
      config.gridDimY = grid[1];
      config.gridDimZ = grid[2];
      config.blockDimX = block[0];
      config.blockDimY = block[1];
      config.blockDimZ = block[2];
      config.sharedMemBytes = static_cast<unsigned int>(shared_bytes);
      config.hStream = stream_;
      config.attrs = &attribute;
      config.numAttrs = 1;
      result = api_.cuLaunchKernelEx(&config, function, packed.pointers.data(), nullptr);
    }
    if (result == CUDA_SUCCESS) return;
    if (cuda::is_sticky_error(result)) {
      throw DeviceFault(fmt::format("{} failed: {}; the CUDA context is lost (an earlier kernel faulted), the "
                                    "process must be restarted",
                                    where(), cuda::describe_result(result)));
    }
    throw LaunchError(fmt::format("{} failed: {}{}", where(), cuda::describe_result(result),
                                  cluster != nullptr && result == CUDA_ERROR_INVALID_CLUSTER_SIZE
                                      ? "; the blocks of one cluster must fit on one GPC at once: use a smaller "
                                        "cluster or less shared memory per block"
                                      : ""));
  }

  // A tensor map for `spec` over the buffer at `address` (cuTensorMapEncodeTiled). Encoded once per
  // address and layout and kept: the timed loop relaunches with the same buffers, and re-encoding there
  // would add host work between launches. Stale entries of freed buffers are harmless (a map holds only
  // an address and a layout) and the cache is bounded.
  const CUtensorMap& encoded_tensor_map(const TensorMapSpec& spec, CUdeviceptr address) {
    std::string key = fmt::format("{:x}/{}/{}", address, static_cast<int>(spec.dtype), spec.rank);
    for (int d = 0; d < spec.rank; ++d) {
      key += fmt::format("/{},{},{},{}", spec.dims[d], d > 0 ? spec.strides[d - 1] : 0, spec.box[d],
                         spec.element_strides[d]);
    }
    key += fmt::format("/{},{},{},{}", spec.swizzle_bytes, spec.interleave_bytes, spec.l2_promotion_bytes,
                       spec.oob_nan);
    const auto found = tensor_maps_.find(key);
    if (found != tensor_maps_.end()) return found->second;
    if (api_.cuTensorMapEncodeTiled == nullptr) {
      throw LaunchError(fmt::format("the CUDA driver {} ({}) has no cuTensorMapEncodeTiled, which tensor maps "
                                    "need: update the GPU driver (CUDA 12.0 or newer)",
                                    version_text(api_.driver_version), api_.library));
    }
    const auto data_type = [&] {
      switch (spec.dtype) {
        case DType::float16: return CU_TENSOR_MAP_DATA_TYPE_FLOAT16;
        case DType::bfloat16: return CU_TENSOR_MAP_DATA_TYPE_BFLOAT16;
        case DType::float32: return CU_TENSOR_MAP_DATA_TYPE_FLOAT32;
        case DType::float64: return CU_TENSOR_MAP_DATA_TYPE_FLOAT64;
        case DType::int8:
        case DType::uint8: return CU_TENSOR_MAP_DATA_TYPE_UINT8;  // the copy moves bytes; signedness is the kernel's
        case DType::int32: return CU_TENSOR_MAP_DATA_TYPE_INT32;
        case DType::int64: return CU_TENSOR_MAP_DATA_TYPE_INT64;
      }
      return CU_TENSOR_MAP_DATA_TYPE_UINT8;
    }();
    const auto swizzle = spec.swizzle_bytes == 128  ? CU_TENSOR_MAP_SWIZZLE_128B
                         : spec.swizzle_bytes == 64 ? CU_TENSOR_MAP_SWIZZLE_64B
                         : spec.swizzle_bytes == 32 ? CU_TENSOR_MAP_SWIZZLE_32B
                                                    : CU_TENSOR_MAP_SWIZZLE_NONE;
    const auto interleave = spec.interleave_bytes == 32   ? CU_TENSOR_MAP_INTERLEAVE_32B
                            : spec.interleave_bytes == 16 ? CU_TENSOR_MAP_INTERLEAVE_16B
                                                          : CU_TENSOR_MAP_INTERLEAVE_NONE;
    const auto promotion = spec.l2_promotion_bytes == 256   ? CU_TENSOR_MAP_L2_PROMOTION_L2_256B
                           : spec.l2_promotion_bytes == 128 ? CU_TENSOR_MAP_L2_PROMOTION_L2_128B
                           : spec.l2_promotion_bytes == 64  ? CU_TENSOR_MAP_L2_PROMOTION_L2_64B
                                                            : CU_TENSOR_MAP_L2_PROMOTION_NONE;
    std::array<cuuint64_t, 5> dims{};
    std::array<cuuint64_t, 4> strides{};
    std::array<cuuint32_t, 5> box{};
    std::array<cuuint32_t, 5> element_strides{};
    for (int d = 0; d < spec.rank; ++d) {
      dims[d] = spec.dims[d];
      box[d] = spec.box[d];
      element_strides[d] = spec.element_strides[d];
      if (d > 0) strides[d - 1] = spec.strides[d - 1];
    }
    if (tensor_maps_.size() >= 1024) tensor_maps_.clear();
    CUtensorMap map{};
    const CUresult result = api_.cuTensorMapEncodeTiled(
        &map, data_type, static_cast<cuuint32_t>(spec.rank), reinterpret_cast<void*>(address), dims.data(),
        strides.data(), box.data(), element_strides.data(), interleave, swizzle, promotion,
        spec.oob_nan ? CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA : CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    if (result != CUDA_SUCCESS) {
      throw LaunchError(fmt::format("cuTensorMapEncodeTiled refused the tensor map (rank {}, dims {}, box {}): {}",
                                    spec.rank, fmt::join(dims.begin(), dims.begin() + spec.rank, " x "),
                                    fmt::join(box.begin(), box.begin() + spec.rank, " x "),
                                    cuda::describe_result(result)));
    }
    return tensor_maps_.emplace(key, map).first->second;
  }

  // A compile may come back without ptxas's report: NVRTC serves a program from the driver's compute
  // cache with an empty log (compile_with_nvrtc turns that cache off where NVRTC has --no-cache, but an
  // older NVRTC or another toolkit may still print nothing). Per-kernel resources must be there after
  // every successful compile, and the driver knows them once the cubin is loaded: load it, read each
  // planned kernel's attributes, unload. Spills and the stack frame stay unknown (-1); the local memory
  // per thread covers both. Kernels the cubin lacks are left out here; load() and kernel() report them.
  // Only a lost context is an error.
  void complete_resources_from_driver(CompiledProgram& program, const std::vector<std::string>& kernels) {
    if (program.target.rfind(info_.architecture, 0) != 0) return;  // a cubin for another device: cannot load
    std::vector<std::string> missing;
    for (const auto& name : kernels) {
      const bool reported = std::any_of(program.report.kernels.begin(), program.report.kernels.end(),
                                        [&](const KernelResources& k) { return k.name == name; });
      if (!reported && std::find(missing.begin(), missing.end(), name) == missing.end()) missing.push_back(name);
    }
    if (missing.empty() || program.binary.empty()) return;
    const auto check = [](CUresult result, const char* call) {
      if (cuda::is_sticky_error(result)) cuda::throw_driver_error(result, call, __FILE__, __LINE__);
      return result == CUDA_SUCCESS;
    };
    bind();
    CUmodule module = nullptr;
    if (!check(api_.cuModuleLoadData(&module, program.binary.data()), "cuModuleLoadData")) return;
    for (const auto& name : missing) {
      const auto symbol = program.symbols.find(name);
      const std::string& symbol_name = symbol != program.symbols.end() ? symbol->second : name;
      CUfunction function = nullptr;
      if (!check(api_.cuModuleGetFunction(&function, module, symbol_name.c_str()), "cuModuleGetFunction")) continue;
      KernelResources resources;
      resources.name = name;
      int registers = 0;
      int shared = 0;
      int local = 0;
      if (check(api_.cuFuncGetAttribute(&registers, CU_FUNC_ATTRIBUTE_NUM_REGS, function), "cuFuncGetAttribute") &&
          check(api_.cuFuncGetAttribute(&shared, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, function),
                "cuFuncGetAttribute") &&
          check(api_.cuFuncGetAttribute(&local, CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, function),
                "cuFuncGetAttribute")) {
        resources.registers = registers;
        resources.shared_bytes = shared;
        resources.local_bytes = local;
        program.report.kernels.push_back(resources);
      }
    }
    check(api_.cuModuleUnload(module), "cuModuleUnload");
  }

  // Makes the backend's context current on the calling thread. Cheap (a thread-local store in the
  // driver), and it lets a backend be used from a thread other than the one that created it.
  void bind() { KERNELSMITH_CU_CALL(api_.cuCtxSetCurrent(context_)); }

  KernelEntry& kernel_entry(std::uint64_t handle, const char* operation) {
    const auto found = kernels_.find(reinterpret_cast<CUfunction>(handle));
    if (found == kernels_.end()) {
      throw NotFoundError(fmt::format("{}: 0x{:x} is not a kernel of a module loaded by this backend", operation,
                                      handle));
    }
    return found->second;
  }

  const std::vector<KernelParam>& kernel_params_of(KernelEntry& entry, CUfunction function) {
    if (!entry.params_known) {
      entry.params = query_params(function);
      entry.params_known = true;
    }
    return entry.params;
  }

  std::vector<KernelParam> query_params(CUfunction function) {
    std::vector<KernelParam> params;
    if (api_.cuFuncGetParamInfo == nullptr) return params;  // a driver before CUDA 12.4 cannot say
    bind();
    for (std::size_t index = 0;; ++index) {
      std::size_t offset = 0;
      std::size_t size = 0;
      const CUresult result = api_.cuFuncGetParamInfo(function, index, &offset, &size);
      if (result == CUDA_ERROR_INVALID_VALUE) break;  // past the last parameter
      if (result != CUDA_SUCCESS) {
        if (cuda::is_sticky_error(result)) cuda::throw_driver_error(result, "cuFuncGetParamInfo", __FILE__, __LINE__);
        return {};  // the driver cannot say for this kernel: the caller checks less
      }
      KernelParam param;
      param.size = size;
      params.push_back(param);
    }
    return params;
  }

  // What cuLaunchKernel reads: one slot per argument, `pointers[i]` at the bytes of argument i.
  struct PackedArguments {
    std::vector<std::uint64_t> values;  ///< integers and buffer addresses
    std::vector<CUtensorMap> maps;      ///< tensor maps (128 bytes, 64-byte aligned), copied from the cache
    std::vector<void*> pointers;
  };

  // One 8-byte slot per argument, holding the bytes the kernel's parameter expects, or a 128-byte tensor map.
  // With the kernel's parameter sizes known, integers are narrowed or widened to them when the value fits;
  // anything lossy or a buffer passed where no pointer fits is refused.
  template <typename Where>
  PackedArguments pack_arguments(const KernelEntry& entry, const std::vector<KernelParam>& params,
                                 const std::vector<KernelArg>& args, const Where& where) {
    if (!params.empty() && params.size() != args.size()) {
      throw LaunchError(fmt::format("{} failed: the kernel takes {} parameter(s) but the plan passes {}", where(),
                                    params.size(), args.size()));
    }
    PackedArguments packed;
    packed.values.assign(args.size(), 0);
    std::vector<std::uint64_t>& values = packed.values;
    std::vector<std::size_t> map_of_arg(args.size(), args.size());
    for (std::size_t i = 0; i < args.size(); ++i) {
      const KernelArg& arg = args[i];
      const std::size_t expected = params.empty() ? 0 : params[i].size;
      const auto refuse = [&](const std::string& why) {
        return LaunchError(fmt::format("{} failed: argument {} of '{}': {}", where(), i + 1, entry.name, why));
      };
      switch (arg.kind) {
        case KernelArg::Kind::tensor_map: {
          if (arg.tensor_map != nullptr && arg.tensor_map->rank == 0) {
            // A map the plan does not need under these sizes (when(...) false): zero bytes, never read.
            map_of_arg[i] = packed.maps.size();
            packed.maps.emplace_back();
            std::memset(&packed.maps.back(), 0, sizeof(CUtensorMap));
            break;
          }
          if (arg.tensor_map == nullptr || buffers_.count(static_cast<CUdeviceptr>(arg.buffer)) == 0) {
            throw refuse(fmt::format("0x{:x} is not a buffer of this backend, or the tensor map has no layout",
                                     arg.buffer));
          }
          if (expected != 0 && expected != sizeof(CUtensorMap)) {
            throw refuse(fmt::format("a tensor map is passed where the kernel takes a {}-byte value; declare the "
                                     "parameter `const __grid_constant__ CUtensorMap`",
                                     expected));
          }
          try {
            map_of_arg[i] = packed.maps.size();
            packed.maps.push_back(encoded_tensor_map(*arg.tensor_map, static_cast<CUdeviceptr>(arg.buffer)));
          } catch (const LaunchError& error) {
            throw refuse(error.what());
          }
          break;
        }
        case KernelArg::Kind::buffer: {
          if (buffers_.count(static_cast<CUdeviceptr>(arg.buffer)) == 0) {
            throw refuse(fmt::format("0x{:x} is not a buffer of this backend", arg.buffer));
          }
          if (expected != 0 && expected != sizeof(CUdeviceptr)) {
            throw refuse(fmt::format("a buffer is passed where the kernel takes a {}-byte value, not a pointer",
                                     expected));
          }
          const CUdeviceptr pointer = static_cast<CUdeviceptr>(arg.buffer);
          std::memcpy(&values[i], &pointer, sizeof(pointer));
          break;
        }
        case KernelArg::Kind::int32:
        case KernelArg::Kind::int64: {
          const std::size_t size = expected != 0 ? expected : (arg.kind == KernelArg::Kind::int32 ? 4 : 8);
          if (size == 4) {
            if (arg.value < std::numeric_limits<std::int32_t>::min() ||
                arg.value > std::numeric_limits<std::int32_t>::max()) {
              throw refuse(fmt::format("the value {} does not fit the kernel's 32-bit integer parameter", arg.value));
            }
            const auto narrow = static_cast<std::int32_t>(arg.value);
            std::memcpy(&values[i], &narrow, sizeof(narrow));
          } else if (size == 8) {
            const std::int64_t wide = arg.value;
            std::memcpy(&values[i], &wide, sizeof(wide));
          } else {
            throw refuse(fmt::format("an integer is passed where the kernel takes a {}-byte parameter", size));
          }
          break;
        }
      }
    }
    // Pointers last: `maps` no longer grows, so its elements stay where they are.
    packed.pointers.resize(args.size());
    for (std::size_t i = 0; i < args.size(); ++i) {
      packed.pointers[i] = map_of_arg[i] < packed.maps.size() ? static_cast<void*>(&packed.maps[map_of_arg[i]])
                                                              : static_cast<void*>(&values[i]);
    }
    return packed;
  }

  void check_range(const char* operation, std::uint64_t buffer, std::size_t bytes) const {
    const auto found = buffers_.find(static_cast<CUdeviceptr>(buffer));
    if (found == buffers_.end()) {
      throw NotFoundError(fmt::format("{}: 0x{:x} is not a CUDA buffer of this backend", operation, buffer));
    }
    if (bytes > found->second) {
      throw ValidationError(fmt::format("{}: {} bytes do not fit the buffer of {} bytes", operation, bytes,
                                        found->second));
    }
  }

  std::size_t allocated_bytes() const {
    std::size_t total = 0;
    for (const auto& [pointer, size] : buffers_) {
      if (external_.count(pointer) == 0) total += size;
    }
    return total;
  }

  // Frees everything this backend made. Never throws: after a fault every call fails, and that is fine.
  void release() noexcept {
    if (context_ == nullptr) return;
    KERNELSMITH_CU_CALL_NOEXCEPT(api_.cuCtxSetCurrent(context_));
    for (const auto& [pointer, size] : buffers_) {
      if (external_.count(pointer) == 0) KERNELSMITH_CU_CALL_NOEXCEPT(api_.cuMemFree(pointer));
    }
    buffers_.clear();
    external_.clear();
    for (const auto& [module, symbols] : modules_) {
      drop_globals(module);
      KERNELSMITH_CU_CALL_NOEXCEPT(api_.cuModuleUnload(module));
    }
    modules_.clear();
    kernels_.clear();
    if (timer_start_ != nullptr) KERNELSMITH_CU_CALL_NOEXCEPT(api_.cuEventDestroy(timer_start_));
    if (timer_stop_ != nullptr) KERNELSMITH_CU_CALL_NOEXCEPT(api_.cuEventDestroy(timer_stop_));
    if (stream_ != nullptr) KERNELSMITH_CU_CALL_NOEXCEPT(api_.cuStreamDestroy(stream_));
    if (capture_stream_ != nullptr) KERNELSMITH_CU_CALL_NOEXCEPT(api_.cuStreamDestroy(capture_stream_));
    KERNELSMITH_CU_CALL_NOEXCEPT(api_.cuDevicePrimaryCtxRelease(device_));
    timer_start_ = timer_stop_ = nullptr;
    stream_ = capture_stream_ = nullptr;
    context_ = nullptr;
  }

  const DriverApi& api_;
  DeviceInfo info_;
  std::string compile_target_;
  CUdevice device_ = 0;
  CUcontext context_ = nullptr;
  CUstream stream_ = nullptr;
  CUstream capture_stream_ = nullptr;  ///< record_timed_batch's, non-blocking; created on first use
  bool recording_ = false;             ///< record_timed_batch is capturing: stream_ is capture_stream_
  CUevent timer_start_ = nullptr;
  CUevent timer_stop_ = nullptr;
  bool timer_running_ = false;
  std::map<CUdeviceptr, std::size_t> buffers_;
  std::set<CUdeviceptr> external_;  ///< the caller's memory (adopt_external): never freed here
  std::map<CUmodule, std::map<std::string, std::string>> modules_;
  /// A module global and the bytes it held when its module was loaded.
  /// A module global and a device copy of the bytes it held when its module was loaded. The copy lives on
  /// the device so that a reset is a copy enqueued on the stream, which a timed batch can record.
  struct ModuleGlobal {
    CUdeviceptr address = 0;
    std::size_t bytes = 0;
    CUdeviceptr initial = 0;  ///< this backend's allocation, freed with the module (drop_globals)
  };
  std::map<CUmodule, std::vector<ModuleGlobal>> globals_;

  // Copies the initial value of every global the cubin defines, for reset_module_state. Each entry is
  // kept as soon as its copy is allocated, so that drop_globals frees it when a later step fails.
  void snapshot_globals(CUmodule module, const CompiledProgram& program) {
    std::vector<ModuleGlobal>& globals = globals_[module];
    for (const std::string& name : cuda::cubin_global_variables(program.binary)) {
      ModuleGlobal global;
      if (api_.cuModuleGetGlobal(&global.address, &global.bytes, module, name.c_str()) != CUDA_SUCCESS ||
          global.bytes == 0) {
        continue;
      }
      KERNELSMITH_CU_CALL(api_.cuMemAlloc(&global.initial, global.bytes));
      globals.push_back(global);
      // Nothing queued on the stream can write the global yet: the module was loaded just now.
      KERNELSMITH_CU_CALL(api_.cuMemcpyDtoDAsync(global.initial, global.address, global.bytes, stream_));
    }
  }

  // Frees the initial-value copies of a module's globals and forgets them. Never throws.
  void drop_globals(CUmodule module) noexcept {
    const auto found = globals_.find(module);
    if (found == globals_.end()) return;
    for (const ModuleGlobal& global : found->second) KERNELSMITH_CU_CALL_NOEXCEPT(api_.cuMemFree(global.initial));
    globals_.erase(found);
  }
  std::map<CUfunction, KernelEntry> kernels_;
  std::map<std::string, CUtensorMap> tensor_maps_;  ///< encoded_tensor_map's cache, by address and layout
};

}  // namespace

BackendInfo probe_cuda() {
  BackendInfo info;
  info.name = "cuda";
  std::string compiler_problem;
  try {
    const cuda::NvrtcApi& compiler = nvrtc();
    info.can_compile = true;
    info.details.push_back(compiler.description());
    const std::string include = cuda::toolkit_include_directory();
    info.details.push_back(include.empty()
                               ? std::string("toolkit headers not found (cuda_fp16.h and cuda_bf16.h cannot be "
                                             "included): set CUDA_HOME")
                               : "toolkit headers " + include);
  } catch (const std::exception& error) {
    compiler_problem = error.what();
    info.details.push_back(std::string("no compiler: ") + error.what());
  }

  try {
    const DriverApi& api = driver();
    info.details.push_back(fmt::format("CUDA driver {} ({})", version_text(api.driver_version), api.library));
    initialise_driver(api);
    int count = 0;
    KERNELSMITH_CU_CALL(api.cuDeviceGetCount(&count));
    for (int ordinal = 0; ordinal < count; ++ordinal) info.devices.push_back(query_device(api, ordinal));
    if (count == 0) {
      info.reason = "the CUDA driver loaded but sees no device (check CUDA_VISIBLE_DEVICES and nvidia-smi)";
    } else if (!info.can_compile) {
      info.reason = "NVRTC is needed to compile candidates: " + compiler_problem;
    } else {
      info.available = true;
    }
  } catch (const std::exception& error) {
    info.reason = error.what();
    info.devices.clear();
  }
  return info;
}

std::unique_ptr<Backend> create_cuda_backend(int device_index) { return std::make_unique<CudaBackend>(device_index); }

CompiledProgram compile_cuda_offline(const std::string& source, const CompileOptions& options) {
  if (options.target.empty()) {
    throw ValidationError("compiling CUDA with no device needs options.target, the architecture to compile for, "
                          "e.g. \"sm_90\" (H100/H200) or \"sm_80\" (A100)");
  }
  return cuda::compile_with_nvrtc(source, options, options.target);
}

std::string cuda_device_compile_target(const std::string& architecture) {
  DeviceInfo device;
  device.architecture = architecture;
  return compile_target_for(device, nvrtc());
}

}  // namespace kernelsmith::detail
