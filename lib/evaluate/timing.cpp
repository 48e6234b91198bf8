#include "evaluate/timing.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <memory>
#include <numeric>

namespace kernelsmith::detail {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

void run_all(const LaunchSequence& sequence) {
  for (std::size_t i = 0; i < sequence.names.size(); ++i) sequence.launch(i);
}

void before_run(const LaunchSequence& sequence) {
  if (sequence.before_run) sequence.before_run();
}

}  // namespace

SampleStatistics sample_statistics(std::vector<double> samples) {
  SampleStatistics stats;
  if (samples.empty()) return stats;
  std::sort(samples.begin(), samples.end());
  const std::size_t n = samples.size();
  stats.median = n % 2 == 1 ? samples[n / 2] : 0.5 * (samples[n / 2 - 1] + samples[n / 2]);
  stats.mean = std::accumulate(samples.begin(), samples.end(), 0.0) / static_cast<double>(n);
  stats.min = samples.front();
  if (n > 1 && stats.mean > 0.0) {
    double squares = 0.0;
    for (double s : samples) squares += (s - stats.mean) * (s - stats.mean);
    stats.relative_stddev = std::sqrt(squares / static_cast<double>(n - 1)) / stats.mean;
  }
  return stats;
}

std::size_t l2_flush_bytes(const DeviceInfo& device) {
  constexpr std::size_t kFallback = std::size_t(64) << 20;
  if (device.l2_bytes <= 0) return kFallback;
  return static_cast<std::size_t>(device.l2_bytes) * 2;
}

bool host_timer_mismatch(const TimingReport& report, std::size_t launches) {
  if (report.host_ms <= 0.0 || report.median_ms <= 0.0) return false;
  // Device samples are cold (L2 flushed) and the host loop is warm, so the device may exceed the
  // host somewhat; twice is not a cache effect.
  if (report.median_ms > 2.0 * report.host_ms + 0.02) return true;
  const double gap = report.host_ms - report.median_ms;
  const double overheads = 0.1 * static_cast<double>(std::max<std::size_t>(launches, 1));
  return report.median_ms < 0.5 * report.host_ms && gap > overheads;
}

bool noise_target_met(const std::vector<double>& samples, const TimingSettings& settings) {
  const double spread = sample_statistics(samples).relative_stddev;
  if (settings.stop_rule == "standard_error") {
    return spread / std::sqrt(static_cast<double>(std::max<std::size_t>(samples.size(), 1))) <= settings.noise_target;
  }
  return spread <= settings.noise_target;
}

bool wants_batches(double probe_median_ms, const TimingSettings& settings) {
  return settings.batch_below_ms > 0.0 && probe_median_ms > 0.0 && probe_median_ms < settings.batch_below_ms;
}

