"""SM90 weight-only and mixed-input fused-MoE lists, decoded through real key layouts.

Expected configs are written here by hand from FlashInfer's C++, never from tiletune's catalogs:

v0.6.18rc7 (git tag) and 0.7.1 (PyPI wheel, flashinfer/data/csrc/...), both read the same way:
- cutlass_heuristic.cpp `get_candidate_tiles_sm90`, GROUPED_GEMM + WEIGHT_ONLY: 29 tiles
  64x{16,32,64,128}x{128,256,512}B, 128x{16,32,64}x{128,256,512}B, 128x{128,256}x{128,256}B,
  256x128x{128,256}B, 256x256x128B (in that order);
- `get_candidate_configs_sm90`, has_w4afp8 branch: one schedule per tile, COOPERATIVE when
  `sm90_supports_coop` (M 128 with N 16/32/64 and K 128/256/512; M 128 with N 128/256 or M 256
  with N 128 and K 128/256; 256x256 with K 128), else PINGPONG; clusters 1x1x1, 2x1x1, 1x2x1, 2x2x1;
- moe_gemm_template_dispatch.h `getTmaWarpSpecializedConfigs`: no FINALIZE copies
  (`mayHaveFinalizeFused` excludes use_sm90_mixed_input_gemm), swap_ab copies appended and, for
  the mixed-input GEMM, only those kept; humming mode appends tiles x {SINGLE_WARPGROUP_PREFILL,
  SINGLE_WARPGROUP_ROLLING}, swap_ab, 1x1x1: rc7 tiles 128x{8,16,32,40}x128B, 0.7.1 adds 128x64x128B;
- moe_gemm_template_dispatch_tma_ws_mixed_dtype.h `sm90_dispatch_moe_mixed_dtype_gemm_to_cutlass`:
  `Shape<Int<TILE_M>, Int<TILE_N>, Int<TILE_K>>` with TILE_K the enum's number: K in elements.
- bf16/fp16 x int4 and bf16 x fp8 are not Hopper TMA-WS specialisations
  (moe_tma_warp_specialized_traits.h), so only `getAmpereConfigs` remains: `get_candidate_tiles`
  WeightOnly (sm >= 75): 16x128x64, 16x256x64, 32x128x64, 64x128x64, 128x128x64, stages 2..4
  (`get_candidate_configs`), then the weight-only "cuda kernel" entry tiles[0] at min_stages 2:
  16 per GEMM; the weight-only SM80 dispatcher uses K = 128 * 8 / bits(T) = 64 for bf16.
v0.6.14: the mixed-input dispatcher computes `Ktile = 128 * PackedScalesNum / sizeof(T)` from the
GEMM's K at run time, so its W4A8 / W4A16 lists are deliberately not extracted.
"""

from __future__ import annotations

import pytest

from tiletune import catalogs, decode
from tiletune.catalogs import moe
from tiletune.core.records import Decoded, Environment, Status, TuningRecord, Undecoded
from tiletune.readers.keyparse import parse_key

G1, G2 = "trtllm::fused_moe::gemm1", "trtllm::fused_moe::gemm2"
# the H200 sample's MoE (E 128, H 2048, I 768) with uint8-packed 4-bit weights (2 per byte)
SHAPES = "((16, 2048), (128, 1536, 1024), (0,), (128, 2048, 384), (0,))"
# MoERunner.get_cache_key_extras, 20 fields (0.6.18rc2 .. 0.7.1): x, w, out, top_k, tp, tp_rank,
# ep, ep_rank, cluster, cluster_rank, alltoall, deepseek, w4_group, mxfp8_act, humming, min_latency,
# pdl, activation, packed, finalize
EXTRAS = ("(torch.bfloat16, torch.uint8, torch.bfloat16, 8, 1, 0, 1, 0, 1, 0, False, False, {group}, False, "
          "{humming}, False, True, 3, {packed}, True)")
W4A8 = dict(group=True, humming=False, packed=True)
W4A16_MXFP4 = dict(group=True, humming=False, packed=False)
HUMMING = dict(group=True, humming=True, packed=False)
INT4_WEIGHT_ONLY = dict(group=False, humming=False, packed=True)


def record(op: str, tactic: int, version: str, extras: str) -> TuningRecord:
    key = f"('{op}', 'MoERunner', {SHAPES}, {extras})"
    pk = parse_key(key)
    return TuningRecord(source="t.json", source_kind="flashinfer-v1", op=pk.op, runner=pk.runner, tactic=tactic,
                        status=Status.CHOSEN, env=Environment(flashinfer_version=version, arch="sm90"),
                        shapes=pk.shapes, extras=pk.extras, raw_key=key)


def dec(op, tactic, version, kind):
    return decode.decode_tactic(record(op, tactic, version, EXTRAS.format(**kind)))


def cfg(d):
    assert isinstance(d, Decoded), d
    c = d.config
    return c.tile, c.cluster, c.mainloop_schedule, c.swap_ab


