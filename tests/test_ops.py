"""ops.problem_for on real key strings (FlashInfer's own formats, parsed by the readers' key
parser): dense GEMMs, CUTLASS fused MoE (with and without the 0.6.18rc2 extras), trtllm-gen MoE,
and unknown ops. Expected sizes are worked out from the shapes in each string (comments)."""

from __future__ import annotations

import pytest

from tiletune.ops import problem_for
from tiletune.readers.keyparse import parse_key
from tiletune.records import Environment, Status, TuningRecord


def rec(key: str, version="0.6.14", runner=None):
    k = parse_key(key)
    return TuningRecord(source="t", source_kind="test", op=k.op, runner=runner or k.runner, tactic=0,
                        status=Status.CHOSEN, env=Environment(flashinfer_version=version, arch="sm120"),
                        shapes=k.shapes, extras=k.extras, raw_key=key)


def test_fp4_gemm_k_is_twice_the_packed_bytes():
    # cache_samples/v1 style key: a (16, 2048 bytes) -> K = 4096 elements; b (2048, 4096) -> N = 4096
    p, why = problem_for(rec("('fp4_gemm', 'CutlassFp4GemmRunner', ((16, 2048), (2048, 4096), (-1, 256), "
                             "(256, 4096), (), (0,), (-1, 4096), (0,), (0,), (-1,)), ())"))
    assert why is None
    assert (p.m, p.n, p.k, p.m_range) == (16, 4096, 4096, (9, 16))
    assert p.dtype_a == p.dtype_b == "nvfp4"


def test_fp4_research_note_example_3_part_key():
    # flashinfer-autotuner.md 1.3: M bucket 128, K=7168 (3584 packed), N=4608; a 0.6.12 3-part key
    p, _ = problem_for(rec("('fp4_gemm', 'CutlassFp4GemmRunner', ((128, 3584), (3584, 4608), (-1, 224), "
                           "(224, 4608), (), (0,), (-1, 4608), (0,), (0,), (-1,)))", version="0.6.12"))
    assert (p.m, p.n, p.k) == (128, 4608, 7168)


def test_fp8_gemm_cublas_real_sample():
    # cache_samples/real/flashinfer-0.7.2.post1-h200-fp8_gemm-cublas.json, a real H200 key
    p, _ = problem_for(rec("('fp8_gemm', 'CublasFp8GemmRunner', ((1, 128, 4096), (1, 4096, 4096), (), (), "
                           "(1, -1, 4096), (-1,)), (torch.float8_e4m3fn, torch.float8_e4m3fn, torch.bfloat16))",
                           version="0.7.2.post1"))
    assert (p.batch, p.m, p.k, p.n) == (1, 128, 4096, 4096)
    assert (p.dtype_a, p.dtype_b, p.dtype_out) == ("fp8", "fp8", "bf16")
    assert p.m_range == (65, 128)


def test_mxfp8_and_bf16():
    p, _ = problem_for(rec("('mxfp8_gemm', 'CutlassMxfp8GemmRunner', ((256, 7168), (7168, 2048), (-1, 224), "
                           "(2048, 224), (0,), (-1, 2048), (-1,)), ())"))
    assert (p.m, p.n, p.k, p.dtype_a) == (256, 2048, 7168, "mxfp8")
    p, _ = problem_for(rec("('bf16_gemm', 'CutlassBf16GemmRunner', ((64, 4096), (4096, 1024), (0,), (0,), "
                           "(-1, 1024), (-1,)), ())"))
    assert (p.m, p.n, p.k, p.dtype_a) == (64, 1024, 4096, "bf16")


def test_old_release_bucket_mapping_is_power_of_two_floor():
    p, _ = problem_for(rec("('fp8_gemm', 'CutlassFp8GemmRunner', ((1, 64, 4096), (1, 4096, 4096), (), (), "
                           "(1, -1, 4096), (-1,)))", version="0.6.7"))
    assert p.m_range == (64, 127)


