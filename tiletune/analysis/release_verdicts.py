"""Verdict lines about the FlashInfer release the inputs were read as, when tiletune has no
catalog for it: its CUTLASS tactics then stay undecoded, and the line says so first instead of
leaving it to a footnote per entry.

The typical case is a release known only from a server's pin: vLLM 0.34.0 pins
flashinfer-python==0.7.3, which PyPI never had and tiletune has no catalog of. The line names how
the release is known (the input's version source, e.g. the version banner and the pin with where
the pin table read it), whether PyPI lists it (tiletune/core/data/server_flashinfer_pins.json,
`pin_on_pypi`), and the nearest catalogued releases on each side as an inference, labelled so:
whether their lists for the ops seen agree is a fact of the catalogs, that the uncatalogued
release has the same list is not. Nothing is decoded with a neighbour's catalog unless the user
passes --flashinfer-version.

Pure functions over entries and events; no I/O beyond the shipped tables.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Iterable, Optional, Sequence

from tiletune import catalogs
from tiletune.analysis.results import Verdict
from tiletune.core.events import Event
from tiletune.core.records import Undecoded
from tiletune.core.vocabulary import FUSED_MOE_OPS

if TYPE_CHECKING:
    from tiletune.analysis.results import AnalyzedEntry


@dataclass
class _Release:
    """What the inputs read as one uncatalogued release (and one version source) hold."""

    tactics: int = 0
    ops: "OrderedDict[tuple[str, str, str], None]" = field(default_factory=OrderedDict)  # (arch, op, runner)
    sources: "OrderedDict[str, None]" = field(default_factory=OrderedDict)


def uncatalogued_release_verdicts(analyzed: Sequence["AnalyzedEntry"], events: Sequence[Event] = ()) -> Iterable[Verdict]:
    """One line per (uncatalogued FlashInfer release, how it is known) whose CUTLASS tactics the
    inputs hold; none when every release the inputs name has a catalog."""
    found: "OrderedDict[tuple[str, Optional[str]], _Release]" = OrderedDict()
    env = None
    version: Optional[str] = None
    for a in analyzed:
        r = a.entry.record
        if r.env is not env:  # records of one input share their Environment: judged once per run
            env = r.env
            version = env.flashinfer_version
            if version and catalogs.canonical_version(version) is not None:
                version = None  # catalogued: nothing to say
        if not version:
            continue
        d = a.entry.decode
        if not isinstance(d, Undecoded) or d.not_a_cutlass_tactic or r.tactic is None:
            continue
        if r.op not in FUSED_MOE_OPS and not catalogs.has_catalogs_for(r.op, r.runner):
            continue  # an op no release has a catalog of: its own verdict says why
        rel = found.setdefault((version, r.env.version_source), _Release())
        rel.tactics += 1
        rel.ops.setdefault((r.env.arch or "unknown arch", r.op, r.runner), None)
        rel.sources.setdefault(r.source, None)
    for (version, how), rel in found.items():
        archs = {arch for arch, _op, _runner in rel.ops}
        sources = list(rel.sources)
        yield Verdict(arch=archs.pop() if len(archs) == 1 else None, op="", undecoded=rel.tactics,
                      source=sources[0] if len(sources) == 1 else None, text=_text(version, how, rel, events))


def _text(version: str, how: Optional[str], rel: _Release, events: Sequence[Event]) -> str:
    """What a reader needs first (no catalog, the nearest ones as a labelled inference, the flag),
    then how the release is known: a report cuts a verdict at a few hundred characters."""
    n = rel.tactics
    text = (f"FlashInfer {version} has no tiletune catalog: the CUTLASS tactics of {n} entr{'y' if n == 1 else 'ies'} "
            f"({_ops_text(list(rel.ops))}) are not decoded")
    near = catalogs.nearest_releases(version, 1)
    before = [v for v in near if _older(v, version)][-1:]
    after = [v for v in near if not _older(v, version)][:1]
    if before or after:
        text += (f". Nearest catalogued release{'s' if len(before + after) > 1 else ''}: {' and '.join(before + after)} "
                 f"(an inference, not a decode{_agreement(before[0], after[0], list(rel.ops)) if before and after else ''}); "
                 f"pass --flashinfer-version {' or '.join(before + after)} to decode against one")
    if _pinned_but_not_on_pypi(version, events):
        text += f". PyPI has no flashinfer-python {version}"
    if how:
        text += f". The release is {how}" if how.startswith("inferred") else f". The release is read from {how}"
    return text


def _ops_text(ops: Sequence[tuple[str, str, str]]) -> str:
    by_arch: "OrderedDict[str, list[str]]" = OrderedDict()
    for arch, op, _runner in ops:
        if op not in by_arch.setdefault(arch, []):
            by_arch[arch].append(op)
    return "; ".join(f"{arch} {', '.join(names)}" for arch, names in by_arch.items())


def _older(a: str, b: str) -> bool:
    from tiletune.core.versions import parse_version

    va, vb = parse_version(a), parse_version(b)  # (bounded: a 5,000-digit version is no version)
    return va is not None and vb is not None and va < vb


def _agreement(before: str, after: str, ops: Sequence[tuple[str, str, str]]) -> str:
    """'; their sm120 fp4_gemm lists are the same, their sm120 mxfp8_gemm lists differ' for the
    ops seen (a fact of the catalogs; that the release between has the same list is not)."""
    same: list[tuple[str, str, str]] = []
    differ: list[tuple[str, str, str]] = []
    for arch, op, runner in ops:
        lists = [{(tuple(sorted(c.variant.items())), c.configs) for c in catalogs.lookup(v, arch, op, runner)}
                 for v in (before, after)]
        if lists[0] or lists[1]:
            (same if lists[0] == lists[1] else differ).append((arch, op, runner))
    parts = ([f"their {_ops_text(same)} lists are the same"] if same else []) + (
        [f"their {_ops_text(differ)} lists differ"] if differ else [])
    return "; " + ", ".join(parts) if parts else ""


def _pinned_but_not_on_pypi(version: str, events: Sequence[Event]) -> bool:
    """Whether a server banner in the inputs pins this release and the pin table records that PyPI
    does not list it."""
    from tiletune.readers.logs.clues import pinned_flashinfer

    for ev in events:
        if ev.kind != "version_banner" or ev.fact("flashinfer_version") != version:
            continue
        server, ver = ev.fact("server"), ev.fact("version")
        pin = pinned_flashinfer(str(server), str(ver)) if server and ver else None
        if pin is not None and pin.get("pin_on_pypi") is False:
            return True
    return False