@pytest.mark.parametrize("version", ["0.6.18rc7", "0.7.1"])
@pytest.mark.parametrize("kind", [W4A8, W4A16_MXFP4])
@pytest.mark.parametrize("tactic, want", [
    (0, ((64, 16, 128), (1, 1, 1), "PINGPONG", True)),       # tile 0, cluster 0
    (9, ((64, 16, 512), (2, 1, 1), "PINGPONG", True)),       # tile 2 (64x16x512B), cluster 1
    (48, ((128, 16, 128), (1, 1, 1), "COOPERATIVE", True)),  # tile 12: first M=128 tile
    (99, ((128, 256, 128), (2, 2, 1), "COOPERATIVE", True)),  # tile 24, last cluster
    (115, ((256, 256, 128), (2, 2, 1), "COOPERATIVE", True)),  # tile 28, the last of 116
])
def test_sm90_mixed_input_gemm1(version, kind, tactic, want):
    assert cfg(dec(G1, tactic, version, kind)) == want


@pytest.mark.parametrize("kind", [W4A8, W4A16_MXFP4])
def test_sm90_mixed_input_gemm2_follows_116_gemm1_tactics(kind):
    # GEMM2 has no FINALIZE copies for the mixed-input GEMM: the same 116 configs, offset 116
    assert cfg(dec(G2, 116, "0.6.18rc7", kind)) == ((64, 16, 128), (1, 1, 1), "PINGPONG", True)
    assert cfg(dec(G2, 231, "0.6.18rc7", kind)) == ((256, 256, 128), (2, 2, 1), "COOPERATIVE", True)
    last = dec(G2, 232, "0.6.18rc7", kind)
    assert isinstance(last, Undecoded) and "out of range" in last.reason


@pytest.mark.parametrize("version, tactic, want", [
    ("0.6.18rc7", 116, ((128, 8, 128), (1, 1, 1), "SINGLE_WARPGROUP_PREFILL", True)),
    ("0.6.18rc7", 123, ((128, 40, 128), (1, 1, 1), "SINGLE_WARPGROUP_ROLLING", True)),
    ("0.7.1", 125, ((128, 64, 128), (1, 1, 1), "SINGLE_WARPGROUP_ROLLING", True)),
])
def test_sm90_humming_appends_single_warpgroup_configs(version, tactic, want):
    assert cfg(dec(G1, tactic, version, HUMMING)) == want
    assert cfg(dec(G1, 0, version, HUMMING)) == ((64, 16, 128), (1, 1, 1), "PINGPONG", True)


def test_rc7_humming_has_124_tactics_and_0_7_1_has_126():
    assert isinstance(dec(G1, 124, "0.6.18rc7", HUMMING), Undecoded)
    assert isinstance(dec(G1, 125, "0.7.1", HUMMING), Decoded)
    assert isinstance(dec(G1, 126, "0.7.1", HUMMING), Undecoded)


@pytest.mark.parametrize("version", ["0.6.18rc7", "0.7.1"])
@pytest.mark.parametrize("tactic, tile, stages", [
    (0, (16, 128, 64), 2), (5, (16, 256, 64), 4), (14, (128, 128, 64), 4),
    (15, (16, 128, 64), 2),  # the weight-only "cuda kernel" entry: tiles[0] at min_stages
])
def test_sm90_int4_weight_only_uses_sm80_style_configs(version, tactic, tile, stages):
    d = dec(G1, tactic, version, INT4_WEIGHT_ONLY)
    assert isinstance(d, Decoded) and d.config.style == "sm80"
    assert (d.config.tile, d.config.stages, d.config.swap_ab) == (tile, stages, False)
    g2 = dec(G2, 16 + tactic, version, INT4_WEIGHT_ONLY)
    assert isinstance(g2, Decoded) and (g2.config.tile, g2.config.stages) == (tile, stages)


def test_seventeen_field_extras_select_w4a8_in_0_7_2_post1():
    # 0.7.2.post1 drops tp_rank, ep_rank and cluster_rank from the extras
    extras = ("(torch.bfloat16, torch.uint8, torch.bfloat16, 8, 1, 1, 1, False, False, True, False, False, "
              "False, True, 3, True, True)")
    r = record(G1, 48, "0.7.2.post1", extras)
    assert moe.variants_for(r) == [{"act": "fp8", "weight": "int4", "finalize": True}]
    assert cfg(decode.decode_tactic(r)) == ((128, 16, 128), (1, 1, 1), "COOPERATIVE", True)


