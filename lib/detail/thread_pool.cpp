#include "detail/thread_pool.hpp"

#include <algorithm>
#include <atomic>
#include <exception>

#include "kernelsmith/error.hpp"

namespace kernelsmith::detail {
namespace {

/// One parallel_for: shared with its helper jobs, which may start (and find nothing left) after the
/// caller has returned; `body` is only touched for a claimed index, while the caller still waits.
struct Loop {
  std::int64_t count = 0;
  const std::function<void(std::int64_t)>* body = nullptr;
  std::atomic<std::int64_t> next{0};
  std::mutex mutex;
  std::condition_variable all_finished;
  std::int64_t finished = 0;  // guarded by mutex
  std::exception_ptr error;   // guarded by mutex
};

// Claims and runs indices until none are left.
void run_indices(Loop& loop) {
  std::int64_t ran = 0;
  std::exception_ptr error;
  for (std::int64_t i = loop.next++; i < loop.count; i = loop.next++) {
    try {
      (*loop.body)(i);
    } catch (...) {
      if (!error) error = std::current_exception();
    }
    ++ran;
  }
  if (ran == 0) return;
  std::lock_guard<std::mutex> lock(loop.mutex);
  if (error && !loop.error) loop.error = error;
  loop.finished += ran;
  if (loop.finished == loop.count) loop.all_finished.notify_all();
}

}  // namespace

ThreadPool::ThreadPool(int threads) {
  for (int i = 0; i < threads; ++i) {
    threads_.emplace_back([this] {
      while (true) {
        std::function<void()> job;
        {
          std::unique_lock<std::mutex> lock(mutex_);
          ready_.wait(lock, [this] { return stopping_ || !jobs_.empty(); });
          if (jobs_.empty()) return;
          job = std::move(jobs_.front());
          jobs_.pop_front();
        }
        job();
      }
    });
  }
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  ready_.notify_all();
  for (auto& thread : threads_) thread.join();
}

ThreadPool& ThreadPool::shared() {
  static ThreadPool* pool = [] {
    const unsigned hardware = std::max(1u, std::thread::hardware_concurrency());
    return new ThreadPool(static_cast<int>(std::min(hardware, 8u)) - 1);
  }();
  return *pool;
}

void ThreadPool::enqueue(std::function<void()> job) {
  if (threads_.empty()) throw Error("ThreadPool::submit: this pool has no threads to run the job on");
  {
    std::lock_guard<std::mutex> lock(mutex_);
    jobs_.push_back(std::move(job));
  }
  ready_.notify_one();
}

void ThreadPool::parallel_for(std::int64_t count, int max_helpers,
                              const std::function<void(std::int64_t)>& body) {
  if (count <= 0) return;
  const std::int64_t helpers = std::min<std::int64_t>({static_cast<std::int64_t>(max_helpers),
                                                       static_cast<std::int64_t>(size()), count - 1});
  if (helpers <= 0) {
    for (std::int64_t i = 0; i < count; ++i) body(i);
    return;
  }
  auto loop = std::make_shared<Loop>();
  loop->count = count;
  loop->body = &body;
  for (std::int64_t h = 0; h < helpers; ++h) enqueue([loop] { run_indices(*loop); });
  // The caller works too: when every pool thread is busy (with jobs that may themselves be waiting
  // here) it runs all the indices itself.
  run_indices(*loop);
  std::unique_lock<std::mutex> lock(loop->mutex);
  loop->all_finished.wait(lock, [&] { return loop->finished == loop->count; });
  if (loop->error) std::rethrow_exception(loop->error);
}

}  // namespace kernelsmith::detail
