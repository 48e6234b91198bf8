"""Any Python client as the C++ ``LlmClient``, and a ready LlmMutator from a URL and a model name."""

from __future__ import annotations

import threading
import time
from typing import Any, Callable, Mapping, Optional, Sequence, Tuple, Union

from kernelsmith import _core
from kernelsmith.llm.bandit import ModelEnsemble
from kernelsmith.llm.client import TokenAccounting, call_client
from kernelsmith.llm.http_client import OpenAIChatClient


class CallableLlmClient(_core.LlmClient):
    """Adapts a client of :mod:`kernelsmith.llm.client` (any callable, sync or async) to the C++
    ``LlmClient`` that :class:`kernelsmith.LlmMutator` calls.

    Exceptions never cross into C++: they become the response's ``error``, which the mutator records
    as the proposal's failure. The C++ side holds this object, and keeps it alive, for as long as the
    mutator lives.
    """

    def __init__(self, client: Callable[..., Any], model: str = "") -> None:
        super().__init__()
        if not callable(client):
            raise TypeError(f"an LLM client must be callable; got {type(client).__name__}")
        self.client = client
        self.model = model or str(getattr(client, "model", "") or "")

    def __repr__(self) -> str:
        return f"CallableLlmClient({self.client!r})"

    def complete(self, messages: Any, options: Any = None) -> Any:
        """Calls the wrapped client with the messages and the options' model, temperature, max_tokens, timeout and
        seed; returns an LlmResponse, whose error holds any exception."""
        requested = (getattr(options, "model", "") or self.model) if options is not None else self.model
        kwargs = {}
        if options is not None:
            kwargs = {
                "model": requested or None,
                "temperature": options.temperature,
                "max_tokens": options.max_tokens or None,
                "timeout": options.timeout_seconds or None,
                "seed": options.seed,
            }
        start = time.perf_counter()
        try:
            result = call_client(self.client, messages, default_model=requested, **kwargs)
        except Exception as error:  # the proposal records it; the run goes on
            return _core.LlmResponse(
                model=requested,
                latency_seconds=time.perf_counter() - start,
                error=f"{type(error).__name__}: {error}",
                attempts=_core_attempts(getattr(error, "attempts", None)),
            )
        return _core.LlmResponse(
            text=result.text,
            model=result.model or requested,
            prompt_tokens=result.prompt_tokens,
            completion_tokens=result.completion_tokens,
            latency_seconds=result.latency_seconds,
            attempts=_core_attempts(result.http_attempts),
        )

    def cancel(self) -> None:
        """Passes the engine's cancellation on to the wrapped client, when it has a ``cancel()``."""
        cancel = getattr(self.client, "cancel", None)
        if callable(cancel):
            cancel()


def _core_attempts(attempts: Any) -> list:
    """HttpAttempts as the C++ LlmAttempts a step records."""
    return [_core.LlmAttempt(int(a.status), str(a.error), float(a.seconds)) for a in attempts or []]


def as_llm_client(client: Any, model: str = "") -> Any:
    """The C++-callable form of a client: ``LlmClient`` instances are returned as they are, callables
    are wrapped in :class:`CallableLlmClient`."""
    if isinstance(client, _core.LlmClient):
        return client
    return CallableLlmClient(client, model)


def skill_bank_of(skills: Any) -> Any:
    """A :class:`kernelsmith.SkillBank` from a bank (returned as it is), a path or a sequence of paths of skill
    files (loaded after the built-in bank, replacing its skills of the same names)."""
    if isinstance(skills, _core.SkillBank):
        return skills
    paths = [skills] if isinstance(skills, (str, bytes)) or hasattr(skills, "__fspath__") else list(skills)
    bank = _core.SkillBank.builtin()
    for path in paths:
        bank.load_file(str(path))
    return bank


