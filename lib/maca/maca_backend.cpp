// The MACA backend (MetaX GPUs), built into the plugin libkernelsmith_maca.so: MCRTC compiles, the MACA
// runtime loads, moves bytes, launches and times. Written against the SDK's headers by name only
// (mc_api.hpp says why); the runtime is opened at run time. docs/backends.md, "MACA", says what has been
// verified and how (a stand-in runtime over CUDA, tests/maca_standin) and what needs a MetaX machine.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <map>
#include <regex>
#include <set>

#include "kernelsmith/error.hpp"
#include "maca/mc_api.hpp"
#include "maca/plugin_abi.hpp"

namespace kernelsmith::detail::maca {
namespace {

// The name MCRTC gives the source in its messages.
constexpr const char* kProgramName = "candidate.maca";
// How kernel arguments reach mcModuleLaunchKernel: a params array, the `extra` buffer, or the first
// of the two the runtime accepts (some MACA builds take `extra` only).
constexpr const char* kLaunchFormVariable = "KERNELSMITH_MACA_LAUNCH";

enum class LaunchForm { automatic, params, extra };

LaunchForm launch_form_from_environment() {
  const char* value = std::getenv(kLaunchFormVariable);
  const std::string form = value != nullptr ? value : "";
  if (form.empty() || form == "auto") return LaunchForm::automatic;
  if (form == "params") return LaunchForm::params;
  if (form == "extra") return LaunchForm::extra;
  throw ValidationError(fmt::format("{}={} is not a launch form: expected params, extra or auto", kLaunchFormVariable,
                                    form));
}

const char* launch_form_name(LaunchForm form) {
  switch (form) {
    case LaunchForm::params: return "params";
    case LaunchForm::extra: return "extra";
    case LaunchForm::automatic: break;
  }
  return "auto";
}

int attribute(const McApi& api, mcDeviceAttribute_t which, int ordinal) {
  int value = 0;
  KERNELSMITH_MC_CALL(api, mcDeviceGetAttribute(&value, which, ordinal));
  return value;
}

DeviceInfo query_device(const McApi& api, int ordinal) {
  mcDeviceProp_t properties{};
  KERNELSMITH_MC_CALL(api, mcGetDeviceProperties(&properties, ordinal));
  DeviceInfo info;
  info.backend = "maca";
  info.index = ordinal;
  info.name = properties.name;
  info.vendor = "MetaX";
  // The target MCRTC is given (-arch=compute_<major><minor>), as MetaX's samples pass it.
  info.architecture = fmt::format("compute_{}{}", properties.major, properties.minor);
  if (api.mcDriverGetVersion != nullptr) {
    int version = 0;
    if (api.mcDriverGetVersion(&version) == mcSuccess) info.driver_version = std::to_string(version);
  }
  info.compute_units = attribute(api, mcDeviceAttributeMultiProcessorCount, ordinal);
  // The wave: 64 lanes on MetaX GPUs. Plans and prompts take it from here (WARP_SIZE), never assume it.
  info.warp_size = attribute(api, mcDeviceAttributeWarpSize, ordinal);
  info.max_threads_per_block = attribute(api, mcDeviceAttributeMaxThreadsPerBlock, ordinal);
  info.shared_per_block = attribute(api, mcDeviceAttributeMaxSharedMemoryPerBlock, ordinal);
  info.shared_per_block_optin = static_cast<std::int64_t>(properties.sharedMemPerBlockOptin);
  info.l2_bytes = properties.l2CacheSize;
  info.global_memory_bytes = static_cast<std::int64_t>(properties.totalGlobalMem);
  info.max_allocation_bytes = info.global_memory_bytes;
  info.clock_mhz = attribute(api, mcDeviceAttributeClockRate, ordinal) / 1000;
  info.is_gpu = true;
  return info;
}

// mcInit and the device count, with "no MetaX device" where the runtime finds none.
int initialise_and_count(const McApi& api) {
  const mcError_t initialised = api.mcInit(0);
  if (initialised == mcErrorNoDevice) {
    throw BackendUnavailableError(fmt::format("no MetaX device: mcInit says {} ({})", describe(api, initialised),
                                              api.library));
  }
  if (initialised != mcSuccess) {
    throw BackendUnavailableError(fmt::format("mcInit failed: {} ({})", describe(api, initialised), api.library));
  }
  int count = 0;
  const mcError_t counted = api.mcGetDeviceCount(&count);
  if (counted == mcErrorNoDevice || (counted == mcSuccess && count == 0)) {
    throw BackendUnavailableError(fmt::format("no MetaX device: the MACA runtime ({}) sees none{}", api.library,
                                              counted == mcSuccess ? "" : " (" + describe(api, counted) + ")"));
  }
  if (counted != mcSuccess) throw_mc_error(api, counted, "mcGetDeviceCount(&count)", __FILE__, __LINE__);
  return count;
}

bool is_identifier(const std::string& text) {
  static const std::regex& identifier = *new std::regex("[A-Za-z_][A-Za-z0-9_]*");  // never destroyed
  return std::regex_match(text, identifier);
}

std::string program_log(const McApi& api, mcrtcProgram program) {
  std::size_t size = 0;
  if (api.mcrtcGetProgramLogSize(program, &size) != MCRTC_SUCCESS || size <= 1) return {};
  std::string log(size, '\0');
  if (api.mcrtcGetProgramLog(program, log.data()) != MCRTC_SUCCESS) return {};
  log.resize(size - 1);  // the terminating NUL
  return log;
}

[[noreturn]] void throw_mcrtc_error(const McApi& api, mcrtcResult result, const char* call) {
  const char* text = api.mcrtcGetErrorString(result);
  throw DeviceError(fmt::format("{} failed: {} ({})", call,
                                text != nullptr ? text : fmt::format("mcrtcResult {}", static_cast<int>(result)),
                                api.description()));
}

// MCRTC to `target` ("compute_90"). A rejected source is a report with ok == false and the log.
CompiledProgram compile_with_mcrtc(const McApi& api, const std::string& source, const CompileOptions& options,
                                   const std::string& target) {
  static const std::regex& target_pattern = *new std::regex("compute_[0-9]+");  // never destroyed
  if (!std::regex_match(target, target_pattern)) {
    throw ValidationError(fmt::format("MACA compile target '{}' is not valid: expected compute_<major><minor> as "
                                      "the device reports it (e.g. \"compute_80\"); a device backend picks its own",
                                      target));
  }
  std::vector<std::string> arguments = {"-arch=" + target, "-std=c++17"};
  if (!api.include_directory.empty()) arguments.push_back("--include-path=" + api.include_directory);
  for (const auto& [name, value] : options.defines) {
    if (!is_identifier(name)) {
      throw ValidationError(fmt::format(
          "compile define '{}' is not a valid macro name: expected a C identifier ([A-Za-z_][A-Za-z0-9_]*)", name));
    }
    arguments.push_back(value.empty() ? "-D" + name : "-D" + name + "=" + value);
  }
  std::vector<const char*> argv;
  for (const auto& argument : arguments) argv.push_back(argument.c_str());

  const auto started = std::chrono::steady_clock::now();
  mcrtcProgram program = nullptr;
  const mcrtcResult created = api.mcrtcCreateProgram(&program, source.c_str(), kProgramName, 0, nullptr, nullptr);
  if (created != MCRTC_SUCCESS) throw_mcrtc_error(api, created, "mcrtcCreateProgram");
  struct Destroy {
    const McApi& api;
    mcrtcProgram& program;
    ~Destroy() { static_cast<void>(api.mcrtcDestroyProgram(&program)); }
  } destroy{api, program};

  const mcrtcResult result = api.mcrtcCompileProgram(program, static_cast<int>(argv.size()), argv.data());
  CompiledProgram compiled;
  compiled.language = "maca";
  compiled.target = target;
  compiled.report.target = target;
  compiled.report.log = program_log(api, program);
  const auto seconds = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count(); };
  if (result == MCRTC_ERROR_COMPILATION) {
    compiled.report.ok = false;
    compiled.report.seconds = seconds();
    return compiled;
  }
  if (result == MCRTC_ERROR_INVALID_OPTION) {
    throw ValidationError(fmt::format("{} rejected the compile options [{}]: {}", api.description(),
                                      fmt::join(arguments, " "), compiled.report.log));
  }
  if (result != MCRTC_SUCCESS) throw_mcrtc_error(api, result, "mcrtcCompileProgram");
  std::size_t size = 0;
  const mcrtcResult sized = api.mcrtcGetBitcodeSize(program, &size);
  if (sized != MCRTC_SUCCESS) throw_mcrtc_error(api, sized, "mcrtcGetBitcodeSize");
  compiled.binary.resize(size);
  const mcrtcResult copied = api.mcrtcGetBitcode(program, reinterpret_cast<char*>(compiled.binary.data()));
  if (copied != MCRTC_SUCCESS) throw_mcrtc_error(api, copied, "mcrtcGetBitcode");
  compiled.report.ok = true;
  compiled.report.seconds = seconds();
  return compiled;
}

class MacaBackend final : public Backend {
 public:
  explicit MacaBackend(int device_index) : api_(runtime()), launch_form_(launch_form_from_environment()) {
    const int count = initialise_and_count(api_);
    if (device_index < 0 || device_index >= count) {
      throw NotFoundError(fmt::format("MACA device {} does not exist: the runtime sees {} device(s) (indices 0 to {})",
                                      device_index, count, count - 1));
    }
    info_ = query_device(api_, device_index);
    KERNELSMITH_MC_CALL(api_, mcSetDevice(device_index));
    try {
      KERNELSMITH_MC_CALL(api_, mcStreamCreate(&stream_));
      KERNELSMITH_MC_CALL(api_, mcEventCreate(&timer_start_));
      KERNELSMITH_MC_CALL(api_, mcEventCreate(&timer_stop_));
    } catch (...) {
      release();
      throw;
    }
  }

