#include "kernelsmith/sandbox.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <nlohmann/json.hpp>

#include "detail/child_process.hpp"
#include "detail/dynamic_library.hpp"
#include "detail/file_cache.hpp"
#include "detail/json_util.hpp"
#include "detail/python_helper.hpp"
#include "kernelsmith/error.hpp"
#include "detail/sandbox.hpp"
#include "sandbox/installation.hpp"

namespace kernelsmith {
namespace {

constexpr std::uint64_t kDefaultFileSize = 64ull << 30;

std::string launcher_path(std::string* why_missing) {
  if (const char* path = std::getenv("KERNELSMITH_SANDBOX_LAUNCHER"); path != nullptr && *path != '\0') {
    if (::access(path, X_OK) == 0) return path;
    *why_missing = fmt::format("KERNELSMITH_SANDBOX_LAUNCHER={} is not an executable file", path);
    return {};
  }
  const std::string directory = detail::library_directory();
  const std::string beside = (std::filesystem::path(directory) / "kernelsmith-sandbox").string();
  if (!directory.empty() && ::access(beside.c_str(), X_OK) == 0) return beside;
  *why_missing = fmt::format("the launcher kernelsmith-sandbox was not found beside the kernelsmith library (looked "
                             "for {}); reinstall kernelsmith or set KERNELSMITH_SANDBOX_LAUNCHER to its path",
                             beside);
  return {};
}

bool switched_off(std::string* reason) {
  const char* setting = std::getenv("KERNELSMITH_SANDBOX");
  if (setting == nullptr) return false;
  const std::string value = setting;
  if (value == "off" || value == "0" || value == "false") {
    *reason = fmt::format("switched off by KERNELSMITH_SANDBOX={}", value);
    return true;
  }
  return false;
}

std::uint64_t default_memory_limit() {
  const long pages = ::sysconf(_SC_PHYS_PAGES);
  const long page = ::sysconf(_SC_PAGESIZE);
  if (pages <= 0 || page <= 0) return 0;
  return static_cast<std::uint64_t>(pages) * static_cast<std::uint64_t>(page) / 4 * 3;
}

// Runs the launcher's report mode and reads what it printed.
SandboxStatus probe(const std::string& launcher) {
  SandboxStatus status;
  status.launcher = launcher;
  std::string scratch;
  try {
    scratch = detail::make_scratch_folder("kernelsmith-sandbox-probe");
    // As the worker is launched, the most demanding of the confined processes: the disk cache writable, the
    // helpers' interpreter readable (the separate user is judged on what those need).
    const std::string cache = detail::resolve_cache_dir("");
    std::error_code ignored;
    std::filesystem::create_directories(cache, ignored);
    std::vector<std::string> arguments = {launcher, "--report", "--scratch", scratch, "--write", cache, "--parent",
                                          std::to_string(::getpid())};
    for (const auto& folder : detail::helper_readable_folders()) arguments.insert(arguments.end(), {"--read", folder});
    arguments.push_back("--");
    for (const auto& part : detail::helper_python_command()) arguments.push_back(part);
    const detail::CapturedRun run = detail::run_capturing(arguments, 10.0);
    nlohmann::json report;
    try {
      report = detail::parse_plain_json(run.output, "the sandbox launcher's report");
    } catch (const std::exception&) {
    }
    if (!report.is_object() || !report.contains("protections")) {
      throw Error(fmt::format("its report mode printed no report ({}; {})", detail::describe_exit(run.status, "the launcher"),
                              run.log));
    }
    for (const auto& entry : report.at("protections")) {
      status.protections.push_back({entry.value("name", std::string()), entry.value("on", false),
                                    entry.value("detail", std::string()), entry.value("required", true)});
    }
    status.enabled = true;
  } catch (const std::exception& e) {
    status.enabled = false;
    status.reason = fmt::format("the sandbox launcher {} failed: {}", launcher, e.what());
  }
  detail::remove_scratch_folder(scratch);
  return status;
}

}  // namespace

bool SandboxStatus::complete() const {
  if (!enabled || protections.empty()) return false;
  for (const auto& protection : protections) {
    if (protection.required && !protection.on) return false;
  }
  return true;
}

std::vector<std::string> SandboxStatus::off() const {
  std::vector<std::string> result;
  if (!enabled) {
    result.push_back("sandbox: " + reason);
    return result;
  }
  for (const auto& protection : protections) {
    if (!protection.on) result.push_back(protection.name + ": " + protection.detail);
  }
  return result;
}

std::string SandboxStatus::summary() const {
  if (!enabled) return "sandbox: off (" + reason + ")";
  std::vector<std::string> on;
  std::vector<std::string> off;
  for (const auto& protection : protections) {
    (protection.on ? on : off).push_back(protection.on ? protection.name : protection.name + " (" + protection.detail + ")");
  }
  std::string text = "sandbox: " + fmt::format("{}", fmt::join(on, ", ")) + " on";
  if (!off.empty()) text += "; off: " + fmt::format("{}", fmt::join(off, "; "));
  return text;
}

SandboxStatus sandbox_status() {
  // Probed once per launcher and setting: the machine does not change under a process.
  static std::mutex mutex;
  static std::string probed_key;
  static SandboxStatus probed;
  std::string reason;
  const bool off = switched_off(&reason);
  std::string missing;
  const std::string launcher = off ? std::string() : launcher_path(&missing);
  const std::string key = off ? "off" : launcher;
  std::lock_guard<std::mutex> lock(mutex);
  if (!probed_key.empty() && probed_key == key) return probed;
  SandboxStatus status;
  if (off) {
    status.reason = reason;
  } else if (launcher.empty()) {
    status.reason = missing;
  } else {
    status = probe(launcher);
  }
  probed_key = key;
  probed = status;
  return status;
}

std::vector<std::string> sandboxed_command(const std::vector<std::string>& command, const std::string& scratch,
                                           const std::vector<std::string>& readable) {
  detail::SandboxPolicy policy;
  policy.scratch = scratch;
  policy.readable = readable;
  auto folders = detail::interpreter_folders(command);
  policy.readable.insert(policy.readable.end(), folders.begin(), folders.end());
  return detail::confine_command(policy, command);
}

namespace detail {

std::vector<std::string> confine_command(const SandboxPolicy& policy, const std::vector<std::string>& command) {
  const SandboxStatus status = sandbox_status();
  if (!status.enabled) return command;
  if (policy.scratch.empty()) throw Error("a confined process needs a scratch folder (SandboxPolicy::scratch)");
  std::vector<std::string> arguments = {status.launcher, "--scratch", policy.scratch, "--parent",
                                        std::to_string(::getpid())};
  for (const auto& folder : policy.writable) arguments.insert(arguments.end(), {"--write", folder});
  for (const auto& folder : policy.readable) arguments.insert(arguments.end(), {"--read", folder});
  const std::uint64_t memory = policy.memory_bytes != 0 ? policy.memory_bytes : default_memory_limit();
  if (memory != 0) arguments.insert(arguments.end(), {"--memory", std::to_string(memory)});
  const std::uint64_t file_size = policy.file_size_bytes != 0 ? policy.file_size_bytes : kDefaultFileSize;
  arguments.insert(arguments.end(), {"--file-size", std::to_string(file_size), "--processes", "4096", "--"});
  arguments.insert(arguments.end(), command.begin(), command.end());
  return arguments;
}

std::vector<std::string> interpreter_folders(const std::vector<std::string>& command) {
  std::vector<std::string> folders;
  for (const auto& part : command) {
    if (part.empty() || part[0] == '-') continue;
    for (auto& folder : sandbox::installation_folders(sandbox::find_program(part))) folders.push_back(std::move(folder));
  }
  return folders;
}

std::string make_scratch_folder(const std::string& prefix) {
  std::string path = temporary_folder() + "/" + prefix + "-XXXXXX";
  if (::mkdtemp(path.data()) == nullptr) {
    throw Error(fmt::format("cannot create a folder for {} in {}: {}", prefix, temporary_folder(), std::strerror(errno)));
  }
  return path;
}

void remove_scratch_folder(const std::string& folder) {
  if (folder.empty()) return;
  std::error_code ignored;
  std::filesystem::remove_all(folder, ignored);
}

}  // namespace detail
}  // namespace kernelsmith
