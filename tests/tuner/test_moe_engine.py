"""Fused-MoE retry on CPU: key -> MoE layer, routing, the reference maths, refusals and JIT logic.

The GPU path (worker.attempt_fused_moe) never ran: what can be checked without a GPU is checked
here against real keys (cache_samples/ written by FlashInfer 0.6.18 on an H200 and by SGLang on
an RTX PRO 6000 with 0.6.14), numpy maths written independently of the module's, and real child
processes (the worker itself for refusals; a stand-in answering jit-status for the build stop).
"""

import math
import stat
import sys
from pathlib import Path

import numpy as np
import pytest

from tiletune.core.errors import TunerError
from tiletune.decode import decode
from tiletune.readers import read_inputs
from tiletune.readers.interface import ReadContext
from tiletune.tuner import worker
from tiletune.tuner.engine import Diagnosis
from tiletune.tuner.flashinfer_engine import BUILD_ESTIMATES, FlashInferEngine
from tiletune.tuner.isolation import run_child
from tiletune.tuner.moe_problem import (
    EXTRAS_17,
    MoeRefusal,
    extras_by_name,
    key_extras,
    moe_problem,
    reference_moe,
    round_bf16_numpy,
    round_e4m3_numpy,
    uniform_routing,
)
from tiletune.tuner.targets import targets_from_entries

ROOT = Path(__file__).resolve().parents[2]
SM90_BF16 = ROOT / "cache_samples" / "v1" / "sm90-h200-0.6.18-moe-bf16-records.json"
SM120_FP4 = ROOT / "cache_samples" / "v1" / "sm120-rtxpro6000-0.6.14-fp4-moe.json"


def _moe_targets(path, op):
    outcome = read_inputs([path], ReadContext())
    entries = [decode(r) for r in outcome.records]
    return targets_from_entries(entries, all_statuses=True, ops=[op])


def _by_bucket(targets, bucket):
    (t,) = [t for t in targets if t.problem.m == bucket]
    return t


# -- key -> layer ------------------------------------------------------------------------------------


def test_sm90_bf16_key_with_20_extras_gives_the_layer():
    t = _by_bucket(_moe_targets(SM90_BF16, "trtllm::fused_moe::gemm1"), 1024)
    spec = FlashInferEngine().moe_spec(t)
    assert isinstance(spec, dict), spec
    # key: input (1024, 2048), fc1 (128, 1536, 2048), fc2 (128, 2048, 768); extras top_k 8, activation 3
    assert (spec["tokens"], spec["experts"], spec["hidden"], spec["inter"], spec["top_k"]) == (1024, 128, 2048, 768, 8)
    assert spec["gated"] and spec["activation"] == 3 and spec["kind"] == "bf16"
    assert (spec["x_dtype"], spec["weight_dtype"], spec["out_dtype"]) == ("bfloat16", "bfloat16", "bfloat16")
    assert spec["gemm"] == 1 and spec["fused_finalize"] is True and spec["enable_pdl"] is True
    assert any("uniform" in n for n in spec["notes"])


def test_tokens_are_the_top_of_the_bucket_and_gemm2_sizes_swap():
    t = _by_bucket(_moe_targets(SM90_BF16, "trtllm::fused_moe::gemm2"), 8)  # bucket 8 stands for 5..8 tokens
    p = moe_problem(op=t.op, shapes=t.shapes, extras=key_extras(t.raw_key), m_range=t.problem.m_range)
    assert p.tokens == 8 and p.bucket == 8 and p.gemm == 2
    assert p.gemm_nk() == (2048, 768)  # N = H, K = I
    assert p.rows_per_expert() == 1  # ceil(8 x 8 / 128)
    assert p.flops() == 2.0 * 8 * 8 * 2048 * 768


def test_17_field_extras_of_0_7_2_post1_are_read_by_name():
    # 0.7.2.post1's get_cache_key_extras dropped tp_rank, ep_rank and cluster_rank
    key = ("('trtllm::fused_moe::gemm1', 'MoERunner', ((256, 4096), (8, 2048, 4096), (0,), (8, 4096, 1024), (0,)), "
           "(torch.float8_e4m3fn, torch.float8_e4m3fn, torch.bfloat16, 2, 1, 1, 1, False, False, False, False, "
           "False, False, True, 3, False, False))")
    ex = extras_by_name(key_extras(key))
    assert len(EXTRAS_17) == 17 and ex["top_k"] == 2 and ex["activation_type"] == 3 and ex["use_fused_finalize"] is False
    p = moe_problem(op="trtllm::fused_moe::gemm1", shapes=((256, 4096), (8, 2048, 4096), (0,), (8, 4096, 1024), (0,)),
                    extras=key_extras(key), m_range=(129, 256))
    assert p.kind == "fp8" and p.top_k == 2 and p.inter == 1024 and p.fused_finalize is False and p.tokens == 256


