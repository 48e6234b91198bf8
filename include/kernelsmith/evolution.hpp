// Evolution: the loop. Picks parents and inspirations, keeps several mutations in flight on a thread
// pool, evaluates their candidates in batches (the built-in evaluator compiles a batch in parallel and
// times it one candidate at a time), records every step in the run store before using it, and stops by
// its rules or on stop(). A run resumes from its store after a crash. docs/search.md explains it.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "kernelsmith/archive.hpp"
#include "kernelsmith/device.hpp"
#include "kernelsmith/evaluator.hpp"
#include "kernelsmith/experience.hpp"
#include "kernelsmith/export.hpp"
#include "kernelsmith/mutator.hpp"
#include "kernelsmith/novelty.hpp"
#include "kernelsmith/population.hpp"
#include "kernelsmith/task.hpp"

namespace kernelsmith {

/// What a language model charges per 1,000 tokens (any currency, the same for every model of a run).
struct LlmPrice {
  double prompt_per_1k = 0.0;
  double completion_per_1k = 0.0;
};

/// What a run has spent on a language model: its steps whose proposal came from a model call (a recorded
/// prompt), the tokens the endpoint reported (`usage`) and their cost at EvolutionConfig::llm_prices.
struct LlmSpend {
  std::int64_t calls = 0;
  std::int64_t prompt_tokens = 0;
  std::int64_t completion_tokens = 0;
  double cost = 0.0;
  std::int64_t tokens() const { return prompt_tokens + completion_tokens; }
};

struct KERNELSMITH_API EvolutionConfig {
  // Islands, population and parent selection.
  int islands = 2;
  std::size_t island_capacity = 1000;
  SelectionConfig selection;

  // Archive, migration, novelty.
  std::vector<FeatureDescriptor> features = default_feature_descriptors();
  std::size_t elite_count = 16;
  MigrationConfig migration;
  NoveltyConfig novelty;

  // Mutation requests.
  /// Programs shown next to the parent.
  int inspirations = 4;
  /// Chance that a request carries a second parent (an inspiration) for crossover.
  double crossover_rate = 0.1;
  /// Recent attempts on the same parent passed as short-term memory.
  int memory = 5;
  /// Experience items retrieved from the experience memory into each mutation request (docs/memory.md); 0
  /// retrieves none, though the run still records what each step taught.
  int experience = 3;
  /// A SQLite file holding an experience memory shared across runs and tasks (created when missing); empty: the
  /// run's memory lives in the process, and a resume rebuilds it from the store. Evolution::set_memory
  /// overrides it.
  std::string memory_path;
  /// Mutations proposed concurrently (threads calling Mutator::propose); a batch to evaluate holds at most
  /// this many candidates. 1 makes a run reproducible under a seed with a deterministic mutator and
  /// evaluator. 0: twice the evaluator's concurrency(), so that an evaluator over several devices or Ray
  /// actors has a candidate waiting for each (docs/distributed.md).
  int mutations_in_flight = 1;

  // Stop rules (0 disables a rule; the budget is required).
  /// Evaluations in the run, the reference and the seeds included; a resumed run counts its earlier ones. The
  /// strict confirmations of would-be leaders are not counted (at most one per candidate: docs/search.md,
  /// "Confirmation").
  std::int64_t budget = 100;
  double wall_seconds = 0.0;
  double target_speedup = 0.0;
  /// Evaluations in a row without a better best program.
  std::int64_t stagnation = 0;
  /// Proposals in a row that yield nothing to evaluate (mutator failures, duplicates): the mutator has
  /// run out of ideas. (A run also stops, at once, when no program is left that the mutator can work
  /// from: see Mutator::can_mutate and Proposal::exhausted_ids.)
  std::int64_t max_failed_proposals = 100;
  /// Caps on what the run may spend on a language model (0: no cap; docs/llm.md, "Budgets"): model calls,
  /// tokens (prompt plus completion, as the endpoint reported them) and cost (at llm_prices). A resumed run
  /// counts its earlier steps. A call starts only while every cap has room; calls in flight when a cap is
  /// reached finish and are kept. The run then stops with "llm_budget", and can go on with a resume under a
  /// larger cap.
  std::int64_t max_llm_calls = 0;
  std::int64_t max_llm_tokens = 0;
  double max_llm_cost = 0.0;
  /// Prices per 1,000 tokens by model name; "*" prices every model not named. max_llm_cost needs a price for
  /// the run's models.
  std::map<std::string, LlmPrice> llm_prices;
  /// The cost of one model call at llm_prices (the model's price, else "*"'s, else 0).
  double llm_cost(const std::string& model, std::int64_t prompt_tokens, std::int64_t completion_tokens) const;

