#include "kernelsmith/evolution.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <exception>
#include <limits>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <thread>
#include <tuple>
#include <type_traits>
#include <unordered_map>
#include <unordered_set>

#include "detail/json_util.hpp"
#include "detail/random.hpp"
#include "kernelsmith/error.hpp"
#include "memory/experience_ledger.hpp"
#include "kernelsmith/language.hpp"
#include "kernelsmith/run_store.hpp"
#include "kernelsmith/version.hpp"

namespace kernelsmith {

// ---------------------------------------------------------------------------------------------------
// Configuration

void EvolutionConfig::validate() const {
  PopulationConfig population_config;
  population_config.islands = islands;
  population_config.selection = selection;
  population_config.validate();
  ArchiveConfig archive_config;
  archive_config.islands = islands;
  archive_config.features = features;
  archive_config.migration = migration;
  archive_config.validate();
  novelty.validate();
  if (inspirations < 0) throw ValidationError(fmt::format("inspirations = {} must be >= 0", inspirations));
  if (!(crossover_rate >= 0.0 && crossover_rate <= 1.0)) {
    throw ValidationError(fmt::format("crossover_rate = {} is outside [0, 1]", crossover_rate));
  }
  if (memory < 0) throw ValidationError(fmt::format("memory = {} must be >= 0", memory));
  if (experience < 0) throw ValidationError(fmt::format("experience = {} items must be >= 0 (0: none)", experience));
  if (mutations_in_flight < 0 || mutations_in_flight > 1024) {
    throw ValidationError(
        fmt::format("mutations_in_flight = {} must be in [0, 1024] (0: twice the evaluator's concurrency)",
                    mutations_in_flight));
  }
  if (budget < 1) throw ValidationError(fmt::format("budget = {} evaluations must be at least 1", budget));
  if (!(wall_seconds >= 0.0)) throw ValidationError(fmt::format("wall_seconds = {} must be >= 0 (0: no limit)", wall_seconds));
  if (!(target_speedup >= 0.0)) {
    throw ValidationError(fmt::format("target_speedup = {} must be >= 0 (0: no target)", target_speedup));
  }
  if (stagnation < 0) throw ValidationError(fmt::format("stagnation = {} must be >= 0 (0: no limit)", stagnation));
  if (max_failed_proposals < 1) {
    throw ValidationError(fmt::format("max_failed_proposals = {} must be at least 1", max_failed_proposals));
  }
  if (max_llm_calls < 0 || max_llm_tokens < 0 || !(max_llm_cost >= 0.0)) {
    throw ValidationError(fmt::format("max_llm_calls = {}, max_llm_tokens = {} and max_llm_cost = {} must be >= 0 "
                                      "(0: no cap)",
                                      max_llm_calls, max_llm_tokens, max_llm_cost));
  }
  for (const auto& [model, price] : llm_prices) {
    if (!(price.prompt_per_1k >= 0.0) || !(price.completion_per_1k >= 0.0)) {
      throw ValidationError(fmt::format("llm_prices['{}'] = ({}, {}) per 1k tokens must be >= 0", model,
                                        price.prompt_per_1k, price.completion_per_1k));
    }
  }
  if (max_llm_cost > 0.0 && llm_prices.empty()) {
    throw ValidationError(fmt::format("max_llm_cost = {} needs llm_prices (per 1k prompt and completion tokens, by "
                                      "model; \"*\" for any model)",
                                      max_llm_cost));
  }
  if (db_path.empty()) throw ValidationError("db_path is empty: give a file path, or \":memory:\"");
  if (!run_file.empty() && !detail::parse_plain_json(run_file, "run_file").is_object()) {
    throw ValidationError("run_file must be a JSON object of the run file's keys and values (or empty: none)");
  }
}

double EvolutionConfig::llm_cost(const std::string& model, std::int64_t prompt_tokens,
                                 std::int64_t completion_tokens) const {
  auto found = llm_prices.find(model);
  if (found == llm_prices.end()) found = llm_prices.find("*");
  if (found == llm_prices.end()) return 0.0;
  return (static_cast<double>(prompt_tokens) * found->second.prompt_per_1k +
          static_cast<double>(completion_tokens) * found->second.completion_per_1k) /
         1000.0;
}

std::string EvolutionConfig::to_json() const {
  nlohmann::json prices_json = nlohmann::json::object();
  for (const auto& [model, price] : llm_prices) {
    prices_json[model] = {{"prompt_per_1k", price.prompt_per_1k}, {"completion_per_1k", price.completion_per_1k}};
  }
  nlohmann::json features_json = nlohmann::json::array();
  for (const FeatureDescriptor& feature : features) {
    features_json.push_back({{"name", feature.name},
                             {"bins", feature.bins},
                             {"min", feature.min},
                             {"max", feature.max},
                             {"custom", static_cast<bool>(feature.compute)}});
  }
  nlohmann::json json = {
      {"islands", islands},
      {"island_capacity", island_capacity},
      {"selection",
       {{"policy", to_string(selection.policy)},
        {"tournament_size", selection.tournament_size},
        {"sharpness", selection.sharpness},
        {"power_law_alpha", selection.power_law_alpha},
        {"exploration_ratio", selection.exploration_ratio},
        {"exploitation_ratio", selection.exploitation_ratio},
        {"exploitation_top", selection.exploitation_top},
        {"repair_rate", selection.repair_rate}}},
      {"features", features_json},
      {"elite_count", elite_count},
      {"migration", {{"interval", migration.interval}, {"rate", migration.rate}}},
      {"novelty",
       {{"reject_near_duplicates", novelty.reject_near_duplicates},
        {"similarity_threshold", novelty.similarity_threshold},
        {"embedding_dimensions", novelty.embedding_dimensions},
        {"ngram", novelty.ngram},
        {"exempt_mutations", novelty.exempt_mutations},
        {"custom_embedding", static_cast<bool>(novelty.embedding)}}},
      {"inspirations", inspirations},
      {"crossover_rate", crossover_rate},
      {"memory", memory},
      {"experience", experience},
      {"memory_path", memory_path},
      {"mutations_in_flight", mutations_in_flight},
      {"budget", budget},
      {"wall_seconds", wall_seconds},
      {"target_speedup", target_speedup},
      {"stagnation", stagnation},
      {"max_failed_proposals", max_failed_proposals},
      {"max_llm_calls", max_llm_calls},
      {"max_llm_tokens", max_llm_tokens},
      {"max_llm_cost", max_llm_cost},
      {"llm_prices", prices_json},
      {"seed", seed},
      {"db_path", db_path},
      {"resume", resume},
      {"language", language},
      {"device", {{"backend", device.backend}, {"index", device.index}, {"name", device.name}}},
      {"run_file", run_file.empty() ? nlohmann::json::object() : detail::parse_plain_json(run_file, "run_file")},
  };
  return json.dump(2);
}

EvolutionConfig EvolutionConfig::from_json(const std::string& json_text) {
  EvolutionConfig config;
  try {
    const nlohmann::json json = detail::parse_plain_json(json_text, "<evolution config>");
    auto read = [&](const nlohmann::json& object, const char* key, auto& value) {
      if (object.contains(key)) value = object.at(key).get<std::decay_t<decltype(value)>>();
    };
    read(json, "islands", config.islands);
    read(json, "island_capacity", config.island_capacity);
    if (json.contains("selection")) {
      const auto& selection = json.at("selection");
      if (selection.contains("policy")) {
        config.selection.policy = parse_selection_policy(selection.at("policy").get<std::string>());
      }
      read(selection, "tournament_size", config.selection.tournament_size);
      read(selection, "sharpness", config.selection.sharpness);
      read(selection, "power_law_alpha", config.selection.power_law_alpha);
      read(selection, "exploration_ratio", config.selection.exploration_ratio);
      read(selection, "exploitation_ratio", config.selection.exploitation_ratio);
      read(selection, "exploitation_top", config.selection.exploitation_top);
      read(selection, "repair_rate", config.selection.repair_rate);
    }
    if (json.contains("features")) {
      config.features.clear();
      for (const auto& item : json.at("features")) {
        FeatureDescriptor feature;
        read(item, "name", feature.name);
        read(item, "bins", feature.bins);
        read(item, "min", feature.min);
        read(item, "max", feature.max);
        config.features.push_back(feature);
      }
    }
    read(json, "elite_count", config.elite_count);
    if (json.contains("migration")) {
      read(json.at("migration"), "interval", config.migration.interval);
      read(json.at("migration"), "rate", config.migration.rate);
    }
    if (json.contains("novelty")) {
      const auto& novelty = json.at("novelty");
      read(novelty, "reject_near_duplicates", config.novelty.reject_near_duplicates);
      read(novelty, "similarity_threshold", config.novelty.similarity_threshold);
      read(novelty, "embedding_dimensions", config.novelty.embedding_dimensions);
      read(novelty, "ngram", config.novelty.ngram);
      read(novelty, "exempt_mutations", config.novelty.exempt_mutations);
    }
    read(json, "inspirations", config.inspirations);
    read(json, "crossover_rate", config.crossover_rate);
    read(json, "memory", config.memory);
    read(json, "experience", config.experience);
    read(json, "memory_path", config.memory_path);
    read(json, "mutations_in_flight", config.mutations_in_flight);
    read(json, "budget", config.budget);
    read(json, "wall_seconds", config.wall_seconds);
    read(json, "target_speedup", config.target_speedup);
    read(json, "stagnation", config.stagnation);
    read(json, "max_failed_proposals", config.max_failed_proposals);
    read(json, "max_llm_calls", config.max_llm_calls);
    read(json, "max_llm_tokens", config.max_llm_tokens);
    read(json, "max_llm_cost", config.max_llm_cost);
    if (json.contains("llm_prices")) {
      for (const auto& [model, price] : json.at("llm_prices").items()) {
        LlmPrice entry;
        read(price, "prompt_per_1k", entry.prompt_per_1k);
        read(price, "completion_per_1k", entry.completion_per_1k);
        config.llm_prices[model] = entry;
      }
    }
    read(json, "seed", config.seed);
    read(json, "db_path", config.db_path);
    read(json, "resume", config.resume);
    read(json, "language", config.language);
    if (json.contains("device")) {
      read(json.at("device"), "backend", config.device.backend);
      read(json.at("device"), "index", config.device.index);
      read(json.at("device"), "name", config.device.name);
    }
    if (json.contains("run_file") && !json.at("run_file").empty()) config.run_file = json.at("run_file").dump();
  } catch (const nlohmann::json::exception& error) {
    throw ValidationError(fmt::format("evolution config JSON: {}", error.what()));
  }
  return config;
}

// ---------------------------------------------------------------------------------------------------
// The engine

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// How long mutator calls still running at a deadline (stop(), wall time) get to return once cancelled;
// the engine records the others as abandoned and returns.
constexpr std::chrono::seconds kAbandonAfter{2};

// One mutation request in flight and, once done, its proposals.
struct Job {
  std::uint64_t ticket = 0;
  MutationRequest request;
  int island = 0;
  std::string parent_id;
  std::string second_parent_id;
  int parent_generation = 0;
  SelectionMode mode = SelectionMode::policy;
  std::vector<std::string> inspiration_ids;
  /// What the experience memory needs of the step: stage, the parent's feedback, the items retrieved.
  detail::StepContext context;
  Clock::time_point submitted;
  std::vector<Proposal> proposals;
  std::string error;
  double seconds = 0.0;
  /// The stop reason when the engine cancelled the call (Mutator::cancel) before it returned.
  std::string cancelled_by;
};

// Threads that call Mutator::propose. The coordinator submits jobs and collects finished ones. The
// threads share the pool's state, not the pool: abandon() lets a thread stuck in a mutator call (a hung
// LLM request) finish in the background after the run has ended; it then touches only that state and
// its job, never the engine or the store.
class MutationPool {
 public:
  MutationPool(std::shared_ptr<Mutator> mutator, int threads) : state_(std::make_shared<State>()) {
    state_->mutator = std::move(mutator);
    for (int i = 0; i < threads; ++i) threads_.emplace_back([state = state_] { work(*state); });
  }
  ~MutationPool() { close(); }

