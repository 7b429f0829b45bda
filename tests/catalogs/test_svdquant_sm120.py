"""The SM120 NVFP4 SVDQuant GEMM's tactic table (FlashInfer 0.7.4): `nvfp4_svdquant_gemm_sm120_v3`
and `_v3_r64` (runner Nvfp4SvdquantGemmRunner) and the auto backend's `..._auto_v1_pdl*_cute*_cutlass1`
(runner _CutlassAutoRunner) index kRuntimeTacticTableSm120. Expectations below were read by hand in
the 0.7.4 wheel (PyPI): include/flashinfer/gemm/nvfp4_svdquant_gemm_template_sm120.h (the table's
static_asserts, the KernelShapeSm120 enum, the Tactic*Config aliases) and
csrc/nvfp4_svdquant_gemm_cutlass_sm120.cu (SVDQ_SM120_DISPATCH, the -1 fallback at line 199)."""

from __future__ import annotations

import pytest

from tiletune import catalogs, decode
from tiletune.core.records import Decoded, Environment, Status, TuningRecord, Undecoded

RUNNER = "Nvfp4SvdquantGemmRunner"
OPS = ("nvfp4_svdquant_gemm_sm120_v3", "nvfp4_svdquant_gemm_sm120_v3_r64")


def _cat(op=OPS[0], runner=RUNNER, version="0.7.4"):
    (cat,) = catalogs.lookup(version, "sm120", op, runner)
    return cat


def _row(cat, t):
    d = catalogs.resolve(cat, t)
    assert isinstance(d, Decoded)
    return d.config


def test_table_rows_read_by_hand():
    cat = _cat()
    assert len(cat.configs) == 83
    # rows 0..15 are the legacy kernels with scheduler defaults: row 9 = k256x128x128Swap (persistent)
    r9 = _row(cat, 9)
    assert (r9.tile, r9.swap_ab, r9.stream_k, r9.name) == ((256, 128, 128), True, False, "k256x128x128Swap")
    assert r9.mainloop_schedule == "KernelTmaWarpSpecializedNvf4Sm120" and r9.cluster == (1, 1, 1)
    # row 16: kernel 2 (k128x128x128Sk, Stream-K) with forced Split-K 2; row 31: kernel 15 with 4 splits
    r16 = _row(cat, 16)
    assert (r16.tile, r16.stream_k, r16.name) == ((128, 128, 128), True, "k128x128x128Sk splits=2")
    assert _row(cat, 31).name == "k128x256x128SwapSk splits=4"
    # rows 32..63: persistent kernels x {AlongM, AlongN, swizzle 2, swizzle 4}; 63 = kernel 13, swizzle 4
    assert _row(cat, 32).name == "k128x128x128 raster=AlongM" and _row(cat, 63).name == "k128x256x128Swap swizzle=4"
    # row 80: production row80, 64x32x256 swap on the static scheduler, the only StageCount<4> mainloop
    r80 = _row(cat, 80)
    assert (r80.tile, r80.swap_ab, r80.stages, r80.name) == ((64, 32, 256), True, 4, "k64x32x256SwapStatic")
    assert [i for i, c in enumerate(cat.configs) if c.stages is not None] == [80]
    assert cat.raw[80]["tile_scheduler"] == "StaticPersistentScheduler" and cat.raw[16]["splits"] == 2
    # row 82, the last: k256x64x128SwapStatic
    assert _row(cat, 82).tile == (256, 64, 128)
    assert isinstance(catalogs.resolve(cat, 83), Undecoded)


def test_minus_one_is_chosen_at_run_time_and_said_so():
    d = catalogs.resolve(_cat(), -1)
    assert isinstance(d, Undecoded)
    assert "first row" in d.reason and "can_implement" in d.reason
    assert "csrc/nvfp4_svdquant_gemm_cutlass_sm120.cu:199" in d.reason


def test_rank_64_never_offers_a_k128_kernel():
    # kLoRaStageCapacity = TileK / 4: a K128 tile stages rank 32, so a rank-64 module's can_implement
    # rejects it; K256 tiles stage 64
    r32, r64 = _cat(OPS[0]), _cat(OPS[1])
    assert r32.configs == r64.configs and not any(r32.known_failures)
    for i, c in enumerate(r64.configs):
        assert (r64.known_failures[i] is not None) == (c.tile[2] == 128), i
    assert "rank 64" in r64.known_failures[0]


@pytest.mark.parametrize("op", OPS)
def test_auto_backend_names_index_the_same_table(op):
    base = _cat(op)
    for pdl in (0, 1):
        for cute in (0, 1):
            auto = _cat(f"{op}_auto_v1_pdl{pdl}_cute{cute}_cutlass1", "_CutlassAutoRunner")
            assert auto.configs == base.configs and auto.known_failures == base.known_failures


def test_only_0_7_4_and_only_sm120():
    assert catalogs.lookup("0.7.2.post1", "sm120", OPS[0], RUNNER) == []
    assert catalogs.lookup("0.7.4", "sm100", OPS[0], RUNNER) == []
    assert catalogs.lookup("0.7.4", "sm121", OPS[0], RUNNER) == []  # the backend takes compute capability 12.0 only


def test_a_cache_entry_decodes_instead_of_not_cutlass():
    r = TuningRecord(source="t", source_kind="test", op=OPS[0], runner=RUNNER, tactic=80, status=Status.CHOSEN,
                     env=Environment(flashinfer_version="0.7.4", arch="sm120"))
    d = decode.decode_tactic(r)
    assert isinstance(d, Decoded) and d.config.tile == (64, 32, 256) and d.config.stages == 4
    minus = decode.decode_tactic(TuningRecord(source="t", source_kind="test", op=OPS[0], runner=RUNNER, tactic=-1,
                                              status=Status.CHOSEN, env=Environment(flashinfer_version="0.7.4", arch="sm120")))
    assert isinstance(minus, Undecoded) and not minus.not_a_cutlass_tactic and "can_implement" in minus.reason
