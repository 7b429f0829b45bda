"""Calibration constants of the time model (the fit that produces them is `tools.model_fit.fit`).

Owns `Constants` (eta_mma: fraction of the dense peak a good kernel's MMA loop reaches; eta_bw:
fraction of DRAM bandwidth; t_fixed_s: launch + prologue + epilogue + tail; p: how sharply the
compute and memory times combine; the uncertainty band), the table of fitted values per
(arch, dtype). `python3 -m tools.model_fit.fit SWEEP.json` refits them from a
bench/h200_sweep JSON: constants are fitted on the even-indexed shapes only (rows sorted by
dtype, N, K, M), and the model error is reported on the odd-indexed (held-out) shapes only.

Archs without a measured sweep use `DEFAULT`, whose band spans the ranges the research notes
give (hardware-perf-model.md 2.5): eta_mma 0.5-1.1 (1.1: GeForce cards run above the datasheet
boost clock, e.g. RTX 5090 at 2715 vs 2407 MHz), eta_bw 0.6-0.93, t_fixed 3-10 us.
"""

from __future__ import annotations

import math
from typing import Dict, Optional, Tuple

from msgspec import Struct

US = 1e-6
_INF = math.inf


def combine(t_comp: float, t_mem: float, p: float) -> float:
    """The time model's soft max of compute and memory time: (t_comp^p + t_mem^p)^(1/p), max for p = inf.

    Defined here, beside the `p` it is parameterised by, so `Constants.band` calls it without an
    import per call (perf imports this module, not the other way round)."""
    hi = t_mem if t_mem > t_comp else t_comp  # max(t_comp, t_mem), without the builtin call (once or twice per case)
    if p == _INF or p == -_INF:
        return hi
    if hi <= 0:
        return 0.0
    return hi * ((t_comp / hi) ** p + (t_mem / hi) ** p) ** (1.0 / p)


class Constants(Struct, frozen=True, gc=False):
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

# Fitted on bench/h200_sweep/results/run1/h200_sweep.json (cuBLAS 13.1 nvjet kernels, H200, 2026-11-30), even-indexed
# shapes only, by `python3 -m tools.model_fit.fit bench/h200_sweep/results/run1/h200_sweep.json`.
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