  void submit(std::shared_ptr<Job> job) {
    {
      std::lock_guard<std::mutex> lock(state_->mutex);
      state_->todo.push_back(std::move(job));
    }
    state_->todo_ready.notify_one();
  }

  /// Finished jobs in ticket order; waits up to `timeout` for the first one.
  std::vector<std::shared_ptr<Job>> collect(std::chrono::milliseconds timeout) {
    std::unique_lock<std::mutex> lock(state_->mutex);
    state_->done_ready.wait_for(lock, timeout, [&] { return !state_->done.empty() || state_->wake; });
    state_->wake = false;
    std::vector<std::shared_ptr<Job>> jobs(state_->done.begin(), state_->done.end());
    state_->done.clear();
    std::sort(jobs.begin(), jobs.end(), [](const auto& a, const auto& b) { return a->ticket < b->ticket; });
    return jobs;
  }

  /// Wakes a waiting collect() (stop()).
  void wake() {
    {
      std::lock_guard<std::mutex> lock(state_->mutex);
      state_->wake = true;
    }
    state_->done_ready.notify_all();
  }

  /// Waits for the threads to finish their jobs.
  void close() { shut(true); }

  /// Stops waiting for the threads: jobs not started are dropped, and calls still running finish in the
  /// background (their results are discarded).
  void abandon() { shut(false); }

 private:
  struct State {
    std::shared_ptr<Mutator> mutator;
    std::mutex mutex;
    std::condition_variable todo_ready;
    std::condition_variable done_ready;
    std::deque<std::shared_ptr<Job>> todo;
    std::deque<std::shared_ptr<Job>> done;
    bool closing = false;
    bool wake = false;
  };

  void shut(bool join) {
    {
      std::lock_guard<std::mutex> lock(state_->mutex);
      if (state_->closing && threads_.empty()) return;
      state_->closing = true;
      if (!join) state_->todo.clear();
    }
    state_->todo_ready.notify_all();
    for (std::thread& thread : threads_) {
      if (join) {
        thread.join();
      } else {
        thread.detach();
      }
    }
    threads_.clear();
  }

  static void work(State& state) {
    for (;;) {
      std::shared_ptr<Job> job;
      {
        std::unique_lock<std::mutex> lock(state.mutex);
        state.todo_ready.wait(lock, [&] { return state.closing || !state.todo.empty(); });
        if (state.todo.empty()) return;
        job = std::move(state.todo.front());
        state.todo.pop_front();
      }
      const auto started = Clock::now();
      try {
        job->proposals = state.mutator->propose(job->request);
      } catch (const std::exception& error) {
        job->error = error.what();
      } catch (...) {
        job->error = "unknown exception";
      }
      job->seconds = seconds_since(started);
      {
        std::lock_guard<std::mutex> lock(state.mutex);
        state.done.push_back(std::move(job));
      }
      state.done_ready.notify_all();
    }
  }

  std::shared_ptr<State> state_;
  std::vector<std::thread> threads_;
};

// A stored candidate waiting for its evaluation.
struct Pending {
  Candidate candidate;
  std::string id;
  std::optional<std::int64_t> step_id;
  std::string parent_id;
  std::string mutation;
  std::string skill;
  /// The step's context for the experience memory; none for the reference and the seeds (no parent).
  std::optional<detail::StepContext> context;
  /// Times an earlier session started this child's evaluation and never finished it (evaluation_starts).
  std::int64_t unfinished_attempts = 0;
  /// Resume records it crashed instead of evaluating it: it was evaluated alone, or again, when its process
  /// ended (docs/search.md, "Resume").
  bool record_crashed = false;
};

// Why a correct evaluation's figures may not lead a run as they are: measured in screen mode, or flagged with
// doubt. Empty when they may (strict mode, or an evaluator that does not say its mode, and no such flag).
std::string doubt_about(const Evaluation& evaluation) {
  std::vector<std::string> reasons;
  if (evaluation.timing && evaluation.timing->mode == "screen") reasons.emplace_back("measured in screen mode");
  for (const std::string& flag : evaluation.integrity.flags) {
    if (doubt_casting_flags().count(flag) > 0) reasons.push_back("flagged " + flag);
  }
  return fmt::format("{}", fmt::join(reasons, ", "));
}

}  // namespace

