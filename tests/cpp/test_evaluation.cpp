// Evaluation: statuses, the failure fitness rule, the JSON round trip over every field (optional ones
// and non-finite numbers included), and the prompt text's content for each kind of outcome.
#include <cmath>
#include <fstream>
#include <limits>
#include <string>

#include "catch.hpp"
#include "kernelsmith/error.hpp"
#include "kernelsmith/evaluation.hpp"

using namespace kernelsmith;

namespace {

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

TimingReport make_timing(double median_ms) {
  TimingReport t;
  t.mode = "strict";
  t.median_ms = median_ms;
  t.mean_ms = median_ms * 1.01;
  t.min_ms = median_ms * 0.98;
  t.noise = 0.0042;
  t.samples = 37;
  t.converged = true;
  t.host_ms = median_ms * 1.2;
  t.l2_flushed = true;
  t.sampling = "graph_replay";
  t.sampling_fallback = "not used: a distinct value for the round trip";
  t.kernels = {{"partial_sums", median_ms * 0.75, 0.75}, {"final_sum", median_ms * 0.25, 0.25}};
  return t;
}

// An evaluation with every field set to a distinct value.
Evaluation full_evaluation() {
  Evaluation e;
  e.candidate_id = "0123456789abcdef";
  e.task = "row_sum";
  e.backend = "cuda";
  e.device = "NVIDIA H100 80GB HBM3";
  e.status = Status::ok;
  e.message = "ok";
  e.compile.ok = true;
  e.compile.log = "ptxas info: Used 32 registers";
  e.compile.target = "sm_90";
  e.compile.seconds = 0.031;
  e.compile.cached = true;
  e.compile.kernels = {{"partial_sums", 32, 0, 0, 0, 1024, 0}, {"final_sum", 40, 8, 12, 16, 0, 4}};
  CorrectnessReport r;
  r.passed = true;
  r.trials = 3;
  r.message = "";
  CorrectnessCheck check;
  check.sizes = "odd_4097";
  check.inputs = "mixed_scale";
  check.seed = 18446744073709551615ULL;
  check.passed = true;
  OutputCheck output;
  output.tensor = "y";
  output.passed = true;
  output.max_abs_error = 1.5e-6;
  output.rel_l2_error = 2.5e-7;
  output.mismatches = 0;
  output.first_mismatch = -1;
  check.outputs = {output};
  check.modified_inputs = {};
  check.message = "passed";
  r.checks = {check, check};
  e.correctness = r;
  e.timing = make_timing(0.125);
  e.baseline_timing = make_timing(0.5);
  e.speedup = 4.0;
  e.baselines = {{"reference", make_timing(0.5)}};
  e.speedups = {{"reference", 4.0}};
  SpeedOfLight s;
  s.flops = 16777216;
  s.bytes = 67125248;
  s.achieved_gbps = 537.0;
  s.achieved_gflops = 134.2;
  s.peak_gbps = 3350.0;
  s.peak_gflops = 67000.0;
  s.bandwidth_fraction = 0.1603;
  s.compute_fraction = 0.002;
  s.fraction = 0.1603;
  e.sol = s;
  e.integrity.flags = {"remeasured"};
  e.integrity.deterministic = true;
  e.integrity.remeasured = true;
  e.integrity.remeasured_speedup = 3.9;
  e.fitness = 4.0;
  e.wall_seconds = 1.75;
  e.placement.host = "node-7";
  e.placement.device_index = 3;
  e.placement.actor = "a1b2c3";
  e.placement.retries = 1;
  HostCodeReport host;
  host.kernels = {{"scale_mask_kernel(float const*, bool const*, float*, float, long, long)", "candidate", 1, 2.5e-6},
                  {"sm90_xmma_gemm_f32f32", "library", 1, 7.5e-6}};
  host.custom_share = 0.25;
  host.custom_calls = 1;
  host.custom_kernel_every_check = true;
  host.ablation = "changed";
  host.policy = "custom_kernel";
  host.notes = {"a note"};
  e.host_code = host;
  return e;
}

}  // namespace

TEST_CASE("statuses round-trip through their names", "[evaluation]") {
  for (Status status : {Status::ok, Status::compile_error, Status::invalid_launch, Status::runtime_error,
                        Status::incorrect, Status::timeout, Status::crashed}) {
    CHECK(parse_status(to_string(status)) == status);
  }
  CHECK(to_string(Status::invalid_launch) == "invalid_launch");
  REQUIRE_THROWS_AS(parse_status("OK"), ValidationError);
}

