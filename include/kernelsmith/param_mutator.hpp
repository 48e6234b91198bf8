// ParamMutator: the built-in mutator that needs no LLM. It varies the tunable parameters a candidate
// declares (`// @tune NAME = value in {v1, v2, ...}`, `# @tune ...` in a Triton file), which the harness
// passes to the compiler as macros (to a Triton launch as constexprs), and rejects combinations that
// break a `@require expr` constraint before anything is compiled. The plan is read in the candidate's
// language (its row in language.hpp gives the comment marker and the launch syntax).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "kernelsmith/export.hpp"
#include "kernelsmith/launch_plan.hpp"
#include "kernelsmith/mutator.hpp"

namespace kernelsmith {

struct ParamMutatorOptions {
  /// Most parameters changed by one mutation (1 or 2 are drawn, never more than there are).
  int max_changes = 2;
  /// Chance that a changed parameter moves to a neighbouring allowed value (in declaration order)
  /// rather than to any other allowed value.
  double neighbour_bias = 0.75;
  /// Random draws tried before falling back to enumerating the whole space (when it is small).
  int max_attempts = 64;
  /// Spaces of at most this many combinations are enumerated when the random draws find nothing.
  std::int64_t enumeration_limit = 4096;
  /// Candidates per request.
  int proposals_per_request = 1;
  /// Check that each launch's block fits MAX_THREADS_PER_BLOCK (when the device reports it), next to
  /// the @require lines.
  bool check_block_size = true;
};

/// The names and values of a source's tunables.
using ParamValues = std::map<std::string, std::int64_t>;

class KERNELSMITH_API ParamMutator : public Mutator {
 public:
  explicit ParamMutator(ParamMutatorOptions options = {});

  /// Mutation (1-2 parameters changed) or, with a second parent declaring the same parameters,
  /// crossover (each value from either parent, then mutated if the mix equals a parent). Proposals have
  /// mutation "param"; a request with nothing new to offer gets one proposal whose `failure` says why.
  /// When the parent's whole space was enumerated (at most `enumeration_limit` combinations) and every
  /// combination is in the run or breaks a constraint, that proposal's `exhausted_ids` names the parent
  /// and the programs of the run in the same space.
  std::vector<Proposal> propose(const MutationRequest& request) override;
  std::string name() const override { return "param"; }
  /// True when the candidate's plan parses (in its language) and declares a `@tune` parameter with two or
  /// more values.
  bool can_mutate(const Candidate& parent) const override;

  const ParamMutatorOptions& options() const { return options_; }

  /// The source, written in `language`, with the `@tune` lines' current values replaced. Throws
  /// ValidationError for an unknown parameter, a value outside its allowed set or an unknown language.
  static std::string rewrite(const std::string& source, const ParamValues& values,
                             const std::string& language = "cuda");
  /// The parameters' current values in a source written in `language`. Throws PlanError for a malformed
  /// plan, ValidationError for an unknown language.
  static ParamValues values_of(const std::string& source, const std::string& language = "cuda");
  /// Whether the values satisfy every @require (and the block size check) under the task's timing sizes
  /// and the device's attributes. A requirement over an attribute the device does not report (0) is not
  /// checked. `reason` gets the first broken requirement.
  bool satisfies(const LaunchPlan& plan, const ParamValues& values, const MutationRequest& request,
                 std::string* reason = nullptr) const;

 private:
  ParamMutatorOptions options_;
};

}  // namespace kernelsmith
