"""Calibration constants of the time model, and the code that fits them to a measured sweep.

Owns `Constants` (eta_mma: fraction of the dense peak a good kernel's MMA loop reaches; eta_bw:
fraction of DRAM bandwidth; t_fixed_s: launch + prologue + epilogue + tail; p: how sharply the
compute and memory times combine; the uncertainty band), the table of fitted values per
(arch, dtype), and `python3 -m tiletune.model.calibration SWEEP.json` which refits them from a
bench/h200_sweep JSON: constants are fitted on the even-indexed shapes only (rows sorted by
dtype, N, K, M), and the model error is reported on the odd-indexed (held-out) shapes only.

Archs without a measured sweep use `DEFAULT`, whose band spans the ranges the research notes
give (hardware-perf-model.md 2.5): eta_mma 0.5-1.1 (1.1: GeForce cards run above the datasheet
boost clock, e.g. RTX 5090 at 2715 vs 2407 MHz), eta_bw 0.6-0.93, t_fixed 3-10 us.
"""

from __future__ import annotations

import json
import math
import re
import statistics
import sys
from dataclasses import dataclass, replace
from typing import Dict, List, Optional, Sequence, Tuple

US = 1e-6


def combine(t_comp: float, t_mem: float, p: float) -> float:
    """The time model's soft max of compute and memory time: (t_comp^p + t_mem^p)^(1/p), max for p = inf.

    Defined here, beside the `p` it is parameterised by, so `Constants.band` calls it without an
    import per call (perf imports this module, not the other way round)."""
    if math.isinf(p):
        return max(t_comp, t_mem)
    hi = max(t_comp, t_mem)
    if hi <= 0:
        return 0.0
    return hi * ((t_comp / hi) ** p + (t_mem / hi) ** p) ** (1.0 / p)


@dataclass(frozen=True)
class Constants:
    """Time-model constants. `ratio_band` (measured/model quantiles from a fit) overrides the parameter-range band."""

    name: str
    eta_mma: float
    eta_bw: float
    t_fixed_s: float
    p: float = math.inf
    eta_mma_range: Tuple[float, float] = (0.5, 1.1)
    eta_bw_range: Tuple[float, float] = (0.6, 0.93)
    t_fixed_range_s: Tuple[float, float] = (3 * US, 10 * US)
    ratio_band: Optional[Tuple[float, float]] = None

    def band(self, t_expected: float, t_comp: float, t_mem: float) -> Tuple[float, float]:
        """(low, high) seconds around `t_expected`, from the fitted ratio band or the parameter ranges."""
        if self.ratio_band is not None:
            return t_expected * self.ratio_band[0], t_expected * self.ratio_band[1]
        lo = self.t_fixed_range_s[0] + combine(t_comp * self.eta_mma / self.eta_mma_range[1],
                                               t_mem * self.eta_bw / self.eta_bw_range[1], self.p)
        hi = self.t_fixed_range_s[1] + combine(t_comp * self.eta_mma / self.eta_mma_range[0],
                                               t_mem * self.eta_bw / self.eta_bw_range[0], self.p)
        return min(lo, t_expected), max(hi, t_expected)


DEFAULT = Constants("uncalibrated defaults (research ranges)", eta_mma=0.8, eta_bw=0.85, t_fixed_s=6.5 * US)

# Fitted on bench/h200_sweep/h200_sweep.json (cuBLAS 13.1 nvjet kernels, H200, 2026-11-30), even-indexed
# shapes only, by `python3 -m tiletune.model.calibration bench/h200_sweep/h200_sweep.json`.
# ratio_band = 2.5th/97.5th percentile of measured/model on the fitting half.
FITTED: Dict[Tuple[str, str], Constants] = {
    ("sm90", "bf16"): Constants("h200-cublas-2026-11-30 bf16", eta_mma=0.84, eta_bw=0.71, t_fixed_s=8.00 * US,
                                p=8.0, ratio_band=(0.924, 1.126)),
    ("sm90", "fp8"): Constants("h200-cublas-2026-11-30 fp8", eta_mma=0.77, eta_bw=0.68, t_fixed_s=6.50 * US,
                               p=3.0, ratio_band=(0.933, 1.098)),
}
# The fp16 path uses the bf16 constants (same rate on every arch in the table).
_ALIASES = {"fp16": "bf16"}


def constants_for(arch: str, dtype: str) -> Constants:
    """The fitted constants for (arch, dtype) where a sweep exists, else DEFAULT."""
    return FITTED.get((arch, _ALIASES.get(dtype, dtype)), DEFAULT)


# --- fitting (dev tool; pure Python so it runs on the CPU-only machines) -------------------------

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
    from tiletune.model.gpus import find
    from tiletune.model.perf import _ceil, analyze
    from tiletune.records import Problem, TileConfig

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
                cand = replace(c, **{key: v})
                loss = _loss(rows, cand)
                if loss < best:
                    best, c = loss, cand
    ratios = sorted((r["median_us"] * US) / predict(r, c)[0] for r in rows)
    q = lambda f: ratios[min(len(ratios) - 1, max(0, round(f * (len(ratios) - 1))))]  # noqa: E731
    return replace(c, ratio_band=(round(q(0.025), 3), round(q(0.975), 3)))


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
    print(report(sys.argv[1] if len(sys.argv) > 1 else "bench/h200_sweep/h200_sweep.json"))
