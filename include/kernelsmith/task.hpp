// Task: what to compute. A task is a folder holding a manifest (task.json) and source files, one
// reference per kernel language. See docs/task-format.md for the manifest's schema.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "kernelsmith/dtype.hpp"
#include "kernelsmith/export.hpp"
#include "kernelsmith/tensor.hpp"

namespace kernelsmith {

/// Named integer sizes, e.g. {"M": 4096, "N": 4096}. Shapes and launch expressions refer to them.
using SizeMap = std::map<std::string, std::int64_t>;

enum class TensorRole { input, output };

/// How the correctness protocol draws a tensor's values.
///   normal(a = mean, b = stddev)   uniform(a = low, b = high)   integers(a = low, b = high, inclusive)
///   constant(a = the value; b unused): the same value under every input kind, a fixed parameter of the
///   problem rather than data to perturb
/// `structure` shapes the drawn values, after every input kind (so adversarial cases keep it):
///   "none"               as drawn
///   "symmetric"          the last two dims are square; [i][j] = [j][i] (the lower triangle mirrored)
///   "lower_triangular"   the last two dims; elements above the diagonal are 0
///   "upper_triangular"   the last two dims; elements below the diagonal are 0
///   "probability_rows"   over the last dim: each row is the softmax of its drawn values (positive, sum 1)
struct Distribution {
  std::string kind = "normal";
  double a = 0.0;
  double b = 1.0;
  std::string structure = "none";
};

struct TensorSpec {
  std::string name;
  DType dtype = DType::float32;
  /// One integer expression per dimension over the task's sizes, e.g. {"M", "K"} or {"2*N"}.
  std::vector<std::string> shape;
  TensorRole role = TensorRole::input;
  Distribution distribution;
};

/// One assignment of the task's sizes.
struct SizeConfig {
  std::string name;
  SizeMap sizes;
};

/// |actual - expected| <= atol + rtol * |expected|, element by element.
struct Tolerance {
  double atol = 0.0;
  double rtol = 0.0;
};

/// Default tolerance for a dtype: fp32 1e-4, fp16/bf16 1e-2, fp64 1e-8, integers exact.
KERNELSMITH_API Tolerance default_tolerance(DType dtype);

/// The work the computation needs, as integer expressions over the sizes. `bytes` is the fewest bytes
/// any implementation must move (each input read once, each output written once).
struct WorkModel {
  std::string flops = "0";
  std::string bytes = "0";
};

/// A source file for one kernel language ("cuda", "opencl", "maca").
struct KernelSource {
  std::string language;
  std::string source;
  /// Where it was read from, for messages; empty when given inline.
  std::string path;
};

/// A case of the caller's own data (Task::add_case): values for every input tensor and, optionally, the
/// expected values of some outputs (the reference computes the others), at one of the task's size
/// configurations. The evaluator checks every candidate on it after its own checks. Bytes are C order.
struct DataCase {
  std::string name;   ///< "user case 0", "user case 1", ...
  std::string sizes;  ///< the name of the size configuration it runs at
  std::map<std::string, std::shared_ptr<const std::vector<std::uint8_t>>> inputs;
  std::map<std::string, std::shared_ptr<const std::vector<std::uint8_t>>> expected;
};

/// Expected outputs computed by a PyTorch module (a KernelBench problem file) instead of a reference
/// kernel (docs/task-format.md, "oracle"). Names on the left of the maps are the module's; names on the
/// right are the task's.
struct PytorchOracle {
  std::string kind = "pytorch";
  /// The module's Python source (language "python"): `class Model(nn.Module)`, `get_inputs()`,
  /// `get_init_inputs()` and module-level constants.
  KernelSource module{"python", "", ""};
  /// Module-level integer constant -> the task size whose value it takes in each size configuration.
  std::map<std::string, std::string> constants;
  /// The task input tensors passed to Model.forward, in order.
  std::vector<std::string> forward;
  /// State-dict entry of the module -> the task input tensor that supplies its values.
  std::map<std::string, std::string> parameters;
  /// The task output tensors the forward's result maps to (a tuple or list flattened in order).
  std::vector<std::string> outputs;
  /// Task tensor -> how it becomes the forward's argument: "bool", "python_float" or "python_int".
  std::map<std::string, std::string> casts;
  /// torch.manual_seed before the module is built.
  std::int64_t seed = 42;
  /// Whether the module stays in training mode (forward runs under torch.no_grad() either way).
  bool training = true;
  /// The PyTorch baselines the evaluator times: "eager", "compile", "compile_max_autotune".
  std::vector<std::string> baselines{"eager", "compile", "compile_max_autotune"};
};

/// The oracle's cast names and baseline names, in the order the docs list them.
KERNELSMITH_API const std::vector<std::string>& pytorch_oracle_casts();
KERNELSMITH_API const std::vector<std::string>& pytorch_oracle_baselines();

struct KERNELSMITH_API Task {
  std::string name;
  std::string description;
  std::vector<TensorSpec> tensors;
  /// The configuration that is timed.
  SizeConfig timing_sizes;
  /// More configurations that are only checked for correctness (odd sizes among them).
  std::vector<SizeConfig> check_sizes;
  /// Overrides the per-dtype default when set.
  std::optional<Tolerance> tolerance;
  WorkModel work;
  /// Naive, correct implementations, by language. Also the baseline for speedups, unless the task has
  /// an oracle.
  std::map<std::string, KernelSource> references;
  /// When set, the correctness oracle and the speedup baseline for every backend (the references then
  /// only serve as examples). A task needs references, an oracle, or both.
  std::optional<PytorchOracle> oracle;
  /// Starting candidates with tunable parameters, by language (optional).
  std::map<std::string, KernelSource> seeds;
  /// The equivalent PyTorch expression over the tensor names (optional), e.g. "torch.relu(x)".
  std::string pytorch;
  /// The folder the task was loaded from; empty for a task built in code.
  std::filesystem::path folder;
  /// The caller's own data cases, checked after the built-in ones (manifest key "cases").
  std::vector<DataCase> cases;

