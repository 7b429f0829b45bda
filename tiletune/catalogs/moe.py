"""Which fused-MoE tactic list(s) a `trtllm::fused_moe::gemm1/gemm2` record can index.

The CUTLASS MoE runner's list depends on the activation/weight types the C++ `FusedMoeRunner`
was built for and, for GEMM2, on whether finalize fusion was enabled. Catalog variants in
`data/fused-moe.json` are keyed `{"act", "weight", "finalize"}` with the canonical dtype names
nvfp4, mxfp4, mxfp8, fp8, bf16, fp16, int4.

- Keys written since FlashInfer 0.6.18rc2 end with MoERunner's 20 extras (x_dtype, weight_dtype,
  ..., use_fused_finalize): the variant is exact, following the binding's type dispatch
  (`FusedMoeRunner` constructor in flashinfer_cutlass_fused_moe_binding.cu).
- Older keys hold only tensor shapes. The weight packing factor (hidden size over fc1's last dim)
  separates 1/2-byte weights, uint8-packed 4-bit and int64-packed FP4, but not bf16 from fp8 or
  fp16: every variant still possible is returned, and decode marks the tactic ambiguous when
  their lists disagree.

Lists exist for sm89, sm90, sm100, sm103, sm107 (0.6.16 on), sm110 and sm120: dense dtypes,
weight-only bf16/fp16 x int4 and bf16 x fp8 (SM80-style kernels; DeepSeek FP8 block scaling builds
the same bf16 x fp8 runner), MXFP8 activations on the Blackwell archs (mxfp8 x mxfp8, mxfp8 x
mxfp4), and on SM90 the mixed-input fp8 x int4 (W4A8), bf16/fp16 x mxfp4 (W4A16) and humming fp8 x
mxfp4 (`"scaling": "humming"`) where the release's dispatcher fixes the tile a tactic runs. A
variant without a list is returned exactly, so the lookup finds no catalog and decode quotes the
data's `not_extracted` note (a runner the binding refuses, no tactics on that arch, a tile chosen
at run time) instead of guessing; when such a variant is one of several a key leaves possible,
decode marks the entry ambiguous.
"""

from __future__ import annotations

from typing import Any, Mapping, Optional, Sequence

from tiletune import catalogs
from tiletune.core import moe_key_extras
from tiletune.core.errors import CatalogError
from tiletune.core.records import Problem, TuningRecord
from tiletune.core.vocabulary import FUSED_MOE_OPS, MOE_RUNNER, PACKED_CONTAINERS, dtype_from_torch, strip_torch


def _dtype(value: Any) -> Optional[str]:
    """'torch.bfloat16' (or a key Name of it) -> 'bf16'; containers of packed data stay 'uint8'/'int64'."""
    name = strip_torch(value)
    return name if name in PACKED_CONTAINERS else dtype_from_torch(name)


def extras_dict(extras: Any) -> Optional[dict[str, Any]]:
    """The MoERunner extras by name (20 fields, or 17 in 0.7.2.post1), or None when the key carries
    none (before 0.6.18rc2)."""
    return moe_key_extras.by_name(extras)


def runner_types(ex: Mapping[str, Any]) -> Optional[dict[str, Any]]:
    """(act, weight[, scaling]) of the C++ runner the binding builds for these extras, or None
    when the dtypes are not ones the binding accepts."""
    x, w = _dtype(ex["x_dtype"]), _dtype(ex["weight_dtype"])
    if x is None or w is None:
        return None
    mx8 = ex.get("use_mxfp8_act_scaling") is True
    if w == "int64":  # 16 FP4 values per int64: NVFP4 weights, or MXFP4 weights with FP8 activations
        if x == "fp8":
            return {"act": "mxfp8" if mx8 else "fp8", "weight": "mxfp4"}
        return {"act": "nvfp4", "weight": "nvfp4"}  # 16-bit inputs are quantised to NVFP4 in the kernel
    if w == "uint8":  # 2 x 4-bit per byte: INT4 (packed weights) or MXFP4 weight-only paths
        if ex.get("use_packed_weights") is True:
            act = "fp8" if ex.get("use_w4_group_scaling") is True else x
            return {"act": act, "weight": "int4"}
        if ex.get("use_wfp4afp8_humming") is True:
            return {"act": "fp8", "weight": "mxfp4", "scaling": "humming"}
        return {"act": x, "weight": "mxfp4"}
    if ex.get("use_deepseek_fp8_block_scale") is True and w == "fp8":
        # the binding builds CutlassMoeFCRunner<bf16, fp8> for it (bf16 input) but then ignores the
        # tactic (setRunnerProfiles): no list applies, the data's not_extracted note says why
        return {"act": x, "weight": "fp8", "scaling": "deepseek-block"}
    if x == "fp8" and w == "fp8":
        return {"act": "mxfp8", "weight": "mxfp8"} if mx8 else {"act": "fp8", "weight": "fp8"}
    return {"act": x, "weight": w}


