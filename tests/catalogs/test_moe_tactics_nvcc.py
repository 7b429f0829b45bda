"""Cross-check every fused-MoE list tiletune ships for FlashInfer 0.7.4 against the C++ compiler: a
host probe built from the 0.7.4 wheel's own sources (moe_kernels.h, moe_gemm_template_dispatch.h,
cutlass_heuristic.cpp, its bundled CUTLASS) prints `CutlassMoeFCRunner<T, W, ...>::getTactics(sm,
GEMM_1 / GEMM_2)` for 12 type pairs on sm89, sm90, sm100, sm103, sm107, sm110 and sm120; each list
must equal the shipped one config for config (GEMM2 as the static getTactics gives it: with the
finalize copies where mayHaveFinalizeFused(sm)). What the probe prints and tiletune has no list for
must be a pair tiletune leaves out on purpose (named below).

Marked nvcc and pypi (the 0.7.4 wheel, 101 MB, cached like the other wheel tests). One compile,
about 1 minute on 2 cores."""

from __future__ import annotations

import re
import shutil
import subprocess
import zipfile

import pytest

from tiletune import catalogs
from tiletune.core.vocabulary import FUSED_MOE_OPS, MOE_RUNNER
from tools.catalogs import cpp

PROBE = r"""#include <cstdio>
#include "tensorrt_llm/kernels/cutlass_kernels/include/moe_kernels.h"
#include "tensorrt_llm/kernels/cutlass_kernels/moe_gemm/moe_gemm_template_dispatch.h"
namespace ck = tensorrt_llm::kernels::cutlass_kernels;
using bf16 = __nv_bfloat16;
using fp8 = __nv_fp8_e4m3;
template <class R> void dump(const char* name, int sm) {
  for (int g = 1; g <= 2; ++g)
    for (auto& c : R::getTactics(sm, g == 1 ? ck::MoeGemmId::GEMM_1 : ck::MoeGemmId::GEMM_2))
      printf("%s %d %d %d %d %d %d %d %d %d %d %d %d %d %d %d %d %d\n", name, sm, g, (int)c.is_tma_warp_specialized,
             (int)c.tile_config_sm80, (int)c.stages, (int)c.tile_config_sm90, (int)c.tile_config_sm100,
             (int)c.tile_config_sm120, (int)c.cluster_shape, (int)c.dynamic_cluster_shape, (int)c.fallback_cluster_shape,
             (int)c.epilogue_schedule, (int)c.sm_version, (int)c.mainloop_schedule, (int)c.enableCudaKernel,
             (int)c.swap_ab, (int)c.epilogue_fusion_type);
}
int main() {
  for (int sm : {89, 90, 100, 103, 107, 110, 120}) {
    dump<ck::CutlassMoeFCRunner<bf16, bf16>>("bf16 bf16", sm);
    dump<ck::CutlassMoeFCRunner<half, half>>("fp16 fp16", sm);
    dump<ck::CutlassMoeFCRunner<fp8, fp8, bf16>>("fp8 fp8", sm);
    dump<ck::CutlassMoeFCRunner<fp8, fp8, bf16, fp8, bf16, true>>("mxfp8 mxfp8", sm);
    dump<ck::CutlassMoeFCRunner<bf16, fp8>>("bf16 fp8", sm);
    dump<ck::CutlassMoeFCRunner<bf16, cutlass::uint4b_t>>("bf16 int4", sm);
    dump<ck::CutlassMoeFCRunner<half, cutlass::uint4b_t>>("fp16 int4", sm);
    dump<ck::CutlassMoeFCRunner<fp8, cutlass::uint4b_t, bf16, bf16, bf16>>("fp8 int4", sm);
    dump<ck::CutlassMoeFCRunner<ck::Fp4Type, ck::Fp4Type, bf16, bf16, bf16>>("nvfp4 nvfp4", sm);
    dump<ck::CutlassMoeFCRunner<fp8, ck::Fp4Type, bf16>>("fp8 mxfp4", sm);
    dump<ck::CutlassMoeFCRunner<bf16, ck::Fp4Type>>("bf16 mxfp4", sm);
    dump<ck::CutlassMoeFCRunner<half, ck::Fp4Type>>("fp16 mxfp4", sm);
  }
  return 0;
}
"""
# cudaUtils.h includes cublasLt.h only for this enum; the machine may have no cuBLAS headers.
CUBLAS_STUB = """#pragma once
typedef enum { CUBLAS_STATUS_SUCCESS = 0, CUBLAS_STATUS_NOT_INITIALIZED = 1, CUBLAS_STATUS_ALLOC_FAILED = 3,
  CUBLAS_STATUS_INVALID_VALUE = 7, CUBLAS_STATUS_ARCH_MISMATCH = 8, CUBLAS_STATUS_MAPPING_ERROR = 11,
  CUBLAS_STATUS_EXECUTION_FAILED = 13, CUBLAS_STATUS_INTERNAL_ERROR = 14, CUBLAS_STATUS_NOT_SUPPORTED = 15,
  CUBLAS_STATUS_LICENSE_ERROR = 16 } cublasStatus_t;
"""
# pairs the probe builds that tiletune leaves out on purpose: the SM89 module has no FP4 (no
# ENABLE_FP4), the binding refuses FP16 x MXFP4 from 0.6.16 on, MXFP8 is catalogued on Blackwell
LEFT_OUT = {("sm89", "bf16", "mxfp4"), ("sm89", "fp16", "mxfp4"), ("sm90", "mxfp8", "mxfp8"), ("sm89", "mxfp8", "mxfp8")}
LEFT_OUT |= {(a, "fp16", "mxfp4") for a in ("sm89", "sm90", "sm100", "sm103", "sm107", "sm110", "sm120")}
GEMM_CONFIGS = "flashinfer/data/csrc/nv_internal/tensorrt_llm/cutlass_extensions/include/cutlass_extensions/gemm_configs.h"