def test_old_mixed_dispatcher_releases_say_no_catalog_and_why_in_the_data():
    d = dec(G1, 0, "0.6.18rc2", W4A8)  # extras exist from rc2; the old dispatcher was before 0.6.16
    assert isinstance(d, Decoded)
    old = decode.decode_tactic(TuningRecord(
        source="t", source_kind="test", op=G1, runner="MoERunner", tactic=0, status=Status.CHOSEN,
        env=Environment(flashinfer_version="0.6.14", arch="sm90"),
        shapes=parse_key(f"('{G1}', 'MoERunner', {SHAPES}, ())").shapes, extras=()))
    # a pre-rc2 key with 4-bit packed weights: int4 weight-only lists and the W4A16 MXFP4 one exist
    # (the older dispatcher fixes K 128 for MXFP4 weights), W4A8 does not (its K is chosen at run time)
    assert isinstance(old, Undecoded) and "ambiguous" in old.reason and "fp8 x int4" in old.reason
    assert {(c.tile, c.stages) for c in old.candidates} == {((16, 128, 64), 2), ((64, 16, 128), None)}
    from tiletune import catalogs

    notes = {(dict(v)["act"], dict(v)["weight"]): why for v, why in catalogs.not_extracted("0.6.14", "sm90")
             if dict(v).get("scaling") != "deepseek-block"}
    assert set(notes) == {("fp8", "int4"), ("fp8", "mxfp4")}  # W4A8, and humming (no such mode before 0.6.16)
    assert "INT4 weights (W4A8)" in notes[("fp8", "int4")] and "PackedScalesNum" in notes[("fp8", "int4")]
    assert "humming" in notes[("fp8", "mxfp4")]
    assert "PackedScalesNum" in old.reason  # the reason comes from the data's note


def test_pre_rc2_4bit_key_in_a_new_dispatcher_release_lists_every_candidate():
    r = TuningRecord(source="t", source_kind="test", op=G1, runner="MoERunner", tactic=0, status=Status.CHOSEN,
                     env=Environment(flashinfer_version="0.6.18rc1", arch="sm90"),
                     shapes=parse_key(f"('{G1}', 'MoERunner', {SHAPES}, ())").shapes, extras=())
    d = decode.decode_tactic(r)
    assert isinstance(d, Undecoded) and "ambiguous" in d.reason
    assert {(c.tile, c.stages, c.swap_ab) for c in d.candidates} == {((16, 128, 64), 2, False),
                                                                      ((64, 16, 128), None, True)}


def test_plain_fp8_x_mxfp4_on_sm90_does_not_borrow_the_humming_list():
    # int64-packed MXFP4 with FP8 activations: the binding builds that runner only on SM100+
    extras = ("(torch.float8_e4m3fn, torch.int64, torch.bfloat16, 8, 1, 0, 1, 0, 1, 0, False, False, False, "
              "False, False, False, True, 3, False, True)")
    d = decode.decode_tactic(record(G1, 0, "0.6.18rc7", extras))
    assert isinstance(d, Undecoded) and not d.candidates and "no " in d.reason


def test_known_failures_of_mixed_lists_are_none_for_dispatched_tiles():
    d = dec(G1, 116, "0.6.18rc7", HUMMING)
    assert isinstance(d, Decoded) and catalogs.known_failure(d) is None


# flashinfer_cutlass_fused_moe_binding.cu, FusedMoeRunner::setRunnerProfiles (v0.6.7 .. 0.7.4 alike):
# under mUseDeepSeekFP8BlockScaling it ignores the profile ids and sets
# CutlassGemmConfig(CutlassTileConfigSM90::CtaShape128x16x128B, AUTO, AUTO, 1x1x1) on both GEMMs.
DEEPSEEK = ("(torch.bfloat16, torch.float8_e4m3fn, torch.bfloat16, 8, 1, 0, 1, 0, 1, 0, False, True, False, False, "
            "False, False, True, 3, False, True)")


def test_deepseek_block_scale_tactic_selects_nothing_and_decode_says_why():
    key = f"('{G1}', 'MoERunner', ((16, 2048), (128, 1536, 2048), (0,), (128, 2048, 768), (0,)), {DEEPSEEK})"
    pk = parse_key(key)
    r = TuningRecord(source="t", source_kind="test", op=pk.op, runner=pk.runner, tactic=3, status=Status.CHOSEN,
                     env=Environment(flashinfer_version="0.6.18rc7", arch="sm90"), shapes=pk.shapes, extras=pk.extras)
    assert moe.variants_for(r) == [{"act": "bf16", "weight": "fp8", "scaling": "deepseek-block", "finalize": True}]
    d = decode.decode_tactic(r)
    assert isinstance(d, Undecoded) and not d.candidates
    assert "setRunnerProfiles" in d.reason and "CtaShape128x16x128B" in d.reason


def test_pre_rc2_one_byte_weights_name_the_deepseek_possibility():
    key = f"('{G1}', 'MoERunner', ((16, 2048), (128, 1536, 2048), (0,), (128, 2048, 768), (0,)), ())"
    pk = parse_key(key)
    r = TuningRecord(source="t", source_kind="test", op=pk.op, runner=pk.runner, tactic=0, status=Status.CHOSEN,
                     env=Environment(flashinfer_version="0.6.14", arch="sm90"), shapes=pk.shapes, extras=pk.extras)
    d = decode.decode_tactic(r)
    assert isinstance(d, Undecoded) and "ambiguous" in d.reason and "deepseek-block" in d.reason
    # tactic 0: bf16/fp16 128x16x64, fp8 128x16x128 (TMA-WS, K bytes 128 -> elements), bf16 x fp8
    # weight-only 16x128x64 at 2 stages (SM80-style list above)
    assert {(c.tile, c.stages) for c in d.candidates} == {((128, 16, 64), None), ((128, 16, 128), None),
                                                          ((16, 128, 64), 2)}
