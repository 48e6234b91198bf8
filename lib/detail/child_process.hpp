// Child processes that the library starts and talks to over a socket: the evaluation worker and the
// Triton compile helpers. Spawning, reaping and explaining how a child ended live here once.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

namespace kernelsmith::detail {

struct SpawnOptions {
  /// The socket end the child reads as stdin; with `socket_as_stdout` it also writes to it as stdout.
  int child_socket = -1;
  bool socket_as_stdout = false;
  /// Everything else the child prints (stderr, and stdout unless it is the socket) goes to this file.
  std::string log_path;
  /// The child's working directory; empty: the caller's.
  std::string working_directory;
};

/// Starts `arguments` (arguments[0] is the program's path) with default signal dispositions and an empty
/// signal mask. Children are spawned from one long-lived thread, so that PR_SET_PDEATHSIG set in the child
/// means "when this process dies". Throws Error naming the program when it cannot start.
pid_t spawn_child(const std::vector<std::string>& arguments, const SpawnOptions& options);

/// What a short-lived child printed, and how it ended.
struct CapturedRun {
  int status = -1;     ///< the wait status (describe_exit explains it)
  std::string output;  ///< its stdout, up to the limit
  std::string log;     ///< its stderr, up to the limit
};

/// Starts `arguments`, reads its stdout until it closes (at most `limit` bytes are kept), then waits for it
/// up to `grace` seconds (past them it is killed). Throws Error when it cannot start.
CapturedRun run_capturing(const std::vector<std::string>& arguments, double grace, std::size_t limit = 1u << 20);

/// Waits up to `grace` seconds for the child to exit, then kills it. Returns the wait status, or -1 when it
/// cannot be known (the child was reaped elsewhere).
int reap_child(pid_t pid, double grace);

/// "the worker was killed by SIGSEGV (Segmentation fault)", "... exited with status 2".
std::string describe_exit(int status, const std::string& who);

/// The folder temporary files go to: $TMPDIR when set (inside a sandbox, its scratch folder), else /tmp.
std::string temporary_folder();

/// A fresh empty log file in temporary_folder() named after `prefix`. Throws Error when none can be made.
std::string make_log_file(const std::string& prefix);

/// The last non-blank lines of a log file (driver messages, a kernel's printf, a traceback).
std::string log_tail(const std::string& path, std::size_t max_lines = 8, std::size_t max_bytes = 2000);

}  // namespace kernelsmith::detail
