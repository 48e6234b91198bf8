"""Writes the float32 matrix-product seeds of matmul and linear_gelu, CUDA and OpenCL, from one template,
so that the four stay the same tiled kernel (each candidate must be one self-contained file): the CUDA C++
text is the tasks' MACA seed (seed.maca; their CUDA seed.cu is the tensor-core product written by
tools/generate-matmul-seeds.py), the OpenCL seeds let PoCL check the tiling and edge logic in CI.

usage: python3 tools/generate-sgemm-seeds.py [TASKS_DIR]   (default: tasks/ of this checkout)

The template is written in CUDA C++; the OpenCL text is derived from it by the substitutions in OPENCL
below (qualifiers, work-item ids, barrier, vector loads). Edit the template here, regenerate, and run the
task suite's tests ([task_suite][opencl] and [task_suite][cuda][compile]).
"""
import re
import sys
from pathlib import Path

OUT = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parent.parent / "tasks"

DESIGN = """\
// A block of (BM / 8) x (BN / 8) threads computes a BM x BN tile of {out}, each thread 8 x 8 values held in
// registers as 2 x 2 sub-tiles of 4 x 4 that lie BM / 2 rows and BN / 2 columns apart: each k step a thread
// reads two float4 of {a} and two of {b} from shared memory (consecutive threads read consecutive float4,
// so the reads are free of bank conflicts) and does 64 multiply-adds with them.
// K advances BK at a time through two shared-memory buffers: the next tile's global loads are issued into
// registers before the multiply-adds on the current tile and stored into the other buffer after them, so
// their latency is hidden; one barrier per tile suffices, since a buffer is rewritten only after every
// thread has passed the barrier that follows its last reads.
{layout}\
// Global loads and the stores of {out} are float4 where the row length is a multiple of 4 and the base
// 16-byte aligned (tested at run time, the same for the whole grid); otherwise value by value. Values
// outside the matrices load as zeros and nothing is stored outside {out}, so every size is handled. Each
// sum runs in k order, as the reference's does.
"""

MATMUL_LAYOUT = """\
// The A tile is stored transposed (k-major, a_tile[k][m]) so that a thread's four rows are one float4;
// its rows are padded by 4 floats, which keeps the transposing stores free of bank conflicts for BK = 8.
// B is stored as it is (b_tile[k][n]).
"""

LINEAR_LAYOUT = """\
// Both operands are K-major (x is M x K, weight N x K: "NT"), so both tiles are read along k and stored
// transposed (x_tile[k][m], w_tile[k][n]) so that a thread's four rows or columns are one float4; their
// rows are padded by 4 floats, which keeps the transposing stores free of bank conflicts for BK = 8.
"""

PLAN = """\
// @tune BM = 128 in {{64, 128}}
// @tune BN = 128 in {{64, 128}}
// @tune BK = {bk} in {{8, 16}}
{occupancy}// @require (BM / 8) * (BN / 8) <= MAX_THREADS_PER_BLOCK
// @require 8 * BK * ({shared_row}) <= SMEM_PER_BLOCK
// @require BM * BK % (BM * BN / 16) == 0 && BK * BN % (BM * BN / 16) == 0
// @launch {name}<<<dim3(ceil_div(N, BN), ceil_div(M, BM)), (BM / 8) * (BN / 8)>>>({args})
"""

COMMON = """
#define THREADS ((BM / 8) * (BN / 8))
#define A_LOADS (BM * BK / 4 / THREADS)  // float4 chunks of the first operand's tile per thread
#define B_LOADS (BK * BN / 4 / THREADS)  // and of the second's

__device__ __forceinline__ bool aligned16(const float* pointer) {
  return (reinterpret_cast<unsigned long long>(pointer) & 15) == 0;
}

// Values col .. col + 3 of row `row` of a row-major matrix of `rows` rows of `length` values, zeros outside
// it. With `vectors` (length % 4 == 0, 16-byte aligned base) the four are wholly inside or wholly outside.
__device__ __forceinline__ float4 load4(const float* __restrict__ matrix, int rows, int length, int row, int col,
    bool vectors) {
  const float* p = matrix + (long long)row * length + col;
  if (vectors) {
    return row < rows && col < length ? *reinterpret_cast<const float4*>(p) : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
  }
  return make_float4(row < rows && col < length ? p[0] : 0.0f, row < rows && col + 1 < length ? p[1] : 0.0f,
      row < rows && col + 2 < length ? p[2] : 0.0f, row < rows && col + 3 < length ? p[3] : 0.0f);
}
"""

