// Skill predicates (lib/memory/predicate.cpp, docs/memory.md "Predicates"): comparisons, and/or/not,
// arithmetic, three-valued logic over missing features, and errors that name the column at parse time.
#include <string>

#include "catch.hpp"
#include "kernelsmith/predicate.hpp"
#include "test_support.hpp"

using namespace kernelsmith;
using test::contains;
using test::error_of;

namespace {

Features refine_features() {
  Features features;
  features.labels = {{"stage", "refine"}, {"status", "ok"}, {"failure", "none"}, {"task_dtype", "float32"}};
  features.numbers = {{"bandwidth_fraction", 0.35}, {"task_intensity", 0.25}, {"registers", 40},
                      {"spill_bytes", 0},           {"kernels", 2},           {"correct", 1}};
  return features;
}

}  // namespace

TEST_CASE("predicates: comparisons, and, or, not, arithmetic", "[predicate]") {
  const Features f = refine_features();
  CHECK(Predicate("stage == \"refine\" and bandwidth_fraction < 0.6").holds(f));
  CHECK(Predicate("stage == 'refine' && bandwidth_fraction < 0.6").holds(f));
  CHECK_FALSE(Predicate("stage == \"draft\" or bandwidth_fraction > 0.6").holds(f));
  CHECK(Predicate("not (registers > 128) and spill_bytes == 0").holds(f));
  CHECK(Predicate("!(registers > 128)").holds(f));
  CHECK(Predicate("kernels - 1 >= 1 and registers * 2 == 80 and registers / 8 == 5").holds(f));
  CHECK(Predicate("-registers < 0").holds(f));
  CHECK(Predicate("task_intensity < 1e1 and task_intensity >= .25").holds(f));
  CHECK(Predicate("correct").holds(f));  // a number as a condition: not zero
  CHECK(Predicate("true").holds(f));
  CHECK_FALSE(Predicate("false").holds(f));
  CHECK(Predicate().holds(Features{}));  // the default holds always
  CHECK(Predicate("failure != \"mismatch\"").holds(f));
  // and binds tighter than or.
  CHECK(Predicate("stage == \"draft\" and registers > 0 or kernels == 2").holds(f));
  CHECK_FALSE(Predicate("stage == \"draft\" and (registers > 0 or kernels == 2)").holds(f));
}

TEST_CASE("predicates: a missing feature makes what reads it unknown (Kleene's logic)", "[predicate]") {
  Features f = refine_features();
  f.numbers.erase("bandwidth_fraction");
  const Predicate reads_it("bandwidth_fraction < 0.6");
  CHECK_FALSE(reads_it.evaluate(f).has_value());
  CHECK_FALSE(reads_it.holds(f));
  CHECK_FALSE(Predicate("not (bandwidth_fraction < 0.6)").holds(f));  // not unknown is unknown, never true
  // A false side decides `and`, a true side decides `or`, whatever the unknown side is.
  CHECK(Predicate("stage == \"draft\" and bandwidth_fraction < 0.6").evaluate(f) == std::optional<bool>(false));
  CHECK(Predicate("bandwidth_fraction < 0.6 or kernels == 2").evaluate(f) == std::optional<bool>(true));
  CHECK_FALSE(Predicate("bandwidth_fraction < 0.6 and kernels == 2").evaluate(f).has_value());
  // A division by zero says nothing either.
  CHECK_FALSE(Predicate("registers / spill_bytes > 1").evaluate(f).has_value());
}

TEST_CASE("predicates: features are listed in order of appearance", "[predicate]") {
  const Predicate p("registers > 128 or spill_bytes > 0 and registers > 64 and stage == \"refine\"");
  CHECK(p.features() == std::vector<std::string>{"registers", "spill_bytes", "stage"});
  CHECK(p.text() == "registers > 128 or spill_bytes > 0 and registers > 64 and stage == \"refine\"");
}

TEST_CASE("predicates: malformed ones fail when made, naming the column", "[predicate]") {
  auto error = [](const std::string& text) { return error_of([&] { Predicate predicate(text); }); };
  CHECK(contains(error("registers > > 3"), "column 13: expected a feature, a number, a string or '('; got \">\""));
  CHECK(contains(error("registers > 3 and"), "column 18: expected a feature"));
  CHECK(contains(error("(registers > 3"), "column 15: expected ')' to close the '(' at column 1"));
  CHECK(contains(error("registers = 3"), "column 11: '=' alone is no operator: compare with =="));
  CHECK(contains(error("0.2 < sol_fraction < 0.5"), "column 20: comparisons do not chain"));
  CHECK(contains(error("status == \"ok"), "column 11: the string opened here has no closing \""));
  CHECK(contains(error("registers > 3x"), "\"3x\" is not a number"));
  CHECK(contains(error("registers # 3"), "column 11: unexpected character '#'"));
  CHECK(contains(error(""), "empty predicate"));
  CHECK(contains(error("registers > 3 stage"), "column 15: expected and, or or the end"));
}

TEST_CASE("predicates: unknown features, type mismatches and label typos are refused", "[predicate]") {
  auto error = [](const std::string& text) { return error_of([&] { Predicate predicate(text); }); };
  const std::string unknown = error("bandwith_fraction < 0.5");
  CHECK(contains(unknown, "column 1: unknown feature 'bandwith_fraction'"));
  CHECK(contains(unknown, "bandwidth_fraction"));  // the known features are listed
  CHECK(contains(error("status > 3"), "'>' compares a label with a number"));
  CHECK(contains(error("status < \"ok\""), "labels compare with == and != only"));
  CHECK(contains(error("failure == \"incorect\""), "column 12: \"incorect\" is not a value of failure"));
  CHECK(contains(error("status"), "must be a condition, not a label"));
  CHECK(contains(error("status and registers > 3"), "the left side of 'and' must be a condition"));
  CHECK(contains(error("status + 1 > 2"), "'+' needs numbers; got a label"));
  CHECK(contains(error("(registers > 3) > 1"), "compares numbers or labels, not conditions"));
  // A label whose values are open (task names) takes any string.
  CHECK(Predicate("task == \"my_own_task\"").holds(Features{{}, {{"task", "my_own_task"}}}));
}
