// The skill bank (lib/memory/skill_bank.cpp, skills/skills.json, docs/memory.md): the built-in file loads,
// every skill's examples compile (CUDA through NVRTC, OpenCL on PoCL), gating picks the skills that fit the
// measured features, user files extend and replace, and malformed files fail naming the file and field.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>

#include "catch.hpp"
#include "harness_test_support.hpp"
#include "kernelsmith/backend.hpp"
#include "kernelsmith/device.hpp"
#include "kernelsmith/skill_bank.hpp"
#include "test_support.hpp"

using namespace kernelsmith;
using test::contains;
using test::error_of;

namespace {

std::vector<std::string> names(const std::vector<Skill>& skills) {
  std::vector<std::string> result;
  for (const Skill& skill : skills) result.push_back(skill.name);
  return result;
}

bool has(const std::vector<std::string>& list, const std::string& name) {
  return std::find(list.begin(), list.end(), name) != list.end();
}

// Features of a correct, memory-bound parent at 30% of the bandwidth peak, one kernel.
Features memory_bound_refine() {
  Evaluation evaluation;
  evaluation.status = Status::ok;
  evaluation.compile.ok = true;
  evaluation.speedup = 1.0;
  evaluation.sol = SpeedOfLight{};
  evaluation.sol->peak_gbps = 3000;
  evaluation.sol->peak_gflops = 60000;
  evaluation.sol->bandwidth_fraction = 0.3;
  evaluation.sol->compute_fraction = 0.01;
  evaluation.sol->fraction = 0.3;
  evaluation.compile.kernels.push_back({"relu", 16, 0, 0, 0, 0, 0});
  Features features = feedback_features(evaluation);
  features.numbers["task_intensity"] = 0.125;
  features.labels["task_dtype"] = "float32";
  return features;
}

std::string write_file(const std::filesystem::path& path, const std::string& text) {
  std::filesystem::create_directories(path.parent_path());
  std::ofstream(path) << text;
  return path.string();
}

std::filesystem::path scratch_folder(const std::string& name) {
  const auto folder = std::filesystem::temp_directory_path() / ("kernelsmith-skills-" + name);
  std::filesystem::remove_all(folder);
  std::filesystem::create_directories(folder);
  return folder;
}

}  // namespace

TEST_CASE("skill bank: the built-in file loads, each skill with a CUDA and an OpenCL example", "[skills]") {
  const SkillBank bank = SkillBank::builtin();
  REQUIRE(bank.size() >= 15);
  REQUIRE(bank.files().size() == 1);
  CHECK(bank.files()[0].version == "1");
  CHECK(contains(bank.files()[0].path, "skills.json"));
  std::set<std::string> seen;
  for (const Skill& skill : bank.skills()) {
    INFO(skill.name);
    CHECK(seen.insert(skill.name).second);
    CHECK_FALSE(skill.title.empty());
    CHECK_FALSE(skill.advice.empty());
    CHECK_FALSE(skill.when.features().empty());
    CHECK(skill.examples.count("cuda") == 1);
    CHECK(skill.examples.count("opencl") == 1);
    CHECK(contains(skill.origin, "skills.json"));
  }
}

TEST_CASE("skill bank: every CUDA example compiles with NVRTC", "[skills][cuda][compile]") {
  std::string reason = "this build has no CUDA backend";
  bool can_compile = false;
  for (const BackendInfo& backend : devices()) {
    if (backend.name != "cuda") continue;
    can_compile = backend.can_compile;
    reason = backend.reason;
  }
  if (!can_compile) {
    WARN("skipped: NVRTC is unavailable here: " << reason);
    return;
  }
  CompileOptions options;
  options.target = "sm_90";
  const SkillBank bank = SkillBank::builtin();
  for (const Skill& skill : bank.skills()) {
    const CompiledProgram program = compile_offline("cuda", skill.examples.at("cuda"), options);
    INFO(skill.name << ": " << program.report.log);
    CHECK(program.report.ok);
  }
}

