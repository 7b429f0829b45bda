"""Catalog gaps an independent check against FlashInfer's source found, each checked here against
values read by hand in the release wheels (PyPI):
- sm107 (0.6.16 on): gemm_base.py's CUTLASS backend checks list compute capability 107 and route
  major 10 (minor != 3) to the SM100 modules, so sm107 uses the SM100 dense lists;
- bf16_gemm_pdl_auto (0.7.4): mm_bf16 with pdl=None tunes the runner list, CUTLASS bf16 runner
  included, under that op name;
- nvfp4_svdquant_gemm (0.6.16 on): 27 tactics = Nvfp4SvdquantGemmTactic values
  (nvfp4_svdquant_gemm_cutlass.h), resolve_tactic() gives kernel shape and runtime cluster, the
  kernel shape's SvdquantGemmConfig<Shape<M, N, K>, ...> the MMA tile (2-SM: M spans two CTAs);
  -1 runs tactic 0 (`tactic < 0 ? 0 : tactic` in the .cu);
- fused-MoE gemm1/gemm2 for 0.6.3 .. 0.6.6."""

from __future__ import annotations

import pytest

from tiletune import catalogs, decode
from tiletune.catalogs import moe
from tiletune.core.records import Decoded, Environment, Status, TuningRecord
from tiletune.core.vocabulary import FUSED_MOE_OPS, MOE_RUNNER

DENSE = [("fp4_gemm", "CutlassFp4GemmRunner"), ("mxfp8_gemm", "CutlassMxfp8GemmRunner"),
         ("fp8_gemm", "CutlassFp8GemmRunner"), ("bf16_gemm", "CutlassBf16GemmRunner")]
SVD = ("nvfp4_svdquant_gemm", "Nvfp4SvdquantGemmRunner")


@pytest.mark.parametrize("version", ["0.6.16", "0.6.18rc1", "0.7.4"])
@pytest.mark.parametrize("op, runner", DENSE)
def test_sm107_uses_the_sm100_lists(version, op, runner):
    (sm107,) = catalogs.lookup(version, "sm107", op, runner)
    (sm100,) = catalogs.lookup(version, "sm100", op, runner)
    assert sm107.configs == sm100.configs and sm107.fallback == sm100.fallback


@pytest.mark.parametrize("op, runner", DENSE)
def test_no_sm107_before_0_6_16(op, runner):
    assert catalogs.lookup("0.6.15.post1", "sm107", op, runner) == []


def test_bf16_gemm_pdl_auto_is_the_cutlass_bf16_list_from_0_7_4():
    for arch in ("sm100", "sm103", "sm107"):
        (pdl,) = catalogs.lookup("0.7.4", arch, "bf16_gemm_pdl_auto", "CutlassBf16GemmRunner")
        (plain,) = catalogs.lookup("0.7.4", arch, "bf16_gemm", "CutlassBf16GemmRunner")
        assert pdl.configs == plain.configs and len(pdl.configs) > 0
    assert catalogs.lookup("0.7.2.post1", "sm100", "bf16_gemm_pdl_auto", "CutlassBf16GemmRunner") == []


@pytest.mark.parametrize("version", ["0.6.16", "0.7.4"])
def test_svdquant_tactics_read_by_hand(version):
    (cat,) = catalogs.lookup(version, "sm100", *SVD)
    assert len(cat.configs) == 27 and cat.fallback == 0

    def c(i):
        d = catalogs.resolve(cat, i)
        assert isinstance(d, Decoded)
        return d.config

    # k1Sm128x256x128: 1-SM, MMA tile = CTA tile 128x256x128, cluster 1x1x1
    assert (c(0).tile, c(0).cluster, c(0).mma_tile) == ((128, 256, 128), (1, 1, 1), None)
    assert c(0).mainloop_schedule == "KernelTmaWarpSpecialized1SmNvf4Sm100"
    # k2Sm256x256x128: 2-SM MMA 256x256x128 over two 128x256x128 CTAs, cluster 2x1x1
    assert (c(1).tile, c(1).cluster, c(1).mma_tile) == ((128, 256, 128), (2, 1, 1), (256, 256, 128))
    # k2Sm256x256x256Cluster4x4
    assert (c(21).tile, c(21).cluster, c(21).mma_tile) == ((128, 256, 256), (4, 4, 1), (256, 256, 256))
    # k1Sm128x128x256 and k2Sm256x128x256Cluster2x2, the appended runtime-cluster variants
    assert (c(25).tile, c(25).cluster) == ((128, 128, 256), (1, 1, 1))
    assert (c(26).tile, c(26).cluster, c(26).mma_tile) == ((128, 128, 256), (2, 2, 1), (256, 128, 256))
    assert catalogs.resolve(cat, -1).config == c(0)
    assert c(26).name == "k2Sm256x128x256Cluster2x2"


def test_svdquant_archs_and_absence_before_0_6_16():
    assert [c.ref.arch for a in ("sm100", "sm103") for c in catalogs.lookup("0.6.16", a, *SVD)] == ["sm100", "sm103"]
    assert catalogs.lookup("0.6.16", "sm107", *SVD) == []  # its backend check lists 100 and 103 only
    assert catalogs.lookup("0.7.4", "sm107", *SVD)  # 0.7.4's lists 107 too
    assert catalogs.lookup("0.6.15", "sm100", *SVD) == []


def test_svdquant_record_decodes():
    r = TuningRecord(source="t", source_kind="test", op=SVD[0], runner=SVD[1], tactic=26, status=Status.CHOSEN,
                     env=Environment(flashinfer_version="0.7.4", arch="sm100"))
    d = decode.decode_tactic(r)
    assert isinstance(d, Decoded) and d.config.tile == (128, 128, 256) and d.config.cluster == (2, 2, 1)


@pytest.mark.parametrize("version", ["0.6.3", "0.6.4", "0.6.5", "0.6.6"])
def test_fused_moe_lists_from_0_6_3(version):
    bf16 = {"act": "bf16", "weight": "bf16", "finalize": True}
    g1, g2 = moe.tactic_counts(version, "sm90", bf16)
    assert (g1, g2) == moe.tactic_counts("0.6.7", "sm90", bf16)
    (cat,) = catalogs.lookup(version, "sm90", FUSED_MOE_OPS[1], MOE_RUNNER, bf16)
    assert cat.gemm2_relative_ids  # the GEMM2 id pitfall is in these releases' binding too
    assert moe.known_variants(version, "sm120")
