// Evaluation: JSON round trip under the schema "kernelsmith.evaluation/5" (docs/evaluation-schema.md)
// and the concise text an LLM reads as feedback.
#include "kernelsmith/evaluation.hpp"

#include <fmt/format.h>

#include <cmath>
#include <sstream>
#include <utility>
#include <vector>

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

// The PyTorch baselines of a task with an oracle, in the order the docs list them.
void append_pytorch_speedups(std::ostringstream& out, const Evaluation& evaluation) {
  static const std::pair<const char*, const char*> kNames[] = {
      {"eager", "PyTorch eager"}, {"compile", "torch.compile"}, {"compile_max_autotune", "torch.compile max-autotune"}};
  std::vector<std::string> parts;
  for (const auto& [name, label] : kNames) {
    const auto timing = evaluation.baselines.find(name);
    const auto speedup = evaluation.speedups.find(name);
    const auto error = evaluation.baseline_errors.find(name);
    if (timing != evaluation.baselines.end() && speedup != evaluation.speedups.end()) {
      parts.push_back(fmt::format("{:.3g}x over {} ({:.4g} ms)", speedup->second, label, timing->second.median_ms));
    } else if (error != evaluation.baseline_errors.end()) {
      parts.push_back(fmt::format("{} not timed ({})", label, error->second.substr(0, 120)));
    }
  }
  if (parts.empty()) return;
  out << "Speedup: ";
  for (std::size_t i = 0; i < parts.size(); ++i) out << (i == 0 ? "" : "; ") << parts[i];
  out << ".\n";
}

void append_timing(std::ostringstream& out, const Evaluation& evaluation) {
  const TimingReport& t = *evaluation.timing;
  out << fmt::format("Time: {:.4g} ms median \u00b1 {:.2g}% noise ({} samples, {} mode{}{})", t.median_ms,
                     t.noise * 100.0, t.samples, t.mode.empty() ? "?" : t.mode, t.l2_flushed ? ", cold L2" : ", warm L2",
                     t.converged ? "" : ", noise target not reached");
  const bool pytorch = evaluation.baselines.count("eager") > 0 || evaluation.baseline_errors.count("eager") > 0;
  if (!pytorch) {
    if (evaluation.baseline_timing) out << fmt::format("; baseline {:.4g} ms", evaluation.baseline_timing->median_ms);
    if (evaluation.speedup > 0) out << fmt::format("; speedup {:.3g}x over the baseline", evaluation.speedup);
  }
  out << ".\n";
  if (pytorch) append_pytorch_speedups(out, evaluation);
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

const std::map<std::string, std::string>& doubt_casting_flags() {
  static const std::map<std::string, std::string> flags = {
      {"speedup_unconfirmed", "the speedup was not confirmed by a second measurement"},
      {"host_timer_mismatch", "the device timer reported less time than the host clock saw"},
      {"race", "the outputs changed with the order of the blocks"},
      {"schedule_check_unavailable", "the race check could not run on this source"},
      // A ModelNew (host-code) candidate's checks (docs/kernelbench-modelnew.md, "Integrity").
      {"no_custom_kernel", "a ModelNew that did not run a kernel of its own in every check (PyTorch only)"},
      {"custom_kernel_unused", "a ModelNew whose outputs do not change when its own kernels do nothing"},
      {"torch_settings_changed", "a ModelNew changed torch's global settings (TF32, precision, threads, ...)"},
      {"work_escaped_timer", "work of a ModelNew was still running after its timed run's end event"},
      {"async_work_at_return", "work of a ModelNew was still running on another stream when forward returned"},
      {"cuda_graph", "a ModelNew replayed a CUDA graph (work recorded in an earlier call)"},
      {"output_not_dense", "a ModelNew returned a broadcast view: fewer elements computed than returned"},
  };
  return flags;
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

std::string Evaluation::to_json() const { return detail::evaluation_to_json(*this).dump(2); }

Evaluation Evaluation::from_json(const std::string& json_text, const std::string& origin) {
  const Json document = detail::parse_json(json_text, origin);
  return detail::evaluation_from_json(JsonField(document, origin));
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
