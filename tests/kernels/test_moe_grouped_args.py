"""The CUTLASS engine's run line for fused-MoE targets: experts as groups, per-expert M, GEMM N/K.

No build and no GPU: `CutlassEngine.run_args` is what `child_spec` appends to the grouped NVFP4
reproducer binary. Targets come from real keys in cache_samples/.
"""

from pathlib import Path

import pytest

from tiletune.core.errors import TunerError
from tiletune.decode import decode
from tiletune.readers import read_inputs
from tiletune.readers.interface import ReadContext
from tiletune.tuner.cutlass_engine import CutlassEngine
from tiletune.tuner.targets import explicit_targets, parse_shape, targets_from_entries

ROOT = Path(__file__).resolve().parents[2]
SM90_BF16 = ROOT / "cache_samples" / "v1" / "sm90-h200-0.6.18-moe-bf16-records.json"
SM120_FP4 = ROOT / "cache_samples" / "v1" / "sm120-rtxpro6000-0.6.14-fp4-moe.json"


def _target(path, op, bucket):
    entries = [decode(r) for r in read_inputs([path], ReadContext()).records]
    (t,) = [t for t in targets_from_entries(entries, all_statuses=True, ops=[op]) if t.problem.m == bucket]
    return t


def _args(argv):
    return dict(a[2:].split("=", 1) for a in argv)


def test_gemm1_runs_experts_as_groups_with_the_per_expert_m():
    # bucket 1024 (769..1024 tokens), top_k 8, 128 experts: ceil(1024 x 8 / 128) = 64 rows per expert;
    # gemm1 N = fc1 rows 1536 (2 x I, gated), K = H 2048
    a = _args(CutlassEngine(warmup=2, iters=5).run_args(_target(SM90_BF16, "trtllm::fused_moe::gemm1", 1024)))
    assert a == {"groups": "128", "m": "64", "n": "1536", "k": "2048", "warmup": "2", "iters": "5"}


def test_gemm2_rounds_the_per_expert_m_up_and_swaps_n_k():
    # bucket 8: 8 tokens x top_k 8 over 128 experts = 0.5 -> 1 row; gemm2 N = H 2048, K = I 768
    a = _args(CutlassEngine().run_args(_target(SM90_BF16, "trtllm::fused_moe::gemm2", 8)))
    assert (a["groups"], a["m"], a["n"], a["k"]) == ("128", "1", "2048", "768")


def test_sm120_key_without_top_k_needs_it_from_the_command_line():
    t = _target(SM120_FP4, "trtllm::fused_moe::gemm1", 128)
    with pytest.raises(TunerError, match="--top-k"):
        CutlassEngine().run_args(t)
    # 512 experts, I 640 (fc2 (512, 2560, 40) x 16 per int64), H 2560; 128 tokens x 8 / 512 = 2 rows each
    a = _args(CutlassEngine(moe_top_k=8).run_args(t))
    assert (a["groups"], a["m"], a["n"], a["k"]) == ("512", "2", "1280", "2560")


def test_dense_targets_keep_the_plain_run_line():
    (t,) = explicit_targets(op="fp8_gemm", runner="CublasFp8GemmRunner", tactics=[0],
                            shapes=[parse_shape("128x4096x2048")], dtype_in="fp8", dtype_out="bfloat16")
    a = _args(CutlassEngine().run_args(t))
    assert "groups" not in a and (a["m"], a["n"], a["k"]) == ("128", "4096", "2048")


def test_reproducer_for_a_moe_target_runs_the_experts_as_groups(tmp_path, monkeypatch):
    from tiletune.cli.commands.retry import write_reproducers
    from tiletune.core.records import Problem, TileConfig
    from tiletune.tuner import cutlass_toolchain as toolchain
    from tiletune.tuner.engine import RetryTarget

    inc = tmp_path / "cutlass" / "include" / "cutlass"
    inc.mkdir(parents=True)
    (inc / "version.h").write_text("#define CUTLASS_MAJOR 4\n#define CUTLASS_MINOR 5\n#define CUTLASS_PATCH 0\n")
    monkeypatch.setenv(toolchain.CUTLASS_DIR_ENV, str(tmp_path / "cutlass"))
    p = Problem(m=128, n=1280, k=2560, m_range=(65, 128), experts=512, top_k=None, dtype_a="nvfp4")
    t = RetryTarget(key="trtllm::fused_moe::gemm1|MoERunner|3|1x128x1280x2560|?", op="trtllm::fused_moe::gemm1",
                    runner="MoERunner", tactic=3, arch="sm120", flashinfer_version="0.6.14", problem=p,
                    config=TileConfig(tile=(128, 128, 256)), dtype="nvfp4")
    out = tmp_path / "repro"
    notes = write_reproducers([t], out)
    assert "top_k" in notes[0] and not list(out.glob("*/run.sh"))  # refused, nothing half-written
    notes = write_reproducers([t], out, top_k=8)
    (run,) = out.glob("*/run.sh")
    assert "--groups=512 --m=2 --n=1280 --k=2560" in run.read_text(), notes
    build = (run.parent / "build.sh").read_text()
    assert "-DTT_GROUPED=1" in build and "sm_120a" in build
    assert "512 groups" in (run.parent / "README.txt").read_text()


def test_dtype_narrows_an_ambiguous_sm120_moe_tactic_to_one_tile_and_the_nvfp4_kernel():
    entries = [decode(r) for r in read_inputs([SM120_FP4], ReadContext()).records]
    ops = ["trtllm::fused_moe::gemm1", "trtllm::fused_moe::gemm2"]
    plain = targets_from_entries(entries, all_statuses=True, ops=ops)
    assert plain and all(t.config is None for t in plain)  # nvfp4 or fp8 x mxfp4: the key does not say
    told = targets_from_entries(entries, all_statuses=True, ops=ops, moe_dtype="nvfp4")
    assert len(told) == len(plain) and all(t.config is not None for t in told)
    assert {(t.problem.dtype_a, t.problem.dtype_b) for t in told} == {("nvfp4", "nvfp4")}
    # gemm1 tactic 3 of the SM120 NVFP4 list: the 4th entry, 128x256x64B (K 64 bytes = 128 FP4 elements)
    (t3,) = [t for t in told if t.op == ops[0] and t.tactic == 3 and t.problem.m == 1]
    assert tuple(t3.config.tile) == (128, 256, 128)
    kb = CutlassEngine().build_for(t3)
    assert kb.source == "blockscaled_gemm.cu" and dict(kb.defines)["TT_GROUPED"] == 1
    # fp8 x mxfp4 has no reproducer in kernels/, but the narrowing itself works the same way
    fp8 = targets_from_entries(entries, all_statuses=True, ops=ops, moe_dtype="fp8")
    assert {t.problem.dtype_a for t in fp8} == {"fp8xmxfp4"}