struct Evolution::Impl {
  std::shared_ptr<const Task> shared_task;  // one copy, shared by every mutation request
  const Task& task;
  std::shared_ptr<Evaluator> evaluator;
  std::shared_ptr<Mutator> mutator;
  EvolutionConfig config;
  ProgressCallback progress_callback;
  std::shared_ptr<Evaluator> confirmer;             // set_confirmer(); null: evaluator->confirm_batch()
  std::shared_ptr<ExperienceMemory> given_memory;  // set_memory()
  std::shared_ptr<ExperienceMemory> memory;        // what the current or last run() uses
  std::unique_ptr<detail::ExperienceLedger> ledger;

  std::atomic<bool> running{false};
  std::atomic<bool> stop_requested{false};
  std::mutex pool_mutex;  // guards `pool` against stop() from another thread
  MutationPool* pool = nullptr;

  // Per-run state, rebuilt by run().
  std::unique_ptr<RunStore> store;
  std::unique_ptr<IslandPopulation> population;
  std::unique_ptr<MapElitesArchive> archive;
  std::shared_ptr<NoveltyFilter> novelty;
  std::mt19937_64 rng;
  std::int64_t run_id = 0;
  std::string language;            // of the candidates the mutators write (EvolutionConfig::language)
  std::string reference_language;  // of the reference, the baseline: the backend's own (CUDA for Triton)
  std::vector<std::string> formats;  // the languages children may be written in: `language` first
  std::int64_t programs_in_language = 0;  // evaluated programs written in `language`
  DeviceInfo device;
  std::int64_t evaluations = 0;
  std::int64_t session_evaluations = 0;
  std::int64_t since_improvement = 0;
  std::int64_t failed_in_a_row = 0;
  LlmSpend llm_spend;  // the run's, earlier sessions included
  std::uint64_t tickets = 0;
  std::int64_t next_migration = 0;
  std::optional<Program> best;
  std::unordered_map<std::string, std::deque<Attempt>> attempts;  // by parent id
  std::unordered_map<std::string, Program> evaluated;               // by id, home-island copies
  // Parent eligibility: what Mutator::can_mutate said of each program (asked once), and the programs
  // the mutator reported it can propose nothing new from (Proposal::exhausted_ids).
  std::unordered_map<std::string, bool> mutator_accepts;
  std::unordered_set<std::string> exhausted;
  EvolutionResult result;
  Clock::time_point started;

  Impl(Task task_in, std::shared_ptr<Evaluator> evaluator_in, std::shared_ptr<Mutator> mutator_in,
       EvolutionConfig config_in)
      : shared_task(std::make_shared<const Task>(std::move(task_in))),
        task(*shared_task),
        evaluator(std::move(evaluator_in)),
        mutator(std::move(mutator_in)),
        config(std::move(config_in)) {
    if (!evaluator) throw ValidationError("Evolution needs an evaluator (got none)");
    if (!mutator) throw ValidationError("Evolution needs a mutator (got none)");
    config.validate();
    reset_search_state();
  }

  void reset_search_state() {
    PopulationConfig population_config;
    population_config.islands = config.islands;
    population_config.island_capacity = config.island_capacity;
    population_config.selection = config.selection;
    population = std::make_unique<IslandPopulation>(population_config);
    ArchiveConfig archive_config;
    archive_config.islands = config.islands;
    archive_config.features = config.features;
    archive_config.elite_count = config.elite_count;
    archive_config.migration = config.migration;
    archive = std::make_unique<MapElitesArchive>(archive_config);
    novelty = std::make_shared<NoveltyFilter>(config.novelty);
    rng.seed(config.seed);
    evaluations = 0;
    programs_in_language = 0;
    session_evaluations = 0;
    since_improvement = 0;
    failed_in_a_row = 0;
    tickets = 0;
    next_migration = config.migration.interval;
    best.reset();
    attempts.clear();
    evaluated.clear();
    mutator_accepts.clear();
    exhausted.clear();
    ledger.reset();
    result = EvolutionResult{};
  }

  // ---- setup

  std::string choose_language() const {
    const std::string backend = evaluator->backend_name();
    if (!config.language.empty()) {
      const KernelLanguage& row = kernel_language(config.language);  // ValidationError naming the known ones
      if (row.host_code) {
        // A ModelNew file runs on any backend, against the task's PyTorch module.
        if (!task.oracle) {
          throw ValidationError(fmt::format("{} candidates are checked against a PyTorch module, and task '{}' has "
                                            "none (no \"oracle\"): choose a kernel language of the {} backend",
                                            row.name, task.name, backend));
        }
        return config.language;
      }
      // A backend that no language runs on (an evaluator written for a test, in Python) takes any language.
      const bool known_backend = !language_of_backend(backend).empty();
      if (known_backend && row.backend != backend) {
        throw ValidationError(fmt::format("{} runs on the {} backend; this run uses {} (set EvolutionConfig.language "
                                          "to a language of the {} backend, or use a {} evaluator)",
                                          row.name, row.backend, backend, backend, row.backend));
      }
      return config.language;
    }
    if (const std::string language = language_of_backend(backend); !language.empty()) return language;
    const std::vector<std::string> languages = task.languages();
    if (languages.empty()) {
      throw ValidationError(fmt::format("task '{}' has no reference in any language: nothing to start from", task.name));
    }
    return languages.front();
  }

  // The languages a run's children may take (docs/kernelbench-modelnew.md, "Cold start"): the run's own, and in
  // a run of ModelNew files on a backend with a device-code language that one too, as a kernel with its launch
  // plan: one population of both formats.
  std::vector<std::string> choose_formats() const {
    std::vector<std::string> chosen{language};
    const KernelLanguage* row = find_kernel_language(language);
    const std::string native = language_of_backend(evaluator->backend_name());
    if (row != nullptr && row->host_code && task.oracle && !native.empty() && native != language) {
      chosen.push_back(native);
    }
    return chosen;
  }

  bool is_run_format(const std::string& candidate_language) const {
    return std::find(formats.begin(), formats.end(), candidate_language) != formats.end();
  }

  // The reference is the baseline the evaluator measures speedups against: the backend's own language
  // (the CUDA reference in a Triton run), else the run's language, else the native language of the backend
  // that runs it.
  std::string choose_reference_language() const {
    if (const std::string native = language_of_backend(evaluator->backend_name()); !native.empty()) return native;
    if (task.references.count(language) != 0) return language;
    const KernelLanguage* row = find_kernel_language(language);
    const std::string of_row = row != nullptr ? language_of_backend(row->backend) : "";
    return of_row.empty() ? language : of_row;
  }

  DeviceInfo choose_device() const {
    if (!config.device.backend.empty()) return config.device;
    DeviceInfo found;
    try {
      for (const BackendInfo& backend : devices()) {
        if (backend.name != evaluator->backend_name()) continue;
        for (const DeviceInfo& candidate : backend.devices) {
          if (found.backend.empty() || candidate.name == evaluator->device_name()) found = candidate;
          if (candidate.name == evaluator->device_name()) return found;
        }
      }
    } catch (const std::exception&) {
      // No device list: constraints over device attributes go unchecked by the mutators.
    }
    return found;
  }

  template <typename F>
  auto timed_store(F&& write) {
    const auto begin = Clock::now();
    if constexpr (std::is_void_v<decltype(write())>) {
      write();
      result.store_seconds += seconds_since(begin);
    } else {
      auto value = write();
      result.store_seconds += seconds_since(begin);
      return value;
    }
  }

  // ---- incorporating an evaluated program

  // True when a correct program would lead the run if it entered the search now: become the run's best, enter
  // the elite set, or rank among its island's exploitation_top (at least its best). The thresholds only rise as
  // the run goes on, so a program that does not lead when it enters never does later.
  bool would_lead(const Program& program) const {
    if (!program.correct()) return false;
    if (!best || program.fitness() > best->fitness()) return true;
    if (config.elite_count > 0) {
      const std::vector<const Program*> elites = archive->elites(static_cast<int>(config.elite_count));
      if (elites.size() < config.elite_count || program.fitness() > elites.back()->fitness()) return true;
    }
    const auto top = static_cast<std::size_t>(std::max(1, config.selection.exploitation_top));
    std::size_t ahead = 0;
    for (const Program* other : population->island_programs(program.island)) {
      if (other->correct() && other->id() != program.id() && other->fitness() >= program.fitness()) ++ahead;
    }
    return ahead < top;
  }

