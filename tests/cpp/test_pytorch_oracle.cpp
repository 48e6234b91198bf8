// Tasks whose expected outputs come from a PyTorch module (tests/data/kernelbench/oracle_tasks, problem
// files in KernelBench's format written for the tests), end to end on PoCL: the evaluator asks the oracle
// helper (python/kernelsmith/pytorch_oracle.py, torch on the CPU) for every case's expected outputs,
// caches them on disk, and times PyTorch eager and torch.compile as baselines. Skipped, saying why, where
// OpenCL or torch is missing. torch.compile's max-autotune mode is left out here (CI's time: on this
// CPU it compiles for as long as the default mode, once per task); tests/python/test_pytorch_oracle.py
// and the GPU machines cover it.
#include <sys/wait.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "catch.hpp"
#include "evaluate/pytorch_oracle.hpp"
#include "gpu_test_support.hpp"
#include "harness_test_support.hpp"
#include "kernelsmith/error.hpp"
#include "kernelsmith/evaluator.hpp"
#include "kernelsmith/python_helpers.hpp"
#include "kernelsmith/task.hpp"
#include "test_support.hpp"

using namespace kernelsmith;
using test::contains;
using test::ScopedEnvironment;

namespace {

namespace fs = std::filesystem;

Task oracle_task(const std::string& folder) {
  return Task::load(std::string(KERNELSMITH_TEST_DATA_DIR) + "/kernelbench/oracle_tasks/" + folder);
}

/// Why the oracle cannot run here (no OpenCL device, or no torch in the helpers' interpreter), or "".
std::string oracle_unavailable_reason() {
  const std::string opencl = test::backend_unavailable_reason("opencl", "OpenCL");
  if (!opencl.empty()) return opencl;
  try {
    detail::PytorchOracleClient client("cpu", 300.0);
    const detail::OracleVersion& version = client.version();
    return version.available ? std::string() : "torch is missing: " + version.reason;
  } catch (const std::exception& e) {
    return std::string("the oracle helper cannot start: ") + e.what();
  }
}

/// A fresh cache folder: the oracle's disk cache starts empty.
struct FreshCache {
  FreshCache() : path(fs::temp_directory_path() / ("kernelsmith-oracle-test-" + std::to_string(::getpid()) + "-" +
                                                    std::to_string(counter()++))) {
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~FreshCache() {
    std::error_code error;
    fs::remove_all(path, error);
  }
  static int& counter() {
    static int value = 0;
    return value;
  }
  fs::path path;
};

EvaluatorOptions oracle_options(const fs::path& cache, bool isolate = false) {
  EvaluatorOptions options = test::fast_options("opencl", isolate, 1);
  options.cache_dir = cache.string();
  return options;
}

Candidate opencl(const std::string& source) { return test::candidate_in("opencl", source); }

const char* kRelu = R"(// @launch relu<<<ceil_div(batch_size * dim, 64), 64>>>(x, out, batch_size * dim)
__kernel void relu(__global const float* x, __global float* out, int n) {
  const int i = get_global_id(0);
  if (i < n) out[i] = fmax(x[i], 0.0f);
}
)";

// Right for positive inputs only.
const char* kReluWrong = R"(// @launch relu<<<ceil_div(batch_size * dim, 64), 64>>>(x, out, batch_size * dim)
__kernel void relu(__global const float* x, __global float* out, int n) {
  const int i = get_global_id(0);
  if (i < n) out[i] = fabs(x[i]);
}
)";

const char* kLinearBiasRelu =
    R"(// @launch gemm_bias_relu<<<ceil_div(batch_size * out_features, 64), 64>>>(x, gemm_weight, bias, out, batch_size, in_features, out_features)
__kernel void gemm_bias_relu(__global const float* x, __global const float* w, __global const float* b,
                             __global float* out, int rows, int k_size, int cols) {
  const int i = get_global_id(0);
  if (i >= rows * cols) return;
  const int row = i / cols, col = i % cols;
  float acc = 0.0f;
  for (int k = 0; k < k_size; ++k) acc += x[row * k_size + k] * w[col * k_size + k];
  out[i] = fmax(acc + b[col], 0.0f);
}
)";

