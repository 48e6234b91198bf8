// Bounded parsers and contained paths (docs/task-format.md and docs/memory.md, "Limits"): input written to
// crash a recursive parser (plan expressions, skill predicates, JSON anywhere the library reads it) gets a
// clear error naming where and the limit, and a file named by a manifest or a skill bank is read only from
// inside its folder. Each attack goes through the real entry point: a plan, a task folder, a skill bank file,
// a SQLite run store edited behind the library's back.
#include <fmt/format.h>
#include <sqlite3.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>

#include "catch.hpp"
#include "detail/contained_path.hpp"
#include "detail/expression.hpp"
#include "detail/json_util.hpp"
#include "json_codec.hpp"
#include "kernelsmith/error.hpp"
#include "kernelsmith/features.hpp"
#include "kernelsmith/launch_plan.hpp"
#include "kernelsmith/predicate.hpp"
#include "kernelsmith/prompt_builder.hpp"
#include "kernelsmith/run_store.hpp"
#include "kernelsmith/skill_bank.hpp"
#include "kernelsmith/task.hpp"
#include "test_support.hpp"

using namespace kernelsmith;
using test::contains;
using test::error_of;
namespace fs = std::filesystem;

namespace {

std::string repeat(const std::string& part, std::size_t times) {
  std::string text;
  text.reserve(part.size() * times);
  for (std::size_t i = 0; i < times; ++i) text += part;
  return text;
}

// `depth` arrays within each other around a number.
std::string nested_json(std::size_t depth) { return repeat("[", depth) + "1" + repeat("]", depth); }

// A scratch folder removed at the end of the test.
struct Scratch {
  fs::path path;
  Scratch() {
    std::random_device device;
    path = fs::temp_directory_path() / ("kernelsmith-bounded-" + std::to_string(device()));
    fs::create_directories(path);
  }
  ~Scratch() {
    std::error_code ignored;
    fs::remove_all(path, ignored);
  }
};

void write_file(const fs::path& path, const std::string& text) {
  fs::create_directories(path.parent_path());
  std::ofstream(path) << text;
}

// A task manifest with one reference named by `reference` (a file name, or a JSON value as text).
std::string manifest_naming(const std::string& reference_json) {
  return R"({
    "schema": "kernelsmith.task/1",
    "name": "scale",
    "sizes": {"N": 1024},
    "tensors": [
      {"name": "x", "dtype": "float32", "shape": ["N"], "role": "input"},
      {"name": "y", "dtype": "float32", "shape": ["N"], "role": "output"}
    ],
    "work": {"flops": "N", "bytes": "8 * N"},
    "references": {"opencl": )" +
         reference_json + "}\n}";
}

const char* const kReference = "// @launch scale<<<ceil_div(N, 64), 64>>>(x, y, N)\n__kernel void scale() {}\n";

std::string skill_bank_with(const std::string& skill_json) {
  return "{\"schema\": \"kernelsmith.skills/1\", \"skills\": [" + skill_json + "]}";
}

void sql(const std::string& path, const std::string& statement) {
  sqlite3* db = nullptr;
  REQUIRE(sqlite3_open(path.c_str(), &db) == SQLITE_OK);
  char* error = nullptr;
  const int rc = sqlite3_exec(db, statement.c_str(), nullptr, nullptr, &error);
  INFO((error ? error : ""));
  sqlite3_free(error);
  sqlite3_close(db);
  REQUIRE(rc == SQLITE_OK);
}

}  // namespace

TEST_CASE("expressions: deep nesting and long chains are refused with the limit, not a crash", "[expression][limits]") {
  const std::string limit = fmt::format("nested deeper than {} levels", detail::kMaxExpressionDepth);
  // 5,000 parentheses, a million unary minus signs, 100,000 '!', a call within a call, a chain of 100,000 '+'
  // (built by a loop, but as deep to evaluate as it is long), and each way just past the limit.
  const std::vector<std::pair<const char*, std::string>> attacks = {
      {"parentheses", repeat("(", 5000) + "1" + repeat(")", 5000)},
      {"unary minus", repeat("-", 1000000) + "1"},
      {"logical not", repeat("!", 100000) + "N"},
      {"calls", repeat("min(1, ", 5000) + "1" + repeat(")", 5000)},
      {"binary chain", "1" + repeat(" + 1", 100000)},
      {"one past the limit", repeat("(", detail::kMaxExpressionDepth + 1) + "1" +
                                 repeat(")", detail::kMaxExpressionDepth + 1)},
  };
  for (const auto& [what, text] : attacks) {
    INFO(what);
    const std::string message = error_of([&] { evaluate_expression(text, {{"N", 4}}); });
    CHECK(contains(message, limit));
    CHECK(contains(message, "at column"));
    CHECK(message.size() < 600);  // the expression is cut in the message, not repeated whole
  }
  // Up to the limit, expressions parse and evaluate as before.
  const int depth = detail::kMaxExpressionDepth - 1;
  CHECK(evaluate_expression(repeat("(", depth) + "N" + repeat(")", depth), {{"N", 4}}) == 4);
  CHECK(evaluate_expression(repeat("-", 200) + "N", {{"N", 4}}) == 4);
  CHECK(evaluate_expression("1" + repeat(" + 1", 200), {}) == 201);
}

