"""A real OpenAI-compatible HTTP server on 127.0.0.1 (a random port) that serves scripted answers.

Tests start it, point a client at ``server.url`` and script what each request gets: chat answers with
usage, error statuses with headers, delays. The server records every request (its JSON body, headers
and arrival time) and measures how many requests were in flight at once.
"""

from __future__ import annotations

import dataclasses
import http.server
import json
import threading
import time
from typing import Any, Callable, Dict, List, Optional


@dataclasses.dataclass
class Reply:
    status: int = 200
    body: Any = None  # dict → JSON; str/bytes → sent as is
    headers: Dict[str, str] = dataclasses.field(default_factory=dict)
    delay: float = 0.0  # seconds to wait before answering


def chat_reply(
    text: str, model: str = "", prompt_tokens: int = 100, completion_tokens: int = 20, delay: float = 0.0
) -> Reply:
    """A chat completion answering ``text``; an empty model echoes the request's."""
    body = {
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "model": model,
        "choices": [
            {"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}
        ],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        },
    }
    return Reply(200, body, {}, delay)


@dataclasses.dataclass
class Received:
    path: str
    body: Dict[str, Any]
    headers: Dict[str, str]
    arrived: float


class LoopbackLlmServer:
    """Scripted replies in order (the last one repeats), or a ``responder(body, index) -> Reply``."""

    def __init__(self, replies: Optional[List[Reply]] = None,
                 responder: Optional[Callable[[Dict[str, Any], int], Reply]] = None) -> None:
        self.replies: List[Reply] = list(replies or [])
        self.responder = responder
        self.received: List[Received] = []
        self.in_flight = 0
        self.peak_in_flight = 0
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        server = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:  # keep test output clean
                pass

            def do_POST(self) -> None:  # noqa: N802 (the http.server naming)
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length)
                try:
                    body = json.loads(raw.decode("utf-8"))
                except ValueError:
                    body = {"_raw": raw.decode("utf-8", "replace")}
                with server._lock:
                    index = len(server.received)
                    server.received.append(
                        Received(self.path, body, {k.lower(): v for k, v in self.headers.items()},
                                 time.monotonic())
                    )
                    server.in_flight += 1
                    server.peak_in_flight = max(server.peak_in_flight, server.in_flight)
                finished = False

                def finish():
                    # Before the reply goes out: once the client has it, it may send its next request
                    # before this thread runs again, which would count one request twice.
                    nonlocal finished
                    if not finished:
                        finished = True
                        with server._lock:
                            server.in_flight -= 1

                try:
                    reply = server._reply_for(body, index)
                    if reply.delay > 0:
                        server._stopping.wait(reply.delay)
                    if isinstance(reply.body, dict):
                        if reply.body.get("model") == "":
                            reply.body = {**reply.body, "model": body.get("model", "")}
                        payload = json.dumps(reply.body).encode("utf-8")
                    elif isinstance(reply.body, str):
                        payload = reply.body.encode("utf-8")
                    else:
                        payload = reply.body or b""
                    finish()
                    self.send_response(reply.status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(payload)))
                    for key, value in reply.headers.items():
                        self.send_header(key, value)
                    self.end_headers()
                    self.wfile.write(payload)
                    self.wfile.flush()
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (a timeout test)
                finally:
                    finish()

        self._server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, name="loopback-llm",
                                        daemon=True)

    def _reply_for(self, body: Dict[str, Any], index: int) -> Reply:
        if self.responder is not None:
            return self.responder(body, index)
        if not self.replies:
            return Reply(500, {"error": "no scripted reply"})
        reply = self.replies[min(index, len(self.replies) - 1)]
        return dataclasses.replace(reply, body=reply.body, headers=dict(reply.headers))

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}/v1"

    def __enter__(self) -> "LoopbackLlmServer":
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._stopping.set()
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)