TEST_CASE("failure fitness orders the failures", "[evaluation]") {
  CHECK(failure_fitness(Status::incorrect) == 0.0);
  CHECK(failure_fitness(Status::runtime_error) == -0.25);
  CHECK(failure_fitness(Status::invalid_launch) == -0.5);
  CHECK(failure_fitness(Status::compile_error) == -0.75);
  CHECK(failure_fitness(Status::timeout) == -1.0);
  CHECK(failure_fitness(Status::crashed) == -1.0);
}

TEST_CASE("evaluation JSON round trip keeps every field", "[evaluation]") {
  const Evaluation e = full_evaluation();
  const std::string json = e.to_json();
  CHECK(contains(json, "\"schema\": \"kernelsmith.evaluation/5\""));
  const Evaluation c = Evaluation::from_json(json);
  CHECK(c.to_json() == json);
  CHECK(c.candidate_id == e.candidate_id);
  CHECK(c.device == e.device);
  CHECK(c.status == Status::ok);
  CHECK(c.compile.cached);
  REQUIRE(c.compile.kernels.size() == 2);
  CHECK(c.compile.kernels[1].spill_load_bytes == 12);
  CHECK(c.compile.kernels[1].local_bytes == 4);
  REQUIRE(c.correctness.has_value());
  CHECK(c.correctness->checks[0].seed == 18446744073709551615ULL);
  CHECK(c.correctness->checks[1].outputs[0].rel_l2_error == e.correctness->checks[1].outputs[0].rel_l2_error);
  REQUIRE(c.timing.has_value());
  CHECK(c.timing->kernels[1].name == "final_sum");
  CHECK(c.timing->kernels[1].share == 0.25);
  CHECK(c.timing->sampling == "graph_replay");
  CHECK(c.timing->sampling_fallback == e.timing->sampling_fallback);
  REQUIRE(c.baseline_timing.has_value());
  CHECK(c.baseline_timing->median_ms == 0.5);
  REQUIRE(c.baselines.size() == 1);
  CHECK(c.baselines.at("reference").median_ms == 0.5);
  CHECK(c.speedups == e.speedups);
  REQUIRE(c.sol.has_value());
  CHECK(c.sol->peak_gbps == 3350.0);
  CHECK(c.integrity.flags == std::vector<std::string>{"remeasured"});
  CHECK(c.integrity.remeasured_speedup == 3.9);
  CHECK(c.fitness == 4.0);
  CHECK(c.wall_seconds == 1.75);
  CHECK(c.placement.host == "node-7");
  CHECK(c.placement.device_index == 3);
  CHECK(c.placement.actor == "a1b2c3");
  CHECK(c.placement.retries == 1);
  REQUIRE(c.host_code.has_value());
  REQUIRE(c.host_code->kernels.size() == 2);
  CHECK(c.host_code->kernels[0].origin == "candidate");
  CHECK(c.host_code->kernels[1].name == "sm90_xmma_gemm_f32f32");
  CHECK(c.host_code->kernels[1].device_seconds == 7.5e-6);
  CHECK(c.host_code->custom_share == 0.25);
  CHECK(c.host_code->custom_kernel_every_check);
  CHECK(c.host_code->ablation == "changed");
  CHECK(c.host_code->notes == std::vector<std::string>{"a note"});
}

TEST_CASE("evaluations of schema version 3 read back with an unknown placement", "[evaluation]") {
  std::string json = full_evaluation().to_json();
  const auto schema = json.find("kernelsmith.evaluation/5");
  REQUIRE(schema != std::string::npos);
  json.replace(schema, 24, "kernelsmith.evaluation/3");
  const auto placement = json.find(",\n  \"placement\"");
  REQUIRE(placement != std::string::npos);
  json.erase(placement, json.find('}', placement) + 1 - placement);
  const Evaluation read = Evaluation::from_json(json);
  CHECK(read.placement.device_index == -1);
  CHECK(read.placement.host.empty());
  CHECK(read.placement.retries == 0);
  CHECK(read.fitness == 4.0);
}

