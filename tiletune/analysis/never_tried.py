"""Never tried: per catalog list the inputs touched, the tactics no record mentions.

Evidence matters: with only caches read (winners), "not tried" means "not the winner, no other
record"; with a profiling log the autotuner's attempts are listed, so it means not attempted.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any, Iterable, Mapping, Optional, Sequence

from tiletune import catalogs
from tiletune.analysis.results import AnalyzedEntry, NotTried
from tiletune.core.archs import arch_family
from tiletune.core.records import CatalogRef, Decoded, Status


def not_tried(analyzed: Sequence[AnalyzedEntry], group_of: Optional[Mapping[str, str]] = None) -> Iterable[NotTried]:
    """Per source group (`group_of`: input -> group name) and catalog list touched by its inputs:
    the tactics no record of that group mentions."""
    group_of = group_of or {}
    logged: set[tuple[Optional[str], str, Optional[str]]] = set()  # (arch, op, group) with per-tactic log evidence
    # the decodes of each run of one input's records (its group looked up once per run), kept
    # per entry and sorted out per distinct decode below: a big cache's 50,000 entries share a
    # few hundred decodes (one per tactic answer)
    runs: list[tuple[Optional[str], list[Any]]] = []
    ds: list[Any] = []
    source: Any = None
    is_chosen, profiled, failed, not_run = Status.CHOSEN, Status.PROFILED, Status.FAILED, Status.NOT_RUN
    for a in analyzed:
        r = a.entry.record
        if r.source is not source:
            source = r.source
            ds = []
            runs.append((group_of.get(source), ds))
        status = r.status
        if status is not is_chosen:  # (a cache holds only winners)
            if status is profiled or (status is failed and r.source_kind == "log"):
                logged.add((r.env.arch, r.op, runs[-1][0]))
            if status is not_run:  # never run: not tried either
                continue
        ds.append(a.entry.decode)
    decodes: dict[tuple[int, Optional[str]], Decoded] = {}  # by identity and group, in order of first use
    for group, ds in runs:
        for i, d in dict(zip(map(id, ds), ds)).items():  # (each distinct decode of the run, in order of first use)
            if isinstance(d, Decoded):
                decodes.setdefault((i, group), d)
    tried: "OrderedDict[tuple[CatalogRef, Optional[str]], set[int]]" = OrderedDict()
    for (_, group), d in decodes.items():
        tried.setdefault((d.catalog, group), set()).add(d.index)
    for (ref, group), indices in tried.items():
        cats = [c for c in catalogs.lookup(ref.flashinfer_version, ref.arch, ref.op, ref.runner, dict(ref.variant)) if c.ref == ref]
        if not cats:
            continue
        cat = cats[0]
        missing = tuple(
            (i + cat.index_offset, cfg) for i, cfg in enumerate(cat.configs) if i not in indices
        )
        if not missing:
            continue
        # catalog refs carry the family arch (sm120 for sm121); records keep the device arch
        yield NotTried(
            arch=ref.arch,
            flashinfer_version=ref.flashinfer_version,
            op=ref.op,
            runner=ref.runner,
            catalog=ref,
            tactics=missing,
            tried=len(cat.configs) - len(missing),
            evidence="profiling log"
            if any(op == ref.op and g == group and a is not None and arch_family(a) == arch_family(ref.arch)
                   for a, op, g in logged)
            else "winners only",
            group=group,
        )



__all__ = ["not_tried"]
