#include "kernelsmith/kernel_runner.hpp"

#include <fmt/format.h>

#include <deque>

#include "device_guard.hpp"
#include "evaluate/plan_runner.hpp"
#include "kernelsmith/backend.hpp"
#include "kernelsmith/error.hpp"
#include "kernelsmith/language.hpp"
#include "kernelsmith/launch_plan.hpp"

namespace kernelsmith {
namespace {

// Programs for the most recent size assignments: a plan binds its launch dimensions (and with
// @specialize its compiled code) to the sizes, so each new assignment loads the source once more.
constexpr std::size_t kSizeAssignmentsKept = 4;

std::string backend_for(const RunnerOptions& options, const Candidate& candidate) {
  if (options.backend != "auto") return options.backend;
  // The backend that runs the candidate's language (Triton runs on the CUDA backend, as a front end).
  if (const KernelLanguage* language = find_kernel_language(candidate.language)) return language->backend;
  return best_backend();
}

std::string sizes_text(const SizeMap& sizes) {
  std::vector<std::string> parts;
  for (const auto& [name, value] : sizes) parts.push_back(fmt::format("{}={}", name, value));
  return fmt::format("{}", fmt::join(parts, ", "));
}

}  // namespace

struct KernelRunner::Impl {
  Task task;
  Candidate candidate;
  std::unique_ptr<Backend> backend;
  struct Loaded {
    SizeMap sizes;
    std::unique_ptr<detail::PlanRunner> runner;
  };
  std::deque<Loaded> loaded;
  CompileReport last_report;

