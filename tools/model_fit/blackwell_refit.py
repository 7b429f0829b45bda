"""The SM100 / SM120 tile-model constants refitted from the public Blackwell points (issue 26): the whole fit
that bench/blackwell_public/validate.py prints and tiletune/model/mainloop.py's FITTED ships.

    refit(points_path)   # -> the fitted constants per family, and every working point scored with them

One function so the shipped constants can be checked against the fit (tests/model/test_blackwell_refit.py runs
it on tests/data/blackwell_public/points.jsonl, a byte copy of bench/blackwell_public/points.jsonl) and so
validate.py's tables come from the same code. Pure Python, CPU only, one to two minutes.

What the fit sees (bench/blackwell_public/SPLIT.md): FIT_SOURCES fit the tile constants; the no-longer-blind
held-out sets of rounds one to four (GB300 included) set the SM100 clock fraction (the rows with a logged clock)
and, with the fit's leave-one-source-out predictions, the band. Rounds five and six's sets are left out
(bf.load without round5/round6), as in every fit since round five.
"""

from __future__ import annotations

import math
import statistics
from pathlib import Path
from typing import Dict, List, NamedTuple, Sequence, Tuple

from msgspec.structs import replace

from tiletune.model.mainloop import FITTED, TileConstants
from tools.model_fit import blackwell_fit as bf

ROOT = Path(__file__).resolve().parents[2]

# The split (bench/blackwell_public/SPLIT.md, committed before round two changed the model).
FIT_SOURCES = {"sm100": ("xla-sm100-table", "tmoreau-b200", "learncuda-b200"),
               "sm120": ("learncuda-5090", "gnkernels-5090", "learncuda-rowscaled-5090", "aidxhxr-5090")}
# round two's held-out sources, blind when SPLIT.md was written
NEW_HELD = ("sa-mainloop-b200", "cutex-b300", "pytorch155991-5090", "aidxhxr-5090-fp8")
# round one's held-out GPUs: still held out of every fit, no longer blind (round one looked at them)
HELD_GPUS = ("RTX PRO 6000 Max-Q", "GB10", "B300")
# round four held GB300 out whole (SPLIT.md, 'The fourth held-out split'); from round five it is working material
ROUND4_HELD_GPUS: Tuple[str, ...] = ()
# measured copy bandwidth / table bandwidth on each family's fitting GPU (gn-kernels README, 'Realistic SOL')
ETA_BW = {"sm100": round(5981.99 / 7700, 3), "sm120": round(1509.43 / 1792, 3)}
# constants a family's prior sets besides the SM90 values (none at present)
PRIOR_EXTRA: Dict[str, Dict[str, float]] = {}
FIT_NAMES = {"sm100": "public-b200-2026-12 (issue 26)", "sm120": "public-rtx5090-2026-12 (issue 26)"}


BAND_RULE = "loso"  # "loso": leave-one-source-out ratios; "insample": the fit's own residuals (the SM90 rule)


def fit_family(cs: Sequence[bf.Case], fam: str) -> Tuple[TileConstants, List[Tuple[str, float]]]:
    """The family's constants fitted on FIT_SOURCES, and (source, measured / model) of each fitting point
    predicted without its source (the band's first half; `band_from_evidence` adds the held-out half)."""
    prior = replace(FITTED["sm90"], name=FIT_NAMES[fam], eta_bw=ETA_BW[fam], transferred_from=None, widen=0.0,
                    **PRIOR_EXTRA.get(fam, {}))
    keys = [k for k in bf.FIT_KEYS if k != "eta_bw"]
    train = [c for c in cs if c.family == fam and c.point["source_id"] in FIT_SOURCES[fam]]
    tc = bf.fit(train, prior, FIT_NAMES[fam], keys=keys)
    if BAND_RULE == "loso":
        pairs = bf.source_out_pairs(train, prior, FIT_NAMES[fam], keys=keys,
                                    keep=bf.fastest_measured(c.point for c in train))
    else:
        pairs = [(c.point["source_id"], math.exp(c.log_meas) / t) for c in train for t in [bf.predict(c, tc)] if t]
    srcs = sorted({c.point["source_id"] for c in train})
    tc = bf.with_band(tc, [r for _, r in pairs], f"{len(train)} public {'B200' if fam == 'sm100' else 'RTX 5090'} "
                                                 f"timings ({', '.join(srcs)}), bench/blackwell_public")
    dtypes = tuple(sorted({c.point["dtype"] for c in train}))
    return replace(tc, fitted_dtypes=dtypes, clock_in_band=True), pairs