TEST_CASE("absent optional sections stay absent; NaN and infinity survive", "[evaluation]") {
  Evaluation e;
  e.status = Status::incorrect;
  CorrectnessReport r;
  CorrectnessCheck check;
  OutputCheck output;
  output.tensor = "y";
  output.actual = std::numeric_limits<double>::quiet_NaN();
  output.expected = -std::numeric_limits<double>::infinity();
  output.max_abs_error = std::numeric_limits<double>::infinity();
  check.outputs = {output};
  r.checks = {check};
  e.correctness = r;
  const std::string json = e.to_json();
  CHECK(contains(json, "\"timing\": null"));
  CHECK(contains(json, "\"actual\": \"nan\""));
  const Evaluation c = Evaluation::from_json(json);
  CHECK_FALSE(c.timing.has_value());
  CHECK_FALSE(c.baseline_timing.has_value());
  CHECK_FALSE(c.sol.has_value());
  const OutputCheck& back = c.correctness->checks[0].outputs[0];
  CHECK(std::isnan(back.actual));
  CHECK(std::isinf(back.expected));
  CHECK(back.expected < 0);
  CHECK(std::isinf(back.max_abs_error));
  CHECK(c.to_json() == json);
  // A minimal document: only schema and status are required.
  const Evaluation minimal = Evaluation::from_json(R"({"schema": "kernelsmith.evaluation/1", "status": "timeout"})");
  CHECK(minimal.status == Status::timeout);
  CHECK_FALSE(minimal.correctness.has_value());
}

TEST_CASE("evaluation JSON errors name the field", "[evaluation]") {
  auto message = [](const std::string& json) -> std::string {
    try {
      Evaluation::from_json(json, "e.json");
    } catch (const ValidationError& error) {
      return error.what();
    }
    FAIL("expected ValidationError");
    return {};
  };
  CHECK(contains(message(R"({"schema": "kernelsmith.evaluation/1", "status": "fine"})"), "e.json: status: expected one of"));
  CHECK(contains(message(R"({"schema": "kernelsmith.evaluation/0", "status": "ok"})"), "e.json: schema"));
  CHECK(contains(message(R"({"schema": "kernelsmith.evaluation/1", "status": "ok", "speed": 2})"), "e.json: speed: unknown field"));
  CHECK(contains(message(R"({"schema": "kernelsmith.evaluation/1", "status": "ok", "timing": {"samples": 1.5}})"),
                 "e.json: timing.samples: expected an integer"));
  CHECK(contains(message(R"({"schema": "kernelsmith.evaluation/1", "status": "ok",
                            "correctness": {"checks": [{"outputs": [{"max_abs_error": "big"}]}]}})"),
                 "correctness.checks[0].outputs[0].max_abs_error: expected a number"));
}

TEST_CASE("the evaluation example of docs/evaluation-schema.md reads back", "[evaluation][docs]") {
  std::ifstream stream(std::string(KERNELSMITH_SOURCE_DIR) + "/docs/examples/evaluation_incorrect.json");
  REQUIRE(stream.good());
  const std::string json((std::istreambuf_iterator<char>(stream)), std::istreambuf_iterator<char>());
  const Evaluation e = Evaluation::from_json(json, "docs/examples/evaluation_incorrect.json");
  CHECK(e.status == Status::incorrect);
  CHECK(e.fitness == failure_fitness(Status::incorrect));
  REQUIRE(e.correctness.has_value());
  CHECK_FALSE(e.correctness->passed);
  CHECK(contains(e.to_prompt_text(), "never written"));
  // The rendering shown in the schema document is the real one.
  std::ifstream doc(std::string(KERNELSMITH_SOURCE_DIR) + "/docs/evaluation-schema.md");
  REQUIRE(doc.good());
  const std::string markdown((std::istreambuf_iterator<char>(doc)), std::istreambuf_iterator<char>());
  CHECK(contains(markdown, "```\n" + e.to_prompt_text() + "```\n"));
}

TEST_CASE("prompt text for an ok evaluation carries the numbers", "[evaluation]") {
  const std::string text = full_evaluation().to_prompt_text();
  INFO(text);
  CHECK(contains(text, "Status: ok"));
  CHECK(contains(text, "Correct on all 2 checks"));
  CHECK(contains(text, "0.125 ms median"));
  CHECK(contains(text, "0.42% noise"));
  CHECK(contains(text, "37 samples"));
  CHECK(contains(text, "baseline 0.5 ms"));
  CHECK(contains(text, "speedup 4x"));
  CHECK(contains(text, "16.0% of it"));
  CHECK(contains(text, "537 GB/s"));
  CHECK(contains(text, "partial_sums 0.09375 ms (75%)"));
  CHECK(contains(text, "final_sum: 40 registers, spills 8 B stored / 12 B loaded"));
  CHECK(contains(text, "Integrity flags: remeasured (re-measured speedup 3.9x)"));
}

