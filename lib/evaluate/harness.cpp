#include "evaluate/harness.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <deque>
#include <limits>
#include <new>
#include <optional>
#include <set>
#include <unordered_map>

#include <unistd.h>

#include "evaluate/build_failure.hpp"
#include "evaluate/host_tensors.hpp"
#include "detail/random.hpp"
#include "detail/sha256.hpp"
#include "evaluate/task_key.hpp"
#include "evaluate/timing.hpp"
#include "kernelsmith/error.hpp"

namespace kernelsmith::detail {
// Named rather than anonymous: Harness::State (external linkage) holds these types.
namespace harness_internal {

using Clock = std::chrono::steady_clock;

/// A plan that does not fit the task, the kernels or the device: becomes `invalid_launch`.
class InvalidLaunch : public Error {
 public:
  using Error::Error;
};

/// A compiler rejection found inside the harness: becomes `compile_error`.
class CompileRejected : public Error {
 public:
  CompileRejected(const std::string& message, std::string log) : Error(message), log(std::move(log)) {}
  std::string log;
};

/// Stops the correctness or timing stage with a verdict other than ok.
struct Verdict {
  Status status;
  std::string message;
};

std::uint64_t stable_hash(const std::string& text) {
  // FNV-1a: the same on every platform, unlike std::hash.
  std::uint64_t hash = 1469598103934665603ULL;
  for (unsigned char c : text) {
    hash ^= c;
    hash *= 1099511628211ULL;
  }
  return hash;
}

std::string line_prefix(int line) { return line > 0 ? fmt::format("line {}: ", line) : std::string(); }

// ------------------------------------------------------------------------------------------ plan binding

struct BufferSpec {
  enum class Role { input, output, workspace } role = Role::input;
  std::string name;
  DType dtype = DType::float32;
  std::int64_t count = 0;
  std::size_t bytes = 0;
  std::size_t tensor_index = 0;  ///< index in task.tensors (inputs and outputs)
};

struct BoundArg {
  bool is_buffer = false;
  std::size_t buffer = 0;  ///< index into BoundPlan::buffers
  std::int64_t value = 0;
  KernelArg::Kind kind = KernelArg::Kind::int32;
  std::string text;
};

struct BoundLaunch {
  std::string kernel;
  int line = 0;
  Dim3 grid{1, 1, 1};
  Dim3 block{1, 1, 1};
  std::size_t shared_bytes = 0;
  std::vector<BoundArg> args;
  std::uint64_t handle = 0;
};

struct BoundPlan {
  std::string config;
  std::vector<BufferSpec> buffers;
  std::vector<BoundLaunch> launches;
};

Bindings device_bindings(const DeviceInfo& device) {
  const std::int64_t optin = device.shared_per_block_optin > 0 ? device.shared_per_block_optin : device.shared_per_block;
  return {{"SM_COUNT", device.compute_units},
          {"WARP_SIZE", device.warp_size},
          {"MAX_THREADS_PER_BLOCK", device.max_threads_per_block},
          {"SMEM_PER_BLOCK", device.shared_per_block},
          {"SMEM_PER_BLOCK_OPTIN", optin},
          {"L2_BYTES", device.l2_bytes}};
}

Bindings plan_bindings(const LaunchPlan& plan, const SizeConfig& config, const DeviceInfo& device) {
  Bindings bindings = device_bindings(device);
  for (const auto& tunable : plan.tunables) bindings[tunable.name] = tunable.value;
  for (const auto& [name, value] : config.sizes) bindings[name] = value;
  return bindings;
}

std::int64_t evaluate_in_plan(const std::string& expression, const Bindings& bindings, int line,
                              const std::string& what) {
  try {
    return evaluate_expression(expression, bindings);
  } catch (const PlanError& e) {
    throw InvalidLaunch(fmt::format("{}{} `{}`: {}", line_prefix(line), what, expression, e.what()));
  }
}

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

// Binds a plan to one size configuration and the device: buffer sizes, launch dimensions, argument
// values. Kernel handles and parameter checks come later (they need the loaded program).
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
    const std::int64_t limit = device.global_memory_bytes > 0 ? device.global_memory_bytes
                                                                : std::numeric_limits<std::int64_t>::max() / 2;
    if (buffer.count > limit / element) {
      throw InvalidLaunch(fmt::format("{}workspace {} needs {} elements of {} (`{}`), more than the device's {} bytes",
                                      line_prefix(workspace.line), workspace.name, buffer.count,
                                      to_string(workspace.dtype), workspace.count, device.global_memory_bytes));
    }
    buffer.bytes = static_cast<std::size_t>(buffer.count * element);
    bound.buffers.push_back(buffer);
  }
  for (const auto& requirement : plan.requirements) {
    if (evaluate_in_plan(requirement, bindings, 0, "requirement") == 0) {
      throw InvalidLaunch(fmt::format("the requirement `@require {}` does not hold for the sizes '{}' on {}",
                                      requirement, config.name, device.name));
    }
  }
  const std::int64_t max_threads = device.max_threads_per_block;
  const std::int64_t max_shared =
      device.shared_per_block_optin > 0 ? device.shared_per_block_optin : device.shared_per_block;
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
    for (std::size_t i = 0; i < launch.args.size(); ++i) {
      const std::string& text = launch.args[i];
      BoundArg arg;
      arg.text = text;
      const auto found = std::find_if(bound.buffers.begin(), bound.buffers.end(),
                                      [&](const BufferSpec& buffer) { return buffer.name == text; });
      if (found != bound.buffers.end()) {
        arg.is_buffer = true;
        arg.buffer = static_cast<std::size_t>(found - bound.buffers.begin());
      } else {
        arg.value = evaluate_in_plan(text, bindings, launch.line,
                                     fmt::format("argument {} of {}", i + 1, launch.kernel));
      }
      out.args.push_back(arg);
    }
    bound.launches.push_back(std::move(out));
  }
  return bound;
}

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

