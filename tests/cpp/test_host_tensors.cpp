// Host-side data of the correctness protocol: element conversions, input generation, output comparison.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "catch.hpp"
#include "evaluate/host_tensors.hpp"

using namespace kernelsmith;
using namespace kernelsmith::detail;

namespace {

Bytes floats(const std::vector<float>& values) {
  Bytes out(values.size() * sizeof(float));
  std::memcpy(out.data(), values.data(), out.size());
  return out;
}

TensorSpec spec(DType dtype, Distribution distribution) {
  TensorSpec tensor;
  tensor.name = "x";
  tensor.dtype = dtype;
  tensor.distribution = distribution;
  return tensor;
}

}  // namespace

TEST_CASE("float16 conversions round to nearest even and saturate to infinity", "[host_tensors]") {
  CHECK(float_to_half(1.0f) == 0x3C00);
  CHECK(float_to_half(-2.0f) == 0xC000);
  CHECK(float_to_half(65504.0f) == 0x7BFF);
  CHECK(float_to_half(65520.0f) == 0x7C00);  // halfway to the next binade rounds up to infinity
  CHECK(float_to_half(std::ldexp(1.0f, -24)) == 0x0001);  // smallest subnormal
  CHECK(float_to_half(std::ldexp(1.0f, -26)) == 0x0000);  // below half of it: zero
  CHECK(float_to_half(1.0f + std::ldexp(1.0f, -11)) == 0x3C00);  // tie to even (down)
  CHECK(float_to_half(1.0f + 3 * std::ldexp(1.0f, -11)) == 0x3C02);  // tie to even (up)
  CHECK(std::isnan(half_to_float(float_to_half(std::numeric_limits<float>::quiet_NaN()))));
  for (std::uint32_t bits = 0; bits < 0x7C00; bits += 7) {
    const auto half = static_cast<std::uint16_t>(bits);
    REQUIRE(float_to_half(half_to_float(half)) == half);
  }
}

TEST_CASE("bfloat16 conversions keep the float32 range", "[host_tensors]") {
  CHECK(float_to_bfloat16(1.0f) == 0x3F80);
  CHECK(bfloat16_to_float(0x3F80) == 1.0f);
  CHECK(bfloat16_to_float(float_to_bfloat16(3.0e38f)) == Approx(3.0e38).epsilon(0.01));
  CHECK(float_to_bfloat16(1.0f + std::ldexp(1.0f, -8)) == 0x3F80);  // tie to even
  CHECK(std::isnan(bfloat16_to_float(float_to_bfloat16(std::numeric_limits<float>::quiet_NaN()))));
}

TEST_CASE("inputs are deterministic per seed and integers stay within their range", "[host_tensors]") {
  const TensorSpec normal = spec(DType::float32, {"normal", 0.0, 1.0});
  CHECK(generate_input(normal, {100}, InputKind::random, 7) == generate_input(normal, {100}, InputKind::random, 7));
  CHECK(generate_input(normal, {100}, InputKind::random, 7) != generate_input(normal, {100}, InputKind::random, 8));

  const Bytes constant = generate_input(normal, {50}, InputKind::constant, 3);
  for (std::int64_t i = 1; i < 50; ++i) REQUIRE(load_element(DType::float32, constant.data(), i) == load_element(DType::float32, constant.data(), 0));

  const Bytes large = generate_input(normal, {1000}, InputKind::large, 3);
  const Bytes tiny = generate_input(normal, {1000}, InputKind::tiny, 3);
  double large_sum = 0;
  double tiny_sum = 0;
  for (std::int64_t i = 0; i < 1000; ++i) {
    large_sum += std::abs(load_element(DType::float32, large.data(), i));
    tiny_sum += std::abs(load_element(DType::float32, tiny.data(), i));
  }
  CHECK(large_sum / 1000 > 1e3);
  CHECK(tiny_sum / 1000 < 1e-3);

  const TensorSpec integers = spec(DType::int32, {"integers", -5.0, 20.0});
  for (InputKind kind : {InputKind::random, InputKind::large, InputKind::tiny, InputKind::mixed_scale, InputKind::constant}) {
    const Bytes data = generate_input(integers, {500}, kind, 11);
    for (std::int64_t i = 0; i < 500; ++i) {
      const double v = load_element(DType::int32, data.data(), i);
      REQUIRE(v >= -5);
      REQUIRE(v <= 20);
    }
  }
  const Bytes large_integers = generate_input(integers, {200}, InputKind::large, 1);
  for (std::int64_t i = 0; i < 200; ++i) REQUIRE(load_element(DType::int32, large_integers.data(), i) >= 18);
}