TEST_CASE("an oracle task's evaluation carries its PyTorch baselines through JSON and the prompt", "[evaluation]") {
  Evaluation e = full_evaluation();
  e.baselines = {{"eager", make_timing(0.5)}, {"compile", make_timing(0.25)}};
  e.speedups = {{"eager", 4.0}, {"compile", 2.0}, {"compile_max_autotune", 0.0}};
  e.baseline_errors = {{"compile_max_autotune", "torch.compile (compile_max_autotune) failed: InductorError"}};
  const Evaluation c = Evaluation::from_json(e.to_json());
  CHECK(c.to_json() == e.to_json());
  REQUIRE(c.baselines.size() == 2);
  CHECK(c.baselines.at("compile").median_ms == 0.25);
  CHECK(c.speedups == e.speedups);
  CHECK(c.baseline_errors == e.baseline_errors);
  const std::string text = c.to_prompt_text();
  INFO(text);
  CHECK(contains(text, "Speedup: 4x over PyTorch eager (0.5 ms); 2x over torch.compile (0.25 ms); torch.compile "
                       "max-autotune not timed (torch.compile (compile_max_autotune) failed: InductorError)."));
  CHECK_FALSE(contains(text, "over the baseline"));
  // Documents of version 2 (no baselines) are still read.
  const Evaluation v2 = Evaluation::from_json(R"({"schema": "kernelsmith.evaluation/2", "status": "ok", "speedup": 2})");
  CHECK(v2.speedup == 2.0);
  CHECK(v2.baselines.empty());
}

TEST_CASE("prompt text for an incorrect evaluation shows the first failure", "[evaluation]") {
  Evaluation e;
  e.status = Status::incorrect;
  e.message = "output y differs from the reference";
  CorrectnessReport r;
  CorrectnessCheck good;
  good.sizes = "timing";
  good.inputs = "random";
  good.passed = true;
  CorrectnessCheck bad;
  bad.sizes = "odd_4097";
  bad.inputs = "large";
  bad.seed = 77;
  bad.passed = false;
  OutputCheck output;
  output.tensor = "y";
  output.passed = false;
  output.max_abs_error = 3.25;
  output.rel_l2_error = 0.0123;
  output.mismatches = 17;
  output.unwritten = 1;
  output.first_mismatch = 4096;
  output.expected = 1.5;
  output.actual = -2.0;
  bad.outputs = {output};
  bad.modified_inputs = {"x"};
  r.checks = {good, bad, bad};
  e.correctness = r;
  const std::string text = e.to_prompt_text();
  INFO(text);
  CHECK(contains(text, "Status: incorrect: output y differs from the reference"));
  CHECK(contains(text, "sizes \"odd_4097\", inputs \"large\" (seed 77)"));
  CHECK(contains(text, "max abs error 3.25"));
  CHECK(contains(text, "relative L2 error 0.0123"));
  CHECK(contains(text, "17 mismatching"));
  CHECK(contains(text, "flat index 4096: expected 1.5, got -2"));
  CHECK(contains(text, "1 element(s) never written"));
  CHECK(contains(text, "modified input(s): x"));
  CHECK(contains(text, "Checks passed: 1 of 3"));
}

TEST_CASE("prompt text for a compile error keeps the head of the log", "[evaluation]") {
  Evaluation e;
  e.status = Status::compile_error;
  e.message = "NVRTC rejected the source";
  for (int i = 1; i <= 45; ++i) e.compile.log += "kernel.cu(" + std::to_string(i) + "): error: line " + std::to_string(i) + "\n";
  const std::string text = e.to_prompt_text();
  CHECK(contains(text, "Status: compile_error: NVRTC rejected the source"));
  CHECK(contains(text, "first 30 of 45 lines"));
  CHECK(contains(text, "kernel.cu(30): error"));
  CHECK_FALSE(contains(text, "kernel.cu(31)"));

  Evaluation launch;
  launch.status = Status::invalid_launch;
  launch.message = "line 3: @launch: grid evaluates to 0";
  CHECK(contains(launch.to_prompt_text(), "Status: invalid_launch: line 3: @launch: grid evaluates to 0"));
}
