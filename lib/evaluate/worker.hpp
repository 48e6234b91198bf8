// Worker process isolation: candidate kernels run in `kernelsmith-worker`, a child process that owns
// the device, so that a crash, a trap or an endless loop costs one evaluation and never the caller.
//
// The parent spawns the worker (posix_spawn) and talks to it over a socket pair with length-prefixed
// JSON messages (8-byte little-endian length, then the document); docs/evaluation.md describes the
// messages. Each evaluation has a deadline: past it the worker is killed (`timeout`); a worker that
// dies is reported (`crashed`, with the signal and the last lines it printed). Either way the next
// evaluation starts a fresh worker. The worker dies with its parent (PR_SET_PDEATHSIG).
//
// A task (with its data cases, possibly tens of MB) is sent to a worker process once and later named
// by its content key (detail/task_key.hpp); the worker keeps a bounded cache of tasks and answers
// `unknown_task` for a key it does not hold, upon which the parent sends the task again.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>

// Only public headers: worker_main.cpp (built outside the library) includes this one.
#include "kernelsmith/backend.hpp"
#include "kernelsmith/candidate.hpp"
#include "kernelsmith/device.hpp"
#include "kernelsmith/evaluation.hpp"
#include "kernelsmith/evaluator.hpp"
#include "kernelsmith/task.hpp"

namespace kernelsmith::detail {

/// The version of the messages between the parent and the worker. The parent passes it as --protocol
/// and the worker's `ready` message repeats it; a worker of another version is refused with a message
/// that says so. Version 2: tasks are sent once per worker and named by key. Version 3: tasks, candidates
/// and evaluations travel as JSON objects (json_codec.hpp), not as strings holding JSON.
inline constexpr int kWorkerProtocol = 3;

/// As in detail/harness.hpp: programs by size configuration name ("" for all).
using ProgramSet = std::map<std::string, CompiledProgram>;

/// The worker executable: $KERNELSMITH_WORKER, else `kernelsmith-worker` beside the library. Throws
/// NotFoundError naming the places tried when there is none.
std::string worker_executable();

/// The worker program's main (lib/evaluate/worker_main.cpp).
int worker_main(int argc, char** argv);

struct WorkerSettings {
  std::string backend;
  int device = 0;
  std::string cache_dir;
  /// How long a fresh worker may take to load the driver and open the device.
  double startup_seconds = 120.0;
  /// The worker's task cache: at most this many tasks, and about this many bytes of task documents
  /// (the most recently used task is kept even when it alone is larger); the least recently used go.
  int task_cache_entries = 32;
  std::int64_t task_cache_bytes = std::int64_t(2) << 30;
};

/// The parent's side of one worker process, started on first use and again after each crash or
/// timeout. Not thread-safe: the evaluator serialises calls.
class WorkerClient {
 public:
  explicit WorkerClient(WorkerSettings settings);
  ~WorkerClient();
  WorkerClient(const WorkerClient&) = delete;
  WorkerClient& operator=(const WorkerClient&) = delete;

  /// Evaluates in the worker within options.deadline_seconds (preparing the task's reference and
  /// baseline first, under their own deadline, when this worker has not seen the task). Never throws
  /// for a bad candidate. Throws TaskError when the task's reference fails, BackendUnavailableError
  /// when a worker cannot start.
  Evaluation evaluate(const Task& task, const Candidate& candidate, const ProgramSet& programs,
                      const EvaluatorOptions& options);

  /// The worker's device (starts the worker when none runs).
  DeviceInfo device();

  /// The worker's process id, 0 when none runs (for tests).
  pid_t pid() const;
  /// How many workers were started so far (for tests).
  int starts() const;
  /// How many times a task's body was sent to a worker (for tests and measurements).
  int task_sends() const;
  /// Bytes of all requests sent to workers so far.
  std::int64_t bytes_sent() const;
  /// How many times a worker answered that it did not hold a task key (the task was then resent).
  int unknown_task_replies() const;

 private:
  struct Process;
  void start();
  void stop();
  WorkerSettings settings_;
  std::unique_ptr<Process> process_;
  DeviceInfo device_;
  std::set<std::string> prepared_;    ///< task key and mode pairs this worker has prepared
  std::set<std::string> sent_tasks_;  ///< task keys whose body this worker has been sent
  bool peaks_requested_ = false;
  int starts_ = 0;
  int task_sends_ = 0;
  std::int64_t bytes_sent_ = 0;
  int unknown_task_replies_ = 0;
};

}  // namespace kernelsmith::detail