  /// Loads a task by folder path (holding task.json), by manifest path, or by built-in name.
  /// Throws NotFoundError (unknown name) or ValidationError (naming the file and the field).
  static Task load(const std::string& name_or_path);

  /// Parses a manifest. `origin` names the document in error messages; `folder` resolves the source
  /// files a manifest names (when empty, sources must be given inline).
  static Task from_json(const std::string& json_text, const std::string& origin = "<task>",
                        const std::filesystem::path& folder = {});

  /// Self-contained JSON (sources inline), accepted back by from_json.
  std::string to_json() const;

  /// 64 hex digits over everything the task holds (the manifest and every data case's bytes): tasks of
  /// equal content get equal keys. Evaluators send a task to a worker or actor once and name it by this
  /// key afterwards. Cheap to call again: a data case's digest is computed once.
  std::string content_key() const;

  /// Checks every invariant (unique names, at least one output, shapes evaluate, sizes positive, ...).
  /// Throws ValidationError naming the field.
  void validate(const std::string& origin = "<task>") const;

  const TensorSpec& tensor(const std::string& name) const;
  std::vector<std::string> languages() const;
  /// The timing configuration first, then the check configurations.
  std::vector<SizeConfig> all_size_configs() const;
  /// The extent of each dimension of a tensor under the given sizes ({} for a tensor of shape []).
  std::vector<std::int64_t> extents(const TensorSpec& tensor, const SizeMap& sizes) const;
  /// Number of elements of a tensor under the given sizes.
  std::int64_t element_count(const TensorSpec& tensor, const SizeMap& sizes) const;
  Tolerance tolerance_for(DType dtype) const;

  /// The sizes under which the tensors have these shapes: a dimension written as a plain size name
  /// ("M") gives that size; `given` supplies sizes no shape names alone (e.g. one used as "2*N") and
  /// must agree with the shapes. Throws ValidationError naming the tensor for an unknown tensor, a wrong
  /// rank, two values for one size, a dimension that disagrees, or a size left unknown.
  SizeMap infer_sizes(const std::map<std::string, std::vector<std::int64_t>>& shapes,
                      const SizeMap& given = {}) const;

  /// Adds a data case: `inputs` holds every input tensor (host memory), `expected` any outputs whose
  /// values are known (the reference computes the rest). Sizes are inferred from the shapes; when no
  /// size configuration has them, a check configuration named after the case is added (so candidates
  /// are also checked on random inputs of those sizes). Throws ValidationError naming the tensor for a
  /// missing or unknown tensor, a wrong dtype or shape, or device memory.
  const DataCase& add_case(const std::map<std::string, TensorRef>& inputs,
                           const std::map<std::string, TensorRef>& expected = {}, const SizeMap& sizes = {});
  double flops(const SizeMap& sizes) const;
  double min_bytes(const SizeMap& sizes) const;
};

/// The current schema tag of task manifests.
inline constexpr const char* kTaskSchema = "kernelsmith.task/1";

/// Names of the built-in tasks, sorted.
KERNELSMITH_API std::vector<std::string> builtin_task_names();

/// The folders searched for built-in tasks, in order: $KERNELSMITH_TASKS_PATH (':'-separated),
/// the installed share/kernelsmith/tasks beside the library, the source tree's tasks/.
KERNELSMITH_API std::vector<std::filesystem::path> task_search_path();

}  // namespace kernelsmith
