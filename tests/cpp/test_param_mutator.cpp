// The parameter mutator: rewriting @tune lines, constraints, crossover, exhaustion.
#include <fstream>
#include <set>
#include <sstream>

#include "catch.hpp"
#include "kernelsmith/error.hpp"
#include "kernelsmith/param_mutator.hpp"

using namespace kernelsmith;

namespace {

const char* const kSource =
    "// Scales x by two.\n"
    "// @tune BLOCK = 256 in {64, 128, 256, 512}\n"
    "// @tune ITEMS = 2 in {1, 2, 4, 8}\n"
    "// @require BLOCK <= MAX_THREADS_PER_BLOCK\n"
    "// @require BLOCK * ITEMS <= N\n"
    "// @launch scale<<<ceil_div(N, BLOCK * ITEMS), BLOCK>>>(x, y, N)\n"
    "__kernel void scale(__global const float* x, __global float* y, int N) {\n"
    "  for (int i = 0; i < ITEMS; ++i) y[i] = 2.0f * x[i];\n"
    "}\n";

MutationRequest make_request(const std::string& source, std::uint64_t seed = 1) {
  Task task;
  task.name = "scale";
  task.timing_sizes.name = "timing";
  task.timing_sizes.sizes = {{"N", 1024}};
  MutationRequest request;
  request.shared_task = std::make_shared<const Task>(std::move(task));
  request.parent.language = "opencl";
  request.parent.source = source;
  request.device.backend = "opencl";
  request.device.max_threads_per_block = 256;
  request.seed = seed;
  request.island = 1;
  request.generation = 3;
  return request;
}

}  // namespace

TEST_CASE("rewrite changes only the values of @tune lines", "[param_mutator]") {
  const std::string rewritten = ParamMutator::rewrite(kSource, {{"BLOCK", 64}, {"ITEMS", 8}});
  CHECK(ParamMutator::values_of(rewritten) == ParamValues{{"BLOCK", 64}, {"ITEMS", 8}});
  std::string expected = kSource;
  expected.replace(expected.find("BLOCK = 256"), 11, "BLOCK = 64");
  expected.replace(expected.find("ITEMS = 2"), 9, "ITEMS = 8");
  CHECK(rewritten == expected);
  REQUIRE_THROWS_AS(ParamMutator::rewrite(kSource, {{"BLOCK", 100}}), ValidationError);
  REQUIRE_THROWS_AS(ParamMutator::rewrite(kSource, {{"WIDTH", 4}}), ValidationError);
}

TEST_CASE("mutation changes one or two parameters to allowed values that satisfy @require", "[param_mutator]") {
  ParamMutator mutator;
  const ParamValues parent = ParamMutator::values_of(kSource);
  std::set<ParamValues> seen;
  for (std::uint64_t seed = 0; seed < 60; ++seed) {
    const std::vector<Proposal> proposals = mutator.propose(make_request(kSource, seed));
    REQUIRE(proposals.size() == 1);
    const Proposal& proposal = proposals[0];
    REQUIRE(proposal.candidate);
    CHECK(proposal.mutation == "param");
    CHECK(proposal.failure.empty());
    const ParamValues child = ParamMutator::values_of(proposal.candidate->source);
    CHECK(child != parent);
    int changed = 0;
    for (const auto& [name, value] : child) changed += value != parent.at(name) ? 1 : 0;
    CHECK(changed >= 1);
    CHECK(changed <= 2);
    CHECK(child.at("BLOCK") <= 256);  // MAX_THREADS_PER_BLOCK of the request's device
    CHECK(child.at("BLOCK") * child.at("ITEMS") <= 1024);
    CHECK(proposal.candidate->lineage.parent_ids == std::vector<std::string>{make_request(kSource).parent.id()});
    CHECK(proposal.candidate->lineage.island == 1);
    CHECK(proposal.candidate->lineage.generation == 3);
    CHECK(proposal.candidate->lineage.origin == "param");
    CHECK(proposal.candidate->language == "opencl");
    seen.insert(child);
  }
  CHECK(seen.size() >= 5);  // the draws spread over the space
  // Deterministic under the request's seed.
  CHECK(mutator.propose(make_request(kSource, 9))[0].candidate->source ==
        mutator.propose(make_request(kSource, 9))[0].candidate->source);
}

