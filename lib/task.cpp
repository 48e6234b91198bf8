// Task manifests (docs/task-format.md): reading, validating, writing back, and finding built-in tasks.
#include "kernelsmith/task.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <set>
#include <sstream>

#include "detail/data_path.hpp"
#include "detail/expression.hpp"
#include "detail/file_cache.hpp"
#include "detail/json_util.hpp"
#include "evaluate/task_key.hpp"
#include "json_codec.hpp"
#include "task_cases.hpp"
#include "kernelsmith/error.hpp"
#include "kernelsmith/device_attributes.hpp"
#include "kernelsmith/language.hpp"
#include "kernelsmith/launch_plan.hpp"

namespace kernelsmith {
namespace {

namespace fs = std::filesystem;
using detail::Json;
using detail::JsonField;


// Byte counts of 8-byte elements stay within int64.
constexpr std::int64_t kMaxTensorElements = std::int64_t(1) << 60;

bool contains(const std::vector<std::string>& names, const std::string& name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}


// ---------------------------------------------------------------------------------------------- checks

class Checker {
 public:
  explicit Checker(std::string origin) : origin_(std::move(origin)) {}

  [[noreturn]] void fail(const std::string& path, const std::string& message) const {
    throw ValidationError(fmt::format("{}: {}: {}", origin_, path, message));
  }

  // Evaluates an expression of the manifest under one size configuration.
  std::int64_t evaluate(const std::string& path, const std::string& expression, const SizeConfig& config) const {
    try {
      return evaluate_expression(expression, config.sizes);
    } catch (const PlanError& error) {
      fail(path, fmt::format("under the sizes \"{}\": {}", config.name, error.what()));
    }
  }

