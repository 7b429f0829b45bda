"""Fused-MoE lists added for issue 22 (catalog gap 3 and 4), each against values read by hand in
the release wheels (PyPI); tests/catalogs/test_moe_tactics_nvcc.py checks the same lists against
FlashInfer's own getTactics() compiled by nvcc.

Read by hand (0.7.4 unless named): csrc/.../cutlass_heuristic.cpp get_candidate_configs_sm110
(cluster M x N loops: at (1,1) 128x128, 128x256, 128x32 (+128x16 for FP8), 64x64, 64x128, 64x256,
128x64; at (1,2) the same less 128x32/128x16; at (2,1) 128x128, 128x256, 128x64, 256x64, 256x128,
256x256; at (2,2) 128x128, 128x256, 256x128, 256x256; TMA epilogue), moe_gemm_template_dispatch.h
getTmaWarpSpecializedConfigs (no early return below SM90; swap_ab copies), flashinfer/fused_moe/
core.py get_cutlass_fused_moe_module (backends 89, 90, 100, 103, 107 from 0.6.16, 110, 120/121),
flashinfer/jit/fused_moe.py (the SM89 module has no -DENABLE_FP4), the binding's FusedMoeRunner
constructor (MXFP8 x MXFP8 -> switch_output_type<fp8, fp8, false, true>; MXFP4 x MXFP8 shares FP8
x MXFP4's runner; FP16 x MXFP4 refused from 0.6.16 with an ICHECK, built as <half, Fp4> in 0.6.12),
moe_kernels.h filterMxfp8Tactics, and the older mixed-input dispatcher of 0.6.12 (Ntile 64 /
Ktile 128 for FP4 weights)."""

from __future__ import annotations

import pytest

from tiletune import catalogs, decode
from tiletune.catalogs import moe
from tiletune.core.records import Decoded, Environment, Status, TuningRecord, Undecoded
from tiletune.core.vocabulary import FUSED_MOE_OPS, MOE_RUNNER

G1, G2 = FUSED_MOE_OPS


def _one(version, arch, act, weight, op=G1, finalize=True):
    (cat,) = [c for c in catalogs.lookup(version, arch, op, MOE_RUNNER, {"act": act, "weight": weight, "finalize": finalize})
              if "scaling" not in c.variant]
    return cat


def test_sm110_has_its_own_list():
    cat = _one("0.7.4", "sm110", "bf16", "bf16")
    tma = [c for c in cat.configs if c.style == "tma_ws"]
    assert len(tma) == 46 and len(cat.configs) == 55  # 23 configs, their swap_ab copies, 9 SM80-style
    head = [(c.name, c.cluster) for c in tma[:23]]
    assert head[:7] == [(f"CtaShape{t}B", (1, 1, 1)) for t in
                        ("128x128x128", "128x256x128", "128x32x128", "64x64x128", "64x128x128", "64x256x128", "128x64x128")]
    assert head[13:19] == [(f"CtaShape{t}B", (2, 1, 1)) for t in
                           ("128x128x128", "128x256x128", "128x64x128", "256x64x128", "256x128x128", "256x256x128")]
    assert all(c.epilogue_schedule == "TMA" for c in tma)
    # 256-row tiles run a 512-row 2-SM MMA: the SM100 TMA-WS dispatch (which SM110 uses) has no case for them
    assert all((cat.known_failures[i] is not None) == (c.name.startswith("CtaShape256")) for i, c in enumerate(tma))
    fp8 = [c for c in _one("0.7.4", "sm110", "fp8", "fp8").configs if c.style == "tma_ws"]
    assert [c.name for c in fp8[:8]][3] == "CtaShape128x16x128B"  # the FP8-only tile at cluster (1, 1)


def test_sm107_from_0_6_16_with_its_own_fp4_lists():
    assert catalogs.lookup("0.6.15.post1", "sm107", G1, MOE_RUNNER) == []
    nv107, nv100 = _one("0.6.16", "sm107", "nvfp4", "nvfp4"), _one("0.6.16", "sm100", "nvfp4", "nvfp4")
    assert len(nv107.configs) == 56 and len(nv100.configs) == 42  # not sm100's list
    assert _one("0.7.4", "sm107", "bf16", "bf16").configs == _one("0.7.4", "sm100", "bf16", "bf16").configs


def test_sm89_lists():
    bf16 = _one("0.7.4", "sm89", "bf16", "bf16")
    assert len(bf16.configs) == 18 and all(c.style == "sm80" for c in bf16.configs)
    six = bf16.configs[:6]
    assert [c.swap_ab for c in bf16.configs] == [False] * 6 + [True] * 6 + [False] * 6
    assert [(c.tile, c.stages) for c in bf16.configs[6:12]] == [(c.tile, c.stages) for c in six]
    assert {c.stages for c in six} == {3, 4}  # min_stages is 3 on SM89
    assert len(_one("0.7.4", "sm89", "fp8", "int4").configs) == 22  # W4A8: swap_ab copies only, then the SM89 list
    assert catalogs.lookup("0.7.4", "sm89", G1, MOE_RUNNER, {"act": "nvfp4", "weight": "nvfp4"}) == []  # no ENABLE_FP4


def test_mxfp8_activations():
    for arch in ("sm100", "sm103"):
        for op in FUSED_MOE_OPS:
            assert _one("0.7.4", arch, "mxfp8", "mxfp8", op).configs == _one("0.7.4", arch, "fp8", "fp8", op).configs
            assert _one("0.7.4", arch, "mxfp8", "mxfp4", op).configs == _one("0.7.4", arch, "fp8", "mxfp4", op).configs
    # SM120: FP8 x FP8 is SM89-style only there, which filterMxfp8Tactics drops: MXFP8 has no tactic
    assert catalogs.lookup("0.7.4", "sm120", G1, MOE_RUNNER, {"act": "mxfp8", "weight": "mxfp8"}) == []
    why = moe.why_no_list("0.7.4", "sm120", {"act": "mxfp8", "weight": "mxfp8"})
    assert why and "no tactics" in why


