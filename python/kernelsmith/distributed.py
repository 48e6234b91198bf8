"""Evaluation on a Ray cluster (docs/distributed.md).

:class:`RayEvaluator` is a kernelsmith :class:`~kernelsmith.Evaluator`: the engine, the CLI
(``kernelsmith evolve --ray ADDRESS``), the RL reward functions (:class:`kernelsmith.rl.KernelReward`)
and plain Python call it like the built-in one. It runs one Ray actor per GPU of the cluster
(``num_gpus=1``; where the cluster has no GPU, CPU actors evaluate on PoCL), each holding the built-in
evaluator with its worker process, so timing stays serialised per device and every speedup is against
the baseline timed on the actor's own device.

- **Spread by load.** Each candidate of a batch goes to the live actor with the fewest candidates in
  flight (at most ``in_flight_per_actor`` each, so that an actor compiles the next while it times the
  current one). Several threads may call the evaluator at once (a reward service): their candidates
  share the actors first come, first served.
- **A task travels once per actor.** The driver puts the task's JSON into Ray's object store once and
  names it by :meth:`Task.content_key`; an actor fetches the body only for a key it does not hold (the
  worker protocol's content-key rule, docs/evaluation.md).
- **A lost actor costs only its in-flight evaluations.** When an actor's process or node dies, its
  candidates are started again on another actor, at most ``max_retries`` times each; the evaluation
  records it (``Evaluation.placement.retries``) and, past the bound, comes back ``crashed`` saying so.
  Ray restarts the actor (up to ``actor_restarts`` times); the driver gives it work again once it
  answers.
- **The run store stays on the driver**: actors return evaluations, the engine records them.

Ray is an optional dependency: ``pip install 'kernelsmith[ray]'``.
"""

from __future__ import annotations

import collections
import os
import socket
import threading
import time
from concurrent.futures import Future
from typing import Any, Deque, Dict, List, Mapping, Optional, Sequence

import kernelsmith as ks

__all__ = ["RayEvaluator", "options_to_dict", "options_from_dict"]


def _ray():
    try:
        import ray
    except ImportError as error:
        raise ks.BackendUnavailableError(
            "kernelsmith.distributed needs Ray, which is not installed here: pip install 'kernelsmith[ray]' "
            f"(or pip install ray) ({error})"
        ) from None
    return ray


def options_to_dict(options: Any) -> Dict[str, Any]:
    """The fields of an EvaluatorOptions as a dict (what travels to the actors)."""
    if options is None:
        return {}
    if isinstance(options, Mapping):
        return dict(options)
    fields = {}
    for name in dir(options):
        if name.startswith("_"):
            continue
        value = getattr(options, name)
        if not callable(value):
            fields[name] = value
    return fields


def options_from_dict(fields: Mapping[str, Any]) -> Any:
    """An EvaluatorOptions from :func:`options_to_dict`'s dict; unknown names raise ValueError."""
    options = ks.EvaluatorOptions()
    for name, value in fields.items():
        if name.startswith("_") or not hasattr(options, name):
            raise ValueError(f"EvaluatorOptions has no field {name!r}")
        setattr(options, name, value)
    return options


