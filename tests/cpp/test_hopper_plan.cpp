// Hopper's launch features in the plan (docs/candidate-format.md, "Hopper: tensor maps and clusters"):
// @tensor_map and cluster= parse, bind against a task and a device, and are refused with the reason on
// devices and backends without them (no GPU needed); the [gpu] tests run a TMA tile copy (odd sizes,
// out-of-bounds fill) and a cluster kernel on an sm_90 GPU and check what they write, exactly.
#include <cmath>
#include <cstring>
#include <fstream>
#include <sstream>
#include <limits>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "catch.hpp"
#include "gpu_test_support.hpp"
#include "harness_test_support.hpp"
#include "test_support.hpp"
#include "evaluate/plan_binding.hpp"
#include "evaluate/plan_runner.hpp"
#include "kernelsmith/backend.hpp"
#include "kernelsmith/config.hpp"
#include "kernelsmith/device_attributes.hpp"
#include "kernelsmith/evaluator.hpp"
#include "kernelsmith/launch_plan.hpp"
#include "kernelsmith/task.hpp"

using namespace kernelsmith;
using detail::BoundPlan;
using detail::InvalidLaunch;
using test::contains;
using test::plan_error;

namespace {

// A device that stands for an H100 (or, with another architecture, an A100) where there is none.
DeviceInfo cuda_device(const std::string& architecture) {
  DeviceInfo device;
  device.backend = "cuda";
  device.name = "test GPU";
  device.architecture = architecture;
  device.compute_units = 132;
  device.warp_size = 32;
  device.max_threads_per_block = 1024;
  device.shared_per_block = 48 * 1024;
  device.shared_per_block_optin = 227 * 1024;
  device.l2_bytes = 50 * 1024 * 1024;
  return device;
}

// x (R x C, float32, row-major) copied tile by tile into y, whose rows and columns are rounded up to whole
// tiles (16 x 32): y is x where x has elements and 0 elsewhere. C is a multiple of 4 at every size (TMA
// needs 16-byte row strides); R and C are not multiples of the tile, so the edge tiles read past x.
const char* kTileTask = R"json({
  "schema": "kernelsmith.task/1",
  "name": "tile_copy",
  "description": "y is x padded with zeros to whole 16 x 32 tiles.",
  "sizes": {"R": 67, "C": 100},
  "check_sizes": [{"name": "small", "sizes": {"R": 5, "C": 4}}, {"name": "odd", "sizes": {"R": 37, "C": 36}}],
  "tensors": [
    {"name": "x", "dtype": "float32", "shape": ["R", "C"], "role": "input"},
    {"name": "y", "dtype": "float32", "shape": ["round_up(R, 16)", "round_up(C, 32)"], "role": "output"}
  ],
  "work": {"flops": "0", "bytes": "8 * R * C"},
  "references": {"cuda": {"source": "// @launch pad<<<dim3(ceil_div(C, 32), ceil_div(R, 16)), 128>>>(x, y, R, C)\nextern \"C\" __global__ void pad(const float* x, float* y, int R, int C) {\n  const int width = (C + 31) / 32 * 32;\n  for (int i = threadIdx.x; i < 512; i += 128) {\n    const int r = blockIdx.y * 16 + i / 32, c = blockIdx.x * 32 + i % 32;\n    y[r * width + c] = r < R && c < C ? x[r * C + c] : 0.0f;\n  }\n}\n"}}
})json";

// The TMA version: one 2-D box of 32 x 16 floats per block, loaded by cp.async.bulk.tensor onto an mbarrier,
// then written out. OOB_FILL is the plan's oob_fill; the elements of the box outside x read as it says.
std::string tile_copy_source(const std::string& oob_fill) {
  return "// @tensor_map tiles = x[C, R] box[32, 16] oob_fill=" + oob_fill + R"src(
// @launch copy_tiles<<<dim3(ceil_div(C, 32), ceil_div(R, 16)), 128>>>(tiles, y, R, C)
struct __align__(64) TensorMap { unsigned long long opaque[16]; };  // CUtensorMap's size and alignment

extern "C" __global__ void copy_tiles(const __grid_constant__ TensorMap tiles, float* y, int R, int C) {
  __shared__ __align__(128) float tile[16][32];
  __shared__ __align__(8) unsigned long long barrier;
  const unsigned bar = static_cast<unsigned>(__cvta_generic_to_shared(&barrier));
  const unsigned destination = static_cast<unsigned>(__cvta_generic_to_shared(&tile[0][0]));
  if (threadIdx.x == 0) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(bar));
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar), "r"(16 * 32 * 4) : "memory");
    asm volatile(
        "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];"
        ::"r"(destination), "l"(reinterpret_cast<unsigned long long>(&tiles)), "r"(blockIdx.x * 32),
        "r"(blockIdx.y * 16), "r"(bar)
        : "memory");
  }
  asm volatile(
      "{\n"
      ".reg .pred done;\n"
      "WAIT_%=:\n"
      "mbarrier.try_wait.parity.shared::cta.b64 done, [%0], 0;\n"
      "@!done bra WAIT_%=;\n"
      "}\n" ::"r"(bar)
      : "memory");
  const int width = (C + 31) / 32 * 32;
  for (int i = threadIdx.x; i < 512; i += 128) {
    const int r = blockIdx.y * 16 + i / 32, c = blockIdx.x * 32 + i % 32;
    y[r * width + c] = tile[i / 32][i % 32];
  }
}
)src";
}

