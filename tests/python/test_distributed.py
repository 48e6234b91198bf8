"""Scaling out (docs/distributed.md): the built-in evaluator over a device set on one host, and
kernelsmith.distributed.RayEvaluator on a real local Ray cluster that this module starts
(`ray start --head` on 127.0.0.1, bounded in time, stopped at the end) with PoCL actors.

What is checked: results of the form of the single-device evaluator, a task sent once per actor,
throughput that grows with actors, an actor killed mid-batch that loses nothing (and, past the retry
bound, an evaluation that says it was lost), a run on Ray that resumes after its driver was killed,
the RL reward over Ray with concurrent callers, and docs/distributed.md's examples.

Ray is an optional dependency: without it these tests skip, saying so, unless KERNELSMITH_REQUIRE_RAY
is set (tools/test.sh sets it: CI must run them).
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import secrets
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import pytest

import kernelsmith as ks
from backends import needs_opencl

REPO = Path(__file__).resolve().parents[2]
DOC = REPO / "docs" / "distributed.md"
HARNESS_TASK = REPO / "tests" / "data" / "harness_task"

# Not imported here: Ray reads its authentication settings when it is first imported (see LocalCluster).
HAVE_RAY = importlib.util.find_spec("ray") is not None

if not HAVE_RAY and os.environ.get("KERNELSMITH_REQUIRE_RAY"):
    raise RuntimeError("KERNELSMITH_REQUIRE_RAY is set but Ray is not installed: run tools/setup-deps.sh "
                       "(pip install 'ray>=2.9')")
needs_ray = pytest.mark.skipif(not HAVE_RAY, reason="Ray is not installed (pip install 'kernelsmith[ray]')")


def fast_options(**fields) -> "ks.EvaluatorOptions":
    """Screen mode with few checks: what these tests measure is the scheduling, not the kernels."""
    options = ks.EvaluatorOptions(backend="opencl", mode="screen", min_samples=3, max_samples=30,
                                  screen_budget_seconds=0.05, adversarial_inputs=False, deadline_seconds=60.0)
    for name, value in fields.items():
        setattr(options, name, value)
    return options


def scale_add_candidate(variant: int) -> "ks.Candidate":
    """A correct candidate of the harness task (y = 2a + b); `variant` makes each source distinct."""
    source = ("// @launch twice_plus<<<ceil_div(N, 64), 64>>>(a, b, y, N)\n"
              "__kernel void twice_plus(__global const float* a, __global const float* b, __global float* y, int n) {\n"
              "  const int i = get_global_id(0);\n"
              f"  if (i < n) y[i] = a[i] + a[i] + b[i] + {variant} * 0.0f;\n"
              "}\n")
    return ks.Candidate("opencl", source, ks.Lineage(origin="test"))


BROKEN = ks.Candidate("opencl", "// @launch twice_plus<<<ceil_div(N, 64), 64>>>(a, b, y, N)\n"
                                "__kernel void twice_plus(__global const float* a, __global const float* b,\n"
                                "                         __global float* y, int n) {\n"
                                "  const int i = get_global_id(0);\n"
                                "  if (i < n) y[i] = a[i] + b[i];\n"
                                "}\n", ks.Lineage(origin="test"))


# ---- one host: a device set


@needs_opencl
def test_a_device_set_takes_all_or_a_list_and_reads_back_as_a_string():
    options = ks.EvaluatorOptions(devices=[0, 0])
    assert options.devices == "0,0"
    options.devices = "all"
    assert options.devices == "all"
    options.devices = None
    assert options.devices == ""
    with pytest.raises(TypeError, match="device indices"):
        options.devices = [0, "1"]
    with pytest.raises(TypeError, match="devices takes"):
        options.devices = 1
    with pytest.raises(ks.ValidationError, match="has the entry \"x\""):
        ks.create_evaluator(fast_options(devices="0,x"))
    with pytest.raises(ks.NotFoundError, match="opencl device 7 does not exist"):
        ks.create_evaluator(fast_options(devices=[0, 7]))


_TWO_POCL_DEVICES = r"""
import json, sys
import kernelsmith as ks
options = ks.EvaluatorOptions(backend="opencl", devices="all", mode="screen", min_samples=3, max_samples=30,
                              screen_budget_seconds=0.05, adversarial_inputs=False)
