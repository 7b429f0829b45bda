"""Verdict lines about chosen tactics whose kernel is not the one FlashInfer measured: the
fused-MoE GEMM2 pitfall of FlashInfer 0.6.3 .. 0.6.14, where the binding's setRunnerProfiles()
reads a stored GEMM2 id below the GEMM2 list length as relative to that list while the autotuner
profiled the absolute entry (tiletune.catalogs, `gemm2_id_read_as_relative`).

The per-op verdict already names such a winner ("X profiled, runs Y"), but only as a label, and a
key whose dtype is ambiguous (pre-0.6.18rc2 keys) left it to a footnote. This line says it first,
in the person's terms: the kernel serving these GEMM2 calls is not the one measured; then, per
tactic, what was measured and what runs, in full (the epilogue fusion and schedule too, which the
tile label leaves out), for each candidate variant when the key leaves several; then why, and that
0.6.15 fixed it.

Pure functions over analysed entries; no I/O.
"""

from __future__ import annotations

import re
from collections import OrderedDict
from typing import TYPE_CHECKING, Iterable, Optional, Sequence

from tiletune.analysis.results import Verdict
from tiletune.core.records import Decoded, RunsOther, Status, TileConfig, Undecoded

if TYPE_CHECKING:
    from tiletune.analysis.results import AnalyzedEntry

_SHOWN = 3  # tactics spelled out per line; the rest are counted


def full_label(runs: TileConfig, profiled: TileConfig) -> str:
    """`runs`'s label plus what the label leaves out and differs from `profiled` (epilogue fusion,
    epilogue and mainloop schedule, kernel style)."""
    text = runs.label()
    for field, word in (("epilogue_fusion", "epilogue fusion"), ("epilogue_schedule", "epilogue schedule"),
                        ("mainloop_schedule", "mainloop schedule"), ("style", "kernel style")):
        now, then = getattr(runs, field), getattr(profiled, field)
        if now != then:
            text += f", {word} {now or 'none'} (measured: {then or 'none'})"
    return text


def _where(runs: RunsOther) -> str:
    """'csrc/.../flashinfer_cutlass_fused_moe_binding.cu: setRunnerProfiles()' out of the reason."""
    m = re.search(r"binding \(([^)]*\)?)\)", runs.reason)
    return m.group(1) if m else "the fused-MoE binding"


def runs_other_verdicts(analyzed: Sequence["AnalyzedEntry"], group_of: Optional[dict[str, str]] = None,
                        labels_of: Optional[dict[str, str]] = None) -> Iterable[Verdict]:
    """One line per (arch, op, release, source group) whose chosen tactics run another kernel than measured."""
    group_of = group_of or {}
    found: "OrderedDict[tuple, OrderedDict[object, list]]" = OrderedDict()
    counts: dict[tuple, int] = {}
    for a in analyzed:
        r = a.entry.record
        if r.status is not Status.CHOSEN:
            continue
        d = a.entry.decode
        cases: list[tuple[Optional[str], TileConfig, RunsOther]]
        if isinstance(d, Decoded) and d.runs is not None:
            cases = [(None, d.config, d.runs)]
        elif isinstance(d, Undecoded) and d.runs:
            cases = [(c.variant, c.profiled, c.runs) for c in d.runs]
        else:
            continue
        key = (r.env.arch, r.op, r.env.flashinfer_version, group_of.get(r.source))
        counts[key] = counts.get(key, 0) + 1
        per = found.setdefault(key, OrderedDict())
        per.setdefault(repr(r.tactic), [r.tactic, len(cases) > 1 or cases[0][0] is not None, cases])
    for (arch, op, version, group), per in found.items():
        label = (labels_of or {}).get(group) if group is not None else None
        n = counts[(arch, op, version, group)]
        parts = []
        for tactic, ambiguous, cases in list(per.values())[:_SHOWN]:
            if ambiguous:  # one clause per distinct (measured, runs), naming the variants that give it
                same: "OrderedDict[tuple[str, str], list[str]]" = OrderedDict()
                for v, p, ro in cases:
                    names = same.setdefault((p.label(), full_label(ro.config, p)), [])
                    base = (v or "").split(", finalize=")[0]
                    if base not in names:
                        names.append(base)
                said = "; ".join(f"if the key is {' or '.join(vs)}: measured {m}, runs {r}" for (m, r), vs in same.items())
                parts.append(f"tactic {tactic} ({said})")
            else:
                _v, p, ro = cases[0]
                parts.append(f"tactic {tactic}: measured {p.label()}, runs {full_label(ro.config, p)}")
        more = len(per) - _SHOWN
        where = _where(per[next(iter(per))][2][0][2])
        sure = any(not ambiguous for _t, ambiguous, _c in per.values())
        text = (f"{arch or 'unknown arch'} {op}{f' ({label})' if label else ''}: the kernel that serves "
                f"{n} chosen tactic(s) {'is not' if sure else 'may not be'} the one FlashInfer {version} measured: "
                + "; ".join(parts)
                + (f"; and {more} more tactic(s)" if more > 0 else "")
                + f". Its fused-MoE binding reads a stored GEMM2 id below the GEMM2 list length as relative to "
                  f"that list ({where}) while the autotuner profiled the absolute entry; fixed in FlashInfer 0.6.15: "
                  "re-tune with 0.6.15 or later")
        yield Verdict(arch=arch, op=op, text=text, group=group)
