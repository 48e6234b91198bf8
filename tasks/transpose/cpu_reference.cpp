// Float64 CPU reference of the task transpose (tests/cpp/cpu_reference.hpp).
#include <Eigen/Core>

#include "cpu_reference.hpp"

namespace {

using kernelsmith::SizeMap;
using kernelsmith::testing::HostTensor;
using kernelsmith::testing::size_of;
using RowMajor = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

std::vector<HostTensor> transpose(const std::vector<HostTensor>& inputs, const SizeMap& sizes) {
  const auto M = size_of(sizes, "M");
  const auto N = size_of(sizes, "N");
  const Eigen::Map<const RowMajor> x(inputs[0].data(), M, N);
  HostTensor y(static_cast<std::size_t>(M * N));
  Eigen::Map<RowMajor>(y.data(), N, M) = x.transpose();
  return {y};
}

}  // namespace

KERNELSMITH_CPU_REFERENCE("transpose", transpose)