// Checks a bound launch against what the device API says of the kernel's parameters and decides how
// each integer is passed.
void check_params(BoundLaunch& launch, const std::vector<KernelParam>& all_params, const BoundPlan& plan) {
  std::vector<KernelParam> params;
  for (const auto& param : all_params) {
    if (!param.is_dynamic_shared) params.push_back(param);
  }
  const bool known = !all_params.empty();
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

// ------------------------------------------------------------------------------------------ device memory

/// Device allocations kept for reuse, by size. Evaluations of one task then run on the same memory:
/// no allocation cost per evaluation, and the candidate, its baseline and the next candidate are timed
/// on the same physical pages (fresh allocations land on different ones, which moves the medians of
/// memory-bound kernels by about a percent from one evaluation to the next).
class BufferPool {
 public:
  explicit BufferPool(std::size_t capacity_bytes) : capacity_(capacity_bytes) {}
  std::uint64_t acquire(Backend& backend, std::size_t bytes) {
    auto found = free_.find(bytes);
    if (found != free_.end() && !found->second.empty()) {
      const std::uint64_t handle = found->second.back();
      found->second.pop_back();
      pooled_ -= bytes;
      return handle;
    }
    try {
      return backend.allocate(bytes);
    } catch (const DeviceFault&) {
      throw;
    } catch (const DeviceError&) {
      // Out of memory, perhaps because of what the pool holds: give it back and try once more.
      if (pooled_ == 0) throw;
      clear(backend);
      return backend.allocate(bytes);
    }
  }
  void release(Backend& backend, std::uint64_t handle, std::size_t bytes) {
    if (pooled_ + bytes <= capacity_) {
      free_[bytes].push_back(handle);
      pooled_ += bytes;
      return;
    }
    backend.free(handle);
  }
  void clear(Backend& backend) {
    for (auto& [bytes, handles] : free_) {
      for (auto handle : handles) {
        try {
          backend.free(handle);
        } catch (...) {
        }
      }
    }
    free_.clear();
    pooled_ = 0;
  }

 private:
  std::size_t capacity_;
  std::size_t pooled_ = 0;
  std::map<std::size_t, std::vector<std::uint64_t>> free_;
};

class DeviceBuffers {
 public:
  DeviceBuffers(Backend& backend, BufferPool& pool, const std::vector<BufferSpec>& specs)
      : backend_(backend), pool_(pool) {
    handles_.reserve(specs.size());
    try {
      for (const auto& spec : specs) {
        handles_.push_back(pool_.acquire(backend_, spec.bytes));
        bytes_.push_back(spec.bytes);
      }
    } catch (...) {
      release_all();
      throw;
    }
  }
  ~DeviceBuffers() { release_all(); }
  DeviceBuffers(const DeviceBuffers&) = delete;
  DeviceBuffers& operator=(const DeviceBuffers&) = delete;
  std::uint64_t operator[](std::size_t index) const { return handles_[index]; }
  const std::vector<std::uint64_t>& handles() const { return handles_; }

 private:
  void release_all() {
    for (std::size_t i = 0; i < handles_.size(); ++i) {
      try {
        pool_.release(backend_, handles_[i], bytes_[i]);
      } catch (...) {
        // After a device fault freeing fails too; the worker is about to exit.
      }
    }
    handles_.clear();
  }

  Backend& backend_;
  BufferPool& pool_;
  std::vector<std::uint64_t> handles_;
  std::vector<std::size_t> bytes_;
};

// `buffers` holds a device buffer per entry of the plan's buffers, in the same order.
void launch_one(Backend& backend, const BoundLaunch& launch, const std::vector<std::uint64_t>& buffers) {
  std::vector<KernelArg> args;
  args.reserve(launch.args.size());
  for (const auto& arg : launch.args) {
    KernelArg out;
    out.kind = arg.is_buffer ? KernelArg::Kind::buffer : arg.kind;
    if (arg.is_buffer) {
      out.buffer = buffers[arg.buffer];
    } else {
      out.value = arg.value;
    }
    args.push_back(out);
  }
  backend.launch(launch.handle, launch.grid, launch.block, launch.shared_bytes, args);
}

void run_plan(Backend& backend, const BoundPlan& plan, const std::vector<std::uint64_t>& buffers) {
  for (const auto& launch : plan.launches) launch_one(backend, launch, buffers);
}

LaunchSequence sequence_of(Backend& backend, const BoundPlan& plan, const DeviceBuffers& buffers) {
  LaunchSequence sequence;
  for (const auto& launch : plan.launches) sequence.names.push_back(launch.kernel);
  sequence.launch = [&backend, &plan, &buffers](std::size_t index) {
    launch_one(backend, plan.launches[index], buffers.handles());
  };
  return sequence;
}

// A loaded program, unloaded when it goes out of scope.
class LoadedModule {
 public:
  LoadedModule(Backend& backend, std::uint64_t handle) : backend_(&backend), handle_(handle) {}
  ~LoadedModule() {
    if (backend_ == nullptr) return;
    try {
      backend_->unload(handle_);
    } catch (...) {
    }
  }
  LoadedModule(LoadedModule&& other) noexcept : backend_(other.backend_), handle_(other.handle_) {
    other.backend_ = nullptr;
  }
  LoadedModule& operator=(LoadedModule&&) = delete;
  LoadedModule(const LoadedModule&) = delete;
  std::uint64_t handle() const { return handle_; }

 private:
  Backend* backend_;
  std::uint64_t handle_;
};

std::vector<std::string> unique_kernel_names(const LaunchPlan& plan) {
  std::vector<std::string> names;
  for (const auto& launch : plan.launches) {
    if (std::find(names.begin(), names.end(), launch.kernel) == names.end()) names.push_back(launch.kernel);
  }
  return names;
}

// ------------------------------------------------------------------------------------------ input cases

/// Inputs of one correctness case and the reference's outputs for them.
struct CaseData {
  std::vector<Bytes> inputs;    ///< per input tensor, in task order
  std::vector<Bytes> expected;  ///< per output tensor, in task order
  std::size_t bytes() const {
    std::size_t total = 0;
    for (const auto& b : inputs) total += b.size();
    for (const auto& b : expected) total += b.size();
    return total;
  }
};

/// Reference results are computed once per (task, sizes, input kind, seed) and kept while they fit.
class CaseCache {
 public:
  explicit CaseCache(std::size_t capacity_bytes) : capacity_(capacity_bytes) {}
  const CaseData* find(const std::string& key) const {
    const auto found = entries_.find(key);
    return found == entries_.end() ? nullptr : &found->second;
  }
  const CaseData& insert(const std::string& key, CaseData data) {
    const std::size_t size = data.bytes();
    while (!order_.empty() && total_ + size > capacity_) {
      const auto oldest = entries_.find(order_.front());
      if (oldest != entries_.end()) {
        total_ -= oldest->second.bytes();
        entries_.erase(oldest);
      }
      order_.pop_front();
    }
    total_ += size;
    order_.push_back(key);
    return entries_[key] = std::move(data);
  }

 private:
  std::size_t capacity_;
  std::size_t total_ = 0;
  std::deque<std::string> order_;
  std::unordered_map<std::string, CaseData> entries_;
};

// Reference inputs and outputs kept in host memory: an eighth of it, between 1 and 16 GiB. A strict
// evaluation of a large task holds about eight cases of its timing sizes.
std::size_t case_cache_bytes() {
  constexpr std::size_t kGiB = std::size_t(1) << 30;
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long page_size = sysconf(_SC_PAGE_SIZE);
  const std::size_t physical = pages > 0 && page_size > 0 ? std::size_t(pages) * std::size_t(page_size) : 8 * kGiB;
  return std::clamp(physical / 8, kGiB, 16 * kGiB);
}

// Device memory the buffer pool may keep between evaluations: a quarter of the device's.
std::size_t buffer_pool_bytes(const DeviceInfo& device) {
  constexpr std::size_t kFallback = std::size_t(1) << 30;
  return device.global_memory_bytes > 0 ? static_cast<std::size_t>(device.global_memory_bytes) / 4 : kFallback;
}
constexpr double kNearConstantSpread = 1e-3;
constexpr std::size_t kReferenceTasksKept = 8;
constexpr std::uint64_t kTimingSeedStream = 0x7157'0000'0000'0001ULL;

std::uint64_t case_seed(std::uint64_t base, const std::string& config, InputKind kind, int trial) {
  return mix_seed(mix_seed(base, stable_hash(config)), static_cast<std::uint64_t>(kind) * 1000 + trial);
}

}  // namespace harness_internal