  ~MacaBackend() override { release(); }
  MacaBackend(const MacaBackend&) = delete;
  MacaBackend& operator=(const MacaBackend&) = delete;

  std::string name() const override { return "maca"; }
  std::string language() const override { return "maca"; }
  const DeviceInfo& device() const override { return info_; }

  CompiledProgram compile(const std::string& source, const CompileOptions& options) override {
    return compile_with_mcrtc(api_, source, options, options.target.empty() ? info_.architecture : options.target);
  }

  std::uint64_t load(const CompiledProgram& program) override {
    if (program.language != "maca") {
      throw ValidationError(fmt::format("the MACA backend cannot load a program compiled for '{}'", program.language));
    }
    if (!program.report.ok || program.binary.empty()) {
      throw ValidationError("the MACA backend cannot load a program that did not compile (report.ok is false or the "
                            "binary is empty)");
    }
    bind();
    mcModule_t module = nullptr;
    const mcError_t result = api_.mcModuleLoadData(&module, program.binary.data());
    if (result != mcSuccess) {
      if (is_sticky(result)) throw_mc_error(api_, result, "mcModuleLoadData", __FILE__, __LINE__);
      throw DeviceError(fmt::format("loading the {} program on {} ({}) failed: {}; compile for this device (leave "
                                    "options.target empty)",
                                    program.target, info_.name, info_.architecture, describe(api_, result)));
    }
    modules_.insert(module);
    return reinterpret_cast<std::uint64_t>(module);
  }