TEST_CASE("neighbour bias moves a parameter to an adjacent value", "[param_mutator]") {
  ParamMutatorOptions options;
  options.max_changes = 1;
  options.neighbour_bias = 1.0;
  ParamMutator mutator(options);
  for (std::uint64_t seed = 0; seed < 30; ++seed) {
    const ParamValues child = ParamMutator::values_of(mutator.propose(make_request(kSource, seed))[0].candidate->source);
    const bool block_moved = child.at("BLOCK") != 256;
    if (block_moved) {
      CHECK((child.at("BLOCK") == 128 || child.at("BLOCK") == 512));
      CHECK(child.at("ITEMS") == 2);
    } else {
      CHECK((child.at("ITEMS") == 1 || child.at("ITEMS") == 4));
    }
  }
}

TEST_CASE("an unreported device attribute leaves its constraint unchecked", "[param_mutator]") {
  ParamMutator mutator;
  MutationRequest request = make_request(kSource);
  request.device = DeviceInfo{};  // nothing known; only BLOCK * ITEMS <= N is checked
  request.device.warp_size = 0;
  bool saw_512 = false;
  for (std::uint64_t seed = 0; seed < 80 && !saw_512; ++seed) {
    request.seed = seed;
    const ParamValues child = ParamMutator::values_of(mutator.propose(request)[0].candidate->source);
    saw_512 = child.at("BLOCK") == 512;
    CHECK(child.at("BLOCK") * child.at("ITEMS") <= 1024);
  }
  CHECK(saw_512);
}

TEST_CASE("crossover takes values from the second parent", "[param_mutator]") {
  ParamMutator mutator;
  MutationRequest request = make_request(kSource);
  Candidate partner = request.parent;
  partner.source = ParamMutator::rewrite(kSource, {{"BLOCK", 64}, {"ITEMS", 8}});
  request.second_parent = partner;
  int with_two_parents = 0;
  for (std::uint64_t seed = 0; seed < 40; ++seed) {
    request.seed = seed;
    const Proposal proposal = mutator.propose(request)[0];
    REQUIRE(proposal.candidate);
    if (proposal.candidate->lineage.parent_ids.size() == 2) {
      ++with_two_parents;
      CHECK(proposal.candidate->lineage.parent_ids[1] == partner.id());
    }
  }
  CHECK(with_two_parents > 5);
}

TEST_CASE("known combinations are skipped; an exhausted space says so", "[param_mutator]") {
  const std::string small =
      "// @tune A = 1 in {1, 2, 3}\n"
      "// @require A != 3\n"
      "// @launch k<<<1, 1>>>(x)\n"
      "__kernel void k(__global float* x) { x[0] = A; }\n";
  ParamMutator mutator;
  MutationRequest request = make_request(small);
  std::set<std::string> known;
  request.is_known = [&known](const Candidate& candidate) { return known.count(candidate.source) != 0; };

  const Proposal first = mutator.propose(request)[0];
  REQUIRE(first.candidate);
  CHECK(ParamMutator::values_of(first.candidate->source).at("A") == 2);  // 3 breaks @require
  known.insert(first.candidate->source);

  const Proposal second = mutator.propose(request)[0];
  CHECK_FALSE(second.candidate);
  CHECK(second.mutation == "param");
  CHECK(second.failure.find("no valid new combination of A") != std::string::npos);
  CHECK(second.failure.find("1 rejected by constraints") != std::string::npos);
  CHECK(second.failure.find("1 already in the run") != std::string::npos);
}

TEST_CASE("a parent without tunables or with a broken plan yields a failure, not an exception",
          "[param_mutator]") {
  ParamMutator mutator;
  const Proposal none = mutator.propose(make_request("// @launch k<<<1, 1>>>(x)\n__kernel void k() {}"))[0];
  CHECK_FALSE(none.candidate);
  CHECK(none.failure.find("declares no tunable parameters") != std::string::npos);
  const Proposal broken = mutator.propose(make_request("__kernel void k() {}"))[0];
  CHECK_FALSE(broken.candidate);
  CHECK(broken.failure.find("does not parse") != std::string::npos);

  ParamMutatorOptions bad;
  bad.neighbour_bias = 2.0;
  REQUIRE_THROWS_AS(ParamMutator(bad), ValidationError);
}

