#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>

#include "catch.hpp"
#include "kernelsmith/error.hpp"
#include "kernelsmith/llm_mutator.hpp"

using namespace kernelsmith;

namespace {

const std::string kParentSource =
    "// @launch scale<<<ceil_div(N, 256), 256>>>(x, y, N)\n"
    "extern \"C\" __global__ void scale(const float* x, float* y, int n) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (i < n) y[i] = 2.0f * x[i];\n"
    "}\n";

// Answers every request with a fixed text, or the configured failure, and counts the calls.
class ScriptedClient : public LlmClient {
 public:
  std::string answer;
  std::string error;
  bool throw_instead = false;
  std::atomic<int> calls{0};
  std::mutex mutex;
  std::vector<ChatMessage> last_messages;
  LlmRequestOptions last_options;

  LlmResponse complete(const std::vector<ChatMessage>& messages, const LlmRequestOptions& options) override {
    ++calls;
    {
      std::lock_guard<std::mutex> lock(mutex);
      last_messages = messages;
      last_options = options;
    }
    if (throw_instead) throw std::runtime_error("connection refused by 127.0.0.1:9");
    LlmResponse response;
    response.text = answer;
    response.error = error;
    response.model = "scripted-model";
    response.prompt_tokens = 1234;
    response.completion_tokens = 56;
    response.latency_seconds = 0.25;
    return response;
  }
};

MutationRequest request_for(const std::string& source) {
  Task task;
  task.name = "scale";
  task.description = "y = 2 x";
  task.tensors = {{"x", DType::float32, {"N"}, TensorRole::input, {}},
                  {"y", DType::float32, {"N"}, TensorRole::output, {}}};
  task.timing_sizes = {"timing", {{"N", 1 << 20}}};
  task.work = {"N", "8*N"};
  MutationRequest request;
  request.shared_task = std::make_shared<const Task>(std::move(task));
  request.parent.language = "cuda";
  request.parent.source = source;
  request.parent.lineage.generation = 3;
  request.generation = 4;
  request.island = 2;
  request.seed = 42;
  return request;
}

}  // namespace

TEST_CASE("LlmMutator turns a diff answer into a child and records the exchange", "[llm_mutator]") {
  auto client = std::make_shared<ScriptedClient>();
  client->answer =
      "Use a multiply-add free form.\n<<<<<<< SEARCH\n  if (i < n) y[i] = 2.0f * x[i];\n=======\n"
      "  if (i < n) y[i] = x[i] + x[i];\n>>>>>>> REPLACE\n";
  LlmMutatorOptions options;
  options.full_weight = 0.0;
  options.crossover_weight = 0.0;
  options.request.model = "requested-model";
  options.request.temperature = 0.3;
  LlmMutator mutator(client, options);
  MutationRequest request = request_for(kParentSource);

  auto proposals = mutator.propose(request);
  REQUIRE(proposals.size() == 1);
  const Proposal& p = proposals[0];
  INFO(p.failure);
  REQUIRE(p.candidate);
  CHECK(p.mutation == "llm_diff");
  CHECK(p.candidate->lineage.origin == "llm_diff");
  CHECK(p.candidate->lineage.parent_ids == std::vector<std::string>{request.parent.id()});
  CHECK(p.candidate->lineage.island == 2);
  CHECK(p.candidate->lineage.generation == 4);
  CHECK(p.candidate->language == "cuda");
  CHECK(p.candidate->source.find("y[i] = x[i] + x[i];") != std::string::npos);
  CHECK(p.response == client->answer);
  CHECK(p.model == "scripted-model");
  CHECK(p.prompt_tokens == 1234);
  CHECK(p.completion_tokens == 56);
  CHECK(p.latency_seconds == Approx(0.25));
  CHECK(p.skill == "unspecified");  // the answer names no skill
  CHECK(client->last_options.model == "requested-model");
  CHECK(client->last_options.temperature == Approx(0.3));

  // The recorded prompt is exactly what the client received.
  auto recorded = nlohmann::json::parse(p.prompt);
  REQUIRE(recorded.size() == client->last_messages.size());
  for (std::size_t i = 0; i < recorded.size(); ++i) {
    CHECK(recorded[i]["role"] == client->last_messages[i].role);
    CHECK(recorded[i]["content"] == client->last_messages[i].content);
  }
  CHECK(client->last_messages[1].content.find("<<<<<<< SEARCH") != std::string::npos);

  // A program the run already has is not proposed again.
  request.is_known = [&](const Candidate& candidate) { return candidate.source == p.candidate->source; };
  Proposal duplicate = mutator.propose(request).at(0);
  CHECK_FALSE(duplicate.candidate);
  CHECK(duplicate.failure == "the answer's program is already in the run (a duplicate of an earlier program)");
  // It is handed back, so that the engine can name the stored program it equals.
  REQUIRE(duplicate.known_candidate);
  CHECK(duplicate.known_candidate->source == p.candidate->source);
}

