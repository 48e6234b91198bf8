// Triton candidates end to end on a CUDA GPU, through the same evaluator and worker as CUDA ones: a
// correct kernel passes, a wrong, a partial, a hanging and an out-of-bounds one are classified as their
// CUDA twins are, a kernel with tensor descriptors (global scratch) runs, and every built-in task's Triton
// seed passes. Skipped, saying why, without a CUDA device or without triton.
#include "kernelsmith/config.hpp"

#if KERNELSMITH_ENABLE_CUDA

#include <algorithm>
#include <string>

#include "catch.hpp"
#include "gpu_test_support.hpp"
#include "harness_test_support.hpp"
#include "kernelsmith/evaluator.hpp"
#include "kernelsmith/task.hpp"
#include "kernelsmith/triton.hpp"

using namespace kernelsmith;

namespace {

std::string triton_gpu_unavailable_reason() {
  const std::string cuda = test::cuda_unavailable_reason();
  if (!cuda.empty()) return cuda;
  const TritonStatus status = triton_status();
  return status.available ? std::string() : "triton cannot compile here: " + status.reason;
}

Candidate triton(const std::string& body, const std::string& plan) {
  return test::candidate_in("triton", plan + "\nimport triton\nimport triton.language as tl\n\n\n" + body);
}

const char* kPlan = "# @launch scale_add[ceil_div(N, 256)](a, b, y, N, BLOCK=256) num_warps=4";

std::string kernel_body(const std::string& statement) {
  return R"(@triton.jit
def scale_add(a_ptr, b_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    a = tl.load(a_ptr + offsets, mask=mask)
    b = tl.load(b_ptr + offsets, mask=mask)
)" + statement + "\n";
}

const std::string kCorrect = kernel_body("    tl.store(y_ptr + offsets, 2.0 * a + b, mask=mask)");
const std::string kWrong = kernel_body("    tl.store(y_ptr + offsets, 2.0 * a - b, mask=mask)");
// Leaves the last element of every output unwritten.
const std::string kUnwritten = kernel_body("    tl.store(y_ptr + offsets, 2.0 * a + b, mask=offsets < n - 1)");
// 16 TB past y: inside the address space, outside any allocation.
const std::string kOutOfBounds =
    kernel_body("    tl.store(y_ptr + offsets.to(tl.int64) + n.to(tl.int64) * 1000000000, 2.0 * a + b, mask=mask)");
// Random inputs are never NaN: the loop never ends.
const std::string kEndless = R"(@triton.jit
def scale_add(a_ptr, b_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    a = tl.load(a_ptr + offsets, mask=mask, other=0.0)
    total = a
    while tl.sum(total) == tl.sum(total):
        total = total + 1.0
        tl.store(y_ptr + offsets, total, mask=mask)
)";

const char* kDescriptorPlan = "# @launch scale_add[ceil_div(N, 256)](a, b, y, N, BLOCK=256) num_warps=4";
const std::string kDescriptors = R"(@triton.jit
def scale_add(a_ptr, b_ptr, y_ptr, n, BLOCK: tl.constexpr):
    start = tl.program_id(0) * BLOCK
    a_desc = tl.make_tensor_descriptor(a_ptr, shape=[n], strides=[1], block_shape=[BLOCK])
    b_desc = tl.make_tensor_descriptor(b_ptr, shape=[n], strides=[1], block_shape=[BLOCK])
    y_desc = tl.make_tensor_descriptor(y_ptr, shape=[n], strides=[1], block_shape=[BLOCK])
    y_desc.store([start], 2.0 * a_desc.load([start]) + b_desc.load([start]))
)";

// Every program reads a factor that program 0 writes: right only when program 0 runs first.
const char* kRacePlan =
    "# @workspace factor: float32[1]\n"
    "# @launch shared_factor[ceil_div(N, 128)](a, b, y, factor, N, BLOCK=128) num_warps=4";
const std::string kRace = R"(@triton.jit
def shared_factor(a_ptr, b_ptr, y_ptr, factor_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    if pid == 0:
        tl.store(factor_ptr, 2.0)
    tl.debug_barrier()
    factor = tl.load(factor_ptr, volatile=True)
    offsets = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    a = tl.load(a_ptr + offsets, mask=mask)
    b = tl.load(b_ptr + offsets, mask=mask)
    tl.store(y_ptr + offsets, factor * a + b, mask=mask)
)";

bool has_flag(const Evaluation& evaluation, const std::string& flag) {
  const auto& flags = evaluation.integrity.flags;
  return std::find(flags.begin(), flags.end(), flag) != flags.end();
}

}  // namespace

