#include "evaluate/plan_binding.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <limits>
#include <set>

#include "detail/expression.hpp"
#include "kernelsmith/device_attributes.hpp"
#include "triton/triton_launch.hpp"

namespace kernelsmith::detail {

std::string line_prefix(int line) { return line > 0 ? fmt::format("line {}: ", line) : std::string(); }

std::int64_t evaluate_in_plan(const std::string& expression, const Bindings& bindings, int line,
                              const std::string& what) {
  try {
    return evaluate_expression(expression, bindings);
  } catch (const PlanError& e) {
    throw InvalidLaunch(fmt::format("{}{} `{}`: {}", line_prefix(line), what, expression, e.what()));
  }
}

namespace {

std::uint32_t launch_dimension(const std::string& expression, const Bindings& bindings, const LaunchDecl& launch,
                               const char* what, int axis) {
  static const char* axes = "xyz";
  const std::string label = fmt::format("{}.{} of {}", what, axes[axis], launch.kernel);
  const std::int64_t value = evaluate_in_plan(expression, bindings, launch.line, label);
  if (value < 1) {
    throw InvalidLaunch(fmt::format("{}{}.{} of {} is `{}` = {}; every dimension must be at least 1",
                                    line_prefix(launch.line), what, axes[axis], launch.kernel, expression, value));
  }
  if (value > std::numeric_limits<std::uint32_t>::max()) {
    throw InvalidLaunch(fmt::format("{}{}.{} of {} is `{}` = {}, beyond 2^32 - 1", line_prefix(launch.line), what,
                                    axes[axis], launch.kernel, expression, value));
  }
  return static_cast<std::uint32_t>(value);
}

// A byte size option of @tensor_map ("128B") as a number; "none" is 0.
int option_bytes(const std::string& value) { return value == "none" ? 0 : std::stoi(value); }

// Binds one @tensor_map under the sizes of `config`: the values, the rules cuTensorMapEncodeTiled imposes,
// and that every element the map can address lies inside its buffer (a map that reaches past it would let
// the copy engine read or write outside the allocation). A map that is not `needed` (its when(...) is false
// here) only has its buffer looked up; its layout stays of rank 0, which the backend passes as zero bytes.
std::pair<std::size_t, TensorMapSpec> bind_tensor_map(const TensorMapDecl& decl, const Bindings& bindings,
                                                      const BoundPlan& bound, const Task& task,
                                                      const SizeConfig& config, bool needed) {
  const std::string where = fmt::format("{}@tensor_map {}", line_prefix(decl.line), decl.name);
  const auto fail = [&](const std::string& what) { return InvalidLaunch(fmt::format("{}: {}", where, what)); };
  for (const auto& tensor : task.tensors) {
    if (tensor.name == decl.name) {
      throw fail(fmt::format("{} is the name of a task tensor; give the tensor map another name", decl.name));
    }
  }
  const auto found = std::find_if(bound.buffers.begin(), bound.buffers.end(),
                                  [&](const BufferSpec& buffer) { return buffer.name == decl.buffer; });
  if (found == bound.buffers.end()) {
    std::vector<std::string> names;
    for (const auto& buffer : bound.buffers) names.push_back(buffer.name);
    throw fail(fmt::format("maps {}, which is neither a task tensor nor a workspace; the plan's buffers are {}",
                           decl.buffer, fmt::join(names, ", ")));
  }
  const BufferSpec& buffer = *found;
  TensorMapSpec spec;
  spec.dtype = buffer.dtype;
  if (!needed) return {static_cast<std::size_t>(found - bound.buffers.begin()), spec};
  spec.rank = static_cast<int>(decl.dims.size());
  spec.swizzle_bytes = option_bytes(decl.swizzle);
  spec.interleave_bytes = option_bytes(decl.interleave);
  spec.l2_promotion_bytes = option_bytes(decl.l2_promotion);
  spec.oob_nan = decl.oob_fill == "nan";
  const auto element = static_cast<std::int64_t>(dtype_size(buffer.dtype));
  const auto value_of = [&](const std::string& expression, const std::string& what) {
    return evaluate_in_plan(expression, bindings, decl.line, fmt::format("{} of tensor map {}", what, decl.name));
  };
  constexpr std::int64_t kMaxDim = std::int64_t(1) << 32;
  constexpr std::int64_t kMaxStrideBytes = std::int64_t(1) << 40;
  std::array<std::int64_t, 5> stride_elements{1, 0, 0, 0, 0};
  for (int d = 0; d < spec.rank; ++d) {
    const std::int64_t dim = value_of(decl.dims[d], fmt::format("dimension {}", d));
    if (dim < 1 || dim > kMaxDim) {
      throw fail(fmt::format("dimension {} is `{}` = {} under the sizes \"{}\"; each must be 1 to 2^32", d,
                             decl.dims[d], dim, config.name));
    }
    spec.dims[d] = static_cast<std::uint64_t>(dim);
    if (d == 0) continue;
    std::int64_t stride = 0;
    if (decl.strides.empty()) {
      // Packed; an overflow is a stride far beyond TMA's limit, refused below.
      if (__builtin_mul_overflow(stride_elements[d - 1], static_cast<std::int64_t>(spec.dims[d - 1]), &stride)) {
        stride = std::numeric_limits<std::int64_t>::max() / 8;
      }
    } else {
      stride = value_of(decl.strides[d - 1], fmt::format("stride {}", d));
      if (stride < 1) {
        throw fail(fmt::format("stride {} is `{}` = {}; strides count elements and must be 1 or more", d,
                               decl.strides[d - 1], stride));
      }
    }
    stride_elements[d] = stride;
    std::int64_t bytes = 0;
    if (__builtin_mul_overflow(stride, element, &bytes)) bytes = kMaxStrideBytes;
    const std::int64_t alignment = spec.interleave_bytes == 32 ? 32 : 16;
    if (bytes % alignment != 0 || bytes >= kMaxStrideBytes) {
      throw fail(fmt::format("the stride of dimension {} is {} elements of {} = {} bytes under the sizes \"{}\"; "
                             "TMA needs strides that are multiples of {} bytes and below 2^40: pad the rows (a "
                             "workspace with a padded stride such as round_up({}, {})) or use a kernel without "
                             "TMA for such sizes",
                             d, stride, to_string(buffer.dtype), bytes, config.name, alignment,
                             decl.strides.empty() ? decl.dims[d - 1] : decl.strides[d - 1], alignment / element));
    }
    spec.strides[d - 1] = static_cast<std::uint64_t>(bytes);
  }
  // The last element the map can address must be inside the buffer (an overflow is far outside it).
  std::int64_t last = 0;
  bool overflow = false;
  for (int d = 0; d < spec.rank; ++d) {
    std::int64_t step = 0;
    overflow = overflow || __builtin_mul_overflow(static_cast<std::int64_t>(spec.dims[d]) - 1, stride_elements[d], &step) ||
               __builtin_add_overflow(last, step, &last);
  }
  if (overflow) {
    throw fail(fmt::format("the dimensions and strides reach beyond 2^63 elements under the sizes \"{}\"; {} holds {}",
                           config.name, decl.buffer, buffer.count));
  }
  if (last + 1 > buffer.count) {
    throw fail(fmt::format("reaches element {} of {}, which holds {} under the sizes \"{}\": the dimensions or "
                           "strides are too large (strides count elements, not bytes)",
                           last, decl.buffer, buffer.count, config.name));
  }
  for (int d = 0; d < spec.rank; ++d) {
    const std::int64_t box = value_of(decl.box[d], fmt::format("box entry {}", d));
    if (box < 1 || box > 256) {
      throw fail(fmt::format("box entry {} is `{}` = {}; each must be 1 to 256", d, decl.box[d], box));
    }
    spec.box[d] = static_cast<std::uint32_t>(box);
    const std::int64_t step = decl.element_strides.empty() ? 1 : value_of(decl.element_strides[d],
                                                                          fmt::format("element stride {}", d));
    if (step < 1 || step > 8) {
      throw fail(fmt::format("element stride {} is `{}` = {}; each must be 1 to 8", d, decl.element_strides[d],
                             step));
    }
    spec.element_strides[d] = static_cast<std::uint32_t>(step);
  }
  const std::int64_t inner_bytes = static_cast<std::int64_t>(spec.box[0]) * element;
  if (spec.interleave_bytes == 0 && inner_bytes % 16 != 0) {
    throw fail(fmt::format("the box's inner dimension is {} elements of {} = {} bytes; TMA moves multiples of 16 "
                           "bytes: make box[0] a multiple of {}",
                           spec.box[0], to_string(buffer.dtype), inner_bytes, 16 / element > 0 ? 16 / element : 1));
  }
  if (spec.interleave_bytes == 0 && spec.swizzle_bytes > 0 && inner_bytes > spec.swizzle_bytes) {
    throw fail(fmt::format("the box's inner dimension is {} bytes, wider than the {}-byte swizzle span: make "
                           "box[0] at most {} elements, or choose a wider swizzle",
                           inner_bytes, spec.swizzle_bytes, spec.swizzle_bytes / element));
  }
  if (spec.oob_nan && !is_floating(buffer.dtype)) {
    throw fail(fmt::format("oob_fill=nan needs a floating-point tensor; {} holds {}", decl.buffer,
                           to_string(buffer.dtype)));
  }
  return {static_cast<std::size_t>(found - bound.buffers.begin()), spec};
}

// The launch's `cluster=`: each dimension at least 1 and dividing the grid's, at most 8 blocks in all (the
// portable cluster size every sm_90 GPU launches). Where there are no clusters a cluster of one block is an
// ordinary launch (so that one plan can ask for `1 + (COMPUTE_CAPABILITY >= 90)`), a larger one is refused.
void bind_cluster(const LaunchDecl& launch, const Bindings& bindings, const DeviceInfo& device, BoundLaunch& out) {
  for (int d = 0; d < 3; ++d) out.cluster[d] = launch_dimension(launch.cluster[d], bindings, launch, "cluster", d);
  const std::int64_t blocks = std::int64_t(out.cluster[0]) * out.cluster[1] * out.cluster[2];
  const std::string refusal = hopper_feature_refusal(device, "a thread-block cluster (cluster=)");
  if (!refusal.empty() && blocks > 1) {
    throw InvalidLaunch(fmt::format("{}{}: {} (a cluster of one block launches anywhere)", line_prefix(launch.line),
                                    launch.kernel, refusal));
  }
  if (!refusal.empty()) {
    out.cluster = {1, 1, 1};
    return;
  }
  if (blocks > 8) {
    throw InvalidLaunch(fmt::format("{}the cluster of {} is ({}, {}, {}) = {} blocks; at most 8 (the portable "
                                    "cluster size): use a smaller cluster",
                                    line_prefix(launch.line), launch.kernel, out.cluster[0], out.cluster[1],
                                    out.cluster[2], blocks));
  }
  for (int d = 0; d < 3; ++d) {
    if (out.grid[d] % out.cluster[d] != 0) {
      throw InvalidLaunch(fmt::format("{}grid.{} of {} is {}, not a multiple of cluster.{} = {}: round the grid up "
                                      "(round_up(..., {})) and let the extra blocks return early",
                                      line_prefix(launch.line), "xyz"[d], launch.kernel, out.grid[d], "xyz"[d],
                                      out.cluster[d], out.cluster[d]));
    }
  }
  out.clustered = true;
}

}  // namespace

Bindings plan_bindings(const LaunchPlan& plan, const SizeConfig& config, const DeviceInfo& device) {
  Bindings bindings = device_attribute_values(device);
  for (const auto& tunable : plan.tunables) bindings[tunable.name] = tunable.value;
  for (const auto& [name, value] : config.sizes) bindings[name] = value;
  return bindings;
}

BoundPlan bind_plan(const Task& task, const LaunchPlan& plan, const SizeConfig& config, const DeviceInfo& device) {
  const Bindings bindings = plan_bindings(plan, config, device);
  BoundPlan bound;
  bound.config = config.name;
  for (std::size_t i = 0; i < task.tensors.size(); ++i) {
    const TensorSpec& tensor = task.tensors[i];
    BufferSpec buffer;
    buffer.role = tensor.role == TensorRole::input ? BufferSpec::Role::input : BufferSpec::Role::output;
    buffer.name = tensor.name;
    buffer.dtype = tensor.dtype;
    buffer.count = task.element_count(tensor, config.sizes);
    buffer.bytes = static_cast<std::size_t>(buffer.count) * dtype_size(tensor.dtype);
    buffer.tensor_index = i;
    bound.buffers.push_back(buffer);
  }
  for (const auto& workspace : plan.workspaces) {
    BufferSpec buffer;
    buffer.role = BufferSpec::Role::workspace;
    buffer.name = workspace.name;
    buffer.dtype = workspace.dtype;
    buffer.count = evaluate_in_plan(workspace.count, bindings, workspace.line,
                                    fmt::format("the size of workspace {}", workspace.name));
    const auto element = static_cast<std::int64_t>(dtype_size(workspace.dtype));
    if (buffer.count < 0) {
      throw InvalidLaunch(fmt::format("{}workspace {} has {} elements (`{}`); the count must be 0 or more",
                                      line_prefix(workspace.line), workspace.name, buffer.count, workspace.count));
    }
    const std::int64_t largest = device.max_allocation_bytes > 0 ? device.max_allocation_bytes
                                                                 : device.global_memory_bytes;
    const std::int64_t limit = largest > 0 ? largest : std::numeric_limits<std::int64_t>::max() / 2;
    if (buffer.count > limit / element) {
      throw InvalidLaunch(fmt::format("{}workspace {} needs {} elements of {} (`{}` under the sizes \"{}\"), more "
                                      "than the {} bytes {} allocates at most: use a smaller workspace",
                                      line_prefix(workspace.line), workspace.name, buffer.count,
                                      to_string(workspace.dtype), workspace.count, config.name, largest, device.name));
    }
    buffer.bytes = static_cast<std::size_t>(buffer.count * element);
    bound.buffers.push_back(buffer);
  }
  for (std::size_t i = 0; i < plan.requirements.size(); ++i) {
    const std::string& requirement = plan.requirements[i];
    const int line = i < plan.requirement_lines.size() ? plan.requirement_lines[i] : 0;
    if (evaluate_in_plan(requirement, bindings, line, "the requirement") == 0) {
      std::vector<std::string> values;
      for (const auto& name : Expression(requirement).identifiers()) {
        const auto found = bindings.find(name);
        if (found != bindings.end()) values.push_back(fmt::format("{} = {}", name, found->second));
      }
      throw InvalidLaunch(fmt::format("{}the plan's own requirement `@require {}` does not hold under the sizes "
                                      "\"{}\" on {} ({}): change the @tune values or the plan so that it holds, or "
                                      "drop the @require",
                                      line_prefix(line), requirement, config.name, device.name,
                                      fmt::join(values, ", ")));
    }
  }
  // Hopper's launch features are refused, with the reason, before anything is compiled or launched, where the
  // plan needs them and the device has none. A map whose when(...) is false here is not needed: a CUDA kernel
  // then gets 128 zero bytes (other backends have no by-value parameter of that kind: refused anyway).
  std::map<std::string, std::pair<std::size_t, TensorMapSpec>> tensor_maps;
  for (const auto& map : plan.tensor_maps) {
    const bool needed = map.condition.empty() ||
                        evaluate_in_plan(map.condition, bindings, map.line,
                                         fmt::format("the condition of tensor map {}", map.name)) != 0;
    const std::string refusal = hopper_feature_refusal(device, "a tensor map (@tensor_map)");
    if (!refusal.empty() && (needed || device.backend != "cuda")) {
      throw InvalidLaunch(fmt::format("{}@tensor_map {}: {}{}", line_prefix(map.line), map.name, refusal,
                                      device.backend == "cuda"
                                          ? ", or make the map conditional, when(COMPUTE_CAPABILITY >= 90), and give "
                                            "the kernel a path without it"
                                          : ""));
    }
    tensor_maps[map.name] = bind_tensor_map(map, bindings, bound, task, config, needed);
  }
  const std::int64_t max_threads = device.max_threads_per_block;
  const std::int64_t max_shared = shared_memory_limit(device);
  for (const auto& launch : plan.launches) {
    BoundLaunch out;
    out.kernel = launch.kernel;
    out.line = launch.line;
    for (int d = 0; d < 3; ++d) {
      out.grid[d] = launch_dimension(launch.grid[d], bindings, launch, "grid", d);
      out.block[d] = launch_dimension(launch.block[d], bindings, launch, "block", d);
    }
    const std::int64_t threads = std::int64_t(out.block[0]) * out.block[1] * out.block[2];
    if (max_threads > 0 && threads > max_threads) {
      throw InvalidLaunch(fmt::format("{}block of {} is ({}, {}, {}) = {} threads; {} allows at most {} "
                                      "(MAX_THREADS_PER_BLOCK)",
                                      line_prefix(launch.line), launch.kernel, out.block[0], out.block[1],
                                      out.block[2], threads, device.name, max_threads));
    }
    const std::int64_t shared = evaluate_in_plan(launch.shared_bytes, bindings, launch.line,
                                                 fmt::format("the dynamic shared memory of {}", launch.kernel));
    if (shared < 0) {
      throw InvalidLaunch(fmt::format("{}dynamic shared memory of {} is {} bytes; it must be 0 or more",
                                      line_prefix(launch.line), launch.kernel, shared));
    }
    if (max_shared > 0 && shared > max_shared) {
      throw InvalidLaunch(fmt::format("{}{} asks for {} bytes of dynamic shared memory; {} allows at most {} "
                                      "(SMEM_PER_BLOCK_OPTIN)",
                                      line_prefix(launch.line), launch.kernel, shared, device.name, max_shared));
    }
    out.shared_bytes = static_cast<std::size_t>(shared);
    if (!launch.cluster[0].empty()) bind_cluster(launch, bindings, device, out);
    for (std::size_t i = 0; i < launch.args.size(); ++i) {
      const std::string& text = launch.args[i];
      BoundArg arg;
      arg.text = text;
      const auto found = std::find_if(bound.buffers.begin(), bound.buffers.end(),
                                      [&](const BufferSpec& buffer) { return buffer.name == text; });
      const auto map = tensor_maps.find(text);
      if (map != tensor_maps.end()) {
        arg.is_tensor_map = true;
        arg.buffer = map->second.first;
        arg.tensor_map = map->second.second;
      } else if (found != bound.buffers.end()) {
        arg.is_buffer = true;
        arg.buffer = static_cast<std::size_t>(found - bound.buffers.begin());
      } else {
        arg.value = evaluate_in_plan(text, bindings, launch.line,
                                     fmt::format("argument {} of {}", i + 1, launch.kernel));
      }
      out.args.push_back(arg);
    }
    if (!launch.num_warps.empty()) bind_triton_launch(launch, bindings, bound, out);
    bound.launches.push_back(std::move(out));
  }
  return bound;
}

std::map<std::string, BoundPlan> bind_plan_to_all_sizes(const Task& task, const LaunchPlan& plan,
                                                        const DeviceInfo& device) {
  std::map<std::string, BoundPlan> bound;
  for (const auto& config : task.all_size_configs()) bound[config.name] = bind_plan(task, plan, config, device);
  return bound;
}

namespace {

bool is_integer_type_name(const std::string& type) {
  static const std::set<std::string> names = {"int",      "uint",          "long",         "ulong",
                                              "size_t",   "unsigned int",  "unsigned long", "int32_t",
                                              "int64_t",  "uint32_t",      "uint64_t",     "long long",
                                              "unsigned long long", "ptrdiff_t", "intptr_t", "uintptr_t"};
  return names.count(type) > 0;
}

std::string describe_param(const KernelParam& param) {
  if (!param.type_name.empty()) return "`" + param.type_name + "`";
  if (param.is_pointer) return "a pointer";
  if (param.size > 0) return fmt::format("a {}-byte value", param.size);
  return "a parameter";
}

}  // namespace

void check_params(BoundLaunch& launch, const std::vector<KernelParam>& all_params, const BoundPlan& plan) {
  std::vector<KernelParam> params;
  for (const auto& param : all_params) {
    if (!param.is_dynamic_shared) params.push_back(param);
  }
  const bool known = !all_params.empty();
  // OpenCL (the backend that names parameter types) hands dynamic shared memory to `__local` pointer
  // parameters: one without bytes, or bytes without one, is the plan's mistake, found here with its line.
  const std::size_t local_params = all_params.size() - params.size();
  const bool typed = std::any_of(all_params.begin(), all_params.end(),
                                 [](const KernelParam& param) { return !param.type_name.empty(); });
  if (local_params > 0 && launch.shared_bytes == 0) {
    throw InvalidLaunch(fmt::format("{}{} has a __local pointer parameter, which receives the launch's dynamic "
                                    "shared memory, but the launch gives it 0 bytes: give the bytes as the third "
                                    "<<<>>> value, e.g. <<<grid, block, 256 * 4>>>",
                                    line_prefix(launch.line), launch.kernel));
  }
  if (typed && local_params == 0 && launch.shared_bytes > 0) {
    throw InvalidLaunch(fmt::format("{}{} gets {} bytes of dynamic shared memory (the third <<<>>> value) but has "
                                    "no __local pointer parameter to receive them: declare __local arrays inside "
                                    "the kernel and pass 0, or add a `__local float* scratch` parameter",
                                    line_prefix(launch.line), launch.kernel, launch.shared_bytes));
  }
  if (known && params.size() != launch.args.size()) {
    std::vector<std::string> described;
    for (const auto& param : params) described.push_back(describe_param(param));
    throw InvalidLaunch(fmt::format("{}{} takes {} argument{} ({}); the launch passes {}", line_prefix(launch.line),
                                    launch.kernel, params.size(), params.size() == 1 ? "" : "s",
                                    fmt::join(described, ", "), launch.args.size()));
  }
  for (std::size_t i = 0; i < launch.args.size(); ++i) {
    BoundArg& arg = launch.args[i];
    const bool fits_int32 = arg.value >= std::numeric_limits<std::int32_t>::min() &&
                            arg.value <= std::numeric_limits<std::int32_t>::max();
    if (arg.is_tensor_map) {
      arg.kind = KernelArg::Kind::tensor_map;
      const KernelParam* param = known ? &params[i] : nullptr;
      if (param != nullptr && (param->is_pointer || (param->size != 0 && param->size != kTensorMapBytes))) {
        throw InvalidLaunch(fmt::format("{}argument {} of {} is the tensor map {}, but parameter {} is {}: declare it "
                                        "`const __grid_constant__ CUtensorMap {}` (128 bytes, 64-byte aligned, by "
                                        "value)",
                                        line_prefix(launch.line), i + 1, launch.kernel, arg.text, i + 1,
                                        describe_param(*param), arg.text));
      }
      continue;
    }
    if (!known) {
      // The API cannot say (CUDA without parameter info): integers go as 32 bits when they fit.
      arg.kind = arg.is_buffer ? KernelArg::Kind::buffer : (fits_int32 ? KernelArg::Kind::int32 : KernelArg::Kind::int64);
      continue;
    }
    const KernelParam& param = params[i];
    // Whether a parameter can take a buffer: a type name (OpenCL) says; a size alone (CUDA's
    // cuFuncGetParamInfo) only rules out parameters narrower than a pointer.
    const bool cannot_take_buffer =
        !param.is_pointer && (!param.type_name.empty() || (param.size > 0 && param.size != sizeof(std::uint64_t)));
    if (arg.is_buffer) {
      if (cannot_take_buffer) {
        throw InvalidLaunch(fmt::format("{}argument {} of {} is the buffer {}, but parameter {} is {}",
                                        line_prefix(launch.line), i + 1, launch.kernel,
                                        plan.buffers[arg.buffer].name, i + 1, describe_param(param)));
      }
      arg.kind = KernelArg::Kind::buffer;
      continue;
    }
    if (param.is_pointer) {
      throw InvalidLaunch(fmt::format("{}argument {} of {} is the integer `{}` = {}, but parameter {} is {}: pass "
                                      "a tensor or workspace name there",
                                      line_prefix(launch.line), i + 1, launch.kernel, arg.text, arg.value, i + 1,
                                      describe_param(param)));
    }
    if (!param.type_name.empty() && !is_integer_type_name(param.type_name)) {
      throw InvalidLaunch(fmt::format("{}parameter {} of {} is {}; plan arguments are tensors, workspaces or "
                                      "integers (int, long): compute other values inside the kernel",
                                      line_prefix(launch.line), i + 1, launch.kernel, describe_param(param)));
    }
    std::size_t size = param.size;
    if (size == 0 && !param.type_name.empty()) {
      const bool wide = param.type_name.find("long") != std::string::npos ||
                        param.type_name.find("64") != std::string::npos || param.type_name.find("size_t") != std::string::npos ||
                        param.type_name.find("ptr") != std::string::npos;
      size = wide ? 8 : 4;
    }
    if (size == 8) {
      arg.kind = KernelArg::Kind::int64;
    } else if (size == 4 || size == 0) {
      if (!fits_int32) {
        throw InvalidLaunch(fmt::format("{}argument {} of {} is `{}` = {}, which does not fit the 32-bit parameter "
                                        "{}; declare it as a 64-bit integer (long long / long)",
                                        line_prefix(launch.line), i + 1, launch.kernel, arg.text, arg.value, i + 1));
      }
      arg.kind = KernelArg::Kind::int32;
    } else {
      throw InvalidLaunch(fmt::format("{}parameter {} of {} is a {}-byte value; plan integers are passed as 32 or "
                                      "64 bits (int, long long)",
                                      line_prefix(launch.line), i + 1, launch.kernel, size));
    }
  }
}
}  // namespace kernelsmith::detail