  // Whether a program may lead with the standing it has: its evaluation needs no confirmation, or it leads
  // nothing. A candidate whose confirmation was refuted (a strict evaluation still in doubt) and would lead stays
  // out of the population and the archive: known and recorded, never a leader or a parent. The task's own
  // reference and seed stay in (the run starts from them), but never become the best.
  enum class Standing { leads, kept_out, no_best };
  Standing standing_of(const Program& program) const {
    if (!program.correct() || doubt_about(program.evaluation).empty() || !would_lead(program)) return Standing::leads;
    return is_initial_origin(program.candidate().lineage.origin) ? Standing::no_best : Standing::kept_out;
  }

  void incorporate(Program program, const std::string& parent_id, const std::string& mutation, bool report,
                   const std::string& skill = "", const std::string& confirmation = "") {
    const bool initial = is_initial_origin(program.candidate().lineage.origin);
    const Standing standing = standing_of(program);
    if (program.candidate().language == language && evaluated.count(program.id()) == 0) ++programs_in_language;
    evaluated.insert_or_assign(program.id(), program);
    if (standing == Standing::kept_out) {
      // Known to the novelty filter already (remembered when it was stored); nothing else holds it.
    } else if (initial) {
      for (int island = 0; island < config.islands; ++island) {
        Program copy = program;
        copy.island = island;
        population->add(copy);
        archive->add(copy);
        novelty->remember(copy.candidate(), copy.id(), island);
      }
    } else {
      population->add(program);
      archive->add(program);
    }
    if (!parent_id.empty() && config.memory > 0) {
      std::deque<Attempt>& recent = attempts[parent_id];
      Attempt attempt;
      attempt.child_id = program.id();
      attempt.mutation = mutation;
      attempt.status = program.evaluation.status;
      attempt.summary = program.evaluation.message;
      attempt.speedup = program.evaluation.speedup;
      attempt.skill = skill;
      recent.push_back(std::move(attempt));
      while (static_cast<int>(recent.size()) > config.memory) recent.pop_front();
    }
    bool improved = false;
    if (standing == Standing::leads && program.correct() && (!best || program.fitness() > best->fitness())) {
      best = program;
      improved = true;
      since_improvement = 0;
    } else {
      ++since_improvement;
    }
    if (report) {
      if (improved || initial) update_islands();
      Progress progress = base_progress();
      progress.program_id = program.id();
      progress.mutation = mutation;
      progress.island = program.island;
      progress.status = program.evaluation.status;
      progress.speedup = program.evaluation.speedup;
      progress.message = program.evaluation.message;
      progress.confirmation = confirmation;
      if (confirmation == "unconfirmed") {
        progress.message = fmt::format("not confirmed: the run reached its deadline ({}) before a strict evaluation "
                                       "could confirm this screening, so it does not lead: {}",
                                       deadline_reached(), program.evaluation.message);
      } else if (confirmation == "refuted") {
        const std::string doubt = doubt_about(program.evaluation);
        progress.message = fmt::format("not confirmed in strict mode ({}): {}",
                                       doubt.empty() ? to_string(program.evaluation.status) : doubt,
                                       program.evaluation.message);
        if (program.evaluation.timing && program.evaluation.timing->mode == "screen") {
          progress.message += "; the confirming evaluator screens too: give the run a strict one "
                              "(Evolution::set_confirmer)";
        }
      }
      progress.improved = improved;
      notify(progress);
    }
  }

  void update_islands() {
    for (int island = 0; island < config.islands; ++island) {
      IslandRecord record;
      record.run = run_id;
      record.island = island;
      record.programs = static_cast<std::int64_t>(population->island_programs(island).size());
      if (const Program* island_best = population->best(island)) {
        record.best_program_id = island_best->id();
        record.best_fitness = island_best->fitness();
        record.best_speedup = island_best->evaluation.speedup;
      }
      timed_store([&] { store->update_island(record); });
    }
  }

  Progress base_progress() const {
    Progress progress;
    progress.run_id = run_id;
    progress.evaluations = evaluations;
    progress.budget = config.budget;
    progress.steps = result.steps;
    progress.failed_proposals = result.failed_proposals;
    progress.duplicates = result.duplicates + result.near_duplicates;
    progress.elapsed_seconds = seconds_since(started);
    progress.llm_spend = llm_spend;
    if (best) {
      progress.best_program_id = best->id();
      progress.best_fitness = best->fitness();
      progress.best_speedup = best->evaluation.speedup;
    }
    return progress;
  }

  void notify(const Progress& progress) {
    if (progress_callback) progress_callback(progress);
  }

  // ---- evaluation

  void evaluate(std::vector<Pending> batch) {
    if (batch.empty()) return;
    const std::int64_t room = config.budget - evaluations;
    if (room <= 0) return;
    if (static_cast<std::int64_t>(batch.size()) > room) batch.resize(static_cast<std::size_t>(room));
    std::vector<Candidate> candidates;
    candidates.reserve(batch.size());
    for (const Pending& pending : batch) candidates.push_back(pending.candidate);
    // Each start is committed before the evaluator sees the child: should the candidate take the process down
    // with it, a resume records it crashed instead of evaluating it again (docs/search.md, "Resume").
    for (const Pending& pending : batch) {
      if (!pending.step_id) continue;
      timed_store([&] {
        store->start_evaluation(run_id, *pending.step_id, pending.id, static_cast<std::int64_t>(batch.size()));
      });
    }
    // From here, an exception (a broken backend, a failing store) judged none of the children still unrecorded:
    // their starts are taken back, so that a resume evaluates them as usual.
    std::size_t recorded = 0;
    try {
      const auto begin = Clock::now();
      std::vector<Evaluation> results = evaluator->evaluate_batch(task, candidates);
      const double seconds = seconds_since(begin);
      result.evaluator_seconds += seconds;
      if (results.size() != candidates.size()) {
        throw Error(fmt::format("the evaluator returned {} evaluations for {} candidates", results.size(),
                                candidates.size()));
      }
      const double each = seconds / static_cast<double>(batch.size());
      for (; recorded < batch.size(); ++recorded) {
        Pending& pending = batch[recorded];
        if (results[recorded].task.empty()) results[recorded].task = task.name;
        const Lineage& lineage = pending.candidate.lineage;
        const int island = std::clamp(lineage.island, 0, config.islands - 1);
        const int generation = lineage.generation;
        Program program(std::move(pending.candidate), std::move(results[recorded]), island, generation, evaluations);
        const std::string confirmation = confirm_if_leading(program, pending.step_id);
        timed_store([&] {
          return store->add_evaluation(run_id, program.id(), program.sequence, program.evaluation, pending.step_id,
                                       each);
        });
        ++evaluations;
        ++session_evaluations;
        learn(pending, program);
        incorporate(std::move(program), pending.parent_id, pending.mutation, true, pending.skill, confirmation);
      }
    } catch (...) {
      for (std::size_t i = recorded; i < batch.size(); ++i) {
        if (!batch[i].step_id) continue;
        try {
          store->forget_evaluation_start(*batch[i].step_id);
        } catch (...) {
          // The store failing too: the first error is the one to report; the child may be recorded crashed later.
        }
      }
      throw;
    }
  }

  // Confirmation before leadership (docs/search.md, "Confirmation"): a correct program whose evaluation is a
  // screening or carries a doubt flag, and which would lead the run, is evaluated again in strict mode first. Its
  // screening is kept (table screenings) and the strict evaluation becomes its standing, the one stored in
  // `evaluations`. Returns "confirmed", "refuted", "unconfirmed" (a deadline came first: the program keeps its
  // screening and does not lead), or "" when no confirmation was needed.
  std::string confirm_if_leading(Program& program, const std::optional<std::int64_t>& step_id) {
    if (!program.correct() || doubt_about(program.evaluation).empty() || !would_lead(program)) return "";
    // A strict evaluation takes seconds; once stop() or the wall time has come the run must end, not measure
    // again. Without its confirmation the program cannot lead, so nothing unconfirmed is ever reported as best.
    if (!deadline_reached().empty()) {
      ++result.unconfirmed;
      return "unconfirmed";
    }
    timed_store([&] { return store->add_screening(run_id, program.id(), program.sequence, program.evaluation, step_id); });
    const auto begin = Clock::now();
    const std::vector<Candidate> candidates{program.candidate()};
    std::vector<Evaluation> strict =
        confirmer ? confirmer->evaluate_batch(task, candidates) : evaluator->confirm_batch(task, candidates);
    result.evaluator_seconds += seconds_since(begin);
    if (strict.size() != 1) {
      throw Error(fmt::format("the confirming evaluator returned {} evaluations for 1 candidate", strict.size()));
    }
    if (strict.front().task.empty()) strict.front().task = task.name;
    strict.front().candidate_id = program.id();
    program.evaluation = std::move(strict.front());
    ++result.confirmations;
    const bool holds = program.correct() && doubt_about(program.evaluation).empty();
    if (!holds) ++result.refuted;
    return holds ? "confirmed" : "refuted";
  }

