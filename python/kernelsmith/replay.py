"""A run's derived views, rebuilt from its store by replaying its evaluations in order: the best confirmed speedup
and the best confirmed fraction of the hardware limit so far (overall and per island), and the MAP-Elites archive.

The notebook's :class:`kernelsmith.Run` and the web view (``kernelsmith serve``, docs/web.md) share them.
Each replay remembers the last evaluation it saw, so a view that follows a live run reads only what the
engine committed since (``after_sequence`` of :class:`kernelsmith.store.RunStoreReader`'s queries).
"""

from __future__ import annotations

import contextlib
import json
import math
from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

from kernelsmith import _core as core
from kernelsmith.store import INITIAL_ORIGINS


def program_from_row(row: Dict[str, Any]) -> "core.Program":
    """A core.Program (candidate with its lineage, and its Evaluation) from a row of
    RunStoreReader.evaluated_programs()."""
    candidate = core.Candidate(row["language"], row["source"])
    lineage = candidate.lineage
    lineage.parent_ids = row["parent_ids"]
    lineage.origin = row["origin"]
    lineage.island = row["island"]
    lineage.generation = row["generation"]
    candidate.lineage = lineage
    evaluation = core.Evaluation.from_json(row["json"], f"run store program {row['id']}")
    return core.Program(candidate, evaluation, row["island"], row["generation"], row["sequence"])


@dataclass
class ProgressPoint:
    """One evaluation with the bests so far after it (a confirmed program raises them, kernelsmith.store's
    unconfirmed_reasons; others do not)."""

    sequence: int
    program_id: str
    island: int
    status: str
    speedup: float  # NaN unless correct
    sol_fraction: Optional[float]  # of a correct program; None when not computed or not correct
    best_speedup: float
    island_best_speedup: float
    best_sol_fraction: float
    island_best_sol_fraction: float
    #: Correct, measured in strict mode and free of doubt-casting flags: only such an evaluation raises the bests.
    confirmed: bool = False
    #: The islands the program stands on: its own, or every island for the reference and the seeds (the engine puts
    #: them on each island, so each island's best starts from them).
    islands: Tuple[int, ...] = ()


class ProgressReplay:
    """Running bests over a run's evaluations, fed in evaluation order (rows of RunStoreReader.progress_rows).
    `islands`: the run's island count (islands_of), over which the reference and the seeds count."""

    def __init__(self, islands: int = 1) -> None:
        self.islands = max(1, int(islands))
        self.last_sequence = -1
        self.best_speedup = 0.0
        self.best_sol_fraction = 0.0
        self.island_best_speedup: Dict[int, float] = {}
        self.island_best_sol_fraction: Dict[int, float] = {}

    def add(self, row: Dict[str, Any]) -> ProgressPoint:
        """Takes the next evaluation (keys sequence, program_id, island, status, speedup, sol_fraction, confirmed)."""
        island = int(row["island"])
        correct = row["status"] == "ok"
        confirmed = correct and bool(row.get("confirmed"))
        speedup = float(row["speedup"]) if correct else math.nan
        fraction = row.get("sol_fraction") if correct else None
        fraction = float(fraction) if fraction is not None and math.isfinite(float(fraction)) else None
        shared = row.get("origin") in INITIAL_ORIGINS
        islands = tuple(sorted(set(range(self.islands)) | {island})) if shared else (island,)
        if confirmed:
            self.best_speedup = max(self.best_speedup, speedup)
            if fraction is not None:
                self.best_sol_fraction = max(self.best_sol_fraction, fraction)
            for each in islands:
                self.island_best_speedup[each] = max(self.island_best_speedup.get(each, 0.0), speedup)
                if fraction is not None:
                    self.island_best_sol_fraction[each] = max(self.island_best_sol_fraction.get(each, 0.0), fraction)
        self.last_sequence = max(self.last_sequence, int(row["sequence"]))
        return ProgressPoint(
            sequence=int(row["sequence"]),
            program_id=row["program_id"],
            island=island,
            status=row["status"],
            speedup=speedup,
            sol_fraction=fraction,
            best_speedup=self.best_speedup,
            island_best_speedup=self.island_best_speedup.get(island, 0.0),
            best_sol_fraction=self.best_sol_fraction,
            island_best_sol_fraction=self.island_best_sol_fraction.get(island, 0.0),
            confirmed=confirmed,
            islands=islands,
        )


@dataclass
class ArchiveCell:
    """An occupied cell of the rebuilt grid."""

    island: int
    bins: List[int]  # one per feature descriptor
    features: List[float]  # the occupant's descriptor values
    program_id: str
    fitness: float
    speedup: float


