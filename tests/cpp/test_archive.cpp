// Archive: MAP-Elites cells, elite set, inspirations, migration (novelty: test_novelty.cpp).
#include <cmath>
#include <set>

#include "catch.hpp"
#include "kernelsmith/archive.hpp"
#include "kernelsmith/error.hpp"
#include "kernelsmith/novelty.hpp"
#include "program_test_support.hpp"

using namespace kernelsmith;
using kernelsmith::testing::id_of;
using kernelsmith::testing::named_program;

namespace {

// A program named `name` (its id is id_of(name)); `x` and `y` feed the custom descriptors below.
Program make_program(const std::string& name, double fitness, double x, double y, int island = 0,
                     bool correct = true, std::int64_t sequence = 0) {
  return named_program(name, fitness, correct, island, sequence,
                       "x=" + std::to_string(x) + " y=" + std::to_string(y));
}

// Two custom axes reading the x/y the program's message carries: 4 bins each over [0, 4).
ArchiveConfig grid_config(int islands = 1) {
  ArchiveConfig config;
  config.islands = islands;
  auto read = [](const Program& program, const char* key) {
    const std::string& message = program.evaluation.message;
    const std::size_t at = message.find(key);
    return std::stod(message.substr(at + 2));
  };
  FeatureDescriptor x;
  x.name = "x";
  x.bins = 4;
  x.min = 0.0;
  x.max = 4.0;
  x.compute = [read](const Program& program) { return read(program, "x="); };
  FeatureDescriptor y = x;
  y.name = "y";
  y.compute = [read](const Program& program) { return read(program, "y="); };
  config.features = {x, y};
  config.elite_count = 3;
  return config;
}

std::vector<std::string> ids_of(const std::vector<const Program*>& programs) {
  std::vector<std::string> ids;
  for (const Program* program : programs) ids.push_back(program->id());
  return ids;
}

}  // namespace

TEST_CASE("a cell keeps the fitter program; only correct programs enter", "[archive]") {
  MapElitesArchive archive(grid_config());
  CHECK(archive.add(make_program("a", 1.0, 0.5, 0.5)));
  CHECK(archive.cell_of(make_program("a", 1.0, 0.5, 0.5)) == std::vector<int>{0, 0});
  CHECK(archive.add(make_program("worse", 0.9, 0.7, 0.2, 0, true, 1)));  // no cell, but the elite set has room
  CHECK(archive.cell(0, {0, 0})->id() == id_of("a"));
  CHECK(archive.add(make_program("better", 2.0, 0.1, 0.9, 0, true, 2)));
  CHECK(archive.cell(0, {0, 0})->id() == id_of("better"));
  CHECK_FALSE(archive.add(make_program("broken", 0.0, 3.5, 3.5, 0, false, 3)));
  CHECK(archive.cell(0, {3, 3}) == nullptr);
  CHECK(archive.add(make_program("far", 0.5, 3.9, 9.0, 0, true, 4)));  // values beyond max clamp to the last bin
  CHECK(archive.cell(0, {3, 3})->id() == id_of("far"));
  CHECK(archive.coverage(0) == Approx(2.0 / 16.0));
  // "a" lost its cell but stays an elite; "worse" never had a cell and is an elite too.
  CHECK(ids_of(archive.elites(10)) == std::vector<std::string>{id_of("better"), id_of("a"), id_of("worse")});
  CHECK(archive.size() == 4);  // better, far (cells) + a, worse (elites)
}

TEST_CASE("the elite set holds the top k distinct programs, best first", "[archive]") {
  MapElitesArchive archive(grid_config(2));
  archive.add(make_program("p1", 1.0, 0.5, 0.5, 0, true, 0));
  archive.add(make_program("p2", 4.0, 1.5, 0.5, 1, true, 1));
  archive.add(make_program("p3", 3.0, 2.5, 0.5, 0, true, 2));
  archive.add(make_program("p4", 2.0, 3.5, 0.5, 1, true, 3));
  CHECK(ids_of(archive.elites(3)) == std::vector<std::string>{id_of("p2"), id_of("p3"), id_of("p4")});
  CHECK(ids_of(archive.elites(1)) == std::vector<std::string>{id_of("p2")});
  // A copy of p2 on another island (a migrant) does not enter the elite set twice.
  Program copy = make_program("p2", 4.0, 1.5, 0.5, 0, true, 1);
  copy.migrant = true;
  archive.add(copy);
  CHECK(ids_of(archive.elites(3)) == std::vector<std::string>{id_of("p2"), id_of("p3"), id_of("p4")});
}

