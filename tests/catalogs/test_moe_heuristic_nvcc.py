"""Cross-check the generator against the real C++: compile FlashInfer's own cutlass_heuristic.cpp
(host code only, from a flashinfer-python wheel, with its bundled CUTLASS headers) into a tiny
driver that prints get_candidate_configs(sm, 1, flags), and compare with what the Python scanner
and evaluator read out of the same file.

Needs nvcc and a wheel: $TILETUNE_FLASHINFER_WHEEL, or the newest flashinfer_python-*.whl under
/tmp/fi-wheels (`pip download --no-deps flashinfer-python==0.7.2.post1 -d /tmp/fi-wheels`).
One compile, about 40 s on 2 cores.
"""

from __future__ import annotations

import glob
import os
import re
import subprocess
import zipfile
from pathlib import Path

import pytest

from tools.catalogs import cpp
from tools.catalogs import moe as X
from tools.catalogs.sources import Wheel


def _wheel():
    w = os.environ.get("TILETUNE_FLASHINFER_WHEEL")
    if w and os.path.exists(w):
        return w
    found = sorted(glob.glob("/tmp/fi-wheels/flashinfer_python-*.whl"))
    return found[-1] if found else None


WHEEL = _wheel()
pytestmark = [pytest.mark.nvcc, pytest.mark.skipif(WHEEL is None, reason="no flashinfer-python wheel available")]

DRIVER = r"""
#include "tensorrt_llm/kernels/cutlass_kernels/cutlass_heuristic.h"
#include <cstdio>
#include <cstdlib>
using namespace tensorrt_llm::cutlass_extensions;
int main(int argc, char** argv) {
  auto v = tensorrt_llm::kernels::cutlass_kernels::get_candidate_configs(
      atoi(argv[1]), 1, static_cast<CutlassGemmConfig::CandidateConfigTypeParam>(atoi(argv[2])));
  for (auto& c : v)
    printf("%d %d %d %d %d %d %d %d %d %d %d %d %d\n", (int)c.is_tma_warp_specialized, (int)c.tile_config_sm80,
           (int)c.stages, (int)c.tile_config_sm90, (int)c.tile_config_sm100, (int)c.tile_config_sm120,
           (int)c.cluster_shape, (int)c.dynamic_cluster_shape, (int)c.fallback_cluster_shape,
           (int)c.epilogue_schedule, (int)c.sm_version, (int)c.mainloop_schedule, (int)c.enableCudaKernel);
  return 0;
}
"""
# cudaUtils.h includes cublasLt.h only for this enum; the machine has no cuBLAS headers.
CUBLAS_STUB = """#pragma once
typedef enum { CUBLAS_STATUS_SUCCESS = 0, CUBLAS_STATUS_NOT_INITIALIZED = 1, CUBLAS_STATUS_ALLOC_FAILED = 3,
  CUBLAS_STATUS_INVALID_VALUE = 7, CUBLAS_STATUS_ARCH_MISMATCH = 8, CUBLAS_STATUS_MAPPING_ERROR = 11,
  CUBLAS_STATUS_EXECUTION_FAILED = 13, CUBLAS_STATUS_INTERNAL_ERROR = 14, CUBLAS_STATUS_NOT_SUPPORTED = 15,
  CUBLAS_STATUS_LICENSE_ERROR = 16 } cublasStatus_t;
"""


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    d = tmp_path_factory.mktemp("heur")
    with zipfile.ZipFile(WHEEL) as zf:
        names = [n for n in zf.namelist() if n.startswith(("flashinfer/data/csrc/nv_internal/", "flashinfer/data/cutlass/include/"))]
        zf.extractall(d, names)
    data = d / "flashinfer/data"
    ni = data / "csrc/nv_internal"
    (d / "stub").mkdir()
    (d / "stub/cublasLt.h").write_text(CUBLAS_STUB)
    (d / "stub/cublas_v2.h").write_text("#pragma once\n")
    (d / "driver.cpp").write_text(DRIVER)
    inc = [d / "stub", ni, ni / "include", ni / "tensorrt_llm/cutlass_extensions/include",
           ni / "tensorrt_llm/kernels/cutlass_kernels/include", data / "cutlass/include"]
    srcs = [d / "driver.cpp", ni / "tensorrt_llm/kernels/cutlass_kernels/cutlass_heuristic.cpp",
            ni / "cpp/common/tllmException.cpp", ni / "cpp/common/logger.cpp", ni / "cpp/common/stringUtils.cpp"]
    cmd = ["nvcc", "-std=c++17", "-include", "cmath", "-DENABLE_BF16", "-DENABLE_FP8", "-DENABLE_FP4",
           *[f"-I{p}" for p in inc], *map(str, srcs), "-o", str(d / "drv")]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    sm80_names = re.search(r"enum class CutlassTileConfig\s*\{([^}]*)\}",
                           cpp.strip_comments((ni / "tensorrt_llm/cutlass_extensions/include/cutlass_extensions/gemm_configs.h").read_text()))
    order = [n.strip().split("=")[0].strip() for n in sm80_names.group(1).split(",") if n.strip()]
    mainloop = re.search(r"enum class MainloopScheduleType\s*\{([^}]*)\}",
                         cpp.strip_comments((ni / "tensorrt_llm/cutlass_extensions/include/cutlass_extensions/gemm_configs.h").read_text()))
    sched = [n.strip().split("=")[0].strip() for n in mainloop.group(1).split(",") if n.strip()]
    return d / "drv", ({name: i for i, name in enumerate(order)}, {name: i for i, name in enumerate(sched)})


