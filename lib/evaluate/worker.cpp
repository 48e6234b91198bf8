#include "evaluate/worker.hpp"

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
#include "evaluate/device_json.hpp"
#include "detail/dynamic_library.hpp"
#include "detail/file_cache.hpp"
#include "evaluate/task_key.hpp"
#include "kernelsmith/backend.hpp"
#include "kernelsmith/error.hpp"

extern char** environ;

namespace kernelsmith::detail {
namespace {

using Json = nlohmann::json;
using Clock = std::chrono::steady_clock;

constexpr std::uint64_t kMaxMessageBytes = std::uint64_t(2) << 30;

// ------------------------------------------------------------------------------------------ documents

Json options_to_json(const EvaluatorOptions& o) {
  return {{"backend", o.backend},
          {"device", o.device},
          {"mode", o.mode},
          {"correctness_trials", o.correctness_trials},
          {"screen_correctness_trials", o.screen_correctness_trials},
          {"adversarial_inputs", o.adversarial_inputs},
          {"screen_adversarial_timing_sizes", o.screen_adversarial_timing_sizes},
          {"seed", o.seed},
          {"noise_target", o.noise_target},
          {"min_samples", o.min_samples},
          {"strict_min_samples", o.strict_min_samples},
          {"strict_max_samples", o.strict_max_samples},
          {"max_samples", o.max_samples},
          {"screen_budget_seconds", o.screen_budget_seconds},
          {"strict_budget_seconds", o.strict_budget_seconds},
          {"flush_l2", o.flush_l2},
          {"suspicious_speedup", o.suspicious_speedup},
          {"deadline_seconds", o.deadline_seconds},
          {"compile_timeout_seconds", o.compile_timeout_seconds},
          {"compile_threads", o.compile_threads},
          {"isolate", o.isolate},
          {"cache_dir", o.cache_dir},
          {"use_disk_cache", o.use_disk_cache}};
}

EvaluatorOptions options_from_json(const Json& j) {
  EvaluatorOptions o;
  o.backend = j.at("backend").get<std::string>();
  o.device = j.at("device").get<int>();
  o.mode = j.at("mode").get<std::string>();
  o.correctness_trials = j.at("correctness_trials").get<int>();
  o.screen_correctness_trials = j.at("screen_correctness_trials").get<int>();
  o.adversarial_inputs = j.at("adversarial_inputs").get<bool>();
  o.screen_adversarial_timing_sizes = j.at("screen_adversarial_timing_sizes").get<bool>();
  o.seed = j.at("seed").get<std::uint64_t>();
  o.noise_target = j.at("noise_target").get<double>();
  o.min_samples = j.at("min_samples").get<int>();
  o.strict_min_samples = j.at("strict_min_samples").get<int>();
  o.strict_max_samples = j.at("strict_max_samples").get<int>();
  o.max_samples = j.at("max_samples").get<int>();
  o.screen_budget_seconds = j.at("screen_budget_seconds").get<double>();
  o.strict_budget_seconds = j.at("strict_budget_seconds").get<double>();
  o.flush_l2 = j.at("flush_l2").get<bool>();
  o.suspicious_speedup = j.at("suspicious_speedup").get<double>();
  o.deadline_seconds = j.at("deadline_seconds").get<double>();
  o.compile_timeout_seconds = j.at("compile_timeout_seconds").get<double>();
  o.compile_threads = j.at("compile_threads").get<int>();
  o.isolate = j.at("isolate").get<bool>();
  o.cache_dir = j.at("cache_dir").get<std::string>();
  o.use_disk_cache = j.at("use_disk_cache").get<bool>();
  return o;
}

Json resources_to_json(const KernelResources& k) {
  return {{"name", k.name},
          {"registers", k.registers},
          {"spill_store_bytes", k.spill_store_bytes},
          {"spill_load_bytes", k.spill_load_bytes},
          {"stack_bytes", k.stack_bytes},
          {"shared_bytes", k.shared_bytes},
          {"local_bytes", k.local_bytes}};
}

KernelResources resources_from_json(const Json& j) {
  KernelResources k;
  k.name = j.at("name").get<std::string>();
  k.registers = j.at("registers").get<int>();
  k.spill_store_bytes = j.at("spill_store_bytes").get<std::int64_t>();
  k.spill_load_bytes = j.at("spill_load_bytes").get<std::int64_t>();
  k.stack_bytes = j.at("stack_bytes").get<std::int64_t>();
  k.shared_bytes = j.at("shared_bytes").get<std::int64_t>();
  k.local_bytes = j.at("local_bytes").get<std::int64_t>();
  return k;
}

Json compiled_program_to_json(const CompiledProgram& program) {
  Json kernels = Json::array();
  for (const auto& k : program.report.kernels) kernels.push_back(resources_to_json(k));
  return {{"language", program.language},
          {"target", program.target},
          {"binary", base64_encode(program.binary)},
          {"symbols", program.symbols},
          {"report",
           {{"ok", program.report.ok},
            {"log", program.report.log},
            {"target", program.report.target},
            {"seconds", program.report.seconds},
            {"cached", program.report.cached},
            {"kernels", kernels}}}};
}

CompiledProgram compiled_program_from_json(const Json& j) {
  CompiledProgram program;
  program.language = j.at("language").get<std::string>();
  program.target = j.at("target").get<std::string>();
  program.binary = base64_decode(j.at("binary").get<std::string>());
  program.symbols = j.at("symbols").get<std::map<std::string, std::string>>();
  const Json& report = j.at("report");
  program.report.ok = report.at("ok").get<bool>();
  program.report.log = report.at("log").get<std::string>();
  program.report.target = report.at("target").get<std::string>();
  program.report.seconds = report.at("seconds").get<double>();
  program.report.cached = report.at("cached").get<bool>();
  for (const auto& k : report.at("kernels")) program.report.kernels.push_back(resources_from_json(k));
  return program;
}

}  // namespace

std::string compiled_program_to_text(const CompiledProgram& program) {
  return compiled_program_to_json(program).dump();
}

CompiledProgram compiled_program_from_text(const std::string& text) {
  try {
    return compiled_program_from_json(Json::parse(text));
  } catch (const nlohmann::json::exception& e) {
    throw ValidationError(fmt::format("not a compiled-program document: {}", e.what()));
  }
}

namespace {

// ------------------------------------------------------------------------------------------ framing

/// The other side closed the connection or the socket failed.
class ChannelClosed : public Error {
 public:
  using Error::Error;
};

std::string frame(const std::string& payload) {
  std::string out(8, '\0');
  const std::uint64_t size = payload.size();
  for (int i = 0; i < 8; ++i) out[static_cast<std::size_t>(i)] = static_cast<char>((size >> (8 * i)) & 0xFF);
  return out + payload;
}

std::uint64_t frame_length(const std::string& header) {
  std::uint64_t size = 0;
  for (int i = 0; i < 8; ++i) size |= std::uint64_t(static_cast<unsigned char>(header[static_cast<std::size_t>(i)])) << (8 * i);
  return size;
}

// Blocking I/O for the worker's side: it has nothing else to do while it waits.
void write_all_blocking(int fd, const std::string& data) {
  std::size_t written = 0;
  while (written < data.size()) {
    const ssize_t n = ::send(fd, data.data() + written, data.size() - written, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw ChannelClosed(fmt::format("send failed: {}", std::strerror(errno)));
    written += static_cast<std::size_t>(n);
  }
}

bool read_exact_blocking(int fd, std::string& out, std::size_t size) {
  out.assign(size, '\0');
  std::size_t got = 0;
  while (got < size) {
    const ssize_t n = ::recv(fd, out.data() + got, size - got, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n == 0 && got == 0) return false;
    if (n <= 0) throw ChannelClosed("the connection closed in the middle of a message");
    got += static_cast<std::size_t>(n);
  }
  return true;
}

std::optional<std::string> receive_blocking(int fd) {
  std::string header;
  if (!read_exact_blocking(fd, header, 8)) return std::nullopt;
  const std::uint64_t size = frame_length(header);
  if (size > kMaxMessageBytes) throw ChannelClosed(fmt::format("a message of {} bytes is too large", size));
  std::string payload;
  if (size > 0 && !read_exact_blocking(fd, payload, static_cast<std::size_t>(size))) {
    throw ChannelClosed("the connection closed in the middle of a message");
  }
  return payload;
}

/// The parent's side: non-blocking, every operation bounded by a deadline.
class Channel {
 public:
  explicit Channel(int fd) : fd_(fd) { fcntl(fd_, F_SETFL, fcntl(fd_, F_GETFL) | O_NONBLOCK); }
  ~Channel() {
    if (fd_ >= 0) ::close(fd_);
  }
  Channel(const Channel&) = delete;
  Channel& operator=(const Channel&) = delete;

  /// False when the deadline passed first. Throws ChannelClosed.
  bool send(const std::string& payload, Clock::time_point deadline) {
    const std::string data = frame(payload);
    std::size_t written = 0;
    while (written < data.size()) {
      if (!wait(POLLOUT, deadline)) return false;
      const ssize_t n = ::send(fd_, data.data() + written, data.size() - written, MSG_NOSIGNAL);
      if (n < 0 && (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK)) continue;
      if (n <= 0) throw ChannelClosed(fmt::format("send to the worker failed: {}", std::strerror(errno)));
      written += static_cast<std::size_t>(n);
    }
    return true;
  }

  /// Nothing when the deadline passed first. Throws ChannelClosed.
  std::optional<std::string> receive(Clock::time_point deadline) {
    while (true) {
      if (buffer_.size() >= 8) {
        const std::uint64_t size = frame_length(buffer_);
        if (size > kMaxMessageBytes) throw ChannelClosed(fmt::format("a message of {} bytes is too large", size));
        if (buffer_.size() >= 8 + size) {
          std::string payload = buffer_.substr(8, static_cast<std::size_t>(size));
          buffer_.erase(0, 8 + static_cast<std::size_t>(size));
          return payload;
        }
      }
      if (!wait(POLLIN, deadline)) return std::nullopt;
      char chunk[65536];
      const ssize_t n = ::recv(fd_, chunk, sizeof(chunk), 0);
      if (n < 0 && (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK)) continue;
      if (n == 0) throw ChannelClosed("the worker closed the connection");
      if (n < 0) throw ChannelClosed(fmt::format("receive from the worker failed: {}", std::strerror(errno)));
      buffer_.append(chunk, static_cast<std::size_t>(n));
    }
  }

 private:
  bool wait(short events, Clock::time_point deadline) {
    while (true) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
      if (left <= 0) return false;
      pollfd entry{fd_, events, 0};
      const int ready = ::poll(&entry, 1, static_cast<int>(std::min<long long>(left, 1000)));
      if (ready < 0 && errno == EINTR) continue;
      if (ready < 0) throw ChannelClosed(fmt::format("poll failed: {}", std::strerror(errno)));
      if (ready > 0) return true;  // readable, writable, or closed (the next call says which)
    }
  }

  int fd_;
  std::string buffer_;
};

Clock::time_point deadline_after(double seconds) {
  return Clock::now() + std::chrono::microseconds(static_cast<std::int64_t>(std::max(seconds, 0.001) * 1e6));
}

// ------------------------------------------------------------------------------------------ spawning

// PR_SET_PDEATHSIG fires when the *thread* that spawned the child exits, not the process. Spawning from
// one thread that lives as long as the process makes it mean "when the parent process dies".
class SpawnThread {
 public:
  static SpawnThread& instance() {
    static SpawnThread* thread = new SpawnThread();  // never destroyed: it must outlive every caller
    return *thread;
  }