TEST_CASE("expressions: many distinct names in a shallow expression are listed quickly", "[expression][limits]") {
  // 2^15 identifiers in a balanced tree: shallow, so it parses; listing them must not be quadratic.
  std::vector<std::string> level;
  for (int i = 0; i < (1 << 15); ++i) level.push_back(fmt::format("v{}", i));
  while (level.size() > 1) {
    std::vector<std::string> up;
    for (std::size_t i = 0; i < level.size(); i += 2) up.push_back("(" + level[i] + " + " + level[i + 1] + ")");
    level = std::move(up);
  }
  const auto start = std::chrono::steady_clock::now();
  const detail::Expression expression(level[0]);
  const auto names = expression.identifiers();
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  CHECK(names.size() == (1u << 15));
  CHECK(names.front() == "v0");
  CHECK(names.back() == "v32767");
  CHECK(seconds < 5.0);
}

TEST_CASE("a 12 KB plan line of parentheses or minus signs is a plan error on its line", "[expression][limits]") {
  for (const std::string& grid : {repeat("(", 6000) + "N" + repeat(")", 6000), repeat("-", 12000) + "N"}) {
    const std::string source = "__kernel void k() {}\n// @launch k<<<" + grid + ", 64>>>(x, y, N)\n";
    try {
      LaunchPlan::parse(source, "opencl");
      FAIL("expected a PlanError");
    } catch (const PlanError& error) {
      CHECK(error.line() == 2);
      CHECK(contains(error.what(), "line 2: @launch"));
      CHECK(contains(error.what(), "nested deeper than"));
    }
  }
}

TEST_CASE("predicates: deep nesting and long chains are refused with the limit, not a crash", "[predicate][limits]") {
  const std::vector<std::pair<const char*, std::string>> attacks = {
      {"parentheses", repeat("(", 5000) + "true" + repeat(")", 5000)},
      {"not", repeat("not ", 100000) + "true"},
      {"unary minus", repeat("-", 1000000) + "1 > 0"},
      {"and chain", "true" + repeat(" and true", 100000)},
      {"sum chain", "1" + repeat(" + 1", 100000) + " > 0"},
  };
  for (const auto& [what, text] : attacks) {
    INFO(what);
    const std::string message = error_of([&] { Predicate predicate(text); });
    CHECK(contains(message, fmt::format("nested deeper than {} levels", detail::kMaxExpressionDepth)));
    CHECK(message.size() < 600);
  }
  CHECK(Predicate(repeat("(", 200) + "true" + repeat(")", 200)).holds(Features{}));
  CHECK(Predicate(repeat("not ", 200) + "true").holds(Features{}));
}

TEST_CASE("JSON: nesting past the limit is refused with the origin, the line and the limit", "[json][limits]") {
  const std::string limit = fmt::format("nested deeper than {} levels", detail::kMaxJsonDepth);
  CHECK_NOTHROW(detail::parse_json(nested_json(detail::kMaxJsonDepth), "doc"));
  const std::string message = error_of([&] { detail::parse_json("{\n\"a\":\n" + nested_json(200000) + "}", "doc.json"); });
  CHECK(contains(message, "doc.json: line 3, column " + std::to_string(detail::kMaxJsonDepth)));
  CHECK(contains(message, limit));
  CHECK(contains(error_of([&] { detail::parse_plain_json(nested_json(detail::kMaxJsonDepth + 1), "plain"); }),
                 "plain: line 1, column"));
  // Brackets inside strings (escaped quotes included) are text, not nesting.
  const std::string in_string = "[\"" + repeat("[{", 1000) + "\\\"" + repeat("[", 1000) + "\"]";
  CHECK(detail::parse_json(in_string, "strings")[0].get<std::string>().size() == 3001);
}

