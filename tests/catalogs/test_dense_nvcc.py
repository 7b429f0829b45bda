"""Cross-check the extractor against the C++ compiler: build a host probe that calls FlashInfer's
own SM120 FP4 and MXFP8 `getConfigs()` (from a release's shipped headers, with its bundled
CUTLASS) and compare its output with the shipped catalog for that release.

Needs nvcc and an unpacked flashinfer-python (the wheel's `flashinfer/data/{include,cutlass}`):
set TILETUNE_FLASHINFER_ROOT to the directory holding `flashinfer/`, or have flashinfer-python
installed. One compile, about 20-60 s on the 2-core machines; skipped where either is missing.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tiletune import catalogs
from tools.catalogs import dense as ex
from tools.catalogs import sources

PROBE = r"""
#include <cstdio>
#include <cuda_fp16.h>
#include <cuda_bf16.h>
#include "flashinfer/gemm/fp4_gemm_cutlass_template_sm120.h"
#include "flashinfer/gemm/mxfp8_gemm_cutlass_template_sm120.h"
using namespace flashinfer::gemm;
template <class R> void dump(const char* name) {
  // qualified, non-virtual call: only getConfigs() is instantiated, not the kernels behind the vtable
  auto cs = static_cast<R const*>(nullptr)->R::getConfigs();
  for (size_t i = 0; i < cs.size(); ++i)
    printf("%s %d %d %d %d\n", name, (int)cs[i].tile_config_sm120, (int)cs[i].cluster_shape,
           (int)cs[i].swap_ab, (int)cs[i].use_stream_k);
}
int main() {
  dump<CutlassFp4GemmRunner<__nv_bfloat16, FP4GemmType::W4A4_NVFP4_NVFP4>>("fp4_gemm");
  dump<CutlassMxfp8GemmRunnerSm120<__nv_bfloat16>>("mxfp8_gemm");
  return 0;
}
"""

# CUTLASS's tools/util headers include curand; the probe never draws random numbers, so
# declarations are enough where the CUDA toolkit ships without cuRAND headers.
CURAND_STUB = """#pragma once
struct curandState_t { unsigned long long s; };
__device__ void curand_init(unsigned long long, unsigned long long, unsigned long long, curandState_t*);
__device__ float curand_uniform(curandState_t*);
__device__ double curand_uniform_double(curandState_t*);
__device__ float curand_normal(curandState_t*);
__device__ double curand_normal_double(curandState_t*);
"""


def _root():
    env = os.environ.get("TILETUNE_FLASHINFER_ROOT")
    root = Path(env) if env else sources.find_installed()
    if root is None or not (root / "flashinfer" / "data" / "cutlass" / "include").is_dir():
        return None
    return root


@pytest.mark.nvcc
def test_compiled_getconfigs_match_catalog(tmp_path):
    root = _root()
    if root is None:
        pytest.skip("no unpacked flashinfer-python with data/cutlass (set TILETUNE_FLASHINFER_ROOT)")
    src = sources.Unpacked(root)
    version = src.version
    if catalogs.canonical_version(version) is None:
        pytest.skip(f"flashinfer {version} has no shipped catalog")
    d = root / "flashinfer" / "data"
    stub = tmp_path / "stub"
    stub.mkdir()
    (stub / "curand_kernel.h").write_text(CURAND_STUB)
    (tmp_path / "probe.cu").write_text(PROBE)
    cmd = [shutil.which("nvcc") or "nvcc", "-std=c++17", "-gencode=arch=compute_120a,code=sm_120a",
           f"-I{stub}", f"-I{d / 'include'}", f"-I{d / 'cutlass' / 'include'}",
           f"-I{d / 'cutlass' / 'tools' / 'util' / 'include'}", f"-I{d / 'csrc'}",
           "-o", str(tmp_path / "probe"), str(tmp_path / "probe.cu")]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    out = subprocess.run([str(tmp_path / "probe")], capture_output=True, text=True, check=True).stdout.split("\n")
    compiled: dict[str, list[tuple[int, int, bool, bool]]] = {}
    for line in filter(None, out):
        op, t, c, swap, sk = line.split()
        compiled.setdefault(op, []).append((int(t), int(c), swap == "1", sk == "1"))

    enums = ex.parse_config_header(src.read("include/flashinfer/gemm/cutlass_gemm_configs.h")).enums
    tile_v, cl_v = enums["CutlassTileConfigSM120"], enums["ClusterShape"]
    for op, runner in (("fp4_gemm", "CutlassFp4GemmRunner"), ("mxfp8_gemm", "CutlassMxfp8GemmRunner")):
        (cat,) = catalogs.lookup(version, "sm120", op, runner)
        shipped = [(tile_v[c.name], cl_v["ClusterShape_%dx%dx%d" % c.cluster], c.swap_ab, c.stream_k)
                   for c in cat.configs]
        assert shipped == compiled[op], f"{version} {op}: catalog differs from the compiled getConfigs()"
