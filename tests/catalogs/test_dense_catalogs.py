"""Dense-GEMM catalogs (tiletune/catalogs/data/dense-gemm.json) against lists worked out BY HAND.

Every expected list below was written by reading FlashInfer's C++ at the named tag (getConfigs()
in the runner header, the dispatch switch for tile sizes in elements, and the binding .cu for
what tactic -1 runs), not produced by tiletune's extractor. If the extractor or the data file
drifts from what the source says, these fail.
"""

from __future__ import annotations

import itertools
import re

import pytest

from tiletune import catalogs
from tiletune.core.records import Decoded, Undecoded

FP4 = ("fp4_gemm", "CutlassFp4GemmRunner")
MXFP8 = ("mxfp8_gemm", "CutlassMxfp8GemmRunner")
FP8 = ("fp8_gemm", "CutlassFp8GemmRunner")


def one(version, arch, op_runner):
    cats = catalogs.lookup(version, arch, *op_runner)
    assert len(cats) == 1, f"{version} {arch} {op_runner}: {len(cats)} catalogs"
    return cats[0]


def summary(cat):
    return [(c.name, c.tile, c.swap_ab, c.stream_k) for c in cat.configs]


# --- SM120 FP4 ----------------------------------------------------------------------------------

# v0.6.3 include/flashinfer/gemm/fp4_gemm_cutlass_template_sm120.h: getConfigs pushes one config,
# CtaShape128x128x128B; the dispatch case launches Int<128>, Int<128>, Int<128>.
SM120_FP4_V063 = [("CtaShape128x128x128B", (128, 128, 128), False, False)]

# v0.6.4 ..._template_sm120.h (#2460): for tile in [128x128x128B, 128x128x256B, 256x128x128B]:
# push (tile, ..., clusterShape, false) then (..., true) with the 5th ctor arg = use_stream_k
# (cutlass_gemm_configs.h v0.6.4: SM120 ctor is (tile, mainloop, epilogue, cluster, bool use_stream_k)).
# Dispatch: DISPATCH_WITH_SCHEDULER(128,128,128) / (128,128,256) / (256,128,128): K in ELEMENTS.
SM120_FP4_V064 = [
    (name, tile, False, sk)
    for name, tile in [("CtaShape128x128x128B", (128, 128, 128)), ("CtaShape128x128x256B", (128, 128, 256)),
                       ("CtaShape256x128x128B", (256, 128, 128))]
    for sk in (False, True)
]

# v0.6.11 ..._template_sm120.h (#3152): 8 tiles x [(swap=true, sk=false), (false, false), (true, true),
# (false, true)] (ctor is now (tile, mainloop, epilogue, cluster, bool swap_ab, bool use_stream_k)).
# Dispatch from the same tag: the trailing number is K BYTES of FP4 (2 per byte):
SM120_FP4_V0611_TILES = [
    ("CtaShape128x32x64B", (128, 32, 128)), ("CtaShape128x32x128B", (128, 32, 256)),
    ("CtaShape128x64x64B", (128, 64, 128)), ("CtaShape128x64x128B", (128, 64, 256)),
    ("CtaShape128x128x64B", (128, 128, 128)), ("CtaShape128x128x128B", (128, 128, 256)),
    ("CtaShape256x128x64B", (256, 128, 128)), ("CtaShape128x256x64B", (128, 256, 128)),
]
SM120_FP4_V0611 = [
    (name, tile, swap, sk)
    for name, tile in SM120_FP4_V0611_TILES
    for swap, sk in [(True, False), (False, False), (True, True), (False, True)]
]


@pytest.mark.parametrize("version", ["0.6.3"])
def test_sm120_fp4_single_tactic_era(version):
    cat = one(version, "sm120", FP4)
    assert summary(cat) == SM120_FP4_V063
    assert cat.configs[0].stages == 2  # v0.6.3 fp4_gemm_template_sm120.h: StageCount<2>


