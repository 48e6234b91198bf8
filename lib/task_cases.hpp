// The caller's data cases of a task (Task::add_case) in the manifest: JSON ("cases", bytes as base64)
// and their checks against the task's tensors and size configurations.
#pragma once

#include <string>
#include <vector>

#include "detail/json_util.hpp"
#include "kernelsmith/task.hpp"

namespace kernelsmith::detail {

Json cases_to_json(const std::vector<DataCase>& cases);
std::vector<DataCase> cases_from_json(const JsonField& field);
/// Throws ValidationError naming "cases[i]..." for an unknown size configuration, a missing or unknown
/// tensor, or bytes that do not match the tensor's dtype and shape at the case's sizes.
void validate_cases(const Task& task, const std::string& origin);

}  // namespace kernelsmith::detail
