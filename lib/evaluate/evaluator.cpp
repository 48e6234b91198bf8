// The built-in evaluator: compiles in the caller's process (a thread pool, a compile cache in memory
// and on disk), then runs the shared harness on the device in a worker process, one candidate at a
// time, while later candidates compile.
#include "kernelsmith/evaluator.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <future>
#include <mutex>
#include <thread>
#include <unordered_map>

#include "backend_registry.hpp"
#include "evaluate/build_failure.hpp"
#include "detail/file_cache.hpp"
#include "evaluate/harness.hpp"
#include "evaluate/task_fit.hpp"
#include "detail/sha256.hpp"
#include "detail/thread_pool.hpp"
#include "evaluate/worker.hpp"
#include "triton/triton_compiler.hpp"
#include "triton/triton_launch.hpp"
#include "json_codec.hpp"
#include "kernelsmith/backend.hpp"
#include "kernelsmith/device.hpp"
#include "kernelsmith/error.hpp"
#include "kernelsmith/language.hpp"
#include "kernelsmith/launch_plan.hpp"
#include "kernelsmith/version.hpp"

namespace kernelsmith {

std::vector<Evaluation> Evaluator::evaluate_batch(const Task& task, const std::vector<Candidate>& candidates) {
  std::vector<Evaluation> evaluations;
  evaluations.reserve(candidates.size());
  for (const auto& candidate : candidates) evaluations.push_back(evaluate(task, candidate));
  return evaluations;
}

namespace {

using Clock = std::chrono::steady_clock;
using detail::ProgramSet;

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

/// Compiled programs by content key: in memory, and on disk when a folder is given.
class CompileCache {
 public:
  explicit CompileCache(std::string folder) : folder_(std::move(folder)) {}

  std::optional<CompiledProgram> find(const std::string& key) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      const auto found = memory_.find(key);
      if (found != memory_.end()) return found->second;
    }
    if (folder_.empty()) return std::nullopt;
    const auto text = detail::read_whole_file(path(key));
    if (!text) return std::nullopt;
    try {
      CompiledProgram program = detail::compiled_program_from_text(*text);
      remember(key, program);
      return program;
    } catch (const std::exception&) {
      return std::nullopt;  // a damaged entry is compiled again and overwritten
    }
  }

  void store(const std::string& key, const CompiledProgram& program) {
    remember(key, program);
    if (!folder_.empty()) detail::write_cache_file(path(key), detail::compiled_program_to_text(program));
  }

 private:
  void remember(const std::string& key, const CompiledProgram& program) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (memory_.size() >= kMemoryEntries) memory_.clear();
    memory_[key] = program;
  }
  std::string path(const std::string& key) const {
    return (std::filesystem::path(folder_) / key.substr(0, 2) / (key + ".json")).string();
  }

  static constexpr std::size_t kMemoryEntries = 4096;
  std::string folder_;
  std::mutex mutex_;
  std::unordered_map<std::string, CompiledProgram> memory_;
};

/// What the compile stage hands to the device stage: programs, or an evaluation that ends here.
struct CompileOutcome {
  std::optional<Evaluation> finished;
  ProgramSet programs;
  double seconds = 0.0;
};

void validate_options(const EvaluatorOptions& options) {
  auto fail = [](const std::string& message) { throw ValidationError("EvaluatorOptions: " + message); };
  if (options.mode != "screen" && options.mode != "strict") {
    fail(fmt::format("mode must be \"screen\" or \"strict\"; got \"{}\"", options.mode));
  }
  if (options.correctness_trials < 1) fail(fmt::format("correctness_trials must be at least 1; got {}", options.correctness_trials));
  if (!(options.noise_target > 0.0)) fail(fmt::format("noise_target must be > 0; got {}", options.noise_target));
  if (options.screen_correctness_trials < 1) {
    fail(fmt::format("screen_correctness_trials must be at least 1; got {}", options.screen_correctness_trials));
  }
  if (options.min_samples < 1) fail(fmt::format("min_samples must be at least 1; got {}", options.min_samples));
  if (options.strict_min_samples < 1) {
    fail(fmt::format("strict_min_samples must be at least 1; got {}", options.strict_min_samples));
  }
  if (options.max_samples < options.min_samples) {
    fail(fmt::format("max_samples ({}) must be at least min_samples ({})", options.max_samples, options.min_samples));
  }
  if (options.strict_max_samples < options.strict_min_samples) {
    fail(fmt::format("strict_max_samples ({}) must be at least strict_min_samples ({})", options.strict_max_samples,
                     options.strict_min_samples));
  }
  if (!(options.screen_budget_seconds > 0.0) || !(options.strict_budget_seconds > 0.0)) {
    fail("screen_budget_seconds and strict_budget_seconds must be > 0");
  }
  if (!(options.suspicious_speedup > 0.0)) fail("suspicious_speedup must be > 0");
  if (!(options.deadline_seconds > 0.0)) fail(fmt::format("deadline_seconds must be > 0; got {}", options.deadline_seconds));
  if (!(options.compile_timeout_seconds > 0.0)) fail("compile_timeout_seconds must be > 0");
  if (!(options.oracle_timeout_seconds > 0.0)) {
    fail(fmt::format("oracle_timeout_seconds must be > 0; got {}", options.oracle_timeout_seconds));
  }
  if (options.compile_threads < 0) fail("compile_threads must be 0 (all hardware threads) or more");
  if (options.device < 0) fail(fmt::format("device must be 0 or more; got {}", options.device));
}

