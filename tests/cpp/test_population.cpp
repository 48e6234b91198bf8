// Population: selection modes over an island, capacity and eviction, islands, determinism.
// (The policies themselves are tested in test_selection.cpp.)
#include <map>
#include <set>

#include "catch.hpp"
#include "kernelsmith/error.hpp"
#include "kernelsmith/population.hpp"
#include "program_test_support.hpp"

using namespace kernelsmith;
using kernelsmith::testing::id_of;
using kernelsmith::testing::named_program;

namespace {

Program make_program(const std::string& name, double fitness, bool correct = true, int island = 0, int children = 0,
                     std::int64_t sequence = 0) {
  Program program = named_program(name, fitness, correct, island, sequence);
  program.children = children;
  return program;
}

PopulationConfig policy_only(SelectionPolicy policy) {
  PopulationConfig config;
  config.selection.policy = policy;
  config.selection.exploration_ratio = 0.0;
  config.selection.exploitation_ratio = 0.0;
  config.selection.repair_rate = 0.0;
  return config;
}

}  // namespace

TEST_CASE("selection modes: repair picks incorrect programs, exploitation the top ones", "[population]") {
  PopulationConfig config = policy_only(SelectionPolicy::uniform);
  std::mt19937_64 rng(3);

  SECTION("repair") {
    config.selection.repair_rate = 1.0;
    IslandPopulation population(config);
    population.add(make_program("good", 2.0));
    population.add(make_program("broken", 0.0, false));
    for (int i = 0; i < 20; ++i) {
      const ParentChoice choice = population.choose_parent(0, rng);
      CHECK(choice.program->id() == id_of("broken"));
      CHECK(choice.mode == SelectionMode::repair);
    }
  }
  SECTION("without incorrect programs, repair falls back to the policy") {
    config.selection.repair_rate = 1.0;
    IslandPopulation population(config);
    population.add(make_program("good", 2.0));
    CHECK(population.choose_parent(0, rng).mode == SelectionMode::policy);
  }
  SECTION("exploitation stays within the top programs") {
    config.selection.exploitation_ratio = 1.0;
    config.selection.exploitation_top = 2;
    IslandPopulation population(config);
    for (int i = 0; i < 6; ++i) population.add(make_program("p" + std::to_string(i), 1.0 + i));
    std::set<std::string> picked;
    for (int i = 0; i < 50; ++i) {
      const ParentChoice choice = population.choose_parent(0, rng);
      CHECK(choice.mode == SelectionMode::exploitation);
      picked.insert(choice.program->id());
    }
    CHECK(picked == std::set<std::string>{id_of("p4"), id_of("p5")});
  }
  SECTION("exploration and policy never pick incorrect programs when correct ones exist") {
    config.selection.exploration_ratio = 0.5;
    IslandPopulation population(config);
    population.add(make_program("good", 2.0));
    population.add(make_program("broken", 0.0, false));
    for (int i = 0; i < 50; ++i) CHECK(population.choose_parent(0, rng).program->id() == id_of("good"));
  }
  SECTION("an island with only incorrect programs still yields a parent to repair") {
    IslandPopulation population(config);
    population.add(make_program("broken", 0.0, false));
    CHECK(population.choose_parent(0, rng).mode == SelectionMode::repair);
  }
}