using namespace harness_internal;

// ------------------------------------------------------------------------------------------ compile jobs

std::vector<CompileJob> compile_jobs(const Task& task, const LaunchPlan& plan, const std::string& target,
                                     double timeout_seconds) {
  CompileOptions base;
  base.target = target;
  base.timeout_seconds = timeout_seconds;
  base.kernels = unique_kernel_names(plan);
  for (const auto& tunable : plan.tunables) base.defines.emplace_back(tunable.name, std::to_string(tunable.value));
  if (!plan.specialize) return {{"", base}};
  std::vector<CompileJob> jobs;
  for (const auto& config : task.all_size_configs()) {
    CompileJob job{config.name, base};
    for (const auto& [name, value] : config.sizes) job.options.defines.emplace_back("KS_" + name, std::to_string(value));
    jobs.push_back(std::move(job));
  }
  return jobs;
}

std::string plan_error_message(const PlanError& error) {
  const std::string what = error.what();
  // The parser's messages usually name the line already.
  if (error.line() <= 0 || what.rfind("line ", 0) == 0) return what;
  return fmt::format("line {}: {}", error.line(), what);
}

Evaluation failed_evaluation(const Task& task, const Candidate& candidate, const std::string& backend,
                             const std::string& device, Status status, const std::string& message) {
  Evaluation evaluation;
  evaluation.candidate_id = candidate.id();
  evaluation.task = task.name;
  evaluation.backend = backend;
  evaluation.device = device;
  evaluation.status = status;
  evaluation.message = message;
  evaluation.fitness = failure_fitness(status);
  return evaluation;
}

// ------------------------------------------------------------------------------------------ the harness

namespace harness_internal {

/// A task's reference, compiled, loaded and bound to every size configuration: kept across
/// evaluations of the same task, with its baseline timings.
struct ReferenceState {
  std::string key;
  std::vector<LoadedModule> modules;
  std::map<std::string, BoundPlan> bound;  ///< by size configuration name
  bool spread_checked = false;
  std::map<std::string, TimingReport> baseline;  ///< by timing mode
};

}  // namespace harness_internal

struct Harness::State {
  State(std::string directory, std::size_t pool_bytes) : cache_dir(std::move(directory)), pool(pool_bytes) {}
  std::string cache_dir;
  bool measure_peaks = true;
  std::optional<DevicePeaks> peaks;
  bool peaks_failed = false;
  CaseCache cases{case_cache_bytes()};
  BufferPool pool;
  std::deque<std::unique_ptr<ReferenceState>> references;
  std::unique_ptr<CacheFlusher> flusher;  // built on the first timed sample
};

Harness::Harness(Backend& backend, std::string cache_dir)
    : backend_(backend), state_(std::make_unique<State>(std::move(cache_dir), buffer_pool_bytes(backend.device()))) {}

Harness::~Harness() {
  state_->references.clear();
  state_->pool.clear(backend_);
  state_->flusher.reset();
}

void Harness::set_measure_peaks(bool measure) { state_->measure_peaks = measure; }

DevicePeaks Harness::peaks(bool measure) {
  if (state_->peaks) return *state_->peaks;
  if (auto cached = load_cached_peaks(state_->cache_dir, backend_.name(), backend_.device())) {
    state_->peaks = cached;
    return *cached;
  }
  if (!measure || state_->peaks_failed) return {};
  try {
    state_->peaks = measure_device_peaks(backend_, state_->cache_dir);
    return *state_->peaks;
  } catch (const DeviceFault&) {
    throw;
  } catch (const std::exception&) {
    // The speed-of-light section is left out rather than failing evaluations.
    state_->peaks_failed = true;
    return {};
  }
}

namespace {

/// Everything one evaluation needs; the stages are its methods.
class EvaluationRun {
 public:
  EvaluationRun(Backend& backend, Harness::State& state, const Task& task, const Candidate& candidate,
                const EvaluatorOptions& options)
      : backend_(backend), state_(state), task_(task), candidate_(candidate), options_(options) {}

  ReferenceState& reference(const std::string& task_key);
  void check_reference_spread(ReferenceState& reference);
  /// With `user`, the inputs are the caller's data case and its expected outputs replace the reference's.
  const CaseData& reference_case(ReferenceState& reference, const SizeConfig& config, InputKind kind,
                                 std::uint64_t seed, const DataCase* user = nullptr);
  CorrectnessReport check_candidate(ReferenceState& reference, const std::map<std::string, BoundPlan>& bound,
                                    IntegrityReport& integrity);
  /// Times a plan on the case's inputs; with `timed_output_problem`, also checks the outputs of the
  /// timed runs and describes the first problem there.
  TimingReport time_plan(const BoundPlan& plan, const CaseData& data, const std::string& mode,
                         std::string* timed_output_problem);
  TimingReport baseline(ReferenceState& reference, const std::string& mode);

 private:
  CacheFlusher& flusher();
  TimingSettings settings(const std::string& mode);