class BuiltinEvaluator final : public Evaluator {
 public:
  BuiltinEvaluator(EvaluatorOptions options, std::string backend, DeviceInfo device, std::string toolkit)
      : options_(std::move(options)),
        backend_(std::move(backend)),
        device_(std::move(device)),
        toolkit_(std::move(toolkit)),
        cache_dir_(detail::resolve_cache_dir(options_.cache_dir)),
        compile_cache_(options_.use_disk_cache ? (std::filesystem::path(cache_dir_) / "compile").string()
                                               : std::string()) {
    options_.backend = backend_;
    if (options_.isolate) {
      detail::worker_executable();  // fail now, not at the first evaluation, when it is missing
      worker_ = std::make_unique<detail::WorkerClient>(detail::WorkerSettings{backend_, options_.device, cache_dir_});
    } else {
      local_backend_ = create_backend(backend_, options_.device);
      harness_ = std::make_unique<detail::Harness>(*local_backend_, cache_dir_);
    }
  }

  Evaluation evaluate(const Task& task, const Candidate& candidate) override {
    return evaluate_batch(task, {candidate}).front();
  }

  std::vector<Evaluation> evaluate_batch(const Task& task, const std::vector<Candidate>& candidates) override {
    // A task too large for the device is found here, in the manifest's words, before its reference runs.
    detail::check_task_fits_device(task, device_, kernelsmith::language_of_backend(backend_));
    std::vector<std::future<CompileOutcome>> compiles;
    compiles.reserve(candidates.size());
    // The compile jobs hold their own copies: one that overruns its timeout may finish after this call.
    const auto shared_task = std::make_shared<const Task>(task);
    for (const auto& candidate : candidates) {
      compiles.push_back(pool().submit([this, shared_task, candidate] { return compile_stage(*shared_task, candidate); }));
    }
    std::vector<Evaluation> evaluations;
    evaluations.reserve(candidates.size());
    for (std::size_t i = 0; i < candidates.size(); ++i) {
      const auto waited = Clock::now();
      CompileOutcome outcome;
      // The compiler enforces its own timeout; this one covers a toolchain that ignores it.
      const auto limit = std::chrono::duration<double>(options_.compile_timeout_seconds + 10.0);
      if (compiles[i].wait_for(limit) != std::future_status::ready) {
        Evaluation evaluation = detail::failed_evaluation(task, candidates[i], backend_, device_.name,
                                                          Status::compile_error, "");
        evaluation.message = fmt::format("compilation did not finish within {:g} s", options_.compile_timeout_seconds);
        evaluation.compile.log = evaluation.message;
        evaluation.wall_seconds = seconds_since(waited);
        evaluations.push_back(std::move(evaluation));
        continue;
      }
      outcome = compiles[i].get();
      if (outcome.finished) {
        evaluations.push_back(std::move(*outcome.finished));
        continue;
      }
      evaluations.push_back(device_stage(task, candidates[i], outcome));
    }
    return evaluations;
  }

  std::string backend_name() const override { return backend_; }
  std::string device_name() const override { return device_.name; }

 private:
  // What the parent compiles for: the target the device backend would pick itself (sm_90a on an H200,
  // so that candidates may use wgmma and setmaxnreg), not the bare architecture.
  std::string offline_target() const {
#if KERNELSMITH_ENABLE_CUDA
    if (backend_ == "cuda") return detail::cuda_device_compile_target(device_.architecture);
#endif
    return device_.architecture;
  }

  detail::ThreadPool& pool() {
    std::call_once(pool_once_, [this] {
      int threads = options_.compile_threads;
      if (threads <= 0) threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
      pool_ = std::make_unique<detail::ThreadPool>(threads);
    });
    return *pool_;
  }

