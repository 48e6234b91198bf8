"""What an export kept and dropped, and the JSONL writer."""

from __future__ import annotations

import json
import math
import os
import tempfile
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Dict, Iterable, List, Optional

from kernelsmith import _inputs


@dataclass
class ExportReport:
    """Counts of an export. ``kept`` are records written; ``dropped`` counts, per reason, the steps
    (SFT) or parent states (RL) that were left out; every considered item is in exactly one of them."""

    format: str
    stores: List[str] = field(default_factory=list)
    runs: int = 0
    considered: int = 0
    kept: int = 0
    dropped: Counter = field(default_factory=Counter)
    per_task: Counter = field(default_factory=Counter)
    # RL only: the attempts (completions) in the kept groups, and the attempts left out, per reason
    # (those of dropped states count as "in_dropped_group").
    completions: int = 0
    dropped_completions: Counter = field(default_factory=Counter)
    out: Optional[str] = None

    def drop(self, reason: str, count: int = 1) -> None:
        """Counts `count` items left out for `reason`."""
        self.dropped[reason] += count

    def as_dict(self) -> Dict[str, Any]:
        """The counts as a JSON-ready dict."""
        return {
            "format": self.format,
            "stores": list(self.stores),
            "runs": self.runs,
            "considered": self.considered,
            "kept": self.kept,
            "dropped": dict(sorted(self.dropped.items())),
            "per_task": dict(sorted(self.per_task.items())),
            "completions": self.completions,
            "dropped_completions": dict(sorted(self.dropped_completions.items())),
            "out": self.out,
        }

    def summary(self) -> str:
        """Human-readable lines: what was kept, and each drop reason with its count."""
        unit = "steps" if self.format == "sft" else "parent states"
        lines = [
            f"{self.format} export: {self.runs} run(s) from {len(self.stores)} store(s), "
            f"{self.considered} {unit} considered",
            f"kept: {self.kept}" + (f" ({self.completions} completions)" if self.format == "rl" else ""),
        ]
        total_dropped = sum(self.dropped.values())
        lines.append(f"dropped: {total_dropped}")
        for reason, count in sorted(self.dropped.items(), key=lambda item: (-item[1], item[0])):
            lines.append(f"  {reason}: {count}")
        if self.dropped_completions:
            lines.append(f"attempts left out: {sum(self.dropped_completions.values())}")
            for reason, count in sorted(self.dropped_completions.items(), key=lambda item: (-item[1], item[0])):
                lines.append(f"  {reason}: {count}")
        if self.per_task:
            lines.append("per task: " + ", ".join(f"{task} {count}" for task, count in sorted(self.per_task.items())))
        if self.out:
            lines.append(f"written to {self.out}")
        return "\n".join(lines)


def _clean(value: Any) -> Any:
    # JSON has no NaN or infinity; a record must load everywhere (datasets, pandas, jq).
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: _clean(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_clean(v) for v in value]
    return value


def write_jsonl(records: Iterable[Dict[str, Any]], path: str) -> int:
    """Writes one JSON object per line (UTF-8), atomically: a reader never sees half a file. Returns the
    number of records."""
    path = os.fspath(path)
    directory = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(directory):
        raise FileNotFoundError(f"cannot write '{path}': the folder '{directory}' does not exist")
    count = 0
    handle, temporary = tempfile.mkstemp(prefix=".kernelsmith-export-", suffix=".jsonl", dir=directory)
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            for record in records:
                out.write(json.dumps(_clean(record), ensure_ascii=False, allow_nan=False))
                out.write("\n")
                count += 1
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(temporary, 0o666 & ~umask)
        os.replace(temporary, path)
    except BaseException:
        if os.path.exists(temporary):
            os.unlink(temporary)
        raise
    return count


def read_jsonl(path: str) -> List[Dict[str, Any]]:
    """The records of a JSONL file, one dict per non-empty line."""
    with open(path, encoding="utf-8") as handle:
        return [_inputs.loads(line, f"{path}: line {number}") for number, line in enumerate(handle, 1) if line.strip()]
