#include "cuda/nvrtc_api.hpp"

#include <dlfcn.h>
#include <fmt/format.h>

#include <exception>
#include <mutex>

#include "detail/dynamic_library.hpp"
#include "kernelsmith/error.hpp"

namespace kernelsmith::detail::cuda {
namespace {

constexpr const char* kNvrtcOverrideVariable = "KERNELSMITH_NVRTC_LIBRARY";

std::string file_of_address(const void* address, const std::string& fallback) {
  Dl_info info{};
  if (address != nullptr && dladdr(address, &info) != 0 && info.dli_fname != nullptr) {
    return info.dli_fname;
  }
  return fallback;
}

std::vector<int> query_supported_architectures(const NvrtcApi& api) {
  std::vector<int> architectures;
  if (api.nvrtcGetNumSupportedArchs == nullptr || api.nvrtcGetSupportedArchs == nullptr) return architectures;
  int count = 0;
  if (api.nvrtcGetNumSupportedArchs(&count) != NVRTC_SUCCESS || count <= 0) return architectures;
  architectures.resize(static_cast<std::size_t>(count));
  if (api.nvrtcGetSupportedArchs(architectures.data()) != NVRTC_SUCCESS) architectures.clear();
  return architectures;
}

}  // namespace

std::string NvrtcApi::description() const {
  return fmt::format("NVRTC {}.{} ({})", version_major, version_minor, library);
}

std::vector<std::string> nvrtc_library_candidates() {
  return library_candidates(kNvrtcOverrideVariable, {"CUDA_HOME", "CUDA_PATH"}, {"lib64", "lib"},
                            {"libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so.11.2", "libnvrtc.so"},
                            {"/usr/local/cuda/lib64"});
}

std::unique_ptr<NvrtcApi> load_nvrtc_api() {
  static std::mutex libraries_mutex;
  // Kept for the life of the process, so the table's pointers never dangle.
  static auto& libraries = *new std::vector<std::unique_ptr<DynamicLibrary>>;  // never destroyed

  auto library = std::make_unique<DynamicLibrary>("NVRTC", nvrtc_library_candidates());
  auto api = std::make_unique<NvrtcApi>();
#define KERNELSMITH_NVRTC_RESOLVE_REQUIRED(name) \
  api->name = reinterpret_cast<decltype(&::name)>(library->symbol(#name));
#define KERNELSMITH_NVRTC_RESOLVE_OPTIONAL(name) \
  api->name = reinterpret_cast<decltype(&::name)>(library->optional_symbol(#name));
  KERNELSMITH_NVRTC_FUNCTIONS(KERNELSMITH_NVRTC_RESOLVE_REQUIRED)
  KERNELSMITH_NVRTC_OPTIONAL_FUNCTIONS(KERNELSMITH_NVRTC_RESOLVE_OPTIONAL)
#undef KERNELSMITH_NVRTC_RESOLVE_REQUIRED
#undef KERNELSMITH_NVRTC_RESOLVE_OPTIONAL

  api->library = file_of_address(reinterpret_cast<void*>(api->nvrtcVersion), library->loaded_name());
  if (api->nvrtcVersion(&api->version_major, &api->version_minor) != NVRTC_SUCCESS) {
    throw LibraryLoadError(fmt::format("NVRTC ({}) loaded but nvrtcVersion failed: the library is "
                                       "broken; point KERNELSMITH_NVRTC_LIBRARY at another libnvrtc",
                                       api->library));
  }
  api->supported_architectures = query_supported_architectures(*api);

  std::lock_guard<std::mutex> lock(libraries_mutex);
  libraries.push_back(std::move(library));
  return api;
}

// Never destroyed, like the driver's table (driver() in driver_api.cpp says why).
const NvrtcApi& nvrtc() {
  struct Loaded {
    std::unique_ptr<NvrtcApi> api;
    std::exception_ptr failure;
  };
  static const Loaded* const loaded = [] {
    auto* result = new Loaded;
    try {
      result->api = load_nvrtc_api();
    } catch (...) {
      result->failure = std::current_exception();
    }
    return result;
  }();
  if (loaded->failure) std::rethrow_exception(loaded->failure);
  return *loaded->api;
}

void throw_nvrtc_error(nvrtcResult result, const char* call, const char* file, int line) {
  std::string where = file;
  if (const auto lib = where.rfind("/lib/"); lib != std::string::npos) where = where.substr(lib + 1);
  const char* text = nullptr;
  try {
    text = nvrtc().nvrtcGetErrorString(result);
  } catch (const std::exception&) {
    // NVRTC not loaded: only the number is known.
  }
  throw DeviceError(fmt::format("{}:{}: {} failed: {}", where, line, call,
                                text != nullptr ? std::string(text)
                                                : fmt::format("nvrtcResult {}", static_cast<int>(result))));
}

}  // namespace kernelsmith::detail::cuda
