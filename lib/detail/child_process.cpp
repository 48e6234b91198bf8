#include "detail/child_process.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <functional>
#include <future>
#include <mutex>
#include <thread>
#include <unordered_map>

#include "detail/file_cache.hpp"
#include "kernelsmith/error.hpp"

extern char** environ;

namespace kernelsmith::detail {
namespace {

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

}  // namespace

pid_t spawn_child(const std::vector<std::string>& arguments, const SpawnOptions& options) {
  return SpawnThread::instance().run([&]() -> pid_t {
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, options.child_socket, 0);
    posix_spawn_file_actions_addopen(&actions, 2, options.log_path.c_str(), O_WRONLY | O_APPEND, 0600);
    if (options.socket_as_stdout) {
      posix_spawn_file_actions_adddup2(&actions, options.child_socket, 1);
    } else {
      posix_spawn_file_actions_adddup2(&actions, 2, 1);
    }
    if (!options.working_directory.empty()) {
      posix_spawn_file_actions_addchdir_np(&actions, options.working_directory.c_str());
    }
    posix_spawnattr_t attributes;
    posix_spawnattr_init(&attributes);
    // Signal dispositions the caller set (Python ignores SIGPIPE) must not leak into the child.
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
    if (error != 0) throw Error(fmt::format("cannot start {}: {}", arguments[0], std::strerror(error)));
    return child;
  });
}

CapturedRun run_capturing(const std::vector<std::string>& arguments, double grace, std::size_t limit) {
  int sockets[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sockets) != 0) {
    throw Error(fmt::format("socketpair for {} failed: {}", arguments.front(), std::strerror(errno)));
  }
  const std::string log = make_log_file("kernelsmith-capture");
  SpawnOptions options;
  options.child_socket = sockets[1];
  options.socket_as_stdout = true;
  options.log_path = log;
  pid_t pid = 0;
  try {
    pid = spawn_child(arguments, options);
  } catch (...) {
    ::close(sockets[0]);
    ::close(sockets[1]);
    ::unlink(log.c_str());
    throw;
  }
  ::close(sockets[1]);
  CapturedRun run;
  char chunk[4096];
  while (true) {
    const ssize_t n = ::read(sockets[0], chunk, sizeof(chunk));
    if (n > 0 && run.output.size() < limit) {
      run.output.append(chunk, std::min(static_cast<std::size_t>(n), limit - run.output.size()));
    }
    if (n == 0 || (n < 0 && errno != EINTR)) break;
  }
  ::close(sockets[0]);
  run.status = reap_child(pid, grace);
  if (const auto text = read_whole_file(log)) run.log = text->substr(0, limit);
  ::unlink(log.c_str());
  return run;
}

int reap_child(pid_t pid, double grace) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                                             std::chrono::duration<double>(grace));
  int status = 0;
  while (true) {
    const pid_t done = ::waitpid(pid, &status, WNOHANG);
    if (done == pid) return status;
    if (done < 0 && errno != EINTR) return -1;
    if (std::chrono::steady_clock::now() >= until) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  ::kill(pid, SIGKILL);
  while (true) {
    const pid_t done = ::waitpid(pid, &status, 0);
    if (done == pid) return status;
    if (done < 0 && errno != EINTR) return -1;
  }
}

std::string describe_exit(int status, const std::string& who) {
  if (status == -1) return fmt::format("{} ended (its exit status is unknown)", who);
  if (WIFSIGNALED(status)) return fmt::format("{} was killed by {}", who, signal_name(WTERMSIG(status)));
  if (WIFEXITED(status)) return fmt::format("{} exited with status {}", who, WEXITSTATUS(status));
  return fmt::format("{} ended", who);
}

std::string temporary_folder() {
  const char* folder = std::getenv("TMPDIR");
  return folder != nullptr && *folder != '\0' ? folder : "/tmp";
}

std::string make_log_file(const std::string& prefix) {
  std::string path = temporary_folder() + "/" + prefix + "-XXXXXX";
  const int fd = ::mkstemp(path.data());
  if (fd < 0) {
    throw Error(fmt::format("cannot create a log file for {} in {}: {}", prefix, temporary_folder(), std::strerror(errno)));
  }
  ::close(fd);
  return path;
}

std::string log_tail(const std::string& path, std::size_t max_lines, std::size_t max_bytes) {
  const auto text = read_whole_file(path);
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

}  // namespace kernelsmith::detail
