"""Tasks whose expected outputs come from a PyTorch module (the manifest's "oracle"), constant
distributions and distribution structures, from Python: a task folder written here with a problem file in
KernelBench's format loads, round-trips through JSON, and is built again in code."""

import json
import pathlib
import re

import pytest

import kernelsmith as ks

ROOT = pathlib.Path(__file__).resolve().parents[2]

# A problem in KernelBench's format: a Linear layer scaled by a Python float, masked by a bool tensor.
PROBLEM = '''import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.gemm = nn.Linear(in_features, out_features)

    def forward(self, x, scale, mask):
        return self.gemm(x) * scale * mask


batch_size = 8
in_features = 32
out_features = 16


def get_inputs():
    return [torch.rand(batch_size, in_features), 0.5, torch.ones(out_features, dtype=torch.bool)]


def get_init_inputs():
    return [in_features, out_features]
'''


def manifest():
    return {
        "schema": "kernelsmith.task/1",
        "name": "gemm_scale_mask",
        "sizes": {"batch_size": 8, "in_features": 32, "out_features": 16},
        "check_sizes": [{"name": "odd", "sizes": {"batch_size": 3, "in_features": 5, "out_features": 7}}],
        "tensors": [
            {"name": "x", "dtype": "float32", "shape": ["batch_size", "in_features"], "role": "input",
             "distribution": {"kind": "uniform", "a": 0, "b": 1}},
            {"name": "scale", "dtype": "float32", "shape": [], "role": "input",
             "distribution": {"kind": "constant", "a": 0.5}},
            {"name": "mask", "dtype": "uint8", "shape": ["out_features"], "role": "input",
             "distribution": {"kind": "integers", "a": 0, "b": 1}},
            {"name": "gemm_weight", "dtype": "float32", "shape": ["out_features", "in_features"], "role": "input",
             "distribution": {"kind": "uniform", "a": -0.2, "b": 0.2}},
            {"name": "gemm_bias", "dtype": "float32", "shape": ["out_features"], "role": "input",
             "distribution": {"kind": "uniform", "a": -0.2, "b": 0.2}},
            {"name": "out", "dtype": "float32", "shape": ["batch_size", "out_features"], "role": "output"},
        ],
        "work": {"flops": "2 * batch_size * in_features * out_features", "bytes": "4 * batch_size * in_features"},
        "oracle": {
            "kind": "pytorch",
            "module": "problem.py",
            "constants": {"batch_size": "batch_size", "in_features": "in_features", "out_features": "out_features"},
            "forward": ["x", "scale", "mask"],
            "parameters": {"gemm.weight": "gemm_weight", "gemm.bias": "gemm_bias"},
            "outputs": ["out"],
            "casts": {"scale": "python_float", "mask": "bool"},
            "seed": 42,
            "training": False,
            "baselines": ["eager", "compile"],
        },
    }


def write_task(folder: pathlib.Path, document: dict, module: str = PROBLEM) -> pathlib.Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "task.json").write_text(json.dumps(document, indent=2))
    (folder / "problem.py").write_text(module)
    return folder


def test_an_oracle_task_loads_from_its_folder_and_round_trips(tmp_path):
    folder = write_task(tmp_path / "gemm_scale_mask", manifest())
    task = ks.Task.load(str(folder))
    assert task.references == {}
    assert task.languages() == []
    oracle = task.oracle
    assert isinstance(oracle, ks.PytorchOracle)
    assert oracle.kind == "pytorch"
    assert oracle.module.language == "python"
    assert oracle.module.source == PROBLEM
    assert pathlib.Path(oracle.module.path) == folder / "problem.py"
    assert oracle.constants == {"batch_size": "batch_size", "in_features": "in_features",
                                "out_features": "out_features"}
    assert oracle.forward == ["x", "scale", "mask"]
    assert oracle.parameters == {"gemm.weight": "gemm_weight", "gemm.bias": "gemm_bias"}
    assert oracle.outputs == ["out"]
    assert oracle.casts == {"scale": "python_float", "mask": "bool"}
    assert oracle.seed == 42
    assert oracle.training is False
    assert oracle.baselines == ["eager", "compile"]
    assert task.tensor("scale").distribution.kind == "constant"
    assert task.extents(task.tensor("scale"), task.timing_sizes.sizes) == []
    assert task.extents(task.tensor("gemm_weight"), {"batch_size": 1, "in_features": 3, "out_features": 2}) == [2, 3]

    # to_json is self-contained: the module inline, no folder needed to read it back.
    text = task.to_json()
    document = json.loads(text)
    assert document["oracle"]["module"]["source"] == PROBLEM
    assert "b" not in document["tensors"][1]["distribution"]
    copy = ks.Task.from_json(text, "copy")
    assert copy.to_json() == text
    assert copy.oracle.module.source == PROBLEM
    assert copy.oracle.parameters == oracle.parameters
    assert copy.oracle.casts == oracle.casts
    assert copy.oracle.training is False


