// Candidates: content-addressed source files with their lineage (docs/candidate-format.md).
#include "kernelsmith/candidate.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "detail/json_util.hpp"
#include "detail/sha256.hpp"
#include "kernelsmith/error.hpp"

namespace kernelsmith {
namespace {

using detail::Json;
using detail::JsonField;

bool is_known_language(const std::string& language) { return find_kernel_language(language) != nullptr; }

}  // namespace

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
    throw ValidationError(fmt::format(
        "cannot tell the kernel language of {} from its extension (.cu/.cuh: cuda, .cl: opencl, .maca: maca); "
        "pass the language explicitly",
        path));
  }
  if (!is_known_language(candidate.language)) {
    throw ValidationError(
        fmt::format("unknown kernel language \"{}\" for {}; expected cuda, opencl or maca", candidate.language, path));
  }
  std::ifstream stream(path, std::ios::binary);
  if (!stream) throw NotFoundError(fmt::format("cannot read candidate file {}", path));
  std::ostringstream text;
  text << stream.rdbuf();
  candidate.source = text.str();
  return candidate;
}

std::string Candidate::to_json() const {
  Json json;
  json["schema"] = kCandidateSchema;
  json["id"] = id();
  json["language"] = language;
  json["source"] = source;
  json["lineage"] = Json{{"parent_ids", lineage.parent_ids},
                         {"island", lineage.island},
                         {"generation", lineage.generation},
                         {"origin", lineage.origin}};
  return json.dump(2);
}

Candidate Candidate::from_json(const std::string& json_text, const std::string& origin) {
  const Json document = detail::parse_json(json_text, origin);
  const JsonField root(document, origin);
  root.expect_object({"schema", "id", "language", "source", "lineage"});
  const JsonField schema = root["schema"];
  if (schema.string() != kCandidateSchema) schema.fail_expected(fmt::format("\"{}\"", kCandidateSchema));
  Candidate candidate;
  const JsonField language = root["language"];
  candidate.language = language.string();
  if (!is_known_language(candidate.language)) {
    // "\"cuda\", \"opencl\" or \"maca\"": the table's names quoted, the last joined by "or".
    std::string expected;
    const auto& languages = kernel_languages();
    for (std::size_t i = 0; i < languages.size(); ++i) {
      expected += (i == 0 ? "" : i + 1 == languages.size() ? " or " : ", ") + ("\"" + languages[i].name + "\"");
    }
    language.fail_expected(expected);
  }
  candidate.source = root["source"].string();
  if (auto lineage = root.optional("lineage")) {
    lineage->expect_object({"parent_ids", "island", "generation", "origin"});
    if (auto parents = lineage->optional("parent_ids")) {
      for (const auto& parent : parents->elements()) candidate.lineage.parent_ids.push_back(parent.string());
    }
    if (auto island = lineage->optional("island")) candidate.lineage.island = island->int32();
    if (auto generation = lineage->optional("generation")) candidate.lineage.generation = generation->int32();
    if (auto made = lineage->optional("origin")) candidate.lineage.origin = made->string();
  }
  // The id is derived, not stored: a stated id that disagrees means the source was edited or damaged.
  if (auto id = root.optional("id")) {
    if (id->string() != candidate.id()) {
      id->fail(fmt::format("the stated id {} does not match the content (its id is {}); remove \"id\" after editing "
                           "the source",
                           id->string(), candidate.id()));
    }
  }
  return candidate;
}

}  // namespace kernelsmith
