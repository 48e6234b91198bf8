// kernelsmith-sandbox: starts a program confined (docs/security.md).
//
//   kernelsmith-sandbox [--scratch DIR] [--write DIR]... [--read DIR]... [--memory BYTES] [--file-size BYTES]
//                       [--processes N] [--open-files N] [--parent PID] [--no-separate-user] [--report]
//                       [--without network|processes|ipc|filesystem|user|syscalls]...
//                       -- PROGRAM [ARGUMENTS...]
//
// Order: resource limits; namespaces (network, pid, ipc, mount; a user namespace when not root); the new pid
// namespace's first process mounts a /proc and /dev/shm of its own and starts the program's process, which
// applies Landlock, the separate user and the seccomp filter, and execs. The first process reaps and waits; the
// launcher stays outside the namespace, waits, and ends the way the program ended. When the launcher is
// killed the namespace ends, and with it the program and everything it started. With
// --report the confined process prints what holds, as JSON, instead of starting the program: the probe
// behind kernelsmith::sandbox_status(). Inside a sandbox already (KERNELSMITH_SANDBOXED is set) the
// namespaces are inherited and only the filesystem rules are narrowed to the new scratch folder. --without
// leaves a protection out, reported off: to find which one a program cannot live with.
#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "sandbox/confinement.hpp"
#include "sandbox/installation.hpp"