def _enums(text: str) -> dict[str, dict[str, int]]:
    out: dict[str, dict[str, int]] = {}
    for m in re.finditer(r"enum\s+class\s+(\w+)\s*(?::\s*\w+)?\s*\{([^}]*)\}", cpp.strip_comments(text)):
        vals, nxt = {}, 0
        for item in cpp.split_top(m.group(2)):
            name, _, v = item.strip().partition("=")
            if not name.strip():
                continue
            shape = re.fullmatch(r"shape_tuple_to_enum\((\d+),\s*(\d+),\s*(\d+)\)", v.strip())
            nxt = (int(shape.group(1)) * 1000000 + int(shape.group(2)) * 1000 + int(shape.group(3)) if shape
                   else int(v.strip(), 0) if v.strip() else nxt)
            vals[name.strip()] = nxt
            nxt += 1
        out[m.group(1)] = vals
    return out


def _row(c: dict, enums: dict[str, dict[str, int]]) -> tuple:
    """A shipped config as the probe prints it."""
    if c["style"] == "sm80":
        return ("sm80", enums["CutlassTileConfig"][c["name"]], c["stages"], int(bool(c.get("enable_cuda_kernel"))),
                int(c["swap_ab"]))
    sm = c["sm_version"]
    fam = "CutlassTileConfigSM90" if sm == 90 else "CutlassTileConfigSM120" if sm >= 120 else "CutlassTileConfigSM100"
    cl = enums["ClusterShape"]
    dyn = c.get("dynamic_cluster")
    fb = c.get("fallback_cluster")
    return ("tma", enums[fam][c["name"]], cl["ClusterShape_%dx%dx%d" % tuple(c.get("static_cluster") or c["cluster"])],
            cl["ClusterShape_" + dyn] if dyn and dyn != "Undefined" else cl["Undefined"],
            cl["ClusterShape_" + fb] if fb and fb != "Undefined" else cl["Undefined"],
            enums["EpilogueScheduleType"][c["epilogue_schedule"]], sm, enums["MainloopScheduleType"][c["mainloop_schedule"]],
            int(c["swap_ab"]), {"NONE": 0, "FINALIZE": 1}[c["epilogue_fusion"]])


