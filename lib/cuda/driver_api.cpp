#include "cuda/driver_api.hpp"

#include <dlfcn.h>
#include <fmt/format.h>

#include <exception>
#include <mutex>

#include "detail/dynamic_library.hpp"
#include "kernelsmith/backend.hpp"
#include "kernelsmith/error.hpp"

namespace kernelsmith::detail::cuda {
namespace {

constexpr const char* kDriverOverrideVariable = "KERNELSMITH_CUDA_DRIVER_LIBRARY";

// The loader keeps the library open for the life of the process (DynamicLibrary never dlcloses driver
// libraries), so the function pointers stay valid after the DynamicLibrary object is gone. It is kept
// anyway, owned by the table's loader, to make that lifetime explicit.
struct LoadedDriver {
  std::unique_ptr<DynamicLibrary> library;
  std::unique_ptr<DriverApi> api;
};

std::string file_of_address(const void* address, const std::string& fallback) {
  Dl_info info{};
  if (address != nullptr && dladdr(address, &info) != 0 && info.dli_fname != nullptr) {
    return info.dli_fname;
  }
  return fallback;
}

std::string version_text(int version) {
  return fmt::format("{}.{}", version / 1000, (version % 1000) / 10);
}

}  // namespace

std::vector<std::string> driver_library_candidates() {
  // Never "libcuda.so": that name is the toolkit's link stub (lib64/stubs), which loads and then fails
  // every call with CUDA_ERROR_STUB_LIBRARY.
  return library_candidates(kDriverOverrideVariable, {}, {}, {"libcuda.so.1"},
                            {"/usr/lib/x86_64-linux-gnu", "/usr/lib64", "/usr/lib/aarch64-linux-gnu",
                             "/usr/lib/wsl/lib"});
}

std::unique_ptr<DriverApi> load_driver_api() {
  static std::mutex libraries_mutex;
  // Each successful load's DynamicLibrary is kept (never freed) so its handle outlives the tables.
  static auto& libraries = *new std::vector<std::unique_ptr<DynamicLibrary>>;  // never destroyed

  auto library = std::make_unique<DynamicLibrary>("CUDA driver", driver_library_candidates());
  auto api = std::make_unique<DriverApi>();

  // cuGetProcAddress itself is the one function taken by dlsym, by its exported (versioned) name.
  using GetProcAddress = decltype(&cuGetProcAddress);
  auto get_proc_address = reinterpret_cast<GetProcAddress>(library->symbol("cuGetProcAddress_v2"));
  const std::string file = file_of_address(reinterpret_cast<void*>(get_proc_address), library->loaded_name());

  auto resolve = [&](const char* name, void** slot, bool required) {
    CUdriverProcAddressQueryResult status = CU_GET_PROC_ADDRESS_SUCCESS;
    // Legacy default-stream semantics, stated rather than left to the default: the synchronous copies
    // rely on the legacy stream ordering them after the work queued on the backend's blocking stream.
    const CUresult result =
        get_proc_address(name, slot, CUDA_VERSION, CU_GET_PROC_ADDRESS_LEGACY_STREAM, &status);
    if (result == CUDA_SUCCESS && status == CU_GET_PROC_ADDRESS_SUCCESS && *slot != nullptr) return;
    *slot = nullptr;
    if (!required) return;
    if (status == CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT) {
      throw SymbolMissingError(fmt::format(
          "CUDA driver ({}) provides {} only in a version older than CUDA {} that kernelsmith was built "
          "for: update the GPU driver",
          file, name, version_text(CUDA_VERSION)));
    }
    throw SymbolMissingError(fmt::format(
        "CUDA driver ({}) has no function {} (cuGetProcAddress returned {}): the driver is too old; "
        "update the GPU driver",
        file, name, static_cast<int>(result)));
  };
#define KERNELSMITH_CUDA_RESOLVE_REQUIRED(name) resolve(#name, reinterpret_cast<void**>(&api->name), true);
#define KERNELSMITH_CUDA_RESOLVE_OPTIONAL(name) resolve(#name, reinterpret_cast<void**>(&api->name), false);
  KERNELSMITH_CUDA_DRIVER_FUNCTIONS(KERNELSMITH_CUDA_RESOLVE_REQUIRED)
  KERNELSMITH_CUDA_DRIVER_OPTIONAL_FUNCTIONS(KERNELSMITH_CUDA_RESOLVE_OPTIONAL)
#undef KERNELSMITH_CUDA_RESOLVE_REQUIRED
#undef KERNELSMITH_CUDA_RESOLVE_OPTIONAL

  api->library = file;
  // cuDriverGetVersion works before cuInit; a failure leaves 0 ("unknown").
  if (api->cuDriverGetVersion(&api->driver_version) != CUDA_SUCCESS) api->driver_version = 0;

  std::lock_guard<std::mutex> lock(libraries_mutex);
  libraries.push_back(std::move(library));
  return api;
}

// The table, its library and a remembered failure live until the process ends and are never destroyed
// (allocated once, no static destructor). At exit the driver tears itself down with its own atexit
// handlers, and backends still alive then (a Python module's, say) must be able to call it until the
// last moment; a destructor of ours running in between would leave them a dangling table. It also
// keeps exit clean where the library carries its own copy of libstdc++ (toolchains that link it
// statically; lib/CMakeLists.txt hides it): no object of ours is torn down at exit by code that may
// resolve to the executable's copy of the C++ runtime instead of ours.
const DriverApi& driver() {
  struct Loaded {
    std::unique_ptr<DriverApi> api;
    std::exception_ptr failure;
  };
  static const Loaded* const loaded = [] {
    auto* result = new Loaded;
    try {
      result->api = load_driver_api();
    } catch (...) {
      result->failure = std::current_exception();
    }
    return result;
  }();
  if (loaded->failure) std::rethrow_exception(loaded->failure);
  return *loaded->api;
}

std::string describe_result(CUresult result) {
  const char* name = nullptr;
  const char* text = nullptr;
  // Only ask a driver that is already loaded: describing an error must never start loading one.
  try {
    const DriverApi& api = driver();
    if (api.cuGetErrorName(result, &name) != CUDA_SUCCESS) name = nullptr;
    if (api.cuGetErrorString(result, &text) != CUDA_SUCCESS) text = nullptr;
  } catch (const std::exception&) {
    // No driver: only the number is known.
  }
  if (name == nullptr) return fmt::format("CUresult {}", static_cast<int>(result));
  if (text == nullptr) return name;
  return fmt::format("{} ({})", name, text);
}

bool is_sticky_error(CUresult result) {
  switch (result) {
    case CUDA_ERROR_ECC_UNCORRECTABLE:
    case CUDA_ERROR_NVLINK_UNCORRECTABLE:
    case CUDA_ERROR_CONTAINED:
    case CUDA_ERROR_ILLEGAL_ADDRESS:
    case CUDA_ERROR_LAUNCH_TIMEOUT:
    case CUDA_ERROR_CONTEXT_IS_DESTROYED:
    case CUDA_ERROR_ASSERT:
    case CUDA_ERROR_HARDWARE_STACK_ERROR:
    case CUDA_ERROR_ILLEGAL_INSTRUCTION:
    case CUDA_ERROR_MISALIGNED_ADDRESS:
    case CUDA_ERROR_INVALID_ADDRESS_SPACE:
    case CUDA_ERROR_INVALID_PC:
    case CUDA_ERROR_LAUNCH_FAILED:
    case CUDA_ERROR_TENSOR_MEMORY_LEAK:
    case CUDA_ERROR_EXTERNAL_DEVICE:
    // Not always sticky, but nothing can be trusted after it: treat it as a lost context.
    case CUDA_ERROR_UNKNOWN:
      return true;
    default:
      return false;
  }
}

void throw_driver_error(CUresult result, const char* call, const char* file, int line) {
  // __FILE__ is absolute; the part from lib/ on is enough to find the line.
  std::string where = file;
  if (const auto lib = where.rfind("/lib/"); lib != std::string::npos) where = where.substr(lib + 1);
  const std::string message =
      fmt::format("{}:{}: {} failed: {}", where, line, call, describe_result(result));
  if (is_sticky_error(result)) {
    throw DeviceFault(message + "; the CUDA context is lost, the process must be restarted");
  }
  throw DeviceError(message);
}

}  // namespace kernelsmith::detail::cuda
