"""Fit the SM100 family's L2 read rate per SM per clock on the public B200 timings taken with a warm L2.

    python3 bench/blackwell_public/fit_l2_sm100.py      # CPU, about a minute; prints the scan and the minimum

No L2 read rate has been measured on an SM100 GPU. The timings whose harness keeps the L2 warm (vLLM's
bench_fp8_gemm.py, `blackwell_fit.L2_WARM_BY_HARNESS`: CUDA-graph replays of the same tensors) are priced by
`perf.estimate` exactly as validate.py prices them (each point's stated kernel or the fastest catalog kernel, its
timer, its L2 state) at each candidate rate of `tiletune.model.l2.L2_FITTED_BYTES_PER_CLK_PER_SM`; the rate
kept is the one that minimises the mean over the sources of each source's median |model - measured| / measured.
Only rounds one to five's points (working material) are read; round six's held-out set is not loaded.
"""

from __future__ import annotations

import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from tiletune.core.errors import ModelError  # noqa: E402
from tiletune.model import l2 as l2_term  # noqa: E402
from tiletune.model import perf  # noqa: E402
from tiletune.model.gpus import find  # noqa: E402
from tools.model_fit import blackwell_fit as bf  # noqa: E402

RATES = (24.9, 37.0, 50.0, 56.0, 62.0, 68.0, 75.0, 100.0)  # B/clk/SM; 24.9 = the H200's measured rate


def errors(points: list) -> dict:
    """Median |model - measured| / measured per source at the rate currently set."""
    perf._PLANS.clear()  # the plan holds the L2 site: re-plan at every rate
    out: dict = {}
    for p in points:
        gpu = find(bf.GPU_KEYS[p["gpu"]])
        best = None
        for cfg in bf.candidates(bf.family(gpu.arch), p):
            try:
                e = perf.estimate(bf._problem(p), cfg, gpu, dtype=p["dtype"], l2=bf.l2_state(p),
                                  grouped=bool(p.get("grouped")), sm_clock_hz=bf.clock_hz(p),
                                  power_limit_w=bf.power_w(p), timer=bf.timer_of(p))
            except ModelError:
                continue
            if e.smem.fits is not False and (best is None or e.time_expected_s < best.time_expected_s):
                best = e
        if best is not None:
            t = p["time_us"] * 1e-6
            out.setdefault(p["source_id"], []).append(abs(best.time_expected_s - t) / t)
    return {s: statistics.median(v) for s, v in out.items()}


def main() -> None:
    pts = [p for p in bf.load(round3=True, round4=True, round5=True) if p["source_id"] in bf.L2_WARM_BY_HARNESS]
    table = l2_term.L2_FITTED_BYTES_PER_CLK_PER_SM
    kept = dict(table)
    scores = []
    for rate in RATES:
        for arch in kept:
            table[arch] = rate
        med = errors(pts)
        score = statistics.mean(med.values())
        scores.append((score, rate))
        print(f"{rate:6.1f} B/clk/SM  mean of source medians {score:6.1%}  "
              + "  ".join(f"{s}: {v:5.1%}" for s, v in sorted(med.items())))
    table.update(kept)
    best = min(scores)
    print(f"minimum: {best[1]:.1f} B/clk/SM ({best[0]:.1%}); in the model: {kept}")


if __name__ == "__main__":
    main()