def _probe_row(f: list[int]) -> tuple:
    tma, t80, st, t90, t100, t120, cl, dyn, fb, epi, sm, main, cuda, swap, fusion = f
    if not tma:
        return ("sm80", t80, st, cuda, swap)
    return ("tma", t90 if sm == 90 else t120 if sm >= 120 else t100, cl, dyn, fb, epi, sm, main, swap, fusion)


@pytest.mark.nvcc
@pytest.mark.pypi
def test_compiled_gettactics_match_the_catalogs(flashinfer_wheel, tmp_path):
    nvcc = shutil.which("nvcc")
    if nvcc is None:
        pytest.skip("nvcc not on PATH")
    wheel = flashinfer_wheel("0.7.4")
    with zipfile.ZipFile(wheel.path) as z:
        z.extractall(tmp_path, [n for n in z.namelist()
                                if n.startswith(("flashinfer/data/csrc/", "flashinfer/data/include/", "flashinfer/data/cutlass/include/"))])
    d = tmp_path / "flashinfer" / "data"
    ni = d / "csrc" / "nv_internal"
    (tmp_path / "stub").mkdir()
    (tmp_path / "stub" / "cublasLt.h").write_text(CUBLAS_STUB)
    (tmp_path / "stub" / "cublas_v2.h").write_text("#pragma once\n")
    (tmp_path / "probe.cu").write_text(PROBE)
    srcs = [ni / "tensorrt_llm/kernels/cutlass_kernels/cutlass_heuristic.cpp", ni / "cpp/common/tllmException.cpp",
            ni / "cpp/common/logger.cpp", ni / "cpp/common/stringUtils.cpp"]
    inc = [tmp_path / "stub", ni, ni / "include", ni / "tensorrt_llm/cutlass_extensions/include",
           ni / "tensorrt_llm/kernels/cutlass_kernels/include", ni / "tensorrt_llm/kernels/cutlass_kernels",
           d / "cutlass/include", d / "include", d / "csrc"]
    cmd = [nvcc, "-std=c++17", "-w", "-include", "cmath", "-DENABLE_BF16", "-DENABLE_FP8", "-DENABLE_FP4",
           "-DUSING_OSS_CUTLASS_MOE_GEMM", *[f"-I{p}" for p in inc], str(tmp_path / "probe.cu"), *map(str, srcs),
           "-o", str(tmp_path / "probe")]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=1200)
    assert r.returncode == 0, r.stderr[-3000:]
    out = subprocess.run([str(tmp_path / "probe")], capture_output=True, text=True, check=True).stdout
    compiled: dict[tuple[str, str, str, int], list[tuple]] = {}
    for line in out.splitlines():
        act, weight, *nums = line.split()
        sm, gemm, *fields = map(int, nums)
        compiled.setdefault((f"sm{sm}", act, weight, gemm), []).append(_probe_row(fields))
    enums = _enums((d.parent.parent / GEMM_CONFIGS).read_text())
    checked = 0
    for (arch, act, weight, gemm), want in compiled.items():
        cats = catalogs.lookup("0.7.4", arch, FUSED_MOE_OPS[gemm - 1], MOE_RUNNER,
                               {"act": act, "weight": weight, "finalize": True})
        cats = [c for c in cats if "scaling" not in c.variant]
        if (arch, act, weight) in LEFT_OUT:
            assert not cats, (arch, act, weight)
            continue
        assert len(cats) == 1, (arch, act, weight, gemm, len(cats))
        assert [_row(dict(r), enums) for r in cats[0].raw] == want, (arch, act, weight, gemm)
        checked += 1
    assert checked >= 110  # every pair x arch x GEMM the probe builds a list for, less LEFT_OUT
