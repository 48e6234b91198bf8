"""An OpenAI-compatible chat-completions client on the standard library alone.

It works with any server speaking ``POST {base}/chat/completions`` (OpenAI, vLLM, SGLang, llama.cpp's
server, Ollama's ``/v1``, LiteLLM, ...). Retries 429, 5xx, dropped connections and timeouts with
exponential backoff (honouring ``Retry-After``), limits the requests in flight with a semaphore, and
keeps token totals per model.
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
from typing import Any, Dict, Mapping, Optional

from kernelsmith.llm.client import (
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
    def __init__(self, message: str, retry_after: Optional[float] = None, timeout: bool = False):
        super().__init__(message)
        self.retry_after = retry_after
        self.timeout = timeout


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
        Seconds a network operation may take (connecting, or waiting for the next bytes).
    max_retries:
        Retries after the first attempt for 429, 5xx, dropped connections and timeouts.
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
        host = urllib.parse.urlparse(self.endpoint).hostname or ""
        # A loopback server must never be reached through a proxy from the environment.
        handlers = [urllib.request.ProxyHandler({})] if host in _LOOPBACK_HOSTS else []
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

    def _attempt(self, payload: bytes, timeout: float) -> Dict[str, Any]:
        headers = {"Content-Type": "application/json", "Accept": "application/json", **self.headers}
        key = self._key()
        if key:
            headers["Authorization"] = f"Bearer {key}"
        request = urllib.request.Request(self.endpoint, data=payload, headers=headers, method="POST")
        try:
            with self._opener.open(request, timeout=timeout) as response:
                raw = response.read()
        except urllib.error.HTTPError as error:
            body = error.read().decode("utf-8", "replace")[:500]
            error.close()
            message = f"HTTP {error.code} from {self.endpoint}: {body.strip() or error.reason}"
            if error.code == 429 or error.code >= 500:
                raise _RetryableError(message, _retry_after_seconds(error.headers.get("Retry-After")))
            raise LlmRequestError(message, status=error.code) from None
        except urllib.error.URLError as error:
            reason = error.reason
            if isinstance(reason, (socket.timeout, TimeoutError)):
                raise _RetryableError(
                    f"no answer from {self.endpoint} within {timeout:g} s", timeout=True
                ) from None
            raise _RetryableError(f"cannot reach {self.endpoint}: {reason}") from None
        except (socket.timeout, TimeoutError):
            raise _RetryableError(
                f"no answer from {self.endpoint} within {timeout:g} s", timeout=True
            ) from None
        except (ConnectionError, http.client.HTTPException, OSError) as error:
            raise _RetryableError(
                f"connection to {self.endpoint} failed: {type(error).__name__}: {error}"
            ) from None
        try:
            document = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as error:
            raise LlmRequestError(
                f"{self.endpoint} answered with a body that is not JSON ({error}): {raw[:200]!r}"
            ) from None
        if not isinstance(document, dict) or not document.get("choices"):
            raise LlmRequestError(
                f"{self.endpoint} answered without 'choices': {json.dumps(document)[:300]}"
            )
        return document

    def _backoff(self, attempt: int, retry_after: Optional[float]) -> float:
        if retry_after is not None:
            return min(retry_after, self.backoff_max)
        delay = self.backoff_initial * (2.0**attempt)
        return min(self.backoff_max, delay * (0.5 + 0.5 * self._rng.random()))

    def complete(self, messages: Any, **options: Any) -> LlmResult:
        """Sends one chat completion; retries transient failures. Raises :class:`LlmRequestError` or
        :class:`LlmTimeoutError` when it fails for good."""
        body = self._body(messages, options)
        model = str(body["model"])
        payload = json.dumps(body).encode("utf-8")
        timeout = float(options.get("timeout") or self.timeout)
        start = time.perf_counter()
        attempt = 0
        while True:
            try:
                with self._semaphore:
                    with self._in_flight_lock:
                        self._in_flight += 1
                        self.peak_in_flight = max(self.peak_in_flight, self._in_flight)
                    try:
                        document = self._attempt(payload, timeout)
                    finally:
                        with self._in_flight_lock:
                            self._in_flight -= 1
                break
            except _RetryableError as error:
                if attempt >= self.max_retries:
                    self.accounting.record(model, None, failed=True)
                    suffix = f" (after {attempt + 1} attempts)"
                    if error.timeout:
                        raise LlmTimeoutError(str(error) + suffix) from None
                    raise LlmRequestError(str(error) + suffix) from None
                time.sleep(self._backoff(attempt, error.retry_after))
                attempt += 1
            except LlmRequestError:
                self.accounting.record(model, None, failed=True)
                raise
        result = normalize_result(document, default_model=model)
        result.latency_seconds = time.perf_counter() - start
        result.attempts = attempt + 1
        self.accounting.record(model, result)
        return result

    __call__ = complete

    async def acomplete(self, messages: Any, **options: Any) -> LlmResult:
        """:meth:`complete` for async code (runs in a worker thread; the semaphore still applies)."""
        import asyncio

        return await asyncio.to_thread(self.complete, messages, **options)