def make_llm_mutator(
    url: Optional[str] = None,
    model: Union[str, Sequence[str], None] = None,
    api_key_env: Optional[str] = "OPENAI_API_KEY",
    *,
    client: Any = None,
    api_key: Optional[str] = None,
    full_weight: float = 0.3,
    diff_weight: float = 0.6,
    crossover_weight: float = 0.1,
    seed: int = 0,
    temperature: float = 0.8,
    max_tokens: int = 8192,
    timeout: float = 300.0,
    max_retries: int = 4,
    max_concurrency: int = 8,
    max_prompt_tokens: int = 16000,
    peak_bandwidth_gbps: Optional[float] = None,
    peak_gflops: Optional[float] = None,
    templates: Optional[Mapping[str, str]] = None,
    price_per_1k_tokens: Any = None,
    exploration: float = 1.0,
    skills: Any = None,
    max_skills: int = 3,
) -> Any:
    """An :class:`kernelsmith.LlmMutator` talking to an OpenAI-compatible server, or to ``client``.

    ``model`` may be one name, a comma-separated list or a sequence: several models become a
    :class:`~kernelsmith.llm.bandit.ModelEnsemble` chosen per request by UCB1; feed evaluation outcomes
    back with ``mutator.client.client.observe(...)`` (or :func:`observe_step`). ``templates`` overrides
    fields of :class:`kernelsmith.PromptTemplates` by name. ``skills`` is the skill bank the prompts gate
    skills from (docs/memory.md): a :class:`kernelsmith.SkillBank`, or paths of skill files loaded after the
    built-in bank; None: the built-in bank. At most ``max_skills`` skills are shown per prompt.
    """
    if client is None:
        if not url:
            raise ValueError("make_llm_mutator needs a url (an OpenAI-compatible base URL) or a client")
        names = _model_names(model)
        if not names:
            raise ValueError("make_llm_mutator needs a model name (e.g. model='gpt-4o-mini')")
        accounting = TokenAccounting()
        clients = {
            name: OpenAIChatClient(
                url,
                name,
                api_key=api_key,
                api_key_env=api_key_env,
                timeout=timeout,
                max_retries=max_retries,
                max_concurrency=max_concurrency,
                accounting=accounting,
                seed=seed,
            )
            for name in names
        }
        if len(names) == 1:
            client = clients[names[0]]
        else:
            client = ModelEnsemble(
                clients,
                price_per_1k_tokens=price_per_1k_tokens,
                exploration=exploration,
                accounting=accounting,
            )
        model_name = names[0] if len(names) == 1 else ""
    else:
        names = _model_names(model)
        model_name = names[0] if len(names) == 1 else ""

    options = _core.LlmMutatorOptions()
    options.full_weight = full_weight
    options.diff_weight = diff_weight
    options.crossover_weight = crossover_weight
    options.seed = seed
    options.request.model = model_name
    options.request.temperature = temperature
    options.request.max_tokens = max_tokens
    options.request.timeout_seconds = timeout
    prompt = _core.PromptBuilderOptions()
    prompt.max_prompt_tokens = max_prompt_tokens
    if peak_bandwidth_gbps:
        prompt.peak_bandwidth_gbps = float(peak_bandwidth_gbps)
    if peak_gflops:
        prompt.peak_gflops = float(peak_gflops)
    if templates:
        custom = _core.PromptTemplates.defaults()
        for name, text in templates.items():
            if not hasattr(custom, name):
                raise ValueError(f"unknown prompt template {name!r}")
            setattr(custom, name, text)
        prompt.templates = custom
    if skills is not None:
        prompt.skills = skill_bank_of(skills)
    prompt.max_skills = max_skills
    options.prompt = prompt
    return _core.LlmMutator(as_llm_client(client, model_name), options)


def _model_names(model: Union[str, Sequence[str], None]) -> list:
    if model is None:
        return []
    if isinstance(model, str):
        return [name.strip() for name in model.split(",") if name.strip()]
    return [str(name) for name in model]


