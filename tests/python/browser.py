"""Headless Chromium driven over the DevTools protocol, for the web view's browser tests.

Debian's `chromium` package is started with `--remote-debugging-pipe`: the protocol's JSON messages,
each ended by a NUL byte, go in on the browser's file descriptor 3 and come out on its descriptor 4. No
driver binary and no Python package are needed beyond the browser itself. `find_chromium()` says where it
is, or why there is none (the tests skip with that reason, or fail when KERNELSMITH_REQUIRE_CHROMIUM is
set, as CI sets it).
"""

from __future__ import annotations

import base64
import fcntl
import json
import os
import select
import shutil
import subprocess
import tempfile
import time
from typing import Any, Dict, List, Optional, Tuple

NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")


def find_chromium() -> Tuple[Optional[str], str]:
    """(path, "") of a Chromium to drive, or (None, why there is none)."""
    override = os.environ.get("KERNELSMITH_CHROMIUM")
    if override:
        if shutil.which(override):
            return shutil.which(override), ""
        return None, f"KERNELSMITH_CHROMIUM={override} is not an executable"
    for name in NAMES:
        path = shutil.which(name)
        if path:
            return path, ""
    return None, ("no Chromium found (looked for " + ", ".join(NAMES) + "): install Debian's package "
                  "`chromium` (tools/setup-deps.sh does), or set KERNELSMITH_CHROMIUM")


class BrowserError(RuntimeError):
    pass


