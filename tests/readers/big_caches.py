"""Big FlashInfer v1 caches for the speed bench (bench/inspect_speed/run.py) and the tests that read
them whole. Both write the `save_configs` layout: `_metadata` first, sorted keys, `json.dump(indent=2)`,
the 0.7.2-style policy element.

- `make_cache(n, path)`: the mixed workload: SM120 FP4 GEMMs over 20 real model (N, K) pairs and
  CUTLASS fused-MoE keys with the 20-field extras, repeated over M buckets (shapes repeat, so
  many entries share one modelled case).
- `make_fp4_distinct(n, path)`: n distinct SM120 fp4_gemm CUTLASS keys, one per (M bucket, N, K)
  shape, tactics cycling over the whole 32-entry list: every entry decodes and is a modelled case
  of its own (`make_fp4_terse`: the same keys, values `[runner, tactic]` only).
"""

from __future__ import annotations

import json
import random
from pathlib import Path

# Real model GEMM shapes (N, K) and MoE shapes (E, H, I); keys repeat them over M buckets.
_DENSE = [(10240, 8192), (8192, 8192), (57344, 8192), (8192, 28672), (7168, 2048), (2048, 7168), (4608, 7168),
          (7168, 18432), (24576, 1536), (32768, 512), (7168, 16384), (4096, 4096), (14336, 4096), (4096, 14336),
          (6144, 4096), (12288, 4096), (5120, 5120), (27648, 5120), (5120, 13824), (3072, 2048)]
_MOE = [(128, 2048, 768), (256, 7168, 2048), (512, 2560, 640), (64, 4096, 1408), (160, 5120, 1536), (8, 4096, 14336)]
_POLICY = ["cuda_graph_profile_replays", 1, "l2_cache_policy", "cold"]


def _buckets(max_m: int) -> list[int]:
    out, m = [], 1
    while m <= 256:
        out.append(m)
        m *= 2
    out += list(range(512, 2049, 256)) + list(range(2560, 4097, 512))
    m = 8192
    while m <= max_m:
        out.append(m)
        m *= 2
    return [b for b in out if b <= max_m]


def make_cache(n_entries: int, path: Path, seed: int = 0) -> None:
    """A v1 cache with exactly `n_entries` distinct realistic keys."""
    rng = random.Random(seed)
    entries: dict[str, list] = {}
    ms = _buckets(1 << 20)
    variant = 0
    while len(entries) < n_entries:
        for n, k in _DENSE:
            for m in ms:
                nv = n + variant  # later rounds: more layers' shapes (distinct N)
                shapes = ((m, k // 2), (k // 2, nv), (-1, k // 16), (k // 16, nv), (), (0,), (-1, nv), (0,), (0,), (-1,))
                entries[str(("fp4_gemm", "CutlassFp4GemmRunner", shapes)) [:-1] + ", ())"] = ["CutlassFp4GemmRunner", rng.randrange(32), _POLICY]
                if len(entries) >= n_entries:
                    break
            if len(entries) >= n_entries:
                break
        for e, h, i in _MOE:
            for m in ms[:21]:
                for op in ("trtllm::fused_moe::gemm1", "trtllm::fused_moe::gemm2"):
                    shapes = ((m, h), (e, 2 * i + variant, h), (0,), (e, h, i), (0,))
                    extras = ("(torch.bfloat16, torch.bfloat16, torch.bfloat16, 8, 1, 0, 1, 0, 1, 0, False, False, False, "
                              "False, False, False, True, 3, False, True)")
                    entries[str((op, "MoERunner", shapes))[:-1] + ", " + extras + ")"] = ["MoERunner", rng.randrange(60), _POLICY]
                    if len(entries) >= n_entries:
                        break
        variant += 16
    ordered = {"_metadata": {"flashinfer_version": "0.7.2.post1", "cuda_version": "13.0", "cublas_version": "13.1.0",
                             "cudnn_version": "91900", "cudnn_frontend_version": "1.14.1", "cutlass_dsl_version": "unknown",
                             "gpu": "NVIDIA RTX PRO 6000 Blackwell Server Edition"}}
    for key in sorted(entries)[:n_entries]:
        ordered[key] = entries[key]
    with open(path, "w") as f:
        json.dump(ordered, f, indent=2)


_FP4_BUCKETS = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192]


def make_fp4_distinct(n_entries: int, path: Path, *, policy: bool = True) -> None:
    """A v1 cache of `n_entries` distinct SM120 fp4_gemm keys (distinct shapes), tactic i % 32;
    `policy=False`: the terse form, values `[runner, tactic]` only (FlashInfer before 0.7.2)."""
    entries: dict[str, list] = {}
    n = 256
    while len(entries) < n_entries:
        for k in range(512, 16385, 512):
            for m in _FP4_BUCKETS:
                shapes = ((m, k // 2), (k // 2, n), (-1, k // 16), (k // 16, n), (), (0,), (-1, n), (0,), (0,), (-1,))
                key = str(("fp4_gemm", "CutlassFp4GemmRunner", shapes))[:-1] + ", ())"
                entries[key] = ["CutlassFp4GemmRunner", len(entries) % 32, *([_POLICY] if policy else [])]
                if len(entries) >= n_entries:
                    break
            if len(entries) >= n_entries:
                break
        n += 128
    doc: dict = {"_metadata": {"flashinfer_version": "0.7.2.post1", "gpu": "NVIDIA RTX PRO 6000 Blackwell Server Edition"}}
    for key in sorted(entries):
        doc[key] = entries[key]
    with open(path, "w") as f:
        json.dump(doc, f, indent=2)


def make_fp4_terse(n_entries: int, path: Path) -> None:
    """`make_fp4_distinct` with values `[runner, tactic]` only (no profiling policy): the smallest file
    per entry, so the hardest ratio to json.load (issue 21's workload)."""
    make_fp4_distinct(n_entries, path, policy=False)