  void unload(std::uint64_t handle) override {
    const auto module = modules_.find(reinterpret_cast<mcModule_t>(handle));
    if (module == modules_.end()) throw NotFoundError(fmt::format("unload: 0x{:x} is not a loaded MACA module", handle));
    bind();
    for (auto kernel = kernels_.begin(); kernel != kernels_.end();) {
      kernel = kernel->second.module == *module ? kernels_.erase(kernel) : std::next(kernel);
    }
    const mcModule_t unloaded = *module;
    modules_.erase(module);
    KERNELSMITH_MC_CALL(api_, mcModuleUnload(unloaded));
  }

  std::uint64_t kernel(std::uint64_t module_handle, const std::string& kernel_name) override {
    const auto module = modules_.find(reinterpret_cast<mcModule_t>(module_handle));
    if (module == modules_.end()) {
      throw NotFoundError(fmt::format("kernel '{}': 0x{:x} is not a loaded MACA module", kernel_name, module_handle));
    }
    bind();
    mcFunction_t function = nullptr;
    const mcError_t result = api_.mcModuleGetFunction(&function, *module, kernel_name.c_str());
    if (result == mcErrorNotFound || result == mcErrorInvalidValue) {
      throw NotFoundError(fmt::format("kernel '{}' is not in the compiled program: check the name in the launch plan "
                                      "and declare the kernel extern \"C\" __global__ (MACA finds kernels by their "
                                      "plain names only)",
                                      kernel_name));
    }
    if (result != mcSuccess) throw_mc_error(api_, result, "mcModuleGetFunction", __FILE__, __LINE__);
    kernels_[function] = {kernel_name, *module};
    return reinterpret_cast<std::uint64_t>(function);
  }

