// Program (lib/program.cpp): the id is the candidate's, computed once; the evaluation is attached to
// it; the ranking used by selection, eviction and the archive.
#include <chrono>

#include "catch.hpp"
#include "kernelsmith/program.hpp"
#include "program_test_support.hpp"

using namespace kernelsmith;
using kernelsmith::testing::named_candidate;
using kernelsmith::testing::named_program;

TEST_CASE("a program's id is its candidate's content id, whatever the evaluation says", "[program]") {
  const Candidate candidate = named_candidate("relu");
  Evaluation evaluation;
  evaluation.candidate_id = "not-this-one";  // e.g. a custom evaluator that names candidates its own way
  evaluation.status = Status::ok;
  evaluation.fitness = 1.5;
  const Program program(candidate, evaluation, 1, 3, 7);
  CHECK(program.id() == candidate.id());
  CHECK(program.evaluation.candidate_id == candidate.id());  // the evaluation now names the program
  CHECK(program.candidate().source == candidate.source);
  CHECK(program.island == 1);
  CHECK(program.generation == 3);
  CHECK(program.sequence == 7);
  CHECK(program.children == 0);
  CHECK_FALSE(program.migrant);
  CHECK(program.correct());
  CHECK(program.fitness() == Approx(1.5));

  // Copies keep the id; the default program is the empty candidate's.
  const Program copy = program;
  CHECK(copy.id() == program.id());
  CHECK(Program().id() == Candidate().id());
}

TEST_CASE("a program's id is computed once, not on every call", "[program]") {
  // A 4 MB source: hashing it takes milliseconds, reading a stored id nanoseconds.
  Candidate large;
  large.language = "opencl";
  large.source = std::string(4 << 20, 'x');
  const Program program(large, Evaluation{});
  const auto started = std::chrono::steady_clock::now();
  std::size_t total = 0;
  for (int i = 0; i < 1000; ++i) total += program.id().size();
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  CHECK(total == 16000);
  CHECK(&program.id() == &program.id());  // a reference to the stored id
  CHECK(seconds < 0.5);                    // 1000 hashes of 4 MB would take seconds
}

TEST_CASE("better_program: correct first, then fitness, then the earlier evaluation", "[program]") {
  const Program fast = named_program("fast", 3.0, true, 0, 5);
  const Program slow = named_program("slow", 1.0, true, 0, 1);
  const Program broken = named_program("broken", 9.0, false, 0, 0);
  const Program slow_later = named_program("slow_later", 1.0, true, 0, 2);
  CHECK(better_program(fast, slow));
  CHECK_FALSE(better_program(slow, fast));
  CHECK(better_program(slow, broken));  // an incorrect program ranks below any correct one
  CHECK_FALSE(better_program(broken, slow));
  CHECK(better_program(slow, slow_later));  // equal fitness: the incumbent ranks first
  CHECK_FALSE(better_program(slow, slow));  // a strict order
}
