"""Parsing a cache with bounds: msgspec's route against Python json's route of bounded_input.loads,
and a bare `json.loads` of the same bytes, in the same process and run (CPU seconds, best of N).

    python3 bench/inspect_speed/json_parse.py [--runs 7]

Both routes check the same bounds (depth and digit runs on the bytes); the json route also decodes
the bytes to str first. Workloads: those of run.py (tests/readers/big_caches.py).
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "tests" / "readers"))

from big_caches import make_cache, make_fp4_distinct, make_fp4_terse  # noqa: E402

from tiletune.core import bounded_input  # noqa: E402

WORKLOADS = {"mixed-50k": (make_cache, 50000), "fp4-distinct-50k": (make_fp4_distinct, 50000),
             "fp4-terse-50k": (make_fp4_terse, 50000), "fp4-distinct-2k": (make_fp4_distinct, 2000)}


def best(f: Callable[[bytes, str], Any], raw: bytes, name: str, runs: int) -> float:
    times = []
    for _ in range(runs):
        gc.collect()
        t = time.process_time()
        f(raw, name)
        times.append(time.process_time() - t)
    return min(times)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=7)
    args = ap.parse_args()
    print(f"load average {os.getloadavg()[0]:.1f} at the start; CPU s, best of {args.runs}, one process")
    print("| workload | MB | json.loads | loads, json route | loads, msgspec route | json route / json.loads "
          "| msgspec route / json.loads |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    with tempfile.TemporaryDirectory() as tmp:
        for name, (make, n) in WORKLOADS.items():
            path = Path(tmp) / f"{name}.json"
            make(n, path)
            raw = path.read_bytes()
            assert bounded_input._strict_parse(raw) is not bounded_input._NOT_STRICT  # the route caches take
            bare = best(lambda raw, _: json.loads(raw), raw, name, args.runs)
            old = best(bounded_input._json_loads, raw, name, args.runs)
            new = best(bounded_input.loads, raw, name, args.runs)
            print(f"| {name} | {len(raw) / 1e6:.1f} | {bare:.3f} | {old:.3f} | {new:.3f} | {old / bare:.2f}x "
                  f"| {new / bare:.2f}x |")


if __name__ == "__main__":
    main()