TEST_CASE("inspirations: island best, top, nearby cells, diverse; never the parent", "[archive]") {
  ArchiveConfig config = grid_config(2);
  config.elite_count = 2;
  MapElitesArchive archive(config);
  std::int64_t sequence = 0;
  for (int x = 0; x < 4; ++x) {
    for (int y = 0; y < 4; ++y) {
      const std::string id = "c" + std::to_string(x) + std::to_string(y);
      archive.add(make_program(id, 1.0 + x + 0.1 * y, x + 0.5, y + 0.5, 0, true, sequence++));
    }
  }
  archive.add(make_program("other_island", 0.5, 0.5, 0.5, 1, true, sequence++));
  const Program parent = *archive.cell(0, {0, 0});
  std::mt19937_64 rng(5);
  const auto chosen = archive.inspirations_with_reasons(parent, 7, rng);
  REQUIRE(chosen.size() == 7);
  std::set<std::string> ids;
  for (const auto& [program, reason] : chosen) {
    CHECK(program->id() != parent.id());
    CHECK(ids.insert(program->id()).second);
    if (reason == "nearby_cell") {
      const std::vector<int> bins = archive.cell_of(*program);
      CHECK(std::abs(bins[0]) + std::abs(bins[1]) <= 2);
    }
  }
  CHECK(chosen[0].second == "island_best");
  CHECK(chosen[0].first->id() == id_of("c33"));
  CHECK(chosen[1].second == "top");
  CHECK(chosen[1].first->id() == id_of("c32"));  // c33, the top elite, is already the island best
  std::set<std::string> reasons;
  for (const auto& entry : chosen) reasons.insert(entry.second);
  CHECK(reasons == std::set<std::string>{"island_best", "top", "nearby_cell", "diverse"});

  // The same seed gives the same inspirations.
  std::mt19937_64 again(5);
  CHECK(ids_of(archive.inspirations(parent, 7, again)) == ids_of([&] {
          std::vector<const Program*> programs;
          for (const auto& entry : chosen) programs.push_back(entry.first);
          return programs;
        }()));
  CHECK(archive.inspirations(parent, 0, rng).empty());
}

TEST_CASE("migration copies the best programs around a ring, once", "[archive]") {
  ArchiveConfig config = grid_config(3);
  config.migration.rate = 0.5;
  MapElitesArchive archive(config);
  archive.add(make_program("a1", 3.0, 0.5, 0.5, 0, true, 0));
  archive.add(make_program("a2", 2.0, 1.5, 0.5, 0, true, 1));
  archive.add(make_program("b1", 5.0, 0.5, 0.5, 1, true, 2));
  // Island 2 already holds the code of b1 (offered there before): no duplicate code on the target.
  Program b1_copy = make_program("b1", 5.0, 0.5, 0.5, 2, false, 3);
  archive.add(b1_copy);

  const std::vector<Program> migrants = archive.migrate();
  REQUIRE(migrants.size() == 1);  // island 0 sends its best half (a1); island 1's b1 is already on island 2
  CHECK(migrants[0].id() == id_of("a1"));
  CHECK(migrants[0].island == 1);
  CHECK(migrants[0].migrant);
  CHECK(archive.island_has_code(1, migrants[0]));
  CHECK(archive.island_best(1)->id() == id_of("b1"));

  // Next round: a1 on island 1 is a migrant and does not travel on; island 0 sends a2 (a1 is on 1).
  const std::vector<Program> second = archive.migrate();
  std::set<std::pair<std::string, int>> moves;
  for (const Program& migrant : second) moves.insert({migrant.id(), migrant.island});
  CHECK(moves.count({id_of("a1"), 2}) == 0);
  CHECK(moves.count({id_of("a2"), 1}) == 1);

  MapElitesArchive single(grid_config(1));
  single.add(make_program("x", 1.0, 0.5, 0.5));
  CHECK(single.migrate().empty());
}

TEST_CASE("default descriptors: complexity against the first program, registers, log speedup", "[archive]") {
  MapElitesArchive archive{ArchiveConfig{}};
  Program reference = make_program("ref", 1.0, 0.0, 0.0);
  archive.add(reference);
  const std::vector<double> reference_features = archive.features(reference);
  CHECK(reference_features[0] == Approx(0.0));   // complexity: log2(1)
  CHECK(reference_features[1] == Approx(-1.0));  // registers not reported
  CHECK(reference_features[2] == Approx(0.0));   // log2(speedup 1)

  const std::string& code = reference.candidate().source;
  Program longer(Candidate{"opencl", code + "\n" + code + "\n" + code + "\n" + code, {}},
                 make_program("long", 4.0, 0.0, 0.0).evaluation);
  KernelResources kernel;
  kernel.name = "k";
  kernel.registers = 40;
  longer.evaluation.compile.kernels = {kernel};
  const std::vector<double> features = archive.features(longer);
  CHECK(features[0] == Approx(2.0));  // four times the tokens
  CHECK(features[1] == Approx(40.0));
  CHECK(features[2] == Approx(2.0));  // log2(4)
  CHECK(archive.cell_of(longer) == std::vector<int>{5, 1, 6});

  ArchiveConfig bad;
  bad.features[0].name = "unknown";
  REQUIRE_THROWS_AS(MapElitesArchive(bad), ValidationError);
  bad = ArchiveConfig{};
  bad.features[1].bins = 0;
  REQUIRE_THROWS_AS(MapElitesArchive(bad), ValidationError);
}
