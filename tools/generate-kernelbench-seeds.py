"""Writes the matrix-product seeds of examples/kernelbench (CUDA seed.cu, Triton seed.py and OpenCL seed.cl)
from one template each, so that the eleven KernelBench problems built on a float32 matrix product share one
kernel that differs only in what the problem fixes: which operand is stored transposed, which sizes
name M, N and K, the lower-triangular structure, and the fused epilogue (each candidate must be one
self-contained file, so the kernel is written out in every seed).

usage: python3 tools/generate-kernelbench-seeds.py [OUT_DIR]   (default: examples/kernelbench of this checkout)

Two OpenCL seeds are a built-in task's OpenCL seed with the problem's names in its plan (DERIVED_OPENCL:
LayerNorm is tasks/layernorm's row normalisation, cross-entropy tasks/cross_entropy's per-row loss followed
by a mean). The other KernelBench seeds (the diagonal product, LayerNorm, MinGPT's GELU, cross-entropy in
CUDA and Triton, the diagonal product and MinGPT's GELU in OpenCL) are written by hand. Edit the template here, regenerate, and run tests/python/test_kernelbench_seeds.py.
"""
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

OUT = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parent.parent / "examples" / "kernelbench"


@dataclass
class Epilogue:
    """What the product's value v at column col becomes before the store, in CUDA and in Triton (z is
    the (BM, BN) tile, bias the (BN,) vector of the tile's columns)."""
    what: str                     # one line for the header comment
    bias: str = ""                # the bias tensor's name, "" for none
    cuda: str = "return v;"       # body of `float epilogue(float v, float b)`; b is bias[col] (0 without bias)
    triton: str = "y = z"         # Triton lines computing y from z (and bias)


@dataclass
class Problem:
    task: str
    title: str          # what the problem computes, one line
    a: str              # the tensor names as the importer writes them (docs/kernelbench.md)
    b: str
    m: str              # the size names of M, N and K
    n: str
    k: str
    a_layout: str = "mk"          # "mk": A is (M, K) row-major; "km": A is stored (K, M) (the problem's A.T)
    b_layout: str = "kn"          # "kn": B is (K, N) row-major; "nk": B is stored (N, K) (B.T, nn.Linear's weight)
    lower: bool = False           # A and B lower triangular, out = tril(A @ B)
    epilogue: Epilogue = field(default_factory=lambda: Epilogue("none"))
    note: str = ""                # an extra comment line for this problem
    cuda_defaults: dict = field(default_factory=dict)    # @tune defaults other than CUDA_DEFAULTS
    triton_defaults: dict = field(default_factory=dict)  # @tune defaults other than TRITON_DEFAULTS


CUDA_DEFAULTS = {"BM": 128, "BN": 128, "BK": 8, "TM": 8, "TN": 8, "GROUP": 8}
TRITON_DEFAULTS = {"BM": 128, "BN": 128, "BK": 16, "GROUP": 8, "WARPS": 8, "STAGES": 3}
# The defaults that were fastest at KernelBench's sizes on an H100 (80GB HBM3, CUDA events, no L2 flush) among
# the handful of configurations tried (examples/kernelbench/README.md has the figures): with A (M, K) and B
# (K, N), 128 x 256 tiles and BK = 16 in CUDA (1.08 to 1.11x the 128 x 128, BK = 8 tiles); with B stored
# (N, K) (nn.Linear's weight), 256 x 128 tiles and BK = 16 (1.04 to 1.09x; these 512-thread tiles are held to
# 128 registers, and some spill 24 to 44 bytes, which cost less than they gain); in Triton, 64 x 128 tiles, BK = 32
# and 4 warps (1.16x), and with B stored (N, K) 128 x 64 tiles, 4 warps and 4 stages (1.17x the 128 x 128, 8
# warps tiles). 128 x 128 tiles with 4 warps are 1.13 to 1.24x faster still there, but spill 288 to 488 bytes
# of registers at sm_90, so they are left to the search rather than shipped.
NN_CUDA = {"BK": 16, "BN": 256}
NT_CUDA = {"BK": 16, "BM": 256}
NN_TRITON = {"BM": 64, "BK": 32, "WARPS": 4}
NT_TRITON = {"BN": 64, "WARPS": 4, "STAGES": 4}

MISH_CUDA = ("const float z = v + b;\n"
             "  const float once = z * tanhf(log1pf(expf(z)));\n"
             "  return once * tanhf(log1pf(expf(once)));")
MISH_TRITON = ("z = z + bias[None, :]\n"
               "    once = z * tl.extra.cuda.libdevice.tanh(tl.extra.cuda.libdevice.log1p(tl.exp(z)))\n"
               "    y = once * tl.extra.cuda.libdevice.tanh(tl.extra.cuda.libdevice.log1p(tl.exp(once)))")

