// The device-attribute table: names, values read from a DeviceInfo, the opt-in fallback, placeholders,
// and that plan binding and task validation use it.
#include <string>

#include "catch.hpp"
#include "kernelsmith/device_attributes.hpp"
#include "kernelsmith/error.hpp"
#include "kernelsmith/launch_plan.hpp"

using namespace kernelsmith;

namespace {

DeviceInfo sample_device() {
  DeviceInfo device;
  device.compute_units = 132;
  device.warp_size = 32;
  device.max_threads_per_block = 1024;
  device.shared_per_block = 48 * 1024;
  device.shared_per_block_optin = 227 * 1024;
  device.l2_bytes = 50 * 1024 * 1024;
  return device;
}

}  // namespace

TEST_CASE("the table lists every attribute plans may use, each once", "[device_attributes]") {
  const auto names = device_attribute_names();
  REQUIRE(names == std::vector<std::string>{"SM_COUNT", "WARP_SIZE", "MAX_THREADS_PER_BLOCK", "SMEM_PER_BLOCK",
                                            "SMEM_PER_BLOCK_OPTIN", "L2_BYTES", "COMPUTE_CAPABILITY"});
  for (const auto& attribute : device_attributes()) {
    CHECK(attribute.read != nullptr);
    CHECK(attribute.placeholder > 0);
    CHECK_FALSE(attribute.description.empty());
    CHECK(is_device_attribute(attribute.name));
  }
  CHECK_FALSE(is_device_attribute("N"));
  CHECK_FALSE(is_device_attribute("sm_count"));
}

TEST_CASE("values are read from the device", "[device_attributes]") {
  const auto values = device_attribute_values(sample_device());
  CHECK(values.at("SM_COUNT") == 132);
  CHECK(values.at("WARP_SIZE") == 32);
  CHECK(values.at("MAX_THREADS_PER_BLOCK") == 1024);
  CHECK(values.at("SMEM_PER_BLOCK") == 48 * 1024);
  CHECK(values.at("SMEM_PER_BLOCK_OPTIN") == 227 * 1024);
  CHECK(values.at("L2_BYTES") == 50 * 1024 * 1024);
  DeviceInfo device = sample_device();
  device.backend = "cuda";
  device.architecture = "sm_90";
  CHECK(device_attribute_values(device).at("COMPUTE_CAPABILITY") == 90);
  device.architecture = "sm_100a";
  CHECK(device_attribute_values(device).at("COMPUTE_CAPABILITY") == 100);
  device.backend = "opencl";
  CHECK(device_attribute_values(device).at("COMPUTE_CAPABILITY") == 0);
}

TEST_CASE("a device without an opt-in limit allows its plain limit under SMEM_PER_BLOCK_OPTIN", "[device_attributes]") {
  DeviceInfo device = sample_device();
  device.shared_per_block_optin = 0;  // OpenCL devices and older GPUs report none
  CHECK(shared_memory_limit(device) == 48 * 1024);
  CHECK(device_attribute_values(device).at("SMEM_PER_BLOCK_OPTIN") == 48 * 1024);
  device.shared_per_block_optin = 100 * 1024;
  CHECK(shared_memory_limit(device) == 100 * 1024);
  // An expression over the attributes sees the same value.
  CHECK(evaluate_expression("SMEM_PER_BLOCK_OPTIN / 1024", device_attribute_values(device)) == 100);
}

TEST_CASE("placeholders stand in for every attribute when no device is known", "[device_attributes]") {
  const auto placeholders = placeholder_device_attribute_values();
  REQUIRE(placeholders.size() == device_attributes().size());
  CHECK(evaluate_expression("ceil_div(4096, WARP_SIZE) + SM_COUNT", placeholders) == 128 + 132);
}

TEST_CASE("a tunable cannot take a device attribute's name", "[device_attributes][launch_plan]") {
  const std::string source =
      "// @tune WARP_SIZE = 64 in {32, 64}\n"
      "// @launch k<<<1, 32>>>(x)\n"
      "extern \"C\" __global__ void k(float* x) {}\n";
  try {
    LaunchPlan::parse(source);
    FAIL("the plan parsed");
  } catch (const PlanError& e) {
    CHECK(std::string(e.what()).find("WARP_SIZE is a device attribute") != std::string::npos);
    CHECK(e.line() == 1);
  }
}