evaluator = ks.create_evaluator(options)
task = ks.Task.load(sys.argv[1])
candidates = [ks.Candidate("opencl", task.references["opencl"].source.replace("b[i];", "b[i] + %d * 0.0f;" % i),
                           ks.Lineage()) for i in range(6)]
evaluations = evaluator.evaluate_batch(task, candidates)
print(json.dumps({"concurrency": evaluator.concurrency(), "device": evaluator.device_name(),
                  "statuses": [str(e.status).split(".")[-1] for e in evaluations],
                  "ids": [e.candidate_id == c.id() for e, c in zip(evaluations, candidates)],
                  "devices": [e.placement.device_index for e in evaluations]}))
"""


@needs_opencl
def test_every_device_of_the_host_gets_a_worker(tmp_path):
    """PoCL shows two CPU devices under POCL_DEVICES="pthread pthread": devices="all" starts a worker on
    each, and a batch's evaluations come back in order from both."""
    script = tmp_path / "two_devices.py"
    script.write_text(_TWO_POCL_DEVICES)
    env = dict(os.environ, POCL_DEVICES="pthread pthread", POCL_MAX_PTHREAD_COUNT="1")
    result = subprocess.run([sys.executable, str(script), str(HARNESS_TASK)], capture_output=True, text=True,
                            timeout=300, env=env)
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout.strip().splitlines()[-1])
    if report["concurrency"] == 1:
        pytest.skip("this PoCL does not make two devices from POCL_DEVICES")
    assert report["concurrency"] == 2
    assert report["statuses"] == ["ok"] * 6
    assert all(report["ids"])
    assert set(report["devices"]) == {0, 1}
    assert " | " not in report["device"]  # two devices of one kind are named as one


@needs_opencl
def test_an_evolution_keeps_every_worker_of_a_device_set_busy(tmp_path):
    task = _small_relu_task(tmp_path)
    evaluator = ks.create_evaluator(fast_options(devices="0,0"))
    assert evaluator.concurrency() == 2
    config = ks.EvolutionConfig()
    config.db_path = str(tmp_path / "set.db")
    config.budget = 8
    config.islands = 1
    config.mutations_in_flight = 0  # twice the evaluator's concurrency
    result = ks.Evolution(task, evaluator, ks.ParamMutator(), config).run()
    assert result.evaluations == 8
    store = ks.RunStore(config.db_path, read_only=True)
    assert store.run(result.run_id).device == evaluator.device_name()
    for record in store.evaluations(result.run_id):
        assert record.evaluation.placement.device_index == 0
        assert record.evaluation.placement.host == socket.gethostname()


@needs_opencl
def test_a_device_set_takes_concurrent_callers():
    """Callers on several threads share the set's workers (a reward service on one host)."""
    task = ks.Task.load(str(HARNESS_TASK))
    evaluator = ks.create_evaluator(fast_options(devices="0,0"))
    results = {}

    def caller(index: int) -> None:
        batch = [scale_add_candidate(10 * index + i) for i in range(3)] + [BROKEN]
        results[index] = evaluator.evaluate_batch(task, batch)

    threads = [threading.Thread(target=caller, args=(i,)) for i in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=240)
    assert sorted(results) == [0, 1, 2]
    for evaluations in results.values():
        assert [e.status for e in evaluations] == [ks.Status.ok] * 3 + [ks.Status.incorrect]


def _small_relu_task(folder: Path) -> "ks.Task":
    document = json.loads(ks.Task.load("relu").to_json())
    document["name"] = "relu_small"
    document["sizes"] = {"N": 65536}
    document["check_sizes"] = [{"name": "odd_1023", "sizes": {"N": 1023}}]
    task_dir = folder / "relu_small"
    task_dir.mkdir(exist_ok=True)
    (task_dir / "task.json").write_text(json.dumps(document))
    return ks.Task.load(str(task_dir))