  std::string cache_key(const std::string& source, const CompileOptions& options) const {
    detail::Sha256 hash;
    hash.field("kernelsmith.compile/1").field(version()).field(backend_).field(toolkit_).field(source);
    hash.field(options.target);
    for (const auto& [name, value] : options.defines) hash.field(name).field(value);
    hash.field("kernels");
    for (const auto& kernel : options.kernels) hash.field(kernel);
    return hash.hex();
  }

  /// The program cached under `key`, or `compile()`'s, which is then cached (rejections too: the same
  /// source is rejected the same way).
  template <typename Compile>
  CompiledProgram compile_cached(const std::string& key, Compile&& compile) {
    if (auto cached = compile_cache_.find(key)) {
      cached->report.cached = true;
      return std::move(*cached);
    }
    CompiledProgram program = compile();
    program.report.cached = false;
    compile_cache_.store(key, program);
    return program;
  }

  CompileOutcome compile_stage(const Task& task, const Candidate& candidate) {
    const auto start = Clock::now();
    CompileOutcome outcome;
    auto finish = [&](Status status, const std::string& message, CompileReport report) {
      Evaluation evaluation = detail::failed_evaluation(task, candidate, backend_, device_.name, status, message);
      evaluation.compile = std::move(report);
      evaluation.wall_seconds = seconds_since(start);
      evaluation.stage_seconds["compile"] = evaluation.wall_seconds;
      outcome.seconds = evaluation.wall_seconds;
      outcome.finished = std::move(evaluation);
      return outcome;
    };
    try {
      const detail::Precheck checked = detail::precheck(candidate, backend_, kernelsmith::language_of_backend(backend_));
      if (checked.failure == Status::compile_error) {
        CompileReport report;
        report.log = checked.message;
        return finish(Status::compile_error, checked.message, report);
      }
      if (!checked.ok()) return finish(*checked.failure, checked.message, {});
      const LaunchPlan& plan = checked.plan;
      if (detail::launches_triton_kernels(plan)) return triton_compile_stage(task, candidate, plan, finish);
      if (!offline_compiles_) return outcome;  // compiled by the backend in the worker (OpenCL)
      for (const auto& job : detail::compile_jobs(task, plan, offline_target(), options_.compile_timeout_seconds)) {
        CompiledProgram program;
        try {
          program = compile_cached(cache_key(candidate.source, job.options),
                                   [&] { return compile_offline(backend_, candidate.source, job.options); });
        } catch (const NotSupportedError&) {
          // This backend builds programs for the device when it loads them: the worker compiles.
          offline_compiles_ = false;
          return outcome;
        }
        if (!program.report.ok) {
          CompileReport report = program.report;
          const std::string label = detail::sizes_label(job.config);
          report.log = label + report.log;
          const std::string headline = detail::headline_of_log(program.report.log);
          const std::string first_line = headline.empty() ? headline : label + headline;
          return finish(Status::compile_error,
                        first_line.empty() ? "the compiler rejected the source"
                                           : "the compiler rejected the source: " + first_line,
                        report);
        }
        outcome.programs[job.config] = std::move(program);
      }
    } catch (const BackendUnavailableError&) {
      throw;
    } catch (const std::exception& e) {
      CompileReport report;
      report.log = e.what();
      return finish(Status::compile_error, fmt::format("the compiler failed: {}", e.what()), report);
    }
    outcome.seconds = seconds_since(start);
    return outcome;
  }

  // Triton: the plan is bound to every size configuration here (each launch's constexprs, warps, stages
  // and argument types name the specialization it needs), and each distinct specialization is compiled
  // to a cubin by the front end's helper processes. The program is cached like an NVRTC one.
  template <typename Finish>
  CompileOutcome triton_compile_stage(const Task& task, const Candidate& candidate, const LaunchPlan& plan,
                                      Finish& finish) {
    const auto start = Clock::now();
    std::map<std::string, detail::BoundPlan> bound;
    try {
      bound = detail::bind_plan_to_all_sizes(task, plan, device_);
    } catch (const detail::InvalidLaunch& e) {
      return finish(Status::invalid_launch, e.what(), CompileReport{});
    }
    const std::vector<TritonKernelSpec> specs = detail::triton_kernel_specs(bound);
    const std::string target = offline_target();
    detail::Sha256 hash;
    hash.field("kernelsmith.triton/1").field(version()).field(detail::triton_version_for_cache());
    hash.field(candidate.source).field(target);
    for (const auto& spec : specs) {
      hash.field(spec.name);
      for (const int index : spec.aligned) hash.field(std::to_string(index));
    }
    CompiledProgram program = compile_cached(hash.hex(), [&] {
      return detail::compile_triton_program(candidate.source, specs, target, options_.compile_timeout_seconds);
    });
    if (!program.report.ok) {
      const std::string headline = detail::headline_of_log(program.report.log);
      return finish(Status::compile_error,
                    headline.empty() ? std::string("the Triton compiler rejected the source")
                                     : "the Triton compiler rejected the source: " + headline,
                    program.report);
    }
    CompileOutcome outcome;
    outcome.programs[""] = std::move(program);
    outcome.seconds = seconds_since(start);
    return outcome;
  }

