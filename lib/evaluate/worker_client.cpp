#include "evaluate/worker.hpp"

#include "evaluate/worker_protocol.hpp"
#include "json_codec.hpp"

#include "evaluate/harness.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <signal.h>
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
#include "detail/child_process.hpp"
#include "detail/dynamic_library.hpp"
#include "detail/file_cache.hpp"
#include "detail/python_helper.hpp"
#include "detail/sandbox.hpp"
#include "kernelsmith/language.hpp"
#include "evaluate/task_key.hpp"
#include "kernelsmith/backend.hpp"
#include "kernelsmith/config.hpp"
#include "kernelsmith/error.hpp"

namespace kernelsmith::detail {

std::string worker_executable() {
  if (const char* path = std::getenv("KERNELSMITH_WORKER"); path != nullptr && *path != '\0') {
    if (::access(path, X_OK) != 0) {
      throw NotFoundError(fmt::format("KERNELSMITH_WORKER={} is not an executable file", path));
    }
    return path;
  }
  const std::string directory = library_directory();
  const std::string beside = (std::filesystem::path(directory) / "kernelsmith-worker").string();
  if (!directory.empty() && ::access(beside.c_str(), X_OK) == 0) return beside;
  throw NotFoundError(fmt::format(
      "the worker program kernelsmith-worker was not found beside the kernelsmith library (looked for {}); "
      "reinstall kernelsmith, set KERNELSMITH_WORKER to its path, or evaluate with isolate=false",
      beside));
}

// ------------------------------------------------------------------------------------------ parent side

struct WorkerClient::Process {
  pid_t pid = 0;
  std::unique_ptr<Channel> channel;
  std::string log_path;
  /// The worker's one writable folder besides the disk cache (docs/security.md); removed with it.
  std::string scratch;
};

WorkerClient::WorkerClient(WorkerSettings settings) : settings_(std::move(settings)) {}

WorkerClient::~WorkerClient() { stop(); }

pid_t WorkerClient::pid() const { return process_ ? process_->pid : 0; }
int WorkerClient::starts() const { return starts_; }
int WorkerClient::task_sends() const { return task_sends_; }
std::int64_t WorkerClient::bytes_sent() const { return bytes_sent_; }
int WorkerClient::unknown_task_replies() const { return unknown_task_replies_; }

void WorkerClient::stop() {
  if (!process_) return;
  process_->channel.reset();  // EOF tells an idle worker to exit
  if (process_->pid > 0) reap_child(process_->pid, 0.5);
  if (!process_->log_path.empty()) ::unlink(process_->log_path.c_str());
  remove_scratch_folder(process_->scratch);
  process_.reset();
  prepared_.clear();
  sent_tasks_.clear();
}

void WorkerClient::start() {
  if (process_ && process_->pid > 0) {
    // A worker that died while idle (killed from outside, out of memory) is replaced here, before a
    // request could be blamed on the next candidate.
    int status = 0;
    if (::waitpid(process_->pid, &status, WNOHANG) == process_->pid) {
      process_->pid = 0;
      stop();
    }
  }
  if (process_) return;
  const std::string executable = worker_executable();
  auto process = std::make_unique<Process>();

  process->log_path = make_log_file("kernelsmith-worker");
  const std::string log_path = process->log_path;

  int sockets[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sockets) != 0) {
    ::unlink(log_path.c_str());
    throw Error(fmt::format("socketpair for the worker failed: {}", std::strerror(errno)));
  }
  std::vector<std::string> arguments = {executable,
                                              "--backend",
                                              settings_.backend,
                                              "--device",
                                              std::to_string(settings_.device),
                                              "--cache-dir",
                                              settings_.cache_dir,
                                              "--parent",
                                              std::to_string(static_cast<long>(::getpid())),
                                              "--protocol",
                                              std::to_string(kWorkerProtocol),
                                              "--task-cache-entries",
                                              std::to_string(settings_.task_cache_entries),
                                              "--task-cache-bytes",
                                              std::to_string(settings_.task_cache_bytes)};
  // The Python helpers the worker starts (the PyTorch oracle) run the interpreter this process set
  // (set_helper_python); $KERNELSMITH_PYTHON reaches the worker through its environment.
  if (const std::string python = configured_helper_python(); !python.empty()) {
    arguments.insert(arguments.end(), {"--python", python});
  }
  // The worker runs confined (docs/security.md): it writes only to a scratch folder of its own and the disk
  // cache, and reads the system's folders, its own installation and the Python helpers' interpreter.
  SandboxPolicy policy;
  policy.scratch = process->scratch = make_scratch_folder("kernelsmith-worker-scratch");
  if (!settings_.cache_dir.empty()) {
    std::error_code ignored;
    std::filesystem::create_directories(settings_.cache_dir, ignored);
    policy.writable.push_back(settings_.cache_dir);
  }
  policy.readable = helper_readable_folders();
  policy.readable.push_back(std::filesystem::path(executable).parent_path().string());
  // A toolkit named by the environment, outside the system's folders (the MACA SDK's headers, which its
  // compiler reads in the worker; a runtime given by path).
  for (const char* variable : {"MACA_PATH", "CUDA_HOME", "CUDA_PATH"}) {
    if (const char* folder = std::getenv(variable); folder != nullptr && *folder != '\0') policy.readable.push_back(folder);
  }
  if (const char* runtime = std::getenv("KERNELSMITH_MACA_RUNTIME"); runtime != nullptr && *runtime != '\0') {
    policy.readable.push_back(std::filesystem::path(runtime).parent_path().parent_path().string());
  }
  policy.readable.push_back(KERNELSMITH_MACA_SDK_SEARCHED);  // the SDK the MACA plugin was built against
  arguments = confine_command(policy, arguments);
  const int child_end = sockets[1];
  // The protocol socket arrives as stdin; the worker moves it away at once. Everything the worker and
  // its driver print goes to the log file, whose tail explains a crash.
  SpawnOptions spawn;
  spawn.child_socket = child_end;
  spawn.log_path = log_path;
  pid_t pid = 0;
  try {
    pid = spawn_child(arguments, spawn);
  } catch (const Error& e) {
    ::close(child_end);
    ::close(sockets[0]);
    ::unlink(log_path.c_str());
    remove_scratch_folder(process->scratch);
    throw Error(fmt::format("cannot start the worker: {}", e.what()));
  }
  ::close(child_end);
  process->pid = pid;
  process->channel = std::make_unique<Channel>(sockets[0]);
  ++starts_;

