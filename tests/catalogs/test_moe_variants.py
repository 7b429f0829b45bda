"""Variant selection for trtllm::fused_moe records (tiletune.catalogs.moe) on real key strings."""

from __future__ import annotations

import pytest

from tiletune import decode
from tiletune.catalogs import moe
from tiletune.core import moe_key_extras
from tiletune.core.records import Decoded, Environment, Status, TuningRecord, Undecoded
from tiletune.readers.keyparse import parse_key


def record(key: str, tactic, version: str, arch: str) -> TuningRecord:
    pk = parse_key(key)
    return TuningRecord(source="t.json", source_kind="flashinfer-v1", op=pk.op, runner=pk.runner, tactic=tactic,
                        status=Status.CHOSEN, env=Environment(flashinfer_version=version, arch=arch),
                        shapes=pk.shapes, extras=pk.extras, raw_key=key)


# sgl-project/sglang#34629 (SM120, FlashInfer 0.6.x): int64-packed FP4 weights (2560 / 160 = 16)
SGLANG_SM120 = "('trtllm::fused_moe::gemm1', 'MoERunner', ((1, 2560), (512, 1280, 160), (0,), (512, 2560, 40), (0,)), ())"
# bf16 / fp8 weights (fc1 last dim == hidden), pre-0.6.18rc2 key: no dtype recorded
PLAIN_OLD = "('trtllm::fused_moe::gemm2', 'MoERunner', ((64, 4096), (8, 2048, 4096), (0,), (8, 4096, 1024), (0,)), ())"
EXTRAS_BF16 = ("(torch.bfloat16, torch.bfloat16, torch.bfloat16, 2, 1, 0, 1, 0, 1, 0, False, False, False, "
               "False, False, False, True, 3, False, {fin})")
EXTRAS_FP4 = ("(torch.bfloat16, torch.int64, torch.bfloat16, 8, 1, 0, 1, 0, 1, 0, False, False, False, "
              "False, False, False, True, 3, False, True)")


def test_pre_rc2_plain_weights_are_ambiguous_between_bf16_and_fp8():
    r = record(PLAIN_OLD, 45 + 2, "0.6.14", "sm90")
    pairs = {(v["act"], v["weight"]) for v in moe.variants_for(r)}
    assert pairs == {("bf16", "bf16"), ("fp16", "fp16"), ("fp8", "fp8"), ("bf16", "fp8")}
    d = decode.decode_tactic(r)
    assert isinstance(d, Undecoded) and "ambiguous" in d.reason
    # bf16: GEMM1 has 45 tactics, so 47 is GEMM2 entry 2 = 128x32x128B 1x1x1 -> K 64 elements;
    # fp8: GEMM1 has 36, so 47 is GEMM2 entry 11 = 128x256x128B 2x1x1 -> K 128 elements
    assert {c.tile for c in d.candidates} == {(128, 32, 64), (128, 256, 128)}


def test_sglang_sm120_key_packing_leaves_nvfp4_or_w4a8():
    r = record(SGLANG_SM120, 0, "0.6.14", "sm120")
    pairs = {(v["act"], v["weight"]) for v in moe.variants_for(r)}
    assert pairs == {("nvfp4", "nvfp4"), ("fp8", "mxfp4")}


def test_prequantized_fp4_activations_are_nvfp4():
    key = "('trtllm::fused_moe::gemm1', 'MoERunner', ((1, 1280), (512, 1280, 160), (0,), (512, 2560, 40), (0,)), ())"
    assert {(v["act"], v["weight"]) for v in moe.variants_for(record(key, 0, "0.6.14", "sm120"))} == {("nvfp4", "nvfp4")}


@pytest.mark.parametrize("fin", [True, False])
def test_extras_give_the_exact_variant(fin):
    key = ("('trtllm::fused_moe::gemm2', 'MoERunner', ((64, 4096), (8, 2048, 4096), (0,), (8, 4096, 1024), (0,)), "
           + EXTRAS_BF16.format(fin=fin) + ")")
    r = record(key, 45, "0.6.18rc2", "sm90")
    assert moe.variants_for(r) == [{"act": "bf16", "weight": "bf16", "finalize": fin}]
    d = decode.decode_tactic(r)
    assert isinstance(d, Decoded) and d.config.tile == (128, 16, 64) and d.index == 0
    last = decode.decode_tactic(record(key, 125, "0.6.18rc2", "sm90"))
    if fin:  # 81 GEMM2 tactics: 125 is the last Ampere config
        assert isinstance(last, Decoded) and last.config.style == "sm80"
    else:  # without finalize GEMM2 has 45 tactics (45..89): 125 is out of range
        assert isinstance(last, Undecoded) and "out of range" in last.reason