MOE_EXTRAS = ("(torch.bfloat16, torch.bfloat16, torch.bfloat16, 8, 1, 0, 1, 0, 1, 0, False, False, False, "
              "False, False, False, True, 3, False, True)")


@pytest.mark.parametrize("op, n, k", [("gemm1", 1536, 2048), ("gemm2", 2048, 768)])
def test_cutlass_moe_with_extras(op, n, k):
    # cache_samples/v1/sm90-h200-0.6.18-moe-bf16-records.json: input (T=128, H=2048),
    # fc1 (E=128, 2I=1536, H=2048), fc2 (128, H=2048, I=768). GEMM1: N=2I, K=H; GEMM2: N=H, K=I.
    key = (f"('trtllm::fused_moe::{op}', 'MoERunner', ((128, 2048), (128, 1536, 2048), (0,), (128, 2048, 768), (0,)), "
           f"{MOE_EXTRAS})")
    p, _ = problem_for(rec(key, version="0.6.18rc2"))
    assert (p.m, p.n, p.k, p.experts, p.top_k) == (128, n, k, 128, 8)
    assert (p.dtype_a, p.dtype_b, p.dtype_out) == ("bf16", "bf16", "bf16")
    assert p.m_range == (65, 128)


def test_cutlass_moe_packed_fp4_without_extras():
    # 3-part key (before 0.6.13), FP4 weights packed 2 per uint8: fc1 (E=256, 2I=4096, H/2=3584),
    # fc2 (256, H=7168, I/2=1024) -> H=7168, I=2048; no extras, so no dtypes and no top_k
    key = ("('trtllm::fused_moe::gemm2', 'MoERunner', ((64, 3584), (256, 4096, 3584), (0,), (256, 7168, 1024), (0,)))")
    p, _ = problem_for(rec(key, version="0.6.12"))
    assert (p.m, p.n, p.k, p.experts, p.top_k, p.dtype_a) == (64, 7168, 2048, 256, None, None)
    assert any("no extras" in n for n in p.notes)


def test_trtllm_gen_moe_says_what_it_has_and_why_no_problem():
    key = ("('flashinfer::trtllm_fp4_block_scale_moe', 'MoERunner', ((1024, 7168), (1024, 256), (1024, 8), "
           "(1024, 8), (1024, 3584), (1024, 448), (0,), (0,)), ())")
    p, why = problem_for(rec(key, version="0.6.15"))
    assert p is None
    assert "hidden 7168" in why and "256 experts" in why and "top_k 8" in why and "intermediate size" in why


def test_unknown_op_and_bad_shapes_give_reasons_not_errors():
    p, why = problem_for(rec("('some_new_gemm', 'FancyRunner', ((8, 16),), ())"))
    assert p is None and "unknown op 'some_new_gemm'" in why
    p, why = problem_for(rec("('fp4_gemm', 'CutlassFp4GemmRunner', ((16,), (2048, 4096)), ())"))
    assert p is None and "layout" in why
    p, why = problem_for(rec("('fp4_gemm', 'CutlassFp4GemmRunner', ((16, 2048), (1024, 4096)), ())"))
    assert p is None and "K/2 differs" in why


def test_moe_key_of_0_7_2_post1_with_17_extras():
    # 0.7.2.post1's MoERunner.get_cache_key_extras has 17 fields (no tp/ep/cluster rank)
    key = ("('trtllm::fused_moe::gemm1', 'MoERunner', ((64, 2048), (128, 1536, 2048), (0,), (128, 2048, 768), (0,)), "
           "(torch.float8_e4m3fn, torch.float8_e4m3fn, torch.bfloat16, 8, 1, 1, 1, False, False, False, False, "
           "False, False, True, 3, False, True))")
    p, why = problem_for(rec(key, version="0.7.2.post1"))
    assert why is None
    assert (p.m, p.n, p.k, p.experts, p.top_k, p.dtype_a, p.dtype_out) == (64, 1536, 2048, 128, 8, "fp8", "bf16")