  // No MACA call reports a kernel's parameters: the harness checks less, and arguments are packed at the
  // widths the plan gives them.
  std::vector<KernelParam> kernel_params(std::uint64_t handle) override {
    kernel_entry(handle, "kernel_params");
    return {};
  }

  KernelResources kernel_resources(std::uint64_t handle) override {
    const KernelEntry& entry = kernel_entry(handle, "kernel_resources");
    const auto function = reinterpret_cast<mcFunction_t>(handle);
    bind();
    const auto read = [&](mcFunction_attribute which) {
      int value = 0;
      KERNELSMITH_MC_CALL(api_, mcFuncGetAttribute(&value, which, function));
      return value;
    };
    KernelResources resources;
    resources.name = entry.name;
    resources.registers = read(MC_FUNC_ATTRIBUTE_NUM_REGS);
    resources.shared_bytes = read(MC_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES);
    resources.local_bytes = read(MC_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES);
    return resources;
  }

  std::uint64_t allocate(std::size_t bytes) override {
    if (bytes == 0) throw ValidationError("allocate: a MACA buffer needs at least one byte");
    bind();
    void* pointer = nullptr;
    const mcError_t result = api_.mcMalloc(&pointer, bytes);
    if (result == mcErrorMemoryAllocation) {
      throw DeviceError(fmt::format("allocating {} bytes on {} failed: out of device memory ({} bytes in total)", bytes,
                                    info_.name, info_.global_memory_bytes));
    }
    if (result != mcSuccess) throw_mc_error(api_, result, "mcMalloc", __FILE__, __LINE__);
    const auto handle = reinterpret_cast<std::uint64_t>(pointer);
    buffers_[handle] = bytes;
    return handle;
  }

  void free(std::uint64_t buffer) override {
    const auto found = buffers_.find(buffer);
    if (found == buffers_.end()) throw NotFoundError(fmt::format("free: 0x{:x} is not a MACA buffer of this backend", buffer));
    buffers_.erase(found);
    bind();
    KERNELSMITH_MC_CALL(api_, mcFree(reinterpret_cast<void*>(buffer)));
  }