def test_extras_int64_weights_with_bf16_input_mean_nvfp4():
    key = SGLANG_SM120.replace(", ())", ", " + EXTRAS_FP4 + ")")
    r = record(key, 4, "0.6.18rc7", "sm120")
    assert moe.variants_for(r) == [{"act": "nvfp4", "weight": "nvfp4", "finalize": True}]
    d = decode.decode_tactic(r)
    assert isinstance(d, Decoded) and d.config.tile == (128, 128, 512)  # 128x128x256B, FP4
    from tiletune import catalogs

    assert "Unsupported tile shape config" in (catalogs.known_failure(d) or "")


def test_runner_types_follow_the_binding_dispatch():
    base = dict(zip(moe_key_extras.FIELDS_20, [None] * len(moe_key_extras.FIELDS_20)))
    f = lambda **kw: moe.runner_types({**base, **kw})  # noqa: E731
    assert f(x_dtype="torch.float8_e4m3fn", weight_dtype="torch.float8_e4m3fn") == {"act": "fp8", "weight": "fp8"}
    assert f(x_dtype="torch.float8_e4m3fn", weight_dtype="torch.float8_e4m3fn", use_mxfp8_act_scaling=True) == {
        "act": "mxfp8", "weight": "mxfp8"}
    assert f(x_dtype="torch.float8_e4m3fn", weight_dtype="torch.int64") == {"act": "fp8", "weight": "mxfp4"}
    assert f(x_dtype="torch.bfloat16", weight_dtype="torch.uint8", use_packed_weights=True) == {
        "act": "bf16", "weight": "int4"}
    assert f(x_dtype="torch.float32", weight_dtype="torch.float32") == {"act": "fp32", "weight": "fp32"}
    assert f(x_dtype="torch.complex64", weight_dtype="torch.bfloat16") is None


def test_uncatalogued_variant_is_reported_not_guessed():
    # FP8 x FP8 with MXFP8 activation scaling on SM90: no tiletune list (MXFP8 is catalogued on
    # Blackwell; the int4 key this test used before now has one, see test_moe_mixed.py)
    key = ("('trtllm::fused_moe::gemm1', 'MoERunner', ((8, 4096), (8, 2048, 4096), (0,), (8, 4096, 1024), (0,)), "
           "(torch.float8_e4m3fn, torch.float8_e4m3fn, torch.bfloat16, 2, 1, 0, 1, 0, 1, 0, False, False, False, True, "
           "False, False, True, 3, False, True))")
    d = decode.decode_tactic(record(key, 0, "0.6.18rc7", "sm90"))
    assert isinstance(d, Undecoded) and not d.candidates and "no trtllm::fused_moe::gemm1 list for mxfp8 x mxfp8" in d.reason


def test_tactic_counts_errors():
    from tiletune.core.errors import CatalogError

    with pytest.raises(CatalogError, match="no fused-MoE catalog"):
        moe.tactic_counts("0.6.18rc7", "sm90", {"act": "nvfp4", "weight": "nvfp4", "finalize": True})
    with pytest.raises(CatalogError, match="sizes"):
        moe.tactic_counts("0.6.18rc7", "sm90", {"finalize": True})  # bf16 45 vs fp8 36


def test_0_7_2_post1_seventeen_field_extras_select_the_exact_variant():
    # 0.7.2.post1's MoERunner.get_cache_key_extras drops tp_rank, ep_rank and cluster_rank
    # (flashinfer/fused_moe/core.py in the wheel): 17 fields, same meaning for the rest
    extras = ("torch.bfloat16", "torch.bfloat16", "torch.bfloat16", 8, 1, 1, 1, False, False, False, False,
              False, False, True, 3, False, True)
    assert len(extras) == len(moe_key_extras.FIELDS_17) == 17
    r = TuningRecord(source="t", source_kind="test", op="trtllm::fused_moe::gemm2", runner="MoERunner", tactic=0,
                     status=Status.CHOSEN, env=Environment(flashinfer_version="0.7.2.post1", arch="sm90"),
                     shapes=((8, 2048), (128, 1536, 2048), (0,), (128, 2048, 768), (0,)), extras=extras)
    assert moe.variants_for(r) == [{"act": "bf16", "weight": "bf16", "finalize": True}]
    assert moe_key_extras.by_name(extras)["top_k"] == 8 and moe_key_extras.by_name(extras)["activation_type"] == 3