  // A pending child whose evaluation an earlier session started and never finished, recorded crashed instead of
  // evaluated again: the candidate may be what ended that session's process, and would end every resume's.
  void record_crashed(Pending pending) {
    if (evaluations >= config.budget) return;
    Evaluation evaluation;
    evaluation.task = task.name;
    evaluation.backend = evaluator->backend_name();
    evaluation.device = evaluator->device_name();
    evaluation.status = Status::crashed;
    evaluation.fitness = failure_fitness(Status::crashed);
    evaluation.message = fmt::format(
        "crashed: its evaluation started {} time(s) in an earlier session and never finished (the process evaluating "
        "it ended: the candidate may have crashed it); a resume records it crashed instead of evaluating it again",
        pending.unfinished_attempts);
    const Lineage& lineage = pending.candidate.lineage;
    Program program(std::move(pending.candidate), std::move(evaluation), std::clamp(lineage.island, 0, config.islands - 1),
                    lineage.generation, evaluations);
    timed_store([&] {
      return store->add_evaluation(run_id, program.id(), program.sequence, program.evaluation, pending.step_id, 0.0);
    });
    ++evaluations;
    ++session_evaluations;
    ++result.crashed_on_resume;
    learn(pending, program);
    incorporate(std::move(program), pending.parent_id, pending.mutation, true, pending.skill);
  }

  // What the step taught, into the experience memory and the store (a step with a parent only).
  void learn(const Pending& pending, const Program& program) {
    if (!pending.context || !pending.step_id) return;
    const ExperienceItem item =
        ledger->learn(*pending.context, program.id(), pending.skill, pending.mutation, program.evaluation, *pending.step_id);
    timed_store([&] { return store->add_experience(run_id, *pending.step_id, item); });
  }

  void open_ledger() {
    memory = given_memory ? given_memory : std::make_shared<ExperienceMemory>(config.memory_path);
    ledger = std::make_unique<detail::ExperienceLedger>(memory, task, fmt::format("run {} of {}", run_id, config.db_path));
  }

  void maybe_migrate() {
    if (config.migration.interval <= 0 || config.islands < 2) return;
    if (evaluations < next_migration) return;
    while (next_migration <= evaluations) next_migration += config.migration.interval;
    for (Program& migrant : archive->migrate()) {
      const int from = (migrant.island + config.islands - 1) % config.islands;
      population->add(migrant);
      novelty->remember(migrant.candidate(), migrant.id(), migrant.island);
      MigrationRecord record;
      record.run = run_id;
      record.program_id = migrant.id();
      record.from_island = from;
      record.to_island = migrant.island;
      record.sequence = evaluations;
      timed_store([&] { store->add_migration(record); });
      ++result.migrations;
    }
  }

  // ---- seeding and resuming

  void seed_population() {
    // The reference in the backend's language; the seed in the run's (a Triton seed next to the CUDA
    // reference). Without a seed in the run's language, the mutator starts from the reference. A task whose
    // expected outputs come from PyTorch (an oracle) needs no reference: its seed alone starts the run.
    // A task checked against PyTorch with no seed in the run's language starts from its own Model written as a
    // ModelNew (docs/kernelbench-modelnew.md, "Cold start"): correct, at eager's speed, and in a format the
    // mutators may rewrite into the run's language.
    std::vector<std::tuple<std::string, const KernelSource*, std::string>> initial;
    auto reference = task.references.find(reference_language);
    auto seed = task.seeds.find(language);
    KernelSource model_as_seed;
    if (reference != task.references.end()) {
      initial.emplace_back("reference", &reference->second, reference_language);
    } else if (!task.oracle) {
      std::vector<std::string> languages = task.languages();
      throw ValidationError(fmt::format("task '{}' has no reference in {} (it has: {}); choose a backend for one of "
                                        "those languages or add a reference",
                                        task.name, reference_language, fmt::format("{}", fmt::join(languages, ", "))));
    }
    if (seed != task.seeds.end()) {
      initial.emplace_back("seed", &seed->second, language);
    } else if (task.oracle && reference == task.references.end()) {
      model_as_seed.language = kModelNewLanguage;
      model_as_seed.source = model_new_from_problem(task.oracle->module.source);
      model_as_seed.path = task.oracle->module.path;
      initial.emplace_back("seed", &model_as_seed, kModelNewLanguage);
    }
    std::vector<Pending> batch;
    for (const auto& [origin, source, source_language] : initial) {
      Candidate candidate;
      candidate.language = source_language;
      candidate.source = source->source;
      candidate.lineage.origin = origin;
      candidate.lineage.island = 0;
      candidate.lineage.generation = 0;
      const NoveltyVerdict verdict = novelty->check(candidate, 0, origin);
      StepRecord step;
      step.run = run_id;
      step.island = 0;
      step.selection = "seed";
      step.mutation = origin;
      step.novelty_kind = to_string(verdict.kind);
      if (verdict.kind == NoveltyVerdict::Kind::duplicate) {
        step.duplicate_of = verdict.similar_to;
        step.failure = verdict.message();
        timed_store([&] { return store->add_step(step); });
        continue;
      }
      Pending pending;
      pending.candidate = candidate;
      pending.id = candidate.id();
      pending.mutation = origin;
      timed_store([&] { store->add_program(run_id, pending.id, candidate, verdict.hash); });
      novelty->remember(candidate, pending.id, 0, verdict);
      step.child_id = pending.id;
      pending.step_id = timed_store([&] { return store->add_step(step); });
      batch.push_back(std::move(pending));
    }
    evaluate(std::move(batch));
  }