# The kernel body; {a}, {b} name the operands' shared tiles, {loads} / {stores} fill and store the staging
# registers, {epilogue} writes the output.
BODY = """
extern "C" __global__ void __launch_bounds__(THREADS, MIN_BLOCKS)
{name}({params}) {{
  __shared__ __align__(16) float {a}[2][BK][BM + 4];
  __shared__ __align__(16) float {b}[2][BK][{b_row}];
  const int tx = threadIdx.x % (BN / 8);
  const int ty = threadIdx.x / (BN / 8);
  const int block_m = blockIdx.y * BM;
  const int block_n = blockIdx.x * BN;
{vectors}
  float acc[8][8];
#pragma unroll
  for (int i = 0; i < 8; ++i) {{
#pragma unroll
    for (int j = 0; j < 8; ++j) acc[i][j] = 0.0f;
  }}
  float4 a_next[A_LOADS];
  float4 b_next[B_LOADS];
  const int tiles = (K + BK - 1) / BK;
{loads_first}
  for (int t = 0; t < tiles; ++t) {{
    const int buffer = t & 1;
    // Tile t into the buffer read two tiles ago: every thread has passed the barrier after those reads.
{stores}
    __syncthreads();
    if (t + 1 < tiles) {{  // in flight during the multiply-adds below
{loads_next}
    }}
#pragma unroll
    for (int k = 0; k < BK; ++k) {{
      const float4 a0 = *reinterpret_cast<const float4*>(&{a}[buffer][k][ty * 4]);
      const float4 a1 = *reinterpret_cast<const float4*>(&{a}[buffer][k][BM / 2 + ty * 4]);
      const float4 b0 = *reinterpret_cast<const float4*>(&{b}[buffer][k][tx * 4]);
      const float4 b1 = *reinterpret_cast<const float4*>(&{b}[buffer][k][BN / 2 + tx * 4]);
      const float a[8] = {{a0.x, a0.y, a0.z, a0.w, a1.x, a1.y, a1.z, a1.w}};
      const float b[8] = {{b0.x, b0.y, b0.z, b0.w, b1.x, b1.y, b1.z, b1.w}};
#pragma unroll
      for (int i = 0; i < 8; ++i) {{
#pragma unroll
        for (int j = 0; j < 8; ++j) acc[i][j] += a[i] * b[j];
      }}
    }}
  }}
{epilogue}
}}
"""


def rows_loads(indent, target, matrix, rows, k0, vectors, first_row):
    """Loads of a K-major tile: chunk c is row c / (BK / 4) and k values 4 * (c % (BK / 4)) .. + 3, so
    consecutive threads read along a row."""
    k0 = "" if k0 == "0" else k0 + " + "
    return f"""#pragma unroll
{indent}for (int l = 0; l < {target[0].upper()}_LOADS; ++l) {{
{indent}  const int c = threadIdx.x + l * THREADS;
{indent}  {target}[l] = load4({matrix}, {rows}, K, {first_row} + c / (BK / 4), {k0}(c % (BK / 4)) * 4, {vectors});
{indent}}}"""


def rows_stores(indent, target, tile):
    """Stores a K-major tile's chunks transposed: a chunk's four k values go to four rows of the tile."""
    return f"""#pragma unroll
{indent}for (int l = 0; l < {target[0].upper()}_LOADS; ++l) {{
{indent}  const int c = threadIdx.x + l * THREADS;
{indent}  const int r = c / (BK / 4);
{indent}  const int k = (c % (BK / 4)) * 4;
{indent}  {tile}[buffer][k][r] = {target}[l].x;
{indent}  {tile}[buffer][k + 1][r] = {target}[l].y;
{indent}  {tile}[buffer][k + 2][r] = {target}[l].z;
{indent}  {tile}[buffer][k + 3][r] = {target}[l].w;
{indent}}}"""


def matmul_b_loads(indent, k0):
    """Loads of a B tile (k-rows of B): chunk c is k row c / (BN / 4) and columns 4 * (c % (BN / 4)) .. + 3."""
    k0 = "" if k0 == "0" else k0 + " + "
    return f"""#pragma unroll
{indent}for (int l = 0; l < B_LOADS; ++l) {{
{indent}  const int c = threadIdx.x + l * THREADS;
{indent}  b_next[l] = load4(B, K, N, {k0}c / (BN / 4), block_n + (c % (BN / 4)) * 4, b_vectors);
{indent}}}"""


MATMUL_B_STORES = """#pragma unroll
    for (int l = 0; l < B_LOADS; ++l) {
      const int c = threadIdx.x + l * THREADS;
      *reinterpret_cast<float4*>(&b_tile[buffer][c / (BN / 4)][(c % (BN / 4)) * 4]) = b_next[l];
    }"""

