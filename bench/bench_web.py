"""Page load times of the web view (`kernelsmith serve`, docs/web.md) over a large run store.

Builds a store of --programs programs (100,000 by default) in a few seconds and serves it on a loopback port,
then loads every page twice, cold (the server's first look at the run) and warm (the next refresh), over HTTP,
and prints the seconds per page. Target: every page under a second.

The store is realistic in its parts and synthetic in its numbers. A real short evolution (relu on the OpenCL
backend, the parameter mutator: PoCL runs it on the CPU) gives the run's row (task, config), real sources and
real Evaluation documents; the 100,000 programs are written with SQL, each one a real program's source with
its own comment line, with an Evaluation document of the real run with its own speedup, fitness, fraction of
the hardware limit and status (85% correct, 8% incorrect, 7% compile errors), on 4 islands, each made from a
parent by a step. Every 50th step is an LLM step with a prompt (the parent and an inspiration in code blocks)
and a response (a code block with the child), so that the training-data view has work to do.

    python bench/bench_web.py [--programs 100000] [--keep store.db] [--store existing.db]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import shutil
import sqlite3
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

import kernelsmith as ks


def small_relu() -> "ks.Task":
    document = json.loads(ks.Task.load("relu").to_json())
    document["sizes"] = {"N": 1 << 16}
    document["check_sizes"] = [{"name": "odd_1023", "sizes": {"N": 1023}}]
    return ks.Task.from_json(json.dumps(document), "<relu, 2^16 elements>")


def template_run(path: str, islands: int) -> None:
    """A real short evolution whose run row, sources and evaluations the large store copies."""
    options = ks.EvaluatorOptions()
    options.backend = "opencl"
    options.mode = "screen"
    options.correctness_trials = 1
    options.screen_budget_seconds = 0.05
    options.min_samples = 5
    config = ks.EvolutionConfig()
    config.budget = 8
    config.islands = islands
    config.seed = 3
    config.db_path = path
    ks.Evolution(small_relu(), ks.create_evaluator(options), ks.ParamMutator(), config).run()


def _prompt(parent: str, inspiration: str) -> str:
    user = ("## Current program\n```opencl\n" + parent + "\n```\n\n### Program 1 (inspiration)\n```opencl\n"
            + inspiration + "\n```\n\nImprove the current program. Answer with the whole file.")
    return json.dumps([{"role": "system", "content": "You optimise OpenCL kernels."},
                       {"role": "user", "content": user}])


def build_store(template: str, path: str, programs: int, islands: int, seed: int = 1) -> None:
    """Writes `programs` programs, evaluations and steps into a new store at `path` (one transaction)."""
    for suffix in ("", "-wal", "-shm"):
        if os.path.exists(path + suffix):
            os.remove(path + suffix)
    ks.RunStore(path)  # the schema, indexes included, as the library writes it
    source_db = sqlite3.connect(f"file:{template}?mode=ro", uri=True)
    source_db.row_factory = sqlite3.Row
    run_row = dict(source_db.execute("SELECT * FROM runs ORDER BY id LIMIT 1").fetchone())
    real = [dict(r) for r in source_db.execute(
        "SELECT p.language, p.source, e.status, e.json FROM programs p JOIN evaluations e "
        "ON e.run = p.run AND e.program_id = p.id ORDER BY e.sequence")]
    source_db.close()
    ok_documents = [json.loads(r["json"]) for r in real if r["status"] == "ok"]
    if not ok_documents:
        raise SystemExit("bench_web: the template run has no correct evaluation; run it again")
    sources = [r["source"] for r in real]
    language = real[0]["language"]
    failed = json.loads(json.dumps(ok_documents[0]))
    failed.update(status="incorrect", message="check odd_1023/random: output y: 3 mismatches", speedup=0.0,
                  fitness=0.0, timing=None, baseline_timing=None, sol=None)
    broken = json.loads(json.dumps(failed))
    broken.update(status="compile_error", message="compile error: expected ';'", correctness=None)
    broken["compile"] = dict(broken.get("compile") or {}, ok=False,
                             log="<source>:3:30: error: expected ';' at end of declaration\n")

    rng = random.Random(seed)
    config = json.loads(run_row["config"])
    config.update(islands=islands, budget=programs)
    db = sqlite3.connect(path)
    db.execute("PRAGMA journal_mode = WAL")
    db.execute("PRAGMA synchronous = OFF")
    now = time.time()
    with db:
        cursor = db.execute(
            "INSERT INTO runs (task_name, config, task, language, backend, device, mutator, seed, library_version, "
            "started, updated, finished, status, stop_reason, error) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, "
            "'finished', 'budget', '')",
            (run_row["task_name"], json.dumps(config), run_row["task"], run_row["language"], run_row["backend"],
             run_row["device"], run_row["mutator"], run_row["seed"], run_row["library_version"], now - 3600, now, now))
        run = cursor.lastrowid
        program_rows, evaluation_rows, step_rows = [], [], []
        ids, speedups, generations, island_of = [], [], [], []
        island_best = {}
        for index in range(programs):
            source = f"// program {index}\n" + sources[index % len(sources)]
            program_id = hashlib.sha256((language + "\0" + source).encode()).hexdigest()[:16]
            if index == 0:
                parent, island, origin = None, 0, "reference"
            else:
                island = index % islands
                best = island_best.get(island)
                # Half the time the island's best is the parent (a deep lineage), else a recent program.
                if best is not None and rng.random() < 0.5:
                    parent = best
                else:
                    parent = rng.randrange(max(0, index - 2000), index)
                origin = "llm_full" if index % 50 == 0 else "param"
            roll = rng.random()
            status = "ok" if roll < 0.85 or index == 0 else "incorrect" if roll < 0.93 else "compile_error"
            base = speedups[parent] if parent is not None and speedups[parent] > 0 else 1.0
            # Most children are slower than their parent; about 1 in 160 of the best's children beats it.
            speedup = base * rng.lognormvariate(-0.1, 0.04) if status == "ok" else 0.0
            document = json.loads(json.dumps(ok_documents[index % len(ok_documents)] if status == "ok"
                                             else failed if status == "incorrect" else broken))
            document.update(candidate_id=program_id, speedup=speedup, fitness=speedup)
            if status == "ok" and isinstance(document.get("sol"), dict):
                document["sol"]["fraction"] = min(0.99, 0.2 * speedup)
            generation = generations[parent] + 1 if parent is not None else 0
            ids.append(program_id)
            speedups.append(speedup)
            generations.append(generation)
            island_of.append(island)
            if status == "ok" and (island_best.get(island) is None or speedup > speedups[island_best[island]]):
                island_best[island] = index
            parents = json.dumps([ids[parent]] if parent is not None else [])
            created = now - 3600 + index * 3600.0 / programs
            program_rows.append((run, program_id, language, source, program_id, parents, origin, island, generation,
                                 created))
            evaluation_rows.append((run, program_id, index, status, speedup, speedup, document.get("message", ""),
                                    run_row["backend"], run_row["device"], 0.3, json.dumps(document), created))
            if origin == "llm_full":
                parent_source = program_rows[parent][3]
                prompt = _prompt(parent_source, program_rows[rng.randrange(0, index)][3])
                response = "Process two elements per work-item.\n\n```opencl\n" + source + "\n```\n"
                tokens = (len(prompt) // 4, len(response) // 4)
            else:
                prompt, response, tokens = "", "", (0, 0)
            step_rows.append((run, island, parents, "seed" if parent is None else "policy",
                              origin if parent is not None else "reference", "[]", prompt, response,
                              "bench-model" if prompt else "", tokens[0], tokens[1], program_id, index, created))
        db.executemany("INSERT INTO programs (run, id, language, source, normalized_hash, parent_ids, origin, island, "
                       "generation, created) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", program_rows)
        db.executemany("INSERT INTO evaluations (run, program_id, sequence, status, fitness, speedup, message, backend, "
                       "device, wall_seconds, json, created) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                       evaluation_rows)
        evaluation_ids = {row[0]: row[1] for row in db.execute(
            "SELECT program_id, id FROM evaluations WHERE run = ?", (run,))}
        db.executemany(
            "INSERT INTO steps (run, island, parent_ids, selection, mutation, inspiration_ids, prompt, response, model, "
            "prompt_tokens, completion_tokens, latency_seconds, child_id, evaluation_id, failure, propose_seconds, "
            "evaluate_seconds, created, novelty_kind) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 0.5, ?, ?, '', 0.5, 0.3, "
            "?, 'novel')",
            [row[:12] + (evaluation_ids[row[11]], row[13]) for row in step_rows])
        for island, best in island_best.items():
            db.execute("INSERT INTO islands (run, island, programs, best_program_id, best_fitness, best_speedup, "
                       "updated) VALUES (?, ?, ?, ?, ?, ?, ?)",
                       (run, island, sum(1 for i in island_of if i == island), ids[best], speedups[best],
                        speedups[best], now))
    db.close()


def fetch(url: str) -> float:
    started = time.perf_counter()
    with urllib.request.urlopen(url, timeout=120) as response:
        body = response.read()
        if response.status != 200:
            raise SystemExit(f"bench_web: {url} answered {response.status}")
    if not body:
        raise SystemExit(f"bench_web: {url} answered an empty page")
    return time.perf_counter() - started


def wait_for_view(state_url: str, view: str) -> dict:
    """Polls the run's state until the named background view is complete; returns its status."""
    while True:
        with urllib.request.urlopen(state_url, timeout=120) as response:
            status = json.loads(response.read())["views"].get(view)
        if status is not None and not status["busy"]:
            if status["error"]:
                raise SystemExit(f"bench_web: the {view} view failed: {status['error']}")
            return status
        time.sleep(0.2)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--programs", type=int, default=100_000)
    parser.add_argument("--islands", type=int, default=4)
    parser.add_argument("--store", help="time this existing store instead of building one (its latest run)")
    parser.add_argument("--keep", help="keep the built store at this path")
    args = parser.parse_args(argv)
    try:
        from kernelsmith.web import create_app, make_server
    except ImportError as error:
        print(f"bench_web: {error}", file=sys.stderr)
        return 2

    folder = Path(tempfile.mkdtemp(prefix="kernelsmith-bench-web-"))
    try:
        if args.store:
            path = args.store
        else:
            template = str(folder / "template.db")
            started = time.perf_counter()
            template_run(template, args.islands)
            print(f"template run (relu, opencl, param mutator, 8 evaluations): {time.perf_counter() - started:.1f} s")
            path = args.keep or str(folder / "large.db")
            started = time.perf_counter()
            build_store(template, path, args.programs, args.islands)
            size = os.path.getsize(path) + (os.path.getsize(path + "-wal") if os.path.exists(path + "-wal") else 0)
            print(f"built {args.programs} programs in {time.perf_counter() - started:.1f} s ({size / 2**20:.0f} MiB): "
                  f"{path}")
        reader = ks.store.RunStoreReader(path)
        run = reader.latest_run_id()
        best = reader.best_evaluation(run)
        server = make_server(create_app([path]), "127.0.0.1", 0)
        thread = threading.Thread(target=server.serve_forever, daemon=True)
        thread.start()
        base = f"http://127.0.0.1:{server.server_port}"
        run_url = f"{base}/store/0/run/{run}"
        pages = [
            ("runs list", f"{base}/", None),
            ("runs list data", f"{base}/api/runs", None),
            ("run page", f"{run_url}/", None),
            ("progress data", f"{run_url}/api/progress", "progress"),
            ("evaluations, newest", f"{run_url}/evaluations", None),
            ("evaluations, older", f"{run_url}/evaluations?before={max(0, reader.evaluation_count(run) // 2)}", None),
            ("archive grid", f"{run_url}/archive", "archive"),
            ("lineage of the best", f"{run_url}/lineage", None),
            ("program (the best)", f"{run_url}/program/{best['program_id'] if best else 'none'}", None),
            ("training data (SFT)", f"{run_url}/training?kind=sft", "training"),
            ("training data (RL)", f"{run_url}/training?kind=rl", "training"),
            ("live check", f"{run_url}/api/state", None),
        ]
        print(f"\n{'page':<24} {'cold s':>8} {'warm s':>8}   view computed in the background")
        worst = 0.0
        for name, url, view in pages:
            started = time.perf_counter()
            cold = fetch(url)
            warm = fetch(url)
            worst = max(worst, cold, warm)
            note = ""
            if view is not None:
                status = wait_for_view(f"{run_url}/api/state", view)
                ready = fetch(url)
                worst = max(worst, ready)
                note = (f"complete {time.perf_counter() - started:.1f} s after the first request "
                        f"({status['done']} {'steps' if view == 'training' else 'evaluations'}); then the page "
                        f"loads in {ready:.3f} s")
            print(f"{name:<24} {cold:8.3f} {warm:8.3f}   {note}")
        server.shutdown()
        verdict = "met" if worst < 1.0 else "missed"
        print(f"\nslowest load: {worst:.3f} s; target under 1 s per page: {verdict}")
        return 0 if worst < 1.0 else 1
    finally:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
