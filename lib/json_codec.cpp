#include "json_codec.hpp"

#include <fmt/format.h>

#include "detail/base64.hpp"
#include "kernelsmith/error.hpp"

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
          {"compile_threads", o.compile_threads},
          {"isolate", o.isolate},
          {"cache_dir", o.cache_dir},
          {"use_disk_cache", o.use_disk_cache}};
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
  o.compile_threads = j.at("compile_threads").get<int>();
  o.isolate = j.at("isolate").get<bool>();
  o.cache_dir = j.at("cache_dir").get<std::string>();
  o.use_disk_cache = j.at("use_disk_cache").get<bool>();
  return o;
}

Json compiled_program_to_json(const CompiledProgram& program) {
  return {{"language", program.language},
          {"target", program.target},
          {"binary", base64_encode(program.binary)},
          {"symbols", program.symbols},
          {"report", compile_report_to_json(program.report)}};
}

CompiledProgram compiled_program_from_json(const Json& j) {
  CompiledProgram program;
  program.language = j.at("language").get<std::string>();
  program.target = j.at("target").get<std::string>();
  program.binary = base64_decode(j.at("binary").get<std::string>());
  program.symbols = j.at("symbols").get<std::map<std::string, std::string>>();
  program.report = compile_report_from_json(JsonField(j.at("report"), "<compiled program>", "report"));
  return program;
}

std::string compiled_program_to_text(const CompiledProgram& program) {
  return compiled_program_to_json(program).dump();
}

CompiledProgram compiled_program_from_text(const std::string& text) {
  try {
    return compiled_program_from_json(Json::parse(text));
  } catch (const nlohmann::json::exception& e) {
    throw ValidationError(fmt::format("not a compiled-program document: {}", e.what()));
  }
}

}  // namespace kernelsmith::detail
