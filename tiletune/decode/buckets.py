"""FlashInfer's default M-bucket mapping, and the range of runtime M a cached bucket stands for.

A cache key holds the *bucket* the autotuner mapped the runtime M (tokens) onto, not M itself.
Which mapping wrote a key depends on the release (read from FlashInfer's Python at the tags):

- before 0.6.10 (`flashinfer/gemm/gemm_base.py`, `fused_moe/core.py`): floor to a power of two
  (`last_positive_power_of_2`); MoE also capped at `tune_max_num_tokens` (default 8192).
- 0.6.10 and later: round *up* onto the hybrid grid (`fused_moe/utils.py`:
  `map_to_hybrid_bucket_uncapped` for GEMMs; `map_to_hybrid_bucket(x, tune_max_num_tokens)` for
  MoE): powers of two up to 256, then steps of 256 up to 2048, steps of 512 up to 4096, then
  powers of two.

`autotune(tuning_buckets=...)` replaces the mapping and the cache does not record it: a bucket
that is not on the default grid says so, and then the range is unknown. Nothing here imports
FlashInfer; the grid is re-implemented from the source's description (four phases above).
"""

from __future__ import annotations

import functools
from typing import Optional

from msgspec import Struct
from packaging.version import Version

from tiletune.core.versions import parse_version

MOE_DEFAULT_MAX_TOKENS = 8192  # tune_max_num_tokens default in fused_moe/core.py
HYBRID_SINCE = Version("0.6.10")  # first release whose GEMM and MoE keys use the hybrid grid

CUSTOM_BUCKETS_NOTE = (
    "a cache tuned with custom autotune(tuning_buckets=...) does not record them; "
    "the range shown assumes FlashInfer's default mapping"
)


class BucketRange(Struct, frozen=True, gc=False):
    """Runtime M values that map onto one cached bucket. `lo`/`hi` None when unknown."""

    bucket: int
    lo: Optional[int]
    hi: Optional[int]
    mapping: str  # "hybrid-ceil", "pow2-floor"
    note: Optional[str] = None

    @property
    def range(self) -> Optional[tuple[int, int]]:
        return (self.lo, self.hi) if self.lo is not None and self.hi is not None else None


def _next_pow2(x: int) -> int:
    return 1 if x <= 1 else 1 << (x - 1).bit_length()


def hybrid_ceil(x: int) -> int:
    """FlashInfer >= 0.6.10 GEMM mapping: round x up onto the hybrid grid (no cap)."""
    if x <= 0:
        return 1
    if x <= 256:
        return _next_pow2(x)
    if x <= 2048:
        return -(-x // 256) * 256
    if x <= 4096:
        return -(-x // 512) * 512
    return _next_pow2(x)


def hybrid_grid_below(b: int) -> int:
    """The grid point just below bucket `b` on the hybrid grid (0 for b == 1)."""
    if b <= 1:
        return 0
    if b <= 256:
        return b // 2
    if b <= 2048:
        return b - 256
    if b <= 4096:
        return b - 512
    return b // 2


def on_hybrid_grid(b: int) -> bool:
    return b >= 1 and hybrid_ceil(b) == b


def pow2_floor(x: int) -> int:
    """FlashInfer < 0.6.10 mapping: the largest power of two <= x (1 for x <= 1)."""
    return 1 if x <= 1 else 1 << (x.bit_length() - 1)


@functools.lru_cache(maxsize=256)
def uses_hybrid(version: Optional[str]) -> Optional[bool]:
    """True for releases that write hybrid-grid buckets, False for power-of-two floor, None if unknown."""
    if not version:
        return None
    v = parse_version(version)
    return None if v is None else Version(v.base_version) >= HYBRID_SINCE


@functools.lru_cache(maxsize=8192)
def bucket_range(bucket: int, *, moe: bool, version: Optional[str]) -> BucketRange:
    """The runtime-M range FlashInfer's default mapping sends to `bucket` for this release."""
    hybrid = uses_hybrid(version)
    assumed = None
    if hybrid is None:
        hybrid = True
        assumed = "FlashInfer version unknown: assuming the hybrid-grid mapping of 0.6.10 and later"
    cap = MOE_DEFAULT_MAX_TOKENS
    if hybrid:
        if not on_hybrid_grid(bucket):
            if moe:
                # tune_max_num_tokens itself is a bucket (get_hybrid_num_tokens_buckets appends it)
                return _with(BucketRange(bucket, hybrid_grid_below(hybrid_ceil(bucket)) + 1, None, "hybrid-ceil",
                                         f"bucket {bucket} is off the default grid: either tune_max_num_tokens={bucket} "
                                         "(then every larger M maps here too) or custom tuning_buckets"), assumed)
            return _with(BucketRange(bucket, None, None, "hybrid-ceil",
                                     f"bucket {bucket} is not on FlashInfer's default grid: custom tuning_buckets, range unknown"), assumed)
        lo, hi = hybrid_grid_below(bucket) + 1, bucket
        note = None
        if moe and bucket == cap:
            note = f"MoE buckets are capped at tune_max_num_tokens (default {cap}): larger M also maps here"
        return _with(BucketRange(bucket, lo, hi, "hybrid-ceil", note), assumed)
    # power-of-two floor
    if bucket < 1 or pow2_floor(bucket) != bucket:
        return BucketRange(bucket, None, None, "pow2-floor",
                           f"bucket {bucket} is not a power of two: custom tuning_buckets, range unknown")
    note = None
    if moe and bucket == cap:
        note = f"MoE buckets are capped at tune_max_num_tokens (default {cap}): larger M also maps here"
    return BucketRange(bucket, bucket, 2 * bucket - 1, "pow2-floor", note)


def _with(r: BucketRange, extra: Optional[str]) -> BucketRange:
    if not extra:
        return r
    return BucketRange(r.bucket, r.lo, r.hi, r.mapping, f"{r.note}; {extra}" if r.note else extra)
