#include "triton/triton_launch.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <limits>

#include "kernelsmith/device_attributes.hpp"
#include "kernelsmith/error.hpp"

namespace kernelsmith::detail {

bool launches_triton_kernels(const LaunchPlan& plan) {
  return std::any_of(plan.launches.begin(), plan.launches.end(),
                     [](const LaunchDecl& launch) { return !launch.num_warps.empty(); });
}

std::string triton_pointer_type(DType dtype) {
  switch (dtype) {
    case DType::float16: return "*fp16";
    case DType::bfloat16: return "*bf16";
    case DType::float32: return "*fp32";
    case DType::float64: return "*fp64";
    case DType::int8: return "*i8";
    case DType::uint8: return "*u8";
    case DType::int32: return "*i32";
    case DType::int64: return "*i64";
  }
  throw ValidationError(fmt::format("no Triton pointer type for dtype {}", to_string(dtype)));
}

namespace {

bool fits_int32(std::int64_t value) {
  return value >= std::numeric_limits<std::int32_t>::min() && value <= std::numeric_limits<std::int32_t>::max();
}

/// The types of the launch's arguments: pointers by their buffer's dtype, integers as i32 when the value
/// fits (else i64) under this configuration.
std::vector<std::string> signature_of(const BoundLaunch& launch, const BoundPlan& plan) {
  std::vector<std::string> signature;
  for (const auto& arg : launch.args) {
    signature.push_back(arg.is_buffer ? triton_pointer_type(plan.buffers[arg.buffer].dtype)
                                      : (fits_int32(arg.value) ? "i32" : "i64"));
  }
  return signature;
}

/// The arguments the compiler may take as multiples of 16: every pointer (the harness allocates every
/// buffer, far beyond 16-byte aligned; KernelRunner checks the caller's tensors) and, as triton's JIT
/// does, every integer whose value under this configuration is a non-zero multiple of 16. Sizes that are
/// multiples of 16 then give vectorised loads without register spills; odd check sizes get a build of
/// their own.
std::vector<int> divisible_of(const BoundLaunch& launch) {
  std::vector<int> divisible;
  for (std::size_t i = 0; i < launch.args.size(); ++i) {
    const BoundArg& arg = launch.args[i];
    if (arg.is_buffer || (arg.value != 0 && arg.value % 16 == 0)) divisible.push_back(static_cast<int>(i));
  }
  return divisible;
}

/// "*fp32,*fp32,i32/16": the signature with integers known to be multiples of 16 marked.
std::string signature_key(const BoundLaunch& launch, const BoundPlan& plan) {
  std::vector<std::string> signature = signature_of(launch, plan);
  for (const int index : divisible_of(launch)) {
    if (!launch.args[static_cast<std::size_t>(index)].is_buffer) signature[static_cast<std::size_t>(index)] += "/16";
  }
  return fmt::format("{}", fmt::join(signature, ","));
}

}  // namespace

void bind_triton_launch(const LaunchDecl& decl, const Bindings& bindings, const BoundPlan& plan, BoundLaunch& launch) {
  launch.num_warps = static_cast<int>(std::clamp<std::int64_t>(
      evaluate_in_plan(decl.num_warps, bindings, decl.line, fmt::format("num_warps of {}", decl.kernel)), -1, 1 << 20));
  if (launch.num_warps < 1 || launch.num_warps > 32 || (launch.num_warps & (launch.num_warps - 1)) != 0) {
    throw InvalidLaunch(fmt::format("{}num_warps of {} is `{}` = {}; it must be a power of two from 1 to 32",
                                    line_prefix(decl.line), decl.kernel, decl.num_warps, launch.num_warps));
  }
  const std::int64_t stages =
      evaluate_in_plan(decl.num_stages, bindings, decl.line, fmt::format("num_stages of {}", decl.kernel));
  if (stages < 1 || stages > 16) {
    throw InvalidLaunch(fmt::format("{}num_stages of {} is `{}` = {}; it must be from 1 to 16",
                                    line_prefix(decl.line), decl.kernel, decl.num_stages, stages));
  }
  launch.num_stages = static_cast<int>(stages);
  launch.constexprs.clear();
  std::vector<std::string> parts;
  for (const auto& [name, expression] : decl.constexprs) {
    const std::int64_t value =
        evaluate_in_plan(expression, bindings, decl.line, fmt::format("the constexpr {} of {}", name, decl.kernel));
    launch.constexprs.emplace_back(name, value);
    parts.push_back(fmt::format("{}={}", name, value));
  }
  parts.push_back(fmt::format("num_warps={}", launch.num_warps));
  parts.push_back(fmt::format("num_stages={}", launch.num_stages));
  launch.binary = fmt::format("{}[{} | {}]", decl.kernel, fmt::join(parts, " "), signature_key(launch, plan));
}

std::vector<TritonKernelSpec> triton_kernel_specs(const std::map<std::string, BoundPlan>& bound) {
  std::vector<TritonKernelSpec> specs;
  std::map<std::string, std::size_t> index_of;  // binary name -> its spec
  for (const auto& [config, plan] : bound) {
    for (const auto& launch : plan.launches) {
      if (launch.binary.empty()) continue;
      if (const auto found = index_of.find(launch.binary); found != index_of.end()) {
        std::vector<std::string>& configs = specs[found->second].configs;
        if (configs.back() != config) configs.push_back(config);  // configurations arrive in order
        continue;
      }
      index_of[launch.binary] = specs.size();
      TritonKernelSpec spec;
      spec.name = launch.binary;
      spec.kernel = launch.kernel;
      spec.signature = signature_of(launch, plan);
      spec.constexprs = launch.constexprs;
      spec.num_warps = launch.num_warps;
      spec.num_stages = launch.num_stages;
      spec.line = launch.line;
      spec.configs = {config};
      spec.aligned = divisible_of(launch);
      specs.push_back(std::move(spec));
    }
  }
  return specs;
}

void apply_kernel_binary(BoundLaunch& launch, BoundPlan& plan, const KernelBinary& binary,
                         const std::vector<KernelParam>& params, const DeviceInfo& device) {
  const std::string where = line_prefix(launch.line);
  if (binary.num_ctas != 1) {
    throw InvalidLaunch(fmt::format("{}{} was compiled for {} blocks per program (num_ctas); kernelsmith launches "
                                    "Triton kernels with num_ctas=1 only",
                                    where, launch.kernel, binary.num_ctas));
  }
  const std::size_t plan_arguments = launch.args.size();
  const std::size_t expected = plan_arguments + static_cast<std::size_t>(binary.scratch_pointers);
  const std::size_t reported = !params.empty() ? params.size()
                               : binary.param_count >= 0 ? static_cast<std::size_t>(binary.param_count)
                                                         : expected;
  if (reported != expected) {
    throw InvalidLaunch(fmt::format(
        "{}the compiled kernel {} takes {} parameters, but kernelsmith launches Triton kernels with their {} "
        "non-constexpr argument(s) followed by {} scratch pointers (the launch ABI of triton 3.4 to 3.6): this "
        "triton compiles another ABI; install a triton kernelsmith knows (pip install 'triton>=3.4,<3.7')",
        where, launch.kernel, reported, plan_arguments, binary.scratch_pointers));
  }
  if (binary.block_threads > 0) {
    const std::uint32_t threads = launch.block[0] * launch.block[1] * launch.block[2];
    if (threads != static_cast<std::uint32_t>(binary.block_threads)) {
      throw InvalidLaunch(fmt::format("{}{} was compiled for blocks of {} threads (num_warps={}); the launch has {}",
                                      where, launch.kernel, binary.block_threads, binary.block_threads / 32, threads));
    }
    launch.block = {static_cast<std::uint32_t>(binary.block_threads), 1, 1};
  }
  const std::int64_t shared_limit = shared_memory_limit(device);
  if (shared_limit > 0 && static_cast<std::int64_t>(binary.shared_bytes) > shared_limit) {
    throw InvalidLaunch(fmt::format("{}{} needs {} bytes of shared memory per block (num_stages={}); {} allows at "
                                    "most {}: lower num_stages or the block sizes",
                                    where, launch.binary, binary.shared_bytes, launch.num_stages, device.name,
                                    shared_limit));
  }
  launch.shared_bytes = binary.shared_bytes;

  const std::uint64_t blocks = std::uint64_t(launch.grid[0]) * launch.grid[1] * launch.grid[2] *
                               static_cast<std::uint64_t>(binary.num_ctas);
  const auto add_scratch = [&](const char* what, std::size_t bytes, std::size_t align) {
    BoundArg arg;
    if (bytes == 0) {
      arg.text = fmt::format("null {} scratch", what);  // the kernel never touches it
      arg.value = 0;
      launch.args.push_back(arg);
      return;
    }
    const std::size_t stride = (bytes + align - 1) / align * align;
    BufferSpec buffer;
    buffer.role = BufferSpec::Role::workspace;
    buffer.name = fmt::format("{} scratch of {} (line {})", what, launch.kernel, launch.line);
    buffer.dtype = DType::uint8;
    buffer.count = static_cast<std::int64_t>(blocks * stride);
    buffer.bytes = static_cast<std::size_t>(blocks * stride);
    plan.buffers.push_back(buffer);
    arg.is_buffer = true;
    arg.buffer = plan.buffers.size() - 1;
    arg.text = buffer.name;
    launch.args.push_back(arg);
  };
  if (binary.scratch_pointers >= 1) add_scratch("global", binary.global_scratch_bytes, binary.global_scratch_align);
  if (binary.scratch_pointers >= 2) add_scratch("profile", binary.profile_scratch_bytes, binary.profile_scratch_align);
}

}  // namespace kernelsmith::detail

namespace kernelsmith {

std::vector<TritonKernelSpec> triton_kernel_specs(const Task& task, const std::string& source,
                                                  const DeviceInfo& device) {
  const LaunchPlan plan = LaunchPlan::parse(source, "triton");
  try {
    return detail::triton_kernel_specs(detail::bind_plan_to_all_sizes(task, plan, device));
  } catch (const detail::InvalidLaunch& e) {
    throw ValidationError(fmt::format("task {}: {}", task.name, e.what()));
  }
}

}  // namespace kernelsmith
