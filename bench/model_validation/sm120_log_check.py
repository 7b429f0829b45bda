"""How many measured tactics of the SM120 DEBUG log fall inside the model's band.

    python3 bench/model_validation/sm120_log_check.py [LOG]

A check, not a fit: nothing in tiletune's constants was set from this log. CAVEAT: the default
log, cache_samples/logs/sm120_0.6.17_warmup_debug.log, is CONSTRUCTED (cache_samples/logs/
README.md: "Timings and runner addresses are invented"): its times were never measured on a GPU,
so the count below checks the plumbing, not the model. Run it on a real SM120 DEBUG log to check
the model. Per L2 state: "cold" (DRAM, what the model assumed before the L2 term), "unknown"
(the default: expected cold, band down to the warm time) and "warm".
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from tiletune.analysis.pipeline import inspect  # noqa: E402
from tiletune.model import find  # noqa: E402
from tiletune.model.perf import estimate  # noqa: E402
from tiletune.readers import ReadContext  # noqa: E402

LOG = ROOT / "cache_samples" / "logs" / "sm120_0.6.17_warmup_debug.log"


def main(argv: list) -> int:
    log = Path(argv[0]) if argv else LOG
    r = inspect([log], ReadContext(arch="sm120", flashinfer_version="0.6.17"))
    gpu = find("RTX PRO 6000 Server")
    cases = [ae for ae in r.entries if ae.record.time_ms is not None and ae.config is not None]
    print(f"{log.name}: {len(cases)} tactics with a measured time; modelled on {gpu.name} (SM120 constants fitted on public RTX 5090 timings)")
    print("| op | L2 state | tactics | inside band | median model / measured | median band (x measured) |")
    print("|---|---|---|---|---|---|")
    for op in sorted({ae.record.op for ae in cases}):
        sub = [ae for ae in cases if ae.record.op == op]
        for state in ("cold", None, "warm"):
            inside, ratio, lo_r, hi_r = 0, [], [], []
            for ae in sub:
                p = ae.entry.problem
                e = estimate(p, ae.config, gpu, dtype=p.dtype_a or p.dtype_b, arch="sm120", l2=state)
                t = ae.record.time_ms * 1e-3
                inside += e.time_low_s <= t <= e.time_high_s
                ratio.append(e.time_expected_s / t)
                lo_r.append(e.time_low_s / t)
                hi_r.append(e.time_high_s / t)
            med = lambda v: sorted(v)[len(v) // 2]  # noqa: E731
            print(f"| {op} | {state or 'unknown'} | {len(sub)} | {inside} | {med(ratio):.2f} | "
                  f"{med(lo_r):.2f} - {med(hi_r):.2f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