class Browser:
    """One headless Chromium with one page. Use as a context manager."""

    def __init__(self, executable: str, width: int = 1360, height: int = 900, timeout: float = 60.0) -> None:
        self.timeout = timeout
        self.profile = tempfile.mkdtemp(prefix="kernelsmith-chromium-")
        commands_read, commands_write = os.pipe()
        replies_read, replies_write = os.pipe()
        # Out of the way of 3 and 4, so that the child's dup2 calls cannot overwrite one another.
        child_in = fcntl.fcntl(commands_read, fcntl.F_DUPFD, 10)
        child_out = fcntl.fcntl(replies_write, fcntl.F_DUPFD, 10)
        os.close(commands_read)
        os.close(replies_write)

        def wire() -> None:
            os.dup2(child_in, 3)
            os.dup2(child_out, 4)

        # No sandbox: Chromium's needs privileges a CI container lacks (and refuses root), and the browser only
        # loads the test's own pages from 127.0.0.1.
        arguments = [
            executable, "--headless=new", "--no-sandbox", "--remote-debugging-pipe", f"--user-data-dir={self.profile}",
            "--no-first-run", "--no-default-browser-check", "--disable-gpu", "--disable-extensions",
            "--disable-background-networking", "--disable-sync", "--disable-dev-shm-usage", "--mute-audio",
            "--hide-scrollbars", f"--window-size={width},{height}", "about:blank",
        ]
        # Chromium writes much to stderr: a file, not a pipe nobody drains (a full pipe would stop it).
        self.log = tempfile.TemporaryFile()
        self.process = subprocess.Popen(arguments, pass_fds=(3, 4), preexec_fn=wire, stdin=subprocess.DEVNULL,
                                        stdout=subprocess.DEVNULL, stderr=self.log)
        os.close(child_in)
        os.close(child_out)
        self._out = commands_write
        self._in = replies_read
        self._buffer = b""
        self._next_id = 0
        self.events: List[Dict[str, Any]] = []
        self.session: Optional[str] = None
        target = self.call("Target.createTarget", {"url": "about:blank"}, session=False)["targetId"]
        self.session = self.call("Target.attachToTarget", {"targetId": target, "flatten": True},
                                 session=False)["sessionId"]
        for domain in ("Page.enable", "Runtime.enable", "Log.enable"):
            self.call(domain)
        self.call("Emulation.setDeviceMetricsOverride",
                  {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False})

    # -- the protocol ---------------------------------------------------------------------------

    def _read_message(self, deadline: float) -> Dict[str, Any]:
        while b"\0" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0:
                raise BrowserError("no answer from Chromium in time")
            ready, _, _ = select.select([self._in], [], [], left)
            if not ready:
                continue
            chunk = os.read(self._in, 1 << 20)
            if not chunk:
                raise BrowserError(f"Chromium closed the DevTools pipe (exit {self.process.poll()}): {self.stderr()}")
            self._buffer += chunk
        message, self._buffer = self._buffer.split(b"\0", 1)
        return json.loads(message)

    def stderr(self) -> str:
        """The last lines Chromium wrote to stderr."""
        self.log.seek(0)
        return self.log.read().decode(errors="replace")[-2000:]

    def call(self, method: str, params: Optional[Dict[str, Any]] = None, session: bool = True) -> Dict[str, Any]:
        self._next_id += 1
        message: Dict[str, Any] = {"id": self._next_id, "method": method, "params": params or {}}
        if session and self.session:
            message["sessionId"] = self.session
        os.write(self._out, json.dumps(message).encode() + b"\0")
        deadline = time.monotonic() + self.timeout
        while True:
            reply = self._read_message(deadline)
            if reply.get("id") == self._next_id:
                if "error" in reply:
                    raise BrowserError(f"{method}: {reply['error']}")
                return reply.get("result", {})
            if "method" in reply:
                self.events.append(reply)

    def wait_event(self, method: str, since: int = 0, timeout: Optional[float] = None) -> Dict[str, Any]:
        deadline = time.monotonic() + (timeout or self.timeout)
        index = since
        while True:
            for event in self.events[index:]:
                if event["method"] == method:
                    return event
            index = len(self.events)
            reply = self._read_message(deadline)
            if "method" in reply:
                self.events.append(reply)

    # -- what the tests do ------------------------------------------------------------------------

    def open(self, url: str) -> None:
        """Loads a page and waits for its load event (scripts with defer have run)."""
        mark = len(self.events)
        result = self.call("Page.navigate", {"url": url})
        if result.get("errorText"):
            raise BrowserError(f"cannot load {url}: {result['errorText']}")
        self.wait_event("Page.loadEventFired", since=mark)

    def evaluate(self, expression: str) -> Any:
        """The value of a JavaScript expression in the page (promises awaited)."""
        result = self.call("Runtime.evaluate", {"expression": expression, "awaitPromise": True,
                                                "returnByValue": True})
        if "exceptionDetails" in result:
            raise BrowserError(f"{expression[:80]}: {result['exceptionDetails'].get('text')} "
                               f"{result['exceptionDetails'].get('exception', {}).get('description', '')}")
        return result["result"].get("value")

    def wait_for(self, expression: str, timeout: float = 20.0, interval: float = 0.1) -> Any:
        """Polls a JavaScript expression until it is truthy; returns its value."""
        deadline = time.monotonic() + timeout
        while True:
            value = self.evaluate(expression)
            if value:
                return value
            if time.monotonic() > deadline:
                raise BrowserError(f"timed out waiting for: {expression}")
            time.sleep(interval)

    def screenshot(self, path: str, full_page: bool = True) -> bytes:
        """Writes a PNG of the page (the whole page by default) and returns its bytes."""
        params: Dict[str, Any] = {"format": "png"}
        if full_page:
            size = self.call("Page.getLayoutMetrics")["cssContentSize"]
            params["clip"] = {"x": 0, "y": 0, "width": size["width"], "height": min(size["height"], 6000), "scale": 1}
            params["captureBeyondViewport"] = True
        data = base64.b64decode(self.call("Page.captureScreenshot", params)["data"])
        with open(path, "wb") as handle:
            handle.write(data)
        return data

    def problems(self) -> List[str]:
        """JavaScript exceptions and console or browser errors (a blocked script included) seen so far."""
        found = []
        for event in self.events:
            if event["method"] == "Runtime.exceptionThrown":
                details = event["params"]["exceptionDetails"]
                found.append(f"exception: {details.get('text')} {details.get('exception', {}).get('description', '')}")
            elif event["method"] == "Log.entryAdded" and event["params"]["entry"]["level"] == "error":
                entry = event["params"]["entry"]
                found.append(f"{entry.get('source')}: {entry.get('text')} ({entry.get('url', '')})")
            elif event["method"] == "Runtime.consoleAPICalled" and event["params"]["type"] == "error":
                found.append("console: " + " ".join(str(a.get("value", a.get("description"))) for a in event["params"]["args"]))
        return found

    def close(self) -> None:
        try:
            if self.process.poll() is None:
                try:
                    self.call("Browser.close", session=False)
                except (BrowserError, OSError):
                    pass
                try:
                    self.process.wait(10)
                except subprocess.TimeoutExpired:
                    self.process.kill()
                    self.process.wait(10)
        finally:
            for fd in (self._out, self._in):
                try:
                    os.close(fd)
                except OSError:
                    pass
            self.log.close()
            shutil.rmtree(self.profile, ignore_errors=True)

    def __enter__(self) -> "Browser":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
