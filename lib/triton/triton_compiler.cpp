#include "triton/triton_compiler.hpp"

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
#include <memory>
#include <mutex>
#include <thread>

#include "detail/base64.hpp"
#include "detail/child_process.hpp"
#include "detail/dynamic_library.hpp"
#include "detail/json_util.hpp"
#include "kernelsmith/error.hpp"

namespace kernelsmith {
namespace detail {
namespace {

using Clock = std::chrono::steady_clock;
namespace fs = std::filesystem;

std::mutex& settings_mutex() {
  static std::mutex mutex;
  return mutex;
}
std::string& configured_python() {
  static std::string python;
  return python;
}

std::string environment(const char* name) {
  const char* value = std::getenv(name);
  return value != nullptr ? std::string(value) : std::string();
}

/// The interpreter: $KERNELSMITH_PYTHON, the configured one, else python3 found through the PATH.
std::vector<std::string> python_command() {
  std::string python = environment("KERNELSMITH_PYTHON");
  if (python.empty()) {
    std::lock_guard<std::mutex> lock(settings_mutex());
    python = configured_python();
  }
  if (!python.empty()) return {python};
  return {"/usr/bin/env", "python3"};
}

/// The helper script, or "" with `looked` saying where it was looked for.
std::string helper_script(std::string* looked) {
  std::vector<std::string> candidates;
  if (std::string given = environment("KERNELSMITH_TRITON_HELPER"); !given.empty()) {
    candidates.push_back(given);
  } else {
    const std::string library = library_directory();
    if (!library.empty()) {
      candidates.push_back((fs::path(library) / "triton_compile.py").string());  // wheel: beside the library
      candidates.push_back((fs::path(library) / ".." / "share" / "kernelsmith" / "triton_compile.py").string());
    }
#ifdef KERNELSMITH_SOURCE_TRITON_HELPER
    candidates.push_back(KERNELSMITH_SOURCE_TRITON_HELPER);  // an uninstalled build
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

std::string command_text(const std::vector<std::string>& python, const std::string& script) {
  std::string text;
  for (const auto& part : python) text += (text.empty() ? "" : " ") + part;
  return text + " " + script;
}

/// One helper process: the parent's end of a socket that is the helper's stdin and stdout.
class Helper {
 public:
  Helper() {
    std::string looked;
    script_ = helper_script(&looked);
    if (script_.empty()) {
      throw BackendUnavailableError(fmt::format(
          "the Triton compile helper triton_compile.py was not found (looked in {}); reinstall kernelsmith or set "
          "KERNELSMITH_TRITON_HELPER to its path",
          looked));
    }
    python_ = python_command();
    char folder[] = "/tmp/kernelsmith-triton-XXXXXX";
    if (::mkdtemp(folder) == nullptr) {
      throw Error(fmt::format("cannot create a folder for the Triton compile helper in /tmp: {}", std::strerror(errno)));
    }
    workdir_ = folder;
    log_path_ = make_log_file("kernelsmith-triton-log");
    int sockets[2];
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sockets) != 0) {
      cleanup();
      throw Error(fmt::format("socketpair for the Triton compile helper failed: {}", std::strerror(errno)));
    }
    // The script is run by path, from its own empty folder, so that neither the caller's folder nor the
    // script's (the kernelsmith package) can shadow the modules a candidate imports.
    std::vector<std::string> arguments = python_;
    arguments.insert(arguments.end(), {"-c",
                                       "import runpy, sys; sys.argv = [sys.argv[1]] + sys.argv[2:]; "
                                       "runpy.run_path(sys.argv[0], run_name='__main__')",
                                       script_, "--workdir", workdir_});
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
      throw BackendUnavailableError(fmt::format("the Triton compile helper ({}) cannot start: {}",
                                                command_text(python_, script_), e.what()));
    }
    ::close(sockets[1]);
    fd_ = sockets[0];
  }

  ~Helper() {
    if (fd_ >= 0) ::close(fd_);  // EOF ends an idle helper
    if (pid_ > 0) reap_child(pid_, 1.0);
    cleanup();
  }
  Helper(const Helper&) = delete;
  Helper& operator=(const Helper&) = delete;

