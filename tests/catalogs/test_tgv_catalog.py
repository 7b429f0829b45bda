"""The TGV BF16/FP16 GEMM's tactic tables, against values read by hand in the wheels (PyPI):
include/flashinfer/gemm/tgv_gemm_configs.h getAllTgvConfigs() (11 configs: 0 = CtaShape64x8_DMA6,
1 = 64x8_DMA8, ..., 10 = 128x16_DMA6), csrc/tgv_gemm.cu (tgv_gemm_host<..., CTA_M, CTA_N, 128,
DMA_STAGE>; `if (tactic == -1) tactic = 1;`), and, 0.7.4, flashinfer/gemm/kernels/tgv_gemm_cute_ext.py
(_TGV_CUTE_EXT_TACTIC_CONFIGS: 47 entries, 16 = (64, 16, 6, True), 29 = (64, 8, 18, False);
_TGV_CUTE_EXT_FIRST_SM107_TACTIC 29; _TGV_CUTE_EXT_DEFAULT_TACTIC 1) and gemm_base.py
(`_TGV_DEBUG_USE_CPP: bool = False` at line 2574; mm_bf16 tunes TGVRunner as bf16_gemm and, with
pdl=None, bf16_gemm_pdl_auto)."""

from __future__ import annotations

from tiletune import catalogs, decode
from tiletune.catalogs import listing
from tiletune.core.records import Decoded, Environment, Status, TuningRecord


def _one(version, arch, op, runner):
    (cat,) = catalogs.lookup(version, arch, op, runner)
    return cat


def _cfg(cat, t):
    d = catalogs.resolve(cat, t)
    assert isinstance(d, Decoded)
    return d.config


def test_cpp_table():
    for version in ("0.6.3", "0.7.4"):
        cat = _one(version, "sm100", "bf16_tgv_gemm", "TGVGemmRunner")
        assert len(cat.configs) == 11
        assert (_cfg(cat, 0).tile, _cfg(cat, 0).stages, _cfg(cat, 0).name) == ((64, 8, 128), 6, "CtaShape64x8_DMA6")
        assert (_cfg(cat, 10).tile, _cfg(cat, 10).stages) == ((128, 16, 128), 6)
        assert _cfg(cat, -1) == _cfg(cat, 1) and _cfg(cat, 0).swap_ab  # weights first: tile M runs over N
        assert _one(version, "sm100", "fp16_tgv_gemm", "TGVGemmRunner").configs == cat.configs
    # before 0.6.15 mm_bf16 tunes the C++ runner itself as bf16_gemm
    assert _one("0.6.14", "sm103", "bf16_gemm", "TGVGemmRunner").configs == _one("0.6.14", "sm103", "bf16_tgv_gemm", "TGVGemmRunner").configs
    assert catalogs.lookup("0.7.4", "sm100", "bf16_gemm", "TGVGemmRunner") == []


def test_cute_dsl_table_0_7_4():
    cat = _one("0.7.4", "sm100", "bf16_gemm", "TGVRunner")
    assert len(cat.configs) == 47
    t16 = _cfg(cat, 16)
    assert (t16.tile, t16.stages, t16.cluster, t16.mma_tile) == ((64, 16, 128), 6, (2, 1, 1), (128, 16, 128))
    assert _cfg(cat, -1) == _cfg(cat, 1) and _cfg(cat, 1).tile == (64, 8, 128) and _cfg(cat, 1).stages == 8
    assert (_cfg(cat, 29).tile, _cfg(cat, 29).stages) == ((64, 8, 128), 18)
    # ids from 29 need SM107's shared memory: a known failure on sm100 and sm103, not on sm107
    assert [i for i, f in enumerate(cat.known_failures) if f] == list(range(29, 47))
    assert "needs SM107 SMEM" in cat.known_failures[29]
    assert not any(_one("0.7.4", "sm107", "bf16_gemm", "TGVRunner").known_failures)
    assert _one("0.7.4", "sm103", "bf16_gemm_pdl_auto", "TGVRunner").configs == cat.configs
    assert "_TGV_DEBUG_USE_CPP" in cat.table_note and "gemm_base.py:2574, False in this release" in cat.table_note
    assert len(_one("0.6.15", "sm100", "bf16_gemm", "TGVRunner").configs) == 29


def test_a_tgv_record_decodes_and_the_listing_names_the_switch():
    r = TuningRecord(source="t", source_kind="test", op="bf16_gemm", runner="TGVRunner", tactic=16, status=Status.CHOSEN,
                     env=Environment(flashinfer_version="0.7.4", arch="sm100"))
    d = decode.decode_tactic(r)
    assert isinstance(d, Decoded) and d.config.tile == (64, 16, 128) and d.config.cluster == (2, 1, 1)
    view = listing.catalog_view("0.7.4", "sm100", "bf16_gemm")
    (t,) = [t for t in view["tables"] if t["runner"] == "TGVRunner"]
    assert "_TGV_DEBUG_USE_CPP" in t["table_note"]
