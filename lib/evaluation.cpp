// Evaluation: JSON round trip under the schema "kernelsmith.evaluation/2" (docs/evaluation-schema.md)
// and the concise text an LLM reads as feedback.
#include "kernelsmith/evaluation.hpp"

#include <fmt/format.h>

#include <cmath>
#include <sstream>

#include "detail/json_util.hpp"
#include "json_codec.hpp"
#include "kernelsmith/error.hpp"

namespace kernelsmith {
namespace {

using detail::Json;
using detail::json_number;
using detail::JsonField;
using detail::read_field;

constexpr Status kAllStatuses[] = {Status::ok,        Status::compile_error, Status::invalid_launch,
                                   Status::runtime_error, Status::incorrect, Status::timeout,
                                   Status::crashed};

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
      {"mode", "median_ms", "mean_ms", "min_ms", "noise", "samples", "converged", "host_ms", "l2_flushed", "kernels"});
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
  f.expect_object({"flags", "deterministic", "remeasured", "remeasured_speedup"});
  IntegrityReport i;
  read_field(f, "flags", i.flags);
  read_field(f, "deterministic", i.deterministic);
  read_field(f, "remeasured", i.remeasured);
  read_field(f, "remeasured_speedup", i.remeasured_speedup);
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
  json["compile"] = detail::compile_report_to_json(compile);
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
  if (auto compile = root.optional("compile")) evaluation.compile = detail::compile_report_from_json(*compile);
  if (auto correctness = root.optional("correctness")) evaluation.correctness = read_correctness(*correctness);
  if (auto timing = root.optional("timing")) evaluation.timing = read_timing(*timing);
  if (auto baseline = root.optional("baseline_timing")) evaluation.baseline_timing = read_timing(*baseline);
  read_field(root, "speedup", evaluation.speedup);
  if (auto sol = root.optional("sol")) evaluation.sol = read_sol(*sol);
  if (auto integrity = root.optional("integrity")) evaluation.integrity = read_integrity(*integrity);
  read_field(root, "fitness", evaluation.fitness);
  read_field(root, "wall_seconds", evaluation.wall_seconds);
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