TimingReport measure_sequence(Backend& backend, const LaunchSequence& sequence, const TimingSettings& settings) {
  TimingReport report;
  report.mode = settings.mode;
  report.l2_flushed = settings.flusher != nullptr;
  auto flush_cache = [&] {
    if (settings.flusher != nullptr) settings.flusher->flush();
  };

  for (int i = 0; i < std::max(settings.warmups, 1); ++i) {
    before_run(sequence);
    run_all(sequence);
    backend.synchronize();
  }

  std::vector<double> samples;
  const auto start = Clock::now();
  const int max_samples = std::max(settings.max_samples, kMinimumSamples);
  const int min_samples = std::clamp(settings.min_samples, kMinimumSamples, max_samples);
  // The stopping rule, the same for samples taken one at a time and in batches.
  auto enough = [&] {
    const int taken = static_cast<int>(samples.size());
    if (taken >= min_samples && noise_target_met(samples, settings)) {
      report.converged = true;
      return true;
    }
    return taken >= max_samples || (taken >= kMinimumSamples && seconds_since(start) >= settings.budget_seconds);
  };

  // A tiny sequence is timed in batches (docs/evaluation.md, "Tiny kernels"): one sample at a time, the
  // device idles while the host takes each result and enqueues the next sample, and the host's launch
  // latency falls inside the event pair whenever the device drains the queue before a launch arrives;
  // for kernels of a few tens of microseconds that spread the samples by 10% and more. A recorded batch
  // keeps each sample's own eviction and event pair, so the samples stay cold and separate.
  std::unique_ptr<Backend::TimedBatch> batch;
  auto start_batches = [&] {
    try {
      batch = backend.record_timed_batch(
          std::max(settings.batch_runs, 1),
          [&] {
            before_run(sequence);
            flush_cache();
          },
          [&] { run_all(sequence); });
      // The first replay is a warm-up (the driver uploads the recording then) and finds a driver that
      // records but cannot replay or time what it recorded, while falling back is still possible.
      batch->replay();
    } catch (const DeviceFault&) {
      throw;
    } catch (const std::exception& e) {
      batch.reset();
      report.sampling_fallback = e.what();
    }
  };

  bool decided = false;
  while (static_cast<int>(samples.size()) < max_samples) {
    before_run(sequence);
    flush_cache();
    backend.timer_start();
    run_all(sequence);
    samples.push_back(backend.timer_stop_ms());
    if (sequence.after_sample) sequence.after_sample(samples.size() - 1);
    if (!decided && static_cast<int>(samples.size()) >= kMinimumSamples) {
      decided = true;
      if (wants_batches(sample_statistics(samples).median, settings)) {
        start_batches();
        if (batch) break;
      }
    }
    if (enough()) break;
  }
  if (batch) {
    // The samples taken one at a time carry the host's latency: only the batches' samples count.
    const std::size_t earlier_runs = samples.size();
    samples.clear();
    report.sampling = batch->method();
    while (static_cast<int>(samples.size()) < max_samples) {
      const std::vector<double> times = batch->replay();
      const std::size_t kept = std::min(static_cast<std::size_t>(max_samples) - samples.size(), times.size());
      samples.insert(samples.end(), times.begin(), times.begin() + static_cast<std::ptrdiff_t>(kept));
      // The outputs in place are the replay's last run's: each run overwrites the one before.
      if (sequence.after_sample) sequence.after_sample(earlier_runs + samples.size() - 1);
      if (enough()) break;
    }
  }
  const SampleStatistics stats = sample_statistics(samples);
  report.median_ms = stats.median;
  report.mean_ms = stats.mean;
  report.min_ms = stats.min;
  report.noise = stats.relative_stddev;
  report.samples = static_cast<int>(samples.size());

  // Host clock around whole sequences and a full synchronisation: work the device timer missed shows
  // up here.
  backend.synchronize();
  const int repeats = std::max(settings.host_repeats, 1);
  const auto host_start = Clock::now();
  for (int i = 0; i < repeats; ++i) run_all(sequence);
  backend.synchronize();
  report.host_ms = seconds_since(host_start) * 1e3 / repeats;

  const std::size_t launches = sequence.names.size();
  if (launches == 1) {
    report.kernels.push_back({sequence.names[0], report.median_ms, 1.0});
  } else if (launches > 1) {
    // Each launch timed alone, the others run untimed around it so the sequence's data flow holds.
    std::vector<double> medians(launches, 0.0);
    for (std::size_t timed = 0; timed < launches; ++timed) {
      std::vector<double> launch_samples;
      for (int s = 0; s < std::max(settings.share_samples, 1); ++s) {
        before_run(sequence);
        flush_cache();
        for (std::size_t i = 0; i < timed; ++i) sequence.launch(i);
        backend.timer_start();
        sequence.launch(timed);
        launch_samples.push_back(backend.timer_stop_ms());
        for (std::size_t i = timed + 1; i < launches; ++i) sequence.launch(i);
      }
      backend.synchronize();
      medians[timed] = sample_statistics(launch_samples).median;
    }
    const double total = std::accumulate(medians.begin(), medians.end(), 0.0);
    for (std::size_t i = 0; i < launches; ++i) {
      report.kernels.push_back({sequence.names[i], medians[i], total > 0.0 ? medians[i] / total : 0.0});
    }
  }
  return report;
}

}  // namespace kernelsmith::detail
