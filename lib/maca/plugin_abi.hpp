// The seam between the library and its MACA backend plugin (libkernelsmith_maca.so, built from lib/maca/
// only where the MACA SDK's headers exist). The library opens the plugin at run time and asks its one
// exported function for this table; the plugin in turn opens the MACA runtime (libmcruntime.so) at run
// time. C++ types cross the seam, so a plugin is only used by the build that made it: the table carries
// the version and the layout it was compiled with, and the loader refuses any other.
#pragma once

#include <memory>
#include <string>

#include "kernelsmith/backend.hpp"
#include "kernelsmith/config.hpp"
#include "kernelsmith/device.hpp"

namespace kernelsmith::detail::maca {

/// Bumped whenever the table or a type it passes changes shape (2: Backend::record_timed_batch).
constexpr int kPluginAbi = 2;

struct PluginApi {
  int abi = kPluginAbi;
  const char* version = KERNELSMITH_VERSION_STRING;
  std::size_t backend_info_size = sizeof(BackendInfo);
  std::size_t compiled_program_size = sizeof(CompiledProgram);
  /// Never throws: a failure is `available = false` with the reason.
  BackendInfo (*probe)() = nullptr;
  std::unique_ptr<Backend> (*create)(int device_index) = nullptr;
  /// MCRTC with no device, for `options.target` ("compute_90"); the evaluator's compile stage.
  CompiledProgram (*compile)(const std::string& source, const CompileOptions& options) = nullptr;
};

/// The plugin's one exported symbol.
constexpr const char* kPluginEntryPoint = "kernelsmith_maca_plugin";
using PluginEntryPoint = const PluginApi* (*)();

/// The plugin's file name, looked for beside the library (or where KERNELSMITH_MACA_PLUGIN says).
constexpr const char* kPluginFileName = "libkernelsmith_maca.so";

}  // namespace kernelsmith::detail::maca
