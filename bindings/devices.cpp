// Devices and backends.
#include "bindings.hpp"

#include <pybind11/stl.h>

#include "kernelsmith/backend.hpp"
#include "kernelsmith/device.hpp"
#include "kernelsmith/python_helpers.hpp"
#include "kernelsmith/sandbox.hpp"
#include "kernelsmith/triton.hpp"

namespace py = pybind11;

namespace kernelsmith::python {

void bind_devices(py::module_& m) {
  py::class_<DeviceInfo>(m, "DeviceInfo", "A device of one backend, with what the launch plan and the "
                                          "speed-of-light model need to know of it.")
      .def(py::init<>())
      .def_readwrite("backend", &DeviceInfo::backend, "The backend: 'cuda', 'opencl' or 'maca'.")
      .def_readwrite("index", &DeviceInfo::index, "Index of the device within its backend.")
      .def_readwrite("name", &DeviceInfo::name)
      .def_readwrite("vendor", &DeviceInfo::vendor, "The device vendor's name.")
      .def_readwrite("platform", &DeviceInfo::platform, "OpenCL platform name; empty on other backends.")
      .def_readwrite("architecture", &DeviceInfo::architecture,
                     "e.g. 'sm_90' on CUDA; on OpenCL the device version string.")
      .def_readwrite("driver_version", &DeviceInfo::driver_version, "keys the cache of measured peaks; empty when unknown")
      .def_readwrite("compute_units", &DeviceInfo::compute_units, "SMs on CUDA, compute units on OpenCL")
      .def_readwrite("warp_size", &DeviceInfo::warp_size,
                     "Threads per warp (SIMD width); 1 when the backend does not report one.")
      .def_readwrite("max_threads_per_block", &DeviceInfo::max_threads_per_block,
                     "Most threads in one block (work-group); 0 when unknown.")
      .def_readwrite("shared_per_block", &DeviceInfo::shared_per_block,
                     "Shared (local) memory a block may use by default, in bytes.")
      .def_readwrite("shared_per_block_optin", &DeviceInfo::shared_per_block_optin,
                     "Shared memory a block may use after opting in (CUDA), in bytes.")
      .def_readwrite("l2_bytes", &DeviceInfo::l2_bytes, "L2 cache size in bytes; 0 when unknown.")
      .def_readwrite("global_memory_bytes", &DeviceInfo::global_memory_bytes, "Global (device) memory in bytes.")
      .def_readwrite("max_allocation_bytes", &DeviceInfo::max_allocation_bytes,
                     "The largest single buffer in bytes (OpenCL CL_DEVICE_MAX_MEM_ALLOC_SIZE); 0 when unknown.")
      .def_readwrite("clock_mhz", &DeviceInfo::clock_mhz, "Core clock in MHz; 0 when unknown.")
      .def_readwrite("is_gpu", &DeviceInfo::is_gpu, "True for a GPU (False for e.g. PoCL's CPU device).")
      .def("__repr__", [](const DeviceInfo& d) {
        return "<DeviceInfo " + d.backend + ":" + std::to_string(d.index) + " '" + d.name + "'>";
      });

  py::class_<SandboxProtection>(m, "SandboxProtection", "One mechanism of the sandbox and whether it holds here.")
      .def(py::init<>())
      .def_readwrite("name", &SandboxProtection::name,
                     "'limits', 'network', 'processes', 'ipc', 'filesystem', 'user' or 'syscalls'.")
      .def_readwrite("on", &SandboxProtection::on, "Whether it holds on this machine (checked from inside).")
      .def_readwrite("detail", &SandboxProtection::detail, "What it does when on; why it is off when off.")
      .def_readwrite("required", &SandboxProtection::required,
                     "Whether EvaluatorOptions.require_sandbox needs it (all but 'user').")
      .def("__repr__", [](const SandboxProtection& p) {
        return "<SandboxProtection " + p.name + (p.on ? " on>" : " off: " + p.detail + ">");
      });

  py::class_<SandboxStatus>(m, "SandboxStatus",
                            "What the sandbox of untrusted code gives on this machine (docs/security.md).")
      .def(py::init<>())
      .def_readwrite("enabled", &SandboxStatus::enabled,
                     "False when switched off (KERNELSMITH_SANDBOX=off) or its launcher is missing.")
      .def_readwrite("reason", &SandboxStatus::reason, "Why it is disabled; empty when enabled.")
      .def_readwrite("launcher", &SandboxStatus::launcher, "The launcher program's path.")
      .def_readwrite("protections", &SandboxStatus::protections, "A list of SandboxProtection.")
      .def("complete", &SandboxStatus::complete, "Every required protection holds.")
      .def("off", &SandboxStatus::off, "'name: why' for each protection that is off.")
      .def("summary", &SandboxStatus::summary, "One line for people.")
      .def("__repr__", [](const SandboxStatus& s) { return "<SandboxStatus " + s.summary() + ">"; });

  m.def("sandbox_status", &sandbox_status, py::call_guard<py::gil_scoped_release>(),
        "What the sandbox gives on this machine: probed once per process by running its launcher in report "
        "mode, the code path of a real launch.");
  m.def("sandboxed_command", &sandboxed_command, py::arg("command"), py::arg("scratch"),
        py::arg("readable") = std::vector<std::string>{},
        "The command line that runs `command` confined, writing only to `scratch` (its working directory, HOME "
        "and TMPDIR), reading the system's folders, the interpreter's and `readable`. `command` unchanged when "
        "the sandbox is disabled (sandbox_status() says why).");

  py::class_<BackendInfo>(m, "BackendInfo", "A backend, its devices, or why it is unavailable.")
      .def(py::init<>())
      .def_readwrite("name", &BackendInfo::name)
      .def_readwrite("available", &BackendInfo::available,
                     "Usable for evaluation: the runtime loaded and at least one device answered.")
      .def_readwrite("reason", &BackendInfo::reason,
                     "Why not, when not available (e.g. 'CUDA driver libcuda.so.1 not found: ...').")
      .def_readwrite("can_compile", &BackendInfo::can_compile,
                     "Compiling works even when running does not (NVRTC with no GPU driver).")
      .def_readwrite("details", &BackendInfo::details,
                     "Which library files were loaded, or the compiler's version, for the record.")
      .def_readwrite("devices", &BackendInfo::devices, "The backend's devices, a list of DeviceInfo.")
      .def("__repr__", [](const BackendInfo& b) {
        return "<BackendInfo " + b.name + (b.available ? " available" : " unavailable: " + b.reason) + ">";
      });

  m.def("devices", &devices, py::call_guard<py::gil_scoped_release>(),
        "Every backend this build knows, with its devices or the reason it is unavailable.");
  m.def("best_backend", &best_backend, py::call_guard<py::gil_scoped_release>(),
        "The backend to use when none is named: a GPU backend first, then OpenCL.");
  py::class_<TritonStatus>(m, "TritonStatus",
                           "Whether Triton candidates can be compiled here (docs/triton.md), and by what.")
      .def(py::init<>())
      .def_readwrite("available", &TritonStatus::available, "The triton package imports and its launch ABI is known.")
      .def_readwrite("version", &TritonStatus::version, "The triton package's version, e.g. '3.6.0'.")
      .def_readwrite("reason", &TritonStatus::reason, "Why not, when not available, and how to install it.")
      .def_readwrite("python", &TritonStatus::python, "The Python interpreter the compile helpers run.")
      .def_readwrite("helper", &TritonStatus::helper, "The compile helper script (triton_compile.py).")
      .def("__repr__", [](const TritonStatus& t) {
        return "<TritonStatus " + (t.available ? "available: triton " + t.version : "unavailable: " + t.reason) + ">";
      });
  py::class_<TritonKernelSpec>(m, "TritonKernelSpec",
                               "One specialization of a @triton.jit function that a plan launches: what the "
                               "Triton front end compiles into one cubin.")
      .def(py::init<>())
      .def_readwrite("name", &TritonKernelSpec::name,
                     "The kernel and its specialization: 'add[BLOCK=1024 num_warps=4 num_stages=3 | *fp32,i32/16]'.")
      .def_readwrite("kernel", &TritonKernelSpec::kernel, "The @triton.jit function.")
      .def_readwrite("signature", &TritonKernelSpec::signature, "The non-constexpr parameters' types: '*fp32', 'i32'.")
      .def_readwrite("constexprs", &TritonKernelSpec::constexprs, "The constexpr values, (name, value) in order.")
      .def_readwrite("num_warps", &TritonKernelSpec::num_warps, "Warps per block: the block is 32 x num_warps threads.")
      .def_readwrite("num_stages", &TritonKernelSpec::num_stages, "Software pipelining stages.")
      .def_readwrite("aligned", &TritonKernelSpec::aligned,
                     "Indices into signature taken as multiples of 16: pointers, and integers whose value is one.")
      .def_readwrite("line", &TritonKernelSpec::line, "The plan line of its first launch.")
      .def_readwrite("configs", &TritonKernelSpec::configs, "The size configurations that launch it.")
      .def("__repr__", [](const TritonKernelSpec& spec) { return "<TritonKernelSpec " + spec.name + ">"; });
  m.def("triton_kernel_specs", &triton_kernel_specs, py::arg("task"), py::arg("source"), py::arg("device"),
        "The specializations a Triton candidate's plan needs for a task on a device, each once, as the evaluator "
        "compiles them (docs/triton.md).");
  py::class_<OfflineProgram>(m, "OfflineProgram",
                             "One program of a CUDA candidate compiled without a device (compile_candidate_offline).")
      .def(py::init<>())
      .def_readwrite("config", &OfflineProgram::config,
                     "The size configuration it serves; '' when one program serves them all (no @specialize).")
      .def_readwrite("report", &OfflineProgram::report,
                     "The compile report: ok, the log, each kernel's registers and spilled bytes.")
      .def("__repr__", [](const OfflineProgram& program) {
        return "<OfflineProgram " + (program.config.empty() ? std::string("all sizes") : program.config) +
               (program.report.ok ? " ok>" : " failed>");
      });
  m.def("compile_candidate_offline", &compile_candidate_offline, py::arg("task"), py::arg("candidate"),
        py::arg("architecture"), py::arg("timeout_seconds") = 120.0, py::call_guard<py::gil_scoped_release>(),
        "Compiles a CUDA candidate for a task as the evaluator would on a GPU of this architecture ('sm_90', "
        "'sm_80'), without a GPU (NVRTC): one program, or one per size configuration under @specialize. A source "
        "the compiler rejects gives a report with ok False; a malformed plan raises PlanError, another language "
        "NotSupportedError, no NVRTC BackendUnavailableError.");
  m.def("triton_status", &triton_status, py::call_guard<py::gil_scoped_release>(),
        "Whether Triton candidates can be compiled here: asks a compile helper (started once, then kept) whether "
        "triton imports. Never raises.");
  m.def("set_helper_python", &set_helper_python, py::arg("python"),
        "The Python interpreter of kernelsmith's helper processes (the Triton compile helpers, the PyTorch oracle) "
        "when $KERNELSMITH_PYTHON is not set; importing kernelsmith sets it to sys.executable.");
  m.def("helper_python", &helper_python,
        "The interpreter the helper processes run now: $KERNELSMITH_PYTHON, the one set_helper_python() set, or "
        "'/usr/bin/env python3'.");
  m.def("set_triton_python", &set_triton_python, py::arg("python"),
        "The older name of set_helper_python: the interpreter of every helper process.");
  m.def("devices_json", [] { return to_json(devices()); }, py::call_guard<py::gil_scoped_release>(),
        "devices() as a JSON document (schema kernelsmith.devices/1).");
}

}  // namespace kernelsmith::python
