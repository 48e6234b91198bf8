// OpenCL kernels that race between work-groups, for the race check's tests and the search's confirmation tests
// (docs/evaluation.md, "Races"): each computes y = 2 * a + b over the harness task (harness_test_support.hpp).
#pragma once

namespace kernelsmith::test {

// A work-group reads the previous work-group's last output, and takes it when it differs: wrong whenever the
// neighbour has not run yet.
inline const char* const kOpenClChainedRace =
    "// @launch chained<<<ceil_div(N, 64), 64>>>(a, b, y, N)\n"
    "__kernel void chained(__global const float* a, __global const float* b, __global float* y, int N) {\n"
    "  const int i = get_global_id(0);\n"
    "  if (i < N) y[i] = 2.0f * a[i] + b[i];\n"
    "  barrier(CLK_GLOBAL_MEM_FENCE);\n"
    "  /* Takes the neighbour's value when it differs: wrong whenever the neighbour has not run yet. */\n"
    "  if (get_local_id(0) == 0 && get_group_id(0) > 0 && i < N) {\n"
    "    const float previous = y[i - 1];\n"
    "    if (!(previous == 2.0f * a[i - 1] + b[i - 1])) y[i] = previous;\n"
    "  }\n"
    "}\n";

// Every work-group reads a factor that work-group 0 writes.
inline const char* const kOpenClSharedFactorRace =
    "// @workspace factor: float32[1]\n"
    "// @launch shared_factor<<<ceil_div(N, 64), 64>>>(a, b, y, factor, N)\n"
    "__kernel void shared_factor(__global const float* a, __global const float* b, __global float* y,\n"
    "                            __global volatile float* factor, int N) {\n"
    "  const int i = get_global_id(0);\n"
    "  if (i == 0) factor[0] = 2.0f;\n"
    "  barrier(CLK_GLOBAL_MEM_FENCE);\n"
    "  if (i < N) y[i] = factor[0] * a[i] + b[i];\n"
    "}\n";

}  // namespace kernelsmith::test
