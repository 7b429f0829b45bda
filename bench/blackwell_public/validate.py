"""Fit the SM100 / SM120 tile-model constants on public Blackwell timings and score them on GPUs and
sources held out of the fit (issue 26, rounds one to five).

    python3 bench/blackwell_public/validate.py                  # development: round five's set left out
    python3 bench/blackwell_public/validate.py --score-round5 > bench/blackwell_public/RESULTS.md

Round five (SPLIT.md, 'The fifth held-out split'): the sources of tools/model_fit/blackwell_fit.py's
ROUND5_HELD are blind; they are loaded only with --score-round5, the single scoring run. Rounds one to four's
held-out sets are working material (GB300 included); they are used for two things, each said where it is
done: the SM100 clock fraction (mainloop.py mechanism 14: the rows with a logged clock) and the band (5th /
95th percentile of measured / model over the fit's leave-one-source-out predictions and those held-out sets,
every source weighted equally). Every point is priced with the fixed per-kernel term of the timer its source
used (blackwell_fit.TIMER; tiletune/model/timers.py).

Pure Python, CPU only, about two minutes. Reads points.jsonl (build_points.py) and, for the B300 of
round one, tests/data/real_sm103_4163 (flashinfer#4163, decoded by tiletune's own inspect pipeline).

The split is SPLIT.md's (committed before round two changed the model): FIT_SOURCES fit the constants;
NEW_HELD are round two's held-out sources (blind when SPLIT.md was written); round one's held-out GPUs
(HELD_GPUS) and sources stay out of every fit and are reported as no longer blind.
`eta_bw` is not fitted: it is the copy efficiency measured on the fitting GPU (gn-kernels README,
memcpy: B200 5,981.99 GB/s of 7,700, RTX 5090 1,509.43 of 1,792), because the fitting points
(mostly compute-bound squares) cannot tell it from the fixed term and the latency term.

Scores use `tiletune.model.perf.estimate` itself with the fitted constants (its band, widening
rules and L2 handling), on the kernel the source states or, where none is stated, the catalog
kernel the model finds fastest (blackwell_fit.catalog). It prints the constants to paste into
tiletune/model/mainloop.py's FITTED, then the tables.
"""

from __future__ import annotations

import math
import statistics
import sys
from pathlib import Path
from typing import Dict, List, Sequence, Tuple

from msgspec.structs import replace

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from tiletune.model.mainloop import FITTED, TileConstants  # noqa: E402
from tools.model_fit import blackwell_fit as bf  # noqa: E402

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


def _pct(x: float) -> str:
    return "n/a" if x != x else f"{x:.1%}"


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
        e = estimate(pr, ae.config, gpu, dtype=pr.dtype_a or pr.dtype_b, arch="sm103", l2="cold", constants=tc)
        meas = ae.record.time_ms * 1e-3
        out.append({"point": {"id": f"flashinfer#4163 tactic {ae.record.tactic}", "gpu": "B300", "source_id": "fi4163-b300",
                              "dtype": "nvfp4"}, "fit": False, "model": e.time_expected_s, "lo": e.time_low_s,
                    "hi": e.time_high_s, "meas": meas, "kernel": ae.config.label(),
                    "err": abs(e.time_expected_s - meas) / meas, "inside": e.time_low_s <= meas <= e.time_high_s,
                    "width": e.time_high_s / e.time_low_s})
    return out


def summary(rows: Sequence[dict]) -> Dict[str, object]:
    ok = [r for r in rows if "model" in r]
    errs = [r["err"] for r in ok]
    return {"n": len(ok), "median": statistics.median(errs) if errs else float("nan"),
            "p90": bf.quantile(errs, 0.9) if errs else float("nan"),
            "inside": sum(r["inside"] for r in ok) / len(ok) if ok else float("nan"),
            "width": statistics.median(r["width"] for r in ok) if ok else float("nan"),
            "signed": statistics.median(r["model"] / r["meas"] - 1 for r in ok) if ok else float("nan"),
            "too_big": [r["point"]["id"] for r in rows if "too_big" in r]}


def table(title: str, groups: Dict[str, List[dict]]) -> List[str]:
    lines = [f"## {title}", "", "| group | n | median error | 90th pct | signed median (model/measured - 1) | inside band | "
             "median band width (high/low) | declared too big |", "|---|---|---|---|---|---|---|---|"]
    for name, rows in groups.items():
        s = summary(rows)
        lines.append(f"| {name} | {s['n']} | {_pct(s['median'])} | {_pct(s['p90'])} | {s['signed']:+.1%} | "
                     f"{_pct(s['inside'])} | {s['width']:.2f}x | {len(s['too_big'])} |")
    return lines + [""]


