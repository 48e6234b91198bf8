// The built-in evaluator: compiles in the caller's process (a thread pool, a compile cache in memory
// and on disk), then runs the shared harness on the device in a worker process, one candidate at a
// time, while later candidates compile. Over a device set (EvaluatorOptions::devices) it holds one
// worker per device and hands each compiled candidate to whichever is idle.
#include "kernelsmith/evaluator.hpp"
#include "kernelsmith/sandbox.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <future>
#include <mutex>
#include <random>
#include <thread>
#include <unordered_map>

#include <unistd.h>

#include "backend_registry.hpp"
#include "evaluate/build_failure.hpp"
#include "evaluate/device_set.hpp"
#include "detail/file_cache.hpp"
#include "evaluate/harness.hpp"
#include "evaluate/pytorch_oracle.hpp"
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

std::vector<Evaluation> Evaluator::confirm_batch(const Task& task, const std::vector<Candidate>& candidates) {
  return evaluate_batch(task, candidates);
}

namespace {

using Clock = std::chrono::steady_clock;
using detail::ProgramSet;

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

std::string this_host() {
  char name[256] = {};
  if (::gethostname(name, sizeof(name) - 1) != 0) return "";
  return name;
}

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
  if (options.host_code_policy != "custom_kernel" && options.host_code_policy != "torch_only_allowed") {
    fail(fmt::format("host_code_policy must be \"custom_kernel\" or \"torch_only_allowed\"; got \"{}\"",
                     options.host_code_policy));
  }
  if (!(options.host_code_build_seconds >= 0.0)) {
    fail(fmt::format("host_code_build_seconds must be >= 0; got {}", options.host_code_build_seconds));
  }
  if (!(options.oracle_timeout_seconds > 0.0)) {
    fail(fmt::format("oracle_timeout_seconds must be > 0; got {}", options.oracle_timeout_seconds));
  }
  if (options.compile_threads < 0) fail("compile_threads must be 0 (all hardware threads) or more");
  if (options.device < 0) fail(fmt::format("device must be 0 or more; got {}", options.device));
  // The caches' bounds from the environment are read again in the worker: a bad value is reported here, to
  // the caller, rather than as a worker that cannot start.
  detail::cache_bytes_from_environment("KERNELSMITH_CASE_CACHE_GB");
  detail::cache_bytes_from_environment("KERNELSMITH_ORACLE_CACHE_GB");
}

/// One worker process and the device it owns: the unit a batch's candidates are handed to.
struct DeviceLane {
  int index = 0;  ///< within the backend
  DeviceInfo device;
  std::unique_ptr<detail::WorkerClient> worker;  ///< null when evaluating in-process
  bool busy = false;
};

/// What of the sandbox is off for candidates evaluated with `options` (docs/security.md); throws when
/// options.require_sandbox asks for every required protection and one is off.
std::vector<std::string> unconfined_protections(const EvaluatorOptions& options) {
  std::vector<std::string> off;
  SandboxStatus status;
  if (options.isolate) {
    status = sandbox_status();
    off = status.off();
  } else {
    off.push_back("all: isolate=false runs candidates in the caller's process, unconfined");
  }
  if (options.require_sandbox && (!options.isolate || !status.complete())) {
    throw ValidationError(fmt::format(
        "EvaluatorOptions: require_sandbox is set and the sandbox is incomplete here, so no candidate runs: {}. "
        "docs/security.md says what each protection needs from the machine",
        fmt::join(off, "; ")));
  }
  return off;
}

