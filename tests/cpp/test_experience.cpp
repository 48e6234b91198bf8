// The experience memory (lib/memory/experience*.cpp, docs/memory.md): rewards, Monte-Carlo credits along a
// lineage, retrieval by value and similarity with seeded epsilon-greedy exploration, cross-task retrieval,
// the SQLite file shared by two memories, eviction, and a retriever of one's own.
#include <cmath>
#include <filesystem>
#include <set>
#include <string>

#include "catch.hpp"
#include "detail/sqlite.hpp"
#include "kernelsmith/experience.hpp"
#include "test_support.hpp"

using namespace kernelsmith;

using test::contains;
using test::error_of;

namespace {

Features elementwise_task(double bytes = 8e6) {
  Features f;
  f.labels = {{"task", "relu"}, {"task_dtype", "float32"}};
  f.numbers = {{"task_flops", bytes / 8}, {"task_bytes", bytes}, {"task_intensity", 0.125}, {"task_elements", bytes / 8},
               {"task_reduction", 1},    {"task_inputs", 1},    {"task_outputs", 1},        {"task_rank", 1}};
  return f;
}

Features matmul_task() {
  Features f;
  f.labels = {{"task", "matmul"}, {"task_dtype", "float32"}};
  f.numbers = {{"task_flops", 1.4e11}, {"task_bytes", 5e7}, {"task_intensity", 2800}, {"task_elements", 1.6e7},
               {"task_reduction", 1},  {"task_inputs", 2},  {"task_outputs", 1},      {"task_rank", 2}};
  return f;
}

Features refine_feedback(double bandwidth = 0.3) {
  Features f;
  f.labels = {{"stage", "refine"}, {"status", "ok"}, {"failure", "none"}, {"language", "cuda"}};
  f.numbers = {{"compiled", 1}, {"correct", 1}, {"speedup", 1.0}, {"bandwidth_fraction", bandwidth}, {"kernels", 1}};
  return f;
}

ExperienceItem item_of(const std::string& task, Features task_features, Stage stage, const std::string& skill,
                       Status status, double speedup, double parent_speedup) {
  ExperienceItem item;
  item.task = task;
  item.task_features = std::move(task_features);
  item.feedback = refine_feedback();
  if (stage == Stage::draft) item.feedback.labels["stage"] = "draft";
  item.stage = stage;
  item.skill = skill;
  item.edit = "llm_diff";
  item.status = status;
  item.compiled = status != Status::compile_error;
  item.correct = status == Status::ok;
  item.speedup = speedup;
  item.parent_speedup = parent_speedup;
  return item;
}

std::string scratch_file(const std::string& name) {
  const auto path = std::filesystem::temp_directory_path() / ("kernelsmith-experience-" + name + ".db");
  std::filesystem::remove(path);
  std::filesystem::remove(path.string() + "-wal");
  std::filesystem::remove(path.string() + "-shm");
  return path.string();
}

ExperienceQuery query_for(Features task_features, Stage stage, std::size_t count, std::uint64_t seed = 0) {
  ExperienceQuery query;
  query.task = task_features.label("task").value_or("");
  query.task_features = std::move(task_features);
  query.feedback = refine_feedback();
  query.stage = stage;
  query.count = count;
  query.seed = seed;
  return query;
}

std::vector<std::int64_t> ids(const std::vector<RetrievedItem>& retrieved) {
  std::vector<std::int64_t> result;
  for (const auto& entry : retrieved) result.push_back(entry.item.id);
  return result;
}

}  // namespace

