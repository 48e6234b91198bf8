"""Several models as one client, chosen per request by a UCB1 bandit on improvement per cost.

Each model is an arm. After a proposal is evaluated, :meth:`ModelEnsemble.observe` feeds back how much
the child improved on its parent and what the request cost; the reward is
``max(0, improvement) / cost``, scaled by the largest reward seen so far so that it lies in [0, 1].
The next request goes to the arm with the highest ``mean reward + exploration * sqrt(2 ln N / n)``,
where ``n`` counts the arm's requests (so concurrent requests spread before their outcomes are in) and
``N`` all requests; arms never tried go first. Cheap models that still improve kernels thus get most of
the traffic, while the others keep being sampled.
"""

from __future__ import annotations

import dataclasses
import math
import threading
from typing import Any, Callable, Dict, List, Mapping, Optional

from kernelsmith.llm.client import LlmResult, TokenAccounting, call_client


@dataclasses.dataclass
class ArmStats:
    """What a UCB1Bandit knows of one arm (model): requests sent, outcomes observed, and the sums of rewards
    (improvement per cost), improvements and costs."""
    pulls: int = 0  # requests sent to the model
    updates: int = 0  # outcomes observed
    reward_sum: float = 0.0  # raw rewards (improvement per cost)
    improvement_sum: float = 0.0
    cost_sum: float = 0.0


class UCB1Bandit:
    """UCB1 over named arms with rewards normalised by the largest one seen. Thread-safe."""

    def __init__(self, arms: List[str], exploration: float = 1.0) -> None:
        if not arms:
            raise ValueError("a bandit needs at least one arm")
        if len(set(arms)) != len(arms):
            raise ValueError(f"arm names must be unique: {arms}")
        if exploration < 0:
            raise ValueError("exploration must be >= 0")
        self.arms = list(arms)
        self.exploration = float(exploration)
        self._stats: Dict[str, ArmStats] = {arm: ArmStats() for arm in arms}
        self._max_reward = 0.0
        self._lock = threading.Lock()

    def _score(self, arm: str, total_pulls: int) -> float:
        stats = self._stats[arm]
        mean = stats.reward_sum / stats.updates if stats.updates else 0.0
        normalised = mean / self._max_reward if self._max_reward > 0 else 0.0
        bonus = math.sqrt(2.0 * math.log(max(total_pulls, 1)) / stats.pulls)
        return normalised + self.exploration * bonus

    def scores(self) -> Dict[str, float]:
        """Each arm's current UCB score (inf for arms never pulled)."""
        with self._lock:
            total = sum(s.pulls for s in self._stats.values())
            return {
                arm: (math.inf if self._stats[arm].pulls == 0 else self._score(arm, total))
                for arm in self.arms
            }

    def select(self) -> str:
        """Picks an arm and counts the pull."""
        with self._lock:
            total = sum(s.pulls for s in self._stats.values())
            best, best_score = self.arms[0], -math.inf
            for arm in self.arms:
                stats = self._stats[arm]
                score = math.inf if stats.pulls == 0 else self._score(arm, total)
                if score > best_score:  # ties keep the earlier arm
                    best, best_score = arm, score
            self._stats[best].pulls += 1
            return best

    def update(self, arm: str, improvement: float, cost: float = 1.0) -> float:
        """Records an outcome; returns the raw reward ``max(0, improvement) / cost``."""
        if arm not in self._stats:
            raise KeyError(f"unknown arm {arm!r}; arms are {self.arms}")
        if not (cost > 0) or math.isinf(cost):
            raise ValueError(f"cost must be positive and finite (got {cost})")
        improvement = float(improvement)
        if math.isnan(improvement):
            improvement = 0.0
        reward = max(0.0, improvement) / cost
        with self._lock:
            stats = self._stats[arm]
            stats.updates += 1
            stats.reward_sum += reward
            stats.improvement_sum += improvement
            stats.cost_sum += cost
            self._max_reward = max(self._max_reward, reward)
        return reward

    def stats(self) -> Dict[str, ArmStats]:
        """A snapshot: arm name -> ArmStats (copies)."""
        with self._lock:
            return {arm: dataclasses.replace(s) for arm, s in self._stats.items()}


