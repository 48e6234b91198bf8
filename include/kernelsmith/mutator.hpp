// Mutator: given a parent and feedback, proposes revised candidates. Built-ins: the parameter mutator
// (tunable annotations, no LLM) and the LLM mutator (prompt builder + response parser + a client).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "kernelsmith/candidate.hpp"
#include "kernelsmith/device.hpp"
#include "kernelsmith/evaluation.hpp"
#include "kernelsmith/export.hpp"
#include "kernelsmith/task.hpp"

namespace kernelsmith {

/// A recent attempt on the same parent (short-term memory), so failed edits are not repeated.
struct Attempt {
  std::string child_id;
  std::string mutation;
  Status status = Status::ok;
  std::string summary;  ///< the evaluation's one-line message
  double speedup = 0.0;
};

/// A program shown to the mutator for inspiration, with why it was chosen.
struct Inspiration {
  Candidate candidate;
  Evaluation evaluation;
  std::string reason;  ///< "island_best", "top", "nearby_cell", "diverse"
};

struct MutationRequest {
  Task task;
  Candidate parent;
  std::optional<Evaluation> parent_evaluation;
  /// A second parent for crossover, when the engine offers one.
  std::optional<Candidate> second_parent;
  std::vector<Inspiration> inspirations;
  std::vector<Attempt> recent_attempts;
  DeviceInfo device;
  std::uint64_t seed = 0;
  int island = 0;
  /// The children's generation (the parent's + 1).
  int generation = 0;
  /// Set by the engine: true when the candidate's code (normalised: comments and layout ignored) is
  /// already in the run, so that a mutator can avoid proposing it again. Thread-safe; may be empty.
  std::function<bool(const Candidate&)> is_known;
};

/// One proposal. When `candidate` is empty, `failure` says why (garbled response, diff matched nothing,
/// invalid parameter combination, client error): the engine records the step and goes on.
struct Proposal {
  std::optional<Candidate> candidate;
  std::string mutation;  ///< "param", "llm_full", "llm_diff", "llm_crossover", ...
  std::string failure;
  /// For the record (training data): the exact messages sent (JSON array), the response, the model.
  std::string prompt;
  std::string response;
  std::string model;
  std::int64_t prompt_tokens = 0;
  std::int64_t completion_tokens = 0;
  double latency_seconds = 0.0;
};

class KERNELSMITH_API Mutator {
 public:
  virtual ~Mutator() = default;
  /// Thread-safe: the engine calls it from several threads when several mutations are in flight.
  virtual std::vector<Proposal> propose(const MutationRequest& request) = 0;
  virtual std::string name() const = 0;
};

}  // namespace kernelsmith
