// A reference kernel's expected outputs are kept on disk (the cache folder's oracle/ entries) and read by
// the next evaluator on the machine: shown here by damaging the stored outputs, which a fresh evaluator
// then believes, while one with the disk cache off recomputes them. PoCL on the CI machine.
#include <filesystem>
#include <fstream>
#include <algorithm>
#include <iterator>
#include <string>

#include <fmt/format.h>

#include "catch.hpp"
#include "harness_test_support.hpp"
#include "kernelsmith/error.hpp"
#include "kernelsmith/evaluator.hpp"

#include <unistd.h>

using namespace kernelsmith;
namespace fs = std::filesystem;

namespace {

// Every outputs entry under `folder` with its buffers zeroed (the header line kept). Returns the count.
int zero_stored_outputs(const fs::path& folder) {
  int entries = 0;
  for (const auto& file : fs::recursive_directory_iterator(folder)) {
    if (file.path().extension() != ".bin") continue;
    std::ifstream in(file.path(), std::ios::binary);
    std::string content((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    in.close();
    const std::size_t body = content.find('\n') + 1;
    std::fill(content.begin() + static_cast<std::ptrdiff_t>(body), content.end(), '\0');
    std::ofstream(file.path(), std::ios::binary | std::ios::trunc) << content;
    ++entries;
  }
  return entries;
}

/// A cache folder of its own, the small task, its OpenCL reference as the candidate, and the first
/// evaluation through a fresh evaluator (which fills the folder).
struct CachedRun {
  explicit CachedRun(const std::string& name, const std::string& baseline_session = "")
      : cache(fs::temp_directory_path() / ("kernelsmith-" + name + "-cache-" + std::to_string(::getpid()))),
        options(test::fast_options("opencl", false, 1)),
        task(test::small_task()),
        right(test::candidate_in("opencl", task.references.at("opencl").source)) {
    fs::remove_all(cache);
    options.cache_dir = cache.string();
    options.baseline_session = baseline_session;
    first = create_evaluator(options)->evaluate(task, right);
    INFO(first.message);
    REQUIRE(first.status == Status::ok);
  }
  ~CachedRun() { fs::remove_all(cache); }
  fs::path cache;
  EvaluatorOptions options;
  Task task;
  Candidate right;
  Evaluation first;
};

}  // namespace

TEST_CASE("reference outputs are computed once per machine: the next evaluator reads them from disk",
          "[harness][opencl][reference_cache]") {
  if (!test::opencl_available()) {
    WARN("skipped: no OpenCL device");
    return;
  }
  CachedRun run("reference");
  EvaluatorOptions& options = run.options;
  const fs::path& cache = run.cache;
  const Task& task = run.task;
  const Candidate& right = run.right;
  REQUIRE(zero_stored_outputs(cache / "oracle") >= 3);  // every size configuration's cases

  // A fresh evaluator finds the (now all-zero) stored outputs instead of running the reference: the first
  // check of the reference's outputs, their spread, finds them constant.
  std::string message;
  try {
    create_evaluator(options)->evaluate(task, right);
  } catch (const TaskError& error) {
    message = error.what();
  }
  INFO(message);
  CHECK(message.find("the reference output y is near-constant on random inputs (relative spread 0 ") !=
        std::string::npos);

  // Without the disk cache the reference runs again.
  options.use_disk_cache = false;
  const Evaluation third = create_evaluator(options)->evaluate(task, right);
  INFO(third.message);
  CHECK(third.status == Status::ok);
}

TEST_CASE("the reference's baseline timing is kept on disk for its session: the next evaluator of the session "
          "takes it, one of another session or a re-measurement does not",
          "[harness][opencl][reference_cache]") {
  if (!test::opencl_available()) {
    WARN("skipped: no OpenCL device");
    return;
  }
  CachedRun run("baseline", "shared-session");
  EvaluatorOptions& options = run.options;
  const fs::path& cache = run.cache;
  const Task& task = run.task;
  const Candidate& right = run.right;
  const Evaluation& first = run.first;
  REQUIRE(first.baseline_timing);

  // The stored baseline, given a median of our own (a marker no measurement produces).
  int baselines = 0;
  const double marker = first.baseline_timing->median_ms * 1.25 + 1e-7;
  for (const auto& file : fs::recursive_directory_iterator(cache / "oracle")) {
    if (file.path().extension() != ".json") continue;
    std::ifstream in(file.path());
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    in.close();
    if (text.find("\"median_ms\"") == std::string::npos) continue;
    // Every median in it (the whole run's, and each kernel's where there are several).
    for (std::size_t at = text.find("\"median_ms\""); at != std::string::npos; at = text.find("\"median_ms\"", at + 1)) {
      const std::size_t value = text.find(':', at) + 1;
      const std::size_t end = text.find_first_of(",\n}", value);
      text.replace(value, end - value, " " + fmt::format("{}", marker));
    }
    std::ofstream(file.path(), std::ios::trunc) << text;
    ++baselines;
  }
  REQUIRE(baselines == 1);  // one mode timed, one entry

  const Evaluation second = create_evaluator(options)->evaluate(task, right);
  INFO(second.message);
  REQUIRE(second.status == Status::ok);
  REQUIRE(second.baseline_timing);
  CHECK(second.baseline_timing->median_ms == marker);

  // An evaluator of its own session (the default) times the reference again: a speedup is against a baseline
  // timed in the same run.
  EvaluatorOptions own_session = options;
  own_session.baseline_session.clear();
  const Evaluation fresh = create_evaluator(own_session)->evaluate(task, right);
  REQUIRE(fresh.baseline_timing);
  CHECK(fresh.baseline_timing->median_ms != marker);

  // Without the disk cache the reference is timed again.
  options.use_disk_cache = false;
  const Evaluation third = create_evaluator(options)->evaluate(task, right);
  REQUIRE(third.baseline_timing);
  CHECK(third.baseline_timing->median_ms != marker);
}