// Every block of a cluster of 2 writes what the hardware says of it, and what its partner block holds in
// shared memory (read across the cluster, distributed shared memory): out[4 b ...] = {rank in the cluster,
// blocks in the cluster, cluster id, the partner's block index}. (x is there because a task needs an input.)
const char* kClusterTask = R"json({
  "schema": "kernelsmith.task/1",
  "name": "cluster_ids",
  "description": "Each block of a cluster of two writes its rank, the cluster size, the cluster id and its partner's index.",
  "sizes": {"G": 8},
  "check_sizes": [{"name": "two", "sizes": {"G": 2}}],
  "tensors": [{"name": "x", "dtype": "int32", "shape": ["G"], "role": "input", "distribution": {"kind": "integers", "a": 0, "b": 9}},
              {"name": "out", "dtype": "int32", "shape": ["4 * G"], "role": "output"}],
  "work": {"flops": "0", "bytes": "16 * G"},
  "references": {"cuda": {"source": "// @launch ids<<<G, 32>>>(x, out)\nextern \"C\" __global__ void ids(const int* x, int* out) {\n  if (threadIdx.x == 0) {\n    const int b = blockIdx.x;\n    out[4 * b] = b % 2; out[4 * b + 1] = 2; out[4 * b + 2] = b / 2; out[4 * b + 3] = b ^ 1;\n  }\n}\n"}}
})json";

const char* kClusterSource = R"src(// @launch ids<<<G, 32>>>(x, out) cluster=dim3(2, 1, 1)
extern "C" __global__ void ids(const int* x, int* out) {
  __shared__ int mine;
  if (threadIdx.x == 0) mine = blockIdx.x;
  unsigned rank, blocks, cluster;
  asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(rank));
  asm volatile("mov.u32 %0, %%cluster_nctarank;" : "=r"(blocks));
  asm volatile("mov.u32 %0, %%clusterid.x;" : "=r"(cluster));
  asm volatile("barrier.cluster.arrive.release.aligned;\nbarrier.cluster.wait.acquire.aligned;" ::: "memory");
  if (threadIdx.x == 0) {
    unsigned local = static_cast<unsigned>(__cvta_generic_to_shared(&mine)), remote = 0;
    int partner = -1;
    asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(remote) : "r"(local), "r"(rank ^ 1u));
    asm volatile("ld.shared::cluster.u32 %0, [%1];" : "=r"(partner) : "r"(remote) : "memory");
    const int b = blockIdx.x;
    out[4 * b] = static_cast<int>(rank);
    out[4 * b + 1] = static_cast<int>(blocks);
    out[4 * b + 2] = static_cast<int>(cluster);
    out[4 * b + 3] = partner;
  }
  // No block may leave while its partner may still read its shared memory.
  asm volatile("barrier.cluster.arrive.release.aligned;\nbarrier.cluster.wait.acquire.aligned;" ::: "memory");
}
)src";

Task tile_task() { return Task::from_json(kTileTask, "tile_copy"); }

SizeConfig config_of(const Task& task, const std::string& name) {
  for (const auto& config : task.all_size_configs()) {
    if (config.name == name) return config;
  }
  FAIL("no size configuration " << name);
  return {};
}

// The InvalidLaunch message of binding `source` to `task` under `config` on `device`.
std::string bind_error(const Task& task, const std::string& source, const DeviceInfo& device,
                       const std::string& config = "timing") {
  try {
    detail::bind_plan(task, LaunchPlan::parse(source), config_of(task, config), device);
  } catch (const InvalidLaunch& error) {
    return error.what();
  }
  return "no error";
}

}  // namespace

