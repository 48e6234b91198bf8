#include "kernelsmith/population.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "detail/random.hpp"
#include "kernelsmith/error.hpp"

namespace kernelsmith {

void PopulationConfig::validate() const {
  if (islands < 1) {
    throw ValidationError(fmt::format("population.islands = {} must be at least 1", islands));
  }
  selection.validate();
}

IslandPopulation::IslandPopulation(PopulationConfig config) : config_(std::move(config)) {
  config_.validate();
  islands_.resize(static_cast<std::size_t>(config_.islands));
}

const IslandPopulation::Island& IslandPopulation::island_at(int island) const {
  if (island < 0 || island >= config_.islands) {
    throw ValidationError(
        fmt::format("island {} does not exist: the population has islands 0..{}", island, config_.islands - 1));
  }
  return islands_[static_cast<std::size_t>(island)];
}

IslandPopulation::Island& IslandPopulation::island_at(int island) {
  return const_cast<Island&>(static_cast<const IslandPopulation*>(this)->island_at(island));
}

void IslandPopulation::add(const Program& program) {
  Island& island = island_at(program.island);
  auto found = island.index.find(program.id());
  if (found != island.index.end()) {
    Program& existing = *island.programs[found->second];
    const int children = existing.children;
    existing = program;
    existing.children = std::max(children, program.children);
    return;
  }
  island.index.emplace(program.id(), island.programs.size());
  island.programs.push_back(std::make_unique<Program>(program));
  if (config_.island_capacity > 0 && island.programs.size() > config_.island_capacity) {
    evict_one(island);
  }
}

void IslandPopulation::evict_one(Island& island) {
  if (island.programs.size() < 2) return;
  std::size_t best = 0;
  for (std::size_t i = 1; i < island.programs.size(); ++i) {
    if (better_program(*island.programs[i], *island.programs[best])) best = i;
  }
  std::size_t worst = best == 0 ? 1 : 0;
  for (std::size_t i = 0; i < island.programs.size(); ++i) {
    if (i == best) continue;
    // The lowest-ranked; among equal fitness the newest leaves and the incumbent stays.
    if (better_program(*island.programs[worst], *island.programs[i])) worst = i;
  }
  const std::size_t last = island.programs.size() - 1;
  island.index.erase(island.programs[worst]->id());
  if (worst != last) {
    std::swap(island.programs[worst], island.programs[last]);
    island.index[island.programs[worst]->id()] = worst;
  }
  island.programs.pop_back();
}

ParentChoice IslandPopulation::choose_parent(int island_number, std::mt19937_64& rng,
                                            const ParentFilter& eligible) const {
  const Island& island = island_at(island_number);
  if (island.programs.empty()) {
    throw NotFoundError(fmt::format("island {} has no program to select a parent from", island_number));
  }
  std::vector<const Program*> correct;
  std::vector<const Program*> incorrect;
  for (const auto& program : island.programs) {
    if (eligible && !eligible(*program)) continue;
    (program->correct() ? correct : incorrect).push_back(program.get());
  }
  if (correct.empty() && incorrect.empty()) return {};
  const SelectionConfig& selection = config_.selection;
  auto pick_repair = [&]() {
    // Fresh failures first: a failure already tried many times is less likely to be fixed next.
    std::vector<double> weights(incorrect.size());
    for (std::size_t i = 0; i < incorrect.size(); ++i) weights[i] = 1.0 / (1.0 + incorrect[i]->children);
    return ParentChoice{incorrect[detail::weighted_index(rng, weights)], SelectionMode::repair};
  };
  if (correct.empty()) return pick_repair();

  const double draw = detail::uniform01(rng);
  // With nothing to repair, the repair share goes to the policy.
  double threshold = incorrect.empty() ? 0.0 : selection.repair_rate;
  if (draw < threshold) return pick_repair();
  threshold += selection.exploration_ratio;
  if (draw < threshold) {
    return {correct[detail::uniform_index(rng, correct.size())], SelectionMode::exploration};
  }
  threshold += selection.exploitation_ratio;
  if (draw < threshold) {
    std::vector<const Program*> ranked = correct;
    std::stable_sort(ranked.begin(), ranked.end(),
                     [](const Program* a, const Program* b) { return better_program(*a, *b); });
    const std::size_t top = std::min<std::size_t>(ranked.size(), static_cast<std::size_t>(selection.exploitation_top));
    return {ranked[detail::uniform_index(rng, top)], SelectionMode::exploitation};
  }
  return {correct[select_by_policy(correct, selection, rng)], SelectionMode::policy};
}

const Program& IslandPopulation::select_parent(int island, std::mt19937_64& rng) {
  return *choose_parent(island, rng).program;
}

std::vector<const Program*> IslandPopulation::island_programs(int island_number) const {
  const Island& island = island_at(island_number);
  std::vector<const Program*> programs;
  programs.reserve(island.programs.size());
  for (const auto& program : island.programs) programs.push_back(program.get());
  return programs;
}

int IslandPopulation::islands() const { return config_.islands; }

std::size_t IslandPopulation::size() const {
  std::size_t total = 0;
  for (const Island& island : islands_) total += island.programs.size();
  return total;
}

const Program* IslandPopulation::find(int island_number, const std::string& id) const {
  const Island& island = island_at(island_number);
  auto found = island.index.find(id);
  return found == island.index.end() ? nullptr : island.programs[found->second].get();
}

void IslandPopulation::note_child(int island_number, const std::string& id) {
  Island& island = island_at(island_number);
  auto found = island.index.find(id);
  if (found != island.index.end()) ++island.programs[found->second]->children;
}

const Program* IslandPopulation::best(int island_number) const {
  const Program* best_program = nullptr;
  for (const auto& program : island_at(island_number).programs) {
    if (!program->correct()) continue;
    if (best_program == nullptr || better_program(*program, *best_program)) best_program = program.get();
  }
  return best_program;
}

const Program* IslandPopulation::best() const {
  const Program* best_program = nullptr;
  for (int island = 0; island < config_.islands; ++island) {
    const Program* candidate = best(island);
    if (candidate != nullptr && (best_program == nullptr || better_program(*candidate, *best_program))) {
      best_program = candidate;
    }
  }
  return best_program;
}

}  // namespace kernelsmith