  std::vector<Pending> restore(const RunInfo& info) {
    const EvolutionConfig stored = EvolutionConfig::from_json(info.config_json);
    if (stored.islands != config.islands) {
      throw ValidationError(fmt::format("run {} in '{}' has {} islands; resume it with islands = {}", info.id,
                                        config.db_path, stored.islands, stored.islands));
    }
    if (!info.language.empty()) {
      language = info.language;
      reference_language = choose_reference_language();
      formats = choose_formats();
    }
    std::unordered_map<std::string, ProgramRecord> programs;
    for (ProgramRecord& record : store->programs(run_id)) programs.emplace(record.id, std::move(record));
    const std::vector<EvaluationRecord> records = store->evaluations(run_id);
    const std::vector<MigrationRecord> migrations = store->migrations(run_id);
    const std::vector<StepRecord> steps = store->steps(run_id);
    for (const StepRecord& step : steps) count_llm_call(step);

    // Steps by child: the parent and mutation that led to each program.
    std::unordered_map<std::string, const StepRecord*> step_of_child;
    for (const StepRecord& step : steps) {
      if (!step.child_id.empty()) step_of_child[step.child_id] = &step;
    }
    std::size_t next_migration_record = 0;
    auto replay_migrations = [&](std::int64_t up_to) {
      while (next_migration_record < migrations.size() && migrations[next_migration_record].sequence <= up_to) {
        const MigrationRecord& record = migrations[next_migration_record++];
        auto source = evaluated.find(record.program_id);
        if (source == evaluated.end()) continue;
        Program copy = source->second;
        copy.island = std::clamp(record.to_island, 0, config.islands - 1);
        copy.migrant = true;
        copy.children = 0;
        population->add(copy);
        archive->add(copy);
        novelty->remember(copy.candidate(), copy.id(), copy.island);
      }
    };
    for (const EvaluationRecord& record : records) {
      replay_migrations(record.sequence);
      auto found = programs.find(record.program_id);
      if (found == programs.end()) {
        throw StoreError(fmt::format("run store '{}': evaluation {} names program {} that run {} does not hold",
                                     config.db_path, record.id, record.program_id, run_id));
      }
      const Lineage& lineage = found->second.candidate.lineage;
      Program program(found->second.candidate, record.evaluation, std::clamp(lineage.island, 0, config.islands - 1),
                      lineage.generation, record.sequence);
      if (program.id() != record.program_id) {
        throw StoreError(fmt::format("run store '{}': program {} of run {} holds code whose id is {}; the file was "
                                     "changed outside kernelsmith, so the run cannot be resumed",
                                     config.db_path, record.program_id, run_id, program.id()));
      }
      novelty->remember(program.candidate(), program.id(), program.island);
      std::string parent_id;
      std::string mutation = program.candidate().lineage.origin;
      std::string skill;
      auto step = step_of_child.find(record.program_id);
      if (step != step_of_child.end()) {
        if (!step->second->parent_ids.empty()) parent_id = step->second->parent_ids.front();
        mutation = step->second->mutation;
        skill = step->second->skill;
      }
      evaluations = std::max(evaluations, record.sequence + 1);
      incorporate(std::move(program), parent_id, mutation, false, skill);
    }
    replay_migrations(std::numeric_limits<std::int64_t>::max());
    // Stored programs never evaluated (pending, or failed before evaluation) are known code too.
    for (const auto& [id, record] : programs) {
      if (evaluated.count(id) == 0) {
        novelty->remember(record.candidate, id, std::clamp(record.candidate.lineage.island, 0, config.islands - 1));
      }
    }
    result.migrations = 0;
    if (config.migration.interval > 0) {
      next_migration = (evaluations / config.migration.interval + 1) * config.migration.interval;
    }

    // Children counts, the island rotation and the random stream continue from the steps.
    std::int64_t proposal_steps = 0;
    for (const StepRecord& step : steps) {
      if (step.selection == "seed") continue;
      ++proposal_steps;
      if (!step.parent_ids.empty() && step.island >= 0 && step.island < config.islands) {
        population->note_child(step.island, step.parent_ids.front());
      }
    }
    tickets = static_cast<std::uint64_t>(proposal_steps);
    rng.seed(detail::mix_seed(config.seed, static_cast<std::uint64_t>(evaluations) * 1000003ULL + tickets));

    // What the run taught: the links that carry rewards up the lineage, and the items themselves when the
    // memory does not hold them (one in the process).
    ledger->restore(steps, store->experience(run_id));

    // Stored candidates whose evaluation never committed: evaluate them first; those whose evaluation had
    // started are recorded crashed when they were evaluated alone or already once again, else evaluated alone.
    std::unordered_map<std::int64_t, EvaluationStart> starts;
    for (EvaluationStart& start : store->evaluation_starts(run_id)) starts.emplace(start.step, std::move(start));
    std::vector<Pending> pending;
    for (const StepRecord& step : store->pending_steps(run_id)) {
      auto found = programs.find(step.child_id);
      if (found == programs.end() || evaluated.count(step.child_id) != 0) continue;
      Pending item;
      item.candidate = found->second.candidate;
      item.id = step.child_id;
      item.step_id = step.id;
      item.parent_id = step.parent_ids.empty() ? std::string() : step.parent_ids.front();
      item.mutation = step.mutation;
      item.skill = step.skill;
      if (auto start = starts.find(step.id); start != starts.end()) {
        item.unfinished_attempts = start->second.attempts;
        item.record_crashed = start->second.batch <= 1 || start->second.attempts >= 2;
      }
      if (auto parent = evaluated.find(item.parent_id); parent != evaluated.end()) {
        // The request as it was made, as far as the memory needs it: the parent's evaluation, language, device.
        MutationRequest request;
        request.shared_task = shared_task;
        request.parent = parent->second.candidate();
        request.parent_evaluation = parent->second.evaluation;
        request.language = language;
        request.device = device;
        item.context = ledger->context(request, item.parent_id);
        item.context->retrieved = step.retrieved;
      }
      pending.push_back(std::move(item));
    }
    return pending;
  }

  // ---- proposals

  // A program the mutator can start from: one it accepts (asked once per program) and has not reported
  // exhausted.
  bool eligible_parent(const Program& program) {
    if (exhausted.count(program.id()) != 0) return false;
    // A program in another language (the CUDA reference of a Triton run) is a parent only until the run
    // has one in its own: from then on the mutators work on the run's formats, not translate.
    if (!is_run_format(program.candidate().language) && programs_in_language > 0) return false;
    auto known = mutator_accepts.find(program.id());
    if (known == mutator_accepts.end()) {
      known = mutator_accepts.emplace(program.id(), mutator->can_mutate(program.candidate())).first;
    }
    return known->second;
  }

  // The next proposal's parent: picked on the ticket's island among the eligible programs; when that
  // island has none, on the next island (in ring order) that has one, and the job moves there. Null when
  // no island has an eligible program.
  std::shared_ptr<Job> make_job() {
    const ParentFilter eligible = [this](const Program& program) { return eligible_parent(program); };
    const std::uint64_t ticket = tickets;
    const int home = static_cast<int>(ticket % static_cast<std::uint64_t>(config.islands));
    ParentChoice choice;
    int island = home;
    for (int offset = 0; offset < config.islands && choice.program == nullptr; ++offset) {
      island = (home + offset) % config.islands;
      if (!population->island_programs(island).empty()) choice = population->choose_parent(island, rng, eligible);
    }
    if (choice.program == nullptr) return nullptr;
    if (island != home) ++result.parent_fallbacks;

    auto job = std::make_shared<Job>();
    job->ticket = tickets++;
    job->island = island;
    const Program& parent = *choice.program;
    job->parent_id = parent.id();
    job->parent_generation = parent.generation;
    job->mode = choice.mode;

    MutationRequest& request = job->request;
    request.shared_task = shared_task;
    request.parent = parent.candidate();
    // A parent in one of the run's formats is rewritten in its own, the others offered (a mixed population).
    const std::string& parent_language = request.parent.language;
    request.language = is_run_format(parent_language) ? parent_language : language;
    for (const std::string& format : formats) {
      if (format != request.language) request.other_languages.push_back(format);
    }
    request.parent_evaluation = parent.evaluation;
    request.device = device;
    request.seed = detail::mix_seed(config.seed, job->ticket);
    request.island = job->island;
    request.generation = parent.generation + 1;
    for (const auto& [program, reason] : archive->inspirations_with_reasons(parent, config.inspirations, rng)) {
      if (!is_run_format(program->candidate().language)) continue;  // the reference of another language
      request.inspirations.push_back(Inspiration{program->candidate(), program->evaluation, reason});
      job->inspiration_ids.push_back(program->id());
    }
    if (config.crossover_rate > 0.0 && detail::uniform01(rng) < config.crossover_rate) {
      for (std::size_t i = 0; i < request.inspirations.size(); ++i) {
        if (request.inspirations[i].evaluation.status == Status::ok) {
          request.second_parent = request.inspirations[i].candidate;
          job->second_parent_id = job->inspiration_ids[i];
          break;
        }
      }
    }
    auto recent = attempts.find(parent.id());
    if (recent != attempts.end()) {
      request.recent_attempts.assign(recent->second.begin(), recent->second.end());
    }
    job->context = ledger->context(request, parent.id());
    ledger->retrieve(request, job->context, static_cast<std::size_t>(config.experience));
    std::weak_ptr<NoveltyFilter> filter = novelty;
    request.is_known = [filter](const Candidate& candidate) {
      auto locked = filter.lock();
      return locked && !locked->duplicate_of(candidate).empty();
    };
    population->note_child(job->island, parent.id());
    return job;
  }

  void record_failure(StepRecord step, const std::string& failure, const std::string& mutation, int island) {
    step.failure = failure;
    timed_store([&] { return store->add_step(step); });
    ++result.steps;
    ++result.failed_proposals;
    if (!step.abandoned_by.empty()) ++result.abandoned;
    ++failed_in_a_row;
    Progress progress = base_progress();
    progress.mutation = mutation;
    progress.island = island;
    progress.status = Status::ok;
    progress.message = failure;
    notify(progress);
  }

  // A step whose proposal came from a model call (it recorded the prompt) adds to the run's LLM spend.
  void count_llm_call(const StepRecord& step) {
    if (step.prompt.empty()) return;
    ++llm_spend.calls;
    llm_spend.prompt_tokens += step.prompt_tokens;
    llm_spend.completion_tokens += step.completion_tokens;
    llm_spend.cost += config.llm_cost(step.model, step.prompt_tokens, step.completion_tokens);
  }

