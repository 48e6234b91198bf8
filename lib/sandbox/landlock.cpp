// Landlock, through its three system calls. The constants and structures are spelled here, by value, as the
// kernel's UAPI defines them: the build machines' headers (Debian 12) predate the ABI versions newer kernels
// give (TCP rules in 4, scoped signals and abstract sockets in 6), and the kernel itself says which it knows.
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "sandbox/confinement.hpp"
#include "sandbox/installation.hpp"

#ifndef SYS_landlock_create_ruleset
#define SYS_landlock_create_ruleset 444
#define SYS_landlock_add_rule 445
#define SYS_landlock_restrict_self 446
#endif

namespace kernelsmith::sandbox {
namespace {

constexpr std::uint64_t kExecute = 1ull << 0;
constexpr std::uint64_t kWriteFile = 1ull << 1;
constexpr std::uint64_t kReadFile = 1ull << 2;
constexpr std::uint64_t kReadDir = 1ull << 3;
constexpr std::uint64_t kRemoveDir = 1ull << 4;
constexpr std::uint64_t kRemoveFile = 1ull << 5;
constexpr std::uint64_t kMakeChar = 1ull << 6;
constexpr std::uint64_t kMakeDir = 1ull << 7;
constexpr std::uint64_t kMakeReg = 1ull << 8;
constexpr std::uint64_t kMakeSock = 1ull << 9;
constexpr std::uint64_t kMakeFifo = 1ull << 10;
constexpr std::uint64_t kMakeBlock = 1ull << 11;
constexpr std::uint64_t kMakeSym = 1ull << 12;
constexpr std::uint64_t kRefer = 1ull << 13;     // ABI 2
constexpr std::uint64_t kTruncate = 1ull << 14;  // ABI 3
// ABI 5's IOCTL_DEV is left unhandled: the GPU drivers are driven by ioctl on their device files.

constexpr std::uint64_t kNetBindTcp = 1ull << 0;     // ABI 4
constexpr std::uint64_t kNetConnectTcp = 1ull << 1;  // ABI 4
constexpr std::uint64_t kScopeAbstractUnixSocket = 1ull << 0;  // ABI 6
constexpr std::uint64_t kScopeSignal = 1ull << 1;              // ABI 6

constexpr std::uint32_t kCreateRulesetVersion = 1u << 0;
constexpr int kRulePathBeneath = 1;

struct RulesetAttributes {
  std::uint64_t handled_access_fs;
  std::uint64_t handled_access_net;
  std::uint64_t scoped;
};

struct PathBeneath {
  std::uint64_t allowed_access;
  std::int32_t parent_fd;
} __attribute__((packed));

constexpr std::uint64_t kFileRights = kExecute | kWriteFile | kReadFile | kTruncate;
constexpr std::uint64_t kReadRights = kExecute | kReadFile | kReadDir;

std::uint64_t fs_rights_of(int abi) {
  std::uint64_t rights = kExecute | kWriteFile | kReadFile | kReadDir | kRemoveDir | kRemoveFile | kMakeChar |
                         kMakeDir | kMakeReg | kMakeSock | kMakeFifo | kMakeBlock | kMakeSym;
  if (abi >= 2) rights |= kRefer;
  if (abi >= 3) rights |= kTruncate;
  return rights;
}

// The folders every confined program reads: the system's programs, libraries and configuration, the kernel's
// views (/proc, /sys) and the device nodes (read only; the ones compute needs are writable below).
// /dev is listed, not read: a root process could read a disk's raw blocks, and with them any file.
const char* const kSystemFolders[] = {"/usr", "/lib", "/lib32", "/lib64", "/libx32", "/bin", "/sbin",
                                      "/etc", "/opt", "/proc", "/sys"};

// Device nodes compute needs to open for writing: the null devices and the GPU drivers' (NVIDIA, the DRM
// render nodes, MetaX).
bool writable_device(const std::string& name) {
  static const char* const exact[] = {"null", "zero", "full", "random", "urandom", "dri", "shm", "nvidia-caps"};
  for (const char* entry : exact) {
    if (name == entry) return true;
  }
  return name.rfind("nvidia", 0) == 0 || name.rfind("mxcd", 0) == 0;
}

class Ruleset {
 public:
  Ruleset(int fd, std::uint64_t handled) : fd_(fd), handled_(handled) {}
  ~Ruleset() {
    if (fd_ >= 0) ::close(fd_);
  }
  Ruleset(const Ruleset&) = delete;
  Ruleset& operator=(const Ruleset&) = delete;

