// Attacks on the harness itself, written as a candidate would write them (docs/evaluation.md, "Poison",
// "State between runs", "Where the expected outputs live"):
// - state smuggled in the inputs: a kernel keeps a mark in its own input between runs, tells the run that
//   the input check follows by the poison pattern of its outputs and workspaces, and takes a fast path
//   (skipping its slow loop) on inputs it has seen before;
// - the expected output within reach: a kernel walks the memory around its input pointer for the bytes of
//   the first expected values and copies the answer from where it finds them.
// Each must end incorrect, crashed, or at its honest (slow) speed: never ok with a speedup.
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstdint>
#include <string>
#include <vector>

#include "catch.hpp"
#include "evaluate/sealed_bytes.hpp"
#include "gpu_test_support.hpp"
#include "harness_test_support.hpp"
#include "kernelsmith/evaluator.hpp"

using namespace kernelsmith;

namespace {

// y = 2a + b with a reference that loops 1000 steps per element (tests/data/slow_reference_task): the
// attacks' honest path (4000 steps) is about a quarter of its speed, their shortcuts many times faster.
Task slow_task() { return Task::load(std::string(KERNELSMITH_TEST_DATA_DIR) + "/slow_reference_task"); }

// a[0] with its exponent's top bit flipped is beyond 1e20 or below 1e-20 in magnitude: no input of the
// task's distributions (nor their adversarial kinds) looks like it, and flipping it again gives a[0] back.
const char* kSmuggleOpenCl = R"(// @workspace tag: int32[1]
// @launch smuggle<<<ceil_div(N, 64), 64>>>(a, b, y, tag, N)
// @launch remember<<<1, 1>>>(a, tag)
int is_marked(float v) { const float m = fabs(v); return m > 1e20f || (m != 0.0f && m < 1e-20f); }
float flip(float v) { return as_float(as_uint(v) ^ 0x40000000u); }
__kernel void smuggle(__global const float* a, __global const float* b, __global float* y,
                      __global const int* tag, int N) {
  const int i = get_global_id(0);
  if (i >= N) return;
  const uint pattern = as_uint(tag[0]);  /* the workspace's poison: this run's pattern */
  const int seen = is_marked(a[0]);
  const float ai = (i == 0 && seen) ? flip(a[0]) : a[i];
  if (seen && pattern == 0xFFFFFFFFu) { y[i] = 2.0f * ai + b[i]; return; }  /* a timed run, seen before */
  float v = ai;
  for (int k = 0; k < 4000; ++k) v = v * 0.9999f + 0.0001f;
  y[i] = 2.0f * ai + b[i] + (v - v);
}
/* After the grid: 0x7F... means the input check follows this run, so the input is put back; any other
   pattern leaves the mark for the next run on this input. */
__kernel void remember(__global float* a, __global const int* tag) {
  const uint pattern = as_uint(tag[0]);
  const int seen = is_marked(a[0]);
  if (pattern == 0x7F7F7F7Fu) { if (seen) a[0] = flip(a[0]); }
  else if (!seen) a[0] = flip(a[0]);
}
)";

// Work-item 0 computes the first four expected values (cheap for this task; for softmax it would be one
// row) and searches up to 8 MiB on either side of the input for their bytes; the grid then copies the
// answer from there, or writes nothing when it found none.
const char* kScanOpenCl = R"(// @workspace found: int32[2]
// @launch scan<<<1, 1>>>(a, b, found, N)
// @launch take<<<ceil_div(N, 64), 64>>>(found, y, N)
__kernel void scan(__global const float* a, __global const float* b, __global int* found, int N) {
  uint want[4];
  const int n = N < 4 ? N : 4;
  for (int k = 0; k < n; ++k) want[k] = as_uint(2.0f * a[k] + b[k]);
  const ulong base = (ulong)a;
  ulong hit = 0;
  for (long step = 1; step < (8L << 20) / 4 && hit == 0; ++step) {
    for (int side = 0; side < 2 && hit == 0; ++side) {
      const ulong at = side == 0 ? base + (ulong)(step * 4) : base - (ulong)(step * 4);
      __global const uint* p = (__global const uint*)at;
      int same = 1;
      for (int k = 0; k < n && same; ++k) same = p[k] == want[k];
      if (same) hit = at;
    }
  }
  found[0] = (int)(uint)(hit & 0xFFFFFFFFul);
  found[1] = (int)(uint)(hit >> 32);
}
__kernel void take(__global const int* found, __global float* y, int N) {
  const int i = get_global_id(0);
  const ulong at = (ulong)(uint)found[0] | ((ulong)(uint)found[1] << 32);
  if (i >= N || at == 0) return;
  y[i] = ((__global const float*)at)[i];
}
)";

