"""How the way the L2 is evicted before a timed sample changes the sample: side by side, one run.

Kernels that read 64-256 MiB (a row sum) and copies of 64 and 256 MiB, timed with CUDA events after: no
eviction; a memset of twice the L2 (what triton's do_bench and kernelsmith before it did); a read of twice
the L2 (what kernelsmith does: lib/evaluate/cache_flush.hpp); a memset then a read. A memset leaves the L2
full of dirty lines that are written back while the timed kernel runs; a read leaves clean lines.
Prints the median time and the bandwidth each way. Needs a CUDA GPU and CuPy:

    python3 bench/bench_cache_flush.py
"""
import cupy as cp, numpy as np
src = r'''
extern "C" __global__ void row_sum4(const float4* __restrict__ x, float* y, int K4) {
  const float4* row = x + (size_t)blockIdx.x * K4; float s = 0.f;
  for (int k = threadIdx.x; k < K4; k += blockDim.x) { float4 v = row[k]; s += v.x + v.y + v.z + v.w; }
  __shared__ float p[32]; for (int o = 16; o; o >>= 1) s += __shfl_xor_sync(~0u, s, o);
  if (threadIdx.x % 32 == 0) p[threadIdx.x / 32] = s; __syncthreads();
  if (threadIdx.x < 32) { s = threadIdx.x < blockDim.x / 32 ? p[threadIdx.x] : 0.f;
    for (int o = 16; o; o >>= 1) s += __shfl_xor_sync(~0u, s, o); if (threadIdx.x == 0) y[blockIdx.x] = s; }
}
extern "C" __global__ void copy4(const float4* __restrict__ x, float4* y, long long n) {
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) y[i] = x[i];
}
extern "C" __global__ void read_flush(const int4* __restrict__ x, long long n, int* sink) {
  int s = 0;
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) { int4 v = x[i]; s ^= v.x ^ v.y ^ v.z ^ v.w; }
  if (s == 0x7fffffff) *sink = s;
}
'''
mod = cp.RawModule(code=src)
row_sum4, copy4, read_flush = (mod.get_function(n) for n in ("row_sum4", "copy4", "read_flush"))
dev = cp.cuda.Device()
l2 = dev.attributes["L2CacheSize"]; sms = dev.attributes["MultiProcessorCount"]
flush = cp.zeros(2 * l2 // 4, dtype=cp.int32); sink = cp.zeros(1, dtype=cp.int32)
def write_flush(k): cp.cuda.runtime.memsetAsync(flush.data.ptr, k & 255, flush.nbytes, 0)
def rflush(): read_flush((sms * 8,), (512,), (flush, np.int64(flush.size // 4), sink))
def timeit(run, pre, reps=300):
    s, e = cp.cuda.Event(), cp.cuda.Event(); out = []
    for i in range(reps):
        pre(i); s.record(); run(); e.record(); e.synchronize(); out.append(cp.cuda.get_elapsed_time(s, e))
    return float(np.median(out)) * 1e3
cases = {}
for rows, K in ((4096, 4096), (4096, 8192), (8192, 8192)):
    x = cp.random.rand(rows * K, dtype=cp.float32); y = cp.zeros(rows, cp.float32)
    cases[f"row_sum {rows}x{K} ({x.nbytes>>20} MiB read)"] = (x.nbytes, lambda x=x, y=y, rows=rows, K=K: row_sum4((rows,), (256,), (x, y, np.int32(K // 4))))
for mib in (64, 256):
    a = cp.random.rand(mib << 18, dtype=cp.float32); b = cp.empty_like(a)
    cases[f"copy {mib} MiB"] = (2 * a.nbytes, lambda a=a, b=b: copy4((sms * 16,), (512,), (a, b, np.int64(a.size // 4))))
pres = {"none": lambda i: None, "memset": write_flush, "read": lambda i: rflush(), "memset+read": lambda i: (write_flush(i), rflush())}
for name, (nbytes, run) in cases.items():
    row = []
    for pname, pre in pres.items():
        us = timeit(run, pre); row.append(f"{pname} {us:7.1f} us {nbytes/us/1e3:6.0f} GB/s")
    print(f"{name:34s} | " + " | ".join(row), flush=True)