def test_an_oracle_built_in_python_validates_and_round_trips(tmp_path):
    task = ks.Task.load(str(write_task(tmp_path / "t", manifest())))
    task.oracle = None
    with pytest.raises(ks.ValidationError, match=r"references: expected at least one reference.*or an \"oracle\""):
        task.validate("code")
    oracle = ks.PytorchOracle(module=ks.KernelSource(source=PROBLEM), forward=["x", "scale", "mask"],
                              parameters={"gemm.weight": "gemm_weight", "gemm.bias": "gemm_bias"}, outputs=["out"],
                              casts={"scale": "python_float", "mask": "bool"})
    assert oracle.module.language == "python"  # a module given without a language is Python
    assert oracle.seed == 42 and oracle.training is True
    assert oracle.baselines == ["eager", "compile", "compile_max_autotune"]
    task.oracle = oracle
    task.validate("code")
    copy = ks.Task.from_json(task.to_json())
    assert copy.oracle.forward == ["x", "scale", "mask"]
    assert copy.oracle.baselines == ["eager", "compile", "compile_max_autotune"]
    # Assigning through the copy returned by the property does not change the task: assign it back.
    changed = copy.oracle
    changed.seed = 7
    copy.oracle = changed
    assert ks.Task.from_json(copy.to_json()).oracle.seed == 7
    changed.forward = ["x", "scale"]
    copy.oracle = changed
    with pytest.raises(ks.ValidationError, match=r"code: oracle: the input \"mask\" is given to the module nowhere"):
        copy.validate("code")


def test_oracle_errors_name_the_file_and_the_field(tmp_path):
    broken = manifest()
    broken["oracle"]["casts"]["x"] = "bool"
    folder = write_task(tmp_path / "broken", broken)
    with pytest.raises(ks.ValidationError) as error:
        ks.Task.load(str(folder))
    assert str(error.value).startswith(str(folder / "task.json") + ": oracle.casts.x: a bool cast needs a uint8")
    missing = manifest()
    missing["oracle"]["module"] = "absent.py"
    with pytest.raises(ks.ValidationError, match=r"oracle.module: the file \"absent.py\" does not exist"):
        ks.Task.load(str(write_task(tmp_path / "missing", missing)))


def test_distributions_take_a_structure_and_the_constant_kind():
    d = ks.Distribution("normal", 0.0, 1.0, "symmetric")
    assert d.structure == "symmetric"
    assert repr(d) == "Distribution('normal', a=0.0, b=1.0, structure='symmetric')"
    assert ks.Distribution().structure == "none"
    assert repr(ks.Distribution("constant", 2.0)) == "Distribution('constant', a=2.0, b=1.0)"
    task = ks.Task.load("relu")
    tensors = task.tensors
    tensors[0].distribution = ks.Distribution("uniform", 0.0, 1.0, "probability_rows")
    task.tensors = tensors
    copy = ks.Task.from_json(task.to_json())
    assert copy.tensors[0].distribution.structure == "probability_rows"
    tensors[0].distribution = ks.Distribution("normal", 0.0, 1.0, "lower_triangular")
    task.tensors = tensors
    with pytest.raises(ks.ValidationError, match="lower_triangular needs a tensor of rank >= 2"):
        task.validate("code")


def test_the_oracle_example_of_docs_task_format_md_loads(tmp_path):
    doc = (ROOT / "docs" / "task-format.md").read_text()
    section = doc[doc.index("### Oracle"):]
    module = re.search(r"```python\n(.*?)```", section, flags=re.S).group(1)
    document = json.loads(re.search(r"```json\n(.*?)```", section, flags=re.S).group(1))
    task = ks.Task.load(str(write_task(tmp_path / document["name"], document, module)))
    assert task.oracle.casts == {"scale": "python_float", "mask": "bool"}
    assert "class Model(nn.Module)" in task.oracle.module.source
    assert ks.Task.from_json(task.to_json()).to_json() == task.to_json()


def test_evaluating_an_oracle_task_says_the_oracle_is_not_available_here(tmp_path):
    if not any(b.name == "opencl" and b.available for b in ks.devices()):
        pytest.skip("no OpenCL device (install pocl-opencl-icd)")
    task = ks.Task.load(str(write_task(tmp_path / "t", manifest())))
    options = ks.EvaluatorOptions()
    options.backend = "opencl"
    options.isolate = False
    evaluator = ks.create_evaluator(options)
    candidate = ks.Candidate("opencl", "// @launch k<<<1, 1>>>(out)\n__kernel void k(__global float* o) {}\n")
    with pytest.raises(ks.TaskError, match="the PyTorch oracle is not available in this build of kernelsmith"):
        evaluator.evaluate(task, candidate)
