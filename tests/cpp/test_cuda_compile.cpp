// The CUDA compile stage with NVRTC and no device (what CI runs): cubins for sm_90, the resources ptxas
// reports, compile errors with their line, toolkit headers, defines, name expressions and the timeout.
#include "kernelsmith/config.hpp"

#if KERNELSMITH_ENABLE_CUDA

#include <string>
#include <thread>
#include <vector>

#include "catch.hpp"
#include "cuda/nvrtc_api.hpp"
#include "cuda/nvrtc_compile.hpp"
#include "backend_registry.hpp"
#include "kernelsmith/backend.hpp"
#include "kernelsmith/error.hpp"

namespace {

using namespace kernelsmith;

CompileOptions for_target(const std::string& target) {
  CompileOptions options;
  options.target = target;
  return options;
}

const KernelResources* find_kernel(const CompileReport& report, const std::string& name) {
  for (const auto& kernel : report.kernels) {
    if (kernel.name == name) return &kernel;
  }
  return nullptr;
}

const char* const kRelu = R"(// @launch relu<<<ceil_div(N, 256), 256>>>(x, y, N)
extern "C" __global__ void relu(const float* __restrict__ x, float* __restrict__ y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = fmaxf(x[i], 0.0f);
}
)";

}  // namespace

TEST_CASE("a good kernel compiles to an sm_90 cubin with its resources", "[cuda][compile]") {
  const CompiledProgram program = compile_offline("cuda", kRelu, for_target("sm_90"));
  INFO(program.report.log);
  REQUIRE(program.report.ok);
  CHECK(program.language == "cuda");
  CHECK(program.target == "sm_90");
  CHECK(program.report.target == "sm_90");
  CHECK(program.report.seconds > 0.0);
  REQUIRE(program.binary.size() > 4);
  // A cubin is an ELF file.
  CHECK(program.binary[0] == 0x7f);
  CHECK(program.binary[1] == 'E');
  CHECK(program.binary[2] == 'L');
  CHECK(program.binary[3] == 'F');
  CHECK(program.symbols.empty());  // extern "C": the symbol is the name

  const KernelResources* relu = find_kernel(program.report, "relu");
  REQUIRE(relu != nullptr);
  CHECK(relu->registers > 0);
  CHECK(relu->spill_store_bytes == 0);
  CHECK(relu->spill_load_bytes == 0);
  CHECK(relu->stack_bytes == 0);
  CHECK(relu->shared_bytes == 0);
}

TEST_CASE("register pressure under __launch_bounds__ shows up as spills", "[cuda][compile]") {
  // 1024 threads x 2 blocks per SM leave 32 registers per thread; 64 live accumulators do not fit.
  const char* source = R"(
extern "C" __global__ void __launch_bounds__(1024, 2) pressure(float* y, int stride) {
  float a[64];
  #pragma unroll
  for (int i = 0; i < 64; ++i) a[i] = y[i * stride + threadIdx.x];
  float sum = 0.0f;
  #pragma unroll
  for (int j = 0; j < 8; ++j) {
    #pragma unroll
    for (int i = 0; i < 64; ++i) sum += a[i] * a[(i + j) & 63];
  }
  y[threadIdx.x] = sum;
}
)";
  const CompiledProgram program = compile_offline("cuda", source, for_target("sm_90"));
  INFO(program.report.log);
  REQUIRE(program.report.ok);
  const KernelResources* kernel = find_kernel(program.report, "pressure");
  REQUIRE(kernel != nullptr);
  CHECK(kernel->registers <= 32);
  CHECK(kernel->spill_store_bytes > 0);
  CHECK(kernel->spill_load_bytes > 0);
  CHECK(kernel->stack_bytes > 0);
}

TEST_CASE("a syntax error is a failed report whose log names the line", "[cuda][compile]") {
  const char* source = "extern \"C\" __global__ void broken(float* y) {\n"
                       "  y[threadIdx.x] = 1.0f\n"  // missing semicolon
                       "  y[0] = undefined_name;\n"
                       "}\n";
  CompiledProgram program;
  REQUIRE_NOTHROW(program = compile_offline("cuda", source, for_target("sm_90")));
  INFO(program.report.log);
  CHECK_FALSE(program.report.ok);
  CHECK(program.binary.empty());
  CHECK(program.report.log.find("candidate.cu(3): error") != std::string::npos);
  CHECK(program.report.log.find("undefined_name") != std::string::npos);
}

TEST_CASE("the toolkit's fp16 and bf16 headers can be included", "[cuda][compile]") {
  REQUIRE_FALSE(detail::cuda::toolkit_include_directory().empty());
  const char* source = R"(
#include <cuda_fp16.h>
#include <cuda_bf16.h>
extern "C" __global__ void mixed(const __half* a, const __nv_bfloat16* b, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = __half2float(__hmul(a[i], a[i])) + __bfloat162float(b[i]);
}
)";
  const CompiledProgram program = compile_offline("cuda", source, for_target("sm_90"));
  INFO(program.report.log);
  CHECK(program.report.ok);
  CHECK(find_kernel(program.report, "mixed") != nullptr);
}

