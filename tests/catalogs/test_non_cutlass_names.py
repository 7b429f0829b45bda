"""Non-CUTLASS tactics are named as far as their value says (shapes read in FlashInfer's source):
trtllm-gen MoE `(tile_tokens_dim, config_index)` (fused_moe/core.py), cuDNN plan indices and, from
0.6.16 on, (engine id, knobs) pairs (gemm_base.py _cudnn_graph_engine_knob_tactics)."""

from __future__ import annotations

from tiletune import decode
from tiletune.core.records import Environment, Status, TuningRecord, Undecoded


def _decode(op, runner, tactic):
    r = TuningRecord(source="t", source_kind="test", op=op, runner=runner, tactic=tactic, status=Status.CHOSEN,
                     env=Environment(flashinfer_version="0.7.2.post1", arch="sm100"))
    return decode.decode_tactic(r)


def test_trtllm_gen_moe_tactic_names_its_tile_n_and_config():
    d = _decode("flashinfer::trtllm_fp4_block_scale_moe", "MoERunner", (32, 15))
    assert isinstance(d, Undecoded) and d.not_a_cutlass_tactic
    assert "tile N = 32 tokens" in d.reason and "kernel config 15" in d.reason and "no CUTLASS tile" in d.reason
    d = _decode("flashinfer::trtllm_fp8_per_tensor_scale_moe", "MoERunner", [8, -1])
    assert "tile N = 8 tokens" in d.reason and "default config" in d.reason


def test_cudnn_plan_index_and_engine_knobs():
    d = _decode("fp4_gemm", "CudnnFp4GemmRunner", 3)
    assert d.not_a_cutlass_tactic and "cuDNN execution plan 3" in d.reason
    d = _decode("fp4_gemm", "CudnnFp4GemmRunner", (12, ((1, 2), (3, 4))))
    assert "cuDNN engine 12 with knobs 1=2, 3=4" in d.reason


def test_values_without_such_a_shape_keep_the_plain_reason():
    d = _decode("flashinfer::trtllm_fp4_block_scale_moe", "MoERunner", 7)
    assert isinstance(d, Undecoded) and "tile N" not in d.reason and d.not_a_cutlass_tactic
    d = _decode("fp8_gemm", "CublasFp8GemmRunner", 4)
    assert "cuDNN" not in d.reason


def test_runner_op_table_matches_the_shipped_catalogs():
    """vocabulary.RUNNER_OP (runner class -> the one op it serves, used to infer a log line's op) is
    exactly the runners the catalogs list under a single op."""
    from collections import defaultdict

    from tiletune import catalogs
    from tiletune.core.vocabulary import FUSED_MOE_OPS, RUNNER_OP

    ops_of = defaultdict(set)
    for _version, _arch, op, runner in catalogs.keys():
        ops_of[runner].add(op)
    single = {r: next(iter(o)) for r, o in ops_of.items() if len(o) == 1 and not o & set(FUSED_MOE_OPS)}
    assert RUNNER_OP == single
