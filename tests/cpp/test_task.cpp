// Task manifests: the built-in tasks, loading by name and by path, validation messages that name the
// file, the field and what was expected, and the JSON round trip.
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "catch.hpp"
#include "detail/json_util.hpp"
#include "kernelsmith/error.hpp"
#include "kernelsmith/launch_plan.hpp"
#include "kernelsmith/task.hpp"

using namespace kernelsmith;
namespace fs = std::filesystem;

namespace {

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// A minimal valid manifest with inline sources, edited by the tests that break one field.
detail::Json minimal_manifest() {
  return detail::Json::parse(R"({
    "schema": "kernelsmith.task/1",
    "name": "scale",
    "sizes": {"N": 1024},
    "check_sizes": [{"name": "odd", "sizes": {"N": 7}}],
    "tensors": [
      {"name": "x", "dtype": "float32", "shape": ["N"], "role": "input"},
      {"name": "y", "dtype": "float32", "shape": ["N"], "role": "output"}
    ],
    "work": {"flops": "N", "bytes": "8 * N"},
    "references": {"opencl": {"source": "// @launch scale<<<ceil_div(N, 64), 64>>>(x, y, N)\n__kernel void scale() {}\n"}}
  })");
}

std::string validation_message(const detail::Json& manifest, const std::string& origin = "m.json") {
  try {
    Task::from_json(manifest.dump(), origin);
  } catch (const ValidationError& error) {
    return error.what();
  }
  FAIL("expected a ValidationError for " << manifest.dump());
  return {};
}

// A scratch folder removed at the end of the test.
struct TempDir {
  fs::path path;
  TempDir() {
    path = fs::temp_directory_path() / ("kernelsmith_task_test_" + std::to_string(std::rand()));
    fs::create_directories(path);
  }
  ~TempDir() {
    std::error_code error;
    fs::remove_all(path, error);
  }
};

void write_file(const fs::path& path, const std::string& text) {
  std::ofstream stream(path);
  stream << text;
}

}  // namespace

TEST_CASE("the built-in tasks are found and valid", "[task]") {
  const auto names = builtin_task_names();
  for (const char* name : {"matmul", "relu", "row_sum"}) {
    CHECK(std::find(names.begin(), names.end(), name) != names.end());
  }
  // Every task on the search path loads and validates.
  for (const auto& name : names) {
    INFO(name);
    CHECK(Task::load(name).name == name);
  }
  // The three core tasks have a reference and a tunable seed in both languages.
  for (const std::string name : {"matmul", "relu", "row_sum"}) {
    INFO(name);
    const Task task = Task::load(name);
    CHECK(task.languages() == std::vector<std::string>{"cuda", "opencl"});
    CHECK(task.seeds.count("cuda") == 1);
    CHECK(task.seeds.count("opencl") == 1);
    CHECK_FALSE(task.pytorch.empty());
    CHECK(task.check_sizes.size() >= 4);
    for (const auto& [language, source] : task.references) {
      CHECK(source.language == language);
      CHECK(fs::exists(source.path));
      CHECK(LaunchPlan::parse(source.source).launches.size() >= 1);
    }
    for (const auto& [language, seed] : task.seeds) {
      CHECK_FALSE(LaunchPlan::parse(seed.source, language).tunables.empty());  // a Triton seed has `# @tune`
    }
  }
}

TEST_CASE("relu: sizes, tensors, work model", "[task]") {
  const Task task = Task::load("relu");
  CHECK(task.timing_sizes.name == "timing");
  CHECK(task.timing_sizes.sizes.at("N") == (1 << 24));
  const auto configs = task.all_size_configs();
  REQUIRE(configs.size() == task.check_sizes.size() + 1);
  CHECK(configs[0].name == "timing");
  bool has_odd = false;
  for (const auto& config : task.check_sizes) has_odd = has_odd || config.sizes.at("N") == 4097;
  CHECK(has_odd);
  const TensorSpec& y = task.tensor("y");
  CHECK(y.role == TensorRole::output);
  CHECK(task.element_count(y, {{"N", 4097}}) == 4097);
  CHECK(task.flops({{"N", 10}}) == 10.0);
  CHECK(task.min_bytes({{"N", 10}}) == 80.0);
  CHECK_FALSE(task.tolerance.has_value());
  CHECK(task.tolerance_for(DType::float32).atol == Approx(1e-4));
  REQUIRE_THROWS_AS(task.tensor("z"), NotFoundError);
}

