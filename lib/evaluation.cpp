// Evaluation: JSON round trip under the schema "kernelsmith.evaluation/2" (docs/evaluation-schema.md)
// and the concise text an LLM reads as feedback.
#include "kernelsmith/evaluation.hpp"

#include <fmt/format.h>

#include <cmath>
#include <sstream>

#include "detail/json_util.hpp"
#include "kernelsmith/error.hpp"

namespace kernelsmith {
namespace {

using detail::Json;
using detail::json_number;
using detail::JsonField;

constexpr Status kAllStatuses[] = {Status::ok,        Status::compile_error, Status::invalid_launch,
                                   Status::runtime_error, Status::incorrect, Status::timeout,
                                   Status::crashed};

// ---------------------------------------------------------------------------------------------- writing

Json kernel_resources_json(const KernelResources& k) {
  return Json{{"name", k.name},
              {"registers", k.registers},
              {"spill_store_bytes", k.spill_store_bytes},
              {"spill_load_bytes", k.spill_load_bytes},
              {"stack_bytes", k.stack_bytes},
              {"shared_bytes", k.shared_bytes},
              {"local_bytes", k.local_bytes}};
}

Json compile_json(const CompileReport& c) {
  Json kernels = Json::array();
  for (const auto& k : c.kernels) kernels.push_back(kernel_resources_json(k));
  return Json{{"ok", c.ok},         {"log", c.log},       {"target", c.target},
              {"seconds", json_number(c.seconds)}, {"cached", c.cached}, {"kernels", kernels}};
}

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

void read(const JsonField& object, const char* key, std::string& out) {
  if (auto field = object.optional(key)) out = field->string();
}
void read(const JsonField& object, const char* key, bool& out) {
  if (auto field = object.optional(key)) out = field->boolean();
}
void read(const JsonField& object, const char* key, double& out) {
  if (auto field = object.optional(key)) out = field->number();
}
void read(const JsonField& object, const char* key, int& out) {
  if (auto field = object.optional(key)) out = field->int32();
}
void read(const JsonField& object, const char* key, std::int64_t& out) {
  if (auto field = object.optional(key)) out = field->integer();
}
void read(const JsonField& object, const char* key, std::uint64_t& out) {
  if (auto field = object.optional(key)) out = field->unsigned_integer();
}
void read(const JsonField& object, const char* key, std::vector<std::string>& out) {
  if (auto field = object.optional(key)) {
    for (const auto& element : field->elements()) out.push_back(element.string());
  }
}

CompileReport read_compile(const JsonField& f) {
  f.expect_object({"ok", "log", "target", "seconds", "cached", "kernels"});
  CompileReport c;
  read(f, "ok", c.ok);
  read(f, "log", c.log);
  read(f, "target", c.target);
  read(f, "seconds", c.seconds);
  read(f, "cached", c.cached);
  if (auto kernels = f.optional("kernels")) {
    for (const auto& e : kernels->elements()) {
      e.expect_object({"name", "registers", "spill_store_bytes", "spill_load_bytes", "stack_bytes", "shared_bytes",
                       "local_bytes"});
      KernelResources k;
      read(e, "name", k.name);
      read(e, "registers", k.registers);
      read(e, "spill_store_bytes", k.spill_store_bytes);
      read(e, "spill_load_bytes", k.spill_load_bytes);
      read(e, "stack_bytes", k.stack_bytes);
      read(e, "shared_bytes", k.shared_bytes);
      read(e, "local_bytes", k.local_bytes);
      c.kernels.push_back(k);
    }
  }
  return c;
}

OutputCheck read_output_check(const JsonField& f) {
  f.expect_object({"tensor", "passed", "max_abs_error", "rel_l2_error", "mismatches", "unwritten", "non_finite",
                   "first_mismatch", "expected", "actual"});
  OutputCheck o;
  read(f, "tensor", o.tensor);
  read(f, "passed", o.passed);
  read(f, "max_abs_error", o.max_abs_error);
  read(f, "rel_l2_error", o.rel_l2_error);
  read(f, "mismatches", o.mismatches);
  read(f, "unwritten", o.unwritten);
  read(f, "non_finite", o.non_finite);
  read(f, "first_mismatch", o.first_mismatch);
  read(f, "expected", o.expected);
  read(f, "actual", o.actual);
  return o;
}

CorrectnessReport read_correctness(const JsonField& f) {
  f.expect_object({"passed", "trials", "checks", "message"});
  CorrectnessReport r;
  read(f, "passed", r.passed);
  read(f, "trials", r.trials);
  read(f, "message", r.message);
  if (auto checks = f.optional("checks")) {
    for (const auto& e : checks->elements()) {
      e.expect_object({"sizes", "inputs", "seed", "passed", "outputs", "modified_inputs", "message"});
      CorrectnessCheck check;
      read(e, "sizes", check.sizes);
      read(e, "inputs", check.inputs);
      read(e, "seed", check.seed);
      read(e, "passed", check.passed);
      if (auto outputs = e.optional("outputs")) {
        for (const auto& o : outputs->elements()) check.outputs.push_back(read_output_check(o));
      }
      read(e, "modified_inputs", check.modified_inputs);
      read(e, "message", check.message);
      r.checks.push_back(check);
    }
  }
  return r;
}

TimingReport read_timing(const JsonField& f) {
  f.expect_object(
      {"mode", "median_ms", "mean_ms", "min_ms", "noise", "samples", "converged", "host_ms", "l2_flushed", "kernels"});
  TimingReport t;
  read(f, "mode", t.mode);
  read(f, "median_ms", t.median_ms);
  read(f, "mean_ms", t.mean_ms);
  read(f, "min_ms", t.min_ms);
  read(f, "noise", t.noise);
  read(f, "samples", t.samples);
  read(f, "converged", t.converged);
  read(f, "host_ms", t.host_ms);
  read(f, "l2_flushed", t.l2_flushed);
  if (auto kernels = f.optional("kernels")) {
    for (const auto& e : kernels->elements()) {
      e.expect_object({"name", "median_ms", "share"});
      KernelTime k;
      read(e, "name", k.name);
      read(e, "median_ms", k.median_ms);
      read(e, "share", k.share);
      t.kernels.push_back(k);
    }
  }
  return t;
}

SpeedOfLight read_sol(const JsonField& f) {
  f.expect_object({"flops", "bytes", "achieved_gbps", "achieved_gflops", "peak_gbps", "peak_gflops",
                   "bandwidth_fraction", "compute_fraction", "fraction"});
  SpeedOfLight s;
  read(f, "flops", s.flops);
  read(f, "bytes", s.bytes);
  read(f, "achieved_gbps", s.achieved_gbps);
  read(f, "achieved_gflops", s.achieved_gflops);
  read(f, "peak_gbps", s.peak_gbps);
  read(f, "peak_gflops", s.peak_gflops);
  read(f, "bandwidth_fraction", s.bandwidth_fraction);
  read(f, "compute_fraction", s.compute_fraction);
  read(f, "fraction", s.fraction);
  return s;
}

IntegrityReport read_integrity(const JsonField& f) {
  f.expect_object({"flags", "deterministic", "remeasured", "remeasured_speedup"});
  IntegrityReport i;
  read(f, "flags", i.flags);
  read(f, "deterministic", i.deterministic);
  read(f, "remeasured", i.remeasured);
  read(f, "remeasured_speedup", i.remeasured_speedup);
  return i;
}

// ---------------------------------------------------------------------------------------------- prompt text

std::string bytes_text(std::int64_t bytes) { return bytes < 0 ? "?" : fmt::format("{} B", bytes); }

void append_first_failure(std::ostringstream& out, const CorrectnessReport& report) {
  int passed = 0;
  for (const auto& check : report.checks) passed += check.passed ? 1 : 0;
  const CorrectnessCheck* failing = nullptr;
  for (const auto& check : report.checks) {
    if (!check.passed) {
      failing = &check;
      break;
    }
  }
  if (failing == nullptr) {
    if (!report.message.empty()) out << report.message << '\n';
    return;
  }
  out << fmt::format("First failing check: sizes \"{}\", inputs \"{}\" (seed {}).", failing->sizes, failing->inputs,
                     failing->seed);
  if (!failing->message.empty()) out << ' ' << failing->message;
  out << '\n';
  for (const auto& output : failing->outputs) {
    if (output.passed) continue;
    out << fmt::format("  output {}: max abs error {:.4g}, relative L2 error {:.4g}, {} mismatching element(s)",
                       output.tensor, output.max_abs_error, output.rel_l2_error, output.mismatches);
    if (output.first_mismatch >= 0) {
      out << fmt::format("; first mismatch at flat index {}: expected {:.6g}, got {:.6g}", output.first_mismatch,
                         output.expected, output.actual);
    }
    out << '\n';
    if (output.unwritten > 0) {
      out << fmt::format("  output {}: {} element(s) never written (the poison value survived)\n", output.tensor,
                         output.unwritten);
    }
    if (output.non_finite > 0) {
      out << fmt::format("  output {}: {} NaN/Inf element(s) where the reference is finite\n", output.tensor,
                         output.non_finite);
    }
  }
  if (!failing->modified_inputs.empty()) {
    std::string names;
    for (const auto& name : failing->modified_inputs) names += (names.empty() ? "" : ", ") + name;
    out << "  modified input(s): " << names << " (inputs must stay unchanged)\n";
  }
  out << fmt::format("Checks passed: {} of {}.\n", passed, report.checks.size());
}

void append_timing(std::ostringstream& out, const Evaluation& evaluation) {
  const TimingReport& t = *evaluation.timing;
  out << fmt::format("Time: {:.4g} ms median \u00b1 {:.2g}% noise ({} samples, {} mode{}{})", t.median_ms,
                     t.noise * 100.0, t.samples, t.mode.empty() ? "?" : t.mode, t.l2_flushed ? ", cold L2" : ", warm L2",
                     t.converged ? "" : ", noise target not reached");
  if (evaluation.baseline_timing) {
    out << fmt::format("; baseline {:.4g} ms", evaluation.baseline_timing->median_ms);
  }
  if (evaluation.speedup > 0) out << fmt::format("; speedup {:.3g}x over the baseline", evaluation.speedup);
  out << ".\n";
  if (evaluation.sol) {
    const SpeedOfLight& s = *evaluation.sol;
    out << fmt::format(
        "Hardware limit: {:.1f}% of it ({:.4g} GB/s = {:.1f}% of peak bandwidth {:.4g} GB/s; {:.4g} GFLOP/s = "
        "{:.1f}% of peak compute {:.4g} GFLOP/s).\n",
        s.fraction * 100.0, s.achieved_gbps, s.bandwidth_fraction * 100.0, s.peak_gbps, s.achieved_gflops,
        s.compute_fraction * 100.0, s.peak_gflops);
  }
  if (!t.kernels.empty()) {
    out << "Time per kernel:";
    for (const auto& k : t.kernels) out << fmt::format(" {} {:.4g} ms ({:.0f}%);", k.name, k.median_ms, k.share * 100.0);
    out << '\n';
  }
}

void append_resources(std::ostringstream& out, const CompileReport& compile) {
  if (compile.kernels.empty()) return;
  out << "Resources:";
  for (const auto& k : compile.kernels) {
    out << fmt::format(" {}: {} registers, spills {} stored / {} loaded, {} static shared, {} stack;", k.name,
                       k.registers < 0 ? std::string("?") : std::to_string(k.registers), bytes_text(k.spill_store_bytes),
                       bytes_text(k.spill_load_bytes), bytes_text(k.shared_bytes), bytes_text(k.stack_bytes));
  }
  out << '\n';
}

}  // namespace

std::string to_string(Status status) {
  switch (status) {
    case Status::ok: return "ok";
    case Status::compile_error: return "compile_error";
    case Status::invalid_launch: return "invalid_launch";
    case Status::runtime_error: return "runtime_error";
    case Status::incorrect: return "incorrect";
    case Status::timeout: return "timeout";
    case Status::crashed: return "crashed";
  }
  return "crashed";
}

Status parse_status(const std::string& name) {
  for (Status status : kAllStatuses) {
    if (to_string(status) == name) return status;
  }
  throw ValidationError(fmt::format(
      "unknown status \"{}\"; expected one of ok, compile_error, invalid_launch, runtime_error, incorrect, timeout, "
      "crashed",
      name));
}

double failure_fitness(Status status) {
  switch (status) {
    case Status::ok:
    case Status::incorrect: return 0.0;
    case Status::runtime_error: return -0.25;
    case Status::invalid_launch: return -0.5;
    case Status::compile_error: return -0.75;
    case Status::timeout:
    case Status::crashed: return -1.0;
  }
  return -1.0;
}

std::string Evaluation::to_json() const {
  Json json;
  json["schema"] = kEvaluationSchema;
  json["candidate_id"] = candidate_id;
  json["task"] = task;
  json["backend"] = backend;
  json["device"] = device;
  json["status"] = to_string(status);
  json["message"] = message;
  json["compile"] = compile_json(compile);
  json["correctness"] = correctness ? correctness_json(*correctness) : Json(nullptr);
  json["timing"] = timing ? timing_json(*timing) : Json(nullptr);
  json["baseline_timing"] = baseline_timing ? timing_json(*baseline_timing) : Json(nullptr);
  json["speedup"] = json_number(speedup);
  json["sol"] = sol ? sol_json(*sol) : Json(nullptr);
  json["integrity"] = Json{{"flags", integrity.flags},
                           {"deterministic", integrity.deterministic},
                           {"remeasured", integrity.remeasured},
                           {"remeasured_speedup", json_number(integrity.remeasured_speedup)}};
  json["fitness"] = json_number(fitness);
  json["wall_seconds"] = json_number(wall_seconds);
  Json stages = Json::object();
  for (const auto& [stage, seconds] : stage_seconds) stages[stage] = json_number(seconds);
  json["stage_seconds"] = stages;
  return json.dump(2);
}

Evaluation Evaluation::from_json(const std::string& json_text, const std::string& origin) {
  const Json document = detail::parse_json(json_text, origin);
  const JsonField root(document, origin);
  root.expect_object({"schema", "candidate_id", "task", "backend", "device", "status", "message", "compile",
                      "correctness", "timing", "baseline_timing", "speedup", "sol", "integrity", "fitness",
                      "wall_seconds", "stage_seconds"});
  const JsonField schema = root["schema"];
  if (schema.string() != kEvaluationSchema && schema.string() != kEvaluationSchemaV1) {
    schema.fail_expected(fmt::format("\"{}\" (or the older \"{}\")", kEvaluationSchema, kEvaluationSchemaV1));
  }
  Evaluation evaluation;
  read(root, "candidate_id", evaluation.candidate_id);
  read(root, "task", evaluation.task);
  read(root, "backend", evaluation.backend);
  read(root, "device", evaluation.device);
  const JsonField status = root["status"];
  try {
    evaluation.status = parse_status(status.string());
  } catch (const ValidationError&) {
    status.fail_expected(
        "one of \"ok\", \"compile_error\", \"invalid_launch\", \"runtime_error\", \"incorrect\", \"timeout\", "
        "\"crashed\"");
  }
  read(root, "message", evaluation.message);
  if (auto compile = root.optional("compile")) evaluation.compile = read_compile(*compile);
  if (auto correctness = root.optional("correctness")) evaluation.correctness = read_correctness(*correctness);
  if (auto timing = root.optional("timing")) evaluation.timing = read_timing(*timing);
  if (auto baseline = root.optional("baseline_timing")) evaluation.baseline_timing = read_timing(*baseline);
  read(root, "speedup", evaluation.speedup);
  if (auto sol = root.optional("sol")) evaluation.sol = read_sol(*sol);
  if (auto integrity = root.optional("integrity")) evaluation.integrity = read_integrity(*integrity);
  read(root, "fitness", evaluation.fitness);
  read(root, "wall_seconds", evaluation.wall_seconds);
  if (auto stages = root.optional("stage_seconds")) {
    for (const auto& [stage, seconds] : stages->members()) evaluation.stage_seconds[stage] = seconds.number();
  }
  return evaluation;
}

std::string Evaluation::to_prompt_text() const {
  std::ostringstream out;
  out << "Status: " << to_string(status);
  if (!message.empty() && message != "ok") out << ": " << message;
  out << '\n';
  switch (status) {
    case Status::compile_error: {
      std::istringstream lines(compile.log);
      std::string line;
      std::vector<std::string> kept;
      std::size_t total = 0;
      constexpr std::size_t kMaxLines = 30;
      while (std::getline(lines, line)) {
        if (kept.size() < kMaxLines) kept.push_back(line);
        ++total;
      }
      if (total == 0) {
        out << "The compiler gave no log.\n";
      } else {
        out << (total > kMaxLines ? fmt::format("Compiler log (first {} of {} lines):\n", kMaxLines, total)
                                  : std::string("Compiler log:\n"));
        for (const auto& kept_line : kept) out << kept_line << '\n';
      }
      break;
    }
    case Status::incorrect:
      if (correctness) append_first_failure(out, *correctness);
      break;
    case Status::ok:
      if (correctness) out << fmt::format("Correct on all {} checks.\n", correctness->checks.size());
      if (timing) append_timing(out, *this);
      append_resources(out, compile);
      break;
    default: break;
  }
  if (!integrity.flags.empty()) {
    std::string flags;
    for (const auto& flag : integrity.flags) flags += (flags.empty() ? "" : ", ") + flag;
    out << "Integrity flags: " << flags;
    if (integrity.remeasured) out << fmt::format(" (re-measured speedup {:.3g}x)", integrity.remeasured_speedup);
    if (!integrity.deterministic) out << " (outputs differ between identical runs)";
    out << '\n';
  }
  return out.str();
}

}  // namespace kernelsmith