TEST_CASE("experience: rewards per stage", "[experience]") {
  CHECK(experience_reward(Stage::draft, Status::ok, 0.5, 0.0) == 1.0);
  CHECK(experience_reward(Stage::draft, Status::incorrect, 0.0, 0.0) == 0.0);
  CHECK(experience_reward(Stage::draft, Status::compile_error, 0.0, 0.0) == 0.0);
  CHECK(experience_reward(Stage::refine, Status::ok, 2.0, 1.0) == Approx(1.0));
  CHECK(experience_reward(Stage::refine, Status::ok, 1.5, 1.0) == Approx(std::log2(1.5)));
  CHECK(experience_reward(Stage::refine, Status::ok, 0.5, 1.0) == Approx(-1.0));
  CHECK(experience_reward(Stage::refine, Status::ok, 8.0, 1.0) == Approx(1.0));  // clamped
  CHECK(experience_reward(Stage::refine, Status::incorrect, 0.0, 1.0) == -1.0);
  CHECK(to_string(Stage::refine) == "refine");
  CHECK(parse_stage("draft") == Stage::draft);
  CHECK(contains(error_of([] { parse_stage("polish"); }), "expected draft or refine"));
  Evaluation ok;
  ok.status = Status::ok;
  CHECK(stage_of(ok) == Stage::refine);
  CHECK(stage_of(std::nullopt) == Stage::draft);
}

TEST_CASE("experience: record credits the step's own items, then its ancestors' with discount^k", "[experience]") {
  ExperienceMemoryOptions options;
  options.discount = 0.5;
  options.horizon = 1;
  ExperienceMemory memory("", options);
  const auto a = memory.record(item_of("relu", elementwise_task(), Stage::refine, "vectorize_memory_access",
                                       Status::ok, 2.0, 1.0));
  const auto b = memory.record(item_of("relu", elementwise_task(), Stage::refine, "fuse_kernels", Status::incorrect,
                                       0.0, 1.0));
  // Its own reward is each item's first credit, in its stage.
  CHECK(memory.item(a)->refine.value == Approx(1.0));
  CHECK(memory.item(a)->refine.credits == 1);
  CHECK(memory.item(a)->reward == Approx(1.0));
  CHECK(memory.item(b)->refine.value == Approx(-1.0));
  CHECK(memory.item(a)->draft.credits == 0);

  // A step whose prompt held b (weight 1), whose parent's step held a (weight 0.5), whose grandparent's
  // held a again (beyond the horizon): reward log2(1.2/1.0).
  const double reward = std::log2(1.2);
  const auto c = memory.record(
      item_of("relu", elementwise_task(), Stage::refine, "coalesce_memory_access", Status::ok, 1.2, 1.0),
      {{b, 999}, {a}, {a}});
  const ExperienceItem after_b = *memory.item(b);
  CHECK(after_b.refine.credits == 2);
  CHECK(after_b.refine.weight == Approx(2.0));
  CHECK(after_b.refine.value == Approx((-1.0 + reward) / 2.0));
  const ExperienceItem after_a = *memory.item(a);
  CHECK(after_a.refine.credits == 2);
  CHECK(after_a.refine.weight == Approx(1.5));
  CHECK(after_a.refine.value == Approx((1.0 + 0.5 * reward) / 1.5));
  CHECK(memory.item(c)->refine.value == Approx(reward));
  CHECK(memory.size() == 3);

  CHECK(memory.credit(a, Stage::draft, 1.0, 2.0));
  CHECK(memory.item(a)->draft.value == Approx(1.0));
  CHECK(memory.item(a)->draft.weight == Approx(2.0));
  CHECK_FALSE(memory.credit(12345, Stage::draft, 1.0));
}