  // Whether every LLM cap leaves room for `more` calls than those counted.
  bool llm_budget_has_room(std::int64_t more = 0) const {
    return !(config.max_llm_calls > 0 && llm_spend.calls + more >= config.max_llm_calls) &&
           !(config.max_llm_tokens > 0 && llm_spend.tokens() >= config.max_llm_tokens) &&
           !(config.max_llm_cost > 0.0 && llm_spend.cost >= config.max_llm_cost);
  }

  // What every step of a job records: where its parent came from and what was shown with it.
  StepRecord step_of(const Job& job) const {
    StepRecord step;
    step.run = run_id;
    step.island = job.island;
    step.parent_ids = {job.parent_id};
    step.selection = to_string(job.mode);
    step.inspiration_ids = job.inspiration_ids;
    step.retrieved = job.context.retrieved;
    return step;
  }

  /// Stores the job's proposals as steps; returns the new candidates to evaluate.
  std::vector<Pending> absorb(Job& job) {
    result.mutator_seconds += job.seconds;
    std::vector<Pending> fresh;
    StepRecord base = step_of(job);
    base.propose_seconds = job.seconds;
    base.abandoned_by = job.cancelled_by;
    if (!job.error.empty() || job.proposals.empty()) {
      StepRecord step = base;
      step.mutation = mutator->name();
      record_failure(step,
                     job.error.empty() ? "the mutator returned no proposals"
                                       : fmt::format("the mutator raised an error: {}", job.error),
                     step.mutation, job.island);
      return fresh;
    }
    for (Proposal& proposal : job.proposals) {
      exhausted.insert(proposal.exhausted_ids.begin(), proposal.exhausted_ids.end());
      StepRecord step = base;
      step.mutation = proposal.mutation.empty() ? mutator->name() : proposal.mutation;
      step.prompt = proposal.prompt;
      step.response = proposal.response;
      step.model = proposal.model;
      step.prompt_tokens = proposal.prompt_tokens;
      step.completion_tokens = proposal.completion_tokens;
      step.latency_seconds = proposal.latency_seconds;
      step.llm_attempts = proposal.llm_attempts;
      step.skill = proposal.skill;
      count_llm_call(step);
      if (!proposal.candidate) {
        if (proposal.known_candidate) {
          // The mutator withheld a program the run holds already: name that program.
          step.duplicate_of = novelty->duplicate_of(*proposal.known_candidate);
          step.novelty_kind = to_string(NoveltyVerdict::Kind::duplicate);
        }
        record_failure(step, proposal.failure.empty() ? "the mutator gave no candidate and no reason" : proposal.failure,
                       step.mutation, job.island);
        continue;
      }
      Candidate candidate = std::move(*proposal.candidate);
      if (candidate.language.empty()) candidate.language = language;
      if (!is_run_format(candidate.language)) {
        record_failure(step,
                       fmt::format("the candidate is in {}, but this run evolves {} kernels", candidate.language,
                                   fmt::join(formats, " and ")),
                       step.mutation, job.island);
        continue;
      }
      // The engine owns the lineage: where the child lives and how it was made.
      Lineage& lineage = candidate.lineage;
      if (lineage.parent_ids.empty()) {
        lineage.parent_ids = {job.parent_id};
        if (!job.second_parent_id.empty() && step.mutation.find("crossover") != std::string::npos) {
          lineage.parent_ids.push_back(job.second_parent_id);
        }
      }
      step.parent_ids = lineage.parent_ids;
      lineage.island = job.island;
      lineage.generation = job.parent_generation + 1;
      if (lineage.origin.empty() || lineage.origin == "user" || is_initial_origin(lineage.origin)) {
        lineage.origin = step.mutation;
      }
      const NoveltyVerdict verdict = novelty->check(candidate, job.island, step.mutation);
      step.novelty_kind = to_string(verdict.kind);
      if (!verdict.novel()) {
        step.duplicate_of = verdict.similar_to;
        if (verdict.kind == NoveltyVerdict::Kind::duplicate) {
          ++result.duplicates;
        } else {
          ++result.near_duplicates;
        }
        record_failure(step, verdict.message(), step.mutation, job.island);
        continue;
      }
      step.abandoned_by.clear();  // the call returned a candidate in time: it waits for a resume as pending
      Pending pending;
      pending.id = candidate.id();
      pending.parent_id = job.parent_id;
      pending.mutation = step.mutation;
      pending.skill = proposal.skill;
      pending.context = job.context;
      timed_store([&] { store->add_program(run_id, pending.id, candidate, verdict.hash); });
      novelty->remember(candidate, pending.id, job.island, verdict);
      step.child_id = pending.id;
      pending.step_id = timed_store([&] { return store->add_step(step); });
      pending.candidate = std::move(candidate);
      ++result.steps;
      failed_in_a_row = 0;
      fresh.push_back(std::move(pending));
    }
    return fresh;
  }

  // ---- stop rules

  // Why no program is left to start a proposal from, counted over the distinct programs of the run.
  std::string no_parent_detail() const {
    std::int64_t rejected = 0;
    std::int64_t used_up = 0;
    for (const auto& [id, program] : evaluated) {
      if (exhausted.count(id) != 0) {
        ++used_up;
      } else {
        auto accepted = mutator_accepts.find(id);
        if (accepted != mutator_accepts.end() && !accepted->second) ++rejected;
      }
    }
    return fmt::format("no program is left that the mutator '{}' can work from: {} of the run's {} programs have "
                       "nothing new to offer (every variant is in the run or invalid) and it cannot work from {} "
                       "(Mutator::can_mutate)",
                       mutator->name(), used_up, evaluated.size(), rejected);
  }

  // The deadlines that end a run at once, whatever is in flight: stop() and the wall time.
  std::string deadline_reached() const {
    if (stop_requested.load()) return "stopped";
    if (config.wall_seconds > 0.0 && seconds_since(started) >= config.wall_seconds) return "wall_time";
    return "";
  }

  // Collects what is still in flight after the loop: it finishes and is stored (its candidates stay
  // pending), unless a deadline comes. Then the mutator is asked to cancel its calls; those not back
  // within kAbandonAfter are recorded as abandoned steps and left to finish in the background, their
  // results discarded.
  void drain(MutationPool& pool, std::map<std::uint64_t, std::shared_ptr<Job>>& outstanding) {
    std::string deadline;
    Clock::time_point give_up;
    while (!outstanding.empty()) {
      if (deadline.empty()) {
        deadline = deadline_reached();
        if (!deadline.empty()) {
          for (auto& entry : outstanding) entry.second->cancelled_by = deadline;
          try {
            mutator->cancel();
          } catch (...) {
            // A mutator that cannot cancel is abandoned after the grace period like one that ignores it.
          }
          give_up = Clock::now() + kAbandonAfter;
        }
      } else if (Clock::now() >= give_up) {
        break;
      }
      for (const std::shared_ptr<Job>& job : pool.collect(std::chrono::milliseconds(100))) {
        outstanding.erase(job->ticket);
        absorb(*job);
      }
    }
    if (outstanding.empty()) return;
    pool.abandon();
    for (const auto& entry : outstanding) {
      const Job& job = *entry.second;
      StepRecord step = step_of(job);
      step.mutation = mutator->name();
      step.propose_seconds = seconds_since(job.submitted);
      step.abandoned_by = deadline;
      record_failure(step,
                     fmt::format("abandoned: the mutator call was still running after {:.1f} s when the run had to "
                                 "stop ({}); it was cancelled and not waited for",
                                 step.propose_seconds, deadline),
                     step.mutation, job.island);
    }
    outstanding.clear();
  }

  std::string stop_reason() const {
    if (stop_requested.load()) return "stopped";
    if (evaluations >= config.budget) return "budget";
    if (config.target_speedup > 0.0 && best && best->evaluation.speedup >= config.target_speedup) {
      return "target_speedup";
    }
    if (config.wall_seconds > 0.0 && seconds_since(started) >= config.wall_seconds) return "wall_time";
    if (config.stagnation > 0 && since_improvement >= config.stagnation) return "stagnation";
    if (failed_in_a_row >= config.max_failed_proposals) return "no_new_candidates";
    if (!llm_budget_has_room()) return "llm_budget";
    return "";
  }

  // ---- the loop