TEST_CASE("plan: @tensor_map and cluster= parse with their defaults", "[launch_plan][hopper]") {
  const LaunchPlan plan = LaunchPlan::parse(
      "// @workspace padded: float16[round_up(K, 8) * M]\n"
      "// @tensor_map a_tiles = padded[K, M] box[64, 128] strides[round_up(K, 8)] swizzle=128b l2_promotion=256B\n"
      "// @tensor_map b_tiles = B[N, K] box[64, 64] element_strides[1, 1] oob_fill=nan when(COMPUTE_CAPABILITY >= 90 "
      "&& K % 8 == 0) interleave=none\n"
      "// @launch gemm<<<round_up(ceil_div(M, 128), 2), 256>>>(a_tiles, b_tiles, C) cluster=dim3(2, 1);\n"
      "// @launch tail<<<1, 32>>>(C) cluster = 1\n");
  REQUIRE(plan.tensor_maps.size() == 2);
  const TensorMapDecl& a = plan.tensor_maps[0];
  CHECK(a.name == "a_tiles");
  CHECK(a.buffer == "padded");
  CHECK(a.dims == std::vector<std::string>{"K", "M"});
  CHECK(a.box == std::vector<std::string>{"64", "128"});
  CHECK(a.strides == std::vector<std::string>{"round_up(K, 8)"});
  CHECK(a.element_strides.empty());
  CHECK(a.swizzle == "128B");
  CHECK(a.l2_promotion == "256B");
  CHECK(a.interleave == "none");
  CHECK(a.oob_fill == "zero");
  CHECK(a.line == 2);
  const TensorMapDecl& b = plan.tensor_maps[1];
  CHECK(b.strides.empty());
  CHECK(b.element_strides == std::vector<std::string>{"1", "1"});
  CHECK(b.oob_fill == "nan");
  CHECK(b.condition == "COMPUTE_CAPABILITY >= 90 && K % 8 == 0");
  CHECK(a.condition.empty());
  CHECK(b.swizzle == "none");
  REQUIRE(plan.launches.size() == 2);
  CHECK(plan.launches[0].cluster == std::array<std::string, 3>{"2", "1", "1"});
  CHECK(plan.launches[0].args == std::vector<std::string>{"a_tiles", "b_tiles", "C"});
  CHECK(plan.launches[1].cluster == std::array<std::string, 3>{"1", "1", "1"});
  // A launch without cluster= declares none.
  CHECK(LaunchPlan::parse("// @launch k<<<1, 1>>>()\n").launches[0].cluster[0].empty());
}

TEST_CASE("plan: malformed @tensor_map and cluster= lines say what is expected, with the line", "[launch_plan][hopper]") {
  const std::string launch = "// @launch k<<<1, 1>>>(x)\n";
  const auto error_of = [&](const std::string& line) {
    return plan_error([&] { LaunchPlan::parse(launch + line + "\n"); });
  };
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"// @tensor_map m = x[N]", "the box (the tile one copy moves) is missing"},
      {"// @tensor_map m x[N] box[64]", "no \"=\" after the name m"},
      {"// @tensor_map m = x box[64]", "expected \"[\" after the dimensions of x"},
      {"// @tensor_map m = x[N, M] box[64]", "box has 1 entry; a rank-2 map takes 2"},
      {"// @tensor_map m = x[N, M] box[64, 8] strides[N, M]", "strides has 2 entries; a rank-2 map takes 1"},
      {"// @tensor_map m = x[A, B, C, D, E, F] box[1, 1, 1, 1, 1, 1]", "6 dimensions; a tensor map has 1 to 5"},
      {"// @tensor_map m = x[N] box[64] swizzle=256B", "swizzle=256B is not one of none, 32B, 64B, 128B"},
      {"// @tensor_map m = x[N] box[64] oob_fill=one", "oob_fill=one is not one of zero, nan"},
      {"// @tensor_map m = x[N] box[64] tile[4]", "unknown option tile"},
      {"// @tensor_map m = x[N] box[64] box[32]", "box is given twice"},
      {"// @tensor_map m = x[N, M] box[8, 8] interleave=16B", "interleave=16B needs a map of rank 3 or more"},
      {"// @tensor_map m = x[N, M, L] box[8, 8, 1] interleave=32B", "interleave=32B needs swizzle=32B"},
      {"// @tensor_map m = x[N +] box[64]", "the dimensions of x entry 1"},
      {"// @tensor_map m = x[N] box[64] when()", "when() has no condition"},
      {"// @tensor_map m = x[N] box[64] when K > 0", "expected `when(expression)`"},
      {"// @tensormap m = x[N] box[64]", "did you mean @tensor_map"},
      {"// @launch k2<<<1, 1>>>(x) clusters=2", "the only launch option is a thread-block cluster"},
      {"// @launch k2<<<1, 1>>>(x) cluster=", "cluster= has no value"},
      {"// @launch k2<<<1, 1>>>(x) cluster=dim3(2, 1, 1, 1)", "cluster \"dim3(2, 1, 1, 1)\": dim3 takes one to three"},
  };
  for (const auto& [line, expected] : cases) {
    INFO(line);
    const auto [message, at] = error_of(line);
    CHECK(contains(message, expected));
    CHECK(at == 2);
  }
  const auto [twice, twice_line] = plan_error([&] {
    LaunchPlan::parse(launch + "// @workspace m: float32[4]\n// @tensor_map m = x[N] box[64]\n");
  });
  CHECK(contains(twice, "m is already the name of the workspace on line 2"));
  CHECK(twice_line == 3);
  // Triton builds its descriptors in the kernel (tl.make_tensor_descriptor); its launches have no clusters.
  const std::string triton = "# @launch add[1](x, N, BLOCK=64)\n";
  CHECK(contains(plan_error([&] { LaunchPlan::parse(triton + "# @tensor_map m = x[N] box[64]\n", "triton"); }).first,
                 "tl.make_tensor_descriptor"));
  CHECK(contains(plan_error([&] { LaunchPlan::parse("# @launch add[1](x, N) cluster=2\n", "triton"); }).first,
                 "unknown launch option cluster"));
}

