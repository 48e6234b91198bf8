// The search: selection, population, archive, novelty, the Mutator interface (subclassable from Python),
// the parameter mutator, the run store and the evolution engine.
#include <fmt/format.h>
#include <pybind11/functional.h>
#include <pybind11/stl.h>

#include "bindings.hpp"
#include "features_caster.hpp"
#include "kernelsmith/archive.hpp"
#include "kernelsmith/evolution.hpp"
#include "kernelsmith/novelty.hpp"
#include "kernelsmith/param_mutator.hpp"
#include "kernelsmith/population.hpp"
#include "kernelsmith/program.hpp"
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
  bool can_mutate(const Candidate& parent) const override { PYBIND11_OVERRIDE(bool, Mutator, can_mutate, parent); }
  void cancel() override { PYBIND11_OVERRIDE(void, Mutator, cancel, ); }
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
  m.def("parse_selection_policy", &parse_selection_policy, py::arg("name"),
        "The SelectionPolicy named 'uniform', 'tournament', 'weighted' or 'power_law' (also 'power-law'); raises "
        "ValidationError otherwise.");

  py::class_<SelectionConfig>(m, "SelectionConfig",
                              "Parent selection: a policy, plus shares of exploration (uniform), exploitation "
                              "(top programs) and repair (incorrect programs).")
      .def(py::init<>())
      .def_readwrite("policy", &SelectionConfig::policy,
                     "How the 'policy' picks choose among the correct programs (default weighted).")
      .def_readwrite("tournament_size", &SelectionConfig::tournament_size,
                     "Tournament: programs drawn uniformly (with replacement); the fittest wins. At least 1.")
      .def_readwrite("sharpness", &SelectionConfig::sharpness,
                     "Weighted: slope of the sigmoid over (fitness - median) / MAD; 0 ignores fitness (only the "
                     "children count damps).")
      .def_readwrite("power_law_alpha", &SelectionConfig::power_law_alpha,
                     "Power law: exponent over the rank, weight (rank + 1)^-alpha; 0 is uniform, larger concentrates "
                     "on the best.")
      .def_readwrite("exploration_ratio", &SelectionConfig::exploration_ratio,
                     "Share of picks, in [0, 1], uniform over the island's correct programs (diversity).")
      .def_readwrite("exploitation_ratio", &SelectionConfig::exploitation_ratio,
                     "Share of picks, in [0, 1], uniform over the island's exploitation_top best programs (greed).")
      .def_readwrite("exploitation_top", &SelectionConfig::exploitation_top,
                     "How many of the island's best programs the exploitation picks draw from (at least 1).")
      .def_readwrite("repair_rate", &SelectionConfig::repair_rate,
                     "Share of picks, in [0, 1], that take an incorrect program (when the island has one) so that it "
                     "gets fixed.")
      .def("validate", &SelectionConfig::validate,
           "Raises ValidationError naming the field when a ratio is outside [0, 1], the ratios sum above 1, or a size "
           "is below 1.");

  py::class_<std::mt19937_64>(m, "Rng", "A seeded 64-bit Mersenne Twister, for the selection and archive calls.")
      .def(py::init<std::uint64_t>(), py::arg("seed") = 0)
      .def("next", [](std::mt19937_64& rng) { return rng(); },
           "The next 64-bit random number (advances the generator).");
}

void bind_program(py::module_& m) {
  py::class_<Program>(m, "Program",
                      "An evaluated candidate as the search sees it. Its id is the candidate's content id, computed "
                      "once when the Program is made; the candidate is read-only from then on.")
      .def(py::init<>())
      .def(py::init<Candidate, Evaluation, int, int, std::int64_t>(), py::arg("candidate"), py::arg("evaluation"),
           py::arg("island") = 0, py::arg("generation") = 0, py::arg("sequence") = 0,
           "A program of the candidate with its evaluation, whose candidate_id is set to the program's id.")
      // A copy: changing the candidate in place would leave the program's id stale.
      .def_property_readonly("candidate", &Program::candidate, py::return_value_policy::copy,
                             "A copy of the Candidate: language, source and lineage (read-only: its id is the "
                             "program's).")
      .def_readwrite("evaluation", &Program::evaluation, "Its Evaluation (status, timing, fitness, speedup).")
      .def_readwrite("island", &Program::island, "Index of the island the program lives on.")
      .def_readwrite("generation", &Program::generation, "Mutation steps from a root (reference or seed: 0).")
      .def_readwrite("children", &Program::children,
                     "Children proposed from it so far (damps its chance of being picked again).")
      .def_readwrite("sequence", &Program::sequence, "Evaluation order, from 0: the engine's clock.")
      .def_readwrite("migrant", &Program::migrant,
                     "True for a copy that arrived on this island by migration; migrants are never migrated again.")
      .def_property_readonly("id", &Program::id,
                             "The candidate's content id (16 hex digits), computed once when the Program was made.")
      .def_property_readonly("fitness", &Program::fitness, "The evaluation's fitness (higher is better).")
      .def_property_readonly("correct", &Program::correct, "True when the evaluation's status is ok.")
      .def("__repr__", &repr_program<Program>);
  m.def("better_program", &better_program, py::arg("a"), py::arg("b"),
        "True when program a ranks above b: correct before incorrect, then higher fitness, then the earlier "
        "evaluation.");
}

