"""Fit the tile-aware model's constants on measured CUTLASS kernels, and score it on held-out ones.

Dev tool and library (bench/model_validation/validate.py and the evidence calibration use it);
pure Python, so it runs on the CPU-only machines. Reads measurement lines as tiletune's CUTLASS
engine writes them (bench/cutlass_sm90_grid/results/run2/raw.jsonl: {"key", "result": {dtype, schedule, tile,
cluster, stages, stage_policy, problem: {m, n, k}, time_ms, ...}}) or the same fields at top level.

Fit: coordinate descent on the mean |log(model / measured)|, with a weak pull of each constant
towards its mechanism's prior value (`PRIOR`), so a constant the data cannot see (e.g. the memory
latency on 4096^3 runs only) stays at its prior instead of wandering.
"""

from __future__ import annotations

import json
import math
import statistics
from pathlib import Path
from typing import Any, Callable, Dict, Iterable, List, NamedTuple, Optional, Sequence, Tuple

from msgspec import structs

from tiletune.model import l2 as l2_term
from tiletune.model import mainloop
from tiletune.model.calibration import combine
from tiletune.model.mainloop import TileConstants

US = 1e-6
# Prior values (module docstring of mainloop.py says what each prices) and the bounds of the search.
PRIOR = TileConstants("prior")
BOUNDS: Dict[str, Tuple[float, float]] = {
    "issue_cooperative": (1.0, 2.5), "issue_pingpong": (1.0, 3.0), "inst_cycles": (0.0, 120.0),
    "promote_cycles": (0.0, 800.0), "spill_factor": (1.0, 4.0), "cluster_cost": (0.0, 0.3),
    "latency_cycles": (200.0, 6000.0), "epi_bytes_per_clk": (8.0, 256.0), "epi_cycles": (0.0, 4000.0),
    "epi_direct_factor": (1.0, 8.0), "streamk_fixup_cycles": (0.0, 40000.0),
    "eta_bw": (0.4, 1.0), "t_fixed_s": (1e-6, 15e-6), "p": (1.5, 12.0),
}
PRIOR_WEIGHT = 0.01


def _fast_accum(res: dict) -> Optional[bool]:
    for key in ("fast_accum", "fp8_fast_accum"):
        if isinstance(res.get(key), bool):
            return res[key]
    sched = str(res.get("schedule") or "") + str(res.get("mainloop_schedule") or "")
    if "fastaccum" in sched.lower().replace("_", "").replace("-", ""):
        return True
    if res.get("kernel") == "sm90_gemm" and str(res.get("dtype", "")).startswith(("fp8", "e4m3")):
        # kernels/sm90_gemm.cu builds the plain (fp32-promoted) cooperative / ping-pong schedules
        return False
    return None


