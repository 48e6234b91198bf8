"""LLM clients, the bandit and the LLM mutator, through a real HTTP server on loopback."""

from __future__ import annotations

import json
import socket
import threading
import time

import pytest

from backends import fast_opencl_evaluator
from loopback_llm import LoopbackLlmServer, Reply, chat_reply

import kernelsmith
from kernelsmith.llm import (
    LlmRequestError,
    LlmResult,
    LlmTimeoutError,
    ModelEnsemble,
    OpenAIChatClient,
    TokenAccounting,
    UCB1Bandit,
    acall_client,
    as_llm_client,
    call_client,
    chat_completions_url,
    make_llm_mutator,
)

HELLO = [{"role": "user", "content": "hello"}]

PARENT = (
    "// @launch relu<<<ceil_div(N, 256), 256>>>(x, y, N)\n"
    'extern "C" __global__ void relu(const float* x, float* y, int N) {\n'
    "  const int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (i < N) {\n"
    "    y[i] = x[i] > 0.0f ? x[i] : 0.0f;\n"
    "  }\n"
    "}\n"
)

IMPROVED = (
    "// @launch relu<<<ceil_div(N, 512), 512>>>(x, y, N)\n"
    'extern "C" __global__ void relu(const float* x, float* y, int N) {\n'
    "  const int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (i < N) y[i] = fmaxf(x[i], 0.0f);\n"
    "}\n"
)

FULL_ANSWER = "Use fmaxf and 512 threads per block.\n\n```cuda\n" + IMPROVED + "```\n"
DIFF_ANSWER = (
    "Branch-free maximum.\n"
    "<<<<<<< SEARCH\n"
    "    y[i] = x[i] > 0.0f ? x[i] : 0.0f;\n"
    "=======\n"
    "    y[i] = fmaxf(x[i], 0.0f);\n"
    ">>>>>>> REPLACE\n"
)
PROSE_ANSWER = "You could try vectorised loads with float4; that usually helps memory-bound kernels."


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# ------------------------------------------------------------------------------------------ HTTP client


def test_url_normalisation():
    assert chat_completions_url("http://127.0.0.1:8000/v1") == "http://127.0.0.1:8000/v1/chat/completions"
    assert chat_completions_url("https://h/v1/chat/completions/") == "https://h/v1/chat/completions"
    with pytest.raises(ValueError, match="must be an http"):
        chat_completions_url("127.0.0.1:8000")


def test_a_full_answer_with_usage_and_the_request_body(monkeypatch):
    monkeypatch.setenv("KS_TEST_KEY", "sk-loopback")
    with LoopbackLlmServer([chat_reply("the answer", prompt_tokens=321, completion_tokens=45)]) as server:
        client = OpenAIChatClient(server.url, "model-a", api_key_env="KS_TEST_KEY", max_retries=0,
                                  temperature=0.5, max_tokens=1000, extra_body={"top_p": 0.9})
        result = client(HELLO, seed=7)
    assert result.text == "the answer"
    assert result.model == "model-a"
    assert (result.prompt_tokens, result.completion_tokens) == (321, 45)
    assert result.finish_reason == "stop"
    assert result.attempts == 1
    assert result.latency_seconds > 0
    (request,) = server.received
    assert request.path == "/v1/chat/completions"
    assert request.headers["authorization"] == "Bearer sk-loopback"
    assert request.body == {"model": "model-a", "messages": HELLO, "temperature": 0.5,
                            "max_tokens": 1000, "seed": 7, "top_p": 0.9}


def test_429_and_500_are_retried_honouring_retry_after():
    replies = [Reply(429, {"error": "slow down"}, {"Retry-After": "0.4"}),
               Reply(500, {"error": "internal"}),
               chat_reply("finally")]
    with LoopbackLlmServer(replies) as server:
        client = OpenAIChatClient(server.url, "m", max_retries=3, backoff_initial=0.05, seed=1)
        result = client(HELLO)
    assert result.text == "finally"
    assert result.attempts == 3
    assert len(server.received) == 3
    first, second, third = (r.arrived for r in server.received)
    assert second - first >= 0.38  # Retry-After: 0.4 was honoured
    assert third - second < 0.4  # the 500 used the short exponential backoff instead
    assert client.accounting.usage("m").requests == 1
    assert client.accounting.usage("m").failures == 0


def test_retries_give_up_with_the_last_error():
    with LoopbackLlmServer([Reply(503, {"error": "overloaded"})]) as server:
        client = OpenAIChatClient(server.url, "m", max_retries=2, backoff_initial=0.01)
        with pytest.raises(LlmRequestError, match=r"HTTP 503 .*overloaded.*\(after 3 attempts\)"):
            client(HELLO)
    assert len(server.received) == 3
    assert client.accounting.usage("m").failures == 1


def test_client_errors_are_not_retried():
    with LoopbackLlmServer([Reply(400, {"error": "bad model"})]) as server:
        client = OpenAIChatClient(server.url, "m", max_retries=3, backoff_initial=0.01)
        with pytest.raises(LlmRequestError, match="HTTP 400") as info:
            client(HELLO)
    assert info.value.status == 400
    assert len(server.received) == 1