class ArchiveReplay:
    """The run's MAP-Elites grid, rebuilt as the engine builds it when it resumes a run: the stored evaluations
    offered in order to a MapElitesArchive made with the run's configuration, the reference and seeds on every
    island, and each recorded migration's copy offered to its island before the evaluations that followed it."""

    def __init__(self, config_json: str) -> None:
        config = core.EvolutionConfig.from_json(config_json)
        archive_config = core.ArchiveConfig()
        archive_config.islands = config.islands
        archive_config.features = config.features
        archive_config.elite_count = config.elite_count
        self.config = archive_config
        self.archive = core.MapElitesArchive(archive_config)
        self.last_sequence = -1
        self.offered = 0  # evaluations offered
        self.migrated = 0  # migration copies offered
        self._pending: List[Dict[str, Any]] = []  # migrations read, not offered yet (in their order)
        self._last_migration_id = 0

    @property
    def features(self) -> List["core.FeatureDescriptor"]:
        """The grid's axes (the run's feature descriptors)."""
        return list(self.config.features)

    def update(self, reader: Any, run_id: int, chunk: int = 5000, lock: Any = None,
               taken: Optional[Callable[[int], None]] = None) -> int:
        """Offers what the store holds beyond what was offered: the evaluations after the last one (read `chunk` at a
        time from a kernelsmith.store.RunStoreReader) and the migrations among them. The archive changes only under
        `lock` (a context manager; the slow part, parsing each Evaluation, happens outside it); `taken(n)` is called
        after each chunk. Returns the number of evaluations offered."""
        lock = lock if lock is not None else contextlib.nullcontext()
        total = 0
        while True:
            rows = reader.evaluated_programs(run_id, after_sequence=self.last_sequence, limit=chunk)
            migrations = reader.migration_rows(run_id, after_id=self._last_migration_id)
            programs = [program_from_row(row) for row in rows]
            with lock:
                self._pending.extend(migrations)
                if migrations:
                    self._last_migration_id = migrations[-1]["id"]
                for row, program in zip(rows, programs):
                    self._migrate(reader, run_id, int(row["sequence"]))
                    self._offer(program, int(row["sequence"]))
                # A migration recorded at sequence N happened after evaluation N - 1.
                self._migrate(reader, run_id, self.last_sequence + 1)
            total += len(rows)
            if taken is not None:
                taken(len(rows))
            if len(rows) < chunk:
                return total

    def _offer(self, program: "core.Program", sequence: int) -> None:
        if program.candidate.lineage.origin in INITIAL_ORIGINS:
            # The engine puts the reference and the seeds on every island (the archive keeps copies).
            for island in range(self.config.islands):
                program.island = island
                self.archive.add(program)
        else:
            self.archive.add(program)
        self.offered += 1
        self.last_sequence = max(self.last_sequence, sequence)

    def _migrate(self, reader: Any, run_id: int, up_to: int) -> None:
        while self._pending and int(self._pending[0]["sequence"]) <= up_to:
            record = self._pending.pop(0)
            rows = reader.evaluated_programs(run_id, program_id=record["program_id"])
            if not rows:
                continue  # as the engine does: a migration of a program it does not know is passed over
            copy = program_from_row(rows[0])
            copy.island = min(max(int(record["to_island"]), 0), self.config.islands - 1)
            copy.migrant = True
            self.archive.add(copy)
            self.migrated += 1

    def cells(self) -> List[ArchiveCell]:
        """Every occupied cell, island by island."""
        cells = []
        for island in range(self.config.islands):
            for program in self.archive.island_cells(island):
                cells.append(ArchiveCell(island, list(self.archive.cell_of(program)),
                                         list(self.archive.features(program)), program.id, program.fitness,
                                         program.evaluation.speedup))
        return cells

    def check_axes(self, x: int, y: int, where: str) -> None:
        """Raises ValueError unless x and y are two different feature indices."""
        count = len(self.config.features)
        if count < 2:
            raise ValueError(f"{where}: the run has {count} feature(s); the grid needs two")
        if not (0 <= x < count and 0 <= y < count and x != y):
            raise ValueError(f"{where}: x={x}, y={y} must be two different feature indices below {count}")

    def grid(self, x: int, y: int, islands: Optional[Sequence[int]] = None) -> Tuple[List[List[Optional[ArchiveCell]]], int]:
        """The grid over features x and y: rows (y bins) of columns (x bins), each the fittest occupant over the
        other features and the islands given (default all), or None; and the number of occupied cells counted."""
        self.check_axes(x, y, "archive grid")
        features = self.config.features
        grid: List[List[Optional[ArchiveCell]]] = [[None] * features[x].bins for _ in range(features[y].bins)]
        wanted = None if islands is None else set(islands)
        occupied = 0
        for cell in self.cells():
            if wanted is not None and cell.island not in wanted:
                continue
            occupied += 1
            current = grid[cell.bins[y]][cell.bins[x]]
            if current is None or cell.fitness > current.fitness:
                grid[cell.bins[y]][cell.bins[x]] = cell
        return grid, occupied


def config_json_of(run_row: Dict[str, Any]) -> str:
    """The run's EvolutionConfig JSON from its row in ``runs`` (the column as text, or already parsed)."""
    config = run_row["config"]
    return config if isinstance(config, str) else json.dumps(config)


def islands_of(run_row: Dict[str, Any]) -> int:
    """The run's island count, from its row in ``runs``."""
    return core.EvolutionConfig.from_json(config_json_of(run_row)).islands
