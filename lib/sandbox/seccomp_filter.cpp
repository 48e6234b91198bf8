// The seccomp filter of confined processes: a classic BPF program written directly (no libseccomp, so the
// launcher needs nothing the GPU machines may lack). It refuses, with EPERM, the system calls an evaluator
// never needs and that would reach beyond the sandbox: other processes' memory (ptrace, process_vm_*,
// pidfd_getfd), the kernel (modules, bpf, perf, kexec, keys), the mount table and namespaces, io_uring
// (whose operations bypass this filter), and sockets of any family but AF_UNIX.
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <stddef.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstring>
#include <string>
#include <vector>

#include "sandbox/confinement.hpp"

namespace kernelsmith::sandbox {
namespace {

#if defined(__x86_64__)
constexpr unsigned kArchitecture = AUDIT_ARCH_X86_64;
#elif defined(__aarch64__)
constexpr unsigned kArchitecture = AUDIT_ARCH_AARCH64;
#else
#error "the seccomp filter knows x86_64 and aarch64 only"
#endif

// The namespace flags a confined process may not pass to clone(2).
constexpr unsigned kNamespaceFlags = CLONE_NEWNS | CLONE_NEWUTS | CLONE_NEWIPC | CLONE_NEWUSER | CLONE_NEWPID |
                                     CLONE_NEWNET | CLONE_NEWCGROUP;

// The refused system calls that this architecture has (aarch64 lacks the legacy ones).
std::vector<long> refused_calls() {
  std::vector<long> calls;
#define KS_REFUSE(name) calls.push_back(SYS_##name)
  KS_REFUSE(ptrace);
  KS_REFUSE(process_vm_readv);
  KS_REFUSE(process_vm_writev);
  KS_REFUSE(mount);
  KS_REFUSE(umount2);
  KS_REFUSE(pivot_root);
  KS_REFUSE(chroot);
  KS_REFUSE(bpf);
  KS_REFUSE(perf_event_open);
  KS_REFUSE(kexec_load);
  KS_REFUSE(init_module);
  KS_REFUSE(finit_module);
  KS_REFUSE(delete_module);
  KS_REFUSE(unshare);
  KS_REFUSE(setns);
  KS_REFUSE(keyctl);
  KS_REFUSE(add_key);
  KS_REFUSE(request_key);
  KS_REFUSE(userfaultfd);
  KS_REFUSE(swapon);
  KS_REFUSE(swapoff);
  KS_REFUSE(reboot);
  KS_REFUSE(acct);
  KS_REFUSE(open_by_handle_at);
  KS_REFUSE(name_to_handle_at);
  KS_REFUSE(quotactl);
  KS_REFUSE(syslog);
  KS_REFUSE(settimeofday);
  KS_REFUSE(clock_settime);
  KS_REFUSE(clock_adjtime);
  KS_REFUSE(adjtimex);
  KS_REFUSE(sethostname);
  KS_REFUSE(setdomainname);
  KS_REFUSE(kcmp);
  KS_REFUSE(lookup_dcookie);
  KS_REFUSE(vhangup);
  KS_REFUSE(migrate_pages);
  KS_REFUSE(move_pages);
  KS_REFUSE(fanotify_init);
#ifdef SYS_kexec_file_load
  KS_REFUSE(kexec_file_load);
#endif
#ifdef SYS_io_uring_setup
  KS_REFUSE(io_uring_setup);
  KS_REFUSE(io_uring_enter);
  KS_REFUSE(io_uring_register);
#endif
#ifdef SYS_open_tree
  KS_REFUSE(open_tree);
  KS_REFUSE(move_mount);
  KS_REFUSE(fsopen);
  KS_REFUSE(fsconfig);
  KS_REFUSE(fsmount);
  KS_REFUSE(fspick);
#endif
#ifdef SYS_mount_setattr
  KS_REFUSE(mount_setattr);
#endif
#ifdef SYS_pidfd_getfd
  KS_REFUSE(pidfd_getfd);
#endif
#ifdef SYS_process_madvise
  KS_REFUSE(process_madvise);
#endif
#ifdef SYS_iopl
  KS_REFUSE(iopl);
  KS_REFUSE(ioperm);
#endif
#undef KS_REFUSE
  return calls;
}

sock_filter statement(unsigned short code, unsigned value) { return BPF_STMT(code, value); }
sock_filter jump(unsigned short code, unsigned value, unsigned char if_true, unsigned char if_false) {
  return BPF_JUMP(code, value, if_true, if_false);
}

constexpr unsigned kRefuse = SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA);
constexpr unsigned kAllow = SECCOMP_RET_ALLOW;
constexpr unsigned kNumberOffset = offsetof(seccomp_data, nr);
constexpr unsigned kArchitectureOffset = offsetof(seccomp_data, arch);
// The low 32 bits of the first argument (little-endian on both architectures).
constexpr unsigned kFirstArgumentOffset = offsetof(seccomp_data, args);

std::vector<sock_filter> build_filter() {
  std::vector<sock_filter> program;
  // Another architecture's calls (a 32-bit entry point) have other numbers: kill, never guess.
  program.push_back(statement(BPF_LD | BPF_W | BPF_ABS, kArchitectureOffset));
  program.push_back(jump(BPF_JMP | BPF_JEQ | BPF_K, kArchitecture, 1, 0));
  program.push_back(statement(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS));
  program.push_back(statement(BPF_LD | BPF_W | BPF_ABS, kNumberOffset));
#if defined(__x86_64__)
  // The x32 ABI's numbers carry bit 30: none is needed.
  program.push_back(jump(BPF_JMP | BPF_JGE | BPF_K, 0x40000000u, 0, 1));
  program.push_back(statement(BPF_RET | BPF_K, kRefuse));
#endif
  for (const long call : refused_calls()) {
    program.push_back(jump(BPF_JMP | BPF_JEQ | BPF_K, static_cast<unsigned>(call), 0, 1));
    program.push_back(statement(BPF_RET | BPF_K, kRefuse));
  }
  // socket(2) and socketpair(2): AF_UNIX only (the worker's own pipe, Python's internals).
  for (const long call : {static_cast<long>(SYS_socket), static_cast<long>(SYS_socketpair)}) {
    program.push_back(jump(BPF_JMP | BPF_JEQ | BPF_K, static_cast<unsigned>(call), 0, 4));
    program.push_back(statement(BPF_LD | BPF_W | BPF_ABS, kFirstArgumentOffset));
    program.push_back(jump(BPF_JMP | BPF_JEQ | BPF_K, AF_UNIX, 0, 1));
    program.push_back(statement(BPF_RET | BPF_K, kAllow));
    program.push_back(statement(BPF_RET | BPF_K, kRefuse));
  }
  // clone(2) without namespace flags; clone3(2), whose flags sit in memory a filter cannot read, answers
  // ENOSYS so that the C library falls back to clone(2).
  program.push_back(jump(BPF_JMP | BPF_JEQ | BPF_K, SYS_clone, 0, 4));
  program.push_back(statement(BPF_LD | BPF_W | BPF_ABS, kFirstArgumentOffset));
  program.push_back(jump(BPF_JMP | BPF_JSET | BPF_K, kNamespaceFlags, 0, 1));
  program.push_back(statement(BPF_RET | BPF_K, kRefuse));
  program.push_back(statement(BPF_RET | BPF_K, kAllow));
#ifdef SYS_clone3
  program.push_back(jump(BPF_JMP | BPF_JEQ | BPF_K, SYS_clone3, 0, 1));
  program.push_back(statement(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (ENOSYS & SECCOMP_RET_DATA)));
#endif
  program.push_back(statement(BPF_RET | BPF_K, kAllow));
  return program;
}

}  // namespace

Outcome apply_seccomp() {
  Outcome outcome{"syscalls", false, "", true};
  if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) {
    outcome.detail = std::string("prctl(PR_SET_NO_NEW_PRIVS) failed: ") + std::strerror(errno);
    return outcome;
  }
  std::vector<sock_filter> program = build_filter();
  sock_fprog filter{static_cast<unsigned short>(program.size()), program.data()};
  if (::syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &filter) != 0) {
    outcome.detail = std::string("seccomp(SECCOMP_SET_MODE_FILTER) failed: ") + std::strerror(errno);
    return outcome;
  }
  outcome.on = true;
  outcome.detail = "seccomp filter: ptrace, process_vm_*, mount, bpf, perf, namespaces, io_uring, modules, keys "
                   "refused; sockets AF_UNIX only";
  return outcome;
}

}  // namespace kernelsmith::sandbox
