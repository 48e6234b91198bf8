// Cost of the worker round trip for a task that carries a large data case (Task::add_case): the same
// correct candidate evaluated repeatedly in the isolated worker on the OpenCL backend (PoCL on a CPU
// machine is enough). The first evaluation prepares the task (reference, baseline) and is reported
// apart; the rest show what each evaluation pays for shipping and keying the task.
//
//   bench_worker_protocol <task folder> [evaluations (20)] [case megabytes (20)]
//
// <task folder> is tests/data/harness_task (y = 2 * a + b over N float32 values).
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "kernelsmith/evaluator.hpp"
#include "kernelsmith/task.hpp"
#include "kernelsmith/tensor.hpp"

using namespace kernelsmith;
using Clock = std::chrono::steady_clock;

namespace {

const char* kCandidate = R"(// @launch add2<<<ceil_div(N, 128), 128>>>(y, a, b, N)
__kernel void add2(__global float* out, __global const float* x, __global const float* z, int n) {
  const int i = get_global_id(0);
  if (i < n) out[i] = x[i] + x[i] + z[i];
}
)";

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    fmt::print(stderr, "usage: bench_worker_protocol <task folder> [evaluations] [case megabytes]\n");
    return 2;
  }
  const int evaluations = argc > 2 ? std::max(2, std::atoi(argv[2])) : 20;
  const double megabytes = argc > 3 ? std::atof(argv[3]) : 20.0;

  Task task = Task::load(argv[1]);
  // Two float32 inputs make up the case: megabytes / 8 elements each.
  const auto elements = static_cast<std::int64_t>(megabytes * 1e6 / 8.0);
  std::mt19937 rng(7);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> a(static_cast<std::size_t>(elements));
  std::vector<float> b(static_cast<std::size_t>(elements));
  for (auto& v : a) v = normal(rng);
  for (auto& v : b) v = normal(rng);
  task.add_case({{"a", TensorRef{DType::float32, {elements}, a.data(), false}},
                 {"b", TensorRef{DType::float32, {elements}, b.data(), false}}});

  EvaluatorOptions options;
  options.backend = "opencl";
  options.isolate = true;
  options.correctness_trials = 1;
  options.min_samples = 3;
  options.max_samples = 10;
  options.screen_budget_seconds = 0.02;
  options.deadline_seconds = 300.0;
  options.flush_l2 = false;  // the cache eviction before each sample is no part of what this measures
  auto evaluator = create_evaluator(options);
  Candidate candidate;
  candidate.language = "opencl";
  candidate.source = kCandidate;

  std::vector<double> walls;
  std::vector<double> overheads;
  std::map<std::string, double> stage_sums;  // over the later evaluations
  int remeasured = 0;
  double first = 0.0;
  const auto all_started = Clock::now();
  for (int i = 0; i < evaluations; ++i) {
    const auto started = Clock::now();
    const Evaluation evaluation = evaluator->evaluate(task, candidate);
    const double wall = seconds_since(started);
    if (evaluation.status != Status::ok) {
      fmt::print(stderr, "evaluation {} failed: {}\n", i, evaluation.message);
      return 1;
    }
    if (i == 0) {
      first = wall;
      continue;
    }
    walls.push_back(wall);
    const auto overhead = evaluation.stage_seconds.find("overhead");
    overheads.push_back(overhead != evaluation.stage_seconds.end() ? overhead->second : 0.0);
    for (const auto& [stage, seconds] : evaluation.stage_seconds) stage_sums[stage] += seconds;
    remeasured += evaluation.integrity.remeasured ? 1 : 0;
  }
  const double total = seconds_since(all_started);
  std::sort(walls.begin(), walls.end());
  std::sort(overheads.begin(), overheads.end());
  double later = 0.0;
  for (double w : walls) later += w;
  fmt::print("task with a {:.1f} MB data case ({} float32 elements per input), {} evaluations on opencl\n",
             static_cast<double>(elements) * 8.0 / 1e6, elements, evaluations);
  fmt::print("  total {:.2f} s; first (prepares the task) {:.3f} s; later ones: sum {:.2f} s, median {:.3f} s\n",
             total, first, later, walls[walls.size() / 2]);
  fmt::print("  median worker overhead per later evaluation (round trip outside the harness stages) {:.3f} s\n",
             overheads[overheads.size() / 2]);
  fmt::print("  mean seconds per later evaluation by stage:");
  for (const auto& [stage, sum] : stage_sums) fmt::print(" {} {:.3f}", stage, sum / static_cast<double>(walls.size()));
  fmt::print("\n  later evaluations re-measured as suspiciously fast: {}\n", remeasured);
  return 0;
}