TEST_CASE("skill bank: every OpenCL example builds on the OpenCL device", "[skills][opencl][compile]") {
  if (!test::opencl_available()) {
    WARN("skipped: no OpenCL device (install pocl-opencl-icd)");
    return;
  }
  auto backend = create_backend("opencl", 0);
  const SkillBank bank = SkillBank::builtin();
  for (const Skill& skill : bank.skills()) {
    INFO(skill.name);
    const CompiledProgram program = backend->compile(skill.examples.at("opencl"), CompileOptions{});
    REQUIRE(program.report.ok);
    std::uint64_t module = 0;
    std::string failure;
    try {
      module = backend->load(program);  // clBuildProgram: the device's compiler
    } catch (const std::exception& error) {
      failure = error.what();
    }
    CHECK(failure.empty());
    if (failure.empty()) backend->unload(module);
  }
}

TEST_CASE("skill bank: gating shows the skills that fit the measurements", "[skills]") {
  const SkillBank bank = SkillBank::builtin();

  const auto refine = names(bank.applicable(memory_bound_refine()));
  CHECK(has(refine, "coalesce_memory_access"));
  CHECK(has(refine, "vectorize_memory_access"));
  CHECK_FALSE(has(refine, "tile_in_shared_memory"));  // not compute-bound
  CHECK_FALSE(has(refine, "fix_compile_error"));
  CHECK_FALSE(has(refine, "fuse_kernels"));  // one kernel

  Evaluation broken;
  broken.status = Status::compile_error;
  broken.compile.log = "error: identifier \"foo\" is undefined";
  CHECK(names(bank.applicable(feedback_features(broken))) == std::vector<std::string>{"fix_compile_error"});

  Evaluation unwritten;
  unwritten.status = Status::incorrect;
  unwritten.compile.ok = true;
  unwritten.correctness = CorrectnessReport{};
  CorrectnessCheck check;
  check.passed = false;
  OutputCheck output;
  output.tensor = "y";
  output.unwritten = 12;
  output.mismatches = 12;
  check.outputs.push_back(output);
  unwritten.correctness->checks.push_back(check);
  const Features unwritten_features = feedback_features(unwritten);
  CHECK(unwritten_features.label("failure") == std::optional<std::string>("unwritten"));
  CHECK(names(bank.applicable(unwritten_features)) == std::vector<std::string>{"cover_every_output"});

  // Spills, several kernels, one dominating: those skills come in bank order.
  Features spilling = memory_bound_refine();
  spilling.numbers["spill_bytes"] = 64;
  spilling.numbers["kernels"] = 2;
  spilling.numbers["dominant_kernel_share"] = 0.9;
  const auto ordered = names(bank.applicable(spilling));
  REQUIRE(ordered.size() >= 3);
  CHECK(std::vector<std::string>(ordered.begin(), ordered.begin() + 3) ==
        std::vector<std::string>{"reduce_register_pressure", "fuse_kernels", "focus_on_dominant_kernel"});
}

TEST_CASE("skill bank: a user file adds skills and replaces one of the same name in place", "[skills]") {
  const auto folder = scratch_folder("user");
  write_file(folder / "examples" / "mine.cu", "extern \"C\" __global__ void k(float* y) { y[0] = 1.0f; }\n");
  const std::string path = write_file(folder / "mine.json", R"({
    "schema": "kernelsmith.skills/1",
    "version": "7",
    "skills": [
      {"name": "fuse_kernels", "title": "Our own fusion advice", "when": "kernels > 2",
       "advice": "Fuse them our way.", "examples": {"cuda": "examples/mine.cu"}},
      {"name": "use_tensor_cores", "title": "Use tensor cores", "when": "task_intensity > 50 and language == \"cuda\"",
       "advice": "Use mma.sync.", "examples": {"opencl": {"code": "__kernel void k(__global float* y) { y[0] = 1.0f; }"}}}
    ]
  })");
  SkillBank bank = SkillBank::builtin();
  const std::size_t before = bank.size();
  const std::size_t fuse_position = static_cast<std::size_t>(
      std::find_if(bank.skills().begin(), bank.skills().end(), [](const Skill& s) { return s.name == "fuse_kernels"; }) -
      bank.skills().begin());
  CHECK(bank.load_file(path) == 2);
  CHECK(bank.size() == before + 1);
  CHECK(bank.skills()[fuse_position].title == "Our own fusion advice");
  CHECK(bank.skills()[fuse_position].example("cuda") == "extern \"C\" __global__ void k(float* y) { y[0] = 1.0f; }\n");
  CHECK(bank.skills().back().name == "use_tensor_cores");
  CHECK(bank.skills().back().example("cuda").empty());
  REQUIRE(bank.files().size() == 2);
  CHECK(bank.files()[1].version == "7");
  CHECK(bank.files()[1].skills == 2);

  // Removed, and round-tripped through the file format with examples inline.
  CHECK(bank.remove("use_tensor_cores"));
  CHECK_FALSE(bank.remove("use_tensor_cores"));
  SkillBank copy;
  copy.load_json(bank.to_json(), "<copy>");
  REQUIRE(copy.size() == bank.size());
  for (std::size_t i = 0; i < copy.size(); ++i) {
    CHECK(copy.skills()[i].name == bank.skills()[i].name);
    CHECK(copy.skills()[i].when.text() == bank.skills()[i].when.text());
    CHECK(copy.skills()[i].examples == bank.skills()[i].examples);
  }
}

