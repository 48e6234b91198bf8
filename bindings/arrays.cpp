// Bindings of the caller's arrays: KernelRunner, run_kernel and Task.add_case accept NumPy arrays and any
// DLPack producer (PyTorch, CuPy, JAX, NumPy itself). CUDA device tensors are used in place by the CUDA
// backend; everything else is read as host memory (a non-contiguous host array is copied first).
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <pybind11/stl/filesystem.h>

#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "bindings.hpp"
#include "kernelsmith/backend.hpp"
#include "kernelsmith/device.hpp"
#include "kernelsmith/error.hpp"
#include "kernelsmith/kernel_runner.hpp"
#include "kernelsmith/task.hpp"

namespace py = pybind11;

namespace kernelsmith::python {
namespace {

// The DLPack ABI (dmlc/dlpack, v0.8 "dltensor" capsules), written out here rather than vendored.
enum DLDeviceType : std::int32_t { kDLCPU = 1, kDLCUDA = 2, kDLCUDAHost = 3, kDLCUDAManaged = 13 };
struct DLDevice {
  std::int32_t device_type;
  std::int32_t device_id;
};
struct DLDataType {
  std::uint8_t code;  // 0 int, 1 uint, 2 float, 4 bfloat
  std::uint8_t bits;
  std::uint16_t lanes;
};
struct DLTensor {
  void* data;
  DLDevice device;
  std::int32_t ndim;
  DLDataType dtype;
  std::int64_t* shape;
  std::int64_t* strides;  // in elements; null for a compact row-major tensor
  std::uint64_t byte_offset;
};
struct DLManagedTensor {
  DLTensor dl_tensor;
  void* manager_ctx;
  void (*deleter)(DLManagedTensor*);
};

/// A TensorRef and what keeps its memory alive while C++ uses it.
struct ArrayArg {
  TensorRef ref;
  py::object keepalive;
};

DType dtype_of_dlpack(const DLDataType& type, const std::string& what) {
  if (type.lanes == 1) {
    if (type.code == 2 && type.bits == 16) return DType::float16;
    if (type.code == 2 && type.bits == 32) return DType::float32;
    if (type.code == 2 && type.bits == 64) return DType::float64;
    if (type.code == 4 && type.bits == 16) return DType::bfloat16;
    if (type.code == 0 && type.bits == 8) return DType::int8;
    if (type.code == 0 && type.bits == 32) return DType::int32;
    if (type.code == 0 && type.bits == 64) return DType::int64;
    if (type.code == 1 && type.bits == 8) return DType::uint8;
  }
  throw ValidationError(what + " has a DLPack dtype (code " + std::to_string(type.code) + ", " +
                        std::to_string(type.bits) + " bits, " + std::to_string(type.lanes) +
                        " lanes) that kernelsmith has no DType for");
}

DType dtype_of_numpy(const py::dtype& dtype, const std::string& what) {
  const std::string name = py::str(dtype.attr("name"));
  if (name == "bfloat16") return DType::bfloat16;  // ml_dtypes
  if (!dtype.attr("isnative").cast<bool>()) {
    throw ValidationError(what + " is in non-native byte order; convert it with .astype(its dtype.newbyteorder('='))");
  }
  const char kind = dtype.kind();
  const auto size = dtype.itemsize();
  if (kind == 'f' && size == 2) return DType::float16;
  if (kind == 'f' && size == 4) return DType::float32;
  if (kind == 'f' && size == 8) return DType::float64;
  if (kind == 'i' && size == 1) return DType::int8;
  if (kind == 'i' && size == 4) return DType::int32;
  if (kind == 'i' && size == 8) return DType::int64;
  if (kind == 'u' && size == 1) return DType::uint8;
  throw ValidationError(what + " has dtype " + name +
                        "; kernelsmith tensors are float16, bfloat16, float32, float64, int8, uint8, int32 or int64");
}

py::module_ numpy() { return py::module_::import("numpy"); }

// A DLPack capsule of a CUDA tensor → a device TensorRef (no copy). The capsule keeps the producer's
// memory alive; its destructor calls the deleter, as the protocol asks of an unconsumed capsule.
ArrayArg from_cuda_dlpack(py::handle object, const std::string& what) {
  py::object capsule;
  try {
    // stream=1: the producer orders its pending work before the legacy default stream, which the CUDA
    // backend's blocking stream waits for.
    capsule = object.attr("__dlpack__")(py::arg("stream") = 1);
  } catch (const py::error_already_set& e) {
    if (!e.matches(PyExc_TypeError)) throw;
    capsule = object.attr("__dlpack__")();
  }
  if (!PyCapsule_IsValid(capsule.ptr(), "dltensor")) {
    throw ValidationError(what + ": __dlpack__() did not return an unused \"dltensor\" capsule");
  }
  auto* managed = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(capsule.ptr(), "dltensor"));
  const DLTensor& tensor = managed->dl_tensor;
  ArrayArg arg;
  arg.ref.dtype = dtype_of_dlpack(tensor.dtype, what);
  arg.ref.shape.assign(tensor.shape, tensor.shape + tensor.ndim);
  if (tensor.strides != nullptr) {
    std::int64_t expected = 1;
    for (int d = tensor.ndim - 1; d >= 0; --d) {
      if (tensor.shape[d] != 1 && tensor.strides[d] != expected) {
        throw ValidationError(what + " is a CUDA tensor that is not C-contiguous; make it so first "
                                     "(tensor.contiguous(), cupy.ascontiguousarray(array))");
      }
      expected *= tensor.shape[d];
    }
  }
  arg.ref.data = static_cast<std::uint8_t*>(tensor.data) + tensor.byte_offset;
  arg.ref.on_device = true;
  arg.keepalive = capsule;
  return arg;
}

ArrayArg from_numpy(py::array array, const std::string& what, bool writable) {
  ArrayArg arg;
  arg.ref.dtype = dtype_of_numpy(array.dtype(), what);
  if (!(array.flags() & py::array::c_style)) {
    if (writable) {
      throw ValidationError(what + " is an output array that is not C-contiguous; pass a contiguous one "
                                   "(numpy.empty(shape, dtype)) to receive the results");
    }
    array = numpy().attr("ascontiguousarray")(array);
  }
  if (writable && !array.writeable()) throw ValidationError(what + " is a read-only array; outputs need writable ones");
  arg.ref.shape.assign(array.shape(), array.shape() + array.ndim());
  arg.ref.data = const_cast<void*>(array.data());
  arg.keepalive = array;
  return arg;
}

/// Any array-like → TensorRef. `dtype` converts plain Python sequences (lists) to the tensor's dtype;
/// arrays keep theirs and a mismatch is reported later, naming the tensor.
ArrayArg to_tensor(py::handle object, const std::string& what, DType dtype, bool writable) {
  if (py::hasattr(object, "__dlpack_device__") && !py::isinstance<py::array>(object)) {
    const auto device = object.attr("__dlpack_device__")().cast<std::pair<int, int>>();
    if (device.first == kDLCUDA || device.first == kDLCUDAManaged) {
      ArrayArg arg = from_cuda_dlpack(object, what);
      // The device index is checked by the backend (it knows which device it runs on); keep it for messages.
      return arg;
    }
    if (device.first != kDLCPU && device.first != kDLCUDAHost) {
      throw ValidationError(what + " lives on a DLPack device of type " + std::to_string(device.first) +
                            "; kernelsmith reads host memory and CUDA device memory: copy it to one of them");
    }
    py::array view = numpy().attr("from_dlpack")(object);
    return from_numpy(view, what, writable);
  }
  if (py::isinstance<py::array>(object)) return from_numpy(py::reinterpret_borrow<py::array>(object), what, writable);
  if (writable) throw ValidationError(what + " must be an array (NumPy or DLPack) to receive the results");
  static const char* names[] = {"float16", "bfloat16", "float32", "float64", "int8", "uint8", "int32", "int64"};
  const std::string name = names[static_cast<int>(dtype)];
  if (dtype == DType::bfloat16) {
    throw ValidationError(what + ": pass bfloat16 data as an array (ml_dtypes.bfloat16, torch.bfloat16)");
  }
  py::array array = numpy().attr("asarray")(object, py::arg("dtype") = name);
  return from_numpy(array, what, false);
}

py::object numpy_dtype(DType dtype) {
  switch (dtype) {
    case DType::float16: return numpy().attr("dtype")("float16");
    case DType::bfloat16: {
      try {
        return py::module_::import("ml_dtypes").attr("bfloat16");
      } catch (const py::error_already_set&) {
        return py::none();  // float32 values instead (below)
      }
    }
    case DType::float32: return numpy().attr("dtype")("float32");
    case DType::float64: return numpy().attr("dtype")("float64");
    case DType::int8: return numpy().attr("dtype")("int8");
    case DType::uint8: return numpy().attr("dtype")("uint8");
    case DType::int32: return numpy().attr("dtype")("int32");
    case DType::int64: return numpy().attr("dtype")("int64");
  }
  return py::none();
}

// A HostTensor → a NumPy array that owns its bytes (no copy). bfloat16 becomes float32 when ml_dtypes is
// not installed (every bfloat16 value is exactly a float32).
py::array to_numpy(HostTensor tensor) {
  py::object dtype = numpy_dtype(tensor.dtype);
  if (dtype.is_none()) {
    std::vector<float> widened(tensor.data.size() / 2);
    for (std::size_t i = 0; i < widened.size(); ++i) {
      std::uint16_t bits = 0;
      std::memcpy(&bits, tensor.data.data() + 2 * i, 2);
      const std::uint32_t wide = std::uint32_t(bits) << 16;
      std::memcpy(&widened[i], &wide, 4);
    }
    py::array_t<float> out(tensor.shape);
    std::memcpy(out.mutable_data(), widened.data(), widened.size() * 4);
    return std::move(out);
  }
  auto* bytes = new std::vector<std::uint8_t>(std::move(tensor.data));
  py::capsule owner(bytes, [](void* pointer) { delete static_cast<std::vector<std::uint8_t>*>(pointer); });
  return py::array(py::dtype::from_args(dtype), tensor.shape, bytes->data(), owner);
}

/// Host bytes of a CUDA device tensor (for Task.add_case, which keeps its data on the host).
TensorRef copied_to_host(const TensorRef& device_ref, std::vector<std::uint8_t>& storage, int device_index) {
  auto backend = create_backend("cuda", device_index);
  storage.resize(device_ref.byte_count());
  const std::uint64_t handle = backend->adopt_external(reinterpret_cast<std::uint64_t>(device_ref.data), storage.size());
  try {
    backend->read(handle, storage.data(), storage.size());
  } catch (...) {
    backend->free(handle);
    throw;
  }
  backend->free(handle);
  TensorRef host = device_ref;
  host.data = storage.data();
  host.on_device = false;
  return host;
}

DType declared_dtype(const Task& task, const std::string& name) {
  for (const auto& spec : task.tensors) {
    if (spec.name == name) return spec.dtype;
  }
  return DType::float32;  // an unknown name is reported by the C++ call, listing the task's tensors
}

struct Tensors {
  std::map<std::string, TensorRef> refs;
  std::vector<py::object> keepalive;
};

void add_tensors(Tensors& into, const Task& task, const py::dict& arrays, bool writable, const char* kind) {
  for (const auto& [key, value] : arrays) {
    const std::string name = py::str(key);
    if (into.refs.count(name) > 0) {
      throw ValidationError("tensor " + name + " is given twice (as an input and in out=)");
    }
    ArrayArg arg = to_tensor(value, std::string(kind) + " " + name, declared_dtype(task, name), writable);
    into.refs[name] = arg.ref;
    into.keepalive.push_back(std::move(arg.keepalive));
  }
}

SizeMap sizes_of(const py::object& sizes) { return sizes.is_none() ? SizeMap{} : sizes.cast<SizeMap>(); }

py::dict run_on(KernelRunner& runner, const py::dict& tensors, const py::object& sizes, const py::object& out) {
  Tensors all;
  add_tensors(all, runner.task(), tensors, false, "tensor");
  if (!out.is_none()) add_tensors(all, runner.task(), out.cast<py::dict>(), true, "output");
  const SizeMap given = sizes_of(sizes);
  std::map<std::string, HostTensor> results;
  {
    py::gil_scoped_release release;
    results = runner.run(all.refs, given);
  }
  py::dict arrays;
  for (auto& [name, tensor] : results) arrays[py::str(name)] = to_numpy(std::move(tensor));
  return arrays;
}

KernelRunner make_runner(const Task& task, const py::object& candidate, const std::string& backend, int device) {
  RunnerOptions options{backend, device};
  if (candidate.is_none()) {
    py::gil_scoped_release release;
    return KernelRunner::reference(task, options);
  }
  Candidate chosen;
  const py::object path_like = py::module_::import("os").attr("PathLike");
  if (py::isinstance(candidate, path_like)) {
    // A candidate file: its extension names the language (k.py is Triton, which runs on cuda).
    chosen = Candidate::from_file(py::str(py::module_::import("os").attr("fspath")(candidate)).cast<std::string>());
  } else if (py::isinstance<py::str>(candidate)) {
    chosen.source = candidate.cast<std::string>();
    chosen.language = backend == "auto" ? best_backend() : backend;
  } else {
    chosen = candidate.cast<Candidate>();
  }
  py::gil_scoped_release release;
  return KernelRunner(task, chosen, options);
}

py::dict merged(const py::object& tensors, const py::kwargs& more) {
  py::dict all;
  if (!tensors.is_none()) {
    for (const auto& [key, value] : tensors.cast<py::dict>()) all[key] = value;
  }
  for (const auto& [key, value] : more) all[key] = value;
  return all;
}

constexpr const char* kRunDoc =
    "Runs the kernel once on the given tensors and returns {output name: numpy.ndarray} for every output not "
    "passed in `out`.\n\n"
    "Tensors are given by name, as keywords or in `tensors`: NumPy arrays, any object with __dlpack__ "
    "(PyTorch, CuPy, JAX), or sequences (converted to the task's dtype). Every input is required. Sizes are "
    "inferred from the shapes against the task's shape expressions; `sizes` supplies the ones shapes cannot "
    "tell. CUDA tensors are used in place on the CUDA backend (same device, C-contiguous); host arrays are "
    "copied. `out` maps output names to arrays written in place (CUDA tensors, or writable C-contiguous host "
    "arrays). Raises ValidationError naming the tensor for a missing input, an unknown name, a wrong dtype, "
    "rank or size.";

}  // namespace