def fit_clock_fraction(cs: Sequence[bf.Case], tc: TileConstants, fam: str) -> Tuple[TileConstants, int]:
    """mainloop.py mechanism 14: the sustained-clock fraction folded into `issue_cooperative`, fitted on the
    family's no-longer-blind held-out points whose source logged the SM clock (SM100: cutex-b300's). A family
    whose fit saw stated clocks (SM120) keeps 1.0. Returns the constants and how many points decided it."""
    train_clocked = [c for c in cs if c.family == fam and c.point["source_id"] in FIT_SOURCES[fam]
                     and c.point.get("sm_clock_mhz")]
    logged = [c for c in cs if c.family == fam and c.point.get("sm_clock_mhz") and c.pres
              and c.point["source_id"] not in FIT_SOURCES[fam]]
    if train_clocked or not logged:
        return tc, 0
    # the largest fraction of those with the least error (below 1 / issue_cooperative the issue factor is the
    # tensor core's own rate, 1.0, and every smaller fraction predicts the same)
    losses = []
    for i in range(400, 1001, 5):
        cand = replace(tc, sustained_clock_fraction=i / 1000)
        losses.append((statistics.fmean(abs(math.log(t) - c.log_meas) for c in logged
                                        for t in [bf.predict(c, cand)] if t), i / 1000))
    least = min(x for x, _ in losses)
    frac = max(f for x, f in losses if x <= least + 1e-9)
    return replace(tc, sustained_clock_fraction=frac), len(logged)


def band_from_evidence(tc: TileConstants, pairs: Sequence[Tuple[str, float]], n_loso: int) -> TileConstants:
    """The band: 5th / 95th percentile of measured / model over the leave-one-source-out predictions of the
    fit and the no-longer-blind held-out points, every source weighted equally (bf.source_weighted_quantile)."""
    lo = round(min(bf.source_weighted_quantile(pairs, 0.05), 0.97), 3)
    hi = round(max(bf.source_weighted_quantile(pairs, 0.95), 1.03), 3)
    srcs = sorted({s for s, _ in pairs})
    return replace(tc, ratio_band=(lo, hi), fitted_on=tc.fitted_on + f"; band: 5th / 95th percentile of measured / model "
                   f"over {n_loso} leave-one-source-out predictions and {len(pairs) - n_loso} held-out timings no longer "
                   f"blind, {len(srcs)} sources weighted equally")


def model_rows(cs: Sequence[bf.Case], tcs: Dict[str, TileConstants]) -> List[dict]:
    """Each point scored by perf.estimate with the fitted constants on the kernel the fit chose."""
    from tiletune.core.errors import ModelError
    from tiletune.model.gpus import find
    from tiletune.model.perf import estimate

    out = []
    for c in cs:
        p, tc = c.point, tcs[c.family]
        row = {"point": p, "case": c, "fit": p["source_id"] in FIT_SOURCES[c.family]}
        if not c.pres:
            row["too_big"] = c.too_big
            out.append(row)
            continue
        best = min(c.pres, key=lambda pre: bf.fast_time(pre, tc))
        cfg = next(k for k in bf.candidates(c.family, p) if k.label() == best.label)
        try:
            e = estimate(bf._problem(p), cfg, find(bf.GPU_KEYS[p["gpu"]]), dtype=p["dtype"], constants=tc,
                         l2=bf.l2_state(p), grouped=bool(p.get("grouped")), sm_clock_hz=bf.clock_hz(p),
                         power_limit_w=bf.power_w(p), timer=bf.timer_of(p))
        except ModelError as err:  # pragma: no cover - a case that built before builds again
            row["error"] = str(err)
            out.append(row)
            continue
        assert abs(e.time_expected_s / bf.fast_time(best, tc) - 1) < 1e-6, (p["id"], e.time_expected_s)
        meas = p["time_us"] * 1e-6
        row.update(model=e.time_expected_s, lo=e.time_low_s, hi=e.time_high_s, meas=meas, kernel=best.label,
                   err=abs(e.time_expected_s - meas) / meas, inside=e.time_low_s <= meas <= e.time_high_s,
                   width=e.time_high_s / e.time_low_s)
        out.append(row)
    return out


