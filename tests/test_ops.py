"""problems.problem_for on real key strings (FlashInfer's own formats, parsed by the readers' key
parser): dense GEMMs, CUTLASS fused MoE (with and without the 0.6.18rc2 extras), trtllm-gen MoE,
and unknown problems. Expected sizes are worked out from the shapes in each string (comments)."""

from __future__ import annotations

import pytest

from tiletune.core.records import Environment, Status, TuningRecord
from tiletune.decode.problems import problem_for
from tiletune.readers.keyparse import parse_key


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


def _plain_fp4(op, runner, shapes, extras, version):
    """The fp4_gemm builder as written before its checks went inline (the reference for problems._fp4)."""
    from tiletune.core.records import Problem
    from tiletune.decode import problems

    a = problems._dims(shapes[0], 2, "a")
    b = problems._dims(shapes[1], 2, "b")
    m, k_half, n = a[0], a[1], b[1]
    if b[0] != k_half:
        raise ValueError(f"a is (M, {k_half}) but b is ({b[0]}, N): K/2 differs")
    if min(m, k_half, n) <= 0:
        problems._positive(M=m, K=k_half, N=n)
    rng, notes = problems._m(m, version, moe=False)
    dtype = None
    if runner.startswith("Cutlass"):
        dtype = "nvfp4"
    elif extras and len(extras) >= 3 and isinstance(extras[2], bool):
        dtype = "nvfp4" if extras[2] else "mxfp4"
    more = ["nvfp4 or mxfp4: this runner's key does not record which"] if dtype is None else []
    out = problems.canonical_dtype(extras[0]) if extras else None
    return Problem(m=m, n=n, k=2 * k_half, m_range=rng, dtype_a=dtype, dtype_b=dtype, dtype_out=out,
                   notes=tuple([problems._FP4_K_NOTE] + notes + more)), None


def _plain_cutlass_moe(op, shapes, extras, version):
    """The CUTLASS fused-MoE builder with its notes built per key (the reference for problems._cutlass_moe)."""
    from tiletune.core.records import Problem
    from tiletune.decode import problems

    x = problems._dims(shapes[0], 2, "input")
    w1 = problems._dims(shapes[1], 3, "fc1_expert_weights")
    w2 = problems._dims(shapes[3], 3, "fc2_expert_weights")
    t, experts, hidden = x[0], w1[0], w2[1]
    if min(t, hidden, experts) <= 0:
        problems._positive(tokens=t, hidden=hidden, experts=experts)
    if w1[2] <= 0 or hidden % w1[2]:
        raise ValueError(f"hidden {hidden} is not a multiple of fc1's last dim {w1[2]}")
    pack = hidden // w1[2]
    gemm1 = op.endswith("gemm1")
    n, k = (w1[1], hidden) if gemm1 else (hidden, w2[2] * pack)
    rng, notes = problems._m(t, version, moe=True)
    notes = [f"m is the token bucket; each expert's GEMM{1 if gemm1 else 2} sees about m x top_k / experts rows",
             f"weights packed {pack} per element" if pack > 1 else "weights unpacked"] + notes
    top_k, da, db, out, more = problems._moe_key_facts.__wrapped__(extras, (), experts)
    return Problem(m=t, n=n, k=k, m_range=rng, experts=experts, top_k=top_k, dtype_a=da, dtype_b=db,
                   dtype_out=out, notes=tuple(notes) + more), None