PROBLEMS = [
    Problem("kb_l1_1_square_matrix_multiplication", "C = A @ B for square A and B of size N x N",
            "A", "B", "N", "N", "N", cuda_defaults=NN_CUDA, triton_defaults=NN_TRITON),
    Problem("kb_l1_2_standard_matrix_multiplication", "C = A @ B with A (M, K) and B (K, N)",
            "A", "B", "M", "N", "K", cuda_defaults=NN_CUDA, triton_defaults=NN_TRITON),
    Problem("kb_l1_8_matmul_with_irregular_shapes", "C = A @ B with A (M, K) and B (K, N) of odd sizes",
            "A", "B", "M", "N", "K",
            note="The timing sizes are odd (M = 8205, K = 2949, N = 5921): no row starts 16-byte aligned, so no load "
                 "of A or B can be a 16-byte vector at these sizes.",
            triton_defaults={"BM": 64}),
    Problem("kb_l1_13_matmul_for_symmetric_matrices", "C = A @ B for symmetric A and B of size N x N",
            "A", "B", "N", "N", "N",
            note="The symmetry of A and B is not used: it saves no arithmetic for a general product (C is not "
                 "symmetric), so this is the plain product, correct for any A and B.",
            cuda_defaults=NN_CUDA, triton_defaults=NN_TRITON),
    Problem("kb_l1_15_matmul_for_lower_triangular_matrices",
            "C = tril(A @ B) for lower-triangular A and B of size M x M", "A", "B", "M", "M", "M", lower=True,
            note="Relies on the task's inputs being lower triangular (structure \"lower_triangular\" on A and B): "
                 "C[i, j] = sum over j <= k <= i of A[i, k] B[k, j], so a tile of rows [m0, m0 + BM) and columns "
                 "[n0, n0 + BN) only runs k over [n0, m0 + BM), and tiles above the diagonal only store zeros "
                 "(about a sixth of the full product's arithmetic). Within that range the terms outside "
                 "the triangles are exact zeros: C's values are those of the full product, and its upper triangle is "
                 "stored as zeros, as torch.tril does.",
            cuda_defaults={"BK": 16}),
    Problem("kb_l1_16_matmul_with_transposed_a", "C = A.T @ B with A stored (K, M) and B (K, N)",
            "A", "B", "M", "N", "K", a_layout="km", cuda_defaults=NN_CUDA, triton_defaults={"BK": 32}),
    Problem("kb_l1_17_matmul_with_transposed_b", "C = A @ B.T with A (M, K) and B stored (N, K)",
            "A", "B", "M", "N", "K", b_layout="nk", cuda_defaults=NT_CUDA, triton_defaults=NT_TRITON),
    Problem("kb_l2_12_gemm_multiply_leakyrelu",
            "leaky_relu((x @ gemm_weight.T + gemm_bias) * 2.0, negative_slope = 0.1)",
            "x", "gemm_weight", "batch_size", "out_features", "in_features", b_layout="nk",
            epilogue=Epilogue("multiply by the problem's multiplier 2.0, then LeakyReLU with its slope 0.1",
                              bias="gemm_bias",
                              cuda="const float z = (v + b) * 2.0f;\n  return z > 0.0f ? z : z * 0.1f;",
                              triton="z = (z + bias[None, :]) * 2.0\n    y = tl.where(z > 0.0, z, z * 0.1)"),
            cuda_defaults=NT_CUDA, triton_defaults=NT_TRITON),
    Problem("kb_l2_76_gemm_add_relu", "relu(x @ gemm_weight.T + bias)",
            "x", "gemm_weight", "batch_size", "out_features", "in_features", b_layout="nk",
            epilogue=Epilogue("add the bias, then ReLU", bias="bias",
                              cuda="return fmaxf(v + b, 0.0f);",
                              triton="y = tl.maximum(z + bias[None, :], 0.0)"),
            cuda_defaults=NT_CUDA, triton_defaults=NT_TRITON),
    Problem("kb_l2_86_matmul_divide_gelu", "gelu((x @ linear_weight.T + linear_bias) / 10.0), exact (erf) GELU",
            "x", "linear_weight", "batch_size", "output_size", "input_size", b_layout="nk",
            epilogue=Epilogue("divide by the problem's divisor 10.0, then GELU with erf as PyTorch's default",
                              bias="linear_bias",
                              cuda="const float z = (v + b) / 10.0f;\n"
                                   "  return 0.5f * z * (1.0f + erff(z * 0.70710678118654752f));",
                              triton="z = (z + bias[None, :]) / 10.0\n"
                                     "    y = 0.5 * z * (1.0 + tl.extra.cuda.libdevice.erf(z * 0.7071067811865476))"),
            cuda_defaults=NT_CUDA, triton_defaults=NT_TRITON),
    Problem("kb_l2_29_matmul_mish_mish", "mish(mish(x @ linear_weight.T + linear_bias))",
            "x", "linear_weight", "batch_size", "out_features", "in_features", b_layout="nk",
            epilogue=Epilogue("Mish twice, mish(z) = z * tanh(log1p(exp(z))) as PyTorch computes it",
                              bias="linear_bias", cuda=MISH_CUDA, triton=MISH_TRITON),
            cuda_defaults=NT_CUDA, triton_defaults=NT_TRITON),
]

