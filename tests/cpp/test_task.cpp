// Task manifests: the built-in tasks, loading by name and by path, validation messages that name the
// file, the field and what was expected, and the JSON round trip.
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "catch.hpp"
#include "detail/json_util.hpp"
#include "evaluate/task_key.hpp"
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

// One edit that breaks a valid manifest, and a part of the message that must name what is wrong.
struct BrokenField {
  const char* what;
  void (*edit)(detail::Json&);
  const char* message_part;
};

template <std::size_t N>
void check_broken_fields(const BrokenField (&cases)[N], detail::Json (*valid_manifest)()) {
  for (const auto& c : cases) {
    INFO(c.what);
    auto manifest = valid_manifest();
    c.edit(manifest);
    const std::string message = validation_message(manifest);
    INFO(message);
    CHECK(contains(message, c.message_part));
  }
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
  // The three core tasks have a reference in CUDA, MACA and OpenCL and a tunable seed in those and in Triton.
  for (const std::string name : {"matmul", "relu", "row_sum"}) {
    INFO(name);
    const Task task = Task::load(name);
    CHECK(task.languages() == std::vector<std::string>{"cuda", "maca", "opencl"});
    CHECK(task.seeds.size() == 4);
    CHECK_FALSE(task.pytorch.empty());
    CHECK(task.check_sizes.size() >= 4);
    for (const auto& [language, source] : task.references) {
      CHECK(source.language == language);
      CHECK(fs::exists(source.path));
      CHECK(LaunchPlan::parse(source.source).launches.size() >= 1);
    }
    for (const auto& [language, seed] : task.seeds) {
      CHECK_FALSE(LaunchPlan::parse(seed.source, language).tunables.empty());
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
  const BrokenField cases[] = {
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
      {"unknown distribution", [](detail::Json& m) { m["tensors"][0]["distribution"] = {{"kind", "gauss"}}; }, "distribution.kind: expected one of normal, uniform, integers, constant; got \"gauss\""},
      {"constant with b", [](detail::Json& m) { m["tensors"][0]["distribution"] = {{"kind", "constant"}, {"a", 2}, {"b", 3}}; },
       "tensors[0].distribution.b: a constant distribution has only a (the value); remove b (got 3)"},
      {"fractional integer constant", [](detail::Json& m) { m["tensors"][0]["dtype"] = "int8"; m["tensors"][0]["distribution"] = {{"kind", "constant"}, {"a", 1.5}}; },
       "tensors[0].distribution.a: the int8 input x needs an integer constant in [-128, 127]; got 1.5"},
      {"integer constant out of range", [](detail::Json& m) { m["tensors"][0]["dtype"] = "uint8"; m["tensors"][0]["distribution"] = {{"kind", "constant"}, {"a", 256}}; },
       "tensors[0].distribution.a: the uint8 input x needs an integer constant in [0, 255]; got 256"},
      {"unknown structure", [](detail::Json& m) { m["tensors"][0]["distribution"] = {{"kind", "normal"}, {"structure", "diagonal"}}; },
       "tensors[0].distribution.structure: expected one of none, symmetric, lower_triangular, upper_triangular, probability_rows; got \"diagonal\""},
      {"unknown distribution field", [](detail::Json& m) { m["tensors"][0]["distribution"] = {{"kind", "normal"}, {"structur", "symmetric"}}; },
       "tensors[0].distribution.structur: unknown field"},
      {"symmetric vector", [](detail::Json& m) { m["tensors"][0]["distribution"] = {{"kind", "normal"}, {"structure", "symmetric"}}; },
       "tensors[0].distribution.structure: symmetric needs a tensor of rank >= 2 (it applies to the last two dimensions); x has rank 1"},
      {"triangular on a non-square shape in one configuration", [](detail::Json& m) {
         m["sizes"] = {{"N", 8}, {"M", 8}};
         m["check_sizes"][0]["sizes"] = {{"N", 7}, {"M", 5}};
         m["tensors"][0]["shape"] = {"2", "N", "M"};
         m["tensors"][0]["distribution"] = {{"kind", "normal"}, {"structure", "lower_triangular"}};
       }, "tensors[0].distribution.structure: lower_triangular needs square last two dimensions; x has 7 x 5 (\"N\" x \"M\") under the sizes \"odd\""},
      {"probability rows of integers", [](detail::Json& m) { m["tensors"][0]["dtype"] = "int32"; m["tensors"][0]["distribution"] = {{"kind", "integers"}, {"a", 0}, {"b", 3}, {"structure", "probability_rows"}}; },
       "tensors[0].distribution.structure: probability_rows needs a floating-point dtype; x is int32"},
      {"probability rows of a scalar", [](detail::Json& m) { m["tensors"][0]["shape"] = detail::Json::array(); m["tensors"][0]["distribution"] = {{"kind", "normal"}, {"structure", "probability_rows"}}; },
       "tensors[0].distribution.structure: probability_rows needs a tensor of rank >= 1 (its rows are the last dimension); x has shape []"},
      {"structure of an output", [](detail::Json& m) { m["tensors"][1]["distribution"] = {{"kind", "normal"}, {"structure", "probability_rows"}}; },
       "tensors[1].distribution.structure: y is an output: a structure shapes the values of inputs only"},
      {"integer input needs integers", [](detail::Json& m) { m["tensors"][0]["dtype"] = "int32"; }, "needs the \"integers\" or \"constant\" distribution"},
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
  check_broken_fields(cases, minimal_manifest);
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
      CHECK(copy.tensors[i].distribution.structure == original.tensors[i].distribution.structure);
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

namespace {

// A KernelBench-format problem: a Linear layer whose weight and bias become task inputs.
constexpr const char* kLinearProblem = R"py(import torch
import torch.nn as nn

class Model(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.gemm = nn.Linear(dim, dim)

    def forward(self, x, alpha):
        return self.gemm(x) * alpha

batch_size = 16
dim = 32

def get_inputs():
    return [torch.rand(batch_size, dim), 2.0]

def get_init_inputs():
    return [dim]
)py";

// A task whose expected outputs come from kLinearProblem, with no reference.
detail::Json oracle_manifest() {
  return detail::Json::parse(R"json({
    "schema": "kernelsmith.task/1",
    "name": "linear_scaled",
    "sizes": {"batch_size": 16, "dim": 32},
    "check_sizes": [{"name": "odd", "sizes": {"batch_size": 3, "dim": 5}}],
    "tensors": [
      {"name": "x", "dtype": "float32", "shape": ["batch_size", "dim"], "role": "input",
       "distribution": {"kind": "uniform", "a": 0, "b": 1}},
      {"name": "alpha", "dtype": "float32", "shape": [], "role": "input", "distribution": {"kind": "constant", "a": 2}},
      {"name": "gemm_weight", "dtype": "float32", "shape": ["dim", "dim"], "role": "input"},
      {"name": "gemm_bias", "dtype": "float32", "shape": ["dim"], "role": "input"},
      {"name": "out", "dtype": "float32", "shape": ["batch_size", "dim"], "role": "output"}
    ],
    "work": {"flops": "2 * batch_size * dim * dim", "bytes": "4 * (2 * batch_size * dim + dim * dim + dim)"},
    "oracle": {
      "kind": "pytorch",
      "module": "problem.py",
      "constants": {"batch_size": "batch_size", "dim": "dim"},
      "forward": ["x", "alpha"],
      "parameters": {"gemm.weight": "gemm_weight", "gemm.bias": "gemm_bias"},
      "outputs": ["out"],
      "casts": {"alpha": "python_float"},
      "seed": 7,
      "training": false,
      "baselines": ["eager", "compile"]
    }
  })json");
}

detail::Json inline_oracle_manifest() {
  auto manifest = oracle_manifest();
  manifest["oracle"]["module"] = {{"source", kLinearProblem}, {"path", "problem.py"}};
  return manifest;
}

}  // namespace

TEST_CASE("an oracle task loads from a folder, with no references, and survives the round trip", "[task][oracle]") {
  TempDir temp;
  write_file(temp.path / "task.json", oracle_manifest().dump(2));
  write_file(temp.path / "problem.py", kLinearProblem);
  const Task task = Task::load(temp.path.string());
  CHECK(task.references.empty());
  REQUIRE(task.oracle.has_value());
  const PytorchOracle& oracle = *task.oracle;
  CHECK(oracle.kind == "pytorch");
  CHECK(oracle.module.language == "python");
  CHECK(oracle.module.source == kLinearProblem);
  CHECK(oracle.module.path == (temp.path / "problem.py").string());
  CHECK(oracle.constants == std::map<std::string, std::string>{{"batch_size", "batch_size"}, {"dim", "dim"}});
  CHECK(oracle.forward == std::vector<std::string>{"x", "alpha"});
  CHECK(oracle.parameters ==
        std::map<std::string, std::string>{{"gemm.bias", "gemm_bias"}, {"gemm.weight", "gemm_weight"}});
  CHECK(oracle.outputs == std::vector<std::string>{"out"});
  CHECK(oracle.casts == std::map<std::string, std::string>{{"alpha", "python_float"}});
  CHECK(oracle.seed == 7);
  CHECK_FALSE(oracle.training);
  CHECK(oracle.baselines == std::vector<std::string>{"eager", "compile"});
  CHECK(task.tensor("alpha").distribution.kind == "constant");
  CHECK(task.tensor("alpha").distribution.a == 2.0);

  // to_json writes the module inline, so the copy needs no folder.
  const std::string json = task.to_json();
  const detail::Json document = detail::Json::parse(json);
  CHECK(document["oracle"]["module"]["source"] == kLinearProblem);
  CHECK_FALSE(document["tensors"][1]["distribution"].contains("b"));  // a constant has no b
  const Task copy = Task::from_json(json, "copy");
  CHECK(copy.to_json() == json);
  REQUIRE(copy.oracle.has_value());
  CHECK(copy.oracle->module.source == oracle.module.source);
  CHECK(copy.oracle->module.path == oracle.module.path);
  CHECK(copy.oracle->forward == oracle.forward);
  CHECK(copy.oracle->parameters == oracle.parameters);
  CHECK(copy.oracle->casts == oracle.casts);
  CHECK(copy.oracle->seed == 7);
  CHECK(copy.oracle->baselines == oracle.baselines);

  // Defaults: seed 42, training mode, every baseline.
  auto defaults = inline_oracle_manifest();
  for (const char* field : {"seed", "training", "baselines", "casts", "constants", "parameters"}) {
    defaults["oracle"].erase(field);
  }
  defaults["oracle"]["forward"] = {"x", "alpha", "gemm_weight", "gemm_bias"};
  const Task plain = Task::from_json(defaults.dump());
  CHECK(plain.oracle->seed == 42);
  CHECK(plain.oracle->training);
  CHECK(plain.oracle->baselines == std::vector<std::string>{"eager", "compile", "compile_max_autotune"});
  CHECK(plain.oracle->module.path == "problem.py");
}

TEST_CASE("a task may have both references and an oracle, and seeds need no reference with one", "[task][oracle]") {
  auto manifest = inline_oracle_manifest();
  manifest["seeds"] = {{"cuda", {{"source", "// @launch k<<<1, 1>>>(x, out)\n"}}}};
  Task task = Task::from_json(manifest.dump());
  CHECK(task.seeds.count("cuda") == 1);
  manifest["references"] = {
      {"opencl", {{"source", "// @launch k<<<1, 1>>>(x, alpha, gemm_weight, gemm_bias, out)\n__kernel void k() {}\n"}}}};
  task = Task::from_json(manifest.dump());
  CHECK(task.references.count("opencl") == 1);
  CHECK(task.oracle.has_value());
}

TEST_CASE("oracle validation: every broken field is named", "[task][oracle]") {
  const BrokenField cases[] = {
      {"unknown field", [](detail::Json& m) { m["oracle"]["modul"] = "x.py"; }, "m.json: oracle.modul: unknown field"},
      {"missing module", [](detail::Json& m) { m["oracle"].erase("module"); }, "oracle: missing field \"module\""},
      {"missing forward", [](detail::Json& m) { m["oracle"].erase("forward"); }, "oracle: missing field \"forward\""},
      {"missing kind", [](detail::Json& m) { m["oracle"].erase("kind"); }, "oracle: missing field \"kind\""},
      {"unknown kind", [](detail::Json& m) { m["oracle"]["kind"] = "jax"; }, "oracle.kind: expected \"pytorch\"; got \"jax\""},
      {"module file without folder", [](detail::Json& m) { m["oracle"]["module"] = "problem.py"; },
       "oracle.module: \"problem.py\" names a file, but this manifest has no folder"},
      {"unknown module field", [](detail::Json& m) { m["oracle"]["module"]["text"] = "x"; }, "oracle.module.text: unknown field"},
      {"empty module", [](detail::Json& m) { m["oracle"]["module"]["source"] = "  \n"; }, "oracle.module: the module's source is empty"},
      {"module of another language", [](detail::Json& m) { m["oracle"]["module"]["language"] = "cuda"; },
       "oracle.module.language: expected \"python\""},
      {"constants not an object", [](detail::Json& m) { m["oracle"]["constants"] = {"dim"}; }, "oracle.constants: expected an object"},
      {"constant of an unknown size", [](detail::Json& m) { m["oracle"]["constants"]["dim"] = "D"; },
       "oracle.constants.dim: \"D\" is not a size of the task; its sizes are: batch_size, dim"},
      {"constant not an identifier", [](detail::Json& m) { m["oracle"]["constants"]["2dim"] = "dim"; },
       "oracle.constants.2dim: expected a module-level constant's name"},
      {"no forward inputs", [](detail::Json& m) { m["oracle"]["forward"] = detail::Json::array(); }, "oracle.forward: expected the inputs"},
      {"unknown forward tensor", [](detail::Json& m) { m["oracle"]["forward"][0] = "z"; }, "oracle.forward[0]: the task has no tensor \"z\""},
      {"output as forward input", [](detail::Json& m) { m["oracle"]["forward"][0] = "out"; }, "oracle.forward[0]: \"out\" is an output; expected an input"},
      {"input given twice", [](detail::Json& m) { m["oracle"]["parameters"]["gemm.bias"] = "x"; },
       "oracle.parameters.gemm.bias: the input \"x\" is already given at oracle.forward[0]"},
      {"forward input twice", [](detail::Json& m) { m["oracle"]["forward"] = {"x", "x"}; },
       "oracle.forward[1]: the input \"x\" is already given at oracle.forward[0]"},
      {"input given nowhere", [](detail::Json& m) { m["oracle"]["parameters"].erase("gemm.bias"); },
       "oracle: the input \"gemm_bias\" is given to the module nowhere"},
      {"bad state-dict entry", [](detail::Json& m) { m["oracle"]["parameters"]["gemm weight"] = m["oracle"]["parameters"]["gemm.weight"]; m["oracle"]["parameters"].erase("gemm.weight"); },
       "oracle.parameters.gemm weight: expected a state-dict entry"},
      {"no outputs", [](detail::Json& m) { m["oracle"]["outputs"] = detail::Json::array(); }, "oracle.outputs: expected the output tensors"},
      {"input as output", [](detail::Json& m) { m["oracle"]["outputs"] = {"x"}; }, "oracle.outputs[0]: \"x\" is an input; expected an output"},
      {"unknown output", [](detail::Json& m) { m["oracle"]["outputs"] = {"y"}; }, "oracle.outputs[0]: the task has no tensor \"y\""},
      {"output twice", [](detail::Json& m) { m["oracle"]["outputs"] = {"out", "out"}; }, "oracle.outputs[1]: the output \"out\" is listed twice"},
      {"output missing", [](detail::Json& m) {
         m["tensors"].push_back({{"name", "out2"}, {"dtype", "float32"}, {"shape", {"dim"}}, {"role", "output"}});
       }, "oracle.outputs: the output \"out2\" is missing"},
      {"unknown cast", [](detail::Json& m) { m["oracle"]["casts"]["alpha"] = "double"; },
       "oracle.casts.alpha: expected one of bool, python_float, python_int; got \"double\""},
      {"cast of an output", [](detail::Json& m) { m["oracle"]["casts"]["out"] = "bool"; }, "oracle.casts.out: \"out\" is not an input tensor"},
      {"bool cast of float", [](detail::Json& m) { m["oracle"]["casts"]["x"] = "bool"; },
       "oracle.casts.x: a bool cast needs a uint8 tensor of 0 and 1; \"x\" is float32"},
      {"python_float of a tensor", [](detail::Json& m) { m["oracle"]["casts"]["x"] = "python_float"; },
       "oracle.casts.x: python_float needs a tensor of shape [] (one value); \"x\" has rank 2"},
      {"python_int of a float", [](detail::Json& m) { m["oracle"]["casts"]["alpha"] = "python_int"; },
       "oracle.casts.alpha: python_int needs an integer dtype; \"alpha\" is float32"},
      {"python_float of a parameter", [](detail::Json& m) {
         m["oracle"]["forward"] = {"x"};
         m["oracle"]["parameters"]["scale"] = "alpha";
       }, "oracle.casts.alpha: python_float makes a forward argument; \"alpha\" is not in \"forward\""},
      {"negative seed", [](detail::Json& m) { m["oracle"]["seed"] = -1; }, "oracle.seed: expected a seed >= 0; got -1"},
      {"seed not an integer", [](detail::Json& m) { m["oracle"]["seed"] = 4.5; }, "oracle.seed: expected an integer"},
      {"training not a boolean", [](detail::Json& m) { m["oracle"]["training"] = "yes"; }, "oracle.training: expected"},
      {"unknown baseline", [](detail::Json& m) { m["oracle"]["baselines"] = {"eager", "tensorrt"}; },
       "oracle.baselines[1]: expected one of eager, compile, compile_max_autotune; got \"tensorrt\""},
      {"baseline twice", [](detail::Json& m) { m["oracle"]["baselines"] = {"eager", "eager"}; },
       "oracle.baselines[1]: \"eager\" is listed twice"},
      {"neither references nor oracle", [](detail::Json& m) { m.erase("oracle"); },
       "references: expected at least one reference, e.g. {\"cuda\": \"reference.cu\"}, or an \"oracle\""},
  };
  check_broken_fields(cases, inline_oracle_manifest);
}

TEST_CASE("an oracle given in code is validated like one read from a manifest", "[task][oracle]") {
  Task task = Task::from_json(inline_oracle_manifest().dump());
  task.oracle->module.language = "";
  try {
    task.validate("code");
    FAIL("expected ValidationError");
  } catch (const ValidationError& error) {
    CHECK(contains(error.what(), "code: oracle.module: expected a Python module (language \"python\")"));
  }
  task.oracle->module.language = "python";
  task.oracle->kind = "";
  try {
    task.validate("code");
    FAIL("expected ValidationError");
  } catch (const ValidationError& error) {
    CHECK(contains(error.what(), "code: oracle.kind: expected \"pytorch\""));
  }
}

TEST_CASE("the task content key covers the oracle: its module and every field", "[task][oracle]") {
  const Task base = Task::from_json(inline_oracle_manifest().dump());
  const std::string key = detail::task_content_key(base);
  CHECK(detail::task_content_key(Task::from_json(base.to_json())) == key);
  std::vector<std::pair<const char*, void (*)(PytorchOracle&)>> edits = {
      {"module source", [](PytorchOracle& o) { o.module.source += "\n# changed\n"; }},
      {"constants", [](PytorchOracle& o) { o.constants.erase("dim"); }},
      {"forward order", [](PytorchOracle& o) { std::swap(o.forward[0], o.forward[1]); }},
      {"parameters", [](PytorchOracle& o) { std::swap(o.parameters["gemm.weight"], o.parameters["gemm.bias"]); }},
      {"casts", [](PytorchOracle& o) { o.casts.clear(); }},
      {"seed", [](PytorchOracle& o) { o.seed = 43; }},
      {"training", [](PytorchOracle& o) { o.training = true; }},
      {"baselines", [](PytorchOracle& o) { o.baselines = {"eager"}; }},
  };
  for (const auto& [what, edit] : edits) {
    INFO(what);
    Task changed = base;
    edit(*changed.oracle);
    CHECK(detail::task_content_key(changed) != key);
  }
  Task without = base;
  without.oracle.reset();
  CHECK(detail::task_content_key(without) != key);
}

TEST_CASE("constant distributions and structures survive the round trip", "[task]") {
  auto manifest = minimal_manifest();
  manifest["sizes"] = {{"N", 16}};
  manifest["check_sizes"][0]["sizes"] = {{"N", 5}};
  manifest["tensors"][0]["shape"] = {"N", "N"};
  manifest["tensors"][0]["distribution"] = {{"kind", "uniform"}, {"a", -1}, {"b", 1}, {"structure", "symmetric"}};
  manifest["tensors"].push_back({{"name", "p"}, {"dtype", "float16"}, {"shape", {"3", "N"}}, {"role", "input"},
                                 {"distribution", {{"kind", "normal"}, {"structure", "probability_rows"}}}});
  manifest["tensors"].push_back({{"name", "mask"}, {"dtype", "uint8"}, {"shape", {"N", "N"}}, {"role", "input"},
                                 {"distribution", {{"kind", "constant"}, {"a", 1}, {"b", 1}, {"structure", "lower_triangular"}}}});
  const Task task = Task::from_json(manifest.dump());
  CHECK(task.tensor("x").distribution.structure == "symmetric");
  CHECK(task.tensor("p").distribution.structure == "probability_rows");
  CHECK(task.tensor("y").distribution.structure == "none");
  CHECK(task.tensor("mask").distribution.kind == "constant");
  CHECK(task.tensor("mask").distribution.a == 1.0);
  const detail::Json written = detail::Json::parse(task.to_json());
  CHECK(written["tensors"][0]["distribution"]["structure"] == "symmetric");
  CHECK_FALSE(written["tensors"][1]["distribution"].contains("structure"));  // "none" is not written
  CHECK(written["tensors"][3]["distribution"] == detail::Json::parse(R"({"kind": "constant", "a": 1.0, "structure": "lower_triangular"})"));
  const Task copy = Task::from_json(task.to_json());
  CHECK(copy.to_json() == task.to_json());
  for (const auto& tensor : task.tensors) {
    INFO(tensor.name);
    CHECK(copy.tensor(tensor.name).distribution.kind == tensor.distribution.kind);
    CHECK(copy.tensor(tensor.name).distribution.a == tensor.distribution.a);
    CHECK(copy.tensor(tensor.name).distribution.b == tensor.distribution.b);
    CHECK(copy.tensor(tensor.name).distribution.structure == tensor.distribution.structure);
  }
}