def b300_rows(tc: TileConstants) -> List[dict]:
    """flashinfer#4163's six cold-L2 tactics (M 512, N 6144, K 6144 nvfp4 on an SM103 GPU), B300 modelled."""
    from tiletune.analysis.pipeline import inspect
    from tiletune.model import find
    from tiletune.model.perf import estimate
    from tiletune.readers import ReadContext

    log = ROOT / "tests" / "data" / "real_sm103_4163" / "autotuner_debug.log"
    r = inspect([log], ReadContext(arch="sm103", flashinfer_version="0.6.16"))
    gpu = find("B300")
    out = []
    for ae in r.entries:
        if ae.record.time_ms is None or ae.config is None:
            continue
        pr = ae.entry.problem
        dtype = (pr.dtype_a or pr.dtype_b) if pr is not None else None
        if pr is None or dtype is None:  # pragma: no cover - every tactic of that log decodes its problem
            continue
        e = estimate(pr, ae.config, gpu, dtype=dtype, arch="sm103", l2="cold", constants=tc)
        meas = ae.record.time_ms * 1e-3
        out.append({"point": {"id": f"flashinfer#4163 tactic {ae.record.tactic}", "gpu": "B300", "source_id": "fi4163-b300",
                              "dtype": "nvfp4"}, "fit": False, "model": e.time_expected_s, "lo": e.time_low_s,
                    "hi": e.time_high_s, "meas": meas, "kernel": ae.config.label(),
                    "err": abs(e.time_expected_s - meas) / meas, "inside": e.time_low_s <= meas <= e.time_high_s,
                    "width": e.time_high_s / e.time_low_s})
    return out


def priors() -> Dict[str, TileConstants]:
    """Each family's prior: the SM90 (H200) fit with the family's measured copy efficiency."""
    return {f: replace(FITTED["sm90"], eta_bw=ETA_BW[f], transferred_from=None, widen=0.0, **PRIOR_EXTRA.get(f, {}))
            for f in ETA_BW}


class Refit(NamedTuple):
    constants: Dict[str, TileConstants]  # per family, band included
    rows: List[dict]  # every working point (and flashinfer#4163's B300 tactics) scored with them
    cases: List[bf.Case]
    points: List[dict]
    n_clock: Dict[str, int]  # points that decided each family's clock fraction


def refit(points_path: Path = bf.POINTS) -> Refit:
    """Fit both families on `points_path` (working material: rounds one to four), then their bands."""
    pts = [p for p in bf.load(points_path, round3=True, round4=True) if p["gpu"] not in ROUND4_HELD_GPUS]
    cs = bf.cases(pts, priors())
    tcs: Dict[str, TileConstants] = {}
    loso: Dict[str, List[Tuple[str, float]]] = {}
    n_clock: Dict[str, int] = {}
    for fam in ("sm100", "sm120"):
        tcs[fam], loso[fam] = fit_family(cs, fam)
        tcs[fam], n_clock[fam] = fit_clock_fraction(cs, tcs[fam], fam)
    # the band: the fit's leave-one-source-out ratios plus the no-longer-blind held-out points (measured / model
    # does not depend on the band, so the rows are scored once more with it)
    rows = model_rows(cs, tcs) + b300_rows(tcs["sm100"])
    fastest = bf.fastest_measured(pts)
    for fam in ("sm100", "sm120"):
        held = [(r["point"]["source_id"], r["meas"] / r["model"]) for r in rows if "model" in r and not r["fit"]
                and (r["case"].family if "case" in r else "sm100") == fam
                and ("case" not in r or r["point"]["id"] in fastest)]
        tcs[fam] = band_from_evidence(tcs[fam], loso[fam] + held, len(loso[fam]))
    rows = model_rows(cs, tcs) + b300_rows(tcs["sm100"])
    return Refit(tcs, rows, cs, pts, n_clock)


def differences(shipped: TileConstants, fitted: TileConstants, rel: float = 2e-3) -> List[str]:
    """The constants where `shipped` is not `fitted` to the rounding FITTED uses (`rel`), one line each."""
    out = []
    for key in bf.FIT_KEYS + ("sustained_clock_fraction",):
        a, b = getattr(shipped, key), getattr(fitted, key)
        if not math.isclose(a, b, rel_tol=rel, abs_tol=1e-12):
            out.append(f"{key}: shipped {a:.6g}, fit {b:.6g}")
    if tuple(shipped.ratio_band) != tuple(fitted.ratio_band):
        out.append(f"ratio_band: shipped {shipped.ratio_band}, fit {fitted.ratio_band}")
    if tuple(shipped.fitted_dtypes) != tuple(fitted.fitted_dtypes):
        out.append(f"fitted_dtypes: shipped {shipped.fitted_dtypes}, fit {fitted.fitted_dtypes}")
    return out
