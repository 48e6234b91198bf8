"""KernelBench problems in kernelsmith (docs/kernelbench.md): importing them as tasks whose expected outputs
come from their own PyTorch modules, running them, KernelBench's metrics over the results, and judging corpora
of ModelNew files (docs/kernelbench-judge.md: `judge_corpus`, the module kernelsmith.kernelbench.judge)."""

from kernelsmith.kernelbench.importer import (  # noqa: F401  (the importer's API)
    ImportResult,
    ProbeSession,
    ProbeUnavailable,
    import_directory,
    import_problem,
)
from kernelsmith.kernelbench.judge import judge as judge_corpus  # noqa: F401,E402  (the judge's entry point)
