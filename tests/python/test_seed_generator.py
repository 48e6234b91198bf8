"""Seeds generated from one template must be what the template writes, or the copies have drifted apart:
the tensor-core products (tools/generate-matmul-seeds.py: matmul_fp16, matmul_bf16, and the CUDA seeds of matmul,
linear_gelu and conv2d_3x3) and the float32 FMA products (tools/generate-sgemm-seeds.py: matmul and linear_gelu for MACA and
OpenCL)."""
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("generator, files", [
    ("generate-matmul-seeds.py", ["matmul_fp16/seed.cu", "matmul_bf16/seed.cu", "matmul/seed.cu", "linear_gelu/seed.cu",
                                  "conv2d_3x3/seed.cu"]),
    ("generate-sgemm-seeds.py", ["matmul/seed.maca", "matmul/seed.cl", "linear_gelu/seed.maca", "linear_gelu/seed.cl"]),
])
def test_shipped_seeds_are_the_generated_ones(tmp_path, generator, files):
    subprocess.run([sys.executable, str(ROOT / "tools" / generator), str(tmp_path)], check=True, capture_output=True)
    for file in files:
        generated = (tmp_path / file).read_text()
        shipped = (ROOT / "tasks" / file).read_text()
        assert generated == shipped, f"tasks/{file} differs from what tools/{generator} writes: edit the template and regenerate"