TEST_CASE("experience: retrieval ranks skills by the outcomes of their items near the query", "[experience]") {
  ExperienceMemory memory;
  const auto good = memory.record(item_of("relu", elementwise_task(), Stage::refine, "vectorize_memory_access",
                                          Status::ok, 1.8, 1.0));
  const auto good_twin = memory.record(item_of("relu", elementwise_task(), Stage::refine, "vectorize_memory_access",
                                               Status::ok, 1.6, 1.0));
  const auto slower = memory.record(item_of("relu", elementwise_task(), Stage::refine, "vectorize_memory_access",
                                            Status::ok, 0.9, 1.0));
  const auto bad = memory.record(item_of("relu", elementwise_task(), Stage::refine, "tile_in_shared_memory",
                                         Status::ok, 0.6, 1.0));
  const auto far = memory.record(item_of("matmul", matmul_task(), Stage::refine, "register_tiling", Status::ok, 1.8,
                                         1.0));
  ValueRetrieverOptions options;
  options.epsilon = 0.0;
  auto retriever = std::make_shared<ValueRetriever>(options);
  memory.set_retriever(retriever);
  const ExperienceQuery query = query_for(elementwise_task(), Stage::refine, 3);
  const auto found = memory.retrieve(query);
  // One entry per skill, shown by its closest item (the oldest among equals). The skill's value is the mean of
  // its three outcomes here, shrunk toward the refine prior (0) by one credit's weight.
  REQUIRE(found.size() == 3);
  CHECK(ids(found) == std::vector<std::int64_t>{good, far, bad});
  const double vectorize = (std::log2(1.8) + std::log2(1.6) + std::log2(0.9)) / 4.0;
  CHECK(found[0].retrieval.value == Approx(vectorize));
  CHECK(found[0].retrieval.value == Approx(retriever->skill_estimate(query, "vectorize_memory_access", memory.items())));
  CHECK(found[0].retrieval.skill == "vectorize_memory_access");
  CHECK(found[0].retrieval.similarity == Approx(1.0));
  // The other task's skill counts for little (similarity about 0.5, to the power 4) but beats a skill that made
  // this task slower.
  CHECK(found[1].retrieval.similarity < 0.6);
  CHECK(found[1].retrieval.value > 0.0);
  CHECK(found[1].retrieval.value < 0.1);
  CHECK(found[2].retrieval.value == Approx(std::log2(0.6) / 2.0));
  for (const auto& entry : found) {
    CHECK(entry.retrieval.item == entry.item.id);
    CHECK_FALSE(entry.retrieval.explored);
    CHECK(entry.retrieval.score == Approx(entry.retrieval.value + 0.25 * entry.retrieval.similarity));
  }
  CHECK(found[0].retrieval.score >= found[1].retrieval.score);
  CHECK(found[1].retrieval.score >= found[2].retrieval.score);

  // Ranked item by item, each on its own value, the luckier twin and the far item come before the slower one.
  options.by_skill = false;
  memory.set_retriever(std::make_shared<ValueRetriever>(options));
  CHECK(ids(memory.retrieve(query_for(elementwise_task(), Stage::refine, 4))) ==
        std::vector<std::int64_t>{good, good_twin, far, slower});

  // A similarity floor keeps the other task out.
  options.by_skill = true;
  options.min_similarity = 0.6;
  memory.set_retriever(std::make_shared<ValueRetriever>(options));
  for (const auto& entry : memory.retrieve(query_for(elementwise_task(), Stage::refine, 5))) {
    CHECK(entry.item.id != far);
  }
  // null restores the default.
  memory.set_retriever(nullptr);
  CHECK(memory.retriever()->name() == "value");
}

TEST_CASE("experience: items learned on one task are retrieved for a similar one, not a dissimilar one",
          "[experience]") {
  ExperienceMemory memory;
  ValueRetrieverOptions options;
  options.epsilon = 0.0;
  options.min_similarity = 0.6;
  memory.set_retriever(std::make_shared<ValueRetriever>(options));
  const auto learned = memory.record(item_of("relu", elementwise_task(), Stage::refine, "vectorize_memory_access",
                                             Status::ok, 1.5, 1.0));
  Features gelu = elementwise_task(8.4e6);
  gelu.labels["task"] = "gelu";
  gelu.numbers["task_intensity"] = 0.9;
  const auto for_gelu = memory.retrieve(query_for(gelu, Stage::refine, 3));
  REQUIRE(for_gelu.size() == 1);
  CHECK(for_gelu[0].item.id == learned);
  CHECK(for_gelu[0].item.task == "relu");
  CHECK(for_gelu[0].retrieval.similarity > 0.7);
  CHECK(memory.retrieve(query_for(matmul_task(), Stage::refine, 3)).empty());
}

