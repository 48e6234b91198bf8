// Novelty (lib/novelty.cpp): sources normalised and hashed for exact duplicates, hashed n-gram embeddings
// for near duplicates per island, the verdicts and their messages, and the configuration's checks.
#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <vector>

#include "catch.hpp"
#include "kernelsmith/candidate.hpp"
#include "kernelsmith/error.hpp"
#include "kernelsmith/novelty.hpp"
#include "test_support.hpp"

using namespace kernelsmith;
using test::contains;
using test::error_of;

namespace {

// A kernel long enough (~1,800 tokens) that a one-token edit stays above the default threshold.
std::string long_kernel(const std::string& name) {
  std::string source = "__kernel void " + name + "(__global float* y) {\n";
  for (int i = 0; i < 300; ++i) source += "  y[" + std::to_string(i) + "] = " + std::to_string(i) + ".0f;\n";
  return source + "}\n";
}

}  // namespace

TEST_CASE("normalisation strips comments and layout but keeps plan directives", "[novelty]") {
  const std::string a =
      "// a comment\n// @tune BLOCK = 256 in {128, 256}\n__kernel void k(int n) {\n  /* block */ n += 1;\n}\n";
  const std::string b = "// @tune  BLOCK=256 in {128,256}\n__kernel   void k(int n){n+=1;}";
  const std::string c = "// @tune BLOCK = 128 in {128, 256}\n__kernel void k(int n) { n += 1; }";
  CHECK(normalize_source(a) == normalize_source(b));
  CHECK(normalized_source_hash("opencl", a) == normalized_source_hash("opencl", b));
  CHECK(normalized_source_hash("opencl", a) != normalized_source_hash("opencl", c));
  CHECK(normalized_source_hash("opencl", a) != normalized_source_hash("cuda", a));
  CHECK(normalized_source_hash("opencl", a).size() == 16);
  // Operators stay whole, preprocessor lines keep their line break, literals stay intact.
  CHECK(normalize_source("a+ +b") != normalize_source("a++b"));
  CHECK(normalize_source("#define X 1\nint y;") != normalize_source("#define X 1 int y;"));
  CHECK(source_tokens("x = \"a // b\";") == std::vector<std::string>{"x", "=", "\"a // b\"", ";"});
  CHECK(source_tokens("1.5e-3f") == std::vector<std::string>{"1.5e-3f"});
}

TEST_CASE("hashed n-gram embeddings: unit length, similar for small edits", "[novelty]") {
  std::string base;
  for (int i = 0; i < 80; ++i) base += "y[" + std::to_string(i) + "] = x[" + std::to_string(i) + "] * 2.0f;\n";
  const std::vector<float> e1 = hashed_ngram_embedding(base, 256, 3);
  REQUIRE(e1.size() == 256);
  double norm = 0.0;
  for (float v : e1) norm += v * v;
  CHECK(norm == Approx(1.0));
  std::string edited = base;
  edited.replace(edited.find("2.0f"), 4, "3.0f");
  const double near = cosine_similarity(e1, hashed_ngram_embedding(edited, 256, 3));
  const double far = cosine_similarity(e1, hashed_ngram_embedding("int main() { return 0; }", 256, 3));
  CHECK(near > 0.98);
  CHECK(near < 1.0);
  CHECK(far < 0.5);
  REQUIRE_THROWS_AS(cosine_similarity({1.0f}, {1.0f, 0.0f}), ValidationError);
}

