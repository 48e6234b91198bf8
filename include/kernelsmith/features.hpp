// Features: the measured facts that skills are gated on and experience is matched by (docs/memory.md).
// A task's (its work model at the timed sizes), a parent evaluation's (status, the kind of correctness
// failure, fractions of the hardware's peaks, resources, the dominant kernel's share) and a request's
// (the kernel language, the kind of device). One catalog names them all, with their kind and scope; skill
// predicates are checked against it when a skill bank is loaded.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "kernelsmith/evaluation.hpp"
#include "kernelsmith/export.hpp"
#include "kernelsmith/task.hpp"

namespace kernelsmith {

struct MutationRequest;

/// Numbers and labels by name. A feature that was not measured is absent, not zero (a compile error has
/// no bandwidth fraction): a predicate over it is neither true nor false, and similarity counts it as a
/// difference.
struct KERNELSMITH_API Features {
  std::map<std::string, double> numbers;
  std::map<std::string, std::string> labels;

  bool has(const std::string& name) const { return numbers.count(name) != 0 || labels.count(name) != 0; }
  std::optional<double> number(const std::string& name) const;
  std::optional<std::string> label(const std::string& name) const;
  /// Adds every feature of `other`; its values win.
  void merge(const Features& other);
  bool empty() const { return numbers.empty() && labels.empty(); }

  /// One flat JSON object: numbers as JSON numbers, labels as strings, e.g. {"stage": "refine", "registers": 40}.
  std::string to_json() const;
  /// Reads what to_json() writes. Throws ValidationError naming `origin` for a value that is neither a number
  /// nor a string.
  static Features from_json(const std::string& json_text, const std::string& origin = "<features>");
};

enum class FeatureKind { number, label };
/// Where a feature's value comes from.
enum class FeatureScope {
  task,      ///< the task (task_features)
  feedback,  ///< the parent's evaluation (feedback_features)
  request,   ///< the mutation request: the language asked for, the device
};

KERNELSMITH_API std::string to_string(FeatureKind kind);
KERNELSMITH_API std::string to_string(FeatureScope scope);

/// One row of the catalog.
struct FeatureInfo {
  std::string name;
  FeatureKind kind = FeatureKind::number;
  FeatureScope scope = FeatureScope::feedback;
  std::string description;
  /// Similarity compares log10(1 + value) for quantities that span decades (FLOPs, bytes, registers), the
  /// value itself else; a difference of `scale` counts as a full unit of distance.
  bool logarithmic = false;
  double scale = 1.0;
  /// Whether feature_similarity() compares it (a task's name does not make two tasks alike).
  bool similarity = true;
  /// The values a label takes; a predicate comparing it with another string is refused when the bank
  /// loads (a typo such as "incorect"). Empty: any value (task names, data types).
  std::vector<std::string> values;
};

/// Every feature, in the order docs/memory.md lists them.
KERNELSMITH_API const std::vector<FeatureInfo>& feature_catalog();
/// The catalog row of a feature, or null.
KERNELSMITH_API const FeatureInfo* find_feature(const std::string& name);

/// The task's features at its timed sizes: FLOPs, bytes, arithmetic intensity, the largest output, the
/// reduction ratio, tensor counts, rank, output data type, name. A work model that does not evaluate leaves
/// its features out.
KERNELSMITH_API Features task_features(const Task& task);

/// A parent evaluation's features: stage ("refine" when it is correct, "draft" else), status, the kind of
/// correctness failure, fractions of the peaks, resources, kernels and the dominant kernel's share.
KERNELSMITH_API Features feedback_features(const Evaluation& evaluation);

/// What a request says beyond its task: the parent evaluation's features (stage "draft" without one), the
/// language asked for and the kind of device. Experience items keep it as their `feedback`.
KERNELSMITH_API Features request_feedback(const MutationRequest& request);

/// Everything a request offers: task_features of its task merged with request_feedback.
KERNELSMITH_API Features request_features(const MutationRequest& request);

/// How alike two feature sets are, in (0, 1]: exp(-d), d the Euclidean length of the scaled differences over
/// the catalog's compared features that either set has (a feature only one has counts 1, two labels that differ
/// count 1): one different label alone makes 0.37. 0 when neither has any compared feature.
KERNELSMITH_API double feature_similarity(const Features& a, const Features& b);

}  // namespace kernelsmith