CUDA_LOADS = {
    # (layout) -> (index of the tile element e's row/column and k, its global offset): consecutive threads
    # take consecutive addresses of the operand's contiguous dimension, so each warp's loads coalesce.
    ("a", "mk"): ("const int r = e / BK, kk = e % BK;", "A[(long long)(m0 + r) * K + k0 + kk]"),
    ("a", "km"): ("const int r = e % BM, kk = e / BM;", "A[(long long)(k0 + kk) * M + m0 + r]"),
    ("b", "kn"): ("const int r = e % BN, kk = e / BN;", "B[(long long)(k0 + kk) * N + n0 + r]"),
    ("b", "nk"): ("const int r = e / BK, kk = e % BK;", "B[(long long)(n0 + r) * K + k0 + kk]"),
}

LAYOUT_WORDS = {
    "mk": "A is (M, K) row-major", "km": "A is stored (K, M) row-major (the product reads its transpose)",
    "kn": "B is (K, N) row-major", "nk": "B is stored (N, K) row-major (the product reads its transpose)",
}


def comment(text: str, marker: str, width: int = 110) -> str:
    """text wrapped into comment lines starting with marker; a short parenthesis such as (M, K) stays on one
    line."""
    keep = re.sub(r"\([^()]{1,16}\)", lambda m: m.group(0).replace(" ", "\x00"), text)
    lines, line = [], marker
    for word in keep.split():
        word = word.replace("\x00", " ")
        if len(line) + 1 + len(word) > width and line != marker:
            lines.append(line)
            line = marker
        line += " " + word
    lines.append(line)
    return "\n".join(lines)


def sizes_line(p: Problem) -> str:
    """Which task sizes stand for the kernel's M, N and K, where they are not those names."""
    if (p.m, p.n, p.k) == ("M", "N", "K"):
        return ""
    return f" (the kernel's M, N, K are the task's sizes {p.m}, {p.n}, {p.k})"


def k_range_lines(p: Problem, rows: str) -> str:
    """The kernel's lines setting k_begin and k_end: all of K, or for the lower-triangular problem only the k
    that meet both triangles for a tile of `rows` rows starting at m0 and columns starting at n0."""
    if not p.lower:
        return "  const int k_begin = 0;\n  const int k_end = K;\n"
    return (f"  // Only k in [n0, m0 + {rows}) meets the lower triangles of both A and B.\n"
            f"  const int k_begin = n0;\n  const int k_end = min(K, m0 + {rows});\n")


