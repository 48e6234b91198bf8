// LlmMutator: the Mutator that asks a language model for a revision (docs/llm.md).
//
// Each proposal picks an edit mode (whole file, SEARCH/REPLACE diff, crossover of two parents), builds
// the prompt, calls the pluggable LlmClient, parses the answer and returns the candidate or the reason
// there is none, always with the exact messages, the answer, the model, the tokens and the latency.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "kernelsmith/export.hpp"
#include "kernelsmith/mutator.hpp"
#include "kernelsmith/prompt_builder.hpp"
#include "kernelsmith/response_parser.hpp"

namespace kernelsmith {

/// What one request asks of the model.
struct LlmRequestOptions {
  std::string model;  ///< empty: the client's default
  double temperature = 0.8;
  std::int64_t max_tokens = 8192;  ///< completion tokens; 0: the server's default
  double timeout_seconds = 300.0;
  std::uint64_t seed = 0;  ///< passed on to servers that honour it
};

/// The model's answer. A non-empty `error` means there is no usable answer (`text` may hold a partial one).
struct LlmResponse {
  std::string text;
  std::string model;  ///< the model that answered, as the server names it
  std::int64_t prompt_tokens = 0;
  std::int64_t completion_tokens = 0;
  double latency_seconds = 0.0;
  std::string error;
  /// Each HTTP attempt the request took (retries included), when the client reports them.
  std::vector<LlmAttempt> attempts;
};

/// The seam to any LLM: an HTTP client, a local model, a scripted test double. Python subclasses and
/// Python callables plug in through the bindings (kernelsmith.llm).
class KERNELSMITH_API LlmClient {
 public:
  virtual ~LlmClient() = default;
  /// Thread-safe: called from several threads when several mutations are in flight. May throw; the
  /// mutator turns an exception into a failed proposal.
  virtual LlmResponse complete(const std::vector<ChatMessage>& messages, const LlmRequestOptions& options) = 0;
  /// Asks the requests in flight to give up soon (LlmMutator::cancel, Mutator::cancel). Thread-safe;
  /// returns at once. Default: nothing.
  virtual void cancel() {}
};

struct LlmMutatorOptions {
  /// Relative weights of the edit modes (normalised; crossover counts only when a second program is
  /// available: the request's second parent or, failing that, its first inspiration).
  double full_weight = 0.3;
  double diff_weight = 0.6;
  double crossover_weight = 0.1;
  /// Mixed with each request's seed: the same seeds give the same modes.
  std::uint64_t seed = 0;
  /// Proposals per request (each its own call to the client).
  int proposals_per_request = 1;
  LlmRequestOptions request;
  PromptBuilderOptions prompt;
};

class KERNELSMITH_API LlmMutator : public Mutator {
 public:
  /// Throws ValidationError for a null client, negative weights (or all zero), a bad template.
  LlmMutator(std::shared_ptr<LlmClient> client, LlmMutatorOptions options = {});

  std::vector<Proposal> propose(const MutationRequest& request) override;
  std::string name() const override { return "llm"; }
  /// Passes the cancellation on to the client (LlmClient::cancel).
  void cancel() override { client_->cancel(); }

  /// The mode proposal `index` of this request gets (deterministic in the seeds); always full when the
  /// request asks for children in another language than the parent's (MutationRequest::language).
  EditMode choose_mode(const MutationRequest& request, int index = 0) const;

  /// One proposal in a given mode. Crossover without a second program falls back to a full rewrite
  /// (noted in the proposal's failure only if it then fails), and so does diff when the child's language is
  /// not the parent's. The child is in the request's language; the answer is read in it.
  Proposal propose_with_mode(const MutationRequest& request, EditMode mode, int index = 0);

  const LlmMutatorOptions& options() const { return options_; }
  const PromptBuilder& prompt_builder() const { return builder_; }
  const std::shared_ptr<LlmClient>& client() const { return client_; }

 private:
  std::shared_ptr<LlmClient> client_;
  LlmMutatorOptions options_;
  PromptBuilder builder_;
};

/// The lineage origin ("llm_full", "llm_diff", "llm_crossover") of a mode.
KERNELSMITH_API std::string mutation_name(EditMode mode);

}  // namespace kernelsmith
