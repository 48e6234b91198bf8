// The evaluation pipeline end to end on an OpenCL device (PoCL on the CI machine): the backend alone,
// then the evaluator in-process and isolated in a worker, with one candidate per way to fail.
#include <algorithm>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <string>

#include <fmt/format.h>

#include "catch.hpp"
#include "harness_test_support.hpp"
#include "test_support.hpp"
#include "evaluate/harness.hpp"
#include "evaluate/plan_runner.hpp"
#include "kernelsmith/backend.hpp"
#include "kernelsmith/device.hpp"
#include "kernelsmith/error.hpp"
#include "kernelsmith/evaluator.hpp"
#include "kernelsmith/task.hpp"

using namespace kernelsmith;

namespace {

using test::opencl_available;

std::string opencl_reason() {
  for (const auto& backend : devices()) {
    if (backend.name == "opencl") return backend.reason;
  }
  return "not built";
}

Task small_task() { return test::small_task(); }

Candidate opencl(const std::string& source) { return test::candidate_in("opencl", source); }

EvaluatorOptions fast_options(bool isolate) { return test::fast_options("opencl", isolate, 1); }

// In-process, with every speedup suspicious: each evaluation is measured again.
EvaluatorOptions suspicious_options() {
  EvaluatorOptions options = fast_options(false);
  options.suspicious_speedup = 0.01;
  return options;
}

// A correct candidate that differs from the reference (a + a is exactly 2 * a in float32).
const char* kCorrect = R"(// @launch add2<<<ceil_div(N, 128), 128>>>(y, a, b, N)
__kernel void add2(__global float* out, __global const float* x, __global const float* z, int n) {
  const int i = get_global_id(0);
  if (i < n) out[i] = x[i] + x[i] + z[i];
}
)";

const char* kWrong = R"(// @launch add2<<<ceil_div(N, 128), 128>>>(y, a, b, N)
__kernel void add2(__global float* out, __global const float* x, __global const float* z, int n) {
  const int i = get_global_id(0);
  if (i < n) out[i] = 2.0f * x[i] - z[i];
}
)";

const char* kUnwritten = R"(// @launch add2<<<ceil_div(N, 128), 128>>>(y, a, b, N)
__kernel void add2(__global float* out, __global const float* x, __global const float* z, int n) {
  const int i = get_global_id(0);
  if (i < n - 1) out[i] = 2.0f * x[i] + z[i];
}
)";

const char* kMutatesInput = R"(// @launch add2<<<ceil_div(N, 128), 128>>>(y, a, b, N)
__kernel void add2(__global float* out, __global float* x, __global const float* z, int n) {
  const int i = get_global_id(0);
  if (i < n) {
    out[i] = 2.0f * x[i] + z[i];
    x[i] = 0.0f;
  }
}
)";

const char* kCompileError = R"(// @launch add2<<<ceil_div(N, 128), 128>>>(y, a, b, N)
__kernel void add2(__global float* out, __global const float* x, __global const float* z, int n) {
  const int i = get_global_id(0);
  if (i < n) out[i] = 2.0f * x[i] + ;
}
)";

std::string with_plan(const std::string& plan) {
  return "// " + plan + R"(
__kernel void add2(__global float* out, __global const float* x, __global const float* z, int n) {
  const int i = get_global_id(0);
  if (i < n) out[i] = 2.0f * x[i] + z[i];
}
)";
}

const char* kEndless = R"(// @launch spin<<<ceil_div(N, 64), 64>>>(a, b, y, N)
__kernel void spin(__global const float* a, __global const float* b, __global float* y, int n) {
  const int i = get_global_id(0);
  if (i < n) {
    float v = 0.0f;
    // Random inputs are never NaN: this never ends, and its stores keep the compiler from removing it.
    while (a[i] == a[i]) {
      v += 1.0f;
      y[i] = v;
    }
  }
}
)";

const char* kCrash = R"(// @launch smash<<<ceil_div(N, 64), 64>>>(a, b, y, N)
__kernel void smash(__global const float* a, __global const float* b, __global float* y, int n) {
  const int i = get_global_id(0);
  // Far outside any mapping: the process running the kernel faults.
  y[(long)n * 100000000000L + i] = a[i] + b[i];
}
)";

}  // namespace

