"""Runners whose tactics are not CUTLASS list indices (cuBLASLt, cuDNN, trtllm-gen, CuTe DSL, ...):
why a tactic of theirs has no tile to decode, and what the tactic's own value names."""

from __future__ import annotations

from typing import Any, Optional

from tiletune.core.vocabulary import MOE_RUNNER
from tiletune.decode import problems

# Runner-name prefixes of tactics that are not CUTLASS config indices, and what they are instead.
# (TGV's TGVGemmRunner / TGVRunner tactics index tables the catalogs hold: tools/catalogs/tgv.py.)
NOT_CUTLASS: tuple[tuple[str, str], ...] = (
    ("Cublaslt", "cuBLASLt algorithm (heuristic index for this shape): no CUTLASS tile"),
    ("Cublas", "cuBLASLt algorithm index: no CUTLASS tile"),
    ("Cudnn", "cuDNN execution plan / engine knobs: no CUTLASS tile"),
    ("TrtllmLowLatency", "trtllm-gen low-latency GEMM kernel config: no CUTLASS tile"),
    ("Trtllm", "trtllm-gen kernel config index (cubin package), not a CUTLASS list"),
    ("CuteDSL", "CuTe DSL tactic: the tuple itself names its tiler/cluster, no catalog needed"),
    ("CuteDsl", "CuTe DSL tactic: the tuple itself names its tiler/cluster, no catalog needed"),
    ("B12x", "b12x CuTe DSL tactic tuple: no CUTLASS config list"),
    ("TinyGemm", "TinyGemm kernel: no CUTLASS tile"),
    ("Sm120MoeTunable", "CuTe SM120 grouped-MoE tactic tuple: no CUTLASS config list"),
)


def not_cutlass_reason(op: str, runner: str) -> Optional[str]:
    """Why this (op, runner)'s tactic is not a CUTLASS index, or None if it may be one."""
    if problems.is_trtllm_gen_moe(op):
        return "trtllm-gen MoE tactic [tile_N, config index into the cubin package]: no CUTLASS tile"
    if runner.startswith("Cutlass") or runner == MOE_RUNNER:
        return None
    for prefix, reason in NOT_CUTLASS:
        if runner.startswith(prefix):
            return reason
    return None


def name_non_cutlass_tactic(op: str, runner: str, tactic: Any) -> Optional[str]:
    """What a non-CUTLASS tactic names, as far as its own value says (FlashInfer's source gives its
    shape): trtllm-gen MoE `[tile_tokens_dim, config_index]` (fused_moe/core.py) carries the tile
    along tokens, the N of its transposed GEMM; a cuDNN tactic is an execution-plan index, or from
    0.6.16 on an (engine id, knobs) pair (gemm_base.py _cudnn_graph_engine_knob_tactics). None when
    the value has no such shape."""
    pair = tuple(tactic) if isinstance(tactic, (list, tuple)) else None
    if problems.is_trtllm_gen_moe(op) and pair is not None and len(pair) == 2 and all(
            isinstance(x, int) and not isinstance(x, bool) for x in pair):
        tile, config = pair
        cfg = "the default config (-1)" if config == -1 else f"kernel config {config} of the trtllm-gen cubin package"
        return f"tile N = {tile} tokens (tile_tokens_dim), {cfg}"
    if runner.startswith("Cudnn"):
        if isinstance(tactic, int) and not isinstance(tactic, bool):
            return ("cuDNN's default plan (-1)" if tactic == -1 else
                    f"cuDNN execution plan {tactic} (index into the plans cuDNN's heuristics built for this graph and GPU)")
        if pair is not None and len(pair) == 2 and isinstance(pair[0], int) and isinstance(pair[1], (list, tuple)):
            knobs = ", ".join(f"{k[0]}={k[1]}" for k in pair[1] if isinstance(k, (list, tuple)) and len(k) == 2)
            return f"cuDNN engine {pair[0]}" + (f" with knobs {knobs} (knob type=value)" if knobs else " (no knobs)")
    return None
