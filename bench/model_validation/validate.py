"""Validate `tiletune model` (the tile-aware model) against every measured CUTLASS configuration.

    python3 bench/model_validation/validate.py [MEASUREMENTS.jsonl | DIR ...] > bench/model_validation/results/run2/RESULTS.md

Default inputs: bench/cutlass_sm90_grid/results/run2/raw.jsonl and bench/h200_tile_campaign/results/ (run1, run2),
each line one CUTLASS kernel measured on the H200 by tiletune's CUTLASS engine. Pure Python, CPU.

What it prints (Markdown):
1. held out by (N, K) family: for each family, the constants are fitted on every other family
   and the family's rows are predicted;
2. held out by tile: for each (dtype, tile M x N x K), fitted without any row of that tile;
3. the 14-config grid (4096^3): fitted without the grid (when other data exist), and whether every
   pair whose measured times differ by more than 5 % is ordered as measured;
4. every measured configuration beside the committed constants' prediction (in-sample).
Per split: rows, median and 90th-percentile |model - measured| / measured, band coverage (the
measured time inside the model's band), ranking per problem (the share of tile pairs more than
5 % apart that the model orders as measured; how often the model's best tile is within 5 % of the
measured best).
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path
from typing import Callable, Dict, List, Sequence, Tuple

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from tiletune.model.mainloop import FITTED  # noqa: E402
from tools.model_fit import tile_fit as tf  # noqa: E402

GRID = "bench/cutlass_sm90_grid/results/run2/raw.jsonl"
CAMPAIGN = "bench/h200_tile_campaign"
L2_RUN = "bench/h200_l2_residency/results/run1/results.jsonl"


def _pct(x: float) -> str:
    return "n/a" if x != x else f"{x:.1%}"


def holdout(rows: List[dict], group: Callable[[dict], tuple], label: Callable[[tuple], str]) -> Tuple[list, dict, dict]:
    """Fit without each group, predict it. -> (per-group lines, {row index: (t, lo, hi)}, pair stats)."""
    groups: Dict[tuple, List[int]] = {}
    for i, r in enumerate(rows):
        groups.setdefault(group(r), []).append(i)
    lines, pred_all = [], {}
    good = total = best_ok = probs = 0
    for g, idx in sorted(groups.items(), key=lambda kv: str(kv[0])):
        train = [r for i, r in enumerate(rows) if group(r) != g]
        if not train:
            continue
        tc = tf.fit(train, f"without {label(g)}")
        pred = {i: tf.predict(rows[i], tc) for i in idx}
        pred_all.update(pred)
        held = set(idx)
        # ranking: pairs with at least one held-out row, both predicted by the same fit
        both = {i: tf.predict(r, tc)[0] for i, r in enumerate(rows)
                if i in held or any(tf.problem_key(r) == tf.problem_key(rows[j]) for j in idx)}
        gd, tt, bo, pr = tf.ranking(both, rows, only=lambda a, b, g=g: group(a) == g or group(b) == g)
        good, total, best_ok, probs = good + gd, total + tt, best_ok + bo, probs + pr
        e = tf.errors(pred, rows)
        lines.append(f"| {label(g)} | {len(train)} | {e['n']} | {_pct(e['median'])} | {_pct(e['p90'])} | "
                     f"{_pct(e['band'])} | {gd}/{tt} | {bo}/{pr} |")
    return lines, pred_all, {"good": good, "total": total, "best_ok": best_ok, "probs": probs}


def summary(name: str, rows: Sequence[dict], pred: dict, rank: dict) -> str:
    e = tf.errors(pred, rows)
    share = rank["good"] / rank["total"] if rank["total"] else float("nan")
    best = rank["best_ok"] / rank["probs"] if rank["probs"] else float("nan")
    return (f"| {name} | {e['n']} | {_pct(e['median'])} | {_pct(e['p90'])} | {_pct(e['band'])} | "
            f"{rank['good']}/{rank['total']} ({_pct(share)}) | {rank['best_ok']}/{rank['probs']} ({_pct(best)}) |")


def l2_section() -> List[str]:
    """The L2-residency term against bench/h200_l2_residency (never fitted on: the committed constants
    predict every row). Per (weights resident in the usable L2 or not): error and band per L2 state,
    and the warm-over-cold speedup the model predicts against the one measured."""
    from tiletune.model import find
    from tiletune.model import l2 as l2_term
    from tiletune.model.perf import DTYPE_BITS

    path = ROOT / L2_RUN
    if not path.exists():
        return []
    rows = tf.load([str(path)])
    tc = FITTED.get("sm90") or tf.PRIOR
    g = find("NVIDIA H200")
    out = ["## L2 residency (bench/h200_l2_residency/results/run1: held out, never fitted on)", "",
           f"{len(rows)} measurements, 5 (N, K) shapes whose weights fit in / exceed the H200's usable L2 "
           f"({l2_term.USABLE_SHARE:.0%} of {g.l2_bytes / 2**20:.0f} MiB), M 1-256, each warm and cold. "
           "Committed constants. Speedup = cold / warm time of the same config and problem.", "",
           "| operands | L2 | rows | median error | 90th pct | band holds | warm speedup measured (median) | "
           "predicted (median) |", "|---|---|---|---|---|---|---|---|"]

    def resident(r: dict) -> bool:
        b = DTYPE_BITS[r["dtype"]] // 8 if DTYPE_BITS[r["dtype"]] >= 8 else 1
        foot = (r["m"] * r["k"] + r["n"] * r["k"]) * b + r["m"] * r["n"] * 2
        return l2_term.term(g, foot, "warm", None).resident

    pred = {i: tf.predict(r, tc) for i, r in enumerate(rows)}
    by_key: Dict[tuple, Dict[str, int]] = {}
    for i, r in enumerate(rows):
        by_key.setdefault(tf.config_key(r) + (r["m"], r["n"], r["k"]), {})[r["l2"]] = i
    for res in (True, False):
        for state in ("warm", "cold"):
            idx = [i for i, r in enumerate(rows) if resident(r) == res and r["l2"] == state]
            if not idx:
                continue
            e = tf.errors({i: pred[i] for i in idx}, rows)
            sp_m, sp_p = [], []
            for d in by_key.values():
                if "warm" in d and "cold" in d and resident(rows[d["warm"]]) == res:
                    sp_m.append(rows[d["cold"]]["time_s"] / rows[d["warm"]]["time_s"])
                    sp_p.append(pred[d["cold"]][0] / pred[d["warm"]][0])
            out.append(f"| {'fit in L2' if res else 'exceed L2'} | {state} | {len(idx)} | {_pct(e['median'])} | "
                       f"{_pct(e['p90'])} | {_pct(e['band'])} | "
                       f"{statistics.median(sp_m):.2f} | {statistics.median(sp_p):.2f} |")
    return out + [""]


def main(argv: List[str]) -> int:
    t0 = time.time()
    paths = argv or [p for p in (GRID, CAMPAIGN) if (ROOT / p).exists()]
    rows = tf.load(str(ROOT / p) if not Path(p).is_absolute() else p for p in paths)
    if not rows:
        print(f"no measurements in {', '.join(paths)}", file=sys.stderr)
        return 2
    grid_src = str(ROOT / GRID)
    fams = sorted({(r["n"], r["k"]) for r in rows})
    out = ["# tiletune model against measured CUTLASS kernels (H200)", "",
           f"Inputs: {', '.join(paths)}: {len(rows)} measured configurations, {len(fams)} (N, K) families, "
           f"{len({(r['dtype'],) + r['tile'] for r in rows})} (dtype, tile) shapes, "
           f"{len({tf.problem_key(r) for r in rows})} problems.",
           "Command: `python3 bench/model_validation/validate.py " + " ".join(argv) + "` (CPU only).", "",
           "Errors are |model - measured| / measured on rows the fit did not see; band = the measured time inside "
           "the model's band; pairs = tile pairs of one problem whose measured times differ by more than 5 %, "
           "ordered as measured; best = problems where the model's best config is within 5 % of the measured best.",
           ""]
    head = ["| held out | fit rows | held-out rows | median error | 90th pct | band holds | pairs ordered | best within 5 % |",
            "|---|---|---|---|---|---|---|---|"]
    summaries = []
    if len(fams) > 1:
        lines, pred, rank = holdout(rows, lambda r: (r["n"], r["k"]), lambda g: f"(N, K) = {g}")
        out += ["## Held out: whole (N, K) families", ""] + head + lines + [""]
        summaries.append(summary("(N, K) families", rows, pred, rank))
    else:
        out += ["## Held out: whole (N, K) families", "", f"Not possible: one family only ({fams[0]}).", ""]
    lines, pred, rank = holdout(rows, lambda r: (r["dtype"],) + r["tile"],
                                lambda g: f"{g[0]} {'x'.join(map(str, g[1:]))}")
    out += ["## Held out: whole tiles", ""] + head + lines + [""]
    summaries.append(summary("tiles", rows, pred, rank))
    out += ["## Summary (held-out predictions only)", "",
            "| split | rows | median error | 90th pct | band holds | pairs ordered | best within 5 % |",
            "|---|---|---|---|---|---|---|"] + summaries + [""]

    # the 14-config grid: fitted without it when other data exist
    grid = [r for r in rows if r["source"] == grid_src]
    other = [r for r in rows if r["source"] != grid_src]
    if grid:
        tc = tf.fit(other, "without the grid") if len(other) >= 20 else (FITTED.get("sm90") or tf.PRIOR)
        how = ("fitted on the other measurements only (the grid held out)" if len(other) >= 20 else
               "the committed constants (no other measurements: in-sample)")
        pred = {i: tf.predict(r, tc) for i, r in enumerate(grid)}
        gd, tt, bo, pr = tf.ranking({i: p[0] for i, p in pred.items()}, grid)
        bad = []
        for i in range(len(grid)):
            for j in range(i + 1, len(grid)):
                a, b = grid[i], grid[j]
                if tf.problem_key(a) != tf.problem_key(b):
                    continue
                if max(a["time_s"], b["time_s"]) > min(a["time_s"], b["time_s"]) * 1.05 and \
                        (a["time_s"] < b["time_s"]) != (pred[i][0] < pred[j][0]):
                    bad.append(f"{a['key']} vs {b['key']}")
        e = tf.errors(pred, grid)
        out += ["## The 14-config grid (bench/cutlass_sm90_grid, 4096^3)", "",
                f"Constants: {how}. {gd} of {tt} pairs more than 5 % apart ordered as measured"
                + (f"; misordered: {', '.join(bad)}" if bad else "") + f". Median error {_pct(e['median'])}, "
                f"90th pct {_pct(e['p90'])}, band holds {_pct(e['band'])}.", "",
                "| config | measured us | model us | band us | error |", "|---|---|---|---|---|"]
        for i, r in enumerate(grid):
            t, lo, hi = pred[i]
            out.append(f"| {r['key']} | {r['time_s'] * 1e6:.1f} | {t * 1e6:.1f} | {lo * 1e6:.1f} - {hi * 1e6:.1f} | "
                       f"{t / r['time_s'] - 1:+.1%} |")
        out.append("")

    out += l2_section()
    tc = FITTED.get("sm90") or tf.PRIOR
    out += [f"## Every measured configuration, committed constants ({tc.name}; in-sample where they were fitted)", "",
            "<details><summary>rows</summary>", "",
            "| dtype | M | N | K | L2 | tile | cluster | schedule | fast accum | swap-AB / stream-K / epilogue | "
            "measured us | model us | error |",
            "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    errs = []
    for r in sorted(rows, key=lambda r: (r["dtype"], r["n"], r["k"], r["m"], r["l2"], r["tile"])):
        t = tf.predict(r, tc)[0]
        errs.append(abs(t / r["time_s"] - 1))
        extra = "/".join(x for x in ("swap-AB" if r.get("swap_ab") else "", "stream-K" if r.get("stream_k") else "",
                                     r.get("epilogue") or "") if x) or "-"
        out.append(f"| {r['dtype']} | {r['m']} | {r['n']} | {r['k']} | {r['l2']} | {'x'.join(map(str, r['tile']))} | "
                   f"{'x'.join(map(str, r['cluster'][:2]))} | {r['schedule']} | {r['fast_accum']} | {extra} | "
                   f"{r['time_s'] * 1e6:.1f} | {t * 1e6:.1f} | {t / r['time_s'] - 1:+.1%} |")
    out += ["", "</details>", "", f"In-sample median error with the committed constants: "
            f"{_pct(statistics.median(errs))} over {len(errs)} rows.", "",
            f"_{time.time() - t0:.0f} s on the CPU machine._"]
    print("\n".join(out))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