  Evaluation device_stage(const Task& task, const Candidate& candidate, const CompileOutcome& outcome) {
    std::lock_guard<std::mutex> lock(device_mutex_);
    const auto start = Clock::now();
    Evaluation evaluation;
    if (!lost_device_.empty()) throw DeviceError(lost_device_);
    if (worker_) {
      evaluation = worker_->evaluate(task, candidate, outcome.programs, options_);
    } else {
      try {
        evaluation = harness_->evaluate(task, candidate, outcome.programs, options_);
      } catch (const DeviceFault& fault) {
        // In-process there is no worker to restart: try to open the device again for the next evaluation.
        // Some drivers keep the error for the life of the process (CUDA's sticky errors): then every later
        // evaluation in this process raises, saying so.
        evaluation = detail::failed_evaluation(task, candidate, backend_, device_.name, Status::crashed,
                                               fmt::format("the device context was lost: {}", fault.what()));
        try {
          auto fresh = create_backend(backend_, options_.device);
          harness_.reset();
          local_backend_ = std::move(fresh);
          harness_ = std::make_unique<detail::Harness>(*local_backend_, cache_dir_);
        } catch (const std::exception& e) {
          lost_device_ = fmt::format(
              "the {} device cannot be used again in this process after a candidate lost its context ({}): "
              "evaluate with isolate=True (the default), where a fresh worker process takes over",
              backend_, e.what());
        }
      }
    }
    if (!outcome.programs.empty() && evaluation.compile.log.empty() && evaluation.compile.kernels.empty() &&
        (evaluation.status == Status::timeout || evaluation.status == Status::crashed)) {
      // The worker died before reporting: the compile stage's report still stands.
      evaluation.compile = outcome.programs.begin()->second.report;
    }
    const double device_seconds = seconds_since(start);
    evaluation.wall_seconds = outcome.seconds + device_seconds;
    if (!outcome.programs.empty()) evaluation.stage_seconds["compile"] = outcome.seconds;
    // What the harness's stages do not cover: the worker round trip, a restart, starting it.
    double staged = 0.0;
    for (const auto& [stage, seconds] : evaluation.stage_seconds) {
      if (stage != "compile") staged += seconds;
    }
    evaluation.stage_seconds["overhead"] = std::max(0.0, device_seconds - staged);
    return evaluation;
  }

  EvaluatorOptions options_;
  std::string backend_;
  DeviceInfo device_;
  std::string toolkit_;
  std::string cache_dir_;
  CompileCache compile_cache_;
  std::atomic<bool> offline_compiles_{true};
  std::once_flag pool_once_;
  std::unique_ptr<detail::ThreadPool> pool_;
  std::mutex device_mutex_;
  std::unique_ptr<detail::WorkerClient> worker_;
  std::unique_ptr<Backend> local_backend_;
  std::unique_ptr<detail::Harness> harness_;
  std::string lost_device_;  ///< in-process only: why the device cannot be used again
};

}  // namespace

std::unique_ptr<Evaluator> create_evaluator(const EvaluatorOptions& options) {
  validate_options(options);
  const std::string backend = options.backend == "auto" || options.backend.empty() ? best_backend() : options.backend;
  if (language_of_backend(backend).empty()) {
    throw ValidationError(fmt::format("EvaluatorOptions: backend must be \"auto\" or one of {}; got \"{}\"",
                                      kernel_language_names(), options.backend));
  }
  const auto backends = devices();
  const auto info = std::find_if(backends.begin(), backends.end(), [&](const BackendInfo& b) { return b.name == backend; });
  if (info == backends.end() || !info->available) {
    throw BackendUnavailableError(fmt::format("the {} backend cannot run kernels here: {}", backend,
                                              info == backends.end() ? "unknown backend" : info->reason));
  }
  if (options.device >= static_cast<int>(info->devices.size())) {
    throw NotFoundError(fmt::format("{} device {} does not exist: there {} {} device{} (0 to {})", backend,
                                    options.device, info->devices.size() == 1 ? "is" : "are", info->devices.size(),
                                    info->devices.size() == 1 ? "" : "s", info->devices.size() - 1));
  }
  std::string toolkit;
  for (const auto& detail : info->details) toolkit += detail + "\n";
  return std::make_unique<BuiltinEvaluator>(options, backend, info->devices[static_cast<std::size_t>(options.device)],
                                            toolkit);
}

}  // namespace kernelsmith
