"""The sandbox (docs/security.md) from the side of untrusted host code: a Python program started confined, as the
Triton helper, the PyTorch oracle and the KernelBench probe are, tries what a hostile candidate or problem file
would. Each attempt is refused and leaves nothing outside its scratch folder."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import textwrap
import time

import pytest

import kernelsmith as ks

STATUS = ks.sandbox_status()


def _require_sandbox():
    if not STATUS.enabled:
        pytest.fail(f"the sandbox is disabled here: {STATUS.reason}")
    if not STATUS.complete() and not os.environ.get("KERNELSMITH_ALLOW_PARTIAL_SANDBOX"):
        pytest.fail(f"protections are off on this machine: {STATUS.summary()} (set KERNELSMITH_ALLOW_PARTIAL_SANDBOX=1 "
                    f"where the machine is known to refuse them)")


def run_confined(code: str, scratch: str, timeout: float = 60.0) -> subprocess.CompletedProcess:
    script = os.path.join(scratch, "attack.py")
    with open(script, "w", encoding="utf-8") as handle:
        handle.write(textwrap.dedent(code))
    command = ks.sandboxed_command([sys.executable, script], scratch)
    assert command[0] != sys.executable, "the command was not wrapped in the launcher"
    return subprocess.run(command, capture_output=True, text=True, timeout=timeout)


@pytest.fixture
def scratch():
    folder = tempfile.mkdtemp(prefix="kernelsmith-test-sandbox-")
    yield folder
    import shutil

    shutil.rmtree(folder, ignore_errors=True)


def test_the_status_names_each_protection():
    names = [p.name for p in STATUS.protections]
    assert names == ["limits", "network", "processes", "ipc", "filesystem", "user", "syscalls"], STATUS.summary()
    _require_sandbox()
    assert all(p.detail for p in STATUS.protections)
    assert "sandbox:" in STATUS.summary()


def test_host_code_cannot_open_a_network_socket(scratch):
    _require_sandbox()
    result = run_confined("""
        import socket
        for family in (socket.AF_INET, socket.AF_INET6, socket.AF_PACKET, socket.AF_NETLINK):
            try:
                socket.socket(family, socket.SOCK_RAW if family == socket.AF_PACKET else socket.SOCK_DGRAM)
                print("OPENED", family)
            except OSError as error:
                print("refused", family, error.errno)
        socket.socketpair()  # AF_UNIX stays: Python itself uses it
        print("unix ok")
        """, scratch)
    assert result.returncode == 0, result.stderr
    assert "OPENED" not in result.stdout
    assert result.stdout.count("refused") == 4
    assert "unix ok" in result.stdout


def test_host_code_writes_only_to_its_scratch_folder_and_reads_no_other(scratch, tmp_path):
    _require_sandbox()
    other = tmp_path / "another-candidate"
    other.mkdir()
    (other / "kernel.cu").write_text("the other candidate's source")
    cache = tmp_path / "cache" / "oracle"
    cache.mkdir(parents=True)
    (cache / "expected.bin").write_bytes(b"the expected outputs")
    outside = os.path.join(tempfile.gettempdir(), f"kernelsmith-escape-{os.getpid()}")
    home = os.path.expanduser("~")
    result = run_confined(f"""
        import os
        for path in [{str(other / 'kernel.cu')!r}, {str(cache / 'expected.bin')!r}, {home + '/.bash_history'!r}]:
            try:
                print("READ", open(path).read())
            except OSError as error:
                print("refused read", error.errno)
        for path in [{outside!r}, {str(tmp_path / 'planted.py')!r}, {str(cache / 'expected.bin')!r}]:
            try:
                open(path, "w").write("x")
                print("WROTE", path)
            except OSError as error:
                print("refused write", error.errno)
        open("inside.txt", "w").write("ok")
        print("cwd", os.getcwd(), "home", os.environ["HOME"], "tmp", os.environ["TMPDIR"])
        """, scratch)
    assert result.returncode == 0, result.stderr
    assert "READ" not in result.stdout and "WROTE" not in result.stdout, result.stdout
    assert result.stdout.count("refused read") == 3
    assert result.stdout.count("refused write") == 3
    assert f"cwd {scratch} home {scratch} tmp {scratch}" in result.stdout
    assert not os.path.exists(outside)
    assert (cache / "expected.bin").read_bytes() == b"the expected outputs"
    with open(os.path.join(scratch, "inside.txt"), encoding="utf-8") as inside:
        assert inside.read() == "ok"


def test_host_code_sees_no_other_process_and_cannot_trace_or_signal_one(scratch):
    _require_sandbox()
    result = run_confined(f"""
        import ctypes, os, signal
        pids = sorted(int(p) for p in os.listdir("/proc") if p.isdigit())
        print("pids", len(pids), os.getpid() in pids)
        try:
            os.kill({os.getpid()}, signal.SIGTERM)
            print("SIGNALLED")
        except OSError as error:
            print("refused kill", error.errno)
        libc = ctypes.CDLL(None, use_errno=True)
        print("ptrace", libc.ptrace(16, {os.getpid()}, 0, 0), ctypes.get_errno())
        print("unshare", libc.unshare(0x10000000), ctypes.get_errno())
        """, scratch)
    assert result.returncode == 0, result.stderr
    # Itself and its namespace's first process (the launcher's, which waits for it) only.
    assert "pids 2 True" in result.stdout
    assert "SIGNALLED" not in result.stdout
    assert "ptrace -1 1" in result.stdout  # EPERM
    assert "unshare -1 1" in result.stdout


def test_nothing_host_code_starts_outlives_it(scratch):
    _require_sandbox()
    marker = f"{4242 + os.getpid() % 1000}.5"
    result = run_confined(f"""
        import subprocess
        # Detached the usual ways: a new session, and a double fork.
        subprocess.Popen(["sleep", "{marker}"], start_new_session=True)
        subprocess.Popen(["sh", "-c", "sleep {marker} &"])
        print("started")
        """, scratch)
    assert result.returncode == 0, result.stderr
    deadline = time.time() + 5
    while time.time() < deadline:
        alive = subprocess.run(["pgrep", "-f", f"sleep {marker}"], capture_output=True, text=True).stdout.split()
        if not alive:
            break
        time.sleep(0.05)
    assert not alive, f"processes outlived the sandbox: {alive}"


def test_kernelsmith_devices_reports_the_sandbox():
    result = subprocess.run([sys.executable, "-m", "kernelsmith", "devices"], capture_output=True, text=True,
                            timeout=300)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("sandbox: ")
    for protection in STATUS.protections:
        assert f"  {protection.name}" in result.stdout


def test_switched_off_it_is_reported_and_require_sandbox_refuses():
    env = dict(os.environ, KERNELSMITH_SANDBOX="off")
    code = ("import kernelsmith as ks\n"
            "print(ks.sandbox_status().summary())\n"
            "options = ks.EvaluatorOptions(); options.require_sandbox = True\n"
            "try:\n    ks.create_evaluator(options)\nexcept ValueError as error:\n    print('refused:', error)\n")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300)
    assert result.returncode == 0, result.stderr
    assert "sandbox: off (switched off by KERNELSMITH_SANDBOX=off)" in result.stdout
    assert "refused:" in result.stdout and "require_sandbox" in result.stdout
