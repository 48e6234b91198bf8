"""The client protocol: any callable that takes chat messages and answers.

A client is anything callable as ``client(messages)`` or ``client(messages, **options)`` where
``messages`` is a list of ``{"role": ..., "content": ...}`` dicts. It may be a plain function or an
``async def``; it may return

- a string (the answer's text),
- a dict: ``{"text": ..., "model": ..., "usage": {"prompt_tokens": ..., "completion_tokens": ...}}``
  (``"content"`` works for ``"text"``, and a whole OpenAI chat-completions response body works too),
- an :class:`LlmResult`.

:func:`call_client` calls any such client and normalises the answer into an :class:`LlmResult`.
Options the callable does not declare (``model``, ``temperature``, ``max_tokens``, ``timeout``,
``seed``) are not passed to it.
"""

from __future__ import annotations

import asyncio
import dataclasses
import inspect
import threading
import time
from typing import Any, Callable, Dict, List, Mapping, Optional

Messages = List[Dict[str, str]]


@dataclasses.dataclass
class HttpAttempt:
    """One HTTP attempt of a request (a client retries after 429, 5xx, timeouts and dropped connections).

    ``status`` is the HTTP status of the answer, 0 when none came; ``error`` is empty for the answer used,
    else what went wrong, starting with its kind: ``HTTP 500 from URL: body``, ``timeout: ...``,
    ``connection error: ...``, ``cancelled: ...``. The run store keeps them per step (``llm_attempts``).
    """

    status: int = 0
    error: str = ""
    seconds: float = 0.0


class LlmError(Exception):
    """An LLM request failed for good (after any retries). ``attempts`` lists its HTTP attempts, when the
    client made any."""

    def __init__(self, *args: Any, attempts: Optional[List[HttpAttempt]] = None):
        super().__init__(*args)
        self.attempts: List[HttpAttempt] = list(attempts or [])


class LlmRequestError(LlmError):
    """The server answered with an error status, or with a body that is not a chat completion."""

    def __init__(self, message: str, status: Optional[int] = None, attempts: Optional[List[HttpAttempt]] = None):
        super().__init__(message, attempts=attempts)
        self.status = status


class LlmTimeoutError(LlmError):
    """The server did not answer within the timeout (after any retries)."""


class LlmCancelledError(LlmError):
    """The request was cancelled (the client's ``cancel()``, called when a run must end) before it was answered."""


@dataclasses.dataclass
class LlmResult:
    """One answer, with what it cost."""

    text: str
    model: str = ""
    prompt_tokens: int = 0
    completion_tokens: int = 0
    latency_seconds: float = 0.0
    finish_reason: str = ""
    attempts: int = 1  # HTTP attempts it took (retries + 1)
    #: Each HTTP attempt, in order, when the client reports them (the last one brought the answer).
    http_attempts: List[HttpAttempt] = dataclasses.field(default_factory=list)

    @property
    def total_tokens(self) -> int:
        """Prompt plus completion tokens."""
        return self.prompt_tokens + self.completion_tokens


def normalize_messages(messages: Any) -> Messages:
    """Chat messages as plain dicts, from dicts or objects with ``role`` and ``content`` attributes."""
    normalised: Messages = []
    for index, message in enumerate(messages):
        if isinstance(message, Mapping):
            role, content = message.get("role"), message.get("content")
        else:
            role, content = getattr(message, "role", None), getattr(message, "content", None)
        if not isinstance(role, str) or not isinstance(content, str):
            raise TypeError(
                f"message {index} must have string 'role' and 'content' (got {message!r})"
            )
        normalised.append({"role": role, "content": content})
    return normalised


def _int(value: Any) -> int:
    try:
        return int(value or 0)
    except (TypeError, ValueError):
        return 0


def normalize_result(value: Any, default_model: str = "") -> LlmResult:
    """An :class:`LlmResult` from whatever a client returned (see the module's docstring)."""
    if isinstance(value, LlmResult):
        if not value.model and default_model:
            value.model = default_model
        return value
    if isinstance(value, str):
        return LlmResult(text=value, model=default_model)
    if isinstance(value, Mapping):
        text = value.get("text", value.get("content"))
        finish_reason = str(value.get("finish_reason") or "")
        if text is None and isinstance(value.get("choices"), list) and value["choices"]:
            choice = value["choices"][0] or {}
            message = choice.get("message") or {}
            text = message.get("content") if isinstance(message, Mapping) else None
            if text is None:
                text = choice.get("text")
            finish_reason = str(choice.get("finish_reason") or finish_reason)
        if text is None:
            raise TypeError(
                "a client's dict answer needs a 'text' (or 'content', or OpenAI 'choices') field; "
                f"got keys {sorted(value)}"
            )
        usage = value.get("usage") or {}
        return LlmResult(
            text=str(text),
            model=str(value.get("model") or default_model),
            prompt_tokens=_int(usage.get("prompt_tokens", value.get("prompt_tokens"))),
            completion_tokens=_int(usage.get("completion_tokens", value.get("completion_tokens"))),
            latency_seconds=float(value.get("latency_seconds") or 0.0),
            finish_reason=finish_reason,
        )
    text = getattr(value, "text", None)
    if isinstance(text, str):
        return LlmResult(
            text=text,
            model=str(getattr(value, "model", "") or default_model),
            prompt_tokens=_int(getattr(value, "prompt_tokens", 0)),
            completion_tokens=_int(getattr(value, "completion_tokens", 0)),
            latency_seconds=float(getattr(value, "latency_seconds", 0.0) or 0.0),
        )
    raise TypeError(
        f"a client must return a str, a dict or an LlmResult; got {type(value).__name__}"
    )


