// Tensors the caller hands to the library (its own arrays) and tensors the library hands back.
#pragma once

#include <cstdint>
#include <vector>

#include "kernelsmith/dtype.hpp"
#include "kernelsmith/export.hpp"

namespace kernelsmith {

/// A view of the caller's tensor, C-contiguous (row-major, no gaps). The caller keeps the memory alive
/// during the call that receives it.
///   on_device == false: `data` is host memory; it is copied.
///   on_device == true:  `data` is a device address on the backend's device (CUDA); used in place.
/// Inputs are only read; an output given this way is written.
struct KERNELSMITH_API TensorRef {
  DType dtype = DType::float32;
  std::vector<std::int64_t> shape;
  void* data = nullptr;
  bool on_device = false;

  std::int64_t element_count() const;
  std::size_t byte_count() const;
};

/// A tensor the library owns in host memory, C-contiguous.
struct KERNELSMITH_API HostTensor {
  DType dtype = DType::float32;
  std::vector<std::int64_t> shape;
  std::vector<std::uint8_t> data;

  std::int64_t element_count() const;
};

}  // namespace kernelsmith