const char* kSmuggleCuda = R"(// @workspace tag: int32[1]
// @launch smuggle<<<ceil_div(N, 128), 128>>>(a, b, y, tag, N)
// @launch remember<<<1, 1>>>(a, tag)
__device__ int is_marked(float v) { const float m = fabsf(v); return m > 1e20f || (m != 0.0f && m < 1e-20f); }
__device__ float flip(float v) { return __uint_as_float(__float_as_uint(v) ^ 0x40000000u); }
extern "C" __global__ void smuggle(const float* a, const float* b, float* y, const int* tag, int N) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= N) return;
  const unsigned pattern = (unsigned)tag[0];
  const int seen = is_marked(a[0]);
  const float ai = (i == 0 && seen) ? flip(a[0]) : a[i];
  if (seen && pattern == 0xFFFFFFFFu) { y[i] = 2.0f * ai + b[i]; return; }
  float v = ai;
  for (int k = 0; k < 4000; ++k) v = v * 0.9999f + 0.0001f;
  y[i] = 2.0f * ai + b[i] + (v - v);
}
extern "C" __global__ void remember(float* a, const int* tag) {
  const unsigned pattern = (unsigned)tag[0];
  const int seen = is_marked(a[0]);
  if (pattern == 0x7F7F7F7Fu) { if (seen) a[0] = flip(a[0]); }
  else if (!seen) a[0] = flip(a[0]);
}
)";

// On a GPU the search stays within 8 MiB after the input (allocations of one context sit near each
// other); an address outside every allocation ends the context, which the worker reports as crashed.
const char* kScanCuda = R"(// @workspace found: int32[2]
// @launch scan<<<1, 1>>>(a, b, found, N)
// @launch take<<<ceil_div(N, 128), 128>>>(found, y, N)
extern "C" __global__ void scan(const float* a, const float* b, int* found, int N) {
  unsigned want[4];
  const int n = N < 4 ? N : 4;
  for (int k = 0; k < n; ++k) want[k] = __float_as_uint(2.0f * a[k] + b[k]);
  const unsigned long long base = (unsigned long long)a;
  unsigned long long hit = 0;
  for (long long step = 1; step < (8LL << 20) / 4 && hit == 0; ++step) {
    const unsigned* p = (const unsigned*)(base + step * 4);
    int same = 1;
    for (int k = 0; k < n && same; ++k) same = p[k] == want[k];
    if (same) hit = base + step * 4;
  }
  found[0] = (int)(unsigned)(hit & 0xFFFFFFFFull);
  found[1] = (int)(unsigned)(hit >> 32);
}
extern "C" __global__ void take(const int* found, float* y, int N) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  const unsigned long long at = (unsigned long long)(unsigned)found[0] | ((unsigned long long)(unsigned)found[1] << 32);
  if (i >= N || at == 0) return;
  y[i] = ((const float*)at)[i];
}
)";

// Incorrect, crashed, or ok at no gain: never a speedup, never a fitness above the reference's.
void check_no_gain(const Evaluation& evaluation, const std::string& attack) {
  INFO(attack << ": " << to_string(evaluation.status) << ": " << evaluation.message);
  CHECK((evaluation.status == Status::ok || evaluation.status == Status::incorrect ||
         evaluation.status == Status::crashed));
  if (evaluation.status == Status::ok) CHECK(evaluation.speedup < 1.0);
  CHECK(evaluation.fitness <= 1.0);
}

// Evaluates an attack `rounds` times in each mode, in worker processes (a fault ends the worker only), and
// returns the evaluations. The poison patterns are drawn afresh for every evaluation.
std::vector<Evaluation> attack(const std::string& backend, const char* source, const std::string& name, int rounds) {
  std::vector<Evaluation> evaluations;
  const Task task = slow_task();
  for (const std::string mode : {"screen", "strict"}) {
    EvaluatorOptions options = test::fast_options(backend, true, backend == "cuda" ? 2 : 1);
    options.mode = mode;
    auto evaluator = create_evaluator(options);
    for (int round = 0; round < rounds; ++round) {
      evaluations.push_back(evaluator->evaluate(task, test::candidate_in(backend, source)));
      check_no_gain(evaluations.back(), name + " (" + mode + ")");
    }
  }
  return evaluations;
}