@pytest.mark.parametrize("version", ["0.6.4", "0.6.5", "0.6.6", "0.6.7", "0.6.7.post3", "0.6.8", "0.6.10.post1"])
def test_sm120_fp4_six_tactic_era(version):
    cat = one(version, "sm120", FP4)
    assert summary(cat) == SM120_FP4_V064
    # -1: csrc/fp4_gemm_cutlass_sm120.cu builds CtaShape128x128x128B, no stream-K = entry 0
    d = catalogs.resolve(cat, -1)
    assert isinstance(d, Decoded) and d.index == 0 and d.config.tile == (128, 128, 128)


def test_sm120_fp4_stage_policy_changed_at_068():
    # v0.6.4..v0.6.7 fp4_gemm_template_sm120.h: StageCount<2>; v0.6.8 (#3026): StageCountAutoCarveout
    assert {c.stages for c in one("0.6.7", "sm120", FP4).configs} == {2}
    assert {c.stages for c in one("0.6.8", "sm120", FP4).configs} == {None}


@pytest.mark.parametrize("version", ["0.6.11", "0.6.14", "0.6.17", "0.6.18rc7", "0.7.0", "0.7.2.post1"])
def test_sm120_fp4_32_tactic_era(version):
    cat = one(version, "sm120", FP4)
    assert summary(cat) == SM120_FP4_V0611
    assert all(c.cluster == (1, 1, 1) and c.mma_tile is None for c in cat.configs)
    # -1: ctor(CtaShape128x128x128B, AUTO, AUTO, 1x1x1, swap_ab=false) -> tile #5, variant 1 = index 21
    d = catalogs.resolve(cat, -1)
    assert isinstance(d, Decoded) and d.index == 21
    assert d.config.tile == (128, 128, 256) and not d.config.swap_ab and not d.config.stream_k


def test_sm120_fp4_enum_meaning_change():
    """The same enum name means K=128 elements before v0.6.11 and K=256 from v0.6.11."""
    old = {c.name: c.tile for c in one("0.6.10", "sm120", FP4).configs}
    new = {c.name: c.tile for c in one("0.6.11", "sm120", FP4).configs}
    assert old["CtaShape128x128x128B"] == (128, 128, 128)
    assert new["CtaShape128x128x128B"] == (128, 128, 256)
    # and tactic 0 decodes to different tiles in the two eras
    assert catalogs.resolve(one("0.6.10", "sm120", FP4), 0).config.tile == (128, 128, 128)
    t0 = catalogs.resolve(one("0.6.11", "sm120", FP4), 0).config
    assert t0.tile == (128, 32, 128) and t0.swap_ab


def test_sm121_shares_sm120_lists():
    from tiletune.core.archs import arch_family

    assert arch_family("sm121") == "sm120"
    assert catalogs.lookup("0.6.14", "sm121", *FP4) == []  # the lookup key is the family


def test_out_of_range_index_is_undecoded():
    d = catalogs.resolve(one("0.6.7", "sm120", FP4), 17)
    assert isinstance(d, Undecoded) and "6 configs" in d.reason and "17" in d.reason


# --- SM100 FP4 (fp4_gemm_cutlass_template.h, unchanged v0.6.3..0.7.2.post1) -------------------

# tiles [128x64x128B, 128x256x128B, 128x128x256B, 128x256x256B] (K = the number, elements: the
# dispatch passes Int<128>,Int<64>,Int<128> etc.) x clusters [1x1x1, 1x2x1, 2x1x1, 2x2x1, 1x4x1,
# 4x2x1, 2x4x1, 4x4x1], then best_tactics_index = {22, 20, 29, 4, 18} first, the rest in order.
_SM100_TILES = [(128, 64, 128), (128, 256, 128), (128, 128, 256), (128, 256, 256)]
_SM100_CLUSTERS = [(1, 1, 1), (1, 2, 1), (2, 1, 1), (2, 2, 1), (1, 4, 1), (4, 2, 1), (2, 4, 1), (4, 4, 1)]
_ORIG = list(itertools.product(_SM100_TILES, _SM100_CLUSTERS))
SM100_FP4 = [_ORIG[i] for i in (22, 20, 29, 4, 18)] + [c for i, c in enumerate(_ORIG) if i not in (22, 20, 29, 4, 18)]