TEST_CASE("JSON: deep documents in a task manifest, a skill bank, features, messages and caches", "[json][limits]") {
  const std::string limit = fmt::format("nested deeper than {} levels", detail::kMaxJsonDepth);
  Scratch scratch;
  write_file(scratch.path / "task" / "task.json", manifest_naming(nested_json(100000)));
  std::string message = error_of([&] { Task::load((scratch.path / "task").string()); });
  INFO(message);
  CHECK(contains(message, (scratch.path / "task" / "task.json").string() + ": line 10, column 156"));
  CHECK(contains(message, limit));

  write_file(scratch.path / "bank.json", skill_bank_with("{\"name\": \"a\", \"when\": \"true\", \"advice\": " +
                                                         nested_json(100000) + "}"));
  message = error_of([&] { SkillBank::load((scratch.path / "bank.json").string()); });
  CHECK(contains(message, (scratch.path / "bank.json").string() + ": line 1, column"));
  CHECK(contains(message, limit));

  // A predicate in a bank file: the error names the file and the field.
  write_file(scratch.path / "predicate.json",
             skill_bank_with("{\"name\": \"a\", \"when\": \"" + repeat("(", 5000) + "true" + repeat(")", 5000) +
                             "\", \"advice\": \"x\"}"));
  message = error_of([&] { SkillBank::load((scratch.path / "predicate.json").string()); });
  CHECK(contains(message, "predicate.json: skills[0].when: predicate"));
  CHECK(contains(message, "nested deeper than"));

  CHECK(contains(error_of([&] { Features::from_json(nested_json(100000), "features of item 3"); }),
                 "features of item 3: line 1"));
  CHECK(contains(error_of([&] { messages_from_json(nested_json(100000), "step 4 prompt"); }), "step 4 prompt: line 1"));
  CHECK(contains(error_of([&] { detail::compiled_program_from_text(nested_json(100000)); }), limit));
}

TEST_CASE("JSON: deep documents in the rows of a real run store are errors, not crashes", "[json][limits][run_store]") {
  Scratch scratch;
  const std::string path = (scratch.path / "runs.db").string();
  std::int64_t run = 0;
  {
    RunStore store(path);
    RunInfo info;
    info.task_name = "relu";
    info.config_json = "{}";
    info.task_json = "{}";
    info.language = "opencl";
    run = store.create_run(info);
    Candidate candidate;
    candidate.language = "opencl";
    candidate.source = "__kernel void k() {}";
    candidate.lineage.origin = "reference";
    store.add_program(run, "ref", candidate, "h0");
    Evaluation evaluation;
    evaluation.candidate_id = "ref";
    evaluation.task = "relu";
    evaluation.status = Status::ok;
    evaluation.speedup = 1.0;
    StepRecord step;
    step.run = run;
    step.selection = "policy";
    step.mutation = "llm_diff";
    step.retrieved = {{1, "fuse_kernels", 1.0, 0.5, 0.9, false}};
    const std::int64_t step_id = store.add_step(step);
    store.add_evaluation(run, "ref", 0, evaluation);
    ExperienceItem item;
    item.task = "relu";
    item.skill = "fuse_kernels";
    item.edit = "llm_diff";
    store.add_experience(run, step_id, item);
  }
  const std::string deep = nested_json(100000);
  const std::string limit = fmt::format("nested deeper than {} levels", detail::kMaxJsonDepth);
  struct Damage {
    const char* statement;  // {} is the deep document
    void (*read)(const RunStore&, std::int64_t);
    const char* where;  // what the message names
  };
  const Damage damages[] = {
      {"UPDATE programs SET parent_ids = '{}'", [](const RunStore& s, std::int64_t r) { s.programs(r); },
       "programs.parent_ids"},
      {"UPDATE evaluations SET json = '{{\"status\": {}}}'", [](const RunStore& s, std::int64_t r) { s.evaluations(r); },
       "in the run store"},
      {"UPDATE steps SET retrieved = '{}'", [](const RunStore& s, std::int64_t r) { s.steps(r); }, "steps.retrieved of step"},
      {"UPDATE experience SET task_features = '{}'", [](const RunStore& s, std::int64_t r) { s.experience(r); },
       "task_features"},
  };
  for (const Damage& damage : damages) {
    INFO(damage.statement);
    const std::string copy = path + "." + std::to_string(&damage - damages);
    fs::copy_file(path, copy);
    sql(copy, fmt::format(fmt::runtime(damage.statement), deep));
    const std::string message = error_of([&] { damage.read(RunStore(copy, true), run); });
    CHECK(contains(message, damage.where));
    CHECK(contains(message, limit));
  }
}