TEST_CASE("LlmMutator reports client errors, exceptions and bad answers as failures", "[llm_mutator]") {
  auto client = std::make_shared<ScriptedClient>();
  LlmMutatorOptions options;
  options.diff_weight = 0.0;
  options.crossover_weight = 0.0;
  LlmMutator mutator(client, options);
  MutationRequest request = request_for(kParentSource);

  client->answer = "I think shared memory would help here.";
  Proposal prose = mutator.propose(request).at(0);
  CHECK_FALSE(prose.candidate);
  CHECK(prose.mutation == "llm_full");
  CHECK(prose.failure == "no code in the response");
  CHECK(prose.response == client->answer);
  CHECK_FALSE(prose.prompt.empty());

  client->error = "HTTP 500 after 3 retries";
  Proposal failed = mutator.propose(request).at(0);
  CHECK(failed.failure == "LLM request failed: HTTP 500 after 3 retries");
  CHECK(failed.model == "scripted-model");

  client->throw_instead = true;
  Proposal thrown = mutator.propose(request).at(0);
  CHECK(thrown.failure == "LLM request failed: connection refused by 127.0.0.1:9");
  CHECK(thrown.latency_seconds >= 0.0);
  CHECK(client->calls == 3);
}

TEST_CASE("edit modes follow the weights, reproducibly, and crossover needs a partner", "[llm_mutator]") {
  auto client = std::make_shared<ScriptedClient>();
  LlmMutatorOptions options;
  options.full_weight = 1.0;
  options.diff_weight = 2.0;
  options.crossover_weight = 1.0;
  options.seed = 7;
  LlmMutator mutator(client, options);
  MutationRequest request = request_for(kParentSource);

  // Without a second program, crossover is never chosen.
  std::map<EditMode, int> counts;
  for (std::uint64_t seed = 0; seed < 2000; ++seed) {
    request.seed = seed;
    counts[mutator.choose_mode(request)]++;
  }
  CHECK(counts[EditMode::crossover] == 0);
  CHECK(counts[EditMode::diff] > 1200);  // expected 1333 of 2000
  CHECK(counts[EditMode::diff] < 1470);

  Candidate other;
  other.language = "cuda";
  other.source = "// @launch other<<<1, 1>>>(x, y, N)\nextern \"C\" __global__ void other() {}\n";
  request.inspirations.push_back({other, Evaluation{}, "top"});
  counts.clear();
  for (std::uint64_t seed = 0; seed < 2000; ++seed) {
    request.seed = seed;
    counts[mutator.choose_mode(request)]++;
  }
  CHECK(counts[EditMode::crossover] > 400);  // expected 500 of 2000
  CHECK(counts[EditMode::crossover] < 600);
  request.seed = 99;
  CHECK(mutator.choose_mode(request, 0) == mutator.choose_mode(request, 0));

  // A crossover takes the inspiration as the second parent.
  client->answer = "```cuda\n" + other.source + "// combined\n```";
  Proposal crossover = mutator.propose_with_mode(request, EditMode::crossover);
  REQUIRE(crossover.candidate);
  CHECK(crossover.mutation == "llm_crossover");
  CHECK(crossover.candidate->lineage.parent_ids ==
        std::vector<std::string>{request.parent.id(), other.id()});
  CHECK(client->last_messages[1].content.find("## Second program") != std::string::npos);
}

