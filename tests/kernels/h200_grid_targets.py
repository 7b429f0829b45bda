"""The SM90 grid run_grid.py runs on the H200: passing bf16/fp8 tiles and deliberate failures.

Each target's `source` says which diagnosis it was put in the grid to produce ("grid (expect X)").
"""

from __future__ import annotations

from typing import List

from tiletune.core.records import Problem, TileConfig
from tiletune.tuner.engine import RetryTarget

SIZE = 4096


def target(key: str, arch: str, dtype: str, tile, *, cluster=(1, 1, 1), schedule="cooperative", stages=None,
           m=SIZE, n=SIZE, k=SIZE, expect: str = "passed") -> RetryTarget:
    cfg = TileConfig(tile=tuple(tile), cluster=tuple(cluster), mainloop_schedule=schedule, stages=stages)
    return RetryTarget(key=key, op="cutlass_gemm", runner="kernels/" + ("sm90_gemm" if arch == "sm90" else "nvfp4_gemm"),
                       tactic=None, arch=arch, flashinfer_version=None, problem=Problem(m=m, n=n, k=k),
                       config=cfg, dtype=dtype, source=f"grid (expect {expect})")


def grid() -> List[RetryTarget]:
    t: List[RetryTarget] = []
    for tile, cl, sch in [((128, 128, 64), (1, 1, 1), "cooperative"), ((128, 256, 64), (1, 1, 1), "cooperative"),
                          ((256, 128, 64), (1, 1, 1), "cooperative"), ((128, 256, 64), (2, 1, 1), "cooperative"),
                          ((128, 128, 64), (1, 2, 1), "cooperative"), ((64, 128, 64), (1, 1, 1), "pingpong"),
                          ((64, 256, 64), (1, 1, 1), "pingpong"), ((128, 128, 64), (1, 1, 1), "pingpong")]:
        t.append(target(f"bf16-{'x'.join(map(str, tile))}-c{cl[0]}x{cl[1]}-{sch}", "sm90", "bf16", tile, cluster=cl, schedule=sch))
    for tile, cl, sch in [((128, 128, 128), (1, 1, 1), "cooperative"), ((128, 256, 128), (1, 1, 1), "cooperative"),
                          ((256, 128, 128), (1, 1, 1), "cooperative"), ((128, 256, 128), (2, 1, 1), "cooperative"),
                          ((64, 128, 128), (1, 1, 1), "pingpong"), ((64, 256, 128), (1, 1, 1), "pingpong")]:
        t.append(target(f"fp8-{'x'.join(map(str, tile))}-c{cl[0]}x{cl[1]}-{sch}", "sm90", "fp8", tile, cluster=cl, schedule=sch))
    # Deliberate failures.
    t.append(target("bf16-128x256x64-8stages", "sm90", "bf16", (128, 256, 64), stages=8, expect="smem_over_limit"))
    t.append(target("fp8-256x128x128-6stages", "sm90", "fp8", (256, 128, 128), stages=6, expect="smem_over_limit"))
    t.append(target("bf16-128x128x64-k4100", "sm90", "bf16", (128, 128, 64), k=4100, expect="can_implement"))
    t.append(target("nvfp4-sm120a-128x128x256-on-sm90", "sm120", "nvfp4", (128, 128, 256), expect="no_kernel_image"))
    t.append(target("bf16-256x256x128-auto", "sm90", "bf16", (256, 256, 128), expect="compile_error"))
    return t
