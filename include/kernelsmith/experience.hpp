// Experience memory: what each step of a search did and what came of it, with a value per stage learned from
// the outcomes it led to (EvoKernel's experience items; docs/memory.md). The engine records one item per
// evaluated child (the task's and the parent's features, the skill the mutator says it applied, the edit
// kind, the outcome), retrieves the items that rank best by value and similarity into each mutation request
// (MutationRequest::experience), and credits each retrieved item with the reward of the step whose prompt
// held it. A memory kept in a SQLite file is shared by runs, so items learned on one task are retrieved on
// another with similar features. The ranking is pluggable (Retriever, subclassable from Python).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "kernelsmith/candidate.hpp"
#include "kernelsmith/evaluation.hpp"
#include "kernelsmith/export.hpp"
#include "kernelsmith/features.hpp"

namespace kernelsmith {

/// What a step is for: make an incorrect parent correct (draft) or a correct one faster (refine).
enum class Stage { draft, refine };

KERNELSMITH_API std::string to_string(Stage stage);
/// "draft" or "refine"; throws ValidationError otherwise.
KERNELSMITH_API Stage parse_stage(const std::string& name);
/// The stage of a step from its parent's evaluation: refine when the parent is correct, draft else (also
/// without an evaluation).
KERNELSMITH_API Stage stage_of(const std::optional<Evaluation>& parent_evaluation);
/// The stage of a step from its parent: draft also when the parent is correct but has no kernel of its own (a
/// ModelNew that only calls PyTorch, such as the problem's Model a cold start begins with: has_custom_kernel),
/// since the step's work is then to write the first one; refine else.
KERNELSMITH_API Stage stage_of(const Candidate& parent, const std::optional<Evaluation>& parent_evaluation);

/// The reward of one step (docs/memory.md, "Values"): in draft, 1 when the child is correct and 0 else; in
/// refine, log2(child speedup / parent speedup) clamped to [-1, 1] for a correct child, -1 for one that broke.
KERNELSMITH_API double experience_reward(Stage stage, Status child_status, double child_speedup,
                                         double parent_speedup);

/// What an item learned in one stage: the weighted mean of the rewards credited to it there.
struct StageValue {
  double value = 0.0;         ///< the mean; meaningful once weight > 0
  double weight = 0.0;        ///< the credits' weights summed
  std::int64_t credits = 0;   ///< how many credits
};

/// One step's experience.
struct KERNELSMITH_API ExperienceItem {
  std::int64_t id = 0;  ///< in its memory; 0 before it is added
  std::string task;     ///< the task it was learned on
  Features task_features;
  /// The parent's features (feedback_features) and the request's (language, device).
  Features feedback;
  Stage stage = Stage::draft;
  /// The skill the mutator says it applied (its <skill> tag); "unspecified" when it named none.
  std::string skill = "unspecified";
  /// How the child was made: "llm_diff", "llm_full", "llm_crossover", "param", ...
  std::string edit;
  // The outcome.
  Status status = Status::ok;  ///< the child's
  bool compiled = false;
  bool correct = false;
  double speedup = 0.0;         ///< the child's speedup (0 unless correct)
  double parent_speedup = 0.0;  ///< the parent's (0 unless correct)
  std::string note;             ///< the child's evaluation message, cut to 200 characters
  /// experience_reward of its own step; ExperienceMemory::record sets it.
  double reward = 0.0;
  // What it learned.
  StageValue draft;
  StageValue refine;
  /// Where it was learned, e.g. "run 3 of runs.db, step 17".
  std::string origin;
  double created = 0.0;  ///< Unix seconds

  const StageValue& value(Stage which) const { return which == Stage::draft ? draft : refine; }
  StageValue& value(Stage which) { return which == Stage::draft ? draft : refine; }
  /// Child over parent speedup minus 1 when both are correct; 0 else.
  double gain() const;
  /// One sentence for a prompt: the task and the parent's situation, the skill and the edit, what came of it.
  std::string lesson() const;
};

/// What to retrieve for: a request's task, its parent's feedback and the stage.
struct ExperienceQuery {
  std::string task;
  Features task_features;
  Features feedback;
  Stage stage = Stage::draft;
  std::size_t count = 3;
  /// The retriever's random draws are a function of it: the same query over the same items gives the same
  /// answer (the engine passes each request's seed).
  std::uint64_t seed = 0;
};

/// Why an item was retrieved: what the prompt shows and the run store records (steps.retrieved).
struct Retrieval {
  std::int64_t item = 0;
  /// The item's skill: a step that applies it follows the item, and credits it with its reward.
  std::string skill;
  double score = 0.0;
  /// The estimated value in the query's stage: of the item's skill near the query (ValueRetriever ranking by
  /// skill), or of the item alone.
  double value = 0.0;
  double similarity = 0.0;  ///< of the item's task and feedback features to the query's, in [0, 1]
  bool explored = false;    ///< drawn at random (epsilon) rather than by score
};

struct RetrievedItem {
  ExperienceItem item;
  Retrieval retrieval;
};

/// Ranks items for a query. Subclass it (in C++ or Python) to plug in your own retrieval.
class KERNELSMITH_API Retriever {
 public:
  virtual ~Retriever() = default;
  /// At most query.count items to show, best first, chosen from `items` (the memory's). Thread-safe; must not
  /// call back into the memory that calls it.
  virtual std::vector<RetrievedItem> retrieve(const ExperienceQuery& query,
                                              const std::vector<ExperienceItem>& items) = 0;
  virtual std::string name() const = 0;
};

struct ValueRetrieverOptions {
  /// score = value_weight * estimated value + similarity_weight * similarity.
  double value_weight = 1.0;
  double similarity_weight = 0.25;
  /// Chance, per slot, of a uniformly drawn candidate instead of the best-scoring one (epsilon-greedy).
  double epsilon = 0.1;
  /// Estimates shrink toward a prior: (sum of weighted values + prior * prior_weight) / (sum of weights +
  /// prior_weight). An optimistic draft prior makes skills not yet tried near the query worth a try.
  double draft_prior = 0.5;
  double refine_prior = 0.0;
  double prior_weight = 1.0;
  /// How sharply a skill's estimate favours close experience: an item counts with its credits' weight times
  /// similarity^similarity_power.
  double similarity_power = 4.0;
  /// Items less similar than this are never used.
  double min_similarity = 0.0;
  /// Rank skills rather than single items: each skill's value near the query is the similarity-weighted mean
  /// of all its items' values (many outcomes, not the luckiest one), and its closest item represents it, so a
  /// prompt shows different ideas. false: each item ranks by its own value.
  bool by_skill = true;
  /// Mixed with each query's seed.
  std::uint64_t seed = 0;
};

/// The built-in ranking (docs/memory.md, "Retrieval"): each skill's value in the query's stage, estimated from
/// the outcomes of its items near the query, plus how close its closest item is; epsilon-greedy exploration.
class KERNELSMITH_API ValueRetriever : public Retriever {
 public:
  /// Throws ValidationError for negative weights or power, epsilon or min_similarity outside [0, 1].
  explicit ValueRetriever(ValueRetrieverOptions options = {});
  std::vector<RetrievedItem> retrieve(const ExperienceQuery& query, const std::vector<ExperienceItem>& items) override;
  std::string name() const override { return "value"; }

