// Triton launches in a bound plan (docs/triton.md, "Launch ABI"). At binding, a launch's constexprs,
// warps and stages are evaluated under the size configuration and, with its arguments' types, name the
// specialization it needs: the binary compiled for exactly that. After loading, the launch takes what the
// compiler fixed: the block, the dynamic shared memory, and the scratch pointers after its arguments.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "evaluate/plan_binding.hpp"
#include "kernelsmith/backend.hpp"
#include "kernelsmith/device.hpp"
#include "kernelsmith/dtype.hpp"
#include "kernelsmith/launch_plan.hpp"
#include "triton/triton_compiler.hpp"

namespace kernelsmith::detail {

/// Whether the plan's launches are Triton launches (`kernel[grid](...)`), whose kernels the Triton front
/// end compiles.
bool launches_triton_kernels(const LaunchPlan& plan);

/// Triton's type of a pointer to `dtype` elements: float32 → "*fp32". Throws ValidationError for a dtype
/// Triton has no type for.
std::string triton_pointer_type(DType dtype);

/// Completes a bound Triton launch (`decl.num_warps` is set): evaluates its constexprs, warps and stages
/// and names its binary. Throws InvalidLaunch naming the plan's line.
void bind_triton_launch(const LaunchDecl& decl, const Bindings& bindings, const BoundPlan& plan, BoundLaunch& launch);

/// The distinct specializations the bound plans launch, each once, in order of first launch.
std::vector<TritonKernelSpec> triton_kernel_specs(const std::map<std::string, BoundPlan>& bound);

/// Gives a loaded Triton launch the ABI its binary requires: its block and dynamic shared memory, and the
/// global and profile scratch pointers after the plan's arguments (a workspace of blocks x bytes, or a
/// null pointer). `params` is what the driver says of the kernel's parameters (empty when it cannot say).
/// Throws InvalidLaunch when the binary does not fit the device or its parameters are not the ABI's.
void apply_kernel_binary(BoundLaunch& launch, BoundPlan& plan, const KernelBinary& binary,
                         const std::vector<KernelParam>& params, const DeviceInfo& device);

}  // namespace kernelsmith::detail
