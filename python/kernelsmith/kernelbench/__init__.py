"""KernelBench problems in kernelsmith (docs/kernelbench.md): importing them as tasks whose expected outputs
come from their own PyTorch modules, running them, and KernelBench's metrics over the results."""

from kernelsmith.kernelbench.importer import (  # noqa: F401  (the importer's API)
    ImportResult,
    ProbeSession,
    ProbeUnavailable,
    import_directory,
    import_problem,
)
