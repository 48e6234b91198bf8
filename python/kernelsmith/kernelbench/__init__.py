"""KernelBench problems in kernelsmith: running them, and KernelBench's metrics over the results
(docs/kernelbench.md)."""
