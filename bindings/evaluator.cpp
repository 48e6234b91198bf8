// Evaluator and its options. Evaluator is subclassable from Python: the engine calls a Python
// evaluator like a C++ one (the trampoline takes the GIL; py::smart_holder keeps the Python object
// alive for as long as C++ holds it).
#include <pybind11/stl.h>

#include "bindings.hpp"
#include "kernelsmith/evaluator.hpp"

namespace py = pybind11;

namespace kernelsmith::python {
namespace {

class PyEvaluator : public Evaluator, public py::trampoline_self_life_support {
 public:
  Evaluation evaluate(const Task& task, const Candidate& candidate) override {
    PYBIND11_OVERRIDE_PURE(Evaluation, Evaluator, evaluate, task, candidate);
  }
  std::vector<Evaluation> evaluate_batch(const Task& task, const std::vector<Candidate>& candidates) override {
    PYBIND11_OVERRIDE(std::vector<Evaluation>, Evaluator, evaluate_batch, task, candidates);
  }
  std::vector<Evaluation> confirm_batch(const Task& task, const std::vector<Candidate>& candidates) override {
    PYBIND11_OVERRIDE(std::vector<Evaluation>, Evaluator, confirm_batch, task, candidates);
  }
  std::string backend_name() const override { PYBIND11_OVERRIDE(std::string, Evaluator, backend_name, ); }
  std::string device_name() const override { PYBIND11_OVERRIDE(std::string, Evaluator, device_name, ); }
  int concurrency() const override { PYBIND11_OVERRIDE(int, Evaluator, concurrency, ); }
};

/// EvaluatorOptions.devices takes "all", "0,1", a list of indices, or None (the one device `device`).
std::string device_set_spec(const py::object& value) {
  if (value.is_none()) return "";
  if (py::isinstance<py::str>(value)) return value.cast<std::string>();
  if (py::isinstance<py::int_>(value) || !py::isinstance<py::iterable>(value)) {
    throw py::type_error("EvaluatorOptions.devices takes \"all\", a list of device indices such as [0, 1], a "
                         "string such as \"0,1\", or None; got " +
                         std::string(py::str(py::type::of(value).attr("__name__"))));
  }
  std::string spec;
  for (const auto& item : value) {
    if (!py::isinstance<py::int_>(item) || py::isinstance<py::bool_>(item)) {
      throw py::type_error("EvaluatorOptions.devices: a list holds device indices (int); got " +
                           std::string(py::repr(item)));
    }
    spec += (spec.empty() ? "" : ",") + std::to_string(item.cast<long long>());
  }
  return spec;
}

std::string repr_options(const EvaluatorOptions& o) {
  return "<EvaluatorOptions backend=" + o.backend + " device=" + std::to_string(o.device) +
         (o.devices.empty() ? "" : " devices=" + o.devices) + " mode=" + o.mode +
         " isolate=" + (o.isolate ? "True" : "False") + ">";
}

}  // namespace

void bind_evaluator(py::module_& m) {
  py::class_<EvaluatorOptions>(m, "EvaluatorOptions",
                               "How the built-in evaluator checks and times candidates (docs/evaluation.md).")
      .def(py::init<>())
      .def(py::init([](py::kwargs kwargs) {
             // EvaluatorOptions(mode="strict", seed=3): every keyword must name a field.
             EvaluatorOptions options;
             py::object self = py::cast(options);
             for (const auto& item : kwargs) {
               const std::string key = py::str(item.first);
               if (!py::hasattr(self, key.c_str()) || key.rfind("_", 0) == 0) {
                 throw py::type_error("EvaluatorOptions has no field '" + key + "'");
               }
               py::setattr(self, key.c_str(), item.second);
             }
             return self.cast<EvaluatorOptions>();
           }),
           "Keyword arguments set fields, e.g. EvaluatorOptions(backend='opencl', mode='strict').")
      .def_readwrite("backend", &EvaluatorOptions::backend, "'cuda', 'opencl' or 'auto' (the best available)")
      .def_readwrite("device", &EvaluatorOptions::device, "Index of the device within the backend.")
      .def_property(
          "devices", [](const EvaluatorOptions& o) { return o.devices; },
          [](EvaluatorOptions& o, const py::object& value) { o.devices = device_set_spec(value); },
          "A device set, one worker process per entry: 'all', a list of indices ([0, 1]) or '0,1'; ''/None: the one "
          "device `device`. Reads back as a string. An index given twice gets two workers (docs/distributed.md).")
      .def_readwrite("mode", &EvaluatorOptions::mode, "'screen' (cheap timing) or 'strict' (final numbers)")
      .def_readwrite("correctness_trials", &EvaluatorOptions::correctness_trials,
                     "random trials on the timing sizes in strict mode (check sizes get one each)")
      .def_readwrite("screen_correctness_trials", &EvaluatorOptions::screen_correctness_trials,
                     "random trials on the timing sizes in screen mode (the timed runs' outputs are checked too)")
      .def_readwrite("adversarial_inputs", &EvaluatorOptions::adversarial_inputs,
                     "also check large, tiny, mixed-scale and constant inputs (on the timing sizes in strict mode)")
      .def_readwrite("screen_adversarial_timing_sizes", &EvaluatorOptions::screen_adversarial_timing_sizes,
                     "screen mode checks adversarial inputs on the timing sizes too (slower, as strict mode does)")
      .def_readwrite("schedule_check", &EvaluatorOptions::schedule_check,
                     "strict mode runs each check's second run with block indices reversed, to expose races "
                     "between blocks (a second compile per candidate)")
      .def_readwrite("screen_schedule_check", &EvaluatorOptions::screen_schedule_check,
                     "screen mode runs the reversed-schedule check too")
      .def_readwrite("seed", &EvaluatorOptions::seed, "Seed of the random check and timing inputs.")
      .def_readwrite("noise_target", &EvaluatorOptions::noise_target,
                     "stop sampling when the noise is at most this: in strict mode the samples' relative standard "
                     "deviation, in screen mode the relative standard error of their mean")
      .def_readwrite("min_samples", &EvaluatorOptions::min_samples,
                     "Timing samples taken at least in screen mode (never fewer than 3).")
      .def_readwrite("strict_max_samples", &EvaluatorOptions::strict_max_samples,
                     "strict mode's maximum sample count (default 100000: the time budget usually ends sampling "
                     "first, and a median over the whole budget is stable from one evaluation to the next)")
      .def_readwrite("strict_min_samples", &EvaluatorOptions::strict_min_samples,
                     "strict mode's minimum sample count (a stable median from one evaluation to the next)")
      .def_readwrite("max_samples", &EvaluatorOptions::max_samples, "Timing samples taken at most.")
      .def_readwrite("screen_budget_seconds", &EvaluatorOptions::screen_budget_seconds,
                     "Host time of the sampling loop in screen mode, in seconds.")
      .def_readwrite("strict_budget_seconds", &EvaluatorOptions::strict_budget_seconds,
                     "Host time of the sampling loop in strict mode, in seconds.")
      .def_readwrite("flush_l2", &EvaluatorOptions::flush_l2,
                     "Overwrite a buffer of twice the L2 size (or 64 MiB) before each sample, so every sample starts "
                     "with a cold cache.")
      .def_readwrite("suspicious_speedup", &EvaluatorOptions::suspicious_speedup,
                     "speedups above this are flagged and measured again in strict mode")
      .def_readwrite("deadline_seconds", &EvaluatorOptions::deadline_seconds,
                     "per evaluation; past it the worker is killed and the status is 'timeout'")
      .def_readwrite("compile_timeout_seconds", &EvaluatorOptions::compile_timeout_seconds,
                     "Longest a compile may take, in seconds.")
      .def_readwrite("host_code_build_seconds", &EvaluatorOptions::host_code_build_seconds,
                     "Added to deadline_seconds for a host-code candidate (a KernelBench ModelNew file), whose "
                     "torch.utils.cpp_extension builds run inside its evaluation.")
      .def_readwrite("host_code_policy", &EvaluatorOptions::host_code_policy,
                     "What counts as a solution among ModelNew candidates: 'custom_kernel' (one of its own kernels "
                     "runs on every check and the outputs depend on it, else it is flagged no_custom_kernel or "
                     "custom_kernel_unused) or 'torch_only_allowed' (a PyTorch-only program is labelled torch_only).")
      .def_readwrite("oracle_timeout_seconds", &EvaluatorOptions::oracle_timeout_seconds,
                     "Longest one request to the PyTorch oracle's helper may take, in seconds (the expected outputs "
                     "of one case, or timing one baseline: torch.compile max-autotune compiles for minutes on a "
                     "GPU); past it the helper is killed.")
      .def_readwrite("compile_threads", &EvaluatorOptions::compile_threads, "0: all hardware threads")
      .def_readwrite("isolate", &EvaluatorOptions::isolate,
                     "run candidates in a worker process (False runs them in this process, for debugging)")
      .def_readwrite("require_sandbox", &EvaluatorOptions::require_sandbox,
                     "Refuse to evaluate (ValueError when the evaluator is made) unless every required protection "
                     "of the sandbox holds here and isolate is on; else what is off is recorded in each "
                     "Evaluation's integrity.unconfined.")
      .def_readwrite("cache_dir", &EvaluatorOptions::cache_dir,
                     "compile cache and device peaks; empty for $KERNELSMITH_CACHE_DIR or ~/.cache/kernelsmith")
      .def_readwrite("use_disk_cache", &EvaluatorOptions::use_disk_cache,
                     "Keep compiled kernels in the disk cache under cache_dir and reuse them.")
      .def_readwrite("baseline_session", &EvaluatorOptions::baseline_session,
                     "The session whose baseline timings on disk this evaluator shares; empty: one of its own, so "
                     "that speedups are against baselines timed in the same run (docs/evaluation.md).")
      .def("__repr__", &repr_options);

  py::class_<Evaluator, PyEvaluator, py::smart_holder>(
      m, "Evaluator",
      "Candidate -> Evaluation. Subclass it and implement evaluate(task, candidate) -> Evaluation (and "
      "optionally evaluate_batch, confirm_batch, backend_name, device_name); create_evaluator() gives the "
      "built-in one.")
      .def(py::init<>())
      .def("evaluate", &Evaluator::evaluate, py::arg("task"), py::arg("candidate"),
           py::call_guard<py::gil_scoped_release>(),
           "Compiles, checks and times one candidate; its problems are the Evaluation's status, never an "
           "exception.")
      .def("evaluate_batch", &Evaluator::evaluate_batch, py::arg("task"), py::arg("candidates"),
           py::call_guard<py::gil_scoped_release>(),
           "Evaluates several candidates (the built-in evaluator compiles them in parallel while the device "
           "times them one at a time).")
      .def("confirm_batch", &Evaluator::confirm_batch, py::arg("task"), py::arg("candidates"),
           py::call_guard<py::gil_scoped_release>(),
           "Evaluates candidates again under the strict rules, to confirm those that would lead an evolution "
           "(docs/search.md, 'Confirmation'). The built-in evaluator in screen mode uses a strict twin of itself; "
           "by default (one mode) it is evaluate_batch again. Override it when your evaluator has a cheaper "
           "screening and a trustworthy strict measurement.")
      .def("backend_name", &Evaluator::backend_name,
           "The backend this evaluator measures on, for the record ('opencl', 'cuda'; 'custom' by default).")
      .def("device_name", &Evaluator::device_name,
           "The device this evaluator measures on, for the record (e.g. 'NVIDIA H100 ...'; empty by default).")
      .def("concurrency", &Evaluator::concurrency,
           "How many candidates it evaluates at once (its devices or Ray actors; 1 by default). An evolution with "
           "mutations_in_flight = 0 keeps twice this many in flight.")
      .def("__repr__", [](const Evaluator& evaluator) {
        return "<Evaluator " + evaluator.backend_name() + " '" + evaluator.device_name() + "'>";
      });

  m.def(
      "create_evaluator",
      [](const EvaluatorOptions& options) -> std::shared_ptr<Evaluator> {
        return std::shared_ptr<Evaluator>(create_evaluator(options));
      },
      py::arg_v("options", EvaluatorOptions(), "EvaluatorOptions()"), py::call_guard<py::gil_scoped_release>(),
      "The built-in evaluator on options.backend ('auto': the best available). Raises "
      "BackendUnavailableError with the reason when the backend cannot run here.");
}

}  // namespace kernelsmith::python
