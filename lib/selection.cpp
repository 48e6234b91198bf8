#include "kernelsmith/selection.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "detail/random.hpp"
#include "kernelsmith/error.hpp"

namespace kernelsmith {

std::string to_string(SelectionPolicy policy) {
  switch (policy) {
    case SelectionPolicy::uniform: return "uniform";
    case SelectionPolicy::tournament: return "tournament";
    case SelectionPolicy::weighted: return "weighted";
    case SelectionPolicy::power_law: return "power_law";
  }
  return "unknown";
}

SelectionPolicy parse_selection_policy(const std::string& name) {
  if (name == "uniform") return SelectionPolicy::uniform;
  if (name == "tournament") return SelectionPolicy::tournament;
  if (name == "weighted") return SelectionPolicy::weighted;
  if (name == "power_law" || name == "power-law" || name == "powerlaw") return SelectionPolicy::power_law;
  throw ValidationError(fmt::format(
      "unknown selection policy '{}': use one of uniform, tournament, weighted, power_law", name));
}

std::string to_string(SelectionMode mode) {
  switch (mode) {
    case SelectionMode::policy: return "policy";
    case SelectionMode::exploration: return "exploration";
    case SelectionMode::exploitation: return "exploitation";
    case SelectionMode::repair: return "repair";
  }
  return "unknown";
}

void SelectionConfig::validate() const {
  auto check_ratio = [](double value, const char* field) {
    if (!(value >= 0.0 && value <= 1.0)) {
      throw ValidationError(fmt::format("selection.{} = {} is outside [0, 1]", field, value));
    }
  };
  check_ratio(exploration_ratio, "exploration_ratio");
  check_ratio(exploitation_ratio, "exploitation_ratio");
  check_ratio(repair_rate, "repair_rate");
  if (exploration_ratio + exploitation_ratio + repair_rate > 1.0 + 1e-12) {
    throw ValidationError(fmt::format(
        "selection ratios sum to {} (exploration {} + exploitation {} + repair {}); they must sum to at "
        "most 1, the rest going to the policy",
        exploration_ratio + exploitation_ratio + repair_rate, exploration_ratio, exploitation_ratio,
        repair_rate));
  }
  if (tournament_size < 1) {
    throw ValidationError(fmt::format("selection.tournament_size = {} must be at least 1", tournament_size));
  }
  if (exploitation_top < 1) {
    throw ValidationError(fmt::format("selection.exploitation_top = {} must be at least 1", exploitation_top));
  }
  if (!std::isfinite(sharpness) || sharpness < 0.0) {
    throw ValidationError(fmt::format("selection.sharpness = {} must be a finite number >= 0", sharpness));
  }
  if (!std::isfinite(power_law_alpha)) {
    throw ValidationError("selection.power_law_alpha must be finite");
  }
}

namespace {

double median_of(std::vector<double> values) {
  if (values.empty()) return 0.0;
  const std::size_t middle = values.size() / 2;
  std::nth_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(middle), values.end());
  double upper = values[middle];
  if (values.size() % 2 == 1) return upper;
  const double lower = *std::max_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(middle));
  return 0.5 * (lower + upper);
}

double stable_sigmoid(double x) {
  if (x >= 0.0) return 1.0 / (1.0 + std::exp(-x));
  const double e = std::exp(x);
  return e / (1.0 + e);
}

// Positions of the programs sorted best first (ties broken by evaluation order).
std::vector<std::size_t> ranking(const std::vector<const Program*>& programs) {
  std::vector<std::size_t> order(programs.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return better_program(*programs[a], *programs[b]);
  });
  return order;
}

}  // namespace

std::vector<double> selection_weights(const std::vector<const Program*>& programs,
                                      const SelectionConfig& config) {
  std::vector<double> weights(programs.size(), 1.0);
  if (programs.empty()) return weights;
  switch (config.policy) {
    case SelectionPolicy::uniform:
    case SelectionPolicy::tournament:
      break;
    case SelectionPolicy::weighted: {
      // Fitness relative to the median in units of the median absolute deviation, so that the
      // pressure does not depend on whether speedups are 1.01 or 100.
      std::vector<double> fitness(programs.size());
      for (std::size_t i = 0; i < programs.size(); ++i) fitness[i] = programs[i]->fitness();
      const double median = median_of(fitness);
      std::vector<double> deviations(fitness.size());
      for (std::size_t i = 0; i < fitness.size(); ++i) deviations[i] = std::abs(fitness[i] - median);
      const double scale = std::max(median_of(deviations), 1e-9);
      for (std::size_t i = 0; i < programs.size(); ++i) {
        const double performance = stable_sigmoid(config.sharpness * (fitness[i] - median) / scale);
        const double freshness = 1.0 / (1.0 + std::max(0, programs[i]->children));
        weights[i] = performance * freshness;
      }
      break;
    }
    case SelectionPolicy::power_law: {
      const std::vector<std::size_t> order = ranking(programs);
      for (std::size_t rank = 0; rank < order.size(); ++rank) {
        weights[order[rank]] = std::pow(static_cast<double>(rank + 1), -config.power_law_alpha);
      }
      break;
    }
  }
  return weights;
}

std::size_t select_by_policy(const std::vector<const Program*>& programs, const SelectionConfig& config,
                             std::mt19937_64& rng) {
  if (programs.empty()) {
    throw ValidationError("parent selection over an empty set of programs");
  }
  switch (config.policy) {
    case SelectionPolicy::uniform:
      return detail::uniform_index(rng, programs.size());
    case SelectionPolicy::tournament: {
      std::size_t winner = detail::uniform_index(rng, programs.size());
      for (int round = 1; round < config.tournament_size; ++round) {
        const std::size_t challenger = detail::uniform_index(rng, programs.size());
        if (better_program(*programs[challenger], *programs[winner])) winner = challenger;
      }
      return winner;
    }
    case SelectionPolicy::weighted:
    case SelectionPolicy::power_law:
      return detail::weighted_index(rng, selection_weights(programs, config));
  }
  return 0;
}

}  // namespace kernelsmith
