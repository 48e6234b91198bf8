"""The `kernelsmith` command: devices, tasks, eval, evolve, report, export, kernelbench.

Each subcommand is a `cmd_<name>(args) -> int` function; `main()` parses the arguments and maps every error
(kernelsmith's, a bad input's, a broken store's) to one line, `kernelsmith <command>: <message>`, and a non-zero
exit status; KERNELSMITH_DEBUG=1 shows the traceback instead.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Callable, List, Optional


def _core():
    # Imported lazily so that `kernelsmith --version` and argument errors stay fast.
    import kernelsmith

    return kernelsmith


def _language_availability(language, backend_available: bool):
    """(ok, reason) for running candidates of one language here: its backend (whose own entry says why it is
    unavailable), and for Triton the triton package that compiles it (kernelsmith.triton_compile.availability(),
    which needs no GPU)."""
    if language.name == "triton":
        from kernelsmith import triton_compile

        ok, reason = triton_compile.availability()
        if not ok:
            return False, reason
        if not backend_available:
            return False, f"{reason} is installed, but the {language.backend} backend is unavailable"
        return True, reason
    if not backend_available:
        return False, f"the {language.backend} backend is unavailable"
    return True, ""


def _languages_of(ks, backend) -> list:
    """The kernel languages a backend runs, with whether each is available here and why not."""
    languages = []
    for language in ks.kernel_languages():
        if language.backend != backend.name:
            continue
        ok, reason = _language_availability(language, backend.available)
        languages.append({"name": language.name, "label": language.prompt_label, "available": ok, "reason": reason})
    return languages


def cmd_devices(args: argparse.Namespace) -> int:
    ks = _core()
    backends = ks.devices()
    if args.json:
        # The document of devices_json(), with the languages each backend runs added to its entry.
        document = json.loads(ks.devices_json())
        for entry, backend in zip(document.get("backends", []), backends):
            entry["languages"] = _languages_of(ks, backend)
        document["sandbox"] = _sandbox_document(ks.sandbox_status())
        print(json.dumps(document, indent=2))
        return 0
    _print_sandbox(ks.sandbox_status())
    for backend in backends:
        if backend.available:
            print(f"{backend.name}: available")
        else:
            compile_note = " (compiling works)" if backend.can_compile else ""
            print(f"{backend.name}: unavailable{compile_note}: {backend.reason}")
        for detail in backend.details:
            print(f"  {detail}")
        for device in backend.devices:
            memory_gib = device.global_memory_bytes / 2**30
            print(
                f"  [{device.index}] {device.name} ({device.architecture}): "
                f"{device.compute_units} compute units, {memory_gib:.1f} GiB, "
                f"L2 {device.l2_bytes / 2**20:.1f} MiB, warp {device.warp_size}"
            )
        languages = _languages_of(ks, backend)
        if languages:
            print("  languages: " + ", ".join(language["name"] for language in languages))
        for language in languages:
            # The backend's own language is as available as the backend; a front end (Triton) says more.
            if language["name"] == backend.name:
                continue
            state = "available" if language["available"] else "unavailable"
            print(f"    {language['name']}: {state}" + (f" ({language['reason']})" if language["reason"] else ""))
    return 0


def _sandbox_document(status) -> dict:
    """The sandbox's status as JSON (docs/security.md)."""
    return {"enabled": status.enabled, "complete": status.complete(), "reason": status.reason,
            "launcher": status.launcher,
            "protections": [{"name": p.name, "on": p.on, "required": p.required, "detail": p.detail}
                            for p in status.protections]}


def _print_sandbox(status) -> None:
    """What confines untrusted code here: each protection, and why one is off (docs/security.md)."""
    if not status.enabled:
        print(f"sandbox: OFF: {status.reason}")
        return
    print("sandbox: " + ("complete" if status.complete() else "INCOMPLETE: required protections are off"))
    for protection in status.protections:
        state = "on " if protection.on else ("OFF" if protection.required else "off")
        print(f"  {protection.name:<10} {state}  {protection.detail}")


def _backend_for_language(ks, language_name: str, requested: str) -> str:
    """The backend that runs candidates in `language_name`, checked against --backend and against what this
    machine has: an unknown language, a language of another backend, a backend this machine lacks and (for
    Triton) a missing triton package are errors that say so."""
    language = ks.kernel_language(language_name)  # ValidationError naming the known languages
    if language.host_code:
        return requested  # a ModelNew file runs on any backend, against the task's PyTorch oracle
    if requested not in ("auto", language.backend):
        raise ks.ValidationError(f"{language.name} runs on the {language.backend} backend; --backend {requested} "
                                 f"was given (drop --backend, or give --backend {language.backend})")
    backend = next((b for b in ks.devices() if b.name == language.backend), None)
    if backend is None or not backend.available:
        why = backend.reason if backend is not None else "this build has no such backend"
        raise ks.BackendUnavailableError(
            f"{language.prompt_label} candidates need the {language.backend} backend, and this machine has none: "
            f"{why}")
    ok, reason = _language_availability(language, backend.available)
    if not ok:
        raise ks.BackendUnavailableError(f"{language.prompt_label} candidates cannot run here: {reason}")
    return language.backend


def _task_summary(task) -> dict:
    sizes = dict(task.timing_sizes.sizes)
    return {
        "name": task.name,
        "description": task.description,
        "languages": list(task.languages()),
        "sizes": sizes,
        "check_sizes": [{"name": c.name, "sizes": dict(c.sizes)} for c in task.check_sizes],
        "tensors": [
            {
                "name": t.name,
                "dtype": str(t.dtype).split(".")[-1],
                "shape": list(t.shape),
                "role": str(t.role).split(".")[-1],
            }
            for t in task.tensors
        ],
        "work": {
            "flops": task.work.flops,
            "bytes": task.work.bytes,
            "flops_at_timing_sizes": task.flops(sizes),
            "bytes_at_timing_sizes": task.min_bytes(sizes),
        },
        "seeds": sorted(task.seeds),
        "pytorch": task.pytorch,
        "folder": str(task.folder),
    }


def cmd_tasks(args: argparse.Namespace) -> int:
    ks = _core()
    tasks = [ks.Task.load(name) for name in ks.builtin_task_names()]
    if args.json:
        print(json.dumps({"tasks": [_task_summary(t) for t in tasks]}, indent=2))
        return 0
    for task in tasks:
        sizes = ", ".join(f"{k}={v}" for k, v in task.timing_sizes.sizes.items())
        print(f"{task.name:<16} [{', '.join(task.languages())}] {sizes}: {task.description}")
    return 0


def cmd_eval(args: argparse.Namespace) -> int:
    """Evaluates one candidate (or the task's reference) and prints the feedback.

    Exit status: 0 when the evaluation is ok, 1 when the candidate failed (the evaluation says why) or
    when no backend can run here (the reason goes to stderr).
    """
    ks = _core()
    path = args.file or args.candidate
    if bool(path) == bool(args.reference):
        raise ks.ValidationError("give a candidate FILE (or --candidate FILE), or --reference, but not both")
    task = ks.Task.load(args.task)
    backend = args.backend
    language = args.language
    if path and not language:
        language = ks.language_for_extension(path)
        if language == "triton" and os.path.isfile(path):
            with open(path, encoding="utf-8", errors="replace") as handle:
                if ks.defines_model_new(handle.read()):
                    language = "pytorch"  # KernelBench's format, not a Triton file
        if not language:
            names = ", ".join(l.name for l in ks.kernel_languages())
            raise ks.ValidationError(f"cannot tell the kernel language of '{path}' from its extension; give "
                                     f"--language ({names})")
    if language:
        backend = _backend_for_language(ks, language, args.backend)
    options = ks.EvaluatorOptions()
    options.backend = backend
    options.device = args.device
    options.mode = args.mode
    options.seed = args.seed
    options.require_sandbox = args.require_sandbox
    evaluator = ks.create_evaluator(options)
    if args.reference:
        # The kernel language of each backend is its own name.
        language = evaluator.backend_name()
        references = dict(task.references)
        if language not in references:
            raise ks.NotFoundError(
                f"task {task.name} has no {language} reference (it has: {', '.join(sorted(references)) or 'none'})"
            )
        candidate = ks.Candidate(language, references[language].source, ks.Lineage(origin="reference"))
    else:
        candidate = ks.Candidate.from_file(path, language)
    evaluation = evaluator.evaluate(task, candidate)
    if args.json:
        print(evaluation.to_json())
    else:
        print(evaluation.to_prompt_text())
        for protection in evaluation.integrity.unconfined:
            print(f"sandbox protection off: {protection}")
    return 0 if evaluation.ok else 1