class _EvaluatorActor:
    """One Ray actor: the built-in evaluator on the device Ray gave it, with a cache of tasks by key."""

    def __init__(self, option_fields: Dict[str, Any], threads: int, task_cache: int) -> None:
        # PoCL sizes its thread pool when the OpenCL library loads (here and in the evaluator's worker,
        # which inherits the environment): a CPU actor uses the CPUs Ray reserved for it, not the node's.
        if threads > 0:
            os.environ.setdefault("POCL_MAX_PTHREAD_COUNT", str(threads))
        import ray

        self._ray = ray
        options = options_from_dict(option_fields)
        if threads > 0 and options.compile_threads == 0:
            options.compile_threads = threads
        gpu_ids = ray.get_gpu_ids()
        # Ray hides the other GPUs (CUDA_VISIBLE_DEVICES): the actor's GPU is device 0 of its process, and
        # the evaluations record the GPU's index on its host instead.
        self._gpu_index: Optional[int] = None
        if gpu_ids:
            options.device = 0
            options.devices = ""
            try:
                self._gpu_index = int(gpu_ids[0])
            except (TypeError, ValueError):
                self._gpu_index = None
        self._evaluator = ks.create_evaluator(options)
        self._tasks: "collections.OrderedDict[str, Any]" = collections.OrderedDict()
        self._task_cache = max(1, task_cache)
        self._task_fetches = 0
        self._lock = threading.Lock()
        self._fetch_lock = threading.Lock()

    def describe(self) -> Dict[str, Any]:
        context = self._ray.get_runtime_context()
        return {
            "pid": os.getpid(),
            "host": socket.gethostname(),
            "node_id": context.get_node_id(),
            "actor_id": context.get_actor_id(),
            "backend": self._evaluator.backend_name(),
            "device": self._evaluator.device_name(),
            "gpu_ids": [str(gpu) for gpu in self._ray.get_gpu_ids()],
            "task_fetches": self._task_fetches,
            "version": ks.__version__,
        }

    def _cached_task(self, key: str) -> Any:
        with self._lock:
            task = self._tasks.get(key)
            if task is not None:
                self._tasks.move_to_end(key)
            return task

    def _task(self, key: str, holder: Sequence[Any]) -> Any:
        task = self._cached_task(key)
        if task is not None:
            return task
        # The body is fetched from the object store only on a miss: once per task and actor process (the
        # calls running side by side wait for one fetch).
        with self._fetch_lock:
            task = self._cached_task(key)
            if task is not None:
                return task
            task = ks.Task.from_json(self._ray.get(holder[0]), f"<task {key[:12]} from the driver>")
            with self._lock:
                self._task_fetches += 1
                self._tasks[key] = task
                while len(self._tasks) > self._task_cache:
                    self._tasks.popitem(last=False)
        return task

    def evaluate(self, key: str, holder: Sequence[Any], candidate_documents: Sequence[str]) -> List[str]:
        task = self._task(key, holder)
        candidates = [ks.Candidate.from_json(document, "<candidate from the driver>") for document in candidate_documents]
        evaluations = self._evaluator.evaluate_batch(task, candidates)
        documents = []
        for evaluation in evaluations:
            if self._gpu_index is not None and evaluation.placement.device_index >= 0:
                evaluation.placement.device_index = self._gpu_index
            documents.append(evaluation.to_json())
        return documents


class _Slot:
    """The driver's view of one actor."""

    def __init__(self, index: int, handle: Any) -> None:
        self.index = index
        self.handle = handle
        self.info: Dict[str, Any] = {}
        self.state = "starting"  # starting, alive, probing (lost; waiting for Ray to restart it), dead
        self.in_flight = 0
        self.lost = 0  # times it was lost with work in flight
        self.lost_at = 0.0
        self.probe: Any = None  # a describe() call in flight while probing
        self.next_probe = 0.0

    @property
    def name(self) -> str:
        return str(self.info.get("actor_id") or f"actor {self.index}")


class _Job:
    def __init__(self, key: str, holder: List[Any], task: Any, candidate: Any) -> None:
        self.key = key
        self.holder = holder
        self.task = task
        self.candidate = candidate
        self.document = candidate.to_json()
        self.retries = 0
        self.lost_on: List[int] = []
        self.last_loss = ""
        self.future: "Future[Any]" = Future()