def row_from(obj: dict, source: str = "") -> Optional[dict]:
    """One measurement line -> a row, or None when it holds no successful timing. Two layouts:
    the CUTLASS engine's ({"key", "result": {..., "time_ms"}}, bench/cutlass_sm90_grid) and the
    tile campaign's (top-level fields, "median_us", "mainloop", "tile_scheduler", "l2",
    bench/h200_tile_campaign)."""
    res: dict = obj["result"] if isinstance(obj.get("result"), dict) else obj
    t_ms = res.get("time_ms")
    if t_ms is None and isinstance(res.get("median_us"), (int, float)):
        t_ms = res["median_us"] * 1e-3
    if t_ms is None and isinstance(res.get("time_s"), (int, float)):
        t_ms = res["time_s"] * 1e3
    if not isinstance(t_ms, (int, float)) or t_ms <= 0:
        return None
    if res.get("run") not in (None, "Success") or res.get("mode") not in (None, "run") or res.get("passed") is False:
        return None
    prob: dict = res.get("problem") or {}
    try:
        m, n, k = (int(prob[d] if d in prob else res[d]) for d in "mnk")
        tile = tuple(int(v) for v in res["tile"])[:3]
    except (TypeError, ValueError, KeyError):
        return None
    dtype = str(res.get("dtype", "")).lower()
    dtype = "fp8" if dtype.startswith(("fp8", "e4m3", "float8")) else ("bf16" if dtype.startswith("bf16") else dtype)
    if dtype not in ("fp8", "bf16", "fp16"):
        return None
    arch = str(res.get("arch") or "sm90")
    if not arch.startswith("sm9"):
        return None
    cluster = tuple(int(v) for v in (res.get("cluster") or (1, 1, 1)))[:3]
    cluster = cluster + (1,) * (3 - len(cluster))
    policy = str(res.get("stage_policy") or "")
    fixed = res.get("stages") if policy.startswith("fixed") or policy.startswith("stagecount") else None
    fast = _fast_accum(res)
    if dtype == "fp8" and res.get("mainloop") in ("default", "fp8_fast_accum"):
        fast = res["mainloop"] == "fp8_fast_accum"
    return {"key": obj.get("config_id") or obj.get("key") or res.get("key") or "", "source": source, "dtype": dtype,
            "m": m, "n": n, "k": k, "tile": tile, "cluster": cluster, "schedule": res.get("schedule"),
            "stages": fixed, "fast_accum": fast, "time_s": float(t_ms) * 1e-3, "l2": res.get("l2") or "warm",
            "stream_k": res.get("tile_scheduler") == "stream_k", "swap_ab": bool(res.get("swap_ab")),
            "epilogue": res.get("epilogue"), "family": res.get("family"), "clock_logged": res.get("clock_logged")}


def dedupe(rows: List[dict]) -> List[dict]:
    """One row per (config, problem, L2 state). A later file replaces an earlier one (the campaign's
    run2 re-measured stream-K after fixing it); within one file a re-timed line with its clock
    logged (the campaign's second call) replaces the first."""
    out: Dict[tuple, dict] = {}
    for r in rows:
        key = config_key(r) + problem_key(r)
        old = out.get(key)
        if old is None or old["source"] != r["source"] or (r.get("clock_logged") or not old.get("clock_logged")):
            out[key] = r
    return list(out.values())


def load(paths: Iterable[str]) -> List[dict]:
    """Every successful measurement in the JSONL files (a directory: its *.jsonl); duplicates of one
    (config, problem) are kept as they are (each is a measurement)."""
    rows: List[dict] = []
    for p in paths:
        path = Path(p)
        files = (sorted(path.rglob("results.jsonl")) or sorted(path.rglob("*.jsonl"))) if path.is_dir() else [path]
        for f in files:
            for line in f.read_text().splitlines():
                line = line.strip()
                if not line.startswith("{"):
                    continue
                try:
                    obj = json.loads(line)
                except json.JSONDecodeError:
                    continue
                r = row_from(obj, str(f)) if isinstance(obj, dict) else None
                if r is not None:
                    rows.append(r)
    return dedupe(rows)


def predict(row: dict, tc: TileConstants, gpu=None) -> Tuple[float, float, float]:
    """(expected, low, high) seconds for one measured row on the H200 (or `gpu`)."""
    from tiletune.core.records import Problem
    from tiletune.model.gpus import find
    from tiletune.model.perf import estimate

    g = gpu or find("NVIDIA H200")
    cfg = _config(row)
    e = estimate(Problem(m=row["m"], n=row["n"], k=row["k"], dtype_out="bf16"), cfg, g, dtype=row["dtype"],
                 arch="sm90", constants=tc, schedule=row.get("schedule"), fast_accum=row.get("fast_accum"),
                 l2=row.get("l2"))
    return e.time_expected_s, e.time_low_s, e.time_high_s


_CONFIGS: Dict[tuple, object] = {}


