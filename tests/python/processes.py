"""Signalling a command the tests started (`from processes import signal_when_ready`)."""

from __future__ import annotations

import subprocess
from typing import Callable, Tuple


def signal_when_ready(process: subprocess.Popen, wait_until_ready: Callable[[], None], signal_number: int,
                      timeout: float = 120.0) -> Tuple[str, str]:
    """Sends the signal once wait_until_ready() returns, then collects (stdout, stderr); a process still alive
    afterwards (the wait or the command failed) is killed so that no test leaves one behind."""
    try:
        wait_until_ready()
        process.send_signal(signal_number)
        return process.communicate(timeout=timeout)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