  Backend& backend_;
  Harness::State& state_;
  const Task& task_;
  const Candidate& candidate_;
  const EvaluatorOptions& options_;
};

// Loads and binds a plan's program(s); the caller keeps the modules alive as long as the bound plans.
struct LoadedPlan {
  std::vector<LoadedModule> modules;
  std::map<std::string, BoundPlan> bound;
  CompileReport report;
};

LoadedPlan load_plan(Backend& backend, const Task& task, const LaunchPlan& plan, const std::string& source,
                     const ProgramSet& given, double compile_timeout) {
  LoadedPlan loaded;
  // Bind first: a plan that does not fit is reported before anything is compiled or loaded.
  for (const auto& config : task.all_size_configs()) loaded.bound[config.name] = bind_plan(task, plan, config, backend.device());

  ProgramSet programs = given;
  if (programs.empty()) {
    for (const auto& job : compile_jobs(task, plan, "", compile_timeout)) {
      programs[job.config] = backend.compile(source, job.options);
    }
  }
  bool first = true;
  for (const auto& [config, program] : programs) {
    const std::string label = config.empty() ? std::string() : fmt::format("[sizes {}] ", config);
    if (first) {
      loaded.report = program.report;
      first = false;
    } else {
      loaded.report.seconds += program.report.seconds;
      loaded.report.cached = loaded.report.cached && program.report.cached;
    }
    if (!program.report.ok) {
      throw CompileRejected(fmt::format("{}the compiler rejected the source", label), label + program.report.log);
    }
  }
  std::map<std::string, std::uint64_t> module_of_config;
  for (const auto& [config, program] : programs) {
    const auto start = Clock::now();
    try {
      loaded.modules.emplace_back(backend, backend.load(program));
    } catch (const BuildFailure& failure) {
      const std::string label = config.empty() ? std::string() : fmt::format("[sizes {}] ", config);
      throw CompileRejected(failure.what(), label + failure.log());
    }
    loaded.report.seconds += std::chrono::duration<double>(Clock::now() - start).count();
    module_of_config[config] = loaded.modules.back().handle();
  }

  std::map<std::pair<std::uint64_t, std::string>, std::uint64_t> kernels;
  std::set<std::string> described;
  for (auto& [config, bound] : loaded.bound) {
    const auto module_it = module_of_config.count(config) ? module_of_config.find(config) : module_of_config.find("");
    if (module_it == module_of_config.end()) {
      throw Error(fmt::format("no program was compiled for the sizes '{}'", config));
    }
    for (auto& launch : bound.launches) {
      const auto key = std::make_pair(module_it->second, launch.kernel);
      auto found = kernels.find(key);
      if (found == kernels.end()) {
        std::uint64_t handle = 0;
        try {
          handle = backend.kernel(module_it->second, launch.kernel);
        } catch (const NotFoundError& e) {
          throw InvalidLaunch(fmt::format("{}the plan launches {}, but {}", line_prefix(launch.line), launch.kernel,
                                          e.what()));
        }
        found = kernels.emplace(key, handle).first;
      }
      launch.handle = found->second;
      check_params(launch, backend.kernel_params(launch.handle), bound);
      const KernelResources resources = backend.kernel_resources(launch.handle);
      const std::int64_t limit = backend.device().shared_per_block_optin > 0 ? backend.device().shared_per_block_optin
                                                                             : backend.device().shared_per_block;
      if (limit > 0 && resources.shared_bytes > 0 &&
          resources.shared_bytes + static_cast<std::int64_t>(launch.shared_bytes) > limit) {
        throw InvalidLaunch(fmt::format("{}{} uses {} bytes of static and {} bytes of dynamic shared memory; the "
                                        "device allows {} per block",
                                        line_prefix(launch.line), launch.kernel, resources.shared_bytes,
                                        launch.shared_bytes, limit));
      }
      if (described.insert(launch.kernel).second) {
        // The toolchain's report (registers, spills) completed by what the loaded kernel says.
        auto entry = std::find_if(loaded.report.kernels.begin(), loaded.report.kernels.end(),
                                  [&](const KernelResources& k) { return k.name == launch.kernel; });
        if (entry == loaded.report.kernels.end()) {
          loaded.report.kernels.push_back(resources);
        } else {
          if (entry->registers < 0) entry->registers = resources.registers;
          if (entry->shared_bytes < 0) entry->shared_bytes = resources.shared_bytes;
          if (entry->local_bytes < 0) entry->local_bytes = resources.local_bytes;
          if (entry->stack_bytes < 0) entry->stack_bytes = resources.stack_bytes;
          if (entry->spill_load_bytes < 0) entry->spill_load_bytes = resources.spill_load_bytes;
          if (entry->spill_store_bytes < 0) entry->spill_store_bytes = resources.spill_store_bytes;
        }
      }
    }
  }
  return loaded;
}

ReferenceState& EvaluationRun::reference(const std::string& key) {
  for (auto& existing : state_.references) {
    if (existing->key == key) return *existing;
  }
  const auto source = task_.references.find(backend_.language());
  if (source == task_.references.end()) {
    throw TaskError(fmt::format("task {} has no {} reference, which the {} backend needs as the correctness oracle "
                                "and the baseline; add \"references\": {{\"{}\": ...}} to its manifest",
                                task_.name, backend_.language(), backend_.name(), backend_.language()));
  }
  auto state = std::make_unique<ReferenceState>();
  state->key = key;
  try {
    const LaunchPlan plan = LaunchPlan::parse(source->second.source);
    LoadedPlan loaded = load_plan(backend_, task_, plan, source->second.source, {}, options_.compile_timeout_seconds);
    state->modules = std::move(loaded.modules);
    state->bound = std::move(loaded.bound);
  } catch (const DeviceFault&) {
    throw;
  } catch (const CompileRejected& e) {
    throw TaskError(fmt::format("task {}: its {} reference does not compile on {}: {}\n{}", task_.name,
                                backend_.language(), backend_.device().name, e.what(), e.log));
  } catch (const std::exception& e) {
    throw TaskError(fmt::format("task {}: its {} reference cannot run on {}: {}", task_.name, backend_.language(),
                                backend_.device().name, e.what()));
  }
  if (state_.references.size() >= kReferenceTasksKept) state_.references.pop_front();
  state_.references.push_back(std::move(state));
  return *state_.references.back();
}

const CaseData& EvaluationRun::reference_case(ReferenceState& reference, const SizeConfig& config, InputKind kind,
                                               std::uint64_t seed, const DataCase* user) {
  const std::string key = user != nullptr ? fmt::format("{}|{}|{}", reference.key, config.name, user->name)
                                          : fmt::format("{}|{}|{}|{}", reference.key, config.name, to_string(kind), seed);
  if (const CaseData* cached = state_.cases.find(key)) return *cached;
  const BoundPlan& plan = reference.bound.at(config.name);
  CaseData data;
  for (std::size_t i = 0; i < plan.buffers.size(); ++i) {
    const BufferSpec& buffer = plan.buffers[i];
    if (buffer.role != BufferSpec::Role::input) continue;
    if (user != nullptr) {
      data.inputs.push_back(*user->inputs.at(buffer.name));
      continue;
    }
    data.inputs.push_back(generate_input(task_.tensors[buffer.tensor_index], buffer.count, kind,
                                         mix_seed(seed, buffer.tensor_index)));
  }
  try {
    DeviceBuffers buffers(backend_, state_.pool, plan.buffers);
    std::size_t input = 0;
    for (std::size_t i = 0; i < plan.buffers.size(); ++i) {
      const BufferSpec& buffer = plan.buffers[i];
      if (buffer.role == BufferSpec::Role::input) {
        backend_.write(buffers[i], data.inputs[input++].data(), buffer.bytes);
      } else {
        backend_.fill(buffers[i], 0, buffer.bytes);
      }
    }
    run_plan(backend_, plan, buffers.handles());
    backend_.synchronize();
    for (std::size_t i = 0; i < plan.buffers.size(); ++i) {
      const BufferSpec& buffer = plan.buffers[i];
      if (buffer.role != BufferSpec::Role::output) continue;
      Bytes out(buffer.bytes);
      backend_.read(buffers[i], out.data(), buffer.bytes);
      if (user != nullptr && user->expected.count(buffer.name) > 0) out = *user->expected.at(buffer.name);
      data.expected.push_back(std::move(out));
    }
  } catch (const DeviceFault&) {
    throw;
  } catch (const std::exception& e) {
    throw TaskError(fmt::format("task {}: its {} reference failed on the sizes '{}' with {} inputs: {}", task_.name,
                                backend_.language(), config.name, to_string(kind), e.what()));
  }
  return state_.cases.insert(key, std::move(data));
}

void EvaluationRun::check_reference_spread(ReferenceState& reference) {
  if (reference.spread_checked) return;
  // Several random cases on the timing sizes: an output that barely varies across elements and seeds
  // lets a wrong kernel pass a tolerance (pitfall 8).
  const SizeConfig& config = task_.timing_sizes;
  const int cases = std::max(options_.correctness_trials, 2);
  std::vector<const CaseData*> data;
  for (int trial = 0; trial < cases; ++trial) {
    data.push_back(&reference_case(reference, config, InputKind::random,
                                   case_seed(options_.seed, config.name, InputKind::random, trial)));
  }
  std::size_t output = 0;
  for (const auto& tensor : task_.tensors) {
    if (tensor.role != TensorRole::output) continue;
    std::vector<const Bytes*> buffers;
    for (const CaseData* d : data) buffers.push_back(&d->expected[output]);
    const std::int64_t count = task_.element_count(tensor, config.sizes);
    const double spread = relative_spread(tensor.dtype, buffers, count);
    if (spread < kNearConstantSpread) {
      throw TaskError(fmt::format(
          "task {}: the reference output {} is near-constant on random inputs (relative spread {:.3g} over {} "
          "trials of the sizes '{}'): a wrong kernel could pass the tolerance; change the task's input "
          "distributions or its computation",
          task_.name, tensor.name, spread, cases, config.name));
    }
    ++output;
  }
  reference.spread_checked = true;
}

std::string describe_failure(const OutputCheck& check, std::int64_t count) {
  if (check.unwritten > 0) {
    return fmt::format("{}: {} of {} elements were never written (first at index {})", check.tensor, check.unwritten,
                       count, check.first_mismatch);
  }
  if (check.non_finite > 0) {
    return fmt::format("{}: {} elements are NaN or infinite where the reference is finite (first at index {}: "
                       "expected {:.6g}, got {:.6g})",
                       check.tensor, check.non_finite, check.first_mismatch, check.expected, check.actual);
  }
  return fmt::format("{}: {} of {} elements differ from the reference beyond the tolerance (first at index {}: "
                     "expected {:.6g}, got {:.6g}); max abs error {:.3g}, relative L2 error {:.3g}",
                     check.tensor, check.mismatches, count, check.first_mismatch, check.expected, check.actual,
                     check.max_abs_error, check.rel_l2_error);
}

CorrectnessReport EvaluationRun::check_candidate(ReferenceState& reference,
                                                 const std::map<std::string, BoundPlan>& bound,
                                                 IntegrityReport& integrity) {
  CorrectnessReport report;
  report.passed = true;
  const auto configs = task_.all_size_configs();
  // Two passes over the configurations: the built-in cases, then the caller's data cases (Task::add_case).
  for (std::size_t step = 0; step < 2 * configs.size(); ++step) {
    const std::size_t ci = step % configs.size();
    const bool user_pass = step >= configs.size();
    const SizeConfig& config = configs[ci];
    const BoundPlan& plan = bound.at(config.name);
    // configs[0] is the timing sizes: the largest, where each case costs the most. Screen mode runs
    // fewer cases there; the check sizes get every kind of input in both modes.
    const bool strict = options_.mode == "strict";
    const bool timing_sizes = ci == 0;
    std::vector<std::pair<InputKind, int>> cases;
    const int trials_at_timing_sizes = strict ? options_.correctness_trials : options_.screen_correctness_trials;
    const int random_trials = timing_sizes ? std::max(trials_at_timing_sizes, 1) : 1;
    if (user_pass) {
      // In this pass the second member is the index of the data case in task_.cases.
      for (std::size_t u = 0; u < task_.cases.size(); ++u) {
        if (task_.cases[u].sizes == config.name) cases.emplace_back(InputKind::random, static_cast<int>(u));
      }
      if (cases.empty()) continue;
    } else {
      for (int trial = 0; trial < random_trials; ++trial) cases.emplace_back(InputKind::random, trial);
    }
    if (!user_pass && options_.adversarial_inputs &&
        (!timing_sizes || strict || options_.screen_adversarial_timing_sizes)) {
      for (InputKind kind : adversarial_input_kinds()) cases.emplace_back(kind, 0);
    }
    DeviceBuffers buffers(backend_, state_.pool, plan.buffers);
    for (const auto& [kind, trial] : cases) {
      const DataCase* user = user_pass ? &task_.cases[static_cast<std::size_t>(trial)] : nullptr;
      const std::uint64_t seed = user != nullptr ? 0 : case_seed(options_.seed, config.name, kind, trial);
      const CaseData& data = reference_case(reference, config, kind, seed, user);
      CorrectnessCheck check;
      check.sizes = config.name;
      check.inputs = user != nullptr ? user->name : to_string(kind);
      check.seed = seed;

      auto upload_inputs = [&] {
        std::size_t input = 0;
        for (std::size_t i = 0; i < plan.buffers.size(); ++i) {
          if (plan.buffers[i].role != BufferSpec::Role::input) continue;
          backend_.write(buffers[i], data.inputs[input++].data(), plan.buffers[i].bytes);
        }
      };
      auto poison = [&](std::uint8_t byte) {
        for (std::size_t i = 0; i < plan.buffers.size(); ++i) {
          if (plan.buffers[i].role != BufferSpec::Role::input) backend_.fill(buffers[i], byte, plan.buffers[i].bytes);
        }
      };
      auto read_outputs = [&] {
        std::vector<Bytes> outputs;
        for (std::size_t i = 0; i < plan.buffers.size(); ++i) {
          if (plan.buffers[i].role != BufferSpec::Role::output) continue;
          Bytes out(plan.buffers[i].bytes);
          backend_.read(buffers[i], out.data(), out.size());
          outputs.push_back(std::move(out));
        }
        return outputs;
      };
      // Inputs the candidate wrote into (pitfall 4); restores them for the next case.
      auto check_inputs = [&] {
        std::size_t input = 0;
        bool restored = false;
        for (std::size_t i = 0; i < plan.buffers.size(); ++i) {
          if (plan.buffers[i].role != BufferSpec::Role::input) continue;
          Bytes now(plan.buffers[i].bytes);
          backend_.read(buffers[i], now.data(), now.size());
          if (now != data.inputs[input]) {
            if (std::find(check.modified_inputs.begin(), check.modified_inputs.end(), plan.buffers[i].name) ==
                check.modified_inputs.end()) {
              check.modified_inputs.push_back(plan.buffers[i].name);
            }
            restored = true;
          }
          ++input;
        }
        if (restored) upload_inputs();
      };

      upload_inputs();
      poison(kPoisonFirst);
      run_plan(backend_, plan, buffers.handles());
      backend_.synchronize();
      const std::vector<Bytes> first = read_outputs();
      // Inputs are checked once, after the second run: a write in the first run is still there then
      // (and the second run's outputs then differ from the first's).
      poison(kPoisonSecond);
      run_plan(backend_, plan, buffers.handles());
      backend_.synchronize();
      const std::vector<Bytes> second = read_outputs();
      check_inputs();

      check.passed = check.modified_inputs.empty();
      std::size_t output = 0;
      std::string first_problem;
      for (std::size_t i = 0; i < plan.buffers.size(); ++i) {
        const BufferSpec& buffer = plan.buffers[i];
        if (buffer.role != BufferSpec::Role::output) continue;
        const Tolerance tolerance = task_.tolerance_for(buffer.dtype);
        OutputComparison comparison = compare_output(buffer.name, buffer.dtype, buffer.count, data.expected[output],
                                                     first[output], second[output], tolerance);
        if (comparison.nondeterministic > 0) {
          integrity.deterministic = false;
          if (std::find(integrity.flags.begin(), integrity.flags.end(), "nondeterministic") == integrity.flags.end()) {
            integrity.flags.push_back("nondeterministic");
          }
        }
        if (!comparison.check.passed) {
          check.passed = false;
          if (first_problem.empty()) first_problem = describe_failure(comparison.check, buffer.count);
        }
        check.outputs.push_back(std::move(comparison.check));
        ++output;
      }
      if (!check.modified_inputs.empty()) {
        check.message = fmt::format("the kernel wrote into its input{} {}; inputs must stay unchanged",
                                    check.modified_inputs.size() == 1 ? "" : "s", fmt::join(check.modified_inputs, ", "));
      } else if (!first_problem.empty()) {
        check.message = first_problem;
      }
      ++report.trials;
      const bool passed = check.passed;
      report.checks.push_back(std::move(check));
      if (!passed) {
        const CorrectnessCheck& failed = report.checks.back();
        report.passed = false;
        report.message = user_pass ? fmt::format("{} (sizes '{}'): {}", failed.inputs, failed.sizes, failed.message)
                                   : fmt::format("sizes '{}', {} inputs (seed {}): {}", failed.sizes, failed.inputs,
                                                 failed.seed, failed.message);
        return report;
      }
    }
  }
  report.message = fmt::format("{} checks passed over {} size configurations", report.trials, configs.size());
  return report;
}

CacheFlusher& EvaluationRun::flusher() {
  if (!state_.flusher) state_.flusher = std::make_unique<CacheFlusher>(backend_);
  return *state_.flusher;
}

TimingSettings EvaluationRun::settings(const std::string& mode) {
  // "remeasure" confirms a suspicious speedup: strict mode's rules, but at most max_samples samples. It
  // checks a ratio above suspicious_speedup, for which a thousand samples are plenty; sampling a whole
  // strict budget on both sides would multiply the cost of screening fast candidates.
  const bool strict = mode == "strict" || mode == "remeasure";
  TimingSettings settings;
  settings.mode = strict ? "strict" : "screen";
  settings.noise_target = options_.noise_target;
  settings.min_samples = strict ? std::max(options_.min_samples, options_.strict_min_samples) : options_.min_samples;
  settings.max_samples = mode == "strict"      ? options_.strict_max_samples
                         : mode == "remeasure" ? std::max(options_.max_samples, settings.min_samples)
                                               : options_.max_samples;
  settings.budget_seconds = strict ? options_.strict_budget_seconds : options_.screen_budget_seconds;
  settings.share_samples = strict ? 5 : 3;
  if (options_.flush_l2) settings.flusher = &flusher();
  return settings;
}

TimingReport EvaluationRun::time_plan(const BoundPlan& plan, const CaseData& data, const std::string& mode,
                                      std::string* timed_output_problem) {
  DeviceBuffers buffers(backend_, state_.pool, plan.buffers);
  std::size_t input = 0;
  for (std::size_t i = 0; i < plan.buffers.size(); ++i) {
    if (plan.buffers[i].role == BufferSpec::Role::input) {
      backend_.write(buffers[i], data.inputs[input++].data(), plan.buffers[i].bytes);
    } else {
      backend_.fill(buffers[i], kPoisonFirst, plan.buffers[i].bytes);
    }
  }
  const TimingReport report = measure_sequence(backend_, sequence_of(backend_, plan, buffers), settings(mode));
  if (timed_output_problem != nullptr) {
    // The outputs of the timed runs are checked too: a kernel that behaves only while checked fails.
    std::size_t output = 0;
    for (std::size_t i = 0; i < plan.buffers.size(); ++i) {
      const BufferSpec& buffer = plan.buffers[i];
      if (buffer.role != BufferSpec::Role::output) continue;
      Bytes out(buffer.bytes);
      backend_.read(buffers[i], out.data(), out.size());
      const OutputComparison comparison = compare_output(buffer.name, buffer.dtype, buffer.count,
                                                         data.expected[output], out, out,
                                                         task_.tolerance_for(buffer.dtype));
      if (!comparison.check.passed && timed_output_problem->empty()) {
        *timed_output_problem = "after the timed runs, " + describe_failure(comparison.check, buffer.count);
      }
      ++output;
    }
  }
  return report;
}

TimingReport EvaluationRun::baseline(ReferenceState& reference, const std::string& mode) {
  const auto found = reference.baseline.find(mode);
  if (found != reference.baseline.end()) return found->second;
  const SizeConfig& config = task_.timing_sizes;
  const CaseData& data = reference_case(reference, config, InputKind::random,
                                        mix_seed(options_.seed, kTimingSeedStream));
  TimingReport report;
  try {
    report = time_plan(reference.bound.at(config.name), data, mode, nullptr);
  } catch (const DeviceFault&) {
    throw;
  } catch (const std::exception& e) {
    throw TaskError(fmt::format("task {}: timing its {} reference failed: {}", task_.name, backend_.language(), e.what()));
  }
  reference.baseline[mode] = report;
  return report;
}

double speedup_of(const TimingReport& baseline, const TimingReport& candidate) {
  const double candidate_ms = candidate.median_ms > 0.0 ? candidate.median_ms : candidate.host_ms;
  if (!(candidate_ms > 0.0) || !(baseline.median_ms > 0.0)) return 0.0;
  return baseline.median_ms / candidate_ms;
}

std::string reference_key(const Task& task, const std::string& language) {
  // The content key does not re-encode the data cases' bytes on every evaluation.
  return Sha256().field(task_content_key(task)).field(language).hex().substr(0, 24);
}

void add_flag(IntegrityReport& integrity, const std::string& flag) {
  if (std::find(integrity.flags.begin(), integrity.flags.end(), flag) == integrity.flags.end()) {
    integrity.flags.push_back(flag);
  }
}

}  // namespace

