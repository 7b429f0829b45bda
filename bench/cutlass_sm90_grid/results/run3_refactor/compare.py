"""Run 3 (after the tt::run_gemm refactor) against run 2 (bench/cutlass_sm90_grid/), config by config.

For every config: the diagnosis in each run, the median time in each and their ratio, and the JSON
fields of the reproducer's line that differ, leaving out what is measured anew each run (times,
throughput, device clocks) and the binary's path (its cache key hashes the sources, so it changes).

    python3 bench/cutlass_sm90_grid/results/run3_refactor/compare.py
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
RUN2 = HERE.parent
MEASURED = {"time_ms", "times_ms", "tflops"}


def load(folder: Path, name: str) -> dict:
    return {d["key"]: d for d in map(json.loads, (folder / name).read_text().splitlines())}


def differing_fields(a: dict, b: dict) -> list:
    a, b = a or {}, b or {}
    return sorted(k for k in set(a) | set(b) if k not in MEASURED and a.get(k) != b.get(k))


def main() -> int:
    raw2, raw3 = load(RUN2, "raw.jsonl"), load(HERE, "raw.jsonl")
    att2, att3 = load(RUN2, "attempts.jsonl"), load(HERE, "attempts.jsonl")
    bad = 0
    print(f"{'config':36} {'run 2':16} {'run 3':16} {'ms run 2':>9} {'ms run 3':>9} {'3/2':>6}  differing JSON fields")
    for key in raw2:
        a2, a3 = att2[key], att3.get(key)
        if a3 is None:
            print(f"{key:36} missing in run 3")
            bad += 1
            continue
        t2, t3 = a2["time_s"], a3["time_s"]
        ratio = f"{t3 / t2:6.3f}" if t2 and t3 else f"{'':6}"
        ms = lambda t: f"{t * 1e3:9.4f}" if t else f"{'':9}"  # noqa: E731
        diff = differing_fields(raw2[key]["result"], raw3[key]["result"])
        exit_differs = raw2[key]["exit_code"] != raw3[key]["exit_code"]
        same = a2["diagnosis"] == a3["diagnosis"] and not diff and not exit_differs
        bad += not same
        print(f"{key:36} {a2['diagnosis']:16} {a3['diagnosis']:16} {ms(t2)} {ms(t3)} {ratio}  "
              f"{', '.join(diff + (['exit_code'] if exit_differs else [])) or '-'}")
    print(f"{len(raw2) - bad} of {len(raw2)} configs: same diagnosis, exit status and JSON fields (times aside)")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
