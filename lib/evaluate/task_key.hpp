// A task's content key: names a task to the worker process (sent once, then referred to by key) and
// keys the harness's per-task state.
#pragma once

#include <string>

#include "kernelsmith/task.hpp"

namespace kernelsmith::detail {

/// 64 hex digits over everything a task holds: its manifest (Task::to_json without the data cases'
/// bytes) and the SHA-256 of every data case buffer. Tasks of equal content get equal keys.
///
/// Cheap to call again on the same task: a data case buffer is immutable (shared_ptr to const bytes),
/// so its digest is computed once and remembered for as long as the buffer lives. Thread-safe.
std::string task_content_key(const Task& task);

}  // namespace kernelsmith::detail