TEST_CASE("defines from the options reach the source", "[cuda][compile]") {
  const char* source = R"(
#ifndef TILE
#error TILE must be defined
#endif
extern "C" __global__ void tiled(float* y) {
  __shared__ float tile[TILE];
  tile[threadIdx.x] = y[threadIdx.x];
  __syncthreads();
  y[threadIdx.x] = tile[TILE - 1 - threadIdx.x];
}
)";
  SECTION("defined: the static shared memory follows the value") {
    CompileOptions options = for_target("sm_90");
    options.defines = {{"TILE", "512"}};
    const CompiledProgram program = compile_offline("cuda", source, options);
    INFO(program.report.log);
    REQUIRE(program.report.ok);
    const KernelResources* kernel = find_kernel(program.report, "tiled");
    REQUIRE(kernel != nullptr);
    CHECK(kernel->shared_bytes == 512 * 4);
  }
  SECTION("missing: the source's own #error fails the compile") {
    const CompiledProgram program = compile_offline("cuda", source, for_target("sm_90"));
    CHECK_FALSE(program.report.ok);
    CHECK(program.report.log.find("TILE must be defined") != std::string::npos);
  }
  SECTION("a malformed macro name is the caller's error") {
    CompileOptions options = for_target("sm_90");
    options.defines = {{"1TILE", "512"}};
    CHECK_THROWS_AS(compile_offline("cuda", source, options), ValidationError);
  }
}

TEST_CASE("C++ and template kernels named by the plan are resolved to their symbols", "[cuda][compile]") {
  const char* source = R"(// @launch scale<4><<<1, 32>>>(y)
// @launch missing_kernel<<<1, 32>>>(y)
template <int Factor>
__global__ void scale(float* y) { y[threadIdx.x] *= Factor; }
__global__ void plain_cpp(float* y) { y[threadIdx.x] = 0.0f; }
)";
  CompileOptions options = for_target("sm_90");
  // missing_kernel appears only in a comment: it is left for load time to report, not a compile error.
  options.kernels = {"scale<4>", "plain_cpp", "missing_kernel"};
  const CompiledProgram program = compile_offline("cuda", source, options);
  INFO(program.report.log);
  REQUIRE(program.report.ok);
  REQUIRE(program.symbols.count("scale<4>") == 1);
  CHECK(program.symbols.at("scale<4>").rfind("_Z", 0) == 0);
  REQUIRE(program.symbols.count("plain_cpp") == 1);
  CHECK(program.symbols.at("plain_cpp") == "_Z9plain_cppPf");
  CHECK(program.symbols.count("missing_kernel") == 0);
  // The report uses the plan's names.
  CHECK(find_kernel(program.report, "scale<4>") != nullptr);
  CHECK(find_kernel(program.report, "plain_cpp") != nullptr);
}

TEST_CASE("targets are checked before compiling", "[cuda][compile]") {
  CHECK_THROWS_AS(compile_offline("cuda", kRelu, for_target("")), ValidationError);
  CHECK_THROWS_AS(compile_offline("cuda", kRelu, for_target("compute_90")), ValidationError);
  CHECK_THROWS_AS(compile_offline("cuda", kRelu, for_target("sm90")), ValidationError);
  if (!detail::cuda::nvrtc().supported_architectures.empty()) {
    // CUDA 13 dropped sm_50; the message lists what it supports.
    try {
      compile_offline("cuda", kRelu, for_target("sm_50"));
      FAIL("sm_50 was accepted");
    } catch (const ValidationError& error) {
      CHECK(std::string(error.what()).find("sm_90") != std::string::npos);
    }
  }
  const CompiledProgram specific = compile_offline("cuda", kRelu, for_target("sm_90a"));
  CHECK(specific.report.ok);
  CHECK(specific.target == "sm_90a");
}

TEST_CASE("an arch-specific target (sm_90a) reports per-kernel resources", "[cuda][compile]") {
  // What a device backend compiles for on Hopper. A template kernel too: its report is named as the
  // plan names it.
  const char* source = R"(
extern "C" __global__ void axpy(const float* x, float* y, int a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}
template <int SCALE>
__global__ void scale_add(const float* x, float* y, int n) {
  __shared__ float tile[128];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  tile[threadIdx.x % 128] = i < n ? x[i] : 0.0f;
  __syncthreads();
  if (i < n) y[i] += SCALE * tile[threadIdx.x % 128];
}
)";
  CompileOptions options = for_target("sm_90a");
  options.kernels = {"axpy", "scale_add<2>"};
  const CompiledProgram program = compile_offline("cuda", source, options);
  INFO(program.report.log);
  REQUIRE(program.report.ok);
  CHECK(program.target == "sm_90a");
  REQUIRE(program.report.kernels.size() == 2);
  const KernelResources* axpy = find_kernel(program.report, "axpy");
  REQUIRE(axpy != nullptr);
  CHECK(axpy->registers > 0);
  CHECK(axpy->spill_store_bytes == 0);
  CHECK(axpy->stack_bytes == 0);
  const KernelResources* scale_add = find_kernel(program.report, "scale_add<2>");
  REQUIRE(scale_add != nullptr);
  CHECK(scale_add->registers > 0);
  CHECK(scale_add->shared_bytes == 128 * 4);
  CHECK(program.symbols.count("scale_add<2>") == 1);
}

