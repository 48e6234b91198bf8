// The MACA backend plugin without a GPU, through the stand-in runtime (tests/maca_standin): why it is
// unavailable (plugin, runtime, symbol, device, a failing call with its message), the compile stage
// through MCRTC (NVRTC under the stand-in), and plans that MACA cannot launch.
#include <dlfcn.h>
#include <fmt/format.h>

#include <string>

#include "catch.hpp"
#include "backend_registry.hpp"
#include "maca_test_support.hpp"
#include "test_support.hpp"
#include "evaluate/compile_jobs.hpp"
#include "kernelsmith/backend.hpp"
#include "kernelsmith/candidate.hpp"
#include "kernelsmith/error.hpp"

using namespace kernelsmith;

namespace {

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// What the stand-in compiles for on an H100 (compute_90 → the stand-in's sm_90 cubin).
CompileOptions for_target(const std::string& target = "compute_90") {
  CompileOptions options;
  options.target = target;
  return options;
}

const char* const kKernel = R"(#include <maca_fp16.h>
extern "C" __global__ void halve(const __half* x, float* y, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = __half2float(x[i]) * FACTOR;
}
)";

}  // namespace

TEST_CASE("MACA: a build without the SDK, or without the plugin file, says why", "[maca][loading]") {
#if KERNELSMITH_ENABLE_MACA
  test::ScopedEnvironment plugin("KERNELSMITH_MACA_PLUGIN", std::string("/nonexistent/libkernelsmith_maca.so"));
  const BackendInfo info = detail::probe_maca();
  CHECK_FALSE(info.available);
  CHECK(contains(info.reason, "MACA backend plugin libkernelsmith_maca.so not found"));
  CHECK(contains(info.reason, "/nonexistent/libkernelsmith_maca.so"));
  CHECK_THROWS_AS(create_backend("maca"), LibraryNotFoundError);
#else
  const BackendInfo info = detail::probe_maca();
  CHECK_FALSE(info.available);
  CHECK(contains(info.reason, "no MACA SDK at "));
  CHECK(contains(info.reason, "when kernelsmith was built"));
  CHECK_THROWS_AS(create_backend("maca"), BackendUnavailableError);
#endif
}

TEST_CASE("MACA: a missing runtime is named with the files tried", "[maca][loading]") {
  KERNELSMITH_SKIP_WHEN(KERNELSMITH_ENABLE_MACA ? "" : "this build has no MACA plugin");
  {
    test::ScopedEnvironment runtime("KERNELSMITH_MACA_RUNTIME", std::string("/nonexistent/lib/libmcruntime.so"));
    const BackendInfo info = detail::probe_maca();
    CHECK_FALSE(info.available);
    CHECK_FALSE(info.can_compile);
    CHECK(contains(info.reason, "libmcruntime.so not found (tried: /nonexistent/lib/libmcruntime.so)"));
    CHECK_THROWS_AS(create_backend("maca"), LibraryNotFoundError);
    CHECK_THROWS_AS(compile_offline("maca", kKernel, for_target()), LibraryNotFoundError);
  }
  // Without the override, in a fresh process: once a libmcruntime.so is loaded (the stand-in, by an earlier
  // test), the loader answers the plain name with it.
  const test::ChildRun child = test::run_tagged_in_child("[maca_runtime_search_child]");
  INFO(child.output);
  CHECK(child.exited_cleanly);
  CHECK(contains(child.output, "All tests passed (1 assertion"));
  CHECK_FALSE(contains(child.output, "skipped:"));
}

TEST_CASE("MACA child: the runtime is looked for under MACA_PATH, on the loader's path, then in /opt/maca",
          "[.][maca_runtime_search_child]") {
  // Run alone, in a child of the test above; in a process that has loaded a runtime already (a run of every
  // test), the plain name finds that one and there is nothing to check. A run of every test also reaches it in
  // a build without the plugin, where probing says so instead of searching.
  KERNELSMITH_SKIP_WHEN(KERNELSMITH_ENABLE_MACA ? "" : "this build has no MACA plugin");
  if (::dlopen("libmcruntime.so", RTLD_NOW | RTLD_NOLOAD) != nullptr) {
    WARN("skipped: a libmcruntime.so is loaded in this process already; run this test in a fresh process");
    return;
  }
  test::ScopedEnvironment unset("KERNELSMITH_MACA_RUNTIME", std::nullopt);
  test::ScopedEnvironment root("MACA_PATH", std::string("/nonexistent/maca"));
  const BackendInfo info = detail::probe_maca();
  INFO(info.reason);
  CHECK(contains(info.reason, "tried: /nonexistent/maca/lib/libmcruntime.so, libmcruntime.so, "
                              "/opt/maca/lib/libmcruntime.so"));
}

TEST_CASE("MACA: a runtime without a function the plugin needs is a SymbolMissingError naming it", "[maca][loading]") {
  KERNELSMITH_SKIP_WHEN(test::maca_standin_missing_reason());
#if defined(KERNELSMITH_TEST_MACA_STANDIN_MISSING_SYMBOL)
  test::ScopedEnvironment runtime("KERNELSMITH_MACA_RUNTIME", std::string(KERNELSMITH_TEST_MACA_STANDIN_MISSING_SYMBOL));
  const BackendInfo info = detail::probe_maca();
  CHECK_FALSE(info.available);
  CHECK(contains(info.reason, "has no symbol mcModuleLaunchKernel"));
  CHECK_THROWS_AS(create_backend("maca"), SymbolMissingError);
#endif
}

