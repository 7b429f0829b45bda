"""The two constants of tiletune/model/timers.py from the H200 measurement (bench/h200_timer_split).

    python3 -m tools.model_fit.timer_split bench/h200_timer_split/timer_split.jsonl

in-kernel: median over the six problems of 128^3-512^3 (bf16 and fp8) of the kernel-only duration minus the
tile model's time without a fixed term (the fastest of a few 64-256 x 64-128 tiles, warm L2: the harness
re-times the same tensors), times the clock the GPU ran (its nvidia-smi maximum, 1,980 MHz, the model's H200
clock). graph gap: median over the problems whose call is one kernel of graph time minus kernel-only time.
"""

from __future__ import annotations

import json
import statistics
import sys
from pathlib import Path
from typing import List, Tuple

from msgspec.structs import replace

from tiletune.core.errors import ModelError
from tiletune.core.records import Problem, TileConfig
from tiletune.model import mainloop
from tiletune.model.gpus import find
from tiletune.model.perf import estimate

CUBES = (128, 256, 512)


def rows(path: Path) -> List[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()][1:]


def model_without_fixed(r: dict) -> Tuple[float, float]:
    """(seconds, clock Hz) of the fastest small tile for row `r` on the H200 with the fixed term set to zero."""
    gpu = find("H200")
    tc = replace(mainloop.FITTED["sm90"], t_fixed_s=0.0)
    bk = 64 if r["dtype"] == "bf16" else 128
    best = None
    for tile in ((64, 64, bk), (128, 64, bk), (64, 128, bk), (128, 128, bk), (128, 256, bk)):
        for swap in (False, True):
            try:
                e = estimate(Problem(m=r["m"], n=r["n"], k=r["k"]), TileConfig(tile=tile, swap_ab=swap), gpu,
                             dtype=r["dtype"], constants=tc, l2="warm")
            except ModelError:
                continue
            if best is None or e.time_expected_s < best.time_expected_s:
                best = e
    assert best is not None and best.clock_hz
    return best.time_expected_s, best.clock_hz


def inkernel(rs: List[dict]) -> Tuple[float, float]:
    """(seconds, cycles) of the in-kernel fixed part: the median over the cubes."""
    parts = []
    for r in rs:
        if r["m"] == r["n"] == r["k"] and r["m"] in CUBES:
            t, clock = model_without_fixed(r)
            parts.append((r["kernel_us"] * 1e-6 - t, clock))
    s = statistics.median(p for p, _ in parts)
    return s, s * statistics.median(c for _, c in parts)


def graph_gap(rs: List[dict]) -> float:
    return statistics.median(r["graph_us"] - r["kernel_us"] for r in rs if len(r["kernels_per_call"]) == 1) * 1e-6


if __name__ == "__main__":
    data = rows(Path(sys.argv[1]))
    s, cyc = inkernel(data)
    print(f"in-kernel: {s * 1e6:.3f} us = {cyc:,.0f} cycles; graph gap: {graph_gap(data) * 1e6:.3f} us")
