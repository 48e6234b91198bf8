// Float64 CPU reference of the task relu (tests/cpp/cpu_reference.hpp).
#include <Eigen/Core>

#include "cpu_reference.hpp"

namespace {

using kernelsmith::SizeMap;
using kernelsmith::testing::HostTensor;

std::vector<HostTensor> relu(const std::vector<HostTensor>& inputs, const SizeMap&) {
  const Eigen::Map<const Eigen::ArrayXd> x(inputs[0].data(), static_cast<Eigen::Index>(inputs[0].size()));
  HostTensor y(inputs[0].size());
  Eigen::Map<Eigen::ArrayXd>(y.data(), static_cast<Eigen::Index>(y.size())) = x.max(0.0);
  return {y};
}

}  // namespace

KERNELSMITH_CPU_REFERENCE("relu", relu)