// Tagged [no_gpu]: on a GPU machine it cannot run (the stand-in forwards to the real device), and the gpu-check
// step, where a skip fails, leaves it out.
TEST_CASE("MACA: without a GPU the stand-in finds no device, and devices() says so", "[maca][loading][no_gpu]") {
  KERNELSMITH_SKIP_WHEN(test::maca_standin_missing_reason());
  KERNELSMITH_SKIP_WHEN(test::cuda_unavailable_reason().empty() ? "a CUDA GPU is present: the stand-in finds a device"
                                                                 : "");
  test::UseMacaStandin standin;
  const BackendInfo info = detail::probe_maca();
  CHECK_FALSE(info.available);
  CHECK(info.can_compile);  // MCRTC needs no device
  CHECK(info.devices.empty());
  INFO(info.reason);
  CHECK(contains(info.reason, "no MetaX device"));
  CHECK(contains(info.reason, "mcErrorNoDevice"));
  // The stand-in's own message, through mcGetErrorString: why it found none.
  CHECK(contains(info.reason, "CUDA driver"));
  CHECK_THROWS_AS(create_backend("maca"), BackendUnavailableError);
}

TEST_CASE("MACA: a failing runtime call is reported with the runtime's message", "[maca][loading]") {
  KERNELSMITH_SKIP_WHEN(test::maca_standin_missing_reason());
  test::UseMacaStandin standin;
  {
    test::ScopedEnvironment fail("KERNELSMITH_MCRUNTIME_FAIL", std::string("mcInit"));
    const BackendInfo info = detail::probe_maca();
    CHECK_FALSE(info.available);
    INFO(info.reason);
    CHECK(contains(info.reason, "mcInit failed: mcErrorInvalidValue (invalid argument (mcInit failed on purpose"));
  }
  {
    test::ScopedEnvironment fail("KERNELSMITH_MCRUNTIME_FAIL", std::string("mcrtcCompileProgram"));
    const std::string message = test::error_of([] { compile_offline("maca", kKernel, for_target()); });
    CHECK(contains(message, "mcrtcCompileProgram failed: MCRTC_ERROR_INTERNAL_ERROR"));
  }
  {
    test::ScopedEnvironment form("KERNELSMITH_MACA_LAUNCH", std::string("sideways"));
    const std::string message = test::error_of([] { create_backend("maca"); });
    CHECK(contains(message, "KERNELSMITH_MACA_LAUNCH=sideways is not a launch form"));
  }
}

TEST_CASE("MACA: MCRTC compiles with the SDK's headers, defines and the device's target", "[maca][compile]") {
  KERNELSMITH_SKIP_WHEN(test::maca_standin_missing_reason());
  test::UseMacaStandin standin;
  CompileOptions options = for_target();
  options.defines = {{"FACTOR", "0.5f"}};
  const CompiledProgram program = compile_offline("maca", kKernel, options);
  INFO(program.report.log);
  REQUIRE(program.report.ok);
  CHECK(program.language == "maca");
  CHECK(program.target == "compute_90");
  // The stand-in's "bitcode" is NVRTC's cubin: an ELF file.
  REQUIRE(program.binary.size() > 4);
  CHECK(std::string(program.binary.begin(), program.binary.begin() + 4) == "\x7f" "ELF");

  // Without the define the source does not compile: a report, with the line, not an exception.
  const CompiledProgram broken = compile_offline("maca", kKernel, for_target());
  CHECK_FALSE(broken.report.ok);
  CHECK(contains(broken.report.log, "candidate.maca(4)"));
  CHECK(contains(broken.report.log, "FACTOR"));

  CHECK_THROWS_AS(compile_offline("maca", kKernel, for_target("sm_90")), ValidationError);
  CHECK_THROWS_AS(compile_offline("maca", kKernel, for_target("")), ValidationError);
  CompileOptions bad_define = for_target();
  bad_define.defines = {{"1X", "2"}};
  CHECK_THROWS_AS(compile_offline("maca", kKernel, bad_define), ValidationError);
}

TEST_CASE("MACA: a plan that launches a C++ or template kernel is an invalid launch, saying why", "[maca][plan]") {
  Candidate candidate;
  candidate.language = "maca";
  candidate.source = "// @launch gemm<128><<<1, 64>>>(x)\ntemplate <int T> __global__ void gemm(float* x) {}\n";
  const detail::Precheck checked = detail::precheck(candidate, "maca", "maca");
  REQUIRE(checked.failure.has_value());
  CHECK(*checked.failure == Status::invalid_launch);
  CHECK(contains(checked.message, "line 1: kernel 'gemm<128>'"));
  CHECK(contains(checked.message, "extern \"C\""));
  // The same plan is fine in CUDA, where NVRTC resolves the name.
  candidate.language = "cuda";
  CHECK_FALSE(detail::precheck(candidate, "cuda", "cuda").failure.has_value());
  // And a plain name is fine in MACA.
  candidate.language = "maca";
  candidate.source = "// @launch scale<<<1, 64>>>(x)\nextern \"C\" __global__ void scale(float* x) {}\n";
  CHECK_FALSE(detail::precheck(candidate, "maca", "maca").failure.has_value());
}
