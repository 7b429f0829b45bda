"""Score points.jsonl with whatever `tiletune` is importable, its own constants, no fitting: the
"before" column of README.md.

    python3 bench/blackwell_public/baseline.py [TILETUNE_CHECKOUT] [--own-rules] [--score-round4|5|6] [--signed] [--points]

With a checkout (e.g. a worktree of the commit before issue 26), that checkout's `tiletune` is
imported instead of this one's. Each point: the kernel its source states, or the fastest catalog
kernel that fits (tools/model_fit/blackwell_fit.py's catalog and rules, so both columns price the
same candidates), at the clock the source states or its power limit implies. Prints one line per
GPU and per source: n, median |model - measured| / measured, share inside the band, median band
width (high / low), points with every candidate declared too big.
"""

from __future__ import annotations

import statistics
import sys
from collections import defaultdict
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
_args = [a for a in sys.argv[1:] if not a.startswith("--")]
sys.path.insert(0, _args[0] if _args else str(ROOT))

import importlib.util  # noqa: E402

from tiletune.core.errors import ModelError  # noqa: E402
from tiletune.model.gpus import find  # noqa: E402
from tiletune.model.perf import estimate  # noqa: E402

_ESTIMATE_ARGS = estimate.__code__.co_varnames  # an older tiletune (the "before" column) has no power_limit_w

# the candidate rules from this tree's tools/ (a checkout of an older commit has none); with --own-rules, the
# checkout's own (round six: its catalog is part of what is scored, so "before" prices the split commit's candidates)
_RULES = Path(_args[0]) if _args and "--own-rules" in sys.argv else ROOT
_spec = importlib.util.spec_from_file_location("blackwell_fit", _RULES / "tools" / "model_fit" / "blackwell_fit.py")
assert _spec is not None and _spec.loader is not None
bf = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(bf)


def main() -> None:
    import tiletune

    print(f"tiletune imported from {Path(tiletune.__file__).resolve().parents[1].name}/")
    groups: dict = defaultdict(list)
    score5 = "--score-round5" in sys.argv
    score6 = "--score-round6" in sys.argv
    for p in bf.load(HERE / "points.jsonl", round3=True, round4=True, round5=score5 or score6,
                     **({"round6": True} if score6 else {})):
        if "--score-round4" in sys.argv and p["source_id"] not in bf.ROUND4_HELD:
            continue
        if score5 and p["source_id"] not in bf.ROUND5_HELD:
            continue
        if score6 and p["source_id"] not in bf.ROUND6_HELD:
            continue
        gpu = find(bf.GPU_KEYS[p["gpu"]])
        fam = bf.family(gpu.arch)
        cands = bf.candidates(fam, p)
        best = None
        for cfg in cands:
            try:
                e = estimate(bf._problem(p), cfg, gpu, dtype=p["dtype"], l2=bf.l2_state(p),
                             grouped=bool(p.get("grouped")), sm_clock_hz=bf.clock_hz(p),
                             **({"power_limit_w": bf.power_w(p)} if bf.power_w(p) and "power_limit_w" in _ESTIMATE_ARGS
                                else {}),
                             **({"timer": bf.timer_of(p)} if "timer" in _ESTIMATE_ARGS else {}))
            except ModelError:
                continue
            if e.smem.fits is False:
                continue
            if best is None or e.time_expected_s < best.time_expected_s:
                best = e
        for key in (p["gpu"], f"{p['gpu']}: {p['source_id']}"):
            groups[key].append((p, best))
    for key, rows in sorted(groups.items()):
        ok = [(p, e) for p, e in rows if e is not None]
        errs = [abs(e.time_expected_s - p["time_us"] * 1e-6) / (p["time_us"] * 1e-6) for p, e in ok]
        signed = [(e.time_expected_s - p["time_us"] * 1e-6) / (p["time_us"] * 1e-6) for p, e in ok]
        inside = sum(e.time_low_s <= p["time_us"] * 1e-6 <= e.time_high_s for p, e in ok)
        width = statistics.median(e.time_high_s / e.time_low_s for _, e in ok) if ok else float("nan")
        print(f"{key:42s} n={len(ok):3d} median={statistics.median(errs):6.1%} inside={inside / max(1, len(ok)):5.0%} "
              f"width={width:.2f}x too_big={len(rows) - len(ok)}"
              + (f" signed={statistics.median(signed):+6.1%}" if "--signed" in sys.argv else ""))
    if "--points" in sys.argv:  # every point: what was priced and how far off (round six's RESULTS_round6.md)
        print("\n| point | GPU | dtype | M x N x K (batch) | kernel priced | measured us | model us | band us | error |")
        print("|---|---|---|---|---|---|---|---|---|")
        for key, rows in sorted(groups.items()):
            if ":" in key:
                continue
            for p, e in rows:
                shape = f"{p['m']} x {p['n']} x {p['k']}" + (f" ({p['batch']}{' groups' if p.get('grouped') else ''})"
                                                               if p.get("batch", 1) > 1 else "")
                if e is None:
                    print(f"| {p['id']} | {p['gpu']} | {p['dtype']} | {shape} | every candidate too big | "
                          f"{p['time_us']:.2f} | - | - | - |")
                    continue
                t = p["time_us"]
                kern = "x".join(str(v) for v in e.tile) + (" stated" if p.get("tile") else "")
                print(f"| {p['id']} | {p['gpu']} | {p['dtype']} | {shape} | {kern} | {t:.2f} | "
                      f"{e.time_expected_s * 1e6:.2f} | {e.time_low_s * 1e6:.2f}-{e.time_high_s * 1e6:.2f} | "
                      f"{(e.time_expected_s * 1e6 - t) / t:+.1%} |")


if __name__ == "__main__":
    main()
