"""Training data from evolution trajectories (docs/training.md).

Long evolution runs become step-centric supervision and RL signals:

- :func:`export_sft`: one chat record per kept step (the exact messages the mutator sent and the
  answer that produced the child), keeping correct first steps and revisions that beat their parent by
  more than a threshold, with deduplication, a leakage guard and balancing.
- :func:`export_rl`: parent states worth improving, with every sibling attempt's reward (compile ok,
  correct, speedup over the parent, shaped by a :class:`RewardShaping`) and GRPO / RLOO advantages.
- :mod:`kernelsmith.rl`: reward functions for online RL (TRL's GRPOTrainer, verl) that evaluate fresh
  completions with the real evaluator.

Run stores are read by :mod:`kernelsmith.store` (read-only, while a run may still write them); its records
(:class:`StoredRun`, :class:`StoredProgram`, :class:`StoredEvaluation`, :class:`StoredStep`) are re-exported
here.
"""

from kernelsmith.store import StoredEvaluation, StoredProgram, StoredRun, StoredStep, load_runs, read_runs
from kernelsmith.training.leakage import LeakageReport, code_blocks, leakage, ngrams, tokenize
from kernelsmith.training.report import ExportReport, read_jsonl, write_jsonl
from kernelsmith.training.rewards import (
    DEFAULT_DISQUALIFYING_FLAGS,
    Outcome,
    RewardShaping,
    grpo_advantages,
    group_stats,
    outcome_from_evaluation,
    rloo_advantages,
)
from kernelsmith.training.rl_data import (
    RL_COMPLETION_DROP_REASON_TEXT,
    RL_COMPLETION_DROP_REASONS,
    RL_DROP_REASON_TEXT,
    RL_DROP_REASONS,
    RlAttemptDecision,
    RlDecision,
    RlExport,
    RlOptions,
    build_rl,
    export_rl,
)
from kernelsmith.training.sft import (
    SFT_DROP_REASON_TEXT,
    SFT_DROP_REASONS,
    SftDecision,
    SftExport,
    SftOptions,
    build_sft,
    export_sft,
)
from kernelsmith.training.trajectory import StepView, TaskDifficulty, step_views, task_difficulties

__all__ = [
    "DEFAULT_DISQUALIFYING_FLAGS",
    "ExportReport",
    "LeakageReport",
    "Outcome",
    "RL_COMPLETION_DROP_REASONS",
    "RL_COMPLETION_DROP_REASON_TEXT",
    "RL_DROP_REASONS",
    "RL_DROP_REASON_TEXT",
    "RewardShaping",
    "RlAttemptDecision",
    "RlDecision",
    "RlExport",
    "RlOptions",
    "SFT_DROP_REASONS",
    "SFT_DROP_REASON_TEXT",
    "SftDecision",
    "SftExport",
    "SftOptions",
    "StepView",
    "StoredEvaluation",
    "StoredProgram",
    "StoredRun",
    "StoredStep",
    "TaskDifficulty",
    "build_rl",
    "build_sft",
    "code_blocks",
    "export_rl",
    "export_sft",
    "grpo_advantages",
    "group_stats",
    "leakage",
    "load_runs",
    "ngrams",
    "outcome_from_evaluation",
    "read_jsonl",
    "read_runs",
    "rloo_advantages",
    "step_views",
    "task_difficulties",
    "tokenize",
    "write_jsonl",
]
