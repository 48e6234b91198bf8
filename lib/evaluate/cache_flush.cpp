#include "evaluate/cache_flush.hpp"

#include <algorithm>
#include <string>

#include "evaluate/timing.hpp"

namespace kernelsmith::detail {
namespace {

// Grid-stride read of the whole buffer. The sink is written only when the folded words equal a value the
// buffer's fixed contents never give, which the compiler cannot know: the loads stay.
constexpr const char* kCudaFlushKernel = R"(
extern "C" __global__ void ks_cache_flush(const int4* __restrict__ data, long long n4, int* sink) {
  int folded = 0;
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n4; i += (long long)gridDim.x * blockDim.x) {
    const int4 v = data[i];
    folded ^= v.x ^ v.y ^ v.z ^ v.w;
  }
  if (folded == 0x2545F491) *sink = folded;
}
)";

constexpr const char* kOpenClFlushKernel = R"(
__kernel void ks_cache_flush(__global const int4* restrict data, long n4, __global int* sink) {
  int folded = 0;
  for (long i = get_global_id(0); i < n4; i += get_global_size(0)) {
    const int4 v = data[i];
    folded ^= v.x ^ v.y ^ v.z ^ v.w;
  }
  if (folded == 0x2545F491) *sink = folded;
}
)";

}  // namespace

CacheFlusher::CacheFlusher(Backend& backend, Method method) : backend_(backend) {
  const DeviceInfo& device = backend.device();
  bytes_ = l2_flush_bytes(device);
  bytes_ -= bytes_ % 16;
  buffer_ = backend.allocate(bytes_);
  if (method == Method::fill || (method == Method::automatic && !device.is_gpu)) return;
  try {
    // Words of 0x01010101 fold to 0 over any even count of them: never the sink's value.
    backend.fill(buffer_, 1, bytes_);
    const std::string language = backend.language();
    CompileOptions options;
    options.kernels = {"ks_cache_flush"};
    const CompiledProgram program =
        backend.compile(language == "opencl" ? kOpenClFlushKernel : kCudaFlushKernel, options);
    if (program.report.ok) {
      sink_ = backend.allocate(sizeof(int));
      module_ = backend.load(program);
      kernel_ = backend.kernel(module_, "ks_cache_flush");
      const int limit = device.max_threads_per_block > 0 ? device.max_threads_per_block : 256;
      const auto threads = static_cast<std::uint32_t>(std::min(limit, device.is_gpu ? 512 : 64));
      const auto units = static_cast<std::uint32_t>(std::max(device.compute_units, 1));
      block_ = {threads, 1, 1};
      grid_ = {units * (device.is_gpu ? 4u : 2u), 1, 1};
    }
  } catch (const DeviceFault&) {
    release();
    throw;
  } catch (const std::exception&) {
    // The built-in kernel is not buildable here: the fill fallback below still evicts.
    kernel_ = 0;
  }
}

CacheFlusher::~CacheFlusher() { release(); }

void CacheFlusher::release() {
  for (const std::uint64_t buffer : {buffer_, sink_}) {
    if (buffer == 0) continue;
    try {
      backend_.free(buffer);
    } catch (...) {
      // After a device fault freeing fails too; the fault is what gets reported.
    }
  }
  if (module_ != 0) {
    try {
      backend_.unload(module_);
    } catch (...) {
    }
  }
  buffer_ = sink_ = module_ = kernel_ = 0;
}

void CacheFlusher::flush() {
  if (kernel_ == 0) {
    // A different byte each time, so no layer can skip the writes as redundant.
    backend_.fill(buffer_, ++fill_byte_, bytes_);
    return;
  }
  backend_.launch(kernel_, grid_, block_, 0,
                  {{KernelArg::Kind::buffer, buffer_, 0},
                   {KernelArg::Kind::int64, 0, static_cast<std::int64_t>(bytes_ / 16)},
                   {KernelArg::Kind::buffer, sink_, 0}});
}

}  // namespace kernelsmith::detail
