// The sandbox (docs/security.md) through the real launcher: what the machine gives, attacks from inside a
// confined shell, and the evaluation worker confined on the OpenCL backend (PoCL here).
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "catch.hpp"
#include "detail/child_process.hpp"
#include "detail/sandbox.hpp"
#include "evaluate/worker.hpp"
#include "harness_test_support.hpp"
#include "kernelsmith/device.hpp"
#include "kernelsmith/error.hpp"
#include "kernelsmith/evaluator.hpp"
#include "kernelsmith/sandbox.hpp"

using namespace kernelsmith;
namespace fs = std::filesystem;

namespace {

/// A protection that is off here fails the tests, unless the machine is known to refuse it and says so.
bool partial_sandbox_allowed() { return std::getenv("KERNELSMITH_ALLOW_PARTIAL_SANDBOX") != nullptr; }

/// Runs `command` confined by `policy`; what it printed, stdout then stderr.
detail::CapturedRun run_confined(const detail::SandboxPolicy& policy, const std::vector<std::string>& command) {
  detail::CapturedRun ran = detail::run_capturing(detail::confine_command(policy, command), 30.0);
  ran.output += ran.log;
  return ran;
}

struct Scratch {
  std::string path = detail::make_scratch_folder("kernelsmith-test-scratch");
  ~Scratch() { detail::remove_scratch_folder(path); }
};

bool process_running_with(const std::string& needle) {
  for (const auto& entry : fs::directory_iterator("/proc")) {
    std::ifstream file(entry.path() / "cmdline");
    std::string text((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
    for (auto& c : text) {
      if (c == '\0') c = ' ';
    }
    if (text.find(needle) != std::string::npos) return true;
  }
  return false;
}

// y = 2 * a + b for the harness task.
const char* kTwiceAPlusB = R"(// @launch add2<<<ceil_div(N, 128), 128>>>(y, a, b, N)
__kernel void add2(__global float* out, __global const float* x, __global const float* z, int n) {
  const int i = get_global_id(0);
  if (i < n) out[i] = 2.0f * x[i] + z[i];
}
)";

bool sandbox_on() {
  const SandboxStatus status = sandbox_status();
  if (!status.enabled) {
    FAIL_CHECK("the sandbox is disabled here: " << status.reason);
    return false;
  }
  return true;
}

}  // namespace

TEST_CASE("the sandbox gives every required protection on this machine", "[sandbox]") {
  const SandboxStatus status = sandbox_status();
  INFO(status.summary());
  REQUIRE(status.enabled);
  REQUIRE(status.protections.size() == 7);
  if (!status.complete()) {
    if (partial_sandbox_allowed()) {
      WARN("KERNELSMITH_ALLOW_PARTIAL_SANDBOX is set and protections are off here: " << status.summary());
    } else {
      FAIL("protections are off on this machine (set KERNELSMITH_ALLOW_PARTIAL_SANDBOX=1 where the machine is known "
           "to refuse them): "
           << status.summary());
    }
  }
  // The probe is the same process as a real launch: its report is cached, not taken again.
  CHECK(sandbox_status().summary() == status.summary());
}

TEST_CASE("a confined process writes only to its scratch folder and reads no other folder of ours", "[sandbox]") {
  if (!sandbox_on()) return;
  Scratch mine;
  Scratch other;  // another candidate's folder, or the oracle's cache
  {
    std::ofstream secret(other.path + "/expected.bin");
    secret << "the expected outputs";
  }
  const std::string outside = detail::temporary_folder() + "/kernelsmith-escape-" + std::to_string(::getpid());
  detail::SandboxPolicy policy;
  policy.scratch = mine.path;
  const std::string script = "echo inside > inside.txt; echo escaped > " + outside + "; cat " + other.path +
                             "/expected.bin; ls " + other.path + "; echo done";
  const detail::CapturedRun ran = run_confined(policy, {"/bin/sh", "-c", script});
  INFO(ran.output);
  CHECK(ran.output.find("done") != std::string::npos);
  CHECK(fs::exists(mine.path + "/inside.txt"));
  CHECK_FALSE(fs::exists(outside));
  CHECK(ran.output.find("the expected outputs") == std::string::npos);
  CHECK(ran.output.find("cannot open directory '" + other.path + "': Permission denied") != std::string::npos);
  ::unlink(outside.c_str());
}

TEST_CASE("a scratch folder inside a folder only root may enter stays the confined process's to write",
          "[sandbox]") {
  // As a launcher nested in a sandbox that stayed root makes its program's scratch folder: inside its own
  // scratch (mode 0700, root's). Switching to nobody would leave the program unable to reach its folder.
  if (!sandbox_on()) return;
  Scratch outer;
  REQUIRE(::chmod(outer.path.c_str(), 0700) == 0);
  const std::string inner = outer.path + "/program-scratch";
  REQUIRE(fs::create_directory(inner));
  detail::SandboxPolicy policy;
  policy.scratch = inner;
  // By its full path, as programs name their folder (a path relative to the folder it starts in would not
  // cross the folder above).
  const detail::CapturedRun ran =
      run_confined(policy, {"/bin/sh", "-c", "echo inside > " + inner + "/inside.txt && echo written"});
  INFO(ran.output);
  CHECK(ran.output.find("written") != std::string::npos);
  CHECK(fs::exists(inner + "/inside.txt"));
}

TEST_CASE("a confined process sees no other process and nothing it starts outlives it", "[sandbox]") {
  if (!sandbox_on()) return;
  Scratch mine;
  detail::SandboxPolicy policy;
  policy.scratch = mine.path;
  // A marker no other process has: the background sleep's argument.
  const std::string marker = "4242." + std::to_string(::getpid() % 1000);
  const detail::CapturedRun ran = run_confined(policy, {"/bin/sh", "-c",
                                        "sleep " + marker + " & for p in /proc/[0-9]*; do cat $p/cmdline; echo; done; "
                                        "kill -0 " + std::to_string(::getpid()) + " && echo reached-the-ca\"\"ller; true"});
  INFO(ran.output);
  CHECK(ran.output.find("kernelsmith_tests") == std::string::npos);
  CHECK(ran.output.find("reached-the-caller") == std::string::npos);
  // The shell was its namespace's first process: when it ended, the sleep ended with it.
  bool gone = false;
  for (int i = 0; i < 100 && !gone; ++i) {
    gone = !process_running_with("sleep " + marker);
    if (!gone) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  CHECK(gone);
}

TEST_CASE("a confined process has no network", "[sandbox]") {
  if (!sandbox_on()) return;
  Scratch mine;
  detail::SandboxPolicy policy;
  policy.scratch = mine.path;
  // The namespace's interfaces (/proc/net follows the reader's namespace): a loopback only, and no route.
  const detail::CapturedRun ran = run_confined(policy, {"/bin/sh", "-c", "tail -n +3 /proc/net/dev | cut -d: -f1; tail -n +2 "
                                                         "/proc/net/route | wc -l"});
  INFO(ran.output);
  CHECK(ran.output == "    lo\n0\n");
}

TEST_CASE("the evaluation worker runs confined and its evaluations say what was off", "[sandbox][opencl]") {
  if (!test::opencl_available()) {
    WARN("skipped: no OpenCL device available");
    return;
  }
  if (!sandbox_on()) return;
  auto evaluator = create_evaluator(test::fast_options("opencl", true, 1));
  const Evaluation evaluation = evaluator->evaluate(test::small_task(), test::candidate_in("opencl", kTwiceAPlusB));
  INFO(evaluation.message);
  CHECK(evaluation.status == Status::ok);
  CHECK(evaluation.integrity.unconfined == sandbox_status().off());

  // The worker itself: another network namespace than ours, under a seccomp filter.
  detail::WorkerClient worker(detail::WorkerSettings{"opencl", 0, test::test_cache_dir()});
  worker.device();
  // launcher -> the namespace's first process -> the worker.
  pid_t confined = worker.pid();
  for (int level = 0; level < 2 && confined > 0; ++level) {
    std::ifstream children("/proc/" + std::to_string(confined) + "/task/" + std::to_string(confined) + "/children");
    confined = 0;
    children >> confined;
  }
  REQUIRE(confined > 0);
  CHECK(fs::read_symlink("/proc/" + std::to_string(confined) + "/exe").filename() == "kernelsmith-worker");
  CHECK(fs::read_symlink("/proc/" + std::to_string(confined) + "/ns/net") != fs::read_symlink("/proc/self/ns/net"));
  std::ifstream status("/proc/" + std::to_string(confined) + "/status");
  std::string line;
  bool filtered = false;
  while (std::getline(status, line)) filtered = filtered || line == "Seccomp:\t2";
  CHECK(filtered);
}

TEST_CASE("require_sandbox refuses to evaluate where the sandbox is off, and says why", "[sandbox]") {
  ::setenv("KERNELSMITH_SANDBOX", "off", 1);
  const SandboxStatus status = sandbox_status();
  CHECK_FALSE(status.enabled);
  CHECK(status.reason.find("KERNELSMITH_SANDBOX=off") != std::string::npos);
  EvaluatorOptions options;
  options.require_sandbox = true;
  std::string message;
  try {
    create_evaluator(options);
  } catch (const ValidationError& e) {
    message = e.what();
  } catch (const BackendUnavailableError& e) {
    message = std::string("no backend: ") + e.what();
  }
  ::unsetenv("KERNELSMITH_SANDBOX");
  INFO(message);
  CHECK(message.find("require_sandbox") != std::string::npos);
  CHECK(message.find("KERNELSMITH_SANDBOX=off") != std::string::npos);
  // isolate=false runs candidates unconfined: refused too.
  options.isolate = false;
  CHECK_THROWS_AS(create_evaluator(options), ValidationError);
  CHECK(sandbox_status().enabled);
}
