"""Fits the time model's calibration constants to a measured sweep (a dev tool; pure Python, so
it runs on the CPU-only machines).

`python3 -m tools.model_fit.fit SWEEP.json` reads a bench/h200_sweep JSON, fits the constants on
the even-indexed shapes only (rows sorted by dtype, N, K, M) and reports the model error on the
odd-indexed (held-out) shapes only; its output is RESULTS.md, and the constants it prints go into
`calibration.FITTED`. Kept apart from `calibration` because it runs the model (`perf`), which
itself reads `calibration`: the model's data does not depend on the tool that fits it.
"""

from __future__ import annotations

import json
import math
import re
import statistics
import sys
from typing import Any, List, Optional, Sequence, Tuple

from msgspec import structs

from tiletune.core.records import Problem, TileConfig
from tiletune.model.calibration import US, Constants
from tiletune.model.gpus import find
from tiletune.model.perf import analyze


def _ceil(a: int, b: int) -> int:
    return -(-a // b)


_NVJET = re.compile(r"nvjet_sm\d+_[a-z]+_(\d+)x(\d+)_(\d+)x(\d+)_(\d+)x(\d+)_")


def nvjet_tile(kernels: Sequence[str]) -> Optional[Tuple[Tuple[int, int, int], int, bool, Tuple[int, int]]]:
    """cuBLAS nvjet name -> ((BM, BN, BK), stages, split-K flag, cluster). None for non-nvjet kernels."""
    for name in kernels:
        m = _NVJET.search(name)
        if m:
            bm, bn, bk, st, cm, cn = (int(g) for g in m.groups())
            return (bm, bn, bk), st, "splitK" in name, (cm, cn)
    return None


def split_rows(rows: List[dict]) -> Tuple[List[dict], List[dict]]:
    """The fixed split: sort by (dtype, N, K, M); even positions fit, odd positions are held out."""
    ok = sorted((r for r in rows if "median_us" in r), key=lambda r: (r["dtype"], r["n"], r["k"], r["m"]))
    return ok[0::2], ok[1::2]


def predict(row: dict, c: Constants, kernel_tile: bool = True) -> Tuple[float, str]:
    """Model time (seconds) for one sweep row on the H200, with the tile cuBLAS really used
    (`kernel_tile=False`: a fixed 128x128 tile, as when the kernel is unknown)."""
    gpu = find("NVIDIA H200")
    info = nvjet_tile(row.get("kernels") or [])
    tile, split, label = (128, 128, 64 if row["dtype"] == "bf16" else 128), 1, "default 128x128 (no nvjet name)"
    if info and kernel_tile:
        tile, _st, splitk, _cl = info
        label = "x".join(map(str, tile))
        if splitk:  # the name says split-K but not the factor: take the smallest that fills the SMs
            tiles = _ceil(row["n"], tile[0]) * _ceil(row["m"], tile[1])
            split = max(1, min(_ceil(row["k"], tile[2]), _ceil(gpu.sms, tiles)))
            label += f" splitK{split}"
    # torch's row-major GEMM reaches cuBLAS as the column-major transpose (D^T = W A^T): the nvjet
    # tile's first dimension runs over the weight rows N, i.e. swap-AB in tiletune's terms.
    r = analyze(Problem(m=row["m"], n=row["n"], k=row["k"]), TileConfig(tile=tile, swap_ab=True), gpu, dtype=row["dtype"],
                split_k=split, constants=c)
    return r.time_expected_s, label


def _loss(rows: List[dict], c: Constants) -> float:
    errs = sorted(abs(math.log(predict(r, c)[0] / (r["median_us"] * US))) for r in rows)
    return statistics.mean(errs) + 0.5 * errs[int(0.9 * (len(errs) - 1))]


def fit(rows: List[dict], dtype: str) -> Constants:
    """Coordinate descent over (eta_mma, eta_bw, t_fixed, p) on `rows` of one dtype."""
    c = Constants(f"h200-cublas {dtype}", 0.8, 0.85, 8 * US, 4.0)
    grids = {"eta_mma": [x / 100 for x in range(50, 100)], "eta_bw": [x / 100 for x in range(50, 101)],
             "t_fixed_s": [x * 0.25 * US for x in range(0, 81)], "p": [1.0, 1.5, 2.0, 3.0, 4.0, 6.0, 8.0, math.inf]}
    best = _loss(rows, c)
    for _ in range(3):
        for key, grid in grids.items():
            for v in grid:
                change: dict[str, Any] = {key: v}
                cand = structs.replace(c, **change)
                loss = _loss(rows, cand)
                if loss < best:
                    best, c = loss, cand
    ratios = sorted((r["median_us"] * US) / predict(r, c)[0] for r in rows)
    q = lambda f: ratios[min(len(ratios) - 1, max(0, round(f * (len(ratios) - 1))))]  # noqa: E731
    return structs.replace(c, ratio_band=(round(q(0.025), 3), round(q(0.975), 3)))


def report(path: str) -> str:
    """Fit on the even half, evaluate on the odd half; the Markdown RESULTS.md is this text."""
    doc = json.load(open(path))
    fit_rows, held = split_rows(doc["rows"])
    lines = [f"Sweep: {path} ({doc['env'].get('gpu')}, torch {doc['env'].get('torch')}, {doc['env'].get('cublas')})",
             f"Split: {len(fit_rows)} shapes fit (even positions of rows sorted by dtype, N, K, M), "
             f"{len(held)} held out (odd positions).", ""]
    fitted = {}
    for dtype in ("bf16", "fp8"):
        fitted[dtype] = fit([r for r in fit_rows if r["dtype"] == dtype], dtype)
    lines.append("| dtype | eta_mma | eta_bw | t_fixed | p | band (measured/model, 2.5-97.5 %, fit half) |")
    lines.append("|---|---|---|---|---|---|")
    for d, c in fitted.items():
        assert c.ratio_band is not None  # fit() always sets it
        lines.append(f"| {d} | {c.eta_mma:.2f} | {c.eta_bw:.2f} | {c.t_fixed_s / US:.2f} us | {c.p} | "
                     f"{c.ratio_band[0]:.2f} - {c.ratio_band[1]:.2f} |")
    lines += ["", "Held-out error |model - measured| / measured:", "",
              "| subset | shapes | median | 90th pct | worst (shape) | inside band |", "|---|---|---|---|---|---|"]
    detail = []
    subsets = [("all", lambda r: True), ("bf16", lambda r: r["dtype"] == "bf16"), ("fp8", lambda r: r["dtype"] == "fp8"),
               ("M <= 64", lambda r: r["m"] <= 64), ("64 < M < 1024", lambda r: 64 < r["m"] < 1024),
               ("M >= 1024", lambda r: r["m"] >= 1024), ("fp8, M <= 64", lambda r: r["dtype"] == "fp8" and r["m"] <= 64)]
    evals = []
    for r in held:
        c = fitted[r["dtype"]]
        assert c.ratio_band is not None
        t, label = predict(r, c)
        meas = r["median_us"] * US
        lo, hi = t * c.ratio_band[0], t * c.ratio_band[1]
        evals.append((r, abs(t - meas) / meas, lo <= meas <= hi, t, label))
        detail.append(f"| {r['dtype']} | {r['m']} | {r['n']} | {r['k']} | {label} | {r['median_us']:.1f} | "
                      f"{t / US:.1f} | {(t - meas) / meas:+.1%} |")
    for name, pred in subsets:
        sub = [e for e in evals if pred(e[0])]
        if not sub:
            continue
        errs = sorted(e[1] for e in sub)
        worst = max(sub, key=lambda e: e[1])
        w = worst[0]
        lines.append(f"| {name} | {len(sub)} | {statistics.median(errs):.1%} | {errs[int(0.9 * (len(errs) - 1))]:.1%} | "
                     f"{worst[1]:.1%} ({w['dtype']} {w['m']}x{w['n']}x{w['k']}) | "
                     f"{sum(e[2] for e in sub) / len(sub):.0%} |")
    blind = sorted(abs(predict(r, fitted[r["dtype"]], kernel_tile=False)[0] / (r["median_us"] * US) - 1) for r in held)
    lines += ["", f"The error above uses the tile cuBLAS really ran (parsed from its nvjet kernel name). With a fixed "
              f"128x128 tile instead (what the model can do when the kernel is unknown), the held-out median error is "
              f"{statistics.median(blind):.1%} and the worst {blind[-1]:.1%}."]
    lines += ["", "<details><summary>Every held-out shape</summary>", "",
              "| dtype | M | N | K | cuBLAS tile (from the nvjet name) | measured us | model us | error |",
              "|---|---|---|---|---|---|---|---|"] + detail + ["", "</details>"]
    lines += ["", "Constants as Python (paste into FITTED):", "```"]
    for d, c in fitted.items():
        lines.append(f'("sm90", "{d}"): Constants("h200-cublas-2026-11-30 {d}", eta_mma={c.eta_mma}, eta_bw={c.eta_bw}, '
                     f"t_fixed_s={c.t_fixed_s / US:.2f} * US, p={'math.inf' if math.isinf(c.p) else c.p}, "
                     f"ratio_band={c.ratio_band}),")
    lines.append("```")
    return "\n".join(lines)


if __name__ == "__main__":  # pragma: no cover - dev tool
    print(report(sys.argv[1] if len(sys.argv) > 1 else "bench/h200_sweep/results/run1/h200_sweep.json"))