MXFP8_KEY = ("('trtllm::fused_moe::gemm1', 'MoERunner', ((64, 7168), (256, 4096, 448), (0,), (256, 7168, 128), (0,)), "
             "(torch.float8_e4m3fn, torch.int64, torch.bfloat16, 8, 1, 0, 1, 0, 1, 0, False, False, False, "
             "True, False, False, True, 3, False, True))")


def test_an_mxfp8_key_decodes():
    from tiletune.readers.keyparse import parse_key

    pk = parse_key(MXFP8_KEY)
    r = TuningRecord(source="t.json", source_kind="flashinfer-v1", op=pk.op, runner=pk.runner, tactic=5, status=Status.CHOSEN,
                     env=Environment(flashinfer_version="0.7.4", arch="sm100"), shapes=pk.shapes, extras=pk.extras)
    assert moe.variants_for(r) == [{"act": "mxfp8", "weight": "mxfp4", "finalize": True}]
    d = decode.decode_tactic(r)
    assert isinstance(d, Decoded) and d.config == _one("0.7.4", "sm100", "fp8", "mxfp4").configs[5]


def test_weight_only_on_blackwell():
    for arch in ("sm100", "sm103", "sm107", "sm110", "sm120"):
        cat = _one("0.7.4", arch, "bf16", "int4")
        assert len(cat.configs) == 16 and all(c.style == "sm80" for c in cat.configs)
        assert cat.configs == _one("0.7.4", "sm90", "bf16", "int4").configs  # the same SM80-style weight-only list


def _key_record(x: str, w: str, version: str, arch: str, tactic: int = 0) -> TuningRecord:
    """A gemm1 key with MoERunner's 20 extras naming these dtypes (no scaling flags)."""
    from tiletune.readers.keyparse import parse_key

    key = ("('trtllm::fused_moe::gemm1', 'MoERunner', ((64, 2880), (32, 5760, 1440), (0,), (32, 2880, 1440), (0,)), "
           f"({x}, {w}, torch.bfloat16, 4, 1, 0, 1, 0, 1, 0, False, False, False, False, False, False, True, 3, False, True))")
    pk = parse_key(key)
    return TuningRecord(source="t.json", source_kind="flashinfer-v1", op=pk.op, runner=pk.runner, tactic=tactic,
                        status=Status.CHOSEN, env=Environment(flashinfer_version=version, arch=arch), shapes=pk.shapes,
                        extras=pk.extras)


def test_sm90_fp16_mxfp4():
    # 0.6.12 builds CutlassMoeFCRunner<half, Fp4>: the BF16 list
    assert _one("0.6.12", "sm90", "fp16", "mxfp4").configs == _one("0.6.12", "sm90", "bf16", "mxfp4").configs
    d = decode.decode_tactic(_key_record("torch.float16", "torch.uint8", "0.6.12", "sm90", 3))
    assert isinstance(d, Decoded) and d.config == _one("0.6.12", "sm90", "bf16", "mxfp4").configs[3]
    # 0.7.4 refuses FP16: said with the binding's own words, never "no catalog for sm90 (it has ... sm90)"
    d = decode.decode_tactic(_key_record("torch.float16", "torch.uint8", "0.7.4", "sm90"))
    assert isinstance(d, Undecoded) and "supports BF16 activations only" in d.reason and "(it has" not in d.reason


def test_no_self_contradicting_message():
    # a variant tiletune does not extract on an arch that has other lists (MXFP8 on SM90): named,
    # with what the arch has
    r = _key_record("torch.float8_e4m3fn", "torch.float8_e4m3fn", "0.7.4", "sm90")
    r = TuningRecord(source=r.source, source_kind=r.source_kind, op=r.op, runner=r.runner, tactic=0, status=r.status,
                     env=r.env, shapes=r.shapes, extras=tuple(True if i == 13 else v for i, v in enumerate(r.extras)))
    assert moe.variants_for(r) == [{"act": "mxfp8", "weight": "mxfp8", "finalize": True}]
    d = decode.decode_tactic(r)
    assert isinstance(d, Undecoded) and "(it has" not in d.reason
    assert "no trtllm::fused_moe::gemm1 list for mxfp8 x mxfp8" in d.reason and "bf16 x bf16" in d.reason


@pytest.mark.parametrize("version, size", [("0.6.12", 28), ("0.6.17", 28), ("0.6.7", 48)])
def test_sm90_bf16_mxfp4_in_the_older_releases(version, size):
    cat = _one(version, "sm90", "bf16", "mxfp4")
    assert len(cat.configs) == size and all(c.swap_ab for c in cat.configs)
    # the older dispatcher runs K 128 for MXFP4 weights and N 64 for the 64x128 enum
    assert {c.tile[2] for c in cat.configs} == {128}
    assert {c.tile for c in cat.configs if c.name == "CtaShape64x128x128B"} == {(64, 64, 128)}
    if version == "0.6.7":  # {PINGPONG} plus COOPERATIVE where the tile supports it, in enum order
        assert {c.mainloop_schedule for c in cat.configs} == {"PINGPONG", "COOPERATIVE"}
    # W4A8 stays out, for the reason that holds for it alone
    why = moe.why_no_list(version, "sm90", {"act": "fp8", "weight": "int4"})
    assert why and "INT4 weights (W4A8)" in why
    assert moe.why_no_list(version, "sm90", {"act": "bf16", "weight": "mxfp4"}) is None