def _make_mutator(ks, args: argparse.Namespace):
    skills = getattr(args, "skills", None)
    if args.mutator == "param":
        if skills:
            raise ks.ValidationError("--skills adds skills to the LLM mutator's prompts; the parameter mutator writes "
                                     "no prompt (use --mutator llm)")
        return ks.ParamMutator()
    if not args.llm_url or not args.model:
        raise ks.ValidationError(
            "--mutator llm needs --llm-url (an OpenAI-compatible base URL, e.g. http://127.0.0.1:8000/v1) "
            "and --model (e.g. gpt-4o-mini); the API key is read from --api-key-env"
        )
    from kernelsmith.llm import mutator_from_cli

    # Several comma-separated models make an ensemble; its bandit learns from each step's outcome.
    options = {"timeout": args.llm_timeout, "max_retries": args.llm_retries}
    if skills:
        options["skills"] = skills  # loaded after the built-in bank
    mutator, args.llm_feedback = mutator_from_cli(args.llm_url, args.model, args.api_key_env, seed=args.seed,
                                                  **options)
    return mutator


def _check_store(ks, args: argparse.Namespace, task_name: str) -> str:
    """Checks --db against --resume before anything starts; returns a note on what the run will do.

    --resume needs a store holding a run of the task (else a NotFoundError naming the path and how to
    start a new run); without --resume a new run is added to the store, also one that holds runs."""
    import os

    path = args.db
    fresh = "to start a new run, drop --resume"
    if args.resume:
        if not os.path.exists(path):
            raise ks.NotFoundError(f"--resume: no run store at '{path}', so there is no run to resume ({fresh})")
        if os.path.getsize(path) == 0:
            raise ks.NotFoundError(f"--resume: '{path}' is an empty file, not a run store with a run to resume "
                                   f"({fresh})")
    elif not os.path.exists(path) or os.path.getsize(path) == 0:
        return "new store"
    runs = ks.RunStore(path, read_only=True).runs()  # StoreError for a file that is not a run store
    of_task = [run for run in runs if run.task_name == task_name]
    if args.resume:
        if not of_task:
            held = ", ".join(sorted({run.task_name for run in runs})) or "none"
            raise ks.NotFoundError(f"--resume: the run store '{path}' holds no run of task {task_name} (runs of "
                                   f"tasks: {held}); {fresh}")
        latest = of_task[-1]
        return f"resuming run {latest.id} ({latest.status}, {latest.stop_reason or 'no stop reason'})"
    if of_task:
        return (f"a new run beside the {len(runs)} run(s) in the store; --resume continues run {of_task[-1].id} "
                f"instead")
    return f"a new run beside the {len(runs)} run(s) in the store"


def _program_summary(program) -> dict:
    return {
        "id": program.id,
        "speedup": program.evaluation.speedup,
        "fitness": program.fitness,
        "status": str(program.evaluation.status).split(".")[-1],
        "island": program.island,
        "generation": program.generation,
        "origin": program.candidate.lineage.origin,
    }


def _mark_aborted(run_id: int, db: str) -> None:
    """A second Ctrl-C leaves at once, without waiting for the engine: the run is marked stopped ("aborted")
    so that no reader takes it for one still running. Steps in flight are lost; --resume continues from the
    stored programs."""
    if not run_id:
        return
    ks = _core()
    try:
        ks.RunStore(db).set_run_status(run_id, "stopped", "aborted")
    except ks.Error as error:  # the engine may hold the store; the run then stays "running"
        print(f"kernelsmith: could not mark run {run_id} aborted in {db}: {error}", file=sys.stderr)


def _check_evolution_options(ks, args: argparse.Namespace) -> None:
    """The checks of the options every evolution takes (evolve, kernelbench run), before anything starts."""
    if args.budget < 1:
        raise ks.ValidationError(f"--budget {args.budget}: give at least 1 evaluation")
    if not args.llm_timeout > 0:
        raise ks.ValidationError(f"--llm-timeout {args.llm_timeout}: give a positive number of seconds")
    if args.llm_retries < 0:
        raise ks.ValidationError(f"--llm-retries {args.llm_retries}: give 0 or more retries")
    if args.experience < 0:
        raise ks.ValidationError(f"--experience {args.experience}: give 0 or more items")


def _create_evaluator(ks, args: argparse.Namespace, backend: str):
    """The built-in evaluator on --device or the --devices set, or with --ray a RayEvaluator whose actors
    each hold one (docs/distributed.md)."""
    options = ks.EvaluatorOptions()
    options.backend = backend
    options.device = args.device
    options.seed = args.seed
    options.require_sandbox = getattr(args, "require_sandbox", False)
    devices = getattr(args, "devices", None)
    ray_address = getattr(args, "ray", None)
    if ray_address:
        if devices:
            raise ks.ValidationError("--devices is for the evaluator on this host; with --ray every actor holds one "
                                     "device (give --ray-actors to choose how many)")
        from kernelsmith.distributed import RayEvaluator

        return RayEvaluator(ray_address, options, actors=args.ray_actors)
    if getattr(args, "ray_actors", None):
        raise ks.ValidationError("--ray-actors needs --ray ADDRESS")
    options.devices = devices or ""
    return ks.create_evaluator(options)


def _evaluator_label(evaluator) -> str:
    """The backend and device an evolution runs on, for its first line (with the devices or actors it uses)."""
    label = f"{evaluator.backend_name()} '{evaluator.device_name()}'"
    width = evaluator.concurrency()
    if width > 1:
        label += f" ({width} {'Ray actors' if type(evaluator).__name__ == 'RayEvaluator' else 'workers'})"
    return label


def _evolution_config(ks, args: argparse.Namespace, resume: bool):
    """The EvolutionConfig of the evolution options (evolve, kernelbench run)."""
    config = ks.EvolutionConfig()
    config.budget = args.budget
    config.db_path = args.db
    config.seed = args.seed
    config.resume = resume
    config.islands = args.islands
    config.mutations_in_flight = args.in_flight
    config.wall_seconds = args.wall_time
    config.target_speedup = args.target_speedup
    config.language = args.language or ""
    config.experience = args.experience
    config.memory_path = args.memory or ""
    config.max_llm_calls = args.max_llm_calls
    config.max_llm_tokens = args.max_llm_tokens
    config.max_llm_cost = args.max_llm_cost
    config.llm_prices = _llm_prices(ks, args.llm_price or [])
    return config


def _llm_prices(ks, specs) -> dict:
    """--llm-price MODEL=PROMPT,COMPLETION (per 1,000 tokens; MODEL '*' for any model) as EvolutionConfig.llm_prices."""
    prices = {}
    for spec in specs:
        model, _, values = spec.partition("=")
        parts = values.split(",")
        try:
            if not model or len(parts) != 2:
                raise ValueError
            prices[model] = ks.LlmPrice(float(parts[0]), float(parts[1]))
        except ValueError:
            raise SystemExit(f"kernelsmith: --llm-price {spec!r}: write MODEL=PROMPT,COMPLETION, the prices of 1,000 "
                             "prompt and completion tokens (MODEL '*' for any model), e.g. --llm-price gpt-4o=0.0025,0.01")
    return prices