  // Missing paths are skipped (not every system has /lib32); other failures are kept for the report.
  void allow(const std::string& path, std::uint64_t rights) {
    if (path.empty()) return;
    const int fd = ::open(path.c_str(), O_PATH | O_CLOEXEC);
    if (fd < 0) return;
    struct stat info {};
    if (::fstat(fd, &info) == 0 && !S_ISDIR(info.st_mode)) rights &= kFileRights;
    PathBeneath rule{rights & handled_, fd};
    if (::syscall(SYS_landlock_add_rule, fd_, kRulePathBeneath, &rule, 0) != 0 && error_.empty()) {
      error_ = "landlock_add_rule(" + path + ") failed: " + std::strerror(errno);
    }
    ::close(fd);
  }

  int fd() const { return fd_; }
  const std::string& error() const { return error_; }

 private:
  int fd_;
  std::uint64_t handled_;
  std::string error_;
};

}  // namespace

Outcome apply_landlock(const LaunchPolicy& policy) {
  Outcome outcome{"filesystem", false, "", true};
  const long abi = ::syscall(SYS_landlock_create_ruleset, nullptr, 0, kCreateRulesetVersion);
  if (abi < 1) {
    outcome.detail = std::string("Landlock is not available (") + std::strerror(errno) +
                     "): the kernel lacks it or it is not among the active security modules (lsm=...,landlock)";
    return outcome;
  }
  RulesetAttributes attributes{fs_rights_of(static_cast<int>(abi)), 0, 0};
  std::size_t size = sizeof(std::uint64_t);
  if (abi >= 4) {
    attributes.handled_access_net = kNetBindTcp | kNetConnectTcp;  // no rule: TCP refused
    size = 2 * sizeof(std::uint64_t);
  }
  if (abi >= 6) {
    attributes.scoped = kScopeAbstractUnixSocket | kScopeSignal;
    size = sizeof(RulesetAttributes);
  }
  const int fd = static_cast<int>(::syscall(SYS_landlock_create_ruleset, &attributes, size, 0));
  if (fd < 0) {
    outcome.detail = std::string("landlock_create_ruleset failed: ") + std::strerror(errno);
    return outcome;
  }
  Ruleset rules(fd, attributes.handled_access_fs);
  for (const char* folder : kSystemFolders) rules.allow(folder, kReadRights);
  if (!policy.command.empty()) {
    for (const auto& folder : installation_folders(find_program(policy.command[0]))) rules.allow(folder, kReadRights);
  }
  for (const auto& folder : policy.readable) rules.allow(folder, kReadRights);
  const std::uint64_t all = attributes.handled_access_fs;
  rules.allow(policy.scratch, all);
  for (const auto& folder : policy.writable) rules.allow(folder, all);
  if (DIR* devices = ::opendir("/dev")) {
    while (const dirent* entry = ::readdir(devices)) {
      const std::string name = entry->d_name;
      if (writable_device(name)) rules.allow("/dev/" + name, all);
    }
    ::closedir(devices);
  }
  rules.allow("/dev", kReadDir);
  // The NVIDIA driver writes to its process's /proc/<pid> in cuInit. With a /proc of its own (whose system
  // files were made read-only when it was mounted) the whole of it is writable, so that the processes it starts
  // (a compile helper that loads the driver) may too; else only its own /proc/<pid>, resolved now (exec keeps
  // the pid).
  rules.allow(policy.private_proc ? "/proc" : "/proc/self", all);
  if (!rules.error().empty()) {
    outcome.detail = rules.error();
    return outcome;
  }
  // Landlock needs no_new_privs (or CAP_SYS_ADMIN); setting it here also keeps a set-user-ID program from
  // gaining what the sandbox takes away.
  ::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
  if (::syscall(SYS_landlock_restrict_self, rules.fd(), 0) != 0) {
    outcome.detail = std::string("landlock_restrict_self failed: ") + std::strerror(errno);
    return outcome;
  }
  outcome.on = true;
  outcome.detail = "Landlock ABI " + std::to_string(abi) + ": writes only to the scratch folder" +
                   (policy.writable.empty() ? std::string() : " and " + std::to_string(policy.writable.size()) +
                                                                   " named folder(s)") +
                   ", reads only system folders and the program's" + (abi >= 4 ? ", TCP refused" : "") +
                   (abi >= 6 ? ", signals and abstract sockets scoped" : "");
  return outcome;
}

}  // namespace kernelsmith::sandbox