TEST_CASE("a device compiles for its arch-specific target, where wgmma is available", "[cuda][compile]") {
  // The evaluator compiles in the parent for the target the device backend would pick: on Hopper that is
  // sm_90a, without which warpgroup MMA (the way to the tensor cores' peak there) does not assemble.
  CHECK(detail::cuda_device_compile_target("sm_90") == "sm_90a");
  CHECK(detail::cuda_device_compile_target("sm_80") == "sm_80");
  CHECK(detail::cuda_device_compile_target("sm_89") == "sm_89");
  const char* source = R"(
extern "C" __global__ void fence_only(float* out) {
  asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
  out[threadIdx.x] = 1.0f;
}
)";
  const CompiledProgram specific =
      compile_offline("cuda", source, for_target(detail::cuda_device_compile_target("sm_90")));
  INFO(specific.report.log);
  CHECK(specific.report.ok);
  const CompiledProgram generic = compile_offline("cuda", source, for_target("sm_90"));
  CHECK_FALSE(generic.report.ok);
  CHECK(generic.report.log.find("wgmma") != std::string::npos);
}

TEST_CASE("a compile that runs past its timeout is cancelled", "[cuda][compile]") {
  if (detail::cuda::nvrtc().nvrtcSetFlowCallback == nullptr) {
    WARN("skipped: this NVRTC (" << detail::cuda::nvrtc().description() << ") cannot cancel a compile");
    return;
  }
  // The headers alone take NVRTC well over a millisecond.
  const std::string source = std::string("#include <cuda_fp16.h>\n#include <cuda_bf16.h>\n") + kRelu;
  CompileOptions options = for_target("sm_90");
  options.timeout_seconds = 0.001;
  const CompiledProgram program = compile_offline("cuda", source, options);
  CHECK_FALSE(program.report.ok);
  CHECK(program.report.log.find("compile timeout of 0.001 s") != std::string::npos);
  CHECK(program.report.seconds < 5.0);
}

TEST_CASE("compiles run concurrently on several threads", "[cuda][compile]") {
  std::vector<CompiledProgram> programs(3);
  std::vector<std::thread> threads;
  for (std::size_t i = 0; i < programs.size(); ++i) {
    threads.emplace_back([&, i] {
      CompileOptions options = for_target("sm_90");
      options.defines = {{"UNUSED_VARIANT", std::to_string(i)}};
      programs[i] = compile_offline("cuda", kRelu, options);
    });
  }
  for (auto& thread : threads) thread.join();
  for (const auto& program : programs) {
    CHECK(program.report.ok);
    CHECK_FALSE(program.binary.empty());
  }
}

TEST_CASE("ptxas resource lines are read per kernel", "[cuda][compile]") {
  const std::string log =
      "ptxas info    : 0 bytes gmem\n"
      "ptxas info    : Function properties for _Z6helperf\n"
      "ptxas         .     24 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
      "ptxas info    : Compiling entry function '_Z4gemmILi128EEvPf' for 'sm_90'\n"
      "ptxas info    : Function properties for _Z4gemmILi128EEvPf\n"
      "ptxas         .     16 bytes stack frame, 8 bytes spill stores, 12 bytes spill loads\n"
      "ptxas info    : Used 168 registers, used 1 barriers, 32768 bytes smem, 40 bytes cumulative stack size\n"
      "ptxas info    : Compiling entry function 'relu' for 'sm_90'\n"
      "ptxas info    : Function properties for relu\n"
      "ptxas         .     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
      "ptxas info    : Used 10 registers, used 0 barriers\n"
      "ptxas info    : Compiling entry function '_Z3addPfS_' for 'sm_90'\n"
      "ptxas info    : Used 6 registers\n";
  const auto kernels = detail::cuda::parse_ptxas_resources(log, {{"_Z4gemmILi128EEvPf", "gemm<128>"}});
  REQUIRE(kernels.size() == 3);
  CHECK(kernels[0].name == "gemm<128>");
  CHECK(kernels[0].registers == 168);
  CHECK(kernels[0].spill_store_bytes == 8);
  CHECK(kernels[0].spill_load_bytes == 12);
  CHECK(kernels[0].stack_bytes == 40);  // the cumulative stack includes the helper's frame
  CHECK(kernels[0].shared_bytes == 32768);
  CHECK(kernels[1].name == "relu");
  CHECK(kernels[1].registers == 10);
  CHECK(kernels[1].shared_bytes == 0);
  CHECK(kernels[2].name == "add(float*, float*)");  // not named by the plan: demangled
  CHECK(kernels[2].registers == 6);
}

#endif  // KERNELSMITH_ENABLE_CUDA
