// The sampling loop's stop rules, and tiny kernels timed in recorded batches (docs/evaluation.md, "Tiny
// kernels"): which sequences are batched, what each recorded run holds (before_run, the eviction, the timed launches between the marks),
// which samples count, and the fallback to one sample at a time with its reason. The protocol's side
// runs here through a backend whose device timer is scripted; the CUDA graph side runs on a GPU.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "catch.hpp"
#include "evaluate/cache_flush.hpp"
#include "evaluate/timing.hpp"
#include "gpu_test_support.hpp"
#include "kernelsmith/backend.hpp"
#include "kernelsmith/device.hpp"
#include "kernelsmith/error.hpp"
#include "test_support.hpp"

using namespace kernelsmith;

namespace {

// A backend with no device: the timer returns scripted times, and what the protocol enqueues is logged,
// marked "recorded" while a batch is being recorded. How recording goes is chosen per test.
class ScriptedBackend final : public Backend {
 public:
  enum class Recording { unsupported, supported, refused, replay_fails, faults };
  Recording recording = Recording::unsupported;
  std::vector<double> sample_ms{0.030};  ///< timer_stop_ms() results, cycled
  std::vector<double> replay_ms{0.010};  ///< a replay's run times, cycled over the runs
  std::vector<std::string> log;
  bool recording_now = false;
  int replays = 0;

  ScriptedBackend() {
    info_.name = "scripted";
    info_.l2_bytes = 1024;  // the flusher's buffer: 2 KiB
    info_.is_gpu = false;
  }

  std::string name() const override { return "scripted"; }
  std::string language() const override { return "opencl"; }
  const DeviceInfo& device() const override { return info_; }
  CompiledProgram compile(const std::string&, const CompileOptions&) override {
    throw NotSupportedError("the scripted backend compiles nothing");
  }
  std::uint64_t load(const CompiledProgram&) override { throw NotSupportedError("the scripted backend loads nothing"); }
  void unload(std::uint64_t) override {}
  std::uint64_t kernel(std::uint64_t, const std::string& name) override {
    throw NotFoundError("the scripted backend has no kernel " + name);
  }
  std::vector<KernelParam> kernel_params(std::uint64_t) override { return {}; }
  KernelResources kernel_resources(std::uint64_t) override { return {}; }
  std::uint64_t allocate(std::size_t) override { return ++next_buffer_; }
  void free(std::uint64_t) override {}
  void write(std::uint64_t, const void*, std::size_t) override {}
  void read(std::uint64_t, void*, std::size_t) override {}
  void fill(std::uint64_t, std::uint8_t, std::size_t) override { note("fill"); }
  void launch(std::uint64_t, Dim3, Dim3, std::size_t, const std::vector<KernelArg>&) override { note("launch"); }
  void synchronize() override {}
  void timer_start() override { note("timer_start"); }
  double timer_stop_ms() override { return sample_ms[timer_stops_++ % sample_ms.size()]; }

  class Batch final : public TimedBatch {
   public:
    Batch(ScriptedBackend& backend, int runs) : backend_(backend), runs_(runs) {}
    int runs() const override { return runs_; }
    std::string method() const override { return "scripted_replay"; }
    std::vector<double> replay() override {
      ++backend_.replays;
      if (backend_.recording == Recording::replay_fails) throw DeviceError("cuGraphLaunch failed: scripted");
      std::vector<double> times;
      for (int i = 0; i < runs_; ++i) times.push_back(backend_.replay_ms[i % backend_.replay_ms.size()]);
      return times;
    }

   private:
    ScriptedBackend& backend_;
    int runs_;
  };

  std::unique_ptr<TimedBatch> record_timed_batch(int runs, const std::function<void()>& prepare,
                                                 const std::function<void()>& timed) override {
    if (recording == Recording::unsupported) return Backend::record_timed_batch(runs, prepare, timed);
    if (recording == Recording::refused) throw NotSupportedError("cuStreamEndCapture failed: scripted refusal");
    if (recording == Recording::faults) throw DeviceFault("cuStreamBeginCapture failed: scripted fault");
    log.push_back("record_begin");
    recording_now = true;
    for (int i = 0; i < runs; ++i) {
      prepare();
      note("mark_start");
      timed();
      note("mark_stop");
    }
    recording_now = false;
    log.push_back("record_end");
    return std::make_unique<Batch>(*this, runs);
  }