TEST_CASE("large inputs are drawn in chunks: deterministic, the first chunk as a small tensor's, no chunk repeated",
          "[host_tensors]") {
  // Drawn in chunks of 2^20 elements, each from a generator of its own, in parallel (host_tensors.cpp).
  constexpr std::int64_t chunk = std::int64_t(1) << 20;
  const TensorSpec uniform = spec(DType::float32, {"uniform", 0.0, 1.0});
  const std::int64_t count = 3 * chunk + 5;
  const Bytes data = generate_input(uniform, {count}, InputKind::random, 42);
  CHECK(data == generate_input(uniform, {count}, InputKind::random, 42));
  const Bytes small = generate_input(uniform, {1000}, InputKind::random, 42);
  CHECK(std::memcmp(data.data(), small.data(), small.size()) == 0);
  const auto* values = reinterpret_cast<const float*>(data.data());
  for (std::int64_t c = 1; c <= 3; ++c) {
    INFO("chunk " << c);
    CHECK(std::memcmp(values + c * chunk, values, std::min<std::int64_t>(chunk, count - c * chunk) * 4) != 0);
  }
  double sum = 0.0;
  for (std::int64_t i = 0; i < count; ++i) {
    REQUIRE((values[i] >= 0.0f && values[i] <= 1.0f));
    sum += values[i];
  }
  CHECK(std::abs(sum / static_cast<double>(count) - 0.5) < 0.01);
  // Integer and mixed-scale draws take the same path.
  const TensorSpec integers = spec(DType::int32, {"integers", -3.0, 3.0});
  const Bytes ints = generate_input(integers, {2 * chunk + 1}, InputKind::mixed_scale, 9);
  CHECK(ints == generate_input(integers, {2 * chunk + 1}, InputKind::mixed_scale, 9));
}

TEST_CASE("a constant distribution gives its value under every input kind", "[host_tensors]") {
  const std::vector<InputKind> kinds = {InputKind::random, InputKind::large, InputKind::tiny, InputKind::mixed_scale,
                                        InputKind::constant};
  for (const DType dtype : {DType::float32, DType::float16, DType::bfloat16, DType::float64}) {
    const TensorSpec alpha = spec(dtype, {"constant", 0.375, 1.0});
    for (InputKind kind : kinds) {
      INFO(to_string(dtype) << " " << to_string(kind));
      const Bytes data = generate_input(alpha, {3, 5}, kind, 99);
      for (std::int64_t i = 0; i < 15; ++i) REQUIRE(load_element(dtype, data.data(), i) == 0.375);
    }
  }
  const TensorSpec ones = spec(DType::uint8, {"constant", 1.0, 1.0});
  for (InputKind kind : kinds) {
    const Bytes data = generate_input(ones, {40}, kind, 5);
    for (std::int64_t i = 0; i < 40; ++i) REQUIRE(load_element(DType::uint8, data.data(), i) == 1.0);
  }
  // Shape [] is one element.
  CHECK(generate_input(spec(DType::float32, {"constant", -2.0, 1.0}), {}, InputKind::large, 1).size() == 4);
}

