// A program built against the installed kernelsmith with find_package: loads a built-in task, lists the
// backends, and catches the library's errors by their own types (their type_info is exported).
#include <kernelsmith/kernelsmith.hpp>

#include <iostream>

int main() {
  try {
    std::cout << "kernelsmith " << kernelsmith::version() << "\n";
    for (const auto& backend : kernelsmith::devices()) {
      std::cout << backend.name << ": " << (backend.available ? "available" : backend.reason) << "\n";
    }
    const auto names = kernelsmith::builtin_task_names();
    if (names.empty()) {
      std::cerr << "no built-in tasks found in the installed tree\n";
      return 1;
    }
    const auto task = kernelsmith::Task::load(names.front());
    std::cout << "task " << task.name << " with " << task.tensors.size() << " tensors\n";
    try {
      kernelsmith::evaluate_expression("N +", {{"N", 1}});
      std::cerr << "a malformed expression was accepted\n";
      return 1;
    } catch (const kernelsmith::PlanError& error) {
      std::cout << "caught PlanError: " << error.what() << "\n";
    }
    return 0;
  } catch (const kernelsmith::Error& error) {
    std::cerr << "kernelsmith error: " << error.what() << "\n";
    return 1;
  }
}
