#include "sandbox/confinement.hpp"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <net/if.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <string>

namespace kernelsmith::sandbox {
namespace {

// The unprivileged user a confined program runs as where the machine allows ("nobody" on Debian/Ubuntu).
constexpr uid_t kSeparateUser = 65534;
constexpr gid_t kSeparateGroup = 65534;

std::string error_text(const char* call) { return std::string(call) + " failed: " + std::strerror(errno); }

bool write_file(const std::string& path, const std::string& text) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) return false;
  const bool done = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  ::close(fd);
  return done;
}

std::string limit_text(std::uint64_t bytes) {
  if (bytes >= (1ull << 30)) return std::to_string(bytes >> 30) + " GiB";
  return std::to_string(bytes >> 20) + " MiB";
}

}  // namespace

Outcome apply_limits(const LaunchPolicy& policy) {
  Outcome outcome{"limits", true, "", true};
  std::string applied = "no core dumps";
  auto set = [&](int resource, std::uint64_t value, const char* label, const std::string& shown) {
    if (value == 0) return;
    rlimit limit{static_cast<rlim_t>(value), static_cast<rlim_t>(value)};
    if (::setrlimit(resource, &limit) != 0) {
      outcome.on = false;
      outcome.detail = std::string("setrlimit(") + label + ") failed: " + std::strerror(errno);
      return;
    }
    applied += std::string(", ") + label + " " + shown;
  };
  rlimit no_core{0, 0};
  ::setrlimit(RLIMIT_CORE, &no_core);
  set(RLIMIT_DATA, policy.memory_bytes, "memory", limit_text(policy.memory_bytes));
  set(RLIMIT_FSIZE, policy.file_size_bytes, "file size", limit_text(policy.file_size_bytes));
  set(RLIMIT_NPROC, policy.processes, "processes", std::to_string(policy.processes));
  set(RLIMIT_NOFILE, policy.open_files, "open files", std::to_string(policy.open_files));
  if (outcome.on) outcome.detail = applied;
  return outcome;
}

NamespaceResult enter_namespaces(const LaunchPolicy& policy) {
  NamespaceResult result;
  result.network = {"network", false, "left out (--without network)", true};
  result.processes = {"processes", false, "left out (--without processes)", true};
  result.ipc = {"ipc", false, "left out (--without ipc)", true};
  const uid_t uid = ::geteuid();
  const gid_t gid = ::getegid();
  int flags = CLONE_NEWNS | CLONE_NEWUTS;
  if (!policy.leaves_out("network")) flags |= CLONE_NEWNET;
  if (!policy.leaves_out("processes")) flags |= CLONE_NEWPID;
  if (!policy.leaves_out("ipc")) flags |= CLONE_NEWIPC;
  // Without root, a user namespace gives the capabilities the others need (the caller stays itself).
  if (uid != 0) flags |= CLONE_NEWUSER;
  if (::unshare(flags) != 0) {
    // One at a time, to say which the machine refuses.
    const int base = uid != 0 ? CLONE_NEWUSER : 0;
    if (base != 0 && ::unshare(base) != 0) {
      const std::string reason = error_text("unshare(CLONE_NEWUSER)") + " (unprivileged user namespaces are off?)";
      result.network.detail = result.processes.detail = result.ipc.detail = reason;
      result.mount_error = reason;
      return result;
    }
    auto try_one = [&](int flag, const char* call, Outcome& outcome) {
      if ((flags & flag) == 0) return;
      if (::unshare(flag) == 0) outcome.on = true; else outcome.detail = error_text(call);
    };
    try_one(CLONE_NEWNET, "unshare(CLONE_NEWNET)", result.network);
    try_one(CLONE_NEWPID, "unshare(CLONE_NEWPID)", result.processes);
    try_one(CLONE_NEWIPC, "unshare(CLONE_NEWIPC)", result.ipc);
    if (::unshare(CLONE_NEWNS) == 0) result.mount = true; else result.mount_error = error_text("unshare(CLONE_NEWNS)");
  } else {
    result.network.on = (flags & CLONE_NEWNET) != 0;
    result.processes.on = (flags & CLONE_NEWPID) != 0;
    result.ipc.on = (flags & CLONE_NEWIPC) != 0;
    result.mount = true;
  }
  if (uid != 0) {
    result.user = true;
    write_file("/proc/self/setgroups", "deny");
    write_file("/proc/self/uid_map", std::to_string(uid) + " " + std::to_string(uid) + " 1");
    write_file("/proc/self/gid_map", std::to_string(gid) + " " + std::to_string(gid) + " 1");
  }
  if (result.network.on) result.network.detail = "own network namespace: no interface up, no route anywhere";
  return result;
}

