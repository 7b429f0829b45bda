"""Calibration on the user's own evidence: fit the per-GPU constants on the times an input measured.

A DEBUG autotuner log times every tactic it profiles, TensorRT-LLM caches keep `min_time`, retry
ledgers keep their measured times. Those runs happened on the user's GPU at its clock, power limit
and driver, so they say more about that machine than any table. Given measured (problem, tile,
time) samples of one GPU and dtype, `calibrate` fits three constants of the time model:

- `compute_scale`: measured / modelled compute time (the clock this GPU ran at, power capping,
  what the model misses about this arch's MMA pipeline), on a log grid 1/16 .. 4;
- `eta_bw`: the fraction of DRAM bandwidth reached (what the memory side of small-M problems sees),
  up to 3: above 1 the operands stayed in L2 between the timed runs (warm-L2 timing);
- the fixed launch + prologue latency as this input's timer saw it (0 .. 10 us);

each sample modelled in the L2 state it was timed with (`Sample.l2`: warm, cold or None for
unknown, modelled cold): a warm timing of operands that fit in L2 reads them at the L2 rate
(tiletune/model/l2.py), so the fitted `eta_bw` is not pushed above 1 to explain L2 hits;

with the tile-aware model's mechanisms (schedule, shared-memory traffic, stages, waves) left as
they are, so a tile the input never measured is predicted from the same physics. The check: every
sample is predicted by a fit made without it (leave-one-out), and the error of those held-out
predictions is what the output quotes ("held-out tactics within X %"); the band of a calibrated
prediction is the 5th-95th percentile of those held-out ratios. Fewer than `MIN_SAMPLES` samples:
no calibration (None), and the caller says so. Pure arithmetic; seconds and FLOP/s.
"""

from __future__ import annotations

import math
from typing import List, NamedTuple, Optional, Sequence, Tuple

from tiletune.core.errors import ModelError
from tiletune.core.records import Problem, TileConfig
from tiletune.model import mainloop
from tiletune.model.calibration import combine
from tiletune.model.gpus import GpuSpec
from tiletune.model.perf import estimate

MIN_SAMPLES = 4
_SCALES = tuple(math.exp(math.log(1 / 16) + i * (math.log(64.0) / 80)) for i in range(81))  # 1/16 .. 4, x1.053
# 0.30 .. 1.00, then above 1: a timer that re-runs one GEMM keeps its operands in L2 (the RTX PRO
# 6000's 128 MB L2 holds a 7168 x 4096 fp8 weight), so the memory side can beat DRAM bandwidth
_ETAS = tuple(round(0.3 + 0.05 * i, 2) for i in range(15)) + tuple(round(1.1 + 0.1 * i, 1) for i in range(20))
_FIXED = tuple(0.5e-6 * i for i in range(21))  # 0 .. 10 us: launch + prologue as this input's timer saw it
MAX_HELD_OUT = 24  # leave-one-out on at most this many samples (evenly spread): the check, not the fit


class Sample(NamedTuple):
    """One measured run: what ran (problem, tile) and how long it took (seconds, measured)."""

    label: str
    problem: Problem
    config: TileConfig
    measured_s: float
    l2: Optional[str] = None  # the L2 state the time was measured with: "warm" | "cold" | None (unknown)


class _Parts(NamedTuple):
    t_fixed: float
    t_comp: float  # modelled compute seconds at the table clock
    mem_bytes_per_bw: float  # bytes / peak bandwidth (seconds at eta_bw = 1)
    p: float


class Calibration(NamedTuple):
    """The constants fitted on one input's measured times for one (GPU, dtype, arch)."""

    gpu: GpuSpec
    dtype: str
    arch: Optional[str]
    n: int
    compute_scale: float
    eta_bw: float
    fixed_s: float  # launch + prologue latency as this input's timer saw it
    heldout_n: int
    heldout_median: float  # |model - measured| / measured of leave-one-out predictions
    heldout_max: float
    band: Tuple[float, float]  # measured / model, 5th-95th pct of the held-out ratios
    uncalibrated_median: float  # the same error before calibration (the table's constants)
    l2_samples: Tuple[Tuple[str, int], ...] = ()  # (L2 state or "unknown", samples fitted in it)

    def predict(self, problem: Problem, config: TileConfig, l2: Optional[str] = None) -> Tuple[float, float, float]:
        """(expected, low, high) seconds for `config` on `problem` timed in L2 state `l2`: model,
        calibrated on the input."""
        parts = _parts(problem, config, self.gpu, self.dtype, self.arch, l2)
        t = _time(parts, self.compute_scale, self.eta_bw, self.fixed_s)
        return t, t * self.band[0], t * self.band[1]

    def summary(self, what: str = "this input") -> str:
        return (f"calibrated on {self.n} measured tactics of {what} ({self.gpu.name}, {self.dtype}): compute "
                f"x{self.compute_scale:.2f} the table model, memory at {self.eta_bw:.2f} x DRAM bandwidth"
                f"{' (operands L2-resident between timed runs)' if self.eta_bw > 1 else ''}, fixed "
                f"{self.fixed_s * 1e6:.1f} us; {self.heldout_n} held-out tactics (each predicted by a fit without "
                f"it) within {self.heldout_median:.1%} median, "
                f"{self.heldout_max:.1%} worst (uncalibrated model: {self.uncalibrated_median:.1%} median)"
                f"{self._l2_text()}")

    def _l2_text(self) -> str:
        if not self.l2_samples:
            return ""
        return "; samples fitted in their L2 state: " + ", ".join(f"{n} {s}" for s, n in self.l2_samples)


