"""Verdict lines about events: what ended a run, what a progress-only log says, what an INFO
`Skipped N` count means against the release's catalog.

- `run_verdicts(events, analyzed)`: one line per input with events. A fatal event LEADS ("the
  server aborted at start-up: the fp4_gemm CUTLASS runner failed to initialize on sm120, Error
  Internal"); a log with tuning progress only says which ops were tuned, how many profiles, and
  that per-tactic results need FLASHINFER_LOGGING_LEVEL=debug; OOM fallbacks are named.
- `skipped_phrase(failure)`: an INFO `Skipped N unsupported tactic(s)` count against the catalog of
  that release and arch: "N of M tactics failed", "every candidate failed" when N = M, and, where
  the shared-memory model explains exactly N tiles, which tiles those likely are, labelled as an
  inference with its basis (never as a decode).

Pure functions over events, entries and failures; no I/O.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import TYPE_CHECKING, Any, Iterable, Optional, Sequence

from tiletune.analysis.results import Verdict
from tiletune.core.archs import arch_family
from tiletune.core.events import Event, InputFacts
from tiletune.core.records import Status
from tiletune.core.vocabulary import DENSE_GEMM_OPERAND_DTYPE

if TYPE_CHECKING:
    from tiletune.analysis.results import AnalyzedEntry, Failure

DEBUG_HINT = "set FLASHINFER_LOGGING_LEVEL=debug to log each tactic's time and failure"


def _fact_arch(ev: Event) -> Optional[str]:
    a = ev.fact("arch")
    return str(a) if a else None


def run_verdicts(events: Sequence[Event], analyzed: Sequence["AnalyzedEntry"],
                 inputs: Sequence[InputFacts] = (), read: Optional[Sequence[Any]] = None) -> Iterable["Verdict"]:
    """One verdict per input that has events worth a line (fatal first). `read`: every entry the
    inputs gave (`Entry`s) when `analyzed` holds only a filter's part: what a log holds is judged
    from all of it."""
    by_source: "OrderedDict[str, list[Event]]" = OrderedDict()
    ended = {i.source: i.ended for i in inputs if i.ended is not None and i.ended.value}
    for ev in events:
        by_source.setdefault(ev.source, []).append(ev)
    for source in ended:
        by_source.setdefault(source, [])
    if not by_source:  # no input has events or ended: no line (and no pass over the entries)
        return
    arch_of: dict[str, Optional[str]] = {}
    tactic_lines: set[str] = set()
    for e in (read if read is not None else (a.entry for a in analyzed)):
        r = e.record
        arch_of.setdefault(r.source, r.env.arch)
        if r.tactic is not None and r.status is not Status.FALLBACK:  # a fallback says no tuned config covered it
            tactic_lines.add(r.source)
    fatal_lines, other_lines = [], []
    for source, evs in by_source.items():
        fatal = [e for e in evs if e.is_fatal]
        arch = arch_of.get(source) or next((_fact_arch(e) for e in evs if _fact_arch(e)), None)
        if fatal:
            first = fatal[0]
            # a raised exception says where it was only through the lines around it (stage)
            when = "while serving" if _served_first(first) else (
                "at start-up" if first.kind != "exception" or first.fact("stage") == "warm-up" else "")
            text = f"the server aborted{' ' + when if when else ''}: {first.summary}"
            more = [e for e in fatal[1:] if e.summary != first.summary]
            if more:
                text += "; then " + "; ".join(e.summary for e in more[:3]) + (f" and {len(more) - 3} more" if len(more) > 3 else "")
            text += f" ({_where(source, first)})"
            op = str(first.fact("op") or "")
            fatal_lines.append(Verdict(arch=arch, op=op, text=text, fatal=True, source=source))
            continue
        if source in ended:
            fatal_lines.append(Verdict(arch=arch, op="", fatal=True, source=source, text=(
                f"the run ended ({ended[source].source}) but the text does not show what ended it "
                f"(the lines before the traceback may be cut or elided) ({source})")))
        parts = []
        oom = [e for e in evs if e.kind == "oom_fallback"]
        for e in oom:
            parts.append(e.summary + (f" ({e.count} times)" if e.count > 1 else ""))
        progress = [e for e in evs if e.kind == "tuning_progress" and e.fact("op")]
        if progress and source not in tactic_lines:
            tuned = ", ".join(f"{e.fact('op')} ({_profiles(e)})" for e in progress[:6])
            parts.append(f"tuning progress only: tuned {tuned}{' and more' if len(progress) > 6 else ''}; "
                         f"which tactics won or failed is not in this log ({DEBUG_HINT})")
        hits = [e for e in evs if e.kind == "config_cache_hit"]
        if hits and source not in tactic_lines:
            loaded = [e.fact("configs") for e in evs if e.kind == "configs_loaded" and e.fact("configs") is not None]
            parts.append(f"{len(hits)} op(s) used tuned configs from a cache ({', '.join(str(e.fact('op')) for e in hits[:4])})"
                         + (f", {sum(loaded)} config(s) loaded" if loaded else ""))
        if parts:
            other_lines.append(Verdict(arch=arch, op="", text="; ".join(parts) + f" ({source})", source=source))
    yield from fatal_lines
    yield from other_lines


def _profiles(ev: Event) -> str:
    """'21 profiles', or '0 of 21 profiles' for a bar the log shows unfinished."""
    done, total = ev.fact("profiles_done"), ev.fact("profiles")
    return f"{done} of {total} profiles" if isinstance(done, int) and isinstance(total, int) and done < total else f"{total} profiles"


def _served_first(ev: Event) -> bool:
    return bool(ev.fact("served_before")) or ev.fact("stage") == "serving"


def _where(source: str, ev: Event) -> str:
    at = f":{ev.line}" if ev.line else ""
    return f"{source}{at}" + (f", {ev.count} times" if ev.count > 1 else "")


# --- INFO "Skipped N" against the catalog --------------------------------------------------------


def skipped_phrase(f: "Failure", detail: Optional[dict[str, Any]] = None) -> Optional[str]:
    """What an INFO-only failure count means for its release/arch catalog, or None if unknown."""
    if f.tactic is not None:
        return None
    per = dict((detail or {}).get("skipped_per_profile") or ())
    if not per:
        return None
    ns = sorted(per)
    head = "runner not named (INFO summary)"
    if not f.arch or not f.flashinfer_version:
        return f"{head}: {_ns(ns)} tactic(s) failed per profile; pass --arch and --flashinfer-version to compare with the catalog; {DEBUG_HINT}"
    cat = _one_catalog(f.flashinfer_version, f.arch, f.op)
    if cat is None:
        return f"{head}: {_ns(ns)} tactic(s) failed per profile ({DEBUG_HINT})"
    m = len(cat.configs)
    phrases = []
    for n in ns:
        if n >= m:
            phrases.append(f"{n} of {m}: every candidate of the {cat.ref.runner} catalog failed" + (" (and other runners' tactics)" if n > m else ""))
        else:
            phrases.append(f"{n} of {m} tactics failed")
    text = f"{head}: " + ", ".join(phrases) + f" per profile ({f.arch}, FlashInfer {cat.ref.flashinfer_version})"
    if len(ns) == 1 and ns[0] < m:
        inf = _smem_inference(cat, f.arch, f.op, ns[0])
        if inf:
            text += "; " + inf
    return text + f"; {DEBUG_HINT}"


def _ns(ns: list[int]) -> str:
    return "/".join(str(n) for n in ns)


def _one_catalog(version: str, arch: str, op: str) -> Any:
    try:
        from tiletune import catalogs

        canon = catalogs.canonical_version(version)
        if canon is None:
            return None
        fam = arch_family(arch)
        runners = sorted({r for (v, a, o, r) in catalogs.keys() if v == canon and a == fam and o == op})
        if len(runners) != 1:
            return None
        cats = catalogs.lookup(canon, fam, op, runners[0])
        return cats[0] if len(cats) == 1 else None
    except Exception:  # noqa: BLE001 - a catalog hiccup must not hide the count itself
        return None


def _smem_inference(cat: Any, arch: str, op: str, n: int) -> Optional[str]:
    """Inference: the tiles the shared-memory model says cannot run, when there are exactly n."""
    dtype = DENSE_GEMM_OPERAND_DTYPE.get(op)
    if dtype is None:
        return None
    from tiletune.model.smem import smem_fit

    bad, limit = [], None
    for i, cfg in enumerate(cat.configs):
        try:
            fit = smem_fit(cfg, arch, dtype)
        except Exception:  # noqa: BLE001 - a tile the model cannot size: no inference from it
            return None
        if fit.verdict is None:
            return None
        limit = fit.limit_bytes
        if fit.verdict != "fits":
            bad.append((i + cat.index_offset, cfg.label()))
    if len(bad) != n:
        return None
    tiles = ", ".join(f"{t} ({lbl})" for t, lbl in bad)
    return (f"likely tactics {tiles}: an inference, not a decode (basis: the shared-memory model says exactly {n} "
            f"catalog tile(s) exceed the {limit:,} B per-block limit on {arch})")


__all__ = ["DEBUG_HINT", "run_verdicts", "skipped_phrase"]