def test_a_body_that_is_not_a_completion_is_an_error():
    with LoopbackLlmServer([Reply(200, "<html>gateway</html>")]) as server:
        with pytest.raises(LlmRequestError, match="not JSON"):
            OpenAIChatClient(server.url, "m", max_retries=0)(HELLO)
    with LoopbackLlmServer([Reply(200, {"object": "error"})]) as server:
        with pytest.raises(LlmRequestError, match="without 'choices'"):
            OpenAIChatClient(server.url, "m", max_retries=0)(HELLO)


def test_timeouts_are_retried_then_reported():
    with LoopbackLlmServer([chat_reply("too late", delay=3.0)]) as server:
        client = OpenAIChatClient(server.url, "m", timeout=0.3, max_retries=1, backoff_initial=0.01)
        start = time.monotonic()
        with pytest.raises(LlmTimeoutError, match=r"within 0.3 s \(after 2 attempts\)"):
            client(HELLO)
        elapsed = time.monotonic() - start
    assert len(server.received) == 2
    assert 0.6 <= elapsed < 2.0


def test_each_attempt_is_recorded_with_its_status_and_seconds():
    replies = [Reply(500, {"error": "internal"}), Reply(503, {"error": "busy"}, delay=0.2), chat_reply("done")]
    with LoopbackLlmServer(replies) as server:
        result = OpenAIChatClient(server.url, "m", max_retries=2, backoff_initial=0.01)(HELLO)
    assert [a.status for a in result.http_attempts] == [500, 503, 200]
    assert result.http_attempts[0].error.startswith("HTTP 500 from ") and "internal" in result.http_attempts[0].error
    assert result.http_attempts[2].error == ""
    assert result.http_attempts[1].seconds >= 0.2
    # A request that fails for good carries its attempts on the error.
    with LoopbackLlmServer([Reply(500, {"error": "internal"}), Reply(400, {"error": "bad model"})]) as server:
        with pytest.raises(LlmRequestError) as info:
            OpenAIChatClient(server.url, "m", max_retries=3, backoff_initial=0.01)(HELLO)
    assert [(a.status, a.error.split(" from ")[0]) for a in info.value.attempts] == [(500, "HTTP 500"), (400, "HTTP 400")]
    with LoopbackLlmServer([chat_reply("too late", delay=2.0)]) as server:
        with pytest.raises(LlmTimeoutError) as info:
            OpenAIChatClient(server.url, "m", timeout=0.2, max_retries=0)(HELLO)
    ((attempt,),) = [info.value.attempts]
    assert attempt.status == 0 and attempt.error.startswith("timeout: no answer") and attempt.seconds >= 0.2


def test_cancel_ends_a_request_to_a_silent_server_at_once():
    """A server that accepts and never answers: cancel() shuts the connection, the call raises
    LlmCancelledError at once (no retry), and a later request is not affected."""
    from kernelsmith.llm import LlmCancelledError

    with LoopbackLlmServer(responder=lambda body, index: chat_reply("late", delay=60.0) if index == 0
                           else chat_reply("later")) as server:
        client = OpenAIChatClient(server.url, "m", timeout=30.0, max_retries=4, backoff_initial=0.01)
        outcome = {}

        def call():
            started = time.monotonic()
            try:
                client(HELLO)
            except LlmCancelledError as error:
                outcome["error"] = error
            outcome["seconds"] = time.monotonic() - started

        thread = threading.Thread(target=call)
        thread.start()
        while not server.received:
            time.sleep(0.01)
        time.sleep(0.2)
        client.cancel()
        thread.join(timeout=5)
        assert not thread.is_alive()
        assert outcome["seconds"] < 2.0
        (attempt,) = outcome["error"].attempts
        assert attempt.status == 0 and attempt.error.startswith("cancelled: ")
        assert len(server.received) == 1  # no retry after a cancel
        assert client(HELLO).text == "later"


def test_a_cancel_while_a_connection_is_being_made_still_shuts_it():
    """cancel() finds no socket to shut on a connection that is still connecting; the connection shuts
    itself once connected, so the request fails at once instead of waiting for the timeout."""
    import http.client

    from kernelsmith.llm.http_client import _ConnectionRegistry

    with LoopbackLlmServer([chat_reply("late", delay=30.0)]) as server:
        host, port = server._server.server_address[:2]
        registry = _ConnectionRegistry()
        connection = registry.track(http.client.HTTPConnection)(host, port, timeout=30)
        registry.shut_all()  # before the socket exists
        start = time.monotonic()
        with pytest.raises(OSError):
            connection.request("POST", "/v1/chat/completions", body=b"{}")
            connection.getresponse()
        assert time.monotonic() - start < 2.0
        connection.close()


def test_connection_refused_is_retried_then_reported():
    client = OpenAIChatClient(f"http://127.0.0.1:{free_port()}/v1", "m", max_retries=1,
                              backoff_initial=0.01)
    with pytest.raises(LlmRequestError, match=r"cannot reach .*\(after 2 attempts\)"):
        client(HELLO)


