// Mutator: given a parent and feedback, proposes revised candidates. Built-ins: the parameter mutator
// (tunable annotations, no LLM) and the LLM mutator (prompt builder + response parser + a client).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "kernelsmith/candidate.hpp"
#include "kernelsmith/device.hpp"
#include "kernelsmith/evaluation.hpp"
#include "kernelsmith/experience.hpp"
#include "kernelsmith/export.hpp"
#include "kernelsmith/llm_attempt.hpp"
#include "kernelsmith/task.hpp"

namespace kernelsmith {

/// A recent attempt on the same parent (short-term memory), so failed edits are not repeated.
struct Attempt {
  std::string child_id;
  std::string mutation;
  Status status = Status::ok;
  std::string summary;  ///< the evaluation's one-line message
  double speedup = 0.0;
  /// The skill the mutator said it applied (Proposal::skill); empty when it named none.
  std::string skill;
};

/// A program shown to the mutator for inspiration, with why it was chosen.
struct Inspiration {
  Candidate candidate;
  Evaluation evaluation;
  std::string reason;  ///< "island_best", "top", "nearby_cell", "diverse"
};

struct KERNELSMITH_API MutationRequest {
  /// The task being optimised, shared read-only by every request of a run: the engine makes it once,
  /// and a request (and each copy of it) keeps it alive for as long as the request lives.
  std::shared_ptr<const Task> shared_task;
  Candidate parent;
  /// The kernel language the children must be written in: the engine sets the run's language
  /// (EvolutionConfig::language), which may differ from the parent's (a Triton run starts from the CUDA
  /// reference). Empty: the parent's language.
  std::string language;
  /// Languages the answer may be written in instead of `language`, each as a whole program (a run of mixed
  /// formats): in a run of ModelNew files (KernelBench's format) the engine offers the evaluator backend's
  /// device-code language, so that a child may be a kernel with its launch plan; the child then takes the
  /// language its answer is written in (docs/kernelbench-modelnew.md, "Cold start"). Empty: `language` only.
  std::vector<std::string> other_languages;
  std::optional<Evaluation> parent_evaluation;
  /// A second parent for crossover, when the engine offers one.
  std::optional<Candidate> second_parent;
  std::vector<Inspiration> inspirations;
  std::vector<Attempt> recent_attempts;
  /// Experience items the engine retrieved from its memory for this request, best first (docs/memory.md):
  /// lessons of earlier steps, of this run and others, with their learned values.
  std::vector<RetrievedItem> experience;
  DeviceInfo device;
  std::uint64_t seed = 0;
  int island = 0;
  /// The children's generation (the parent's + 1).
  int generation = 0;
  /// Set by the engine: true when the candidate's code (normalised: comments and layout ignored) is
  /// already in the run, so that a mutator can avoid proposing it again. Thread-safe; may be empty.
  std::function<bool(const Candidate&)> is_known;

  /// The task. Throws ValidationError when the request carries none (`shared_task` is null).
  const Task& task() const;
  /// The language of the children: `language`, else the parent's, else "cuda".
  std::string child_language() const;
};

/// One proposal. When `candidate` is empty, `failure` says why (garbled response, diff matched nothing,
/// invalid parameter combination, client error): the engine records the step and goes on.
struct Proposal {
  std::optional<Candidate> candidate;
  std::string mutation;  ///< "param", "llm_full", "llm_diff", "llm_crossover", ... (kOrigins)
  std::string failure;
  /// The skill applied (a skill bank name, or the model's own name for its technique): what the experience
  /// memory learns the value of. The LLM mutator reads it from the answer's <skill> tag and says "unspecified"
  /// when there is none; empty when the mutator does not say (recorded as "unspecified").
  std::string skill;
  /// The program a mutator withheld because MutationRequest::is_known said the run holds it already
  /// (`candidate` is then empty): the engine records which stored program it equals.
  std::optional<Candidate> known_candidate;
  /// For the record (training data): the exact messages sent (JSON array), the response, the model.
  std::string prompt;
  std::string response;
  std::string model;
  std::int64_t prompt_tokens = 0;
  std::int64_t completion_tokens = 0;
  double latency_seconds = 0.0;
  /// The HTTP attempts of the model call, in order (empty for mutators that call no model, and for clients
  /// that do not report them).
  std::vector<LlmAttempt> llm_attempts;
  /// Ids of programs from which the mutator can propose nothing new for the rest of the run: the
  /// parent, when every variant it could make is already in the run or breaks a constraint, and the
  /// programs it knows to offer the same variants. The engine no longer picks them as parents; when no
  /// program is left to pick, the run stops with "no_new_candidates".
  std::vector<std::string> exhausted_ids;
};

class KERNELSMITH_API Mutator {
 public:
  virtual ~Mutator() = default;
  /// Thread-safe: the engine calls it from several threads when several mutations are in flight.
  virtual std::vector<Proposal> propose(const MutationRequest& request) = 0;
  virtual std::string name() const = 0;
  /// Asks the calls to propose() in flight to give up soon (closing their connections, skipping
  /// retries): the engine calls it when a run must end (stop(), wall time) while proposals are
  /// outstanding, and stops waiting for them a few seconds later. Later calls to propose() are not
  /// affected. Thread-safe; returns at once. Default: nothing (the engine abandons what does not return).
  virtual void cancel() {}
  /// Whether the mutator can work from this parent at all (the parameter mutator needs `// @tune`
  /// lines with a choice). The engine picks parents only among the programs it accepts and asks once
  /// per program, so the answer must depend on the candidate alone. Thread-safe. Default: every one.
  virtual bool can_mutate(const Candidate& parent) const {
    static_cast<void>(parent);
    return true;
  }
};

}  // namespace kernelsmith
