// Candidate: one source file of device code (its launch plan inside it) and its lineage.
#pragma once

#include <string>
#include <vector>

#include "kernelsmith/export.hpp"

namespace kernelsmith {

/// Where a candidate came from.
struct Lineage {
  std::vector<std::string> parent_ids;
  int island = 0;
  int generation = 0;
  /// How it was made: "reference", "seed", "user", "param", "llm_full", "llm_diff", "llm_crossover", ...
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

inline constexpr const char* kCandidateSchema = "kernelsmith.candidate/1";

/// Language of a file by its extension, or "" when unknown.
KERNELSMITH_API std::string language_for_extension(const std::string& path);

}  // namespace kernelsmith