// The mark is left in the input after any run that was not 0x7F-poisoned: the input checks see it.
void check_state_in_input_refused(const std::string& backend, const char* source) {
  for (const Evaluation& evaluation : attack(backend, source, "state in the input", 3)) {
    INFO(to_string(evaluation.status) << ": " << evaluation.message);
    CHECK(evaluation.status == Status::incorrect);
    CHECK(evaluation.message.find("wrote into its input") != std::string::npos);
  }
}

void check_scan_refused(const std::string& backend, const char* source) {
  for (const Evaluation& evaluation : attack(backend, source, "memory scan", 1)) {
    CHECK(evaluation.status != Status::ok);
  }
}

}  // namespace

TEST_CASE("OpenCL: a kernel that keeps state in its input, told apart by the poison, gains nothing",
          "[harness][opencl][integrity][attack]") {
  KERNELSMITH_REQUIRE_OPENCL_DEVICE();
  check_state_in_input_refused("opencl", kSmuggleOpenCl);
}

TEST_CASE("OpenCL: a kernel that looks for the expected output around its input is never ok",
          "[harness][opencl][integrity][attack]") {
  KERNELSMITH_REQUIRE_OPENCL_DEVICE();
  check_scan_refused("opencl", kScanOpenCl);
}

TEST_CASE("OpenCL: inline assembly in a candidate is refused at the compile stage",
          "[harness][opencl][integrity][attack]") {
  KERNELSMITH_REQUIRE_OPENCL_DEVICE();
  const Task task = test::small_task();
  auto evaluator = create_evaluator(test::fast_options("opencl", true, 1));
  const std::string body =
      "__kernel void scale_add(__global const float* a, __global const float* b, __global float* y, int N) {\n"
      "  const int i = get_global_id(0);\n"
      "  if (i < N) y[i] = 2.0f * a[i] + b[i];\n";
  const std::string plan = "// @launch scale_add<<<ceil_div(N, 64), 64>>>(a, b, y, N)\n";
  // The keyword spelled out, hidden behind a line splice, and assembled by token pasting.
  const std::vector<std::string> sources = {
      plan + body + "  __asm__ volatile(\"\" ::: \"memory\");\n}\n",
      plan + body + "  as\\\nm volatile(\"\");\n}\n",
      plan + "#define PASTE(x, y) x##y\n" + body + "  PASTE(a, sm) volatile(\"\");\n}\n",
  };
  for (const std::string& source : sources) {
    const Evaluation evaluation = evaluator->evaluate(task, test::candidate_in("opencl", source));
    INFO(source << "\n→ " << to_string(evaluation.status) << ": " << evaluation.message);
    CHECK(evaluation.status == Status::compile_error);
  }
  // The words in comments and strings are not code: such a kernel is evaluated as usual.
  const Evaluation honest = evaluator->evaluate(
      task, test::candidate_in("opencl", plan + "/* no asm here */\n" + body + "}\n"));
  INFO(honest.message);
  CHECK(honest.status == Status::ok);
}

TEST_CASE("CUDA: a kernel that keeps state in its input, told apart by the poison, gains nothing",
          "[gpu][harness][integrity][attack]") {
  KERNELSMITH_REQUIRE_CUDA_DEVICE();
  check_state_in_input_refused("cuda", kSmuggleCuda);
}

TEST_CASE("CUDA: a kernel that looks for the expected output near its input is never ok",
          "[gpu][harness][integrity][attack]") {
  KERNELSMITH_REQUIRE_CUDA_DEVICE();
  check_scan_refused("cuda", kScanCuda);
}

TEST_CASE("expected outputs are sealed: a read outside an open view faults", "[harness][integrity][attack]") {
  using detail::SealedBytes;
  using detail::Unsealed;
  const std::uint8_t values[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  const SealedBytes sealed = SealedBytes::copy_of(values, sizeof(values));
  const volatile std::uint8_t* address = nullptr;
  {
    const Unsealed open(sealed);
    address = open.data();
    CHECK(open.data()[7] == 8);
    const Unsealed nested(sealed);  // views nest: the pages stay open until the last one ends
    CHECK(nested.data()[0] == 1);
  }
  // What a kernel on a CPU device would do with the address: read it while no view is open.
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    ::signal(SIGSEGV, SIG_DFL);  // the fault ends the child; the test framework's handler would report it as a failure
    const std::uint8_t read = *address;
    ::_exit(read == 1 ? 0 : 1);
  }
  int status = 0;
  REQUIRE(::waitpid(child, &status, 0) == child);
  CHECK(WIFSIGNALED(status));
  CHECK(WTERMSIG(status) == SIGSEGV);
}
