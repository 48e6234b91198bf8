"""An OpenAI-compatible chat-completions client on the standard library alone.

It works with any server speaking ``POST {base}/chat/completions`` (OpenAI, vLLM, SGLang, llama.cpp's
server, Ollama's ``/v1``, LiteLLM, ...). Retries 429, 5xx, dropped connections and timeouts with
exponential backoff (honouring ``Retry-After``), limits the requests in flight with a semaphore, keeps
token totals per model, records each HTTP attempt (status, error, seconds), and can cancel the requests
in flight (``cancel()``: their connections are shut, so a call blocked on a silent server returns).
"""

from __future__ import annotations

import email.utils
import http.client
import json
import os
import random
import socket
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from typing import Any, Dict, Mapping, Optional, Tuple

from kernelsmith import _inputs
from kernelsmith.llm.client import (
    HttpAttempt,
    LlmCancelledError,
    LlmRequestError,
    LlmResult,
    LlmTimeoutError,
    TokenAccounting,
    normalize_messages,
    normalize_result,
)

_LOOPBACK_HOSTS = {"127.0.0.1", "localhost", "::1"}


def chat_completions_url(url: str) -> str:
    """The endpoint for a base URL: ``http://host:8000/v1`` → ``http://host:8000/v1/chat/completions``;
    a URL already ending in ``/chat/completions`` is kept."""
    parsed = urllib.parse.urlparse(url)
    if parsed.scheme not in ("http", "https") or not parsed.netloc:
        raise ValueError(
            f"LLM URL {url!r} must be an http:// or https:// URL, e.g. http://127.0.0.1:8000/v1"
        )
    trimmed = url.rstrip("/")
    if trimmed.endswith("/chat/completions"):
        return trimmed
    return trimmed + "/chat/completions"


def _retry_after_seconds(value: Optional[str]) -> Optional[float]:
    """Seconds from a Retry-After header: a number of seconds or an HTTP date."""
    if not value:
        return None
    value = value.strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when is None:
        return None
    return max(0.0, when.timestamp() - time.time())


class _RetryableError(Exception):
    def __init__(self, message: str, retry_after: Optional[float] = None, timeout: bool = False, status: int = 0,
                 kind: str = "connection error"):
        super().__init__(message)
        self.retry_after = retry_after
        self.timeout = timeout
        self.status = status
        self.kind = kind  # how the attempt is recorded: "HTTP <status>", "timeout", "connection error"


def _attempt_error(kind: str, message: str) -> str:
    """An attempt's error as recorded: its kind first ("HTTP 500", "timeout", "connection error", ...)."""
    return message if message.startswith(kind) else f"{kind}: {message}"


class _ConnectionRegistry:
    """The HTTP connections open for requests, by thread, so that cancel() can shut them down."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._by_thread: Dict[int, Any] = {}
        self._shutdowns = 0  # shut_all() calls so far

    def track(self, connection_class: Any) -> Any:
        def make(*args: Any, **kwargs: Any) -> Any:
            connection = connection_class(*args, **kwargs)
            with self._lock:
                self._by_thread[threading.get_ident()] = connection
                created = self._shutdowns
            connect = connection.connect

            def connect_unless_shut() -> None:
                # A shut_all() while this connection was still connecting found no socket to shut.
                connect()
                with self._lock:
                    missed = self._shutdowns != created
                if missed:
                    _shut(connection)

            connection.connect = connect_unless_shut
            return connection

        return make

    def forget(self) -> None:
        with self._lock:
            self._by_thread.pop(threading.get_ident(), None)

    def shut_all(self) -> None:
        with self._lock:
            self._shutdowns += 1
            connections = list(self._by_thread.values())
        for connection in connections:
            _shut(connection)


def _shut(connection: Any) -> None:
    """Shuts a connection's socket down, which wakes a thread blocked reading the answer."""
    sock = getattr(connection, "sock", None)
    if sock is None:
        return
    try:
        sock.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass


def _tracking_handler(base: Any, registry: _ConnectionRegistry) -> Any:
    """A urllib handler (HTTP or HTTPS) whose connections the registry knows."""

    class Handler(base):
        def do_open(self, http_class: Any, req: Any, **kwargs: Any) -> Any:  # noqa: D102 (urllib's hook)
            return super().do_open(registry.track(http_class), req, **kwargs)

    return Handler()


