#include "kernelsmith/llm_mutator.hpp"

#include <chrono>
#include <cmath>

#include <fmt/format.h>

#include "detail/random.hpp"
#include "kernelsmith/error.hpp"
#include "kernelsmith/language.hpp"

namespace kernelsmith {

namespace {

// The program crossover combines with the parent: the engine's second parent, else the first
// inspiration that is a different program.
std::optional<Candidate> crossover_partner(const MutationRequest& request) {
  if (request.second_parent) return request.second_parent;
  const std::string parent_id = request.parent.id();
  for (const auto& inspiration : request.inspirations)
    if (inspiration.candidate.id() != parent_id) return inspiration.candidate;
  return std::nullopt;
}

bool translates(const MutationRequest& request) {
  const std::string parent_language = request.parent.language.empty() ? "cuda" : request.parent.language;
  return request.child_language() != parent_language;
}

}  // namespace

std::string mutation_name(EditMode mode) {
  switch (mode) {
    case EditMode::full: return "llm_full";
    case EditMode::diff: return "llm_diff";
    case EditMode::crossover: return "llm_crossover";
  }
  return "llm_full";
}

LlmMutator::LlmMutator(std::shared_ptr<LlmClient> client, LlmMutatorOptions options)
    : client_(std::move(client)), options_(std::move(options)), builder_(options_.prompt) {
  if (!client_) throw ValidationError("LlmMutator: the client is null; pass an LlmClient");
  const double weights[] = {options_.full_weight, options_.diff_weight, options_.crossover_weight};
  for (double w : weights)
    if (!(w >= 0.0) || !std::isfinite(w))
      throw ValidationError(fmt::format("LlmMutatorOptions: edit mode weights must be finite and >= 0 (got full "
                                        "{}, diff {}, crossover {})",
                                        options_.full_weight, options_.diff_weight, options_.crossover_weight));
  if (options_.full_weight + options_.diff_weight + options_.crossover_weight <= 0.0)
    throw ValidationError("LlmMutatorOptions: at least one edit mode weight must be positive");
  if (options_.proposals_per_request < 1)
    throw ValidationError("LlmMutatorOptions.proposals_per_request must be >= 1");
}

EditMode LlmMutator::choose_mode(const MutationRequest& request, int index) const {
  // A child in another language than its parent is a translation: a whole new file, never edits of the parent.
  if (translates(request)) return EditMode::full;
  double full = options_.full_weight, diff = options_.diff_weight;
  double crossover = crossover_partner(request) ? options_.crossover_weight : 0.0;
  double total = full + diff + crossover;
  if (total <= 0.0) return EditMode::full;  // only crossover was wanted and there is no partner
  // splitmix64 decorrelates the mutator's seed, the request's seed and the proposal index.
  using detail::splitmix64;
  const std::uint64_t bits = splitmix64(splitmix64(options_.seed) ^ splitmix64(request.seed + 0x51ed2701ULL) ^
                                        splitmix64(static_cast<std::uint64_t>(index) + 0x2545f491ULL));
  double x = detail::unit_interval(bits) * total;
  if (x < full) return EditMode::full;
  if (x < full + diff) return EditMode::diff;
  return EditMode::crossover;
}

std::vector<Proposal> LlmMutator::propose(const MutationRequest& request) {
  std::vector<Proposal> proposals;
  for (int i = 0; i < options_.proposals_per_request; ++i)
    proposals.push_back(propose_with_mode(request, choose_mode(request, i), i));
  return proposals;
}

Proposal LlmMutator::propose_with_mode(const MutationRequest& request, EditMode mode, int index) {
  Proposal proposal;
  proposal.model = options_.request.model;

  // Edits of a parent in another language than the child's cannot make the child: write a whole file.
  if (mode == EditMode::diff && translates(request)) mode = EditMode::full;
  // Crossover needs a second program; without one it becomes a whole-file rewrite.
  const MutationRequest* effective = &request;
  MutationRequest with_partner;
  if (mode == EditMode::crossover && !request.second_parent) {
    auto partner = crossover_partner(request);
    if (partner) {
      with_partner = request;
      with_partner.second_parent = partner;
      effective = &with_partner;
    } else {
      mode = EditMode::full;
    }
  }
  proposal.mutation = mutation_name(mode);

  BuiltPrompt prompt;
  try {
    prompt = builder_.build(*effective, mode);
  } catch (const std::exception& e) {
    proposal.failure = fmt::format("could not build the prompt: {}", e.what());
    return proposal;
  }
  proposal.prompt = prompt.messages_json();

  LlmRequestOptions request_options = options_.request;
  request_options.seed =
      detail::splitmix64(options_.seed ^ detail::splitmix64(request.seed) ^ static_cast<std::uint64_t>(index));

  LlmResponse response;
  const auto start = std::chrono::steady_clock::now();
  try {
    response = client_->complete(prompt.messages, request_options);
  } catch (const std::exception& e) {
    response.error = e.what();
  } catch (...) {
    response.error = "unknown exception from the LLM client";
  }
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  proposal.response = response.text;
  if (!response.model.empty()) proposal.model = response.model;
  proposal.prompt_tokens = response.prompt_tokens;
  proposal.completion_tokens = response.completion_tokens;
  proposal.llm_attempts = std::move(response.attempts);
  // The client's own measure when it has one (it excludes queueing in the client), else ours.
  proposal.latency_seconds = response.latency_seconds > 0.0 ? response.latency_seconds : elapsed;

  if (!response.error.empty()) {
    proposal.failure = "LLM request failed: " + response.error;
    return proposal;
  }

  const Candidate& parent = request.parent;
  std::string child_language = request.child_language();
  ParsedResponse parsed = parse_response(response.text, mode, parent.source, child_language);
  if (!parsed.ok) {
    // A whole program in a language the request also takes (a kernel and its plan in a run of ModelNew files,
    // a ModelNew file beside a kernel: the parser already requires its class ModelNew); a kernel without its
    // launch line is not that format, and the first failure stands.
    for (const std::string& other : request.other_languages) {
      ParsedResponse in_other = parse_response(response.text, EditMode::full, parent.source, other);
      const KernelLanguage* row = find_kernel_language(other);
      const bool has_plan = (row != nullptr && row->host_code) || contains_launch_line(in_other.source);
      if (in_other.ok && has_plan) {
        parsed = std::move(in_other);
        child_language = other;
        break;
      }
    }
  }
  proposal.skill = parsed.skill;
  if (!parsed.ok) {
    proposal.failure = parsed.failure;
    return proposal;
  }
  // The parser may read a whole file where a diff was asked for, or the reverse; name what was done.
  if (mode != EditMode::crossover) proposal.mutation = parsed.kind == "diff" ? "llm_diff" : "llm_full";

  Candidate child;
  const bool other_language = child_language != request.child_language();
  child.language = other_language ? child_language : request.language.empty() ? parent.language : request.language;
  child.source = parsed.source;
  child.lineage.parent_ids.push_back(parent.id());
  if (mode == EditMode::crossover) child.lineage.parent_ids.push_back(effective->second_parent->id());
  child.lineage.island = request.island;
  child.lineage.generation = request.generation;
  child.lineage.origin = proposal.mutation;
  if (request.is_known && request.is_known(child)) {
    proposal.failure = "the answer's program is already in the run (a duplicate of an earlier program)";
    proposal.known_candidate = std::move(child);
    return proposal;
  }
  proposal.candidate = std::move(child);
  return proposal;
}

}  // namespace kernelsmith