def _enc(name):
    m, n, k = X.enum_shape(name)
    return m * 1000000 + n * 1000 + k


def _python_rows(cfgs, index):
    sm80_index, sched_index = index
    epi = {"AUTO": 0, "NO_SMEM": 1, "TMA": 2}
    rows = []
    for c in cfgs:
        if c.style == "sm80":
            rows.append(("sm80", sm80_index[c.tile], c.stages, int(c.cuda_kernel)))
        else:
            dyn = 0 if c.dynamic_cluster in (None, "Undefined") else _enc(c.dynamic_cluster)
            fb = 0 if c.fallback_cluster in (None, "Undefined") else _enc(c.fallback_cluster)
            rows.append(("tma", _enc(c.tile), _enc(c.cluster), dyn, fb, epi[c.epilogue], c.sm, sched_index[c.mainloop]))
    return rows


def _cpp_rows(out, sm):
    rows = []
    for line in out.strip().splitlines():
        tma, t80, st, t90, t100, t120, cl, dyn, fb, epi, smv, main, cuda = map(int, line.split())
        if not tma:
            rows.append(("sm80", t80, st, cuda))
        else:
            tile = t90 if sm == 90 else t100 if 100 <= sm < 120 else t120
            rows.append(("tma", tile, cl, dyn, fb, epi, smv if smv > 0 else 120, main))
    return rows


F = X.FLAGS
CASES = [
    (90, F["GROUPED_GEMM"] | F["HOPPER"]),
    (90, F["GROUPED_GEMM"] | F["HOPPER"] | F["FP8_ONLY"]),
    (90, F["GROUPED_GEMM"]),  # SM80-style bf16
    (90, F["GROUPED_GEMM"] | F["HOPPER"] | F["WEIGHT_ONLY"]),  # SM90 mixed input: W4A8, W4A16 MXFP4
    (90, F["GROUPED_GEMM"] | F["HOPPER"] | F["WEIGHT_ONLY"] | F["FP8FP4_MIXED"]),  # humming MXFP4 x FP8
    (90, F["GROUPED_GEMM"] | F["WEIGHT_ONLY"]),  # SM80-style weight-only (bf16 x int4 / fp8) + cuda-kernel entry
    (100, F["GROUPED_GEMM"] | F["BLACKWELL"]),
    (100, F["GROUPED_GEMM"] | F["BLACKWELL"] | F["FP8_ONLY"]),
    (100, F["GROUPED_GEMM"] | F["BLACKWELL"] | F["FP4_ONLY"]),
    (103, F["GROUPED_GEMM"] | F["BLACKWELL"] | F["FP4_ONLY"]),
    (120, F["GROUPED_GEMM"] | F["BLACKWELL"] | F["FP4_ONLY"]),
    (120, F["GROUPED_GEMM"] | F["BLACKWELL"] | F["FP4_ONLY"] | F["FP8FP4_MIXED"] | F["WEIGHT_ONLY"]),
    (120, F["GROUPED_GEMM"] | F["FP8_ONLY"]),  # SM89-style FP8 on SM120
    (100, F["GROUPED_GEMM"] | F["FP8_ONLY"]),  # none
]


def test_python_reading_equals_compiled_cpp(built):
    drv, index = built
    rel = Wheel(Path(WHEEL))
    heur = X.Heuristic(rel, X.Checker(rel))
    for sm, flags in CASES:
        out = subprocess.run([str(drv), str(sm), str(flags)], capture_output=True, text=True, check=True).stdout
        cpp = _cpp_rows(out, sm)
        py = _python_rows(heur.dispatch(sm, flags)[1], index)
        assert py == cpp, (sm, flags, len(py), len(cpp))
    assert Path(drv).exists()