const char* kSumMax = R"(// @launch sum_max<<<ceil_div(batch_size, 64), 64>>>(x, out0, out1, batch_size, dim1)
__kernel void sum_max(__global const float* x, __global float* sums, __global float* maxima, int rows, int cols) {
  const int r = get_global_id(0);
  if (r >= rows) return;
  float acc = 0.0f, best = -INFINITY;
  for (int j = 0; j < cols; ++j) {
    const float v = x[r * cols + j];
    acc += v;
    best = fmax(best, v);
  }
  sums[r] = acc;
  maxima[r] = best;
}
)";

const char* kScale = R"(// @launch scale<<<ceil_div(M * N, 64), 64>>>(A, s, out, M * N)
__kernel void scale(__global const float* a, __global const float* s, __global float* out, int n) {
  const int i = get_global_id(0);
  if (i < n) out[i] = a[i] * s[0];
}
)";

std::string task_error_of(Evaluator& evaluator, const Task& task, const Candidate& candidate) {
  try {
    evaluator.evaluate(task, candidate);
  } catch (const TaskError& e) {
    return e.what();
  }
  return "no TaskError";
}

}  // namespace

TEST_CASE("a KernelBench problem's module is the oracle: correct and wrong candidates, PyTorch baselines, disk cache",
          "[oracle][opencl][torch]") {
  KERNELSMITH_SKIP_WHEN(oracle_unavailable_reason());
  Task task = oracle_task("relu");
  task.oracle->baselines = {"eager", "compile"};
  const FreshCache cache;
  // This test is about what is cached: a speedup above the threshold (PoCL against eager on a small ReLU lands
  // near it) would time both sides again, one more request, and replace the cached eager median with the new one.
  EvaluatorOptions options = oracle_options(cache.path);
  options.suspicious_speedup = 1e9;
  // Both evaluators name one session, so the second may take the first's baselines (by default each evaluator
  // times its own: EvaluatorOptions::baseline_session).
  options.baseline_session = "oracle-cache-test";

  auto evaluator = create_evaluator(options);
  const std::int64_t requests_before = detail::oracle_requests_sent();
  const auto started = std::chrono::steady_clock::now();
  const Evaluation ok = evaluator->evaluate(task, opencl(kRelu));
  const double first_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  INFO(ok.to_json());
  REQUIRE(ok.status == Status::ok);
  CHECK(contains(ok.message, "PyTorch eager's speed"));
  // Eager is what speedup is against; torch.compile is timed beside it (or says why not).
  REQUIRE(ok.baselines.count("eager") == 1);
  REQUIRE(ok.baseline_timing.has_value());
  CHECK(ok.baseline_timing->median_ms == ok.baselines.at("eager").median_ms);
  CHECK(ok.baselines.at("eager").samples >= 3);
  CHECK(ok.speedup == ok.speedups.at("eager"));
  CHECK(ok.speedup > 0.0);
  REQUIRE(ok.speedups.count("compile") == 1);
  if (ok.baselines.count("compile") == 1) {
    CHECK(ok.speedups.at("compile") > 0.0);
    CHECK(ok.baselines.at("compile").kernels.at(0).name == "compile");
  } else {
    CHECK(ok.speedups.at("compile") == 0.0);
    CHECK_FALSE(ok.baseline_errors.at("compile").empty());
  }
  CHECK(ok.speedups.count("compile_max_autotune") == 0);  // not listed by this task
  CHECK(ok.stage_seconds.count("oracle") == 1);
  const double first_oracle = ok.stage_seconds.at("oracle");
  CHECK(first_oracle > 0.0);
  const std::int64_t first_requests = detail::oracle_requests_sent() - requests_before;
  CHECK(first_requests > 10);  // every case of three size configurations, then the baselines

  const Evaluation wrong = evaluator->evaluate(task, opencl(kReluWrong));
  INFO(wrong.message);
  CHECK(wrong.status == Status::incorrect);
  CHECK(contains(wrong.message, "out:"));

  // A second evaluator of the same session finds the expected outputs and the baselines on disk: the helper
  // is only asked for its torch version.
  auto again = create_evaluator(options);
  const std::int64_t before_second = detail::oracle_requests_sent();
  const auto second_started = std::chrono::steady_clock::now();
  const Evaluation cached = again->evaluate(task, opencl(kRelu));
  const double second_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - second_started).count();
  REQUIRE(cached.status == Status::ok);
  CHECK(detail::oracle_requests_sent() - before_second == 1);
  CHECK(cached.stage_seconds.at("oracle") < first_oracle);
  CHECK(cached.baselines.at("eager").median_ms == ok.baselines.at("eager").median_ms);
  WARN("oracle stage: first evaluation " << first_oracle << " s (" << first_requests << " helper requests, "
                                         << first_seconds << " s in all), disk-cached " << cached.stage_seconds.at("oracle")
                                         << " s (" << second_seconds << " s in all)");
}