  // The worker answers with its device once the backend is open.
  std::optional<std::string> hello;
  try {
    hello = process->channel->receive(deadline_after(settings_.startup_seconds));
  } catch (const ChannelClosed&) {
  }
  if (!hello) {
    const int status = reap_child(pid, 0.5);
    const std::string tail = log_tail(log_path);
    ::unlink(log_path.c_str());
    remove_scratch_folder(process->scratch);
    throw BackendUnavailableError(fmt::format("the {} worker did not start within {:.0f} s: {}{}", settings_.backend,
                                              settings_.startup_seconds, describe_exit(status, "the worker"),
                                              tail.empty() ? "" : "; it printed:\n" + tail));
  }
  const Json message = parse_json(*hello, "the worker's first message");
  if (message.at("type") == "error") {
    reap_child(pid, 2.0);
    ::unlink(log_path.c_str());
    throw BackendUnavailableError(message.at("message").get<std::string>());
  }
  if (message.value("protocol", 1) != kWorkerProtocol) {
    process->channel.reset();  // EOF ends the other worker
    reap_child(pid, 2.0);
    ::unlink(log_path.c_str());
    throw BackendUnavailableError(fmt::format(
        "the worker program {} speaks protocol version {}, this kernelsmith library version {}: it belongs to "
        "another kernelsmith installation; reinstall kernelsmith, or point KERNELSMITH_WORKER at the "
        "kernelsmith-worker built with this library",
        executable, message.value("protocol", 1), kWorkerProtocol));
  }
  device_ = device_from_json(message.at("device"));
  process_ = std::move(process);
}

DeviceInfo WorkerClient::device() {
  start();
  return device_;
}