TEST_CASE("LlmMutator is usable from several threads at once", "[llm_mutator]") {
  auto client = std::make_shared<ScriptedClient>();
  client->answer = "```cuda\n" + kParentSource + "// variant\n```";
  LlmMutator mutator(client);
  std::atomic<int> children{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      MutationRequest request = request_for(kParentSource);
      for (int i = 0; i < 10; ++i) {
        request.seed = static_cast<std::uint64_t>(t * 100 + i);
        for (const auto& p : mutator.propose(request))
          if (p.candidate) ++children;
      }
    });
  for (auto& thread : threads) thread.join();
  CHECK(client->calls == 40);
  CHECK(children == 40);
}

TEST_CASE("LlmMutator rejects bad options", "[llm_mutator]") {
  REQUIRE_THROWS_AS(LlmMutator(nullptr), ValidationError);
  LlmMutatorOptions options;
  options.full_weight = options.diff_weight = options.crossover_weight = 0.0;
  REQUIRE_THROWS_AS(LlmMutator(std::make_shared<ScriptedClient>(), options), ValidationError);
  options.full_weight = -1.0;
  REQUIRE_THROWS_AS(LlmMutator(std::make_shared<ScriptedClient>(), options), ValidationError);
}

TEST_CASE("LlmMutator writes children in the request's language: a CUDA parent gets a whole Triton file",
          "[llm_mutator]") {
  const std::string triton =
      "# @launch scale[ceil_div(N, 1024)](x, y, N, BLOCK=1024) num_warps=4 num_stages=3\n"
      "import triton\nimport triton.language as tl\n\n\n@triton.jit\n"
      "def scale(x, y, n, BLOCK: tl.constexpr):\n"
      "    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n"
      "    tl.store(y + offsets, 2.0 * tl.load(x + offsets, mask=offsets < n), mask=offsets < n)\n";
  auto client = std::make_shared<ScriptedClient>();
  client->answer = "The same kernel in Triton.\n```python\n" + triton + "```\n";
  LlmMutatorOptions options;
  options.full_weight = 0.0;  // diff only: a translation still asks for a whole file
  options.crossover_weight = 0.0;
  LlmMutator mutator(client, options);
  MutationRequest request = request_for(kParentSource);
  request.language = "triton";
  CHECK(mutator.choose_mode(request) == EditMode::full);
  const Proposal proposal = mutator.propose(request).at(0);
  INFO(proposal.failure);
  REQUIRE(proposal.candidate);
  CHECK(proposal.mutation == "llm_full");
  CHECK(proposal.candidate->language == "triton");
  CHECK(proposal.candidate->source == triton);
  CHECK(client->last_messages[1].content.find("write yours in Triton") != std::string::npos);

  // An answer in CUDA is refused, with both languages named.
  client->answer = "```cuda\n" + kParentSource + "```\n";
  const Proposal refused = mutator.propose(request).at(0);
  CHECK_FALSE(refused.candidate);
  CHECK(refused.failure.find("but a Triton program was asked for") != std::string::npos);
}