def test_fp4_and_moe_builders_match_their_plain_computation():
    # problems._fp4 (inline shape checks, one memo per bucket) and problems._cutlass_moe (notes memoised per
    # bucket and layer kind) give what the plain builders give, reasons for bad shapes included
    import random

    from tiletune.decode import problems

    def outcome(build, *args):
        try:
            return build(*args)
        except (TypeError, IndexError, ValueError, ZeroDivisionError) as e:
            return None, f"{type(e).__name__}: {e}"

    rng = random.Random(5)
    dims = [1, 2, 3, 16, 100, 128, 4096, 65536, 1 << 20, 0, -1, -7, True, False, 2.0, "8", None]
    extras_choices = [None, (), ("torch.bfloat16",), ("torch.float16", 16, True, True), ("torch.bfloat16", 32, False, False),
                      (1, 2, "x"), ("torch.float8_e4m3fn", 16, 1, True),
                      ("torch.bfloat16", "torch.bfloat16", "torch.bfloat16", 8, 1, 0, 1, 0, 1, 0, False, False, False,
                       False, False, False, True, 3, False, True),
                      ("torch.float8_e4m3fn", "torch.uint8", "torch.bfloat16", 8, 1, 1, 1, False, True, False, False,
                       False, False, True, 3, False, True)]
    seen = set()
    for i in range(6000):
        def shape(n):
            if rng.random() < 0.05:
                return rng.choice([(), (1,), (1, 2, 3, 4), [4, 4], "x", None, 5])
            return tuple(rng.choice(dims[:9]) if rng.random() < 0.92 else rng.choice(dims) for _ in range(n))
        kh, nn = rng.choice(dims[:9]), rng.choice(dims[:9])
        version = rng.choice(["0.7.2.post1", "0.6.7", "0.6.14", None, "9.9"])
        extras = rng.choice(extras_choices)
        if i % 2:
            a = shape(2) if rng.random() < 0.3 else (rng.choice(dims[:9]) if rng.random() < 0.9 else rng.choice(dims), kh)
            b = shape(2) if rng.random() < 0.3 else (kh if rng.random() < 0.9 else rng.choice(dims), nn)
            shapes = rng.choice([(a, b), (a,), (a, b, (-1, 8), ())])
            runner = rng.choice(["CutlassFp4GemmRunner", "CudnnFp4GemmRunner", "TrtllmFp4GemmRunner"])
            got, want = outcome(problems._fp4, "fp4_gemm", runner, shapes, extras, version), \
                outcome(_plain_fp4, "fp4_gemm", runner, shapes, extras, version)
        else:
            e, h = rng.choice([8, 64, 128, 0, -1]), rng.choice([2048, 4096, 7168, 5])
            pack = rng.choice([1, 2, 16, 3])
            inter = rng.choice([768, 1536, 7])
            x = (rng.choice(dims[:9]) if rng.random() < 0.9 else rng.choice(dims), h // pack if rng.random() < 0.9 else h)
            w1 = (e, 2 * inter, h // pack) if rng.random() < 0.9 else shape(3)
            w2 = (e, h, inter // pack) if rng.random() < 0.9 else shape(3)
            shapes = rng.choice([(x, w1, (0,), w2, (0,)), (x, w1), (x, w1, (0,), w2)])
            op = rng.choice(["trtllm::fused_moe::gemm1", "trtllm::fused_moe::gemm2"])
            got, want = outcome(problems._cutlass_moe, op, shapes, extras, version), \
                outcome(_plain_cutlass_moe, op, shapes, extras, version)
        assert got == want, (shapes, extras, version)
        seen.add((i % 2, got[0] is None))
    assert seen == {(0, True), (0, False), (1, True), (1, False)}


def test_problem_builders_match_problem_for():
    # problems.problem_builder (what an op, runner, extras and release decide worked out once, per group
    # of records) gives problem_for's answer for every record of the group: sizes, notes, reasons
    import random

    from tiletune.decode import problems

    rng = random.Random(12)
    dims = [1, 2, 3, 16, 100, 128, 4096, 65536, 1 << 20, 0, -1, -7, True, False, 2.0, "8", None]
    extras_choices = [None, (), ("torch.bfloat16",), ("torch.float16", 16, True, True), ("torch.bfloat16", 32, False, False),
                      ("torch.bfloat16", 32, 1, False), (1, 2, "x"), ("torch.float8_e4m3fn", 16, 1, True), (True,), (1,),
                      ("torch.bfloat16", "torch.bfloat16", "torch.bfloat16", 8, 1, 0, 1, 0, 1, 0, False, False, False,
                       False, False, False, True, 3, False, True),
                      ("torch.float8_e4m3fn", "torch.uint8", "torch.bfloat16", 8, 1, 1, 1, False, True, False, False,
                       False, False, True, 3, False, True),
                      ("torch.float8_e4m3fn", "torch.uint8", "torch.bfloat16", 8, 1, 1, 1, 1, True, False, False,
                       False, False, True, 3, False, True),
                      ("torch.float8_e4m3fn", "torch.int64", "torch.bfloat16", 8, 1, 4, 1, False, True, False, False,
                       False, False, True, 3, False, True),  # (ep_size 4: the notes name the experts)
                      ("torch.float8_e4m3fn", "torch.int64", "torch.bfloat16", 8, 1, 4, 1, False, True, False, False,
                       False, False, True, 3, False, [1])]  # (an unhashable extra)

    def shape(n):
        if rng.random() < 0.05:
            return rng.choice([(), (1,), (1, 2, 3, 4), [4, 4], "x", None, 5])
        return tuple(rng.choice(dims[:9]) if rng.random() < 0.92 else rng.choice(dims) for _ in range(n))

    def fp4_shapes():
        kh, nn = rng.choice(dims[:9]), rng.choice(dims[:9])
        a = shape(2) if rng.random() < 0.3 else (rng.choice(dims[:9]) if rng.random() < 0.9 else rng.choice(dims), kh)
        b = shape(2) if rng.random() < 0.3 else (kh if rng.random() < 0.9 else rng.choice(dims), nn)
        return rng.choice([(a, b), (a,), (a, b, (-1, 8), ()), None, ()])

    def moe_shapes():
        e, h = rng.choice([8, 64, 128, 0, -1]), rng.choice([2048, 4096, 7168, 5])
        pack, inter = rng.choice([1, 2, 16, 3]), rng.choice([768, 1536, 7])
        x = (rng.choice(dims[:9]) if rng.random() < 0.9 else rng.choice(dims), h // pack if rng.random() < 0.9 else h)
        w1 = (e, 2 * inter, h // pack) if rng.random() < 0.9 else shape(3)
        w2 = (e, h, inter // pack) if rng.random() < 0.9 else shape(3)
        return rng.choice([(x, w1, (0,), w2, (0,)), (x, w1), (x, w1, (0,), w2), None, (x, w1, (0,), w2, (0,))])

    seen = set()
    for _ in range(300):  # groups
        op = rng.choice(["fp4_gemm", "trtllm::fused_moe::gemm1", "trtllm::fused_moe::gemm2"])
        runner = rng.choice(["CutlassFp4GemmRunner", "CudnnFp4GemmRunner", "TrtllmFp4GemmRunner", "MoERunner"])
        extras = rng.choice(extras_choices)
        version = rng.choice(["0.7.2.post1", "0.6.7", "0.6.14", None, "9.9"])
        build = problems.problem_builder(op, runner, extras, version)
        for _ in range(40):  # records of the group
            shapes = fp4_shapes() if op == "fp4_gemm" else moe_shapes()
            record = TuningRecord(source="t", source_kind="test", op=op, runner=runner, tactic=0, status=Status.CHOSEN,
                                  env=Environment(flashinfer_version=version, arch="sm120"), shapes=shapes, extras=extras)
            want = problem_for(record)
            got = build(shapes) if build is not None else want
            assert repr(got) == repr(want), (op, runner, extras, version, shapes)
            seen.add((op == "fp4_gemm", build is None, got[0] is None))
    assert {(True, False, False), (True, False, True), (False, False, False), (False, False, True), (False, True, False)} <= seen
    for op in ("bf16_gemm", "fp8_gemm", "mxfp8_gemm", "flashinfer::trtllm_fp4_block_scale_moe", "nope"):
        assert problems.problem_builder(op, "CutlassBf16GemmRunner", (), "0.7.2.post1") is None  # problem_for, record by record
