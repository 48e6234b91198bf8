// Float64 CPU reference of the task linear_gelu (tests/cpp/cpu_reference.hpp).
#include <Eigen/Core>
#include <cmath>

#include "cpu_reference.hpp"

namespace {

using kernelsmith::SizeMap;
using kernelsmith::testing::HostTensor;
using kernelsmith::testing::size_of;
using RowMajor = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

std::vector<HostTensor> linear_gelu(const std::vector<HostTensor>& inputs, const SizeMap& sizes) {
  const auto M = size_of(sizes, "M");
  const auto N = size_of(sizes, "N");
  const auto K = size_of(sizes, "K");
  const Eigen::Map<const RowMajor> x(inputs[0].data(), M, K);
  const Eigen::Map<const RowMajor> weight(inputs[1].data(), N, K);
  const Eigen::Map<const Eigen::RowVectorXd> bias(inputs[2].data(), N);
  const RowMajor z = (x * weight.transpose()).rowwise() + bias;
  const double c = std::sqrt(2.0 / M_PI);
  HostTensor y(static_cast<std::size_t>(M * N));
  Eigen::Map<RowMajor>(y.data(), M, N) =
      (0.5 * z.array() * (1.0 + (c * (z.array() + 0.044715 * z.array().cube())).tanh())).matrix();
  return {y};
}

}  // namespace

KERNELSMITH_CPU_REFERENCE("linear_gelu", linear_gelu)
