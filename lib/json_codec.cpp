// The JSON codecs of the types that cross a boundary (json_codec.hpp says why they live together).
#include "json_codec.hpp"

#include <fmt/format.h>

#include <cmath>

#include "detail/base64.hpp"
#include "detail/contained_path.hpp"
#include "detail/file_cache.hpp"
#include "detail/text.hpp"
#include "kernelsmith/error.hpp"
#include "kernelsmith/language.hpp"
#include "task_cases.hpp"

namespace kernelsmith::detail {

void read_field(const JsonField& object, const char* key, std::string& out) {
  if (auto field = object.optional(key)) out = field->string();
}
void read_field(const JsonField& object, const char* key, bool& out) {
  if (auto field = object.optional(key)) out = field->boolean();
}
void read_field(const JsonField& object, const char* key, double& out) {
  if (auto field = object.optional(key)) out = field->number();
}
void read_field(const JsonField& object, const char* key, int& out) {
  if (auto field = object.optional(key)) out = field->int32();
}
void read_field(const JsonField& object, const char* key, std::int64_t& out) {
  if (auto field = object.optional(key)) out = field->integer();
}
void read_field(const JsonField& object, const char* key, std::uint64_t& out) {
  if (auto field = object.optional(key)) out = field->unsigned_integer();
}
void read_field(const JsonField& object, const char* key, std::vector<std::string>& out) {
  if (auto field = object.optional(key)) {
    for (const auto& element : field->elements()) out.push_back(element.string());
  }
}

Json kernel_resources_to_json(const KernelResources& k) {
  return Json{{"name", k.name},
              {"registers", k.registers},
              {"spill_store_bytes", k.spill_store_bytes},
              {"spill_load_bytes", k.spill_load_bytes},
              {"stack_bytes", k.stack_bytes},
              {"shared_bytes", k.shared_bytes},
              {"local_bytes", k.local_bytes}};
}

Json compile_report_to_json(const CompileReport& c) {
  Json kernels = Json::array();
  for (const auto& k : c.kernels) kernels.push_back(kernel_resources_to_json(k));
  return Json{{"ok", c.ok},         {"log", c.log},       {"target", c.target},
              {"seconds", json_number(c.seconds)}, {"cached", c.cached}, {"kernels", kernels}};
}

KernelResources kernel_resources_from_json(const JsonField& e) {
  e.expect_object({"name", "registers", "spill_store_bytes", "spill_load_bytes", "stack_bytes", "shared_bytes",
                   "local_bytes"});
  KernelResources k;
  read_field(e, "name", k.name);
  read_field(e, "registers", k.registers);
  read_field(e, "spill_store_bytes", k.spill_store_bytes);
  read_field(e, "spill_load_bytes", k.spill_load_bytes);
  read_field(e, "stack_bytes", k.stack_bytes);
  read_field(e, "shared_bytes", k.shared_bytes);
  read_field(e, "local_bytes", k.local_bytes);
  return k;
}

CompileReport compile_report_from_json(const JsonField& f) {
  f.expect_object({"ok", "log", "target", "seconds", "cached", "kernels"});
  CompileReport c;
  read_field(f, "ok", c.ok);
  read_field(f, "log", c.log);
  read_field(f, "target", c.target);
  read_field(f, "seconds", c.seconds);
  read_field(f, "cached", c.cached);
  if (auto kernels = f.optional("kernels")) {
    for (const auto& e : kernels->elements()) c.kernels.push_back(kernel_resources_from_json(e));
  }
  return c;
}

Json evaluator_options_to_json(const EvaluatorOptions& o) {
  return {{"backend", o.backend},
          {"device", o.device},
          {"mode", o.mode},
          {"correctness_trials", o.correctness_trials},
          {"screen_correctness_trials", o.screen_correctness_trials},
          {"adversarial_inputs", o.adversarial_inputs},
          {"screen_adversarial_timing_sizes", o.screen_adversarial_timing_sizes},
          {"schedule_check", o.schedule_check},
          {"screen_schedule_check", o.screen_schedule_check},
          {"seed", o.seed},
          {"noise_target", o.noise_target},
          {"min_samples", o.min_samples},
          {"strict_min_samples", o.strict_min_samples},
          {"strict_max_samples", o.strict_max_samples},
          {"max_samples", o.max_samples},
          {"screen_budget_seconds", o.screen_budget_seconds},
          {"strict_budget_seconds", o.strict_budget_seconds},
          {"flush_l2", o.flush_l2},
          {"suspicious_speedup", o.suspicious_speedup},
          {"deadline_seconds", o.deadline_seconds},
          {"compile_timeout_seconds", o.compile_timeout_seconds},
          {"host_code_build_seconds", o.host_code_build_seconds},
          {"host_code_policy", o.host_code_policy},
          {"oracle_timeout_seconds", o.oracle_timeout_seconds},
          {"compile_threads", o.compile_threads},
          {"isolate", o.isolate},
          {"cache_dir", o.cache_dir},
          {"use_disk_cache", o.use_disk_cache},
          {"baseline_session", o.baseline_session}};
}

EvaluatorOptions evaluator_options_from_json(const Json& j) {
  EvaluatorOptions o;
  o.backend = j.at("backend").get<std::string>();
  o.device = j.at("device").get<int>();
  o.mode = j.at("mode").get<std::string>();
  o.correctness_trials = j.at("correctness_trials").get<int>();
  o.screen_correctness_trials = j.at("screen_correctness_trials").get<int>();
  o.adversarial_inputs = j.at("adversarial_inputs").get<bool>();
  o.screen_adversarial_timing_sizes = j.at("screen_adversarial_timing_sizes").get<bool>();
  o.schedule_check = j.at("schedule_check").get<bool>();
  o.screen_schedule_check = j.at("screen_schedule_check").get<bool>();
  o.seed = j.at("seed").get<std::uint64_t>();
  o.noise_target = j.at("noise_target").get<double>();
  o.min_samples = j.at("min_samples").get<int>();
  o.strict_min_samples = j.at("strict_min_samples").get<int>();
  o.strict_max_samples = j.at("strict_max_samples").get<int>();
  o.max_samples = j.at("max_samples").get<int>();
  o.screen_budget_seconds = j.at("screen_budget_seconds").get<double>();
  o.strict_budget_seconds = j.at("strict_budget_seconds").get<double>();
  o.flush_l2 = j.at("flush_l2").get<bool>();
  o.suspicious_speedup = j.at("suspicious_speedup").get<double>();
  o.deadline_seconds = j.at("deadline_seconds").get<double>();
  o.compile_timeout_seconds = j.at("compile_timeout_seconds").get<double>();
  o.host_code_build_seconds = j.at("host_code_build_seconds").get<double>();
  o.host_code_policy = j.value("host_code_policy", std::string("custom_kernel"));
  o.oracle_timeout_seconds = j.at("oracle_timeout_seconds").get<double>();
  o.compile_threads = j.at("compile_threads").get<int>();
  o.isolate = j.at("isolate").get<bool>();
  o.cache_dir = j.at("cache_dir").get<std::string>();
  o.use_disk_cache = j.at("use_disk_cache").get<bool>();
  o.baseline_session = j.value("baseline_session", std::string());
  return o;
}

Json kernel_binary_to_json(const KernelBinary& k) {
  return {{"name", k.name},
          {"symbol", k.symbol},
          {"binary", base64_encode(k.binary)},
          {"block_threads", k.block_threads},
          {"num_ctas", k.num_ctas},
          {"shared_bytes", k.shared_bytes},
          {"scratch_pointers", k.scratch_pointers},
          {"global_scratch_bytes", k.global_scratch_bytes},
          {"global_scratch_align", k.global_scratch_align},
          {"profile_scratch_bytes", k.profile_scratch_bytes},
          {"profile_scratch_align", k.profile_scratch_align},
          {"param_count", k.param_count}};
}

KernelBinary kernel_binary_from_json(const Json& j) {
  KernelBinary k;
  k.name = j.at("name").get<std::string>();
  k.symbol = j.at("symbol").get<std::string>();
  k.binary = base64_decode(j.at("binary").get<std::string>());
  k.block_threads = j.at("block_threads").get<int>();
  k.num_ctas = j.at("num_ctas").get<int>();
  k.shared_bytes = j.at("shared_bytes").get<std::size_t>();
  k.scratch_pointers = j.at("scratch_pointers").get<int>();
  k.global_scratch_bytes = j.at("global_scratch_bytes").get<std::size_t>();
  k.global_scratch_align = j.at("global_scratch_align").get<std::size_t>();
  k.profile_scratch_bytes = j.at("profile_scratch_bytes").get<std::size_t>();
  k.profile_scratch_align = j.at("profile_scratch_align").get<std::size_t>();
  k.param_count = j.at("param_count").get<int>();
  return k;
}

Json compiled_program_to_json(const CompiledProgram& program) {
  Json kernel_binaries = Json::array();
  for (const auto& k : program.kernel_binaries) kernel_binaries.push_back(kernel_binary_to_json(k));
  return {{"language", program.language},
          {"target", program.target},
          {"binary", base64_encode(program.binary)},
          {"symbols", program.symbols},
          {"kernel_binaries", kernel_binaries},
          {"report", compile_report_to_json(program.report)}};
}

CompiledProgram compiled_program_from_json(const Json& j) {
  CompiledProgram program;
  program.language = j.at("language").get<std::string>();
  program.target = j.at("target").get<std::string>();
  program.binary = base64_decode(j.at("binary").get<std::string>());
  program.symbols = j.at("symbols").get<std::map<std::string, std::string>>();
  // Absent from documents written before front ends compiled kernels one by one (compile cache entries).
  if (j.contains("kernel_binaries")) {
    for (const auto& k : j.at("kernel_binaries")) program.kernel_binaries.push_back(kernel_binary_from_json(k));
  }
  program.report = compile_report_from_json(JsonField(j.at("report"), "<compiled program>", "report"));
  return program;
}

std::string compiled_program_to_text(const CompiledProgram& program) {
  return compiled_program_to_json(program).dump();
}

CompiledProgram compiled_program_from_text(const std::string& text) {
  try {
    return compiled_program_from_json(parse_json(text, "<compiled program>"));
  } catch (const std::exception& e) {
    throw ValidationError(fmt::format("not a compiled-program document: {}", e.what()));
  }
}

// ---------------------------------------------------------------------------------------------- device

Json device_to_json(const DeviceInfo& d) {
  return {{"backend", d.backend},
          {"index", d.index},
          {"name", d.name},
          {"vendor", d.vendor},
          {"platform", d.platform},
          {"architecture", d.architecture},
          {"driver_version", d.driver_version},
          {"compute_units", d.compute_units},
          {"warp_size", d.warp_size},
          {"max_threads_per_block", d.max_threads_per_block},
          {"shared_per_block", d.shared_per_block},
          {"shared_per_block_optin", d.shared_per_block_optin},
          {"l2_bytes", d.l2_bytes},
          {"global_memory_bytes", d.global_memory_bytes},
          {"max_allocation_bytes", d.max_allocation_bytes},
          {"clock_mhz", d.clock_mhz},
          {"is_gpu", d.is_gpu}};
}

DeviceInfo device_from_json(const Json& j) {
  DeviceInfo d;
  d.backend = j.at("backend").get<std::string>();
  d.index = j.at("index").get<int>();
  d.name = j.at("name").get<std::string>();
  d.vendor = j.at("vendor").get<std::string>();
  d.platform = j.at("platform").get<std::string>();
  d.architecture = j.at("architecture").get<std::string>();
  d.driver_version = j.at("driver_version").get<std::string>();
  d.compute_units = j.at("compute_units").get<int>();
  d.warp_size = j.at("warp_size").get<int>();
  d.max_threads_per_block = j.at("max_threads_per_block").get<int>();
  d.shared_per_block = j.at("shared_per_block").get<std::int64_t>();
  d.shared_per_block_optin = j.at("shared_per_block_optin").get<std::int64_t>();
  d.l2_bytes = j.at("l2_bytes").get<std::int64_t>();
  d.global_memory_bytes = j.at("global_memory_bytes").get<std::int64_t>();
  d.max_allocation_bytes = j.at("max_allocation_bytes").get<std::int64_t>();
  d.clock_mhz = j.at("clock_mhz").get<int>();
  d.is_gpu = j.at("is_gpu").get<bool>();
  return d;
}

// ---------------------------------------------------------------------------------------------- candidate

Json candidate_to_json(const Candidate& candidate) {
  Json json;
  json["schema"] = kCandidateSchema;
  json["id"] = candidate.id();
  json["language"] = candidate.language;
  json["source"] = candidate.source;
  json["lineage"] = Json{{"parent_ids", candidate.lineage.parent_ids},
                         {"island", candidate.lineage.island},
                         {"generation", candidate.lineage.generation},
                         {"origin", candidate.lineage.origin}};
  return json;
}

Candidate candidate_from_json(const JsonField& root) {
  root.expect_object({"schema", "id", "language", "source", "lineage"});
  const JsonField schema = root["schema"];
  if (schema.string() != kCandidateSchema) schema.fail_expected(fmt::format("\"{}\"", kCandidateSchema));
  Candidate candidate;
  const JsonField language = root["language"];
  candidate.language = language.string();
  if (find_kernel_language(candidate.language) == nullptr) {
    // "\"cuda\", \"opencl\", \"maca\" or \"triton\"": the table's names quoted, the last joined by "or".
    std::string expected;
    const auto& languages = kernel_languages();
    for (std::size_t i = 0; i < languages.size(); ++i) {
      expected += (i == 0 ? "" : i + 1 == languages.size() ? " or " : ", ") + ("\"" + languages[i].name + "\"");
    }
    language.fail_expected(expected);
  }
  candidate.source = root["source"].string();
  if (auto lineage = root.optional("lineage")) {
    lineage->expect_object({"parent_ids", "island", "generation", "origin"});
    if (auto parents = lineage->optional("parent_ids")) {
      for (const auto& parent : parents->elements()) candidate.lineage.parent_ids.push_back(parent.string());
    }
    if (auto island = lineage->optional("island")) candidate.lineage.island = island->int32();
    if (auto generation = lineage->optional("generation")) candidate.lineage.generation = generation->int32();
    if (auto made = lineage->optional("origin")) candidate.lineage.origin = made->string();
  }
  // The id is derived, not stored: a stated id that disagrees means the source was edited or damaged.
  if (auto id = root.optional("id")) {
    if (id->string() != candidate.id()) {
      id->fail(fmt::format("the stated id {} does not match the content (its id is {}); remove \"id\" after editing "
                           "the source",
                           id->string(), candidate.id()));
    }
  }
  return candidate;
}

// ---------------------------------------------------------------------------------------------- evaluation

namespace {

// ---------------------------------------------------------------------------------------------- writing

Json output_check_json(const OutputCheck& o) {
  return Json{{"tensor", o.tensor},
              {"passed", o.passed},
              {"max_abs_error", json_number(o.max_abs_error)},
              {"rel_l2_error", json_number(o.rel_l2_error)},
              {"mismatches", o.mismatches},
              {"unwritten", o.unwritten},
              {"non_finite", o.non_finite},
              {"first_mismatch", o.first_mismatch},
              {"expected", json_number(o.expected)},
              {"actual", json_number(o.actual)}};
}

Json correctness_json(const CorrectnessReport& r) {
  Json checks = Json::array();
  for (const auto& check : r.checks) {
    Json outputs = Json::array();
    for (const auto& output : check.outputs) outputs.push_back(output_check_json(output));
    checks.push_back(Json{{"sizes", check.sizes},
                          {"inputs", check.inputs},
                          {"seed", check.seed},
                          {"passed", check.passed},
                          {"outputs", outputs},
                          {"modified_inputs", check.modified_inputs},
                          {"message", check.message}});
  }
  return Json{{"passed", r.passed}, {"trials", r.trials}, {"checks", checks}, {"message", r.message}};
}

Json timing_json(const TimingReport& t) {
  Json kernels = Json::array();
  for (const auto& k : t.kernels) {
    kernels.push_back(Json{{"name", k.name}, {"median_ms", json_number(k.median_ms)}, {"share", json_number(k.share)}});
  }
  return Json{{"mode", t.mode},
              {"median_ms", json_number(t.median_ms)},
              {"mean_ms", json_number(t.mean_ms)},
              {"min_ms", json_number(t.min_ms)},
              {"noise", json_number(t.noise)},
              {"samples", t.samples},
              {"converged", t.converged},
              {"host_ms", json_number(t.host_ms)},
              {"l2_flushed", t.l2_flushed},
              {"sampling", t.sampling},
              {"sampling_fallback", t.sampling_fallback},
              {"kernels", kernels}};
}

Json sol_json(const SpeedOfLight& s) {
  return Json{{"flops", json_number(s.flops)},
              {"bytes", json_number(s.bytes)},
              {"achieved_gbps", json_number(s.achieved_gbps)},
              {"achieved_gflops", json_number(s.achieved_gflops)},
              {"peak_gbps", json_number(s.peak_gbps)},
              {"peak_gflops", json_number(s.peak_gflops)},
              {"bandwidth_fraction", json_number(s.bandwidth_fraction)},
              {"compute_fraction", json_number(s.compute_fraction)},
              {"fraction", json_number(s.fraction)}};
}

// ---------------------------------------------------------------------------------------------- reading
// Every field but "schema" and "status" may be absent; it then keeps the struct's default.

OutputCheck read_output_check(const JsonField& f) {
  f.expect_object({"tensor", "passed", "max_abs_error", "rel_l2_error", "mismatches", "unwritten", "non_finite",
                   "first_mismatch", "expected", "actual"});
  OutputCheck o;
  read_field(f, "tensor", o.tensor);
  read_field(f, "passed", o.passed);
  read_field(f, "max_abs_error", o.max_abs_error);
  read_field(f, "rel_l2_error", o.rel_l2_error);
  read_field(f, "mismatches", o.mismatches);
  read_field(f, "unwritten", o.unwritten);
  read_field(f, "non_finite", o.non_finite);
  read_field(f, "first_mismatch", o.first_mismatch);
  read_field(f, "expected", o.expected);
  read_field(f, "actual", o.actual);
  return o;
}

CorrectnessReport read_correctness(const JsonField& f) {
  f.expect_object({"passed", "trials", "checks", "message"});
  CorrectnessReport r;
  read_field(f, "passed", r.passed);
  read_field(f, "trials", r.trials);
  read_field(f, "message", r.message);
  if (auto checks = f.optional("checks")) {
    for (const auto& e : checks->elements()) {
      e.expect_object({"sizes", "inputs", "seed", "passed", "outputs", "modified_inputs", "message"});
      CorrectnessCheck check;
      read_field(e, "sizes", check.sizes);
      read_field(e, "inputs", check.inputs);
      read_field(e, "seed", check.seed);
      read_field(e, "passed", check.passed);
      if (auto outputs = e.optional("outputs")) {
        for (const auto& o : outputs->elements()) check.outputs.push_back(read_output_check(o));
      }
      read_field(e, "modified_inputs", check.modified_inputs);
      read_field(e, "message", check.message);
      r.checks.push_back(check);
    }
  }
  return r;
}

TimingReport read_timing(const JsonField& f) {
  f.expect_object(
      {"mode", "median_ms", "mean_ms", "min_ms", "noise", "samples", "converged", "host_ms", "l2_flushed", "sampling",
       "sampling_fallback", "kernels"});
  TimingReport t;
  read_field(f, "mode", t.mode);
  read_field(f, "median_ms", t.median_ms);
  read_field(f, "mean_ms", t.mean_ms);
  read_field(f, "min_ms", t.min_ms);
  read_field(f, "noise", t.noise);
  read_field(f, "samples", t.samples);
  read_field(f, "converged", t.converged);
  read_field(f, "host_ms", t.host_ms);
  read_field(f, "l2_flushed", t.l2_flushed);
  read_field(f, "sampling", t.sampling);
  read_field(f, "sampling_fallback", t.sampling_fallback);
  if (auto kernels = f.optional("kernels")) {
    for (const auto& e : kernels->elements()) {
      e.expect_object({"name", "median_ms", "share"});
      KernelTime k;
      read_field(e, "name", k.name);
      read_field(e, "median_ms", k.median_ms);
      read_field(e, "share", k.share);
      t.kernels.push_back(k);
    }
  }
  return t;
}

SpeedOfLight read_sol(const JsonField& f) {
  f.expect_object({"flops", "bytes", "achieved_gbps", "achieved_gflops", "peak_gbps", "peak_gflops",
                   "bandwidth_fraction", "compute_fraction", "fraction"});
  SpeedOfLight s;
  read_field(f, "flops", s.flops);
  read_field(f, "bytes", s.bytes);
  read_field(f, "achieved_gbps", s.achieved_gbps);
  read_field(f, "achieved_gflops", s.achieved_gflops);
  read_field(f, "peak_gbps", s.peak_gbps);
  read_field(f, "peak_gflops", s.peak_gflops);
  read_field(f, "bandwidth_fraction", s.bandwidth_fraction);
  read_field(f, "compute_fraction", s.compute_fraction);
  read_field(f, "fraction", s.fraction);
  return s;
}

IntegrityReport read_integrity(const JsonField& f) {
  f.expect_object({"flags", "deterministic", "remeasured", "remeasured_speedup", "unconfined"});
  IntegrityReport i;
  read_field(f, "flags", i.flags);
  read_field(f, "deterministic", i.deterministic);
  read_field(f, "remeasured", i.remeasured);
  read_field(f, "remeasured_speedup", i.remeasured_speedup);
  read_field(f, "unconfined", i.unconfined);
  return i;
}

}  // namespace

Json timing_report_to_json(const TimingReport& timing) { return timing_json(timing); }
TimingReport timing_report_from_json(const JsonField& field) { return read_timing(field); }

Json evaluation_to_json(const Evaluation& e) {
  Json json;
  json["schema"] = kEvaluationSchema;
  json["candidate_id"] = e.candidate_id;
  json["task"] = e.task;
  json["backend"] = e.backend;
  json["device"] = e.device;
  json["status"] = to_string(e.status);
  json["message"] = e.message;
  json["compile"] = compile_report_to_json(e.compile);
  json["correctness"] = e.correctness ? correctness_json(*e.correctness) : Json(nullptr);
  json["timing"] = e.timing ? timing_json(*e.timing) : Json(nullptr);
  json["baseline_timing"] = e.baseline_timing ? timing_json(*e.baseline_timing) : Json(nullptr);
  json["speedup"] = json_number(e.speedup);
  Json baselines = Json::object();
  for (const auto& [name, timing] : e.baselines) baselines[name] = timing_json(timing);
  json["baselines"] = baselines;
  Json speedups = Json::object();
  for (const auto& [name, speedup] : e.speedups) speedups[name] = json_number(speedup);
  json["speedups"] = speedups;
  json["baseline_errors"] = e.baseline_errors;
  json["sol"] = e.sol ? sol_json(*e.sol) : Json(nullptr);
  json["integrity"] = Json{{"flags", e.integrity.flags},
                           {"deterministic", e.integrity.deterministic},
                           {"remeasured", e.integrity.remeasured},
                           {"remeasured_speedup", json_number(e.integrity.remeasured_speedup)},
                           {"unconfined", e.integrity.unconfined}};
  json["fitness"] = json_number(e.fitness);
  json["wall_seconds"] = json_number(e.wall_seconds);
  Json stages = Json::object();
  for (const auto& [stage, seconds] : e.stage_seconds) stages[stage] = json_number(seconds);
  json["stage_seconds"] = stages;
  json["placement"] = Json{{"host", e.placement.host},
                           {"device_index", e.placement.device_index},
                           {"actor", e.placement.actor},
                           {"retries", e.placement.retries}};
  json["host_code"] = e.host_code ? host_code_report_to_json(*e.host_code) : Json(nullptr);
  return json;
}

Json host_code_report_to_json(const HostCodeReport& report) {
  Json kernels = Json::array();
  for (const HostKernel& kernel : report.kernels) {
    kernels.push_back({{"name", kernel.name},
                       {"origin", kernel.origin},
                       {"launches", kernel.launches},
                       {"device_seconds", json_number(kernel.device_seconds)}});
  }
  return {{"kernels", kernels},
          {"custom_share", json_number(report.custom_share)},
          {"custom_calls", report.custom_calls},
          {"custom_kernel_every_check", report.custom_kernel_every_check},
          {"ablation", report.ablation},
          {"policy", report.policy},
          {"notes", report.notes}};
}

HostCodeReport host_code_report_from_json(const JsonField& field) {
  field.expect_object(
      {"kernels", "custom_share", "custom_calls", "custom_kernel_every_check", "ablation", "policy", "notes"});
  HostCodeReport report;
  if (auto kernels = field.optional("kernels")) {
    for (const JsonField& item : kernels->elements()) {
      item.expect_object({"name", "origin", "launches", "device_seconds"});
      HostKernel kernel;
      read_field(item, "name", kernel.name);
      read_field(item, "origin", kernel.origin);
      read_field(item, "launches", kernel.launches);
      read_field(item, "device_seconds", kernel.device_seconds);
      report.kernels.push_back(std::move(kernel));
    }
  }
  read_field(field, "custom_share", report.custom_share);
  read_field(field, "custom_calls", report.custom_calls);
  read_field(field, "custom_kernel_every_check", report.custom_kernel_every_check);
  read_field(field, "ablation", report.ablation);
  read_field(field, "policy", report.policy);
  read_field(field, "notes", report.notes);
  return report;
}

Evaluation evaluation_from_json(const JsonField& root) {
  root.expect_object({"schema", "candidate_id", "task", "backend", "device", "status", "message", "compile",
                      "correctness", "timing", "baseline_timing", "speedup", "baselines", "speedups",
                      "baseline_errors", "sol", "integrity", "fitness", "wall_seconds", "stage_seconds", "placement",
                      "host_code"});
  const JsonField schema = root["schema"];
  if (schema.string() != kEvaluationSchema && schema.string() != kEvaluationSchemaV4 &&
      schema.string() != kEvaluationSchemaV3 && schema.string() != kEvaluationSchemaV2 &&
      schema.string() != kEvaluationSchemaV1) {
    schema.fail_expected(fmt::format("\"{}\" (or the older \"{}\", \"{}\", \"{}\" or \"{}\")", kEvaluationSchema,
                                     kEvaluationSchemaV4, kEvaluationSchemaV3, kEvaluationSchemaV2,
                                     kEvaluationSchemaV1));
  }
  Evaluation evaluation;
  read_field(root, "candidate_id", evaluation.candidate_id);
  read_field(root, "task", evaluation.task);
  read_field(root, "backend", evaluation.backend);
  read_field(root, "device", evaluation.device);
  const JsonField status = root["status"];
  try {
    evaluation.status = parse_status(status.string());
  } catch (const ValidationError&) {
    status.fail_expected(
        "one of \"ok\", \"compile_error\", \"invalid_launch\", \"runtime_error\", \"incorrect\", \"timeout\", "
        "\"crashed\"");
  }
  read_field(root, "message", evaluation.message);
  if (auto compile = root.optional("compile")) evaluation.compile = compile_report_from_json(*compile);
  if (auto correctness = root.optional("correctness")) evaluation.correctness = read_correctness(*correctness);
  if (auto timing = root.optional("timing")) evaluation.timing = read_timing(*timing);
  if (auto baseline = root.optional("baseline_timing")) evaluation.baseline_timing = read_timing(*baseline);
  read_field(root, "speedup", evaluation.speedup);
  if (auto baselines = root.optional("baselines")) {
    for (const auto& [name, timing] : baselines->members()) evaluation.baselines[name] = read_timing(timing);
  }
  if (auto speedups = root.optional("speedups")) {
    for (const auto& [name, speedup] : speedups->members()) evaluation.speedups[name] = speedup.number();
  }
  if (auto errors = root.optional("baseline_errors")) {
    for (const auto& [name, message] : errors->members()) evaluation.baseline_errors[name] = message.string();
  }
  if (auto sol = root.optional("sol")) evaluation.sol = read_sol(*sol);
  if (auto integrity = root.optional("integrity")) evaluation.integrity = read_integrity(*integrity);
  read_field(root, "fitness", evaluation.fitness);
  read_field(root, "wall_seconds", evaluation.wall_seconds);
  if (auto stages = root.optional("stage_seconds")) {
    for (const auto& [stage, seconds] : stages->members()) evaluation.stage_seconds[stage] = seconds.number();
  }
  if (auto placement = root.optional("placement")) {
    placement->expect_object({"host", "device_index", "actor", "retries"});
    read_field(*placement, "host", evaluation.placement.host);
    read_field(*placement, "device_index", evaluation.placement.device_index);
    read_field(*placement, "actor", evaluation.placement.actor);
    read_field(*placement, "retries", evaluation.placement.retries);
  }
  if (auto host_code = root.optional("host_code")) evaluation.host_code = host_code_report_from_json(*host_code);
  return evaluation;
}

// ---------------------------------------------------------------------------------------------- task

namespace {

namespace fs = std::filesystem;

constexpr const char* kTimingConfigName = "timing";

// ---------------------------------------------------------------------------------------------- reading

SizeMap read_size_map(const JsonField& field) {
  SizeMap sizes;
  for (const auto& [name, value] : field.members()) {
    sizes[name] = value.integer();
  }
  return sizes;
}

SizeConfig read_size_config(const JsonField& field) {
  field.expect_object({"name", "sizes"});
  SizeConfig config;
  config.name = field["name"].string();
  config.sizes = read_size_map(field["sizes"]);
  return config;
}

Distribution read_distribution(const JsonField& field) {
  field.expect_object({"kind", "a", "b", "structure"});
  Distribution distribution;
  distribution.kind = field["kind"].string();
  if (auto a = field.optional("a")) distribution.a = a->number();
  if (auto b = field.optional("b")) distribution.b = b->number();
  read_field(field, "structure", distribution.structure);
  return distribution;
}

TensorSpec read_tensor(const JsonField& field) {
  field.expect_object({"name", "dtype", "shape", "role", "distribution"});
  TensorSpec tensor;
  tensor.name = field["name"].string();
  const JsonField dtype = field["dtype"];
  try {
    tensor.dtype = parse_dtype(dtype.string());
  } catch (const ValidationError&) {
    dtype.fail_expected("one of float16, bfloat16, float32, float64, int8, uint8, int32, int64");
  }
  for (const auto& dim : field["shape"].elements()) {
    if (dim.json().is_string()) {
      tensor.shape.push_back(dim.string());
    } else if (dim.json().is_number_integer()) {
      tensor.shape.push_back(std::to_string(dim.integer()));
    } else {
      dim.fail_expected("an integer expression over the sizes (a string such as \"M\" or \"2*N\", or an integer)");
    }
  }
  const JsonField role = field["role"];
  const std::string role_name = role.string();
  if (role_name == "input") {
    tensor.role = TensorRole::input;
  } else if (role_name == "output") {
    tensor.role = TensorRole::output;
  } else {
    role.fail_expected("\"input\" or \"output\"");
  }
  if (auto distribution = field.optional("distribution")) tensor.distribution = read_distribution(*distribution);
  return tensor;
}

// A source is a file name relative to the task's folder, or inline {"language", "source", "path"}.
KernelSource read_source(const JsonField& field, const std::string& language, const fs::path& folder) {
  KernelSource source;
  source.language = language;
  if (field.json().is_string()) {
    const std::string file = field.string();
    if (folder.empty()) {
      field.fail(fmt::format("\"{}\" names a file, but this manifest has no folder to find it in; give the "
                             "source inline as {{\"source\": \"...\"}}",
                             file));
    }
    const fs::path path = folder / file;
    fs::path resolved;
    try {
      resolved = path_inside(folder, file);
    } catch (const ValidationError& error) {
      field.fail(error.what());
    }
    if (!fs::is_regular_file(resolved)) {
      field.fail(fmt::format("the file \"{}\" does not exist in {}", file, folder.string()));
    }
    const auto text = read_whole_file(resolved.string());
    if (!text) field.fail(fmt::format("cannot read the file \"{}\"", path.string()));
    if (const auto binary = binary_content(*text)) {
      field.fail(fmt::format("the file \"{}\" is not a text file ({}): name the kernel's source file", file, *binary));
    }
    source.source = *text;
    source.path = path.lexically_normal().string();
    return source;
  }
  if (!field.json().is_object()) field.fail_expected("a file name or {\"source\": \"...\"}");
  field.expect_object({"language", "source", "path"});
  if (auto given = field.optional("language")) {
    if (given->string() != language) given->fail_expected(fmt::format("\"{}\" (the key it is listed under)", language));
  }
  source.source = field["source"].string();
  if (auto path = field.optional("path")) source.path = path->string();
  return source;
}

std::map<std::string, std::string> read_string_map(const JsonField& field) {
  if (!field.json().is_object()) field.fail_expected("an object of names to names");
  std::map<std::string, std::string> map;
  for (const auto& [key, value] : field.members()) map[key] = value.string();
  return map;
}

std::vector<std::string> read_string_list(const JsonField& field) {
  std::vector<std::string> list;
  for (const auto& element : field.elements()) list.push_back(element.string());
  return list;
}

// The module is a file name relative to the task's folder, or inline {"source", "path"}.
PytorchOracle read_oracle(const JsonField& field, const fs::path& folder) {
  field.expect_object({"kind", "module", "constants", "forward", "parameters", "outputs", "casts", "seed", "training",
                       "baselines"});
  PytorchOracle oracle;
  oracle.kind = field["kind"].string();
  oracle.module = read_source(field["module"], oracle.module.language, folder);
  if (auto constants = field.optional("constants")) oracle.constants = read_string_map(*constants);
  oracle.forward = read_string_list(field["forward"]);
  if (auto parameters = field.optional("parameters")) oracle.parameters = read_string_map(*parameters);
  oracle.outputs = read_string_list(field["outputs"]);
  if (auto casts = field.optional("casts")) oracle.casts = read_string_map(*casts);
  read_field(field, "seed", oracle.seed);
  read_field(field, "training", oracle.training);
  if (auto baselines = field.optional("baselines")) oracle.baselines = read_string_list(*baselines);
  return oracle;
}

std::map<std::string, KernelSource> read_sources(const JsonField& field, const fs::path& folder) {
  std::map<std::string, KernelSource> sources;
  for (const auto& [language, value] : field.members()) {
    if (find_kernel_language(language) == nullptr) {
      throw ValidationError(fmt::format("{}: {}: unknown language; expected one of {}", field.origin(), value.path(),
                                        kernel_language_names()));
    }
    sources[language] = read_source(value, language, folder);
  }
  return sources;
}

// ---------------------------------------------------------------------------------------------- writing

Json size_map_json(const SizeMap& sizes) {
  Json json = Json::object();
  for (const auto& [name, value] : sizes) json[name] = value;
  return json;
}

Json size_config_json(const SizeConfig& config) {
  return Json{{"name", config.name}, {"sizes", size_map_json(config.sizes)}};
}

Json sources_json(const std::map<std::string, KernelSource>& sources) {
  Json json = Json::object();
  for (const auto& [language, source] : sources) {
    Json entry{{"language", language}, {"source", source.source}};
    if (!source.path.empty()) entry["path"] = source.path;
    json[language] = std::move(entry);
  }
  return json;
}

Json distribution_json(const Distribution& distribution) {
  // A constant has no b: writing the unused default would suggest it matters.
  Json json{{"kind", distribution.kind}, {"a", distribution.a}};
  if (distribution.kind != "constant") json["b"] = distribution.b;
  if (distribution.structure != "none") json["structure"] = distribution.structure;
  return json;
}

Json oracle_json(const PytorchOracle& oracle) {
  Json module{{"source", oracle.module.source}};
  if (!oracle.module.path.empty()) module["path"] = oracle.module.path;
  return Json{{"kind", oracle.kind},         {"module", module},         {"constants", oracle.constants},
              {"forward", oracle.forward},   {"parameters", oracle.parameters}, {"outputs", oracle.outputs},
              {"casts", oracle.casts},       {"seed", oracle.seed},      {"training", oracle.training},
              {"baselines", oracle.baselines}};
}

}  // namespace

Task task_from_json(const JsonField& root, const fs::path& folder) {
  root.expect_object({"schema", "name", "description", "sizes", "check_sizes", "tensors", "tolerance", "work",
                      "references", "seeds", "oracle", "pytorch", "cases"});
  const JsonField schema = root["schema"];
  if (schema.string() != kTaskSchema) schema.fail_expected(fmt::format("\"{}\"", kTaskSchema));

  Task task;
  task.folder = folder;
  task.name = root["name"].string();
  if (auto description = root.optional("description")) task.description = description->string();

  // "sizes" is a map of names to integers, or {"name": ..., "sizes": {...}} for a configuration with
  // another name than "timing". Size values are integers, so an object under "sizes" means the latter.
  const JsonField sizes = root["sizes"];
  if (!sizes.json().is_object()) sizes.fail_expected("an object of sizes, e.g. {\"N\": 1048576}");
  auto inner = sizes.json().find("sizes");
  if (inner != sizes.json().end() && inner->is_object()) {
    task.timing_sizes = read_size_config(sizes);
  } else {
    task.timing_sizes.name = kTimingConfigName;
    task.timing_sizes.sizes = read_size_map(sizes);
  }
  if (auto checks = root.optional("check_sizes")) {
    for (const auto& element : checks->elements()) task.check_sizes.push_back(read_size_config(element));
  }
  for (const auto& element : root["tensors"].elements()) task.tensors.push_back(read_tensor(element));
  if (auto tolerance = root.optional("tolerance")) {
    tolerance->expect_object({"atol", "rtol"});
    Tolerance value;
    value.atol = (*tolerance)["atol"].number();
    value.rtol = (*tolerance)["rtol"].number();
    for (const auto& [name, number] : {std::pair<const char*, double>{"atol", value.atol}, {"rtol", value.rtol}}) {
      if (!std::isfinite(number) || number < 0) (*tolerance)[name].fail_expected("a finite number >= 0");
    }
    task.tolerance = value;
  }
  const JsonField work = root["work"];
  work.expect_object({"flops", "bytes"});
  for (const auto& [name, target] : {std::pair<const char*, std::string*>{"flops", &task.work.flops},
                                     {"bytes", &task.work.bytes}}) {
    const JsonField field = work[name];
    if (field.json().is_string()) {
      *target = field.string();
    } else if (field.json().is_number_integer()) {
      *target = std::to_string(field.integer());
    } else {
      field.fail_expected("an integer expression over the sizes, e.g. \"2*M*N*K\"");
    }
  }
  // A task with an oracle may have no references; Task::validate() requires one or the other.
  if (auto references = root.optional("references")) task.references = read_sources(*references, folder);
  if (auto oracle = root.optional("oracle")) task.oracle = read_oracle(*oracle, folder);
  if (auto seeds = root.optional("seeds")) task.seeds = read_sources(*seeds, folder);
  if (auto pytorch = root.optional("pytorch")) task.pytorch = pytorch->string();
  if (auto cases = root.optional("cases")) task.cases = cases_from_json(*cases);
  return task;
}

Json task_to_json(const Task& task) {
  Json json;
  json["schema"] = kTaskSchema;
  json["name"] = task.name;
  json["description"] = task.description;
  json["sizes"] = task.timing_sizes.name == kTimingConfigName ? size_map_json(task.timing_sizes.sizes)
                                                          : size_config_json(task.timing_sizes);
  json["check_sizes"] = Json::array();
  for (const auto& config : task.check_sizes) json["check_sizes"].push_back(size_config_json(config));
  json["tensors"] = Json::array();
  for (const auto& tensor : task.tensors) {
    json["tensors"].push_back(Json{
        {"name", tensor.name},
        {"dtype", std::string(to_string(tensor.dtype))},
        {"shape", tensor.shape},
        {"role", tensor.role == TensorRole::input ? "input" : "output"},
        {"distribution", distribution_json(tensor.distribution)},
    });
  }
  if (task.tolerance) json["tolerance"] = Json{{"atol", task.tolerance->atol}, {"rtol", task.tolerance->rtol}};
  json["work"] = Json{{"flops", task.work.flops}, {"bytes", task.work.bytes}};
  json["references"] = sources_json(task.references);
  json["seeds"] = sources_json(task.seeds);
  if (task.oracle) json["oracle"] = oracle_json(*task.oracle);
  json["pytorch"] = task.pytorch;
  if (!task.cases.empty()) json["cases"] = cases_to_json(task.cases);
  return json;
}

}  // namespace kernelsmith::detail
