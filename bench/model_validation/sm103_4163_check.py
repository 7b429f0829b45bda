"""The model against real SM103 timings no constant was fitted on: flashinfer#4163 (SM103).

    python3 bench/model_validation/sm103_4163_check.py

A held-out check, not a fit: no constant in tiletune was set from these times. The data are 6
CutlassFp4GemmRunner tactics of one problem (M 512, N 6144, K 6144, nvfp4) profiled by FlashInfer
0.6.16's autotuner on an SM103 GPU (B300 family; the SKU is not stated, B300 is modelled) with
use_cold_l2_cache=True, quoted verbatim in tests/data/real_sm103_4163/ (README there says which
lines the public copy kept). One shape of one GPU: it can refute the transfer rule
(tiletune/model/transfer.py), not confirm it. Prints, per tactic, the model's expected time and band
against the measured time, then: how many measured times fall inside the band, the median error,
and how many tactic pairs whose measured times differ by more than 5 % the model orders as measured.
"""

from __future__ import annotations

import sys
from itertools import combinations
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from tiletune.analysis.pipeline import inspect  # noqa: E402
from tiletune.model import find  # noqa: E402
from tiletune.model.perf import estimate  # noqa: E402
from tiletune.readers import ReadContext  # noqa: E402

LOG = ROOT / "tests" / "data" / "real_sm103_4163" / "autotuner_debug.log"


def rows(log: Path = LOG, gpu_name: str = "B300"):
    """(tactic, tile label, measured s, expected s, low s, high s, widening notes) per measured tactic."""
    r = inspect([log], ReadContext(arch="sm103", flashinfer_version="0.6.16"))
    gpu = find(gpu_name)
    out = []
    for ae in r.entries:
        if ae.record.time_ms is None or ae.config is None:
            continue
        p = ae.entry.problem
        e = estimate(p, ae.config, gpu, dtype=p.dtype_a or p.dtype_b, arch="sm103", l2="cold")
        out.append((ae.record.tactic, ae.config.label() if hasattr(ae.config, "label") else str(ae.config.tile),
                    ae.record.time_ms * 1e-3, e.time_expected_s, e.time_low_s, e.time_high_s,
                    [n for n in e.notes if "band widened" in n]))
    return out


def summary(rs):
    """(inside band, tactics, median |model / measured - 1|, pairs ordered, pairs > 5 % apart)."""
    inside = sum(lo <= t <= hi for _, _, t, _, lo, hi, _ in rs)
    errs = sorted(abs(m / t - 1) for _, _, t, m, _, _, _ in rs)
    med = errs[len(errs) // 2] if len(errs) % 2 else (errs[len(errs) // 2 - 1] + errs[len(errs) // 2]) / 2
    pairs = ordered = 0
    for a, b in combinations(rs, 2):
        if max(a[2], b[2]) / min(a[2], b[2]) <= 1.05:
            continue
        pairs += 1
        ordered += (a[2] < b[2]) == (a[3] < b[3]) and a[3] != b[3]
    return inside, len(rs), med, ordered, pairs


def main() -> int:
    rs = rows()
    print(f"{LOG.relative_to(ROOT)}: {len(rs)} measured tactics (cold L2), modelled on B300 with the SM100-family "
          "constants (fitted on public B200 timings), L2 cold")
    print("| tactic | tile | measured us | model us | band us | inside |")
    print("|---|---|---|---|---|---|")
    for tac, tile, t, m, lo, hi, _ in rs:
        print(f"| {tac} | {tile} | {t * 1e6:.2f} | {m * 1e6:.2f} | {lo * 1e6:.2f} - {hi * 1e6:.2f} | "
              f"{'yes' if lo <= t <= hi else 'NO'} |")
    inside, n, med, ordered, pairs = summary(rs)
    print(f"\ninside band: {inside} of {n}; median error {med:.1%}; pairs > 5 % apart ordered as measured: "
          f"{ordered} of {pairs} (ties count as not ordered)")
    if rs and rs[0][6]:
        print("widening: " + rs[0][6][0])
    return 0


if __name__ == "__main__":
    sys.exit(main())
