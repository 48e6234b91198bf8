// The search: selection, population, archive, novelty, the Mutator interface (subclassable from Python),
// the parameter mutator, the run store and the evolution engine.
#include <pybind11/functional.h>
#include <pybind11/stl.h>

#include "bindings.hpp"
#include "kernelsmith/archive.hpp"
#include "kernelsmith/evolution.hpp"
#include "kernelsmith/novelty.hpp"
#include "kernelsmith/param_mutator.hpp"
#include "kernelsmith/population.hpp"
#include "kernelsmith/run_store.hpp"
#include "kernelsmith/selection.hpp"

namespace py = pybind11;

namespace kernelsmith::python {

namespace {

// Lets Python classes implement Mutator. The override macros take the GIL before calling into Python
// (the engine calls propose() from its worker threads); trampoline_self_life_support and the smart
// holder keep the Python object alive while the engine holds it.
class PyMutator : public Mutator, public py::trampoline_self_life_support {
 public:
  std::vector<Proposal> propose(const MutationRequest& request) override {
    PYBIND11_OVERRIDE_PURE(std::vector<Proposal>, Mutator, propose, request);
  }
  std::string name() const override { PYBIND11_OVERRIDE_PURE(std::string, Mutator, name, ); }
};

// A Python callable as a progress callback: the GIL is taken for each call (pybind11's function
// wrapper does it), and an exception it raises ends the run and comes back out of run().
ProgressCallback wrap_progress(const py::object& callback) {
  if (callback.is_none()) return {};
  return callback.cast<ProgressCallback>();
}

template <typename T>
std::string repr_program(const T& program) {
  return "<Program " + program.id() + " island=" + std::to_string(program.island) +
         " status=" + to_string(program.evaluation.status) + " fitness=" + std::to_string(program.fitness()) + ">";
}

void bind_selection(py::module_& m) {
  py::enum_<SelectionPolicy>(m, "SelectionPolicy", "How parents are picked among an island's correct programs.")
      .value("uniform", SelectionPolicy::uniform)
      .value("tournament", SelectionPolicy::tournament)
      .value("weighted", SelectionPolicy::weighted)
      .value("power_law", SelectionPolicy::power_law);
  py::enum_<SelectionMode>(m, "SelectionMode", "How one parent was picked.")
      .value("policy", SelectionMode::policy)
      .value("exploration", SelectionMode::exploration)
      .value("exploitation", SelectionMode::exploitation)
      .value("repair", SelectionMode::repair);
  m.def("parse_selection_policy", &parse_selection_policy, py::arg("name"));

  py::class_<SelectionConfig>(m, "SelectionConfig",
                              "Parent selection: a policy, plus shares of exploration (uniform), exploitation "
                              "(top programs) and repair (incorrect programs).")
      .def(py::init<>())
      .def_readwrite("policy", &SelectionConfig::policy)
      .def_readwrite("tournament_size", &SelectionConfig::tournament_size)
      .def_readwrite("sharpness", &SelectionConfig::sharpness)
      .def_readwrite("power_law_alpha", &SelectionConfig::power_law_alpha)
      .def_readwrite("exploration_ratio", &SelectionConfig::exploration_ratio)
      .def_readwrite("exploitation_ratio", &SelectionConfig::exploitation_ratio)
      .def_readwrite("exploitation_top", &SelectionConfig::exploitation_top)
      .def_readwrite("repair_rate", &SelectionConfig::repair_rate)
      .def("validate", &SelectionConfig::validate);

  py::class_<std::mt19937_64>(m, "Rng", "A seeded 64-bit Mersenne Twister, for the selection and archive calls.")
      .def(py::init<std::uint64_t>(), py::arg("seed") = 0)
      .def("next", [](std::mt19937_64& rng) { return rng(); });
}

void bind_population(py::module_& m) {
  py::class_<Program>(m, "Program", "An evaluated candidate as the search sees it.")
      .def(py::init<>())
      .def(py::init([](Candidate candidate, Evaluation evaluation, int island, int generation, std::int64_t sequence) {
             Program program;
             program.candidate = std::move(candidate);
             program.evaluation = std::move(evaluation);
             if (program.evaluation.candidate_id.empty()) program.evaluation.candidate_id = program.candidate.id();
             program.island = island;
             program.generation = generation;
             program.sequence = sequence;
             return program;
           }),
           py::arg("candidate"), py::arg("evaluation"), py::arg("island") = 0, py::arg("generation") = 0,
           py::arg("sequence") = 0)
      .def_readwrite("candidate", &Program::candidate)
      .def_readwrite("evaluation", &Program::evaluation)
      .def_readwrite("island", &Program::island)
      .def_readwrite("generation", &Program::generation)
      .def_readwrite("children", &Program::children)
      .def_readwrite("sequence", &Program::sequence)
      .def_readwrite("migrant", &Program::migrant)
      .def_property_readonly("id", &Program::id)
      .def_property_readonly("fitness", &Program::fitness)
      .def_property_readonly("correct", &Program::correct)
      .def("__repr__", &repr_program<Program>);

  m.def("selection_weights",
        [](const std::vector<Program>& programs, const SelectionConfig& config) {
          std::vector<const Program*> view;
          for (const Program& program : programs) view.push_back(&program);
          return selection_weights(view, config);
        },
        py::arg("programs"), py::arg("config"), "The policy's relative weight of each program.");

  py::class_<PopulationConfig>(m, "PopulationConfig")
      .def(py::init<>())
      .def_readwrite("islands", &PopulationConfig::islands)
      .def_readwrite("island_capacity", &PopulationConfig::island_capacity)
      .def_readwrite("selection", &PopulationConfig::selection)
      .def("validate", &PopulationConfig::validate);

  py::class_<ParentChoice>(m, "ParentChoice")
      .def_property_readonly("program", [](const ParentChoice& choice) { return *choice.program; })
      .def_readonly("mode", &ParentChoice::mode);

  py::class_<Population>(m, "Population", "The live programs of each island.")
      .def("add", &Population::add, py::arg("program"))
      .def("select_parent", &Population::select_parent, py::arg("island"), py::arg("rng"),
           py::return_value_policy::copy)
      .def("island_programs",
           [](const Population& population, int island) {
             std::vector<Program> programs;
             for (const Program* program : population.island_programs(island)) programs.push_back(*program);
             return programs;
           },
           py::arg("island"))
      .def_property_readonly("islands", &Population::islands)
      .def("__len__", &Population::size);

  py::class_<IslandPopulation, Population>(m, "IslandPopulation")
      .def(py::init<PopulationConfig>(), py::arg("config") = PopulationConfig{})
      .def("choose_parent", &IslandPopulation::choose_parent, py::arg("island"), py::arg("rng"))
      .def("find",
           [](const IslandPopulation& population, int island, const std::string& id) -> std::optional<Program> {
             const Program* program = population.find(island, id);
             return program ? std::optional<Program>(*program) : std::nullopt;
           },
           py::arg("island"), py::arg("id"))
      .def("note_child", &IslandPopulation::note_child, py::arg("island"), py::arg("id"))
      .def("best",
           [](const IslandPopulation& population, std::optional<int> island) -> std::optional<Program> {
             const Program* program = island ? population.best(*island) : population.best();
             return program ? std::optional<Program>(*program) : std::nullopt;
           },
           py::arg("island") = py::none())
      .def_property_readonly("config", &IslandPopulation::config);
}

void bind_archive(py::module_& m) {
  py::class_<FeatureDescriptor>(m, "FeatureDescriptor",
                                "One axis of the MAP-Elites grid; `compute` (a callable Program -> float) "
                                "replaces the built-in feature of that name.")
      .def(py::init([](std::string name, int bins, double min, double max,
                       std::function<double(const Program&)> compute) {
             return FeatureDescriptor{std::move(name), bins, min, max, std::move(compute)};
           }),
           py::arg("name"), py::arg("bins") = 8, py::arg("min") = 0.0, py::arg("max") = 1.0,
           py::arg("compute") = nullptr)
      .def_readwrite("name", &FeatureDescriptor::name)
      .def_readwrite("bins", &FeatureDescriptor::bins)
      .def_readwrite("min", &FeatureDescriptor::min)
      .def_readwrite("max", &FeatureDescriptor::max)
      .def_readwrite("compute", &FeatureDescriptor::compute);
  m.def("default_feature_descriptors", &default_feature_descriptors);

  py::class_<MigrationConfig>(m, "MigrationConfig")
      .def(py::init<>())
      .def_readwrite("interval", &MigrationConfig::interval)
      .def_readwrite("rate", &MigrationConfig::rate);

  py::class_<ArchiveConfig>(m, "ArchiveConfig")
      .def(py::init<>())
      .def_readwrite("islands", &ArchiveConfig::islands)
      .def_readwrite("features", &ArchiveConfig::features)
      .def_readwrite("elite_count", &ArchiveConfig::elite_count)
      .def_readwrite("migration", &ArchiveConfig::migration)
      .def("validate", &ArchiveConfig::validate);

  auto copies = [](const std::vector<const Program*>& programs) {
    std::vector<Program> result;
    for (const Program* program : programs) result.push_back(*program);
    return result;
  };
  py::class_<Archive>(m, "Archive", "The top-performing and the diverse programs.")
      .def("add", &Archive::add, py::arg("program"))
      .def("elites", [copies](const Archive& archive, int count) { return copies(archive.elites(count)); },
           py::arg("count") = 10)
      .def("inspirations",
           [copies](const Archive& archive, const Program& parent, int count, std::mt19937_64& rng) {
             return copies(archive.inspirations(parent, count, rng));
           },
           py::arg("parent"), py::arg("count"), py::arg("rng"))
      .def("__len__", &Archive::size);

  py::class_<MapElitesArchive, Archive>(m, "MapElitesArchive")
      .def(py::init<ArchiveConfig>(), py::arg("config") = ArchiveConfig{})
      .def("inspirations_with_reasons",
           [](const MapElitesArchive& archive, const Program& parent, int count, std::mt19937_64& rng) {
             std::vector<std::pair<Program, std::string>> result;
             for (const auto& [program, reason] : archive.inspirations_with_reasons(parent, count, rng)) {
               result.emplace_back(*program, reason);
             }
             return result;
           },
           py::arg("parent"), py::arg("count"), py::arg("rng"))
      .def("features", &MapElitesArchive::features, py::arg("program"))
      .def("cell_of", &MapElitesArchive::cell_of, py::arg("program"))
      .def("cell",
           [](const MapElitesArchive& archive, int island, const std::vector<int>& bins) -> std::optional<Program> {
             const Program* program = archive.cell(island, bins);
             return program ? std::optional<Program>(*program) : std::nullopt;
           },
           py::arg("island"), py::arg("bins"))
      .def("island_cells", [copies](const MapElitesArchive& archive, int island) { return copies(archive.island_cells(island)); },
           py::arg("island"))
      .def("island_best",
           [](const MapElitesArchive& archive, int island) -> std::optional<Program> {
             const Program* program = archive.island_best(island);
             return program ? std::optional<Program>(*program) : std::nullopt;
           },
           py::arg("island"))
      .def("coverage", &MapElitesArchive::coverage, py::arg("island"))
      .def("migrate", &MapElitesArchive::migrate)
      .def("island_has_code", &MapElitesArchive::island_has_code, py::arg("island"), py::arg("program"))
      .def_property_readonly("config", &MapElitesArchive::config);
}

void bind_novelty(py::module_& m) {
  m.def("source_tokens", &source_tokens, py::arg("source"));
  m.def("normalize_source", &normalize_source, py::arg("source"));
  m.def("normalized_source_hash", &normalized_source_hash, py::arg("language"), py::arg("source"));
  m.def("hashed_ngram_embedding", &hashed_ngram_embedding, py::arg("source"), py::arg("dimensions") = 256,
        py::arg("n") = 3);
  m.def("cosine_similarity", &cosine_similarity, py::arg("a"), py::arg("b"));

  py::class_<NoveltyConfig>(m, "NoveltyConfig",
                            "Near-duplicate rejection; `embedding` (a callable str -> list[float]) replaces the "
                            "hashed n-gram embedding.")
      .def(py::init<>())
      .def_readwrite("reject_near_duplicates", &NoveltyConfig::reject_near_duplicates)
      .def_readwrite("similarity_threshold", &NoveltyConfig::similarity_threshold)
      .def_readwrite("embedding_dimensions", &NoveltyConfig::embedding_dimensions)
      .def_readwrite("ngram", &NoveltyConfig::ngram)
      .def_readwrite("exempt_mutations", &NoveltyConfig::exempt_mutations)
      .def_readwrite("embedding", &NoveltyConfig::embedding)
      .def("validate", &NoveltyConfig::validate);

  py::class_<NoveltyVerdict> verdict(m, "NoveltyVerdict");
  py::enum_<NoveltyVerdict::Kind>(verdict, "Kind")
      .value("novel", NoveltyVerdict::Kind::novel)
      .value("duplicate", NoveltyVerdict::Kind::duplicate)
      .value("near_duplicate", NoveltyVerdict::Kind::near_duplicate);
  verdict.def_readonly("kind", &NoveltyVerdict::kind)
      .def_readonly("similar_to", &NoveltyVerdict::similar_to)
      .def_readonly("similarity", &NoveltyVerdict::similarity)
      .def_readonly("hash", &NoveltyVerdict::hash)
      .def_property_readonly("novel", &NoveltyVerdict::novel)
      .def("message", &NoveltyVerdict::message);

  py::class_<NoveltyFilter>(m, "NoveltyFilter")
      .def(py::init<NoveltyConfig>(), py::arg("config") = NoveltyConfig{})
      .def("check", &NoveltyFilter::check, py::arg("candidate"), py::arg("island"), py::arg("mutation"))
      .def("remember",
           py::overload_cast<const Candidate&, const std::string&, int>(&NoveltyFilter::remember),
           py::arg("candidate"), py::arg("id"), py::arg("island"))
      .def("duplicate_of", &NoveltyFilter::duplicate_of, py::arg("candidate"))
      .def("__len__", &NoveltyFilter::size);
}

void bind_mutators(py::module_& m) {
  py::class_<Attempt>(m, "Attempt", "A recent attempt on the same parent (short-term memory).")
      .def(py::init<>())
      .def_readwrite("child_id", &Attempt::child_id)
      .def_readwrite("mutation", &Attempt::mutation)
      .def_readwrite("status", &Attempt::status)
      .def_readwrite("summary", &Attempt::summary)
      .def_readwrite("speedup", &Attempt::speedup);

  py::class_<Inspiration>(m, "Inspiration", "A program shown next to the parent, with why it was chosen.")
      .def(py::init<>())
      .def(py::init([](Candidate candidate, Evaluation evaluation, std::string reason) {
             return Inspiration{std::move(candidate), std::move(evaluation), std::move(reason)};
           }),
           py::arg("candidate"), py::arg("evaluation"), py::arg("reason") = "")
      .def_readwrite("candidate", &Inspiration::candidate)
      .def_readwrite("evaluation", &Inspiration::evaluation)
      .def_readwrite("reason", &Inspiration::reason);

  py::class_<MutationRequest>(m, "MutationRequest", "What a mutator gets: the parent, its feedback, inspirations, memory.")
      .def(py::init<>())
      .def_readwrite("task", &MutationRequest::task)
      .def_readwrite("parent", &MutationRequest::parent)
      .def_readwrite("parent_evaluation", &MutationRequest::parent_evaluation)
      .def_readwrite("second_parent", &MutationRequest::second_parent)
      .def_readwrite("inspirations", &MutationRequest::inspirations)
      .def_readwrite("recent_attempts", &MutationRequest::recent_attempts)
      .def_readwrite("device", &MutationRequest::device)
      .def_readwrite("seed", &MutationRequest::seed)
      .def_readwrite("island", &MutationRequest::island)
      .def_readwrite("generation", &MutationRequest::generation)
      .def_readwrite("is_known_function", &MutationRequest::is_known,
                     "The engine's test for code already in the run (None outside a run).")
      .def("is_known",
           [](const MutationRequest& request, const Candidate& candidate) {
             return request.is_known ? request.is_known(candidate) : false;
           },
           py::arg("candidate"), "True when the candidate's code is already in the run.");

  py::class_<Proposal>(m, "Proposal",
                       "One proposal: a candidate, or the failure that explains why there is none, with the "
                       "prompt, response, model, tokens and latency for the record.")
      .def(py::init<>())
      .def(py::init([](std::optional<Candidate> candidate, std::string mutation, std::string failure, std::string prompt,
                       std::string response, std::string model, std::int64_t prompt_tokens,
                       std::int64_t completion_tokens, double latency_seconds) {
             Proposal proposal;
             proposal.candidate = std::move(candidate);
             proposal.mutation = std::move(mutation);
             proposal.failure = std::move(failure);
             proposal.prompt = std::move(prompt);
             proposal.response = std::move(response);
             proposal.model = std::move(model);
             proposal.prompt_tokens = prompt_tokens;
             proposal.completion_tokens = completion_tokens;
             proposal.latency_seconds = latency_seconds;
             return proposal;
           }),
           py::arg("candidate") = py::none(), py::arg("mutation") = "", py::arg("failure") = "",
           py::arg("prompt") = "", py::arg("response") = "", py::arg("model") = "", py::arg("prompt_tokens") = 0,
           py::arg("completion_tokens") = 0, py::arg("latency_seconds") = 0.0)
      .def_readwrite("candidate", &Proposal::candidate)
      .def_readwrite("mutation", &Proposal::mutation)
      .def_readwrite("failure", &Proposal::failure)
      .def_readwrite("prompt", &Proposal::prompt)
      .def_readwrite("response", &Proposal::response)
      .def_readwrite("model", &Proposal::model)
      .def_readwrite("prompt_tokens", &Proposal::prompt_tokens)
      .def_readwrite("completion_tokens", &Proposal::completion_tokens)
      .def_readwrite("latency_seconds", &Proposal::latency_seconds);

  py::class_<Mutator, PyMutator, py::smart_holder>(
      m, "Mutator",
      "Proposes revised candidates. Subclass it and implement propose(request) -> list[Proposal] and "
      "name() -> str; the engine calls propose() from several threads when several mutations are in flight.")
      .def(py::init<>())
      .def("propose", &Mutator::propose, py::arg("request"), py::call_guard<py::gil_scoped_release>())
      .def("name", &Mutator::name);

  py::class_<ParamMutatorOptions>(m, "ParamMutatorOptions")
      .def(py::init<>())
      .def_readwrite("max_changes", &ParamMutatorOptions::max_changes)
      .def_readwrite("neighbour_bias", &ParamMutatorOptions::neighbour_bias)
      .def_readwrite("max_attempts", &ParamMutatorOptions::max_attempts)
      .def_readwrite("enumeration_limit", &ParamMutatorOptions::enumeration_limit)
      .def_readwrite("proposals_per_request", &ParamMutatorOptions::proposals_per_request)
      .def_readwrite("check_block_size", &ParamMutatorOptions::check_block_size);

  py::class_<ParamMutator, Mutator, py::smart_holder>(
      m, "ParamMutator", "Varies the `// @tune` parameters of a candidate; needs no LLM.")
      .def(py::init<ParamMutatorOptions>(), py::arg("options") = ParamMutatorOptions{})
      .def_property_readonly("options", &ParamMutator::options)
      .def_static("rewrite", &ParamMutator::rewrite, py::arg("source"), py::arg("values"))
      .def_static("values_of", &ParamMutator::values_of, py::arg("source"));
}

void bind_run_store(py::module_& m) {
  m.attr("RUN_STORE_SCHEMA_VERSION") = kRunStoreSchemaVersion;

  py::class_<RunInfo>(m, "RunInfo")
      .def(py::init<>())
      .def_readwrite("id", &RunInfo::id)
      .def_readwrite("task_name", &RunInfo::task_name)
      .def_readwrite("config_json", &RunInfo::config_json)
      .def_readwrite("task_json", &RunInfo::task_json)
      .def_readwrite("language", &RunInfo::language)
      .def_readwrite("backend", &RunInfo::backend)
      .def_readwrite("device", &RunInfo::device)
      .def_readwrite("mutator", &RunInfo::mutator)
      .def_readwrite("seed", &RunInfo::seed)
      .def_readwrite("library_version", &RunInfo::library_version)
      .def_readwrite("started", &RunInfo::started)
      .def_readwrite("updated", &RunInfo::updated)
      .def_readwrite("finished", &RunInfo::finished)
      .def_readwrite("status", &RunInfo::status)
      .def_readwrite("stop_reason", &RunInfo::stop_reason)
      .def_readwrite("error", &RunInfo::error);

  py::class_<ProgramRecord>(m, "ProgramRecord")
      .def_readonly("run", &ProgramRecord::run)
      .def_readonly("id", &ProgramRecord::id)
      .def_readonly("candidate", &ProgramRecord::candidate)
      .def_readonly("normalized_hash", &ProgramRecord::normalized_hash)
      .def_readonly("created", &ProgramRecord::created);

  py::class_<EvaluationRecord>(m, "EvaluationRecord")
      .def_readonly("id", &EvaluationRecord::id)
      .def_readonly("run", &EvaluationRecord::run)
      .def_readonly("program_id", &EvaluationRecord::program_id)
      .def_readonly("sequence", &EvaluationRecord::sequence)
      .def_readonly("evaluation", &EvaluationRecord::evaluation)
      .def_readonly("created", &EvaluationRecord::created);

  py::class_<StepRecord>(m, "StepRecord")
      .def(py::init<>())
      .def_readwrite("id", &StepRecord::id)
      .def_readwrite("run", &StepRecord::run)
      .def_readwrite("island", &StepRecord::island)
      .def_readwrite("parent_ids", &StepRecord::parent_ids)
      .def_readwrite("selection", &StepRecord::selection)
      .def_readwrite("mutation", &StepRecord::mutation)
      .def_readwrite("inspiration_ids", &StepRecord::inspiration_ids)
      .def_readwrite("prompt", &StepRecord::prompt)
      .def_readwrite("response", &StepRecord::response)
      .def_readwrite("model", &StepRecord::model)
      .def_readwrite("prompt_tokens", &StepRecord::prompt_tokens)
      .def_readwrite("completion_tokens", &StepRecord::completion_tokens)
      .def_readwrite("latency_seconds", &StepRecord::latency_seconds)
      .def_readwrite("child_id", &StepRecord::child_id)
      .def_readwrite("evaluation_id", &StepRecord::evaluation_id)
      .def_readwrite("failure", &StepRecord::failure)
      .def_readwrite("propose_seconds", &StepRecord::propose_seconds)
      .def_readwrite("evaluate_seconds", &StepRecord::evaluate_seconds)
      .def_readwrite("created", &StepRecord::created)
      .def_property_readonly("pending", &StepRecord::pending);

  py::class_<MigrationRecord>(m, "MigrationRecord")
      .def_readonly("id", &MigrationRecord::id)
      .def_readonly("run", &MigrationRecord::run)
      .def_readonly("program_id", &MigrationRecord::program_id)
      .def_readonly("from_island", &MigrationRecord::from_island)
      .def_readonly("to_island", &MigrationRecord::to_island)
      .def_readonly("sequence", &MigrationRecord::sequence)
      .def_readonly("created", &MigrationRecord::created);

  py::class_<IslandRecord>(m, "IslandRecord")
      .def_readonly("run", &IslandRecord::run)
      .def_readonly("island", &IslandRecord::island)
      .def_readonly("programs", &IslandRecord::programs)
      .def_readonly("best_program_id", &IslandRecord::best_program_id)
      .def_readonly("best_fitness", &IslandRecord::best_fitness)
      .def_readonly("best_speedup", &IslandRecord::best_speedup)
      .def_readonly("updated", &IslandRecord::updated);

  py::class_<HistoryPoint>(m, "HistoryPoint")
      .def_readonly("sequence", &HistoryPoint::sequence)
      .def_readonly("program_id", &HistoryPoint::program_id)
      .def_readonly("status", &HistoryPoint::status)
      .def_readonly("speedup", &HistoryPoint::speedup)
      .def_readonly("best_speedup", &HistoryPoint::best_speedup);

  // Every call takes SQLite's time, not Python's: the GIL is released so a notebook stays responsive.
  using release = py::call_guard<py::gil_scoped_release>;
  py::class_<RunStore>(m, "RunStore",
                       "A run store (SQLite, WAL). Open read-only to inspect a run, also while it runs; "
                       "plain sqlite3 or pandas read the same file (docs/run-store.md).")
      .def(py::init<const std::string&, bool>(), py::arg("path"), py::arg("read_only") = false, release())
      .def_property_readonly("path", &RunStore::path)
      .def_property_readonly("read_only", &RunStore::read_only)
      .def_property_readonly("schema_version", &RunStore::schema_version)
      .def("create_run", &RunStore::create_run, py::arg("info"), release())
      .def("set_run_status", &RunStore::set_run_status, py::arg("run"), py::arg("status"), py::arg("stop_reason") = "",
           py::arg("error") = "", release())
      .def("run", &RunStore::run, py::arg("run"), release())
      .def("runs", &RunStore::runs, release())
      .def("latest_run", &RunStore::latest_run, py::arg("task_name") = "", release())
      .def("add_program", &RunStore::add_program, py::arg("run"), py::arg("id"), py::arg("candidate"),
           py::arg("normalized_hash"), release())
      .def("add_step", &RunStore::add_step, py::arg("step"), release())
      .def("add_evaluation", &RunStore::add_evaluation, py::arg("run"), py::arg("program_id"), py::arg("sequence"),
           py::arg("evaluation"), py::arg("step_id") = py::none(), py::arg("evaluate_seconds") = 0.0, release())
      .def("programs", &RunStore::programs, py::arg("run"), release())
      .def("program", &RunStore::program, py::arg("run"), py::arg("id"), release())
      .def("evaluations", &RunStore::evaluations, py::arg("run"), release())
      .def("evaluation_of", &RunStore::evaluation_of, py::arg("run"), py::arg("program_id"), release())
      .def("steps", &RunStore::steps, py::arg("run"), release())
      .def("pending_steps", &RunStore::pending_steps, py::arg("run"), release())
      .def("migrations", &RunStore::migrations, py::arg("run"), release())
      .def("islands", &RunStore::islands, py::arg("run"), release())
      .def("evaluation_count", &RunStore::evaluation_count, py::arg("run"), release())
      .def("best", &RunStore::best, py::arg("run"), py::arg("count") = 10, release())
      .def("lineage", &RunStore::lineage, py::arg("run"), py::arg("program_id"), release())
      .def("history", &RunStore::history, py::arg("run"), release());
}

void bind_evolution(py::module_& m) {
  py::class_<EvolutionConfig>(m, "EvolutionConfig", "Settings of an evolution run (docs/search.md).")
      .def(py::init<>())
      .def_readwrite("islands", &EvolutionConfig::islands)
      .def_readwrite("island_capacity", &EvolutionConfig::island_capacity)
      .def_readwrite("selection", &EvolutionConfig::selection)
      .def_readwrite("features", &EvolutionConfig::features)
      .def_readwrite("elite_count", &EvolutionConfig::elite_count)
      .def_readwrite("migration", &EvolutionConfig::migration)
      .def_readwrite("novelty", &EvolutionConfig::novelty)
      .def_readwrite("inspirations", &EvolutionConfig::inspirations)
      .def_readwrite("crossover_rate", &EvolutionConfig::crossover_rate)
      .def_readwrite("memory", &EvolutionConfig::memory)
      .def_readwrite("mutations_in_flight", &EvolutionConfig::mutations_in_flight)
      .def_readwrite("budget", &EvolutionConfig::budget)
      .def_readwrite("wall_seconds", &EvolutionConfig::wall_seconds)
      .def_readwrite("target_speedup", &EvolutionConfig::target_speedup)
      .def_readwrite("stagnation", &EvolutionConfig::stagnation)
      .def_readwrite("max_failed_proposals", &EvolutionConfig::max_failed_proposals)
      .def_readwrite("seed", &EvolutionConfig::seed)
      .def_readwrite("db_path", &EvolutionConfig::db_path)
      .def_readwrite("resume", &EvolutionConfig::resume)
      .def_readwrite("language", &EvolutionConfig::language)
      .def_readwrite("device", &EvolutionConfig::device)
      .def("validate", &EvolutionConfig::validate)
      .def("to_json", &EvolutionConfig::to_json)
      .def_static("from_json", &EvolutionConfig::from_json, py::arg("json_text"));

  py::class_<Progress>(m, "Progress", "What the engine reports after each step.")
      .def_readonly("run_id", &Progress::run_id)
      .def_readonly("evaluations", &Progress::evaluations)
      .def_readonly("budget", &Progress::budget)
      .def_readonly("steps", &Progress::steps)
      .def_readonly("failed_proposals", &Progress::failed_proposals)
      .def_readonly("duplicates", &Progress::duplicates)
      .def_readonly("elapsed_seconds", &Progress::elapsed_seconds)
      .def_readonly("best_program_id", &Progress::best_program_id)
      .def_readonly("best_fitness", &Progress::best_fitness)
      .def_readonly("best_speedup", &Progress::best_speedup)
      .def_readonly("program_id", &Progress::program_id)
      .def_readonly("mutation", &Progress::mutation)
      .def_readonly("island", &Progress::island)
      .def_readonly("status", &Progress::status)
      .def_readonly("speedup", &Progress::speedup)
      .def_readonly("message", &Progress::message)
      .def_readonly("improved", &Progress::improved);

  py::class_<EvolutionResult>(m, "EvolutionResult")
      .def_readonly("run_id", &EvolutionResult::run_id)
      .def_readonly("db_path", &EvolutionResult::db_path)
      .def_readonly("stop_reason", &EvolutionResult::stop_reason)
      .def_readonly("best", &EvolutionResult::best)
      .def_readonly("best_speedup", &EvolutionResult::best_speedup)
      .def_readonly("evaluations", &EvolutionResult::evaluations)
      .def_readonly("session_evaluations", &EvolutionResult::session_evaluations)
      .def_readonly("steps", &EvolutionResult::steps)
      .def_readonly("failed_proposals", &EvolutionResult::failed_proposals)
      .def_readonly("duplicates", &EvolutionResult::duplicates)
      .def_readonly("near_duplicates", &EvolutionResult::near_duplicates)
      .def_readonly("migrations", &EvolutionResult::migrations)
      .def_readonly("pending", &EvolutionResult::pending)
      .def_readonly("wall_seconds", &EvolutionResult::wall_seconds)
      .def_readonly("evaluator_seconds", &EvolutionResult::evaluator_seconds)
      .def_readonly("mutator_seconds", &EvolutionResult::mutator_seconds)
      .def_readonly("store_seconds", &EvolutionResult::store_seconds)
      .def_readonly("engine_share", &EvolutionResult::engine_share);

  py::class_<Evolution>(m, "Evolution",
                        "The evolution loop. run() releases the GIL; stop() (from any thread) ends it cleanly.")
      .def(py::init<Task, std::shared_ptr<Evaluator>, std::shared_ptr<Mutator>, EvolutionConfig>(), py::arg("task"),
           py::arg("evaluator"), py::arg("mutator"), py::arg("config") = EvolutionConfig{})
      .def("on_progress", [](Evolution& evolution, const py::object& callback) { evolution.on_progress(wrap_progress(callback)); },
           py::arg("callback"), "Calls callback(progress) after each step, on the thread running run().")
      .def("run", &Evolution::run, py::call_guard<py::gil_scoped_release>())
      .def("stop", &Evolution::stop)
      .def_property_readonly("running", &Evolution::running)
      .def_property_readonly("stop_requested", &Evolution::stop_requested)
      .def_property_readonly("run_id", &Evolution::run_id)
      .def_property_readonly("config", &Evolution::config)
      .def_property_readonly("task", &Evolution::task)
      .def_property_readonly("population", &Evolution::population, py::return_value_policy::reference_internal)
      .def_property_readonly("archive", &Evolution::archive, py::return_value_policy::reference_internal);
}

}  // namespace

void bind_search(py::module_& m) {
  bind_selection(m);
  bind_population(m);
  bind_archive(m);
  bind_novelty(m);
  bind_mutators(m);
  bind_run_store(m);
  bind_evolution(m);
}

}  // namespace kernelsmith::python