class OpenAIChatClient:
    """A chat-completions client; call it with messages to get an :class:`LlmResult`.

    Parameters
    ----------
    url:
        Base URL (``http://127.0.0.1:8000/v1``) or the full ``.../chat/completions`` endpoint.
    model:
        Model name sent with each request (a call may override it with ``model=``).
    api_key, api_key_env:
        The key, or the environment variable holding it (read at each request); none for local servers.
    timeout:
        Seconds a network operation may take (connecting, or waiting for the next bytes); a silent server
        costs this much per attempt (``kernelsmith evolve --llm-timeout``).
    max_retries:
        Retries after the first attempt for 429, 5xx, dropped connections and timeouts
        (``kernelsmith evolve --llm-retries``).
    backoff_initial, backoff_max:
        The wait before retry k is ``backoff_initial * 2**k`` with jitter, at most ``backoff_max``; a
        ``Retry-After`` header replaces it (also capped by ``backoff_max``).
    max_concurrency:
        Requests in flight at once through this client; more calls wait.
    temperature, max_tokens, extra_body:
        Defaults of the request body (``extra_body`` is merged into it, e.g. ``{"top_p": 0.95}``).
    """

    def __init__(
        self,
        url: str,
        model: str,
        *,
        api_key: Optional[str] = None,
        api_key_env: Optional[str] = None,
        timeout: float = 300.0,
        max_retries: int = 4,
        backoff_initial: float = 1.0,
        backoff_max: float = 60.0,
        max_concurrency: int = 8,
        temperature: Optional[float] = None,
        max_tokens: Optional[int] = None,
        extra_body: Optional[Mapping[str, Any]] = None,
        headers: Optional[Mapping[str, str]] = None,
        accounting: Optional[TokenAccounting] = None,
        seed: Optional[int] = None,
    ) -> None:
        if max_concurrency < 1:
            raise ValueError("max_concurrency must be at least 1")
        if max_retries < 0:
            raise ValueError("max_retries must be >= 0")
        if timeout <= 0:
            raise ValueError("timeout must be positive")
        self.endpoint = chat_completions_url(url)
        self.model = model
        self.api_key = api_key
        self.api_key_env = api_key_env
        self.timeout = float(timeout)
        self.max_retries = int(max_retries)
        self.backoff_initial = float(backoff_initial)
        self.backoff_max = float(backoff_max)
        self.max_concurrency = int(max_concurrency)
        self.temperature = temperature
        self.max_tokens = max_tokens
        self.extra_body = dict(extra_body or {})
        self.headers = dict(headers or {})
        self.accounting = accounting if accounting is not None else TokenAccounting()
        self._semaphore = threading.BoundedSemaphore(self.max_concurrency)
        self._in_flight_lock = threading.Lock()
        self._in_flight = 0
        self.peak_in_flight = 0
        self._rng = random.Random(seed)
        # cancel() bumps the generation: calls that started before it give up, later ones are not affected.
        self._cancel_generation = 0
        self._cancelled = threading.Condition(self._in_flight_lock)
        self._connections = _ConnectionRegistry()
        host = urllib.parse.urlparse(self.endpoint).hostname or ""
        # A loopback server must never be reached through a proxy from the environment.
        handlers: list = [urllib.request.ProxyHandler({})] if host in _LOOPBACK_HOSTS else []
        handlers.append(_tracking_handler(urllib.request.HTTPHandler, self._connections))
        if hasattr(urllib.request, "HTTPSHandler"):  # absent from a Python built without ssl
            handlers.append(_tracking_handler(urllib.request.HTTPSHandler, self._connections))
        self._opener = urllib.request.build_opener(*handlers)

    def __repr__(self) -> str:
        return f"OpenAIChatClient({self.endpoint!r}, model={self.model!r})"

    # -- the request ---------------------------------------------------------------------------------

    def _key(self) -> Optional[str]:
        if self.api_key:
            return self.api_key
        if self.api_key_env:
            return os.environ.get(self.api_key_env) or None
        return None

    def _body(self, messages: Any, options: Mapping[str, Any]) -> Dict[str, Any]:
        body: Dict[str, Any] = {
            "model": options.get("model") or self.model,
            "messages": normalize_messages(messages),
        }
        temperature = options.get("temperature", self.temperature)
        if temperature is not None:
            body["temperature"] = float(temperature)
        max_tokens = options.get("max_tokens", self.max_tokens)
        if max_tokens:
            body["max_tokens"] = int(max_tokens)
        if options.get("seed") is not None:
            body["seed"] = int(options["seed"]) & 0x7FFFFFFF
        body.update(self.extra_body)
        return body

    def cancel(self) -> None:
        """Makes the requests in flight give up now: their connections are shut down, retries and backoff
        waits end, and each call raises :class:`LlmCancelledError`. Requests started later are not
        affected. Thread-safe; the engine calls it (through ``Mutator.cancel``) when a run must end."""
        with self._cancelled:
            self._cancel_generation += 1
            self._cancelled.notify_all()
        self._connections.shut_all()

    def _attempt(self, payload: bytes, timeout: float) -> Tuple[int, Dict[str, Any]]:
        headers = {"Content-Type": "application/json", "Accept": "application/json", **self.headers}
        key = self._key()
        if key:
            headers["Authorization"] = f"Bearer {key}"
        request = urllib.request.Request(self.endpoint, data=payload, headers=headers, method="POST")
        try:
            with self._opener.open(request, timeout=timeout) as response:
                status = int(getattr(response, "status", 200) or 200)
                raw = response.read()
        except urllib.error.HTTPError as error:
            body = error.read().decode("utf-8", "replace")[:500]
            error.close()
            message = f"HTTP {error.code} from {self.endpoint}: {body.strip() or error.reason}"
            if error.code == 429 or error.code >= 500:
                raise _RetryableError(message, _retry_after_seconds(error.headers.get("Retry-After")),
                                      status=error.code, kind=f"HTTP {error.code}")
            raise LlmRequestError(message, status=error.code) from None
        except urllib.error.URLError as error:
            reason = error.reason
            if isinstance(reason, (socket.timeout, TimeoutError)):
                raise _RetryableError(
                    f"no answer from {self.endpoint} within {timeout:g} s", timeout=True, kind="timeout"
                ) from None
            raise _RetryableError(f"cannot reach {self.endpoint}: {reason}") from None
        except (socket.timeout, TimeoutError):
            raise _RetryableError(
                f"no answer from {self.endpoint} within {timeout:g} s", timeout=True, kind="timeout"
            ) from None
        except (ConnectionError, http.client.HTTPException, OSError) as error:
            raise _RetryableError(
                f"connection to {self.endpoint} failed: {type(error).__name__}: {error}"
            ) from None
        try:
            document = _inputs.loads(raw.decode("utf-8"))  # the handler below names the endpoint
        except (UnicodeDecodeError, json.JSONDecodeError) as error:
            raise LlmRequestError(
                f"{self.endpoint} answered with a body that is not JSON ({error}): {raw[:200]!r}", status=status
            ) from None
        if not isinstance(document, dict) or not document.get("choices"):
            raise LlmRequestError(
                f"{self.endpoint} answered without 'choices': {json.dumps(document)[:300]}", status=status
            )
        return status, document

    def _backoff(self, attempt: int, retry_after: Optional[float]) -> float:
        if retry_after is not None:
            return min(retry_after, self.backoff_max)
        delay = self.backoff_initial * (2.0**attempt)
        return min(self.backoff_max, delay * (0.5 + 0.5 * self._rng.random()))

    def complete(self, messages: Any, **options: Any) -> LlmResult:
        """Sends one chat completion; retries transient failures. Raises :class:`LlmRequestError`,
        :class:`LlmTimeoutError` when it fails for good, or :class:`LlmCancelledError` after ``cancel()``;
        the error's ``attempts`` (the result's ``http_attempts`` on success) list each HTTP attempt."""
        body = self._body(messages, options)
        model = str(body["model"])
        payload = json.dumps(body).encode("utf-8")
        timeout = float(options.get("timeout") or self.timeout)
        with self._in_flight_lock:
            generation = self._cancel_generation
        attempts: list = []

        def cancelled() -> bool:
            return self._cancel_generation != generation

        def give_up(error_class: Any, message: str) -> None:
            self.accounting.record(model, None, failed=True)
            raise error_class(message, attempts=attempts) from None

        start = time.perf_counter()
        while True:
            attempt_start = time.perf_counter()
            try:
                with self._semaphore:
                    if cancelled():
                        give_up(LlmCancelledError, f"request to {self.endpoint} cancelled before it was sent")
                    with self._in_flight_lock:
                        self._in_flight += 1
                        self.peak_in_flight = max(self.peak_in_flight, self._in_flight)
                    try:
                        status, document = self._attempt(payload, timeout)
                    finally:
                        self._connections.forget()
                        with self._in_flight_lock:
                            self._in_flight -= 1
                attempts.append(HttpAttempt(status, "", time.perf_counter() - attempt_start))
                break
            except _RetryableError as error:
                seconds = time.perf_counter() - attempt_start
                if cancelled():
                    attempts.append(HttpAttempt(0, f"cancelled: {error}", seconds))
                    give_up(LlmCancelledError, f"request to {self.endpoint} cancelled after {seconds:.1f} s "
                                               f"(attempt {len(attempts)})")
                attempts.append(HttpAttempt(error.status, _attempt_error(error.kind, str(error)), seconds))
                if len(attempts) > self.max_retries:
                    suffix = f" (after {len(attempts)} attempts)"
                    give_up(LlmTimeoutError if error.timeout else LlmRequestError, str(error) + suffix)
                with self._cancelled:
                    self._cancelled.wait_for(cancelled, self._backoff(len(attempts) - 1, error.retry_after))
                if cancelled():
                    give_up(LlmCancelledError, f"request to {self.endpoint} cancelled while waiting to retry "
                                               f"(after {len(attempts)} attempts)")
            except LlmRequestError as error:
                status = error.status or 0
                kind = f"HTTP {status}" if status >= 400 else "bad answer"
                attempts.append(HttpAttempt(status, _attempt_error(kind, str(error)), time.perf_counter() - attempt_start))
                error.attempts = list(attempts)
                self.accounting.record(model, None, failed=True)
                raise
        result = normalize_result(document, default_model=model)
        result.latency_seconds = time.perf_counter() - start
        result.attempts = len(attempts)
        result.http_attempts = attempts
        self.accounting.record(model, result)
        return result

    __call__ = complete

    async def acomplete(self, messages: Any, **options: Any) -> LlmResult:
        """:meth:`complete` for async code (runs in a worker thread; the semaphore still applies)."""
        import asyncio

        return await asyncio.to_thread(self.complete, messages, **options)