class RayEvaluator(ks.Evaluator):
    """A kernelsmith Evaluator whose candidates are evaluated by Ray actors, one per device.

    ``address``: the cluster ("auto", "ray://host:10001", "127.0.0.1:6379"); None uses the Ray this
    process is connected to already, else ``ray.init()``'s default (``$RAY_ADDRESS``, or a local
    cluster). ``options``: the EvaluatorOptions (or a dict of its fields) every actor's evaluator gets.
    ``kind``: "gpu" (one actor per GPU, ``num_gpus=1``), "cpu" (actors of ``cpus_per_actor`` CPUs,
    evaluating on PoCL) or "auto" (gpu when the cluster has GPUs). ``actors``: how many (default: every
    GPU, or the cluster's CPUs over ``cpus_per_actor``). ``max_retries``: how many times a candidate whose
    actor was lost is started again. ``actor_restarts``: how many times Ray restarts a lost actor.
    ``startup_seconds``: how long the actors may take to start, and how long candidates wait while no
    actor is alive before they fail."""

    def __init__(
        self,
        address: Optional[str] = None,
        options: Any = None,
        *,
        kind: str = "auto",
        actors: Optional[int] = None,
        cpus_per_actor: float = 1,
        in_flight_per_actor: int = 2,
        max_retries: int = 2,
        actor_restarts: int = 3,
        startup_seconds: float = 300.0,
        task_cache: int = 16,
        ray_init_kwargs: Optional[Mapping[str, Any]] = None,
    ) -> None:
        super().__init__()
        ray = _ray()
        self._ray = ray
        if kind not in ("auto", "gpu", "cpu"):
            raise ks.ValidationError(f"RayEvaluator: kind must be 'auto', 'gpu' or 'cpu'; got {kind!r}")
        if actors is not None and actors < 1:
            raise ks.ValidationError(f"RayEvaluator: actors must be at least 1; got {actors}")
        if not cpus_per_actor > 0:
            raise ks.ValidationError(f"RayEvaluator: cpus_per_actor must be > 0; got {cpus_per_actor}")
        if in_flight_per_actor < 1:
            raise ks.ValidationError(f"RayEvaluator: in_flight_per_actor must be at least 1; got {in_flight_per_actor}")
        if max_retries < 0 or actor_restarts < 0:
            raise ks.ValidationError("RayEvaluator: max_retries and actor_restarts must be 0 or more")
        self.max_retries = max_retries
        self.actor_restarts = actor_restarts
        self.startup_seconds = float(startup_seconds)
        self._started_ray = False
        if not ray.is_initialized():
            init = {"address": address, "log_to_driver": False}
            init.update(ray_init_kwargs or {})
            ray.init(**init)
            self._started_ray = True
        option_fields = options_to_dict(options)
        if option_fields.get("devices"):
            raise ks.ValidationError(
                "RayEvaluator: options.devices is for the built-in evaluator on one host; on Ray each actor "
                "holds one device (leave devices empty)"
            )
        resources = ray.cluster_resources()
        gpus = int(resources.get("GPU", 0))
        if kind == "auto":
            kind = "gpu" if gpus > 0 else "cpu"
        if kind == "gpu" and gpus == 0:
            raise ks.BackendUnavailableError(
                f"RayEvaluator: kind='gpu' but the Ray cluster has no GPU (resources: {_resource_summary(resources)}); "
                "use kind='cpu' to evaluate on PoCL"
            )
        self.kind = kind
        if actors is None:
            actors = gpus if kind == "gpu" else max(1, int(resources.get("CPU", 1) // cpus_per_actor))
        if kind == "gpu":
            placement = {"num_gpus": 1, "num_cpus": cpus_per_actor}
            threads = 0
        else:
            placement = {"num_cpus": cpus_per_actor}
            threads = max(1, int(cpus_per_actor))
        remote = ray.remote(_EvaluatorActor).options(
            max_concurrency=in_flight_per_actor,
            max_restarts=actor_restarts,
            max_task_retries=0,  # this evaluator retries, and records each retry
            scheduling_strategy="SPREAD",
            **placement,
        )
        self._in_flight_per_actor = in_flight_per_actor
        self._cond = threading.Condition()
        self._slots = [_Slot(i, remote.remote(option_fields, threads, task_cache)) for i in range(actors)]
        self._pending: Deque[_Job] = collections.deque()
        self._running: Dict[Any, Any] = {}  # ObjectRef -> (job, slot)
        self._task_refs: "collections.OrderedDict[str, Any]" = collections.OrderedDict()
        self._task_cache = max(1, task_cache)
        self._closed = False
        self._no_actor_since: Optional[float] = None
        self.task_puts = 0  # task bodies put into the object store (one per task, for tests)
        self._start_actors(resources)
        self._dispatcher = threading.Thread(target=self._dispatch_loop, name="kernelsmith-ray-dispatch", daemon=True)
        self._dispatcher.start()

    # ---- the Evaluator interface

    def evaluate(self, task: Any, candidate: Any) -> Any:
        return self.evaluate_batch(task, [candidate])[0]

    def evaluate_batch(self, task: Any, candidates: Sequence[Any]) -> List[Any]:
        """Evaluates the candidates on the actors (each where there is room first) and returns their
        evaluations in order. Raises what an actor's evaluator raised for the task (TaskError, ...), and
        BackendUnavailableError when no actor is left."""
        candidates = list(candidates)
        if not candidates:
            return []
        key, holder = self._task_ref(task)
        jobs = [_Job(key, holder, task, candidate) for candidate in candidates]
        with self._cond:
            if self._closed:
                raise ks.Error("RayEvaluator: evaluate after close()")
            self._pending.extend(jobs)
            self._assign()
            self._cond.notify_all()
        return [job.future.result() for job in jobs]

    def backend_name(self) -> str:
        names = sorted({slot.info.get("backend", "") for slot in self._slots if slot.info})
        return " | ".join(names) if names else "ray"

    def device_name(self) -> str:
        names = sorted({slot.info.get("device", "") for slot in self._slots if slot.info})
        return " | ".join(names)

    def concurrency(self) -> int:
        with self._cond:
            return max(1, sum(1 for slot in self._slots if slot.state != "dead"))

    # ---- inspection and shutdown

    def actors(self) -> List[Dict[str, Any]]:
        """Each actor's description (pid, host, node_id, actor_id, backend, device, gpu_ids), its state
        ("alive", "probing" after a loss, "dead"), the candidates in flight on it and the times it was lost."""
        with self._cond:
            return [dict(slot.info, index=slot.index, state=slot.state, in_flight=slot.in_flight, lost=slot.lost)
                    for slot in self._slots]

    def actor_stats(self) -> List[Dict[str, Any]]:
        """Asks each live actor for its description now (its task_fetches count included)."""
        with self._cond:
            live = [slot for slot in self._slots if slot.state == "alive"]
        return self._ray.get([slot.handle.describe.remote() for slot in live], timeout=self.startup_seconds)

    def close(self) -> None:
        """Ends the actors (and Ray, when this evaluator started it). Candidates still waiting fail."""
        with self._cond:
            if self._closed:
                return
            self._closed = True
            waiting = list(self._pending) + [job for job, _ in self._running.values()]
            self._pending.clear()
            self._cond.notify_all()
        for job in waiting:
            if not job.future.done():
                job.future.set_exception(ks.Error("RayEvaluator: closed while the candidate was being evaluated"))
        self._dispatcher.join(timeout=10)
        for slot in self._slots:
            try:
                self._ray.kill(slot.handle, no_restart=True)
            except Exception:  # an actor already gone
                pass
        if self._started_ray:
            self._ray.shutdown()

    def __enter__(self) -> "RayEvaluator":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __repr__(self) -> str:
        alive = sum(1 for slot in self._slots if slot.state == "alive")
        return f"<RayEvaluator {self.kind}: {alive}/{len(self._slots)} actors alive, {self.device_name()!r}>"

    # ---- internals

    def _start_actors(self, resources: Mapping[str, Any]) -> None:
        ray = self._ray
        refs = {slot.handle.describe.remote(): slot for slot in self._slots}
        ready, waiting = ray.wait(list(refs), num_returns=len(refs), timeout=self.startup_seconds)
        failures = []
        for ref in ready:
            slot = refs[ref]
            try:
                slot.info = ray.get(ref)
                slot.state = "alive"
            except Exception as error:  # the evaluator could not be created there
                slot.state = "dead"
                failures.append(f"actor {slot.index}: {_cause(error)}")
        for ref in waiting:
            refs[ref].state = "dead"
            failures.append(f"actor {refs[ref].index}: not started within {self.startup_seconds:g} s (the cluster "
                            f"lacks the resources? {_resource_summary(resources)})")
        if not any(slot.state == "alive" for slot in self._slots):
            for slot in self._slots:
                ray.kill(slot.handle, no_restart=True)
            if self._started_ray:
                ray.shutdown()
            raise ks.BackendUnavailableError("RayEvaluator: no actor could start: " + "; ".join(failures))
        for slot in self._slots:
            if slot.state == "dead":
                ray.kill(slot.handle, no_restart=True)

    def _task_ref(self, task: Any):
        key = task.content_key()
        with self._cond:
            ref = self._task_refs.get(key)
            if ref is not None:
                self._task_refs.move_to_end(key)
                return key, [ref]
        ref = self._ray.put(task.to_json())
        with self._cond:
            self.task_puts += 1
            self._task_refs[key] = ref
            while len(self._task_refs) > self._task_cache:
                self._task_refs.popitem(last=False)  # jobs still running hold their own reference
        # Nested in a list, the reference reaches the actor unresolved: it fetches the body only on a miss.
        return key, [ref]

    def _assign(self) -> None:
        """Hands waiting candidates to live actors with room, the least loaded first (under the lock)."""
        while self._pending:
            job = self._pending[0]
            room = [slot for slot in self._slots
                    if slot.state == "alive" and slot.in_flight < self._in_flight_per_actor]
            if not room:
                return
            # A retried candidate goes elsewhere than where it was lost, when there is room elsewhere.
            elsewhere = [slot for slot in room if slot.index not in job.lost_on]
            slot = min(elsewhere or room, key=lambda s: (s.in_flight, s.index))
            self._pending.popleft()
            ref = slot.handle.evaluate.remote(job.key, job.holder, [job.document])
            slot.in_flight += 1
            self._running[ref] = (job, slot)

    def _dispatch_loop(self) -> None:
        while True:
            try:
                if not self._dispatch_once():
                    return
            except Exception as error:  # a failure of Ray itself: the callers hear of it rather than hang
                self._fail_all(error)
                time.sleep(0.5)

    def _dispatch_once(self) -> bool:
        """Hands out work, sends due probes, and settles what finished; False once closed."""
        ray = self._ray
        with self._cond:
            if self._closed:
                return False
            self._assign()
            self._send_due_probes()
            self._fail_if_no_actor()
            refs = list(self._running) + [slot.probe for slot in self._slots if slot.probe is not None]
            if not refs:
                self._cond.wait(0.5)
                return True
        ready, _ = ray.wait(refs, num_returns=1, timeout=0.05)
        if ready:
            ready, _ = ray.wait(refs, num_returns=len(refs), timeout=0)
        for ref in ready:
            self._complete(ref)
        return True

    def _fail_all(self, error: BaseException) -> None:
        with self._cond:
            jobs = list(self._pending) + [job for job, _ in self._running.values()]
            self._pending.clear()
            for _, slot in self._running.values():
                slot.in_flight -= 1
            self._running.clear()
        for job in jobs:
            if not job.future.done():
                job.future.set_exception(ks.Error(f"RayEvaluator: the dispatcher failed: {type(error).__name__}: "
                                                  f"{error}"))

    def _complete(self, ref: Any) -> None:
        ray = self._ray
        with self._cond:
            probing = next((slot for slot in self._slots if slot.probe is not None and slot.probe == ref), None)
            entry = self._running.pop(ref, None)
        if probing is not None:
            self._probe_answered(probing, ref)
            return
        if entry is None:
            return
        job, slot = entry
        try:
            documents = ray.get(ref)
        except ray.exceptions.RayActorError as error:
            self._lost(job, slot, error)
            return
        except ray.exceptions.RayTaskError as error:
            self._settle(slot)
            job.future.set_exception(_cause(error))
            return
        except Exception as error:  # the object store or the network: the actor may be fine
            self._lost(job, slot, error)
            return
        self._settle(slot)
        evaluation = ks.Evaluation.from_json(documents[0], "<evaluation from a Ray actor>")
        evaluation.placement.actor = slot.name
        evaluation.placement.retries = job.retries
        job.future.set_result(evaluation)

    def _settle(self, slot: _Slot) -> None:
        with self._cond:
            slot.in_flight -= 1
            self._assign()

    def _lost(self, job: _Job, slot: _Slot, error: BaseException) -> None:
        """The actor died (or its node) with the candidate in flight: run it again elsewhere, bounded."""
        with self._cond:
            slot.in_flight -= 1
            if slot.state == "alive":
                slot.state = "probing"
                slot.lost += 1
                slot.lost_at = time.monotonic()
                slot.next_probe = slot.lost_at
            job.retries += 1
            job.lost_on.append(slot.index)
            job.last_loss = f"{slot.name} on {slot.info.get('host', '?')}: {type(error).__name__}: {_first_line(error)}"
            if job.retries > self.max_retries:
                job.future.set_result(self._lost_evaluation(job, slot))
            else:
                self._pending.appendleft(job)
            self._assign()

    def _send_due_probes(self) -> None:
        """Asks each lost actor whether Ray has restarted it, every half second (under the lock)."""
        now = time.monotonic()
        for slot in self._slots:
            if slot.state == "probing" and slot.probe is None and now >= slot.next_probe:
                slot.probe = slot.handle.describe.remote()

    def _probe_answered(self, slot: _Slot, ref: Any) -> None:
        try:
            info = self._ray.get(ref)
        except Exception:  # still restarting (ActorUnavailableError), or gone for good
            info = None
        with self._cond:
            slot.probe = None
            if info is not None:
                slot.info = info
                slot.state = "alive"
            elif slot.lost > self.actor_restarts or time.monotonic() - slot.lost_at > self.startup_seconds:
                slot.state = "dead"  # Ray will not restart it (restarts spent, or its node is gone)
            else:
                slot.next_probe = time.monotonic() + 0.5
            self._assign()

    def _fail_if_no_actor(self) -> None:
        """Candidates wait while lost actors restart; with none alive for startup_seconds (or none left), they
        fail with the reason (under the lock)."""
        alive = any(slot.state == "alive" for slot in self._slots)
        if alive or not self._pending:
            self._no_actor_since = None
            return
        now = time.monotonic()
        if self._no_actor_since is None:
            self._no_actor_since = now
        every_dead = all(slot.state == "dead" for slot in self._slots)
        if every_dead or now - self._no_actor_since > self.startup_seconds:
            reason = ("every Ray actor of this evaluator is lost and Ray will not restart them" if every_dead else
                      f"no Ray actor of this evaluator has been alive for {self.startup_seconds:g} s")
            while self._pending:
                job = self._pending.popleft()
                job.future.set_exception(ks.BackendUnavailableError(
                    f"RayEvaluator: {reason} (last loss: {job.last_loss or 'none'}); check the cluster "
                    "(`ray status`) and create a new RayEvaluator"))

    def _lost_evaluation(self, job: _Job, slot: _Slot) -> Any:
        evaluation = ks.Evaluation()
        evaluation.candidate_id = job.candidate.id()
        evaluation.task = job.task.name
        evaluation.backend = slot.info.get("backend", "")
        evaluation.device = slot.info.get("device", "")
        evaluation.status = ks.Status.crashed
        evaluation.fitness = ks.failure_fitness(ks.Status.crashed)
        evaluation.message = (f"lost with its Ray actor {job.retries} time(s), not started again (max_retries="
                              f"{self.max_retries}); last: {job.last_loss}")
        evaluation.placement.actor = slot.name
        evaluation.placement.host = str(slot.info.get("host", ""))
        evaluation.placement.retries = job.retries
        return evaluation


def _cause(error: BaseException) -> BaseException:
    """The exception an actor's method raised (a kernelsmith TaskError, ...), out of Ray's wrapper."""
    cause = getattr(error, "cause", None)
    return cause if isinstance(cause, BaseException) else error


def _first_line(error: BaseException) -> str:
    text = str(error).strip()
    return text.splitlines()[0] if text else ""


def _resource_summary(resources: Mapping[str, Any]) -> str:
    shown = {name: value for name, value in resources.items() if name in ("CPU", "GPU", "memory")}
    return ", ".join(f"{name} {value:g}" for name, value in sorted(shown.items())) or "none"
