// Novelty: a candidate is evaluated only when it is new. Exact duplicates (equal after comments and
// whitespace are stripped) are never evaluated twice; near duplicates of a program on the same island
// (cosine similarity of source embeddings above a threshold) are rejected before evaluation.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "kernelsmith/candidate.hpp"
#include "kernelsmith/export.hpp"

namespace kernelsmith {

/// The source's tokens: identifiers, numbers, string literals and operators; comments dropped except
/// `// @directive` lines (the launch plan), which are one token each; preprocessor lines end with a
/// "\n" token because line breaks matter to them.
KERNELSMITH_API std::vector<std::string> source_tokens(const std::string& source);

/// Tokens joined by single spaces: two sources that differ only in comments or layout normalise alike.
KERNELSMITH_API std::string normalize_source(const std::string& source);

/// 16 hex digits (64-bit FNV-1a) of the language and the normalised source.
KERNELSMITH_API std::string normalized_source_hash(const std::string& language, const std::string& source);

/// Maps a source to a fixed-length vector; cosine similarity compares two of them.
using EmbeddingFunction = std::function<std::vector<float>(const std::string& source)>;

/// The default embedding: token n-grams hashed (with a sign) into `dimensions` buckets, L2-normalised.
/// Sources shorter than n tokens hash their whole token list as one gram.
KERNELSMITH_API std::vector<float> hashed_ngram_embedding(const std::string& source, int dimensions = 256, int n = 3);

/// Cosine similarity of two vectors of equal length (0 when either is zero). Throws ValidationError
/// on a length mismatch.
KERNELSMITH_API double cosine_similarity(const std::vector<float>& a, const std::vector<float>& b);

struct KERNELSMITH_API NoveltyConfig {
  bool reject_near_duplicates = true;
  /// Cosine similarity at or above which a candidate is a near duplicate. With hashed 3-grams a
  /// one-token edit of a T-token source scores about 1 - 3/T: 0.995 rejects such edits only in sources
  /// longer than ~600 tokens, and rejects layout-level rewrites of any size.
  double similarity_threshold = 0.995;
  int embedding_dimensions = 256;
  int ngram = 3;
  /// Mutations exempt from the near-duplicate test: parameter changes are small edits by design, and
  /// the exact-duplicate test already keeps them from repeating.
  std::vector<std::string> exempt_mutations = {"param"};
  /// Replaces the default hashed n-gram embedding (e.g. a learned code embedding set from Python).
  EmbeddingFunction embedding;

  /// Throws ValidationError naming the field.
  void validate() const;
};

struct KERNELSMITH_API NoveltyVerdict {
  enum class Kind { novel, duplicate, near_duplicate };
  Kind kind = Kind::novel;
  /// The known program it duplicates or resembles most (empty when novel and nothing is known).
  std::string similar_to;
  double similarity = 0.0;
  /// Computed on the way, reused by NoveltyFilter::remember.
  std::string hash;
  std::vector<float> embedding;

  bool novel() const { return kind == Kind::novel; }
  /// e.g. "duplicate of program 1a2b... (equal after stripping comments and whitespace)".
  std::string message() const;
};

/// "novel", "duplicate" or "near_duplicate": the kind's name, as the run store's `steps.novelty_kind` holds it.
const char* to_string(NoveltyVerdict::Kind kind);

/// Remembers the programs seen in a run (all islands for exact duplicates, per island for near ones).
/// Thread-safe.
class KERNELSMITH_API NoveltyFilter {
 public:
  explicit NoveltyFilter(NoveltyConfig config = {});
  ~NoveltyFilter();
  NoveltyFilter(const NoveltyFilter&) = delete;
  NoveltyFilter& operator=(const NoveltyFilter&) = delete;

  /// Is the candidate new? The near-duplicate test runs against the island's programs, unless the
  /// mutation is exempt or the test is off.
  NoveltyVerdict check(const Candidate& candidate, int island, const std::string& mutation) const;
  /// Records a program under its id (exact hash always; embedding on the island).
  void remember(const Candidate& candidate, const std::string& id, int island);
  void remember(const Candidate& candidate, const std::string& id, int island, const NoveltyVerdict& verdict);
  /// The id of a known program equal to the candidate after normalisation, or "".
  std::string duplicate_of(const Candidate& candidate) const;
  std::size_t size() const;
  const NoveltyConfig& config() const { return config_; }

 private:
  std::vector<float> embed(const std::string& source) const;
  struct State;
  NoveltyConfig config_;
  std::unique_ptr<State> state_;
};

}  // namespace kernelsmith
