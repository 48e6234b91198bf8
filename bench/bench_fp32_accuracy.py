#!/usr/bin/env python3
"""How accurate the float32 products are, against float64: the CUDA seeds of matmul and linear_gelu (TF32
tensor cores in the 3xTF32 split, at each PROMOTE value), their float32 FMA twins (seed.maca, compiled as
CUDA), PyTorch eager in float32 (TF32 off) and PyTorch with TF32 on, on the tasks' timing sizes.

usage: python3 bench/bench_fp32_accuracy.py [--tasks matmul,linear_gelu] [--json FILE]

Each kernel runs once through kernelsmith.KernelRunner on the same inputs, drawn twice: normal (mean 0,
the products' signs cancel) and uniform on [0, 1) (all positive: the sums only grow, where an accumulator
that truncates loses the most). For each it prints the largest absolute error and the relative L2 error
(||out - exact|| / ||exact||) against the float64 result. Needs a CUDA GPU, torch and kernelsmith; it
prints the device, the versions and the exact command first.
"""
import argparse
import json
import platform
import sys
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional

ROOT = Path(__file__).resolve().parent.parent
TASKS = ROOT / "tasks"
PROMOTE_VALUES = (4, 2, 1)


def problem(name: str, kind: str, torch: Any) -> Dict[str, Any]:
    """The inputs (on the GPU), the float64 result and PyTorch's float32 expression for one task."""
    generator = torch.Generator(device="cuda").manual_seed(7)

    def draw(*shape: int, scale: float = 1.0) -> Any:
        if kind == "normal":
            return torch.randn(*shape, generator=generator, device="cuda") * scale
        return torch.rand(*shape, generator=generator, device="cuda") * scale

    functional = torch.nn.functional
    if name == "matmul":
        a, b = draw(2048, 2048), draw(2048, 2048)
        return {"tensors": {"A": a, "B": b}, "output": "C", "exact": a.double() @ b.double(),
                "torch": lambda: a @ b}
    if name == "linear_gelu":
        x, w, bias = draw(4096, 1024), draw(4096, 1024, scale=0.05), draw(4096, scale=0.5)
        exact = functional.gelu(x.double() @ w.double().T + bias.double(), approximate="tanh")
        return {"tensors": {"x": x, "weight": w, "bias": bias}, "output": "y", "exact": exact,
                "torch": lambda: functional.gelu(functional.linear(x, w, bias), approximate="tanh")}
    raise SystemExit(f"bench_fp32_accuracy: no problem for task '{name}' (matmul, linear_gelu)")


def errors(output: Any, exact: Any) -> Dict[str, float]:
    difference = output.double() - exact
    return {"max_abs": float(difference.abs().max()), "rel_l2": float(difference.norm() / exact.norm())}


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", default="matmul,linear_gelu")
    parser.add_argument("--json", metavar="FILE", help="write every number as JSON")
    args = parser.parse_args(argv)

    import numpy as np
    import torch
    import kernelsmith as ks

    if not torch.cuda.is_available():
        print("bench_fp32_accuracy: needs a CUDA GPU (torch sees none)")
        return 1
    command = "python3 " + " ".join([sys.argv[0], *(argv if argv is not None else sys.argv[1:])])
    device = torch.cuda.get_device_name(0)
    print(f"command: {command}")
    print(f"device: {device}; kernelsmith {ks.__version__}, torch {torch.__version__}, python {platform.python_version()}")
    torch.backends.cuda.matmul.allow_tf32 = False

    rows: List[Dict[str, Any]] = []
    for name in [t for t in args.tasks.split(",") if t]:
        task = ks.Task.load(str(TASKS / name))
        seed = (TASKS / name / "seed.cu").read_text()
        kernels: Dict[str, str] = {f"3xTF32 seed, PROMOTE = {p}": ks.ParamMutator.rewrite(seed, {"PROMOTE": p})
                                   for p in PROMOTE_VALUES}
        kernels["float32 FMA seed (seed.maca)"] = (TASKS / name / "seed.maca").read_text()
        for kind in ("normal", "uniform01"):
            case = problem(name, kind, torch)
            host = {key: value.cpu().numpy() for key, value in case["tensors"].items()}
            measured: Dict[str, Callable[[], Any]] = {}
            for label, source in kernels.items():
                runner = ks.KernelRunner(task, ks.Candidate("cuda", source), backend="cuda")
                measured[label] = lambda r=runner: torch.from_numpy(np.asarray(r.run(host)[case["output"]])).cuda()
            measured["PyTorch float32 (TF32 off)"] = case["torch"]

            def with_tf32() -> Any:
                torch.backends.cuda.matmul.allow_tf32 = True
                try:
                    return case["torch"]()
                finally:
                    torch.backends.cuda.matmul.allow_tf32 = False

            measured["PyTorch TF32"] = with_tf32
            for label, compute in measured.items():
                row = {"task": name, "inputs": kind, "kernel": label, **errors(compute(), case["exact"])}
                rows.append(row)
                print(f"{name:12s} {kind:10s} {label:30s} max_abs={row['max_abs']:.3e} rel_l2={row['rel_l2']:.3e}",
                      flush=True)
    if args.json:
        Path(args.json).write_text(json.dumps({"command": command, "device": device, "torch": torch.__version__,
                                               "kernelsmith": ks.__version__, "rows": rows}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