def cuda_seed(p: Problem) -> str:
    bias_param = "const float* __restrict__ bias, " if p.epilogue.bias else ""
    bias_arg = f"{p.epilogue.bias}, " if p.epilogue.bias else ""
    bias_value = "bias[col + e]" if p.epilogue.bias else "0.0f"
    loads = {side: CUDA_LOADS[(side, layout)] for side, layout in (("a", p.a_layout), ("b", p.b_layout))}
    k_range = k_range_lines(p, "BM")
    keep = "col + e <= row ? value : 0.0f" if p.lower else "value"
    header = [
        f"{p.title}{sizes_line(p)}.",
        f"Register-blocked float32 matrix product with plain fused multiply-adds (exact float32: no TF32). "
        f"{LAYOUT_WORDS[p.a_layout]}; {LAYOUT_WORDS[p.b_layout]}; out is (M, N) row-major.",
        "A block of (BM / TM) x (BN / TN) threads computes a BM x BN tile of out, each thread a TM x TN "
        "sub-tile held in registers, taken as 4 x 4 pieces spread over the tile so that its shared-memory "
        "reads are float4 and conflict-free. K advances BK at a time through two shared-memory buffers: the "
        "next tiles of A and B are loaded into registers while the current ones are multiplied, then stored "
        "k-major (As[k][m], Bs[k][n]; 4 floats of padding per row) into the other buffer, one barrier per step. "
        "Blocks are numbered in groups of GROUP tile rows, so that blocks running together share rows of A "
        "and columns of B in L2. Every load and store is bounds-checked: elements outside the matrices load "
        "as zeros, and stores are float4 where the row length is a multiple of 4.",
    ]
    if p.epilogue.bias or p.epilogue.cuda != "return v;":
        header.append(f"Fused epilogue: {p.epilogue.what}, in registers before the only store.")
    if p.note:
        header.append(p.note)
    text = "\n//\n".join(comment(h, "//") for h in header)
    d = {**CUDA_DEFAULTS, **p.cuda_defaults}
    return f"""{text}
// @tune BM = {d['BM']} in {{32, 64, 128, 256}}
// @tune BN = {d['BN']} in {{32, 64, 128, 256}}
// @tune BK = {d['BK']} in {{8, 16, 32}}
// @tune TM = {d['TM']} in {{4, 8}}
// @tune TN = {d['TN']} in {{4, 8}}
// @tune GROUP = {d['GROUP']} in {{1, 4, 8, 16}}
// @require (BM / TM) * (BN / TN) >= 32 && (BM / TM) * (BN / TN) <= MAX_THREADS_PER_BLOCK
// @require BM * BK % ((BM / TM) * (BN / TN)) == 0 && BN * BK % ((BM / TM) * (BN / TN)) == 0
// @require 8 * BK * (BM + BN + 8) <= SMEM_PER_BLOCK_OPTIN
// @launch matmul<<<ceil_div({p.m}, BM) * ceil_div({p.n}, BN), (BM / TM) * (BN / TN), 8 * BK * (BM + BN + 8)>>>({p.a}, {p.b}, {bias_arg}out, {p.m}, {p.n}, {p.k})

#define THREADS ((BM / TM) * (BN / TN))
#define A_LOADS (BM * BK / THREADS)
#define B_LOADS (BN * BK / THREADS)
#define A_STRIDE (BM + 4)  // floats per k-row of the shared A tile
#define B_STRIDE (BN + 4)

__device__ __forceinline__ float epilogue(float v, float b) {{
  {p.epilogue.cuda}
}}

// Thread tid's elements e = tid + i * THREADS of the A and B tiles starting at k0, from global memory into
// registers; elements outside the matrices (or past k_end) are zeros.
__device__ __forceinline__ void load_tiles(const float* __restrict__ A, const float* __restrict__ B,
                                           float (&a_next)[A_LOADS], float (&b_next)[B_LOADS], int m0, int n0,
                                           int k0, int k_end, int M, int N, int K) {{
  const int tid = threadIdx.x;
#pragma unroll
  for (int i = 0; i < A_LOADS; ++i) {{
    const int e = tid + i * THREADS;
    {loads['a'][0]}
    a_next[i] = m0 + r < M && k0 + kk < k_end ? {loads['a'][1]} : 0.0f;
  }}
#pragma unroll
  for (int i = 0; i < B_LOADS; ++i) {{
    const int e = tid + i * THREADS;
    {loads['b'][0]}
    b_next[i] = n0 + r < N && k0 + kk < k_end ? {loads['b'][1]} : 0.0f;
  }}
}}

// A thread's COUNT values of one k-row of a shared tile: COUNT / 4 float4s, SPREAD floats apart.
template <int COUNT, int SPREAD>
__device__ __forceinline__ void load_fragment(const float* row, float (&values)[COUNT]) {{
#pragma unroll
  for (int c = 0; c < COUNT / 4; ++c) {{
    const float4 v = *reinterpret_cast<const float4*>(row + c * SPREAD);
    values[4 * c] = v.x;
    values[4 * c + 1] = v.y;
    values[4 * c + 2] = v.z;
    values[4 * c + 3] = v.w;
  }}
}}

// The registers of load_tiles into shared buffer 0 or 1, k-major.
__device__ __forceinline__ void store_tiles(float* a_shared, float* b_shared, const float (&a_next)[A_LOADS],
                                            const float (&b_next)[B_LOADS], int buffer) {{
  const int tid = threadIdx.x;
#pragma unroll
  for (int i = 0; i < A_LOADS; ++i) {{
    const int e = tid + i * THREADS;
    {loads['a'][0]}
    a_shared[(buffer * BK + kk) * A_STRIDE + r] = a_next[i];
  }}
#pragma unroll
  for (int i = 0; i < B_LOADS; ++i) {{
    const int e = tid + i * THREADS;
    {loads['b'][0]}
    b_shared[(buffer * BK + kk) * B_STRIDE + r] = b_next[i];
  }}
}}

extern "C" __global__ void __launch_bounds__(THREADS)
matmul(const float* __restrict__ A, const float* __restrict__ B, {bias_param}float* __restrict__ out, int M, int N,
       int K) {{
  extern __shared__ float4 shared_memory[];
  float* const a_shared = reinterpret_cast<float*>(shared_memory);  // [2][BK][A_STRIDE]
  float* const b_shared = a_shared + 2 * BK * A_STRIDE;              // [2][BK][B_STRIDE]
  const int tid = threadIdx.x;
  const int tiles_m = (M + BM - 1) / BM;
  const int tiles_n = (N + BN - 1) / BN;
  const int per_group = GROUP * tiles_n;
  const int first_m = (blockIdx.x / per_group) * GROUP;
  const int group_rows = min(tiles_m - first_m, GROUP);
  const int in_group = blockIdx.x % per_group;
  const int m0 = (first_m + in_group % group_rows) * BM;
  const int n0 = (in_group / group_rows) * BN;
  const int tx = tid % (BN / TN);
  const int ty = tid / (BN / TN);
{k_range}
  float acc[TM][TN];
#pragma unroll
  for (int i = 0; i < TM; ++i) {{
#pragma unroll
    for (int j = 0; j < TN; ++j) acc[i][j] = 0.0f;
  }}
  float a_next[A_LOADS];
  float b_next[B_LOADS];
  const int steps = k_end > k_begin ? (k_end - k_begin + BK - 1) / BK : 0;
  if (steps > 0) {{
    load_tiles(A, B, a_next, b_next, m0, n0, k_begin, k_end, M, N, K);
    store_tiles(a_shared, b_shared, a_next, b_next, 0);
  }}
  __syncthreads();
  for (int step = 0; step < steps; ++step) {{
    const int buffer = step & 1;
    if (step + 1 < steps) load_tiles(A, B, a_next, b_next, m0, n0, k_begin + (step + 1) * BK, k_end, M, N, K);
    const float* a_tile = a_shared + buffer * BK * A_STRIDE + ty * 4;
    const float* b_tile = b_shared + buffer * BK * B_STRIDE + tx * 4;
#pragma unroll
    for (int kk = 0; kk < BK; ++kk) {{
      float a[TM];
      float b[TN];
      load_fragment<TM, BM / (TM / 4)>(a_tile + kk * A_STRIDE, a);
      load_fragment<TN, BN / (TN / 4)>(b_tile + kk * B_STRIDE, b);
#pragma unroll
      for (int i = 0; i < TM; ++i) {{
#pragma unroll
        for (int j = 0; j < TN; ++j) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
      }}
    }}
    if (step + 1 < steps) store_tiles(a_shared, b_shared, a_next, b_next, buffer ^ 1);
    __syncthreads();
  }}

  // Row i of the sub-tile is row (i / 4) * (BM / (TM / 4)) + 4 ty + i % 4 of the block's tile; likewise columns.
  const bool vector_rows = (N & 3) == 0;
#pragma unroll
  for (int i = 0; i < TM; ++i) {{
    const int row = m0 + (i / 4) * (BM / (TM / 4)) + ty * 4 + i % 4;
    if (row >= M) continue;
    float* const out_row = out + (long long)row * N;
#pragma unroll
    for (int c = 0; c < TN / 4; ++c) {{
      const int col = n0 + c * (BN / (TN / 4)) + tx * 4;
      float values[4];
#pragma unroll
      for (int e = 0; e < 4; ++e) {{
        const float value = col + e < N ? epilogue(acc[i][4 * c + e], {bias_value}) : 0.0f;
        values[e] = {keep};
      }}
      if (vector_rows && col + 3 < N) {{
        *reinterpret_cast<float4*>(out_row + col) = make_float4(values[0], values[1], values[2], values[3]);
      }} else {{
#pragma unroll
        for (int e = 0; e < 4; ++e) {{
          if (col + e < N) out_row[col + e] = values[e];
        }}
      }}
    }}
  }}
}}
"""


