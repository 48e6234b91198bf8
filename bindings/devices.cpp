// Devices and backends.
#include "bindings.hpp"

#include <pybind11/stl.h>

#include "kernelsmith/device.hpp"

namespace py = pybind11;

namespace kernelsmith::python {

void bind_devices(py::module_& m) {
  py::class_<DeviceInfo>(m, "DeviceInfo", "A device of one backend, with what the launch plan and the "
                                          "speed-of-light model need to know of it.")
      .def(py::init<>())
      .def_readwrite("backend", &DeviceInfo::backend)
      .def_readwrite("index", &DeviceInfo::index)
      .def_readwrite("name", &DeviceInfo::name)
      .def_readwrite("vendor", &DeviceInfo::vendor)
      .def_readwrite("platform", &DeviceInfo::platform)
      .def_readwrite("architecture", &DeviceInfo::architecture)
      .def_readwrite("driver_version", &DeviceInfo::driver_version, "keys the cache of measured peaks; empty when unknown")
      .def_readwrite("compute_units", &DeviceInfo::compute_units, "SMs on CUDA, compute units on OpenCL")
      .def_readwrite("warp_size", &DeviceInfo::warp_size)
      .def_readwrite("max_threads_per_block", &DeviceInfo::max_threads_per_block)
      .def_readwrite("shared_per_block", &DeviceInfo::shared_per_block)
      .def_readwrite("shared_per_block_optin", &DeviceInfo::shared_per_block_optin)
      .def_readwrite("l2_bytes", &DeviceInfo::l2_bytes)
      .def_readwrite("global_memory_bytes", &DeviceInfo::global_memory_bytes)
      .def_readwrite("clock_mhz", &DeviceInfo::clock_mhz)
      .def_readwrite("is_gpu", &DeviceInfo::is_gpu)
      .def("__repr__", [](const DeviceInfo& d) {
        return "<DeviceInfo " + d.backend + ":" + std::to_string(d.index) + " '" + d.name + "'>";
      });

  py::class_<BackendInfo>(m, "BackendInfo", "A backend, its devices, or why it is unavailable.")
      .def(py::init<>())
      .def_readwrite("name", &BackendInfo::name)
      .def_readwrite("available", &BackendInfo::available)
      .def_readwrite("reason", &BackendInfo::reason)
      .def_readwrite("can_compile", &BackendInfo::can_compile)
      .def_readwrite("details", &BackendInfo::details)
      .def_readwrite("devices", &BackendInfo::devices)
      .def("__repr__", [](const BackendInfo& b) {
        return "<BackendInfo " + b.name + (b.available ? " available" : " unavailable: " + b.reason) + ">";
      });

  m.def("devices", &devices, py::call_guard<py::gil_scoped_release>(),
        "Every backend this build knows, with its devices or the reason it is unavailable.");
  m.def("best_backend", &best_backend, py::call_guard<py::gil_scoped_release>(),
        "The backend to use when none is named: a GPU backend first, then OpenCL.");
  m.def("devices_json", [] { return to_json(devices()); }, py::call_guard<py::gil_scoped_release>(),
        "devices() as a JSON document (schema kernelsmith.devices/1).");
}

}  // namespace kernelsmith::python