  // The copies wait for the stream first: whether mcMemcpy orders itself after a created stream's work
  // (CUDA's legacy default stream does) is not documented for MACA.
  void write(std::uint64_t buffer, const void* host, std::size_t bytes) override {
    check_range("write", buffer, bytes);
    if (bytes == 0) return;
    bind();
    KERNELSMITH_MC_CALL(api_, mcStreamSynchronize(stream_));
    KERNELSMITH_MC_CALL(api_, mcMemcpy(reinterpret_cast<void*>(buffer), host, bytes, mcMemcpyHostToDevice));
  }

  void read(std::uint64_t buffer, void* host, std::size_t bytes) override {
    check_range("read", buffer, bytes);
    if (bytes == 0) return;
    bind();
    KERNELSMITH_MC_CALL(api_, mcStreamSynchronize(stream_));
    KERNELSMITH_MC_CALL(api_, mcMemcpy(host, reinterpret_cast<const void*>(buffer), bytes, mcMemcpyDeviceToHost));
  }

  void fill(std::uint64_t buffer, std::uint8_t byte, std::size_t bytes) override {
    check_range("fill", buffer, bytes);
    if (bytes == 0) return;
    bind();
    KERNELSMITH_MC_CALL(api_, mcMemsetAsync(reinterpret_cast<void*>(buffer), byte, bytes, stream_));
  }

  void launch(std::uint64_t handle, Dim3 grid, Dim3 block, std::size_t shared_bytes,
              const std::vector<KernelArg>& args) override {
    const KernelEntry& entry = kernel_entry(handle, "launch");
    const auto where = [&] {
      return fmt::format("launching '{}' with grid ({}, {}, {}) and block ({}, {}, {}), {} bytes of dynamic shared "
                         "memory",
                         entry.name, grid[0], grid[1], grid[2], block[0], block[1], block[2], shared_bytes);
    };
    if (info_.shared_per_block_optin > 0 && shared_bytes > static_cast<std::size_t>(info_.shared_per_block_optin)) {
      throw LaunchError(fmt::format("{} failed: the device allows {} bytes of shared memory per block", where(),
                                    info_.shared_per_block_optin));
    }
    const PackedArguments packed = pack(entry, args, where);
    bind();
    const auto launch_with = [&](LaunchForm form) {
      std::vector<void*> params;
      for (const auto& slot : packed.slots) params.push_back(const_cast<std::uint64_t*>(&slot));
      std::size_t buffer_size = packed.buffer.size();
      void* extra[] = {MC_LAUNCH_PARAM_BUFFER_POINTER, const_cast<std::uint8_t*>(packed.buffer.data()),
                       MC_LAUNCH_PARAM_BUFFER_SIZE, &buffer_size, MC_LAUNCH_PARAM_END};
      return api_.mcModuleLaunchKernel(reinterpret_cast<mcFunction_t>(handle), grid[0], grid[1], grid[2], block[0],
                                       block[1], block[2], static_cast<unsigned int>(shared_bytes), stream_,
                                       form == LaunchForm::params ? params.data() : nullptr,
                                       form == LaunchForm::extra ? extra : nullptr);
    };
    const LaunchForm first = launch_form_ == LaunchForm::extra ? LaunchForm::extra : LaunchForm::params;
    mcError_t result = launch_with(first);
    if (result == mcSuccess) return;
    if (is_sticky(result)) throw_launch_fault(result, where);
    std::string refused = describe(api_, result);
    if (launch_form_ == LaunchForm::automatic) {
      // This runtime may take arguments through `extra` only: try that, and keep it when it works.
      const mcError_t retried = launch_with(LaunchForm::extra);
      if (retried == mcSuccess) {
        launch_form_ = LaunchForm::extra;
        return;
      }
      if (is_sticky(retried)) throw_launch_fault(retried, where);
      refused = fmt::format("{} with a params array, {} through `extra`", refused, describe(api_, retried));
    }
    throw LaunchError(fmt::format("{} failed: {}", where(), refused));
  }

  void synchronize() override {
    bind();
    KERNELSMITH_MC_CALL(api_, mcStreamSynchronize(stream_));
  }

