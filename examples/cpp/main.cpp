// Evaluates a built-in task's reference implementation on the best available backend and prints the
// evaluation: the smallest complete use of the C++ API.
//
//   evaluate_reference [task] [SIZE=value ...]
//
// e.g. `evaluate_reference relu N=1048576` times relu at a million elements instead of its default
// size (useful on a CPU OpenCL device, where the default sizes take longer).
#include <kernelsmith/kernelsmith.hpp>

#include <cstdlib>
#include <iostream>
#include <string>

int main(int argc, char** argv) {
  const std::string task_name = argc > 1 ? argv[1] : "relu";
  try {
    kernelsmith::Task task = kernelsmith::Task::load(task_name);
    for (int i = 2; i < argc; ++i) {
      const std::string assignment = argv[i];
      const auto equals = assignment.find('=');
      if (equals == std::string::npos || equals == 0) {
        std::cerr << "evaluate_reference: '" << assignment << "' is not SIZE=value (e.g. N=1048576)\n";
        return 2;
      }
      const std::string name = assignment.substr(0, equals);
      if (task.timing_sizes.sizes.count(name) == 0) {
        std::cerr << "evaluate_reference: task " << task.name << " has no size named '" << name << "'\n";
        return 2;
      }
      task.timing_sizes.sizes[name] = std::strtoll(assignment.c_str() + equals + 1, nullptr, 10);
    }

    kernelsmith::EvaluatorOptions options;
    options.backend = "auto";  // CUDA when a GPU is there, else OpenCL
    auto evaluator = kernelsmith::create_evaluator(options);
    const std::string language = evaluator->backend_name();
    const auto reference = task.references.find(language);
    if (reference == task.references.end()) {
      std::cerr << "evaluate_reference: task " << task.name << " has no " << language << " reference\n";
      return 1;
    }

    kernelsmith::Candidate candidate;
    candidate.language = language;
    candidate.source = reference->second.source;
    candidate.lineage.origin = "reference";

    const kernelsmith::Evaluation evaluation = evaluator->evaluate(task, candidate);
    std::cout << "task " << task.name << " on " << evaluator->backend_name() << " '" << evaluator->device_name()
              << "'\n"
              << evaluation.to_prompt_text() << "\n";
    // The reference against itself: correct, and a speedup near 1.
    return evaluation.ok() ? 0 : 1;
  } catch (const kernelsmith::BackendUnavailableError& error) {
    std::cerr << "evaluate_reference: no backend can run here: " << error.what() << "\n";
    return 1;
  } catch (const kernelsmith::Error& error) {
    std::cerr << "evaluate_reference: " << error.what() << "\n";
    return 1;
  }
}