TRITON_POINTERS = {
    # layout -> (pointer line, step per K tile, load mask, the dot's operand). Each tile is loaded with the
    # operand's contiguous dimension last where the layout allows, so that the loads coalesce; B stored
    # (N, K) is loaded as its (BN, BK) rows and transposed in registers (tl.trans), which runs about twice
    # as fast on an H100 as loading the (BK, BN) view strided along BN.
    "mk": ("a_ptrs = a_ptr + rows.to(tl.int64)[:, None] * k + (k_start + ks)[None, :]  # (BM, BK)", "BK",
           "row_mask[:, None] & k_mask[None, :]", "a"),
    "km": ("a_ptrs = a_ptr + (k_start + ks).to(tl.int64)[None, :] * m + rows[:, None]  # (BM, BK) of A.T", "BK * m",
           "row_mask[:, None] & k_mask[None, :]", "a"),
    "kn": ("b_ptrs = b_ptr + (k_start + ks).to(tl.int64)[:, None] * n + cols[None, :]  # (BK, BN)", "BK * n",
           "k_mask[:, None] & col_mask[None, :]", "b"),
    "nk": ("b_ptrs = b_ptr + cols.to(tl.int64)[:, None] * k + (k_start + ks)[None, :]  # (BN, BK): rows of B", "BK",
           "col_mask[:, None] & k_mask[None, :]", "tl.trans(b)"),
}