TEST_CASE("binding: a tensor map's layout under each size, checked against TMA's rules", "[launch_plan][hopper]") {
  const Task task = tile_task();
  const DeviceInfo h100 = cuda_device("sm_90");
  const LaunchPlan plan = LaunchPlan::parse(tile_copy_source("zero"));
  const BoundPlan bound = detail::bind_plan(task, plan, config_of(task, "odd"), h100);
  REQUIRE(bound.launches.size() == 1);
  const detail::BoundArg& arg = bound.launches[0].args[0];
  REQUIRE(arg.is_tensor_map);
  CHECK(bound.buffers[arg.buffer].name == "x");
  const TensorMapSpec& spec = arg.tensor_map;
  CHECK(spec.dtype == DType::float32);
  CHECK(spec.rank == 2);
  CHECK(spec.dims[0] == 36);
  CHECK(spec.dims[1] == 37);
  CHECK(spec.strides[0] == 36 * 4);  // packed rows, in bytes
  CHECK(spec.box[0] == 32);
  CHECK(spec.box[1] == 16);
  CHECK(spec.element_strides[0] == 1);
  CHECK(spec.element_strides[1] == 1);
  CHECK(spec.swizzle_bytes == 0);
  CHECK_FALSE(spec.oob_nan);
  CHECK_FALSE(bound.launches[0].clustered);
  CHECK(detail::bind_plan(task, LaunchPlan::parse(tile_copy_source("nan")), config_of(task, "odd"), h100)
            .launches[0].args[0].tensor_map.oob_nan);

  // The plan's mistakes, each an InvalidLaunch with the line and what to do.
  const std::string launch = "// @launch copy_tiles<<<1, 128>>>(tiles, y, R, C)\n";
  const auto error = [&](const std::string& map, const std::string& config = "timing") {
    return bind_error(task, map + "\n" + launch, h100, config);
  };
  CHECK(contains(error("// @tensor_map tiles = z[C, R] box[32, 16]"),
                 "line 1: @tensor_map tiles: maps z, which is neither a task tensor nor a workspace; the plan's "
                 "buffers are x, y"));
  // Rows of 5 floats are 20 bytes: not a multiple of 16.
  CHECK(contains(error("// @tensor_map tiles = x[5, R * C / 5] box[4, 16]"),
                 "the stride of dimension 1 is 5 elements of float32 = 20 bytes"));
  CHECK(contains(error("// @tensor_map tiles = x[C, R] box[32, 16] strides[4611686018427387904]"),
                 "TMA needs strides that are multiples of 16 bytes and below 2^40"));
  CHECK(contains(error("// @tensor_map tiles = x[C, R] box[32, 16] strides[2 * C]"),
                 "reaches element 13299 of x, which holds 6700 under the sizes \"timing\""));
  CHECK(contains(error("// @tensor_map tiles = x[C, R] box[3, 16]"),
                 "the box's inner dimension is 3 elements of float32 = 12 bytes; TMA moves multiples of 16 bytes: "
                 "make box[0] a multiple of 4"));
  CHECK(contains(error("// @tensor_map tiles = x[C, R] box[64, 16] swizzle=128B"),
                 "the box's inner dimension is 256 bytes, wider than the 128-byte swizzle span"));
  CHECK(contains(error("// @tensor_map tiles = x[C, R] box[300, 1]"), "box entry 0 is `300` = 300; each must be 1 to 256"));
  CHECK(contains(error("// @tensor_map tiles = x[C, R] box[32, 16] element_strides[1, 9]"),
                 "element stride 1 is `9` = 9; each must be 1 to 8"));
  CHECK(contains(error("// @tensor_map tiles = x[C, R - 100] box[32, 16]"), "dimension 1 is `R - 100` = -33"));
  CHECK(contains(error("// @tensor_map y = x[C, R] box[32, 16]"), "y is the name of a task tensor"));

  // Clusters: the grid must be whole clusters, of at most 8 blocks.
  const std::string map = "// @tensor_map tiles = x[C, R] box[32, 16]\n";
  const auto cluster_error = [&](const std::string& cluster_launch) {
    return bind_error(task, map + cluster_launch + "\n", h100);
  };
  CHECK(contains(cluster_error("// @launch copy_tiles<<<dim3(3, 5), 128>>>(tiles, y, R, C) cluster=dim3(2, 1)"),
                 "line 2: grid.x of copy_tiles is 3, not a multiple of cluster.x = 2"));
  CHECK(contains(cluster_error("// @launch copy_tiles<<<16, 128>>>(tiles, y, R, C) cluster=16"),
                 "(16, 1, 1) = 16 blocks; at most 8"));
  CHECK(contains(cluster_error("// @launch copy_tiles<<<16, 128>>>(tiles, y, R, C) cluster=0"),
                 "every dimension must be at least 1"));
  const BoundPlan clustered = detail::bind_plan(
      task, LaunchPlan::parse(map + "// @launch copy_tiles<<<dim3(4, 6), 128>>>(tiles, y, R, C) cluster=dim3(2, 3)\n"),
      config_of(task, "timing"), h100);
  CHECK(clustered.launches[0].clustered);
  CHECK(clustered.launches[0].cluster == Dim3{2, 3, 1});
}

