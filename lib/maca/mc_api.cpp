#include "maca/mc_api.hpp"

#include <fmt/format.h>

#include <cstdlib>
#include <filesystem>
#include <memory>

#include "detail/dynamic_library.hpp"
#include "kernelsmith/backend.hpp"
#include "kernelsmith/error.hpp"
#include "maca/load_cache.hpp"

namespace kernelsmith::detail::maca {
namespace {

constexpr const char* kRuntimeOverrideVariable = "KERNELSMITH_MACA_RUNTIME";

// The SDK's include folder: $MACA_PATH/include, else the one beside the loaded runtime (<root>/lib/..),
// else /opt/maca/include; the first that holds mcr/.
std::string sdk_include_directory(const std::string& runtime_file) {
  std::vector<std::filesystem::path> candidates;
  if (const char* root = std::getenv("MACA_PATH"); root != nullptr && *root != '\0') {
    candidates.emplace_back(std::filesystem::path(root) / "include");
  }
  const std::filesystem::path runtime(runtime_file);
  if (runtime.has_parent_path()) candidates.push_back(runtime.parent_path().parent_path() / "include");
  candidates.emplace_back("/opt/maca/include");
  for (const auto& candidate : candidates) {
    std::error_code error;
    if (std::filesystem::exists(candidate / "mcr", error)) return candidate.string();
  }
  return {};
}

std::unique_ptr<McApi> load_runtime(const std::vector<std::string>& candidates) {
  // Kept open for the life of the process (DynamicLibrary never closes runtimes).
  static auto& libraries = *new std::vector<std::unique_ptr<DynamicLibrary>>;
  auto library = std::make_unique<DynamicLibrary>("MACA runtime", candidates);
  auto api = std::make_unique<McApi>();
#define KERNELSMITH_MC_RESOLVE_REQUIRED(name) api->name = reinterpret_cast<decltype(&::name)>(library->symbol(#name));
#define KERNELSMITH_MC_RESOLVE_OPTIONAL(name) \
  api->name = reinterpret_cast<decltype(&::name)>(library->optional_symbol(#name));
  KERNELSMITH_MC_FUNCTIONS(KERNELSMITH_MC_RESOLVE_REQUIRED)
  KERNELSMITH_MC_OPTIONAL_FUNCTIONS(KERNELSMITH_MC_RESOLVE_OPTIONAL)
#undef KERNELSMITH_MC_RESOLVE_REQUIRED
#undef KERNELSMITH_MC_RESOLVE_OPTIONAL
  api->library = library->loaded_name();
  if (api->mcrtcVersion(&api->compiler_major, &api->compiler_minor) != MCRTC_SUCCESS) {
    api->compiler_major = api->compiler_minor = 0;  // unknown; compiling says more if it fails
  }
  api->include_directory = sdk_include_directory(api->library);
  libraries.push_back(std::move(library));  // under load_once's lock
  return api;
}

}  // namespace

std::string McApi::description() const {
  return fmt::format("MACA runtime ({}), MCRTC {}.{}", library, compiler_major, compiler_minor);
}

std::vector<std::string> runtime_library_candidates() {
  return library_candidates(kRuntimeOverrideVariable, {"MACA_PATH"}, {"lib"}, {"libmcruntime.so"}, {"/opt/maca/lib"});
}

const McApi& runtime() { return load_once<McApi>(runtime_library_candidates(), load_runtime); }

std::string describe(const McApi& api, mcError_t result) {
  const char* name = api.mcGetErrorName(result);
  const char* text = api.mcGetErrorString(result);
  const std::string shown = name != nullptr ? name : fmt::format("mcError_t {}", static_cast<int>(result));
  return text != nullptr ? fmt::format("{} ({})", shown, text) : shown;
}

bool is_sticky(mcError_t result) {
  switch (result) {
    case mcErrorIllegalAddress:
    case mcErrorLaunchFailure:
    case mcErrorLaunchTimeout:
    case mcErrorAssert:
    case mcErrorHardwareStackError:
    case mcErrorIllegalInstruction:
    case mcErrorMisalignedAddress:
    case mcErrorInvalidPc:
    // Not always sticky, but nothing can be trusted after it.
    case mcErrorUnknown:
      return true;
    default:
      return false;
  }
}

void throw_mc_error(const McApi& api, mcError_t result, const char* call, const char* file, int line) {
  std::string where = file;
  if (const auto lib = where.rfind("/lib/"); lib != std::string::npos) where = where.substr(lib + 1);
  const std::string message = fmt::format("{}:{}: {} failed: {}", where, line, call, describe(api, result));
  if (is_sticky(result)) throw DeviceFault(message + "; the MACA context is lost, the process must be restarted");
  throw DeviceError(message);
}

}  // namespace kernelsmith::detail::maca