@pytest.mark.parametrize("limit", [2, 6])
def test_the_concurrency_limit_is_honoured(limit):
    delay = 0.3
    with LoopbackLlmServer([chat_reply("ok", delay=delay)]) as server:
        client = OpenAIChatClient(server.url, "m", max_concurrency=limit, max_retries=0)
        results = []
        threads = [threading.Thread(target=lambda: results.append(client(HELLO))) for _ in range(6)]
        start = time.monotonic()
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        elapsed = time.monotonic() - start
    assert len(results) == 6
    assert server.peak_in_flight == limit  # measured by the server
    assert client.peak_in_flight == limit
    waves = -(-6 // limit)
    assert elapsed >= waves * delay * 0.95
    assert elapsed < waves * delay + 1.5


def test_token_accounting_per_model_from_usage():
    def responder(body, index):
        tokens = {"small": (100, 10), "large": (1000, 200)}[body["model"]]
        return chat_reply(f"answer {index}", prompt_tokens=tokens[0], completion_tokens=tokens[1])

    accounting = TokenAccounting()
    with LoopbackLlmServer(responder=responder) as server:
        small = OpenAIChatClient(server.url, "small", accounting=accounting, max_retries=0)
        large = OpenAIChatClient(server.url, "large", accounting=accounting, max_retries=0)
        for _ in range(3):
            small(HELLO)
        large(HELLO)
    totals = accounting.totals()
    assert (totals["small"].requests, totals["small"].prompt_tokens, totals["small"].completion_tokens) == (3, 300, 30)
    assert (totals["large"].requests, totals["large"].total_tokens) == (1, 1200)
    assert accounting.as_dict()["small"]["total_tokens"] == 330


# ----------------------------------------------------------------------------------- the client protocol


def test_any_callable_is_a_client():
    assert call_client(lambda messages: "plain", HELLO).text == "plain"

    def with_model(messages, model=None):
        return {"text": f"{model}:{messages[0]['content']}", "usage": {"prompt_tokens": 3, "completion_tokens": 4}}

    result = call_client(with_model, HELLO, model="m7", temperature=0.1)  # temperature is not declared
    assert (result.text, result.prompt_tokens, result.completion_tokens) == ("m7:hello", 3, 4)
    assert result.model == "m7"

    async def asynchronous(messages, **options):
        return LlmResult(text="async " + options["model"], completion_tokens=9)

    assert call_client(asynchronous, HELLO, model="m8").text == "async m8"
    openai_body = chat_reply("from a body", model="srv").body
    assert call_client(lambda m: openai_body, HELLO).model == "srv"
    with pytest.raises(TypeError, match="must return a str, a dict or an LlmResult"):
        call_client(lambda m: 42, HELLO)
    with pytest.raises(TypeError, match="message 0 must have string 'role' and 'content'"):
        call_client(lambda m: "x", [{"role": "user"}])


def test_async_callers_await_clients():
    import asyncio

    async def main():
        async def asynchronous(messages):
            await asyncio.sleep(0.01)
            return "a"

        return [await acall_client(asynchronous, HELLO), await acall_client(lambda m: "s", HELLO)]

    assert [r.text for r in asyncio.run(main())] == ["a", "s"]


# ------------------------------------------------------------------------------------------------ bandit


def test_ucb1_tries_every_arm_then_prefers_improvement_per_cost():
    bandit = UCB1Bandit(["a", "b", "c"], exploration=0.5)
    assert [bandit.select() for _ in range(3)] == ["a", "b", "c"]
    rewards = {"a": 0.0, "b": 1.0, "c": 0.2}
    counts = {"a": 0, "b": 0, "c": 0}
    for _ in range(300):
        arm = bandit.select()
        counts[arm] += 1
        bandit.update(arm, rewards[arm])
    assert counts["b"] > 200
    assert counts["a"] > 0 and counts["c"] > 0  # still explored
    assert bandit.update("a", -3.0) == 0.0  # a regression earns nothing
    with pytest.raises(ValueError, match="cost must be positive"):
        bandit.update("a", 1.0, cost=0.0)


def test_the_ensemble_routes_to_the_cheaper_model_with_equal_gains():
    def responder(body, index):
        return chat_reply(body["model"], prompt_tokens=900, completion_tokens=100)

    with LoopbackLlmServer(responder=responder) as server:
        ensemble = ModelEnsemble(
            {name: OpenAIChatClient(server.url, name, max_retries=0) for name in ("cheap", "dear")},
            price_per_1k_tokens={"cheap": 1.0, "dear": 10.0},
            exploration=0.3,
        )
        picks = []
        for _ in range(40):
            result = ensemble(HELLO)
            assert result.text == result.model  # the server saw the model the bandit chose
            picks.append(result.model)
            ensemble.observe(result.model, improvement=0.5, prompt_tokens=result.prompt_tokens,
                             completion_tokens=result.completion_tokens)
    assert picks[:2] == ["cheap", "dear"]
    assert picks.count("cheap") > 30
    assert ensemble.accounting.usage("cheap").requests == picks.count("cheap")
    stats = ensemble.bandit.stats()
    assert stats["dear"].cost_sum == pytest.approx(10.0 * stats["dear"].updates)
    assert ensemble.observe_step({"model": "cheap", "child_fitness": 2.0, "parent_fitness": 1.5,
                                  "prompt_tokens": 500, "completion_tokens": 500}) == pytest.approx(0.5)


# ------------------------------------------------------------------------------- parser and prompt (C++)


def test_parse_response_from_python():
    parsed = kernelsmith.parse_response(DIFF_ANSWER, kernelsmith.EditMode.diff, PARENT)
    assert parsed.ok and parsed.kind == "diff"
    assert "fmaxf(x[i], 0.0f)" in parsed.source
    bad = kernelsmith.parse_response(PROSE_ANSWER, kernelsmith.EditMode.full, PARENT)
    assert not bad and bad.failure == "no code in the response"
    blocks = kernelsmith.extract_code_blocks(FULL_ANSWER)
    assert [b.language for b in blocks] == ["cuda"]


class RecordingClient(kernelsmith.LlmClient):
    """A Python subclass of the C++ interface."""

    def __init__(self, answer):
        super().__init__()
        self.answer = answer
        self.seen = []

    def complete(self, messages, options):
        self.seen.append([(m.role, m.content) for m in messages])
        return kernelsmith.LlmResponse(text=self.answer, model="py-subclass", prompt_tokens=11,
                                       completion_tokens=22, latency_seconds=0.5)


def relu_request(**overrides):
    task = kernelsmith.Task.load("relu")
    request = kernelsmith.MutationRequest()
    request.task = task
    parent = kernelsmith.Candidate()
    parent.language = "cuda"
    parent.source = PARENT
    request.parent = parent
    request.seed = overrides.get("seed", 1)
    request.generation = 1
    return request


def test_a_python_subclass_of_llm_client_drives_the_mutator():
    client = RecordingClient(FULL_ANSWER)
    options = kernelsmith.LlmMutatorOptions()
    options.diff_weight = 0.0
    options.crossover_weight = 0.0
    mutator = kernelsmith.LlmMutator(client, options)
    del client  # C++ keeps the Python object alive
    (proposal,) = mutator.propose(relu_request())
    assert proposal.failure == ""
    assert proposal.candidate.source == IMPROVED
    assert proposal.candidate.lineage.origin == "llm_full"
    assert (proposal.model, proposal.prompt_tokens, proposal.completion_tokens) == ("py-subclass", 11, 22)
    assert proposal.latency_seconds == pytest.approx(0.5)
    assert mutator.client.seen[0][0][0] == "system"
    assert [m["content"] for m in json.loads(proposal.prompt)] == [c for _, c in mutator.client.seen[0]]


def test_the_prompt_builder_from_python():
    options = kernelsmith.PromptBuilderOptions()
    options.peak_bandwidth_gbps = 3350.0
    builder = kernelsmith.PromptBuilder(options)
    prompt = builder.build(relu_request(), kernelsmith.EditMode.diff)
    user = prompt.messages[1].content
    assert "## Task: relu" in user and "torch.relu(x)" in user and "<<<<<<< SEARCH" in user
    assert "peak memory bandwidth: 3.35 TB/s" in user
    assert prompt.estimated_tokens > 0 and not prompt.dropped


# --------------------------------------------------------------------- the mutator over HTTP, end to end


def test_the_llm_mutator_over_http_records_every_exchange():
    script = [
        chat_reply(FULL_ANSWER, prompt_tokens=1500, completion_tokens=120),
        chat_reply(DIFF_ANSWER, prompt_tokens=1400, completion_tokens=60),
        chat_reply(PROSE_ANSWER, prompt_tokens=1300, completion_tokens=30),
        Reply(500, {"error": "flaky"}),
        chat_reply(FULL_ANSWER, prompt_tokens=1600, completion_tokens=110),
    ]
    with LoopbackLlmServer(script) as server:
        mutator = make_llm_mutator(server.url, "coder-7b", api_key_env=None, max_retries=2, timeout=10,
                                   seed=3, temperature=0.2, max_tokens=4096)
        modes = [kernelsmith.EditMode.full, kernelsmith.EditMode.diff, kernelsmith.EditMode.full,
                 kernelsmith.EditMode.full]
        proposals = [mutator.propose_with_mode(relu_request(), mode) for mode in modes]

    full, diff, prose, retried = proposals
    assert full.candidate.source == IMPROVED and full.mutation == "llm_full"
    assert diff.candidate.lineage.origin == "llm_diff"
    assert "y[i] = fmaxf(x[i], 0.0f);" in diff.candidate.source
    assert diff.candidate.lineage.parent_ids == [relu_request().parent.id()]
    assert prose.candidate is None and prose.failure == "no code in the response"
    assert prose.response == PROSE_ANSWER
    assert retried.candidate is not None and retried.prompt_tokens == 1600

    # Each proposal holds the exact messages the server received, the answer, model, tokens, latency.
    bodies = [r.body for r in server.received]
    assert len(bodies) == 5  # the 500 was retried
    for proposal, body in zip(proposals, [bodies[0], bodies[1], bodies[2], bodies[4]]):
        assert json.loads(proposal.prompt) == body["messages"]
        assert proposal.model == "coder-7b"
        assert proposal.latency_seconds > 0
        assert body["temperature"] == 0.2 and body["max_tokens"] == 4096
    assert (full.prompt_tokens, full.completion_tokens) == (1500, 120)
    usage = mutator.client.client.accounting.usage("coder-7b")
    assert (usage.requests, usage.prompt_tokens) == (4, 1500 + 1400 + 1300 + 1600)


def test_proposals_from_several_threads_overlap_up_to_the_limit():
    """LlmMutator.propose releases the GIL, so threads wait on the server together; the client's
    semaphore still caps the requests in flight."""
    with LoopbackLlmServer([chat_reply(FULL_ANSWER, delay=0.4)]) as server:
        mutator = make_llm_mutator(server.url, "m", api_key_env=None, max_retries=0, max_concurrency=2,
                                   full_weight=1.0, diff_weight=0.0, crossover_weight=0.0)
        results = []
        threads = [threading.Thread(target=lambda: results.extend(mutator.propose(relu_request())))
                   for _ in range(4)]
        start = time.monotonic()
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        elapsed = time.monotonic() - start
    assert [p.candidate is not None for p in results] == [True] * 4
    assert server.peak_in_flight == 2
    assert 0.8 * 0.95 <= elapsed < 0.8 + 1.5


def test_client_failures_become_proposal_failures():
    with LoopbackLlmServer([Reply(401, {"error": "bad key"})]) as server:
        mutator = make_llm_mutator(server.url, "m", api_key_env=None, max_retries=0)
        (proposal,) = mutator.propose(relu_request())
    assert proposal.candidate is None
    assert proposal.failure.startswith("LLM request failed: LlmRequestError: HTTP 401")
    assert proposal.prompt  # still recorded


def test_as_llm_client_wraps_async_callables():
    async def answer(messages, model=None):
        return {"text": FULL_ANSWER, "model": "async-" + str(model),
                "usage": {"prompt_tokens": 5, "completion_tokens": 6}}

    options = kernelsmith.LlmMutatorOptions()
    options.request.model = "x"
    mutator = kernelsmith.LlmMutator(as_llm_client(answer), options)
    proposal = mutator.propose_with_mode(relu_request(), kernelsmith.EditMode.full)
    assert proposal.candidate is not None
    assert (proposal.model, proposal.prompt_tokens, proposal.completion_tokens) == ("async-x", 5, 6)


def test_the_examples_in_docs_llm_md_run():
    """Every ```python block of docs/llm.md, in order, in one namespace; the example URL points at a
    loopback server."""
    import pathlib
    import re

    text = (pathlib.Path(__file__).resolve().parents[2] / "docs" / "llm.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, flags=re.S)
    assert len(blocks) >= 4
    with LoopbackLlmServer([chat_reply(FULL_ANSWER)]) as server:
        namespace: dict = {}
        for block in blocks:
            exec(compile(block.replace("http://127.0.0.1:8000/v1", server.url), "docs/llm.md", "exec"),
                 namespace)
    assert namespace["proposal"].candidate is not None


# ------------------------------------------------- an evolution on PoCL with the LLM mutator over HTTP


def opencl_available() -> bool:
    try:
        return any(b.name == "opencl" and b.available for b in kernelsmith.devices())
    except kernelsmith.Error:
        return False


def opencl_relu(block: int) -> str:
    return (
        f"// @launch relu<<<ceil_div(N, {block}), {block}>>>(x, y, N)\n"
        "__kernel void relu(__global const float* x, __global float* y, int N) {\n"
        "  const int i = get_global_id(0);\n"
        "  if (i < N) y[i] = fmax(x[i], 0.0f);\n"
        "}\n"
    )


@pytest.mark.skipif(not opencl_available(), reason="no OpenCL device (install pocl-opencl-icd)")
def test_an_evolution_step_records_the_llm_exchange(tmp_path):
    """Evolution + LlmMutator + the loopback server + the real evaluator on PoCL: each LLM step in the
    run store holds the exact prompt the server received, its answer, model, tokens and latency."""
    task_data = json.loads(kernelsmith.Task.load("relu").to_json())
    task_data["sizes"] = {"N": 1 << 16}
    task = kernelsmith.Task.from_json(json.dumps(task_data), "<relu, 2^16 elements>")

    answers = [
        f"Wider work-groups.\n\n```opencl\n{opencl_relu(128)}```\n",
        PROSE_ANSWER,
        f"Even wider.\n\n```opencl\n{opencl_relu(512)}```\n",
    ]

    def responder(body, index):
        return chat_reply(answers[index % len(answers)], prompt_tokens=2000 + index,
                          completion_tokens=100 + index, delay=0.05)

    options = kernelsmith.EvaluatorOptions()
    options.backend = "opencl"
    options.mode = "screen"
    options.correctness_trials = 1
    options.screen_budget_seconds = 0.05
    options.min_samples = 5
    options.cache_dir = str(tmp_path / "cache")
    evaluator = kernelsmith.create_evaluator(options)

    db = str(tmp_path / "run.db")
    with LoopbackLlmServer(responder=responder) as server:
        mutator = make_llm_mutator(server.url, "loopback-coder", api_key_env=None, full_weight=1.0,
                                   diff_weight=0.0, crossover_weight=0.0, seed=2, max_retries=0)
        config = kernelsmith.EvolutionConfig()
        config.islands = 1
        config.seed = 4
        config.db_path = db
        config.budget = 4  # the reference, the seed and two LLM children
        result = kernelsmith.Evolution(task, evaluator, mutator, config).run()
    assert result.evaluations == 4

    store = kernelsmith.RunStore(db, True)
    (run,) = store.runs()
    steps = [s for s in store.steps(run.id) if s.mutation.startswith("llm")]
    assert len(steps) == len(server.received) == 3
    for index, (step, request) in enumerate(zip(steps, server.received)):
        assert json.loads(step.prompt) == request.body["messages"]
        assert step.response == answers[index]
        assert step.model == "loopback-coder"
        assert (step.prompt_tokens, step.completion_tokens) == (2000 + index, 100 + index)
        assert step.latency_seconds >= 0.05
    children = [s for s in steps if s.child_id]
    assert len(children) == 2 and all(s.mutation == "llm_full" for s in children)
    assert steps[1].failure == "no code in the response" and not steps[1].child_id
    evaluations = {e.program_id: e.evaluation for e in store.evaluations(run.id)}
    assert all(evaluations[s.child_id].status == kernelsmith.Status.ok for s in children)
    # The prompt told the model about the device it runs on, and about the program it revises.
    user = json.loads(steps[0].prompt)[1]["content"]
    assert "(opencl)" in user and "## Current program" in user


def test_the_command_line_glue_and_ensemble_feedback():
    from kernelsmith.llm import EnsembleFeedback, mutator_from_cli

    with pytest.raises(ValueError, match="needs --llm-url"):
        mutator_from_cli(None, "m")
    with pytest.raises(ValueError, match="needs --model"):
        mutator_from_cli("http://127.0.0.1:9/v1", " , ")
    single, callback = mutator_from_cli("http://127.0.0.1:9/v1", "m", None)
    assert callback is None and single.options.request.model == "m"

    with LoopbackLlmServer(responder=lambda body, i: chat_reply(FULL_ANSWER, prompt_tokens=500,
                                                                 completion_tokens=500)) as server:
        feedback, callback = mutator_from_cli(server.url, "a,b", None, full_weight=1.0, diff_weight=0.0,
                                              crossover_weight=0.0)
        assert isinstance(feedback, EnsembleFeedback) and callback == feedback.on_progress
        request = relu_request()
        evaluation = kernelsmith.Evaluation()
        evaluation.status = kernelsmith.Status.ok
        evaluation.fitness = 1.0
        request.parent_evaluation = evaluation
        (proposal,) = feedback.propose(request)
    assert proposal.model == "a" and proposal.candidate is not None

    class Progress:  # the fields of kernelsmith.Progress that the feedback reads
        program_id = proposal.candidate.id()
        status = kernelsmith.Status.ok
        speedup = 1.5

    callback(Progress())
    stats = feedback.ensemble.bandit.stats()["a"]
    assert stats.updates == 1
    assert stats.improvement_sum == pytest.approx(0.5)
    assert stats.reward_sum == pytest.approx(0.5)  # 0.5 improvement over 1000 tokens at 1 per 1k
    callback(Progress())  # an outcome counts once
    assert feedback.ensemble.bandit.stats()["a"].updates == 1


@pytest.mark.skipif(not opencl_available(), reason="no OpenCL device (install pocl-opencl-icd)")
def test_kernelsmith_evolve_with_the_llm_mutator(tmp_path, capsys):
    """`kernelsmith evolve --mutator llm --llm-url ... --model a,b` on PoCL against the loopback server."""
    from kernelsmith.cli import main

    task_data = json.loads(kernelsmith.Task.load("relu").to_json())
    task_data["sizes"] = {"N": 1 << 16}
    manifest = tmp_path / "task.json"
    manifest.write_text(json.dumps(task_data))
    blocks = iter([32, 64, 128, 512, 1024, 16, 8])

    def responder(body, index):
        return chat_reply(f"Try another work-group size.\n```opencl\n{opencl_relu(next(blocks))}```\n")

    db = tmp_path / "run.db"
    with LoopbackLlmServer(responder=responder) as server:
        status = main(["evolve", "--task", str(manifest), "--backend", "opencl", "--mutator", "llm",
                       "--llm-url", server.url, "--model", "model-a,model-b", "--api-key-env", "",
                       "--budget", "4", "--islands", "1", "--db", str(db), "--json"])
    assert status == 0
    document = json.loads(capsys.readouterr().out)
    assert document["evaluations"] == 4
    # UCB1 tries each model once first; with two requests in flight they may arrive in either order.
    assert sorted(r.body["model"] for r in server.received[:2]) == ["model-a", "model-b"]
    store = kernelsmith.RunStore(str(db), True)
    (run,) = store.runs()
    models = [s.model for s in store.steps(run.id) if s.mutation.startswith("llm")]
    assert sorted(models) == sorted(r.body["model"] for r in server.received)


def _small_relu_manifest(tmp_path):
    task_data = json.loads(kernelsmith.Task.load("relu").to_json())
    task_data["sizes"] = {"N": 1 << 16}
    manifest = tmp_path / "task.json"
    manifest.write_text(json.dumps(task_data))
    return manifest


@pytest.mark.skipif(not opencl_available(), reason="no OpenCL device (install pocl-opencl-icd)")
def test_a_silent_llm_endpoint_does_not_outlive_the_wall_time(tmp_path, capsys):
    """`evolve --mutator llm --wall-time 20` against a server that accepts and never answers (the requests
    would wait 60 s each, 4 times): the run ends within a few seconds of its wall time, is marked stopped
    with the reason, and the hung requests are recorded as abandoned steps with their attempts."""
    from kernelsmith.cli import main

    # Long enough for the seeding (the reference's baseline timed in this run, two seeds screened, the leading one
    # confirmed in strict mode: 5-12 s on a 2-core machine) to end before it, so that the mutator's requests are
    # in flight when it comes.
    wall = 20.0
    db = tmp_path / "run.db"
    with LoopbackLlmServer([chat_reply("never sent", delay=120.0)]) as server:
        started = time.monotonic()
        status = main(["evolve", "--task", str(_small_relu_manifest(tmp_path)), "--backend", "opencl",
                       "--mutator", "llm", "--llm-url", server.url, "--model", "silent", "--api-key-env", "",
                       "--llm-timeout", "60", "--llm-retries", "3", "--budget", "20", "--islands", "1",
                       "--in-flight", "2", "--wall-time", str(wall), "--db", str(db), "--json"])
        elapsed = time.monotonic() - started
    assert status == 0
    document = json.loads(capsys.readouterr().out)
    assert document["stop_reason"] == "wall_time"
    assert document["seconds"] < wall + 5.0, document
    assert elapsed < wall + 15.0  # the evaluator's start and the seeding included
    # Every request sent was abandoned at the deadline, and none was retried after the cancel (on a loaded
    # machine the seeding may take most of the wall time, leaving fewer than --in-flight requests sent).
    sent = len(server.received)
    assert document["abandoned"] == sent and 1 <= sent <= 2

    store = kernelsmith.RunStore(str(db), True)
    (run,) = store.runs()
    assert (run.status, run.stop_reason) == ("stopped", "wall_time")
    hung = [s for s in store.steps(run.id) if s.abandoned_by]
    assert len(hung) == sent
    for step in hung:
        assert step.abandoned_by == "wall_time" and not step.child_id
        assert "LlmCancelledError" in step.failure
        (attempt,) = step.llm_attempts
        assert attempt.http_status == 0 and attempt.error.startswith("cancelled: ")
        assert attempt.seconds >= 0.5

    assert main(["report", "--db", str(db), "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["run"]["status"] == "stopped" and summary["abandoned"] == sent
    assert summary["llm"]["statuses"] == {"cancelled": sent}


@pytest.mark.skipif(not opencl_available(), reason="no OpenCL device (install pocl-opencl-icd)")
def test_retried_500s_are_in_the_store_and_the_report(tmp_path, capsys):
    """A server that answers 500 twice, then a kernel: the step keeps its three attempts (500, 500, 200)
    with their seconds, RunStoreReader lists them, and `report` counts the retries and the statuses."""
    from kernelsmith.cli import main
    from kernelsmith.store import RunStoreReader

    replies = [Reply(500, {"error": "overloaded"}), Reply(500, {"error": "overloaded"}),
               chat_reply(f"Wider work-groups.\n```opencl\n{opencl_relu(128)}```\n")]
    db = tmp_path / "run.db"
    with LoopbackLlmServer(replies) as server:
        status = main(["evolve", "--task", str(_small_relu_manifest(tmp_path)), "--backend", "opencl",
                       "--mutator", "llm", "--llm-url", server.url, "--model", "flaky", "--api-key-env", "",
                       "--llm-retries", "2", "--budget", "3", "--islands", "1", "--in-flight", "1",
                       "--db", str(db), "--json"])
    assert status == 0
    assert json.loads(capsys.readouterr().out)["evaluations"] == 3
    assert len(server.received) == 3

    store = kernelsmith.RunStore(str(db), True)
    (run,) = store.runs()
    (step,) = [s for s in store.steps(run.id) if s.llm_attempts]
    assert step.child_id
    assert [a.http_status for a in step.llm_attempts] == [500, 500, 200]
    assert [a.error.split(" from ")[0] for a in step.llm_attempts] == ["HTTP 500", "HTTP 500", ""]
    assert all(a.seconds > 0 for a in step.llm_attempts)
    rows = RunStoreReader(db).llm_attempts(run.id)
    assert [(r.step_id, r.attempt, r.http_status) for r in rows] == [(step.id, 0, 500), (step.id, 1, 500),
                                                                      (step.id, 2, 200)]

    assert main(["report", "--db", str(db), "--json"]) == 0
    llm = json.loads(capsys.readouterr().out)["llm"]
    assert (llm["requests"], llm["attempts"], llm["retries"]) == (1, 3, 2)
    assert llm["statuses"] == {"200": 1, "500": 2}
    assert main(["report", "--db", str(db)]) == 0
    assert "LLM: 1 requests, 3 attempts (2 retries; 200 x1, 500 x2)" in capsys.readouterr().out


def test_the_cli_sets_the_request_timeout_and_retries():
    from kernelsmith.llm import mutator_from_cli

    mutator, _ = mutator_from_cli("http://127.0.0.1:9/v1", "m", None, timeout=7.5, max_retries=1)
    client = mutator.client.client
    assert (client.timeout, client.max_retries) == (7.5, 1)
    assert mutator.options.request.timeout_seconds == 7.5


def test_a_plain_function_is_a_model_for_llm_mutator_and_evolve(tmp_path):
    """A model is a function: LlmMutator(fn) and evolve(task, llm=fn) take `prompt -> text` (first parameter
    named prompt, or annotated str) and `messages -> text`, with no wrapper; anything else is refused, naming
    what is accepted."""
    prompts: list = []

    def model(prompt):  # prompt -> text
        prompts.append(prompt)
        return f"Wider work-groups.\n\n```opencl\n{opencl_relu(128)}```\n"

    mutator = kernelsmith.LlmMutator(model)
    proposal = mutator.propose_with_mode(relu_request(), kernelsmith.EditMode.full)
    assert proposal.candidate is not None and proposal.failure == ""
    assert isinstance(prompts[0], str) and "## Current program" in prompts[0]

    seen: list = []

    def chat(messages: list) -> str:  # messages -> text
        seen.append(messages)
        return f"```opencl\n{opencl_relu(256)}```\n"

    assert kernelsmith.LlmMutator(chat).propose_with_mode(relu_request(), kernelsmith.EditMode.full).candidate
    assert seen[0][0]["role"] == "system" and seen[0][1]["role"] == "user"

    with pytest.raises(TypeError, match="a client is a kernelsmith.LlmClient or a callable .* got int"):
        kernelsmith.LlmMutator(42)

    task_data = json.loads(kernelsmith.Task.load("relu").to_json())
    task_data["sizes"] = {"N": 1 << 16}
    task = kernelsmith.Task.from_json(json.dumps(task_data), "<relu, 2^16 elements>")
    evaluator = fast_opencl_evaluator(tmp_path / "cache")
    before = len(prompts)
    run = kernelsmith.evolve(task, llm=model, evaluator=evaluator, budget=4, islands=1, db=tmp_path / "fn.db",
                             progress=False)
    assert len(prompts) > before  # the function was the run's model
    store = kernelsmith.RunStore(str(tmp_path / "fn.db"), True)
    (stored,) = store.runs()
    steps = [s for s in store.steps(stored.id) if s.mutation.startswith("llm")]
    assert steps and all(s.response.startswith("Wider work-groups.") for s in steps)
    assert any(s.child_id for s in steps)  # its answer became an evaluated child (later ones are duplicates)
    assert run.result.evaluations >= 3
    # A function given as `mutator` is taken as the model too; another type is refused with what is accepted.
    kernelsmith.evolve(task, mutator=chat, evaluator=evaluator, budget=3, islands=1, db=tmp_path / "m.db",
                       progress=False)
    with pytest.raises(TypeError, match="evolve: mutator must be a kernelsmith.Mutator"):
        kernelsmith.evolve(task, mutator="gpt-4o", evaluator=evaluator, budget=3, db=tmp_path / "x.db",
                           progress=False)
    with pytest.raises(ValueError, match="not both"):
        kernelsmith.evolve(task, mutator=kernelsmith.ParamMutator(), llm=chat, evaluator=evaluator, budget=3,
                           db=tmp_path / "y.db", progress=False)


@pytest.mark.skipif(not opencl_available(), reason="no OpenCL device (install pocl-opencl-icd)")
def test_an_llm_budget_stops_a_run_resumably_and_the_spend_is_reported(tmp_path, capsys):
    """--max-llm-calls against a loopback server that reports `usage`: the run stops at the cap with reason
    llm_budget (resumable), the spend is in the result, the progress lines and `report` (priced with
    --llm-price); a resume under a larger cap counts the earlier calls and makes only the new ones; a token cap
    and a cost cap stop a run too."""
    from kernelsmith.cli import main

    manifest = _small_relu_manifest(tmp_path)
    blocks = iter([32, 64, 128, 512, 1024, 16, 8, 256, 4, 2, 1])

    def responder(body, index):
        return chat_reply(f"Try another work-group size.\n```opencl\n{opencl_relu(next(blocks))}```\n",
                          prompt_tokens=1000, completion_tokens=100)

    db = tmp_path / "run.db"
    common = ["evolve", "--task", str(manifest), "--backend", "opencl", "--mutator", "llm", "--model", "coder",
              "--api-key-env", "", "--budget", "20", "--islands", "1", "--in-flight", "1", "--db", str(db),
              "--llm-price", "coder=0.5,2.0"]
    with LoopbackLlmServer(responder=responder) as server:
        assert main(common + ["--llm-url", server.url, "--max-llm-calls", "2", "--json"]) == 0
        first = json.loads(capsys.readouterr().out)
        assert len(server.received) == 2
        assert main(common + ["--llm-url", server.url, "--max-llm-calls", "3", "--resume"]) == 0
        resumed = capsys.readouterr()
        assert len(server.received) == 3  # the earlier two calls counted: one more
    assert first["stop_reason"] == "llm_budget"
    assert "stopped: llm_budget" in resumed.out
    assert "llm 3 calls 3300 tokens cost 2.1000" in resumed.err + resumed.out  # the live progress line
    store = kernelsmith.RunStore(str(db), True)
    (run,) = store.runs()
    assert (run.status, run.stop_reason) == ("stopped", "llm_budget")

    assert main(["report", "--db", str(db), "--json"]) == 0
    spend = json.loads(capsys.readouterr().out)["llm"]
    # 3 calls of 1000 + 100 tokens at 0.5 and 2.0 per 1,000: 3 * (0.5 + 0.2)
    assert (spend["calls"], spend["prompt_tokens"], spend["completion_tokens"]) == (3, 3000, 300)
    assert spend["cost"] == pytest.approx(2.1)
    assert main(["report", "--db", str(db)]) == 0
    assert "LLM spend: 3 calls, 3000 prompt + 300 completion tokens, cost 2.1000" in capsys.readouterr().out

    for cap in (["--max-llm-tokens", "2000"], ["--max-llm-cost", "1.0"]):  # each reached after the second call
        other = tmp_path / f"cap{cap[0]}.db"
        with LoopbackLlmServer(responder=responder) as server:
            arguments = [a if a != str(db) else str(other) for a in common]
            assert main(arguments + ["--llm-url", server.url, "--json"] + cap) == 0
            document = json.loads(capsys.readouterr().out)
            assert document["stop_reason"] == "llm_budget" and len(server.received) == 2, cap
    config = kernelsmith.EvolutionConfig()
    config.max_llm_cost = 1.0
    with pytest.raises(kernelsmith.ValidationError, match="max_llm_cost = 1 needs llm_prices"):
        config.validate()
