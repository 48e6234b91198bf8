// Element types of task tensors and workspaces.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "kernelsmith/export.hpp"

namespace kernelsmith {

enum class DType { float16, bfloat16, float32, float64, int8, uint8, int32, int64 };

/// Canonical name: "float16", "bfloat16", "float32", "float64", "int8", "uint8", "int32", "int64".
KERNELSMITH_API std::string_view to_string(DType dtype);

/// Parses a canonical name or a common alias ("fp32", "f32", "half", "bf16", "int", ...).
/// Throws ValidationError listing the accepted names.
KERNELSMITH_API DType parse_dtype(std::string_view name);

/// Bytes per element.
KERNELSMITH_API std::size_t dtype_size(DType dtype);

KERNELSMITH_API bool is_floating(DType dtype);

}  // namespace kernelsmith
