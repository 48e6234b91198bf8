// Memory: measured features, skill predicates, the skill bank, the experience memory and its retrievers
// (subclassable from Python). Features cross the boundary as plain dicts of numbers and strings.
#include <pybind11/functional.h>
#include <pybind11/stl.h>
#include <pybind11/stl/filesystem.h>

#include "bindings.hpp"
#include "features_caster.hpp"
#include "kernelsmith/error.hpp"
#include "kernelsmith/experience.hpp"
#include "kernelsmith/features.hpp"
#include "kernelsmith/mutator.hpp"
#include "kernelsmith/skill_bank.hpp"

namespace py = pybind11;


namespace kernelsmith::python {

namespace {

// Lets Python classes rank experience. The override macro takes the GIL (the engine retrieves on its own
// thread); trampoline_self_life_support and the smart holder keep the object alive while a memory holds it.
class PyRetriever : public Retriever, public py::trampoline_self_life_support {
 public:
  std::vector<RetrievedItem> retrieve(const ExperienceQuery& query, const std::vector<ExperienceItem>& items) override {
    PYBIND11_OVERRIDE_PURE(std::vector<RetrievedItem>, Retriever, retrieve, query, items);
  }
  std::string name() const override { PYBIND11_OVERRIDE_PURE(std::string, Retriever, name, ); }
};

using release = py::call_guard<py::gil_scoped_release>;

void bind_features(py::module_& m) {
  py::enum_<FeatureKind>(m, "FeatureKind", "What a feature holds: a number or a label (a string).")
      .value("number", FeatureKind::number)
      .value("label", FeatureKind::label);
  py::enum_<FeatureScope>(m, "FeatureScope", "Where a feature comes from: the task, the parent's evaluation, the request.")
      .value("task", FeatureScope::task)
      .value("feedback", FeatureScope::feedback)
      .value("request", FeatureScope::request);
  py::class_<FeatureInfo>(m, "FeatureInfo", "One row of the feature catalog (docs/memory.md, \"Features\").")
      .def_readonly("name", &FeatureInfo::name, "The name predicates use.")
      .def_readonly("kind", &FeatureInfo::kind, "FeatureKind.number or FeatureKind.label.")
      .def_readonly("scope", &FeatureInfo::scope, "FeatureScope: task, feedback or request.")
      .def_readonly("description", &FeatureInfo::description, "What it measures.")
      .def_readonly("logarithmic", &FeatureInfo::logarithmic,
                    "Whether similarity compares log10(1 + value) (quantities that span decades).")
      .def_readonly("scale", &FeatureInfo::scale, "A difference of this much counts as one unit of distance.")
      .def_readonly("similarity", &FeatureInfo::similarity, "Whether feature_similarity compares it.")
      .def_readonly("values", &FeatureInfo::values, "The values a label takes (empty: any).")
      .def("__repr__", [](const FeatureInfo& info) { return "<FeatureInfo " + info.name + ">"; });
  m.def("feature_catalog", &feature_catalog, "Every feature skills are gated on and experience is matched by.");
  m.def(
      "find_feature",
      [](const std::string& name) -> std::optional<FeatureInfo> {
        const FeatureInfo* info = find_feature(name);
        return info ? std::optional<FeatureInfo>(*info) : std::nullopt;
      },
      py::arg("name"), "The catalog row of a feature, or None.");
  m.def("task_features", &task_features, py::arg("task"),
        "A Task's features at its timed sizes, a dict: FLOPs, bytes, arithmetic intensity, reduction ratio, ...");
  m.def("feedback_features", &feedback_features, py::arg("evaluation"),
        "An Evaluation's features, a dict: stage, status, failure kind, fractions of the peaks, resources, ...");
  m.def("feature_similarity", &feature_similarity, py::arg("a"), py::arg("b"),
        "How alike two feature dicts are, in (0, 1]; 0 when neither has a compared feature.");

  py::class_<Predicate>(m, "Predicate",
                        "A condition over features, e.g. 'stage == \"refine\" and bandwidth_fraction < 0.6'; parsed and "
                        "checked against the feature catalog when made (ValidationError naming the column).")
      .def(py::init<std::string>(), py::arg("text") = "true")
      .def("holds", &Predicate::holds, py::arg("features"),
           "True when the predicate is true for the features (a dict); false when false or unknown.")
      .def("evaluate", &Predicate::evaluate, py::arg("features"),
           "True, False, or None when a feature it reads is missing.")
      .def("features", &Predicate::features, "The features it reads, in order of appearance.")
      .def_property_readonly("text", &Predicate::text, "The predicate as written.")
      .def("__repr__", [](const Predicate& predicate) { return "Predicate('" + predicate.text() + "')"; });
}

void bind_skills(py::module_& m) {
  py::class_<Skill>(m, "Skill",
                    "An optimisation skill: its name, when it applies (a predicate over features), what to do and a "
                    "short example per kernel language.")
      .def(py::init<>())
      .def(py::init([](std::string name, std::string title, const std::string& when, std::string advice,
                       std::map<std::string, std::string> examples) {
             Skill skill;
             skill.name = std::move(name);
             skill.title = std::move(title);
             skill.when = Predicate(when);
             skill.advice = std::move(advice);
             skill.examples = std::move(examples);
             skill.validate();
             return skill;
           }),
           py::arg("name"), py::arg("title") = "", py::arg("when") = "true", py::arg("advice") = "",
           py::arg("examples") = std::map<std::string, std::string>{},
           "A skill; raises ValidationError for a name that is not snake_case, no advice, a bad predicate or an "
           "example in an unknown language.")
      .def_readwrite("name", &Skill::name, "snake_case, unique in a bank: what the model names in its <skill> tag.")
      .def_readwrite("title", &Skill::title, "One line: what the skill does.")
      .def_property(
          "when", [](const Skill& skill) { return skill.when.text(); },
          [](Skill& skill, const std::string& text) { skill.when = Predicate(text); },
          "When it applies, a predicate's text (assigning parses and checks it).")
      .def_readwrite("advice", &Skill::advice, "What to do, in a few sentences.")
      .def_readwrite("examples", &Skill::examples, "A short example per kernel language, a dict language -> code.")
      .def_readwrite("origin", &Skill::origin, "The file it was loaded from; empty for a skill made in code.")
      .def("applies", &Skill::applies, py::arg("features"), "Whether its predicate holds for the features (a dict).")
      .def("example", &Skill::example, py::arg("language"), "Its example in the language, or ''.")
      .def("validate", &Skill::validate, py::arg("origin") = "<skill>", "Raises ValidationError naming the field.")
      .def("__repr__", [](const Skill& skill) { return "<Skill " + skill.name + ": " + skill.when.text() + ">"; });

  py::class_<SkillFile>(m, "SkillFile", "One file loaded into a SkillBank.")
      .def_readonly("path", &SkillFile::path, "The file.")
      .def_readonly("version", &SkillFile::version, "The file's own version.")
      .def_readonly("skills", &SkillFile::skills, "How many skills it held.");

  py::class_<SkillBank, py::smart_holder>(
      m, "SkillBank",
      "Optimisation skills gated by predicates over measured features (docs/memory.md). SkillBank.builtin() is the "
      "bank shipped with the package; load_file adds a file of your own; add replaces a skill of the same name. "
      "`skills` is a copy: change a skill and add() it back.")
      .def(py::init<>(), "An empty bank.")
      .def_static("builtin", &SkillBank::builtin, "The built-in bank (skills/skills.json shipped with the package).")
      .def_static("load", &SkillBank::load, py::arg("path"), "A bank of one file.")
      .def("load_file", &SkillBank::load_file, py::arg("path"),
           "Adds the skills of a file (ones named like a skill already there replace it in place); returns how many.")
      .def("load_json", &SkillBank::load_json, py::arg("json_text"), py::arg("origin") = "<skills>",
           py::arg("folder") = std::filesystem::path(),
           "The same for a document in memory; `folder` resolves example files (empty: examples must be inline).")
      .def("add", &SkillBank::add, py::arg("skill"), "Adds a Skill, or replaces the one of the same name where it stands.")
      .def("remove", &SkillBank::remove, py::arg("name"), "Removes a skill; False when there is none of that name.")
      .def(
          "find",
          [](const SkillBank& bank, const std::string& name) -> std::optional<Skill> {
            const Skill* skill = bank.find(name);
            return skill ? std::optional<Skill>(*skill) : std::nullopt;
          },
          py::arg("name"), "A copy of the skill of that name, or None.")
      .def_property_readonly("skills", &SkillBank::skills, "The skills in order, a list of Skill (copies).")
      .def_property_readonly("files", &SkillBank::files, "The files loaded, a list of SkillFile.")
      .def("applicable", &SkillBank::applicable, py::arg("features"),
           "The skills whose predicates hold for the features (a dict), in bank order.")
      .def("to_json", &SkillBank::to_json, "The bank as one document of the file format, examples inline.")
      .def("__len__", &SkillBank::size)
      .def("__contains__", [](const SkillBank& bank, const std::string& name) { return bank.find(name) != nullptr; });
  m.def("skill_search_path", &skill_search_path,
        "The folders searched for the built-in skills/skills.json: $KERNELSMITH_SKILLS_PATH, the package, the "
        "installed share/kernelsmith/skills, the source tree.");
}

void bind_experience(py::module_& m) {
  py::enum_<Stage>(m, "Stage", "What a step is for: make an incorrect parent correct (draft) or a correct one faster (refine).")
      .value("draft", Stage::draft)
      .value("refine", Stage::refine);
  m.def("parse_stage", &parse_stage, py::arg("name"), "The Stage named 'draft' or 'refine'; raises ValidationError otherwise.");
  m.def("stage_of", py::overload_cast<const std::optional<Evaluation>&>(&stage_of), py::arg("parent_evaluation"),
        "refine when the parent Evaluation is correct, draft else (also for None).");
  m.def("stage_of", py::overload_cast<const Candidate&, const std::optional<Evaluation>&>(&stage_of),
        py::arg("parent"), py::arg("parent_evaluation"),
        "draft also when the parent is correct but has no kernel of its own (a ModelNew that only calls PyTorch: "
        "has_custom_kernel); else as stage_of(parent_evaluation).");
  m.def("experience_reward", &experience_reward, py::arg("stage"), py::arg("child_status"), py::arg("child_speedup"),
        py::arg("parent_speedup"),
        "A step's reward: draft 1 when the child is correct, else 0; refine log2(child / parent speedup) clamped to "
        "[-1, 1], -1 for a child that broke.");

  py::class_<StageValue>(m, "StageValue", "What an item learned in one stage: the weighted mean of its credits.")
      .def(py::init<>())
      .def(py::init([](double value, double weight, std::int64_t credits) { return StageValue{value, weight, credits}; }),
           py::arg("value"), py::arg("weight") = 1.0, py::arg("credits") = 1)
      .def_readwrite("value", &StageValue::value, "The mean reward (meaningful once weight > 0).")
      .def_readwrite("weight", &StageValue::weight, "The credits' weights summed.")
      .def_readwrite("credits", &StageValue::credits, "How many credits.")
      .def("__repr__", [](const StageValue& v) {
        return "StageValue(value=" + std::to_string(v.value) + ", weight=" + std::to_string(v.weight) +
               ", credits=" + std::to_string(v.credits) + ")";
      });

  py::class_<ExperienceItem>(m, "ExperienceItem",
                             "One step's experience: the task's and the parent's features, the skill and edit applied, "
                             "the outcome, and the values learned per stage.")
      .def(py::init<>())
      .def_readwrite("id", &ExperienceItem::id, "Its id in its memory (0 before it is added).")
      .def_readwrite("task", &ExperienceItem::task, "The task it was learned on.")
      .def_readwrite("task_features", &ExperienceItem::task_features, "The task's features, a dict.")
      .def_readwrite("feedback", &ExperienceItem::feedback,
                     "The parent's features and the request's (language, device), a dict.")
      .def_readwrite("stage", &ExperienceItem::stage, "The Stage of the step.")
      .def_readwrite("skill", &ExperienceItem::skill, "The skill applied; 'unspecified' when none was named.")
      .def_readwrite("edit", &ExperienceItem::edit, "How the child was made: 'llm_diff', 'param', ...")
      .def_readwrite("status", &ExperienceItem::status, "The child's Status.")
      .def_readwrite("compiled", &ExperienceItem::compiled, "Whether the child compiled.")
      .def_readwrite("correct", &ExperienceItem::correct, "Whether the child is correct.")
      .def_readwrite("speedup", &ExperienceItem::speedup, "The child's speedup (0 unless correct).")
      .def_readwrite("parent_speedup", &ExperienceItem::parent_speedup, "The parent's speedup (0 unless correct).")
      .def_readwrite("note", &ExperienceItem::note, "The child's evaluation message, cut to 200 characters.")
      .def_readwrite("reward", &ExperienceItem::reward, "The reward of its own step (ExperienceMemory.record sets it).")
      .def_readwrite("draft", &ExperienceItem::draft, "The StageValue learned in draft.")
      .def_readwrite("refine", &ExperienceItem::refine, "The StageValue learned in refine.")
      .def_readwrite("origin", &ExperienceItem::origin, "Where it was learned, e.g. 'run 3 of runs.db, step 17'.")
      .def_readwrite("created", &ExperienceItem::created, "When it was made, Unix seconds.")
      .def("value", py::overload_cast<Stage>(&ExperienceItem::value, py::const_), py::arg("stage"),
           "The StageValue of a stage (a copy).")
      .def("gain", &ExperienceItem::gain, "Child over parent speedup minus 1 when both are correct; 0 else.")
      .def("lesson", &ExperienceItem::lesson, "The sentence a prompt shows.")
      .def("__repr__", [](const ExperienceItem& item) {
        return "<ExperienceItem " + std::to_string(item.id) + " " + item.task + " " + to_string(item.stage) + " " +
               item.skill + ">";
      });

  py::class_<ExperienceQuery>(m, "ExperienceQuery", "What to retrieve for: a task, a parent's feedback and the stage.")
      .def(py::init<>())
      .def(py::init([](std::string task, Features task_features, Features feedback, Stage stage, std::size_t count,
                       std::uint64_t seed) {
             return ExperienceQuery{std::move(task), std::move(task_features), std::move(feedback), stage, count, seed};
           }),
           py::arg("task") = "", py::arg("task_features") = Features{}, py::arg("feedback") = Features{},
           py::arg_v("stage", Stage::draft, "Stage.draft"), py::arg("count") = 3, py::arg("seed") = 0)
      .def_readwrite("task", &ExperienceQuery::task, "The task's name.")
      .def_readwrite("task_features", &ExperienceQuery::task_features, "The task's features, a dict.")
      .def_readwrite("feedback", &ExperienceQuery::feedback, "The parent's and the request's features, a dict.")
      .def_readwrite("stage", &ExperienceQuery::stage, "The Stage of the step.")
      .def_readwrite("count", &ExperienceQuery::count, "How many items at most.")
      .def_readwrite("seed", &ExperienceQuery::seed,
                     "The retriever's random draws are a function of it (the engine passes each request's seed).");

  py::class_<Retrieval>(m, "Retrieval", "Why an item was retrieved: its score, value and similarity.")
      .def(py::init<>())
      .def(py::init([](std::int64_t item, std::string skill, double score, double value, double similarity,
                       bool explored) { return Retrieval{item, std::move(skill), score, value, similarity, explored}; }),
           py::arg("item") = 0, py::arg("skill") = "", py::arg("score") = 0.0, py::arg("value") = 0.0,
           py::arg("similarity") = 0.0, py::arg("explored") = false)
      .def_readwrite("item", &Retrieval::item, "The item's id.")
      .def_readwrite("skill", &Retrieval::skill,
                     "The item's skill: a step that applies it follows the item and credits it with its reward.")
      .def_readwrite("score", &Retrieval::score, "The score it ranked by.")
      .def_readwrite("value", &Retrieval::value,
                     "The estimated value in the query's stage: of the item's skill near the query, or of the item.")
      .def_readwrite("similarity", &Retrieval::similarity, "Of its features to the query's, in [0, 1].")
      .def_readwrite("explored", &Retrieval::explored, "Drawn at random (epsilon) rather than by score.");

  py::class_<RetrievedItem>(m, "RetrievedItem", "A retrieved ExperienceItem with its Retrieval.")
      .def(py::init<>())
      .def(py::init([](ExperienceItem item, Retrieval retrieval) { return RetrievedItem{std::move(item), retrieval}; }),
           py::arg("item"), py::arg_v("retrieval", Retrieval{}, "Retrieval()"))
      .def_readwrite("item", &RetrievedItem::item, "The ExperienceItem.")
      .def_readwrite("retrieval", &RetrievedItem::retrieval, "Why it was retrieved, a Retrieval.");

  py::class_<Retriever, PyRetriever, py::smart_holder>(
      m, "Retriever",
      "Ranks experience for a query. Subclass it and implement retrieve(query, items) -> list[RetrievedItem] and "
      "name() -> str; set it with ExperienceMemory.retriever. The engine calls it from its own thread.")
      .def(py::init<>())
      .def("retrieve", &Retriever::retrieve, py::arg("query"), py::arg("items"), release(),
           "At most query.count items to show, best first, chosen from `items` (every item of the memory).")
      .def("name", &Retriever::name);

  py::class_<ValueRetrieverOptions>(m, "ValueRetrieverOptions", "Settings of the built-in ValueRetriever.")
      .def(py::init<>())
      .def_readwrite("value_weight", &ValueRetrieverOptions::value_weight,
                     "score = value_weight * estimated value + similarity_weight * similarity.")
      .def_readwrite("similarity_weight", &ValueRetrieverOptions::similarity_weight, "See value_weight.")
      .def_readwrite("epsilon", &ValueRetrieverOptions::epsilon,
                     "Chance per slot of a uniformly drawn item instead of the best (epsilon-greedy), in [0, 1].")
      .def_readwrite("draft_prior", &ValueRetrieverOptions::draft_prior, "The value a draft estimate shrinks toward.")
      .def_readwrite("refine_prior", &ValueRetrieverOptions::refine_prior, "The value a refine estimate shrinks toward.")
      .def_readwrite("prior_weight", &ValueRetrieverOptions::prior_weight,
                     "How many credits the prior counts as in an estimate.")
      .def_readwrite("min_similarity", &ValueRetrieverOptions::min_similarity,
                     "Items less similar than this are never retrieved.")
      .def_readwrite("similarity_power", &ValueRetrieverOptions::similarity_power,
                     "How sharply a skill's estimate favours close experience: an item counts with its credits' weight "
                     "times similarity**similarity_power.")
      .def_readwrite("by_skill", &ValueRetrieverOptions::by_skill,
                     "Rank skills (each by the similarity-weighted mean of its items' values, shown by its closest "
                     "item) rather than single items.")
      .def_readwrite("seed", &ValueRetrieverOptions::seed, "Mixed with each query's seed.");

  py::class_<ValueRetriever, Retriever, py::smart_holder>(
      m, "ValueRetriever",
      "The built-in ranking: each skill's value in the query's stage, estimated from its items near the query, plus "
      "how close its closest item is; epsilon-greedy.")
      .def(py::init<ValueRetrieverOptions>(), py::arg_v("options", ValueRetrieverOptions{}, "ValueRetrieverOptions()"))
      .def("estimate", &ValueRetriever::estimate, py::arg("item"), py::arg("stage"),
           "The item's own value in a stage, shrunk toward the stage's prior.")
      .def("skill_estimate", &ValueRetriever::skill_estimate, py::arg("query"), py::arg("skill"), py::arg("items"),
           "A skill's value in the query's stage from the items given: their values weighted by credits and "
           "similarity**similarity_power, shrunk toward the prior.")
      .def_static("similarity", &ValueRetriever::similarity, py::arg("query"), py::arg("item"),
                  "How alike the item's task and feedback are to the query's, in [0, 1].")
      .def_property_readonly("options", &ValueRetriever::options, "The ValueRetrieverOptions.");

  py::class_<ExperienceMemoryOptions>(m, "ExperienceMemoryOptions", "Settings of an ExperienceMemory.")
      .def(py::init<>())
      .def_readwrite("discount", &ExperienceMemoryOptions::discount,
                     "A step's reward is also credited to the items of its ancestors' steps (same stage) with weight "
                     "discount**generations.")
      .def_readwrite("horizon", &ExperienceMemoryOptions::horizon, "How many generations up are credited.")
      .def_readwrite("max_items", &ExperienceMemoryOptions::max_items,
                     "Most items kept (the least credited, then the oldest, go); 0: no limit.");

  py::class_<ExperienceMemory, py::smart_holder>(
      m, "ExperienceMemory",
      "Experience items and their values, in the process or in a SQLite file shared by runs (docs/memory.md). Give "
      "it to Evolution.set_memory, or set EvolutionConfig.memory_path.")
      .def(py::init<const std::string&, ExperienceMemoryOptions>(), py::arg("path") = "",
           py::arg_v("options", ExperienceMemoryOptions{}, "ExperienceMemoryOptions()"), release(),
           "A memory in the process (path ''), or the one in a SQLite file, created when missing.")
      .def_property_readonly("path", &ExperienceMemory::path, "The file; '' for a memory in the process.")
      .def_property_readonly("options", &ExperienceMemory::options, "The ExperienceMemoryOptions.")
      .def("items", &ExperienceMemory::items, release(), "Every item, by id, a list of ExperienceItem (copies).")
      .def("item", &ExperienceMemory::item, py::arg("id"), release(), "The item of that id, or None.")
      .def("__len__", &ExperienceMemory::size)
      .def("add", &ExperienceMemory::add, py::arg("item"), release(),
           "Adds an item as it is, values included; returns its id.")
      .def("update", &ExperienceMemory::update, py::arg("item"), release(),
           "Replaces the item of the same id (an edited note, a reset value); raises NotFoundError.")
      .def("remove", &ExperienceMemory::remove, py::arg("id"), release(), "Removes an item; False when there is none.")
      .def("clear", &ExperienceMemory::clear, release(), "Removes every item.")
      .def("record", &ExperienceMemory::record, py::arg("item"),
           py::arg("credited") = std::vector<std::vector<std::int64_t>>{}, release(),
           "Learns from one step: adds the item with its reward as its first credit, and credits the reward to the "
           "ids in credited[0] (weight 1) and credited[k] (weight discount**k, k <= horizon). Returns the new id.")
      .def("credit", &ExperienceMemory::credit, py::arg("id"), py::arg("stage"), py::arg("reward"),
           py::arg("weight") = 1.0, release(), "Adds one credit to an item's value in a stage; False for an unknown id.")
      .def("retrieve", &ExperienceMemory::retrieve, py::arg("query"), release(),
           "The retriever's answer for an ExperienceQuery, a list of RetrievedItem.")
      .def_property(
          "retriever", &ExperienceMemory::retriever,
          [](ExperienceMemory& memory, std::shared_ptr<Retriever> retriever) { memory.set_retriever(std::move(retriever)); },
          "The Retriever that ranks items (a ValueRetriever unless set); assigning None restores the default.")
      .def("reload", &ExperienceMemory::reload, release(),
           "Reads the file again, picking up what other processes wrote.");
}

}  // namespace

void bind_memory(py::module_& m) {
  bind_features(m);
  bind_skills(m);
  bind_experience(m);
}

}  // namespace kernelsmith::python
