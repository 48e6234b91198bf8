// The sandbox of every process that runs untrusted code (docs/security.md): the evaluation workers, the Triton
// compile helpers, the PyTorch oracle and the KernelBench probe start through the launcher
// `kernelsmith-sandbox`, which confines them with the operating system's own mechanisms before their code
// starts — namespaces (no network, its own processes and /proc, a private /dev/shm), Landlock (reads from the
// system's folders and the interpreter's only, writes only to a scratch folder), a seccomp filter, resource
// limits and, where the machine allows, a separate unprivileged user. What the machine refuses is reported
// here, never silently skipped.
#pragma once

#include <string>
#include <vector>

#include "kernelsmith/export.hpp"

namespace kernelsmith {

/// One mechanism of the sandbox and whether it holds on this machine.
struct SandboxProtection {
  /// "network", "processes", "filesystem", "syscalls", "limits", "ipc", "user"
  std::string name;
  bool on = false;
  /// What it does when on ("own network namespace, no interfaces up"); why it is off when off.
  std::string detail;
  /// Whether require_sandbox needs it (every protection but "user", which many machines cannot give).
  bool required = true;
};

struct KERNELSMITH_API SandboxStatus {
  /// false when the sandbox was switched off (KERNELSMITH_SANDBOX=off) or its launcher is missing.
  bool enabled = false;
  /// Why it is disabled; empty when enabled.
  std::string reason;
  /// The launcher's path ("" when missing).
  std::string launcher;
  std::vector<SandboxProtection> protections;

  /// Every required protection is on.
  bool complete() const;
  /// "name: why" for every protection that is off (required or not); every protection when disabled.
  std::vector<std::string> off() const;
  /// One line: "sandbox: network, processes, ... on; user off (...)".
  std::string summary() const;
};

/// What the sandbox gives on this machine, probed once per process by running the launcher in its report
/// mode (the same code path as a real launch). Never throws: a missing launcher is a disabled sandbox with
/// the reason.
KERNELSMITH_API SandboxStatus sandbox_status();

/// The command line that runs `command` (command[0] is the program's path) confined, with `scratch` as its
/// only writable folder (its working directory, HOME and TMPDIR point there) and `readable` folders beyond
/// the system's and the interpreter's. Used by the Python layer for the processes it starts itself (the
/// KernelBench probe). Returns `command` unchanged when the sandbox is disabled (sandbox_status() says why).
KERNELSMITH_API std::vector<std::string> sandboxed_command(const std::vector<std::string>& command,
                                                           const std::string& scratch,
                                                           const std::vector<std::string>& readable = {});

}  // namespace kernelsmith