class ModelEnsemble:
    """A client over several models; each request goes to the model the bandit picks.

    Parameters
    ----------
    clients:
        Model name → client (any callable of :mod:`kernelsmith.llm.client`, e.g. an
        :class:`~kernelsmith.llm.http_client.OpenAIChatClient`). The name is passed as ``model=`` to
        clients that accept it.
    price_per_1k_tokens:
        Model name → price of 1000 tokens (prompt and completion alike), for the cost of a request;
        1.0 where not given. A float applies to every model.
    exploration:
        The UCB1 exploration weight.
    """

    def __init__(
        self,
        clients: Mapping[str, Callable[..., Any]],
        *,
        price_per_1k_tokens: Any = None,
        exploration: float = 1.0,
        accounting: Optional[TokenAccounting] = None,
    ) -> None:
        if not clients:
            raise ValueError("a ModelEnsemble needs at least one model")
        self.clients = dict(clients)
        if isinstance(price_per_1k_tokens, (int, float)):
            self.prices = {name: float(price_per_1k_tokens) for name in self.clients}
        else:
            self.prices = {name: float((price_per_1k_tokens or {}).get(name, 1.0)) for name in self.clients}
        for name, price in self.prices.items():
            if not price > 0:
                raise ValueError(f"price of model {name!r} must be positive (got {price})")
        self.bandit = UCB1Bandit(list(self.clients), exploration)
        self.accounting = accounting if accounting is not None else TokenAccounting()

    def cost(self, model: str, prompt_tokens: int, completion_tokens: int) -> float:
        """The cost of one request; at least one token's worth, so that a reward stays finite."""
        tokens = max(1, int(prompt_tokens) + int(completion_tokens))
        return tokens / 1000.0 * self.prices.get(model, 1.0)

    def __call__(self, messages: Any, **options: Any) -> LlmResult:
        """Sends one request to the model the bandit picks and records its tokens and latency; the result's model is
        the ensemble's arm name. Also available as complete()."""
        model = self.bandit.select()
        options = {**options, "model": model}
        try:
            result = call_client(self.clients[model], messages, default_model=model, **options)
        except Exception:
            # The pull stays counted with no reward: an arm that keeps failing loses its bonus.
            self.accounting.record(model, None, failed=True)
            raise
        # The ensemble's arm name is what the step records, so that outcomes find their arm.
        result.model = model
        self.accounting.record(model, result)
        return result

    complete = __call__

    def cancel(self) -> None:
        """Cancels the requests in flight of every model's client that can (``cancel()``)."""
        for client in self.clients.values():
            cancel = getattr(client, "cancel", None)
            if callable(cancel):
                cancel()

    def observe(
        self,
        model: str,
        improvement: float,
        prompt_tokens: int = 0,
        completion_tokens: int = 0,
        cost: Optional[float] = None,
    ) -> float:
        """Feeds back one evaluated proposal: the child's fitness minus its parent's (failures count as
        no improvement) and the tokens it took. Unknown models are ignored (returns 0)."""
        if model not in self.clients:
            return 0.0
        if cost is None:
            cost = self.cost(model, prompt_tokens, completion_tokens)
        return self.bandit.update(model, improvement, cost)

    def observe_step(self, step: Any) -> float:
        """Feeds back a recorded step (an object or dict with ``model``, ``prompt_tokens``,
        ``completion_tokens`` and either ``improvement`` or ``child_fitness`` and ``parent_fitness``)."""

        def get(name: str, default: Any = None) -> Any:
            if isinstance(step, Mapping):
                return step.get(name, default)
            return getattr(step, name, default)

        improvement = get("improvement")
        if improvement is None:
            child, parent = get("child_fitness"), get("parent_fitness")
            improvement = (child - parent) if child is not None and parent is not None else 0.0
        return self.observe(
            str(get("model", "") or ""),
            float(improvement),
            int(get("prompt_tokens", 0) or 0),
            int(get("completion_tokens", 0) or 0),
        )