TEST_CASE("binding: tensor maps and clusters are refused, with the reason, where there are none", "[launch_plan][hopper]") {
  const Task task = tile_task();
  const std::string tma = tile_copy_source("zero");
  const std::string cluster = "// @launch copy_tiles<<<2, 128>>>(x, y, R, C) cluster=2\n";
  DeviceInfo opencl = cuda_device("");
  opencl.backend = "opencl";
  opencl.name = "pthread-cpu";
  DeviceInfo maca = cuda_device("");
  maca.backend = "maca";
  maca.name = "MetaX C500";
  for (const auto& [device, expected] : std::vector<std::pair<DeviceInfo, std::string>>{
           {cuda_device("sm_80"), "test GPU is sm_80 (compute capability 8.0)"},
           {cuda_device("sm_89"), "test GPU is sm_89 (compute capability 8.9)"},
           {opencl, "the opencl backend (pthread-cpu) has none"},
           {maca, "the maca backend (MetaX C500) has none"}}) {
    INFO(device.backend << " " << device.architecture);
    const std::string refused = bind_error(task, tma, device);
    CHECK(contains(refused, "line 1: @tensor_map tiles: a tensor map (@tensor_map) needs the CUDA backend on a GPU of "
                            "compute capability 9.0 or newer (Hopper)"));
    CHECK(contains(refused, expected));
    CHECK(contains(refused, "write the kernel without it to run here"));
    const std::string no_cluster = bind_error(task, cluster, device);
    CHECK(contains(no_cluster, "line 1: copy_tiles: a thread-block cluster (cluster=) needs the CUDA backend"));
    CHECK(contains(no_cluster, "(a cluster of one block launches anywhere)"));
    CHECK(contains(no_cluster, expected));
  }
  // A map under a false when(...) is not needed: on an older CUDA GPU the kernel gets zero bytes for it;
  // other backends have no such parameter and refuse it anyway. A cluster of one block launches anywhere.
  const std::string conditional = "// @tensor_map tiles = x[C, R] box[32, 16] when(COMPUTE_CAPABILITY >= 90)\n"
                                  "// @launch copy_tiles<<<2, 128>>>(tiles, y, R, C) cluster=1 + (COMPUTE_CAPABILITY >= 90)\n";
  const BoundPlan a100 =
      detail::bind_plan(task, LaunchPlan::parse(conditional), config_of(task, "timing"), cuda_device("sm_80"));
  CHECK(a100.launches[0].args[0].is_tensor_map);
  CHECK(a100.launches[0].args[0].tensor_map.rank == 0);
  CHECK_FALSE(a100.launches[0].clustered);
  const BoundPlan h100 =
      detail::bind_plan(task, LaunchPlan::parse(conditional), config_of(task, "timing"), cuda_device("sm_90"));
  CHECK(h100.launches[0].args[0].tensor_map.rank == 2);
  CHECK(h100.launches[0].clustered);
  CHECK(h100.launches[0].cluster == Dim3{2, 1, 1});
  CHECK(contains(bind_error(task, conditional, opencl), "a tensor map (@tensor_map) needs the CUDA backend"));
  CHECK(contains(bind_error(task, tma, cuda_device("sm_80")),
                 "or make the map conditional, when(COMPUTE_CAPABILITY >= 90), and give the kernel a path without it"));
  CHECK(hopper_feature_refusal(cuda_device("sm_90"), "x").empty());
  CHECK(hopper_feature_refusal(cuda_device("sm_100"), "x").empty());
  CHECK(hopper_feature_refusal(cuda_device("sm_120"), "x").empty());
}