void bind_population(py::module_& m) {

  m.def("selection_weights",
        [](const std::vector<Program>& programs, const SelectionConfig& config) {
          std::vector<const Program*> view;
          for (const Program& program : programs) view.push_back(&program);
          return selection_weights(view, config);
        },
        py::arg("programs"), py::arg("config"), "The policy's relative weight of each program.");

  py::class_<PopulationConfig>(m, "PopulationConfig",
                               "Islands, their capacity and the parent selection of an IslandPopulation.")
      .def(py::init<>())
      .def_readwrite("islands", &PopulationConfig::islands, "Number of islands (at least 1).")
      .def_readwrite("island_capacity", &PopulationConfig::island_capacity,
                     "Most programs kept per island; beyond it the lowest-ranked program that is not the island's "
                     "best leaves (failures first). 0 keeps every program.")
      .def_readwrite("selection", &PopulationConfig::selection, "The SelectionConfig used to pick parents.")
      .def("validate", &PopulationConfig::validate, "Raises ValidationError naming the field.");

  py::class_<ParentChoice>(m, "ParentChoice", "A parent pick with the SelectionMode that made it.")
      .def_property_readonly("program", [](const ParentChoice& choice) { return *choice.program; },
                             "The picked Program (a copy).")
      .def_readonly("mode", &ParentChoice::mode, "How it was picked: policy, exploration, exploitation or repair.");

  py::class_<Population>(m, "Population", "The live programs of each island.")
      .def("add", &Population::add, py::arg("program"), "Adds a program to its island.")
      .def("select_parent", &Population::select_parent, py::arg("island"), py::arg("rng"),
           py::return_value_policy::copy,
           "Picks a parent on an island with the Rng; raises NotFoundError when the island has no program.")
      .def("island_programs",
           [](const Population& population, int island) {
             std::vector<Program> programs;
             for (const Program* program : population.island_programs(island)) programs.push_back(*program);
             return programs;
           },
           py::arg("island"), "Copies of the programs on an island.")
      .def_property_readonly("islands", &Population::islands, "Number of islands.")
      .def("__len__", &Population::size);

  py::class_<IslandPopulation, Population>(m, "IslandPopulation",
                                           "The built-in population: one list of programs per island, parents picked "
                                           "by the config's SelectionConfig.")
      .def(py::init<PopulationConfig>(), py::arg("config") = PopulationConfig{})
      .def("choose_parent",
           [](const IslandPopulation& population, int island, std::mt19937_64& rng,
              const std::optional<std::function<bool(const Program&)>>& eligible) -> std::optional<ParentChoice> {
             const ParentChoice choice = population.choose_parent(island, rng, eligible.value_or(ParentFilter{}));
             return choice.program ? std::optional<ParentChoice>(choice) : std::nullopt;
           },
           py::arg("island"), py::arg("rng"), py::arg("eligible") = py::none(),
           "select_parent() with the mode that made the pick, as a ParentChoice. `eligible` (a callable Program -> "
           "bool) limits the pick to the programs it accepts; None when it accepts none of the island's programs.")
      .def("find",
           [](const IslandPopulation& population, int island, const std::string& id) -> std::optional<Program> {
             const Program* program = population.find(island, id);
             return program ? std::optional<Program>(*program) : std::nullopt;
           },
           py::arg("island"), py::arg("id"), "The program with this id on the island, or None.")
      .def("note_child", &IslandPopulation::note_child, py::arg("island"), py::arg("id"),
           "Counts a child proposed from the program (no-op when it is no longer on the island).")
      .def("best",
           [](const IslandPopulation& population, std::optional<int> island) -> std::optional<Program> {
             const Program* program = island ? population.best(*island) : population.best();
             return program ? std::optional<Program>(*program) : std::nullopt;
           },
           py::arg("island") = py::none(),
           "The best correct program of the island, or of all islands when island is None; None when there is none.")
      .def_property_readonly("config", &IslandPopulation::config, "The PopulationConfig it was made with.");
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
      .def_readwrite("bins", &FeatureDescriptor::bins,
                     "Number of equal bins over [min, max]; values outside fall into the end bins.")
      .def_readwrite("min", &FeatureDescriptor::min, "Lower end of the binned range.")
      .def_readwrite("max", &FeatureDescriptor::max, "Upper end of the binned range.")
      .def_readwrite("compute", &FeatureDescriptor::compute,
                     "A callable Program -> float giving the value; None uses the built-in feature of this name "
                     "('complexity', 'registers', 'shared_memory', 'log_speedup', 'kernels').");
  m.def("default_feature_descriptors", &default_feature_descriptors,
        "The default MAP-Elites axes: complexity (6 bins over [-1, 2]), registers (6 bins over [0, 192]), log_speedup "
        "(8 bins over [-1, 3]).");

  py::class_<MigrationConfig>(m, "MigrationConfig", "Ring migration between islands: how often and how much.")
      .def(py::init<>())
      .def_readwrite("interval", &MigrationConfig::interval, "Evaluations between migrations; 0 never migrates.")
      .def_readwrite("rate", &MigrationConfig::rate,
                     "Share of an island's archived non-migrant programs copied to the next island (at least one).");

  py::class_<ArchiveConfig>(m, "ArchiveConfig",
                            "Settings of a MapElitesArchive: islands, grid axes, elite set size and migration.")
      .def(py::init<>())
      .def_readwrite("islands", &ArchiveConfig::islands, "Number of islands, each with its own grid (at least 1).")
      .def_readwrite("features", &ArchiveConfig::features, "The grid's axes, a list of FeatureDescriptor.")
      .def_readwrite("elite_count", &ArchiveConfig::elite_count,
                     "Size of the elite set (the best correct programs over all islands).")
      .def_readwrite("migration", &ArchiveConfig::migration, "The MigrationConfig.")
      .def("validate", &ArchiveConfig::validate, "Raises ValidationError naming the field.");

  auto copies = [](const std::vector<const Program*>& programs) {
    std::vector<Program> result;
    for (const Program* program : programs) result.push_back(*program);
    return result;
  };
  py::class_<Archive>(m, "Archive", "The top-performing and the diverse programs.")
      .def("add", &Archive::add, py::arg("program"), "Offers a program; True when it entered a cell or the elite set.")
      .def("elites", [copies](const Archive& archive, int count) { return copies(archive.elites(count)); },
           py::arg("count") = 10, "The best correct programs across islands, best first (at most count).")
      .def("inspirations",
           [copies](const Archive& archive, const Program& parent, int count, std::mt19937_64& rng) {
             return copies(archive.inspirations(parent, count, rng));
           },
           py::arg("parent"), py::arg("count"), py::arg("rng"),
           "Up to count programs to show next to the parent: the island's best, top programs, nearby cells, diverse "
           "ones.")
      .def("__len__", &Archive::size);

  py::class_<MapElitesArchive, Archive>(m, "MapElitesArchive",
                                        "The built-in archive: a MAP-Elites grid per island plus an elite set. Only "
                                        "correct programs enter; a cell keeps the fitter of two programs (the "
                                        "incumbent on ties).")
      .def(py::init<ArchiveConfig>(), py::arg("config") = ArchiveConfig{})
      .def("inspirations_with_reasons",
           [](const MapElitesArchive& archive, const Program& parent, int count, std::mt19937_64& rng) {
             std::vector<std::pair<Program, std::string>> result;
             for (const auto& [program, reason] : archive.inspirations_with_reasons(parent, count, rng)) {
               result.emplace_back(*program, reason);
             }
             return result;
           },
           py::arg("parent"), py::arg("count"), py::arg("rng"),
           "inspirations() as (program, reason) pairs, reason one of 'island_best', 'top', 'nearby_cell', 'diverse'.")
      .def("features", &MapElitesArchive::features, py::arg("program"),
           "The program's value on each descriptor, in the config's order.")
      .def("cell_of", &MapElitesArchive::cell_of, py::arg("program"), "The program's bin index on each descriptor.")
      .def("cell",
           [](const MapElitesArchive& archive, int island, const std::vector<int>& bins) -> std::optional<Program> {
             const Program* program = archive.cell(island, bins);
             return program ? std::optional<Program>(*program) : std::nullopt;
           },
           py::arg("island"), py::arg("bins"), "The occupant of the cell with these bin indices on an island, or None.")
      .def("island_cells", [copies](const MapElitesArchive& archive, int island) { return copies(archive.island_cells(island)); },
           py::arg("island"), "The occupants of an island's cells.")
      .def("island_best",
           [](const MapElitesArchive& archive, int island) -> std::optional<Program> {
             const Program* program = archive.island_best(island);
             return program ? std::optional<Program>(*program) : std::nullopt;
           },
           py::arg("island"), "The island's best archived program, or None.")
      .def("coverage", &MapElitesArchive::coverage, py::arg("island"),
           "Occupied cells over all cells of an island's grid, in [0, 1].")
      .def("migrate", &MapElitesArchive::migrate,
           "Ring migration: each island's best share of non-migrant programs is copied to island (i + 1) mod islands "
           "unless the same code is there; returns the copies (migrant=True).")
      .def("island_has_code", &MapElitesArchive::island_has_code, py::arg("island"), py::arg("program"),
           "True when a program with this normalised code has been offered on the island.")
      .def_property_readonly("config", &MapElitesArchive::config, "The ArchiveConfig it was made with.");
}

