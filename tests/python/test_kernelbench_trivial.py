"""Trivial programs against an imported KernelBench task (docs/kernelbench.md, step 12 of "How a problem becomes a task").

KernelBench draws ReLU's input from uniform(0, 1), where ReLU is the identity: a kernel that copies its input
passed every check. At import the probe asks whether a copy of an input, zeros, a constant or a negated
input passes an output on the cases it drew; if one does, the inputs are widened until none does, or the
problem is refused. The problems run in the importer's helper process, on the CPU.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from kernelsmith.kernelbench import importer, triviality

torch = pytest.importorskip("torch", reason="the KernelBench importer's helper needs torch (tools/setup-deps.sh)")

REPO = Path(__file__).resolve().parents[2]


def kernelbench_level1():
    root = os.environ.get("KERNELSMITH_KERNELBENCH") or str(REPO.parent / "shared" / "kernelbench")
    level1 = Path(root) / "KernelBench" / "level1"
    if not (level1 / "19_ReLU.py").is_file():
        pytest.skip("KernelBench is not at $KERNELSMITH_KERNELBENCH or ../shared/kernelbench (a checkout of "
                    "ScalingIntelligence/KernelBench holding KernelBench/level1)")
    return level1


PROBLEM = """import torch
import torch.nn as nn

class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return {body}

batch_size = 64
dim = 512

def get_inputs():
    return [torch.rand(batch_size, dim)]

def get_init_inputs():
    return []
"""


def write_problem(folder: Path, name: str, body: str) -> Path:
    (folder / "level1").mkdir(exist_ok=True)
    path = folder / "level1" / name
    path.write_text(PROBLEM.format(body=body))
    return path


# ---- the comparison rule (compare_output in lib/evaluate/host_tensors.cpp)

def test_elements_are_judged_with_the_absolute_tolerance_in_units_of_the_reference_rms():
    expected = torch.tensor([3.0, -4.0, 0.0, 0.0], dtype=torch.float64)  # rms 2.5
    bound = 1e-4 * 2.5  # at the zeros: atol * rms + rtol * 0
    inside = expected.clone()
    inside[2] = 0.9 * bound
    assert triviality.compare(expected, inside, 1e-4, 1e-4) is None
    outside = expected.clone()
    outside[2] = 1.1 * bound
    assert "1 of 4 elements differ" in triviality.compare(expected, outside, 1e-4, 1e-4)


def test_an_output_off_by_the_same_fraction_everywhere_fails_the_relative_l2_bound():
    expected = torch.linspace(1.0, 2.0, 1000, dtype=torch.float64)
    # 1.5e-4 of every value: each element is within atol * rms + rtol * |e|, the whole is not (bound 1e-4).
    why = triviality.compare(expected, expected * (1 + 1.5e-4), 1e-4, 1e-4)
    assert why is not None and why.startswith("relative L2 error 0.00015 exceeds 0.0001")
    assert triviality.compare(expected, expected * (1 + 0.5e-4), 1e-4, 1e-4) is None


def test_a_constant_fails_where_the_reference_varies_even_inside_a_loose_tolerance():
    expected = 1.0 + 1e-2 * torch.rand(4096, dtype=torch.float64)
    mean = torch.full_like(expected, float(expected.mean()))
    why = triviality.compare(expected, mean, 0.1, 0.1)  # every element within 0.1 * rms: still near-constant
    assert why is not None and why.startswith("near-constant")


def test_non_finite_values_fail_where_the_reference_is_finite_and_are_skipped_where_it_is_not():
    expected = torch.tensor([1.0, float("nan"), 2.0])
    assert triviality.compare(expected, torch.tensor([1.0, 5.0, 2.0]), 1e-4, 1e-4) is None
    assert "NaN or infinite" in triviality.compare(expected, torch.tensor([1.0, 5.0, float("inf")]), 1e-4, 1e-4)


def test_integer_outputs_are_exact():
    expected = torch.tensor([1, 2, 3])
    assert triviality.compare(expected, torch.tensor([1, 2, 3]), *triviality.tolerance("int64")) is None
    assert triviality.compare(expected, torch.tensor([1, 2, 4]), *triviality.tolerance("int64")) is not None


def test_each_trivial_program_is_found_on_the_cases_it_passes():
    x = torch.rand(2, 64) + 0.5  # positive: relu(x) = x, -relu(x) = -x
    cases = [triviality.Case({"x": x, "scale": 2.0}, [torch.relu(x), -x, torch.zeros(3), torch.tensor(0.25)], "c0"),
             triviality.Case({"x": x * 2, "scale": 2.0}, [torch.relu(x * 2), -x * 2, torch.zeros(3),
                                                           torch.tensor(0.25)], "c1")]
    passing = triviality.passing_programs(cases, ["float32"] * 4)
    assert "output 0: copy of x" in passing and "output 1: x negated" in passing
    assert "output 2: zeros" in passing and "output 3: the constant 0.25" in passing
    assert not any(p.startswith("output 0: zeros") or p.startswith("output 1: copy") for p in passing)
    # A 0-d input is a copy candidate only for an output of one element, and its value 2 is not 0.25.
    assert "output 3: copy of scale" not in passing
    # One case the program fails is enough.
    cases[1].outputs[3] = torch.tensor(0.5)
    assert not any(p.startswith("output 3") for p in triviality.passing_programs(cases, ["float32"] * 4))


# ---- through the importer

def drawn(distribution, shape, generator):
    a, b = distribution["a"], distribution["b"]
    if distribution["kind"] == "uniform":
        return torch.rand(shape, generator=generator) * (b - a) + a
    return torch.randn(shape, generator=generator) * b + a


@pytest.fixture(scope="module")
def relu(tmp_path_factory):
    """KernelBench's own ReLU problem, imported on the CPU."""
    path = kernelbench_level1() / "19_ReLU.py"
    result = importer.import_problem(str(path), None, str(tmp_path_factory.mktemp("kb")), device="cpu")
    assert result.imported, result.reason
    return result


