// Candidates: content ids over SHA-256, reading source files, the JSON round trip; the docs' example
// candidates load and carry valid plans.
#include <filesystem>
#include <fstream>
#include <string>

#include <unistd.h>

#include "catch.hpp"
#include "detail/sha256.hpp"
#include "kernelsmith/candidate.hpp"
#include "kernelsmith/error.hpp"
#include "kernelsmith/launch_plan.hpp"

using namespace kernelsmith;
namespace fs = std::filesystem;

namespace {
bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }
}  // namespace

TEST_CASE("a candidate's id is 16 hex digits of SHA-256 over language, NUL, source", "[candidate]") {
  Candidate candidate;
  candidate.language = "cuda";
  candidate.source = "abc";
  CHECK(candidate.id() == detail::sha256_hex(std::string("cuda\0abc", 8)).substr(0, 16));
  CHECK(candidate.id().size() == 16);
  Candidate same = candidate;
  same.lineage.origin = "llm_full";
  same.lineage.generation = 9;
  CHECK(same.id() == candidate.id());  // lineage is not content
  Candidate other_language = candidate;
  other_language.language = "opencl";
  CHECK(other_language.id() != candidate.id());
  Candidate shifted;
  shifted.language = "cud";
  shifted.source = "aabc";
  CHECK(shifted.id() != candidate.id());
}

TEST_CASE("language by file extension", "[candidate]") {
  CHECK(language_for_extension("k.cu") == "cuda");
  CHECK(language_for_extension("dir/k.cuh") == "cuda");
  CHECK(language_for_extension("K.CL") == "opencl");
  CHECK(language_for_extension("k.maca") == "maca");
  CHECK(language_for_extension("k.cpp") == "");
  CHECK(language_for_extension("noext") == "");
}

TEST_CASE("candidates read from files", "[candidate]") {
  const std::string examples = std::string(KERNELSMITH_SOURCE_DIR) + "/docs/examples/";
  const Candidate cuda = Candidate::from_file(examples + "two_pass_sum.cu");
  CHECK(cuda.language == "cuda");
  CHECK(contains(cuda.source, "@launch"));
  CHECK(cuda.lineage.origin == "user");
  const Candidate opencl = Candidate::from_file(examples + "tiled_matmul.cl");
  CHECK(opencl.language == "opencl");
  CHECK(Candidate::from_file(examples + "tiled_matmul.cl", "opencl").id() == opencl.id());

  REQUIRE_THROWS_AS(Candidate::from_file(examples + "does_not_exist.cu"), NotFoundError);
  REQUIRE_THROWS_AS(Candidate::from_file(examples + "README.md"), ValidationError);
  REQUIRE_THROWS_AS(Candidate::from_file(examples + "two_pass_sum.cu", "vulkan"), ValidationError);
}

TEST_CASE("a binary candidate file is not a text file, not a source without a launch", "[candidate]") {
  const fs::path folder = fs::temp_directory_path() / ("kernelsmith-candidate-" + std::to_string(::getpid()));
  fs::create_directories(folder);
  const std::string object = (folder / "kernel.cu").string();
  const std::string latin1 = (folder / "kernel.cl").string();
  std::ofstream(object, std::ios::binary) << std::string("\x7f" "ELF\x02\x01\x01\0\0\0", 10);
  std::ofstream(latin1, std::ios::binary) << "// caf\xe9\n// @launch k<<<1, 1>>>()\n";
  auto message = [](const std::string& path) {
    try {
      Candidate::from_file(path);
    } catch (const ValidationError& error) {
      return std::string(error.what());
    }
    return std::string("no error");
  };
  CHECK(message(object) == "candidate file " + object + " is not a text file (a NUL byte at offset 7): give the "
                                                         "kernel's source file");
  CHECK(message(latin1) == "candidate file " + latin1 + " is not a text file (bytes that are not UTF-8 at offset "
                                                        "6): give the kernel's source file");
  fs::remove_all(folder);
}