# One event loop in a daemon thread runs the coroutines of async clients called from threads that have
# no loop of their own (the engine's worker threads).
_loop_lock = threading.Lock()
_loop: Optional[asyncio.AbstractEventLoop] = None


def _background_loop() -> asyncio.AbstractEventLoop:
    global _loop
    with _loop_lock:
        if _loop is None or _loop.is_closed():
            loop = asyncio.new_event_loop()
            thread = threading.Thread(
                target=loop.run_forever, name="kernelsmith-llm-async", daemon=True
            )
            thread.start()
            _loop = loop
        return _loop


def run_awaitable(awaitable: Any, timeout: Optional[float] = None) -> Any:
    """Waits for an awaitable from synchronous code, in any thread (also one with a running loop)."""

    async def wrap() -> Any:
        return await awaitable

    future = asyncio.run_coroutine_threadsafe(wrap(), _background_loop())
    return future.result(timeout)


def _accepted_options(client: Callable[..., Any], options: Mapping[str, Any]) -> Dict[str, Any]:
    try:
        signature = inspect.signature(client)
    except (TypeError, ValueError):
        return {}
    parameters = signature.parameters.values()
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters):
        return {k: v for k, v in options.items() if v is not None}
    names = {
        p.name
        for p in parameters
        if p.kind in (inspect.Parameter.KEYWORD_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    }
    return {k: v for k, v in options.items() if k in names and v is not None}


def takes_prompt(client: Callable[..., Any]) -> bool:
    """True for a client that takes the prompt as one string (``prompt -> text``): its first positional parameter
    is named ``prompt`` or annotated ``str``. Other clients take the chat messages (``messages -> text``)."""
    try:
        signature = inspect.signature(client)
    except (TypeError, ValueError):
        return False
    for parameter in signature.parameters.values():
        if parameter.kind in (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD):
            return parameter.name == "prompt" or parameter.annotation in (str, "str")
        return False
    return False


def prompt_text(messages: Messages) -> str:
    """The chat messages as one prompt for a ``prompt -> text`` client: their contents, system first, in order."""
    return "\n\n".join(str(message["content"]) for message in messages)


def _first_argument(client: Callable[..., Any], messages: Messages) -> Any:
    return prompt_text(messages) if takes_prompt(client) else messages


def call_client(
    client: Callable[..., Any], messages: Any, default_model: str = "", **options: Any
) -> LlmResult:
    """Calls any client (sync or async) and returns an :class:`LlmResult`, with the latency measured
    here when the client reports none."""
    normalised = normalize_messages(messages)
    kwargs = _accepted_options(client, options)
    start = time.perf_counter()
    value = client(_first_argument(client, normalised), **kwargs)
    if inspect.isawaitable(value):
        value = run_awaitable(value)
    result = normalize_result(value, default_model=default_model or str(options.get("model") or ""))
    if result.latency_seconds <= 0.0:
        result.latency_seconds = time.perf_counter() - start
    return result


async def acall_client(
    client: Callable[..., Any], messages: Any, default_model: str = "", **options: Any
) -> LlmResult:
    """:func:`call_client` for async code: awaits async clients, runs sync ones in a thread."""
    normalised = normalize_messages(messages)
    kwargs = _accepted_options(client, options)
    start = time.perf_counter()
    if inspect.iscoroutinefunction(client) or inspect.iscoroutinefunction(
        getattr(client, "__call__", None)
    ):
        value = await client(_first_argument(client, normalised), **kwargs)
    else:
        value = await asyncio.to_thread(client, _first_argument(client, normalised), **kwargs)
        if inspect.isawaitable(value):
            value = await value
    result = normalize_result(value, default_model=default_model or str(options.get("model") or ""))
    if result.latency_seconds <= 0.0:
        result.latency_seconds = time.perf_counter() - start
    return result


@dataclasses.dataclass
class ModelUsage:
    """Totals for one model."""

    requests: int = 0
    failures: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    latency_seconds: float = 0.0

    @property
    def total_tokens(self) -> int:
        """Prompt plus completion tokens over the model's requests."""
        return self.prompt_tokens + self.completion_tokens


class TokenAccounting:
    """Thread-safe totals of requests, tokens and latency per model."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._usage: Dict[str, ModelUsage] = {}

    def record(self, model: str, result: Optional[LlmResult] = None, failed: bool = False) -> None:
        """Counts one request to `model`: its tokens and latency from `result`, and a failure when `failed` or there is
        no result."""
        with self._lock:
            usage = self._usage.setdefault(model, ModelUsage())
            usage.requests += 1
            if failed or result is None:
                usage.failures += 1
            if result is not None:
                usage.prompt_tokens += result.prompt_tokens
                usage.completion_tokens += result.completion_tokens
                usage.latency_seconds += result.latency_seconds

    def usage(self, model: str) -> ModelUsage:
        """The totals of one model, a ModelUsage (zeros for a model never called)."""
        with self._lock:
            return dataclasses.replace(self._usage.get(model, ModelUsage()))

    def totals(self) -> Dict[str, ModelUsage]:
        """A snapshot: model name → :class:`ModelUsage`."""
        with self._lock:
            return {name: dataclasses.replace(usage) for name, usage in self._usage.items()}

    def as_dict(self) -> Dict[str, Dict[str, Any]]:
        """The totals as plain dicts, model name -> ModelUsage fields plus total_tokens (for JSON)."""
        return {
            name: {**dataclasses.asdict(usage), "total_tokens": usage.total_tokens}
            for name, usage in self.totals().items()
        }
