// DType names, aliases, sizes and the per-dtype default tolerances.
#include <string>

#include "catch.hpp"
#include "kernelsmith/dtype.hpp"
#include "kernelsmith/error.hpp"
#include "kernelsmith/task.hpp"

using namespace kernelsmith;

TEST_CASE("every dtype round-trips through its canonical name", "[dtype]") {
  for (DType dtype : {DType::float16, DType::bfloat16, DType::float32, DType::float64, DType::int8, DType::uint8,
                      DType::int32, DType::int64}) {
    CHECK(parse_dtype(to_string(dtype)) == dtype);
  }
  CHECK(to_string(DType::bfloat16) == "bfloat16");
}

TEST_CASE("common aliases parse to the canonical dtype", "[dtype]") {
  CHECK(parse_dtype("fp32") == DType::float32);
  CHECK(parse_dtype("f32") == DType::float32);
  CHECK(parse_dtype("float") == DType::float32);
  CHECK(parse_dtype("half") == DType::float16);
  CHECK(parse_dtype("bf16") == DType::bfloat16);
  CHECK(parse_dtype("double") == DType::float64);
  CHECK(parse_dtype("int") == DType::int32);
  CHECK(parse_dtype("torch.float16") == DType::float16);
  CHECK(parse_dtype("np.uint8") == DType::uint8);
}

TEST_CASE("an unknown dtype names the accepted ones", "[dtype]") {
  REQUIRE_THROWS_AS(parse_dtype("flaot32"), ValidationError);
  try {
    parse_dtype("flaot32");
  } catch (const ValidationError& error) {
    const std::string message = error.what();
    CHECK(message.find("flaot32") != std::string::npos);
    CHECK(message.find("bfloat16") != std::string::npos);
  }
  REQUIRE_THROWS_AS(parse_dtype(""), ValidationError);
  REQUIRE_THROWS_AS(parse_dtype("Float32"), ValidationError);
}

TEST_CASE("dtype sizes and classes", "[dtype]") {
  CHECK(dtype_size(DType::float16) == 2);
  CHECK(dtype_size(DType::bfloat16) == 2);
  CHECK(dtype_size(DType::float32) == 4);
  CHECK(dtype_size(DType::float64) == 8);
  CHECK(dtype_size(DType::int8) == 1);
  CHECK(dtype_size(DType::uint8) == 1);
  CHECK(dtype_size(DType::int32) == 4);
  CHECK(dtype_size(DType::int64) == 8);
  CHECK(is_floating(DType::bfloat16));
  CHECK_FALSE(is_floating(DType::int32));
  CHECK_FALSE(is_floating(DType::uint8));
}

TEST_CASE("default tolerances follow the dtype", "[dtype]") {
  CHECK(default_tolerance(DType::float32).atol == Approx(1e-4));
  CHECK(default_tolerance(DType::float32).rtol == Approx(1e-4));
  CHECK(default_tolerance(DType::float16).rtol == Approx(1e-2));
  CHECK(default_tolerance(DType::bfloat16).atol == Approx(1e-2));
  CHECK(default_tolerance(DType::float64).atol == Approx(1e-8));
  CHECK(default_tolerance(DType::int32).atol == 0.0);
  CHECK(default_tolerance(DType::int8).rtol == 0.0);
}