  pid_t run(std::function<pid_t()> job) {
    auto task = std::make_shared<std::packaged_task<pid_t()>>(std::move(job));
    auto result = task->get_future();
    {
      std::lock_guard<std::mutex> lock(mutex_);
      jobs_.push_back([task] { (*task)(); });
    }
    ready_.notify_one();
    return result.get();
  }

 private:
  SpawnThread() {
    std::thread([this] {
      while (true) {
        std::function<void()> job;
        {
          std::unique_lock<std::mutex> lock(mutex_);
          ready_.wait(lock, [this] { return !jobs_.empty(); });
          job = std::move(jobs_.front());
          jobs_.pop_front();
        }
        job();
      }
    }).detach();
  }

  std::mutex mutex_;
  std::condition_variable ready_;
  std::deque<std::function<void()>> jobs_;
};

std::string signal_name(int signal) {
  static const std::unordered_map<int, const char*> names = {
      {SIGSEGV, "SIGSEGV"}, {SIGBUS, "SIGBUS"}, {SIGABRT, "SIGABRT"}, {SIGFPE, "SIGFPE"},   {SIGILL, "SIGILL"},
      {SIGKILL, "SIGKILL"}, {SIGTERM, "SIGTERM"}, {SIGTRAP, "SIGTRAP"}, {SIGPIPE, "SIGPIPE"}, {SIGSYS, "SIGSYS"}};
  const auto found = names.find(signal);
  const std::string name = found != names.end() ? found->second : fmt::format("signal {}", signal);
  const char* description = strsignal(signal);
  return description != nullptr ? fmt::format("{} ({})", name, description) : name;
}

// The last lines the worker printed (driver messages, a kernel's printf, an abort message).
std::string log_tail(const std::string& path, std::size_t max_lines = 8, std::size_t max_bytes = 2000) {
  const auto text = read_cache_file(path);
  if (!text || text->empty()) return {};
  std::string tail = text->size() > 4 * max_bytes ? text->substr(text->size() - 4 * max_bytes) : *text;
  std::vector<std::string> lines;
  std::size_t start = 0;
  while (start < tail.size()) {
    std::size_t end = tail.find('\n', start);
    if (end == std::string::npos) end = tail.size();
    std::string line = tail.substr(start, end - start);
    if (line.find_first_not_of(" \t\r") != std::string::npos) lines.push_back(line);
    start = end + 1;
  }
  if (lines.size() > max_lines) lines.erase(lines.begin(), lines.end() - static_cast<std::ptrdiff_t>(max_lines));
  std::string joined;
  for (const auto& line : lines) joined += (joined.empty() ? "" : "\n") + line;
  if (joined.size() > max_bytes) joined = "..." + joined.substr(joined.size() - max_bytes);
  return joined;
}

}  // namespace

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
};