def _split_rows(rows: Sequence[dict]) -> Dict[str, Dict[str, List[dict]]]:
    """Rows grouped the way RESULTS.md reports them (SPLIT.md's split)."""
    g: Dict[str, Dict[str, List[dict]]] = {k: {} for k in ("new_gpu", "new_src", "old_gpu", "old_src", "fit")}
    for r in rows:
        p = r["point"]
        src, gpu = p["source_id"], p["gpu"]
        if r["fit"]:
            g["fit"].setdefault(f"{gpu}: {src}", []).append(r)
        elif src in NEW_HELD:
            g["new_gpu"].setdefault(gpu, []).append(r)
            g["new_src"].setdefault(f"{gpu}: {src}", []).append(r)
        elif gpu in HELD_GPUS:
            g["old_gpu"].setdefault(gpu + (" (flashinfer#4163)" if src == "fi4163-b300" else ""), []).append(r)
        else:
            g["old_src"].setdefault(f"{gpu}: {src}", []).append(r)
    return g


def _sa_summary(rows: Sequence[dict]) -> List[str]:
    """sa-mainloop-b200 (702 single-CTA points) summarised by dtype, tile M and K-tile bytes."""
    groups: Dict[tuple, List[dict]] = {}
    for r in rows:
        p = r["point"]
        if p["source_id"] != "sa-mainloop-b200" or "model" not in r:
            continue
        t = [int(x) for x in p["tile"].split("x")]
        kbytes = t[2] * (2 if p["dtype"] == "bf16" else 1)
        groups.setdefault((p["dtype"], t[0], kbytes), []).append(r)
    lines = ["| dtype | tile M | K-tile bytes | n | median error | signed median | inside band |", "|---|---|---|---|---|---|---|"]
    for key in sorted(groups):
        s = summary(groups[key])
        lines.append(f"| {key[0]} | {key[1]} | {key[2]} | {s['n']} | {_pct(s['median'])} | {s['signed']:+.1%} | "
                     f"{_pct(s['inside'])} |")
    return lines + [""]


def _point_line(r: dict) -> str:
    p = r["point"]
    shape = f"{p.get('m', 512)} x {p.get('n', 6144)} x {p.get('k', 6144)}" + (f" ({p['batch']})" if p.get("batch", 1) > 1 else "")
    clk = f" @{p['sm_clock_mhz']} MHz" if p.get("sm_clock_mhz") else ""
    return (f"| {p['id']} | {p['gpu']}{clk} | {p['dtype']} | {shape} | {r['kernel']} | {r['meas'] * 1e6:.2f} | "
            f"{r['model'] * 1e6:.2f} | {r['lo'] * 1e6:.2f} - {r['hi'] * 1e6:.2f} | {(r['model'] / r['meas'] - 1):+.1%} |")


def _by_source(rows: Sequence[dict], suffix: str = "") -> Dict[str, List[dict]]:
    out: Dict[str, List[dict]] = {}
    for r in rows:
        out.setdefault(f"{r['point']['gpu']}: {r['point']['source_id']}{suffix}", []).append(r)
    return out


def round_tables(rows4: Sequence[dict], goal: str, label: str = "four") -> List[str]:
    """Round `label`'s held-out set (blind until this run): per GPU, per source, every point."""
    by_gpu: Dict[str, List[dict]] = {}
    for r in rows4:
        by_gpu.setdefault(r["point"]["gpu"], []).append(r)
    out = table(f"Round {label}'s held-out set (blind until this run), per GPU ({goal})", by_gpu)
    out += table(f"Round {label}'s held-out set, per source (timer: blackwell_fit.TIMER)",
                 {f"{k} [timer {bf.TIMER.get(k.split(': ')[1], ('unknown', ''))[0]}]": v
                  for k, v in _by_source(rows4).items()})
    head = ["| point | GPU | dtype | M x N x K (batch) | kernel (stated or chosen) | measured us | model us | band us | error |",
            "|---|---|---|---|---|---|---|---|---|"]
    big = [(r["point"]["id"], r["too_big"]) for r in rows4 if "too_big" in r]
    out += [f"## Round {label}'s held-out kernels declared too big", "",
            ("none" if not big else "\n".join(f"- {pid}: {', '.join(t)}" for pid, t in big)), ""]
    out += [f"## Every point of round {label}'s held-out set", ""] + head
    out += [_point_line(r) for r in rows4 if "model" in r] + [""]
    return out