def _config(row: dict):
    from tiletune.core.records import TileConfig

    key = (row["tile"], row["cluster"], row.get("stages"), row.get("schedule"), row.get("stream_k", False),
           row.get("swap_ab", False), row.get("epilogue"))
    cfg = _CONFIGS.get(key)
    if cfg is None:
        cfg = _CONFIGS[key] = TileConfig(tile=row["tile"], cluster=row["cluster"], stages=row.get("stages"),
                                         mainloop_schedule=row.get("schedule"), stream_k=row.get("stream_k", False),
                                         swap_ab=row.get("swap_ab", False), epilogue_schedule=row.get("epilogue"))
    return cfg


class _Pre(NamedTuple):
    """A row's constant-free numbers, worked out once per fit (the fit evaluates thousands of constants)."""

    facts: mainloop.TileFacts
    waves: int
    kblocks: int
    stream_k: Tuple[int, int]  # (k-blocks per SM, tiles per SM) under stream-K, else (0, 0)
    clock: float
    mem_bytes: float
    bw: float
    log_meas: float


def _pre(row: dict) -> _Pre:
    from tiletune.core.records import Problem
    from tiletune.model.gpus import find
    from tiletune.model.perf import DTYPE_BITS, estimate

    g = find("NVIDIA H200")
    e = estimate(Problem(m=row["m"], n=row["n"], k=row["k"], dtype_out="bf16"), _config(row), g, dtype=row["dtype"],
                 arch="sm90", constants=PRIOR, schedule=row.get("schedule"), fast_accum=row.get("fast_accum"))
    # an SM90 dense case on the H200: every one of these is known
    assert e.kernel is not None and e.peak_dense is not None and e.clock_hz is not None and g.boost_clock_hz is not None
    f = mainloop.tile_facts(e.kernel, e.tile, DTYPE_BITS[row["dtype"]], "sm90", e.peak_dense / (g.sms * g.boost_clock_hz),
                            e.smem.stages, None, 16)
    sk = (0, 0)
    if row.get("stream_k"):
        tiles = -(-e.kernel_m // e.tile[0]) * -(-e.kernel_n // e.tile[1]) * e.groups
        sk = (-(-(tiles * e.k_iters) // e.slots), -(-tiles // e.slots))
    l2t = l2_term.term(g, e.bytes.minimum, row.get("l2"), e.clock_hz)  # as perf.estimate: warm + resident -> L2 rate
    bw = l2t.bandwidth if l2t.warm_applies and l2t.bandwidth else e.bandwidth
    return _Pre(f, e.waves, e.k_iters, sk, e.clock_hz, e.bytes.minimum + e.bytes.partials, bw, math.log(row["time_s"]))


def fast_time(p: _Pre, tc: TileConstants) -> float:
    """perf.estimate's expected time from precomputed facts (tests check the two agree)."""
    c = mainloop.cycles(p.facts, tc)
    if p.stream_k[0]:
        t_comp = (p.stream_k[0] * c.kblock + p.stream_k[1] * c.epilogue + tc.streamk_fixup_cycles) / p.clock
    else:
        t_comp = p.waves * mainloop.tile_cycles(p.kblocks, c) / p.clock
    return tc.t_fixed_s + combine(t_comp, p.mem_bytes / (p.bw * tc.eta_bw), tc.p)


def _loss(rows: Sequence[dict], tc: TileConstants, pre: Optional[List[_Pre]] = None) -> float:
    if pre is None:
        pre = [_pre(r) for r in rows]
    err = statistics.fmean(abs(math.log(fast_time(p, tc)) - p.log_meas) for p in pre)
    prior = sum(math.log((getattr(tc, k) + 1e-9) / (getattr(PRIOR, k) + 1e-9)) ** 2 for k in BOUNDS)
    return err + PRIOR_WEIGHT * prior


def fit(rows: Sequence[dict], name: str, start: Optional[TileConstants] = None, rounds: int = 4,
        keys: Optional[Sequence[str]] = None) -> TileConstants:
    """Constants that minimise `_loss` on `rows`; `ratio_band` = 5th/95th pct of measured/model there."""
    tc = structs.replace(start or PRIOR, name=name)
    pre = [_pre(r) for r in rows]
    best = _loss(rows, tc, pre)
    steps = (0.6, 0.8, 0.9, 0.95, 1.05, 1.11, 1.25, 1.6)
    for _ in range(rounds):
        improved = False
        for key in keys or BOUNDS:
            lo, hi = BOUNDS[key]
            for f in steps:
                v = getattr(tc, key)
                cand_v = min(hi, max(lo, (v if v > 0 else (hi - lo) * 0.05) * f))
                if cand_v == v:
                    continue
                change: Dict[str, Any] = {key: cand_v}
                cand = structs.replace(tc, **change)
                loss = _loss(rows, cand, pre)
                if loss < best - 1e-6:
                    best, tc, improved = loss, cand, True
        if not improved:
            break
    ratios = sorted(math.exp(p.log_meas) / fast_time(p, tc) for p in pre)
    q = lambda f: ratios[min(len(ratios) - 1, max(0, round(f * (len(ratios) - 1))))]  # noqa: E731
    return structs.replace(tc, ratio_band=(round(min(q(0.05), 0.97), 3), round(max(q(0.95), 1.03), 3)),
                   fitted_on=f"{len(rows)} measured CUTLASS configs")


# --- scoring ----------------------------------------------------------------------------------------

def problem_key(r: dict) -> tuple:
    return (r["dtype"], r["m"], r["n"], r["k"], r.get("l2", "warm"))


def config_key(r: dict) -> tuple:
    return (r["tile"], r["cluster"], r.get("schedule"), r.get("stages"), r.get("fast_accum"), r.get("stream_k", False),
            r.get("swap_ab", False), r.get("epilogue"))


def ranking(pred: Dict[int, float], rows: Sequence[dict], only: Optional[Callable[[dict, dict], bool]] = None,
            gap: float = 0.05) -> Tuple[int, int, int, int]:
    """(pairs ordered as measured, pairs > gap apart, problems whose model-best is within gap of the
    measured best, problems with 2+ configs). `pred` maps row index -> model seconds."""
    by: Dict[tuple, List[int]] = {}
    for i, r in enumerate(rows):
        if i in pred:
            by.setdefault(problem_key(r), []).append(i)
    good = total = best_ok = probs = 0
    for idx in by.values():
        if len(idx) < 2:
            continue
        probs += 1
        meas_best = min(rows[i]["time_s"] for i in idx)
        model_best = min(idx, key=lambda i: pred[i])
        best_ok += rows[model_best]["time_s"] <= meas_best * (1 + gap)
        for x in range(len(idx)):
            for y in range(x + 1, len(idx)):
                i, j = idx[x], idx[y]
                ti, tj = rows[i]["time_s"], rows[j]["time_s"]
                if max(ti, tj) <= min(ti, tj) * (1 + gap):
                    continue
                if only is not None and not only(rows[i], rows[j]):
                    continue
                total += 1
                good += (ti < tj) == (pred[i] < pred[j])
    return good, total, best_ok, probs


def errors(pred: Dict[int, Tuple[float, float, float]], rows: Sequence[dict]) -> Dict[str, float]:
    errs = sorted(abs(p[0] / rows[i]["time_s"] - 1) for i, p in pred.items())
    inside = sum(p[1] <= rows[i]["time_s"] <= p[2] for i, p in pred.items())
    n = len(errs)
    return {"n": n, "median": statistics.median(errs) if errs else float("nan"),
            "p90": errs[min(n - 1, int(math.ceil(0.9 * n)) - 1)] if errs else float("nan"),
            "band": inside / n if n else float("nan")}


if __name__ == "__main__":  # pragma: no cover - dev tool
    import sys

    data = load(sys.argv[1:] or ["bench/cutlass_sm90_grid/results/run2/raw.jsonl"])
    c = fit(data, "h200-cutlass")
    print(c)
