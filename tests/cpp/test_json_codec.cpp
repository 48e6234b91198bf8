// The one JSON codec (lib/json_codec.hpp): the public to_json()/from_json() are its documents, nested
// documents (as the worker's messages carry them) name their path in errors, and every type it covers
// reads back what it wrote.
#include <string>

#include "catch.hpp"
#include "json_codec.hpp"
#include "kernelsmith/error.hpp"
#include "kernelsmith/task.hpp"
#include "test_support.hpp"

using namespace kernelsmith;
using detail::Json;
using detail::JsonField;
using test::contains;
using test::error_of;

namespace {

Candidate sample_candidate() {
  Candidate candidate;
  candidate.language = "opencl";
  candidate.source = "__kernel void k(__global float* x) { x[0] = 1.0f; }\n";
  candidate.lineage.parent_ids = {"0123456789abcdef", "fedcba9876543210"};
  candidate.lineage.island = 2;
  candidate.lineage.generation = 7;
  candidate.lineage.origin = "llm_crossover";
  return candidate;
}

Evaluation sample_evaluation() {
  Evaluation evaluation;
  evaluation.candidate_id = sample_candidate().id();
  evaluation.task = "relu";
  evaluation.backend = "opencl";
  evaluation.device = "cpu";
  evaluation.status = Status::ok;
  evaluation.message = "ok";
  evaluation.compile.ok = true;
  evaluation.compile.kernels = {{"k", 12, 0, 0, 0, 256, 0}};
  TimingReport timing;
  timing.mode = "screen";
  timing.median_ms = 0.25;
  timing.samples = 9;
  timing.kernels = {{"k", 0.25, 1.0}};
  evaluation.timing = timing;
  evaluation.speedup = 1.5;
  evaluation.fitness = 1.5;
  evaluation.stage_seconds = {{"compile", 0.125}, {"timing", 0.5}};
  return evaluation;
}

}  // namespace

TEST_CASE("the public JSON of candidates, evaluations and tasks is the codec's document", "[json_codec]") {
  const Candidate candidate = sample_candidate();
  CHECK(candidate.to_json() == detail::candidate_to_json(candidate).dump(2));
  const Evaluation evaluation = sample_evaluation();
  CHECK(evaluation.to_json() == detail::evaluation_to_json(evaluation).dump(2));
  const Task task = Task::load("relu");
  CHECK(task.to_json() == detail::task_to_json(task).dump(2));
}

TEST_CASE("nested documents are objects and read back from where they sit", "[json_codec]") {
  // As in a worker's evaluate request and its reply: the documents sit under a key, as objects.
  const Json request = {{"type", "evaluate"},
                        {"candidate", detail::candidate_to_json(sample_candidate())},
                        {"evaluation", detail::evaluation_to_json(sample_evaluation())},
                        {"task", detail::task_to_json(Task::load("relu"))}};
  REQUIRE(request.at("candidate").is_object());
  REQUIRE(request.at("evaluation").is_object());
  REQUIRE(request.at("task").is_object());

  const Candidate candidate = detail::candidate_from_json(JsonField(request.at("candidate"), "<request>", "candidate"));
  CHECK(candidate.id() == sample_candidate().id());
  CHECK(candidate.lineage.parent_ids == sample_candidate().lineage.parent_ids);
  CHECK(candidate.lineage.origin == "llm_crossover");

  const Evaluation evaluation =
      detail::evaluation_from_json(JsonField(request.at("evaluation"), "<reply>", "evaluation"));
  CHECK(evaluation.to_json() == sample_evaluation().to_json());

  const Task task = detail::task_from_json(JsonField(request.at("task"), "<request>", "task"), {});
  CHECK(task.to_json() == Task::load("relu").to_json());
}

