"""The inspect pipeline: inputs -> records -> entries -> analyses -> failures, not-tried tiles, verdicts.

`inspect(paths, ctx, gpu=...)` is what `tiletune inspect` and `tiletune report` run:

    discover (no paths) -> readers.read_inputs -> decode.decode_all (decode per record)
        -> model_port: model analysis per decoded entry (at the TOP of its M bucket, per case)
        -> source_groups: which inputs are one server's run (never merged with another's)
        -> failures: aggregated per (arch, version, op, runner, tactic, group) -> reasons
        -> not_tried: catalog tiles no record of the group mentions -> verdicts per (arch, op, group)

The result is one frozen `results.InspectResult` that formatters turn into text without
computing anything. Nothing here prints or writes files.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Callable, Mapping, Optional, Sequence, Union

from msgspec import structs

from tiletune.analysis import calibrated as calibrated_mod
from tiletune.analysis import run_verdicts
from tiletune.analysis import verdicts as verdicts_mod
from tiletune.analysis.entry_filter import EntryFilter
from tiletune.analysis.failures import aggregate_failures, not_built_ops
from tiletune.analysis.l2_state import l2_notes
from tiletune.analysis.model_port import ModelPort
from tiletune.analysis.never_tried import not_tried as find_not_tried
from tiletune.analysis.overview import overview
from tiletune.analysis.regret import evidence_notes
from tiletune.analysis.release_verdicts import uncatalogued_release_verdicts
from tiletune.analysis.results import InspectResult, Verdict
from tiletune.analysis.runs_verdicts import runs_other_verdicts
from tiletune.analysis.source_groups import group_names, source_groups
from tiletune.analysis.warmup_cost import warmup_costs
from tiletune.core.events import Event, InputFacts
from tiletune.core.records import Entry, InputProblem
from tiletune.decode import decode_all
from tiletune.readers import read_inputs
from tiletune.readers.interface import ReadContext


def inspect(
    paths: Sequence[Path],
    ctx: ReadContext,
    *,
    gpu: Optional[str] = None,
    env: Optional[Mapping[str, str]] = None,
    home: Optional[Path] = None,
    select: Optional[Union[EntryFilter, Callable[[Entry], bool]]] = None,
) -> InspectResult:
    """Read `paths` (or discover inputs when empty), decode, analyse, aggregate, judge.

    `gpu` names the GPU to model on (the spec table's name); without it each entry is modelled
    on the GPU its input names, else on the arch's default SKU (and the result says so).
    `env` / `home` are where discovery looks (default: this process's environment and home).
    `select` keeps only the decoded entries it accepts, before anything is aggregated, so verdicts
    and failures agree with the view: an `EntryFilter` (inspect's and report's --op / --only-arch /
    --rank / --status, resolved against what the inputs hold; a filter that keeps nothing leads
    the verdicts with a sentence saying so) or a plain predicate.
    """
    searched: tuple[str, ...] = ()
    discovered = False
    if not paths:
        from tiletune.readers.discover import discover  # only when no input is named

        found = discover(os.environ if env is None else env, Path.home() if home is None else home)
        paths, searched, discovered = list(found.paths), tuple(found.searched), True
        if not paths:
            return InspectResult((), (), (), (), (), (), searched=searched, discovered=True)
    outcome = read_inputs(list(paths), ctx)
    entries = decode_all(outcome.records)
    narrowed, unmatched = 0, list[str]()
    if ctx.moe_dtype:  # --dtype: fused-MoE keys that record no dtype, decoded against that dtype's variants
        from tiletune.decode import with_moe_dtype

        entries, narrowed, unmatched = with_moe_dtype(entries, ctx.moe_dtype)
    read = entries
    said: Optional[str] = None
    if isinstance(select, EntryFilter):
        entries, said = select.narrow(entries)
    elif select is not None:
        entries = [e for e in entries if select(e)]
    result = build(
        entries,
        read=read,
        events=outcome.events,
        inputs=outcome.inputs,
        problems=outcome.problems,
        sources=outcome.sources,
        searched=searched,
        discovered=discovered,
        gpu=gpu,
    )
    flags = (*(("--arch", ctx.arch) if ctx.arch else ()),
             *(("--flashinfer-version", ctx.flashinfer_version) if ctx.flashinfer_version else ()),
             *(("--dtype", ctx.moe_dtype) if ctx.moe_dtype else ()))
    if flags:
        result = structs.replace(result, read_flags=flags)
    if ctx.moe_dtype:
        result = structs.replace(result, notes=result.notes + (
            f"--dtype {ctx.moe_dtype}: {narrowed} fused-MoE entr{'y' if narrowed == 1 else 'ies'} whose key records no "
            f"dtype decoded against the {ctx.moe_dtype} catalog variants only (stated by the flag, not by the inputs)"
            + (f"; {ctx.moe_dtype} is none of the variants other ambiguous keys allow ({', '.join(unmatched)})"
               if unmatched else ""),))
    if said is None:
        return result
    # the filter kept nothing: say so first, so no verdict below reads as the answer about them
    return structs.replace(result, verdicts=(Verdict(arch=None, op="", text=said),) + result.verdicts,
                               notes=result.notes + (said,))


def build(
    entries: Sequence[Entry],
    *,
    problems: Sequence[InputProblem] = (),
    sources: Sequence[tuple[str, str]] = (),
    searched: Sequence[str] = (),
    discovered: bool = False,
    gpu: Optional[str] = None,
    model: Optional[ModelPort] = None,
    events: Sequence[Event] = (),
    inputs: Sequence[InputFacts] = (),
    read: Optional[Sequence[Entry]] = None,
) -> InspectResult:
    """Analyse decoded entries and derive failures, not-tried lists and verdicts.

    Split from `inspect` so tests and other commands can start from entries they already have.
    `read` is every entry the inputs gave when `entries` is a filtered part of them: what a log
    holds (per-tactic lines or counts only) is judged from all of it, not from what a filter kept.
    `model` defaults to the real `tiletune.model` on the GPU `gpu` names (see ModelPort).
    """
    port = model if model is not None else ModelPort.default(gpu)
    port.inputs_name(_gpu_named_per_arch(entries))
    # which inputs are one server's run: nothing below merges two groups
    groups = source_groups([e.record for e in entries], sources=sources, inputs=inputs,
                           event_sources=(ev.source for ev in events))
    group_of = group_names(groups)
    labels_of = {g.name: g.label for g in groups} if len(groups) > 1 else None
    analyzed = port.analyze_entries(entries)
    # the model calibrated on the inputs' own measured times, where they hold some (one fit per run)
    fitted = calibrated_mod.fits(analyzed, port, group_of)
    if fitted:
        analyzed = calibrated_mod.apply(analyzed, fitted, port, group_of)
    failures = tuple(aggregate_failures(analyzed, port, not_built_ops(entries), group_of))
    never_tried = tuple(find_not_tried(analyzed, group_of))
    at_a_glance = overview(analyzed, groups)  # per bucket: winners, margins, won by noise, uncovered M, rank checks
    # what ended a run leads; then the per-(arch, op, group) tuning verdicts (with the buckets whose ranks disagree)
    run_lines = (structs.replace(v, group=group_of.get(v.source)) if v.source else v
                 for v in run_verdicts.run_verdicts(events, analyzed, inputs, read))
    # then a release tiletune has no catalog of (its tactics stay undecoded: said once, up front)
    release_lines = (structs.replace(v, group=group_of.get(v.source)) if v.source else v
                     for v in uncatalogued_release_verdicts(analyzed, events))
    # then chosen tactics whose kernel is not the one measured (0.6.3..0.6.14 fused-MoE GEMM2 ids)
    runs_lines = runs_other_verdicts(analyzed, group_of, labels_of)
    verdicts = (tuple(run_lines) + tuple(release_lines) + tuple(runs_lines)
                + tuple(verdicts_mod.with_failure_counts(verdicts_mod.with_rank_disagreements(
                    verdicts_mod.verdicts(analyzed, failures, never_tried, group_of, labels_of,
                                          frozenset(i.source for i in inputs if i.ticket)),
                    at_a_glance.rank_disagreements), events, group_of))
                + tuple(structs.replace(v, group=group_of.get(v.source)) if v.source else v
                        for v in run_verdicts.setup_verdicts(inputs, analyzed, read)))  # each input's stated setup, last
    calibrated = evidence_notes(fitted, failures, never_tried, labels_of)  # only where the inputs measured times
    return InspectResult(
        entries=analyzed,
        failures=failures,
        not_tried=never_tried,
        verdicts=verdicts,
        problems=tuple(problems),
        sources=tuple(sources),
        searched=tuple(searched),
        discovered=discovered,
        gpus=port.choices(),
        notes=port.notes() + l2_notes(analyzed) + calibrated,
        events=tuple(events),
        inputs=tuple(inputs),
        source_groups=groups,
        overview=at_a_glance,
        calibrations=fitted,
        warmup=warmup_costs(inputs, analyzed, events, group_of),
    )


def _gpu_named_per_arch(entries: Sequence[Entry]) -> dict[Optional[str], str]:
    """arch -> the one GPU name the inputs give for it (archs whose inputs name several are left out)."""
    named: dict[Optional[str], set[str]] = {}
    last = None
    for e in entries:
        env = e.record.env
        if env is last:  # records of one input share their Environment: counted once in a row
            continue
        last = env
        if env.gpu:
            named.setdefault(env.arch, set()).add(env.gpu)
    return {arch: next(iter(gpus)) for arch, gpus in named.items() if len(gpus) == 1}


__all__ = ["build", "inspect"]