TEST_CASE("binding: a tensor map goes to a 128-byte parameter only", "[launch_plan][hopper]") {
  const Task task = tile_task();
  BoundPlan bound = detail::bind_plan(task, LaunchPlan::parse(tile_copy_source("zero")), config_of(task, "timing"),
                                      cuda_device("sm_90"));
  detail::BoundLaunch& launch = bound.launches[0];
  KernelParam map;
  map.size = 128;
  KernelParam pointer;
  pointer.size = 8;
  KernelParam integer;
  integer.size = 4;
  detail::check_params(launch, {map, pointer, integer, integer}, bound);
  CHECK(launch.args[0].kind == KernelArg::Kind::tensor_map);
  CHECK(launch.args[1].kind == KernelArg::Kind::buffer);
  const std::string wrong = test::error_of([&] { detail::check_params(launch, {pointer, pointer, integer, integer}, bound); });
  CHECK(contains(wrong, "argument 1 of copy_tiles is the tensor map tiles, but parameter 1 is a 8-byte value: declare it "
                        "`const __grid_constant__ CUtensorMap tiles`"));
}

TEST_CASE("the Hopper example and refusal of docs/candidate-format.md are what the plan binder does", "[launch_plan][hopper][docs]") {
  std::ifstream file(std::string(KERNELSMITH_SOURCE_DIR) + "/docs/candidate-format.md");
  REQUIRE(file.good());
  std::stringstream text;
  text << file.rdbuf();
  const std::string doc = text.str();
  const std::size_t section = doc.find("## Hopper: tensor maps and clusters");
  REQUIRE(section != std::string::npos);
  const std::size_t open = doc.find("```cpp\n", section);
  const std::size_t close = doc.find("```", open + 7);
  REQUIRE(close != std::string::npos);
  const std::string example = doc.substr(open + 7, close - open - 7);
  const Task task = Task::load("matmul_fp16");
  const LaunchPlan plan = LaunchPlan::parse(example);
  CHECK(plan.tensor_maps.size() == 2);
  const BoundPlan bound = detail::bind_plan(task, plan, config_of(task, "timing"), cuda_device("sm_90"));
  CHECK(bound.launches[0].clustered);
  CHECK(bound.launches[0].args[0].tensor_map.strides[0] == 4096 * 2);
  DeviceInfo a100 = cuda_device("sm_80");
  a100.name = "NVIDIA A100-SXM4-80GB";
  const std::string refusal = bind_error(task, example, a100);
  INFO(refusal);
  CHECK(contains(doc, "\n" + refusal + "\n"));
}

