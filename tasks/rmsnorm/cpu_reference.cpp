// Float64 CPU reference of the task rmsnorm (tests/cpp/cpu_reference.hpp).
#include <Eigen/Core>
#include <cmath>

#include "cpu_reference.hpp"

namespace {

using kernelsmith::SizeMap;
using kernelsmith::testing::HostTensor;
using kernelsmith::testing::size_of;
using RowMajor = Eigen::Array<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

std::vector<HostTensor> rmsnorm(const std::vector<HostTensor>& inputs, const SizeMap& sizes) {
  const auto M = size_of(sizes, "M");
  const auto N = size_of(sizes, "N");
  const Eigen::Map<const RowMajor> x(inputs[0].data(), M, N);
  const Eigen::Map<const Eigen::ArrayXd> w(inputs[1].data(), N);
  HostTensor y(static_cast<std::size_t>(M * N));
  Eigen::Map<RowMajor> out(y.data(), M, N);
  for (Eigen::Index m = 0; m < M; ++m) {
    const double inverse_rms = 1.0 / std::sqrt(x.row(m).square().mean() + 1e-6);
    out.row(m) = x.row(m) * inverse_rms * w.transpose();
  }
  return {y};
}

}  // namespace

KERNELSMITH_CPU_REFERENCE("rmsnorm", rmsnorm)
