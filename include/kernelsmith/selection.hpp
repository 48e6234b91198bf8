// Parent selection: which program of an island the next mutation starts from.
//
// Each pick first draws a *mode*: repair (an incorrect program, to be fixed), exploration (uniform
// over the island's correct programs), exploitation (uniform over the island's few best) or the
// configured *policy* over the correct programs (uniform, tournament, weighted, power law over rank).
// docs/search.md explains the policies and their defaults.
#pragma once

#include <cstddef>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "kernelsmith/export.hpp"
#include "kernelsmith/program.hpp"

namespace kernelsmith {

enum class SelectionPolicy {
  uniform,     ///< every correct program equally likely
  tournament,  ///< the fittest of `tournament_size` programs drawn uniformly (with replacement)
  weighted,    ///< sigmoid of fitness relative to the median, damped by 1 / (1 + children)
  power_law,   ///< (rank + 1)^-alpha over programs sorted best first
};

KERNELSMITH_API std::string to_string(SelectionPolicy policy);
/// Parses "uniform", "tournament", "weighted", "power_law" (also "power-law"). Throws ValidationError.
KERNELSMITH_API SelectionPolicy parse_selection_policy(const std::string& name);

/// How a parent was picked, for the record.
enum class SelectionMode { policy, exploration, exploitation, repair };
KERNELSMITH_API std::string to_string(SelectionMode mode);

struct KERNELSMITH_API SelectionConfig {
  SelectionPolicy policy = SelectionPolicy::weighted;
  int tournament_size = 3;
  /// Weighted: slope of the sigmoid over (fitness - median) / MAD. 0 ignores fitness (children only).
  double sharpness = 2.0;
  /// Power law: exponent over the rank; 0 is uniform, larger concentrates on the best.
  double power_law_alpha = 1.0;
  /// Share of picks uniform over the island's correct programs (diversity).
  double exploration_ratio = 0.2;
  /// Share of picks uniform over the island's `exploitation_top` best programs (greed).
  double exploitation_ratio = 0.1;
  int exploitation_top = 3;
  /// Share of picks that take an incorrect program, when the island has one, so that it is fixed.
  double repair_rate = 0.05;

  /// Throws ValidationError naming the field when a ratio is outside [0, 1], the ratios sum above 1,
  /// or a size is below 1.
  void validate() const;
};

/// Relative weights the policy gives the programs (for weighted and power_law; uniform gives equal
/// weights; tournament has no closed form and also gives equal weights). Exposed for tests and plots.
KERNELSMITH_API std::vector<double> selection_weights(const std::vector<const Program*>& programs,
                                                      const SelectionConfig& config);

/// Index into `programs` chosen by `config.policy`. Throws ValidationError when `programs` is empty.
KERNELSMITH_API std::size_t select_by_policy(const std::vector<const Program*>& programs,
                                             const SelectionConfig& config, std::mt19937_64& rng);

}  // namespace kernelsmith
