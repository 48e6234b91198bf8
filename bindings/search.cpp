#include "bindings.hpp"

namespace kernelsmith::python {

void bind_search(pybind11::module_& m) { (void)m; }

}  // namespace kernelsmith::python