  detail::PlanRunner& runner_for(const SizeMap& sizes) {
    for (auto& entry : loaded) {
      if (entry.sizes == sizes) return *entry.runner;
    }
    // The plan is bound to the task's size configurations: a copy of the task whose only configuration
    // is the caller's sizes.
    Task at_sizes = task;
    at_sizes.timing_sizes = SizeConfig{"call", sizes};
    at_sizes.check_sizes.clear();
    at_sizes.cases.clear();
    auto runner = std::make_unique<detail::PlanRunner>(*backend, at_sizes, candidate.source, candidate.language);
    if (loaded.size() >= kSizeAssignmentsKept) loaded.pop_front();
    loaded.push_back(Loaded{sizes, std::move(runner)});
    return *loaded.back().runner;
  }
};

KernelRunner::KernelRunner(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

KernelRunner::KernelRunner(const Task& task, const Candidate& candidate, const RunnerOptions& options)
    : impl_(std::make_unique<Impl>()) {
  impl_->task = task;
  impl_->candidate = candidate;
  const std::string backend = backend_for(options, candidate);
  if (candidate.language.empty()) {
    throw ValidationError("KernelRunner: the candidate has no language; set it (\"cuda\", \"opencl\")");
  }
  const KernelLanguage& language = kernel_language(candidate.language);
  if (language.backend != backend) {
    throw ValidationError(fmt::format("KernelRunner: the candidate is written in {}, which runs on the {} backend, "
                                      "not on {}; choose backend=\"{}\" or \"auto\"",
                                      candidate.language, language.backend, backend, language.backend));
  }
  impl_->backend = create_backend(backend, options.device);
}

KernelRunner KernelRunner::reference(const Task& task, const RunnerOptions& options) {
  const std::string backend = options.backend == "auto" ? best_backend() : options.backend;
  const auto found = task.references.find(backend);
  if (found == task.references.end()) {
    throw NotFoundError(fmt::format("task {} has no {} reference; it has references in: {}", task.name, backend,
                                    fmt::join(task.languages(), ", ")));
  }
  Candidate reference;
  reference.language = found->second.language.empty() ? backend : found->second.language;
  reference.source = found->second.source;
  reference.lineage.origin = "reference";
  RunnerOptions chosen = options;
  chosen.backend = backend;
  return KernelRunner(task, reference, chosen);
}

KernelRunner::~KernelRunner() = default;
KernelRunner::KernelRunner(KernelRunner&&) noexcept = default;
KernelRunner& KernelRunner::operator=(KernelRunner&&) noexcept = default;

const Task& KernelRunner::task() const { return impl_->task; }
const Candidate& KernelRunner::candidate() const { return impl_->candidate; }
std::string KernelRunner::backend_name() const { return impl_->backend->name(); }
const DeviceInfo& KernelRunner::device() const { return impl_->backend->device(); }
bool KernelRunner::supports_device_tensors() const { return impl_->backend->name() == "cuda"; }
CompileReport KernelRunner::compile_report() const { return impl_->last_report; }

SizeMap KernelRunner::infer_sizes(const std::map<std::string, TensorRef>& tensors, const SizeMap& sizes) const {
  const Task& task = impl_->task;
  std::map<std::string, std::vector<std::int64_t>> shapes;
  for (const auto& [name, ref] : tensors) {
    const TensorSpec& spec = task.tensor(name);  // NotFoundError naming the task's tensors
    if (ref.dtype != spec.dtype) {
      throw ValidationError(fmt::format("{} {} is {}; task {} declares it {}",
                                        spec.role == TensorRole::input ? "input" : "output", name,
                                        to_string(ref.dtype), task.name, to_string(spec.dtype)));
    }
    shapes[name] = ref.shape;
  }
  for (const auto& spec : task.tensors) {
    if (spec.role == TensorRole::input && tensors.count(spec.name) == 0) {
      std::vector<std::string> inputs;
      for (const auto& other : task.tensors) {
        if (other.role == TensorRole::input) inputs.push_back(other.name);
      }
      throw ValidationError(fmt::format("input {} of task {} is missing; the task's inputs are {}", spec.name,
                                        task.name, fmt::join(inputs, ", ")));
    }
  }
  return task.infer_sizes(shapes, sizes);
}

std::map<std::string, HostTensor> KernelRunner::run(const std::map<std::string, TensorRef>& tensors,
                                                    const SizeMap& sizes) {
  const Task& task = impl_->task;
  SizeMap chosen;
  try {
    chosen = infer_sizes(tensors, sizes);
  } catch (const NotFoundError& e) {
    throw ValidationError(e.what());
  }
  Backend& backend = *impl_->backend;
  for (const auto& [name, ref] : tensors) {
    if (ref.on_device && !supports_device_tensors()) {
      throw ValidationError(fmt::format("tensor {} is in device memory, but the {} backend takes host arrays only; "
                                        "copy it to the host or run on the CUDA backend",
                                        name, backend.name()));
    }
    if (ref.data == nullptr && ref.byte_count() > 0) {
      throw ValidationError(fmt::format("tensor {} has no data (a null pointer)", name));
    }
  }
  detail::PlanRunner& runner = impl_->runner_for(chosen);
  impl_->last_report = runner.compile_report();

  // The buffers of this call; the caller's adopted device memory is only forgotten when they go.
  std::vector<detail::DeviceBuffer> buffers;
  std::vector<std::uint64_t> handles;
  std::map<std::string, HostTensor> results;
  for (const auto& spec : task.tensors) {
    const std::size_t bytes = static_cast<std::size_t>(task.element_count(spec, chosen)) * dtype_size(spec.dtype);
    const auto given = tensors.find(spec.name);
    if (given != tensors.end() && given->second.on_device) {
      buffers.push_back(detail::adopt_buffer(backend, reinterpret_cast<std::uint64_t>(given->second.data), bytes));
      handles.push_back(buffers.back().get());
      continue;
    }
    buffers.push_back(detail::allocate_buffer(backend, bytes));
    handles.push_back(buffers.back().get());
    if (spec.role == TensorRole::input) backend.write(handles.back(), given->second.data, bytes);
  }
  try {
    runner.run_with_buffers("call", handles);
  } catch (const DeviceFault&) {
    throw;
  } catch (const LaunchError&) {
    throw;
  } catch (const Error& e) {
    throw Error(fmt::format("running {} of task {} at {} on {}: {}",
                            impl_->candidate.lineage.origin == "reference" ? "the reference" : "the candidate", task.name,
                            sizes_text(chosen), backend.device().name, e.what()));
  }
  for (std::size_t i = 0; i < task.tensors.size(); ++i) {
    const TensorSpec& spec = task.tensors[i];
    if (spec.role != TensorRole::output) continue;
    const std::size_t bytes = static_cast<std::size_t>(task.element_count(spec, chosen)) * dtype_size(spec.dtype);
    const auto given = tensors.find(spec.name);
    if (given != tensors.end()) {
      if (!given->second.on_device) backend.read(handles[i], given->second.data, bytes);
      continue;
    }
    HostTensor out;
    out.dtype = spec.dtype;
    for (const auto& dim : spec.shape) out.shape.push_back(evaluate_expression(dim, chosen));
    out.data.resize(bytes);
    backend.read(handles[i], out.data.data(), bytes);
    results.emplace(spec.name, std::move(out));
  }
  return results;
}

}  // namespace kernelsmith
