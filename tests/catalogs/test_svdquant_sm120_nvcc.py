"""Cross-check the SM120 SVDQuant catalog against the C++ compiler: a host probe built from the
FlashInfer 0.7.4 wheel's own headers (and bundled CUTLASS) prints kRuntimeTacticTableSm120 and,
through the release's own SVDQ_SM120_DISPATCH macro (pasted from its .cu), each kernel's tile,
SwapAB, scheduler, row80 flag and the LoRA rank it stages in a rank-64 module; the shipped catalog
must say the same.

Marked nvcc and pypi: needs nvcc and the 0.7.4 wheel (101 MB from PyPI, cached like the other
wheel tests). One compile, about 35 s on 2 cores."""

from __future__ import annotations

import re
import shutil
import subprocess
import zipfile

import pytest

from tiletune import catalogs

PROBE = r"""#include <cstdio>
#include "flashinfer/gemm/nvfp4_svdquant_gemm_template_sm120.h"
namespace sd = flashinfer::gemm::svdquant_sm120;
template <class C> void cfg(int kid) {
  using S = typename C::MmaTileShape;
  printf("K %d %d %d %d %d %d %d %d %d\n", kid, (int)cute::size<0>(S{}), (int)cute::size<1>(S{}), (int)cute::size<2>(S{}),
         (int)C::SwapAB, (int)std::is_same_v<typename C::TileSchedulerTag, cutlass::gemm::StreamKScheduler>,
         (int)std::is_same_v<typename C::TileSchedulerTag, cutlass::gemm::StaticPersistentScheduler>,
         (int)C::IsProductionRow80, C::LoRaRank);
}
MACRO
void dump(int kid) { SVDQ_SM120_DISPATCH(kid, return cfg<C>(kid)) }
int main() {
  for (int t = 0; t < sd::kNvfp4SvdquantGemmSm120NumTactics; ++t) {
    auto r = sd::kRuntimeTacticTableSm120[t];
    printf("T %d %d %d %d %d\n", t, r.kernel_id, r.splits, (int)r.raster, r.swizzle);
  }
  for (int k = 0; k < sd::kNvfp4SvdquantGemmSm120NumKernels; ++k) dump(k);
  return 0;
}
"""
KEEP = ("flashinfer/data/include/", "flashinfer/data/csrc/", "flashinfer/data/cutlass/include/",
        "flashinfer/data/cutlass/tools/util/include/")


@pytest.mark.nvcc
@pytest.mark.pypi
def test_compiled_table_matches_catalog(flashinfer_wheel, tmp_path):
    nvcc = shutil.which("nvcc")
    if nvcc is None:
        pytest.skip("nvcc not on PATH")
    wheel = flashinfer_wheel("0.7.4")
    with zipfile.ZipFile(wheel.path) as z:
        z.extractall(tmp_path, [n for n in z.namelist() if n.startswith(KEEP)])
    d = tmp_path / "flashinfer" / "data"
    cu = (d / "csrc" / "nvfp4_svdquant_gemm_cutlass_sm120.cu").read_text()
    macro = re.search(r"#define SVDQ_SM120_DISPATCH\(kernel_id, EXPR\)(?:[^\n]*\\\n)*[^\n]*\n", cu)
    assert macro, "SVDQ_SM120_DISPATCH not found in the 0.7.4 .cu"
    (tmp_path / "probe.cu").write_text(PROBE.replace("MACRO", macro.group(0)))
    cmd = [nvcc, "-std=c++17", "-w", "-gencode=arch=compute_120a,code=sm_120a", "-DSVDQ_SM120_LORA_RANK=64",
           f"-I{d / 'include'}", f"-I{d / 'cutlass' / 'include'}", f"-I{d / 'cutlass' / 'tools' / 'util' / 'include'}",
           f"-I{d / 'csrc'}", "-o", str(tmp_path / "probe"), str(tmp_path / "probe.cu")]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
    assert r.returncode == 0, r.stderr[-3000:]
    lines = subprocess.run([str(tmp_path / "probe")], capture_output=True, text=True, check=True).stdout.split("\n")
    rows = [tuple(map(int, ln.split()[2:])) for ln in lines if ln.startswith("T ")]
    kernels = {int(ln.split()[1]): tuple(map(int, ln.split()[2:])) for ln in lines if ln.startswith("K ")}

    (r32,) = catalogs.lookup("0.7.4", "sm120", "nvfp4_svdquant_gemm_sm120_v3", "Nvfp4SvdquantGemmRunner")
    (r64,) = catalogs.lookup("0.7.4", "sm120", "nvfp4_svdquant_gemm_sm120_v3_r64", "Nvfp4SvdquantGemmRunner")
    raster = {"Heuristic": 0, "AlongM": 1, "AlongN": 2}
    assert len(rows) == len(r32.configs) == 83
    for t, ((kid, splits, rast, swizzle), cfg, raw) in enumerate(zip(rows, r32.configs, r32.raw)):
        assert (raw["kernel_id"], raw["splits"], raster[raw["raster"]], raw["swizzle"]) == (kid, splits, rast, swizzle), t
        m, n, k, swap, streamk, static, row80, rank = kernels[kid]
        assert cfg.tile == (m, n, k) and cfg.swap_ab == bool(swap) and cfg.stream_k == bool(streamk), t
        assert raw["tile_scheduler"] == ("StaticPersistentScheduler" if static else "StreamKScheduler" if streamk
                                         else "PersistentScheduler"), t
        assert cfg.stages == (4 if row80 else None), t
        # a rank-64 module: the config stages `rank` LoRA columns; below 64 its can_implement refuses
        assert (r64.known_failures[t] is not None) == (rank < 64), t