def _shape_candidates(shapes: Any) -> list[dict[str, Any]]:
    """(act, weight) pairs a pre-0.6.18rc2 key's shapes leave possible."""
    try:
        x, w1, w2 = shapes[0], shapes[1], shapes[3]
        hidden, w1_last, x_last = int(w2[1]), int(w1[2]), int(x[1])
    except (TypeError, IndexError, ValueError):
        return []
    if w1_last <= 0 or hidden % w1_last:
        return []
    pack = hidden // w1_last
    if pack == 1:  # one or two bytes per weight; bf16 x fp8 is weight-only or DeepSeek block-scaled
        return [{"act": "bf16", "weight": "bf16"}, {"act": "fp16", "weight": "fp16"}, {"act": "fp8", "weight": "fp8"},
                {"act": "bf16", "weight": "fp8"}, {"act": "bf16", "weight": "fp8", "scaling": "deepseek-block"}]
    if pack == 16:  # int64-packed FP4 weights
        if x_last * 2 == hidden:  # activations arrive as packed FP4 too: NVFP4 for sure
            return [{"act": "nvfp4", "weight": "nvfp4"}]
        return [{"act": "nvfp4", "weight": "nvfp4"}, {"act": "fp8", "weight": "mxfp4"}]
    if pack == 2:  # uint8-packed 4-bit weights: weight-only INT4, W4A8, MXFP4 W4A16 or humming MXFP4 x FP8
        return [{"act": "bf16", "weight": "int4"}, {"act": "fp16", "weight": "int4"},
                {"act": "fp8", "weight": "int4"}, {"act": "bf16", "weight": "mxfp4"},
                {"act": "fp8", "weight": "mxfp4", "scaling": "humming"}]
    return []


def variants_for(record: TuningRecord, problem: Optional[Problem] = None) -> list[dict[str, Any]]:
    """Catalog variants this MoE record's tactic may index: one when the key says, several when
    only shapes are known, [] when nothing can be said (decode then tries every list)."""
    if record.op not in FUSED_MOE_OPS:
        return []
    ex = extras_dict(record.extras)
    if ex is not None:
        types = runner_types(ex)
        if types is None:
            return []
        fin = ex.get("use_fused_finalize")
        if isinstance(fin, bool):
            return [{**types, "finalize": fin}]
        return [{**types, "finalize": f} for f in (True, False)]
    pairs = _shape_candidates(record.shapes)
    if not pairs and problem is not None and problem.dtype_a and problem.dtype_b:
        pairs = [{"act": problem.dtype_a, "weight": problem.dtype_b}]
    # use_fused_finalize is not in the key: both are possible (identical lists where the release
    # enumerated tactics before applying the flag)
    return [{**p, "finalize": f} for p in pairs for f in (True, False)]


def why_no_list(version: str, arch: str, variant: Mapping[str, Any]) -> Optional[str]:
    """Why the fused-MoE data has no list for this variant on this release/arch, when the
    extractor recorded it (e.g. a dispatcher it does not model, a tactic the binding ignores)."""
    want = tuple(sorted((k, v) for k, v in variant.items() if k != "finalize"))
    for var, why in catalogs.not_extracted(version, arch):
        if var == want:
            return why
    return None


def tactic_counts(version: str, arch: str, variant: Mapping[str, Any]) -> tuple[int, int]:
    """(GEMM1, GEMM2) tactic counts of the MoE runner for this release/arch/variant, i.e.
    `get_gemm1_tactic_count()` / `get_gemm2_tactic_count()`. Raises CatalogError when no list,
    or lists of different sizes, match."""
    out = []
    for op in FUSED_MOE_OPS:
        cats = catalogs.lookup(version, arch, op, MOE_RUNNER, variant)
        sizes = sorted({c.ref.size for c in cats})
        if not sizes:
            raise CatalogError(f"no fused-MoE catalog for FlashInfer {version} {arch} {op} variant {dict(variant)}")
        if len(sizes) > 1:
            raise CatalogError(
                f"FlashInfer {version} {arch} {op}: variant {dict(variant)} matches lists of sizes {sizes}; "
                "give act, weight and finalize"
            )
        out.append(sizes[0])
    return out[0], out[1]


def known_variants(version: str, arch: str) -> Sequence[Mapping[str, Any]]:
    """Every GEMM1 variant catalogued for this release and arch (for listings and errors)."""
    return [c.variant for c in catalogs.lookup(version, arch, FUSED_MOE_OPS[0], MOE_RUNNER)]
