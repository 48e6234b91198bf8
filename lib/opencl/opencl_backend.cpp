// The OpenCL backend: any ICD (PoCL on CPUs, vendor GPU drivers). Programs are OpenCL C source built
// for the device when they are loaded; the compile step only packs the macro definitions.
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <regex>
#include <string>
#include <unordered_map>
#include <vector>

#include "backend_registry.hpp"
#include "evaluate/build_failure.hpp"
#include "kernelsmith/backend.hpp"
#include "kernelsmith/error.hpp"
#include "opencl/opencl_api.hpp"

namespace kernelsmith::detail {
namespace {

using opencl::Api;
using opencl::error_name;

// Vendor extensions' device queries (cl_ext.h values; not every header defines them).
constexpr cl_device_info kDeviceWarpSizeNv = 0x4003;
constexpr cl_device_info kDeviceWavefrontWidthAmd = 0x4043;
constexpr cl_int kPlatformNotFoundKhr = -1001;

std::string platform_string(const Api& cl, cl_platform_id platform, cl_platform_info what) {
  std::size_t size = 0;
  if (cl.clGetPlatformInfo(platform, what, 0, nullptr, &size) != CL_SUCCESS || size == 0) return {};
  std::string value(size, '\0');
  if (cl.clGetPlatformInfo(platform, what, size, value.data(), nullptr) != CL_SUCCESS) return {};
  value.resize(std::strlen(value.c_str()));
  return value;
}

std::string device_string(const Api& cl, cl_device_id device, cl_device_info what) {
  std::size_t size = 0;
  if (cl.clGetDeviceInfo(device, what, 0, nullptr, &size) != CL_SUCCESS || size == 0) return {};
  std::string value(size, '\0');
  if (cl.clGetDeviceInfo(device, what, size, value.data(), nullptr) != CL_SUCCESS) return {};
  value.resize(std::strlen(value.c_str()));
  return value;
}

template <typename T>
T device_value(const Api& cl, cl_device_id device, cl_device_info what, T fallback) {
  T value{};
  if (cl.clGetDeviceInfo(device, what, sizeof(T), &value, nullptr) != CL_SUCCESS) return fallback;
  return value;
}

struct DeviceHandle {
  cl_platform_id platform = nullptr;
  cl_device_id device = nullptr;
  DeviceInfo info;
};

DeviceInfo describe_device(const Api& cl, cl_platform_id platform, cl_device_id device, int index) {
  DeviceInfo info;
  info.backend = "opencl";
  info.index = index;
  info.name = device_string(cl, device, CL_DEVICE_NAME);
  info.vendor = device_string(cl, device, CL_DEVICE_VENDOR);
  info.platform = platform_string(cl, platform, CL_PLATFORM_NAME);
  info.architecture = device_string(cl, device, CL_DEVICE_VERSION);
  info.driver_version = device_string(cl, device, CL_DRIVER_VERSION);
  info.compute_units = static_cast<int>(device_value<cl_uint>(cl, device, CL_DEVICE_MAX_COMPUTE_UNITS, 0));
  info.max_threads_per_block =
      static_cast<int>(device_value<std::size_t>(cl, device, CL_DEVICE_MAX_WORK_GROUP_SIZE, 0));
  info.shared_per_block = static_cast<std::int64_t>(device_value<cl_ulong>(cl, device, CL_DEVICE_LOCAL_MEM_SIZE, 0));
  // OpenCL has no opt-in beyond the local memory size.
  info.shared_per_block_optin = info.shared_per_block;
  info.l2_bytes = static_cast<std::int64_t>(device_value<cl_ulong>(cl, device, CL_DEVICE_GLOBAL_MEM_CACHE_SIZE, 0));
  info.global_memory_bytes =
      static_cast<std::int64_t>(device_value<cl_ulong>(cl, device, CL_DEVICE_GLOBAL_MEM_SIZE, 0));
  info.max_allocation_bytes =
      static_cast<std::int64_t>(device_value<cl_ulong>(cl, device, CL_DEVICE_MAX_MEM_ALLOC_SIZE, 0));
  info.clock_mhz = static_cast<int>(device_value<cl_uint>(cl, device, CL_DEVICE_MAX_CLOCK_FREQUENCY, 0));
  const auto type = device_value<cl_device_type>(cl, device, CL_DEVICE_TYPE, 0);
  info.is_gpu = (type & CL_DEVICE_TYPE_GPU) != 0;
  // Lanes that run in lock step, where the vendor says; 1 (no such notion) elsewhere.
  info.warp_size = 1;
  if (const auto nv = device_value<cl_uint>(cl, device, kDeviceWarpSizeNv, 0); nv > 0) {
    info.warp_size = static_cast<int>(nv);
  } else if (const auto amd = device_value<cl_uint>(cl, device, kDeviceWavefrontWidthAmd, 0); amd > 0) {
    info.warp_size = static_cast<int>(amd);
  }
  return info;
}

// Every device of every platform, numbered in that order. Throws DeviceError on an API failure other
// than "no platform".
std::vector<DeviceHandle> enumerate_devices(const Api& cl) {
  cl_uint platform_count = 0;
  cl_int status = cl.clGetPlatformIDs(0, nullptr, &platform_count);
  if (status == kPlatformNotFoundKhr || (status == CL_SUCCESS && platform_count == 0)) return {};
  if (status != CL_SUCCESS) {
    throw DeviceError(fmt::format("clGetPlatformIDs failed: {}", error_name(status)));
  }
  std::vector<cl_platform_id> platforms(platform_count);
  status = cl.clGetPlatformIDs(platform_count, platforms.data(), nullptr);
  if (status != CL_SUCCESS) throw DeviceError(fmt::format("clGetPlatformIDs failed: {}", error_name(status)));

  std::vector<DeviceHandle> devices;
  for (cl_platform_id platform : platforms) {
    cl_uint device_count = 0;
    status = cl.clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 0, nullptr, &device_count);
    if (status == CL_DEVICE_NOT_FOUND || device_count == 0) continue;
    if (status != CL_SUCCESS) continue;  // a broken platform must not hide the others
    std::vector<cl_device_id> ids(device_count);
    if (cl.clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, device_count, ids.data(), nullptr) != CL_SUCCESS) continue;
    for (cl_device_id id : ids) {
      DeviceHandle handle;
      handle.platform = platform;
      handle.device = id;
      handle.info = describe_device(cl, platform, id, static_cast<int>(devices.size()));
      devices.push_back(std::move(handle));
    }
  }
  return devices;
}