TEST_CASE("the novelty filter rejects duplicates and near duplicates per island", "[novelty]") {
  const std::string base = long_kernel("k");
  Candidate original{"opencl", base, {}};
  NoveltyFilter filter;
  filter.remember(original, "orig", 0);
  CHECK(filter.size() == 1);

  Candidate reformatted{"opencl", "// same code\n" + base + "\n\n", {}};
  NoveltyVerdict verdict = filter.check(reformatted, 1, "llm_diff");
  CHECK(verdict.kind == NoveltyVerdict::Kind::duplicate);
  CHECK(verdict.similar_to == "orig");
  CHECK(verdict.message().find("duplicate of program orig") != std::string::npos);
  CHECK(filter.duplicate_of(reformatted) == "orig");

  Candidate tweaked = original;
  tweaked.source.replace(tweaked.source.find("7.0f"), 4, "8.0f");
  verdict = filter.check(tweaked, 0, "llm_diff");
  CHECK(verdict.kind == NoveltyVerdict::Kind::near_duplicate);
  CHECK(verdict.similarity > 0.995);
  CHECK(filter.check(tweaked, 1, "llm_diff").novel());  // nothing on island 1 to resemble
  CHECK(filter.check(tweaked, 0, "param").novel());     // parameter changes are exempt

  Candidate different{"opencl", "__kernel void other(__global int* z) { z[get_global_id(0)] = 1; }", {}};
  CHECK(filter.check(different, 0, "llm_full").novel());

  NoveltyConfig off;
  off.reject_near_duplicates = false;
  NoveltyFilter exact_only(off);
  exact_only.remember(original, "orig", 0);
  CHECK(exact_only.check(tweaked, 0, "llm_diff").novel());
  CHECK(exact_only.check(original, 0, "llm_diff").kind == NoveltyVerdict::Kind::duplicate);
}

TEST_CASE("the embedding function is pluggable", "[novelty]") {
  NoveltyConfig config;
  config.similarity_threshold = 0.9;
  int calls = 0;
  // Embeds by whether the source mentions "fast": every "fast" source looks alike.
  config.embedding = [&calls](const std::string& source) {
    ++calls;
    return std::vector<float>{source.find("fast") != std::string::npos ? 1.0f : 0.0f, 1.0f};
  };
  NoveltyFilter filter(config);
  filter.remember(Candidate{"cuda", "fast kernel one", {}}, "one", 0);
  CHECK(filter.check(Candidate{"cuda", "fast kernel two", {}}, 0, "llm_full").kind ==
        NoveltyVerdict::Kind::near_duplicate);
  CHECK(filter.check(Candidate{"cuda", "slow kernel", {}}, 0, "llm_full").novel());
  CHECK(calls == 3);

  config.embedding = [](const std::string& source) { return std::vector<float>(source.size() % 2 + 1, 1.0f); };
  NoveltyFilter inconsistent(config);
  inconsistent.remember(Candidate{"cuda", "ab", {}}, "even", 0);
  REQUIRE_THROWS_AS(inconsistent.check(Candidate{"cuda", "abc", {}}, 0, "llm_full"), ValidationError);
}

TEST_CASE("exact duplicates are found on every island and in the same language only", "[novelty]") {
  NoveltyFilter filter;
  const Candidate original{"opencl", "__kernel void k(__global int* x) { x[0] = 1; }", {}};
  filter.remember(original, "first", 3);
  const Candidate reformatted{"opencl", "/* same */\n__kernel void k(__global int* x)\n{\n  x[0] = 1;  // one\n}\n", {}};
  for (int island : {0, 3, 7}) {
    const NoveltyVerdict verdict = filter.check(reformatted, island, "llm_full");
    CHECK(verdict.kind == NoveltyVerdict::Kind::duplicate);
    CHECK(verdict.similar_to == "first");
    CHECK(verdict.similarity == 1.0);
  }
  // Exempt mutations skip the near-duplicate test only: a parameter change that lands on a known program
  // is still a duplicate.
  CHECK(filter.check(reformatted, 0, "param").kind == NoveltyVerdict::Kind::duplicate);
  CHECK(filter.duplicate_of(Candidate{"cuda", original.source, {}}).empty());
  CHECK(filter.duplicate_of(Candidate{"opencl", "__kernel void k(__global int* x) { x[0] = 2; }", {}}).empty());

  // The first id stays the one duplicates point at; size() counts distinct programs.
  filter.remember(reformatted, "second", 0);
  CHECK(filter.size() == 1);
  CHECK(filter.duplicate_of(original) == "first");
  CHECK(NoveltyVerdict{}.message() == "novel");
}

