// One JSON codec per type that crosses a boundary: the public to_json()/from_json(), the worker's
// messages, the compile cache on disk and the run store all read and write these types through the
// functions here, so a field is added in one place. Readers take a JsonField, so that an error names the
// document and the path of the field; they throw ValidationError.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "detail/json_util.hpp"
#include "kernelsmith/backend.hpp"
#include "kernelsmith/candidate.hpp"
#include "kernelsmith/device.hpp"
#include "kernelsmith/evaluation.hpp"
#include "kernelsmith/evaluator.hpp"
#include "kernelsmith/task.hpp"

namespace kernelsmith::detail {

/// Reads an optional field into `out`, which keeps its value when the field is absent or null.
void read_field(const JsonField& object, const char* key, std::string& out);
void read_field(const JsonField& object, const char* key, bool& out);
void read_field(const JsonField& object, const char* key, double& out);
void read_field(const JsonField& object, const char* key, int& out);
void read_field(const JsonField& object, const char* key, std::int64_t& out);
void read_field(const JsonField& object, const char* key, std::uint64_t& out);
void read_field(const JsonField& object, const char* key, std::vector<std::string>& out);

Json kernel_resources_to_json(const KernelResources& resources);
/// Absent fields keep their defaults; unknown fields are refused naming the path.
KernelResources kernel_resources_from_json(const JsonField& field);

Json compile_report_to_json(const CompileReport& report);
CompileReport compile_report_from_json(const JsonField& field);

/// Every option, for the worker (a worker runs with exactly the caller's options).
Json evaluator_options_to_json(const EvaluatorOptions& options);
/// Throws nlohmann::json::exception for a missing or mistyped field.
EvaluatorOptions evaluator_options_from_json(const Json& json);

/// A compiled program with its binary in base64: the worker protocol and the compile cache on disk.
Json compiled_program_to_json(const CompiledProgram& program);
CompiledProgram compiled_program_from_json(const Json& json);
std::string compiled_program_to_text(const CompiledProgram& program);
/// Throws ValidationError for a document that is not a compiled program.
CompiledProgram compiled_program_from_text(const std::string& text);

/// A device's description: the worker's `ready` message and `kernelsmith devices --json`.
Json device_to_json(const DeviceInfo& device);
/// Throws nlohmann::json::exception for a missing or mistyped field.
DeviceInfo device_from_json(const Json& json);

/// Schema "kernelsmith.candidate/1" (docs/candidate-format.md).
Json candidate_to_json(const Candidate& candidate);
/// Checks the schema, the language and a stated id against the content.
Candidate candidate_from_json(const JsonField& root);

/// A timing report as the evaluation schema writes it (the oracle's baselines travel and are cached so).
Json timing_report_to_json(const TimingReport& timing);
TimingReport timing_report_from_json(const JsonField& field);

/// Schema "kernelsmith.evaluation/5" (docs/evaluation-schema.md); versions 1 to 4 are read too.
Json evaluation_to_json(const Evaluation& evaluation);
Evaluation evaluation_from_json(const JsonField& root);
/// An evaluation's "host_code" object (a ModelNew's kernels and their shares).
Json host_code_report_to_json(const HostCodeReport& report);
HostCodeReport host_code_report_from_json(const JsonField& field);

/// Schema "kernelsmith.task/1" (docs/task-format.md), sources inline.
Json task_to_json(const Task& task);
/// Reads the document's fields; a source given as a file name is read from `folder`. Does not validate
/// the task as a whole: Task::validate() does, and every caller runs it.
Task task_from_json(const JsonField& root, const std::filesystem::path& folder);

}  // namespace kernelsmith::detail