def _spend_text(spend) -> str:
    """What a run has spent on a model, for a progress line: '' before its first model call."""
    if not spend.calls:
        return ""
    text = f"  llm {spend.calls} calls {spend.tokens} tokens"
    return text + (f" cost {spend.cost:.4f}" if spend.cost else "")


def _progress_printer(args: argparse.Namespace, log, prefix: str = ""):
    """The progress callback that prints one line per step to `log` (each line starting with `prefix`). Its best is
    the best confirmed speedup, read back from --db (kernelsmith.store.ConfirmedBest), not the engine's."""
    from kernelsmith.store import ConfirmedBest

    best = ConfirmedBest(args.db)

    def report(progress) -> None:
        if getattr(args, "llm_feedback", None):
            args.llm_feedback(progress)
        if progress.program_id:
            status = str(progress.status).split(".")[-1]
            mark = " *" if best.observe(progress.run_id, progress.program_id, status) else ""
            print(
                f"{prefix}[{progress.evaluations}/{progress.budget}] {progress.mutation:<10} island {progress.island} "
                f"{progress.program_id} {status:<14} {progress.speedup:7.3f}x  {best.text()}{mark}"
                f"{_spend_text(progress.llm_spend)}",
                file=log,
                flush=True,
            )
        else:
            print(
                f"{prefix}[{progress.evaluations}/{progress.budget}] {progress.mutation:<10} island {progress.island} "
                f"no candidate: {progress.message}",
                file=log,
                flush=True,
            )

    return report


def _run_interruptibly(evolution, db: str, how_to_continue: str):
    """Runs the evolution on a thread; the first Ctrl-C stops it cleanly, a second one marks the run aborted
    and raises KeyboardInterrupt. Returns (EvolutionResult, interrupted); re-raises what run() raised."""
    import threading

    # run() releases the GIL and runs in a thread; the main thread stays free to take Ctrl-C.
    # An Event, not Thread.join(): a join interrupted by Ctrl-C can leave is_alive() wrong.
    outcome: dict = {}
    finished = threading.Event()

    def run() -> None:
        try:
            outcome["result"] = evolution.run()
        except BaseException as error:  # re-raised on the main thread
            outcome["error"] = error
        finally:
            finished.set()

    thread = threading.Thread(target=run, name="kernelsmith-evolve", daemon=True)
    thread.start()
    interrupted = False
    while not finished.is_set():
        try:
            finished.wait(0.2)
        except KeyboardInterrupt:
            if interrupted:
                _mark_aborted(evolution.run_id, db)
                raise
            interrupted = True
            print(
                "kernelsmith: stopping; mutator calls in flight are cancelled and the run ends within a few seconds "
                f"(Ctrl-C again to abort); {how_to_continue}",
                file=sys.stderr,
                flush=True,
            )
            evolution.stop()
    if "error" in outcome:
        raise outcome["error"]
    return outcome["result"], interrupted


def prepare_evolution(args: argparse.Namespace):
    """The parts of an evolve run, checked before anything starts: (task, evaluator, mutator, EvolutionConfig, a note
    on what the run does to --db). The config carries the run's effective settings as its run file."""
    from kernelsmith.run_file import effective_settings

    ks = _core()
    if not args.task:
        raise ks.ValidationError("no task: give --task (a built-in task's name or a task folder), or `task = ...` "
                                 "in the --config run file")
    _check_evolution_options(ks, args)
    task = ks.Task.load(args.task)
    backend = args.backend
    if args.language:
        backend = _backend_for_language(ks, args.language, args.backend)
        if args.language not in task.seeds and args.mutator == "param":
            held = ", ".join(sorted(task.seeds)) or "none"
            raise ks.NotFoundError(f"task {task.name} has no {args.language} seed (its seeds: {held}); the parameter "
                                   f"mutator varies a seed's @tune values, so give a task with a {args.language} seed "
                                   f"or use --mutator llm, which writes {args.language} from the reference")
    store_note = _check_store(ks, args, task.name)
    mutator = _make_mutator(ks, args)  # before the evaluator: a missing LLM option fails at once
    evaluator = _create_evaluator(ks, args, backend)
    config = _evolution_config(ks, args, getattr(args, "resume", False))
    config.run_file = json.dumps(effective_settings(args))
    return task, evaluator, mutator, config, store_note


def cmd_evolve(args: argparse.Namespace) -> int:
    """Runs (or resumes) an evolution; Ctrl-C stops it cleanly, leaving the store resumable."""
    import time

    ks = _core()
    task, evaluator, mutator, config, store_note = prepare_evolution(args)
    evolution = ks.Evolution(task, evaluator, mutator, config)

    # Progress goes to stderr with --json, so that stdout holds only the result document.
    log = sys.stderr if args.json else sys.stdout
    evolution.on_progress(_progress_printer(args, log))
    print(
        f"evolving {task.name}{f' in {args.language}' if args.language else ''} on {_evaluator_label(evaluator)} "
        f"with the {mutator.name()} mutator: budget {args.budget} evaluations, {args.islands} islands, store {args.db} "
        f"({store_note})",
        file=log,
        flush=True,
    )
    started = time.monotonic()
    result, interrupted = _run_interruptibly(evolution, args.db, "resume with --resume")
    seconds = time.monotonic() - started
    best = result.best
    confirmed = _confirmed_best(result.db_path, result.run_id)
    document = {
        "task": task.name,
        "run_id": result.run_id,
        "db": result.db_path,
        "stop_reason": result.stop_reason,
        "stop_detail": result.stop_detail,
        # The best confirmed program (docs/evaluation.md#confirmed-evaluations); the engine's own best, which may
        # not be confirmed, is "best", and the faster evaluations that are not confirmed are listed apart.
        "best_speedup": confirmed["speedup"],
        "best_program_id": confirmed["program_id"],
        "unconfirmed": confirmed["unconfirmed"],
        "best": _program_summary(best) if best else None,
        "evaluations": result.evaluations,
        "session_evaluations": result.session_evaluations,
        "steps": result.steps,
        "failed_proposals": result.failed_proposals,
        "duplicates": result.duplicates,
        "near_duplicates": result.near_duplicates,
        "migrations": result.migrations,
        "pending": result.pending,
        "abandoned": result.abandoned,
        "seconds": seconds,
        "evaluator_seconds": result.evaluator_seconds,
        "mutator_seconds": result.mutator_seconds,
        "engine_share": result.engine_share,
    }
    if args.json:
        print(json.dumps(document, indent=2))
    else:
        print(f"stopped: {result.stop_reason} after {result.evaluations} evaluations in {seconds:.1f} s")
        if result.stop_detail:
            print(f"  ({result.stop_detail})")
        print(_confirmed_best_text(confirmed))
        if result.abandoned:
            print(f"{result.abandoned} proposals abandoned: their mutator calls were still running at the deadline "
                  "(recorded as steps)")
        if result.pending:
            print(f"{result.pending} candidates wait for evaluation: continue with --resume")
        print(f"run {result.run_id} stored in {result.db_path}; see `kernelsmith report --db {result.db_path}`")
    return 130 if interrupted else 0


def _confirmed_history(reader, run_id: int) -> list:
    """The confirmed best speedup over evaluations: the points where it rose, plus the last evaluation (the
    replay of the notebook's and the web view's curves: only a confirmed evaluation raises the best)."""
    from kernelsmith.replay import ProgressReplay

    replay = ProgressReplay()
    improvements, last, previous = [], None, 0.0
    for row in reader.progress_rows(run_id):
        point = replay.add(row)
        last = point
        if point.best_speedup > previous:
            improvements.append({"evaluation": point.sequence + 1, "best_speedup": point.best_speedup,
                                 "program_id": point.program_id})
            previous = point.best_speedup
    if last is not None and (not improvements or improvements[-1]["evaluation"] != last.sequence + 1):
        best_id = improvements[-1]["program_id"] if improvements else None
        improvements.append({"evaluation": last.sequence + 1, "best_speedup": previous, "program_id": best_id})
    return improvements


