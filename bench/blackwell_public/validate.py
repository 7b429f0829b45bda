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

import statistics
import sys
from pathlib import Path
from typing import Dict, List, Sequence

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from tools.model_fit import blackwell_fit as bf  # noqa: E402

# the fit itself (split, priors, band) lives in tools/ so a test can check FITTED against it
from tools.model_fit.blackwell_refit import HELD_GPUS, NEW_HELD, model_rows, refit  # noqa: E402
from tools.model_fit.blackwell_refit import priors as fit_priors  # noqa: E402


def _pct(x: float) -> str:
    return "n/a" if x != x else f"{x:.1%}"


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
    fit = refit()
    tcs, rows, cs, pts, n_clock = fit.constants, fit.rows, fit.cases, fit.points, fit.n_clock
    priors = fit_priors()
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