  // Reproducibility and storage.
  std::uint64_t seed = 0;
  /// SQLite file of the run; ":memory:" keeps it in memory (nothing survives the process).
  std::string db_path = ":memory:";
  /// Continue the latest run of the task in db_path (a fresh run when there is none).
  bool resume = false;
  /// Kernel language of the candidates the mutators write; empty: the evaluator's backend's ("cuda",
  /// "opencl"), else the task's first. "triton" on the cuda backend evolves Triton candidates: the run starts
  /// from the task's CUDA reference (the baseline of every speedup) and its Triton seed
  /// (Task::seeds["triton"]); every mutation request asks for Triton (MutationRequest::language). A language
  /// whose backend (language.hpp) is not the evaluator's is a ValidationError at run(); an evaluator whose
  /// backend no language runs on takes any language. The run store records it (RunInfo::language).
  std::string language;
  /// Device attributes for the mutators' constraints; empty backend: looked up from devices() by the
  /// evaluator's backend and device names.
  DeviceInfo device;
  /// The run file that describes the run as its caller started it, a JSON object (`kernelsmith evolve --config`
  /// writes its effective settings here, command-line flags applied; docs/cli.md#run-files); empty: none. Stored
  /// with the run (RunInfo::config_json) so that the run can be started again; the engine never reads it.
  std::string run_file;

  /// Throws ValidationError naming the field.
  void validate() const;
  /// The settings as JSON (custom feature and embedding functions by name only).
  std::string to_json() const;
  /// Reads what to_json() writes; missing fields keep their defaults. Throws ValidationError.
  static EvolutionConfig from_json(const std::string& json_text);
};

/// What the engine reports after each step.
struct Progress {
  std::int64_t run_id = 0;
  std::int64_t evaluations = 0;  ///< in the run so far
  std::int64_t budget = 0;
  std::int64_t steps = 0;        ///< in this session
  std::int64_t failed_proposals = 0;
  std::int64_t duplicates = 0;   ///< exact and near duplicates rejected
  double elapsed_seconds = 0.0;
  std::string best_program_id;
  double best_fitness = 0.0;
  double best_speedup = 0.0;
  // The step just recorded.
  std::string program_id;  ///< empty for a proposal that yielded no candidate
  std::string mutation;
  int island = 0;
  Status status = Status::ok;
  double speedup = 0.0;
  std::string message;  ///< the evaluation's message, or why there was no candidate
  /// The confirmation the step's program needed before it could lead the run (docs/search.md, "Confirmation"):
  /// "confirmed" (its strict evaluation holds, and is the program's standing now), "refuted" (the strict
  /// evaluation failed or is still in doubt: the program does not lead), "unconfirmed" (a deadline, stop() or the
  /// wall time, came before it could be confirmed: it keeps its screening and does not lead), or empty when none
  /// was needed.
  std::string confirmation;
  /// The best program is new. The best is always a confirmed program (or one whose evaluation needs no
  /// confirmation).
  bool improved = false;
  /// What the run has spent on a language model so far, earlier sessions included.
  LlmSpend llm_spend;
};

struct EvolutionResult {
  std::int64_t run_id = 0;
  std::string db_path;
  /// "budget", "wall_time", "target_speedup", "stagnation", "stopped", "no_new_candidates", "llm_budget". The
  /// store marks the run "stopped" for "stopped", "wall_time" and "llm_budget" (it can go on with a resume),
  /// "finished" else.
  std::string stop_reason;
  /// The stop reason in words where the reason alone does not say enough: for "no_new_candidates",
  /// whether the proposals kept failing or no program was left that the mutator could work from (and
  /// why). Empty otherwise.
  std::string stop_detail;
  /// The best confirmed program (docs/search.md, "Confirmation"): never one whose standing is a screen-mode
  /// or doubt-flagged evaluation.
  std::optional<Program> best;
  double best_speedup = 0.0;
  /// Evaluations in the run, earlier sessions included: one per candidate (a confirmation is not counted here,
  /// nor in the budget).
  std::int64_t evaluations = 0;
  /// Strict confirmations run in this session, and those that refuted their screening (the program does not lead).
  std::int64_t confirmations = 0;
  std::int64_t refuted = 0;
  /// Would-be leaders left unconfirmed because a deadline (stop(), the wall time) had come: they do not lead.
  std::int64_t unconfirmed = 0;
  /// Pending children that a resume recorded `crashed` instead of evaluating them again: their evaluation had
  /// started in an earlier session and never finished (docs/search.md, "Resume").
  std::int64_t crashed_on_resume = 0;
  std::int64_t session_evaluations = 0;  ///< in this call to run()
  std::int64_t steps = 0;
  std::int64_t failed_proposals = 0;
  std::int64_t duplicates = 0;
  std::int64_t near_duplicates = 0;
  std::int64_t migrations = 0;
  /// Proposals whose parent came from another island, because the island whose turn it was had no
  /// program the mutator could work from (Mutator::can_mutate, Proposal::exhausted_ids).
  std::int64_t parent_fallbacks = 0;
  std::int64_t pending = 0;  ///< stored candidates left unevaluated (resume evaluates them)
  /// Proposals whose mutator call was still running when a deadline (stop(), the wall time) ended the
  /// run: cancelled, and recorded as steps with `abandoned_by` set (Mutator::cancel).
  std::int64_t abandoned = 0;
  /// What the run spent on a language model, earlier sessions included (EvolutionConfig::max_llm_calls, ...).
  LlmSpend llm_spend;
  double wall_seconds = 0.0;
  double evaluator_seconds = 0.0;  ///< inside Evaluator::evaluate_batch
  double mutator_seconds = 0.0;    ///< inside Mutator::propose, summed over threads
  double store_seconds = 0.0;      ///< writing the run store
  /// The engine's own share of the wall time: 1 - (evaluator + mutator) / wall. Meaningful with one
  /// mutation in flight (with more, mutator time overlaps).
  double engine_share = 0.0;
};

using ProgressCallback = std::function<void(const Progress&)>;

class KERNELSMITH_API Evolution {
 public:
  /// Throws ValidationError for a bad config or a null evaluator or mutator.
  Evolution(Task task, std::shared_ptr<Evaluator> evaluator, std::shared_ptr<Mutator> mutator,
            EvolutionConfig config = {});
  ~Evolution();
  Evolution(const Evolution&) = delete;
  Evolution& operator=(const Evolution&) = delete;