void bind_arrays(py::module_& m) {
  py::class_<DataCase>(m, "DataCase",
                       "A case of the caller's own data in a task (Task.add_case): checked by the evaluator after "
                       "its own checks.")
      .def_readonly("name", &DataCase::name, "Its name in evaluations, e.g. 'user case 0'.")
      .def_readonly("sizes", &DataCase::sizes, "The name of the size configuration it runs at.")
      .def_property_readonly(
          "input_names",
          [](const DataCase& c) {
            std::vector<std::string> names;
            for (const auto& [name, bytes] : c.inputs) names.push_back(name);
            return names;
          },
          "Names of the inputs it holds (every input of the task).")
      .def_property_readonly(
          "expected_names",
          [](const DataCase& c) {
            std::vector<std::string> names;
            for (const auto& [name, bytes] : c.expected) names.push_back(name);
            return names;
          },
          "Names of the outputs whose expected values it holds; the reference computes the others.")
      .def("__repr__", [](const DataCase& c) {
        return "DataCase(" + py::repr(py::str(c.name)).cast<std::string>() + ", sizes=" +
               py::repr(py::str(c.sizes)).cast<std::string>() + ")";
      });

  auto task_class = py::reinterpret_borrow<py::class_<Task>>(m.attr("Task"));
  task_class
      .def_readonly("cases", &Task::cases, "The caller's data cases (list of DataCase), in the order added.")
      .def(
          "add_case",
          [](Task& task, const py::dict& inputs, const py::object& expected, const py::object& sizes, int device) {
            Tensors given_inputs;
            Tensors given_expected;
            add_tensors(given_inputs, task, inputs, false, "input");
            if (!expected.is_none()) add_tensors(given_expected, task, expected.cast<py::dict>(), false, "expected output");
            std::vector<std::vector<std::uint8_t>> storage;
            storage.reserve(given_inputs.refs.size() + given_expected.refs.size());
            for (auto* group : {&given_inputs, &given_expected}) {
              for (auto& [name, ref] : group->refs) {
                if (!ref.on_device) continue;
                storage.emplace_back();
                ref = copied_to_host(ref, storage.back(), device);
              }
            }
            return task.add_case(given_inputs.refs, given_expected.refs, sizes_of(sizes));
          },
          py::arg("inputs"), py::arg("expected") = py::none(), py::arg("sizes") = py::none(), py::arg("device") = 0,
          py::return_value_policy::copy,
          "Adds a case of your own data that the evaluator checks every candidate on, after its own checks.\n\n"
          "`inputs` maps every input name to an array (NumPy, DLPack producer, or sequence); `expected` maps "
          "some outputs to their known values (the reference computes the others). Sizes are inferred from the "
          "shapes (`sizes` fills in the rest); when no size configuration has them, a check configuration named "
          "after the case is added. The data is copied into the task (CUDA tensors from `device`). Returns the "
          "DataCase. Raises ValidationError naming the tensor on a missing input, a wrong dtype or shape.")
      .def(
          "infer_sizes",
          [](const Task& task, const py::dict& shapes, const py::object& sizes) {
            return task.infer_sizes(shapes.cast<std::map<std::string, std::vector<std::int64_t>>>(), sizes_of(sizes));
          },
          py::arg("shapes"), py::arg("sizes") = py::none(),
          "The sizes under which tensors have the given shapes ({name: shape tuple}), e.g. "
          "row_sum.infer_sizes({'x': (4, 8)}) == {'K': 8, 'M': 4}. Raises ValidationError on a wrong rank, "
          "sizes that disagree, or a size the shapes cannot tell and `sizes` does not give.");

  py::class_<KernelRunner>(m, "KernelRunner",
                           "Runs a candidate, or the task's reference, on your own arrays in this process: no "
                           "correctness or timing protocol, just the kernel's outputs. See docs/python.md.")
      .def(py::init(&make_runner), py::arg("task"), py::arg("candidate") = py::none(), py::arg("backend") = "auto",
           py::arg("device") = 0,
           "Loads `candidate` (a Candidate, a candidate file as a pathlib.Path, whose extension names the language, or "
           "a source string in the backend's language) on a backend; with candidate=None the task's reference. "
           "backend='auto' picks the backend of the candidate's language (cuda for Triton), else the best "
           "available backend. Raises BackendUnavailableError with the reason when the backend cannot run here.")
      .def(
          "run",
          [](KernelRunner& runner, const py::object& tensors, const py::object& sizes, const py::object& out,
             const py::kwargs& more) { return run_on(runner, merged(tensors, more), sizes, out); },
          py::arg("tensors") = py::none(), py::kw_only(), py::arg("sizes") = py::none(), py::arg("out") = py::none(),
          kRunDoc)
      .def(
          "infer_sizes",
          [](const KernelRunner& runner, const py::object& tensors, const py::object& sizes, const py::kwargs& more) {
            Tensors all;
            add_tensors(all, runner.task(), merged(tensors, more), false, "tensor");
            return runner.infer_sizes(all.refs, sizes_of(sizes));
          },
          py::arg("tensors") = py::none(), py::kw_only(), py::arg("sizes") = py::none(),
          "The sizes run() would infer for these tensors (the same checks; nothing runs).")
      .def_property_readonly("task", &KernelRunner::task, py::return_value_policy::copy, "The task it runs.")
      .def_property_readonly("candidate", &KernelRunner::candidate, py::return_value_policy::copy,
                             "The candidate it runs (origin 'reference' for the task's reference).")
      .def_property_readonly("backend", &KernelRunner::backend_name, "Name of the backend: 'cuda' or 'opencl'.")
      .def_property_readonly("device", &KernelRunner::device, py::return_value_policy::copy,
                             "The device it runs on (DeviceInfo).")
      .def_property_readonly("supports_device_tensors", &KernelRunner::supports_device_tensors,
                             "Whether CUDA tensors are used in place (the CUDA backend); else pass host arrays.")
      .def_property_readonly("compile_report", &KernelRunner::compile_report,
                             "The compile report of the program the last run used.")
      .def("__repr__", [](const KernelRunner& r) {
        return "KernelRunner(task=" + py::repr(py::str(r.task().name)).cast<std::string>() +
               ", origin=" + py::repr(py::str(r.candidate().lineage.origin)).cast<std::string>() +
               ", backend=" + py::repr(py::str(r.backend_name())).cast<std::string>() + ")";
      });

  m.def(
      "run_kernel",
      [](const Task& task, const py::object& candidate, const py::object& tensors, const std::string& backend,
         int device, const py::object& sizes, const py::object& out, const py::kwargs& more) {
        KernelRunner runner = make_runner(task, candidate, backend, device);
        return run_on(runner, merged(tensors, more), sizes, out);
      },
      py::arg("task"), py::arg("candidate") = py::none(), py::arg("tensors") = py::none(), py::kw_only(),
      py::arg("backend") = "auto", py::arg("device") = 0, py::arg("sizes") = py::none(), py::arg("out") = py::none(),
      "One-shot KernelRunner(task, candidate, backend, device).run(...): runs `candidate` (a Candidate, a "
      "pathlib.Path of a candidate file, a source string, or None for the task's reference) on the given tensors and returns {output name: "
      "numpy.ndarray}. Load a KernelRunner to run the same kernel several times without loading it again.");
}

}  // namespace kernelsmith::python
