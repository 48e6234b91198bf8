// Float64 CPU reference of the task prefix_scan (tests/cpp/cpu_reference.hpp).
#include "cpu_reference.hpp"

namespace {

using kernelsmith::SizeMap;
using kernelsmith::testing::HostTensor;

std::vector<HostTensor> prefix_scan(const std::vector<HostTensor>& inputs, const SizeMap&) {
  HostTensor y(inputs[0].size());
  double running = 0.0;
  for (std::size_t i = 0; i < y.size(); ++i) {
    running += inputs[0][i];
    y[i] = running;
  }
  return {y};
}

}  // namespace

KERNELSMITH_CPU_REFERENCE("prefix_scan", prefix_scan)
