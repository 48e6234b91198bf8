// kernelsmith-worker: runs candidate kernels for the evaluator in a separate process.
#include "evaluate/worker.hpp"

int main(int argc, char** argv) { return kernelsmith::detail::worker_main(argc, argv); }
