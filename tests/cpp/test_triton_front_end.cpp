// The Triton front end without a GPU: binding a Triton plan names each launch's specialization, the
// launch ABI a binary requires is applied to a bound launch, programs with kernel binaries survive the
// JSON codec, and the compile helpers (real processes running triton_compile.py with the triton package)
// compile for sm_90 and sm_80, report registers and scratch, and point rejections at the candidate's line.
// The compile cases skip, saying why, where triton is not installed.
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "catch.hpp"
#include "evaluate/plan_binding.hpp"
#include "gpu_test_support.hpp"
#include "harness_test_support.hpp"
#include "json_codec.hpp"
#include "kernelsmith/error.hpp"
#include "kernelsmith/launch_plan.hpp"
#include "kernelsmith/triton.hpp"
#include "test_support.hpp"
#include "triton/triton_compiler.hpp"
#include "triton/triton_launch.hpp"

using namespace kernelsmith;
using namespace kernelsmith::detail;

namespace {

// y = 2a + b for the harness task (tests/data/harness_task).
const char* kScaleAdd = R"(# @tune BLOCK = 256 in {128, 256, 1024}
# @launch scale_add[ceil_div(N, BLOCK)](a, b, y, N, BLOCK=BLOCK) num_warps=4
import triton
import triton.language as tl


@triton.jit
def scale_add(a_ptr, b_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    a = tl.load(a_ptr + offsets, mask=mask)
    b = tl.load(b_ptr + offsets, mask=mask)
    tl.store(y_ptr + offsets, 2.0 * a + b, mask=mask)
)";

// The same through tensor descriptors (TMA on Hopper), which need global scratch for the descriptors.
const char* kDescriptors = R"(# @launch scale_add[ceil_div(N, 256)](y, a, b, N, BLOCK=256) num_warps=4
import triton
import triton.language as tl


@triton.jit
def scale_add(y_ptr, a_ptr, b_ptr, n, BLOCK: tl.constexpr):
    start = tl.program_id(0) * BLOCK
    a_desc = tl.make_tensor_descriptor(a_ptr, shape=[n], strides=[1], block_shape=[BLOCK])
    b_desc = tl.make_tensor_descriptor(b_ptr, shape=[n], strides=[1], block_shape=[BLOCK])
    y_desc = tl.make_tensor_descriptor(y_ptr, shape=[n], strides=[1], block_shape=[BLOCK])
    y_desc.store([start], 2.0 * a_desc.load([start]) + b_desc.load([start]))
)";

std::map<std::string, BoundPlan> bind_all(const Task& task, const std::string& source) {
  const LaunchPlan plan = LaunchPlan::parse(source, "triton");
  DeviceInfo device;
  device.name = "test device";
  device.max_threads_per_block = 1024;
  device.shared_per_block = 48 * 1024;
  device.shared_per_block_optin = 227 * 1024;
  device.compute_units = 132;
  device.warp_size = 32;
  std::map<std::string, BoundPlan> bound;
  for (const auto& config : task.all_size_configs()) bound[config.name] = bind_plan(task, plan, config, device);
  return bound;
}

DeviceInfo hopper_like() {
  DeviceInfo device;
  device.name = "test device";
  device.shared_per_block = 48 * 1024;
  device.shared_per_block_optin = 227 * 1024;
  return device;
}

template <typename Call>
std::string message_of(Call&& call) {
  try {
    call();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "(nothing was thrown)";
}

std::string triton_unavailable_reason() {
  const TritonStatus status = triton_status();
  return status.available ? std::string() : "triton cannot compile here: " + status.reason;
}

using test::ScopedEnvironment;

}  // namespace

TEST_CASE("Triton launches are bound with their specialization", "[triton][plan]") {
  const Task task = test::small_task();
  const auto bound = bind_all(task, kScaleAdd);
  const BoundLaunch& launch = bound.at("one").launches.at(0);
  CHECK(launch.kernel == "scale_add");
  CHECK(launch.num_warps == 4);
  CHECK(launch.num_stages == 3);
  CHECK(launch.block == Dim3{128, 1, 1});
  REQUIRE(launch.constexprs.size() == 1);
  CHECK(launch.constexprs[0] == std::make_pair(std::string("BLOCK"), std::int64_t(256)));
  CHECK(launch.binary == "scale_add[BLOCK=256 num_warps=4 num_stages=3 | *fp32,*fp32,*fp32,i32]");

  // The check sizes share one build; the timing size (N = 4096) has its own, where N is known to be a
  // multiple of 16, as triton's JIT would specialize it.
  CHECK(bound.at("odd_1000").launches[0].binary == launch.binary);
  const std::string timing = task.timing_sizes.name;
  CHECK(bound.at(timing).launches[0].binary ==
        "scale_add[BLOCK=256 num_warps=4 num_stages=3 | *fp32,*fp32,*fp32,i32/16]");
  const auto specs = triton_kernel_specs(bound);
  REQUIRE(specs.size() == 2);
  for (const auto& spec : specs) {
    CHECK(spec.kernel == "scale_add");
    CHECK(spec.signature == std::vector<std::string>{"*fp32", "*fp32", "*fp32", "i32"});
    CHECK(spec.line == 2);
    CHECK(spec.aligned == (spec.name == launch.binary ? std::vector<int>{0, 1, 2} : std::vector<int>{0, 1, 2, 3}));
  }

  // A constexpr that follows the sizes, and an integer beyond 32 bits, make their own specializations.
  const std::string by_size = std::string(R"(# @launch scale_add[1](a, b, y, N * 3000000 + 1, BLOCK=N))") + "\n" +
                              std::string(kScaleAdd).substr(std::string(kScaleAdd).find("import"));
  const auto per_size = bind_all(task, by_size);
  CHECK(per_size.at("one").launches[0].binary == "scale_add[BLOCK=1 num_warps=4 num_stages=3 | *fp32,*fp32,*fp32,i32]");
  CHECK(per_size.at("odd_1000").launches[0].binary ==
        "scale_add[BLOCK=1000 num_warps=4 num_stages=3 | *fp32,*fp32,*fp32,i64]");
  CHECK(triton_kernel_specs(per_size).size() == 3);
}

