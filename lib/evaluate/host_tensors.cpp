#include "evaluate/host_tensors.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "detail/random.hpp"
#include "kernelsmith/error.hpp"

namespace kernelsmith::detail {
namespace {

std::uint32_t float_bits(float value) {
  std::uint32_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  return bits;
}

float bits_float(std::uint32_t bits) {
  float value;
  std::memcpy(&value, &bits, sizeof(value));
  return value;
}

template <typename T>
T read_raw(const std::uint8_t* data, std::int64_t index) {
  T value;
  std::memcpy(&value, data + static_cast<std::size_t>(index) * sizeof(T), sizeof(T));
  return value;
}

template <typename T>
void write_raw(std::uint8_t* data, std::int64_t index, T value) {
  std::memcpy(data + static_cast<std::size_t>(index) * sizeof(T), &value, sizeof(T));
}

template <typename T>
T saturate(double value) {
  if (std::isnan(value)) return T(0);
  const double rounded = std::nearbyint(value);
  const double low = static_cast<double>(std::numeric_limits<T>::lowest());
  const double high = static_cast<double>(std::numeric_limits<T>::max());
  if (rounded <= low) return std::numeric_limits<T>::lowest();
  if (rounded >= high) return std::numeric_limits<T>::max();
  return static_cast<T>(rounded);
}

// Standard normal from two uniforms (Box-Muller): the same numbers on every standard library.
double standard_normal(std::mt19937_64& rng) {
  const double u1 = 1.0 - uniform01(rng);  // (0, 1]
  const double u2 = uniform01(rng);
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
}

/// Draws from a uniform or normal distribution. Its kind, a string, is compared once per tensor, not once per
/// element (a tensor can hold billions).
struct FloatDraw {
  explicit FloatDraw(const Distribution& distribution)
      : uniform(distribution.kind == "uniform"), a(distribution.a), b(distribution.b) {}
  double operator()(std::mt19937_64& rng) const {
    return uniform ? a + (b - a) * uniform01(rng) : a + b * standard_normal(rng);
  }
  bool uniform;
  double a;
  double b;
};

std::int64_t draw_integer(std::int64_t low, std::int64_t high, std::mt19937_64& rng) {
  if (high <= low) return low;
  const auto span = static_cast<std::uint64_t>(high - low);
  if (span >= std::numeric_limits<std::size_t>::max()) return low + static_cast<std::int64_t>(rng() >> 1);
  return low + static_cast<std::int64_t>(uniform_index(rng, static_cast<std::size_t>(span + 1)));
}

struct IntegerRange {
  std::int64_t low;
  std::int64_t high;
};

// The sub-range of [low, high] an integer input kind draws from.
IntegerRange integer_range(std::int64_t low, std::int64_t high, InputKind kind) {
  const std::int64_t tenth = std::max<std::int64_t>((high - low) / 10, 0);
  switch (kind) {
    case InputKind::large:
      // Near the bound of the larger magnitude.
      if (std::llabs(high) >= std::llabs(low)) return {high - tenth, high};
      return {low, low + tenth};
    case InputKind::tiny:
      // Near zero, or near the bound closest to it.
      if (low <= 0 && high >= 0) return {std::max<std::int64_t>(low, -1), std::min<std::int64_t>(high, 1)};
      if (low > 0) return {low, low + tenth};
      return {high - tenth, high};
    default:
      return {low, high};
  }
}

struct FloatScales {
  double large;
  double tiny;
  int max_exponent;  // mixed_scale draws 10^k, |k| <= max_exponent
};

// float16 tops out at 65504 and goes subnormal below 6e-5: its adversarial scales are milder.
FloatScales float_scales(DType dtype) {
  if (dtype == DType::float16) return {1e2, 1e-3, 2};
  return {1e4, 1e-4, 3};
}

}  // namespace

std::uint16_t float_to_half(float value) {
  const std::uint32_t x = float_bits(value);
  const std::uint16_t sign = static_cast<std::uint16_t>((x >> 16) & 0x8000u);
  const std::uint32_t exponent = (x >> 23) & 0xFFu;
  std::uint32_t mantissa = x & 0x7FFFFFu;
  if (exponent == 0xFF) {
    // Infinity stays infinity; NaN stays a (quiet) NaN.
    return static_cast<std::uint16_t>(sign | 0x7C00u | (mantissa != 0 ? 0x200u | (mantissa >> 13) : 0u));
  }
  const int half_exponent = static_cast<int>(exponent) - 127 + 15;
  if (half_exponent >= 31) return static_cast<std::uint16_t>(sign | 0x7C00u);
  if (half_exponent <= 0) {
    if (half_exponent < -10) return sign;
    mantissa |= 0x800000u;
    const int shift = 14 - half_exponent;
    std::uint32_t half_mantissa = mantissa >> shift;
    const std::uint32_t remainder = mantissa & ((1u << shift) - 1u);
    const std::uint32_t halfway = 1u << (shift - 1);
    if (remainder > halfway || (remainder == halfway && (half_mantissa & 1u) != 0)) ++half_mantissa;
    return static_cast<std::uint16_t>(sign | half_mantissa);
  }
  std::uint16_t half = static_cast<std::uint16_t>(sign | (half_exponent << 10) | (mantissa >> 13));
  const std::uint32_t remainder = mantissa & 0x1FFFu;
  // A carry out of the mantissa rounds up into the exponent, and to infinity at the top: both right.
  if (remainder > 0x1000u || (remainder == 0x1000u && (half & 1u) != 0)) ++half;
  return half;
}

float half_to_float(std::uint16_t bits) {
  const std::uint32_t sign = static_cast<std::uint32_t>(bits & 0x8000u) << 16;
  const std::uint32_t exponent = (bits >> 10) & 0x1Fu;
  const std::uint32_t mantissa = bits & 0x3FFu;
  if (exponent == 0) {
    const float magnitude = std::ldexp(static_cast<float>(mantissa), -24);
    return sign != 0 ? -magnitude : magnitude;
  }
  if (exponent == 31) return bits_float(sign | 0x7F800000u | (mantissa << 13));
  return bits_float(sign | ((exponent + 112) << 23) | (mantissa << 13));
}

std::uint16_t float_to_bfloat16(float value) {
  const std::uint32_t x = float_bits(value);
  if (std::isnan(value)) return static_cast<std::uint16_t>((x >> 16) | 0x40u);
  const std::uint32_t rounding = 0x7FFFu + ((x >> 16) & 1u);
  return static_cast<std::uint16_t>((x + rounding) >> 16);
}

float bfloat16_to_float(std::uint16_t bits) { return bits_float(static_cast<std::uint32_t>(bits) << 16); }

double load_element(DType dtype, const std::uint8_t* data, std::int64_t index) {
  switch (dtype) {
    case DType::float16: return half_to_float(read_raw<std::uint16_t>(data, index));
    case DType::bfloat16: return bfloat16_to_float(read_raw<std::uint16_t>(data, index));
    case DType::float32: return read_raw<float>(data, index);
    case DType::float64: return read_raw<double>(data, index);
    case DType::int8: return read_raw<std::int8_t>(data, index);
    case DType::uint8: return read_raw<std::uint8_t>(data, index);
    case DType::int32: return read_raw<std::int32_t>(data, index);
    case DType::int64: return static_cast<double>(read_raw<std::int64_t>(data, index));
  }
  return 0.0;
}

void store_element(DType dtype, std::uint8_t* data, std::int64_t index, double value) {
  switch (dtype) {
    case DType::float16: write_raw(data, index, float_to_half(static_cast<float>(value))); break;
    case DType::bfloat16: write_raw(data, index, float_to_bfloat16(static_cast<float>(value))); break;
    case DType::float32: write_raw(data, index, static_cast<float>(value)); break;
    case DType::float64: write_raw(data, index, value); break;
    case DType::int8: write_raw(data, index, saturate<std::int8_t>(value)); break;
    case DType::uint8: write_raw(data, index, saturate<std::uint8_t>(value)); break;
    case DType::int32: write_raw(data, index, saturate<std::int32_t>(value)); break;
    case DType::int64: write_raw(data, index, saturate<std::int64_t>(value)); break;
  }
}

std::string to_string(InputKind kind) {
  switch (kind) {
    case InputKind::random: return "random";
    case InputKind::large: return "large";
    case InputKind::tiny: return "tiny";
    case InputKind::mixed_scale: return "mixed_scale";
    case InputKind::constant: return "constant";
  }
  return "random";
}

const std::vector<InputKind>& adversarial_input_kinds() {
  static const std::vector<InputKind> kinds = {InputKind::large, InputKind::tiny, InputKind::mixed_scale,
                                               InputKind::constant};
  return kinds;
}

namespace {

// The smallest positive normal value of a float dtype: the floor of probability_rows, so that every
// probability stays positive (log(p) finite) even where the softmax of large values underflows.
double smallest_normal(DType dtype) {
  switch (dtype) {
    case DType::float16: return 6.103515625e-05;  // 2^-14
    case DType::float64: return std::numeric_limits<double>::min();
    default: return std::numeric_limits<float>::min();  // float32 and bfloat16 share the exponent range
  }
}

// Each row over the last dimension becomes the softmax of its drawn values, floored at the smallest
// normal value and scaled back to a sum of 1.
void make_probability_rows(DType dtype, std::int64_t count, std::int64_t row_length, Bytes& data) {
  if (row_length <= 0) return;
  const double floor = smallest_normal(dtype);
  std::vector<double> row(static_cast<std::size_t>(row_length));
  for (std::int64_t start = 0; start + row_length <= count; start += row_length) {
    double largest = -std::numeric_limits<double>::infinity();
    for (std::int64_t j = 0; j < row_length; ++j) {
      row[static_cast<std::size_t>(j)] = load_element(dtype, data.data(), start + j);
      largest = std::max(largest, row[static_cast<std::size_t>(j)]);
    }
    double sum = 0.0;
    for (double& value : row) sum += value = std::exp(value - largest);
    double floored_sum = 0.0;
    for (double& value : row) floored_sum += value = std::max(value / sum, floor);
    for (std::int64_t j = 0; j < row_length; ++j) {
      store_element(dtype, data.data(), start + j, row[static_cast<std::size_t>(j)] / floored_sum);
    }
  }
}

// Symmetric and triangular structures over the last two (square) dimensions of each matrix.
void make_square_structure(DType dtype, const std::string& structure, std::int64_t count, std::int64_t n,
                           Bytes& data) {
  if (n <= 0) return;
  const std::size_t element = dtype_size(dtype);
  for (std::int64_t start = 0; start + n * n <= count; start += n * n) {
    for (std::int64_t i = 0; i < n; ++i) {
      for (std::int64_t j = 0; j < n; ++j) {
        const std::int64_t at = start + i * n + j;
        if (structure == "symmetric" && j > i) {
          // The upper triangle mirrors the drawn lower one, bit for bit.
          std::memcpy(&data[static_cast<std::size_t>(at) * element],
                      &data[static_cast<std::size_t>(start + j * n + i) * element], element);
        } else if ((structure == "lower_triangular" && j > i) || (structure == "upper_triangular" && j < i)) {
          store_element(dtype, data.data(), at, 0.0);
        }
      }
    }
  }
}

void apply_structure(const TensorSpec& spec, const std::vector<std::int64_t>& shape, std::int64_t count, Bytes& data) {
  const std::string& structure = spec.distribution.structure;
  if (structure == "none" || shape.empty()) return;
  if (structure == "probability_rows") {
    make_probability_rows(spec.dtype, count, shape.back(), data);
  } else if (shape.size() >= 2 && shape[shape.size() - 2] == shape.back()) {
    make_square_structure(spec.dtype, structure, count, shape.back(), data);
  } else {
    throw ValidationError(fmt::format("tensor {}: the structure \"{}\" needs square last two dimensions; the shape "
                                      "is [{}]",
                                      spec.name, structure, fmt::join(shape, ", ")));
  }
}

// Inputs of a task's timing sizes can hold billions of elements (KernelBench's level 1), which one
// generator draws at tens of millions a second: they are drawn in chunks of a fixed size, each from a
// generator of its own, spread over the shared pool. The values depend on the seed and the chunk size
// only, never on the thread count; chunk 0 uses the seed itself, so a tensor of one chunk is drawn as
// one generator draws it.
constexpr std::int64_t kDrawChunk = std::int64_t(1) << 20;
constexpr int kMaxDrawHelpers = 7;

/// Calls `fill(rng, begin, end)` for each chunk of [0, count) with that chunk's generator.
template <typename Fill>
void draw_in_chunks(std::int64_t count, std::uint64_t seed, Fill&& fill) {
  const std::int64_t chunks = (count + kDrawChunk - 1) / kDrawChunk;
  auto one = [&](std::int64_t chunk) {
    std::mt19937_64 rng(chunk == 0 ? seed : mix_seed(seed, static_cast<std::uint64_t>(chunk)));
    const std::int64_t begin = chunk * kDrawChunk;
    fill(rng, begin, std::min(count, begin + kDrawChunk));
  };
  if (chunks <= 1) {
    if (chunks == 1) one(0);
    return;
  }
  ThreadPool::shared().parallel_for(chunks, kMaxDrawHelpers, one);
}

// The values before the structure is applied.
Bytes draw_input(const TensorSpec& spec, std::int64_t count, InputKind kind, std::uint64_t seed) {
  Bytes out(static_cast<std::size_t>(count) * dtype_size(spec.dtype));
  const Distribution& distribution = spec.distribution;
  if (distribution.kind == "constant") {
    // A fixed parameter of the problem, not data: the same under every input kind.
    for (std::int64_t i = 0; i < count; ++i) store_element(spec.dtype, out.data(), i, distribution.a);
    return out;
  }
  const bool integers = distribution.kind == "integers" || !is_floating(spec.dtype);
  if (integers) {
    std::int64_t low = static_cast<std::int64_t>(std::ceil(distribution.a));
    std::int64_t high = static_cast<std::int64_t>(std::floor(distribution.b));
    if (distribution.kind != "integers") {
      // An integer tensor with a continuous distribution: its values, rounded, over mean ± 3 sigma.
      low = static_cast<std::int64_t>(std::floor(distribution.a - 3 * std::abs(distribution.b)));
      high = static_cast<std::int64_t>(std::ceil(distribution.a + 3 * std::abs(distribution.b)));
    }
    if (high < low) std::swap(low, high);
    if (kind == InputKind::constant) {
      std::mt19937_64 rng(seed);
      const double value = static_cast<double>(draw_integer(low, high, rng));
      for (std::int64_t i = 0; i < count; ++i) store_element(spec.dtype, out.data(), i, value);
      return out;
    }
    const IntegerRange large = integer_range(low, high, InputKind::large);
    const IntegerRange tiny = integer_range(low, high, InputKind::tiny);
    const IntegerRange range = integer_range(low, high, kind);
    draw_in_chunks(count, seed, [&](std::mt19937_64& rng, std::int64_t begin, std::int64_t end) {
      for (std::int64_t i = begin; i < end; ++i) {
        IntegerRange pick = range;
        if (kind == InputKind::mixed_scale) pick = (rng() & 1u) != 0 ? large : tiny;
        store_element(spec.dtype, out.data(), i, static_cast<double>(draw_integer(pick.low, pick.high, rng)));
      }
    });
    return out;
  }
  const FloatScales scales = float_scales(spec.dtype);
  if (kind == InputKind::constant) {
    std::mt19937_64 rng(seed);
    const double value = FloatDraw(distribution)(rng);
    for (std::int64_t i = 0; i < count; ++i) store_element(spec.dtype, out.data(), i, value);
    return out;
  }
  const FloatDraw draw(distribution);
  draw_in_chunks(count, seed, [&](std::mt19937_64& rng, std::int64_t begin, std::int64_t end) {
    for (std::int64_t i = begin; i < end; ++i) {
      double value = draw(rng);
      switch (kind) {
        case InputKind::large: value *= scales.large; break;
        case InputKind::tiny: value *= scales.tiny; break;
        case InputKind::mixed_scale: {
          const auto span = static_cast<std::size_t>(2 * scales.max_exponent + 1);
          const int exponent = static_cast<int>(uniform_index(rng, span)) - scales.max_exponent;
          value *= std::pow(10.0, exponent);
          break;
        }
        default: break;
      }
      store_element(spec.dtype, out.data(), i, value);
    }
  });
  return out;
}

}  // namespace

Bytes generate_input(const TensorSpec& spec, const std::vector<std::int64_t>& shape, InputKind kind,
                     std::uint64_t seed) {
  std::int64_t count = 1;
  for (const std::int64_t extent : shape) count *= extent;
  Bytes out = draw_input(spec, count, kind, seed);
  apply_structure(spec, shape, count, out);
  return out;
}

namespace {

// Comparisons walk outputs of up to hundreds of millions of elements; they are split into chunks of
// a fixed size (so that sums do not depend on the thread count) spread over the pool's threads and the
// caller (which keeps it safe to call from a job of the same pool).
constexpr std::int64_t kCompareChunk = std::int64_t(1) << 18;
constexpr int kMaxCompareHelpers = 7;

template <typename Fn>
void for_each_chunk(ThreadPool& pool, std::int64_t count, Fn&& fn) {
  const std::int64_t chunks = (count + kCompareChunk - 1) / kCompareChunk;
  pool.parallel_for(chunks, kMaxCompareHelpers, [&](std::int64_t chunk) {
    const std::int64_t begin = chunk * kCompareChunk;
    fn(chunk, begin, std::min(count, begin + kCompareChunk));
  });
}

/// What one chunk of a comparison found.
struct ChunkComparison {
  std::int64_t unwritten = 0;
  std::int64_t non_finite = 0;
  std::int64_t mismatches = 0;
  std::int64_t nondeterministic = 0;
  std::int64_t first_problem = -1;
  double expected = 0.0;
  double actual = 0.0;
  double max_abs_error = 0.0;
  double error_squares = 0.0;
  double reference_squares = 0.0;
  double expected_deviations = 0.0;  // squares of (expected - its mean), where expected is finite
  double actual_deviations = 0.0;    // squares of (actual - its mean), where both are finite
};

/// Sums of one chunk's values for the spreads: the reference's where finite, the candidate's where both
/// are finite.
struct ChunkSums {
  double expected_squares = 0.0;
  double expected_sum = 0.0;
  double expected_abs = 0.0;
  std::int64_t expected_finite = 0;
  double actual_sum = 0.0;
  double actual_abs = 0.0;
  std::int64_t actual_finite = 0;
};

// Standard deviation over mean magnitude; 0 for fewer than two values or all zero.
double spread_of(std::int64_t n, double sum_abs, double deviation_squares) {
  if (n < 2 || sum_abs == 0.0) return 0.0;
  return std::sqrt(deviation_squares / static_cast<double>(n - 1)) / (sum_abs / static_cast<double>(n));
}

}  // namespace

OutputComparison compare_output(const std::string& tensor, DType dtype, std::int64_t count, ByteView expected,
                                ByteView first_run, ByteView second_run, const Tolerance& tolerance,
                                ThreadPool& pool, PoisonPair poison) {
  const std::size_t element_size = dtype_size(dtype);
  const std::size_t bytes = static_cast<std::size_t>(count) * element_size;
  if (expected.size < bytes || first_run.size < bytes || second_run.size < bytes) {
    throw Error(fmt::format("compare_output({}): buffers of {}, {}, {} bytes for {} elements", tensor,
                            expected.size, first_run.size, second_run.size, count));
  }
  OutputComparison result;
  OutputCheck& check = result.check;
  check.tensor = tensor;
  const std::int64_t chunks = (count + kCompareChunk - 1) / kCompareChunk;

  // The absolute tolerance is in units of the reference output's root mean square; the means of both
  // outputs are the centres of their spreads.
  std::vector<ChunkSums> sums(static_cast<std::size_t>(chunks));
  for_each_chunk(pool, count, [&](std::int64_t chunk, std::int64_t begin, std::int64_t end) {
    ChunkSums& part = sums[static_cast<std::size_t>(chunk)];
    for (std::int64_t i = begin; i < end; ++i) {
      const double e = load_element(dtype, expected.data, i);
      if (!std::isfinite(e)) continue;
      part.expected_squares += e * e;
      part.expected_sum += e;
      part.expected_abs += std::abs(e);
      ++part.expected_finite;
      const double a = load_element(dtype, first_run.data, i);
      if (!std::isfinite(a)) continue;
      part.actual_sum += a;
      part.actual_abs += std::abs(a);
      ++part.actual_finite;
    }
  });
  ChunkSums total;
  for (const ChunkSums& part : sums) {
    total.expected_squares += part.expected_squares;
    total.expected_sum += part.expected_sum;
    total.expected_abs += part.expected_abs;
    total.expected_finite += part.expected_finite;
    total.actual_sum += part.actual_sum;
    total.actual_abs += part.actual_abs;
    total.actual_finite += part.actual_finite;
  }
  const std::int64_t finite = total.expected_finite;
  const double rms = finite > 0 ? std::sqrt(total.expected_squares / static_cast<double>(finite)) : 0.0;
  const double scale = rms > 0.0 ? rms : 1.0;
  const double atol = tolerance.atol * scale;
  const double expected_mean = finite > 0 ? total.expected_sum / static_cast<double>(finite) : 0.0;
  const double actual_mean =
      total.actual_finite > 0 ? total.actual_sum / static_cast<double>(total.actual_finite) : 0.0;

  std::vector<std::uint8_t> poison_first(element_size, poison.first);
  std::vector<std::uint8_t> poison_second(element_size, poison.second);
  // Bitwise equality of two elements; a memcmp of a constant size compiles to one comparison, where a call
  // per element of a variable size dominated the comparison of large outputs.
  auto same_bits = [element_size](const std::uint8_t* a, const std::uint8_t* b) {
    switch (element_size) {
      case 1: return *a == *b;
      case 2: return std::memcmp(a, b, 2) == 0;
      case 4: return std::memcmp(a, b, 4) == 0;
      case 8: return std::memcmp(a, b, 8) == 0;
      default: return std::memcmp(a, b, element_size) == 0;
    }
  };
  std::vector<ChunkComparison> found(static_cast<std::size_t>(chunks));
  for_each_chunk(pool, count, [&](std::int64_t chunk, std::int64_t begin, std::int64_t end) {
    ChunkComparison& part = found[static_cast<std::size_t>(chunk)];
    auto note_first = [&](std::int64_t index, double e, double a) {
      if (part.first_problem < 0) {
        part.first_problem = index;
        part.expected = e;
        part.actual = a;
      }
    };
    for (std::int64_t i = begin; i < end; ++i) {
      const std::size_t offset = static_cast<std::size_t>(i) * element_size;
      const std::uint8_t* one = first_run.data + offset;
      const std::uint8_t* two = second_run.data + offset;
      const double e = load_element(dtype, expected.data, i);
      const double a = load_element(dtype, first_run.data, i);
      if (!same_bits(one, two)) {
        if (same_bits(one, poison_first.data()) && same_bits(two, poison_second.data())) {
          ++part.unwritten;
          note_first(i, e, a);
          continue;
        }
        ++part.nondeterministic;
      }
      // Where the reference itself is NaN or infinite the check says nothing: those elements are skipped.
      if (!std::isfinite(e)) continue;
      part.expected_deviations += (e - expected_mean) * (e - expected_mean);
      if (!std::isfinite(a)) {
        ++part.non_finite;
        note_first(i, e, a);
        continue;
      }
      part.actual_deviations += (a - actual_mean) * (a - actual_mean);
      const double error = std::abs(a - e);
      part.max_abs_error = std::max(part.max_abs_error, error);
      part.error_squares += error * error;
      part.reference_squares += e * e;
      if (error > atol + tolerance.rtol * std::abs(e)) {
        ++part.mismatches;
        note_first(i, e, a);
      }
    }
  });
  double error_squares = 0.0;
  double reference_squares = 0.0;
  double expected_deviations = 0.0;
  double actual_deviations = 0.0;
  for (const ChunkComparison& part : found) {
    expected_deviations += part.expected_deviations;
    actual_deviations += part.actual_deviations;
    check.unwritten += part.unwritten;
    check.non_finite += part.non_finite;
    check.mismatches += part.mismatches;
    result.nondeterministic += part.nondeterministic;
    check.max_abs_error = std::max(check.max_abs_error, part.max_abs_error);
    error_squares += part.error_squares;
    reference_squares += part.reference_squares;
    if (check.first_mismatch < 0 && part.first_problem >= 0) {
      check.first_mismatch = part.first_problem;
      check.expected = part.expected;
      check.actual = part.actual;
    }
  }
  check.rel_l2_error =
      reference_squares > 0.0 ? std::sqrt(error_squares / reference_squares) : std::sqrt(error_squares);
  result.expected_spread = spread_of(finite, total.expected_abs, expected_deviations);
  result.actual_spread = spread_of(total.actual_finite, total.actual_abs, actual_deviations);
  if (is_floating(dtype)) {
    // The lower of the task-level threshold and the fixed one: a candidate is held to this even where the task
    // was not screened (a caller's data case) or its tolerance is loose.
    const double near_constant = std::min(kNearConstantSpread, near_constant_spread(dtype, tolerance));
    result.near_constant = result.expected_spread >= near_constant &&
                           result.actual_spread < std::min(near_constant, kNearConstantFraction * result.expected_spread);
    result.rel_l2_bound = kRelativeL2Fraction * (tolerance.atol + tolerance.rtol);
    // An all-zero reference has no scale for a relative error: the elementwise check (atol absolute
    // then) decides alone.
    result.rel_l2_exceeded = reference_squares > 0.0 && check.rel_l2_error > result.rel_l2_bound;
  }
  check.passed = check.unwritten == 0 && check.non_finite == 0 && check.mismatches == 0 && !result.near_constant &&
                 !result.rel_l2_exceeded;
  return result;
}

std::string describe_failure(const OutputComparison& comparison, std::int64_t count) {
  const OutputCheck& check = comparison.check;
  if (check.unwritten > 0) {
    return fmt::format("{}: {} of {} elements were never written (first at index {})", check.tensor, check.unwritten,
                       count, check.first_mismatch);
  }
  if (check.non_finite > 0) {
    return fmt::format("{}: {} elements are NaN or infinite where the reference is finite (first at index {}: "
                       "expected {:.6g}, got {:.6g})",
                       check.tensor, check.non_finite, check.first_mismatch, check.expected, check.actual);
  }
  if (comparison.near_constant) {
    return fmt::format("{} is near-constant (relative spread {:.3g}) where the expected output varies (spread "
                       "{:.3g}): a constant or zero output is wrong however close its values are; relative L2 "
                       "error {:.3g}",
                       check.tensor, comparison.actual_spread, comparison.expected_spread, check.rel_l2_error);
  }
  if (check.mismatches > 0) {
    return fmt::format("{}: {} of {} elements differ from the reference beyond the tolerance (first at index {}: "
                       "expected {:.6g}, got {:.6g}); max abs error {:.3g}, relative L2 error {:.3g}",
                       check.tensor, check.mismatches, count, check.first_mismatch, check.expected, check.actual,
                       check.max_abs_error, check.rel_l2_error);
  }
  return fmt::format("{}: the relative L2 error {:.3g} exceeds {:.3g} (half of atol + rtol) although every element "
                     "is within the tolerance: the output is off as a whole; max abs error {:.3g}",
                     check.tensor, check.rel_l2_error, comparison.rel_l2_bound, check.max_abs_error);
}

namespace {

// One element moved by `units` units in the last place in magnitude (the bit pattern is sign and magnitude),
// unless it is zero, infinite or NaN, or the move would cross zero or reach an infinity.
template <typename Bits>
void nudge_element(std::uint8_t* element, bool up, Bits units, int exponent_bits, int mantissa_bits) {
  Bits bits;
  std::memcpy(&bits, element, sizeof(Bits));
  const Bits sign = Bits(Bits(1) << (8 * sizeof(Bits) - 1));
  const Bits magnitude = Bits(bits & Bits(~sign));
  const Bits exponent_mask = Bits(((Bits(1) << exponent_bits) - 1) << mantissa_bits);
  if (magnitude == 0 || (magnitude & exponent_mask) == exponent_mask) return;
  if (!up && magnitude <= units) return;
  const Bits moved = up ? Bits(magnitude + units) : Bits(magnitude - units);
  if ((moved & exponent_mask) == exponent_mask) return;
  bits = Bits((bits & sign) | moved);
  std::memcpy(element, &bits, sizeof(Bits));
}

}  // namespace

Bytes nudge_inputs(DType dtype, const Bytes& data, std::uint64_t seed) {
  Bytes out = data;
  if (!is_floating(dtype)) return out;
  const std::size_t size = dtype_size(dtype);
  std::mt19937_64 rng(seed);
  for (std::size_t offset = 0; offset + size <= out.size(); offset += size) {
    const bool up = (rng() & 1u) != 0;
    std::uint8_t* element = out.data() + offset;
    // 2^(mantissa bits - 17) units: a relative move of about 2^-17, or one unit where the type is coarser.
    switch (dtype) {
      case DType::float64: nudge_element<std::uint64_t>(element, up, std::uint64_t(1) << 35, 11, 52); break;
      case DType::float32: nudge_element<std::uint32_t>(element, up, 64u, 8, 23); break;
      case DType::float16: nudge_element<std::uint16_t>(element, up, 1u, 5, 10); break;
      case DType::bfloat16: nudge_element<std::uint16_t>(element, up, 1u, 8, 7); break;
      default: break;
    }
  }
  return out;
}

double near_constant_spread(DType dtype, const Tolerance& tolerance) {
  return is_floating(dtype) ? tolerance.atol + tolerance.rtol : kNearConstantSpread;
}

void SpreadAccumulator::add(DType dtype, const std::uint8_t* data, std::int64_t count, ThreadPool& pool) {
  struct Chunk {
    std::int64_t n = 0;
    double sum = 0.0;
    double sum_abs = 0.0;
    double squares = 0.0;
  };
  std::vector<Chunk> chunks(static_cast<std::size_t>((count + kCompareChunk - 1) / kCompareChunk));
  // Sums in locals, stored once per chunk: `data` is bytes, which may alias anything, so sums kept in
  // `chunks` would be stored and loaded again for every element.
  for_each_chunk(pool, count, [&](std::int64_t index, std::int64_t begin, std::int64_t end) {
    std::int64_t finite = 0;
    double sum = 0.0;
    double sum_abs = 0.0;
    for (std::int64_t i = begin; i < end; ++i) {
      const double v = load_element(dtype, data, i);
      if (!std::isfinite(v)) continue;
      sum += v;
      sum_abs += std::abs(v);
      ++finite;
    }
    chunks[static_cast<std::size_t>(index)] = {finite, sum, sum_abs, 0.0};
  });
  std::int64_t n = 0;
  double sum = 0.0;
  double sum_abs = 0.0;
  for (const Chunk& chunk : chunks) {
    n += chunk.n;
    sum += chunk.sum;
    sum_abs += chunk.sum_abs;
  }
  if (n == 0) return;
  const double mean = sum / static_cast<double>(n);
  for_each_chunk(pool, count, [&](std::int64_t index, std::int64_t begin, std::int64_t end) {
    double chunk_squares = 0.0;
    for (std::int64_t i = begin; i < end; ++i) {
      const double v = load_element(dtype, data, i);
      if (std::isfinite(v)) chunk_squares += (v - mean) * (v - mean);
    }
    chunks[static_cast<std::size_t>(index)].squares = chunk_squares;
  });
  double squares = 0.0;
  for (const Chunk& chunk : chunks) squares += chunk.squares;
  // Merged with what came before: the squared deviations about the joint mean.
  const double total = static_cast<double>(n_ + n);
  const double delta = mean - mean_;
  squares_ += squares + delta * delta * static_cast<double>(n_) * static_cast<double>(n) / total;
  mean_ += delta * static_cast<double>(n) / total;
  sum_abs_ += sum_abs;
  n_ += n;
}

double SpreadAccumulator::spread() const { return spread_of(n_, sum_abs_, squares_); }

}  // namespace kernelsmith::detail
