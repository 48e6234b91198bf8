// DeviceInfo as JSON: the worker sends it to the caller, and devices() prints it.
#pragma once

#include <nlohmann/json.hpp>

#include "kernelsmith/device.hpp"

namespace kernelsmith::detail {

nlohmann::json device_to_json(const DeviceInfo& device);
/// Throws nlohmann::json::exception when a field is missing or of the wrong type.
DeviceInfo device_from_json(const nlohmann::json& json);

}  // namespace kernelsmith::detail
