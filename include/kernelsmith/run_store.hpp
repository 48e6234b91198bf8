// RunStore: a SQLite file holding runs: configuration, task, programs, evaluations, steps (prompt,
// response, parent, child, failure, timings), islands and migrations. Every write is committed before
// the engine uses what it wrote, so a run resumes after a crash; the file is in WAL mode, so Python's
// sqlite3 or pandas can read it while a run writes. The schema is in docs/run-store.md.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "kernelsmith/candidate.hpp"
#include "kernelsmith/evaluation.hpp"
#include "kernelsmith/experience.hpp"
#include "kernelsmith/export.hpp"
#include "kernelsmith/llm_attempt.hpp"

namespace kernelsmith {

/// The schema this build writes. It also reads versions 1 to 3, and upgrades such a file to this one
/// when it opens it for writing (docs/run-store.md#upgrading-an-older-store).
inline constexpr int kRunStoreSchemaVersion = 4;

struct RunInfo {
  std::int64_t id = 0;
  std::string task_name;
  std::string config_json;  ///< EvolutionConfig::to_json()
  std::string task_json;    ///< Task::to_json(), self-contained
  std::string language;
  std::string backend;
  std::string device;
  std::string mutator;
  std::uint64_t seed = 0;
  std::string library_version;
  double started = 0.0;   ///< Unix seconds
  double updated = 0.0;
  double finished = 0.0;  ///< 0 while running or after a crash
  std::string status = "running";  ///< "running", "finished", "stopped", "failed"
  std::string stop_reason;
  std::string error;
};

struct ProgramRecord {
  std::int64_t run = 0;
  std::string id;
  /// Language, source and lineage (parent ids, home island, generation, origin).
  Candidate candidate;
  std::string normalized_hash;
  double created = 0.0;
};

struct EvaluationRecord {
  std::int64_t id = 0;
  std::int64_t run = 0;
  std::string program_id;
  /// The engine's clock: 0 for the first evaluation of the run, then 1, 2, ...
  std::int64_t sequence = 0;
  Evaluation evaluation;
  double created = 0.0;
};

/// One step: a proposal made from parent(s), what the mutator said, and the child it led to (or why
/// it led to none). A step with a child and no evaluation yet is *pending*: resume evaluates it.
struct StepRecord {
  std::int64_t id = 0;
  std::int64_t run = 0;
  int island = 0;
  std::vector<std::string> parent_ids;
  std::string selection;  ///< how the parent was picked: "policy", "exploration", "exploitation", "repair", "seed"
  std::string mutation;   ///< "reference", "seed", "param", "llm_diff", ...
  std::vector<std::string> inspiration_ids;
  std::string prompt;
  std::string response;
  std::string model;
  std::int64_t prompt_tokens = 0;
  std::int64_t completion_tokens = 0;
  double latency_seconds = 0.0;
  std::string child_id;  ///< empty when the proposal produced no candidate or was rejected
  std::optional<std::int64_t> evaluation_id;
  std::string failure;   ///< why there is no child, in words (mutator failure, duplicate, near duplicate, ...)
  /// The program the proposal duplicates (novelty_kind "duplicate") or resembles most
  /// ("near_duplicate"); empty otherwise (NULL in the store).
  std::string duplicate_of;
  /// How the novelty filter judged the proposal: to_string(NoveltyVerdict::Kind), "novel", "duplicate"
  /// or "near_duplicate"; empty (NULL) when no program reached the filter.
  std::string novelty_kind;
  double propose_seconds = 0.0;
  double evaluate_seconds = 0.0;
  double created = 0.0;
  /// The stop reason ("wall_time", "stopped") of a run that ended while this proposal's mutator call was
  /// still running: the engine cancelled the call and recorded the step without waiting for it (or with
  /// what the cancelled call returned). Empty otherwise (NULL in the store; version 3).
  std::string abandoned_by;
  /// The HTTP attempts of the model call, in order (table llm_attempts; version 3).
  std::vector<LlmAttempt> llm_attempts;
  /// The skill the mutator says it applied (Proposal::skill); empty when it named none (NULL; version 4).
  std::string skill;
  /// The experience items retrieved into the step's request, best first, with their scores (version 4).
  std::vector<Retrieval> retrieved;

  bool pending() const { return !child_id.empty() && !evaluation_id && failure.empty(); }
};

struct MigrationRecord {
  std::int64_t id = 0;
  std::int64_t run = 0;
  std::string program_id;
  int from_island = 0;
  int to_island = 0;
  /// Evaluations done when it happened (the engine replays migrations at this point on resume).
  std::int64_t sequence = 0;
  double created = 0.0;
};

struct IslandRecord {
  std::int64_t run = 0;
  int island = 0;
  std::int64_t programs = 0;
  std::string best_program_id;
  double best_fitness = 0.0;
  double best_speedup = 0.0;
  double updated = 0.0;
};

/// One step's experience as the run recorded it (table experience; version 4): the item it added to the
/// experience memory (`item.id` is the item's id there), without the values the memory learns later.
struct ExperienceRecord {
  std::int64_t id = 0;
  std::int64_t run = 0;
  std::int64_t step = 0;
  ExperienceItem item;
};

/// A child's evaluation as it started (table evaluation_starts): committed before the evaluator sees the
/// child, so that a resume knows which pending child was being evaluated when the process ended.
struct EvaluationStart {
  std::int64_t run = 0;
  std::int64_t step = 0;
  std::string program_id;
  /// Candidates in the batch it was evaluated with (a crash of the process names none of them).
  std::int64_t batch = 1;
  /// Times its evaluation was started and never finished.
  std::int64_t attempts = 1;
  double started = 0.0;
};

/// One point of a run's history: an evaluation and the best speedup so far.
struct HistoryPoint {
  std::int64_t sequence = 0;
  std::string program_id;
  Status status = Status::ok;
  double speedup = 0.0;
  double best_speedup = 0.0;
};

class KERNELSMITH_API RunStore {
 public:
  /// Opens the file, creating it and the schema when missing (unless read_only); upgrades a file of versions 1
  /// to 3 to the current version unless read_only (a read-only store reads it as it is). Throws
  /// StoreError when it cannot be opened, holds a newer schema version or is not a run store.
  explicit RunStore(const std::string& path, bool read_only = false);
  ~RunStore();
  RunStore(const RunStore&) = delete;
  RunStore& operator=(const RunStore&) = delete;

