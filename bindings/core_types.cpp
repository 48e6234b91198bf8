// Bindings of the core value types: DType, Task and its parts, Candidate, LaunchPlan, Evaluation and its
// reports. Plain structs are bound field by field (def_readwrite). Note for Python users: a list field
// returns a copy, so `task.tensors.append(t)` changes nothing; assign the whole list instead.
#include <pybind11/stl.h>
#include <pybind11/stl/filesystem.h>

#include <sstream>

#include "bindings.hpp"
#include "kernelsmith/candidate.hpp"
#include "kernelsmith/dtype.hpp"
#include "kernelsmith/evaluation.hpp"
#include "kernelsmith/launch_plan.hpp"
#include "kernelsmith/task.hpp"

namespace py = pybind11;

namespace kernelsmith::python {
namespace {

// Python's repr of a string, so that reprs quote and escape like Python does.
std::string quoted(const std::string& text) { return py::repr(py::str(text)).cast<std::string>(); }

template <typename Map>
std::string map_repr(const Map& map) {
  std::ostringstream out;
  out << '{';
  bool first = true;
  for (const auto& [key, value] : map) {
    out << (first ? "" : ", ") << quoted(key) << ": " << value;
    first = false;
  }
  out << '}';
  return out.str();
}

std::string list_repr(const std::vector<std::string>& items) {
  std::ostringstream out;
  out << '[';
  for (std::size_t i = 0; i < items.size(); ++i) out << (i ? ", " : "") << quoted(items[i]);
  out << ']';
  return out.str();
}

std::string number(double value) { return py::repr(py::float_(value)).cast<std::string>(); }

void bind_dtypes(py::module_& m) {
  py::enum_<DType> dtype_class(m, "DType", "Element type of task tensors and workspaces.");
  dtype_class
      .value("float16", DType::float16)
      .value("bfloat16", DType::bfloat16)
      .value("float32", DType::float32)
      .value("float64", DType::float64)
      .value("int8", DType::int8)
      .value("uint8", DType::uint8)
      .value("int32", DType::int32)
      .value("int64", DType::int64)
      .def_property_readonly(
          "itemsize", [](DType dtype) { return dtype_size(dtype); }, "Bytes per element.")
      .def_property_readonly(
          "is_floating", [](DType dtype) { return is_floating(dtype); }, "True for float16, bfloat16, float32, float64.");
  // Replaces enum_'s own __str__ (a .def would only add an overload behind it): str(DType.float32) == "float32".
  dtype_class.attr("__str__") =
      py::cpp_function([](DType dtype) { return std::string(to_string(dtype)); }, py::name("__str__"),
                       py::is_method(dtype_class));
  m.def("parse_dtype", [](const std::string& name) { return parse_dtype(name); }, py::arg("name"),
        "Parses a canonical dtype name ('float32') or an alias ('fp32', 'half', 'bf16', 'int', 'torch.float16'). "
        "Raises ValidationError listing the accepted names.");
  m.def("dtype_size", &dtype_size, py::arg("dtype"), "Bytes per element of a dtype.");
  m.def("is_floating", &is_floating, py::arg("dtype"), "True for the floating-point dtypes.");
}

void bind_task(py::module_& m) {
  py::enum_<TensorRole>(m, "TensorRole", "Whether a task tensor is read (input) or written (output) by the kernel.")
      .value("input", TensorRole::input)
      .value("output", TensorRole::output);

  py::class_<Distribution>(m, "Distribution",
                           "How the correctness protocol draws a tensor's values: normal(a = mean, b = stddev), "
                           "uniform(a = low, b = high), integers(a = low, b = high, inclusive), constant(a = the "
                           "value under every input kind). `structure` then shapes them: 'none', 'symmetric', "
                           "'lower_triangular', 'upper_triangular' (last two dims) or 'probability_rows' (each row "
                           "of the last dim softmaxed).")
      .def(py::init([](const std::string& kind, double a, double b, const std::string& structure) {
             return Distribution{kind, a, b, structure};
           }),
           py::arg("kind") = "normal", py::arg("a") = 0.0, py::arg("b") = 1.0, py::arg("structure") = "none")
      .def_readwrite("kind", &Distribution::kind, "'normal', 'uniform', 'integers' or 'constant'.")
      .def_readwrite("a", &Distribution::a, "Mean (normal), lower bound, or the value (constant).")
      .def_readwrite("b", &Distribution::b, "Standard deviation (normal) or upper bound; unused by constant.")
      .def_readwrite("structure", &Distribution::structure,
                     "'none', 'symmetric', 'lower_triangular', 'upper_triangular' or 'probability_rows': applied "
                     "after every input kind, so adversarial inputs keep it.")
      .def("__repr__", [](const Distribution& d) {
        return "Distribution(" + quoted(d.kind) + ", a=" + number(d.a) + ", b=" + number(d.b) +
               (d.structure == "none" ? std::string() : ", structure=" + quoted(d.structure)) + ")";
      });

  py::class_<TensorSpec>(m, "TensorSpec", "A named task tensor: dtype, shape over the sizes, role, distribution.")
      .def(py::init([](const std::string& name, DType dtype, const std::vector<std::string>& shape, TensorRole role,
                       const Distribution& distribution) { return TensorSpec{name, dtype, shape, role, distribution}; }),
           py::arg("name") = "", py::arg_v("dtype", DType::float32, "DType.float32"),
           py::arg("shape") = std::vector<std::string>{}, py::arg_v("role", TensorRole::input, "TensorRole.input"),
           py::arg("distribution") = Distribution{})
      .def_readwrite("name", &TensorSpec::name, "Identifier; launch plans pass the tensor by this name.")
      .def_readwrite("dtype", &TensorSpec::dtype, "Element type.")
      .def_readwrite("shape", &TensorSpec::shape, "One integer expression per dimension, e.g. ['M', 'K'].")
      .def_readwrite("role", &TensorSpec::role, "TensorRole.input or TensorRole.output.")
      .def_readwrite("distribution", &TensorSpec::distribution, "How input values are drawn.")
      .def("__repr__", [](const TensorSpec& t) {
        return "TensorSpec(" + quoted(t.name) + ", " + std::string(to_string(t.dtype)) + ", " + list_repr(t.shape) +
               ", " + (t.role == TensorRole::input ? "input" : "output") + ")";
      });

  py::class_<SizeConfig>(m, "SizeConfig", "One named assignment of the task's sizes.")
      .def(py::init([](const std::string& name, const SizeMap& sizes) { return SizeConfig{name, sizes}; }),
           py::arg("name") = "", py::arg("sizes") = SizeMap{})
      .def_readwrite("name", &SizeConfig::name, "Name, e.g. 'timing' or 'odd_4097'.")
      .def_readwrite("sizes", &SizeConfig::sizes, "Size name -> value, e.g. {'N': 4097}.")
      .def("__repr__", [](const SizeConfig& c) { return "SizeConfig(" + quoted(c.name) + ", " + map_repr(c.sizes) + ")"; });

  py::class_<Tolerance>(m, "Tolerance", "|actual - expected| <= atol + rtol * |expected|, element by element.")
      .def(py::init([](double atol, double rtol) { return Tolerance{atol, rtol}; }), py::arg("atol") = 0.0,
           py::arg("rtol") = 0.0)
      .def_readwrite("atol", &Tolerance::atol, "Absolute tolerance.")
      .def_readwrite("rtol", &Tolerance::rtol, "Relative tolerance.")
      .def("__repr__",
           [](const Tolerance& t) { return "Tolerance(atol=" + number(t.atol) + ", rtol=" + number(t.rtol) + ")"; });
  // Defined after Tolerance is registered, so that its signature (and the type stub) names the Python type.
  m.def("default_tolerance", &default_tolerance, py::arg("dtype"),
        "The default tolerance of a dtype: float32 1e-4, float16/bfloat16 1e-2, float64 1e-8, integers exact.");

  py::class_<WorkModel>(m, "WorkModel",
                        "The work a task needs, as integer expressions over the sizes: FLOPs, and the fewest bytes "
                        "any implementation must move.")
      .def(py::init([](const std::string& flops, const std::string& bytes) { return WorkModel{flops, bytes}; }),
           py::arg("flops") = "0", py::arg("bytes") = "0")
      .def_readwrite("flops", &WorkModel::flops, "FLOP count expression, e.g. '2 * M * N * K'.")
      .def_readwrite("bytes", &WorkModel::bytes, "Fewest-bytes expression, e.g. '8 * N'.")
      .def("__repr__",
           [](const WorkModel& w) { return "WorkModel(flops=" + quoted(w.flops) + ", bytes=" + quoted(w.bytes) + ")"; });

  py::class_<KernelSource>(m, "KernelSource", "A source file for one kernel language ('cuda', 'opencl', 'maca').")
      .def(py::init([](const std::string& language, const std::string& source, const std::string& path) {
             return KernelSource{language, source, path};
           }),
           py::arg("language") = "", py::arg("source") = "", py::arg("path") = "")
      .def_readwrite("language", &KernelSource::language, "Kernel language.")
      .def_readwrite("source", &KernelSource::source, "The code, with its launch plan in // @launch lines.")
      .def_readwrite("path", &KernelSource::path, "Where it was read from; empty when given inline.")
      .def("__repr__", [](const KernelSource& s) {
        return "KernelSource(" + quoted(s.language) + ", " + std::to_string(s.source.size()) + " chars" +
               (s.path.empty() ? std::string() : ", path=" + quoted(s.path)) + ")";
      });

  py::class_<PytorchOracle>(m, "PytorchOracle",
                            "Expected outputs from a PyTorch module (a KernelBench problem file) instead of a "
                            "reference kernel: the manifest's \"oracle\" (docs/task-format.md). Map keys are the "
                            "module's names, values the task's.")
      .def(py::init([](const KernelSource& module, const std::map<std::string, std::string>& constants,
                       const std::vector<std::string>& forward, const std::map<std::string, std::string>& parameters,
                       const std::vector<std::string>& outputs, const std::map<std::string, std::string>& casts,
                       std::int64_t seed, bool training, const std::vector<std::string>& baselines) {
             PytorchOracle oracle;
             oracle.module = module;
             if (oracle.module.language.empty()) oracle.module.language = "python";
             oracle.constants = constants;
             oracle.forward = forward;
             oracle.parameters = parameters;
             oracle.outputs = outputs;
             oracle.casts = casts;
             oracle.seed = seed;
             oracle.training = training;
             oracle.baselines = baselines;
             return oracle;
           }),
           py::arg_v("module", KernelSource{"python", "", ""}, "KernelSource('python', '')"),
           py::arg("constants") = std::map<std::string, std::string>{},
           py::arg("forward") = std::vector<std::string>{},
           py::arg("parameters") = std::map<std::string, std::string>{},
           py::arg("outputs") = std::vector<std::string>{}, py::arg("casts") = std::map<std::string, std::string>{},
           py::arg("seed") = 42, py::arg("training") = true,
           py::arg("baselines") = PytorchOracle().baselines,
           "A module given without a language is taken as Python.")
      .def_readwrite("kind", &PytorchOracle::kind, "'pytorch' (the only kind).")
      .def_readwrite("module", &PytorchOracle::module,
                     "The module's source (KernelSource of language 'python'): class Model(nn.Module), "
                     "get_inputs(), get_init_inputs() and module-level constants.")
      .def_readwrite("constants", &PytorchOracle::constants,
                     "Module-level integer constant -> the task size whose value it takes in each configuration.")
      .def_readwrite("forward", &PytorchOracle::forward, "The task input tensors passed to Model.forward, in order.")
      .def_readwrite("parameters", &PytorchOracle::parameters,
                     "State-dict entry of the module (e.g. 'gemm.weight') -> the task input tensor supplying it.")
      .def_readwrite("outputs", &PytorchOracle::outputs,
                     "The task output tensors the forward's result maps to (a tuple flattened in order).")
      .def_readwrite("casts", &PytorchOracle::casts,
                     "Task tensor -> 'bool' (uint8 0/1 as torch.bool), 'python_float' or 'python_int' (a shape-[] "
                     "tensor passed as a Python number).")
      .def_readwrite("seed", &PytorchOracle::seed, "torch.manual_seed before the module is built (default 42).")
      .def_readwrite("training", &PytorchOracle::training,
                     "Whether the module stays in training mode (default True, as KernelBench); forward runs under "
                     "torch.no_grad() either way.")
      .def_readwrite("baselines", &PytorchOracle::baselines,
                     "The PyTorch baselines timed: 'eager', 'compile', 'compile_max_autotune' (default all).")
      .def("__repr__", [](const PytorchOracle& o) {
        return "PytorchOracle(forward=" + list_repr(o.forward) + ", outputs=" + list_repr(o.outputs) +
               ", parameters=" + std::to_string(o.parameters.size()) + ", seed=" + std::to_string(o.seed) + ")";
      });

  py::class_<Task>(m, "Task",
                   "What to compute: tensors, size configurations, tolerances, a work model and a reference per "
                   "kernel language. Load one with Task.load('relu') or from a folder holding task.json; see "
                   "docs/task-format.md.")
      .def(py::init<>())
      .def_readwrite("name", &Task::name, "Task name.")
      .def_readwrite("description", &Task::description, "What the task computes, for people and prompts.")
      .def_readwrite("tensors", &Task::tensors, "The tensors (list of TensorSpec; assign a whole list to change).")
      .def_readwrite("timing_sizes", &Task::timing_sizes, "The size configuration that is timed.")
      .def_readwrite("check_sizes", &Task::check_sizes, "Further configurations, checked for correctness only.")
      .def_readwrite("tolerance", &Task::tolerance, "Tolerance overriding the per-dtype default, or None.")
      .def_readwrite("work", &Task::work, "FLOPs and fewest bytes as expressions over the sizes.")
      .def_readwrite("references", &Task::references,
                     "Naive, correct implementations by language (the baseline unless the task has an oracle).")
      .def_readwrite("oracle", &Task::oracle,
                     "A PytorchOracle giving the expected outputs and baselines for every backend, or None. A task "
                     "needs references, an oracle, or both.")
      .def_readwrite("seeds", &Task::seeds, "Tunable starting candidates by language.")
      .def_readwrite("pytorch", &Task::pytorch, "The equivalent PyTorch expression, e.g. 'torch.relu(x)'.")
      .def_readwrite("folder", &Task::folder, "The folder it was loaded from (empty for a task built in code).")
      .def_static("load", &Task::load, py::arg("name_or_path"),
                  "Loads a task by built-in name (searched along task_search_path()), by folder holding task.json, "
                  "or by manifest path. Raises NotFoundError or ValidationError naming the file and the field.")
      .def_static("from_json", &Task::from_json, py::arg("json_text"), py::arg("origin") = "<task>",
                  py::arg("folder") = std::filesystem::path(),
                  "Parses a manifest. `origin` names it in messages; `folder` resolves the source files it names.")
      .def("to_json", &Task::to_json, "Self-contained JSON (sources inline) that Task.from_json reads back.")
      .def("content_key", &Task::content_key,
           "64 hex digits over everything the task holds (manifest and data cases): equal content, equal key. "
           "Evaluators send a task to a worker or Ray actor once and name it by this key afterwards.")
      // Pickled as its JSON (and folder), so that tasks travel to other processes (Ray, multiprocessing).
      .def(py::pickle(
          [](const Task& t) { return py::make_tuple(t.to_json(), t.folder.string()); },
          [](const py::tuple& state) {
            const auto folder = state[1].cast<std::string>();
            Task task = Task::from_json(state[0].cast<std::string>(), "<pickled task>", std::filesystem::path());
            task.folder = folder;
            return task;
          }))
      .def("validate", &Task::validate, py::arg("origin") = "<task>",
           "Checks every invariant; raises ValidationError naming the field.")
      .def("tensor", &Task::tensor, py::arg("name"), py::return_value_policy::copy,
           "The tensor of that name; raises NotFoundError listing the names.")
      .def("languages", &Task::languages, "Languages with a reference, sorted.")
      .def("all_size_configs", &Task::all_size_configs, "The timing configuration first, then the check ones.")
      .def("extents", &Task::extents, py::arg("tensor"), py::arg("sizes"),
           "The extent of each dimension of a tensor under the given sizes ([] for shape []).")
      .def("element_count", &Task::element_count, py::arg("tensor"), py::arg("sizes"),
           "Number of elements of a tensor under the given sizes.")
      .def("tolerance_for", &Task::tolerance_for, py::arg("dtype"), "The task's tolerance, or the dtype's default.")
      .def("flops", &Task::flops, py::arg("sizes"), "FLOPs under the given sizes.")
      .def("min_bytes", &Task::min_bytes, py::arg("sizes"), "Fewest bytes moved under the given sizes.")
      .def("__repr__", [](const Task& t) {
        std::string tensors;
        for (const auto& tensor : t.tensors) tensors += (tensors.empty() ? "" : ", ") + tensor.name;
        std::string languages;
        for (const auto& language : t.languages()) languages += (languages.empty() ? "" : ", ") + language;
        return "Task(" + quoted(t.name) + ", tensors=[" + tensors + "], sizes=" + map_repr(t.timing_sizes.sizes) +
               ", checks=" + std::to_string(t.check_sizes.size()) + ", languages=[" + languages + "])";
      });

  m.attr("TASK_SCHEMA") = kTaskSchema;
  m.def("builtin_task_names", &builtin_task_names, "Names of the tasks found along task_search_path(), sorted.");
  m.def("task_search_path", &task_search_path,
        "Folders searched for tasks by name, in order: $KERNELSMITH_TASKS_PATH (':'-separated), the package's "
        "tasks/, the installed share/kernelsmith/tasks, the source tree's tasks/.");
}

void bind_candidate(py::module_& m) {
  // kOrigins as tuples of names (docs/run-store.md#origins).
  py::list origins, initial_origins;
  for (const OriginKind& kind : kOrigins) {
    origins.append(std::string(kind.name));
    if (kind.initial) initial_origins.append(std::string(kind.name));
  }
  m.attr("ORIGINS") = py::tuple(origins);
  m.attr("INITIAL_ORIGINS") = py::tuple(initial_origins);
  m.def("defines_model_new", [](const std::string& source) { return defines_model_new(source); }, py::arg("source"),
        "True when a Python source defines `class ModelNew` at the start of a line: a KernelBench candidate file "
        "(language 'pytorch') rather than a Triton one.");
  m.def("model_new_from_problem", &model_new_from_problem, py::arg("problem_source"),
        "A KernelBench problem file's Model as a ModelNew candidate's source (the identifier Model renamed "
        "ModelNew): what a run with no hand-written seed starts from.");
  m.def("has_custom_kernel", &has_custom_kernel, py::arg("candidate"),
        "Whether a candidate has a kernel of its own: always for device code; for a ModelNew file, when its source "
        "builds or declares one (load_inline, cpp_extension.load, @triton.jit).");
  m.def("is_initial_origin", [](const std::string& origin) { return is_initial_origin(origin); }, py::arg("origin"),
        "True for the origins a run starts from ('reference', 'seed'): no mutation made them.");

  py::class_<Lineage>(m, "Lineage", "Where a candidate came from.")
      .def(py::init([](const std::vector<std::string>& parent_ids, int island, int generation,
                       const std::string& origin) { return Lineage{parent_ids, island, generation, origin}; }),
           py::arg("parent_ids") = std::vector<std::string>{}, py::arg("island") = 0, py::arg("generation") = 0,
           py::arg("origin") = "user")
      .def_readwrite("parent_ids", &Lineage::parent_ids, "Ids of the parents (one, or two for a crossover).")
      .def_readwrite("island", &Lineage::island, "Island of the population.")
      .def_readwrite("generation", &Lineage::generation, "Steps from the seed.")
      .def_readwrite("origin", &Lineage::origin,
                     "How it was made: one of ORIGINS ('reference', 'seed', 'user', 'param', 'llm_full', 'llm_diff', "
                     "'llm_crossover'), or a Python mutator's own mutation name.")
      .def("__repr__", [](const Lineage& l) {
        return "Lineage(parent_ids=" + list_repr(l.parent_ids) + ", island=" + std::to_string(l.island) +
               ", generation=" + std::to_string(l.generation) + ", origin=" + quoted(l.origin) + ")";
      });

  py::class_<Candidate>(m, "Candidate",
                        "One source file of device code with its launch plan in // @launch lines, and its lineage. "
                        "See docs/candidate-format.md.")
      .def(py::init([](const std::string& language, const std::string& source, const Lineage& lineage) {
             return Candidate{language, source, lineage};
           }),
           py::arg("language") = "", py::arg("source") = "", py::arg("lineage") = Lineage{})
      .def_readwrite("language", &Candidate::language, "'cuda', 'opencl', 'maca' or 'triton'.")
      .def_readwrite("source", &Candidate::source, "The code.")
      .def_readwrite("lineage", &Candidate::lineage, "Where it came from.")
      .def("id", &Candidate::id, "Content hash: 16 hex digits of SHA-256 over language, NUL, source.")
      .def_static("from_file", &Candidate::from_file, py::arg("path"), py::arg("language") = "",
                  "Reads a source file; the language comes from the extension (.cu, .cuh, .cl, .maca, .py) unless "
                  "given.")
      .def("to_json", &Candidate::to_json, "JSON under the schema kernelsmith.candidate/1.")
      .def(py::pickle([](const Candidate& c) { return c.to_json(); },
                      [](const std::string& json) { return Candidate::from_json(json, "<pickled candidate>"); }))
      .def_static("from_json", &Candidate::from_json, py::arg("json_text"), py::arg("origin") = "<candidate>",
                  "Parses candidate JSON; a stated id must match the content.")
      .def("__repr__", [](const Candidate& c) {
        return "Candidate(" + quoted(c.language) + ", id=" + quoted(c.id()) + ", " + std::to_string(c.source.size()) +
               " chars, origin=" + quoted(c.lineage.origin) + ")";
      });

  m.attr("CANDIDATE_SCHEMA") = kCandidateSchema;
  py::class_<KernelLanguage>(m, "KernelLanguage",
                             "One kernel language's row (language.hpp): its files, how prompts name and fence it, the "
                             "backend that runs it and how its plan lines are written.")
      .def_readonly("name", &KernelLanguage::name, "As in Candidate.language: 'cuda', 'opencl', 'maca', 'triton'.")
      .def_readonly("extensions", &KernelLanguage::extensions, "File extensions, with the dot: ['.cu', '.cuh'].")
      .def_readonly("prompt_label", &KernelLanguage::prompt_label, "How prompts and messages name it: 'CUDA C++'.")
      .def_readonly("fence_tag", &KernelLanguage::fence_tag, "The markdown fence tag of its examples.")
      .def_readonly("fence_aliases", &KernelLanguage::fence_aliases, "Other fence tags an answer may carry.")
      .def_readonly("backend", &KernelLanguage::backend, "The backend that compiles and runs it ('cuda' for Triton).")
      .def_readonly("kernel_rule", &KernelLanguage::kernel_rule, "The prompt's rule for writing its kernels.")
      .def_readonly("plan_comment", &KernelLanguage::plan_comment, "The comment marker of plan lines: '//' or '#'.")
      .def_readonly("launch_example", &KernelLanguage::launch_example, "A complete @launch line.")
      .def_readonly("plain_kernel_names_only", &KernelLanguage::plain_kernel_names_only,
                    "Kernels are found by their plain extern \"C\" names only (MACA): a plan naming a C++ or "
                    "template kernel is an invalid launch.")
      .def_readonly("host_code", &KernelLanguage::host_code,
                    "A file of host code evaluated whole by a confined runner, with no launch plan: KernelBench's "
                    "ModelNew format ('pytorch'), on any backend whose tasks have a PyTorch oracle.")
      .def("__repr__", [](const KernelLanguage& l) {
        return "KernelLanguage(" + quoted(l.name) + ", backend=" + quoted(l.backend) + ")";
      });
  m.def("kernel_languages", &kernel_languages, py::return_value_policy::copy,
        "Every kernel language, in a stable order (CUDA, OpenCL, MACA, Triton, PyTorch), as KernelLanguage rows.");
  m.def("kernel_language", &kernel_language, py::arg("name"), py::return_value_policy::copy,
        "The KernelLanguage row of `name`; raises ValidationError naming the known languages.");
  m.def("language_for_extension", &language_for_extension, py::arg("path"),
        "Kernel language of a file by its extension, or '' when unknown.");
}

void bind_launch_plan(py::module_& m) {
  py::class_<WorkspaceDecl>(m, "WorkspaceDecl", "`// @workspace name: dtype[count]`: scratch memory of the plan.")
      .def(py::init<>())
      .def_readwrite("name", &WorkspaceDecl::name, "Name the launches pass it by.")
      .def_readwrite("dtype", &WorkspaceDecl::dtype, "Element type.")
      .def_readwrite("count", &WorkspaceDecl::count, "Element count expression.")
      .def_readwrite("line", &WorkspaceDecl::line, "1-based source line.")
      .def("__repr__", [](const WorkspaceDecl& w) {
        return "WorkspaceDecl(" + quoted(w.name) + ", " + std::string(to_string(w.dtype)) + "[" + w.count +
               "], line=" + std::to_string(w.line) + ")";
      });

  py::class_<LaunchDecl>(m, "LaunchDecl", "`// @launch kernel<<<grid, block[, shared_bytes]>>>(args)`: one launch.")
      .def(py::init<>())
      .def_readwrite("kernel", &LaunchDecl::kernel, "Kernel name.")
      .def_readwrite("grid", &LaunchDecl::grid, "Blocks (work-groups) per dimension: three expressions.")
      .def_readwrite("block", &LaunchDecl::block, "Threads (work-items) per block: three expressions.")
      .def_readwrite("shared_bytes", &LaunchDecl::shared_bytes, "Dynamic shared memory in bytes (expression).")
      .def_readwrite("args", &LaunchDecl::args, "Tensor names, workspace names or integer expressions.")
      .def_readwrite("line", &LaunchDecl::line, "1-based source line.")
      .def_readwrite("constexprs", &LaunchDecl::constexprs,
                     "Triton: the tl.constexpr parameters passed by keyword, as (name, expression) pairs.")
      .def_readwrite("num_warps", &LaunchDecl::num_warps,
                     "Triton: warps per block (expression; block = 32 * num_warps); \"\" in other languages.")
      .def_readwrite("num_stages", &LaunchDecl::num_stages,
                     "Triton: pipelining stages (expression); \"\" in other languages.")
      .def_readwrite("cluster", &LaunchDecl::cluster,
                     "Thread-block cluster shape (`cluster=dim3(2, 1, 1)`): three expressions, all \"\" when the "
                     "launch declares none.")
      .def("__repr__", [](const LaunchDecl& l) {
        return "LaunchDecl(" + quoted(l.kernel) + ", grid=" + list_repr({l.grid.begin(), l.grid.end()}) +
               ", block=" + list_repr({l.block.begin(), l.block.end()}) + ", shared_bytes=" + quoted(l.shared_bytes) +
               ", args=" + list_repr(l.args) + ", line=" + std::to_string(l.line) + ")";
      });

  py::class_<TensorMapDecl>(m, "TensorMapDecl",
                            "`// @tensor_map name = tensor[dims] box[sizes] options`: a TMA tensor map (CUDA, sm_90 "
                            "and newer); dimensions innermost first, strides in elements.")
      .def(py::init<>())
      .def_readwrite("name", &TensorMapDecl::name, "Name the launches pass it by.")
      .def_readwrite("buffer", &TensorMapDecl::buffer, "The task tensor or workspace it maps.")
      .def_readwrite("dims", &TensorMapDecl::dims, "Extent of each dimension, innermost first (expressions).")
      .def_readwrite("strides", &TensorMapDecl::strides,
                     "Elements between steps of dimensions 1 and up (expressions); empty: packed.")
      .def_readwrite("box", &TensorMapDecl::box, "Elements one copy moves in each dimension (expressions).")
      .def_readwrite("element_strides", &TensorMapDecl::element_strides,
                     "Traversal step in each dimension (expressions); empty: all 1.")
      .def_readwrite("swizzle", &TensorMapDecl::swizzle, "\"none\", \"32B\", \"64B\" or \"128B\".")
      .def_readwrite("interleave", &TensorMapDecl::interleave, "\"none\", \"16B\" or \"32B\".")
      .def_readwrite("l2_promotion", &TensorMapDecl::l2_promotion, "\"none\", \"64B\", \"128B\" or \"256B\".")
      .def_readwrite("oob_fill", &TensorMapDecl::oob_fill, "\"zero\" or \"nan\": what elements outside read as.")
      .def_readwrite("condition", &TensorMapDecl::condition,
                     "The when(...) expression: the map exists only where it is non-zero; \"\" always.")
      .def_readwrite("line", &TensorMapDecl::line, "1-based source line.")
      .def("__repr__", [](const TensorMapDecl& t) {
        return "TensorMapDecl(" + quoted(t.name) + ", " + t.buffer + list_repr(t.dims) + ", box=" + list_repr(t.box) +
               ", line=" + std::to_string(t.line) + ")";
      });

  py::class_<TunableParam>(m, "TunableParam", "`// @tune NAME = value in {v1, v2, ...}`: a macro a tuner varies.")
      .def(py::init<>())
      .def_readwrite("name", &TunableParam::name, "Macro name.")
      .def_readwrite("value", &TunableParam::value, "The value this candidate uses.")
      .def_readwrite("values", &TunableParam::values, "The allowed values.")
      .def_readwrite("line", &TunableParam::line, "1-based source line.")
      .def("__repr__", [](const TunableParam& t) {
        std::string values;
        for (auto v : t.values) values += (values.empty() ? "" : ", ") + std::to_string(v);
        return "TunableParam(" + quoted(t.name) + ", value=" + std::to_string(t.value) + ", values=[" + values +
               "], line=" + std::to_string(t.line) + ")";
      });

  py::class_<LaunchPlan>(m, "LaunchPlan",
                         "The launch plan a candidate declares in its own comment lines; see "
                         "docs/candidate-format.md.")
      .def(py::init<>())
      .def_readwrite("workspaces", &LaunchPlan::workspaces, "The @workspace declarations.")
      .def_readwrite("launches", &LaunchPlan::launches, "The @launch lines, in execution order.")
      .def_readwrite("tunables", &LaunchPlan::tunables, "The @tune declarations.")
      .def_readwrite("tensor_maps", &LaunchPlan::tensor_maps, "The @tensor_map declarations.")
      .def_readwrite("requirements", &LaunchPlan::requirements, "The @require expressions (each must be non-zero).")
      .def_readwrite("requirement_lines", &LaunchPlan::requirement_lines,
                     "The 1-based source line of each @require, in the order of requirements.")
      .def_readwrite("specialize", &LaunchPlan::specialize, "True with @specialize: sizes become macros KS_<name>.")
      .def_static("parse", &LaunchPlan::parse, py::arg("source"), py::arg("language") = "cuda",
                  "Reads the plan from a source written in `language` (its comment marker and launch syntax: "
                  "`# @launch k[grid](...)` for \"triton\"). Raises PlanError (with .line) on a malformed "
                  "directive or when there is no @launch line.")
      .def("__repr__", [](const LaunchPlan& p) {
        std::string kernels;
        for (const auto& l : p.launches) kernels += (kernels.empty() ? "" : ", ") + quoted(l.kernel);
        return "LaunchPlan(launches=[" + kernels + "], workspaces=" + std::to_string(p.workspaces.size()) +
               ", tunables=" + std::to_string(p.tunables.size()) + ", requirements=" +
               std::to_string(p.requirements.size()) + ", specialize=" + (p.specialize ? "True" : "False") + ")";
      });

  m.def("evaluate_expression", &evaluate_expression, py::arg("expression"), py::arg("bindings") = Bindings{},
        "Evaluates an integer plan expression (int64; + - * / % with floor division, comparisons, && || !, "
        "ceil_div, round_up, min, max) over named integers. Raises PlanError naming an unknown identifier, a "
        "division by zero, an overflow or a syntax error with its column.");
}

void bind_evaluation(py::module_& m) {
  py::enum_<Status> status_class(m, "Status", "Outcome of an evaluation.");
  status_class
      .value("ok", Status::ok, "Compiled, correct, timed.")
      .value("compile_error", Status::compile_error, "The compiler rejected the source.")
      .value("invalid_launch", Status::invalid_launch, "The plan is malformed or does not fit the kernels or device.")
      .value("runtime_error", Status::runtime_error, "A launch or API call failed without poisoning the device.")
      .value("incorrect", Status::incorrect, "Ran, but an output was wrong or unwritten, or an input was modified.")
      .value("timeout", Status::timeout, "Did not finish by the deadline.")
      .value("crashed", Status::crashed, "The worker died or the device context was lost.");
  status_class.attr("__str__") = py::cpp_function([](Status status) { return to_string(status); }, py::name("__str__"),
                                                  py::is_method(status_class));
  m.def("parse_status", &parse_status, py::arg("name"), "Status of a name ('ok', 'compile_error', ...).");
  m.def("doubt_casting_flags", &doubt_casting_flags,
        "The integrity flags that cast doubt on an evaluation's speed or correctness, each with what it means: "
        "an evaluation carrying one is confirmed before it leads a run, and reports do not headline it.");
  m.def("failure_fitness", &failure_fitness, py::arg("status"),
        "Fitness of a status without timing: incorrect 0, runtime_error -0.25, invalid_launch -0.5, compile_error "
        "-0.75, timeout and crashed -1.");

  py::class_<KernelResources>(m, "KernelResources", "Resources one compiled kernel uses (-1 where unknown).")
      .def(py::init<>())
      .def_readwrite("name", &KernelResources::name, "Kernel name.")
      .def_readwrite("registers", &KernelResources::registers, "Registers per thread.")
      .def_readwrite("spill_store_bytes", &KernelResources::spill_store_bytes, "Bytes of register spill stores.")
      .def_readwrite("spill_load_bytes", &KernelResources::spill_load_bytes, "Bytes of register spill loads.")
      .def_readwrite("stack_bytes", &KernelResources::stack_bytes, "Stack frame bytes.")
      .def_readwrite("shared_bytes", &KernelResources::shared_bytes, "Static shared memory bytes.")
      .def_readwrite("local_bytes", &KernelResources::local_bytes, "Local memory bytes.")
      .def("__repr__", [](const KernelResources& k) {
        return "KernelResources(" + quoted(k.name) + ", registers=" + std::to_string(k.registers) +
               ", spill_store_bytes=" + std::to_string(k.spill_store_bytes) +
               ", spill_load_bytes=" + std::to_string(k.spill_load_bytes) +
               ", shared_bytes=" + std::to_string(k.shared_bytes) + ")";
      });

  py::class_<CompileReport>(m, "CompileReport", "The compile stage: success, log, target, time, kernel resources.")
      .def(py::init<>())
      .def_readwrite("ok", &CompileReport::ok, "True when the source compiled.")
      .def_readwrite("log", &CompileReport::log, "Compiler log.")
      .def_readwrite("target", &CompileReport::target, "e.g. 'sm_90' or 'pthread-skylake (PoCL)'.")
      .def_readwrite("seconds", &CompileReport::seconds, "Compile wall time.")
      .def_readwrite("cached", &CompileReport::cached, "True when served from the compile cache.")
      .def_readwrite("kernels", &CompileReport::kernels, "Resources per kernel.")
      .def("__repr__", [](const CompileReport& c) {
        return std::string("CompileReport(ok=") + (c.ok ? "True" : "False") + ", target=" + quoted(c.target) +
               ", seconds=" + number(c.seconds) + ", kernels=" + std::to_string(c.kernels.size()) + ")";
      });

  py::class_<OutputCheck>(m, "OutputCheck", "One output tensor compared against the reference in one check.")
      .def(py::init<>())
      .def_readwrite("tensor", &OutputCheck::tensor, "Output tensor name.")
      .def_readwrite("passed", &OutputCheck::passed, "Within tolerance everywhere.")
      .def_readwrite("max_abs_error", &OutputCheck::max_abs_error, "Largest |actual - expected|.")
      .def_readwrite("rel_l2_error", &OutputCheck::rel_l2_error, "||actual - expected|| / ||expected||.")
      .def_readwrite("mismatches", &OutputCheck::mismatches, "Elements outside the tolerance.")
      .def_readwrite("unwritten", &OutputCheck::unwritten, "Elements never written (poison survived).")
      .def_readwrite("non_finite", &OutputCheck::non_finite, "NaN/Inf where the reference is finite.")
      .def_readwrite("first_mismatch", &OutputCheck::first_mismatch, "Flat index of the first mismatch, -1 if none.")
      .def_readwrite("expected", &OutputCheck::expected, "Reference value at first_mismatch.")
      .def_readwrite("actual", &OutputCheck::actual, "Candidate value at first_mismatch.")
      .def("__repr__", [](const OutputCheck& o) {
        return "OutputCheck(" + quoted(o.tensor) + ", passed=" + (o.passed ? "True" : "False") +
               ", max_abs_error=" + number(o.max_abs_error) + ", mismatches=" + std::to_string(o.mismatches) + ")";
      });

  py::class_<CorrectnessCheck>(m, "CorrectnessCheck", "One correctness trial: a size configuration and an input kind.")
      .def(py::init<>())
      .def_readwrite("sizes", &CorrectnessCheck::sizes, "Name of the size configuration.")
      .def_readwrite("inputs", &CorrectnessCheck::inputs, "'random', 'large', 'tiny', 'mixed_scale', ...")
      .def_readwrite("seed", &CorrectnessCheck::seed, "Seed of the inputs.")
      .def_readwrite("passed", &CorrectnessCheck::passed, "Every output passed and no input changed.")
      .def_readwrite("outputs", &CorrectnessCheck::outputs, "Per-output comparisons.")
      .def_readwrite("modified_inputs", &CorrectnessCheck::modified_inputs, "Inputs the candidate wrote into.")
      .def_readwrite("message", &CorrectnessCheck::message, "Short description of the outcome.")
      .def("__repr__", [](const CorrectnessCheck& c) {
        return "CorrectnessCheck(sizes=" + quoted(c.sizes) + ", inputs=" + quoted(c.inputs) +
               ", passed=" + (c.passed ? "True" : "False") + ")";
      });

  py::class_<CorrectnessReport>(m, "CorrectnessReport", "All correctness checks of one evaluation.")
      .def(py::init<>())
      .def_readwrite("passed", &CorrectnessReport::passed, "Every check passed.")
      .def_readwrite("trials", &CorrectnessReport::trials, "Random trials on the timing sizes.")
      .def_readwrite("checks", &CorrectnessReport::checks, "The checks, in the order they ran.")
      .def_readwrite("message", &CorrectnessReport::message, "Summary of the first failure.")
      .def("__repr__", [](const CorrectnessReport& r) {
        return std::string("CorrectnessReport(passed=") + (r.passed ? "True" : "False") +
               ", checks=" + std::to_string(r.checks.size()) + ")";
      });

  py::class_<KernelTime>(m, "KernelTime", "Share of the timed launch sequence spent in one kernel.")
      .def(py::init<>())
      .def_readwrite("name", &KernelTime::name, "Kernel name.")
      .def_readwrite("median_ms", &KernelTime::median_ms, "Median milliseconds.")
      .def_readwrite("share", &KernelTime::share, "Fraction of the sequence's time.")
      .def("__repr__", [](const KernelTime& k) {
        return "KernelTime(" + quoted(k.name) + ", median_ms=" + number(k.median_ms) + ", share=" + number(k.share) + ")";
      });

  py::class_<TimingReport>(m, "TimingReport", "Timing of the launch sequence, with its noise.")
      .def(py::init<>())
      .def_readwrite("mode", &TimingReport::mode, "'screen' or 'strict'.")
      .def_readwrite("median_ms", &TimingReport::median_ms, "Median milliseconds per sequence.")
      .def_readwrite("mean_ms", &TimingReport::mean_ms, "Mean milliseconds.")
      .def_readwrite("min_ms", &TimingReport::min_ms, "Fastest sample.")
      .def_readwrite("noise", &TimingReport::noise, "Relative standard deviation of the samples.")
      .def_readwrite("samples", &TimingReport::samples, "Number of samples.")
      .def_readwrite("converged", &TimingReport::converged, "Noise reached the target within the budget.")
      .def_readwrite("host_ms", &TimingReport::host_ms, "Host-clock time per sequence around full syncs.")
      .def_readwrite("l2_flushed", &TimingReport::l2_flushed, "L2 flushed before each sample (cold).")
      .def_readwrite("sampling", &TimingReport::sampling,
                     "How the samples were taken: 'per_sample' (the host enqueues each sample after the last "
                     "finished) or 'graph_replay' (a sequence under 50 us on CUDA: the samples, each with its own "
                     "eviction and event pair, recorded once as a CUDA graph and replayed back to back).")
      .def_readwrite("sampling_fallback", &TimingReport::sampling_fallback,
                     "Why a sequence under the threshold was sampled per sample all the same; empty otherwise.")
      .def_readwrite("kernels", &TimingReport::kernels, "Per-kernel times.")
      .def("__repr__", [](const TimingReport& t) {
        return "TimingReport(median_ms=" + number(t.median_ms) + ", noise=" + number(t.noise) +
               ", samples=" + std::to_string(t.samples) + ", mode=" + quoted(t.mode) + ")";
      });

  py::class_<SpeedOfLight>(m, "SpeedOfLight", "Achieved rates against the device's measured peaks.")
      .def(py::init<>())
      .def_readwrite("flops", &SpeedOfLight::flops, "FLOPs of the work model at the timing sizes.")
      .def_readwrite("bytes", &SpeedOfLight::bytes, "Fewest bytes at the timing sizes.")
      .def_readwrite("achieved_gbps", &SpeedOfLight::achieved_gbps, "bytes / median time, GB/s.")
      .def_readwrite("achieved_gflops", &SpeedOfLight::achieved_gflops, "flops / median time, GFLOP/s.")
      .def_readwrite("peak_gbps", &SpeedOfLight::peak_gbps, "The device's bandwidth peak, GB/s.")
      .def_readwrite("peak_gflops", &SpeedOfLight::peak_gflops, "The device's compute peak, GFLOP/s.")
      .def_readwrite("bandwidth_fraction", &SpeedOfLight::bandwidth_fraction, "achieved_gbps / peak_gbps.")
      .def_readwrite("compute_fraction", &SpeedOfLight::compute_fraction, "achieved_gflops / peak_gflops.")
      .def_readwrite("fraction", &SpeedOfLight::fraction, "The larger fraction: closeness to the hardware limit.")
      .def("__repr__", [](const SpeedOfLight& s) {
        return "SpeedOfLight(fraction=" + number(s.fraction) + ", achieved_gbps=" + number(s.achieved_gbps) +
               ", achieved_gflops=" + number(s.achieved_gflops) + ")";
      });

  py::class_<IntegrityReport>(m, "IntegrityReport", "Flags raised by the integrity checks.")
      .def(py::init<>())
      .def_readwrite("flags", &IntegrityReport::flags,
                     "e.g. 'speedup_above_threshold', 'remeasured', 'nondeterministic', 'host_timer_mismatch'.")
      .def_readwrite("deterministic", &IntegrityReport::deterministic, "Identical runs gave identical outputs.")
      .def_readwrite("remeasured", &IntegrityReport::remeasured, "A suspicious speedup was measured again.")
      .def_readwrite("remeasured_speedup", &IntegrityReport::remeasured_speedup, "The speedup measured again.")
      .def_readwrite("unconfined", &IntegrityReport::unconfined,
                     "The sandbox's protections that were off while it ran ('name: why'); empty when all held.")
      .def("__repr__", [](const IntegrityReport& i) { return "IntegrityReport(flags=" + list_repr(i.flags) + ")"; });

  py::class_<Placement>(m, "Placement",
                        "Where an evaluation ran (host, device, Ray actor) and how often it was lost with the process "
                        "running it and run again (docs/distributed.md).")
      .def(py::init<>())
      .def_readwrite("host", &Placement::host, "Host name of the machine whose device ran it.")
      .def_readwrite("device_index", &Placement::device_index,
                     "Index of the device within the backend; -1 when it never reached a device (rejected in the "
                     "caller's process) or the evaluator does not say.")
      .def_readwrite("actor", &Placement::actor, "The Ray actor that ran it (RayEvaluator); empty elsewhere.")
      .def_readwrite("retries", &Placement::retries,
                     "Times it was started on an actor that was lost before answering and started again elsewhere.")
      .def("__repr__", [](const Placement& p) {
        return "Placement(host=" + quoted(p.host) + ", device_index=" + std::to_string(p.device_index) +
               ", actor=" + quoted(p.actor) + ", retries=" + std::to_string(p.retries) + ")";
      });

  py::class_<HostKernel>(m, "HostKernel",
                         "One kernel a ModelNew's forward launched (docs/kernelbench-modelnew.md, \"What ran\").")
      .def(py::init<>())
      .def_readwrite("name", &HostKernel::name, "The kernel's name (a CUDA kernel's, an ATen operation's on the CPU).")
      .def_readwrite("origin", &HostKernel::origin,
                     "'candidate' (one of its own kernels: load_inline, Triton) or 'library' (ATen, cuBLAS, cuDNN).")
      .def_readwrite("launches", &HostKernel::launches, "Launches in one forward.")
      .def_readwrite("device_seconds", &HostKernel::device_seconds,
                     "Device time of those launches (on the CPU, host time of the calls).")
      .def("__repr__", [](const HostKernel& k) {
        return "HostKernel(" + quoted(k.name) + ", origin=" + quoted(k.origin) + ", launches=" +
               std::to_string(k.launches) + ", device_seconds=" + number(k.device_seconds) + ")";
      });

  py::class_<HostCodeReport>(m, "HostCodeReport",
                             "What a ModelNew candidate's forward ran, its own kernels versus library ones, and "
                             "whether its outputs depend on its own kernels (docs/kernelbench-modelnew.md).")
      .def(py::init<>())
      .def_readwrite("kernels", &HostCodeReport::kernels, "The kernels of one profiled forward (list of HostKernel).")
      .def_readwrite("custom_share", &HostCodeReport::custom_share,
                     "The candidate's own kernels' share (0..1) of the device time of the kernels listed.")
      .def_readwrite("custom_calls", &HostCodeReport::custom_calls,
                     "Calls of the candidate's own kernels in the profiled forward.")
      .def_readwrite("custom_kernel_every_check", &HostCodeReport::custom_kernel_every_check,
                     "Whether one of its own kernels ran in every correctness check.")
      .def_readwrite("ablation", &HostCodeReport::ablation,
                     "With its own kernels made no-ops that write noise, the outputs: 'changed', 'unchanged', or "
                     "'no_custom_calls'.")
      .def_readwrite("policy", &HostCodeReport::policy, "EvaluatorOptions.host_code_policy it was judged under.")
      .def_readwrite("notes", &HostCodeReport::notes, "What each integrity flag the runner raised saw.")
      .def("__repr__", [](const HostCodeReport& r) {
        return "HostCodeReport(kernels=" + std::to_string(r.kernels.size()) + ", custom_share=" +
               number(r.custom_share) + ", ablation=" + quoted(r.ablation) + ")";
      });

  py::class_<Evaluation>(m, "Evaluation",
                         "The evaluator's structured feedback on one candidate; JSON schema kernelsmith.evaluation/5 "
                         "(docs/evaluation-schema.md).")
      .def(py::init<>())
      .def_readwrite("candidate_id", &Evaluation::candidate_id, "Id of the evaluated candidate.")
      .def_readwrite("task", &Evaluation::task, "Task name.")
      .def_readwrite("backend", &Evaluation::backend, "'cuda', 'opencl', ...")
      .def_readwrite("device", &Evaluation::device, "Device name.")
      .def_readwrite("status", &Evaluation::status, "The outcome.")
      .def_readwrite("message", &Evaluation::message, "One line: what went wrong, or 'ok'.")
      .def_readwrite("compile", &Evaluation::compile, "The compile stage.")
      .def_readwrite("correctness", &Evaluation::correctness, "Correctness checks, or None when they did not run.")
      .def_readwrite("timing", &Evaluation::timing, "The candidate's timing, or None.")
      .def_readwrite("baseline_timing", &Evaluation::baseline_timing,
                     "The timing of the baseline speedup is against: the reference kernel's, or PyTorch eager's for a "
                     "task with a PyTorch oracle; None when not timed.")
      .def_readwrite("speedup", &Evaluation::speedup,
                     "Baseline median over the candidate's (> 1 is faster): over the reference kernel, or over PyTorch "
                     "eager for a task with a PyTorch oracle.")
      .def_readwrite("baselines", &Evaluation::baselines,
                     "Every baseline timed, by name (dict of TimingReport): 'reference' (the reference kernel), or for "
                     "a task with a PyTorch oracle 'eager', 'compile' (torch.compile) and 'compile_max_autotune' "
                     "(torch.compile, mode='max-autotune-no-cudagraphs').")
      .def_readwrite("speedups", &Evaluation::speedups,
                     "The candidate's speedup over each baseline, by name (baseline median over the candidate's); 0 "
                     "for a baseline that could not be timed.")
      .def_readwrite("baseline_errors", &Evaluation::baseline_errors,
                     "Why a baseline could not be timed (torch.compile unavailable, an Inductor error), by name.")
      .def_readwrite("sol", &Evaluation::sol, "Speed of light, or None.")
      .def_readwrite("integrity", &Evaluation::integrity, "Integrity flags.")
      .def_readwrite("fitness", &Evaluation::fitness, "Scalar for selection.")
      .def_readwrite("wall_seconds", &Evaluation::wall_seconds, "Wall time of the whole evaluation.")
      .def_readwrite("stage_seconds", &Evaluation::stage_seconds,
                     "Seconds by stage: compile, reference, load, correctness, timing, baseline, oracle, overhead.")
      .def_readwrite("placement", &Evaluation::placement,
                     "Where it ran: host, device index, Ray actor, and how often it was run again after its actor was "
                     "lost.")
      .def_readwrite("host_code", &Evaluation::host_code,
                     "For a ModelNew candidate that passed its checks: the kernels its forward ran and their shares "
                     "(HostCodeReport); None otherwise.")
      .def_property_readonly("ok", &Evaluation::ok, "True when status is Status.ok.")
      .def("to_json", &Evaluation::to_json, "JSON under the schema kernelsmith.evaluation/5.")
      .def(py::pickle([](const Evaluation& e) { return e.to_json(); },
                      [](const std::string& json) { return Evaluation::from_json(json, "<pickled evaluation>"); }))
      .def_static("from_json", &Evaluation::from_json, py::arg("json_text"), py::arg("origin") = "<evaluation>",
                  "Parses evaluation JSON; raises ValidationError naming the field.")
      .def("to_prompt_text", &Evaluation::to_prompt_text,
           "Concise feedback for an LLM: status, the first failure with its numbers, timing with noise, speedup, "
           "fraction of the hardware limit, resources, flags.")
      .def("__repr__", [](const Evaluation& e) {
        return "Evaluation(" + quoted(e.candidate_id) + ", status=" + to_string(e.status) +
               ", fitness=" + number(e.fitness) + ", speedup=" + number(e.speedup) + ", message=" + quoted(e.message) +
               ")";
      });

  m.attr("EVALUATION_SCHEMA") = kEvaluationSchema;
}

}  // namespace

void bind_core_types(py::module_& m) {
  bind_dtypes(m);
  bind_task(m);
  bind_candidate(m);
  bind_launch_plan(m);
  bind_evaluation(m);
}

}  // namespace kernelsmith::python
