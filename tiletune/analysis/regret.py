"""What the failed and never-tried tiles would have cost, judged on the input's own measured times.

When an input holds measured per-tactic times (a DEBUG autotuner log, TensorRT-LLM `min_time`, a
retry ledger), analysis/calibrated.py fits the model's per-GPU constants on them; `evidence_notes`
says so with the held-out check, and for every failed
tactic and every bucket it failed in, compares the model's calibrated time for that tile with the
best time the input measured for the same bucket: the regret of the failure. For tiles the tuner
never tried, the best of them per bucket gets the same comparison. Every such number is labelled
"model, calibrated on this input"; the measured ones are the input's own.

Like with like: a fit, its measured bests and the tiles compared with them all come from one
source group (one server's inputs), one FlashInfer release and one problem bucket (M, N, K,
batch). A failed or never-tried tile of another group or release is never priced against these
times: no note is given for it rather than a wrong one.
"""

from __future__ import annotations

from typing import Dict, List, Mapping, Optional, Sequence, Tuple

from tiletune.analysis.calibrated import Fit, Timed
from tiletune.analysis.results import Failure, NotTried
from tiletune.core.errors import TiletuneError
from tiletune.core.records import Problem
from tiletune.model.evidence import Calibration

MAX_LINES = 12  # regret lines per calibrated group; the rest are counted
WEAK_HELDOUT = 0.25  # held-out median error above which a regret line says the calibration is weak


# the best measured time of a bucket: (seconds, its tile's label, its problem, its L2 state)
_Best = Tuple[float, str, Problem, Optional[str]]


def _bucket(p: Problem) -> Tuple[int, int, int, int]:
    return (p.m, p.n, p.k, p.batch)


def _m_text(p: Problem) -> str:
    if p.m_range and p.m_range[0] != p.m_range[1]:
        return f"M {p.m_range[0]}-{p.m_range[1]}"
    return f"M {p.m}"


def _us(t: float) -> str:
    return f"{t * 1e6:,.1f} us"


def evidence_notes(fits: Sequence[Fit], failures: Sequence[Failure], never_tried: Sequence[NotTried],
                   labels_of: Optional[Mapping[str, str]] = None) -> Tuple[str, ...]:
    """Notes for InspectResult: one calibration line per fit (analysis/calibrated.py: one per arch,
    GPU, dtype, op, FlashInfer release and source group with measured times), then the regrets.
    `labels_of` (group -> short name, given when there are several) names the group in the note."""
    notes: List[str] = []
    for fit in fits:
        arch, op, version, group, items, cal = fit.arch, fit.op, fit.flashinfer_version, fit.group, fit.timed, fit.calibration
        if cal is None:
            notes.append(f"{op}: {len(items)} measured tactic time(s) in the inputs, too few (or not modelled) to "
                         f"calibrate the model on")
            continue
        where = ", ".join(x for x in (arch, (labels_of or {}).get(group) if group is not None else None) if x)
        notes.append(f"{op} ({where}): " + cal.summary("this input"))
        best = _best_measured(items)
        mine = (arch, version, group)  # a tile is priced only against times of its own group and release
        lines = (_failure_regrets(cal, op, mine, failures, best)
                 + _never_tried_regrets(cal, op, mine, never_tried, best))
        notes += lines[:MAX_LINES]
        if len(lines) > MAX_LINES:
            notes.append(f"{op} ({where}): {len(lines) - MAX_LINES} more regret line(s) not shown")
    return tuple(notes)


def _best_measured(items: Sequence[Timed]) -> Dict[tuple, _Best]:
    best: Dict[tuple, _Best] = {}
    for t in items:
        key = _bucket(t.problem)
        if key not in best or t.time_s < best[key][0]:
            best[key] = (t.time_s, t.config.label(), t.problem, t.l2)
    return best


def _compare(cal: Calibration, label: str, config, problem: Problem, best: _Best,
             what: str) -> Optional[str]:
    try:
        t, lo, hi = cal.predict(problem, config, best[3])  # in the L2 state the best was measured in
    except TiletuneError:
        return None
    meas, best_label, _, l2 = best
    gain = meas / t - 1
    verdict = (f"{gain:.0%} faster than the measured best: worth a ticket" if t < meas / 1.05 else
               "no faster than the measured best (within 5 %): the failure costs little here" if t <= meas * 1.05 else
               f"{t / meas - 1:.0%} slower than the measured best: the failure costs nothing here")
    weak = (f" [calibration weak: held-out median error {cal.heldout_median:.0%}]"
            if cal.heldout_median > WEAK_HELDOUT else "")
    state = f"with a {l2} L2 as measured" if l2 else "with the L2 state unknown"
    return (f"{what} {label} would take ~{_us(t)} (band {_us(lo)} - {_us(hi)}) at {_m_text(problem)} (model, "
            f"calibrated on this input) {state}, against {best_label}'s measured {_us(meas)}: {verdict}{weak}")


# (arch, FlashInfer release, source group): what a priced tile must share with the measured times
_Whose = Tuple[Optional[str], Optional[str], Optional[str]]


def _failure_regrets(cal: Calibration, op: str, whose: _Whose, failures: Sequence[Failure],
                     best: Dict[tuple, _Best]) -> List[str]:
    out = []
    for f in failures:
        if f.op != op or (f.arch, f.flashinfer_version, f.group) != whose or f.config is None or f.not_cutlass:
            continue
        for p in f.problems:
            b = best.get(_bucket(p))
            if b is None:
                continue
            line = _compare(cal, f.config.label(), f.config, p, b, "failed")
            if line:
                out.append(line)
    return out


def _never_tried_regrets(cal: Calibration, op: str, whose: _Whose, never_tried: Sequence[NotTried],
                         best: Dict[tuple, _Best]) -> List[str]:
    out = []
    for nt in never_tried:
        if nt.op != op or (nt.arch, nt.flashinfer_version, nt.group) != whose or not nt.tactics:
            continue
        for b in best.values():
            problem = b[2]
            timed = []
            for _idx, cfg in nt.tactics:
                try:
                    timed.append((cal.predict(problem, cfg, b[3])[0], cfg))
                except TiletuneError:
                    continue
            if timed:
                _t, cfg = min(timed, key=lambda x: x[0])
                line = _compare(cal, cfg.label(), cfg, problem, b, f"best of {len(timed)} never-tried tiles,")
                if line:
                    out.append(line)
    return out