TEST_CASE("structures hold under every input kind, per matrix and per row", "[host_tensors]") {
  const std::vector<InputKind> kinds = {InputKind::random, InputKind::large, InputKind::tiny, InputKind::mixed_scale,
                                        InputKind::constant};
  const std::int64_t batch = 3;
  const std::int64_t n = 7;
  for (const DType dtype : {DType::float32, DType::float16, DType::int32}) {
    for (const char* structure : {"symmetric", "lower_triangular", "upper_triangular"}) {
      const Distribution drawn = dtype == DType::int32 ? Distribution{"integers", -9, 9, structure}
                                                       : Distribution{"normal", 1.0, 2.0, structure};
      for (InputKind kind : kinds) {
        INFO(to_string(dtype) << " " << structure << " " << to_string(kind));
        const Bytes data = generate_input(spec(dtype, drawn), {batch, n, n}, kind, 17);
        REQUIRE(data.size() == static_cast<std::size_t>(batch * n * n) * dtype_size(dtype));
        std::int64_t nonzero_off_diagonal = 0;
        for (std::int64_t b = 0; b < batch; ++b) {
          for (std::int64_t i = 0; i < n; ++i) {
            for (std::int64_t j = 0; j < n; ++j) {
              const double value = load_element(dtype, data.data(), b * n * n + i * n + j);
              const double mirror = load_element(dtype, data.data(), b * n * n + j * n + i);
              if (i != j && value != 0.0) ++nonzero_off_diagonal;
              if (std::string(structure) == "symmetric") REQUIRE(value == mirror);
              if (std::string(structure) == "lower_triangular" && j > i) REQUIRE(value == 0.0);
              if (std::string(structure) == "upper_triangular" && j < i) REQUIRE(value == 0.0);
            }
          }
        }
        // The kept triangle is drawn (a constant input keeps its one value there).
        CHECK(nonzero_off_diagonal > 0);
      }
    }
  }
  // Without a structure a drawn square matrix is not symmetric: the check above can fail.
  const Bytes plain = generate_input(spec(DType::float32, {"normal", 0.0, 1.0}), {n, n}, InputKind::random, 17);
  CHECK(load_element(DType::float32, plain.data(), 1) != load_element(DType::float32, plain.data(), n));

  for (const DType dtype : {DType::float32, DType::float16, DType::bfloat16, DType::float64}) {
    const Distribution drawn{"uniform", 0.0, 1.0, "probability_rows"};
    for (InputKind kind : kinds) {
      INFO(to_string(dtype) << " probability_rows " << to_string(kind));
      const std::int64_t rows = 6;
      const std::int64_t length = 33;
      const Bytes data = generate_input(spec(dtype, drawn), {2, rows / 2, length}, kind, 23);
      const double tolerance = dtype == DType::float64 ? 1e-12 : dtype == DType::float32 ? 1e-5 : 0.05;
      for (std::int64_t r = 0; r < rows; ++r) {
        double sum = 0.0;
        for (std::int64_t j = 0; j < length; ++j) {
          const double p = load_element(dtype, data.data(), r * length + j);
          REQUIRE(p > 0.0);  // positive even where the softmax of large values underflows
          REQUIRE(p <= 1.0);
          sum += p;
        }
        CHECK(sum == Approx(1.0).margin(tolerance));
      }
    }
  }
  // A constant input gives uniform rows.
  const Bytes uniform_rows = generate_input(spec(DType::float32, {"normal", 0.0, 1.0, "probability_rows"}), {4, 8},
                                            InputKind::constant, 3);
  for (std::int64_t i = 0; i < 32; ++i) CHECK(load_element(DType::float32, uniform_rows.data(), i) == 0.125);
}

TEST_CASE("compare_output tells unwritten, nondeterministic and wrong elements apart", "[host_tensors]") {
  const Tolerance tolerance{1e-4, 1e-4};
  const Bytes expected = floats({1.0f, 2.0f, -3.0f, 4.0f});
  Bytes first = floats({1.0f, 2.0f, -3.0f, 4.0f});
  Bytes second = first;

  SECTION("equal outputs pass") {
    const auto result = compare_output("y", DType::float32, 4, expected, first, second, tolerance);
    CHECK(result.check.passed);
    CHECK(result.check.first_mismatch == -1);
    CHECK(result.nondeterministic == 0);
  }
  SECTION("an element that kept both poison patterns is unwritten") {
    std::memset(first.data() + 8, kPoisonFirst, 4);
    std::memset(second.data() + 8, kPoisonSecond, 4);
    const auto result = compare_output("y", DType::float32, 4, expected, first, second, tolerance);
    CHECK_FALSE(result.check.passed);
    CHECK(result.check.unwritten == 1);
    CHECK(result.check.first_mismatch == 2);
    CHECK(result.check.mismatches == 0);
  }
  SECTION("an element that differs between the runs is nondeterministic") {
    const float other = 2.0f + 1e-6f;
    std::memcpy(second.data() + 4, &other, 4);
    const auto result = compare_output("y", DType::float32, 4, expected, first, second, tolerance);
    CHECK(result.check.passed);  // within tolerance, but not bitwise stable
    CHECK(result.nondeterministic == 1);
  }
  SECTION("a wrong value is a mismatch with its numbers") {
    first = second = floats({1.0f, 2.5f, -3.0f, 4.0f});
    const auto result = compare_output("y", DType::float32, 4, expected, first, second, tolerance);
    CHECK_FALSE(result.check.passed);
    CHECK(result.check.mismatches == 1);
    CHECK(result.check.first_mismatch == 1);
    CHECK(result.check.expected == 2.0);
    CHECK(result.check.actual == 2.5);
    CHECK(result.check.max_abs_error == Approx(0.5));
    CHECK(result.check.rel_l2_error == Approx(0.5 / std::sqrt(30.0)));
  }
  SECTION("NaN where the reference is finite is non-finite") {
    first = second = floats({1.0f, std::numeric_limits<float>::quiet_NaN(), -3.0f, 4.0f});
    const auto result = compare_output("y", DType::float32, 4, expected, first, second, tolerance);
    CHECK_FALSE(result.check.passed);
    CHECK(result.check.non_finite == 1);
  }
  SECTION("the absolute tolerance follows the reference's magnitude") {
    const Bytes small = floats({1e-6f, 2e-6f, -3e-6f, 4e-6f});
    first = second = floats({1e-6f, 2e-6f, -3e-6f, 5e-6f});  // 25% off, far below atol = 1e-4
    const auto result = compare_output("y", DType::float32, 4, small, first, second, tolerance);
    CHECK_FALSE(result.check.passed);
  }
}