TEST_CASE("Triton launch options are checked at binding, naming the line", "[triton][plan]") {
  const Task task = test::small_task();
  const std::string body = std::string(kScaleAdd).substr(std::string(kScaleAdd).find("import"));
  CHECK(test::contains(message_of([&] { bind_all(task, "# @launch scale_add[N](a, b, y, N, BLOCK=256) num_warps=3\n" + body); }),
                       "line 1: num_warps of scale_add is `3` = 3; it must be a power of two from 1 to 32"));
  CHECK(test::contains(message_of([&] { bind_all(task, "# @launch scale_add[N](a, b, y, N, BLOCK=256) num_stages=0\n" + body); }), "num_stages of scale_add is `0` = 0"));
  CHECK(test::contains(message_of([&] { bind_all(task, "# @launch scale_add[N](a, b, y, N, BLOCK=WIDTH)\n" + body); }), "the constexpr BLOCK of scale_add `WIDTH`"));
}

TEST_CASE("A Triton binary's launch ABI is applied to its bound launch", "[triton][plan]") {
  const Task task = test::small_task();
  auto bound = bind_all(task, kScaleAdd);
  BoundPlan plan = bound.at("odd_1000");  // 4 blocks of 256
  KernelBinary binary;
  binary.name = plan.launches[0].binary;
  binary.block_threads = 128;
  binary.shared_bytes = 1032;
  binary.scratch_pointers = 2;
  binary.global_scratch_bytes = 384;
  binary.global_scratch_align = 128;
  std::vector<KernelParam> params(6, KernelParam{8, "", false, false});

  SECTION("global scratch is a workspace of blocks x bytes; profile scratch without bytes is a null pointer") {
    const std::size_t buffers_before = plan.buffers.size();
    BoundLaunch launch = plan.launches[0];
    apply_kernel_binary(launch, plan, binary, params, hopper_like());
    CHECK(launch.shared_bytes == 1032);
    CHECK(launch.block == Dim3{128, 1, 1});
    REQUIRE(launch.args.size() == 6);
    REQUIRE(plan.buffers.size() == buffers_before + 1);
    const BufferSpec& scratch = plan.buffers.back();
    CHECK(scratch.role == BufferSpec::Role::workspace);
    CHECK(scratch.bytes == 4 * 384);
    CHECK(launch.args[4].is_buffer);
    CHECK(launch.args[4].buffer == plan.buffers.size() - 1);
    CHECK_FALSE(launch.args[5].is_buffer);
    CHECK(launch.args[5].value == 0);
  }
  SECTION("a parameter count other than the ABI's is refused, naming the triton versions it knows") {
    BoundLaunch launch = plan.launches[0];
    CHECK(test::contains(message_of([&] { apply_kernel_binary(launch, plan, binary, std::vector<KernelParam>(5), hopper_like()); }), "line 2: the compiled kernel scale_add takes 5 parameters, but kernelsmith "
                                           "launches Triton kernels with their 4 non-constexpr argument(s) followed "
                                           "by 2 scratch pointers"));
  }
  SECTION("more shared memory than the device has is an invalid launch that says what to lower") {
    BoundLaunch launch = plan.launches[0];
    binary.shared_bytes = 300 * 1024;
    CHECK(test::contains(message_of([&] { apply_kernel_binary(launch, plan, binary, params, hopper_like()); }), "lower num_stages or the block sizes"));
  }
  SECTION("clusters (num_ctas > 1) are refused as not supported") {
    BoundLaunch launch = plan.launches[0];
    binary.num_ctas = 2;
    CHECK(test::contains(message_of([&] { apply_kernel_binary(launch, plan, binary, params, hopper_like()); }), "with num_ctas=1 only"));
  }
}

