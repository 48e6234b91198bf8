#include "bindings.hpp"

namespace kernelsmith::python {

void bind_core_types(pybind11::module_& m) { (void)m; }

}  // namespace kernelsmith::python