TEST_CASE("oracle tasks with parameters, a tuple output and a Python float check OpenCL candidates",
          "[oracle][opencl][torch]") {
  KERNELSMITH_SKIP_WHEN(oracle_unavailable_reason());
  const FreshCache cache;
  auto evaluator = create_evaluator(oracle_options(cache.path));
  for (const auto& [folder, source] : {std::pair<std::string, const char*>{"linear_bias_relu", kLinearBiasRelu},
                                       {"sum_max", kSumMax},
                                       {"scale_alpha", kScale}}) {
    INFO(folder);
    Task task = oracle_task(folder);
    task.oracle->baselines = {"eager"};
    const Evaluation evaluation = evaluator->evaluate(task, opencl(source));
    INFO(evaluation.message);
    CHECK(evaluation.status == Status::ok);
    CHECK(evaluation.speedups.count("eager") == 1);
  }
}

TEST_CASE("a suspicious speedup over PyTorch eager is measured again against eager", "[oracle][opencl][torch]") {
  KERNELSMITH_SKIP_WHEN(oracle_unavailable_reason());
  Task task = oracle_task("relu");
  task.oracle->baselines = {"eager"};
  const FreshCache cache;
  EvaluatorOptions options = oracle_options(cache.path);
  options.suspicious_speedup = 1e-6;  // every speedup is suspicious
  const Evaluation evaluation = create_evaluator(options)->evaluate(task, opencl(kRelu));
  INFO(evaluation.to_json());
  REQUIRE(evaluation.status == Status::ok);
  CHECK(evaluation.integrity.remeasured);
  // Screen mode takes the second measurement, eager's included, and reports it everywhere.
  CHECK(evaluation.speedup == evaluation.integrity.remeasured_speedup);
  CHECK(evaluation.speedups.at("eager") == evaluation.speedup);
  CHECK(evaluation.baselines.at("eager").median_ms == evaluation.baseline_timing->median_ms);
}

TEST_CASE("the oracle, when present, is the correctness oracle even beside reference kernels",
          "[oracle][opencl][torch]") {
  KERNELSMITH_SKIP_WHEN(oracle_unavailable_reason());
  // The harness task's references compute 2 * a + b; this oracle a + b. The oracle decides.
  Task task = test::small_task();
  PytorchOracle oracle;
  oracle.module.source =
      "import torch\n\nclass Model(torch.nn.Module):\n    def forward(self, a, b):\n        return a + b\n\n"
      "N = 4096\n\ndef get_inputs():\n    return [torch.randn(N), torch.randn(N)]\n\n"
      "def get_init_inputs():\n    return []\n";
  oracle.constants = {{"N", "N"}};
  oracle.forward = {"a", "b"};
  oracle.outputs = {"y"};
  oracle.baselines = {"eager"};
  task.oracle = oracle;
  task.validate("harness task with an oracle");
  const char* kSum = R"(// @launch add<<<ceil_div(N, 128), 128>>>(a, b, y, N)
__kernel void add(__global const float* a, __global const float* b, __global float* y, int n) {
  const int i = get_global_id(0);
  if (i < n) y[i] = a[i] + b[i];
}
)";
  const char* kTwiceSum = R"(// @launch add<<<ceil_div(N, 128), 128>>>(a, b, y, N)
