// What the launcher kernelsmith-sandbox does before the confined program starts, one mechanism a function.
// Each function applies its mechanism and returns what happened, so that a launch and the report mode (the
// probe behind sandbox_status()) run the same code.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

namespace kernelsmith::sandbox {

/// One mechanism's outcome, as the report mode prints it (SandboxProtection on the library side).
struct Outcome {
  std::string name;
  bool on = false;
  std::string detail;
  bool required = true;
};

/// What the launcher was asked to do (its command line).
struct LaunchPolicy {
  std::string scratch;                 ///< the one folder writable besides `writable`; HOME, TMPDIR, cwd
  std::vector<std::string> writable;   ///< further writable folders (the worker's cache)
  std::vector<std::string> readable;   ///< folders readable besides the system's and the program's prefix
  std::uint64_t memory_bytes = 0;      ///< RLIMIT_DATA (private writable memory); 0: none
  std::uint64_t file_size_bytes = 0;   ///< RLIMIT_FSIZE; 0: none
  std::uint64_t processes = 0;         ///< RLIMIT_NPROC (counted for the separate user only); 0: none
  std::uint64_t open_files = 0;        ///< RLIMIT_NOFILE; 0: unchanged
  long parent = 0;                     ///< the process that spawned the launcher: it must still be the parent
  bool try_separate_user = true;       ///< drop to an unprivileged user when everything stays reachable
  bool report = false;                 ///< print the outcomes as JSON instead of starting the program
  /// Set by the launcher: a /proc of its own is mounted, its system files read-only (make_private_mounts).
  bool private_proc = false;
  /// Protections left out (--without NAME): to find which one a program cannot live with; reported off.
  std::vector<std::string> without;
  bool leaves_out(const std::string& name) const {
    for (const auto& entry : without) {
      if (entry == name) return true;
    }
    return false;
  }
  std::vector<std::string> command;    ///< the program and its arguments
};

/// Resource limits; core dumps off.
Outcome apply_limits(const LaunchPolicy& policy);

/// Namespaces the caller enters with unshare(2): which of network, processes (pid), ipc and mount succeeded.
/// `user` is true when a user namespace had to be made (the caller is not root).
struct NamespaceResult {
  Outcome network;
  Outcome processes;
  Outcome ipc;
  bool mount = false;
  bool user = false;
  std::string mount_error;
};
NamespaceResult enter_namespaces(const LaunchPolicy& policy);

/// In the new mount namespace (as the new pid namespace's first process): a /proc of its own, whose system
/// files (sysctl, sysrq, irq, bus, fs) are read-only and whose kernel memory and key views are hidden, and a
/// private /dev/shm, into which the writable folders of `policy` that lie in the host's /dev/shm are mounted
/// back. Appends to `ipc` and `processes` what it did; returns whether /proc is its own.
bool make_private_mounts(NamespaceResult& namespaces, const LaunchPolicy& policy);

/// Landlock: reads from the system's folders, the program's prefix and `readable`; writes to `scratch`,
/// `writable` and the device files compute needs; TCP refused; signals and abstract sockets scoped where
/// the kernel knows them.
Outcome apply_landlock(const LaunchPolicy& policy);

/// Drops to the unprivileged user `nobody` when the program, the readable folders and the writable ones
/// stay reachable for it (checked in a throwaway child first); else says why not.
Outcome drop_to_separate_user(const LaunchPolicy& policy);

/// The seccomp filter (no_new_privs first): refuses ptrace, process_vm_*, sockets other than AF_UNIX,
/// mount, bpf, namespaces, io_uring, module and key management, and the like (docs/security.md).
Outcome apply_seccomp();

/// Checks, from inside, that each mechanism that claims to be on holds (a TCP socket is refused, a file
/// outside the scratch folder cannot be written, ...); turns an outcome off, saying why, when it does not.
void verify(std::vector<Outcome>& outcomes, const LaunchPolicy& policy);

}  // namespace kernelsmith::sandbox