void bind_novelty(py::module_& m) {
  m.def("source_tokens", &source_tokens, py::arg("source"),
        "The source's tokens: identifiers, numbers, string literals, operators; comments dropped except '// "
        "@directive' lines (one token each); preprocessor lines end with a '\\n' token.");
  m.def("normalize_source", &normalize_source, py::arg("source"),
        "The tokens joined by single spaces: sources differing only in comments or layout normalise alike.");
  m.def("normalized_source_hash", &normalized_source_hash, py::arg("language"), py::arg("source"),
        "16 hex digits (64-bit FNV-1a) of the language and the normalised source.");
  m.def("hashed_ngram_embedding", &hashed_ngram_embedding, py::arg("source"), py::arg("dimensions") = 256,
        py::arg("n") = 3,
        "The default embedding: token n-grams hashed (with a sign) into `dimensions` buckets, L2-normalised.");
  m.def("cosine_similarity", &cosine_similarity, py::arg("a"), py::arg("b"),
        "Cosine similarity of two equal-length vectors (0 when either is zero); raises ValidationError on a length "
        "mismatch.");

  py::class_<NoveltyConfig>(m, "NoveltyConfig",
                            "Near-duplicate rejection; `embedding` (a callable str -> list[float]) replaces the "
                            "hashed n-gram embedding.")
      .def(py::init<>())
      .def_readwrite("reject_near_duplicates", &NoveltyConfig::reject_near_duplicates,
                     "Reject candidates too similar to a program on the same island (exact duplicates are always "
                     "rejected).")
      .def_readwrite("similarity_threshold", &NoveltyConfig::similarity_threshold,
                     "Cosine similarity at or above which a candidate is a near duplicate (default 0.995).")
      .def_readwrite("embedding_dimensions", &NoveltyConfig::embedding_dimensions,
                     "Length of the hashed n-gram embedding.")
      .def_readwrite("ngram", &NoveltyConfig::ngram, "Tokens per n-gram of the hashed embedding.")
      .def_readwrite("exempt_mutations", &NoveltyConfig::exempt_mutations,
                     "Mutations exempt from the near-duplicate test (default ['param']: small edits by design).")
      .def_readwrite("embedding", &NoveltyConfig::embedding,
                     "A callable str -> list[float] replacing the hashed n-gram embedding; None for the default.")
      .def("validate", &NoveltyConfig::validate, "Raises ValidationError naming the field.");

  py::class_<NoveltyVerdict> verdict(m, "NoveltyVerdict",
                                     "Whether a candidate is new: novel, a duplicate or a near duplicate, and of "
                                     "what.");
  py::enum_<NoveltyVerdict::Kind>(verdict, "Kind")
      .value("novel", NoveltyVerdict::Kind::novel)
      .value("duplicate", NoveltyVerdict::Kind::duplicate)
      .value("near_duplicate", NoveltyVerdict::Kind::near_duplicate);
  verdict.def_readonly("kind", &NoveltyVerdict::kind, "NoveltyVerdict.Kind: novel, duplicate or near_duplicate.")
      .def_readonly("similar_to", &NoveltyVerdict::similar_to,
                    "Id of the known program it duplicates or resembles most (empty when novel and nothing is known).")
      .def_readonly("similarity", &NoveltyVerdict::similarity, "Cosine similarity to that program, in [-1, 1].")
      .def_readonly("hash", &NoveltyVerdict::hash, "The candidate's normalised source hash (16 hex digits).")
      .def_property_readonly("novel", &NoveltyVerdict::novel, "True when kind is novel.")
      .def("message", &NoveltyVerdict::message,
           "A one-line explanation, e.g. 'duplicate of program 1a2b... (equal after stripping comments and "
           "whitespace)'.");

  py::class_<NoveltyFilter>(m, "NoveltyFilter",
                            "Remembers the programs seen in a run (all islands for exact duplicates, per island for "
                            "near ones). Thread-safe.")
      .def(py::init<NoveltyConfig>(), py::arg("config") = NoveltyConfig{})
      .def("check", &NoveltyFilter::check, py::arg("candidate"), py::arg("island"), py::arg("mutation"),
           "The NoveltyVerdict for a candidate proposed on an island by a mutation (exempt mutations skip the "
           "near-duplicate test).")
      .def("remember",
           py::overload_cast<const Candidate&, const std::string&, int>(&NoveltyFilter::remember),
           py::arg("candidate"), py::arg("id"), py::arg("island"),
           "Records a program under its id (the exact hash always; the embedding on the island).")
      .def("duplicate_of", &NoveltyFilter::duplicate_of, py::arg("candidate"),
           "The id of a known program equal to the candidate after normalisation, or ''.")
      .def("__len__", &NoveltyFilter::size);
}