  void note(const std::string& what) { log.push_back(recording_now ? "recorded " + what : what); }

  // The entries logged between record_begin and record_end.
  std::vector<std::string> recorded() const {
    const auto begin = std::find(log.begin(), log.end(), "record_begin");
    const auto end = std::find(log.begin(), log.end(), "record_end");
    if (begin == log.end() || end == log.end()) return {};
    return {begin + 1, end};
  }

 private:
  DeviceInfo info_;
  std::uint64_t next_buffer_ = 0;
  std::size_t timer_stops_ = 0;
};

// One launch per run; before_run and after_sample leave their marks.
struct Scripted {
  ScriptedBackend backend;
  detail::CacheFlusher flusher{backend, detail::CacheFlusher::Method::fill};
  detail::TimingSettings settings;
  detail::LaunchSequence sequence;
  std::vector<std::size_t> checked;  ///< after_sample's indices

  Scripted() {
    settings.min_samples = 10;
    settings.max_samples = 1000;
    settings.budget_seconds = 10.0;
    settings.host_repeats = 1;
    settings.batch_runs = 8;
    settings.flusher = &flusher;
    sequence.names = {"tiny"};
    sequence.launch = [this](std::size_t) { backend.launch(1, {1, 1, 1}, {1, 1, 1}, 0, {}); };
    sequence.before_run = [this] { backend.note("before_run"); };
    sequence.after_sample = [this](std::size_t sample) { checked.push_back(sample); };
  }

  TimingReport measure() { return detail::measure_sequence(backend, sequence, settings); }
};

}  // namespace

TEST_CASE("a sequence is batched when its first samples' median is below the threshold", "[timing]") {
  detail::TimingSettings settings;
  CHECK(settings.batch_below_ms == 0.05);
  CHECK(detail::wants_batches(0.018, settings));
  CHECK(detail::wants_batches(0.0499, settings));
  CHECK_FALSE(detail::wants_batches(0.05, settings));
  CHECK_FALSE(detail::wants_batches(1.0, settings));
  CHECK_FALSE(detail::wants_batches(0.0, settings));  // a timer that says nothing is no reason to batch
  settings.batch_below_ms = 0.0;
  CHECK_FALSE(detail::wants_batches(0.018, settings));
}

TEST_CASE("a tiny sequence is sampled from replays only, each recorded run evicting the cache first", "[timing]") {
  Scripted s;
  s.backend.recording = ScriptedBackend::Recording::supported;
  const TimingReport report = s.measure();
  CHECK(report.sampling == "scripted_replay");
  CHECK(report.sampling_fallback.empty());
  // The three probe samples (0.030 ms, the host's latency included) are dropped; the replays' count.
  CHECK(report.median_ms == 0.010);
  CHECK(report.min_ms == 0.010);
  CHECK(report.noise < 1e-9);  // equal samples (up to the rounding of their mean)
  CHECK(report.converged);
  CHECK(report.samples == 16);   // 8 per replay, and min_samples is 10
  CHECK(s.backend.replays == 3);  // the warm-up replay and two timed ones
  CHECK(report.l2_flushed);

  // Each recorded run: the state reset, the eviction, then the launches between the timer's marks.
  const std::vector<std::string> run = {"recorded before_run", "recorded fill", "recorded mark_start", "recorded launch",
                                        "recorded mark_stop"};
  std::vector<std::string> expected;
  for (int i = 0; i < 8; ++i) expected.insert(expected.end(), run.begin(), run.end());
  CHECK(s.backend.recorded() == expected);

  // The probe's samples are checked one by one; then each replay's last run, numbered after them.
  CHECK(s.checked == std::vector<std::size_t>{0, 1, 2, 10, 18});
}