def _confirmed_best(db: str, run_id: int) -> dict:
    """The run's best confirmed program (speedup and program_id: 0.0 and None when none is confirmed) and the faster
    correct evaluations that are not confirmed (unconfirmed: program_id, speedup and reasons of each, at most 3)."""
    from kernelsmith import store as run_store

    reader = run_store.RunStoreReader(db)
    best = reader.best_evaluation(run_id) if run_id else None
    speedup = float(best["speedup"]) if best else 0.0
    unconfirmed = reader.unconfirmed_above(run_id, speedup, 3) if run_id else []
    return {"speedup": speedup, "program_id": best["program_id"] if best else None,
            "unconfirmed": [{key: entry[key] for key in ("program_id", "speedup", "reasons")} for entry in unconfirmed]}


def _confirmed_best_text(confirmed: dict, separator: str = "\n  ") -> str:
    """'best: 6.900x confirmed, program ...' and, apart (after `separator`), each faster evaluation that is not
    confirmed, with why."""
    if confirmed["program_id"]:
        line = f"best: {confirmed['speedup']:.3f}x confirmed, program {confirmed['program_id']}"
    else:
        line = "best: no confirmed program (ok, strict mode, no doubt-casting flag)"
    for entry in confirmed["unconfirmed"]:
        line += (f"{separator}not confirmed, not counted: {entry['speedup']:.3f}x, program {entry['program_id']} "
                 f"({', '.join(entry['reasons'])})")
    return line


def _llm_spend_summary(ks, run, steps) -> dict:
    """What a run spent on a model, counted as the engine counts it (LlmSpend): its steps with a recorded prompt,
    their reported tokens, and their cost at the run's own llm_prices."""
    config = ks.EvolutionConfig.from_json(run.config_json)
    calls = [step for step in steps if step.prompt]
    return {
        "calls": len(calls),
        "prompt_tokens": sum(step.prompt_tokens for step in calls),
        "completion_tokens": sum(step.completion_tokens for step in calls),
        "cost": sum(config.llm_cost(step.model, step.prompt_tokens, step.completion_tokens) for step in calls),
        "priced": bool(config.llm_prices),
    }


def cmd_report(args: argparse.Namespace) -> int:
    """Summarises the latest run of a store: the best confirmed programs, the lineage of the best, the confirmed
    best speedup over evaluations, and apart from them the faster evaluations that are not confirmed."""
    from kernelsmith import store as run_store

    ks = _core()
    if args.config:
        return _print_run_file(args.db)
    if not os.path.exists(args.db):
        raise ks.NotFoundError(f"no run store at {args.db}: give the --db file that `kernelsmith evolve` wrote")
    run = ks.RunStore(args.db, read_only=True).latest_run()  # StoreError for a file that is not a run store
    if run is None:
        raise ks.NotFoundError(f"the run store {args.db} holds no run yet")
    reader = run_store.RunStoreReader(args.db)
    evaluations = reader.evaluation_count(run.id)
    steps = reader.steps(run.id)
    failures = sum(1 for step in steps if step.failure)
    pending = sum(1 for step in steps if step.pending)
    abandoned = [step for step in steps if step.abandoned_by]
    llm = _llm_attempt_summary(steps)
    llm.update(_llm_spend_summary(ks, run, steps))
    best = reader.evaluated_programs(run.id, confirmed_only=True, best_first=True, limit=5)
    unconfirmed = reader.unconfirmed_above(run.id, best[0]["speedup"] if best else 0.0, 5)
    lineage = []
    if best:
        for node in reader.ancestors(run.id, best[0]["id"]):
            lineage.append({"id": node["id"], "origin": node["origin"], "generation": node["generation"],
                            "island": node["island"], "speedup": node["speedup"],
                            "status": node["status"] or "pending"})
    document = {
        "db": args.db,
        "run": {
            "id": run.id,
            "task": run.task_name,
            "status": run.status,
            "stop_reason": run.stop_reason,
            "error": run.error,
            "backend": run.backend,
            "device": run.device,
            "mutator": run.mutator,
            "language": run.language,
            "seed": run.seed,
            "started": run.started,
            "finished": run.finished,
        },
        "evaluations": evaluations,
        "steps": len(steps),
        "failed_steps": failures,
        "pending": pending,
        "abandoned": len(abandoned),
        "llm": llm,
        # Confirmed evaluations only (docs/evaluation.md#confirmed-evaluations); the faster ones that are not
        # confirmed are listed apart, with why.
        "best": [
            {
                "id": record["id"],
                "speedup": record["speedup"],
                "fitness": record["fitness"],
                "evaluation": record["sequence"] + 1,
                "message": record["message"],
            }
            for record in best
        ],
        "unconfirmed": [
            {"id": entry["program_id"], "speedup": entry["speedup"], "fitness": entry["fitness"],
             "evaluation": entry["sequence"] + 1, "mode": entry["mode"], "flags": entry["flags"],
             "reasons": entry["reasons"]}
            for entry in unconfirmed
        ],
        "lineage": lineage,
        "history": _confirmed_history(reader, run.id),
    }
    if args.json:
        print(json.dumps(document, indent=2))
        return 0
    print(f"run {run.id} of {run.task_name}: {run.status}"
          + (f" ({run.stop_reason})" if run.stop_reason else "")
          + (f", error: {run.error}" if run.error else ""))
    print(f"  {run.mutator} mutator on {run.backend} '{run.device}', seed {run.seed}")
    print(f"  {evaluations} evaluations, {len(steps)} steps ({failures} without a candidate), {pending} pending")
    if abandoned:
        reasons = ", ".join(sorted({step.abandoned_by for step in abandoned}))
        print(f"  {len(abandoned)} steps abandoned at the deadline ({reasons}): their mutator calls were cancelled")
    if llm["requests"]:
        statuses = ", ".join(f"{status} x{count}" for status, count in llm["statuses"].items())
        print(f"  LLM: {llm['requests']} requests, {llm['attempts']} attempts ({llm['retries']} retries; {statuses}), "
              f"{llm['seconds']:.1f} s waiting")
    if llm["calls"]:
        print(f"  LLM spend: {llm['calls']} calls, {llm['prompt_tokens']} prompt + {llm['completion_tokens']} "
              f"completion tokens" + (f", cost {llm['cost']:.4f}" if llm["priced"] else " (no prices given)"))
    if best:
        print("best confirmed programs (ok, strict mode, no doubt-casting flag):")
        for entry in document["best"]:
            print(f"  {entry['id']}  {entry['speedup']:.3f}x  (evaluation {entry['evaluation']})")
    else:
        print("no confirmed program yet (ok, strict mode, no doubt-casting flag)")
    if unconfirmed:
        print("not confirmed, so not counted" + (" (faster than the best confirmed)" if best else "") + ":")
        for entry in document["unconfirmed"]:
            print(f"  {entry['id']}  {entry['speedup']:.3f}x  (evaluation {entry['evaluation']}): "
                  f"{', '.join(entry['reasons'])}")
    if not best:
        return 0
    print("lineage of the best (newest first):")
    for entry in lineage:
        speedup = f"{entry['speedup']:.3f}x" if entry["speedup"] is not None else "-"
        print(f"  {entry['id']}  {entry['origin']:<10} generation {entry['generation']}  {speedup}  {entry['status']}")
    print("best confirmed speedup over evaluations:")
    for entry in document["history"]:
        print(f"  after {entry['evaluation']:>5}: {entry['best_speedup']:.3f}x")
    return 0