def main() -> None:
    score5 = "--score-round5" in sys.argv
    # working material: rounds one to four (round four's held-out sources and GB300 included)
    pts = [p for p in bf.load(round3=True, round4=True) if p["gpu"] not in ROUND4_HELD_GPUS]
    priors = {f: replace(FITTED["sm90"], eta_bw=ETA_BW[f], transferred_from=None, widen=0.0, **PRIOR_EXTRA.get(f, {}))
              for f in ETA_BW}
    cs = bf.cases(pts, priors)
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
    g = _split_rows(rows)
    goal = "the issue's goal: median error <= 10 %, >= 80 % inside a band of median width <= 2x"
    n_all = len(bf.load(round3=True, round4=True, round5=True))
    out = ["# Public Blackwell timings against `tiletune model` (issue 26, round five)", "",
           f"Inputs: bench/blackwell_public/points.jsonl ({len(pts)} working points"
           + (f" and round five's {n_all - len(pts)} held-out ones" if score5 else ", round five's held-out sources left out")
           + ") and tests/data/real_sm103_4163 (B300). "
           "Command: `python3 bench/blackwell_public/validate.py --score-round5 > bench/blackwell_public/RESULTS.md` "
           "(CPU only). No Blackwell GPU was available to this work: every Blackwell number below is a published one, "
           "none was measured here (the fixed term's split was measured on an H200: bench/h200_timer_split). The "
           "splits: bench/blackwell_public/SPLIT.md (round five's committed before round five changed the model, in its "
           "own commit). What changed, why, and what is still missed: README.md, 'Round five'.", "",
           "Error = |model - measured| / measured; band = the model's own low/high (perf.estimate with the fitted "
           "constants); width = high / low. Each point runs at the SM clock its source logs, else under the power "
           "limit its source states (`--power-limit`), else at the GPU table's clock. Earlier rounds' held-out rows "
           "entered no fit of the tile constants; they set the SM100 clock fraction (the rows with a logged clock, "
           f"{n_clock['sm100']}) and the band (validate.py's docstring). Each point's fixed per-kernel term is the one "
           "of the timer its source used (blackwell_fit.TIMER: kernel, graph, events; unknown: expected as a CUDA "
           "graph, the band reaching to kernel-only and events).", ""]
    if score5:
        pts5 = [p for p in bf.load(round3=True, round4=True, round5=True) if p["source_id"] in bf.ROUND5_HELD]
        out += ["Round five was scored twice with the same model: the first run read two of sglang13528's columns "
                "one to the left (an extraction error, corrected in extract_round5.py; SPLIT.md, 'After the scoring "
                "run'); the tables below are the corrected second run, README.md keeps the first one's numbers.", ""]
        out += round_tables(model_rows(bf.cases(pts5, priors), tcs), goal, "five")
    out += table("Round four's held-out set (no longer blind: working material), per source",
                 _by_source([r for r in rows if r["point"]["source_id"] in bf.ROUND4_HELD]))
    out += table(f"Round two's held-out set (no longer blind), per GPU ({goal})", g["new_gpu"])
    out += table("Round two's held-out set, per source", g["new_src"])
    clocked = [r for r in g["new_src"].get("B300: cutex-b300", []) if r["point"].get("sm_clock_mhz")]
    unclocked = [r for r in g["new_src"].get("B300: cutex-b300", []) if not r["point"].get("sm_clock_mhz")]
    out += table("cutex-b300 by whether the source logged the SM clock (random inputs run power-capped at 1.1-1.5 GHz; "
                 "without a logged clock the model runs at the table's 2,032 MHz)",
                 {"B300: clock logged": clocked, "B300: clock not logged": unclocked})
    out += table(f"Old held-out GPUs (round one's; **no longer blind**) ({goal})", g["old_gpu"])
    # the same GPUs at the GPU table's clock: what `tiletune model` says without --sm-clock
    plain = [{k: v for k, v in c.point.items() if k != "sm_clock_mhz"} for c in cs
             if c.point["gpu"] in HELD_GPUS and c.point["source_id"] not in NEW_HELD]
    plain_rows = model_rows(bf.cases(plain, priors), tcs)
    out += table("Old held-out GPUs at the GPU table's clock (no stated clock fed to the model; no longer blind)",
                 {gpu: [r for r in plain_rows if r["point"]["gpu"] == gpu] for gpu in HELD_GPUS if gpu != "B300"})
    out += table("Old held-out sources on the fitting GPUs (round one's; no longer blind)", g["old_src"])
    out += table("Fitting sources (in-sample; for reference only)", g["fit"])
    out += ["## sa-mainloop-b200 by dtype, tile M and K-tile (new held-out; single CTA, K = 131072)", ""]
    out += _sa_summary(rows)
    big = [(r["point"]["id"], r["too_big"]) for r in rows if "too_big" in r]
    out += ["## Kernels that ran in public, declared too big", "",
            ("none: every stated kernel fits, and every point has a catalog kernel that fits" if not big else
             "\n".join(f"- {pid}: {', '.join(t)}" for pid, t in big)), ""]
    out += ["## Fitted constants (tiletune/model/mainloop.py FITTED)", "", "```"]
    for fam, tc in tcs.items():
        out.append(f"{fam}: " + ", ".join(f"{k}={getattr(tc, k):.6g}" for k in bf.FIT_KEYS + ("sustained_clock_fraction",))
                   + f", ratio_band={tc.ratio_band}, fitted_dtypes={tc.fitted_dtypes}")
    head = ["| point | GPU | dtype | M x N x K (batch) | kernel (stated or chosen) | measured us | model us | band us | error |",
            "|---|---|---|---|---|---|---|---|---|"]
    out += ["```", "", "## Every earlier held-out point but sa-mainloop-b200's (working material; summarised above)", ""] + head
    for r in rows:
        if r["fit"] or "model" not in r or r["point"]["source_id"] == "sa-mainloop-b200":
            continue
        out.append(_point_line(r))
    print("\n".join(out))


if __name__ == "__main__":
    main()