  /// One request, one reply. Throws Error (the helper is then finished: the caller drops it) when the
  /// helper dies or the deadline passes, and kills it in the second case.
  Json round_trip(const Json& request, double timeout_seconds) {
    const auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                             std::chrono::duration<double>(timeout_seconds));
    std::string line = request.dump() + "\n";
    std::size_t sent = 0;
    while (sent < line.size()) {
      if (!wait_for(POLLOUT, deadline)) return fail_timeout(timeout_seconds);
      const ssize_t n = ::send(fd_, line.data() + sent, line.size() - sent, MSG_NOSIGNAL);
      if (n < 0) {
        if (errno == EINTR || errno == EAGAIN) continue;
        return fail_died();
      }
      sent += static_cast<std::size_t>(n);
    }
    while (true) {
      const std::size_t newline = buffer_.find('\n');
      if (newline != std::string::npos) {
        const std::string reply = buffer_.substr(0, newline);
        buffer_.erase(0, newline + 1);
        try {
          return Json::parse(reply);
        } catch (const nlohmann::json::exception&) {
          throw Error(fmt::format("the Triton compile helper answered with something that is not JSON: {}",
                                  reply.substr(0, 200)));
        }
      }
      if (!wait_for(POLLIN, deadline)) return fail_timeout(timeout_seconds);
      char chunk[65536];
      const ssize_t n = ::recv(fd_, chunk, sizeof(chunk), 0);
      if (n == 0) return fail_died();
      if (n < 0) {
        if (errno == EINTR || errno == EAGAIN) continue;
        return fail_died();
      }
      buffer_.append(chunk, static_cast<std::size_t>(n));
    }
  }

  std::string command() const { return command_text(python_, script_); }

 private:
  bool wait_for(short events, Clock::time_point deadline) {
    while (true) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
      if (left <= 0) return false;
      pollfd entry{fd_, events, 0};
      const int ready = ::poll(&entry, 1, static_cast<int>(std::min<long long>(left, 1000)));
      if (ready > 0) return true;
      if (ready < 0 && errno != EINTR) return true;  // the read or write that follows reports the error
    }
  }

  [[noreturn]] Json fail_timeout(double timeout_seconds) {
    ::kill(pid_, SIGKILL);
    reap_child(pid_, 5.0);
    pid_ = 0;
    throw Error(fmt::format("the Triton compiler did not finish within {:g} s (the helper was stopped)", timeout_seconds));
  }

  [[noreturn]] Json fail_died() {
    const int status = reap_child(pid_, 2.0);
    pid_ = 0;
    const std::string tail = log_tail(log_path_, 12, 3000);
    throw Error(fmt::format("{} while compiling{}", describe_exit(status, "the Triton compile helper"),
                            tail.empty() ? std::string() : "; it printed:\n" + tail));
  }

  void cleanup() {
    std::error_code error;
    if (!workdir_.empty()) fs::remove_all(workdir_, error);
    if (!log_path_.empty()) ::unlink(log_path_.c_str());
  }

  std::vector<std::string> python_;
  std::string script_;
  std::string workdir_;
  std::string log_path_;
  pid_t pid_ = 0;
  int fd_ = -1;
  std::string buffer_;
};

/// The helpers not in use. A caller takes one (or starts one), and gives it back after a clean reply.
class HelperPool {
 public:
  static HelperPool& instance() {
    static HelperPool* pool = new HelperPool();  // lives as long as the process; helpers end with it
    return *pool;
  }

  std::unique_ptr<Helper> take() {
    // Helpers started under another interpreter or script (the settings changed since) are retired.
    const std::string wanted = command_text(python_command(), helper_script(nullptr));
    std::vector<std::unique_ptr<Helper>> retired;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      while (!idle_.empty()) {
        auto helper = std::move(idle_.back());
        idle_.pop_back();
        if (helper->command() == wanted) return helper;
        retired.push_back(std::move(helper));
      }
    }
    return std::make_unique<Helper>();
  }

  void give_back(std::unique_ptr<Helper> helper) {
    std::lock_guard<std::mutex> lock(mutex_);
    const std::size_t keep = std::max(2u, std::thread::hardware_concurrency());
    if (idle_.size() < keep) idle_.push_back(std::move(helper));
  }

 private:
  std::mutex mutex_;
  std::vector<std::unique_ptr<Helper>> idle_;
};

/// One request through a pooled helper.
Json ask_helper(const Json& request, double timeout_seconds) {
  std::unique_ptr<Helper> helper = HelperPool::instance().take();
  Json reply = helper->round_trip(request, timeout_seconds);  // throws: the helper is dropped
  HelperPool::instance().give_back(std::move(helper));
  return reply;
}

template <typename T>
T value_or(const Json& json, const char* key, T fallback) {
  const auto found = json.find(key);
  if (found == json.end() || found->is_null()) return fallback;
  return found->get<T>();
}

}  // namespace