void Harness::prepare(const Task& task, const EvaluatorOptions& options) {
  const Candidate none;
  EvaluationRun run(backend_, *state_, task, none, options);
  ReferenceState& reference = run.reference(reference_key(task, backend_.language()));
  run.check_reference_spread(reference);
  run.baseline(reference, options.mode == "strict" ? "strict" : "screen");
}

Evaluation Harness::evaluate(const Task& task, const Candidate& candidate, const ProgramSet& programs,
                             const EvaluatorOptions& options) {
  const auto started = Clock::now();
  Evaluation evaluation =
      failed_evaluation(task, candidate, backend_.name(), backend_.device().name, Status::runtime_error, "");
  auto finish = [&](Status status, const std::string& message) {
    evaluation.status = status;
    evaluation.message = message;
    evaluation.fitness = status == Status::ok ? evaluation.speedup : failure_fitness(status);
    evaluation.wall_seconds = std::chrono::duration<double>(Clock::now() - started).count();
    return evaluation;
  };

  if (candidate.language != backend_.language()) {
    evaluation.compile.log = fmt::format("the {} backend compiles {} kernels; this candidate is written in {}",
                                         backend_.name(), backend_.language(), candidate.language);
    return finish(Status::compile_error, evaluation.compile.log);
  }

  auto stage_start = Clock::now();
  auto end_stage = [&](const char* stage) {
    const auto now = Clock::now();
    evaluation.stage_seconds[stage] += std::chrono::duration<double>(now - stage_start).count();
    stage_start = now;
  };
  EvaluationRun run(backend_, *state_, task, candidate, options);
  ReferenceState& reference = run.reference(reference_key(task, backend_.language()));
  run.check_reference_spread(reference);
  end_stage("reference");

  try {
    LaunchPlan plan;
    try {
      plan = LaunchPlan::parse(candidate.source);
    } catch (const PlanError& e) {
      return finish(Status::invalid_launch, plan_error_message(e));
    }
    LoadedPlan loaded;
    try {
      loaded = load_plan(backend_, task, plan, candidate.source, programs, options.compile_timeout_seconds);
    } catch (const CompileRejected& e) {
      evaluation.compile.ok = false;
      evaluation.compile.log = e.log;
      const std::string first_line = headline_of_log(e.log);
      return finish(Status::compile_error, first_line.empty() ? e.what() : fmt::format("{}: {}", e.what(), first_line));
    }
    evaluation.compile = loaded.report;
    evaluation.compile.ok = true;
    end_stage("load");

    CorrectnessReport correctness = run.check_candidate(reference, loaded.bound, evaluation.integrity);
    evaluation.correctness = correctness;
    end_stage("correctness");
    if (!correctness.passed) return finish(Status::incorrect, correctness.message);

    const std::string mode = options.mode == "strict" ? "strict" : "screen";
    const SizeConfig& timing_config = task.timing_sizes;
    const CaseData& timing_case =
        run.reference_case(reference, timing_config, InputKind::random, mix_seed(options.seed, kTimingSeedStream));
    const BoundPlan& timed_plan = loaded.bound.at(timing_config.name);
    std::string timed_problem;
    TimingReport timing = run.time_plan(timed_plan, timing_case, mode, &timed_problem);
    end_stage("timing");
    if (!timed_problem.empty()) return finish(Status::incorrect, timed_problem);
    const TimingReport baseline = run.baseline(reference, mode);
    end_stage("baseline");
    evaluation.timing = timing;
    evaluation.baseline_timing = baseline;
    evaluation.speedup = speedup_of(baseline, timing);
    if (host_timer_mismatch(timing, timed_plan.launches.size())) add_flag(evaluation.integrity, "host_timer_mismatch");

    if (evaluation.speedup > options.suspicious_speedup) {
      // Too good to take on one measurement: both sides again, under strict mode's rules.
      add_flag(evaluation.integrity, "speedup_above_threshold");
      TimingReport again = run.time_plan(timed_plan, timing_case, "remeasure", &timed_problem);
      end_stage("timing");
      if (!timed_problem.empty()) return finish(Status::incorrect, timed_problem);
      const TimingReport baseline_again = run.baseline(reference, "remeasure");
      end_stage("baseline");
      evaluation.integrity.remeasured = true;
      evaluation.integrity.remeasured_speedup = speedup_of(baseline_again, again);
      add_flag(evaluation.integrity, "remeasured");
      if (mode != "strict") {
        // A screened speedup gives way to the more careful measurement; a strict one already is one.
        evaluation.timing = again;
        evaluation.baseline_timing = baseline_again;
        evaluation.speedup = evaluation.integrity.remeasured_speedup;
      }
    }

    const DevicePeaks device_peaks = peaks(state_->measure_peaks);
    SpeedOfLight sol;
    sol.flops = task.flops(timing_config.sizes);
    sol.bytes = task.min_bytes(timing_config.sizes);
    const double seconds = evaluation.timing->median_ms * 1e-3;
    if (seconds > 0.0) {
      sol.achieved_gbps = sol.bytes / seconds / 1e9;
      sol.achieved_gflops = sol.flops / seconds / 1e9;
    }
    sol.peak_gbps = device_peaks.gbps;
    sol.peak_gflops = device_peaks.gflops;
    if (sol.peak_gbps > 0.0) sol.bandwidth_fraction = sol.achieved_gbps / sol.peak_gbps;
    if (sol.peak_gflops > 0.0) sol.compute_fraction = sol.achieved_gflops / sol.peak_gflops;
    sol.fraction = std::max(sol.bandwidth_fraction, sol.compute_fraction);
    evaluation.sol = sol;

    const TimingReport& final_timing = *evaluation.timing;
    return finish(Status::ok, fmt::format("{:.3f}x the reference's speed ({:.4g} ms vs {:.4g} ms, noise {:.1f}%)",
                                          evaluation.speedup, final_timing.median_ms,
                                          evaluation.baseline_timing->median_ms, final_timing.noise * 100.0));
  } catch (const TaskError&) {
    throw;
  } catch (const DeviceFault&) {
    throw;
  } catch (const InvalidLaunch& e) {
    return finish(Status::invalid_launch, e.what());
  } catch (const LaunchError& e) {
    return finish(Status::invalid_launch, fmt::format("the device refused a launch: {}", e.what()));
  } catch (const std::bad_alloc&) {
    return finish(Status::runtime_error, "the worker ran out of host memory");
  } catch (const std::exception& e) {
    return finish(Status::runtime_error, e.what());
  }
}

