// Archive: the top-performing and the diverse programs. A MAP-Elites grid per island over feature
// descriptors plus an elite set; inspirations for prompts; migration between islands.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "kernelsmith/export.hpp"
#include "kernelsmith/population.hpp"

namespace kernelsmith {

class KERNELSMITH_API Archive {
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

/// One axis of the MAP-Elites grid: a value per program, cut into `bins` equal bins over [min, max]
/// (values outside fall into the end bins).
///
/// Built-in names (used when `compute` is empty):
///   "complexity"     log2 of the program's token count over the first archived program's (the
///                    reference): -1 is half as long, 2 four times as long
///   "registers"      most registers per thread over the compiled kernels (-1 when not reported)
///   "shared_memory"  log2(1 + most static shared memory bytes over the kernels) (0 when not reported)
///   "log_speedup"    log2 of the speedup over the baseline
///   "kernels"        number of kernels the compiler reported
struct FeatureDescriptor {
  std::string name;
  int bins = 8;
  double min = 0.0;
  double max = 1.0;
  std::function<double(const Program&)> compute;
};

/// complexity (6 bins over [-1, 2]), registers (6 bins over [0, 192]), log_speedup (8 bins over
/// [-1, 3]); docs/search.md says why.
KERNELSMITH_API std::vector<FeatureDescriptor> default_feature_descriptors();

struct MigrationConfig {
  /// Evaluations between migrations; 0 never migrates.
  std::int64_t interval = 40;
  /// Share of an island's archived (non-migrant) programs that moves to the next island, at least 1.
  double rate = 0.1;
};

/// A program copied to another island by migration.
struct Migration {
  std::string program_id;
  int from_island = 0;
  int to_island = 0;
};

struct KERNELSMITH_API ArchiveConfig {
  int islands = 1;
  std::vector<FeatureDescriptor> features = default_feature_descriptors();
  /// Size of the elite set (the best correct programs over all islands).
  std::size_t elite_count = 16;
  MigrationConfig migration;

  /// Throws ValidationError naming the field.
  void validate() const;
};

/// The built-in archive. Only correct programs enter; a cell keeps the fitter of two programs (the
/// incumbent on ties). Pointers it returns stay valid until the next add() or migrate().
class KERNELSMITH_API MapElitesArchive : public Archive {
 public:
  explicit MapElitesArchive(ArchiveConfig config = {});
  ~MapElitesArchive() override;
  MapElitesArchive(const MapElitesArchive&) = delete;
  MapElitesArchive& operator=(const MapElitesArchive&) = delete;

  bool add(const Program& program) override;
  /// In order: the island's best, the elite set's top programs, occupants of cells near the parent's,
  /// random occupants of other cells (diverse); never the parent, never twice the same code.
  std::vector<const Program*> inspirations(const Program& parent, int count,
                                           std::mt19937_64& rng) const override;
  /// inspirations() with why each was chosen ("island_best", "top", "nearby_cell", "diverse").
  std::vector<std::pair<const Program*, std::string>> inspirations_with_reasons(
      const Program& parent, int count, std::mt19937_64& rng) const;
  std::vector<const Program*> elites(int count) const override;
  /// Distinct programs held (in a cell or the elite set).
  std::size_t size() const override;

  /// The descriptor values and bin indices of a program.
  std::vector<double> features(const Program& program) const;
  std::vector<int> cell_of(const Program& program) const;
  /// The occupant of a cell on an island, or nullptr.
  const Program* cell(int island, const std::vector<int>& bins) const;
  std::vector<const Program*> island_cells(int island) const;
  const Program* island_best(int island) const;
  /// Occupied cells over all cells of an island's grid.
  double coverage(int island) const;

  /// Ring migration: each island's best `rate` share of non-migrant archived programs is copied to
  /// island (i + 1) mod islands unless the same code (normalised) is already there. The copies
  /// (island = target, migrant = true) enter the target's grid and are returned.
  std::vector<Program> migrate();
  /// True when a program with this normalised code has been offered on the island.
  bool island_has_code(int island, const Program& program) const;
  const ArchiveConfig& config() const { return config_; }

 private:
  struct State;
  ArchiveConfig config_;
  std::unique_ptr<State> state_;
};

}  // namespace kernelsmith
