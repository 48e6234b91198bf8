// Kernel names on the OpenCL backend: a plan may name CUDA template instances ("scale<2>"), which OpenCL
// C cannot have; the backend says so instead of a bare "not found". Runs on PoCL's CPU device.
#include "kernelsmith/config.hpp"

#if KERNELSMITH_ENABLE_OPENCL

#include <string>

#include "catch.hpp"
#include "kernelsmith/backend.hpp"
#include "kernelsmith/device.hpp"
#include "kernelsmith/error.hpp"
#include "harness_test_support.hpp"

namespace {

using namespace kernelsmith;

using test::opencl_available;

}  // namespace

TEST_CASE("OpenCL: a template kernel name is refused with the reason", "[opencl][launch_plan]") {
  if (!opencl_available()) {
    WARN("skipped: no OpenCL device");
    return;
  }
  auto backend = create_backend("opencl", 0);
  const std::string source = "__kernel void scale(__global float* x, int n) { x[get_global_id(0)] *= 2.0f; }\n";
  CompileOptions options;
  options.kernels = {"scale<2>"};
  const CompiledProgram program = backend->compile(source, options);
  REQUIRE(program.report.ok);
  const std::uint64_t module = backend->load(program);
  try {
    backend->kernel(module, "scale<2>");
    FAIL("a template name was accepted");
  } catch (const NotFoundError& error) {
    const std::string message = error.what();
    CHECK(message.find("OpenCL C has no templates") != std::string::npos);
    CHECK(message.find("scale") != std::string::npos);  // the __kernel functions it does have
  }
  CHECK(backend->kernel(module, "scale") != 0);
  backend->unload(module);
}

#endif  // KERNELSMITH_ENABLE_OPENCL