class BuiltinEvaluator final : public Evaluator {
 public:
  BuiltinEvaluator(EvaluatorOptions options, std::string backend, std::vector<DeviceInfo> devices, std::string toolkit)
      : options_(std::move(options)),
        backend_(std::move(backend)),
        device_(devices.front()),
        toolkit_(std::move(toolkit)),
        cache_dir_(detail::resolve_cache_dir(options_.cache_dir)),
        host_(this_host()),
        compile_cache_(options_.use_disk_cache ? (std::filesystem::path(cache_dir_) / "compile").string()
                                               : std::string()) {
    options_.backend = backend_;
    // Baselines timed by this evaluator (and its workers) are not reused by another run (EvaluatorOptions).
    if (options_.baseline_session.empty()) {
      std::random_device entropy;
      options_.baseline_session =
          detail::Sha256()
              .field(std::to_string(entropy()) + "." + std::to_string(entropy()))
              .field(std::to_string(::getpid()))
              .field(std::to_string(std::chrono::system_clock::now().time_since_epoch().count()))
              .hex()
              .substr(0, 16);
    }
    if (!options_.isolate && devices.size() > 1) {
      throw ValidationError(fmt::format(
          "EvaluatorOptions: devices \"{}\" needs isolate=True: a device set runs one worker process per device",
          options_.devices));
    }
    if (options_.isolate) detail::worker_executable();  // fail now, not at the first evaluation, when it is missing
    unconfined_ = unconfined_protections(options_);
    for (DeviceInfo& device : devices) {
      auto lane = std::make_unique<DeviceLane>();
      lane->index = device.index;
      if (options_.isolate) {
        lane->worker = std::make_unique<detail::WorkerClient>(detail::WorkerSettings{backend_, device.index, cache_dir_});
      }
      lane->device = std::move(device);
      lanes_.push_back(std::move(lane));
    }
    if (!options_.isolate) {
      local_backend_ = create_backend(backend_, device_.index);
      harness_ = std::make_unique<detail::Harness>(*local_backend_, cache_dir_);
    }
  }

  Evaluation evaluate(const Task& task, const Candidate& candidate) override {
    return evaluate_batch(task, {candidate}).front();
  }

  std::vector<Evaluation> evaluate_batch(const Task& task, const std::vector<Candidate>& candidates) override {
    // A task too large for a device is found here, in the manifest's words, before its reference runs.
    for (const auto& lane : lanes_) {
      detail::check_task_fits_device(task, lane->device, kernelsmith::language_of_backend(backend_));
    }
    std::vector<std::future<CompileOutcome>> compiles;
    compiles.reserve(candidates.size());
    // The compile jobs hold their own copies: one that overruns its timeout may finish after this call.
    const auto shared_task = std::make_shared<const Task>(task);
    for (const auto& candidate : candidates) {
      compiles.push_back(pool().submit([this, shared_task, candidate] { return compile_stage(*shared_task, candidate); }));
    }
    // One driver per device (at most one per candidate) takes the next candidate in order, waits for its
    // compile, then for an idle device. The caller's thread is one of the drivers.
    std::vector<std::optional<Evaluation>> results(candidates.size());
    std::atomic<std::size_t> next{0};
    std::atomic<bool> failed{false};
    std::mutex failure_mutex;
    std::exception_ptr failure;
    auto drive = [&] {
      while (!failed.load()) {
        const std::size_t i = next++;
        if (i >= candidates.size()) return;
        try {
          results[i] = finish(task, candidates[i], compiles[i]);
        } catch (...) {
          // A task or backend error ends the batch: the other drivers finish the candidate they hold.
          std::lock_guard<std::mutex> lock(failure_mutex);
          if (!failure) failure = std::current_exception();
          failed = true;
        }
      }
    };
    {
      std::vector<std::future<void>> helpers;  // their destructors wait, also when this scope is left by an exception
      for (std::size_t k = 1; k < std::min(lanes_.size(), candidates.size()); ++k) {
        helpers.push_back(std::async(std::launch::async, drive));
      }
      drive();
    }
    if (failure) std::rethrow_exception(failure);
    std::vector<Evaluation> evaluations;
    evaluations.reserve(candidates.size());
    for (auto& result : results) evaluations.push_back(std::move(*result));
    return evaluations;
  }

  std::vector<Evaluation> confirm_batch(const Task& task, const std::vector<Candidate>& candidates) override {
    if (options_.mode == "strict") return evaluate_batch(task, candidates);
    std::call_once(strict_once_, [this] {
      EvaluatorOptions strict = options_;
      strict.mode = "strict";
      strict_ = create_evaluator(strict);
    });
    return strict_->evaluate_batch(task, candidates);
  }

  std::string backend_name() const override { return backend_; }
  std::string device_name() const override {
    // A set of one kind of device is named after it, so that the engine finds its attributes by name.
    std::string names = device_.name;
    for (const auto& lane : lanes_) {
      if (lane->device.name != device_.name) names += " | " + lane->device.name;
    }
    return names;
  }
  int concurrency() const override { return static_cast<int>(lanes_.size()); }

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
      if (checked.host_code) {
        // Run whole by the worker's ModelNew runner; its constant load_inline calls are built here first, in
        // parallel with the batch's other compiles and ahead of the device, into the shared build cache
        // (docs/kernelbench-modelnew.md, "Builds").
        if (options_.use_disk_cache) {
          std::string off;
          detail::prebuild_extensions(candidate.source, detail::extension_cache_folder(cache_dir_, &off),
                                      options_.host_code_build_seconds);
        }
        return outcome;
      }
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

