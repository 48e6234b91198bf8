#include "kernelsmith/tensor.hpp"

namespace kernelsmith {

namespace {
std::int64_t product(const std::vector<std::int64_t>& shape) {
  std::int64_t count = 1;
  for (const auto extent : shape) count *= extent;
  return count;
}
}  // namespace

std::int64_t TensorRef::element_count() const { return product(shape); }

std::size_t TensorRef::byte_count() const {
  return static_cast<std::size_t>(element_count()) * dtype_size(dtype);
}

std::int64_t HostTensor::element_count() const { return product(shape); }

}  // namespace kernelsmith