def test_kernelbench_relu_gains_a_symmetric_distribution(relu):
    assert relu.widened == {"x": {"from": {"kind": "uniform", "a": 0.0, "b": 1.0},
                                  "to": {"kind": "uniform", "a": -1.0, "b": 1.0}}}
    document = json.loads((Path(relu.task_dir) / "task.json").read_text())
    x = next(t for t in document["tensors"] if t["name"] == "x")
    assert x["distribution"] == {"kind": "uniform", "a": -1.0, "b": 1.0}
    assert "x from uniform(-1, 1) (the problem draws uniform(0, 1))" in document["description"].splitlines()[0]
    assert any("output 0: copy of x on the check sizes" in note and "x uniform(0, 1) -> uniform(-1, 1)" in note
               for note in relu.notes)
    facts = json.loads((Path(relu.task_dir) / "import.json").read_text())["facts"]
    # On both groups of cases: the check sizes, and the problem's own sizes (with the batch shrunk on a CPU).
    assert facts["trivial_programs_passed"] == ["output 0: copy of x on the check sizes",
                                                "output 0: copy of x on the problem's own sizes"]
    # The copy passes on the problem's own distribution and fails on the task's, at its check sizes.
    generator = torch.Generator().manual_seed(7)
    for distribution, copy_passes in ((relu.widened["x"]["from"], True), (x["distribution"], False)):
        cases = []
        for check in document["check_sizes"]:
            inputs = drawn(distribution, (check["sizes"]["batch_size"], check["sizes"]["dim"]), generator)
            cases.append(triviality.Case({"x": inputs}, [torch.relu(inputs)], check["name"]))
        assert ("output 0: copy of x" in triviality.passing_programs(cases, ["float32"])) is copy_passes


COPY = """// @launch copy<<<ceil_div(batch_size * dim, 64), 64>>>(x, out, batch_size * dim)
__kernel void copy(__global const float* x, __global float* out, int n) {
  const int i = get_global_id(0);
  if (i < n) out[i] = x[i];
}
"""


