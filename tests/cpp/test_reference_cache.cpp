// A reference kernel's expected outputs are kept on disk (the cache folder's oracle/ entries) and read by
// the next evaluator on the machine: shown here by damaging the stored outputs, which a fresh evaluator
// then believes, while one with the disk cache off recomputes them. PoCL on the CI machine.
#include <filesystem>
#include <fstream>
#include <algorithm>
#include <iterator>
#include <string>

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

}  // namespace

TEST_CASE("reference outputs are computed once per machine: the next evaluator reads them from disk",
          "[harness][opencl][reference_cache]") {
  if (!test::opencl_available()) {
    WARN("skipped: no OpenCL device");
    return;
  }
  const fs::path cache = fs::temp_directory_path() / ("kernelsmith-reference-cache-" + std::to_string(::getpid()));
  fs::remove_all(cache);
  EvaluatorOptions options = test::fast_options("opencl", false, 1);
  options.cache_dir = cache.string();
  const Task task = test::small_task();
  const Candidate right = test::candidate_in("opencl", task.references.at("opencl").source);

  const Evaluation first = create_evaluator(options)->evaluate(task, right);
  INFO(first.message);
  REQUIRE(first.status == Status::ok);
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
  fs::remove_all(cache);
}