  /// One candidate from its compile job to its evaluation: on the first idle device, unless the compile
  /// stage already ended it.
  Evaluation finish(const Task& task, const Candidate& candidate, std::future<CompileOutcome>& compile) {
    const auto waited = Clock::now();
    // The compiler enforces its own timeout; this one covers a toolchain that ignores it. A ModelNew's compile
    // stage is its extensions' builds, bounded by host_code_build_seconds.
    const bool host_code = candidate.language == kModelNewLanguage || defines_model_new(candidate.source);
    const double seconds = host_code ? options_.host_code_build_seconds : options_.compile_timeout_seconds;
    const auto limit = std::chrono::duration<double>(seconds + 10.0);
    if (compile.wait_for(limit) != std::future_status::ready) {
      Evaluation evaluation =
          detail::failed_evaluation(task, candidate, backend_, device_.name, Status::compile_error, "");
      evaluation.message = fmt::format("compilation did not finish within {:g} s", seconds);
      evaluation.compile.log = evaluation.message;
      evaluation.wall_seconds = seconds_since(waited);
      evaluation.placement.host = host_;
      return evaluation;
    }
    CompileOutcome outcome = compile.get();
    if (outcome.finished) {
      outcome.finished->placement.host = host_;
      return std::move(*outcome.finished);
    }
    DeviceLane& lane = acquire_lane();
    struct Release {
      BuiltinEvaluator& self;
      DeviceLane& lane;
      ~Release() { self.release_lane(lane); }
    } release{*this, lane};
    return device_stage(lane, task, candidate, outcome);
  }

  /// The first idle device, waiting for one when all are busy (other drivers, other callers).
  DeviceLane& acquire_lane() {
    std::unique_lock<std::mutex> lock(lanes_mutex_);
    for (;;) {
      for (auto& lane : lanes_) {
        if (!lane->busy) {
          lane->busy = true;
          return *lane;
        }
      }
      lane_freed_.wait(lock);
    }
  }

  void release_lane(DeviceLane& lane) {
    {
      std::lock_guard<std::mutex> lock(lanes_mutex_);
      lane.busy = false;
    }
    lane_freed_.notify_one();
  }

  /// Runs the candidate on the lane's device; the caller holds the lane, so the device times one candidate
  /// at a time.
  Evaluation device_stage(DeviceLane& lane, const Task& task, const Candidate& candidate,
                          const CompileOutcome& outcome) {
    const auto start = Clock::now();
    Evaluation evaluation;
    if (!lost_device_.empty()) throw DeviceError(lost_device_);
    if (lane.worker) {
      evaluation = lane.worker->evaluate(task, candidate, outcome.programs, options_);
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
          auto fresh = create_backend(backend_, lane.index);
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
    evaluation.placement.host = host_;
    evaluation.placement.device_index = lane.index;
    evaluation.integrity.unconfined = unconfined_;
    return evaluation;
  }

  EvaluatorOptions options_;
  std::vector<std::string> unconfined_;  ///< the sandbox's protections that are off here (IntegrityReport)
  std::string backend_;
  DeviceInfo device_;
  std::string toolkit_;
  std::string cache_dir_;
  std::string host_;
  CompileCache compile_cache_;
  std::atomic<bool> offline_compiles_{true};
  std::once_flag pool_once_;
  std::unique_ptr<detail::ThreadPool> pool_;
  std::once_flag strict_once_;
  std::unique_ptr<Evaluator> strict_;  ///< confirm_batch()'s strict twin, in screen mode only
  std::mutex lanes_mutex_;
  std::condition_variable lane_freed_;
  std::vector<std::unique_ptr<DeviceLane>> lanes_;
  std::unique_ptr<Backend> local_backend_;
  std::unique_ptr<detail::Harness> harness_;
  std::string lost_device_;  ///< in-process only (one device): why the device cannot be used again
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
  std::vector<DeviceInfo> set;
  for (const int index : detail::resolve_device_set(options, *info)) {
    DeviceInfo device = info->devices[static_cast<std::size_t>(index)];
    device.index = index;
    set.push_back(std::move(device));
  }
  std::string toolkit;
  for (const auto& detail : info->details) toolkit += detail + "\n";
  return std::make_unique<BuiltinEvaluator>(options, backend, std::move(set), toolkit);
}

}  // namespace kernelsmith