  void timer_start() override {
    bind();
    KERNELSMITH_MC_CALL(api_, mcEventRecord(timer_start_, stream_));
    timer_running_ = true;
  }

  double timer_stop_ms() override {
    if (!timer_running_) throw ValidationError("timer_stop_ms called without timer_start");
    timer_running_ = false;
    bind();
    KERNELSMITH_MC_CALL(api_, mcEventRecord(timer_stop_, stream_));
    KERNELSMITH_MC_CALL(api_, mcEventSynchronize(timer_stop_));
    float milliseconds = 0.0f;
    KERNELSMITH_MC_CALL(api_, mcEventElapsedTime(&milliseconds, timer_start_, timer_stop_));
    return static_cast<double>(milliseconds);
  }

 private:
  struct KernelEntry {
    std::string name;
    mcModule_t module = nullptr;
  };

  // Both forms of the same arguments: one 8-byte slot each for a params array, and the bytes of a
  // packed argument buffer (each value at its natural alignment) for `extra`.
  struct PackedArguments {
    std::vector<std::uint64_t> slots;
    std::vector<std::uint8_t> buffer;
  };

  template <typename Where>
  PackedArguments pack(const KernelEntry& entry, const std::vector<KernelArg>& args, const Where& where) const {
    PackedArguments packed;
    packed.slots.assign(args.size(), 0);
    for (std::size_t i = 0; i < args.size(); ++i) {
      const KernelArg& arg = args[i];
      std::size_t size = 8;
      if (arg.kind == KernelArg::Kind::buffer) {
        if (buffers_.count(arg.buffer) == 0) {
          throw LaunchError(fmt::format("{} failed: argument {} of '{}': 0x{:x} is not a buffer of this backend",
                                        where(), i + 1, entry.name, arg.buffer));
        }
        std::memcpy(&packed.slots[i], &arg.buffer, sizeof(arg.buffer));
      } else if (arg.kind == KernelArg::Kind::int32) {
        if (arg.value < std::numeric_limits<std::int32_t>::min() || arg.value > std::numeric_limits<std::int32_t>::max()) {
          throw LaunchError(fmt::format("{} failed: argument {} of '{}': the value {} does not fit a 32-bit integer",
                                        where(), i + 1, entry.name, arg.value));
        }
        const auto narrow = static_cast<std::int32_t>(arg.value);
        std::memcpy(&packed.slots[i], &narrow, sizeof(narrow));
        size = sizeof(narrow);
      } else {
        std::memcpy(&packed.slots[i], &arg.value, sizeof(arg.value));
      }
      const std::size_t offset = (packed.buffer.size() + size - 1) / size * size;
      packed.buffer.resize(offset + size);
      std::memcpy(packed.buffer.data() + offset, &packed.slots[i], size);  // little-endian: the low bytes
    }
    return packed;
  }

  template <typename Where>
  [[noreturn]] void throw_launch_fault(mcError_t result, const Where& where) const {
    throw DeviceFault(fmt::format("{} failed: {}; the MACA context is lost (an earlier kernel faulted), the process "
                                  "must be restarted",
                                  where(), describe(api_, result)));
  }

  // The device for the calling thread (the runtime keeps a current device per thread).
  void bind() { KERNELSMITH_MC_CALL(api_, mcSetDevice(info_.index)); }

  const KernelEntry& kernel_entry(std::uint64_t handle, const char* operation) const {
    const auto found = kernels_.find(reinterpret_cast<mcFunction_t>(handle));
    if (found == kernels_.end()) {
      throw NotFoundError(fmt::format("{}: 0x{:x} is not a kernel of a module loaded by this backend", operation, handle));
    }
    return found->second;
  }

