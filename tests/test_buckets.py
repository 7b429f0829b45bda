"""Bucket ranges under FlashInfer's default mapping (fused_moe/utils.py at the tags):
>= 0.6.10 hybrid grid rounded up; < 0.6.10 power of two rounded down."""

import pytest

from tiletune.decode.buckets import bucket_range, hybrid_ceil, pow2_floor


# grid: powers of two to 256, then +256 to 2048, +512 to 4096, then powers of two
@pytest.mark.parametrize("x, b", [(1, 1), (3, 4), (100, 128), (256, 256), (257, 512), (300, 512), (2048, 2048),
                                  (2049, 2560), (4000, 4096), (4097, 8192), (9000, 16384)])
def test_hybrid_ceil(x, b):
    assert hybrid_ceil(x) == b


@pytest.mark.parametrize("b, lo, hi", [(1, 1, 1), (4, 3, 4), (128, 65, 128), (512, 257, 512), (768, 513, 768),
                                       (2560, 2049, 2560), (4096, 3585, 4096), (8192, 4097, 8192)])
def test_gemm_ranges_new_mapping(b, lo, hi):
    r = bucket_range(b, moe=False, version="0.6.14")
    assert (r.lo, r.hi, r.mapping) == (lo, hi, "hybrid-ceil")
    # every M in the range maps back onto the bucket, and the neighbours do not
    assert hybrid_ceil(lo) == b and hybrid_ceil(hi) == b and hybrid_ceil(lo - 1) != b if lo > 1 else True


@pytest.mark.parametrize("b, lo, hi", [(1, 1, 1), (64, 64, 127), (4096, 4096, 8191)])
def test_gemm_ranges_old_mapping(b, lo, hi):
    r = bucket_range(b, moe=False, version="0.6.7")
    assert (r.lo, r.hi, r.mapping) == (lo, hi, "pow2-floor")
    assert pow2_floor(lo) == b and pow2_floor(hi) == b


def test_mapping_switch_is_at_0610():
    assert bucket_range(512, moe=False, version="0.6.9").mapping == "pow2-floor"
    assert bucket_range(512, moe=False, version="0.6.10").mapping == "hybrid-ceil"
    assert bucket_range(512, moe=False, version="0.7.2.post1").mapping == "hybrid-ceil"


def test_off_grid_bucket_is_custom_and_unknown():
    r = bucket_range(300, moe=False, version="0.6.14")
    assert r.range is None and "custom tuning_buckets" in r.note
    assert bucket_range(96, moe=False, version="0.6.7").range is None


def test_moe_cap_and_unknown_version():
    r = bucket_range(8192, moe=True, version="0.6.14")
    assert r.range == (4097, 8192) and "tune_max_num_tokens" in r.note
    r = bucket_range(3000, moe=True, version="0.6.14")  # tune_max_num_tokens=3000 is itself a bucket
    assert r.lo == 2561 and r.hi is None
    r = bucket_range(16, moe=False, version=None)
    assert r.range == (9, 16) and "version unknown" in r.note
