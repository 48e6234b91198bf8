// The worker protocol through the real kernelsmith-worker process on the OpenCL backend (PoCL on the CI
// machine): a task travels to a worker once and is named by its content key afterwards; a worker that
// was killed, or that evicted the task from its cache, gets the task again; tasks that differ only in
// their data cases' bytes never stand in for each other.
#include <signal.h>
#include <sys/wait.h>

#include <random>
#include <string>
#include <vector>

#include "catch.hpp"
#include "evaluate/task_key.hpp"
#include "evaluate/worker.hpp"
#include "harness_test_support.hpp"
#include "kernelsmith/device.hpp"
#include "kernelsmith/evaluator.hpp"
#include "kernelsmith/task.hpp"

using namespace kernelsmith;
using kernelsmith::detail::WorkerClient;
using kernelsmith::detail::WorkerSettings;

namespace {

bool skipped_without_opencl() {
  for (const auto& backend : devices()) {
    if (backend.name == "opencl" && backend.available) return false;
  }
  WARN("skipped: no OpenCL device available");
  return true;
}

// y = 2 * a + b, written differently from the reference.
const char* kCorrect = R"(// @launch add2<<<ceil_div(N, 128), 128>>>(y, a, b, N)
__kernel void add2(__global float* out, __global const float* x, __global const float* z, int n) {
  const int i = get_global_id(0);
  if (i < n) out[i] = x[i] + x[i] + z[i];
}
)";

std::vector<float> random_floats(std::size_t count, std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> values(count);
  for (auto& v : values) v = normal(rng);
  return values;
}

TensorRef host_ref(std::vector<float>& values) {
  return TensorRef{DType::float32, {static_cast<std::int64_t>(values.size())}, values.data(), false};
}

/// The harness task with one data case of `elements` values per input; with `expected_offset` not 0 the
/// case also gives expected outputs, off by that much (so a correct candidate fails on it).
Task task_with_case(std::size_t elements, std::uint32_t seed, float expected_offset = 0.0f) {
  Task task = test::small_task();
  std::vector<float> a = random_floats(elements, seed);
  std::vector<float> b = random_floats(elements, seed + 1);
  if (expected_offset == 0.0f) {
    task.add_case({{"a", host_ref(a)}, {"b", host_ref(b)}});
  } else {
    std::vector<float> y(elements);
    for (std::size_t i = 0; i < elements; ++i) y[i] = 2.0f * a[i] + b[i] + expected_offset;
    task.add_case({{"a", host_ref(a)}, {"b", host_ref(b)}}, {{"y", host_ref(y)}});
  }
  return task;
}

WorkerSettings opencl_worker(int task_cache_entries = 8) {
  WorkerSettings settings;
  settings.backend = "opencl";
  settings.cache_dir = test::test_cache_dir();
  settings.task_cache_entries = task_cache_entries;
  return settings;
}

/// Evaluates the correct candidate with the tests' fast options.
Evaluation evaluate_correct(WorkerClient& client, const Task& task) {
  static const EvaluatorOptions options = test::fast_options("opencl", true, 1);
  return client.evaluate(task, test::candidate_in("opencl", kCorrect), {}, options);
}

bool checked_user_case(const Evaluation& evaluation) {
  if (!evaluation.correctness) return false;
  for (const auto& check : evaluation.correctness->checks) {
    if (check.inputs == "user case 0") return true;
  }
  return false;
}

// Waits until a killed child has fully exited, without reaping it (the client does that). Its main
// thread shows as a zombie earlier, while the driver's threads still exit.
bool wait_until_dead(pid_t pid) {
  siginfo_t info{};
  return ::waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOWAIT) == 0;
}

}  // namespace

