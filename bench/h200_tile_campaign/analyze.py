"""Summaries of a campaign run's results.jsonl, as Markdown tables (what README.md quotes).

    python3 bench/h200_tile_campaign/analyze.py bench/h200_tile_campaign/results/run1
"""

from __future__ import annotations

import collections
import json
import statistics
import sys
from pathlib import Path


def load(run: Path):
    return [json.loads(line) for line in (run / "results.jsonl").read_text().splitlines()]


def main(argv) -> int:
    run = Path(argv[1])
    rows = load(run)
    logged = [r for r in rows if r["clock_logged"]]  # the second call: clocks sampled, one of each
    print(f"## {run.name}: {len(rows)} measurements ({sum(r['passed'] for r in rows)} passed), "
          f"{len({r['config_id'] for r in rows})} kernel configs, {len({r['family'] for r in rows})} (N, K) families, "
          f"{len({r['problem']['m'] for r in rows})} M values, L2 {sorted({r['l2'] for r in rows})}\n")

    # 1. The fp8 question: plain vs FP8FastAccum at the largest problems (warm L2, second call)
    print("### fp8 plain vs FP8FastAccum mainloop (warm L2, M = 8192, TFLOP/s measured)\n")
    fams = sorted({r["family"] for r in logged})
    print("| tile | mainloop | spill stores (ptxas) | " + " | ".join(fams) + " |")
    print("| --- | --- | --- | " + " | ".join("---" for _ in fams) + " |")
    for tile in ([128, 128, 128], [128, 256, 128], [256, 128, 128]):
        for ml in ("default", "fp8_fast_accum"):
            sel = [r for r in logged if r["dtype"] == "fp8_e4m3" and r["tile"] == tile and r["mainloop"] == ml
                   and r["cluster"] == [1, 1, 1] and r["schedule"] == "cooperative" and r["tile_scheduler"] == "persistent"
                   and not r["swap_ab"] and r["l2"] == "warm" and r["problem"]["m"] == 8192]
            if not sel:
                continue
            by = {r["family"]: r for r in sel}
            cells = [f"{by[f]['tflops']:.0f}" if f in by else "" for f in fams]
            print(f"| {'x'.join(map(str, tile))} | {'plain' if ml == 'default' else 'FP8FastAccum'} | "
                  f"{sel[0]['spill_store_bytes']} B | " + " | ".join(cells) + " |")
    print()

    # 2. Best config per (dtype, family, M), warm L2
    print("### Fastest config per problem (warm L2, second call; measured median, us)\n")
    print("| dtype | family | M | fastest config | us | TFLOP/s | 2nd | us |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    groups = collections.defaultdict(list)
    for r in logged:
        if r["l2"] == "warm":
            groups[(r["dtype"], r["family"], r["problem"]["m"])].append(r)
    for key in sorted(groups):
        if key[2] not in (1, 128, 1024, 8192):
            continue
        g = sorted(groups[key], key=lambda r: r["median_us"])
        a, b = g[0], g[1]
        print(f"| {key[0]} | {key[1]} | {key[2]} | {a['config_id']} | {a['median_us']:.1f} | {a['tflops']:.0f} | "
              f"{b['config_id']} | {b['median_us']:.1f} |")
    print()

    # 3. Cold vs warm L2
    ratios = collections.defaultdict(list)
    pairs = collections.defaultdict(dict)
    for r in logged:
        pairs[(r["config_id"], r["family"], r["problem"]["m"])][r["l2"]] = r["median_us"]
    for (_cid, _fam, m), p in pairs.items():
        if "warm" in p and "cold" in p:
            ratios["M <= 128" if m <= 128 else "M >= 1024" if m >= 1024 else "128 < M < 1024"].append(p["cold"] / p["warm"])
    print("### Cold / warm L2 median time ratio\n")
    print("| M | pairs | median | 10th pct | 90th pct |")
    print("| --- | --- | --- | --- | --- |")
    for k in ("M <= 128", "128 < M < 1024", "M >= 1024"):
        v = sorted(ratios[k])
        if v:
            print(f"| {k} | {len(v)} | {statistics.median(v):.3f} | {v[len(v) // 10]:.3f} | {v[9 * len(v) // 10]:.3f} |")
    print()

    # 4. Repeatability: the same measurement in the two calls (families timed twice)
    twice = collections.defaultdict(list)
    for r in rows:
        twice[(r["config_id"], r["family"], r["problem"]["m"], r["l2"])].append(r["median_us"])
    d = [abs(v[1] / v[0] - 1) for v in twice.values() if len(v) == 2]
    if d:
        d.sort()
        print(f"### Repeatability\n\n{len(d)} measurements taken in both calls: |second / first - 1| median "
              f"{statistics.median(d) * 100:.1f} %, 90th percentile {d[9 * len(d) // 10] * 100:.1f} %, "
              f"max {d[-1] * 100:.1f} %.\n")

    # 5. Clocks and power
    clocks = [r["clock_mhz"] for r in logged if r["clock_mhz"] is not None]
    limits = {r["power_limit_w"] for r in logged if r["power_limit_w"] is not None}
    if clocks:
        clocks.sort()
        print(f"### Clocks\n\nSM clock sampled by nvidia-smi (100 ms) during {len(clocks)} measurements: median "
              f"{statistics.median(clocks):.0f} MHz, min {clocks[0]:.0f}, 10th percentile {clocks[len(clocks) // 10]:.0f}, "
              f"max {clocks[-1]:.0f}; enforced power limit {sorted(limits)} W.\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
