// How the library starts a process confined: the policy of one child (its scratch folder, what else it may
// read and write, its limits) and the launcher's command line that applies it (include/kernelsmith/sandbox.hpp,
// docs/security.md).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace kernelsmith::detail {

struct SandboxPolicy {
  /// The child's one writable folder, its working directory, HOME and TMPDIR. Required.
  std::string scratch;
  /// Further writable folders (the worker's disk cache).
  std::vector<std::string> writable;
  /// Folders it reads besides the system's (/usr, /etc, /proc, ...) and its program's installation prefix.
  std::vector<std::string> readable;
  /// Private writable memory (RLIMIT_DATA); 0: three quarters of the machine's memory.
  std::uint64_t memory_bytes = 0;
  /// Largest file it may write (RLIMIT_FSIZE); 0: 64 GiB.
  std::uint64_t file_size_bytes = 0;
};

/// `command` wrapped in the launcher with `policy`; unchanged when the sandbox is disabled
/// (KERNELSMITH_SANDBOX=off, or no launcher: sandbox_status() says why). The launcher is told this process's
/// id, so that it does not start when its parent is already gone.
std::vector<std::string> confine_command(const SandboxPolicy& policy, const std::vector<std::string>& command);

/// The installation folders of an interpreter command ("/usr/bin/env python3", ".venv/bin/python"): the
/// program's prefix as named and with links resolved, found through PATH when it is a bare name.
std::vector<std::string> interpreter_folders(const std::vector<std::string>& command);

/// A fresh private folder under temporary_folder() named after `prefix`. Throws Error when none can be made.
std::string make_scratch_folder(const std::string& prefix);

/// Removes a scratch folder and what the confined process left in it (nothing when `folder` is empty).
void remove_scratch_folder(const std::string& folder);

}  // namespace kernelsmith::detail
