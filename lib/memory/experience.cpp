// Stages, rewards, the text of a lesson and the built-in retrieval (ExperienceMemory is in
// experience_memory.cpp).
#include "kernelsmith/experience.hpp"

#include <algorithm>
#include <cmath>
#include <random>
#include <map>

#include <fmt/format.h>

#include "detail/random.hpp"
#include "kernelsmith/error.hpp"

namespace kernelsmith {

std::string to_string(Stage stage) { return stage == Stage::draft ? "draft" : "refine"; }

Stage parse_stage(const std::string& name) {
  if (name == "draft") return Stage::draft;
  if (name == "refine") return Stage::refine;
  throw ValidationError(fmt::format("unknown stage '{}': expected draft or refine", name));
}

Stage stage_of(const std::optional<Evaluation>& parent_evaluation) {
  return parent_evaluation && parent_evaluation->status == Status::ok ? Stage::refine : Stage::draft;
}

Stage stage_of(const Candidate& parent, const std::optional<Evaluation>& parent_evaluation) {
  return has_custom_kernel(parent) ? stage_of(parent_evaluation) : Stage::draft;
}

double experience_reward(Stage stage, Status child_status, double child_speedup, double parent_speedup) {
  const bool correct = child_status == Status::ok;
  if (stage == Stage::draft) return correct ? 1.0 : 0.0;
  if (!correct) return -1.0;
  if (!(child_speedup > 0.0) || !(parent_speedup > 0.0)) return 0.0;  // a speedup that was not measured
  return std::clamp(std::log2(child_speedup / parent_speedup), -1.0, 1.0);
}

double ExperienceItem::gain() const {
  if (!correct || !(speedup > 0.0) || !(parent_speedup > 0.0)) return 0.0;
  return speedup / parent_speedup - 1.0;
}

std::string ExperienceItem::lesson() const {
  std::vector<std::string> shape;
  if (auto intensity = task_features.number("task_intensity")) shape.push_back(fmt::format("{:.3g} FLOP/B", *intensity));
  if (auto reduction = task_features.number("task_reduction"); reduction && *reduction >= 2.0) {
    shape.push_back(fmt::format("{:.3g} inputs per output", *reduction));
  }
  if (auto dtype = task_features.label("task_dtype")) shape.push_back(*dtype);
  std::string text = fmt::format("On task {}", task.empty() ? std::string("(unnamed)") : task);
  if (!shape.empty()) {
    text += " (";
    for (std::size_t i = 0; i < shape.size(); ++i) text += (i == 0 ? "" : ", ") + shape[i];
    text += ")";
  }
  if (stage == Stage::draft) {
    const std::string failure = feedback.label("failure").value_or(feedback.label("status").value_or("not evaluated"));
    text += fmt::format(", a parent that failed ({})", failure);
  } else {
    text += fmt::format(", a correct parent at {:.3g}x", parent_speedup);
    if (auto fraction = feedback.number("sol_fraction")) text += fmt::format(" ({:.0f}% of the hardware limit)", *fraction * 100);
  }
  text += ": " + (skill.empty() || skill == "unspecified" ? std::string("a change naming no skill")
                                                          : fmt::format("skill {}", skill));
  if (!edit.empty()) text += fmt::format(" ({})", edit);
  text += " -> ";
  if (correct) {
    text += stage == Stage::draft ? fmt::format("made it correct ({:.3g}x)", speedup)
                                  : fmt::format("{:.3g}x -> {:.3g}x ({:+.0f}%)", parent_speedup, speedup, gain() * 100);
  } else {
    text += (stage == Stage::draft ? "still failing: " : "broke it: ") + to_string(status);
    if (!note.empty() && note != to_string(status)) text += ", " + note;
  }
  return text + ".";
}

ValueRetriever::ValueRetriever(ValueRetrieverOptions options) : options_(options) {
  const auto& o = options_;
  if (!(o.value_weight >= 0.0) || !(o.similarity_weight >= 0.0)) {
    throw ValidationError(fmt::format("ValueRetrieverOptions: value_weight ({}) and similarity_weight ({}) must be >= 0",
                                      o.value_weight, o.similarity_weight));
  }
  if (!(o.epsilon >= 0.0 && o.epsilon <= 1.0)) {
    throw ValidationError(fmt::format("ValueRetrieverOptions.epsilon = {} is outside [0, 1]", o.epsilon));
  }
  if (!(o.min_similarity >= 0.0 && o.min_similarity <= 1.0)) {
    throw ValidationError(fmt::format("ValueRetrieverOptions.min_similarity = {} is outside [0, 1]", o.min_similarity));
  }
  if (!(o.prior_weight >= 0.0) || !(o.similarity_power >= 0.0)) {
    throw ValidationError(fmt::format("ValueRetrieverOptions: prior_weight ({}) and similarity_power ({}) must be >= 0",
                                      o.prior_weight, o.similarity_power));
  }
}

namespace {

double shrink(double weighted_sum, double weight, double prior, double prior_weight) {
  const double total = weight + prior_weight;
  return total > 0.0 ? (weighted_sum + prior * prior_weight) / total : prior;
}

}  // namespace

namespace {

// The similarity of items to a query, remembering the task part per task: the items of one task mostly share
// their task features, and comparing those is half the work.
class SimilarityCache {
 public:
  explicit SimilarityCache(const ExperienceQuery& query) : query_(query) {}