WorkerClient::WorkerClient(WorkerSettings settings) : settings_(std::move(settings)) {}

WorkerClient::~WorkerClient() { stop(); }

pid_t WorkerClient::pid() const { return process_ ? process_->pid : 0; }
int WorkerClient::starts() const { return starts_; }
int WorkerClient::task_sends() const { return task_sends_; }
std::int64_t WorkerClient::bytes_sent() const { return bytes_sent_; }
int WorkerClient::unknown_task_replies() const { return unknown_task_replies_; }

namespace {

// Waits for the child to exit (up to `grace` seconds), then kills it. Returns the wait status, or -1 when
// it cannot be known (the child was reaped elsewhere).
int reap(pid_t pid, double grace) {
  const auto until = deadline_after(grace);
  int status = 0;
  while (true) {
    const pid_t done = ::waitpid(pid, &status, WNOHANG);
    if (done == pid) return status;
    if (done < 0 && errno != EINTR) return -1;
    if (Clock::now() >= until) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  ::kill(pid, SIGKILL);
  while (true) {
    const pid_t done = ::waitpid(pid, &status, 0);
    if (done == pid) return status;
    if (done < 0 && errno != EINTR) return -1;
  }
}

std::string describe_exit(int status) {
  if (status == -1) return "the worker ended (its exit status is unknown)";
  if (WIFSIGNALED(status)) return fmt::format("the worker was killed by {}", signal_name(WTERMSIG(status)));
  if (WIFEXITED(status)) return fmt::format("the worker exited with status {}", WEXITSTATUS(status));
  return "the worker ended";
}

}  // namespace

void WorkerClient::stop() {
  if (!process_) return;
  process_->channel.reset();  // EOF tells an idle worker to exit
  if (process_->pid > 0) reap(process_->pid, 0.5);
  if (!process_->log_path.empty()) ::unlink(process_->log_path.c_str());
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

  char log_template[] = "/tmp/kernelsmith-worker-XXXXXX";
  const int log_fd = ::mkstemp(log_template);
  if (log_fd < 0) throw Error(fmt::format("cannot create the worker's log file in /tmp: {}", std::strerror(errno)));
  ::close(log_fd);
  process->log_path = log_template;

  int sockets[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sockets) != 0) {
    ::unlink(log_template);
    throw Error(fmt::format("socketpair for the worker failed: {}", std::strerror(errno)));
  }
  const std::vector<std::string> arguments = {executable,
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
  const std::string log_path = process->log_path;
  const int child_end = sockets[1];
  const pid_t pid = SpawnThread::instance().run([&]() -> pid_t {
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    // The protocol socket arrives as stdin; the worker moves it away at once. Everything the worker and
    // its driver print goes to the log file, whose tail explains a crash.
    posix_spawn_file_actions_adddup2(&actions, child_end, 0);
    posix_spawn_file_actions_addopen(&actions, 2, log_path.c_str(), O_WRONLY | O_APPEND, 0600);
    posix_spawn_file_actions_adddup2(&actions, 2, 1);
    posix_spawnattr_t attributes;
    posix_spawnattr_init(&attributes);
    // Signal dispositions the caller set (Python ignores SIGPIPE) must not leak into the worker.
    sigset_t all;
    sigfillset(&all);
    sigset_t none;
    sigemptyset(&none);
    posix_spawnattr_setsigdefault(&attributes, &all);
    posix_spawnattr_setsigmask(&attributes, &none);
    posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);
    std::vector<char*> argv;
    for (const auto& argument : arguments) argv.push_back(const_cast<char*>(argument.c_str()));
    argv.push_back(nullptr);
    pid_t child = 0;
    const int error = ::posix_spawn(&child, arguments[0].c_str(), &actions, &attributes, argv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attributes);
    if (error != 0) {
      throw Error(fmt::format("cannot start the worker {}: {}", arguments[0], std::strerror(error)));
    }
    return child;
  });
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
    const int status = reap(pid, 0.5);
    const std::string tail = log_tail(log_path);
    ::unlink(log_path.c_str());
    throw BackendUnavailableError(fmt::format("the {} worker did not start within {:.0f} s: {}{}", settings_.backend,
                                              settings_.startup_seconds, describe_exit(status),
                                              tail.empty() ? "" : "; it printed:\n" + tail));
  }
  const Json message = Json::parse(*hello);
  if (message.at("type") == "error") {
    reap(pid, 2.0);
    ::unlink(log_path.c_str());
    throw BackendUnavailableError(message.at("message").get<std::string>());
  }
  if (message.value("protocol", 1) != kWorkerProtocol) {
    process->channel.reset();  // EOF ends the other worker
    reap(pid, 2.0);
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
  std::string task_body;  // serialised only when this worker needs it

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
        return Json::parse(*reply);
      } else {
        timed_out = true;
      }
    } catch (const ChannelClosed&) {
    }
    // Dead or too slow: either way this worker is finished.
    if (timed_out) ::kill(process_->pid, SIGKILL);
    const int status = reap(process_->pid, timed_out ? 5.0 : 2.0);
    process_->pid = 0;
    const std::string tail = log_tail(process_->log_path);
    ended = timed_out ? std::string() : describe_exit(status) + (tail.empty() ? "" : "; its last output:\n" + tail);
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
        if (task_body.empty()) task_body = task.to_json();
        request["task"] = task_body;
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
  const std::string prepared_key = task_key + "\n" + options.mode;
  if (prepared_.count(prepared_key) == 0) {
    const auto prepare_started = std::chrono::steady_clock::now();
    const double seconds = std::max(120.0, options.deadline_seconds);
    const auto reply = task_round_trip({{"type", "prepare"}, {"options", options_to_json(options)}}, seconds);
    if (!reply) {
      throw TaskError(timed_out ? fmt::format("task {}: preparing its reference (compile, reference runs, baseline "
                                              "timing) did not finish within {:.0f} s",
                                              task.name, seconds)
                                : fmt::format("task {}: the worker died while preparing the reference: {}",
                                              task.name, ended));
    }
    if (reply->at("type") == "error") forward_error(*reply);
    prepared_.insert(prepared_key);
    prepare_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - prepare_started).count();
  }

  Json program_documents = Json::object();
  for (const auto& [config, program] : programs) program_documents[config] = compiled_program_to_json(program);
  const Json request = {{"type", "evaluate"},
                        {"candidate", candidate.to_json()},
                        {"programs", program_documents},
                        {"options", options_to_json(options)}};
  const auto reply = task_round_trip(request, options.deadline_seconds);
  if (!reply) {
    if (timed_out) {
      return failed_evaluation(task, candidate, settings_.backend, device_.name, Status::timeout,
                               fmt::format("did not finish within the deadline of {:.3g} s; the worker was killed "
                                           "(an endless loop, a deadlock, or far too much work per launch)",
                                           options.deadline_seconds));
    }
    return failed_evaluation(task, candidate, settings_.backend, device_.name, Status::crashed,
                             "the candidate crashed the worker: " + ended);
  }
  if (reply->at("type") == "error") forward_error(*reply);
  Evaluation evaluation = Evaluation::from_json(reply->at("evaluation").get<std::string>(), "<worker reply>");
  if (prepare_seconds > 0.0) evaluation.stage_seconds["reference"] += prepare_seconds;
  if (reply->value("exiting", false)) {
    // The device context is lost: this worker is finished; the next evaluation starts another.
    reap(process_->pid, 5.0);
    process_->pid = 0;
    stop();
  }
  return evaluation;
}

