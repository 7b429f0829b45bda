"""Block-scaled GEMM inputs without a GPU: tensor shapes from a problem, scale-factor layout, dequantizing.

Owns the arithmetic the FlashInfer engine needs for `fp4_gemm` (NVFP4: e2m1 values packed two per
byte, one e4m3 scale per 16 elements, one float32 global scale) and `mxfp8_gemm` (e4m3 values,
one ue8m0 scale per 32 elements), as FlashInfer 0.7.2.post1 lays them out:

- the "128x4" swizzled scale-factor layout that FlashInfer's quantizers write and its CUTLASS runners
  read (`get_sf_out_offset_128x4` in csrc/nv_internal/tensorrt_llm/kernels/quantization_utils.cuh):
  rows padded to 128, scale columns to 4, each 128x4 block stored as [32 rows][4 row groups][4 cols];
- e2m1 nibble order (low nibble = even element) and the e4m3 / ue8m0 scale encodings;
- dequantizing those bytes to float32, which is what the float32 reference is computed from.

Pure Python plus numpy (imported inside the functions that need it); the worker hands it the bytes
FlashInfer's quantizers produced. Tested on CPU with synthetic data only: it has never run on
FlashInfer's real quantizer output, because that needs a Blackwell GPU (see worker.py).
"""

from __future__ import annotations

from typing import Dict, Tuple

from msgspec import Struct

from tiletune.core.vocabulary import SCALE_VECTOR

# e2m1 code -> value (bit 3 = sign, bits 2..0 = magnitude code)
E2M1_VALUES = (0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0, -0.0, -0.5, -1.0, -1.5, -2.0, -3.0, -4.0, -6.0)
E2M1_MAX = 6.0
E4M3_MAX = 448.0

NVFP4_SF_VEC = SCALE_VECTOR["nvfp4"]
MXFP8_SF_VEC = SCALE_VECTOR["mxfp8"]


def round_up(x: int, m: int) -> int:
    return (x + m - 1) // m * m