bool make_private_mounts(NamespaceResult& namespaces, const LaunchPolicy& policy) {
  bool private_proc = false;
  if (!namespaces.mount) {
    if (namespaces.processes.on) {
      namespaces.processes.on = false;
      namespaces.processes.detail = "own pid namespace, but the host's /proc stays visible: " + namespaces.mount_error;
    }
    if (namespaces.ipc.on) {
      namespaces.ipc.on = false;
      namespaces.ipc.detail = "own ipc namespace, but /dev/shm stays shared: " + namespaces.mount_error;
    }
    return false;
  }
  // Nothing mounted here may reach the host's mount table.
  ::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr);
  if (namespaces.processes.on) {
    if (::mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, nullptr) == 0) {
      // The kernel's settings stay read-only, its memory and keys hidden (as container runtimes do).
      bool sealed = true;
      for (const char* path : {"/proc/sys", "/proc/sysrq-trigger", "/proc/irq", "/proc/bus", "/proc/fs"}) {
        if (::access(path, F_OK) != 0) continue;
        sealed = sealed && ::mount(path, path, nullptr, MS_BIND | MS_REC, nullptr) == 0 &&
                 ::mount(nullptr, path, nullptr, MS_BIND | MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC,
                         nullptr) == 0;
      }
      for (const char* path : {"/proc/kcore", "/proc/keys", "/proc/timer_list", "/proc/sched_debug", "/proc/kmsg"}) {
        if (::access(path, F_OK) != 0) continue;
        sealed = sealed && ::mount("/dev/null", path, nullptr, MS_BIND, nullptr) == 0;
      }
      private_proc = sealed;
      namespaces.processes.detail = "own pid namespace and /proc: no other process is visible or reachable; "
                                    "everything it starts ends with it";
      if (!sealed) namespaces.processes.detail += " (the kernel's settings under /proc could not be made read-only)";
    } else {
      namespaces.processes.on = false;
      namespaces.processes.detail =
          "own pid namespace, but a /proc of its own cannot be mounted (" + error_text("mount proc") +
          "): the host's processes stay visible in /proc";
    }
  }
  if (namespaces.ipc.on) {
    // The host's shared-memory folders it is given (where the caller exchanges tensors with it) are held
    // open across the new mount, then mounted back at their paths.
    std::vector<std::pair<std::string, int>> kept;
    for (const auto& folder : policy.writable) {
      if (folder.rfind("/dev/shm/", 0) != 0) continue;
      const int fd = ::open(folder.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
      if (fd >= 0) kept.emplace_back(folder, fd);
    }
    if (::mount("tmpfs", "/dev/shm", "tmpfs", MS_NOSUID | MS_NODEV, "mode=1777,size=1g") == 0) {
      namespaces.ipc.detail = "own ipc namespace and a private /dev/shm";
      for (const auto& [folder, fd] : kept) {
        for (std::size_t slash = folder.find('/', 1); slash != std::string::npos; slash = folder.find('/', slash + 1)) {
          ::mkdir(folder.substr(0, slash).c_str(), 0700);
        }
        ::mkdir(folder.c_str(), 0700);
        const std::string source = "/proc/self/fd/" + std::to_string(fd);
        if (::mount(source.c_str(), folder.c_str(), nullptr, MS_BIND, nullptr) != 0) {
          namespaces.ipc.detail += " (" + folder + " could not be mounted back: " + error_text("mount") + ")";
        }
      }
    } else {
      namespaces.ipc.on = false;
      namespaces.ipc.detail = "own ipc namespace, but /dev/shm stays shared (" + error_text("mount tmpfs") + ")";
    }
    for (const auto& entry : kept) ::close(entry.second);
  }
  return private_proc;
}

