// Random draws built on the raw 64-bit engine only: std::uniform_*_distribution and
// std::discrete_distribution differ between standard libraries, and a run must replay identically
// under a seed wherever it is built.
#pragma once

#include <cstddef>
#include <cstdint>
#include <random>
#include <vector>

namespace kernelsmith::detail {

/// The top 53 bits of a 64-bit value as a number in [0, 1).
inline double unit_interval(std::uint64_t bits) {
  return static_cast<double>(bits >> 11) * (1.0 / 9007199254740992.0);
}

/// Uniform in [0, 1) with 53 random bits.
inline double uniform01(std::mt19937_64& rng) { return unit_interval(rng()); }

/// splitmix64: one step of the golden-ratio sequence, then its finaliser. Decorrelates nearby inputs
/// (seeds, counters, indices), so that streams derived from them look independent.
inline std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ULL;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}

/// Uniform in [0, n); n must be positive. Rejection sampling removes the modulo bias.
inline std::size_t uniform_index(std::mt19937_64& rng, std::size_t n) {
  const std::uint64_t range = static_cast<std::uint64_t>(n);
  const std::uint64_t limit = UINT64_MAX - UINT64_MAX % range;
  std::uint64_t value = rng();
  while (value >= limit) value = rng();
  return static_cast<std::size_t>(value % range);
}

/// Index drawn with probability proportional to the (non-negative) weights; uniform when they sum to
/// zero or less. `weights` must not be empty.
inline std::size_t weighted_index(std::mt19937_64& rng, const std::vector<double>& weights) {
  double total = 0.0;
  for (double weight : weights) total += weight > 0.0 ? weight : 0.0;
  if (!(total > 0.0)) return uniform_index(rng, weights.size());
  double target = uniform01(rng) * total;
  for (std::size_t i = 0; i < weights.size(); ++i) {
    const double weight = weights[i] > 0.0 ? weights[i] : 0.0;
    if (target < weight) return i;
    target -= weight;
  }
  // Rounding left the target at the very end: the last positive weight.
  for (std::size_t i = weights.size(); i-- > 0;) {
    if (weights[i] > 0.0) return i;
  }
  return weights.size() - 1;
}

/// A seed for a derived stream (a request, a resumed run) from a base seed and a counter.
inline std::uint64_t mix_seed(std::uint64_t seed, std::uint64_t counter) {
  return splitmix64(seed + 0x9E3779B97F4A7C15ULL * counter);
}

}  // namespace kernelsmith::detail
