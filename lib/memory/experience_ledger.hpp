// What the engine keeps to learn from its steps (docs/memory.md, "How a run learns"): the context of each
// request (its stage, the parent's feedback, the items retrieved into it), the links from each child to the
// step that made it, which carry a step's reward up to the items retrieved into its ancestors' steps, and, on
// resume, the replay of a run's stored experience into a memory that has none of it.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "kernelsmith/experience.hpp"
#include "kernelsmith/mutator.hpp"
#include "kernelsmith/run_store.hpp"

namespace kernelsmith::detail {

/// The step a request makes, as the memory sees it.
struct StepContext {
  Stage stage = Stage::draft;
  Features feedback;  ///< request_feedback
  double parent_speedup = 0.0;
  std::string parent_id;
  std::vector<Retrieval> retrieved;  ///< the items shown to the mutator, best first
};

class ExperienceLedger {
 public:
  /// `origin` names the run in the items it records ("run 3 of runs.db").
  ExperienceLedger(std::shared_ptr<ExperienceMemory> memory, const Task& task, std::string origin);

  /// The context of a request whose parent is `parent_id`, with nothing retrieved yet.
  StepContext context(const MutationRequest& request, const std::string& parent_id) const;
  /// Retrieves up to `count` items into request.experience and notes them in the context.
  void retrieve(MutationRequest& request, StepContext& context, std::size_t count) const;

  /// Learns from an evaluated child: records its item in the memory, crediting the items its step followed (those
  /// retrieved into it whose skill it applied; none when it names no skill) with weight 1, and those the steps of
  /// the same stage that made its parent, grandparent, ... followed (the memory's discount and horizon). Returns
  /// the item as recorded (id and reward set).
  ExperienceItem learn(const StepContext& context, const std::string& child_id, const std::string& skill,
                       const std::string& edit, const Evaluation& child, std::int64_t step_id);

  /// On resume: the links from the run's steps and experience records, and the records replayed into the memory
  /// when it holds no item of this run (a memory in the process), the credits included.
  void restore(const std::vector<StepRecord>& steps, const std::vector<ExperienceRecord>& records);

  const std::shared_ptr<ExperienceMemory>& memory() const { return memory_; }
  const Features& task_features() const { return task_features_; }

 private:
  struct Link {
    std::vector<std::int64_t> followed;
    Stage stage = Stage::draft;
    std::string parent_id;
  };

  std::vector<std::vector<std::int64_t>> credit_chain(std::vector<std::int64_t> own, Stage stage,
                                                       const std::string& parent_id) const;

  std::shared_ptr<ExperienceMemory> memory_;
  std::string task_name_;
  Features task_features_;
  std::string origin_;
  std::unordered_map<std::string, Link> links_;  // by child id
};

}  // namespace kernelsmith::detail
