#include "kernelsmith/novelty.hpp"

#include <fmt/format.h>

#include <Eigen/Core>
#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <mutex>
#include <unordered_map>

#include "kernelsmith/error.hpp"

namespace kernelsmith {
namespace {

bool is_identifier_start(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool is_identifier_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }
bool is_digit(char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; }

// Longest operators first, so that "a+ +b" and "a++b" stay different.
const char* const kOperators3[] = {"<<=", ">>=", "...", "->*"};
const char* const kOperators2[] = {"++", "--", "->", "<<", ">>", "<=", ">=", "==", "!=", "&&", "||", "+=",
                                   "-=", "*=", "/=", "%=", "&=", "|=", "^=", "::", "##", ".*"};

std::uint64_t fnv1a(const std::string& text, std::uint64_t hash = 0xcbf29ce484222325ULL) {
  for (unsigned char c : text) {
    hash ^= c;
    hash *= 0x100000001b3ULL;
  }
  return hash;
}

std::string join_tokens(const std::vector<std::string>& tokens) {
  std::string joined;
  for (const std::string& token : tokens) {
    if (!joined.empty()) joined += ' ';
    joined += token;
  }
  return joined;
}

}  // namespace

std::vector<std::string> source_tokens(const std::string& source) {
  std::vector<std::string> tokens;
  const std::size_t size = source.size();
  std::size_t i = 0;
  bool line_start = true;     // only whitespace so far on this line
  bool in_preprocessor = false;
  while (i < size) {
    const char c = source[i];
    if (c == '\n') {
      if (in_preprocessor) tokens.emplace_back("\n");
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
    if (std::isspace(static_cast<unsigned char>(c))) {
      ++i;
      continue;
    }
    if (c == '/' && i + 1 < size && source[i + 1] == '/') {
      std::size_t end = source.find('\n', i);
      if (end == std::string::npos) end = size;
      std::string body = source.substr(i + 2, end - i - 2);
      std::size_t first = body.find_first_not_of(" \t\r");
      if (first != std::string::npos && body[first] == '@') {
        // A launch-plan directive: meaningful, one token, itself normalised.
        tokens.push_back("//" + join_tokens(source_tokens(body.substr(first))));
      }
      i = end;
      continue;
    }
    if (c == '/' && i + 1 < size && source[i + 1] == '*') {
      std::size_t end = source.find("*/", i + 2);
      i = end == std::string::npos ? size : end + 2;
      continue;
    }
    if (line_start && c == '#') in_preprocessor = true;
    line_start = false;
    if (c == '"' || c == '\'') {
      std::size_t j = i + 1;
      while (j < size && source[j] != c && source[j] != '\n') {
        if (source[j] == '\\' && j + 1 < size) ++j;
        ++j;
      }
      if (j < size && source[j] == c) ++j;
      tokens.push_back(source.substr(i, j - i));
      i = j;
      continue;
    }
    if (is_identifier_start(c)) {
      std::size_t j = i + 1;
      while (j < size && is_identifier_char(source[j])) ++j;
      tokens.push_back(source.substr(i, j - i));
      i = j;
      continue;
    }
    if (is_digit(c) || (c == '.' && i + 1 < size && is_digit(source[i + 1]))) {
      std::size_t j = i + 1;
      while (j < size) {
        const char d = source[j];
        if ((d == '+' || d == '-') && (source[j - 1] == 'e' || source[j - 1] == 'E' || source[j - 1] == 'p' ||
                                       source[j - 1] == 'P')) {
          ++j;
        } else if (is_identifier_char(d) || d == '.') {
          ++j;
        } else {
          break;
        }
      }
      tokens.push_back(source.substr(i, j - i));
      i = j;
      continue;
    }
    std::size_t length = 1;
    for (const char* op : kOperators3) {
      if (source.compare(i, 3, op) == 0) {
        length = 3;
        break;
      }
    }
    if (length == 1) {
      for (const char* op : kOperators2) {
        if (source.compare(i, 2, op) == 0) {
          length = 2;
          break;
        }
      }
    }
    tokens.push_back(source.substr(i, length));
    i += length;
  }
  if (in_preprocessor) tokens.emplace_back("\n");
  return tokens;
}

std::string normalize_source(const std::string& source) { return join_tokens(source_tokens(source)); }

std::string normalized_source_hash(const std::string& language, const std::string& source) {
  std::uint64_t hash = fnv1a(language);
  hash = fnv1a(std::string(1, '\0'), hash);
  hash = fnv1a(normalize_source(source), hash);
  return fmt::format("{:016x}", hash);
}

std::vector<float> hashed_ngram_embedding(const std::string& source, int dimensions, int n) {
  if (dimensions < 1) throw ValidationError(fmt::format("embedding dimensions = {} must be at least 1", dimensions));
  if (n < 1) throw ValidationError(fmt::format("n-gram length = {} must be at least 1", n));
  const std::vector<std::string> tokens = source_tokens(source);
  std::vector<std::uint64_t> token_hashes(tokens.size());
  for (std::size_t t = 0; t < tokens.size(); ++t) token_hashes[t] = fnv1a(tokens[t]);

  Eigen::VectorXf vector = Eigen::VectorXf::Zero(dimensions);
  const std::size_t gram = static_cast<std::size_t>(n);
  const std::size_t grams = tokens.size() >= gram ? tokens.size() - gram + 1 : (tokens.empty() ? 0 : 1);
  for (std::size_t start = 0; start < grams; ++start) {
    std::uint64_t hash = 0x84222325cbf29ce4ULL;
    const std::size_t end = std::min(tokens.size(), start + gram);
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
  struct Entry {
    std::string id;
    Eigen::VectorXf embedding;  // unit length (or zero)
  };
  mutable std::mutex mutex;
  std::unordered_map<std::string, std::string> hashes;  // normalised hash -> program id
  std::map<int, std::vector<Entry>> islands;
};

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
  auto island_entries = state_->islands.find(island);
  if (island_entries == state_->islands.end()) return verdict;
  for (const State::Entry& entry : island_entries->second) {
    if (entry.embedding.size() != query.size()) {
      throw ValidationError(fmt::format(
          "the embedding function returned {} values for one source and {} for another; it must return a "
          "fixed length",
          query.size(), entry.embedding.size()));
    }
    const double similarity = static_cast<double>(entry.embedding.dot(query));
    if (similarity > verdict.similarity || verdict.similar_to.empty()) {
      verdict.similarity = similarity;
      verdict.similar_to = entry.id;
    }
  }
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
  auto& entries = state_->islands[island];
  for (const State::Entry& entry : entries) {
    if (entry.id == id) return;
  }
  State::Entry entry;
  entry.id = id;
  entry.embedding =
      Eigen::Map<const Eigen::VectorXf>(embedding.data(), static_cast<Eigen::Index>(embedding.size()));
  const float norm = entry.embedding.norm();
  if (norm > 0.0f) entry.embedding /= norm;
  entries.push_back(std::move(entry));
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
