#include "evaluate/device_set.hpp"

#include <fmt/format.h>

#include <cctype>
#include <string>

#include "detail/text.hpp"
#include "kernelsmith/error.hpp"

namespace kernelsmith::detail {
namespace {

void check_exists(int index, const BackendInfo& backend) {
  const std::size_t count = backend.devices.size();
  if (index >= 0 && static_cast<std::size_t>(index) < count) return;
  throw NotFoundError(fmt::format("{} device {} does not exist: there {} {} device{}{}", backend.name, index,
                                  count == 1 ? "is" : "are", count, count == 1 ? "" : "s",
                                  count == 0 ? "" : fmt::format(" (0 to {})", count - 1)));
}

std::vector<int> parse_list(const std::string& spec) {
  std::vector<int> indices;
  std::size_t begin = 0;
  for (;;) {
    const std::size_t comma = spec.find(',', begin);
    const std::string item = trim(spec.substr(begin, comma == std::string::npos ? std::string::npos : comma - begin));
    bool digits = !item.empty() && item.size() <= 6;
    for (const char c : item) digits = digits && std::isdigit(static_cast<unsigned char>(c));
    if (!digits) {
      throw ValidationError(fmt::format(
          "EvaluatorOptions: devices must be \"all\" or device indices separated by commas (\"0,1,3\"); \"{}\" "
          "has the entry \"{}\"",
          spec, item));
    }
    indices.push_back(std::stoi(item));
    if (comma == std::string::npos) return indices;
    begin = comma + 1;
  }
}

}  // namespace

std::vector<int> resolve_device_set(const EvaluatorOptions& options, const BackendInfo& backend) {
  const std::string spec = trim(options.devices);
  std::vector<int> indices;
  if (spec.empty()) {
    indices = {options.device};
  } else if (spec == "all") {
    if (backend.devices.empty()) throw NotFoundError(fmt::format("devices=\"all\": the {} backend has no device", backend.name));
    for (std::size_t i = 0; i < backend.devices.size(); ++i) indices.push_back(static_cast<int>(i));
  } else {
    indices = parse_list(spec);
  }
  for (const int index : indices) check_exists(index, backend);
  const DeviceInfo& first = backend.devices[static_cast<std::size_t>(indices.front())];
  for (const int index : indices) {
    const DeviceInfo& device = backend.devices[static_cast<std::size_t>(index)];
    if (device.architecture != first.architecture) {
      throw ValidationError(fmt::format(
          "EvaluatorOptions: devices \"{}\" mixes architectures ({} device {} is {} '{}', device {} is {} '{}'): "
          "candidates are compiled once for the whole set; make one evaluator per architecture",
          options.devices, backend.name, indices.front(), first.architecture, first.name, index, device.architecture,
          device.name));
    }
  }
  return indices;
}

}  // namespace kernelsmith::detail
