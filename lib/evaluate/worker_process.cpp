#include "evaluate/worker.hpp"

#include "evaluate/worker_protocol.hpp"
#include "json_codec.hpp"

#include "evaluate/harness.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <filesystem>
#include <functional>
#include <future>
#include <list>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <thread>
#include <unordered_map>

#include "detail/base64.hpp"
#include "detail/dynamic_library.hpp"
#include "detail/file_cache.hpp"
#include "evaluate/task_key.hpp"
#include "kernelsmith/backend.hpp"
#include "kernelsmith/error.hpp"
#include "kernelsmith/python_helpers.hpp"

extern char** environ;

namespace kernelsmith::detail {

namespace {

struct WorkerArguments {
  std::string backend;
  int device = 0;
  std::string cache_dir;
  long parent = 0;
  int protocol = 1;  // a parent that does not pass --protocol predates version 2
  int task_cache_entries = 32;
  std::int64_t task_cache_bytes = std::int64_t(2) << 30;
  std::string python;  ///< the Python helpers' interpreter, when the parent set one
};

WorkerArguments parse_arguments(int argc, char** argv) {
  WorkerArguments arguments;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string key = argv[i];
    const std::string value = argv[i + 1];
    if (key == "--backend") {
      arguments.backend = value;
    } else if (key == "--device") {
      arguments.device = std::atoi(value.c_str());
    } else if (key == "--cache-dir") {
      arguments.cache_dir = value;
    } else if (key == "--parent") {
      arguments.parent = std::atol(value.c_str());
    } else if (key == "--protocol") {
      arguments.protocol = std::atoi(value.c_str());
    } else if (key == "--task-cache-entries") {
      arguments.task_cache_entries = std::max(1, std::atoi(value.c_str()));
    } else if (key == "--task-cache-bytes") {
      arguments.task_cache_bytes = std::max<long long>(0, std::atoll(value.c_str()));
    } else if (key == "--python") {
      arguments.python = value;
    }
  }
  return arguments;
}

/// The tasks this worker was sent, by key, least recently used first out: at most `max_entries`, and
/// about `max_bytes` of task documents (the task in use is kept even when it alone is larger).
class TaskCache {
 public:
  TaskCache(int max_entries, std::int64_t max_bytes) : max_entries_(max_entries), max_bytes_(max_bytes) {}

  /// The task under `key`, now the most recently used; nullptr when this worker does not hold it.
  const Task* find(const std::string& key) {
    const auto found = index_.find(key);
    if (found == index_.end()) return nullptr;
    entries_.splice(entries_.begin(), entries_, found->second);
    return &found->second->task;
  }

  const Task& store(const std::string& key, Task task, std::int64_t bytes) {
    if (const auto found = index_.find(key); found != index_.end()) {
      bytes_ -= found->second->bytes;
      entries_.erase(found->second);
      index_.erase(found);
    }
    entries_.push_front(Entry{key, std::move(task), bytes});
    index_[key] = entries_.begin();
    bytes_ += bytes;
    while (entries_.size() > 1 &&
           (static_cast<int>(entries_.size()) > max_entries_ || bytes_ > max_bytes_)) {
      bytes_ -= entries_.back().bytes;
      index_.erase(entries_.back().key);
      entries_.pop_back();
    }
    return entries_.front().task;
  }

  int size() const { return static_cast<int>(entries_.size()); }

 private:
  struct Entry {
    std::string key;
    Task task;
    std::int64_t bytes = 0;
  };
  int max_entries_;
  std::int64_t max_bytes_;
  std::int64_t bytes_ = 0;
  std::list<Entry> entries_;  // most recently used first
  std::unordered_map<std::string, std::list<Entry>::iterator> index_;
};

/// Why a request names a task this worker does not hold; the parent answers by sending it again.
class UnknownTask : public Error {
 public:
  UnknownTask(const std::string& key, int capacity)
      : Error(fmt::format("this worker holds no task with key {} (never sent to this process, or evicted from "
                          "its cache of {} tasks): send the task's body with the request",
                          key, capacity)),
        key_(key) {}
  const std::string& key() const { return key_; }

 private:
  std::string key_;
};

}  // namespace