TEST_CASE("batched samples feed the same statistics and limits", "[timing]") {
  Scripted s;
  s.backend.recording = ScriptedBackend::Recording::supported;
  SECTION("max_samples cuts the last replay short") {
    s.backend.replay_ms = {0.010, 0.011};  // 4.8% noise: never converges
    s.settings.max_samples = 12;
    const TimingReport report = s.measure();
    CHECK(report.samples == 12);
    CHECK_FALSE(report.converged);
    const detail::SampleStatistics expected =
        detail::sample_statistics({0.010, 0.011, 0.010, 0.011, 0.010, 0.011, 0.010, 0.011, 0.010, 0.011, 0.010, 0.011});
    CHECK(report.median_ms == Approx(expected.median));
    CHECK(report.mean_ms == Approx(expected.mean));
    CHECK(report.noise == Approx(expected.relative_stddev));
    CHECK(s.checked.back() == 3 + 12 - 1);
  }
  SECTION("the budget ends sampling after a replay") {
    s.backend.replay_ms = {0.010, 0.011};
    s.settings.budget_seconds = 0.0;
    const TimingReport report = s.measure();
    CHECK(report.samples == 8);
    CHECK(s.backend.replays == 2);
    CHECK(report.median_ms == Approx(0.0105));
  }
}

TEST_CASE("screen's stop rule bounds the standard error of the mean, strict's the samples' spread", "[timing]") {
  Scripted s;
  s.backend.sample_ms = {0.200, 0.212};  // a spread of about 3%: never 0.5%, but a 0.5% standard error by 36
  SECTION("standard_error stops at the first count whose mean is known to the target") {
    s.settings.stop_rule = "standard_error";
    const TimingReport report = s.measure();
    CHECK(report.converged);
    REQUIRE(report.samples > s.settings.min_samples);
    std::vector<double> taken;
    for (int i = 0; i < report.samples; ++i) taken.push_back(s.backend.sample_ms[i % 2]);
    CHECK(detail::noise_target_met(taken, s.settings));
    taken.pop_back();
    CHECK_FALSE(detail::noise_target_met(taken, s.settings));
    CHECK(report.samples >= 30);
    CHECK(report.samples <= 40);
    CHECK(report.noise > 0.02);  // the report's noise is the spread, whichever rule stopped sampling
  }
  SECTION("spread samples to the maximum when the samples never agree to the target") {
    s.settings.stop_rule = "spread";
    s.settings.max_samples = 200;
    const TimingReport report = s.measure();
    CHECK_FALSE(report.converged);
    CHECK(report.samples == 200);
  }
}

TEST_CASE("a sequence above the threshold is sampled one at a time, recording nothing", "[timing]") {
  Scripted s;
  s.backend.recording = ScriptedBackend::Recording::supported;
  s.backend.sample_ms = {0.200};
  const TimingReport report = s.measure();
  CHECK(report.sampling == "per_sample");
  CHECK(report.sampling_fallback.empty());
  CHECK(s.backend.recorded().empty());
  CHECK(s.backend.replays == 0);
  CHECK(report.median_ms == 0.200);
  CHECK(report.samples == 10);
}

TEST_CASE("a tiny sequence falls back to one sample at a time, saying why", "[timing]") {
  Scripted s;
  SECTION("a backend that cannot record (the default)") {
    s.backend.recording = ScriptedBackend::Recording::unsupported;
    const TimingReport report = s.measure();
    CHECK(report.sampling == "per_sample");
    CHECK(report.sampling_fallback == "the scripted backend cannot record timed runs for the device to replay "
                                      "(CUDA only)");
    CHECK(report.median_ms == 0.030);
    CHECK(report.samples == 10);
    CHECK(s.checked.size() == 10);
  }
  SECTION("a recording that fails") {
    s.backend.recording = ScriptedBackend::Recording::refused;
    const TimingReport report = s.measure();
    CHECK(report.sampling == "per_sample");
    CHECK(report.sampling_fallback == "cuStreamEndCapture failed: scripted refusal");
    CHECK(report.median_ms == 0.030);
  }
  SECTION("a first replay that fails") {
    s.backend.recording = ScriptedBackend::Recording::replay_fails;
    const TimingReport report = s.measure();
    CHECK(report.sampling == "per_sample");
    CHECK(report.sampling_fallback == "cuGraphLaunch failed: scripted");
    CHECK(s.backend.replays == 1);
    CHECK(report.median_ms == 0.030);
    CHECK(report.samples == 10);
  }
  SECTION("batching turned off records nothing and gives no reason") {
    s.backend.recording = ScriptedBackend::Recording::supported;
    s.settings.batch_below_ms = 0.0;
    const TimingReport report = s.measure();
    CHECK(report.sampling == "per_sample");
    CHECK(report.sampling_fallback.empty());
    CHECK(s.backend.recorded().empty());
  }
}