namespace {

using kernelsmith::sandbox::LaunchPolicy;
using kernelsmith::sandbox::Outcome;

constexpr int kLauncherFailed = 125;  // like env(1) and timeout(1): the launcher, not the program, failed

[[noreturn]] void fail(const std::string& message) {
  std::fprintf(stderr, "kernelsmith-sandbox: %s\n", message.c_str());
  std::exit(kLauncherFailed);
}

std::uint64_t number(const char* flag, const char* text) {
  char* end = nullptr;
  errno = 0;
  const unsigned long long value = std::strtoull(text, &end, 10);
  if (errno != 0 || end == text || *end != '\0') fail(std::string(flag) + " takes a number, not '" + text + "'");
  return value;
}

LaunchPolicy parse(int argc, char** argv) {
  LaunchPolicy policy;
  int i = 1;
  for (; i < argc; ++i) {
    const std::string flag = argv[i];
    if (flag == "--") {
      ++i;
      break;
    }
    if (flag == "--report") {
      policy.report = true;
      continue;
    }
    if (flag == "--no-separate-user") {
      policy.try_separate_user = false;
      continue;
    }
    if (i + 1 >= argc) fail(flag + " needs a value (usage: kernelsmith-sandbox [options] -- PROGRAM ...)");
    const char* value = argv[++i];
    if (flag == "--scratch") policy.scratch = value;
    else if (flag == "--write") policy.writable.push_back(value);
    else if (flag == "--read") policy.readable.push_back(value);
    else if (flag == "--memory") policy.memory_bytes = number("--memory", value);
    else if (flag == "--file-size") policy.file_size_bytes = number("--file-size", value);
    else if (flag == "--processes") policy.processes = number("--processes", value);
    else if (flag == "--open-files") policy.open_files = number("--open-files", value);
    else if (flag == "--without") policy.without.push_back(value);
    else if (flag == "--parent") policy.parent = static_cast<long>(number("--parent", value));
    else fail("unknown option " + flag);
  }
  for (; i < argc; ++i) policy.command.push_back(argv[i]);
  if (policy.command.empty() && !policy.report) fail("no program to start (usage: ... -- PROGRAM [ARGUMENTS...])");
  return policy;
}

std::string json_string(const std::string& text) {
  std::string out = "\"";
  for (const char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char escaped[8];
      std::snprintf(escaped, sizeof(escaped), "\\u%04x", c);
      out += escaped;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

void print_report(const std::vector<Outcome>& outcomes) {
  std::string text = "{\"protections\": [";
  for (std::size_t i = 0; i < outcomes.size(); ++i) {
    const Outcome& o = outcomes[i];
    text += (i ? ", " : "") + std::string("{\"name\": ") + json_string(o.name) + ", \"on\": " +
            (o.on ? "true" : "false") + ", \"required\": " + (o.required ? "true" : "false") +
            ", \"detail\": " + json_string(o.detail) + "}";
  }
  text += "]}\n";
  std::fputs(text.c_str(), stdout);
  std::fflush(stdout);
}

pid_t g_program = 0;

// A request to stop (SIGTERM, SIGHUP) becomes SIGKILL: the first process of a pid namespace ignores the signals
// it has no handler for when they come from outside, and the program must end whatever it does with them.
void stop_program(int) {
  if (g_program > 0) ::kill(g_program, SIGKILL);
}

void forward_stop_requests(pid_t program) {
  g_program = program;
  struct sigaction action {};
  action.sa_handler = stop_program;
  sigemptyset(&action.sa_mask);
  for (const int signal : {SIGTERM, SIGHUP}) ::sigaction(signal, &action, nullptr);
  // Ctrl-C in a terminal goes to the whole foreground process group, the program included, which decides for
  // itself (the worker ignores it, so that an evaluation in flight survives the caller's interrupt).
  ::signal(SIGINT, SIG_IGN);
  ::signal(SIGQUIT, SIG_IGN);
}

// Ends this process the way the program ended (its wait status).
[[noreturn]] void end_as(int status) {
  if (WIFSIGNALED(status)) {
    const int signal = WTERMSIG(status);
    ::signal(signal, SIG_DFL);
    sigset_t unblock;
    sigemptyset(&unblock);
    sigaddset(&unblock, signal);
    ::sigprocmask(SIG_UNBLOCK, &unblock, nullptr);
    ::raise(signal);
    std::_Exit(128 + signal);
  }
  std::_Exit(WIFEXITED(status) ? WEXITSTATUS(status) : kLauncherFailed);
}

// The namespace's first process: starts nothing itself but the program, reaps whatever is left to it, and
// when the program ends, reports its wait status through `report` and exits, which ends every process still
// in the namespace. The program is not the first process: a first process ignores the signals it sends
// itself (abort() would not end it).
[[noreturn]] void be_namespace_init(pid_t program, int report) {
  forward_stop_requests(program);
  ::close(0);  // the program's end is seen at once by whoever reads its output
  ::close(1);
  while (true) {
    int status = 0;
    const pid_t ended = ::waitpid(-1, &status, 0);
    if (ended == program) {
      (void)!::write(report, &status, sizeof(status));
      std::_Exit(0);
    }
    if (ended < 0 && errno != EINTR) std::_Exit(kLauncherFailed);
  }
}

// The launcher's side: wait for the namespace's first process, and end as the program ended.
[[noreturn]] void relay(pid_t init, int report) {
  forward_stop_requests(init);
  ::close(0);
  ::close(1);
  int status = 0;
  while (::waitpid(init, &status, 0) < 0) {
    if (errno != EINTR) fail(std::string("waitpid failed: ") + std::strerror(errno));
  }
  int program_status = 0;
  if (::read(report, &program_status, sizeof(program_status)) == static_cast<ssize_t>(sizeof(program_status))) {
    end_as(program_status);
  }
  end_as(status);  // the first process itself was killed (the launcher was asked to stop)
}

// KERNELSMITH_SANDBOXED tells the programs inside, and a launcher started from inside, that they are confined;
// "private-proc" when /proc is the sandbox's own (a nested launcher then leaves it writable, as its processes
// that load the GPU driver need).
constexpr const char* kPrivateProc = "private-proc";

void set_environment(const LaunchPolicy& policy) {
  ::setenv("KERNELSMITH_SANDBOXED", policy.private_proc ? kPrivateProc : "1", 1);
  if (policy.scratch.empty()) return;
  // Caches and temporary files of everything inside (Python, Triton, PoCL, the CUDA JIT) land in the
  // scratch folder, the one place it may write; packages installed for the user stay where they were.
  if (const char* home = std::getenv("HOME"); home != nullptr && std::getenv("PYTHONUSERBASE") == nullptr) {
    ::setenv("PYTHONUSERBASE", (std::string(home) + "/.local").c_str(), 1);
  }
  ::setenv("HOME", policy.scratch.c_str(), 1);
  ::setenv("TMPDIR", policy.scratch.c_str(), 1);
  ::setenv("XDG_CACHE_HOME", (policy.scratch + "/.cache").c_str(), 1);
  ::setenv("CUDA_CACHE_PATH", (policy.scratch + "/.nv").c_str(), 1);
  if (::chdir(policy.scratch.c_str()) != 0) fail("cannot enter the scratch folder " + policy.scratch);
}

Outcome inherited(const char* name) {
  return {name, true, "inherited from the enclosing sandbox", true};
}

}  // namespace

int main(int argc, char** argv) {
  LaunchPolicy policy = parse(argc, argv);
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (policy.parent > 0 && ::getppid() != static_cast<pid_t>(policy.parent)) return kLauncherFailed;
  // Packages installed for the user, where there are any (a folder that does not exist would only make the
  // separate user's check fail for nothing).
  if (const char* home = std::getenv("HOME"); home != nullptr) {
    const std::string user_packages = std::string(home) + "/.local/lib";
    if (::access(user_packages.c_str(), F_OK) == 0) policy.readable.push_back(user_packages);
  }
  for (auto& entry : kernelsmith::sandbox::search_path_entries(std::getenv("PYTHONPATH"))) {
    policy.readable.push_back(std::move(entry));
  }

  const char* enclosing = std::getenv("KERNELSMITH_SANDBOXED");
  const bool nested = enclosing != nullptr;
  if (nested) policy.private_proc = std::string(enclosing) == kPrivateProc;
  std::vector<Outcome> outcomes;
  outcomes.push_back(kernelsmith::sandbox::apply_limits(policy));
  if (nested) {
    for (const char* name : {"network", "processes", "ipc"}) outcomes.push_back(inherited(name));
  } else {
    auto namespaces = kernelsmith::sandbox::enter_namespaces(policy);
    if (namespaces.processes.on) {
      int report[2];
      if (::pipe2(report, O_CLOEXEC) != 0) fail(std::string("pipe failed: ") + std::strerror(errno));
      const pid_t init = ::fork();
      if (init < 0) fail(std::string("fork failed: ") + std::strerror(errno));
      if (init > 0) {
        ::close(report[1]);
        relay(init, report[0]);
      }
      ::close(report[0]);
      ::prctl(PR_SET_PDEATHSIG, SIGKILL);  // the launcher's death ends the namespace, and all in it
      policy.private_proc = kernelsmith::sandbox::make_private_mounts(namespaces, policy);
      const pid_t program = ::fork();
      if (program < 0) fail(std::string("fork failed: ") + std::strerror(errno));
      if (program > 0) be_namespace_init(program, report[1]);
      ::close(report[1]);
      ::prctl(PR_SET_PDEATHSIG, SIGKILL);  // and the first process's death ends the program
    } else {
      policy.private_proc = kernelsmith::sandbox::make_private_mounts(namespaces, policy);
    }
    outcomes.push_back(namespaces.network);
    outcomes.push_back(namespaces.processes);
    outcomes.push_back(namespaces.ipc);
  }
  set_environment(policy);
  auto unless_left_out = [&](const char* name, bool required, auto apply) {
    outcomes.push_back(policy.leaves_out(name) ? Outcome{name, false, std::string("left out (--without ") + name + ")",
                                                         required}
                                               : apply());
  };
  unless_left_out("filesystem", true, [&] { return kernelsmith::sandbox::apply_landlock(policy); });
  unless_left_out("user", false, [&] { return kernelsmith::sandbox::drop_to_separate_user(policy); });
  unless_left_out("syscalls", true, [&] { return kernelsmith::sandbox::apply_seccomp(); });
  for (const auto& outcome : outcomes) {
    if (!outcome.on && outcome.required && !policy.report) {
      std::fprintf(stderr, "kernelsmith-sandbox: %s protection off: %s\n", outcome.name.c_str(), outcome.detail.c_str());
    }
  }
  if (policy.report) {
    kernelsmith::sandbox::verify(outcomes, policy);
    print_report(outcomes);
    return 0;
  }
  ::execvp(policy.command[0].c_str(), argv + (argc - static_cast<int>(policy.command.size())));
  std::fprintf(stderr, "kernelsmith-sandbox: cannot start %s: %s\n", policy.command[0].c_str(), std::strerror(errno));
  return 127;
}
