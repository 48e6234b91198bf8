// The devices an evaluator runs on (EvaluatorOptions::devices): one worker process per entry. Resolved
// against the backend's device list when the evaluator is created, so that a bad list fails there, in
// the option's own words, and not at the first evaluation.
#pragma once

#include <vector>

#include "kernelsmith/device.hpp"
#include "kernelsmith/evaluator.hpp"

namespace kernelsmith::detail {

/// The device index of each worker, in order: {options.device} when options.devices is empty, every
/// device of the backend for "all", else the comma-separated indices (repeats kept: each is a worker).
/// Throws ValidationError for a malformed list, NotFoundError for an index the backend does not have, and
/// ValidationError for a set whose devices differ in architecture (one compile serves every worker).
std::vector<int> resolve_device_set(const EvaluatorOptions& options, const BackendInfo& backend);

}  // namespace kernelsmith::detail