  void check_range(const char* operation, std::uint64_t buffer, std::size_t bytes) const {
    const auto found = buffers_.find(buffer);
    if (found == buffers_.end()) {
      throw NotFoundError(fmt::format("{}: 0x{:x} is not a MACA buffer of this backend", operation, buffer));
    }
    if (bytes > found->second) {
      throw ValidationError(fmt::format("{}: {} bytes do not fit the buffer of {} bytes", operation, bytes, found->second));
    }
  }

  // Frees everything this backend made. Never throws: after a fault every call fails, and that is fine.
  void release() noexcept {
    KERNELSMITH_MC_CALL_NOEXCEPT(api_, mcSetDevice(info_.index));
    for (const auto& [pointer, size] : buffers_) KERNELSMITH_MC_CALL_NOEXCEPT(api_, mcFree(reinterpret_cast<void*>(pointer)));
    buffers_.clear();
    for (const mcModule_t module : modules_) KERNELSMITH_MC_CALL_NOEXCEPT(api_, mcModuleUnload(module));
    modules_.clear();
    kernels_.clear();
    if (timer_start_ != nullptr) KERNELSMITH_MC_CALL_NOEXCEPT(api_, mcEventDestroy(timer_start_));
    if (timer_stop_ != nullptr) KERNELSMITH_MC_CALL_NOEXCEPT(api_, mcEventDestroy(timer_stop_));
    if (stream_ != nullptr) KERNELSMITH_MC_CALL_NOEXCEPT(api_, mcStreamDestroy(stream_));
    timer_start_ = timer_stop_ = nullptr;
    stream_ = nullptr;
  }

  const McApi& api_;
  LaunchForm launch_form_;
  DeviceInfo info_;
  mcStream_t stream_ = nullptr;
  mcEvent_t timer_start_ = nullptr;
  mcEvent_t timer_stop_ = nullptr;
  bool timer_running_ = false;
  std::map<std::uint64_t, std::size_t> buffers_;
  std::set<mcModule_t> modules_;
  std::map<mcFunction_t, KernelEntry> kernels_;
};

BackendInfo probe() {
  BackendInfo info;
  info.name = "maca";
  const McApi* api = nullptr;
  try {
    api = &runtime();
  } catch (const std::exception& error) {
    info.reason = error.what();
    return info;
  }
  info.can_compile = true;  // MCRTC is part of the runtime and needs no device
  info.details.push_back(api->description());
  info.details.push_back(api->include_directory.empty()
                             ? std::string("SDK headers not found (maca_fp16.h cannot be included): set MACA_PATH")
                             : "SDK headers " + api->include_directory);
  try {
    info.details.push_back(std::string("launch arguments: ") + launch_form_name(launch_form_from_environment()) +
                           " (" + kLaunchFormVariable + ")");
    const int count = initialise_and_count(*api);
    for (int ordinal = 0; ordinal < count; ++ordinal) info.devices.push_back(query_device(*api, ordinal));
    info.available = true;
  } catch (const std::exception& error) {
    info.reason = error.what();
    info.devices.clear();
  }
  return info;
}

std::unique_ptr<Backend> create(int device_index) { return std::make_unique<MacaBackend>(device_index); }

CompiledProgram compile_offline(const std::string& source, const CompileOptions& options) {
  if (options.target.empty()) {
    throw ValidationError("compiling MACA with no device needs options.target, the device's compute_<major><minor> "
                          "(its architecture in devices()), e.g. \"compute_80\"");
  }
  return compile_with_mcrtc(runtime(), source, options, options.target);
}

}  // namespace
}  // namespace kernelsmith::detail::maca

extern "C" __attribute__((visibility("default"))) const kernelsmith::detail::maca::PluginApi* kernelsmith_maca_plugin() {
  static const kernelsmith::detail::maca::PluginApi api = [] {
    kernelsmith::detail::maca::PluginApi table;
    table.probe = &kernelsmith::detail::maca::probe;
    table.create = &kernelsmith::detail::maca::create;
    table.compile = &kernelsmith::detail::maca::compile_offline;
    return table;
  }();
  return &api;
}
