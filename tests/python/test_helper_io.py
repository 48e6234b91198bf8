"""The request loop of the Python helpers (python/kernelsmith/_helper_io.py): a helper ends with the process that
started it, even in the middle of a request."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

HELPER_IO = Path(__file__).resolve().parents[2] / "python" / "kernelsmith" / "_helper_io.py"


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0]
    except OSError:
        return False
    return state != "Z"  # a zombie has ended; only its parent's wait is missing


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the parent-death signal is Linux's")
def test_a_helper_busy_with_a_request_ends_when_its_parent_is_killed(tmp_path: Path) -> None:
    # The helper: the shared request loop, with a handler that takes far longer than the test waits.
    helper = tmp_path / "slow_helper.py"
    helper.write_text(textwrap.dedent(f"""
        import importlib.util, time
        spec = importlib.util.spec_from_file_location("helper_io", {str(HELPER_IO)!r})
        helper_io = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(helper_io)
        def handle(request):
            open({str(tmp_path / "busy")!r}, "w").close()
            time.sleep(600)
            return {{"ok": True}}
        raise SystemExit(helper_io.run_helper(lambda workdir: handle, "a slow helper"))
    """))
    # The parent starts the helper, sends one request, prints the helper's pid and waits to be killed.
    parent = tmp_path / "parent.py"
    parent.write_text(textwrap.dedent(f"""
        import subprocess, sys, time
        child = subprocess.Popen([sys.executable, {str(helper)!r}], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        child.stdin.write(b'{{"op": "slow"}}\\n')
        child.stdin.flush()
        print(child.pid, flush=True)
        time.sleep(600)
    """))
    with subprocess.Popen([sys.executable, str(parent)], stdout=subprocess.PIPE, text=True) as started:
        try:
            helper_pid = int(started.stdout.readline())
            deadline = time.monotonic() + 30
            while not (tmp_path / "busy").exists():
                assert time.monotonic() < deadline, "the helper never started the request"
                time.sleep(0.05)
            assert alive(helper_pid)
        finally:
            started.kill()
    deadline = time.monotonic() + 10
    while alive(helper_pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    still_alive = alive(helper_pid)
    if still_alive:
        os.kill(helper_pid, 9)
    assert not still_alive, "the helper went on with its request after its parent was killed"