TEST_CASE("OpenCL backend compiles, moves bytes, launches and times a kernel", "[harness][opencl]") {
  if (!opencl_available()) {
    WARN("skipped: no OpenCL device: " << opencl_reason());
    return;
  }
  auto backend = create_backend("opencl", 0);
  REQUIRE(backend->name() == "opencl");
  REQUIRE(backend->device().max_threads_per_block > 0);

  CompileOptions options;
  options.defines = {{"SCALE", "3"}};
  const CompiledProgram program = backend->compile(R"(
__kernel void scale(__global const float* x, __global float* y, long n, __local float* scratch) {
  const long i = get_global_id(0);
  scratch[get_local_id(0)] = x[i] * SCALE;
  barrier(CLK_LOCAL_MEM_FENCE);
  if (i < n) y[i] = scratch[get_local_id(0)];
}
)",
                                                   options);
  REQUIRE(program.report.ok);
  const std::uint64_t module = backend->load(program);
  const std::uint64_t kernel = backend->kernel(module, "scale");
  REQUIRE_THROWS_AS(backend->kernel(module, "missing"), NotFoundError);

  const auto params = backend->kernel_params(kernel);
  REQUIRE(params.size() == 4);
  CHECK(params[0].is_pointer);
  CHECK(params[1].is_pointer);
  CHECK_FALSE(params[2].is_pointer);
  CHECK(params[2].size == 8);
  CHECK(params[3].is_dynamic_shared);

  const std::size_t n = 256;
  std::vector<float> x(n);
  for (std::size_t i = 0; i < n; ++i) x[i] = static_cast<float>(i);
  const std::uint64_t in = backend->allocate(n * 4);
  const std::uint64_t out = backend->allocate(n * 4);
  backend->write(in, x.data(), n * 4);
  backend->fill(out, 0xFF, n * 4);
  backend->timer_start();
  backend->launch(kernel, {4, 1, 1}, {64, 1, 1}, 64 * 4,
                  {{KernelArg::Kind::buffer, in, 0}, {KernelArg::Kind::buffer, out, 0}, {KernelArg::Kind::int64, 0, 256}});
  const double ms = backend->timer_stop_ms();
  CHECK(ms > 0.0);
  std::vector<float> y(n);
  backend->read(out, y.data(), n * 4);
  for (std::size_t i = 0; i < n; ++i) REQUIRE(y[i] == 3.0f * static_cast<float>(i));

  // A launch without the dynamic shared memory its __local parameter needs is refused, not run.
  REQUIRE_THROWS_AS(backend->launch(kernel, {4, 1, 1}, {64, 1, 1}, 0,
                                    {{KernelArg::Kind::buffer, in, 0},
                                     {KernelArg::Kind::buffer, out, 0},
                                     {KernelArg::Kind::int64, 0, 256}}),
                    LaunchError);
  backend->free(in);
  backend->free(out);
  backend->unload(module);

  CompiledProgram broken = backend->compile("__kernel void f(__global float* y) { y[0] = ; }", {});
  REQUIRE(broken.report.ok);  // OpenCL builds at load
  try {
    backend->load(broken);
    FAIL("a program with a syntax error loaded");
  } catch (const Error& e) {
    CHECK(std::string(e.what()).find("rejected") != std::string::npos);
  }
}

TEST_CASE("a plan runner asked for sizes the task lacks lists the ones it has", "[harness][opencl]") {
  if (!opencl_available()) {
    WARN("skipped: no OpenCL device: " << opencl_reason());
    return;
  }
  auto backend = create_backend("opencl", 0);
  const Task task = small_task();
  detail::PlanRunner runner(*backend, task, task.references.at("opencl").source);
  CHECK(test::error_of([&] { runner.run("huge", {}); }) ==
        "the task has no size configuration named 'huge'; its configurations are: odd_1000, one, timing");
}

