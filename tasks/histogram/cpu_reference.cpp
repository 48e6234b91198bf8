// Float64 CPU reference of the task histogram (tests/cpp/cpu_reference.hpp).
#include <cstdint>

#include "cpu_reference.hpp"

namespace {

using kernelsmith::SizeMap;
using kernelsmith::testing::HostTensor;

std::vector<HostTensor> histogram(const std::vector<HostTensor>& inputs, const SizeMap&) {
  HostTensor counts(1024, 0.0);
  for (double value : inputs[0]) counts.at(static_cast<std::size_t>(value)) += 1.0;
  return {counts};
}

}  // namespace

KERNELSMITH_CPU_REFERENCE("histogram", histogram)