TEST_CASE("matmul: explicit tolerance and a 2-D work model", "[task]") {
  const Task task = Task::load("matmul");
  REQUIRE(task.tolerance.has_value());
  CHECK(task.tolerance_for(DType::float32).atol == Approx(task.tolerance->atol));
  const SizeMap sizes = {{"M", 2}, {"N", 3}, {"K", 4}};
  CHECK(task.flops(sizes) == 48.0);
  CHECK(task.min_bytes(sizes) == 4.0 * (8 + 12 + 6));
  CHECK(task.element_count(task.tensor("C"), sizes) == 6);
}

TEST_CASE("tasks load by folder, by manifest path and by search path", "[task]") {
  const std::string folder = std::string(KERNELSMITH_SOURCE_DIR) + "/tasks/row_sum";
  CHECK(Task::load(folder).name == "row_sum");
  const Task by_manifest = Task::load(folder + "/task.json");
  CHECK(by_manifest.name == "row_sum");
  CHECK(fs::equivalent(by_manifest.folder, folder));

  TempDir temp;
  fs::create_directories(temp.path / "mine");
  write_file(temp.path / "mine" / "task.json", minimal_manifest().dump());
  setenv("KERNELSMITH_TASKS_PATH", ("/nonexistent:" + temp.path.string()).c_str(), 1);
  const auto path = task_search_path();
  unsetenv("KERNELSMITH_TASKS_PATH");
  REQUIRE(path.size() >= 3);
  CHECK(path[0] == fs::path("/nonexistent"));
  CHECK(path[1] == temp.path);
  CHECK(path.back() == fs::path(KERNELSMITH_SOURCE_DIR "/tasks").lexically_normal());

  setenv("KERNELSMITH_TASKS_PATH", temp.path.c_str(), 1);
  const Task mine = Task::load("mine");
  const auto names = builtin_task_names();
  unsetenv("KERNELSMITH_TASKS_PATH");
  CHECK(mine.name == "scale");
  CHECK(std::find(names.begin(), names.end(), "mine") != names.end());
}

TEST_CASE("unknown tasks: NotFoundError listing the known names and the search path", "[task]") {
  try {
    Task::load("relux");
    FAIL("expected NotFoundError");
  } catch (const NotFoundError& error) {
    const std::string message = error.what();
    CHECK(contains(message, "\"relux\""));
    CHECK(contains(message, "matmul, "));
    CHECK(contains(message, "relu, "));
    CHECK(contains(message, "KERNELSMITH_TASKS_PATH"));
    CHECK(contains(message, "/tasks"));
  }
  REQUIRE_THROWS_AS(Task::load("/no/such/folder"), NotFoundError);
  REQUIRE_THROWS_AS(Task::load("missing.json"), NotFoundError);
  TempDir empty;
  REQUIRE_THROWS_AS(Task::load(empty.path.string()), NotFoundError);
}

TEST_CASE("a misspelt dtype names the file, the field path and the choices", "[task]") {
  TempDir temp;
  auto manifest = minimal_manifest();
  manifest["tensors"][1]["dtype"] = "flaot32";
  write_file(temp.path / "task.json", manifest.dump());
  try {
    Task::load(temp.path.string());
    FAIL("expected ValidationError");
  } catch (const ValidationError& error) {
    const std::string expected = (temp.path / "task.json").string() +
                                 ": tensors[1].dtype: expected one of float16, bfloat16, float32, float64, int8, uint8, "
                                 "int32, int64; got \"flaot32\"";
    CHECK(std::string(error.what()) == expected);
  }
}

