#include "kernelsmith/mutator.hpp"

#include "kernelsmith/error.hpp"

namespace kernelsmith {

const Task& MutationRequest::task() const {
  if (!shared_task) {
    throw ValidationError(
        "the mutation request carries no task (shared_task is null): set it, e.g. request.shared_task = "
        "std::make_shared<const Task>(task), or request.task = task in Python");
  }
  return *shared_task;
}

std::string MutationRequest::child_language() const {
  if (!language.empty()) return language;
  return parent.language.empty() ? "cuda" : parent.language;
}

}  // namespace kernelsmith