// The file names a driver's compiler gives the source (PoCL: ~/.cache/pocl/kcache/tempfile_XXXXXX.cl; others
// <kernel>, <source>, input.cl) become "candidate.cl", as NVRTC's logs say "candidate.cu": a log line then
// points at a line of the source the user wrote, not at a temporary file that no longer exists.
std::string name_source_in_log(const std::string& log) {
  static const std::regex driver_file(
      R"((^|[\s'"(])(?:[^\s:'"()]*\.cl|<kernel>|<source>|<stdin>|[^\s:'"()]*CompileSource)(?=:\d+(:\d+)?:))");
  return std::regex_replace(log, driver_file, "$1candidate.cl");
}

// Inline assembly in an OpenCL C program: on a CPU device (PoCL) the kernel runs as native code in the
// evaluating process, and an asm block could make system calls (open a file, a socket) that OpenCL C cannot
// express. Refused as defence in depth (docs/evaluation.md, "Where the expected outputs live"). Returns the
// line and the word of the first use of asm, __asm or __asm__ outside comments and literals (lines joined
// where a backslash ends them, as the preprocessor joins them), or a line of 0.
std::pair<std::size_t, std::string> inline_assembly_use(const std::string& text) {
  std::size_t line = 1;
  std::size_t i = 0;
  const std::size_t n = text.size();
  // The next character after skipping line splices; counts the lines they cross.
  auto at = [&](std::size_t& k) -> char {
    while (k + 1 < n && text[k] == '\\' && (text[k + 1] == '\n' || (text[k + 1] == '\r' && k + 2 < n && text[k + 2] == '\n'))) {
      k += text[k + 1] == '\r' ? 3 : 2;
      ++line;
    }
    return k < n ? text[k] : '\0';
  };
  auto is_word = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_'; };
  while (i < n) {
    const char c = at(i);
    if (i >= n) break;
    std::size_t next = i + 1;
    if (c == '\n') {
      ++line;
      ++i;
    } else if (c == '/' && at(next) == '/') {
      while (i < n && at(i) != '\n') ++i;
    } else if (c == '/' && at(next) == '*') {
      i = next + 1;
      while (i < n) {
        const char d = at(i);
        std::size_t after = i + 1;
        if (d == '*' && at(after) == '/') {
          i = after + 1;
          break;
        }
        if (d == '\n') ++line;
        ++i;
      }
    } else if (c == '"' || c == '\'') {
      ++i;
      while (i < n) {
        const char d = at(i);
        if (d == '\\') {
          i += 2;
          continue;
        }
        ++i;
        if (d == c || d == '\n') {
          if (d == '\n') ++line;
          break;
        }
      }
    } else if (is_word(c)) {
      const std::size_t word_line = line;
      std::string word;
      while (i < n && is_word(at(i))) word += text[i++];
      if (word == "asm" || word == "__asm" || word == "__asm__") return {word_line, word};
    } else {
      ++i;
    }
  }
  return {0, ""};
}

// Put in front of every OpenCL C program: a keyword of inline assembly that token pasting assembles
// (a ## sm) is rescanned for macros, meets these and fails to compile. The words themselves are refused
// in the text (inline_assembly_use), so a program can neither #undef nor redefine them.
constexpr const char* kInlineAssemblyGuard =
    "#define asm KERNELSMITH_REFUSES_INLINE_ASSEMBLY\n"
    "#define __asm KERNELSMITH_REFUSES_INLINE_ASSEMBLY\n"
    "#define __asm__ KERNELSMITH_REFUSES_INLINE_ASSEMBLY\n"
    "#line 1\n";

void check(cl_int status, const char* call) {
  if (status != CL_SUCCESS) throw DeviceError(fmt::format("{} failed: {}", call, error_name(status)));
}

// Errors of commands that ran on the device: the queue or context may be unusable afterwards.
void check_device(cl_int status, const char* call) {
  if (status != CL_SUCCESS) {
    throw DeviceFault(fmt::format("{} failed: {}: the device reported an error while running queued work "
                                  "(an out-of-bounds access on most GPU drivers)",
                                  call, error_name(status)));
  }
}

class OpenClBackend final : public Backend {
 public:
  OpenClBackend(const Api& cl, DeviceHandle device) : cl_(cl), device_(std::move(device)) {
    cl_int status = CL_SUCCESS;
    const cl_context_properties properties[] = {
        CL_CONTEXT_PLATFORM, reinterpret_cast<cl_context_properties>(device_.platform), 0};
    context_ = cl_.clCreateContext(properties, 1, &device_.device, nullptr, nullptr, &status);
    if (status != CL_SUCCESS || context_ == nullptr) {
      throw BackendUnavailableError(fmt::format("OpenCL device {} ('{}'): clCreateContext failed: {}",
                                                device_.info.index, device_.info.name, error_name(status)));
    }
    // Profiling gives the device timer (start of the first kernel to the end of the last).
    queue_ = cl_.clCreateCommandQueue(context_, device_.device, CL_QUEUE_PROFILING_ENABLE, &status);
    if (status != CL_SUCCESS || queue_ == nullptr) {
      cl_.clReleaseContext(context_);
      throw BackendUnavailableError(fmt::format(
          "OpenCL device {} ('{}'): clCreateCommandQueue with profiling failed: {}", device_.info.index,
          device_.info.name, error_name(status)));
    }
  }

  ~OpenClBackend() override {
    // No-throw cleanup: whatever is left is released, errors ignored (the context may be lost).
    release_timer_events();
    if (queue_ != nullptr) cl_.clFinish(queue_);
    for (auto& [handle, entry] : kernels_) cl_.clReleaseKernel(entry.kernel);
    for (auto& [handle, program] : programs_) cl_.clReleaseProgram(program);
    for (auto& [handle, entry] : buffers_) cl_.clReleaseMemObject(entry.memory);
    if (queue_ != nullptr) cl_.clReleaseCommandQueue(queue_);
    if (context_ != nullptr) cl_.clReleaseContext(context_);
  }

  std::string name() const override { return "opencl"; }
  std::string language() const override { return "opencl"; }
  const DeviceInfo& device() const override { return device_.info; }

  CompiledProgram compile(const std::string& source, const CompileOptions& options) override {
    // OpenCL C is built for a device when it is loaded (clBuildProgram); the "binary" is the source
    // with the macro definitions in front. `#line 1` keeps the build log's line numbers those of the
    // candidate's own file.
    CompiledProgram program;
    program.language = "opencl";
    program.target = target_name();
    std::string text;
    for (const auto& [name, value] : options.defines) text += fmt::format("#define {} {}\n", name, value);
    if (!options.defines.empty()) text += "#line 1\n";
    text += source;
    program.binary.assign(text.begin(), text.end());
    program.report.ok = true;
    program.report.target = program.target;
    program.report.log = "";
    return program;
  }

  std::uint64_t load(const CompiledProgram& program) override {
    if (program.language != "opencl") {
      throw ValidationError(fmt::format("the OpenCL backend cannot load a '{}' program", program.language));
    }
    const std::string given(program.binary.begin(), program.binary.end());
    if (const auto [line, word] = inline_assembly_use(given); line > 0) {
      throw BuildFailure(fmt::format("the OpenCL C program uses inline assembly ('{}' on line {}), which the "
                                     "evaluator refuses: write the kernel in OpenCL C without asm blocks",
                                     word, line),
                         fmt::format("candidate.cl:{}: error: inline assembly ('{}') is refused: on a CPU device it "
                                     "would run as native code in the evaluating process",
                                     line, word));
    }
    const std::string source = kInlineAssemblyGuard + given;
    const char* text = source.c_str();
    const std::size_t length = source.size();
    cl_int status = CL_SUCCESS;
    cl_program handle = cl_.clCreateProgramWithSource(context_, 1, &text, &length, &status);
    check(status, "clCreateProgramWithSource");
    // Argument info lets the harness check each launch's arguments against the kernel's parameters.
    status = cl_.clBuildProgram(handle, 1, &device_.device, "-cl-kernel-arg-info", nullptr, nullptr);
    if (status == CL_INVALID_BUILD_OPTIONS || status == CL_INVALID_COMPILER_OPTIONS) {
      status = cl_.clBuildProgram(handle, 1, &device_.device, "", nullptr, nullptr);
    }
    if (status == CL_BUILD_PROGRAM_FAILURE || status == CL_COMPILE_PROGRAM_FAILURE) {
      std::string log = name_source_in_log(build_log(handle));
      cl_.clReleaseProgram(handle);
      throw BuildFailure(fmt::format("the OpenCL compiler of '{}' rejected the program", device_.info.name),
                         std::move(log));
    }
    if (status != CL_SUCCESS) {
      cl_.clReleaseProgram(handle);
      throw DeviceError(fmt::format("clBuildProgram failed: {}", error_name(status)));
    }
    const std::uint64_t id = next_handle_++;
    programs_[id] = handle;
    return id;
  }

  void unload(std::uint64_t module) override {
    auto found = programs_.find(module);
    if (found == programs_.end()) {
      throw NotFoundError(fmt::format("unload: {} is not a program loaded by this OpenCL backend", module));
    }
    for (auto it = kernels_.begin(); it != kernels_.end();) {
      if (it->second.module == module) {
        cl_.clReleaseKernel(it->second.kernel);
        it = kernels_.erase(it);
      } else {
        ++it;
      }
    }
    cl_.clReleaseProgram(found->second);
    programs_.erase(found);
  }

  std::uint64_t kernel(std::uint64_t module, const std::string& name) override {
    cl_program program = program_of(module);
    if (name.find('<') != std::string::npos) {  // a CUDA template instance such as "scale<2>"
      const std::string names = kernel_names(program);
      throw NotFoundError(fmt::format("kernel '{}' names template arguments, but OpenCL C has no templates: launch "
                                      "a __kernel function by its plain name (its __kernel functions: {})",
                                      name, names.empty() ? "none" : names));
    }
    cl_int status = CL_SUCCESS;
    cl_kernel handle = cl_.clCreateKernel(program, name.c_str(), &status);
    if (status == CL_INVALID_KERNEL_NAME || handle == nullptr) {
      const std::string names = kernel_names(program);
      throw NotFoundError(fmt::format("kernel '{}' is not defined in the program (its __kernel functions: {})",
                                      name, names.empty() ? "none" : names));
    }
    check(status, "clCreateKernel");
    KernelEntry entry;
    entry.kernel = handle;
    entry.module = module;
    entry.name = name;
    entry.params = query_params(handle);
    const std::uint64_t id = next_handle_++;
    kernels_[id] = std::move(entry);
    return id;
  }

  std::vector<KernelParam> kernel_params(std::uint64_t kernel) override { return kernel_of(kernel).params; }

  KernelResources kernel_resources(std::uint64_t kernel) override {
    const KernelEntry& entry = kernel_of(kernel);
    KernelResources resources;
    resources.name = entry.name;
    cl_ulong local = 0;
    if (cl_.clGetKernelWorkGroupInfo(entry.kernel, device_.device, CL_KERNEL_LOCAL_MEM_SIZE, sizeof(local), &local,
                                     nullptr) == CL_SUCCESS) {
      resources.shared_bytes = static_cast<std::int64_t>(local);
    }
    cl_ulong priv = 0;
    if (cl_.clGetKernelWorkGroupInfo(entry.kernel, device_.device, CL_KERNEL_PRIVATE_MEM_SIZE, sizeof(priv), &priv,
                                     nullptr) == CL_SUCCESS) {
      resources.local_bytes = static_cast<std::int64_t>(priv);
    }
    return resources;
  }

  std::uint64_t allocate(std::size_t bytes) override {
    cl_int status = CL_SUCCESS;
    // A zero-sized buffer is invalid in OpenCL; one byte stands in for it.
    cl_mem memory = cl_.clCreateBuffer(context_, CL_MEM_READ_WRITE, std::max<std::size_t>(bytes, 1), nullptr, &status);
    if (status != CL_SUCCESS || memory == nullptr) {
      throw DeviceError(fmt::format("clCreateBuffer of {} bytes failed: {}", bytes, error_name(status)));
    }
    const std::uint64_t id = next_handle_++;
    buffers_[id] = BufferEntry{memory, bytes};
    return id;
  }

  void free(std::uint64_t buffer) override {
    auto found = buffers_.find(buffer);
    if (found == buffers_.end()) {
      throw NotFoundError(fmt::format("free: no OpenCL buffer has handle {}", buffer));
    }
    cl_.clReleaseMemObject(found->second.memory);
    buffers_.erase(found);
  }

  void write(std::uint64_t buffer, const void* host, std::size_t bytes) override {
    const BufferEntry& entry = buffer_of(buffer, bytes, "write");
    if (bytes == 0) return;
    check_device(cl_.clEnqueueWriteBuffer(queue_, entry.memory, CL_TRUE, 0, bytes, host, 0, nullptr, nullptr),
                 "clEnqueueWriteBuffer");
  }

  void read(std::uint64_t buffer, void* host, std::size_t bytes) override {
    const BufferEntry& entry = buffer_of(buffer, bytes, "read");
    if (bytes == 0) return;
    check_device(cl_.clEnqueueReadBuffer(queue_, entry.memory, CL_TRUE, 0, bytes, host, 0, nullptr, nullptr),
                 "clEnqueueReadBuffer");
  }

  void fill(std::uint64_t buffer, std::uint8_t byte, std::size_t bytes) override {
    const BufferEntry& entry = buffer_of(buffer, bytes, "fill");
    if (bytes == 0) return;
    check_device(cl_.clEnqueueFillBuffer(queue_, entry.memory, &byte, 1, 0, bytes, 0, nullptr, nullptr),
                 "clEnqueueFillBuffer");
  }

  void launch(std::uint64_t kernel, Dim3 grid, Dim3 block, std::size_t shared_bytes,
              const std::vector<KernelArg>& args) override {
    KernelEntry& entry = kernel_of(kernel);
    // Plan arguments go to the parameters in order, skipping __local pointers, which receive the
    // launch's dynamic shared memory.
    std::size_t local_params = 0;
    for (const auto& param : entry.params) local_params += param.is_dynamic_shared ? 1 : 0;
    if (shared_bytes > 0 && local_params == 0 && !entry.params.empty()) {
      throw LaunchError(fmt::format(
          "kernel '{}': {} bytes of dynamic shared memory were requested but the kernel has no __local "
          "pointer parameter to receive them; declare __local arrays inside the kernel and pass 0, or add "
          "a `__local T* scratch` parameter",
          entry.name, shared_bytes));
    }
    if (shared_bytes == 0 && local_params > 0) {
      throw LaunchError(fmt::format("kernel '{}' has a __local pointer parameter but the launch gives it 0 bytes "
                                    "of dynamic shared memory (the third <<<>>> value)",
                                    entry.name));
    }
    const std::size_t expected_args = entry.params.empty() ? args.size() : entry.params.size() - local_params;
    if (args.size() != expected_args) {
      throw LaunchError(fmt::format("kernel '{}' takes {} arguments, the launch passes {}", entry.name,
                                    expected_args, args.size()));
    }
    std::size_t next_arg = 0;
    const std::size_t param_count = entry.params.empty() ? args.size() : entry.params.size();
    for (std::size_t index = 0; index < param_count; ++index) {
      cl_int status = CL_SUCCESS;
      if (!entry.params.empty() && entry.params[index].is_dynamic_shared) {
        status = cl_.clSetKernelArg(entry.kernel, static_cast<cl_uint>(index), shared_bytes, nullptr);
      } else {
        const KernelArg& arg = args[next_arg++];
        switch (arg.kind) {
          case KernelArg::Kind::buffer: {
            cl_mem memory = buffer_of(arg.buffer, 0, "launch").memory;
            status = cl_.clSetKernelArg(entry.kernel, static_cast<cl_uint>(index), sizeof(cl_mem), &memory);
            break;
          }
          case KernelArg::Kind::int32: {
            const cl_int value = static_cast<cl_int>(arg.value);
            status = cl_.clSetKernelArg(entry.kernel, static_cast<cl_uint>(index), sizeof(value), &value);
            break;
          }
          case KernelArg::Kind::int64: {
            const cl_long value = static_cast<cl_long>(arg.value);
            status = cl_.clSetKernelArg(entry.kernel, static_cast<cl_uint>(index), sizeof(value), &value);
            break;
          }
          case KernelArg::Kind::tensor_map:
            // The plan binder refuses tensor maps on OpenCL before a launch gets here.
            throw LaunchError(fmt::format("kernel '{}': parameter {} is a tensor map, which OpenCL does not have "
                                          "(CUDA on sm_90 and newer only)",
                                          entry.name, index));
        }
      }
      if (status != CL_SUCCESS) {
        throw LaunchError(fmt::format("kernel '{}': clSetKernelArg for parameter {} failed: {}", entry.name,
                                      index, error_name(status)));
      }
    }
    std::size_t global[3];
    std::size_t local[3];
    for (int d = 0; d < 3; ++d) {
      local[d] = block[d];
      global[d] = static_cast<std::size_t>(grid[d]) * block[d];
    }
    cl_event event = nullptr;
    const cl_int status = cl_.clEnqueueNDRangeKernel(queue_, entry.kernel, 3, nullptr, global, local, 0, nullptr,
                                                     timing_ ? &event : nullptr);
    if (status != CL_SUCCESS) {
      throw LaunchError(fmt::format("kernel '{}' with grid ({}, {}, {}) and block ({}, {}, {}): "
                                    "clEnqueueNDRangeKernel failed: {}",
                                    entry.name, grid[0], grid[1], grid[2], block[0], block[1], block[2],
                                    error_name(status)));
    }
    if (event != nullptr) timer_events_.push_back(event);
  }

  void synchronize() override { check_device(cl_.clFinish(queue_), "clFinish"); }

  void timer_start() override {
    release_timer_events();
    timing_ = true;
  }

  double timer_stop_ms() override {
    timing_ = false;
    if (timer_events_.empty()) return 0.0;
    struct Release {
      OpenClBackend* self;
      ~Release() { self->release_timer_events(); }
    } release{this};
    check_device(cl_.clWaitForEvents(static_cast<cl_uint>(timer_events_.size()), timer_events_.data()),
                 "clWaitForEvents");
    cl_ulong first_start = 0;
    cl_ulong last_end = 0;
    for (std::size_t i = 0; i < timer_events_.size(); ++i) {
      cl_ulong start = 0;
      cl_ulong end = 0;
      check(cl_.clGetEventProfilingInfo(timer_events_[i], CL_PROFILING_COMMAND_START, sizeof(start), &start, nullptr),
            "clGetEventProfilingInfo(START)");
      check(cl_.clGetEventProfilingInfo(timer_events_[i], CL_PROFILING_COMMAND_END, sizeof(end), &end, nullptr),
            "clGetEventProfilingInfo(END)");
      if (i == 0 || start < first_start) first_start = start;
      last_end = std::max(last_end, end);
    }
    return last_end > first_start ? static_cast<double>(last_end - first_start) * 1e-6 : 0.0;
  }

 private:
  struct KernelEntry {
    cl_kernel kernel = nullptr;
    std::uint64_t module = 0;
    std::string name;
    std::vector<KernelParam> params;
  };
  struct BufferEntry {
    cl_mem memory = nullptr;
    std::size_t bytes = 0;
  };

  std::string target_name() const {
    return device_.info.platform.empty() ? device_.info.name
                                         : fmt::format("{} ({})", device_.info.name, device_.info.platform);
  }

  std::string build_log(cl_program program) const {
    std::size_t size = 0;
    if (cl_.clGetProgramBuildInfo(program, device_.device, CL_PROGRAM_BUILD_LOG, 0, nullptr, &size) != CL_SUCCESS) {
      return "(the OpenCL runtime gave no build log)";
    }
    std::string log(size, '\0');
    cl_.clGetProgramBuildInfo(program, device_.device, CL_PROGRAM_BUILD_LOG, size, log.data(), nullptr);
    log.resize(std::strlen(log.c_str()));
    return log;
  }

  std::string kernel_names(cl_program program) const {
    std::size_t size = 0;
    if (cl_.clGetProgramInfo(program, CL_PROGRAM_KERNEL_NAMES, 0, nullptr, &size) != CL_SUCCESS || size == 0) {
      return {};
    }
    std::string names(size, '\0');
    if (cl_.clGetProgramInfo(program, CL_PROGRAM_KERNEL_NAMES, size, names.data(), nullptr) != CL_SUCCESS) return {};
    names.resize(std::strlen(names.c_str()));
    std::replace(names.begin(), names.end(), ';', ',');
    return names;
  }

  std::vector<KernelParam> query_params(cl_kernel kernel) const {
    cl_uint count = 0;
    if (cl_.clGetKernelInfo(kernel, CL_KERNEL_NUM_ARGS, sizeof(count), &count, nullptr) != CL_SUCCESS) return {};
    std::vector<KernelParam> params(count);
    for (cl_uint index = 0; index < count; ++index) {
      KernelParam& param = params[index];
      cl_kernel_arg_address_qualifier address = 0;
      if (cl_.clGetKernelArgInfo(kernel, index, CL_KERNEL_ARG_ADDRESS_QUALIFIER, sizeof(address), &address,
                                 nullptr) != CL_SUCCESS) {
        // No argument info (built without -cl-kernel-arg-info): the count is all we know.
        continue;
      }
      std::size_t size = 0;
      if (cl_.clGetKernelArgInfo(kernel, index, CL_KERNEL_ARG_TYPE_NAME, 0, nullptr, &size) == CL_SUCCESS && size > 0) {
        std::string type(size, '\0');
        cl_.clGetKernelArgInfo(kernel, index, CL_KERNEL_ARG_TYPE_NAME, size, type.data(), nullptr);
        type.resize(std::strlen(type.c_str()));
        param.type_name = type;
      }
      if (address == CL_KERNEL_ARG_ADDRESS_LOCAL) {
        param.is_pointer = true;
        param.is_dynamic_shared = true;
      } else if (address == CL_KERNEL_ARG_ADDRESS_GLOBAL || address == CL_KERNEL_ARG_ADDRESS_CONSTANT) {
        param.is_pointer = true;
        param.size = sizeof(void*);
      } else {
        param.is_pointer = param.type_name.find('*') != std::string::npos;
        param.size = scalar_size(param.type_name);
      }
    }
    return params;
  }

  // Bytes of an OpenCL C scalar type by name; 0 for anything else (vectors, structs).
  static std::size_t scalar_size(const std::string& type) {
    static const std::map<std::string, std::size_t> sizes = {
        {"char", 1},  {"uchar", 1}, {"short", 2}, {"ushort", 2}, {"half", 2},   {"int", 4},
        {"uint", 4},  {"float", 4}, {"long", 8},  {"ulong", 8},  {"double", 8}, {"size_t", sizeof(std::size_t)},
        {"unsigned int", 4}, {"unsigned long", 8}, {"bool", 1}};
    const auto found = sizes.find(type);
    return found == sizes.end() ? 0 : found->second;
  }

  cl_program program_of(std::uint64_t module) const {
    const auto found = programs_.find(module);
    if (found == programs_.end()) throw ValidationError(fmt::format("no loaded OpenCL program has handle {}", module));
    return found->second;
  }

  KernelEntry& kernel_of(std::uint64_t kernel) {
    const auto found = kernels_.find(kernel);
    if (found == kernels_.end()) throw ValidationError(fmt::format("no OpenCL kernel has handle {}", kernel));
    return found->second;
  }

  const BufferEntry& buffer_of(std::uint64_t buffer, std::size_t bytes, const char* what) const {
    const auto found = buffers_.find(buffer);
    if (found == buffers_.end()) {
      throw ValidationError(fmt::format("{}: no OpenCL buffer has handle {}", what, buffer));
    }
    if (bytes > std::max<std::size_t>(found->second.bytes, 1)) {
      throw ValidationError(fmt::format("{} of {} bytes into a buffer of {} bytes", what, bytes, found->second.bytes));
    }
    return found->second;
  }

  void release_timer_events() {
    for (cl_event event : timer_events_) cl_.clReleaseEvent(event);
    timer_events_.clear();
  }

  const Api& cl_;
  DeviceHandle device_;
  cl_context context_ = nullptr;
  cl_command_queue queue_ = nullptr;
  std::unordered_map<std::uint64_t, cl_program> programs_;
  std::unordered_map<std::uint64_t, KernelEntry> kernels_;
  std::unordered_map<std::uint64_t, BufferEntry> buffers_;
  std::uint64_t next_handle_ = 1;
  bool timing_ = false;
  std::vector<cl_event> timer_events_;
};

}  // namespace