def test_sm100_fp4_hand_list_matches_research_spelling():
    # the reorder spelled out: 0 = 128x128x256 / 2x4x1, 1 = 128x128x256 / 1x4x1, 2 = 128x256x256 / 4x2x1
    assert SM100_FP4[:5] == [((128, 128, 256), (2, 4, 1)), ((128, 128, 256), (1, 4, 1)),
                             ((128, 256, 256), (4, 2, 1)), ((128, 64, 128), (1, 4, 1)),
                             ((128, 128, 256), (2, 1, 1))]


@pytest.mark.parametrize("version", ["0.6.3", "0.6.11", "0.6.16.post4", "0.7.2.post1"])
@pytest.mark.parametrize("arch", ["sm100", "sm110"])
def test_sm100_fp4_reordered_32(version, arch):
    cat = one(version, arch, FP4)
    assert [(c.tile, c.cluster) for c in cat.configs] == SM100_FP4
    # cluster dispatch: M-extent 2 or 4 uses the _2SM adapter (Scale = 2): MMA tile M doubles
    for c in cat.configs:
        assert c.mma_tile == ((2 * c.tile[0],) + c.tile[1:] if c.cluster[0] in (2, 4) else None)
    assert catalogs.resolve(cat, -1).index == 0  # csrc/fp4_gemm_cutlass.cu: tactic -1 -> 0


def test_sm103_fp4_has_its_own_63_list():
    cat = one("0.6.14", "sm103", FP4)
    # 7 tiles x 9 clusters (..., 4x4x1, 4x1x1); the copied best-first indices now point elsewhere:
    # 22 = tile 2 (128x128x256B) cluster 4 (1x4x1); 20 = tile 2 cluster 2 (2x1x1)
    assert len(cat.configs) == 63
    assert (cat.configs[0].tile, cat.configs[0].cluster) == ((128, 128, 256), (1, 4, 1))
    assert (cat.configs[1].tile, cat.configs[1].cluster) == ((128, 128, 256), (2, 1, 1))
    assert {c.tile for c in cat.configs} >= {(128, 128, 768), (128, 192, 768), (128, 256, 768)}


# --- SM120 MXFP8 (mxfp8_gemm_cutlass_template_sm120.h) -----------------------------------------

# v0.6.8 .. v0.6.10.post1: tiles [128x128x128B, 256x128x128B, 128x256x128B], one config each (no swap)
SM120_MXFP8_3 = [(128, 128, 128), (256, 128, 128), (128, 256, 128)]
# v0.6.11 .. v0.6.18rc7: [128x32, 128x64, 128x128, 256x128, 128x256] x {swap false, swap true} = 10
SM120_MXFP8_10 = [(t, s) for t in [(128, 32, 128), (128, 64, 128), (128, 128, 128), (256, 128, 128), (128, 256, 128)]
                  for s in (False, True)]
# 0.7.0 .. 0.7.2.post1 wheels (PR #4013): the 256x128 and 128x256 tiles are gone: 6
SM120_MXFP8_6 = SM120_MXFP8_10[:6]


@pytest.mark.parametrize("version", ["0.6.8", "0.6.10.post1"])
def test_sm120_mxfp8_three(version):
    cat = one(version, "sm120", MXFP8)
    assert [c.tile for c in cat.configs] == SM120_MXFP8_3 and not any(c.swap_ab for c in cat.configs)


@pytest.mark.parametrize("version", ["0.6.11", "0.6.15", "0.6.18rc7"])
def test_sm120_mxfp8_ten(version):
    cat = one(version, "sm120", MXFP8)
    assert [(c.tile, c.swap_ab) for c in cat.configs] == SM120_MXFP8_10
    # mxfp8_gemm_template_sm120.h: conditional_t<CTA_N_ == 256 || CTA_M_ == 256, StageCount<2>, AutoCarveout>
    assert [c.stages for c in cat.configs] == [None] * 6 + [2] * 4


@pytest.mark.parametrize("version", ["0.7.0", "0.7.1", "0.7.2.post1"])
def test_sm120_mxfp8_six(version):
    cat = one(version, "sm120", MXFP8)
    assert [(c.tile, c.swap_ab) for c in cat.configs] == SM120_MXFP8_6


