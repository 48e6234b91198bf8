// What several test files share: the message of the error a call throws, and host arrays as tensors.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <optional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "catch.hpp"
#include "kernelsmith/error.hpp"
#include "kernelsmith/tensor.hpp"

namespace kernelsmith::test {

/// Sets an environment variable for one scope (nullopt unsets it) and restores what was there.
class ScopedEnvironment {
 public:
  ScopedEnvironment(std::string name, const std::optional<std::string>& value) : name_(std::move(name)) {
    if (const char* old = std::getenv(name_.c_str())) previous_ = old;
    if (value) {
      ::setenv(name_.c_str(), value->c_str(), 1);
    } else {
      ::unsetenv(name_.c_str());
    }
  }
  ~ScopedEnvironment() {
    if (previous_) {
      ::setenv(name_.c_str(), previous_->c_str(), 1);
    } else {
      ::unsetenv(name_.c_str());
    }
  }
  ScopedEnvironment(const ScopedEnvironment&) = delete;
  ScopedEnvironment& operator=(const ScopedEnvironment&) = delete;

 private:
  std::string name_;
  std::optional<std::string> previous_;
};

/// The message of the kernelsmith::Error `call` throws, or "no error".
template <typename Call>
std::string error_of(Call&& call) {
  try {
    call();
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

/// The message of the PlanError `body` throws, with its line; fails the test when nothing is thrown.
template <typename Body>
std::pair<std::string, int> plan_error(Body body) {
  try {
    body();
  } catch (const PlanError& error) {
    return {error.what(), error.line()};
  }
  FAIL("expected a PlanError");
  return {"", -1};
}

inline bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

/// `count` floats drawn from N(0, 1), the same for the same seed.
inline std::vector<float> random_floats(std::size_t count, unsigned seed) {
  std::mt19937 generator(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> values(count);
  for (auto& value : values) value = normal(generator);
  return values;
}

/// A float32 host tensor of `shape` over `values`, which must outlive it.
inline TensorRef host_ref(std::vector<float>& values, std::vector<std::int64_t> shape) {
  TensorRef ref;
  ref.dtype = DType::float32;
  ref.shape = std::move(shape);
  ref.data = values.data();
  return ref;
}

}  // namespace kernelsmith::test