BackendInfo probe_opencl() {
  BackendInfo info;
  info.name = "opencl";
  try {
    const Api& cl = opencl::api();
    info.details.push_back("ICD loader: " + cl.library);
    const auto devices = enumerate_devices(cl);
    std::vector<std::string> platforms;
    for (const auto& device : devices) {
      info.devices.push_back(device.info);
      const std::string platform = platform_string(cl, device.platform, CL_PLATFORM_NAME) + " " +
                                   platform_string(cl, device.platform, CL_PLATFORM_VERSION);
      if (std::find(platforms.begin(), platforms.end(), platform) == platforms.end()) platforms.push_back(platform);
    }
    for (const auto& platform : platforms) info.details.push_back("platform: " + platform);
    // OpenCL builds programs for a device: compiling needs a device too.
    info.available = !info.devices.empty();
    info.can_compile = info.available;
    if (!info.available) {
      info.reason = "the OpenCL ICD loader found no platform or device; install an OpenCL runtime (e.g. "
                    "pocl-opencl-icd for CPUs) or a GPU driver with OpenCL support";
    }
  } catch (const std::exception& e) {
    info.available = false;
    info.can_compile = false;
    info.reason = e.what();
  }
  return info;
}

std::unique_ptr<Backend> create_opencl_backend(int device_index) {
  const Api& cl = opencl::api();
  auto devices = enumerate_devices(cl);
  if (devices.empty()) {
    throw BackendUnavailableError(
        "OpenCL: no platform or device found; install an OpenCL runtime (e.g. pocl-opencl-icd) or a GPU driver");
  }
  if (device_index < 0 || device_index >= static_cast<int>(devices.size())) {
    throw NotFoundError(fmt::format("OpenCL device {} does not exist: there are {} devices (0 to {})", device_index,
                                    devices.size(), devices.size() - 1));
  }
  return std::make_unique<OpenClBackend>(cl, std::move(devices[static_cast<std::size_t>(device_index)]));
}

}  // namespace kernelsmith::detail
