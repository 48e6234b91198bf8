#include "kernelsmith/archive.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <unordered_map>
#include <unordered_set>

#include "detail/random.hpp"
#include "detail/source_digest.hpp"
#include "kernelsmith/error.hpp"

namespace kernelsmith {

std::vector<FeatureDescriptor> default_feature_descriptors() {
  std::vector<FeatureDescriptor> features(3);
  features[0].name = "complexity";
  features[0].bins = 6;
  features[0].min = -1.0;
  features[0].max = 2.0;
  features[1].name = "registers";
  features[1].bins = 6;
  features[1].min = 0.0;
  features[1].max = 192.0;
  features[2].name = "log_speedup";
  features[2].bins = 8;
  features[2].min = -1.0;
  features[2].max = 3.0;
  return features;
}

namespace {

bool is_builtin_feature(const std::string& name) {
  return name == "complexity" || name == "registers" || name == "shared_memory" || name == "log_speedup" ||
         name == "kernels";
}

double builtin_feature(const std::string& name, const Program& program, double token_count,
                       double reference_tokens) {
  const auto& kernels = program.evaluation.compile.kernels;
  if (name == "complexity") {
    if (!(reference_tokens > 0.0) || !(token_count > 0.0)) return 0.0;
    return std::log2(token_count / reference_tokens);
  }
  if (name == "registers") {
    int most = -1;
    for (const auto& kernel : kernels) most = std::max(most, kernel.registers);
    return most;
  }
  if (name == "shared_memory") {
    std::int64_t most = 0;
    for (const auto& kernel : kernels) most = std::max(most, kernel.shared_bytes);
    return std::log2(1.0 + static_cast<double>(most));
  }
  if (name == "log_speedup") {
    const double speedup = program.evaluation.speedup;
    return speedup > 0.0 ? std::log2(speedup) : -std::numeric_limits<double>::infinity();
  }
  if (name == "kernels") return static_cast<double>(kernels.size());
  return 0.0;
}

}  // namespace

void ArchiveConfig::validate() const {
  if (islands < 1) throw ValidationError(fmt::format("archive.islands = {} must be at least 1", islands));
  if (features.empty()) throw ValidationError("archive.features is empty: give at least one feature descriptor");
  double cells = 1.0;
  for (const FeatureDescriptor& feature : features) {
    if (feature.name.empty()) throw ValidationError("archive.features: a descriptor has no name");
    if (feature.bins < 1) {
      throw ValidationError(fmt::format("archive feature '{}': bins = {} must be at least 1", feature.name, feature.bins));
    }
    if (!(feature.max > feature.min)) {
      throw ValidationError(fmt::format("archive feature '{}': max ({}) must be above min ({})", feature.name,
                                        feature.max, feature.min));
    }
    if (!feature.compute && !is_builtin_feature(feature.name)) {
      throw ValidationError(fmt::format(
          "archive feature '{}' is not built in (complexity, registers, shared_memory, log_speedup, kernels) "
          "and has no compute function",
          feature.name));
    }
    cells *= feature.bins;
  }
  if (cells > 1e9) throw ValidationError(fmt::format("archive grid has {} cells per island: use fewer bins", cells));
  if (!(migration.rate >= 0.0 && migration.rate <= 1.0)) {
    throw ValidationError(fmt::format("migration.rate = {} is outside [0, 1]", migration.rate));
  }
  if (migration.interval < 0) {
    throw ValidationError(fmt::format("migration.interval = {} must be >= 0 (0: never)", migration.interval));
  }
}

struct MapElitesArchive::State {
  struct Holder {
    Program program;
    std::vector<int> bins;
    std::string code_hash;  // normalised source hash
    int references = 0;
  };
  struct Island {
    std::unordered_map<std::int64_t, std::string> cells;  // flattened bins -> holder key
    std::unordered_set<std::string> code_hashes;           // normalised code offered here
  };
  std::unordered_map<std::string, Holder> holders;  // "<id>@<island>" -> program
  std::vector<Island> islands;
  std::vector<std::string> elites;  // holder keys, best first, distinct program ids
  double reference_tokens = 0.0;
  std::int64_t cells_per_island = 1;

  static std::string key(const Program& program) { return fmt::format("{}@{}", program.id(), program.island); }

