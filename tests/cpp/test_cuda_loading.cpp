// Loading the CUDA driver and NVRTC at run time: what probe_cuda() says, and the three distinct
// failures (not found, failed to load, symbol missing) through the override variables.
#include "kernelsmith/config.hpp"

#if KERNELSMITH_ENABLE_CUDA

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>

#include "catch.hpp"
#include "cuda/driver_api.hpp"
#include "cuda/nvrtc_api.hpp"
#include "backend_registry.hpp"
#include "kernelsmith/backend.hpp"
#include "kernelsmith/error.hpp"
#include "test_support.hpp"

namespace {

using namespace kernelsmith;

using test::ScopedEnvironment;

// Whether this machine has a CUDA driver at all (the development machine has none; GPU machines do).
bool driver_present() {
  try {
    detail::cuda::driver();
    return true;
  } catch (const BackendUnavailableError&) {
    return false;
  }
}

std::filesystem::path text_file_posing_as_library() {
  const auto path = std::filesystem::temp_directory_path() / "kernelsmith_test_not_a_library.so";
  std::ofstream(path) << "this is a text file, not an ELF shared object\n";
  return path;
}

template <typename Exception, typename Function>
std::string message_of(Function&& function) {
  try {
    function();
  } catch (const Exception& error) {
    return error.what();
  }
  FAIL("the expected exception was not thrown");
  return {};
}

}  // namespace

TEST_CASE("probe_cuda reports the driver and the compiler without throwing", "[cuda][loading]") {
  BackendInfo info;
  REQUIRE_NOTHROW(info = detail::probe_cuda());
  CHECK(info.name == "cuda");

  // NVRTC ships with the toolkit, which both the CI machine and the GPU machines have.
  CHECK(info.can_compile);
  bool names_nvrtc = false;
  for (const auto& detail : info.details) names_nvrtc = names_nvrtc || detail.rfind("NVRTC ", 0) == 0;
  CHECK(names_nvrtc);

  if (!driver_present()) {
    INFO("reason: " << info.reason);
    CHECK_FALSE(info.available);
    CHECK(info.devices.empty());
    CHECK(info.reason.find("CUDA driver libcuda.so.1 not found") != std::string::npos);
    CHECK(info.reason.find("tried:") != std::string::npos);
  } else {
    INFO("reason: " << info.reason);
    REQUIRE(info.available);
    REQUIRE_FALSE(info.devices.empty());
    for (const auto& device : info.devices) {
      CHECK(device.backend == "cuda");
      CHECK(device.is_gpu);
      CHECK(device.architecture.rfind("sm_", 0) == 0);
      CHECK(device.compute_units > 0);
      CHECK(device.warp_size == 32);
      CHECK(device.shared_per_block >= 48 * 1024);
      CHECK(device.shared_per_block_optin >= device.shared_per_block);
      CHECK(device.l2_bytes > 0);
      CHECK(device.global_memory_bytes > 0);
      CHECK(device.clock_mhz > 0);
      CHECK_FALSE(device.name.empty());
    }
  }
}

TEST_CASE("without a driver, creating a CUDA backend says why", "[cuda][loading]") {
  if (driver_present()) {
    WARN("skipped: this machine has a CUDA driver");
    return;
  }
  const std::string message = message_of<BackendUnavailableError>([] { create_backend("cuda", 0); });
  CHECK(message.find("libcuda.so.1") != std::string::npos);
}

TEST_CASE("the CUDA driver override variable tells the three failures apart", "[cuda][loading]") {
  SECTION("a missing file is LibraryNotFoundError naming the file") {
    ScopedEnvironment variable("KERNELSMITH_CUDA_DRIVER_LIBRARY", "/nonexistent/kernelsmith/libcuda.so.1");
    CHECK(detail::cuda::driver_library_candidates() ==
          std::vector<std::string>{"/nonexistent/kernelsmith/libcuda.so.1"});
    const std::string message =
        message_of<LibraryNotFoundError>([] { detail::cuda::load_driver_api(); });
    CHECK(message.find("/nonexistent/kernelsmith/libcuda.so.1") != std::string::npos);
  }
  SECTION("a file that is not a library is LibraryLoadError") {
    const auto path = text_file_posing_as_library();
    ScopedEnvironment variable("KERNELSMITH_CUDA_DRIVER_LIBRARY", path.string());
    const std::string message = message_of<LibraryLoadError>([] { detail::cuda::load_driver_api(); });
    CHECK(message.find(path.string()) != std::string::npos);
    std::filesystem::remove(path);
  }
  SECTION("a library without the driver's entry point is SymbolMissingError naming it") {
    ScopedEnvironment variable("KERNELSMITH_CUDA_DRIVER_LIBRARY", "libm.so.6");
    const std::string message = message_of<SymbolMissingError>([] { detail::cuda::load_driver_api(); });
    CHECK(message.find("cuGetProcAddress_v2") != std::string::npos);
    CHECK(message.find("libm.so.6") != std::string::npos);
  }
}