TEST_CASE("a file a task manifest names stays inside the task folder", "[task][paths]") {
  Scratch scratch;
  const fs::path task = scratch.path / "task";
  write_file(scratch.path / "outside.cl", kReference);
  write_file(task / "sub" / "reference.cl", kReference);
  const auto load_naming = [&](const std::string& name) {
    write_file(task / "task.json", manifest_naming(detail::Json(name).dump()));
    return error_of([&] { Task::load(task.string()); });
  };
  const std::string where = (task / "task.json").string() + ": references.opencl: ";
  std::string message = load_naming("../outside.cl");
  CHECK(contains(message, where + "\"../outside.cl\" leads out of the folder"));
  message = load_naming("sub/../../outside.cl");
  CHECK(contains(message, where + "\"sub/../../outside.cl\" leads out of the folder"));
  message = load_naming((scratch.path / "outside.cl").string());
  CHECK(contains(message, where + "\"" + (scratch.path / "outside.cl").string() + "\" is an absolute path"));
  // A symbolic link inside the folder that points out of it, directly or through a linked folder.
  fs::create_symlink(scratch.path / "outside.cl", task / "link.cl");
  CHECK(contains(load_naming("link.cl"), where + "\"link.cl\" leads out of the folder"));
  fs::create_directory_symlink(scratch.path, task / "up");
  CHECK(contains(load_naming("up/outside.cl"), where + "\"up/outside.cl\" leads out of the folder"));
  // Inside the folder: a subfolder, a ".." that stays inside, a link to a file inside; and a task folder that
  // is itself reached through a link.
  CHECK(load_naming("sub/reference.cl") == "no error");
  CHECK(load_naming("sub/../sub/reference.cl") == "no error");
  fs::create_symlink(task / "sub" / "reference.cl", task / "inside.cl");
  CHECK(load_naming("inside.cl") == "no error");
  fs::create_directory_symlink(task, scratch.path / "task-link");
  CHECK(error_of([&] { Task::load((scratch.path / "task-link").string()); }) == "no error");
  // The oracle's module and the seeds go through the same check.
  write_file(task / "task.json", manifest_naming("\"sub/reference.cl\"").insert(1, "\"seeds\": {\"opencl\": \"../outside.cl\"},"));
  CHECK(contains(error_of([&] { Task::load(task.string()); }), "seeds.opencl: \"../outside.cl\" leads out"));
}

TEST_CASE("a skill bank's example files stay inside the bank's folder", "[skills][paths]") {
  Scratch scratch;
  const fs::path bank = scratch.path / "bank";
  write_file(scratch.path / "secret.txt", "a secret the prompt must not carry\n");
  const auto load_naming = [&](const std::string& name) {
    write_file(bank / "skills.json",
               skill_bank_with(R"({"name": "a", "when": "true", "advice": "x", "examples": {"cuda": )" +
                               detail::Json(name).dump() + "}}"));
    SkillBank loaded;
    const std::string message = error_of([&] { loaded.load_file((bank / "skills.json").string()); });
    for (const Skill& skill : loaded.skills()) CHECK_FALSE(contains(skill.example("cuda"), "secret"));
    return message;
  };
  const std::string where = (bank / "skills.json").string() + ": skills[0].examples.cuda: ";
  CHECK(contains(load_naming("../../../../../../../../etc/passwd"), where + "\"../../../../../../../../etc/passwd\" leads "
                                                                         "out of the folder"));
  CHECK(contains(load_naming("../secret.txt"), where + "\"../secret.txt\" leads out of the folder"));
  CHECK(contains(load_naming("/etc/passwd"), where + "\"/etc/passwd\" is an absolute path"));
  fs::create_symlink(scratch.path / "secret.txt", bank / "example.cu");
  CHECK(contains(load_naming("example.cu"), where + "\"example.cu\" leads out of the folder"));
  write_file(bank / "examples" / "k.cu", "extern \"C\" __global__ void k() {}\n");
  CHECK(load_naming("examples/k.cu") == "no error");
}

TEST_CASE("path_inside compares whole components", "[paths]") {
  Scratch scratch;
  fs::create_directories(scratch.path / "relu");
  fs::create_directories(scratch.path / "relu2");
  CHECK(contains(error_of([&] { detail::path_inside(scratch.path / "relu", "../relu2/x.cl"); }), "leads out"));
  CHECK(contains(error_of([&] { detail::path_inside(scratch.path / "relu", ""); }), "empty"));
  CHECK(detail::path_inside(scratch.path / "relu", "./x.cl") == fs::canonical(scratch.path / "relu") / "x.cl");
}
