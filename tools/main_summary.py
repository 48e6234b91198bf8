"""The main job's closing summary (tools/main.sh): reads `kernelsmith report --json` on stdin and says, for a
newcomer, what the run found, how much it is worth, where it is stored and what to try next.

    kernelsmith report --db run.db --json | python tools/main_summary.py run.db SECONDS
"""

from __future__ import annotations

import json
import re
import sys


def summary(report: dict, db: str, seconds: float) -> str:
    run = report["run"]
    best = report["best"][0] if report["best"] else None
    lines = [f"== main: done in {seconds:.0f} s", ""]
    lines.append(f"The run evolved '{run['task']}' on {run['backend']} '{run['device']}': {report['evaluations']} "
                 f"evaluations, the task's reference kernel timed first in this same run as the baseline.")
    reference = next((entry for entry in report["best"] if entry["evaluation"] == 1), None)
    if reference is not None:
        lines.append(f"The reference, evaluated as a candidate, scored {reference['speedup']:.2f}x against its own "
                     "baseline: the spread between two timings of the same kernel here (noise).")
    else:
        lines.append("The reference, evaluated as a candidate, is not among the confirmed figures: its timing was too "
                     "noisy or unconfirmed on this machine (`kernelsmith report --db " + db + "` shows it apart).")
    if best is None:
        lines.append("No program was confirmed correct and fast (strict mode, no doubt-casting flag): "
                     "`kernelsmith report --db " + db + "` says why each evaluation failed.")
    elif best["evaluation"] == 1 or best["speedup"] <= 1.0:
        lines.append(f"Nothing beat the reference this time (best {best['speedup']:.2f}x). A larger budget "
                     "(KERNELSMITH_MAIN_BUDGET=30) or an LLM mutator explores further.")
    else:
        timing = re.search(r"\(([\d.]+ \w+) vs ([\d.]+ \w+), noise ([\d.]+)%\)", best["message"])
        lineage = " -> ".join(node["origin"] for node in reversed(report["lineage"]))
        lines.append(f"Best: program {best['id']}, {best['speedup']:.2f}x the reference's speed"
                     + (f" ({timing.group(1)} against {timing.group(2)}; timing noise {timing.group(3)}%)"
                        if timing else "")
                     + f", found at evaluation {best['evaluation']} by {lineage}.")
        lines.append("It is confirmed: correct on every check and timed in strict mode, with no integrity flag.")
    lines += [
        "",
        f"The run is stored in {db} (SQLite). Next:",
        f"  kernelsmith report --db {db}          the report above, again (--json for scripts)",
        f"  kernelsmith serve --db {db}           the web view: curves, lineage, each program and evaluation",
        "  jupyter notebook examples/quickstart.ipynb   the same from Python (docs/python.md)",
        "  kernelsmith evolve --task softmax --mutator llm --llm-url URL --model NAME   with a language model "
        "(docs/llm.md)",
    ]
    return "\n".join(lines)


def main(argv: list) -> int:
    db, seconds = argv[1], float(argv[2]) if len(argv) > 2 else 0.0
    print(summary(json.load(sys.stdin), db, seconds))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