TEST_CASE("evaluation: OpenCL refuses tensor maps and clusters as invalid_launch before compiling", "[hopper][opencl]") {
  if (!test::opencl_available()) {
    WARN("skipped: no OpenCL device");
    return;
  }
  auto evaluator = create_evaluator(test::fast_options("opencl", false, 1));
  const Task task = test::small_task();
  const std::string kernel =
      "__kernel void add2(__global float* y, __global const float* a, __global const float* b, int n) {\n"
      "  const int i = get_global_id(0);\n"
      "  if (i < n) y[i] = 2.0f * a[i] + b[i];\n"
      "}\n";
  const Evaluation tma = evaluator->evaluate(
      task, test::candidate_in("opencl", "// @tensor_map a_tiles = a[N] box[256]\n"
                                         "// @launch add2<<<ceil_div(N, 128), 128>>>(y, a, b, N)\n" +
                                             kernel));
  CHECK(tma.status == Status::invalid_launch);
  CHECK(contains(tma.message, "line 1: @tensor_map a_tiles: a tensor map (@tensor_map) needs the CUDA backend"));
  const Evaluation clustered = evaluator->evaluate(
      task, test::candidate_in("opencl", "// @launch add2<<<ceil_div(N, 128), 128>>>(y, a, b, N) cluster=2\n" + kernel));
  CHECK(clustered.status == Status::invalid_launch);
  CHECK(contains(clustered.message, "a thread-block cluster (cluster=) needs the CUDA backend"));
  // The same kernel without them runs.
  CHECK(evaluator->evaluate(task, test::candidate_in("opencl", "// @launch add2<<<ceil_div(N, 128), 128>>>(y, a, b, N)\n" +
                                                                  kernel))
            .status == Status::ok);
}

TEST_CASE("NVRTC compiles the TMA and cluster kernels for sm_90a", "[hopper][cuda][compile]") {
  if (!KERNELSMITH_ENABLE_CUDA) {
    WARN("skipped: this build has no CUDA backend");
    return;
  }
  for (const auto& [task, source] : std::vector<std::pair<Task, std::string>>{
           {tile_task(), tile_copy_source("zero")}, {Task::from_json(kClusterTask, "cluster_ids"), kClusterSource}}) {
    Candidate candidate = test::candidate_in("cuda", source);
    std::vector<OfflineProgram> programs;
    try {
      programs = compile_candidate_offline(task, candidate, "sm_90");
    } catch (const BackendUnavailableError& error) {
      WARN("skipped: NVRTC is not available: " << error.what());
      return;
    }
    for (const auto& program : programs) {
      INFO(program.report.log);
      CHECK(program.report.ok);
    }
  }
}

#if KERNELSMITH_ENABLE_CUDA

namespace {

// On a CUDA GPU before Hopper the plan must be refused, with the reason, before anything runs: checked
// there, and then the test has nothing more to run (a [gpu] test that only skipped would fail on a GPU).
bool refused_before_hopper(Backend& backend, const Task& task, const std::string& source) {
  if (hopper_feature_refusal(backend.device(), "TMA").empty()) return false;
  const std::string refusal =
      test::error_of([&] { detail::PlanRunner runner(backend, task, source, "cuda"); });
  INFO(refusal);
  CHECK(contains(refusal, "needs the CUDA backend on a GPU of compute capability 9.0 or newer (Hopper)"));
  return true;
}

detail::Bytes bytes_of(const std::vector<float>& values) {
  detail::Bytes bytes(values.size() * sizeof(float));
  std::memcpy(bytes.data(), values.data(), bytes.size());
  return bytes;
}

}  // namespace

TEST_CASE("GPU: a TMA tile copy reads x exactly and fills outside it as oob_fill says", "[gpu][hopper]") {
  KERNELSMITH_SKIP_WHEN(test::cuda_unavailable_reason());
  auto backend = create_backend("cuda", 0);
  const Task task = tile_task();
  if (refused_before_hopper(*backend, task, tile_copy_source("zero"))) return;
  for (const std::string fill : {"zero", "nan"}) {
    detail::PlanRunner runner(*backend, task, tile_copy_source(fill), "cuda");
    for (const auto& config : task.all_size_configs()) {
      INFO("oob_fill=" << fill << ", sizes " << config.name);
      const int R = static_cast<int>(config.sizes.at("R"));
      const int C = static_cast<int>(config.sizes.at("C"));
      std::vector<float> x(static_cast<std::size_t>(R) * C);
      for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i) * 0.5f + 1.0f;
      const auto outputs = runner.run(config.name, {bytes_of(x)});
      REQUIRE(outputs.size() == 1);
      const int width = (C + 31) / 32 * 32;
      const int height = (R + 15) / 16 * 16;
      REQUIRE(outputs[0].size() == static_cast<std::size_t>(width) * height * sizeof(float));
      std::vector<float> y(static_cast<std::size_t>(width) * height);
      std::memcpy(y.data(), outputs[0].data(), outputs[0].size());
      int wrong = 0;
      for (int r = 0; r < height; ++r) {
        for (int c = 0; c < width; ++c) {
          const float got = y[static_cast<std::size_t>(r) * width + c];
          const bool inside = r < R && c < C;
          const bool ok = inside ? got == x[static_cast<std::size_t>(r) * C + c]
                                 : (fill == "zero" ? got == 0.0f && !std::signbit(got) : std::isnan(got));
          if (!ok && ++wrong <= 5) UNSCOPED_INFO("y[" << r << "][" << c << "] = " << got);
        }
      }
      CHECK(wrong == 0);
    }
  }
}

