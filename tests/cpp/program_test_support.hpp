// Programs for the search tests (program, selection, population, archive). A program is named: its
// code is unique to the name, so that its id (the content hash) is id_of(name) and tests can speak of
// programs "a", "b", "broken".
#pragma once

#include <cstdint>
#include <string>

#include "kernelsmith/program.hpp"

namespace kernelsmith::testing {

inline Candidate named_candidate(const std::string& name) {
  Candidate candidate;
  candidate.language = "opencl";
  candidate.source = "__kernel void k_" + name + "(__global float* y) { y[0] = 1.0f; }";
  return candidate;
}

/// The id of the program named `name`.
inline std::string id_of(const std::string& name) { return named_candidate(name).id(); }

/// A program named `name` with the fitness (the speedup, when correct) and an evaluation message.
inline Program named_program(const std::string& name, double fitness, bool correct = true, int island = 0,
                             std::int64_t sequence = 0, const std::string& message = "") {
  Evaluation evaluation;
  evaluation.status = correct ? Status::ok : Status::incorrect;
  evaluation.fitness = fitness;
  evaluation.speedup = correct ? fitness : 0.0;
  evaluation.message = message;
  return Program(named_candidate(name), evaluation, island, 0, sequence);
}

}  // namespace kernelsmith::testing
