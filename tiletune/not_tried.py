"""Never tried: per catalog list the inputs touched, the tactics no record mentions.

Evidence matters: with only caches read (winners), "not tried" means "not the winner, no other
record"; with a profiling log the autotuner's attempts are listed, so it means not attempted.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any, Iterable, Mapping, Optional, Sequence

from tiletune import catalogs
from tiletune.archs import arch_family
from tiletune.records import CatalogRef, Decoded, Status
from tiletune.results import AnalyzedEntry, NotTried


def not_tried(analyzed: Sequence[AnalyzedEntry], group_of: Optional[Mapping[str, str]] = None) -> Iterable[NotTried]:
    """Per source group (`group_of`: input -> group name) and catalog list touched by its inputs:
    the tactics no record of that group mentions."""
    group_of = group_of or {}
    decodes: dict[tuple[int, Optional[str]], Decoded] = {}  # by identity and group, in order of first use
    logged: set[tuple[Optional[str], str, Optional[str]]] = set()  # (arch, op, group) with per-tactic log evidence
    source: Any = None
    group = None
    for a in analyzed:
        r = a.entry.record
        if r.source is not source:  # (records of one input share its path: looked up once per run of them)
            source = r.source
            group = group_of.get(source)
        status = r.status
        if status is Status.PROFILED or (status is Status.FAILED and r.source_kind == "log"):
            logged.add((r.env.arch, r.op, group))
        d = a.entry.decode
        if isinstance(d, Decoded) and status is not Status.NOT_RUN:  # never run: not tried either
            decodes[(id(d), group)] = d  # decode shares one object per answer
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
