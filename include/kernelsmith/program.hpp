// Program: an evaluated candidate as the search sees it (population, archive, engine). Its id is the
// candidate's content id, computed once when the program is made.
#pragma once

#include <cstdint>
#include <string>

#include "kernelsmith/candidate.hpp"
#include "kernelsmith/evaluation.hpp"

#include "kernelsmith/export.hpp"

namespace kernelsmith {

/// An evaluated candidate with its place in the search. The candidate is read-only once the program is
/// made: the id is computed from it then (Candidate::id(), a SHA-256 of language and source) and kept,
/// so that the population, the archive and the engine never re-hash the source to look a program up.
class KERNELSMITH_API Program {
 public:
  /// A program of an empty candidate (the id is that candidate's); for containers and bindings.
  Program();
  /// `evaluation.candidate_id` is set to the program's id: an evaluation attached to a program is an
  /// evaluation of that program's code, whatever the evaluator put there.
  Program(Candidate candidate, Evaluation evaluation, int island = 0, int generation = 0,
          std::int64_t sequence = 0);

  /// The candidate's content id (16 hex digits).
  const std::string& id() const { return id_; }
  const Candidate& candidate() const { return candidate_; }
  double fitness() const { return evaluation.fitness; }
  bool correct() const { return evaluation.status == Status::ok; }

  Evaluation evaluation;
  int island = 0;
  /// Mutation steps from a root (reference or seed: 0).
  int generation = 0;
  /// Children proposed from it so far (damps its chance of being picked again).
  int children = 0;
  /// Evaluation order, from 0: the engine's clock.
  std::int64_t sequence = 0;
  /// A copy that arrived on this island by migration; migrants are never migrated again.
  bool migrant = false;

 private:
  Candidate candidate_;
  std::string id_;
};

/// True when `a` ranks above `b`: correct before incorrect, then higher fitness, then the earlier
/// evaluation (stable under ties).
KERNELSMITH_API bool better_program(const Program& a, const Program& b);

}  // namespace kernelsmith
