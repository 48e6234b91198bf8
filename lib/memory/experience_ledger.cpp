#include "memory/experience_ledger.hpp"

#include <algorithm>

#include <fmt/format.h>

namespace kernelsmith::detail {

namespace {

// The items a step followed: those retrieved into it whose skill it applied. A step that names no skill cannot
// say which it followed, and credits none.
std::vector<std::int64_t> followed(const std::vector<Retrieval>& retrieved, const std::string& skill) {
  std::vector<std::int64_t> ids;
  if (skill.empty() || skill == "unspecified") return ids;
  for (const Retrieval& r : retrieved) {
    if (r.skill == skill) ids.push_back(r.item);
  }
  return ids;
}

}  // namespace

ExperienceLedger::ExperienceLedger(std::shared_ptr<ExperienceMemory> memory, const Task& task, std::string origin)
    : memory_(std::move(memory)), task_name_(task.name), task_features_(kernelsmith::task_features(task)),
      origin_(std::move(origin)) {}

StepContext ExperienceLedger::context(const MutationRequest& request, const std::string& parent_id) const {
  StepContext context;
  context.stage = stage_of(request.parent, request.parent_evaluation);
  context.feedback = request_feedback(request);
  context.parent_id = parent_id;
  if (request.parent_evaluation && request.parent_evaluation->ok()) {
    context.parent_speedup = request.parent_evaluation->speedup;
  }
  return context;
}

void ExperienceLedger::retrieve(MutationRequest& request, StepContext& context, std::size_t count) const {
  if (count == 0) return;
  ExperienceQuery query;
  query.task = task_name_;
  query.task_features = task_features_;
  query.feedback = context.feedback;
  query.stage = context.stage;
  query.count = count;
  query.seed = request.seed;
  request.experience = memory_->retrieve(query);
  context.retrieved.clear();
  for (const RetrievedItem& entry : request.experience) context.retrieved.push_back(entry.retrieval);
}

std::vector<std::vector<std::int64_t>> ExperienceLedger::credit_chain(std::vector<std::int64_t> own, Stage stage,
                                                                       const std::string& parent_id) const {
  std::vector<std::vector<std::int64_t>> chain;
  chain.push_back(std::move(own));
  std::string ancestor = parent_id;
  for (int generation = 1; generation <= memory_->options().horizon; ++generation) {
    auto link = links_.find(ancestor);
    // A reward of another stage measures something else: making a program correct is not making it faster.
    if (link == links_.end() || link->second.stage != stage) break;
    chain.push_back(link->second.followed);
    ancestor = link->second.parent_id;
  }
  return chain;
}

ExperienceItem ExperienceLedger::learn(const StepContext& context, const std::string& child_id,
                                       const std::string& skill, const std::string& edit, const Evaluation& child,
                                       std::int64_t step_id) {
  ExperienceItem item;
  item.task = task_name_;
  item.task_features = task_features_;
  item.feedback = context.feedback;
  item.stage = context.stage;
  item.skill = skill.empty() ? "unspecified" : skill;
  item.edit = edit;
  item.status = child.status;
  item.compiled = child.compile.ok;
  item.correct = child.ok();
  item.speedup = child.ok() ? child.speedup : 0.0;
  item.parent_speedup = context.parent_speedup;
  item.note = child.message.size() > 200 ? child.message.substr(0, 197) + "..." : child.message;
  item.reward = experience_reward(item.stage, item.status, item.speedup, item.parent_speedup);
  item.origin = fmt::format("{}, step {}", origin_, step_id);
  const std::vector<std::int64_t> own = followed(context.retrieved, item.skill);
  item.id = memory_->record(item, credit_chain(own, context.stage, context.parent_id));
  links_[child_id] = {own, context.stage, context.parent_id};
  return item;
}

void ExperienceLedger::restore(const std::vector<StepRecord>& steps, const std::vector<ExperienceRecord>& records) {
  const std::string prefix = origin_ + ", ";
  bool present = false;
  for (const ExperienceItem& item : memory_->items()) {
    if (item.origin.compare(0, prefix.size(), prefix) == 0) {
      present = true;
      break;
    }
  }
  std::unordered_map<std::int64_t, const StepRecord*> step_by_id;
  for (const StepRecord& step : steps) step_by_id[step.id] = &step;
  // Replayed items get new ids: the steps' retrievals are renumbered, and what was never replayed is dropped.
  std::unordered_map<std::int64_t, std::int64_t> renumbered;
  auto translate = [&](const std::vector<Retrieval>& retrieved, const std::string& skill) {
    std::vector<std::int64_t> ids;
    for (std::int64_t id : followed(retrieved, skill)) {
      if (present) {
        ids.push_back(id);
      } else if (auto found = renumbered.find(id); found != renumbered.end()) {
        ids.push_back(found->second);
      }
    }
    return ids;
  };
  for (const ExperienceRecord& record : records) {
    auto found = step_by_id.find(record.step);
    if (found == step_by_id.end()) continue;
    const StepRecord& step = *found->second;
    const std::string parent_id = step.parent_ids.empty() ? std::string() : step.parent_ids.front();
    const std::vector<std::int64_t> own = translate(step.retrieved, record.item.skill);
    if (!present) {
      const std::int64_t id = memory_->record(record.item, credit_chain(own, record.item.stage, parent_id));
      renumbered[record.item.id] = id;
    }
    links_[step.child_id] = {own, record.item.stage, parent_id};
  }
}

}  // namespace kernelsmith::detail
