"""The matrix-product seeds are generated from one template (tools/generate-matmul-seeds.py): the files
shipped in tasks/ must be what the template writes, or the fp16 and bf16 seeds have drifted apart."""
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_shipped_matmul_seeds_are_the_generated_ones(tmp_path):
    subprocess.run([sys.executable, str(ROOT / "tools" / "generate-matmul-seeds.py"), str(tmp_path)], check=True,
                   capture_output=True)
    for task in ("matmul_fp16", "matmul_bf16"):
        generated = (tmp_path / task / "seed.cu").read_text()
        shipped = (ROOT / "tasks" / task / "seed.cu").read_text()
        assert generated == shipped, (f"tasks/{task}/seed.cu differs from what tools/generate-matmul-seeds.py "
                                      "writes: edit the template and regenerate")