 private:
  std::string origin_;
};

void check_size_configs(const Checker& checker, const Task& task) {
  const auto attributes = device_attribute_names();
  if (task.timing_sizes.name.empty()) checker.fail("sizes", "the timing configuration needs a name");
  if (task.timing_sizes.sizes.empty()) checker.fail("sizes", "expected at least one size, e.g. {\"N\": 1048576}");
  for (const auto& [name, value] : task.timing_sizes.sizes) {
    if (!detail::is_identifier(name)) {
      checker.fail("sizes." + name, "a size name must be an identifier ([A-Za-z_][A-Za-z0-9_]*)");
    }
    if (contains(attributes, name)) checker.fail("sizes." + name, "this name is a device attribute; choose another");
    if (name.rfind("KS_", 0) == 0) checker.fail("sizes." + name, "names starting with KS_ are reserved");
  }
  std::set<std::string> config_names = {task.timing_sizes.name};
  const auto all = task.all_size_configs();
  for (std::size_t i = 0; i < all.size(); ++i) {
    const SizeConfig& config = all[i];
    const std::string path = i == 0 ? std::string("sizes") : fmt::format("check_sizes[{}]", i - 1);
    if (i > 0) {
      if (config.name.empty()) checker.fail(path + ".name", "expected a non-empty name");
      if (!config_names.insert(config.name).second) {
        checker.fail(path + ".name", fmt::format("the name \"{}\" is used twice", config.name));
      }
    }
    const std::string sizes_path = i == 0 ? path : path + ".sizes";
    for (const auto& [name, value] : config.sizes) {
      if (value <= 0) checker.fail(sizes_path + "." + name, fmt::format("expected a size > 0; got {}", value));
      if (!task.timing_sizes.sizes.count(name)) {
        checker.fail(sizes_path + "." + name, "this size is not in the timing configuration \"sizes\"");
      }
    }
    for (const auto& [name, value] : task.timing_sizes.sizes) {
      if (!config.sizes.count(name)) checker.fail(sizes_path, fmt::format("missing the size \"{}\"", name));
    }
  }
}

double integer_low(DType dtype) {
  switch (dtype) {
    case DType::int8: return -128;
    case DType::uint8: return 0;
    case DType::int32: return -2147483648.0;
    default: return -9.0e15;  // int64: the integers a double holds exactly
  }
}

double integer_high(DType dtype) {
  switch (dtype) {
    case DType::int8: return 127;
    case DType::uint8: return 255;
    case DType::int32: return 2147483647.0;
    default: return 9.0e15;
  }
}

// The structure's needs on the tensor's shape, under every size configuration.
void check_structure(const Checker& checker, const std::string& path, const TensorSpec& tensor, const Task& task) {
  const std::string& structure = tensor.distribution.structure;
  if (structure == "none") return;
  const bool square = structure == "symmetric" || structure == "lower_triangular" || structure == "upper_triangular";
  if (!square && structure != "probability_rows") {
    checker.fail(path + ".structure",
                 fmt::format("expected one of none, symmetric, lower_triangular, upper_triangular, probability_rows; "
                             "got \"{}\"",
                             structure));
  }
  if (tensor.role != TensorRole::input) {
    checker.fail(path + ".structure", fmt::format("{} is an output: a structure shapes the values of inputs only",
                                                  tensor.name));
  }
  if (!square) {
    if (!is_floating(tensor.dtype)) {
      checker.fail(path + ".structure", fmt::format("probability_rows needs a floating-point dtype; {} is {}",
                                                    tensor.name, to_string(tensor.dtype)));
    }
    if (tensor.shape.empty()) {
      checker.fail(path + ".structure", fmt::format("probability_rows needs a tensor of rank >= 1 (its rows are the "
                                                    "last dimension); {} has shape []",
                                                    tensor.name));
    }
    return;
  }
  if (tensor.shape.size() < 2) {
    checker.fail(path + ".structure", fmt::format("{} needs a tensor of rank >= 2 (it applies to the last two "
                                                  "dimensions); {} has rank {}",
                                                  structure, tensor.name, tensor.shape.size()));
  }
  const std::size_t rank = tensor.shape.size();
  for (const auto& config : task.all_size_configs()) {
    const std::int64_t rows = evaluate_expression(tensor.shape[rank - 2], config.sizes);
    const std::int64_t columns = evaluate_expression(tensor.shape[rank - 1], config.sizes);
    if (rows != columns) {
      checker.fail(path + ".structure",
                   fmt::format("{} needs square last two dimensions; {} has {} x {} (\"{}\" x \"{}\") under the "
                               "sizes \"{}\"",
                               structure, tensor.name, rows, columns, tensor.shape[rank - 2], tensor.shape[rank - 1],
                               config.name));
    }
  }
}

void check_distribution(const Checker& checker, const std::string& path, const TensorSpec& tensor, const Task& task) {
  const Distribution& d = tensor.distribution;
  if (!std::isfinite(d.a) || !std::isfinite(d.b)) checker.fail(path, "a and b must be finite numbers");
  if (d.kind == "normal") {
    if (!(d.b > 0)) checker.fail(path + ".b", fmt::format("expected a standard deviation > 0; got {}", d.b));
  } else if (d.kind == "uniform") {
    if (!(d.a < d.b)) checker.fail(path, fmt::format("expected a < b (the range [a, b)); got a = {}, b = {}", d.a, d.b));
  } else if (d.kind == "integers") {
    if (std::floor(d.a) != d.a || std::floor(d.b) != d.b || d.a > d.b) {
      checker.fail(path, fmt::format("expected integers a <= b (inclusive range); got a = {}, b = {}", d.a, d.b));
    }
  } else if (d.kind == "constant") {
    if (d.b != Distribution().b) {
      checker.fail(path + ".b", fmt::format("a constant distribution has only a (the value); remove b (got {})", d.b));
    }
  } else {
    checker.fail(path + ".kind",
                 fmt::format("expected one of normal, uniform, integers, constant; got \"{}\"", d.kind));
  }
  if (tensor.role == TensorRole::input && !is_floating(tensor.dtype)) {
    const double low = integer_low(tensor.dtype);
    const double high = integer_high(tensor.dtype);
    if (d.kind == "constant") {
      if (std::floor(d.a) != d.a || d.a < low || d.a > high) {
        checker.fail(path + ".a", fmt::format("the {} input {} needs an integer constant in [{}, {}]; got {}",
                                              to_string(tensor.dtype), tensor.name, low, high, d.a));
      }
    } else if (d.kind != "integers") {
      checker.fail(path + ".kind", fmt::format("the {} input {} needs the \"integers\" or \"constant\" distribution",
                                               to_string(tensor.dtype), tensor.name));
    } else if (d.a < low || d.b > high) {
      checker.fail(path, fmt::format("the range [{}, {}] does not fit {}", d.a, d.b, to_string(tensor.dtype)));
    }
  }
  check_structure(checker, path, tensor, task);
}

void check_tensors(const Checker& checker, const Task& task) {
  const auto attributes = device_attribute_names();
  bool has_input = false;
  bool has_output = false;
  const auto configs = task.all_size_configs();
  for (std::size_t i = 0; i < task.tensors.size(); ++i) {
    const TensorSpec& tensor = task.tensors[i];
    const std::string path = fmt::format("tensors[{}]", i);
    if (!detail::is_identifier(tensor.name)) {
      checker.fail(path + ".name", fmt::format("expected an identifier ([A-Za-z_][A-Za-z0-9_]*); got \"{}\"", tensor.name));
    }
    for (std::size_t j = 0; j < i; ++j) {
      if (task.tensors[j].name == tensor.name) {
        checker.fail(path + ".name", fmt::format("the name \"{}\" is already used by tensors[{}]", tensor.name, j));
      }
    }
    if (task.timing_sizes.sizes.count(tensor.name) || contains(attributes, tensor.name)) {
      checker.fail(path + ".name", fmt::format("\"{}\" is already a size or a device attribute", tensor.name));
    }
    has_input = has_input || tensor.role == TensorRole::input;
    has_output = has_output || tensor.role == TensorRole::output;
    for (const auto& config : configs) {
      std::int64_t elements = 1;
      bool overflows = false;
      double approximate = 1.0;  // for the message, when the count overflows int64
      for (std::size_t d = 0; d < tensor.shape.size(); ++d) {
        const std::string dim_path = fmt::format("{}.shape[{}]", path, d);
        const std::int64_t extent = checker.evaluate(dim_path, tensor.shape[d], config);
        if (extent <= 0) {
          checker.fail(dim_path, fmt::format("\"{}\" is {} under the sizes \"{}\"; expected > 0", tensor.shape[d],
                                             extent, config.name));
        }
        approximate *= static_cast<double>(extent);
        overflows = overflows || __builtin_mul_overflow(elements, extent, &elements);
      }
      if (overflows || elements > kMaxTensorElements) {
        checker.fail(path + ".shape",
                     fmt::format("[{}] is {} elements under the sizes \"{}\"; a tensor may have at most {} (2^60): "
                                 "lower the sizes",
                                 fmt::join(tensor.shape, ", "),
                                 overflows ? fmt::format("about {:.3g}", approximate) : std::to_string(elements),
                                 config.name, kMaxTensorElements));
      }
    }
    check_distribution(checker, path + ".distribution", tensor, task);
  }
  if (!has_input) checker.fail("tensors", "expected at least one tensor with role \"input\"");
  if (!has_output) checker.fail("tensors", "expected at least one tensor with role \"output\"");
}

// The task's own sources must carry a plan that evaluates on every size configuration.
void check_source_plan(const Checker& checker, const std::string& path, const KernelSource& source,
                       const Task& task) {
  const std::string where = source.path.empty() ? path : fmt::format("{} ({})", path, source.path);
  LaunchPlan plan;
  try {
    plan = LaunchPlan::parse(source.source, source.language);
  } catch (const PlanError& error) {
    checker.fail(where, error.what());
  }
  std::set<std::string> buffers;
  for (const auto& tensor : task.tensors) buffers.insert(tensor.name);
  for (const auto& workspace : plan.workspaces) buffers.insert(workspace.name);
  for (const auto& map : plan.tensor_maps) buffers.insert(map.name);  // arguments by name, like buffers
  for (const auto& config : task.all_size_configs()) {
    Bindings bindings = placeholder_device_attribute_values();
    for (const auto& [name, value] : config.sizes) bindings[name] = value;
    for (const auto& tunable : plan.tunables) bindings[tunable.name] = tunable.value;
    const auto evaluate = [&](const std::string& expression, int line, const char* role) {
      try {
        return evaluate_expression(expression, bindings);
      } catch (const PlanError& error) {
        checker.fail(where, fmt::format("line {}: {} under the sizes \"{}\": {}", line, role, config.name, error.what()));
      }
    };
    for (const auto& workspace : plan.workspaces) {
      if (evaluate(workspace.count, workspace.line, "workspace count") < 0) {
        checker.fail(where, fmt::format("line {}: negative workspace count", workspace.line));
      }
    }
    for (const auto& launch : plan.launches) {
      for (int d = 0; d < 3; ++d) {
        if (evaluate(launch.grid[static_cast<std::size_t>(d)], launch.line, "grid") <= 0 ||
            evaluate(launch.block[static_cast<std::size_t>(d)], launch.line, "block") <= 0) {
          checker.fail(where, fmt::format("line {}: grid and block must be > 0 under the sizes \"{}\"", launch.line,
                                          config.name));
        }
      }
      evaluate(launch.shared_bytes, launch.line, "shared_bytes");
      for (const auto& arg : launch.args) {
        if (!buffers.count(arg)) evaluate(arg, launch.line, "argument");
      }
    }
  }
}

void check_sources(const Checker& checker, const Task& task) {
  if (task.references.empty() && !task.oracle) {
    checker.fail("references", "expected at least one reference, e.g. {\"cuda\": \"reference.cu\"}, or an "
                               "\"oracle\" (a PyTorch module giving the expected outputs)");
  }
  for (const auto* group : {&task.references, &task.seeds}) {
    const char* group_name = group == &task.references ? "references" : "seeds";
    for (const auto& [language, source] : *group) {
      const std::string path = fmt::format("{}.{}", group_name, language);
      if (find_kernel_language(language) == nullptr) {
        checker.fail(path, "unknown language; expected one of " + kernel_language_names());
      }
      if (source.language != language) {
        checker.fail(path, fmt::format("the source says language \"{}\"", source.language));
      }
      if (source.source.find_first_not_of(" \t\r\n") == std::string::npos) checker.fail(path, "the source is empty");
      // A seed is checked against the reference of the backend that runs it: a Triton seed against the
      // CUDA reference (Triton is a front end of the CUDA backend).
      const KernelLanguage* row = find_kernel_language(language);
      if (row != nullptr && row->host_code) {
        // A ModelNew seed has no plan, and only a PyTorch module can check it.
        if (group == &task.references) checker.fail(path, "a ModelNew file cannot be a reference: give a kernel");
        if (!task.oracle) checker.fail(path, "a ModelNew seed needs an \"oracle\" (a PyTorch module) to be checked against");
        continue;
      }
      const std::string reference_language = row != nullptr ? language_of_backend(row->backend) : language;
      // With an oracle, the oracle checks every seed.
      if (group == &task.seeds && row != nullptr && !task.oracle && !task.references.count(reference_language)) {
        checker.fail(path, fmt::format("a {} seed needs a {} reference to be checked against", language,
                                       reference_language));
      }
      check_source_plan(checker, path, source, task);
    }
  }
}

// The oracle's names against the task's tensors and sizes (docs/task-format.md, "oracle").
void check_oracle(const Checker& checker, const Task& task) {
  if (!task.oracle) return;
  const PytorchOracle& oracle = *task.oracle;
  const auto find_tensor = [&task](const std::string& name) -> const TensorSpec* {
    for (const auto& tensor : task.tensors) {
      if (tensor.name == name) return &tensor;
    }
    return nullptr;
  };
  const auto known = [](const std::vector<std::string>& names) { return fmt::format("{}", fmt::join(names, ", ")); };
  if (oracle.kind != "pytorch") checker.fail("oracle.kind", fmt::format("expected \"pytorch\"; got \"{}\"", oracle.kind));
  if (oracle.module.language != "python") {
    checker.fail("oracle.module", fmt::format("expected a Python module (language \"python\"); got language \"{}\"",
                                              oracle.module.language));
  }
  if (oracle.module.source.find_first_not_of(" \t\r\n") == std::string::npos) {
    checker.fail("oracle.module", "the module's source is empty");
  }
  for (const auto& [constant, size] : oracle.constants) {
    const std::string path = "oracle.constants." + constant;
    if (!detail::is_identifier(constant)) checker.fail(path, "expected a module-level constant's name (an identifier)");
    if (!task.timing_sizes.sizes.count(size)) {
      std::vector<std::string> sizes;
      for (const auto& entry : task.timing_sizes.sizes) sizes.push_back(entry.first);
      checker.fail(path, fmt::format("\"{}\" is not a size of the task; its sizes are: {}", size, known(sizes)));
    }
  }
  // Where each input is given to the module: each exactly once, in forward or in parameters.
  std::map<std::string, std::string> input_use;
  const auto use_input = [&](const std::string& path, const std::string& name) {
    const TensorSpec* tensor = find_tensor(name);
    if (tensor == nullptr) checker.fail(path, fmt::format("the task has no tensor \"{}\"", name));
    if (tensor->role != TensorRole::input) checker.fail(path, fmt::format("\"{}\" is an output; expected an input", name));
    const auto [previous, inserted] = input_use.emplace(name, path);
    if (!inserted) checker.fail(path, fmt::format("the input \"{}\" is already given at {}", name, previous->second));
  };
  if (oracle.forward.empty()) checker.fail("oracle.forward", "expected the inputs of Model.forward, in order");
  for (std::size_t i = 0; i < oracle.forward.size(); ++i) use_input(fmt::format("oracle.forward[{}]", i), oracle.forward[i]);
  for (const auto& [entry, tensor] : oracle.parameters) {
    const std::string path = "oracle.parameters." + entry;
    if (entry.empty() || entry.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.") !=
                             std::string::npos) {
      checker.fail(path, "expected a state-dict entry of the module, e.g. \"gemm.weight\"");
    }
    use_input(path, tensor);
  }
  std::set<std::string> outputs;
  if (oracle.outputs.empty()) checker.fail("oracle.outputs", "expected the output tensors the forward's result maps to");
  for (std::size_t i = 0; i < oracle.outputs.size(); ++i) {
    const std::string path = fmt::format("oracle.outputs[{}]", i);
    const TensorSpec* tensor = find_tensor(oracle.outputs[i]);
    if (tensor == nullptr) checker.fail(path, fmt::format("the task has no tensor \"{}\"", oracle.outputs[i]));
    if (tensor->role != TensorRole::output) {
      checker.fail(path, fmt::format("\"{}\" is an input; expected an output", oracle.outputs[i]));
    }
    if (!outputs.insert(oracle.outputs[i]).second) {
      checker.fail(path, fmt::format("the output \"{}\" is listed twice", oracle.outputs[i]));
    }
  }
  for (const auto& tensor : task.tensors) {
    if (tensor.role == TensorRole::input && !input_use.count(tensor.name)) {
      checker.fail("oracle", fmt::format("the input \"{}\" is given to the module nowhere: name it in "
                                         "\"forward\" or as the value of a \"parameters\" entry",
                                         tensor.name));
    }
    if (tensor.role == TensorRole::output && !outputs.count(tensor.name)) {
      checker.fail("oracle.outputs", fmt::format("the output \"{}\" is missing: every output tensor must be listed",
                                                 tensor.name));
    }
  }
  for (const auto& [name, cast] : oracle.casts) {
    const std::string path = "oracle.casts." + name;
    if (!contains(pytorch_oracle_casts(), cast)) {
      checker.fail(path, fmt::format("expected one of {}; got \"{}\"", known(pytorch_oracle_casts()), cast));
    }
    const TensorSpec* tensor = find_tensor(name);
    if (tensor == nullptr || tensor->role != TensorRole::input) {
      checker.fail(path, fmt::format("\"{}\" is not an input tensor of the task", name));
    }
    if (cast == "bool" && tensor->dtype != DType::uint8) {
      checker.fail(path, fmt::format("a bool cast needs a uint8 tensor of 0 and 1; \"{}\" is {}", name,
                                     to_string(tensor->dtype)));
    }
    if (cast == "python_float" || cast == "python_int") {
      if (!tensor->shape.empty()) {
        checker.fail(path, fmt::format("{} needs a tensor of shape [] (one value); \"{}\" has rank {}", cast, name,
                                       tensor->shape.size()));
      }
      if (!contains(oracle.forward, name)) {
        checker.fail(path, fmt::format("{} makes a forward argument; \"{}\" is not in \"forward\"", cast, name));
      }
      if (is_floating(tensor->dtype) != (cast == "python_float")) {
        checker.fail(path, fmt::format("{} needs a{} dtype; \"{}\" is {}", cast,
                                       cast == "python_float" ? " floating-point" : "n integer", name,
                                       to_string(tensor->dtype)));
      }
    }
  }
  if (oracle.seed < 0) checker.fail("oracle.seed", fmt::format("expected a seed >= 0; got {}", oracle.seed));
  std::set<std::string> baselines;
  for (std::size_t i = 0; i < oracle.baselines.size(); ++i) {
    const std::string path = fmt::format("oracle.baselines[{}]", i);
    if (!contains(pytorch_oracle_baselines(), oracle.baselines[i])) {
      checker.fail(path, fmt::format("expected one of {}; got \"{}\"", known(pytorch_oracle_baselines()),
                                     oracle.baselines[i]));
    }
    if (!baselines.insert(oracle.baselines[i]).second) {
      checker.fail(path, fmt::format("\"{}\" is listed twice", oracle.baselines[i]));
    }
  }
}

void check_work(const Checker& checker, const Task& task) {
  for (const auto& config : task.all_size_configs()) {
    if (checker.evaluate("work.flops", task.work.flops, config) < 0) checker.fail("work.flops", "expected >= 0");
    if (checker.evaluate("work.bytes", task.work.bytes, config) < 0) checker.fail("work.bytes", "expected >= 0");
  }
}

}  // namespace

const std::vector<std::string>& pytorch_oracle_casts() {
  static const std::vector<std::string> casts = {"bool", "python_float", "python_int"};
  return casts;
}

const std::vector<std::string>& pytorch_oracle_baselines() {
  static const std::vector<std::string> baselines = {"eager", "compile", "compile_max_autotune"};
  return baselines;
}

Tolerance default_tolerance(DType dtype) {
  switch (dtype) {
    case DType::float16:
    case DType::bfloat16: return {1e-2, 1e-2};
    case DType::float32: return {1e-4, 1e-4};
    case DType::float64: return {1e-8, 1e-8};
    default: return {0.0, 0.0};
  }
}

Task Task::from_json(const std::string& json_text, const std::string& origin, const fs::path& folder) {
  const Json document = detail::parse_json(json_text, origin);
  Task task = detail::task_from_json(JsonField(document, origin), folder);
  task.validate(origin);
  return task;
}

std::string Task::to_json() const { return detail::task_to_json(*this).dump(2); }

std::string Task::content_key() const { return detail::task_content_key(*this); }

void Task::validate(const std::string& origin) const {
  const Checker checker(origin);
  if (name.empty() || name.find_first_of(" \t\n/\\") != std::string::npos) {
    checker.fail("name", fmt::format("expected a non-empty name without spaces or slashes; got \"{}\"", name));
  }
  check_size_configs(checker, *this);
  if (tensors.empty()) checker.fail("tensors", "expected at least one input and one output tensor");
  check_tensors(checker, *this);
  if (tolerance && (!(tolerance->atol >= 0) || !(tolerance->rtol >= 0) || !std::isfinite(tolerance->atol) ||
                    !std::isfinite(tolerance->rtol))) {
    checker.fail("tolerance", "atol and rtol must be finite numbers >= 0");
  }
  check_work(checker, *this);
  check_sources(checker, *this);
  check_oracle(checker, *this);
  detail::validate_cases(*this, origin);
}

const TensorSpec& Task::tensor(const std::string& tensor_name) const {
  for (const auto& spec : tensors) {
    if (spec.name == tensor_name) return spec;
  }
  std::string names;
  for (const auto& spec : tensors) names += (names.empty() ? "" : ", ") + spec.name;
  throw NotFoundError(fmt::format("task {} has no tensor \"{}\"; its tensors are: {}", name, tensor_name, names));
}

std::vector<std::string> Task::languages() const {
  std::vector<std::string> result;
  for (const auto& [language, source] : references) result.push_back(language);
  return result;
}

std::vector<SizeConfig> Task::all_size_configs() const {
  std::vector<SizeConfig> configs;
  configs.push_back(timing_sizes);
  configs.insert(configs.end(), check_sizes.begin(), check_sizes.end());
  return configs;
}

std::vector<std::int64_t> Task::extents(const TensorSpec& spec, const SizeMap& sizes) const {
  std::vector<std::int64_t> result;
  for (const auto& dim : spec.shape) {
    const std::int64_t extent = evaluate_expression(dim, sizes);
    if (extent < 0) {
      throw ValidationError(fmt::format("task {}: tensor {}: the extent \"{}\" is negative ({})", name, spec.name, dim,
                                        extent));
    }
    result.push_back(extent);
  }
  return result;
}

std::int64_t Task::element_count(const TensorSpec& spec, const SizeMap& sizes) const {
  std::int64_t count = 1;
  for (const std::int64_t extent : extents(spec, sizes)) {
    if (__builtin_mul_overflow(count, extent, &count)) {
      throw ValidationError(fmt::format("task {}: tensor {}: the element count overflows int64", name, spec.name));
    }
  }
  return count;
}

Tolerance Task::tolerance_for(DType dtype) const { return tolerance ? *tolerance : default_tolerance(dtype); }

double Task::flops(const SizeMap& sizes) const { return static_cast<double>(evaluate_expression(work.flops, sizes)); }

double Task::min_bytes(const SizeMap& sizes) const {
  return static_cast<double>(evaluate_expression(work.bytes, sizes));
}

std::vector<fs::path> task_search_path() {
#ifdef KERNELSMITH_SOURCE_TASKS_DIR
  const std::string source_folder = KERNELSMITH_SOURCE_TASKS_DIR;  // an uninstalled build
#else
  const std::string source_folder;
#endif
  return detail::data_search_path("KERNELSMITH_TASKS_PATH", "tasks", source_folder);
}

std::vector<std::string> builtin_task_names() {
  std::set<std::string> names;
  for (const auto& folder : task_search_path()) {
    std::error_code error;
    if (!fs::is_directory(folder, error)) continue;
    for (const auto& entry : fs::directory_iterator(folder, error)) {
      if (entry.is_directory(error) && fs::is_regular_file(entry.path() / "task.json", error)) {
        names.insert(entry.path().filename().string());
      }
    }
  }
  return {names.begin(), names.end()};
}

Task Task::load(const std::string& name_or_path) {
  fs::path manifest;
  std::error_code error;
  const fs::path given(name_or_path);
  if (fs::is_directory(given, error)) {
    manifest = given / "task.json";
    if (!fs::is_regular_file(manifest, error)) {
      throw NotFoundError(fmt::format("the folder {} holds no task.json manifest", given.string()));
    }
  } else if (fs::is_regular_file(given, error)) {
    manifest = given;
  } else if (name_or_path.find('/') != std::string::npos || given.extension() == ".json" ||
             name_or_path.empty()) {
    throw NotFoundError(fmt::format("no task folder or manifest at \"{}\"", name_or_path));
  } else {
    for (const auto& folder : task_search_path()) {
      if (fs::is_regular_file(folder / name_or_path / "task.json", error)) {
        manifest = folder / name_or_path / "task.json";
        break;
      }
    }
    if (manifest.empty()) {
      std::string searched;
      for (const auto& folder : task_search_path()) searched += (searched.empty() ? "" : ", ") + folder.string();
      const auto names = builtin_task_names();
      std::string known;
      for (const auto& name : names) known += (known.empty() ? "" : ", ") + name;
      throw NotFoundError(fmt::format(
          "unknown task \"{}\"; the built-in tasks are: {} (searched {}; add folders with KERNELSMITH_TASKS_PATH, or "
          "pass the path of a task folder)",
          name_or_path, known.empty() ? "(none found)" : known, searched));
    }
  }
  const auto text = detail::read_whole_file(manifest.string());
  if (!text) throw NotFoundError(fmt::format("cannot read {}", manifest.string()));
  return from_json(*text, manifest.lexically_normal().string(),
                   manifest.parent_path().lexically_normal());
}

}  // namespace kernelsmith