TEST_CASE("a lost context while recording is not a fallback", "[timing]") {
  Scripted s;
  s.backend.recording = ScriptedBackend::Recording::faults;
  CHECK_THROWS_AS(s.measure(), DeviceFault);
}

namespace {

// Reads `n4` float4s; thread 0 of block 0 counts the kernel's runs on the device.
const char* const kTinySum = R"(
extern "C" __global__ void tiny_sum(const float4* x, long long n4, float* partial, unsigned int* runs) {
  float s = 0.0f;
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n4; i += (long long)gridDim.x * blockDim.x) {
    const float4 v = x[i];
    s += v.x + v.y + v.z + v.w;
  }
  partial[blockIdx.x * blockDim.x + threadIdx.x] = s;
  if (blockIdx.x == 0 && threadIdx.x == 0) atomicAdd(runs, 1u);
}
)";

// Compiles and loads tiny_sum; returns the kernel, its module in `module`.
std::uint64_t load_tiny_sum(Backend& backend, std::uint64_t& module) {
  CompileOptions options;
  options.kernels = {"tiny_sum"};
  const CompiledProgram program = backend.compile(kTinySum, options);
  REQUIRE(program.report.ok);
  module = backend.load(program);
  return backend.kernel(module, "tiny_sum");
}

}  // namespace

TEST_CASE("CUDA times a tiny kernel over graph replays, each sample cold", "[timing][gpu][cuda]") {
  KERNELSMITH_REQUIRE_CUDA_DEVICE();
  auto backend = create_backend("cuda", 0);
  detail::CacheFlusher flusher(*backend);
  REQUIRE(flusher.reads());
  std::uint64_t module = 0;
  const std::uint64_t kernel = load_tiny_sum(*backend, module);
  // 16 MiB: a few microseconds from memory, well inside the L2 (50 MiB on an H100) once read.
  const std::int64_t n4 = (std::int64_t(16) << 20) / 16;
  const auto blocks = static_cast<std::uint32_t>(backend->device().compute_units * 4);
  const std::uint64_t x = backend->allocate(static_cast<std::size_t>(n4) * 16);
  const std::uint64_t partial = backend->allocate(std::size_t(blocks) * 256 * 4);
  const std::uint64_t runs = backend->allocate(4);
  backend->fill(x, 0, static_cast<std::size_t>(n4) * 16);

  int launch_calls = 0;
  int before_runs = 0;
  detail::LaunchSequence sequence;
  sequence.names = {"tiny_sum"};
  sequence.launch = [&](std::size_t) {
    ++launch_calls;
    backend->launch(kernel, {blocks, 1, 1}, {256, 1, 1}, 0,
                    {{KernelArg::Kind::buffer, x, 0},
                     {KernelArg::Kind::int64, 0, n4},
                     {KernelArg::Kind::buffer, partial, 0},
                     {KernelArg::Kind::buffer, runs, 0}});
  };
  sequence.before_run = [&] {
    ++before_runs;
    backend->fill(partial, 0xFF, std::size_t(blocks) * 256 * 4);  // device work, as the harness's poisoning
  };
  detail::TimingSettings settings;
  settings.min_samples = 100;
  settings.max_samples = 2000;
  settings.budget_seconds = 0.5;
  settings.flusher = &flusher;
  auto device_runs = [&] {
    unsigned int count = 0;
    backend->read(runs, &count, 4);
    return count;
  };

  backend->fill(runs, 0, 4);
  const TimingReport batched = detail::measure_sequence(*backend, sequence, settings);
  const unsigned int batched_device_runs = device_runs();
  INFO("fallback: " << batched.sampling_fallback);
  REQUIRE(batched.sampling == "graph_replay");
  CHECK(batched.sampling_fallback.empty());
  CHECK(batched.l2_flushed);
  CHECK(batched.samples >= 100);
  // The recorded launches ran on every replay: far more runs on the device than launch calls on the host.
  CHECK(batched_device_runs >= static_cast<unsigned int>(batched.samples));
  CHECK(batched_device_runs > static_cast<unsigned int>(launch_calls) + 100);
  CHECK(before_runs == launch_calls - settings.host_repeats);  // every run but the host cross-check's

  detail::TimingSettings one_at_a_time = settings;
  one_at_a_time.batch_below_ms = 0.0;
  const TimingReport single = detail::measure_sequence(*backend, sequence, one_at_a_time);
  CHECK(single.sampling == "per_sample");

  // The same kernel both ways: the batches drop the host's latency, not the kernel's work.
  CHECK(batched.median_ms < 2.0 * single.median_ms);
  CHECK(batched.median_ms > 0.25 * single.median_ms);

  // Without the eviction the replayed runs find the 16 MiB in the L2; with it each run reads memory.
  detail::TimingSettings warm = settings;
  warm.flusher = nullptr;
  const TimingReport warm_batched = detail::measure_sequence(*backend, sequence, warm);
  REQUIRE(warm_batched.sampling == "graph_replay");
  CHECK(batched.median_ms > 1.15 * warm_batched.median_ms);

  std::printf("tiny_sum over 16 MiB on %s: graph replays %.2f us median, noise %.2f%% (%d samples); one sample "
              "at a time %.2f us, noise %.2f%% (%d samples); graph replays with a warm L2 %.2f us\n",
              backend->device().name.c_str(), batched.median_ms * 1e3, batched.noise * 100.0, batched.samples,
              single.median_ms * 1e3, single.noise * 100.0, single.samples, warm_batched.median_ms * 1e3);
  backend->free(x);
  backend->free(partial);
  backend->free(runs);
  backend->unload(module);
}

