#include "detail/python_helper.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <mutex>
#include <thread>

#include "detail/child_process.hpp"
#include "detail/dynamic_library.hpp"
#include "detail/sandbox.hpp"
#include "kernelsmith/error.hpp"
#include "kernelsmith/python_helpers.hpp"

namespace kernelsmith {
namespace detail {
namespace {

namespace fs = std::filesystem;

std::mutex& settings_mutex() {
  static std::mutex mutex;
  return mutex;
}
std::string& configured_python() {
  static std::string python;
  return python;
}

std::string environment(const std::string& name) {
  const char* value = std::getenv(name.c_str());
  return value != nullptr ? std::string(value) : std::string();
}

long long now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace

std::string configured_helper_python() {
  std::lock_guard<std::mutex> lock(settings_mutex());
  return configured_python();
}

std::vector<std::string> helper_python_command() {
  std::string python = environment("KERNELSMITH_PYTHON");
  if (python.empty()) python = configured_helper_python();
  if (!python.empty()) return {python};
  return {"/usr/bin/env", "python3"};
}

std::string helper_python_text() { return fmt::format("{}", fmt::join(helper_python_command(), " ")); }

std::string find_helper_script(const PythonHelperKind& kind, std::string* looked) {
  std::vector<std::string> candidates;
  if (std::string given = environment(kind.path_variable); !given.empty()) {
    candidates.push_back(given);
  } else {
    const std::string library = library_directory();
    if (!library.empty()) {
      candidates.push_back((fs::path(library) / kind.script).string());  // wheel: beside the library
      candidates.push_back((fs::path(library) / ".." / "share" / "kernelsmith" / kind.script).string());
    }
#ifdef KERNELSMITH_SOURCE_PYTHON_DIR
    candidates.push_back((fs::path(KERNELSMITH_SOURCE_PYTHON_DIR) / kind.script).string());  // uninstalled build
#endif
  }
  for (const auto& path : candidates) {
    std::error_code error;
    if (fs::is_regular_file(path, error)) return fs::path(path).lexically_normal().string();
  }
  if (looked != nullptr) {
    *looked = candidates.empty() ? std::string("nowhere") : fmt::format("{}", fmt::join(candidates, ", "));
  }
  return {};
}

std::vector<std::string> helper_readable_folders() {
  std::vector<std::string> folders = interpreter_folders(helper_python_command());
  const std::string library = library_directory();
  if (!library.empty()) folders.push_back(library);  // the wheel: the helpers' scripts sit beside the library
#ifdef KERNELSMITH_SOURCE_PYTHON_DIR
  folders.push_back(KERNELSMITH_SOURCE_PYTHON_DIR);  // an uninstalled build
#endif
  return folders;
}

namespace {

std::string helper_command(const PythonHelperKind& kind) {
  return helper_python_text() + " " + find_helper_script(kind, nullptr);
}

}  // namespace

PythonHelper::PythonHelper(const PythonHelperKind& kind) : kind_(kind) {
  std::string looked;
  const std::string script = find_helper_script(kind_, &looked);
  if (script.empty()) {
    throw BackendUnavailableError(fmt::format("{} {} was not found (looked in {}); reinstall kernelsmith or set {} to "
                                              "its path",
                                              kind_.label, kind_.script, looked, kind_.path_variable));
  }
  const std::vector<std::string> python = helper_python_command();
  command_ = helper_python_text() + " " + script;
  workdir_ = make_scratch_folder("kernelsmith-helper");
  log_path_ = make_log_file("kernelsmith-helper-log");
  int sockets[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sockets) != 0) {
    cleanup();
    throw Error(fmt::format("socketpair for {} failed: {}", kind_.label, std::strerror(errno)));
  }
  // The script is run by path, from its own empty folder, so that neither the caller's folder nor the
  // script's (the kernelsmith package) can shadow the modules that the files it executes import.
  std::vector<std::string> arguments = python;
  arguments.insert(arguments.end(), {"-c",
                                     "import runpy, sys; sys.argv = [sys.argv[1]] + sys.argv[2:]; "
                                     "runpy.run_path(sys.argv[0], run_name='__main__')",
                                     script, "--workdir", workdir_});
  // Confined (docs/security.md): what it runs may come from a candidate or a problem file. Its private folder
  // is the one place it writes.
  SandboxPolicy policy;
  policy.scratch = workdir_;
  policy.readable = helper_readable_folders();
  policy.readable.push_back(fs::path(script).parent_path().string());
  if (kind_.readable_folders != nullptr) {
    for (auto& folder : kind_.readable_folders()) policy.readable.push_back(std::move(folder));
  }
  if (kind_.writable_folders != nullptr) writable_ = policy.writable = kind_.writable_folders();
  arguments = confine_command(policy, arguments);
  SpawnOptions options;
  options.child_socket = sockets[1];
  options.socket_as_stdout = true;
  options.log_path = log_path_;
  options.working_directory = workdir_;
  try {
    pid_ = spawn_child(arguments, options);
  } catch (const Error& e) {
    ::close(sockets[0]);
    ::close(sockets[1]);
    cleanup();
    throw BackendUnavailableError(fmt::format("{} ({}) cannot start: {}", kind_.label, command_, e.what()));
  }
  ::close(sockets[1]);
  fd_ = sockets[0];
}

PythonHelper::~PythonHelper() {
  if (fd_ >= 0) ::close(fd_);  // EOF ends an idle helper
  if (pid_ > 0) reap_child(pid_, 1.0);
  cleanup();
}

Json PythonHelper::round_trip(const Json& request, double timeout_seconds) {
  const long long deadline = now_ms() + static_cast<long long>(timeout_seconds * 1000.0);
  const std::string line = request.dump() + "\n";
  std::size_t sent = 0;
  while (sent < line.size()) {
    if (!wait_for(POLLOUT, deadline)) fail_timeout(timeout_seconds);
    const ssize_t n = ::send(fd_, line.data() + sent, line.size() - sent, MSG_NOSIGNAL);
    if (n < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      fail_died();
    }
    sent += static_cast<std::size_t>(n);
  }
  while (true) {
    const std::size_t newline = buffer_.find('\n');
    if (newline != std::string::npos) {
      const std::string reply = buffer_.substr(0, newline);
      buffer_.erase(0, newline + 1);
      try {
        return parse_json(reply, fmt::format("the reply of the {}", kind_.label));
      } catch (const ValidationError& error) {
        throw Error(fmt::format("{} answered with something that is not JSON ({}): {}", kind_.label, error.what(),
                                reply.substr(0, 200)));
      }
    }
    if (!wait_for(POLLIN, deadline)) fail_timeout(timeout_seconds);
    char chunk[65536];
    const ssize_t n = ::recv(fd_, chunk, sizeof(chunk), 0);
    if (n == 0) fail_died();
    if (n < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      fail_died();
    }
    buffer_.append(chunk, static_cast<std::size_t>(n));
  }
}

bool PythonHelper::wait_for(short events, long long deadline_ms) {
  while (true) {
    const long long left = deadline_ms - now_ms();
    if (left <= 0) return false;
    pollfd entry{fd_, events, 0};
    const int ready = ::poll(&entry, 1, static_cast<int>(std::min<long long>(left, 1000)));
    if (ready > 0) return true;
    if (ready < 0 && errno != EINTR) return true;  // the read or write that follows reports the error
  }
}

void PythonHelper::fail_timeout(double timeout_seconds) {
  ::kill(pid_, SIGKILL);
  reap_child(pid_, 5.0);
  pid_ = 0;
  throw Error(fmt::format("{} did not finish {} within {:g} s (it was stopped)", kind_.label, kind_.activity,
                          timeout_seconds));
}

void PythonHelper::fail_died() {
  const int status = reap_child(pid_, 2.0);
  pid_ = 0;
  const std::string tail = log_tail(log_path_, 12, 3000);
  throw Error(fmt::format("{} while {} ({}){}", describe_exit(status, kind_.label), kind_.activity, command_,
                          tail.empty() ? std::string() : "; it printed:\n" + tail));
}

void PythonHelper::cleanup() {
  std::error_code error;
  if (!workdir_.empty()) fs::remove_all(workdir_, error);
  if (!log_path_.empty()) ::unlink(log_path_.c_str());
}

struct PythonHelperPool::State {
  std::mutex mutex;
  std::vector<std::unique_ptr<PythonHelper>> idle;
};

PythonHelperPool::PythonHelperPool(PythonHelperKind kind)
    : kind_(std::move(kind)), state_(std::make_shared<State>()) {}

PythonHelperPool& PythonHelperPool::of(const PythonHelperKind& kind) {
  static std::mutex mutex;
  static auto* pools = new std::map<std::string, std::unique_ptr<PythonHelperPool>>();  // helpers end with the process
  std::lock_guard<std::mutex> lock(mutex);
  auto& pool = (*pools)[kind.script];
  if (!pool) pool.reset(new PythonHelperPool(kind));
  return *pool;
}

std::unique_ptr<PythonHelper> PythonHelperPool::take() {
  const std::string wanted = helper_command(kind_);
  const std::vector<std::string> writable =
      kind_.writable_folders != nullptr ? kind_.writable_folders() : std::vector<std::string>();
  std::vector<std::unique_ptr<PythonHelper>> retired;  // ended outside the lock
  {
    std::lock_guard<std::mutex> lock(state_->mutex);
    while (!state_->idle.empty()) {
      auto helper = std::move(state_->idle.back());
      state_->idle.pop_back();
      if (helper->command() == wanted && helper->writable() == writable) return helper;
      retired.push_back(std::move(helper));
    }
  }
  return std::make_unique<PythonHelper>(kind_);
}

void PythonHelperPool::give_back(std::unique_ptr<PythonHelper> helper) {
  std::lock_guard<std::mutex> lock(state_->mutex);
  const std::size_t keep =
      kind_.max_idle > 0 ? kind_.max_idle : std::max<std::size_t>(2, std::thread::hardware_concurrency());
  if (state_->idle.size() < keep) state_->idle.push_back(std::move(helper));
}

void PythonHelperPool::clear() {
  std::vector<std::unique_ptr<PythonHelper>> ended;
  std::lock_guard<std::mutex> lock(state_->mutex);
  ended.swap(state_->idle);
}

Json ask_python_helper(const PythonHelperKind& kind, const Json& request, double timeout_seconds) {
  PythonHelperPool& pool = PythonHelperPool::of(kind);
  std::unique_ptr<PythonHelper> helper = pool.take();
  Json reply = helper->round_trip(request, timeout_seconds);  // throws: the helper is dropped
  pool.give_back(std::move(helper));
  return reply;
}

}  // namespace detail

void set_helper_python(const std::string& python) {
  std::lock_guard<std::mutex> lock(detail::settings_mutex());
  detail::configured_python() = python;
}

std::string helper_python() { return detail::helper_python_text(); }

}  // namespace kernelsmith
