"""LLM clients and the glue to the C++ LLM mutator (docs/llm.md).

- :mod:`kernelsmith.llm.client`: the client protocol (any callable, sync or async), results, token
  accounting.
- :mod:`kernelsmith.llm.http_client`: an OpenAI-compatible chat-completions client on the standard
  library, with retries, backoff and a concurrency limit.
- :mod:`kernelsmith.llm.bandit`: several models chosen per request by UCB1 on improvement per cost.
- :mod:`kernelsmith.llm.glue`: any client as the C++ ``LlmClient``; :func:`make_llm_mutator`.
"""

from kernelsmith.llm.bandit import ArmStats, ModelEnsemble, UCB1Bandit
from kernelsmith.llm.client import (
    HttpAttempt,
    LlmCancelledError,
    LlmError,
    LlmRequestError,
    LlmResult,
    LlmTimeoutError,
    ModelUsage,
    TokenAccounting,
    acall_client,
    call_client,
    normalize_messages,
    normalize_result,
)
from kernelsmith.llm.glue import (
    CallableLlmClient,
    EnsembleFeedback,
    as_llm_client,
    make_llm_mutator,
    mutator_from_cli,
    observe_step,
)
from kernelsmith.llm.http_client import OpenAIChatClient, chat_completions_url

__all__ = [
    "ArmStats",
    "CallableLlmClient",
    "EnsembleFeedback",
    "HttpAttempt",
    "LlmCancelledError",
    "LlmError",
    "LlmRequestError",
    "LlmResult",
    "LlmTimeoutError",
    "ModelEnsemble",
    "ModelUsage",
    "OpenAIChatClient",
    "TokenAccounting",
    "UCB1Bandit",
    "acall_client",
    "as_llm_client",
    "call_client",
    "chat_completions_url",
    "make_llm_mutator",
    "mutator_from_cli",
    "normalize_messages",
    "normalize_result",
    "observe_step",
]