TEST_CASE("CUDA: a sequence whose runs need the host cannot be recorded and is timed one sample at a time",
          "[timing][gpu][cuda]") {
  KERNELSMITH_REQUIRE_CUDA_DEVICE();
  auto backend = create_backend("cuda", 0);
  std::uint64_t module = 0;
  const std::uint64_t kernel = load_tiny_sum(*backend, module);
  const std::uint64_t x = backend->allocate(4096 * 16);
  const std::uint64_t partial = backend->allocate(256 * 4);
  const std::uint64_t runs = backend->allocate(4);
  backend->fill(x, 0, 4096 * 16);
  std::vector<float> host(4096 * 4, 1.0f);

  detail::LaunchSequence sequence;
  sequence.names = {"tiny_sum"};
  sequence.launch = [&](std::size_t) {
    backend->launch(kernel, {1, 1, 1}, {256, 1, 1}, 0,
                    {{KernelArg::Kind::buffer, x, 0},
                     {KernelArg::Kind::int64, 0, 4096},
                     {KernelArg::Kind::buffer, partial, 0},
                     {KernelArg::Kind::buffer, runs, 0}});
  };
  // A synchronous copy from the host: it would run once at recording, not before every replayed run.
  sequence.before_run = [&] { backend->write(x, host.data(), host.size() * 4); };
  detail::TimingSettings settings;
  settings.min_samples = 10;
  settings.max_samples = 50;
  const TimingReport report = detail::measure_sequence(*backend, sequence, settings);
  CHECK(report.sampling == "per_sample");
  INFO(report.sampling_fallback);
  CHECK(test::contains(report.sampling_fallback, "write cannot be recorded"));
  CHECK(report.samples >= 10);
  CHECK(report.median_ms > 0.0);
  // The backend is usable afterwards: the capture ended, and its stream is the backend's own again.
  backend->synchronize();
  unsigned int count = 0;
  backend->read(runs, &count, 4);
  CHECK(count > 0);
  backend->free(x);
  backend->free(partial);
  backend->free(runs);
  backend->unload(module);
}