def _print_run_file(db: str) -> int:
    """report --config: the latest run's effective settings as a run file."""
    from kernelsmith.run_file import settings_from_store, to_toml

    run = _core().RunStore(db, read_only=True).latest_run() if os.path.exists(db) else None
    settings = settings_from_store(db, run.id if run else None)
    print(to_toml(settings, f"run {run.id} of {run.task_name}, stored in {db}\n"
                            "`kernelsmith evolve --config FILE` starts it again (as a new run of that store)"), end="")
    return 0


def _llm_attempt_summary(steps) -> dict:
    """The LLM requests of a run's steps: requests, attempts, retries, how many attempts ended in each HTTP
    status or failure kind ("timeout", "connection error", "cancelled", ...), and the seconds they took."""
    statuses: dict = {}
    requests = attempts = 0
    seconds = 0.0
    for step in steps:
        if not step.llm_attempts:
            continue
        requests += 1
        for attempt in step.llm_attempts:
            attempts += 1
            seconds += attempt.seconds
            kind = str(attempt.http_status) if attempt.http_status else attempt.error.split(":", 1)[0] or "unknown"
            statuses[kind] = statuses.get(kind, 0) + 1
    return {"requests": requests, "attempts": attempts, "retries": attempts - requests,
            "statuses": dict(sorted(statuses.items())), "seconds": seconds}


def cmd_export(args: argparse.Namespace) -> int:
    try:
        return _export(args)
    except (ValueError, OSError) as error:  # bad options or an unwritable --out: one line, no traceback
        print(f"kernelsmith export: {error}", file=sys.stderr)
        return 2


def _export(args: argparse.Namespace) -> int:
    from kernelsmith import training

    if args.format == "sft":
        options = training.SftOptions(
            threshold=args.threshold,
            first_steps=args.first_steps,
            keep_repairs=args.keep_repairs,
            dedup=not args.no_dedup,
            leakage_threshold=None if args.leakage_threshold < 0 else args.leakage_threshold,
            leakage_ngram=args.leakage_ngram,
            max_per_task=args.max_per_task,
            max_per_difficulty=args.max_per_difficulty,
            style=args.style,
        )
        if args.disqualify_flag:
            options.disqualifying_flags = tuple(args.disqualify_flag)
        export = training.export_sft(args.db, args.out, options, run_ids=args.run)
    else:
        shaping = args.shaping
        if shaping.lstrip().startswith("{"):
            from kernelsmith import _inputs

            shaping = _inputs.loads(shaping, "--shaping")
        if args.disqualify_flag:
            shaping = training.RewardShaping.from_spec(shaping)
            shaping.disqualifying_flags = tuple(args.disqualify_flag)
        options = training.RlOptions(
            shaping=shaping,
            min_headroom=args.min_headroom,
            min_group_size=args.min_group_size,
            require_variance=args.require_variance,
            layout=args.layout,
            max_per_task=args.max_per_task,
            dedup=not args.no_dedup,
        )
        export = training.export_rl(args.db, args.out, options, run_ids=args.run)
    if args.json:
        print(json.dumps(export.report.as_dict(), indent=2))
    else:
        print(export.report.summary())
    return 0


def cmd_serve(args: argparse.Namespace) -> int:
    """Serves the read-only web view of the run stores (docs/web.md) until Ctrl-C."""
    try:
        from kernelsmith import web
    except ImportError as error:
        print(f"kernelsmith serve: {error}", file=sys.stderr)
        return 2
    if not 0 <= args.port <= 65535:
        print(f"kernelsmith serve: --port {args.port} is not a port number (0 to 65535; 0 picks a free one)",
              file=sys.stderr)
        return 2
    try:
        web.serve(args.db, host=args.host, port=args.port, announce=lambda line: print(line, flush=True))
    except OSError as error:  # the port is taken, or the address is not this machine's
        print(f"kernelsmith serve: cannot listen on {args.host}:{args.port} ({error}): pick another --port or --host",
              file=sys.stderr)
        return 1
    return 0


# ---- kernelsmith kernelbench import: KernelBench problems as tasks (docs/kernelbench.md)

_IMPORT_ROW = "{number:>4}  {task:<52} {status:<9} {tensors:<34} {sizes:<30} {reason}"


def _import_row(result) -> str:
    sizes = " ".join(f"{k}={v}" for k, v in result.sizes.items())
    tensors = " ".join(result.tensors)
    reason = result.reason if not result.imported else "; ".join(result.notes)
    return _IMPORT_ROW.format(number=result.number if result.number is not None else "?", task=result.task_name,
                              status=result.status, tensors=tensors[:33] + ("…" if len(tensors) > 33 else ""),
                              sizes=sizes[:29] + ("…" if len(sizes) > 29 else ""), reason=reason)


def cmd_kernelbench_import(args: argparse.Namespace) -> int:
    """Imports a KernelBench level folder: one task folder per problem under --out, a table of what became of
    each problem, and --out/import_report.json."""
    ks = _core()
    from kernelsmith.kernelbench import importer

    try:
        problems = importer.parse_problem_numbers(args.problems) if args.problems else None
        sizes = importer.parse_size_overrides(args.size)
        importer.check_resize(args.scale, sizes)
        files = importer.problem_files(args.dir, problems)
    except ValueError as error:
        raise ks.ValidationError(str(error)) from None
    if not files:
        which = f" numbered {args.problems}" if args.problems else ""
        raise ks.NotFoundError(f"{args.dir}: no KernelBench problem files{which} (<number>_<Name>.py)")
    # The table goes to stderr with --json, so that stdout holds only the report document.
    log = sys.stderr if args.json else sys.stdout
    header = [_IMPORT_ROW.format(number="#", task="task", status="status", tensors="tensors", sizes="sizes",
                                 reason="reason (refused) or notes")]

    def show(result) -> None:
        while header:  # once, before the first row: a refused option prints no table
            print(header.pop(), file=log, flush=True)
        print(_import_row(result), file=log, flush=True)
        if result.resized:
            print(f"{'':6}resized: {importer.resized_text(result)}", file=log, flush=True)

    try:
        results = importer.import_directory(args.dir, args.level, args.out, problems=problems, timeout=args.timeout,
                                            python=args.python, device=args.device, scale=args.scale, sizes=sizes,
                                            on_result=show)
    except ValueError as error:
        raise ks.ValidationError(str(error)) from None
    report = os.path.join(args.out, importer.IMPORT_REPORT)
    print(f"{importer.summary_line(results)}; the table is in {report}", file=log, flush=True)
    if args.json:
        with open(report, encoding="utf-8") as f:
            print(f.read(), end="")
    return 0


def _add_kernelbench_import_parser(commands) -> None:
    """`kernelsmith kernelbench import`, added to the `kernelbench` command's subcommands."""
    p = commands.add_parser("import", help="import KernelBench problem files as task folders, saying why a "
                                           "problem is refused")
    p.add_argument("dir", metavar="DIR", help="a KernelBench level folder (e.g. KernelBench/level1)")
    p.add_argument("--level", type=int, help="the level (default: from the folder's name, level1 -> 1)")
    p.add_argument("--problems", help="only these problem numbers, e.g. 1-20,33")
    p.add_argument("--out", required=True, metavar="TASKS_DIR", help="folder to write the task folders and "
                                                                     "import_report.json into")
    p.add_argument("--timeout", type=float, default=300.0, metavar="SECONDS",
                   help="seconds one problem may take before it is refused as hanging (default 300)")
    p.add_argument("--device", default="auto", help="where the problems run for real: cpu, cuda, cuda:N or auto "
                                                    "(default: the GPU when torch sees one)")
    p.add_argument("--python", help="the interpreter that runs the problems (default: $KERNELSMITH_PYTHON, else "
                                    "this one); it needs torch")
    p.add_argument("--scale", type=float, metavar="FACTOR",
                   help="timing sizes for this machine: every size constant of the problems times FACTOR, in (0, 1] "
                        "(e.g. 0.01 on a CPU); each resized problem says which sizes changed and its bytes")
    p.add_argument("--size", action="append", default=[], metavar="NAME=VALUE",
                   help="set the size constant NAME to VALUE in the problems that have it (repeatable; after "
                        "--scale)")
    p.add_argument("--json", action="store_true", help="print the report (kernelsmith.kernelbench_import/1)")
    p.set_defaults(handler=cmd_kernelbench_import)


