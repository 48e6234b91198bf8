// The module globals found in a cubin (lib/cuda/cubin_globals): what the CUDA backend snapshots at load
// and puts back before every run of a plan. Compiled with NVRTC, no device needed.
#include "kernelsmith/config.hpp"

#if KERNELSMITH_ENABLE_CUDA

#include <algorithm>
#include <string>
#include <vector>

#include "catch.hpp"
#include "cuda/cubin_globals.hpp"
#include "backend_registry.hpp"
#include "kernelsmith/backend.hpp"

using namespace kernelsmith;
using detail::cuda::cubin_global_variables;

namespace {

std::vector<std::string> globals_of(const std::string& source) {
  CompileOptions options;
  options.target = "sm_90";
  const CompiledProgram program = compile_offline("cuda", source, options);
  INFO(program.report.log);
  REQUIRE(program.report.ok);
  std::vector<std::string> names = cubin_global_variables(program.binary);
  std::sort(names.begin(), names.end());
  return names;
}

bool has(const std::vector<std::string>& names, const std::string& name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

}  // namespace

TEST_CASE("the device globals of a cubin are found, initialised or not", "[cuda][compile][integrity]") {
  const auto names = globals_of(R"(// @launch k<<<1, 1>>>(y)
__device__ unsigned int runs;
__device__ float cache[1024];
__device__ int initialised = 7;
static __device__ int hidden;
__constant__ float scale[4];
extern "C" __global__ void k(float* y) {
  __shared__ float tile[32];
  tile[threadIdx.x] = scale[0];
  runs += 1;
  cache[runs % 1024] = tile[0] + initialised + hidden;
  hidden = runs;
  y[0] = cache[0];
}
)");
  INFO("found: " << names.size());
  CHECK(has(names, "runs"));
  CHECK(has(names, "cache"));
  CHECK(has(names, "initialised"));
  // A file-static variable keeps its name in the cubin.
  CHECK(std::any_of(names.begin(), names.end(), [](const std::string& n) { return n.find("hidden") != std::string::npos; }));
  // Read-only constant memory and per-block shared memory hold no state across launches.
  CHECK_FALSE(has(names, "scale"));
  CHECK_FALSE(has(names, "tile"));
}

TEST_CASE("a kernel without globals has none; a binary that is not ELF gives none", "[cuda][compile][integrity]") {
  CHECK(globals_of(R"(// @launch k<<<1, 1>>>(y)
extern "C" __global__ void k(float* y) { y[0] = 1.0f; }
)").empty());
  CHECK(cubin_global_variables({}).empty());
  CHECK(cubin_global_variables({'n', 'o', 't', ' ', 'E', 'L', 'F'}).empty());
  std::vector<std::uint8_t> truncated = {0x7f, 'E', 'L', 'F', 2, 1, 1, 0};
  truncated.resize(70, 0xff);  // a header whose section table points past the end
  CHECK(cubin_global_variables(truncated).empty());
}

#endif  // KERNELSMITH_ENABLE_CUDA
