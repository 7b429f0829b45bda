"""Failure aggregation: every failed attempt of one (arch, version, op, runner, tactic), across
all inputs, becomes one `results.Failure` with its error texts counted, the shape buckets it
failed for, the model's view of it and the reason `verdicts.explain_failure` gives.
"""

from __future__ import annotations

from collections import Counter, OrderedDict
from pathlib import Path
from typing import Iterable, Mapping, Optional, Sequence

from tiletune import catalogs
from tiletune.analysis.model_port import ModelPort
from tiletune.analysis.results import AnalyzedEntry, Failure
from tiletune.analysis.verdicts import explain_failure
from tiletune.core.records import Decoded, Entry, Problem, Status, Undecoded

_FailKey = tuple  # (arch, version, op, runner, tactic, source group)


def not_built_ops(entries: Iterable[Entry]) -> dict[tuple[Optional[str], str], str]:
    """(arch, op) -> module name for JIT modules that never finished building."""
    out: dict[tuple[Optional[str], str], str] = {}
    not_built = Status.NOT_BUILT  # (a local: this loop runs once per entry)
    for e in entries:
        r = e.record
        if r.status is not_built:
            module = r.detail_dict().get("module") or Path(r.source).name
            out.setdefault((r.env.arch, r.op), str(module))
    return out


def aggregate_failures(
    analyzed: Sequence[AnalyzedEntry], port: ModelPort, jit_not_built: Mapping[tuple[Optional[str], str], str],
    group_of: Optional[Mapping[str, str]] = None,
) -> Iterable[Failure]:
    """One Failure per (arch, version, op, runner, tactic) and source group (`group_of`: input ->
    group name; inputs of two servers are never merged into one row)."""
    group_of = group_of or {}
    groups: "OrderedDict[_FailKey, list[AnalyzedEntry]]" = OrderedDict()
    passed: set[_FailKey] = set()
    failed, passed_ = Status.FAILED, Status.PASSED  # (locals: this loop runs once per entry)
    for a in analyzed:
        r = a.entry.record  # (not the `record` property: this loop runs once per entry)
        status = r.status
        if status is failed or status is passed_:
            key: _FailKey = (r.env.arch, r.env.flashinfer_version, r.op, r.runner, r.tactic, group_of.get(r.source))
            if status is failed:
                groups.setdefault(key, []).append(a)
            else:
                passed.add(key)
    for key, items in groups.items():
        arch, version, op, runner, tactic, group = key
        errors: Counter[str] = Counter()
        sources: list[str] = []
        problems: list[Problem] = []
        count = 0
        for a in items:
            r = a.record
            count += r.count
            errors[(r.error or "").strip()] += r.count
            if r.source not in sources:
                sources.append(r.source)
            if a.entry.problem is not None and a.entry.problem not in problems:
                problems.append(a.entry.problem)
        first = items[0]
        config = first.config
        analysis = next((a.analysis for a in items if a.analysis is not None), None)
        if analysis is None and config is not None and problems:
            analysis, _ = port.analyze(problems[0], config, arch, first.record.env.gpu, port.l2_of(first.entry))
        decode_note = None
        known = None
        if isinstance(first.entry.decode, Undecoded):
            decode_note = first.entry.decode.reason
        elif isinstance(first.entry.decode, Decoded):
            known = _known_failure(first.entry.decode)
        ordered = tuple(sorted(((t, n) for t, n in errors.items() if t), key=lambda x: (-x[1], x[0])))
        reason = explain_failure(
            errors=[t for t, _ in ordered],
            analysis=analysis,
            known_failure=known,
            jit_not_built=_module_for(jit_not_built, arch, op),
            detail=first.record.detail_dict(),
        )
        yield Failure(
            op=op,
            runner=runner,
            tactic=tactic,
            arch=arch,
            flashinfer_version=version,
            config=config,
            decode_note=decode_note,
            count=count,
            errors=ordered,
            sources=tuple(sources),
            reason=reason,
            analysis=analysis,
            passed_later=key in passed,
            problems=tuple(problems),
            not_cutlass=isinstance(first.entry.decode, Undecoded) and first.entry.decode.not_a_cutlass_tactic,
            group=group,
        )


def _module_for(not_built: Mapping[tuple[Optional[str], str], str], arch: Optional[str], op: str) -> Optional[str]:
    """The unbuilt JIT module serving `op` on `arch`; a module's op may be the family
    ("trtllm::fused_moe") of the tuned op ("trtllm::fused_moe::gemm1")."""
    hit = not_built.get((arch, op))
    if hit is not None:
        return hit
    for (a, o), module in not_built.items():
        if a == arch and op.startswith(o + "::"):
            return module
    return None


def _known_failure(decoded: Decoded) -> Optional[str]:
    try:
        return catalogs.known_failure(decoded)
    except Exception:  # noqa: BLE001 - a catalog hiccup must not hide the failure itself
        return None



__all__ = ["aggregate_failures", "not_built_ops"]