# ---- kernelsmith kernelbench: KernelBench problems (docs/kernelbench.md)


def cmd_kernelbench_run(args: argparse.Namespace) -> int:
    from kernelsmith.kernelbench import runner

    return runner.run_problems(args)


def cmd_kernelbench_report(args: argparse.Namespace) -> int:
    from kernelsmith.kernelbench import report

    ks = _core()
    for path in args.db:
        if not os.path.exists(path):
            raise ks.NotFoundError(f"no run store at {path}: give the --db file that `kernelsmith kernelbench run` "
                                   f"(or `kernelsmith evolve`) wrote")
    built = report.build_report(args.db, level=args.level)
    print(report.format_json(built) if args.json else report.format_report(built))
    return 0


def cmd_kernelbench_judge(args: argparse.Namespace) -> int:
    """Judges a corpus of ModelNew files (docs/kernelbench-judge.md). Exit status 0 when every file was judged
    (whatever the verdicts), 1 when the corpus holds no file to judge."""
    from kernelsmith.kernelbench import judge
    from kernelsmith.kernelbench.runner import parse_baselines

    ks = _core()
    if not args.tasks and not args.kernelbench:
        raise ks.ValidationError("give --tasks DIR (the --out folder of `kernelsmith kernelbench import`) or "
                                 "--kernelbench PATH (a KernelBench checkout to import the problems from)")
    if args.jobs < 0:
        raise ks.ValidationError(f"--jobs {args.jobs}: give 0 (one per device) or more")
    try:
        corpus = judge.read_corpus(args.corpus)
    except FileNotFoundError as error:
        raise ks.NotFoundError(str(error)) from None
    options = ks.EvaluatorOptions()
    options.backend = _backend_for_language(ks, "pytorch", args.backend)
    # Every device of the backend unless one (--device) or a set (--devices) is named.
    options.device = args.device if args.device is not None else 0
    options.devices = args.devices or ("" if args.device is not None else "all")
    options.mode = args.mode
    options.seed = args.seed
    options.require_sandbox = args.require_sandbox
    baselines = parse_baselines(ks, args.baselines) if args.baselines else None
    log = sys.stderr if args.json else sys.stdout
    if corpus.not_understood:
        print(f"not understood (not named level_<L>_problem_<P>_sample_<S>_kernel.py), not judged: "
              f"{', '.join(corpus.not_understood)}", file=log, flush=True)
    if not corpus.entries:
        raise ks.NotFoundError(f"{args.corpus}: no ModelNew file to judge")
    print(f"kernelbench judge: {len(corpus.entries)} file(s) from {args.corpus}", file=log, flush=True)

    def progress(result) -> None:
        # Each result as it comes (completion order); the report after them keeps the corpus's order.
        if args.json:
            print(f"{result.verdict} {result.name}: {result.status}", file=log, flush=True)
        else:
            print("\n".join(judge.format_result(result)), file=log, flush=True)

    report = judge.judge(corpus, tasks=args.tasks, kernelbench=args.kernelbench, options=options, jobs=args.jobs,
                         allow_torch_only=args.allow_torch_only, baselines=baselines,
                         import_device=args.import_device, on_result=progress,
                         log=lambda line: print(line, file=log, flush=True))
    print(judge.format_json(report) if args.json else judge.format_report(report, with_results=False))
    return 0


def _add_kernelbench_judge_parser(commands) -> None:
    """`kernelsmith kernelbench judge`, added to the `kernelbench` command's subcommands."""
    p = commands.add_parser("judge", help="a verdict (trusted, flagged, rejected) on every ModelNew file of a corpus, "
                                          "and KernelBench's metrics over all files and over the trusted ones")
    p.add_argument("corpus", metavar="CORPUS", help="a JSONL file (one {\"name\", \"level\", \"problem_id\", "
                                                    "\"code\"} object per line) or a folder of "
                                                    "level_<L>_problem_<P>_sample_<S>_kernel.py files")
    p.add_argument("--tasks", metavar="TASKS_DIR", help="folder of imported problems (`kernelsmith kernelbench "
                                                        "import --out`); with --kernelbench, missing ones are "
                                                        "imported into it")
    p.add_argument("--kernelbench", metavar="PATH", help="a KernelBench checkout (holding level1, level2, ... or "
                                                         "KernelBench/level1, ...): the corpus's problems are "
                                                         "imported from it (into a temporary folder without --tasks)")
    p.add_argument("--import-device", default="auto", help="with --kernelbench: where the importer runs the "
                                                           "problems (cpu, cuda, cuda:N, auto)")
    p.add_argument("--backend", default="auto", choices=["auto", "cuda", "opencl", "maca"])
    p.add_argument("--device", type=int, help="only this device (default: every device of the backend)")
    p.add_argument("--devices", metavar="SET", help="the devices of this host to evaluate on, one worker each: "
                                                    "'all' (the default) or indices like 0,1,3")
    p.add_argument("--mode", default="strict", choices=["screen", "strict"],
                   help="strict (default): the final checks and timing; screen: cheaper, for a first look")
    p.add_argument("--jobs", type=int, default=0, metavar="N",
                   help="files evaluated at once (default 0: one per device worker)")
    p.add_argument("--allow-torch-only", action="store_true",
                   help="judge pure PyTorch rewrites as such: correct ones are flagged torch_only, not rejected")
    p.add_argument("--baselines", metavar="LIST", help="the PyTorch baselines to time, comma-separated, from eager, "
                                                       "compile, compile_max_autotune (default: the tasks' own)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--require-sandbox", action="store_true", help="refuse to run candidates unless every required "
                                                                  "protection of the sandbox holds here")
    p.add_argument("--json", action="store_true", help="print the report as JSON (kernelsmith.kernelbench_judge/1); "
                                                       "progress goes to stderr")
    p.set_defaults(handler=cmd_kernelbench_judge)


def _add_kernelbench_parser(sub) -> None:
    kernelbench = sub.add_parser("kernelbench", help="KernelBench problems: import them as tasks, run them, report "
                                                     "KernelBench's metrics, judge corpora of ModelNew files")
    commands = kernelbench.add_subparsers(dest="kernelbench_command", metavar="COMMAND")
    commands.required = True
    _add_kernelbench_import_parser(commands)
    _add_kernelbench_judge_parser(commands)

    p = commands.add_parser("run", help="evolve imported KernelBench problems one after another into one store")
    p.add_argument("--tasks", required=True, metavar="TASKS_DIR",
                   help="folder of imported problems (task folders named kb_l<level>_<number>_...)")
    p.add_argument("--level", type=int, help="only the problems of this level")
    p.add_argument("--problems", metavar="LIST",
                   help="only these problem numbers, e.g. 1-20,33 (of every level selected)")
    p.add_argument("--seeds", metavar="DIR",
                   help="seed files DIR/<task name>/seed.cu|seed.cl|seed.py for problems without a seed in the "
                        "language (e.g. examples/kernelbench)")
    p.add_argument("--baselines", metavar="LIST",
                   help="the PyTorch baselines to time for problems checked against PyTorch, e.g. eager,compile "
                        "(default: the task's oracle lists them, all of eager, compile, compile_max_autotune; eager "
                        "is always timed)")
    p.add_argument("--restart", action="store_true",
                   help="start a new run for every problem, also those already finished in --db (default: skip "
                        "finished problems, resume interrupted ones)")
    _add_evolution_arguments(p, per_problem=True)
    p.add_argument("--sweep-max-llm-calls", type=int, default=0, metavar="N",
                   help="stop the sweep, resumably, after this many model calls over all its problems (0: no cap)")
    p.add_argument("--sweep-max-llm-tokens", type=int, default=0, metavar="N",
                   help="stop the sweep once its model calls used this many tokens over all its problems (0: no cap)")
    p.add_argument("--sweep-max-llm-cost", type=float, default=0.0, metavar="COST",
                   help="stop the sweep once its model calls cost this much over all its problems, at --llm-price "
                        "(0: no cap)")
    p.add_argument("--json", action="store_true", help="print the final report as JSON (progress goes to stderr)")
    p.set_defaults(handler=cmd_kernelbench_run)

    p = commands.add_parser("report", help="KernelBench's metrics (fast_p, geomean speedups, correctness, amsr) "
                                           "and the per-problem table of run stores")
    p.add_argument("--db", action="append", required=True, help="run store (repeat for several)")
    p.add_argument("--level", type=int, help="only the problems of this level")
    p.add_argument("--json", action="store_true", help="print the report as JSON (kernelsmith.kernelbench_report/3)")
    p.set_defaults(handler=cmd_kernelbench_report)


