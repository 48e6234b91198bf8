// What each backend folder (lib/cuda, lib/opencl, lib/maca) provides to the backend-agnostic code:
// a probe for devices(), a factory for create_backend(), and offline compilation where possible.
#pragma once

#include <memory>
#include <string>

#include "kernelsmith/backend.hpp"
#include "kernelsmith/config.hpp"
#include "kernelsmith/device.hpp"

namespace kernelsmith::detail {

#if KERNELSMITH_ENABLE_CUDA
/// Loads the driver and NVRTC; never throws: failures become `available = false` with the reason.
/// `can_compile` is true when NVRTC loads, even without a driver.
BackendInfo probe_cuda();
std::unique_ptr<Backend> create_cuda_backend(int device_index);
/// NVRTC to the given target (e.g. "sm_90") with no device.
CompiledProgram compile_cuda_offline(const std::string& source, const CompileOptions& options);
/// The target a device of this architecture ("sm_90") compiles candidates for: the architecture-specific
/// variant ("sm_90a") where NVRTC has one, as the device backend itself compiles.
std::string cuda_device_compile_target(const std::string& architecture);
#endif

#if KERNELSMITH_ENABLE_OPENCL
BackendInfo probe_opencl();
std::unique_ptr<Backend> create_opencl_backend(int device_index);
#endif

// MACA is a plugin (lib/maca/plugin_loader.cpp): these exist in every build and say why there is no MACA
// backend where the plugin was not built, cannot be loaded, or finds no runtime or device.
BackendInfo probe_maca();
std::unique_ptr<Backend> create_maca_backend(int device_index);
/// MCRTC to options.target ("compute_80") with no device.
CompiledProgram compile_maca_offline(const std::string& source, const CompileOptions& options);

}  // namespace kernelsmith::detail
