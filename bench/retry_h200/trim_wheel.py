"""Make a trimmed copy of the flashinfer-python wheel that fits the 64 MiB device transfer.

The H200 run needs only FlashInfer's Python package and the C++ sources of two JIT modules:
`gemm` (bmm_fp8's cuBLAS path: bmm_fp8.cu, group_gemm.cu, flashinfer_gemm_binding.cu) and
`trtllm_utils` (the autotuner's delay kernel). Everything else under flashinfer/data/csrc (about
31 MB of the 62 MB wheel, compressed) and CUTLASS's examples/tools/docs are dropped; headers
(data/include, data/cutlass/include, data/cccl, data/spdlog, csrc/*.h, csrc/nv_internal headers)
stay, so the two modules build exactly as from the full wheel.

The output is a zip with the same member names (compression kept); RECORD is rewritten to list
only what remains, so `pip install --no-deps --target` accepts it.

Usage: python3 bench/retry_h200/trim_wheel.py IN.whl OUT.whl
"""

from __future__ import annotations

import base64
import hashlib
import sys
import zipfile

CSRC = "flashinfer/data/csrc/"
KEEP_CSRC_SOURCES = {
    "bmm_fp8.cu",
    "group_gemm.cu",
    "flashinfer_gemm_binding.cu",
    "nv_internal/tensorrt_llm/kernels/delayStream.cu",
    "nv_internal/cpp/common/envUtils.cpp",
    "nv_internal/cpp/common/logger.cpp",
    "nv_internal/cpp/common/stringUtils.cpp",
    "nv_internal/cpp/common/tllmException.cpp",
}
HEADER_SUFFIXES = (".h", ".hpp", ".cuh", ".inl")
DROP_PREFIXES = (
    "flashinfer/data/cutlass/examples/",
    "flashinfer/data/cutlass/python/",
    "flashinfer/data/cutlass/tools/",
    "flashinfer/data/cutlass/test/",
    "flashinfer/data/cutlass/docs/",
    "flashinfer/data/cccl/ci/",
    "flashinfer/data/cccl/python/",
)


def keep(name: str) -> bool:
    """True if a wheel member is needed to import flashinfer and build `gemm` + `trtllm_utils`."""
    if name.startswith("flashinfer/data/cutlass/tools/util/include/"):
        return True  # on every JIT module's include path (cpp_ext.get_system_includes)
    if name.startswith(DROP_PREFIXES):
        return False
    if name.startswith(CSRC):
        rel = name[len(CSRC):]
        if rel in KEEP_CSRC_SOURCES:
            return True
        # headers next to the kept sources; nv_internal headers are on trtllm_utils' include path
        if "/" not in rel:
            return rel.endswith(HEADER_SUFFIXES)
        return rel.startswith("nv_internal/") and rel.endswith(HEADER_SUFFIXES)
    return True


def main(src: str, dst: str) -> None:
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w") as zout:
        record_name = next(n for n in zin.namelist() if n.endswith(".dist-info/RECORD"))
        rows = []
        for info in zin.infolist():
            if info.filename == record_name or not keep(info.filename):
                continue
            data = zin.read(info)
            zout.writestr(info, data, compress_type=zipfile.ZIP_DEFLATED)
            digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
            rows.append(f"{info.filename},sha256={digest},{len(data)}")
        rows.append(f"{record_name},,")
        zout.writestr(record_name, "\n".join(rows) + "\n", compress_type=zipfile.ZIP_DEFLATED)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
