// Declarations of the per-concept binding functions that module.cpp calls.
#pragma once

#include <pybind11/pybind11.h>

namespace kernelsmith::python {

void bind_errors(pybind11::module_& m);
void bind_core_types(pybind11::module_& m);  // DType, Task, Candidate, LaunchPlan, Evaluation
void bind_devices(pybind11::module_& m);
void bind_evaluator(pybind11::module_& m);
void bind_memory(pybind11::module_& m);  // features, predicates, SkillBank, ExperienceMemory, Retriever
void bind_search(pybind11::module_& m);  // Mutator, Population, Archive, Evolution, RunStore (after bind_memory)
void bind_llm(pybind11::module_& m);     // PromptBuilder, parse_response, LlmClient, LlmMutator (after bind_search)
void bind_arrays(pybind11::module_& m);  // KernelRunner, run_kernel, Task.add_case (after core types)

}  // namespace kernelsmith::python
