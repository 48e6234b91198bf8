"""Arrays: kernels run on NumPy arrays and DLPack producers (KernelRunner, run_kernel), sizes inferred
from shapes, and the caller's own data cases checked by the evaluator (Task.add_case). Runs on PoCL here;
the CUDA tests use torch or cupy when importable and a CUDA device is present."""

import os
import tempfile

import numpy as np
import pytest

import kernelsmith as ks

CACHE_DIR = os.path.join(tempfile.gettempdir(), "kernelsmith-test-cache")


def backend_available(name):
    return any(b.name == name and b.available and b.devices for b in ks.devices())


needs_opencl = pytest.mark.skipif(not backend_available("opencl"), reason="no OpenCL device")
needs_cuda = pytest.mark.skipif(not backend_available("cuda"), reason="no CUDA device")

# Correct ReLU except on the exact value 1234.5, which no generated input holds.
RELU_WRONG_ON_ONE_VALUE = """// @launch relu<<<ceil_div(N, 64), 64>>>(x, y, N)
__kernel void relu(__global const float* x, __global float* y, int N) {
  const int i = get_global_id(0);
  if (i < N) y[i] = x[i] == 1234.5f ? -1.0f : fmax(x[i], 0.0f);
}
"""


class DLPackOnly:
    """A producer that only speaks DLPack (as a PyTorch or JAX CPU tensor would)."""

    def __init__(self, array):
        self._array = array

    def __dlpack__(self, **kwargs):
        return self._array.__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return self._array.__dlpack_device__()


def rng(seed):
    return np.random.default_rng(seed)


def seed_of(task, language):
    return ks.Candidate(language, task.seeds[language].source)


@needs_opencl
def test_reference_and_seed_match_numpy_on_relu():
    task = ks.Task.load("relu")
    x = rng(1).standard_normal(3001, dtype=np.float32)
    for candidate in (None, seed_of(task, "opencl")):
        out = ks.run_kernel(task, candidate, x=x, backend="opencl")
        assert list(out) == ["y"]
        assert out["y"].dtype == np.float32 and out["y"].shape == (3001,)
        np.testing.assert_array_equal(out["y"], np.maximum(x, 0))


@needs_opencl
def test_row_sum_on_a_matrix_from_numpy_and_from_dlpack_producers():
    task = ks.Task.load("row_sum")
    x = rng(2).standard_normal((5, 1023), dtype=np.float32)
    runner = ks.KernelRunner(task, seed_of(task, "opencl"))
    assert runner.backend == "opencl" and not runner.supports_device_tensors
    assert runner.infer_sizes(x=x) == {"M": 5, "K": 1023}
    expected = x.astype(np.float64).sum(axis=1)
    for given in (x, DLPackOnly(x), x.tolist()):
        y = runner.run(x=given)["y"]
        np.testing.assert_allclose(y, expected, atol=1e-3, rtol=1e-4)
    # A non-contiguous host array is copied: the transposed view of a transposed copy.
    strided = np.ascontiguousarray(x.T).T
    assert not strided.flags.c_contiguous
    np.testing.assert_allclose(runner.run(x=strided)["y"], expected, atol=1e-3, rtol=1e-4)
    # Results into the caller's array.
    into = np.full(5, -7.0, dtype=np.float32)
    assert runner.run({"x": x}, out={"y": into}) == {}
    np.testing.assert_allclose(into, expected, atol=1e-3, rtol=1e-4)
    # The reference, by source string.
    source = task.references["opencl"].source
    np.testing.assert_allclose(ks.run_kernel(task, source, x=x, backend="opencl")["y"], expected, atol=1e-3)


@needs_opencl
def test_mistakes_are_named():
    task = ks.Task.load("row_sum")
    runner = ks.KernelRunner(task, backend="opencl")
    x = np.ones((3, 4), dtype=np.float32)
    with pytest.raises(ks.ValidationError, match=r"input x is float64.*declares it float32"):
        runner.run(x=x.astype(np.float64))
    with pytest.raises(ks.ValidationError, match="input x of task row_sum is missing"):
        runner.run()
    with pytest.raises(ks.ValidationError, match='no tensor "z"'):
        runner.run(x=x, z=x)
    with pytest.raises(ks.ValidationError, match=r"tensor x has shape \(12\) \(1 dimension\)"):
        runner.run(x=x.reshape(12))
    with pytest.raises(ks.ValidationError, match="inconsistent size M"):
        runner.run(x=x, out={"y": np.empty(4, dtype=np.float32)})
    with pytest.raises(ks.ValidationError, match="not C-contiguous"):
        runner.run(x=x, out={"y": np.empty(6, dtype=np.float32)[::2]})
    with pytest.raises(ks.ValidationError, match="complex64"):
        runner.run(x=x.astype(np.complex64))


def test_task_infer_sizes_and_data_cases_round_trip():
    task = ks.Task.load("row_sum")
    assert task.infer_sizes({"x": (4, 8)}) == {"M": 4, "K": 8}
    with pytest.raises(ks.ValidationError, match="cannot infer the size K"):
        task.infer_sizes({"y": (4,)})
    before = len(task.check_sizes)
    x = rng(3).standard_normal((6, 10), dtype=np.float32)
    case = task.add_case({"x": x}, expected={"y": x.sum(axis=1)})
    assert (case.name, case.sizes) == ("user case 0", "user case 0")
    assert case.input_names == ["x"] and case.expected_names == ["y"]
    assert len(task.check_sizes) == before + 1 and task.check_sizes[-1].sizes == {"M": 6, "K": 10}
    back = ks.Task.from_json(task.to_json())
    assert [c.name for c in back.cases] == ["user case 0"]
    assert back.to_json() == task.to_json()
    with pytest.raises(ks.ValidationError, match="x is missing"):
        task.add_case({})
    with pytest.raises(ks.ValidationError, match="is float64"):
        task.add_case({"x": x.astype(np.float64)})


