#include "kernelsmith/novelty.hpp"

#include <fmt/format.h>

#include <Eigen/Core>
#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <mutex>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

#include "detail/source_digest.hpp"
#include "kernelsmith/error.hpp"

namespace kernelsmith {
namespace {

// ASCII classes without the locale: source code tokens are ASCII, and this loop is hot.
bool is_letter(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_identifier_start(char c) { return is_letter(c) || c == '_'; }
bool is_identifier_char(char c) { return is_letter(c) || is_digit(c) || c == '_'; }
bool is_blank(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f'; }

// Length of the operator at source[i]: the longest match, so that "a+ +b" and "a++b" stay different.
std::size_t operator_length(std::string_view source, std::size_t i) {
  const char a = source[i];
  const char b = i + 1 < source.size() ? source[i + 1] : '\0';
  const char c = i + 2 < source.size() ? source[i + 2] : '\0';
  if (((a == '<' || a == '>') && b == a && c == '=') || (a == '.' && b == '.' && c == '.') ||
      (a == '-' && b == '>' && c == '*')) {
    return 3;
  }
  switch (a) {
    case '+': return b == '+' || b == '=' ? 2 : 1;
    case '-': return b == '-' || b == '=' || b == '>' ? 2 : 1;
    case '&': return b == '&' || b == '=' ? 2 : 1;
    case '|': return b == '|' || b == '=' ? 2 : 1;
    case '<': return b == '<' || b == '=' ? 2 : 1;
    case '>': return b == '>' || b == '=' ? 2 : 1;
    case '*': case '/': case '%': case '^': case '!': case '=': return b == '=' ? 2 : 1;
    case ':': return b == ':' ? 2 : 1;
    case '#': return b == '#' ? 2 : 1;
    case '.': return b == '*' ? 2 : 1;
    default: return 1;
  }
}

std::uint64_t fnv1a(std::string_view text, std::uint64_t hash = 0xcbf29ce484222325ULL) {
  for (unsigned char c : text) {
    hash ^= c;
    hash *= 0x100000001b3ULL;
  }
  return hash;
}

std::string joined_tokens(std::string_view source);

// Calls emit(std::string_view) for each token of the source, without copying the ordinary ones: the
// archive and the novelty filter tokenise every program, so this is the search's hot loop.
template <typename Emit>
void scan_tokens(std::string_view source, Emit&& emit) {
  const std::size_t size = source.size();
  std::size_t i = 0;
  bool line_start = true;  // only whitespace so far on this line
  bool in_preprocessor = false;
  while (i < size) {
    const char c = source[i];
    if (c == '\n') {
      if (in_preprocessor) emit(std::string_view("\n"));
      in_preprocessor = false;
      line_start = true;
      ++i;
      continue;
    }
    if (c == '\\' && i + 1 < size && (source[i + 1] == '\n' || source[i + 1] == '\r')) {
      // Line continuation: the logical line goes on.
      i += (source[i + 1] == '\r' && i + 2 < size && source[i + 2] == '\n') ? 3 : 2;
      continue;
    }
    if (is_blank(c)) {
      ++i;
      continue;
    }
    if (c == '/' && i + 1 < size && source[i + 1] == '/') {
      std::size_t end = source.find('\n', i);
      if (end == std::string_view::npos) end = size;
      const std::string_view body = source.substr(i + 2, end - i - 2);
      const std::size_t first = body.find_first_not_of(" \t\r");
      if (first != std::string_view::npos && body[first] == '@') {
        // A launch-plan directive: meaningful, one token, itself normalised.
        const std::string directive = "//" + joined_tokens(body.substr(first));
        emit(std::string_view(directive));
      }
      i = end;
      continue;
    }
    if (c == '/' && i + 1 < size && source[i + 1] == '*') {
      const std::size_t end = source.find("*/", i + 2);
      i = end == std::string_view::npos ? size : end + 2;
      continue;
    }
    if (line_start && c == '#') in_preprocessor = true;
    line_start = false;
    std::size_t j = i + 1;
    if (c == '"' || c == '\'') {
      while (j < size && source[j] != c && source[j] != '\n') {
        if (source[j] == '\\' && j + 1 < size) ++j;
        ++j;
      }
      if (j < size && source[j] == c) ++j;
    } else if (is_identifier_start(c)) {
      while (j < size && is_identifier_char(source[j])) ++j;
    } else if (is_digit(c) || (c == '.' && i + 1 < size && is_digit(source[i + 1]))) {
      while (j < size) {
        const char d = source[j];
        const char before = source[j - 1];
        if ((d == '+' || d == '-') && (before == 'e' || before == 'E' || before == 'p' || before == 'P')) {
          ++j;
        } else if (is_identifier_char(d) || d == '.') {
          ++j;
        } else {
          break;
        }
      }
    } else {
      j = i + operator_length(source, i);
    }
    emit(source.substr(i, j - i));
    i = j;
  }
  if (in_preprocessor) emit(std::string_view("\n"));
}

// The tokens joined by single spaces (a plain function: the directive case of scan_tokens calls it,
// and a template calling itself with a new lambda would never stop instantiating).
std::string joined_tokens(std::string_view source) {
  std::string joined;
  joined.reserve(source.size());
  scan_tokens(source, [&](std::string_view token) {
    if (!joined.empty()) joined += ' ';
    joined.append(token.data(), token.size());
  });
  return joined;
}

}  // namespace

std::vector<std::string> source_tokens(const std::string& source) {
  std::vector<std::string> tokens;
  scan_tokens(source, [&](std::string_view token) { tokens.emplace_back(token); });
  return tokens;
}

std::string normalize_source(const std::string& source) { return joined_tokens(source); }

namespace detail {

SourceDigest digest_source(const std::string& language, const std::string& source) {
  // FNV-1a over language, NUL and the normalised source, streamed token by token.
  std::uint64_t hash = fnv1a(language);
  hash = fnv1a(std::string_view("\0", 1), hash);
  std::size_t tokens = 0;
  scan_tokens(source, [&](std::string_view token) {
    if (tokens > 0) hash = fnv1a(" ", hash);
    hash = fnv1a(token, hash);
    ++tokens;
  });
  return SourceDigest{fmt::format("{:016x}", hash), tokens};
}

}  // namespace detail

std::string normalized_source_hash(const std::string& language, const std::string& source) {
  return detail::digest_source(language, source).hash;
}

std::vector<float> hashed_ngram_embedding(const std::string& source, int dimensions, int n) {
  if (dimensions < 1) throw ValidationError(fmt::format("embedding dimensions = {} must be at least 1", dimensions));
  if (n < 1) throw ValidationError(fmt::format("n-gram length = {} must be at least 1", n));
  std::vector<std::uint64_t> token_hashes;
  token_hashes.reserve(source.size() / 4);
  scan_tokens(source, [&](std::string_view token) { token_hashes.push_back(fnv1a(token)); });

  Eigen::VectorXf vector = Eigen::VectorXf::Zero(dimensions);
  const std::size_t gram = static_cast<std::size_t>(n);
  const std::size_t grams = token_hashes.size() >= gram ? token_hashes.size() - gram + 1 : (token_hashes.empty() ? 0 : 1);
  for (std::size_t start = 0; start < grams; ++start) {
    std::uint64_t hash = 0x84222325cbf29ce4ULL;
    const std::size_t end = std::min(token_hashes.size(), start + gram);
    for (std::size_t t = start; t < end; ++t) {
      hash ^= token_hashes[t] + 0x9E3779B97F4A7C15ULL + (hash << 6) + (hash >> 2);
    }
    hash *= 0xff51afd7ed558ccdULL;
    hash ^= hash >> 33;
    const auto bucket = static_cast<Eigen::Index>(hash % static_cast<std::uint64_t>(dimensions));
    // The sign bit keeps colliding grams from only ever adding up (feature hashing).
    vector[bucket] += (hash >> 63) != 0 ? -1.0f : 1.0f;
  }
  const float norm = vector.norm();
  if (norm > 0.0f) vector /= norm;
  return std::vector<float>(vector.data(), vector.data() + vector.size());
}

double cosine_similarity(const std::vector<float>& a, const std::vector<float>& b) {
  if (a.size() != b.size()) {
    throw ValidationError(
        fmt::format("cosine similarity of vectors of different lengths ({} and {})", a.size(), b.size()));
  }
  if (a.empty()) return 0.0;
  Eigen::Map<const Eigen::VectorXf> x(a.data(), static_cast<Eigen::Index>(a.size()));
  Eigen::Map<const Eigen::VectorXf> y(b.data(), static_cast<Eigen::Index>(b.size()));
  const double norms = static_cast<double>(x.norm()) * static_cast<double>(y.norm());
  if (!(norms > 0.0)) return 0.0;
  return static_cast<double>(x.dot(y)) / norms;
}

void NoveltyConfig::validate() const {
  if (!(similarity_threshold > 0.0 && similarity_threshold <= 1.0)) {
    throw ValidationError(
        fmt::format("novelty.similarity_threshold = {} must be in (0, 1]", similarity_threshold));
  }
  if (embedding_dimensions < 1) {
    throw ValidationError(fmt::format("novelty.embedding_dimensions = {} must be at least 1", embedding_dimensions));
  }
  if (ngram < 1) throw ValidationError(fmt::format("novelty.ngram = {} must be at least 1", ngram));
}

const char* to_string(NoveltyVerdict::Kind kind) {
  switch (kind) {
    case NoveltyVerdict::Kind::novel: return "novel";
    case NoveltyVerdict::Kind::duplicate: return "duplicate";
    case NoveltyVerdict::Kind::near_duplicate: return "near_duplicate";
  }
  return "unknown";
}

std::string NoveltyVerdict::message() const {
  switch (kind) {
    case Kind::novel: return "novel";
    case Kind::duplicate:
      return fmt::format("duplicate of program {} (equal after stripping comments and whitespace)", similar_to);
    case Kind::near_duplicate:
      return fmt::format("near duplicate of program {} (embedding cosine similarity {:.4f})", similar_to,
                         similarity);
  }
  return "unknown";
}

struct NoveltyFilter::State {
  // One island's embeddings as the columns of a matrix (unit length or zero), so that a check is one
  // matrix-vector product.
  struct Island {
    std::vector<std::string> ids;
    std::unordered_set<std::string> known;
    std::vector<float> columns;
    Eigen::Index dimensions = 0;
  };
  mutable std::mutex mutex;
  std::unordered_map<std::string, std::string> hashes;  // normalised hash -> program id
  std::map<int, Island> islands;
};

namespace {

[[noreturn]] void embedding_length_mismatch(Eigen::Index expected, std::size_t got) {
  throw ValidationError(fmt::format(
      "the embedding function returned {} values for one source and {} for another; it must return a fixed length",
      expected, got));
}

}  // namespace

NoveltyFilter::NoveltyFilter(NoveltyConfig config) : config_(std::move(config)), state_(std::make_unique<State>()) {
  config_.validate();
}

NoveltyFilter::~NoveltyFilter() = default;

std::vector<float> NoveltyFilter::embed(const std::string& source) const {
  if (config_.embedding) return config_.embedding(source);
  return hashed_ngram_embedding(source, config_.embedding_dimensions, config_.ngram);
}

NoveltyVerdict NoveltyFilter::check(const Candidate& candidate, int island, const std::string& mutation) const {
  NoveltyVerdict verdict;
  verdict.hash = normalized_source_hash(candidate.language, candidate.source);
  {
    std::lock_guard<std::mutex> lock(state_->mutex);
    auto found = state_->hashes.find(verdict.hash);
    if (found != state_->hashes.end()) {
      verdict.kind = NoveltyVerdict::Kind::duplicate;
      verdict.similar_to = found->second;
      verdict.similarity = 1.0;
      return verdict;
    }
  }
  const bool exempt = std::find(config_.exempt_mutations.begin(), config_.exempt_mutations.end(), mutation) !=
                      config_.exempt_mutations.end();
  if (!config_.reject_near_duplicates || exempt) return verdict;

  // Outside the lock: a user embedding may be slow (or call into Python).
  verdict.embedding = embed(candidate.source);
  Eigen::VectorXf query = Eigen::Map<const Eigen::VectorXf>(verdict.embedding.data(),
                                                            static_cast<Eigen::Index>(verdict.embedding.size()));
  const float norm = query.norm();
  if (norm > 0.0f) query /= norm;

  std::lock_guard<std::mutex> lock(state_->mutex);
  auto found = state_->islands.find(island);
  if (found == state_->islands.end() || found->second.ids.empty()) return verdict;
  const State::Island& entries = found->second;
  if (entries.dimensions != query.size()) embedding_length_mismatch(entries.dimensions, verdict.embedding.size());
  Eigen::Map<const Eigen::MatrixXf> matrix(entries.columns.data(), entries.dimensions,
                                           static_cast<Eigen::Index>(entries.ids.size()));
  const Eigen::VectorXf similarities = matrix.transpose() * query;
  Eigen::Index best = 0;
  verdict.similarity = static_cast<double>(similarities.maxCoeff(&best));
  verdict.similar_to = entries.ids[static_cast<std::size_t>(best)];
  if (!verdict.similar_to.empty() && verdict.similarity >= config_.similarity_threshold) {
    verdict.kind = NoveltyVerdict::Kind::near_duplicate;
  }
  return verdict;
}

void NoveltyFilter::remember(const Candidate& candidate, const std::string& id, int island) {
  remember(candidate, id, island, NoveltyVerdict{});
}

void NoveltyFilter::remember(const Candidate& candidate, const std::string& id, int island,
                             const NoveltyVerdict& verdict) {
  const std::string hash =
      verdict.hash.empty() ? normalized_source_hash(candidate.language, candidate.source) : verdict.hash;
  std::vector<float> embedding;
  if (config_.reject_near_duplicates) {
    embedding = verdict.embedding.empty() ? embed(candidate.source) : verdict.embedding;
  }
  std::lock_guard<std::mutex> lock(state_->mutex);
  state_->hashes.emplace(hash, id);
  if (!config_.reject_near_duplicates) return;
  State::Island& entries = state_->islands[island];
  if (!entries.known.insert(id).second) return;
  Eigen::VectorXf column =
      Eigen::Map<const Eigen::VectorXf>(embedding.data(), static_cast<Eigen::Index>(embedding.size()));
  if (entries.ids.empty()) {
    entries.dimensions = column.size();
  } else if (entries.dimensions != column.size()) {
    entries.known.erase(id);
    embedding_length_mismatch(entries.dimensions, embedding.size());
  }
  const float norm = column.norm();
  if (norm > 0.0f) column /= norm;
  entries.ids.push_back(id);
  entries.columns.insert(entries.columns.end(), column.data(), column.data() + column.size());
}

std::string NoveltyFilter::duplicate_of(const Candidate& candidate) const {
  const std::string hash = normalized_source_hash(candidate.language, candidate.source);
  std::lock_guard<std::mutex> lock(state_->mutex);
  auto found = state_->hashes.find(hash);
  return found == state_->hashes.end() ? std::string() : found->second;
}

std::size_t NoveltyFilter::size() const {
  std::lock_guard<std::mutex> lock(state_->mutex);
  return state_->hashes.size();
}

}  // namespace kernelsmith
