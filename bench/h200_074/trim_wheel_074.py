"""Trim the flashinfer-python 0.7.4 wheel (101 MB) to fit the 64 MiB device transfer.

bench/retry_h200/trim_wheel.py keeps what `import flashinfer` and the `gemm` + `trtllm_utils` JIT
modules need, for 0.7.2.post1. 0.7.4 also ships about 18 MB (compressed) of CUDA/C++ sources
outside flashinfer/data/ (experimental/, cake_*_backend/csrc, moe_ep/kernel_src, ...), which other
backends JIT-compile and these two modules never read; they are dropped too. Python files stay, so
every import works as from the full wheel.

Usage: python3 bench/h200_074/trim_wheel_074.py IN.whl OUT.whl
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "retry_h200"))
import trim_wheel  # noqa: E402  (bench/retry_h200/trim_wheel.py)

SOURCE_SUFFIXES = (".cu", ".cuh", ".h", ".hpp", ".c", ".cc", ".cpp", ".inl")
_keep_for_072 = trim_wheel.keep


def keep(name: str) -> bool:
    if name.startswith("flashinfer/") and not name.startswith("flashinfer/data/") and name.endswith(SOURCE_SUFFIXES):
        return False
    return _keep_for_072(name)


if __name__ == "__main__":
    trim_wheel.keep = keep
    trim_wheel.main(sys.argv[1], sys.argv[2])
