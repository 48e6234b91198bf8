"""The request loop of kernelsmith's Python helper processes (triton_compile.py, pytorch_oracle.py).

The C++ library starts a helper as a script, by path, from an empty working folder (lib/detail/
python_helper.hpp): one JSON request per line on stdin, one JSON reply per line on stdout, any number of
requests, until end of input. A reply carries the request's ``"id"``; every failure is a reply
(``{"ok": false, "stage": ..., "message": ...}``), never an exception that ends the helper.

This module imports only the standard library. The helpers load it by path, from their own folder:
neither the kernelsmith package nor its folder is on ``sys.path`` in a helper, so that nothing in
them can shadow the modules a candidate or a problem file imports.
"""

from __future__ import annotations

import json
import os
import signal
import sys
from typing import Any, Callable, Dict, Optional, Sequence


def request_failure(message: str, stage: str = "request") -> Dict[str, Any]:
    """A reply saying a request failed at ``stage``."""
    return {"ok": False, "stage": stage, "line": None, "message": message}


def serve_json_lines(handle: Callable[[Dict[str, Any]], Dict[str, Any]], stdin: Any = None,
                     stdout: Any = None) -> int:
    """Reads JSON requests, one per line, until end of input; answers each with ``handle(request)`` on one
    line. A malformed line, or an exception ``handle`` lets through (a helper bug), is still one reply."""
    stdin = stdin or sys.stdin
    stdout = stdout or sys.stdout
    for line in stdin:
        if not line.strip():
            continue
        request: Optional[Dict[str, Any]] = None
        try:
            request = json.loads(line)
            if not isinstance(request, dict):
                raise ValueError("a request is a JSON object")
        except ValueError as error:
            reply = request_failure(f"malformed request: {error}")
            request = None
        else:
            try:
                reply = handle(request)
            except Exception as error:  # noqa: BLE001 - one reply per request, whatever happened
                reply = request_failure(f"{type(error).__name__}: {error}")
        if request is not None and "id" in request:
            reply["id"] = request["id"]
        stdout.write(json.dumps(reply) + "\n")
        stdout.flush()
    return 0


def end_with_parent() -> None:
    """Has Linux kill this helper when the process that started it dies. End of input ends an idle helper, but
    one in the middle of a request (a module's forward over gigabytes, a timing loop) would otherwise run it to
    the end, holding its memory and the GPU, with no one to answer."""
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        pr_set_pdeathsig = 1  # <linux/prctl.h>
        libc.prctl(pr_set_pdeathsig, int(signal.SIGKILL), 0, 0, 0)
    except (OSError, AttributeError):
        return  # not Linux: end of input still ends an idle helper
    # Confined (docs/security.md), a helper started by the worker has the worker, its pid namespace's first
    # process, as parent 1; the namespace ends with the worker, and the helper with it.
    if os.getppid() == 1 and not os.environ.get("KERNELSMITH_SANDBOXED"):
        os._exit(0)  # the parent died before the request took effect


def run_helper(make_handle: Callable[[Optional[str]], Callable[[Dict[str, Any]], Dict[str, Any]]], description: str,
               argv: Optional[Sequence[str]] = None) -> int:
    """A helper script's main: ``--workdir DIR`` (the folder for the files it writes; a new one when not
    given) is passed to ``make_handle``, whose handler then serves stdin until end of input."""
    import argparse

    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--workdir", default=None,
                        help="the helper's folder for the files it writes (default: a new one)")
    arguments = parser.parse_args(argv)
    end_with_parent()
    return serve_json_lines(make_handle(arguments.workdir))