def _parts(problem: Problem, config: TileConfig, gpu: GpuSpec, dtype: str, arch: Optional[str],
           l2: Optional[str] = None) -> _Parts:
    e = estimate(problem, config, gpu, dtype=dtype, arch=arch)
    p = mainloop.constants_for(e.arch).p if e.kernel is not None else e.constants.p
    per_bw = (e.bytes.minimum + e.bytes.partials) / e.bandwidth
    if l2 == "warm":  # the memory side at the L2 rate where the operands fit: DRAM over L2 bandwidth
        w = estimate(problem, config, gpu, dtype=dtype, arch=arch, l2="warm")
        if e.time_memory_s > 0:
            per_bw *= w.time_memory_s / e.time_memory_s
    return _Parts(e.time_fixed_s, e.time_compute_s, per_bw, p)


def _time(parts: _Parts, scale: float, eta: float, fixed: Optional[float] = None) -> float:
    return (parts.t_fixed if fixed is None else fixed) + combine(parts.t_comp * scale, parts.mem_bytes_per_bw / eta,
                                                                 parts.p)


def _fit(parts: Sequence[_Parts], meas: Sequence[float]) -> Tuple[float, float, float]:
    """Coordinate descent over (compute_scale, eta_bw, fixed latency) on the mean |log error|."""
    import statistics  # here, not at the top: only inputs with measured times get this far

    logs = [math.log(m) for m in meas]

    def loss(s: float, e: float, f: float) -> float:
        return sum(abs(math.log(_time(p, s, e, f)) - lm) for p, lm in zip(parts, logs))

    cur = [1.0, 0.8, statistics.median(p.t_fixed for p in parts)]
    best = loss(*cur)
    grids = (_SCALES, _ETAS, _FIXED)
    for _ in range(3):
        moved = False
        for i, grid in enumerate(grids):
            for v in grid:
                cand = list(cur)
                cand[i] = v
                lv = loss(*cand)
                if lv < best - 1e-12:
                    best, cur, moved = lv, cand, True
        if not moved:
            break
    return cur[0], cur[1], cur[2]


def calibrate(samples: Sequence[Sample], gpu: GpuSpec, dtype: str, arch: Optional[str] = None) -> Optional[Calibration]:
    """Fit `compute_scale` and `eta_bw` on `samples` (one GPU, one dtype); None below MIN_SAMPLES
    usable samples (a sample the model cannot time, e.g. a dtype the arch lacks, is left out)."""
    parts: List[_Parts] = []
    meas: List[float] = []
    states: dict[str, int] = {}
    for s in samples:
        if not (s.measured_s and s.measured_s > 0 and math.isfinite(s.measured_s)):
            continue
        try:
            parts.append(_parts(s.problem, s.config, gpu, dtype, arch, s.l2))
        except ModelError:
            continue
        meas.append(s.measured_s)
        states[s.l2 or "unknown (modelled cold)"] = states.get(s.l2 or "unknown (modelled cold)", 0) + 1
    if len(parts) < MIN_SAMPLES:
        return None
    import statistics

    scale, eta, fixed = _fit(parts, meas)
    ratios, errs = [], []
    step = max(1, len(parts) // MAX_HELD_OUT)
    for i in range(0, len(parts), step):
        s_i, e_i, f_i = _fit(parts[:i] + parts[i + 1:], meas[:i] + meas[i + 1:])
        t = _time(parts[i], s_i, e_i, f_i)
        ratios.append(meas[i] / t)
        errs.append(abs(t / meas[i] - 1))
    ratios.sort()
    q = lambda f: ratios[min(len(ratios) - 1, max(0, round(f * (len(ratios) - 1))))]  # noqa: E731
    raw = [abs((p.t_fixed + combine(p.t_comp, p.mem_bytes_per_bw / _default_eta(gpu, arch), p.p)) / m - 1)
           for p, m in zip(parts, meas)]
    return Calibration(gpu, dtype, arch, len(parts), scale, eta, fixed, len(errs), statistics.median(errs), max(errs),
                       (min(q(0.05), 0.95), max(q(0.95), 1.05)), statistics.median(raw), tuple(sorted(states.items())))


def _default_eta(gpu: GpuSpec, arch: Optional[str]) -> float:
    return mainloop.constants_for(arch or gpu.arch).eta_bw
