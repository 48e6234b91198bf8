// C++ exceptions → Python exception classes. kernelsmith.Error derives from RuntimeError; the others
// also derive from the matching built-in class, so `except ValueError` catches a ValidationError.
#include "bindings.hpp"

#include "kernelsmith/backend.hpp"
#include "kernelsmith/error.hpp"
#include "kernelsmith/launch_plan.hpp"

namespace py = pybind11;

namespace kernelsmith::python {
namespace {

py::object make_exception_class(py::module_& m, const char* name, py::tuple bases, const char* doc) {
  const std::string qualified = std::string("kernelsmith.") + name;
  PyObject* type = PyErr_NewExceptionWithDoc(qualified.c_str(), doc, bases.ptr(), nullptr);
  if (type == nullptr) throw py::error_already_set();
  py::object cls = py::reinterpret_steal<py::object>(type);
  m.attr(name) = cls;
  return cls;
}

}  // namespace

void bind_errors(py::module_& m) {
  auto builtins = py::module_::import("builtins");
  // Static so the translator can reach them for the life of the interpreter.
  static py::object error = make_exception_class(
      m, "Error", py::make_tuple(builtins.attr("RuntimeError")), "Root of kernelsmith's errors.");
  static py::object validation = make_exception_class(
      m, "ValidationError", py::make_tuple(error, builtins.attr("ValueError")),
      "Malformed input: a task manifest, a JSON document, an option value.");
  static py::object plan = make_exception_class(
      m, "PlanError", py::make_tuple(validation),
      "A mistake in a launch plan or an expression; .line is its 1-based source line (0: not tied to one).");
  static py::object task = make_exception_class(
      m, "TaskError", py::make_tuple(validation),
      "A problem of the task, not of a candidate: its reference does not compile or fails, or its output is "
      "near-constant on random inputs. Raised instead of returning an Evaluation.");
  static py::object not_found = make_exception_class(
      m, "NotFoundError", py::make_tuple(error, builtins.attr("LookupError")),
      "Something named does not exist: a task, a file, a program id, a device.");
  static py::object not_supported = make_exception_class(
      m, "NotSupportedError", py::make_tuple(error, builtins.attr("NotImplementedError")),
      "A feature that is not implemented for this case.");
  static py::object unavailable = make_exception_class(
      m, "BackendUnavailableError", py::make_tuple(error), "A backend cannot be used here.");
  static py::object lib_not_found = make_exception_class(
      m, "LibraryNotFoundError", py::make_tuple(unavailable), "A run-time library was not found.");
  static py::object lib_load = make_exception_class(
      m, "LibraryLoadError", py::make_tuple(unavailable), "A run-time library failed to load.");
  static py::object symbol_missing = make_exception_class(
      m, "SymbolMissingError", py::make_tuple(unavailable), "A run-time library lacks a function.");
  static py::object device = make_exception_class(
      m, "DeviceError", py::make_tuple(error), "A device API call failed.");
  static py::object launch = make_exception_class(
      m, "LaunchError", py::make_tuple(device), "The device refused a launch.");
  static py::object fault = make_exception_class(
      m, "DeviceFault", py::make_tuple(device), "The device context was lost.");
  static py::object store = make_exception_class(
      m, "StoreError", py::make_tuple(error), "The run store (SQLite) failed.");
  static py::object timeout = make_exception_class(
      m, "TimeoutError", py::make_tuple(error, builtins.attr("TimeoutError")),
      "An operation did not finish within its deadline.");

  py::register_exception_translator([](std::exception_ptr pointer) {
    if (!pointer) return;
    // Most derived first.
    try {
      std::rethrow_exception(pointer);
    } catch (const PlanError& e) {
      // The instance carries the line, as the C++ exception does.
      py::object instance = plan(e.what());
      instance.attr("line") = e.line();
      PyErr_SetObject(plan.ptr(), instance.ptr());
    } catch (const TaskError& e) {
      PyErr_SetString(task.ptr(), e.what());
    } catch (const ValidationError& e) {
      PyErr_SetString(validation.ptr(), e.what());
    } catch (const NotFoundError& e) {
      PyErr_SetString(not_found.ptr(), e.what());
    } catch (const NotSupportedError& e) {
      PyErr_SetString(not_supported.ptr(), e.what());
    } catch (const LibraryNotFoundError& e) {
      PyErr_SetString(lib_not_found.ptr(), e.what());
    } catch (const LibraryLoadError& e) {
      PyErr_SetString(lib_load.ptr(), e.what());
    } catch (const SymbolMissingError& e) {
      PyErr_SetString(symbol_missing.ptr(), e.what());
    } catch (const BackendUnavailableError& e) {
      PyErr_SetString(unavailable.ptr(), e.what());
    } catch (const LaunchError& e) {
      PyErr_SetString(launch.ptr(), e.what());
    } catch (const DeviceFault& e) {
      PyErr_SetString(fault.ptr(), e.what());
    } catch (const DeviceError& e) {
      PyErr_SetString(device.ptr(), e.what());
    } catch (const StoreError& e) {
      PyErr_SetString(store.ptr(), e.what());
    } catch (const TimeoutError& e) {
      PyErr_SetString(timeout.ptr(), e.what());
    } catch (const Error& e) {
      PyErr_SetString(error.ptr(), e.what());
    }
  });
}

}  // namespace kernelsmith::python