class EnsembleFeedback(_core.Mutator):
    """Feeds evaluation outcomes back to a :class:`ModelEnsemble`.

    Wraps the mutator that uses the ensemble: it remembers which model proposed each candidate and the
    parent's fitness, and its :meth:`on_progress`, registered with ``Evolution.on_progress``, reports
    the child's improvement (speedup minus the parent's fitness; failures count as none) and the
    tokens the request took. Proposals without a candidate are reported at once, as no improvement.
    """

    def __init__(self, mutator: Any, ensemble: ModelEnsemble) -> None:
        super().__init__()
        self.inner = mutator
        self.ensemble = ensemble
        self._pending: dict = {}
        self._lock = threading.Lock()

    def name(self) -> str:
        return self.inner.name()

    def cancel(self) -> None:
        """Passes the engine's cancellation on to the inner mutator."""
        self.inner.cancel()

    def propose(self, request: Any) -> list:
        """The inner mutator's proposals; remembers which model proposed each candidate and the parent's fitness, and
        reports proposals without a candidate to the ensemble as no improvement."""
        proposals = self.inner.propose(request)
        evaluation = request.parent_evaluation
        parent_fitness = evaluation.fitness if evaluation is not None else 0.0
        for proposal in proposals:
            if proposal.candidate is None:
                self.ensemble.observe(proposal.model, 0.0, proposal.prompt_tokens, proposal.completion_tokens)
                continue
            with self._lock:
                self._pending[proposal.candidate.id()] = (
                    proposal.model, parent_fitness, proposal.prompt_tokens, proposal.completion_tokens)
        return proposals

    def on_progress(self, progress: Any) -> None:
        """Reports an evaluated child to the ensemble: its speedup minus the parent's fitness (0 when not correct) and
        the tokens its request took. Register it with Evolution.on_progress."""
        with self._lock:
            entry = self._pending.pop(progress.program_id, None)
        if entry is None:
            return
        model, parent_fitness, prompt_tokens, completion_tokens = entry
        ok = progress.status == _core.Status.ok
        improvement = progress.speedup - parent_fitness if ok else 0.0
        self.ensemble.observe(model, improvement, prompt_tokens, completion_tokens)


def observe_step(mutator: Any, step: Any) -> float:
    """Feeds an evaluated step back to the mutator's model ensemble, when it has one (see
    :meth:`ModelEnsemble.observe_step`); returns the reward, 0 without an ensemble."""
    inner = getattr(getattr(mutator, "client", None), "client", None)
    if isinstance(inner, ModelEnsemble):
        return inner.observe_step(step)
    return 0.0


def mutator_from_cli(
    llm_url: Optional[str], model: Optional[str], api_key_env: Optional[str] = "OPENAI_API_KEY", seed: int = 0,
    **options: Any,
) -> Tuple[Any, Optional[Callable[[Any], None]]]:
    """What ``kernelsmith evolve --mutator llm`` needs: the mutator for the engine and the progress
    callback to register with ``Evolution.on_progress`` (None unless ``model`` names several models,
    whose bandit learns from the outcomes). ``options`` go to :func:`make_llm_mutator` (the CLI passes
    ``timeout`` and ``max_retries`` from ``--llm-timeout`` and ``--llm-retries``). Raises ValueError
    naming the missing option."""
    if not llm_url:
        raise ValueError("--mutator llm needs --llm-url (an OpenAI-compatible base URL, e.g. http://127.0.0.1:8000/v1)")
    if not _model_names(model):
        raise ValueError("--mutator llm needs --model NAME (or several, comma-separated)")
    mutator = make_llm_mutator(llm_url, model, api_key_env or None, seed=seed, **options)
    inner = mutator.client.client
    if isinstance(inner, ModelEnsemble):
        feedback = EnsembleFeedback(mutator, inner)
        return feedback, feedback.on_progress
    return mutator, None
