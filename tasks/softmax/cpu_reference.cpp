// Float64 CPU reference of the task softmax (tests/cpp/cpu_reference.hpp).
#include <Eigen/Core>

#include "cpu_reference.hpp"

namespace {

using kernelsmith::SizeMap;
using kernelsmith::testing::HostTensor;
using kernelsmith::testing::size_of;
using RowMajor = Eigen::Array<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

std::vector<HostTensor> softmax(const std::vector<HostTensor>& inputs, const SizeMap& sizes) {
  const auto M = size_of(sizes, "M");
  const auto N = size_of(sizes, "N");
  const Eigen::Map<const RowMajor> x(inputs[0].data(), M, N);
  HostTensor y(static_cast<std::size_t>(M * N));
  Eigen::Map<RowMajor> out(y.data(), M, N);
  for (Eigen::Index m = 0; m < M; ++m) {
    const Eigen::ArrayXd e = (x.row(m) - x.row(m).maxCoeff()).exp().transpose();
    out.row(m) = (e / e.sum()).transpose();
  }
  return {y};
}

}  // namespace

KERNELSMITH_CPU_REFERENCE("softmax", softmax)