def test_sm120_sglang_key_without_extras_is_refused_until_told_the_dtype():
    t = _by_bucket(_moe_targets(SM120_FP4, "trtllm::fused_moe::gemm1"), 128)
    why = FlashInferEngine().moe_spec(t)
    assert isinstance(why, str) and "no extras" in why and "--dtype" in why and "\n" not in why
    # the key's fc1 (512, 1280, 160) against H 2560 says int64-packed FP4 weights
    why = FlashInferEngine(moe_dtype="bf16", moe_top_k=8).moe_spec(t)
    assert isinstance(why, str) and "packed 16" in why
    why = FlashInferEngine(moe_dtype="nvfp4", moe_top_k=8).moe_spec(t)
    assert isinstance(why, str) and "nvfp4" in why and "not implemented" in why


def test_key_without_extras_needs_top_k_and_assumes_swiglu_only_when_gated():
    shapes = ((64, 1024), (4, 1024, 1024), (0,), (4, 1024, 512), (0,))  # fc1 rows 2 x I: gated
    with pytest.raises(MoeRefusal, match="--top-k"):
        moe_problem(op="trtllm::fused_moe::gemm2", shapes=shapes, extras=None, dtype="fp8")
    p = moe_problem(op="trtllm::fused_moe::gemm2", shapes=shapes, extras=None, dtype="fp8", top_k=2)
    assert p.activation == 3 and any("Swiglu" in n for n in p.notes) and p.out_dtype == "bfloat16"
    with pytest.raises(MoeRefusal, match="not gated"):
        moe_problem(op="trtllm::fused_moe::gemm2", shapes=((64, 1024), (4, 512, 1024), (0,), (4, 1024, 512), (0,)),
                    extras=None, dtype="bf16", top_k=2)


def test_unsupported_variants_are_refused_with_the_reason():
    base = ["torch.bfloat16", "torch.bfloat16", "torch.bfloat16", 2, 1, 0, 1, 0, 1, 0,
            False, False, False, False, False, False, True, 3, False, True]
    shapes = ((64, 1024), (4, 1024, 1024), (0,), (4, 1024, 512), (0,))
    ok = moe_problem(op="trtllm::fused_moe::gemm1", shapes=shapes, extras=tuple(base))
    assert ok.kind == "bf16"
    deepseek = list(base)
    deepseek[11] = True
    with pytest.raises(MoeRefusal, match="use_deepseek_fp8_block_scale"):
        moe_problem(op="trtllm::fused_moe::gemm1", shapes=shapes, extras=tuple(deepseek))
    situ = list(base)
    situ[17] = 10
    with pytest.raises(MoeRefusal, match="Situ is not modelled"):
        moe_problem(op="trtllm::fused_moe::gemm1", shapes=shapes, extras=tuple(situ))
    with pytest.raises(MoeRefusal, match="contradicts"):
        moe_problem(op="trtllm::fused_moe::gemm1", shapes=shapes, extras=tuple(base), top_k=4)


# -- routing and reference maths ---------------------------------------------------------------------


def test_uniform_routing_spreads_rows_evenly_and_keeps_a_tokens_experts_distinct():
    ids = uniform_routing(37, 3, 8, np)
    counts = np.bincount(ids.ravel(), minlength=8)
    assert counts.sum() == 111 and counts.max() - counts.min() <= 1 and counts.max() == math.ceil(111 / 8)
    assert all(len(set(row)) == 3 for row in ids.tolist())


def _naive_moe(x, w1, w2, ids, weights, act, gated):
    """Token by token, slot by slot, with plain Python loops over the experts chosen."""
    t_count, hidden = x.shape
    inter = w2.shape[2]
    out = np.zeros((t_count, hidden))
    for t in range(t_count):
        for j in range(ids.shape[1]):
            e = ids[t, j]
            h = w1[e].astype(np.float64) @ x[t].astype(np.float64)
            a = act(h[inter:]) * h[:inter] if gated else act(h)
            out[t] += weights[t, j] * (w2[e].astype(np.float64) @ a)
    return out


SILU = lambda v: v / (1 + np.exp(-v))
GELU = lambda v: 0.5 * v * (1 + np.array([math.erf(u / math.sqrt(2)) for u in v]))


@pytest.mark.parametrize("activation,act,gated", [
    (3, SILU, True),  # Swiglu: silu(gate) * linear, gate = second half of fc1
    (4, GELU, True),  # Geglu
    (6, lambda v: np.maximum(v, 0) ** 2, False),  # Relu2
    (9, lambda v: v, False),  # Identity
])
def test_reference_moe_matches_a_token_by_token_loop(activation, act, gated):
    rng = np.random.default_rng(7)
    tokens, hidden, inter, experts, top_k = 9, 16, 8, 4, 2
    x = rng.standard_normal((tokens, hidden)).astype(np.float32)
    w1 = rng.standard_normal((experts, 2 * inter if gated else inter, hidden)).astype(np.float32) / 4
    w2 = rng.standard_normal((experts, hidden, inter)).astype(np.float32) / 3
    ids = uniform_routing(tokens, top_k, experts, np)
    weights = rng.uniform(0.2, 1.0, (tokens, top_k)).astype(np.float32)
    got, amax = reference_moe(x, w1, w2, ids, weights, activation=activation, xp=np)
    want = _naive_moe(x, w1, w2, ids, weights, act, gated)
    assert np.allclose(got, want, rtol=1e-4, atol=1e-4)
    assert amax > 0


