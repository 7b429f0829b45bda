"""The shipped fused-MoE catalogs (data/fused-moe.json) against values worked out by hand from
FlashInfer's C++, not from the generator.

Sources read (paths under csrc/nv_internal/tensorrt_llm/kernels/cutlass_kernels/):
- cutlass_heuristic.cpp: get_candidate_tiles_sm90 (grouped, not weight-only: 128x16, 128x32,
  128x64, 128x128, 128x256, 256x128, all x128B), sm90_supports_mcast_along_m (all six) /
  _along_n (128x128, 128x256, 256x128), get_candidate_configs_sm90 (1x1x1, +2x1x1 if M-mcast,
  +1x2x1 if N-mcast, +2x2x1 if both) => 3*2 + 3*4 = 18 configs;
  get_candidate_tiles default = [32x128x64, 64x128x64, 128x128x64] (sm >= 75), stages 2..4
  => 9 Ampere configs; Fp8 + GROUPED on sm90 => {} ; on sm120 7 tiles x 3 stages = 21.
  get_candidate_configs_sm120 all_tiles (v0.6.11+): 128x128x128B, 128x128x64B, 256x128x64B,
  128x256x64B, 128x128x256B, 256x128x128B, 128x32x128B, 128x32x64B, 128x64x128B, 128x64x64B.
- moe_gemm/moe_gemm_template_dispatch.h getTmaWarpSpecializedConfigs: GEMM2 appends a FINALIZE
  copy (NO_SMEM ones dropped; SM90/SM120 use AUTO), then everything is duplicated with swap_ab;
  getConfigs appends the Ampere list last.
- moe_gemm/moe_gemm_template_dispatch_tma_ws.h: SM120 tile switch has no case for 128x128x256B
  and 256x128x128B ("Unsupported tile shape config %d for MoE gemm.").
So SM90 bf16: GEMM1 36 + 9 = 45, GEMM2 72 + 9 = 81; fp8: 36 / 72 (research 2.5 agrees).
"""

from __future__ import annotations

import re

import pytest

from tiletune import catalogs
from tiletune.catalogs import moe
from tiletune.core.records import Decoded, Undecoded
from tiletune.core.vocabulary import FUSED_MOE_OPS, MOE_RUNNER

G1, G2 = FUSED_MOE_OPS
BF16 = {"act": "bf16", "weight": "bf16", "finalize": True}
FP8 = {"act": "fp8", "weight": "fp8", "finalize": True}
NVFP4 = {"act": "nvfp4", "weight": "nvfp4", "finalize": True}


def one(version, arch, op, variant):
    cats = catalogs.lookup(version, arch, op, MOE_RUNNER, variant)
    assert len(cats) == 1, f"{version} {arch} {op} {variant}: {len(cats)} catalogs"
    return cats[0]


def cfg(cat, global_index):
    d = catalogs.resolve(cat, global_index)
    assert isinstance(d, Decoded), d
    return d.config


@pytest.mark.parametrize("version", ["0.6.7", "0.6.13", "0.6.18rc2", "0.6.18rc7", "0.7.2.post1"])
def test_sm90_counts(version):
    assert moe.tactic_counts(version, "sm90", BF16) == (45, 81)
    assert moe.tactic_counts(version, "sm90", FP8) == (36, 72)
    assert moe.tactic_counts(version, "sm90", {**BF16, "act": "fp16", "weight": "fp16"}) == (45, 81)


