"""Fast builds of ModelNew candidates' torch extensions (python/kernelsmith/extension_build.py,
docs/kernelbench-modelnew.md, "Builds") through the real path: the evaluator's builder builds a candidate's
constant load_inline calls into the shared cache, the confined runner loads them from there and cannot write
there, and the results stay correct."""

from __future__ import annotations

import os
import pathlib
import sys

import pytest

import kernelsmith as ks
from kernelsmith import extension_build as eb
from backends import needs_opencl
from test_model_new import CPP_EPILOGUE

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "bench"))

import bench_model_new as bench  # noqa: E402  (its problem and candidates)

torch = pytest.importorskip("torch", reason="ModelNew candidates need torch (pip install kernelsmith[torch])")


def confined() -> bool:
    status = ks.sandbox_status()
    return status.enabled and any(p.name == "filesystem" and p.on for p in status.protections)


needs_sandbox = pytest.mark.skipif(not confined(), reason="the shared build cache needs the sandbox's filesystem "
                                                          "protection (ks.sandbox_status())")


@pytest.fixture(scope="module")
def setup(tmp_path_factory):
    """A level-2 problem (Linear, scale, LeakyReLU) and one evaluator whose disk cache, and so whose shared build
    cache, the tests share: the precompiled header is built once."""
    folder = tmp_path_factory.mktemp("model_new_builds")
    task = bench.make_task(ks, folder)
    options = ks.EvaluatorOptions(backend="opencl", mode="screen", correctness_trials=1, min_samples=3,
                                  max_samples=10, screen_budget_seconds=0.05, cache_dir=str(folder / "cache"))
    return task, ks.create_evaluator(options), folder / "cache" / "torch-extensions"


def key_of(source: str) -> str:
    """The key of a file's one load_inline call, as the builder and the runner compute it."""
    calls, _ = eb.static_calls(source)
    assert len(calls) == 1
    return eb.extension_key(eb.normalized_call(calls[0]))


@needs_opencl
@needs_sandbox
def test_a_second_candidate_with_the_same_extension_loads_it_prebuilt(setup):
    task, evaluator, cache = setup
    source = bench.candidate_source("cpp", 0, 2)
    library = cache / "ext" / key_of(source) / "epilogue_0.so"
    assert not library.exists()
    first = evaluator.evaluate(task, ks.Candidate("pytorch", source))
    assert first.status == ks.Status.ok, first.message + first.compile.log
    # The builder made the library in the evaluator's compile stage (and, for the first build of the cache, the
    # precompiled header); the runner loaded it instead of building.
    assert library.is_file()
    assert list((cache / "pch").glob("*/torch_extension.h.gch"))
    assert "builder: extension epilogue_0: cached" in first.compile.log, first.compile.log
    assert "runner: extension epilogue_0 loaded prebuilt from the cache" in first.compile.log
    assert "built by the runner" not in first.compile.log
    built = library.stat().st_mtime_ns

    # Another candidate (its forward differs) with the same extension: nothing is built again.
    second_source = bench.candidate_source("cpp", 2, 2)
    assert second_source != source and key_of(second_source) == key_of(source)
    second = evaluator.evaluate(task, ks.Candidate("pytorch", second_source))
    assert second.status == ks.Status.ok, second.message + second.compile.log
    assert "builder: extension epilogue_0: cached" in second.compile.log, second.compile.log
    assert "runner: extension epilogue_0 loaded prebuilt from the cache" in second.compile.log
    assert library.stat().st_mtime_ns == built
    assert second.correctness.passed and second.correctness.trials >= 1


@needs_opencl
@needs_sandbox
def test_a_candidate_cannot_plant_a_library_for_another(setup):
    """A candidate that knows the key of another's extension tries to put its own library there before that one
    is built: the runner reads the cache and cannot write it, so the write fails, and the honest candidate
    then gets the library the builder made from its own sources, and is correct."""
    task, evaluator, cache = setup
    honest = bench.candidate_source("cpp", 1, 2)
    key = key_of(honest)
    plant = ("import json, os\n"
             "cache = json.load(open('extension_cache.json'))['cache']\n"
             f"entry = os.path.join(cache, 'ext', {key!r})\n"
             "os.makedirs(entry, exist_ok=True)\n"
             "open(os.path.join(entry, 'epilogue_1.so'), 'wb').write(b'planted')\n")
    attacker = evaluator.evaluate(task, ks.Candidate("pytorch", plant + bench.candidate_source("cpp", 0, 2)))
    assert attacker.status == ks.Status.compile_error, attacker.message
    assert "PermissionError" in attacker.message, attacker.message
    assert not (cache / "ext" / key).exists()

    result = evaluator.evaluate(task, ks.Candidate("pytorch", honest))
    assert result.status == ks.Status.ok, result.message + result.compile.log
    assert "runner: extension epilogue_1 loaded prebuilt from the cache" in result.compile.log, result.compile.log
    assert b"planted" not in (cache / "ext" / key / "epilogue_1.so").read_bytes()