int worker_main(int argc, char** argv) {
  const WorkerArguments arguments = parse_arguments(argc, argv);
  if (arguments.backend.empty() || arguments.parent <= 0) {
    std::fprintf(stderr,
                 "kernelsmith-worker runs candidate kernels for the kernelsmith evaluator, which starts it; it is "
                 "not meant to be run by hand.\n");
    return 2;
  }
  // The protocol socket came as stdin: move it off 0, so that nothing reading stdin can consume it.
  const int channel = ::fcntl(0, F_DUPFD_CLOEXEC, 3);
  if (channel < 0) return 2;
  const int null_fd = ::open("/dev/null", O_RDONLY);
  if (null_fd >= 0) {
    ::dup2(null_fd, 0);
    ::close(null_fd);
  }
  // Ctrl-C in a terminal goes to the whole foreground process group: it is meant for the caller, which
  // stops its run and keeps its results; a worker killed by it would turn the evaluation in flight into
  // a false `crashed`. The worker ends with its parent instead.
  ::signal(SIGINT, SIG_IGN);
  ::signal(SIGQUIT, SIG_IGN);
  // Die with the parent, and do not run at all when it is already gone.
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  // Confined, the worker's parent is the sandbox launcher (outside its pid namespace, getppid() reads 0),
  // which checked the caller itself and dies with it, taking the worker along.
  const bool confined = std::getenv("KERNELSMITH_SANDBOXED") != nullptr;
  if (!confined && ::getppid() != static_cast<pid_t>(arguments.parent)) return 3;
  if (arguments.protocol != kWorkerProtocol) {
    try {
      send_json(channel, {{"type", "error"},
                          {"kind", "unavailable"},
                          {"message", fmt::format("the kernelsmith-worker program speaks protocol version {}, the "
                                                  "library that started it version {}: they belong to different "
                                                  "kernelsmith installations; reinstall kernelsmith",
                                                  kWorkerProtocol, arguments.protocol)}});
    } catch (...) {
    }
    return 4;
  }

  std::unique_ptr<Backend> backend;
  try {
    backend = create_backend(arguments.backend, arguments.device);
  } catch (const std::exception& e) {
    try {
      send_json(channel, {{"type", "error"}, {"kind", "unavailable"}, {"message", e.what()}});
    } catch (...) {
    }
    return 4;
  }
  if (!arguments.python.empty()) set_helper_python(arguments.python);
  Harness harness(*backend, resolve_cache_dir(arguments.cache_dir));
  harness.set_measure_peaks(false);
  TaskCache tasks(arguments.task_cache_entries, arguments.task_cache_bytes);
  // The request's task: stored first when the request carries its body, else looked up by key.
  auto task_of = [&](const Json& request, std::int64_t request_bytes) -> const Task& {
    const std::string key = request.at("task_key").get<std::string>();
    if (const auto body = request.find("task"); body != request.end()) {
      const std::string origin = "<task from the evaluator>";
      Task task = task_from_json(JsonField(*body, origin, "task"), {});
      task.validate(origin);
      // The request's size bounds the task's: what the cache counts against its byte limit.
      return tasks.store(key, std::move(task), request_bytes);
    }
    if (const Task* known = tasks.find(key)) return *known;
    throw UnknownTask(key, arguments.task_cache_entries);
  };

  try {
    send_json(channel, {{"type", "ready"}, {"protocol", kWorkerProtocol}, {"device", device_to_json(backend->device())}});
    while (true) {
      const auto payload = receive_blocking(channel);
      if (!payload) return 0;  // the parent closed the connection
      std::string type;
      std::optional<Task> task_copy;
      std::optional<Candidate> candidate;
      try {
        const Json request = parse_json(*payload, "the evaluator's request");
        type = request.at("type").get<std::string>();
        if (type == "peaks") {
          const DevicePeaks peaks = harness.peaks(true);
          send_json(channel, {{"type", "peaks"}, {"gbps", peaks.gbps}, {"gflops", peaks.gflops}});
        } else if (type == "prepare") {
          const Task& task = task_of(request, static_cast<std::int64_t>(payload->size()));
          const double oracle_seconds = harness.prepare(task, evaluator_options_from_json(request.at("options")));
          send_json(channel, {{"type", "prepared"}, {"oracle_seconds", oracle_seconds}});
        } else if (type == "evaluate") {
          const Task& task = task_of(request, static_cast<std::int64_t>(payload->size()));
          task_copy = task;
          candidate = candidate_from_json(JsonField(request.at("candidate"), "<candidate from the evaluator>", "candidate"));
          ProgramSet programs;
          for (const auto& [config, document] : request.at("programs").items()) {
            programs[config] = compiled_program_from_json(document);
          }
          const Evaluation evaluation =
              harness.evaluate(task, *candidate, programs, evaluator_options_from_json(request.at("options")));
          send_json(channel, {{"type", "evaluation"}, {"evaluation", evaluation_to_json(evaluation)}});
        } else {
          send_json(channel, {{"type", "error"}, {"kind", "error"}, {"message", "unknown request " + type}});
        }
      } catch (const UnknownTask& e) {
        send_json(channel, {{"type", "error"}, {"kind", "unknown_task"}, {"task_key", e.key()}, {"message", e.what()}});
      } catch (const DeviceFault& fault) {
        // The context is gone: report, then exit so that the next evaluation gets a clean device.
        if (task_copy && candidate) {
          const Evaluation evaluation =
              failed_evaluation(*task_copy, *candidate, backend->name(), backend->device().name, Status::crashed,
                                fmt::format("the device context was lost: {}", fault.what()));
          send_json(channel, {{"type", "evaluation"}, {"evaluation", evaluation_to_json(evaluation)}, {"exiting", true}});
        } else {
          send_json(channel, {{"type", "error"}, {"kind", type == "prepare" ? "task" : "error"},
                              {"message", fmt::format("the device context was lost: {}", fault.what())}});
        }
        return 5;
      } catch (const TaskError& e) {
        send_json(channel, {{"type", "error"}, {"kind", "task"}, {"message", e.what()}});
      } catch (const std::exception& e) {
        send_json(channel, {{"type", "error"}, {"kind", type == "prepare" ? "task" : "error"}, {"message", e.what()}});
      }
    }
  } catch (const ChannelClosed&) {
    return 0;  // the parent is gone
  }
}

}  // namespace kernelsmith::detail