  /// Called on the thread that runs run(), after each step is stored. An exception from it ends the
  /// run (status "failed") and leaves run().
  void on_progress(ProgressCallback callback);

  /// The evaluator that confirms, in strict mode, a candidate about to lead the run (become its best, enter the
  /// elite set or its island's top programs) whose evaluation was a screening or carries a flag that casts doubt
  /// on it (docs/search.md, "Confirmation"). Null (the default): the run's evaluator's confirm_batch(), which for
  /// the built-in evaluator in screen mode is a strict twin of it. Set it before run() (Error while running).
  void set_confirmer(std::shared_ptr<Evaluator> confirmer);

  /// The experience memory the run learns into and retrieves from (docs/memory.md); null: one opened from
  /// config.memory_path at run(), else one in the process. Set it before run() (Error while running). An
  /// exception from its retriever ends the run like one from the evaluator.
  void set_memory(std::shared_ptr<ExperienceMemory> memory);
  /// The memory set, or the one the last run() used; null before the first run() when none was set.
  std::shared_ptr<ExperienceMemory> memory() const;

  /// Runs until a stop rule holds. Throws what the evaluator throws (a broken backend: the store keeps
  /// the run as "failed", resumable), StoreError, ValidationError for a task with no reference in the
  /// language. Throws Error when already running.
  EvolutionResult run();

  /// Asks a running run() to stop: no new proposals or evaluations start; the mutator calls in flight
  /// are cancelled (Mutator::cancel), and those not back within 2 s are recorded as abandoned steps and
  /// left behind, so run() returns within a few seconds (an evaluation in progress finishes first).
  /// Candidates already proposed stay pending for a resume. The wall time ends a run the same way.
  /// Thread-safe; returns at once.
  void stop();
  bool running() const;
  bool stop_requested() const;

  /// The run's id in the store (0 before run()).
  std::int64_t run_id() const;
  const EvolutionConfig& config() const;
  const Task& task() const;
  /// The search state; read it when run() is not running.
  const IslandPopulation& population() const;
  const MapElitesArchive& archive() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace kernelsmith
