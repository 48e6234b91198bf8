// Candidate: one source file of device code (its launch plan inside it) and its lineage.
#pragma once

#include "kernelsmith/language.hpp"

#include <string>
#include <string_view>
#include <vector>

#include "kernelsmith/export.hpp"

namespace kernelsmith {

/// One way a candidate is made: what Lineage::origin, the run store's `programs.origin` and
/// `steps.mutation` hold (docs/run-store.md#origins).
struct OriginKind {
  std::string_view name;
  /// A program a run starts from (no mutation made it): it lives on every island.
  bool initial;
  std::string_view meaning;
};

/// Every origin the library writes. A mutator written in Python may name its own mutation, which the
/// store keeps as it is; migration between islands copies a program and keeps its origin.
inline constexpr OriginKind kOrigins[] = {
    {"reference", true, "the task's reference implementation"},
    {"seed", true, "the task's seed kernel"},
    {"user", false, "a candidate built by hand (the default)"},
    {"param", false, "the parameter mutator: new values of the @tune parameters"},
    {"llm_full", false, "the LLM mutator: a whole new file"},
    {"llm_diff", false, "the LLM mutator: SEARCH/REPLACE edits of the parent"},
    {"llm_crossover", false, "the LLM mutator: a child of two parents"},
};

/// True for "reference" and "seed": the origins marked initial in kOrigins.
KERNELSMITH_API bool is_initial_origin(std::string_view origin);

/// True when a Python source defines `class ModelNew` at the start of a line: a KernelBench candidate file
/// (language "pytorch", docs/kernelbench-modelnew.md) rather than a Triton one.
KERNELSMITH_API bool defines_model_new(std::string_view source);

/// A KernelBench problem file's Model as a ModelNew candidate's source: the identifier `Model` renamed
/// `ModelNew` wherever it stands alone (the class, `super(Model, self)`), the rest unchanged. It computes
/// what the problem does at PyTorch eager's speed: the program a run with no hand-written seed starts from.
KERNELSMITH_API std::string model_new_from_problem(const std::string& problem_source);


/// Where a candidate came from.
struct Lineage {
  std::vector<std::string> parent_ids;
  int island = 0;
  int generation = 0;
  /// How it was made: one of kOrigins' names ("user" unless set), or a Python mutator's own.
  std::string origin = "user";
};

struct KERNELSMITH_API Candidate {
  /// Kernel language: "cuda", "opencl" or "maca".
  std::string language;
  /// Device code with the launch plan in `// @launch` lines; see docs/candidate-format.md.
  std::string source;
  Lineage lineage;

  /// Content hash of language and source (16 hex digits of SHA-256): equal code, equal id.
  std::string id() const;

  /// Reads a source file; the language comes from the extension (.cu/.cuh → cuda, .cl → opencl,
  /// .maca → maca) unless given. Throws NotFoundError / ValidationError.
  static Candidate from_file(const std::string& path, const std::string& language = "");

  std::string to_json() const;
  static Candidate from_json(const std::string& json_text, const std::string& origin = "<candidate>");
};

/// Whether a candidate has a kernel of its own: always for device code; for a ModelNew file, when its source
/// builds or declares one (torch.utils.cpp_extension's load_inline or load, a @triton.jit function). A reading
/// of the source, not of what ran: which kernels ran is the evaluation's to measure.
KERNELSMITH_API bool has_custom_kernel(const Candidate& candidate);

inline constexpr const char* kCandidateSchema = "kernelsmith.candidate/1";

}  // namespace kernelsmith
