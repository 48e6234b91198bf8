"""Writes tests/data/run_store_v1.db: a run store of schema version 1, made by the code of commit 07601d7
(the last one that wrote version 1), for the migration tests.

Run it with the Python package of that commit installed (git checkout 07601d7 && tools/install.sh), on a
machine with PoCL: `python tests/data/make_run_store_v1.py tests/data/run_store_v1.db`. It refuses to run
under a build that writes another schema version.

The store holds two real runs of the relu task (2^12 elements, one odd size checked) evaluated by the OpenCL backend:
- run 1, a Python mutator whose scripted proposals cover every way a version-1 step records a rejection
  in prose: a new program, an exact duplicate ("duplicate of program <id> ..."), a near duplicate
  ("near duplicate of program <id> ..."), and a mutator failure;
- run 2, the LLM mutator answered over HTTP (tests/python/loopback_llm.py) with the same kernel every
  time, so that it rejects its own later answers ("the answer's program is already in the run ...").
Afterwards the write-ahead log is folded into the file and the file is vacuumed into 1 KiB pages, so that
it is one small self-contained file; its rows are the ones the old code wrote.
"""

from __future__ import annotations

import json
import os
import sqlite3
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "python"))

import kernelsmith as ks  # noqa: E402

# A relu kernel different from the task's reference and seed.
VARIANT = """// @launch relu<<<ceil_div(N, 128), 128>>>(x, y, N)
__kernel void relu(__global const float* restrict x, __global float* restrict y, int N) {
  const int i = get_global_id(0);
  if (i < N) y[i] = fmax(x[i], 0.0f);
}
"""
# VARIANT with its layout and comments changed: an exact duplicate after normalisation.
VARIANT_REFORMATTED = "// the same kernel, laid out again\n" + VARIANT.replace("  ", "    ")
# VARIANT with one constant changed: a near duplicate at the lowered similarity threshold below.
VARIANT_NEAR = VARIANT.replace("fmax(x[i], 0.0f)", "fmax(x[i], 0.5f - 0.5f)")


class ScriptedMutator(ks.Mutator):
    """Proposes, in turn: a new program, its exact duplicate, a near duplicate, then fails."""

    def __init__(self):
        super().__init__()
        self.count = 0

    def propose(self, request):
        self.count += 1
        script = {
            1: ks.Proposal(candidate=ks.Candidate("opencl", VARIANT), mutation="scripted"),
            2: ks.Proposal(candidate=ks.Candidate("opencl", VARIANT_REFORMATTED), mutation="scripted"),
            3: ks.Proposal(candidate=ks.Candidate("opencl", VARIANT_NEAR), mutation="scripted"),
        }
        return [script.get(self.count, ks.Proposal(mutation="scripted", failure="the SEARCH block matched nothing"))]

    def name(self):
        return "scripted"


def small_relu():
    data = json.loads(ks.Task.load("relu").to_json())
    data["sizes"] = {"N": 1 << 12}
    # Small stored documents: one size to check besides the timed one, the OpenCL kernels only.
    data["check_sizes"] = [{"name": "odd_1023", "sizes": {"N": 1023}}]
    for sources in (data["references"], data["seeds"]):
        sources.pop("cuda", None)
    data["seeds"].pop("triton", None)  # checked against the CUDA reference, which is gone
    return ks.Task.from_json(json.dumps(data), "<relu, 2^12 elements>")


def evaluator(cache_dir):
    options = ks.EvaluatorOptions()
    options.backend = "opencl"
    options.mode = "screen"
    options.correctness_trials = 1
    options.screen_budget_seconds = 0.02
    options.min_samples = 3
    options.cache_dir = cache_dir
    return ks.create_evaluator(options)


def config(path, budget, **fields):
    config = ks.EvolutionConfig()
    config.db_path = path
    config.islands = 1
    config.budget = budget
    config.mutations_in_flight = 1
    config.seed = 5
    for name, value in fields.items():
        setattr(config, name, value)
    return config


def write_runs(out):
    """The two runs, written into the store `out` by the installed build (tests/python/test_store.py
    makes them with the current build to compare with the fixture)."""
    from loopback_llm import LoopbackLlmServer, chat_reply
    from kernelsmith.llm import make_llm_mutator

    with tempfile.TemporaryDirectory() as cache:
        scripted = config(out, 4, max_failed_proposals=3)
        scripted.novelty.similarity_threshold = 0.8
        scripted.novelty.exempt_mutations = []
        ks.Evolution(small_relu(), evaluator(cache), ScriptedMutator(), scripted).run()

        answer = f"Use fmax and a smaller work-group.\n\n```opencl\n{VARIANT}```\n"
        with LoopbackLlmServer(responder=lambda body, index: chat_reply(answer, model="scripted-coder")) as server:
            mutator = make_llm_mutator(server.url, "scripted-coder", api_key_env=None, full_weight=1.0,
                                       diff_weight=0.0, crossover_weight=0.0, seed=3, timeout=30, max_retries=0)
            ks.Evolution(small_relu(), evaluator(cache), mutator, config(out, 4, max_failed_proposals=2)).run()


def main(out):
    if ks.RUN_STORE_SCHEMA_VERSION != 1:
        sys.exit(f"this build writes run store schema {ks.RUN_STORE_SCHEMA_VERSION}; install commit 07601d7")
    if os.path.exists(out):
        os.remove(out)
    write_runs(out)
    connection = sqlite3.connect(out)
    connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    connection.execute("PRAGMA journal_mode = DELETE")
    connection.execute("PRAGMA page_size = 1024")
    connection.execute("VACUUM")
    for row in connection.execute("SELECT run, selection, mutation, child_id IS NOT NULL, failure FROM steps"):
        print(row)
    connection.close()
    print(f"wrote {out} ({os.path.getsize(out)} bytes)")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "run_store_v1.db"))
