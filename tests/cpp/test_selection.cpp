// Parent selection policies (lib/selection.cpp): the weights each policy gives, picks in proportion to
// them, names, and the validation of the settings. The modes over an island (repair, exploration,
// exploitation) are the population's and are tested in test_population.cpp.
#include <cmath>
#include <limits>
#include <map>

#include "catch.hpp"
#include "kernelsmith/error.hpp"
#include "kernelsmith/selection.hpp"
#include "program_test_support.hpp"

using namespace kernelsmith;
using kernelsmith::testing::named_program;

namespace {

Program make_program(const std::string& name, double fitness, bool correct = true, int children = 0,
                     std::int64_t sequence = 0) {
  Program program = named_program(name, fitness, correct, 0, sequence);
  program.children = children;
  return program;
}

std::vector<const Program*> pointers(const std::vector<Program>& programs) {
  std::vector<const Program*> result;
  for (const Program& program : programs) result.push_back(&program);
  return result;
}

}  // namespace

TEST_CASE("weighted selection favours fitness above the median and damps parents with many children",
          "[selection]") {
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

TEST_CASE("power-law selection weighs by rank", "[selection]") {
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

TEST_CASE("policies pick in proportion to their weights", "[selection]") {
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

TEST_CASE("selection settings are validated", "[selection]") {
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

TEST_CASE("every policy and mode has a name that parses back", "[selection]") {
  for (SelectionPolicy policy :
       {SelectionPolicy::uniform, SelectionPolicy::tournament, SelectionPolicy::weighted, SelectionPolicy::power_law}) {
    CHECK(parse_selection_policy(to_string(policy)) == policy);
  }
  CHECK(parse_selection_policy("power_law") == SelectionPolicy::power_law);
  CHECK(to_string(SelectionMode::policy) == "policy");
  CHECK(to_string(SelectionMode::exploration) == "exploration");
  CHECK(to_string(SelectionMode::exploitation) == "exploitation");
  CHECK(to_string(SelectionMode::repair) == "repair");
  try {
    parse_selection_policy("roulette");
    FAIL("no error for an unknown policy");
  } catch (const ValidationError& error) {
    // The message names the bad value and the choices.
    CHECK(std::string(error.what()).find("'roulette'") != std::string::npos);
    CHECK(std::string(error.what()).find("tournament") != std::string::npos);
  }
}

TEST_CASE("weighted selection with sharpness 0 ignores fitness and weighs by freshness only", "[selection]") {
  std::vector<Program> programs = {make_program("a", 1.0, true, 0), make_program("b", 9.0, true, 3)};
  SelectionConfig config;
  config.policy = SelectionPolicy::weighted;
  config.sharpness = 0.0;
  const std::vector<double> weights = selection_weights(pointers(programs), config);
  CHECK(weights[0] == Approx(0.5));        // sigmoid(0) / (1 + 0)
  CHECK(weights[1] == Approx(0.5 / 4.0));  // sigmoid(0) / (1 + 3)
  // Equal fitness everywhere: no spread to scale by, every program at the sigmoid's middle.
  std::vector<Program> equal = {make_program("a", 2.0), make_program("b", 2.0), make_program("c", 2.0)};
  config.sharpness = 2.0;
  for (double weight : selection_weights(pointers(equal), config)) CHECK(weight == Approx(0.5));
}

TEST_CASE("power-law ranks break fitness ties by evaluation order", "[selection]") {
  std::vector<Program> programs = {make_program("late", 2.0, true, 0, 5), make_program("early", 2.0, true, 0, 1)};
  SelectionConfig config;
  config.policy = SelectionPolicy::power_law;
  config.power_law_alpha = 2.0;
  const std::vector<double> weights = selection_weights(pointers(programs), config);
  CHECK(weights[1] == Approx(1.0));   // the earlier one ranks first
  CHECK(weights[0] == Approx(0.25));  // rank 2: 2^-2
}

TEST_CASE("select_by_policy: a tournament of one is uniform, an empty set is an error", "[selection]") {
  std::vector<Program> programs = {make_program("a", 1.0), make_program("b", 100.0)};
  SelectionConfig config;
  config.policy = SelectionPolicy::tournament;
  config.tournament_size = 1;
  std::mt19937_64 rng(9);
  int best = 0;
  const int draws = 2000;
  for (int i = 0; i < draws; ++i) best += select_by_policy(pointers(programs), config, rng) == 1 ? 1 : 0;
  CHECK(best == Approx(draws / 2).epsilon(0.1));
  REQUIRE_THROWS_AS(select_by_policy({}, config, rng), ValidationError);
  CHECK(selection_weights({}, config).empty());
}

TEST_CASE("selection settings name the field that is out of range", "[selection]") {
  auto message_of = [](const SelectionConfig& config) {
    try {
      config.validate();
    } catch (const ValidationError& error) {
      return std::string(error.what());
    }
    return std::string();
  };
  SelectionConfig config;
  CHECK(message_of(config).empty());
  config.exploitation_top = 0;
  CHECK(message_of(config).find("exploitation_top") != std::string::npos);
  config = SelectionConfig{};
  config.sharpness = -1.0;
  CHECK(message_of(config).find("sharpness") != std::string::npos);
  config = SelectionConfig{};
  config.power_law_alpha = std::numeric_limits<double>::infinity();
  CHECK(message_of(config).find("power_law_alpha") != std::string::npos);
  config = SelectionConfig{};
  config.exploration_ratio = 1.5;
  CHECK(message_of(config).find("exploration_ratio") != std::string::npos);
}