# Row i of a thread's 8 x 8 values is tile row (i / 4) * (BM / 2) + ty * 4 + i % 4; values h * 4 .. + 3 are
# tile columns h * (BN / 2) + tx * 4 .. + 3.
MATMUL_EPILOGUE = """#pragma unroll
  for (int i = 0; i < 8; ++i) {
    const int row = block_m + (i / 4) * (BM / 2) + ty * 4 + i % 4;
    if (row >= M) continue;
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int col = block_n + h * (BN / 2) + tx * 4;
      float* out = C + (long long)row * N + col;
      if (c_vectors) {
        if (col < N) {
          *reinterpret_cast<float4*>(out) =
              make_float4(acc[i][h * 4], acc[i][h * 4 + 1], acc[i][h * 4 + 2], acc[i][h * 4 + 3]);
        }
      } else {
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          if (col + e < N) out[e] = acc[i][h * 4 + e];
        }
      }
    }
  }"""

LINEAR_EPILOGUE = """#pragma unroll
  for (int h = 0; h < 2; ++h) {
    const int col = block_n + h * (BN / 2) + tx * 4;
    float b[4];
#pragma unroll
    for (int e = 0; e < 4; ++e) b[e] = col + e < N ? bias[col + e] : 0.0f;
#pragma unroll
    for (int i = 0; i < 8; ++i) {
      const int row = block_m + (i / 4) * (BM / 2) + ty * 4 + i % 4;
      if (row >= M) continue;
      float v[4];
#pragma unroll
      for (int e = 0; e < 4; ++e) v[e] = gelu_tanh(acc[i][h * 4 + e] + b[e]);
      float* out = y + (long long)row * N + col;
      if (store_vectors) {
        if (col < N) *reinterpret_cast<float4*>(out) = make_float4(v[0], v[1], v[2], v[3]);
      } else {
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          if (col + e < N) out[e] = v[e];
        }
      }
    }
  }"""

GELU = """
__device__ __forceinline__ float gelu_tanh(float z) {
  const float c = 0.7978845608028654f;  // sqrt(2 / pi)
  return 0.5f * z * (1.0f + tanhf(c * (z + 0.044715f * z * z * z)));
}
"""


# The default reduction step of each seed: 16 was the faster on an H100 for both (bench/bench_seeds.py,
# docs/tasks.md), but matmul's kernel at BK = 16 spills 8 bytes under its default two-blocks-per-SM
# register cap, and a shipped seed must not spill (tests/cpp/test_task_suite.cpp); linear_gelu's does not.
MATMUL_BK = 8
LINEAR_GELU_BK = 16


def matmul():
    header = ("// Matrix product seed (float32 FMA@FMA@; no TF32, which fails the tolerance).\n"
              + DESIGN.format(out="C", a="A", b="B", layout=MATMUL_LAYOUT)
              + "@NOTE@"
              + PLAN.format(occupancy="@OCCUPANCY@", shared_row="BM + 4 + BN", name="matmul", bk=MATMUL_BK,
                            args="A, B, C, M, N, K"))
    body = COMMON + BODY.format(
        name="matmul",
        params="const float* __restrict__ A, const float* __restrict__ B,\n"
               "    float* __restrict__ C, int M, int N, int K",
        a="a_tile", b="b_tile", b_row="BN",
        vectors="  const bool a_vectors = K % 4 == 0 && aligned16(A);\n"
                "  const bool b_vectors = N % 4 == 0 && aligned16(B);\n"
                "  const bool c_vectors = N % 4 == 0 && aligned16(C);",
        loads_first=rows_loads("  ", "a_next", "A", "M", "0", "a_vectors", "block_m") + "\n"
                    + matmul_b_loads("  ", "0"),
        loads_next=rows_loads("      ", "a_next", "A", "M", "(t + 1) * BK", "a_vectors", "block_m") + "\n"
                   + matmul_b_loads("      ", "(t + 1) * BK"),
        stores=rows_stores("    ", "a_next", "a_tile") + "\n" + MATMUL_B_STORES,
        epilogue=MATMUL_EPILOGUE)
    return header, body