def test_sm90_bf16_gemm1_order_first_and_last():
    cat = one("0.6.18rc7", "sm90", G1, BF16)
    assert cat.index_offset == 0 and cat.fallback == 0
    expect_head = [  # (tile in elements: K = 128 B / 2 B, cluster)
        ((128, 16, 64), (1, 1, 1)), ((128, 16, 64), (2, 1, 1)),
        ((128, 32, 64), (1, 1, 1)), ((128, 32, 64), (2, 1, 1)),
        ((128, 64, 64), (1, 1, 1)), ((128, 64, 64), (2, 1, 1)),
        ((128, 128, 64), (1, 1, 1)), ((128, 128, 64), (2, 1, 1)), ((128, 128, 64), (1, 2, 1)), ((128, 128, 64), (2, 2, 1)),
    ]
    for i, (tile, cluster) in enumerate(expect_head):
        c = cfg(cat, i)
        assert (c.tile, c.cluster, c.swap_ab, c.style) == (tile, cluster, False, "tma_ws"), i
    last_tma = cfg(cat, 17)
    assert (last_tma.tile, last_tma.cluster, last_tma.swap_ab) == ((256, 128, 64), (2, 2, 1), False)
    assert cfg(cat, 18).tile == (128, 16, 64) and cfg(cat, 18).swap_ab
    assert cfg(cat, 35).tile == (256, 128, 64) and cfg(cat, 35).swap_ab and cfg(cat, 35).cluster == (2, 2, 1)
    amp = [cfg(cat, i) for i in range(36, 45)]
    assert [(c.tile, c.stages, c.style) for c in amp] == [
        ((32, 128, 64), 2, "sm80"), ((32, 128, 64), 3, "sm80"), ((32, 128, 64), 4, "sm80"),
        ((64, 128, 64), 2, "sm80"), ((64, 128, 64), 3, "sm80"), ((64, 128, 64), 4, "sm80"),
        ((128, 128, 64), 2, "sm80"), ((128, 128, 64), 3, "sm80"), ((128, 128, 64), 4, "sm80"),
    ]
    assert isinstance(catalogs.resolve(cat, 45), Undecoded)  # GEMM1 owns indices 0..44 only


def test_sm90_bf16_gemm2_layout():
    cat = one("0.6.18rc7", "sm90", G2, BF16)
    assert cat.index_offset == 45  # tactic = index into GEMM1 ++ GEMM2
    assert isinstance(catalogs.resolve(cat, 44), Undecoded)
    first = cfg(cat, 45)
    assert (first.tile, first.epilogue_fusion, first.swap_ab) == ((128, 16, 64), "NONE", False)
    fin = cfg(cat, 45 + 18)
    assert (fin.tile, fin.cluster, fin.epilogue_fusion, fin.swap_ab) == ((128, 16, 64), (1, 1, 1), "FINALIZE", False)
    swapped = cfg(cat, 45 + 36)
    assert (swapped.epilogue_fusion, swapped.swap_ab) == ("NONE", True)
    assert cfg(cat, 45 + 71).epilogue_fusion == "FINALIZE" and cfg(cat, 45 + 71).swap_ab
    assert cfg(cat, 125).style == "sm80" and cfg(cat, 125).stages == 4
    d = catalogs.resolve(cat, -1)  # the runner's default GEMM2 profile: first GEMM2 entry
    assert isinstance(d, Decoded) and d.index == 0


def test_sm90_fp8_k_in_elements():
    cat = one("0.6.18rc7", "sm90", G1, FP8)
    assert cfg(cat, 0).tile == (128, 16, 128)  # 128 B of 1-byte FP8
    assert all(c.style == "tma_ws" for c in cat.configs)  # no Ampere-style FP8 grouped GEMM on SM90


SM120_TILES_0611 = [(128, 128, 256), (128, 128, 128), (256, 128, 128), (128, 256, 128), (128, 128, 512),
                    (256, 128, 256), (128, 32, 256), (128, 32, 128), (128, 64, 256), (128, 64, 128)]