// ------------------------------------------------------------------------------------------ plan runner

struct PlanRunner::Loaded {
  BufferPool pool{0};  ///< no reuse: runs are one-off
  std::vector<LoadedModule> modules;
  std::map<std::string, BoundPlan> bound;
  CompileReport report;
};

PlanRunner::PlanRunner(Backend& backend, const Task& task, const std::string& source)
    : backend_(backend), loaded_(std::make_unique<Loaded>()) {
  const LaunchPlan plan = LaunchPlan::parse(source);
  try {
    LoadedPlan loaded = load_plan(backend_, task, plan, source, {}, 60.0);
    loaded_->modules = std::move(loaded.modules);
    loaded_->bound = std::move(loaded.bound);
    loaded_->report = std::move(loaded.report);
  } catch (const CompileRejected& e) {
    throw Error(fmt::format("task {}: {} on {}:\n{}", task.name, e.what(), backend_.device().name, e.log));
  } catch (const InvalidLaunch& e) {
    throw Error(fmt::format("task {}: the launch plan does not fit on {}: {}", task.name, backend_.device().name,
                            e.what()));
  }
}

PlanRunner::~PlanRunner() = default;

const CompileReport& PlanRunner::compile_report() const { return loaded_->report; }

std::vector<Bytes> PlanRunner::run(const std::string& config, const std::vector<Bytes>& inputs) {
  const auto found = loaded_->bound.find(config);
  if (found == loaded_->bound.end()) {
    throw NotFoundError(fmt::format("no size configuration named '{}' in the task", config));
  }
  const BoundPlan& plan = found->second;
  std::size_t input_count = 0;
  for (const auto& buffer : plan.buffers) {
    if (buffer.role != BufferSpec::Role::input) continue;
    if (input_count < inputs.size() && inputs[input_count].size() != buffer.bytes) {
      throw ValidationError(fmt::format("input {} holds {} bytes; the sizes '{}' need {}", buffer.name,
                                        inputs[input_count].size(), config, buffer.bytes));
    }
    ++input_count;
  }
  if (input_count != inputs.size()) {
    throw ValidationError(fmt::format("got {} input buffers; the task has {} inputs", inputs.size(), input_count));
  }
  DeviceBuffers buffers(backend_, loaded_->pool, plan.buffers);
  std::size_t input = 0;
  for (std::size_t i = 0; i < plan.buffers.size(); ++i) {
    const BufferSpec& buffer = plan.buffers[i];
    if (buffer.role == BufferSpec::Role::input) {
      backend_.write(buffers[i], inputs[input++].data(), buffer.bytes);
    } else {
      backend_.fill(buffers[i], kPoisonFirst, buffer.bytes);
    }
  }
  run_plan(backend_, plan, buffers.handles());
  backend_.synchronize();
  std::vector<Bytes> outputs;
  for (std::size_t i = 0; i < plan.buffers.size(); ++i) {
    const BufferSpec& buffer = plan.buffers[i];
    if (buffer.role != BufferSpec::Role::output) continue;
    Bytes out(buffer.bytes);
    backend_.read(buffers[i], out.data(), buffer.bytes);
    outputs.push_back(std::move(out));
  }
  return outputs;
}

