// Predicate: a condition over Features, such as when a skill applies (docs/memory.md, "Predicates"):
//
//   stage == "refine" and bandwidth_fraction < 0.6 and task_intensity < 10
//   failure == "unwritten" or failure == "mismatch"
//   not (registers <= 128) or spill_bytes > 0
//
// Comparisons (< <= > >= == !=) of numbers and of labels with strings, + - * / on numbers, and, or, not
// (also &&, ||, !), parentheses, true and false. Names are the feature catalog's (features.hpp); a predicate
// is parsed and type-checked once, when it is made, so a typo fails when a skill bank loads, not in a run.
// A feature the features lack makes what reads it unknown: `and` is false if either side is false, `or` true
// if either is true, and a predicate holds only when it is true. No code is ever executed: this is a small
// parser and evaluator, not a scripting language.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "kernelsmith/export.hpp"
#include "kernelsmith/features.hpp"

namespace kernelsmith {

class KERNELSMITH_API Predicate {
 public:
  /// "true": always holds.
  Predicate();
  /// Parses and checks `text`. Throws ValidationError naming the column of a syntax error, an unknown
  /// feature (with the known ones), a comparison of a label with a number, or a string that is not one of a
  /// label's values.
  explicit Predicate(std::string text);

  /// True when the predicate is true for these features; false when it is false or unknown.
  bool holds(const Features& features) const;
  /// true, false, or nothing when a feature it needs is missing (or a division by zero).
  std::optional<bool> evaluate(const Features& features) const;
  /// The features it reads, each once, in order of appearance.
  std::vector<std::string> features() const;
  const std::string& text() const;

 private:
  struct Impl;
  std::shared_ptr<const Impl> impl_;
};

}  // namespace kernelsmith