Outcome drop_to_separate_user(const LaunchPolicy& policy) {
  Outcome outcome{"user", false, "", false};
  if (!policy.try_separate_user) {
    outcome.detail = "not asked for";
    return outcome;
  }
  if (::geteuid() != 0) {
    outcome.detail = "runs as the calling user (uid " + std::to_string(::geteuid()) +
                     "), not root: no other user to switch to";
    return outcome;
  }
  // The scratch folder becomes the separate user's; then a throwaway child checks, as that user, that the
  // program and every folder stay reachable. Only then does this process switch for good.
  if (!policy.scratch.empty() && ::chown(policy.scratch.c_str(), kSeparateUser, kSeparateGroup) != 0) {
    outcome.detail = error_text(("chown " + policy.scratch).c_str());
    return outcome;
  }
  int report[2];
  if (::pipe2(report, O_CLOEXEC) != 0) {
    outcome.detail = error_text("pipe");
    return outcome;
  }
  const pid_t child = ::fork();
  if (child == 0) {
    ::close(report[0]);
    std::string problem;
    if (::setgroups(0, nullptr) != 0 || ::setresgid(kSeparateGroup, kSeparateGroup, kSeparateGroup) != 0 ||
        ::setresuid(kSeparateUser, kSeparateUser, kSeparateUser) != 0) {
      problem = error_text("setresuid(nobody)");
    } else if (!policy.command.empty() && ::access(policy.command[0].c_str(), X_OK) != 0) {
      problem = "nobody cannot run " + policy.command[0];
    } else if (!policy.scratch.empty() && ::access(policy.scratch.c_str(), W_OK | X_OK) != 0) {
      // The scratch folder is nobody's now, but a folder above it may not let nobody through (a launcher
      // nested in a sandbox that stayed root makes it inside that sandbox's own root-only scratch).
      problem = "nobody cannot reach its scratch folder " + policy.scratch;
    } else {
      for (const auto& folder : policy.readable) {
        if (::access(folder.c_str(), R_OK | X_OK) != 0 && errno != ENOENT) {
          problem = "nobody cannot read " + folder;
          break;
        }
      }
      for (const auto& folder : policy.writable) {
        if (problem.empty() && ::access(folder.c_str(), W_OK | X_OK) != 0) problem = "nobody cannot write " + folder;
      }
    }
    if (!problem.empty()) (void)!::write(report[1], problem.data(), problem.size());
    ::_exit(problem.empty() ? 0 : 1);
  }
  ::close(report[1]);
  char buffer[512];
  const ssize_t length = child > 0 ? ::read(report[0], buffer, sizeof(buffer)) : -1;
  ::close(report[0]);
  int status = 0;
  if (child > 0) ::waitpid(child, &status, 0);
  if (child < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    outcome.detail = length > 0 ? std::string(buffer, static_cast<std::size_t>(length)) + " (it stays root, confined)"
                                : std::string("the check as nobody failed (it stays root, confined)");
    if (!policy.scratch.empty()) (void)!::chown(policy.scratch.c_str(), 0, 0);
    return outcome;
  }
  if (::setgroups(0, nullptr) != 0 || ::setresgid(kSeparateGroup, kSeparateGroup, kSeparateGroup) != 0 ||
      ::setresuid(kSeparateUser, kSeparateUser, kSeparateUser) != 0) {
    outcome.detail = error_text("setresuid(nobody)");
    return outcome;
  }
  outcome.on = true;
  outcome.detail = "runs as nobody (uid 65534), no capabilities";
  return outcome;
}

void verify(std::vector<Outcome>& outcomes, const LaunchPolicy& policy) {
  auto find = [&](const char* name) -> Outcome* {
    for (auto& outcome : outcomes) {
      if (outcome.name == name) return &outcome;
    }
    return nullptr;
  };
  auto refute = [](Outcome* outcome, const std::string& why) {
    if (outcome == nullptr || !outcome->on) return;
    outcome->on = false;
    outcome->detail += " -- but " + why;
  };
  // The network: an inet socket is refused by the filter; without it, none of the interfaces is up.
  if (Outcome* network = find("network"); network != nullptr && network->on) {
    const int probe = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (probe >= 0) {
      struct if_nameindex* names = ::if_nameindex();
      for (struct if_nameindex* entry = names; entry != nullptr && entry->if_name != nullptr; ++entry) {
        ifreq request{};
        std::strncpy(request.ifr_name, entry->if_name, IFNAMSIZ - 1);
        if (::ioctl(probe, SIOCGIFFLAGS, &request) == 0 && (request.ifr_flags & IFF_UP) != 0) {
          refute(network, std::string("interface ") + entry->if_name + " is up");
        }
      }
      if (names != nullptr) ::if_freenameindex(names);
      ::close(probe);
    }
  }
  if (Outcome* syscalls = find("syscalls"); syscalls != nullptr && syscalls->on) {
    const int inet = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (inet >= 0) {
      ::close(inet);
      refute(syscalls, "an AF_INET socket was created");
    }
  }
  if (Outcome* filesystem = find("filesystem"); filesystem != nullptr && filesystem->on) {
    // Outside the scratch folder nothing can be created, in /tmp or beside the program.
    const std::string outside = "/tmp/kernelsmith-sandbox-escape-" + std::to_string(::getpid());
    const int fd = ::open(outside.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd >= 0) {
      ::close(fd);
      ::unlink(outside.c_str());
      refute(filesystem, outside + " could be created");
    }
    if (!policy.scratch.empty()) {
      const std::string inside = policy.scratch + "/.kernelsmith-sandbox-check";
      const int ok = ::open(inside.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
      if (ok < 0) {
        refute(filesystem, "the scratch folder is not writable (" + error_text("open") + ")");
      } else {
        ::close(ok);
        ::unlink(inside.c_str());
      }
    }
  }
}

}  // namespace kernelsmith::sandbox
