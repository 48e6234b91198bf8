// Float64 CPU reference of the task attention (tests/cpp/cpu_reference.hpp).
#include <Eigen/Core>
#include <cmath>

#include "cpu_reference.hpp"

namespace {

using kernelsmith::SizeMap;
using kernelsmith::testing::HostTensor;
using kernelsmith::testing::size_of;
using RowMajor = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

std::vector<HostTensor> attention(const std::vector<HostTensor>& inputs, const SizeMap& sizes) {
  const auto B = size_of(sizes, "B");
  const auto S = size_of(sizes, "S");
  const auto D = size_of(sizes, "D");
  HostTensor o(static_cast<std::size_t>(B * S * D));
  for (Eigen::Index b = 0; b < B; ++b) {
    const auto offset = static_cast<std::size_t>(b * S * D);
    const Eigen::Map<const RowMajor> q(inputs[0].data() + offset, S, D);
    const Eigen::Map<const RowMajor> k(inputs[1].data() + offset, S, D);
    const Eigen::Map<const RowMajor> v(inputs[2].data() + offset, S, D);
    RowMajor scores = q * k.transpose() / std::sqrt(static_cast<double>(D));
    for (Eigen::Index i = 0; i < S; ++i) {
      scores.row(i) = (scores.row(i).array() - scores.row(i).maxCoeff()).exp().matrix();
      scores.row(i) /= scores.row(i).sum();
    }
    Eigen::Map<RowMajor>(o.data() + offset, S, D).noalias() = scores * v;
  }
  return {o};
}

}  // namespace

KERNELSMITH_CPU_REFERENCE("attention", attention)
