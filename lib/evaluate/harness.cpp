#include "evaluate/harness.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <chrono>
#include <functional>
#include <new>
#include <optional>
#include <string>
#include <vector>

#include "detail/random.hpp"
#include "evaluate/build_failure.hpp"
#include "evaluate/plan_runner.hpp"
#include "evaluate/protocol.hpp"
#include "evaluate/pytorch_oracle.hpp"
#include "kernelsmith/error.hpp"
#include "kernelsmith/language.hpp"

namespace kernelsmith::detail {
namespace {

// A speedup above the suspicious threshold counts only when a second measurement finds at least
// 1/kConfirmingRatio of it, and neither measurement's samples spread by more than kTrustedNoise.
constexpr double kConfirmingRatio = 1.5;
constexpr double kTrustedNoise = 0.25;

/// The policy on what counts as a kernel solution (EvaluatorOptions::host_code_policy): under "custom_kernel" a
/// ModelNew none of whose own kernels ran in some check is flagged no_custom_kernel, one whose outputs did not
/// change when its own kernels were made no-ops custom_kernel_unused (both cast doubt); under
/// "torch_only_allowed" a program that runs none of its own kernels is labelled torch_only (which casts none),
/// and a decoy kernel is still custom_kernel_unused.
void apply_host_code_policy(const HostCodeReport& host, IntegrityReport& integrity) {
  const bool torch_only = !host.custom_kernel_every_check || host.ablation == "no_custom_calls";
  if (torch_only) {
    add_flag(integrity, host.policy == "torch_only_allowed" ? "torch_only" : "no_custom_kernel");
  } else if (host.ablation == "unchanged") {
    add_flag(integrity, "custom_kernel_unused");  // a decoy kernel misleads whatever the policy
  }
}

}  // namespace

using Clock = std::chrono::steady_clock;

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

Harness::Harness(Backend& backend, std::string cache_dir)
    : backend_(backend), state_(std::make_unique<HarnessState>(std::move(cache_dir), buffer_pool_bytes(backend.device()))) {}

Harness::~Harness() {
  state_->references.clear();
  state_->pool.clear();
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

double Harness::prepare(const Task& task, const EvaluatorOptions& options) {
  const Candidate none;
  EvaluationRun run(backend_, *state_, task, none, options);
  run.take_oracle_seconds();
  const std::string mode = options.mode == "strict" ? "strict" : "screen";
  ReferenceState& reference = run.reference(reference_key(task, backend_.language()));
  run.check_reference_spread(reference);
  run.prepare_cases(reference);
  run.baseline(reference, mode);
  if (reference.oracle) run.oracle_baselines(reference, mode);
  return run.take_oracle_seconds();
}

Evaluation Harness::evaluate(const Task& task, const Candidate& candidate, const ProgramSet& programs,
                             const EvaluatorOptions& options) {
  const auto started = Clock::now();
  Evaluation evaluation =
      failed_evaluation(task, candidate, backend_.name(), backend_.device().name, Status::runtime_error, "");
  std::string unconfirmed;  // why a suspicious speedup was not confirmed, for the message
  auto finish = [&](Status status, const std::string& message) {
    evaluation.status = status;
    evaluation.message = message;
    // An unconfirmed speedup is reported, but earns at most the reference's fitness.
    evaluation.fitness = status != Status::ok ? failure_fitness(status)
                         : unconfirmed.empty() ? evaluation.speedup
                                               : std::min(evaluation.speedup, 1.0);
    evaluation.wall_seconds = std::chrono::duration<double>(Clock::now() - started).count();
    return evaluation;
  };

  // The reference is prepared before the plan is looked at, so that a broken task is found whatever the
  // candidate; the language is checked first, since a candidate of another language says nothing.
  const Precheck checked = precheck(candidate, backend_.name(), backend_.language());
  if (checked.failure == Status::compile_error) {
    evaluation.compile.log = checked.message;
    return finish(Status::compile_error, checked.message);
  }

  auto stage_start = Clock::now();
  EvaluationRun run(backend_, *state_, task, candidate, options);
  run.take_oracle_seconds();
  // The oracle's helper time, within whichever stage asked for it, is its own stage.
  auto end_stage = [&](const char* stage) {
    const auto now = Clock::now();
    const double elapsed = std::chrono::duration<double>(now - stage_start).count();
    const double in_oracle = std::min(run.take_oracle_seconds(), elapsed);
    if (in_oracle > 0.0) evaluation.stage_seconds["oracle"] += in_oracle;
    evaluation.stage_seconds[stage] += elapsed - in_oracle;
    stage_start = now;
  };
  ReferenceState& reference = run.reference(reference_key(task, backend_.language()));
  run.check_reference_spread(reference);
  end_stage("reference");

  try {
    if (!checked.ok()) return finish(*checked.failure, checked.message);
    const std::string mode = options.mode == "strict" ? "strict" : "screen";
    // The candidate's timing in a mode ("remeasure" too), and how many launches one timed run makes (the
    // host clock's cross-check allows each its overhead).
    std::function<TimingReport(const std::string&)> time_candidate;
    std::size_t launches_per_run = 1;
    std::unique_ptr<PytorchOracleClient> runner;  // a host-code candidate's own helper
    std::optional<HostCodeReport> host_code;      // what it ran, reported when it passes its checks
    LoadedPlan loaded;
    std::optional<LoadedPlan> reversed;
    TimingCases timing_cases;
    if (checked.host_code) {
      if (!reference.oracle) {
        return finish(Status::compile_error,
                      fmt::format("a {} candidate needs a task with a PyTorch oracle (a KernelBench problem); task {} "
                                  "has a reference kernel: write a kernel with a launch plan in {} instead",
                                  candidate.language, task.name, backend_.language()));
      }
      // Its torch extensions: built ahead into the shared cache by the builder where it can, else by the runner
      // with the precompiled header (docs/kernelbench-modelnew.md, "Builds").
      std::string cache_off = "the evaluator's disk cache is off (use_disk_cache)";
      const std::string extension_cache =
          options.use_disk_cache ? extension_cache_folder(state_->cache_dir, &cache_off) : std::string();
      try {
        runner = PytorchOracleClient::for_candidate(run.oracle_device(),
                                                    options.deadline_seconds + options.host_code_build_seconds,
                                                    candidate.source, extension_cache, options.host_code_build_seconds);
      } catch (const OracleFailure& e) {
        return finish(Status::runtime_error, fmt::format("the ModelNew runner could not start: {}", e.what()));
      }
      const std::string cache_note =
          extension_cache.empty() && candidate.source.find("cpp_extension") != std::string::npos
              ? fmt::format("shared build cache off: {}\n", cache_off)
              : std::string();
      evaluation.compile.ok = true;  // its builds happen as its file is run: a failure is reported at that stage
      evaluation.compile.log = cache_note + runner->build_log();
      host_code.emplace();
      host_code->policy = options.host_code_policy;
      CorrectnessReport correctness = run.check_model_new(reference, *runner, *host_code, evaluation.integrity);
      evaluation.compile.log = cache_note + runner->build_log();
      evaluation.correctness = correctness;
      end_stage("correctness");
      if (!correctness.passed) return finish(Status::incorrect, correctness.message);
      // What ran, and whether the outputs depend on the candidate's own kernels (docs/kernelbench-modelnew.md).
      run.inspect_model_new(reference, *runner, *host_code, evaluation.integrity);
      end_stage("inspection");
      apply_host_code_policy(*host_code, evaluation.integrity);
      time_candidate = [&](const std::string& timing_mode) {
        return run.time_model_new(reference, *runner, timing_mode, *host_code, evaluation.integrity);
      };
    } else {
      const LaunchPlan& plan = checked.plan;
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
      // The schedule check's build: the same source with its block indices reversed (docs/evaluation.md,
      // "Races"). A source the reversing prelude does not suit is checked without it, and says so.
      const bool schedule_check =
          options.schedule_check && (options.mode == "strict" || options.screen_schedule_check);
      const bool reversible = can_reverse_schedule(plan, candidate.language);
      if (schedule_check && !reversible) add_flag(evaluation.integrity, "schedule_check_unavailable");
      if (schedule_check && reversible) {
        try {
          reversed = load_plan(backend_, task, plan, candidate.source, {}, options.compile_timeout_seconds, true);
        } catch (const DeviceFault&) {
          throw;
        } catch (const std::exception& e) {
          // Kept with the compile log: the flag alone would not say what to fix.
          add_flag(evaluation.integrity, "schedule_check_unavailable");
          evaluation.compile.log += fmt::format("{}the schedule check's build (block order reversed) failed: {}",
                                                evaluation.compile.log.empty() ? "" : "\n", e.what());
        }
      }
      end_stage("load");

      CorrectnessReport correctness =
          run.check_candidate(reference, loaded.bound, reversed ? &reversed->bound : nullptr, evaluation.integrity);
      evaluation.correctness = correctness;
      end_stage("correctness");
      if (!correctness.passed) return finish(Status::incorrect, correctness.message);

      timing_cases = run.timing_cases(reference);
      const BoundPlan& timed_plan = loaded.bound.at(task.timing_sizes.name);
      launches_per_run = timed_plan.launches.size();
      time_candidate = [&, &timed_plan = timed_plan](const std::string& timing_mode) {
        std::string timed_problem;
        TimingReport report = run.time_plan(timed_plan, timing_cases, timing_mode, &timed_problem);
        if (!timed_problem.empty()) throw CandidateFailure(Status::incorrect, timed_problem);
        return report;
      };
    }

    const SizeConfig& timing_config = task.timing_sizes;
    TimingReport timing = time_candidate(mode);
    end_stage("timing");
    const TimingReport baseline = run.baseline(reference, mode);
    end_stage("baseline");
    evaluation.timing = timing;
    evaluation.baseline_timing = baseline;
    evaluation.speedup = speedup_of(baseline, timing);
    if (host_timer_mismatch(timing, launches_per_run)) add_flag(evaluation.integrity, "host_timer_mismatch");

    if (evaluation.speedup > options.suspicious_speedup) {
      // Too good to take on one measurement: both sides again, under strict mode's rules.
      add_flag(evaluation.integrity, "speedup_above_threshold");
      const double first_speedup = evaluation.speedup;
      TimingReport again = time_candidate("remeasure");
      end_stage("timing");
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
      // The evaluator's own measurements must agree before such a speedup counts (docs/evaluation.md,
      // "Integrity"): the second measurement, the samples' spread and the host clock.
      std::vector<std::string> doubts;
      if (evaluation.integrity.remeasured_speedup * kConfirmingRatio < first_speedup) {
        doubts.push_back(fmt::format("measured again it is {:.3g}x, not {:.3g}x",
                                     evaluation.integrity.remeasured_speedup, first_speedup));
      }
      for (const TimingReport* report : {&timing, &again}) {
        if (report->noise > kTrustedNoise) {
          doubts.push_back(fmt::format("its timed runs spread by {:.0f}%", report->noise * 100.0));
          break;
        }
      }
      if (host_timer_mismatch(again, launches_per_run)) doubts.push_back("the host clock disagrees");
      if (!doubts.empty()) {
        add_flag(evaluation.integrity, "speedup_unconfirmed");
        unconfirmed = fmt::format("; not confirmed ({}): its fitness counts no speedup above 1", fmt::join(doubts, "; "));
      }
    }

    run.record_baselines(reference, mode, evaluation);
    end_stage("baseline");

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
    evaluation.host_code = host_code;

    const TimingReport& final_timing = *evaluation.timing;
    return finish(Status::ok, fmt::format("{:.3f}x {} speed ({:.4g} ms vs {:.4g} ms, noise {:.1f}%){}",
                                          evaluation.speedup, reference.oracle ? "PyTorch eager's" : "the reference's",
                                          final_timing.median_ms,
                                          evaluation.baseline_timing->median_ms, final_timing.noise * 100.0,
                                          unconfirmed));
  } catch (const CandidateFailure& e) {
    if (e.status() == Status::compile_error) {  // a ModelNew whose file or extensions did not build
      evaluation.compile.ok = false;
      evaluation.compile.log = e.what();
    }
    return finish(e.status(), e.what());
  } catch (const TaskError&) {
    throw;
  } catch (const DeviceFault&) {
    throw;
  } catch (const InvalidLaunch& e) {
    return finish(Status::invalid_launch, e.what());
  } catch (const LaunchError& e) {
    return finish(Status::invalid_launch, e.what());
  } catch (const std::bad_alloc&) {
    return finish(Status::runtime_error, "the worker ran out of host memory");
  } catch (const std::exception& e) {
    return finish(Status::runtime_error, e.what());
  }
}
}  // namespace kernelsmith::detail