@pytest.mark.parametrize("version", ["0.6.11", "0.6.14", "0.6.17", "0.6.18rc7", "0.7.0"])
def test_sm120_nvfp4_lists_and_dispatcherless_tactics(version):
    assert moe.tactic_counts(version, "sm120", NVFP4) == (20, 40)
    g1 = one(version, "sm120", G1, NVFP4)
    assert [c.tile for c in g1.configs[:10]] == SM120_TILES_0611  # FP4: K elements = bytes * 2
    assert [c.tile for c in g1.configs[10:]] == SM120_TILES_0611 and all(c.swap_ab for c in g1.configs[10:])
    failing = [i for i, kf in enumerate(g1.known_failures) if kf]
    assert failing == [4, 5, 14, 15]
    assert "Unsupported tile shape config 128128256 for MoE gemm." in g1.known_failures[4]
    assert "256128128" in g1.known_failures[5]
    g2 = one(version, "sm120", G2, NVFP4)
    assert g2.index_offset == 20
    assert [i for i, kf in enumerate(g2.known_failures) if kf] == [4, 5, 14, 15, 24, 25, 34, 35]
    assert g2.configs[10].epilogue_fusion == "FINALIZE" and not g2.configs[10].swap_ab


def test_sm120_lists_by_era():
    # v0.6.7: grouped FP4 pushes 128x128x128B, 128x128x64B, 128x256x64B, 256x128x64B (x swap)
    g1 = one("0.6.7", "sm120", G1, NVFP4)
    assert [c.tile for c in g1.configs[:4]] == [(128, 128, 256), (128, 128, 128), (128, 256, 128), (256, 128, 128)]
    assert moe.tactic_counts("0.6.7", "sm120", NVFP4) == (8, 16)
    # v0.6.8..v0.6.10: six all_tiles
    assert moe.tactic_counts("0.6.9", "sm120", NVFP4) == (12, 24)
    # 0.7.1 / 0.7.2.post1 prune the two dispatcher-less tiles; FP8 x MXFP4 also loses the x64B ones
    assert moe.tactic_counts("0.7.2.post1", "sm120", NVFP4) == (16, 32)
    assert not any(one("0.7.2.post1", "sm120", G1, NVFP4).known_failures)
    assert moe.tactic_counts("0.7.1", "sm120", {"act": "fp8", "weight": "mxfp4", "finalize": True}) == (6, 12)


def test_sm120_non_fp4_get_only_ampere_style():
    assert moe.tactic_counts("0.6.18rc7", "sm120", BF16) == (9, 9)  # no TMA-WS, so no finalize copy
    assert moe.tactic_counts("0.6.18rc7", "sm120", FP8) == (21, 21)
    c = one("0.6.18rc7", "sm120", G1, FP8).configs
    assert c[-1].name == "CtaShape16x256x128_WarpShape16x64x128" and c[-1].stages == 4


def test_sm100_2sm_configs_carry_mma_tile():
    cat = one("0.6.18rc7", "sm100", G1, NVFP4)
    two_sm = [c for c in cat.configs if c.mma_tile]
    assert two_sm and all(c.mma_tile[0] == 2 * c.tile[0] for c in two_sm)
    # first entry: 128x64x128B (FP4 K = 256), epilogue TMA, 1SM, dynamic cluster 1x1x1
    first = cat.configs[0]
    assert (first.tile, first.epilogue_schedule, first.mma_tile) == ((128, 64, 256), "TMA", None)


def test_finalize_flag_only_matters_where_the_binding_applies_it_first():
    # v0.6.13: getTactics ran before use_fused_finalize_ was set (default true): same GEMM2 list
    on = one("0.6.13", "sm90", G2, BF16)
    off = one("0.6.13", "sm90", G2, {**BF16, "finalize": False})
    assert on.configs == off.configs and len(off.configs) == 81
    # v0.6.18rc2 sets it first: without finalize GEMM2 is just the GEMM1 list
    assert moe.tactic_counts("0.6.18rc2", "sm90", {**BF16, "finalize": False}) == (45, 45)