TEST_CASE("validation: every broken field is named", "[task]") {
  struct Case {
    const char* what;
    void (*edit)(detail::Json&);
    const char* message_part;
  };
  const Case cases[] = {
      {"unknown field", [](detail::Json& m) { m["sise"] = 1; }, "m.json: sise: unknown field"},
      {"unknown tensor field", [](detail::Json& m) { m["tensors"][0]["dtpye"] = "float32"; }, "tensors[0].dtpye: unknown field"},
      {"wrong schema", [](detail::Json& m) { m["schema"] = "kernelsmith.task/2"; }, "schema: expected \"kernelsmith.task/1\""},
      {"missing name", [](detail::Json& m) { m.erase("name"); }, "missing field \"name\""},
      {"duplicate tensor", [](detail::Json& m) { m["tensors"][1]["name"] = "x"; }, "tensors[1].name: the name \"x\" is already used"},
      {"no output", [](detail::Json& m) { m["tensors"][1]["role"] = "input"; }, "at least one tensor with role \"output\""},
      {"no input", [](detail::Json& m) { m["tensors"][0]["role"] = "output"; }, "at least one tensor with role \"input\""},
      {"bad role", [](detail::Json& m) { m["tensors"][0]["role"] = "in"; }, "tensors[0].role: expected \"input\" or \"output\""},
      {"unknown shape size", [](detail::Json& m) { m["tensors"][0]["shape"] = {"M"}; }, "tensors[0].shape[0]: under the sizes \"timing\""},
      {"zero extent", [](detail::Json& m) { m["tensors"][0]["shape"] = {"N - 7"}; }, "is 0 under the sizes \"odd\""},
      {"bad shape entry", [](detail::Json& m) { m["tensors"][0]["shape"] = {1.5}; }, "tensors[0].shape[0]: expected an integer expression"},
      {"zero size", [](detail::Json& m) { m["sizes"]["N"] = 0; }, "sizes.N: expected a size > 0"},
      {"non-integer size", [](detail::Json& m) { m["sizes"]["N"] = "big"; }, "sizes.N: expected an integer"},
      {"check size missing", [](detail::Json& m) { m["check_sizes"][0]["sizes"] = {{"M", 3}}; }, "check_sizes[0].sizes.M: this size is not in"},
      {"duplicate config", [](detail::Json& m) { m["check_sizes"][0]["name"] = "timing"; }, "check_sizes[0].name: the name \"timing\" is used twice"},
      {"normal without spread", [](detail::Json& m) { m["tensors"][0]["distribution"] = {{"kind", "normal"}, {"a", 0}, {"b", 0}}; }, "tensors[0].distribution.b: expected a standard deviation > 0"},
      {"empty uniform", [](detail::Json& m) { m["tensors"][0]["distribution"] = {{"kind", "uniform"}, {"a", 1}, {"b", 1}}; }, "expected a < b"},
      {"unknown distribution", [](detail::Json& m) { m["tensors"][0]["distribution"] = {{"kind", "gauss"}}; }, "distribution.kind: expected one of normal, uniform, integers"},
      {"integer input needs integers", [](detail::Json& m) { m["tensors"][0]["dtype"] = "int32"; }, "needs the \"integers\" distribution"},
      {"uint8 range", [](detail::Json& m) { m["tensors"][0]["dtype"] = "uint8"; m["tensors"][0]["distribution"] = {{"kind", "integers"}, {"a", -1}, {"b", 3}}; }, "does not fit uint8"},
      {"bad work", [](detail::Json& m) { m["work"]["bytes"] = "8 * Q"; }, "work.bytes: under the sizes \"timing\": expression \"8 * Q\": unknown identifier \"Q\""},
      {"negative tolerance", [](detail::Json& m) { m["tolerance"] = {{"atol", -1}, {"rtol", 0}}; }, "tolerance.atol: expected a finite number >= 0"},
      {"unknown language", [](detail::Json& m) { m["references"]["vulkan"] = {{"source", "x"}}; }, "references.vulkan: unknown language"},
      {"no reference", [](detail::Json& m) { m["references"] = detail::Json::object(); }, "references: expected at least one reference"},
      {"file without folder", [](detail::Json& m) { m["references"]["opencl"] = "reference.cl"; }, "has no folder"},
      {"seed without reference", [](detail::Json& m) { m["seeds"] = {{"cuda", {{"source", "// @launch k<<<1, 1>>>()\n"}}}}; }, "seeds.cuda: a cuda seed needs a cuda reference"},
      {"reference without plan", [](detail::Json& m) { m["references"]["opencl"]["source"] = "__kernel void k() {}"; }, "references.opencl: the source declares no launch"},
      {"plan with unknown size", [](detail::Json& m) { m["references"]["opencl"]["source"] = "// @launch k<<<Q, 1>>>(x, y)\n"; }, "line 1: grid under the sizes \"timing\""},
      {"tensor named like a size", [](detail::Json& m) { m["tensors"][0]["name"] = "N"; }, "tensors[0].name: \"N\" is already a size"},
      {"size named like a device attribute", [](detail::Json& m) { m["sizes"] = {{"SM_COUNT", 3}}; }, "sizes.SM_COUNT: this name is a device attribute"},
      {"not json", [](detail::Json& m) { m = "{"; }, "m.json"},
      {"too many elements", [](detail::Json& m) { m["tensors"][0]["shape"] = {"N", "N", "N", "N", "N", "N", "N"}; },
       "tensors[0].shape: [N, N, N, N, N, N, N] is about 1.18e+21 elements under the sizes \"timing\"; a tensor may "
       "have at most 1152921504606846976 (2^60): lower the sizes"},
      {"more elements than the limit", [](detail::Json& m) { m["tensors"][0]["shape"] = {"N", "N", "N", "N", "N", "N", "2"}; },
       "is 2305843009213693952 elements"},
  };
  for (const auto& c : cases) {
    INFO(c.what);
    auto manifest = minimal_manifest();
    c.edit(manifest);
    const std::string message = validation_message(manifest);
    INFO(message);
    CHECK(contains(message, c.message_part));
  }
  // Not JSON at all.
  try {
    Task::from_json("{\"schema\": ", "broken.json");
    FAIL("expected ValidationError");
  } catch (const ValidationError& error) {
    CHECK(contains(error.what(), "broken.json: not valid JSON"));
  }
}

