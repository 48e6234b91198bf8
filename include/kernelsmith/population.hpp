// Population: the live programs of each island and the policy that picks parents from them.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <unordered_map>
#include <vector>

#include "kernelsmith/export.hpp"
#include "kernelsmith/program.hpp"
#include "kernelsmith/selection.hpp"

namespace kernelsmith {

class KERNELSMITH_API Population {
 public:
  virtual ~Population() = default;
  virtual void add(const Program& program) = 0;
  /// Picks a parent on an island. Throws NotFoundError when the island has no program.
  virtual const Program& select_parent(int island, std::mt19937_64& rng) = 0;
  virtual std::vector<const Program*> island_programs(int island) const = 0;
  virtual int islands() const = 0;
  virtual std::size_t size() const = 0;
};

struct KERNELSMITH_API PopulationConfig {
  int islands = 1;
  /// Most programs kept per island; beyond it the lowest-ranked program that is not the island's best
  /// leaves (failures first, since they rank lowest). 0 keeps every program.
  std::size_t island_capacity = 1000;
  SelectionConfig selection;

  /// Throws ValidationError naming the field.
  void validate() const;
};

/// Which programs a parent may be picked from (e.g. those the mutator can work from); empty: all.
using ParentFilter = std::function<bool(const Program&)>;

/// A parent pick with the way it was made. `program` is nullptr when the filter accepted no program
/// of the island.
struct ParentChoice {
  const Program* program = nullptr;
  SelectionMode mode = SelectionMode::policy;
};

/// The built-in population: one list per island, selection by SelectionConfig.
class KERNELSMITH_API IslandPopulation : public Population {
 public:
  explicit IslandPopulation(PopulationConfig config = {});
  IslandPopulation(const IslandPopulation&) = delete;
  IslandPopulation& operator=(const IslandPopulation&) = delete;
  IslandPopulation(IslandPopulation&&) = default;
  IslandPopulation& operator=(IslandPopulation&&) = default;

  /// Adds to `program.island`; a program with the same id on that island is replaced (its children
  /// count kept). Throws ValidationError for an island outside [0, islands).
  void add(const Program& program) override;
  const Program& select_parent(int island, std::mt19937_64& rng) override;
  /// select_parent with the mode that made the pick, among the island's programs that `eligible`
  /// accepts (all when it is empty): the modes and the policy see only those, as if the others were
  /// not there. Throws NotFoundError when the island has no program; returns a null `program` when it
  /// has some but `eligible` accepts none (without drawing from `rng`).
  ParentChoice choose_parent(int island, std::mt19937_64& rng, const ParentFilter& eligible = {}) const;
  std::vector<const Program*> island_programs(int island) const override;
  int islands() const override;
  std::size_t size() const override;

  /// The program with this id on the island, or nullptr.
  const Program* find(int island, const std::string& id) const;
  /// Counts a child proposed from the program (no-op when it is no longer on the island).
  void note_child(int island, const std::string& id);
  /// Best correct program of an island / of all islands, or nullptr when there is none.
  const Program* best(int island) const;
  const Program* best() const;
  const PopulationConfig& config() const { return config_; }

 private:
  struct Island {
    std::vector<std::unique_ptr<Program>> programs;
    std::unordered_map<std::string, std::size_t> index;
  };
  const Island& island_at(int island) const;
  Island& island_at(int island);
  void evict_one(Island& island);

  PopulationConfig config_;
  std::vector<Island> islands_;
};

}  // namespace kernelsmith