def sf_offset_128x4(row: int, col: int, n_col_vecs: int) -> int:
    """Byte offset of the scale for (row, scale column) in the 128x4 swizzled layout (one matrix)."""
    k_tiles = (n_col_vecs + 3) // 4
    return ((row // 128) * k_tiles + col // 4) * 512 + (row % 32) * 16 + ((row % 128) // 32) * 4 + col % 4


def swizzled_sf_size(rows: int, n_col_vecs: int) -> int:
    """Bytes of a 128x4-swizzled scale tensor: rows padded to 128, scale columns to 4."""
    return round_up(rows, 128) * round_up(n_col_vecs, 4)


class BlockScaledShapes(Struct, frozen=True, gc=False):
    """What the runner is handed for an (M, N, K) problem, in FlashInfer's own conventions.

    `a` is (M, K/2) uint8 for nvfp4 and (M, K) e4m3 for mxfp8; the weight is quantized as (N, K)
    and passed transposed, so the runner sees `b` as (K/2, N) / (K, N). Scales are 1-D swizzled.
    """

    op: str
    a: Tuple[int, int]
    b_quantized: Tuple[int, int]
    b_runner: Tuple[int, int]
    a_sf_bytes: int
    b_sf_bytes: int
    out: Tuple[int, int]
    sf_vec: int
    value_format: str  # "e2m1x2" or "e4m3"
    scale_format: str  # "e4m3" or "ue8m0"


def blockscaled_shapes(op: str, m: int, n: int, k: int) -> BlockScaledShapes:
    """Tensor shapes for a recorded problem; ValueError naming the rule when it cannot be built."""
    if min(m, n, k) <= 0:
        raise ValueError(f"{op}: M, N, K must be positive (got {m}, {n}, {k})")
    if op == "fp4_gemm":
        if k % 32:
            raise ValueError(f"fp4_gemm: K={k} is not a multiple of 32 (16-element scale blocks, 2 values per byte, 16-byte rows)")
        vec, kb = NVFP4_SF_VEC, k // 2
        return BlockScaledShapes(op, (m, kb), (n, kb), (kb, n), swizzled_sf_size(m, k // vec),
                                 swizzled_sf_size(n, k // vec), (m, n), vec, "e2m1x2", "e4m3")
    if op == "mxfp8_gemm":
        if k % 32:
            raise ValueError(f"mxfp8_gemm: K={k} is not a multiple of the 32-element scale block")
        if n < 128 or k < 128:  # FlashInfer's _check_mm_mxfp8_problem_size refuses these for CUTLASS
            raise ValueError(f"mxfp8_gemm: CUTLASS MXFP8 needs N >= 128 and K >= 128 (got N={n}, K={k})")
        vec = MXFP8_SF_VEC
        return BlockScaledShapes(op, (m, k), (n, k), (k, n), swizzled_sf_size(m, k // vec),
                                 swizzled_sf_size(n, k // vec), (m, n), vec, "e4m3", "ue8m0")
    raise ValueError(f"{op} is not a block-scaled GEMM op tiletune knows (fp4_gemm, mxfp8_gemm)")


def nvfp4_global_scale(amax: float) -> float:
    """FlashInfer's recipe (its tests and docstrings): global scale = 448 * 6 / amax."""
    return E4M3_MAX * E2M1_MAX / amax if amax > 0 else 1.0


# -- decoding bytes (numpy) ----------------------------------------------------------------------


def e4m3_to_float(codes):
    """uint8 array of e4m3fn codes -> float32 array (0x7f / 0xff are NaN; no infinities)."""
    import numpy as np

    c = np.asarray(codes, dtype=np.uint8).astype(np.int32)
    sign = np.where(c & 0x80, -1.0, 1.0)
    exp = (c >> 3) & 0xF
    man = c & 0x7
    normal = (1.0 + man / 8.0) * np.exp2(exp.astype(np.float64) - 7.0)
    sub = (man / 8.0) * 2.0**-6
    val = sign * np.where(exp == 0, sub, normal)
    val = np.where((exp == 15) & (man == 7), np.nan, val)
    return val.astype(np.float32)


def ue8m0_to_float(codes):
    """uint8 array of ue8m0 codes -> float32 2**(code - 127) (255 is NaN)."""
    import numpy as np

    c = np.asarray(codes, dtype=np.uint8).astype(np.float64)
    val = np.exp2(c - 127.0)
    return np.where(c == 255, np.nan, val).astype(np.float32)


def unpack_e2m1(packed):
    """(rows, K/2) uint8 -> (rows, K) float32; the low nibble is the even element."""
    import numpy as np

    p = np.asarray(packed, dtype=np.uint8)
    lut = np.asarray(E2M1_VALUES, dtype=np.float32)
    out = np.empty((p.shape[0], p.shape[1] * 2), dtype=np.float32)
    out[:, 0::2] = lut[p & 0x0F]
    out[:, 1::2] = lut[p >> 4]
    return out


def unswizzle_sf(sf_bytes, rows: int, n_col_vecs: int):
    """1-D 128x4-swizzled scale bytes -> (rows, n_col_vecs) uint8, padding dropped."""
    import numpy as np

    flat = np.asarray(sf_bytes, dtype=np.uint8).reshape(-1)
    need = swizzled_sf_size(rows, n_col_vecs)
    if flat.size < need:
        raise ValueError(f"scale tensor has {flat.size} bytes; the 128x4 layout of {rows} x {n_col_vecs} scales needs {need}")
    r = np.arange(rows)[:, None]
    c = np.arange(n_col_vecs)[None, :]
    k_tiles = (n_col_vecs + 3) // 4
    off = ((r // 128) * k_tiles + c // 4) * 512 + (r % 32) * 16 + ((r % 128) // 32) * 4 + c % 4
    return flat[off]


def dequantize(values, sf_bytes, rows: int, k: int, *, value_format: str, scale_format: str,
               sf_vec: int, global_scale: float = 1.0):
    """Quantized bytes -> (rows, K) float32 = value * block scale / global_scale.

    `values`: (rows, K/2) uint8 for e2m1x2, (rows, K) uint8 e4m3 codes for e4m3.
    `global_scale` is the quantizer's (NVFP4 divides by it; MXFP8 has none: leave 1.0).
    """
    import numpy as np

    if value_format == "e2m1x2":
        vals = unpack_e2m1(values)
    elif value_format == "e4m3":
        vals = e4m3_to_float(values)
    else:
        raise ValueError(f"unknown value format {value_format!r}")
    if vals.shape != (rows, k):
        raise ValueError(f"values decode to {vals.shape}, expected {(rows, k)}")
    codes = unswizzle_sf(sf_bytes, rows, k // sf_vec)
    scales = e4m3_to_float(codes) if scale_format == "e4m3" else ue8m0_to_float(codes)
    out = vals * np.repeat(scales, sf_vec, axis=1)
    return (out / np.float32(global_scale)).astype(np.float32)


def relative_error(got, ref) -> Dict[str, float]:
    """||got - ref||_F / ||ref||_F (non-finite outputs counted apart, as the worker reports them)."""
    import numpy as np

    g = np.asarray(got, dtype=np.float64)
    r = np.asarray(ref, dtype=np.float64)
    finite = np.isfinite(g)
    diff = np.where(finite, g - r, 0.0)
    denom = float(np.linalg.norm(r))
    return {"rel_error": float(np.linalg.norm(diff)) / denom if denom else float("nan"),
            "nonfinite": int((~finite).sum())}