def triton_seed(p: Problem) -> str:
    d = {**TRITON_DEFAULTS, **p.triton_defaults}
    bias_param = "bias_ptr, " if p.epilogue.bias else ""
    bias_arg = f"{p.epilogue.bias}, " if p.epilogue.bias else ""
    a_ptrs, a_step, a_mask, a_operand = TRITON_POINTERS[p.a_layout]
    b_ptrs, b_step, b_mask, b_operand = TRITON_POINTERS[p.b_layout]
    k_range = ("    # Only k in [col0, row0 + BM) meets the lower triangles of both A and B; tiles above the diagonal\n"
               "    # run no step and store zeros.\n"
               "    k_start = pid_n * BN\n    k_end = tl.minimum(k, pid_m * BM + BM)\n") if p.lower else \
              "    k_start = 0\n    k_end = k\n"
    bias_load = ("    bias = tl.load(bias_ptr + cols, mask=col_mask, other=0.0)\n" if p.epilogue.bias else "")
    keep = ("    y = tl.where(cols[None, :] <= rows[:, None], y, 0.0)\n" if p.lower else "")
    header = [
        f"{p.title}{sizes_line(p)}.",
        f"Float32 matrix product: each program computes a BM x BN tile of out, advancing K BK at a time; "
        f"tl.dot with input_precision=\"ieee\" keeps full float32 products (TF32 fails the tolerance), and the "
        f"compiler stages the tiles through shared memory, STAGES deep. {LAYOUT_WORDS[p.a_layout]}; "
        f"{LAYOUT_WORDS[p.b_layout]}: the tiles are read in place, no transposed copy in memory. Programs are "
        f"numbered in groups of GROUP tile rows for L2 reuse. Edges are masked loads (zeros) and masked stores.",
    ]
    if p.epilogue.bias or p.epilogue.triton != "y = z":
        header.append(f"Fused epilogue: {p.epilogue.what}, in registers before the only store.")
    if p.note:
        header.append(p.note)
    text = "\n#\n".join(comment(h, "#") for h in header)
    return f"""{text}
# @tune BM = {d['BM']} in {{32, 64, 128}}
# @tune BN = {d['BN']} in {{32, 64, 128}}
# @tune BK = {d['BK']} in {{16, 32, 64}}
# @tune GROUP = {d['GROUP']} in {{1, 4, 8, 16}}
# @tune WARPS = {d['WARPS']} in {{4, 8}}
# @tune STAGES = {d['STAGES']} in {{2, 3, 4}}
# @launch matmul[ceil_div({p.m}, BM) * ceil_div({p.n}, BN)]({p.a}, {p.b}, {bias_arg}out, {p.m}, {p.n}, {p.k}, BM=BM, BN=BN, BK=BK, GROUP=GROUP) num_warps=WARPS num_stages=STAGES

import triton
import triton.language as tl


@triton.jit
def matmul(a_ptr, b_ptr, {bias_param}c_ptr, m, n, k, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr,
           GROUP: tl.constexpr):
    pid = tl.program_id(0)
    tiles_m = tl.cdiv(m, BM)
    tiles_n = tl.cdiv(n, BN)
    per_group = GROUP * tiles_n
    first_m = (pid // per_group) * GROUP
    group_rows = tl.minimum(tiles_m - first_m, GROUP)
    pid_m = first_m + (pid % per_group) % group_rows
    pid_n = (pid % per_group) // group_rows

    rows = pid_m * BM + tl.arange(0, BM)
    cols = pid_n * BN + tl.arange(0, BN)
    ks = tl.arange(0, BK)
{k_range}    {a_ptrs}
    {b_ptrs}
    row_mask = rows < m
    col_mask = cols < n
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k0 in range(k_start, k_end, BK):
        k_mask = (k0 + ks) < k_end
        a = tl.load(a_ptrs, mask={a_mask}, other=0.0)
        b = tl.load(b_ptrs, mask={b_mask}, other=0.0)
        acc = tl.dot({a_operand}, {b_operand}, acc, input_precision="ieee")
        a_ptrs += {a_step}
        b_ptrs += {b_step}
    z = acc
{bias_load}    {p.epilogue.triton}
{keep}    c_ptrs = c_ptr + rows.to(tl.int64)[:, None] * n + cols[None, :]
    tl.store(c_ptrs, y, mask=row_mask[:, None] & col_mask[None, :])
"""