def linear_gelu():
    header = ("// Fused linear + bias + GELU seed (float32 FMA@FMA@; no TF32, which fails the tolerance).\n"
              + DESIGN.format(out="y", a="x", b="weight", layout=LINEAR_LAYOUT)
              + "// The epilogue adds the bias and applies GELU (tanh form, as the task defines it) before the only\n"
                "// store of y.\n"
              + "@NOTE@"
              + PLAN.format(occupancy="@OCCUPANCY@", shared_row="BM + BN + 8", name="linear_gelu", bk=LINEAR_GELU_BK,
                            args="x, weight, bias, y, M, N, K"))
    body = COMMON + GELU + BODY.format(
        name="linear_gelu",
        params="const float* __restrict__ x, const float* __restrict__ weight,\n"
               "    const float* __restrict__ bias, float* __restrict__ y, int M, int N, int K",
        a="x_tile", b="w_tile", b_row="BN + 4",
        vectors="  const bool load_vectors = K % 4 == 0 && aligned16(x) && aligned16(weight);\n"
                "  const bool store_vectors = N % 4 == 0 && aligned16(y);",
        loads_first=rows_loads("  ", "a_next", "x", "M", "0", "load_vectors", "block_m") + "\n"
                    + rows_loads("  ", "b_next", "weight", "N", "0", "load_vectors", "block_n"),
        loads_next=rows_loads("      ", "a_next", "x", "M", "(t + 1) * BK", "load_vectors", "block_m") + "\n"
                   + rows_loads("      ", "b_next", "weight", "N", "(t + 1) * BK", "load_vectors", "block_n"),
        stores=rows_stores("    ", "a_next", "x_tile") + "\n" + rows_stores("    ", "b_next", "w_tile"),
        epilogue=LINEAR_EPILOGUE)
    return header, body


# MIN_BLOCKS (CUDA only): blocks per SM that the register allocation must allow (__launch_bounds__).
CUDA_OCCUPANCY = "// @tune MIN_BLOCKS = 2 in {1, 2}\n"
CUDA_NOTE = ("// MIN_BLOCKS is the number of blocks per SM the register allocation must leave room for: 2 blocks\n"
             "// of 256 threads cap a thread at 128 registers and give each SM 16 warps to hide latency with.\n"
             "// Plain CUDA C++ without inline assembly or warp-level code, for MACA (the CUDA seed, seed.cu, uses the\n"
             "// tensor cores: tools/generate-matmul-seeds.py).\n"
             "// Written by tools/generate-sgemm-seeds.py with the task's OpenCL seed; edit the template there.\n")
OPENCL_NOTE = ("// The OpenCL C twin of seed.maca (a work-group of THREADS work-items, local memory for shared memory),\n"
               "// written from the same template by tools/generate-sgemm-seeds.py; edit the template there.\n")

# CUDA C++ -> OpenCL C 1.2. Every pointer of the template is a global buffer; the tiles are local arrays.
OPENCL = [
    (r'extern "C" __global__ void __launch_bounds__\(THREADS, MIN_BLOCKS\)\n',
     "__kernel __attribute__((reqd_work_group_size(THREADS, 1, 1)))\nvoid "),
    (r"__shared__ __align__\(16\) float", "__local float"),
    (r"__device__ __forceinline__ ", "inline "),
    (r"\(reinterpret_cast<unsigned long long>\(pointer\) & 15\)", "((ulong)pointer & 15)"),
    (r"\*reinterpret_cast<float4\*>\(([^;]*?)\) =\s*([^;]*);", r"vstore4(\2, 0, \1);"),
    (r"\*reinterpret_cast<const float4\*>\(([^()]*)\)", r"vload4(0, \1)"),
    (r"make_float4\(0\.0f, 0\.0f, 0\.0f, 0\.0f\)", "(float4)(0.0f)"),
    (r"make_float4\(", "(float4)("),
    (r"(const )?float\* ", lambda m: f"__global {m.group(1) or ''}float* "),
    (r"__restrict__", "restrict"),
    (r"long long", "long"),
    (r"threadIdx\.x", "(int)get_local_id(0)"),
    (r"blockIdx\.([xy])", lambda m: f"(int)get_group_id({'xy'.index(m.group(1))})"),
    (r"__syncthreads\(\)", "barrier(CLK_LOCAL_MEM_FENCE)"),
    (r"tanhf\(", "tanh("),
]


def opencl(text):
    for pattern, replacement in OPENCL:
        text = re.sub(pattern, replacement, text)
    leftover = re.findall(r"reinterpret_cast|__shared__|__device__|threadIdx|blockIdx|make_float4", text)
    if leftover:
        raise SystemExit(f"generate-sgemm-seeds: the OpenCL text still has CUDA constructs: {sorted(set(leftover))}")
    return text


for task, make in (("matmul", matmul), ("linear_gelu", linear_gelu)):
    header, body = make()
    (OUT / task).mkdir(parents=True, exist_ok=True)
    cuda_header = (header.replace("@FMA@", " on the CUDA cores").replace("@NOTE@", CUDA_NOTE)
                   .replace("@OCCUPANCY@", CUDA_OCCUPANCY))
    (OUT / task / "seed.maca").write_text(cuda_header + body)
    opencl_header = header.replace("@FMA@", "").replace("@NOTE@", OPENCL_NOTE).replace("@OCCUPANCY@", "")
    (OUT / task / "seed.cl").write_text(opencl_header + opencl(body))
print("wrote the seeds under", OUT)