__kernel void add(__global const float* a, __global const float* b, __global float* y, int n) {
  const int i = get_global_id(0);
  if (i < n) y[i] = 2.0f * a[i] + b[i];
}
)";
  const FreshCache cache;
  for (const bool isolate : {false, true}) {
    INFO("isolated: " << isolate);
    auto evaluator = create_evaluator(oracle_options(cache.path, isolate));
    const Evaluation sum = evaluator->evaluate(task, opencl(kSum));
    INFO(sum.message);
    CHECK(sum.status == Status::ok);
    CHECK(sum.baselines.count("reference") == 0);
    CHECK(sum.baselines.count("eager") == 1);
    CHECK(evaluator->evaluate(task, opencl(kTwiceSum)).status == Status::incorrect);
  }
  // Without the oracle the references are the oracle and the baseline again.
  task.oracle.reset();
  auto evaluator = create_evaluator(oracle_options(cache.path));
  const Evaluation twice = evaluator->evaluate(task, opencl(kTwiceSum));
  CHECK(twice.status == Status::ok);
  CHECK(twice.speedups.count("reference") == 1);
  CHECK(twice.speedups.at("reference") == twice.speedup);
}

TEST_CASE("the helpers' interpreter reaches the worker, whose oracle then runs", "[oracle][opencl][torch]") {
  KERNELSMITH_SKIP_WHEN(oracle_unavailable_reason());
  const char* python = std::getenv("KERNELSMITH_PYTHON");
  KERNELSMITH_SKIP_WHEN(python == nullptr ? "KERNELSMITH_PYTHON names no interpreter with torch to configure instead"
                                          : "");
  const std::string interpreter = python;
  const ScopedEnvironment unset("KERNELSMITH_PYTHON", std::nullopt);
  set_helper_python(interpreter);
  CHECK(helper_python() == interpreter);
  Task task = oracle_task("relu");
  task.oracle->baselines = {"eager"};
  const FreshCache cache;
  auto evaluator = create_evaluator(oracle_options(cache.path, true));
  const Evaluation evaluation = evaluator->evaluate(task, opencl(kRelu));
  INFO(evaluation.message);
  CHECK(evaluation.status == Status::ok);
  CHECK(evaluation.stage_seconds.count("oracle") == 1);
  set_helper_python("");
}

TEST_CASE("an oracle task whose module fails or whose interpreter lacks torch is a task error saying why",
          "[oracle][opencl][torch]") {
  KERNELSMITH_SKIP_WHEN(oracle_unavailable_reason());
  const FreshCache cache;

  SECTION("forward raises") {
    auto evaluator = create_evaluator(oracle_options(cache.path));
    const std::string message = task_error_of(*evaluator, oracle_task("forward_raises"), opencl(kRelu));
    INFO(message);
    CHECK(contains(message, "task kb_test_forward_raises: its PyTorch oracle"));
    CHECK(contains(message, "Raises_in_forward.py"));
    CHECK(contains(message, "this problem's forward always fails"));
    CHECK(contains(message, "line 12 of the problem file"));
  }

  SECTION("the module's output has another shape than the task says") {
    Task task = oracle_task("relu");
    for (auto& tensor : task.tensors) {
      if (tensor.name == "out") tensor.shape = {"dim", "batch_size"};
    }
    task.validate("relu with a transposed output");
    for (const bool isolate : {false, true}) {
      auto evaluator = create_evaluator(oracle_options(cache.path, isolate));
      const std::string message = task_error_of(*evaluator, task, opencl(kRelu));
      INFO(message);
      // The first check size is asked for first (the cheapest case to find a broken module on).
      CHECK(contains(message, "output out: the module returns shape [3, 7], but the task says [7, 3] under the "
                              "sizes 'small'"));
    }
  }

  SECTION("the helpers' interpreter has no torch") {
    // A bare virtual environment of the system's Python: no torch in it.
    const fs::path venv = cache.path / "bare-venv";
    const std::string command = "python3 -m venv --without-pip '" + venv.string() + "' > /dev/null 2>&1";
    std::string bare = (venv / "bin" / "python").string();
    if (std::system(command.c_str()) != 0 || !fs::exists(bare)) {
      bare = "/usr/bin/python3";
      const int status = std::system("/usr/bin/python3 -c 'import torch' > /dev/null 2>&1");
      KERNELSMITH_SKIP_WHEN(status == 0 || !fs::exists(bare)
                                ? "no interpreter without torch here (python3 -m venv failed, /usr/bin/python3 has torch)"
                                : "");
    }
    const ScopedEnvironment python("KERNELSMITH_PYTHON", bare);
    for (const bool isolate : {false, true}) {
      auto evaluator = create_evaluator(oracle_options(cache.path, isolate));
      const std::string message = task_error_of(*evaluator, oracle_task("relu"), opencl(kRelu));
      INFO(message);
      CHECK(contains(message, "task kb_test_relu takes its expected outputs from PyTorch"));
      CHECK(contains(message, "needs torch"));
      CHECK(contains(message, bare));
      CHECK(contains(message, "pip install kernelsmith[torch]"));
    }
  }
}

