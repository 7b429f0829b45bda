"""The model calibrated on the inputs' own measured times, applied to every entry it covers.

Where an input measured tactic times (a DEBUG autotuner log, TensorRT-LLM `min_time`, a retry
ledger), `fits` fits the model's per-GPU constants on them (tiletune.model.evidence.calibrate): one
fit per (arch, GPU, dtype, op, FlashInfer release, source group), so a fit only ever speaks for the
run that measured it. `apply` then gives every analysed entry of a fitted key its calibrated model
result (`AnalyzedEntry.calibrated`): the same `ModelResult` with the calibrated time, its band, and
the efficiencies that follow from that time. The views show it where it exists and say so; the
uncalibrated table model stays in `AnalyzedEntry.analysis` (`--uncalibrated` shows it).

The regret notes (analysis/regret.py) price failed and never-tried tiles with the same fits.
Pure: entries in, entries out; the model is asked through the port's GPU choice.
"""

from __future__ import annotations

from typing import Any, Mapping, NamedTuple, Optional, Sequence

from msgspec import Struct, structs

from tiletune.analysis.results import AnalyzedEntry
from tiletune.core.errors import TiletuneError
from tiletune.core.records import Problem, TileConfig
from tiletune.model.perf import ModelResult

MAX_SAMPLES = 120  # per fit, evenly spread: a TRT-LLM cache can time thousands of entries

# (arch, GPU the entries are modelled on, dtype, op, FlashInfer release, source group)
FitKey = tuple[Optional[str], Optional[str], str, str, Optional[str], Optional[str]]


class Timed(NamedTuple):
    """An entry with everything a fit needs: its problem, its decoded config, its measured time."""

    problem: Problem
    config: TileConfig
    time_s: float
    l2: Optional[str] = None  # the L2 state the time was measured with (None: unknown)


class Fit(Struct, frozen=True, gc=False):
    """One calibration: what it covers, its measured samples, and the fitted constants (None when
    the samples were too few, or not modelled, to fit)."""

    arch: Optional[str]
    gpu: Optional[str]  # the GPU its entries are modelled on (named by the inputs, else the arch's default)
    dtype: str
    op: str
    flashinfer_version: Optional[str]
    group: Optional[str]  # the source group (one server's inputs)
    timed: tuple[Timed, ...]
    calibration: Any = None  # tiletune.model.evidence.Calibration, or None

    @property
    def key(self) -> FitKey:
        return (self.arch, self.gpu, self.dtype, self.op, self.flashinfer_version, self.group)


def _key(ae: AnalyzedEntry, group_of: Mapping[str, str], port: Any) -> Optional[FitKey]:
    """The fit an entry belongs to. The GPU is the one the port models the entry on, so a cache
    that names no GPU and the log of the same run that does share one fit."""
    problem = ae.entry.problem
    if problem is None:
        return None
    dtype = problem.dtype_a or problem.dtype_b
    if dtype is None:
        return None
    r = ae.entry.record
    spec, name, _ = port.gpu_for(r.env.arch, r.env.gpu)
    return (r.env.arch, name if spec is not None else None, dtype, r.op, r.env.flashinfer_version, group_of.get(r.source))


def fits(analyzed: Sequence[AnalyzedEntry], port: Any, group_of: Optional[Mapping[str, str]] = None) -> tuple[Fit, ...]:
    """One Fit per key with measured times (see the module docstring), in order of first use."""
    from tiletune.model.evidence import Sample, calibrate

    group_of = group_of or {}
    timed: dict[FitKey, list[Timed]] = {}
    for ae in analyzed:
        r = ae.entry.record
        if r.time_ms is None:  # (most entries: a cache holds no times)
            continue
        problem, config = ae.entry.problem, ae.config
        if config is None or problem is None or not (r.time_ms > 0):
            continue
        key = _key(ae, group_of, port)
        if key is None or key[1] is None:  # (no GPU to model on: nothing to fit)
            continue
        fact = ae.analysis.l2 if ae.analysis is not None else None  # the state the entry was modelled in
        timed.setdefault(key, []).append(Timed(problem, config, r.time_ms * 1e-3, None if fact is None else fact.state))
    out = []
    for key, items in timed.items():
        arch, gpu, dtype, op, version, group = key
        spec = port.gpu_for(arch, gpu)[0]
        cal = None
        if spec is not None:
            step = max(1, len(items) // MAX_SAMPLES)
            samples = [Sample(t.config.label(), t.problem, t.config, t.time_s, t.l2) for t in items[::step]]
            try:
                cal = calibrate(samples, spec, dtype, arch)
            except TiletuneError:
                cal = None
        out.append(Fit(arch, gpu, dtype, op, version, group, tuple(items), cal))
    return tuple(out)


def apply(analyzed: Sequence[AnalyzedEntry], found: Sequence[Fit], port: Any,
          group_of: Optional[Mapping[str, str]] = None) -> tuple[AnalyzedEntry, ...]:
    """`analyzed` with `calibrated` set on every modelled entry a fit covers (the others as they are)."""
    usable = {f.key: f.calibration for f in found if f.calibration is not None}
    if not usable:
        return tuple(analyzed)
    group_of = group_of or {}
    memo: dict[tuple[Any, ...], Optional[ModelResult]] = {}
    out = []
    for ae in analyzed:
        a = ae.analysis
        cal = usable.get(_key(ae, group_of, port)) if a is not None and ae.config is not None else None  # type: ignore[arg-type]
        if cal is None:
            out.append(ae)
            continue
        assert a is not None and ae.config is not None
        l2 = a.l2.state if a.l2 is not None else None
        ident = (id(cal), a.problem, ae.config, l2)
        if ident not in memo:
            memo[ident] = calibrated_result(a, cal, ae.config, l2)
        res = memo[ident]
        out.append(ae if res is None else structs.replace(ae, calibrated=res))
    return tuple(out)


def calibrated_result(a: ModelResult, cal: Any, config: TileConfig, l2: Optional[str]) -> Optional[ModelResult]:
    """`a` with the calibrated time (at the problem `a` was modelled at, in its L2 state), its band
    and the efficiencies that time implies; None when the calibrated model cannot answer."""
    try:
        t, lo, hi = cal.predict(a.problem, config, l2)
    except TiletuneError:
        return None
    if not t > 0:
        return None
    floor = a.efficiency_roofline * a.time_expected_s  # the roofline's floor time (the same problem and GPU)
    return structs.replace(
        a, time_expected_s=t, time_low_s=lo, time_high_s=hi,
        efficiency_compute=a.flops / (a.peak_dense * t), efficiency_roofline=min(1.0, floor / t),
        calibration_name=f"calibrated on {cal.n} measured tactics of this input ({cal.gpu.name}, {cal.dtype}); "
                         f"held-out within {cal.heldout_median:.1%} median",
    )


__all__ = ["Fit", "Timed", "apply", "calibrated_result", "fits"]
