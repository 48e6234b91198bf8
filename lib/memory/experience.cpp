// Stages, rewards, the text of a lesson and the built-in retrieval (ExperienceMemory is in
// experience_memory.cpp).
#include "kernelsmith/experience.hpp"

#include <algorithm>
#include <cmath>
#include <random>
#include <set>

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
  if (!(o.prior_weight >= 0.0)) {
    throw ValidationError(fmt::format("ValueRetrieverOptions.prior_weight = {} must be >= 0", o.prior_weight));
  }
}

double ValueRetriever::estimate(const ExperienceItem& item, Stage stage) const {
  const StageValue& learned = item.value(stage);
  const double prior = stage == Stage::draft ? options_.draft_prior : options_.refine_prior;
  const double weight = learned.weight + options_.prior_weight;
  if (!(weight > 0.0)) return prior;
  return (learned.value * learned.weight + prior * options_.prior_weight) / weight;
}

double ValueRetriever::similarity(const ExperienceQuery& query, const ExperienceItem& item) {
  return 0.5 * (feature_similarity(query.task_features, item.task_features) +
                feature_similarity(query.feedback, item.feedback));
}

std::vector<RetrievedItem> ValueRetriever::retrieve(const ExperienceQuery& query,
                                                    const std::vector<ExperienceItem>& items) {
  std::vector<RetrievedItem> ranked;
  for (const ExperienceItem& item : items) {
    Retrieval retrieval;
    retrieval.item = item.id;
    retrieval.similarity = similarity(query, item);
    if (retrieval.similarity < options_.min_similarity) continue;
    retrieval.value = estimate(item, query.stage);
    retrieval.score = options_.value_weight * retrieval.value + options_.similarity_weight * retrieval.similarity;
    ranked.push_back({item, retrieval});
  }
  // Best score first; the older item first among equals, so that the order never depends on the input's.
  std::stable_sort(ranked.begin(), ranked.end(), [](const RetrievedItem& a, const RetrievedItem& b) {
    if (a.retrieval.score != b.retrieval.score) return a.retrieval.score > b.retrieval.score;
    return a.item.id < b.item.id;
  });
  std::mt19937_64 rng(detail::splitmix64(options_.seed ^ detail::splitmix64(query.seed + 0x6a09e667f3bcc909ULL)));
  std::vector<RetrievedItem> chosen;
  std::vector<bool> taken(ranked.size(), false);
  std::set<std::string> skills;
  while (chosen.size() < query.count) {
    std::vector<std::size_t> open;
    for (std::size_t i = 0; i < ranked.size(); ++i) {
      if (!taken[i] && (!options_.one_per_skill || skills.count(ranked[i].item.skill) == 0)) open.push_back(i);
    }
    if (open.empty()) break;
    // One draw per slot whatever the outcome, so that the stream stays aligned across slots.
    const bool explore = detail::uniform01(rng) < options_.epsilon;
    const std::size_t pick = explore ? open[detail::uniform_index(rng, open.size())] : open.front();
    taken[pick] = true;
    skills.insert(ranked[pick].item.skill);
    RetrievedItem item = ranked[pick];
    item.retrieval.explored = explore;
    chosen.push_back(std::move(item));
  }
  return chosen;
}

}  // namespace kernelsmith