OPENCL_AT = {
    # (operand, layout) -> the element (row, k) of A or (k, col) of B, from the layout's row-major storage.
    ("a", "mk"): "A[(long)(row) * K + (k)]", ("a", "km"): "A[(long)(k) * M + (row)]",
    ("b", "kn"): "B[(long)(k) * N + (col)]", ("b", "nk"): "B[(long)(col) * K + (k)]",
}


def opencl_epilogue(p: Problem) -> str:
    """The CUDA epilogue's body in OpenCL C, whose math functions are the same names without CUDA's float
    suffix (tanhf -> tanh, overloaded for float)."""
    return re.sub(r"\b(fmax|tanh|log1p|exp|erf)f\(", r"\1(", p.epilogue.cuda)


def opencl_seed(p: Problem) -> str:
    bias_param = "__global const float* restrict bias, " if p.epilogue.bias else ""
    bias_arg = f"{p.epilogue.bias}, " if p.epilogue.bias else ""
    bias_value = "bias[column]" if p.epilogue.bias else "0.0f"
    k_range = k_range_lines(p, "TILE")
    keep = "column <= row ? value : 0.0f" if p.lower else "value"
    header = [
        f"{p.title}{sizes_line(p)}, in OpenCL C.",
        f"Tiled float32 matrix product with fused multiply-adds, each sum in k order as the reference's. "
        f"{LAYOUT_WORDS[p.a_layout]}; {LAYOUT_WORDS[p.b_layout]}; out is (M, N) row-major.",
        "A work-group of TILE x (TILE / WPT) work-items computes a TILE x TILE tile of out, each work-item WPT "
        "values of one column, TILE / WPT rows apart. K advances TILE at a time: the group stages a TILE x TILE "
        "tile of A and one of B in local memory (zeros outside the matrices, so every size works), then each "
        "work-item reads its column of B's tile once per k and its WPT rows of A's.",
    ]
    if p.epilogue.bias or p.epilogue.cuda != "return v;":
        header.append(f"Fused epilogue: {p.epilogue.what}, before the only store.")
    if p.lower:
        header.append("Relies on the task's inputs being lower triangular (structure \"lower_triangular\" on A "
                      "and B): a tile of rows [m0, m0 + TILE) and columns [n0, n0 + TILE) only runs k over [n0, "
                      "m0 + TILE), tiles above the diagonal store zeros, and the upper triangle is stored as zeros, "
                      "as torch.tril does.")
    text = "\n//\n".join(comment(h, "//") for h in header)
    a_at = OPENCL_AT[("a", p.a_layout)].replace("(row)", "(m0 + r)").replace("(k)", "(k0 + tx)")
    b_at = OPENCL_AT[("b", p.b_layout)].replace("(k)", "(k0 + r)").replace("(col)", "(column)")
    epilogue = opencl_epilogue(p)  # its continuation lines are indented already
    return f"""{text}
// @tune TILE = 16 in {{8, 16, 32}}
// @tune WPT = 4 in {{1, 2, 4, 8}}
// @require TILE % WPT == 0
// @require TILE * (TILE / WPT) <= MAX_THREADS_PER_BLOCK
// @launch matmul<<<dim3(ceil_div({p.n}, TILE), ceil_div({p.m}, TILE)), dim3(TILE, TILE / WPT)>>>({p.a}, {p.b}, {bias_arg}out, {p.m}, {p.n}, {p.k})

#define RS (TILE / WPT)  // rows between a work-item's values

inline float epilogue(float v, float b) {{
  {epilogue}
}}

__kernel __attribute__((reqd_work_group_size(TILE, RS, 1)))
void matmul(__global const float* restrict A, __global const float* restrict B, {bias_param}__global float* restrict out,
    int M, int N, int K) {{
  __local float a_tile[TILE][TILE];
  __local float b_tile[TILE][TILE];
  const int tx = get_local_id(0);
  const int ty = get_local_id(1);
  const int m0 = get_group_id(1) * TILE;
  const int n0 = get_group_id(0) * TILE;
  const int column = n0 + tx;
{k_range}  float acc[WPT];
  for (int w = 0; w < WPT; ++w) acc[w] = 0.0f;
  for (int k0 = k_begin; k0 < k_end; k0 += TILE) {{
    for (int w = 0; w < WPT; ++w) {{
      const int r = ty + w * RS;
      a_tile[r][tx] = m0 + r < M && k0 + tx < K ? {a_at} : 0.0f;
      b_tile[r][tx] = k0 + r < K && column < N ? {b_at} : 0.0f;
    }}
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int k = 0; k < TILE; ++k) {{
      const float b = b_tile[k][tx];
      for (int w = 0; w < WPT; ++w) acc[w] = fma(a_tile[ty + w * RS][k], b, acc[w]);
    }}
    barrier(CLK_LOCAL_MEM_FENCE);
  }}
  for (int w = 0; w < WPT; ++w) {{
    const int row = m0 + ty + w * RS;
    if (row < M && column < N) {{
      const float value = epilogue(acc[w], {bias_value});
      out[(long)row * N + column] = {keep};
    }}
  }}
}}
"""


