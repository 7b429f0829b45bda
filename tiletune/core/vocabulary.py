"""The words every stage shares: element types (dtypes), the fused-MoE op names, FlashInfer's file names.

Declared once here, at the bottom of the layers, so the readers, decode, the model, the tuner and
the formatters say the same thing the same way.

Dtypes: tiletune's own short names (`bf16`, `fp8`, `nvfp4`, ...) are what decoded problems,
catalogs, the model, reports and ledgers say. Torch prints its names (`torch.bfloat16`,
`float8_e4m3fn`) in cache keys, logs and run options; `short_dtype` reads either spelling,
`torch_dtype_name` writes torch's (the child process that runs an attempt needs it).
"""

from __future__ import annotations

from typing import Any, Optional

# --- dtypes ------------------------------------------------------------------------------------

# Bits per element of each type tiletune names. Block-scaled types (nvfp4, mxfp4, mxfp8) count
# their values only; their scale factors are in SCALE_VECTOR.
BITS: dict[str, int] = {
    "nvfp4": 4, "mxfp4": 4, "int4": 4, "mxfp8": 8, "fp8": 8, "int8": 8, "bf16": 16, "fp16": 16, "fp32": 32,
    "int32": 32,
}

# GEMM input types, in the order messages list them (int32 is an accumulator/output type only).
INPUT_DTYPES: tuple[str, ...] = ("nvfp4", "mxfp4", "int4", "mxfp8", "fp8", "int8", "bf16", "fp16", "fp32")

# Block-scaled types: elements of K per scale factor (NVFP4: one e4m3 scale per 16; MX: one ue8m0 per 32).
SCALE_VECTOR: dict[str, int] = {"nvfp4": 16, "mxfp4": 32, "mxfp8": 32}

# torch's dtype names -> tiletune's. fp8 means e4m3 unless a torch name says e5m2 (same width).
_FROM_TORCH: dict[str, str] = {
    "bfloat16": "bf16", "float16": "fp16", "half": "fp16", "float32": "fp32", "float": "fp32",
    "float8_e4m3fn": "fp8", "float8_e5m2": "fp8", "int8": "int8", "float4_e2m1fn_x2": "nvfp4",
}

# tiletune's names -> torch's, for the types torch has one dtype for (block-scaled ones it has not).
TORCH_NAME: dict[str, str] = {"bf16": "bfloat16", "fp16": "float16", "fp32": "float32", "fp8": "float8_e4m3fn",
                              "int8": "int8", "int32": "int32"}

# torch's own aliases -> the names it prints.
_TORCH_ALIASES: dict[str, str] = {"half": "float16", "float": "float32"}

# Containers a key names for packed 4-bit data (FP4 or INT4 weights): a storage type, not a value type.
PACKED_CONTAINERS = frozenset({"uint8", "int64", "int32"})


def strip_torch(value: Any) -> Optional[str]:
    """'torch.bfloat16' -> 'bfloat16' (a key may print either); None for a non-string."""
    if not isinstance(value, str):
        return None
    return value[6:] if value.startswith("torch.") else value


def is_torch_dtype(value: Any) -> bool:
    """True for a torch dtype name tiletune knows (with or without 'torch.'), packed containers included."""
    name = strip_torch(value)
    return name is not None and (name in _FROM_TORCH or name in PACKED_CONTAINERS)


def dtype_from_torch(value: Any) -> Optional[str]:
    """A torch spelling -> tiletune's short name: 'torch.bfloat16' and 'bfloat16' -> 'bf16'. None for
    anything else (a container such as uint8, or a name that is already short)."""
    name = strip_torch(value)
    return None if name is None else _FROM_TORCH.get(name)


def short_dtype(value: Any) -> Optional[str]:
    """Either spelling -> tiletune's short name: 'torch.bfloat16', 'bfloat16' and 'bf16' -> 'bf16'.
    None for anything that is not a GEMM input type tiletune knows."""
    name = strip_torch(value)
    if name is None:
        return None
    return name if name in INPUT_DTYPES else _FROM_TORCH.get(name)


def torch_dtype_name(value: Optional[str]) -> Optional[str]:
    """Either spelling -> torch's name: 'bf16', 'torch.bfloat16', 'bfloat16' -> 'bfloat16'. A name
    torch has no single dtype for ('nvfp4') or tiletune does not know comes back as given (without
    'torch.'); None stays None."""
    name = strip_torch(value)
    if name is None:
        return None
    return TORCH_NAME.get(name) or _TORCH_ALIASES.get(name, name)


# --- op names ----------------------------------------------------------------------------------

# FlashInfer's CUTLASS fused MoE: the two tuned GEMMs (cache keys, logs, catalogs, retry) and the
# JIT module family that serves both (a module's op may be the family).
FUSED_MOE_FAMILY = "trtllm::fused_moe"
FUSED_MOE_OPS: tuple[str, str] = (FUSED_MOE_FAMILY + "::gemm1", FUSED_MOE_FAMILY + "::gemm2")
MOE_RUNNER = "MoERunner"

# The dense GEMM ops tiletune has CUTLASS catalogs for.
DENSE_GEMM_OPS: tuple[str, ...] = ("fp4_gemm", "mxfp8_gemm", "fp8_gemm", "bf16_gemm")
# Each one's operand dtype, whatever dtype its cache key records (the key's is the OUTPUT dtype:
# an mxfp8_gemm key says 'bfloat16').
DENSE_GEMM_OPERAND_DTYPE: dict[str, str] = {"fp4_gemm": "nvfp4", "mxfp8_gemm": "mxfp8", "fp8_gemm": "fp8", "bf16_gemm": "bf16"}

# FlashInfer runner classes that serve exactly one tuned op in every release tiletune has catalogs
# for, so a log line that names the runner but not the op still says the op (an inference with that
# basis). CutlassBf16GemmRunner is not here: it serves bf16_gemm and bf16_gemm_pdl_auto; nor is
# Nvfp4SvdquantGemmRunner: 0.7.4 tunes it as nvfp4_svdquant_gemm (SM100) and as
# nvfp4_svdquant_gemm_sm120_v3[_r64] (SM120). A test holds this table to the shipped catalogs.
RUNNER_OP: dict[str, str] = {
    "CutlassFp4GemmRunner": "fp4_gemm",
    "CutlassMxfp8GemmRunner": "mxfp8_gemm",
    "CutlassFp8GemmRunner": "fp8_gemm",
}


# --- FlashInfer's file names ----------------------------------------------------------------------


def blocklist_file_name(gpu: str) -> str:
    """The name FlashInfer gives a GPU's tactics blocklist (`flashinfer generate-tactics-blocklist`'s
    default): tactics_<GPU name, spaces and '/' as '_'>.json (cache_samples/blocklists/README.md)."""
    return "tactics_" + gpu.strip().replace(" ", "_").replace("/", "_") + ".json"


__all__ = [
    "blocklist_file_name",
    "BITS", "INPUT_DTYPES", "SCALE_VECTOR", "TORCH_NAME", "PACKED_CONTAINERS", "strip_torch", "is_torch_dtype",
    "dtype_from_torch", "short_dtype", "torch_dtype_name", "FUSED_MOE_FAMILY", "FUSED_MOE_OPS", "MOE_RUNNER", "DENSE_GEMM_OPS",
    "DENSE_GEMM_OPERAND_DTYPE",
    "RUNNER_OP",
]
