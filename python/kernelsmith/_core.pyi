"""
kernelsmith's compiled core; use the pure-Python package `kernelsmith` instead.
"""
from __future__ import annotations
import collections.abc
from kernelsmith import BackendUnavailableError
from kernelsmith import DeviceError
from kernelsmith import DeviceFault
from kernelsmith import Error
from kernelsmith import LaunchError
from kernelsmith import LibraryLoadError
from kernelsmith import LibraryNotFoundError
from kernelsmith import NotFoundError
from kernelsmith import NotSupportedError
from kernelsmith import PlanError
from kernelsmith import StoreError
from kernelsmith import SymbolMissingError
from kernelsmith import TaskError
from kernelsmith import TimeoutError
from kernelsmith import ValidationError
import os
import pathlib
import typing
__all__: list[str] = ['Archive', 'ArchiveConfig', 'Attempt', 'BackendInfo', 'BackendUnavailableError', 'BuiltPrompt', 'CANDIDATE_SCHEMA', 'Candidate', 'ChatMessage', 'CodeBlock', 'CompileReport', 'CorrectnessCheck', 'CorrectnessReport', 'DType', 'DataCase', 'DeviceError', 'DeviceFault', 'DeviceInfo', 'DiffBlock', 'Distribution', 'EVALUATION_SCHEMA', 'EditMode', 'Error', 'Evaluation', 'EvaluationRecord', 'Evaluator', 'EvaluatorOptions', 'Evolution', 'EvolutionConfig', 'EvolutionResult', 'ExperienceItem', 'ExperienceMemory', 'ExperienceMemoryOptions', 'ExperienceQuery', 'ExperienceRecord', 'FeatureDescriptor', 'FeatureInfo', 'FeatureKind', 'FeatureScope', 'HistoryPoint', 'HostCodeReport', 'HostKernel', 'INITIAL_ORIGINS', 'Inspiration', 'IntegrityReport', 'IslandPopulation', 'IslandRecord', 'KernelLanguage', 'KernelResources', 'KernelRunner', 'KernelSource', 'KernelTime', 'LaunchDecl', 'LaunchError', 'LaunchPlan', 'LibraryLoadError', 'LibraryNotFoundError', 'Lineage', 'LlmAttempt', 'LlmClient', 'LlmMutator', 'LlmMutatorOptions', 'LlmPrice', 'LlmRequestOptions', 'LlmResponse', 'LlmSpend', 'MapElitesArchive', 'MigrationConfig', 'MigrationRecord', 'MutationRequest', 'Mutator', 'NotFoundError', 'NotSupportedError', 'NoveltyConfig', 'NoveltyFilter', 'NoveltyVerdict', 'ORIGINS', 'OfflineProgram', 'OutputCheck', 'ParamMutator', 'ParamMutatorOptions', 'ParentChoice', 'ParsedResponse', 'Placement', 'PlanError', 'Population', 'PopulationConfig', 'Predicate', 'Program', 'ProgramRecord', 'Progress', 'PromptBuilder', 'PromptBuilderOptions', 'PromptTemplates', 'Proposal', 'PytorchOracle', 'RUN_STORE_SCHEMA_VERSION', 'Retrieval', 'RetrievedItem', 'Retriever', 'Rng', 'RunInfo', 'RunStore', 'SandboxProtection', 'SandboxStatus', 'SelectionConfig', 'SelectionMode', 'SelectionPolicy', 'SizeConfig', 'Skill', 'SkillBank', 'SkillFile', 'SpeedOfLight', 'Stage', 'StageValue', 'Status', 'StepRecord', 'StoreError', 'SymbolMissingError', 'TASK_SCHEMA', 'Task', 'TaskError', 'TensorMapDecl', 'TensorRole', 'TensorSpec', 'TimeoutError', 'TimingReport', 'Tolerance', 'TritonKernelSpec', 'TritonStatus', 'TunableParam', 'ValidationError', 'ValueRetriever', 'ValueRetrieverOptions', 'WorkModel', 'WorkspaceDecl', 'apply_diff_response', 'best_backend', 'better_program', 'builtin_task_names', 'candidate_format_rules', 'compile_candidate_offline', 'cosine_similarity', 'create_evaluator', 'default_feature_descriptors', 'default_tolerance', 'defines_model_new', 'devices', 'devices_json', 'doubt_casting_flags', 'dtype_size', 'evaluate_expression', 'experience_reward', 'extract_code_blocks', 'extract_diff_blocks', 'failure_fitness', 'feature_catalog', 'feature_similarity', 'feedback_features', 'find_feature', 'has_custom_kernel', 'hashed_ngram_embedding', 'helper_python', 'is_floating', 'is_initial_origin', 'kernel_language', 'kernel_languages', 'language_for_extension', 'messages_from_json', 'messages_to_json', 'model_new_from_problem', 'mutation_name', 'normalize_source', 'normalized_source_hash', 'parse_dtype', 'parse_edit_mode', 'parse_full_response', 'parse_response', 'parse_selection_policy', 'parse_skill_tag', 'parse_stage', 'parse_status', 'render_template', 'request_features', 'request_feedback', 'run_kernel', 'sandbox_status', 'sandboxed_command', 'selection_weights', 'set_helper_python', 'set_triton_python', 'skill_search_path', 'source_tokens', 'stage_of', 'task_features', 'task_search_path', 'triton_kernel_specs', 'triton_status']
class DType:
    """
    Element type of task tensors and workspaces.
    
    Members:
    
      float16
    
      bfloat16
    
      float32
    
      float64
    
      int8
    
      uint8
    
      int32
    
      int64
    """
    __members__: typing.ClassVar[dict[str, DType]]
    bfloat16: typing.ClassVar[DType]
    float16: typing.ClassVar[DType]
    float32: typing.ClassVar[DType]
    float64: typing.ClassVar[DType]
    int32: typing.ClassVar[DType]
    int64: typing.ClassVar[DType]
    int8: typing.ClassVar[DType]
    uint8: typing.ClassVar[DType]
    @typing.overload
    def __eq__(self, other: DType) -> bool:
        ...
    @typing.overload
    def __eq__(self, other: typing.Any) -> bool:
        ...
    def __getstate__(self) -> int:
        ...
    def __hash__(self) -> int:
        ...
    def __index__(self) -> int:
        ...
    def __init__(self, value: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    def __int__(self) -> int:
        ...
    @typing.overload
    def __ne__(self, other: DType) -> bool:
        ...
    @typing.overload
    def __ne__(self, other: typing.Any) -> bool:
        ...
    def __repr__(self) -> str:
        ...
    def __setstate__(self, state: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    def __str__(self) -> str:
        ...
    @property
    def is_floating(self) -> bool:
        """
        True for float16, bfloat16, float32, float64.
        """
    @property
    def itemsize(self) -> int:
        """
        Bytes per element.
        """
    @property
    def name(self) -> str:
        ...
    @property
    def value(self) -> int:
        ...
class TensorRole:
    """
    Whether a task tensor is read (input) or written (output) by the kernel.
    
    Members:
    
      input
    
      output
    """
    __members__: typing.ClassVar[dict[str, TensorRole]]
    input: typing.ClassVar[TensorRole]
    output: typing.ClassVar[TensorRole]
    @typing.overload
    def __eq__(self, other: TensorRole) -> bool:
        ...
    @typing.overload
    def __eq__(self, other: typing.Any) -> bool:
        ...
    def __getstate__(self) -> int:
        ...
    def __hash__(self) -> int:
        ...
    def __index__(self) -> int:
        ...
    def __init__(self, value: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    def __int__(self) -> int:
        ...
    @typing.overload
    def __ne__(self, other: TensorRole) -> bool:
        ...
    @typing.overload
    def __ne__(self, other: typing.Any) -> bool:
        ...
    def __repr__(self) -> str:
        ...
    def __setstate__(self, state: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    def __str__(self) -> str:
        ...
    @property
    def name(self) -> str:
        ...
    @property
    def value(self) -> int:
        ...
class Distribution:
    """
    How the correctness protocol draws a tensor's values: normal(a = mean, b = stddev), uniform(a = low, b = high), integers(a = low, b = high, inclusive), constant(a = the value under every input kind). `structure` then shapes them: 'none', 'symmetric', 'lower_triangular', 'upper_triangular' (last two dims) or 'probability_rows' (each row of the last dim softmaxed).
    """
    def __init__(self, kind: str = 'normal', a: typing.SupportsFloat | typing.SupportsIndex = 0.0, b: typing.SupportsFloat | typing.SupportsIndex = 1.0, structure: str = 'none') -> None:
        ...
    def __repr__(self) -> str:
        ...
    @property
    def a(self) -> float:
        """
        Mean (normal), lower bound, or the value (constant).
        """
    @a.setter
    def a(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    @property
    def b(self) -> float:
        """
        Standard deviation (normal) or upper bound; unused by constant.
        """
    @b.setter
    def b(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    @property
    def kind(self) -> str:
        """
        'normal', 'uniform', 'integers' or 'constant'.
        """
    @kind.setter
    def kind(self, arg0: str) -> None:
        ...
    @property
    def structure(self) -> str:
        """
        'none', 'symmetric', 'lower_triangular', 'upper_triangular' or 'probability_rows': applied after every input kind, so adversarial inputs keep it.
        """
    @structure.setter
    def structure(self, arg0: str) -> None:
        ...
class TensorSpec:
    """
    A named task tensor: dtype, shape over the sizes, role, distribution.
    """
    def __init__(self, name: str = '', dtype: DType = ..., shape: collections.abc.Sequence[str] = [], role: TensorRole = ..., distribution: Distribution = ...) -> None:
        ...
    def __repr__(self) -> str:
        ...
    @property
    def distribution(self) -> Distribution:
        """
        How input values are drawn.
        """
    @distribution.setter
    def distribution(self, arg0: Distribution) -> None:
        ...
    @property
    def dtype(self) -> DType:
        """
        Element type.
        """
    @dtype.setter
    def dtype(self, arg0: DType) -> None:
        ...
    @property
    def name(self) -> str:
        """
        Identifier; launch plans pass the tensor by this name.
        """
    @name.setter
    def name(self, arg0: str) -> None:
        ...
    @property
    def role(self) -> TensorRole:
        """
        TensorRole.input or TensorRole.output.
        """
    @role.setter
    def role(self, arg0: TensorRole) -> None:
        ...
    @property
    def shape(self) -> list[str]:
        """
        One integer expression per dimension, e.g. ['M', 'K'].
        """
    @shape.setter
    def shape(self, arg0: collections.abc.Sequence[str]) -> None:
        ...
class SizeConfig:
    """
    One named assignment of the task's sizes.
    """
    def __init__(self, name: str = '', sizes: collections.abc.Mapping[str, typing.SupportsInt | typing.SupportsIndex] = {}) -> None:
        ...
    def __repr__(self) -> str:
        ...
    @property
    def name(self) -> str:
        """
        Name, e.g. 'timing' or 'odd_4097'.
        """
    @name.setter
    def name(self, arg0: str) -> None:
        ...
    @property
    def sizes(self) -> dict[str, int]:
        """
        Size name -> value, e.g. {'N': 4097}.
        """
    @sizes.setter
    def sizes(self, arg0: collections.abc.Mapping[str, typing.SupportsInt | typing.SupportsIndex]) -> None:
        ...
class Tolerance:
    """
    |actual - expected| <= atol + rtol * |expected|, element by element.
    """
    def __init__(self, atol: typing.SupportsFloat | typing.SupportsIndex = 0.0, rtol: typing.SupportsFloat | typing.SupportsIndex = 0.0) -> None:
        ...
    def __repr__(self) -> str:
        ...
    @property
    def atol(self) -> float:
        """
        Absolute tolerance.
        """
    @atol.setter
    def atol(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    @property
    def rtol(self) -> float:
        """
        Relative tolerance.
        """
    @rtol.setter
    def rtol(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
class WorkModel:
    """
    The work a task needs, as integer expressions over the sizes: FLOPs, and the fewest bytes any implementation must move.
    """
    def __init__(self, flops: str = '0', bytes: str = '0') -> None:
        ...
    def __repr__(self) -> str:
        ...
    @property
    def bytes(self) -> str:
        """
        Fewest-bytes expression, e.g. '8 * N'.
        """
    @bytes.setter
    def bytes(self, arg0: str) -> None:
        ...
    @property
    def flops(self) -> str:
        """
        FLOP count expression, e.g. '2 * M * N * K'.
        """
    @flops.setter
    def flops(self, arg0: str) -> None:
        ...
class KernelSource:
    """
    A source file for one kernel language ('cuda', 'opencl', 'maca').
    """
    def __init__(self, language: str = '', source: str = '', path: str = '') -> None:
        ...
    def __repr__(self) -> str:
        ...
    @property
    def language(self) -> str:
        """
        Kernel language.
        """
    @language.setter
    def language(self, arg0: str) -> None:
        ...
    @property
    def path(self) -> str:
        """
        Where it was read from; empty when given inline.
        """
    @path.setter
    def path(self, arg0: str) -> None:
        ...
    @property
    def source(self) -> str:
        """
        The code, with its launch plan in // @launch lines.
        """
    @source.setter
    def source(self, arg0: str) -> None:
        ...
class PytorchOracle:
    """
    Expected outputs from a PyTorch module (a KernelBench problem file) instead of a reference kernel: the manifest's "oracle" (docs/task-format.md). Map keys are the module's names, values the task's.
    """
    def __init__(self, module: KernelSource = ..., constants: collections.abc.Mapping[str, str] = {}, forward: collections.abc.Sequence[str] = [], parameters: collections.abc.Mapping[str, str] = {}, outputs: collections.abc.Sequence[str] = [], casts: collections.abc.Mapping[str, str] = {}, seed: typing.SupportsInt | typing.SupportsIndex = 42, training: bool = True, baselines: collections.abc.Sequence[str] = ['eager', 'compile', 'compile_max_autotune']) -> None:
        """
        A module given without a language is taken as Python.
        """
    def __repr__(self) -> str:
        ...
    @property
    def baselines(self) -> list[str]:
        """
        The PyTorch baselines timed: 'eager', 'compile', 'compile_max_autotune' (default all).
        """
    @baselines.setter
    def baselines(self, arg0: collections.abc.Sequence[str]) -> None:
        ...
    @property
    def casts(self) -> dict[str, str]:
        """
        Task tensor -> 'bool' (uint8 0/1 as torch.bool), 'python_float' or 'python_int' (a shape-[] tensor passed as a Python number).
        """
    @casts.setter
    def casts(self, arg0: collections.abc.Mapping[str, str]) -> None:
        ...
    @property
    def constants(self) -> dict[str, str]:
        """
        Module-level integer constant -> the task size whose value it takes in each configuration.
        """
    @constants.setter
    def constants(self, arg0: collections.abc.Mapping[str, str]) -> None:
        ...
    @property
    def forward(self) -> list[str]:
        """
        The task input tensors passed to Model.forward, in order.
        """
    @forward.setter
    def forward(self, arg0: collections.abc.Sequence[str]) -> None:
        ...
    @property
    def kind(self) -> str:
        """
        'pytorch' (the only kind).
        """
    @kind.setter
    def kind(self, arg0: str) -> None:
        ...
    @property
    def module(self) -> KernelSource:
        """
        The module's source (KernelSource of language 'python'): class Model(nn.Module), get_inputs(), get_init_inputs() and module-level constants.
        """
    @module.setter
    def module(self, arg0: KernelSource) -> None:
        ...
    @property
    def outputs(self) -> list[str]:
        """
        The task output tensors the forward's result maps to (a tuple flattened in order).
        """
    @outputs.setter
    def outputs(self, arg0: collections.abc.Sequence[str]) -> None:
        ...
    @property
    def parameters(self) -> dict[str, str]:
        """
        State-dict entry of the module (e.g. 'gemm.weight') -> the task input tensor supplying it.
        """
    @parameters.setter
    def parameters(self, arg0: collections.abc.Mapping[str, str]) -> None:
        ...
    @property
    def seed(self) -> int:
        """
        torch.manual_seed before the module is built (default 42).
        """
    @seed.setter
    def seed(self, arg0: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    @property
    def training(self) -> bool:
        """
        Whether the module stays in training mode (default True, as KernelBench); forward runs under torch.no_grad() either way.
        """
    @training.setter
    def training(self, arg0: bool) -> None:
        ...
class Task:
    """
    What to compute: tensors, size configurations, tolerances, a work model and a reference per kernel language. Load one with Task.load('relu') or from a folder holding task.json; see docs/task-format.md.
    """
    @staticmethod
    def from_json(json_text: str, origin: str = '<task>', folder: os.PathLike | str | bytes = ...) -> Task:
        """
        Parses a manifest. `origin` names it in messages; `folder` resolves the source files it names.
        """
    @staticmethod
    def from_kernelbench(path: str, level: int | None = None, out_dir: str | None = None, **options) -> Task:
        """
        Task.from_kernelbench(path, level=None, out_dir=None, *, timeout=300, python=None, device="auto"): the
            task of a KernelBench problem file, imported into `out_dir` (a temporary folder when None) by a helper
            process that runs the file (docs/kernelbench.md). The level comes from the file's folder (level1, ...)
            unless given. Raises TaskError with the reason when the problem cannot be imported.
        """
    @staticmethod
    def load(name_or_path: str) -> Task:
        """
        Loads a task by built-in name (searched along task_search_path()), by folder holding task.json, or by manifest path. Raises NotFoundError or ValidationError naming the file and the field.
        """
    def __getstate__(self) -> tuple[str, str]:
        ...
    def __init__(self) -> None:
        ...
    def __repr__(self) -> str:
        ...
    def __setstate__(self, arg0: tuple) -> None:
        ...
    def add_case(self, inputs: dict, expected: typing.Any = None, sizes: typing.Any = None, device: typing.SupportsInt | typing.SupportsIndex = 0) -> DataCase:
        """
        Adds a case of your own data that the evaluator checks every candidate on, after its own checks.
        
        `inputs` maps every input name to an array (NumPy, DLPack producer, or sequence); `expected` maps some outputs to their known values (the reference computes the others). Sizes are inferred from the shapes (`sizes` fills in the rest); when no size configuration has them, a check configuration named after the case is added. The data is copied into the task (CUDA tensors from `device`). Returns the DataCase. Raises ValidationError naming the tensor on a missing input, a wrong dtype or shape.
        """
    def all_size_configs(self) -> list[SizeConfig]:
        """
        The timing configuration first, then the check ones.
        """
    def content_key(self) -> str:
        """
        64 hex digits over everything the task holds (manifest and data cases): equal content, equal key. Evaluators send a task to a worker or Ray actor once and name it by this key afterwards.
        """
    def element_count(self, tensor: TensorSpec, sizes: collections.abc.Mapping[str, typing.SupportsInt | typing.SupportsIndex]) -> int:
        """
        Number of elements of a tensor under the given sizes.
        """
    def extents(self, tensor: TensorSpec, sizes: collections.abc.Mapping[str, typing.SupportsInt | typing.SupportsIndex]) -> list[int]:
        """
        The extent of each dimension of a tensor under the given sizes ([] for shape []).
        """
    def flops(self, sizes: collections.abc.Mapping[str, typing.SupportsInt | typing.SupportsIndex]) -> float:
        """
        FLOPs under the given sizes.
        """
    def infer_sizes(self, shapes: dict, sizes: typing.Any = None) -> dict[str, int]:
        """
        The sizes under which tensors have the given shapes ({name: shape tuple}), e.g. row_sum.infer_sizes({'x': (4, 8)}) == {'K': 8, 'M': 4}. Raises ValidationError on a wrong rank, sizes that disagree, or a size the shapes cannot tell and `sizes` does not give.
        """
    def languages(self) -> list[str]:
        """
        Languages with a reference, sorted.
        """
    def min_bytes(self, sizes: collections.abc.Mapping[str, typing.SupportsInt | typing.SupportsIndex]) -> float:
        """
        Fewest bytes moved under the given sizes.
        """
    def tensor(self, name: str) -> TensorSpec:
        """
        The tensor of that name; raises NotFoundError listing the names.
        """
    def to_json(self) -> str:
        """
        Self-contained JSON (sources inline) that Task.from_json reads back.
        """
    def tolerance_for(self, dtype: DType) -> Tolerance:
        """
        The task's tolerance, or the dtype's default.
        """
    def validate(self, origin: str = '<task>') -> None:
        """
        Checks every invariant; raises ValidationError naming the field.
        """
    @property
    def cases(self) -> list[DataCase]:
        """
        The caller's data cases (list of DataCase), in the order added.
        """
    @property
    def check_sizes(self) -> list[SizeConfig]:
        """
        Further configurations, checked for correctness only.
        """
    @check_sizes.setter
    def check_sizes(self, arg0: collections.abc.Sequence[SizeConfig]) -> None:
        ...
    @property
    def description(self) -> str:
        """
        What the task computes, for people and prompts.
        """
    @description.setter
    def description(self, arg0: str) -> None:
        ...
    @property
    def folder(self) -> pathlib.Path:
        """
        The folder it was loaded from (empty for a task built in code).
        """
    @folder.setter
    def folder(self, arg0: os.PathLike | str | bytes) -> None:
        ...
    @property
    def name(self) -> str:
        """
        Task name.
        """
    @name.setter
    def name(self, arg0: str) -> None:
        ...
    @property
    def oracle(self) -> PytorchOracle | None:
        """
        A PytorchOracle giving the expected outputs and baselines for every backend, or None. A task needs references, an oracle, or both.
        """
    @oracle.setter
    def oracle(self, arg0: PytorchOracle | None) -> None:
        ...
    @property
    def pytorch(self) -> str:
        """
        The equivalent PyTorch expression, e.g. 'torch.relu(x)'.
        """
    @pytorch.setter
    def pytorch(self, arg0: str) -> None:
        ...
    @property
    def references(self) -> dict[str, KernelSource]:
        """
        Naive, correct implementations by language (the baseline unless the task has an oracle).
        """
    @references.setter
    def references(self, arg0: collections.abc.Mapping[str, KernelSource]) -> None:
        ...
    @property
    def seeds(self) -> dict[str, KernelSource]:
        """
        Tunable starting candidates by language.
        """
    @seeds.setter
    def seeds(self, arg0: collections.abc.Mapping[str, KernelSource]) -> None:
        ...
    @property
    def tensors(self) -> list[TensorSpec]:
        """
        The tensors (list of TensorSpec; assign a whole list to change).
        """
    @tensors.setter
    def tensors(self, arg0: collections.abc.Sequence[TensorSpec]) -> None:
        ...
    @property
    def timing_sizes(self) -> SizeConfig:
        """
        The size configuration that is timed.
        """
    @timing_sizes.setter
    def timing_sizes(self, arg0: SizeConfig) -> None:
        ...
    @property
    def tolerance(self) -> Tolerance | None:
        """
        Tolerance overriding the per-dtype default, or None.
        """
    @tolerance.setter
    def tolerance(self, arg0: Tolerance | None) -> None:
        ...
    @property
    def work(self) -> WorkModel:
        """
        FLOPs and fewest bytes as expressions over the sizes.
        """
    @work.setter
    def work(self, arg0: WorkModel) -> None:
        ...
class Lineage:
    """
    Where a candidate came from.
    """
    def __init__(self, parent_ids: collections.abc.Sequence[str] = [], island: typing.SupportsInt | typing.SupportsIndex = 0, generation: typing.SupportsInt | typing.SupportsIndex = 0, origin: str = 'user') -> None:
        ...
    def __repr__(self) -> str:
        ...
    @property
    def generation(self) -> int:
        """
        Steps from the seed.
        """
    @generation.setter
    def generation(self, arg0: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    @property
    def island(self) -> int:
        """
        Island of the population.
        """
    @island.setter
    def island(self, arg0: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    @property
    def origin(self) -> str:
        """
        How it was made: one of ORIGINS ('reference', 'seed', 'user', 'param', 'llm_full', 'llm_diff', 'llm_crossover'), or a Python mutator's own mutation name.
        """
    @origin.setter
    def origin(self, arg0: str) -> None:
        ...
    @property
    def parent_ids(self) -> list[str]:
        """
        Ids of the parents (one, or two for a crossover).
        """
    @parent_ids.setter
    def parent_ids(self, arg0: collections.abc.Sequence[str]) -> None:
        ...
class Candidate:
    """
    One source file of device code with its launch plan in // @launch lines, and its lineage. See docs/candidate-format.md.
    """
    @staticmethod
    def _repr_html_(candidate: 'core.Candidate') -> str:
        """
        A Candidate's source as an escaped <pre>, its launch-plan lines (@launch, @tune, ...) highlighted.
        """
    @staticmethod
    def from_file(path: str, language: str = '') -> Candidate:
        """
        Reads a source file; the language comes from the extension (.cu, .cuh, .cl, .maca, .py) unless given.
        """
    @staticmethod
    def from_json(json_text: str, origin: str = '<candidate>') -> Candidate:
        """
        Parses candidate JSON; a stated id must match the content.
        """
    def __getstate__(self) -> str:
        ...
    def __init__(self, language: str = '', source: str = '', lineage: Lineage = ...) -> None:
        ...
    def __repr__(self) -> str:
        ...
    def __setstate__(self, arg0: str) -> None:
        ...
    def id(self) -> str:
        """
        Content hash: 16 hex digits of SHA-256 over language, NUL, source.
        """
    def to_json(self) -> str:
        """
        JSON under the schema kernelsmith.candidate/1.
        """
    @property
    def language(self) -> str:
        """
        'cuda', 'opencl', 'maca' or 'triton'.
        """
    @language.setter
    def language(self, arg0: str) -> None:
        ...
    @property
    def lineage(self) -> Lineage:
        """
        Where it came from.
        """
    @lineage.setter
    def lineage(self, arg0: Lineage) -> None:
        ...
    @property
    def source(self) -> str:
        """
        The code.
        """
    @source.setter
    def source(self, arg0: str) -> None:
        ...
class KernelLanguage:
    """
    One kernel language's row (language.hpp): its files, how prompts name and fence it, the backend that runs it and how its plan lines are written.
    """
    def __repr__(self) -> str:
        ...
    @property
    def backend(self) -> str:
        """
        The backend that compiles and runs it ('cuda' for Triton).
        """
    @property
    def extensions(self) -> list[str]:
        """
        File extensions, with the dot: ['.cu', '.cuh'].
        """
    @property
    def fence_aliases(self) -> list[str]:
        """
        Other fence tags an answer may carry.
        """
    @property
    def fence_tag(self) -> str:
        """
        The markdown fence tag of its examples.
        """
    @property
    def host_code(self) -> bool:
        """
        A file of host code evaluated whole by a confined runner, with no launch plan: KernelBench's ModelNew format ('pytorch'), on any backend whose tasks have a PyTorch oracle.
        """
    @property
    def kernel_rule(self) -> str:
        """
        The prompt's rule for writing its kernels.
        """
    @property
    def launch_example(self) -> str:
        """
        A complete @launch line.
        """
    @property
    def name(self) -> str:
        """
        As in Candidate.language: 'cuda', 'opencl', 'maca', 'triton'.
        """
    @property
    def plain_kernel_names_only(self) -> bool:
        """
        Kernels are found by their plain extern "C" names only (MACA): a plan naming a C++ or template kernel is an invalid launch.
        """
    @property
    def plan_comment(self) -> str:
        """
        The comment marker of plan lines: '//' or '#'.
        """
    @property
    def prompt_label(self) -> str:
        """
        How prompts and messages name it: 'CUDA C++'.
        """
class WorkspaceDecl:
    """
    `// @workspace name: dtype[count]`: scratch memory of the plan.
    """
    def __init__(self) -> None:
        ...
    def __repr__(self) -> str:
        ...
    @property
    def count(self) -> str:
        """
        Element count expression.
        """
    @count.setter
    def count(self, arg0: str) -> None:
        ...
    @property
    def dtype(self) -> DType:
        """
        Element type.
        """
    @dtype.setter
    def dtype(self, arg0: DType) -> None:
        ...
    @property
    def line(self) -> int:
        """
        1-based source line.
        """
    @line.setter
    def line(self, arg0: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    @property
    def name(self) -> str:
        """
        Name the launches pass it by.
        """
    @name.setter
    def name(self, arg0: str) -> None:
        ...
class LaunchDecl:
    """
    `// @launch kernel<<<grid, block[, shared_bytes]>>>(args)`: one launch.
    """
    def __init__(self) -> None:
        ...
    def __repr__(self) -> str:
        ...
    @property
    def args(self) -> list[str]:
        """
        Tensor names, workspace names or integer expressions.
        """
    @args.setter
    def args(self, arg0: collections.abc.Sequence[str]) -> None:
        ...
    @property
    def block(self) -> typing.Annotated[list[str], "FixedSize(3)"]:
        """
        Threads (work-items) per block: three expressions.
        """
    @block.setter
    def block(self, arg0: typing.Annotated[collections.abc.Sequence[str], "FixedSize(3)"]) -> None:
        ...
    @property
    def cluster(self) -> typing.Annotated[list[str], "FixedSize(3)"]:
        """
        Thread-block cluster shape (`cluster=dim3(2, 1, 1)`): three expressions, all "" when the launch declares none.
        """
    @cluster.setter
    def cluster(self, arg0: typing.Annotated[collections.abc.Sequence[str], "FixedSize(3)"]) -> None:
        ...
    @property
    def constexprs(self) -> list[tuple[str, str]]:
        """
        Triton: the tl.constexpr parameters passed by keyword, as (name, expression) pairs.
        """
    @constexprs.setter
    def constexprs(self, arg0: collections.abc.Sequence[tuple[str, str]]) -> None:
        ...
    @property
    def grid(self) -> typing.Annotated[list[str], "FixedSize(3)"]:
        """
        Blocks (work-groups) per dimension: three expressions.
        """
    @grid.setter
    def grid(self, arg0: typing.Annotated[collections.abc.Sequence[str], "FixedSize(3)"]) -> None:
        ...
    @property
    def kernel(self) -> str:
        """
        Kernel name.
        """
    @kernel.setter
    def kernel(self, arg0: str) -> None:
        ...
    @property
    def line(self) -> int:
        """
        1-based source line.
        """
    @line.setter
    def line(self, arg0: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    @property
    def num_stages(self) -> str:
        """
        Triton: pipelining stages (expression); "" in other languages.
        """
    @num_stages.setter
    def num_stages(self, arg0: str) -> None:
        ...
    @property
    def num_warps(self) -> str:
        """
        Triton: warps per block (expression; block = 32 * num_warps); "" in other languages.
        """
    @num_warps.setter
    def num_warps(self, arg0: str) -> None:
        ...
    @property
    def shared_bytes(self) -> str:
        """
        Dynamic shared memory in bytes (expression).
        """
    @shared_bytes.setter
    def shared_bytes(self, arg0: str) -> None:
        ...
class TensorMapDecl:
    """
    `// @tensor_map name = tensor[dims] box[sizes] options`: a TMA tensor map (CUDA, sm_90 and newer); dimensions innermost first, strides in elements.
    """
    def __init__(self) -> None:
        ...
    def __repr__(self) -> str:
        ...
    @property
    def box(self) -> list[str]:
        """
        Elements one copy moves in each dimension (expressions).
        """
    @box.setter
    def box(self, arg0: collections.abc.Sequence[str]) -> None:
        ...
    @property
    def buffer(self) -> str:
        """
        The task tensor or workspace it maps.
        """
    @buffer.setter
    def buffer(self, arg0: str) -> None:
        ...
    @property
    def condition(self) -> str:
        """
        The when(...) expression: the map exists only where it is non-zero; "" always.
        """
    @condition.setter
    def condition(self, arg0: str) -> None:
        ...
    @property
    def dims(self) -> list[str]:
        """
        Extent of each dimension, innermost first (expressions).
        """
    @dims.setter
    def dims(self, arg0: collections.abc.Sequence[str]) -> None:
        ...
    @property
    def element_strides(self) -> list[str]:
        """
        Traversal step in each dimension (expressions); empty: all 1.
        """
    @element_strides.setter
    def element_strides(self, arg0: collections.abc.Sequence[str]) -> None:
        ...
    @property
    def interleave(self) -> str:
        """
        "none", "16B" or "32B".
        """
    @interleave.setter
    def interleave(self, arg0: str) -> None:
        ...
    @property
    def l2_promotion(self) -> str:
        """
        "none", "64B", "128B" or "256B".
        """
    @l2_promotion.setter
    def l2_promotion(self, arg0: str) -> None:
        ...
    @property
    def line(self) -> int:
        """
        1-based source line.
        """
    @line.setter
    def line(self, arg0: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    @property
    def name(self) -> str:
        """
        Name the launches pass it by.
        """
    @name.setter
    def name(self, arg0: str) -> None:
        ...
    @property
    def oob_fill(self) -> str:
        """
        "zero" or "nan": what elements outside read as.
        """
    @oob_fill.setter
    def oob_fill(self, arg0: str) -> None:
        ...
    @property
    def strides(self) -> list[str]:
        """
        Elements between steps of dimensions 1 and up (expressions); empty: packed.
        """
    @strides.setter
    def strides(self, arg0: collections.abc.Sequence[str]) -> None:
        ...
    @property
    def swizzle(self) -> str:
        """
        "none", "32B", "64B" or "128B".
        """
    @swizzle.setter
    def swizzle(self, arg0: str) -> None:
        ...
class TunableParam:
    """
    `// @tune NAME = value in {v1, v2, ...}`: a macro a tuner varies.
    """
    def __init__(self) -> None:
        ...
    def __repr__(self) -> str:
        ...
    @property
    def line(self) -> int:
        """
        1-based source line.
        """
    @line.setter
    def line(self, arg0: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    @property
    def name(self) -> str:
        """
        Macro name.
        """
    @name.setter
    def name(self, arg0: str) -> None:
        ...
    @property
    def value(self) -> int:
        """
        The value this candidate uses.
        """
    @value.setter
    def value(self, arg0: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    @property
    def values(self) -> list[int]:
        """
        The allowed values.
        """
    @values.setter
    def values(self, arg0: collections.abc.Sequence[typing.SupportsInt | typing.SupportsIndex]) -> None:
        ...
class LaunchPlan:
    """
    The launch plan a candidate declares in its own comment lines; see docs/candidate-format.md.
    """
    @staticmethod
    def parse(source: str, language: str = 'cuda') -> LaunchPlan:
        """
        Reads the plan from a source written in `language` (its comment marker and launch syntax: `# @launch k[grid](...)` for "triton"). Raises PlanError (with .line) on a malformed directive or when there is no @launch line.
        """
    def __init__(self) -> None:
        ...
    def __repr__(self) -> str:
        ...
    @property
    def launches(self) -> list[LaunchDecl]:
        """
        The @launch lines, in execution order.
        """
    @launches.setter
    def launches(self, arg0: collections.abc.Sequence[LaunchDecl]) -> None:
        ...
    @property
    def requirement_lines(self) -> list[int]:
        """
        The 1-based source line of each @require, in the order of requirements.
        """
    @requirement_lines.setter
    def requirement_lines(self, arg0: collections.abc.Sequence[typing.SupportsInt | typing.SupportsIndex]) -> None:
        ...
    @property
    def requirements(self) -> list[str]:
        """
        The @require expressions (each must be non-zero).
        """
    @requirements.setter
    def requirements(self, arg0: collections.abc.Sequence[str]) -> None:
        ...
    @property
    def specialize(self) -> bool:
        """
        True with @specialize: sizes become macros KS_<name>.
        """
    @specialize.setter
    def specialize(self, arg0: bool) -> None:
        ...
    @property
    def tensor_maps(self) -> list[TensorMapDecl]:
        """
        The @tensor_map declarations.
        """
    @tensor_maps.setter
    def tensor_maps(self, arg0: collections.abc.Sequence[TensorMapDecl]) -> None:
        ...
    @property
    def tunables(self) -> list[TunableParam]:
        """
        The @tune declarations.
        """
    @tunables.setter
    def tunables(self, arg0: collections.abc.Sequence[TunableParam]) -> None:
        ...
    @property
    def workspaces(self) -> list[WorkspaceDecl]:
        """
        The @workspace declarations.
        """
    @workspaces.setter
    def workspaces(self, arg0: collections.abc.Sequence[WorkspaceDecl]) -> None:
        ...
class Status:
    """
    Outcome of an evaluation.
    
    Members:
    
      ok : Compiled, correct, timed.
    
      compile_error : The compiler rejected the source.
    
      invalid_launch : The plan is malformed or does not fit the kernels or device.
    
      runtime_error : A launch or API call failed without poisoning the device.
    
      incorrect : Ran, but an output was wrong or unwritten, or an input was modified.
    
      timeout : Did not finish by the deadline.
    
      crashed : The worker died or the device context was lost.
    """
    __members__: typing.ClassVar[dict[str, Status]]
    compile_error: typing.ClassVar[Status]
    crashed: typing.ClassVar[Status]
    incorrect: typing.ClassVar[Status]
    invalid_launch: typing.ClassVar[Status]
    ok: typing.ClassVar[Status]
    runtime_error: typing.ClassVar[Status]
    timeout: typing.ClassVar[Status]
    @typing.overload
    def __eq__(self, other: Status) -> bool:
        ...
    @typing.overload
    def __eq__(self, other: typing.Any) -> bool:
        ...
    def __getstate__(self) -> int:
        ...
    def __hash__(self) -> int:
        ...
    def __index__(self) -> int:
        ...
    def __init__(self, value: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    def __int__(self) -> int:
        ...
    @typing.overload
    def __ne__(self, other: Status) -> bool:
        ...
    @typing.overload
    def __ne__(self, other: typing.Any) -> bool:
        ...
    def __repr__(self) -> str:
        ...
    def __setstate__(self, state: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    def __str__(self) -> str:
        ...
    @property
    def name(self) -> str:
        ...
    @property
    def value(self) -> int:
        ...
class KernelResources:
    """
    Resources one compiled kernel uses (-1 where unknown).
    """
    def __init__(self) -> None:
        ...
    def __repr__(self) -> str:
        ...
    @property
    def local_bytes(self) -> int:
        """
        Local memory bytes.
        """
    @local_bytes.setter
    def local_bytes(self, arg0: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    @property
    def name(self) -> str:
        """
        Kernel name.
        """
    @name.setter
    def name(self, arg0: str) -> None:
        ...
    @property
    def registers(self) -> int:
        """
        Registers per thread.
        """
    @registers.setter
    def registers(self, arg0: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    @property
    def shared_bytes(self) -> int:
        """
        Static shared memory bytes.
        """
    @shared_bytes.setter
    def shared_bytes(self, arg0: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    @property
    def spill_load_bytes(self) -> int:
        """
        Bytes of register spill loads.
        """
    @spill_load_bytes.setter
    def spill_load_bytes(self, arg0: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    @property
    def spill_store_bytes(self) -> int:
        """
        Bytes of register spill stores.
        """
    @spill_store_bytes.setter
    def spill_store_bytes(self, arg0: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    @property
    def stack_bytes(self) -> int:
        """
        Stack frame bytes.
        """
    @stack_bytes.setter
    def stack_bytes(self, arg0: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
class CompileReport:
    """
    The compile stage: success, log, target, time, kernel resources.
    """
    def __init__(self) -> None:
        ...
    def __repr__(self) -> str:
        ...
    @property
    def cached(self) -> bool:
        """
        True when served from the compile cache.
        """
    @cached.setter
    def cached(self, arg0: bool) -> None:
        ...
    @property
    def kernels(self) -> list[KernelResources]:
        """
        Resources per kernel.
        """
    @kernels.setter
    def kernels(self, arg0: collections.abc.Sequence[KernelResources]) -> None:
        ...
    @property
    def log(self) -> str:
        """
        Compiler log.
        """
    @log.setter
    def log(self, arg0: str) -> None:
        ...
    @property
    def ok(self) -> bool:
        """
        True when the source compiled.
        """
    @ok.setter
    def ok(self, arg0: bool) -> None:
        ...
    @property
    def seconds(self) -> float:
        """
        Compile wall time.
        """
    @seconds.setter
    def seconds(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    @property
    def target(self) -> str:
        """
        e.g. 'sm_90' or 'pthread-skylake (PoCL)'.
        """
    @target.setter
    def target(self, arg0: str) -> None:
        ...
class OutputCheck:
    """
    One output tensor compared against the reference in one check.
    """
    def __init__(self) -> None:
        ...
    def __repr__(self) -> str:
        ...
    @property
    def actual(self) -> float:
        """
        Candidate value at first_mismatch.
        """
    @actual.setter
    def actual(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    @property
    def expected(self) -> float:
        """
        Reference value at first_mismatch.
        """
    @expected.setter
    def expected(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    @property
    def first_mismatch(self) -> int:
        """
        Flat index of the first mismatch, -1 if none.
        """
    @first_mismatch.setter
    def first_mismatch(self, arg0: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    @property
    def max_abs_error(self) -> float:
        """
        Largest |actual - expected|.
        """
    @max_abs_error.setter
    def max_abs_error(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    @property
    def mismatches(self) -> int:
        """
        Elements outside the tolerance.
        """
    @mismatches.setter
    def mismatches(self, arg0: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    @property
    def non_finite(self) -> int:
        """
        NaN/Inf where the reference is finite.
        """
    @non_finite.setter
    def non_finite(self, arg0: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    @property
    def passed(self) -> bool:
        """
        Within tolerance everywhere.
        """
    @passed.setter
    def passed(self, arg0: bool) -> None:
        ...
    @property
    def rel_l2_error(self) -> float:
        """
        ||actual - expected|| / ||expected||.
        """
    @rel_l2_error.setter
    def rel_l2_error(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    @property
    def tensor(self) -> str:
        """
        Output tensor name.
        """
    @tensor.setter
    def tensor(self, arg0: str) -> None:
        ...
    @property
    def unwritten(self) -> int:
        """
        Elements never written (poison survived).
        """
    @unwritten.setter
    def unwritten(self, arg0: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
class CorrectnessCheck:
    """
    One correctness trial: a size configuration and an input kind.
    """
    def __init__(self) -> None:
        ...
    def __repr__(self) -> str:
        ...
    @property
    def inputs(self) -> str:
        """
        'random', 'large', 'tiny', 'mixed_scale', ...
        """
    @inputs.setter
    def inputs(self, arg0: str) -> None:
        ...
    @property
    def message(self) -> str:
        """
        Short description of the outcome.
        """
    @message.setter
    def message(self, arg0: str) -> None:
        ...
    @property
    def modified_inputs(self) -> list[str]:
        """
        Inputs the candidate wrote into.
        """
    @modified_inputs.setter
    def modified_inputs(self, arg0: collections.abc.Sequence[str]) -> None:
        ...
    @property
    def outputs(self) -> list[OutputCheck]:
        """
        Per-output comparisons.
        """
    @outputs.setter
    def outputs(self, arg0: collections.abc.Sequence[OutputCheck]) -> None:
        ...
    @property
    def passed(self) -> bool:
        """
        Every output passed and no input changed.
        """
    @passed.setter
    def passed(self, arg0: bool) -> None:
        ...
    @property
    def seed(self) -> int:
        """
        Seed of the inputs.
        """
    @seed.setter
    def seed(self, arg0: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    @property
    def sizes(self) -> str:
        """
        Name of the size configuration.
        """
    @sizes.setter
    def sizes(self, arg0: str) -> None:
        ...
class CorrectnessReport:
    """
    All correctness checks of one evaluation.
    """
    def __init__(self) -> None:
        ...
    def __repr__(self) -> str:
        ...
    @property
    def checks(self) -> list[CorrectnessCheck]:
        """
        The checks, in the order they ran.
        """
    @checks.setter
    def checks(self, arg0: collections.abc.Sequence[CorrectnessCheck]) -> None:
        ...
    @property
    def message(self) -> str:
        """
        Summary of the first failure.
        """
    @message.setter
    def message(self, arg0: str) -> None:
        ...
    @property
    def passed(self) -> bool:
        """
        Every check passed.
        """
    @passed.setter
    def passed(self, arg0: bool) -> None:
        ...
    @property
    def trials(self) -> int:
        """
        Random trials on the timing sizes.
        """
    @trials.setter
    def trials(self, arg0: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
class KernelTime:
    """
    Share of the timed launch sequence spent in one kernel.
    """
    def __init__(self) -> None:
        ...
    def __repr__(self) -> str:
        ...
    @property
    def median_ms(self) -> float:
        """
        Median milliseconds.
        """
    @median_ms.setter
    def median_ms(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    @property
    def name(self) -> str:
        """
        Kernel name.
        """
    @name.setter
    def name(self, arg0: str) -> None:
        ...
    @property
    def share(self) -> float:
        """
        Fraction of the sequence's time.
        """
    @share.setter
    def share(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
class TimingReport:
    """
    Timing of the launch sequence, with its noise.
    """
    def __init__(self) -> None:
        ...
    def __repr__(self) -> str:
        ...
    @property
    def converged(self) -> bool:
        """
        Noise reached the target within the budget.
        """
    @converged.setter
    def converged(self, arg0: bool) -> None:
        ...
    @property
    def host_ms(self) -> float:
        """
        Host-clock time per sequence around full syncs.
        """
    @host_ms.setter
    def host_ms(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    @property
    def kernels(self) -> list[KernelTime]:
        """
        Per-kernel times.
        """
    @kernels.setter
    def kernels(self, arg0: collections.abc.Sequence[KernelTime]) -> None:
        ...
    @property
    def l2_flushed(self) -> bool:
        """
        L2 flushed before each sample (cold).
        """
    @l2_flushed.setter
    def l2_flushed(self, arg0: bool) -> None:
        ...
    @property
    def mean_ms(self) -> float:
        """
        Mean milliseconds.
        """
    @mean_ms.setter
    def mean_ms(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    @property
    def median_ms(self) -> float:
        """
        Median milliseconds per sequence.
        """
    @median_ms.setter
    def median_ms(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    @property
    def min_ms(self) -> float:
        """
        Fastest sample.
        """
    @min_ms.setter
    def min_ms(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    @property
    def mode(self) -> str:
        """
        'screen' or 'strict'.
        """
    @mode.setter
    def mode(self, arg0: str) -> None:
        ...
    @property
    def noise(self) -> float:
        """
        Relative standard deviation of the samples.
        """
    @noise.setter
    def noise(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    @property
    def samples(self) -> int:
        """
        Number of samples.
        """
    @samples.setter
    def samples(self, arg0: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    @property
    def sampling(self) -> str:
        """
        How the samples were taken: 'per_sample' (the host enqueues each sample after the last finished) or 'graph_replay' (a sequence under 50 us on CUDA: the samples, each with its own eviction and event pair, recorded once as a CUDA graph and replayed back to back).
        """
    @sampling.setter
    def sampling(self, arg0: str) -> None:
        ...
    @property
    def sampling_fallback(self) -> str:
        """
        Why a sequence under the threshold was sampled per sample all the same; empty otherwise.
        """
    @sampling_fallback.setter
    def sampling_fallback(self, arg0: str) -> None:
        ...
class SpeedOfLight:
    """
    Achieved rates against the device's measured peaks.
    """
    def __init__(self) -> None:
        ...
    def __repr__(self) -> str:
        ...
    @property
    def achieved_gbps(self) -> float:
        """
        bytes / median time, GB/s.
        """
    @achieved_gbps.setter
    def achieved_gbps(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    @property
    def achieved_gflops(self) -> float:
        """
        flops / median time, GFLOP/s.
        """
    @achieved_gflops.setter
    def achieved_gflops(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    @property
    def bandwidth_fraction(self) -> float:
        """
        achieved_gbps / peak_gbps.
        """
    @bandwidth_fraction.setter
    def bandwidth_fraction(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    @property
    def bytes(self) -> float:
        """
        Fewest bytes at the timing sizes.
        """
    @bytes.setter
    def bytes(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    @property
    def compute_fraction(self) -> float:
        """
        achieved_gflops / peak_gflops.
        """
    @compute_fraction.setter
    def compute_fraction(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    @property
    def flops(self) -> float:
        """
        FLOPs of the work model at the timing sizes.
        """
    @flops.setter
    def flops(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    @property
    def fraction(self) -> float:
        """
        The larger fraction: closeness to the hardware limit.
        """
    @fraction.setter
    def fraction(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    @property
    def peak_gbps(self) -> float:
        """
        The device's bandwidth peak, GB/s.
        """
    @peak_gbps.setter
    def peak_gbps(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    @property
    def peak_gflops(self) -> float:
        """
        The device's compute peak, GFLOP/s.
        """
    @peak_gflops.setter
    def peak_gflops(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
class IntegrityReport:
    """
    Flags raised by the integrity checks.
    """
    def __init__(self) -> None:
        ...
    def __repr__(self) -> str:
        ...
    @property
    def deterministic(self) -> bool:
        """
        Identical runs gave identical outputs.
        """
    @deterministic.setter
    def deterministic(self, arg0: bool) -> None:
        ...
    @property
    def flags(self) -> list[str]:
        """
        e.g. 'speedup_above_threshold', 'remeasured', 'nondeterministic', 'host_timer_mismatch'.
        """
    @flags.setter
    def flags(self, arg0: collections.abc.Sequence[str]) -> None:
        ...
    @property
    def remeasured(self) -> bool:
        """
        A suspicious speedup was measured again.
        """
    @remeasured.setter
    def remeasured(self, arg0: bool) -> None:
        ...
    @property
    def remeasured_speedup(self) -> float:
        """
        The speedup measured again.
        """
    @remeasured_speedup.setter
    def remeasured_speedup(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    @property
    def unconfined(self) -> list[str]:
        """
        The sandbox's protections that were off while it ran ('name: why'); empty when all held.
        """
    @unconfined.setter
    def unconfined(self, arg0: collections.abc.Sequence[str]) -> None:
        ...
class Placement:
    """
    Where an evaluation ran (host, device, Ray actor) and how often it was lost with the process running it and run again (docs/distributed.md).
    """
    def __init__(self) -> None:
        ...
    def __repr__(self) -> str:
        ...
    @property
    def actor(self) -> str:
        """
        The Ray actor that ran it (RayEvaluator); empty elsewhere.
        """
    @actor.setter
    def actor(self, arg0: str) -> None:
        ...
    @property
    def device_index(self) -> int:
        """
        Index of the device within the backend; -1 when it never reached a device (rejected in the caller's process) or the evaluator does not say.
        """
    @device_index.setter
    def device_index(self, arg0: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    @property
    def host(self) -> str:
        """
        Host name of the machine whose device ran it.
        """
    @host.setter
    def host(self, arg0: str) -> None:
        ...
    @property
    def retries(self) -> int:
        """
        Times it was started on an actor that was lost before answering and started again elsewhere.
        """
    @retries.setter
    def retries(self, arg0: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
class HostKernel:
    """
    One kernel a ModelNew's forward launched (docs/kernelbench-modelnew.md, "What ran").
    """
    def __init__(self) -> None:
        ...
    def __repr__(self) -> str:
        ...
    @property
    def device_seconds(self) -> float:
        """
        Device time of those launches (on the CPU, host time of the calls).
        """
    @device_seconds.setter
    def device_seconds(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    @property
    def launches(self) -> int:
        """
        Launches in one forward.
        """
    @launches.setter
    def launches(self, arg0: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    @property
    def name(self) -> str:
        """
        The kernel's name (a CUDA kernel's, an ATen operation's on the CPU).
        """
    @name.setter
    def name(self, arg0: str) -> None:
        ...
    @property
    def origin(self) -> str:
        """
        'candidate' (one of its own kernels: load_inline, Triton) or 'library' (ATen, cuBLAS, cuDNN).
        """
    @origin.setter
    def origin(self, arg0: str) -> None:
        ...
class HostCodeReport:
    """
    What a ModelNew candidate's forward ran, its own kernels versus library ones, and whether its outputs depend on its own kernels (docs/kernelbench-modelnew.md).
    """
    def __init__(self) -> None:
        ...
    def __repr__(self) -> str:
        ...
    @property
    def ablation(self) -> str:
        """
        With its own kernels made no-ops that write noise, the outputs: 'changed', 'unchanged', or 'no_custom_calls'.
        """
    @ablation.setter
    def ablation(self, arg0: str) -> None:
        ...
    @property
    def custom_calls(self) -> int:
        """
        Calls of the candidate's own kernels in the profiled forward.
        """
    @custom_calls.setter
    def custom_calls(self, arg0: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    @property
    def custom_kernel_every_check(self) -> bool:
        """
        Whether one of its own kernels ran in every correctness check.
        """
    @custom_kernel_every_check.setter
    def custom_kernel_every_check(self, arg0: bool) -> None:
        ...
    @property
    def custom_share(self) -> float:
        """
        The candidate's own kernels' share (0..1) of the device time of the kernels listed.
        """
    @custom_share.setter
    def custom_share(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    @property
    def kernels(self) -> list[HostKernel]:
        """
        The kernels of one profiled forward (list of HostKernel).
        """
    @kernels.setter
    def kernels(self, arg0: collections.abc.Sequence[HostKernel]) -> None:
        ...
    @property
    def notes(self) -> list[str]:
        """
        What each integrity flag the runner raised saw.
        """
    @notes.setter
    def notes(self, arg0: collections.abc.Sequence[str]) -> None:
        ...
    @property
    def policy(self) -> str:
        """
        EvaluatorOptions.host_code_policy it was judged under.
        """
    @policy.setter
    def policy(self, arg0: str) -> None:
        ...
class Evaluation:
    """
    The evaluator's structured feedback on one candidate; JSON schema kernelsmith.evaluation/5 (docs/evaluation-schema.md).
    """
    @staticmethod
    def _repr_html_(evaluation: 'core.Evaluation') -> str:
        """
        An Evaluation as an HTML table: status, timing with noise, baseline, speedup, speed of light and
            the first failure.
        """
    @staticmethod
    def from_json(json_text: str, origin: str = '<evaluation>') -> Evaluation:
        """
        Parses evaluation JSON; raises ValidationError naming the field.
        """
    def __getstate__(self) -> str:
        ...
    def __init__(self) -> None:
        ...
    def __repr__(self) -> str:
        ...
    def __setstate__(self, arg0: str) -> None:
        ...
    def to_json(self) -> str:
        """
        JSON under the schema kernelsmith.evaluation/5.
        """
    def to_prompt_text(self) -> str:
        """
        Concise feedback for an LLM: status, the first failure with its numbers, timing with noise, speedup, fraction of the hardware limit, resources, flags.
        """
    @property
    def backend(self) -> str:
        """
        'cuda', 'opencl', ...
        """
    @backend.setter
    def backend(self, arg0: str) -> None:
        ...
    @property
    def baseline_errors(self) -> dict[str, str]:
        """
        Why a baseline could not be timed (torch.compile unavailable, an Inductor error), by name.
        """
    @baseline_errors.setter
    def baseline_errors(self, arg0: collections.abc.Mapping[str, str]) -> None:
        ...
    @property
    def baseline_timing(self) -> TimingReport | None:
        """
        The timing of the baseline speedup is against: the reference kernel's, or PyTorch eager's for a task with a PyTorch oracle; None when not timed.
        """
    @baseline_timing.setter
    def baseline_timing(self, arg0: TimingReport | None) -> None:
        ...
    @property
    def baselines(self) -> dict[str, TimingReport]:
        """
        Every baseline timed, by name (dict of TimingReport): 'reference' (the reference kernel), or for a task with a PyTorch oracle 'eager', 'compile' (torch.compile) and 'compile_max_autotune' (torch.compile, mode='max-autotune-no-cudagraphs').
        """
    @baselines.setter
    def baselines(self, arg0: collections.abc.Mapping[str, TimingReport]) -> None:
        ...
    @property
    def candidate_id(self) -> str:
        """
        Id of the evaluated candidate.
        """
    @candidate_id.setter
    def candidate_id(self, arg0: str) -> None:
        ...
    @property
    def compile(self) -> CompileReport:
        """
        The compile stage.
        """
    @compile.setter
    def compile(self, arg0: CompileReport) -> None:
        ...
    @property
    def correctness(self) -> CorrectnessReport | None:
        """
        Correctness checks, or None when they did not run.
        """
    @correctness.setter
    def correctness(self, arg0: CorrectnessReport | None) -> None:
        ...
    @property
    def device(self) -> str:
        """
        Device name.
        """
    @device.setter
    def device(self, arg0: str) -> None:
        ...
    @property
    def fitness(self) -> float:
        """
        Scalar for selection.
        """
    @fitness.setter
    def fitness(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    @property
    def host_code(self) -> HostCodeReport | None:
        """
        For a ModelNew candidate that passed its checks: the kernels its forward ran and their shares (HostCodeReport); None otherwise.
        """
    @host_code.setter
    def host_code(self, arg0: HostCodeReport | None) -> None:
        ...
    @property
    def integrity(self) -> IntegrityReport:
        """
        Integrity flags.
        """
    @integrity.setter
    def integrity(self, arg0: IntegrityReport) -> None:
        ...
    @property
    def message(self) -> str:
        """
        One line: what went wrong, or 'ok'.
        """
    @message.setter
    def message(self, arg0: str) -> None:
        ...
    @property
    def ok(self) -> bool:
        """
        True when status is Status.ok.
        """
    @property
    def placement(self) -> Placement:
        """
        Where it ran: host, device index, Ray actor, and how often it was run again after its actor was lost.
        """
    @placement.setter
    def placement(self, arg0: Placement) -> None:
        ...
    @property
    def sol(self) -> SpeedOfLight | None:
        """
        Speed of light, or None.
        """
    @sol.setter
    def sol(self, arg0: SpeedOfLight | None) -> None:
        ...
    @property
    def speedup(self) -> float:
        """
        Baseline median over the candidate's (> 1 is faster): over the reference kernel, or over PyTorch eager for a task with a PyTorch oracle.
        """
    @speedup.setter
    def speedup(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    @property
    def speedups(self) -> dict[str, float]:
        """
        The candidate's speedup over each baseline, by name (baseline median over the candidate's); 0 for a baseline that could not be timed.
        """
    @speedups.setter
    def speedups(self, arg0: collections.abc.Mapping[str, typing.SupportsFloat | typing.SupportsIndex]) -> None:
        ...
    @property
    def stage_seconds(self) -> dict[str, float]:
        """
        Seconds by stage: compile, reference, load, correctness, timing, baseline, oracle, overhead.
        """
    @stage_seconds.setter
    def stage_seconds(self, arg0: collections.abc.Mapping[str, typing.SupportsFloat | typing.SupportsIndex]) -> None:
        ...
    @property
    def status(self) -> Status:
        """
        The outcome.
        """
    @status.setter
    def status(self, arg0: Status) -> None:
        ...
    @property
    def task(self) -> str:
        """
        Task name.
        """
    @task.setter
    def task(self, arg0: str) -> None:
        ...
    @property
    def timing(self) -> TimingReport | None:
        """
        The candidate's timing, or None.
        """
    @timing.setter
    def timing(self, arg0: TimingReport | None) -> None:
        ...
    @property
    def wall_seconds(self) -> float:
        """
        Wall time of the whole evaluation.
        """
    @wall_seconds.setter
    def wall_seconds(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
class DeviceInfo:
    """
    A device of one backend, with what the launch plan and the speed-of-light model need to know of it.
    """
    name: str
    def __init__(self) -> None:
        ...
    def __repr__(self) -> str:
        ...
    @property
    def architecture(self) -> str:
        """
        e.g. 'sm_90' on CUDA; on OpenCL the device version string.
        """
    @architecture.setter
    def architecture(self, arg0: str) -> None:
        ...
    @property
    def backend(self) -> str:
        """
        The backend: 'cuda', 'opencl' or 'maca'.
        """
    @backend.setter
    def backend(self, arg0: str) -> None:
        ...
    @property
    def clock_mhz(self) -> int:
        """
        Core clock in MHz; 0 when unknown.
        """
    @clock_mhz.setter
    def clock_mhz(self, arg0: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    @property
    def compute_units(self) -> int:
        """
        SMs on CUDA, compute units on OpenCL
        """
    @compute_units.setter
    def compute_units(self, arg0: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    @property
    def driver_version(self) -> str:
        """
        keys the cache of measured peaks; empty when unknown
        """
    @driver_version.setter
    def driver_version(self, arg0: str) -> None:
        ...
    @property
    def global_memory_bytes(self) -> int:
        """
        Global (device) memory in bytes.
        """
    @global_memory_bytes.setter
    def global_memory_bytes(self, arg0: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    @property
    def index(self) -> int:
        """
        Index of the device within its backend.
        """
    @index.setter
    def index(self, arg0: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    @property
    def is_gpu(self) -> bool:
        """
        True for a GPU (False for e.g. PoCL's CPU device).
        """
    @is_gpu.setter
    def is_gpu(self, arg0: bool) -> None:
        ...
    @property
    def l2_bytes(self) -> int:
        """
        L2 cache size in bytes; 0 when unknown.
        """
    @l2_bytes.setter
    def l2_bytes(self, arg0: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    @property
    def max_allocation_bytes(self) -> int:
        """
        The largest single buffer in bytes (OpenCL CL_DEVICE_MAX_MEM_ALLOC_SIZE); 0 when unknown.
        """
    @max_allocation_bytes.setter
    def max_allocation_bytes(self, arg0: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    @property
    def max_threads_per_block(self) -> int:
        """
        Most threads in one block (work-group); 0 when unknown.
        """
    @max_threads_per_block.setter
    def max_threads_per_block(self, arg0: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    @property
    def platform(self) -> str:
        """
        OpenCL platform name; empty on other backends.
        """
    @platform.setter
    def platform(self, arg0: str) -> None:
        ...
    @property
    def shared_per_block(self) -> int:
        """
        Shared (local) memory a block may use by default, in bytes.
        """
    @shared_per_block.setter
    def shared_per_block(self, arg0: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    @property
    def shared_per_block_optin(self) -> int:
        """
        Shared memory a block may use after opting in (CUDA), in bytes.
        """
    @shared_per_block_optin.setter
    def shared_per_block_optin(self, arg0: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    @property
    def vendor(self) -> str:
        """
        The device vendor's name.
        """
    @vendor.setter
    def vendor(self, arg0: str) -> None:
        ...
    @property
    def warp_size(self) -> int:
        """
        Threads per warp (SIMD width); 1 when the backend does not report one.
        """
    @warp_size.setter
    def warp_size(self, arg0: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
class SandboxProtection:
    """
    One mechanism of the sandbox and whether it holds here.
    """
    def __init__(self) -> None:
        ...
    def __repr__(self) -> str:
        ...
    @property
    def detail(self) -> str:
        """
        What it does when on; why it is off when off.
        """
    @detail.setter
    def detail(self, arg0: str) -> None:
        ...
    @property
    def name(self) -> str:
        """
        'limits', 'network', 'processes', 'ipc', 'filesystem', 'user' or 'syscalls'.
        """
    @name.setter
    def name(self, arg0: str) -> None:
        ...
    @property
    def on(self) -> bool:
        """
        Whether it holds on this machine (checked from inside).
        """
    @on.setter
    def on(self, arg0: bool) -> None:
        ...
    @property
    def required(self) -> bool:
        """
        Whether EvaluatorOptions.require_sandbox needs it (all but 'user').
        """
    @required.setter
    def required(self, arg0: bool) -> None:
        ...
class SandboxStatus:
    """
    What the sandbox of untrusted code gives on this machine (docs/security.md).
    """
    def __init__(self) -> None:
        ...
    def __repr__(self) -> str:
        ...
    def complete(self) -> bool:
        """
        Every required protection holds.
        """
    def off(self) -> list[str]:
        """
        'name: why' for each protection that is off.
        """
    def summary(self) -> str:
        """
        One line for people.
        """
    @property
    def enabled(self) -> bool:
        """
        False when switched off (KERNELSMITH_SANDBOX=off) or its launcher is missing.
        """
    @enabled.setter
    def enabled(self, arg0: bool) -> None:
        ...
    @property
    def launcher(self) -> str:
        """
        The launcher program's path.
        """
    @launcher.setter
    def launcher(self, arg0: str) -> None:
        ...
    @property
    def protections(self) -> list[SandboxProtection]:
        """
        A list of SandboxProtection.
        """
    @protections.setter
    def protections(self, arg0: collections.abc.Sequence[SandboxProtection]) -> None:
        ...
    @property
    def reason(self) -> str:
        """
        Why it is disabled; empty when enabled.
        """
    @reason.setter
    def reason(self, arg0: str) -> None:
        ...
class BackendInfo:
    """
    A backend, its devices, or why it is unavailable.
    """
    name: str
    def __init__(self) -> None:
        ...
    def __repr__(self) -> str:
        ...
    @property
    def available(self) -> bool:
        """
        Usable for evaluation: the runtime loaded and at least one device answered.
        """
    @available.setter
    def available(self, arg0: bool) -> None:
        ...
    @property
    def can_compile(self) -> bool:
        """
        Compiling works even when running does not (NVRTC with no GPU driver).
        """
    @can_compile.setter
    def can_compile(self, arg0: bool) -> None:
        ...
    @property
    def details(self) -> list[str]:
        """
        Which library files were loaded, or the compiler's version, for the record.
        """
    @details.setter
    def details(self, arg0: collections.abc.Sequence[str]) -> None:
        ...
    @property
    def devices(self) -> list[DeviceInfo]:
        """
        The backend's devices, a list of DeviceInfo.
        """
    @devices.setter
    def devices(self, arg0: collections.abc.Sequence[DeviceInfo]) -> None:
        ...
    @property
    def reason(self) -> str:
        """
        Why not, when not available (e.g. 'CUDA driver libcuda.so.1 not found: ...').
        """
    @reason.setter
    def reason(self, arg0: str) -> None:
        ...
class TritonStatus:
    """
    Whether Triton candidates can be compiled here (docs/triton.md), and by what.
    """
    def __init__(self) -> None:
        ...
    def __repr__(self) -> str:
        ...
    @property
    def available(self) -> bool:
        """
        The triton package imports and its launch ABI is known.
        """
    @available.setter
    def available(self, arg0: bool) -> None:
        ...
    @property
    def helper(self) -> str:
        """
        The compile helper script (triton_compile.py).
        """
    @helper.setter
    def helper(self, arg0: str) -> None:
        ...
    @property
    def python(self) -> str:
        """
        The Python interpreter the compile helpers run.
        """
    @python.setter
    def python(self, arg0: str) -> None:
        ...
    @property
    def reason(self) -> str:
        """
        Why not, when not available, and how to install it.
        """
    @reason.setter
    def reason(self, arg0: str) -> None:
        ...
    @property
    def version(self) -> str:
        """
        The triton package's version, e.g. '3.6.0'.
        """
    @version.setter
    def version(self, arg0: str) -> None:
        ...
class TritonKernelSpec:
    """
    One specialization of a @triton.jit function that a plan launches: what the Triton front end compiles into one cubin.
    """
    def __init__(self) -> None:
        ...
    def __repr__(self) -> str:
        ...
    @property
    def aligned(self) -> list[int]:
        """
        Indices into signature taken as multiples of 16: pointers, and integers whose value is one.
        """
    @aligned.setter
    def aligned(self, arg0: collections.abc.Sequence[typing.SupportsInt | typing.SupportsIndex]) -> None:
        ...
    @property
    def configs(self) -> list[str]:
        """
        The size configurations that launch it.
        """
    @configs.setter
    def configs(self, arg0: collections.abc.Sequence[str]) -> None:
        ...
    @property
    def constexprs(self) -> list[tuple[str, int]]:
        """
        The constexpr values, (name, value) in order.
        """
    @constexprs.setter
    def constexprs(self, arg0: collections.abc.Sequence[tuple[str, typing.SupportsInt | typing.SupportsIndex]]) -> None:
        ...
    @property
    def kernel(self) -> str:
        """
        The @triton.jit function.
        """
    @kernel.setter
    def kernel(self, arg0: str) -> None:
        ...
    @property
    def line(self) -> int:
        """
        The plan line of its first launch.
        """
    @line.setter
    def line(self, arg0: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    @property
    def name(self) -> str:
        """
        The kernel and its specialization: 'add[BLOCK=1024 num_warps=4 num_stages=3 | *fp32,i32/16]'.
        """
    @name.setter
    def name(self, arg0: str) -> None:
        ...
    @property
    def num_stages(self) -> int:
        """
        Software pipelining stages.
        """
    @num_stages.setter
    def num_stages(self, arg0: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    @property
    def num_warps(self) -> int:
        """
        Warps per block: the block is 32 x num_warps threads.
        """
    @num_warps.setter
    def num_warps(self, arg0: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    @property
    def signature(self) -> list[str]:
        """
        The non-constexpr parameters' types: '*fp32', 'i32'.
        """
    @signature.setter
    def signature(self, arg0: collections.abc.Sequence[str]) -> None:
        ...
class OfflineProgram:
    """
    One program of a CUDA candidate compiled without a device (compile_candidate_offline).
    """
    def __init__(self) -> None:
        ...
    def __repr__(self) -> str:
        ...
    @property
    def config(self) -> str:
        """
        The size configuration it serves; '' when one program serves them all (no @specialize).
        """
    @config.setter
    def config(self, arg0: str) -> None:
        ...
    @property
    def report(self) -> CompileReport:
        """
        The compile report: ok, the log, each kernel's registers and spilled bytes.
        """
    @report.setter
    def report(self, arg0: CompileReport) -> None:
        ...
class EvaluatorOptions:
    """
    How the built-in evaluator checks and times candidates (docs/evaluation.md).
    """
    @typing.overload
    def __init__(self) -> None:
        ...
    @typing.overload
    def __init__(self, **kwargs) -> None:
        """
        Keyword arguments set fields, e.g. EvaluatorOptions(backend='opencl', mode='strict').
        """
    def __repr__(self) -> str:
        ...
    @property
    def adversarial_inputs(self) -> bool:
        """
        also check large, tiny, mixed-scale and constant inputs (on the timing sizes in strict mode)
        """
    @adversarial_inputs.setter
    def adversarial_inputs(self, arg0: bool) -> None:
        ...
    @property
    def backend(self) -> str:
        """
        'cuda', 'opencl' or 'auto' (the best available)
        """
    @backend.setter
    def backend(self, arg0: str) -> None:
        ...
    @property
    def baseline_session(self) -> str:
        """
        The session whose baseline timings on disk this evaluator shares; empty: one of its own, so that speedups are against baselines timed in the same run (docs/evaluation.md).
        """
    @baseline_session.setter
    def baseline_session(self, arg0: str) -> None:
        ...
    @property
    def cache_dir(self) -> str:
        """
        compile cache and device peaks; empty for $KERNELSMITH_CACHE_DIR or ~/.cache/kernelsmith
        """
    @cache_dir.setter
    def cache_dir(self, arg0: str) -> None:
        ...
    @property
    def compile_threads(self) -> int:
        """
        0: all hardware threads
        """
    @compile_threads.setter
    def compile_threads(self, arg0: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    @property
    def compile_timeout_seconds(self) -> float:
        """
        Longest a compile may take, in seconds.
        """
    @compile_timeout_seconds.setter
    def compile_timeout_seconds(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    @property
    def correctness_trials(self) -> int:
        """
        random trials on the timing sizes in strict mode (check sizes get one each)
        """
    @correctness_trials.setter
    def correctness_trials(self, arg0: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    @property
    def deadline_seconds(self) -> float:
        """
        per evaluation; past it the worker is killed and the status is 'timeout'
        """
    @deadline_seconds.setter
    def deadline_seconds(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    @property
    def device(self) -> int:
        """
        Index of the device within the backend.
        """
    @device.setter
    def device(self, arg0: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    @property
    def devices(self) -> str:
        """
        A device set, one worker process per entry: 'all', a list of indices ([0, 1]) or '0,1'; ''/None: the one device `device`. Reads back as a string. An index given twice gets two workers (docs/distributed.md).
        """
    @devices.setter
    def devices(self, arg1: typing.Any) -> None:
        ...
    @property
    def flush_l2(self) -> bool:
        """
        Overwrite a buffer of twice the L2 size (or 64 MiB) before each sample, so every sample starts with a cold cache.
        """
    @flush_l2.setter
    def flush_l2(self, arg0: bool) -> None:
        ...
    @property
    def host_code_build_seconds(self) -> float:
        """
        Added to deadline_seconds for a host-code candidate (a KernelBench ModelNew file), whose torch.utils.cpp_extension builds run inside its evaluation.
        """
    @host_code_build_seconds.setter
    def host_code_build_seconds(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    @property
    def host_code_policy(self) -> str:
        """
        What counts as a solution among ModelNew candidates: 'custom_kernel' (one of its own kernels runs on every check and the outputs depend on it, else it is flagged no_custom_kernel or custom_kernel_unused) or 'torch_only_allowed' (a PyTorch-only program is labelled torch_only).
        """
    @host_code_policy.setter
    def host_code_policy(self, arg0: str) -> None:
        ...
    @property
    def isolate(self) -> bool:
        """
        run candidates in a worker process (False runs them in this process, for debugging)
        """
    @isolate.setter
    def isolate(self, arg0: bool) -> None:
        ...
    @property
    def max_samples(self) -> int:
        """
        Timing samples taken at most.
        """
    @max_samples.setter
    def max_samples(self, arg0: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    @property
    def min_samples(self) -> int:
        """
        Timing samples taken at least in screen mode (never fewer than 3).
        """
    @min_samples.setter
    def min_samples(self, arg0: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    @property
    def mode(self) -> str:
        """
        'screen' (cheap timing) or 'strict' (final numbers)
        """
    @mode.setter
    def mode(self, arg0: str) -> None:
        ...
    @property
    def noise_target(self) -> float:
        """
        stop sampling when the noise is at most this: in strict mode the samples' relative standard deviation, in screen mode the relative standard error of their mean
        """
    @noise_target.setter
    def noise_target(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    @property
    def oracle_timeout_seconds(self) -> float:
        """
        Longest one request to the PyTorch oracle's helper may take, in seconds (the expected outputs of one case, or timing one baseline: torch.compile max-autotune compiles for minutes on a GPU); past it the helper is killed.
        """
    @oracle_timeout_seconds.setter
    def oracle_timeout_seconds(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    @property
    def require_sandbox(self) -> bool:
        """
        Refuse to evaluate (ValueError when the evaluator is made) unless every required protection of the sandbox holds here and isolate is on; else what is off is recorded in each Evaluation's integrity.unconfined.
        """
    @require_sandbox.setter
    def require_sandbox(self, arg0: bool) -> None:
        ...
    @property
    def schedule_check(self) -> bool:
        """
        strict mode runs each check's second run with block indices reversed, to expose races between blocks (a second compile per candidate)
        """
    @schedule_check.setter
    def schedule_check(self, arg0: bool) -> None:
        ...
    @property
    def screen_adversarial_timing_sizes(self) -> bool:
        """
        screen mode checks adversarial inputs on the timing sizes too (slower, as strict mode does)
        """
    @screen_adversarial_timing_sizes.setter
    def screen_adversarial_timing_sizes(self, arg0: bool) -> None:
        ...
    @property
    def screen_budget_seconds(self) -> float:
        """
        Host time of the sampling loop in screen mode, in seconds.
        """
    @screen_budget_seconds.setter
    def screen_budget_seconds(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    @property
    def screen_correctness_trials(self) -> int:
        """
        random trials on the timing sizes in screen mode (the timed runs' outputs are checked too)
        """
    @screen_correctness_trials.setter
    def screen_correctness_trials(self, arg0: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    @property
    def screen_schedule_check(self) -> bool:
        """
        screen mode runs the reversed-schedule check too
        """
    @screen_schedule_check.setter
    def screen_schedule_check(self, arg0: bool) -> None:
        ...
    @property
    def seed(self) -> int:
        """
        Seed of the random check and timing inputs.
        """
    @seed.setter
    def seed(self, arg0: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    @property
    def strict_budget_seconds(self) -> float:
        """
        Host time of the sampling loop in strict mode, in seconds.
        """
    @strict_budget_seconds.setter
    def strict_budget_seconds(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    @property
    def strict_max_samples(self) -> int:
        """
        strict mode's maximum sample count (default 100000: the time budget usually ends sampling first, and a median over the whole budget is stable from one evaluation to the next)
        """
    @strict_max_samples.setter
    def strict_max_samples(self, arg0: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    @property
    def strict_min_samples(self) -> int:
        """
        strict mode's minimum sample count (a stable median from one evaluation to the next)
        """
    @strict_min_samples.setter
    def strict_min_samples(self, arg0: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    @property
    def suspicious_speedup(self) -> float:
        """
        speedups above this are flagged and measured again in strict mode
        """
    @suspicious_speedup.setter
    def suspicious_speedup(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    @property
    def use_disk_cache(self) -> bool:
        """
        Keep compiled kernels in the disk cache under cache_dir and reuse them.
        """
    @use_disk_cache.setter
    def use_disk_cache(self, arg0: bool) -> None:
        ...
class Evaluator:
    """
    Candidate -> Evaluation. Subclass it and implement evaluate(task, candidate) -> Evaluation (and optionally evaluate_batch, confirm_batch, backend_name, device_name); create_evaluator() gives the built-in one.
    """
    def __init__(self) -> None:
        ...
    def __repr__(self) -> str:
        ...
    def backend_name(self) -> str:
        """
        The backend this evaluator measures on, for the record ('opencl', 'cuda'; 'custom' by default).
        """
    def concurrency(self) -> int:
        """
        How many candidates it evaluates at once (its devices or Ray actors; 1 by default). An evolution with mutations_in_flight = 0 keeps twice this many in flight.
        """
    def confirm_batch(self, task: Task, candidates: collections.abc.Sequence[Candidate]) -> list[Evaluation]:
        """
        Evaluates candidates again under the strict rules, to confirm those that would lead an evolution (docs/search.md, 'Confirmation'). The built-in evaluator in screen mode uses a strict twin of itself; by default (one mode) it is evaluate_batch again. Override it when your evaluator has a cheaper screening and a trustworthy strict measurement.
        """
    def device_name(self) -> str:
        """
        The device this evaluator measures on, for the record (e.g. 'NVIDIA H100 ...'; empty by default).
        """
    def evaluate(self, task: Task, candidate: Candidate) -> Evaluation:
        """
        Compiles, checks and times one candidate; its problems are the Evaluation's status, never an exception.
        """
    def evaluate_batch(self, task: Task, candidates: collections.abc.Sequence[Candidate]) -> list[Evaluation]:
        """
        Evaluates several candidates (the built-in evaluator compiles them in parallel while the device times them one at a time).
        """
class FeatureKind:
    """
    What a feature holds: a number or a label (a string).
    
    Members:
    
      number
    
      label
    """
    __members__: typing.ClassVar[dict[str, FeatureKind]]
    label: typing.ClassVar[FeatureKind]
    number: typing.ClassVar[FeatureKind]
    @typing.overload
    def __eq__(self, other: FeatureKind) -> bool:
        ...
    @typing.overload
    def __eq__(self, other: typing.Any) -> bool:
        ...
    def __getstate__(self) -> int:
        ...
    def __hash__(self) -> int:
        ...
    def __index__(self) -> int:
        ...
    def __init__(self, value: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    def __int__(self) -> int:
        ...
    @typing.overload
    def __ne__(self, other: FeatureKind) -> bool:
        ...
    @typing.overload
    def __ne__(self, other: typing.Any) -> bool:
        ...
    def __repr__(self) -> str:
        ...
    def __setstate__(self, state: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    def __str__(self) -> str:
        ...
    @property
    def name(self) -> str:
        ...
    @property
    def value(self) -> int:
        ...
class FeatureScope:
    """
    Where a feature comes from: the task, the parent's evaluation, the request.
    
    Members:
    
      task
    
      feedback
    
      request
    """
    __members__: typing.ClassVar[dict[str, FeatureScope]]
    feedback: typing.ClassVar[FeatureScope]
    request: typing.ClassVar[FeatureScope]
    task: typing.ClassVar[FeatureScope]
    @typing.overload
    def __eq__(self, other: FeatureScope) -> bool:
        ...
    @typing.overload
    def __eq__(self, other: typing.Any) -> bool:
        ...
    def __getstate__(self) -> int:
        ...
    def __hash__(self) -> int:
        ...
    def __index__(self) -> int:
        ...
    def __init__(self, value: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    def __int__(self) -> int:
        ...
    @typing.overload
    def __ne__(self, other: FeatureScope) -> bool:
        ...
    @typing.overload
    def __ne__(self, other: typing.Any) -> bool:
        ...
    def __repr__(self) -> str:
        ...
    def __setstate__(self, state: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    def __str__(self) -> str:
        ...
    @property
    def name(self) -> str:
        ...
    @property
    def value(self) -> int:
        ...
class FeatureInfo:
    """
    One row of the feature catalog (docs/memory.md, "Features").
    """
    def __repr__(self) -> str:
        ...
    @property
    def description(self) -> str:
        """
        What it measures.
        """
    @property
    def kind(self) -> FeatureKind:
        """
        FeatureKind.number or FeatureKind.label.
        """
    @property
    def logarithmic(self) -> bool:
        """
        Whether similarity compares log10(1 + value) (quantities that span decades).
        """
    @property
    def name(self) -> str:
        """
        The name predicates use.
        """
    @property
    def scale(self) -> float:
        """
        A difference of this much counts as one unit of distance.
        """
    @property
    def scope(self) -> FeatureScope:
        """
        FeatureScope: task, feedback or request.
        """
    @property
    def similarity(self) -> bool:
        """
        Whether feature_similarity compares it.
        """
    @property
    def values(self) -> list[str]:
        """
        The values a label takes (empty: any).
        """
class Predicate:
    """
    A condition over features, e.g. 'stage == "refine" and bandwidth_fraction < 0.6'; parsed and checked against the feature catalog when made (ValidationError naming the column).
    """
    def __init__(self, text: str = 'true') -> None:
        ...
    def __repr__(self) -> str:
        ...
    def evaluate(self, features: dict[str, float | str]) -> bool | None:
        """
        True, False, or None when a feature it reads is missing.
        """
    def features(self) -> list[str]:
        """
        The features it reads, in order of appearance.
        """
    def holds(self, features: dict[str, float | str]) -> bool:
        """
        True when the predicate is true for the features (a dict); false when false or unknown.
        """
    @property
    def text(self) -> str:
        """
        The predicate as written.
        """
class Skill:
    """
    An optimisation skill: its name, when it applies (a predicate over features), what to do and a short example per kernel language.
    """
    @typing.overload
    def __init__(self) -> None:
        ...
    @typing.overload
    def __init__(self, name: str, title: str = '', when: str = 'true', advice: str = '', examples: collections.abc.Mapping[str, str] = {}) -> None:
        """
        A skill; raises ValidationError for a name that is not snake_case, no advice, a bad predicate or an example in an unknown language.
        """
    def __repr__(self) -> str:
        ...
    def applies(self, features: dict[str, float | str]) -> bool:
        """
        Whether its predicate holds for the features (a dict).
        """
    def example(self, language: str) -> str:
        """
        Its example in the language, or ''.
        """
    def validate(self, origin: str = '<skill>') -> None:
        """
        Raises ValidationError naming the field.
        """
    @property
    def advice(self) -> str:
        """
        What to do, in a few sentences.
        """
    @advice.setter
    def advice(self, arg0: str) -> None:
        ...
    @property
    def examples(self) -> dict[str, str]:
        """
        A short example per kernel language, a dict language -> code.
        """
    @examples.setter
    def examples(self, arg0: collections.abc.Mapping[str, str]) -> None:
        ...
    @property
    def name(self) -> str:
        """
        snake_case, unique in a bank: what the model names in its <skill> tag.
        """
    @name.setter
    def name(self, arg0: str) -> None:
        ...
    @property
    def origin(self) -> str:
        """
        The file it was loaded from; empty for a skill made in code.
        """
    @origin.setter
    def origin(self, arg0: str) -> None:
        ...
    @property
    def title(self) -> str:
        """
        One line: what the skill does.
        """
    @title.setter
    def title(self, arg0: str) -> None:
        ...
    @property
    def when(self) -> str:
        """
        When it applies, a predicate's text (assigning parses and checks it).
        """
    @when.setter
    def when(self, arg1: str) -> None:
        ...
class SkillFile:
    """
    One file loaded into a SkillBank.
    """
    @property
    def path(self) -> str:
        """
        The file.
        """
    @property
    def skills(self) -> int:
        """
        How many skills it held.
        """
    @property
    def version(self) -> str:
        """
        The file's own version.
        """
class SkillBank:
    """
    Optimisation skills gated by predicates over measured features (docs/memory.md). SkillBank.builtin() is the bank shipped with the package; load_file adds a file of your own; add replaces a skill of the same name. `skills` is a copy: change a skill and add() it back.
    """
    @staticmethod
    def builtin() -> SkillBank:
        """
        The built-in bank (skills/skills.json shipped with the package).
        """
    @staticmethod
    def load(path: str) -> SkillBank:
        """
        A bank of one file.
        """
    def __contains__(self, arg0: str) -> bool:
        ...
    def __init__(self) -> None:
        """
        An empty bank.
        """
    def __len__(self) -> int:
        ...
    def add(self, skill: Skill) -> None:
        """
        Adds a Skill, or replaces the one of the same name where it stands.
        """
    def applicable(self, features: dict[str, float | str]) -> list[Skill]:
        """
        The skills whose predicates hold for the features (a dict), in bank order.
        """
    def find(self, name: str) -> Skill | None:
        """
        A copy of the skill of that name, or None.
        """
    def load_file(self, path: str) -> int:
        """
        Adds the skills of a file (ones named like a skill already there replace it in place); returns how many.
        """
    def load_json(self, json_text: str, origin: str = '<skills>', folder: os.PathLike | str | bytes = ...) -> int:
        """
        The same for a document in memory; `folder` resolves example files (empty: examples must be inline).
        """
    def remove(self, name: str) -> bool:
        """
        Removes a skill; False when there is none of that name.
        """
    def to_json(self) -> str:
        """
        The bank as one document of the file format, examples inline.
        """
    @property
    def files(self) -> list[SkillFile]:
        """
        The files loaded, a list of SkillFile.
        """
    @property
    def skills(self) -> list[Skill]:
        """
        The skills in order, a list of Skill (copies).
        """
class Stage:
    """
    What a step is for: make an incorrect parent correct (draft) or a correct one faster (refine).
    
    Members:
    
      draft
    
      refine
    """
    __members__: typing.ClassVar[dict[str, Stage]]
    draft: typing.ClassVar[Stage]
    refine: typing.ClassVar[Stage]
    @typing.overload
    def __eq__(self, other: Stage) -> bool:
        ...
    @typing.overload
    def __eq__(self, other: typing.Any) -> bool:
        ...
    def __getstate__(self) -> int:
        ...
    def __hash__(self) -> int:
        ...
    def __index__(self) -> int:
        ...
    def __init__(self, value: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    def __int__(self) -> int:
        ...
    @typing.overload
    def __ne__(self, other: Stage) -> bool:
        ...
    @typing.overload
    def __ne__(self, other: typing.Any) -> bool:
        ...
    def __repr__(self) -> str:
        ...
    def __setstate__(self, state: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    def __str__(self) -> str:
        ...
    @property
    def name(self) -> str:
        ...
    @property
    def value(self) -> int:
        ...
class StageValue:
    """
    What an item learned in one stage: the weighted mean of its credits.
    """
    @typing.overload
    def __init__(self) -> None:
        ...
    @typing.overload
    def __init__(self, value: typing.SupportsFloat | typing.SupportsIndex, weight: typing.SupportsFloat | typing.SupportsIndex = 1.0, credits: typing.SupportsInt | typing.SupportsIndex = 1) -> None:
        ...
    def __repr__(self) -> str:
        ...
    @property
    def credits(self) -> int:
        """
        How many credits.
        """
    @credits.setter
    def credits(self, arg0: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    @property
    def value(self) -> float:
        """
        The mean reward (meaningful once weight > 0).
        """
    @value.setter
    def value(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    @property
    def weight(self) -> float:
        """
        The credits' weights summed.
        """
    @weight.setter
    def weight(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
class ExperienceItem:
    """
    One step's experience: the task's and the parent's features, the skill and edit applied, the outcome, and the values learned per stage.
    """
    def __init__(self) -> None:
        ...
    def __repr__(self) -> str:
        ...
    def gain(self) -> float:
        """
        Child over parent speedup minus 1 when both are correct; 0 else.
        """
    def lesson(self) -> str:
        """
        The sentence a prompt shows.
        """
    def value(self, stage: Stage) -> StageValue:
        """
        The StageValue of a stage (a copy).
        """
    @property
    def compiled(self) -> bool:
        """
        Whether the child compiled.
        """
    @compiled.setter
    def compiled(self, arg0: bool) -> None:
        ...
    @property
    def correct(self) -> bool:
        """
        Whether the child is correct.
        """
    @correct.setter
    def correct(self, arg0: bool) -> None:
        ...
    @property
    def created(self) -> float:
        """
        When it was made, Unix seconds.
        """
    @created.setter
    def created(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    @property
    def draft(self) -> StageValue:
        """
        The StageValue learned in draft.
        """
    @draft.setter
    def draft(self, arg0: StageValue) -> None:
        ...
    @property
    def edit(self) -> str:
        """
        How the child was made: 'llm_diff', 'param', ...
        """
    @edit.setter
    def edit(self, arg0: str) -> None:
        ...
    @property
    def feedback(self) -> dict[str, float | str]:
        """
        The parent's features and the request's (language, device), a dict.
        """
    @feedback.setter
    def feedback(self, arg0: dict[str, float | str]) -> None:
        ...
    @property
    def id(self) -> int:
        """
        Its id in its memory (0 before it is added).
        """
    @id.setter
    def id(self, arg0: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    @property
    def note(self) -> str:
        """
        The child's evaluation message, cut to 200 characters.
        """
    @note.setter
    def note(self, arg0: str) -> None:
        ...
    @property
    def origin(self) -> str:
        """
        Where it was learned, e.g. 'run 3 of runs.db, step 17'.
        """
    @origin.setter
    def origin(self, arg0: str) -> None:
        ...
    @property
    def parent_speedup(self) -> float:
        """
        The parent's speedup (0 unless correct).
        """
    @parent_speedup.setter
    def parent_speedup(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    @property
    def refine(self) -> StageValue:
        """
        The StageValue learned in refine.
        """
    @refine.setter
    def refine(self, arg0: StageValue) -> None:
        ...
    @property
    def reward(self) -> float:
        """
        The reward of its own step (ExperienceMemory.record sets it).
        """
    @reward.setter
    def reward(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    @property
    def skill(self) -> str:
        """
        The skill applied; 'unspecified' when none was named.
        """
    @skill.setter
    def skill(self, arg0: str) -> None:
        ...
    @property
    def speedup(self) -> float:
        """
        The child's speedup (0 unless correct).
        """
    @speedup.setter
    def speedup(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    @property
    def stage(self) -> Stage:
        """
        The Stage of the step.
        """
    @stage.setter
    def stage(self, arg0: Stage) -> None:
        ...
    @property
    def status(self) -> Status:
        """
        The child's Status.
        """
    @status.setter
    def status(self, arg0: Status) -> None:
        ...
    @property
    def task(self) -> str:
        """
        The task it was learned on.
        """
    @task.setter
    def task(self, arg0: str) -> None:
        ...
    @property
    def task_features(self) -> dict[str, float | str]:
        """
        The task's features, a dict.
        """
    @task_features.setter
    def task_features(self, arg0: dict[str, float | str]) -> None:
        ...
class ExperienceQuery:
    """
    What to retrieve for: a task, a parent's feedback and the stage.
    """
    @typing.overload
    def __init__(self) -> None:
        ...
    @typing.overload
    def __init__(self, task: str = '', task_features: dict[str, float | str] = {}, feedback: dict[str, float | str] = {}, stage: Stage = ..., count: typing.SupportsInt | typing.SupportsIndex = 3, seed: typing.SupportsInt | typing.SupportsIndex = 0) -> None:
        ...
    @property
    def count(self) -> int:
        """
        How many items at most.
        """
    @count.setter
    def count(self, arg0: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    @property
    def feedback(self) -> dict[str, float | str]:
        """
        The parent's and the request's features, a dict.
        """
    @feedback.setter
    def feedback(self, arg0: dict[str, float | str]) -> None:
        ...
    @property
    def seed(self) -> int:
        """
        The retriever's random draws are a function of it (the engine passes each request's seed).
        """
    @seed.setter
    def seed(self, arg0: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    @property
    def stage(self) -> Stage:
        """
        The Stage of the step.
        """
    @stage.setter
    def stage(self, arg0: Stage) -> None:
        ...
    @property
    def task(self) -> str:
        """
        The task's name.
        """
    @task.setter
    def task(self, arg0: str) -> None:
        ...
    @property
    def task_features(self) -> dict[str, float | str]:
        """
        The task's features, a dict.
        """
    @task_features.setter
    def task_features(self, arg0: dict[str, float | str]) -> None:
        ...
class Retrieval:
    """
    Why an item was retrieved: its score, value and similarity.
    """
    @typing.overload
    def __init__(self) -> None:
        ...
    @typing.overload
    def __init__(self, item: typing.SupportsInt | typing.SupportsIndex = 0, skill: str = '', score: typing.SupportsFloat | typing.SupportsIndex = 0.0, value: typing.SupportsFloat | typing.SupportsIndex = 0.0, similarity: typing.SupportsFloat | typing.SupportsIndex = 0.0, explored: bool = False) -> None:
        ...
    @property
    def explored(self) -> bool:
        """
        Drawn at random (epsilon) rather than by score.
        """
    @explored.setter
    def explored(self, arg0: bool) -> None:
        ...
    @property
    def item(self) -> int:
        """
        The item's id.
        """
    @item.setter
    def item(self, arg0: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    @property
    def score(self) -> float:
        """
        The score it ranked by.
        """
    @score.setter
    def score(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    @property
    def similarity(self) -> float:
        """
        Of its features to the query's, in [0, 1].
        """
    @similarity.setter
    def similarity(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    @property
    def skill(self) -> str:
        """
        The item's skill: a step that applies it follows the item and credits it with its reward.
        """
    @skill.setter
    def skill(self, arg0: str) -> None:
        ...
    @property
    def value(self) -> float:
        """
        The estimated value in the query's stage: of the item's skill near the query, or of the item.
        """
    @value.setter
    def value(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
class RetrievedItem:
    """
    A retrieved ExperienceItem with its Retrieval.
    """
    @typing.overload
    def __init__(self) -> None:
        ...
    @typing.overload
    def __init__(self, item: ExperienceItem, retrieval: Retrieval = ...) -> None:
        ...
    @property
    def item(self) -> ExperienceItem:
        """
        The ExperienceItem.
        """
    @item.setter
    def item(self, arg0: ExperienceItem) -> None:
        ...
    @property
    def retrieval(self) -> Retrieval:
        """
        Why it was retrieved, a Retrieval.
        """
    @retrieval.setter
    def retrieval(self, arg0: Retrieval) -> None:
        ...
class Retriever:
    """
    Ranks experience for a query. Subclass it and implement retrieve(query, items) -> list[RetrievedItem] and name() -> str; set it with ExperienceMemory.retriever. The engine calls it from its own thread.
    """
    def __init__(self) -> None:
        ...
    def name(self) -> str:
        ...
    def retrieve(self, query: ExperienceQuery, items: collections.abc.Sequence[ExperienceItem]) -> list[RetrievedItem]:
        """
        At most query.count items to show, best first, chosen from `items` (every item of the memory).
        """
class ValueRetrieverOptions:
    """
    Settings of the built-in ValueRetriever.
    """
    def __init__(self) -> None:
        ...
    @property
    def by_skill(self) -> bool:
        """
        Rank skills (each by the similarity-weighted mean of its items' values, shown by its closest item) rather than single items.
        """
    @by_skill.setter
    def by_skill(self, arg0: bool) -> None:
        ...
    @property
    def draft_prior(self) -> float:
        """
        The value a draft estimate shrinks toward.
        """
    @draft_prior.setter
    def draft_prior(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    @property
    def epsilon(self) -> float:
        """
        Chance per slot of a uniformly drawn item instead of the best (epsilon-greedy), in [0, 1].
        """
    @epsilon.setter
    def epsilon(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    @property
    def min_similarity(self) -> float:
        """
        Items less similar than this are never retrieved.
        """
    @min_similarity.setter
    def min_similarity(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    @property
    def prior_weight(self) -> float:
        """
        How many credits the prior counts as in an estimate.
        """
    @prior_weight.setter
    def prior_weight(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    @property
    def refine_prior(self) -> float:
        """
        The value a refine estimate shrinks toward.
        """
    @refine_prior.setter
    def refine_prior(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    @property
    def seed(self) -> int:
        """
        Mixed with each query's seed.
        """
    @seed.setter
    def seed(self, arg0: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    @property
    def similarity_power(self) -> float:
        """
        How sharply a skill's estimate favours close experience: an item counts with its credits' weight times similarity**similarity_power.
        """
    @similarity_power.setter
    def similarity_power(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    @property
    def similarity_weight(self) -> float:
        """
        See value_weight.
        """
    @similarity_weight.setter
    def similarity_weight(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    @property
    def value_weight(self) -> float:
        """
        score = value_weight * estimated value + similarity_weight * similarity.
        """
    @value_weight.setter
    def value_weight(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
class ValueRetriever(Retriever):
    """
    The built-in ranking: each skill's value in the query's stage, estimated from its items near the query, plus how close its closest item is; epsilon-greedy.
    """
    @staticmethod
    def similarity(query: ExperienceQuery, item: ExperienceItem) -> float:
        """
        How alike the item's task and feedback are to the query's, in [0, 1].
        """
    def __init__(self, options: ValueRetrieverOptions = ...) -> None:
        ...
    def estimate(self, item: ExperienceItem, stage: Stage) -> float:
        """
        The item's own value in a stage, shrunk toward the stage's prior.
        """
    def skill_estimate(self, query: ExperienceQuery, skill: str, items: collections.abc.Sequence[ExperienceItem]) -> float:
        """
        A skill's value in the query's stage from the items given: their values weighted by credits and similarity**similarity_power, shrunk toward the prior.
        """
    @property
    def options(self) -> ValueRetrieverOptions:
        """
        The ValueRetrieverOptions.
        """
class ExperienceMemoryOptions:
    """
    Settings of an ExperienceMemory.
    """
    def __init__(self) -> None:
        ...
    @property
    def discount(self) -> float:
        """
        A step's reward is also credited to the items of its ancestors' steps (same stage) with weight discount**generations.
        """
    @discount.setter
    def discount(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    @property
    def horizon(self) -> int:
        """
        How many generations up are credited.
        """
    @horizon.setter
    def horizon(self, arg0: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    @property
    def max_items(self) -> int:
        """
        Most items kept (the least credited, then the oldest, go); 0: no limit.
        """
    @max_items.setter
    def max_items(self, arg0: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
class ExperienceMemory:
    """
    Experience items and their values, in the process or in a SQLite file shared by runs (docs/memory.md). Give it to Evolution.set_memory, or set EvolutionConfig.memory_path.
    """
    def __init__(self, path: str = '', options: ExperienceMemoryOptions = ...) -> None:
        """
        A memory in the process (path ''), or the one in a SQLite file, created when missing.
        """
    def __len__(self) -> int:
        ...
    def add(self, item: ExperienceItem) -> int:
        """
        Adds an item as it is, values included; returns its id.
        """
    def clear(self) -> None:
        """
        Removes every item.
        """
    def credit(self, id: typing.SupportsInt | typing.SupportsIndex, stage: Stage, reward: typing.SupportsFloat | typing.SupportsIndex, weight: typing.SupportsFloat | typing.SupportsIndex = 1.0) -> bool:
        """
        Adds one credit to an item's value in a stage; False for an unknown id.
        """
    def item(self, id: typing.SupportsInt | typing.SupportsIndex) -> ExperienceItem | None:
        """
        The item of that id, or None.
        """
    def items(self) -> list[ExperienceItem]:
        """
        Every item, by id, a list of ExperienceItem (copies).
        """
    def record(self, item: ExperienceItem, credited: collections.abc.Sequence[collections.abc.Sequence[typing.SupportsInt | typing.SupportsIndex]] = []) -> int:
        """
        Learns from one step: adds the item with its reward as its first credit, and credits the reward to the ids in credited[0] (weight 1) and credited[k] (weight discount**k, k <= horizon). Returns the new id.
        """
    def reload(self) -> None:
        """
        Reads the file again, picking up what other processes wrote.
        """
    def remove(self, id: typing.SupportsInt | typing.SupportsIndex) -> bool:
        """
        Removes an item; False when there is none.
        """
    def retrieve(self, query: ExperienceQuery) -> list[RetrievedItem]:
        """
        The retriever's answer for an ExperienceQuery, a list of RetrievedItem.
        """
    def update(self, item: ExperienceItem) -> None:
        """
        Replaces the item of the same id (an edited note, a reset value); raises NotFoundError.
        """
    @property
    def options(self) -> ExperienceMemoryOptions:
        """
        The ExperienceMemoryOptions.
        """
    @property
    def path(self) -> str:
        """
        The file; '' for a memory in the process.
        """
    @property
    def retriever(self) -> Retriever:
        """
        The Retriever that ranks items (a ValueRetriever unless set); assigning None restores the default.
        """
    @retriever.setter
    def retriever(self, arg1: Retriever) -> None:
        ...
class Program:
    """
    An evaluated candidate as the search sees it. Its id is the candidate's content id, computed once when the Program is made; the candidate is read-only from then on.
    """
    @typing.overload
    def __init__(self) -> None:
        ...
    @typing.overload
    def __init__(self, candidate: Candidate, evaluation: Evaluation, island: typing.SupportsInt | typing.SupportsIndex = 0, generation: typing.SupportsInt | typing.SupportsIndex = 0, sequence: typing.SupportsInt | typing.SupportsIndex = 0) -> None:
        """
        A program of the candidate with its evaluation, whose candidate_id is set to the program's id.
        """
    def __repr__(self) -> str:
        ...
    @property
    def candidate(self) -> Candidate:
        """
        A copy of the Candidate: language, source and lineage (read-only: its id is the program's).
        """
    @property
    def children(self) -> int:
        """
        Children proposed from it so far (damps its chance of being picked again).
        """
    @children.setter
    def children(self, arg0: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    @property
    def correct(self) -> bool:
        """
        True when the evaluation's status is ok.
        """
    @property
    def evaluation(self) -> Evaluation:
        """
        Its Evaluation (status, timing, fitness, speedup).
        """
    @evaluation.setter
    def evaluation(self, arg0: Evaluation) -> None:
        ...
    @property
    def fitness(self) -> float:
        """
        The evaluation's fitness (higher is better).
        """
    @property
    def generation(self) -> int:
        """
        Mutation steps from a root (reference or seed: 0).
        """
    @generation.setter
    def generation(self, arg0: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    @property
    def id(self) -> str:
        """
        The candidate's content id (16 hex digits), computed once when the Program was made.
        """
    @property
    def island(self) -> int:
        """
        Index of the island the program lives on.
        """
    @island.setter
    def island(self, arg0: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    @property
    def migrant(self) -> bool:
        """
        True for a copy that arrived on this island by migration; migrants are never migrated again.
        """
    @migrant.setter
    def migrant(self, arg0: bool) -> None:
        ...
    @property
    def sequence(self) -> int:
        """
        Evaluation order, from 0: the engine's clock.
        """
    @sequence.setter
    def sequence(self, arg0: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
class SelectionPolicy:
    """
    How parents are picked among an island's correct programs.
    
    Members:
    
      uniform
    
      tournament
    
      weighted
    
      power_law
    """
    __members__: typing.ClassVar[dict[str, SelectionPolicy]]
    power_law: typing.ClassVar[SelectionPolicy]
    tournament: typing.ClassVar[SelectionPolicy]
    uniform: typing.ClassVar[SelectionPolicy]
    weighted: typing.ClassVar[SelectionPolicy]
    @typing.overload
    def __eq__(self, other: SelectionPolicy) -> bool:
        ...
    @typing.overload
    def __eq__(self, other: typing.Any) -> bool:
        ...
    def __getstate__(self) -> int:
        ...
    def __hash__(self) -> int:
        ...
    def __index__(self) -> int:
        ...
    def __init__(self, value: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    def __int__(self) -> int:
        ...
    @typing.overload
    def __ne__(self, other: SelectionPolicy) -> bool:
        ...
    @typing.overload
    def __ne__(self, other: typing.Any) -> bool:
        ...
    def __repr__(self) -> str:
        ...
    def __setstate__(self, state: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    def __str__(self) -> str:
        ...
    @property
    def name(self) -> str:
        ...
    @property
    def value(self) -> int:
        ...
class SelectionMode:
    """
    How one parent was picked.
    
    Members:
    
      policy
    
      exploration
    
      exploitation
    
      repair
    """
    __members__: typing.ClassVar[dict[str, SelectionMode]]
    exploitation: typing.ClassVar[SelectionMode]
    exploration: typing.ClassVar[SelectionMode]
    policy: typing.ClassVar[SelectionMode]
    repair: typing.ClassVar[SelectionMode]
    @typing.overload
    def __eq__(self, other: SelectionMode) -> bool:
        ...
    @typing.overload
    def __eq__(self, other: typing.Any) -> bool:
        ...
    def __getstate__(self) -> int:
        ...
    def __hash__(self) -> int:
        ...
    def __index__(self) -> int:
        ...
    def __init__(self, value: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    def __int__(self) -> int:
        ...
    @typing.overload
    def __ne__(self, other: SelectionMode) -> bool:
        ...
    @typing.overload
    def __ne__(self, other: typing.Any) -> bool:
        ...
    def __repr__(self) -> str:
        ...
    def __setstate__(self, state: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    def __str__(self) -> str:
        ...
    @property
    def name(self) -> str:
        ...
    @property
    def value(self) -> int:
        ...
class SelectionConfig:
    """
    Parent selection: a policy, plus shares of exploration (uniform), exploitation (top programs) and repair (incorrect programs).
    """
    def __init__(self) -> None:
        ...
    def validate(self) -> None:
        """
        Raises ValidationError naming the field when a ratio is outside [0, 1], the ratios sum above 1, or a size is below 1.
        """
    @property
    def exploitation_ratio(self) -> float:
        """
        Share of picks, in [0, 1], uniform over the island's exploitation_top best programs (greed).
        """
    @exploitation_ratio.setter
    def exploitation_ratio(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    @property
    def exploitation_top(self) -> int:
        """
        How many of the island's best programs the exploitation picks draw from (at least 1).
        """
    @exploitation_top.setter
    def exploitation_top(self, arg0: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    @property
    def exploration_ratio(self) -> float:
        """
        Share of picks, in [0, 1], uniform over the island's correct programs (diversity).
        """
    @exploration_ratio.setter
    def exploration_ratio(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    @property
    def policy(self) -> SelectionPolicy:
        """
        How the 'policy' picks choose among the correct programs (default weighted).
        """
    @policy.setter
    def policy(self, arg0: SelectionPolicy) -> None:
        ...
    @property
    def power_law_alpha(self) -> float:
        """
        Power law: exponent over the rank, weight (rank + 1)^-alpha; 0 is uniform, larger concentrates on the best.
        """
    @power_law_alpha.setter
    def power_law_alpha(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    @property
    def repair_rate(self) -> float:
        """
        Share of picks, in [0, 1], that take an incorrect program (when the island has one) so that it gets fixed.
        """
    @repair_rate.setter
    def repair_rate(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    @property
    def sharpness(self) -> float:
        """
        Weighted: slope of the sigmoid over (fitness - median) / MAD; 0 ignores fitness (only the children count damps).
        """
    @sharpness.setter
    def sharpness(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    @property
    def tournament_size(self) -> int:
        """
        Tournament: programs drawn uniformly (with replacement); the fittest wins. At least 1.
        """
    @tournament_size.setter
    def tournament_size(self, arg0: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
class Rng:
    """
    A seeded 64-bit Mersenne Twister, for the selection and archive calls.
    """
    def __init__(self, seed: typing.SupportsInt | typing.SupportsIndex = 0) -> None:
        ...
    def next(self) -> int:
        """
        The next 64-bit random number (advances the generator).
        """
class PopulationConfig:
    """
    Islands, their capacity and the parent selection of an IslandPopulation.
    """
    def __init__(self) -> None:
        ...
    def validate(self) -> None:
        """
        Raises ValidationError naming the field.
        """
    @property
    def island_capacity(self) -> int:
        """
        Most programs kept per island; beyond it the lowest-ranked program that is not the island's best leaves (failures first). 0 keeps every program.
        """
    @island_capacity.setter
    def island_capacity(self, arg0: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    @property
    def islands(self) -> int:
        """
        Number of islands (at least 1).
        """
    @islands.setter
    def islands(self, arg0: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    @property
    def selection(self) -> SelectionConfig:
        """
        The SelectionConfig used to pick parents.
        """
    @selection.setter
    def selection(self, arg0: SelectionConfig) -> None:
        ...
class ParentChoice:
    """
    A parent pick with the SelectionMode that made it.
    """
    @property
    def mode(self) -> SelectionMode:
        """
        How it was picked: policy, exploration, exploitation or repair.
        """
    @property
    def program(self) -> Program:
        """
        The picked Program (a copy).
        """
class Population:
    """
    The live programs of each island.
    """
    def __len__(self) -> int:
        ...
    def add(self, program: Program) -> None:
        """
        Adds a program to its island.
        """
    def island_programs(self, island: typing.SupportsInt | typing.SupportsIndex) -> list[Program]:
        """
        Copies of the programs on an island.
        """
    def select_parent(self, island: typing.SupportsInt | typing.SupportsIndex, rng: Rng) -> Program:
        """
        Picks a parent on an island with the Rng; raises NotFoundError when the island has no program.
        """
    @property
    def islands(self) -> int:
        """
        Number of islands.
        """
class IslandPopulation(Population):
    """
    The built-in population: one list of programs per island, parents picked by the config's SelectionConfig.
    """
    def __init__(self, config: PopulationConfig = ...) -> None:
        ...
    def best(self, island: typing.SupportsInt | typing.SupportsIndex | None = None) -> Program | None:
        """
        The best correct program of the island, or of all islands when island is None; None when there is none.
        """
    def choose_parent(self, island: typing.SupportsInt | typing.SupportsIndex, rng: Rng, eligible: collections.abc.Callable[[Program], bool] | None = None) -> ParentChoice | None:
        """
        select_parent() with the mode that made the pick, as a ParentChoice. `eligible` (a callable Program -> bool) limits the pick to the programs it accepts; None when it accepts none of the island's programs.
        """
    def find(self, island: typing.SupportsInt | typing.SupportsIndex, id: str) -> Program | None:
        """
        The program with this id on the island, or None.
        """
    def note_child(self, island: typing.SupportsInt | typing.SupportsIndex, id: str) -> None:
        """
        Counts a child proposed from the program (no-op when it is no longer on the island).
        """
    @property
    def config(self) -> PopulationConfig:
        """
        The PopulationConfig it was made with.
        """
class FeatureDescriptor:
    """
    One axis of the MAP-Elites grid; `compute` (a callable Program -> float) replaces the built-in feature of that name.
    """
    name: str
    def __init__(self, name: str, bins: typing.SupportsInt | typing.SupportsIndex = 8, min: typing.SupportsFloat | typing.SupportsIndex = 0.0, max: typing.SupportsFloat | typing.SupportsIndex = 1.0, compute: collections.abc.Callable[[Program], typing.SupportsFloat | typing.SupportsIndex] = None) -> None:
        ...
    @property
    def bins(self) -> int:
        """
        Number of equal bins over [min, max]; values outside fall into the end bins.
        """
    @bins.setter
    def bins(self, arg0: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    @property
    def compute(self) -> collections.abc.Callable[[Program], float]:
        """
        A callable Program -> float giving the value; None uses the built-in feature of this name ('complexity', 'registers', 'shared_memory', 'log_speedup', 'kernels').
        """
    @compute.setter
    def compute(self, arg0: collections.abc.Callable[[Program], typing.SupportsFloat | typing.SupportsIndex]) -> None:
        ...
    @property
    def max(self) -> float:
        """
        Upper end of the binned range.
        """
    @max.setter
    def max(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    @property
    def min(self) -> float:
        """
        Lower end of the binned range.
        """
    @min.setter
    def min(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
class MigrationConfig:
    """
    Ring migration between islands: how often and how much.
    """
    def __init__(self) -> None:
        ...
    @property
    def interval(self) -> int:
        """
        Evaluations between migrations; 0 never migrates.
        """
    @interval.setter
    def interval(self, arg0: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    @property
    def rate(self) -> float:
        """
        Share of an island's archived non-migrant programs copied to the next island (at least one).
        """
    @rate.setter
    def rate(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
class ArchiveConfig:
    """
    Settings of a MapElitesArchive: islands, grid axes, elite set size and migration.
    """
    def __init__(self) -> None:
        ...
    def validate(self) -> None:
        """
        Raises ValidationError naming the field.
        """
    @property
    def elite_count(self) -> int:
        """
        Size of the elite set (the best correct programs over all islands).
        """
    @elite_count.setter
    def elite_count(self, arg0: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    @property
    def features(self) -> list[FeatureDescriptor]:
        """
        The grid's axes, a list of FeatureDescriptor.
        """
    @features.setter
    def features(self, arg0: collections.abc.Sequence[FeatureDescriptor]) -> None:
        ...
    @property
    def islands(self) -> int:
        """
        Number of islands, each with its own grid (at least 1).
        """
    @islands.setter
    def islands(self, arg0: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    @property
    def migration(self) -> MigrationConfig:
        """
        The MigrationConfig.
        """
    @migration.setter
    def migration(self, arg0: MigrationConfig) -> None:
        ...
class Archive:
    """
    The top-performing and the diverse programs.
    """
    def __len__(self) -> int:
        ...
    def add(self, program: Program) -> bool:
        """
        Offers a program; True when it entered a cell or the elite set.
        """
    def elites(self, count: typing.SupportsInt | typing.SupportsIndex = 10) -> list[Program]:
        """
        The best correct programs across islands, best first (at most count).
        """
    def inspirations(self, parent: Program, count: typing.SupportsInt | typing.SupportsIndex, rng: Rng) -> list[Program]:
        """
        Up to count programs to show next to the parent: the island's best, top programs, nearby cells, diverse ones.
        """
class MapElitesArchive(Archive):
    """
    The built-in archive: a MAP-Elites grid per island plus an elite set. Only correct programs enter; a cell keeps the fitter of two programs (the incumbent on ties).
    """
    def __init__(self, config: ArchiveConfig = ...) -> None:
        ...
    def cell(self, island: typing.SupportsInt | typing.SupportsIndex, bins: collections.abc.Sequence[typing.SupportsInt | typing.SupportsIndex]) -> Program | None:
        """
        The occupant of the cell with these bin indices on an island, or None.
        """
    def cell_of(self, program: Program) -> list[int]:
        """
        The program's bin index on each descriptor.
        """
    def coverage(self, island: typing.SupportsInt | typing.SupportsIndex) -> float:
        """
        Occupied cells over all cells of an island's grid, in [0, 1].
        """
    def features(self, program: Program) -> list[float]:
        """
        The program's value on each descriptor, in the config's order.
        """
    def inspirations_with_reasons(self, parent: Program, count: typing.SupportsInt | typing.SupportsIndex, rng: Rng) -> list[tuple[Program, str]]:
        """
        inspirations() as (program, reason) pairs, reason one of 'island_best', 'top', 'nearby_cell', 'diverse'.
        """
    def island_best(self, island: typing.SupportsInt | typing.SupportsIndex) -> Program | None:
        """
        The island's best archived program, or None.
        """
    def island_cells(self, island: typing.SupportsInt | typing.SupportsIndex) -> list[Program]:
        """
        The occupants of an island's cells.
        """
    def island_has_code(self, island: typing.SupportsInt | typing.SupportsIndex, program: Program) -> bool:
        """
        True when a program with this normalised code has been offered on the island.
        """
    def migrate(self) -> list[Program]:
        """
        Ring migration: each island's best share of non-migrant programs is copied to island (i + 1) mod islands unless the same code is there; returns the copies (migrant=True).
        """
    @property
    def config(self) -> ArchiveConfig:
        """
        The ArchiveConfig it was made with.
        """
class NoveltyConfig:
    """
    Near-duplicate rejection; `embedding` (a callable str -> list[float]) replaces the hashed n-gram embedding.
    """
    def __init__(self) -> None:
        ...
    def validate(self) -> None:
        """
        Raises ValidationError naming the field.
        """
    @property
    def embedding(self) -> collections.abc.Callable[[str], list[float]]:
        """
        A callable str -> list[float] replacing the hashed n-gram embedding; None for the default.
        """
    @embedding.setter
    def embedding(self, arg0: collections.abc.Callable[[str], collections.abc.Sequence[typing.SupportsFloat | typing.SupportsIndex]]) -> None:
        ...
    @property
    def embedding_dimensions(self) -> int:
        """
        Length of the hashed n-gram embedding.
        """
    @embedding_dimensions.setter
    def embedding_dimensions(self, arg0: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    @property
    def exempt_mutations(self) -> list[str]:
        """
        Mutations exempt from the near-duplicate test (default ['param']: small edits by design).
        """
    @exempt_mutations.setter
    def exempt_mutations(self, arg0: collections.abc.Sequence[str]) -> None:
        ...
    @property
    def ngram(self) -> int:
        """
        Tokens per n-gram of the hashed embedding.
        """
    @ngram.setter
    def ngram(self, arg0: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    @property
    def reject_near_duplicates(self) -> bool:
        """
        Reject candidates too similar to a program on the same island (exact duplicates are always rejected).
        """
    @reject_near_duplicates.setter
    def reject_near_duplicates(self, arg0: bool) -> None:
        ...
    @property
    def similarity_threshold(self) -> float:
        """
        Cosine similarity at or above which a candidate is a near duplicate (default 0.995).
        """
    @similarity_threshold.setter
    def similarity_threshold(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
class NoveltyVerdict:
    """
    Whether a candidate is new: novel, a duplicate or a near duplicate, and of what.
    """
    class Kind:
        """
        Members:
        
          novel
        
          duplicate
        
          near_duplicate
        """
        __members__: typing.ClassVar[dict[str, NoveltyVerdict.Kind]]
        duplicate: typing.ClassVar[NoveltyVerdict.Kind]
        near_duplicate: typing.ClassVar[NoveltyVerdict.Kind]
        novel: typing.ClassVar[NoveltyVerdict.Kind]
        @typing.overload
        def __eq__(self, other: NoveltyVerdict.Kind) -> bool:
            ...
        @typing.overload
        def __eq__(self, other: typing.Any) -> bool:
            ...
        def __getstate__(self) -> int:
            ...
        def __hash__(self) -> int:
            ...
        def __index__(self) -> int:
            ...
        def __init__(self, value: typing.SupportsInt | typing.SupportsIndex) -> None:
            ...
        def __int__(self) -> int:
            ...
        @typing.overload
        def __ne__(self, other: NoveltyVerdict.Kind) -> bool:
            ...
        @typing.overload
        def __ne__(self, other: typing.Any) -> bool:
            ...
        def __repr__(self) -> str:
            ...
        def __setstate__(self, state: typing.SupportsInt | typing.SupportsIndex) -> None:
            ...
        def __str__(self) -> str:
            ...
        @property
        def name(self) -> str:
            ...
        @property
        def value(self) -> int:
            ...
    def message(self) -> str:
        """
        A one-line explanation, e.g. 'duplicate of program 1a2b... (equal after stripping comments and whitespace)'.
        """
    @property
    def hash(self) -> str:
        """
        The candidate's normalised source hash (16 hex digits).
        """
    @property
    def kind(self) -> NoveltyVerdict.Kind:
        """
        NoveltyVerdict.Kind: novel, duplicate or near_duplicate.
        """
    @property
    def novel(self) -> bool:
        """
        True when kind is novel.
        """
    @property
    def similar_to(self) -> str:
        """
        Id of the known program it duplicates or resembles most (empty when novel and nothing is known).
        """
    @property
    def similarity(self) -> float:
        """
        Cosine similarity to that program, in [-1, 1].
        """
class NoveltyFilter:
    """
    Remembers the programs seen in a run (all islands for exact duplicates, per island for near ones). Thread-safe.
    """
    def __init__(self, config: NoveltyConfig = ...) -> None:
        ...
    def __len__(self) -> int:
        ...
    def check(self, candidate: Candidate, island: typing.SupportsInt | typing.SupportsIndex, mutation: str) -> NoveltyVerdict:
        """
        The NoveltyVerdict for a candidate proposed on an island by a mutation (exempt mutations skip the near-duplicate test).
        """
    def duplicate_of(self, candidate: Candidate) -> str:
        """
        The id of a known program equal to the candidate after normalisation, or ''.
        """
    def remember(self, candidate: Candidate, id: str, island: typing.SupportsInt | typing.SupportsIndex) -> None:
        """
        Records a program under its id (the exact hash always; the embedding on the island).
        """
class Attempt:
    """
    A recent attempt on the same parent (short-term memory).
    """
    def __init__(self) -> None:
        ...
    @property
    def child_id(self) -> str:
        """
        Id of the child the attempt produced (empty when none).
        """
    @child_id.setter
    def child_id(self, arg0: str) -> None:
        ...
    @property
    def mutation(self) -> str:
        """
        The mutation that made it, e.g. 'param', 'llm_diff'.
        """
    @mutation.setter
    def mutation(self, arg0: str) -> None:
        ...
    @property
    def skill(self) -> str:
        """
        The skill the mutator said it applied; empty when it named none.
        """
    @skill.setter
    def skill(self, arg0: str) -> None:
        ...
    @property
    def speedup(self) -> float:
        """
        The child's speedup over the baseline (0 when it failed).
        """
    @speedup.setter
    def speedup(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    @property
    def status(self) -> Status:
        """
        The child's evaluation Status.
        """
    @status.setter
    def status(self, arg0: Status) -> None:
        ...
    @property
    def summary(self) -> str:
        """
        The evaluation's one-line message.
        """
    @summary.setter
    def summary(self, arg0: str) -> None:
        ...
class Inspiration:
    """
    A program shown next to the parent, with why it was chosen.
    """
    @typing.overload
    def __init__(self) -> None:
        ...
    @typing.overload
    def __init__(self, candidate: Candidate, evaluation: Evaluation, reason: str = '') -> None:
        ...
    @property
    def candidate(self) -> Candidate:
        """
        The inspiring program's Candidate.
        """
    @candidate.setter
    def candidate(self, arg0: Candidate) -> None:
        ...
    @property
    def evaluation(self) -> Evaluation:
        """
        Its Evaluation.
        """
    @evaluation.setter
    def evaluation(self, arg0: Evaluation) -> None:
        ...
    @property
    def reason(self) -> str:
        """
        Why it was chosen: 'island_best', 'top', 'nearby_cell' or 'diverse'.
        """
    @reason.setter
    def reason(self, arg0: str) -> None:
        ...
class MutationRequest:
    """
    What a mutator gets: the parent, its feedback, inspirations, memory.
    """
    def __init__(self) -> None:
        ...
    def child_language(self) -> str:
        """
        The language of the children: `language`, else the parent's, else 'cuda'.
        """
    def is_known(self, candidate: Candidate) -> bool:
        """
        True when the candidate's code is already in the run.
        """
    @property
    def device(self) -> DeviceInfo:
        """
        The DeviceInfo the candidates will run on (for constraints and prompts).
        """
    @device.setter
    def device(self, arg0: DeviceInfo) -> None:
        ...
    @property
    def experience(self) -> list[RetrievedItem]:
        """
        Experience the engine retrieved for this request, best first, a list of RetrievedItem (docs/memory.md).
        """
    @experience.setter
    def experience(self, arg0: collections.abc.Sequence[RetrievedItem]) -> None:
        ...
    @property
    def generation(self) -> int:
        """
        The children's generation (the parent's + 1).
        """
    @generation.setter
    def generation(self, arg0: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    @property
    def inspirations(self) -> list[Inspiration]:
        """
        Programs shown next to the parent, a list of Inspiration.
        """
    @inspirations.setter
    def inspirations(self, arg0: collections.abc.Sequence[Inspiration]) -> None:
        ...
    @property
    def is_known_function(self) -> collections.abc.Callable[[Candidate], bool]:
        """
        The engine's test for code already in the run (None outside a run).
        """
    @is_known_function.setter
    def is_known_function(self, arg0: collections.abc.Callable[[Candidate], bool]) -> None:
        ...
    @property
    def island(self) -> int:
        """
        The island the parent lives on.
        """
    @island.setter
    def island(self, arg0: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    @property
    def language(self) -> str:
        """
        The kernel language the children must be written in (the engine sets the run's, which may differ from the parent's); empty: the parent's.
        """
    @language.setter
    def language(self, arg0: str) -> None:
        ...
    @property
    def other_languages(self) -> list[str]:
        """
        Languages the answer may be written in instead, each as a whole program (a run of ModelNew files also takes the backend's kernel language); the child takes its answer's language.
        """
    @other_languages.setter
    def other_languages(self, arg0: collections.abc.Sequence[str]) -> None:
        ...
    @property
    def parent(self) -> Candidate:
        """
        The Candidate to revise.
        """
    @parent.setter
    def parent(self, arg0: Candidate) -> None:
        ...
    @property
    def parent_evaluation(self) -> Evaluation | None:
        """
        The parent's Evaluation (None when not evaluated).
        """
    @parent_evaluation.setter
    def parent_evaluation(self, arg0: Evaluation | None) -> None:
        ...
    @property
    def recent_attempts(self) -> list[Attempt]:
        """
        Recent attempts on the same parent (short-term memory), a list of Attempt.
        """
    @recent_attempts.setter
    def recent_attempts(self, arg0: collections.abc.Sequence[Attempt]) -> None:
        ...
    @property
    def second_parent(self) -> Candidate | None:
        """
        A second parent Candidate for crossover, when the engine offers one, else None.
        """
    @second_parent.setter
    def second_parent(self, arg0: Candidate | None) -> None:
        ...
    @property
    def seed(self) -> int:
        """
        Seed for the mutator's random choices (differs per request).
        """
    @seed.setter
    def seed(self, arg0: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    @property
    def task(self) -> Task:
        """
        The Task being optimised (read: a copy of the run's shared task; raises ValidationError when the request has none).
        """
    @task.setter
    def task(self, arg1: Task) -> None:
        ...
class LlmAttempt:
    """
    One HTTP attempt of an LLM request (a client retries after 429, 5xx, timeouts and dropped connections); stored per step in the run store's llm_attempts table.
    """
    def __init__(self, http_status: typing.SupportsInt | typing.SupportsIndex = 0, error: str = '', seconds: typing.SupportsFloat | typing.SupportsIndex = 0.0) -> None:
        ...
    def __repr__(self) -> str:
        ...
    @property
    def error(self) -> str:
        """
        Empty when the attempt brought the answer used; else what went wrong, starting with its kind: 'HTTP 500 from URL: body', 'timeout: ...', 'connection error: ...', 'bad answer: ...', 'cancelled: ...'.
        """
    @error.setter
    def error(self, arg0: str) -> None:
        ...
    @property
    def http_status(self) -> int:
        """
        The HTTP status of the server's answer; 0 when none came (timeout, connection error, cancelled).
        """
    @http_status.setter
    def http_status(self, arg0: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    @property
    def seconds(self) -> float:
        """
        From sending the request to the answer or the failure.
        """
    @seconds.setter
    def seconds(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
class Proposal:
    """
    One proposal: a candidate, or the failure that explains why there is none, with the prompt, response, model, tokens and latency for the record.
    """
    @typing.overload
    def __init__(self) -> None:
        ...
    @typing.overload
    def __init__(self, candidate: Candidate | None = None, mutation: str = '', failure: str = '', prompt: str = '', response: str = '', model: str = '', prompt_tokens: typing.SupportsInt | typing.SupportsIndex = 0, completion_tokens: typing.SupportsInt | typing.SupportsIndex = 0, latency_seconds: typing.SupportsFloat | typing.SupportsIndex = 0.0, exhausted_ids: collections.abc.Sequence[str] = [], skill: str = '') -> None:
        ...
    @property
    def candidate(self) -> Candidate | None:
        """
        The proposed Candidate, or None when `failure` says why there is none.
        """
    @candidate.setter
    def candidate(self, arg0: Candidate | None) -> None:
        ...
    @property
    def completion_tokens(self) -> int:
        """
        Completion tokens the model reported.
        """
    @completion_tokens.setter
    def completion_tokens(self, arg0: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    @property
    def exhausted_ids(self) -> list[str]:
        """
        Ids of programs from which the mutator can propose nothing new for the rest of the run (the parent, and others it knows offer the same variants); the engine stops picking them as parents.
        """
    @exhausted_ids.setter
    def exhausted_ids(self, arg0: collections.abc.Sequence[str]) -> None:
        ...
    @property
    def failure(self) -> str:
        """
        Why there is no candidate (garbled response, diff matched nothing, client error); empty otherwise.
        """
    @failure.setter
    def failure(self, arg0: str) -> None:
        ...
    @property
    def known_candidate(self) -> Candidate | None:
        """
        The Candidate a mutator withheld because request.is_known() said the run holds it already (candidate is then None): the engine records which stored program it equals.
        """
    @known_candidate.setter
    def known_candidate(self, arg0: Candidate | None) -> None:
        ...
    @property
    def latency_seconds(self) -> float:
        """
        Wall time of the model call, in seconds.
        """
    @latency_seconds.setter
    def latency_seconds(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    @property
    def llm_attempts(self) -> list[LlmAttempt]:
        """
        The HTTP attempts of the model call, a list of LlmAttempt (empty for mutators that call no model).
        """
    @llm_attempts.setter
    def llm_attempts(self, arg0: collections.abc.Sequence[LlmAttempt]) -> None:
        ...
    @property
    def model(self) -> str:
        """
        The model that answered, as the server names it.
        """
    @model.setter
    def model(self, arg0: str) -> None:
        ...
    @property
    def mutation(self) -> str:
        """
        The mutation kind recorded in the lineage: 'param', 'llm_full', 'llm_diff', 'llm_crossover', ...
        """
    @mutation.setter
    def mutation(self, arg0: str) -> None:
        ...
    @property
    def prompt(self) -> str:
        """
        The exact messages sent to the model, as a JSON array (empty for non-LLM mutators).
        """
    @prompt.setter
    def prompt(self, arg0: str) -> None:
        ...
    @property
    def prompt_tokens(self) -> int:
        """
        Prompt tokens the model reported.
        """
    @prompt_tokens.setter
    def prompt_tokens(self, arg0: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    @property
    def response(self) -> str:
        """
        The model's answer text.
        """
    @response.setter
    def response(self, arg0: str) -> None:
        ...
    @property
    def skill(self) -> str:
        """
        The skill applied (a skill bank name, or the model's own): what the experience memory learns the value of; empty is recorded as 'unspecified'.
        """
    @skill.setter
    def skill(self, arg0: str) -> None:
        ...
class Mutator:
    """
    Proposes revised candidates. Subclass it and implement propose(request) -> list[Proposal] and name() -> str, and can_mutate(parent) -> bool when it cannot work from every program; the engine calls propose() from several threads when several mutations are in flight.
    """
    def __init__(self) -> None:
        ...
    def can_mutate(self, parent: Candidate) -> bool:
        """
        Whether the mutator can work from this parent Candidate at all; the engine picks parents only among the programs it accepts and asks once per program (default: True).
        """
    def cancel(self) -> None:
        """
        Asks the calls to propose() in flight to give up soon; the engine calls it when a run must end (stop(), wall time) and stops waiting for them 2 s later. Later calls are not affected. Default: nothing.
        """
    def name(self) -> str:
        ...
    def propose(self, request: MutationRequest) -> list[Proposal]:
        """
        Revised candidates for a request, a list of Proposal; called from several threads when several mutations are in flight.
        """
class ParamMutatorOptions:
    """
    Settings of the ParamMutator.
    """
    def __init__(self) -> None:
        ...
    @property
    def check_block_size(self) -> bool:
        """
        Also reject launches whose block exceeds the device's MAX_THREADS_PER_BLOCK (when reported), next to the @require lines.
        """
    @check_block_size.setter
    def check_block_size(self, arg0: bool) -> None:
        ...
    @property
    def enumeration_limit(self) -> int:
        """
        Spaces of at most this many combinations are enumerated when the random draws find nothing new.
        """
    @enumeration_limit.setter
    def enumeration_limit(self, arg0: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    @property
    def max_attempts(self) -> int:
        """
        Random draws tried before enumerating the whole space (when it is small).
        """
    @max_attempts.setter
    def max_attempts(self, arg0: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    @property
    def max_changes(self) -> int:
        """
        Most parameters changed by one mutation (1 or up to this many are drawn).
        """
    @max_changes.setter
    def max_changes(self, arg0: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    @property
    def neighbour_bias(self) -> float:
        """
        Chance, in [0, 1], that a changed parameter moves to a neighbouring allowed value (declaration order) rather than any other.
        """
    @neighbour_bias.setter
    def neighbour_bias(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    @property
    def proposals_per_request(self) -> int:
        """
        Candidates proposed per request.
        """
    @proposals_per_request.setter
    def proposals_per_request(self, arg0: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
class ParamMutator(Mutator):
    """
    Varies the `@tune` parameters of a candidate (in its language); needs no LLM.
    """
    @staticmethod
    def rewrite(source: str, values: collections.abc.Mapping[str, typing.SupportsInt | typing.SupportsIndex], language: str = 'cuda') -> str:
        """
        The source, written in `language`, with the `@tune` lines' current values replaced by `values` (a dict name -> int); raises ValidationError for an unknown parameter or a value outside its set.
        """
    @staticmethod
    def values_of(source: str, language: str = 'cuda') -> dict[str, int]:
        """
        The tunable parameters' current values in a source written in `language`, a dict name -> int; raises PlanError for a malformed plan.
        """
    def __init__(self, options: ParamMutatorOptions = ...) -> None:
        ...
    @property
    def options(self) -> ParamMutatorOptions:
        """
        The ParamMutatorOptions it was made with.
        """
class RunInfo:
    """
    One run in a RunStore: its configuration, task, backend, status and times.
    """
    def __init__(self) -> None:
        ...
    @property
    def backend(self) -> str:
        """
        Backend the evaluator measured on.
        """
    @backend.setter
    def backend(self, arg0: str) -> None:
        ...
    @property
    def config_json(self) -> str:
        """
        The run's EvolutionConfig as JSON (EvolutionConfig.to_json()).
        """
    @config_json.setter
    def config_json(self, arg0: str) -> None:
        ...
    @property
    def device(self) -> str:
        """
        Device the evaluator measured on.
        """
    @device.setter
    def device(self, arg0: str) -> None:
        ...
    @property
    def error(self) -> str:
        """
        The error that ended a failed run; empty otherwise.
        """
    @error.setter
    def error(self, arg0: str) -> None:
        ...
    @property
    def finished(self) -> float:
        """
        End time, Unix seconds; 0 while running or after a crash.
        """
    @finished.setter
    def finished(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    @property
    def id(self) -> int:
        """
        The run's id in the store.
        """
    @id.setter
    def id(self, arg0: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    @property
    def language(self) -> str:
        """
        Kernel language of the candidates ('cuda', 'opencl', 'triton'); the reference is in the backend's own.
        """
    @language.setter
    def language(self, arg0: str) -> None:
        ...
    @property
    def library_version(self) -> str:
        """
        kernelsmith version that made the run.
        """
    @library_version.setter
    def library_version(self, arg0: str) -> None:
        ...
    @property
    def mutator(self) -> str:
        """
        Name of the mutator ('param', 'llm', ...).
        """
    @mutator.setter
    def mutator(self, arg0: str) -> None:
        ...
    @property
    def seed(self) -> int:
        """
        The run's random seed.
        """
    @seed.setter
    def seed(self, arg0: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    @property
    def started(self) -> float:
        """
        Start time, Unix seconds.
        """
    @started.setter
    def started(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    @property
    def status(self) -> str:
        """
        'running', 'finished', 'stopped' or 'failed'.
        """
    @status.setter
    def status(self, arg0: str) -> None:
        ...
    @property
    def stop_reason(self) -> str:
        """
        Why the run stopped (an EvolutionResult.stop_reason); empty while running.
        """
    @stop_reason.setter
    def stop_reason(self, arg0: str) -> None:
        ...
    @property
    def task_json(self) -> str:
        """
        The task as self-contained JSON (Task.to_json()).
        """
    @task_json.setter
    def task_json(self, arg0: str) -> None:
        ...
    @property
    def task_name(self) -> str:
        """
        Name of the task the run optimises.
        """
    @task_name.setter
    def task_name(self, arg0: str) -> None:
        ...
    @property
    def updated(self) -> float:
        """
        Last update time, Unix seconds.
        """
    @updated.setter
    def updated(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
class ProgramRecord:
    """
    A stored program: its candidate and normalised hash.
    """
    @property
    def candidate(self) -> Candidate:
        """
        Language, source and lineage (parent ids, home island, generation, origin).
        """
    @property
    def created(self) -> float:
        """
        When it was stored, Unix seconds.
        """
    @property
    def id(self) -> str:
        """
        The program's id (its candidate id).
        """
    @property
    def normalized_hash(self) -> str:
        """
        normalized_source_hash of the program's language and source.
        """
    @property
    def run(self) -> int:
        """
        Id of the run it belongs to.
        """
class EvaluationRecord:
    """
    A stored evaluation of a program.
    """
    @property
    def created(self) -> float:
        """
        When it was stored, Unix seconds.
        """
    @property
    def evaluation(self) -> Evaluation:
        """
        The Evaluation.
        """
    @property
    def id(self) -> int:
        """
        The evaluation's id in the store.
        """
    @property
    def program_id(self) -> str:
        """
        Id of the evaluated program.
        """
    @property
    def run(self) -> int:
        """
        Id of the run it belongs to.
        """
    @property
    def sequence(self) -> int:
        """
        The engine's clock: 0 for the run's first evaluation, then 1, 2, ...
        """
class StepRecord:
    """
    One step: a proposal made from parent(s), what the mutator said, and the child it led to or why none. A step with a child and no evaluation yet is pending.
    """
    def __init__(self) -> None:
        ...
    @property
    def abandoned_by(self) -> str:
        """
        The stop reason ('wall_time', 'stopped') of a run that ended while this proposal's mutator call was still running (cancelled, not waited for); empty otherwise.
        """
    @abandoned_by.setter
    def abandoned_by(self, arg0: str) -> None:
        ...
    @property
    def child_id(self) -> str:
        """
        Id of the child; empty when the proposal produced no candidate or was rejected.
        """
    @child_id.setter
    def child_id(self, arg0: str) -> None:
        ...
    @property
    def completion_tokens(self) -> int:
        """
        Completion tokens the model reported.
        """
    @completion_tokens.setter
    def completion_tokens(self, arg0: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    @property
    def created(self) -> float:
        """
        When it was stored, Unix seconds.
        """
    @created.setter
    def created(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    @property
    def duplicate_of(self) -> str:
        """
        The program the proposal duplicates (novelty_kind 'duplicate') or resembles most ('near_duplicate'); empty otherwise.
        """
    @duplicate_of.setter
    def duplicate_of(self, arg0: str) -> None:
        ...
    @property
    def evaluate_seconds(self) -> float:
        """
        Time spent evaluating the child, in seconds.
        """
    @evaluate_seconds.setter
    def evaluate_seconds(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    @property
    def evaluation_id(self) -> int | None:
        """
        Id of the child's evaluation, or None while it is pending or when there is none.
        """
    @evaluation_id.setter
    def evaluation_id(self, arg0: typing.SupportsInt | typing.SupportsIndex | None) -> None:
        ...
    @property
    def failure(self) -> str:
        """
        Why there is no child (mutator failure, duplicate, near duplicate, ...); empty otherwise.
        """
    @failure.setter
    def failure(self, arg0: str) -> None:
        ...
    @property
    def id(self) -> int:
        """
        The step's id in the store.
        """
    @id.setter
    def id(self, arg0: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    @property
    def inspiration_ids(self) -> list[str]:
        """
        Ids of the programs shown as inspirations.
        """
    @inspiration_ids.setter
    def inspiration_ids(self, arg0: collections.abc.Sequence[str]) -> None:
        ...
    @property
    def island(self) -> int:
        """
        The island the parent was picked on.
        """
    @island.setter
    def island(self, arg0: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    @property
    def latency_seconds(self) -> float:
        """
        Wall time of the model call, in seconds.
        """
    @latency_seconds.setter
    def latency_seconds(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    @property
    def llm_attempts(self) -> list[LlmAttempt]:
        """
        The HTTP attempts of the model call, in order, a list of LlmAttempt.
        """
    @llm_attempts.setter
    def llm_attempts(self, arg0: collections.abc.Sequence[LlmAttempt]) -> None:
        ...
    @property
    def model(self) -> str:
        """
        The model that answered.
        """
    @model.setter
    def model(self, arg0: str) -> None:
        ...
    @property
    def mutation(self) -> str:
        """
        The mutation: 'reference', 'seed', 'param', 'llm_diff', ...
        """
    @mutation.setter
    def mutation(self, arg0: str) -> None:
        ...
    @property
    def novelty_kind(self) -> str:
        """
        How the novelty filter judged the proposal: 'novel', 'duplicate' or 'near_duplicate'; empty when no program reached the filter.
        """
    @novelty_kind.setter
    def novelty_kind(self, arg0: str) -> None:
        ...
    @property
    def parent_ids(self) -> list[str]:
        """
        Ids of the parent(s) (two for crossover).
        """
    @parent_ids.setter
    def parent_ids(self, arg0: collections.abc.Sequence[str]) -> None:
        ...
    @property
    def pending(self) -> bool:
        """
        True when the step has a child with neither an evaluation nor a failure (resume evaluates it).
        """
    @property
    def prompt(self) -> str:
        """
        The exact messages sent to the model, as a JSON array.
        """
    @prompt.setter
    def prompt(self, arg0: str) -> None:
        ...
    @property
    def prompt_tokens(self) -> int:
        """
        Prompt tokens the model reported.
        """
    @prompt_tokens.setter
    def prompt_tokens(self, arg0: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    @property
    def propose_seconds(self) -> float:
        """
        Time spent in Mutator.propose, in seconds.
        """
    @propose_seconds.setter
    def propose_seconds(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    @property
    def response(self) -> str:
        """
        The model's answer text.
        """
    @response.setter
    def response(self, arg0: str) -> None:
        ...
    @property
    def retrieved(self) -> list[Retrieval]:
        """
        The experience items retrieved into the step's request, best first, a list of Retrieval.
        """
    @retrieved.setter
    def retrieved(self, arg0: collections.abc.Sequence[Retrieval]) -> None:
        ...
    @property
    def run(self) -> int:
        """
        Id of the run it belongs to.
        """
    @run.setter
    def run(self, arg0: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    @property
    def selection(self) -> str:
        """
        How the parent was picked: 'policy', 'exploration', 'exploitation', 'repair' or 'seed'.
        """
    @selection.setter
    def selection(self, arg0: str) -> None:
        ...
    @property
    def skill(self) -> str:
        """
        The skill the mutator said it applied; empty when it named none.
        """
    @skill.setter
    def skill(self, arg0: str) -> None:
        ...
class ExperienceRecord:
    """
    What one step taught the experience memory, as the run recorded it (its item, without the values learned later).
    """
    @property
    def id(self) -> int:
        """
        The record's id in the store.
        """
    @property
    def item(self) -> ExperienceItem:
        """
        The ExperienceItem it added to the memory (item.id is its id there).
        """
    @property
    def run(self) -> int:
        """
        Id of the run it belongs to.
        """
    @property
    def step(self) -> int:
        """
        Id of the step.
        """
class MigrationRecord:
    """
    A program copied to another island by migration.
    """
    @property
    def created(self) -> float:
        """
        When it was stored, Unix seconds.
        """
    @property
    def from_island(self) -> int:
        """
        The island it left.
        """
    @property
    def id(self) -> int:
        """
        The migration's id in the store.
        """
    @property
    def program_id(self) -> str:
        """
        Id of the migrated program.
        """
    @property
    def run(self) -> int:
        """
        Id of the run it belongs to.
        """
    @property
    def sequence(self) -> int:
        """
        Evaluations done when it happened (resume replays it at this point).
        """
    @property
    def to_island(self) -> int:
        """
        The island the copy went to.
        """
class IslandRecord:
    """
    The latest summary of one island of a run.
    """
    @property
    def best_fitness(self) -> float:
        """
        That program's fitness.
        """
    @property
    def best_program_id(self) -> str:
        """
        Id of the island's best correct program (empty when none).
        """
    @property
    def best_speedup(self) -> float:
        """
        That program's speedup over the baseline.
        """
    @property
    def island(self) -> int:
        """
        The island's index.
        """
    @property
    def programs(self) -> int:
        """
        Programs living on the island.
        """
    @property
    def run(self) -> int:
        """
        Id of the run it belongs to.
        """
    @property
    def updated(self) -> float:
        """
        When it was last written, Unix seconds.
        """
class HistoryPoint:
    """
    One point of a run's history: an evaluation and the best speedup so far.
    """
    @property
    def best_speedup(self) -> float:
        """
        The best speedup of the run up to and including this evaluation.
        """
    @property
    def program_id(self) -> str:
        """
        Id of the evaluated program.
        """
    @property
    def sequence(self) -> int:
        """
        The evaluation's place in the run (0, 1, 2, ...).
        """
    @property
    def speedup(self) -> float:
        """
        The program's speedup over the baseline (0 when it failed).
        """
    @property
    def status(self) -> Status:
        """
        The evaluation's Status.
        """
class RunStore:
    """
    A run store (SQLite, WAL). Open read-only to inspect a run, also while it runs; plain sqlite3 or pandas read the same file (docs/run-store.md).
    """
    def __init__(self, path: str, read_only: bool = False) -> None:
        ...
    def add_evaluation(self, run: typing.SupportsInt | typing.SupportsIndex, program_id: str, sequence: typing.SupportsInt | typing.SupportsIndex, evaluation: Evaluation, step_id: typing.SupportsInt | typing.SupportsIndex | None = None, evaluate_seconds: typing.SupportsFloat | typing.SupportsIndex = 0.0) -> int:
        """
        Inserts an evaluation of a stored program and links the step that produced it (when given); returns the evaluation id. Raises StoreError for an unknown or already evaluated program.
        """
    def add_experience(self, run: typing.SupportsInt | typing.SupportsIndex, step: typing.SupportsInt | typing.SupportsIndex, item: ExperienceItem) -> int:
        """
        Records what a step taught the experience memory (an ExperienceItem); returns the record's id.
        """
    def add_program(self, run: typing.SupportsInt | typing.SupportsIndex, id: str, candidate: Candidate, normalized_hash: str) -> None:
        """
        Inserts a program under `id` with its lineage; raises StoreError when the id exists in the run.
        """
    def add_step(self, step: StepRecord) -> int:
        """
        Inserts a StepRecord; returns its id.
        """
    def best(self, run: typing.SupportsInt | typing.SupportsIndex, count: typing.SupportsInt | typing.SupportsIndex = 10) -> list[EvaluationRecord]:
        """
        The best correct evaluations (by fitness, then sequence), best first, at most count.
        """
    def create_run(self, info: RunInfo) -> int:
        """
        Inserts a run (status 'running') from a RunInfo; returns its id.
        """
    def evaluation_count(self, run: typing.SupportsInt | typing.SupportsIndex) -> int:
        """
        Number of evaluations stored for the run.
        """
    def evaluation_of(self, run: typing.SupportsInt | typing.SupportsIndex, program_id: str) -> EvaluationRecord | None:
        """
        The EvaluationRecord of a program, or None when it is not evaluated.
        """
    def evaluations(self, run: typing.SupportsInt | typing.SupportsIndex) -> list[EvaluationRecord]:
        """
        The run's evaluations in evaluation order, a list of EvaluationRecord.
        """
    def experience(self, run: typing.SupportsInt | typing.SupportsIndex) -> list[ExperienceRecord]:
        """
        The run's ExperienceRecords in the order they were made (none in stores older than version 4).
        """
    def history(self, run: typing.SupportsInt | typing.SupportsIndex) -> list[HistoryPoint]:
        """
        One HistoryPoint per evaluation, in order.
        """
    def islands(self, run: typing.SupportsInt | typing.SupportsIndex) -> list[IslandRecord]:
        """
        The run's island summaries, a list of IslandRecord.
        """
    def latest_run(self, task_name: str = '') -> RunInfo | None:
        """
        The most recent run (of the task, when named), or None.
        """
    def lineage(self, run: typing.SupportsInt | typing.SupportsIndex, program_id: str) -> list[ProgramRecord]:
        """
        The program, its first parent, that one's first parent, ... back to a root, as ProgramRecords.
        """
    def migrations(self, run: typing.SupportsInt | typing.SupportsIndex) -> list[MigrationRecord]:
        """
        The run's migrations, a list of MigrationRecord.
        """
    def pending_steps(self, run: typing.SupportsInt | typing.SupportsIndex) -> list[StepRecord]:
        """
        Steps with a child and neither an evaluation nor a failure.
        """
    def program(self, run: typing.SupportsInt | typing.SupportsIndex, id: str) -> ProgramRecord | None:
        """
        One program of the run as a ProgramRecord, or None.
        """
    def programs(self, run: typing.SupportsInt | typing.SupportsIndex) -> list[ProgramRecord]:
        """
        The run's programs, a list of ProgramRecord.
        """
    def run(self, run: typing.SupportsInt | typing.SupportsIndex) -> RunInfo:
        """
        The RunInfo of a run; raises NotFoundError for an unknown id.
        """
    def runs(self) -> list[RunInfo]:
        """
        Every run in the store, a list of RunInfo.
        """
    def screenings(self, run: typing.SupportsInt | typing.SupportsIndex) -> list[EvaluationRecord]:
        """
        The screen-mode evaluations that strict confirmations superseded, in sequence order, a list of EvaluationRecord (the program's standing is its record in evaluations()).
        """
    def set_run_status(self, run: typing.SupportsInt | typing.SupportsIndex, status: str, stop_reason: str = '', error: str = '') -> None:
        """
        Sets a run's status ('running', 'finished', 'stopped', 'failed') with the stop reason and error; the last three also set `finished`.
        """
    def steps(self, run: typing.SupportsInt | typing.SupportsIndex) -> list[StepRecord]:
        """
        The run's steps in insertion order, a list of StepRecord.
        """
    @property
    def path(self) -> str:
        """
        The file's path (':memory:' for an in-memory store).
        """
    @property
    def read_only(self) -> bool:
        """
        True when opened read-only.
        """
    @property
    def schema_version(self) -> int:
        """
        The schema version of the file: RUN_STORE_SCHEMA_VERSION, or 1 for a version-1 file opened read-only (opened for writing, it is upgraded).
        """
class LlmPrice:
    """
    What a language model charges per 1,000 tokens (docs/llm.md, "Budgets").
    """
    @typing.overload
    def __init__(self) -> None:
        ...
    @typing.overload
    def __init__(self, prompt_per_1k: typing.SupportsFloat | typing.SupportsIndex, completion_per_1k: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    def __repr__(self) -> str:
        ...
    @property
    def completion_per_1k(self) -> float:
        """
        Price of 1,000 completion tokens.
        """
    @completion_per_1k.setter
    def completion_per_1k(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    @property
    def prompt_per_1k(self) -> float:
        """
        Price of 1,000 prompt tokens.
        """
    @prompt_per_1k.setter
    def prompt_per_1k(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
class LlmSpend:
    """
    What a run has spent on a language model (docs/llm.md, "Budgets").
    """
    def __init__(self) -> None:
        ...
    def __repr__(self) -> str:
        ...
    @property
    def calls(self) -> int:
        """
        Steps whose proposal came from a model call.
        """
    @property
    def completion_tokens(self) -> int:
        """
        Completion tokens, as reported.
        """
    @property
    def cost(self) -> float:
        """
        Their cost at EvolutionConfig.llm_prices.
        """
    @property
    def prompt_tokens(self) -> int:
        """
        Prompt tokens, as the endpoint reported them.
        """
    @property
    def tokens(self) -> int:
        """
        Prompt plus completion tokens.
        """
class EvolutionConfig:
    """
    Settings of an evolution run (docs/search.md).
    """
    @staticmethod
    def from_json(json_text: str) -> EvolutionConfig:
        """
        Reads what to_json() writes; missing fields keep their defaults. Raises ValidationError.
        """
    def __init__(self) -> None:
        ...
    def llm_cost(self, model: str, prompt_tokens: typing.SupportsInt | typing.SupportsIndex, completion_tokens: typing.SupportsInt | typing.SupportsIndex) -> float:
        """
        The cost of one model call at llm_prices (the model's, else '*', else 0).
        """
    def to_json(self) -> str:
        """
        The settings as JSON (custom feature and embedding functions by name only).
        """
    def validate(self) -> None:
        """
        Raises ValidationError naming the field.
        """
    @property
    def budget(self) -> int:
        """
        Evaluations in the run (reference and seeds included; a resumed run counts its earlier ones). Required, at least 1.
        """
    @budget.setter
    def budget(self, arg0: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    @property
    def crossover_rate(self) -> float:
        """
        Chance, in [0, 1], that a request carries a second parent for crossover.
        """
    @crossover_rate.setter
    def crossover_rate(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    @property
    def db_path(self) -> str:
        """
        SQLite file of the run; ':memory:' keeps it in memory (nothing survives the process).
        """
    @db_path.setter
    def db_path(self, arg0: str) -> None:
        ...
    @property
    def device(self) -> DeviceInfo:
        """
        DeviceInfo for the mutators' constraints; an empty backend is looked up from devices() by the evaluator's names.
        """
    @device.setter
    def device(self, arg0: DeviceInfo) -> None:
        ...
    @property
    def elite_count(self) -> int:
        """
        Size of the archive's elite set (best correct programs over all islands).
        """
    @elite_count.setter
    def elite_count(self, arg0: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    @property
    def experience(self) -> int:
        """
        Experience items retrieved into each mutation request (docs/memory.md); 0 retrieves none (the run still records what each step taught).
        """
    @experience.setter
    def experience(self, arg0: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    @property
    def features(self) -> list[FeatureDescriptor]:
        """
        The MAP-Elites axes, a list of FeatureDescriptor.
        """
    @features.setter
    def features(self, arg0: collections.abc.Sequence[FeatureDescriptor]) -> None:
        ...
    @property
    def inspirations(self) -> int:
        """
        Programs shown next to the parent in each request.
        """
    @inspirations.setter
    def inspirations(self, arg0: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    @property
    def island_capacity(self) -> int:
        """
        Most programs kept per island; 0 keeps every program.
        """
    @island_capacity.setter
    def island_capacity(self, arg0: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    @property
    def islands(self) -> int:
        """
        Number of islands (independent populations joined by migration).
        """
    @islands.setter
    def islands(self, arg0: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    @property
    def language(self) -> str:
        """
        Kernel language of the candidates the mutators write; empty: the evaluator's backend's ('cuda', 'opencl'), else the task's first. 'triton' on the cuda backend evolves Triton candidates from the task's Triton seed, with the CUDA reference as the baseline; a language of another backend is a ValidationError at run().
        """
    @language.setter
    def language(self, arg0: str) -> None:
        ...
    @property
    def llm_prices(self) -> dict[str, LlmPrice]:
        """
        Prices per 1,000 tokens by model name, a dict of LlmPrice; '*' prices any model not named.
        """
    @llm_prices.setter
    def llm_prices(self, arg0: collections.abc.Mapping[str, LlmPrice]) -> None:
        ...
    @property
    def max_failed_proposals(self) -> int:
        """
        Stop after this many proposals in a row yield nothing to evaluate (failures, duplicates); 0 disables the rule.
        """
    @max_failed_proposals.setter
    def max_failed_proposals(self, arg0: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    @property
    def max_llm_calls(self) -> int:
        """
        Stop (resumably, 'llm_budget') once the run made this many model calls; 0: no cap.
        """
    @max_llm_calls.setter
    def max_llm_calls(self, arg0: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    @property
    def max_llm_cost(self) -> float:
        """
        Stop (resumably, 'llm_budget') once the model calls cost this much at llm_prices; 0: no cap.
        """
    @max_llm_cost.setter
    def max_llm_cost(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    @property
    def max_llm_tokens(self) -> int:
        """
        Stop (resumably, 'llm_budget') once the model calls used this many tokens (prompt plus completion, as the endpoint reported them); 0: no cap.
        """
    @max_llm_tokens.setter
    def max_llm_tokens(self, arg0: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    @property
    def memory(self) -> int:
        """
        Recent attempts on the same parent passed as short-term memory.
        """
    @memory.setter
    def memory(self, arg0: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    @property
    def memory_path(self) -> str:
        """
        SQLite file of an experience memory shared across runs and tasks (created when missing); empty: the run's memory lives in the process. Evolution.memory overrides it.
        """
    @memory_path.setter
    def memory_path(self, arg0: str) -> None:
        ...
    @property
    def migration(self) -> MigrationConfig:
        """
        Migration between islands, a MigrationConfig.
        """
    @migration.setter
    def migration(self, arg0: MigrationConfig) -> None:
        ...
    @property
    def mutations_in_flight(self) -> int:
        """
        Mutations proposed concurrently (threads calling Mutator.propose); 1 makes a seeded run reproducible with deterministic parts; 0 keeps twice the evaluator's concurrency() in flight (one candidate waiting per device or Ray actor).
        """
    @mutations_in_flight.setter
    def mutations_in_flight(self, arg0: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    @property
    def novelty(self) -> NoveltyConfig:
        """
        Duplicate and near-duplicate rejection, a NoveltyConfig.
        """
    @novelty.setter
    def novelty(self, arg0: NoveltyConfig) -> None:
        ...
    @property
    def resume(self) -> bool:
        """
        Continue the latest run of the task in db_path (a fresh run when there is none).
        """
    @resume.setter
    def resume(self, arg0: bool) -> None:
        ...
    @property
    def run_file(self) -> str:
        """
        The run file describing the run as its caller started it, a JSON object (`kernelsmith evolve --config` stores its effective settings; docs/cli.md#run-files); empty: none. Stored with the run (RunInfo.config_json); the engine never reads it.
        """
    @run_file.setter
    def run_file(self, arg0: str) -> None:
        ...
    @property
    def seed(self) -> int:
        """
        Random seed of the run.
        """
    @seed.setter
    def seed(self, arg0: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    @property
    def selection(self) -> SelectionConfig:
        """
        Parent selection, a SelectionConfig.
        """
    @selection.setter
    def selection(self, arg0: SelectionConfig) -> None:
        ...
    @property
    def stagnation(self) -> int:
        """
        Stop after this many evaluations in a row without a better best program; 0 disables the rule.
        """
    @stagnation.setter
    def stagnation(self, arg0: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    @property
    def target_speedup(self) -> float:
        """
        Stop once the best speedup reaches this; 0 disables the rule.
        """
    @target_speedup.setter
    def target_speedup(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    @property
    def wall_seconds(self) -> float:
        """
        Stop after this much wall time, in seconds; 0 disables the rule.
        """
    @wall_seconds.setter
    def wall_seconds(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
class Progress:
    """
    What the engine reports after each step.
    """
    @property
    def best_fitness(self) -> float:
        """
        Fitness of the best program so far.
        """
    @property
    def best_program_id(self) -> str:
        """
        Id of the best program so far.
        """
    @property
    def best_speedup(self) -> float:
        """
        Speedup over the baseline of the best program so far.
        """
    @property
    def budget(self) -> int:
        """
        The run's evaluation budget.
        """
    @property
    def confirmation(self) -> str:
        """
        'confirmed' or 'refuted' when the child would have led the run and was evaluated again in strict mode first (its standing is that evaluation now); 'unconfirmed' when a deadline (stop(), the wall time) came first (it keeps its screening and does not lead); '' when it needed no confirmation.
        """
    @property
    def duplicates(self) -> int:
        """
        Exact and near duplicates rejected so far.
        """
    @property
    def elapsed_seconds(self) -> float:
        """
        Wall time since run() started, in seconds.
        """
    @property
    def evaluations(self) -> int:
        """
        Evaluations in the run so far.
        """
    @property
    def failed_proposals(self) -> int:
        """
        Proposals that yielded no candidate so far.
        """
    @property
    def improved(self) -> bool:
        """
        True when this step found a new best program (always a confirmed one).
        """
    @property
    def island(self) -> int:
        """
        The island of the step.
        """
    @property
    def llm_spend(self) -> LlmSpend:
        """
        What the run has spent on a language model so far (LlmSpend), earlier sessions included.
        """
    @property
    def message(self) -> str:
        """
        The evaluation's message, or why there was no candidate.
        """
    @property
    def mutation(self) -> str:
        """
        The step's mutation ('param', 'llm_diff', ...).
        """
    @property
    def program_id(self) -> str:
        """
        Id of the step's child; empty for a proposal that yielded no candidate.
        """
    @property
    def run_id(self) -> int:
        """
        The run's id in the store.
        """
    @property
    def speedup(self) -> float:
        """
        The child's speedup over the baseline.
        """
    @property
    def status(self) -> Status:
        """
        The child's evaluation Status.
        """
    @property
    def steps(self) -> int:
        """
        Steps taken in this session.
        """
class EvolutionResult:
    """
    What run() returns: why it stopped, the best program and counts and times.
    """
    @property
    def abandoned(self) -> int:
        """
        Proposals whose mutator call was still running when stop() or the wall time ended the run (cancelled; stored as steps with abandoned_by).
        """
    @property
    def best(self) -> Program | None:
        """
        The best confirmed Program (never one whose standing is a screening or a doubt-flagged evaluation), or None.
        """
    @property
    def best_speedup(self) -> float:
        """
        Its speedup over the baseline.
        """
    @property
    def confirmations(self) -> int:
        """
        Strict confirmations of would-be leaders in this call to run() (not counted in the budget).
        """
    @property
    def crashed_on_resume(self) -> int:
        """
        Pending children recorded crashed instead of evaluated again: their evaluation had started in an earlier session and never finished.
        """
    @property
    def db_path(self) -> str:
        """
        The run store's file.
        """
    @property
    def duplicates(self) -> int:
        """
        Exact duplicates rejected.
        """
    @property
    def engine_share(self) -> float:
        """
        The engine's own share of the wall time: 1 - (evaluator + mutator) / wall (meaningful with one mutation in flight).
        """
    @property
    def evaluations(self) -> int:
        """
        Evaluations in the run, earlier sessions included.
        """
    @property
    def evaluator_seconds(self) -> float:
        """
        Time inside Evaluator.evaluate_batch, in seconds.
        """
    @property
    def failed_proposals(self) -> int:
        """
        Proposals that yielded no candidate.
        """
    @property
    def llm_spend(self) -> LlmSpend:
        """
        What the run spent on a language model (LlmSpend), earlier sessions included.
        """
    @property
    def migrations(self) -> int:
        """
        Programs copied between islands.
        """
    @property
    def mutator_seconds(self) -> float:
        """
        Time inside Mutator.propose, summed over threads, in seconds.
        """
    @property
    def near_duplicates(self) -> int:
        """
        Near duplicates rejected.
        """
    @property
    def parent_fallbacks(self) -> int:
        """
        Proposals whose parent came from another island, because the island whose turn it was had no program the mutator could work from.
        """
    @property
    def pending(self) -> int:
        """
        Stored candidates left unevaluated (a resume evaluates them).
        """
    @property
    def refuted(self) -> int:
        """
        Confirmations that refuted their screening: those programs do not lead.
        """
    @property
    def run_id(self) -> int:
        """
        The run's id in the store.
        """
    @property
    def session_evaluations(self) -> int:
        """
        Evaluations in this call to run().
        """
    @property
    def steps(self) -> int:
        """
        Steps taken in this call to run().
        """
    @property
    def stop_detail(self) -> str:
        """
        The stop reason in words where it needs some (for 'no_new_candidates': failed proposals in a row, or no program left that the mutator can work from, and why); empty otherwise.
        """
    @property
    def stop_reason(self) -> str:
        """
        'budget', 'wall_time', 'target_speedup', 'stagnation', 'stopped' or 'no_new_candidates'.
        """
    @property
    def store_seconds(self) -> float:
        """
        Time writing the run store, in seconds.
        """
    @property
    def unconfirmed(self) -> int:
        """
        Would-be leaders left unconfirmed because a deadline (stop(), the wall time) had come: they do not lead.
        """
    @property
    def wall_seconds(self) -> float:
        """
        Wall time of run(), in seconds.
        """
class Evolution:
    """
    The evolution loop. run() releases the GIL; stop() (from any thread) ends it cleanly.
    """
    def __init__(self, task: Task, evaluator: Evaluator, mutator: Mutator, config: EvolutionConfig = ..., memory: ExperienceMemory = None) -> None:
        """
        An evolution of the task; `memory`, an ExperienceMemory, is the one it learns into and retrieves from (default: config.memory_path's, else one in the process).
        """
    def on_progress(self, callback: typing.Any) -> None:
        """
        Calls callback(progress) after each step, on the thread running run().
        """
    def run(self) -> EvolutionResult:
        """
        Runs until a stop rule holds and returns an EvolutionResult; raises what the evaluator raises, StoreError, ValidationError, or Error when already running.
        """
    def set_confirmer(self, confirmer: Evaluator) -> None:
        """
        The Evaluator that confirms, in strict mode, a candidate about to lead the run whose evaluation was a screening or is flagged with doubt (docs/search.md, 'Confirmation'). None (the default): the run's evaluator, which for the built-in evaluator in screen mode confirms with a strict twin of itself. Set it before run().
        """
    def stop(self) -> None:
        """
        Asks a running run() to stop: nothing new starts, mutator calls in flight are cancelled (those not back within 2 s are recorded as abandoned), proposed candidates stay pending. Thread-safe; returns at once.
        """
    @property
    def archive(self) -> MapElitesArchive:
        """
        The MapElitesArchive; read it when run() is not running.
        """
    @property
    def config(self) -> EvolutionConfig:
        """
        The EvolutionConfig it was made with.
        """
    @property
    def memory(self) -> ExperienceMemory:
        """
        The ExperienceMemory the run learns into and retrieves from: the one set, or the one the last run() used (None before the first run() when none was set). Set it before run().
        """
    @memory.setter
    def memory(self, arg1: ExperienceMemory) -> None:
        ...
    @property
    def population(self) -> IslandPopulation:
        """
        The IslandPopulation (the search state); read it when run() is not running.
        """
    @property
    def run_id(self) -> int:
        """
        The run's id in the store (0 before run()).
        """
    @property
    def running(self) -> bool:
        """
        True while run() is running.
        """
    @property
    def stop_requested(self) -> bool:
        """
        True once stop() was called.
        """
    @property
    def task(self) -> Task:
        """
        The Task being optimised.
        """
class ChatMessage:
    """
    One chat message: role ('system', 'user', 'assistant') and content.
    """
    @typing.overload
    def __init__(self) -> None:
        ...
    @typing.overload
    def __init__(self, role: str, content: str) -> None:
        ...
    def __repr__(self) -> str:
        ...
    @property
    def content(self) -> str:
        """
        The message text.
        """
    @content.setter
    def content(self, arg0: str) -> None:
        ...
    @property
    def role(self) -> str:
        """
        Who speaks: 'system', 'user' or 'assistant'.
        """
    @role.setter
    def role(self, arg0: str) -> None:
        ...
class EditMode:
    """
    What the LLM is asked for: a whole file, a SEARCH/REPLACE diff, a crossover.
    
    Members:
    
      full
    
      diff
    
      crossover
    """
    __members__: typing.ClassVar[dict[str, EditMode]]
    crossover: typing.ClassVar[EditMode]
    diff: typing.ClassVar[EditMode]
    full: typing.ClassVar[EditMode]
    @typing.overload
    def __eq__(self, other: EditMode) -> bool:
        ...
    @typing.overload
    def __eq__(self, other: typing.Any) -> bool:
        ...
    def __getstate__(self) -> int:
        ...
    def __hash__(self) -> int:
        ...
    def __index__(self) -> int:
        ...
    def __init__(self, value: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    def __int__(self) -> int:
        ...
    @typing.overload
    def __ne__(self, other: EditMode) -> bool:
        ...
    @typing.overload
    def __ne__(self, other: typing.Any) -> bool:
        ...
    def __repr__(self) -> str:
        ...
    def __setstate__(self, state: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    def __str__(self) -> str:
        ...
    @property
    def name(self) -> str:
        ...
    @property
    def value(self) -> int:
        ...
class PromptTemplates:
    """
    The prompt's templates with {placeholders}; see docs/llm.md for each one's names.
    """
    @staticmethod
    def defaults() -> PromptTemplates:
        """
        The built-in templates.
        """
    def __init__(self) -> None:
        ...
    @property
    def attempts(self) -> str:
        """
        The recent attempts section: {attempts} (one line each, most recent first).
        """
    @attempts.setter
    def attempts(self, arg0: str) -> None:
        ...
    @property
    def crossover_instruction(self) -> str:
        """
        The instruction for combining two parents (EditMode.crossover).
        """
    @crossover_instruction.setter
    def crossover_instruction(self, arg0: str) -> None:
        ...
    @property
    def diff_instruction(self) -> str:
        """
        The instruction for SEARCH/REPLACE blocks (EditMode.diff).
        """
    @diff_instruction.setter
    def diff_instruction(self, arg0: str) -> None:
        ...
    @property
    def experience(self) -> str:
        """
        The experience section: {items}, one line per retrieved item.
        """
    @experience.setter
    def experience(self, arg0: str) -> None:
        ...
    @property
    def full_instruction(self) -> str:
        """
        The instruction for a whole-file rewrite (EditMode.full).
        """
    @full_instruction.setter
    def full_instruction(self, arg0: str) -> None:
        ...
    @property
    def hardware(self) -> str:
        """
        The hardware section: {device}.
        """
    @hardware.setter
    def hardware(self, arg0: str) -> None:
        ...
    @property
    def inspiration(self) -> str:
        """
        One inspiration: {index}, {id}, {reason}, {metrics}, {source}.
        """
    @inspiration.setter
    def inspiration(self, arg0: str) -> None:
        ...
    @property
    def inspirations(self) -> str:
        """
        The inspirations section: {top} and {diverse}, the rendered inspirations of each kind.
        """
    @inspirations.setter
    def inspirations(self, arg0: str) -> None:
        ...
    @property
    def parent(self) -> str:
        """
        The parent section: {source}, {evaluation}, {id}.
        """
    @parent.setter
    def parent(self, arg0: str) -> None:
        ...
    @property
    def reference(self) -> str:
        """
        The reference section: {source}.
        """
    @reference.setter
    def reference(self, arg0: str) -> None:
        ...
    @property
    def second_parent(self) -> str:
        """
        The second parent in crossover: {source}, {id}.
        """
    @second_parent.setter
    def second_parent(self, arg0: str) -> None:
        ...
    @property
    def skill(self) -> str:
        """
        One skill: {name}, {title}, {when}, {advice}, {example} (the fenced example, or nothing).
        """
    @skill.setter
    def skill(self, arg0: str) -> None:
        ...
    @property
    def skill_tag(self) -> str:
        """
        Follows every instruction: asks the model to name the skill it applied in a <skill>name</skill> tag; empty: not asked.
        """
    @skill_tag.setter
    def skill_tag(self, arg0: str) -> None:
        ...
    @property
    def skills(self) -> str:
        """
        The skills section: {skills}, the rendered skills that apply.
        """
    @skills.setter
    def skills(self, arg0: str) -> None:
        ...
    @property
    def system(self) -> str:
        """
        The system message; placeholders {language}, {language_name}, {format_rules}.
        """
    @system.setter
    def system(self, arg0: str) -> None:
        ...
    @property
    def task(self) -> str:
        """
        The task section: {name}, {description}, {tensors}, {sizes}, {work}, {tolerance}, {pytorch}.
        """
    @task.setter
    def task(self, arg0: str) -> None:
        ...
    @property
    def user(self) -> str:
        """
        The user message; placeholders {task}, {reference}, {hardware}, {parent}, {attempts}, {skills}, {experience}, {inspirations}, {instruction}, each a whole section or nothing.
        """
    @user.setter
    def user(self, arg0: str) -> None:
        ...
class PromptBuilderOptions:
    """
    Settings of the PromptBuilder: templates, token budget, device peaks and how much of each part to show.
    """
    def __init__(self) -> None:
        ...
    @property
    def chars_per_token(self) -> float:
        """
        Tokens are estimated as characters / chars_per_token.
        """
    @chars_per_token.setter
    def chars_per_token(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    @property
    def max_attempts(self) -> int:
        """
        At most this many recent attempts are shown.
        """
    @max_attempts.setter
    def max_attempts(self, arg0: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    @property
    def max_evaluation_chars(self) -> int:
        """
        The parent's evaluation text is cut to this many characters (head and tail kept) before the budget applies.
        """
    @max_evaluation_chars.setter
    def max_evaluation_chars(self, arg0: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    @property
    def max_experience(self) -> int:
        """
        At most this many retrieved experience items are shown.
        """
    @max_experience.setter
    def max_experience(self, arg0: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    @property
    def max_inspirations(self) -> int:
        """
        At most this many inspirations are shown.
        """
    @max_inspirations.setter
    def max_inspirations(self, arg0: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    @property
    def max_prompt_tokens(self) -> int:
        """
        Budget for the whole prompt in approximate tokens; 0 means no limit.
        """
    @max_prompt_tokens.setter
    def max_prompt_tokens(self, arg0: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    @property
    def max_skills(self) -> int:
        """
        At most this many skills are shown (the first that hold, in bank order).
        """
    @max_skills.setter
    def max_skills(self, arg0: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    @property
    def min_evaluation_chars(self) -> int:
        """
        The budget trims the parent's evaluation text down to no fewer than this many characters.
        """
    @min_evaluation_chars.setter
    def min_evaluation_chars(self, arg0: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    @property
    def peak_bandwidth_gbps(self) -> float | None:
        """
        The device's peak memory bandwidth in GB/s, shown to the model; None when unknown.
        """
    @peak_bandwidth_gbps.setter
    def peak_bandwidth_gbps(self, arg0: typing.SupportsFloat | typing.SupportsIndex | None) -> None:
        ...
    @property
    def peak_gflops(self) -> float | None:
        """
        The device's peak compute in GFLOP/s, shown to the model; None when unknown.
        """
    @peak_gflops.setter
    def peak_gflops(self, arg0: typing.SupportsFloat | typing.SupportsIndex | None) -> None:
        ...
    @property
    def skill_examples(self) -> bool:
        """
        Whether a skill shows its example in the language asked for.
        """
    @skill_examples.setter
    def skill_examples(self, arg0: bool) -> None:
        ...
    @property
    def skills(self) -> SkillBank:
        """
        The SkillBank whose skills are shown when their predicates hold; None: the built-in bank; an empty SkillBank() shows none.
        """
    @skills.setter
    def skills(self, arg0: SkillBank) -> None:
        ...
    @property
    def templates(self) -> PromptTemplates:
        """
        The PromptTemplates.
        """
    @templates.setter
    def templates(self, arg0: PromptTemplates) -> None:
        ...
class BuiltPrompt:
    """
    The built prompt and what the token budget did to it.
    """
    def messages_json(self) -> str:
        """
        The messages as a JSON array (messages_to_json).
        """
    @property
    def dropped(self) -> list[str]:
        """
        What the budget removed or trimmed, in order, e.g. 'reference source'.
        """
    @property
    def estimated_tokens(self) -> int:
        """
        Approximate tokens of all messages (characters / chars_per_token, rounded up).
        """
    @property
    def experience(self) -> list[int]:
        """
        The ids of the experience items the prompt shows.
        """
    @property
    def messages(self) -> list[ChatMessage]:
        """
        The chat messages, a list of ChatMessage.
        """
    @property
    def mode(self) -> EditMode:
        """
        The EditMode the prompt asks for.
        """
    @property
    def over_budget(self) -> bool:
        """
        True when still over budget after every removable part was removed.
        """
    @property
    def skills(self) -> list[str]:
        """
        The names of the skills the prompt shows, in order.
        """
class PromptBuilder:
    """
    Turns a MutationRequest into the chat messages an LLM sees (docs/llm.md); raises ValidationError when a template uses an unknown placeholder.
    """
    def __init__(self, options: PromptBuilderOptions = ...) -> None:
        ...
    def build(self, request: MutationRequest, mode: EditMode = ...) -> BuiltPrompt:
        """
        The BuiltPrompt for one request in an EditMode; crossover needs request.second_parent (ValidationError otherwise).
        """
    @property
    def options(self) -> PromptBuilderOptions:
        """
        The PromptBuilderOptions it was made with.
        """
class CodeBlock:
    """
    One fenced code block of a markdown answer.
    """
    @property
    def closed(self) -> bool:
        """
        False when the answer ended inside the block.
        """
    @property
    def code(self) -> str:
        """
        The code inside the fence.
        """
    @property
    def language(self) -> str:
        """
        The fence's info string, lower-cased ('' for a bare fence).
        """
    @property
    def line(self) -> int:
        """
        1-based line of the opening fence.
        """
class DiffBlock:
    """
    One SEARCH/REPLACE block of a diff answer.
    """
    @property
    def line(self) -> int:
        """
        1-based line of its '<<<<<<< SEARCH' marker.
        """
    @property
    def replace(self) -> str:
        """
        The text that replaces it.
        """
    @property
    def search(self) -> str:
        """
        The text to find in the parent's source.
        """
class ParsedResponse:
    """
    The program read from an LLM answer, or why there is none; truthy when ok.
    """
    def __bool__(self) -> bool:
        ...
    def __repr__(self) -> str:
        ...
    @property
    def explanation(self) -> str:
        """
        The text before the code, usually the model's idea (at most 2000 characters).
        """
    @property
    def failure(self) -> str:
        """
        Why there is no program, e.g. 'no code in the response'; empty when ok.
        """
    @property
    def kind(self) -> str:
        """
        'full' (a whole file) or 'diff' (blocks applied).
        """
    @property
    def notes(self) -> list[str]:
        """
        How the answer was read, e.g. 'picked block 2 of 3 (has a kernel and @launch lines)'.
        """
    @property
    def ok(self) -> bool:
        """
        True when a program was read.
        """
    @property
    def skill(self) -> str:
        """
        The skill the answer names in its <skill> tag; 'unspecified' when it names none.
        """
    @property
    def source(self) -> str:
        """
        The program: the chosen code block, or the parent's source with the diff applied.
        """
class LlmRequestOptions:
    """
    What one request asks of the model.
    """
    def __init__(self) -> None:
        ...
    @property
    def max_tokens(self) -> int:
        """
        Most completion tokens; 0: the server's default.
        """
    @max_tokens.setter
    def max_tokens(self, arg0: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    @property
    def model(self) -> str:
        """
        Model name; empty: the client's default.
        """
    @model.setter
    def model(self, arg0: str) -> None:
        ...
    @property
    def seed(self) -> int:
        """
        Sampling seed, passed on to servers that honour it.
        """
    @seed.setter
    def seed(self, arg0: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    @property
    def temperature(self) -> float:
        """
        Sampling temperature (default 0.8).
        """
    @temperature.setter
    def temperature(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    @property
    def timeout_seconds(self) -> float:
        """
        Longest the request may take, in seconds.
        """
    @timeout_seconds.setter
    def timeout_seconds(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
class LlmResponse:
    """
    The model's answer; a non-empty `error` means there is no usable answer.
    """
    @typing.overload
    def __init__(self) -> None:
        ...
    @typing.overload
    def __init__(self, text: str = '', model: str = '', prompt_tokens: typing.SupportsInt | typing.SupportsIndex = 0, completion_tokens: typing.SupportsInt | typing.SupportsIndex = 0, latency_seconds: typing.SupportsFloat | typing.SupportsIndex = 0.0, error: str = '', attempts: collections.abc.Sequence[LlmAttempt] = []) -> None:
        ...
    @property
    def attempts(self) -> list[LlmAttempt]:
        """
        Each HTTP attempt of the request (retries included), a list of LlmAttempt.
        """
    @attempts.setter
    def attempts(self, arg0: collections.abc.Sequence[LlmAttempt]) -> None:
        ...
    @property
    def completion_tokens(self) -> int:
        """
        Completion tokens the server reported.
        """
    @completion_tokens.setter
    def completion_tokens(self, arg0: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    @property
    def error(self) -> str:
        """
        Why there is no usable answer; empty on success.
        """
    @error.setter
    def error(self, arg0: str) -> None:
        ...
    @property
    def latency_seconds(self) -> float:
        """
        Wall time of the request, in seconds.
        """
    @latency_seconds.setter
    def latency_seconds(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    @property
    def model(self) -> str:
        """
        The model that answered, as the server names it.
        """
    @model.setter
    def model(self, arg0: str) -> None:
        ...
    @property
    def prompt_tokens(self) -> int:
        """
        Prompt tokens the server reported.
        """
    @prompt_tokens.setter
    def prompt_tokens(self, arg0: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    @property
    def text(self) -> str:
        """
        The answer text (may hold a partial answer when error is set).
        """
    @text.setter
    def text(self, arg0: str) -> None:
        ...
class LlmClient:
    """
    The seam to any LLM. Subclass it and implement complete(messages, options) -> LlmResponse; kernelsmith.llm.as_llm_client wraps any callable instead.
    """
    def __init__(self) -> None:
        ...
    def cancel(self) -> None:
        """
        Asks the requests in flight to give up soon (the engine's deadline); later requests are not affected. Default: nothing.
        """
    def complete(self, messages: collections.abc.Sequence[ChatMessage], options: LlmRequestOptions = ...) -> LlmResponse:
        """
        The model's LlmResponse to the messages; called from several threads when several mutations are in flight. May raise: the mutator turns it into a failed proposal.
        """
class LlmMutatorOptions:
    """
    Settings of the LlmMutator: edit-mode weights, seed, proposals per request, request and prompt options.
    """
    def __init__(self) -> None:
        ...
    @property
    def crossover_weight(self) -> float:
        """
        Relative weight of crossovers (counts only when a second program is available).
        """
    @crossover_weight.setter
    def crossover_weight(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    @property
    def diff_weight(self) -> float:
        """
        Relative weight of SEARCH/REPLACE diffs.
        """
    @diff_weight.setter
    def diff_weight(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    @property
    def full_weight(self) -> float:
        """
        Relative weight of whole-file rewrites (the weights are normalised).
        """
    @full_weight.setter
    def full_weight(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    @property
    def prompt(self) -> PromptBuilderOptions:
        """
        The PromptBuilderOptions.
        """
    @prompt.setter
    def prompt(self, arg0: PromptBuilderOptions) -> None:
        ...
    @property
    def proposals_per_request(self) -> int:
        """
        Proposals per request (each its own call to the client).
        """
    @proposals_per_request.setter
    def proposals_per_request(self, arg0: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    @property
    def request(self) -> LlmRequestOptions:
        """
        The LlmRequestOptions of each call.
        """
    @request.setter
    def request(self, arg0: LlmRequestOptions) -> None:
        ...
    @property
    def seed(self) -> int:
        """
        Mixed with each request's seed: the same seeds give the same modes.
        """
    @seed.setter
    def seed(self, arg0: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
class LlmMutator(Mutator):
    """
    The Mutator that asks a language model for a revision: picks an edit mode, builds the prompt, calls the LlmClient and parses the answer (docs/llm.md).
    """
    @typing.overload
    def __init__(self, client: LlmClient, options: LlmMutatorOptions = ...) -> None:
        """
        An LLM mutator over a client (an LlmClient; kernelsmith.llm.as_llm_client wraps any callable).
        """
    @typing.overload
    def __init__(self, client: typing.Any, options: LlmMutatorOptions = ...) -> None:
        """
        An LLM mutator over a plain callable: prompt -> text (its first parameter is named prompt or annotated str) or messages -> text (a list of {'role', 'content'}).
        """
    def cancel(self) -> None:
        """
        Passes a cancellation on to the client (LlmClient.cancel): its requests in flight give up soon.
        """
    def choose_mode(self, request: MutationRequest, index: typing.SupportsInt | typing.SupportsIndex = 0) -> EditMode:
        """
        The EditMode proposal number `index` of this request gets (deterministic in the seeds).
        """
    def name(self) -> str:
        ...
    def propose(self, request: MutationRequest) -> list[Proposal]:
        """
        Proposals for a request: builds the prompt, calls the client, parses the answer.
        """
    def propose_with_mode(self, request: MutationRequest, mode: EditMode, index: typing.SupportsInt | typing.SupportsIndex = 0) -> Proposal:
        """
        Proposal number `index` of a request in a given EditMode; crossover without a second program falls back to a full rewrite.
        """
    @property
    def client(self) -> LlmClient:
        """
        The LlmClient it calls.
        """
    @property
    def options(self) -> LlmMutatorOptions:
        """
        The LlmMutatorOptions it was made with.
        """
    @property
    def prompt_builder(self) -> PromptBuilder:
        """
        The PromptBuilder made from options.prompt.
        """
class DataCase:
    """
    A case of the caller's own data in a task (Task.add_case): checked by the evaluator after its own checks.
    """
    def __repr__(self) -> str:
        ...
    @property
    def expected_names(self) -> list[str]:
        """
        Names of the outputs whose expected values it holds; the reference computes the others.
        """
    @property
    def input_names(self) -> list[str]:
        """
        Names of the inputs it holds (every input of the task).
        """
    @property
    def name(self) -> str:
        """
        Its name in evaluations, e.g. 'user case 0'.
        """
    @property
    def sizes(self) -> str:
        """
        The name of the size configuration it runs at.
        """
class KernelRunner:
    """
    Runs a candidate, or the task's reference, on your own arrays in this process: no correctness or timing protocol, just the kernel's outputs. See docs/python.md.
    """
    def __init__(self, task: Task, candidate: typing.Any = None, backend: str = 'auto', device: typing.SupportsInt | typing.SupportsIndex = 0) -> None:
        """
        Loads `candidate` (a Candidate, a candidate file as a pathlib.Path, whose extension names the language, or a source string in the backend's language) on a backend; with candidate=None the task's reference. backend='auto' picks the backend of the candidate's language (cuda for Triton), else the best available backend. Raises BackendUnavailableError with the reason when the backend cannot run here.
        """
    def __repr__(self) -> str:
        ...
    def infer_sizes(self, tensors: typing.Any = None, *, sizes: typing.Any = None, **kwargs) -> dict[str, int]:
        """
        The sizes run() would infer for these tensors (the same checks; nothing runs).
        """
    def run(self, tensors: typing.Any = None, *, sizes: typing.Any = None, out: typing.Any = None, **kwargs) -> dict:
        """
        Runs the kernel once on the given tensors and returns {output name: numpy.ndarray} for every output not passed in `out`.
        
        Tensors are given by name, as keywords or in `tensors`: NumPy arrays, any object with __dlpack__ (PyTorch, CuPy, JAX), or sequences (converted to the task's dtype). Every input is required. Sizes are inferred from the shapes against the task's shape expressions; `sizes` supplies the ones shapes cannot tell. CUDA tensors are used in place on the CUDA backend (same device, C-contiguous); host arrays are copied. `out` maps output names to arrays written in place (CUDA tensors, or writable C-contiguous host arrays). Raises ValidationError naming the tensor for a missing input, an unknown name, a wrong dtype, rank or size.
        """
    @property
    def backend(self) -> str:
        """
        Name of the backend: 'cuda' or 'opencl'.
        """
    @property
    def candidate(self) -> Candidate:
        """
        The candidate it runs (origin 'reference' for the task's reference).
        """
    @property
    def compile_report(self) -> CompileReport:
        """
        The compile report of the program the last run used.
        """
    @property
    def device(self) -> DeviceInfo:
        """
        The device it runs on (DeviceInfo).
        """
    @property
    def supports_device_tensors(self) -> bool:
        """
        Whether CUDA tensors are used in place (the CUDA backend); else pass host arrays.
        """
    @property
    def task(self) -> Task:
        """
        The task it runs.
        """
def apply_diff_response(text: str, parent_source: str) -> ParsedResponse:
    """
    Applies the SEARCH/REPLACE blocks of text to parent_source, in order (exact match first, then tolerant of whitespace).
    """
def best_backend() -> str:
    """
    The backend to use when none is named: a GPU backend first, then OpenCL.
    """
def better_program(a: Program, b: Program) -> bool:
    """
    True when program a ranks above b: correct before incorrect, then higher fitness, then the earlier evaluation.
    """
def builtin_task_names() -> list[str]:
    """
    Names of the tasks found along task_search_path(), sorted.
    """
def candidate_format_rules(language: str = 'cuda') -> str:
    """
    A concise statement of the candidate format's rules (docs/candidate-format.md) for the language ('cuda', 'opencl', 'maca').
    """
def compile_candidate_offline(task: Task, candidate: Candidate, architecture: str, timeout_seconds: typing.SupportsFloat | typing.SupportsIndex = 120.0) -> list[OfflineProgram]:
    """
    Compiles a CUDA candidate for a task as the evaluator would on a GPU of this architecture ('sm_90', 'sm_80'), without a GPU (NVRTC): one program, or one per size configuration under @specialize. A source the compiler rejects gives a report with ok False; a malformed plan raises PlanError, another language NotSupportedError, no NVRTC BackendUnavailableError.
    """
def cosine_similarity(a: collections.abc.Sequence[typing.SupportsFloat | typing.SupportsIndex], b: collections.abc.Sequence[typing.SupportsFloat | typing.SupportsIndex]) -> float:
    """
    Cosine similarity of two equal-length vectors (0 when either is zero); raises ValidationError on a length mismatch.
    """
def create_evaluator(options: EvaluatorOptions = ...) -> Evaluator:
    """
    The built-in evaluator on options.backend ('auto': the best available). Raises BackendUnavailableError with the reason when the backend cannot run here.
    """
def default_feature_descriptors() -> list[FeatureDescriptor]:
    """
    The default MAP-Elites axes: complexity (6 bins over [-1, 2]), registers (6 bins over [0, 192]), log_speedup (8 bins over [-1, 3]).
    """
def default_tolerance(dtype: DType) -> Tolerance:
    """
    The default tolerance of a dtype: float32 1e-4, float16/bfloat16 1e-2, float64 1e-8, integers exact.
    """
def defines_model_new(source: str) -> bool:
    """
    True when a Python source defines `class ModelNew` at the start of a line: a KernelBench candidate file (language 'pytorch') rather than a Triton one.
    """
def devices() -> list[BackendInfo]:
    """
    Every backend this build knows, with its devices or the reason it is unavailable.
    """
def devices_json() -> str:
    """
    devices() as a JSON document (schema kernelsmith.devices/1).
    """
def doubt_casting_flags() -> dict[str, str]:
    """
    The integrity flags that cast doubt on an evaluation's speed or correctness, each with what it means: an evaluation carrying one is confirmed before it leads a run, and reports do not headline it.
    """
def dtype_size(dtype: DType) -> int:
    """
    Bytes per element of a dtype.
    """
def evaluate_expression(expression: str, bindings: collections.abc.Mapping[str, typing.SupportsInt | typing.SupportsIndex] = {}) -> int:
    """
    Evaluates an integer plan expression (int64; + - * / % with floor division, comparisons, && || !, ceil_div, round_up, min, max) over named integers. Raises PlanError naming an unknown identifier, a division by zero, an overflow or a syntax error with its column.
    """
def experience_reward(stage: Stage, child_status: Status, child_speedup: typing.SupportsFloat | typing.SupportsIndex, parent_speedup: typing.SupportsFloat | typing.SupportsIndex) -> float:
    """
    A step's reward: draft 1 when the child is correct, else 0; refine log2(child / parent speedup) clamped to [-1, 1], -1 for a child that broke.
    """
def extract_code_blocks(text: str) -> list[CodeBlock]:
    """
    The fenced code blocks of a markdown text, in order, as CodeBlocks.
    """
def extract_diff_blocks(text: str) -> list[DiffBlock]:
    """
    The complete SEARCH/REPLACE blocks of a text, as DiffBlocks (incomplete ones are left out).
    """
def failure_fitness(status: Status) -> float:
    """
    Fitness of a status without timing: incorrect 0, runtime_error -0.25, invalid_launch -0.5, compile_error -0.75, timeout and crashed -1.
    """
def feature_catalog() -> list[FeatureInfo]:
    """
    Every feature skills are gated on and experience is matched by.
    """
def feature_similarity(a: dict[str, float | str], b: dict[str, float | str]) -> float:
    """
    How alike two feature dicts are, in (0, 1]; 0 when neither has a compared feature.
    """
def feedback_features(evaluation: Evaluation) -> dict[str, float | str]:
    """
    An Evaluation's features, a dict: stage, status, failure kind, fractions of the peaks, resources, ...
    """
def find_feature(name: str) -> FeatureInfo | None:
    """
    The catalog row of a feature, or None.
    """
def has_custom_kernel(candidate: ...) -> bool:
    """
    Whether a candidate has a kernel of its own: always for device code; for a ModelNew file, when its source builds or declares one (load_inline, cpp_extension.load, @triton.jit).
    """
def hashed_ngram_embedding(source: str, dimensions: typing.SupportsInt | typing.SupportsIndex = 256, n: typing.SupportsInt | typing.SupportsIndex = 3) -> list[float]:
    """
    The default embedding: token n-grams hashed (with a sign) into `dimensions` buckets, L2-normalised.
    """
def helper_python() -> str:
    """
    The interpreter the helper processes run now: $KERNELSMITH_PYTHON, the one set_helper_python() set, or '/usr/bin/env python3'.
    """
def is_floating(dtype: DType) -> bool:
    """
    True for the floating-point dtypes.
    """
def is_initial_origin(origin: str) -> bool:
    """
    True for the origins a run starts from ('reference', 'seed'): no mutation made them.
    """
def kernel_language(name: str) -> KernelLanguage:
    """
    The KernelLanguage row of `name`; raises ValidationError naming the known languages.
    """
def kernel_languages() -> list[KernelLanguage]:
    """
    Every kernel language, in a stable order (CUDA, OpenCL, MACA, Triton, PyTorch), as KernelLanguage rows.
    """
def language_for_extension(path: str) -> str:
    """
    Kernel language of a file by its extension, or '' when unknown.
    """
def messages_from_json(json_text: str, origin: str = '<messages>') -> list[ChatMessage]:
    """
    Reads such a JSON array back into ChatMessages; raises ValidationError naming `origin` on malformed input.
    """
def messages_to_json(messages: collections.abc.Sequence[ChatMessage]) -> str:
    """
    The messages as a JSON array of {'role', 'content'} objects (what each step records).
    """
def model_new_from_problem(problem_source: str) -> str:
    """
    A KernelBench problem file's Model as a ModelNew candidate's source (the identifier Model renamed ModelNew): what a run with no hand-written seed starts from.
    """
def mutation_name(mode: EditMode) -> str:
    """
    The lineage origin of a mode: 'llm_full', 'llm_diff' or 'llm_crossover'.
    """
def normalize_source(source: str) -> str:
    """
    The tokens joined by single spaces: sources differing only in comments or layout normalise alike.
    """
def normalized_source_hash(language: str, source: str) -> str:
    """
    16 hex digits (64-bit FNV-1a) of the language and the normalised source.
    """
def parse_dtype(name: str) -> DType:
    """
    Parses a canonical dtype name ('float32') or an alias ('fp32', 'half', 'bf16', 'int', 'torch.float16'). Raises ValidationError listing the accepted names.
    """
def parse_edit_mode(name: str) -> EditMode:
    """
    The EditMode named 'full', 'diff' or 'crossover'; raises ValidationError otherwise.
    """
def parse_full_response(text: str, parent_source: str = '', language: str = '') -> ParsedResponse:
    """
    Reads a whole-file answer; a non-empty parent_source turns an unchanged copy into a failure; `language`, when given, refuses blocks in a language whose plans are written otherwise.
    """
def parse_response(text: str, mode: EditMode, parent_source: str, language: str = '') -> ParsedResponse:
    """
    Reads an LLM answer given in `mode` against the parent's source, in `language` when given (a block in a language whose plans are written otherwise is refused); see docs/llm.md.
    """
def parse_selection_policy(name: str) -> SelectionPolicy:
    """
    The SelectionPolicy named 'uniform', 'tournament', 'weighted' or 'power_law' (also 'power-law'); raises ValidationError otherwise.
    """
def parse_skill_tag(text: str) -> str:
    """
    The skill an answer names in its last <skill>name</skill> tag (lower-cased, spaces and hyphens made underscores); 'unspecified' when there is none or it is not a snake_case name.
    """
def parse_stage(name: str) -> Stage:
    """
    The Stage named 'draft' or 'refine'; raises ValidationError otherwise.
    """
def parse_status(name: str) -> Status:
    """
    Status of a name ('ok', 'compile_error', ...).
    """
def render_template(text: str, values: collections.abc.Sequence[tuple[str, str]], template_name: str = 'template') -> str:
    """
    Replaces {placeholders} in text with values, a list of (name, value) pairs; raises ValidationError naming template_name when a placeholder has no value.
    """
def request_features(request: MutationRequest) -> dict[str, float | str]:
    """
    Everything a MutationRequest offers (a dict): its task's features and request_feedback.
    """
def request_feedback(request: MutationRequest) -> dict[str, float | str]:
    """
    A MutationRequest's features beyond its task (a dict): the parent's feedback, the language and the device.
    """
def run_kernel(task: Task, candidate: typing.Any = None, tensors: typing.Any = None, *, backend: str = 'auto', device: typing.SupportsInt | typing.SupportsIndex = 0, sizes: typing.Any = None, out: typing.Any = None, **kwargs) -> dict:
    """
    One-shot KernelRunner(task, candidate, backend, device).run(...): runs `candidate` (a Candidate, a pathlib.Path of a candidate file, a source string, or None for the task's reference) on the given tensors and returns {output name: numpy.ndarray}. Load a KernelRunner to run the same kernel several times without loading it again.
    """
def sandbox_status() -> SandboxStatus:
    """
    What the sandbox gives on this machine: probed once per process by running its launcher in report mode, the code path of a real launch.
    """
def sandboxed_command(command: collections.abc.Sequence[str], scratch: str, readable: collections.abc.Sequence[str] = []) -> list[str]:
    """
    The command line that runs `command` confined, writing only to `scratch` (its working directory, HOME and TMPDIR), reading the system's folders, the interpreter's and `readable`. `command` unchanged when the sandbox is disabled (sandbox_status() says why).
    """
def selection_weights(programs: collections.abc.Sequence[Program], config: SelectionConfig) -> list[float]:
    """
    The policy's relative weight of each program.
    """
def set_helper_python(python: str) -> None:
    """
    The Python interpreter of kernelsmith's helper processes (the Triton compile helpers, the PyTorch oracle) when $KERNELSMITH_PYTHON is not set; importing kernelsmith sets it to sys.executable.
    """
def set_triton_python(python: str) -> None:
    """
    The older name of set_helper_python: the interpreter of every helper process.
    """
def skill_search_path() -> list[pathlib.Path]:
    """
    The folders searched for the built-in skills/skills.json: $KERNELSMITH_SKILLS_PATH, the package, the installed share/kernelsmith/skills, the source tree.
    """
def source_tokens(source: str) -> list[str]:
    """
    The source's tokens: identifiers, numbers, string literals, operators; comments dropped except '// @directive' lines (one token each); preprocessor lines end with a '\\n' token.
    """
@typing.overload
def stage_of(parent_evaluation: Evaluation | None) -> Stage:
    """
    refine when the parent Evaluation is correct, draft else (also for None).
    """
@typing.overload
def stage_of(parent: Candidate, parent_evaluation: Evaluation | None) -> Stage:
    """
    draft also when the parent is correct but has no kernel of its own (a ModelNew that only calls PyTorch: has_custom_kernel); else as stage_of(parent_evaluation).
    """
def task_features(task: Task) -> dict[str, float | str]:
    """
    A Task's features at its timed sizes, a dict: FLOPs, bytes, arithmetic intensity, reduction ratio, ...
    """
def task_search_path() -> list[pathlib.Path]:
    """
    Folders searched for tasks by name, in order: $KERNELSMITH_TASKS_PATH (':'-separated), the package's tasks/, the installed share/kernelsmith/tasks, the source tree's tasks/.
    """
def triton_kernel_specs(task: Task, source: str, device: DeviceInfo) -> list[TritonKernelSpec]:
    """
    The specializations a Triton candidate's plan needs for a task on a device, each once, as the evaluator compiles them (docs/triton.md).
    """
def triton_status() -> TritonStatus:
    """
    Whether Triton candidates can be compiled here: asks a compile helper (started once, then kept) whether triton imports. Never raises.
    """
CANDIDATE_SCHEMA: str = 'kernelsmith.candidate/1'
EVALUATION_SCHEMA: str = 'kernelsmith.evaluation/5'
INITIAL_ORIGINS: tuple = ('reference', 'seed')
ORIGINS: tuple = ('reference', 'seed', 'user', 'param', 'llm_full', 'llm_diff', 'llm_crossover')
RUN_STORE_SCHEMA_VERSION: int = 4
TASK_SCHEMA: str = 'kernelsmith.task/1'
__version__: str = '0.1.0'