MEAN_LOSS_OPENCL = """
// The mean of the rows' losses: one work-group of 256 sums them in a fixed order.
__kernel __attribute__((reqd_work_group_size(256, 1, 1)))
void mean_loss(__global const float* restrict loss, __global float* restrict out, int rows) {
  __local float partial[256];
  const int lid = get_local_id(0);
  float sum = 0.0f;
  for (int i = lid; i < rows; i += 256) sum += loss[i];
  partial[lid] = sum;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int stride = 128; stride > 0; stride /= 2) {
    if (lid < stride) partial[lid] += partial[lid + stride];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (lid == 0) out[0] = partial[0] / rows;
}
"""


@dataclass
class Derived:
    """A KernelBench OpenCL seed written from a built-in task's OpenCL seed: its text with `edits` (each old
    text must be there once) and `appended` after it."""
    task: str
    builtin: str        # the built-in task whose seed.cl it starts from
    what: str           # the header: what the problem computes and how the built-in seed's names map to it
    edits: dict
    appended: str = ""


DERIVED_OPENCL = [
    Derived("kb_l1_40_layernorm", "layernorm",
            "nn.LayerNorm((features, dim1, dim2)) over x (batch_size, features, dim1, dim2), eps 1e-5: the rows of "
            "the built-in task's layer norm are x's batch_size rows of N = features * dim1 * dim2 values, gamma "
            "and beta are ln_weight and ln_bias.",
            {"// @launch layernorm<<<M, BLOCK>>>(x, gamma, beta, y, N)":
             "// @launch layernorm<<<batch_size, BLOCK>>>(x, ln_weight, ln_bias, out, features * dim1 * dim2)"}),
    Derived("kb_l1_95_crossentropyloss", "cross_entropy",
            "cross_entropy(predictions, targets), the mean over batch_size rows of num_classes logits: the built-in "
            "task's per-row loss into a workspace, then their mean. targets are int64; a target outside [0, "
            "num_classes) gives NaN (PyTorch raises an error) rather than a read out of bounds.",
            {"// @launch cross_entropy<<<M, BLOCK>>>(logits, targets, loss, V)":
             "// @workspace loss: float32[batch_size]\n"
             "// @launch cross_entropy<<<batch_size, BLOCK>>>(predictions, targets, loss, num_classes)\n"
             "// @launch mean_loss<<<1, 256>>>(loss, out, batch_size)",
             "__global const int* restrict targets": "__global const long* restrict targets",
             "    loss[get_group_id(0)] = maxima[0] + log(sums[0]) - row[targets[get_group_id(0)]];":
             "    const long target = targets[get_group_id(0)];\n"
             "    loss[get_group_id(0)] = target >= 0 && target < V ? maxima[0] + log(sums[0]) - row[target] : NAN;"},
            appended=MEAN_LOSS_OPENCL),
]


def derived_opencl_seed(d: Derived) -> str:
    builtin = Path(__file__).resolve().parent.parent / "tasks" / d.builtin / "seed.cl"
    text = builtin.read_text()
    for old, new in d.edits.items():
        if text.count(old) != 1:
            raise SystemExit(f"{builtin}: expected the text {old!r} once, to write {d.task}/seed.cl from it; "
                             f"update DERIVED_OPENCL in {Path(__file__).name}")
        text = text.replace(old, new)
    header = comment(f"{d.what} Written by tools/generate-kernelbench-seeds.py from tasks/{d.builtin}/seed.cl "
                     f"(edit them, not this file):", "//")
    return f"{header}\n//\n{text}{d.appended}"


def main() -> None:
    for problem in PROBLEMS:
        folder = OUT / problem.task
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "seed.cu").write_text(cuda_seed(problem))
        (folder / "seed.py").write_text(triton_seed(problem))
        (folder / "seed.cl").write_text(opencl_seed(problem))
    for derived in DERIVED_OPENCL:
        folder = OUT / derived.task
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "seed.cl").write_text(derived_opencl_seed(derived))
    print(f"wrote {len(PROBLEMS)} CUDA, {len(PROBLEMS)} Triton and {len(PROBLEMS) + len(DERIVED_OPENCL)} OpenCL seeds "
          f"under {OUT}")


main()