void bind_mutators(py::module_& m) {
  py::class_<Attempt>(m, "Attempt", "A recent attempt on the same parent (short-term memory).")
      .def(py::init<>())
      .def_readwrite("child_id", &Attempt::child_id, "Id of the child the attempt produced (empty when none).")
      .def_readwrite("mutation", &Attempt::mutation, "The mutation that made it, e.g. 'param', 'llm_diff'.")
      .def_readwrite("status", &Attempt::status, "The child's evaluation Status.")
      .def_readwrite("summary", &Attempt::summary, "The evaluation's one-line message.")
      .def_readwrite("speedup", &Attempt::speedup, "The child's speedup over the baseline (0 when it failed).")
      .def_readwrite("skill", &Attempt::skill, "The skill the mutator said it applied; empty when it named none.");

  py::class_<Inspiration>(m, "Inspiration", "A program shown next to the parent, with why it was chosen.")
      .def(py::init<>())
      .def(py::init([](Candidate candidate, Evaluation evaluation, std::string reason) {
             return Inspiration{std::move(candidate), std::move(evaluation), std::move(reason)};
           }),
           py::arg("candidate"), py::arg("evaluation"), py::arg("reason") = "")
      .def_readwrite("candidate", &Inspiration::candidate, "The inspiring program's Candidate.")
      .def_readwrite("evaluation", &Inspiration::evaluation, "Its Evaluation.")
      .def_readwrite("reason", &Inspiration::reason,
                     "Why it was chosen: 'island_best', 'top', 'nearby_cell' or 'diverse'.");

  py::class_<MutationRequest>(m, "MutationRequest", "What a mutator gets: the parent, its feedback, inspirations, memory.")
      .def(py::init<>())
      // The engine shares one Task between all requests of a run: reading gives a copy (changing it
      // cannot reach the other requests), assigning replaces this request's task.
      .def_property(
          "task", [](const MutationRequest& request) { return request.task(); },
          [](MutationRequest& request, Task task) { request.shared_task = std::make_shared<const Task>(std::move(task)); },
          "The Task being optimised (read: a copy of the run's shared task; raises ValidationError when the request "
          "has none).")
      .def_readwrite("parent", &MutationRequest::parent, "The Candidate to revise.")
      .def_readwrite("language", &MutationRequest::language,
                     "The kernel language the children must be written in (the engine sets the run's, which may "
                     "differ from the parent's); empty: the parent's.")
      .def_readwrite("other_languages", &MutationRequest::other_languages,
                     "Languages the answer may be written in instead, each as a whole program (a run of ModelNew "
                     "files also takes the backend's kernel language); the child takes its answer's language.")
      .def("child_language", &MutationRequest::child_language,
           "The language of the children: `language`, else the parent's, else 'cuda'.")
      .def_readwrite("parent_evaluation", &MutationRequest::parent_evaluation,
                     "The parent's Evaluation (None when not evaluated).")
      .def_readwrite("second_parent", &MutationRequest::second_parent,
                     "A second parent Candidate for crossover, when the engine offers one, else None.")
      .def_readwrite("inspirations", &MutationRequest::inspirations,
                     "Programs shown next to the parent, a list of Inspiration.")
      .def_readwrite("recent_attempts", &MutationRequest::recent_attempts,
                     "Recent attempts on the same parent (short-term memory), a list of Attempt.")
      .def_readwrite("experience", &MutationRequest::experience,
                     "Experience the engine retrieved for this request, best first, a list of RetrievedItem "
                     "(docs/memory.md).")
      .def_readwrite("device", &MutationRequest::device,
                     "The DeviceInfo the candidates will run on (for constraints and prompts).")
      .def_readwrite("seed", &MutationRequest::seed, "Seed for the mutator's random choices (differs per request).")
      .def_readwrite("island", &MutationRequest::island, "The island the parent lives on.")
      .def_readwrite("generation", &MutationRequest::generation, "The children's generation (the parent's + 1).")
      .def_readwrite("is_known_function", &MutationRequest::is_known,
                     "The engine's test for code already in the run (None outside a run).")
      .def("is_known",
           [](const MutationRequest& request, const Candidate& candidate) {
             return request.is_known ? request.is_known(candidate) : false;
           },
           py::arg("candidate"), "True when the candidate's code is already in the run.");
  m.def("request_feedback", &request_feedback, py::arg("request"),
        "A MutationRequest's features beyond its task (a dict): the parent's feedback, the language and the device.");
  m.def("request_features", &request_features, py::arg("request"),
        "Everything a MutationRequest offers (a dict): its task's features and request_feedback.");

  py::class_<LlmAttempt>(m, "LlmAttempt",
                         "One HTTP attempt of an LLM request (a client retries after 429, 5xx, timeouts and dropped "
                         "connections); stored per step in the run store's llm_attempts table.")
      .def(py::init([](int http_status, std::string error, double seconds) {
             return LlmAttempt{http_status, std::move(error), seconds};
           }),
           py::arg("http_status") = 0, py::arg("error") = "", py::arg("seconds") = 0.0)
      .def_readwrite("http_status", &LlmAttempt::http_status,
                     "The HTTP status of the server's answer; 0 when none came (timeout, connection error, cancelled).")
      .def_readwrite("error", &LlmAttempt::error,
                     "Empty when the attempt brought the answer used; else what went wrong, starting with its kind: "
                     "'HTTP 500 from URL: body', 'timeout: ...', 'connection error: ...', 'bad answer: ...', "
                     "'cancelled: ...'.")
      .def_readwrite("seconds", &LlmAttempt::seconds, "From sending the request to the answer or the failure.")
      .def("__repr__", [](const LlmAttempt& attempt) {
        return "LlmAttempt(http_status=" + std::to_string(attempt.http_status) + ", error='" + attempt.error +
               "', seconds=" + std::to_string(attempt.seconds) + ")";
      });

  py::class_<Proposal>(m, "Proposal",
                       "One proposal: a candidate, or the failure that explains why there is none, with the "
                       "prompt, response, model, tokens and latency for the record.")
      .def(py::init<>())
      .def(py::init([](std::optional<Candidate> candidate, std::string mutation, std::string failure, std::string prompt,
                       std::string response, std::string model, std::int64_t prompt_tokens,
                       std::int64_t completion_tokens, double latency_seconds, std::vector<std::string> exhausted_ids,
                       std::string skill) {
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
             proposal.exhausted_ids = std::move(exhausted_ids);
             proposal.skill = std::move(skill);
             return proposal;
           }),
           py::arg("candidate") = py::none(), py::arg("mutation") = "", py::arg("failure") = "",
           py::arg("prompt") = "", py::arg("response") = "", py::arg("model") = "", py::arg("prompt_tokens") = 0,
           py::arg("completion_tokens") = 0, py::arg("latency_seconds") = 0.0,
           py::arg("exhausted_ids") = std::vector<std::string>{}, py::arg("skill") = "")
      .def_readwrite("candidate", &Proposal::candidate,
                     "The proposed Candidate, or None when `failure` says why there is none.")
      .def_readwrite("mutation", &Proposal::mutation,
                     "The mutation kind recorded in the lineage: 'param', 'llm_full', 'llm_diff', 'llm_crossover', "
                     "...")
      .def_readwrite("failure", &Proposal::failure,
                     "Why there is no candidate (garbled response, diff matched nothing, client error); empty "
                     "otherwise.")
      .def_readwrite("skill", &Proposal::skill,
                     "The skill applied (a skill bank name, or the model's own): what the experience memory learns "
                     "the value of; empty is recorded as 'unspecified'.")
      .def_readwrite("prompt", &Proposal::prompt,
                     "The exact messages sent to the model, as a JSON array (empty for non-LLM mutators).")
      .def_readwrite("response", &Proposal::response, "The model's answer text.")
      .def_readwrite("model", &Proposal::model, "The model that answered, as the server names it.")
      .def_readwrite("prompt_tokens", &Proposal::prompt_tokens, "Prompt tokens the model reported.")
      .def_readwrite("completion_tokens", &Proposal::completion_tokens, "Completion tokens the model reported.")
      .def_readwrite("latency_seconds", &Proposal::latency_seconds, "Wall time of the model call, in seconds.")
      .def_readwrite("llm_attempts", &Proposal::llm_attempts,
                     "The HTTP attempts of the model call, a list of LlmAttempt (empty for mutators that call no model).")
      .def_readwrite("exhausted_ids", &Proposal::exhausted_ids,
                     "Ids of programs from which the mutator can propose nothing new for the rest of the run (the "
                     "parent, and others it knows offer the same variants); the engine stops picking them as "
                     "parents.")
      .def_readwrite("known_candidate", &Proposal::known_candidate,
                     "The Candidate a mutator withheld because request.is_known() said the run holds it already "
                     "(candidate is then None): the engine records which stored program it equals.");

  py::class_<Mutator, PyMutator, py::smart_holder>(
      m, "Mutator",
      "Proposes revised candidates. Subclass it and implement propose(request) -> list[Proposal] and "
      "name() -> str, and can_mutate(parent) -> bool when it cannot work from every program; the engine calls "
      "propose() from several threads when several mutations are in flight.")
      .def(py::init<>())
      .def("propose", &Mutator::propose, py::arg("request"), py::call_guard<py::gil_scoped_release>(),
           "Revised candidates for a request, a list of Proposal; called from several threads when several mutations "
           "are in flight.")
      .def("name", &Mutator::name)
      .def("can_mutate", &Mutator::can_mutate, py::arg("parent"),
           "Whether the mutator can work from this parent Candidate at all; the engine picks parents only among the "
           "programs it accepts and asks once per program (default: True).")
      .def("cancel", &Mutator::cancel, py::call_guard<py::gil_scoped_release>(),
           "Asks the calls to propose() in flight to give up soon; the engine calls it when a run must end (stop(), "
           "wall time) and stops waiting for them 2 s later. Later calls are not affected. Default: nothing.");

  py::class_<ParamMutatorOptions>(m, "ParamMutatorOptions", "Settings of the ParamMutator.")
      .def(py::init<>())
      .def_readwrite("max_changes", &ParamMutatorOptions::max_changes,
                     "Most parameters changed by one mutation (1 or up to this many are drawn).")
      .def_readwrite("neighbour_bias", &ParamMutatorOptions::neighbour_bias,
                     "Chance, in [0, 1], that a changed parameter moves to a neighbouring allowed value (declaration "
                     "order) rather than any other.")
      .def_readwrite("max_attempts", &ParamMutatorOptions::max_attempts,
                     "Random draws tried before enumerating the whole space (when it is small).")
      .def_readwrite("enumeration_limit", &ParamMutatorOptions::enumeration_limit,
                     "Spaces of at most this many combinations are enumerated when the random draws find nothing new.")
      .def_readwrite("proposals_per_request", &ParamMutatorOptions::proposals_per_request,
                     "Candidates proposed per request.")
      .def_readwrite("check_block_size", &ParamMutatorOptions::check_block_size,
                     "Also reject launches whose block exceeds the device's MAX_THREADS_PER_BLOCK (when reported), "
                     "next to the @require lines.");

  py::class_<ParamMutator, Mutator, py::smart_holder>(
      m, "ParamMutator", "Varies the `@tune` parameters of a candidate (in its language); needs no LLM.")
      .def(py::init<ParamMutatorOptions>(), py::arg("options") = ParamMutatorOptions{})
      .def_property_readonly("options", &ParamMutator::options, "The ParamMutatorOptions it was made with.")
      .def_static("rewrite", &ParamMutator::rewrite, py::arg("source"), py::arg("values"),
                  py::arg("language") = "cuda",
                  "The source, written in `language`, with the `@tune` lines' current values replaced by `values` (a "
                  "dict name -> int); raises ValidationError for an unknown parameter or a value outside its set.")
      .def_static("values_of", &ParamMutator::values_of, py::arg("source"), py::arg("language") = "cuda",
                  "The tunable parameters' current values in a source written in `language`, a dict name -> int; "
                  "raises PlanError for a malformed plan.");
}

