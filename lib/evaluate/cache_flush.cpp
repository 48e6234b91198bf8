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
  buffer_ = allocate_buffer(backend, bytes_);
  if (method == Method::fill || (method == Method::automatic && !device.is_gpu)) return;
  try {
    // Words of 0x01010101 fold to 0 over any even count of them: never the sink's value.
    backend.fill(buffer_.get(), 1, bytes_);
    const std::string language = backend.language();
    CompileOptions options;
    options.kernels = {"ks_cache_flush"};
    const CompiledProgram program =
        backend.compile(language == "opencl" ? kOpenClFlushKernel : kCudaFlushKernel, options);
    if (program.report.ok) {
      sink_ = allocate_buffer(backend, sizeof(int));
      module_ = load_module(backend, program);
      kernel_ = backend.kernel(module_.get(), "ks_cache_flush");
      const int limit = device.max_threads_per_block > 0 ? device.max_threads_per_block : 256;
      const auto threads = static_cast<std::uint32_t>(std::min(limit, device.is_gpu ? 512 : 64));
      const auto units = static_cast<std::uint32_t>(std::max(device.compute_units, 1));
      block_ = {threads, 1, 1};
      grid_ = {units * (device.is_gpu ? 4u : 2u), 1, 1};
    }
  } catch (const DeviceFault&) {
    throw;  // the members own what was made so far and give it back
  } catch (const std::exception&) {
    // The built-in kernel is not buildable here: the fill fallback below still evicts.
    kernel_ = 0;
    module_.reset();
    sink_.reset();
  }
}

void CacheFlusher::flush() {
  if (kernel_ == 0) {
    // A different byte each time, so no layer can skip the writes as redundant.
    backend_.fill(buffer_.get(), ++fill_byte_, bytes_);
    return;
  }
  backend_.launch(kernel_, grid_, block_, 0,
                  {{KernelArg::Kind::buffer, buffer_.get(), 0},
                   {KernelArg::Kind::int64, 0, static_cast<std::int64_t>(bytes_ / 16)},
                   {KernelArg::Kind::buffer, sink_.get(), 0}});
}

}  // namespace kernelsmith::detail
