// Archive: the top-performing and the diverse programs. A MAP-Elites grid per island over feature
// descriptors plus an elite set; inspirations for prompts; migration between islands.
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "kernelsmith/population.hpp"

namespace kernelsmith {

class Archive {
 public:
  virtual ~Archive() = default;
  /// Offers a program; returns true when it entered a cell or the elite set.
  virtual bool add(const Program& program) = 0;
  /// Programs to show next to a parent: the island's best, top programs, nearby cells, diverse ones.
  virtual std::vector<const Program*> inspirations(const Program& parent, int count,
                                                   std::mt19937_64& rng) const = 0;
  /// The best correct programs across islands, best first.
  virtual std::vector<const Program*> elites(int count) const = 0;
  virtual std::size_t size() const = 0;
};

}  // namespace kernelsmith