# ---- a local Ray cluster


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class LocalCluster:
    """`ray start --head --block` on 127.0.0.1 in a process group of its own, with CPUs for four actors.

    Token authentication with a token of its own, passed in the environment (RAY_AUTH_MODE,
    RAY_AUTH_TOKEN; nothing is written to ~/.ray). `env` holds it for the processes that connect; this
    one must have it before its first `import ray`, which reads it. Where Ray was imported already, the
    cluster runs without authentication instead (it lives for this module's tests only)."""

    def __init__(self, cpus: int = 4, start_seconds: float = 90.0) -> None:
        executable = Path(sys.executable).parent / "ray"
        if not executable.exists():
            raise RuntimeError(f"the ray command is not beside {sys.executable}")
        # Ray's unix sockets live under the temp dir, whose path must stay short.
        self.temp_dir = tempfile.mkdtemp(prefix="ksray-", dir="/tmp")
        self.port = _free_port()
        self.address = f"127.0.0.1:{self.port}"
        self.log = open(Path(self.temp_dir) / "ray-start.log", "w")
        command = [
            str(executable), "start", "--head", "--block", "--node-ip-address", "127.0.0.1",
            "--port", str(self.port), "--num-cpus", str(cpus), "--num-gpus", "0",
            "--include-dashboard", "false", "--disable-usage-stats", "--temp-dir", self.temp_dir,
            "--node-manager-port", str(_free_port()), "--object-manager-port", str(_free_port()),
            "--dashboard-agent-listen-port", str(_free_port()), "--dashboard-agent-grpc-port", str(_free_port()),
            "--metrics-export-port", str(_free_port()), "--runtime-env-agent-port", str(_free_port()),
            "--object-store-memory", str(256 * 1024 * 1024),
        ]  # fmt: skip
        if "ray" in sys.modules:
            self.env = {"RAY_AUTH_MODE": "disabled"}
        else:
            self.env = {"RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN": secrets.token_hex(32)}
        self.env["RAY_USAGE_STATS_ENABLED"] = "0"
        env = dict(os.environ, **self.env)
        self.process = subprocess.Popen(command, stdout=self.log, stderr=subprocess.STDOUT, env=env,
                                        start_new_session=True)
        try:
            self._wait_until_up(start_seconds)
        except BaseException:
            self.stop()
            raise

    def _wait_until_up(self, seconds: float) -> None:
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"ray start exited ({self.process.returncode}): {self.log_tail()}")
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=1):
                    pass
                if "Ray runtime started" in Path(self.log.name).read_text():
                    return
            except OSError:
                pass
            time.sleep(0.5)
        raise RuntimeError(f"the local Ray cluster did not start within {seconds:g} s: {self.log_tail()}")

    def log_tail(self) -> str:
        self.log.flush()
        return Path(self.log.name).read_text()[-2000:]

    def stop(self) -> None:
        # The group holds ray start, the GCS, the raylet and the actors' workers; ray start stops its
        # children on SIGTERM, SIGKILL makes sure of what is left.
        try:
            os.killpg(self.process.pid, signal.SIGTERM)
            self.process.wait(timeout=5)
        except (ProcessLookupError, subprocess.TimeoutExpired):
            pass
        try:
            os.killpg(self.process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self.process.wait(timeout=10)
        self.log.close()
        shutil.rmtree(self.temp_dir, ignore_errors=True)


@pytest.fixture(scope="module")
def cluster():
    if not HAVE_RAY:
        pytest.skip("Ray is not installed (pip install 'kernelsmith[ray]')")
    if not any(b.name == "opencl" and b.available for b in ks.devices()):
        pytest.skip("no OpenCL device (install pocl-opencl-icd)")
    local = LocalCluster()
    saved = {name: os.environ.get(name) for name in local.env}
    os.environ.update(local.env)  # this process and the commands it starts connect with the cluster's token
    try:
        import ray

        ray.init(address=local.address, log_to_driver=False)
        yield local
    finally:
        ray.shutdown()
        local.stop()
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


@pytest.fixture(scope="module")
def harness_task() -> "ks.Task":
    return ks.Task.load(str(HARNESS_TASK))


@needs_ray
def test_ray_actors_evaluate_like_the_built_in_evaluator(cluster, harness_task):
    from kernelsmith.distributed import RayEvaluator

    direct = ks.create_evaluator(fast_options())
    candidates = [scale_add_candidate(0), BROKEN, scale_add_candidate(1)]
    expected = direct.evaluate_batch(harness_task, candidates)
    with RayEvaluator(options=fast_options(), kind="cpu", actors=2) as evaluator:
        assert evaluator.concurrency() == 2
        assert evaluator.backend_name() == "opencl"
        assert evaluator.device_name() == direct.device_name()
        evaluations = evaluator.evaluate_batch(harness_task, candidates)
        again = evaluator.evaluate_batch(harness_task, candidates[:2])
        stats = evaluator.actor_stats()
        actor_ids = {actor["actor_id"] for actor in evaluator.actors()}
    assert [e.status for e in evaluations] == [e.status for e in expected]
    assert [e.candidate_id for e in evaluations] == [c.id() for c in candidates]
    assert evaluations[1].status == ks.Status.incorrect
    assert [e.status for e in again] == [ks.Status.ok, ks.Status.incorrect]
    for evaluation, reference in zip(evaluations + again, expected + expected[:2]):
        assert evaluation.device == reference.device
        assert evaluation.placement.actor in actor_ids
        assert evaluation.placement.host == socket.gethostname()
        assert evaluation.placement.device_index == 0
        assert evaluation.placement.retries == 0
        assert sorted(json.loads(evaluation.to_json())) == sorted(json.loads(reference.to_json()))
        if evaluation.ok:
            assert evaluation.baseline_timing is not None and evaluation.speedup > 0
    # The task went into the object store once and to each actor once.
    assert evaluator.task_puts == 1
    assert sorted(actor["task_fetches"] for actor in stats) == [1, 1]


@needs_ray
def test_a_task_error_raised_in_an_actor_reaches_the_caller(cluster, harness_task):
    from kernelsmith.distributed import RayEvaluator

    broken = ks.Task.from_json(harness_task.to_json())
    references = dict(broken.references)
    opencl = references["opencl"]
    opencl.source = opencl.source.replace("__kernel", "__kernel_oops")
    references["opencl"] = opencl
    broken.references = references
    with RayEvaluator(options=fast_options(), kind="cpu", actors=1) as evaluator:
        with pytest.raises(ks.TaskError):
            evaluator.evaluate(broken, scale_add_candidate(0))
        assert evaluator.evaluate(harness_task, scale_add_candidate(0)).ok  # the actor lives on


def _rate(evaluator, task, count: int, offset: int) -> float:
    """Evaluations per minute of a batch of `count` distinct candidates."""
    candidates = [scale_add_candidate(offset + i) for i in range(count)]
    started = time.monotonic()
    evaluations = evaluator.evaluate_batch(task, candidates)
    seconds = time.monotonic() - started
    assert [e.status for e in evaluations] == [ks.Status.ok] * count, [e.message for e in evaluations]
    return 60.0 * count / seconds


@needs_ray
def test_throughput_grows_with_actors(cluster, harness_task):
    """On a GPU an evaluation's time is mostly the device's (timing a kernel for the mode's budget), which
    actors on different GPUs spend side by side. The CPU analogue: a sampling budget of 0.4 s that the
    noise target never ends, so each evaluation holds its actor's PoCL device (one thread) for that
    long. Ideal scaling from one actor to two is 2x; on a shared CI machine the bound is 1.3x."""
    from kernelsmith.distributed import RayEvaluator

    options = fast_options(screen_budget_seconds=0.4, noise_target=1e-9, max_samples=1000000)
    rates = {}
    for actors in (1, 2):
        with RayEvaluator(options=options, kind="cpu", actors=actors) as evaluator:
            _rate(evaluator, harness_task, actors, 1000)  # every actor prepares the task (its baseline)
            rates[actors] = _rate(evaluator, harness_task, 6, 0)
    print(f"\nevaluations per minute: 1 actor {rates[1]:.0f}, 2 actors {rates[2]:.0f} "
          f"({rates[2] / rates[1]:.2f}x)")
    assert rates[2] > 1.3 * rates[1]


def _wait_for(condition, seconds: float, what: str):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError(f"waited {seconds:g} s for {what}")


def _kill_mid_batch(evaluator, task, count: int):
    """Starts a batch, kills the process of the first actor once it has two candidates in flight, and
    returns the evaluations, the killed actor's description and its pid."""
    outcome = {}

    def run():
        outcome["evaluations"] = evaluator.evaluate_batch(task, [scale_add_candidate(i) for i in range(count)])

    thread = threading.Thread(target=run)
    thread.start()
    busy = _wait_for(lambda: next((a for a in evaluator.actors() if a["in_flight"] == 2 and a["index"] == 0), None),
                     60, "the first actor to have two candidates in flight")
    time.sleep(0.3)  # well into an evaluation
    os.kill(busy["pid"], signal.SIGKILL)
    thread.join(timeout=240)
    assert not thread.is_alive()
    return outcome["evaluations"], busy


@needs_ray
def test_an_actor_killed_mid_batch_loses_nothing(cluster, harness_task):
    from kernelsmith.distributed import RayEvaluator

    options = fast_options(screen_budget_seconds=0.3, noise_target=1e-9, max_samples=1000000)
    with RayEvaluator(options=options, kind="cpu", actors=2) as evaluator:
        evaluator.evaluate_batch(harness_task, [scale_add_candidate(100), scale_add_candidate(101)])  # warm
        evaluations, killed = _kill_mid_batch(evaluator, harness_task, 10)
        assert [e.status for e in evaluations] == [ks.Status.ok] * 10, [e.message for e in evaluations]
        retried = [e for e in evaluations if e.placement.retries > 0]
        assert 1 <= len(retried) <= 2  # what the killed actor held, no more
        for evaluation in retried:
            assert evaluation.placement.retries == 1
        # Ray restarts the actor; the evaluator gives it work again once it answers.
        restarted = _wait_for(lambda: next((a for a in evaluator.actors()
                                            if a["index"] == 0 and a["state"] == "alive"), None), 120,
                              "the killed actor to come back")
        assert restarted["lost"] == 1
        assert restarted["pid"] != killed["pid"]
        after = evaluator.evaluate_batch(harness_task, [scale_add_candidate(i) for i in range(20, 24)])
        assert [e.status for e in after] == [ks.Status.ok] * 4
        assert {e.placement.actor for e in after} == {a["actor_id"] for a in evaluator.actors()}


@needs_ray
def test_past_the_retry_bound_a_lost_evaluation_says_so(cluster, harness_task):
    from kernelsmith.distributed import RayEvaluator

    options = fast_options(screen_budget_seconds=0.3, noise_target=1e-9, max_samples=1000000)
    with RayEvaluator(options=options, kind="cpu", actors=2, max_retries=0) as evaluator:
        evaluator.evaluate_batch(harness_task, [scale_add_candidate(100), scale_add_candidate(101)])
        evaluations, killed = _kill_mid_batch(evaluator, harness_task, 6)
    lost = [e for e in evaluations if e.status == ks.Status.crashed]
    assert 1 <= len(lost) <= 2
    for evaluation in lost:
        assert evaluation.placement.retries == 1
        assert evaluation.placement.actor == killed["actor_id"]
        assert evaluation.fitness == -1.0
        assert re.search(r"lost with its Ray actor 1 time\(s\), not started again \(max_retries=0\)",
                         evaluation.message)
    assert sum(e.ok for e in evaluations) == 6 - len(lost)


@needs_ray
def test_a_run_on_ray_resumes_after_its_driver_is_killed(cluster, tmp_path):
    task = _small_relu_task(tmp_path)
    db = tmp_path / "ray-run.db"
    command = [sys.executable, "-m", "kernelsmith", "evolve", "--task", str(tmp_path / "relu_small"),
               "--backend", "opencl", "--ray", cluster.address, "--ray-actors", "2", "--islands", "1",
               "--db", str(db), "--seed", "3"]  # fmt: skip
    first = subprocess.Popen(command + ["--budget", "40"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                             text=True, start_new_session=True)
    lines = []
    try:
        for line in first.stdout:
            lines.append(line)
            if re.match(r"\[(\d+)/40\]", line) and int(re.match(r"\[(\d+)/", line).group(1)) >= 5:
                break
        first.kill()  # the driver dies mid-run: its actors die with it
        first.wait(timeout=30)
    finally:
        if first.poll() is None:
            first.kill()
            first.wait()
        first.stdout.close()
    banner = next((line for line in lines if line.startswith("evolving")), "")
    assert "(2 Ray actors)" in banner, "".join(lines)
    with sqlite3.connect(db) as con:
        evaluated_before = con.execute("SELECT count(*) FROM evaluations").fetchone()[0]
    assert 5 <= evaluated_before < 40
    budget = evaluated_before + 6
    second = subprocess.run(command + ["--budget", str(budget), "--resume", "--json"], capture_output=True,
                            text=True, timeout=240)
    assert second.returncode == 0, second.stderr[-3000:]
    result = json.loads(second.stdout)
    assert result["evaluations"] == budget
    assert result["session_evaluations"] == 6
    store = ks.RunStore(str(db), read_only=True)
    runs = store.runs()
    assert len(runs) == 1 and runs[0].id == result["run_id"]
    records = store.evaluations(result["run_id"])
    assert len(records) == result["evaluations"]
    assert all(record.evaluation.placement.actor for record in records)
    assert task.name == runs[0].task_name


@needs_ray
def test_the_rl_reward_takes_many_concurrent_callers_over_ray(cluster, harness_task):
    from kernelsmith.distributed import RayEvaluator
    from kernelsmith.rl import KernelReward

    state = {"task_json": harness_task.to_json(), "language": "opencl",
             "parent_source": harness_task.references["opencl"].source, "mode": "full"}
    with RayEvaluator(options=fast_options(), kind="cpu", actors=2) as evaluator:
        reward = KernelReward(evaluator, shaping="kernelsmith")
        results = {}
        errors = []

        def caller(index: int) -> None:
            try:
                good = "```opencl\n" + scale_add_candidate(index).source + "```"
                wrong = "```opencl\n" + BROKEN.source + "```"
                results[index] = reward.compute_score(
                    data_sources=["kernelsmith"] * 3, solution_strs=[good, wrong, "no code"],
                    ground_truths=[None] * 3, extra_infos=[state] * 3)
            except BaseException as error:  # noqa: BLE001  (reported below)
                errors.append(error)

        threads = [threading.Thread(target=caller, args=(i,)) for i in range(6)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=240)
    assert not errors, errors
    assert sorted(results) == list(range(6))
    for good, wrong, nothing in results.values():
        assert good > wrong > nothing  # correct > incorrect > no program


@needs_ray
def test_verls_compute_score_evaluates_on_ray_when_told_to(cluster, harness_task, monkeypatch):
    """kernelsmith.rl.compute_score (verl's custom reward function) over KERNELSMITH_REWARD_RAY."""
    from kernelsmith import rl
    from kernelsmith.distributed import RayEvaluator
    from kernelsmith.training import RewardShaping

    monkeypatch.setenv("KERNELSMITH_REWARD_RAY", cluster.address)
    monkeypatch.setenv("KERNELSMITH_REWARD_BACKEND", "opencl")
    monkeypatch.setattr(rl, "_default", None)
    state = {"task_json": harness_task.to_json(), "language": "opencl",
             "parent_source": harness_task.references["opencl"].source}
    try:
        score = rl.compute_score("kernelsmith", "```opencl\n" + scale_add_candidate(7).source + "```", None, state)
        evaluator = rl.default_reward().evaluator
        assert isinstance(evaluator, RayEvaluator)
        # Correct: the correctness bonus plus a speed term that timing noise moves (a 4096-element kernel on a
        # loaded CPU can time below its parent), which the shaping bounds below by speed_min; every failure
        # scores at most `incorrect`.
        shaping = RewardShaping()
        assert score >= shaping.correct_bonus + shaping.speed_min
        assert score > shaping.incorrect
        assert rl.compute_score("kernelsmith", "```opencl\n" + BROKEN.source + "```", None, state) == -0.3
    finally:
        if rl._default is not None:
            rl._default.evaluator.close()


@needs_ray
def test_the_python_blocks_of_docs_distributed_md_run(cluster, tmp_path, monkeypatch):
    """Every ```python block of docs/distributed.md, in order, in one namespace, in a scratch folder, on
    this module's cluster (RAY_ADDRESS points at it)."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("RAY_ADDRESS", cluster.address)
    blocks = re.findall(r"^```python\n(.*?)^```", DOC.read_text(), flags=re.S | re.M)
    assert len(blocks) >= 3
    namespace = {"__name__": "docs_distributed_md"}
    for index, block in enumerate(blocks):
        exec(compile(block, f"docs/distributed.md block {index + 1}", "exec"), namespace)  # noqa: S102
