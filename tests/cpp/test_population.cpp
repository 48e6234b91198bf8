// Population and parent selection: policies, modes, capacity, determinism.
#include <map>
#include <set>

#include "catch.hpp"
#include "kernelsmith/error.hpp"
#include "kernelsmith/population.hpp"

using namespace kernelsmith;

namespace {

Program make_program(const std::string& id, double fitness, bool correct = true, int island = 0, int children = 0,
                     std::int64_t sequence = 0) {
  Program program;
  program.candidate.language = "opencl";
  program.candidate.source = "// program " + id;
  program.evaluation.candidate_id = id;
  program.evaluation.status = correct ? Status::ok : Status::incorrect;
  program.evaluation.fitness = fitness;
  program.evaluation.speedup = correct ? fitness : 0.0;
  program.island = island;
  program.children = children;
  program.sequence = sequence;
  return program;
}

std::vector<const Program*> pointers(const std::vector<Program>& programs) {
  std::vector<const Program*> result;
  for (const Program& program : programs) result.push_back(&program);
  return result;
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

TEST_CASE("weighted selection favours fitness above the median and damps parents with many children",
          "[population]") {
  std::vector<Program> programs = {make_program("a", 1.0), make_program("b", 1.5), make_program("c", 3.0)};
  SelectionConfig config;
  config.policy = SelectionPolicy::weighted;
  std::vector<double> weights = selection_weights(pointers(programs), config);
  REQUIRE(weights.size() == 3);
  CHECK(weights[2] > weights[1]);
  CHECK(weights[1] > weights[0]);

  programs[2].children = 9;  // the best program has been tried often: 1/(1+9) of its weight
  std::vector<double> damped = selection_weights(pointers(programs), config);
  CHECK(damped[2] == Approx(weights[2] / 10.0));
  CHECK(damped[0] == Approx(weights[0]));

  // Scale-free: multiplying every fitness by 100 leaves the weights unchanged.
  std::vector<Program> scaled = {make_program("a", 100.0), make_program("b", 150.0), make_program("c", 300.0)};
  std::vector<double> scaled_weights = selection_weights(pointers(scaled), config);
  for (std::size_t i = 0; i < 3; ++i) CHECK(scaled_weights[i] == Approx(weights[i]));
}

TEST_CASE("power-law selection weighs by rank", "[population]") {
  std::vector<Program> programs = {make_program("a", 2.0), make_program("b", 5.0), make_program("c", 1.0)};
  SelectionConfig config;
  config.policy = SelectionPolicy::power_law;
  config.power_law_alpha = 1.0;
  std::vector<double> weights = selection_weights(pointers(programs), config);
  CHECK(weights[1] == Approx(1.0));        // rank 1
  CHECK(weights[0] == Approx(1.0 / 2.0));  // rank 2
  CHECK(weights[2] == Approx(1.0 / 3.0));  // rank 3
  config.power_law_alpha = 0.0;
  for (double weight : selection_weights(pointers(programs), config)) CHECK(weight == Approx(1.0));
}

TEST_CASE("policies pick in proportion to their weights", "[population]") {
  std::vector<Program> programs = {make_program("a", 1.0), make_program("b", 2.0), make_program("c", 4.0),
                                   make_program("d", 8.0)};
  const auto view = pointers(programs);
  std::mt19937_64 rng(7);
  const int draws = 4000;

  SECTION("uniform") {
    SelectionConfig config;
    config.policy = SelectionPolicy::uniform;
    std::map<std::size_t, int> counts;
    for (int i = 0; i < draws; ++i) ++counts[select_by_policy(view, config, rng)];
    for (std::size_t i = 0; i < 4; ++i) CHECK(counts[i] == Approx(draws / 4).epsilon(0.15));
  }
  SECTION("tournament of 3 picks the best most often") {
    SelectionConfig config;
    config.policy = SelectionPolicy::tournament;
    config.tournament_size = 3;
    std::map<std::size_t, int> counts;
    for (int i = 0; i < draws; ++i) ++counts[select_by_policy(view, config, rng)];
    // P(best wins) = 1 - (3/4)^3 = 0.578; P(worst wins) = (1/4)^3 = 0.016.
    CHECK(counts[3] == Approx(0.578 * draws).epsilon(0.1));
    CHECK(counts[0] < draws / 20);
  }
  SECTION("power law") {
    SelectionConfig config;
    config.policy = SelectionPolicy::power_law;
    std::map<std::size_t, int> counts;
    for (int i = 0; i < draws; ++i) ++counts[select_by_policy(view, config, rng)];
    const double total = 1.0 + 1.0 / 2 + 1.0 / 3 + 1.0 / 4;
    CHECK(counts[3] == Approx(draws / total).epsilon(0.1));
    CHECK(counts[0] == Approx(draws / 4.0 / total).epsilon(0.2));
  }
}

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
      CHECK(choice.program->id() == "broken");
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
    CHECK(picked == std::set<std::string>{"p4", "p5"});
  }
  SECTION("exploration and policy never pick incorrect programs when correct ones exist") {
    config.selection.exploration_ratio = 0.5;
    IslandPopulation population(config);
    population.add(make_program("good", 2.0));
    population.add(make_program("broken", 0.0, false));
    for (int i = 0; i < 50; ++i) CHECK(population.choose_parent(0, rng).program->id() == "good");
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
  CHECK(population.find(0, "broken") == nullptr);  // the failure ranks lowest
  population.add(make_program("d", 0.5, true, 0, 0, 5));
  CHECK(population.find(0, "d") == nullptr);  // d itself ranks lowest
  CHECK(population.best(0)->id() == "b");
  CHECK(population.best(1)->id() == "z");
  CHECK(population.best()->id() == "z");
  CHECK(population.size() == 4);

  population.note_child(0, "b");
  population.note_child(0, "b");
  CHECK(population.find(0, "b")->children == 2);

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

TEST_CASE("selection settings are validated", "[population]") {
  SelectionConfig config;
  config.exploration_ratio = 0.6;
  config.exploitation_ratio = 0.5;
  REQUIRE_THROWS_AS(config.validate(), ValidationError);
  config = SelectionConfig{};
  config.tournament_size = 0;
  REQUIRE_THROWS_AS(config.validate(), ValidationError);
  config = SelectionConfig{};
  config.repair_rate = -0.1;
  REQUIRE_THROWS_AS(config.validate(), ValidationError);
  CHECK(parse_selection_policy("power-law") == SelectionPolicy::power_law);
  CHECK(to_string(SelectionPolicy::tournament) == "tournament");
  REQUIRE_THROWS_AS(parse_selection_policy("greedy"), ValidationError);
}