  double operator()(const ExperienceItem& item) {
    auto found = tasks_.find(item.task);
    double task = 0.0;
    if (found != tasks_.end() && found->second.first->numbers == item.task_features.numbers &&
        found->second.first->labels == item.task_features.labels) {
      task = found->second.second;
    } else {
      task = feature_similarity(query_.task_features, item.task_features);
      tasks_[item.task] = {&item.task_features, task};
    }
    return 0.5 * (task + feature_similarity(query_.feedback, item.feedback));
  }

 private:
  const ExperienceQuery& query_;
  std::map<std::string, std::pair<const Features*, double>> tasks_;
};

}  // namespace

double ValueRetriever::estimate(const ExperienceItem& item, Stage stage) const {
  const StageValue& learned = item.value(stage);
  const double prior = stage == Stage::draft ? options_.draft_prior : options_.refine_prior;
  return shrink(learned.value * learned.weight, learned.weight, prior, options_.prior_weight);
}

double ValueRetriever::similarity(const ExperienceQuery& query, const ExperienceItem& item) {
  return 0.5 * (feature_similarity(query.task_features, item.task_features) +
                feature_similarity(query.feedback, item.feedback));
}

double ValueRetriever::skill_estimate(const ExperienceQuery& query, const std::string& skill,
                                      const std::vector<ExperienceItem>& items) const {
  double weighted = 0.0, weight = 0.0;
  SimilarityCache similarity_of(query);
  for (const ExperienceItem& item : items) {
    if (item.skill != skill) continue;
    const double near = similarity_of(item);
    if (near < options_.min_similarity) continue;
    const StageValue& learned = item.value(query.stage);
    const double k = std::pow(near, options_.similarity_power) * learned.weight;
    weighted += k * learned.value;
    weight += k;
  }
  const double prior = query.stage == Stage::draft ? options_.draft_prior : options_.refine_prior;
  return shrink(weighted, weight, prior, options_.prior_weight);
}


std::vector<RetrievedItem> ValueRetriever::retrieve(const ExperienceQuery& query,
                                                    const std::vector<ExperienceItem>& items) {
  const double prior = query.stage == Stage::draft ? options_.draft_prior : options_.refine_prior;
  SimilarityCache similarity_of(query);
  // The candidates: each skill with its closest item (by_skill), or each item.
  struct Candidate {
    const ExperienceItem* item = nullptr;
    double similarity = -1.0;
    double weighted = 0.0;  // sum of similarity^power * credit weight * value
    double weight = 0.0;
  };
  std::vector<Candidate> candidates;
  std::map<std::string, std::size_t> of_skill;
  for (const ExperienceItem& item : items) {
    const double near = similarity_of(item);
    if (near < options_.min_similarity) continue;
    const StageValue& learned = item.value(query.stage);
    Candidate* candidate = nullptr;
    if (options_.by_skill) {
      auto found = of_skill.emplace(item.skill, candidates.size());
      if (found.second) candidates.emplace_back();
      candidate = &candidates[found.first->second];
      const double k = std::pow(near, options_.similarity_power) * learned.weight;
      candidate->weighted += k * learned.value;
      candidate->weight += k;
    } else {
      candidates.emplace_back();
      candidate = &candidates.back();
      candidate->weighted = learned.value * learned.weight;
      candidate->weight = learned.weight;
    }
    // The closest item represents its skill; the older one among equals.
    if (near > candidate->similarity) {
      candidate->item = &item;
      candidate->similarity = near;
    }
  }
  std::vector<RetrievedItem> ranked;
  ranked.reserve(candidates.size());
  for (const Candidate& candidate : candidates) {
    Retrieval retrieval;
    retrieval.item = candidate.item->id;
    retrieval.skill = candidate.item->skill;
    retrieval.similarity = candidate.similarity;
    retrieval.value = shrink(candidate.weighted, candidate.weight, prior, options_.prior_weight);
    retrieval.score = options_.value_weight * retrieval.value + options_.similarity_weight * retrieval.similarity;
    ranked.push_back({*candidate.item, retrieval});
  }
  // Best score first; the older item first among equals, so that the order never depends on the input's.
  std::stable_sort(ranked.begin(), ranked.end(), [](const RetrievedItem& a, const RetrievedItem& b) {
    if (a.retrieval.score != b.retrieval.score) return a.retrieval.score > b.retrieval.score;
    return a.item.id < b.item.id;
  });
  std::mt19937_64 rng(detail::splitmix64(options_.seed ^ detail::splitmix64(query.seed + 0x6a09e667f3bcc909ULL)));
  std::vector<RetrievedItem> chosen;
  while (chosen.size() < query.count && !ranked.empty()) {
    // One draw per slot whatever the outcome, so that the stream stays aligned across slots.
    const bool explore = detail::uniform01(rng) < options_.epsilon;
    const std::size_t pick = explore ? detail::uniform_index(rng, ranked.size()) : 0;
    RetrievedItem item = std::move(ranked[pick]);
    ranked.erase(ranked.begin() + static_cast<std::ptrdiff_t>(pick));
    item.retrieval.explored = explore;
    chosen.push_back(std::move(item));
  }
  return chosen;
}

}  // namespace kernelsmith