TEST_CASE("experience: epsilon-greedy exploration is deterministic under a seed", "[experience]") {
  ExperienceMemory memory;
  for (int i = 0; i < 12; ++i) {
    memory.record(item_of("relu", elementwise_task(), Stage::refine, "skill_" + std::to_string(i), Status::ok,
                          1.0 + 0.05 * i, 1.0));
  }
  ValueRetrieverOptions options;
  options.epsilon = 0.5;
  memory.set_retriever(std::make_shared<ValueRetriever>(options));
  const auto first = memory.retrieve(query_for(elementwise_task(), Stage::refine, 3, 42));
  const auto again = memory.retrieve(query_for(elementwise_task(), Stage::refine, 3, 42));
  CHECK(ids(first) == ids(again));
  // Over many seeds, some picks are explorations and the greedy answer is not always the answer.
  std::set<std::vector<std::int64_t>> answers;
  int explored = 0;
  for (std::uint64_t seed = 0; seed < 40; ++seed) {
    const auto found = memory.retrieve(query_for(elementwise_task(), Stage::refine, 3, seed));
    answers.insert(ids(found));
    for (const auto& entry : found) explored += entry.retrieval.explored ? 1 : 0;
  }
  CHECK(answers.size() > 5);
  CHECK(explored > 20);
  CHECK(explored < 100);  // about half of 120 picks
  // Epsilon 0: always the greedy answer.
  options.epsilon = 0.0;
  memory.set_retriever(std::make_shared<ValueRetriever>(options));
  std::set<std::vector<std::int64_t>> greedy;
  for (std::uint64_t seed = 0; seed < 10; ++seed) {
    greedy.insert(ids(memory.retrieve(query_for(elementwise_task(), Stage::refine, 3, seed))));
  }
  CHECK(greedy.size() == 1);
  CHECK(contains(error_of([] { ValueRetrieverOptions bad; bad.epsilon = 1.5; ValueRetriever r(bad); }),
                 "epsilon = 1.5 is outside [0, 1]"));
}

TEST_CASE("experience: the estimate shrinks a few lucky outcomes toward the stage's prior", "[experience]") {
  ValueRetriever retriever;
  ExperienceItem item;
  CHECK(retriever.estimate(item, Stage::draft) == Approx(0.5));
  CHECK(retriever.estimate(item, Stage::refine) == Approx(0.0));
  item.draft = {1.0, 1.0, 1};
  CHECK(retriever.estimate(item, Stage::draft) == Approx(0.75));
  item.draft = {1.0, 9.0, 9};
  CHECK(retriever.estimate(item, Stage::draft) == Approx(0.95));
}

TEST_CASE("experience: a memory file keeps items across opens, and two memories on it both count", "[experience]") {
  const std::string path = scratch_file("shared");
  std::int64_t id = 0;
  {
    ExperienceMemory memory(path);
    id = memory.record(item_of("relu", elementwise_task(), Stage::draft, "cover_every_output", Status::ok, 1.0, 0.0));
    CHECK(memory.path() == path);
  }
  ExperienceMemory first(path);
  ExperienceMemory second(path);
  REQUIRE(first.size() == 1);
  const ExperienceItem stored = *first.item(id);
  CHECK(stored.task == "relu");
  CHECK(stored.skill == "cover_every_output");
  CHECK(stored.stage == Stage::draft);
  CHECK(stored.task_features.number("task_intensity") == std::optional<double>(0.125));
  CHECK(stored.feedback.label("stage") == std::optional<std::string>("draft"));
  CHECK(stored.draft.value == Approx(1.0));
  // Credits from both memories land in the file; each reads back the merged value.
  CHECK(first.credit(id, Stage::draft, 0.0));
  CHECK(second.credit(id, Stage::draft, 0.0));
  CHECK(second.item(id)->draft.credits == 3);
  CHECK(second.item(id)->draft.value == Approx(1.0 / 3.0));
  // An item the other memory adds shows after reload().
  second.record(item_of("gelu", elementwise_task(), Stage::refine, "fuse_kernels", Status::ok, 1.1, 1.0));
  CHECK(first.size() == 1);
  first.reload();
  CHECK(first.size() == 2);
  // Edits and removals reach the file.
  ExperienceItem edited = *first.item(id);
  edited.note = "edited by hand";
  first.update(edited);
  CHECK(ExperienceMemory(path).item(id)->note == "edited by hand");
  CHECK(first.remove(id));
  CHECK_FALSE(first.remove(id));
  CHECK_FALSE(ExperienceMemory(path).item(id).has_value());
  CHECK(contains(error_of([&] { first.update(edited); }), "has no item"));
  first.clear();
  CHECK(ExperienceMemory(path).size() == 0);
}