TEST_CASE("The schedule check reverses a Triton candidate's program order", "[gpu][triton][race]") {
  KERNELSMITH_SKIP_WHEN(triton_gpu_unavailable_reason());
  const Task task = test::small_task();
  // As tests/cpp/test_race_check.cpp does for CUDA: the race is found by every evaluation with the check
  // (it may be found without it too, when the programs happen to run out of order).
  constexpr int kEvaluations = 3;
  const auto detections = [&](bool schedule_check) {
    int found = 0;
    for (int seed = 1; seed <= kEvaluations; ++seed) {
      EvaluatorOptions options = test::fast_options("cuda", true, 2);
      options.seed = static_cast<std::uint64_t>(seed);
      options.schedule_check = schedule_check;
      options.screen_schedule_check = schedule_check;
      const Evaluation evaluation = create_evaluator(options)->evaluate(task, triton(kRace, kRacePlan));
      if (evaluation.status == Status::incorrect) ++found;
    }
    return found;
  };
  const int without = detections(false);
  const int with = detections(true);
  INFO("Triton race: found in " << without << "/" << kEvaluations << " evaluations without the schedule check, "
                                << with << "/" << kEvaluations << " with it");
  CHECK(with == kEvaluations);
  CHECK(with >= without);

  EvaluatorOptions strict = test::fast_options("cuda", true, 2);
  strict.mode = "strict";
  const Evaluation honest = create_evaluator(strict)->evaluate(task, triton(kCorrect, kPlan));
  INFO(honest.message << "\n" << honest.compile.log);
  CHECK(honest.status == Status::ok);
  CHECK_FALSE(has_flag(honest, "race"));
  CHECK_FALSE(has_flag(honest, "schedule_check_unavailable"));
}

TEST_CASE("Triton candidates are evaluated and classified as CUDA ones are", "[gpu][triton][evaluator]") {
  KERNELSMITH_SKIP_WHEN(triton_gpu_unavailable_reason());
  const Task task = test::small_task();
  auto evaluator = create_evaluator(test::fast_options("cuda", true, 2));

  const Evaluation correct = evaluator->evaluate(task, triton(kCorrect, kPlan));
  INFO(correct.message << "\n" << correct.compile.log);
  REQUIRE(correct.status == Status::ok);
  REQUIRE(correct.timing.has_value());
  CHECK(correct.timing->median_ms > 0.0);
  REQUIRE_FALSE(correct.compile.kernels.empty());
  CHECK(correct.compile.kernels[0].registers > 0);
  CHECK(correct.compile.kernels[0].name.rfind("scale_add[", 0) == 0);

  const Evaluation wrong = evaluator->evaluate(task, triton(kWrong, kPlan));
  INFO(wrong.message);
  CHECK(wrong.status == Status::incorrect);

  const Evaluation unwritten = evaluator->evaluate(task, triton(kUnwritten, kPlan));
  INFO(unwritten.message);
  CHECK(unwritten.status == Status::incorrect);

  const Evaluation typo = evaluator->evaluate(task, triton(kernel_body("    tl.stor(y_ptr + offsets, a, mask=mask)"), kPlan));
  INFO(typo.message);
  CHECK(typo.status == Status::compile_error);
  CHECK(typo.compile.log.rfind("line 12: ", 0) == 0);

  const Evaluation bad_warps =
      evaluator->evaluate(task, triton(kCorrect, "# @launch scale_add[ceil_div(N, 256)](a, b, y, N, BLOCK=256) num_warps=3"));
  INFO(bad_warps.message);
  CHECK(bad_warps.status == Status::invalid_launch);

  const Evaluation descriptors = evaluator->evaluate(task, triton(kDescriptors, kDescriptorPlan));
  INFO(descriptors.message << "\n" << descriptors.compile.log);
  CHECK(descriptors.status == Status::ok);

  const Evaluation out_of_bounds = evaluator->evaluate(task, triton(kOutOfBounds, kPlan));
  INFO(out_of_bounds.message);
  CHECK(out_of_bounds.status == Status::crashed);

  EvaluatorOptions short_deadline = test::fast_options("cuda", true, 2);
  short_deadline.deadline_seconds = 5.0;
  auto hasty = create_evaluator(short_deadline);
  const Evaluation endless = hasty->evaluate(task, triton(kEndless, kPlan));
  INFO(endless.message);
  CHECK(endless.status == Status::timeout);

  const Evaluation after = evaluator->evaluate(task, triton(kCorrect, kPlan));
  INFO(after.message);
  CHECK(after.status == Status::ok);
  CHECK(after.compile.cached);
}

TEST_CASE("Every built-in task's Triton seed passes the evaluator", "[gpu][triton][tasks]") {
  KERNELSMITH_SKIP_WHEN(triton_gpu_unavailable_reason());
  EvaluatorOptions options;
  options.backend = "cuda";
  options.cache_dir = test::test_cache_dir();
  auto evaluator = create_evaluator(options);
  int seeds = 0;
  for (const auto& name : builtin_task_names()) {
    const Task task = Task::load(name);
    const auto seed = task.seeds.find("triton");
    if (seed == task.seeds.end()) continue;
    ++seeds;
    Candidate candidate = test::candidate_in("triton", seed->second.source);
    const Evaluation evaluation = evaluator->evaluate(task, candidate);
    INFO(name << ": " << evaluation.message << "\n" << evaluation.compile.log);
    CHECK(evaluation.status == Status::ok);
    if (evaluation.status == Status::ok) {
      WARN(name << " Triton seed: " << evaluation.timing->median_ms << " ms, " << evaluation.speedup
                << "x the reference, " << (evaluation.sol ? evaluation.sol->fraction * 100.0 : 0.0)
                << "% of the speed of light");
    }
  }
  WARN(seeds << " built-in tasks have a Triton seed");
  CHECK(seeds > 0);
}

#endif  // KERNELSMITH_ENABLE_CUDA