TEST_CASE("a reference file named in the manifest must exist", "[task]") {
  TempDir temp;
  auto manifest = minimal_manifest();
  manifest["references"]["opencl"] = "reference.cl";
  write_file(temp.path / "task.json", manifest.dump());
  try {
    Task::load(temp.path.string());
    FAIL("expected ValidationError");
  } catch (const ValidationError& error) {
    CHECK(contains(error.what(), "references.opencl: the file \"reference.cl\" does not exist"));
  }
  write_file(temp.path / "reference.cl", std::string("// @launch scale<<<1, 1>>>(x, y, N)\n\0\x7f", 38));
  try {
    Task::load(temp.path.string());
    FAIL("expected ValidationError");
  } catch (const ValidationError& error) {
    CHECK(contains(error.what(), "references.opencl: the file \"reference.cl\" is not a text file (a NUL byte at "
                                 "offset 36): name the kernel's source file"));
  }
  write_file(temp.path / "reference.cl", "// @launch scale<<<ceil_div(N, 64), 64>>>(x, y, N)\n__kernel void scale() {}\n");
  const Task task = Task::load(temp.path.string());
  CHECK(contains(task.references.at("opencl").source, "__kernel void scale"));
  CHECK(task.references.at("opencl").path == (temp.path / "reference.cl").string());
}