TEST_CASE("several proposals per request are distinct", "[param_mutator]") {
  ParamMutatorOptions options;
  options.proposals_per_request = 4;
  ParamMutator mutator(options);
  const std::vector<Proposal> proposals = mutator.propose(make_request(kSource, 3));
  REQUIRE(proposals.size() == 4);
  std::set<std::string> sources;
  for (const Proposal& proposal : proposals) {
    REQUIRE(proposal.candidate);
    sources.insert(proposal.candidate->source);
  }
  CHECK(sources.size() == 4);
}

namespace {

// docs/examples/vector_add.py: a Triton candidate whose plan is in `# @` lines.
std::string triton_example() {
  std::ifstream stream(std::string(KERNELSMITH_SOURCE_DIR) + "/docs/examples/vector_add.py");
  REQUIRE(stream);
  std::ostringstream text;
  text << stream.rdbuf();
  return text.str();
}

}  // namespace

TEST_CASE("Triton sources: `# @tune` lines are read and rewritten in the candidate's language", "[param_mutator]") {
  const std::string source = triton_example();
  CHECK(ParamMutator::values_of(source, "triton") == ParamValues{{"BLOCK", 1024}, {"WARPS", 4}});
  // Read as CUDA, the `#` lines are no directives: the plan has no @launch line.
  REQUIRE_THROWS_AS(ParamMutator::values_of(source), PlanError);

  const std::string rewritten = ParamMutator::rewrite(source, {{"BLOCK", 256}, {"WARPS", 8}}, "triton");
  std::string expected = source;
  expected.replace(expected.find("# @tune BLOCK = 1024"), 20, "# @tune BLOCK = 256");
  expected.replace(expected.find("# @tune WARPS = 4"), 17, "# @tune WARPS = 8");
  CHECK(rewritten == expected);
  CHECK(ParamMutator::values_of(rewritten, "triton") == ParamValues{{"BLOCK", 256}, {"WARPS", 8}});
  try {
    ParamMutator::rewrite(source, {{"ITEMS", 2}}, "triton");
    FAIL("an unknown parameter was rewritten");
  } catch (const ValidationError& error) {
    CHECK(std::string(error.what()).find("no `# @tune ITEMS = ...` line") != std::string::npos);
  }
}

TEST_CASE("Triton parents get Triton children whose values satisfy @require", "[param_mutator]") {
  ParamMutator mutator;
  MutationRequest request = make_request(triton_example());
  request.parent.language = "triton";
  request.language = "triton";
  request.device.backend = "cuda";
  request.device.max_threads_per_block = 1024;
  CHECK(mutator.can_mutate(request.parent));
  std::set<ParamValues> seen;
  for (std::uint64_t seed = 0; seed < 40; ++seed) {
    request.seed = seed;
    const Proposal proposal = mutator.propose(request).at(0);
    REQUIRE(proposal.candidate);
    CHECK(proposal.candidate->language == "triton");
    const ParamValues child = ParamMutator::values_of(proposal.candidate->source, "triton");
    CHECK(child != ParamValues{{"BLOCK", 1024}, {"WARPS", 4}});
    CHECK(child.at("BLOCK") >= 32 * child.at("WARPS"));  // @require BLOCK >= 32 * WARPS
    // Only the @tune lines change: the kernel and the launch line stay as they are.
    CHECK(proposal.candidate->source.find("# @launch add[ceil_div(N, BLOCK)](x, y, out, N, BLOCK=BLOCK) "
                                          "num_warps=WARPS num_stages=3") != std::string::npos);
    seen.insert(child);
  }
  CHECK(seen.size() >= 4);

  // The same file labelled CUDA has no plan the mutator can read.
  Candidate mislabelled = request.parent;
  mislabelled.language = "cuda";
  CHECK_FALSE(mutator.can_mutate(mislabelled));
}

TEST_CASE("a parent in another language than the children's is refused and reported exhausted",
          "[param_mutator]") {
  ParamMutator mutator;
  MutationRequest request = make_request(kSource);  // an OpenCL parent
  request.language = "triton";
  const std::vector<Proposal> proposals = mutator.propose(request);
  REQUIRE(proposals.size() == 1);
  CHECK_FALSE(proposals[0].candidate);
  CHECK(proposals[0].failure.find("cannot write the opencl parent in triton") != std::string::npos);
  CHECK(proposals[0].exhausted_ids == std::vector<std::string>{request.parent.id()});
}