TEST_CASE("islands are separate and capacity evicts the lowest-ranked program", "[population]") {
  PopulationConfig config;
  config.islands = 2;
  config.island_capacity = 3;
  IslandPopulation population(config);
  population.add(make_program("a", 1.0, true, 0, 0, 0));
  population.add(make_program("b", 3.0, true, 0, 0, 1));
  population.add(make_program("broken", -0.75, false, 0, 0, 2));
  population.add(make_program("c", 2.0, true, 0, 0, 3));
  population.add(make_program("z", 9.0, true, 1, 0, 4));
  CHECK(population.island_programs(0).size() == 3);
  CHECK(population.find(0, id_of("broken")) == nullptr);  // the failure ranks lowest
  population.add(make_program("d", 0.5, true, 0, 0, 5));
  CHECK(population.find(0, id_of("d")) == nullptr);  // d itself ranks lowest
  CHECK(population.best(0)->id() == id_of("b"));
  CHECK(population.best(1)->id() == id_of("z"));
  CHECK(population.best()->id() == id_of("z"));
  CHECK(population.size() == 4);

  population.note_child(0, id_of("b"));
  population.note_child(0, id_of("b"));
  CHECK(population.find(0, id_of("b"))->children == 2);

  std::mt19937_64 rng(1);
  IslandPopulation empty(PopulationConfig{});
  REQUIRE_THROWS_AS(empty.select_parent(0, rng), NotFoundError);
  REQUIRE_THROWS_AS(population.add(make_program("x", 1.0, true, 5)), ValidationError);
}

TEST_CASE("selection is reproducible under a seed", "[population]") {
  PopulationConfig config;
  IslandPopulation population(config);
  for (int i = 0; i < 10; ++i) population.add(make_program("p" + std::to_string(i), 1.0 + 0.1 * i, i % 4 != 0));
  auto sequence = [&](std::uint64_t seed) {
    std::mt19937_64 rng(seed);
    std::vector<std::string> ids;
    for (int i = 0; i < 30; ++i) ids.push_back(population.select_parent(0, rng).id());
    return ids;
  };
  CHECK(sequence(42) == sequence(42));
  CHECK(sequence(42) != sequence(43));
}

TEST_CASE("a parent filter limits every mode to the programs it accepts", "[population]") {
  PopulationConfig config;
  config.selection.repair_rate = 0.3;
  config.selection.exploration_ratio = 0.3;
  config.selection.exploitation_ratio = 0.3;
  IslandPopulation population(config);
  population.add(make_program("reference", 1.0));
  population.add(make_program("best", 5.0));
  population.add(make_program("tuned", 2.0));
  population.add(make_program("broken", 0.0, false));
  const std::string excluded = id_of("best");
  const ParentFilter eligible = [&](const Program& program) { return program.id() != excluded; };
  std::mt19937_64 rng(4);
  std::set<std::string> picked;
  for (int i = 0; i < 200; ++i) {
    const ParentChoice choice = population.choose_parent(0, rng, eligible);
    REQUIRE(choice.program != nullptr);
    picked.insert(choice.program->id());
  }
  CHECK(picked == std::set<std::string>{id_of("reference"), id_of("tuned"), id_of("broken")});

  SECTION("an island where the filter accepts nothing gives no parent and draws nothing") {
    std::mt19937_64 before(8);
    std::mt19937_64 after = before;
    const ParentChoice none = population.choose_parent(0, after, [](const Program&) { return false; });
    CHECK(none.program == nullptr);
    CHECK(after() == before());  // the random stream is where it was
  }
  SECTION("a filter accepting everything picks as no filter does") {
    std::mt19937_64 filtered(21);
    std::mt19937_64 plain(21);
    for (int i = 0; i < 50; ++i) {
      CHECK(population.choose_parent(0, filtered, [](const Program&) { return true; }).program ==
            population.choose_parent(0, plain).program);
    }
  }
  SECTION("only incorrect programs accepted: the pick is a repair") {
    const ParentChoice choice =
        population.choose_parent(0, rng, [](const Program& program) { return !program.correct(); });
    REQUIRE(choice.program != nullptr);
    CHECK(choice.program->id() == id_of("broken"));
    CHECK(choice.mode == SelectionMode::repair);
  }
}

TEST_CASE("adding a program with a known id replaces it and keeps its children count", "[population]") {
  IslandPopulation population{PopulationConfig{}};
  population.add(make_program("a", 1.0, true, 0, 4));
  population.add(make_program("a", 3.0, true, 0, 1));
  REQUIRE(population.size() == 1);
  CHECK(population.find(0, id_of("a"))->fitness() == Approx(3.0));
  CHECK(population.find(0, id_of("a"))->children == 4);
}