void bind_run_store(py::module_& m) {
  m.attr("RUN_STORE_SCHEMA_VERSION") = kRunStoreSchemaVersion;

  py::class_<RunInfo>(m, "RunInfo", "One run in a RunStore: its configuration, task, backend, status and times.")
      .def(py::init<>())
      .def_readwrite("id", &RunInfo::id, "The run's id in the store.")
      .def_readwrite("task_name", &RunInfo::task_name, "Name of the task the run optimises.")
      .def_readwrite("config_json", &RunInfo::config_json,
                     "The run's EvolutionConfig as JSON (EvolutionConfig.to_json()).")
      .def_readwrite("task_json", &RunInfo::task_json, "The task as self-contained JSON (Task.to_json()).")
      .def_readwrite("language", &RunInfo::language,
                     "Kernel language of the candidates ('cuda', 'opencl', 'triton'); the reference is in the "
                     "backend's own.")
      .def_readwrite("backend", &RunInfo::backend, "Backend the evaluator measured on.")
      .def_readwrite("device", &RunInfo::device, "Device the evaluator measured on.")
      .def_readwrite("mutator", &RunInfo::mutator, "Name of the mutator ('param', 'llm', ...).")
      .def_readwrite("seed", &RunInfo::seed, "The run's random seed.")
      .def_readwrite("library_version", &RunInfo::library_version, "kernelsmith version that made the run.")
      .def_readwrite("started", &RunInfo::started, "Start time, Unix seconds.")
      .def_readwrite("updated", &RunInfo::updated, "Last update time, Unix seconds.")
      .def_readwrite("finished", &RunInfo::finished, "End time, Unix seconds; 0 while running or after a crash.")
      .def_readwrite("status", &RunInfo::status, "'running', 'finished', 'stopped' or 'failed'.")
      .def_readwrite("stop_reason", &RunInfo::stop_reason,
                     "Why the run stopped (an EvolutionResult.stop_reason); empty while running.")
      .def_readwrite("error", &RunInfo::error, "The error that ended a failed run; empty otherwise.");

  py::class_<ProgramRecord>(m, "ProgramRecord", "A stored program: its candidate and normalised hash.")
      .def_readonly("run", &ProgramRecord::run, "Id of the run it belongs to.")
      .def_readonly("id", &ProgramRecord::id, "The program's id (its candidate id).")
      .def_readonly("candidate", &ProgramRecord::candidate,
                    "Language, source and lineage (parent ids, home island, generation, origin).")
      .def_readonly("normalized_hash", &ProgramRecord::normalized_hash,
                    "normalized_source_hash of the program's language and source.")
      .def_readonly("created", &ProgramRecord::created, "When it was stored, Unix seconds.");

  py::class_<EvaluationRecord>(m, "EvaluationRecord", "A stored evaluation of a program.")
      .def_readonly("id", &EvaluationRecord::id, "The evaluation's id in the store.")
      .def_readonly("run", &EvaluationRecord::run, "Id of the run it belongs to.")
      .def_readonly("program_id", &EvaluationRecord::program_id, "Id of the evaluated program.")
      .def_readonly("sequence", &EvaluationRecord::sequence,
                    "The engine's clock: 0 for the run's first evaluation, then 1, 2, ...")
      .def_readonly("evaluation", &EvaluationRecord::evaluation, "The Evaluation.")
      .def_readonly("created", &EvaluationRecord::created, "When it was stored, Unix seconds.");

  py::class_<StepRecord>(m, "StepRecord",
                         "One step: a proposal made from parent(s), what the mutator said, and the child it led to or "
                         "why none. A step with a child and no evaluation yet is pending.")
      .def(py::init<>())
      .def_readwrite("id", &StepRecord::id, "The step's id in the store.")
      .def_readwrite("run", &StepRecord::run, "Id of the run it belongs to.")
      .def_readwrite("island", &StepRecord::island, "The island the parent was picked on.")
      .def_readwrite("parent_ids", &StepRecord::parent_ids, "Ids of the parent(s) (two for crossover).")
      .def_readwrite("selection", &StepRecord::selection,
                     "How the parent was picked: 'policy', 'exploration', 'exploitation', 'repair' or 'seed'.")
      .def_readwrite("mutation", &StepRecord::mutation, "The mutation: 'reference', 'seed', 'param', 'llm_diff', ...")
      .def_readwrite("inspiration_ids", &StepRecord::inspiration_ids, "Ids of the programs shown as inspirations.")
      .def_readwrite("prompt", &StepRecord::prompt, "The exact messages sent to the model, as a JSON array.")
      .def_readwrite("response", &StepRecord::response, "The model's answer text.")
      .def_readwrite("model", &StepRecord::model, "The model that answered.")
      .def_readwrite("prompt_tokens", &StepRecord::prompt_tokens, "Prompt tokens the model reported.")
      .def_readwrite("completion_tokens", &StepRecord::completion_tokens, "Completion tokens the model reported.")
      .def_readwrite("latency_seconds", &StepRecord::latency_seconds, "Wall time of the model call, in seconds.")
      .def_readwrite("child_id", &StepRecord::child_id,
                     "Id of the child; empty when the proposal produced no candidate or was rejected.")
      .def_readwrite("evaluation_id", &StepRecord::evaluation_id,
                     "Id of the child's evaluation, or None while it is pending or when there is none.")
      .def_readwrite("failure", &StepRecord::failure,
                     "Why there is no child (mutator failure, duplicate, near duplicate, ...); empty otherwise.")
      .def_readwrite("duplicate_of", &StepRecord::duplicate_of,
                     "The program the proposal duplicates (novelty_kind 'duplicate') or resembles most "
                     "('near_duplicate'); empty otherwise.")
      .def_readwrite("novelty_kind", &StepRecord::novelty_kind,
                     "How the novelty filter judged the proposal: 'novel', 'duplicate' or 'near_duplicate'; empty "
                     "when no program reached the filter.")
      .def_readwrite("propose_seconds", &StepRecord::propose_seconds, "Time spent in Mutator.propose, in seconds.")
      .def_readwrite("evaluate_seconds", &StepRecord::evaluate_seconds, "Time spent evaluating the child, in seconds.")
      .def_readwrite("created", &StepRecord::created, "When it was stored, Unix seconds.")
      .def_readwrite("abandoned_by", &StepRecord::abandoned_by,
                     "The stop reason ('wall_time', 'stopped') of a run that ended while this proposal's mutator call "
                     "was still running (cancelled, not waited for); empty otherwise.")
      .def_readwrite("llm_attempts", &StepRecord::llm_attempts,
                     "The HTTP attempts of the model call, in order, a list of LlmAttempt.")
      .def_readwrite("skill", &StepRecord::skill,
                     "The skill the mutator said it applied; empty when it named none.")
      .def_readwrite("retrieved", &StepRecord::retrieved,
                     "The experience items retrieved into the step's request, best first, a list of Retrieval.")
      .def_property_readonly("pending", &StepRecord::pending,
                             "True when the step has a child with neither an evaluation nor a failure (resume "
                             "evaluates it).");

  py::class_<ExperienceRecord>(m, "ExperienceRecord",
                               "What one step taught the experience memory, as the run recorded it (its item, without "
                               "the values learned later).")
      .def_readonly("id", &ExperienceRecord::id, "The record's id in the store.")
      .def_readonly("run", &ExperienceRecord::run, "Id of the run it belongs to.")
      .def_readonly("step", &ExperienceRecord::step, "Id of the step.")
      .def_readonly("item", &ExperienceRecord::item,
                    "The ExperienceItem it added to the memory (item.id is its id there).");

  py::class_<MigrationRecord>(m, "MigrationRecord", "A program copied to another island by migration.")
      .def_readonly("id", &MigrationRecord::id, "The migration's id in the store.")
      .def_readonly("run", &MigrationRecord::run, "Id of the run it belongs to.")
      .def_readonly("program_id", &MigrationRecord::program_id, "Id of the migrated program.")
      .def_readonly("from_island", &MigrationRecord::from_island, "The island it left.")
      .def_readonly("to_island", &MigrationRecord::to_island, "The island the copy went to.")
      .def_readonly("sequence", &MigrationRecord::sequence,
                    "Evaluations done when it happened (resume replays it at this point).")
      .def_readonly("created", &MigrationRecord::created, "When it was stored, Unix seconds.");

  py::class_<IslandRecord>(m, "IslandRecord", "The latest summary of one island of a run.")
      .def_readonly("run", &IslandRecord::run, "Id of the run it belongs to.")
      .def_readonly("island", &IslandRecord::island, "The island's index.")
      .def_readonly("programs", &IslandRecord::programs, "Programs living on the island.")
      .def_readonly("best_program_id", &IslandRecord::best_program_id,
                    "Id of the island's best correct program (empty when none).")
      .def_readonly("best_fitness", &IslandRecord::best_fitness, "That program's fitness.")
      .def_readonly("best_speedup", &IslandRecord::best_speedup, "That program's speedup over the baseline.")
      .def_readonly("updated", &IslandRecord::updated, "When it was last written, Unix seconds.");

  py::class_<HistoryPoint>(m, "HistoryPoint",
                           "One point of a run's history: an evaluation and the best speedup so far.")
      .def_readonly("sequence", &HistoryPoint::sequence, "The evaluation's place in the run (0, 1, 2, ...).")
      .def_readonly("program_id", &HistoryPoint::program_id, "Id of the evaluated program.")
      .def_readonly("status", &HistoryPoint::status, "The evaluation's Status.")
      .def_readonly("speedup", &HistoryPoint::speedup, "The program's speedup over the baseline (0 when it failed).")
      .def_readonly("best_speedup", &HistoryPoint::best_speedup,
                    "The best speedup of the run up to and including this evaluation.");

  // Every call takes SQLite's time, not Python's: the GIL is released so a notebook stays responsive.
  using release = py::call_guard<py::gil_scoped_release>;
  py::class_<RunStore>(m, "RunStore",
                       "A run store (SQLite, WAL). Open read-only to inspect a run, also while it runs; "
                       "plain sqlite3 or pandas read the same file (docs/run-store.md).")
      .def(py::init<const std::string&, bool>(), py::arg("path"), py::arg("read_only") = false, release())
      .def_property_readonly("path", &RunStore::path, "The file's path (':memory:' for an in-memory store).")
      .def_property_readonly("read_only", &RunStore::read_only, "True when opened read-only.")
      .def_property_readonly("schema_version", &RunStore::schema_version,
                             "The schema version of the file: RUN_STORE_SCHEMA_VERSION, or 1 for a version-1 file "
                             "opened read-only (opened for writing, it is upgraded).")
      .def("create_run", &RunStore::create_run, py::arg("info"), release(),
           "Inserts a run (status 'running') from a RunInfo; returns its id.")
      .def("set_run_status", &RunStore::set_run_status, py::arg("run"), py::arg("status"), py::arg("stop_reason") = "",
           py::arg("error") = "", release(),
           "Sets a run's status ('running', 'finished', 'stopped', 'failed') with the stop reason and error; the last "
           "three also set `finished`.")
      .def("run", &RunStore::run, py::arg("run"), release(),
           "The RunInfo of a run; raises NotFoundError for an unknown id.")
      .def("runs", &RunStore::runs, release(), "Every run in the store, a list of RunInfo.")
      .def("latest_run", &RunStore::latest_run, py::arg("task_name") = "", release(),
           "The most recent run (of the task, when named), or None.")
      .def("add_program", &RunStore::add_program, py::arg("run"), py::arg("id"), py::arg("candidate"),
           py::arg("normalized_hash"), release(),
           "Inserts a program under `id` with its lineage; raises StoreError when the id exists in the run.")
      .def("add_step", &RunStore::add_step, py::arg("step"), release(), "Inserts a StepRecord; returns its id.")
      .def("add_evaluation", &RunStore::add_evaluation, py::arg("run"), py::arg("program_id"), py::arg("sequence"),
           py::arg("evaluation"), py::arg("step_id") = py::none(), py::arg("evaluate_seconds") = 0.0, release(),
           "Inserts an evaluation of a stored program and links the step that produced it (when given); returns the "
           "evaluation id. Raises StoreError for an unknown or already evaluated program.")
      .def("programs", &RunStore::programs, py::arg("run"), release(), "The run's programs, a list of ProgramRecord.")
      .def("program", &RunStore::program, py::arg("run"), py::arg("id"), release(),
           "One program of the run as a ProgramRecord, or None.")
      .def("evaluations", &RunStore::evaluations, py::arg("run"), release(),
           "The run's evaluations in evaluation order, a list of EvaluationRecord.")
      .def("screenings", &RunStore::screenings, py::arg("run"), release(),
           "The screen-mode evaluations that strict confirmations superseded, in sequence order, a list of "
           "EvaluationRecord (the program's standing is its record in evaluations()).")
      .def("evaluation_of", &RunStore::evaluation_of, py::arg("run"), py::arg("program_id"), release(),
           "The EvaluationRecord of a program, or None when it is not evaluated.")
      .def("steps", &RunStore::steps, py::arg("run"), release(),
           "The run's steps in insertion order, a list of StepRecord.")
      .def("pending_steps", &RunStore::pending_steps, py::arg("run"), release(),
           "Steps with a child and neither an evaluation nor a failure.")
      .def("migrations", &RunStore::migrations, py::arg("run"), release(),
           "The run's migrations, a list of MigrationRecord.")
      .def("islands", &RunStore::islands, py::arg("run"), release(),
           "The run's island summaries, a list of IslandRecord.")
      .def("evaluation_count", &RunStore::evaluation_count, py::arg("run"), release(),
           "Number of evaluations stored for the run.")
      .def("best", &RunStore::best, py::arg("run"), py::arg("count") = 10, release(),
           "The best correct evaluations (by fitness, then sequence), best first, at most count.")
      .def("lineage", &RunStore::lineage, py::arg("run"), py::arg("program_id"), release(),
           "The program, its first parent, that one's first parent, ... back to a root, as ProgramRecords.")
      .def("history", &RunStore::history, py::arg("run"), release(), "One HistoryPoint per evaluation, in order.")
      .def("add_experience", &RunStore::add_experience, py::arg("run"), py::arg("step"), py::arg("item"), release(),
           "Records what a step taught the experience memory (an ExperienceItem); returns the record's id.")
      .def("experience", &RunStore::experience, py::arg("run"), release(),
           "The run's ExperienceRecords in the order they were made (none in stores older than version 4).");
}