TEST_CASE("errors in a nested document name the document and the field's full path", "[json_codec]") {
  Json reply = {{"evaluation", detail::evaluation_to_json(sample_evaluation())}};
  reply["evaluation"]["status"] = "fast";
  const std::string message =
      error_of([&] { detail::evaluation_from_json(JsonField(reply.at("evaluation"), "<worker reply>", "evaluation")); });
  CHECK(contains(message, "<worker reply>"));
  CHECK(contains(message, "evaluation.status"));
  CHECK(contains(message, "\"incorrect\""));

  Json request = {{"candidate", detail::candidate_to_json(sample_candidate())}};
  request["candidate"]["source"] = "changed after the id was written";
  const std::string stale =
      error_of([&] { detail::candidate_from_json(JsonField(request.at("candidate"), "<request>", "candidate")); });
  CHECK(contains(stale, "candidate.id"));
  CHECK(contains(stale, "does not match the content"));

  request["candidate"] = detail::candidate_to_json(sample_candidate());
  request["candidate"]["language"] = "fortran";
  CHECK(contains(error_of([&] { detail::candidate_from_json(JsonField(request.at("candidate"), "<r>", "candidate")); }),
                 "candidate.language"));
}

TEST_CASE("task_from_json reads the fields; Task::validate judges the whole", "[json_codec]") {
  Json document = detail::task_to_json(Task::load("relu"));
  // Every tensor an input: readable field by field, but not a task.
  for (auto& tensor : document["tensors"]) tensor["role"] = "input";
  const Task read = detail::task_from_json(JsonField(document, "<manifest>"), {});
  CHECK(read.tensors.size() == Task::load("relu").tensors.size());
  CHECK(contains(error_of([&] { read.validate("<manifest>"); }), "role \"output\""));
  // Task::from_json runs both.
  CHECK(contains(error_of([&] { Task::from_json(document.dump(), "<manifest>"); }), "role \"output\""));
}

TEST_CASE("devices, evaluator options and compiled programs read back what was written", "[json_codec]") {
  DeviceInfo device;
  device.backend = "cuda";
  device.index = 1;
  device.name = "NVIDIA H100 80GB HBM3";
  device.architecture = "sm_90";
  device.compute_units = 132;
  device.shared_per_block = 49152;
  device.shared_per_block_optin = 232448;
  device.global_memory_bytes = std::int64_t(80) << 30;
  device.max_allocation_bytes = std::int64_t(20) << 30;
  device.is_gpu = true;
  const DeviceInfo device_back = detail::device_from_json(detail::device_to_json(device));
  CHECK(device_back.max_allocation_bytes == device.max_allocation_bytes);
  CHECK(detail::device_to_json(device_back) == detail::device_to_json(device));

  EvaluatorOptions options;
  options.mode = "strict";
  options.seed = 0xfeedfacecafebeefULL;
  options.deadline_seconds = 12.5;
  options.cache_dir = "/tmp/somewhere";
  const EvaluatorOptions options_back = detail::evaluator_options_from_json(detail::evaluator_options_to_json(options));
  CHECK(detail::evaluator_options_to_json(options_back) == detail::evaluator_options_to_json(options));
  CHECK(options_back.seed == 0xfeedfacecafebeefULL);

  CompiledProgram program;
  program.language = "cuda";
  program.target = "sm_90a";
  program.binary = {0x7f, 'E', 'L', 'F', 0x00, 0x01, 0xff};
  program.symbols = {{"relu", "relu"}};
  program.report.ok = true;
  program.report.kernels = {{"relu", 16, 0, 0, 0, 0, 0}};
  const CompiledProgram program_back = detail::compiled_program_from_text(detail::compiled_program_to_text(program));
  CHECK(program_back.binary == program.binary);
  CHECK(program_back.symbols == program.symbols);
  CHECK(program_back.report.kernels.at(0).registers == 16);
  CHECK(contains(error_of([] { detail::compiled_program_from_text("{\"language\": 3}"); }),
                 "not a compiled-program document"));
}
