#include "kernelsmith/program.hpp"

#include <utility>

namespace kernelsmith {

Program::Program() : Program(Candidate{}, Evaluation{}) {}

Program::Program(Candidate candidate, Evaluation evaluation_in, int island_in, int generation_in,
                 std::int64_t sequence_in)
    : evaluation(std::move(evaluation_in)),
      island(island_in),
      generation(generation_in),
      sequence(sequence_in),
      candidate_(std::move(candidate)),
      id_(candidate_.id()) {
  evaluation.candidate_id = id_;
}

bool better_program(const Program& a, const Program& b) {
  if (a.correct() != b.correct()) return a.correct();
  if (a.fitness() != b.fitness()) return a.fitness() > b.fitness();
  return a.sequence < b.sequence;
}

}  // namespace kernelsmith