def fast_options(isolate):
    return ks.EvaluatorOptions(
        backend="opencl",
        correctness_trials=1,
        min_samples=3,
        max_samples=10,
        screen_budget_seconds=0.05,
        isolate=isolate,
        compile_threads=1,
        cache_dir=CACHE_DIR,
    )


@needs_opencl
@pytest.mark.parametrize("isolate", [False, True])
def test_the_evaluator_checks_the_users_case(isolate):
    task = ks.Task.load("relu")
    task.timing_sizes = ks.SizeConfig("timing", {"N": 65536})  # quick on a CPU device
    x = rng(4).standard_normal(512, dtype=np.float32)
    x[100] = 1234.5
    task.add_case({"x": x})
    evaluator = ks.create_evaluator(fast_options(isolate))
    good = evaluator.evaluate(task, seed_of(task, "opencl"))
    assert good.status == ks.Status.ok, good.message
    assert good.correctness.checks[-1].inputs == "user case 0"
    bad = evaluator.evaluate(task, ks.Candidate("opencl", RELU_WRONG_ON_ONE_VALUE))
    assert bad.status == ks.Status.incorrect
    assert "user case 0" in bad.message and "index 100" in bad.message
    assert all(check.passed for check in bad.correctness.checks[:-1])
    assert bad.correctness.checks[-1].outputs[0].first_mismatch == 100


def cuda_array_module():
    """torch or cupy with a CUDA device, else None."""
    try:
        import torch

        if torch.cuda.is_available():
            return "torch"
    except ImportError:
        pass
    try:
        import cupy

        if cupy.cuda.runtime.getDeviceCount() > 0:
            return "cupy"
    except Exception:  # noqa: BLE001  (cupy raises its own errors without a driver)
        pass
    return None


@pytest.mark.gpu
@needs_cuda
def test_cuda_tensors_are_used_in_place():
    module = cuda_array_module()
    if module is None:
        pytest.skip("neither torch nor cupy with CUDA is importable")
    task = ks.Task.load("row_sum")
    host = rng(5).standard_normal((17, 4097), dtype=np.float32)
    expected = host.astype(np.float64).sum(axis=1)
    if module == "torch":
        import torch

        x = torch.from_numpy(host).cuda()
        y = torch.empty(17, dtype=torch.float32, device="cuda")
        to_numpy = lambda t: t.cpu().numpy()  # noqa: E731
        strided = torch.from_numpy(np.ascontiguousarray(host.T)).cuda().T
        as_float64 = x.double()
    else:
        import cupy

        x = cupy.asarray(host)
        y = cupy.empty(17, dtype=cupy.float32)
        to_numpy = cupy.asnumpy
        strided = cupy.asarray(np.ascontiguousarray(host.T)).T
        as_float64 = x.astype(cupy.float64)
    runner = ks.KernelRunner(task, seed_of(task, "cuda"), backend="cuda")
    assert runner.supports_device_tensors
    assert runner.run(x=x, out={"y": y}) == {}
    np.testing.assert_allclose(to_numpy(y), expected, atol=1e-3, rtol=1e-4)
    np.testing.assert_allclose(runner.run(x=x)["y"], expected, atol=1e-3, rtol=1e-4)
    with pytest.raises(ks.ValidationError, match="not C-contiguous"):
        runner.run(x=strided)
    with pytest.raises(ks.ValidationError, match="float64"):
        runner.run(x=as_float64)
    # A task case from a CUDA tensor is copied to the host.
    relu = ks.Task.load("relu")
    relu.add_case({"x": x.reshape(-1)})
    assert relu.cases[0].sizes == "user case 0"


@needs_opencl
def test_cuda_tensors_on_the_opencl_backend_are_refused():
    module = cuda_array_module()
    if module is None:
        pytest.skip("neither torch nor cupy with CUDA is importable")
    if module == "torch":
        import torch

        x = torch.ones((2, 3), device="cuda")
    else:
        import cupy

        x = cupy.ones((2, 3), dtype=cupy.float32)
    with pytest.raises(ks.ValidationError, match="device memory"):
        ks.run_kernel(ks.Task.load("row_sum"), x=x, backend="opencl")


def test_a_triton_file_picks_the_cuda_backend_and_says_why_it_cannot_run(tmp_path):
    import pathlib
    import shutil

    source = pathlib.Path(__file__).resolve().parents[2] / "docs" / "examples" / "vector_add.py"
    candidate = tmp_path / "k.py"
    shutil.copyfile(source, candidate)
    task = ks.Task.load("relu")
    x = np.linspace(-1.0, 1.0, 64, dtype=np.float32)
    # A Triton file on the opencl backend is refused, naming the backend it runs on.
    with pytest.raises(ks.ValidationError, match="written in triton, which runs on the cuda backend, not on opencl"):
        ks.KernelRunner(task, candidate, backend="opencl")
    if backend_available("cuda"):
        pytest.skip("this machine has a CUDA device: the file would be loaded")
    cuda = next(b for b in ks.devices() if b.name == "cuda")
    with pytest.raises(ks.BackendUnavailableError) as raised:
        ks.run_kernel(task, candidate, x=x)
    assert cuda.reason.split(":")[0] in str(raised.value)