def _add_evolution_arguments(p: argparse.ArgumentParser, per_problem: bool = False) -> None:
    """The options of an evolution, shared by evolve and kernelbench run (per_problem: the stop rules hold
    for each problem's run)."""
    each = " (for each problem)" if per_problem else ""
    p.add_argument("--backend", default="auto", choices=["auto", "cuda", "opencl", "maca"])
    p.add_argument("--device", type=int, default=0)
    p.add_argument("--devices", metavar="SET", help="evaluate on several devices of this host, one worker each: "
                                                    "'all' or indices such as 0,1,3 (default: --device alone)")
    p.add_argument("--ray", metavar="ADDRESS", help="evaluate on a Ray cluster, one actor per GPU (PoCL actors where "
                                                    "it has none): 'auto', host:port or ray://host:10001")
    p.add_argument("--ray-actors", type=int, metavar="N", help="with --ray: this many actors (default: one per GPU, "
                                                               "or one per CPU)")
    p.add_argument("--require-sandbox", action="store_true", help="refuse to run candidates unless every required protection of the sandbox holds here "
                        "(`kernelsmith devices` shows them; docs/security.md)")
    p.add_argument("--mutator", default="param", choices=["param", "llm"])
    p.add_argument("--language", help="kernel language of the candidates (default: the backend's own); triton "
                                      "evolves Triton candidates from the task's Triton seed on the cuda backend, "
                                      "the CUDA reference being the baseline")
    p.add_argument("--budget", type=int, default=32, help=f"number of evaluations{each}")
    p.add_argument("--db", default="kernelsmith-run.db", help="SQLite run store")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--islands", type=int, default=2)
    p.add_argument("--in-flight", type=int, default=0, help="mutations in flight (default 0: twice the devices or "
                                                            "Ray actors evaluating, so each has the next waiting)")
    p.add_argument("--wall-time", type=float, default=0.0, help=f"stop after this many seconds{each} (0: none)")
    p.add_argument("--target-speedup", type=float, default=0.0, help=f"stop at this speedup{each} (0: none)")
    p.add_argument("--max-llm-calls", type=int, default=0, metavar="N",
                   help=f"stop, resumably, after this many model calls{each} (0: no cap)")
    p.add_argument("--max-llm-tokens", type=int, default=0, metavar="N",
                   help=f"stop, resumably, once the model calls used this many tokens{each}, as the endpoint "
                        "reported them (0: no cap)")
    p.add_argument("--max-llm-cost", type=float, default=0.0, metavar="COST",
                   help=f"stop, resumably, once the model calls cost this much{each} at --llm-price (0: no cap)")
    p.add_argument("--llm-price", action="append", metavar="MODEL=PROMPT,COMPLETION",
                   help="price of 1,000 prompt and completion tokens of MODEL ('*': any model); repeatable")
    p.add_argument("--llm-url", help="OpenAI-compatible base URL (with --mutator llm)")
    p.add_argument("--model", help="model name (with --mutator llm)")
    p.add_argument("--api-key-env", default="OPENAI_API_KEY", help="variable holding the API key")
    p.add_argument("--llm-timeout", type=float, default=300.0, metavar="SECONDS",
                   help="seconds one LLM request attempt may wait for the server (default 300)")
    p.add_argument("--llm-retries", type=int, default=4, metavar="N",
                   help="retries of an LLM request after 429, 5xx, timeouts, dropped connections (default 4)")
    p.add_argument("--memory", metavar="FILE",
                   help="experience memory shared across runs and tasks, a SQLite file created when missing "
                        "(default: the run's memory lives in the process; docs/memory.md)")
    p.add_argument("--experience", type=int, default=3, metavar="N",
                   help="experience items retrieved into each mutation request (default 3; 0: none)")
    p.add_argument("--skills", action="append", metavar="FILE",
                   help="a skill bank file whose skills the LLM mutator's prompts show beside the built-in ones "
                        "(repeatable; docs/memory.md)")


class _PrintInstallFolder(argparse.Action):
    """--cmake-dir, --include-dir: print a folder of the installed C++ package and exit, as --version does."""

    def __init__(self, option_strings, dest, target: str, **kwargs):
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, **kwargs)
        self.target = target

    def __call__(self, parser, namespace, values, option_string=None):
        from kernelsmith import _cpp_package

        try:
            folder = getattr(_cpp_package, self.target)()
        except FileNotFoundError as error:
            parser.exit(1, f"{parser.prog} {option_string}: {error}\n")
        print(folder)  # on stdout, for $(python -m kernelsmith --cmake-dir); parser.exit writes to stderr
        parser.exit(0)


def _add_evolve_arguments(p: argparse.ArgumentParser) -> None:
    """The options of `kernelsmith evolve`: also the keys of a run file (kernelsmith.run_file)."""
    p.add_argument("--config", metavar="FILE",
                   help="a run file (.toml, or .yaml with PyYAML) whose keys are these options, '_' for '-'; flags "
                        "given here override it (docs/cli.md#run-files)")
    p.add_argument("--task", help="built-in task name or task folder/manifest path (required, here or in --config)")
    _add_evolution_arguments(p)
    p.add_argument("--resume", action="store_true",
                   help="continue the latest run of the task stored in --db (an error when there is none); "
                        "without it, a new run is added to --db")
    p.add_argument("--json", action="store_true", help="print the result as JSON")


def evolve_parser() -> argparse.ArgumentParser:
    """The options of `kernelsmith evolve` alone: the table of a run file's keys (kernelsmith.run_file)."""
    p = argparse.ArgumentParser(prog="kernelsmith evolve", add_help=False)
    _add_evolve_arguments(p)
    return p


