#include "kernelsmith/prompt_builder.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "detail/json_util.hpp"
#include "detail/text.hpp"
#include "kernelsmith/error.hpp"
#include "kernelsmith/device_attributes.hpp"
#include "kernelsmith/language.hpp"

namespace kernelsmith {

namespace {

using Values = std::vector<std::pair<std::string, std::string>>;

bool is_identifier_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// Scans `text` for placeholders, calling on_placeholder(name) for each and on_literal(piece) for the rest.
template <typename OnLiteral, typename OnPlaceholder>
void scan_template(const std::string& text, OnLiteral on_literal, OnPlaceholder on_placeholder) {
  std::size_t i = 0;
  std::string literal;
  while (i < text.size()) {
    char c = text[i];
    if (c == '{' && i + 1 < text.size() && text[i + 1] == '{') {
      literal += '{';
      i += 2;
      continue;
    }
    if (c == '}' && i + 1 < text.size() && text[i + 1] == '}') {
      literal += '}';
      i += 2;
      continue;
    }
    if (c == '{') {
      std::size_t j = i + 1;
      while (j < text.size() && is_identifier_char(text[j])) ++j;
      if (j > i + 1 && j < text.size() && text[j] == '}') {
        on_literal(literal);
        literal.clear();
        on_placeholder(text.substr(i + 1, j - i - 1));
        i = j + 1;
        continue;
      }
    }
    literal += c;
    ++i;
  }
  on_literal(literal);
}

// "//" or "#": how the language's plan lines start.
std::string plan_comment_of(const std::string& language) {
  const KernelLanguage* found = find_kernel_language(language);
  return found != nullptr ? found->plan_comment : kernel_languages().front().plan_comment;
}

std::string language_name(const std::string& language) {
  const KernelLanguage* found = find_kernel_language(language);
  return found != nullptr ? found->prompt_label : language;
}

std::string human_quantity(double value, const std::string& unit) {
  const char* prefixes[] = {"", "k", "M", "G", "T", "P"};
  int index = 0;
  double scaled = value;
  while (std::fabs(scaled) >= 1000.0 && index < 5) {
    scaled /= 1000.0;
    ++index;
  }
  return fmt::format("{:.3g} {}{}", scaled, prefixes[index], unit);
}

std::string format_sizes(const SizeMap& sizes) {
  std::string out;
  for (const auto& [name, value] : sizes) {
    if (!out.empty()) out += ", ";
    out += fmt::format("{}={}", name, value);
  }
  return out.empty() ? "(none)" : out;
}

std::string format_distribution(const Distribution& d) {
  std::string values;
  if (d.kind == "normal") {
    values = fmt::format("normal(mean {:g}, stddev {:g})", d.a, d.b);
  } else if (d.kind == "uniform") {
    values = fmt::format("uniform [{:g}, {:g})", d.a, d.b);
  } else if (d.kind == "integers") {
    values = fmt::format("integers in [{:g}, {:g}]", d.a, d.b);
  } else if (d.kind == "constant") {
    values = fmt::format("constant {:g}", d.a);
  } else {
    values = fmt::format("{}({:g}, {:g})", d.kind, d.a, d.b);
  }
  if (d.structure == "symmetric") return values + ", symmetric in the last two dimensions";
  if (d.structure == "lower_triangular") return values + ", lower triangular (zero above the diagonal)";
  if (d.structure == "upper_triangular") return values + ", upper triangular (zero below the diagonal)";
  if (d.structure == "probability_rows") return values + ", then each row (last dimension) softmaxed: positive, sum 1";
  return values;
}

// Keeps the head and the tail of a long text (where compilers and checkers put what matters) and cuts
// the middle at line boundaries where possible.
std::string trim_middle(const std::string& text, std::size_t max_chars) {
  if (text.size() <= max_chars) return text;
  std::size_t head = max_chars * 2 / 3;
  std::size_t tail = max_chars - head;
  std::size_t head_end = text.rfind('\n', head);
  if (head_end == std::string::npos || head_end < head / 2) head_end = head;
  std::size_t tail_begin = text.find('\n', text.size() - tail);
  if (tail_begin == std::string::npos || tail_begin - (text.size() - tail) > tail / 2) tail_begin = text.size() - tail;
  if (tail_begin <= head_end) return text.substr(0, max_chars);
  std::size_t cut = tail_begin - head_end;
  return text.substr(0, head_end) + fmt::format("\n[... {} characters trimmed ...]", cut) +
         text.substr(tail_begin);
}

// Sources and texts end with their own newlines; templates put the line breaks around them.
std::string without_trailing_space(const std::string& text) {
  std::size_t end = text.size();
  while (end > 0 && std::isspace(static_cast<unsigned char>(text[end - 1]))) --end;
  return text.substr(0, end);
}

std::string short_id(const std::string& id) { return id.size() > 12 ? id.substr(0, 12) : id; }

bool is_diverse_reason(const std::string& reason) {
  return reason == "diverse" || reason == "nearby_cell" || reason == "novel" || reason == "random";
}

std::string evaluation_metrics(const Evaluation& evaluation) {
  std::string out = fmt::format("status {}", to_string(evaluation.status));
  if (evaluation.ok()) {
    out += fmt::format(", speedup {:.3g}x", evaluation.speedup);
    if (evaluation.timing) out += fmt::format(", {:.4g} ms", evaluation.timing->median_ms);
    if (evaluation.sol && evaluation.sol->fraction > 0)
      out += fmt::format(", {:.0f}% of the hardware limit", evaluation.sol->fraction * 100.0);
  } else if (!evaluation.message.empty()) {
    out += ": " + evaluation.message;
  }
  out += fmt::format(", fitness {:.4g}", evaluation.fitness);
  return out;
}

const std::set<std::string> kCommonPlaceholders = {"language", "language_name", "fence", "comment"};

struct TemplateSpec {
  const char* name;
  const std::string PromptTemplates::*member;
  std::vector<std::string> placeholders;
};

std::vector<TemplateSpec> template_specs() {
  return {
      {"system", &PromptTemplates::system, {"format_rules"}},
      {"user", &PromptTemplates::user,
       {"task", "reference", "hardware", "parent", "attempts", "skills", "experience", "inspirations",
        "instruction"}},
      {"task", &PromptTemplates::task, {"name", "description", "tensors", "sizes", "work", "tolerance", "pytorch"}},
      {"reference", &PromptTemplates::reference, {"source"}},
      {"hardware", &PromptTemplates::hardware, {"device"}},
      {"parent", &PromptTemplates::parent, {"source", "evaluation", "id"}},
      {"attempts", &PromptTemplates::attempts, {"attempts"}},
      {"inspirations", &PromptTemplates::inspirations, {"top", "diverse"}},
      {"inspiration", &PromptTemplates::inspiration, {"index", "id", "reason", "metrics", "source"}},
      {"second_parent", &PromptTemplates::second_parent, {"source", "id"}},
      {"skills", &PromptTemplates::skills, {"skills"}},
      {"skill", &PromptTemplates::skill, {"name", "title", "when", "advice", "example"}},
      {"experience", &PromptTemplates::experience, {"items"}},
      {"full_instruction", &PromptTemplates::full_instruction, {}},
      {"diff_instruction", &PromptTemplates::diff_instruction, {}},
      {"crossover_instruction", &PromptTemplates::crossover_instruction, {}},
      {"skill_tag", &PromptTemplates::skill_tag, {}},
  };
}

}  // namespace

std::string messages_to_json(const std::vector<ChatMessage>& messages) {
  nlohmann::json array = nlohmann::json::array();
  for (const auto& message : messages) array.push_back({{"role", message.role}, {"content", message.content}});
  return array.dump();
}

std::vector<ChatMessage> messages_from_json(const std::string& json_text, const std::string& origin) {
  const nlohmann::json array = detail::parse_plain_json(json_text, origin);
  if (!array.is_array()) throw ValidationError(origin + ": expected a JSON array of messages");
  std::vector<ChatMessage> messages;
  for (std::size_t i = 0; i < array.size(); ++i) {
    const auto& item = array[i];
    if (!item.is_object() || !item.contains("role") || !item["role"].is_string() || !item.contains("content") ||
        !item["content"].is_string())
      throw ValidationError(
          fmt::format("{}: message {} must be an object with string fields \"role\" and \"content\"", origin, i));
    messages.push_back({item["role"].get<std::string>(), item["content"].get<std::string>()});
  }
  return messages;
}

std::string to_string(EditMode mode) {
  switch (mode) {
    case EditMode::full: return "full";
    case EditMode::diff: return "diff";
    case EditMode::crossover: return "crossover";
  }
  return "full";
}

EditMode parse_edit_mode(const std::string& name) {
  if (name == "full") return EditMode::full;
  if (name == "diff") return EditMode::diff;
  if (name == "crossover") return EditMode::crossover;
  throw ValidationError(fmt::format("unknown edit mode '{}': expected full, diff or crossover", name));
}

std::string fence_tag(const std::string& language) {
  if (language.empty()) return kernel_languages().front().fence_tag;
  const KernelLanguage* found = find_kernel_language(language);
  return found != nullptr ? found->fence_tag : language;
}

std::string render_template(const std::string& text, const Values& values, const std::string& template_name) {
  std::string out;
  scan_template(
      text, [&](const std::string& literal) { out += literal; },
      [&](const std::string& name) {
        for (const auto& [key, value] : values) {
          if (key == name) {
            out += value;
            return;
          }
        }
        throw ValidationError(fmt::format("prompt template '{}': unknown placeholder {{{}}}; write {{{{ and }}}} for "
                                          "literal braces",
                                          template_name, name));
      });
  return out;
}

std::string candidate_format_rules(const std::string& language) {
  const KernelLanguage* found = find_kernel_language(language);
  const KernelLanguage& row = found != nullptr ? *found : kernel_languages().front();
  if (row.host_code) {
    // KernelBench's format (docs/kernelbench-modelnew.md): host code, no plan.
    return "Candidate format (enforced; a violation costs the attempt):\n"
           "- " + row.kernel_rule + "\n"
           "- Write the work in your own kernels: C++ or CUDA in torch.utils.cpp_extension.load_inline(name=..., "
           "cpp_sources=..., cuda_sources=..., functions=[...]) built at the top of the file, or @triton.jit "
           "functions launched from forward. A ModelNew that only calls PyTorch restates the problem; calling "
           "PyTorch or cuBLAS for part of the work (a GEMM) and fusing the rest in a kernel is fine.\n"
           "- The file runs confined: no network, no files outside its own folder, no other processes or threads "
           "doing its work, no other CUDA streams, no caching of results between calls.\n"
           "- Every call must compute its outputs from its inputs; inputs must not be modified or returned. "
           "Correctness is checked on several inputs (random, large, tiny, mixed-scale) and several sizes, "
           "including odd ones, in float32 with TF32 off.\n";
  }
  const std::string& c = row.plan_comment;  // every directive below is written with the language's own marker
  const bool chevrons = row.launch_syntax == LaunchSyntax::chevrons;
  std::string rules =
      "Candidate format (enforced; a violation costs the attempt):\n"
      "- A candidate is ONE source file of device code only: kernels and device helper functions. No host code, " +
      std::string(chevrons ? "no main(), no library calls (cuBLAS, cuDNN, Thrust, PyTorch are unavailable)"
                           : "no library calls (PyTorch is unavailable)") +
      ", no file or network access.\n- " + row.kernel_rule + "\n";
  if (chevrons) {
    rules += "- The file declares its launch plan in comment lines; the kernels run in the order of the lines:\n"
             "    " + c + " @launch kernel_name<<<grid, block[, dynamic_shared_bytes]>>>(arg, arg, ...)\n"
             "  grid and block are one expression or dim3(x[, y[, z]]). Arguments bind to the kernel's parameters "
             "in order: task tensor names (pointers), workspace names (pointers) or integer expressions "
             "(integers).\n";
  } else {
    rules += "- The file declares its launch plan in comment lines; the kernels run in the order of the lines:\n"
             "    " + c + " @launch kernel_name[grid_x, grid_y, grid_z](arg, arg, ..., NAME=value) num_warps=W "
             "num_stages=S\n"
             "  the grid is one to three expressions (programs per dimension). Positional arguments bind to the "
             "kernel's other parameters in order: task tensor names (pointers), workspace names (pointers) or "
             "integer expressions (integers); keyword arguments are its tl.constexpr parameters. num_warps (default "
             "4) gives each program 32 * num_warps threads; num_stages (default 3) is the software pipelining "
             "depth.\n";
  }
  rules += "  For example: " + row.launch_example + "\n";
  rules += "- Scratch memory: `" + c + " @workspace name: float32[count_expression]` (float16, bfloat16, float32, "
           "float64, int8, uint8, int32, int64); pass it by name. Its contents are undefined at the start of each "
           "run.\n"
           "- Expressions are integer arithmetic: + - * / % and parentheses (/ is floor division), ceil_div(a, b), "
           "round_up(a, b), min(a, b), max(a, b), over the task's sizes, tunable parameters and the device "
           "attributes " +
           fmt::format("{}", fmt::join(device_attribute_names(), ", ")) + ".\n";
  if (chevrons) {
    rules += "- `" + c + " @specialize` makes the sizes compile-time constants KS_<name> (e.g. KS_N); the program "
             "must still be correct for every size configuration it is checked on.\n"
             "- `" + c + " @tune NAME = 256 in {128, 256, 512}` declares a macro a tuner may vary; `" + c +
             " @require expression` states a constraint that must be non-zero.\n";
  } else {
    rules += "- `" + c + " @tune NAME = 256 in {128, 256, 512}` declares a value a tuner may vary: pass it to the "
             "kernel by keyword in the launch (NAME=NAME) and use it in the plan's expressions; `" + c +
             " @require expression` states a constraint that must be non-zero. A size passed as a tl.constexpr "
             "(N=N) compiles the kernel once per size configuration; it must still be correct on every one.\n";
  }
  rules += "- Every output element must be written on every run; inputs must not be modified; results must not "
           "depend on memory left over from earlier runs. Correctness is checked on several inputs (random, large, "
           "tiny, mixed-scale) and several sizes, including odd ones.\n";
  return rules;
}

PromptTemplates PromptTemplates::defaults() {
  PromptTemplates t;
  t.system =
      "You are an expert {language_name} GPU kernel engineer. You make kernels faster while keeping them correct. "
      "Each program you write is compiled, checked against a reference on several inputs and sizes, and timed on "
      "the device; the results come back to you.\n\n"
      "{format_rules}";
  t.user = "{task}{reference}{hardware}{parent}{attempts}{skills}{experience}{inspirations}{instruction}";
  t.task =
      "## Task: {name}\n"
      "{description}\n\n"
      "Tensors:\n{tensors}\n"
      "Sizes:\n{sizes}\n"
      "{work}{tolerance}{pytorch}\n";
  t.reference = "## Reference implementation (correct but slow)\n```{fence}\n{source}\n```\n\n";
  t.hardware = "## Hardware\n{device}\n";
  t.parent =
      "## Current program (id {id})\n```{fence}\n{source}\n```\n\n"
      "### Its evaluation\n{evaluation}\n\n";
  t.attempts = "## Recent attempts on the current program (do not repeat them)\n{attempts}\n";
  t.inspirations = "## Other programs, for inspiration\n{top}{diverse}";
  t.inspiration = "### Program {index} (id {id}, {reason}): {metrics}\n```{fence}\n{source}\n```\n\n";
  t.second_parent = "## Second program (id {id})\n```{fence}\n{source}\n```\n\n";
  t.skills = "## Skills that fit the measurements of the current program\n{skills}";
  t.skill = "### {name}: {title}\nApplies because: {when}\n{advice}\n{example}\n";
  t.experience =
      "## Experience from earlier steps (this run and earlier ones)\n"
      "Each line is what one change did; its value says how well such changes worked at this stage (higher is "
      "better).\n{items}\n";
  t.full_instruction =
      "## Your job\n"
      "Write an improved, complete version of the current program: faster on the timed sizes and correct on all "
      "sizes. First explain your idea in two or three sentences, then give the whole file, including its "
      "`{comment} @launch` lines, in a single ```{fence} code block. Give only that one code block.\n";
  t.diff_instruction =
      "## Your job\n"
      "Improve the current program with targeted edits: faster on the timed sizes and correct on all sizes. First "
      "explain your idea in two or three sentences, then give one or more SEARCH/REPLACE blocks in exactly this "
      "form:\n\n"
      "<<<<<<< SEARCH\n"
      "lines copied exactly from the current program\n"
      "=======\n"
      "the lines that replace them\n"
      ">>>>>>> REPLACE\n\n"
      "Each SEARCH section must match a contiguous run of lines of the current program exactly, including "
      "indentation; keep it short but unique. Blocks are applied in order. Change the launch plan by editing its "
      "`{comment} @launch` lines the same way.\n";
  t.crossover_instruction =
      "## Your job\n"
      "The current program and the second program are two different solutions of the task. Write one complete "
      "program that combines the best ideas of both and is faster than either, and correct on all sizes. First "
      "explain your idea in two or three sentences, then give the whole file, including its `{comment} @launch` lines, "
      "in a single ```{fence} code block. Give only that one code block.\n";
  t.skill_tag =
      "After it, name the skill you applied on a line of its own: <skill>name</skill>, with the name of a skill "
      "above when one fits, else a short snake_case name of your own.\n";
  return t;
}

PromptBuilder::PromptBuilder(PromptBuilderOptions options)
    : options_(std::move(options)),
      skills_(options_.skills ? options_.skills : std::make_shared<const SkillBank>(SkillBank::builtin())) {
  if (!(options_.chars_per_token > 0.0))
    throw ValidationError("PromptBuilderOptions.chars_per_token must be positive");
  if (options_.max_prompt_tokens < 0)
    throw ValidationError("PromptBuilderOptions.max_prompt_tokens must be >= 0 (0 means no limit)");
  for (const auto& spec : template_specs()) {
    std::set<std::string> allowed(spec.placeholders.begin(), spec.placeholders.end());
    allowed.insert(kCommonPlaceholders.begin(), kCommonPlaceholders.end());
    scan_template(
        options_.templates.*(spec.member), [](const std::string&) {},
        [&](const std::string& name) {
          if (!allowed.count(name)) {
            std::string list;
            for (const auto& a : allowed) list += (list.empty() ? "{" : ", {") + a + "}";
            throw ValidationError(fmt::format("prompt template '{}': unknown placeholder {{{}}}; it may use {} "
                                              "(write {{{{ and }}}} for literal braces)",
                                              spec.name, name, list));
          }
        });
  }
}

namespace {

// The PyTorch module of an oracle task, headed by comments that name the task tensors its forward arguments,
// weights and outputs are.
std::string oracle_reference_text(const PytorchOracle& oracle) {
  std::string text = fmt::format("# Model.forward({}) -> {}\n", fmt::join(oracle.forward, ", "),
                                 fmt::join(oracle.outputs, ", "));
  for (const auto& [entry, tensor] : oracle.parameters) {
    text += fmt::format("# the module's {} is the input tensor {}\n", entry, tensor);
  }
  for (const auto& [constant, size] : oracle.constants) {
    if (constant != size) text += fmt::format("# the constant {} is the size {}\n", constant, size);
  }
  return text + oracle.module.source;
}

// A droppable item: where it comes from in the request and how the record of drops names it.
struct DroppableItem {
  std::size_t index = 0;
  std::string label;
};

std::string render_task(const Task& task, const PromptTemplates& t, const Values& common) {
  std::string tensors;
  for (const auto& tensor : task.tensors) {
    std::string shape;
    for (const auto& dim : tensor.shape) shape += (shape.empty() ? "" : ", ") + dim;
    tensors += fmt::format("- {}: {}[{}], {}", tensor.name, to_string(tensor.dtype), shape,
                           tensor.role == TensorRole::input ? "input" : "output");
    if (tensor.role == TensorRole::input) tensors += ", values " + format_distribution(tensor.distribution);
    tensors += "\n";
  }
  std::string sizes = fmt::format("- timed: {}", format_sizes(task.timing_sizes.sizes));
  if (!task.timing_sizes.name.empty()) sizes += fmt::format(" ({})", task.timing_sizes.name);
  sizes += "\n";
  for (const auto& config : task.check_sizes)
    sizes += fmt::format("- also checked: {}{}\n", format_sizes(config.sizes),
                         config.name.empty() ? "" : fmt::format(" ({})", config.name));

  std::string work;
  try {
    double flops = task.flops(task.timing_sizes.sizes);
    double bytes = task.min_bytes(task.timing_sizes.sizes);
    if (flops > 0 || bytes > 0) {
      work = "Work at the timed sizes: ";
      if (flops > 0) work += human_quantity(flops, "FLOP");
      if (flops > 0 && bytes > 0) work += ", ";
      if (bytes > 0) work += human_quantity(bytes, "B") + " of unavoidable memory traffic";
      if (flops > 0 && bytes > 0) work += fmt::format(" (arithmetic intensity {:.3g} FLOP/B)", flops / bytes);
      work += ".\n";
    }
  } catch (const std::exception&) {
    // A work model that does not evaluate is the task's problem, reported by Task::validate; the prompt
    // simply goes without it.
  }

  std::string tolerance;
  std::set<DType> output_dtypes;
  for (const auto& tensor : task.tensors)
    if (tensor.role == TensorRole::output) output_dtypes.insert(tensor.dtype);
  for (DType dtype : output_dtypes) {
    try {
      Tolerance tol = task.tolerance_for(dtype);
      tolerance += fmt::format("Outputs ({}) must match the reference within |actual - expected| <= {:g} + {:g} * "
                               "|expected|.\n",
                               to_string(dtype), tol.atol, tol.rtol);
    } catch (const std::exception&) {
    }
  }
  std::string pytorch = task.pytorch.empty() ? "" : fmt::format("In PyTorch: {}\n", task.pytorch);

  Values values = common;
  values.insert(values.end(), {{"name", task.name},
                               {"description", task.description.empty() ? "(no description)" : task.description},
                               {"tensors", tensors},
                               {"sizes", sizes},
                               {"work", work},
                               {"tolerance", tolerance},
                               {"pytorch", pytorch}});
  return render_template(t.task, values, "task");
}

// Peaks the caller gave, else the ones the evaluator measured for the parent's speed-of-light numbers.
std::string render_device(const DeviceInfo& device, const PromptBuilderOptions& options,
                          const std::optional<Evaluation>& parent_evaluation) {
  std::string out;
  std::string title = device.name.empty() ? "(unknown device)" : device.name;
  if (!device.backend.empty()) title += fmt::format(" ({})", device.backend);
  out += "- " + title + "\n";
  if (!device.architecture.empty()) out += fmt::format("- architecture: {}\n", device.architecture);
  std::string attributes;
  for (const auto& [name, value] : device_attribute_values(device)) {
    if (value > 0) attributes += fmt::format("{}{}={}", attributes.empty() ? "" : ", ", name, value);
  }
  if (!attributes.empty()) out += "- attributes (usable in launch expressions): " + attributes + "\n";
  if (device.l2_bytes > 0) out += fmt::format("- L2 cache: {}\n", detail::human_bytes(device.l2_bytes));
  if (device.global_memory_bytes > 0) out += fmt::format("- memory: {}\n", detail::human_bytes(device.global_memory_bytes));
  if (device.clock_mhz > 0) out += fmt::format("- clock: {} MHz\n", device.clock_mhz);
  // Code written for 32-lane warps is wrong, not just slow, on wider waves (MetaX: 64 lanes).
  if (device.warp_size > 32) {
    out += fmt::format("- wave (warp) size: {} lanes (WARP_SIZE): use warpSize, {}-bit lane masks and ballots; code "
                       "that assumes 32 lanes (0xffffffff masks, & 31, >> 5) is wrong here\n",
                       device.warp_size, device.warp_size);
  }
  const SpeedOfLight* measured =
      parent_evaluation && parent_evaluation->sol ? &*parent_evaluation->sol : nullptr;
  if (options.peak_bandwidth_gbps && *options.peak_bandwidth_gbps > 0)
    out += "- peak memory bandwidth: " + human_quantity(*options.peak_bandwidth_gbps * 1e9, "B/s") + "\n";
  else if (measured && measured->peak_gbps > 0)
    out += "- peak memory bandwidth (measured): " + human_quantity(measured->peak_gbps * 1e9, "B/s") + "\n";
  if (options.peak_gflops && *options.peak_gflops > 0)
    out += "- peak arithmetic throughput: " + human_quantity(*options.peak_gflops * 1e9, "FLOP/s") + "\n";
  else if (measured && measured->peak_gflops > 0)
    out += "- peak arithmetic throughput (measured): " + human_quantity(measured->peak_gflops * 1e9, "FLOP/s") +
           "\n";
  if (!device.is_gpu && !device.name.empty())
    out += "- note: this device is a CPU running the kernels through OpenCL; work-group size and memory access "
           "order still matter, but GPU-specific tricks may not help.\n";
  return out;
}

// The plan's Hopper launch features, for a CUDA program on a device that runs them (sm_90 and newer); ""
// elsewhere, where the plan would be refused (docs/candidate-format.md, "Hopper: tensor maps and clusters").
std::string hopper_launch_features(const DeviceInfo& device, const std::string& language) {
  if (language != "cuda" || !hopper_feature_refusal(device, "").empty()) return {};
  return "- plan directives of this GPU: TMA tensor maps and thread-block clusters (docs/candidate-format.md):\n"
         "    // @tensor_map a_tiles = A[K, M] box[64, 128] swizzle=128B\n"
         "    // @launch gemm<<<grid, 256, smem_bytes>>>(a_tiles, C, M, N, K) cluster=dim3(2, 1, 1)\n"
         "    struct __align__(64) TensorMap { unsigned long long opaque[16]; };  // a CUtensorMap\n"
         "    extern \"C\" __global__ void gemm(const __grid_constant__ TensorMap a_tiles, __half* C, int M, int N, "
         "int K)\n"
         "  Dimensions and box innermost first; strides[...] in elements (default packed), multiples of 16 bytes; "
         "options swizzle=none|32B|64B|128B, oob_fill=zero|nan, when(condition). One thread does "
         "mbarrier.arrive.expect_tx (the box's bytes) and cp.async.bulk.tensor.2d.shared::cluster.global.tile."
         "mbarrier::complete_tx::bytes [smem], [&a_tiles, {k, m}], [bar]; all wait with mbarrier.try_wait.parity. "
         "A cluster divides the grid and has at most 8 blocks.\n" +
         std::string(device.architecture == "sm_90" ? "- wgmma.mma_async compiles (programs are built for sm_90a).\n"
                                                    : "");
}

// One retrieved item: its lesson and what the memory learned of it at the request's stage.
std::string experience_line(const RetrievedItem& entry, Stage stage) {
  const StageValue& learned = entry.item.value(stage);
  std::string line = "- " + entry.item.lesson();
  line += fmt::format(" Value {:.2f}", entry.retrieval.value);
  line += learned.credits > 0 ? fmt::format(" from {} outcome{} at this stage", learned.credits,
                                            learned.credits == 1 ? "" : "s")
                              : std::string(" (not tried at this stage yet)");
  return line + ".\n";
}

std::string render_attempt(const Attempt& attempt) {
  std::string line = fmt::format("- [{}] {}", attempt.mutation.empty() ? "edit" : attempt.mutation,
                                 to_string(attempt.status));
  if (!attempt.skill.empty() && attempt.skill != "unspecified") line += fmt::format(" (skill {})", attempt.skill);
  if (attempt.status == Status::ok) line += fmt::format(", speedup {:.3g}x", attempt.speedup);
  if (!attempt.summary.empty() && attempt.summary != "ok") line += ": " + attempt.summary;
  if (line.size() > 400) line = line.substr(0, 397) + "...";
  return line + "\n";
}

}  // namespace

BuiltPrompt PromptBuilder::build(const MutationRequest& request, EditMode mode) const {
  const PromptTemplates& t = options_.templates;
  // The language asked for: the run's (request.language), which a parent may not share (a Triton run starts
  // from the CUDA reference).
  const std::string language = request.child_language();
  const Values common = {{"language", language},
                         {"language_name", language_name(language)},
                         {"fence", fence_tag(language)},
                         {"comment", plan_comment_of(language)}};
  auto with = [&](Values extra) {
    Values values = common;
    values.insert(values.end(), extra.begin(), extra.end());
    return values;
  };
  // A program is fenced in its own language; the first value of a name wins in render_template.
  auto with_program = [&](const std::string& program_language, Values extra) {
    Values values = {{"fence", fence_tag(program_language.empty() ? language : program_language)}};
    values.insert(values.end(), extra.begin(), extra.end());
    values.insert(values.end(), common.begin(), common.end());
    return values;
  };

  if (mode == EditMode::crossover && !request.second_parent)
    throw ValidationError("PromptBuilder: crossover needs request.second_parent (a second program to combine)");

  // The parts that never shrink.
  std::string format_rules = candidate_format_rules(language);
  for (const std::string& other : request.other_languages) {
    // A run of mixed formats (MutationRequest::other_languages): the other format's own rules, in full.
    const KernelLanguage* row = find_kernel_language(other);
    format_rules += (row != nullptr && row->host_code
                         ? std::string("\nYou may instead answer with a whole ModelNew file (KernelBench's format). ")
                         : fmt::format("\nYou may instead answer with a whole {} program: kernels and their launch "
                                       "plan, computing the task's tensors (listed below) from its inputs. ",
                                       language_name(other))) +
                    candidate_format_rules(other);
  }
  const std::string system = render_template(t.system, with({{"format_rules", format_rules}}), "system");
  const std::string task_text = render_task(request.task(), t, common);
  const std::string hardware_text =
      render_template(t.hardware, with({{"device", render_device(request.device, options_, request.parent_evaluation) +
                                                  hopper_launch_features(request.device, language)}}),
                      "hardware");
  std::string instruction_template = mode == EditMode::full   ? t.full_instruction
                                     : mode == EditMode::diff ? t.diff_instruction
                                                              : t.crossover_instruction;
  std::string instruction = render_template(instruction_template, common,
                                            mode == EditMode::full   ? "full_instruction"
                                            : mode == EditMode::diff ? "diff_instruction"
                                                                     : "crossover_instruction");
  instruction += render_template(t.skill_tag, common, "skill_tag");
  const std::string parent_language = request.parent.language.empty() ? "cuda" : request.parent.language;
  if (parent_language != language) {
    instruction += fmt::format("The current program is written in {}: write yours in {}, in the candidate format "
                               "above.\n",
                               language_name(parent_language), language_name(language));
  }
  std::string second_parent_text;
  if (mode == EditMode::crossover)
    second_parent_text =
        render_template(t.second_parent,
                        with_program(request.second_parent->language,
                                     {{"source", without_trailing_space(request.second_parent->source)},
                                      {"id", short_id(request.second_parent->id())}}),
                        "second_parent");

  // The parts the budget may drop or trim.
  // The reference in the language asked for, else one written alike (a CUDA reference for MACA); none in a
  // language whose plans are written otherwise (a CUDA reference would teach a Triton prompt the wrong syntax:
  // the task's description and PyTorch line say what to compute).
  std::string reference_source;
  std::string reference_language;
  {
    const auto& references = request.task().references;
    auto it = references.find(language);
    if (it == references.end()) {
      it = std::find_if(references.begin(), references.end(),
                        [&](const auto& entry) { return same_plan_syntax(entry.first, language); });
    }
    if (it != references.end()) {
      reference_source = it->second.source;
      reference_language = it->first;
    } else if (const auto& oracle = request.task().oracle) {
      // A task checked against PyTorch (a KernelBench problem): its module is what to compute, with how the
      // module's arguments and weights map to the kernel's tensors.
      reference_source = oracle_reference_text(*oracle);
      reference_language = "python";
    }
  }
  bool keep_reference = !reference_source.empty();

  std::string evaluation_text = request.parent_evaluation
                                    ? without_trailing_space(request.parent_evaluation->to_prompt_text())
                                    : "(not evaluated yet)";
  std::vector<std::string> dropped;
  if (evaluation_text.size() > options_.max_evaluation_chars) {
    std::size_t before = evaluation_text.size();
    evaluation_text = trim_middle(evaluation_text, options_.max_evaluation_chars);
    dropped.push_back(fmt::format("parent evaluation trimmed from {} to {} characters", before,
                                  evaluation_text.size()));
  }

  // Most recent first in the prompt; the request lists them oldest first.
  std::vector<DroppableItem> attempts;
  {
    const auto& all = request.recent_attempts;
    std::size_t count = std::min(all.size(), options_.max_attempts);
    for (std::size_t i = 0; i < count; ++i) {
      std::size_t index = all.size() - 1 - i;
      attempts.push_back({index, fmt::format("attempt {} ({}, {})", index + 1,
                                             all[index].mutation.empty() ? "edit" : all[index].mutation,
                                             to_string(all[index].status))});
    }
  }

  std::vector<DroppableItem> top, diverse;
  for (std::size_t i = 0; i < request.inspirations.size() && top.size() + diverse.size() < options_.max_inspirations;
       ++i) {
    const auto& inspiration = request.inspirations[i];
    // Programs written otherwise than the language asked for would mislead more than inspire.
    if (!inspiration.candidate.language.empty() && !same_plan_syntax(inspiration.candidate.language, language))
      continue;
    bool is_diverse = is_diverse_reason(inspiration.reason);
    (is_diverse ? diverse : top)
        .push_back({i, fmt::format("{} inspiration {} (id {})", is_diverse ? "diverse" : "top", i + 1,
                                   short_id(inspiration.candidate.id()))});
  }
  auto inspiration_text = [&](const DroppableItem& item, std::size_t shown_index) {
    const auto& inspiration = request.inspirations[item.index];
    return render_template(t.inspiration,
                           with_program(inspiration.candidate.language,
                                        {{"index", std::to_string(shown_index)},
                                 {"id", short_id(inspiration.candidate.id())},
                                 {"reason", inspiration.reason.empty() ? "inspiration" : inspiration.reason},
                                 {"metrics", evaluation_metrics(inspiration.evaluation)},
                                         {"source", without_trailing_space(inspiration.candidate.source)}}),
                           "inspiration");
  };

  // The skills whose predicates hold for what was measured, in bank order, each with its example in the language
  // asked for; and the experience the engine retrieved, best first.
  std::vector<Skill> skills = skills_->applicable(request_features(request));
  if (skills.size() > options_.max_skills) skills.resize(options_.max_skills);
  std::vector<std::string> skill_examples;
  for (const Skill& skill : skills) skill_examples.push_back(options_.skill_examples ? skill.example(language) : "");
  std::size_t skills_shown = skills.size();
  const Stage stage = stage_of(request.parent, request.parent_evaluation);
  std::size_t experience_shown = std::min(request.experience.size(), options_.max_experience);

  auto skills_section = [&]() {
    std::string rendered;
    for (std::size_t i = 0; i < skills_shown; ++i) {
      const Skill& skill = skills[i];
      std::string example;
      if (!skill_examples[i].empty()) {
        example = fmt::format("Example ({}):\n```{}\n{}\n```\n", language_name(language), fence_tag(language),
                              without_trailing_space(skill_examples[i]));
      }
      rendered += render_template(t.skill,
                                  with({{"name", skill.name},
                                        {"title", skill.title.empty() ? skill.name : skill.title},
                                        {"when", skill.when.text()},
                                        {"advice", without_trailing_space(skill.advice)},
                                        {"example", example}}),
                                  "skill");
    }
    return rendered.empty() ? rendered : render_template(t.skills, with({{"skills", rendered}}), "skills");
  };
  auto experience_section = [&]() {
    std::string lines;
    for (std::size_t i = 0; i < experience_shown; ++i) lines += experience_line(request.experience[i], stage);
    return lines.empty() ? lines : render_template(t.experience, with({{"items", lines}}), "experience");
  };

  auto assemble = [&]() {
    std::string top_text, diverse_text;
    std::size_t index = 1;
    for (const auto& r : top) top_text += inspiration_text(r, index++);
    for (const auto& r : diverse) diverse_text += inspiration_text(r, index++);
    std::string inspirations_text;
    if (!top_text.empty() || !diverse_text.empty())
      inspirations_text =
          render_template(t.inspirations, with({{"top", top_text}, {"diverse", diverse_text}}), "inspirations");
    std::string attempts_text;
    if (!attempts.empty()) {
      std::string lines;
      for (const auto& a : attempts) lines += render_attempt(request.recent_attempts[a.index]);
      attempts_text = render_template(t.attempts, with({{"attempts", lines}}), "attempts");
    }
    std::string reference_text;
    if (keep_reference)
      reference_text = render_template(
          t.reference, with_program(reference_language, {{"source", without_trailing_space(reference_source)}}),
          "reference");
    std::string parent_text =
        render_template(t.parent,
                        with_program(parent_language,
                                     {{"source", without_trailing_space(request.parent.source)},
                              {"evaluation", evaluation_text},
                              {"id", short_id(request.parent.id())}}),
                        "parent");
    std::string user = render_template(t.user,
                                       with({{"task", task_text},
                                             {"reference", reference_text},
                                             {"hardware", hardware_text},
                                             {"parent", parent_text + second_parent_text},
                                             {"attempts", attempts_text},
                                             {"skills", skills_section()},
                                             {"experience", experience_section()},
                                             {"inspirations", inspirations_text},
                                             {"instruction", instruction}}),
                                       "user");
    return std::vector<ChatMessage>{{"system", system}, {"user", user}};
  };

  auto estimate = [&](const std::vector<ChatMessage>& messages) {
    std::size_t chars = 0;
    for (const auto& m : messages) chars += m.content.size();
    return static_cast<std::int64_t>(std::ceil(static_cast<double>(chars) / options_.chars_per_token));
  };

  std::vector<ChatMessage> messages = assemble();
  std::int64_t tokens = estimate(messages);
  const std::int64_t budget = options_.max_prompt_tokens;
  auto over = [&]() { return budget > 0 && tokens > budget; };
  auto refresh = [&]() {
    messages = assemble();
    tokens = estimate(messages);
  };

  while (over() && !diverse.empty()) {
    dropped.push_back(diverse.back().label);
    diverse.pop_back();
    refresh();
  }
  while (over() && experience_shown > 0) {
    --experience_shown;
    dropped.push_back(fmt::format("experience item {} (id {})", experience_shown + 1,
                                  request.experience[experience_shown].item.id));
    refresh();
  }
  for (std::size_t i = skills.size(); over() && i-- > 0;) {
    if (skill_examples[i].empty()) continue;
    skill_examples[i].clear();
    dropped.push_back("example of skill " + skills[i].name);
    refresh();
  }
  while (over() && !top.empty()) {
    dropped.push_back(top.back().label);
    top.pop_back();
    refresh();
  }
  while (over() && !attempts.empty()) {
    dropped.push_back(attempts.back().label);
    attempts.pop_back();  // the list is most recent first: the back is the oldest
    refresh();
  }
  while (over() && skills_shown > 0) {
    --skills_shown;
    dropped.push_back("skill " + skills[skills_shown].name);
    refresh();
  }
  if (over() && keep_reference) {
    keep_reference = false;
    dropped.push_back("reference source");
    refresh();
  }
  if (over() && evaluation_text.size() > options_.min_evaluation_chars) {
    std::size_t excess_chars =
        static_cast<std::size_t>(std::ceil(static_cast<double>(tokens - budget) * options_.chars_per_token)) + 64;
    std::size_t target = evaluation_text.size() > excess_chars + options_.min_evaluation_chars
                             ? evaluation_text.size() - excess_chars
                             : options_.min_evaluation_chars;
    std::size_t before = evaluation_text.size();
    evaluation_text = trim_middle(evaluation_text, target);
    dropped.push_back(fmt::format("parent evaluation trimmed from {} to {} characters", before,
                                  evaluation_text.size()));
    refresh();
  }

  BuiltPrompt result;
  result.messages = std::move(messages);
  result.mode = mode;
  result.estimated_tokens = tokens;
  result.dropped = std::move(dropped);
  result.over_budget = over();
  for (std::size_t i = 0; i < skills_shown; ++i) result.skills.push_back(skills[i].name);
  for (std::size_t i = 0; i < experience_shown; ++i) result.experience.push_back(request.experience[i].item.id);
  return result;
}

}  // namespace kernelsmith