  void release(const std::string& holder_key) {
    auto found = holders.find(holder_key);
    if (found != holders.end() && --found->second.references <= 0) holders.erase(found);
  }
};

MapElitesArchive::MapElitesArchive(ArchiveConfig config) : config_(std::move(config)), state_(std::make_unique<State>()) {
  config_.validate();
  state_->islands.resize(static_cast<std::size_t>(config_.islands));
  for (const FeatureDescriptor& feature : config_.features) state_->cells_per_island *= feature.bins;
}

MapElitesArchive::~MapElitesArchive() = default;

namespace {

// Descriptor values; `tokens` < 0 means not yet counted (counted here when "complexity" needs it).
std::vector<double> compute_features(const ArchiveConfig& config, const Program& program, double tokens,
                                     double reference_tokens) {
  std::vector<double> values;
  values.reserve(config.features.size());
  for (const FeatureDescriptor& feature : config.features) {
    if (feature.compute) {
      values.push_back(feature.compute(program));
      continue;
    }
    if (feature.name == "complexity" && tokens < 0.0) {
      tokens = static_cast<double>(detail::digest_source(program.candidate().language, program.candidate().source).tokens);
    }
    values.push_back(builtin_feature(feature.name, program, tokens, reference_tokens));
  }
  return values;
}

std::vector<int> bins_of(const ArchiveConfig& config, const std::vector<double>& values) {
  std::vector<int> bins(values.size());
  for (std::size_t d = 0; d < values.size(); ++d) {
    const FeatureDescriptor& feature = config.features[d];
    const double value = values[d];
    int bin = 0;
    if (!std::isnan(value)) {
      const double position = (value - feature.min) / (feature.max - feature.min) * feature.bins;
      bin = position <= 0.0 ? 0 : position >= feature.bins ? feature.bins - 1 : static_cast<int>(position);
    }
    bins[d] = bin;
  }
  return bins;
}

}  // namespace

std::vector<double> MapElitesArchive::features(const Program& program) const {
  return compute_features(config_, program, -1.0, state_->reference_tokens);
}

std::vector<int> MapElitesArchive::cell_of(const Program& program) const {
  return bins_of(config_, features(program));
}

namespace {

std::int64_t flatten(const std::vector<int>& bins, const std::vector<FeatureDescriptor>& features) {
  std::int64_t key = 0;
  for (std::size_t d = 0; d < bins.size(); ++d) key = key * features[d].bins + bins[d];
  return key;
}

int cell_distance(const std::vector<int>& a, const std::vector<int>& b) {
  int distance = 0;
  for (std::size_t d = 0; d < a.size() && d < b.size(); ++d) distance += std::abs(a[d] - b[d]);
  return distance;
}

}  // namespace

bool MapElitesArchive::add(const Program& program) {
  if (program.island < 0 || program.island >= config_.islands) {
    throw ValidationError(fmt::format("archive: program {} is on island {}, but the archive has islands 0..{}",
                                      program.id(), program.island, config_.islands - 1));
  }
  State& state = *state_;
  State::Island& island = state.islands[static_cast<std::size_t>(program.island)];
  // One pass over the source gives the code hash and the token count.
  const detail::SourceDigest digest = detail::digest_source(program.candidate().language, program.candidate().source);
  island.code_hashes.insert(digest.hash);
  if (state.reference_tokens <= 0.0) {
    // The first program offered (the task's reference, in a run) sets the complexity scale.
    state.reference_tokens = static_cast<double>(std::max<std::size_t>(1, digest.tokens));
  }
  if (!program.correct()) return false;

  const std::string key = State::key(program);
  if (state.holders.count(key) != 0) return false;  // already held on this island
  std::vector<int> bins =
      bins_of(config_, compute_features(config_, program, static_cast<double>(digest.tokens), state.reference_tokens));
  const std::int64_t cell_key = flatten(bins, config_.features);

  bool entered = false;
  auto occupant = island.cells.find(cell_key);
  if (occupant == island.cells.end() || better_program(program, state.holders.at(occupant->second).program)) {
    State::Holder& holder = state.holders[key];
    holder.program = program;
    holder.bins = bins;
    holder.code_hash = digest.hash;
    ++holder.references;
    if (occupant != island.cells.end()) {
      const std::string previous = occupant->second;
      occupant->second = key;
      state.release(previous);
    } else {
      island.cells.emplace(cell_key, key);
    }
    entered = true;
  }

  // The elite set holds distinct programs: a migrant copy of an elite does not enter twice.
  bool elite_known = false;
  for (const std::string& elite : state.elites) {
    if (state.holders.at(elite).program.id() == program.id()) elite_known = true;
  }
  bool elite = false;
  if (!elite_known && config_.elite_count > 0) {
    auto position = std::find_if(state.elites.begin(), state.elites.end(), [&](const std::string& other) {
      return better_program(program, state.holders.at(other).program);
    });
    if (position != state.elites.end() || state.elites.size() < config_.elite_count) {
      State::Holder& holder = state.holders[key];
      if (holder.references == 0) {
        holder.program = program;
        holder.bins = bins;
        holder.code_hash = digest.hash;
      }
      ++holder.references;
      state.elites.insert(position, key);
      if (state.elites.size() > config_.elite_count) {
        const std::string dropped = state.elites.back();
        state.elites.pop_back();
        state.release(dropped);
      }
      elite = true;
    }
  }
  return entered || elite;
}

std::vector<std::pair<const Program*, std::string>> MapElitesArchive::inspirations_with_reasons(
    const Program& parent, int count, std::mt19937_64& rng) const {
  std::vector<std::pair<const Program*, std::string>> chosen;
  if (count <= 0) return chosen;
  const State& state = *state_;
  std::unordered_set<std::string> taken{parent.id()};
  // The parent's code hash and cell: from its holder when the archive has it, else computed.
  auto parent_holder = state.holders.find(State::key(parent));
  const bool parent_held = parent_holder != state.holders.end();
  const std::string parent_hash =
      parent_held ? parent_holder->second.code_hash
                  : detail::digest_source(parent.candidate().language, parent.candidate().source).hash;
  auto take = [&](const Program* program, const char* reason) {
    if (program == nullptr || static_cast<int>(chosen.size()) >= count) return false;
    if (!taken.insert(program->id()).second) return false;
    chosen.emplace_back(program, reason);
    return true;
  };
  const int island_number = std::clamp(parent.island, 0, config_.islands - 1);
  const State::Island& island = state.islands[static_cast<std::size_t>(island_number)];

  take(island_best(island_number), "island_best");

  const int remaining = count - static_cast<int>(chosen.size());
  const int top_quota = (remaining + 2) / 3;
  const int nearby_quota = (remaining - top_quota + 1) / 2;

  int taken_top = 0;
  for (const std::string& key : state.elites) {
    if (taken_top >= top_quota) break;
    if (take(&state.holders.at(key).program, "top")) ++taken_top;
  }

  // Nearby: occupants of the island's cells closest to the parent's cell (within distance 2).
  const std::vector<int> parent_bins = parent_held ? parent_holder->second.bins : cell_of(parent);
  std::vector<std::pair<int, const Program*>> near;
  std::vector<const State::Holder*> far;
  for (const auto& [cell_key, holder_key] : island.cells) {
    (void)cell_key;
    const State::Holder& holder = state.holders.at(holder_key);
    const int distance = cell_distance(parent_bins, holder.bins);
    if (distance <= 2) {
      near.emplace_back(distance, &holder.program);
    } else {
      far.push_back(&holder);
    }
  }
  std::sort(near.begin(), near.end(), [](const auto& a, const auto& b) {
    if (a.first != b.first) return a.first < b.first;
    return better_program(*a.second, *b.second);
  });
  int taken_near = 0;
  for (const auto& [distance, program] : near) {
    (void)distance;
    if (taken_near >= nearby_quota) break;
    if (take(program, "nearby_cell")) ++taken_near;
  }

  // Diverse: random occupants of distant cells, then of other islands' cells. Sorted first so that
  // the draw does not depend on hash-table order.
  auto by_rank = [](const State::Holder* a, const State::Holder* b) { return better_program(a->program, b->program); };
  std::sort(far.begin(), far.end(), by_rank);
  std::vector<const State::Holder*> elsewhere;
  for (int other = 0; other < config_.islands; ++other) {
    if (other == island_number) continue;
    for (const auto& [cell_key, holder_key] : state.islands[static_cast<std::size_t>(other)].cells) {
      (void)cell_key;
      elsewhere.push_back(&state.holders.at(holder_key));
    }
  }
  std::sort(elsewhere.begin(), elsewhere.end(), by_rank);
  for (std::vector<const State::Holder*>* pool : {&far, &elsewhere}) {
    while (!pool->empty() && static_cast<int>(chosen.size()) < count) {
      const std::size_t pick = detail::uniform_index(rng, pool->size());
      const State::Holder* holder = (*pool)[pick];
      (*pool)[pick] = pool->back();
      pool->pop_back();
      if (holder->code_hash == parent_hash) continue;
      take(&holder->program, "diverse");
    }
  }
  // Too few distant programs: fill with what is left near and at the top.
  for (const auto& [distance, program] : near) {
    (void)distance;
    take(program, "nearby_cell");
  }
  for (const std::string& key : state.elites) take(&state.holders.at(key).program, "top");
  return chosen;
}

std::vector<const Program*> MapElitesArchive::inspirations(const Program& parent, int count,
                                                           std::mt19937_64& rng) const {
  std::vector<const Program*> programs;
  for (const auto& [program, reason] : inspirations_with_reasons(parent, count, rng)) {
    (void)reason;
    programs.push_back(program);
  }
  return programs;
}

std::vector<const Program*> MapElitesArchive::elites(int count) const {
  std::vector<const Program*> programs;
  for (const std::string& key : state_->elites) {
    if (static_cast<int>(programs.size()) >= count) break;
    programs.push_back(&state_->holders.at(key).program);
  }
  return programs;
}

std::size_t MapElitesArchive::size() const { return state_->holders.size(); }

const Program* MapElitesArchive::cell(int island, const std::vector<int>& bins) const {
  if (island < 0 || island >= config_.islands || bins.size() != config_.features.size()) return nullptr;
  const State::Island& cells = state_->islands[static_cast<std::size_t>(island)];
  auto found = cells.cells.find(flatten(bins, config_.features));
  return found == cells.cells.end() ? nullptr : &state_->holders.at(found->second).program;
}

std::vector<const Program*> MapElitesArchive::island_cells(int island) const {
  std::vector<const Program*> programs;
  if (island < 0 || island >= config_.islands) return programs;
  for (const auto& [cell_key, holder_key] : state_->islands[static_cast<std::size_t>(island)].cells) {
    (void)cell_key;
    programs.push_back(&state_->holders.at(holder_key).program);
  }
  std::sort(programs.begin(), programs.end(), [](const Program* a, const Program* b) { return better_program(*a, *b); });
  return programs;
}

const Program* MapElitesArchive::island_best(int island) const {
  if (island < 0 || island >= config_.islands) return nullptr;
  const Program* best = nullptr;
  for (const auto& [cell_key, holder_key] : state_->islands[static_cast<std::size_t>(island)].cells) {
    (void)cell_key;
    const Program& program = state_->holders.at(holder_key).program;
    if (best == nullptr || better_program(program, *best)) best = &program;
  }
  return best;
}

double MapElitesArchive::coverage(int island) const {
  if (island < 0 || island >= config_.islands) return 0.0;
  return static_cast<double>(state_->islands[static_cast<std::size_t>(island)].cells.size()) /
         static_cast<double>(state_->cells_per_island);
}

bool MapElitesArchive::island_has_code(int island, const Program& program) const {
  if (island < 0 || island >= config_.islands) return false;
  return state_->islands[static_cast<std::size_t>(island)].code_hashes.count(
             detail::digest_source(program.candidate().language, program.candidate().source).hash) != 0;
}

std::vector<Program> MapElitesArchive::migrate() {
  std::vector<Program> migrants;
  if (config_.islands < 2 || config_.migration.rate <= 0.0) return migrants;
  for (int from = 0; from < config_.islands; ++from) {
    const int to = (from + 1) % config_.islands;
    std::vector<const State::Holder*> sources;
    for (const auto& [cell_key, holder_key] : state_->islands[static_cast<std::size_t>(from)].cells) {
      (void)cell_key;
      const State::Holder& holder = state_->holders.at(holder_key);
      if (!holder.program.migrant) sources.push_back(&holder);
    }
    std::sort(sources.begin(), sources.end(), [](const State::Holder* a, const State::Holder* b) {
      return better_program(a->program, b->program);
    });
    const auto& target_codes = state_->islands[static_cast<std::size_t>(to)].code_hashes;
    if (sources.empty()) continue;
    const auto quota = std::max<std::size_t>(
        1, static_cast<std::size_t>(std::llround(config_.migration.rate * static_cast<double>(sources.size()))));
    std::size_t sent = 0;
    for (const State::Holder* holder : sources) {
      if (sent >= quota) break;
      if (target_codes.count(holder->code_hash) != 0) continue;
      Program copy = holder->program;
      copy.island = to;
      copy.migrant = true;
      copy.children = 0;
      migrants.push_back(std::move(copy));
      ++sent;
    }
  }
  // Added after planning, so that a copy never travels on in the same round.
  for (const Program& migrant : migrants) add(migrant);
  return migrants;
}

}  // namespace kernelsmith