TEST_CASE("near duplicates: the threshold, the message, and what counts as exempt", "[novelty]") {
  const Candidate original{"opencl", long_kernel("k"), {}};
  Candidate tweaked = original;
  tweaked.source.replace(tweaked.source.find("7.0f"), 4, "8.0f");

  NoveltyFilter filter;
  filter.remember(original, "orig", 0);
  const NoveltyVerdict near = filter.check(tweaked, 0, "llm_diff");
  REQUIRE(near.kind == NoveltyVerdict::Kind::near_duplicate);
  CHECK(near.message() ==
        fmt::format("near duplicate of program orig (embedding cosine similarity {:.4f})", near.similarity));
  CHECK(near.similarity < 1.0);
  CHECK(near.hash == normalized_source_hash("opencl", tweaked.source));
  CHECK(near.embedding.size() == 256);

  // At or above the threshold is near; the same pair under a threshold just above its similarity is not.
  NoveltyConfig strict;
  strict.similarity_threshold = std::min(1.0, near.similarity + 1e-6);
  NoveltyFilter strict_filter(strict);
  strict_filter.remember(original, "orig", 0);
  CHECK(strict_filter.check(tweaked, 0, "llm_diff").novel());
  NoveltyConfig exact_threshold;
  exact_threshold.similarity_threshold = near.similarity;
  NoveltyFilter at_threshold(exact_threshold);
  at_threshold.remember(original, "orig", 0);
  CHECK(at_threshold.check(tweaked, 0, "llm_diff").kind == NoveltyVerdict::Kind::near_duplicate);

  // A caller's own exemptions replace the default ("param").
  NoveltyConfig exempt_full;
  exempt_full.exempt_mutations = {"llm_full"};
  NoveltyFilter exempting(exempt_full);
  exempting.remember(original, "orig", 0);
  CHECK(exempting.check(tweaked, 0, "llm_full").novel());
  CHECK(exempting.check(tweaked, 0, "param").kind == NoveltyVerdict::Kind::near_duplicate);

  // remember() with the verdict of check() reuses its hash and embedding; the program is then known.
  filter.remember(tweaked, "tweak", 0, near);
  CHECK(filter.duplicate_of(tweaked) == "tweak");
  CHECK(filter.size() == 2);
}

TEST_CASE("novelty settings and embeddings reject values that cannot work, naming them", "[novelty]") {
  NoveltyConfig config;
  config.similarity_threshold = 0.0;
  CHECK(contains(error_of([&] { NoveltyFilter unused(config); }), "novelty.similarity_threshold = 0 must be in (0, 1]"));
  config.similarity_threshold = 1.5;
  CHECK(contains(error_of([&] { config.validate(); }), "novelty.similarity_threshold = 1.5"));
  config = NoveltyConfig{};
  config.embedding_dimensions = 0;
  CHECK(contains(error_of([&] { config.validate(); }), "novelty.embedding_dimensions = 0 must be at least 1"));
  config = NoveltyConfig{};
  config.ngram = 0;
  CHECK(contains(error_of([&] { config.validate(); }), "novelty.ngram = 0 must be at least 1"));
  CHECK_NOTHROW(NoveltyConfig{}.validate());

  CHECK_THROWS_AS(hashed_ngram_embedding("x", 0, 3), ValidationError);
  CHECK_THROWS_AS(hashed_ngram_embedding("x", 8, 0), ValidationError);
  // No tokens, no direction: a zero vector, similar to nothing.
  const std::vector<float> empty = hashed_ngram_embedding("// only a comment\n", 8, 3);
  CHECK(empty == std::vector<float>(8, 0.0f));
  CHECK(cosine_similarity(empty, hashed_ngram_embedding("int x;", 8, 3)) == 0.0);
  CHECK(cosine_similarity({}, {}) == 0.0);
  // Fewer tokens than n still make one gram.
  const std::vector<float> short_source = hashed_ngram_embedding("x", 8, 3);
  CHECK(cosine_similarity(short_source, short_source) == Approx(1.0));
}