TEST_CASE("skill bank: malformed files fail naming the file, the field and the column", "[skills]") {
  const auto folder = scratch_folder("bad");
  auto load = [&](const std::string& skills_json) {
    const std::string path = write_file(
        folder / "bad.json", "{\"schema\": \"kernelsmith.skills/1\", \"skills\": [" + skills_json + "]}");
    SkillBank bank = SkillBank::builtin();
    const std::size_t before = bank.size();
    const std::string message = error_of([&] { bank.load_file(path); });
    CHECK(bank.size() == before);  // a failed file changes nothing
    return message;
  };
  const std::string typo = load(R"({"name": "a", "when": "registers > 128 and spils > 0", "advice": "x"})");
  CHECK(contains(typo, "bad.json: skills[0].when: predicate \"registers > 128 and spils > 0\": column 21: unknown "
                       "feature 'spils'"));
  CHECK(contains(load(R"({"name": "a", "when": "failure == \"incorect\"", "advice": "x"})"),
                 "\"incorect\" is not a value of failure"));
  CHECK(contains(load(R"({"name": "Bad Name", "when": "true", "advice": "x"})"), "must be snake_case"));
  CHECK(contains(load(R"({"name": "a", "when": "true", "advice": "  "})"), "has no advice"));
  CHECK(contains(load(R"({"name": "a", "when": "true", "advice": "x", "examples": {"fortran": {"code": "x"}}})"),
                 "'fortran', which is no kernel language"));
  CHECK(contains(load(R"({"name": "a", "when": "true", "advice": "x", "examples": {"cuda": "nowhere.cu"}})"),
                 "the example file"));
  CHECK(contains(load(R"({"name": "a", "when": "true", "advice": "x", "colour": "red"})"), "colour"));
  CHECK(contains(load(R"({"name": "a", "when": "true", "advice": "x"}, {"name": "a", "when": "true", "advice": "y"})"),
                 "a second skill named 'a'"));
  const std::string schema_path = write_file(folder / "schema.json", R"({"schema": "kernelsmith.skills/9", "skills": []})");
  CHECK(contains(error_of([&] { SkillBank::load(schema_path); }), "reads skill banks of schema \"kernelsmith.skills/1\""));
  CHECK(contains(error_of([&] { SkillBank::load((folder / "missing.json").string()); }), "cannot read"));
  // An example named by file needs a bank read from a file.
  CHECK(contains(error_of([&] {
                   SkillBank bank;
                   bank.load_json(R"({"schema": "kernelsmith.skills/1", "skills": [{"name": "a", "when": "true",
                                     "advice": "x", "examples": {"cuda": "a.cu"}}]})");
                 }),
                 "give the code inline"));
}

TEST_CASE("skill bank: the built-in file is found through KERNELSMITH_SKILLS_PATH first", "[skills]") {
  const auto folder = scratch_folder("path");
  test::ScopedEnvironment variable("KERNELSMITH_SKILLS_PATH", (folder / "a").string() + ":" + (folder / "b").string());
  const auto path = skill_search_path();
  REQUIRE(path.size() >= 3);
  CHECK(path[0] == folder / "a");
  CHECK(path[1] == folder / "b");
}
