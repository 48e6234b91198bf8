// Python helper processes: the Triton compiler (triton_compile.py) and the PyTorch oracle
// (pytorch_oracle.py) are scripts that run in child processes and answer JSON requests, one per line,
// over a socket that is their stdin and stdout (python/kernelsmith/_helper_io.py). Finding the
// interpreter and the script, starting a helper from an empty folder, a round trip with a deadline (past
// it the helper is killed), reporting a dead helper with the tail of what it printed, and a pool of idle
// helpers per kind live here once.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "detail/json_util.hpp"

namespace kernelsmith::detail {

/// One kind of helper: its script and how messages name it.
struct PythonHelperKind {
  std::string script;         ///< the file name beside the library: "triton_compile.py"
  std::string path_variable;  ///< the environment variable that overrides the script's path
  std::string label;          ///< "the Triton compile helper"
  std::string activity;       ///< what a request does, for messages: "compiling"
  /// Idle helpers the pool keeps; 0 keeps one per hardware thread (at least 2).
  std::size_t max_idle = 0;
  /// Folders the confined helper may write besides its own (where its clients' requests leave their data),
  /// asked when a helper starts and when one is taken from the pool; none when null.
  std::vector<std::string> (*writable_folders)() = nullptr;
  /// Folders the confined helper may read besides the interpreter's and the scripts' (the ModelNew runner: the
  /// shared cache of extension builds), asked when a helper starts; none when null.
  std::vector<std::string> (*readable_folders)() = nullptr;
};

/// The interpreter helpers run: $KERNELSMITH_PYTHON, else the configured one (set_helper_python), else
/// `python3` found through the PATH.
std::vector<std::string> helper_python_command();
/// The same as one line ("/usr/bin/env python3").
std::string helper_python_text();
/// The interpreter set with set_helper_python, "" when none (the worker passes it on to its helpers).
std::string configured_helper_python();

/// The folders a confined helper reads besides the system's: the interpreter's installation and the folders
/// the helpers' scripts live in. Processes that start helpers themselves (the worker) allow them too.
std::vector<std::string> helper_readable_folders();

/// The kind's script: $<path_variable>, else beside the library (the wheel), in share/kernelsmith, or in
/// the source tree (an uninstalled build). "" when none exists, with `looked` saying where it looked.
std::string find_helper_script(const PythonHelperKind& kind, std::string* looked);

/// One helper process, started from a fresh private folder (its working directory, removed with it).
class PythonHelper {
 public:
  /// Throws BackendUnavailableError when the script is missing or the interpreter cannot start.
  explicit PythonHelper(const PythonHelperKind& kind);
  ~PythonHelper();
  PythonHelper(const PythonHelper&) = delete;
  PythonHelper& operator=(const PythonHelper&) = delete;

  /// One request, one reply. Throws Error when the helper dies (with how it ended and the tail of what it
  /// printed) or the deadline passes (it is killed); the helper is finished then: drop it.
  Json round_trip(const Json& request, double timeout_seconds);

  /// The interpreter and script, as one line: helpers of other settings are not reused.
  const std::string& command() const { return command_; }
  /// The folders it may write besides its own (PythonHelperKind::writable_folders when it started): confined,
  /// it cannot serve a request whose data lie elsewhere, so the pool does not reuse it for another set.
  const std::vector<std::string>& writable() const { return writable_; }
  /// The helper's private folder (its working directory), for files that travel with requests.
  const std::string& folder() const { return workdir_; }
  pid_t pid() const { return pid_; }

 private:
  bool wait_for(short events, long long deadline_ms);
  [[noreturn]] void fail_timeout(double timeout_seconds);
  [[noreturn]] void fail_died();
  void cleanup();

  PythonHelperKind kind_;
  std::string command_;
  std::vector<std::string> writable_;
  std::string workdir_;
  std::string log_path_;
  pid_t pid_ = 0;
  int fd_ = -1;
  std::string buffer_;
};

/// Idle helpers of one kind. A caller takes one (or a new one starts), and gives it back after a clean
/// reply; helpers started under other settings (interpreter, script) are retired when taken.
class PythonHelperPool {
 public:
  /// The process-wide pool of `kind` (by script name); lives as long as the process.
  static PythonHelperPool& of(const PythonHelperKind& kind);

  std::unique_ptr<PythonHelper> take();
  void give_back(std::unique_ptr<PythonHelper> helper);
  /// Ends every idle helper (a test's fresh start; the next take() starts a new one).
  void clear();

 private:
  explicit PythonHelperPool(PythonHelperKind kind);
  struct State;
  PythonHelperKind kind_;
  std::shared_ptr<State> state_;
};

/// One request through a pooled helper of `kind`.
Json ask_python_helper(const PythonHelperKind& kind, const Json& request, double timeout_seconds);

}  // namespace kernelsmith::detail