def test_sm120_mxfp8_absent_before_068():
    assert catalogs.lookup("0.6.7", "sm120", *MXFP8) == []


# --- FP8 ------------------------------------------------------------------------------------------

def test_sm100_fp8_thirty_tile_major_and_swapped():
    # fp8_gemm_cutlass_template.h: tiles [64x64, 64x128, 64x256, 128x64, 128x128, 128x256] (x128B: K=128)
    # x clusters [1x1x1, 1x2x1, 1x4x1, 2x1x1, 2x2x1]; dispatchToArch passes (B, A, ..., n, m): the
    # kernel computes the transposed product, so every config is swap_ab.
    cat = one("0.6.14", "sm100", FP8)
    tiles = [(64, 64, 128), (64, 128, 128), (64, 256, 128), (128, 64, 128), (128, 128, 128), (128, 256, 128)]
    clusters = [(1, 1, 1), (1, 2, 1), (1, 4, 1), (2, 1, 1), (2, 2, 1)]
    assert [(c.tile, c.cluster) for c in cat.configs] == list(itertools.product(tiles, clusters))
    assert all(c.swap_ab for c in cat.configs)
    assert catalogs.resolve(cat, -1).index == 0


def test_sm120_fp8_only_fallback():
    # gemm_base.py: the SM120 CutlassFp8GemmRunner.get_valid_tactics returns [-1];
    # gemm_groupwise_sm120.cuh: MmaTileShape_MNK = Shape<_128, _128, _128>
    cat = one("0.6.14", "sm120", FP8)
    assert cat.configs == ()
    d = catalogs.resolve(cat, -1)
    assert isinstance(d, Decoded) and d.index == -1 and d.config.tile == (128, 128, 128)
    assert isinstance(catalogs.resolve(cat, 0), Undecoded)


# --- coverage and provenance -------------------------------------------------------------------

REQUIRED = (["0.6.3", "0.6.4", "0.6.5", "0.6.6", "0.6.7", "0.6.7.post1", "0.6.7.post2", "0.6.7.post3",
             "0.6.8", "0.6.8.post1", "0.6.9", "0.6.10", "0.6.10.post1", "0.6.11", "0.6.11.post3", "0.6.12",
             "0.6.13", "0.6.14", "0.6.15", "0.6.15.post1", "0.6.16", "0.6.16.post4", "0.6.17", "0.7.0", "0.7.1",
             "0.7.2.post1"] + [f"0.6.18rc{i}" for i in range(1, 8)])


def test_every_required_release_is_covered():
    have = set(catalogs.releases())
    missing = [v for v in REQUIRED if v not in have]
    assert not missing


def test_data_file_records_sources():
    import json
    from importlib import resources

    doc = json.loads(resources.files("tiletune.catalogs").joinpath("data/dense-gemm.json").read_text())
    assert doc["generated_by"]["command"].startswith("python3 -m tools.catalogs")
    rev = doc["generated_by"]["tool_revision"]
    assert re.fullmatch(r"[0-9a-f]{40}", rev["commit"]) and re.fullmatch(r"[0-9a-f]{40}", rev["tools_catalogs_tree"])
    for v, rel in doc["releases"].items():
        assert rel["source"]["commit"] and len(rel["source"]["commit"]) == 40, v
        # every release on PyPI is read from its wheel there; only the release candidates from git
        assert rel["source"]["kind"] == ("git-tag" if "rc" in v else "wheel"), v
        if rel["source"]["kind"] == "wheel":
            assert rel["source"]["ref"] == f"flashinfer_python-{v}-py3-none-any.whl"
            assert re.fullmatch(r"[0-9a-f]{64}", rel["source"]["sha256"]), v
    assert doc["releases"]["0.7.2.post1"]["source"]["commit"].startswith("beabf500")
    for lst in doc["lists"].values():  # the C++ headers, or (TGV's CuTe DSL table) the release's Python
        assert lst["source_file"].startswith(("include/flashinfer/gemm/", "flashinfer/gemm/kernels/"))