TEST_CASE("LlmMutator records the skill the answer names, also when it holds no program", "[llm_mutator]") {
  auto client = std::make_shared<ScriptedClient>();
  client->answer =
      "Fewer operations.\n<<<<<<< SEARCH\n  if (i < n) y[i] = 2.0f * x[i];\n=======\n"
      "  if (i < n) y[i] = x[i] + x[i];\n>>>>>>> REPLACE\n<skill>strength_reduction</skill>\n";
  LlmMutatorOptions options;
  options.full_weight = 0.0;
  options.crossover_weight = 0.0;
  LlmMutator mutator(client, options);
  MutationRequest request = request_for(kParentSource);
  const Proposal with_tag = mutator.propose(request).at(0);
  REQUIRE(with_tag.candidate);
  CHECK(with_tag.skill == "strength_reduction");
  CHECK(with_tag.candidate->source.find("<skill>") == std::string::npos);
  // The prompt asks for the tag.
  CHECK(client->last_messages[1].content.find("<skill>name</skill>") != std::string::npos);

  client->answer = "I would vectorise.\n<skill>vectorize_memory_access</skill>";
  const Proposal prose = mutator.propose(request).at(0);
  CHECK_FALSE(prose.candidate);
  CHECK(prose.skill == "vectorize_memory_access");
  client->answer = "<<<<<<< SEARCH\nnothing like this\n=======\nx\n>>>>>>> REPLACE\n<skill>a b c d</skill>";
  CHECK(mutator.propose(request).at(0).skill == "a_b_c_d");
  client->answer = "garbled <skill>!!</skill";
  CHECK(mutator.propose(request).at(0).skill == "unspecified");
}

TEST_CASE("LlmMutator takes a whole program in a language the request also offers: a kernel in a ModelNew run",
          "[llm_mutator]") {
  const std::string model_new =
      "import torch\nimport torch.nn as nn\n\n\nclass ModelNew(nn.Module):\n"
      "    def forward(self, x):\n        return 2.0 * x\n";
  auto client = std::make_shared<ScriptedClient>();
  LlmMutatorOptions options;
  options.full_weight = 1.0;
  options.diff_weight = 0.0;
  options.crossover_weight = 0.0;
  LlmMutator mutator(client, options);
  MutationRequest request = request_for(model_new);
  request.parent.language = "pytorch";
  request.language = "pytorch";
  request.other_languages = {"cuda"};

  // A kernel with its launch plan: a CUDA child in the ModelNew run, the alternative named in the prompt.
  client->answer = "A kernel instead.\n```cuda\n" + kParentSource + "```\n";
  const Proposal kernel = mutator.propose(request).at(0);
  INFO(kernel.failure);
  REQUIRE(kernel.candidate);
  CHECK(kernel.candidate->language == "cuda");
  CHECK(kernel.candidate->source == kParentSource);
  CHECK(kernel.mutation == "llm_full");
  CHECK(client->last_messages[0].content.find("You may instead answer with a whole CUDA") != std::string::npos);
  CHECK(client->last_messages[0].content.find("@launch") != std::string::npos);

  // A ModelNew answer stays in the run's own language.
  const std::string rewritten = model_new + "\n# scaled once\n";
  client->answer = "```python\n" + rewritten + "```\n";
  const Proposal own = mutator.propose(request).at(0);
  REQUIRE(own.candidate);
  CHECK(own.candidate->language == "pytorch");

  // A kernel without a launch plan is not the other format: the ModelNew parse's failure stands.
  client->answer = "```cuda\nextern \"C\" __global__ void scale(float* y) { y[0] = 1.0f; }\n```\n";
  const Proposal planless = mutator.propose(request).at(0);
  CHECK_FALSE(planless.candidate);
  CHECK(planless.failure.find("ModelNew") != std::string::npos);

  // Without the offer, a kernel answer to a ModelNew request is refused.
  request.other_languages.clear();
  client->answer = "```cuda\n" + kParentSource + "```\n";
  const Proposal refused = mutator.propose(request).at(0);
  CHECK_FALSE(refused.candidate);
  CHECK(client->last_messages[0].content.find("You may instead answer") == std::string::npos);

  // The reverse offer: a ModelNew file answering a CUDA request.
  MutationRequest kernel_request = request_for(kParentSource);
  kernel_request.language = "cuda";
  kernel_request.other_languages = {"pytorch"};
  client->answer = "```python\n" + rewritten + "```\n";
  const Proposal host = mutator.propose(kernel_request).at(0);
  INFO(host.failure);
  REQUIRE(host.candidate);
  CHECK(host.candidate->language == "pytorch");
  CHECK(client->last_messages[0].content.find("You may instead answer with a whole ModelNew file") != std::string::npos);
}