Evaluation WorkerClient::evaluate(const Task& task, const Candidate& candidate, const ProgramSet& programs,
                                  const EvaluatorOptions& options) {
  start();
  // The task travels to a worker once; later requests name it by this key. Computing the key does not
  // encode the data cases (their digests are remembered), so it costs little per evaluation.
  const std::string task_key = task_content_key(task);
  std::optional<Json> task_document;  // written only when this worker needs it

  // One round trip. Returns the reply, or nothing when the deadline passed (the worker is then killed),
  // and fills `ended` when the worker died on the way.
  std::string ended;
  bool timed_out = false;
  auto round_trip = [&](const Json& request, double seconds) -> std::optional<Json> {
    const auto deadline = deadline_after(seconds);
    try {
      const std::string payload = request.dump();
      bytes_sent_ += static_cast<std::int64_t>(payload.size());
      if (!process_->channel->send(payload, deadline)) {
        timed_out = true;
      } else if (auto reply = process_->channel->receive(deadline)) {
        return parse_json(*reply, "the worker's reply");
      } else {
        timed_out = true;
      }
    } catch (const ChannelClosed&) {
    }
    // Dead or too slow: either way this worker is finished.
    if (timed_out) ::kill(process_->pid, SIGKILL);
    const int status = reap_child(process_->pid, timed_out ? 5.0 : 2.0);
    process_->pid = 0;
    const std::string tail = log_tail(process_->log_path);
    ended = timed_out ? std::string() : describe_exit(status, "the worker") + (tail.empty() ? "" : "; its last output:\n" + tail);
    stop();
    return std::nullopt;
  };
  // A round trip for a request about the task: it carries the task's body when this worker has not been
  // sent it, and once more when the worker answers that it does not hold the key (it evicted the task
  // from its cache).
  auto task_round_trip = [&](Json request, double seconds) -> std::optional<Json> {
    request["task_key"] = task_key;
    for (int attempt = 0;; ++attempt) {
      if (sent_tasks_.count(task_key) == 0) {
        if (!task_document) task_document = task_to_json(task);
        request["task"] = *task_document;
        ++task_sends_;
      } else {
        request.erase("task");
      }
      auto reply = round_trip(request, seconds);
      if (!reply) return reply;
      if (reply->value("type", "") != "error" || reply->value("kind", "") != "unknown_task") {
        sent_tasks_.insert(task_key);
        return reply;
      }
      ++unknown_task_replies_;
      sent_tasks_.erase(task_key);
      if (attempt > 0) {
        throw Error(fmt::format("task {}: the worker reports an unknown task key right after receiving the task ({}); "
                                "this is a bug in kernelsmith's worker protocol, please report it",
                                task.name, reply->value("message", "")));
      }
    }
  };
  auto forward_error = [&](const Json& reply) {
    const std::string kind = reply.value("kind", "error");
    const std::string text = reply.value("message", "the worker reported an error");
    if (kind == "task") throw TaskError(text);
    if (kind == "unavailable") throw BackendUnavailableError(text);
    throw Error(text);
  };

  if (!peaks_requested_) {
    // Measured once per device and cached on disk; its own deadline keeps it out of the candidate's.
    peaks_requested_ = true;
    const auto reply = round_trip({{"type", "peaks"}}, std::max(180.0, options.deadline_seconds));
    if (!reply) start();
  }
  // Preparing a task (its reference compiled and loaded, its outputs checked for spread, the baseline
  // timed) is charged to the first evaluation of the task, as its "reference" stage.
  double prepare_seconds = 0.0;
  double oracle_seconds = 0.0;
  const std::string prepared_key = task_key + "\n" + options.mode;
  if (prepared_.count(prepared_key) == 0) {
    const auto prepare_started = std::chrono::steady_clock::now();
    double seconds = std::max(120.0, options.deadline_seconds);
    // A PyTorch oracle computes every case's expected outputs and times its baselines here, each request
    // under its own timeout (torch.compile's max-autotune takes minutes on a GPU).
    if (task.oracle) seconds += options.oracle_timeout_seconds * static_cast<double>(2 + task.oracle->baselines.size());
    const auto reply = task_round_trip({{"type", "prepare"}, {"options", evaluator_options_to_json(options)}}, seconds);
    if (!reply) {
      throw TaskError(timed_out ? fmt::format("task {}: preparing its reference (compile, reference runs, baseline "
                                              "timing) did not finish within {:.0f} s: lower the sizes in the "
                                              "manifest, or raise EvaluatorOptions.deadline_seconds",
                                              task.name, seconds)
                                : fmt::format("task {}: the worker died while preparing the reference: {}",
                                              task.name, ended));
    }
    if (reply->at("type") == "error") forward_error(*reply);
    prepared_.insert(prepared_key);
    prepare_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - prepare_started).count();
    oracle_seconds = std::min(prepare_seconds, reply->value("oracle_seconds", 0.0));
  }

  Json program_documents = Json::object();
  for (const auto& [config, program] : programs) program_documents[config] = compiled_program_to_json(program);
  const Json request = {{"type", "evaluate"},
                        {"candidate", candidate_to_json(candidate)},
                        {"programs", program_documents},
                        {"options", evaluator_options_to_json(options)}};
  // A ModelNew's load_inline builds run inside its evaluation.
  const KernelLanguage* language = find_kernel_language(candidate.language);
  const double deadline =
      options.deadline_seconds + (language != nullptr && language->host_code ? options.host_code_build_seconds : 0.0);
  const auto reply = task_round_trip(request, deadline);
  if (!reply) {
    if (timed_out) {
      return failed_evaluation(task, candidate, settings_.backend, device_.name, Status::timeout,
                               fmt::format("did not finish within the deadline of {:.3g} s; the worker was killed "
                                           "(an endless loop, a deadlock, or far too much work per launch)",
                                           deadline));
    }
    return failed_evaluation(task, candidate, settings_.backend, device_.name, Status::crashed,
                             "the candidate crashed the worker: " + ended);
  }
  if (reply->at("type") == "error") forward_error(*reply);
  Evaluation evaluation = evaluation_from_json(JsonField(reply->at("evaluation"), "<worker reply>", "evaluation"));
  if (prepare_seconds > 0.0) evaluation.stage_seconds["reference"] += prepare_seconds - oracle_seconds;
  if (oracle_seconds > 0.0) evaluation.stage_seconds["oracle"] += oracle_seconds;
  if (reply->value("exiting", false)) {
    // The device context is lost: this worker is finished; the next evaluation starts another.
    reap_child(process_->pid, 5.0);
    process_->pid = 0;
    stop();
  }
  return evaluation;
}
}  // namespace kernelsmith::detail
