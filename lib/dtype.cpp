#include "kernelsmith/dtype.hpp"

#include <fmt/format.h>

#include <array>
#include <utility>

#include "kernelsmith/error.hpp"

namespace kernelsmith {
namespace {

constexpr std::array<DType, 8> kAllDTypes = {DType::float16, DType::bfloat16, DType::float32,
                                             DType::float64, DType::int8,     DType::uint8,
                                             DType::int32,   DType::int64};

// Spellings users bring from C, CUDA, NumPy and PyTorch. Canonical names are matched first.
constexpr std::array<std::pair<std::string_view, DType>, 26> kAliases = {{
    {"fp16", DType::float16},  {"f16", DType::float16},    {"half", DType::float16},
    {"__half", DType::float16}, {"bf16", DType::bfloat16}, {"__nv_bfloat16", DType::bfloat16},
    {"fp32", DType::float32},  {"f32", DType::float32},    {"float", DType::float32},
    {"fp64", DType::float64},  {"f64", DType::float64},    {"double", DType::float64},
    {"i8", DType::int8},       {"char", DType::int8},      {"signed char", DType::int8},
    {"u8", DType::uint8},      {"uchar", DType::uint8},    {"unsigned char", DType::uint8},
    {"i32", DType::int32},     {"int", DType::int32},      {"int32_t", DType::int32},
    {"i64", DType::int64},     {"long", DType::int64},     {"long long", DType::int64},
    {"int64_t", DType::int64}, {"uint8_t", DType::uint8},
}};

}  // namespace

std::string_view to_string(DType dtype) {
  switch (dtype) {
    case DType::float16: return "float16";
    case DType::bfloat16: return "bfloat16";
    case DType::float32: return "float32";
    case DType::float64: return "float64";
    case DType::int8: return "int8";
    case DType::uint8: return "uint8";
    case DType::int32: return "int32";
    case DType::int64: return "int64";
  }
  return "unknown";
}

DType parse_dtype(std::string_view name) {
  std::string_view key = name;
  // "torch.float32" and "np.float32" spell the same type.
  for (std::string_view prefix : {std::string_view("torch."), std::string_view("numpy."),
                                  std::string_view("np.")}) {
    if (key.substr(0, prefix.size()) == prefix) {
      key.remove_prefix(prefix.size());
      break;
    }
  }
  for (DType dtype : kAllDTypes) {
    if (to_string(dtype) == key) return dtype;
  }
  for (const auto& [alias, dtype] : kAliases) {
    if (alias == key) return dtype;
  }
  throw ValidationError(fmt::format(
      "unknown dtype \"{}\": expected one of float16, bfloat16, float32, float64, int8, uint8, int32, "
      "int64 (aliases such as fp32, half, bf16, int are accepted too)",
      name));
}

std::size_t dtype_size(DType dtype) {
  switch (dtype) {
    case DType::float16:
    case DType::bfloat16: return 2;
    case DType::float32:
    case DType::int32: return 4;
    case DType::float64:
    case DType::int64: return 8;
    case DType::int8:
    case DType::uint8: return 1;
  }
  return 0;
}

bool is_floating(DType dtype) {
  return dtype == DType::float16 || dtype == DType::bfloat16 || dtype == DType::float32 ||
         dtype == DType::float64;
}

}  // namespace kernelsmith
