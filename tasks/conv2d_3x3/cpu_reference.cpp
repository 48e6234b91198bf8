// Float64 CPU reference of the task conv2d_3x3 (tests/cpp/cpu_reference.hpp).
#include <Eigen/Core>

#include "cpu_reference.hpp"

namespace {

using kernelsmith::SizeMap;
using kernelsmith::testing::HostTensor;
using kernelsmith::testing::size_of;
using RowMajor = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

// Each (n, i, j) tap is a (K x C) by (C x H*W) product of the weights' tap slice with the input shifted
// by (i - 1, j - 1), zero-filled outside the image.
std::vector<HostTensor> conv2d_3x3(const std::vector<HostTensor>& inputs, const SizeMap& sizes) {
  const auto N = size_of(sizes, "N");
  const auto C = size_of(sizes, "C");
  const auto K = size_of(sizes, "K");
  const auto H = size_of(sizes, "H");
  const auto W = size_of(sizes, "W");
  const HostTensor& x = inputs[0];
  const HostTensor& weight = inputs[1];
  const HostTensor& bias = inputs[2];
  HostTensor y(static_cast<std::size_t>(N * K * H * W));
  const auto at = [](Eigen::Index i) { return static_cast<std::size_t>(i); };
  for (Eigen::Index n = 0; n < N; ++n) {
    Eigen::Map<RowMajor> out(y.data() + at(n * K * H * W), K, H * W);
    for (Eigen::Index k = 0; k < K; ++k) out.row(k).setConstant(bias[at(k)]);
    for (int i = 0; i < 3; ++i) {
      for (int j = 0; j < 3; ++j) {
        RowMajor taps(K, C);
        for (Eigen::Index k = 0; k < K; ++k) {
          for (Eigen::Index c = 0; c < C; ++c) taps(k, c) = weight[at(((k * C + c) * 3 + i) * 3 + j)];
        }
        RowMajor shifted = RowMajor::Zero(C, H * W);
        for (Eigen::Index c = 0; c < C; ++c) {
          for (Eigen::Index h = 0; h < H; ++h) {
            for (Eigen::Index w = 0; w < W; ++w) {
              const Eigen::Index ih = h + i - 1;
              const Eigen::Index iw = w + j - 1;
              if (ih >= 0 && ih < H && iw >= 0 && iw < W) shifted(c, h * W + w) = x[at(((n * C + c) * H + ih) * W + iw)];
            }
          }
        }
        out.noalias() += taps * shifted;
      }
    }
  }
  return {y};
}

}  // namespace

KERNELSMITH_CPU_REFERENCE("conv2d_3x3", conv2d_3x3)