TEST_CASE("the evaluator classifies candidates in-process", "[harness][opencl]") {
  if (!opencl_available()) {
    WARN("skipped: no OpenCL device: " << opencl_reason());
    return;
  }
  const Task task = small_task();
  auto evaluator = create_evaluator(fast_options(false));
  REQUIRE(evaluator->backend_name() == "opencl");

  SECTION("a correct candidate is timed against the reference") {
    const Evaluation evaluation = evaluator->evaluate(task, opencl(kCorrect));
    INFO(evaluation.message);
    REQUIRE(evaluation.status == Status::ok);
    REQUIRE(evaluation.correctness.has_value());
    CHECK(evaluation.correctness->passed);
    // Screen mode: one random trial on the timing sizes (adversarial kinds there are strict mode's);
    // one random and four adversarial on each of the two check sizes.
    CHECK(evaluation.correctness->trials == 1 + 5 + 5);
    REQUIRE(evaluation.timing.has_value());
    REQUIRE(evaluation.baseline_timing.has_value());
    CHECK(evaluation.timing->samples >= 3);
    CHECK(evaluation.timing->median_ms > 0.0);
    CHECK(evaluation.timing->host_ms > 0.0);
    CHECK(evaluation.timing->l2_flushed);
    REQUIRE(evaluation.timing->kernels.size() == 1);
    CHECK(evaluation.timing->kernels[0].name == "add2");
    CHECK(evaluation.speedup > 0.0);
    CHECK(evaluation.fitness == evaluation.speedup);
    REQUIRE(evaluation.sol.has_value());
    CHECK(evaluation.sol->bytes == 12.0 * 4096);
    CHECK(evaluation.sol->achieved_gbps > 0.0);
    CHECK(evaluation.sol->peak_gbps > 0.0);
    CHECK(evaluation.sol->fraction > 0.0);
    REQUIRE_FALSE(evaluation.compile.kernels.empty());
    CHECK(evaluation.compile.kernels[0].name == "add2");
    CHECK(evaluation.integrity.deterministic);
  }
  SECTION("wrong results are incorrect, with the first mismatch") {
    const Evaluation evaluation = evaluator->evaluate(task, opencl(kWrong));
    INFO(evaluation.message);
    REQUIRE(evaluation.status == Status::incorrect);
    CHECK(evaluation.fitness == 0.0);
    REQUIRE(evaluation.correctness.has_value());
    const auto& check = evaluation.correctness->checks.back();
    REQUIRE(check.outputs.size() == 1);
    CHECK(check.outputs[0].mismatches > 0);
    CHECK(check.outputs[0].first_mismatch >= 0);
    CHECK(evaluation.message.find("differ") != std::string::npos);
    CHECK_FALSE(evaluation.timing.has_value());
  }
  SECTION("an output element never written is found by the poison") {
    const Evaluation evaluation = evaluator->evaluate(task, opencl(kUnwritten));
    INFO(evaluation.message);
    REQUIRE(evaluation.status == Status::incorrect);
    const auto& check = evaluation.correctness->checks.back();
    CHECK(check.outputs[0].unwritten == 1);
    CHECK(check.outputs[0].first_mismatch == 4095);
    CHECK(evaluation.message.find("never written") != std::string::npos);
  }
  SECTION("writing into an input is incorrect and names the input") {
    const Evaluation evaluation = evaluator->evaluate(task, opencl(kMutatesInput));
    INFO(evaluation.message);
    REQUIRE(evaluation.status == Status::incorrect);
    const auto& check = evaluation.correctness->checks.back();
    REQUIRE(check.modified_inputs.size() == 1);
    CHECK(check.modified_inputs[0] == "a");
    CHECK(evaluation.message.find("input") != std::string::npos);
  }
  SECTION("a compile error carries the build log") {
    const Evaluation evaluation = evaluator->evaluate(task, opencl(kCompileError));
    INFO(evaluation.message);
    REQUIRE(evaluation.status == Status::compile_error);
    CHECK_FALSE(evaluation.compile.ok);
    CHECK(evaluation.compile.log.find("error") != std::string::npos);
    // Lines point at the candidate's own source, not at the driver's temporary file.
    CHECK(test::contains(evaluation.compile.log, "candidate.cl:4:"));
    CHECK(test::contains(evaluation.message, "rejected the program: error: candidate.cl:4:"));
    CHECK_FALSE(test::contains(evaluation.compile.log, "tempfile"));
    CHECK_FALSE(test::contains(evaluation.compile.log, "kcache"));
    CHECK(evaluation.fitness == failure_fitness(Status::compile_error));
  }
  SECTION("invalid launches of every kind are reported, never run") {
    struct Case {
      std::string plan;
      std::string expected;  // part of the message
    };
    const std::vector<Case> cases = {
        {"@launch add3<<<ceil_div(N, 128), 128>>>(y, a, b, N)", "add3"},
        {"@launch add2<<<ceil_div(N, 128), 128>>>(y, a, b)", "takes 4 arguments"},
        {"@launch add2<<<ceil_div(N, BLOCKS), 128>>>(y, a, b, N)", "BLOCKS"},
        {"@launch add2<<<1, 100000>>>(y, a, b, N)", "at most"},
        {"@launch add2<<<ceil_div(N, 128), 128>>>(N, a, b, N)", "tensor or workspace"},
        {"@launch add2<<<ceil_div(N, 128), 128, 1024>>>(y, a, b, N)",
         "line 1: add2 gets 1024 bytes of dynamic shared memory (the third <<<>>> value) but has no __local pointer "
         "parameter to receive them"},
        {"@launch add2<<<ceil_div(N, 128), 128 (y, a, b, N)", "line 1"},
    };
    for (const auto& c : cases) {
      const Evaluation evaluation = evaluator->evaluate(task, opencl(with_plan(c.plan)));
      INFO(c.plan << " -> " << evaluation.message);
      CHECK(evaluation.status == Status::invalid_launch);
      CHECK(evaluation.message.find(c.expected) != std::string::npos);
      CHECK(evaluation.fitness == failure_fitness(Status::invalid_launch));
    }
    // And a good evaluation after them.
    CHECK(evaluator->evaluate(task, opencl(kCorrect)).status == Status::ok);
  }
  SECTION("plan mistakes found at launch name the plan's line and what to do, not the device") {
    const Evaluation no_local_bytes = evaluator->evaluate(task, opencl(R"(// A kernel with scratch memory.
// @launch add2<<<ceil_div(N, 128), 128>>>(y, a, b, N)
__kernel void add2(__global float* out, __global const float* x, __global const float* z, int n,
                   __local float* scratch) {
  const int i = get_global_id(0);
  if (i < n) out[i] = 2.0f * x[i] + z[i];
}
)"));
    INFO(no_local_bytes.message);
    CHECK(no_local_bytes.status == Status::invalid_launch);
    CHECK(no_local_bytes.message ==
          "line 2: add2 has a __local pointer parameter, which receives the launch's dynamic shared memory, but the "
          "launch gives it 0 bytes: give the bytes as the third <<<>>> value, e.g. <<<grid, block, 256 * 4>>>");

    const Evaluation never_holds = evaluator->evaluate(task, opencl(R"(// @tune BLOCK = 128 in {64, 128}
// @require N % BLOCK == 0
// @launch add2<<<ceil_div(N, BLOCK), BLOCK>>>(y, a, b, N)
__kernel void add2(__global float* out, __global const float* x, __global const float* z, int n) {
  const int i = get_global_id(0);
  if (i < n) out[i] = 2.0f * x[i] + z[i];
}
)"));
    INFO(never_holds.message);
    CHECK(never_holds.status == Status::invalid_launch);
    CHECK(never_holds.message.rfind("line 2: the plan's own requirement `@require N % BLOCK == 0` does not hold "
                                    "under the sizes \"one\" on ", 0) == 0);
    CHECK(test::contains(never_holds.message, "(N = 1, BLOCK = 128): change the @tune values or the plan so that "
                                              "it holds, or drop the @require"));

    const Evaluation refused = evaluator->evaluate(task, opencl(R"(// A work-group size fixed in the source.
// @launch add2<<<ceil_div(N, 128), 128>>>(y, a, b, N)
__kernel __attribute__((reqd_work_group_size(64, 1, 1)))
void add2(__global float* out, __global const float* x, __global const float* z, int n) {
  const int i = get_global_id(0);
  if (i < n) out[i] = 2.0f * x[i] + z[i];
}
)"));
    INFO(refused.message);
    CHECK(refused.status == Status::invalid_launch);
    CHECK(refused.message.rfind("line 2: the device refused the launch of add2: kernel 'add2' with grid (", 0) == 0);
    CHECK(test::contains(refused.message, "and block (128, 1, 1): clEnqueueNDRangeKernel failed: "
                                          "CL_INVALID_WORK_GROUP_SIZE"));

    Candidate binary = opencl(std::string("\x7f" "ELF\x02\x01\x01\0\0\0", 10));
    const Evaluation not_text = evaluator->evaluate(task, binary);
    CHECK(not_text.status == Status::compile_error);
    CHECK(not_text.message == "the candidate's source is not a text file (a NUL byte at offset 7): give the "
                              "kernel's source code");
  }
  SECTION("a two-kernel plan with a workspace reports each kernel's share") {
    const Evaluation evaluation = evaluator->evaluate(task, opencl(R"(// Doubling into a workspace, then adding.
// @workspace twice: float32[N]
// @launch double_it<<<ceil_div(N, 64), 64>>>(a, twice, N)
// @launch add_it<<<ceil_div(N, 64), 64>>>(twice, b, y, N)
__kernel void double_it(__global const float* a, __global float* twice, int n) {
  const int i = get_global_id(0);
  if (i < n) twice[i] = 2.0f * a[i];
}
__kernel void add_it(__global const float* twice, __global const float* b, __global float* y, int n) {
  const int i = get_global_id(0);
  if (i < n) y[i] = twice[i] + b[i];
}
)"));
    INFO(evaluation.message);
    REQUIRE(evaluation.status == Status::ok);
    REQUIRE(evaluation.timing->kernels.size() == 2);
    CHECK(evaluation.timing->kernels[0].name == "double_it");
    CHECK(evaluation.timing->kernels[1].name == "add_it");
    CHECK(evaluation.timing->kernels[0].share + evaluation.timing->kernels[1].share == Approx(1.0));
    CHECK(evaluation.compile.kernels.size() == 2);
  }
  SECTION("@specialize compiles each size configuration with its sizes as macros") {
    const Evaluation evaluation = evaluator->evaluate(task, opencl(R"(// @specialize
// @tune BLOCK = 32 in {32, 64}
// @launch add2<<<ceil_div(N, BLOCK), BLOCK>>>(y, a, b)
__kernel void add2(__global float* out, __global const float* x, __global const float* z) {
  const int i = get_global_id(0);
  if (i < KS_N) out[i] = 2.0f * x[i] + z[i];
}
)"));
    INFO(evaluation.message);
    CHECK(evaluation.status == Status::ok);
  }
  SECTION("reading an uninitialised workspace is flagged as nondeterministic") {
    // The workspace holds each run's poison, a different byte in the two runs (drawn from 0x7C-0x7F and
    // 0xFC-0xFF): the output moves by up to a relative 7e-6 with it, within the tolerance but not bitwise
    // stable.
    const Evaluation evaluation = evaluator->evaluate(task, opencl(R"(// @workspace junk: float32[1]
// @launch add2<<<ceil_div(N, 128), 128>>>(y, a, b, junk, N)
__kernel void add2(__global float* out, __global const float* x, __global const float* z,
                   __global const float* junk, int n) {
  const int i = get_global_id(0);
  if (i < n) {
    const float v = 2.0f * x[i] + z[i];
    const uint byte = as_uint(junk[0]) & 0xFFu;
    const float which = (float)((byte & 3u) + ((byte >> 7) << 2));  /* 0..7, one per pattern */
    out[i] = v * (1.0f + 1e-6f * which);
  }
}
)"));
    INFO(evaluation.message);
    CHECK(evaluation.status == Status::ok);
    CHECK_FALSE(evaluation.integrity.deterministic);
    CHECK(std::find(evaluation.integrity.flags.begin(), evaluation.integrity.flags.end(), "nondeterministic") !=
          evaluation.integrity.flags.end());
  }
  SECTION("a suspicious speedup is measured again in strict mode") {
    EvaluatorOptions suspicious = suspicious_options();
    // Samples that never meet the target, a maximum and a budget far away: only the re-measurement's own
    // count ends sampling.
    suspicious.noise_target = 1e-12;
    suspicious.max_samples = 1000;
    suspicious.strict_min_samples = 12;
    suspicious.strict_budget_seconds = 30.0;
    auto strict_evaluator = create_evaluator(suspicious);
    const Evaluation evaluation = strict_evaluator->evaluate(task, opencl(kCorrect));
    INFO(evaluation.message);
    REQUIRE(evaluation.status == Status::ok);
    CHECK(evaluation.integrity.remeasured);
    CHECK(evaluation.integrity.remeasured_speedup > 0.0);
    CHECK(evaluation.speedup == evaluation.integrity.remeasured_speedup);
    CHECK(evaluation.timing->mode == "strict");
    // Strict rules, but strict_min_samples samples on each side: not a whole strict budget.
    CHECK(evaluation.timing->samples == suspicious.strict_min_samples);
    REQUIRE(evaluation.baseline_timing);
    CHECK(evaluation.baseline_timing->samples == suspicious.strict_min_samples);
    const auto& flags = evaluation.integrity.flags;
    CHECK(std::find(flags.begin(), flags.end(), "speedup_above_threshold") != flags.end());
  }
  SECTION("a task's re-measured baseline outlives evaluations of nine other tasks") {
    // The harness kept 8 tasks' references, first in first out: a run cycling through more tasks than that
    // loaded each reference again and timed it again for every suspicious speedup.
    auto suspicious_evaluator = create_evaluator(suspicious_options());
    const Evaluation first = suspicious_evaluator->evaluate(task, opencl(kCorrect));
    INFO(first.message);
    REQUIRE(first.status == Status::ok);
    REQUIRE(first.integrity.remeasured);
    for (int other = 0; other < 9; ++other) {
      Task renamed = task;
      renamed.name = fmt::format("{}_other_{}", task.name, other);  // another content key
      REQUIRE(suspicious_evaluator->evaluate(renamed, opencl(kCorrect)).status == Status::ok);
    }
    const Evaluation again = suspicious_evaluator->evaluate(task, opencl(kCorrect));
    INFO(again.message);
    REQUIRE(again.status == Status::ok);
    REQUIRE(again.integrity.remeasured);
    // The same re-measurement (a timing taken afresh would not repeat every sample's statistics).
    CHECK(again.baseline_timing->median_ms == first.baseline_timing->median_ms);
    CHECK(again.baseline_timing->mean_ms == first.baseline_timing->mean_ms);
    CHECK(again.baseline_timing->samples == first.baseline_timing->samples);
    CHECK(again.stage_seconds.at("reference") < first.stage_seconds.at("reference"));
  }
  SECTION("a reference the device refuses to launch names the task, its file and the plan's line") {
    Task refused = task;
    refused.name = "refused_reference";
    refused.references["opencl"].source = R"(// A work-group size fixed in the source.
// @launch scale_add<<<ceil_div(N, 128), 128>>>(a, b, y, N)
__kernel __attribute__((reqd_work_group_size(64, 1, 1)))
void scale_add(__global const float* a, __global const float* b, __global float* y, int N) {
  const int i = get_global_id(0);
  if (i < N) y[i] = 2.0f * a[i] + b[i];
}
)";
    const std::string message = test::error_of([&] { evaluator->evaluate(refused, opencl(kCorrect)); });
    INFO(message);
    CHECK(message.rfind("task refused_reference: its opencl reference (" + task.references.at("opencl").path +
                            ") failed on the sizes '",
                        0) == 0);
    CHECK(test::contains(message, "inputs: line 2: the device refused the launch of scale_add: kernel 'scale_add' "
                                  "with grid ("));
    CHECK(test::contains(message, "CL_INVALID_WORK_GROUP_SIZE (-54); fix the reference, or the sizes in the manifest"));
  }
  SECTION("a task whose reference output is near-constant is rejected") {
    Task constant = task;
    constant.name = "constant_output";
    constant.references["opencl"].source = R"(// @launch one<<<ceil_div(N, 64), 64>>>(a, b, y, N)
__kernel void one(__global const float* a, __global const float* b, __global float* y, int N) {
  const int i = get_global_id(0);
  if (i < N) y[i] = 1.0f + 0.0f * a[i];
}
)";
    try {
      evaluator->evaluate(constant, opencl(kCorrect));
      FAIL("a near-constant reference was accepted");
    } catch (const ValidationError& e) {
      CHECK(std::string(e.what()).find("near-constant") != std::string::npos);
    }
  }
}

TEST_CASE("the worker contains endless loops and crashes and restarts for the next candidate", "[harness][opencl][worker]") {
  if (!opencl_available()) {
    WARN("skipped: no OpenCL device: " << opencl_reason());
    return;
  }
  const Task task = small_task();
  EvaluatorOptions options = fast_options(true);
  auto evaluator = create_evaluator(options);

  const Evaluation first = evaluator->evaluate(task, opencl(kCorrect));
  INFO(first.message);
  REQUIRE(first.status == Status::ok);

  // A short deadline for the endless loop only.
  EvaluatorOptions short_deadline = options;
  short_deadline.deadline_seconds = 3.0;
  auto hasty = create_evaluator(short_deadline);
  const auto started = std::chrono::steady_clock::now();
  const Evaluation endless = hasty->evaluate(task, opencl(kEndless));
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  INFO(endless.message);
  CHECK(endless.status == Status::timeout);
  CHECK(endless.fitness == failure_fitness(Status::timeout));
  CHECK(seconds < 60.0);
  const Evaluation after_timeout = hasty->evaluate(task, opencl(kCorrect));
  INFO(after_timeout.message);
  CHECK(after_timeout.status == Status::ok);

  const Evaluation crash = evaluator->evaluate(task, opencl(kCrash));
  INFO(crash.message);
  CHECK(crash.status == Status::crashed);
  CHECK(crash.message.find("SIG") != std::string::npos);
  const Evaluation after_crash = evaluator->evaluate(task, opencl(kCorrect));
  INFO(after_crash.message);
  CHECK(after_crash.status == Status::ok);

  // Candidate problems that do not kill the worker keep it.
  const Evaluation wrong = evaluator->evaluate(task, opencl(kWrong));
  CHECK(wrong.status == Status::incorrect);
  const Evaluation compile_error = evaluator->evaluate(task, opencl(kCompileError));
  CHECK(compile_error.status == Status::compile_error);
  CHECK(evaluator->evaluate(task, opencl(kCorrect)).status == Status::ok);
}

TEST_CASE("evaluate_batch returns one evaluation per candidate in order", "[harness][opencl][worker]") {
  if (!opencl_available()) {
    WARN("skipped: no OpenCL device: " << opencl_reason());
    return;
  }
  const Task task = small_task();
  auto evaluator = create_evaluator(fast_options(true));
  const auto evaluations = evaluator->evaluate_batch(task, {opencl(kCorrect), opencl(kCompileError), opencl(kWrong)});
  REQUIRE(evaluations.size() == 3);
  CHECK(evaluations[0].status == Status::ok);
  CHECK(evaluations[1].status == Status::compile_error);
  CHECK(evaluations[2].status == Status::incorrect);
  CHECK(evaluations[0].candidate_id == opencl(kCorrect).id());
}

TEST_CASE("evaluator options are validated", "[harness]") {
  EvaluatorOptions options;
  options.mode = "fast";
  REQUIRE_THROWS_AS(create_evaluator(options), ValidationError);
  options.mode = "screen";
  options.min_samples = 20;
  options.max_samples = 10;
  REQUIRE_THROWS_AS(create_evaluator(options), ValidationError);
}

TEST_CASE("compile jobs carry tunables and, when specialised, the sizes", "[harness]") {
  const Task task = small_task();
  const LaunchPlan plan = LaunchPlan::parse(R"(// @tune BLOCK = 128 in {64, 128}
// @specialize
// @launch add2<<<ceil_div(N, BLOCK), BLOCK>>>(y, a, b, N)
)");
  const auto jobs = detail::compile_jobs(task, plan, "sm_90", 5.0);
  REQUIRE(jobs.size() == 3);  // the timing sizes and two check sizes
  for (const auto& job : jobs) {
    CHECK_FALSE(job.config.empty());
    CHECK(job.options.target == "sm_90");
    CHECK(job.options.kernels == std::vector<std::string>{"add2"});
    const auto& defines = job.options.defines;
    CHECK(std::find(defines.begin(), defines.end(), std::make_pair(std::string("BLOCK"), std::string("128"))) !=
          defines.end());
  }
  CHECK(std::find(jobs[0].options.defines.begin(), jobs[0].options.defines.end(),
                  std::make_pair(std::string("KS_N"), std::string("4096"))) != jobs[0].options.defines.end());
}
