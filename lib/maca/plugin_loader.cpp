// The library's side of the MACA backend: opens the plugin (plugin_abi.hpp) on first use and forwards
// to it, or says why there is no MACA backend: not built (no SDK when kernelsmith was built), the plugin
// missing or from another build, and then whatever the plugin says (runtime not found, no MetaX device).
#include <fmt/format.h>

#include <cstdlib>
#include <filesystem>

#include "backend_registry.hpp"
#include "detail/dynamic_library.hpp"
#include "kernelsmith/error.hpp"
#include "maca/load_cache.hpp"
#include "maca/plugin_abi.hpp"

namespace kernelsmith::detail {
namespace {

constexpr const char* kPluginOverrideVariable = "KERNELSMITH_MACA_PLUGIN";

#if KERNELSMITH_ENABLE_MACA
// The plugin beside the library (or the worker, or the tests' executable, which link the library in),
// unless KERNELSMITH_MACA_PLUGIN names one.
std::vector<std::string> plugin_candidates() {
  if (const char* path = std::getenv(kPluginOverrideVariable); path != nullptr && *path != '\0') return {path};
  return {(std::filesystem::path(library_directory()) / maca::kPluginFileName).string()};
}

std::unique_ptr<maca::PluginApi> load_plugin(const std::vector<std::string>& candidates) {
  static auto& libraries = *new std::vector<std::unique_ptr<DynamicLibrary>>;  // kept open, never destroyed
  auto library = std::make_unique<DynamicLibrary>("MACA backend plugin", candidates);
  const auto entry = reinterpret_cast<maca::PluginEntryPoint>(library->symbol(maca::kPluginEntryPoint));
  const maca::PluginApi* api = entry();
  if (api == nullptr || api->abi != maca::kPluginAbi || std::string(api->version) != KERNELSMITH_VERSION_STRING ||
      api->backend_info_size != sizeof(BackendInfo) || api->compiled_program_size != sizeof(CompiledProgram)) {
    throw LibraryLoadError(fmt::format(
        "the MACA backend plugin {} was built for another kernelsmith ({}, plugin ABI {}; this is {}, ABI {}): "
        "install the plugin built with this library, or point {} at it",
        library->loaded_name(), api != nullptr ? api->version : "unknown", api != nullptr ? api->abi : -1,
        KERNELSMITH_VERSION_STRING, maca::kPluginAbi, kPluginOverrideVariable));
  }
  libraries.push_back(std::move(library));
  return std::make_unique<maca::PluginApi>(*api);
}

const maca::PluginApi& plugin() { return maca::load_once<maca::PluginApi>(plugin_candidates(), load_plugin); }
#else
std::string not_built_reason() {
  return fmt::format("no MACA SDK at {} when kernelsmith was built (mcr/mc_runtime.h not found there): install the "
                     "MetaX MACA SDK and rebuild with MACA_PATH (or -DKERNELSMITH_MACA_PATH) naming it",
                     KERNELSMITH_MACA_SDK_SEARCHED);
}
#endif

}  // namespace

BackendInfo probe_maca() {
#if KERNELSMITH_ENABLE_MACA
  try {
    return plugin().probe();
  } catch (const std::exception& error) {
    BackendInfo info;
    info.name = "maca";
    info.reason = error.what();
    return info;
  }
#else
  BackendInfo info;
  info.name = "maca";
  info.reason = not_built_reason();
  return info;
#endif
}

std::unique_ptr<Backend> create_maca_backend(int device_index) {
#if KERNELSMITH_ENABLE_MACA
  return plugin().create(device_index);
#else
  (void)device_index;
  throw BackendUnavailableError(not_built_reason());
#endif
}

CompiledProgram compile_maca_offline(const std::string& source, const CompileOptions& options) {
#if KERNELSMITH_ENABLE_MACA
  return plugin().compile(source, options);
#else
  (void)source;
  (void)options;
  throw BackendUnavailableError(not_built_reason());
#endif
}

}  // namespace kernelsmith::detail
