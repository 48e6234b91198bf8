// Throughput of the search's bookkeeping at 10^5 programs: archive inserts and inspiration samples,
// parent selection, novelty checks. The engine does one of each per proposal, so these rates bound how
// much of a run's wall time the engine itself can take (an evaluation costs milliseconds to seconds).
//
//   bench_archive [programs]       (default 100000)
#include <fmt/format.h>

#include <chrono>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "kernelsmith/archive.hpp"
#include "kernelsmith/novelty.hpp"
#include "kernelsmith/population.hpp"

using namespace kernelsmith;
using Clock = std::chrono::steady_clock;

namespace {

// A kernel-sized source (about 40 lines) that differs per index in constants and structure.
std::string make_source(std::size_t index, std::mt19937_64& rng) {
  std::string source = fmt::format(
      "// @tune BLOCK = {} in {{64, 128, 256, 512}}\n// @launch k{}<<<ceil_div(N, BLOCK), BLOCK>>>(x, y, N)\n"
      "__kernel void k{}(__global const float* x, __global float* y, int N) {{\n"
      "  const int i = get_global_id(0);\n  if (i >= N) return;\n  float acc = 0.0f;\n",
      64 << (index % 4), index, index);
  const std::size_t lines = 20 + rng() % 40;
  for (std::size_t line = 0; line < lines; ++line) {
    source += fmt::format("  acc += x[(i + {}) % N] * {}.{}f;\n", rng() % 97, rng() % 10, rng() % 1000);
  }
  source += "  y[i] = acc;\n}\n";
  return source;
}

Program make_program(std::size_t index, int islands, std::mt19937_64& rng) {
  Candidate candidate;
  candidate.language = "opencl";
  candidate.source = make_source(index, rng);
  Evaluation evaluation;
  const bool correct = rng() % 10 != 0;
  evaluation.status = correct ? Status::ok : Status::incorrect;
  evaluation.speedup = correct ? 0.25 + static_cast<double>(rng() % 10000) / 1000.0 : 0.0;
  evaluation.fitness = correct ? evaluation.speedup : 0.0;
  KernelResources kernel;
  kernel.name = "k";
  kernel.registers = static_cast<int>(16 + rng() % 200);
  evaluation.compile.kernels = {kernel};
  return Program(std::move(candidate), std::move(evaluation), static_cast<int>(index % static_cast<std::size_t>(islands)),
                 0, static_cast<std::int64_t>(index));
}

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

void report(const char* what, std::size_t operations, double seconds) {
  fmt::print("{:<58} {:>10.0f} /s  {:>9.2f} us each\n", what, operations / seconds, 1e6 * seconds / operations);
}

}  // namespace

int main(int argc, char** argv) {
  const std::size_t count = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 100000;
  const int islands = 4;
  std::mt19937_64 rng(1);
  fmt::print("generating {} programs on {} islands...\n", count, islands);
  std::vector<Program> programs;
  programs.reserve(count);
  for (std::size_t i = 0; i < count; ++i) programs.push_back(make_program(i, islands, rng));

  ArchiveConfig config;
  config.islands = islands;
  MapElitesArchive archive(config);
  auto start = Clock::now();
  std::size_t entered = 0;
  for (const Program& program : programs) entered += archive.add(program) ? 1 : 0;
  const double insert_seconds = seconds_since(start);
  report("archive insert (tokenise, hash, cell, elites)", count, insert_seconds);
  fmt::print("  {} entered a cell or the elite set; {} held; island 0 coverage {:.1f}%\n", entered, archive.size(),
             100.0 * archive.coverage(0));

  const std::size_t samples = 20000;
  start = Clock::now();
  std::size_t shown = 0;
  for (std::size_t i = 0; i < samples; ++i) {
    shown += archive.inspirations(programs[(i * 7919) % count], 4, rng).size();
  }
  const double sample_seconds = seconds_since(start);
  report("archive inspirations (4 per parent)", samples, sample_seconds);
  fmt::print("  {:.2f} inspirations per request on average\n", static_cast<double>(shown) / samples);

  start = Clock::now();
  const std::vector<Program> migrants = archive.migrate();
  report("archive migration round (ring, rate 0.1)", 1, seconds_since(start));
  fmt::print("  {} programs migrated\n", migrants.size());

  for (std::size_t capacity : {std::size_t{1000}, count}) {
    PopulationConfig population_config;
    population_config.islands = islands;
    population_config.island_capacity = capacity;
    IslandPopulation population(population_config);
    start = Clock::now();
    for (const Program& program : programs) population.add(program);
    report(fmt::format("population add (capacity {} per island)", capacity).c_str(), count, seconds_since(start));
    const std::size_t picks = capacity > 10000 ? 200 : 20000;
    start = Clock::now();
    for (std::size_t i = 0; i < picks; ++i) population.select_parent(static_cast<int>(i % islands), rng);
    report(fmt::format("select_parent, weighted, {} programs per island", population.island_programs(0).size()).c_str(),
           picks, seconds_since(start));
  }

  NoveltyFilter filter;
  start = Clock::now();
  for (const Program& program : programs) filter.remember(program.candidate(), program.id(), program.island);
  report("novelty remember (hash + embedding)", count, seconds_since(start));
  const std::size_t checks = 200;
  start = Clock::now();
  std::size_t novel = 0;
  for (std::size_t i = 0; i < checks; ++i) {
    Candidate candidate = programs[i].candidate();
    candidate.source += "// edited\nint unused_" + std::to_string(i) + ";\n";
    novel += filter.check(candidate, programs[i].island, "llm_diff").novel() ? 1 : 0;
  }
  report(fmt::format("novelty check against {} programs per island", count / islands).c_str(), checks,
         seconds_since(start));
  start = Clock::now();
  for (std::size_t i = 0; i < checks; ++i) filter.check(programs[i].candidate(), programs[i].island, "llm_diff");
  report("novelty check of an exact duplicate (hash only)", checks, seconds_since(start));
  fmt::print("  {} of {} edited candidates novel\n", novel, checks);
  return 0;
}
