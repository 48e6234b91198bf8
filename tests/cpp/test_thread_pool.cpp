// The thread pool shared by the evaluator's compile jobs and the output comparison: jobs and their
// results, parallel loops that cover every index once, nested use from the pool's own jobs while every
// thread is busy (no deadlock), and comparisons whose results do not depend on the number of threads.
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstring>
#include <future>
#include <memory>
#include <random>
#include <stdexcept>
#include <thread>
#include <vector>

#include "catch.hpp"
#include "evaluate/host_tensors.hpp"
#include "detail/thread_pool.hpp"
#include "kernelsmith/error.hpp"

using namespace kernelsmith;
using namespace kernelsmith::detail;

namespace {

// Waits for every future within `seconds`. A pool that deadlocked is leaked rather than joined, so that
// a failing test reports instead of hanging the test binary.
template <typename T>
bool all_ready(std::vector<std::future<T>>& futures, double seconds) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  for (auto& future : futures) {
    if (future.wait_until(until) != std::future_status::ready) return false;
  }
  return true;
}

Bytes random_floats(std::int64_t count, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  Bytes out(static_cast<std::size_t>(count) * 4);
  for (std::int64_t i = 0; i < count; ++i) {
    const float v = normal(rng);
    std::memcpy(out.data() + 4 * i, &v, 4);
  }
  return out;
}

}  // namespace

TEST_CASE("submit runs jobs and returns their results and exceptions", "[thread_pool]") {
  ThreadPool pool(3);
  CHECK(pool.size() == 3);
  std::vector<std::future<int>> results;
  for (int i = 0; i < 20; ++i) results.push_back(pool.submit([i] { return i * i; }));
  for (int i = 0; i < 20; ++i) CHECK(results[static_cast<std::size_t>(i)].get() == i * i);
  auto failing = pool.submit([]() -> int { throw std::runtime_error("job failed"); });
  REQUIRE_THROWS_AS(failing.get(), std::runtime_error);

  ThreadPool empty(0);
  REQUIRE_THROWS_AS(empty.submit([] { return 1; }), Error);
}

TEST_CASE("parallel_for runs every index exactly once, with any number of threads", "[thread_pool]") {
  for (int threads : {0, 1, 4}) {
    ThreadPool pool(threads);
    for (std::int64_t count : {0, 1, 7, 1000}) {
      std::vector<std::atomic<int>> runs(static_cast<std::size_t>(count));
      pool.parallel_for(count, 8, [&](std::int64_t i) { ++runs[static_cast<std::size_t>(i)]; });
      int wrong = 0;
      for (const auto& r : runs) wrong += r.load() != 1;
      INFO("threads " << threads << ", count " << count);
      CHECK(wrong == 0);
    }
  }
}

TEST_CASE("parallel_for rethrows a body's exception after the loop", "[thread_pool]") {
  ThreadPool pool(2);
  std::atomic<int> ran{0};
  REQUIRE_THROWS_AS(pool.parallel_for(100, 2,
                                      [&](std::int64_t i) {
                                        ++ran;
                                        if (i == 37) throw ValidationError("index 37");
                                      }),
                    ValidationError);
  CHECK(ran.load() == 100);  // the other indices still ran; nothing runs after the call returned
}

TEST_CASE("parallel_for from jobs of the same pool does not deadlock when every thread is busy", "[thread_pool]") {
  // Two threads, eight jobs, each running a loop on the same pool whose bodies run loops again: every
  // thread is inside a job that waits on its loop, and the callers must finish the work themselves.
  auto pool = std::make_unique<ThreadPool>(2);
  std::atomic<std::int64_t> total{0};
  std::vector<std::future<void>> jobs;
  for (int job = 0; job < 8; ++job) {
    jobs.push_back(pool->submit([&pool, &total] {
      pool->parallel_for(16, 8, [&](std::int64_t) {
        pool->parallel_for(8, 8, [&](std::int64_t) {
          std::this_thread::sleep_for(std::chrono::microseconds(200));
          ++total;
        });
      });
    }));
  }
  const bool finished = all_ready(jobs, 60.0);
  if (!finished) (void)pool.release();  // deadlocked threads cannot be joined
  REQUIRE(finished);
  CHECK(total.load() == 8 * 16 * 8);
}

TEST_CASE("compare_output gives the same result for any number of threads, also from inside pool jobs",
          "[thread_pool][host_tensors]") {
  // Over several chunks (2^18 elements each), with errors spread over all of them.
  const std::int64_t count = (std::int64_t(1) << 20) + 12345;
  const Bytes expected = random_floats(count, 1);
  Bytes actual = expected;
  for (std::int64_t i = 0; i < count; i += 9973) {
    float v;
    std::memcpy(&v, actual.data() + 4 * i, 4);
    v += 1e-3f * static_cast<float>(i % 7);
    std::memcpy(actual.data() + 4 * i, &v, 4);
  }
  const Tolerance tolerance{1e-4, 1e-4};
  ThreadPool none(0);
  ThreadPool three(3);
  const OutputComparison serial = compare_output("y", DType::float32, count, expected, actual, actual, tolerance, none);
  const OutputComparison parallel =
      compare_output("y", DType::float32, count, expected, actual, actual, tolerance, three);
  REQUIRE(serial.check.mismatches > 10);
  CHECK(parallel.check.mismatches == serial.check.mismatches);
  CHECK(parallel.check.first_mismatch == serial.check.first_mismatch);
  // Bitwise equal sums: the chunks are added in the same order whichever thread computed them.
  CHECK(parallel.check.rel_l2_error == serial.check.rel_l2_error);
  CHECK(parallel.check.max_abs_error == serial.check.max_abs_error);

  // Comparisons on the process-wide pool from more of its own jobs than it has threads.
  ThreadPool& shared = ThreadPool::shared();
  if (shared.size() == 0) {
    WARN("the shared pool has no threads on a one-core machine: nested comparisons run on the caller");
    return;
  }
  std::vector<std::future<double>> nested;
  for (int job = 0; job < 2 * shared.size() + 2; ++job) {
    nested.push_back(shared.submit([&] {
      return compare_output("y", DType::float32, count, expected, actual, actual, tolerance).check.rel_l2_error;
    }));
  }
  REQUIRE(all_ready(nested, 120.0));
  for (auto& result : nested) CHECK(result.get() == serial.check.rel_l2_error);
}
