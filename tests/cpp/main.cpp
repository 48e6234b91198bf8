// Catch2 v2 needs one translation unit to provide main(); v3 links Catch2WithMain instead.
#if !defined(KERNELSMITH_CATCH2_V3)
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>
#endif

#include <cstdlib>

namespace {

// The tests link the library statically, so "beside the library" is the tests' folder, where no worker
// is: point the evaluator at the one this build made, unless the caller chose another.
[[maybe_unused]] const bool kWorkerLocated = [] { return ::setenv("KERNELSMITH_WORKER", KERNELSMITH_TEST_WORKER, 0) == 0; }();
// The sandbox launcher, likewise (it sits beside the worker in the build tree).
[[maybe_unused]] const bool kSandboxLocated = [] {
  return ::setenv("KERNELSMITH_SANDBOX_LAUNCHER", KERNELSMITH_TEST_SANDBOX_LAUNCHER, 0) == 0;
}();

#if defined(KERNELSMITH_TEST_MACA_PLUGIN)
// Likewise the MACA backend plugin, which the library (and the worker, which inherits this) looks for beside
// itself.
[[maybe_unused]] const bool kMacaPluginLocated = [] {
  return ::setenv("KERNELSMITH_MACA_PLUGIN", KERNELSMITH_TEST_MACA_PLUGIN, 0) == 0;
}();
#endif

#if defined(KERNELSMITH_TEST_MACA_STANDIN)
// Where the plugin was built against the stand-in SDK, the MACA runtime is the stand-in (tests/maca_standin),
// set before anything calls devices(), whose answer is cached: on a CUDA GPU the MACA backend then runs on it,
// elsewhere it reports no MetaX device. Tests of the other cases point the variable elsewhere for a scope.
[[maybe_unused]] const bool kMacaRuntimeLocated = [] {
  return ::setenv("KERNELSMITH_MACA_RUNTIME", KERNELSMITH_TEST_MACA_STANDIN, 0) == 0;
}();
#endif

}  // namespace