  EvolutionResult run() {
    started = Clock::now();
    reset_search_state();
    store = std::make_unique<RunStore>(config.db_path);
    language = choose_language();
    reference_language = choose_reference_language();
    formats = choose_formats();
    device = choose_device();

    std::optional<RunInfo> previous;
    if (config.resume) previous = store->latest_run(task.name);
    std::vector<Pending> pending;
    if (previous) {
      run_id = previous->id;
      open_ledger();
      pending = restore(*previous);
      store->set_run_status(run_id, "running");
    } else {
      RunInfo info;
      info.task_name = task.name;
      info.config_json = config.to_json();
      info.task_json = task.to_json();
      info.language = language;
      info.backend = evaluator->backend_name();
      info.device = evaluator->device_name();
      info.mutator = mutator->name();
      info.seed = config.seed;
      info.library_version = version();
      run_id = store->create_run(info);
      open_ledger();
    }
    result.run_id = run_id;
    result.db_path = config.db_path;

    std::string reason;
    std::exception_ptr failure;
    std::unique_ptr<MutationPool> pool_owner;
    std::map<std::uint64_t, std::shared_ptr<Job>> outstanding;  // submitted, not collected, by ticket
    // "auto" (0): enough proposals that each of the evaluator's devices has the next candidate waiting.
    const int in_flight = config.mutations_in_flight > 0 ? config.mutations_in_flight
                                                         : std::clamp(2 * evaluator->concurrency(), 1, 1024);
    try {
      if (!stop_requested.load() && (!previous || store->programs(run_id).empty())) seed_population();
      // Pending candidates from an interrupted session, in batches as wide as the mutations in flight; one whose
      // evaluation had started is recorded crashed, or evaluated alone when it shared its batch (restore()).
      const auto width = static_cast<std::size_t>(in_flight);
      std::vector<Pending> batch;
      auto flush = [&] {
        if (!batch.empty() && stop_reason().empty()) evaluate(std::move(batch));
        batch.clear();
      };
      for (Pending& item : pending) {
        if (!stop_reason().empty()) break;
        if (item.record_crashed) {
          record_crashed(std::move(item));
        } else if (item.unfinished_attempts > 0) {
          evaluate({std::move(item)});
        } else {
          batch.push_back(std::move(item));
          if (batch.size() >= width) flush();
        }
      }
      flush();
      if (population->size() == 0 && stop_reason().empty()) {
        throw Error(fmt::format("run {} has no evaluated program to start from (the budget of {} evaluations may be "
                                "spent on pending candidates)",
                                run_id, config.budget));
      }

      pool_owner = std::make_unique<MutationPool>(mutator, in_flight);
      {
        std::lock_guard<std::mutex> lock(pool_mutex);
        pool = pool_owner.get();
      }
      for (;;) {
        reason = stop_reason();
        if (!reason.empty()) break;
        while (static_cast<int>(outstanding.size()) < in_flight &&
               evaluations + static_cast<std::int64_t>(outstanding.size()) < config.budget && !stop_requested.load() &&
               llm_budget_has_room(static_cast<std::int64_t>(outstanding.size()))) {
          std::shared_ptr<Job> job = make_job();
          if (!job) break;
          job->submitted = Clock::now();
          outstanding.emplace(job->ticket, job);
          pool_owner->submit(std::move(job));
        }
        if (outstanding.empty() && !stop_requested.load()) {
          // Nothing in flight, everything proposed is evaluated, and no program is one the mutator
          // can work from and has anything new to offer: more steps would all come back empty.
          reason = "no_new_candidates";
          result.stop_detail = no_parent_detail();
          break;
        }
        std::vector<Pending> batch;
        for (const std::shared_ptr<Job>& job : pool_owner->collect(std::chrono::milliseconds(200))) {
          outstanding.erase(job->ticket);
          std::vector<Pending> fresh = absorb(*job);
          std::move(fresh.begin(), fresh.end(), std::back_inserter(batch));
        }
        if (!stop_requested.load()) {
          evaluate(std::move(batch));
          maybe_migrate();
        }
      }
      drain(*pool_owner, outstanding);
    } catch (...) {
      failure = std::current_exception();
    }
    {
      std::lock_guard<std::mutex> lock(pool_mutex);
      pool = nullptr;
    }
    if (pool_owner) {
      // After an error, calls still running are not waited for either.
      if (outstanding.empty()) {
        pool_owner->close();
      } else {
        pool_owner->abandon();
      }
    }

    result.stop_reason = failure ? "error" : reason;
    if (reason == "no_new_candidates" && result.stop_detail.empty()) {
      result.stop_detail = fmt::format("{} proposals in a row yielded nothing to evaluate (max_failed_proposals)",
                                       failed_in_a_row);
    }
    result.best = best;
    result.best_speedup = best ? best->evaluation.speedup : 0.0;
    result.evaluations = evaluations;
    result.session_evaluations = session_evaluations;
    result.llm_spend = llm_spend;
    result.wall_seconds = seconds_since(started);
    result.engine_share = result.wall_seconds > 0.0
                              ? std::max(0.0, 1.0 - (result.evaluator_seconds + result.mutator_seconds) / result.wall_seconds)
                              : 0.0;
    try {
      result.pending = static_cast<std::int64_t>(store->pending_steps(run_id).size());
      if (failure) {
        std::string message = "unknown error";
        try {
          std::rethrow_exception(failure);
        } catch (const std::exception& error) {
          message = error.what();
        } catch (...) {
        }
        store->set_run_status(run_id, "failed", "error", message);
      } else {
        update_islands();
        // A deadline (stop(), the wall time) or a spent LLM budget stops a run that could go on; the other rules
        // finish it.
        const bool resumable = reason == "stopped" || reason == "wall_time" || reason == "llm_budget";
        store->set_run_status(run_id, resumable ? "stopped" : "finished", reason);
      }
    } catch (...) {
      if (!failure) failure = std::current_exception();
    }
    if (failure) std::rethrow_exception(failure);
    return result;
  }
};

Evolution::Evolution(Task task, std::shared_ptr<Evaluator> evaluator, std::shared_ptr<Mutator> mutator,
                     EvolutionConfig config)
    : impl_(std::make_unique<Impl>(std::move(task), std::move(evaluator), std::move(mutator), std::move(config))) {}

Evolution::~Evolution() {
  if (impl_ && impl_->running.load()) stop();
}

void Evolution::on_progress(ProgressCallback callback) {
  if (impl_->running.load()) throw Error("on_progress: the run is in progress; set the callback before run()");
  impl_->progress_callback = std::move(callback);
}

EvolutionResult Evolution::run() {
  bool expected = false;
  if (!impl_->running.compare_exchange_strong(expected, true)) {
    throw Error("Evolution::run() is already running on another thread");
  }
  // A stop() that came before run() holds; the flag clears when run() returns.
  struct Running {
    Impl& impl;
    ~Running() {
      impl.stop_requested.store(false);
      impl.running.store(false);
    }
  } running{*impl_};
  return impl_->run();
}

void Evolution::stop() {
  impl_->stop_requested.store(true);
  std::lock_guard<std::mutex> lock(impl_->pool_mutex);
  if (impl_->pool != nullptr) impl_->pool->wake();
}

void Evolution::set_confirmer(std::shared_ptr<Evaluator> confirmer) {
  if (impl_->running.load()) throw Error("set_confirmer: the run is in progress; set the confirmer before run()");
  impl_->confirmer = std::move(confirmer);
}

void Evolution::set_memory(std::shared_ptr<ExperienceMemory> memory) {
  if (impl_->running.load()) throw Error("set_memory: the run is in progress; set the memory before run()");
  impl_->given_memory = std::move(memory);
  impl_->memory = impl_->given_memory;
}

std::shared_ptr<ExperienceMemory> Evolution::memory() const { return impl_->memory; }

bool Evolution::running() const { return impl_->running.load(); }
bool Evolution::stop_requested() const { return impl_->stop_requested.load(); }
std::int64_t Evolution::run_id() const { return impl_->run_id; }
const EvolutionConfig& Evolution::config() const { return impl_->config; }
const Task& Evolution::task() const { return impl_->task; }
const IslandPopulation& Evolution::population() const { return *impl_->population; }
const MapElitesArchive& Evolution::archive() const { return *impl_->archive; }

}  // namespace kernelsmith
