// Candidates: content-addressed source files with their lineage (docs/candidate-format.md).
#include "kernelsmith/candidate.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "detail/file_cache.hpp"
#include "detail/json_util.hpp"
#include "json_codec.hpp"
#include "detail/sha256.hpp"
#include "detail/text.hpp"
#include "kernelsmith/error.hpp"
#include "kernelsmith/language.hpp"

namespace kernelsmith {
namespace {

using detail::Json;
using detail::JsonField;

}  // namespace

std::string model_new_from_problem(const std::string& problem_source) {
  auto identifier = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_'; };
  std::string out;
  out.reserve(problem_source.size() + 64);
  std::size_t at = 0;
  while (true) {
    const std::size_t found = problem_source.find("Model", at);
    if (found == std::string::npos) break;
    const std::size_t end = found + 5;
    const bool alone = (found == 0 || !identifier(problem_source[found - 1])) &&
                       (end >= problem_source.size() || !identifier(problem_source[end]));
    out.append(problem_source, at, end - at);
    if (alone) out += "New";
    at = end;
  }
  out.append(problem_source, at, std::string::npos);
  return out;
}

bool has_custom_kernel(const Candidate& candidate) {
  const KernelLanguage* language = find_kernel_language(candidate.language);
  if (language == nullptr || !language->host_code) return true;
  for (const char* marker : {"load_inline(", "cpp_extension.load(", "@triton.jit"}) {
    if (candidate.source.find(marker) != std::string::npos) return true;
  }
  return false;
}

bool defines_model_new(std::string_view source) {
  // A line that starts `class ModelNew` followed by `(` or `:`: KernelBench's candidate class.
  std::size_t at = 0;
  while ((at = source.find("class ModelNew", at)) != std::string_view::npos) {
    const bool line_start = at == 0 || source[at - 1] == '\n';
    std::size_t after = at + 14;
    while (after < source.size() && (source[after] == ' ' || source[after] == '\t')) ++after;
    if (line_start && after < source.size() && (source[after] == '(' || source[after] == ':')) return true;
    at += 14;
  }
  return false;
}

std::string Candidate::id() const {
  // The NUL separates the language from the code: ("cuda", "x") and ("cud", "ax") differ.
  detail::Sha256 hash;
  hash.update(language);
  hash.update(std::string_view("\0", 1));
  hash.update(source);
  return hash.hex().substr(0, 16);
}

bool is_initial_origin(std::string_view origin) {
  return std::any_of(std::begin(kOrigins), std::end(kOrigins),
                     [&](const OriginKind& kind) { return kind.initial && kind.name == origin; });
}

Candidate Candidate::from_file(const std::string& path, const std::string& language) {
  std::error_code error;
  if (!std::filesystem::is_regular_file(path, error)) {
    throw NotFoundError(fmt::format("candidate file {} does not exist (or is not a regular file)", path));
  }
  Candidate candidate;
  candidate.language = language.empty() ? language_for_extension(path) : language;
  if (candidate.language.empty()) {
    std::string extensions;
    for (const auto& row : kernel_languages()) {
      std::string listed;
      for (const auto& extension : row.extensions) listed += (listed.empty() ? "" : "/") + extension;
      extensions += fmt::format("{}{}: {}", extensions.empty() ? "" : ", ", listed, row.name);
    }
    throw ValidationError(fmt::format(
        "cannot tell the kernel language of {} from its extension ({}); pass the language explicitly", path,
        extensions));
  }
  if (find_kernel_language(candidate.language) == nullptr) {
    throw ValidationError(fmt::format("unknown kernel language \"{}\" for {}; expected one of {}", candidate.language,
                                      path, kernel_language_names()));
  }
  const auto text = detail::read_whole_file(path);
  if (!text) throw NotFoundError(fmt::format("cannot read candidate file {}", path));
  if (const auto binary = detail::binary_content(*text)) {
    throw ValidationError(fmt::format("candidate file {} is not a text file ({}): give the kernel's source file",
                                      path, *binary));
  }
  candidate.source = *text;
  // .py is Triton's extension and KernelBench's: a file that defines ModelNew is the latter.
  if (language.empty() && candidate.language == "triton" && defines_model_new(candidate.source)) {
    candidate.language = "pytorch";
  }
  return candidate;
}

std::string Candidate::to_json() const { return detail::candidate_to_json(*this).dump(2); }

Candidate Candidate::from_json(const std::string& json_text, const std::string& origin) {
  const Json document = detail::parse_json(json_text, origin);
  return detail::candidate_from_json(JsonField(document, origin));
}

}  // namespace kernelsmith
