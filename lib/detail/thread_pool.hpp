// A fixed set of threads that runs jobs: the evaluator's compile jobs, and the chunks of an output
// comparison (through the process-wide pool, shared()).
//
// parallel_for never deadlocks, even when it is called from a job of the same pool while every thread
// is busy: the calling thread runs indices itself and only waits for indices that a pool thread has
// already started. A helper job that starts after the work is done finds nothing left and returns.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace kernelsmith::detail {

class ThreadPool {
 public:
  /// `threads` may be 0: parallel_for then runs everything on the caller, and submit() throws.
  explicit ThreadPool(int threads);
  /// Runs the jobs already queued, then joins the threads.
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  /// The process-wide pool for data-parallel loops: up to 7 threads (8 with the caller), fewer on
  /// smaller machines. Created on first use and never destroyed (threads must not be joined while
  /// static destructors run and other threads may still use it).
  static ThreadPool& shared();

  int size() const { return static_cast<int>(threads_.size()); }

  /// Queues a job; its result or exception arrives through the future. Throws Error when the pool has
  /// no threads.
  template <typename F>
  auto submit(F function) -> std::future<decltype(function())> {
    auto task = std::make_shared<std::packaged_task<decltype(function())()>>(std::move(function));
    auto result = task->get_future();
    enqueue([task] { (*task)(); });
    return result;
  }

  /// Calls body(i) for every i in [0, count), on the caller and on up to `max_helpers` pool threads
  /// (never more than the pool has). Each index runs exactly once; which thread runs it is unspecified,
  /// so a body that writes its result to slot i gives the same results for any number of threads.
  /// The first exception a body throws is rethrown here after every started index has finished.
  void parallel_for(std::int64_t count, int max_helpers, const std::function<void(std::int64_t)>& body);

 private:
  void enqueue(std::function<void()> job);

  std::mutex mutex_;
  std::condition_variable ready_;
  std::deque<std::function<void()>> jobs_;
  std::vector<std::thread> threads_;
  bool stopping_ = false;
};

}  // namespace kernelsmith::detail