void bind_evolution(py::module_& m) {
  py::class_<LlmPrice>(m, "LlmPrice", "What a language model charges per 1,000 tokens (docs/llm.md, \"Budgets\").")
      .def(py::init<>())
      .def(py::init([](double prompt_per_1k, double completion_per_1k) { return LlmPrice{prompt_per_1k, completion_per_1k}; }),
           py::arg("prompt_per_1k"), py::arg("completion_per_1k"))
      .def_readwrite("prompt_per_1k", &LlmPrice::prompt_per_1k, "Price of 1,000 prompt tokens.")
      .def_readwrite("completion_per_1k", &LlmPrice::completion_per_1k, "Price of 1,000 completion tokens.")
      .def("__repr__", [](const LlmPrice& p) {
        return fmt::format("LlmPrice(prompt_per_1k={}, completion_per_1k={})", p.prompt_per_1k, p.completion_per_1k);
      });

  py::class_<LlmSpend>(m, "LlmSpend", "What a run has spent on a language model (docs/llm.md, \"Budgets\").")
      .def(py::init<>())
      .def_readonly("calls", &LlmSpend::calls, "Steps whose proposal came from a model call.")
      .def_readonly("prompt_tokens", &LlmSpend::prompt_tokens, "Prompt tokens, as the endpoint reported them.")
      .def_readonly("completion_tokens", &LlmSpend::completion_tokens, "Completion tokens, as reported.")
      .def_readonly("cost", &LlmSpend::cost, "Their cost at EvolutionConfig.llm_prices.")
      .def_property_readonly("tokens", &LlmSpend::tokens, "Prompt plus completion tokens.")
      .def("__repr__", [](const LlmSpend& s) {
        return fmt::format("LlmSpend(calls={}, tokens={}, cost={:.4f})", s.calls, s.tokens(), s.cost);
      });

  py::class_<EvolutionConfig>(m, "EvolutionConfig", "Settings of an evolution run (docs/search.md).")
      .def(py::init<>())
      .def_readwrite("islands", &EvolutionConfig::islands,
                     "Number of islands (independent populations joined by migration).")
      .def_readwrite("island_capacity", &EvolutionConfig::island_capacity,
                     "Most programs kept per island; 0 keeps every program.")
      .def_readwrite("selection", &EvolutionConfig::selection, "Parent selection, a SelectionConfig.")
      .def_readwrite("features", &EvolutionConfig::features, "The MAP-Elites axes, a list of FeatureDescriptor.")
      .def_readwrite("elite_count", &EvolutionConfig::elite_count,
                     "Size of the archive's elite set (best correct programs over all islands).")
      .def_readwrite("migration", &EvolutionConfig::migration, "Migration between islands, a MigrationConfig.")
      .def_readwrite("novelty", &EvolutionConfig::novelty, "Duplicate and near-duplicate rejection, a NoveltyConfig.")
      .def_readwrite("inspirations", &EvolutionConfig::inspirations,
                     "Programs shown next to the parent in each request.")
      .def_readwrite("crossover_rate", &EvolutionConfig::crossover_rate,
                     "Chance, in [0, 1], that a request carries a second parent for crossover.")
      .def_readwrite("memory", &EvolutionConfig::memory,
                     "Recent attempts on the same parent passed as short-term memory.")
      .def_readwrite("experience", &EvolutionConfig::experience,
                     "Experience items retrieved into each mutation request (docs/memory.md); 0 retrieves none (the "
                     "run still records what each step taught).")
      .def_readwrite("memory_path", &EvolutionConfig::memory_path,
                     "SQLite file of an experience memory shared across runs and tasks (created when missing); empty: "
                     "the run's memory lives in the process. Evolution.memory overrides it.")
      .def_readwrite("mutations_in_flight", &EvolutionConfig::mutations_in_flight,
                     "Mutations proposed concurrently (threads calling Mutator.propose); 1 makes a seeded run "
                     "reproducible with deterministic parts; 0 keeps twice the evaluator's concurrency() in flight "
                     "(one candidate waiting per device or Ray actor).")
      .def_readwrite("budget", &EvolutionConfig::budget,
                     "Evaluations in the run (reference and seeds included; a resumed run counts its earlier ones). "
                     "Required, at least 1.")
      .def_readwrite("wall_seconds", &EvolutionConfig::wall_seconds,
                     "Stop after this much wall time, in seconds; 0 disables the rule.")
      .def_readwrite("target_speedup", &EvolutionConfig::target_speedup,
                     "Stop once the best speedup reaches this; 0 disables the rule.")
      .def_readwrite("stagnation", &EvolutionConfig::stagnation,
                     "Stop after this many evaluations in a row without a better best program; 0 disables the rule.")
      .def_readwrite("max_failed_proposals", &EvolutionConfig::max_failed_proposals,
                     "Stop after this many proposals in a row yield nothing to evaluate (failures, duplicates); 0 "
                     "disables the rule.")
      .def_readwrite("max_llm_calls", &EvolutionConfig::max_llm_calls,
                     "Stop (resumably, 'llm_budget') once the run made this many model calls; 0: no cap.")
      .def_readwrite("max_llm_tokens", &EvolutionConfig::max_llm_tokens,
                     "Stop (resumably, 'llm_budget') once the model calls used this many tokens (prompt plus "
                     "completion, as the endpoint reported them); 0: no cap.")
      .def_readwrite("max_llm_cost", &EvolutionConfig::max_llm_cost,
                     "Stop (resumably, 'llm_budget') once the model calls cost this much at llm_prices; 0: no cap.")
      .def_readwrite("llm_prices", &EvolutionConfig::llm_prices,
                     "Prices per 1,000 tokens by model name, a dict of LlmPrice; '*' prices any model not named.")
      .def_readwrite("seed", &EvolutionConfig::seed, "Random seed of the run.")
      .def_readwrite("db_path", &EvolutionConfig::db_path,
                     "SQLite file of the run; ':memory:' keeps it in memory (nothing survives the process).")
      .def_readwrite("resume", &EvolutionConfig::resume,
                     "Continue the latest run of the task in db_path (a fresh run when there is none).")
      .def_readwrite("language", &EvolutionConfig::language,
                     "Kernel language of the candidates the mutators write; empty: the evaluator's backend's ('cuda', "
                     "'opencl'), else the task's first. 'triton' on the cuda backend evolves Triton candidates from the "
                     "task's Triton seed, with the CUDA reference as the baseline; a language of another backend is a "
                     "ValidationError at run().")
      .def_readwrite("device", &EvolutionConfig::device,
                     "DeviceInfo for the mutators' constraints; an empty backend is looked up from devices() by the "
                     "evaluator's names.")
      .def_readwrite("run_file", &EvolutionConfig::run_file,
                     "The run file describing the run as its caller started it, a JSON object (`kernelsmith evolve "
                     "--config` stores its effective settings; docs/cli.md#run-files); empty: none. Stored with the "
                     "run (RunInfo.config_json); the engine never reads it.")
      .def("llm_cost", &EvolutionConfig::llm_cost, py::arg("model"), py::arg("prompt_tokens"),
           py::arg("completion_tokens"), "The cost of one model call at llm_prices (the model's, else '*', else 0).")
      .def("validate", &EvolutionConfig::validate, "Raises ValidationError naming the field.")
      .def("to_json", &EvolutionConfig::to_json,
           "The settings as JSON (custom feature and embedding functions by name only).")
      .def_static("from_json", &EvolutionConfig::from_json, py::arg("json_text"),
                  "Reads what to_json() writes; missing fields keep their defaults. Raises ValidationError.");

  py::class_<Progress>(m, "Progress", "What the engine reports after each step.")
      .def_readonly("run_id", &Progress::run_id, "The run's id in the store.")
      .def_readonly("evaluations", &Progress::evaluations, "Evaluations in the run so far.")
      .def_readonly("budget", &Progress::budget, "The run's evaluation budget.")
      .def_readonly("steps", &Progress::steps, "Steps taken in this session.")
      .def_readonly("failed_proposals", &Progress::failed_proposals, "Proposals that yielded no candidate so far.")
      .def_readonly("duplicates", &Progress::duplicates, "Exact and near duplicates rejected so far.")
      .def_readonly("elapsed_seconds", &Progress::elapsed_seconds, "Wall time since run() started, in seconds.")
      .def_readonly("best_program_id", &Progress::best_program_id, "Id of the best program so far.")
      .def_readonly("best_fitness", &Progress::best_fitness, "Fitness of the best program so far.")
      .def_readonly("best_speedup", &Progress::best_speedup, "Speedup over the baseline of the best program so far.")
      .def_readonly("program_id", &Progress::program_id,
                    "Id of the step's child; empty for a proposal that yielded no candidate.")
      .def_readonly("mutation", &Progress::mutation, "The step's mutation ('param', 'llm_diff', ...).")
      .def_readonly("island", &Progress::island, "The island of the step.")
      .def_readonly("status", &Progress::status, "The child's evaluation Status.")
      .def_readonly("speedup", &Progress::speedup, "The child's speedup over the baseline.")
      .def_readonly("message", &Progress::message, "The evaluation's message, or why there was no candidate.")
      .def_readonly("confirmation", &Progress::confirmation,
                    "'confirmed' or 'refuted' when the child would have led the run and was evaluated again in strict "
                    "mode first (its standing is that evaluation now); 'unconfirmed' when a deadline (stop(), the "
                    "wall time) came first (it keeps its screening and does not lead); '' when it needed no "
                    "confirmation.")
      .def_readonly("improved", &Progress::improved,
                    "True when this step found a new best program (always a confirmed one).")
      .def_readonly("llm_spend", &Progress::llm_spend,
                    "What the run has spent on a language model so far (LlmSpend), earlier sessions included.");

  py::class_<EvolutionResult>(m, "EvolutionResult",
                              "What run() returns: why it stopped, the best program and counts and times.")
      .def_readonly("run_id", &EvolutionResult::run_id, "The run's id in the store.")
      .def_readonly("db_path", &EvolutionResult::db_path, "The run store's file.")
      .def_readonly("stop_reason", &EvolutionResult::stop_reason,
                    "'budget', 'wall_time', 'target_speedup', 'stagnation', 'stopped' or 'no_new_candidates'.")
      .def_readonly("stop_detail", &EvolutionResult::stop_detail,
                    "The stop reason in words where it needs some (for 'no_new_candidates': failed proposals in a row, "
                    "or no program left that the mutator can work from, and why); empty otherwise.")
      .def_readonly("best", &EvolutionResult::best,
                    "The best confirmed Program (never one whose standing is a screening or a doubt-flagged "
                    "evaluation), or None.")
      .def_readonly("best_speedup", &EvolutionResult::best_speedup, "Its speedup over the baseline.")
      .def_readonly("evaluations", &EvolutionResult::evaluations, "Evaluations in the run, earlier sessions included.")
      .def_readonly("session_evaluations", &EvolutionResult::session_evaluations, "Evaluations in this call to run().")
      .def_readonly("confirmations", &EvolutionResult::confirmations,
                    "Strict confirmations of would-be leaders in this call to run() (not counted in the budget).")
      .def_readonly("refuted", &EvolutionResult::refuted,
                    "Confirmations that refuted their screening: those programs do not lead.")
      .def_readonly("unconfirmed", &EvolutionResult::unconfirmed,
                    "Would-be leaders left unconfirmed because a deadline (stop(), the wall time) had come: they do "
                    "not lead.")
      .def_readonly("crashed_on_resume", &EvolutionResult::crashed_on_resume,
                    "Pending children recorded crashed instead of evaluated again: their evaluation had started in an "
                    "earlier session and never finished.")
      .def_readonly("steps", &EvolutionResult::steps, "Steps taken in this call to run().")
      .def_readonly("failed_proposals", &EvolutionResult::failed_proposals, "Proposals that yielded no candidate.")
      .def_readonly("duplicates", &EvolutionResult::duplicates, "Exact duplicates rejected.")
      .def_readonly("near_duplicates", &EvolutionResult::near_duplicates, "Near duplicates rejected.")
      .def_readonly("migrations", &EvolutionResult::migrations, "Programs copied between islands.")
      .def_readonly("parent_fallbacks", &EvolutionResult::parent_fallbacks,
                    "Proposals whose parent came from another island, because the island whose turn it was had no "
                    "program the mutator could work from.")
      .def_readonly("pending", &EvolutionResult::pending,
                    "Stored candidates left unevaluated (a resume evaluates them).")
      .def_readonly("abandoned", &EvolutionResult::abandoned,
                    "Proposals whose mutator call was still running when stop() or the wall time ended the run "
                    "(cancelled; stored as steps with abandoned_by).")
      .def_readonly("llm_spend", &EvolutionResult::llm_spend,
                    "What the run spent on a language model (LlmSpend), earlier sessions included.")
      .def_readonly("wall_seconds", &EvolutionResult::wall_seconds, "Wall time of run(), in seconds.")
      .def_readonly("evaluator_seconds", &EvolutionResult::evaluator_seconds,
                    "Time inside Evaluator.evaluate_batch, in seconds.")
      .def_readonly("mutator_seconds", &EvolutionResult::mutator_seconds,
                    "Time inside Mutator.propose, summed over threads, in seconds.")
      .def_readonly("store_seconds", &EvolutionResult::store_seconds, "Time writing the run store, in seconds.")
      .def_readonly("engine_share", &EvolutionResult::engine_share,
                    "The engine's own share of the wall time: 1 - (evaluator + mutator) / wall (meaningful with one "
                    "mutation in flight).");

  py::class_<Evolution>(m, "Evolution",
                        "The evolution loop. run() releases the GIL; stop() (from any thread) ends it cleanly.")
      .def(py::init([](Task task, std::shared_ptr<Evaluator> evaluator, std::shared_ptr<Mutator> mutator,
                       EvolutionConfig config, std::shared_ptr<ExperienceMemory> memory) {
             auto evolution = std::make_unique<Evolution>(std::move(task), std::move(evaluator), std::move(mutator),
                                                          std::move(config));
             if (memory) evolution->set_memory(std::move(memory));
             return evolution;
           }),
           py::arg("task"), py::arg("evaluator"), py::arg("mutator"), py::arg("config") = EvolutionConfig{},
           py::arg("memory") = nullptr,
           "An evolution of the task; `memory`, an ExperienceMemory, is the one it learns into and retrieves from "
           "(default: config.memory_path's, else one in the process).")
      .def("set_confirmer", &Evolution::set_confirmer, py::arg("confirmer"),
           "The Evaluator that confirms, in strict mode, a candidate about to lead the run whose evaluation was a "
           "screening or is flagged with doubt (docs/search.md, 'Confirmation'). None (the default): the run's "
           "evaluator, which for the built-in evaluator in screen mode confirms with a strict twin of itself. Set "
           "it before run().")
      .def_property(
          "memory", &Evolution::memory,
          [](Evolution& evolution, std::shared_ptr<ExperienceMemory> memory) { evolution.set_memory(std::move(memory)); },
          "The ExperienceMemory the run learns into and retrieves from: the one set, or the one the last run() used "
          "(None before the first run() when none was set). Set it before run().")
      .def("on_progress", [](Evolution& evolution, const py::object& callback) { evolution.on_progress(wrap_progress(callback)); },
           py::arg("callback"), "Calls callback(progress) after each step, on the thread running run().")
      .def("run", &Evolution::run, py::call_guard<py::gil_scoped_release>(),
           "Runs until a stop rule holds and returns an EvolutionResult; raises what the evaluator raises, "
           "StoreError, ValidationError, or Error when already running.")
      .def("stop", &Evolution::stop,
           "Asks a running run() to stop: nothing new starts, mutator calls in flight are cancelled (those not back "
           "within 2 s are recorded as abandoned), proposed candidates stay pending. Thread-safe; returns at once.")
      .def_property_readonly("running", &Evolution::running, "True while run() is running.")
      .def_property_readonly("stop_requested", &Evolution::stop_requested, "True once stop() was called.")
      .def_property_readonly("run_id", &Evolution::run_id, "The run's id in the store (0 before run()).")
      .def_property_readonly("config", &Evolution::config, "The EvolutionConfig it was made with.")
      .def_property_readonly("task", &Evolution::task, "The Task being optimised.")
      .def_property_readonly("population", &Evolution::population, py::return_value_policy::reference_internal,
                             "The IslandPopulation (the search state); read it when run() is not running.")
      .def_property_readonly("archive", &Evolution::archive, py::return_value_policy::reference_internal,
                             "The MapElitesArchive; read it when run() is not running.");
}

}  // namespace

void bind_search(py::module_& m) {
  bind_program(m);
  bind_selection(m);
  bind_population(m);
  bind_archive(m);
  bind_novelty(m);
  bind_mutators(m);
  bind_run_store(m);
  bind_evolution(m);
}

}  // namespace kernelsmith::python
