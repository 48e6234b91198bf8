// The timing protocol (docs/evaluation.md, "Timing"), written once against the Backend seam:
// warm-up, an L2 flush before each sample, the device timer around the whole launch sequence, an
// adaptive number of samples, a host-clock cross-check and each launch's share of the time.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "evaluate/cache_flush.hpp"
#include "kernelsmith/backend.hpp"
#include "kernelsmith/device.hpp"
#include "kernelsmith/evaluation.hpp"

namespace kernelsmith::detail {

struct TimingSettings {
  std::string mode = "screen";
  double noise_target = 0.005;
  /// What noise_target bounds: "spread", the samples' relative standard deviation (strict mode, whose budget
  /// usually ends sampling first), or "standard_error", the relative standard error of their mean (screen
  /// mode, which needs the median known to the target, not quiet samples: samples that spread by 3% reach
  /// a 0.5% standard error after 36 samples, and never a 0.5% spread).
  std::string stop_rule = "spread";
  int min_samples = 10;
  int max_samples = 1000;
  /// Host seconds the sampling loop may take; at least kMinimumSamples are taken regardless.
  double budget_seconds = 0.25;
  /// Evicts the L2 before each sample; null disables the flush.
  CacheFlusher* flusher = nullptr;
  int warmups = 2;
  /// Sequences timed back to back with the host clock for the cross-check.
  int host_repeats = 5;
  /// Samples per launch for the per-kernel shares (sequences of more than one launch).
  int share_samples = 3;
  /// A sequence whose first kMinimumSamples samples have a median below this many milliseconds is sampled
  /// in recorded batches the device replays back to back (docs/evaluation.md, "Tiny kernels"); 0: never.
  double batch_below_ms = 0.05;
  /// Timed runs per recorded batch.
  int batch_runs = 32;
};

inline constexpr int kMinimumSamples = 3;

/// Whether a sequence whose first kMinimumSamples samples have the median `probe_median_ms` is sampled
/// in batches under `settings` (batching on, and a positive median below the threshold).
bool wants_batches(double probe_median_ms, const TimingSettings& settings);

/// A launch sequence: `launch(i)` enqueues launch i of `names.size()`.
struct LaunchSequence {
  std::vector<std::string> names;
  std::function<void(std::size_t)> launch;
  /// Optional: called before each run of the whole sequence that the protocol times (warm-ups, samples,
  /// the per-launch shares), outside the timed region and before the L2 eviction. The harness poisons
  /// outputs and workspaces there and moves to the next input set, so no run sees what the last one left.
  std::function<void()> before_run;
  /// Optional: called after each timed sample, outside the timed region, with the sample's index from 0;
  /// the harness checks that run's outputs there. Batched samples: after each replay, for its last run.
  std::function<void(std::size_t)> after_sample;
};

/// Runs the protocol. Throws what the backend throws (LaunchError, DeviceFault, ...). A sequence that
/// wants_batches() is sampled through Backend::record_timed_batch: each recorded run is before_run, the
/// eviction and the launches between the device timer's marks; after_sample is then called once per
/// replay, for its last run, whose outputs are the ones left in place. Where the backend cannot record
/// (NotSupportedError) or the first replay fails, sampling goes on one sample at a time and the report's
/// sampling_fallback says why.
TimingReport measure_sequence(Backend& backend, const LaunchSequence& sequence, const TimingSettings& settings);

/// Bytes of the scratch buffer whose reading evicts the device's last-level cache before each sample:
/// twice the L2 size the device reports (as nvbench does), or 64 MiB when it reports none.
std::size_t l2_flush_bytes(const DeviceInfo& device);

/// The device timer is implausible next to the host clock: it says more time than the host saw pass
/// (twice, plus 20 us), or covers less than half of it when the gap is larger than launch overheads
/// (0.1 ms per launch). Either way the numbers are not to be trusted.
bool host_timer_mismatch(const TimingReport& report, std::size_t launches);

struct SampleStatistics {
  double median = 0.0;
  double mean = 0.0;
  double min = 0.0;
  double relative_stddev = 0.0;
};

/// Whether `samples` meet settings.noise_target under settings.stop_rule (min_samples is the caller's).
bool noise_target_met(const std::vector<double>& samples, const TimingSettings& settings);
SampleStatistics sample_statistics(std::vector<double> samples);

}  // namespace kernelsmith::detail
