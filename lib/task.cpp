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

#include "detail/dynamic_library.hpp"
#include "detail/expression.hpp"
#include "detail/file_cache.hpp"
#include "detail/json_util.hpp"
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

void check_distribution(const Checker& checker, const std::string& path, const TensorSpec& tensor) {
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
  } else {
    checker.fail(path + ".kind", fmt::format("expected one of normal, uniform, integers; got \"{}\"", d.kind));
  }
  if (tensor.role == TensorRole::input && !is_floating(tensor.dtype)) {
    if (d.kind != "integers") {
      checker.fail(path + ".kind", fmt::format("the {} input {} needs the \"integers\" distribution",
                                               to_string(tensor.dtype), tensor.name));
    }
    double low = 0;
    double high = 0;
    switch (tensor.dtype) {
      case DType::int8: low = -128; high = 127; break;
      case DType::uint8: low = 0; high = 255; break;
      case DType::int32: low = -2147483648.0; high = 2147483647.0; break;
      default: low = -9.0e15; high = 9.0e15; break;
    }
    if (d.a < low || d.b > high) {
      checker.fail(path, fmt::format("the range [{}, {}] does not fit {}", d.a, d.b, to_string(tensor.dtype)));
    }
  }
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
    check_distribution(checker, path + ".distribution", tensor);
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
  if (task.references.empty()) {
    checker.fail("references", "expected at least one reference, e.g. {\"cuda\": \"reference.cu\"}");
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
      const std::string reference_language = row != nullptr ? language_of_backend(row->backend) : language;
      if (group == &task.seeds && row != nullptr && !task.references.count(reference_language)) {
        checker.fail(path, fmt::format("a {} seed needs a {} reference to be checked against", language,
                                       reference_language));
      }
      check_source_plan(checker, path, source, task);
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

std::int64_t Task::element_count(const TensorSpec& spec, const SizeMap& sizes) const {
  std::int64_t count = 1;
  for (const auto& dim : spec.shape) {
    const std::int64_t extent = evaluate_expression(dim, sizes);
    if (extent < 0) {
      throw ValidationError(fmt::format("task {}: tensor {}: the extent \"{}\" is negative ({})", name, spec.name, dim,
                                        extent));
    }
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
  std::vector<fs::path> folders;
  const auto add = [&folders](const fs::path& folder) {
    if (folder.empty()) return;
    const fs::path normal = folder.lexically_normal();
    if (std::find(folders.begin(), folders.end(), normal) == folders.end()) folders.push_back(normal);
  };
  if (const char* variable = std::getenv("KERNELSMITH_TASKS_PATH")) {
    std::string entries = variable;
    std::size_t start = 0;
    while (start <= entries.size()) {
      const std::size_t end = std::min(entries.find(':', start), entries.size());
      add(entries.substr(start, end - start));
      start = end + 1;
    }
  }
  const std::string library = detail::library_directory();
  if (!library.empty()) {
    add(fs::path(library) / "tasks");  // wheel: site-packages/kernelsmith/{libkernelsmith.so,tasks/}
    add(fs::path(library) / ".." / "share" / "kernelsmith" / "tasks");  // installed: lib/ and share/
  }
#ifdef KERNELSMITH_SOURCE_TASKS_DIR
  add(KERNELSMITH_SOURCE_TASKS_DIR);  // an uninstalled build
#endif
  return folders;
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
