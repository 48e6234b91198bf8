// One JSON codec per type that crosses a boundary: the public to_json()/from_json(), the worker's
// messages, the compile cache on disk and the run store all read and write these types through the
// functions here, so a field is added in one place. (Task manifests keep their reader in task.cpp, since
// reading one also resolves source files against the task's folder and validates the whole task.)
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "detail/json_util.hpp"
#include "kernelsmith/backend.hpp"
#include "kernelsmith/evaluation.hpp"
#include "kernelsmith/evaluator.hpp"

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

}  // namespace kernelsmith::detail
