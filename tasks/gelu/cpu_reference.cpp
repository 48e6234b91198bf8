// Float64 CPU reference of the task gelu (tests/cpp/cpu_reference.hpp).
#include <Eigen/Core>
#include <cmath>

#include "cpu_reference.hpp"

namespace {

using kernelsmith::SizeMap;
using kernelsmith::testing::HostTensor;

std::vector<HostTensor> gelu(const std::vector<HostTensor>& inputs, const SizeMap&) {
  const Eigen::Map<const Eigen::ArrayXd> x(inputs[0].data(), static_cast<Eigen::Index>(inputs[0].size()));
  const double k = std::sqrt(2.0 / M_PI);
  HostTensor y(inputs[0].size());
  Eigen::Map<Eigen::ArrayXd>(y.data(), static_cast<Eigen::Index>(y.size())) =
      0.5 * x * (1.0 + (k * (x + 0.044715 * x.cube())).tanh());
  return {y};
}

}  // namespace

KERNELSMITH_CPU_REFERENCE("gelu", gelu)