TEST_CASE("oracle tensors travel through shared memory while it has room; killed processes' folders go",
          "[oracle]") {
  const FreshCache shared;  // stands in for /dev/shm
  const fs::path abandoned = shared.path / "kernelsmith-oracle-999999999-abcdef";  // beyond any pid: not running
  const fs::path alive = shared.path / ("kernelsmith-oracle-" + std::to_string(::getpid()) + "-abcdef");
  const fs::path other = shared.path / "kernelsmith-oracle-notes";
  for (const fs::path& folder : {abandoned, alive, other}) fs::create_directories(folder);
  const ScopedEnvironment variable("KERNELSMITH_ORACLE_SHM", shared.path.string());
  detail::PytorchOracleClient client("cpu", 300.0);
  CHECK_FALSE(fs::exists(abandoned));
  CHECK(fs::exists(alive));
  CHECK(fs::exists(other));
  client.choose_folder(1024);
  const fs::path chosen = client.request_folder();
  CHECK(chosen.parent_path() == shared.path);
  CHECK(chosen != alive);
  // More than the file system holds: the temporary directory's folder.
  client.choose_folder(std::uintmax_t(1) << 62);
  CHECK(fs::path(client.request_folder()).parent_path() == fs::temp_directory_path());
  // No shared memory: always the temporary directory.
  const ScopedEnvironment none("KERNELSMITH_ORACLE_SHM", shared.path.string() + "/missing");
  detail::PytorchOracleClient without("cpu", 300.0);
  without.choose_folder(1024);
  CHECK(fs::path(without.request_folder()).parent_path() == fs::temp_directory_path());
}

TEST_CASE("an oracle helper that dies or hangs is a task error with what it printed", "[oracle][opencl]") {
  KERNELSMITH_SKIP_WHEN(test::backend_unavailable_reason("opencl", "OpenCL"));
  const FreshCache cache;
  const fs::path dying = cache.path / "dying_oracle.py";
  std::ofstream(dying) << "import sys\nsys.stderr.write('oracle giving up\\n')\nsys.exit(3)\n";
  const fs::path hanging = cache.path / "hanging_oracle.py";
  std::ofstream(hanging) << "import time\ntime.sleep(600)\n";
  {
    const ScopedEnvironment helper("KERNELSMITH_ORACLE_HELPER", dying.string());
    auto evaluator = create_evaluator(oracle_options(cache.path));
    const std::string message = task_error_of(*evaluator, oracle_task("relu"), opencl(kRelu));
    INFO(message);
    CHECK(contains(message, "the PyTorch oracle helper exited with status 3"));
    CHECK(contains(message, "oracle giving up"));
  }
  {
    const ScopedEnvironment helper("KERNELSMITH_ORACLE_HELPER", hanging.string());
    EvaluatorOptions options = oracle_options(cache.path);
    options.oracle_timeout_seconds = 2.0;
    auto evaluator = create_evaluator(options);
    const auto started = std::chrono::steady_clock::now();
    const std::string message = task_error_of(*evaluator, oracle_task("relu"), opencl(kRelu));
    INFO(message);
    CHECK(contains(message, "did not finish computing expected outputs or timing a baseline within 2 s"));
    CHECK(std::chrono::steady_clock::now() - started < std::chrono::seconds(30));
  }
}