TEST_CASE("the NVRTC override variable tells the three failures apart", "[cuda][loading]") {
  SECTION("a missing file") {
    ScopedEnvironment variable("KERNELSMITH_NVRTC_LIBRARY", "/nonexistent/libnvrtc.so.13");
    CHECK_THROWS_AS(detail::cuda::load_nvrtc_api(), LibraryNotFoundError);
  }
  SECTION("a file that is not a library") {
    const auto path = text_file_posing_as_library();
    ScopedEnvironment variable("KERNELSMITH_NVRTC_LIBRARY", path.string());
    CHECK_THROWS_AS(detail::cuda::load_nvrtc_api(), LibraryLoadError);
    std::filesystem::remove(path);
  }
  SECTION("a library without NVRTC's functions") {
    ScopedEnvironment variable("KERNELSMITH_NVRTC_LIBRARY", "libm.so.6");
    const std::string message = message_of<SymbolMissingError>([] { detail::cuda::load_nvrtc_api(); });
    CHECK(message.find("nvrtc") != std::string::npos);
  }
  SECTION("the toolkit's NVRTC loads and reports its version") {
    ScopedEnvironment variable("KERNELSMITH_NVRTC_LIBRARY", std::nullopt);
    const auto api = detail::cuda::load_nvrtc_api();
    CHECK(api->version_major >= 11);
    CHECK(api->description().find("NVRTC") == 0);
    CHECK(std::filesystem::exists(api->library));
  }
}

TEST_CASE("NVRTC is looked for under CUDA_HOME and CUDA_PATH before the loader's path", "[cuda][loading]") {
  ScopedEnvironment no_override("KERNELSMITH_NVRTC_LIBRARY", std::nullopt);
  ScopedEnvironment home("CUDA_HOME", "/opt/toolkit-a");
  ScopedEnvironment path("CUDA_PATH", "/opt/toolkit-b");
  const auto candidates = detail::cuda::nvrtc_library_candidates();
  REQUIRE(candidates.size() >= 4);
  CHECK(candidates.front() == "/opt/toolkit-a/lib64/libnvrtc.so.13");
  const auto position = [&](const std::string& name) {
    return std::find(candidates.begin(), candidates.end(), name) - candidates.begin();
  };
  CHECK(position("/opt/toolkit-a/lib/libnvrtc.so.13") < position("/opt/toolkit-b/lib64/libnvrtc.so.13"));
  CHECK(position("/opt/toolkit-b/lib/libnvrtc.so") < position("libnvrtc.so.13"));
  CHECK(position("libnvrtc.so.13") < position("libnvrtc.so.12"));
  CHECK(position("libnvrtc.so.12") < position("libnvrtc.so.11.2"));
  CHECK(candidates.back() == "/usr/local/cuda/lib64/libnvrtc.so");
}

TEST_CASE("driver errors are described and classified", "[cuda][loading]") {
  CHECK(detail::cuda::is_sticky_error(CUDA_ERROR_ILLEGAL_ADDRESS));
  CHECK(detail::cuda::is_sticky_error(CUDA_ERROR_LAUNCH_FAILED));
  CHECK(detail::cuda::is_sticky_error(CUDA_ERROR_ASSERT));
  CHECK(detail::cuda::is_sticky_error(CUDA_ERROR_MISALIGNED_ADDRESS));
  CHECK_FALSE(detail::cuda::is_sticky_error(CUDA_ERROR_INVALID_VALUE));
  CHECK_FALSE(detail::cuda::is_sticky_error(CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES));
  CHECK_FALSE(detail::cuda::is_sticky_error(CUDA_ERROR_OUT_OF_MEMORY));

  const std::string fault = message_of<DeviceFault>([] {
    detail::cuda::throw_driver_error(CUDA_ERROR_ILLEGAL_ADDRESS, "cuStreamSynchronize(stream)", "/x/lib/cuda/y.cpp", 42);
  });
  CHECK(fault.find("cuda/y.cpp:42") != std::string::npos);
  CHECK(fault.find("cuStreamSynchronize(stream)") != std::string::npos);
  // With a driver the name comes from it; without one, the number is all that is known.
  CHECK((fault.find("CUDA_ERROR_ILLEGAL_ADDRESS") != std::string::npos || fault.find("700") != std::string::npos));

  // A recoverable error is a DeviceError but not a DeviceFault: the context is still usable.
  bool recoverable = false;
  try {
    detail::cuda::throw_driver_error(CUDA_ERROR_INVALID_VALUE, "cuMemAlloc(&p, 0)", __FILE__, __LINE__);
  } catch (const DeviceFault&) {
    recoverable = false;
  } catch (const DeviceError&) {
    recoverable = true;
  }
  CHECK(recoverable);
}

#endif  // KERNELSMITH_ENABLE_CUDA
