#include "bindings.hpp"

namespace kernelsmith::python {

void bind_evaluator(pybind11::module_& m) { (void)m; }

}  // namespace kernelsmith::python