def test_every_release_lists_source_and_commit():
    import json
    from importlib import resources

    doc = json.loads(resources.files("tiletune.catalogs").joinpath("data/fused-moe.json").read_text())
    assert doc["schema"] == "tiletune.catalogs/2" and doc["family"] == "fused-moe"
    rels = doc["releases"]
    for v in ["0.6.7", "0.6.7.post3", "0.6.16.post4", "0.6.17", "0.6.18rc1", "0.7.0", "0.7.1", "0.7.2.post1"]:
        assert v in rels
    assert "0.6.12rc1" not in rels  # pre-0.6.18 release candidates are not covered
    assert rels["0.6.18rc7"]["source"] == {"kind": "git-tag", "ref": "v0.6.18rc7", "repository": "https://github.com/flashinfer-ai/flashinfer",
                                           "commit": rels["0.6.18rc7"]["source"]["commit"]}
    assert len(rels["0.6.18rc7"]["source"]["commit"]) == 40
    assert rels["0.7.2.post1"]["source"]["kind"] == "wheel"
    assert rels["0.7.2.post1"]["source"]["ref"] == "flashinfer_python-0.7.2.post1-py3-none-any.whl"
    assert re.fullmatch(r"[0-9a-f]{64}", rels["0.7.2.post1"]["source"]["sha256"])
    assert rels["0.7.2.post1"]["source"]["commit"].startswith("beabf5004585")


def test_sm120_w4a8_mxfp4_x64B_tiles_have_no_kernel():
    # moe_gemm_template_dispatch_tma_ws.h are_tile_shapes_supported_sm120 (v0.6.11+) accepts only
    # (128,128,128|256), (128,64,128|256), (128,32,128|256), (128,256,128), (256,128,128) in
    # elements. FP8 activations make K = bytes, so every ...x64B tile (K 64) is rejected, plus the
    # two dispatcher-less tiles: 7 of 10 per half. 0.7.1 prunes exactly these from the list.
    g1 = one("0.6.18rc7", "sm120", G1, {"act": "fp8", "weight": "mxfp4", "finalize": True})
    bad = {c.name for c, kf in zip(g1.configs, g1.known_failures) if kf}
    assert bad == {"CtaShape128x128x64B", "CtaShape256x128x64B", "CtaShape128x256x64B", "CtaShape128x32x64B",
                   "CtaShape128x64x64B", "CtaShape128x128x256B", "CtaShape256x128x128B"}
    assert sum(1 for kf in g1.known_failures if kf) == 14
    kf = g1.known_failures[[c.name for c in g1.configs].index("CtaShape128x128x64B")]
    assert "Unsupported tile (128, 128, 64) and cluster (1, 1, 1)" in kf
    kept = {c.name for c in one("0.7.1", "sm120", G1, {"act": "fp8", "weight": "mxfp4", "finalize": True}).configs}
    assert kept == {"CtaShape128x128x128B", "CtaShape128x32x128B", "CtaShape128x64x128B"}


def test_sm100_and_sm103_fp4_counts():
    # get_candidate_configs_sm100_dynamic_cluster_shape, FP4_ONLY, sm 100: only the TMA epilogue
    # (NO_SMEM returns {}); dynamic cluster 1x1x1 cannot take 2SM: 128x64, 128x128, 128x256 = 3;
    # 4x1x1, 4x2x1 and Undefined add the 2SM 128x64/128x128/128x256: 6 each -> 21, x2 swap = 42.
    # GEMM2 adds a FINALIZE copy of all 21 (TMA epilogue) -> 84.
    assert moe.tactic_counts("0.6.18rc7", "sm100", NVFP4) == (42, 84)
    # W4A8-MXFP4 (FP8 act x FP4 weight) runs the SM100 list on SM103 too (sm = 103 -> 100)
    w4a8 = {"act": "fp8", "weight": "mxfp4", "finalize": True}
    assert moe.tactic_counts("0.6.18rc7", "sm100", w4a8) == (42, 84)
    assert moe.tactic_counts("0.6.18rc7", "sm103", w4a8) == (42, 84)
    # NVFP4 on SM103: its own list (no 128x64, both epilogues: 2+4+4+4 = 14 per schedule = 28)
    # followed by the SM100 list (21): 49, x2 swap = 98
    assert moe.tactic_counts("0.6.18rc7", "sm103", NVFP4)[0] == 98