TEST_CASE("GPU: a cluster launch runs blocks in clusters of two that read each other's shared memory", "[gpu][hopper]") {
  KERNELSMITH_SKIP_WHEN(test::cuda_unavailable_reason());
  auto backend = create_backend("cuda", 0);
  const Task task = Task::from_json(kClusterTask, "cluster_ids");
  if (refused_before_hopper(*backend, task, kClusterSource)) return;
  detail::PlanRunner runner(*backend, task, kClusterSource, "cuda");
  for (const auto& config : task.all_size_configs()) {
    INFO("sizes " << config.name);
    const int blocks = static_cast<int>(config.sizes.at("G"));
    const detail::Bytes x(static_cast<std::size_t>(blocks) * sizeof(std::int32_t), 0);
    const auto outputs = runner.run(config.name, {x});
    REQUIRE(outputs.size() == 1);
    std::vector<std::int32_t> out(static_cast<std::size_t>(4 * blocks));
    REQUIRE(outputs[0].size() == out.size() * sizeof(std::int32_t));
    std::memcpy(out.data(), outputs[0].data(), outputs[0].size());
    for (int b = 0; b < blocks; ++b) {
      INFO("block " << b);
      CHECK(out[4 * b] == b % 2);
      CHECK(out[4 * b + 1] == 2);
      CHECK(out[4 * b + 2] == b / 2);
      CHECK(out[4 * b + 3] == (b ^ 1));
    }
  }
}

TEST_CASE("GPU: the evaluator runs a TMA candidate of the harness task and checks it at every size", "[gpu][hopper]") {
  KERNELSMITH_SKIP_WHEN(test::cuda_unavailable_reason());
  // y = 2 a + b with a and b loaded by TMA in boxes of 256 floats; N = 1 and N = 1000 end mid-box.
  const std::string source = R"src(// @tensor_map a_tiles = a[N] box[256]
// @tensor_map b_tiles = b[N] box[256]
// @launch scale_add<<<ceil_div(N, 256), 256>>>(a_tiles, b_tiles, y, N) cluster=1
struct __align__(64) TensorMap { unsigned long long opaque[16]; };

__device__ void load_box(const TensorMap& map, float* destination, unsigned bar, int x) {
  asm volatile("cp.async.bulk.tensor.1d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2}], [%3];"
               ::"r"(static_cast<unsigned>(__cvta_generic_to_shared(destination))),
               "l"(reinterpret_cast<unsigned long long>(&map)), "r"(x), "r"(bar) : "memory");
}

extern "C" __global__ void scale_add(const __grid_constant__ TensorMap a_tiles, const __grid_constant__ TensorMap b_tiles,
                                     float* y, int N) {
  __shared__ __align__(128) float a[256];
  __shared__ __align__(128) float b[256];
  __shared__ __align__(8) unsigned long long barrier;
  const unsigned bar = static_cast<unsigned>(__cvta_generic_to_shared(&barrier));
  if (threadIdx.x == 0) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(bar));
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar), "r"(2 * 256 * 4) : "memory");
    load_box(a_tiles, a, bar, blockIdx.x * 256);
    load_box(b_tiles, b, bar, blockIdx.x * 256);
  }
  asm volatile("{\n.reg .pred done;\nWAIT_%=:\nmbarrier.try_wait.parity.shared::cta.b64 done, [%0], 0;\n"
               "@!done bra WAIT_%=;\n}\n" ::"r"(bar) : "memory");
  const int i = blockIdx.x * 256 + threadIdx.x;
  if (i < N) y[i] = 2.0f * a[threadIdx.x] + b[threadIdx.x];
}
)src";
  auto evaluator = create_evaluator(test::fast_options("cuda", true, 1));
  const Evaluation evaluation = evaluator->evaluate(test::small_task(), test::candidate_in("cuda", source));
  INFO(evaluation.message);
  DeviceInfo gpu;
  for (const auto& backend : devices()) {
    if (backend.name == "cuda") gpu = backend.devices.front();
  }
  if (!hopper_feature_refusal(gpu, "TMA").empty()) {
    // Before Hopper: refused as the plan's mistake, with the reason.
    CHECK(evaluation.status == Status::invalid_launch);
    CHECK(contains(evaluation.message, "compute capability 9.0 or newer"));
    return;
  }
  CHECK(evaluation.status == Status::ok);
}

#endif  // KERNELSMITH_ENABLE_CUDA
