"""The `kernelsmith` command: devices, tasks, eval, evolve, report, export.

Each subcommand is a `cmd_<name>(args) -> int` function; `main()` parses the arguments and maps
kernelsmith's errors to a one-line message and a non-zero exit status.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Callable, List, Optional


def _core():
    # Imported lazily so that `kernelsmith --version` and argument errors stay fast.
    import kernelsmith

    return kernelsmith


def cmd_devices(args: argparse.Namespace) -> int:
    ks = _core()
    if args.json:
        print(ks.devices_json())
        return 0
    for backend in ks.devices():
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
    return 0


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
    raise _core().NotSupportedError("`kernelsmith eval` is not implemented in this build yet")


def cmd_evolve(args: argparse.Namespace) -> int:
    raise _core().NotSupportedError("`kernelsmith evolve` is not implemented in this build yet")


def cmd_report(args: argparse.Namespace) -> int:
    raise _core().NotSupportedError("`kernelsmith report` is not implemented in this build yet")


def cmd_export(args: argparse.Namespace) -> int:
    raise _core().NotSupportedError(
        "`kernelsmith export` (training data from run stores) is not implemented yet"
    )


def build_parser() -> argparse.ArgumentParser:
    from kernelsmith._version import version

    parser = argparse.ArgumentParser(
        prog="kernelsmith",
        description="Evolutionary, LLM-driven GPU kernel optimization.",
    )
    parser.add_argument("--version", action="version", version=f"kernelsmith {version()}")
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
    which = p.add_mutually_exclusive_group(required=True)
    which.add_argument("--candidate", metavar="FILE", help="candidate source file (.cu, .cl)")
    which.add_argument("--reference", action="store_true", help="evaluate the task's reference")
    p.add_argument("--backend", default="auto", choices=["auto", "cuda", "opencl"])
    p.add_argument("--device", type=int, default=0)
    p.add_argument("--mode", default="strict", choices=["screen", "strict"])
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--json", action="store_true", help="print the Evaluation as JSON")
    p.set_defaults(handler=cmd_eval)

    p = sub.add_parser("evolve", help="evolve a task's kernel")
    p.add_argument("--task", required=True, help="built-in task name or task folder/manifest path")
    p.add_argument("--backend", default="auto", choices=["auto", "cuda", "opencl"])
    p.add_argument("--device", type=int, default=0)
    p.add_argument("--mutator", default="param", choices=["param", "llm"])
    p.add_argument("--budget", type=int, default=32, help="number of evaluations")
    p.add_argument("--db", default="kernelsmith-run.db", help="SQLite run store")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--resume", action="store_true", help="continue the run stored in --db")
    p.add_argument("--islands", type=int, default=2)
    p.add_argument("--in-flight", type=int, default=2, help="mutations in flight")
    p.add_argument("--wall-time", type=float, default=0.0, help="stop after this many seconds (0: none)")
    p.add_argument("--target-speedup", type=float, default=0.0, help="stop at this speedup (0: none)")
    p.add_argument("--llm-url", help="OpenAI-compatible base URL (with --mutator llm)")
    p.add_argument("--model", help="model name (with --mutator llm)")
    p.add_argument("--api-key-env", default="OPENAI_API_KEY", help="variable holding the API key")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.set_defaults(handler=cmd_evolve)

    p = sub.add_parser("report", help="summarise a run store")
    p.add_argument("--db", required=True)
    p.add_argument("--json", action="store_true")
    p.set_defaults(handler=cmd_report)

    p = sub.add_parser("export", help="export training data (SFT/RL JSONL) from run stores")
    p.add_argument("--db", action="append", required=True)
    p.add_argument("--format", choices=["sft", "rl"], required=True)
    p.add_argument("--out", required=True)
    p.set_defaults(handler=cmd_export)
    return parser


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
        return handler(args)
    except KeyboardInterrupt:
        print("kernelsmith: interrupted", file=sys.stderr)
        return 130
    except kernelsmith.Error as error:
        print(f"kernelsmith {args.command}: {error}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
