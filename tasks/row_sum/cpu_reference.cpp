// Float64 CPU reference of the task row_sum (tests/cpp/cpu_reference.hpp).
#include <Eigen/Core>

#include "cpu_reference.hpp"

namespace {

using kernelsmith::SizeMap;
using kernelsmith::testing::HostTensor;
using kernelsmith::testing::size_of;
using RowMajor = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

std::vector<HostTensor> row_sum(const std::vector<HostTensor>& inputs, const SizeMap& sizes) {
  const auto M = size_of(sizes, "M");
  const auto K = size_of(sizes, "K");
  const Eigen::Map<const RowMajor> x(inputs[0].data(), M, K);
  HostTensor y(static_cast<std::size_t>(M));
  Eigen::Map<Eigen::VectorXd>(y.data(), M) = x.rowwise().sum();
  return {y};
}

}  // namespace

KERNELSMITH_CPU_REFERENCE("row_sum", row_sum)
