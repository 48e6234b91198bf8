#include "bindings.hpp"

#include "kernelsmith/version.hpp"

PYBIND11_MODULE(_core, m) {
  m.doc() = "kernelsmith's compiled core; use the pure-Python package `kernelsmith` instead.";
  m.attr("__version__") = kernelsmith::version();
  kernelsmith::python::bind_errors(m);
  kernelsmith::python::bind_core_types(m);
  kernelsmith::python::bind_devices(m);
  kernelsmith::python::bind_evaluator(m);
  kernelsmith::python::bind_memory(m);
  kernelsmith::python::bind_search(m);
  kernelsmith::python::bind_llm(m);
  kernelsmith::python::bind_arrays(m);
}