def test_an_opencl_copy_kernel_is_incorrect_on_the_imported_relu(relu, tmp_path):
    import kernelsmith as ks

    if not any(b.name == "opencl" and b.available for b in ks.devices()):
        pytest.skip("no OpenCL device (install pocl-opencl-icd)")
    path = Path(relu.task_dir) / "task.json"
    document = json.loads(path.read_text())
    document["sizes"] = {"batch_size": 16, "dim": 1024}  # the problem's own 6.4 GB are not for a CPU device
    path.write_text(json.dumps(document))
    options = ks.EvaluatorOptions(backend="opencl", correctness_trials=1, min_samples=3, max_samples=10,
                                  screen_budget_seconds=0.05, compile_threads=1, cache_dir=str(tmp_path / "cache"))
    evaluation = ks.create_evaluator(options).evaluate(ks.Task.load(relu.task_dir), ks.Candidate("opencl", COPY))
    assert evaluation.status == ks.Status.incorrect, evaluation.message
    assert "out:" in evaluation.message

    # On the problem's own distribution the same kernel was judged right: the hole the widening closes (or,
    # where the evaluator refuses such a task itself, refused).
    document["tensors"][0]["distribution"] = relu.widened["x"]["from"]
    narrow = tmp_path / "narrow"
    narrow.mkdir()
    (narrow / "task.json").write_text(json.dumps(document))
    (narrow / "problem.py").write_text((Path(relu.task_dir) / "problem.py").read_text())
    try:
        evaluation = ks.create_evaluator(options).evaluate(ks.Task.load(str(narrow)), ks.Candidate("opencl", COPY))
        assert evaluation.status == ks.Status.ok, evaluation.message
    except ks.Error as error:
        assert "trivial" in str(error), error


def test_a_problem_no_trivial_program_passes_is_left_unchanged(tmp_path):
    path = write_problem(tmp_path, "1_Sigmoid.py", "torch.sigmoid(x)")
    result = importer.import_problem(str(path), None, str(tmp_path / "out"), device="cpu")
    assert result.imported, result.reason
    assert result.widened == {}
    document = json.loads((Path(result.task_dir) / "task.json").read_text())
    assert document["tensors"][0]["distribution"] == {"kind": "uniform", "a": 0.0, "b": 1.0}
    assert "wider" not in document["description"].splitlines()[0]
    facts = json.loads((Path(result.task_dir) / "import.json").read_text())["facts"]
    assert facts["trivial_programs_passed"] == [] and facts["widened"] == {}


def test_a_forward_that_works_in_place_on_its_input_is_not_taken_for_a_copy(tmp_path):
    # clamp_ overwrites x (the same each pass): compared with x after forward, the output would look like a
    # copy of it, and no widening could change that.
    path = write_problem(tmp_path, "1_Clamp_In_Place.py", "x.clamp_(max=0.5)")
    result = importer.import_problem(str(path), None, str(tmp_path / "out"), device="cpu")
    assert result.imported, result.reason
    assert result.widened == {}


@pytest.mark.parametrize("file_name, body, program", [
    ("1_Identity.py", "x.clone()", "output 0: copy of x on the check sizes"),
    ("2_Negate.py", "-x", "output 0: x negated on the check sizes"),
    ("3_Zero_Loss.py", "(x - x).sum()", "output 0: zeros on the check sizes"),
])
def test_a_problem_no_distribution_helps_is_refused_naming_what_passed(tmp_path, file_name, body, program):
    path = write_problem(tmp_path, file_name, body)
    out = tmp_path / "out"
    result = importer.import_problem(str(path), None, str(out), device="cpu")
    assert result.status == "refused"
    assert result.reason.startswith("a trivial program passes every check of the task (")
    assert program in result.reason and "no wider input distribution makes it fail" in result.reason
    # Every widening tried is named, with why it did not help.
    assert "x uniform(0, 1) -> uniform(-1, 1): output 0" in result.reason and "still passes" in result.reason
    assert "\n" not in result.reason
    assert not (out / result.task_name).exists()


def test_a_widening_on_which_the_module_is_not_finite_is_not_taken(tmp_path):
    # A copy of x where log(x) is finite (x > 0), NaN elsewhere: every symmetric widening makes NaN, so the
    # problem is refused, and each widening tried says why it was not taken.
    path = write_problem(tmp_path, "1_Copy_Through_Log.py", "x + 0 * x.log()")
    result = importer.import_problem(str(path), None, str(tmp_path / "out"), device="cpu")
    assert result.status == "refused"
    assert "output 0: copy of x" in result.reason
    for widening in ("uniform(0, 1) -> uniform(-1, 1): output 0 has NaN or infinite values",
                     "uniform(0, 1) -> normal(0, 1): output 0 has NaN or infinite values"):
        assert widening in result.reason