void PlanRunner::run_with_buffers(const std::string& config, const std::vector<std::uint64_t>& tensor_buffers) {
  const auto found = loaded_->bound.find(config);
  if (found == loaded_->bound.end()) {
    throw NotFoundError(fmt::format("no size configuration named '{}' in the task", config));
  }
  const BoundPlan& plan = found->second;
  // Workspaces are this runner's, freed on return; tensors are the caller's (in task order).
  std::vector<BufferSpec> workspace_specs;
  for (const BufferSpec& buffer : plan.buffers) {
    if (buffer.role == BufferSpec::Role::workspace && buffer.bytes > 0) workspace_specs.push_back(buffer);
  }
  DeviceBuffers workspaces(backend_, loaded_->pool, workspace_specs);
  std::vector<std::uint64_t> handles;
  std::size_t next_workspace = 0;
  for (const BufferSpec& buffer : plan.buffers) {
    if (buffer.role == BufferSpec::Role::workspace) {
      if (buffer.bytes == 0) {
        handles.push_back(0);
        continue;
      }
      handles.push_back(workspaces[next_workspace++]);
    } else {
      if (buffer.tensor_index >= tensor_buffers.size()) {
        throw ValidationError(fmt::format("got {} tensor buffers; the task has {} tensors", tensor_buffers.size(),
                                          buffer.tensor_index + 1));
      }
      handles.push_back(tensor_buffers[buffer.tensor_index]);
      if (buffer.role == BufferSpec::Role::input) continue;
    }
    backend_.fill(handles.back(), kPoisonFirst, buffer.bytes);
  }
  run_plan(backend_, plan, handles);
  backend_.synchronize();
}

}  // namespace kernelsmith::detail
