"""The trimmed flashinfer-python 0.7.2.post1 wheel for the two-GPU run: bench/retry_h200/trim_wheel.py's
selection plus the sources of the two bf16 JIT modules (mm_bf16_cublaslt.cu, tinygemm2.cu; both
include only headers that selection already keeps).

Usage: python3 bench/retry_h200_x2/trim_wheel.py .whl/orig/flashinfer_python-0.7.2.post1-py3-none-any.whl \
           .whl/fi2/flashinfer_python-0.7.2.post1-py3-none-any.whl
"""

import importlib.util
import sys
from pathlib import Path

_spec = importlib.util.spec_from_file_location("trim_h200", Path(__file__).resolve().parents[1] / "retry_h200" / "trim_wheel.py")
trim = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(trim)
trim.KEEP_CSRC_SOURCES |= {"mm_bf16_cublaslt.cu", "tinygemm2.cu"}

if __name__ == "__main__":
    trim.main(sys.argv[1], sys.argv[2])