  /// The item's own value in a stage, shrunk toward the stage's prior.
  double estimate(const ExperienceItem& item, Stage stage) const;
  /// A skill's value in the query's stage from the items given (those of other skills are ignored): their values
  /// weighted by credits and similarity^similarity_power, shrunk toward the prior.
  double skill_estimate(const ExperienceQuery& query, const std::string& skill,
                        const std::vector<ExperienceItem>& items) const;
  /// How alike the item's task and feedback are to the query's: the mean of the two feature_similarity values.
  static double similarity(const ExperienceQuery& query, const ExperienceItem& item);
  const ValueRetrieverOptions& options() const { return options_; }

 private:
  ValueRetrieverOptions options_;
};

struct ExperienceMemoryOptions {
  /// A step's reward is also credited to the items retrieved into the steps that made its parent, its
  /// grandparent, ... in the same stage, with weight discount^generations.
  double discount = 0.5;
  /// How many generations up are credited (0: only the items in the step's own prompt).
  int horizon = 2;
  /// Most items kept; when over, the least credited, then the oldest, goes. 0: no limit.
  std::size_t max_items = 5000;
};

/// The items and their values, in the process or in a SQLite file shared by runs. Thread-safe.
class KERNELSMITH_API ExperienceMemory {
 public:
  /// An empty memory in the process (`path` empty), or the one in a SQLite file, created when missing. Throws
  /// StoreError when the file cannot be opened or is not an experience memory, ValidationError for bad options.
  explicit ExperienceMemory(const std::string& path = "", ExperienceMemoryOptions options = {});
  ~ExperienceMemory();
  ExperienceMemory(const ExperienceMemory&) = delete;
  ExperienceMemory& operator=(const ExperienceMemory&) = delete;

  /// The file; empty for a memory in the process.
  const std::string& path() const;
  const ExperienceMemoryOptions& options() const;

  std::vector<ExperienceItem> items() const;
  std::optional<ExperienceItem> item(std::int64_t id) const;
  std::size_t size() const;

  /// Adds an item as it is, values included (its id is ignored); returns its id.
  std::int64_t add(ExperienceItem item);
  /// Replaces the item of the same id (an edited lesson, a reset value). Throws NotFoundError.
  void update(const ExperienceItem& item);
  bool remove(std::int64_t id);
  void clear();

  /// Learns from one step: sets the item's reward (experience_reward), adds it with that reward as its first
  /// credit in its stage, and credits the reward to the items the step followed (`credited[0]`, weight 1) and
  /// those the steps that made its parent, grandparent, ... followed (`credited[k]`, weight discount^k, for k up
  /// to horizon). The caller passes the items whose skill the step applied, of steps of the same stage (the
  /// engine's rule, docs/memory.md). Unknown ids are skipped. Returns the new item's id.
  std::int64_t record(ExperienceItem item, const std::vector<std::vector<std::int64_t>>& credited = {});
  /// Adds one credit to an item's value in a stage; false for an unknown id.
  bool credit(std::int64_t id, Stage stage, double reward, double weight = 1.0);

  /// The retriever's answer for the query (at most query.count items), each with the item as stored now.
  std::vector<RetrievedItem> retrieve(const ExperienceQuery& query) const;
  /// Replaces the ranking; null restores the built-in ValueRetriever.
  void set_retriever(std::shared_ptr<Retriever> retriever);
  std::shared_ptr<Retriever> retriever() const;

  /// Reads the file again, picking up what other processes wrote since it was opened (a memory in the process:
  /// nothing to do).
  void reload();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// The schema tag of experience memory files.
inline constexpr const char* kExperienceMemorySchema = "kernelsmith.memory/1";

}  // namespace kernelsmith
