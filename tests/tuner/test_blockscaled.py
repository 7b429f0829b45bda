"""Block-scaled input maths on CPU (numpy, no torch): scale layout, byte decoding, dequantized reference.

The swizzled layout is rebuilt here independently as a nested array [M tile][K tile][32][4][4]
(the shape quantization_utils.cuh's comment gives) and compared with tiletune's offset formula.
A tiny NVFP4 / MXFP8 quantizer written in the test makes the bytes; tiletune's dequantizer must give
back exactly the values that quantizer meant, and the product of the dequantized inputs must be
close to the float product of the originals (as the quantization error allows).
"""

import math

import numpy as np
import pytest

from tiletune.tuner import blockscaled as bs


def _swizzle_nested(sf: np.ndarray) -> np.ndarray:
    """(rows, cols) scale codes -> 1-D bytes laid out as [mt][kt][32 rows][4 row groups][4 cols]."""
    rows, cols = sf.shape
    mt, kt = math.ceil(rows / 128), math.ceil(cols / 4)
    out = np.zeros((mt, kt, 32, 4, 4), dtype=np.uint8)
    for r in range(rows):
        for c in range(cols):
            out[r // 128, c // 4, r % 32, (r % 128) // 32, c % 4] = sf[r, c]
    return out.reshape(-1)


@pytest.mark.parametrize("rows,cols", [(1, 4), (130, 9), (256, 8), (5, 288)])
def test_swizzle_offsets_match_the_nested_layout(rows, cols):
    rng = np.random.default_rng(rows * 1000 + cols)
    sf = rng.integers(0, 255, size=(rows, cols), dtype=np.uint8)
    flat = _swizzle_nested(sf)
    assert flat.size == bs.swizzled_sf_size(rows, cols)
    assert np.array_equal(bs.unswizzle_sf(flat, rows, cols), sf)
    r, c = rows - 1, cols - 1
    assert flat[bs.sf_offset_128x4(r, c, cols)] == sf[r, c]


def test_unswizzle_rejects_a_short_buffer():
    with pytest.raises(ValueError, match="needs 512"):
        bs.unswizzle_sf(np.zeros(100, np.uint8), 3, 2)


def test_e4m3_codes():
    codes = np.array([0x00, 0x38, 0xB8, 0x7E, 0x01, 0x08, 0x3C, 0x7F, 0xFF], dtype=np.uint8)
    v = bs.e4m3_to_float(codes)
    assert v[:7].tolist() == [0.0, 1.0, -1.0, 448.0, 2.0**-9, 2.0**-6, 1.5]
    assert np.isnan(v[7]) and np.isnan(v[8])


def test_ue8m0_codes():
    v = bs.ue8m0_to_float(np.array([127, 128, 120, 255], dtype=np.uint8))
    assert v[:3].tolist() == [1.0, 2.0, 2.0**-7]
    assert np.isnan(v[3])


def test_e2m1_nibble_order():
    # 0x21: low nibble 1 (0.5) is element 0, high nibble 2 (1.0) is element 1; 0xF7: 6.0 then -6.0
    assert bs.unpack_e2m1(np.array([[0x21, 0xF7]], dtype=np.uint8)).tolist() == [[0.5, 1.0, 6.0, -6.0]]


# -- a small independent quantizer, to make bytes the way FlashInfer's recipe describes ----------

_E2M1_MAG = np.array([0, 0.5, 1, 1.5, 2, 3, 4, 6])


def _all_e4m3():
    codes = np.arange(256, dtype=np.uint8)
    vals = bs.e4m3_to_float(codes)
    keep = np.isfinite(vals) & (vals > 0)
    return codes[keep], vals[keep]


def _quantize_nvfp4(x: np.ndarray, gs: float):
    rows, k = x.shape
    e4_codes, e4_vals = _all_e4m3()
    sf_codes = np.zeros((rows, k // 16), np.uint8)
    nib = np.zeros((rows, k), np.uint8)
    for r in range(rows):
        for b in range(k // 16):
            blk = x[r, 16 * b:16 * b + 16]
            want = np.abs(blk).max() / 6.0 * gs
            i = int(np.argmin(np.abs(e4_vals - want))) if want > 0 else None
            sf_codes[r, b] = 0 if i is None else e4_codes[i]
            scale = 0.0 if i is None else e4_vals[i] / gs
            for j, v in enumerate(blk):
                mag = 0 if scale == 0 else int(np.argmin(np.abs(_E2M1_MAG - min(abs(v) / scale, 6.0))))
                nib[r, 16 * b + j] = mag | (8 if v < 0 else 0)
    packed = (nib[:, 0::2] | (nib[:, 1::2] << 4)).astype(np.uint8)
    return packed, sf_codes


def test_nvfp4_dequantize_round_trip_and_reference():
    rng = np.random.default_rng(7)
    m, n, k = 5, 6, 64
    a = rng.standard_normal((m, k)).astype(np.float32)
    w = (rng.standard_normal((n, k)) * 0.05).astype(np.float32)
    gsa, gsw = bs.nvfp4_global_scale(float(np.abs(a).max())), bs.nvfp4_global_scale(float(np.abs(w).max()))
    qa, sfa = _quantize_nvfp4(a, gsa)
    qw, sfw = _quantize_nvfp4(w, gsw)
    shapes = bs.blockscaled_shapes("fp4_gemm", m, n, k)
    assert qa.shape == shapes.a and qw.shape == shapes.b_quantized
    da = bs.dequantize(qa, _swizzle_nested(sfa), m, k, value_format="e2m1x2", scale_format="e4m3", sf_vec=16, global_scale=gsa)
    dw = bs.dequantize(qw, _swizzle_nested(sfw), n, k, value_format="e2m1x2", scale_format="e4m3", sf_vec=16, global_scale=gsw)
    # element (0, 0) by hand: nibble value times its block's e4m3 scale over the global scale
    nib0 = int(qa[0, 0] & 0xF)
    expect00 = bs.E2M1_VALUES[nib0] * float(bs.e4m3_to_float(sfa[0:1, 0])[0]) / gsa
    assert da[0, 0] == pytest.approx(expect00, rel=1e-6)
    # each block's dequantized values stay within half an e2m1 step (plus scale rounding) of the input
    assert np.abs(da - a).max() < 0.35 * np.abs(a).max()
    ref = da @ dw.T
    err = bs.relative_error(ref, a @ w.T)
    assert err["nonfinite"] == 0 and err["rel_error"] < 0.25  # 4-bit inputs: about 0.1 in this norm
    assert bs.relative_error(ref, ref)["rel_error"] == 0.0


def test_mxfp8_dequantize_uses_ue8m0_block_scales():
    m, k = 3, 64
    vals = np.full((m, k), 0x38, np.uint8)  # e4m3 1.0 everywhere
    sf = np.array([[127, 130], [126, 127], [127, 127]], np.uint8)  # 1, 8 | 0.5, 1 | 1, 1
    d = bs.dequantize(vals, _swizzle_nested(sf), m, k, value_format="e4m3", scale_format="ue8m0", sf_vec=32)
    assert d[0, :32].tolist() == [1.0] * 32 and d[0, 32:].tolist() == [8.0] * 32
    assert d[1, 0] == 0.5 and d[2, 63] == 1.0


def test_shapes_from_a_recorded_problem():
    s = bs.blockscaled_shapes("fp4_gemm", 16, 7168, 4608)
    assert s.a == (16, 2304) and s.b_runner == (2304, 7168) and s.out == (16, 7168)
    assert s.a_sf_bytes == 128 * 288 and s.b_sf_bytes == 7168 * 288
    s = bs.blockscaled_shapes("mxfp8_gemm", 1, 4096, 4096)
    assert s.a == (1, 4096) and s.a_sf_bytes == 128 * 128 and s.b_sf_bytes == 4096 * 128
    assert (s.value_format, s.scale_format, s.sf_vec) == ("e4m3", "ue8m0", 32)


@pytest.mark.parametrize("op,m,n,k,match", [
    ("fp4_gemm", 16, 4096, 100, "multiple of 32"),
    ("mxfp8_gemm", 16, 64, 4096, "N >= 128"),
    ("fp4_gemm", 0, 4096, 4096, "positive"),
    ("bf16_gemm", 16, 4096, 4096, "not a block-scaled"),
])
def test_shapes_refuse_what_the_runner_cannot_take(op, m, n, k, match):
    with pytest.raises(ValueError, match=match):
        bs.blockscaled_shapes(op, m, n, k)
