"""The fused-MoE cache-key extras: `MoERunner.get_cache_key_extras()` field layouts, by release.

Since 0.6.18rc2 a `trtllm::fused_moe::gemm1/gemm2` key ends with the runner's options
(flashinfer/fused_moe/core.py, `MoERunner.get_cache_key_extras`):
- 0.6.18rc2 .. 0.7.1: 20 fields;
- 0.7.2.post1: 17 fields, the rank indices (tp_rank, ep_rank, cluster_rank) dropped so that ranks
  tuning together share persisted entries.
Keys written before 0.6.18rc2 end with `()`. decode/problems.py, catalogs/moe.py and tuner/moe_problem.py all
read the extras through `by_name` so the layouts live in one place.
"""

from __future__ import annotations

from typing import Any, Optional

FIELDS_20 = (
    "x_dtype", "weight_dtype", "output_dtype", "top_k", "tp_size", "tp_rank", "ep_size", "ep_rank",
    "cluster_size", "cluster_rank", "enable_alltoall", "use_deepseek_fp8_block_scale",
    "use_w4_group_scaling", "use_mxfp8_act_scaling", "use_wfp4afp8_humming", "min_latency_mode",
    "enable_pdl", "activation_type", "use_packed_weights", "use_fused_finalize",
)
FIELDS_17 = tuple(n for n in FIELDS_20 if n not in ("tp_rank", "ep_rank", "cluster_rank"))

_LAYOUTS = {len(FIELDS_20): FIELDS_20, len(FIELDS_17): FIELDS_17}


def by_name(extras: Any) -> Optional[dict[str, Any]]:
    """The MoERunner extras by field name (either layout), or None when the key carries none."""
    if not isinstance(extras, (tuple, list)):
        return None
    names = _LAYOUTS.get(len(extras))
    return dict(zip(names, extras)) if names else None
