// Float64 CPU reference of the task cross_entropy (tests/cpp/cpu_reference.hpp).
#include <Eigen/Core>
#include <cmath>

#include "cpu_reference.hpp"

namespace {

using kernelsmith::SizeMap;
using kernelsmith::testing::HostTensor;
using kernelsmith::testing::size_of;
using RowMajor = Eigen::Array<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

std::vector<HostTensor> cross_entropy(const std::vector<HostTensor>& inputs, const SizeMap& sizes) {
  const auto M = size_of(sizes, "M");
  const auto V = size_of(sizes, "V");
  const Eigen::Map<const RowMajor> logits(inputs[0].data(), M, V);
  const HostTensor& targets = inputs[1];
  HostTensor loss(static_cast<std::size_t>(M));
  for (Eigen::Index m = 0; m < M; ++m) {
    const double max_value = logits.row(m).maxCoeff();
    const double log_sum = max_value + std::log((logits.row(m) - max_value).exp().sum());
    const auto target = static_cast<Eigen::Index>(targets[static_cast<std::size_t>(m)]);
    loss[static_cast<std::size_t>(m)] = log_sum - logits(m, target);
  }
  return {loss};
}

}  // namespace

KERNELSMITH_CPU_REFERENCE("cross_entropy", cross_entropy)