def test_reference_emulates_storage_rounding_where_asked():
    rng = np.random.default_rng(3)
    x = rng.standard_normal((6, 8)).astype(np.float32)
    w1 = rng.standard_normal((2, 8, 8)).astype(np.float32)
    w2 = rng.standard_normal((2, 8, 4)).astype(np.float32)
    ids = uniform_routing(6, 1, 2, np)
    weights = np.ones((6, 1), np.float32)
    exact, _ = reference_moe(x, w1, w2, ids, weights, activation=3, xp=np)
    seen = []
    rounded, _ = reference_moe(x, w1, w2, ids, weights, activation=3, xp=np,
                               round_fc1=round_bf16_numpy, round_act=lambda a: seen.append(a) or round_e4m3_numpy(a))
    assert len(seen) == 2 and all(a.shape == (3, 4) for a in seen)  # the activation of each expert's 3 rows
    rel = np.linalg.norm(rounded - exact) / np.linalg.norm(exact)
    assert 1e-4 < rel < 0.1  # e4m3 storage of the activation moves the output by a few percent at most


def test_bf16_and_e4m3_rounding_known_values():
    assert round_bf16_numpy(np.float32(1.0 + 2**-8)).item() == 1.0  # tie -> even
    assert round_bf16_numpy(np.float32(1.0 + 3 * 2**-8)).item() == 1.0 + 2**-6  # tie -> even (up)
    assert round_bf16_numpy(np.float32(3.14159)).item() == 3.140625
    vals = round_e4m3_numpy(np.array([1.0625, 1.1875, 0.001, 500.0, -3.3, 2**-7]))
    assert vals.tolist() == [1.0, 1.25, 2**-9, 448.0, -3.25, 2**-7]


# -- JIT modules and refusals ------------------------------------------------------------------------


def test_moe_modules_per_arch_and_the_ones_that_cannot_run():
    for op in ("trtllm::fused_moe::gemm1", "trtllm::fused_moe::gemm2"):
        assert worker.jit_modules(op, "MoERunner", 9, 0) == ("fused_moe_90",)
        assert worker.jit_modules(op, "MoERunner", 12, 1) == ("fused_moe_120",)
        assert worker.jit_modules(op, "MoERunner", 10, 3) == ("fused_moe_103",)
        assert worker.arch_refusal(op, "MoERunner", 9, 0) is None
        assert "SM80" in worker.arch_refusal(op, "MoERunner", 8, 0)
    assert "15-60 minutes" in BUILD_ESTIMATES["fused_moe_90"]


def test_a_refused_moe_target_ends_as_engine_error_in_a_real_worker_child(tmp_path):
    t = _by_bucket(_moe_targets(SM120_FP4, "trtllm::fused_moe::gemm2"), 128)
    eng = FlashInferEngine()
    spec = eng.child_spec(t, tmp_path)
    child = run_child(spec, timeout_s=60, scratch=tmp_path)
    attempt = eng.interpret(t, child)
    assert attempt.diagnosis is Diagnosis.ENGINE_ERROR
    assert "--dtype" in attempt.message and "gemm2" in attempt.message


FAKE_STATUS = r'''
import json, sys
spec = json.load(open(sys.argv[-1]))
open(spec["result_file"] + ".asked", "w").write(json.dumps(spec))
mods = {"fused_moe_90": {"compiled": False, "path": "/ws/cached_ops/fused_moe_90/fused_moe_90.so"}}
json.dump({"ok": True, "modules": mods, "refused": {}}, open(spec["result_file"], "w"))
'''


@pytest.fixture()
def status_python(tmp_path):
    script = tmp_path / "status.py"
    script.write_text(FAKE_STATUS)
    exe = tmp_path / "python"
    exe.write_text(f"#!/bin/sh\nexec {sys.executable} {script} \"$@\"\n")
    exe.chmod(exe.stat().st_mode | stat.S_IEXEC)
    return str(exe)


def test_missing_fused_moe_module_stops_before_any_attempt_naming_it(status_python, monkeypatch):
    targets = _moe_targets(SM90_BF16, "trtllm::fused_moe::gemm1")[:2]
    eng = FlashInferEngine(python=status_python)
    monkeypatch.setattr(eng, "unavailable_reason", lambda: None)  # no torch on the CI machine
    with pytest.raises(TunerError, match=r"'fused_moe_90'.*15-60 minutes.*--allow-jit-build"):
        eng.prepare(targets, jobs=1)


def test_only_refused_moe_targets_ask_for_no_module(status_python, monkeypatch, tmp_path):
    targets = _moe_targets(SM120_FP4, "trtllm::fused_moe::gemm1")  # no dtype in these keys: all refused
    eng = FlashInferEngine(python=status_python)
    monkeypatch.setattr(eng, "unavailable_reason", lambda: None)
    eng.prepare(targets, jobs=1)  # would raise (module not built) had it asked
    assert eng.jit_report == {}
