// Float64 CPU reference of the task matmul_bf16 (tests/cpp/cpu_reference.hpp). The inputs arrive as
// the bfloat16 values the device sees; the product is exact up to float64 rounding.
#include <Eigen/Core>

#include "cpu_reference.hpp"

namespace {

using kernelsmith::SizeMap;
using kernelsmith::testing::HostTensor;
using kernelsmith::testing::size_of;
using RowMajor = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

std::vector<HostTensor> matmul_bf16(const std::vector<HostTensor>& inputs, const SizeMap& sizes) {
  const auto M = size_of(sizes, "M");
  const auto N = size_of(sizes, "N");
  const auto K = size_of(sizes, "K");
  const Eigen::Map<const RowMajor> A(inputs[0].data(), M, K);
  const Eigen::Map<const RowMajor> B(inputs[1].data(), K, N);
  HostTensor C(static_cast<std::size_t>(M * N));
  Eigen::Map<RowMajor>(C.data(), M, N).noalias() = A * B;
  return {C};
}

}  // namespace

KERNELSMITH_CPU_REFERENCE("matmul_bf16", matmul_bf16)