def build_parser(run_file_settings: Optional[dict] = None) -> argparse.ArgumentParser:
    """The command line; `run_file_settings` (a checked run file) become the defaults of evolve's options."""
    from kernelsmith._version import version

    parser = argparse.ArgumentParser(
        prog="kernelsmith",
        description="Evolutionary, LLM-driven GPU kernel optimization.",
    )
    parser.add_argument("--version", action="version", version=f"kernelsmith {version()}")
    parser.add_argument("--cmake-dir", action=_PrintInstallFolder, target="get_cmake_dir",
                        help="print the folder of the CMake package for C++ programs (-Dkernelsmith_DIR=...) and exit")
    parser.add_argument("--include-dir", action=_PrintInstallFolder, target="get_include",
                        help="print the folder of the C++ headers (kernelsmith/kernelsmith.hpp) and exit")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True

    p = sub.add_parser("devices", help="list backends and devices, or why a backend is unavailable")
    p.add_argument("--json", action="store_true", help="print JSON (schema kernelsmith.devices/1)")
    p.set_defaults(handler=cmd_devices)

    p = sub.add_parser("tasks", help="list the built-in tasks")
    p.add_argument("--json", action="store_true", help='print {"tasks": [...]} as JSON')
    p.set_defaults(handler=cmd_tasks)

    p = sub.add_parser("eval", help="evaluate one candidate (or the task's reference)")
    p.add_argument("--task", required=True, help="built-in task name or task folder/manifest path")
    p.add_argument("file", nargs="?", metavar="FILE",
                   help="candidate source file (.cu, .cl, .py for Triton or a KernelBench ModelNew file); the "
                        "extension names the language")
    p.add_argument("--candidate", metavar="FILE", help="the same as FILE")
    p.add_argument("--reference", action="store_true", help="evaluate the task's reference")
    p.add_argument("--language", help="kernel language of FILE (cuda, opencl, maca, triton, pytorch); default: "
                                      "from the extension (a .py file that defines ModelNew is pytorch, another "
                                      "is triton). Triton runs on the cuda backend; pytorch (a KernelBench "
                                      "ModelNew file) on any, against a task with a PyTorch oracle")
    p.add_argument("--backend", default="auto", choices=["auto", "cuda", "opencl", "maca"])
    p.add_argument("--device", type=int, default=0)
    p.add_argument("--mode", default="strict", choices=["screen", "strict"])
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--require-sandbox", action="store_true", help="refuse to run candidates unless every required protection of the sandbox holds here "
                        "(`kernelsmith devices` shows them; docs/security.md)")
    p.add_argument("--json", action="store_true", help="print the Evaluation as JSON")
    p.set_defaults(handler=cmd_eval)

    p = sub.add_parser("evolve", help="evolve a task's kernel")
    _add_evolve_arguments(p)
    p.set_defaults(handler=cmd_evolve, **(run_file_settings or {}))

    p = sub.add_parser("report", help="summarise a run store")
    p.add_argument("--db", required=True)
    p.add_argument("--json", action="store_true")
    p.add_argument("--config", action="store_true",
                   help="print the run file of the latest run (TOML, flags applied): `kernelsmith evolve --config "
                        "FILE` starts the same run again (docs/cli.md#run-files)")
    p.set_defaults(handler=cmd_report)

    p = sub.add_parser("export", help="export training data (SFT/RL JSONL) from run stores")
    p.add_argument("--db", action="append", required=True, help="run store (repeat for several)")
    p.add_argument("--format", choices=["sft", "rl"], required=True)
    p.add_argument("--out", required=True, help="JSONL file to write")
    p.add_argument("--run", type=int, action="append", help="only this run id (repeatable; default: all)")
    p.add_argument("--threshold", type=float, default=1.0,
                   help="sft: keep a step when child/parent speedup exceeds this (default 1.0)")
    p.add_argument("--first-steps", default="keep", choices=["keep", "require_gain", "drop"],
                   help="sft: steps from the reference or seed (default keep when correct)")
    p.add_argument("--keep-repairs", action="store_true", help="sft: keep steps that fixed an incorrect parent")
    p.add_argument("--leakage-threshold", type=float, default=0.6,
                   help="sft: drop a step when more of its new code comes from one inspiration (negative: off)")
    p.add_argument("--leakage-ngram", type=int, default=8, help="sft: n-gram size of the leakage guard")
    p.add_argument("--max-per-task", type=int, help="at most this many records (rl: states) per task")
    p.add_argument("--max-per-difficulty", type=int, help="sft: at most this many records per difficulty")
    p.add_argument("--style", default="messages", choices=["messages", "prompt_completion", "kernelbench"],
                   help="sft record layout (default messages; kernelbench: a KernelBench-style prompt and a ModelNew "
                        "answer, for ModelNew children)")
    p.add_argument("--no-dedup", action="store_true", help="keep duplicate steps (sft) or states (rl)")
    p.add_argument("--disqualify-flag", action="append", metavar="FLAG",
                   help="integrity flag that disqualifies a child (repeatable; default: nondeterministic)")
    p.add_argument("--shaping", default="kernelsmith",
                   help="rl: reward preset (kernelsmith, kernelgym, kernelgym_tiered) or a JSON object of fields")
    p.add_argument("--min-headroom", type=float, default=1.05,
                   help="rl: keep a parent state with at least this much room to improve")
    p.add_argument("--min-group-size", type=int, default=1, help="rl: attempts a parent state needs")
    p.add_argument("--require-variance", action="store_true", help="rl: keep only groups whose rewards differ")
    p.add_argument("--layout", default="groups", choices=["groups", "completions"],
                   help="rl: one record per parent state or per attempt")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.set_defaults(handler=cmd_export)

    p = sub.add_parser("serve", help="a read-only web view of run stores that follows a run live (needs kernelsmith[web])")
    p.add_argument("--db", action="append", required=True, help="run store (repeat for several)")
    p.add_argument("--host", default="127.0.0.1",
                   help="address to listen on (default 127.0.0.1: this machine only; 0.0.0.0 lets anyone who reaches "
                        "it read the stores)")
    p.add_argument("--port", type=int, default=8050, help="port (default 8050; 0 picks a free one and prints it)")
    p.set_defaults(handler=cmd_serve)

    _add_kernelbench_parser(sub)
    return parser


def _apply_run_file(argv: Optional[List[str]], args: argparse.Namespace) -> argparse.Namespace:
    """evolve --config FILE: the command line parsed again over the file's settings, so that a flag given overrides
    the file; a repeatable flag given (--skills, --llm-price) replaces the file's list rather than adding to it."""
    from kernelsmith.run_file import load_run_file

    settings = load_run_file(args.config)
    merged = build_parser(settings).parse_args(argv)
    for key, value in settings.items():
        if isinstance(value, list) and getattr(merged, key) is not value:
            setattr(merged, key, getattr(merged, key)[len(value):])
    return merged


def main(argv: Optional[List[str]] = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    handler: Callable[[argparse.Namespace], int] = args.handler
    try:
        import kernelsmith
    except ImportError as error:  # a broken install: say so plainly
        print(f"kernelsmith: cannot import the compiled core: {error}", file=sys.stderr)
        return 2
    try:
        if args.command == "evolve" and args.config:
            args = _apply_run_file(argv, args)
        code = handler(args)
        sys.stdout.flush()  # here, so that a closed pipe is caught below and not at exit
        return code
    except BrokenPipeError:
        # The reader went away (`kernelsmith report | head`): stop quietly. Python flushes stdout again at
        # exit, so point it at /dev/null first (the idiom of the signal module's documentation).
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 1
    except KeyboardInterrupt:
        print("kernelsmith: interrupted", file=sys.stderr)
        return 130
    except Exception as error:  # every failure: one line naming the command, never a traceback
        if os.environ.get("KERNELSMITH_DEBUG", "") not in ("", "0"):
            raise  # the traceback, for a bug report
        print(f"kernelsmith {_command_name(args)}: {_one_line(error, kernelsmith.Error)}", file=sys.stderr)
        return 1


def _command_name(args: argparse.Namespace) -> str:
    """'report', 'kernelbench report', ...: the command as typed."""
    sub = getattr(args, "kernelbench_command", None)
    return f"{args.command} {sub}" if sub else args.command


def _one_line(error: BaseException, own_errors: type) -> str:
    """The message of an error for the one-line report: kernelsmith's own errors as they are (they say what, where
    and what to do); anything else with its kind, and a hint to see the traceback."""
    if isinstance(error, own_errors):
        return str(error)
    text = " ".join(str(error).split())
    if isinstance(error, RecursionError):
        text = f"input nested too deeply to read ({text})"
    else:
        text = f"{type(error).__name__}: {text}" if text else type(error).__name__
    return f"{text} (KERNELSMITH_DEBUG=1 shows where)"


if __name__ == "__main__":
    sys.exit(main())