namespace {

// n values around `centre` that vary by about `relative` of it (deterministic).
std::vector<float> varying(std::size_t n, float centre, float relative) {
  std::vector<float> values(n);
  for (std::size_t i = 0; i < n; ++i) {
    values[i] = centre * (1.0f + relative * std::sin(0.37f * static_cast<float>(i) + 1.0f));
  }
  return values;
}

}  // namespace

TEST_CASE("compare_output fails a near-constant output where the expected one varies", "[host_tensors]") {
  const std::size_t n = 1000;
  const float centre = 1.0f / 1024;  // the size of a softmax's outputs over 1024 columns
  const Bytes expected = floats(varying(n, centre, 0.005f));
  const std::vector<float> constant_values(n, centre);
  const Bytes constant = floats(constant_values);
  const Bytes zeros(n * sizeof(float), 0);

  SECTION("a loose tolerance lets every element of a constant through; the spread check does not") {
    const Tolerance loose{1e-2, 1e-2};
    const auto result = compare_output("y", DType::float32, n, expected, constant, constant, loose);
    CHECK(result.check.mismatches == 0);  // within atol * rms + rtol * |expected| everywhere
    CHECK(result.near_constant);
    CHECK_FALSE(result.check.passed);
    CHECK(result.actual_spread == 0.0);
    CHECK(result.expected_spread == Approx(0.005 / std::sqrt(2.0)).epsilon(0.05));
    const std::string message = describe_failure(result, n);
    CHECK(message.rfind("y is near-constant (relative spread 0) where the expected output varies (spread 0.00", 0) == 0);
  }
  SECTION("zeros and a constant fail with the near-constant message under the default tolerance") {
    for (const Bytes* actual : {&zeros, &constant}) {
      const auto result = compare_output("y", DType::float32, n, expected, *actual, *actual, default_tolerance(DType::float32));
      CHECK_FALSE(result.check.passed);
      CHECK(result.near_constant);
      CHECK(describe_failure(result, n).find("y is near-constant") == 0);
    }
  }
  SECTION("a right output passes, also one that rounds to float16") {
    const auto same = compare_output("y", DType::float32, n, expected, expected, expected, {1e-4, 1e-4});
    CHECK(same.check.passed);
    CHECK_FALSE(same.near_constant);
    std::vector<float> rounded = varying(n, centre, 0.005f);
    for (float& value : rounded) value = half_to_float(float_to_half(value));
    const Bytes rounded_bytes = floats(rounded);
    const auto close = compare_output("y", DType::float32, n, expected, rounded_bytes, rounded_bytes, {1e-2, 1e-2});
    CHECK(close.check.passed);
    CHECK(close.actual_spread > 0.5 * close.expected_spread);
  }
  SECTION("an expected output that is near-constant itself is not held against a constant candidate") {
    const Bytes flat = floats(varying(n, centre, 1e-4f));
    const auto result = compare_output("y", DType::float32, n, flat, constant, constant, {1e-2, 1e-2});
    CHECK(result.expected_spread < kNearConstantSpread);
    CHECK_FALSE(result.near_constant);
    CHECK(result.check.passed);
  }
  SECTION("integer outputs stay exact: no spread or L2 rule") {
    std::vector<std::int32_t> values(n, 7);
    Bytes ints(n * 4);
    std::memcpy(ints.data(), values.data(), ints.size());
    const auto result = compare_output("y", DType::int32, n, ints, ints, ints, default_tolerance(DType::int32));
    CHECK(result.check.passed);
    CHECK(result.rel_l2_bound == 0.0);
  }
}