TEST_CASE("experience: a file that is not a memory is refused", "[experience]") {
  const std::string path = scratch_file("foreign");
  {
    detail::SqliteDatabase db(path, false, true);
    db.execute("CREATE TABLE something (x INTEGER)");
  }
  CHECK(contains(error_of([&] { ExperienceMemory memory(path); }), "not an experience memory"));
  CHECK(contains(error_of([] {
                   ExperienceMemoryOptions options;
                   options.discount = 2.0;
                   ExperienceMemory memory("", options);
                 }),
                 "discount = 2 is outside [0, 1]"));
}

TEST_CASE("experience: over max_items the least credited item goes", "[experience]") {
  ExperienceMemoryOptions options;
  options.max_items = 3;
  ExperienceMemory memory("", options);
  const auto a = memory.record(item_of("relu", elementwise_task(), Stage::refine, "a", Status::ok, 1.1, 1.0));
  const auto b = memory.record(item_of("relu", elementwise_task(), Stage::refine, "b", Status::ok, 1.1, 1.0), {{a}});
  const auto c = memory.record(item_of("relu", elementwise_task(), Stage::refine, "c", Status::ok, 1.1, 1.0), {{a}});
  const auto d = memory.record(item_of("relu", elementwise_task(), Stage::refine, "d", Status::ok, 1.1, 1.0));
  CHECK(memory.size() == 3);
  CHECK(memory.item(a).has_value());   // credited three times
  CHECK_FALSE(memory.item(b).has_value());  // the oldest of the least credited
  CHECK(memory.item(c).has_value());
  CHECK(memory.item(d).has_value());  // the new one always stays
}

TEST_CASE("experience: a lesson says the situation, the skill and what came of it", "[experience]") {
  ExperienceItem refine = item_of("relu", elementwise_task(), Stage::refine, "vectorize_memory_access", Status::ok,
                                  1.5, 1.2);
  refine.feedback.numbers["sol_fraction"] = 0.3;
  CHECK(refine.lesson() ==
        "On task relu (0.125 FLOP/B, float32), a correct parent at 1.2x (30% of the hardware limit): skill "
        "vectorize_memory_access (llm_diff) -> 1.2x -> 1.5x (+25%).");
  ExperienceItem draft = item_of("softmax", Features{}, Stage::draft, "unspecified", Status::incorrect, 0.0, 0.0);
  draft.feedback.labels["failure"] = "non_finite";
  draft.note = "output y: 3 non-finite values";
  CHECK(draft.lesson() ==
        "On task softmax, a parent that failed (non_finite): a change naming no skill (llm_diff) -> still failing: "
        "incorrect, output y: 3 non-finite values.");
  CHECK(refine.gain() == Approx(0.25));
}

TEST_CASE("experience: a retriever of one's own replaces the ranking", "[experience]") {
  // Retrieves the most recent items, whatever their value.
  class Newest : public Retriever {
   public:
    std::vector<RetrievedItem> retrieve(const ExperienceQuery& query, const std::vector<ExperienceItem>& items) override {
      std::vector<RetrievedItem> found;
      for (auto it = items.rbegin(); it != items.rend() && found.size() < query.count + 2; ++it) {
        found.push_back({*it, Retrieval{}});
      }
      return found;
    }
    std::string name() const override { return "newest"; }
  };
  ExperienceMemory memory;
  std::vector<std::int64_t> added;
  for (int i = 0; i < 4; ++i) {
    added.push_back(memory.record(item_of("relu", elementwise_task(), Stage::refine, "s", Status::ok, 1.0, 1.0)));
  }
  memory.set_retriever(std::make_shared<Newest>());
  const auto found = memory.retrieve(query_for(elementwise_task(), Stage::refine, 2));
  CHECK(ids(found) == std::vector<std::int64_t>{added[3], added[2]});  // cut to query.count
  CHECK(found[0].retrieval.item == added[3]);  // the id is filled in
  CHECK(memory.retriever()->name() == "newest");
}