TEST_CASE("the example candidates of the docs carry valid plans", "[candidate][docs]") {
  const fs::path examples = fs::path(KERNELSMITH_SOURCE_DIR) / "docs" / "examples";
  int count = 0;
  for (const auto& entry : fs::directory_iterator(examples)) {
    const std::string path = entry.path().string();
    if (language_for_extension(path).empty()) continue;
    INFO(path);
    const Candidate candidate = Candidate::from_file(path);
    CHECK_NOTHROW(LaunchPlan::parse(candidate.source, candidate.language));
    ++count;
  }
  CHECK(count >= 2);
  // The candidate JSON example reads back, and its id matches its content.
  std::ifstream stream(examples / "candidate.json");
  REQUIRE(stream.good());
  const std::string json((std::istreambuf_iterator<char>(stream)), std::istreambuf_iterator<char>());
  const Candidate from_json = Candidate::from_json(json, "docs/examples/candidate.json");
  CHECK(from_json.language == "cuda");
  CHECK(from_json.lineage.origin == "llm_diff");
  CHECK(from_json.lineage.parent_ids.size() == 1);
  CHECK_NOTHROW(LaunchPlan::parse(from_json.source));
}

TEST_CASE("candidate JSON round trip keeps every field", "[candidate]") {
  Candidate candidate;
  candidate.language = "opencl";
  candidate.source = "// @launch k<<<1, 1>>>()\n__kernel void k() {}\n\"quoted\" \\ and \t tab\n";
  candidate.lineage.parent_ids = {"0123456789abcdef", "fedcba9876543210"};
  candidate.lineage.island = 3;
  candidate.lineage.generation = 42;
  candidate.lineage.origin = "llm_crossover";
  const std::string json = candidate.to_json();
  CHECK(contains(json, "\"schema\": \"kernelsmith.candidate/1\""));
  CHECK(contains(json, candidate.id()));
  const Candidate copy = Candidate::from_json(json);
  CHECK(copy.language == candidate.language);
  CHECK(copy.source == candidate.source);
  CHECK(copy.lineage.parent_ids == candidate.lineage.parent_ids);
  CHECK(copy.lineage.island == 3);
  CHECK(copy.lineage.generation == 42);
  CHECK(copy.lineage.origin == "llm_crossover");
  CHECK(copy.id() == candidate.id());
  CHECK(copy.to_json() == json);
}

TEST_CASE("candidate JSON errors", "[candidate]") {
  auto message = [](const std::string& json) -> std::string {
    try {
      Candidate::from_json(json, "c.json");
    } catch (const ValidationError& error) {
      return error.what();
    }
    FAIL("expected ValidationError");
    return {};
  };
  const std::string base = R"("schema": "kernelsmith.candidate/1", "language": "cuda", "source": "x")";
  CHECK_NOTHROW(Candidate::from_json("{" + base + "}"));
  CHECK(contains(message("{" + base + R"(, "id": "0000000000000000"})"), "c.json: id: the stated id 0000000000000000"));
  CHECK(contains(message("{" + base + R"(, "sourc": "y"})"), "c.json: sourc: unknown field"));
  CHECK(contains(message(R"({"schema": "kernelsmith.candidate/1", "language": "glsl", "source": "x"})"),
                 "c.json: language: expected \"cuda\", \"opencl\", \"maca\", \"triton\" or \"pytorch\"; got \"glsl\""));
  CHECK(contains(message("{" + base + R"(, "lineage": {"island": "two"}})"), "c.json: lineage.island: expected an integer"));
  CHECK(contains(message("{" + base + R"(, "lineage": {"parent_ids": [1]}})"), "lineage.parent_ids[0]: expected a string"));
  CHECK(contains(message(R"({"language": "cuda", "source": "x"})"), "missing field \"schema\""));
  CHECK(contains(message("[1, 2]"), "c.json: expected an object"));
  CHECK(contains(message("{,}"), "c.json: not valid JSON"));
}