TEST_CASE("compare_output fails an output off as a whole though every element is within the tolerance", "[host_tensors]") {
  const std::size_t n = 1000;
  const std::vector<float> values = varying(n, 1.5f, 0.3f);  // in [1.05, 1.95]: |e| <= 1.3 * rms
  const Bytes expected = floats(values);
  const Tolerance tolerance = default_tolerance(DType::float32);  // 1e-4, 1e-4: the L2 bound is 1e-4
  const auto scaled = [&](double factor) {
    std::vector<float> out(values);
    for (float& value : out) value = static_cast<float>(value * factor);
    return floats(out);
  };
  // 1.2e-4 too large everywhere: each element is within 1e-4 * rms + 1e-4 * |e|, the whole is not.
  const Bytes biased = scaled(1.0 + 1.2e-4);
  const auto result = compare_output("y", DType::float32, n, expected, biased, biased, tolerance);
  CHECK(result.check.mismatches == 0);
  CHECK_FALSE(result.near_constant);
  CHECK(result.rel_l2_bound == Approx(1e-4));
  CHECK(result.check.rel_l2_error == Approx(1.2e-4).epsilon(0.01));
  CHECK(result.rel_l2_exceeded);
  CHECK_FALSE(result.check.passed);
  CHECK(describe_failure(result, n).rfind("y: the relative L2 error 0.00012 exceeds 0.0001 (half of atol + rtol) although "
                                          "every element is within the tolerance", 0) == 0);
  // 0.8e-4 passes.
  const Bytes slightly = scaled(1.0 + 0.8e-4);
  CHECK(compare_output("y", DType::float32, n, expected, slightly, slightly, tolerance).check.passed);
  // An all-zero reference has no scale for a relative error: the elementwise rule decides.
  const Bytes zeros(n * sizeof(float), 0);
  const Bytes tiny = floats(std::vector<float>(n, 5e-5f));
  const auto against_zeros = compare_output("y", DType::float32, n, zeros, tiny, tiny, tolerance);
  CHECK_FALSE(against_zeros.rel_l2_exceeded);
  CHECK(against_zeros.check.passed);
}

TEST_CASE("the relative spread is zero for constant data", "[host_tensors]") {
  const Bytes constant = floats({2.0f, 2.0f, 2.0f});
  const Bytes varied = floats({1.0f, -2.0f, 3.0f});
  SpreadAccumulator of_constant;
  of_constant.add(DType::float32, constant.data(), 3);
  SpreadAccumulator of_varied;
  of_varied.add(DType::float32, varied.data(), 3);
  CHECK(of_constant.spread() == 0.0);
  CHECK(of_varied.spread() > 0.5);
}

TEST_CASE("a spread accumulated one buffer at a time equals the spread of all values at once", "[host_tensors]") {
  // Three buffers of different means and scales, each over several of the accumulator's chunks, with
  // non-finite values (ignored) among them.
  const std::int64_t count = (std::int64_t(1) << 18) * 3 + 12345;
  std::vector<Bytes> buffers;
  std::vector<double> finite;
  for (int b = 0; b < 3; ++b) {
    std::vector<float> values(static_cast<std::size_t>(count));
    for (std::int64_t i = 0; i < count; ++i) {
      values[static_cast<std::size_t>(i)] = static_cast<float>((b + 1) * 10.0 + std::sin(0.001 * double(i)) * (b + 1));
    }
    values[7] = std::numeric_limits<float>::quiet_NaN();
    values[static_cast<std::size_t>(count) - 1] = std::numeric_limits<float>::infinity();
    for (std::int64_t i = 0; i < count; ++i) {
      if (std::isfinite(values[static_cast<std::size_t>(i)])) finite.push_back(values[static_cast<std::size_t>(i)]);
    }
    buffers.push_back(floats(values));
  }
  // The definition, in one pass over all values: standard deviation (n - 1) over the mean magnitude.
  double sum = 0.0;
  double sum_abs = 0.0;
  for (const double v : finite) {
    sum += v;
    sum_abs += std::abs(v);
  }
  const double mean = sum / double(finite.size());
  double squares = 0.0;
  for (const double v : finite) squares += (v - mean) * (v - mean);
  const double expected = std::sqrt(squares / double(finite.size() - 1)) / (sum_abs / double(finite.size()));

  SpreadAccumulator shared;
  SpreadAccumulator serial;
  ThreadPool no_helpers(0);
  for (const Bytes& buffer : buffers) {
    shared.add(DType::float32, buffer.data(), count);
    serial.add(DType::float32, buffer.data(), count, no_helpers);
  }
  CHECK(shared.spread() == Approx(expected).epsilon(1e-9));
  // The chunks are fixed, so the thread count does not change a bit of the result.
  CHECK(shared.spread() == serial.spread());
  // Nothing added, or no finite value: no spread.
  CHECK(SpreadAccumulator().spread() == 0.0);
}