TEST_CASE("Programs of kernel binaries survive the JSON codec", "[triton][json]") {
  CompiledProgram program;
  program.language = "triton";
  program.target = "sm_90a";
  program.report.ok = true;
  KernelBinary binary;
  binary.name = "k[BLOCK=4 num_warps=1 num_stages=3 | *fp32,i32]";
  binary.symbol = "k";
  binary.binary = {0x7f, 'E', 'L', 'F', 0, 1, 2};
  binary.block_threads = 32;
  binary.shared_bytes = 12;
  binary.scratch_pointers = 2;
  binary.global_scratch_bytes = 384;
  binary.global_scratch_align = 128;
  binary.param_count = 4;
  program.kernel_binaries.push_back(binary);
  const CompiledProgram back = compiled_program_from_text(compiled_program_to_text(program));
  REQUIRE(back.kernel_binaries.size() == 1);
  const KernelBinary& read = back.kernel_binaries[0];
  CHECK(read.name == binary.name);
  CHECK(read.symbol == "k");
  CHECK(read.binary == binary.binary);
  CHECK(read.block_threads == 32);
  CHECK(read.shared_bytes == 12);
  CHECK(read.global_scratch_bytes == 384);
  CHECK(read.global_scratch_align == 128);
  CHECK(read.param_count == 4);
}

TEST_CASE("Triton status says why the front end is unavailable", "[triton]") {
  const ScopedEnvironment missing("KERNELSMITH_TRITON_HELPER", "/nonexistent/triton_compile.py");
  const TritonStatus status = triton_status();
  CHECK_FALSE(status.available);
  CHECK(test::contains(status.reason, "/nonexistent/triton_compile.py"));
}

TEST_CASE("A compile helper that dies is reported with how it ended", "[triton]") {
  const auto script = std::filesystem::temp_directory_path() / "kernelsmith-test-dying-helper.py";
  {
    std::ofstream out(script);
    out << "import sys\nsys.stderr.write('helper giving up\\n')\nsys.exit(3)\n";
  }
  const ScopedEnvironment dying("KERNELSMITH_TRITON_HELPER", script.string());
  TritonKernelSpec spec;
  spec.name = spec.kernel = "k";
  const std::string message = message_of([&] { compile_triton_kernel("", spec, "sm_90", 30.0); });
  CHECK(test::contains(message, "exited with status 3"));
  CHECK(test::contains(message, "helper giving up"));
  std::filesystem::remove(script);
}

TEST_CASE("The Triton front end compiles a candidate to cubins without a GPU", "[triton][compile]") {
  KERNELSMITH_SKIP_WHEN(triton_unavailable_reason());
  const Task task = test::small_task();

  for (const std::string target : {"sm_90a", "sm_80"}) {
    INFO(target);
    const CompiledProgram program = compile_triton_program(kScaleAdd, triton_kernel_specs(bind_all(task, kScaleAdd)),
                                                           target, 120.0);
    INFO(program.report.log);
    REQUIRE(program.report.ok);
    REQUIRE(program.kernel_binaries.size() == 2);  // the check sizes' build and the timing size's
    const KernelBinary& binary = program.kernel_binaries[0];
    CHECK(binary.symbol == "scale_add");
    CHECK(binary.block_threads == 128);
    CHECK(binary.num_ctas == 1);
    CHECK(binary.param_count == 6);  // a, b, y, n, then the two scratch pointers
    CHECK(binary.scratch_pointers == 2);
    REQUIRE(binary.binary.size() > 4);
    CHECK(std::string(binary.binary.begin(), binary.binary.begin() + 4) == "\x7f" "ELF");
    REQUIRE(program.report.kernels.size() == 2);
    CHECK(program.report.kernels[0].registers > 0);
    CHECK(program.report.kernels[0].spill_store_bytes == 0);
  }

  // Tensor descriptors keep their descriptors in global scratch, one area per block.
  const CompiledProgram descriptors =
      compile_triton_program(kDescriptors, triton_kernel_specs(bind_all(task, kDescriptors)), "sm_90a", 120.0);
  INFO(descriptors.report.log);
  REQUIRE(descriptors.report.ok);
  CHECK(descriptors.kernel_binaries.at(0).global_scratch_bytes > 0);
}

TEST_CASE("Triton rejections point at the candidate's line", "[triton][compile]") {
  KERNELSMITH_SKIP_WHEN(triton_unavailable_reason());
  const Task task = test::small_task();
  const auto compile = [&](const std::string& source) {
    return compile_triton_program(source, triton_kernel_specs(bind_all(task, source)), "sm_90a", 120.0);
  };
  std::string typo = kScaleAdd;
  typo.replace(typo.find("tl.store"), 8, "tl.stor");
  const CompiledProgram misspelt = compile(typo);
  CHECK_FALSE(misspelt.report.ok);
  CHECK(misspelt.kernel_binaries.empty());
  CHECK(misspelt.report.log.rfind("line 13: ", 0) == 0);

  std::string host_code = kScaleAdd;
  host_code.insert(host_code.find("import triton\n"), "import os\n");
  const CompiledProgram gated = compile(host_code);
  CHECK_FALSE(gated.report.ok);
  CHECK(gated.report.log.rfind("line 3: `import os` is not allowed", 0) == 0);
  CHECK(test::contains(gated.report.log, "stage gate"));
}