  const std::string& path() const;
  bool read_only() const;
  /// The file's schema version: kRunStoreSchemaVersion, or the older version of a file opened read-only.
  int schema_version() const;

  // Runs.
  /// Inserts a run (status "running"); returns its id.
  std::int64_t create_run(const RunInfo& info);
  /// Sets status (and the reason / error); "finished", "stopped" and "failed" also set `finished`.
  void set_run_status(std::int64_t run, const std::string& status, const std::string& stop_reason = "",
                      const std::string& error = "");
  /// Throws NotFoundError for an unknown id.
  RunInfo run(std::int64_t run) const;
  std::vector<RunInfo> runs() const;
  /// The most recent run (of the task, when named), or none.
  std::optional<RunInfo> latest_run(const std::string& task_name = "") const;

  // Writes: each is one committed transaction when it returns.
  /// Inserts a program under `id` with its lineage. Throws StoreError when the id exists in the run.
  void add_program(std::int64_t run, const std::string& id, const Candidate& candidate,
                   const std::string& normalized_hash);
  /// Inserts a step with its LLM attempts (one transaction); returns its id.
  std::int64_t add_step(const StepRecord& step);
  /// Inserts an evaluation of a stored program and, in the same transaction, links the step that
  /// produced it (when given) and records the evaluation's time on it. Returns the evaluation id.
  /// Throws StoreError when the program is unknown or already evaluated in this run.
  std::int64_t add_evaluation(std::int64_t run, const std::string& program_id, std::int64_t sequence,
                              const Evaluation& evaluation, std::optional<std::int64_t> step_id = std::nullopt,
                              double evaluate_seconds = 0.0);
  /// Marks the evaluation of a pending step's child as started (evaluation_starts; committed when it returns),
  /// in a batch of `batch` candidates; marking it again counts another attempt.
  void start_evaluation(std::int64_t run, std::int64_t step_id, const std::string& program_id, std::int64_t batch);
  /// Takes back one start of the step's evaluation (the evaluator threw before it judged the child: no attempt).
  void forget_evaluation_start(std::int64_t step_id);
  /// Inserts a screen-mode evaluation superseded by its program's confirming evaluation (table screenings).
  std::int64_t add_screening(std::int64_t run, const std::string& program_id, std::int64_t sequence,
                             const Evaluation& evaluation, std::optional<std::int64_t> step_id = std::nullopt);
  /// Marks a pending step as not evaluated, with the reason.
  void fail_step(std::int64_t step_id, const std::string& failure);
  /// Records what a step taught the experience memory; returns the record's id.
  std::int64_t add_experience(std::int64_t run, std::int64_t step, const ExperienceItem& item);
  void add_migration(const MigrationRecord& migration);
  void update_island(const IslandRecord& island);

  // Reads.
  std::vector<ProgramRecord> programs(std::int64_t run) const;
  std::optional<ProgramRecord> program(std::int64_t run, const std::string& id) const;
  /// In evaluation order.
  std::vector<EvaluationRecord> evaluations(std::int64_t run) const;
  std::optional<EvaluationRecord> evaluation_of(std::int64_t run, const std::string& program_id) const;
  /// The run's screen-mode evaluations that confirmations superseded, in sequence order (none in a store
  /// written before confirmations existed).
  std::vector<EvaluationRecord> screenings(std::int64_t run) const;
  /// The evaluations of the run's children marked started, in step order.
  std::vector<EvaluationStart> evaluation_starts(std::int64_t run) const;
  /// In insertion order, each with its LLM attempts.
  std::vector<StepRecord> steps(std::int64_t run) const;
  /// Steps with a child and neither an evaluation nor a failure.
  std::vector<StepRecord> pending_steps(std::int64_t run) const;
  std::vector<MigrationRecord> migrations(std::int64_t run) const;
  std::vector<IslandRecord> islands(std::int64_t run) const;
  std::int64_t evaluation_count(std::int64_t run) const;
  /// The best correct evaluations (fitness, then sequence), best first.
  std::vector<EvaluationRecord> best(std::int64_t run, int count = 10) const;
  /// The program, its first parent, that one's first parent, ... back to a root.
  std::vector<ProgramRecord> lineage(std::int64_t run, const std::string& program_id) const;
  /// One point per evaluation, in order.
  std::vector<HistoryPoint> history(std::int64_t run) const;
  /// The run's experience records in the order they were made (none before version 4).
  std::vector<ExperienceRecord> experience(std::int64_t run) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// Unix time in seconds, as the store records it.
KERNELSMITH_API double unix_seconds();

}  // namespace kernelsmith