TritonKernelResult compile_triton_kernel(const std::string& source, const TritonKernelSpec& spec,
                                         const std::string& target, double timeout_seconds,
                                         bool reverse_program_ids) {
  Json constexprs = Json::object();
  for (const auto& [name, value] : spec.constexprs) constexprs[name] = value;
  const Json request = {{"source", source},       {"kernel", spec.kernel},         {"signature", spec.signature},
                        {"constexprs", constexprs}, {"num_warps", spec.num_warps}, {"num_stages", spec.num_stages},
                        {"target", target},       {"aligned", spec.aligned},       {"filename", "candidate.py"},
                        {"reverse_program_ids", reverse_program_ids}};
  const Json reply = ask_helper(request, timeout_seconds);
  TritonKernelResult result;
  result.ok = value_or<bool>(reply, "ok", false);
  if (!result.ok) {
    result.stage = value_or<std::string>(reply, "stage", "compile");
    result.line = value_or<int>(reply, "line", 0);
    result.message = value_or<std::string>(reply, "message", "the Triton compiler rejected the kernel");
    if (result.stage == "triton") throw BackendUnavailableError(result.message);
    return result;
  }
  KernelBinary& binary = result.binary;
  binary.name = spec.name;
  binary.symbol = reply.at("name").get<std::string>();
  binary.binary = base64_decode(reply.at("cubin").get<std::string>());
  binary.block_threads = 32 * reply.at("num_warps").get<int>();
  binary.num_ctas = value_or<int>(reply, "num_ctas", 1);
  binary.shared_bytes = value_or<std::size_t>(reply, "shared", 0);
  binary.scratch_pointers = value_or<int>(reply, "scratch_pointers", 2);
  binary.global_scratch_bytes = value_or<std::size_t>(reply, "global_scratch_size", 0);
  binary.global_scratch_align = std::max<std::size_t>(1, value_or<std::size_t>(reply, "global_scratch_align", 1));
  binary.profile_scratch_bytes = value_or<std::size_t>(reply, "profile_scratch_size", 0);
  binary.profile_scratch_align = std::max<std::size_t>(1, value_or<std::size_t>(reply, "profile_scratch_align", 1));
  binary.param_count = value_or<int>(reply, "param_count", -1);
  result.resources.name = spec.name;
  result.resources.registers = value_or<int>(reply, "registers", -1);
  const std::int64_t spills = value_or<std::int64_t>(reply, "spill_store_bytes", -1);
  result.resources.spill_store_bytes = spills;
  result.resources.spill_load_bytes = value_or<std::int64_t>(reply, "spill_load_bytes", -1);
  result.ptxas_log = value_or<std::string>(reply, "ptxas_log", "");
  return result;
}

CompiledProgram compile_triton_program(const std::string& source, const std::vector<TritonKernelSpec>& specs,
                                       const std::string& target, double timeout_seconds, bool reverse_program_ids) {
  const auto start = Clock::now();
  CompiledProgram program;
  program.language = "triton";
  program.target = target;
  program.report.target = target;
  program.report.ok = true;
  std::string log;
  for (const auto& spec : specs) {
    // The timeout covers the whole program, as for one NVRTC compile.
    const double left = timeout_seconds - std::chrono::duration<double>(Clock::now() - start).count();
    if (left <= 0.0) {
      throw Error(fmt::format("the Triton compiler did not finish the candidate's {} kernels within {:g} s",
                              specs.size(), timeout_seconds));
    }
    TritonKernelResult result = compile_triton_kernel(source, spec, target, left, reverse_program_ids);
    if (!result.ok) {
      program.report.ok = false;
      // The helper's message names the candidate's line where it knows it; the plan line says which
      // launch asked for this specialization.
      program.report.log = fmt::format("{}\n(compiling {} for the launch on line {}, stage {})", result.message,
                                       spec.name, spec.line, result.stage);
      program.kernel_binaries.clear();
      break;
    }
    if (!result.ptxas_log.empty()) log += fmt::format("{}:\n{}\n", spec.name, result.ptxas_log);
    program.report.kernels.push_back(result.resources);
    program.kernel_binaries.push_back(std::move(result.binary));
  }
  if (program.report.ok) program.report.log = log;
  program.report.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  return program;
}

std::string triton_version_for_cache() {
  static std::once_flag once;
  static std::string version;
  std::call_once(once, [] { version = triton_status().version; });
  return version;
}

}  // namespace detail

TritonStatus triton_status() {
  TritonStatus status;
  std::string looked;
  status.helper = detail::helper_script(&looked);
  for (const auto& part : detail::python_command()) status.python += (status.python.empty() ? "" : " ") + part;
  if (status.helper.empty()) {
    status.reason = fmt::format("the Triton compile helper triton_compile.py was not found (looked in {})", looked);
    return status;
  }
  try {
    const detail::Json reply = detail::ask_helper({{"op", "status"}}, 120.0);
    status.available = detail::value_or<bool>(reply, "available", false);
    status.version = detail::value_or<std::string>(reply, "version", "");
    status.reason = detail::value_or<std::string>(reply, "reason", "");
  } catch (const std::exception& e) {
    status.reason = e.what();
  }
  return status;
}

void set_triton_python(const std::string& python) {
  std::lock_guard<std::mutex> lock(detail::settings_mutex());
  detail::configured_python() = python;
}

}  // namespace kernelsmith