TEST_CASE("to_json is self-contained and from_json reads it back unchanged", "[task]") {
  for (const auto& name : builtin_task_names()) {
    INFO(name);
    const Task original = Task::load(name);
    const std::string json = original.to_json();
    // No folder: every source must be inline.
    const Task copy = Task::from_json(json, "copy");
    CHECK(copy.to_json() == json);
    CHECK(copy.name == original.name);
    CHECK(copy.description == original.description);
    CHECK(copy.timing_sizes.name == original.timing_sizes.name);
    CHECK(copy.timing_sizes.sizes == original.timing_sizes.sizes);
    REQUIRE(copy.check_sizes.size() == original.check_sizes.size());
    for (std::size_t i = 0; i < copy.check_sizes.size(); ++i) {
      CHECK(copy.check_sizes[i].name == original.check_sizes[i].name);
      CHECK(copy.check_sizes[i].sizes == original.check_sizes[i].sizes);
    }
    REQUIRE(copy.tensors.size() == original.tensors.size());
    for (std::size_t i = 0; i < copy.tensors.size(); ++i) {
      CHECK(copy.tensors[i].name == original.tensors[i].name);
      CHECK(copy.tensors[i].dtype == original.tensors[i].dtype);
      CHECK(copy.tensors[i].shape == original.tensors[i].shape);
      CHECK(copy.tensors[i].role == original.tensors[i].role);
      CHECK(copy.tensors[i].distribution.kind == original.tensors[i].distribution.kind);
      CHECK(copy.tensors[i].distribution.a == original.tensors[i].distribution.a);
      CHECK(copy.tensors[i].distribution.b == original.tensors[i].distribution.b);
    }
    CHECK(copy.tolerance.has_value() == original.tolerance.has_value());
    if (copy.tolerance) {
      CHECK(copy.tolerance->atol == original.tolerance->atol);
      CHECK(copy.tolerance->rtol == original.tolerance->rtol);
    }
    CHECK(copy.work.flops == original.work.flops);
    CHECK(copy.work.bytes == original.work.bytes);
    using Sources = std::map<std::string, KernelSource> Task::*;
    for (Sources group : {&Task::references, &Task::seeds}) {
      REQUIRE((copy.*group).size() == (original.*group).size());
      for (const auto& [language, source] : original.*group) {
        CHECK((copy.*group).at(language).source == source.source);
        CHECK((copy.*group).at(language).path == source.path);
      }
    }
    CHECK(copy.pytorch == original.pytorch);
    CHECK(copy.folder.empty());
  }
}

TEST_CASE("a timing configuration with another name survives the round trip", "[task]") {
  auto manifest = minimal_manifest();
  manifest["sizes"] = {{"name", "big"}, {"sizes", {{"N", 4096}}}};
  const Task task = Task::from_json(manifest.dump());
  CHECK(task.timing_sizes.name == "big");
  CHECK(task.timing_sizes.sizes.at("N") == 4096);
  const Task copy = Task::from_json(task.to_json());
  CHECK(copy.timing_sizes.name == "big");
}

TEST_CASE("a task built in code validates like a manifest", "[task]") {
  Task task;
  task.name = "copy";
  task.timing_sizes = {"timing", {{"N", 16}}};
  TensorSpec x;
  x.name = "x";
  x.shape = {"N"};
  TensorSpec y = x;
  y.name = "y";
  y.role = TensorRole::output;
  task.tensors = {x, y};
  task.work = {"0", "8 * N"};
  task.references["cuda"] = {"cuda", "// @launch copy<<<1, N>>>(x, y)\n", ""};
  task.validate("code");
  task.tensors[1].shape = {"N", "0"};
  try {
    task.validate("code");
    FAIL("expected ValidationError");
  } catch (const ValidationError& error) {
    CHECK(contains(error.what(), "code: tensors[1].shape[1]"));
  }
}
