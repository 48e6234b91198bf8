// Population: the live programs of each island and the policy that picks parents from them.
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "kernelsmith/candidate.hpp"
#include "kernelsmith/evaluation.hpp"

namespace kernelsmith {

/// An evaluated candidate as the search sees it.
struct Program {
  Candidate candidate;
  Evaluation evaluation;
  int island = 0;
  int generation = 0;
  /// Children proposed from it so far (damps its chance of being picked again).
  int children = 0;
  /// Evaluation order, from 0: the engine's clock.
  std::int64_t sequence = 0;

  const std::string& id() const { return evaluation.candidate_id; }
  double fitness() const { return evaluation.fitness; }
  bool correct() const { return evaluation.status == Status::ok; }
};

class Population {
 public:
  virtual ~Population() = default;
  virtual void add(const Program& program) = 0;
  /// Picks a parent on an island. Throws NotFoundError when the island has no program.
  virtual const Program& select_parent(int island, std::mt19937_64& rng) = 0;
  virtual std::vector<const Program*> island_programs(int island) const = 0;
  virtual int islands() const = 0;
  virtual std::size_t size() const = 0;
};

}  // namespace kernelsmith