// ------------------------------------------------------------------------------------------ worker side

namespace {

struct WorkerArguments {
  std::string backend;
  int device = 0;
  std::string cache_dir;
  long parent = 0;
  int protocol = 1;  // a parent that does not pass --protocol predates version 2
  int task_cache_entries = 8;
  std::int64_t task_cache_bytes = std::int64_t(2) << 30;
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

void send_json(int fd, const Json& message) { write_all_blocking(fd, frame(message.dump())); }

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
  if (::getppid() != static_cast<pid_t>(arguments.parent)) return 3;
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
  Harness harness(*backend, resolve_cache_dir(arguments.cache_dir));
  harness.set_measure_peaks(false);
  TaskCache tasks(arguments.task_cache_entries, arguments.task_cache_bytes);
  // The request's task: stored first when the request carries its body, else looked up by key.
  auto task_of = [&](const Json& request) -> const Task& {
    const std::string key = request.at("task_key").get<std::string>();
    if (const auto body = request.find("task"); body != request.end()) {
      const auto& text = body->get_ref<const std::string&>();
      return tasks.store(key, Task::from_json(text, "<task from the evaluator>"),
                         static_cast<std::int64_t>(text.size()));
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
        const Json request = Json::parse(*payload);
        type = request.at("type").get<std::string>();
        if (type == "peaks") {
          const DevicePeaks peaks = harness.peaks(true);
          send_json(channel, {{"type", "peaks"}, {"gbps", peaks.gbps}, {"gflops", peaks.gflops}});
        } else if (type == "prepare") {
          const Task& task = task_of(request);
          harness.prepare(task, options_from_json(request.at("options")));
          send_json(channel, {{"type", "prepared"}});
        } else if (type == "evaluate") {
          const Task& task = task_of(request);
          task_copy = task;
          candidate = Candidate::from_json(request.at("candidate").get<std::string>(), "<candidate from the evaluator>");
          ProgramSet programs;
          for (const auto& [config, document] : request.at("programs").items()) {
            programs[config] = compiled_program_from_json(document);
          }
          const Evaluation evaluation =
              harness.evaluate(task, *candidate, programs, options_from_json(request.at("options")));
          send_json(channel, {{"type", "evaluation"}, {"evaluation", evaluation.to_json()}});
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
          send_json(channel, {{"type", "evaluation"}, {"evaluation", evaluation.to_json()}, {"exiting", true}});
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