TEST_CASE("task content keys follow the data cases' bytes and are stable", "[worker]") {
  const Task first = task_with_case(1000, 1);
  const Task same = task_with_case(1000, 1);
  const Task other_bytes = task_with_case(1000, 2);
  const Task with_expected = task_with_case(1000, 1, 0.5f);
  const std::string key = detail::task_content_key(first);
  CHECK(key.size() == 64);
  CHECK(detail::task_content_key(first) == key);
  CHECK(detail::task_content_key(same) == key);
  CHECK(detail::task_content_key(Task::from_json(first.to_json())) == key);  // as the worker parses it
  CHECK(detail::task_content_key(other_bytes) != key);
  CHECK(detail::task_content_key(with_expected) != key);
  CHECK(detail::task_content_key(test::small_task()) != key);
}

TEST_CASE("a task with a data case is sent to the worker once for many evaluations", "[worker][opencl]") {
  if (skipped_without_opencl()) return;
  const Task task = task_with_case(1 << 16, 3);  // 512 KiB of inputs, about 700 KB as base64
  const std::size_t body_bytes = task.to_json().size();
  WorkerClient client(opencl_worker());
  constexpr int kEvaluations = 6;
  for (int i = 0; i < kEvaluations; ++i) {
    const Evaluation evaluation = evaluate_correct(client, task);
    INFO("evaluation " << i << ": " << evaluation.message);
    REQUIRE(evaluation.status == Status::ok);
    CHECK(checked_user_case(evaluation));
  }
  CHECK(client.starts() == 1);
  CHECK(client.task_sends() == 1);
  CHECK(client.unknown_task_replies() == 0);
  // Every request but one is small: all of them together stay well below two copies of the task.
  INFO("bytes sent " << client.bytes_sent() << ", task body " << body_bytes);
  CHECK(client.bytes_sent() > static_cast<std::int64_t>(body_bytes));
  CHECK(client.bytes_sent() < static_cast<std::int64_t>(body_bytes + body_bytes / 2));

  // A task that differs only in its data case's expected values has its own key: the worker never
  // evaluates against the other one's data.
  const Task wrong_expectations = task_with_case(1 << 16, 3, 0.5f);
  const Evaluation failing = evaluate_correct(client, wrong_expectations);
  INFO(failing.message);
  CHECK(failing.status == Status::incorrect);
  REQUIRE(failing.correctness);
  CHECK(failing.correctness->message.find("user case 0") != std::string::npos);
  CHECK(client.task_sends() == 2);
  CHECK(evaluate_correct(client, task).status == Status::ok);
  CHECK(client.task_sends() == 2);
}

TEST_CASE("a worker killed between evaluations is restarted and sent the task again", "[worker][opencl]") {
  if (skipped_without_opencl()) return;
  const Task task = task_with_case(4096, 5);
  WorkerClient client(opencl_worker());
  REQUIRE(evaluate_correct(client, task).status == Status::ok);
  const pid_t first_pid = client.pid();
  REQUIRE(first_pid > 0);
  REQUIRE(::kill(first_pid, SIGKILL) == 0);
  REQUIRE(wait_until_dead(first_pid));

  const Evaluation after = evaluate_correct(client, task);
  INFO(after.message);
  CHECK(after.status == Status::ok);  // not blamed on the candidate
  CHECK(checked_user_case(after));
  CHECK(client.starts() == 2);
  CHECK(client.pid() != first_pid);
  CHECK(client.task_sends() == 2);
}

TEST_CASE("a worker that evicted a task answers unknown_task and is sent it again", "[worker][opencl]") {
  if (skipped_without_opencl()) return;
  const Task first = task_with_case(4096, 7);
  const Task second = task_with_case(4096, 8);
  WorkerClient client(opencl_worker(1));  // room for one task: the second evicts the first
  REQUIRE(evaluate_correct(client, first).status == Status::ok);
  REQUIRE(evaluate_correct(client, second).status == Status::ok);
  CHECK(client.task_sends() == 2);
  CHECK(client.unknown_task_replies() == 0);

  // The client believes the worker holds the first task; the worker answers that it does not.
  const Evaluation again = evaluate_correct(client, first);
  INFO(again.message);
  CHECK(again.status == Status::ok);
  CHECK(checked_user_case(again));
  CHECK(client.unknown_task_replies() == 1);
  CHECK(client.task_sends() == 3);
  CHECK(client.starts() == 1);  // handled inside the protocol, no restart
}