def test_the_builder_takes_only_constant_calls_with_plain_flags():
    source = CPP_EPILOGUE.replace('functions=["scale_mask"])', 'functions=["scale_mask"], extra_cflags=FLAGS)')
    # Constant arguments, the flags included, are found from the syntax tree alone.
    calls, skipped = eb.static_calls("FLAGS = ['-O3', '-DBLOCK=4']\n" + source)
    assert not skipped and calls[0]["extra_cflags"] == ["-O3", "-DBLOCK=4"]
    assert eb.prebuild_refusal(calls[0]) is None
    # A flag that writes a file or loads code keeps a call from being built ahead (the runner builds it).
    for flag in ("-fplugin=/tmp/x.so", "-o/tmp/elsewhere.so", "-Wl,-Map=/tmp/map", "-B/tmp", "-specs=/tmp/s",
                 "-fdump-tree-all", "--save-temps"):
        calls, _ = eb.static_calls(f"FLAGS = [{flag!r}]\n" + source)
        assert eb.prebuild_refusal(calls[0]) is not None, flag
    # Arguments computed at run time are left to the runner, which says so.
    calls, skipped = eb.static_calls("import os\nFLAGS = [os.environ['X']]\n" + source)
    assert not calls and "not a constant of the file" in skipped[0]
    # The key is the call's: another source, flag or name is another entry.
    base = eb.normalized_call({"name": "e", "cpp_sources": "int f();", "functions": ["f"]})
    assert eb.extension_key(base) == eb.extension_key(eb.normalized_call(
        {"name": "e", "cpp_sources": ["int f();"], "functions": ["f"], "verbose": True}))
    for change in ({"cpp_sources": "int g();"}, {"extra_cflags": ["-O3"]}, {"name": "e2"}):
        assert eb.extension_key(eb.normalized_call({**base, **change})) != eb.extension_key(base), change


@needs_opencl
@needs_sandbox
def test_a_build_the_builder_cannot_foresee_uses_the_precompiled_header_in_the_runner(setup):
    """A load_inline call whose arguments the file computes as it runs is built by the runner itself, with the
    precompiled header the builder made (the cache holds it once any candidate was built)."""
    task, evaluator, cache = setup
    source = bench.candidate_source("cpp", 1, 3).replace('name="epilogue_1"', 'name="epilogue_" + str(len("xyz"))')
    assert eb.static_calls(source)[0] == []
    eb_header = eb.header_path(str(cache), eb.header_key([], []))
    if not pathlib.Path(eb_header + ".gch").is_file():  # run alone: make the header the way a batch would
        warm = evaluator.evaluate(task, ks.Candidate("pytorch", bench.candidate_source("cpp", 0, 2)))
        assert warm.status == ks.Status.ok, warm.message
    result = evaluator.evaluate(task, ks.Candidate("pytorch", source))
    assert result.status == ks.Status.ok, result.message + result.compile.log
    assert "runner: extension epilogue_3 built by the runner (load_inline), with the precompiled header" in \
        result.compile.log, result.compile.log


@needs_opencl
@needs_sandbox
def test_an_extension_that_does_not_compile_is_a_compile_error_built_once(setup):
    """The builder's failed build is kept: the runner's identical call fails with the compiler's error at once
    instead of building again."""
    task, evaluator, cache = setup
    source = bench.candidate_source("cpp", 4, 5).replace("q[i] = y;", "q[i] = y + undeclared_name;")
    result = evaluator.evaluate(task, ks.Candidate("pytorch", source))
    assert result.status == ks.Status.compile_error, result.message
    assert "undeclared_name" in result.message + result.compile.log, result.message
    assert (cache / "ext" / key_of(source) / eb.FAILED_FILE).is_file()


def test_the_cache_keeps_a_bounded_number_of_libraries(tmp_path, monkeypatch):
    monkeypatch.setattr(eb, "MAX_EXTENSIONS", 10)
    for index in range(12):
        entry = tmp_path / "ext" / f"key{index:02d}"
        entry.mkdir(parents=True)
        (tmp_path / "ext" / f"key{index:02d}.lock").touch()
        os.utime(entry, (index, index))
    eb._prune_extensions(str(tmp_path))
    kept = sorted(p.name for p in (tmp_path / "ext").iterdir() if p.is_dir())
    assert kept == [f"key{index:02d}" for index in range(3, 12)]  # the oldest go, a tenth below the bound
    assert not (tmp_path / "ext" / "key00.lock").exists()
